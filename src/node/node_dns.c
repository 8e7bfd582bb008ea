/* DNS discovery (EIP-1459) on the node's loop: at start, the tree of --dns-discovery-url is
 * synced through --dns-discovery-name-server (1.1.1.1 and 1.0.0.1 by default, as nwaku), and each
 * record goes to discv5 as a bootstrap node (when discv5 runs) and to the peer manager with origin
 * Dns, whose connectivity loop dials them. A failed sync is logged with its named error; the node
 * runs on without those peers. */
#include <stdio.h>
#include <string.h>

#include "base/error.h"
#include "base/log.h"
#include "node/node_internal.h"
#include "node/peer_manager.h"
#include "waku/discovery/dns_resolver.h"

#define TOPIC "dnsdisc"

static const char *const DEFAULT_NAME_SERVERS[] = {"1.1.1.1", "1.0.0.1"};

/* Hands a record to discv5 as a bootstrap node and to the peer manager (origin Dns); a record
 * discv5 cannot use (no udp endpoint, discv5 off) still goes to the peer manager. 1 when the
 * peer manager took it. */
static int feed_record(ld_node_t *node, const ld_enr_t *enr) {
  if (ld_node_discv5(node) != NULL && ld_node_discv5_add_bootstrap(node, enr, true) == 0)
    return 1;
  int rc = ld_node_add_peer_enr(node, enr, LD_PM_ORIGIN_DNS);
  if (rc != 0)
    LD_INFO(TOPIC, "a DNS-discovered record was not taken: %s", ld_errname(rc));
  return rc == 0;
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
  size_t taken = 0;
  for (size_t i = 0; i < n; i++)
    taken += (size_t)feed_record(node, &enrs[i]);
  node->dns_discovered += n;
  if (taken > 0)
    ld_node_pm_poke(node);
  LD_INFO(TOPIC, "DNS discovery of %s: %zu records (tree seq %llu, %zu lookups), %zu peers",
          node->cfg.dns_discovery_url, n, (unsigned long long)stats->seq, stats->queries, taken);
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
