/* Waku filter v2 codec: the digest's derived byte vectors (nwaku's encoder), further vectors
 * derived the same way (ping, unsubscribe-all, error and rate-limit answers, MessagePush of the
 * §1.4 message), nwaku's decoding dialect (absent type = ping, last occurrence wins, mismatched
 * wire types skipped, required fields) and malformed bodies. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "base/buf.h"
#include "base/error.h"
#include "base/hex.h"
#include "p2p/reqresp.h"
#include "waku/filter/codec.h"

/* waku.md §5 [derived]: SUBSCRIBE id "abc", /waku/2/rs/1/3, /toychat/2/huilong/proto. */
#define SUBSCRIBE_HEX                                                                              \
  "0a036162631001520e2f77616b752f322f72732f312f335a182f746f79636861742f322f6875696c6f6e672f70726f" \
  "746f"
/* waku.md §5 [derived]: the success response (200, "OK"). */
#define OK_RESPONSE_HEX "0a0361626350c8015a024f4b"
/* Derived with nwaku's write rules: request_id and type are always written. */
#define PING_HEX "0a036162631000"
#define UNSUBSCRIBE_ALL_HEX "0a036162631003"
#define NOT_FOUND_HEX                                                                              \
  "0a036162635094035a244e4f545f464f554e443a207065657220686173206e6f20737562736372697074696f6e73"
#define RATE_LIMITED_HEX                                                                           \
  "0a034e2f4150ad035a2f66696c74657220726571756573742072656a6563746564206475652072617465206c696d69" \
  "74206578636565646564"
/* waku.md §1.4 nwaku-style message (77 bytes). */
#define MESSAGE_HEX                                                                                \
  "0a0c010203045445535405060708121d2f77616b752f322f64656661756c742d636f6e74656e742f70726f746f1800" \
  "508090fca3f4efc4d72e5a0c73757065722d736563726574aa0100f80100"
/* MessagePush{waku_message = MESSAGE, pubsub_topic = "/waku/2/rs/1/3"}. */
#define PUSH_HEX "0a4d" MESSAGE_HEX "120e2f77616b752f322f72732f312f33"

#define PUBSUB "/waku/2/rs/1/3"
#define CONTENT "/toychat/2/huilong/proto"

static size_t unhex(const char *text, uint8_t *out, size_t cap) {
  size_t n = 0;
  assert_int_equal(ld_hex_decode(text, strlen(text), out, cap, &n), 0);
  return n;
}

static ld_filter_str_t str(const char *s) {
  return (ld_filter_str_t){s, strlen(s)};
}

static void assert_str(ld_filter_str_t s, const char *want) {
  assert_int_equal(s.len, strlen(want));
  assert_memory_equal(s.data, want, s.len);
}

/* Checks that `b` is one frame whose body is the bytes spelled by `hex`. */
static void assert_frame_hex(const ld_buf_t *b, const char *hex) {
  uint8_t want[512];
  size_t n = unhex(hex, want, sizeof want);
  const uint8_t *body;
  size_t blen;
  assert_int_equal(ld_reqresp_read_frame(b->data, b->len, 1u << 20, &body, &blen), (int)b->len);
  assert_int_equal(blen, n);
  assert_memory_equal(body, want, n);
}

static void std_message(ld_waku_message_t *m) {
  static const uint8_t payload[] = {1, 2, 3, 4, 'T', 'E', 'S', 'T', 5, 6, 7, 8};
  ld_waku_message_init(m);
  m->payload = payload;
  m->payload_len = sizeof payload;
  m->content_topic = "/waku/2/default-content/proto";
  m->content_topic_len = strlen(m->content_topic);
  m->timestamp = 1681964442000000000LL;
  m->meta = (const uint8_t *)"super-secret";
  m->meta_len = 12;
}

/* ---- encoding ------------------------------------------------------------------------------- */

static void encodes_digest_subscribe(void **state) {
  (void)state;
  ld_filter_request_t req;
  memset(&req, 0, sizeof req);
  req.request_id = str("abc");
  req.type = LD_FILTER_SUBSCRIBE;
  req.has_pubsub_topic = true;
  req.pubsub_topic = str(PUBSUB);
  req.n_content_topics = 1;
  req.content_topics[0] = str(CONTENT);
  ld_buf_t b;
  ld_buf_init(&b);
  assert_int_equal(ld_filter_request_encode(&req, &b), 0);
  assert_int_equal(b.data[0], 49); /* length prefix */
  assert_frame_hex(&b, SUBSCRIBE_HEX);
  ld_buf_clear(&b);
}

static void encodes_ping_and_unsubscribe_all_with_type(void **state) {
  (void)state;
  ld_filter_str_t id = str("abc");
  ld_buf_t b;
  ld_buf_init(&b);
  assert_int_equal(
      ld_filter_request_encode_topics(&id, LD_FILTER_SUBSCRIBER_PING, NULL, NULL, 0, &b), 0);
  assert_frame_hex(&b, PING_HEX);
  ld_buf_reset(&b);
  assert_int_equal(
      ld_filter_request_encode_topics(&id, LD_FILTER_UNSUBSCRIBE_ALL, NULL, NULL, 0, &b), 0);
  assert_frame_hex(&b, UNSUBSCRIBE_ALL_HEX);
  ld_buf_clear(&b);
}

static void encodes_responses(void **state) {
  (void)state;
  ld_filter_str_t id = str("abc");
  ld_buf_t b;
  ld_buf_init(&b);
  assert_int_equal(ld_filter_response_encode(&id, 200, "OK", &b), 0);
  assert_frame_hex(&b, OK_RESPONSE_HEX);
  ld_buf_reset(&b);
  assert_int_equal(ld_filter_response_encode(&id, 404, "NOT_FOUND: peer has no subscriptions", &b),
                   0);
  assert_frame_hex(&b, NOT_FOUND_HEX);
  ld_buf_reset(&b);
  ld_filter_str_t na = str(LD_FILTER_RATE_LIMITED_REQUEST_ID);
  assert_int_equal(ld_filter_response_encode(&na, LD_FILTER_STATUS_TOO_MANY_REQUESTS,
                                             LD_FILTER_RATE_LIMITED_DESC, &b),
                   0);
  assert_frame_hex(&b, RATE_LIMITED_HEX);
  ld_buf_reset(&b);
  assert_int_equal(ld_filter_response_encode(&id, 200, NULL, &b), 0); /* no desc: no field 11 */
  assert_frame_hex(&b, "0a0361626350c801");
  ld_buf_clear(&b);
}

static void encodes_push_of_the_example_message(void **state) {
  (void)state;
  ld_waku_message_t m;
  std_message(&m);
  ld_buf_t b;
  ld_buf_init(&b);
  assert_int_equal(ld_filter_push_encode(PUBSUB, strlen(PUBSUB), &m, &b), 0);
  assert_int_equal(b.data[0], 95);
  assert_frame_hex(&b, PUSH_HEX);
  ld_buf_clear(&b);
}

static void status_descriptions(void **state) {
  (void)state;
  ld_filter_status_t st;
  ld_filter_status_set(&st, 200, NULL);
  assert_string_equal(st.desc, "OK");
  ld_filter_status_set(&st, 400, "exceeds maximum content topics: %d", 100);
  assert_string_equal(st.desc, "BAD_REQUEST: exceeds maximum content topics: 100");
  ld_filter_status_set(&st, 503, "node has reached maximum number of subscriptions: %d", 1000);
  assert_string_equal(
      st.desc, "SERVICE_UNAVAILABLE: node has reached maximum number of subscriptions: 1000");
  ld_filter_status_set(&st, 404, "%s", "peer has no subscriptions");
  assert_string_equal(st.desc, "NOT_FOUND: peer has no subscriptions");
  ld_filter_status_set(&st, 999, "ignored");
  assert_string_equal(st.desc, "UNKNOWN");
  assert_int_equal(st.code, 999);
  char long_cause[300];
  memset(long_cause, 'x', sizeof long_cause - 1);
  long_cause[sizeof long_cause - 1] = '\0';
  ld_filter_status_set(&st, 300, "%s", long_cause);
  assert_int_equal(strlen(st.desc), LD_FILTER_STATUS_DESC_MAX - 1);
  assert_string_equal(ld_filter_status_kind(504), "PEER_DIAL_FAILURE");
  assert_string_equal(ld_filter_status_kind(429), "TOO_MANY_REQUESTS");
  assert_string_equal(ld_filter_request_type_name(3), "UNSUBSCRIBE_ALL");
  assert_string_equal(ld_filter_request_type_name(4), "UNKNOWN");
}

/* ---- decoding ------------------------------------------------------------------------------- */

static void decodes_digest_subscribe(void **state) {
  (void)state;
  uint8_t body[128];
  size_t n = unhex(SUBSCRIBE_HEX, body, sizeof body);
  ld_filter_request_t req;
  assert_int_equal(ld_filter_request_decode(body, n, &req), 0);
  assert_str(req.request_id, "abc");
  assert_int_equal(req.type, LD_FILTER_SUBSCRIBE);
  assert_true(req.has_pubsub_topic);
  assert_str(req.pubsub_topic, PUBSUB);
  assert_int_equal(req.n_content_topics, 1);
  assert_str(req.content_topics[0], CONTENT);
}

static void absent_type_is_ping(void **state) {
  (void)state;
  uint8_t body[16];
  size_t n = unhex("0a03616263", body, sizeof body); /* js-waku's ping: type 0 omitted */
  ld_filter_request_t req;
  assert_int_equal(ld_filter_request_decode(body, n, &req), 0);
  assert_int_equal(req.type, LD_FILTER_SUBSCRIBER_PING);
  assert_false(req.has_pubsub_topic);
  assert_int_equal(req.n_content_topics, 0);
}

static void request_dialect(void **state) {
  (void)state;
  uint8_t body[128];
  /* id "a" then id "bc" (last wins); type sent as LEN (skipped) then as varint 2; unknown field
   * 7 (varint), field 12 (fixed64); topic 10 twice; empty content topic; non-minimal varint
   * for the type (0x82 0x00 = 2) */
  size_t n = unhex("0a0161"
                   "1202010a"
                   "0a026263"
                   "108200"
                   "3801"
                   "610000000000000000"
                   "520178"
                   "520179"
                   "5a00",
                   body, sizeof body);
  ld_filter_request_t req;
  int rc = ld_filter_request_decode(body, n, &req);
  assert_int_equal(rc, 0);
  assert_str(req.request_id, "bc");
  assert_int_equal(req.type, LD_FILTER_UNSUBSCRIBE);
  assert_str(req.pubsub_topic, "y");
  assert_int_equal(req.n_content_topics, 1);
  assert_int_equal(req.content_topics[0].len, 0);
  assert_non_null(req.content_topics[0].data);
}

static void request_errors(void **state) {
  (void)state;
  uint8_t body[64];
  ld_filter_request_t req;
  size_t n = unhex("1001", body, sizeof body); /* no request_id */
  assert_int_equal(ld_filter_request_decode(body, n, &req), LD_ERR_MISSING_FIELD);
  n = unhex("0861", body, sizeof body); /* request_id as a varint: skipped, so missing */
  assert_int_equal(ld_filter_request_decode(body, n, &req), LD_ERR_MISSING_FIELD);
  n = unhex("0a036162631004", body, sizeof body); /* type 4 */
  assert_int_equal(ld_filter_request_decode(body, n, &req), LD_ERR_MALFORMED);
  n = unhex("0a0361626310ffffffff1f", body, sizeof body); /* type 2^32 - 1 */
  assert_int_equal(ld_filter_request_decode(body, n, &req), LD_ERR_MALFORMED);
  n = unhex("0a056162", body, sizeof body); /* LEN past the end */
  assert_int_equal(ld_filter_request_decode(body, n, &req), LD_ERR_BAD_PROTOBUF);
}

static void request_group_and_bad_tags(void **state) {
  (void)state;
  uint8_t body[64];
  ld_filter_request_t req;
  size_t n = unhex("0a0361626313", body, sizeof body); /* start group (wire type 3) */
  assert_int_equal(ld_filter_request_decode(body, n, &req), LD_ERR_BAD_PROTOBUF);
  n = unhex("0a0361626307", body, sizeof body); /* field 0 */
  assert_int_equal(ld_filter_request_decode(body, n, &req), LD_ERR_BAD_PROTOBUF);
  n = unhex("0a03616263ffffffffffffffffffff01", body, sizeof body); /* 11-byte varint tag */
  assert_int_equal(ld_filter_request_decode(body, n, &req), LD_ERR_BAD_PROTOBUF);
  n = unhex("0a0361626310", body, sizeof body); /* truncated varint */
  assert_int_equal(ld_filter_request_decode(body, n, &req), LD_ERR_BAD_PROTOBUF);
  assert_int_equal(ld_filter_request_decode(NULL, 0, &req), LD_ERR_MISSING_FIELD);
}

static void many_topics_counted_first_kept(void **state) {
  (void)state;
  ld_filter_str_t topics[150];
  char names[150][8];
  for (int i = 0; i < 150; i++) {
    snprintf(names[i], sizeof names[i], "/t/%d", i);
    topics[i] = str(names[i]);
  }
  ld_filter_str_t id = str("x"), ps = str(PUBSUB);
  ld_buf_t b;
  ld_buf_init(&b);
  assert_int_equal(ld_filter_request_encode_topics(&id, LD_FILTER_SUBSCRIBE, &ps, topics, 150, &b),
                   0);
  const uint8_t *body;
  size_t blen;
  assert_true(ld_reqresp_read_frame(b.data, b.len, 1u << 20, &body, &blen) > 0);
  ld_filter_request_t req;
  assert_int_equal(ld_filter_request_decode(body, blen, &req), 0);
  assert_int_equal(req.n_content_topics, 150);
  assert_str(req.content_topics[0], "/t/0");
  assert_str(req.content_topics[LD_FILTER_MAX_CONTENT_TOPICS - 1], "/t/99");
  /* the struct form re-encodes only what it keeps */
  ld_buf_reset(&b);
  assert_int_equal(ld_filter_request_encode(&req, &b), 0);
  assert_true(ld_reqresp_read_frame(b.data, b.len, 1u << 20, &body, &blen) > 0);
  ld_filter_request_t again;
  assert_int_equal(ld_filter_request_decode(body, blen, &again), 0);
  assert_int_equal(again.n_content_topics, LD_FILTER_MAX_CONTENT_TOPICS);
  ld_buf_clear(&b);
}

static void decodes_responses(void **state) {
  (void)state;
  uint8_t body[128];
  ld_filter_response_t r;
  size_t n = unhex(OK_RESPONSE_HEX, body, sizeof body);
  assert_int_equal(ld_filter_response_decode(body, n, &r), 0);
  assert_str(r.request_id, "abc");
  assert_int_equal(r.status_code, 200);
  assert_true(r.has_status_desc);
  assert_str(r.status_desc, "OK");
  n = unhex(RATE_LIMITED_HEX, body, sizeof body);
  assert_int_equal(ld_filter_response_decode(body, n, &r), 0);
  assert_str(r.request_id, "N/A");
  assert_int_equal(r.status_code, 429);
  n = unhex("50c801", body, sizeof body); /* no request_id, no desc: lenient */
  assert_int_equal(ld_filter_response_decode(body, n, &r), 0);
  assert_int_equal(r.request_id.len, 0);
  assert_false(r.has_status_desc);
  n = unhex("0a03616263", body, sizeof body); /* no status */
  assert_int_equal(ld_filter_response_decode(body, n, &r), LD_ERR_MISSING_FIELD);
  n = unhex("0a0361626350ffffffff7f", body, sizeof body); /* status over 32 bits */
  assert_int_equal(ld_filter_response_decode(body, n, &r), LD_ERR_BAD_PROTOBUF);
}

static void decodes_push(void **state) {
  (void)state;
  uint8_t body[256];
  size_t n = unhex(PUSH_HEX, body, sizeof body);
  ld_filter_push_frame_t f;
  assert_int_equal(ld_filter_push_decode(body, n, &f), 0);
  assert_str(f.pubsub_topic, PUBSUB);
  assert_int_equal(f.message_len, 77);
  ld_waku_message_t m, want;
  ld_waku_message_init(&m);
  std_message(&want);
  assert_int_equal(ld_waku_message_decode(f.message, f.message_len, 0, 0, &m), 0);
  assert_true(ld_waku_message_equal(&m, &want));
  ld_waku_message_clear(&m);
  /* either field missing */
  n = unhex("120e2f77616b752f322f72732f312f33", body, sizeof body);
  assert_int_equal(ld_filter_push_decode(body, n, &f), LD_ERR_MISSING_FIELD);
  n = unhex("0a00", body, sizeof body);
  assert_int_equal(ld_filter_push_decode(body, n, &f), LD_ERR_MISSING_FIELD);
  n = unhex("0a001200", body, sizeof body); /* both present, both empty */
  assert_int_equal(ld_filter_push_decode(body, n, &f), 0);
  assert_int_equal(f.message_len, 0);
  assert_int_equal(f.pubsub_topic.len, 0);
  n = unhex("0a021200", body, sizeof body); /* field 1 claims 2 bytes, only "12 00" left */
  assert_int_equal(ld_filter_push_decode(body, n, &f), LD_ERR_MISSING_FIELD);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(encodes_digest_subscribe),
      cmocka_unit_test(encodes_ping_and_unsubscribe_all_with_type),
      cmocka_unit_test(encodes_responses),
      cmocka_unit_test(encodes_push_of_the_example_message),
      cmocka_unit_test(status_descriptions),
      cmocka_unit_test(decodes_digest_subscribe),
      cmocka_unit_test(absent_type_is_ping),
      cmocka_unit_test(request_dialect),
      cmocka_unit_test(request_errors),
      cmocka_unit_test(request_group_and_bad_tags),
      cmocka_unit_test(many_topics_counted_first_kept),
      cmocka_unit_test(decodes_responses),
      cmocka_unit_test(decodes_push),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
