#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "base/hashmap.h"
#include "p2p/gossipsub/router_internal.h"

/* ---- randomness (xoshiro256**, seeded through splitmix64) ---------------------------------- */

static uint64_t splitmix64(uint64_t *x) {
  uint64_t z = (*x += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

static inline uint64_t rotl(uint64_t x, int k) {
  return (x << k) | (x >> (64 - k));
}

uint64_t gs_rand(ld_gs_router_t *r) {
  uint64_t *s = r->rng;
  uint64_t out = rotl(s[1] * 5, 7) * 9;
  uint64_t t = s[1] << 17;
  s[2] ^= s[0];
  s[3] ^= s[1];
  s[1] ^= s[2];
  s[0] ^= s[3];
  s[2] ^= t;
  s[3] = rotl(s[3], 45);
  return out;
}

size_t gs_rand_below(ld_gs_router_t *r, size_t n) {
  return n ? (size_t)(gs_rand(r) % n) : 0;
}

void gs_shuffle_peers(ld_gs_router_t *r, gs_peer_t **v, size_t n) {
  for (size_t i = n; i > 1; i--) {
    size_t j = gs_rand_below(r, i);
    gs_peer_t *t = v[i - 1];
    v[i - 1] = v[j];
    v[j] = t;
  }
}

void gs_shuffle_ids(ld_gs_router_t *r, uint8_t *ids, size_t n) {
  uint8_t tmp[LD_GS_MSG_ID_LEN];
  for (size_t i = n; i > 1; i--) {
    size_t j = gs_rand_below(r, i);
    memcpy(tmp, ids + (i - 1) * LD_GS_MSG_ID_LEN, LD_GS_MSG_ID_LEN);
    memcpy(ids + (i - 1) * LD_GS_MSG_ID_LEN, ids + j * LD_GS_MSG_ID_LEN, LD_GS_MSG_ID_LEN);
    memcpy(ids + j * LD_GS_MSG_ID_LEN, tmp, LD_GS_MSG_ID_LEN);
  }
}

/* ---- peer sets ----------------------------------------------------------------------------- */

bool gs_peers_has(const gs_peers_t *s, const gs_peer_t *p) {
  for (uint32_t i = 0; i < s->n; i++) {
    if (s->v[i] == p) {
      return true;
    }
  }
  return false;
}

int gs_peers_add(gs_peers_t *s, gs_peer_t *p) {
  if (s->n == s->cap) {
    uint32_t ncap = s->cap ? s->cap * 2 : 8;
    gs_peer_t **v = realloc(s->v, ncap * sizeof *v);
    if (v == NULL) {
      return LD_ERR_NOMEM;
    }
    s->v = v;
    s->cap = ncap;
  }
  s->v[s->n++] = p;
  return 0;
}

bool gs_peers_del(gs_peers_t *s, const gs_peer_t *p) {
  for (uint32_t i = 0; i < s->n; i++) {
    if (s->v[i] == p) {
      s->v[i] = s->v[--s->n];
      return true;
    }
  }
  return false;
}

/* ---- peers and topics ---------------------------------------------------------------------- */

gs_peer_t *gs_peer(const ld_gs_router_t *r, ld_gs_peer_t id) {
  return ld_hashmap_get_u64(r->peers, id);
}

gs_topic_t *gs_topic_find(const ld_gs_router_t *r, const void *name, size_t len) {
  return ld_hashmap_get(r->topics, name, len);
}

gs_topic_t *gs_topic_get(ld_gs_router_t *r, const void *name, size_t len) {
  gs_topic_t *t = gs_topic_find(r, name, len);
  if (t != NULL || ld_hashmap_size(r->topics) >= GS_MAX_TOPICS) {
    return t;
  }
  t = calloc(1, sizeof *t);
  if (t == NULL || (t->name = malloc(len + 1)) == NULL) {
    free(t);
    return NULL;
  }
  memcpy(t->name, name, len);
  t->name[len] = '\0';
  t->name_len = len;
  if (ld_hashmap_put(r->topics, name, len, t, NULL) != 0) {
    gs_topic_free(t);
    return NULL;
  }
  return t;
}

void gs_topic_free(gs_topic_t *t) {
  if (t == NULL) {
    return;
  }
  free(t->peers.v);
  free(t->mesh.v);
  free(t->fanout.v);
  free(t->backoff);
  free(t->gossip);
  free(t->name);
  free(t);
}

static void topic_free_cb(void *v) {
  gs_topic_free(v);
}

double gs_score(const ld_gs_router_t *r, const gs_peer_t *p, uint64_t now) {
  return ld_gs_score_get(r->score, p->id, now);
}

bool gs_is_gossip(const gs_peer_t *p) {
  return p->proto != LD_GS_PROTO_FLOODSUB;
}

bool gs_has_idontwant(const gs_peer_t *p) {
  return p->proto == LD_GS_PROTO_MESHSUB_12 || p->proto == LD_GS_PROTO_WAKU_RELAY;
}

static bool has_backoff_field(const gs_peer_t *p) {
  return p->proto != LD_GS_PROTO_FLOODSUB && p->proto != LD_GS_PROTO_MESHSUB_10;
}

/* ---- backoff ------------------------------------------------------------------------------- */

const gs_backoff_t *gs_backoff_find(const gs_topic_t *t, ld_gs_peer_t peer) {
  for (uint32_t i = 0; i < t->n_backoff; i++) {
    if (t->backoff[i].peer == peer) {
      return &t->backoff[i];
    }
  }
  return NULL;
}

uint64_t gs_backoff_expiry(const gs_topic_t *t, ld_gs_peer_t peer) {
  const gs_backoff_t *b = gs_backoff_find(t, peer);
  return b ? b->expiry : 0;
}

void gs_backoff_set(gs_topic_t *t, ld_gs_peer_t peer, uint64_t now, uint64_t ms) {
  uint64_t expiry = now + (ms > GS_MAX_BACKOFF_MS ? GS_MAX_BACKOFF_MS : ms);
  gs_backoff_t *b = (gs_backoff_t *)gs_backoff_find(t, peer);
  if (b == NULL) {
    if (t->n_backoff == t->cap_backoff) {
      uint32_t ncap = t->cap_backoff ? t->cap_backoff * 2 : 8;
      gs_backoff_t *nb = realloc(t->backoff, ncap * sizeof *nb);
      if (nb == NULL) {
        return;
      }
      t->backoff = nb;
      t->cap_backoff = ncap;
    }
    b = &t->backoff[t->n_backoff++];
    b->peer = peer;
    b->expiry = 0;
  }
  if (expiry > b->expiry) {
    b->expiry = expiry;
  }
  b->pruned_at = now;
}

/* Our own GRAFTs wait for the backoff plus a slack of a few heartbeats. */
bool gs_backoff_blocks_graft(const ld_gs_router_t *r, const gs_topic_t *t, ld_gs_peer_t peer,
                             uint64_t now) {
  uint64_t e = gs_backoff_expiry(t, peer);
  return e != 0 && now < e + (uint64_t)r->p.backoff_slack_heartbeats * r->p.heartbeat_ms;
}

/* ---- output -------------------------------------------------------------------------------- */

ld_gs_out_t *gs_out(ld_gs_router_t *r, gs_peer_t *p) {
  if (!p->dirty) {
    if (r->n_dirty == r->cap_dirty) {
      size_t ncap = r->cap_dirty ? r->cap_dirty * 2 : 16;
      ld_gs_peer_t *d = realloc(r->dirty, ncap * sizeof *d);
      if (d == NULL) {
        return &p->out; /* flushed with the next dirty batch or dropped at removal */
      }
      r->dirty = d;
      r->cap_dirty = ncap;
    }
    r->dirty[r->n_dirty++] = p->id;
    p->dirty = true;
  }
  return &p->out;
}

typedef struct emit_ctx {
  ld_gs_router_t *r;
  ld_gs_peer_t peer;
} emit_ctx_t;

static void emit(void *ctx, const uint8_t *rpc, size_t len) {
  emit_ctx_t *e = ctx;
  e->r->stats.rpcs_out++;
  e->r->stats.rpc_bytes_out += len;
  e->r->cb.send(e->r->ud, e->peer, rpc, len);
}

void gs_flush(ld_gs_router_t *r) {
  for (size_t i = 0; i < r->n_dirty; i++) {
    gs_peer_t *p = gs_peer(r, r->dirty[i]);
    if (p == NULL || !p->dirty) {
      continue;
    }
    p->dirty = false;
    emit_ctx_t ctx = {r, p->id};
    size_t dropped = 0;
    ld_gs_out_flush(&p->out, r->scratch, r->p.max_rpc_size, emit, &ctx, &dropped);
    r->stats.ctrl_dropped += dropped;
  }
  r->n_dirty = 0;
}

void gs_queue_msg(ld_gs_router_t *r, gs_peer_t *p, gs_topic_t *t, const char *topic,
                  const uint8_t *data, size_t len) {
  if (ld_gs_out_msg(gs_out(r, p), topic, data, len) != 0) {
    return;
  }
  if (t != NULL) {
    t->stats.msgs_out++;
    t->stats.bytes_out += len;
  }
}

void gs_send_graft(ld_gs_router_t *r, gs_topic_t *t, gs_peer_t *p) {
  if (ld_gs_out_graft(gs_out(r, p), t->name) == 0) {
    r->stats.graft_out++;
  }
}

void gs_send_prune(ld_gs_router_t *r, gs_topic_t *t, gs_peer_t *p, uint64_t backoff_ms,
                   uint64_t now) {
  gs_backoff_set(t, p->id, now, backoff_ms);
  if (ld_gs_out_prune(gs_out(r, p), t->name, has_backoff_field(p), backoff_ms / 1000) == 0) {
    r->stats.prune_out++;
  }
}

/* ---- mesh ---------------------------------------------------------------------------------- */

void gs_mesh_add(ld_gs_router_t *r, gs_topic_t *t, gs_peer_t *p, uint64_t now) {
  if (gs_peers_has(&t->mesh, p) || gs_peers_add(&t->mesh, p) != 0) {
    return;
  }
  ld_gs_score_graft(r->score, p->id, t->name, now);
  if (r->cb.mesh_changed != NULL) {
    r->cb.mesh_changed(r->ud, t->name, p->id, true);
  }
}

void gs_mesh_del(ld_gs_router_t *r, gs_topic_t *t, gs_peer_t *p, uint64_t now) {
  if (!gs_peers_del(&t->mesh, p)) {
    return;
  }
  ld_gs_score_prune(r->score, p->id, t->name, now);
  if (r->cb.mesh_changed != NULL) {
    r->cb.mesh_changed(r->ud, t->name, p->id, false);
  }
}

/* ---- candidate selection ------------------------------------------------------------------- */

static bool cand_reserve(ld_gs_router_t *r, size_t n) {
  if (n <= r->cap_cand) {
    return true;
  }
  gs_peer_t **c = realloc(r->cand, n * sizeof *c);
  if (c == NULL) {
    return false;
  }
  r->cand = c;
  r->cap_cand = n;
  return true;
}

static bool eligible(ld_gs_router_t *r, gs_topic_t *t, gs_peer_t *p, gs_sel_t sel, double min_score,
                     uint64_t now) {
  if (!gs_is_gossip(p) || p->direct || p->disconnect_requested) {
    return false;
  }
  switch (sel) {
  case GS_SEL_GRAFT_OUTBOUND:
    if (!p->outbound) {
      return false;
    }
    /* fall through */
  case GS_SEL_GRAFT:
    if (gs_peers_has(&t->mesh, p) || gs_backoff_blocks_graft(r, t, p->id, now)) {
      return false;
    }
    break;
  case GS_SEL_GOSSIP:
    if (gs_peers_has(&t->mesh, p) || gs_peers_has(&t->fanout, p)) {
      return false;
    }
    break;
  case GS_SEL_FANOUT:
    if (gs_peers_has(&t->fanout, p)) {
      return false;
    }
    break;
  }
  return gs_score(r, p, now) >= min_score;
}

bool gs_may_graft(ld_gs_router_t *r, gs_topic_t *t, gs_peer_t *p, uint64_t now) {
  return eligible(r, t, p, GS_SEL_GRAFT, 0, now);
}

/* Fills r->cand with the eligible subscribers of `t` in random order; returns their number. */
size_t gs_select(ld_gs_router_t *r, gs_topic_t *t, gs_sel_t sel, double min_score, uint64_t now) {
  if (!cand_reserve(r, t->peers.n)) {
    return 0;
  }
  size_t n = 0;
  for (uint32_t i = 0; i < t->peers.n; i++) {
    if (eligible(r, t, t->peers.v[i], sel, min_score, now)) {
      r->cand[n++] = t->peers.v[i];
    }
  }
  gs_shuffle_peers(r, r->cand, n);
  return n;
}

void gs_request_disconnect(ld_gs_router_t *r, gs_peer_t *p, int reason) {
  if (p->disconnect_requested) {
    return;
  }
  p->disconnect_requested = true;
  r->stats.disconnects++;
  if (r->cb.disconnect != NULL) {
    r->cb.disconnect(r->ud, p->id, reason);
  }
}

/* ---- lifecycle ----------------------------------------------------------------------------- */

static void peer_free(void *v) {
  gs_peer_t *p = v;
  free(p->topics);
  ld_gs_idset_clear(&p->dontwant);
  ld_gs_out_clear(&p->out);
  free(p);
}

ld_gs_router_t *ld_gs_router_new(const ld_gs_params_t *p, const ld_gs_callbacks_t *cb, void *ud,
                                 uint64_t seed) {
  if (ld_gs_params_check(p) != 0 || cb == NULL || cb->send == NULL) {
    return NULL;
  }
  ld_gs_router_t *r = calloc(1, sizeof *r);
  if (r == NULL) {
    return NULL;
  }
  r->p = *p;
  r->cb = *cb;
  r->ud = ud;
  for (int i = 0; i < 4; i++) {
    r->rng[i] = splitmix64(&seed);
  }
  r->peers = ld_hashmap_new(64);
  r->topics = ld_hashmap_new(16);
  r->pending = ld_hashmap_new(64);
  r->score = ld_gs_score_new(&r->p);
  r->scratch = malloc(p->max_rpc_size);
  ld_gs_mcache_init(&r->mcache, p->mcache_len, p->mcache_gossip);
  ld_gs_idset_init(&r->seen, GS_MAX_SEEN);
  ld_gs_idset_init(&r->promises, GS_MAX_PROMISES);
  r->next_vid = 1;
  if (!r->peers || !r->topics || !r->pending || !r->score || !r->scratch) {
    ld_gs_router_free(r);
    return NULL;
  }
  return r;
}

void ld_gs_router_free(ld_gs_router_t *r) {
  if (r == NULL) {
    return;
  }
  ld_hashmap_free(r->peers, peer_free);
  ld_hashmap_free(r->topics, topic_free_cb);
  ld_hashmap_free(r->pending, gs_pending_free);
  ld_gs_score_free(r->score);
  ld_gs_mcache_clear(&r->mcache);
  ld_gs_idset_clear(&r->seen);
  ld_gs_idset_clear(&r->promises);
  free(r->dirty);
  free(r->scratch);
  free(r->cand);
  free(r->want);
  free(r);
}

/* ---- peers --------------------------------------------------------------------------------- */

static void send_hello(ld_gs_router_t *r, gs_peer_t *p) {
  ld_hashmap_iter_t it = {0};
  void *v;
  while (ld_hashmap_next(r->topics, &it, NULL, NULL, &v)) {
    gs_topic_t *t = v;
    if (t->subscribed) {
      ld_gs_out_sub(gs_out(r, p), t->name, true);
    }
  }
}

int ld_gs_router_add_peer(ld_gs_router_t *r, ld_gs_peer_t peer, ld_gs_proto_t proto, bool outbound,
                          const char *ip, uint64_t now_ms) {
  if (gs_peer(r, peer) != NULL) {
    return LD_ERR_EXISTS;
  }
  if (ld_hashmap_size(r->peers) >= LD_GS_MAX_PEERS) {
    return LD_ERR_LIMIT;
  }
  gs_peer_t *p = calloc(1, sizeof *p);
  if (p == NULL) {
    return LD_ERR_NOMEM;
  }
  p->id = peer;
  p->proto = proto;
  p->outbound = outbound;
  ld_gs_idset_init(&p->dontwant, (size_t)r->p.max_idontwant_ids_per_heartbeat *
                                     (r->p.idontwant_ttl_heartbeats + 1));
  int rc = ld_hashmap_put_u64(r->peers, peer, p, NULL);
  if (rc == 0) {
    rc = ld_gs_score_connect(r->score, peer, ip, now_ms);
    if (rc == LD_ERR_EXISTS) {
      rc = 0;
    }
    if (rc != 0) {
      ld_hashmap_remove_u64(r->peers, peer);
    }
  }
  if (rc != 0) {
    peer_free(p);
    return rc;
  }
  send_hello(r, p);
  gs_flush(r);
  return 0;
}

static void forget_in_topics(ld_gs_router_t *r, gs_peer_t *p, uint64_t now) {
  ld_hashmap_iter_t it = {0};
  void *v;
  while (ld_hashmap_next(r->topics, &it, NULL, NULL, &v)) {
    gs_topic_t *t = v;
    gs_mesh_del(r, t, p, now);
    gs_peers_del(&t->fanout, p);
    gs_peers_del(&t->peers, p);
  }
}

void ld_gs_router_remove_peer(ld_gs_router_t *r, ld_gs_peer_t peer, uint64_t now_ms) {
  gs_peer_t *p = gs_peer(r, peer);
  if (p == NULL) {
    return;
  }
  forget_in_topics(r, p, now_ms);
  ld_gs_score_disconnect(r->score, peer, now_ms);
  ld_hashmap_remove_u64(r->peers, peer);
  peer_free(p);
}

int ld_gs_router_set_app_score(ld_gs_router_t *r, ld_gs_peer_t peer, double score) {
  if (gs_peer(r, peer) == NULL) {
    return LD_ERR_NOT_FOUND;
  }
  return ld_gs_score_set_app(r->score, peer, score);
}

int ld_gs_router_set_direct(ld_gs_router_t *r, ld_gs_peer_t peer, bool direct) {
  gs_peer_t *p = gs_peer(r, peer);
  if (p == NULL) {
    return LD_ERR_NOT_FOUND;
  }
  p->direct = direct;
  return 0;
}

/* ---- local actions ------------------------------------------------------------------------- */

static bool topic_arg_ok(const char *topic) {
  if (topic == NULL) {
    return false;
  }
  size_t n = strlen(topic);
  return n > 0 && n <= LD_GS_MAX_TOPIC_LEN;
}

static void announce(ld_gs_router_t *r, gs_topic_t *t, bool subscribe) {
  ld_hashmap_iter_t it = {0};
  void *v;
  while (ld_hashmap_next(r->peers, &it, NULL, NULL, &v)) {
    ld_gs_out_sub(gs_out(r, v), t->name, subscribe);
  }
}

static void join(ld_gs_router_t *r, gs_topic_t *t, uint64_t now) {
  for (uint32_t i = 0; i < t->fanout.n && t->mesh.n < r->p.d; i++) {
    gs_peer_t *p = t->fanout.v[i];
    if (gs_score(r, p, now) >= 0 && !p->direct && !gs_backoff_blocks_graft(r, t, p->id, now)) {
      gs_mesh_add(r, t, p, now);
      gs_send_graft(r, t, p);
    }
  }
  t->fanout.n = 0;
  size_t n = gs_select(r, t, GS_SEL_GRAFT, 0, now);
  for (size_t i = 0; i < n && t->mesh.n < r->p.d; i++) {
    gs_mesh_add(r, t, r->cand[i], now);
    gs_send_graft(r, t, r->cand[i]);
  }
}

int ld_gs_router_subscribe(ld_gs_router_t *r, const char *topic, uint64_t now_ms) {
  if (!topic_arg_ok(topic)) {
    return LD_ERR_INVALID_ARG;
  }
  gs_topic_t *t = gs_topic_get(r, topic, strlen(topic));
  if (t == NULL) {
    return LD_ERR_NOMEM;
  }
  if (t->subscribed) {
    return LD_ERR_EXISTS;
  }
  t->subscribed = true;
  announce(r, t, true);
  join(r, t, now_ms);
  gs_flush(r);
  return 0;
}

int ld_gs_router_unsubscribe(ld_gs_router_t *r, const char *topic, uint64_t now_ms) {
  gs_topic_t *t = topic ? gs_topic_find(r, topic, strlen(topic)) : NULL;
  if (t == NULL || !t->subscribed) {
    return LD_ERR_NOT_FOUND;
  }
  announce(r, t, false);
  while (t->mesh.n > 0) {
    gs_peer_t *p = t->mesh.v[t->mesh.n - 1];
    gs_send_prune(r, t, p, r->p.unsubscribe_backoff_ms, now_ms);
    gs_mesh_del(r, t, p, now_ms);
  }
  t->subscribed = false;
  gs_flush(r);
  return 0;
}

bool ld_gs_router_subscribed(const ld_gs_router_t *r, const char *topic) {
  gs_topic_t *t = topic ? gs_topic_find(r, topic, strlen(topic)) : NULL;
  return t != NULL && t->subscribed;
}

void gs_fanout_fill(ld_gs_router_t *r, gs_topic_t *t, uint64_t now) {
  size_t n = gs_select(r, t, GS_SEL_FANOUT, r->p.publish_threshold, now);
  for (size_t i = 0; i < n && t->fanout.n < r->p.d; i++) {
    gs_peers_add(&t->fanout, r->cand[i]);
  }
}

static bool wants(const gs_peer_t *p, const uint8_t *id, uint64_t h) {
  return ld_gs_idset_find_h(&p->dontwant, id, h) == NULL;
}

/* Publish targets: flood publishing sends to every subscriber above the publish threshold;
 * otherwise floodsub and direct subscribers plus the mesh (or fanout). */
static size_t publish_targets(ld_gs_router_t *r, gs_topic_t *t, uint64_t now) {
  if (!r->p.flood_publish && !t->subscribed) {
    if (t->fanout.n == 0) {
      gs_fanout_fill(r, t, now);
    }
    t->last_pub = now;
  }
  if (!cand_reserve(r, (size_t)t->peers.n + t->mesh.n + t->fanout.n)) {
    return 0;
  }
  size_t n = 0;
  for (uint32_t i = 0; i < t->peers.n; i++) {
    gs_peer_t *p = t->peers.v[i];
    bool always = p->direct || !gs_is_gossip(p);
    if (always || (r->p.flood_publish && gs_score(r, p, now) >= r->p.publish_threshold)) {
      r->cand[n++] = p;
    }
  }
  if (r->p.flood_publish) {
    return n;
  }
  const gs_peers_t *set = t->subscribed ? &t->mesh : &t->fanout;
  for (uint32_t i = 0; i < set->n; i++) {
    gs_peer_t *p = set->v[i];
    if (!p->direct && gs_is_gossip(p)) {
      r->cand[n++] = p;
    }
  }
  return n;
}

int ld_gs_router_publish(ld_gs_router_t *r, const char *topic, const uint8_t *data, size_t len,
                         uint64_t now_ms) {
  return ld_gs_router_publish_id(r, topic, data, len, NULL, now_ms);
}

int ld_gs_router_publish_id(ld_gs_router_t *r, const char *topic, const uint8_t *data, size_t len,
                            const uint8_t known_id[LD_GS_MSG_ID_LEN], uint64_t now_ms) {
  if (!topic_arg_ok(topic) || (data == NULL && len > 0)) {
    return LD_ERR_INVALID_ARG;
  }
  if (ld_gs_rpc_msg_size(strlen(topic), len) > r->p.max_rpc_size) {
    return LD_ERR_TOO_LARGE;
  }
  uint8_t id[LD_GS_MSG_ID_LEN];
  if (known_id != NULL)
    memcpy(id, known_id, sizeof id);
  else
    ld_gs_msg_id(data, len, id);
  uint64_t h = ld_gs_idset_hash(id);
  ld_gs_idset_expire(&r->seen, now_ms, NULL, NULL);
  if (ld_gs_idset_find_h(&r->seen, id, h) != NULL) {
    return LD_ERR_EXISTS;
  }
  gs_topic_t *t = gs_topic_get(r, topic, strlen(topic));
  if (t == NULL) {
    return LD_ERR_NOMEM;
  }
  size_t n = publish_targets(r, t, now_ms), sent = 0;
  if (n == 0) {
    /* nim-libp2p: "No peers for topic, skipping publish", before the message is cached or
     * seen, so that the same message can be published once there are peers */
    return 0;
  }
  ld_gs_cmsg_t *m = NULL;
  if (ld_gs_mcache_put(&r->mcache, id, topic, data, len, &m) != 0) {
    return LD_ERR_NOMEM;
  }
  uint32_t tag = gs_topic_tag(topic);
  ld_gs_idset_add_h(&r->seen, id, h, now_ms + r->p.seen_ttl_ms,
                    gs_seen_decided(GS_SEEN_ACCEPTED, 0, tag));
  t->stats.published++;
  for (size_t i = 0; i < n; i++) {
    if (wants(r->cand[i], id, h)) {
      gs_queue_msg(r, r->cand[i], t, t->name, m->data, m->len);
      sent++;
    }
  }
  ld_gs_idset_entry_t *e = ld_gs_idset_find_h(&r->seen, id, h);
  if (e != NULL) {
    e->value = gs_seen_decided(GS_SEEN_ACCEPTED, sent, tag);
  }
  gs_flush(r);
  return (int)sent;
}

uint32_t gs_topic_tag(const char *topic) {
  return (uint32_t)ld_hash_bytes(topic, strlen(topic));
}

int ld_gs_router_seen_reach(const ld_gs_router_t *r, const char *topic,
                            const uint8_t id[LD_GS_MSG_ID_LEN], uint64_t now_ms) {
  if (topic == NULL || id == NULL) {
    return LD_ERR_INVALID_ARG;
  }
  const ld_gs_idset_entry_t *e = ld_gs_idset_find(&r->seen, id, LD_GS_MSG_ID_LEN);
  if (e == NULL || e->expiry <= now_ms) {
    return LD_ERR_NOT_FOUND;
  }
  if ((e->value & 3) == GS_SEEN_PENDING) {
    const gs_pending_t *pv = ld_hashmap_get_u64(r->pending, e->value >> 2);
    return pv != NULL && strcmp(pv->topic, topic) == 0 ? (int)pv->n_deliverers : LD_ERR_NOT_FOUND;
  }
  if ((e->value & 3) != GS_SEEN_ACCEPTED || (uint32_t)(e->value >> 32) != gs_topic_tag(topic)) {
    return LD_ERR_NOT_FOUND;
  }
  return (int)gs_seen_reach(e->value);
}

/* ---- introspection ------------------------------------------------------------------------- */

void ld_gs_router_stats(const ld_gs_router_t *r, ld_gs_stats_t *out) {
  *out = r->stats;
  out->peers = ld_hashmap_size(r->peers);
}

int ld_gs_router_topic_stats(const ld_gs_router_t *r, const char *topic, ld_gs_topic_stats_t *out) {
  gs_topic_t *t = topic ? gs_topic_find(r, topic, strlen(topic)) : NULL;
  if (t == NULL) {
    return LD_ERR_NOT_FOUND;
  }
  *out = t->stats;
  return 0;
}

static size_t copy_peers(const gs_peers_t *s, ld_gs_peer_t *out, size_t cap) {
  for (uint32_t i = 0; i < s->n && i < cap; i++) {
    out[i] = s->v[i]->id;
  }
  return s->n;
}

size_t ld_gs_router_mesh_size(const ld_gs_router_t *r, const char *topic) {
  gs_topic_t *t = topic ? gs_topic_find(r, topic, strlen(topic)) : NULL;
  return t ? t->mesh.n : 0;
}

size_t ld_gs_router_mesh_peers(const ld_gs_router_t *r, const char *topic, ld_gs_peer_t *out,
                               size_t cap) {
  gs_topic_t *t = topic ? gs_topic_find(r, topic, strlen(topic)) : NULL;
  return t ? copy_peers(&t->mesh, out, cap) : 0;
}

size_t ld_gs_router_topic_peers(const ld_gs_router_t *r, const char *topic, ld_gs_peer_t *out,
                                size_t cap) {
  gs_topic_t *t = topic ? gs_topic_find(r, topic, strlen(topic)) : NULL;
  return t ? copy_peers(&t->peers, out, cap) : 0;
}

bool ld_gs_router_in_mesh(const ld_gs_router_t *r, const char *topic, ld_gs_peer_t peer) {
  gs_topic_t *t = topic ? gs_topic_find(r, topic, strlen(topic)) : NULL;
  gs_peer_t *p = gs_peer(r, peer);
  return t != NULL && p != NULL && gs_peers_has(&t->mesh, p);
}

double ld_gs_router_peer_score(const ld_gs_router_t *r, ld_gs_peer_t peer, uint64_t now_ms) {
  return gs_peer(r, peer) ? ld_gs_score_get(r->score, peer, now_ms) : 0;
}

size_t ld_gs_router_peer_count(const ld_gs_router_t *r) {
  return ld_hashmap_size(r->peers);
}

size_t ld_gs_router_topics(const ld_gs_router_t *r, const char **out, size_t cap) {
  ld_hashmap_iter_t it = {0};
  void *v;
  size_t n = 0;
  while (ld_hashmap_next(r->topics, &it, NULL, NULL, &v)) {
    gs_topic_t *t = v;
    if (t->subscribed) {
      if (n < cap) {
        out[n] = t->name;
      }
      n++;
    }
  }
  return n;
}

uint64_t ld_gs_router_next_deadline(const ld_gs_router_t *r) {
  return r->next_hb;
}
