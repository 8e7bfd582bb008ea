/* Store-sync service: /vac/waku/transfer/1.0.0 — our pushes of what peers lack, and the checked
 * ingest of what peers push us (see service.h). */
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "base/log.h"
#include "p2p/reqresp.h"
#include "waku/sync/service_internal.h"

/* Inbound transfer streams of one peer at once. */
#define MAX_TRANSFERS_PER_PEER 2
/* Items waiting to be pushed to one peer at most (two sessions' worth of differences). */
#define MAX_PUSH_QUEUE (2u * LD_SYNC_DEFAULT_MAX_DIFFS)

/* ---- pushes -----------------------------------------------------------------------------------
 */

static void push_drop(sync_peer_t *p) {
  pusher_t *u = &p->push;
  if (u->pos < u->queue.n)
    p->svc->stats.pushes_dropped += u->queue.n - u->pos;
  u->queue.n = u->pos = 0;
}

static void push_on_data(ld_stream_t *st, const uint8_t *data, size_t len) {
  (void)st, (void)data, (void)len; /* nothing is expected back */
}

static void push_on_drain(ld_stream_t *st) {
  sync_peer_t *p = ld_stream_user_data(st);
  ld_store_sync__push_pump(p);
}

static void push_on_close(ld_stream_t *st, int err) {
  sync_peer_t *p = ld_stream_user_data(st);
  pusher_t *u = &p->push;
  if (err != 0 && err != LD_ERR_RESET)
    LD_DEBUG(LOG_TOPIC, "push stream closed: %s", ld_errname(err));
  if (u->tx_off < u->tx.len || err != 0)
    push_drop(p); /* what it did not carry waits for the next session */
  ld_buf_reset(&u->tx);
  u->tx_off = 0;
  u->stream = NULL;
  u->closing = false;
  u->stall_ms = 0;
  ld_store_sync__push_pump(p);
  ld_store_sync__peer_maybe_release(p);
}

static const ld_stream_handler_t k_push_handler = {push_on_data, NULL, push_on_close,
                                                   push_on_drain};

static void on_push_opened(ld_stream_t *st, int err, void *user_data) {
  sync_peer_t *p = user_data;
  ld_store_sync_t *s = p->svc;
  pusher_t *u = &p->push;
  u->opening = false;
  if (st != NULL && (s->stopped || ld_store_sync_banned(s, &p->id)))
    err = LD_ERR_CANCELED;
  if (st != NULL) {
    u->stream = st;
    ld_stream_set_handler(st, &k_push_handler, p);
  }
  if (err != 0) {
    LD_DEBUG(LOG_TOPIC, "no push stream: %s", ld_errname(err));
    push_drop(p);
    if (st != NULL) {
      u->closing = true;
      ld_stream_reset(st); /* push_on_close follows */
    } else {
      ld_store_sync__peer_maybe_release(p);
    }
    return;
  }
  ld_store_sync__push_pump(p);
}

static int open_push(sync_peer_t *p) {
  ld_store_sync_t *s = p->svc;
  ld_conn_t *c = ld_store_sync__conn_to(s, &p->id);
  if (c == NULL)
    return LD_ERR_NOT_CONNECTED;
  const char *proto = LD_SYNC_TRANSFER_PROTOCOL;
  p->push.opening = true;
  int rc = ld_switch_open_stream(s->sw, c, &proto, 1, on_push_opened, p);
  if (rc != 0)
    p->push.opening = false;
  return rc;
}

typedef struct fetch {
  pending_t base;
  sync_peer_t *peer;
  size_t n;
} fetch_t;

static void fetch_detach(pending_t *pd) {
  (void)pd; /* freed when the backend answers */
}

/* Frames every message found into the push's buffer. */
static void frame_rows(sync_peer_t *p, const ld_archive_result_t *res, size_t asked) {
  ld_store_sync_t *s = p->svc;
  pusher_t *u = &p->push;
  ld_buf_t body;
  ld_buf_init(&body);
  size_t sent = 0;
  for (size_t i = 0; i < res->n_rows; i++) {
    const ld_archive_row_t *row = &res->rows[i];
    ld_buf_reset(&body);
    uint8_t *dst;
    if (row->pubsub_topic == NULL ||
        ld_sync_transfer_encode(row->pubsub_topic, strlen(row->pubsub_topic), &row->msg, 0,
                                &body) != 0 ||
        ld_reqresp_append_frame(&u->tx, body.len, &dst) != 0)
      continue; /* a message over nwaku's frame cap is never pushed */
    memcpy(dst, body.data, body.len);
    s->stats.transfer_bytes_out += body.len;
    s->stats.transfer_out++;
    sent++;
  }
  ld_buf_clear(&body);
  s->stats.pushes_dropped += asked - sent; /* gone from the archive, or too large */
}

static void on_fetched(int err, const char *why, const ld_archive_result_t *res, void *user_data) {
  fetch_t *f = user_data;
  ld_store_sync_t *s = f->base.svc;
  ld_store_sync__pending_remove(&f->base);
  if (s == NULL) {
    free(f);
    return;
  }
  sync_peer_t *p = f->peer;
  p->push.fetching = false;
  if (err != 0) {
    LD_WARN(LOG_TOPIC, "push: archive lookup failed: %s (%s)", why, ld_errname(err));
    s->stats.pushes_dropped += f->n;
  } else if (p->push.stream != NULL && !p->push.closing) {
    frame_rows(p, res, f->n);
  } else {
    s->stats.pushes_dropped += f->n;
  }
  free(f);
  ld_store_sync__push_pump(p);
  ld_store_sync__peer_maybe_release(p);
}

static void fetch_more(sync_peer_t *p) {
  ld_store_sync_t *s = p->svc;
  pusher_t *u = &p->push;
  size_t n = u->queue.n - u->pos;
  if (n > PUSH_BATCH)
    n = PUSH_BATCH;
  fetch_t *f = calloc(1, sizeof *f);
  uint8_t(*hashes)[LD_WAKU_HASH_LEN] = calloc(n, LD_WAKU_HASH_LEN);
  int rc = LD_ERR_NOMEM;
  if (f != NULL && hashes != NULL) {
    for (size_t i = 0; i < n; i++)
      memcpy(hashes[i], u->queue.v[u->pos + i].hash, LD_WAKU_HASH_LEN);
    f->base.on_detach = fetch_detach;
    f->peer = p;
    f->n = n;
    ld_archive_query_t q = {0};
    q.hashes = (const uint8_t(*)[LD_WAKU_HASH_LEN])hashes;
    q.n_hashes = n;
    q.include_data = true;
    q.forward = true;
    q.limit = (uint32_t)n;
    ld_store_sync__pending_add(s, &f->base);
    u->fetching = true;
    rc = s->backend.query(s->backend.ctx, &q, on_fetched, f);
    if (rc != 0) {
      u->fetching = false;
      ld_store_sync__pending_remove(&f->base);
    }
  }
  free(hashes);
  u->pos += n;
  if (rc != 0) {
    LD_WARN(LOG_TOPIC, "push: archive lookup not started: %s", ld_errname(rc));
    s->stats.pushes_dropped += n;
    free(f);
  }
}

/* Hands buffered frames to the stream while it takes them. */
static int write_frames(sync_peer_t *p) {
  pusher_t *u = &p->push;
  while (u->tx_off < u->tx.len && ld_stream_buffered(u->stream) < PUSH_HIGH_WATER) {
    size_t n = u->tx.len - u->tx_off;
    if (n > WRITE_CHUNK)
      n = WRITE_CHUNK;
    int rc = ld_stream_write(u->stream, u->tx.data + u->tx_off, n);
    if (rc == LD_ERR_LIMIT)
      break;
    if (rc != 0)
      return rc;
    u->tx_off += n;
    u->stall_ms = ld_store_sync__now_ms(p->svc) + p->svc->cfg.read_timeout_ms;
  }
  if (u->tx_off == u->tx.len) {
    ld_buf_reset(&u->tx);
    u->tx_off = 0;
  }
  return 0;
}

void ld_store_sync__push_pump(sync_peer_t *p) {
  ld_store_sync_t *s = p->svc;
  pusher_t *u = &p->push;
  if (s->stopped || u->opening || u->closing)
    return;
  if (u->stream == NULL) {
    if (u->pos < u->queue.n && open_push(p) != 0)
      push_drop(p);
    return;
  }
  int rc = write_frames(p);
  if (rc != 0) {
    ld_store_sync__push_abort(p);
    return;
  }
  size_t waiting = ld_stream_buffered(u->stream) + (u->tx.len - u->tx_off);
  if (!u->fetching && u->pos < u->queue.n && waiting < PUSH_HIGH_WATER)
    fetch_more(p);
  if (u->pos == u->queue.n)
    u->queue.n = u->pos = 0;
  bool idle = !u->fetching && u->queue.n == 0 && u->tx.len == 0;
  if (idle && p->sessions_in + p->sessions_out == 0) {
    u->closing = true; /* push_on_close follows once the peer closes too */
    if (ld_stream_close_write(u->stream) != 0)
      ld_stream_reset(u->stream);
  }
}

void ld_store_sync__push(sync_peer_t *p, const ld_sync_id_t *items, size_t n) {
  pusher_t *u = &p->push;
  for (size_t i = 0; i < n; i++) {
    if (u->queue.n - u->pos >= MAX_PUSH_QUEUE || ld_sync_ids_push(&u->queue, &items[i]) != 0) {
      p->svc->stats.pushes_dropped += n - i;
      break;
    }
  }
  ld_store_sync__push_pump(p);
}

void ld_store_sync__push_abort(sync_peer_t *p) {
  pusher_t *u = &p->push;
  push_drop(p);
  if (u->stream != NULL && !u->closing) {
    u->closing = true;
    ld_stream_reset(u->stream);
  }
}

/* ---- inbound transfers ------------------------------------------------------------------------
 */

struct xfer_in {
  ld_store_sync_t *svc;
  xfer_in_t *prev, *next;
  sync_peer_t *peer;
  ld_stream_t *stream;
  ld_buf_t rx;
  uint64_t read_deadline_ms;
  bool idle_closed; /* half-closed for idleness: reset when it stays open */
  bool dead;        /* reset: nothing more is read */
};

typedef struct ingest {
  pending_t base;
  ld_sync_id_t id;
  char topic[LD_SYNC_TRANSFER_MAX_TOPIC_LEN + 1];
} ingest_t;

static void ingest_detach(pending_t *pd) {
  (void)pd; /* freed when the backend answers */
}

static void on_ingested(int err, void *user_data) {
  ingest_t *g = user_data;
  ld_store_sync_t *s = g->base.svc;
  ld_store_sync__pending_remove(&g->base);
  if (s != NULL && err != 0) {
    s->stats.ingested--;
    s->stats.ingest_errors++;
    LD_WARN(LOG_TOPIC, "a transferred message was not stored: %s", ld_errname(err));
    ld_sync_shards_remove(s->shards, g->topic, &g->id);
  }
  free(g);
}

/* Check 5 of ingress.h for the peer a stream comes from. */
static ld_sync_wanted_t wanted(void *ctx, const ld_sync_id_t *id) {
  xfer_in_t *x = ctx;
  sync_peer_t *p = x->peer;
  if (ld_sync_shards_contains(x->svc->shards, id))
    return LD_SYNC_HELD;
  if (!ld_store_sync__soliciting(p, ld_store_sync__now_ms(x->svc)))
    return LD_SYNC_UNKNOWN;
  if (p->need != NULL && ld_sync_tree_contains(p->need, id))
    return LD_SYNC_WANTED;
  return ld_sync_spans_contains(&p->offered, id->time) ? LD_SYNC_WANTED : LD_SYNC_UNKNOWN;
}

static void rules(xfer_in_t *x, ld_sync_ingress_rules_t *r) {
  const ld_store_sync_t *s = x->svc;
  memset(r, 0, sizeof *r);
  r->shards = ld_store_sync__kept_pubsub(s);
  r->max_msg_size = s->cfg.max_msg_size;
  r->js_rules = s->cfg.js_rules;
  r->now_ns = ld_store_sync__now_ns(s);
  r->window_start = r->now_ns - s->cfg.jitter_ns - s->cfg.range_ns;
  r->wanted = wanted;
  r->wanted_ctx = x;
  r->cluster_id = s->cfg.cluster_id;
  r->protected_shards = s->cfg.protected_shards;
  r->n_protected_shards = s->cfg.n_protected_shards;
  r->rln = s->cfg.rln;
  r->rln_ctx = s->cfg.rln_ctx;
}

/* The set an ingested item goes to: its pubsub topic, or (by_content_topic) its content topic
 * (empty when longer than the key buffer: then no set keeps it). */
static void ingest_key(const ld_store_sync_t *s, const ld_sync_transfer_t *t,
                       char key[LD_SYNC_TRANSFER_MAX_TOPIC_LEN + 1]) {
  const char *src = t->pubsub_topic;
  size_t len = t->pubsub_topic_len;
  if (s->cfg.by_content_topic) {
    src = t->message.content_topic;
    len = t->message.content_topic_len <= LD_SYNC_TRANSFER_MAX_TOPIC_LEN
              ? t->message.content_topic_len
              : 0;
  }
  memcpy(key, src, len);
  key[len] = '\0';
}

/* An accepted message into the archive and the item sets. */
static void ingest(xfer_in_t *x, const ld_sync_transfer_t *t, const ld_sync_id_t *id) {
  ld_store_sync_t *s = x->svc;
  sync_peer_t *p = x->peer;
  if (p->need != NULL)
    ld_sync_tree_remove(p->need, id);
  uint64_t until = ld_store_sync__now_ms(s) + s->cfg.solicit_ttl_ms;
  if (until > p->solicit_until_ms)
    p->solicit_until_ms = until;
  ingest_t *g = calloc(1, sizeof *g);
  int rc = LD_ERR_NOMEM;
  if (g != NULL) {
    g->base.on_detach = ingest_detach;
    g->id = *id;
    ingest_key(s, t, g->topic);
    ld_store_sync__pending_add(s, &g->base);
    rc = s->backend.insert(s->backend.ctx, t->pubsub_topic, &t->message, id->hash, on_ingested, g);
    if (rc != 0)
      ld_store_sync__pending_remove(&g->base);
  }
  if (rc != 0) {
    free(g);
    s->stats.ingest_errors++;
    LD_WARN(LOG_TOPIC, "a transferred message was not stored: %s",
            rc < 0 ? ld_errname(rc) : "refused by the archive");
    return;
  }
  s->stats.ingested++;
  if (s->cfg.by_content_topic)
    ld_store_sync_add_content(s, t->message.content_topic, t->message.content_topic_len, id->time,
                              id->hash);
  else
    ld_sync_shards_insert(s->shards, t->pubsub_topic, id);
}

/* Returns false when the peer was cut off. */
static bool take_message(xfer_in_t *x, const uint8_t *body, size_t len) {
  ld_store_sync_t *s = x->svc;
  s->stats.transfer_bytes_in += len;
  s->stats.transfer_in++;
  ld_sync_ingress_rules_t r;
  rules(x, &r);
  ld_sync_transfer_t t;
  ld_sync_transfer_init(&t);
  ld_sync_id_t id;
  ld_sync_ingress_verdict_t v = ld_sync_ingress_check(body, len, &r, &t, &id);
  if (v == LD_SYNC_INGRESS_OK)
    ingest(x, &t, &id);
  ld_sync_transfer_clear(&t);
  if (v == LD_SYNC_INGRESS_OK)
    return true;
  s->stats.rejected[v]++;
  if (v == LD_SYNC_INGRESS_DUPLICATE)
    return true;
  x->dead = true;
  ld_store_sync__punish(s, &x->peer->id, v);
  return false;
}

static void xfer_on_data(ld_stream_t *st, const uint8_t *data, size_t len) {
  xfer_in_t *x = ld_stream_user_data(st);
  if (x->dead)
    return;
  ld_store_sync_t *s = x->svc;
  x->read_deadline_ms = ld_store_sync__now_ms(s) + s->cfg.read_timeout_ms;
  if (ld_buf_append(&x->rx, data, len) != 0) {
    x->dead = true;
    ld_stream_reset(st);
    return;
  }
  size_t used = 0;
  for (;;) {
    const uint8_t *body;
    size_t n;
    int took = ld_reqresp_read_frame(x->rx.data + used, x->rx.len - used,
                                     LD_SYNC_TRANSFER_MAX_FRAME, &body, &n);
    if (took == LD_ERR_TRUNCATED)
      break;
    if (took < 0) { /* a frame over the cap, or a malformed length */
      s->stats.transfer_in++;
      s->stats.rejected[LD_SYNC_INGRESS_UNDECODABLE]++;
      x->dead = true;
      ld_store_sync__punish(s, &x->peer->id, LD_SYNC_INGRESS_UNDECODABLE);
      return;
    }
    used += (size_t)took;
    if (!take_message(x, body, n))
      return;
  }
  ld_buf_consume(&x->rx, used);
}

static void xfer_on_eof(ld_stream_t *st) {
  xfer_in_t *x = ld_stream_user_data(st);
  if (x->rx.len > 0 && !x->dead)
    LD_DEBUG(LOG_TOPIC, "transfer stream ended inside a frame");
  if (ld_stream_close_write(st) != 0)
    ld_stream_reset(st);
}

static void xfer_on_close(ld_stream_t *st, int err) {
  (void)err;
  xfer_in_t *x = ld_stream_user_data(st);
  ld_store_sync_t *s = x->svc;
  sync_peer_t *p = x->peer;
  if (x->prev != NULL)
    x->prev->next = x->next;
  else
    s->xfers = x->next;
  if (x->next != NULL)
    x->next->prev = x->prev;
  s->n_xfers--;
  p->transfers_in--;
  ld_buf_clear(&x->rx);
  free(x);
  ld_store_sync__peer_maybe_release(p);
}

static const ld_stream_handler_t k_xfer_handler = {xfer_on_data, xfer_on_eof, xfer_on_close, NULL};

void ld_store_sync__xfer_accept(ld_stream_t *st, void *user_data) {
  ld_store_sync_t *s = user_data;
  const ld_peerid_t *id = ld_conn_remote_peer(ld_stream_conn(st));
  sync_peer_t *p = NULL;
  if (!s->stopped && !ld_store_sync_banned(s, id) && s->n_xfers < s->cfg.max_transfers)
    p = ld_store_sync__peer(s, id, true);
  xfer_in_t *x =
      p != NULL && p->transfers_in < MAX_TRANSFERS_PER_PEER ? calloc(1, sizeof *x) : NULL;
  if (x == NULL) {
    s->stats.transfers_refused++;
    LD_DEBUG(LOG_TOPIC, "transfer stream refused");
    ld_stream_reset(st);
    if (p != NULL)
      ld_store_sync__peer_maybe_release(p);
    return;
  }
  x->svc = s;
  x->peer = p;
  x->stream = st;
  ld_buf_init(&x->rx);
  x->read_deadline_ms = ld_store_sync__now_ms(s) + s->cfg.read_timeout_ms;
  x->next = s->xfers;
  if (s->xfers != NULL)
    s->xfers->prev = x;
  s->xfers = x;
  s->n_xfers++;
  p->transfers_in++;
  ld_stream_set_handler(st, &k_xfer_handler, x);
}

/* ---- deadlines and resets ---------------------------------------------------------------------
 */

void ld_store_sync__xfer_tick(ld_store_sync_t *s, uint64_t now_ms) {
  for (xfer_in_t *x = s->xfers; x != NULL; x = x->next) {
    if (x->dead || now_ms < x->read_deadline_ms)
      continue;
    if (!x->idle_closed) { /* nwaku reopens a transfer stream it finds closed */
      x->idle_closed = true;
      x->read_deadline_ms = now_ms + s->cfg.read_timeout_ms;
      if (ld_stream_close_write(x->stream) == 0)
        continue;
    }
    x->dead = true;
    ld_stream_reset(x->stream);
  }
  for (sync_peer_t *p = s->peers; p != NULL; p = p->next) {
    pusher_t *u = &p->push;
    bool moving = u->stream != NULL && !u->closing &&
                  (u->tx_off < u->tx.len || ld_stream_buffered(u->stream) > 0);
    if (moving && u->stall_ms != 0 && now_ms >= u->stall_ms) {
      LD_DEBUG(LOG_TOPIC, "push stalled: reset");
      ld_store_sync__push_abort(p);
    }
  }
}

void ld_store_sync__xfer_reset(ld_store_sync_t *s, const sync_peer_t *peer) {
  for (xfer_in_t *x = s->xfers; x != NULL; x = x->next) {
    if ((peer == NULL || x->peer == peer) && !x->dead) {
      x->dead = true;
      ld_stream_reset(x->stream);
    }
  }
}
