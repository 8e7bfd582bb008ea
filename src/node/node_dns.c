/* DNS discovery (EIP-1459) on the node's loop: at start, the tree of --dns-discovery-url is
 * synced through --dns-discovery-name-server (1.1.1.1 and 1.0.0.1 by default, as nwaku), and each
 * record's peer is put in the peer store with the record's addresses and dialed once (origin
 * "dns"), up to --max-connections dials. A failed sync is logged with its named error; the node
 * runs on without those peers. */
#include <stdio.h>
#include <string.h>

#include "base/error.h"
#include "base/log.h"
#include "node/node_internal.h"
#include "waku/discovery/dns_resolver.h"

#define TOPIC "dnsdisc"

static const char *const DEFAULT_NAME_SERVERS[] = {"1.1.1.1", "1.0.0.1"};

static void on_dns_dialed(ld_conn_t *c, int err, void *user_data) {
  (void)c;
  ld_node_t *node = user_data;
  if (node->state == NODE_STOPPING || err == 0)
    return;
  LD_INFO(TOPIC, "dial of a DNS-discovered peer failed: %s", ld_errname(err));
}

/* Adds the record's peer to the peer store and dials its first address. 1 when a dial started. */
static int dial_record(ld_node_t *node, const ld_enr_t *enr) {
  ld_peerid_t id;
  ld_multiaddr_t addrs[8];
  if (ld_enr_peer_id(enr, &id) != 0 || ld_peerid_equal(&id, &node->peer_id))
    return 0;
  size_t n = ld_enr_dial_addrs(enr, addrs, sizeof addrs / sizeof addrs[0]);
  if (n > sizeof addrs / sizeof addrs[0])
    n = sizeof addrs / sizeof addrs[0];
  if (n == 0) {
    LD_INFO(TOPIC, "a DNS-discovered record has no dialable address; skipped");
    return 0;
  }
  ld_peerstore_add_addrs(node->peerstore, &id, addrs, n, uv_now(node->loop));
  if (ld_hashmap_contains(node->peer_conns, id.bytes, id.len))
    return 0; /* connected already */
  ld_multiaddr_t target = addrs[0];
  if (ld_multiaddr_push(&target, LD_MA_P2P, id.bytes, id.len) != 0)
    return 0;
  char text[LD_MULTIADDR_TEXT_MAX];
  ld_multiaddr_to_text(&target, text, sizeof text);
  int rc = ld_switch_dial(node->sw, &target, on_dns_dialed, node);
  if (rc != 0) {
    LD_INFO(TOPIC, "cannot dial DNS-discovered peer %s: %s", text, ld_errname(rc));
    return 0;
  }
  LD_INFO(TOPIC, "dialing DNS-discovered peer %s (origin dns)", text);
  return 1;
}

static void on_discovered(void *arg, int err, const char *reason, const ld_enr_t *enrs, size_t n,
                          const ld_dns_walker_stats_t *stats) {
  ld_node_t *node = arg;
  node->dns = NULL;
  node->dns_status = err;
  if (err != 0) {
    LD_WARN(TOPIC, "DNS discovery of %s failed: %s (%s)", node->cfg.dns_discovery_url,
            ld_errname(err), reason != NULL ? reason : "");
    return;
  }
  size_t dials = 0;
  for (size_t i = 0; i < n && dials < node->cfg.max_connections; i++)
    dials += (size_t)dial_record(node, &enrs[i]);
  node->dns_discovered += n;
  LD_INFO(TOPIC, "DNS discovery of %s: %zu records (tree seq %llu, %zu lookups), %zu dials",
          node->cfg.dns_discovery_url, n, (unsigned long long)stats->seq, stats->queries, dials);
}

int ld_node_dns_start(ld_node_t *node) {
  const ld_node_config_t *cfg = &node->cfg;
  if (cfg->dns_discovery_url[0] == '\0')
    return 0;
  const char *servers[LD_NODE_MAX_DNS_NAME_SERVERS];
  size_t n = cfg->n_dns_name_servers;
  for (size_t i = 0; i < n; i++)
    servers[i] = cfg->dns_name_servers[i];
  if (n == 0) {
    n = sizeof DEFAULT_NAME_SERVERS / sizeof DEFAULT_NAME_SERVERS[0];
    memcpy(servers, DEFAULT_NAME_SERVERS, sizeof DEFAULT_NAME_SERVERS);
  }
  int rc = ld_dns_discovery_start(node->loop, cfg->dns_discovery_url, servers, n, NULL, 0,
                                  on_discovered, node, &node->dns);
  node->dns_status = rc;
  if (rc != 0) {
    /* libcares missing (logged) or a name server c-ares refuses: the node runs without it */
    LD_WARN(TOPIC, "DNS discovery of %s not started: %s", cfg->dns_discovery_url, ld_errname(rc));
    node->dns = NULL;
  } else {
    LD_INFO(TOPIC, "DNS discovery of %s started", cfg->dns_discovery_url);
  }
  return 0;
}

void ld_node_dns_stop(ld_node_t *node) {
  ld_dns_discovery_cancel(node->dns);
  node->dns = NULL;
}

int ld_node_dns_status(const ld_node_t *node, size_t *records) {
  if (records != NULL)
    *records = node->dns_discovered;
  return node->dns != NULL ? LD_ERR_AGAIN : node->dns_status;
}
