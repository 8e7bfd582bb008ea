/* The node's Network Reliability Service (--reliability-mode=p2p, waku/nrs/nrs.h): fed by the
 * fan-out's sync stage (every non-ephemeral message relay accepted or the node published), kicked
 * by new connections and relay peers, and handing what arrives by transfer back to the fan-out
 * as a relay message would come (filter subscribers, the archive, the broker and the Messaging
 * API see it once; relay does not forward it). Not mounted beside store-sync (both speak the
 * same protocols); the Messaging API then keeps store-based reliability. */
#include <string.h>

#include "base/clock.h"
#include "base/error.h"
#include "base/log.h"
#include "node/node_internal.h"
#include "node/events.h"
#include "waku/core/topics.h"

#define TOPIC "node"

static void sync_stage(const ld_fanout_message_t *m, void *user_data) {
  ld_node_t *node = user_data;
  if (node->nrs != NULL && !m->msg->ephemeral)
    ld_nrs_observe(node->nrs, m->pubsub_topic, m->msg, m->hash);
}

static void deliver(void *user, const char *pubsub_topic, const ld_waku_message_t *msg,
                    const uint8_t hash[LD_WAKU_HASH_LEN]) {
  ld_node_t *node = user;
  ld_fanout_message_t fm;
  memset(&fm, 0, sizeof fm);
  fm.pubsub_topic = pubsub_topic;
  fm.msg = msg;
  memcpy(fm.hash, hash, LD_WAKU_HASH_LEN);
  fm.received_ms = ld_now_ms();
  int rc = ld_fanout_dispatch(node->fanout, &fm);
  if (rc < 0)
    LD_WARN(TOPIC, "a recovered message was not dispatched: %s", ld_errname(rc));
}

static void on_peer_event(int kind, const void *payload, void *user_data) {
  ld_node_t *node = user_data;
  if (node->nrs == NULL)
    return;
  bool up = kind == LD_EVENT_CONNECTION ? ((const ld_event_connection_t *)payload)->connected
                                        : ((const ld_event_relay_peer_t *)payload)->up;
  if (up)
    ld_nrs_kick(node->nrs);
}

int ld_node_nrs_mount(ld_node_t *node) {
  const ld_node_config_t *c = &node->cfg;
  if (c->reliability_mode != LD_NODE_RELIABILITY_P2P)
    return 0;
  if (node->store_sync != NULL) {
    LD_WARN(TOPIC, "p2p reliability is not served beside store-sync: store-based reliability");
    return 0;
  }
  ld_node_shard_topics_t topics;
  ld_node_shard_topics(c, &topics);
  ld_relay_protected_shard_t ps[LD_NODE_MAX_PROTECTED_SHARDS];
  ld_node_protected_shards(c, ps);
  ld_nrs_config_t nc;
  ld_nrs_config_default(&nc);
  nc.pubsub_topics = topics.list;
  nc.n_pubsub_topics = c->n_shards;
  nc.window_ns = (int64_t)c->reliability_window_ms * 1000000ll;
  nc.confirm_peers = c->reliability_confirm_peers;
  if (c->reliability_interval_ms > 0)
    nc.interval_ms = c->reliability_interval_ms;
  nc.max_msg_size = c->max_msg_size;
  nc.cluster_id = c->cluster_id;
  nc.protected_shards = ps;
  nc.n_protected_shards = c->n_protected_shards;
  ld_node_sync_rln_hook(node, &nc.rln, &nc.rln_ctx); /* RLN-relay's proof check on transfers */
  nc.deliver = deliver;
  nc.deliver_user = node;
  int err = 0;
  node->nrs = ld_nrs_new(node->sw, node->peerstore, &nc, &err);
  if (node->nrs == NULL) {
    LD_ERROR(TOPIC, "Cannot mount the Network Reliability Service: %s", ld_strerror(err));
    return err;
  }
  int rc = ld_fanout_add(node->fanout, LD_FANOUT_SYNC, sync_stage, node);
  if (rc < 0)
    return rc;
  node->nrs_stage = rc;
  static const int kinds[2] = {LD_EVENT_CONNECTION, LD_EVENT_RELAY_PEER};
  for (int i = 0; i < 2; i++) {
    int64_t l = ld_broker_subscribe(node->broker, kinds[i], on_peer_event, node);
    if (l < 0)
      return (int)l;
    node->nrs_listeners[i] = l;
  }
  LD_INFO(TOPIC, "Network Reliability Service mounted: window %llu ms, %u confirming peers",
          (unsigned long long)c->reliability_window_ms, c->reliability_confirm_peers);
  return 0;
}

void ld_node_nrs_stop(ld_node_t *node) {
  if (node->nrs_stage > 0)
    ld_fanout_remove(node->fanout, node->nrs_stage);
  node->nrs_stage = 0;
  for (int i = 0; i < 2; i++)
    if (node->nrs_listeners[i] > 0)
      ld_broker_unsubscribe(node->broker, node->nrs_listeners[i]);
  memset(node->nrs_listeners, 0, sizeof node->nrs_listeners);
  ld_nrs_stop(node->nrs);
}

void ld_node_nrs_free(ld_node_t *node) {
  ld_nrs_free(node->nrs);
  node->nrs = NULL;
}

ld_nrs_t *ld_node_nrs(ld_node_t *node) {
  return node->nrs;
}
