#include "node/static_peers.h"

#include <stdlib.h>
#include <string.h>

#include "base/error.h"

typedef struct static_peer {
  ld_multiaddr_t addr;
  ld_peerid_t id;
  ld_static_peer_state_t state;
  bool dialing;         /* a dial of ours is under way (may overlap a connection) */
  size_t n_conns;       /* live connections */
  uint64_t due_ms;      /* next dial (IDLE) */
  uint64_t up_since_ms; /* when the first of the live connections came up */
  uint32_t failures;
  uint64_t attempts;
} static_peer_t;

struct ld_static_peers {
  ld_static_peers_config_t cfg;
  ld_static_peers_dial_fn dial;
  void *user_data;
  size_t n;
  static_peer_t peers[];
};

void ld_static_peers_config_default(ld_static_peers_config_t *cfg) {
  cfg->min_ms = 1000;
  cfg->max_ms = 60000;
  cfg->stable_ms = 10000;
}

uint64_t ld_static_peers_backoff(const ld_static_peers_config_t *cfg, uint32_t failures) {
  uint64_t delay = cfg->min_ms;
  for (uint32_t i = 1; i < failures && delay < cfg->max_ms; i++)
    delay *= 2;
  return delay < cfg->max_ms ? delay : cfg->max_ms;
}

static void apply_defaults(ld_static_peers_config_t *cfg, const ld_static_peers_config_t *in) {
  ld_static_peers_config_default(cfg);
  if (in == NULL)
    return;
  if (in->min_ms != 0)
    cfg->min_ms = in->min_ms;
  if (in->max_ms != 0)
    cfg->max_ms = in->max_ms;
  if (in->stable_ms != 0)
    cfg->stable_ms = in->stable_ms;
}

ld_static_peers_t *ld_static_peers_new(const ld_static_peers_config_t *cfg,
                                       const ld_multiaddr_t *addrs, size_t n,
                                       ld_static_peers_dial_fn dial, void *user_data,
                                       uint64_t now_ms) {
  if (n > LD_STATIC_PEERS_MAX || dial == NULL || (n > 0 && addrs == NULL))
    return NULL;
  ld_static_peers_t *sp = calloc(1, sizeof *sp + n * sizeof(static_peer_t));
  if (sp == NULL)
    return NULL;
  apply_defaults(&sp->cfg, cfg);
  sp->dial = dial;
  sp->user_data = user_data;
  sp->n = n;
  bool valid = sp->cfg.min_ms <= sp->cfg.max_ms;
  for (size_t i = 0; i < n && valid; i++) {
    ld_multiaddr_t tmp = addrs[i];
    sp->peers[i].addr = addrs[i];
    sp->peers[i].due_ms = now_ms;
    valid = ld_multiaddr_peerid(&tmp, &sp->peers[i].id, false);
  }
  if (!valid) {
    free(sp);
    return NULL;
  }
  return sp;
}

void ld_static_peers_free(ld_static_peers_t *sp) {
  free(sp);
}

static void schedule_retry(ld_static_peers_t *sp, static_peer_t *p, uint64_t now_ms) {
  p->failures++;
  p->state = LD_STATIC_PEER_IDLE;
  p->due_ms = now_ms + ld_static_peers_backoff(&sp->cfg, p->failures);
}

size_t ld_static_peers_tick(ld_static_peers_t *sp, uint64_t now_ms) {
  size_t started = 0;
  for (size_t i = 0; i < sp->n; i++) {
    static_peer_t *p = &sp->peers[i];
    if (p->state != LD_STATIC_PEER_IDLE || p->due_ms > now_ms)
      continue;
    p->state = LD_STATIC_PEER_DIALING;
    p->dialing = true;
    p->attempts++;
    if (sp->dial(sp->user_data, i, &p->addr) != 0) {
      p->dialing = false;
      schedule_retry(sp, p, now_ms);
      continue;
    }
    started++;
  }
  return started;
}

uint64_t ld_static_peers_next_deadline(const ld_static_peers_t *sp) {
  uint64_t next = UINT64_MAX;
  for (size_t i = 0; i < sp->n; i++)
    if (sp->peers[i].state == LD_STATIC_PEER_IDLE && sp->peers[i].due_ms < next)
      next = sp->peers[i].due_ms;
  return next;
}

void ld_static_peers_dial_done(ld_static_peers_t *sp, size_t index, int err, uint64_t now_ms) {
  if (index >= sp->n || !sp->peers[index].dialing)
    return;
  static_peer_t *p = &sp->peers[index];
  p->dialing = false;
  if (p->state != LD_STATIC_PEER_DIALING)
    return; /* the connection was reported already */
  if (err != 0) {
    schedule_retry(sp, p, now_ms);
    return;
  }
  /* Dialed, but the connection was not reported (it went away at once): try again later
   * without counting a failure. */
  p->state = LD_STATIC_PEER_IDLE;
  p->due_ms = now_ms + sp->cfg.min_ms;
}

static static_peer_t *find(ld_static_peers_t *sp, const ld_peerid_t *peer) {
  for (size_t i = 0; i < sp->n; i++)
    if (ld_peerid_equal(&sp->peers[i].id, peer))
      return &sp->peers[i];
  return NULL;
}

bool ld_static_peers_connected(ld_static_peers_t *sp, const ld_peerid_t *peer, uint64_t now_ms) {
  static_peer_t *p = find(sp, peer);
  if (p == NULL)
    return false;
  if (p->n_conns++ == 0)
    p->up_since_ms = now_ms;
  p->state = LD_STATIC_PEER_CONNECTED;
  return true;
}

bool ld_static_peers_disconnected(ld_static_peers_t *sp, const ld_peerid_t *peer, uint64_t now_ms) {
  static_peer_t *p = find(sp, peer);
  if (p == NULL)
    return false;
  if (p->n_conns == 0 || --p->n_conns > 0)
    return true;
  bool stable = now_ms - p->up_since_ms >= sp->cfg.stable_ms;
  if (stable)
    p->failures = 0;
  if (p->dialing) {
    p->state = LD_STATIC_PEER_DIALING; /* our dial will report; decide then */
  } else if (stable) {
    p->state = LD_STATIC_PEER_IDLE;
    p->due_ms = now_ms + sp->cfg.min_ms;
  } else {
    schedule_retry(sp, p, now_ms);
  }
  return true;
}

size_t ld_static_peers_count(const ld_static_peers_t *sp) {
  return sp->n;
}

ld_static_peer_state_t ld_static_peers_state(const ld_static_peers_t *sp, size_t index) {
  return index < sp->n ? sp->peers[index].state : LD_STATIC_PEER_IDLE;
}

uint32_t ld_static_peers_failures(const ld_static_peers_t *sp, size_t index) {
  return index < sp->n ? sp->peers[index].failures : 0;
}

uint64_t ld_static_peers_due(const ld_static_peers_t *sp, size_t index) {
  return index < sp->n ? sp->peers[index].due_ms : 0;
}

uint64_t ld_static_peers_attempts(const ld_static_peers_t *sp, size_t index) {
  return index < sp->n ? sp->peers[index].attempts : 0;
}

const ld_peerid_t *ld_static_peers_peer(const ld_static_peers_t *sp, size_t index) {
  return index < sp->n ? &sp->peers[index].id : NULL;
}
