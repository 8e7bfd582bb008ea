/* discv5 in the node (peer_manager.h): the UDP socket, the engine serving the node's ENR, the
 * bootstrap records and the Waku search loop feeding the peer manager and the ENR cache. */
#include <stdlib.h>
#include <string.h>

#include "base/clock.h"
#include "base/error.h"
#include "base/log.h"
#include "node/node_internal.h"
#include "node/peer_manager.h"
#include "waku/discovery/discv5_uv.h"

#define TOPIC "discv5"

struct node_discv5 {
  ld_discv5_uv_t *uv; /* NULL while stopped */
  uint16_t port;      /* bound port (kept across stop/start) */
  uint64_t found;     /* records handed to the peer manager */
};

ld_discv5_t *ld_node_discv5(ld_node_t *node) {
  return node->d5 != NULL && node->d5->uv != NULL ? ld_discv5_uv_engine(node->d5->uv) : NULL;
}

uint16_t ld_node_discv5_port(const ld_node_t *node) {
  return node->d5 != NULL ? node->d5->port : 0;
}

static int open_socket(ld_node_t *node, uint16_t port) {
  int rc = ld_discv5_uv_open(node->loop, node->cfg.listen_address, port, &node->d5->uv);
  if (rc != 0) {
    LD_ERROR(TOPIC, "Cannot listen on UDP %s:%u for discv5: %s", node->cfg.listen_address, port,
             ld_strerror(rc));
    char where[LD_NODE_ADDRESS_MAX + 8];
    snprintf(where, sizeof where, "%s:%u", node->cfg.listen_address, port);
    ld_node_note_failure(node, "discv5", rc, where);
    node->d5->uv = NULL;
    return rc;
  }
  node->d5->port = ld_discv5_uv_port(node->d5->uv);
  return 0;
}

int ld_node_discv5_open(ld_node_t *node) {
  if (!node->cfg.discv5.enabled || !node->cfg.listen)
    return 0;
  node->d5 = calloc(1, sizeof *node->d5);
  if (node->d5 == NULL)
    return LD_ERR_NOMEM;
  return open_socket(node, node->cfg.discv5.udp_port);
}

/* ---- events -----------------------------------------------------------------------------------
 */

static void on_event(void *ud, ld_discv5_event_t *ev) {
  ld_node_t *node = ud;
  if (ev->type == LD_DISCV5_EV_ENR_UPDATED && ev->enr != NULL) {
    node->enr = *ev->enr; /* the address peers see (--discv5-enr-auto-update) */
    char text[LD_ENR_TEXT_MAX];
    if (ld_enr_to_text(&node->enr, text, sizeof text) > 0)
      LD_INFO(TOPIC, "ENR updated: %s", text);
  }
}

static void on_peer(void *ud, const ld_enr_t *enr) {
  ld_node_t *node = ud;
  if (node->state != NODE_STARTED)
    return;
  ld_peerid_t id;
  if (ld_enr_peer_id(enr, &id) != 0 || ld_peerid_equal(&id, &node->peer_id))
    return;
  if (node->enr_cache != NULL)
    ld_enr_cache_put(node->enr_cache, enr); /* what peer exchange serves (nwaku) */
  if (ld_node_add_peer_enr(node, enr, LD_PM_ORIGIN_DISCV5) == 0) {
    node->d5->found++;
    ld_node_pm_poke(node);
  }
}

/* ---- start and stop ---------------------------------------------------------------------------
 */

static void engine_config(const ld_node_t *node, ld_discv5_config_t *dc) {
  const ld_node_discv5_config_t *c = &node->cfg.discv5;
  ld_discv5_config_default(dc);
  dc->key = &node->key;
  dc->enr = &node->enr;
  dc->table.bits_per_hop = c->bits_per_hop;
  dc->table.bucket_ip_limit = c->bucket_ip_limit;
  dc->table.table_ip_limit = c->table_ip_limit;
  dc->enr_auto_update = c->enr_auto_update;
  dc->seed = ld_now_ns() ^ (uint64_t)(uintptr_t)node;
}

static int search_config(const ld_node_t *node, ld_waku_discv5_config_t *sc) {
  const ld_node_discv5_config_t *c = &node->cfg.discv5;
  ld_waku_discv5_config_default(sc);
  sc->interval_ms = c->search_interval_ms;
  for (size_t i = 0; i < c->n_bootnodes; i++)
    ld_waku_discv5_config_add_bootnode(sc, &c->bootnodes[i]);
  /* our relay shards (the first LD_WAKU_DISCV5_MAX_SHARDS: a record on any of them matches) */
  size_t n = node->relay != NULL ? node->cfg.n_shards : 0;
  n = n < LD_WAKU_DISCV5_MAX_SHARDS ? n : LD_WAKU_DISCV5_MAX_SHARDS;
  return ld_waku_discv5_config_set_shards(sc, node->cfg.cluster_id, node->cfg.shards, n);
}

static void add_bootnodes(ld_node_t *node) {
  ld_discv5_t *d = ld_discv5_uv_engine(node->d5->uv);
  for (size_t i = 0; i < node->cfg.discv5.n_bootnodes; i++) {
    int rc = ld_discv5_add_enr(d, &node->cfg.discv5.bootnodes[i], true, uv_now(node->loop));
    if (rc < 0)
      LD_WARN(TOPIC, "bootstrap node %zu not added: %s", i, ld_strerror(rc));
  }
  ld_discv5_uv_update(node->d5->uv);
}

int ld_node_discv5_start(ld_node_t *node) {
  if (node->state != NODE_STARTED || !node->has_enr || !node->cfg.listen)
    return LD_ERR_UNSUPPORTED;
  if (node->d5 == NULL && (node->d5 = calloc(1, sizeof *node->d5)) == NULL)
    return LD_ERR_NOMEM;
  if (node->d5->uv != NULL && ld_discv5_uv_engine(node->d5->uv) != NULL)
    return 0;
  int rc = node->d5->uv == NULL ? open_socket(node, node->d5->port) : 0;
  if (rc != 0)
    return rc;
  ld_discv5_config_t dc;
  ld_waku_discv5_config_t sc;
  engine_config(node, &dc);
  rc = search_config(node, &sc);
  ld_discv5_uv_callbacks_t cb = {on_event, on_peer};
  if (rc == 0)
    rc = ld_discv5_uv_start(node->d5->uv, &dc, &sc, &cb, node);
  if (rc != 0) {
    LD_ERROR(TOPIC, "discv5 did not start: %s", ld_strerror(rc));
    ld_discv5_uv_close(node->d5->uv);
    node->d5->uv = NULL;
    return rc;
  }
  add_bootnodes(node);
  LD_INFO(TOPIC, "discv5 started on UDP port %u with %zu bootstrap nodes", node->d5->port,
          node->cfg.discv5.n_bootnodes);
  return 0;
}

void ld_node_discv5_stop(ld_node_t *node) {
  if (node->d5 == NULL || node->d5->uv == NULL)
    return;
  ld_discv5_uv_close(node->d5->uv);
  node->d5->uv = NULL;
}

void ld_node_discv5_free(ld_node_t *node) {
  if (node->d5 != NULL)
    ld_discv5_uv_close(node->d5->uv);
  free(node->d5);
  node->d5 = NULL;
}

int ld_node_discv5_add_bootstrap(ld_node_t *node, const ld_enr_t *enr, bool from_dns) {
  ld_discv5_t *d = ld_node_discv5(node);
  if (d == NULL)
    return LD_ERR_UNSUPPORTED;
  int rc = ld_discv5_add_enr(d, enr, true, uv_now(node->loop));
  if (rc < 0)
    return rc;
  ld_discv5_uv_update(node->d5->uv);
  if (ld_node_add_peer_enr(node, enr, from_dns ? LD_PM_ORIGIN_DNS : LD_PM_ORIGIN_DISCV5) == 0)
    ld_node_pm_poke(node);
  return 0;
}
