/* The node's service protocols, mounted after relay in nwaku's order: the archive and the store
 * server (and store-sync), lightpush, filter, peer exchange; and the node's own ENR. */
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "base/log.h"
#include "node/events.h"
#include "node/node_internal.h"
#include "node/peer_manager.h"
#include "waku/core/topics.h"

#define TOPIC "node"

/* ---- archive and store ------------------------------------------------------------------------
 */

/* An own message someone waits to see archived (ld_node_await_archived). */
typedef struct archive_wait {
  uint8_t hash[LD_WAKU_HASH_LEN];
  void (*done)(void *done_data);
  void *done_data;
  uint64_t since_ms;
  struct archive_wait *next;
} archive_wait_t;

static void waits_complete(archive_wait_t *w) {
  while (w != NULL) {
    archive_wait_t *next = w->next;
    w->done(w->done_data);
    free(w);
    w = next;
  }
}

/* Takes out of the node's list the waits for `hash` (claim) or, with `hash` NULL, those older
 * than LD_NODE_ARCHIVE_WAIT_MS; returns them as a list. */
static archive_wait_t *waits_take(ld_node_t *node, const uint8_t *hash, uint64_t now_ms) {
  archive_wait_t *taken = NULL, **pp = &node->archive_waits;
  while (*pp != NULL) {
    archive_wait_t *w = *pp;
    bool take = hash != NULL ? memcmp(w->hash, hash, LD_WAKU_HASH_LEN) == 0
                             : now_ms - w->since_ms >= LD_NODE_ARCHIVE_WAIT_MS;
    if (!take) {
      pp = &w->next;
      continue;
    }
    *pp = w->next;
    w->next = taken;
    taken = w;
  }
  return taken;
}

static void on_own_archived(int err, void *user_data) {
  (void)err; /* a failed write is logged by the archive; the publish itself succeeded */
  waits_complete(user_data);
}

int ld_node_await_archived(ld_node_t *node, const char *pubsub_topic, const ld_waku_message_t *msg,
                           void (*done)(void *done_data), void *done_data) {
  if (node->archive == NULL || node->archive_stage <= 0 || node->relay == NULL ||
      !ld_relay_subscribed(node->relay, pubsub_topic))
    return LD_ERR_NOT_FOUND;
  if (msg->timestamp == 0)
    return LD_ERR_INVALID_ARG;
  archive_wait_t *w = calloc(1, sizeof *w);
  if (w == NULL)
    return LD_ERR_NOMEM;
  if (ld_waku_message_hash(pubsub_topic, msg, w->hash) != 0) {
    free(w);
    return LD_ERR_INVALID_ARG;
  }
  w->done = done;
  w->done_data = done_data;
  w->since_ms = uv_now(node->loop);
  w->next = node->archive_waits;
  node->archive_waits = w;
  return 0;
}

/* The archive takes messages from its mount on, while it opens too (it writes them once open);
 * none is dropped without a word. The node's own messages that someone waits for report when
 * written. */
static void archive_stage(const ld_fanout_message_t *m, void *user_data) {
  ld_node_t *node = user_data;
  archive_wait_t *waits = NULL;
  if (node->archive_waits != NULL) {
    waits_complete(waits_take(node, NULL, m->received_ms)); /* given up */
    waits = m->own ? waits_take(node, m->hash, 0) : NULL;
  }
  int rc = node->archive != NULL
               ? ld_archive_handle_message(node->archive, m->pubsub_topic, m->msg, m->hash,
                                           waits != NULL ? on_own_archived : NULL, waits)
               : LD_ERR_CLOSED;
  if (rc < 0)
    LD_WARN(TOPIC, "archive refused a message on %s: %s", m->pubsub_topic, ld_errname(rc));
  if (rc != LD_ARCHIVE_ACCEPTED)
    waits_complete(waits);
  else /* what the archive accepts is what store-sync reconciles */
    ld_store_sync_add(node->store_sync, m->pubsub_topic, m->msg->timestamp, m->hash);
}

static int store_backend_query(void *ctx, const ld_archive_query_t *q, ld_archive_query_fn done,
                               void *user_data) {
  ld_node_t *node = ctx;
  if (node->archive == NULL)
    return LD_ERR_CLOSED;
  return ld_archive_query(node->archive, q, done, user_data);
}

static void on_archive_open(ld_archive_t *a, int err, const char *why, void *user_data) {
  ld_node_t *node = user_data;
  node->archive_opening = false;
  if (err != 0) {
    node->archive = NULL; /* gone */
    LD_ERROR(TOPIC, "Cannot open the archive %s: %s (%s)", node->cfg.store_db_url,
             why != NULL ? why : ld_strerror(err), ld_errname(err));
    if (node->state == NODE_STOPPING) {
      ld_node_pending_done(node);
      return;
    }
    if (node->archive_stage > 0) /* reported once here rather than for every message */
      ld_fanout_remove(node->fanout, node->archive_stage);
    node->archive_stage = 0;
    ld_event_node_failure_t ev = {"archive", err, why != NULL ? why : ld_strerror(err)};
    ld_node_note_failure(node, ev.part, err, ev.why);
    ld_broker_publish(node->broker, LD_EVENT_NODE_FAILURE, &ev);
    return;
  }
  if (node->state == NODE_STOPPING) {
    ld_archive_close(a, ld_node_pending_done, node);
    return;
  }
  if (node->service_metrics != NULL)
    ld_service_metrics_set_archive(node->service_metrics, a);
  LD_INFO(TOPIC, "Archive open (%s driver)", ld_archive_driver_name(a));
}

static int open_archive(ld_node_t *node) {
  ld_archive_config_t ac;
  ld_archive_config_default(&ac);
  ac.url = node->cfg.store_db_url;
  char why[256];
  int n = ld_archive_policy_parse(node->cfg.store_retention, ac.policies, LD_ARCHIVE_MAX_POLICIES,
                                  why, sizeof why);
  if (n < 0) {
    LD_ERROR(TOPIC, "store-message-retention-policy '%s': %s", node->cfg.store_retention, why);
    ld_node_note_failure(node, "retention", n, why);
    return n;
  }
  ac.n_policies = (size_t)n;
  ac.max_db_connections = node->cfg.store_max_db_connections;
  int rc = ld_archive_open_early(node->loop, &ac, on_archive_open, node, &node->archive);
  if (rc != 0)
    return rc;
  node->archive_opening = true;
  return 0;
}

static uint32_t disabled_store_functions(const ld_node_config_t *c) {
  return (c->store_key_value ? 0 : LD_STORE_FN_KEY_VALUE) |
         (c->store_key_presence ? 0 : LD_STORE_FN_KEY_PRESENCE) |
         (c->store_wayback ? 0 : LD_STORE_FN_WAYBACK);
}

/* The archive takes messages and store queries at once, before its database is open, and holds
 * them until it is (a large archive takes a while to open). */
static int mount_store(ld_node_t *node) {
  int rc = open_archive(node);
  if (rc != 0)
    return rc;
  rc = ld_fanout_add(node->fanout, LD_FANOUT_ARCHIVE, archive_stage, node);
  if (rc < 0)
    return rc;
  node->archive_stage = rc;
  ld_store_backend_t backend = {store_backend_query, node};
  ld_store_server_config_t sc;
  ld_store_server_config_default(&sc);
  sc.disabled_functions = disabled_store_functions(&node->cfg);
  node->store = ld_store_server_new(node->sw, &backend, &sc);
  return node->store != NULL ? 0 : LD_ERR_NOMEM;
}

/* ---- store-sync -------------------------------------------------------------------------------
 */

static int sync_backend_insert(void *ctx, const char *pubsub_topic, const ld_waku_message_t *msg,
                               const uint8_t hash[LD_WAKU_HASH_LEN], ld_archive_done_fn done,
                               void *user_data) {
  ld_node_t *node = ctx;
  if (node->archive == NULL)
    return LD_ERR_CLOSED;
  return ld_archive_insert(node->archive, pubsub_topic, msg, hash, done, user_data);
}

static int sync_backend_list(void *ctx, const ld_archive_listing_t *l, ld_archive_list_fn done,
                             void *user_data) {
  ld_node_t *node = ctx;
  if (node->archive == NULL)
    return LD_ERR_CLOSED;
  return ld_archive_list_keys(node->archive, l, done, user_data);
}

void ld_node_shard_topics(const ld_node_config_t *c, ld_node_shard_topics_t *out) {
  for (size_t i = 0; i < c->n_shards; i++) {
    ld_relay_shard_t shard = {c->cluster_id, c->shards[i]};
    ld_pubsub_topic_format(shard, out->text[i], sizeof out->text[i]);
    out->list[i] = out->text[i];
  }
}

void ld_node_protected_shards(const ld_node_config_t *c, ld_relay_protected_shard_t *out) {
  for (size_t i = 0; i < c->n_protected_shards; i++) {
    out[i].shard = c->protected_shards[i].shard;
    memcpy(out[i].pubkey, c->protected_shards[i].public_key, sizeof out[i].pubkey);
  }
}

/* nwaku mounts store-sync inside the store service, over the node's shards
 * (/waku/2/rs/<cluster>/<shard>) and without content topics. */
static int mount_store_sync(ld_node_t *node) {
  const ld_node_config_t *c = &node->cfg;
  ld_node_shard_topics_t topics;
  ld_node_shard_topics(c, &topics);
  ld_relay_protected_shard_t ps[LD_NODE_MAX_PROTECTED_SHARDS];
  ld_node_protected_shards(c, ps);
  ld_store_sync_config_t sc;
  ld_store_sync_config_default(&sc);
  sc.pubsub_topics = topics.list;
  sc.n_pubsub_topics = c->n_shards;
  sc.interval_ms = (uint64_t)c->store_sync_interval_s * 1000;
  sc.range_ns = (int64_t)c->store_sync_range_s * 1000000000ll;
  sc.jitter_ns = (int64_t)c->store_sync_relay_jitter_s * 1000000000ll;
  sc.max_msg_size = c->max_msg_size;
  sc.cluster_id = c->cluster_id;
  sc.protected_shards = ps;
  sc.n_protected_shards = c->n_protected_shards;
  ld_node_sync_rln_hook(node, &sc.rln, &sc.rln_ctx); /* RLN-relay's proof check on transfers */
  sc.read_timeout_ms = c->store_sync_read_timeout_ms;
  sc.session_timeout_ms = c->store_sync_session_timeout_ms;
  ld_store_sync_backend_t backend = {store_backend_query, sync_backend_insert, sync_backend_list,
                                     node};
  int err = 0;
  node->store_sync = ld_store_sync_new(node->sw, node->peerstore, &backend, &sc, &err);
  if (node->store_sync == NULL)
    LD_ERROR(TOPIC, "Cannot mount store-sync: %s", ld_strerror(err));
  return err;
}

/* ---- lightpush ----------------------------------------------------------------------------------
 */

static int mount_lightpush(ld_node_t *node) {
  ld_lightpush_server_config_t lc;
  ld_lightpush_server_config_default(&lc);
  lc.publish_later = ld_node_lightpush_publish; /* relay publish, RLN proofs (node_lightpush.c) */
  lc.publish_ctx = node;
  lc.static_sharding = node->cfg.num_shards_in_network == 0;
  lc.cluster_id = node->cfg.cluster_id;
  lc.num_shards = node->cfg.num_shards_in_network > 0 ? node->cfg.num_shards_in_network : 1;
  lc.max_msg_size = node->cfg.max_msg_size;
  node->lightpush = ld_lightpush_server_new(node->sw, &lc);
  return node->lightpush != NULL ? 0 : LD_ERR_NOMEM;
}

/* ---- filter -------------------------------------------------------------------------------------
 */

static void filter_stage(const ld_fanout_message_t *m, void *user_data) {
  ld_node_t *node = user_data;
  int rc = ld_filter_server_handle_message(node->filter, m->pubsub_topic, m->msg, m->hash);
  if (rc < 0)
    LD_WARN(TOPIC, "filter could not push a message on %s: %s", m->pubsub_topic, ld_errname(rc));
}

static int mount_filter(ld_node_t *node) {
  ld_filter_server_config_t fc;
  ld_filter_server_config_default(&fc);
  fc.max_peers = node->cfg.filter_max_peers;
  fc.max_criteria_per_peer = node->cfg.filter_max_criteria;
  fc.subscription_ttl_ms = (uint64_t)node->cfg.filter_subscription_timeout_s * 1000;
  node->filter = ld_filter_server_new(node->sw, node->loop, &fc);
  if (node->filter == NULL)
    return LD_ERR_NOMEM;
  int rc = ld_fanout_add(node->fanout, LD_FANOUT_FILTER, filter_stage, node);
  if (rc < 0)
    return rc;
  node->filter_stage = rc;
  return 0;
}

/* ---- peer exchange ------------------------------------------------------------------------------
 */

static int mount_peer_exchange(ld_node_t *node) {
  ld_px_server_config_t pc;
  ld_px_server_config_default(&pc);
  pc.cache = node->enr_cache;
  pc.has_cluster = true;
  pc.cluster_id = node->cfg.cluster_id;
  node->px = ld_px_server_new(node->sw, &pc);
  return node->px != NULL ? 0 : LD_ERR_NOMEM;
}

/* ---- learning ENRs ---- */

typedef struct px_ask {
  ld_node_t *node;
  int slot; /* index in node->px_calls */
} px_ask_t;

static void on_px_answer(const ld_px_response_t *resp, int err, void *user_data) {
  px_ask_t *ask = user_data;
  ld_node_t *node = ask->node;
  node->px_calls[ask->slot] = NULL;
  node->px_asks[ask->slot] = NULL;
  free(ask);
  if (err != 0 || resp == NULL || node->state == NODE_STOPPING)
    return;
  size_t kept = 0;
  for (size_t i = 0; i < resp->n_enrs; i++) {
    ld_peerid_t id;
    if (ld_enr_peer_id(&resp->enrs[i], &id) != 0 || ld_peerid_equal(&id, &node->peer_id))
      continue;
    /* the peer manager may dial it; with discv5 our own answers come from discv5 (nwaku) */
    ld_node_add_peer_enr(node, &resp->enrs[i], LD_PM_ORIGIN_PX);
    if (ld_node_discv5(node) == NULL && ld_enr_cache_put(node->enr_cache, &resp->enrs[i]) == 0)
      kept++;
  }
  ld_node_pm_poke(node);
  LD_DEBUG(TOPIC, "peer exchange: %zu records received, %zu kept", resp->n_enrs, kept);
}

static bool speaks(const ld_identify_info_t *info, const char *protocol) {
  for (size_t i = 0; i < info->n_protocols; i++)
    if (strcmp(info->protocols[i], protocol) == 0)
      return true;
  return false;
}

static int free_px_slot(const ld_node_t *node) {
  for (int i = 0; i < LD_NODE_PX_MAX_INFLIGHT; i++)
    if (node->px_calls[i] == NULL)
      return i;
  return -1;
}

void ld_node_px_learn(ld_node_t *node, ld_conn_t *c, const ld_identify_info_t *info) {
  int slot = free_px_slot(node);
  if (!node->cfg.peer_exchange || node->enr_cache == NULL || node->state == NODE_STOPPING ||
      slot < 0 || !speaks(info, LD_PX_PROTOCOL))
    return;
  px_ask_t *ask = malloc(sizeof *ask);
  if (ask == NULL)
    return;
  *ask = (px_ask_t){node, slot};
  if (ld_px_client_request_ex(node->sw, c, LD_PX_MAX_PEERS, NULL, on_px_answer, ask,
                              &node->px_calls[slot]) != 0) {
    node->px_calls[slot] = NULL;
    free(ask);
    return;
  }
  node->px_asks[slot] = ask;
}

/* Our peer-exchange requests are abandoned when the node stops. */
static void cancel_px_asks(ld_node_t *node) {
  for (int i = 0; i < LD_NODE_PX_MAX_INFLIGHT; i++) {
    if (node->px_calls[i] != NULL)
      ld_px_call_cancel(node->px_calls[i]);
    free(node->px_asks[i]);
    node->px_calls[i] = NULL;
    node->px_asks[i] = NULL;
  }
}

/* ---- mounting -----------------------------------------------------------------------------------
 */

int ld_node_services_mount(ld_node_t *node) {
  node->enr_cache = ld_enr_cache_new(LD_NODE_ENR_CACHE);
  if (node->enr_cache == NULL)
    return LD_ERR_NOMEM;
  int rc = 0;
  if (node->cfg.store)
    rc = mount_store(node);
  if (rc == 0 && node->cfg.store && node->cfg.store_sync)
    rc = mount_store_sync(node);
  else if (node->cfg.store_sync && !node->cfg.store)
    LD_WARN(TOPIC, "store-sync needs --store: not mounted");
  if (rc == 0 && node->cfg.lightpush)
    rc = mount_lightpush(node);
  if (rc == 0 && node->cfg.filter)
    rc = mount_filter(node);
  if (rc == 0 && node->cfg.peer_exchange)
    rc = mount_peer_exchange(node);
  if (rc == 0)
    rc = ld_node_nrs_mount(node);
  return rc;
}

/* ---- the node's ENR -----------------------------------------------------------------------------
 */

static uint8_t capabilities(const ld_node_t *node) {
  uint8_t caps = 0;
  caps |= node->relay != NULL ? LD_ENR_RELAY : 0;
  caps |= node->store != NULL ? LD_ENR_STORE : 0;
  caps |= node->filter != NULL ? LD_ENR_FILTER : 0;
  caps |= node->lightpush != NULL ? LD_ENR_LIGHTPUSH : 0;
  caps |= node->store_sync != NULL ? LD_ENR_SYNC : 0;
  return caps;
}

int ld_node_build_enr(ld_node_t *node) {
  ld_enr_node_config_t ec;
  memset(&ec, 0, sizeof ec);
  ec.seq = node->has_enr ? node->enr.seq + 1 : 0; /* a rebuilt record (new address) */
  ec.addrs = node->announced;
  ec.n_addrs = node->n_announced;
  ec.waku2 = capabilities(node);
  ec.udp_port = ld_node_discv5_port(node);
  ec.has_cluster = true;
  ec.cluster_id = node->cfg.cluster_id;
  ec.shards = node->cfg.shards;
  ec.n_shards = node->relay != NULL ? node->cfg.n_shards : 0;
  int rc = ld_enr_build_node(&node->enr, &node->key, &ec);
  node->has_enr = rc == 0;
  if (rc != 0)
    LD_WARN(TOPIC, "no ENR for this node: %s", ld_strerror(rc));
  return 0;
}

ld_store_sync_t *ld_node_store_sync(ld_node_t *node) {
  return node->store_sync;
}

ld_archive_t *ld_node_archive(ld_node_t *node) {
  return node->archive;
}

int ld_node_enr_text(const ld_node_t *node, char *out, size_t cap) {
  if (!node->has_enr)
    return LD_ERR_NOT_FOUND;
  return ld_enr_to_text(&node->enr, out, cap);
}

/* ---- stopping -----------------------------------------------------------------------------------
 */

void ld_node_services_stop(ld_node_t *node) {
  cancel_px_asks(node);
  ld_node_nrs_stop(node);
  ld_store_sync_stop(node->store_sync); /* before the archive closes */
  if (node->archive_stage > 0)
    ld_fanout_remove(node->fanout, node->archive_stage);
  if (node->filter_stage > 0)
    ld_fanout_remove(node->fanout, node->filter_stage);
  node->archive_stage = node->filter_stage = 0;
  waits_complete(node->archive_waits); /* those not written yet report from the archive */
  node->archive_waits = NULL;
  if (node->archive != NULL && node->service_metrics != NULL)
    ld_service_metrics_set_archive(node->service_metrics, NULL);
  if (node->archive_opening) {
    node->pending++; /* on_archive_open closes it and completes this */
  } else if (node->archive != NULL) {
    node->pending++;
    ld_archive_close(node->archive, ld_node_pending_done, node);
  }
  node->archive = NULL;
}

void ld_node_services_free(ld_node_t *node) {
  ld_node_nrs_free(node);
  ld_store_sync_free(node->store_sync);
  node->store_sync = NULL;
  ld_store_server_free(node->store);
  ld_lightpush_server_free(node->lightpush);
  ld_filter_server_free(node->filter);
  ld_px_server_free(node->px);
  ld_filter_client_free(node->filter_client);
  node->filter_client = NULL;
  ld_enr_cache_free(node->enr_cache);
  node->store = NULL;
  node->lightpush = NULL;
  node->filter = NULL;
  node->px = NULL;
  node->enr_cache = NULL;
}
