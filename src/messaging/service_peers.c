#include "messaging/service_peers.h"

#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "waku/core/codecs.h"

/* A remembered peer: failed until until_ms, and/or counting its transient outcomes. */
typedef struct failure {
  ld_peerid_t id;
  uint64_t until_ms;   /* skipped before this time (0: never failed) */
  uint64_t counted_ms; /* when the last transient outcome was counted */
  uint32_t transient;  /* consecutive transient outcomes */
  bool used;
} failure_t;

struct ld_service_peers {
  ld_node_t *node;
  uint64_t fail_expiry_ms;
  failure_t failed[LD_SERVICE_PEERS_MAX_FAILED];
};

struct ld_service_dial {
  ld_service_dial_fn cb;
  void *user_data;
  bool cancelled;
};

ld_service_peers_t *ld_service_peers_new(ld_node_t *node, uint32_t fail_expiry_ms) {
  ld_service_peers_t *sp = calloc(1, sizeof *sp);
  if (sp == NULL)
    return NULL;
  sp->node = node;
  sp->fail_expiry_ms =
      fail_expiry_ms > 0 ? fail_expiry_ms : LD_SERVICE_PEERS_DEFAULT_FAIL_EXPIRY_MS;
  return sp;
}

void ld_service_peers_free(ld_service_peers_t *sp) {
  free(sp);
}

ld_node_service_t ld_service_peers_service_of(const char *protocol) {
  if (protocol == NULL)
    return LD_NODE_SERVICES;
  if (strcmp(protocol, LD_WAKU_STORE_CODEC) == 0)
    return LD_NODE_SERVICE_STORE;
  if (strcmp(protocol, LD_WAKU_FILTER_SUBSCRIBE_CODEC) == 0)
    return LD_NODE_SERVICE_FILTER;
  if (strcmp(protocol, LD_WAKU_LIGHTPUSH_CODEC) == 0 ||
      strcmp(protocol, LD_WAKU_LEGACY_LIGHTPUSH_CODEC) == 0)
    return LD_NODE_SERVICE_LIGHTPUSH;
  return LD_NODE_SERVICES;
}

/* ---- failures ------------------------------------------------------------------------------- */

static failure_t *find_failure(const ld_service_peers_t *sp, const ld_peerid_t *peer) {
  for (size_t i = 0; i < LD_SERVICE_PEERS_MAX_FAILED; i++)
    if (sp->failed[i].used && ld_peerid_equal(&sp->failed[i].id, peer))
      return (failure_t *)&sp->failed[i];
  return NULL;
}

/* A free slot, or the entry that expires first. */
static failure_t *failure_slot(ld_service_peers_t *sp) {
  failure_t *best = &sp->failed[0];
  for (size_t i = 0; i < LD_SERVICE_PEERS_MAX_FAILED; i++) {
    failure_t *f = &sp->failed[i];
    if (!f->used)
      return f;
    if (f->until_ms < best->until_ms)
      best = f;
  }
  return best;
}

void ld_service_peers_mark_failed(ld_service_peers_t *sp, const ld_peerid_t *peer,
                                  uint64_t now_ms) {
  if (sp == NULL || peer == NULL)
    return;
  failure_t *f = find_failure(sp, peer);
  if (f == NULL) {
    f = failure_slot(sp);
    *f = (failure_t){.id = *peer, .used = true};
  }
  f->until_ms = now_ms + sp->fail_expiry_ms;
}

void ld_service_peers_clear_failed(ld_service_peers_t *sp, const ld_peerid_t *peer) {
  failure_t *f = sp != NULL && peer != NULL ? find_failure(sp, peer) : NULL;
  if (f != NULL)
    f->used = false;
}

bool ld_service_peers_failed(const ld_service_peers_t *sp, const ld_peerid_t *peer,
                             uint64_t now_ms) {
  const failure_t *f = sp != NULL && peer != NULL ? find_failure(sp, peer) : NULL;
  return f != NULL && now_ms < f->until_ms;
}

/* Expired failures end; a peer that is neither failed nor counting is forgotten. */
static void drop_expired(ld_service_peers_t *sp, uint64_t now_ms) {
  for (size_t i = 0; i < LD_SERVICE_PEERS_MAX_FAILED; i++) {
    failure_t *f = &sp->failed[i];
    if (!f->used || now_ms < f->until_ms)
      continue;
    f->until_ms = 0;
    if (f->transient == 0)
      f->used = false;
  }
}

/* ---- outcomes ------------------------------------------------------------------------------- */

const char *ld_service_outcome_name(ld_service_outcome_t o) {
  switch (o) {
  case LD_SERVICE_SERVED:
    return "served";
  case LD_SERVICE_REFUSED:
    return "refused";
  case LD_SERVICE_TRANSIENT:
    return "transient";
  case LD_SERVICE_BROKEN:
    return "broken";
  }
  return "unknown";
}

ld_service_outcome_t ld_service_outcome_of(int err, uint32_t status) {
  if (err == LD_ERR_TIMEOUT || err == LD_ERR_RESET)
    return LD_SERVICE_TRANSIENT;
  if (err != 0)
    return LD_SERVICE_BROKEN;
  if (status >= 200 && status < 300)
    return LD_SERVICE_SERVED;
  if (status == 300 || status == 429 || (status >= 500 && status < 600))
    return LD_SERVICE_TRANSIENT;
  if (status >= 400 && status < 500)
    return LD_SERVICE_REFUSED;
  return LD_SERVICE_BROKEN;
}

uint64_t ld_service_peers_backoff_ms(uint32_t n) {
  if (n == 0)
    return 0;
  if (n <= LD_SERVICE_PEERS_RETRY_FAST)
    return LD_SERVICE_PEERS_RETRY_ROUND_MS;
  uint64_t delay = LD_SERVICE_PEERS_RETRY_BASE_MS;
  for (uint32_t i = LD_SERVICE_PEERS_RETRY_FAST; i < n && delay < LD_SERVICE_PEERS_RETRY_MAX_MS;
       i++)
    delay *= 2;
  return delay < LD_SERVICE_PEERS_RETRY_MAX_MS ? delay : LD_SERVICE_PEERS_RETRY_MAX_MS;
}

static void count_transient(ld_service_peers_t *sp, const ld_peerid_t *peer, uint64_t started_ms,
                            uint64_t now_ms) {
  failure_t *f = find_failure(sp, peer);
  if (f != NULL && f->transient > 0 && started_ms < f->counted_ms)
    return; /* in flight beside the exchange counted last: the same round */
  if (f == NULL) {
    f = failure_slot(sp);
    *f = (failure_t){.id = *peer, .used = true};
  }
  f->transient++;
  f->counted_ms = now_ms;
  uint64_t until = now_ms + ld_service_peers_backoff_ms(f->transient);
  if (until > f->until_ms)
    f->until_ms = until; /* never shortens a failure */
}

void ld_service_peers_report(ld_service_peers_t *sp, const ld_peerid_t *peer,
                             ld_service_outcome_t outcome, uint64_t started_ms, uint64_t now_ms) {
  if (sp == NULL || peer == NULL)
    return;
  switch (outcome) {
  case LD_SERVICE_SERVED:
    ld_service_peers_clear_failed(sp, peer);
    break;
  case LD_SERVICE_REFUSED:
    break;
  case LD_SERVICE_TRANSIENT:
    count_transient(sp, peer, started_ms, now_ms);
    break;
  case LD_SERVICE_BROKEN:
    ld_service_peers_mark_failed(sp, peer, now_ms);
    break;
  }
}

uint32_t ld_service_peers_transient_count(const ld_service_peers_t *sp, const ld_peerid_t *peer) {
  const failure_t *f = sp != NULL && peer != NULL ? find_failure(sp, peer) : NULL;
  return f != NULL ? f->transient : 0;
}

/* ---- selection ------------------------------------------------------------------------------ */

typedef struct selection {
  ld_service_peers_t *sp;
  const ld_service_peers_view_t *view;
  const ld_peerid_t *exclude;
  size_t n_exclude;
  uint64_t now_ms;
  ld_service_peer_t *out;
  size_t n;
  size_t max;
} selection_t;

static bool listed(const ld_peerid_t *list, size_t n, const ld_peerid_t *id) {
  for (size_t i = 0; list != NULL && i < n; i++)
    if (ld_peerid_equal(&list[i], id))
      return true;
  return false;
}

static bool already_out(const selection_t *s, const ld_peerid_t *id) {
  for (size_t i = 0; i < s->n; i++)
    if (ld_peerid_equal(&s->out[i].id, id))
      return true;
  return false;
}

static bool skipped(const selection_t *s, const ld_peerid_t *id) {
  const ld_service_peers_view_t *v = s->view;
  return (v->self != NULL && ld_peerid_equal(v->self, id)) ||
         listed(s->exclude, s->n_exclude, id) || already_out(s, id) ||
         ld_service_peers_failed(s->sp, id, s->now_ms);
}

static int connected_index(const ld_service_peers_view_t *v, const ld_peerid_t *id) {
  for (size_t i = 0; v->connected != NULL && i < v->n_connected; i++)
    if (ld_peerid_equal(&v->connected[i], id))
      return (int)i;
  return -1;
}

/* `base` (without /p2p) followed by /p2p/<id>; false when it does not fit. */
static bool with_p2p(ld_multiaddr_t *out, const ld_multiaddr_t *base, const ld_peerid_t *id) {
  *out = *base;
  ld_multiaddr_peerid(out, NULL, true);
  return out->len > 0 && ld_multiaddr_push(out, LD_MA_P2P, id->bytes, id->len) == 0;
}

/* An address from the peer store, else from the connection. */
static void address_of(const selection_t *s, const ld_peerid_t *id, int conn, ld_multiaddr_t *out) {
  const ld_service_peers_view_t *v = s->view;
  const ld_peerstore_peer_t *p = v->peerstore != NULL ? ld_peerstore_get(v->peerstore, id) : NULL;
  for (size_t i = 0; p != NULL && i < p->n_addrs; i++)
    if (with_p2p(out, &p->addrs[i], id))
      return;
  if (conn >= 0 && v->connected_addrs != NULL && with_p2p(out, &v->connected_addrs[conn], id))
    return;
  out->len = 0;
}

static void add(selection_t *s, const ld_peerid_t *id, const ld_multiaddr_t *configured_addr) {
  if (s->n >= s->max || skipped(s, id))
    return;
  ld_service_peer_t *p = &s->out[s->n++];
  int conn = connected_index(s->view, id);
  p->id = *id;
  p->connected = conn >= 0;
  p->configured = configured_addr != NULL;
  if (configured_addr != NULL)
    p->addr = *configured_addr;
  else
    address_of(s, id, conn, &p->addr);
}

static void add_configured(selection_t *s) {
  const ld_multiaddr_t *cfg = s->view->configured;
  if (cfg == NULL || cfg->len == 0)
    return;
  ld_multiaddr_t copy = *cfg;
  ld_peerid_t id;
  if (ld_multiaddr_peerid(&copy, &id, false))
    add(s, &id, cfg);
}

static void add_connected(selection_t *s, const char *protocol) {
  const ld_service_peers_view_t *v = s->view;
  for (size_t i = 0; v->connected != NULL && i < v->n_connected && s->n < s->max; i++)
    if (v->peerstore != NULL && ld_peerstore_supports(v->peerstore, &v->connected[i], protocol))
      add(s, &v->connected[i], NULL);
}

static void add_known(selection_t *s, const char *protocol) {
  const ld_peerstore_t *ps = s->view->peerstore;
  if (ps == NULL || s->n >= s->max)
    return;
  ld_peerid_t *ids = malloc(LD_SERVICE_PEERS_MAX_KNOWN * sizeof *ids);
  if (ids == NULL)
    return;
  size_t n = ld_peerstore_peers(ps, protocol, ids, LD_SERVICE_PEERS_MAX_KNOWN);
  if (n > LD_SERVICE_PEERS_MAX_KNOWN)
    n = LD_SERVICE_PEERS_MAX_KNOWN;
  for (size_t i = 0; i < n && s->n < s->max; i++) {
    const ld_peerstore_peer_t *p = ld_peerstore_get(ps, &ids[i]);
    if (p != NULL && p->n_addrs > 0)
      add(s, &ids[i], NULL);
  }
  free(ids);
}

size_t ld_service_peers_select(ld_service_peers_t *sp, const ld_service_peers_view_t *view,
                               const char *protocol, const ld_peerid_t *exclude, size_t n_exclude,
                               uint64_t now_ms, ld_service_peer_t *out, size_t max) {
  if (sp == NULL || view == NULL || protocol == NULL || out == NULL || max == 0)
    return 0;
  drop_expired(sp, now_ms);
  selection_t s = {sp, view, exclude, n_exclude, now_ms, out, 0, max};
  add_configured(&s);
  add_connected(&s, protocol);
  add_known(&s, protocol);
  return s.n;
}

/* ---- the node's view ------------------------------------------------------------------------ */

typedef struct node_view {
  ld_service_peers_view_t v;
  ld_peerid_t ids[LD_SERVICE_PEERS_MAX_CONNECTED];
  ld_multiaddr_t addrs[LD_SERVICE_PEERS_MAX_CONNECTED];
} node_view_t;

static size_t live_conns(ld_node_t *node, ld_conn_t **conns) {
  ld_switch_t *sw = node != NULL ? ld_node_switch(node) : NULL;
  if (sw == NULL)
    return 0;
  size_t n = ld_switch_connections(sw, conns, LD_SERVICE_PEERS_MAX_CONNECTED);
  return n < LD_SERVICE_PEERS_MAX_CONNECTED ? n : LD_SERVICE_PEERS_MAX_CONNECTED;
}

static void fill_view(ld_node_t *node, const char *protocol, node_view_t *nv) {
  ld_conn_t *conns[LD_SERVICE_PEERS_MAX_CONNECTED];
  size_t n = live_conns(node, conns);
  const ld_node_config_t *cfg = ld_node_config(node);
  ld_node_service_t svc = ld_service_peers_service_of(protocol);
  nv->v = (ld_service_peers_view_t){
      ld_node_peer_id(node), NULL, ld_node_peerstore(node), nv->ids, nv->addrs, 0};
  if (svc != LD_NODE_SERVICES && cfg->has_service_node[svc])
    nv->v.configured = &cfg->service_node[svc];
  for (size_t i = 0; i < n; i++) {
    const ld_peerid_t *id = ld_conn_remote_peer(conns[i]);
    const ld_multiaddr_t *ra = ld_conn_remote_addr(conns[i]);
    if (id == NULL || id->len == 0)
      continue;
    nv->ids[nv->v.n_connected] = *id;
    nv->addrs[nv->v.n_connected].len = 0;
    if (ld_conn_is_outbound(conns[i]) && ra != NULL)
      nv->addrs[nv->v.n_connected] = *ra;
    nv->v.n_connected++;
  }
}

/* A heap view of the node for `protocol` (free it); NULL without a running node or memory. */
static node_view_t *new_view(const ld_service_peers_t *sp, const char *protocol) {
  if (sp == NULL || sp->node == NULL || ld_node_switch(sp->node) == NULL || protocol == NULL)
    return NULL;
  node_view_t *nv = malloc(sizeof *nv);
  if (nv != NULL)
    fill_view(sp->node, protocol, nv);
  return nv;
}

size_t ld_service_peers_pick(ld_service_peers_t *sp, const char *protocol,
                             const ld_peerid_t *exclude, size_t n_exclude, uint64_t now_ms,
                             ld_service_peer_t *out, size_t max) {
  node_view_t *nv = new_view(sp, protocol);
  if (nv == NULL)
    return 0;
  size_t n = ld_service_peers_select(sp, &nv->v, protocol, exclude, n_exclude, now_ms, out, max);
  free(nv);
  return n;
}

size_t ld_service_peers_count_connected(const ld_service_peers_t *sp, const char *protocol) {
  node_view_t *nv = new_view(sp, protocol);
  if (nv == NULL)
    return 0;
  ld_peerid_t cfg_id = {0};
  ld_multiaddr_t copy;
  if (nv->v.configured != NULL) {
    copy = *nv->v.configured;
    ld_multiaddr_peerid(&copy, &cfg_id, false);
  }
  size_t count = 0;
  for (size_t i = 0; i < nv->v.n_connected; i++) {
    const ld_peerid_t *id = &nv->ids[i];
    bool serves =
        (nv->v.peerstore != NULL && ld_peerstore_supports(nv->v.peerstore, id, protocol)) ||
        (cfg_id.len > 0 && ld_peerid_equal(&cfg_id, id));
    if (serves && !listed(nv->ids, i, id))
      count++;
  }
  free(nv);
  return count;
}

/* ---- connections ---------------------------------------------------------------------------- */

static void on_dialed(ld_conn_t *c, int err, void *user_data) {
  ld_service_dial_t *d = user_data;
  if (!d->cancelled)
    d->cb(c, err, d->user_data);
  free(d);
}

/* The address of a live connection to `id`, for the switch to hand that connection over. */
static bool existing_addr(ld_switch_t *sw, const ld_peerid_t *id, ld_multiaddr_t *out) {
  ld_conn_t *conns[LD_SERVICE_PEERS_MAX_CONNECTED];
  size_t n = ld_switch_connections(sw, conns, LD_SERVICE_PEERS_MAX_CONNECTED);
  if (n > LD_SERVICE_PEERS_MAX_CONNECTED)
    n = LD_SERVICE_PEERS_MAX_CONNECTED;
  for (size_t i = 0; i < n; i++) {
    const ld_peerid_t *p = ld_conn_remote_peer(conns[i]);
    const ld_multiaddr_t *ra = ld_conn_remote_addr(conns[i]);
    if (p != NULL && ra != NULL && ld_peerid_equal(p, id) && with_p2p(out, ra, id))
      return true;
  }
  return false;
}

int ld_service_peers_connect(ld_switch_t *sw, const ld_service_peer_t *peer, ld_service_dial_fn cb,
                             void *user_data, ld_service_dial_t **out) {
  if (sw == NULL || peer == NULL || cb == NULL)
    return LD_ERR_INVALID_ARG;
  ld_multiaddr_t addr;
  if (!existing_addr(sw, &peer->id, &addr)) {
    if (peer->addr.len == 0)
      return LD_ERR_NOT_FOUND;
    addr = peer->addr;
  }
  ld_service_dial_t *d = calloc(1, sizeof *d);
  if (d == NULL)
    return LD_ERR_NOMEM;
  *d = (ld_service_dial_t){cb, user_data, false};
  int rc = ld_switch_dial(sw, &addr, on_dialed, d);
  if (rc != 0) {
    free(d);
    return rc;
  }
  if (out != NULL)
    *out = d;
  return 0;
}

void ld_service_peers_connect_cancel(ld_service_dial_t *d) {
  if (d != NULL)
    d->cancelled = true;
}
