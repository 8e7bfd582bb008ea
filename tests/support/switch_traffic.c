#include "switch_traffic.h"

#include <setjmp.h>
#include <stdarg.h>
#include <string.h>

#include <cmocka.h>

#include "switch_harness.h"

/* ---- the pinger ---------------------------------------------------------------------------- */

static void ping_send(sh_pinger_t *p) {
  uint8_t buf[SH_PING_CHUNK];
  for (size_t i = 0; i < SH_PING_CHUNK; i++)
    buf[i] = sh_pattern(SH_PINGER_IDX, p->sent + i);
  if (ld_stream_write(p->s, buf, SH_PING_CHUNK) == 0)
    p->sent += SH_PING_CHUNK;
}

static void ping_data(ld_stream_t *s, const uint8_t *data, size_t len) {
  sh_pinger_t *p = ld_stream_user_data(s);
  for (size_t i = 0; i < len; i++)
    if (data[i] != sh_pattern(SH_PINGER_IDX, p->recv + i))
      p->bad = true;
  p->recv += len;
  if (p->recv == p->sent) {
    p->rounds++;
    ping_send(p);
  }
}

static void ping_close(ld_stream_t *s, int err) {
  sh_pinger_t *p = ld_stream_user_data(s);
  p->closed = true;
  p->err = err;
  p->s = NULL;
}

static const ld_stream_handler_t ping_handler = {.on_data = ping_data, .on_close = ping_close};

static void ping_opened(ld_stream_t *s, int err, void *ud) {
  sh_pinger_t *p = ud;
  assert_int_equal(err, 0);
  p->s = s;
  ld_stream_set_handler(s, &ping_handler, p);
  ping_send(p);
}

void sh_pinger_start(ld_switch_t *sw, ld_conn_t *c, sh_pinger_t *p) {
  const char *protos[] = {SH_ECHO};
  assert_int_equal(ld_switch_open_stream(sw, c, protos, 1, ping_opened, p), 0);
}

typedef struct progress {
  const sh_pinger_t *p;
  uint32_t target;
} progress_t;

static bool ping_reached(void *ud) {
  progress_t *pr = ud;
  return pr->p->rounds >= pr->target;
}

void sh_pinger_assert_progress(uv_loop_t *loop, sh_pinger_t *p, uint32_t n) {
  progress_t pr = {p, p->rounds + n};
  assert_true(sh_run_until(loop, ping_reached, &pr, 10000));
  assert_false(p->bad);
  assert_false(p->closed);
}

/* ---- a node under test with a well-behaved peer -------------------------------------------- */

void sh_target_init(sh_target_t *t) {
  memset(t, 0, sizeof *t);
  assert_int_equal(uv_loop_init(&t->loop), 0);
  sh_log_capture();
}

void sh_target_track(sh_target_t *t) {
  sh_register_echo(t->node);
  sh_track_events(t->node, &t->ev_node);
  sh_track_events(t->good, &t->ev_good);
}

void sh_target_connect(sh_target_t *t, const ld_multiaddr_t *addr) {
  int err = -1;
  ld_conn_t *c = sh_dial_wait(t->good, &t->loop, addr, &err);
  assert_int_equal(err, 0);
  sh_pinger_start(t->good, c, &t->ping);
  sh_target_assert_progress(t, 20);
}

void sh_target_assert_progress(sh_target_t *t, uint32_t n) {
  sh_pinger_assert_progress(&t->loop, &t->ping, n);
  assert_int_equal(t->ev_good.disconnected, 0);
}

void sh_target_close(sh_target_t *t) {
  sh_switch_close(t->good, &t->loop);
  sh_switch_close(t->node, &t->loop);
  sh_run_for(&t->loop, 50);
  sh_log_release();
  assert_int_equal(uv_loop_close(&t->loop), 0);
}

/* ---- senders ------------------------------------------------------------------------------- */

void sh_sender_init(sh_sender_t *x, uint32_t idx, uint64_t total, size_t answer_cap, bool hash) {
  assert_true(answer_cap <= SH_SENDER_ANSWER_MAX);
  memset(x, 0, sizeof *x);
  x->idx = idx;
  x->total = total;
  x->answer_cap = answer_cap;
  x->hash = hash;
  if (hash)
    assert_int_equal(ld_sha256_begin(&x->h), 0);
}

static void sender_fill(sh_sender_t *x) {
  static uint8_t buf[SH_SENDER_CHUNK];
  while (x->sent < x->total && ld_stream_buffered(x->s) < SH_SENDER_WRITE_AHEAD) {
    for (size_t i = 0; i < SH_SENDER_CHUNK; i++)
      buf[i] = sh_pattern(x->idx, x->sent + i);
    if (x->hash)
      assert_int_equal(ld_sha256_update(&x->h, buf, SH_SENDER_CHUNK), 0);
    assert_int_equal(ld_stream_write(x->s, buf, SH_SENDER_CHUNK), 0);
    x->sent += SH_SENDER_CHUNK;
  }
  if (x->sent == x->total && !x->fin) {
    x->fin = true;
    assert_int_equal(ld_stream_close_write(x->s), 0);
  }
}

static void sender_drain(ld_stream_t *s) {
  sender_fill(ld_stream_user_data(s));
}

static void sender_data(ld_stream_t *s, const uint8_t *data, size_t len) {
  sh_sender_t *x = ld_stream_user_data(s);
  assert_true(x->answer_len + len <= x->answer_cap);
  memcpy(x->answer + x->answer_len, data, len);
  x->answer_len += len;
}

static void sender_close(ld_stream_t *s, int err) {
  sh_sender_t *x = ld_stream_user_data(s);
  x->closed = true;
  x->err = err;
}

static const ld_stream_handler_t sender_handler = {
    .on_data = sender_data, .on_close = sender_close, .on_drain = sender_drain};

void sh_sender_opened(ld_stream_t *s, int err, void *ud) {
  sh_sender_t *x = ud;
  assert_int_equal(err, 0);
  x->s = s;
  ld_stream_set_handler(s, &sender_handler, x);
  sender_fill(x);
}

bool sh_senders_done(void *ud) {
  const sh_senders_t *all = ud;
  for (size_t i = 0; i < all->n; i++)
    if (!all->x[i].closed)
      return false;
  return true;
}
