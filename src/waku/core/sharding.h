/* Autosharding (RELAY-SHARDING, generation 0) and the network presets of logos-delivery.
 *
 * A content topic's shard depends only on its application and version:
 *   h     = SHA-256(application ‖ version)
 *   shard = uint64_be(h[24..31]) mod num_shards
 * i.e. the LAST 8 bytes of the hash, as nwaku, go-waku and js-waku compute it (the specification
 * text says the whole hash; results differ for shard counts that are not powers of two).
 * A content topic with generation > 0 cannot be sharded yet (nwaku's "Generation > 0 are not
 * supported yet").
 *
 * Pure functions and constant tables: no allocation, no global state, any thread. */
#ifndef LD_WAKU_CORE_SHARDING_H
#define LD_WAKU_CORE_SHARDING_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "waku/core/topics.h"

/* Shards per cluster (indices 0..1023, as the ENR sharding fields allow). */
#define LD_WAKU_MAX_SHARDS_PER_CLUSTER 1024
/* Without a preset: cluster 0, autosharding over 1 shard. */
#define LD_WAKU_DEFAULT_CLUSTER_ID 0
#define LD_WAKU_DEFAULT_NUM_SHARDS 1

/* The shard index of application+version among `num_shards` (≥ 1) shards. NULL is allowed for a
 * zero-length part. Returns 0 when num_shards is 0. */
uint32_t ld_autoshard_index(const char *application, size_t application_len, const char *version,
                            size_t version_len, uint32_t num_shards);

/* The shard of a parsed content topic in `cluster_id` with `num_shards` generation-0 shards.
 * Errors: LD_ERR_INVALID_ARG (NULL arguments, num_shards 0 or above
 * LD_WAKU_MAX_SHARDS_PER_CLUSTER), LD_ERR_UNSUPPORTED (generation > 0, *why =
 * LD_TOPIC_ERR_GENERATION_UNSUPPORTED). `why` may be NULL; `out` is written only on success. */
int ld_autoshard_parsed(const ld_content_topic_t *topic, uint32_t num_shards, uint16_t cluster_id,
                        ld_relay_shard_t *out, ld_topic_error_t *why);

/* Parses `content_topic[0..len)` and computes its shard as ld_autoshard_parsed does. Errors also
 * include LD_ERR_BAD_CONTENT_TOPIC with the parse failure in *why. */
int ld_autoshard(const char *content_topic, size_t len, uint32_t num_shards, uint16_t cluster_id,
                 ld_relay_shard_t *out, ld_topic_error_t *why);

/* As ld_autoshard, writing the pubsub topic "/waku/2/rs/<cluster>/<shard>" and a NUL to `out`
 * (room for `cap` chars); returns the text length or an error as ld_autoshard, or LD_ERR_LIMIT. */
int ld_autoshard_pubsub_topic(const char *content_topic, size_t len, uint32_t num_shards,
                              uint16_t cluster_id, char *out, size_t cap, ld_topic_error_t *why);

/* With autosharding every configured shard must be below the cluster's shard count (nwaku's
 * validateShards). Returns 0, LD_ERR_INVALID_ARG (num_shards 0 or above
 * LD_WAKU_MAX_SHARDS_PER_CLUSTER, NULL shards with n > 0) or LD_ERR_OVERFLOW (a shard ≥
 * num_shards; its position is stored in *bad when `bad` is not NULL). */
int ld_waku_validate_shards(uint32_t num_shards, const uint16_t *shards, size_t n, size_t *bad);

/* ---- network presets (--preset=) -------------------------------------------------------- */

/* One network's settings (logos-delivery factory/networks_config.nim). Static data. */
typedef struct ld_waku_network_preset {
  const char *name; /* the --preset value */
  uint16_t cluster_id;
  uint16_t num_shards; /* autosharding shard count in the cluster */
  size_t max_msg_size; /* bytes */
  bool rln_relay;
  bool rln_dynamic;
  uint64_t rln_chain_id;    /* 0 when RLN is off */
  const char *rln_contract; /* "0x…" membership contract; NULL when RLN is off */
  uint32_t rln_epoch_sec;   /* 0 when RLN is off */
  uint32_t rln_user_message_limit;
  bool discv5;
  bool kademlia;
  bool mix;
  bool p2p_reliability;
  const char *dns_discovery_url; /* enrtree:// URL, or NULL */
} ld_waku_network_preset_t;

/* The preset named `name` ("twn", "logos.dev", "logos.test", "status.prod"), or NULL. */
const ld_waku_network_preset_t *ld_waku_network_preset_find(const char *name);

/* All presets; the count is stored in *count. */
const ld_waku_network_preset_t *ld_waku_network_presets(size_t *count);

/* The preset a bare --cluster-id selects implicitly (nwaku's deprecated path: cluster 1 means
 * The Waku Network), or NULL. */
const ld_waku_network_preset_t *ld_waku_network_preset_for_cluster(uint16_t cluster_id);

#endif
