/* Store-sync service: lifecycle, item sets and their fill, timers, peers and bans, figures (see
 * service.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/clock.h"
#include "base/error.h"
#include "base/log.h"
#include "crypto/crypto.h"
#include "waku/sync/service_internal.h"

const double ld_store_sync_roundtrip_bounds[LD_STORE_SYNC_ROUNDTRIP_BUCKETS] = {1, 2, 3, 5, 8, 13};
const double ld_store_sync_difference_bounds[LD_STORE_SYNC_DIFFERENCE_BUCKETS] = {
    0, 10, 50, 100, 500, 1000, 5000};

#define SEC_NS 1000000000ll
/* The tick that runs the deadlines, the periodic session and the prune: at most this far apart. */
#define TICK_MAX_MS 1000u
#define TICK_MIN_MS 20u

void ld_store_sync_config_default(ld_store_sync_config_t *cfg) {
  memset(cfg, 0, sizeof *cfg);
  cfg->interval_ms = LD_SYNC_DEFAULT_INTERVAL_NS / 1000000;
  cfg->range_ns = LD_SYNC_DEFAULT_RANGE_NS;
  cfg->jitter_ns = LD_SYNC_DEFAULT_JITTER_NS;
  cfg->js_rules = true;
  cfg->max_sessions = LD_STORE_SYNC_DEFAULT_MAX_SESSIONS;
  cfg->max_transfers = LD_STORE_SYNC_DEFAULT_MAX_TRANSFERS;
  cfg->max_payload = LD_STORE_SYNC_DEFAULT_MAX_PAYLOAD;
  cfg->read_timeout_ms = LD_STORE_SYNC_DEFAULT_READ_TIMEOUT_MS;
  cfg->session_timeout_ms = LD_STORE_SYNC_DEFAULT_SESSION_TIMEOUT_MS;
  cfg->solicit_ttl_ms = LD_STORE_SYNC_DEFAULT_SOLICIT_TTL_MS;
  cfg->ban_ms = LD_STORE_SYNC_DEFAULT_BAN_MS;
}

static void apply_defaults(ld_store_sync_config_t *c) {
  ld_store_sync_config_t d;
  ld_store_sync_config_default(&d);
  if (c->max_sessions == 0)
    c->max_sessions = d.max_sessions;
  if (c->max_transfers == 0)
    c->max_transfers = d.max_transfers;
  if (c->max_payload == 0)
    c->max_payload = d.max_payload;
  if (c->read_timeout_ms == 0)
    c->read_timeout_ms = d.read_timeout_ms;
  if (c->session_timeout_ms == 0)
    c->session_timeout_ms = d.session_timeout_ms;
  if (c->solicit_ttl_ms == 0)
    c->solicit_ttl_ms = d.solicit_ttl_ms;
  if (c->ban_ms == 0)
    c->ban_ms = d.ban_ms;
}

/* ---- clocks ---------------------------------------------------------------------------------- */

int64_t ld_store_sync__now_ns(const ld_store_sync_t *s) {
  return s->cfg.now_ns != NULL ? s->cfg.now_ns(s->cfg.clock_data) : (int64_t)ld_wall_ns();
}

uint64_t ld_store_sync__now_ms(const ld_store_sync_t *s) {
  (void)s;
  return ld_now_ms();
}

int64_t ld_store_sync__window_start(const ld_store_sync_t *s) {
  return ld_store_sync__now_ns(s) - s->cfg.jitter_ns - s->cfg.range_ns;
}

/* ---- pending backend requests ---------------------------------------------------------------- */

void ld_store_sync__pending_add(ld_store_sync_t *s, pending_t *p) {
  p->svc = s;
  p->prev = NULL;
  p->next = s->pendings;
  if (s->pendings != NULL)
    s->pendings->prev = p;
  s->pendings = p;
}

void ld_store_sync__pending_remove(pending_t *p) {
  ld_store_sync_t *s = p->svc;
  if (s == NULL)
    return;
  if (p->prev != NULL)
    p->prev->next = p->next;
  else
    s->pendings = p->next;
  if (p->next != NULL)
    p->next->prev = p->prev;
  p->prev = p->next = NULL;
}

/* ---- peers ------------------------------------------------------------------------------------
 */

sync_peer_t *ld_store_sync__peer(ld_store_sync_t *s, const ld_peerid_t *id, bool create) {
  for (sync_peer_t *p = s->peers; p != NULL; p = p->next)
    if (ld_peerid_equal(&p->id, id))
      return p;
  if (!create || s->n_peers >= LD_STORE_SYNC_MAX_PEERS)
    return NULL;
  sync_peer_t *p = calloc(1, sizeof *p);
  if (p == NULL)
    return NULL;
  p->svc = s;
  p->id = *id;
  ld_buf_init(&p->push.tx);
  p->next = s->peers;
  s->peers = p;
  s->n_peers++;
  return p;
}

bool ld_store_sync__soliciting(const sync_peer_t *p, uint64_t now_ms) {
  return p->sessions_in + p->sessions_out > 0 || now_ms < p->solicit_until_ms;
}

static void peer_free(sync_peer_t *p) {
  ld_sync_tree_free(p->need);
  ld_sync_spans_clear(&p->offered);
  ld_sync_ids_clear(&p->push.queue);
  ld_buf_clear(&p->push.tx);
  free(p);
}

static void forget_solicitation(sync_peer_t *p) {
  ld_sync_tree_free(p->need);
  p->need = NULL;
  ld_sync_spans_clear(&p->offered);
}

void ld_store_sync__peer_maybe_release(sync_peer_t *p) {
  uint64_t now = ld_store_sync__now_ms(p->svc);
  if (!ld_store_sync__soliciting(p, now))
    forget_solicitation(p);
  if (p->sessions_in + p->sessions_out + p->transfers_in > 0 || p->push.stream != NULL ||
      p->push.opening || p->push.fetching || p->push.pos < p->push.queue.n || p->need != NULL ||
      p->offered.n > 0)
    return;
  ld_store_sync_t *s = p->svc;
  for (sync_peer_t **pp = &s->peers; *pp != NULL; pp = &(*pp)->next) {
    if (*pp == p) {
      *pp = p->next;
      s->n_peers--;
      peer_free(p);
      return;
    }
  }
}

ld_conn_t *ld_store_sync__conn_to(ld_store_sync_t *s, const ld_peerid_t *id) {
  ld_conn_t *conns[256];
  size_t n = ld_switch_connections(s->sw, conns, 256);
  for (size_t i = 0; i < n && i < 256; i++)
    if (ld_peerid_equal(ld_conn_remote_peer(conns[i]), id))
      return conns[i];
  return NULL;
}

/* ---- bans ------------------------------------------------------------------------------------ */

bool ld_store_sync_banned(const ld_store_sync_t *s, const ld_peerid_t *peer) {
  uint64_t now = ld_store_sync__now_ms(s);
  for (size_t i = 0; i < s->n_bans; i++)
    if (s->bans[i].until_ms > now && ld_peerid_equal(&s->bans[i].id, peer))
      return true;
  return false;
}

static void ban(ld_store_sync_t *s, const ld_peerid_t *id) {
  uint64_t until = ld_store_sync__now_ms(s) + s->cfg.ban_ms;
  size_t slot = s->n_bans, oldest = 0;
  for (size_t i = 0; i < s->n_bans; i++) {
    if (ld_peerid_equal(&s->bans[i].id, id)) {
      slot = i;
      break;
    }
    if (s->bans[i].until_ms < s->bans[oldest].until_ms)
      oldest = i;
  }
  if (slot == s->n_bans && s->n_bans == LD_STORE_SYNC_MAX_BANS)
    slot = oldest;
  else if (slot == s->n_bans)
    s->n_bans++;
  s->bans[slot].id = *id;
  s->bans[slot].until_ms = until;
}

void ld_store_sync__punish(ld_store_sync_t *s, const ld_peerid_t *id, ld_sync_ingress_verdict_t v) {
  char text[LD_PEERID_TEXT_MAX];
  ld_peerid_to_text(id, text, sizeof text);
  LD_WARN(LOG_TOPIC, "peer %s transferred an invalid message (%s): disconnected, banned for %u s",
          text, ld_sync_ingress_verdict_name(v), s->cfg.ban_ms / 1000);
  ban(s, id);
  s->stats.peers_banned++;
  sync_peer_t *p = ld_store_sync__peer(s, id, false);
  if (p != NULL) {
    ld_store_sync__recon_reset(s, p);
    ld_store_sync__xfer_reset(s, p);
    ld_store_sync__push_abort(p);
    forget_solicitation(p);
  }
  ld_conn_t *conns[256];
  size_t n = ld_switch_connections(s->sw, conns, 256);
  for (size_t i = 0; i < n && i < 256; i++)
    if (ld_peerid_equal(ld_conn_remote_peer(conns[i]), id))
      ld_conn_close(conns[i], LD_ERR_PROTOCOL, false);
}

/* ---- item sets ------------------------------------------------------------------------------- */

void ld_store_sync_add(ld_store_sync_t *s, const char *pubsub_topic, int64_t timestamp,
                       const uint8_t hash[LD_WAKU_HASH_LEN]) {
  if (s == NULL)
    return;
  ld_sync_id_t id;
  id.time = timestamp;
  memcpy(id.hash, hash, LD_WAKU_HASH_LEN);
  int rc = ld_sync_shards_insert(s->shards, pubsub_topic, &id);
  if (rc == LD_ERR_NOMEM)
    LD_WARN(LOG_TOPIC, "item of a message on %s not kept: %s", pubsub_topic, ld_errname(rc));
}

int ld_store_sync_add_content(ld_store_sync_t *s, const char *content_topic, size_t len,
                              int64_t timestamp, const uint8_t hash[LD_WAKU_HASH_LEN]) {
  if (!s->cfg.by_content_topic)
    return LD_ERR_STATE;
  int i = ld_sync_shards_ensure(s->shards, content_topic, len);
  if (i < 0)
    return i;
  ld_sync_id_t id;
  id.time = timestamp;
  memcpy(id.hash, hash, LD_WAKU_HASH_LEN);
  return ld_sync_shards_insert(s->shards, ld_sync_shards_topic(s->shards, (size_t)i), &id);
}

int ld_store_sync_watch(ld_store_sync_t *s, const char *content_topic, size_t len) {
  if (!s->cfg.by_content_topic)
    return LD_ERR_STATE;
  int i = ld_sync_shards_ensure(s->shards, content_topic, len);
  return i < 0 ? i : 0;
}

bool ld_store_sync_holds(const ld_store_sync_t *s, int64_t timestamp,
                         const uint8_t hash[LD_WAKU_HASH_LEN]) {
  ld_sync_id_t id;
  id.time = timestamp;
  memcpy(id.hash, hash, LD_WAKU_HASH_LEN);
  return ld_sync_shards_contains(s->shards, &id);
}

uint64_t ld_store_sync_prune(ld_store_sync_t *s) {
  uint64_t n = ld_sync_shards_prune(s->shards, ld_store_sync__window_start(s));
  LD_DEBUG(LOG_TOPIC, "pruned %llu items, %llu kept", (unsigned long long)n,
           (unsigned long long)ld_sync_shards_size(s->shards));
  return n;
}

static void prune(ld_store_sync_t *s) {
  (void)ld_store_sync_prune(s);
}

/* ---- the fill -------------------------------------------------------------------------------- */

typedef struct fill {
  pending_t base;
  ld_archive_listing_t listing;
} fill_t;

static void fill_detach(pending_t *p) {
  (void)p; /* freed when the backend answers */
}

static void fill_done(ld_store_sync_t *s, int err, const char *why) {
  s->ready = true;
  if (err != 0)
    LD_WARN(LOG_TOPIC, "will not sync messages stored before now: archive listing failed: %s (%s)",
            why, ld_errname(err));
  else
    LD_INFO(LOG_TOPIC, "item sets filled from the archive: %llu items",
            (unsigned long long)s->stats.filled);
}

static int fill_next(ld_store_sync_t *s, fill_t *f);

static void on_listed(int err, const char *why, const ld_archive_key_t *keys, size_t n, bool more,
                      void *user_data) {
  fill_t *f = user_data;
  ld_store_sync_t *s = f->base.svc;
  ld_store_sync__pending_remove(&f->base);
  if (s == NULL || s->stopped) {
    free(f);
    return;
  }
  for (size_t i = 0; i < n; i++) {
    ld_sync_id_t id;
    id.time = keys[i].timestamp;
    memcpy(id.hash, keys[i].hash, LD_WAKU_HASH_LEN);
    s->stats.filled += ld_sync_shards_insert(s->shards, keys[i].pubsub_topic, &id) == 0;
  }
  if (err == 0 && more && n > 0) {
    f->listing.has_after = true;
    f->listing.after_ts = keys[n - 1].timestamp;
    memcpy(f->listing.after_hash, keys[n - 1].hash, LD_WAKU_HASH_LEN);
    err = fill_next(s, f);
    if (err == 0)
      return;
    why = ld_strerror(err);
  }
  free(f);
  fill_done(s, err, why);
}

static int fill_next(ld_store_sync_t *s, fill_t *f) {
  ld_store_sync__pending_add(s, &f->base);
  int rc = s->backend.list(s->backend.ctx, &f->listing, on_listed, f);
  if (rc != 0)
    ld_store_sync__pending_remove(&f->base);
  return rc;
}

static void start_fill(ld_store_sync_t *s) {
  fill_t *f = calloc(1, sizeof *f);
  int rc = LD_ERR_NOMEM;
  if (f != NULL) {
    f->base.on_detach = fill_detach;
    f->listing.time_start = ld_store_sync__window_start(s);
    f->listing.time_end = ld_store_sync__now_ns(s) + LD_SYNC_MAX_FUTURE_NS;
    f->listing.limit = LD_ARCHIVE_DEFAULT_LIST_PAGE;
    rc = fill_next(s, f);
    if (rc == 0)
      return;
    free(f);
  }
  fill_done(s, rc, ld_strerror(rc));
}

/* ---- timers ---------------------------------------------------------------------------------- */

static void periodic_session(ld_store_sync_t *s) {
  int rc = ld_store_sync_start_session(s, NULL, NULL, NULL);
  if (rc != 0)
    LD_DEBUG(LOG_TOPIC, "no periodic session: %s", ld_errname(rc));
}

static void on_tick(uv_timer_t *t) {
  ld_store_sync_t *s = t->data;
  uint64_t now = ld_store_sync__now_ms(s);
  ld_store_sync__recon_tick(s, now);
  ld_store_sync__xfer_tick(s, now);
  for (sync_peer_t *p = s->peers, *next; p != NULL; p = next) {
    next = p->next;
    ld_store_sync__peer_maybe_release(p);
  }
  if (s->cfg.interval_ms == 0 || !s->ready)
    return;
  if (now >= s->next_prune_ms) {
    s->next_prune_ms = now + s->cfg.interval_ms;
    prune(s);
  }
  if (now >= s->next_sync_ms) {
    s->next_sync_ms = now + s->cfg.interval_ms;
    periodic_session(s);
  }
}

static void on_tick_closed(uv_handle_t *h) {
  free(h);
}

static int start_tick(ld_store_sync_t *s) {
  uint64_t every = s->cfg.read_timeout_ms / 4;
  every = every < TICK_MIN_MS ? TICK_MIN_MS : every > TICK_MAX_MS ? TICK_MAX_MS : every;
  if (s->cfg.interval_ms > 0 && s->cfg.interval_ms / 4 < every)
    every = s->cfg.interval_ms / 4 < TICK_MIN_MS ? TICK_MIN_MS : s->cfg.interval_ms / 4;
  s->tick = calloc(1, sizeof *s->tick);
  if (s->tick == NULL)
    return LD_ERR_NOMEM;
  uv_timer_init(s->loop, s->tick);
  s->tick->data = s;
  uv_unref((uv_handle_t *)s->tick);
  uint64_t now = ld_store_sync__now_ms(s);
  s->next_sync_ms = now + s->cfg.interval_ms;
  s->next_prune_ms = now + s->cfg.interval_ms / 2; /* nwaku: prune half an interval apart */
  uv_timer_start(s->tick, on_tick, every, every);
  return 0;
}

/* ---- lifecycle ------------------------------------------------------------------------------- */

static int copy_config(ld_store_sync_t *s, const ld_store_sync_config_t *cfg) {
  s->cfg = *cfg;
  apply_defaults(&s->cfg);
  s->cfg.pubsub_topics = NULL;
  s->cfg.protected_shards = NULL;
  if (cfg->n_protected_shards > 0) {
    s->protected_shards = malloc(cfg->n_protected_shards * sizeof *s->protected_shards);
    if (s->protected_shards == NULL)
      return LD_ERR_NOMEM;
    memcpy(s->protected_shards, cfg->protected_shards,
           cfg->n_protected_shards * sizeof *s->protected_shards);
    s->cfg.protected_shards = s->protected_shards;
  }
  ld_sync_limits_default(&s->limits);
  s->limits.max_payload = s->cfg.max_payload;
  s->limits.max_items = s->cfg.max_payload / LD_SYNC_MIN_ITEM_WIRE_LEN;
  return 0;
}

static int make_sets(ld_store_sync_t *s, const ld_store_sync_config_t *cfg) {
  int rc = ld_sync_shards_new(cfg->pubsub_topics, cfg->n_pubsub_topics,
                              cfg->by_content_topic ? &s->pubsub : &s->shards);
  if (rc == 0 && cfg->by_content_topic)
    rc = ld_sync_shards_new_empty(&s->shards);
  if (rc != 0)
    return rc;
  const ld_sync_shards_t *kept = ld_store_sync__kept_pubsub(s);
  s->n_topics = ld_sync_shards_count(kept);
  s->topics = calloc(s->n_topics, sizeof *s->topics);
  if (s->topics == NULL)
    return LD_ERR_NOMEM;
  for (size_t i = 0; i < s->n_topics; i++) {
    s->topics[i].data = (char *)ld_sync_shards_topic(kept, i);
    s->topics[i].len = strlen(s->topics[i].data);
  }
  return 0;
}

static void free_parts(ld_store_sync_t *s) {
  ld_sync_shards_free(s->shards);
  ld_sync_shards_free(s->pubsub);
  free(s->topics);
  free(s->protected_shards);
  free(s);
}

static bool registered(ld_switch_t *sw, const char *protocol) {
  const char *ids[256];
  size_t n = ld_switch_protocols(sw, ids, 256);
  for (size_t i = 0; i < n && i < 256; i++)
    if (strcmp(ids[i], protocol) == 0)
      return true;
  return false;
}

/* Registers both protocols. After the first, the switch holds `s`: when the second fails (out of
 * memory), `s` stays allocated, stopped, answering every stream with a reset. */
static int register_protocols(ld_store_sync_t *s) {
  if (registered(s->sw, LD_SYNC_RECONCILIATION_PROTOCOL) ||
      registered(s->sw, LD_SYNC_TRANSFER_PROTOCOL))
    return LD_ERR_EXISTS;
  int rc = ld_switch_handle(s->sw, LD_SYNC_RECONCILIATION_PROTOCOL, ld_store_sync__recon_accept, s);
  if (rc != 0)
    return rc;
  rc = ld_switch_handle(s->sw, LD_SYNC_TRANSFER_PROTOCOL, ld_store_sync__xfer_accept, s);
  if (rc != 0)
    s->stopped = true;
  return rc;
}

ld_store_sync_t *ld_store_sync_new(ld_switch_t *sw, ld_peerstore_t *ps,
                                   const ld_store_sync_backend_t *backend,
                                   const ld_store_sync_config_t *cfg, int *err) {
  *err = LD_ERR_INVALID_ARG;
  if (sw == NULL || ps == NULL || backend == NULL || backend->query == NULL ||
      backend->insert == NULL || backend->list == NULL || cfg == NULL ||
      cfg->n_pubsub_topics == 0 || cfg->range_ns <= 0 || cfg->jitter_ns < 0)
    return NULL;
  ld_store_sync_t *s = calloc(1, sizeof *s);
  *err = LD_ERR_NOMEM;
  if (s == NULL)
    return NULL;
  s->sw = sw;
  s->loop = ld_switch_loop(sw);
  s->ps = ps;
  s->backend = *backend;
  *err = copy_config(s, cfg);
  if (*err == 0)
    *err = make_sets(s, cfg);
  if (*err == 0)
    *err = start_tick(s);
  if (*err == 0)
    *err = register_protocols(s);
  if (*err != 0) {
    if (s->tick != NULL) {
      uv_close((uv_handle_t *)s->tick, on_tick_closed);
      s->tick = NULL;
    }
    if (!s->stopped) /* no handler holds it */
      free_parts(s);
    return NULL;
  }
  start_fill(s);
  return s;
}

void ld_store_sync_stop(ld_store_sync_t *s) {
  if (s == NULL || s->stopped)
    return;
  s->stopped = true;
  if (s->tick != NULL) {
    uv_timer_stop(s->tick);
    uv_close((uv_handle_t *)s->tick, on_tick_closed);
    s->tick = NULL;
  }
  ld_store_sync__recon_reset(s, NULL);
  ld_store_sync__xfer_reset(s, NULL);
  for (sync_peer_t *p = s->peers; p != NULL; p = p->next)
    ld_store_sync__push_abort(p);
}

void ld_store_sync_free(ld_store_sync_t *s) {
  if (s == NULL)
    return;
  ld_store_sync_stop(s);
  for (pending_t *p = s->pendings, *next; p != NULL; p = next) {
    next = p->next;
    p->svc = NULL;
    p->prev = p->next = NULL;
    p->on_detach(p);
  }
  while (s->peers != NULL) {
    sync_peer_t *p = s->peers;
    s->peers = p->next;
    peer_free(p);
  }
  free_parts(s);
}

/* ---- sessions on demand ---------------------------------------------------------------------- */

static bool eligible(ld_store_sync_t *s, const ld_peerid_t *id) {
  if (!ld_peerstore_supports(s->ps, id, LD_SYNC_RECONCILIATION_PROTOCOL) ||
      ld_store_sync_banned(s, id))
    return false;
  sync_peer_t *p = ld_store_sync__peer(s, id, false);
  return p == NULL || p->sessions_out == 0;
}

/* A random connected, eligible peer's connection, or NULL. */
static ld_conn_t *random_peer(ld_store_sync_t *s) {
  ld_conn_t *conns[256], *ok[256];
  size_t n = ld_switch_connections(s->sw, conns, 256), k = 0;
  for (size_t i = 0; i < n && i < 256; i++)
    if (eligible(s, ld_conn_remote_peer(conns[i])))
      ok[k++] = conns[i];
  return k > 0 ? ok[ld_random_uniform((uint32_t)k)] : NULL;
}

int ld_store_sync_start_session(ld_store_sync_t *s, const ld_peerid_t *peer,
                                ld_store_sync_done_fn done, void *user_data) {
  if (!s->ready || s->stopped)
    return LD_ERR_STATE;
  if (peer != NULL && ld_store_sync_banned(s, peer))
    return LD_ERR_GRAYLISTED;
  if (s->cfg.by_content_topic && ld_sync_shards_count(s->shards) == 0)
    return LD_ERR_NOT_FOUND; /* no content topic to reconcile */
  ld_conn_t *c = peer != NULL ? ld_store_sync__conn_to(s, peer) : random_peer(s);
  if (c == NULL)
    return LD_ERR_NOT_FOUND;
  if (s->n_recons >= s->cfg.max_sessions)
    return LD_ERR_LIMIT;
  sync_peer_t *p = ld_store_sync__peer(s, ld_conn_remote_peer(c), true);
  if (p == NULL)
    return LD_ERR_LIMIT;
  if (p->sessions_out > 0)
    return LD_ERR_LIMIT;
  int rc = ld_store_sync__recon_start(s, p, c, done, user_data);
  if (rc != 0)
    ld_store_sync__peer_maybe_release(p);
  return rc;
}

/* ---- figures --------------------------------------------------------------------------------- */

void ld_store_sync_get_stats(const ld_store_sync_t *s, ld_store_sync_stats_t *out) {
  *out = s->stats;
  out->ready = s->ready;
  out->cached = ld_sync_shards_size(s->shards);
}
