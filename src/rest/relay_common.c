#include "rest/relay_common.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/clock.h"
#include "base/error.h"
#include "base/log.h"
#include "rest/pending.h"

int ld_rest_read_topic_list(ld_http_request_t *req, json_t **body, const char ***topics,
                            size_t *n) {
  char err[LD_REST_ERR_MAX];
  int rc = ld_rest_read_json(req, body);
  if (rc != 0)
    return rc;
  rc = ld_rest_json_strings(*body, topics, n, err, sizeof err);
  if (rc != 0) {
    ld_rest_respond_error(req, 400, "Invalid content body, could not decode: ", err);
    json_decref(*body);
    *body = NULL;
  }
  return rc;
}

int ld_rest_relay_subscribe(ld_rest_server_t *srv, ld_http_request_t *req, const char *pubsub_topic,
                            ld_rest_topic_kind_t kind, const char *topic, size_t len) {
  const ld_rest_relay_ops_t *relay = srv->ctx.relay;
  char why[LD_REST_ERR_MAX] = "";
  int rc = relay->subscribe(relay->user_data, pubsub_topic, why, sizeof why);
  if (rc == 0) {
    rc = ld_rest_cache_subscribe(srv->cache, kind, topic, len);
    if (rc != 0)
      snprintf(why, sizeof why, "%s", rc == LD_ERR_LIMIT ? "too many topics" : ld_strerror(rc));
  }
  if (rc != 0) {
    LD_ERROR("rest", "SUBSCRIBE failed: %s: %s", pubsub_topic, why[0] ? why : ld_strerror(rc));
    ld_rest_respond_error(req, 500, "Subscribe failed:", why[0] ? why : ld_strerror(rc));
    return rc;
  }
  LD_INFO("rest", "Subscribed to %s", pubsub_topic);
  return 0;
}

int ld_rest_relay_unsubscribe(ld_rest_server_t *srv, ld_http_request_t *req,
                              const char *pubsub_topic, ld_rest_topic_kind_t kind,
                              const char *topic, size_t len) {
  const ld_rest_relay_ops_t *relay = srv->ctx.relay;
  char why[LD_REST_ERR_MAX] = "";
  ld_rest_cache_unsubscribe(srv->cache, kind, topic, len);
  int rc = relay->unsubscribe(relay->user_data, pubsub_topic, why, sizeof why);
  if (rc != 0) {
    LD_ERROR("rest", "UNSUBSCRIBE failed: %s: %s", pubsub_topic, why[0] ? why : ld_strerror(rc));
    ld_rest_respond_error(req, 500, "Unsubscribe failed:", why[0] ? why : ld_strerror(rc));
    return rc;
  }
  LD_INFO("rest", "Unsubscribed from %s", pubsub_topic);
  return 0;
}

static json_t *messages_json(ld_waku_message_t *msgs, size_t n) {
  json_t *list = json_array();
  for (size_t i = 0; i < n; i++) {
    json_t *m = list != NULL ? ld_rest_message_to_json(&msgs[i]) : NULL;
    if (m == NULL || json_array_append_new(list, m) != 0) {
      json_decref(list);
      list = NULL;
    }
  }
  return list;
}

void ld_rest_respond_cached(ld_rest_server_t *srv, ld_http_request_t *req,
                            ld_rest_topic_kind_t kind, const char *topic, size_t len) {
  ld_waku_message_t *msgs = NULL;
  size_t n = 0;
  int rc = ld_rest_cache_take(srv->cache, kind, topic, len, &msgs, &n);
  if (rc == LD_ERR_NOT_FOUND) {
    /* nwaku's bodies: none for a pubsub topic, the content topic itself for a content topic
     * (rest/relay/handlers.nim, RestApiResponse.notFound) */
    LD_INFO("rest", "Not subscribed to topic %s", topic);
    ld_http_respond_text(req, 404, kind == LD_REST_CONTENT_TOPIC ? topic : "");
    return;
  }
  if (rc != 0) {
    ld_http_respond_text(req, 500, "Out of memory");
    return;
  }
  ld_rest_respond_json_new(req, messages_json(msgs, n));
  for (size_t i = 0; i < n; i++)
    ld_waku_message_clear(&msgs[i]);
  free(msgs);
}

int ld_rest_read_message(ld_rest_server_t *srv, ld_http_request_t *req, ld_waku_message_t *msg) {
  json_t *body = NULL;
  int rc = ld_rest_read_json(req, &body);
  if (rc != 0)
    return rc;
  char err[LD_REST_ERR_MAX];
  size_t cap = srv->ctx.max_msg_size > 0 ? srv->ctx.max_msg_size : LD_WAKU_DEFAULT_MAX_MSG_SIZE;
  rc = ld_rest_message_from_json(body, (int64_t)ld_wall_ns(), true, cap, msg, err, sizeof err);
  json_decref(body);
  if (rc == LD_ERR_NOMEM)
    ld_http_respond_text(req, 500, "Out of memory");
  else if (rc != 0)
    ld_http_respond_text(req, 400, err);
  return rc;
}

/* ---- answering a publish once the node archived it ------------------------------------------ */

static void on_archived(void *done_data) {
  ld_rest_pending_t *p = done_data;
  ld_http_request_t *req = ld_rest_pending_take(p);
  if (req != NULL)
    ld_rest_respond_ok(req);
  ld_rest_pending_finish(p);
}

/* The message went out; only its archiving is late. */
static void on_archive_timeout(ld_rest_pending_t *p, ld_http_request_t *req) {
  (void)p;
  LD_WARN("rest", "Published message not archived within the service timeout");
  ld_rest_respond_ok(req);
}

/* Answers 200 once the node has archived its own message; false when there is nothing to wait
 * for (the caller answers at once). */
static bool answer_once_archived(ld_rest_server_t *srv, ld_http_request_t *req,
                                 const char *pubsub_topic, const ld_waku_message_t *msg) {
  const ld_rest_relay_ops_t *relay = srv->ctx.relay;
  if (relay->await_archived == NULL)
    return false;
  ld_rest_pending_t *p = ld_rest_pending_new(srv, req, sizeof *p, on_archive_timeout);
  if (p == NULL)
    return false;
  if (relay->await_archived(relay->user_data, pubsub_topic, msg, on_archived, p) == 0)
    return true;
  ld_http_request_t *r = ld_rest_pending_take(p);
  if (r != NULL)
    ld_rest_respond_ok(r);
  ld_rest_pending_finish(p);
  return true;
}

static void respond_publish_error(ld_http_request_t *req, const char *pubsub_topic, int rc,
                                  const char *why, const char *prefix, unsigned internal_status) {
  const char *reason = why[0] ? why : ld_strerror(rc);
  LD_WARN("rest", "Failed to publish on %s: %s", pubsub_topic, reason);
  bool internal = rc == LD_ERR_NOMEM || rc == LD_ERR_IO || rc == LD_ERR_INTERNAL;
  ld_rest_respond_error(req, internal ? internal_status : 400, prefix, reason);
}

/* ---- answering a publish once the message went out (RLN-relay: once proved) ----------------- */

/* The bound on the wait for a publish's outcome (a backlog of proofs, a third of a second each). */
#define PUBLISH_WAIT_MS 30000

typedef struct publish_wait {
  ld_rest_pending_t pending; /* first */
  char *topic;
  const char *prefix; /* static */
  unsigned internal_status;
} publish_wait_t;

static void publish_wait_cleanup(ld_rest_pending_t *p) {
  free(((publish_wait_t *)p)->topic);
}

static void on_publish_timeout(ld_rest_pending_t *p, ld_http_request_t *req) {
  (void)p;
  LD_WARN("rest", "Publish outcome not known within %d ms", PUBLISH_WAIT_MS);
  ld_http_respond_text(req, 500, "Failed to publish: timedout");
}

static void on_published(void *done_data, int result, const char *why) {
  publish_wait_t *w = done_data;
  ld_http_request_t *req = ld_rest_pending_take(&w->pending);
  if (req != NULL && (result >= 0 || result == LD_ERR_EXISTS)) {
    LD_INFO("rest", "Published a message on %s to %d peers", w->topic, result > 0 ? result : 0);
    ld_rest_respond_ok(req);
  } else if (req != NULL) {
    respond_publish_error(req, w->topic, result, why != NULL ? why : "", w->prefix,
                          w->internal_status);
  }
  ld_rest_pending_finish(&w->pending);
}

/* Publishes through publish_later; false when the outcome is known at once (in *rc, *why). */
static bool publish_later(ld_rest_server_t *srv, ld_http_request_t *req, const char *pubsub_topic,
                          const ld_waku_message_t *msg, const char *prefix,
                          unsigned internal_status, int *rc, char *why, size_t why_cap) {
  const ld_rest_relay_ops_t *relay = srv->ctx.relay;
  publish_wait_t *w =
      ld_rest_pending_new_timed(srv, req, sizeof *w, on_publish_timeout, PUBLISH_WAIT_MS);
  if (w == NULL) {
    *rc = LD_ERR_NOMEM;
    return false;
  }
  w->pending.cleanup = publish_wait_cleanup;
  w->topic = strdup(pubsub_topic);
  if (w->topic == NULL) {
    ld_rest_pending_take(&w->pending);
    ld_rest_pending_finish(&w->pending);
    *rc = LD_ERR_NOMEM;
    return false;
  }
  w->prefix = prefix;
  w->internal_status = internal_status;
  *rc = relay->publish_later(relay->user_data, pubsub_topic, msg, why, why_cap, on_published, w);
  if (*rc == LD_REST_PUBLISH_LATER)
    return true;
  ld_rest_pending_take(&w->pending); /* answered by the caller */
  ld_rest_pending_finish(&w->pending);
  return false;
}

void ld_rest_relay_publish(ld_rest_server_t *srv, ld_http_request_t *req, const char *pubsub_topic,
                           const ld_waku_message_t *msg, const char *prefix,
                           unsigned internal_status) {
  const ld_rest_relay_ops_t *relay = srv->ctx.relay;
  char why[LD_REST_ERR_MAX] = "";
  int rc;
  if (relay->publish_later != NULL) {
    if (publish_later(srv, req, pubsub_topic, msg, prefix, internal_status, &rc, why, sizeof why))
      return;
  } else {
    rc = relay->publish(relay->user_data, pubsub_topic, msg, why, sizeof why);
  }
  if (rc >= 0 || rc == LD_ERR_EXISTS) {
    LD_INFO("rest", "Published a message on %s to %d peers", pubsub_topic, rc > 0 ? rc : 0);
    if (rc < 0 || !answer_once_archived(srv, req, pubsub_topic, msg))
      ld_rest_respond_ok(req);
    return;
  }
  respond_publish_error(req, pubsub_topic, rc, why, prefix, internal_status);
}

static void post_subscriptions(ld_rest_server_t *srv, ld_http_request_t *req,
                               const ld_route_match_t *m, void *user_data) {
  (void)m;
  const ld_rest_relay_routes_t *r = user_data;
  r->subscriptions_fn(srv, req, true);
}

static void delete_subscriptions(ld_rest_server_t *srv, ld_http_request_t *req,
                                 const ld_route_match_t *m, void *user_data) {
  (void)m;
  const ld_rest_relay_routes_t *r = user_data;
  r->subscriptions_fn(srv, req, false);
}

static void get_messages(ld_rest_server_t *srv, ld_http_request_t *req, const ld_route_match_t *m,
                         void *user_data) {
  const ld_rest_relay_routes_t *r = user_data;
  const char *topic = ld_route_param(m, r->param);
  ld_rest_respond_cached(srv, req, r->kind, topic, strlen(topic));
}

int ld_rest_install_relay_routes(ld_rest_server_t *srv, const ld_rest_relay_routes_t *r) {
  void *ud = (void *)r;
  int rc = ld_rest_server_add_route(srv, "OPTIONS", r->subscriptions, ld_rest_options_ok, NULL);
  rc = rc ? rc : ld_rest_server_add_route(srv, "POST", r->subscriptions, post_subscriptions, ud);
  rc =
      rc ? rc : ld_rest_server_add_route(srv, "DELETE", r->subscriptions, delete_subscriptions, ud);
  rc = rc ? rc : ld_rest_server_add_route(srv, "OPTIONS", r->messages, ld_rest_options_ok, NULL);
  rc = rc ? rc : ld_rest_server_add_route(srv, "GET", r->messages, get_messages, ud);
  if (rc == 0 && r->post_message != NULL)
    rc = ld_rest_server_add_route(srv, "POST", r->messages, r->post_message, NULL);
  return rc;
}
