/* The configuration JSON of logosdelivery_create_node (c-api.md §5): the structured, kernel-only
 * and legacy flat shapes, case-insensitive keys matched by field name or CLI name, nwaku's value
 * syntax (the kernel options are those of node/options.h, shared with the node program's flags),
 * the `mode` expansion, presets, and the exact error texts. Pure functions on caller storage;
 * any thread. */
#ifndef LD_LIB_CONFIG_JSON_H
#define LD_LIB_CONFIG_JSON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/log.h"
#include "messaging/messaging.h"
#include "node/config.h"

/* localStoragePath when not given (c-api.md §5.5). */
#define LD_LIB_DEFAULT_STORAGE_PATH "./data"

/* Longest configuration JSON accepted. */
#define LD_LIB_CONFIG_MAX_JSON (1u << 20)

typedef enum ld_lib_entry_layer {
  LD_LIB_LAYER_KERNEL = 0, /* node only */
  LD_LIB_LAYER_MESSAGING,  /* node + messaging client */
  LD_LIB_LAYER_CHANNELS,   /* node + messaging + reliable channels (the default) */
} ld_lib_entry_layer_t;

/* channelsOverrides (§5.6): each value applies when its has_ flag is set. */
typedef struct ld_lib_channels_config {
  bool has_segmentation_rs, segmentation_rs;
  bool has_segment_size, has_ack_timeout, has_max_retransmissions, has_causal_history;
  int64_t segment_size_bytes, ack_timeout_ms, max_retransmissions, causal_history_size;
  bool has_rate_limit, rate_limit;
  bool has_rate_epoch, has_rate_messages;
  int64_t rate_epoch_sec, rate_messages_per_epoch;
  /* our extension: the SDS-R window and the idle sync interval (sdsRepairTMinMs,
   * sdsRepairTMaxMs, sdsSyncIntervalMs) */
  bool has_repair_t_min, has_repair_t_max, has_sync_interval;
  int64_t repair_t_min_ms, repair_t_max_ms, sync_interval_ms;
  /* our extension: content messages carry the bloom filter at most once per this many ms
   * (sdsBloomIntervalMs, 0: on every message as js-waku; LD_CHANNELS_DEFAULT_BLOOM_INTERVAL_MS) */
  bool has_bloom_interval;
  int64_t bloom_interval_ms;
  /* our extension: an acknowledgement sync at once per this many content messages received
   * (sdsAckSyncEvery, 0: only the timer; LD_CHANNELS_DEFAULT_ACK_SYNC_EVERY) */
  bool has_ack_sync_every;
  int64_t ack_sync_every;
} ld_lib_channels_config_t;

typedef struct ld_lib_config {
  ld_node_config_t node; /* finalized (ld_node_config_finalize) */
  ld_log_level_t log_level;
  ld_log_format_t log_format;
  ld_lib_entry_layer_t entry_layer;
  ld_messaging_config_t messaging; /* mode and reliability as configured */
  ld_lib_channels_config_t channels;
  char preset[32]; /* canonical preset name, "" when none */
  /* localStoragePath: the reliable channels' state lives in <path>/channels.sqlite3 */
  char storage_path[LD_NODE_PATH_MAX];
} ld_lib_config_t;

/* Parses `len` bytes of `json` into `out`. Returns 0, or LD_ERR_INVALID_ARG / LD_ERR_NOMEM /
 * LD_ERR_TOO_LARGE with the parser's error text in `err` (the text c-api.md gives, without the
 * "failed parseLogosDeliveryConf " prefix the caller adds), e.g.
 * "Unrecognized configuration option(s) found: k1, k2". */
int ld_lib_config_parse(const char *json, size_t len, ld_lib_config_t *out, char *err,
                        size_t errlen);

/* The reply of logosdelivery_get_available_configs: pretty-printed
 * {"configOptions":[{"<fieldName>":"<type>(<default>)","desc":"<text>"},…]}, one entry per kernel
 * option. Heap string (free()); NULL on allocation failure. */
char *ld_lib_config_available_json(void);

#endif
