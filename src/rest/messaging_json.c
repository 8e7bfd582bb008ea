#include "rest/messaging_json.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/base64.h"
#include "base/error.h"
#include "rest/json.h"

static json_t *finish(json_t *obj, int rc) {
  if (rc != 0) {
    json_decref(obj);
    return NULL;
  }
  return obj;
}

static json_t *str(const char *s) {
  return ld_rest_json_string(s, s != NULL ? strlen(s) : 0);
}

/* A JSON array of the `n` items `one(ctx, i)` builds; NULL when any fails. */
static json_t *list_json(size_t n, json_t *(*one)(const void *ctx, size_t i), const void *ctx) {
  json_t *list = json_array();
  for (size_t i = 0; list != NULL && i < n; i++) {
    json_t *item = one(ctx, i);
    if (item == NULL || json_array_append_new(list, item) != 0) {
      json_decref(list);
      list = NULL;
    }
  }
  return list;
}

/* ---- small answers --------------------------------------------------------------------------- */

static json_t *one_field(const char *key, json_t *value) {
  json_t *o = json_object();
  if (o == NULL) {
    json_decref(value);
    return NULL;
  }
  return finish(o, ld_rest_json_set(o, key, value));
}

json_t *ld_rest_error_json(const char *text) {
  return one_field("error", str(text));
}

json_t *ld_rest_request_id_json(const char *request_id) {
  return one_field("requestId", str(request_id));
}

json_t *ld_rest_subscription_id_json(const char *subscription_id) {
  return one_field("subscriptionId", str(subscription_id));
}

json_t *ld_rest_status_ok_json(void) {
  return one_field("status", json_string("ok"));
}

static json_t *string_item(const void *ctx, size_t i) {
  return str(((const char *const *)ctx)[i]);
}

json_t *ld_rest_string_list_json(const char *const *s, size_t n) {
  return list_json(n, string_item, s);
}

/* ---- event caches ---------------------------------------------------------------------------- */

static json_t *send_event_json(const ld_rest_send_event_t *ev) {
  json_t *o = json_object();
  if (o == NULL)
    return NULL;
  int rc = ld_rest_json_set(o, "kind", json_string(ld_rest_send_kind_name(ev->kind)));
  rc |= ld_rest_json_set(o, "messageHash",
                         ev->has_hash ? ld_rest_json_hash(ev->hash) : json_string(""));
  if (ev->kind == LD_REST_SEND_ERROR)
    rc |= ld_rest_json_set(o, "error", str(ev->error));
  rc |= ld_rest_json_set(o, "timestamp", json_integer(ev->timestamp));
  return finish(o, rc);
}

static json_t *send_event_item(const void *ctx, size_t i) {
  return send_event_json(&((const ld_rest_send_event_t *)ctx)[i]);
}

json_t *ld_rest_send_status_json(const ld_rest_send_status_t *s) {
  json_t *o = json_object();
  if (o == NULL)
    return NULL;
  int rc = ld_rest_json_set(o, "requestId", str(s->request_id));
  rc |= ld_rest_json_set(o, "events", list_json(s->n_events, send_event_item, s->events));
  return finish(o, rc);
}

static json_t *status_item(const void *ctx, size_t i) {
  return ld_rest_send_status_json(&((const ld_rest_send_status_t *)ctx)[i]);
}

json_t *ld_rest_send_statuses_json(const ld_rest_send_status_t *s, size_t n) {
  return list_json(n, status_item, s);
}

json_t *ld_rest_received_json(const ld_rest_received_t *r) {
  json_t *o = json_object();
  if (o == NULL)
    return NULL;
  int rc = ld_rest_json_set(o, "messageHash", ld_rest_json_hash(r->hash));
  rc |= ld_rest_json_set(o, "message", ld_rest_message_to_json(&r->msg));
  return finish(o, rc);
}

static json_t *received_item(const void *ctx, size_t i) {
  return ld_rest_received_json(&((const ld_rest_received_t *)ctx)[i]);
}

json_t *ld_rest_received_list_json(const ld_rest_received_t *r, size_t n) {
  return list_json(n, received_item, r);
}

json_t *ld_rest_health_report_json(const char *node_health, const char *connection_status,
                                   json_t *protocols) {
  json_t *o = json_object();
  if (o == NULL || protocols == NULL) {
    json_decref(o);
    json_decref(protocols);
    return NULL;
  }
  int rc = ld_rest_json_set(o, "nodeHealth", str(node_health));
  if (connection_status != NULL)
    rc |= ld_rest_json_set(o, "connectionStatus", str(connection_status));
  rc |= ld_rest_json_set(o, "protocolsHealth", protocols);
  return finish(o, rc);
}

/* ---- requests -------------------------------------------------------------------------------- */

/* A present string field; NULL when absent. *bad is set when present but not a string. */
static const char *string_field(const json_t *obj, const char *key, size_t *len, bool *bad) {
  const json_t *v = json_object_get(obj, key);
  *bad = v != NULL && !json_is_string(v);
  if (v == NULL || *bad)
    return NULL;
  *len = json_string_length(v);
  return json_string_value(v);
}

/* A required string that is not blank (and holds no NUL byte). */
static int required_string(const json_t *obj, const char *key, const char **out, size_t *len,
                           char *err, size_t cap) {
  bool bad = false;
  size_t n = 0;
  const char *s = string_field(obj, key, &n, &bad);
  if (s == NULL || ld_rest_is_blank(s, n) || strlen(s) != n)
    return ld_error_fmt(err, cap, LD_ERR_MALFORMED, "Field `%s` is missing or empty", key);
  *out = s;
  if (len != NULL)
    *len = n;
  return 0;
}

static int decode_field(const char *key, const char *text, size_t len, uint8_t **out,
                        size_t *outlen, char *err, size_t cap) {
  int rc = ld_rest_base64_decode(text, len, out, outlen);
  if (rc == LD_ERR_NOMEM)
    return ld_error_fmt(err, cap, rc, "%s", "Out of memory");
  if (rc != 0)
    return ld_error_fmt(err, cap, rc, "Incorrect base64 string in field `%s`", key);
  return 0;
}

static int read_envelope_fields(const json_t *j, ld_rest_envelope_t *e, const char **payload,
                                size_t *payload_len, const char **meta, size_t *meta_len, char *err,
                                size_t cap) {
  if (!json_is_object(j))
    return ld_error_fmt(err, cap, LD_ERR_MALFORMED, "%s", "Expected a JSON object");
  int rc = required_string(j, "payload", payload, payload_len, err, cap);
  rc = rc ? rc
          : required_string(j, "contentTopic", &e->content_topic, &e->content_topic_len, err, cap);
  if (rc != 0)
    return rc;
  bool bad = false;
  *meta = string_field(j, "meta", meta_len, &bad);
  if (bad)
    return ld_error_fmt(err, cap, LD_ERR_MALFORMED, "%s", "Field `meta` must be a base64 string");
  const json_t *eph = json_object_get(j, "ephemeral");
  if (eph != NULL && !json_is_boolean(eph))
    return ld_error_fmt(err, cap, LD_ERR_MALFORMED, "%s", "Field `ephemeral` must be a boolean");
  e->ephemeral = eph != NULL && json_is_true(eph);
  return 0;
}

int ld_rest_envelope_parse(const json_t *json, size_t max_payload, ld_rest_envelope_t *out,
                           char *err, size_t errcap) {
  memset(out, 0, sizeof *out);
  const char *payload = NULL, *meta = NULL;
  size_t payload_len = 0, meta_len = 0;
  int rc = read_envelope_fields(json, out, &payload, &payload_len, &meta, &meta_len, err, errcap);
  rc = rc ? rc
          : decode_field("payload", payload, payload_len, &out->payload, &out->payload_len, err,
                         errcap);
  if (rc == 0 && max_payload > 0 && out->payload_len > max_payload)
    rc = ld_error_fmt(err, errcap, LD_ERR_TOO_LARGE, "%s", "Field `payload` is too large");
  if (rc == 0 && meta != NULL && meta_len > 0)
    rc = decode_field("meta", meta, meta_len, &out->meta, &out->meta_len, err, errcap);
  if (rc == 0 && out->meta_len > LD_WAKU_MAX_META_LEN)
    rc = ld_error_fmt(err, errcap, LD_ERR_FIELD_TOO_LONG, "%s",
                      "Field `meta` is longer than 64 bytes");
  if (rc != 0)
    ld_rest_envelope_clear(out);
  return rc;
}

void ld_rest_envelope_clear(ld_rest_envelope_t *e) {
  free(e->payload);
  free(e->meta);
  memset(e, 0, sizeof *e);
}

int ld_rest_subscribe_request_parse(const json_t *json, const char **pubsub_topic,
                                    const char **content_topic, char *err, size_t errcap) {
  if (!json_is_object(json))
    return ld_error_fmt(err, errcap, LD_ERR_MALFORMED, "%s", "Expected a JSON object");
  int rc = required_string(json, "contentTopic", content_topic, NULL, err, errcap);
  if (rc != 0)
    return rc;
  bool bad = false;
  size_t len = 0;
  *pubsub_topic = string_field(json, "pubsubTopic", &len, &bad);
  if (bad || (*pubsub_topic != NULL && strlen(*pubsub_topic) != len))
    return ld_error_fmt(err, errcap, LD_ERR_MALFORMED, "%s",
                        "Field `pubsubTopic` must be a string");
  return 0;
}

int ld_rest_unsubscribe_request_parse(const json_t *json, const char **subscription_id, char *err,
                                      size_t errcap) {
  if (!json_is_object(json))
    return ld_error_fmt(err, errcap, LD_ERR_MALFORMED, "%s", "Expected a JSON object");
  return required_string(json, "subscriptionId", subscription_id, NULL, err, errcap);
}

int ld_rest_parse_count(const char *text, size_t *out) {
  if (text == NULL || text[0] == '\0')
    return LD_ERR_MALFORMED;
  uint64_t v = 0;
  for (const char *p = text; *p != '\0'; p++) {
    if (*p < '0' || *p > '9')
      return LD_ERR_MALFORMED;
    v = v * 10 + (uint64_t)(*p - '0');
    if (v > LD_REST_MAX_COUNT)
      return LD_ERR_OVERFLOW;
  }
  *out = (size_t)v;
  return 0;
}
