/* The draft's MessageRecord, built from messaging's records: the optional fields left out when
 * unset, the send fields for the node's own messages only. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "messaging/messaging_rest.h"

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

static void message(ld_waku_message_t *m, const char *payload) {
  ld_waku_message_init(m);
  m->payload = (const uint8_t *)payload;
  m->payload_len = strlen(payload);
  m->content_topic = CT;
  m->content_topic_len = strlen(CT);
}

static void own_record_leaves_out_what_is_unset(void **state) {
  (void)state;
  ld_message_record_t r;
  memset(&r, 0, sizeof r);
  r.sending = true;
  r.has_request_id = true;
  strcpy(r.request_id, "00112233445566778899");
  message(&r.msg, "Some");
  expect_json(ld_messaging_rest_record_json(&r),
              "{\"sending\":true,\"sent\":false,\"stored\":false,\"received\":false,"
              "\"requestId\":\"00112233445566778899\",\"message\":{\"payload\":\"U29tZQ==\","
              "\"contentTopic\":\"" CT "\"}}");
  /* built and failed: the hash, the pubsub topic and the error appear */
  r.sending = false;
  r.has_hash = true;
  memset(r.hash, 0xab, sizeof r.hash);
  r.pubsub_topic = "/waku/2/rs/0/3";
  r.error = "Unable to send within retry time window";
  r.msg.timestamp = 1700000000000000001LL;
  expect_json(ld_messaging_rest_record_json(&r),
              "{\"sending\":false,\"sent\":false,\"stored\":false,\"received\":false,"
              "\"requestId\":\"00112233445566778899\",\"messageHash\":\"0x"
              "abababababababababababababababababababababababababababababababab\","
              "\"pubsubTopic\":\"/waku/2/rs/0/3\",\"message\":{\"payload\":\"U29tZQ==\","
              "\"contentTopic\":\"" CT "\",\"timestamp\":1700000000000000001},"
              "\"error\":\"Unable to send within retry time window\"}");
}

static void received_record_has_no_send_fields(void **state) {
  (void)state;
  ld_message_record_t r;
  memset(&r, 0, sizeof r);
  r.received = true;
  r.stored = true;
  r.has_hash = true;
  static const uint8_t meta[] = {1, 2, 3};
  static const uint8_t proof[] = {9};
  message(&r.msg, "");
  r.msg.version = 1;
  r.msg.meta = meta;
  r.msg.meta_len = sizeof meta;
  r.msg.proof = proof;
  r.msg.proof_len = sizeof proof;
  r.msg.ephemeral = true;
  expect_json(ld_messaging_rest_record_json(&r),
              "{\"stored\":true,\"received\":true,\"messageHash\":\"0x"
              "0000000000000000000000000000000000000000000000000000000000000000\","
              "\"message\":{\"payload\":\"\",\"contentTopic\":\"" CT "\",\"version\":1,"
              "\"meta\":\"AQID\",\"ephemeral\":true,\"proof\":\"CQ==\"}}");
  const ld_message_record_t *list[2] = {&r, &r};
  json_t *arr = ld_messaging_rest_records_json(list, 2);
  assert_int_equal(json_array_size(arr), 2);
  json_decref(arr);
  expect_json(ld_messaging_rest_records_json(NULL, 0), "[]");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(own_record_leaves_out_what_is_unset),
      cmocka_unit_test(received_record_has_no_send_fields),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
