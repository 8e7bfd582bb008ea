#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "base/log.h"
#include "p2p/conn_internal.h"

#define TOPIC "switch"

/* A write queue whose memory grew beyond this is released once it empties. */
#define WQ_KEEP (64u * 1024)

static size_t wq_len(const ld_stream_t *s) {
  return s->wq.len - s->wq_off;
}

static ld_stream_t *stream_get(const ld_conn_t *c, uint64_t sid) {
  return c->streams != NULL ? ld_hashmap_get_u64(c->streams, sid) : NULL;
}

/* ---- life cycle ------------------------------------------------------------------------- */

static ld_stream_t *stream_new(ld_conn_t *c, uint64_t sid, bool inbound) {
  ld_stream_t *s = calloc(1, sizeof *s);
  if (s == NULL)
    return NULL;
  if (ld_hashmap_put_u64(c->streams, sid, s, NULL) != 0) {
    free(s);
    return NULL;
  }
  s->conn = c;
  s->sid = sid;
  s->inbound = inbound;
  ld_buf_init(&s->wq);
  ld_list_push(&c->streams_all, &s->all);
  c->n_streams++;
  return s;
}

static void forget_sid(ld_stream_t *s) {
  ld_conn_t *c = s->conn;
  if (stream_get(c, s->sid) == s)
    ld_hashmap_remove_u64(c->streams, s->sid);
}

static void neg_free(ld_stream_t *s) {
  if (s->neg == NULL)
    return;
  ld_mss_clear(&s->neg->mss);
  free(s->neg);
  s->neg = NULL;
}

static void wq_drop(ld_stream_t *s) {
  s->conn->buffered -= wq_len(s);
  ld_buf_clear(&s->wq);
  s->wq_off = 0;
}

static void stream_free(ld_stream_t *s) {
  ld_conn_t *c = s->conn;
  forget_sid(s);
  ld_link_remove(&s->all);
  ld_link_remove(&s->ready);
  ld_link_remove(&s->negq);
  ld_link_remove(&s->pendq);
  neg_free(s);
  wq_drop(s);
  free(s->protocol_owned);
  c->n_streams--;
  free(s);
}

/* Output is flushed by the I/O callback on the stack, or by the next loop turn. */
static void want_flush(ld_conn_t *c, unsigned flag) {
  if (!c->in_io)
    ld_switch_schedule(c, flag);
}

static void schedule_stream(ld_stream_t *s) {
  ld_conn_t *c = s->conn;
  if (!ld_link_linked(&s->pendq))
    ld_list_push(&c->streams_pending, &s->pendq);
  ld_switch_schedule(c, CONN_PEND_STREAMS);
}

/* The stream is over: the muxer no longer knows it, the last callback comes from the loop. */
static void stream_finish(ld_stream_t *s, int err) {
  if (s->state == STREAM_DONE)
    return;
  s->state = STREAM_DONE;
  s->close_err = err;
  s->close_pending = true;
  forget_sid(s);
  ld_link_remove(&s->ready);
  ld_link_remove(&s->negq);
  wq_drop(s);
  schedule_stream(s);
}

/* Resets the stream in the muxer and finishes it. */
static void stream_abort(ld_stream_t *s, int err) {
  ld_conn_t *c = s->conn;
  if (s->state == STREAM_DONE)
    return;
  if (c->mux != NULL) {
    c->mops->reset(c->mux, s->sid);
    want_flush(c, CONN_PEND_FLUSH);
  }
  stream_finish(s, err);
}

static void deliver_close(ld_stream_t *s) {
  if (s->user_owned) {
    if (s->h != NULL && s->h->on_close != NULL)
      s->h->on_close(s, s->close_err);
  } else if (!s->inbound && s->neg != NULL && s->neg->cb != NULL) {
    s->neg->cb(NULL, s->close_err, s->neg->cb_data);
  }
  stream_free(s);
}

void ld_conn_streams_process(ld_conn_t *c) {
  while (!ld_list_empty(&c->streams_pending)) {
    ld_stream_t *s = LD_CONTAINER_OF(c->streams_pending.next, ld_stream_t, pendq);
    ld_link_remove(&s->pendq);
    if (s->close_pending) {
      deliver_close(s);
      continue;
    }
    if (s->drain_pending && s->state == STREAM_OPEN) {
      s->drain_pending = false;
      if (s->h != NULL && s->h->on_drain != NULL)
        s->h->on_drain(s);
    }
  }
}

void ld_conn_streams_teardown(ld_conn_t *c, int err) {
  while (!ld_list_empty(&c->streams_all)) {
    ld_stream_t *s = LD_CONTAINER_OF(c->streams_all.next, ld_stream_t, all);
    stream_finish(s, err);
    deliver_close(s);
  }
}

/* ---- sending ---------------------------------------------------------------------------- */

static bool congested(const ld_conn_t *c) {
  return (c->t != NULL && ld_tconn_queued(c->t) > LD_TCONN_HIGH_WATER) ||
         c->mops->pending_output(c->mux) > LD_CONN_MUXER_OUTPUT_CAP;
}

/* Hands bytes to the muxer and queues what it does not take (window, congestion). */
static int stream_send(ld_stream_t *s, const uint8_t *data, size_t len) {
  ld_conn_t *c = s->conn;
  size_t done = 0;
  if (wq_len(s) == 0 && !s->blocked && !congested(c)) {
    int64_t n = c->mops->write(c->mux, s->sid, data, len);
    if (n < 0)
      return (int)n;
    done = (size_t)n;
    s->blocked = done < len;
    if (done > 0)
      want_flush(c, CONN_PEND_FLUSH);
  }
  if (done == len)
    return 0;
  int rc = ld_buf_append(&s->wq, data + done, len - done);
  if (rc != 0)
    return rc;
  c->buffered += len - done;
  if (!s->blocked && !ld_link_linked(&s->ready)) {
    ld_list_push(&c->streams_ready, &s->ready);
    want_flush(c, CONN_PEND_PUMP);
  }
  return 0;
}

static void send_fin(ld_stream_t *s) {
  ld_conn_t *c = s->conn;
  s->fin_sent = true;
  c->mops->close_write(c->mux, s->sid);
  want_flush(c, CONN_PEND_FLUSH);
  if (s->remote_eof)
    stream_finish(s, 0);
}

static void queue_emptied(ld_stream_t *s) {
  if (s->wq.cap > WQ_KEEP)
    ld_buf_clear(&s->wq);
  ld_buf_reset(&s->wq);
  s->wq_off = 0;
  if (s->state == STREAM_OPEN && s->write_closed && !s->fin_sent)
    send_fin(s);
  if (s->state == STREAM_OPEN && s->want_drain) {
    s->want_drain = false;
    s->drain_pending = true;
    schedule_stream(s);
  }
}

/* Moves up to `budget` queued bytes into the muxer; returns how many it took. */
static size_t pump_stream(ld_stream_t *s, size_t budget) {
  ld_conn_t *c = s->conn;
  size_t n = wq_len(s) < budget ? wq_len(s) : budget;
  int64_t w = c->mops->write(c->mux, s->sid, s->wq.data + s->wq_off, n);
  if (w < 0) {
    wq_drop(s);
    return 0;
  }
  s->wq_off += (size_t)w;
  c->buffered -= (size_t)w;
  s->blocked = (size_t)w < n;
  if (wq_len(s) == 0) {
    queue_emptied(s);
  } else {
    if (s->wq_off > WQ_KEEP && s->wq_off > s->wq.len / 2) {
      ld_buf_consume(&s->wq, s->wq_off);
      s->wq_off = 0;
    }
    if (!s->blocked)
      ld_list_push(&c->streams_ready, &s->ready);
  }
  return (size_t)w;
}

void ld_conn_pump(ld_conn_t *c) {
  if (c->state != CONN_OPEN)
    return;
  size_t budget = LD_CONN_PUMP_BUDGET;
  ld_link_t *head = &c->streams_ready;
  while (!ld_list_empty(head) && budget > 0 && !congested(c)) {
    ld_stream_t *s = LD_CONTAINER_OF(head->next, ld_stream_t, ready);
    ld_link_remove(&s->ready);
    budget -= pump_stream(s, budget);
  }
  ld_conn_flush(c);
  if (c->state == CONN_OPEN && !ld_list_empty(head) && !congested(c))
    ld_switch_schedule(c, CONN_PEND_PUMP);
}

/* ---- negotiation ------------------------------------------------------------------------ */

static void negotiation_done(ld_stream_t *s, const uint8_t *rest, size_t n) {
  ld_conn_t *c = s->conn;
  ld_stream_neg_t *neg = s->neg;
  const char *sel = ld_mss_selected(&neg->mss);
  ld_link_remove(&s->negq);
  s->neg = NULL;
  s->state = STREAM_OPEN;
  s->user_owned = true;
  if (s->inbound) {
    const ld_switch_proto_t *p = ld_switch_find_protocol(c->sw, sel);
    s->protocol = p->id;
    p->accept(s, p->user_data);
  } else {
    s->protocol_owned = strdup(sel);
    s->protocol = s->protocol_owned != NULL ? s->protocol_owned : "";
    neg->cb(s, 0, neg->cb_data);
  }
  if (s->state == STREAM_OPEN && s->h == NULL) {
    LD_DEBUG(TOPIC, "no handler installed for %s: resetting", s->protocol);
    stream_abort(s, LD_ERR_RESET);
  }
  ld_mss_clear(&neg->mss);
  free(neg);
  if (n > 0 && s->state == STREAM_OPEN && s->h != NULL && s->h->on_data != NULL)
    s->h->on_data(s, rest, n);
}

static void negotiate(ld_stream_t *s, const uint8_t *data, size_t len) {
  ld_buf_t *out = &s->conn->sw->mss_out;
  ld_buf_reset(out);
  size_t used = 0;
  int rc = ld_mss_read(&s->neg->mss, data, len, &used, out);
  if (out->len > 0 && stream_send(s, out->data, out->len) != 0 && rc >= 0)
    rc = LD_ERR_CLOSED;
  if (rc < 0) {
    LD_DEBUG(TOPIC, "stream negotiation with %s failed: %s", s->conn->peer_text, ld_errname(rc));
    stream_abort(s, rc);
    return;
  }
  if (rc == LD_MSS_DONE)
    negotiation_done(s, data + used, len - used);
}

/* Copies the proposals into a fresh negotiation record; NULL when one is empty or too long. */
static ld_stream_neg_t *neg_new_outbound(const char *const *protocols, size_t n) {
  size_t total = 0;
  for (size_t i = 0; i < n; i++) {
    size_t l = protocols[i] != NULL ? strlen(protocols[i]) : 0;
    if (l == 0 || l >= LD_MSS_MAX_MESSAGE)
      return NULL;
    total += l + 1;
  }
  ld_stream_neg_t *neg = calloc(1, sizeof *neg + total);
  if (neg == NULL)
    return NULL;
  char *p = neg->names;
  for (size_t i = 0; i < n; i++) {
    neg->protos[i] = p;
    p = stpcpy(p, protocols[i]) + 1;
  }
  neg->n_protos = n;
  ld_mss_init_initiator(&neg->mss, neg->protos, n);
  return neg;
}

/* Sends the header and the first proposal and starts the negotiation clock. */
static int start_outbound(ld_stream_t *s) {
  ld_conn_t *c = s->conn;
  s->neg->deadline = ld_conn_now(c) + c->sw->cfg.negotiation_timeout_ms;
  ld_list_push(&c->streams_neg, &s->negq);
  ld_buf_t *out = &c->sw->mss_out;
  ld_buf_reset(out);
  int rc = ld_mss_start(&s->neg->mss, out);
  return rc != 0 ? rc : stream_send(s, out->data, out->len);
}

int ld_conn_open_stream(ld_conn_t *c, const char *const *protocols, size_t n, ld_open_stream_cb cb,
                        void *user_data) {
  if (c->state != CONN_OPEN)
    return LD_ERR_CLOSED;
  if (n == 0 || n > LD_CONN_MAX_PROPOSALS || cb == NULL)
    return LD_ERR_INVALID_ARG;
  if (c->n_streams >= c->sw->cfg.max_streams_per_conn)
    return LD_ERR_TOO_MANY_STREAMS;
  ld_stream_neg_t *neg = neg_new_outbound(protocols, n);
  if (neg == NULL)
    return LD_ERR_INVALID_ARG;
  neg->cb = cb;
  neg->cb_data = user_data;
  uint64_t sid;
  int rc = c->mops->open_stream(c->mux, &sid);
  ld_stream_t *s = rc == 0 ? stream_new(c, sid, false) : NULL;
  if (s == NULL) {
    if (rc == 0)
      c->mops->reset(c->mux, sid);
    free(neg);
    return rc != 0 ? rc : LD_ERR_NOMEM;
  }
  s->neg = neg;
  rc = start_outbound(s);
  if (rc != 0) {
    c->mops->reset(c->mux, sid);
    stream_free(s);
    return rc;
  }
  ld_conn_arm_timer(c);
  return 0;
}

uint64_t ld_conn_streams_next_deadline(const ld_conn_t *c) {
  if (ld_list_empty(&c->streams_neg))
    return UINT64_MAX;
  const ld_stream_t *s = LD_CONTAINER_OF(c->streams_neg.next, ld_stream_t, negq);
  return s->neg->deadline;
}

uint64_t ld_conn_streams_expire(ld_conn_t *c, uint64_t now) {
  while (!ld_list_empty(&c->streams_neg)) {
    ld_stream_t *s = LD_CONTAINER_OF(c->streams_neg.next, ld_stream_t, negq);
    if (s->neg->deadline > now)
      return s->neg->deadline;
    LD_DEBUG(TOPIC, "stream negotiation with %s timed out", c->peer_text);
    stream_abort(s, LD_ERR_TIMEOUT);
  }
  return UINT64_MAX;
}

/* ---- muxer callbacks -------------------------------------------------------------------- */

static int mx_open(void *ud, uint64_t sid) {
  ld_conn_t *c = ud;
  if (c->state != CONN_OPEN || c->n_streams >= c->sw->cfg.max_streams_per_conn) {
    c->mops->reset(c->mux, sid);
    if (c->state == CONN_OPEN && ++c->violations > LD_CONN_MAX_STREAM_VIOLATIONS)
      return LD_ERR_TOO_MANY_STREAMS;
    return 0;
  }
  ld_stream_neg_t *neg = calloc(1, sizeof *neg);
  ld_stream_t *s = neg != NULL ? stream_new(c, sid, true) : NULL;
  if (s == NULL) {
    free(neg);
    c->mops->reset(c->mux, sid);
    return 0;
  }
  s->neg = neg;
  ld_mss_init_listener(&neg->mss, ld_switch_select_protocol, ld_switch_list_protocols, c->sw);
  neg->deadline = ld_conn_now(c) + c->sw->cfg.negotiation_timeout_ms;
  ld_list_push(&c->streams_neg, &s->negq);
  return 0;
}

static int mx_data(void *ud, uint64_t sid, const uint8_t *data, size_t len) {
  ld_conn_t *c = ud;
  ld_stream_t *s = stream_get(c, sid);
  if (s == NULL || s->state == STREAM_DONE)
    return 0;
  if (s->state == STREAM_NEGOTIATING)
    negotiate(s, data, len);
  else if (s->h != NULL && s->h->on_data != NULL)
    s->h->on_data(s, data, len);
  if (s->state != STREAM_DONE && c->mux != NULL)
    c->mops->consumed(c->mux, sid, len);
  return 0;
}

static int mx_eof(void *ud, uint64_t sid) {
  ld_stream_t *s = stream_get(ud, sid);
  if (s == NULL || s->state == STREAM_DONE)
    return 0;
  s->remote_eof = true;
  if (s->state == STREAM_NEGOTIATING) {
    stream_abort(s, LD_ERR_CLOSED);
    return 0;
  }
  if (s->h != NULL && s->h->on_eof != NULL)
    s->h->on_eof(s);
  if (s->state == STREAM_OPEN && s->fin_sent)
    stream_finish(s, 0);
  return 0;
}

static int mx_reset(void *ud, uint64_t sid) {
  ld_stream_t *s = stream_get(ud, sid);
  if (s != NULL)
    stream_finish(s, LD_ERR_RESET);
  return 0;
}

static int mx_writable(void *ud, uint64_t sid) {
  ld_conn_t *c = ud;
  ld_stream_t *s = stream_get(c, sid);
  if (s == NULL || s->state == STREAM_DONE)
    return 0;
  s->blocked = false;
  if (wq_len(s) > 0 && !ld_link_linked(&s->ready)) {
    ld_list_push(&c->streams_ready, &s->ready);
    want_flush(c, CONN_PEND_PUMP);
  }
  return 0;
}

static int mx_go_away(void *ud, uint32_t code) {
  ld_conn_t *c = ud;
  c->go_away = true;
  LD_DEBUG(TOPIC, "peer %s sent GO_AWAY %u", c->peer_text, code);
  return 0;
}

const ld_muxer_callbacks_t ld_conn_muxer_callbacks = {
    .on_stream_open = mx_open,
    .on_stream_data = mx_data,
    .on_stream_eof = mx_eof,
    .on_stream_reset = mx_reset,
    .on_stream_writable = mx_writable,
    .on_go_away = mx_go_away,
};

/* ---- public API (stream.h) -------------------------------------------------------------- */

void ld_stream_set_handler(ld_stream_t *s, const ld_stream_handler_t *h, void *user_data) {
  s->h = h;
  s->user_data = user_data;
}

void *ld_stream_user_data(const ld_stream_t *s) {
  return s->user_data;
}

int ld_stream_write(ld_stream_t *s, const uint8_t *data, size_t len) {
  ld_conn_t *c = s->conn;
  if (s->state != STREAM_OPEN || s->write_closed || c->state != CONN_OPEN)
    return LD_ERR_CLOSED;
  if (len == 0)
    return 0;
  if (wq_len(s) + len > LD_STREAM_MAX_BUFFERED || c->buffered + len > LD_CONN_MAX_BUFFERED)
    return LD_ERR_LIMIT;
  int rc = stream_send(s, data, len);
  if (rc == LD_ERR_NOT_FOUND)
    rc = LD_ERR_CLOSED;
  if (rc == 0 && wq_len(s) > 0)
    s->want_drain = true;
  return rc;
}

size_t ld_stream_buffered(const ld_stream_t *s) {
  return wq_len(s);
}

int ld_stream_close_write(ld_stream_t *s) {
  if (s->state != STREAM_OPEN || s->conn->state != CONN_OPEN)
    return LD_ERR_CLOSED;
  if (s->write_closed)
    return 0;
  s->write_closed = true;
  if (wq_len(s) == 0)
    send_fin(s);
  return 0;
}

void ld_stream_reset(ld_stream_t *s) {
  stream_abort(s, LD_ERR_RESET);
}

const char *ld_stream_protocol(const ld_stream_t *s) {
  return s->protocol;
}

ld_conn_t *ld_stream_conn(const ld_stream_t *s) {
  return s->conn;
}

bool ld_stream_is_inbound(const ld_stream_t *s) {
  return s->inbound;
}
