#include "p2p/ping.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <uv.h>

#include "base/clock.h"
#include "base/error.h"
#include "base/log.h"
#include "crypto/crypto.h"

#define LOG_TOPIC "ping"

/* ---- pure parts ----------------------------------------------------------------------------- */

int ld_ping_echo_feed(ld_ping_echo_t *e, const uint8_t *data, size_t len, ld_buf_t *out) {
  int appended = 0;
  while (len > 0) {
    size_t take = LD_PING_SIZE - e->fill;
    if (take > len)
      take = len;
    memcpy(e->buf + e->fill, data, take);
    e->fill += take;
    data += take;
    len -= take;
    if (e->fill < LD_PING_SIZE)
      break;
    e->fill = 0;
    if (ld_buf_append(out, e->buf, LD_PING_SIZE) != 0)
      return LD_ERR_NOMEM;
    appended += LD_PING_SIZE;
  }
  return appended;
}

void ld_ping_round_start(ld_ping_round_t *r, const uint8_t payload[LD_PING_SIZE]) {
  memcpy(r->sent, payload, LD_PING_SIZE);
  r->fill = 0;
}

int ld_ping_round_feed(ld_ping_round_t *r, const uint8_t *data, size_t len, size_t *used) {
  size_t take = LD_PING_SIZE - r->fill;
  if (take > len)
    take = len;
  if (take > 0)
    memcpy(r->got + r->fill, data, take);
  r->fill += take;
  *used = take;
  if (memcmp(r->got, r->sent, r->fill) != 0)
    return LD_ERR_PROTOCOL;
  return r->fill == LD_PING_SIZE ? 1 : 0;
}

/* ---- per-connection accounting -------------------------------------------------------------- */

/* One connection slot holds an integer: live inbound ping streams in the low bits, and a flag
 * for the one outbound ping. */
#define INBOUND_MASK 0xffffu
#define OUTBOUND_BUSY 0x10000u

static int g_slot = -1;
static pthread_once_t g_slot_once = PTHREAD_ONCE_INIT;

static void register_slot(void) {
  g_slot = ld_conn_slot_register();
}

static uintptr_t slot_get(const ld_conn_t *c) {
  return (uintptr_t)ld_conn_get_slot(c, g_slot);
}

static void slot_set(ld_conn_t *c, uintptr_t v) {
  ld_conn_set_slot(c, g_slot, (void *)v);
}

/* ---- responder ------------------------------------------------------------------------------ */

typedef struct responder {
  ld_ping_echo_t echo;
  ld_buf_t out;
} responder_t;

static void responder_data(ld_stream_t *s, const uint8_t *data, size_t len) {
  responder_t *r = ld_stream_user_data(s);
  ld_buf_reset(&r->out);
  int rc = ld_ping_echo_feed(&r->echo, data, len, &r->out);
  if (rc <= 0) {
    if (rc < 0)
      ld_stream_reset(s);
    return;
  }
  if (ld_stream_buffered(s) + r->out.len > LD_PING_MAX_PENDING_ECHO ||
      ld_stream_write(s, r->out.data, r->out.len) != 0) {
    LD_DEBUG(LOG_TOPIC, "ping peer does not read its echoes; resetting");
    ld_stream_reset(s);
  }
}

static void responder_eof(ld_stream_t *s) {
  ld_stream_close_write(s);
}

static void responder_close(ld_stream_t *s, int err) {
  (void)err;
  responder_t *r = ld_stream_user_data(s);
  ld_conn_t *c = ld_stream_conn(s);
  uintptr_t v = slot_get(c);
  if ((v & INBOUND_MASK) > 0)
    slot_set(c, v - 1);
  ld_buf_clear(&r->out);
  free(r);
}

static const ld_stream_handler_t g_responder = {
    .on_data = responder_data,
    .on_eof = responder_eof,
    .on_close = responder_close,
};

static void on_accept(ld_stream_t *s, void *user_data) {
  (void)user_data;
  ld_conn_t *c = ld_stream_conn(s);
  uintptr_t v = slot_get(c);
  responder_t *r = NULL;
  if ((v & INBOUND_MASK) < LD_PING_MAX_INBOUND_STREAMS)
    r = calloc(1, sizeof *r);
  if (r == NULL) {
    LD_DEBUG(LOG_TOPIC, "inbound ping refused (%u open)", (unsigned)(v & INBOUND_MASK));
    ld_stream_reset(s);
    return;
  }
  ld_buf_init(&r->out);
  slot_set(c, v + 1);
  ld_stream_set_handler(s, &g_responder, r);
}

int ld_ping_handle(ld_switch_t *sw) {
  pthread_once(&g_slot_once, register_slot);
  if (sw == NULL)
    return LD_ERR_INVALID_ARG;
  if (g_slot < 0)
    return LD_ERR_LIMIT;
  return ld_switch_handle(sw, LD_PING_PROTOCOL, on_accept, NULL);
}

/* ---- client --------------------------------------------------------------------------------- */

typedef struct ping_op {
  ld_switch_t *sw;
  ld_conn_t *conn; /* dereferenced only while known to be alive */
  ld_stream_t *stream;
  ld_ping_cb cb;
  void *user_data;
  unsigned count;
  unsigned rounds; /* completed */
  ld_ping_round_t round;
  uint64_t sent_ns;
  uv_timer_t timer;
  bool finished;
  bool busy_cleared;
  bool released;
} ping_op_t;

static bool conn_alive(ld_switch_t *sw, const ld_conn_t *c) {
  size_t total = ld_switch_connections(sw, NULL, 0);
  ld_conn_t **list = total > 0 ? calloc(total, sizeof *list) : NULL;
  bool found = false;
  if (list == NULL)
    return false;
  size_t n = ld_switch_connections(sw, list, total);
  for (size_t i = 0; i < n && i < total && !found; i++)
    found = list[i] == c;
  free(list);
  return found;
}

static void clear_busy(ping_op_t *op) {
  if (op->busy_cleared)
    return;
  op->busy_cleared = true;
  if (op->stream != NULL || conn_alive(op->sw, op->conn))
    slot_set(op->conn, slot_get(op->conn) & ~(uintptr_t)OUTBOUND_BUSY);
}

static void finish(ping_op_t *op, int err) {
  if (op->finished)
    return;
  op->finished = true;
  clear_busy(op);
  op->cb(err, op->rounds, 0, true, op->user_data);
}

static void on_timer_closed(uv_handle_t *h) {
  free(h->data);
}

static void release(ping_op_t *op) {
  if (op->released)
    return;
  op->released = true;
  op->stream = NULL;
  uv_timer_stop(&op->timer);
  uv_close((uv_handle_t *)&op->timer, on_timer_closed);
}

static void on_timeout(uv_timer_t *t) {
  ping_op_t *op = t->data;
  finish(op, LD_ERR_TIMEOUT);
  if (op->stream != NULL)
    ld_stream_reset(op->stream);
}

static void send_round(ping_op_t *op) {
  uint8_t payload[LD_PING_SIZE];
  ld_random_bytes(payload, sizeof payload);
  ld_ping_round_start(&op->round, payload);
  uv_timer_start(&op->timer, on_timeout, LD_PING_TIMEOUT_MS, 0);
  op->sent_ns = ld_now_ns();
  int rc = ld_stream_write(op->stream, payload, sizeof payload);
  if (rc != 0) {
    finish(op, rc);
    ld_stream_reset(op->stream);
  }
}

/* A round trip completed: report it, then start the next round or end. */
static void round_done(ping_op_t *op) {
  uint64_t rtt_us = (ld_now_ns() - op->sent_ns) / 1000;
  unsigned index = op->rounds++;
  op->cb(0, index, rtt_us, false, op->user_data);
  if (op->finished)
    return;
  if (op->rounds < op->count) {
    send_round(op);
    return;
  }
  ld_stream_t *s = op->stream;
  finish(op, 0);
  uv_timer_start(&op->timer, on_timeout, LD_PING_TIMEOUT_MS, 0); /* bounds the closing */
  ld_stream_close_write(s);
}

static void client_data(ld_stream_t *s, const uint8_t *data, size_t len) {
  ping_op_t *op = ld_stream_user_data(s);
  while (len > 0 && !op->finished) {
    size_t used = 0;
    int rc = ld_ping_round_feed(&op->round, data, len, &used);
    data += used;
    len -= used;
    if (rc < 0) {
      finish(op, rc);
      ld_stream_reset(s);
      return;
    }
    if (rc == 1)
      round_done(op);
  }
  if (len > 0)
    ld_stream_reset(s); /* bytes after the last echo */
}

static void client_eof(ld_stream_t *s) {
  ping_op_t *op = ld_stream_user_data(s);
  finish(op, LD_ERR_PROTOCOL);
  ld_stream_close_write(s);
}

static void client_close(ld_stream_t *s, int err) {
  ping_op_t *op = ld_stream_user_data(s);
  finish(op, err != 0 ? err : LD_ERR_PROTOCOL);
  release(op);
}

static const ld_stream_handler_t g_client = {
    .on_data = client_data,
    .on_eof = client_eof,
    .on_close = client_close,
};

static void on_open(ld_stream_t *s, int err, void *user_data) {
  ping_op_t *op = user_data;
  if (s == NULL) {
    finish(op, err != 0 ? err : LD_ERR_INTERNAL);
    release(op);
    return;
  }
  op->stream = s;
  ld_stream_set_handler(s, &g_client, op);
  if (op->finished) {
    ld_stream_reset(s); /* timed out while negotiating */
    return;
  }
  send_round(op);
}

int ld_ping(ld_switch_t *sw, ld_conn_t *c, unsigned count, ld_ping_cb cb, void *user_data) {
  pthread_once(&g_slot_once, register_slot);
  if (sw == NULL || c == NULL || count == 0 || cb == NULL)
    return LD_ERR_INVALID_ARG;
  if (g_slot < 0)
    return LD_ERR_LIMIT;
  if (slot_get(c) & OUTBOUND_BUSY)
    return LD_ERR_AGAIN;
  ping_op_t *op = calloc(1, sizeof *op);
  if (op == NULL)
    return LD_ERR_NOMEM;
  *op = (ping_op_t){.sw = sw, .conn = c, .cb = cb, .user_data = user_data, .count = count};
  uv_timer_init(ld_switch_loop(sw), &op->timer);
  op->timer.data = op;
  uv_timer_start(&op->timer, on_timeout, LD_PING_TIMEOUT_MS, 0);
  const char *protocol = LD_PING_PROTOCOL;
  int rc = ld_switch_open_stream(sw, c, &protocol, 1, on_open, op);
  if (rc != 0) {
    op->finished = true;
    op->busy_cleared = true;
    release(op);
    return rc;
  }
  slot_set(c, slot_get(c) | OUTBOUND_BUSY);
  return 0;
}
