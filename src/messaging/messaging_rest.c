#include "messaging/messaging_rest.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/clock.h"
#include "base/error.h"
#include "base/hashmap.h"
#include "base/log.h"
#include "node/broker.h"
/* The node's REST server is not exposed by node/node.h: read it from the node's structure. */
#include "rest/health.h"
#include "rest/json.h"
#include "rest/messaging_events.h"
#include "rest/messaging_json.h"
#include "rest/server_groups.h"
#include "waku/core/sharding.h"
#include "waku/core/topics.h"

#define TOPIC "rest"
/* Room for one query parameter value (content topics, IDs, hashes). */
#define QUERY_MAX 1024
#define AUTOSHARDING_REQUIRED                                                                      \
  "autosharding is not configured: content-topic subscriptions and sends need --preset or "        \
  "--num-shards-in-network"

static const int SEND_KINDS[] = {LD_EVENT_MESSAGING_PROPAGATED, LD_EVENT_MESSAGING_SENT,
                                 LD_EVENT_MESSAGING_ERROR};
#define N_LISTENERS 4

typedef struct mrest {
  ld_messaging_t *m;
  ld_rest_server_t *srv;
  ld_broker_t *broker;
  int64_t listeners[N_LISTENERS];
  bool provider;
  bool routes;
  ld_rest_msg_events_t *events;
  ld_rest_health_source_t health;
  uint16_t cluster_id;
  uint32_t num_shards;
} mrest_t;

/* ---- answers --------------------------------------------------------------------------------- */

static void respond_text(ld_http_request_t *req, unsigned status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void respond_text(ld_http_request_t *req, unsigned status, const char *fmt, ...) {
  char text[LD_REST_ERR_MAX + QUERY_MAX];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(text, sizeof text, fmt, ap);
  va_end(ap);
  ld_http_respond_text(req, status, text);
}

/* Answers `json` (consumed) with `status`, or 500 when it is NULL. */
static void respond_json(ld_http_request_t *req, unsigned status, json_t *json) {
  if (json == NULL) {
    ld_http_respond_text(req, 500, "An error occurred while building the json response");
    return;
  }
  ld_http_respond_json(req, status, json);
  json_decref(json);
}

/* The draft's error answer {"error": "<text>"}. */
static void respond_error(ld_http_request_t *req, unsigned status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void respond_error(ld_http_request_t *req, unsigned status, const char *fmt, ...) {
  char text[LD_REST_ERR_MAX + QUERY_MAX];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(text, sizeof text, fmt, ap);
  va_end(ap);
  respond_json(req, status, ld_rest_error_json(text));
}

static void options_ok(ld_rest_server_t *srv, ld_http_request_t *req, const ld_route_match_t *m,
                       void *user_data) {
  (void)srv;
  (void)m;
  (void)user_data;
  ld_http_respond_text(req, 200, "OK");
}

/* Parses the body as JSON; on failure answers 400 with the reason (as text, or as the draft's
 * JSON error) and returns the error. */
static int read_body(ld_http_request_t *req, bool json_errors, json_t **out) {
  char err[LD_REST_ERR_MAX];
  size_t len = 0;
  const uint8_t *body = ld_http_request_body(req, &len);
  int rc = ld_rest_json_parse(body, len, ld_http_request_header(req, "Content-Type"), out, err,
                              sizeof err);
  if (rc != 0 && json_errors)
    respond_error(req, 400, "%s", err);
  else if (rc != 0)
    ld_http_respond_text(req, 400, err);
  return rc;
}

/* ---- MessageRecord --------------------------------------------------------------------------- */

static json_t *text_json(const char *s) {
  return ld_rest_json_string(s, strlen(s));
}

json_t *ld_messaging_rest_record_json(const ld_message_record_t *r) {
  json_t *o = json_object();
  if (o == NULL)
    return NULL;
  int rc = 0;
  if (r->has_request_id) {
    rc |= ld_rest_json_set(o, "sending", json_boolean(r->sending));
    rc |= ld_rest_json_set(o, "sent", json_boolean(r->sent));
  }
  rc |= ld_rest_json_set(o, "stored", json_boolean(r->stored));
  rc |= ld_rest_json_set(o, "received", json_boolean(r->received));
  if (r->has_request_id)
    rc |= ld_rest_json_set(o, "requestId", text_json(r->request_id));
  if (r->has_hash)
    rc |= ld_rest_json_set(o, "messageHash", ld_rest_json_hash(r->hash));
  if (r->pubsub_topic != NULL && r->pubsub_topic[0] != '\0')
    rc |= ld_rest_json_set(o, "pubsubTopic", text_json(r->pubsub_topic));
  rc |= ld_rest_json_set(o, "message", ld_rest_message_to_sparse_json(&r->msg));
  if (r->error != NULL)
    rc |= ld_rest_json_set(o, "error", text_json(r->error));
  if (rc != 0) {
    json_decref(o);
    return NULL;
  }
  return o;
}

json_t *ld_messaging_rest_records_json(const ld_message_record_t *const *r, size_t n) {
  json_t *list = json_array();
  for (size_t i = 0; list != NULL && i < n; i++) {
    json_t *item = ld_messaging_rest_record_json(r[i]);
    if (item == NULL || json_array_append_new(list, item) != 0) {
      json_decref(list);
      list = NULL;
    }
  }
  return list;
}

/* ---- content topics -------------------------------------------------------------------------- */

/* Writes why `topic` cannot be used with autosharding into `why`; 0 when it can. */
static int check_topic(const char *topic, char *why, size_t cap) {
  ld_content_topic_t ct;
  ld_topic_error_t reason = LD_TOPIC_OK;
  if (ld_content_topic_parse(topic, strlen(topic), &ct, &reason) != 0) {
    snprintf(why, cap, "invalid content topic: '%s': %s", topic, ld_topic_strerror(reason));
    return LD_ERR_BAD_CONTENT_TOPIC;
  }
  if (ct.has_generation && ct.generation != 0) {
    snprintf(why, cap,
             "unsupported content topic generation in: '%s': only generation 0 is supported",
             topic);
    return LD_ERR_UNSUPPORTED;
  }
  return 0;
}

/* ---- broker listeners ------------------------------------------------------------------------ */

static ld_rest_send_kind_t send_kind(int kind) {
  if (kind == LD_EVENT_MESSAGING_SENT)
    return LD_REST_SEND_SENT;
  return kind == LD_EVENT_MESSAGING_ERROR ? LD_REST_SEND_ERROR : LD_REST_SEND_PROPAGATED;
}

static void on_send_event(int kind, const void *payload, void *user_data) {
  const ld_messaging_send_event_t *ev = payload;
  mrest_t *r = user_data;
  int rc =
      ld_rest_msg_events_add_send(r->events, ev->request_id, send_kind(kind),
                                  ev->has_hash ? ev->hash : NULL, ev->error, (int64_t)ld_wall_ns());
  if (rc != 0 && rc != LD_ERR_LIMIT)
    LD_WARN(TOPIC, "Messaging REST: send event of %s not cached: %s", ev->request_id,
            ld_strerror(rc));
}

static void on_received(int kind, const void *payload, void *user_data) {
  (void)kind;
  const ld_messaging_received_event_t *ev = payload;
  mrest_t *r = user_data;
  if (ld_rest_msg_events_add_received(r->events, ev->hash, ev->msg) != 0)
    LD_WARN(TOPIC, "Messaging REST: received message not cached: out of memory");
}

static int provide_state(const void *request, void *response, void *user_data) {
  (void)request;
  *(void **)response = user_data;
  return 0;
}

/* ---- /messaging/v1 --------------------------------------------------------------------------- */

/* Checks every topic and autosharding; answers 400 / 503 and returns false on failure. */
static bool topics_usable(mrest_t *r, ld_http_request_t *req, const char *const *topics, size_t n) {
  char why[LD_REST_ERR_MAX + QUERY_MAX];
  for (size_t i = 0; i < n; i++) {
    if (check_topic(topics[i], why, sizeof why) != 0) {
      ld_http_respond_text(req, 400, why);
      return false;
    }
  }
  if (r->num_shards == 0) {
    ld_http_respond_text(req, 503, AUTOSHARDING_REQUIRED);
    return false;
  }
  return true;
}

static int apply_subscription(mrest_t *r, const char *topic, bool subscribe, char *why,
                              size_t cap) {
  int rc = subscribe ? ld_messaging_subscribe(r->m, topic, why, cap)
                     : ld_messaging_unsubscribe(r->m, topic, why, cap);
  if (rc == 0 && subscribe)
    if (rc != 0 && why[0] == '\0')
      snprintf(why, cap, "%s", ld_strerror(rc));
  return rc;
}

static void subscriptions(mrest_t *r, ld_http_request_t *req, bool subscribe) {
  json_t *body = NULL;
  const char **topics = NULL;
  size_t n = 0;
  char err[LD_REST_ERR_MAX] = "";
  if (read_body(req, false, &body) != 0)
    return;
  if (ld_rest_json_strings(body, &topics, &n, err, sizeof err) != 0) {
    respond_text(req, 400, "Invalid content body, could not decode: %s", err);
  } else if (topics_usable(r, req, topics, n)) {
    int rc = 0;
    for (size_t i = 0; i < n && rc == 0; i++)
      rc = apply_subscription(r, topics[i], subscribe, err, sizeof err);
    const char *what = subscribe ? "Subscribe" : "Unsubscribe";
    if (rc != 0) {
      LD_ERROR(TOPIC, "Messaging %s failed: %s", what, err);
      respond_text(req, 500, "%s failed: %s", what, err);
    } else {
      ld_http_respond_text(req, 200, "OK");
    }
  }
  free(topics);
  json_decref(body);
}

static void post_subscriptions(ld_rest_server_t *srv, ld_http_request_t *req,
                               const ld_route_match_t *m, void *user_data) {
  (void)srv;
  (void)m;
  subscriptions(user_data, req, true);
}

static void delete_subscriptions(ld_rest_server_t *srv, ld_http_request_t *req,
                                 const ld_route_match_t *m, void *user_data) {
  (void)srv;
  (void)m;
  subscriptions(user_data, req, false);
}

static void send_envelope(mrest_t *r, ld_http_request_t *req, const ld_rest_envelope_t *e) {
  char why[LD_REST_ERR_MAX + QUERY_MAX] = "", id[LD_MESSAGING_REQUEST_ID_LEN + 1];
  if (check_topic(e->content_topic, why, sizeof why) != 0) {
    respond_text(req, 400, "Invalid message: %s", why);
    return;
  }
  if (r->num_shards == 0) {
    ld_http_respond_text(req, 503, AUTOSHARDING_REQUIRED);
    return;
  }
  ld_messaging_envelope_t env = {e->content_topic, e->payload,  e->payload_len,
                                 e->meta,          e->meta_len, e->ephemeral};
  int rc = ld_messaging_send(r->m, &env, id, why, sizeof why);
  if (rc != 0) {
    LD_ERROR(TOPIC, "Messaging send failed: %s", why[0] ? why : ld_strerror(rc));
    respond_text(req, 500, "Send failed: %s", why[0] ? why : ld_strerror(rc));
    return;
  }
  respond_json(req, 200, ld_rest_request_id_json(id));
}

static void post_message(ld_rest_server_t *srv, ld_http_request_t *req, const ld_route_match_t *m,
                         void *user_data) {
  (void)srv;
  (void)m;
  json_t *body = NULL;
  ld_rest_envelope_t e;
  char err[LD_REST_ERR_MAX];
  if (read_body(req, false, &body) != 0)
    return;
  int rc = ld_rest_envelope_parse(body, 0, &e, err, sizeof err);
  if (rc == LD_ERR_MALFORMED)
    respond_text(req, 400, "Invalid content body, could not decode: %s", err);
  else if (rc == LD_ERR_NOMEM)
    ld_http_respond_text(req, 500, "Out of memory");
  else if (rc != 0)
    respond_text(req, 400, "Invalid message: %s", err);
  else
    send_envelope(user_data, req, &e);
  ld_rest_envelope_clear(&e);
  json_decref(body);
}

static void get_send_events(ld_rest_server_t *srv, ld_http_request_t *req,
                            const ld_route_match_t *m, void *user_data) {
  (void)srv;
  (void)m;
  mrest_t *r = user_data;
  ld_rest_send_status_t *list = NULL;
  size_t n = 0;
  if (ld_rest_msg_events_poll_sends(r->events, &list, &n) != 0) {
    ld_http_respond_text(req, 500, "Out of memory");
    return;
  }
  respond_json(req, 200, ld_rest_send_statuses_json(list, n));
  ld_rest_send_statuses_free(list, n);
}

static bool valid_request_id(const char *id) {
  size_t len = strlen(id);
  if (len == 0 || len > LD_REST_MSG_EVENTS_MAX_REQUEST_ID)
    return false;
  for (size_t i = 0; i < len; i++)
    if ((unsigned char)id[i] <= ' ' || (unsigned char)id[i] >= 0x7f)
      return false;
  return true;
}

static void get_send_event(ld_rest_server_t *srv, ld_http_request_t *req, const ld_route_match_t *m,
                           void *user_data) {
  (void)srv;
  mrest_t *r = user_data;
  const char *id = ld_route_param(m, "requestId");
  ld_rest_send_status_t st;
  if (id == NULL || !valid_request_id(id)) {
    ld_http_respond_text(req, 400, "Invalid requestId");
  } else if (ld_rest_msg_events_poll_send(r->events, id, &st) != 0) {
    respond_text(req, 404, "No send events for requestId: %s", id);
  } else {
    respond_json(req, 200, ld_rest_send_status_json(&st));
    ld_rest_send_status_clear(&st);
  }
}

static void get_received(ld_rest_server_t *srv, ld_http_request_t *req, const ld_route_match_t *m,
                         void *user_data) {
  (void)srv;
  (void)m;
  mrest_t *r = user_data;
  ld_rest_received_t *list = NULL;
  size_t n = 0;
  if (ld_rest_msg_events_poll_received(r->events, &list, &n) != 0) {
    ld_http_respond_text(req, 500, "Out of memory");
    return;
  }
  respond_json(req, 200, ld_rest_received_list_json(list, n));
  ld_rest_received_free(list, n);
}

/* ---- the draft's Message Storage paths ------------------------------------------------------- */

static void get_message(ld_rest_server_t *srv, ld_http_request_t *req, const ld_route_match_t *m,
                        void *user_data) {
  (void)srv;
  (void)m;
  mrest_t *r = user_data;
  char value[QUERY_MAX];
  uint8_t hash[LD_WAKU_HASH_LEN];
  const ld_message_record_t *rec = NULL;
  if (ld_http_request_query(req, "requestId", value, sizeof value) != NULL) {
    if ((rec = ld_messaging_record_by_request(r->m, value)) == NULL)
      respond_error(req, 404, "Message with requestId '%s' not found", value);
  } else if (ld_http_request_query(req, "hash", value, sizeof value) != NULL) {
    if (ld_waku_hash_from_hex(value, strlen(value), hash) != 0)
      respond_error(req, 400, "Invalid hash '%s'", value);
    else if ((rec = ld_messaging_record_by_hash(r->m, hash)) == NULL)
      respond_error(req, 404, "Message with hash '%s' not found", value);
  } else {
    respond_error(req, 400, "%s", "Missing query parameter: requestId or hash");
  }
  if (rec != NULL)
    respond_json(req, 200, ld_messaging_rest_record_json(rec));
}

typedef struct page {
  const char *key; /* "contentTopic" or "subscriptionId" */
  const char *value;
  size_t skip, take;
} page_t;

static size_t fetch(const mrest_t *r, const page_t *p, size_t skip, size_t take,
                    const ld_message_record_t **out, size_t max) {
  if (strcmp(p->key, "contentTopic") == 0)
    return ld_messaging_records_by_topic(r->m, p->value, skip, take, out, max);
  return ld_messaging_records_by_subscription(r->m, p->value, skip, take, out, max);
}

/* Reads skip or take; absent: `dflt`. Answers 400 and returns false when invalid. */
static bool read_count(ld_http_request_t *req, const char *name, size_t dflt, size_t *out) {
  char value[QUERY_MAX];
  *out = dflt;
  if (ld_http_request_query(req, name, value, sizeof value) == NULL)
    return true;
  if (ld_rest_parse_count(value, out) == 0)
    return true;
  respond_error(req, 400, "Invalid %s '%s': expected a number from 0 to %u", name, value,
                LD_REST_MAX_COUNT);
  return false;
}

static void respond_page(mrest_t *r, ld_http_request_t *req, const page_t *p) {
  const ld_messaging_config_t *cfg = ld_messaging_config(r->m);
  size_t max = cfg->max_records > 0 ? cfg->max_records : LD_MESSAGING_DEFAULT_MAX_RECORDS;
  if (p->take < max)
    max = p->take;
  const ld_message_record_t **recs = calloc(max > 0 ? max : 1, sizeof *recs);
  if (recs == NULL) {
    ld_http_respond_text(req, 500, "Out of memory");
    return;
  }
  size_t n = max > 0 ? fetch(r, p, p->skip, p->take, recs, max) : 0;
  const ld_message_record_t *any = NULL;
  if (n == 0 && fetch(r, p, 0, 1, &any, 1) == 0)
    respond_error(req, 404, "No messages found for %s '%s'", p->key, p->value);
  else
    respond_json(req, 200, ld_messaging_rest_records_json(recs, n));
  free(recs);
}

static void get_messages(ld_rest_server_t *srv, ld_http_request_t *req, const ld_route_match_t *m,
                         void *user_data) {
  (void)srv;
  (void)m;
  char value[QUERY_MAX];
  page_t p = {.key = "contentTopic"};
  if ((p.value = ld_http_request_query(req, p.key, value, sizeof value)) == NULL) {
    p.key = "subscriptionId";
    p.value = ld_http_request_query(req, p.key, value, sizeof value);
  }
  if (p.value == NULL) {
    respond_error(req, 400, "%s", "Missing query parameter: contentTopic or subscriptionId");
    return;
  }
  if (read_count(req, "skip", 0, &p.skip) && read_count(req, "take", SIZE_MAX, &p.take))
    respond_page(user_data, req, &p);
}

/* Checks the draft's optional pubsubTopic against the content topic's autoshard; answers and
 * returns false when it does not fit. */
static bool pubsub_fits(mrest_t *r, ld_http_request_t *req, const char *pubsub, const char *topic) {
  ld_relay_shard_t given, shard;
  ld_topic_error_t why = LD_TOPIC_OK;
  if (ld_pubsub_topic_parse(pubsub, strlen(pubsub), &given, &why) != 0) {
    respond_error(req, 400, "invalid pubsub topic: '%s': %s", pubsub, ld_topic_strerror(why));
    return false;
  }
  if (given.cluster_id != r->cluster_id) {
    respond_error(req, 404, "Failed to subscribe: clusterId %u is not supported.",
                  given.cluster_id);
    return false;
  }
  if (ld_autoshard(topic, strlen(topic), r->num_shards, r->cluster_id, &shard, &why) == 0 &&
      shard.shard_id != given.shard_id) {
    respond_error(req, 400, "contentTopic '%s' belongs to shard %u, not to '%s'", topic,
                  shard.shard_id, pubsub);
    return false;
  }
  return true;
}

static void subscribe_topic(mrest_t *r, ld_http_request_t *req, const char *pubsub,
                            const char *topic) {
  char why[LD_REST_ERR_MAX + QUERY_MAX] = "", id[LD_MESSAGING_SUBSCRIPTION_ID_LEN + 1];
  if (check_topic(topic, why, sizeof why) != 0) {
    respond_error(req, 400, "%s", why);
  } else if (r->num_shards == 0) {
    respond_error(req, 503, "%s", AUTOSHARDING_REQUIRED);
  } else if (pubsub == NULL || pubsub_fits(r, req, pubsub, topic)) {
    if (apply_subscription(r, topic, true, why, sizeof why) != 0)
      respond_error(req, 500, "Subscribe failed: %s", why);
    else if (!ld_messaging_subscription_id(r->m, topic, id))
      respond_error(req, 500, "Subscribe failed: %s", "no subscription ID");
    else
      respond_json(req, 200, ld_rest_subscription_id_json(id));
  }
}

static void post_subscribe(ld_rest_server_t *srv, ld_http_request_t *req, const ld_route_match_t *m,
                           void *user_data) {
  (void)srv;
  (void)m;
  json_t *body = NULL;
  const char *pubsub = NULL, *topic = NULL;
  char err[LD_REST_ERR_MAX];
  if (read_body(req, true, &body) != 0)
    return;
  if (ld_rest_subscribe_request_parse(body, &pubsub, &topic, err, sizeof err) != 0)
    respond_error(req, 400, "%s", err);
  else
    subscribe_topic(user_data, req, pubsub, topic);
  json_decref(body);
}

typedef struct id_lookup {
  const char *id;
  char topic[QUERY_MAX];
} id_lookup_t;

static bool match_id(void *ctx, const char *topic, const char *id) {
  id_lookup_t *l = ctx;
  if (strcmp(id, l->id) != 0)
    return false;
  snprintf(l->topic, sizeof l->topic, "%s", topic);
  return true;
}

static void post_unsubscribe(ld_rest_server_t *srv, ld_http_request_t *req,
                             const ld_route_match_t *m, void *user_data) {
  (void)srv;
  (void)m;
  mrest_t *r = user_data;
  json_t *body = NULL;
  id_lookup_t l = {0};
  char err[LD_REST_ERR_MAX] = "";
  if (read_body(req, true, &body) != 0)
    return;
  if (ld_rest_unsubscribe_request_parse(body, &l.id, err, sizeof err) != 0)
    respond_error(req, 400, "%s", err);
  else if (ld_messaging_each_subscription(r->m, match_id, &l) &&
           apply_subscription(r, l.topic, false, err, sizeof err) != 0)
    respond_error(req, 500, "Unsubscribe failed: %s", err);
  else
    respond_json(req, 200, ld_rest_status_ok_json());
  json_decref(body);
}

typedef struct id_list {
  char (*ids)[LD_MESSAGING_SUBSCRIPTION_ID_LEN + 1];
  const char **ptrs;
  size_t n;
} id_list_t;

static bool collect_id(void *ctx, const char *topic, const char *id) {
  (void)topic;
  id_list_t *l = ctx;
  if (l->n >= LD_MESSAGING_MAX_CONTENT_TOPICS)
    return true;
  memcpy(l->ids[l->n], id, sizeof l->ids[0]);
  l->ptrs[l->n] = l->ids[l->n];
  l->n++;
  return false;
}

static void get_subscriptions(ld_rest_server_t *srv, ld_http_request_t *req,
                              const ld_route_match_t *m, void *user_data) {
  (void)srv;
  (void)m;
  mrest_t *r = user_data;
  size_t cap = LD_MESSAGING_MAX_CONTENT_TOPICS;
  id_list_t l = {calloc(cap, sizeof *l.ids), calloc(cap, sizeof *l.ptrs), 0};
  if (l.ids == NULL || l.ptrs == NULL) {
    ld_http_respond_text(req, 500, "Out of memory");
  } else {
    ld_messaging_each_subscription(r->m, collect_id, &l);
    respond_json(req, 200, ld_rest_string_list_json(l.ptrs, l.n));
  }
  free(l.ids);
  free(l.ptrs);
}

/* ---- the group ------------------------------------------------------------------------------- */

static const ld_rest_route_spec_t ROUTES[] = {
    {"OPTIONS", "/messaging/v1/subscriptions", options_ok},
    {"POST", "/messaging/v1/subscriptions", post_subscriptions},
    {"DELETE", "/messaging/v1/subscriptions", delete_subscriptions},
    {"OPTIONS", "/messaging/v1/messages", options_ok},
    {"POST", "/messaging/v1/messages", post_message},
    {"OPTIONS", "/messaging/v1/events/send", options_ok},
    {"GET", "/messaging/v1/events/send", get_send_events},
    {"OPTIONS", "/messaging/v1/events/send/{requestId}", options_ok},
    {"GET", "/messaging/v1/events/send/{requestId}", get_send_event},
    {"OPTIONS", "/messaging/v1/events/received", options_ok},
    {"GET", "/messaging/v1/events/received", get_received},
    {"OPTIONS", "/message", options_ok},
    {"GET", "/message", get_message},
    {"OPTIONS", "/messages", options_ok},
    {"GET", "/messages", get_messages},
    {"OPTIONS", "/subscribe", options_ok},
    {"POST", "/subscribe", post_subscribe},
    {"OPTIONS", "/unsubscribe", options_ok},
    {"POST", "/unsubscribe", post_unsubscribe},
    {"OPTIONS", "/subscriptions", options_ok},
    {"GET", "/subscriptions", get_subscriptions},
};

static const ld_rest_group_t GROUP = {
    ROUTES,
    sizeof ROUTES / sizeof ROUTES[0],
    LD_REST_MESSAGING_GROUPS,
    LD_REST_MESSAGING_N_GROUPS,
    LD_REST_MESSAGING_UNAVAILABLE,
};

static const char *connection_status(void *user_data) {
  const mrest_t *r = user_data;
  return ld_connection_status_name(ld_messaging_connection_status(r->m));
}

/* ---- attach / detach ------------------------------------------------------------------------- */

static void release(mrest_t *r) {
  for (size_t i = 0; i < N_LISTENERS; i++)
    if (r->listeners[i] > 0)
      ld_broker_unsubscribe(r->broker, r->listeners[i]);
  if (r->provider)
    ld_broker_remove_provider(r->broker, LD_PROVIDE_MESSAGING_REST);
  if (r->health.connection_status != NULL)
    ld_rest_server_set_health_source(r->srv, NULL);
  if (r->routes)
    ld_rest_server_remove_group(r->srv, &GROUP);
  ld_rest_msg_events_free(r->events);
  free(r);
}

static int subscribe_events(mrest_t *r) {
  for (size_t i = 0; i < sizeof SEND_KINDS / sizeof SEND_KINDS[0]; i++) {
    r->listeners[i] = ld_broker_subscribe(r->broker, SEND_KINDS[i], on_send_event, r);
    if (r->listeners[i] < 0)
      return (int)r->listeners[i];
  }
  r->listeners[N_LISTENERS - 1] =
      ld_broker_subscribe(r->broker, LD_EVENT_MESSAGING_RECEIVED, on_received, r);
  return r->listeners[N_LISTENERS - 1] < 0 ? (int)r->listeners[N_LISTENERS - 1] : 0;
}

static int install(mrest_t *r) {
  int rc = ld_broker_set_provider(r->broker, LD_PROVIDE_MESSAGING_REST, provide_state, r);
  r->provider = rc == 0;
  rc = rc ? rc : subscribe_events(r);
  rc = rc ? rc : ld_rest_server_add_group(r->srv, &GROUP, r);
  r->routes = rc == 0;
  if (rc == 0) {
    r->health = (ld_rest_health_source_t){connection_status, r};
    rc = ld_rest_server_set_health_source(r->srv, &r->health);
  }
  return rc;
}

int ld_messaging_rest_attach(ld_messaging_t *m) {
  ld_node_t *node = ld_messaging_node(m);
  ld_rest_server_t *srv = node != NULL ? ld_node_rest_server(node) : NULL;
  if (srv == NULL)
    return 0;
  mrest_t *r = calloc(1, sizeof *r);
  if (r == NULL)
    return LD_ERR_NOMEM;
  const ld_rest_context_t *ctx = ld_rest_server_context(srv);
  r->m = m;
  r->srv = srv;
  r->broker = ld_node_broker(node);
  r->cluster_id = ctx->cluster_id;
  r->num_shards = ctx->num_shards_in_network;
  r->events = ld_rest_msg_events_new(LD_REST_MSG_EVENTS_DEFAULT_RECEIVED,
                                     LD_REST_MSG_EVENTS_DEFAULT_REQUESTS);
  int rc = r->events != NULL ? install(r) : LD_ERR_NOMEM;
  if (rc != 0) {
    release(r);
    return rc;
  }
  LD_INFO(TOPIC, "Mounted messaging REST API endpoints");
  return 0;
}

void ld_messaging_rest_detach(ld_messaging_t *m) {
  ld_node_t *node = ld_messaging_node(m);
  mrest_t *r = NULL;
  if (node == NULL ||
      ld_broker_request(ld_node_broker(node), LD_PROVIDE_MESSAGING_REST, NULL, &r) != 0 ||
      r == NULL || r->m != m)
    return;
  release(r);
  LD_INFO(TOPIC, "Unmounted messaging REST API endpoints");
}
