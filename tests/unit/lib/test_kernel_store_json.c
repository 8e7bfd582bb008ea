/* waku_store_query's JSON: the jsonQuery object (required keys, types, int64 as number or
 * decimal string, hex hashes, caps, error texts) and the reply rendering (key order, byte fields
 * as integer arrays, absent optional values left out, invalid UTF-8 replaced). */
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
#include "lib/kernel_store_json.h"
#include "waku/store/codec.h"

#define H1 "0x0101010101010101010101010101010101010101010101010101010101010101"
#define H2 "0xabababababababababababababababababababababababababababababababab"

static int parse(const char *json, ld_kernel_store_query_t *kq, char *err, size_t cap) {
  return ld_kernel_store_query_parse(json, strlen(json), kq, err, cap);
}

static void expect_error(const char *json, int code, const char *text) {
  ld_kernel_store_query_t kq;
  char err[256] = "";
  assert_int_equal(parse(json, &kq, err, sizeof err), code);
  assert_string_equal(err, text);
  assert_null(kq.request_id);
  assert_null(kq.content_topics);
  assert_null(kq.hashes);
}

static void a_full_query_fills_every_field(void **state) {
  (void)state;
  const char *json =
      "{\"requestId\":\"r-1\",\"includeData\":true,\"pubsubTopic\":\"/waku/2/rs/1/0\","
      "\"contentTopics\":[\"/a/1/x/proto\",\"/a/1/y/proto\"],"
      "\"timeStart\":\"1700000000000000000\",\"timeEnd\":1700000001000000000,"
      "\"messageHashes\":[\"" H1 "\",\"" H2 "\"],\"paginationCursor\":\"" H2 "\","
      "\"paginationForward\":false,\"paginationLimit\":50,\"unknown\":[1,2]}";
  ld_kernel_store_query_t kq;
  char err[256] = "";
  assert_int_equal(parse(json, &kq, err, sizeof err), 0);
  const ld_store_query_t *q = &kq.q;
  assert_string_equal(q->request_id, "r-1");
  assert_true(q->include_data);
  assert_string_equal(q->pubsub_topic, "/waku/2/rs/1/0");
  assert_int_equal(q->n_content_topics, 2);
  assert_string_equal(q->content_topics[0], "/a/1/x/proto");
  assert_string_equal(q->content_topics[1], "/a/1/y/proto");
  assert_true(q->has_time_start && q->has_time_end);
  assert_true(q->time_start == 1700000000000000000LL);
  assert_true(q->time_end == 1700000001000000000LL);
  assert_int_equal(q->n_hashes, 2);
  assert_int_equal(q->hashes[0][0], 0x01);
  assert_int_equal(q->hashes[1][31], 0xab);
  assert_true(q->has_cursor);
  assert_int_equal(q->cursor_len, LD_WAKU_HASH_LEN);
  assert_int_equal(q->cursor[0], 0xab);
  assert_false(q->forward);
  assert_true(q->has_forward);
  assert_true(q->has_limit);
  assert_int_equal(q->limit, 50);
  ld_kernel_store_query_clear(&kq);
  assert_null(kq.request_id);
}

static void a_minimal_query_leaves_the_optional_fields_unset(void **state) {
  (void)state;
  ld_kernel_store_query_t kq;
  const char *json = "{\"requestId\":\"\",\"includeData\":false,\"paginationForward\":true,"
                     "\"pubsubTopic\":null,\"timeStart\":null,\"paginationCursor\":null}";
  assert_int_equal(parse(json, &kq, NULL, 0), 0);
  assert_null(kq.q.request_id); /* the client generates one */
  assert_false(kq.q.include_data);
  assert_true(kq.q.forward);
  assert_null(kq.q.pubsub_topic);
  assert_int_equal(kq.q.n_content_topics, 0);
  assert_false(kq.q.has_time_start);
  assert_false(kq.q.has_time_end);
  assert_int_equal(kq.q.n_hashes, 0);
  assert_false(kq.q.has_cursor);
  assert_false(kq.q.has_limit);
  ld_kernel_store_query_clear(&kq);
}

static void required_keys_are_named_when_missing(void **state) {
  (void)state;
  expect_error("{\"includeData\":true,\"paginationForward\":true}", LD_ERR_MALFORMED,
               "key not found: requestId");
  expect_error("{\"requestId\":\"x\",\"paginationForward\":true}", LD_ERR_MALFORMED,
               "key not found: includeData");
  expect_error("{\"requestId\":\"x\",\"includeData\":true}", LD_ERR_MALFORMED,
               "key not found: paginationForward");
  expect_error("{\"requestId\":null,\"includeData\":true,\"paginationForward\":true}",
               LD_ERR_MALFORMED, "key not found: requestId");
}

static void values_of_the_wrong_type_are_refused(void **state) {
  (void)state;
  expect_error("{\"requestId\":7,\"includeData\":true,\"paginationForward\":true}",
               LD_ERR_MALFORMED, "requestId must be a string");
  expect_error("{\"requestId\":\"x\",\"includeData\":\"true\",\"paginationForward\":true}",
               LD_ERR_MALFORMED, "includeData must be a bool");
  expect_error("{\"requestId\":\"x\",\"includeData\":true,\"paginationForward\":1}",
               LD_ERR_MALFORMED, "paginationForward must be a bool");
  expect_error("{\"requestId\":\"x\",\"includeData\":true,\"paginationForward\":true,"
               "\"pubsubTopic\":3}",
               LD_ERR_MALFORMED, "pubsubTopic must be a string");
  expect_error("{\"requestId\":\"x\",\"includeData\":true,\"paginationForward\":true,"
               "\"contentTopics\":\"/a/1/b/c\"}",
               LD_ERR_MALFORMED, "contentTopics must be an array of strings");
  expect_error("{\"requestId\":\"x\",\"includeData\":true,\"paginationForward\":true,"
               "\"contentTopics\":[\"/a/1/b/c\",5]}",
               LD_ERR_MALFORMED, "contentTopics must be an array of strings");
  expect_error("{\"requestId\":\"x\",\"includeData\":true,\"paginationForward\":true,"
               "\"paginationLimit\":-1}",
               LD_ERR_MALFORMED, "paginationLimit must be a non-negative integer");
  expect_error("{\"requestId\":\"x\",\"includeData\":true,\"paginationForward\":true,"
               "\"paginationLimit\":\"5\"}",
               LD_ERR_MALFORMED, "paginationLimit must be a non-negative integer");
}

static void times_take_integers_and_decimal_strings(void **state) {
  (void)state;
  ld_kernel_store_query_t kq;
  const char *ok = "{\"requestId\":\"x\",\"includeData\":true,\"paginationForward\":true,"
                   "\"timeStart\":\"-5\",\"timeEnd\":\"+9223372036854775807\"}";
  assert_int_equal(parse(ok, &kq, NULL, 0), 0);
  assert_true(kq.q.time_start == -5);
  assert_true(kq.q.time_end == INT64_MAX);
  ld_kernel_store_query_clear(&kq);
  const char *bad[] = {"\"12a\"", "\"\"", "\" 12\"",  "\"9223372036854775808\"",
                       "1.5",     "true", "\"0x10\"", "\"-\""};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    char json[256];
    snprintf(json, sizeof json,
             "{\"requestId\":\"x\",\"includeData\":true,\"paginationForward\":true,"
             "\"timeStart\":%s}",
             bad[i]);
    expect_error(json, LD_ERR_MALFORMED, "Invalid int64 value in `timeStart`");
  }
  expect_error("{\"requestId\":\"x\",\"includeData\":true,\"paginationForward\":true,"
               "\"timeEnd\":\"soon\"}",
               LD_ERR_MALFORMED, "Invalid int64 value in `timeEnd`");
}

static void hashes_must_be_32_bytes_of_hex(void **state) {
  (void)state;
  expect_error("{\"requestId\":\"x\",\"includeData\":true,\"paginationForward\":true,"
               "\"messageHashes\":[\"" H1 "\",\"0x1234\"]}",
               LD_ERR_BAD_ENCODING,
               "Failed converting message hash hex string to bytes: expected 0x and 64 hex "
               "digits");
  expect_error("{\"requestId\":\"x\",\"includeData\":true,\"paginationForward\":true,"
               "\"messageHashes\":[1]}",
               LD_ERR_BAD_ENCODING,
               "Failed converting message hash hex string to bytes: expected 0x and 64 hex "
               "digits");
  expect_error("{\"requestId\":\"x\",\"includeData\":true,\"paginationForward\":true,"
               "\"paginationCursor\":\"0xzz\"}",
               LD_ERR_BAD_ENCODING,
               "Failed converting paginationCursor hex string to bytes: expected 0x and 64 hex "
               "digits");
  /* without the 0x prefix the digits are still read */
  ld_kernel_store_query_t kq;
  const char *json = "{\"requestId\":\"x\",\"includeData\":true,\"paginationForward\":true,"
                     "\"paginationCursor\":\"" H1 "\"}";
  char bare[512];
  snprintf(bare, sizeof bare, "%s", json);
  char *p = strstr(bare, "\"0x01");
  memmove(p + 1, p + 3, strlen(p + 3) + 1);
  assert_int_equal(parse(bare, &kq, NULL, 0), 0);
  assert_true(kq.q.has_cursor);
  assert_int_equal(kq.q.cursor[31], 0x01);
  ld_kernel_store_query_clear(&kq);
}

static void malformed_and_oversized_input_is_refused(void **state) {
  (void)state;
  ld_kernel_store_query_t kq;
  char err[256] = "";
  assert_int_equal(parse("{\"requestId\":", &kq, err, sizeof err), LD_ERR_MALFORMED);
  assert_non_null(strstr(err, "(line 1,"));
  expect_error("[1,2]", LD_ERR_MALFORMED, "expected a JSON object");
  assert_int_equal(ld_kernel_store_query_parse(NULL, 0, &kq, err, sizeof err), LD_ERR_MALFORMED);
  size_t big = LD_KERNEL_STORE_MAX_QUERY_JSON + 1;
  char *huge = malloc(big);
  memset(huge, ' ', big);
  assert_int_equal(ld_kernel_store_query_parse(huge, big, &kq, err, sizeof err), LD_ERR_TOO_LARGE);
  free(huge);
  /* one topic more than the cap */
  ld_buf_t b;
  ld_buf_init(&b);
  const char *head = "{\"requestId\":\"x\",\"includeData\":true,\"paginationForward\":true,"
                     "\"contentTopics\":[";
  ld_buf_append(&b, head, strlen(head));
  for (int i = 0; i <= LD_STORE_MAX_CONTENT_TOPICS; i++)
    ld_buf_append(&b, i == 0 ? "\"/a/1/b/c\"" : ",\"/a/1/b/c\"", i == 0 ? 10 : 11);
  ld_buf_append(&b, "]}", 2);
  assert_int_equal(ld_kernel_store_query_parse((const char *)b.data, b.len, &kq, err, sizeof err),
                   LD_ERR_LIMIT);
  assert_string_equal(err, "more than 100 contentTopics");
  ld_buf_clear(&b);
  /* a request ID over the cap */
  char id[LD_STORE_MAX_REQUEST_ID_LEN + 2];
  memset(id, 'i', sizeof id - 1);
  id[sizeof id - 1] = '\0';
  char json[LD_STORE_MAX_REQUEST_ID_LEN + 128];
  snprintf(json, sizeof json,
           "{\"requestId\":\"%s\",\"includeData\":true,"
           "\"paginationForward\":true}",
           id);
  assert_int_equal(parse(json, &kq, err, sizeof err), LD_ERR_LIMIT);
}

static void a_parsed_query_encodes_as_a_store_request(void **state) {
  (void)state;
  const char *json =
      "{\"requestId\":\"abc\",\"includeData\":true,\"pubsubTopic\":\"/waku/2/rs/0/1\","
      "\"contentTopics\":[\"/a/1/b/c\"],\"timeStart\":1,\"timeEnd\":\"2\","
      "\"messageHashes\":[\"" H1 "\"],\"paginationForward\":true,"
      "\"paginationLimit\":5}";
  ld_kernel_store_query_t kq;
  assert_int_equal(parse(json, &kq, NULL, 0), 0);
  ld_buf_t b;
  ld_buf_init(&b);
  assert_int_equal(ld_store_encode_request(&kq.q, &b), 0);
  assert_true(b.len > 1);
  ld_store_query_t back;
  ld_store_query_init(&back);
  /* skip the one-byte length prefix of this short frame */
  assert_int_equal(ld_store_decode_request(b.data + 1, b.len - 1, &back, NULL), 0);
  assert_string_equal(back.request_id, "abc");
  assert_true(back.include_data);
  assert_string_equal(back.pubsub_topic, "/waku/2/rs/0/1");
  assert_int_equal(back.n_content_topics, 1);
  assert_true(back.time_start == 1 && back.time_end == 2);
  assert_int_equal(back.n_hashes, 1);
  assert_true(back.forward);
  assert_int_equal(back.limit, 5);
  ld_store_query_clear(&back);
  ld_buf_clear(&b);
  ld_kernel_store_query_clear(&kq);
}

/* ---- rendering ---- */

static void a_reply_renders_entries_in_nwaku_shape(void **state) {
  (void)state;
  static const uint8_t payload[] = {1, 2, 255};
  static const uint8_t meta[] = {7};
  ld_store_entry_t entries[2];
  memset(entries, 0, sizeof entries);
  memset(entries[0].hash, 0x01, LD_WAKU_HASH_LEN);
  entries[0].pubsub_topic = "/waku/2/rs/0/0";
  ld_waku_message_init(&entries[0].message);
  entries[0].message.payload = payload;
  entries[0].message.payload_len = sizeof payload;
  entries[0].message.content_topic = "/a/1/b/proto";
  entries[0].message.content_topic_len = strlen("/a/1/b/proto");
  entries[0].message.meta = meta;
  entries[0].message.meta_len = sizeof meta;
  entries[0].message.version = 1;
  entries[0].message.timestamp = 1700000000000000001LL;
  entries[0].message.ephemeral = false;
  memset(entries[1].hash, 0xab, LD_WAKU_HASH_LEN); /* hash only */
  ld_store_response_t res;
  ld_store_response_init(&res);
  res.request_id = "q\"1";
  res.status_code = 200;
  res.status_desc = "OK";
  res.entries = entries;
  res.n_entries = 2;
  res.has_cursor = true;
  memset(res.cursor, 0xab, LD_WAKU_HASH_LEN);
  char *text = ld_kernel_store_reply_json(&res);
  assert_non_null(text);
  assert_string_equal(text,
                      "{\"requestId\":\"q\\\"1\",\"statusCode\":200,\"statusDesc\":\"OK\","
                      "\"messages\":[{\"messageHash\":\"" H1 "\",\"message\":{\"payload\":"
                      "[1,2,255],\"contentTopic\":\"/a/1/b/proto\",\"meta\":[7],\"version\":1,"
                      "\"timestamp\":1700000000000000001,\"ephemeral\":false,\"proof\":[]},"
                      "\"pubsubTopic\":\"/waku/2/rs/0/0\"},{\"messageHash\":\"" H2 "\"}],"
                      "\"paginationCursor\":\"" H2 "\"}");
  free(text);
}

static void an_empty_reply_has_no_cursor(void **state) {
  (void)state;
  ld_store_response_t res;
  ld_store_response_init(&res);
  res.status_code = 400;
  char *text = ld_kernel_store_reply_json(&res);
  assert_string_equal(
      text, "{\"requestId\":\"\",\"statusCode\":400,\"statusDesc\":\"\",\"messages\":[]}");
  free(text);
}

static void invalid_utf8_is_replaced(void **state) {
  (void)state;
  ld_store_entry_t e;
  memset(&e, 0, sizeof e);
  e.pubsub_topic = "/waku/2/rs/0/0";
  ld_waku_message_init(&e.message);
  e.message.content_topic = "/a/\xff/b\xc3";
  e.message.content_topic_len = 7;
  e.message.ephemeral = true;
  ld_store_response_t res;
  ld_store_response_init(&res);
  res.request_id = "r";
  res.status_desc = "OK";
  res.status_code = 200;
  res.entries = &e;
  res.n_entries = 1;
  char *text = ld_kernel_store_reply_json(&res);
  assert_non_null(text);
  assert_non_null(strstr(text, "\"contentTopic\":\"/a/\xef\xbf\xbd/b\xef\xbf\xbd\""));
  assert_non_null(strstr(text, "\"payload\":[],"));
  assert_non_null(strstr(text, "\"ephemeral\":true,"));
  free(text);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(a_full_query_fills_every_field),
      cmocka_unit_test(a_minimal_query_leaves_the_optional_fields_unset),
      cmocka_unit_test(required_keys_are_named_when_missing),
      cmocka_unit_test(values_of_the_wrong_type_are_refused),
      cmocka_unit_test(times_take_integers_and_decimal_strings),
      cmocka_unit_test(hashes_must_be_32_bytes_of_hex),
      cmocka_unit_test(malformed_and_oversized_input_is_refused),
      cmocka_unit_test(a_parsed_query_encodes_as_a_store_request),
      cmocka_unit_test(a_reply_renders_entries_in_nwaku_shape),
      cmocka_unit_test(an_empty_reply_has_no_cursor),
      cmocka_unit_test(invalid_utf8_is_replaced),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
