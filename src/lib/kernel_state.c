/* The kernel tier's shared machinery: request arguments, replies, the per-node kernel state (the
 * subscriptions that make `message` events, protected shards, the service-peer selector) and the
 * operations waiting for the network. */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/clock.h"
#include "base/error.h"
#include "base/log.h"
#include "lib/events_json.h"
#include "lib/kernel_internal.h"
#include "node/events.h"
#include "node/node_filter.h"
#include "waku/core/topics.h"

#define TOPIC "lib"
/* The broker provider through which a node's kernel state is found. */
#define STATE_PROVIDER "lib.kernel"
#define DISPATCH_OOM "error in sendRequestToFFIThread: out of memory"

/* ---- request arguments ------------------------------------------------------------------------
 */

static char *dup_or_empty(const char *s) {
  return strdup(s != NULL ? s : "");
}

ld_kernel_args_t *ld_kernel_args_new(const char *a, const char *b, const char *c, int64_t n0,
                                     int64_t n1) {
  ld_kernel_args_t *args = calloc(1, sizeof *args);
  if (args == NULL)
    return NULL;
  const char *in[3] = {a, b, c};
  for (int i = 0; i < 3; i++)
    if ((args->s[i] = dup_or_empty(in[i])) == NULL) {
      ld_kernel_args_free(args);
      return NULL;
    }
  args->n[0] = n0;
  args->n[1] = n1;
  return args;
}

void ld_kernel_args_free(void *p) {
  ld_kernel_args_t *args = p;
  if (args == NULL)
    return;
  for (int i = 0; i < 3; i++)
    free(args->s[i]);
  free(args);
}

int ld_kernel_call(void *ctx, FFICallBack cb, void *user_data, ld_lib_handler_fn fn, const char *a,
                   const char *b, const char *c, int64_t n0, int64_t n1) {
  if (cb == NULL)
    return RET_MISSING_CALLBACK;
  ld_kernel_args_t *args = ld_kernel_args_new(a, b, c, n0, n1);
  if (args == NULL) {
    cb(RET_ERR, DISPATCH_OOM, strlen(DISPATCH_OOM), user_data);
    return RET_ERR;
  }
  return ld_lib_dispatch(ctx, cb, user_data, fn, args, ld_kernel_args_free);
}

/* ---- handler helpers ---------------------------------------------------------------------------
 */

ld_node_t *ld_kernel_node(ld_lib_ctx_t *ctx, ld_lib_request_t *req, const char *op) {
  ld_node_t *node = ld_lib_ctx_node(ctx);
  if (node == NULL)
    ld_lib_reply_err(req, "%s failed: node is not initialized", op);
  else if (!ld_lib_ctx_started(ctx) || ld_lib_ctx_stopping(ctx))
    ld_lib_reply_err(req, "%s failed: node is not started", op);
  else
    return node;
  return NULL;
}

void ld_kernel_reply_join(ld_lib_request_t *req, const char *const *items, size_t n,
                          const char *sep) {
  size_t seplen = strlen(sep), total = 0;
  for (size_t i = 0; i < n; i++)
    total += strlen(items[i]) + (i > 0 ? seplen : 0);
  char *text = malloc(total + 1);
  if (text == NULL) {
    ld_lib_reply_err(req, "out of memory");
    return;
  }
  size_t o = 0;
  for (size_t i = 0; i < n; i++) {
    if (i > 0) {
      memcpy(text + o, sep, seplen);
      o += seplen;
    }
    size_t l = strlen(items[i]);
    memcpy(text + o, items[i], l);
    o += l;
  }
  ld_lib_reply_ok(req, text, o);
  free(text);
}

void ld_kernel_reply_peers(ld_lib_request_t *req, const ld_peerid_t *ids, size_t n) {
  char(*text)[LD_PEERID_TEXT_MAX] = n > 0 ? malloc(n * sizeof *text) : NULL;
  const char **items = n > 0 ? malloc(n * sizeof *items) : NULL;
  if (n > 0 && (text == NULL || items == NULL)) {
    free(text);
    free(items);
    ld_lib_reply_err(req, "out of memory");
    return;
  }
  for (size_t i = 0; i < n; i++) {
    if (ld_peerid_to_text(&ids[i], text[i], sizeof text[i]) < 0)
      text[i][0] = '\0';
    items[i] = text[i];
  }
  ld_kernel_reply_join(req, items, n, ",");
  free(items);
  free(text);
}

void ld_kernel_reply_u64(ld_lib_request_t *req, uint64_t v) {
  char text[24];
  snprintf(text, sizeof text, "%" PRIu64, v);
  ld_lib_reply_text(req, text);
}

uint32_t ld_kernel_timeout_ms(int64_t timeout) {
  if (timeout <= 0)
    return 0;
  return timeout > UINT32_MAX ? UINT32_MAX : (uint32_t)timeout;
}

/* ---- kernel state ------------------------------------------------------------------------------
 */

typedef struct filter_sub {
  char *pubsub_topic;
  char *content_topic;
} filter_sub_t;

typedef struct protected_shard {
  uint16_t cluster, shard;
  uint8_t pubkey[LD_SECP256K1_PUBLIC_LEN];
} protected_shard_t;

struct ld_kernel {
  ld_lib_ctx_t *ctx;
  ld_node_t *node;
  ld_service_peers_t *peers;
  ld_kernel_op_t *ops; /* open requests */
  char **relay_topics;
  size_t n_relay;
  int64_t relay_listener; /* LD_EVENT_MESSAGE, 0 when none */
  filter_sub_t *subs;
  size_t n_subs;
  int64_t push_listener; /* LD_EVENT_FILTER_PUSH, 0 when none */
  bool has_filter_peer;
  ld_service_peer_t filter_peer;
  protected_shard_t prot[LD_KERNEL_MAX_PROTECTED];
  size_t n_prot;
  int validator; /* relay validator id, 0 when none */
};

ld_lib_ctx_t *ld_kernel_ctx(ld_kernel_t *k) {
  return k->ctx;
}

ld_node_t *ld_kernel_node_of(ld_kernel_t *k) {
  return k->node;
}

ld_service_peers_t *ld_kernel_service_peers(ld_kernel_t *k) {
  return k->peers;
}

static void emit_message(ld_kernel_t *k, const char *pubsub_topic,
                         const uint8_t hash[LD_WAKU_HASH_LEN], const ld_waku_message_t *msg) {
  size_t len = 0;
  char *json = ld_lib_event_kernel_message_json(pubsub_topic, hash, msg, &len);
  if (json == NULL) {
    ld_lib_ctx_emit_error(k->ctx, LD_LIB_LISTENER_KERNEL_MESSAGE, "out of memory");
    return;
  }
  ld_lib_ctx_emit(k->ctx, json, len);
  free(json);
}

static bool relay_listed(const ld_kernel_t *k, const char *topic) {
  for (size_t i = 0; i < k->n_relay; i++)
    if (strcmp(k->relay_topics[i], topic) == 0)
      return true;
  return false;
}

static void on_relay_message(int kind, const void *payload, void *user_data) {
  (void)kind;
  const ld_fanout_message_t *m = payload;
  ld_kernel_t *k = user_data;
  if (relay_listed(k, m->pubsub_topic))
    emit_message(k, m->pubsub_topic, m->hash, m->msg);
}

static bool sub_matches(const filter_sub_t *s, const char *pubsub, const char *content,
                        size_t content_len) {
  return strcmp(s->pubsub_topic, pubsub) == 0 && strlen(s->content_topic) == content_len &&
         memcmp(s->content_topic, content, content_len) == 0;
}

static bool filter_listed(const ld_kernel_t *k, const char *pubsub, const char *content,
                          size_t content_len) {
  for (size_t i = 0; i < k->n_subs; i++)
    if (sub_matches(&k->subs[i], pubsub, content, content_len))
      return true;
  return false;
}

static void on_filter_push(int kind, const void *payload, void *user_data) {
  (void)kind;
  const ld_filter_push_t *p = payload;
  ld_kernel_t *k = user_data;
  if (filter_listed(k, p->pubsub_topic, p->msg->content_topic, p->msg->content_topic_len))
    emit_message(k, p->pubsub_topic, p->hash, p->msg);
}

/* Subscribes or unsubscribes a broker listener so that it exists exactly while `want`. */
static int listen_while(ld_kernel_t *k, int64_t *handle, bool want, int kind,
                        ld_broker_listener_fn fn) {
  ld_broker_t *b = ld_node_broker(k->node);
  if (want && *handle == 0) {
    int64_t h = ld_broker_subscribe(b, kind, fn, k);
    if (h < 0)
      return (int)h;
    *handle = h;
  } else if (!want && *handle != 0) {
    ld_broker_unsubscribe(b, *handle);
    *handle = 0;
  }
  return 0;
}

int ld_kernel_relay_add(ld_kernel_t *k, const char *pubsub_topic) {
  if (relay_listed(k, pubsub_topic))
    return 0;
  if (k->n_relay == LD_KERNEL_MAX_RELAY_TOPICS)
    return LD_ERR_LIMIT;
  char **grown = realloc(k->relay_topics, (k->n_relay + 1) * sizeof *grown);
  char *copy = grown != NULL ? strdup(pubsub_topic) : NULL;
  if (grown != NULL)
    k->relay_topics = grown;
  if (copy == NULL)
    return LD_ERR_NOMEM;
  int rc = listen_while(k, &k->relay_listener, true, LD_EVENT_MESSAGE, on_relay_message);
  if (rc != 0) {
    free(copy);
    return rc;
  }
  k->relay_topics[k->n_relay++] = copy;
  return 0;
}

bool ld_kernel_relay_remove(ld_kernel_t *k, const char *pubsub_topic) {
  for (size_t i = 0; i < k->n_relay; i++) {
    if (strcmp(k->relay_topics[i], pubsub_topic) != 0)
      continue;
    free(k->relay_topics[i]);
    k->relay_topics[i] = k->relay_topics[--k->n_relay];
    listen_while(k, &k->relay_listener, k->n_relay > 0, LD_EVENT_MESSAGE, on_relay_message);
    return true;
  }
  return false;
}

static int filter_add_one(ld_kernel_t *k, const char *pubsub, const char *content) {
  if (filter_listed(k, pubsub, content, strlen(content)))
    return 0;
  if (k->n_subs == LD_KERNEL_MAX_FILTER_SUBS)
    return LD_ERR_LIMIT;
  filter_sub_t *grown = realloc(k->subs, (k->n_subs + 1) * sizeof *grown);
  if (grown == NULL)
    return LD_ERR_NOMEM;
  k->subs = grown;
  filter_sub_t s = {strdup(pubsub), strdup(content)};
  if (s.pubsub_topic == NULL || s.content_topic == NULL) {
    free(s.pubsub_topic);
    free(s.content_topic);
    return LD_ERR_NOMEM;
  }
  k->subs[k->n_subs++] = s;
  return 0;
}

int ld_kernel_filter_add(ld_kernel_t *k, const char *pubsub_topic, const char *const *topics,
                         size_t n) {
  int rc = listen_while(k, &k->push_listener, true, LD_EVENT_FILTER_PUSH, on_filter_push);
  for (size_t i = 0; rc == 0 && i < n; i++)
    rc = filter_add_one(k, pubsub_topic, topics[i]);
  listen_while(k, &k->push_listener, k->n_subs > 0, LD_EVENT_FILTER_PUSH, on_filter_push);
  return rc;
}

void ld_kernel_filter_remove(ld_kernel_t *k, const char *pubsub_topic, const char *const *topics,
                             size_t n) {
  for (size_t t = 0; t < n; t++)
    for (size_t i = 0; i < k->n_subs; i++) {
      if (!sub_matches(&k->subs[i], pubsub_topic, topics[t], strlen(topics[t])))
        continue;
      free(k->subs[i].pubsub_topic);
      free(k->subs[i].content_topic);
      k->subs[i] = k->subs[--k->n_subs];
      break;
    }
  listen_while(k, &k->push_listener, k->n_subs > 0, LD_EVENT_FILTER_PUSH, on_filter_push);
}

void ld_kernel_filter_clear(ld_kernel_t *k) {
  for (size_t i = 0; i < k->n_subs; i++) {
    free(k->subs[i].pubsub_topic);
    free(k->subs[i].content_topic);
  }
  free(k->subs);
  k->subs = NULL;
  k->n_subs = 0;
  listen_while(k, &k->push_listener, false, LD_EVENT_FILTER_PUSH, on_filter_push);
}

bool ld_kernel_filter_peer(const ld_kernel_t *k, ld_service_peer_t *out) {
  if (k->has_filter_peer)
    *out = k->filter_peer;
  return k->has_filter_peer;
}

void ld_kernel_set_filter_peer(ld_kernel_t *k, const ld_service_peer_t *peer) {
  k->has_filter_peer = peer != NULL;
  if (peer != NULL)
    k->filter_peer = *peer;
}

/* ---- protected shards ---- */

static const protected_shard_t *protection_of(const ld_kernel_t *k, const char *topic) {
  ld_relay_shard_t s;
  if (ld_pubsub_topic_parse(topic, strlen(topic), &s, NULL) != 0)
    return NULL;
  for (size_t i = 0; i < k->n_prot; i++)
    if (k->prot[i].cluster == s.cluster_id && k->prot[i].shard == s.shard_id)
      return &k->prot[i];
  return NULL;
}

static void validate_protected(ld_relay_t *r, uint64_t token, const char *topic,
                               const ld_waku_message_t *msg, const ld_peerid_t *from,
                               void *user_data) {
  (void)from;
  const protected_shard_t *p = protection_of(user_data, topic);
  ld_gs_verdict_t verdict = LD_GS_ACCEPT;
  if (p != NULL && ld_relay_verify_signed(p->pubkey, topic, msg, (int64_t)ld_wall_ns()) != 0)
    verdict = LD_GS_REJECT;
  ld_relay_validation_done(r, token, verdict);
}

int ld_kernel_protect_shard(ld_kernel_t *k, uint16_t cluster, uint16_t shard,
                            const uint8_t pubkey[LD_SECP256K1_PUBLIC_LEN]) {
  ld_relay_t *relay = ld_node_relay(k->node);
  if (relay == NULL)
    return LD_ERR_UNSUPPORTED;
  size_t i = 0;
  while (i < k->n_prot && !(k->prot[i].cluster == cluster && k->prot[i].shard == shard))
    i++;
  if (i == LD_KERNEL_MAX_PROTECTED)
    return LD_ERR_LIMIT;
  if (k->validator == 0) {
    int id = ld_relay_add_validator(relay, validate_protected, k);
    if (id < 0)
      return id;
    k->validator = id;
  }
  k->prot[i].cluster = cluster;
  k->prot[i].shard = shard;
  memcpy(k->prot[i].pubkey, pubkey, LD_SECP256K1_PUBLIC_LEN);
  k->n_prot += i == k->n_prot;
  return 0;
}

/* ---- creation and teardown ---- */

static int provide_state(const void *request, void *response, void *user_data) {
  (void)request;
  *(ld_kernel_t **)response = user_data;
  return 0;
}

static void abandon(ld_kernel_op_t *op, const char *text);

static void state_free(ld_kernel_t *k) {
  for (size_t i = 0; i < k->n_relay; i++)
    free(k->relay_topics[i]);
  free(k->relay_topics);
  ld_kernel_filter_clear(k);
  ld_service_peers_free(k->peers);
  free(k);
}

/* The context's stop hook: the node is about to stop. */
static void on_node_stop(ld_lib_ctx_t *ctx, void *user_data) {
  (void)ctx;
  ld_kernel_t *k = user_data;
  while (k->ops != NULL)
    abandon(k->ops, "node stopped");
  listen_while(k, &k->relay_listener, false, LD_EVENT_MESSAGE, on_relay_message);
  listen_while(k, &k->push_listener, false, LD_EVENT_FILTER_PUSH, on_filter_push);
  if (k->validator != 0 && ld_node_relay(k->node) != NULL)
    ld_relay_remove_validator(ld_node_relay(k->node), k->validator);
  ld_broker_remove_provider(ld_node_broker(k->node), STATE_PROVIDER);
  state_free(k);
}

static ld_kernel_t *state_new(ld_lib_ctx_t *ctx, ld_node_t *node) {
  ld_kernel_t *k = calloc(1, sizeof *k);
  if (k == NULL)
    return NULL;
  k->ctx = ctx;
  k->node = node;
  k->peers = ld_service_peers_new(node, 0);
  if (k->peers == NULL ||
      ld_broker_set_provider(ld_node_broker(node), STATE_PROVIDER, provide_state, k) != 0) {
    state_free(k);
    return NULL;
  }
  if (ld_lib_ctx_add_stop_hook(ctx, on_node_stop, k) < 0) {
    ld_broker_remove_provider(ld_node_broker(node), STATE_PROVIDER);
    state_free(k);
    return NULL;
  }
  return k;
}

ld_kernel_t *ld_kernel_get(ld_lib_ctx_t *ctx, ld_lib_request_t *req, const char *op) {
  ld_node_t *node = ld_kernel_node(ctx, req, op);
  if (node == NULL)
    return NULL;
  ld_kernel_t *k = NULL;
  if (ld_broker_request(ld_node_broker(node), STATE_PROVIDER, NULL, &k) == 0 && k != NULL)
    return k;
  k = state_new(ctx, node);
  if (k == NULL)
    ld_lib_reply_err(req, "%s failed: out of memory", op);
  return k;
}

/* ---- operations --------------------------------------------------------------------------------
 */

static void op_unlink(ld_kernel_op_t *op) {
  if (op->k == NULL)
    return;
  if (op->prev != NULL)
    op->prev->next = op->next;
  else
    op->k->ops = op->next;
  if (op->next != NULL)
    op->next->prev = op->prev;
  op->next = op->prev = NULL;
  op->k = NULL;
}

static void on_timer_closed(uv_handle_t *h) {
  ld_kernel_op_release(h->data);
}

/* The request was answered: forget it, stop the timer. */
static void op_complete(ld_kernel_op_t *op) {
  op->req = NULL;
  op_unlink(op);
  if (op->timer_on) {
    op->timer_on = false;
    uv_timer_stop(&op->timer);
    uv_close((uv_handle_t *)&op->timer, on_timer_closed);
  }
}

static void op_cancel(ld_kernel_op_t *op) {
  if (op->dial != NULL) {
    ld_service_peers_connect_cancel(op->dial);
    op->dial = NULL;
    ld_kernel_op_release(op);
  }
  ld_kernel_cancel_fn cancel = op->cancel;
  op->cancel = NULL;
  if (cancel != NULL)
    cancel(op);
}

/* Completes the request early with `text` (verbatim) and cancels what can be cancelled. */
static void finish_early(ld_kernel_op_t *op, const char *text) {
  op->refs++; /* keeps the op while cancelling */
  if (op->req != NULL)
    ld_lib_reply_err(op->req, "%s", text);
  op_complete(op);
  op_cancel(op);
  ld_kernel_op_release(op);
}

static void abandon(ld_kernel_op_t *op, const char *why) {
  char text[256];
  snprintf(text, sizeof text, "%s failed: %s", op->name, why);
  finish_early(op, text);
}

static void on_timeout(uv_timer_t *t) {
  ld_kernel_op_t *op = t->data;
  finish_early(op, op->timeout_text);
}

ld_kernel_op_t *ld_kernel_op_new(ld_kernel_t *k, ld_lib_request_t *req, const char *name,
                                 uint32_t timeout_ms, const char *timeout_text) {
  ld_kernel_op_t *op = calloc(1, sizeof *op);
  if (op == NULL) {
    ld_lib_reply_err(req, "%s failed: out of memory", name);
    return NULL;
  }
  op->k = k;
  op->req = req;
  op->name = name;
  op->timeout_text = timeout_text;
  op->refs = 1;
  op->next = k->ops;
  if (k->ops != NULL)
    k->ops->prev = op;
  k->ops = op;
  if (timeout_ms > 0) {
    uv_timer_init(ld_lib_ctx_loop(k->ctx), &op->timer);
    op->timer.data = op;
    uv_timer_start(&op->timer, on_timeout, timeout_ms, 0);
    op->timer_on = true;
    op->refs++;
  }
  return op;
}

bool ld_kernel_op_open(const ld_kernel_op_t *op) {
  return op->req != NULL;
}

void ld_kernel_op_ok(ld_kernel_op_t *op, const char *text, size_t len) {
  if (op->req == NULL)
    return;
  ld_lib_reply_ok(op->req, text, len);
  op_complete(op);
}

void ld_kernel_op_err(ld_kernel_op_t *op, const char *fmt, ...) {
  if (op->req == NULL)
    return;
  va_list ap;
  va_start(ap, fmt);
  char text[1024];
  vsnprintf(text, sizeof text, fmt, ap);
  va_end(ap);
  ld_lib_reply_err(op->req, "%s", text);
  op_complete(op);
}

void ld_kernel_op_release(ld_kernel_op_t *op) {
  if (--op->refs > 0)
    return;
  if (op->req != NULL) /* every path answers first; this is a safety net */
    ld_lib_reply_err(op->req, "%s failed: internal error", op->name);
  op_unlink(op);
  if (op->free_data != NULL)
    op->free_data(op);
  free(op);
}

static void on_service_conn(ld_conn_t *c, int err, void *user_data) {
  ld_kernel_op_t *op = user_data;
  op->dial = NULL;
  op->on_conn(op, c, err, &op->peer);
}

int ld_kernel_op_connect(ld_kernel_op_t *op, const char *protocol, const ld_service_peer_t *peer,
                         ld_kernel_conn_fn cb) {
  if (op->k == NULL)
    return LD_ERR_STATE;
  if (peer != NULL)
    op->peer = *peer;
  else if (ld_service_peers_pick(op->k->peers, protocol, NULL, 0, ld_now_ms(), &op->peer, 1) == 0)
    return LD_ERR_NOT_FOUND;
  op->on_conn = cb;
  op->refs++;
  int rc = ld_service_peers_connect(ld_node_switch(op->k->node), &op->peer, on_service_conn, op,
                                    &op->dial);
  if (rc != 0) {
    op->dial = NULL;
    op->refs--;
  }
  return rc;
}
