/* `logosdelivery subscribe --peer <multiaddr> --content-topic T`: joins the relay mesh through the
 * peer and prints each message of that content topic as one JSON line:
 *   {"pubsubTopic", "contentTopic", "payload" (base64), "text" (when printable UTF-8),
 *    "timestamp", "ephemeral", "meta"? (base64), "hash" ("0x…")} */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/base64.h"
#include "base/error.h"
#include "base/log.h"
#include "logosdelivery/app.h"
#include "logosdelivery/client.h"

typedef struct subscribe_state {
  int64_t received;
  bool announced;
} subscribe_state_t;

/* Printable: valid UTF-8 (jansson checks) without control characters other than tab and newline. */
static bool printable(const uint8_t *p, size_t len) {
  for (size_t i = 0; i < len; i++)
    if ((p[i] < 0x20 && p[i] != '\t' && p[i] != '\n' && p[i] != '\r') || p[i] == 0x7f)
      return false;
  return true;
}

static json_t *base64_json(const uint8_t *data, size_t len) {
  size_t cap = LD_BASE64_ENCODED_LEN(len) + 1;
  char *text = malloc(cap);
  if (text == NULL || ld_base64_encode(data, len, text, cap) < 0) {
    free(text);
    return json_null();
  }
  json_t *s = json_string(text);
  free(text);
  return s;
}

static json_t *message_json(const ld_fanout_message_t *m) {
  const ld_waku_message_t *msg = m->msg;
  char hex[LD_WAKU_HASH_HEX_LEN + 1];
  ld_waku_hash_to_hex(m->hash, hex);
  json_t *o = json_object();
  json_object_set_new(o, "pubsubTopic", json_string(m->pubsub_topic));
  json_object_set_new(o, "contentTopic", json_stringn(msg->content_topic, msg->content_topic_len));
  json_object_set_new(o, "payload", base64_json(msg->payload, msg->payload_len));
  json_t *text = printable(msg->payload, msg->payload_len)
                     ? json_stringn((const char *)msg->payload, msg->payload_len)
                     : NULL;
  if (text != NULL)
    json_object_set_new(o, "text", text);
  json_object_set_new(o, "timestamp", json_integer(msg->timestamp));
  json_object_set_new(o, "ephemeral", json_boolean(msg->ephemeral));
  if (msg->meta_len > 0)
    json_object_set_new(o, "meta", base64_json(msg->meta, msg->meta_len));
  json_object_set_new(o, "hash", json_string(hex));
  return o;
}

static void subscribe_message(ld_client_t *c, const ld_fanout_message_t *m) {
  subscribe_state_t *s = c->user_data;
  const ld_waku_message_t *msg = m->msg;
  if (strcmp(m->pubsub_topic, c->topic) != 0 ||
      msg->content_topic_len != strlen(c->opts.content_topic) ||
      memcmp(msg->content_topic, c->opts.content_topic, msg->content_topic_len) != 0)
    return;
  json_t *o = message_json(m);
  char *line = json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER);
  json_decref(o);
  if (line != NULL) {
    printf("%s\n", line);
    fflush(stdout);
    free(line);
  }
  if (c->opts.count > 0 && ++s->received >= c->opts.count)
    ld_client_finish(c, LD_EXIT_OK);
}

/* Announced once the peer is in our mesh of the topic: from then on it forwards every new
 * message to us (a message published before that is not repaired by gossip). */
static void subscribe_tick(ld_client_t *c) {
  subscribe_state_t *s = c->user_data;
  if (s->announced || ld_client_mesh_peers(c) == 0)
    return;
  s->announced = true;
  fprintf(stderr, "subscribe: receiving %s on %s through %s\n", c->opts.content_topic, c->topic,
          c->opts.peer);
}

static void subscribe_peer_lost(ld_client_t *c, int reason) {
  subscribe_state_t *s = c->user_data;
  s->announced = false;
  LD_WARN("subscribe", "lost the connection to %s (%s); reconnecting", c->opts.peer,
          reason != 0 ? ld_errname(reason) : "closed");
}

int ld_app_subscribe(int argc, char **argv) {
  static ld_client_t c;
  const char *positional[8];
  size_t n_positional = 0;
  char err[512];
  memset(&c, 0, sizeof c);
  c.command = "subscribe";
  if (ld_client_parse("subscribe", argc, argv, false, &c.opts, positional, &n_positional, err,
                      sizeof err) != 0) {
    fprintf(stderr, "%s\n", err);
    return LD_EXIT_USAGE;
  }
  if (c.opts.help)
    return LD_EXIT_OK;
  if (n_positional != 0) {
    fprintf(stderr, "subscribe: unexpected argument '%s'\n", positional[0]);
    return LD_EXIT_USAGE;
  }
  subscribe_state_t s = {0, false};
  c.user_data = &s;
  static const ld_client_hooks_t hooks = {subscribe_tick, subscribe_message, subscribe_peer_lost};
  return ld_client_run(&c, &hooks);
}
