/* Fuzz target: the message JSON of the C API (logosdelivery_send's messageJson and the kernel
 * tier's jsonWakuMessage).
 *
 * Both parsers must either succeed within their caps or fail with one of their documented error
 * texts. A jsonWakuMessage that parses must survive the kernel `message` event: the event's
 * wakuMessage object, parsed again, gives the same message. */
#include <jansson.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "lib/events_json.h"
#include "lib/message_json.h"

#define MAX_PAYLOAD 4096

static bool starts_with(const char *s, const char *prefix) {
  return strncmp(s, prefix, strlen(prefix)) == 0;
}

static void check_send(const char *data, size_t size) {
  ld_lib_send_message_t m;
  char err[512] = "";
  int rc = ld_lib_send_message_parse(data, size, MAX_PAYLOAD, &m, err, sizeof err);
  if (rc == 0) {
    if (m.payload_len > MAX_PAYLOAD || strlen(m.content_topic) > LD_LIB_CONTENT_TOPIC_MAX)
      abort();
    ld_lib_send_message_clear(&m);
    return;
  }
  if (m.content_topic != NULL || m.payload != NULL)
    abort();
  if (!starts_with(err, "Failed to parse message JSON: ") &&
      strcmp(err, "Missing contentTopic field") != 0 && strcmp(err, "Missing payload field") != 0 &&
      !starts_with(err, "invalid payload format: "))
    abort();
}

/* The event's wakuMessage, parsed again, must equal `m`. */
static void check_round_trip(const ld_lib_json_message_t *m) {
  uint8_t hash[LD_WAKU_HASH_LEN] = {0};
  size_t len = 0;
  char *ev = ld_lib_event_kernel_message_json("/waku/2/rs/0/0", hash, &m->msg, &len);
  if (ev == NULL)
    return; /* out of memory */
  json_error_t e;
  json_t *root = json_loadb(ev, len, 0, &e);
  char *inner =
      root != NULL ? json_dumps(json_object_get(root, "wakuMessage"), JSON_COMPACT) : NULL;
  if (inner == NULL)
    abort();
  ld_lib_json_message_t back;
  char err[512];
  if (ld_lib_json_message_parse(inner, strlen(inner), MAX_PAYLOAD, &back, err, sizeof err) != 0)
    abort();
  /* the content topic is written as valid UTF-8: compare it only when it was valid already */
  bool same_topic = back.msg.content_topic_len == m->msg.content_topic_len;
  if (!ld_waku_message_equal(&back.msg, &m->msg) && same_topic &&
      memcmp(back.msg.content_topic, m->msg.content_topic, m->msg.content_topic_len) == 0)
    abort();
  ld_lib_json_message_clear(&back);
  free(inner);
  json_decref(root);
  free(ev);
}

static void check_kernel(const char *data, size_t size) {
  ld_lib_json_message_t m;
  char err[512] = "";
  int rc = ld_lib_json_message_parse(data, size, MAX_PAYLOAD, &m, err, sizeof err);
  if (rc != 0) {
    if (m.content_topic != NULL || (!starts_with(err, "Error parsing json message: ") &&
                                    !starts_with(err, "Problem building the WakuMessage: ")))
      abort();
    return;
  }
  if (m.msg.payload_len > MAX_PAYLOAD || m.msg.proof_len > MAX_PAYLOAD ||
      m.msg.meta_len > LD_WAKU_MAX_META_LEN || m.msg.content_topic_len > LD_LIB_CONTENT_TOPIC_MAX)
    abort();
  check_round_trip(&m);
  ld_lib_json_message_clear(&m);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  check_send((const char *)data, size);
  check_kernel((const char *)data, size);
  return 0;
}
