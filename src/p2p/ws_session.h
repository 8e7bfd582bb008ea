/* WebSocket (RFC 6455) as a sans-I/O engine: the HTTP/1.1 upgrade handshake of both roles and the
 * framing of an open connection, for the /ws and /wss transports.
 *
 * The handshake parsers are strict: CRLF line endings only, no obsolete line folding, token
 * header names, at most LD_WS_MAX_HEADER_LINES header lines, and the whole header block (request
 * or status line, headers, blank line) within LD_WS_MAX_HEADER_BLOCK bytes. A server accepts any
 * request path and declines every extension (permessage-deflate and the like) and subprotocol by
 * not echoing them; a client rejects an answer that selects either, since it offers none.
 *
 * Framing comes from libwslay's event API (masking, fragmentation, ping/pong, close). Data frames
 * are not buffered: their payload is handed over as it arrives, so what one frame may announce
 * (max_frame) is a sanity limit rather than a memory one; control frames are at most 125 bytes.
 * Outbound bytes go out as binary messages of at most LD_WS_SEND_MESSAGE_MAX bytes (message
 * boundaries carry no meaning for libp2p). Text frames are accepted as data after libwslay has
 * checked their UTF-8.
 *
 * A session is one heap object used from one thread. Bytes from the peer go in with
 * ld_ws_session_read; bytes to send are appended to the caller's buffer by every function that
 * takes `out`. Nothing is ever buffered for sending inside the session. */
#ifndef LD_P2P_WS_SESSION_H
#define LD_P2P_WS_SESSION_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/buf.h"

/* Request or status line, header lines and the blank line, in bytes. */
#define LD_WS_MAX_HEADER_BLOCK (8u * 1024)
/* Header lines in one handshake message. */
#define LD_WS_MAX_HEADER_LINES 64
/* Sec-WebSocket-Key text (base64 of 16 bytes) and Sec-WebSocket-Accept text (base64 of SHA-1). */
#define LD_WS_KEY_TEXT_LEN 24
#define LD_WS_ACCEPT_TEXT_LEN 28
/* Host header value a client sends ("name:port", "[v6]:port"). */
#define LD_WS_MAX_HOST 300
/* Request path a client sends. */
#define LD_WS_MAX_PATH 256
/* Default cap on the payload one data frame may announce. */
#define LD_WS_DEFAULT_MAX_FRAME (4u * 1024 * 1024)
/* Largest binary message this side sends. */
#define LD_WS_SEND_MESSAGE_MAX (64u * 1024)

/* Close status codes (RFC 6455 §7.4.1) used here. */
#define LD_WS_CLOSE_NORMAL 1000
#define LD_WS_CLOSE_GOING_AWAY 1001

/* ---- handshake messages (pure functions, any thread) ---------------------------------------- */

/* What a server keeps from a valid opening request. */
typedef struct ld_ws_request {
  char key[LD_WS_KEY_TEXT_LEN + 1]; /* Sec-WebSocket-Key, NUL-terminated */
  bool offered_extensions;          /* Sec-WebSocket-Extensions was present (declined) */
  bool offered_protocols;           /* Sec-WebSocket-Protocol was present (declined) */
} ld_ws_request_t;

/* Parses a client's opening handshake at the start of data[0..len). On success stores the header
 * block's length (what follows is frame data) in *consumed and returns 0. Errors:
 * LD_ERR_TRUNCATED (no blank line yet and fewer than LD_WS_MAX_HEADER_BLOCK bytes: read more),
 * LD_ERR_TOO_LARGE (no blank line within LD_WS_MAX_HEADER_BLOCK bytes, or too many header lines),
 * LD_ERR_MALFORMED (not HTTP/1.1: request line, line endings, header syntax),
 * LD_ERR_HANDSHAKE (HTTP, but not a WebSocket upgrade: method other than GET, Host, Upgrade,
 * Connection or Sec-WebSocket-Key missing or wrong, a header given twice where it must be once),
 * LD_ERR_UNSUPPORTED (Sec-WebSocket-Version other than 13). `why` (may be NULL) receives a static
 * description of the failure for logs. `req` is filled only on success. */
int ld_ws_parse_request(const uint8_t *data, size_t len, ld_ws_request_t *req, size_t *consumed,
                        const char **why);

/* Parses a server's answer at the start of data[0..len), checking Sec-WebSocket-Accept against
 * `expected_accept` (LD_WS_ACCEPT_TEXT_LEN chars, from ld_ws_accept_for_key). Returns 0 with
 * *consumed as above; LD_ERR_TRUNCATED, LD_ERR_TOO_LARGE, LD_ERR_MALFORMED as above;
 * LD_ERR_HANDSHAKE (status other than 101, Upgrade or Connection missing or wrong, accept value
 * missing or wrong, an extension or subprotocol selected). */
int ld_ws_parse_response(const uint8_t *data, size_t len, const char *expected_accept,
                         size_t *consumed, const char **why);

/* Sec-WebSocket-Accept for a key: base64(SHA-1(key ‖ "258EAFA5-E914-47DA-95CA-C5AB0DC85B11")).
 * Writes LD_WS_ACCEPT_TEXT_LEN chars and a NUL. Returns 0, or LD_ERR_CRYPTO when OpenSSL fails. */
int ld_ws_accept_for_key(const char *key, size_t key_len, char out[LD_WS_ACCEPT_TEXT_LEN + 1]);

/* A fresh random key (16 random bytes in base64): LD_WS_KEY_TEXT_LEN chars and a NUL. */
void ld_ws_new_key(char out[LD_WS_KEY_TEXT_LEN + 1]);

/* Appends a client's opening handshake (GET `path`, Host `host`, the key, version 13, no
 * extensions). LD_ERR_INVALID_ARG when host or path is empty, too long, or holds characters that
 * do not belong there; LD_ERR_NOMEM. */
int ld_ws_write_request(ld_buf_t *out, const char *host, const char *path, const char *key);

/* Appends the server's 101 answer carrying `accept`. LD_ERR_NOMEM. */
int ld_ws_write_response(ld_buf_t *out, const char *accept);

/* Appends the server's refusal for a request that failed ld_ws_parse_request with `err`:
 * 426 (with Sec-WebSocket-Version: 13) for LD_ERR_UNSUPPORTED, 431 for LD_ERR_TOO_LARGE,
 * 400 otherwise; always with Connection: close. LD_ERR_NOMEM. */
int ld_ws_write_reject(ld_buf_t *out, int err);

/* ---- sessions ------------------------------------------------------------------------------ */

typedef struct ld_ws_session ld_ws_session_t;

typedef struct ld_ws_session_config {
  bool server;
  uint64_t max_frame; /* payload cap per received data frame; 0 = LD_WS_DEFAULT_MAX_FRAME */
  const char *host;   /* client: the Host header ("name:port"); copied */
  const char *path;   /* client: the request path; NULL = "/"; copied */
} ld_ws_session_config_t;

/* Creates a session. NULL when out of memory or when a client lacks a valid host or path. */
ld_ws_session_t *ld_ws_session_new(const ld_ws_session_config_t *cfg);

/* Frees the session (NULL is fine). */
void ld_ws_session_free(ld_ws_session_t *s);

/* Client: appends the opening handshake. Call once, before any ld_ws_session_read.
 * LD_ERR_STATE for a server or a second call, LD_ERR_NOMEM. */
int ld_ws_session_start(ld_ws_session_t *s, ld_buf_t *out);

/* Feeds bytes received from the peer. Application payload is appended to `app`; bytes to send
 * (the server's handshake answer, pongs, close frames, a refusal) are appended to `out`. Call
 * ld_ws_session_is_open after each call to learn that the handshake completed (payload may follow
 * the handshake in the same call). Returns 0, or:
 *   LD_ERR_CLOSED   the peer sent a close frame (the answer is in `out`);
 *   handshake errors of ld_ws_parse_request / ld_ws_parse_response (a server's refusal is in
 *                   `out`);
 *   LD_ERR_PROTOCOL a frame broke RFC 6455 (an unmasked frame from a client, a masked one from a
 *                   server, reserved bits or opcodes, a fragmented or oversize control frame,
 *                   a non-minimal length, a continuation without a message, an invalid close
 *                   code);
 *   LD_ERR_FRAME_TOO_LARGE a data frame announced more than max_frame bytes;
 *   LD_ERR_MALFORMED invalid UTF-8 in a text frame or a close reason;
 *   LD_ERR_NOMEM.
 * After an error (LD_ERR_CLOSED included) `out` holds what is still to be sent (a close frame with
 * 1002, 1009 or 1007, or the refusal), the session takes no more input (LD_ERR_STATE) and the
 * caller closes the connection. The detail of the failure is in ld_ws_session_why. */
int ld_ws_session_read(ld_ws_session_t *s, const uint8_t *data, size_t len, ld_buf_t *app,
                       ld_buf_t *out);

/* True once the opening handshake completed in this session's role. */
bool ld_ws_session_is_open(const ld_ws_session_t *s);

/* Appends `data` as binary messages of at most LD_WS_SEND_MESSAGE_MAX bytes (masked by a client).
 * LD_ERR_STATE before the handshake completed, LD_ERR_CLOSED once a close frame was sent or
 * received or after a read error, LD_ERR_NOMEM (out may then hold some of the messages). */
int ld_ws_session_write(ld_ws_session_t *s, const uint8_t *data, size_t len, ld_buf_t *out);

/* Appends a close frame with `code` (1000 normal, 1001 going away) unless one was sent already,
 * after which the session sends nothing more. 0 or LD_ERR_NOMEM; a no-op before the handshake. */
int ld_ws_session_close(ld_ws_session_t *s, uint16_t code, ld_buf_t *out);

/* Static description of the last failure ("" when none). */
const char *ld_ws_session_why(const ld_ws_session_t *s);

/* Close code the peer sent (1005 when its close frame had none), 0 when no close arrived. */
uint16_t ld_ws_session_close_code(const ld_ws_session_t *s);

#endif
