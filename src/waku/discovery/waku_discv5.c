#include "waku/discovery/waku_discv5.h"

#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "base/hashmap.h"

/* ---- the predicate -------------------------------------------------------------------------- */

void ld_waku_discv5_config_default(ld_waku_discv5_config_t *cfg) {
  memset(cfg, 0, sizeof *cfg);
  cfg->interval_ms = LD_WAKU_DISCV5_DEFAULT_INTERVAL_MS;
  cfg->repeat_ms = LD_WAKU_DISCV5_DEFAULT_REPEAT_MS;
}

int ld_waku_discv5_config_add_bootnode(ld_waku_discv5_config_t *cfg, const ld_enr_t *enr) {
  if (cfg->n_bootnodes >= LD_WAKU_DISCV5_MAX_BOOTNODES)
    return LD_ERR_LIMIT;
  int rc = ld_enr_node_id(enr, cfg->bootnode_ids[cfg->n_bootnodes]);
  if (rc == 0)
    cfg->n_bootnodes++;
  return rc;
}

int ld_waku_discv5_config_set_shards(ld_waku_discv5_config_t *cfg, uint16_t cluster_id,
                                     const uint16_t *shards, size_t n) {
  if (n > LD_WAKU_DISCV5_MAX_SHARDS)
    return LD_ERR_LIMIT;
  for (size_t i = 0; i < n; i++)
    if (shards[i] > LD_ENR_MAX_SHARD)
      return LD_ERR_INVALID_ARG;
  cfg->has_cluster = true;
  cfg->cluster_id = cluster_id;
  cfg->n_shards = n;
  if (n > 0)
    memcpy(cfg->shards, shards, n * sizeof *shards);
  return 0;
}

static bool is_bootnode(const ld_waku_discv5_config_t *cfg, const ld_enr_t *enr) {
  uint8_t id[LD_DISCV5_NODE_ID_LEN];
  if (cfg->n_bootnodes == 0 || ld_enr_node_id(enr, id) != 0)
    return false;
  for (size_t i = 0; i < cfg->n_bootnodes; i++)
    if (memcmp(cfg->bootnode_ids[i], id, LD_DISCV5_NODE_ID_LEN) == 0)
      return true;
  return false;
}

static ld_waku_discv5_verdict_t match_shards(const ld_waku_discv5_config_t *cfg,
                                             const ld_enr_t *enr) {
  ld_enr_shards_t shards;
  if (ld_enr_shards(enr, &shards) != 0)
    return LD_WAKU_DISCV5_NO_SHARDS;
  if (shards.cluster_id != cfg->cluster_id)
    return LD_WAKU_DISCV5_OTHER_CLUSTER;
  if (cfg->n_shards == 0)
    return shards.n_shards > 0 ? LD_WAKU_DISCV5_MATCH : LD_WAKU_DISCV5_OTHER_SHARDS;
  for (size_t i = 0; i < cfg->n_shards; i++)
    if (ld_enr_shards_has(&shards, cfg->shards[i]))
      return LD_WAKU_DISCV5_MATCH;
  return LD_WAKU_DISCV5_OTHER_SHARDS;
}

ld_waku_discv5_verdict_t ld_waku_discv5_match(const ld_waku_discv5_config_t *cfg,
                                              const ld_enr_t *enr) {
  if (is_bootnode(cfg, enr))
    return LD_WAKU_DISCV5_MATCH;
  uint8_t caps;
  if (ld_enr_waku2(enr, &caps) != 0 || caps == 0 ||
      (caps & cfg->required_caps) != cfg->required_caps)
    return LD_WAKU_DISCV5_NO_WAKU2;
  ld_multiaddr_t addr;
  if (ld_enr_dial_addrs(enr, &addr, 1) == 0)
    return LD_WAKU_DISCV5_NOT_DIALABLE;
  return cfg->has_cluster ? match_shards(cfg, enr) : LD_WAKU_DISCV5_MATCH;
}

/* ---- the loop ------------------------------------------------------------------------------- */

typedef struct reported {
  uint64_t seq;
  uint64_t at;
} reported_t;

struct ld_waku_discv5 {
  ld_discv5_t *engine;
  ld_waku_discv5_config_t cfg;
  ld_waku_discv5_peer_fn on_peer;
  void *ud;
  bool running, starting;
  uint64_t lookup;
  uint64_t next_at;
  /* records reported: node ID → reported_t, oldest first in ring[] */
  ld_hashmap_t *reported;
  uint8_t (*ring)[LD_DISCV5_NODE_ID_LEN];
  size_t ring_head, ring_len;
  ld_waku_discv5_stats_t stats;
};

ld_waku_discv5_t *ld_waku_discv5_new(ld_discv5_t *engine, const ld_waku_discv5_config_t *cfg,
                                     ld_waku_discv5_peer_fn on_peer, void *ud, uint64_t now_ms) {
  if (on_peer == NULL)
    return NULL;
  ld_waku_discv5_t *s = calloc(1, sizeof *s);
  if (s == NULL)
    return NULL;
  s->engine = engine;
  s->cfg = *cfg;
  s->on_peer = on_peer;
  s->ud = ud;
  s->next_at = now_ms;
  s->reported = ld_hashmap_new(256);
  s->ring = malloc(LD_WAKU_DISCV5_REMEMBER * sizeof *s->ring);
  if (s->reported == NULL || s->ring == NULL) {
    ld_waku_discv5_free(s);
    return NULL;
  }
  return s;
}

void ld_waku_discv5_free(ld_waku_discv5_t *s) {
  if (s == NULL)
    return;
  ld_hashmap_free(s->reported, free);
  free(s->ring);
  free(s);
}

int ld_waku_discv5_set_shards(ld_waku_discv5_t *s, uint16_t cluster_id, const uint16_t *shards,
                              size_t n) {
  return ld_waku_discv5_config_set_shards(&s->cfg, cluster_id, shards, n);
}

/* Whether `id` at `seq` is due for a report; records it as reported when so. */
static bool due(ld_waku_discv5_t *s, const uint8_t *id, uint64_t seq, uint64_t now) {
  reported_t *r = ld_hashmap_get(s->reported, id, LD_DISCV5_NODE_ID_LEN);
  if (r != NULL) {
    if (seq <= r->seq && now < r->at + s->cfg.repeat_ms)
      return false;
    r->seq = seq;
    r->at = now;
    return true;
  }
  if (s->ring_len == LD_WAKU_DISCV5_REMEMBER) {
    free(ld_hashmap_remove(s->reported, s->ring[s->ring_head], LD_DISCV5_NODE_ID_LEN));
    s->ring_head = (s->ring_head + 1) % LD_WAKU_DISCV5_REMEMBER;
    s->ring_len--;
  }
  if ((r = malloc(sizeof *r)) == NULL)
    return true;
  r->seq = seq;
  r->at = now;
  if (ld_hashmap_put(s->reported, id, LD_DISCV5_NODE_ID_LEN, r, NULL) != 0) {
    free(r);
    return true;
  }
  memcpy(s->ring[(s->ring_head + s->ring_len++) % LD_WAKU_DISCV5_REMEMBER], id,
         LD_DISCV5_NODE_ID_LEN);
  return true;
}

static void consider(ld_waku_discv5_t *s, const ld_enr_t *enr, const uint8_t *id, uint64_t now) {
  s->stats.seen++;
  ld_waku_discv5_verdict_t v = ld_waku_discv5_match(&s->cfg, enr);
  if (v != LD_WAKU_DISCV5_MATCH) {
    s->stats.rejected[v]++;
    return;
  }
  s->stats.matched++;
  if (!due(s, id, enr->seq, now))
    return;
  s->stats.reported++;
  s->on_peer(s->ud, enr);
}

void ld_waku_discv5_on_event(ld_waku_discv5_t *s, const ld_discv5_event_t *ev, uint64_t now_ms) {
  if ((ev->type == LD_DISCV5_EV_DISCOVERED || ev->type == LD_DISCV5_EV_NODE_ADDED) &&
      ev->enr != NULL) {
    consider(s, ev->enr, ev->node_id, now_ms);
  } else if (ev->type == LD_DISCV5_EV_LOOKUP_DONE &&
             (s->starting || (s->running && ev->request == s->lookup))) {
    s->running = false;
    s->starting = false;
    s->next_at = now_ms + s->cfg.interval_ms;
  }
}

uint64_t ld_waku_discv5_next_deadline(const ld_waku_discv5_t *s) {
  return s->running ? UINT64_MAX : s->next_at;
}

void ld_waku_discv5_handle_timeout(ld_waku_discv5_t *s, uint64_t now_ms) {
  if (s->running || now_ms < s->next_at)
    return;
  uint64_t handle;
  s->starting = true;
  s->running = true;
  s->stats.lookups++;
  int rc = ld_discv5_lookup(s->engine, NULL, now_ms, &handle);
  if (rc != 0) {
    s->running = false;
    s->next_at = now_ms + s->cfg.interval_ms;
  } else if (s->running) {
    s->lookup = handle; /* still running: it did not end inside the call */
  }
  s->starting = false;
}

void ld_waku_discv5_get_stats(const ld_waku_discv5_t *s, ld_waku_discv5_stats_t *out) {
  *out = s->stats;
}
