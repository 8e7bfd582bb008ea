/* Waku lightpush codec: the v3 LightPushRequest / LightPushResponse
 * (/vac/waku/lightpush/3.0.0) and the legacy PushRPC (/vac/waku/lightpush/2.0.0-beta1,
 * 19/WAKU2-LIGHTPUSH), schemas in proto/lightpush.proto, and nwaku's status codes.
 *
 * Encoding (protobuf-c) writes what nwaku writes: request_id and status_code always (even empty or
 * zero), the optional fields only when set, `is_success` always as a varint 0/1, and the carried
 * WakuMessage in nwaku's dialect (every field written, see waku/core/message.h). Encoders append
 * one length-prefixed frame (uvarint length ‖ body) to an ld_buf_t.
 *
 * Decoding reads a frame's body (no length prefix) the way nwaku's minprotobuf does, through the
 * bounds-checked cursor: the last occurrence of a field wins, unknown fields and fields sent with
 * another wire type are skipped, and nwaku's required fields must be present. A failure returns
 * an LD_ERR_* code and writes nwaku's description of it to `why` (the text that follows
 * "decode_rpc_failure: " in a response):
 *   "VarintDecode", "MessageIncomplete", "BadWireType"   malformed protobuf (LD_ERR_BAD_PROTOBUF)
 *   "MissingRequiredField <field>"                        required field absent
 *                                                         (LD_ERR_MISSING_FIELD); <field> is one of
 *                                                         request_id, message, pubsub_topic,
 *                                                         status_code, is_success, payload,
 *                                                         content_topic
 *   "InvalidLengthField meta"                             meta over 64 bytes
 * (LD_ERR_FIELD_TOO_LONG) "InvalidLengthField <field>"                          our caps: a
 * request_id over LD_LIGHTPUSH_MAX_REQUEST_ID_LEN or a pubsub topic over LD_LIGHTPUSH_MAX_TOPIC_LEN
 *                                                         (LD_ERR_FIELD_TOO_LONG)
 *   "IncorrectBlob <field>"                               a pubsub topic holding a NUL byte
 *                                                         (LD_ERR_BAD_ENCODING)
 * The carried WakuMessage is decoded with ld_waku_message_decode without a size cap of its own
 * (the frame cap bounds it): an oversized message is refused later by the relay's checks (nwaku
 * answers 420, not 413). As nwaku does, it must carry payload and content topic.
 *
 * Decoded values are owned by the decoded object (release with its _clear function) and never
 * point into the input. Every decoded text field is also NUL-terminated (not counting in its
 * length); a NULL text pointer means the field was absent.
 *
 * Pure functions (no I/O, no global state): any thread. */
#ifndef LD_WAKU_LIGHTPUSH_CODEC_H
#define LD_WAKU_LIGHTPUSH_CODEC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/buf.h"
#include "waku/core/codecs.h"
#include "waku/core/message.h"

#define LD_LIGHTPUSH_PROTOCOL LD_WAKU_LIGHTPUSH_CODEC /* "/vac/waku/lightpush/3.0.0" */
#define LD_LIGHTPUSH_LEGACY_PROTOCOL LD_WAKU_LEGACY_LIGHTPUSH_CODEC /* ".../2.0.0-beta1" */

/* ---- status codes (nwaku's LightPushErrorCode; js-waku's enum is identical) ------------------ */

#define LD_LIGHTPUSH_SUCCESS 200u
#define LD_LIGHTPUSH_BAD_REQUEST 400u
#define LD_LIGHTPUSH_PAYLOAD_TOO_LARGE 413u /* defined; nwaku never sends it (oversize is 420) */
#define LD_LIGHTPUSH_INVALID_MESSAGE 420u
#define LD_LIGHTPUSH_UNSUPPORTED_PUBSUB_TOPIC 421u /* defined; not sent */
#define LD_LIGHTPUSH_TOO_MANY_REQUESTS 429u
#define LD_LIGHTPUSH_INTERNAL_SERVER_ERROR 500u
#define LD_LIGHTPUSH_SERVICE_NOT_AVAILABLE                                                         \
  503u /* client side: the peer does not serve lightpush                                           \
        */
#define LD_LIGHTPUSH_OUT_OF_RLN_PROOF 504u
#define LD_LIGHTPUSH_NO_PEERS_TO_RELAY 505u /* ⚠ the written spec says 503; code uses 505 */

/* Number of codes above, and the codes in increasing order (index i ↔ ld_lightpush_codes[i]). */
#define LD_LIGHTPUSH_N_CODES 10
extern const uint32_t ld_lightpush_codes[LD_LIGHTPUSH_N_CODES];

/* Index of `code` in ld_lightpush_codes, or -1 for a code outside the table. */
int ld_lightpush_code_index(uint32_t code);

/* nwaku's name of a code ("SUCCESS", "NO_PEERS_TO_RELAY", …) or "UNKNOWN". Static string. */
const char *ld_lightpush_code_name(uint32_t code);

/* ---- caps ------------------------------------------------------------------------------------ */

/* request_id of a response to a request that could not be decoded or was rate-limited (v3, and
 * v2 when rate-limited). */
#define LD_LIGHTPUSH_NA "N/A"
/* Longest request_id accepted (nwaku sends 20 hex digits, js-waku a 36-character UUID). */
#define LD_LIGHTPUSH_MAX_REQUEST_ID_LEN 1024
/* Longest pubsub topic accepted (the gossipsub topic cap). */
#define LD_LIGHTPUSH_MAX_TOPIC_LEN 1024
/* Largest response frame body read by a client (responses are a few dozen bytes). */
#define LD_LIGHTPUSH_MAX_RESPONSE (64u * 1024)

/* Largest request frame body a service reads for a relay cap of `max_msg_size` bytes (0 means
 * LD_WAKU_DEFAULT_MAX_MSG_SIZE): the message plus nwaku's protocol overhead (64 KiB), so that a
 * message somewhat over the cap still gets its 420 answer; larger frames reset the stream. */
size_t ld_lightpush_max_frame(size_t max_msg_size);

/* ---- v3 request ------------------------------------------------------------------------------ */

typedef struct ld_lightpush_request {
  const char *request_id; /* required */
  size_t request_id_len;
  const char *pubsub_topic; /* NULL: absent (the service shards the content topic) */
  size_t pubsub_topic_len;
  ld_waku_message_t message;
  void *storage; /* private: owned texts of a decoded request */
} ld_lightpush_request_t;

/* Empty request (no texts, empty borrowed message). */
void ld_lightpush_request_init(ld_lightpush_request_t *req);

/* Releases what a decoded request owns (its message included) and re-initialises it. */
void ld_lightpush_request_clear(ld_lightpush_request_t *req);

/* Appends one framed LightPushRequest built from the views of `req` (storage is ignored; NULL
 * request_id with length 0 is an empty ID). `max_msg_size` caps the message's encoding as
 * ld_waku_message_encode does (0 = default cap, SIZE_MAX = none). Errors (`out` unchanged):
 * LD_ERR_INVALID_ARG, LD_ERR_TOO_LARGE, LD_ERR_FIELD_TOO_LONG (meta), LD_ERR_NOMEM. */
int ld_lightpush_request_encode(const ld_lightpush_request_t *req, size_t max_msg_size,
                                ld_buf_t *out);

/* Decodes a LightPushRequest body into `out` (initialised; old content cleared first). Returns 0
 * or an error with `why` (may be NULL; room for why_len bytes, NUL-terminated, truncated if
 * short) as described at the top; LD_ERR_NOMEM and LD_ERR_INVALID_ARG too. `out` is left empty
 * on error. */
int ld_lightpush_request_decode(const uint8_t *body, size_t len, ld_lightpush_request_t *out,
                                char *why, size_t why_len);

/* ---- v3 response ----------------------------------------------------------------------------- */

typedef struct ld_lightpush_response {
  const char *request_id;
  size_t request_id_len;
  uint32_t status_code;
  const char *status_desc; /* NULL: absent */
  size_t status_desc_len;
  bool has_relay_peer_count;
  uint32_t relay_peer_count;
  void *storage; /* private */
} ld_lightpush_response_t;

void ld_lightpush_response_init(ld_lightpush_response_t *resp);
void ld_lightpush_response_clear(ld_lightpush_response_t *resp);

/* Appends one framed LightPushResponse from the views of `resp`. LD_ERR_INVALID_ARG,
 * LD_ERR_NOMEM (`out` unchanged). */
int ld_lightpush_response_encode(const ld_lightpush_response_t *resp, ld_buf_t *out);

/* Decodes a LightPushResponse body (request_id and status_code required). As
 * ld_lightpush_request_decode. */
int ld_lightpush_response_decode(const uint8_t *body, size_t len, ld_lightpush_response_t *out,
                                 char *why, size_t why_len);

/* ---- legacy v2 PushRPC ----------------------------------------------------------------------- */

typedef struct ld_lightpush_rpc {
  const char *request_id; /* required */
  size_t request_id_len;
  bool has_request;
  const char *pubsub_topic; /* request: required in a request (nwaku) */
  size_t pubsub_topic_len;
  ld_waku_message_t message; /* request */
  bool has_response;
  bool is_success;  /* response */
  const char *info; /* response: NULL when absent */
  size_t info_len;
  void *storage; /* private */
} ld_lightpush_rpc_t;

void ld_lightpush_rpc_init(ld_lightpush_rpc_t *rpc);
void ld_lightpush_rpc_clear(ld_lightpush_rpc_t *rpc);

/* Appends one framed PushRPC: request_id always, the request when has_request (pubsub topic and
 * message always written, the message capped by `max_msg_size` as above), the response when
 * has_response (is_success always, info when not NULL). Errors as
 * ld_lightpush_request_encode. */
int ld_lightpush_rpc_encode(const ld_lightpush_rpc_t *rpc, size_t max_msg_size, ld_buf_t *out);

/* Decodes a PushRPC body: request_id required; a request needs pubsub_topic and message (the
 * message payload and content topic), a response needs is_success (any nonzero varint is true).
 * Errors as ld_lightpush_request_decode. */
int ld_lightpush_rpc_decode(const uint8_t *body, size_t len, ld_lightpush_rpc_t *out, char *why,
                            size_t why_len);

#endif
