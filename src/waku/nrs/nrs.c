/* The Network Reliability Service (see nrs.h): sets and cache fed by what the node sees, rounds
 * of reconciliation sessions, and confirmation by peer presence. */
#include <stdlib.h>
#include <string.h>

#include "base/clock.h"
#include "base/error.h"
#include "base/log.h"
#include "crypto/crypto.h"
#include "waku/nrs/nrs_internal.h"
#include "waku/sync/codec.h"

#define TICK_MS 50u
/* Peers looked at per round at most (connections listed). */
#define MAX_CANDIDATES 256

void ld_nrs_config_default(ld_nrs_config_t *cfg) {
  memset(cfg, 0, sizeof *cfg);
  cfg->window_ns = LD_NRS_DEFAULT_WINDOW_NS;
  cfg->confirm_peers = LD_NRS_DEFAULT_CONFIRM_PEERS;
  cfg->interval_ms = LD_NRS_DEFAULT_INTERVAL_MS;
  cfg->peers_per_round = LD_NRS_DEFAULT_PEERS_PER_ROUND;
  cfg->kick_ms = LD_NRS_DEFAULT_KICK_MS;
  cfg->fast_ms = LD_NRS_DEFAULT_FAST_MS;
  cfg->fast_for_ms = LD_NRS_DEFAULT_FAST_FOR_MS;
}

static void apply_defaults(ld_nrs_config_t *c) {
  ld_nrs_config_t d;
  ld_nrs_config_default(&d);
  if (c->window_ns <= 0)
    c->window_ns = d.window_ns;
  if (c->confirm_peers == 0)
    c->confirm_peers = d.confirm_peers;
  if (c->interval_ms == 0)
    c->interval_ms = d.interval_ms;
  if (c->peers_per_round == 0)
    c->peers_per_round = d.peers_per_round;
  if (c->kick_ms == 0)
    c->kick_ms = d.kick_ms;
  if (c->fast_ms == 0)
    c->fast_ms = d.fast_ms;
  if (c->fast_for_ms == 0)
    c->fast_for_ms = d.fast_for_ms;
}

uint64_t ld_nrs__now_ms(void) {
  return ld_now_ms();
}

int64_t ld_nrs__now_ns(const ld_nrs_t *n) {
  return n->cfg.now_ns != NULL ? n->cfg.now_ns(n->cfg.clock_data) : (int64_t)ld_wall_ns();
}

static int64_t window_start(const ld_nrs_t *n) {
  return ld_nrs__now_ns(n) - n->cfg.window_ns;
}

/* ---- rounds -----------------------------------------------------------------------------------
 */

/* One session a round started. */
typedef struct round_session {
  ld_nrs_t *n;
  ld_peerid_t peer;
  uint64_t started_ms;
} round_session_t;

static void on_session_done(const ld_store_sync_result_t *r, void *user_data) {
  round_session_t *rs = user_data;
  ld_nrs_t *n = rs->n;
  if (r->err == 0)
    n->stats.reconciliations_ok++;
  if (n->on_session != NULL)
    n->on_session(n->session_user, &rs->peer, rs->started_ms, r->err, r->disjoint);
  free(rs);
}

static bool candidate(ld_nrs_t *n, const ld_peerid_t *id) {
  return ld_peerstore_supports(n->ps, id, LD_SYNC_RECONCILIATION_PROTOCOL) &&
         !ld_store_sync_banned(n->sync, id) &&
         (n->eligible == NULL || n->eligible(n->eligible_user, id));
}

/* Distinct eligible peers among the connections, in random order. */
static size_t candidates(ld_nrs_t *n, const ld_peerid_t **out) {
  ld_conn_t *conns[MAX_CANDIDATES];
  size_t nc = ld_switch_connections(n->sw, conns, MAX_CANDIDATES), k = 0;
  if (nc > MAX_CANDIDATES)
    nc = MAX_CANDIDATES;
  for (size_t i = 0; i < nc; i++) {
    const ld_peerid_t *id = ld_conn_remote_peer(conns[i]);
    bool seen = false;
    for (size_t j = 0; j < k && !seen; j++)
      seen = ld_peerid_equal(out[j], id);
    if (!seen && candidate(n, id))
      out[k++] = id;
  }
  for (size_t i = k; i > 1; i--) { /* Fisher–Yates */
    size_t j = ld_random_uniform((uint32_t)i);
    const ld_peerid_t *t = out[i - 1];
    out[i - 1] = out[j];
    out[j] = t;
  }
  return k;
}

static void round_now(ld_nrs_t *n) {
  n->stats.rounds++;
  const ld_peerid_t *peers[MAX_CANDIDATES];
  size_t k = candidates(n, peers), started = 0;
  for (size_t i = 0; i < k && started < n->cfg.peers_per_round; i++) {
    round_session_t *rs = malloc(sizeof *rs);
    if (rs == NULL)
      return;
    rs->n = n;
    rs->peer = *peers[i];
    rs->started_ms = ld_nrs__now_ms();
    int rc = ld_store_sync_start_session(n->sync, peers[i], on_session_done, rs);
    if (rc == 0) {
      started++;
      n->stats.reconciliations++;
      continue;
    }
    free(rs);
    if (rc != LD_ERR_LIMIT)
      LD_DEBUG(LOG_TOPIC, "no session with a peer: %s", ld_errname(rc));
  }
}

static bool waiting_for_confirmation(const ld_nrs_t *n, uint64_t now) {
  return ld_nrs_presence_unconfirmed(n->presence) > 0 &&
         now - n->last_track_ms < n->cfg.fast_for_ms;
}

static void prune(ld_nrs_t *n) {
  int64_t before = window_start(n);
  ld_store_sync_prune(n->sync);
  ld_nrs_cache_prune(n->cache, before);
  ld_nrs_presence_expire(n->presence, before);
}

static void on_tick(uv_timer_t *t) {
  ld_nrs_t *n = t->data;
  uint64_t now = ld_nrs__now_ms();
  if (now >= n->next_prune_ms) {
    n->next_prune_ms = now + n->cfg.interval_ms;
    prune(n);
  }
  bool due = now >= n->next_round_ms || (n->kick_at_ms != 0 && now >= n->kick_at_ms);
  if (!due)
    return;
  n->kick_at_ms = 0;
  n->next_round_ms = now + n->cfg.interval_ms;
  round_now(n);
  if (waiting_for_confirmation(n, now))
    n->kick_at_ms = now + n->cfg.fast_ms;
}

void ld_nrs_kick(ld_nrs_t *n) {
  uint64_t at = ld_nrs__now_ms() + n->cfg.kick_ms;
  if (n->kick_at_ms == 0 || at < n->kick_at_ms)
    n->kick_at_ms = at;
}

/* ---- presence ---------------------------------------------------------------------------------
 */

static void on_presence(void *user, const ld_peerid_t *peer, uint64_t started_ms, int64_t win_start,
                        const ld_sync_id_t *lacked, size_t n_lacked) {
  ld_nrs_t *n = user;
  size_t confirmed =
      ld_nrs_presence_observe(n->presence, peer, started_ms, win_start, lacked, n_lacked);
  n->stats.confirmations += confirmed;
  if (confirmed > 0 && n->on_confirmed != NULL)
    n->on_confirmed(n->confirmed_user);
}

/* ---- lifecycle --------------------------------------------------------------------------------
 */

static int make_sync(ld_nrs_t *n, const ld_nrs_config_t *cfg) {
  ld_store_sync_config_t sc;
  ld_store_sync_config_default(&sc);
  sc.pubsub_topics = cfg->pubsub_topics;
  sc.n_pubsub_topics = cfg->n_pubsub_topics;
  sc.interval_ms = 0; /* rounds are ours */
  sc.range_ns = n->cfg.window_ns;
  sc.jitter_ns = 0;
  sc.max_msg_size = n->cfg.max_msg_size;
  sc.cluster_id = n->cfg.cluster_id;
  sc.protected_shards = cfg->protected_shards;
  sc.n_protected_shards = n->cfg.n_protected_shards;
  sc.rln = n->cfg.rln;
  sc.rln_ctx = n->cfg.rln_ctx;
  sc.max_sessions = 4 * LD_NRS_DEFAULT_PEERS_PER_ROUND + 4;
  sc.read_timeout_ms = n->cfg.read_timeout_ms;
  sc.session_timeout_ms = n->cfg.session_timeout_ms;
  sc.ban_ms = n->cfg.ban_ms;
  sc.now_ns = n->cfg.now_ns;
  sc.clock_data = n->cfg.clock_data;
  sc.by_content_topic = true;
  sc.on_presence = on_presence;
  sc.presence_user = n;
  ld_store_sync_backend_t backend = ld_nrs__backend_template;
  backend.ctx = n;
  int err = 0;
  n->sync = ld_store_sync_new(n->sw, n->ps, &backend, &sc, &err);
  return n->sync != NULL ? 0 : err;
}

static int start_tick(ld_nrs_t *n) {
  n->tick = calloc(1, sizeof *n->tick);
  if (n->tick == NULL)
    return LD_ERR_NOMEM;
  uv_timer_init(ld_switch_loop(n->sw), n->tick);
  n->tick->data = n;
  uv_unref((uv_handle_t *)n->tick);
  uint64_t now = ld_nrs__now_ms();
  n->next_round_ms = now + n->cfg.interval_ms;
  n->next_prune_ms = now + n->cfg.interval_ms / 2;
  uv_timer_start(n->tick, on_tick, TICK_MS, TICK_MS);
  return 0;
}

static void on_closed(uv_handle_t *h) {
  free(h);
}

ld_nrs_t *ld_nrs_new(ld_switch_t *sw, ld_peerstore_t *ps, const ld_nrs_config_t *cfg, int *err) {
  *err = LD_ERR_INVALID_ARG;
  if (sw == NULL || ps == NULL || cfg == NULL || cfg->deliver == NULL ||
      cfg->n_pubsub_topics == 0 || cfg->confirm_peers > LD_NRS_MAX_CONFIRM_PEERS)
    return NULL;
  ld_nrs_t *n = calloc(1, sizeof *n);
  *err = LD_ERR_NOMEM;
  if (n == NULL)
    return NULL;
  n->sw = sw;
  n->ps = ps;
  n->cfg = *cfg;
  apply_defaults(&n->cfg);
  n->cfg.pubsub_topics = NULL; /* copied by store-sync (make_sync) */
  n->cfg.protected_shards = NULL;
  n->cache = ld_nrs_cache_new(cfg->max_cache_bytes);
  n->presence = ld_nrs_presence_new(n->cfg.confirm_peers, 0, LD_NRS_DEFAULT_SKEW_NS);
  if (n->cache != NULL && n->presence != NULL)
    *err = ld_nrs__jobs_init(n);
  if (*err == 0)
    *err = make_sync(n, cfg);
  if (*err == 0)
    *err = start_tick(n);
  if (*err != 0) {
    ld_nrs_stop(n);
    ld_nrs_free(n);
    return NULL;
  }
  return n;
}

void ld_nrs_stop(ld_nrs_t *n) {
  if (n == NULL || n->stopped)
    return;
  n->stopped = true;
  if (n->tick != NULL) {
    uv_close((uv_handle_t *)n->tick, on_closed);
    n->tick = NULL;
  }
  if (n->sync != NULL)
    ld_store_sync_stop(n->sync);
}

void ld_nrs_free(ld_nrs_t *n) {
  if (n == NULL)
    return;
  ld_nrs_stop(n);
  ld_store_sync_free(n->sync);
  ld_nrs__jobs_close(n);
  ld_nrs_cache_free(n->cache);
  ld_nrs_presence_free(n->presence);
  free(n);
}

void ld_nrs_set_eligible(ld_nrs_t *n, ld_nrs_eligible_fn fn, void *user) {
  n->eligible = fn;
  n->eligible_user = user;
}

void ld_nrs_set_session_listener(ld_nrs_t *n, ld_nrs_session_fn fn, void *user) {
  n->on_session = fn;
  n->session_user = user;
}

void ld_nrs_set_confirm_listener(ld_nrs_t *n, ld_nrs_confirmed_fn fn, void *user) {
  n->on_confirmed = fn;
  n->confirmed_user = user;
}

/* ---- items ------------------------------------------------------------------------------------
 */

static int keep(ld_nrs_t *n, const char *pubsub_topic, const ld_waku_message_t *msg,
                const uint8_t hash[LD_WAKU_HASH_LEN]) {
  if (msg->ephemeral || msg->content_topic_len == 0 || msg->timestamp < window_start(n))
    return LD_ERR_INVALID_ARG;
  int rc = ld_store_sync_add_content(n->sync, msg->content_topic, msg->content_topic_len,
                                     msg->timestamp, hash);
  if (rc != 0 && rc != LD_ERR_EXISTS)
    return rc;
  rc = ld_nrs_cache_put(n->cache, pubsub_topic, msg, hash);
  return rc == LD_ERR_EXISTS ? 0 : rc;
}

void ld_nrs_observe(ld_nrs_t *n, const char *pubsub_topic, const ld_waku_message_t *msg,
                    const uint8_t hash[LD_WAKU_HASH_LEN]) {
  int rc = keep(n, pubsub_topic, msg, hash);
  if (rc != 0 && rc != LD_ERR_INVALID_ARG)
    LD_DEBUG(LOG_TOPIC, "a message on %s not kept: %s", pubsub_topic, ld_errname(rc));
}

int ld_nrs_track(ld_nrs_t *n, const char *pubsub_topic, const ld_waku_message_t *msg,
                 const uint8_t hash[LD_WAKU_HASH_LEN]) {
  int rc = keep(n, pubsub_topic, msg, hash);
  if (rc != 0)
    return rc;
  ld_sync_id_t id;
  id.time = msg->timestamp;
  memcpy(id.hash, hash, LD_WAKU_HASH_LEN);
  uint64_t now = ld_nrs__now_ms();
  rc = ld_nrs_presence_track(n->presence, &id, now);
  if (rc != 0 && rc != LD_ERR_EXISTS)
    return rc;
  n->last_track_ms = now;
  ld_nrs_kick(n);
  return 0;
}

int ld_nrs_watch(ld_nrs_t *n, const char *content_topic) {
  return ld_store_sync_watch(n->sync, content_topic, strlen(content_topic));
}

size_t ld_nrs_presence(const ld_nrs_t *n, const uint8_t hash[LD_WAKU_HASH_LEN]) {
  return ld_nrs_presence_count(n->presence, hash);
}

bool ld_nrs_confirmed(const ld_nrs_t *n, const uint8_t hash[LD_WAKU_HASH_LEN]) {
  return ld_nrs_presence_confirmed(n->presence, hash);
}

size_t ld_nrs_confirm_peers(const ld_nrs_t *n) {
  return n->cfg.confirm_peers;
}

/* ---- figures ----------------------------------------------------------------------------------
 */

void ld_nrs_get_stats(const ld_nrs_t *n, ld_nrs_stats_t *out) {
  *out = n->stats;
  ld_store_sync_stats_t s;
  ld_store_sync_get_stats(n->sync, &s);
  out->tracked = ld_nrs_presence_size(n->presence);
  out->unconfirmed = ld_nrs_presence_unconfirmed(n->presence);
  out->items = s.cached;
  out->cached = ld_nrs_cache_size(n->cache);
  out->recon_bytes_in = s.recon_bytes_in;
  out->recon_bytes_out = s.recon_bytes_out;
  out->transfer_bytes_in = s.transfer_bytes_in;
  out->transfer_bytes_out = s.transfer_bytes_out;
  out->rejected = 0;
  for (size_t i = LD_SYNC_INGRESS_DUPLICATE + 1; i < LD_SYNC_INGRESS_VERDICTS; i++)
    out->rejected += s.rejected[i];
  out->peers_banned = s.peers_banned;
}

ld_store_sync_t *ld_nrs_sync(ld_nrs_t *n) {
  return n->sync;
}
