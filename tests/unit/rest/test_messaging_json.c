/* Messaging API JSON: SendStatus, ReceivedMessageRecord, HealthReport, and the request bodies
 * with their 400 reasons. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "base/error.h"
#include "rest/json.h"
#include "rest/messaging_json.h"

#define CT "/app/1/chat/proto"

/* Serialises compactly (insertion order), frees `j`, compares with `expected`. */
static void expect_json(json_t *j, const char *expected) {
  assert_non_null(j);
  char *text = json_dumps(j, JSON_COMPACT);
  json_decref(j);
  assert_non_null(text);
  assert_string_equal(text, expected);
  free(text);
}

static json_t *parse(const char *text) {
  json_error_t err;
  json_t *j = json_loads(text, JSON_REJECT_DUPLICATES, &err);
  assert_non_null(j);
  return j;
}

static void message(ld_waku_message_t *m, const char *payload) {
  ld_waku_message_init(m);
  m->payload = (const uint8_t *)payload;
  m->payload_len = strlen(payload);
  m->content_topic = CT;
  m->content_topic_len = strlen(CT);
}

/* ---- answers --------------------------------------------------------------------------------- */

static void send_status_groups_events(void **state) {
  (void)state;
  ld_rest_send_event_t ev[3];
  memset(ev, 0, sizeof ev);
  ev[0].kind = LD_REST_SEND_PROPAGATED;
  ev[0].has_hash = true;
  memset(ev[0].hash, 0x01, sizeof ev[0].hash);
  ev[0].timestamp = 10;
  ev[1].kind = LD_REST_SEND_SENT;
  ev[1].has_hash = true;
  memset(ev[1].hash, 0x01, sizeof ev[1].hash);
  ev[1].timestamp = 20;
  ev[2].kind = LD_REST_SEND_ERROR;
  ev[2].error = "Message size exceeded maximum of 153600 bytes";
  ev[2].timestamp = 30;
  ld_rest_send_status_t st = {.events = ev, .n_events = 3};
  strcpy(st.request_id, "abc");
  const char *h = "\"0x0101010101010101010101010101010101010101010101010101010101010101\"";
  char expected[1024];
  snprintf(expected, sizeof expected,
           "{\"requestId\":\"abc\",\"events\":[{\"kind\":\"propagated\",\"messageHash\":%s,"
           "\"timestamp\":10},{\"kind\":\"sent\",\"messageHash\":%s,\"timestamp\":20},"
           "{\"kind\":\"error\",\"messageHash\":\"\",\"error\":\"Message size exceeded maximum "
           "of 153600 bytes\",\"timestamp\":30}]}",
           h, h);
  expect_json(ld_rest_send_status_json(&st), expected);
  expect_json(ld_rest_send_statuses_json(NULL, 0), "[]");
  json_t *two = ld_rest_send_statuses_json((ld_rest_send_status_t[]){st, st}, 2);
  assert_int_equal(json_array_size(two), 2);
  json_decref(two);
}

static void received_message_record_is_relay_json(void **state) {
  (void)state;
  ld_rest_received_t r;
  memset(r.hash, 0xff, sizeof r.hash);
  message(&r.msg, "hi");
  r.msg.timestamp = 5;
  expect_json(ld_rest_received_json(&r),
              "{\"messageHash\":\"0xffffffffffffffffffffffffffffffffffffffffffffffffffffffff"
              "ffffffff\",\"message\":{\"payload\":\"aGk=\",\"contentTopic\":\"" CT "\","
              "\"version\":0,\"timestamp\":5,\"ephemeral\":false,\"proof\":\"\"}}");
  expect_json(ld_rest_received_list_json(NULL, 0), "[]");
}

static void health_report_places_connection_status(void **state) {
  (void)state;
  expect_json(ld_rest_health_report_json("READY", "Connected", parse("[{\"Relay\":\"READY\"}]")),
              "{\"nodeHealth\":\"READY\",\"connectionStatus\":\"Connected\","
              "\"protocolsHealth\":[{\"Relay\":\"READY\"}]}");
  expect_json(ld_rest_health_report_json("INITIALIZING", NULL, json_array()),
              "{\"nodeHealth\":\"INITIALIZING\",\"protocolsHealth\":[]}");
  assert_null(ld_rest_health_report_json("READY", NULL, NULL));
}

static void small_answers(void **state) {
  (void)state;
  expect_json(ld_rest_error_json("Message with hash '0x12' not found"),
              "{\"error\":\"Message with hash '0x12' not found\"}");
  expect_json(ld_rest_error_json("bad \xff byte"), "{\"error\":\"bad \xEF\xBF\xBD byte\"}");
  expect_json(ld_rest_request_id_json("0123456789abcdef0123"),
              "{\"requestId\":\"0123456789abcdef0123\"}");
  expect_json(ld_rest_subscription_id_json("ff"), "{\"subscriptionId\":\"ff\"}");
  expect_json(ld_rest_status_ok_json(), "{\"status\":\"ok\"}");
  const char *ids[] = {"a", "b"};
  expect_json(ld_rest_string_list_json(ids, 2), "[\"a\",\"b\"]");
  expect_json(ld_rest_string_list_json(NULL, 0), "[]");
}

/* ---- requests -------------------------------------------------------------------------------- */

static int envelope(const char *text, size_t max, ld_rest_envelope_t *e, char *err) {
  json_t *j = parse(text);
  int rc = ld_rest_envelope_parse(j, max, e, err, LD_REST_ERR_MAX);
  if (rc == 0) {
    /* the content topic is borrowed from the JSON: copy what the test reads before freeing */
    static char topic[256];
    snprintf(topic, sizeof topic, "%s", e->content_topic);
    e->content_topic = topic;
  }
  json_decref(j);
  return rc;
}

static void envelope_reads_every_field(void **state) {
  (void)state;
  ld_rest_envelope_t e;
  char err[LD_REST_ERR_MAX];
  assert_int_equal(envelope("{\"payload\":\"aGVsbG8=\",\"contentTopic\":\"" CT "\","
                            "\"ephemeral\":true,\"meta\":\"AQI\",\"other\":1}",
                            0, &e, err),
                   0);
  assert_string_equal(e.content_topic, CT);
  assert_int_equal(e.content_topic_len, strlen(CT));
  assert_int_equal(e.payload_len, 5);
  assert_memory_equal(e.payload, "hello", 5);
  assert_int_equal(e.meta_len, 2);
  assert_int_equal(e.meta[0], 1);
  assert_int_equal(e.meta[1], 2);
  assert_true(e.ephemeral);
  ld_rest_envelope_clear(&e);
  assert_null(e.payload);
  assert_int_equal(
      envelope("{\"payload\":\"AA==\",\"contentTopic\":\"" CT "\",\"meta\":\"\"}", 0, &e, err), 0);
  assert_false(e.ephemeral);
  assert_null(e.meta);
  assert_int_equal(e.meta_len, 0);
  ld_rest_envelope_clear(&e);
}

static void envelope_refusals_say_why(void **state) {
  (void)state;
  static const struct {
    const char *body;
    int rc;
    const char *err;
  } cases[] = {
      {"[]", LD_ERR_MALFORMED, "Expected a JSON object"},
      {"{\"contentTopic\":\"" CT "\"}", LD_ERR_MALFORMED, "Field `payload` is missing or empty"},
      {"{\"payload\":\" \",\"contentTopic\":\"" CT "\"}", LD_ERR_MALFORMED,
       "Field `payload` is missing or empty"},
      {"{\"payload\":1,\"contentTopic\":\"" CT "\"}", LD_ERR_MALFORMED,
       "Field `payload` is missing or empty"},
      {"{\"payload\":\"AA==\"}", LD_ERR_MALFORMED, "Field `contentTopic` is missing or empty"},
      {"{\"payload\":\"AA==\",\"contentTopic\":\"\"}", LD_ERR_MALFORMED,
       "Field `contentTopic` is missing or empty"},
      {"{\"payload\":\"AA==\",\"contentTopic\":\"" CT "\",\"ephemeral\":\"yes\"}", LD_ERR_MALFORMED,
       "Field `ephemeral` must be a boolean"},
      {"{\"payload\":\"AA==\",\"contentTopic\":\"" CT "\",\"meta\":5}", LD_ERR_MALFORMED,
       "Field `meta` must be a base64 string"},
      {"{\"payload\":\"%%%\",\"contentTopic\":\"" CT "\"}", LD_ERR_BAD_ENCODING,
       "Incorrect base64 string in field `payload`"},
      {"{\"payload\":\"AAAAA\",\"contentTopic\":\"" CT "\"}", LD_ERR_BAD_ENCODING,
       "Incorrect base64 string in field `payload`"},
      {"{\"payload\":\"AA==\",\"contentTopic\":\"" CT "\",\"meta\":\"*\"}", LD_ERR_BAD_ENCODING,
       "Incorrect base64 string in field `meta`"},
      {"{\"payload\":\"AA==\",\"contentTopic\":\"" CT "\",\"meta\":\"AAAAAAAAAAAAAAAAAAAAAAAAAAAA"
       "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA\"}",
       LD_ERR_FIELD_TOO_LONG, "Field `meta` is longer than 64 bytes"},
      {"{\"payload\":\"AAAAAA==\",\"contentTopic\":\"" CT "\"}", LD_ERR_TOO_LARGE,
       "Field `payload` is too large"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    ld_rest_envelope_t e;
    char err[LD_REST_ERR_MAX] = "";
    assert_int_equal(envelope(cases[i].body, 3, &e, err), cases[i].rc);
    assert_string_equal(err, cases[i].err);
    assert_null(e.payload);
    assert_null(e.meta);
  }
}

static void subscribe_bodies(void **state) {
  (void)state;
  char err[LD_REST_ERR_MAX] = "";
  const char *pubsub = NULL, *topic = NULL, *id = NULL;
  json_t *j = parse("{\"contentTopic\":\"" CT "\"}");
  assert_int_equal(ld_rest_subscribe_request_parse(j, &pubsub, &topic, err, sizeof err), 0);
  assert_null(pubsub);
  assert_string_equal(topic, CT);
  json_decref(j);
  j = parse("{\"pubsubTopic\":\"/waku/2/rs/0/1\",\"contentTopic\":\"" CT "\"}");
  assert_int_equal(ld_rest_subscribe_request_parse(j, &pubsub, &topic, err, sizeof err), 0);
  assert_string_equal(pubsub, "/waku/2/rs/0/1");
  json_decref(j);
  j = parse("{\"pubsubTopic\":7,\"contentTopic\":\"" CT "\"}");
  assert_int_equal(ld_rest_subscribe_request_parse(j, &pubsub, &topic, err, sizeof err),
                   LD_ERR_MALFORMED);
  assert_string_equal(err, "Field `pubsubTopic` must be a string");
  json_decref(j);
  j = parse("{\"pubsubTopic\":\"/waku/2/rs/0/1\"}");
  assert_int_equal(ld_rest_subscribe_request_parse(j, &pubsub, &topic, err, sizeof err),
                   LD_ERR_MALFORMED);
  assert_string_equal(err, "Field `contentTopic` is missing or empty");
  json_decref(j);
  j = parse("{\"subscriptionId\":\"abc\"}");
  assert_int_equal(ld_rest_unsubscribe_request_parse(j, &id, err, sizeof err), 0);
  assert_string_equal(id, "abc");
  json_decref(j);
  j = parse("[\"abc\"]");
  assert_int_equal(ld_rest_unsubscribe_request_parse(j, &id, err, sizeof err), LD_ERR_MALFORMED);
  json_decref(j);
  j = parse("{\"subscriptionId\":\"\"}");
  assert_int_equal(ld_rest_unsubscribe_request_parse(j, &id, err, sizeof err), LD_ERR_MALFORMED);
  assert_string_equal(err, "Field `subscriptionId` is missing or empty");
  json_decref(j);
}

static void counts_are_plain_decimals(void **state) {
  (void)state;
  size_t v = 99;
  assert_int_equal(ld_rest_parse_count("0", &v), 0);
  assert_int_equal(v, 0);
  assert_int_equal(ld_rest_parse_count("0042", &v), 0);
  assert_int_equal(v, 42);
  assert_int_equal(ld_rest_parse_count("1000000000", &v), 0);
  assert_int_equal(v, LD_REST_MAX_COUNT);
  v = 7;
  assert_int_equal(ld_rest_parse_count("1000000001", &v), LD_ERR_OVERFLOW);
  assert_int_equal(ld_rest_parse_count("99999999999999999999999", &v), LD_ERR_OVERFLOW);
  assert_int_equal(ld_rest_parse_count("", &v), LD_ERR_MALFORMED);
  assert_int_equal(ld_rest_parse_count(NULL, &v), LD_ERR_MALFORMED);
  assert_int_equal(ld_rest_parse_count("-1", &v), LD_ERR_MALFORMED);
  assert_int_equal(ld_rest_parse_count("+1", &v), LD_ERR_MALFORMED);
  assert_int_equal(ld_rest_parse_count("1 ", &v), LD_ERR_MALFORMED);
  assert_int_equal(ld_rest_parse_count("0x10", &v), LD_ERR_MALFORMED);
  assert_int_equal(v, 7);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(send_status_groups_events),
      cmocka_unit_test(received_message_record_is_relay_json),
      cmocka_unit_test(health_report_places_connection_status),
      cmocka_unit_test(small_answers),
      cmocka_unit_test(envelope_reads_every_field),
      cmocka_unit_test(envelope_refusals_say_why),
      cmocka_unit_test(subscribe_bodies),
      cmocka_unit_test(counts_are_plain_decimals),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
