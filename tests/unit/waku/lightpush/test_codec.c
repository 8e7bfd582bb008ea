/* Waku lightpush codec: v3 request/response and legacy PushRPC byte vectors written field by field
 * from the schemas (waku.md §4, tags computed as number << 3 | wire type), nwaku's required fields
 * and error texts, minprotobuf's reading rules (last occurrence wins, wire-type mismatches and
 * unknown fields skipped), the caps, and the status code table. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "base/buf.h"
#include "base/error.h"
#include "base/hex.h"
#include "p2p/reqresp.h"
#include "waku/lightpush/codec.h"

/* ---- vectors -------------------------------------------------------------------------------- */

/* "/waku/2/rs/0/0", 14 bytes */
#define TOPIC_HEX "2f77616b752f322f72732f302f30"
/* WakuMessage {payload "hi", content_topic "/a/1/b/c", the rest zero/empty}, nwaku style: every
 * field written. 4 + 10 + 2 + 2 + 2 + 3 + 3 = 26 bytes (0x1a). */
#define MSG_HEX                                                                                    \
  "0a026869"             /* 1 payload: "hi" */                                                     \
  "12082f612f312f622f63" /* 2 content_topic: "/a/1/b/c" */                                         \
  "1800"                 /* 3 version 0 */                                                         \
  "5000"                 /* 10 timestamp 0 */                                                      \
  "5a00"                 /* 11 meta: empty */                                                      \
  "aa0100"               /* 21 rate_limit_proof: empty */                                          \
  "f80100"               /* 31 ephemeral false */
/* LightPushRequest {request_id "abc", pubsub_topic TOPIC, message MSG}: 5 + 17 + 29 = 51. */
#define REQ_HEX                                                                                    \
  "0a03616263"       /* 1 request_id "abc" */                                                      \
  "a2010e" TOPIC_HEX /* 20 (tag a2 01) pubsub_topic, 14 bytes */                                   \
  "aa011a" MSG_HEX   /* 21 (tag aa 01) message, 26 bytes */
/* The same request without pubsub topic: 5 + 29 = 34. */
#define REQ_AUTO_HEX "0a03616263aa011a" MSG_HEX
/* The digest's nwaku-style example message (77 bytes = 0x4d): payload 01020304 "TEST" 05060708,
 * /waku/2/default-content/proto, version 0, ts 1681964442000000000, meta "super-secret". */
#define EXAMPLE_MSG_HEX                                                                            \
  "0a0c010203045445535405060708121d2f77616b752f322f64656661756c742d636f6e74656e742f70726f746f18"   \
  "00508090fca3f4efc4d72e5a0c73757065722d736563726574aa0100f80100"
/* Its deterministic hash on /waku/2/default-waku/proto (RFC 14 vector "meta 12 B"). */
#define EXAMPLE_HASH_HEX "64cce733fed134e83da02b02c6f689814872b1a0ac97ea56b76095c3c72bfe05"

/* LightPushResponse {"abc", 200, relay_peer_count 3}: 5 + 3 + 2 = 10. */
#define RESP_OK_HEX                                                                                \
  "0a03616263" /* 1 request_id */                                                                  \
  "50c801"     /* 10 status_code 200 (varint c8 01) */                                             \
  "6003"       /* 12 relay_peer_count 3 */
/* LightPushResponse {"N/A", 400, desc "x"}. */
#define RESP_BAD_HEX                                                                               \
  "0a034e2f41" /* 1 request_id "N/A" */                                                            \
  "509003"     /* 10 status_code 400 (varint 90 03) */                                             \
  "5a0178"     /* 11 status_desc "x" */

/* PushRPC {request_id "r1", request {TOPIC, MSG}}: PushRequest = 16 + 28 = 44 (0x2c). */
#define RPC_REQ_HEX                                                                                \
  "0a027231"       /* 1 request_id "r1" */                                                         \
  "122c"           /* 2 request, 44 bytes: */                                                      \
  "0a0e" TOPIC_HEX /*   1 pubsub_topic */                                                          \
  "121a" MSG_HEX   /*   2 message */
/* PushRPC {request_id "r1", response {is_success true, info "OK"}}. */
#define RPC_RESP_OK_HEX "0a0272311a06080112024f4b"
/* PushRPC {request_id "", response {is_success false}}: false written explicitly as 08 00. */
#define RPC_RESP_FAIL_HEX "0a001a020800"

static size_t unhex(const char *text, uint8_t *out, size_t cap) {
  size_t n = 0;
  assert_int_equal(ld_hex_decode(text, strlen(text), out, cap, &n), 0);
  return n;
}

/* A heap copy of the bytes of `text` (hex); free it. */
static uint8_t *bytes_of(const char *text, size_t *len) {
  size_t cap = strlen(text) / 2 + 1;
  uint8_t *p = malloc(cap);
  assert_non_null(p);
  *len = unhex(text, p, cap);
  return p;
}

/* Asserts that `frame` is the one-byte length prefix and the body `hex`. */
static void assert_frame(const ld_buf_t *frame, const char *hex) {
  size_t n;
  uint8_t *body = bytes_of(hex, &n);
  assert_true(n < 128);
  assert_int_equal(frame->len, n + 1);
  assert_int_equal(frame->data[0], n);
  assert_memory_equal(frame->data + 1, body, n);
  free(body);
}

static ld_waku_message_t small_message(void) {
  ld_waku_message_t m;
  ld_waku_message_init(&m);
  m.payload = (const uint8_t *)"hi";
  m.payload_len = 2;
  m.content_topic = "/a/1/b/c";
  m.content_topic_len = 8;
  return m;
}

static int decode_req(const char *hex, ld_lightpush_request_t *req, char *why, size_t cap) {
  size_t n;
  uint8_t *body = bytes_of(hex, &n);
  int rc = ld_lightpush_request_decode(body, n, req, why, cap);
  free(body);
  return rc;
}

static int decode_resp(const char *hex, ld_lightpush_response_t *resp, char *why, size_t cap) {
  size_t n;
  uint8_t *body = bytes_of(hex, &n);
  int rc = ld_lightpush_response_decode(body, n, resp, why, cap);
  free(body);
  return rc;
}

static int decode_rpc(const char *hex, ld_lightpush_rpc_t *rpc, char *why, size_t cap) {
  size_t n;
  uint8_t *body = bytes_of(hex, &n);
  int rc = ld_lightpush_rpc_decode(body, n, rpc, why, cap);
  free(body);
  return rc;
}

/* Decoding `hex` as a request fails with `err` and nwaku's text `text`. */
static void assert_req_fails(const char *hex, int err, const char *text) {
  ld_lightpush_request_t req;
  ld_lightpush_request_init(&req);
  char why[128] = "";
  assert_int_equal(decode_req(hex, &req, why, sizeof why), err);
  assert_string_equal(why, text);
  assert_null(req.request_id);
  assert_null(req.storage);
  assert_int_equal(req.message.payload_len, 0);
}

/* ---- v3 request ----------------------------------------------------------------------------- */

static void encodes_request_vector(void **state) {
  (void)state;
  ld_lightpush_request_t req;
  ld_lightpush_request_init(&req);
  req.request_id = "abc";
  req.request_id_len = 3;
  req.pubsub_topic = "/waku/2/rs/0/0";
  req.pubsub_topic_len = 14;
  req.message = small_message();
  ld_buf_t out;
  ld_buf_init(&out);
  assert_int_equal(ld_lightpush_request_encode(&req, 0, &out), 0);
  assert_frame(&out, REQ_HEX);
  /* Without a topic, field 20 is left out. */
  req.pubsub_topic = NULL;
  req.pubsub_topic_len = 0;
  ld_buf_reset(&out);
  assert_int_equal(ld_lightpush_request_encode(&req, 0, &out), 0);
  assert_frame(&out, REQ_AUTO_HEX);
  /* An empty request ID is still written (nwaku requires the field). */
  req.request_id = NULL;
  req.request_id_len = 0;
  ld_buf_reset(&out);
  assert_int_equal(ld_lightpush_request_encode(&req, 0, &out), 0);
  assert_frame(&out, "0a00aa011a" MSG_HEX);
  ld_buf_clear(&out);
}

static void decodes_request_vector(void **state) {
  (void)state;
  ld_lightpush_request_t req;
  ld_lightpush_request_init(&req);
  char why[64];
  assert_int_equal(decode_req(REQ_HEX, &req, why, sizeof why), 0);
  assert_int_equal(req.request_id_len, 3);
  assert_string_equal(req.request_id, "abc");
  assert_int_equal(req.pubsub_topic_len, 14);
  assert_string_equal(req.pubsub_topic, "/waku/2/rs/0/0");
  ld_waku_message_t expect = small_message();
  assert_true(ld_waku_message_equal(&req.message, &expect));
  /* Absent pubsub topic: NULL (autosharding), not "". */
  assert_int_equal(decode_req(REQ_AUTO_HEX, &req, why, sizeof why), 0);
  assert_null(req.pubsub_topic);
  assert_string_equal(req.request_id, "abc");
  /* An empty pubsub topic is present and empty. */
  assert_int_equal(decode_req("0a03616263a20100aa011a" MSG_HEX, &req, why, sizeof why), 0);
  assert_non_null(req.pubsub_topic);
  assert_int_equal(req.pubsub_topic_len, 0);
  assert_string_equal(req.pubsub_topic, "");
  ld_lightpush_request_clear(&req);
}

static void decoded_example_message_has_the_published_hash(void **state) {
  (void)state;
  ld_lightpush_request_t req;
  ld_lightpush_request_init(&req);
  assert_int_equal(decode_req("0a0131aa014d" EXAMPLE_MSG_HEX, &req, NULL, 0), 0);
  uint8_t hash[LD_WAKU_HASH_LEN], expect[LD_WAKU_HASH_LEN];
  unhex(EXAMPLE_HASH_HEX, expect, sizeof expect);
  assert_int_equal(ld_waku_message_hash("/waku/2/default-waku/proto", &req.message, hash), 0);
  assert_memory_equal(hash, expect, sizeof hash);
  assert_int_equal(req.message.timestamp, 1681964442000000000LL);
  ld_lightpush_request_clear(&req);
}

static void request_follows_minprotobuf_reading_rules(void **state) {
  (void)state;
  ld_lightpush_request_t req;
  ld_lightpush_request_init(&req);
  /* request_id twice: the last wins; field 10 (reserved request type) and field 99 skipped; a
   * varint under field 1 (wrong wire type) skipped. */
  assert_int_equal(decode_req("0a01780805"
                              "0a03616263"
                              "5007"
                              "98060a"
                              "aa011a" MSG_HEX,
                              &req, NULL, 0),
                   0);
  assert_string_equal(req.request_id, "abc");
  assert_null(req.pubsub_topic);
  /* A request ID holding a NUL keeps its length. */
  assert_int_equal(decode_req("0a03610062aa011a" MSG_HEX, &req, NULL, 0), 0);
  assert_int_equal(req.request_id_len, 3);
  assert_memory_equal(req.request_id, "a\0b", 3);
  ld_lightpush_request_clear(&req);
}

static void request_errors_use_nwaku_texts(void **state) {
  (void)state;
  assert_req_fails("aa011a" MSG_HEX, LD_ERR_MISSING_FIELD, "MissingRequiredField request_id");
  /* A varint field 1 does not count as the request ID. */
  assert_req_fails("0805aa011a" MSG_HEX, LD_ERR_MISSING_FIELD, "MissingRequiredField request_id");
  assert_req_fails("0a03616263", LD_ERR_MISSING_FIELD, "MissingRequiredField message");
  assert_req_fails("", LD_ERR_MISSING_FIELD, "MissingRequiredField request_id");
  /* Message without payload (js-waku omits an empty one; nwaku requires it). */
  assert_req_fails("0a03616263aa010a12082f612f312f622f63", LD_ERR_MISSING_FIELD,
                   "MissingRequiredField payload");
  assert_req_fails("0a03616263aa01040a026869", LD_ERR_MISSING_FIELD,
                   "MissingRequiredField content_topic");
  /* meta of 65 bytes: 4 + 3 + 2 + 65 = 74 (0x4a). */
  char meta65[2 * 65 + 1];
  memset(meta65, '0', sizeof meta65 - 1);
  meta65[sizeof meta65 - 1] = '\0';
  char hex[512];
  snprintf(hex, sizeof hex, "0a03616263aa014a0a0268691201615a41%s", meta65);
  assert_req_fails(hex, LD_ERR_FIELD_TOO_LONG, "InvalidLengthField meta");
  /* Malformed: truncated length, overlong varint, reserved and group wire types. */
  assert_req_fails("0a05616263", LD_ERR_BAD_PROTOBUF, "MessageIncomplete");
  assert_req_fails("0a03616263aa01ffffffffffffffffffffff01", LD_ERR_BAD_PROTOBUF, "VarintDecode");
  assert_req_fails("0a036162630f00", LD_ERR_BAD_PROTOBUF, "BadWireType");
  assert_req_fails("0a036162630b", LD_ERR_BAD_PROTOBUF, "BadWireType");
  assert_req_fails("0a0361626309010203", LD_ERR_BAD_PROTOBUF, "VarintDecode");
  /* Malformed inner message. */
  assert_req_fails("0a03616263aa01020a05", LD_ERR_BAD_PROTOBUF, "MessageIncomplete");
  /* Our caps and the C-string rule for topics. */
  assert_req_fails("0a03616263a20103610062aa011a" MSG_HEX, LD_ERR_BAD_ENCODING,
                   "IncorrectBlob pubsub_topic");
}

static void request_caps(void **state) {
  (void)state;
  ld_buf_t body;
  ld_buf_init(&body);
  uint8_t big[LD_LIGHTPUSH_MAX_TOPIC_LEN + 1];
  memset(big, 'a', sizeof big);
  /* A request ID at the cap decodes, one byte more does not. */
  for (size_t extra = 0; extra <= 1; extra++) {
    ld_buf_reset(&body);
    assert_int_equal(ld_buf_u8(&body, 0x0a), 0);
    assert_int_equal(ld_buf_lp(&body, big, LD_LIGHTPUSH_MAX_REQUEST_ID_LEN + extra), 0);
    uint8_t msg[64];
    size_t n = unhex(MSG_HEX, msg, sizeof msg);
    assert_int_equal(ld_buf_append(&body, "\xaa\x01", 2), 0);
    assert_int_equal(ld_buf_lp(&body, msg, n), 0);
    ld_lightpush_request_t req;
    ld_lightpush_request_init(&req);
    char why[64] = "";
    int rc = ld_lightpush_request_decode(body.data, body.len, &req, why, sizeof why);
    if (extra == 0) {
      assert_int_equal(rc, 0);
      assert_int_equal(req.request_id_len, LD_LIGHTPUSH_MAX_REQUEST_ID_LEN);
    } else {
      assert_int_equal(rc, LD_ERR_FIELD_TOO_LONG);
      assert_string_equal(why, "InvalidLengthField request_id");
    }
    ld_lightpush_request_clear(&req);
  }
  /* Pubsub topic over the cap. */
  ld_buf_reset(&body);
  assert_int_equal(ld_buf_append(&body, "\x0a\x01x\xa2\x01", 5), 0);
  assert_int_equal(ld_buf_lp(&body, big, LD_LIGHTPUSH_MAX_TOPIC_LEN + 1), 0);
  ld_lightpush_request_t req;
  ld_lightpush_request_init(&req);
  char why[64] = "";
  assert_int_equal(ld_lightpush_request_decode(body.data, body.len, &req, why, sizeof why),
                   LD_ERR_FIELD_TOO_LONG);
  assert_string_equal(why, "InvalidLengthField pubsub_topic");
  ld_buf_clear(&body);
  /* Frame caps: the message cap plus nwaku's 64 KiB protocol overhead. */
  assert_int_equal(ld_lightpush_max_frame(0), 150 * 1024 + 64 * 1024);
  assert_int_equal(ld_lightpush_max_frame(1024), 1024 + 64 * 1024);
}

static void oversized_message_decodes_for_the_relay_to_refuse(void **state) {
  (void)state;
  static uint8_t payload[200 * 1024];
  memset(payload, 7, sizeof payload);
  ld_lightpush_request_t req;
  ld_lightpush_request_init(&req);
  req.request_id = "big";
  req.request_id_len = 3;
  req.message = small_message();
  req.message.payload = payload;
  req.message.payload_len = sizeof payload;
  ld_buf_t out;
  ld_buf_init(&out);
  /* The encoder applies the cap it is given. */
  assert_int_equal(ld_lightpush_request_encode(&req, 0, &out), LD_ERR_TOO_LARGE);
  assert_int_equal(out.len, 0);
  assert_int_equal(ld_lightpush_request_encode(&req, SIZE_MAX, &out), 0);
  const uint8_t *body;
  size_t n;
  assert_int_equal(ld_reqresp_read_frame(out.data, out.len, SIZE_MAX, &body, &n), (int)out.len);
  assert_true(n > sizeof payload);
  ld_lightpush_request_t got;
  ld_lightpush_request_init(&got);
  assert_int_equal(ld_lightpush_request_decode(body, n, &got, NULL, 0), 0);
  assert_int_equal(got.message.payload_len, sizeof payload);
  ld_lightpush_request_clear(&got);
  ld_buf_clear(&out);
}

/* ---- v3 response ---------------------------------------------------------------------------- */

static void response_vectors(void **state) {
  (void)state;
  ld_lightpush_response_t r;
  ld_lightpush_response_init(&r);
  r.request_id = "abc";
  r.request_id_len = 3;
  r.status_code = 200;
  r.has_relay_peer_count = true;
  r.relay_peer_count = 3;
  ld_buf_t out;
  ld_buf_init(&out);
  assert_int_equal(ld_lightpush_response_encode(&r, &out), 0);
  assert_frame(&out, RESP_OK_HEX);
  ld_lightpush_response_init(&r);
  r.request_id = "N/A";
  r.request_id_len = 3;
  r.status_code = 400;
  r.status_desc = "x";
  r.status_desc_len = 1;
  ld_buf_reset(&out);
  assert_int_equal(ld_lightpush_response_encode(&r, &out), 0);
  assert_frame(&out, RESP_BAD_HEX);
  /* status_code 0 is still written. */
  ld_lightpush_response_init(&r);
  ld_buf_reset(&out);
  assert_int_equal(ld_lightpush_response_encode(&r, &out), 0);
  assert_frame(&out, "0a005000");
  ld_buf_clear(&out);

  ld_lightpush_response_t got;
  ld_lightpush_response_init(&got);
  assert_int_equal(decode_resp(RESP_OK_HEX, &got, NULL, 0), 0);
  assert_string_equal(got.request_id, "abc");
  assert_int_equal(got.status_code, 200);
  assert_null(got.status_desc);
  assert_true(got.has_relay_peer_count);
  assert_int_equal(got.relay_peer_count, 3);
  assert_int_equal(decode_resp(RESP_BAD_HEX, &got, NULL, 0), 0);
  assert_string_equal(got.request_id, "N/A");
  assert_int_equal(got.status_code, 400);
  assert_string_equal(got.status_desc, "x");
  assert_false(got.has_relay_peer_count);
  ld_lightpush_response_clear(&got);
}

static void response_errors(void **state) {
  (void)state;
  ld_lightpush_response_t got;
  ld_lightpush_response_init(&got);
  char why[64];
  assert_int_equal(decode_resp("50c801", &got, why, sizeof why), LD_ERR_MISSING_FIELD);
  assert_string_equal(why, "MissingRequiredField request_id");
  assert_int_equal(decode_resp("0a00", &got, why, sizeof why), LD_ERR_MISSING_FIELD);
  assert_string_equal(why, "MissingRequiredField status_code");
  /* 2^32 + 200 does not fit the uint32 field (it must not read as 200). */
  assert_int_equal(decode_resp("0a0050c881808010", &got, why, sizeof why), LD_ERR_BAD_PROTOBUF);
  assert_string_equal(why, "VarintDecode");
  assert_int_equal(decode_resp("0a0050c8", &got, why, sizeof why), LD_ERR_BAD_PROTOBUF);
  assert_string_equal(why, "VarintDecode");
  assert_null(got.request_id);
  ld_lightpush_response_clear(&got);
}

/* ---- legacy --------------------------------------------------------------------------------- */

static void legacy_vectors(void **state) {
  (void)state;
  ld_lightpush_rpc_t rpc;
  ld_lightpush_rpc_init(&rpc);
  rpc.request_id = "r1";
  rpc.request_id_len = 2;
  rpc.has_request = true;
  rpc.pubsub_topic = "/waku/2/rs/0/0";
  rpc.pubsub_topic_len = 14;
  rpc.message = small_message();
  ld_buf_t out;
  ld_buf_init(&out);
  assert_int_equal(ld_lightpush_rpc_encode(&rpc, 0, &out), 0);
  assert_frame(&out, RPC_REQ_HEX);
  ld_lightpush_rpc_init(&rpc);
  rpc.request_id = "r1";
  rpc.request_id_len = 2;
  rpc.has_response = true;
  rpc.is_success = true;
  rpc.info = "OK";
  rpc.info_len = 2;
  ld_buf_reset(&out);
  assert_int_equal(ld_lightpush_rpc_encode(&rpc, 0, &out), 0);
  assert_frame(&out, RPC_RESP_OK_HEX);
  ld_lightpush_rpc_init(&rpc);
  rpc.request_id = "";
  rpc.has_response = true;
  ld_buf_reset(&out);
  assert_int_equal(ld_lightpush_rpc_encode(&rpc, 0, &out), 0);
  assert_frame(&out, RPC_RESP_FAIL_HEX);
  ld_buf_clear(&out);

  ld_lightpush_rpc_t got;
  ld_lightpush_rpc_init(&got);
  assert_int_equal(decode_rpc(RPC_REQ_HEX, &got, NULL, 0), 0);
  assert_string_equal(got.request_id, "r1");
  assert_true(got.has_request);
  assert_false(got.has_response);
  assert_string_equal(got.pubsub_topic, "/waku/2/rs/0/0");
  ld_waku_message_t expect = small_message();
  assert_true(ld_waku_message_equal(&got.message, &expect));
  assert_int_equal(decode_rpc(RPC_RESP_OK_HEX, &got, NULL, 0), 0);
  assert_false(got.has_request);
  assert_true(got.has_response);
  assert_true(got.is_success);
  assert_string_equal(got.info, "OK");
  assert_int_equal(decode_rpc(RPC_RESP_FAIL_HEX, &got, NULL, 0), 0);
  assert_string_equal(got.request_id, "");
  assert_false(got.is_success);
  assert_null(got.info);
  ld_lightpush_rpc_clear(&got);
}

static void legacy_decoding_rules(void **state) {
  (void)state;
  ld_lightpush_rpc_t got;
  ld_lightpush_rpc_init(&got);
  char why[64];
  /* No request, no response: decodes (the service answers empty_request_body_failure). */
  assert_int_equal(decode_rpc("0a027231", &got, why, sizeof why), 0);
  assert_false(got.has_request);
  assert_false(got.has_response);
  assert_int_equal(decode_rpc("1200", &got, why, sizeof why), LD_ERR_MISSING_FIELD);
  assert_string_equal(why, "MissingRequiredField request_id");
  assert_int_equal(decode_rpc("0a00121c121a" MSG_HEX, &got, why, sizeof why), LD_ERR_MISSING_FIELD);
  assert_string_equal(why, "MissingRequiredField pubsub_topic");
  assert_int_equal(decode_rpc("0a0012020a00", &got, why, sizeof why), LD_ERR_MISSING_FIELD);
  assert_string_equal(why, "MissingRequiredField message");
  assert_int_equal(decode_rpc("0a001a0412024f4b", &got, why, sizeof why), LD_ERR_MISSING_FIELD);
  assert_string_equal(why, "MissingRequiredField is_success");
  /* Any nonzero is_success is true; js-waku's extra fields 10/11/12 are skipped. */
  assert_int_equal(decode_rpc("0a001a09080250645a01786001", &got, why, sizeof why), 0);
  assert_true(got.is_success);
  assert_null(got.info);
  assert_int_equal(decode_rpc("0a001a0408011203", &got, why, sizeof why), LD_ERR_BAD_PROTOBUF);
  assert_string_equal(why, "MessageIncomplete");
  ld_lightpush_rpc_clear(&got);
}

/* ---- status codes --------------------------------------------------------------------------- */

static void status_code_table(void **state) {
  (void)state;
  assert_string_equal(ld_lightpush_code_name(200), "SUCCESS");
  assert_string_equal(ld_lightpush_code_name(420), "INVALID_MESSAGE");
  assert_string_equal(ld_lightpush_code_name(503), "SERVICE_NOT_AVAILABLE");
  assert_string_equal(ld_lightpush_code_name(505), "NO_PEERS_TO_RELAY");
  assert_string_equal(ld_lightpush_code_name(201), "UNKNOWN");
  assert_int_equal(ld_lightpush_code_index(200), 0);
  assert_int_equal(ld_lightpush_code_index(505), LD_LIGHTPUSH_N_CODES - 1);
  assert_int_equal(ld_lightpush_code_index(0), -1);
  for (int i = 1; i < LD_LIGHTPUSH_N_CODES; i++)
    assert_true(ld_lightpush_codes[i] > ld_lightpush_codes[i - 1]);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(encodes_request_vector),
      cmocka_unit_test(decodes_request_vector),
      cmocka_unit_test(decoded_example_message_has_the_published_hash),
      cmocka_unit_test(request_follows_minprotobuf_reading_rules),
      cmocka_unit_test(request_errors_use_nwaku_texts),
      cmocka_unit_test(request_caps),
      cmocka_unit_test(oversized_message_decodes_for_the_relay_to_refuse),
      cmocka_unit_test(response_vectors),
      cmocka_unit_test(response_errors),
      cmocka_unit_test(legacy_vectors),
      cmocka_unit_test(legacy_decoding_rules),
      cmocka_unit_test(status_code_table),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
