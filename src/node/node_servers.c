/* The node's HTTP servers: REST (nwaku's API over the node's parts) and Prometheus metrics. */
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "base/log.h"
#include "metrics/nrs_metrics.h"
#include "metrics/process.h"
#include "node/node_internal.h"
#include "node/peer_manager.h"
#include "waku/core/codecs.h"
#include "waku/core/topics.h"

#define TOPIC "node"

/* ---- the relay operations REST needs ------------------------------------------------------ */

static void why_text(char *why, size_t cap, const char *text) {
  if (why != NULL && cap > 0)
    snprintf(why, cap, "%s", text);
}

static int rest_subscribe(void *ud, const char *topic, char *why, size_t cap) {
  int rc = ld_node_subscribe(ud, topic);
  if (rc != 0)
    why_text(why, cap, ld_strerror(rc));
  return rc;
}

static int rest_unsubscribe(void *ud, const char *topic, char *why, size_t cap) {
  int rc = ld_node_unsubscribe(ud, topic);
  if (rc != 0)
    why_text(why, cap, ld_strerror(rc));
  return rc;
}

static bool rest_subscribed(void *ud, const char *topic) {
  ld_node_t *node = ud;
  return node->relay != NULL && ld_relay_subscribed(node->relay, topic);
}

/* The reason of an RLN-relay publish's error. */
static const char *rln_publish_why(int rc, ld_relay_reason_t reason) {
  return rc == LD_ERR_LIMIT      ? "RLN: message limit of this epoch reached"
         : rc == LD_ERR_STATE    ? "RLN: no membership credentials to prove with"
         : reason != LD_RELAY_OK ? ld_relay_reason_name(reason)
                                 : ld_strerror(rc);
}

static int rest_publish(void *ud, const char *topic, const ld_waku_message_t *msg, char *why,
                        size_t cap) {
  ld_node_t *node = ud;
  if (node->rln != NULL) { /* RLN-relay: proved off the loop, then published */
    ld_relay_reason_t reason = LD_RELAY_OK;
    int rc = ld_node_rln_publish(node, topic, msg, NULL, &reason, NULL, NULL, NULL);
    if (rc != 0)
      why_text(why, cap, rln_publish_why(rc, reason));
    return rc;
  }
  ld_relay_reason_t reason = ld_relay_check_outgoing(node->relay, topic, msg);
  if (reason != LD_RELAY_OK) {
    why_text(why, cap, ld_relay_reason_name(reason));
    return reason == LD_RELAY_TOO_LARGE ? LD_ERR_TOO_LARGE : LD_ERR_INVALID_ARG;
  }
  int rc = ld_relay_publish(node->relay, topic, msg, NULL);
  if (rc < 0)
    why_text(why, cap, ld_strerror(rc));
  return rc;
}

/* A REST publish waiting for its RLN proof. */
typedef struct rest_publish_wait {
  ld_rest_published_fn done;
  void *done_data;
} rest_publish_wait_t;

static void on_rest_published(void *ud, int result, const char *topic, const ld_waku_message_t *msg,
                              const uint8_t hash[LD_WAKU_HASH_LEN]) {
  (void)topic;
  (void)msg;
  (void)hash;
  rest_publish_wait_t *w = ud;
  w->done(w->done_data, result, result < 0 ? rln_publish_why(result, LD_RELAY_OK) : "");
  free(w);
}

static int rest_publish_later(void *ud, const char *topic, const ld_waku_message_t *msg, char *why,
                              size_t cap, ld_rest_published_fn done, void *done_data) {
  ld_node_t *node = ud;
  if (node->rln == NULL)
    return rest_publish(ud, topic, msg, why, cap);
  rest_publish_wait_t *w = malloc(sizeof *w);
  if (w == NULL)
    return LD_ERR_NOMEM;
  *w = (rest_publish_wait_t){done, done_data};
  ld_relay_reason_t reason = LD_RELAY_OK;
  int rc = ld_node_rln_publish(node, topic, msg, NULL, &reason, on_rest_published, w, NULL);
  if (rc == LD_NODE_PUBLISH_LATER)
    return LD_REST_PUBLISH_LATER;
  free(w);
  if (rc < 0)
    why_text(why, cap, rln_publish_why(rc, reason));
  return rc;
}

static int rest_await_archived(void *ud, const char *topic, const ld_waku_message_t *msg,
                               void (*done)(void *done_data), void *done_data) {
  return ld_node_await_archived(ud, topic, msg, done, done_data);
}

static size_t rest_peer_count(void *ud) {
  ld_node_t *node = ud;
  return node->gs != NULL ? ld_gs_service_peers(node->gs, NULL, 0) : 0;
}

static bool rest_peer_score(void *ud, const ld_peerid_t *peer, double *score) {
  ld_node_t *node = ud;
  ld_gs_peer_info_t info[64];
  size_t n = node->gs != NULL ? ld_gs_service_peers(node->gs, info, 64) : 0;
  for (size_t i = 0; i < n && i < 64; i++)
    if (ld_peerid_equal(&info[i].id, peer)) {
      *score = info[i].score;
      return true;
    }
  return false;
}

static size_t rest_listen_addrs(void *ud, ld_multiaddr_t *out, size_t max) {
  return ld_node_listen_addrs(ud, out, max);
}

static int rest_enr_uri(void *ud, char *out, size_t cap) {
  return ld_node_enr_text(ud, out, cap);
}

static const char *rest_peer_origin(void *ud, const ld_peerid_t *peer) {
  ld_node_t *node = ud;
  const ld_pm_peer_t *p = ld_node_pm(node) != NULL ? ld_pm_get(ld_node_pm(node), peer) : NULL;
  if (p != NULL && p->origin != LD_PM_ORIGIN_UNKNOWN)
    return ld_pm_origin_name(p->origin);
  for (size_t i = 0; node->statics != NULL && i < ld_static_peers_count(node->statics); i++)
    if (ld_peerid_equal(ld_static_peers_peer(node->statics, i), peer))
      return "Static";
  return "UnknownOrigin";
}

/* ---- what /health reports -------------------------------------------------------------------- */

/* nwaku's selectPeer: the configured service node, else any other peer known to serve `codec`. */
static bool service_peer(const ld_node_t *node, ld_node_service_t which, const char *codec) {
  if (node->cfg.has_service_node[which])
    return true;
  ld_peerid_t ids[2];
  size_t n = ld_peerstore_peers(node->peerstore, codec, ids, 2);
  for (size_t i = 0; i < n && i < 2; i++)
    if (!ld_peerid_equal(&ids[i], &node->peer_id))
      return true;
  return false;
}

static void rest_protocols(void *ud, ld_rest_protocols_t *out) {
  const ld_node_t *node = ud;
  out->lightpush = out->legacy_lightpush = node->lightpush != NULL; /* it serves both versions */
  out->filter = node->filter != NULL;
  out->store = node->store != NULL;
  out->peer_exchange = node->px != NULL;
  out->lightpush_client = out->legacy_lightpush_client =
      node->cfg.has_service_node[LD_NODE_SERVICE_LIGHTPUSH];
  out->filter_client = node->filter_client != NULL;
  out->store_client = node->cfg.has_service_node[LD_NODE_SERVICE_STORE];
  out->lightpush_peer = service_peer(node, LD_NODE_SERVICE_LIGHTPUSH, LD_WAKU_LIGHTPUSH_CODEC);
  out->legacy_lightpush_peer =
      service_peer(node, LD_NODE_SERVICE_LIGHTPUSH, LD_WAKU_LEGACY_LIGHTPUSH_CODEC);
  out->filter_peer = service_peer(node, LD_NODE_SERVICE_FILTER, LD_WAKU_FILTER_SUBSCRIBE_CODEC);
  out->store_peer = service_peer(node, LD_NODE_SERVICE_STORE, LD_WAKU_STORE_CODEC);
}

/* ---- REST ------------------------------------------------------------------------------------ */

typedef struct cached_topics {
  char pubsub[LD_NODE_MAX_SHARDS][LD_WAKU_PUBSUB_TOPIC_MAX_LEN + 1];
  const char *pubsub_ptrs[LD_NODE_MAX_SHARDS];
  const char *content_ptrs[LD_NODE_MAX_CONTENT_TOPICS];
  const char *origin_ptrs[LD_NODE_MAX_REST_ORIGINS];
} cached_topics_t;

static void fill_rest_config(const ld_node_t *node, cached_topics_t *t, ld_rest_config_t *rc) {
  ld_rest_config_default(rc);
  rc->address = node->cfg.rest.address;
  rc->port = node->cfg.rest.port;
  rc->admin = node->cfg.rest_admin;
  rc->relay_cache_capacity = node->cfg.rest_relay_cache_capacity;
  for (size_t i = 0; i < node->cfg.n_rest_allow_origins; i++)
    t->origin_ptrs[i] = node->cfg.rest_allow_origins[i];
  rc->allowed_origins = t->origin_ptrs;
  rc->n_allowed_origins = node->cfg.n_rest_allow_origins;
  for (size_t i = 0; i < node->cfg.n_shards; i++) {
    ld_relay_shard_t shard = {node->cfg.cluster_id, node->cfg.shards[i]};
    ld_pubsub_topic_format(shard, t->pubsub[i], sizeof t->pubsub[i]);
    t->pubsub_ptrs[i] = t->pubsub[i];
  }
  for (size_t i = 0; i < node->cfg.n_content_topics; i++)
    t->content_ptrs[i] = node->cfg.content_topics[i];
  rc->cached_pubsub_topics = t->pubsub_ptrs;
  rc->n_cached_pubsub_topics = node->cfg.n_shards;
  rc->cached_content_topics = t->content_ptrs;
  rc->n_cached_content_topics = node->cfg.n_content_topics;
}

/* The end of the fan-out (LD_FANOUT_BROKER): REST's relay cache. */
static void rest_cache_stage(const ld_fanout_message_t *m, void *user_data) {
  ld_node_t *node = user_data;
  if (node->rest != NULL)
    ld_rest_server_relay_message(node->rest, m->pubsub_topic, m->msg);
}

/* The reliability the node's Messaging API uses: p2p only when the NRS is mounted. */
static const char *reliability_mode(const ld_node_t *node) {
  return ld_node_reliability_mode_name(node->nrs != NULL ? LD_NODE_RELIABILITY_P2P
                                                         : LD_NODE_RELIABILITY_STORE);
}

static int start_rest(ld_node_t *node) {
  static const ld_rest_relay_ops_t ops_template = {.subscribe = rest_subscribe,
                                                   .unsubscribe = rest_unsubscribe,
                                                   .subscribed = rest_subscribed,
                                                   .publish = rest_publish,
                                                   .publish_later = rest_publish_later,
                                                   .await_archived = rest_await_archived,
                                                   .peer_count = rest_peer_count,
                                                   .peer_score = rest_peer_score};
  ld_rest_relay_ops_t ops = ops_template;
  ops.user_data = node;
  ld_rest_context_t ctx;
  memset(&ctx, 0, sizeof ctx);
  ctx.loop = node->loop;
  ctx.sw = node->sw;
  ctx.peerstore = node->peerstore;
  ctx.metadata = node->metadata;
  ctx.relay = node->relay != NULL ? &ops : NULL;
  ld_rest_lightpush_ops_t lp;
  ld_rest_filter_ops_t fo;
  ld_rest_store_ops_t so;
  bool has_lightpush = false, has_filter = false;
  int ops_err = ld_node_rest_services(node, &lp, &fo, &so, &has_lightpush, &has_filter);
  if (ops_err != 0)
    return ops_err;
  ctx.lightpush = has_lightpush ? &lp : NULL;
  ctx.filter = has_filter ? &fo : NULL;
  ctx.store = &so;
  ctx.cluster_id = node->cfg.cluster_id;
  ctx.num_shards_in_network = node->cfg.num_shards_in_network;
  ctx.max_msg_size = node->cfg.max_msg_size;
  ctx.listen_addrs = rest_listen_addrs;
  ctx.enr_uri = rest_enr_uri;
  ctx.peer_origin = rest_peer_origin;
  ctx.protocols = rest_protocols;
  ctx.reliability_mode = reliability_mode(node);
  ctx.user_data = node;
  ld_rest_status_ops_t status;
  ld_node_status_ops(node, &status);
  ctx.status = &status;
  cached_topics_t *topics = malloc(sizeof *topics);
  if (topics == NULL)
    return LD_ERR_NOMEM;
  ld_rest_config_t rc;
  fill_rest_config(node, topics, &rc);
  int err = ld_rest_server_new(&ctx, &rc, &node->rest);
  free(topics);
  if (err == 0) {
    node->rest_stage = ld_fanout_add(node->fanout, LD_FANOUT_BROKER, rest_cache_stage, node);
    err = node->rest_stage > 0 ? 0 : node->rest_stage;
  }
  if (err != 0) {
    LD_ERROR(TOPIC, "REST server on %s:%u failed: %s", node->cfg.rest.address, node->cfg.rest.port,
             ld_strerror(err));
    char where[LD_NODE_ADDRESS_MAX + 8];
    snprintf(where, sizeof where, "%s:%u", node->cfg.rest.address, node->cfg.rest.port);
    ld_node_note_failure(node, "rest", err, where);
  } else
    ld_rest_server_set_health(node->rest, LD_REST_HEALTH_READY);
  return err;
}

/* ---- metrics ------------------------------------------------------------------------------ */

static int start_metrics(ld_node_t *node) {
  node->metrics_reg = ld_metrics_new();
  if (node->metrics_reg == NULL)
    return LD_ERR_NOMEM;
  ld_metrics_register_process(node->metrics_reg);
  ld_node_metrics_sources_t src = {node->sw, node->peerstore, node->metadata,
                                   node->gs != NULL ? ld_gs_service_router(node->gs) : NULL, NULL};
  node->node_metrics = ld_node_metrics_new(node->metrics_reg, &src);
  if (node->node_metrics == NULL)
    return LD_ERR_NOMEM;
  ld_node_metrics_set_relay(node->node_metrics, node->relay);
  ld_service_metrics_sources_t ss;
  memset(&ss, 0, sizeof ss);
  ss.archive = node->archive_opening ? NULL : node->archive; /* set once open */
  ss.store = node->store;
  ss.lightpush = node->lightpush;
  ss.filter = node->filter;
  ss.px = node->px;
  ss.store_sync = node->store_sync;
  ss.loop = node->loop;
  node->service_metrics = ld_service_metrics_new(node->metrics_reg, &ss);
  if (node->service_metrics == NULL)
    return LD_ERR_NOMEM;
  int nrs_err = ld_nrs_metrics_register(node->metrics_reg, reliability_mode(node), node->nrs);
  if (nrs_err != 0)
    return nrs_err;
  int rln_err = ld_node_rln_register_metrics(node, node->metrics_reg);
  if (rln_err != 0)
    return rln_err;
  ld_metrics_server_config_t mc = {node->loop, node->metrics_reg, node->cfg.metrics.address,
                                   node->cfg.metrics.port};
  int err = ld_metrics_server_new(&mc, &node->metrics_srv);
  if (err != 0) {
    LD_ERROR(TOPIC, "metrics server on %s:%u failed: %s", node->cfg.metrics.address,
             node->cfg.metrics.port, ld_strerror(err));
    char where[LD_NODE_ADDRESS_MAX + 8];
    snprintf(where, sizeof where, "%s:%u", node->cfg.metrics.address, node->cfg.metrics.port);
    ld_node_note_failure(node, "metrics", err, where);
  }
  return err;
}

int ld_node_servers_start(ld_node_t *node) {
  int rc = node->cfg.rest.enabled ? start_rest(node) : 0;
  if (rc == 0 && node->cfg.metrics.enabled)
    rc = start_metrics(node);
  return rc;
}

uint16_t ld_node_rest_port(const ld_node_t *node) {
  return node->rest != NULL ? ld_rest_server_port(node->rest) : 0;
}

ld_rest_server_t *ld_node_rest_server(ld_node_t *node) {
  return node->rest;
}

uint16_t ld_node_metrics_port(const ld_node_t *node) {
  return node->metrics_srv != NULL ? ld_metrics_server_port(node->metrics_srv) : 0;
}

void ld_node_servers_stop(ld_node_t *node) {
  ld_node_status_stop(node);
  if (node->rest_stage > 0)
    ld_fanout_remove(node->fanout, node->rest_stage);
  node->rest_stage = 0;
  if (node->rest != NULL) {
    node->pending++;
    ld_rest_server_set_health(node->rest, LD_REST_HEALTH_SHUTTING_DOWN);
    ld_rest_server_close(node->rest, ld_node_pending_done, node);
    node->rest = NULL;
  }
  if (node->metrics_srv != NULL) {
    node->pending++;
    ld_metrics_server_close(node->metrics_srv, ld_node_pending_done, node);
    node->metrics_srv = NULL;
  }
}

void ld_node_servers_free(ld_node_t *node) {
  ld_service_metrics_free(node->service_metrics);
  node->service_metrics = NULL;
  ld_node_metrics_free(node->node_metrics);
  node->node_metrics = NULL;
  ld_metrics_free(node->metrics_reg);
  node->metrics_reg = NULL;
}
