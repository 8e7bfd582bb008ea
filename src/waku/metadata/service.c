#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <uv.h>

#include "base/clock.h"
#include "base/error.h"
#include "base/hashmap.h"
#include "base/log.h"
#include "p2p/reqresp.h"
#include "waku/metadata/metadata.h"

#define LOG_TOPIC "waku metadata"

/* Bytes read from one stream: a frame of at most LD_METADATA_MAX_MSG plus its prefix. */
#define MAX_READ (LD_METADATA_MAX_MSG + 8)

typedef struct conn_state conn_state_t;

/* One inbound stream being served on a connection. */
typedef struct serve_slot {
  conn_state_t *st;
  ld_reqresp_call_t *call; /* NULL: free */
} serve_slot_t;

struct conn_state {
  ld_metadata_t *md;
  ld_conn_t *conn;
  bool closing;               /* rejected: being closed by us */
  bool close_pending;         /* rejected, closed once the peer's request is answered */
  int close_reason;           /* the rejection's reason, for the close */
  bool served;                /* we answered a request of the peer on this connection */
  uv_timer_t *grace;          /* closes a rejected connection whose peer does not ask */
  ld_reqresp_call_t *request; /* our exchange, until its result */
  serve_slot_t serves[LD_METADATA_MAX_INBOUND_STREAMS];
};

typedef struct peer_entry {
  ld_metadata_info_t info;
  uint64_t updated; /* service sequence number of the last update */
  bool from_response;
} peer_entry_t;

struct ld_metadata {
  ld_switch_t *sw;
  uint32_t cluster_id;
  bool require;
  uint32_t timeout_ms;
  uint32_t reject_grace_ms;
  size_t max_peers;
  ld_metadata_info_t configured;
  ld_metadata_shard_provider_fn provider;
  void *provider_ud;
  ld_metadata_events_t ev;
  void *ev_ud;
  ld_peerstore_t *ps;
  ld_hashmap_t *peers; /* peer ID bytes → peer_entry_t */
  uint64_t seq;
  ld_metadata_stats_t stats;
};

static int g_slot = -1;
static pthread_once_t g_slot_once = PTHREAD_ONCE_INIT;

static void register_slot(void) {
  g_slot = ld_conn_slot_register();
}

static conn_state_t *state_of(const ld_conn_t *c) {
  return g_slot >= 0 ? ld_conn_get_slot(c, g_slot) : NULL;
}

static const char *peer_text(const ld_conn_t *c, char *buf, size_t cap) {
  if (c == NULL || ld_peerid_to_text(ld_conn_remote_peer(c), buf, cap) < 0)
    snprintf(buf, cap, "?");
  return buf;
}

/* ---- peer table ----------------------------------------------------------------------------- */

static void evict_oldest(ld_metadata_t *md) {
  ld_hashmap_iter_t it = {0};
  const void *key, *oldest_key = NULL;
  size_t klen, oldest_len = 0;
  void *value;
  uint64_t oldest = UINT64_MAX;
  while (ld_hashmap_next(md->peers, &it, &key, &klen, &value)) {
    const peer_entry_t *e = value;
    if (e->updated < oldest) {
      oldest = e->updated;
      oldest_key = key;
      oldest_len = klen;
    }
  }
  if (oldest_key != NULL)
    free(ld_hashmap_remove(md->peers, oldest_key, oldest_len));
}

/* Records what `peer` said. A request never overwrites what a response told us. */
static int store_peer(ld_metadata_t *md, const ld_peerid_t *peer, const ld_metadata_info_t *info,
                      bool from_response) {
  peer_entry_t *e = ld_hashmap_get(md->peers, peer->bytes, peer->len);
  if (e != NULL && e->from_response && !from_response)
    return LD_ERR_EXISTS;
  if (e == NULL) {
    if (ld_hashmap_size(md->peers) >= md->max_peers)
      evict_oldest(md);
    if ((e = calloc(1, sizeof *e)) == NULL)
      return LD_ERR_NOMEM;
    if (ld_hashmap_put(md->peers, peer->bytes, peer->len, e, NULL) != 0) {
      free(e);
      return LD_ERR_NOMEM;
    }
  }
  e->info = *info;
  e->from_response = from_response;
  e->updated = ++md->seq;
  return 0;
}

/* ---- closing a rejected connection ---------------------------------------------------------- */

static bool serving(const conn_state_t *st) {
  for (size_t i = 0; i < LD_METADATA_MAX_INBOUND_STREAMS; i++)
    if (st->serves[i].call != NULL)
      return true;
  return false;
}

static void free_timer(uv_handle_t *h) {
  free(h);
}

static void drop_grace_timer(conn_state_t *st) {
  if (st->grace == NULL)
    return;
  uv_timer_stop(st->grace);
  uv_close((uv_handle_t *)st->grace, free_timer);
  st->grace = NULL;
}

/* Closes a rejected connection now. `st` may be freed before this returns. */
static void close_rejected(conn_state_t *st) {
  if (!st->close_pending)
    return;
  st->close_pending = false;
  drop_grace_timer(st);
  if (st->md->ps != NULL) /* whatever re-added it while the peer was being answered */
    ld_peerstore_remove(st->md->ps, ld_conn_remote_peer(st->conn));
  ld_conn_close(st->conn, st->close_reason, true);
}

static void on_grace_over(uv_timer_t *t) {
  conn_state_t *st = t->data;
  char peer[LD_PEERID_TEXT_MAX];
  LD_DEBUG(LOG_TOPIC, "peer %s asked no metadata within %u ms: closing",
           peer_text(st->conn, peer, sizeof peer), st->md->reject_grace_ms);
  close_rejected(st);
}

/* A peer that answered us (of another cluster) gets its own metadata request answered before
 * the connection closes, so that it learns our cluster instead of reading an end of stream
 * (nwaku's handler answers every request it reads). Closes at once when that is done already, or
 * when the peer did not answer (it does not speak metadata, or failed); otherwise once the request
 * being served, or the next one, is answered, or after reject_grace_ms when none comes. */
static void close_after_answer(ld_metadata_t *md, conn_state_t *st, int reason, bool answered) {
  st->close_pending = true;
  st->close_reason = reason;
  if (!answered || (st->served && !serving(st))) {
    close_rejected(st);
    return;
  }
  st->grace = malloc(sizeof *st->grace);
  if (st->grace == NULL || uv_timer_init(ld_switch_loop(md->sw), st->grace) != 0) {
    free(st->grace);
    st->grace = NULL;
    close_rejected(st);
    return;
  }
  st->grace->data = st;
  uv_timer_start(st->grace, on_grace_over, md->reject_grace_ms, 0);
}

/* ---- results -------------------------------------------------------------------------------- */

static void reject(ld_metadata_t *md, conn_state_t *st, int reason,
                   const ld_metadata_info_t *info) {
  char peer[LD_PEERID_TEXT_MAX];
  const ld_peerid_t *id = ld_conn_remote_peer(st->conn);
  if (reason == LD_ERR_CLUSTER_MISMATCH && info != NULL && info->has_cluster)
    LD_INFO(LOG_TOPIC, "disconnecting from peer %s: %s (cluster %u, ours %u)",
            peer_text(st->conn, peer, sizeof peer), ld_errname(reason), info->cluster_id,
            md->cluster_id);
  else
    LD_INFO(LOG_TOPIC, "disconnecting from peer %s: %s", peer_text(st->conn, peer, sizeof peer),
            ld_errname(reason));
  if (reason == LD_ERR_CLUSTER_MISMATCH)
    md->stats.rejected_cluster++;
  else
    md->stats.rejected_other++;
  st->closing = true;
  if (md->ev.on_rejected != NULL)
    md->ev.on_rejected(st->conn, reason, info, md->ev_ud);
  if (md->ps != NULL)
    ld_peerstore_remove(md->ps, id);
  free(ld_hashmap_remove(md->peers, id->bytes, id->len));
  close_after_answer(md, st, reason, info != NULL);
}

/* Handles the end of our request: store, judge, report. */
static void finish_request(ld_metadata_t *md, conn_state_t *st, int rc,
                           const ld_metadata_info_t *info) {
  if (rc == 0)
    md->stats.responses_ok++;
  else
    md->stats.requests_failed++;
  if (st->closing)
    return;
  char peer[LD_PEERID_TEXT_MAX];
  int reason = ld_metadata_policy(md->cluster_id, md->require, rc, rc == 0 ? info : NULL);
  if (reason != 0) {
    reject(md, st, reason, rc == 0 ? info : NULL);
  } else if (rc == 0) {
    store_peer(md, ld_conn_remote_peer(st->conn), info, true);
    LD_DEBUG(LOG_TOPIC, "peer %s: cluster %u, %u shards", peer_text(st->conn, peer, sizeof peer),
             info->cluster_id, info->n_shards);
    if (md->ev.on_peer != NULL)
      md->ev.on_peer(st->conn, info, md->ev_ud);
  } else if (rc != LD_ERR_CLOSED) {
    LD_DEBUG(LOG_TOPIC, "metadata request to %s failed: %s", peer_text(st->conn, peer, sizeof peer),
             ld_errname(rc));
    if (md->ev.on_failed != NULL)
      md->ev.on_failed(st->conn, rc, md->ev_ud);
  }
}

/* ---- our message ---------------------------------------------------------------------------- */

static int encode_local(const ld_metadata_t *md, ld_buf_t *out) {
  ld_metadata_info_t local;
  ld_metadata_local(md, &local);
  return ld_metadata_encode(&local, out);
}

static ld_reqresp_opts_t exchange_opts(const ld_metadata_t *md) {
  ld_reqresp_opts_t o = {
      .max_bytes = MAX_READ, .frame_max = LD_METADATA_MAX_MSG, .timeout_ms = md->timeout_ms};
  return o;
}

/* ---- inbound -------------------------------------------------------------------------------- */

static void log_not_served(ld_stream_t *s, int err) {
  char peer[LD_PEERID_TEXT_MAX];
  LD_DEBUG(LOG_TOPIC, "metadata request from %s not served: %s",
           peer_text(s != NULL ? ld_stream_conn(s) : NULL, peer, sizeof peer), ld_errname(err));
}

/* The peer's request arrived complete: remember it and answer with our metadata. */
static int serve(ld_metadata_t *md, conn_state_t *st, ld_stream_t *s, const uint8_t *req,
                 size_t len, ld_buf_t *resp) {
  ld_metadata_info_t info;
  int rc = ld_metadata_decode(req, len, &info);
  if (rc < 0) {
    log_not_served(s, rc);
    return rc;
  }
  md->stats.requests_served++;
  if (st != NULL && !st->closing &&
      store_peer(md, ld_conn_remote_peer(st->conn), &info, false) == 0 && md->ev.on_peer != NULL)
    md->ev.on_peer(st->conn, &info, md->ev_ud);
  rc = encode_local(md, resp);
  if (rc != 0)
    LD_WARN(LOG_TOPIC, "cannot answer metadata request: %s", ld_errname(rc));
  else if (st != NULL)
    st->served = true;
  return rc;
}

static int on_slot_request(ld_stream_t *s, const uint8_t *req, size_t len, ld_buf_t *resp,
                           void *user_data) {
  serve_slot_t *slot = user_data;
  return serve(slot->st->md, slot->st, s, req, len, resp);
}

static int on_untracked_request(ld_stream_t *s, const uint8_t *req, size_t len, ld_buf_t *resp,
                                void *user_data) {
  return serve(user_data, NULL, s, req, len, resp);
}

static void on_serve_failed(ld_stream_t *s, int err, void *user_data) {
  (void)user_data;
  log_not_served(s, err);
}

static void on_slot_closed(void *user_data) {
  serve_slot_t *slot = user_data;
  conn_state_t *st = slot->st;
  slot->call = NULL;
  if (st->close_pending && st->served && !serving(st))
    close_rejected(st);
}

static const ld_reqresp_server_t g_slot_server = {
    .on_request = on_slot_request,
    .on_failed = on_serve_failed,
    .on_closed = on_slot_closed,
};

/* For a connection without state (its on_connected ran out of memory). */
static const ld_reqresp_server_t g_untracked_server = {
    .on_request = on_untracked_request,
    .on_failed = on_serve_failed,
};

static serve_slot_t *free_slot(conn_state_t *st) {
  for (size_t i = 0; i < LD_METADATA_MAX_INBOUND_STREAMS; i++)
    if (st->serves[i].call == NULL)
      return &st->serves[i];
  return NULL;
}

static void on_accept(ld_stream_t *s, void *user_data) {
  ld_metadata_t *md = user_data;
  ld_reqresp_opts_t opts = exchange_opts(md);
  conn_state_t *st = state_of(ld_stream_conn(s));
  if (st == NULL) {
    ld_reqresp_serve(md->sw, s, &opts, &g_untracked_server, md, NULL);
    return;
  }
  serve_slot_t *slot = free_slot(st);
  if (slot == NULL) {
    LD_DEBUG(LOG_TOPIC, "too many inbound metadata streams; resetting");
    ld_stream_reset(s);
    return;
  }
  slot->st = st;
  ld_reqresp_serve(md->sw, s, &opts, &g_slot_server, slot, &slot->call);
}

/* ---- outbound ------------------------------------------------------------------------------- */

static void on_response(const uint8_t *resp, size_t len, int err, void *user_data) {
  conn_state_t *st = user_data;
  st->request = NULL;
  ld_metadata_info_t info;
  ld_metadata_info_init(&info);
  if (err == 0) {
    int rc = ld_metadata_decode(resp, len, &info);
    err = rc < 0 ? rc : 0;
  }
  finish_request(st->md, st, err, &info);
}

static void start_request(ld_metadata_t *md, conn_state_t *st) {
  ld_buf_t req;
  ld_buf_init(&req);
  ld_reqresp_opts_t opts = exchange_opts(md);
  md->stats.requests_sent++;
  int rc = encode_local(md, &req);
  if (rc == 0)
    rc = ld_reqresp_request(md->sw, st->conn, LD_METADATA_PROTOCOL, req.data, req.len, &opts,
                            on_response, st, &st->request);
  ld_buf_clear(&req);
  if (rc != 0)
    finish_request(md, st, rc, NULL);
}

/* ---- connection events ---------------------------------------------------------------------- */

static void on_connected(ld_conn_t *c, void *user_data) {
  ld_metadata_t *md = user_data;
  conn_state_t *st = calloc(1, sizeof *st);
  if (st == NULL) {
    LD_WARN(LOG_TOPIC, "out of memory; connection not checked");
    return;
  }
  st->md = md;
  st->conn = c;
  ld_conn_set_slot(c, g_slot, st);
  start_request(md, st);
}

static void on_disconnected(ld_conn_t *c, int reason, void *user_data) {
  (void)reason;
  ld_metadata_t *md = user_data;
  conn_state_t *st = state_of(c);
  if (st == NULL)
    return;
  if (st->request != NULL) {
    md->stats.requests_failed++;
    ld_reqresp_cancel(st->request);
  }
  st->close_pending = false;
  drop_grace_timer(st);
  for (size_t i = 0; i < LD_METADATA_MAX_INBOUND_STREAMS; i++)
    if (st->serves[i].call != NULL)
      ld_reqresp_cancel(st->serves[i].call);
  ld_conn_set_slot(c, g_slot, NULL);
  free(st);
}

static const ld_switch_events_t g_switch_events = {
    .on_connected = on_connected,
    .on_disconnected = on_disconnected,
};

/* ---- public --------------------------------------------------------------------------------- */

void ld_metadata_config_default(ld_metadata_config_t *cfg) {
  memset(cfg, 0, sizeof *cfg);
  cfg->require_metadata = true;
  cfg->timeout_ms = LD_METADATA_TIMEOUT_MS;
  cfg->reject_grace_ms = LD_METADATA_REJECT_GRACE_MS;
  cfg->max_peers = LD_METADATA_DEFAULT_MAX_PEERS;
}

static int fill_shards(ld_metadata_info_t *info, const uint16_t *shards, size_t n) {
  ld_metadata_info_init(info);
  if (n > 0 && shards == NULL)
    return LD_ERR_INVALID_ARG;
  for (size_t i = 0; i < n; i++)
    if (ld_metadata_info_add_shard(info, shards[i]) != 0)
      return LD_ERR_INVALID_ARG;
  return 0;
}

ld_metadata_t *ld_metadata_new(ld_switch_t *sw, const ld_metadata_config_t *cfg) {
  pthread_once(&g_slot_once, register_slot);
  if (sw == NULL || cfg == NULL || g_slot < 0)
    return NULL;
  ld_metadata_t *md = calloc(1, sizeof *md);
  if (md == NULL)
    return NULL;
  md->sw = sw;
  md->cluster_id = cfg->cluster_id;
  md->require = cfg->require_metadata;
  md->timeout_ms = cfg->timeout_ms != 0 ? cfg->timeout_ms : LD_METADATA_TIMEOUT_MS;
  md->reject_grace_ms =
      cfg->reject_grace_ms != 0 ? cfg->reject_grace_ms : LD_METADATA_REJECT_GRACE_MS;
  md->max_peers = cfg->max_peers != 0 ? cfg->max_peers : LD_METADATA_DEFAULT_MAX_PEERS;
  if (fill_shards(&md->configured, cfg->shards, cfg->n_shards) != 0 ||
      (md->peers = ld_hashmap_new(16)) == NULL ||
      ld_switch_handle(sw, LD_METADATA_PROTOCOL, on_accept, md) != 0 ||
      ld_switch_add_listener(sw, &g_switch_events, md) != 0) {
    ld_hashmap_free(md->peers, free);
    free(md);
    return NULL;
  }
  return md;
}

void ld_metadata_free(ld_metadata_t *md) {
  if (md == NULL)
    return;
  ld_hashmap_free(md->peers, free);
  free(md);
}

void ld_metadata_set_events(ld_metadata_t *md, const ld_metadata_events_t *ev, void *user_data) {
  memset(&md->ev, 0, sizeof md->ev);
  if (ev != NULL)
    md->ev = *ev;
  md->ev_ud = user_data;
}

void ld_metadata_set_peerstore(ld_metadata_t *md, ld_peerstore_t *ps) {
  md->ps = ps;
}

int ld_metadata_set_shards(ld_metadata_t *md, const uint16_t *shards, size_t n) {
  ld_metadata_info_t info;
  int rc = fill_shards(&info, shards, n);
  if (rc == 0)
    md->configured = info;
  return rc;
}

void ld_metadata_set_shard_provider(ld_metadata_t *md, ld_metadata_shard_provider_fn fn,
                                    void *user_data) {
  md->provider = fn;
  md->provider_ud = user_data;
}

uint32_t ld_metadata_cluster_id(const ld_metadata_t *md) {
  return md->cluster_id;
}

void ld_metadata_local(const ld_metadata_t *md, ld_metadata_info_t *out) {
  *out = md->configured;
  out->has_cluster = true;
  out->cluster_id = md->cluster_id;
  if (md->provider == NULL)
    return;
  uint16_t shards[LD_METADATA_MAX_SHARDS];
  size_t n = md->provider(md->provider_ud, shards, LD_METADATA_MAX_SHARDS);
  if (n == 0)
    return;
  if (n > LD_METADATA_MAX_SHARDS)
    n = LD_METADATA_MAX_SHARDS;
  memset(out->shard_bits, 0, sizeof out->shard_bits);
  out->n_shards = 0;
  for (size_t i = 0; i < n; i++)
    ld_metadata_info_add_shard(out, shards[i]);
}

const ld_metadata_info_t *ld_metadata_peer(const ld_metadata_t *md, const ld_peerid_t *peer) {
  const peer_entry_t *e = ld_hashmap_get(md->peers, peer->bytes, peer->len);
  return e != NULL ? &e->info : NULL;
}

static bool entry_on_shard(const ld_metadata_t *md, const peer_entry_t *e, uint32_t shard) {
  return e != NULL && e->info.has_cluster && e->info.cluster_id == md->cluster_id &&
         ld_metadata_info_has_shard(&e->info, shard);
}

bool ld_metadata_peer_on_shard(const ld_metadata_t *md, const ld_peerid_t *peer, uint32_t shard) {
  return entry_on_shard(md, ld_hashmap_get(md->peers, peer->bytes, peer->len), shard);
}

size_t ld_metadata_peers_on_shard(const ld_metadata_t *md, uint32_t shard, ld_peerid_t *out,
                                  size_t max) {
  ld_hashmap_iter_t it = {0};
  const void *key;
  size_t klen, n = 0;
  void *value;
  while (ld_hashmap_next(md->peers, &it, &key, &klen, &value)) {
    if (!entry_on_shard(md, value, shard) || klen > LD_PEERID_MAX)
      continue;
    if (n < max) {
      out[n].len = klen;
      memcpy(out[n].bytes, key, klen);
    }
    n++;
  }
  return n;
}

int ld_metadata_forget(ld_metadata_t *md, const ld_peerid_t *peer) {
  peer_entry_t *e = ld_hashmap_remove(md->peers, peer->bytes, peer->len);
  if (e == NULL)
    return LD_ERR_NOT_FOUND;
  free(e);
  return 0;
}

void ld_metadata_get_stats(const ld_metadata_t *md, ld_metadata_stats_t *out) {
  *out = md->stats;
}
