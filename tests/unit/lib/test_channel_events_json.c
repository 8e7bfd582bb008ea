/* The channel events' JSON (lib/channel_json.h: ld_lib_event_channel_json), written directly:
 * exactly the text c-api.md gives, and byte for byte what jansson's json_dumps(JSON_COMPACT |
 * JSON_PRESERVE_ORDER) writes for the same object (the oracle below, strings made as the REST
 * layer makes them: bytes that are not UTF-8 become U+FFFD), for every event kind and for strings
 * with quotes, backslashes, control characters, multi-byte UTF-8 and invalid bytes. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <jansson.h>

#include "base/base64.h"
#include "channels/channels.h"
#include "lib/channel_json.h"
#include "node/broker.h"
#include "rest/json.h"

static json_t *text(const char *s) {
  return ld_rest_json_string(s != NULL ? s : "", s != NULL ? strlen(s) : 0);
}

/* The oracle: the object built with jansson and dumped. */
static char *oracle(int kind, const char *type, const ld_channel_event_t *ev) {
  json_t *o = json_object();
  json_object_set_new(o, "eventType", json_string(type));
  json_object_set_new(o, "channelId", text(ev->channel_id));
  if (kind == LD_EVENT_CHANNEL_RECEIVED) {
    json_object_set_new(o, "senderId", text(ev->sender_id));
    char *b64 = malloc(LD_BASE64_ENCODED_LEN(ev->payload_len) + 1);
    assert_true(ld_base64_encode(ev->payload_len > 0 ? ev->payload : (const uint8_t *)"",
                                 ev->payload_len, b64,
                                 LD_BASE64_ENCODED_LEN(ev->payload_len) + 1) >= 0);
    json_object_set_new(o, "payload", json_string(b64));
    free(b64);
  } else if (kind == LD_EVENT_CHANNEL_LOST) {
    json_object_set_new(o, "senderId", text(ev->sender_id));
    json_object_set_new(o, "messageId", text(ev->message_id));
    json_object_set_new(o, "messageHash", text(ev->message_hash));
    json_object_set_new(o, "payloadHash", text(ev->payload_hash));
    json_object_set_new(o, "reason", text(ev->reason));
  } else {
    json_object_set_new(o, "requestId", text(ev->request_id));
    if (kind == LD_EVENT_CHANNEL_ERROR || kind == LD_EVENT_CHANNEL_DELIVERY_ERROR)
      json_object_set_new(o, "error", text(ev->error));
  }
  char *s = json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER);
  json_decref(o);
  return s;
}

static const struct {
  int kind;
  const char *type;
} k_kinds[] = {
    {LD_EVENT_CHANNEL_RECEIVED, "channel_message_received"},
    {LD_EVENT_CHANNEL_SENT, "channel_message_sent"},
    {LD_EVENT_CHANNEL_ERROR, "channel_message_error"},
    {LD_EVENT_CHANNEL_DELIVERED, "channel_message_delivered"},
    {LD_EVENT_CHANNEL_DELIVERY_ERROR, "channel_message_delivery_error"},
    {LD_EVENT_CHANNEL_LOST, "channel_message_lost"},
};

static const char *const k_strings[] = {
    "",
    "room-1",
    "quote \" and backslash \\ and slash /",
    "controls \b\f\n\r\t \x01\x1f\x7f end",
    "utf-8: h\xc3\xa9llo \xe2\x82\xac \xf0\x9f\x98\x80",
    "invalid: \xff \xc3 \xed\xa0\x80 \xf4\x90\x80\x80 \xc0\xaf tail",
    "\xe2\x80\xa8 line separators \xe2\x80\xa9",
};

static void the_json_is_jansson_s_for_every_kind_and_string(void **state) {
  (void)state;
  const size_t n_strings = sizeof k_strings / sizeof k_strings[0];
  uint8_t payload[256];
  for (size_t i = 0; i < sizeof payload; i++)
    payload[i] = (uint8_t)(i * 7 + 3);
  for (size_t k = 0; k < sizeof k_kinds / sizeof k_kinds[0]; k++) {
    for (size_t i = 0; i < n_strings; i++) {
      const char *s = k_strings[i], *t = k_strings[(i + 1) % n_strings];
      ld_channel_event_t ev = {.channel_id = s,
                               .sender_id = t,
                               .request_id = t,
                               .error = s,
                               .message_id = s,
                               .message_hash = t,
                               .payload_hash = s,
                               .reason = t,
                               .payload = i % 2 == 0 ? payload : NULL,
                               .payload_len = i % 2 == 0 ? i * 37 % sizeof payload : 0};
      size_t len = 0;
      char *got = ld_lib_event_channel_json(k_kinds[k].kind, &ev, &len);
      char *want = oracle(k_kinds[k].kind, k_kinds[k].type, &ev);
      assert_non_null(got);
      assert_non_null(want);
      assert_string_equal(got, want);
      assert_int_equal(len, strlen(want));
      free(got);
      free(want);
    }
  }
}

/* c-api.md's forms, literally. */
static void the_events_read_as_c_api_md_gives_them(void **state) {
  (void)state;
  ld_channel_event_t sent = {.channel_id = "room", .request_id = "0123abcd"};
  size_t len = 0;
  char *s = ld_lib_event_channel_json(LD_EVENT_CHANNEL_SENT, &sent, &len);
  assert_string_equal(
      s,
      "{\"eventType\":\"channel_message_sent\",\"channelId\":\"room\",\"requestId\":\"0123abcd\"}");
  free(s);
  ld_channel_event_t rx = {.channel_id = "room",
                           .sender_id = "alice",
                           .payload = (const uint8_t *)"hello",
                           .payload_len = 5};
  s = ld_lib_event_channel_json(LD_EVENT_CHANNEL_RECEIVED, &rx, &len);
  assert_string_equal(s, "{\"eventType\":\"channel_message_received\",\"channelId\":\"room\","
                         "\"senderId\":\"alice\",\"payload\":\"aGVsbG8=\"}");
  assert_int_equal(len, strlen(s));
  free(s);
  ld_channel_event_t err = {.channel_id = "room", .request_id = "r1", .error = "no \"peers\""};
  s = ld_lib_event_channel_json(LD_EVENT_CHANNEL_ERROR, &err, &len);
  assert_string_equal(s, "{\"eventType\":\"channel_message_error\",\"channelId\":\"room\","
                         "\"requestId\":\"r1\",\"error\":\"no \\\"peers\\\"\"}");
  free(s);
  assert_null(ld_lib_event_channel_json(LD_EVENT_MESSAGING_SENT, &sent, &len));
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(the_json_is_jansson_s_for_every_kind_and_string),
      cmocka_unit_test(the_events_read_as_c_api_md_gives_them),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
