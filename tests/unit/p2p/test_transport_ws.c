/* The WebSocket engine under the /ws and /wss transports: the accept-key vector of RFC 6455, the
 * opening handshake parsers of both roles on good and bad messages (each refusal with its named
 * error), and two sessions talking in memory (masking, fragmentation, ping/pong, close, frame
 * rules and caps). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "base/buf.h"
#include "base/error.h"
#include "p2p/transport_ws.h"
#include "p2p/ws_session.h"

/* RFC 6455 §1.3: SHA-1(key ‖ GUID) = b37a4f2c c0624f16 90f64606 cf385945 b2bec4ea */
#define RFC_KEY "dGhlIHNhbXBsZSBub25jZQ=="
#define RFC_ACCEPT "s3pPLMBiTxaQ9kYGzzhZRbK+xOo="

static const char rfc_request[] = "GET /chat HTTP/1.1\r\n"
                                  "Host: server.example.com\r\n"
                                  "Upgrade: websocket\r\n"
                                  "Connection: Upgrade\r\n"
                                  "Sec-WebSocket-Key: " RFC_KEY "\r\n"
                                  "Origin: http://example.com\r\n"
                                  "Sec-WebSocket-Protocol: chat, superchat\r\n"
                                  "Sec-WebSocket-Version: 13\r\n"
                                  "\r\n";

/* What js-libp2p's `ws` client (Node) sends. */
static const char js_request[] = "GET / HTTP/1.1\r\n"
                                 "Sec-WebSocket-Version: 13\r\n"
                                 "Sec-WebSocket-Key: " RFC_KEY "\r\n"
                                 "Connection: Upgrade\r\n"
                                 "Upgrade: websocket\r\n"
                                 "Sec-WebSocket-Extensions: permessage-deflate; "
                                 "client_max_window_bits\r\n"
                                 "Host: 127.0.0.1:41234\r\n"
                                 "\r\n";

static const char rfc_response[] = "HTTP/1.1 101 Switching Protocols\r\n"
                                   "Upgrade: websocket\r\n"
                                   "Connection: Upgrade\r\n"
                                   "Sec-WebSocket-Accept: " RFC_ACCEPT "\r\n"
                                   "\r\n";

static int parse_req(const char *text, ld_ws_request_t *req, size_t *consumed) {
  return ld_ws_parse_request((const uint8_t *)text, strlen(text), req, consumed, NULL);
}

static int parse_resp(const char *text) {
  size_t consumed = 0;
  return ld_ws_parse_response((const uint8_t *)text, strlen(text), RFC_ACCEPT, &consumed, NULL);
}

/* ---- accept key --------------------------------------------------------------------------- */

static void accept_key_matches_rfc_6455(void **state) {
  (void)state;
  char accept[LD_WS_ACCEPT_TEXT_LEN + 1];
  assert_int_equal(ld_ws_accept_for_key(RFC_KEY, strlen(RFC_KEY), accept), 0);
  assert_string_equal(accept, RFC_ACCEPT);
}

static void new_keys_are_16_random_bytes(void **state) {
  (void)state;
  char a[LD_WS_KEY_TEXT_LEN + 1], b[LD_WS_KEY_TEXT_LEN + 1];
  ld_ws_new_key(a);
  ld_ws_new_key(b);
  assert_int_equal(strlen(a), LD_WS_KEY_TEXT_LEN);
  assert_string_not_equal(a, b);
  assert_string_equal(a + 22, "==");
}

/* ---- requests ----------------------------------------------------------------------------- */

static void parses_rfc_request(void **state) {
  (void)state;
  ld_ws_request_t req;
  size_t consumed = 0;
  assert_int_equal(parse_req(rfc_request, &req, &consumed), 0);
  assert_int_equal(consumed, strlen(rfc_request));
  assert_string_equal(req.key, RFC_KEY);
  assert_true(req.offered_protocols);
  assert_false(req.offered_extensions);
}

static void parses_js_ws_request_with_extension_offer(void **state) {
  (void)state;
  ld_ws_request_t req;
  size_t consumed = 0;
  assert_int_equal(parse_req(js_request, &req, &consumed), 0);
  assert_int_equal(consumed, strlen(js_request));
  assert_true(req.offered_extensions);
  assert_false(req.offered_protocols);
}

static void accepts_header_variants(void **state) {
  (void)state;
  static const char *ok[] = {
      /* a browser's token lists, any path, case-insensitive names and tokens, OWS */
      "GET /p2p/xyz?a=1 HTTP/1.1\r\nhost: h\r\nupgrade: WebSocket\r\nconnection: keep-alive, "
      "Upgrade\r\nsec-websocket-key:" RFC_KEY "\r\nSEC-WEBSOCKET-VERSION:  13 \t\r\n\r\n",
      /* Upgrade among other protocols, repeated Connection headers */
      "GET / HTTP/1.1\r\nHost: h\r\nUpgrade: h2c, websocket\r\nConnection: close\r\n"
      "Connection: upgrade\r\nSec-WebSocket-Key: " RFC_KEY "\r\nSec-WebSocket-Version: 13\r\n"
      "User-Agent: x\xc3\xa9\r\n\r\n",
  };
  for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
    ld_ws_request_t req;
    size_t consumed = 0;
    assert_int_equal(parse_req(ok[i], &req, &consumed), 0);
    assert_int_equal(consumed, strlen(ok[i]));
    assert_string_equal(req.key, RFC_KEY);
  }
}

static void every_prefix_is_truncated(void **state) {
  (void)state;
  size_t n = strlen(js_request);
  for (size_t i = 0; i < n; i++) {
    ld_ws_request_t req;
    size_t consumed = 0;
    assert_int_equal(ld_ws_parse_request((const uint8_t *)js_request, i, &req, &consumed, NULL),
                     LD_ERR_TRUNCATED);
  }
}

static void leaves_pipelined_frames(void **state) {
  (void)state;
  char buf[1024];
  size_t n = strlen(rfc_request);
  memcpy(buf, rfc_request, n);
  memcpy(buf + n, "\x82\x80\x01\x02\x03\x04", 6);
  ld_ws_request_t req;
  size_t consumed = 0;
  assert_int_equal(ld_ws_parse_request((const uint8_t *)buf, n + 6, &req, &consumed, NULL), 0);
  assert_int_equal(consumed, n);
}

typedef struct bad_case {
  const char *text;
  int err;
  const char *why;
} bad_case_t;

#define HDRS "Host: h\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
#define KEYV "Sec-WebSocket-Key: " RFC_KEY "\r\nSec-WebSocket-Version: 13\r\n"

static const bad_case_t bad_requests[] = {
    {"\x13/multistream/1.0.0\n", LD_ERR_MALFORMED, "control character"},
    {"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03", LD_ERR_MALFORMED, "control character"},
    {"GET / HTTP/1.1\n" HDRS KEYV "\n", LD_ERR_MALFORMED, "bare LF"},
    {"GET / HTTP/1.1\r" HDRS, LD_ERR_MALFORMED, "bare CR"},
    {"POST / HTTP/1.1\r\n" HDRS KEYV "\r\n", LD_ERR_HANDSHAKE, "method is not GET"},
    {"GET / HTTP/1.0\r\n" HDRS KEYV "\r\n", LD_ERR_MALFORMED, "not HTTP/1.1"},
    {"GET /\r\n" HDRS KEYV "\r\n", LD_ERR_MALFORMED, "request line"},
    {"GET  HTTP/1.1\r\n" HDRS KEYV "\r\n", LD_ERR_MALFORMED, "request line"},
    {"\r\n" HDRS KEYV "\r\n", LD_ERR_MALFORMED, "request line"},
    {"GET / HTTP/1.1\r\n" HDRS " folded\r\n" KEYV "\r\n", LD_ERR_MALFORMED, "line folding"},
    {"GET / HTTP/1.1\r\n" HDRS "Bad Name: x\r\n" KEYV "\r\n", LD_ERR_MALFORMED, "header name"},
    {"GET / HTTP/1.1\r\n" HDRS "NoColon\r\n" KEYV "\r\n", LD_ERR_MALFORMED, "without a name"},
    {"GET / HTTP/1.1\r\n" HDRS ": x\r\n" KEYV "\r\n", LD_ERR_MALFORMED, "without a name"},
    {"GET / HTTP/1.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n" KEYV "\r\n",
     LD_ERR_HANDSHAKE, "no Host"},
    {"GET / HTTP/1.1\r\nHost: a\r\nHost: b\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n" KEYV
     "\r\n",
     LD_ERR_HANDSHAKE, "Host given twice"},
    {"GET / HTTP/1.1\r\nHost: h\r\nConnection: Upgrade\r\n" KEYV "\r\n", LD_ERR_HANDSHAKE,
     "no Upgrade"},
    {"GET / HTTP/1.1\r\nHost: h\r\nUpgrade: h2c\r\nConnection: Upgrade\r\n" KEYV "\r\n",
     LD_ERR_HANDSHAKE, "no Upgrade"},
    {"GET / HTTP/1.1\r\nHost: h\r\nUpgrade: websocket\r\nConnection: keep-alive\r\n" KEYV "\r\n",
     LD_ERR_HANDSHAKE, "no Connection"},
    {"GET / HTTP/1.1\r\n" HDRS "Sec-WebSocket-Version: 13\r\n\r\n", LD_ERR_HANDSHAKE,
     "no Sec-WebSocket-Key"},
    {"GET / HTTP/1.1\r\n" HDRS "Sec-WebSocket-Key: dGhlIHNhbXBsZQ==\r\n"
     "Sec-WebSocket-Version: 13\r\n\r\n",
     LD_ERR_HANDSHAKE, "not 16 bytes"},
    {"GET / HTTP/1.1\r\n" HDRS "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ!!\r\n"
     "Sec-WebSocket-Version: 13\r\n\r\n",
     LD_ERR_HANDSHAKE, "not 16 bytes"},
    {"GET / HTTP/1.1\r\n" HDRS KEYV "Sec-WebSocket-Key: " RFC_KEY "\r\n\r\n", LD_ERR_HANDSHAKE,
     "Key given twice"},
    {"GET / HTTP/1.1\r\n" HDRS "Sec-WebSocket-Key: " RFC_KEY "\r\nSec-WebSocket-Version: 8\r\n\r\n",
     LD_ERR_UNSUPPORTED, "not 13"},
    {"GET / HTTP/1.1\r\n" HDRS "Sec-WebSocket-Key: " RFC_KEY "\r\n\r\n", LD_ERR_HANDSHAKE,
     "no Sec-WebSocket-Version"},
    {"GET / HTTP/1.1\r\n" HDRS KEYV "X: a\x7f"
     "b\r\n\r\n",
     LD_ERR_MALFORMED, "header value"},
};

static void rejects_bad_requests_with_named_errors(void **state) {
  (void)state;
  for (size_t i = 0; i < sizeof bad_requests / sizeof bad_requests[0]; i++) {
    const bad_case_t *b = &bad_requests[i];
    ld_ws_request_t req;
    size_t consumed = 0;
    const char *why = NULL;
    int rc = ld_ws_parse_request((const uint8_t *)b->text, strlen(b->text), &req, &consumed, &why);
    if (rc != b->err || strstr(why, b->why) == NULL)
      fail_msg("case %zu: got %s (%s), want %s (%s)", i, ld_errname(rc), why, ld_errname(b->err),
               b->why);
  }
}

static void nul_byte_is_malformed(void **state) {
  (void)state;
  static const char text[] = "GET / HTTP/1.1\r\nHost: a\0b\r\n\r\n";
  ld_ws_request_t req;
  size_t consumed = 0;
  assert_int_equal(
      ld_ws_parse_request((const uint8_t *)text, sizeof text - 1, &req, &consumed, NULL),
      LD_ERR_MALFORMED);
}

static void caps_header_block_and_lines(void **state) {
  (void)state;
  ld_buf_t b;
  ld_buf_init(&b);
  assert_int_equal(
      ld_buf_append(&b, "GET / HTTP/1.1\r\n" HDRS KEYV, strlen("GET / HTTP/1.1\r\n" HDRS KEYV)), 0);
  while (b.len < LD_WS_MAX_HEADER_BLOCK)
    assert_int_equal(ld_buf_append(&b, "X-Pad: 0123456789012345678901234567890123456789\r\n", 49),
                     0);
  ld_ws_request_t req;
  size_t consumed = 0;
  const char *why = NULL;
  /* no blank line within 8 KiB */
  assert_int_equal(ld_ws_parse_request(b.data, b.len, &req, &consumed, &why), LD_ERR_TOO_LARGE);
  assert_non_null(strstr(why, "8 KiB"));
  /* a blank line, but past 8 KiB */
  assert_int_equal(ld_buf_append(&b, "\r\n", 2), 0);
  assert_int_equal(ld_ws_parse_request(b.data, b.len, &req, &consumed, NULL), LD_ERR_TOO_LARGE);
  /* 65 short header lines within the size cap */
  ld_buf_reset(&b);
  ld_buf_append(&b, "GET / HTTP/1.1\r\n" HDRS KEYV, strlen("GET / HTTP/1.1\r\n" HDRS KEYV));
  for (int i = 0; i < LD_WS_MAX_HEADER_LINES; i++)
    ld_buf_append(&b, "X: y\r\n", 6);
  ld_buf_append(&b, "\r\n", 2);
  assert_true(b.len < LD_WS_MAX_HEADER_BLOCK);
  assert_int_equal(ld_ws_parse_request(b.data, b.len, &req, &consumed, &why), LD_ERR_TOO_LARGE);
  assert_non_null(strstr(why, "too many header lines"));
  ld_buf_clear(&b);
}

/* ---- responses ---------------------------------------------------------------------------- */

static void parses_rfc_response(void **state) {
  (void)state;
  assert_int_equal(parse_resp(rfc_response), 0);
  assert_int_equal(parse_resp("HTTP/1.1 101\r\nupgrade: WebSocket\r\nconnection: upgrade\r\n"
                              "Sec-WebSocket-Accept: " RFC_ACCEPT "\r\nServer: x\r\n\r\n"),
                   0);
  for (size_t i = 0; i < strlen(rfc_response); i++) {
    size_t consumed = 0;
    assert_int_equal(
        ld_ws_parse_response((const uint8_t *)rfc_response, i, RFC_ACCEPT, &consumed, NULL),
        LD_ERR_TRUNCATED);
  }
}

static const bad_case_t bad_responses[] = {
    {"HTTP/1.1 400 Bad Request\r\nConnection: close\r\n\r\n", LD_ERR_HANDSHAKE, "not 101"},
    {"HTTP/1.1 200 OK\r\n\r\n", LD_ERR_HANDSHAKE, "not 101"},
    {"HTTP/1.0 101 Switching Protocols\r\n\r\n", LD_ERR_MALFORMED, "status line"},
    {"HTTP/1.1 1x1 Switching\r\n\r\n", LD_ERR_MALFORMED, "status line"},
    {"HTTP/1.1 1011 Switching\r\n\r\n", LD_ERR_MALFORMED, "status line"},
    {"\x13/multistream/1.0.0\n", LD_ERR_MALFORMED, "control character"},
    {"HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
     "Sec-WebSocket-Accept: AAAAAAAAAAAAAAAAAAAAAAAAAAA=\r\n\r\n",
     LD_ERR_HANDSHAKE, "wrong Sec-WebSocket-Accept"},
    {"HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n",
     LD_ERR_HANDSHAKE, "no Sec-WebSocket-Accept"},
    {"HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\n"
     "Sec-WebSocket-Accept: " RFC_ACCEPT "\r\n\r\n",
     LD_ERR_HANDSHAKE, "no Upgrade"},
    {"HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n"
     "Sec-WebSocket-Accept: " RFC_ACCEPT "\r\n\r\n",
     LD_ERR_HANDSHAKE, "no Connection"},
    {"HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
     "Sec-WebSocket-Accept: " RFC_ACCEPT "\r\nSec-WebSocket-Extensions: permessage-deflate\r\n\r\n",
     LD_ERR_HANDSHAKE, "extension"},
    {"HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
     "Sec-WebSocket-Accept: " RFC_ACCEPT "\r\nSec-WebSocket-Protocol: chat\r\n\r\n",
     LD_ERR_HANDSHAKE, "subprotocol"},
};

static void rejects_bad_responses_with_named_errors(void **state) {
  (void)state;
  for (size_t i = 0; i < sizeof bad_responses / sizeof bad_responses[0]; i++) {
    const bad_case_t *b = &bad_responses[i];
    size_t consumed = 0;
    const char *why = NULL;
    int rc = ld_ws_parse_response((const uint8_t *)b->text, strlen(b->text), RFC_ACCEPT, &consumed,
                                  &why);
    if (rc != b->err || strstr(why, b->why) == NULL)
      fail_msg("case %zu: got %s (%s), want %s (%s)", i, ld_errname(rc), why, ld_errname(b->err),
               b->why);
  }
}

static void written_messages_parse(void **state) {
  (void)state;
  ld_buf_t b;
  ld_buf_init(&b);
  assert_int_equal(ld_ws_write_request(&b, "[::1]:443", "/", RFC_KEY), 0);
  ld_ws_request_t req;
  size_t consumed = 0;
  assert_int_equal(ld_ws_parse_request(b.data, b.len, &req, &consumed, NULL), 0);
  assert_int_equal(consumed, b.len);
  assert_string_equal(req.key, RFC_KEY);
  assert_null(memmem(b.data, b.len, "Extensions", 10));
  ld_buf_reset(&b);
  assert_int_equal(ld_ws_write_response(&b, RFC_ACCEPT), 0);
  assert_int_equal(ld_ws_parse_response(b.data, b.len, RFC_ACCEPT, &consumed, NULL), 0);
  ld_buf_reset(&b);
  assert_int_equal(ld_ws_write_reject(&b, LD_ERR_UNSUPPORTED), 0);
  assert_non_null(memmem(b.data, b.len, "426 Upgrade Required\r\nSec-WebSocket-Version: 13\r\n",
                         strlen("426 Upgrade Required\r\nSec-WebSocket-Version: 13\r\n")));
  assert_int_equal(ld_ws_parse_response(b.data, b.len, RFC_ACCEPT, &consumed, NULL),
                   LD_ERR_HANDSHAKE);
  ld_buf_reset(&b);
  assert_int_equal(ld_ws_write_reject(&b, LD_ERR_TOO_LARGE), 0);
  assert_memory_equal(b.data, "HTTP/1.1 431 ", 13);
  ld_buf_reset(&b);
  assert_int_equal(ld_ws_write_reject(&b, LD_ERR_MALFORMED), 0);
  assert_memory_equal(b.data, "HTTP/1.1 400 ", 13);
  /* nothing that would split the header block */
  assert_int_equal(ld_ws_write_request(&b, "h\r\nX: y", "/", RFC_KEY), LD_ERR_INVALID_ARG);
  assert_int_equal(ld_ws_write_request(&b, "h", "no-slash", RFC_KEY), LD_ERR_INVALID_ARG);
  assert_int_equal(ld_ws_write_request(&b, "", "/", RFC_KEY), LD_ERR_INVALID_ARG);
  ld_buf_clear(&b);
}

/* ---- sessions ----------------------------------------------------------------------------- */

typedef struct pair {
  ld_ws_session_t *client, *server;
  ld_buf_t c_app, s_app, out;
} pair_t;

static ld_ws_session_t *server_new(uint64_t max_frame) {
  ld_ws_session_config_t cfg = {.server = true, .max_frame = max_frame};
  ld_ws_session_t *s = ld_ws_session_new(&cfg);
  assert_non_null(s);
  return s;
}

/* A client and a server session through the handshake. */
static void pair_open(pair_t *p, uint64_t max_frame) {
  memset(p, 0, sizeof *p);
  ld_ws_session_config_t ccfg = {.server = false, .host = "127.0.0.1:1", .path = "/"};
  p->client = ld_ws_session_new(&ccfg);
  assert_non_null(p->client);
  p->server = server_new(max_frame);
  ld_buf_t req, resp;
  ld_buf_init(&req);
  ld_buf_init(&resp);
  assert_int_equal(ld_ws_session_start(p->client, &req), 0);
  assert_int_equal(ld_ws_session_start(p->client, &req), LD_ERR_STATE);
  assert_false(ld_ws_session_is_open(p->server));
  assert_int_equal(ld_ws_session_read(p->server, req.data, req.len, &p->s_app, &resp), 0);
  assert_true(ld_ws_session_is_open(p->server));
  assert_memory_equal(resp.data, "HTTP/1.1 101 ", 13);
  assert_int_equal(ld_ws_session_read(p->client, resp.data, resp.len, &p->c_app, &p->out), 0);
  assert_true(ld_ws_session_is_open(p->client));
  assert_int_equal(p->out.len, 0);
  ld_buf_clear(&req);
  ld_buf_clear(&resp);
}

static void pair_close(pair_t *p) {
  ld_ws_session_free(p->client);
  ld_ws_session_free(p->server);
  ld_buf_clear(&p->c_app);
  ld_buf_clear(&p->s_app);
  ld_buf_clear(&p->out);
}

/* Builds one frame; a client's frames are masked with 01 02 03 04. */
static size_t frame(uint8_t *out, uint8_t first, bool mask, const void *payload, size_t n) {
  static const uint8_t key[4] = {1, 2, 3, 4};
  size_t off = 0;
  out[off++] = first;
  uint8_t m = mask ? 0x80 : 0;
  if (n < 126) {
    out[off++] = m | (uint8_t)n;
  } else if (n < 65536) {
    out[off++] = m | 126;
    out[off++] = (uint8_t)(n >> 8);
    out[off++] = (uint8_t)n;
  } else {
    out[off++] = m | 127;
    for (int i = 7; i >= 0; i--)
      out[off++] = (uint8_t)((uint64_t)n >> (8 * i));
  }
  if (mask) {
    memcpy(out + off, key, 4);
    off += 4;
  }
  for (size_t i = 0; i < n; i++)
    out[off + i] = ((const uint8_t *)payload)[i] ^ (mask ? key[i % 4] : 0);
  return off + n;
}

static void data_flows_both_ways(void **state) {
  (void)state;
  pair_t p;
  pair_open(&p, 0);
  size_t n = 200 * 1024 + 7;
  uint8_t *data = malloc(n);
  assert_non_null(data);
  for (size_t i = 0; i < n; i++)
    data[i] = (uint8_t)(i * 31 + (i >> 11));
  ld_buf_t wire;
  ld_buf_init(&wire);
  /* client → server: masked, at most 64 KiB per message */
  assert_int_equal(ld_ws_session_write(p.client, data, n, &wire), 0);
  assert_int_equal(wire.data[0], 0x82);
  assert_true(wire.data[1] & 0x80);
  assert_int_equal(wire.data[1] & 0x7f, 127);
  assert_int_equal(wire.data[7], 0x01); /* 65536 = 0x10000 */
  assert_int_equal(wire.data[8], 0x00);
  assert_int_equal(wire.data[9], 0x00);
  /* fed in odd-sized pieces */
  for (size_t off = 0; off < wire.len;) {
    size_t k = wire.len - off < 1777 ? wire.len - off : 1777;
    assert_int_equal(ld_ws_session_read(p.server, wire.data + off, k, &p.s_app, &p.out), 0);
    off += k;
  }
  assert_int_equal(p.s_app.len, n);
  assert_memory_equal(p.s_app.data, data, n);
  assert_int_equal(p.out.len, 0);
  /* server → client: unmasked */
  ld_buf_reset(&wire);
  assert_int_equal(ld_ws_session_write(p.server, data, n, &wire), 0);
  assert_int_equal(wire.data[0], 0x82);
  assert_false(wire.data[1] & 0x80);
  assert_int_equal(ld_ws_session_read(p.client, wire.data, wire.len, &p.c_app, &p.out), 0);
  assert_int_equal(p.c_app.len, n);
  assert_memory_equal(p.c_app.data, data, n);
  ld_buf_clear(&wire);
  free(data);
  pair_close(&p);
}

static void handshake_and_frames_byte_by_byte(void **state) {
  (void)state;
  ld_ws_session_t *s = server_new(0);
  ld_buf_t in, app, out;
  ld_buf_init(&in);
  ld_buf_init(&app);
  ld_buf_init(&out);
  ld_buf_append(&in, js_request, strlen(js_request));
  uint8_t f[64];
  size_t n = frame(f, 0x82, true, "hello", 5);
  ld_buf_append(&in, f, n);
  for (size_t i = 0; i < in.len; i++)
    assert_int_equal(ld_ws_session_read(s, in.data + i, 1, &app, &out), 0);
  assert_true(ld_ws_session_is_open(s));
  assert_int_equal(app.len, 5);
  assert_memory_equal(app.data, "hello", 5);
  assert_memory_equal(out.data, "HTTP/1.1 101 ", 13);
  assert_null(memmem(out.data, out.len, "Extensions", 10)); /* permessage-deflate declined */
  char accept[LD_WS_ACCEPT_TEXT_LEN + 1];
  ld_ws_accept_for_key(RFC_KEY, strlen(RFC_KEY), accept);
  assert_non_null(memmem(out.data, out.len, accept, LD_WS_ACCEPT_TEXT_LEN));
  ld_ws_session_free(s);
  ld_buf_clear(&in);
  ld_buf_clear(&app);
  ld_buf_clear(&out);
}

/* Feeds a handshake-completed server one frame (or any bytes) and returns the result. */
static int server_feed(ld_ws_session_t *s, const uint8_t *bytes, size_t n, ld_buf_t *app,
                       ld_buf_t *out) {
  ld_ws_request_t req;
  (void)req;
  ld_buf_t tmp;
  ld_buf_init(&tmp);
  int rc = ld_ws_session_read(s, (const uint8_t *)rfc_request, strlen(rfc_request), app, &tmp);
  assert_int_equal(rc, 0);
  ld_buf_clear(&tmp);
  return ld_ws_session_read(s, bytes, n, app, out);
}

static void answers_ping_and_joins_fragments(void **state) {
  (void)state;
  ld_ws_session_t *s = server_new(0);
  ld_buf_t app, out;
  ld_buf_init(&app);
  ld_buf_init(&out);
  uint8_t in[128];
  size_t n = frame(in, 0x02, true, "ab", 2);     /* binary, not final */
  n += frame(in + n, 0x89, true, "hi", 2);       /* ping in between */
  n += frame(in + n, 0x80, true, "cd", 2);       /* final continuation */
  n += frame(in + n, 0x8a, true, "x", 1);        /* unsolicited pong: ignored */
  n += frame(in + n, 0x81, true, "\xc3\xa9", 2); /* valid UTF-8 text: data */
  assert_int_equal(server_feed(s, in, n, &app, &out), 0);
  assert_int_equal(app.len, 6);
  assert_memory_equal(app.data, "abcd\xc3\xa9", 6);
  assert_int_equal(out.len, 4);
  assert_memory_equal(out.data, "\x8a\x02hi", 4); /* unmasked pong with the ping's payload */
  ld_ws_session_free(s);
  ld_buf_clear(&app);
  ld_buf_clear(&out);
}

static void close_frame_is_answered(void **state) {
  (void)state;
  ld_ws_session_t *s = server_new(0);
  ld_buf_t app, out;
  ld_buf_init(&app);
  ld_buf_init(&out);
  uint8_t in[64];
  size_t n = frame(in, 0x82, true, "z", 1);
  n += frame(in + n, 0x88, true, "\x03\xe8", 2);
  n += frame(in + n, 0x82, true, "late", 4); /* after the close: ignored */
  assert_int_equal(server_feed(s, in, n, &app, &out), LD_ERR_CLOSED);
  assert_int_equal(ld_ws_session_close_code(s), 1000);
  assert_int_equal(app.len, 1);
  assert_int_equal(out.len, 4);
  assert_memory_equal(out.data, "\x88\x02\x03\xe8", 4);
  ld_buf_reset(&out);
  assert_int_equal(ld_ws_session_write(s, (const uint8_t *)"x", 1, &out), LD_ERR_CLOSED);
  assert_int_equal(ld_ws_session_read(s, in, 1, &app, &out), LD_ERR_STATE);
  assert_int_equal(ld_ws_session_close(s, LD_WS_CLOSE_NORMAL, &out), 0);
  assert_int_equal(out.len, 0);
  ld_ws_session_free(s);
  ld_buf_clear(&app);
  ld_buf_clear(&out);
}

typedef struct frame_case {
  uint8_t first;
  bool mask;
  const char *payload;
  size_t len;
  int err;
  const char *close; /* the close frame sent back */
  size_t close_len;
} frame_case_t;

static const frame_case_t bad_frames[] = {
    {0x82, false, "abc", 3, LD_ERR_PROTOCOL, "\x88\x02\x03\xea", 4},      /* unmasked */
    {0xc2, true, "abc", 3, LD_ERR_PROTOCOL, "\x88\x02\x03\xea", 4},       /* RSV1 */
    {0x83, true, "abc", 3, LD_ERR_PROTOCOL, "\x88\x02\x03\xea", 4},       /* opcode 3 */
    {0x80, true, "abc", 3, LD_ERR_PROTOCOL, "\x88\x02\x03\xea", 4},       /* lone continuation */
    {0x09, true, "abc", 3, LD_ERR_PROTOCOL, "\x88\x00", 2},               /* fragmented ping */
    {0x81, true, "\xff\xfe", 2, LD_ERR_MALFORMED, "\x88\x02\x03\xef", 4}, /* bad UTF-8 */
    {0x88, true, "\x03\xed", 2, LD_ERR_PROTOCOL, "\x88\x02\x03\xea", 4},  /* close code 1005 */
};

static void bad_frames_fail_with_named_errors(void **state) {
  (void)state;
  for (size_t i = 0; i < sizeof bad_frames / sizeof bad_frames[0]; i++) {
    const frame_case_t *fc = &bad_frames[i];
    ld_ws_session_t *s = server_new(0);
    ld_buf_t app, out;
    ld_buf_init(&app);
    ld_buf_init(&out);
    uint8_t in[64];
    size_t n = frame(in, fc->first, fc->mask, fc->payload, fc->len);
    int rc = server_feed(s, in, n, &app, &out);
    if (rc != fc->err || out.len != fc->close_len || memcmp(out.data, fc->close, out.len) != 0)
      fail_msg("case %zu: got %s and %zu close bytes", i, ld_errname(rc), out.len);
    assert_int_equal(app.len, 0);
    assert_true(strlen(ld_ws_session_why(s)) > 0);
    ld_ws_session_free(s);
    ld_buf_clear(&app);
    ld_buf_clear(&out);
  }
}

static void oversize_frames_are_refused(void **state) {
  (void)state;
  /* a configured cap of 1 KiB */
  ld_ws_session_t *s = server_new(1024);
  ld_buf_t app, out;
  ld_buf_init(&app);
  ld_buf_init(&out);
  uint8_t *payload = calloc(1, 1025);
  uint8_t *in = malloc(2 * 1025 + 32);
  size_t n = frame(in, 0x82, true, payload, 1024);
  n += frame(in + n, 0x82, true, payload, 1025);
  assert_int_equal(server_feed(s, in, n, &app, &out), LD_ERR_FRAME_TOO_LARGE);
  assert_int_equal(app.len, 1024);
  assert_memory_equal(out.data, "\x88\x02\x03\xf1", 4); /* 1009 */
  ld_ws_session_free(s);
  /* the default cap against a frame announcing 2^40 bytes */
  s = server_new(0);
  ld_buf_reset(&app);
  ld_buf_reset(&out);
  static const uint8_t huge[] = {0x82, 0xff, 0, 0, 0x01, 0, 0, 0, 0, 0, 1, 2, 3, 4, 'x'};
  assert_int_equal(server_feed(s, huge, sizeof huge, &app, &out), LD_ERR_FRAME_TOO_LARGE);
  assert_int_equal(app.len, 0);
  assert_memory_equal(out.data, "\x88\x02\x03\xf1", 4);
  ld_ws_session_free(s);
  /* a control frame above 125 bytes */
  s = server_new(0);
  ld_buf_reset(&out);
  n = frame(in, 0x89, true, payload, 126);
  assert_int_equal(server_feed(s, in, n, &app, &out), LD_ERR_PROTOCOL);
  ld_ws_session_free(s);
  free(payload);
  free(in);
  ld_buf_clear(&app);
  ld_buf_clear(&out);
}

static void client_refuses_masked_server_frames(void **state) {
  (void)state;
  pair_t p;
  pair_open(&p, 0);
  uint8_t in[32];
  size_t n = frame(in, 0x82, true, "abc", 3);
  assert_int_equal(ld_ws_session_read(p.client, in, n, &p.c_app, &p.out), LD_ERR_PROTOCOL);
  /* the client's close frame is masked */
  assert_int_equal(p.out.data[0], 0x88);
  assert_true(p.out.data[1] & 0x80);
  pair_close(&p);
}

static void client_refuses_bad_answers(void **state) {
  (void)state;
  ld_ws_session_config_t ccfg = {.server = false, .host = "h:1"};
  ld_ws_session_t *c = ld_ws_session_new(&ccfg);
  ld_buf_t out, app;
  ld_buf_init(&out);
  ld_buf_init(&app);
  static const char bad[] = "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n"
                            "Connection: Upgrade\r\nSec-WebSocket-Accept: " RFC_ACCEPT "\r\n\r\n";
  assert_int_equal(ld_ws_session_read(c, (const uint8_t *)bad, strlen(bad), &app, &out),
                   LD_ERR_STATE); /* not started */
  assert_int_equal(ld_ws_session_start(c, &out), 0);
  assert_int_equal(ld_ws_session_read(c, (const uint8_t *)bad, strlen(bad), &app, &out),
                   LD_ERR_HANDSHAKE); /* the key is random, so RFC_ACCEPT is wrong */
  assert_string_equal(ld_ws_session_why(c), "wrong Sec-WebSocket-Accept");
  assert_false(ld_ws_session_is_open(c));
  ld_ws_session_free(c);
  ccfg.host = "bad host";
  assert_null(ld_ws_session_new(&ccfg));
  ld_buf_clear(&out);
  ld_buf_clear(&app);
}

static void server_refuses_bad_requests(void **state) {
  (void)state;
  static const struct {
    const char *text;
    int err;
    const char *status;
  } cases[] = {
      {"GET / HTTP/1.1\r\nHost: h\r\n\r\n", LD_ERR_HANDSHAKE, "HTTP/1.1 400 "},
      {"GET / HTTP/1.1\r\n" HDRS "Sec-WebSocket-Key: " RFC_KEY
       "\r\nSec-WebSocket-Version: 7\r\n\r\n",
       LD_ERR_UNSUPPORTED, "HTTP/1.1 426 "},
      {"\x13/multistream/1.0.0\n", LD_ERR_MALFORMED, "HTTP/1.1 400 "},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    ld_ws_session_t *s = server_new(0);
    ld_buf_t app, out;
    ld_buf_init(&app);
    ld_buf_init(&out);
    int rc =
        ld_ws_session_read(s, (const uint8_t *)cases[i].text, strlen(cases[i].text), &app, &out);
    assert_int_equal(rc, cases[i].err);
    assert_memory_equal(out.data, cases[i].status, 13);
    assert_false(ld_ws_session_is_open(s));
    ld_buf_reset(&out);
    assert_int_equal(ld_ws_session_write(s, (const uint8_t *)"x", 1, &out), LD_ERR_CLOSED);
    assert_int_equal(ld_ws_session_close(s, LD_WS_CLOSE_NORMAL, &out), 0);
    assert_int_equal(out.len, 0);
    ld_ws_session_free(s);
    ld_buf_clear(&app);
    ld_buf_clear(&out);
  }
  /* an endless header block */
  ld_ws_session_t *s = server_new(0);
  ld_buf_t app, out;
  ld_buf_init(&app);
  ld_buf_init(&out);
  static const char start[] = "GET / HTTP/1.1\r\n";
  assert_int_equal(ld_ws_session_read(s, (const uint8_t *)start, strlen(start), &app, &out), 0);
  int rc = 0;
  for (int i = 0; i < 1000 && rc == 0; i++)
    rc = ld_ws_session_read(s, (const uint8_t *)"X-Pad: aaaaaaaaaaaaaaaaaaaa\r\n", 29, &app, &out);
  assert_int_equal(rc, LD_ERR_TOO_LARGE);
  assert_memory_equal(out.data, "HTTP/1.1 431 ", 13);
  ld_ws_session_free(s);
  ld_buf_clear(&app);
  ld_buf_clear(&out);
}

static void local_close_is_sent_once(void **state) {
  (void)state;
  pair_t p;
  pair_open(&p, 0);
  ld_buf_t wire;
  ld_buf_init(&wire);
  assert_int_equal(ld_ws_session_close(p.server, LD_WS_CLOSE_NORMAL, &wire), 0);
  assert_int_equal(wire.len, 4);
  assert_memory_equal(wire.data, "\x88\x02\x03\xe8", 4);
  assert_int_equal(ld_ws_session_close(p.server, LD_WS_CLOSE_NORMAL, &wire), 0);
  assert_int_equal(wire.len, 4);
  assert_int_equal(ld_ws_session_write(p.server, (const uint8_t *)"x", 1, &wire), LD_ERR_CLOSED);
  /* the client sees the close and answers it */
  assert_int_equal(ld_ws_session_read(p.client, wire.data, wire.len, &p.c_app, &p.out),
                   LD_ERR_CLOSED);
  assert_int_equal(ld_ws_session_close_code(p.client), 1000);
  assert_int_equal(p.out.data[0], 0x88);
  ld_buf_clear(&wire);
  pair_close(&p);
}

static void transport_handles_websocket_addresses(void **state) {
  (void)state;
  static const char *yes[] = {
      "/ip4/127.0.0.1/tcp/1/ws",
      "/ip6/::1/tcp/443/wss",
      "/dns4/example.com/tcp/443/wss",
      "/dns4/example.com/tcp/443/tls/ws",
      "/dns/example.com/tcp/8000/ws",
      "/dns6/example.com/tcp/8000/tls/sni/example.com/ws",
      "/ip4/1.2.3.4/tcp/1/ws/p2p/12D3KooWBtg3aaRMjxwedh83aGiUkwSxDwUZkzuJcfaqUmo7R3pq",
  };
  static const char *no[] = {
      "/ip4/127.0.0.1/tcp/1",          "/ip4/127.0.0.1/udp/1/ws",
      "/ip4/127.0.0.1/tcp/1/ws/ws",    "/ip4/127.0.0.1/tcp/1/tls",
      "/ip4/127.0.0.1/tcp/1/tls/http", "/dnsaddr/example.com/tcp/1/ws",
      "/ip4/127.0.0.1/tcp/1/wss/tls",
  };
  for (size_t i = 0; i < sizeof yes / sizeof yes[0]; i++) {
    ld_multiaddr_t a;
    assert_int_equal(ld_multiaddr_parse(&a, yes[i]), 0);
    if (!ld_transport_ws_handles(&a))
      fail_msg("%s should be handled", yes[i]);
  }
  for (size_t i = 0; i < sizeof no / sizeof no[0]; i++) {
    ld_multiaddr_t a;
    assert_int_equal(ld_multiaddr_parse(&a, no[i]), 0);
    if (ld_transport_ws_handles(&a))
      fail_msg("%s should not be handled", no[i]);
  }
}

static void transport_config_is_checked(void **state) {
  (void)state;
  uv_loop_t loop;
  uv_loop_init(&loop);
  ld_ws_config_t cfg;
  ld_ws_config_default(&cfg);
  int err = 1;
  ld_transport_t *t = ld_transport_ws_new(&loop, &cfg, &err);
  assert_non_null(t);
  assert_int_equal(err, 0);
  assert_string_equal(t->ops->name, "ws");
  /* wss listening needs a certificate */
  ld_multiaddr_t a;
  ld_tlistener_t *l = NULL;
  ld_multiaddr_parse(&a, "/ip4/127.0.0.1/tcp/0/wss");
  assert_int_equal(t->ops->listen(t, &a, NULL, NULL, &l), LD_ERR_UNSUPPORTED);
  ld_multiaddr_parse(&a, "/dns4/localhost/tcp/0/ws");
  assert_int_equal(t->ops->listen(t, &a, NULL, NULL, &l), LD_ERR_UNSUPPORTED);
  t->ops->destroy(t);
  cfg.tls_cert_path = "/nonexistent/cert.pem";
  assert_null(ld_transport_ws_new(&loop, &cfg, &err));
  assert_int_equal(err, LD_ERR_INVALID_ARG); /* no key path */
  cfg.tls_key_path = "/nonexistent/key.pem";
  assert_null(ld_transport_ws_new(&loop, &cfg, &err));
  assert_int_equal(err, LD_ERR_IO);
  ld_ws_config_default(&cfg);
  cfg.path = "no-slash";
  assert_null(ld_transport_ws_new(&loop, &cfg, &err));
  assert_int_equal(err, LD_ERR_INVALID_ARG);
  uv_run(&loop, UV_RUN_DEFAULT);
  assert_int_equal(uv_loop_close(&loop), 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(accept_key_matches_rfc_6455),
      cmocka_unit_test(new_keys_are_16_random_bytes),
      cmocka_unit_test(parses_rfc_request),
      cmocka_unit_test(parses_js_ws_request_with_extension_offer),
      cmocka_unit_test(accepts_header_variants),
      cmocka_unit_test(every_prefix_is_truncated),
      cmocka_unit_test(leaves_pipelined_frames),
      cmocka_unit_test(rejects_bad_requests_with_named_errors),
      cmocka_unit_test(nul_byte_is_malformed),
      cmocka_unit_test(caps_header_block_and_lines),
      cmocka_unit_test(parses_rfc_response),
      cmocka_unit_test(rejects_bad_responses_with_named_errors),
      cmocka_unit_test(written_messages_parse),
      cmocka_unit_test(data_flows_both_ways),
      cmocka_unit_test(handshake_and_frames_byte_by_byte),
      cmocka_unit_test(answers_ping_and_joins_fragments),
      cmocka_unit_test(close_frame_is_answered),
      cmocka_unit_test(bad_frames_fail_with_named_errors),
      cmocka_unit_test(oversize_frames_are_refused),
      cmocka_unit_test(client_refuses_masked_server_frames),
      cmocka_unit_test(client_refuses_bad_answers),
      cmocka_unit_test(server_refuses_bad_requests),
      cmocka_unit_test(local_close_is_sent_once),
      cmocka_unit_test(transport_handles_websocket_addresses),
      cmocka_unit_test(transport_config_is_checked),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
