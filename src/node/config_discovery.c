/* The discovery and peer-management part of the node configuration (config.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "node/config.h"
#include "waku/discovery/discv5_table.h"

void ld_node_config_discovery_default(ld_node_config_t *cfg) {
  ld_node_discv5_config_t *d = &cfg->discv5;
  memset(d, 0, sizeof *d);
  d->udp_port = LD_NODE_DEFAULT_DISCV5_UDP_PORT;
  d->table_ip_limit = 10;
  d->bucket_ip_limit = 2;
  d->bits_per_hop = 1;
  d->search_interval_ms = 5000;
  ld_node_pm_config_t *pm = &cfg->pm;
  memset(pm, 0, sizeof *pm);
  pm->relay_ratio = LD_NODE_DEFAULT_RELAY_RATIO;
  snprintf(pm->db_path, sizeof pm->db_path, "%s", LD_NODE_DEFAULT_PEER_DB);
  pm->connectivity_interval_ms = 30000;
  pm->prune_interval_ms = 600000;
  pm->keepalive_interval_ms = 120000;
  pm->initial_backoff_ms = 120000;
}

int ld_node_config_add_discv5_bootnode(ld_node_config_t *cfg, const char *text, char *err,
                                       size_t errlen) {
  ld_enr_t enr;
  int rc = ld_enr_parse_text(&enr, text);
  if (rc != 0)
    return ld_error_fmt(err, errlen, LD_ERR_INVALID_ARG, "'%.64s…' is not a valid ENR: %s", text,
                        ld_strerror(rc));
  ld_node_discv5_config_t *d = &cfg->discv5;
  for (size_t i = 0; i < d->n_bootnodes; i++)
    if (d->bootnodes[i].len == enr.len && memcmp(d->bootnodes[i].raw, enr.raw, enr.len) == 0)
      return 0;
  if (d->n_bootnodes == LD_NODE_MAX_DISCV5_BOOTNODES)
    return ld_error_fmt(err, errlen, LD_ERR_LIMIT, "more than %d discv5 bootstrap nodes",
                        LD_NODE_MAX_DISCV5_BOOTNODES);
  d->bootnodes[d->n_bootnodes++] = enr;
  return 0;
}

static bool parse_part(const char *s, size_t len, uint32_t *out) {
  if (len == 0 || len > 3)
    return false;
  uint32_t v = 0;
  for (size_t i = 0; i < len; i++) {
    if (s[i] < '0' || s[i] > '9')
      return false;
    v = v * 10 + (uint32_t)(s[i] - '0');
  }
  *out = v;
  return true;
}

int ld_node_config_set_relay_ratio(ld_node_config_t *cfg, const char *text, char *err,
                                   size_t errlen) {
  const char *colon = strchr(text, ':');
  uint32_t relay = 0, service = 0;
  if (colon == NULL || !parse_part(text, (size_t)(colon - text), &relay) ||
      !parse_part(colon + 1, strlen(colon + 1), &service) || relay + service != 100)
    return ld_error_fmt(err, errlen, LD_ERR_INVALID_ARG,
                        "relay-service-ratio '%s' must be <relay>:<service> adding up to 100",
                        text);
  cfg->pm.relay_ratio = relay;
  return 0;
}

int ld_node_config_set_peer_store_capacity(ld_node_config_t *cfg, int64_t n, char *err,
                                           size_t errlen) {
  if (n < 1 || n > (int64_t)LD_NODE_MAX_CONNECTIONS_LIMIT * 10)
    return ld_error_fmt(err, errlen, LD_ERR_INVALID_ARG,
                        "peer-store-capacity %lld out of range (1..%lld)", (long long)n,
                        (long long)LD_NODE_MAX_CONNECTIONS_LIMIT * 10);
  cfg->pm.peer_store_capacity = (size_t)n;
  return 0;
}

int ld_node_config_set_discv5_bits_per_hop(ld_node_config_t *cfg, int64_t n, char *err,
                                           size_t errlen) {
  if (n < 1 || n > LD_DISCV5_BITS_PER_HOP_MAX)
    return ld_error_fmt(err, errlen, LD_ERR_INVALID_ARG,
                        "discv5-bits-per-hop %lld out of range (1..%d)", (long long)n,
                        LD_DISCV5_BITS_PER_HOP_MAX);
  cfg->discv5.bits_per_hop = (int)n;
  return 0;
}
