#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "p2p/gossipsub/router_internal.h"

typedef struct scored {
  gs_peer_t *p;
  double s;
} scored_t;

static int by_score_desc(const void *a, const void *b) {
  double x = ((const scored_t *)a)->s, y = ((const scored_t *)b)->s;
  return (x < y) - (x > y);
}

static void shuffle_scored(ld_gs_router_t *r, scored_t *v, size_t n) {
  for (size_t i = n; i > 1; i--) {
    size_t j = gs_rand_below(r, i);
    scored_t t = v[i - 1];
    v[i - 1] = v[j];
    v[j] = t;
  }
}

/* The mesh with scores, shuffled then sorted best first (ties in random order). */
static scored_t *mesh_by_score(ld_gs_router_t *r, gs_topic_t *t, uint64_t now) {
  scored_t *v = malloc((t->mesh.n + 1) * sizeof *v);
  if (v == NULL) {
    return NULL;
  }
  for (uint32_t i = 0; i < t->mesh.n; i++) {
    v[i].p = t->mesh.v[i];
    v[i].s = gs_score(r, t->mesh.v[i], now);
  }
  shuffle_scored(r, v, t->mesh.n);
  qsort(v, t->mesh.n, sizeof *v, by_score_desc);
  return v;
}

/* ---- mesh maintenance ---------------------------------------------------------------------- */

static void drop_negative(ld_gs_router_t *r, gs_topic_t *t, uint64_t now) {
  for (uint32_t i = t->mesh.n; i-- > 0;) {
    gs_peer_t *p = t->mesh.v[i];
    if (gs_score(r, p, now) < 0) {
      gs_send_prune(r, t, p, r->p.prune_backoff_ms, now);
      gs_mesh_del(r, t, p, now);
    }
  }
}

static void graft_more(ld_gs_router_t *r, gs_topic_t *t, gs_sel_t sel, size_t need, uint64_t now) {
  size_t n = gs_select(r, t, sel, 0, now);
  for (size_t i = 0; i < n && need > 0; i++, need--) {
    gs_mesh_add(r, t, r->cand[i], now);
    gs_send_graft(r, t, r->cand[i]);
  }
}

static size_t count_outbound(const scored_t *v, size_t n) {
  size_t k = 0;
  for (size_t i = 0; i < n; i++) {
    k += v[i].p->outbound;
  }
  return k;
}

/* Swaps outbound peers from the pruned tail into the kept head until D_out are kept. */
static void keep_outbound(ld_gs_router_t *r, scored_t *v, size_t keep, size_t n) {
  size_t out = count_outbound(v, keep);
  for (size_t j = keep; j < n && out < r->p.d_out; j++) {
    if (!v[j].p->outbound) {
      continue;
    }
    for (size_t k = keep; k-- > 0;) {
      if (!v[k].p->outbound) {
        scored_t tmp = v[k];
        v[k] = v[j];
        v[j] = tmp;
        out++;
        break;
      }
    }
  }
}

/* Above D_hi: keep the best D_score, fill up to D at random, keep D_out outbound, prune the rest.
 */
static void trim(ld_gs_router_t *r, gs_topic_t *t, uint64_t now) {
  size_t n = t->mesh.n;
  scored_t *v = mesh_by_score(r, t, now);
  if (v == NULL) {
    return;
  }
  size_t best = r->p.d_score < n ? r->p.d_score : n;
  shuffle_scored(r, v + best, n - best);
  size_t keep = r->p.d < n ? r->p.d : n;
  keep_outbound(r, v, keep, n);
  for (size_t i = keep; i < n; i++) {
    gs_send_prune(r, t, v[i].p, r->p.prune_backoff_ms, now);
    gs_mesh_del(r, t, v[i].p, now);
  }
  free(v);
}

static void opportunistic_graft(ld_gs_router_t *r, gs_topic_t *t, uint64_t now) {
  scored_t *v = mesh_by_score(r, t, now);
  if (v == NULL) {
    return;
  }
  double median = v[t->mesh.n / 2].s;
  free(v);
  if (median >= r->p.opportunistic_graft_threshold) {
    return;
  }
  size_t n = gs_select(r, t, GS_SEL_GRAFT, 0, now), added = 0;
  for (size_t i = 0; i < n && added < r->p.opportunistic_graft_peers; i++) {
    if (gs_score(r, r->cand[i], now) > median) {
      gs_mesh_add(r, t, r->cand[i], now);
      gs_send_graft(r, t, r->cand[i]);
      added++;
    }
  }
}

static void maintain_mesh(ld_gs_router_t *r, gs_topic_t *t, uint64_t now) {
  drop_negative(r, t, now);
  if (t->mesh.n < r->p.d_lo) {
    graft_more(r, t, GS_SEL_GRAFT, r->p.d - t->mesh.n, now);
  }
  if (t->mesh.n > r->p.d_hi) {
    trim(r, t, now);
  }
  if (t->mesh.n >= r->p.d_lo) {
    size_t out = 0;
    for (uint32_t i = 0; i < t->mesh.n; i++) {
      out += t->mesh.v[i]->outbound;
    }
    if (out < r->p.d_out) {
      graft_more(r, t, GS_SEL_GRAFT_OUTBOUND, r->p.d_out - out, now);
    }
  }
  uint32_t ticks = r->p.opportunistic_graft_ticks;
  if (ticks > 0 && r->hb_count % ticks == 0 && t->mesh.n > 1) {
    opportunistic_graft(r, t, now);
  }
}

static void maintain_fanout(ld_gs_router_t *r, gs_topic_t *t, uint64_t now) {
  if (t->fanout.n == 0 && t->last_pub == 0) {
    return;
  }
  if (now - t->last_pub > r->p.fanout_ttl_ms) {
    t->fanout.n = 0;
    t->last_pub = 0;
    return;
  }
  for (uint32_t i = t->fanout.n; i-- > 0;) {
    gs_peer_t *p = t->fanout.v[i];
    if (!gs_peers_has(&t->peers, p) || gs_score(r, p, now) < r->p.publish_threshold) {
      gs_peers_del(&t->fanout, p);
    }
  }
  if (t->fanout.n < r->p.d) {
    gs_fanout_fill(r, t, now);
  }
}

/* ---- gossip -------------------------------------------------------------------------------- */

typedef struct gather_ctx {
  ld_gs_router_t *r;
} gather_ctx_t;

static void gather_one(void *ctx, ld_gs_cmsg_t *m) {
  ld_gs_router_t *r = ((gather_ctx_t *)ctx)->r;
  gs_topic_t *t = gs_topic_find(r, m->topic, m->topic_len);
  if (t == NULL) {
    return;
  }
  if (t->n_gossip == t->cap_gossip) {
    size_t ncap = t->cap_gossip ? t->cap_gossip * 2 : 64;
    uint8_t *g = realloc(t->gossip, ncap * LD_GS_MSG_ID_LEN);
    if (g == NULL) {
      return;
    }
    t->gossip = g;
    t->cap_gossip = ncap;
  }
  memcpy(t->gossip + t->n_gossip * LD_GS_MSG_ID_LEN, m->id, LD_GS_MSG_ID_LEN);
  t->n_gossip++;
}

static void gather_gossip(ld_gs_router_t *r) {
  ld_hashmap_iter_t it = {0};
  void *v;
  while (ld_hashmap_next(r->topics, &it, NULL, NULL, &v)) {
    gs_topic_t *t = v;
    if (t->cap_gossip > 1024 && t->n_gossip * 4 < t->cap_gossip) { /* after a burst */
      free(t->gossip);
      t->gossip = NULL;
      t->cap_gossip = 0;
    }
    t->n_gossip = 0;
  }
  gather_ctx_t ctx = {r};
  ld_gs_mcache_gossip_each(&r->mcache, gather_one, &ctx);
}

static void emit_gossip(ld_gs_router_t *r, gs_topic_t *t, uint64_t now) {
  if (t->n_gossip == 0) {
    return;
  }
  size_t n = gs_select(r, t, GS_SEL_GOSSIP, r->p.gossip_threshold, now);
  size_t target = (size_t)(r->p.gossip_factor * (double)n);
  if (target < r->p.d_lazy) {
    target = r->p.d_lazy;
  }
  for (size_t i = 0; i < n && i < target; i++) {
    size_t k = t->n_gossip;
    if (k > r->p.max_ihave_len) {
      gs_shuffle_ids(r, t->gossip, t->n_gossip);
      k = r->p.max_ihave_len;
    }
    if (k > 0 && ld_gs_out_ihave(gs_out(r, r->cand[i]), t->name, t->gossip, k) == 0) {
      r->stats.ihave_out++;
    }
  }
}

/* ---- expiry -------------------------------------------------------------------------------- */

static void broken_promise(void *ctx, const ld_gs_idset_entry_t *e) {
  ld_gs_router_t *r = ctx;
  r->stats.broken_promises++;
  ld_gs_score_penalize(r->score, e->value, 1);
}

static void reset_peers(ld_gs_router_t *r, uint64_t now) {
  ld_hashmap_iter_t it = {0};
  void *v;
  ld_gs_peer_t *bad = NULL;
  size_t n_bad = 0, cap = ld_hashmap_size(r->peers);
  if (r->p.disconnect_bad_peers && cap > 0) {
    bad = malloc(cap * sizeof *bad);
  }
  while (ld_hashmap_next(r->peers, &it, NULL, NULL, &v)) {
    gs_peer_t *p = v;
    p->ihave_in = p->iwant_asked = p->iwant_served = p->idontwant_in = p->graft_prune_in = 0;
    ld_gs_idset_expire(&p->dontwant, r->hb_count, NULL, NULL);
    ld_gs_idset_compact(&p->dontwant);
    if (bad != NULL && !p->disconnect_requested && n_bad < cap &&
        gs_score(r, p, now) < r->p.graylist_threshold) {
      bad[n_bad++] = p->id;
    }
  }
  for (size_t i = 0; i < n_bad; i++) {
    gs_peer_t *p = gs_peer(r, bad[i]);
    if (p != NULL) {
      gs_request_disconnect(r, p, LD_GS_DISCONNECT_GRAYLISTED);
    }
  }
  free(bad);
}

static void expire_backoffs(ld_gs_router_t *r, gs_topic_t *t, uint64_t now) {
  uint64_t slack = (uint64_t)r->p.backoff_slack_heartbeats * r->p.heartbeat_ms;
  for (uint32_t i = t->n_backoff; i-- > 0;) {
    if (now >= t->backoff[i].expiry + slack) {
      t->backoff[i] = t->backoff[--t->n_backoff];
    }
  }
}

static bool topic_idle(const gs_topic_t *t) {
  return !t->subscribed && t->peers.n == 0 && t->mesh.n == 0 && t->fanout.n == 0 &&
         t->n_backoff == 0 && t->last_pub == 0;
}

static void gc_topics(ld_gs_router_t *r) {
  ld_hashmap_iter_t it = {0};
  const void *key;
  size_t klen;
  void *v;
  while (ld_hashmap_next(r->topics, &it, &key, &klen, &v)) {
    if (topic_idle(v)) {
      ld_hashmap_remove(r->topics, key, klen);
      gs_topic_free(v);
    }
  }
}

/* ---- the heartbeat ------------------------------------------------------------------------- */

/* Memory taken during a burst goes back once the caches have drained. */
static void compact(ld_gs_router_t *r) {
  ld_gs_idset_compact(&r->seen);
  ld_gs_idset_compact(&r->promises);
  ld_gs_idset_compact(&r->mcache.idx);
  if (r->cap_want > 1024) {
    free(r->want);
    r->want = NULL;
    r->cap_want = 0;
  }
}

static void topics_round(ld_gs_router_t *r, uint64_t now) {
  ld_hashmap_iter_t it = {0};
  void *v;
  while (ld_hashmap_next(r->topics, &it, NULL, NULL, &v)) {
    gs_topic_t *t = v;
    if (t->subscribed) {
      maintain_mesh(r, t, now);
    } else {
      maintain_fanout(r, t, now);
    }
    if (t->subscribed || t->fanout.n > 0) {
      emit_gossip(r, t, now);
    }
    expire_backoffs(r, t, now);
  }
}

void ld_gs_router_heartbeat(ld_gs_router_t *r, uint64_t now_ms) {
  r->hb_count++;
  ld_gs_score_tick(r->score, now_ms);
  ld_gs_idset_expire(&r->promises, now_ms, broken_promise, r);
  reset_peers(r, now_ms);
  gather_gossip(r);
  topics_round(r, now_ms);
  ld_gs_idset_expire(&r->seen, now_ms, NULL, NULL);
  gs_expire_pending(r, now_ms);
  gs_flush(r);
  ld_gs_mcache_shift(&r->mcache);
  gc_topics(r);
  compact(r);
  r->next_hb = now_ms + r->p.heartbeat_ms;
}
