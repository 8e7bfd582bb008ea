/* Kernel tier: filter subscriptions as a light client (c-api.md §3). Requests go to the filter
 * service the last subscription went to, else to the --filternode or a connected peer that
 * serves filter; pushed messages on subscribed (pubsub topic, content topic) pairs become
 * `message` events (kernel_state.c). */
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "lib/kernel_internal.h"
#include "node/node_filter.h"
#include "waku/core/codecs.h"
#include "waku/filter/client.h"

/* nwaku's FilterOpTimeout. */
#define FILTER_OP_TIMEOUT_MS 5000u

typedef enum filter_kind { F_SUBSCRIBE = 0, F_UNSUBSCRIBE, F_UNSUBSCRIBE_ALL } filter_kind_t;

static const char *const g_names[] = {"filterSubscribe", "filterUnsubscribe",
                                      "filterUnsubscribeAll"};
static const char *const g_no_peer[] = {
    "could not find peer with WakuFilterSubscribeCodec when subscribing",
    "could not find peer with WakuFilterSubscribeCodec when unsubscribing",
    "could not find peer with WakuFilterSubscribeCodec when unsubscribing all"};
static const char *const g_timeout[] = {"filter subscription timed out",
                                        "filter un-subscription timed out",
                                        "filter un-subscription all timed out"};

typedef struct filter_data {
  filter_kind_t kind;
  char *pubsub_topic;
  char **topics;
  size_t n_topics;
} filter_data_t;

static void data_free(filter_data_t *d) {
  for (size_t i = 0; i < d->n_topics; i++)
    free(d->topics[i]);
  free(d->topics);
  free(d->pubsub_topic);
  free(d);
}

static void op_data_free(ld_kernel_op_t *op) {
  data_free(op->data);
}

/* Splits the comma-separated list as nwaku does (no trimming; empty items kept). */
static int split_topics(const char *list, filter_data_t *d) {
  size_t n = 1;
  for (const char *s = list; *s != '\0'; s++)
    n += *s == ',';
  if (n > LD_FILTER_MAX_CONTENT_TOPICS)
    return LD_ERR_LIMIT;
  d->topics = calloc(n, sizeof *d->topics);
  if (d->topics == NULL)
    return LD_ERR_NOMEM;
  const char *start = list;
  for (size_t i = 0; i < n; i++) {
    const char *end = strchr(start, ',');
    size_t len = end != NULL ? (size_t)(end - start) : strlen(start);
    if ((d->topics[i] = strndup(start, len)) == NULL)
      return LD_ERR_NOMEM;
    d->n_topics = i + 1;
    start = end != NULL ? end + 1 : start + len;
  }
  return 0;
}

static const char *failure_text(const ld_filter_result_t *res) {
  if (res->status_desc != NULL && res->status_desc[0] != '\0')
    return res->status_desc;
  return ld_filter_status_kind(res->status_code);
}

static void record_success(ld_kernel_op_t *op, const filter_data_t *d) {
  ld_kernel_t *k = op->k;
  int rc = 0;
  if (d->kind == F_SUBSCRIBE) {
    rc = ld_kernel_filter_add(k, d->pubsub_topic, (const char *const *)d->topics, d->n_topics);
    ld_kernel_set_filter_peer(k, &op->peer);
  } else if (d->kind == F_UNSUBSCRIBE) {
    ld_kernel_filter_remove(k, d->pubsub_topic, (const char *const *)d->topics, d->n_topics);
  } else {
    ld_kernel_filter_clear(k);
  }
  if (rc != 0)
    ld_kernel_op_err(op, "%s: %s", g_names[d->kind], ld_strerror(rc));
  else
    ld_kernel_op_ok(op, "", 0);
}

static void on_filter_done(const ld_filter_result_t *res, void *user_data) {
  ld_kernel_op_t *op = user_data;
  filter_data_t *d = op->data;
  if (ld_kernel_op_open(op) && res->err == 0 && res->status_code == LD_FILTER_STATUS_OK)
    record_success(op, d);
  else
    ld_kernel_op_err(op, "%s", failure_text(res));
  ld_kernel_op_release(op);
}

static int send_request(ld_kernel_op_t *op, ld_conn_t *c) {
  filter_data_t *d = op->data;
  int err = 0;
  ld_filter_client_t *cl = ld_node_filter_client(ld_kernel_node_of(op->k), &err);
  const char *const *topics = (const char *const *)d->topics;
  if (cl == NULL)
    return err;
  if (d->kind == F_SUBSCRIBE)
    return ld_filter_client_subscribe(cl, c, d->pubsub_topic, topics, d->n_topics, on_filter_done,
                                      op);
  if (d->kind == F_UNSUBSCRIBE)
    return ld_filter_client_unsubscribe(cl, c, d->pubsub_topic, topics, d->n_topics, on_filter_done,
                                        op);
  return ld_filter_client_unsubscribe_all(cl, c, on_filter_done, op);
}

static void on_conn(ld_kernel_op_t *op, ld_conn_t *c, int err, const ld_service_peer_t *peer) {
  (void)peer;
  if (err == 0 && ld_kernel_op_open(op) && (err = send_request(op, c)) == 0)
    op->refs++;
  if (err != 0)
    ld_kernel_op_err(op, "PEER_DIAL_FAILURE: %s", ld_strerror(err));
  ld_kernel_op_release(op);
}

static void start(ld_kernel_t *k, ld_lib_request_t *req, filter_data_t *d) {
  ld_kernel_op_t *op =
      ld_kernel_op_new(k, req, g_names[d->kind], FILTER_OP_TIMEOUT_MS, g_timeout[d->kind]);
  if (op == NULL) {
    data_free(d);
    return;
  }
  op->data = d;
  op->free_data = op_data_free;
  ld_service_peer_t peer;
  bool known = d->kind != F_SUBSCRIBE && ld_kernel_filter_peer(k, &peer);
  int rc = ld_kernel_op_connect(op, LD_WAKU_FILTER_SUBSCRIBE_CODEC, known ? &peer : NULL, on_conn);
  if (rc == LD_ERR_NOT_FOUND)
    ld_kernel_op_err(op, "%s", g_no_peer[d->kind]);
  else if (rc != 0)
    ld_kernel_op_err(op, "PEER_DIAL_FAILURE: %s", ld_strerror(rc));
  ld_kernel_op_release(op);
}

/* The request's data from the call's arguments (pubsub topic, comma-separated content topics). */
static int prepare(filter_kind_t kind, const ld_kernel_args_t *a, filter_data_t **out) {
  filter_data_t *d = calloc(1, sizeof *d);
  if (d == NULL)
    return LD_ERR_NOMEM;
  d->kind = kind;
  d->pubsub_topic = strdup(a->s[0]);
  int rc = d->pubsub_topic == NULL ? LD_ERR_NOMEM : 0;
  if (rc == 0 && kind != F_UNSUBSCRIBE_ALL)
    rc = split_topics(a->s[1], d);
  if (rc != 0) {
    data_free(d);
    return rc;
  }
  *out = d;
  return 0;
}

static void handle(ld_lib_ctx_t *ctx, ld_lib_request_t *req, ld_kernel_args_t *a,
                   filter_kind_t kind) {
  ld_kernel_t *k = ld_kernel_get(ctx, req, g_names[kind]);
  if (k == NULL)
    return;
  int err = 0;
  if (ld_node_filter_client(ld_kernel_node_of(k), &err) == NULL) {
    ld_lib_reply_err(req, "wakuFilterClient is not mounted");
    return;
  }
  filter_data_t *d = NULL;
  int rc = prepare(kind, a, &d);
  if (rc != 0) {
    ld_lib_reply_err(req, "%s: %s", g_names[kind],
                     rc == LD_ERR_LIMIT ? "too many content topics (at most 100)"
                                        : ld_strerror(rc));
    return;
  }
  start(k, req, d);
}

static void h_subscribe(ld_lib_ctx_t *ctx, ld_lib_request_t *req, void *p) {
  handle(ctx, req, p, F_SUBSCRIBE);
}

static void h_unsubscribe(ld_lib_ctx_t *ctx, ld_lib_request_t *req, void *p) {
  handle(ctx, req, p, F_UNSUBSCRIBE);
}

static void h_unsubscribe_all(ld_lib_ctx_t *ctx, ld_lib_request_t *req, void *p) {
  handle(ctx, req, p, F_UNSUBSCRIBE_ALL);
}

int waku_filter_subscribe(void *ctx, FFICallBack callback, void *userData, const char *pubSubTopic,
                          const char *contentTopics) {
  return ld_kernel_call(ctx, callback, userData, h_subscribe, pubSubTopic, contentTopics, NULL, 0,
                        0);
}

int waku_filter_unsubscribe(void *ctx, FFICallBack callback, void *userData,
                            const char *pubSubTopic, const char *contentTopics) {
  return ld_kernel_call(ctx, callback, userData, h_unsubscribe, pubSubTopic, contentTopics, NULL, 0,
                        0);
}

int waku_filter_unsubscribe_all(void *ctx, FFICallBack callback, void *userData) {
  return ld_kernel_call(ctx, callback, userData, h_unsubscribe_all, NULL, NULL, NULL, 0, 0);
}
