/* The events of the C API as compact JSON: eventType first, the documented field order, byte
 * fields as integer arrays (message_received) or base64 (the kernel message event), and text
 * that is always valid UTF-8. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <jansson.h>

#include "crypto/crypto.h"
#include "lib/events_json.h"
#include "p2p/key.h"

#define REQ_ID "0123456789abcdef0123"
#define HASH_HEX "0x000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f"

static void fill_hash(uint8_t h[LD_WAKU_HASH_LEN]) {
  for (int i = 0; i < LD_WAKU_HASH_LEN; i++)
    h[i] = (uint8_t)i;
}

/* Checks the built text against `want` and that it parses back as JSON. */
static void expect_json(char *got, const size_t *lenp, const char *want) {
  assert_non_null(got);
  size_t len = *lenp;
  assert_int_equal(len, strlen(got));
  assert_string_equal(got, want);
  json_error_t e;
  json_t *v = json_loadb(got, len, 0, &e);
  assert_non_null(v);
  json_decref(v);
  free(got);
}

static void send_events_in_field_order(void **state) {
  (void)state;
  ld_messaging_send_event_t ev = {.request_id = REQ_ID, .has_hash = true, .error = NULL};
  fill_hash(ev.hash);
  size_t len = 0;
  expect_json(ld_lib_event_send_json(LD_LIB_EVENT_MESSAGE_SENT, &ev, &len), &len,
              "{\"eventType\":\"message_sent\",\"requestId\":\"" REQ_ID
              "\",\"messageHash\":\"" HASH_HEX "\"}");
  expect_json(ld_lib_event_send_json(LD_LIB_EVENT_MESSAGE_PROPAGATED, &ev, &len), &len,
              "{\"eventType\":\"message_propagated\",\"requestId\":\"" REQ_ID
              "\",\"messageHash\":\"" HASH_HEX "\"}");
  ev.error = "Unable to send within retry time window";
  expect_json(ld_lib_event_send_json(LD_LIB_EVENT_MESSAGE_ERROR, &ev, &len), &len,
              "{\"eventType\":\"message_error\",\"requestId\":\"" REQ_ID
              "\",\"messageHash\":\"" HASH_HEX
              "\",\"error\":\"Unable to send within retry time window\"}");
  ev.has_hash = false;
  ev.error = "Message size exceeded maximum of 153600 bytes \"quoted\"\n";
  expect_json(ld_lib_event_send_json(LD_LIB_EVENT_MESSAGE_ERROR, &ev, &len), &len,
              "{\"eventType\":\"message_error\",\"requestId\":\"" REQ_ID
              "\",\"messageHash\":\"\",\"error\":\"Message size exceeded maximum of 153600 bytes "
              "\\\"quoted\\\"\\n\"}");
  ev.error = NULL;
  expect_json(ld_lib_event_send_json(LD_LIB_EVENT_MESSAGE_ERROR, &ev, &len), &len,
              "{\"eventType\":\"message_error\",\"requestId\":\"" REQ_ID
              "\",\"messageHash\":\"\",\"error\":\"\"}");
}

static void received_message_has_integer_arrays(void **state) {
  (void)state;
  uint8_t hash[LD_WAKU_HASH_LEN];
  fill_hash(hash);
  ld_waku_message_t m;
  ld_waku_message_init(&m);
  const uint8_t payload[] = {1, 2, 255};
  const uint8_t meta[] = {0};
  m.payload = payload;
  m.payload_len = sizeof payload;
  m.content_topic = "/app/1/chat/proto";
  m.content_topic_len = strlen(m.content_topic);
  m.meta = meta;
  m.meta_len = sizeof meta;
  m.version = 1;
  m.timestamp = 1700000000123456789LL;
  size_t len = 0;
  expect_json(ld_lib_event_received_json(hash, &m, &len), &len,
              "{\"eventType\":\"message_received\",\"messageHash\":\"" HASH_HEX
              "\",\"message\":{\"payload\":[1,2,255],\"contentTopic\":\"/app/1/chat/proto\","
              "\"meta\":[0],\"version\":1,\"timestamp\":1700000000123456789,\"ephemeral\":false,"
              "\"proof\":[]}}");
}

static void received_large_payload_round_trips(void **state) {
  (void)state;
  size_t n = 150 * 1024;
  uint8_t *payload = malloc(n);
  assert_non_null(payload);
  for (size_t i = 0; i < n; i++)
    payload[i] = (uint8_t)(i * 7);
  uint8_t hash[LD_WAKU_HASH_LEN] = {0};
  ld_waku_message_t m;
  ld_waku_message_init(&m);
  m.payload = payload;
  m.payload_len = n;
  m.content_topic = "/a/1/b/c";
  m.content_topic_len = 8;
  size_t len = 0;
  char *s = ld_lib_event_received_json(hash, &m, &len);
  assert_non_null(s);
  json_error_t e;
  json_t *v = json_loadb(s, len, 0, &e);
  assert_non_null(v);
  json_t *arr = json_object_get(json_object_get(v, "message"), "payload");
  assert_int_equal(json_array_size(arr), n);
  for (size_t i = 0; i < n; i += 1021)
    assert_int_equal(json_integer_value(json_array_get(arr, i)), payload[i]);
  json_decref(v);
  free(s);
  free(payload);
}

static void status_and_health_names(void **state) {
  (void)state;
  size_t len = 0;
  expect_json(ld_lib_event_connection_status_json(LD_CONNECTION_DISCONNECTED, &len), &len,
              "{\"eventType\":\"connection_status_change\",\"connectionStatus\":\"Disconnected\"}");
  expect_json(
      ld_lib_event_connection_status_json(LD_CONNECTION_PARTIALLY_CONNECTED, &len), &len,
      "{\"eventType\":\"connection_status_change\",\"connectionStatus\":\"PartiallyConnected\"}");
  expect_json(ld_lib_event_connection_status_json(LD_CONNECTION_CONNECTED, &len), &len,
              "{\"eventType\":\"connection_status_change\",\"connectionStatus\":\"Connected\"}");
  const struct {
    ld_relay_health_t h;
    const char *name;
  } cases[] = {{LD_RELAY_UNHEALTHY, "UnHealthy"},
               {LD_RELAY_MINIMALLY_HEALTHY, "MinimallyHealthy"},
               {LD_RELAY_SUFFICIENTLY_HEALTHY, "SufficientlyHealthy"},
               {LD_RELAY_NOT_SUBSCRIBED, "NotSubscribed"}};
  for (size_t i = 0; i < 4; i++) {
    char want[160];
    snprintf(want, sizeof want,
             "{\"eventType\":\"relay_topic_health_change\",\"pubsubTopic\":\"/waku/2/rs/1/3\","
             "\"topicHealth\":\"%s\"}",
             cases[i].name);
    expect_json(ld_lib_event_topic_health_json("/waku/2/rs/1/3", cases[i].h, &len), &len, want);
  }
}

static void connection_change_names_the_peer(void **state) {
  (void)state;
  assert_int_equal(ld_crypto_init(), 0);
  ld_privkey_t key;
  ld_pubkey_t pub;
  ld_peerid_t id;
  assert_int_equal(ld_privkey_generate(&key, LD_KEY_SECP256K1), 0);
  ld_privkey_public(&key, &pub);
  assert_int_equal(ld_peerid_from_pubkey(&id, &pub), 0);
  char text[LD_PEERID_TEXT_MAX];
  assert_true(ld_peerid_to_text(&id, text, sizeof text) > 0);
  const char *names[] = {"EventConnected", "EventDisconnected", "EventIdentified",
                         "EventMetadataUpdated"};
  for (int i = 0; i < 4; i++) {
    char want[256];
    snprintf(want, sizeof want,
             "{\"eventType\":\"connection_change\",\"peerId\":\"%s\",\"peerEvent\":\"%s\"}", text,
             names[i]);
    size_t len = 0;
    expect_json(ld_lib_event_connection_change_json(&id, (ld_lib_peer_event_t)i, &len), &len, want);
  }
}

static void kernel_message_has_base64_strings(void **state) {
  (void)state;
  uint8_t hash[LD_WAKU_HASH_LEN];
  fill_hash(hash);
  ld_waku_message_t m;
  ld_waku_message_init(&m);
  m.payload = (const uint8_t *)"hello";
  m.payload_len = 5;
  m.content_topic = "/app/1/chat/proto";
  m.content_topic_len = strlen(m.content_topic);
  m.proof = (const uint8_t *)"\x01\x02";
  m.proof_len = 2;
  m.timestamp = 42;
  m.ephemeral = true;
  size_t len = 0;
  expect_json(
      ld_lib_event_kernel_message_json("/waku/2/rs/0/0", hash, &m, &len), &len,
      "{\"eventType\":\"message\",\"pubsubTopic\":\"/waku/2/rs/0/0\",\"messageHash\":\"" HASH_HEX
      "\",\"wakuMessage\":{\"payload\":\"aGVsbG8=\",\"contentTopic\":\"/app/1/chat/proto\","
      "\"version\":0,\"timestamp\":42,\"ephemeral\":true,\"meta\":\"\",\"proof\":\"AQI=\"}}");
}

static void not_responding_has_no_fields(void **state) {
  (void)state;
  size_t len = 0;
  expect_json(ld_lib_event_not_responding_json(&len), &len, "{\"eventType\":\"not_responding\"}");
}

/* A content topic from the network may hold any bytes: the event stays valid UTF-8 JSON. */
static void invalid_utf8_becomes_replacement_characters(void **state) {
  (void)state;
  uint8_t hash[LD_WAKU_HASH_LEN] = {0};
  ld_waku_message_t m;
  ld_waku_message_init(&m);
  m.content_topic = "a\xff\xc3(b\0c";
  m.content_topic_len = 7;
  size_t len = 0;
  char *s = ld_lib_event_received_json(hash, &m, &len);
  assert_non_null(s);
  assert_non_null(strstr(s, "\"contentTopic\":\"a\xEF\xBF\xBD\xEF\xBF\xBD(b\\u0000c\""));
  json_error_t e;
  json_t *v = json_loadb(s, len, JSON_ALLOW_NUL, &e);
  assert_non_null(v);
  json_decref(v);
  free(s);
  s = ld_lib_event_topic_health_json("/waku/\x80", LD_RELAY_UNHEALTHY, &len);
  assert_non_null(strstr(s, "\"pubsubTopic\":\"/waku/\xEF\xBF\xBD\""));
  free(s);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(send_events_in_field_order),
      cmocka_unit_test(received_message_has_integer_arrays),
      cmocka_unit_test(received_large_payload_round_trips),
      cmocka_unit_test(status_and_health_names),
      cmocka_unit_test(connection_change_names_the_peer),
      cmocka_unit_test(kernel_message_has_base64_strings),
      cmocka_unit_test(not_responding_has_no_fields),
      cmocka_unit_test(invalid_utf8_becomes_replacement_characters),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
