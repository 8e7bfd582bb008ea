#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "base/log.h"
#include "p2p/conn_internal.h"

#define TOPIC "switch"

/* Scratch buffers bigger than this are released after use. */
#define SCRATCH_KEEP (4u * 1024 * 1024)

static void on_tconn_connect(ld_tconn_t *t, int err, void *ud);
static void on_tconn_read(ld_tconn_t *t, const uint8_t *data, size_t len, void *ud);
static void on_tconn_drain(ld_tconn_t *t, void *ud);
static void on_tconn_error(ld_tconn_t *t, int err, void *ud);

static const ld_tconn_events_t tconn_events = {
    .on_connect = on_tconn_connect,
    .on_read = on_tconn_read,
    .on_drain = on_tconn_drain,
    .on_error = on_tconn_error,
};

uint64_t ld_conn_now(const ld_conn_t *c) {
  return uv_now(c->sw->loop);
}

const char *ld_conn_peer_text(const ld_conn_t *c) {
  return c->peer_text;
}

static void set_addr_text(ld_conn_t *c, const ld_multiaddr_t *addr) {
  char text[LD_MULTIADDR_TEXT_MAX];
  if (ld_multiaddr_to_text(addr, text, sizeof text) < 0)
    strcpy(text, "?");
  size_t n = strlen(text);
  if (n >= sizeof c->addr_text)
    n = sizeof c->addr_text - 1;
  memcpy(c->addr_text, text, n);
  c->addr_text[n] = '\0';
}

/* ---- creation and destruction ----------------------------------------------------------- */

ld_conn_t *ld_conn_new(ld_switch_t *sw, bool outbound) {
  ld_conn_t *c = calloc(1, sizeof *c);
  if (c == NULL)
    return NULL;
  c->streams = ld_hashmap_new(16);
  if (c->streams == NULL || uv_timer_init(sw->loop, &c->timer) != 0) {
    ld_hashmap_free(c->streams, NULL);
    free(c);
    return NULL;
  }
  c->sw = sw;
  c->outbound = outbound;
  c->timer.data = c;
  c->timer_at = UINT64_MAX;
  ld_list_init(&c->streams_all);
  ld_list_init(&c->streams_ready);
  ld_list_init(&c->streams_neg);
  ld_list_init(&c->streams_pending);
  ld_buf_init(&c->inbuf);
  strcpy(c->peer_text, "unknown");
  strcpy(c->addr_text, "?");
  ld_list_push(&sw->conns, &c->link);
  sw->n_conns++;
  return c;
}

static void conn_freed(uv_handle_t *h) {
  free(h->data);
}

static void free_waiters(ld_conn_t *c) {
  while (c->waiters != NULL) {
    ld_dial_waiter_t *w = c->waiters;
    c->waiters = w->next;
    free(w);
  }
}

static void release_engines(ld_conn_t *c) {
  if (c->mux != NULL)
    c->mops->destroy(c->mux);
  c->mux = NULL;
  ld_noise_free(c->noise);
  c->noise = NULL;
  if (c->up != NULL) {
    ld_upgrader_clear(c->up);
    free(c->up);
    c->up = NULL;
  }
  ld_hashmap_free(c->streams, NULL);
  c->streams = NULL;
  ld_buf_clear(&c->inbuf);
}

void ld_conn_discard(ld_conn_t *c) {
  ld_switch_forget_conn(c->sw, c);
  free_waiters(c);
  release_engines(c);
  c->state = CONN_CLOSED;
  uv_close((uv_handle_t *)&c->timer, conn_freed);
}

int ld_conn_add_waiter(ld_conn_t *c, ld_dial_cb cb, void *user_data) {
  ld_dial_waiter_t *w = malloc(sizeof *w);
  if (w == NULL)
    return LD_ERR_NOMEM;
  w->cb = cb;
  w->user_data = user_data;
  w->next = NULL;
  ld_dial_waiter_t **tail = &c->waiters;
  while (*tail != NULL)
    tail = &(*tail)->next;
  *tail = w;
  if (c->state == CONN_OPEN)
    ld_switch_schedule(c, CONN_PEND_WAITERS);
  return 0;
}

/* Delivers the dial callbacks: the connection while it is open, `err` otherwise. */
static void deliver_waiters(ld_conn_t *c, int err) {
  while (c->waiters != NULL && (err != 0 || c->state == CONN_OPEN)) {
    ld_dial_waiter_t *w = c->waiters;
    c->waiters = w->next;
    if (err != 0)
      w->cb(NULL, err, w->user_data);
    else
      w->cb(c, 0, w->user_data);
    free(w);
  }
}

/* ---- closing ---------------------------------------------------------------------------- */

static void log_close(ld_conn_t *c, int err) {
  const char *stage = c->up != NULL                 ? ld_upgrader_stage_name(c->up)
                      : c->state == CONN_CONNECTING ? "connect"
                                                    : "open";
  if (err == 0 || err == LD_ERR_CLOSED || c->stream_closed) /* the peer left, or we decided */
    LD_INFO(TOPIC, "connection closed: peer=%s addr=%s reason=%s stage=%s", c->peer_text,
            c->addr_text, err == 0 ? "LOCAL" : ld_errname(err), stage);
  else
    LD_WARN(TOPIC, "closing connection: peer=%s addr=%s reason=%s (%s) stage=%s", c->peer_text,
            c->addr_text, ld_errname(err), ld_strerror(err), stage);
}

void ld_conn_fail(ld_conn_t *c, int err, bool graceful) {
  if (c->state >= CONN_CLOSING)
    return;
  log_close(c, err);
  bool reading = c->state != CONN_CONNECTING;
  c->state = CONN_CLOSING;
  c->reason = err;
  c->graceful = graceful;
  if (c->t != NULL && reading)
    ld_tconn_pause(c->t, true);
  ld_switch_schedule(c, CONN_PEND_TEARDOWN);
}

static void teardown(ld_conn_t *c) {
  int err = c->reason != 0 ? c->reason : LD_ERR_CLOSED;
  bool graceful = c->graceful && c->mux != NULL && c->t != NULL;
  if (graceful) {
    c->mops->go_away(c->mux, 0);
    ld_conn_flush(c);
  }
  ld_conn_streams_teardown(c, c->stream_closed ? LD_ERR_CLOSED : err);
  if (graceful)
    ld_conn_flush(c);
  deliver_waiters(c, err);
  ld_switch_forget_conn(c->sw, c);
  if (c->reported)
    ld_switch_notify_disconnected(c->sw, c);
  if (c->t != NULL)
    ld_tconn_close(c->t, graceful);
  c->t = NULL;
  release_engines(c);
  c->state = CONN_CLOSED;
  uv_close((uv_handle_t *)&c->timer, conn_freed);
}

/* ---- output ----------------------------------------------------------------------------- */

static void write_raw(ld_conn_t *c, ld_buf_t *b) {
  if (b->len == 0 || c->t == NULL) {
    ld_buf_clear(b);
    return;
  }
  int rc = ld_tconn_write(c->t, b);
  ld_buf_clear(b);
  if (rc != 0)
    ld_conn_fail(c, rc, false);
}

void ld_conn_flush(ld_conn_t *c) {
  if (c->mux == NULL || c->t == NULL || c->state == CONN_CLOSED)
    return;
  if (c->mops->pending_output(c->mux) == 0)
    return;
  ld_buf_t *pt = &c->sw->tx;
  ld_buf_reset(pt);
  int rc = c->mops->take_output(c->mux, pt);
  ld_buf_t wire;
  ld_buf_init(&wire);
  size_t frames = pt->len / LD_NOISE_MAX_PLAINTEXT + 1;
  if (rc == 0)
    rc = ld_buf_reserve(&wire, pt->len + frames * LD_NOISE_FRAME_OVERHEAD);
  if (rc == 0)
    rc = ld_noise_encrypt(c->noise, pt->data, pt->len, &wire);
  if (pt->cap > SCRATCH_KEEP)
    ld_buf_clear(pt);
  if (rc != 0) {
    ld_buf_clear(&wire);
    ld_conn_fail(c, rc, false);
    return;
  }
  write_raw(c, &wire);
}

/* ---- timers ----------------------------------------------------------------------------- */

static void on_timer(uv_timer_t *h);

void ld_conn_arm_timer(ld_conn_t *c) {
  if (c->state == CONN_CLOSED)
    return;
  uint64_t d = UINT64_MAX;
  if (c->state < CONN_OPEN) {
    d = c->upgrade_deadline;
  } else if (c->state == CONN_OPEN) {
    d = c->mops->next_deadline(c->mux);
    uint64_t n = ld_conn_streams_next_deadline(c);
    d = n < d ? n : d;
  }
  if (d == UINT64_MAX) {
    if (c->timer_at != UINT64_MAX)
      uv_timer_stop(&c->timer);
    c->timer_at = UINT64_MAX;
    return;
  }
  if (d >= c->timer_at)
    return; /* the armed timer fires first and re-arms */
  uint64_t now = ld_conn_now(c);
  c->timer_at = d;
  uv_timer_start(&c->timer, on_timer, d > now ? d - now : 0, 0);
}

static void after_io(ld_conn_t *c) {
  c->in_io = false;
  if (c->state == CONN_OPEN)
    ld_conn_pump(c);
  ld_conn_arm_timer(c);
}

static void on_timer(uv_timer_t *h) {
  ld_conn_t *c = h->data;
  uint64_t now = ld_conn_now(c);
  c->timer_at = UINT64_MAX;
  if (c->state < CONN_OPEN && now >= c->upgrade_deadline) {
    ld_conn_fail(c, LD_ERR_TIMEOUT, false);
    return;
  }
  if (c->state == CONN_OPEN && c->mops->next_deadline(c->mux) <= now) {
    int rc = c->mops->handle_timeout(c->mux, now);
    if (rc < 0) {
      ld_conn_fail(c, rc, true);
      return;
    }
  }
  if (c->state == CONN_OPEN) {
    c->in_io = true;
    ld_conn_streams_expire(c, now);
  }
  after_io(c);
}

/* ---- the upgrade ------------------------------------------------------------------------ */

static int start_upgrade(ld_conn_t *c) {
  ld_switch_t *sw = c->sw;
  ld_upgrader_config_t uc = {
      .initiator = c->outbound,
      .identity = &sw->identity,
      .expected_peer = c->has_expected ? &c->expected : NULL,
      .muxers = c->outbound ? sw->dial_muxers : ld_switch_listen_muxers,
      .n_muxers = c->outbound ? sw->n_dial_muxers : 2,
  };
  c->up = malloc(sizeof *c->up);
  if (c->up == NULL)
    return LD_ERR_NOMEM;
  int rc = ld_upgrader_init(c->up, &uc);
  if (rc != 0) {
    free(c->up);
    c->up = NULL;
    return rc;
  }
  c->state = CONN_UPGRADING;
  ld_buf_t out;
  ld_buf_init(&out);
  rc = ld_upgrader_start(c->up, &out);
  if (rc == 0)
    write_raw(c, &out);
  ld_buf_clear(&out);
  return rc;
}

static const ld_muxer_ops_t *muxer_ops(const char *id) {
  if (strcmp(id, ld_yamux_ops.protocol_id) == 0)
    return &ld_yamux_ops;
  if (strcmp(id, ld_mplex_ops.protocol_id) == 0)
    return &ld_mplex_ops;
  return NULL;
}

static int start_muxer(ld_conn_t *c) {
  const char *id = ld_upgrader_muxer(c->up);
  c->mops = muxer_ops(id);
  if (c->mops == NULL)
    return LD_ERR_NEGOTIATION_FAILED;
  c->noise = ld_upgrader_take_noise(c->up);
  c->peer = *ld_noise_remote_peer(c->noise);
  if (c->has_expected && !ld_peerid_equal(&c->peer, &c->expected))
    return LD_ERR_PEER_ID_MISMATCH;
  if (ld_peerid_to_text(&c->peer, c->peer_text, sizeof c->peer_text) < 0)
    strcpy(c->peer_text, "?");
  c->mux = c->mops->create(c->outbound, &c->sw->mcfg, &ld_conn_muxer_callbacks, c);
  return c->mux != NULL ? 0 : LD_ERR_NOMEM;
}

/* The upgrade finished: announce the connection, then hand the muxer its first bytes. */
static int establish(ld_conn_t *c) {
  int rc = start_muxer(c);
  if (rc != 0)
    return rc;
  c->state = CONN_OPEN;
  c->reported = true;
  LD_INFO(TOPIC, "connected: peer=%s addr=%s direction=%s muxer=%s", c->peer_text, c->addr_text,
          c->outbound ? "outbound" : "inbound", c->mops->protocol_id);
  deliver_waiters(c, 0);
  ld_switch_notify_connected(c->sw, c);
  size_t n;
  const uint8_t *rest = ld_upgrader_leftover(c->up, &n);
  if (c->state == CONN_OPEN && n > 0)
    rc = c->mops->read(c->mux, rest, n, ld_conn_now(c));
  ld_upgrader_clear(c->up);
  free(c->up);
  c->up = NULL;
  if (rc < 0)
    ld_conn_fail(c, rc, true);
  return 0;
}

static int feed_upgrade(ld_conn_t *c, const uint8_t *in, size_t len, size_t *used) {
  ld_buf_t out;
  ld_buf_init(&out);
  int rc = ld_upgrader_read(c->up, in, len, used, &out);
  if (rc >= 0)
    write_raw(c, &out);
  ld_buf_clear(&out);
  if (rc == LD_UPGRADER_DONE && c->state == CONN_UPGRADING)
    return establish(c);
  return rc < 0 ? rc : 0;
}

/* ---- input ------------------------------------------------------------------------------ */

static int feed_open(ld_conn_t *c, const uint8_t *in, size_t len, size_t *used) {
  ld_buf_t *rx = &c->sw->rx;
  ld_buf_reset(rx);
  int rc = ld_noise_read(c->noise, in, len, used, NULL, rx);
  if (rc < 0)
    return rc;
  if (rx->len > 0)
    rc = c->mops->read(c->mux, rx->data, rx->len, ld_conn_now(c));
  if (rx->cap > SCRATCH_KEEP)
    ld_buf_clear(rx);
  if (rc < 0)
    ld_conn_fail(c, rc, true); /* flushes the muxer's GO_AWAY */
  return 0;
}

static int feed(ld_conn_t *c, const uint8_t *in, size_t len, size_t *used) {
  if (c->state == CONN_UPGRADING)
    return feed_upgrade(c, in, len, used);
  if (c->state == CONN_OPEN)
    return feed_open(c, in, len, used);
  *used = len;
  return 0;
}

static bool feeding(const ld_conn_t *c) {
  return c->state == CONN_UPGRADING || c->state == CONN_OPEN;
}

/* Feeds in[0..len) and keeps what could not be consumed yet (a partial frame). */
static int feed_direct(ld_conn_t *c, const uint8_t *in, size_t len) {
  size_t pos = 0;
  while (pos < len && feeding(c)) {
    ld_conn_state_t before = c->state;
    size_t used = 0;
    int rc = feed(c, in + pos, len - pos, &used);
    if (rc < 0)
      return rc;
    pos += used;
    if (c->state == before)
      break;
  }
  if (pos == len || !feeding(c))
    return 0;
  if (len - pos > LD_NOISE_MAX_FRAME + 2)
    return LD_ERR_TOO_LARGE;
  return ld_buf_append(&c->inbuf, in + pos, len - pos);
}

static size_t frame_size(const ld_buf_t *b) {
  return b->len < 2 ? 0 : 2 + ((size_t)b->data[0] << 8 | b->data[1]);
}

/* Open connections: completes the partial frame held in inbuf with as few bytes as needed. */
static int complete_frame(ld_conn_t *c, const uint8_t *in, size_t len, size_t *pos) {
  ld_buf_t *b = &c->inbuf;
  if (b->len < 2) {
    size_t take = 2 - b->len < len - *pos ? 2 - b->len : len - *pos;
    int rc = ld_buf_append(b, in + *pos, take);
    if (rc != 0)
      return rc;
    *pos += take;
    if (b->len < 2)
      return 0;
  }
  size_t total = frame_size(b);
  size_t take = total - b->len < len - *pos ? total - b->len : len - *pos;
  int rc = ld_buf_append(b, in + *pos, take);
  if (rc != 0)
    return rc;
  *pos += take;
  if (b->len < total)
    return 0;
  size_t used;
  rc = feed(c, b->data, b->len, &used);
  ld_buf_reset(b);
  return rc;
}

/* Upgrading connections: appends the read to inbuf and feeds it from there. */
static int feed_buffered(ld_conn_t *c, const uint8_t *in, size_t len) {
  ld_buf_t *b = &c->inbuf;
  int rc = ld_buf_append(b, in, len);
  size_t pos = 0;
  while (rc == 0 && pos < b->len && feeding(c)) {
    ld_conn_state_t before = c->state;
    size_t used = 0;
    rc = feed(c, b->data + pos, b->len - pos, &used);
    pos += used;
    if (c->state == before)
      break;
  }
  if (c->inbuf.data != NULL)
    ld_buf_consume(b, pos);
  if (rc == 0 && b->len > LD_NOISE_MAX_FRAME + 2)
    rc = LD_ERR_TOO_LARGE;
  return rc;
}

static void on_tconn_read(ld_tconn_t *t, const uint8_t *data, size_t len, void *ud) {
  (void)t;
  ld_conn_t *c = ud;
  if (!feeding(c))
    return;
  size_t pos = 0;
  int rc = 0;
  c->in_io = true;
  if (c->inbuf.len > 0 && c->state == CONN_OPEN) {
    rc = complete_frame(c, data, len, &pos);
  } else if (c->inbuf.len > 0) {
    rc = feed_buffered(c, data, len);
    pos = len;
  }
  if (rc == 0 && pos < len && feeding(c))
    rc = feed_direct(c, data + pos, len - pos);
  if (rc < 0)
    ld_conn_fail(c, rc, false);
  after_io(c);
}

static void on_tconn_drain(ld_tconn_t *t, void *ud) {
  (void)t;
  ld_conn_t *c = ud;
  if (c->state == CONN_OPEN) {
    c->in_io = true;
    after_io(c);
  }
}

static void on_tconn_error(ld_tconn_t *t, int err, void *ud) {
  (void)t;
  ld_conn_fail(ud, err, false);
}

static void on_tconn_connect(ld_tconn_t *t, int err, void *ud) {
  ld_conn_t *c = ud;
  if (err != 0) {
    c->t = NULL; /* the transport closed it */
    ld_conn_fail(c, err, false);
    return;
  }
  set_addr_text(c, &t->remote);
  int rc = start_upgrade(c);
  if (rc != 0)
    ld_conn_fail(c, rc, false);
}

/* ---- entry points from the switch ------------------------------------------------------- */

int ld_conn_accept(ld_conn_t *c, ld_tconn_t *t) {
  c->t = t;
  set_addr_text(c, &t->remote);
  c->upgrade_deadline = ld_conn_now(c) + c->sw->cfg.handshake_timeout_ms;
  int rc = start_upgrade(c);
  if (rc != 0) {
    ld_tconn_close(t, false);
    c->t = NULL;
    ld_conn_discard(c);
    return rc;
  }
  ld_tconn_start(t, &tconn_events, c);
  ld_conn_arm_timer(c);
  return 0;
}

int ld_conn_dial(ld_conn_t *c, const ld_multiaddr_t *addr, const ld_peerid_t *expected) {
  ld_switch_t *sw = c->sw;
  if (expected != NULL) {
    c->has_expected = true;
    c->expected = *expected;
    ld_peerid_to_text(expected, c->peer_text, sizeof c->peer_text);
  }
  set_addr_text(c, addr);
  c->upgrade_deadline = ld_conn_now(c) + sw->cfg.dial_timeout_ms;
  int rc = sw->tcp->ops->dial(sw->tcp, addr, &tconn_events, c, &c->t);
  if (rc != 0) {
    c->t = NULL;
    ld_conn_discard(c);
    return rc;
  }
  c->state = CONN_CONNECTING;
  ld_conn_arm_timer(c);
  return 0;
}

void ld_conn_process(ld_conn_t *c, unsigned flags) {
  if (c->state == CONN_CLOSED)
    return;
  if (flags & CONN_PEND_TEARDOWN) {
    teardown(c);
    return;
  }
  if (flags & CONN_PEND_STREAMS)
    ld_conn_streams_process(c);
  if (flags & CONN_PEND_WAITERS)
    deliver_waiters(c, 0);
  if (c->state == CONN_OPEN && (flags & (CONN_PEND_PUMP | CONN_PEND_FLUSH)))
    ld_conn_pump(c);
  ld_conn_arm_timer(c);
}

/* ---- public API (stream.h) -------------------------------------------------------------- */

const ld_peerid_t *ld_conn_remote_peer(const ld_conn_t *c) {
  return &c->peer;
}

const ld_pubkey_t *ld_conn_remote_key(const ld_conn_t *c) {
  return c->noise != NULL ? ld_noise_remote_key(c->noise) : NULL;
}

const ld_multiaddr_t *ld_conn_remote_addr(const ld_conn_t *c) {
  return c->t != NULL ? &c->t->remote : NULL;
}

const ld_multiaddr_t *ld_conn_local_addr(const ld_conn_t *c) {
  return c->t != NULL ? &c->t->local : NULL;
}

bool ld_conn_is_outbound(const ld_conn_t *c) {
  return c->outbound;
}

const char *ld_conn_muxer(const ld_conn_t *c) {
  return c->mops != NULL ? c->mops->protocol_id : NULL;
}

size_t ld_conn_stream_count(const ld_conn_t *c) {
  return c->n_streams;
}

void ld_conn_close(ld_conn_t *c, int reason, bool graceful) {
  if (c->state >= CONN_CLOSING)
    return;
  c->stream_closed = true;
  ld_conn_fail(c, reason, graceful);
}

void ld_conn_set_slot(ld_conn_t *c, int slot, void *value) {
  if (slot >= 0 && slot < LD_CONN_MAX_SLOTS)
    c->slots[slot] = value;
}

void *ld_conn_get_slot(const ld_conn_t *c, int slot) {
  return slot >= 0 && slot < LD_CONN_MAX_SLOTS ? c->slots[slot] : NULL;
}

int ld_conn_slot_register(void) {
  static _Atomic int next_slot = 0;
  int slot = next_slot++;
  return slot < LD_CONN_MAX_SLOTS ? slot : LD_ERR_LIMIT;
}
