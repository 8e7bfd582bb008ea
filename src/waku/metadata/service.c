#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <uv.h>

#include "base/clock.h"
#include "base/error.h"
#include "base/hashmap.h"
#include "base/log.h"
#include "waku/metadata/metadata.h"

#define LOG_TOPIC "waku metadata"

/* Bytes read from one stream: a frame of at most LD_METADATA_MAX_MSG plus its prefix. */
#define MAX_READ (LD_METADATA_MAX_MSG + 8)

typedef enum op_kind {
  OP_REQUEST, /* we asked the peer */
  OP_SERVE,   /* the peer asked us */
} op_kind_t;

typedef struct conn_state conn_state_t;

/* One metadata stream (or one being opened) with its deadline. Freed once the stream is over
 * and the timer handle is closed. */
typedef struct op {
  ld_metadata_t *md;
  op_kind_t kind;
  conn_state_t *state; /* NULL once the connection is gone */
  struct op *next;     /* in state->ops */
  ld_stream_t *stream;
  ld_buf_t rx;
  uv_timer_t timer;
  bool finished; /* the exchange's result was handled */
  bool released;
} op_t;

struct conn_state {
  ld_conn_t *conn;
  unsigned inbound; /* live OP_SERVE */
  bool closing;     /* rejected: being closed by us */
  op_t *ops;
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

/* ---- op lifecycle --------------------------------------------------------------------------- */

static void attach(op_t *op, conn_state_t *st) {
  op->state = st;
  if (st == NULL)
    return;
  op->next = st->ops;
  st->ops = op;
  if (op->kind == OP_SERVE)
    st->inbound++;
}

static void detach(op_t *op) {
  conn_state_t *st = op->state;
  if (st == NULL)
    return;
  for (op_t **pp = &st->ops; *pp != NULL; pp = &(*pp)->next) {
    if (*pp == op) {
      *pp = op->next;
      break;
    }
  }
  if (op->kind == OP_SERVE)
    st->inbound--;
  op->state = NULL;
}

static void on_timer_closed(uv_handle_t *h) {
  op_t *op = h->data;
  ld_buf_clear(&op->rx);
  free(op);
}

static void release(op_t *op) {
  if (op->released)
    return;
  op->released = true;
  detach(op);
  op->stream = NULL;
  uv_timer_stop(&op->timer);
  uv_close((uv_handle_t *)&op->timer, on_timer_closed);
}

static void on_timeout(uv_timer_t *t);

static op_t *op_new(ld_metadata_t *md, op_kind_t kind, conn_state_t *st) {
  op_t *op = calloc(1, sizeof *op);
  if (op == NULL)
    return NULL;
  op->md = md;
  op->kind = kind;
  ld_buf_init(&op->rx);
  uv_timer_init(ld_switch_loop(md->sw), &op->timer);
  op->timer.data = op;
  uv_timer_start(&op->timer, on_timeout, md->timeout_ms, 0);
  attach(op, st);
  return op;
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
  ld_conn_close(st->conn, reason, true);
}

/* Handles the end of our request: store, judge, report. */
static void finish_request(op_t *op, int rc, const ld_metadata_info_t *info) {
  op->finished = true;
  ld_metadata_t *md = op->md;
  conn_state_t *st = op->state;
  if (rc == 0)
    md->stats.responses_ok++;
  else
    md->stats.requests_failed++;
  if (st == NULL || st->closing)
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

/* Ends an op with an error (no answer). */
static void fail(op_t *op, int rc) {
  if (op->finished)
    return;
  if (op->kind == OP_REQUEST) {
    finish_request(op, rc, NULL);
    return;
  }
  op->finished = true;
  char peer[LD_PEERID_TEXT_MAX];
  LD_DEBUG(LOG_TOPIC, "metadata request from %s not served: %s",
           peer_text(op->state != NULL ? op->state->conn : NULL, peer, sizeof peer),
           ld_errname(rc));
}

static void on_timeout(uv_timer_t *t) {
  op_t *op = t->data;
  fail(op, LD_ERR_TIMEOUT);
  if (op->stream != NULL)
    ld_stream_reset(op->stream);
}

/* ---- our message ---------------------------------------------------------------------------- */

static int send_local(ld_metadata_t *md, ld_stream_t *s) {
  ld_metadata_info_t local;
  ld_metadata_local(md, &local);
  ld_buf_t msg;
  ld_buf_init(&msg);
  int rc = ld_metadata_encode(&local, &msg);
  if (rc == 0)
    rc = ld_stream_write(s, msg.data, msg.len);
  if (rc == 0)
    rc = ld_stream_close_write(s);
  ld_buf_clear(&msg);
  return rc;
}

/* The peer's request arrived complete: remember it, answer, close our side. */
static void serve(op_t *op, ld_stream_t *s, const ld_metadata_info_t *info) {
  ld_metadata_t *md = op->md;
  conn_state_t *st = op->state;
  op->finished = true;
  md->stats.requests_served++;
  if (st != NULL && !st->closing &&
      store_peer(md, ld_conn_remote_peer(st->conn), info, false) == 0 && md->ev.on_peer != NULL)
    md->ev.on_peer(st->conn, info, md->ev_ud);
  int rc = send_local(md, s);
  if (rc != 0) {
    LD_WARN(LOG_TOPIC, "cannot answer metadata request: %s", ld_errname(rc));
    ld_stream_reset(s);
  }
}

/* ---- stream handlers ------------------------------------------------------------------------ */

static void on_data(ld_stream_t *s, const uint8_t *data, size_t len) {
  op_t *op = ld_stream_user_data(s);
  if (op->finished)
    return;
  if (op->rx.len + len > MAX_READ || ld_buf_append(&op->rx, data, len) != 0) {
    fail(op, op->rx.len + len > MAX_READ ? LD_ERR_TOO_LARGE : LD_ERR_NOMEM);
    ld_stream_reset(s);
    return;
  }
  ld_metadata_info_t info;
  int rc = ld_metadata_decode(op->rx.data, op->rx.len, &info);
  if (rc == LD_ERR_TRUNCATED)
    return;
  if (rc < 0) {
    fail(op, rc);
    ld_stream_reset(s);
  } else if (op->kind == OP_REQUEST) {
    finish_request(op, 0, &info);
  } else {
    serve(op, s, &info);
  }
}

static void on_eof(ld_stream_t *s) {
  op_t *op = ld_stream_user_data(s);
  if (!op->finished) {
    /* Closed without a complete frame: nothing at all is a refusal, a partial frame garbage. */
    fail(op, op->rx.len == 0 ? LD_ERR_PROTOCOL : LD_ERR_TRUNCATED);
    ld_stream_reset(s);
    return;
  }
  ld_stream_close_write(s);
}

static void on_close(ld_stream_t *s, int err) {
  op_t *op = ld_stream_user_data(s);
  fail(op, err != 0 ? err : LD_ERR_PROTOCOL);
  release(op);
}

static const ld_stream_handler_t g_handler = {
    .on_data = on_data,
    .on_eof = on_eof,
    .on_close = on_close,
};

/* ---- inbound -------------------------------------------------------------------------------- */

static void on_accept(ld_stream_t *s, void *user_data) {
  ld_metadata_t *md = user_data;
  conn_state_t *st = state_of(ld_stream_conn(s));
  if (st != NULL && st->inbound >= LD_METADATA_MAX_INBOUND_STREAMS) {
    LD_DEBUG(LOG_TOPIC, "too many inbound metadata streams; resetting");
    ld_stream_reset(s);
    return;
  }
  op_t *op = op_new(md, OP_SERVE, st);
  if (op == NULL) {
    ld_stream_reset(s);
    return;
  }
  op->stream = s;
  ld_stream_set_handler(s, &g_handler, op);
}

/* ---- outbound ------------------------------------------------------------------------------- */

static void on_open(ld_stream_t *s, int err, void *user_data) {
  op_t *op = user_data;
  if (s == NULL) {
    fail(op, err);
    release(op);
    return;
  }
  op->stream = s;
  ld_stream_set_handler(s, &g_handler, op);
  if (op->finished || op->state == NULL || op->state->closing) {
    ld_stream_reset(s);
    return;
  }
  int rc = send_local(op->md, s);
  if (rc != 0) {
    fail(op, rc);
    ld_stream_reset(s);
  }
}

static void start_request(ld_metadata_t *md, conn_state_t *st) {
  const char *protocol = LD_METADATA_PROTOCOL;
  op_t *op = op_new(md, OP_REQUEST, st);
  if (op == NULL) {
    LD_WARN(LOG_TOPIC, "out of memory; metadata not requested");
    return;
  }
  md->stats.requests_sent++;
  int rc = ld_switch_open_stream(md->sw, st->conn, &protocol, 1, on_open, op);
  if (rc != 0) {
    fail(op, rc);
    release(op);
  }
}

/* ---- connection events ---------------------------------------------------------------------- */

static void on_connected(ld_conn_t *c, void *user_data) {
  ld_metadata_t *md = user_data;
  conn_state_t *st = calloc(1, sizeof *st);
  if (st == NULL) {
    LD_WARN(LOG_TOPIC, "out of memory; connection not checked");
    return;
  }
  st->conn = c;
  ld_conn_set_slot(c, g_slot, st);
  start_request(md, st);
}

static void on_disconnected(ld_conn_t *c, int reason, void *user_data) {
  (void)reason;
  (void)user_data;
  conn_state_t *st = state_of(c);
  if (st == NULL)
    return;
  while (st->ops != NULL)
    detach(st->ops);
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
