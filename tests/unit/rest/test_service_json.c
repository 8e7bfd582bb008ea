/* JSON of the lightpush, filter and store endpoints: nwaku's request readers (the 400 cases)
 * and the exact response shapes, plus the status code mappings. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "base/error.h"
#include "rest/json.h"
#include "rest/service_json.h"

#define NOW 1700000000000000000LL

static char g_err[LD_REST_ERR_MAX];

static json_t *parse(const char *text) {
  json_t *j = NULL;
  assert_int_equal(
      ld_rest_json_parse((const uint8_t *)text, strlen(text), NULL, &j, g_err, sizeof g_err), 0);
  return j;
}

/* Serialises and frees `j`, compares with `expect`. */
static void expect_json(json_t *j, const char *expect) {
  assert_non_null(j);
  char *text = json_dumps(j, JSON_COMPACT | JSON_PRESERVE_ORDER);
  json_decref(j);
  assert_non_null(text);
  assert_string_equal(text, expect);
  free(text);
}

/* ---- lightpush ------------------------------------------------------------------------------- */

static int push_parse(const char *text, ld_rest_push_request_t *r) {
  json_t *j = parse(text);
  g_err[0] = '\0';
  int rc = ld_rest_push_request_parse(j, NOW, r, g_err, sizeof g_err);
  if (rc == 0 && r->pubsub_topic != NULL) {
    /* the topic is borrowed from the body: keep a stable copy for the checks */
    static char topic[64];
    snprintf(topic, sizeof topic, "%s", r->pubsub_topic);
    r->pubsub_topic = topic;
  }
  json_decref(j);
  return rc;
}

static void push_requests(void **state) {
  (void)state;
  ld_rest_push_request_t r;
  assert_int_equal(push_parse("{\"pubsubTopic\":\"/waku/2/rs/0/0\",\"message\":{\"payload\":"
                              "\"aGk=\",\"contentTopic\":\"/a/1/b/proto\",\"timestamp\":"
                              "1712345678901234567,\"meta\":\"AQI=\",\"ephemeral\":true,"
                              "\"version\":1},\"other\":1}",
                              &r),
                   0);
  assert_string_equal(r.pubsub_topic, "/waku/2/rs/0/0");
  assert_int_equal(r.msg.payload_len, 2);
  assert_memory_equal(r.msg.payload, "hi", 2);
  assert_int_equal(r.msg.content_topic_len, 12);
  assert_true(r.msg.timestamp == 1712345678901234567LL);
  assert_int_equal(r.msg.meta_len, 2);
  assert_true(r.msg.ephemeral);
  assert_int_equal(r.msg.version, 1);
  ld_rest_push_request_clear(&r);
  /* an empty pubsub topic is absent; a missing timestamp is now */
  assert_int_equal(
      push_parse(
          "{\"pubsubTopic\":\"\",\"message\":{\"payload\":\"aGk=\",\"contentTopic\":\"/a/1/b/"
          "proto\"}}",
          &r),
      0);
  assert_null(r.pubsub_topic);
  assert_true(r.msg.timestamp == NOW);
  ld_rest_push_request_clear(&r);
}

static void push_bad_requests(void **state) {
  (void)state;
  ld_rest_push_request_t r;
  assert_int_equal(push_parse("[]", &r), LD_ERR_MALFORMED);
  assert_string_equal(g_err, "Expected a JSON object");
  assert_int_equal(push_parse("{\"pubsubTopic\":\"/waku/2/rs/0/0\"}", &r), LD_ERR_MALFORMED);
  assert_string_equal(g_err, "Field `message` is missing");
  assert_int_equal(push_parse("{\"message\":\"x\"}", &r), LD_ERR_MALFORMED);
  assert_string_equal(g_err, "Field `message` must be an object");
  assert_int_equal(push_parse("{\"pubsubTopic\":5,\"message\":{}}", &r), LD_ERR_MALFORMED);
  assert_string_equal(g_err, "Field `pubsubTopic` must be a string");
  assert_int_equal(push_parse("{\"message\":{\"payload\":\"\",\"contentTopic\":\"/a/1/b/c\"}}", &r),
                   LD_ERR_MALFORMED);
  assert_string_equal(g_err, "Field `payload` is missing or empty");
  assert_int_equal(push_parse("{\"message\":{\"payload\":\"aGk=\",\"contentTopic\":\"\"}}", &r),
                   LD_ERR_MALFORMED);
  assert_string_equal(g_err, "Field `contentTopic` is missing or empty");
  assert_int_equal(
      push_parse("{\"message\":{\"payload\":\"!!!\",\"contentTopic\":\"/a/1/b/c\"}}", &r),
      LD_ERR_BAD_ENCODING);
  assert_string_equal(g_err, "Incorrect base64 string in field `payload`");
}

static void push_responses(void **state) {
  (void)state;
  expect_json(ld_rest_push_response_json(200, "ignored", 3), "{\"relayPeerCount\":3}");
  expect_json(ld_rest_push_response_json(505, "No peers for topic, skipping publish", 0),
              "{\"statusDesc\":\"No peers for topic, skipping publish\"}");
  expect_json(ld_rest_push_response_json(420, NULL, 0), "{}");
  static const struct {
    uint32_t code;
    unsigned http;
  } map[] = {{200, 200}, {400, 400}, {413, 413}, {420, 500}, {421, 421}, {429, 429},
             {500, 500}, {503, 503}, {504, 504}, {505, 505}, {0, 500},   {999, 500}};
  for (size_t i = 0; i < sizeof map / sizeof map[0]; i++)
    assert_int_equal(ld_rest_push_http_status(map[i].code), map[i].http);
}

/* ---- filter ---------------------------------------------------------------------------------- */

static int filter_parse(json_t *j, bool with_topics, ld_rest_filter_request_t *r) {
  g_err[0] = '\0';
  return ld_rest_filter_request_parse(j, with_topics, r, g_err, sizeof g_err);
}

static void filter_requests(void **state) {
  (void)state;
  ld_rest_filter_request_t r;
  json_t *j = parse("{\"requestId\":\"1234\",\"pubsubTopic\":\"/waku/2/rs/0/1\","
                    "\"contentFilters\":[\"/a/1/b/proto\",\"/c/1/d/proto\"],\"x\":null}");
  assert_int_equal(filter_parse(j, true, &r), 0);
  assert_string_equal(r.request_id, "1234");
  assert_string_equal(r.pubsub_topic, "/waku/2/rs/0/1");
  assert_int_equal(r.n_content_topics, 2);
  assert_string_equal(r.content_topics[1], "/c/1/d/proto");
  ld_rest_filter_request_clear(&r);
  json_decref(j);
  /* pubsubTopic "" is absent; unsubscribe-all ignores the topics */
  j = parse("{\"requestId\":\"1\",\"pubsubTopic\":\"\",\"contentFilters\":[\"/a/1/b/c\"]}");
  assert_int_equal(filter_parse(j, true, &r), 0);
  assert_null(r.pubsub_topic);
  ld_rest_filter_request_clear(&r);
  json_decref(j);
  j = parse("{\"requestId\":\"2143\",\"contentFilters\":7}");
  assert_int_equal(filter_parse(j, false, &r), 0);
  assert_string_equal(r.request_id, "2143");
  assert_int_equal(r.n_content_topics, 0);
  ld_rest_filter_request_clear(&r);
  json_decref(j);
}

static void filter_bad_requests(void **state) {
  (void)state;
  static const struct {
    const char *body;
    const char *err;
  } bad[] = {
      {"[]", "Expected a JSON object"},
      {"{\"contentFilters\":[\"/a/1/b/c\"]}", "Field `requestId` is missing"},
      {"{\"requestId\":12,\"contentFilters\":[\"/a/1/b/c\"]}",
       "Field `requestId` must be a string"},
      {"{\"requestId\":\"1\"}", "Field `contentFilters` is missing"},
      {"{\"requestId\":\"1\",\"contentFilters\":[]}", "Field `contentFilters` is empty"},
      {"{\"requestId\":\"1\",\"contentFilters\":[1]}",
       "Field `contentFilters` must be a list of strings"},
      {"{\"requestId\":\"1\",\"pubsubTopic\":[],\"contentFilters\":[\"/a/1/b/c\"]}",
       "Field `pubsubTopic` must be a string"},
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    json_t *j = parse(bad[i].body);
    ld_rest_filter_request_t r;
    assert_int_equal(filter_parse(j, true, &r), LD_ERR_MALFORMED);
    assert_string_equal(g_err, bad[i].err);
    json_decref(j);
  }
}

static void filter_responses(void **state) {
  (void)state;
  expect_json(ld_rest_filter_response_json("9999", "OK"),
              "{\"requestId\":\"9999\",\"statusDesc\":\"OK\"}");
  static const struct {
    uint32_t code;
    unsigned http;
    const char *desc;
  } map[] = {
      {200, 200, "OK"},
      {300, 500, "BAD_RESPONSE: x"},
      {400, 400, "BAD_REQUEST: x"},
      {404, 404, "NOT_FOUND: peer has no subscriptions"},
      {429, 429, "TOO_MANY_REQUESTS: x"},
      {503, 503, "SERVICE_UNAVAILABLE: x"},
      {504, 504, "/ip4/1.2.3.4/tcp/5"},
      {0, 200, "UNKNOWN"},
      {201, 200, "UNKNOWN"},
  };
  for (size_t i = 0; i < sizeof map / sizeof map[0]; i++) {
    assert_int_equal(ld_rest_filter_http_status(map[i].code), map[i].http);
    const char *given = map[i].code == 200 ? "ignored" : map[i].desc;
    assert_string_equal(ld_rest_filter_status_desc(map[i].code, given), map[i].desc);
  }
  assert_string_equal(ld_rest_filter_status_desc(404, NULL), "peer has no subscriptions");
}

static void filter_messages(void **state) {
  (void)state;
  ld_waku_message_t m[2];
  ld_waku_message_init(&m[0]);
  ld_waku_message_init(&m[1]);
  m[0].payload = (const uint8_t *)"hi";
  m[0].payload_len = 2;
  m[0].content_topic = "/a/1/b/c";
  m[0].content_topic_len = 8;
  m[0].timestamp = 1712345678901234567LL;
  m[0].proof = (const uint8_t *)"p";
  m[0].proof_len = 1;
  m[1] = m[0];
  m[1].meta = (const uint8_t *)"\x01";
  m[1].meta_len = 1;
  m[1].ephemeral = true;
  expect_json(ld_rest_filter_messages_json(m, 2),
              "[{\"payload\":\"aGk=\",\"contentTopic\":\"/a/1/b/c\",\"version\":0,\"timestamp\":"
              "1712345678901234567,\"ephemeral\":false},{\"payload\":\"aGk=\",\"contentTopic\":"
              "\"/a/1/b/c\",\"version\":0,\"timestamp\":1712345678901234567,\"meta\":\"AQ==\","
              "\"ephemeral\":true}]");
  expect_json(ld_rest_filter_messages_json(NULL, 0), "[]");
}

/* ---- store ----------------------------------------------------------------------------------- */

static void store_responses(void **state) {
  (void)state;
  ld_waku_message_t m;
  ld_waku_message_init(&m);
  m.payload = (const uint8_t *)"hi";
  m.payload_len = 2;
  m.content_topic = "/a/1/b/c";
  m.content_topic_len = 8;
  m.timestamp = 1712345678901234567LL;
  m.meta = (const uint8_t *)"\x01";
  m.meta_len = 1;
  m.version = 2;
  ld_rest_store_entry_t e[2];
  memset(e, 0, sizeof e);
  for (int i = 0; i < 32; i++) {
    e[0].hash[i] = (uint8_t)i;
    e[1].hash[i] = 0xff;
  }
  e[0].message = &m;
  e[0].pubsub_topic = "/waku/2/rs/0/0";
  uint8_t cursor[32];
  memset(cursor, 0xab, sizeof cursor);
  ld_rest_store_result_t res = {.status_code = 200,
                                .status_desc = "OK",
                                .request_id = "r1",
                                .entries = e,
                                .n_entries = 2,
                                .cursor = cursor};
  expect_json(
      ld_rest_store_response_json(&res),
      "{\"requestId\":\"r1\",\"statusCode\":200,\"statusDesc\":\"OK\",\"messages\":[{"
      "\"messageHash\":\"0x000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f\","
      "\"message\":{\"payload\":\"aGk=\",\"contentTopic\":\"/a/1/b/c\",\"meta\":\"AQ==\","
      "\"version\":2,\"timestamp\":1712345678901234567,\"ephemeral\":false},\"pubsubTopic\":"
      "\"/waku/2/rs/0/0\"},{\"messageHash\":"
      "\"0xffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff\"}],"
      "\"paginationCursor\":"
      "\"0xabababababababababababababababababababababababababababababababab\"}");
  ld_rest_store_result_t failed = {.status_code = 504, .status_desc = "PEER_DIAL_FAILURE: x"};
  expect_json(ld_rest_store_response_json(&failed),
              "{\"requestId\":\"\",\"statusCode\":504,\"statusDesc\":\"PEER_DIAL_FAILURE: x\","
              "\"messages\":[]}");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(push_requests),       cmocka_unit_test(push_bad_requests),
      cmocka_unit_test(push_responses),      cmocka_unit_test(filter_requests),
      cmocka_unit_test(filter_bad_requests), cmocka_unit_test(filter_responses),
      cmocka_unit_test(filter_messages),     cmocka_unit_test(store_responses),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
