#include "rest/service_json.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/base64.h"
#include "base/error.h"
#include "rest/json.h"

static bool plain_string(const json_t *v) {
  return json_is_string(v) && strlen(json_string_value(v)) == json_string_length(v);
}

/* An optional string field: NULL when absent or empty; false when present but not a string. */
static bool opt_topic(const json_t *obj, const char *key, const char **out) {
  const json_t *v = json_object_get(obj, key);
  *out = NULL;
  if (v == NULL)
    return true;
  if (!plain_string(v))
    return false;
  if (json_string_length(v) > 0)
    *out = json_string_value(v);
  return true;
}

/* ---- lightpush ------------------------------------------------------------------------------- */

int ld_rest_push_request_parse(const json_t *body, int64_t now_ns, ld_rest_push_request_t *out,
                               char *err, size_t errcap) {
  memset(out, 0, sizeof *out);
  ld_waku_message_init(&out->msg);
  if (!json_is_object(body))
    return ld_error_fmt(err, errcap, LD_ERR_MALFORMED, "Expected a JSON object");
  if (!opt_topic(body, "pubsubTopic", &out->pubsub_topic))
    return ld_error_fmt(err, errcap, LD_ERR_MALFORMED, "Field `pubsubTopic` must be a string");
  const json_t *m = json_object_get(body, "message");
  if (m == NULL)
    return ld_error_fmt(err, errcap, LD_ERR_MALFORMED, "Field `message` is missing");
  if (!json_is_object(m))
    return ld_error_fmt(err, errcap, LD_ERR_MALFORMED, "Field `message` must be an object");
  int rc = ld_rest_message_from_json(m, now_ns, true, 0, &out->msg, err, errcap);
  if (rc != 0)
    out->pubsub_topic = NULL;
  return rc;
}

void ld_rest_push_request_clear(ld_rest_push_request_t *r) {
  ld_waku_message_clear(&r->msg);
  r->pubsub_topic = NULL;
}

json_t *ld_rest_push_response_json(uint32_t status_code, const char *status_desc,
                                   uint32_t relay_peer_count) {
  json_t *o = json_object();
  if (o == NULL)
    return NULL;
  int rc = 0;
  if (status_code == LD_REST_LIGHTPUSH_SUCCESS)
    rc = ld_rest_json_set(o, "relayPeerCount", json_integer(relay_peer_count));
  else if (status_desc != NULL)
    rc = ld_rest_json_set(o, "statusDesc", ld_rest_json_string(status_desc, strlen(status_desc)));
  if (rc != 0) {
    json_decref(o);
    return NULL;
  }
  return o;
}

unsigned ld_rest_push_http_status(uint32_t status_code) {
  /* The statuses of nwaku's HTTP library (nim-http-utils HttpCode). */
  static const uint16_t known[] = {100, 101, 200, 201, 202, 203, 204, 205, 206, 207, 300, 301,
                                   302, 303, 304, 305, 307, 400, 401, 403, 404, 405, 406, 407,
                                   408, 409, 410, 411, 412, 413, 414, 415, 416, 417, 418, 421,
                                   422, 426, 428, 429, 431, 451, 500, 501, 502, 503, 504, 505};
  for (size_t i = 0; i < sizeof known / sizeof known[0]; i++)
    if (known[i] == status_code)
      return status_code;
  return 500;
}

/* ---- filter ---------------------------------------------------------------------------------- */

static int read_content_filters(const json_t *body, ld_rest_filter_request_t *out, char *err,
                                size_t errcap) {
  const json_t *cf = json_object_get(body, "contentFilters");
  if (cf == NULL)
    return ld_error_fmt(err, errcap, LD_ERR_MALFORMED, "Field `contentFilters` is missing");
  char why[LD_REST_ERR_MAX];
  int rc = ld_rest_json_strings(cf, &out->content_topics, &out->n_content_topics, why, sizeof why);
  if (rc == LD_ERR_MALFORMED)
    return ld_error_fmt(err, errcap, rc, "Field `contentFilters` must be a list of strings");
  if (rc != 0)
    return ld_error_fmt(err, errcap, rc, "%s", why);
  if (out->n_content_topics == 0)
    return ld_error_fmt(err, errcap, LD_ERR_MALFORMED, "Field `contentFilters` is empty");
  return 0;
}

int ld_rest_filter_request_parse(const json_t *body, bool with_topics,
                                 ld_rest_filter_request_t *out, char *err, size_t errcap) {
  memset(out, 0, sizeof *out);
  if (!json_is_object(body))
    return ld_error_fmt(err, errcap, LD_ERR_MALFORMED, "Expected a JSON object");
  const json_t *rid = json_object_get(body, "requestId");
  if (rid == NULL)
    return ld_error_fmt(err, errcap, LD_ERR_MALFORMED, "Field `requestId` is missing");
  if (!plain_string(rid))
    return ld_error_fmt(err, errcap, LD_ERR_MALFORMED, "Field `requestId` must be a string");
  out->request_id = json_string_value(rid);
  if (!with_topics)
    return 0;
  int rc =
      opt_topic(body, "pubsubTopic", &out->pubsub_topic)
          ? read_content_filters(body, out, err, errcap)
          : ld_error_fmt(err, errcap, LD_ERR_MALFORMED, "Field `pubsubTopic` must be a string");
  if (rc != 0)
    ld_rest_filter_request_clear(out);
  return rc;
}

void ld_rest_filter_request_clear(ld_rest_filter_request_t *r) {
  free(r->content_topics);
  memset(r, 0, sizeof *r);
}

json_t *ld_rest_filter_response_json(const char *request_id, const char *status_desc) {
  json_t *o = json_object();
  if (o == NULL)
    return NULL;
  const char *desc = status_desc != NULL ? status_desc : "";
  int rc = ld_rest_json_set(o, "requestId", ld_rest_json_string(request_id, strlen(request_id)));
  rc |= ld_rest_json_set(o, "statusDesc", ld_rest_json_string(desc, strlen(desc)));
  if (rc != 0) {
    json_decref(o);
    return NULL;
  }
  return o;
}

unsigned ld_rest_filter_http_status(uint32_t status_code) {
  switch (status_code) {
  case LD_REST_FILTER_BAD_RESPONSE:
    return 500;
  case LD_REST_FILTER_BAD_REQUEST:
  case LD_REST_FILTER_NOT_FOUND:
  case LD_REST_FILTER_TOO_MANY_REQUESTS:
  case LD_REST_FILTER_SERVICE_UNAVAILABLE:
  case LD_REST_FILTER_PEER_DIAL_FAILURE:
    return status_code;
  default:
    return 200;
  }
}

const char *ld_rest_filter_status_desc(uint32_t status_code, const char *status_desc) {
  const char *fallback = NULL;
  switch (status_code) {
  case LD_REST_FILTER_OK:
    return "OK";
  case LD_REST_FILTER_BAD_RESPONSE:
    fallback = "bad response";
    break;
  case LD_REST_FILTER_BAD_REQUEST:
    fallback = "bad request";
    break;
  case LD_REST_FILTER_NOT_FOUND:
    fallback = "peer has no subscriptions";
    break;
  case LD_REST_FILTER_TOO_MANY_REQUESTS:
    fallback = "too many requests";
    break;
  case LD_REST_FILTER_SERVICE_UNAVAILABLE:
    fallback = "service unavailable";
    break;
  case LD_REST_FILTER_PEER_DIAL_FAILURE:
    fallback = "";
    break;
  default:
    return "UNKNOWN";
  }
  return status_desc != NULL ? status_desc : fallback;
}

json_t *ld_rest_filter_messages_json(const ld_waku_message_t *msgs, size_t n) {
  json_t *list = json_array();
  for (size_t i = 0; i < n && list != NULL; i++) {
    json_t *m = ld_rest_message_to_json(&msgs[i]);
    if (m != NULL)
      json_object_del(m, "proof");
    if (m == NULL || json_array_append_new(list, m) != 0) {
      json_decref(list);
      list = NULL;
    }
  }
  return list;
}

/* ---- store ----------------------------------------------------------------------------------- */

static json_t *store_message_json(const ld_waku_message_t *msg) {
  json_t *o = json_object();
  if (o == NULL)
    return NULL;
  int rc = ld_rest_json_set(o, "payload", ld_rest_json_base64(msg->payload, msg->payload_len));
  rc |= ld_rest_json_set(o, "contentTopic",
                         ld_rest_json_string(msg->content_topic, msg->content_topic_len));
  if (msg->meta_len > 0)
    rc |= ld_rest_json_set(o, "meta", ld_rest_json_base64(msg->meta, msg->meta_len));
  rc |= ld_rest_json_set(o, "version", json_integer(msg->version));
  rc |= ld_rest_json_set(o, "timestamp", json_integer(msg->timestamp));
  rc |= ld_rest_json_set(o, "ephemeral", json_boolean(msg->ephemeral));
  if (msg->proof_len > 0)
    rc |= ld_rest_json_set(o, "proof", ld_rest_json_base64(msg->proof, msg->proof_len));
  if (rc != 0) {
    json_decref(o);
    return NULL;
  }
  return o;
}

static json_t *store_entry_json(const ld_rest_store_entry_t *e) {
  json_t *o = json_object();
  if (o == NULL)
    return NULL;
  int rc = ld_rest_json_set(o, "messageHash", ld_rest_json_hash(e->hash));
  if (e->message != NULL)
    rc |= ld_rest_json_set(o, "message", store_message_json(e->message));
  if (e->pubsub_topic != NULL)
    rc |= ld_rest_json_set(o, "pubsubTopic",
                           ld_rest_json_string(e->pubsub_topic, strlen(e->pubsub_topic)));
  if (rc != 0) {
    json_decref(o);
    return NULL;
  }
  return o;
}

static json_t *store_entries_json(const ld_rest_store_result_t *res) {
  json_t *list = json_array();
  for (size_t i = 0; i < res->n_entries && list != NULL; i++) {
    json_t *e = store_entry_json(&res->entries[i]);
    if (e == NULL || json_array_append_new(list, e) != 0) {
      json_decref(list);
      list = NULL;
    }
  }
  return list;
}

json_t *ld_rest_store_response_json(const ld_rest_store_result_t *res) {
  json_t *o = json_object();
  if (o == NULL)
    return NULL;
  const char *id = res->request_id != NULL ? res->request_id : "";
  const char *desc = res->status_desc != NULL ? res->status_desc : "";
  int rc = ld_rest_json_set(o, "requestId", ld_rest_json_string(id, strlen(id)));
  rc |= ld_rest_json_set(o, "statusCode", json_integer(res->status_code));
  rc |= ld_rest_json_set(o, "statusDesc", ld_rest_json_string(desc, strlen(desc)));
  rc |= ld_rest_json_set(o, "messages", store_entries_json(res));
  if (res->cursor != NULL)
    rc |= ld_rest_json_set(o, "paginationCursor", ld_rest_json_hash(res->cursor));
  if (rc != 0) {
    json_decref(o);
    return NULL;
  }
  return o;
}
