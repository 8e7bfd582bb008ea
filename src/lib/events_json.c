#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "base/base64.h"
#include "rest/json.h"
#include "lib/events_json.h"

/* ---- values --------------------------------------------------------------------------------- */

static json_t *text(const char *s) {
  return ld_rest_json_string(s, s != NULL ? strlen(s) : 0);
}

static json_t *byte_array(const uint8_t *b, size_t n) {
  json_t *a = json_array();
  for (size_t i = 0; a != NULL && i < n; i++) {
    if (json_array_append_new(a, json_integer(b[i])) != 0) {
      json_decref(a);
      return NULL;
    }
  }
  return a;
}

/* ---- objects -------------------------------------------------------------------------------- */

/* Sets `key` to `v` (stolen); a NULL value fails the object (it is freed and NULL returned). */
static json_t *put(json_t *obj, const char *key, json_t *v) {
  if (obj == NULL) {
    json_decref(v);
    return NULL;
  }
  if (v == NULL || json_object_set_new(obj, key, v) != 0) {
    json_decref(obj);
    return NULL;
  }
  return obj;
}

static json_t *event(const char *type) {
  return put(json_object(), "eventType", json_string(type));
}

/* Dumps and frees `obj`. */
static char *finish(json_t *obj, size_t *len) {
  if (obj == NULL)
    return NULL;
  char *s = json_dumps(obj, JSON_COMPACT | JSON_PRESERVE_ORDER);
  json_decref(obj);
  if (s != NULL && len != NULL)
    *len = strlen(s);
  return s;
}

/* ---- events --------------------------------------------------------------------------------- */

char *ld_lib_event_send_json(const char *event_type, const ld_messaging_send_event_t *ev,
                             size_t *len) {
  json_t *o = event(event_type);
  o = put(o, "requestId", text(ev->request_id));
  o = put(o, "messageHash", ev->has_hash ? ld_rest_json_hash(ev->hash) : json_string(""));
  if (strcmp(event_type, LD_LIB_EVENT_MESSAGE_ERROR) == 0)
    o = put(o, "error", text(ev->error));
  return finish(o, len);
}

static json_t *received_message(const ld_waku_message_t *m) {
  json_t *o = put(json_object(), "payload", byte_array(m->payload, m->payload_len));
  o = put(o, "contentTopic", ld_rest_json_string(m->content_topic, m->content_topic_len));
  o = put(o, "meta", byte_array(m->meta, m->meta_len));
  o = put(o, "version", json_integer(m->version));
  o = put(o, "timestamp", json_integer(m->timestamp));
  o = put(o, "ephemeral", json_boolean(m->ephemeral));
  return put(o, "proof", byte_array(m->proof, m->proof_len));
}

char *ld_lib_event_received_json(const uint8_t hash[LD_WAKU_HASH_LEN], const ld_waku_message_t *msg,
                                 size_t *len) {
  json_t *o = event(LD_LIB_EVENT_MESSAGE_RECEIVED);
  o = put(o, "messageHash", ld_rest_json_hash(hash));
  o = put(o, "message", received_message(msg));
  return finish(o, len);
}

char *ld_lib_event_connection_status_json(ld_connection_status_t status, size_t *len) {
  json_t *o = event(LD_LIB_EVENT_CONNECTION_STATUS);
  o = put(o, "connectionStatus", json_string(ld_connection_status_name(status)));
  return finish(o, len);
}

char *ld_lib_event_topic_health_json(const char *pubsub_topic, ld_relay_health_t health,
                                     size_t *len) {
  json_t *o = event(LD_LIB_EVENT_TOPIC_HEALTH);
  o = put(o, "pubsubTopic", text(pubsub_topic));
  o = put(o, "topicHealth", json_string(ld_relay_health_name(health)));
  return finish(o, len);
}

static const char *peer_event_name(ld_lib_peer_event_t ev) {
  switch (ev) {
  case LD_LIB_PEER_DISCONNECTED:
    return "EventDisconnected";
  case LD_LIB_PEER_IDENTIFIED:
    return "EventIdentified";
  case LD_LIB_PEER_METADATA_UPDATE:
    return "EventMetadataUpdated";
  default:
    return "EventConnected";
  }
}

char *ld_lib_event_connection_change_json(const ld_peerid_t *peer, ld_lib_peer_event_t ev,
                                          size_t *len) {
  char id[LD_PEERID_TEXT_MAX];
  if (ld_peerid_to_text(peer, id, sizeof id) < 0)
    id[0] = '\0';
  json_t *o = event(LD_LIB_EVENT_CONNECTION_CHANGE);
  o = put(o, "peerId", json_string(id));
  o = put(o, "peerEvent", json_string(peer_event_name(ev)));
  return finish(o, len);
}

static json_t *kernel_message(const ld_waku_message_t *m) {
  json_t *o = put(json_object(), "payload", ld_rest_json_base64(m->payload, m->payload_len));
  o = put(o, "contentTopic", ld_rest_json_string(m->content_topic, m->content_topic_len));
  o = put(o, "version", json_integer(m->version));
  o = put(o, "timestamp", json_integer(m->timestamp));
  o = put(o, "ephemeral", json_boolean(m->ephemeral));
  o = put(o, "meta", ld_rest_json_base64(m->meta, m->meta_len));
  return put(o, "proof", ld_rest_json_base64(m->proof, m->proof_len));
}

char *ld_lib_event_kernel_message_json(const char *pubsub_topic,
                                       const uint8_t hash[LD_WAKU_HASH_LEN],
                                       const ld_waku_message_t *msg, size_t *len) {
  json_t *o = event(LD_LIB_EVENT_KERNEL_MESSAGE);
  o = put(o, "pubsubTopic", text(pubsub_topic));
  o = put(o, "messageHash", ld_rest_json_hash(hash));
  o = put(o, "wakuMessage", kernel_message(msg));
  return finish(o, len);
}

char *ld_lib_event_not_responding_json(size_t *len) {
  return finish(event(LD_LIB_EVENT_NOT_RESPONDING), len);
}
