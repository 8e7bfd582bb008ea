#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "base/cursor.h"
#include "p2p/gossipsub/router_internal.h"

/* ---- helpers ------------------------------------------------------------------------------- */

static bool topic_ok(bool has, const ProtobufCBinaryData *b) {
  return has && b->len > 0 && b->len <= LD_GS_MAX_TOPIC_LEN && memchr(b->data, 0, b->len) == NULL;
}

static bool peer_topics_add(gs_peer_t *p, gs_topic_t *t) {
  for (uint32_t i = 0; i < p->n_topics; i++) {
    if (p->topics[i] == t) {
      return false;
    }
  }
  if (p->n_topics == p->cap_topics) {
    uint32_t ncap = p->cap_topics ? p->cap_topics * 2 : 4;
    gs_topic_t **v = realloc(p->topics, ncap * sizeof *v);
    if (v == NULL) {
      return false;
    }
    p->topics = v;
    p->cap_topics = ncap;
  }
  p->topics[p->n_topics++] = t;
  return true;
}

static bool peer_topics_del(gs_peer_t *p, const gs_topic_t *t) {
  for (uint32_t i = 0; i < p->n_topics; i++) {
    if (p->topics[i] == t) {
      p->topics[i] = p->topics[--p->n_topics];
      return true;
    }
  }
  return false;
}

static void malformed(ld_gs_router_t *r, gs_peer_t *p) {
  r->stats.rpcs_malformed++;
  p->malformed++;
  ld_gs_score_penalize(r->score, p->id, 1);
  if (p->malformed >= r->p.max_malformed_rpcs) {
    gs_request_disconnect(r, p, LD_GS_DISCONNECT_ABUSE);
  }
}

/* ---- subscriptions ------------------------------------------------------------------------- */

/* A new subscriber of a topic whose mesh is below D_lo joins the mesh at once (as rust-libp2p
 * does) instead of at the next heartbeat, so that what is published meanwhile reaches it. */
static void graft_if_mesh_short(ld_gs_router_t *r, gs_topic_t *t, gs_peer_t *p, uint64_t now) {
  if (!t->subscribed || t->mesh.n >= r->p.d_lo || !gs_may_graft(r, t, p, now)) {
    return;
  }
  gs_mesh_add(r, t, p, now);
  if (gs_peers_has(&t->mesh, p)) {
    gs_send_graft(r, t, p);
  }
}

static void peer_subscribe(ld_gs_router_t *r, gs_peer_t *p, const ProtobufCBinaryData *name,
                           uint64_t now) {
  if (p->n_topics >= LD_GS_MAX_TOPICS_PER_PEER) {
    r->stats.ctrl_dropped++;
    return;
  }
  gs_topic_t *t = gs_topic_get(r, name->data, name->len);
  if (t == NULL) {
    r->stats.ctrl_dropped++;
    return;
  }
  if (!peer_topics_add(p, t)) {
    return;
  }
  if (gs_peers_add(&t->peers, p) != 0) {
    peer_topics_del(p, t);
    return;
  }
  graft_if_mesh_short(r, t, p, now);
}

static void peer_unsubscribe(ld_gs_router_t *r, gs_peer_t *p, const ProtobufCBinaryData *name,
                             uint64_t now) {
  gs_topic_t *t = gs_topic_find(r, name->data, name->len);
  if (t == NULL || !peer_topics_del(p, t)) {
    return;
  }
  gs_peers_del(&t->peers, p);
  gs_peers_del(&t->fanout, p);
  gs_mesh_del(r, t, p, now);
}

static void handle_subs(ld_gs_router_t *r, gs_peer_t *p, const ld_gs_rpc_t *rpc, uint64_t now) {
  for (size_t i = 0; i < rpc->n_subscriptions; i++) {
    const Ld__Gossipsub__RPC__SubOpts *s = rpc->subscriptions[i];
    if (i >= r->p.max_subscriptions_per_rpc || !topic_ok(s->has_topicid, &s->topicid)) {
      r->stats.ctrl_dropped++;
      continue;
    }
    if (s->has_subscribe && s->subscribe) {
      peer_subscribe(r, p, &s->topicid, now);
    } else {
      peer_unsubscribe(r, p, &s->topicid, now);
    }
  }
}

/* ---- validation ---------------------------------------------------------------------------- */

void gs_pending_free(void *v) {
  gs_pending_t *pv = v;
  if (pv != NULL) {
    free(pv->topic);
    free(pv->data);
    free(pv);
  }
}

static bool delivered_by(const gs_pending_t *pv, ld_gs_peer_t peer) {
  for (uint32_t i = 0; i < pv->n_deliverers; i++) {
    if (pv->deliverers[i] == peer) {
      return true;
    }
  }
  return false;
}

/* Sends the message to `p` unless `p` delivered it or said IDONTWANT; returns whether `p` has it
 * now (sent, or announced it has it). */
static bool forward_to(ld_gs_router_t *r, gs_topic_t *t, gs_peer_t *p, const gs_pending_t *pv,
                       const uint8_t *data) {
  if (delivered_by(pv, p->id)) {
    return false;
  }
  if (!gs_has_idontwant(p) || ld_gs_idset_find_h(&p->dontwant, pv->id, pv->h) == NULL) {
    gs_queue_msg(r, p, t, t->name, data, pv->len);
  } else {
    r->stats.idontwant_skipped++;
  }
  return true;
}

/* Mesh peers, plus floodsub and direct subscribers; never back to a peer that sent it. Returns
 * how many peers were sent the message or said they have it. */
static size_t forward(ld_gs_router_t *r, gs_topic_t *t, const gs_pending_t *pv,
                      const uint8_t *data) {
  size_t n = 0;
  for (uint32_t i = 0; i < t->mesh.n; i++) {
    n += forward_to(r, t, t->mesh.v[i], pv, data);
  }
  for (uint32_t i = 0; i < t->peers.n; i++) {
    gs_peer_t *p = t->peers.v[i];
    if ((p->direct || !gs_is_gossip(p)) && !gs_peers_has(&t->mesh, p)) {
      n += forward_to(r, t, p, pv, data);
    }
  }
  return n;
}

/* Delivers and forwards an accepted message; returns how many peers it reached (those that
 * delivered it, and those it was forwarded to). */
static size_t accept_msg(ld_gs_router_t *r, gs_topic_t *t, gs_pending_t *pv) {
  ld_gs_score_first_delivery(r->score, pv->deliverers[0], pv->topic);
  for (uint32_t i = 1; i < pv->n_deliverers; i++) {
    ld_gs_score_mesh_delivery(r->score, pv->deliverers[i], pv->topic);
  }
  ld_gs_cmsg_t *m = NULL;
  ld_gs_mcache_put(&r->mcache, pv->id, pv->topic, pv->data, pv->len, &m);
  if (t == NULL || !t->subscribed) {
    return pv->n_deliverers;
  }
  t->stats.delivered++;
  if (r->cb.deliver != NULL) {
    r->cb.deliver(r->ud, pv->topic, pv->data, pv->len, pv->id, pv->deliverers[0]);
  }
  return pv->n_deliverers + forward(r, t, pv, m ? m->data : pv->data);
}

/* Records the verdict (and the peers reached) in the message's seen-cache entry. */
static void mark_seen(ld_gs_router_t *r, const gs_pending_t *pv, uint64_t status, size_t reach) {
  ld_gs_idset_entry_t *e = ld_gs_idset_find_h(&r->seen, pv->id, pv->h);
  if (e != NULL) {
    e->value = gs_seen_decided(status, reach, gs_topic_tag(pv->topic));
  }
}

void ld_gs_router_validated(ld_gs_router_t *r, uint64_t vid, ld_gs_verdict_t v, uint64_t now_ms) {
  (void)now_ms;
  gs_pending_t *pv = ld_hashmap_remove_u64(r->pending, vid);
  if (pv == NULL) {
    return;
  }
  r->pending_bytes -= pv->len;
  static const uint64_t status[] = {GS_SEEN_ACCEPTED, GS_SEEN_REJECTED, GS_SEEN_IGNORED};
  mark_seen(r, pv, status[v <= LD_GS_IGNORE ? v : LD_GS_IGNORE], 0);
  gs_topic_t *t = gs_topic_find(r, pv->topic, strlen(pv->topic));
  if (v == LD_GS_ACCEPT) {
    if (t != NULL) {
      t->stats.accepted++;
    }
    mark_seen(r, pv, GS_SEEN_ACCEPTED, accept_msg(r, t, pv));
  } else if (v == LD_GS_REJECT) {
    if (t != NULL) {
      t->stats.rejected++;
    }
    for (uint32_t i = 0; i < pv->n_deliverers; i++) {
      ld_gs_score_invalid(r->score, pv->deliverers[i], pv->topic);
    }
  } else if (t != NULL) {
    t->stats.ignored++;
  }
  gs_flush(r);
  gs_pending_free(pv);
}

typedef struct expired {
  uint64_t *vids;
  size_t n, cap;
  uint64_t cutoff;
} expired_t;

/* Messages whose verdict never came are ignored after the seen TTL. */
void gs_expire_pending(ld_gs_router_t *r, uint64_t now) {
  if (ld_hashmap_size(r->pending) == 0 || now < r->p.seen_ttl_ms) {
    return;
  }
  uint64_t cutoff = now - r->p.seen_ttl_ms;
  size_t n = 0, cap = ld_hashmap_size(r->pending);
  uint64_t *vids = malloc(cap * sizeof *vids);
  ld_hashmap_iter_t it = {0};
  void *v;
  while (vids != NULL && n < cap && ld_hashmap_next(r->pending, &it, NULL, NULL, &v)) {
    gs_pending_t *pv = v;
    if (pv->received <= cutoff) {
      vids[n++] = pv->vid;
    }
  }
  for (size_t i = 0; i < n; i++) {
    ld_gs_router_validated(r, vids[i], LD_GS_IGNORE, now);
  }
  free(vids);
}

/* ---- messages ------------------------------------------------------------------------------ */

static bool strict_no_sign(const Ld__Gossipsub__Message *m) {
  return !m->has_from && !m->has_seqno && !m->has_signature && !m->has_key;
}

/* A message already seen: P3 credit, P4 for a known-invalid one, or note the extra deliverer. */
static void duplicate(ld_gs_router_t *r, gs_peer_t *p, gs_topic_t *t, ld_gs_idset_entry_t *e,
                      uint64_t now) {
  t->stats.duplicates++;
  uint64_t status = e->value & 3;
  if (status == GS_SEEN_PENDING) {
    gs_pending_t *pv = ld_hashmap_get_u64(r->pending, e->value >> 2);
    if (pv != NULL && pv->n_deliverers < GS_MAX_DELIVERERS && !delivered_by(pv, p->id)) {
      pv->deliverers[pv->n_deliverers++] = p->id;
    }
  } else if (status == GS_SEEN_ACCEPTED) {
    uint64_t window = r->p.topic_score.mesh_message_deliveries_window_ms;
    uint64_t first_seen = e->expiry - r->p.seen_ttl_ms;
    if (now - first_seen <= window) {
      ld_gs_score_mesh_delivery(r->score, p->id, t->name);
    }
  } else if (status == GS_SEEN_REJECTED) {
    ld_gs_score_invalid(r->score, p->id, t->name);
  }
}

/* The held IDONTWANT to the mesh peers that have not sent us the message. */
static void send_idontwant(ld_gs_router_t *r, gs_topic_t *t, const gs_pending_t *pv) {
  bool any = false;
  for (uint32_t i = 0; i < t->mesh.n; i++) {
    gs_peer_t *p = t->mesh.v[i];
    if (!delivered_by(pv, p->id) && gs_has_idontwant(p) &&
        ld_gs_out_idontwant(gs_out(r, p), pv->id, 1) == 0) {
      r->stats.idontwant_out++;
      any = true;
    }
  }
  if (any) {
    gs_flush(r);
  }
}

void ld_gs_router_validation_deferred(ld_gs_router_t *r, uint64_t vid) {
  gs_pending_t *pv = ld_hashmap_get_u64(r->pending, vid);
  if (pv == NULL || !pv->idontwant_held) {
    return;
  }
  pv->idontwant_held = false;
  gs_topic_t *t = gs_topic_find(r, pv->topic, strlen(pv->topic));
  if (t != NULL) {
    send_idontwant(r, t, pv);
  }
}

static gs_pending_t *pending_new(ld_gs_router_t *r, gs_topic_t *t, gs_peer_t *p,
                                 const ProtobufCBinaryData *data, const uint8_t *id, uint64_t h,
                                 uint64_t now) {
  gs_pending_t *pv = calloc(1, sizeof *pv);
  if (pv == NULL) {
    return NULL;
  }
  pv->topic = strdup(t->name);
  pv->data = malloc(data->len ? data->len : 1);
  if (pv->topic == NULL || pv->data == NULL) {
    gs_pending_free(pv);
    return NULL;
  }
  if (data->len > 0) {
    memcpy(pv->data, data->data, data->len);
  }
  pv->len = data->len;
  memcpy(pv->id, id, LD_GS_MSG_ID_LEN);
  pv->h = h;
  pv->received = now;
  pv->deliverers[0] = p->id;
  pv->n_deliverers = 1;
  pv->vid = r->next_vid++;
  if (ld_hashmap_put_u64(r->pending, pv->vid, pv, NULL) != 0) {
    gs_pending_free(pv);
    return NULL;
  }
  r->pending_bytes += pv->len;
  return pv;
}

/* First sight of a message: mark seen (IDONTWANT held), then hand it to the validator. */
static void fresh(ld_gs_router_t *r, gs_peer_t *p, gs_topic_t *t, const ProtobufCBinaryData *data,
                  const uint8_t *id, uint64_t h, uint64_t now) {
  if (ld_hashmap_size(r->pending) >= r->p.max_pending_validations ||
      r->pending_bytes + data->len > r->p.max_pending_validation_bytes) {
    r->stats.validations_dropped++;
    return;
  }
  gs_pending_t *pv = pending_new(r, t, p, data, id, h, now);
  if (pv == NULL) {
    r->stats.validations_dropped++;
    return;
  }
  uint64_t value = (pv->vid << 2) | GS_SEEN_PENDING;
  if (ld_gs_idset_add_h(&r->seen, id, h, now + r->p.seen_ttl_ms, value) != 0) {
    ld_hashmap_remove_u64(r->pending, pv->vid);
    r->pending_bytes -= pv->len;
    gs_pending_free(pv);
    r->stats.validations_dropped++;
    return;
  }
  if (data->len >= r->p.idontwant_min_size && data->len >= r->p.idontwant_eager_size) {
    send_idontwant(r, t, pv);
  } else {
    pv->idontwant_held = data->len >= r->p.idontwant_min_size;
  }
  uint64_t vid = pv->vid;
  if (r->cb.validate == NULL) {
    ld_gs_router_validated(r, vid, LD_GS_ACCEPT, now);
    return;
  }
  r->cb.validate(r->ud, vid, p->id, pv->topic, pv->data, pv->len, pv->id);
}

/* The parts of a published message the router looks at, from the unpacked RPC or from a scan of
 * its bytes. `strict`: no from, seqno, signature or key field (StrictNoSign). */
typedef struct msg_view {
  bool has_topic;
  ProtobufCBinaryData topic, data;
  bool strict;
} msg_view_t;

static void handle_msg(ld_gs_router_t *r, gs_peer_t *p, const msg_view_t *m, uint64_t now) {
  if (!topic_ok(m->has_topic, &m->topic)) {
    r->stats.ctrl_dropped++;
    return;
  }
  gs_topic_t *t = gs_topic_find(r, m->topic.data, m->topic.len);
  if (t == NULL || !t->subscribed) {
    r->stats.msgs_unsubscribed++;
    return;
  }
  t->stats.msgs_in++;
  t->stats.bytes_in += m->data.len;
  if (!m->strict) {
    /* not marked seen: the ID covers only the data, so a clean copy must still get through */
    r->stats.msgs_invalid_sign++;
    t->stats.rejected++;
    ld_gs_score_invalid(r->score, p->id, t->name);
    return;
  }
  uint8_t id[LD_GS_MSG_ID_LEN];
  ld_gs_msg_id(m->data.data, m->data.len, id);
  uint64_t h = ld_gs_idset_hash(id);
  ld_gs_idset_remove_h(&r->promises, id, h);
  ld_gs_idset_entry_t *e = ld_gs_idset_find_h(&r->seen, id, h);
  if (e != NULL) {
    duplicate(r, p, t, e, now);
    return;
  }
  fresh(r, p, t, &m->data, id, h, now);
}

static msg_view_t view_of(const Ld__Gossipsub__Message *m) {
  msg_view_t v = {m->has_topic, m->topic, m->data, strict_no_sign(m)};
  return v;
}

/* The messages of one RPC (got(i) gives the i-th of n), beyond max_messages_per_rpc dropped. */
static void handle_msg_list(ld_gs_router_t *r, gs_peer_t *p, size_t n,
                            msg_view_t (*got)(const void *list, size_t i), const void *list,
                            uint64_t now) {
  if (n == 0) {
    return;
  }
  ld_gs_idset_expire(&r->seen, now, NULL, NULL);
  for (size_t i = 0; i < n; i++) {
    if (i >= r->p.max_messages_per_rpc) {
      r->stats.ctrl_dropped += n - i;
      break;
    }
    msg_view_t v = got(list, i);
    handle_msg(r, p, &v, now);
  }
}

static msg_view_t unpacked_at(const void *list, size_t i) {
  return view_of(((const ld_gs_rpc_t *)list)->publish[i]);
}

static void handle_msgs(ld_gs_router_t *r, gs_peer_t *p, const ld_gs_rpc_t *rpc, uint64_t now) {
  handle_msg_list(r, p, rpc->n_publish, unpacked_at, rpc, now);
}

/* ---- IHAVE / IWANT ------------------------------------------------------------------------- */

static bool want_add(ld_gs_router_t *r, const uint8_t *id) {
  if (r->n_want == r->cap_want) {
    size_t ncap = r->cap_want ? r->cap_want * 2 : 64;
    uint8_t *w = realloc(r->want, ncap * LD_GS_MSG_ID_LEN);
    if (w == NULL) {
      return false;
    }
    r->want = w;
    r->cap_want = ncap;
  }
  memcpy(r->want + r->n_want * LD_GS_MSG_ID_LEN, id, LD_GS_MSG_ID_LEN);
  r->n_want++;
  return true;
}

static int id_cmp(const void *a, const void *b) {
  return memcmp(a, b, LD_GS_MSG_ID_LEN);
}

/* Sorts the wanted ids and drops repeats (one IHAVE list may name an id several times). */
static void want_unique(ld_gs_router_t *r) {
  if (r->n_want < 2) {
    return;
  }
  qsort(r->want, r->n_want, LD_GS_MSG_ID_LEN, id_cmp);
  size_t k = 1;
  for (size_t i = 1; i < r->n_want; i++) {
    uint8_t *cur = r->want + i * LD_GS_MSG_ID_LEN;
    if (memcmp(cur, r->want + (k - 1) * LD_GS_MSG_ID_LEN, LD_GS_MSG_ID_LEN) != 0) {
      memmove(r->want + k * LD_GS_MSG_ID_LEN, cur, LD_GS_MSG_ID_LEN);
      k++;
    }
  }
  r->n_want = k;
}

/* Collects the unseen, unrequested ids of one IHAVE entry (at most `budget`). */
static void ihave_entry(ld_gs_router_t *r, const Ld__Gossipsub__ControlIHave *h, size_t budget) {
  size_t start = r->n_want, scanned = 0;
  for (size_t i = 0; i < h->n_messageids && r->n_want - start < budget; i++) {
    const ProtobufCBinaryData *id = &h->messageids[i];
    if (++scanned > r->p.max_ihave_len) {
      r->stats.ctrl_dropped += h->n_messageids - i;
      break;
    }
    if (id->len != LD_GS_MSG_ID_LEN) {
      continue;
    }
    uint64_t h = ld_gs_idset_hash(id->data);
    if (ld_gs_idset_find_h(&r->seen, id->data, h) ||
        ld_gs_idset_find_h(&r->promises, id->data, h)) {
      continue;
    }
    if (!want_add(r, id->data)) {
      break;
    }
  }
}

static void track_promise(ld_gs_router_t *r, gs_peer_t *p, uint64_t now) {
  size_t start = gs_rand_below(r, r->n_want);
  for (size_t k = 0; k < r->n_want; k++) {
    const uint8_t *id = r->want + ((start + k) % r->n_want) * LD_GS_MSG_ID_LEN;
    if (ld_gs_idset_add(&r->promises, id, now + r->p.iwant_followup_ms, p->id) == 0) {
      return;
    }
  }
}

static void handle_ihave(ld_gs_router_t *r, gs_peer_t *p, const Ld__Gossipsub__ControlMessage *c,
                         uint64_t now) {
  if (c->n_ihave == 0) {
    return;
  }
  if (gs_score(r, p, now) < r->p.gossip_threshold) {
    r->stats.ctrl_dropped += c->n_ihave;
    return;
  }
  ld_gs_idset_expire(&r->seen, now, NULL, NULL);
  r->n_want = 0;
  for (size_t i = 0; i < c->n_ihave; i++) {
    const Ld__Gossipsub__ControlIHave *h = c->ihave[i];
    bool over = i >= r->p.max_ihave_per_rpc || ++p->ihave_in > r->p.max_ihave_messages ||
                p->iwant_asked + r->n_want >= r->p.max_ihave_len;
    if (over) {
      r->stats.ctrl_dropped++;
      continue;
    }
    r->stats.ihave_in++;
    gs_topic_t *t = gs_topic_find(r, h->topicid.data, h->topicid.len);
    if (t == NULL || !t->subscribed) {
      continue;
    }
    ihave_entry(r, h, r->p.max_ihave_len - p->iwant_asked - r->n_want);
  }
  want_unique(r);
  if (r->n_want == 0) {
    return;
  }
  gs_shuffle_ids(r, r->want, r->n_want);
  if (ld_gs_out_iwant(gs_out(r, p), r->want, r->n_want) == 0) {
    p->iwant_asked += (uint32_t)r->n_want;
    r->stats.iwant_out += r->n_want;
    track_promise(r, p, now);
  }
}

static void serve_iwant(ld_gs_router_t *r, gs_peer_t *p, const ProtobufCBinaryData *id) {
  ld_gs_cmsg_t *m = ld_gs_mcache_get(&r->mcache, id->data, id->len);
  if (m == NULL || ld_gs_idset_find(&p->dontwant, id->data, id->len) != NULL) {
    return;
  }
  if (ld_gs_mcache_count_tx(m, p->id) > r->p.gossip_retransmission) {
    return;
  }
  gs_topic_t *t = gs_topic_find(r, m->topic, m->topic_len);
  gs_queue_msg(r, p, t, m->topic, m->data, m->len);
  p->iwant_served++;
  r->stats.iwant_served++;
}

static void handle_iwant(ld_gs_router_t *r, gs_peer_t *p, const Ld__Gossipsub__ControlMessage *c,
                         uint64_t now) {
  if (c->n_iwant == 0) {
    return;
  }
  bool low = gs_score(r, p, now) < r->p.gossip_threshold;
  size_t seen = 0;
  for (size_t i = 0; i < c->n_iwant; i++) {
    const Ld__Gossipsub__ControlIWant *w = c->iwant[i];
    for (size_t k = 0; k < w->n_messageids; k++, seen++) {
      if (low || seen >= r->p.max_iwant_ids_per_rpc ||
          p->iwant_served >= r->p.max_iwant_ids_per_heartbeat) {
        r->stats.ctrl_dropped++;
        continue;
      }
      r->stats.iwant_in++;
      serve_iwant(r, p, &w->messageids[k]);
    }
  }
}

/* ---- GRAFT / PRUNE / IDONTWANT ------------------------------------------------------------- */

static bool graft_prune_budget(ld_gs_router_t *r, gs_peer_t *p) {
  if (++p->graft_prune_in > r->p.max_graft_prune_per_heartbeat) {
    r->stats.ctrl_dropped++;
    return false;
  }
  return true;
}

/* A GRAFT during our backoff: P7, one more if it comes within graft_flood_ms of the PRUNE. */
static bool graft_in_backoff(ld_gs_router_t *r, gs_topic_t *t, gs_peer_t *p, uint64_t now) {
  const gs_backoff_t *b = gs_backoff_find(t, p->id);
  if (b == NULL || now >= b->expiry) {
    return false;
  }
  double penalty = now < b->pruned_at + r->p.graft_flood_ms ? 2 : 1;
  ld_gs_score_penalize(r->score, p->id, penalty);
  return true;
}

static void graft(ld_gs_router_t *r, gs_peer_t *p, const Ld__Gossipsub__ControlGraft *g,
                  uint64_t now) {
  gs_topic_t *t = gs_topic_find(r, g->topicid.data, g->topicid.len);
  if (t == NULL || !t->subscribed || gs_peers_has(&t->mesh, p)) {
    return;
  }
  bool refuse = p->direct || graft_in_backoff(r, t, p, now) || gs_score(r, p, now) < 0 ||
                (t->mesh.n >= r->p.d_hi && !p->outbound);
  if (refuse) {
    gs_send_prune(r, t, p, r->p.prune_backoff_ms, now);
    return;
  }
  gs_mesh_add(r, t, p, now);
}

static void prune(ld_gs_router_t *r, gs_peer_t *p, const Ld__Gossipsub__ControlPrune *pr,
                  uint64_t now) {
  gs_topic_t *t = gs_topic_find(r, pr->topicid.data, pr->topicid.len);
  if (t == NULL) {
    return;
  }
  gs_mesh_del(r, t, p, now);
  uint64_t ms = r->p.prune_backoff_ms;
  if (pr->has_backoff && pr->backoff > 0) {
    ms = pr->backoff > GS_MAX_BACKOFF_MS / 1000 ? GS_MAX_BACKOFF_MS : pr->backoff * 1000;
  }
  gs_backoff_set(t, p->id, now, ms);
}

static void handle_graft_prune(ld_gs_router_t *r, gs_peer_t *p,
                               const Ld__Gossipsub__ControlMessage *c, uint64_t now) {
  for (size_t i = 0; i < c->n_graft; i++) {
    if (i >= r->p.max_graft_per_rpc || !graft_prune_budget(r, p)) {
      r->stats.ctrl_dropped += c->n_graft - i;
      break;
    }
    r->stats.graft_in++;
    if (topic_ok(c->graft[i]->has_topicid, &c->graft[i]->topicid)) {
      graft(r, p, c->graft[i], now);
    }
  }
  for (size_t i = 0; i < c->n_prune; i++) {
    if (i >= r->p.max_prune_per_rpc || !graft_prune_budget(r, p)) {
      r->stats.ctrl_dropped += c->n_prune - i;
      break;
    }
    r->stats.prune_in++;
    if (topic_ok(c->prune[i]->has_topicid, &c->prune[i]->topicid)) {
      prune(r, p, c->prune[i], now);
    }
  }
}

static void handle_idontwant(ld_gs_router_t *r, gs_peer_t *p,
                             const Ld__Gossipsub__ControlMessage *c) {
  size_t seen = 0;
  uint64_t expiry = r->hb_count + r->p.idontwant_ttl_heartbeats;
  for (size_t i = 0; i < c->n_idontwant; i++) {
    const Ld__Gossipsub__ControlIDontWant *d = c->idontwant[i];
    for (size_t k = 0; k < d->n_messageids; k++, seen++) {
      if (seen >= r->p.max_idontwant_ids_per_rpc ||
          p->idontwant_in >= r->p.max_idontwant_ids_per_heartbeat) {
        r->stats.ctrl_dropped++;
        continue;
      }
      p->idontwant_in++;
      r->stats.idontwant_in++;
      if (d->messageids[k].len == LD_GS_MSG_ID_LEN) {
        ld_gs_idset_add(&p->dontwant, d->messageids[k].data, expiry, 0);
      }
    }
  }
}

static void handle_control(ld_gs_router_t *r, gs_peer_t *p, const ld_gs_rpc_t *rpc, uint64_t now) {
  const Ld__Gossipsub__ControlMessage *c = rpc->control;
  if (c == NULL) {
    return;
  }
  if (!gs_is_gossip(p)) {
    r->stats.ctrl_dropped++;
    return;
  }
  handle_idontwant(r, p, c);
  handle_graft_prune(r, p, c, now);
  handle_ihave(r, p, c, now);
  handle_iwant(r, p, c, now);
}

/* ---- RPCs of published messages only ----------------------------------------------------- */

/* Most RPCs a relay node receives carry nothing but a StrictNoSign message (usually a copy it has
 * already seen). Such an RPC is handled from a scan of its bytes, without unpacking it (protobuf-c
 * allocates for every field); anything else goes the full way. */
#define GS_SCAN_MAX_MSGS 4

/* A Message with only `data` (2) and `topic` (4), each at most once. */
static bool scan_message(const uint8_t *b, size_t len, msg_view_t *m) {
  ld_cursor_t c;
  ld_cursor_init(&c, b, len);
  bool has_data = false;
  memset(m, 0, sizeof *m);
  m->strict = true;
  while (ld_cursor_remaining(&c) > 0) {
    uint64_t key;
    const uint8_t *v;
    size_t n;
    if (ld_cursor_pbvarint(&c, &key) != 0 || (key & 7) != 2 ||
        ld_cursor_lp_bytes(&c, ld_cursor_remaining(&c), &v, &n) != 0)
      return false;
    bool *has = (key >> 3) == 2 ? &has_data : (key >> 3) == 4 ? &m->has_topic : NULL;
    if (has == NULL || *has)
      return false;
    *has = true;
    ProtobufCBinaryData *dst = (key >> 3) == 2 ? &m->data : &m->topic;
    dst->data = (uint8_t *)v;
    dst->len = n;
  }
  return true;
}

/* The messages of an RPC made of `publish` entries only; 0 when it holds anything else. */
static size_t scan_publish_only(const uint8_t *rpc, size_t len, msg_view_t *out) {
  ld_cursor_t c;
  ld_cursor_init(&c, rpc, len);
  size_t n = 0;
  while (ld_cursor_remaining(&c) > 0) {
    uint64_t key;
    const uint8_t *v;
    size_t vlen;
    if (n == GS_SCAN_MAX_MSGS || ld_cursor_pbvarint(&c, &key) != 0 || key != ((2 << 3) | 2) ||
        ld_cursor_lp_bytes(&c, ld_cursor_remaining(&c), &v, &vlen) != 0 ||
        !scan_message(v, vlen, &out[n]))
      return 0;
    n++;
  }
  return n;
}

static msg_view_t scanned_at(const void *list, size_t i) {
  return ((const msg_view_t *)list)[i];
}

static bool handle_publish_only(ld_gs_router_t *r, gs_peer_t *p, const uint8_t *rpc, size_t len,
                                uint64_t now) {
  msg_view_t msgs[GS_SCAN_MAX_MSGS];
  size_t n = scan_publish_only(rpc, len, msgs);
  if (n == 0) {
    return false;
  }
  handle_msg_list(r, p, n, scanned_at, msgs, now);
  gs_flush(r);
  return true;
}

/* ---- entry point --------------------------------------------------------------------------- */

int ld_gs_router_handle_rpc(ld_gs_router_t *r, ld_gs_peer_t peer, const uint8_t *rpc, size_t len,
                            uint64_t now_ms) {
  gs_peer_t *p = gs_peer(r, peer);
  if (p == NULL) {
    return LD_ERR_NOT_FOUND;
  }
  r->stats.rpcs_in++;
  r->stats.rpc_bytes_in += len;
  if (len > r->p.max_rpc_size) {
    r->stats.rpcs_too_large++;
    return LD_ERR_TOO_LARGE;
  }
  if (p->disconnect_requested || gs_score(r, p, now_ms) < r->p.graylist_threshold) {
    r->stats.rpcs_graylisted++;
    return 0;
  }
  if (handle_publish_only(r, p, rpc, len, now_ms)) {
    return 0;
  }
  ld_gs_rpc_t *msg = NULL;
  int rc = ld_gs_rpc_decode(rpc, len, &msg);
  if (rc != 0) {
    malformed(r, p);
    return LD_ERR_BAD_PROTOBUF;
  }
  handle_subs(r, p, msg, now_ms);
  handle_msgs(r, p, msg, now_ms);
  handle_control(r, p, msg, now_ms);
  ld_gs_rpc_free(msg);
  gs_flush(r);
  return 0;
}
