#include "node/peer_manager_core.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "base/hashmap.h"

#define DEFAULT_CAPACITY 1000

struct ld_pm {
  ld_pm_config_t cfg;
  ld_pm_targets_t targets;
  uint16_t shards[LD_PM_MAX_SHARDS];
  size_t n_shards;
  ld_pm_peer_t **peers; /* the store, unordered */
  size_t n, cap;
  ld_hashmap_t *index; /* peer ID bytes → ld_pm_peer_t * */
  bool has_slot[LD_PM_SLOTS];
  ld_peerid_t slot[LD_PM_SLOTS];
  uint64_t rng;
  uint64_t connect_seq;
};

const char *ld_pm_origin_name(ld_pm_origin_t origin) {
  switch (origin) {
  case LD_PM_ORIGIN_DISCV5:
    return "Discv5";
  case LD_PM_ORIGIN_STATIC:
    return "Static";
  case LD_PM_ORIGIN_PX:
    return "PeerExchange";
  case LD_PM_ORIGIN_DNS:
    return "Dns";
  default:
    return "UnknownOrigin";
  }
}

void ld_pm_config_default(ld_pm_config_t *cfg) {
  memset(cfg, 0, sizeof *cfg);
  cfg->max_connections = 50;
  cfg->relay_ratio = 50;
  cfg->capacity = DEFAULT_CAPACITY;
  cfg->colocation_limit = 5;
  cfg->initial_backoff_ms = 120000;
  cfg->backoff_factor = 4;
  cfg->max_failed_attempts = 5;
  cfg->max_parallel_dials = 10;
}

void ld_pm_compute_targets(size_t max_connections, uint32_t relay_ratio, ld_pm_targets_t *out) {
  size_t relay = (max_connections * relay_ratio + 99) / 100; /* ceil */
  out->max_relay = relay;
  out->max_service = max_connections * (100 - relay_ratio) / 100; /* floor */
  out->out_relay = relay / 3;
  out->in_relay = relay - out->out_relay;
}

static uint64_t next_rand(ld_pm_t *pm) {
  uint64_t x = pm->rng;
  x ^= x << 13;
  x ^= x >> 7;
  x ^= x << 17;
  pm->rng = x;
  return x;
}

ld_pm_t *ld_pm_new(const ld_pm_config_t *cfg) {
  if (cfg->n_shards > LD_PM_MAX_SHARDS)
    return NULL;
  ld_pm_t *pm = calloc(1, sizeof *pm);
  if (pm == NULL)
    return NULL;
  pm->cfg = *cfg;
  if (pm->cfg.capacity == 0)
    pm->cfg.capacity = DEFAULT_CAPACITY;
  if (pm->cfg.max_parallel_dials == 0)
    pm->cfg.max_parallel_dials = 10;
  if (pm->cfg.backoff_factor == 0)
    pm->cfg.backoff_factor = 1;
  pm->cfg.shards = NULL;
  memcpy(pm->shards, cfg->shards, cfg->n_shards * sizeof *pm->shards);
  pm->n_shards = cfg->n_shards;
  ld_pm_compute_targets(cfg->max_connections, cfg->relay_ratio, &pm->targets);
  pm->rng = cfg->seed != 0 ? cfg->seed : 0x9e3779b97f4a7c15ull;
  pm->index = ld_hashmap_new(64);
  if (pm->index == NULL) {
    free(pm);
    return NULL;
  }
  return pm;
}

void ld_pm_free(ld_pm_t *pm) {
  if (pm == NULL)
    return;
  for (size_t i = 0; i < pm->n; i++)
    free(pm->peers[i]);
  free(pm->peers);
  ld_hashmap_free(pm->index, NULL);
  free(pm);
}

const ld_pm_targets_t *ld_pm_targets(const ld_pm_t *pm) {
  return &pm->targets;
}

int ld_pm_set_shards(ld_pm_t *pm, const uint16_t *shards, size_t n) {
  if (n > LD_PM_MAX_SHARDS)
    return LD_ERR_LIMIT;
  memcpy(pm->shards, shards, n * sizeof *shards);
  pm->n_shards = n;
  return 0;
}

/* ---- the store --------------------------------------------------------------------------------
 */

static ld_pm_peer_t *find(const ld_pm_t *pm, const ld_peerid_t *id) {
  return ld_hashmap_get(pm->index, id->bytes, id->len);
}

const ld_pm_peer_t *ld_pm_get(const ld_pm_t *pm, const ld_peerid_t *id) {
  return find(pm, id);
}

size_t ld_pm_count(const ld_pm_t *pm) {
  return pm->n;
}

const ld_pm_peer_t *ld_pm_at(const ld_pm_t *pm, size_t i) {
  return i < pm->n ? pm->peers[i] : NULL;
}

static ld_pm_peer_t *insert(ld_pm_t *pm, const ld_peerid_t *id, uint64_t now_ms) {
  if (pm->n == pm->cap) {
    size_t cap = pm->cap == 0 ? 64 : pm->cap * 2;
    ld_pm_peer_t **grown = realloc(pm->peers, cap * sizeof *grown);
    if (grown == NULL)
      return NULL;
    pm->peers = grown;
    pm->cap = cap;
  }
  ld_pm_peer_t *p = calloc(1, sizeof *p);
  if (p == NULL)
    return NULL;
  p->id = *id;
  p->last_seen_ms = now_ms;
  if (ld_hashmap_put(pm->index, p->id.bytes, p->id.len, p, NULL) != 0) {
    free(p);
    return NULL;
  }
  pm->peers[pm->n++] = p;
  return p;
}

int ld_pm_remove(ld_pm_t *pm, const ld_peerid_t *id) {
  ld_pm_peer_t *p = ld_hashmap_remove(pm->index, id->bytes, id->len);
  if (p == NULL)
    return LD_ERR_NOT_FOUND;
  for (size_t i = 0; i < pm->n; i++)
    if (pm->peers[i] == p) {
      pm->peers[i] = pm->peers[--pm->n];
      break;
    }
  for (int s = 0; s < LD_PM_SLOTS; s++)
    if (pm->has_slot[s] && ld_peerid_equal(&pm->slot[s], id))
      pm->has_slot[s] = false;
  free(p);
  return 0;
}

static void add_addr(ld_pm_peer_t *p, const ld_multiaddr_t *addr) {
  ld_multiaddr_t a = *addr;
  ld_peerid_t named;
  if (ld_multiaddr_peerid(&a, &named, true) && !ld_peerid_equal(&named, &p->id))
    return;
  for (size_t i = 0; i < p->n_addrs; i++)
    if (ld_multiaddr_equal(&p->addrs[i], &a))
      return;
  if (p->n_addrs == LD_PM_MAX_ADDRS) /* the newest address replaces the oldest */
    memmove(&p->addrs[0], &p->addrs[1], (LD_PM_MAX_ADDRS - 1) * sizeof a);
  else
    p->n_addrs++;
  p->addrs[p->n_addrs - 1] = a;
}

static void set_shards(ld_pm_peer_t *p, uint16_t cluster, const uint16_t *shards, size_t n) {
  p->has_shards = true;
  p->cluster_id = cluster;
  p->n_shards = n < LD_PM_MAX_PEER_SHARDS ? n : LD_PM_MAX_PEER_SHARDS;
  memcpy(p->shards, shards, p->n_shards * sizeof *shards);
}

int ld_pm_add(ld_pm_t *pm, const ld_peerid_t *id, const ld_pm_peer_info_t *info, uint64_t now_ms,
              ld_pm_action_t *out, size_t max) {
  ld_pm_peer_t *p = find(pm, id);
  if (p == NULL && (p = insert(pm, id, now_ms)) == NULL)
    return LD_ERR_NOMEM;
  for (size_t i = 0; i < info->n_addrs; i++)
    add_addr(p, &info->addrs[i]);
  if (p->origin != LD_PM_ORIGIN_STATIC && info->origin != LD_PM_ORIGIN_UNKNOWN)
    p->origin = info->origin;
  if (info->has_shards)
    set_shards(p, info->cluster_id, info->shards, info->n_shards);
  if (info->services != 0)
    p->services = info->services;
  p->last_seen_ms = now_ms;
  return pm->n > 2 * pm->cfg.capacity ? (int)ld_pm_prune(pm, out, max) : 0;
}

void ld_pm_set_services(ld_pm_t *pm, const ld_peerid_t *id, unsigned services) {
  ld_pm_peer_t *p = find(pm, id);
  if (p != NULL)
    p->services = services;
}

/* ---- dials and connections ---------------------------------------------------------------------
 */

static uint64_t backoff_ms(const ld_pm_t *pm, uint32_t failed) {
  uint64_t b = pm->cfg.initial_backoff_ms;
  for (uint32_t i = 1; i < failed && b < UINT64_MAX / 8; i++)
    b *= pm->cfg.backoff_factor;
  return b;
}

static bool can_dial(const ld_pm_t *pm, const ld_pm_peer_t *p, uint64_t now_ms) {
  if (now_ms < p->hold_until_ms)
    return false;
  if (p->failed_attempts == 0)
    return true;
  if (p->failed_attempts >= pm->cfg.max_failed_attempts)
    return false;
  return now_ms >= p->last_failed_ms + backoff_ms(pm, p->failed_attempts);
}

void ld_pm_hold_off(ld_pm_t *pm, const ld_peerid_t *id, uint64_t until_ms) {
  ld_pm_peer_t *p = find(pm, id);
  if (p != NULL)
    p->hold_until_ms = until_ms;
}

bool ld_pm_can_dial(const ld_pm_t *pm, const ld_peerid_t *id, uint64_t now_ms) {
  const ld_pm_peer_t *p = find(pm, id);
  return p == NULL || can_dial(pm, p, now_ms);
}

void ld_pm_on_dialing(ld_pm_t *pm, const ld_peerid_t *id) {
  ld_pm_peer_t *p = find(pm, id);
  if (p != NULL)
    p->dialing = true;
}

void ld_pm_on_dial_result(ld_pm_t *pm, const ld_peerid_t *id, bool ok, uint64_t now_ms) {
  ld_pm_peer_t *p = find(pm, id);
  if (p == NULL)
    return;
  p->dialing = false;
  if (ok) {
    p->failed_attempts = 0;
  } else {
    p->failed_attempts++;
    p->last_failed_ms = now_ms;
  }
}

static size_t push(ld_pm_action_t *out, size_t max, size_t n, ld_pm_action_type_t type,
                   const ld_peerid_t *id) {
  if (n < max)
    out[n] = (ld_pm_action_t){type, *id};
  return n + 1;
}

static bool is_relay_conn(const ld_pm_peer_t *p) {
  return p->conns > 0 && (p->services & LD_PM_RELAY) != 0;
}

void ld_pm_relay_counts(const ld_pm_t *pm, size_t *in, size_t *out) {
  *in = *out = 0;
  for (size_t i = 0; i < pm->n; i++)
    if (is_relay_conn(pm->peers[i]))
      (*(pm->peers[i]->outbound ? out : in))++;
}

static int by_connect_order(const void *a, const void *b) {
  const ld_pm_peer_t *x = *(ld_pm_peer_t *const *)a, *y = *(ld_pm_peer_t *const *)b;
  return x->connect_seq < y->connect_seq ? -1 : x->connect_seq > y->connect_seq;
}

static size_t apply_colocation(ld_pm_t *pm, const char *ip, ld_pm_action_t *out, size_t max,
                               size_t n) {
  size_t limit = pm->cfg.colocation_limit;
  if (limit == 0 || ip == NULL || ip[0] == '\0')
    return n;
  size_t behind = 0;
  for (size_t i = 0; i < pm->n; i++)
    behind += pm->peers[i]->conns > 0 && strcmp(pm->peers[i]->ip, ip) == 0;
  if (behind <= limit)
    return n;
  size_t excess = behind - limit;
  ld_pm_peer_t **victims = malloc(behind * sizeof *victims);
  if (victims == NULL)
    return n;
  size_t k = 0;
  for (size_t i = 0; i < pm->n; i++)
    if (pm->peers[i]->conns > 0 && strcmp(pm->peers[i]->ip, ip) == 0)
      victims[k++] = pm->peers[i];
  qsort(victims, k, sizeof *victims, by_connect_order); /* the earliest connected go */
  for (size_t i = 0; i < excess && i < k; i++) {
    ld_peerid_t id = victims[i]->id;
    n = push(out, max, n, LD_PM_DISCONNECT, &id);
    n = push(out, max, n, LD_PM_FORGET, &id);
    ld_pm_remove(pm, &id);
  }
  free(victims);
  return n;
}

size_t ld_pm_on_connected(ld_pm_t *pm, const ld_peerid_t *id, bool outbound, const char *ip,
                          uint64_t now_ms, ld_pm_action_t *out, size_t max) {
  ld_pm_peer_t *p = find(pm, id);
  if (p == NULL && (p = insert(pm, id, now_ms)) == NULL)
    return 0;
  p->last_seen_ms = now_ms;
  if (p->conns++ > 0)
    return 0;
  p->outbound = outbound;
  p->connected_ms = now_ms;
  p->connect_seq = ++pm->connect_seq;
  p->hold_until_ms = 0;
  p->dialing = false;
  p->failed_attempts = outbound ? 0 : p->failed_attempts;
  snprintf(p->ip, sizeof p->ip, "%s", ip != NULL ? ip : "");
  size_t n = 0;
  size_t in_relay, out_relay;
  ld_pm_relay_counts(pm, &in_relay, &out_relay);
  if (!outbound && (p->services & LD_PM_RELAY) && in_relay > pm->targets.in_relay)
    return push(out, max, n, LD_PM_DISCONNECT, id);
  return apply_colocation(pm, p->ip, out, max, n);
}

void ld_pm_on_disconnected(ld_pm_t *pm, const ld_peerid_t *id, uint64_t now_ms) {
  ld_pm_peer_t *p = find(pm, id);
  if (p == NULL || p->conns == 0)
    return;
  if (--p->conns == 0) {
    p->ip[0] = '\0';
    p->last_seen_ms = now_ms;
  }
}

size_t ld_pm_on_metadata(ld_pm_t *pm, const ld_peerid_t *id, uint32_t cluster_id,
                         const uint16_t *shards, size_t n_shards, ld_pm_action_t *out, size_t max) {
  ld_pm_peer_t *p = find(pm, id);
  if (cluster_id != pm->cfg.cluster_id) {
    size_t n = push(out, max, 0, LD_PM_DISCONNECT, id);
    n = push(out, max, n, LD_PM_FORGET, id);
    ld_pm_remove(pm, id);
    return n;
  }
  if (p != NULL)
    set_shards(p, (uint16_t)cluster_id, shards, n_shards);
  return 0;
}

/* ---- connectivity ------------------------------------------------------------------------------
 */

static bool on_shard(const ld_pm_peer_t *p, uint16_t cluster, uint16_t shard) {
  if (!p->has_shards || p->cluster_id != cluster)
    return false;
  for (size_t i = 0; i < p->n_shards; i++)
    if (p->shards[i] == shard)
      return true;
  return false;
}

static bool dialable(const ld_pm_t *pm, const ld_pm_peer_t *p, uint64_t now_ms) {
  return p->conns == 0 && !p->dialing && p->n_addrs > 0 && can_dial(pm, p, now_ms);
}

static void shuffle(ld_pm_t *pm, ld_pm_peer_t **a, size_t n) {
  for (size_t i = n; i > 1; i--) {
    size_t j = (size_t)(next_rand(pm) % i);
    ld_pm_peer_t *t = a[i - 1];
    a[i - 1] = a[j];
    a[j] = t;
  }
}

/* Marks and reports a dial of `p`. */
static size_t dial(ld_pm_peer_t *p, ld_pm_action_t *out, size_t max, size_t n) {
  p->dialing = true;
  return push(out, max, n, LD_PM_DIAL, &p->id);
}

/* Inbound relay peers above the in target, the most recently connected kept. */
static size_t prune_in_relay(ld_pm_t *pm, size_t in_relay, ld_pm_action_t *out, size_t max,
                             size_t n) {
  size_t excess = in_relay > pm->targets.in_relay ? in_relay - pm->targets.in_relay : 0;
  for (size_t i = 0; i < pm->n && excess > 0; i++) {
    ld_pm_peer_t *p = pm->peers[i];
    if (is_relay_conn(p) && !p->outbound && p->origin != LD_PM_ORIGIN_STATIC) {
      n = push(out, max, n, LD_PM_DISCONNECT, &p->id);
      excess--;
    }
  }
  return n;
}

size_t ld_pm_connectivity(ld_pm_t *pm, uint64_t now_ms, ld_pm_action_t *out, size_t max) {
  size_t in_relay, out_relay, dialing = 0, n = 0;
  ld_pm_relay_counts(pm, &in_relay, &out_relay);
  n = prune_in_relay(pm, in_relay, out, max, n);
  for (size_t i = 0; i < pm->n; i++)
    dialing += pm->peers[i]->dialing;
  if (out_relay + dialing >= pm->targets.out_relay || dialing >= pm->cfg.max_parallel_dials)
    return n;
  size_t want = pm->targets.out_relay - out_relay - dialing;
  size_t budget = pm->cfg.max_parallel_dials - dialing;
  want = want < budget ? want : budget;
  ld_pm_peer_t **cands = malloc((pm->n + 1) * sizeof *cands);
  if (cands == NULL)
    return n;
  size_t nc = 0;
  for (size_t i = 0; i < pm->n; i++)
    if (dialable(pm, pm->peers[i], now_ms))
      cands[nc++] = pm->peers[i];
  shuffle(pm, cands, nc);
  /* first the shards short of outbound peers */
  size_t per_shard = pm->n_shards > 0 ? pm->targets.out_relay / pm->n_shards : 0;
  per_shard = per_shard > 0 ? per_shard : 1;
  for (size_t s = 0; s < pm->n_shards && want > 0; s++) {
    uint16_t shard = pm->shards[s];
    size_t have = 0;
    for (size_t i = 0; i < pm->n; i++) {
      const ld_pm_peer_t *p = pm->peers[i];
      have += (is_relay_conn(p) && p->outbound) || p->dialing
                  ? on_shard(p, pm->cfg.cluster_id, shard)
                  : 0;
    }
    for (size_t i = 0; i < nc && have < per_shard && want > 0; i++)
      if (!cands[i]->dialing && on_shard(cands[i], pm->cfg.cluster_id, shard)) {
        n = dial(cands[i], out, max, n);
        have++;
        want--;
      }
  }
  for (size_t i = 0; i < nc && want > 0; i++)
    if (!cands[i]->dialing) {
      n = dial(cands[i], out, max, n);
      want--;
    }
  free(cands);
  return n;
}

uint32_t ld_pm_next_interval(const ld_pm_t *pm, uint32_t base_ms) {
  size_t in_relay, out_relay;
  ld_pm_relay_counts(pm, &in_relay, &out_relay);
  double in_target = pm->targets.in_relay > 0 ? (double)pm->targets.in_relay : 1.0;
  double out_target = pm->targets.out_relay > 0 ? (double)pm->targets.out_relay : 1.0;
  double excess = in_relay > pm->targets.in_relay ? (double)(in_relay - pm->targets.in_relay) : 0;
  double in_factor = 1.0 - (excess / in_target < 1.0 ? excess / in_target : 1.0);
  double out_factor = (double)out_relay / out_target < 1.0 ? (double)out_relay / out_target : 1.0;
  double factor = in_factor < out_factor ? in_factor : out_factor;
  uint32_t ms = (uint32_t)((double)base_ms * factor);
  return ms < 1000 ? 1000 : ms;
}

/* ---- pruning -----------------------------------------------------------------------------------
 */

static bool prunable(const ld_pm_peer_t *p) {
  return p->conns == 0 && !p->dialing && p->origin != LD_PM_ORIGIN_STATIC;
}

static size_t forget(ld_pm_t *pm, ld_pm_peer_t *p, ld_pm_action_t *out, size_t max, size_t n) {
  ld_peerid_t id = p->id;
  ld_pm_remove(pm, &id);
  return push(out, max, n, LD_PM_FORGET, &id);
}

/* Most crowded shard among the prunable peers' first shards, or -1. */
static int crowded_shard(const ld_pm_t *pm) {
  ld_hashmap_t *counts = ld_hashmap_new(32);
  int best = -1;
  uintptr_t best_n = 0;
  for (size_t i = 0; counts != NULL && i < pm->n; i++) {
    const ld_pm_peer_t *p = pm->peers[i];
    for (size_t s = 0; prunable(p) && p->has_shards && s < p->n_shards; s++) {
      uintptr_t c = (uintptr_t)ld_hashmap_get_u64(counts, p->shards[s]) + 1;
      ld_hashmap_put_u64(counts, p->shards[s], (void *)c, NULL);
      if (c > best_n) {
        best_n = c;
        best = p->shards[s];
      }
    }
  }
  ld_hashmap_free(counts, NULL);
  return best;
}

size_t ld_pm_prune(ld_pm_t *pm, ld_pm_action_t *out, size_t max) {
  size_t n = 0;
  /* failed too often */
  for (size_t i = pm->n; i-- > 0 && pm->n > pm->cfg.capacity;) {
    ld_pm_peer_t *p = pm->peers[i];
    if (prunable(p) && p->failed_attempts >= pm->cfg.max_failed_attempts)
      n = forget(pm, p, out, max, n);
  }
  /* without shards, in random order */
  for (size_t i = pm->n; pm->n > pm->cfg.capacity && i > 0;) {
    size_t j = (size_t)(next_rand(pm) % i);
    i--;
    ld_pm_peer_t *t = pm->peers[i];
    pm->peers[i] = pm->peers[j];
    pm->peers[j] = t;
    if (prunable(pm->peers[i]) && !pm->peers[i]->has_shards)
      n = forget(pm, pm->peers[i], out, max, n);
  }
  /* from the most crowded shard */
  while (pm->n > pm->cfg.capacity) {
    int shard = crowded_shard(pm);
    if (shard < 0)
      break;
    for (size_t i = pm->n; i-- > 0;) {
      ld_pm_peer_t *p = pm->peers[i];
      if (prunable(p) && on_shard(p, p->cluster_id, (uint16_t)shard)) {
        n = forget(pm, p, out, max, n);
        break;
      }
    }
  }
  return n;
}

/* ---- service slots -----------------------------------------------------------------------------
 */

static const unsigned k_slot_bits[LD_PM_SLOTS] = {LD_PM_STORE, LD_PM_FILTER, LD_PM_LIGHTPUSH,
                                                  LD_PM_PX};

int ld_pm_set_slot(ld_pm_t *pm, ld_pm_service_t service, const ld_peerid_t *id) {
  if (service >= LD_PM_SLOTS || find(pm, id) == NULL)
    return LD_ERR_NOT_FOUND;
  pm->has_slot[service] = true;
  pm->slot[service] = *id;
  return 0;
}

const ld_pm_peer_t *ld_pm_select_service(const ld_pm_t *pm, ld_pm_service_t service,
                                         uint64_t now_ms) {
  if (service >= LD_PM_SLOTS)
    return NULL;
  if (pm->has_slot[service])
    return find(pm, &pm->slot[service]);
  const ld_pm_peer_t *known = NULL;
  for (size_t i = 0; i < pm->n; i++) {
    const ld_pm_peer_t *p = pm->peers[i];
    if ((p->services & k_slot_bits[service]) == 0)
      continue;
    if (p->conns > 0)
      return p;
    if (known == NULL && can_dial(pm, p, now_ms) && p->n_addrs > 0)
      known = p;
  }
  return known;
}
