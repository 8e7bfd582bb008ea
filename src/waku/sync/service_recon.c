/* Store-sync service: reconciliation sessions on /vac/waku/reconciliation/1.0.0 streams, both
 * roles (see service.h). */
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "base/log.h"
#include "base/varint.h"
#include "p2p/reqresp.h"
#include "waku/sync/service_internal.h"

struct recon {
  ld_store_sync_t *svc;
  recon_t *prev, *next;
  sync_peer_t *peer;
  ld_stream_t *stream; /* NULL while opening and once over */
  bool initiator;
  bool opening;
  bool abandoned; /* reset while opening: the stream is reset as soon as it opens */
  bool finishing; /* the session is done and our side half-closed */
  bool silent;    /* never started: nothing to report */
  ld_sync_session_t session;
  bool has_session;
  ld_sync_view_t view; /* the set of the session's scope */
  ld_buf_t rx, body, tx;
  size_t tx_off;
  uint64_t read_deadline_ms, session_deadline_ms;
  size_t have, need;
  /* by_content_topic: our content topics for the session (strings owned by the sets) */
  ld_sync_topic_t *content;
  size_t n_content;
  /* presence (on_presence, initiator): our items the peer lacked, when the session started, and
   * whether the peer's first answer was a zero-length frame (disjoint scopes) */
  ld_sync_ids_t lacked;
  uint64_t started_ms;
  bool disjoint;
  int err; /* what cut the session short (0 while none) */
  ld_store_sync_done_fn done;
  void *user_data;
};

static const ld_stream_handler_t k_handler;

/* ---- life -------------------------------------------------------------------------------------
 */

static recon_t *recon_new(ld_store_sync_t *s, sync_peer_t *p, bool initiator) {
  recon_t *r = calloc(1, sizeof *r);
  if (r == NULL)
    return NULL;
  r->svc = s;
  r->peer = p;
  r->initiator = initiator;
  ld_sync_view_init(&r->view);
  ld_buf_init(&r->rx);
  ld_buf_init(&r->body);
  ld_buf_init(&r->tx);
  r->next = s->recons;
  if (s->recons != NULL)
    s->recons->prev = r;
  s->recons = r;
  s->n_recons++;
  if (initiator)
    p->sessions_out++;
  else
    p->sessions_in++;
  uint64_t now = ld_store_sync__now_ms(s);
  r->read_deadline_ms = now + s->cfg.read_timeout_ms;
  r->session_deadline_ms = now + s->cfg.session_timeout_ms;
  return r;
}

static void observe(uint64_t *counts, double *sum, const double *bounds, size_t n, double v) {
  for (size_t i = 0; i < n; i++)
    if (v <= bounds[i])
      counts[i]++;
  counts[n]++;
  *sum += v;
}

/* The session's outcome in the figures and for its caller. */
static void report(recon_t *r) {
  ld_store_sync_t *s = r->svc;
  ld_store_sync_result_t res = {0};
  res.err = r->err;
  if (res.err == 0 && !(r->has_session && ld_sync_session_complete(&r->session)))
    res.err = r->has_session && r->session.error != 0 ? r->session.error : LD_ERR_CLOSED;
  res.have = r->have;
  res.need = r->need;
  if (r->has_session) {
    res.frames_in = r->session.frames_in;
    res.frames_out = r->session.frames_out;
    res.bytes_in = r->session.bytes_in;
    res.bytes_out = r->session.bytes_out;
  }
  if (res.err == 0)
    s->stats.sessions_complete++;
  else
    s->stats.sessions_failed++;
  if (res.frames_in > 0) {
    observe(s->stats.roundtrips, &s->stats.roundtrips_sum, ld_store_sync_roundtrip_bounds,
            LD_STORE_SYNC_ROUNDTRIP_BUCKETS, (double)res.frames_in);
    observe(s->stats.differences, &s->stats.differences_sum, ld_store_sync_difference_bounds,
            LD_STORE_SYNC_DIFFERENCE_BUCKETS, (double)(res.have + res.need));
  }
  if (res.err != 0)
    LD_DEBUG(LOG_TOPIC, "session (%s) ended: %s", r->initiator ? "initiator" : "responder",
             ld_errname(res.err));
  else
    LD_DEBUG(LOG_TOPIC, "session (%s) complete: %zu to push, %zu to receive, %zu payloads in",
             r->initiator ? "initiator" : "responder", res.have, res.need, res.frames_in);
  if (r->done != NULL)
    r->done(&res, r->user_data);
}

/* The presence a complete session we initiated established (service.h). */
static void tell_presence(recon_t *r) {
  ld_store_sync_t *s = r->svc;
  if (!r->initiator || s->cfg.on_presence == NULL || r->silent || r->err != 0 || r->disjoint ||
      !r->has_session || !ld_sync_session_complete(&r->session) || r->session.frames_in == 0)
    return;
  s->cfg.on_presence(s->cfg.presence_user, &r->peer->id, r->started_ms, r->session.cfg.window_start,
                     r->lacked.v, r->lacked.n);
}

/* The stream is over (or never opened): reports, frees, and lets the peer's push finish. */
static void recon_end(recon_t *r) {
  ld_store_sync_t *s = r->svc;
  sync_peer_t *p = r->peer;
  if (!r->silent)
    report(r);
  tell_presence(r);
  ld_sync_ids_clear(&r->lacked);
  free(r->content);
  if (r->initiator)
    p->sessions_out--;
  else
    p->sessions_in--;
  uint64_t until = ld_store_sync__now_ms(s) + s->cfg.solicit_ttl_ms;
  if (until > p->solicit_until_ms)
    p->solicit_until_ms = until;
  if (r->prev != NULL)
    r->prev->next = r->next;
  else
    s->recons = r->next;
  if (r->next != NULL)
    r->next->prev = r->prev;
  s->n_recons--;
  if (r->has_session)
    ld_sync_session_clear(&r->session);
  ld_sync_view_clear(&r->view);
  ld_buf_clear(&r->rx);
  ld_buf_clear(&r->body);
  ld_buf_clear(&r->tx);
  free(r);
  ld_store_sync__push_pump(p);
  ld_store_sync__peer_maybe_release(p);
}

static void fail(recon_t *r, int err) {
  if (r->err == 0 && !r->finishing)
    r->err = err;
  if (r->stream != NULL)
    ld_stream_reset(r->stream);
}

/* ---- the session ------------------------------------------------------------------------------
 */

static int scope(void *user, const ld_sync_topic_t *pubsub, size_t n_pubsub,
                 const ld_sync_topic_t *content, size_t n_content, ld_sync_set_t *out) {
  (void)content;
  recon_t *r = user;
  ld_store_sync_t *s = r->svc;
  int rc;
  if (s->cfg.by_content_topic) {
    (void)pubsub;
    (void)n_pubsub;
    if (n_content == 0) /* our sets are per content topic only */
      return LD_ERR_NOT_FOUND;
    for (size_t i = 0; i < n_content; i++) /* a topic we never saw is an empty set */
      if ((rc = ld_sync_shards_ensure(s->shards, content[i].data, content[i].len)) == LD_ERR_NOMEM)
        return rc;
    rc = ld_sync_view_select(&r->view, s->shards, content, n_content);
    if (rc == 0)
      *out = ld_sync_view_set(&r->view);
    return rc;
  }
  if (n_content > 0) /* our sets are per pubsub topic only */
    return LD_ERR_NOT_FOUND;
  rc = ld_sync_view_select(&r->view, s->shards, pubsub, n_pubsub);
  if (rc == 0)
    *out = ld_sync_view_set(&r->view);
  return rc;
}

/* by_content_topic: every content topic we keep, for the session's own scope. */
static int content_scope(recon_t *r) {
  const ld_sync_shards_t *sets = r->svc->shards;
  size_t n = ld_sync_shards_count(sets);
  if (n == 0)
    return 0;
  r->content = calloc(n, sizeof *r->content);
  if (r->content == NULL)
    return LD_ERR_NOMEM;
  for (size_t i = 0; i < n; i++) {
    r->content[i].data = (char *)ld_sync_shards_topic(sets, i);
    r->content[i].len = strlen(r->content[i].data);
  }
  r->n_content = n;
  return 0;
}

static int init_session(recon_t *r) {
  ld_store_sync_t *s = r->svc;
  int rc = ld_sync_view_select(&r->view, s->shards, NULL, 0);
  if (rc == LD_ERR_NOT_FOUND && s->cfg.by_content_topic)
    rc = 0; /* no content topic yet: the peer's list is the scope (session.h) */
  if (rc != 0)
    return rc;
  if (s->cfg.by_content_topic && (rc = content_scope(r)) != 0)
    return rc;
  r->started_ms = ld_store_sync__now_ms(s);
  int64_t now = ld_store_sync__now_ns(s);
  ld_sync_session_config_t cfg;
  ld_sync_session_config_init(&cfg, ld_sync_view_set(&r->view), now);
  cfg.limits = s->limits;
  cfg.window_end = now - s->cfg.jitter_ns;
  cfg.window_start = cfg.window_end - s->cfg.range_ns;
  cfg.pubsub_topics = s->topics;
  cfg.n_pubsub_topics = s->n_topics;
  cfg.content_topics = r->content;
  cfg.n_content_topics = r->n_content;
  cfg.scope = scope;
  cfg.user = r;
  rc = ld_sync_session_init(&r->session, &cfg, r->initiator);
  r->has_session = rc == 0;
  return rc;
}

/* Hands what the last payload found to the peer's state: our items it lacks to its push, its
 * items we lack and the spans we showed it to what it may push us. */
static int harvest(recon_t *r) {
  sync_peer_t *p = r->peer;
  ld_sync_ranges_t *rg = &r->session.ranges;
  if (r->initiator && r->svc->cfg.on_presence != NULL)
    for (size_t i = 0; i < rg->have.n; i++)
      if (ld_sync_ids_push(&r->lacked, &rg->have.v[i]) != 0)
        return LD_ERR_NOMEM;
  if (rg->have.n > 0) {
    ld_store_sync__push(p, rg->have.v, rg->have.n);
    r->have += rg->have.n;
    rg->have.n = 0;
  }
  if (rg->need.n > 0 && p->need == NULL && ld_sync_tree_new(&p->need) != 0)
    return LD_ERR_NOMEM;
  for (size_t i = 0; i < rg->need.n; i++) {
    int rc = ld_sync_tree_insert(p->need, &rg->need.v[i]);
    if (rc != 0 && rc != LD_ERR_EXISTS)
      return rc;
  }
  r->need += rg->need.n;
  rg->need.n = 0;
  int rc = ld_sync_spans_merge(&p->offered, &r->session.offered);
  r->session.offered.n = 0;
  return rc;
}

/* ---- writing ----------------------------------------------------------------------------------
 */

static void finish(recon_t *r) {
  if (r->finishing || r->tx_off < r->tx.len)
    return;
  r->finishing = true;
  r->read_deadline_ms = ld_store_sync__now_ms(r->svc) + r->svc->cfg.read_timeout_ms;
  if (ld_stream_close_write(r->stream) != 0)
    ld_stream_reset(r->stream);
}

static void pump(recon_t *r) {
  while (r->tx_off < r->tx.len && ld_stream_buffered(r->stream) < WRITE_CHUNK) {
    size_t n = r->tx.len - r->tx_off;
    if (n > WRITE_CHUNK)
      n = WRITE_CHUNK;
    int rc = ld_stream_write(r->stream, r->tx.data + r->tx_off, n);
    if (rc == LD_ERR_LIMIT)
      return; /* on_drain */
    if (rc != 0) {
      fail(r, rc);
      return;
    }
    r->tx_off += n;
  }
  if (r->tx_off == r->tx.len) {
    ld_buf_reset(&r->tx);
    r->tx_off = 0;
    if (r->has_session && ld_sync_session_done(&r->session))
      finish(r);
  }
}

/* Queues r->body as one frame. */
static int send_body(recon_t *r) {
  uint8_t *dst;
  int rc = ld_reqresp_append_frame(&r->tx, r->body.len, &dst);
  if (rc != 0)
    return rc;
  if (r->body.len > 0)
    memcpy(dst, r->body.data, r->body.len);
  r->svc->stats.recon_bytes_out += r->body.len;
  return 0;
}

/* ---- reading ----------------------------------------------------------------------------------
 */

static int take_frame(recon_t *r, const uint8_t *body, size_t len) {
  r->svc->stats.recon_bytes_in += len;
  if (len == 0 && r->session.frames_in == 0)
    r->disjoint = true;
  ld_buf_reset(&r->body);
  bool reply = false;
  int rc = ld_sync_session_receive(&r->session, body, len, &r->body, &reply);
  int hv = harvest(r);
  if (rc == 0 && reply)
    rc = send_body(r);
  return rc != 0 ? rc : hv;
}

static void on_data(ld_stream_t *st, const uint8_t *data, size_t len) {
  recon_t *r = ld_stream_user_data(st);
  if (r->finishing || r->err != 0 || !r->has_session || ld_sync_session_done(&r->session))
    return; /* nothing more is read once the session is over */
  ld_store_sync_t *s = r->svc;
  r->read_deadline_ms = ld_store_sync__now_ms(s) + s->cfg.read_timeout_ms;
  if (r->rx.len + len > s->cfg.max_payload + LD_PBVARINT_MAX_LEN) {
    fail(r, LD_ERR_TOO_LARGE);
    return;
  }
  if (ld_buf_append(&r->rx, data, len) != 0) {
    fail(r, LD_ERR_NOMEM);
    return;
  }
  size_t used = 0;
  while (!ld_sync_session_done(&r->session)) {
    const uint8_t *body;
    size_t n;
    int took =
        ld_reqresp_read_frame(r->rx.data + used, r->rx.len - used, s->cfg.max_payload, &body, &n);
    if (took == LD_ERR_TRUNCATED)
      break;
    int rc = took < 0 ? took : take_frame(r, body, n);
    if (rc != 0) {
      fail(r, rc);
      return;
    }
    used += (size_t)took;
  }
  ld_buf_consume(&r->rx, used);
  pump(r);
}

static void on_eof(ld_stream_t *st) {
  recon_t *r = ld_stream_user_data(st);
  if (!r->has_session || !ld_sync_session_done(&r->session)) {
    fail(r, LD_ERR_TRUNCATED); /* the peer left in the middle */
    return;
  }
  finish(r);
}

static void on_drain(ld_stream_t *st) {
  recon_t *r = ld_stream_user_data(st);
  if (r->err == 0)
    pump(r);
}

static void on_close(ld_stream_t *st, int err) {
  recon_t *r = ld_stream_user_data(st);
  if (r->err == 0 && !(r->has_session && ld_sync_session_done(&r->session)))
    r->err = err != 0 ? err : LD_ERR_CLOSED;
  r->stream = NULL;
  recon_end(r);
}

static const ld_stream_handler_t k_handler = {on_data, on_eof, on_close, on_drain};

/* ---- the two roles ----------------------------------------------------------------------------
 */

static void refuse(ld_store_sync_t *s, ld_stream_t *st, const char *why) {
  s->stats.sessions_refused++;
  LD_DEBUG(LOG_TOPIC, "reconciliation stream refused: %s", why);
  ld_stream_reset(st);
}

void ld_store_sync__recon_accept(ld_stream_t *st, void *user_data) {
  ld_store_sync_t *s = user_data;
  const ld_peerid_t *id = ld_conn_remote_peer(ld_stream_conn(st));
  if (s->stopped || !s->ready) {
    refuse(s, st, "not ready");
    return;
  }
  if (ld_store_sync_banned(s, id)) {
    refuse(s, st, "peer banned");
    return;
  }
  sync_peer_t *p = s->n_recons < s->cfg.max_sessions ? ld_store_sync__peer(s, id, true) : NULL;
  if (p == NULL || p->sessions_in > 0) {
    refuse(s, st, "too many sessions");
    return;
  }
  recon_t *r = recon_new(s, p, false);
  if (r == NULL) {
    refuse(s, st, "out of memory");
    ld_store_sync__peer_maybe_release(p);
    return;
  }
  s->stats.sessions_accepted++;
  r->stream = st;
  ld_stream_set_handler(st, &k_handler, r);
  if (init_session(r) != 0)
    fail(r, LD_ERR_NOMEM);
}

static void on_opened(ld_stream_t *st, int err, void *user_data) {
  recon_t *r = user_data;
  r->opening = false;
  if (st != NULL && (r->abandoned || r->svc->stopped))
    err = LD_ERR_CANCELED;
  if (err != 0) {
    if (st != NULL) {
      r->err = err;
      r->stream = st;
      ld_stream_set_handler(st, &k_handler, r);
      ld_stream_reset(st); /* on_close ends it */
      return;
    }
    r->err = err;
    recon_end(r);
    return;
  }
  r->stream = st;
  ld_stream_set_handler(st, &k_handler, r);
  int rc = init_session(r);
  ld_buf_reset(&r->body);
  if (rc == 0)
    rc = ld_sync_session_start(&r->session, &r->body);
  if (rc == 0)
    rc = harvest(r);
  if (rc == 0)
    rc = send_body(r);
  if (rc != 0) {
    fail(r, rc);
    return;
  }
  pump(r);
}

int ld_store_sync__recon_start(ld_store_sync_t *s, sync_peer_t *p, ld_conn_t *c,
                               ld_store_sync_done_fn done, void *user_data) {
  recon_t *r = recon_new(s, p, true);
  if (r == NULL)
    return LD_ERR_NOMEM;
  r->opening = true;
  const char *proto = LD_SYNC_RECONCILIATION_PROTOCOL;
  int rc = ld_switch_open_stream(s->sw, c, &proto, 1, on_opened, r);
  if (rc != 0) {
    r->silent = true; /* a failed start reports nothing */
    recon_end(r);
    return rc;
  }
  r->done = done;
  r->user_data = user_data;
  s->stats.sessions_started++;
  return 0;
}

/* ---- deadlines and resets ---------------------------------------------------------------------
 */

void ld_store_sync__recon_tick(ld_store_sync_t *s, uint64_t now_ms) {
  for (recon_t *r = s->recons; r != NULL; r = r->next) {
    if (r->stream == NULL || r->err != 0)
      continue;
    if (r->finishing) {
      if (now_ms >= r->read_deadline_ms)
        ld_stream_reset(r->stream); /* the peer never closed its side */
      continue;
    }
    if (now_ms >= r->read_deadline_ms || now_ms >= r->session_deadline_ms) {
      s->stats.sessions_cut++;
      LD_DEBUG(LOG_TOPIC, "session cut: %s deadline passed",
               now_ms >= r->session_deadline_ms ? "session" : "read");
      fail(r, LD_ERR_TIMEOUT);
    }
  }
}

void ld_store_sync__recon_reset(ld_store_sync_t *s, const sync_peer_t *peer) {
  for (recon_t *r = s->recons; r != NULL; r = r->next) {
    if (peer != NULL && r->peer != peer)
      continue;
    if (r->opening)
      r->abandoned = true;
    else
      fail(r, LD_ERR_CANCELED);
  }
}
