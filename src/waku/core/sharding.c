#include "waku/core/sharding.h"

#include <string.h>

#include "base/error.h"
#include "crypto/crypto.h"
#include "waku/core/message.h"

uint32_t ld_autoshard_index(const char *application, size_t application_len, const char *version,
                            size_t version_len, uint32_t num_shards) {
  if (num_shards == 0)
    return 0;
  uint8_t h[LD_SHA256_LEN];
  ld_sha256_2(application != NULL ? application : "", application != NULL ? application_len : 0,
              version != NULL ? version : "", version != NULL ? version_len : 0, h);
  uint64_t value = 0;
  for (size_t i = LD_SHA256_LEN - 8; i < LD_SHA256_LEN; i++)
    value = (value << 8) | h[i];
  return (uint32_t)(value % num_shards);
}

int ld_autoshard_parsed(const ld_content_topic_t *topic, uint32_t num_shards, uint16_t cluster_id,
                        ld_relay_shard_t *out, ld_topic_error_t *why) {
  if (topic == NULL || out == NULL || num_shards == 0 ||
      num_shards > LD_WAKU_MAX_SHARDS_PER_CLUSTER)
    return LD_ERR_INVALID_ARG;
  if (topic->has_generation && topic->generation > 0) {
    if (why != NULL)
      *why = LD_TOPIC_ERR_GENERATION_UNSUPPORTED;
    return LD_ERR_UNSUPPORTED;
  }
  out->cluster_id = cluster_id;
  out->shard_id = (uint16_t)ld_autoshard_index(topic->application.data, topic->application.len,
                                               topic->version.data, topic->version.len, num_shards);
  if (why != NULL)
    *why = LD_TOPIC_OK;
  return 0;
}

int ld_autoshard(const char *content_topic, size_t len, uint32_t num_shards, uint16_t cluster_id,
                 ld_relay_shard_t *out, ld_topic_error_t *why) {
  if (out == NULL)
    return LD_ERR_INVALID_ARG;
  ld_content_topic_t topic;
  int rc = ld_content_topic_parse(content_topic, len, &topic, why);
  if (rc != 0)
    return rc;
  return ld_autoshard_parsed(&topic, num_shards, cluster_id, out, why);
}

int ld_autoshard_pubsub_topic(const char *content_topic, size_t len, uint32_t num_shards,
                              uint16_t cluster_id, char *out, size_t cap, ld_topic_error_t *why) {
  if (out == NULL)
    return LD_ERR_INVALID_ARG;
  ld_relay_shard_t shard;
  int rc = ld_autoshard(content_topic, len, num_shards, cluster_id, &shard, why);
  return rc != 0 ? rc : ld_pubsub_topic_format(shard, out, cap);
}

int ld_waku_validate_shards(uint32_t num_shards, const uint16_t *shards, size_t n, size_t *bad) {
  if (num_shards == 0 || num_shards > LD_WAKU_MAX_SHARDS_PER_CLUSTER || (shards == NULL && n > 0))
    return LD_ERR_INVALID_ARG;
  for (size_t i = 0; i < n; i++) {
    if (shards[i] >= num_shards) {
      if (bad != NULL)
        *bad = i;
      return LD_ERR_OVERFLOW;
    }
  }
  return 0;
}

/* ---- network presets ------------------------------------------------------------------------ */

static const ld_waku_network_preset_t k_presets[] = {
    {
        .name = "twn",
        .cluster_id = 1,
        .num_shards = 8,
        .max_msg_size = LD_WAKU_DEFAULT_MAX_MSG_SIZE,
        .rln_relay = true,
        .rln_dynamic = true,
        .rln_chain_id = 59141, /* Linea Sepolia */
        .rln_contract = "0xB9cd878C90E49F797B4431fBF4fb333108CB90e6",
        .rln_epoch_sec = 600,
        .rln_user_message_limit = 100,
        .discv5 = true,
    },
    {
        .name = "logos.dev",
        .cluster_id = 3,
        .num_shards = 8,
        .max_msg_size = LD_WAKU_DEFAULT_MAX_MSG_SIZE,
        .discv5 = true,
        .kademlia = true,
        .mix = true,
        .p2p_reliability = true,
    },
    {
        .name = "logos.test",
        .cluster_id = 2,
        .num_shards = 8,
        .max_msg_size = LD_WAKU_DEFAULT_MAX_MSG_SIZE,
        .discv5 = true,
        .kademlia = true,
        .mix = true,
        .p2p_reliability = true,
    },
    {
        .name = "status.prod",
        .cluster_id = 16,
        .num_shards = 1,
        .max_msg_size = 1024 * 1024,
        .discv5 = true,
        .dns_discovery_url = "enrtree://AMOJVZX4V6EXP7NTJPMAYJYST2QP6AJXYW76IU6VGJS7UVSNDYZG4"
                             "@boot.prod.status.nodes.status.im",
    },
};

#define N_PRESETS (sizeof k_presets / sizeof k_presets[0])

const ld_waku_network_preset_t *ld_waku_network_preset_find(const char *name) {
  for (size_t i = 0; name != NULL && i < N_PRESETS; i++)
    if (strcmp(k_presets[i].name, name) == 0)
      return &k_presets[i];
  return NULL;
}

const ld_waku_network_preset_t *ld_waku_network_presets(size_t *count) {
  if (count != NULL)
    *count = N_PRESETS;
  return k_presets;
}

const ld_waku_network_preset_t *ld_waku_network_preset_for_cluster(uint16_t cluster_id) {
  return cluster_id == 1 ? &k_presets[0] : NULL;
}
