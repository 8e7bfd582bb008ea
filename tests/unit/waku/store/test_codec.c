/* Store v3 codec (digest §6.1, §0.2): hand-derived request and response bytes, nwaku's dialect
 * (direction default, last occurrence wins, skipped fields), the caps. */
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
#include "base/varint.h"
#include "p2p/reqresp.h"
#include "waku/store/codec.h"

/* A request with every field, derived by hand (field by field, tags and varints computed
 * separately from this code): request_id "abc", include_data 1, pubsub /waku/2/rs/0/0, two
 * content topics, time_start 10 (zigzag 20), time_end 1681964442000000000, two hashes (0x11…,
 * 0x22…), cursor 0x33…, pagination_forward 0 written explicitly, limit 50. */
static const char k_request_hex[] = "a601"                             /* frame: 166 bytes */
                                    "0a03616263"                       /* 1: "abc" */
                                    "1001"                             /* 2: include_data 1 */
                                    "520e2f77616b752f322f72732f302f30" /* 10: /waku/2/rs/0/0 */
                                    "5a082f612f312f622f63"             /* 11: /a/1/b/c */
                                    "5a082f782f322f792f7a"             /* 11: /x/2/y/z */
                                    "6014"                             /* 12: zigzag(10) */
                                    "688090fca3f4efc4d72e" /* 13: zigzag(1681964442000000000) */
                                    "a20120"
                                    "11111111111111111111111111111111"
                                    "11111111111111111111111111111111" /* 20 */
                                    "a20120"
                                    "22222222222222222222222222222222"
                                    "22222222222222222222222222222222" /* 20 */
                                    "9a0320"
                                    "33333333333333333333333333333333"
                                    "33333333333333333333333333333333" /* 51 */
                                    "a00300"                           /* 52: backward, explicit */
                                    "a80332";                          /* 53: 50 */

/* A response: request_id "abc", 200 "OK", an entry with message and pubsub topic (hash 0x44…,
 * message {payload 01 02, content topic /a/1/b/c, version 0, timestamp 10, empty meta and proof,
 * ephemeral false} nwaku-style), a hash-only entry (0x55…), cursor 0x55…. */
static const char k_response_hex[] =
    "a501"       /* 165 bytes */
    "0a03616263" /* 1 */
    "50c801"     /* 10: 200 */
    "5a024f4b"   /* 11: OK */
    "a2014e"     /* 20: 78 */
    "0a20"
    "44444444444444444444444444444444"
    "44444444444444444444444444444444"                         /* hash */
    "121a0a02010212082f612f312f622f63180050145a00aa0100f80100" /* message */
    "1a0e2f77616b752f322f72732f302f30"                         /* pubsub */
    "a201220a20"
    "55555555555555555555555555555555"
    "55555555555555555555555555555555" /* 20 */
    "9a0320"
    "55555555555555555555555555555555"
    "55555555555555555555555555555555"; /* 51 */

/* 429 as nwaku sends it. */
static const char k_429_hex[] = "1b0a034e2f4150ad035a11544f4f5f4d414e595f5245515545535453";

static size_t unhex(const char *hex, uint8_t *out, size_t cap) {
  size_t n = 0;
  assert_int_equal(ld_hex_decode(hex, strlen(hex), out, cap, &n), 0);
  return n;
}

/* The body of a frame held in `frame` (asserts it is exactly one frame). */
static const uint8_t *body_of(const uint8_t *frame, size_t len, size_t *n) {
  const uint8_t *body;
  assert_int_equal(ld_reqresp_read_frame(frame, len, SIZE_MAX, &body, n), (int)len);
  return body;
}

static void assert_buf_hex(const ld_buf_t *b, const char *hex) {
  uint8_t want[1024];
  size_t n = unhex(hex, want, sizeof want);
  assert_int_equal(b->len, n);
  assert_memory_equal(b->data, want, n);
}

static void fill(uint8_t *p, uint8_t v, size_t n) {
  memset(p, v, n);
}

/* ---- requests -------------------------------------------------------------------------------- */

static const char *const k_topics[] = {"/a/1/b/c", "/x/2/y/z"};

static void full_query(ld_store_query_t *q, uint8_t hashes[2][LD_WAKU_HASH_LEN]) {
  ld_store_query_init(q);
  fill(hashes[0], 0x11, LD_WAKU_HASH_LEN);
  fill(hashes[1], 0x22, LD_WAKU_HASH_LEN);
  q->request_id = "abc";
  q->include_data = true;
  q->pubsub_topic = "/waku/2/rs/0/0";
  q->content_topics = k_topics;
  q->n_content_topics = 2;
  q->has_time_start = true;
  q->time_start = 10;
  q->has_time_end = true;
  q->time_end = INT64_C(1681964442000000000);
  q->hashes = (const uint8_t(*)[LD_WAKU_HASH_LEN])hashes;
  q->n_hashes = 2;
  q->has_cursor = true;
  fill(q->cursor, 0x33, LD_WAKU_HASH_LEN);
  q->forward = false;
  q->has_limit = true;
  q->limit = 50;
}

static void encodes_request_with_every_field(void **state) {
  (void)state;
  uint8_t hashes[2][LD_WAKU_HASH_LEN];
  ld_store_query_t q;
  full_query(&q, hashes);
  ld_buf_t b;
  ld_buf_init(&b);
  assert_int_equal(ld_store_encode_request(&q, &b), 0);
  assert_buf_hex(&b, k_request_hex);
  ld_buf_clear(&b);
}

static void decodes_request_with_every_field(void **state) {
  (void)state;
  uint8_t frame[512];
  size_t len = unhex(k_request_hex, frame, sizeof frame), n;
  const uint8_t *body = body_of(frame, len, &n);
  ld_store_query_t q;
  ld_store_query_init(&q);
  assert_int_equal(ld_store_decode_request(body, n, &q, NULL), 0);
  memset(frame, 0, sizeof frame); /* the decoded query owns its copies */
  assert_string_equal(q.request_id, "abc");
  assert_true(q.include_data);
  assert_string_equal(q.pubsub_topic, "/waku/2/rs/0/0");
  assert_int_equal(q.n_content_topics, 2);
  assert_string_equal(q.content_topics[0], "/a/1/b/c");
  assert_string_equal(q.content_topics[1], "/x/2/y/z");
  assert_true(q.has_time_start && q.has_time_end);
  assert_int_equal(q.time_start, 10);
  assert_int_equal(q.time_end, INT64_C(1681964442000000000));
  assert_int_equal(q.n_hashes, 2);
  assert_int_equal(q.hashes[0][0], 0x11);
  assert_int_equal(q.hashes[1][31], 0x22);
  assert_true(q.has_cursor);
  assert_int_equal(q.cursor_len, LD_WAKU_HASH_LEN);
  assert_int_equal(q.cursor[17], 0x33);
  assert_true(q.has_forward);
  assert_false(q.forward);
  assert_true(q.has_limit);
  assert_int_equal(q.limit, 50);
  ld_store_query_clear(&q);
  assert_null(q.storage);
}

static void minimal_request_writes_the_flags_nwaku_expects(void **state) {
  (void)state;
  ld_store_query_t q;
  ld_store_query_init(&q); /* no ID, forward, include_data false */
  ld_buf_t b;
  ld_buf_init(&b);
  assert_int_equal(ld_store_encode_request(&q, &b), 0);
  /* request_id "" written, include_data 0 and pagination_forward 1 explicit */
  assert_buf_hex(&b, "070a001000a00301");
  ld_buf_clear(&b);
}

static int decode_hex(const char *hex, ld_store_query_t *q, const char **why) {
  uint8_t body[1024];
  size_t n = unhex(hex, body, sizeof body);
  return ld_store_decode_request(body, n, q, why);
}

static void direction_follows_nwaku(void **state) {
  (void)state;
  ld_store_query_t q;
  ld_store_query_init(&q);
  assert_int_equal(decode_hex("0a00", &q, NULL), 0); /* no field 52: js-waku's "false" */
  assert_false(q.has_forward);
  assert_int_equal(decode_hex("0a00a00300", &q, NULL), 0);
  assert_true(q.has_forward);
  assert_false(q.forward);
  assert_int_equal(decode_hex("0a00a00301", &q, NULL), 0);
  assert_true(q.has_forward);
  assert_true(q.forward);
  ld_store_query_clear(&q);
}

static void scalars_read_as_nwaku_reads_them(void **state) {
  (void)state;
  ld_store_query_t q;
  ld_store_query_init(&q);
  assert_int_equal(decode_hex("0a001002", &q, NULL), 0);
  assert_true(q.include_data);
  /* nwaku reads include_data as a uint32: 2^32 truncates to 0 */
  assert_int_equal(decode_hex("0a00108080808010", &q, NULL), 0);
  assert_false(q.include_data);
  /* negative time: zigzag 1 is -1 */
  assert_int_equal(decode_hex("0a006801", &q, NULL), 0);
  assert_int_equal(q.time_end, -1);
  assert_false(q.has_time_start);
  ld_store_query_clear(&q);
}

static void last_occurrence_wins_and_strays_are_skipped(void **state) {
  (void)state;
  ld_store_query_t q;
  ld_store_query_init(&q);
  /* request_id twice, pubsub twice, unknown field 99 (LEN) and 7 (I32), field 10 as a varint */
  assert_int_equal(decode_hex("0a01610a0162"
                              "52017852027979"
                              "9a06026869"
                              "3d01020304"
                              "5005",
                              &q, NULL),
                   0);
  assert_string_equal(q.request_id, "b");
  assert_string_equal(q.pubsub_topic, "yy");
  ld_store_query_clear(&q);
  /* a pubsub topic sent only with the wrong wire type is absent */
  assert_int_equal(decode_hex("0a00"
                              "5005",
                              &q, NULL),
                   0);
  assert_null(q.pubsub_topic);
  ld_store_query_clear(&q);
}

static void short_cursor_keeps_its_length(void **state) {
  (void)state;
  ld_store_query_t q;
  ld_store_query_init(&q);
  assert_int_equal(decode_hex("0a009a03050102030405", &q, NULL), 0);
  assert_true(q.has_cursor);
  assert_int_equal(q.cursor_len, 5);
  assert_int_equal(q.cursor[4], 5);
  assert_int_equal(q.cursor[5], 0);
  ld_store_query_clear(&q);
}

static void malformed_requests_are_named(void **state) {
  (void)state;
  ld_store_query_t q;
  ld_store_query_init(&q);
  const char *why = NULL;
  assert_int_equal(decode_hex("1001", &q, &why), LD_ERR_MISSING_FIELD);
  assert_string_equal(why, "MissingRequiredField request_id");
  assert_int_equal(decode_hex("", &q, &why), LD_ERR_MISSING_FIELD);
  assert_int_equal(decode_hex("0a05616263", &q, &why), LD_ERR_BAD_PROTOBUF);
  assert_string_equal(why, "MessageIncomplete");
  assert_int_equal(decode_hex("0a00ffffffffffffffffffff01", &q, &why), LD_ERR_BAD_PROTOBUF);
  assert_string_equal(why, "VarintDecode");
  assert_int_equal(decode_hex("0a000b", &q, &why), LD_ERR_BAD_PROTOBUF); /* group */
  assert_string_equal(why, "BadWireType");
  assert_int_equal(decode_hex("0a005a03610062", &q, &why), LD_ERR_BAD_PROTOBUF);
  assert_string_equal(why, "IncorrectBlob content_topics");
  assert_int_equal(decode_hex("0a00a2011f11111111111111111111111111111111111111111111111111111111"
                              "111111",
                              &q, &why),
                   LD_ERR_FIELD_TOO_LONG);
  assert_string_equal(why, "InvalidLengthField message_hashes");
  assert_null(q.storage);
}

/* A body of `n` repeated fields of `field_hex` after an empty request_id. */
static size_t repeated(const char *field_hex, size_t n, uint8_t *out, size_t cap) {
  size_t len = unhex("0a00", out, cap);
  uint8_t one[64];
  size_t f = unhex(field_hex, one, sizeof one);
  for (size_t i = 0; i < n; i++) {
    assert_true(len + f <= cap);
    memcpy(out + len, one, f);
    len += f;
  }
  return len;
}

static void caps_on_hashes_and_topics(void **state) {
  (void)state;
  static uint8_t body[16384];
  const char *hash = "a20120"
                     "abababababababababababababababab"
                     "abababababababababababababababab";
  ld_store_query_t q;
  ld_store_query_init(&q);
  const char *why = NULL;
  size_t n = repeated(hash, LD_STORE_MAX_HASHES, body, sizeof body);
  assert_int_equal(ld_store_decode_request(body, n, &q, &why), 0);
  assert_int_equal(q.n_hashes, LD_STORE_MAX_HASHES);
  assert_int_equal(q.hashes[99][31], 0xab);
  n = repeated(hash, LD_STORE_MAX_HASHES + 1, body, sizeof body);
  assert_int_equal(ld_store_decode_request(body, n, &q, &why), LD_ERR_LIMIT);
  assert_string_equal(why, "InvalidLengthField message_hashes");
  n = repeated("5a03612f62", LD_STORE_MAX_CONTENT_TOPICS, body, sizeof body);
  assert_int_equal(ld_store_decode_request(body, n, &q, &why), 0);
  assert_int_equal(q.n_content_topics, LD_STORE_MAX_CONTENT_TOPICS);
  assert_string_equal(q.content_topics[99], "a/b");
  n = repeated("5a03612f62", LD_STORE_MAX_CONTENT_TOPICS + 1, body, sizeof body);
  assert_int_equal(ld_store_decode_request(body, n, &q, &why), LD_ERR_LIMIT);
  assert_string_equal(why, "InvalidLengthField content_topics");
  ld_store_query_clear(&q);
}

static void caps_on_sizes(void **state) {
  (void)state;
  static uint8_t body[LD_STORE_MAX_REQUEST_BYTES + 1];
  ld_store_query_t q;
  ld_store_query_init(&q);
  const char *why = NULL;
  assert_int_equal(ld_store_decode_request(body, sizeof body, &q, &why), LD_ERR_TOO_LARGE);
  assert_string_equal(why, "MessageTooBig");
  /* request ID of 256 bytes passes, 257 does not */
  body[0] = 0x0a;
  body[1] = 0x80;
  body[2] = 0x02;
  memset(body + 3, 'i', 257);
  assert_int_equal(ld_store_decode_request(body, 3 + 256, &q, &why), 0);
  assert_int_equal(strlen(q.request_id), 256);
  body[1] = 0x81;
  assert_int_equal(ld_store_decode_request(body, 3 + 257, &q, &why), LD_ERR_FIELD_TOO_LONG);
  assert_string_equal(why, "InvalidLengthField request_id");
  ld_store_query_clear(&q);
}

static void encoder_refuses_what_a_server_would(void **state) {
  (void)state;
  static uint8_t hashes[LD_STORE_MAX_HASHES + 1][LD_WAKU_HASH_LEN];
  ld_store_query_t q;
  ld_store_query_init(&q);
  ld_buf_t b;
  ld_buf_init(&b);
  q.hashes = (const uint8_t(*)[LD_WAKU_HASH_LEN])hashes;
  q.n_hashes = LD_STORE_MAX_HASHES + 1;
  assert_int_equal(ld_store_encode_request(&q, &b), LD_ERR_LIMIT);
  q.n_hashes = LD_STORE_MAX_HASHES;
  assert_int_equal(ld_store_encode_request(&q, &b), 0);
  size_t len = b.len;
  const char *const bad[] = {"ok", NULL};
  q.content_topics = bad;
  q.n_content_topics = 2;
  assert_int_equal(ld_store_encode_request(&q, &b), LD_ERR_INVALID_ARG);
  q.content_topics = NULL;
  assert_int_equal(ld_store_encode_request(&q, &b), LD_ERR_INVALID_ARG);
  assert_int_equal(b.len, len); /* nothing appended on failure */
  ld_buf_clear(&b);
}

static void page_sizes(void **state) {
  (void)state;
  assert_int_equal(ld_store_page_size(false, 0), 20);
  assert_int_equal(ld_store_page_size(true, 0), 20);
  assert_int_equal(ld_store_page_size(true, 1), 1);
  assert_int_equal(ld_store_page_size(true, 100), 100);
  assert_int_equal(ld_store_page_size(true, 101), 100);
  assert_int_equal(ld_store_page_size(true, UINT64_MAX), 100);
}

/* ---- responses ------------------------------------------------------------------------------- */

static void response_entries(ld_store_entry_t e[2], uint8_t payload[2]) {
  memset(e, 0, 2 * sizeof *e);
  fill(e[0].hash, 0x44, LD_WAKU_HASH_LEN);
  e[0].pubsub_topic = "/waku/2/rs/0/0";
  ld_waku_message_init(&e[0].message);
  payload[0] = 1;
  payload[1] = 2;
  e[0].message.payload = payload;
  e[0].message.payload_len = 2;
  e[0].message.content_topic = "/a/1/b/c";
  e[0].message.content_topic_len = 8;
  e[0].message.timestamp = 10;
  fill(e[1].hash, 0x55, LD_WAKU_HASH_LEN);
  ld_waku_message_init(&e[1].message);
}

static void encodes_response(void **state) {
  (void)state;
  ld_store_entry_t e[2];
  uint8_t payload[2];
  response_entries(e, payload);
  ld_store_response_t res;
  ld_store_response_init(&res);
  res.request_id = "abc";
  res.status_code = 200;
  res.status_desc = "OK";
  res.entries = e;
  res.n_entries = 2;
  res.has_cursor = true;
  fill(res.cursor, 0x55, LD_WAKU_HASH_LEN);
  ld_buf_t b;
  ld_buf_init(&b);
  assert_int_equal(ld_store_encode_response(&res, &b), 0);
  assert_buf_hex(&b, k_response_hex);
  /* the entries' wire lengths add up to the body minus its other fields */
  size_t other = 5 + 3 + 4 + 35;
  assert_int_equal(ld_store_entry_wire_len(&e[0]) + ld_store_entry_wire_len(&e[1]) + other,
                   b.len - 2);
  ld_buf_reset(&b);
  ld_store_response_init(&res);
  res.request_id = "N/A";
  res.status_code = 429;
  res.status_desc = "TOO_MANY_REQUESTS";
  assert_int_equal(ld_store_encode_response(&res, &b), 0);
  assert_buf_hex(&b, k_429_hex);
  ld_buf_reset(&b);
  ld_store_response_init(&res); /* NULL strings are written empty */
  res.status_code = 400;
  assert_int_equal(ld_store_encode_response(&res, &b), 0);
  assert_buf_hex(&b, "070a005090035a00");
  ld_buf_clear(&b);
}

static void decodes_response(void **state) {
  (void)state;
  uint8_t frame[512];
  size_t len = unhex(k_response_hex, frame, sizeof frame), n;
  const uint8_t *body = body_of(frame, len, &n);
  ld_store_response_t res;
  ld_store_response_init(&res);
  assert_int_equal(ld_store_decode_response(body, n, 0, &res), 0);
  memset(frame, 0, sizeof frame);
  assert_string_equal(res.request_id, "abc");
  assert_int_equal(res.status_code, 200);
  assert_string_equal(res.status_desc, "OK");
  assert_int_equal(res.n_entries, 2);
  assert_int_equal(res.entries[0].hash[0], 0x44);
  assert_string_equal(res.entries[0].pubsub_topic, "/waku/2/rs/0/0");
  assert_int_equal(res.entries[0].message.payload_len, 2);
  assert_int_equal(res.entries[0].message.payload[1], 2);
  assert_memory_equal(res.entries[0].message.content_topic, "/a/1/b/c", 8);
  assert_int_equal(res.entries[0].message.timestamp, 10);
  assert_int_equal(res.entries[1].hash[31], 0x55);
  assert_null(res.entries[1].pubsub_topic);
  assert_true(res.has_cursor);
  assert_int_equal(res.cursor[0], 0x55);
  ld_store_response_clear(&res);
  assert_null(res.storage);
}

/* Appends field `field` as LEN with `data[0..n)`. */
static void pb_len(ld_buf_t *b, uint32_t field, const void *data, size_t n) {
  assert_int_equal(ld_buf_varint(b, ((uint64_t)field << 3) | 2), 0);
  assert_int_equal(ld_buf_lp(b, data, n), 0);
}

/* An entry (field 20) with a hash of `hash_len` bytes (none when 0), a message body and a pubsub
 * topic when given. */
static void pb_entry(ld_buf_t *b, size_t hash_len, const ld_buf_t *msg, const char *pubsub) {
  uint8_t hash[40];
  fill(hash, 0x44, sizeof hash);
  ld_buf_t e;
  ld_buf_init(&e);
  if (hash_len > 0)
    pb_len(&e, 1, hash, hash_len);
  if (msg != NULL)
    pb_len(&e, 2, msg->data, msg->len);
  if (pubsub != NULL)
    pb_len(&e, 3, pubsub, strlen(pubsub));
  pb_len(b, 20, e.data, e.len);
  ld_buf_clear(&e);
}

static int decode_buf(const ld_buf_t *b, ld_store_response_t *res) {
  return ld_store_decode_response(b->data, b->len, 0, res);
}

static void response_is_read_leniently_but_entries_need_hashes(void **state) {
  (void)state;
  ld_store_response_t res;
  ld_store_response_init(&res);
  ld_buf_t b, msg;
  ld_buf_init(&b);
  ld_buf_init(&msg);
  /* nothing at all: status 0, empty strings */
  assert_int_equal(decode_buf(&b, &res), 0);
  assert_int_equal(res.status_code, 0);
  assert_string_equal(res.request_id, "");
  assert_string_equal(res.status_desc, "");
  assert_int_equal(res.n_entries, 0);
  /* a message without a pubsub topic, and a pubsub topic without a message: hash only */
  pb_len(&msg, 2, "t", 1);
  pb_entry(&b, 32, &msg, NULL);
  pb_entry(&b, 32, NULL, "/waku/2/rs/0/0");
  pb_entry(&b, 32, &msg, "/waku/2/rs/0/0");
  assert_int_equal(decode_buf(&b, &res), 0);
  assert_int_equal(res.n_entries, 3);
  assert_null(res.entries[0].pubsub_topic);
  assert_null(res.entries[1].pubsub_topic);
  assert_string_equal(res.entries[2].pubsub_topic, "/waku/2/rs/0/0");
  assert_int_equal(res.entries[2].message.payload_len, 0); /* lenient: absent payload */
  assert_int_equal(res.entries[2].message.content_topic_len, 1);
  /* an entry without a hash, with a 31-byte hash */
  ld_buf_reset(&b);
  pb_entry(&b, 0, NULL, "x");
  assert_int_equal(decode_buf(&b, &res), LD_ERR_MISSING_FIELD);
  assert_null(res.storage);
  ld_buf_reset(&b);
  pb_entry(&b, 31, NULL, NULL);
  assert_int_equal(decode_buf(&b, &res), LD_ERR_FIELD_TOO_LONG);
  /* a 31-byte cursor */
  ld_buf_reset(&b);
  uint8_t cursor[31] = {1};
  pb_len(&b, 51, cursor, sizeof cursor);
  assert_int_equal(decode_buf(&b, &res), LD_ERR_FIELD_TOO_LONG);
  /* a message that does not decode; a message with a 65-byte meta */
  ld_buf_reset(&b);
  ld_buf_reset(&msg);
  assert_int_equal(ld_buf_append(&msg, "\x08\xff", 2), 0);
  pb_entry(&b, 32, &msg, "p");
  assert_int_equal(decode_buf(&b, &res), LD_ERR_BAD_PROTOBUF);
  ld_buf_reset(&b);
  ld_buf_reset(&msg);
  uint8_t meta[65] = {0};
  pb_len(&msg, 11, meta, sizeof meta);
  pb_entry(&b, 32, &msg, "p");
  assert_int_equal(decode_buf(&b, &res), LD_ERR_FIELD_TOO_LONG);
  assert_null(res.storage);
  ld_buf_clear(&b);
  ld_buf_clear(&msg);
}

static void too_many_entries(void **state) {
  (void)state;
  static uint8_t body[LD_STORE_MAX_RESPONSE_ENTRIES * 40];
  size_t len = 0;
  for (size_t i = 0; i <= LD_STORE_MAX_RESPONSE_ENTRIES; i++) {
    body[len++] = 0xa2;
    body[len++] = 0x01;
    body[len++] = 34;
    body[len++] = 0x0a;
    body[len++] = 32;
    memset(body + len, (int)i, 32);
    len += 32;
  }
  ld_store_response_t res;
  ld_store_response_init(&res);
  assert_int_equal(ld_store_decode_response(body, len - 37, 0, &res), 0);
  assert_int_equal(res.n_entries, LD_STORE_MAX_RESPONSE_ENTRIES);
  assert_int_equal(res.entries[99].hash[0], 99);
  assert_int_equal(ld_store_decode_response(body, len, 0, &res), LD_ERR_LIMIT);
  ld_store_response_clear(&res);
}

static void full_page_roundtrips(void **state) {
  (void)state;
  static ld_store_entry_t e[LD_STORE_MAX_PAGE_SIZE];
  static uint8_t payload[LD_STORE_MAX_PAGE_SIZE][100];
  static uint8_t meta[64];
  for (size_t i = 0; i < LD_STORE_MAX_PAGE_SIZE; i++) {
    memset(&e[i], 0, sizeof e[i]);
    fill(e[i].hash, (uint8_t)i, LD_WAKU_HASH_LEN);
    ld_waku_message_init(&e[i].message);
    if (i % 3 == 2)
      continue; /* hash only */
    e[i].pubsub_topic = i % 2 ? "/waku/2/rs/1/7" : "/waku/2/rs/0/0";
    fill(payload[i], (uint8_t)(i * 7), sizeof payload[i]);
    e[i].message.payload = payload[i];
    e[i].message.payload_len = i;
    e[i].message.content_topic = "/app/1/chat/proto";
    e[i].message.content_topic_len = 17;
    e[i].message.timestamp = INT64_C(1700000000000000000) + (int64_t)i;
    e[i].message.meta = meta;
    e[i].message.meta_len = i % 65;
    e[i].message.version = (uint32_t)(i % 2);
  }
  ld_store_response_t res, out;
  ld_store_response_init(&res);
  ld_store_response_init(&out);
  res.request_id = "r";
  res.status_code = 200;
  res.status_desc = "OK";
  res.entries = e;
  res.n_entries = LD_STORE_MAX_PAGE_SIZE;
  ld_buf_t b;
  ld_buf_init(&b);
  assert_int_equal(ld_store_encode_response(&res, &b), 0);
  size_t n;
  const uint8_t *body = body_of(b.data, b.len, &n);
  assert_int_equal(ld_store_decode_response(body, n, 0, &out), 0);
  assert_int_equal(out.n_entries, LD_STORE_MAX_PAGE_SIZE);
  for (size_t i = 0; i < LD_STORE_MAX_PAGE_SIZE; i++) {
    assert_memory_equal(out.entries[i].hash, e[i].hash, LD_WAKU_HASH_LEN);
    if (e[i].pubsub_topic == NULL) {
      assert_null(out.entries[i].pubsub_topic);
      continue;
    }
    assert_string_equal(out.entries[i].pubsub_topic, e[i].pubsub_topic);
    assert_true(ld_waku_message_equal(&out.entries[i].message, &e[i].message));
  }
  assert_false(out.has_cursor);
  ld_store_response_clear(&out);
  ld_buf_clear(&b);
}

static void status_names(void **state) {
  (void)state;
  assert_string_equal(ld_store_status_name(200), "OK");
  assert_string_equal(ld_store_status_name(300), "BAD_RESPONSE");
  assert_string_equal(ld_store_status_name(400), "BAD_REQUEST");
  assert_string_equal(ld_store_status_name(429), "TOO_MANY_REQUESTS");
  assert_string_equal(ld_store_status_name(503), "SERVICE_UNAVAILABLE");
  assert_string_equal(ld_store_status_name(504), "PEER_DIAL_FAILURE");
  assert_string_equal(ld_store_status_name(0), "UNKNOWN");
  assert_string_equal(ld_store_status_name(201), "UNKNOWN");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(encodes_request_with_every_field),
      cmocka_unit_test(decodes_request_with_every_field),
      cmocka_unit_test(minimal_request_writes_the_flags_nwaku_expects),
      cmocka_unit_test(direction_follows_nwaku),
      cmocka_unit_test(scalars_read_as_nwaku_reads_them),
      cmocka_unit_test(last_occurrence_wins_and_strays_are_skipped),
      cmocka_unit_test(short_cursor_keeps_its_length),
      cmocka_unit_test(malformed_requests_are_named),
      cmocka_unit_test(caps_on_hashes_and_topics),
      cmocka_unit_test(caps_on_sizes),
      cmocka_unit_test(encoder_refuses_what_a_server_would),
      cmocka_unit_test(page_sizes),
      cmocka_unit_test(encodes_response),
      cmocka_unit_test(decodes_response),
      cmocka_unit_test(response_is_read_leniently_but_entries_need_hashes),
      cmocka_unit_test(too_many_entries),
      cmocka_unit_test(full_page_roundtrips),
      cmocka_unit_test(status_names),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
