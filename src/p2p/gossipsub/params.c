#include <string.h>

#include "base/error.h"
#include "crypto/crypto.h"
#include "p2p/gossipsub/router.h"

static void nwaku_topic_score(ld_gs_topic_score_params_t *t) {
  memset(t, 0, sizeof *t);
  t->topic_weight = 1;
  t->time_in_mesh_weight = 0.01;
  t->time_in_mesh_quantum_ms = 1000;
  t->time_in_mesh_cap = 10;
  t->first_message_deliveries_weight = 1;
  t->first_message_deliveries_decay = 0.5;
  t->first_message_deliveries_cap = 10;
  t->mesh_message_deliveries_weight = 0; /* P3 and P3b disabled in nwaku */
  t->mesh_message_deliveries_decay = 0.5;
  t->mesh_failure_penalty_weight = 0;
  t->mesh_failure_penalty_decay = 0.5;
  t->invalid_message_deliveries_weight = -100;
  t->invalid_message_deliveries_decay = 0.5;
}

static void nwaku_caps(ld_gs_params_t *p) {
  p->max_ihave_len = 5000;
  p->max_ihave_messages = 10;
  p->iwant_followup_ms = 3000;
  p->gossip_retransmission = 3;
  p->idontwant_ttl_heartbeats = 3;
  p->max_subscriptions_per_rpc = LD_GS_MAX_TOPICS_PER_PEER;
  p->max_messages_per_rpc = 2048;
  p->max_ihave_per_rpc = 64;
  p->max_iwant_ids_per_rpc = 5000;
  p->max_graft_per_rpc = 128;
  p->max_prune_per_rpc = 128;
  p->max_idontwant_ids_per_rpc = 2000;
  p->max_iwant_ids_per_heartbeat = 5000;
  p->max_idontwant_ids_per_heartbeat = 2000;
  p->max_graft_prune_per_heartbeat = 256;
  /* A read burst from a fast peer (thousands of small messages handled before the validators
   * run on the next loop turn) must not be dropped; the byte cap bounds the memory instead. */
  p->max_pending_validations = 16384;
  p->max_pending_validation_bytes = 64u << 20;
  p->max_malformed_rpcs = 5;
}

static void nwaku_scoring(ld_gs_params_t *p) {
  nwaku_topic_score(&p->topic_score);
  p->topic_score_cap = 0;
  p->app_specific_weight = 0;
  p->ip_colocation_weight = -50;
  p->ip_colocation_threshold = 5;
  p->behaviour_penalty_weight = -10;
  p->behaviour_penalty_decay = 0.986;
  p->behaviour_penalty_threshold = 0;
  p->decay_interval_ms = 12000;
  p->decay_to_zero = 0.01;
  p->retain_score_ms = 10 * 60 * 1000;
  p->gossip_threshold = -100;
  p->publish_threshold = -1000;
  p->graylist_threshold = -10000;
  p->accept_px_threshold = 0;
  p->opportunistic_graft_threshold = 0;
  p->disconnect_bad_peers = true;
}

void ld_gs_params_nwaku(ld_gs_params_t *p) {
  memset(p, 0, sizeof *p);
  p->d = 6;
  p->d_lo = 4;
  p->d_hi = 8;
  p->d_score = 6;
  p->d_out = 3;
  p->d_lazy = 6;
  p->gossip_factor = 0.25;
  p->heartbeat_ms = 1000;
  p->heartbeat_initial_ms = 100;
  p->mcache_len = 6;
  p->mcache_gossip = 3;
  p->seen_ttl_ms = 120000;
  p->fanout_ttl_ms = 60000;
  p->prune_backoff_ms = 60000;
  p->unsubscribe_backoff_ms = 5000;
  p->backoff_slack_heartbeats = 2;
  p->graft_flood_ms = 10000;
  p->opportunistic_graft_ticks = 60;
  p->opportunistic_graft_peers = 2;
  p->flood_publish = true;
  p->max_rpc_size = LD_GS_MAX_RPC_SIZE;
  p->idontwant_min_size = 513;    /* nim sends IDONTWANT for data larger than 512 bytes */
  p->idontwant_eager_size = 8192; /* 0.65 ms on a 100 Mbit/s link: worth an early write */
  nwaku_caps(p);
  nwaku_scoring(p);
}

static bool degrees_ok(const ld_gs_params_t *p) {
  return p->d >= 1 && p->d_lo <= p->d && p->d <= p->d_hi && p->d_score <= p->d_hi &&
         (p->d_out == 0 || (p->d_out < p->d_lo && p->d_out <= p->d / 2)) && p->gossip_factor >= 0 &&
         p->gossip_factor <= 1;
}

static bool timing_ok(const ld_gs_params_t *p) {
  return p->heartbeat_ms > 0 && p->mcache_len >= 1 && p->mcache_gossip <= p->mcache_len &&
         p->seen_ttl_ms > 0 && p->max_rpc_size >= 1024 && p->max_rpc_size <= (64u << 20);
}

static bool topic_score_ok(const ld_gs_topic_score_params_t *t) {
  return t->topic_weight >= 0 && t->time_in_mesh_weight >= 0 &&
         t->first_message_deliveries_weight >= 0 && t->mesh_message_deliveries_weight <= 0 &&
         t->mesh_failure_penalty_weight <= 0 && t->invalid_message_deliveries_weight <= 0;
}

static bool scoring_ok(const ld_gs_params_t *p) {
  return topic_score_ok(&p->topic_score) && p->ip_colocation_weight <= 0 &&
         p->behaviour_penalty_weight <= 0 && p->decay_to_zero >= 0 && p->decay_to_zero < 1 &&
         p->gossip_threshold <= 0 && p->publish_threshold <= p->gossip_threshold &&
         p->graylist_threshold < p->publish_threshold && p->accept_px_threshold >= 0 &&
         p->opportunistic_graft_threshold >= 0;
}

int ld_gs_params_check(const ld_gs_params_t *p) {
  if (p == NULL || !degrees_ok(p) || !timing_ok(p) || !scoring_ok(p)) {
    return LD_ERR_INVALID_ARG;
  }
  return 0;
}

static const struct {
  const char *id;
  ld_gs_proto_t proto;
} protos[] = {
    {LD_GS_ID_WAKU_RELAY, LD_GS_PROTO_WAKU_RELAY}, {LD_GS_ID_MESHSUB_12, LD_GS_PROTO_MESHSUB_12},
    {LD_GS_ID_MESHSUB_11, LD_GS_PROTO_MESHSUB_11}, {LD_GS_ID_MESHSUB_10, LD_GS_PROTO_MESHSUB_10},
    {LD_GS_ID_FLOODSUB, LD_GS_PROTO_FLOODSUB},
};

int ld_gs_proto_from_id(const char *id, ld_gs_proto_t *out) {
  for (size_t i = 0; id != NULL && i < sizeof protos / sizeof protos[0]; i++) {
    if (strcmp(protos[i].id, id) == 0) {
      *out = protos[i].proto;
      return 0;
    }
  }
  return LD_ERR_UNSUPPORTED;
}

const char *ld_gs_proto_id(ld_gs_proto_t proto) {
  for (size_t i = 0; i < sizeof protos / sizeof protos[0]; i++) {
    if (protos[i].proto == proto) {
      return protos[i].id;
    }
  }
  return "";
}

void ld_gs_msg_id(const uint8_t *data, size_t len, uint8_t id[LD_GS_MSG_ID_LEN]) {
  static const uint8_t empty = 0;
  ld_sha256(data ? data : &empty, len, id);
}
