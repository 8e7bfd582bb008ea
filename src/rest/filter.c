/* Filter v2 through the node's filter client:
 *   POST/PUT /filter/v2/subscriptions        {requestId, pubsubTopic?, contentFilters}
 *   DELETE   /filter/v2/subscriptions        {requestId, pubsubTopic?, contentFilters}
 *   DELETE   /filter/v2/subscriptions/all    {requestId}
 *   GET      /filter/v2/subscriptions/{requestId}   ping
 * each answering {requestId, statusDesc}, and
 *   GET      /filter/v2/messages/{contentTopic}     the pushed messages, then cleared.
 *
 * The message cache follows nwaku: a content topic is cached once its subscribe request is
 * answered by the node in time (whatever the outcome) and forgotten the same way; unsubscribing
 * from all empties the cache. Messages are filed under the fixed pubsub key "" so that
 * forgetting a content topic drops its messages (see purge_orphans). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "base/error.h"
#include "base/log.h"
#include "rest/pending.h"
#include "rest/service_json.h"

#define NO_PEER_TEXT "SERVICE_UNAVAILABLE: No suitable service peer & no discovery method"

typedef enum filter_op { OP_SUBSCRIBE, OP_UNSUBSCRIBE, OP_UNSUBSCRIBE_ALL, OP_PING } filter_op_t;

/* nwaku's timeout descriptions, by filter_op_t. */
static const char *const TIMEOUT_TEXT[] = {
    "SERVICE_UNAVAILABLE: Subscription request timed out",
    "SERVICE_UNAVAILABLE: Failed to unsubscribe from contentFilters due to timeout!",
    "SERVICE_UNAVAILABLE: Failed to unsubscribe from all contentFilters due to timeout!",
    "SERVICE_UNAVAILABLE: Ping timed out",
};

typedef struct filter_pending {
  ld_rest_pending_t base;
  filter_op_t op;
  char *request_id;
  char **topics; /* the content topics, for the cache */
  size_t n_topics;
} filter_pending_t;

/* ---- answers --------------------------------------------------------------------------------- */

static void respond(ld_http_request_t *req, unsigned status, const char *request_id,
                    const char *desc) {
  json_t *j = ld_rest_filter_response_json(request_id, desc);
  if (j == NULL) {
    ld_http_respond_text(req, 500, "An error occurred while building the json response");
    return;
  }
  ld_http_respond_json(req, status, j);
  json_decref(j);
}

static void respond_bad_request(ld_http_request_t *req, const char *why) {
  char desc[LD_REST_ERR_MAX + 64];
  snprintf(desc, sizeof desc, "BAD_REQUEST: Failed to decode request: %s", why);
  respond(req, 400, "unknown", desc);
}

/* ---- the cache ------------------------------------------------------------------------------- */

/* Drops the messages whose content topic is no longer cached. */
static void purge_orphans(ld_rest_cache_t *c) {
  ld_rest_cache_unsubscribe(c, LD_REST_PUBSUB_TOPIC, "", 0);
}

static void update_cache(ld_rest_server_t *srv, const filter_pending_t *p) {
  if (p->op == OP_UNSUBSCRIBE_ALL) {
    ld_rest_cache_free(srv->filter_cache);
    srv->filter_cache = ld_rest_cache_new(LD_REST_CACHE_DEFAULT_CAPACITY);
    return;
  }
  for (size_t i = 0; i < p->n_topics && srv->filter_cache != NULL; i++) {
    const char *t = p->topics[i];
    if (p->op == OP_UNSUBSCRIBE)
      ld_rest_cache_unsubscribe(srv->filter_cache, LD_REST_CONTENT_TOPIC, t, strlen(t));
    else if (ld_rest_cache_subscribe(srv->filter_cache, LD_REST_CONTENT_TOPIC, t, strlen(t)) != 0)
      LD_WARN("rest", "Filter REST cache: cannot cache content topic %s", t);
  }
  if (p->op == OP_UNSUBSCRIBE && srv->filter_cache != NULL)
    purge_orphans(srv->filter_cache);
}

void ld_rest_server_filter_push(ld_rest_server_t *srv, const char *pubsub_topic,
                                const ld_waku_message_t *msg) {
  (void)pubsub_topic;
  ld_rest_cache_t *c = srv->filter_cache;
  if (c == NULL || msg == NULL || msg->content_topic == NULL ||
      !ld_rest_cache_cached(c, LD_REST_CONTENT_TOPIC, msg->content_topic, msg->content_topic_len))
    return;
  if (ld_rest_cache_add(c, "", msg) < 0)
    LD_WARN("rest", "Filter REST cache: out of memory");
}

/* ---- the operations -------------------------------------------------------------------------- */

static void on_done(void *done_ud, uint32_t code, const char *desc) {
  filter_pending_t *p = done_ud;
  ld_http_request_t *req = ld_rest_pending_take(&p->base);
  if (req != NULL) {
    if (p->base.srv != NULL)
      update_cache(p->base.srv, p);
    respond(req, ld_rest_filter_http_status(code), p->request_id,
            ld_rest_filter_status_desc(code, desc));
  }
  ld_rest_pending_finish(&p->base);
}

static void on_timeout(ld_rest_pending_t *base, ld_http_request_t *req) {
  filter_pending_t *p = (filter_pending_t *)base;
  LD_ERROR("rest", "Filter request %s: no answer in time", p->request_id);
  respond(req, 503, p->request_id, TIMEOUT_TEXT[p->op]);
}

static void pending_cleanup(ld_rest_pending_t *base) {
  filter_pending_t *p = (filter_pending_t *)base;
  for (size_t i = 0; i < p->n_topics; i++)
    free(p->topics[i]);
  free(p->topics);
  free(p->request_id);
}

static int copy_request(filter_pending_t *p, const char *request_id, const char *const *topics,
                        size_t n) {
  p->request_id = strdup(request_id);
  p->topics = n > 0 ? calloc(n, sizeof *p->topics) : NULL;
  if (p->request_id == NULL || (n > 0 && p->topics == NULL))
    return LD_ERR_NOMEM;
  for (p->n_topics = 0; p->n_topics < n; p->n_topics++)
    if ((p->topics[p->n_topics] = strdup(topics[p->n_topics])) == NULL)
      return LD_ERR_NOMEM;
  return 0;
}

static int call_op(const ld_rest_filter_ops_t *ops, filter_op_t op, const char *pubsub_topic,
                   const char *const *topics, size_t n, filter_pending_t *p) {
  switch (op) {
  case OP_SUBSCRIBE:
    return ops->subscribe(ops->user_data, pubsub_topic, topics, n, on_done, p);
  case OP_UNSUBSCRIBE:
    return ops->unsubscribe(ops->user_data, pubsub_topic, topics, n, on_done, p);
  case OP_UNSUBSCRIBE_ALL:
    return ops->unsubscribe_all(ops->user_data, on_done, p);
  default:
    return ops->ping(ops->user_data, on_done, p);
  }
}

static void start(ld_rest_server_t *srv, ld_http_request_t *req, filter_op_t op,
                  const char *request_id, const char *pubsub_topic, const char *const *topics,
                  size_t n) {
  filter_pending_t *p = ld_rest_pending_new(srv, req, sizeof *p, on_timeout);
  if (p == NULL) {
    ld_http_respond_text(req, 500, "Out of memory");
    return;
  }
  p->base.cleanup = pending_cleanup;
  p->op = op;
  int rc = copy_request(p, request_id, topics, n);
  if (rc == 0)
    rc = call_op(srv->ctx.filter, op, pubsub_topic, topics, n, p);
  if (rc == 0)
    return;
  ld_http_request_t *r = ld_rest_pending_take(&p->base);
  if (r != NULL && rc == LD_ERR_NOT_FOUND)
    respond(r, 503, request_id, NO_PEER_TEXT);
  else if (r != NULL)
    ld_http_respond_text(r, 500, ld_strerror(rc));
  ld_rest_pending_finish(&p->base);
}

/* ---- handlers -------------------------------------------------------------------------------- */

/* Whether the Content-Type's media type is application/json (or the header is absent). */
static bool json_content_type(const char *ct) {
  if (ct == NULL)
    return true;
  ct += strspn(ct, " \t");
  size_t len = strcspn(ct, ";");
  while (len > 0 && (ct[len - 1] == ' ' || ct[len - 1] == '\t'))
    len--;
  return len == 16 && strncasecmp(ct, "application/json", 16) == 0;
}

/* Reads the body; answers 400 the nwaku way and returns the error on failure. */
static int read_request(ld_http_request_t *req, bool with_topics, json_t **body,
                        ld_rest_filter_request_t *fr) {
  char err[LD_REST_ERR_MAX];
  size_t len = 0;
  const uint8_t *data = ld_http_request_body(req, &len);
  const char *ct = ld_http_request_header(req, "Content-Type");
  int rc = LD_ERR_UNSUPPORTED;
  if (data != NULL && !json_content_type(ct))
    snprintf(err, sizeof err, "%s", "Wrong Content-Type, expected application/json");
  else
    rc = ld_rest_json_parse(data, len, ct, body, err, sizeof err);
  if (rc == 0 &&
      (rc = ld_rest_filter_request_parse(*body, with_topics, fr, err, sizeof err)) != 0) {
    json_decref(*body);
    *body = NULL;
  }
  if (rc == LD_ERR_NOMEM)
    ld_http_respond_text(req, 500, "Out of memory");
  else if (rc != 0)
    respond_bad_request(req, err);
  return rc;
}

static void subscriptions(ld_rest_server_t *srv, ld_http_request_t *req, filter_op_t op) {
  json_t *body = NULL;
  ld_rest_filter_request_t fr;
  if (read_request(req, true, &body, &fr) != 0)
    return;
  if (fr.n_content_topics > LD_REST_FILTER_MAX_CONTENT_TOPICS) {
    char desc[64];
    snprintf(desc, sizeof desc, "BAD_REQUEST: exceeds maximum content topics: %d",
             LD_REST_FILTER_MAX_CONTENT_TOPICS);
    respond(req, 400, fr.request_id, desc);
  } else {
    start(srv, req, op, fr.request_id, fr.pubsub_topic, fr.content_topics, fr.n_content_topics);
  }
  ld_rest_filter_request_clear(&fr);
  json_decref(body);
}

static void post_subscriptions(ld_rest_server_t *srv, ld_http_request_t *req,
                               const ld_route_match_t *m, void *user_data) {
  (void)m;
  (void)user_data;
  subscriptions(srv, req, OP_SUBSCRIBE);
}

static void delete_subscriptions(ld_rest_server_t *srv, ld_http_request_t *req,
                                 const ld_route_match_t *m, void *user_data) {
  (void)m;
  (void)user_data;
  subscriptions(srv, req, OP_UNSUBSCRIBE);
}

static void delete_all(ld_rest_server_t *srv, ld_http_request_t *req, const ld_route_match_t *m,
                       void *user_data) {
  (void)m;
  (void)user_data;
  json_t *body = NULL;
  ld_rest_filter_request_t fr;
  if (read_request(req, false, &body, &fr) != 0)
    return;
  start(srv, req, OP_UNSUBSCRIBE_ALL, fr.request_id, NULL, NULL, 0);
  ld_rest_filter_request_clear(&fr);
  json_decref(body);
}

static void get_ping(ld_rest_server_t *srv, ld_http_request_t *req, const ld_route_match_t *m,
                     void *user_data) {
  (void)user_data;
  start(srv, req, OP_PING, ld_route_param(m, "requestId"), NULL, NULL, 0);
}

static void get_messages(ld_rest_server_t *srv, ld_http_request_t *req, const ld_route_match_t *m,
                         void *user_data) {
  (void)user_data;
  const char *topic = ld_route_param(m, "contentTopic");
  ld_waku_message_t *msgs = NULL;
  size_t n = 0;
  int rc = srv->filter_cache != NULL ? ld_rest_cache_take(srv->filter_cache, LD_REST_CONTENT_TOPIC,
                                                          topic, strlen(topic), &msgs, &n)
                                     : LD_ERR_NOT_FOUND;
  if (rc == LD_ERR_NOT_FOUND)
    ld_rest_respond_error(req, 400, "Not subscribed to topic: ", topic);
  else if (rc != 0)
    ld_http_respond_text(req, 500, "Out of memory");
  else
    ld_rest_respond_json_new(req, ld_rest_filter_messages_json(msgs, n));
  for (size_t i = 0; i < n; i++)
    ld_waku_message_clear(&msgs[i]);
  free(msgs);
}

static bool ops_complete(const ld_rest_filter_ops_t *ops) {
  return ops->subscribe != NULL && ops->unsubscribe != NULL && ops->unsubscribe_all != NULL &&
         ops->ping != NULL;
}

int ld_rest_install_filter(ld_rest_server_t *srv) {
  static const char subs[] = "/filter/v2/subscriptions";
  if (srv->ctx.filter == NULL)
    return ld_rest_server_set_unavailable(srv, "filter", "/filter endpoints are not available.");
  if (!ops_complete(srv->ctx.filter))
    return LD_ERR_INVALID_ARG;
  srv->filter = *srv->ctx.filter;
  srv->ctx.filter = &srv->filter;
  if ((srv->filter_cache = ld_rest_cache_new(LD_REST_CACHE_DEFAULT_CAPACITY)) == NULL)
    return LD_ERR_NOMEM;
  int rc = ld_rest_server_add_route(srv, "POST", subs, post_subscriptions, NULL);
  rc = rc ? rc : ld_rest_server_add_route(srv, "PUT", subs, post_subscriptions, NULL);
  rc = rc ? rc : ld_rest_server_add_route(srv, "DELETE", subs, delete_subscriptions, NULL);
  rc = rc ? rc
          : ld_rest_server_add_route(srv, "DELETE", "/filter/v2/subscriptions/all", delete_all,
                                     NULL);
  rc = rc ? rc
          : ld_rest_server_add_route(srv, "GET", "/filter/v2/subscriptions/{requestId}", get_ping,
                                     NULL);
  return rc ? rc
            : ld_rest_server_add_route(srv, "GET", "/filter/v2/messages/{contentTopic}",
                                       get_messages, NULL);
}
