/* Two switches on one loop over 127.0.0.1: the upgrade, dial reuse and failures, protocol
 * negotiation, 1,000 concurrent echo streams moving 10 MiB on one connection (yamux and mplex),
 * and graceful close. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "base/error.h"
#include "base/log.h"
#include "p2p/stream.h"
#include "p2p/switch.h"
#include "switch_harness.h"
#include "switch_traffic.h"

#define N_STREAMS 1000
#define TOTAL_BYTES (10u * 1024 * 1024)
#define CHUNK 4096

typedef struct pair {
  uv_loop_t loop;
  ld_switch_t *a, *b; /* a listens, b dials */
  ld_multiaddr_t a_addr;
  sh_events_t ev_a, ev_b;
  ld_conn_t *conn; /* b's connection to a */
} pair_t;

static void pair_setup(pair_t *p, const char *b_muxer) {
  memset(p, 0, sizeof *p);
  assert_int_equal(uv_loop_init(&p->loop), 0);
  p->a = sh_switch_new(&p->loop, NULL);
  ld_switch_config_t cfg;
  ld_switch_config_default(&cfg);
  if (b_muxer != NULL) {
    cfg.muxers[0] = b_muxer;
    cfg.muxers[1] = NULL;
  }
  p->b = sh_switch_new(&p->loop, &cfg);
  sh_register_echo(p->a);
  sh_register_echo(p->b);
  sh_track_events(p->a, &p->ev_a);
  sh_track_events(p->b, &p->ev_b);
  sh_listen_local(p->a, &p->a_addr);
  int err = -1;
  p->conn = sh_dial_wait(p->b, &p->loop, &p->a_addr, &err);
  assert_int_equal(err, 0);
  assert_non_null(p->conn);
}

static bool both_connected(void *ud) {
  pair_t *p = ud;
  return p->ev_a.connected == 1 && p->ev_b.connected == 1;
}

static void pair_teardown(pair_t *p) {
  sh_switch_close(p->b, &p->loop);
  sh_switch_close(p->a, &p->loop);
  sh_run_for(&p->loop, 50);
  assert_int_equal(uv_loop_close(&p->loop), 0);
}

/* ---- upgrade and dialing ------------------------------------------------------------------ */

static void upgrade_reports_both_sides(void **state) {
  (void)state;
  pair_t p;
  pair_setup(&p, NULL);
  assert_true(sh_run_until(&p.loop, both_connected, &p, 5000));
  assert_true(ld_conn_is_outbound(p.conn));
  assert_string_equal(ld_conn_muxer(p.conn), "/yamux/1.0.0");
  assert_true(ld_peerid_equal(ld_conn_remote_peer(p.conn), ld_switch_peer_id(p.a)));
  ld_conn_t *in = p.ev_a.last_connected;
  assert_false(ld_conn_is_outbound(in));
  assert_true(ld_peerid_equal(ld_conn_remote_peer(in), ld_switch_peer_id(p.b)));
  assert_non_null(ld_conn_remote_key(in));
  assert_non_null(ld_conn_remote_addr(in));
  ld_conn_t *list[4];
  assert_int_equal(ld_switch_connections(p.a, list, 4), 1);
  assert_ptr_equal(list[0], in);

  /* a second dial to the same peer reuses the connection */
  int err = -1;
  ld_conn_t *again = sh_dial_wait(p.b, &p.loop, &p.a_addr, &err);
  assert_int_equal(err, 0);
  assert_ptr_equal(again, p.conn);
  assert_int_equal(ld_switch_connections(p.b, list, 4), 1);
  pair_teardown(&p);
}

static void dial_failures_are_named(void **state) {
  (void)state;
  pair_t p;
  pair_setup(&p, NULL);
  int err = 0;
  /* another peer's ID at a's address */
  ld_switch_t *c = sh_switch_new(&p.loop, NULL);
  ld_multiaddr_t wrong = sh_strip_peer(&p.a_addr);
  const ld_peerid_t *cid = ld_switch_peer_id(c);
  assert_int_equal(ld_multiaddr_push(&wrong, LD_MA_P2P, cid->bytes, cid->len), 0);
  assert_null(sh_dial_wait(p.b, &p.loop, &wrong, &err));
  assert_int_equal(err, LD_ERR_PEER_ID_MISMATCH);

  /* nothing listens there */
  ld_multiaddr_t closed;
  assert_int_equal(ld_multiaddr_parse(&closed, "/ip4/127.0.0.1/tcp/1"), 0);
  assert_null(sh_dial_wait(p.b, &p.loop, &closed, &err));
  assert_int_equal(err, LD_ERR_REFUSED);

  /* DNS names are not resolved yet */
  ld_multiaddr_t dns;
  assert_int_equal(ld_multiaddr_parse(&dns, "/dns4/localhost/tcp/1"), 0);
  assert_null(sh_dial_wait(p.b, &p.loop, &dns, &err));
  assert_int_equal(err, LD_ERR_UNSUPPORTED);

  sh_switch_close(c, &p.loop);
  pair_teardown(&p);
}

static void never_accept(uv_stream_t *server, int status) {
  (void)server;
  (void)status;
}

static void dial_times_out_on_silent_listener(void **state) {
  (void)state;
  uv_loop_t loop;
  assert_int_equal(uv_loop_init(&loop), 0);
  /* a socket that listens but never answers: the kernel completes the TCP handshake */
  uv_tcp_t server;
  uv_tcp_init(&loop, &server);
  struct sockaddr_in sin;
  uv_ip4_addr("127.0.0.1", 0, &sin);
  assert_int_equal(uv_tcp_bind(&server, (struct sockaddr *)&sin, 0), 0);
  assert_int_equal(uv_listen((uv_stream_t *)&server, 8, never_accept), 0);
  struct sockaddr_storage bound;
  int len = sizeof bound;
  uv_tcp_getsockname(&server, (struct sockaddr *)&bound, &len);
  ld_multiaddr_t addr;
  assert_int_equal(ld_multiaddr_from_sockaddr(&addr, &bound), 0);

  ld_switch_config_t cfg;
  ld_switch_config_default(&cfg);
  cfg.dial_timeout_ms = 300;
  ld_switch_t *sw = sh_switch_new(&loop, &cfg);
  sh_events_t ev;
  sh_track_events(sw, &ev);
  int err = 0;
  assert_null(sh_dial_wait(sw, &loop, &addr, &err));
  assert_int_equal(err, LD_ERR_TIMEOUT);
  assert_int_equal(ev.connected, 0);
  assert_int_equal(ev.disconnected, 0);
  sh_switch_close(sw, &loop);
  uv_close((uv_handle_t *)&server, NULL);
  sh_run_for(&loop, 20);
  assert_int_equal(uv_loop_close(&loop), 0);
}

static void ipv6_loopback(void **state) {
  (void)state;
  uv_loop_t loop;
  assert_int_equal(uv_loop_init(&loop), 0);
  ld_switch_t *a = sh_switch_new(&loop, NULL);
  ld_switch_t *b = sh_switch_new(&loop, NULL);
  ld_multiaddr_t any;
  assert_int_equal(ld_multiaddr_parse(&any, "/ip6/::1/tcp/0"), 0);
  int rc = ld_switch_listen(a, &any);
  if (rc == 0) {
    ld_multiaddr_t addr;
    assert_int_equal(ld_switch_listen_addrs(a, &addr, 1), 1);
    const ld_peerid_t *id = ld_switch_peer_id(a);
    assert_int_equal(ld_multiaddr_push(&addr, LD_MA_P2P, id->bytes, id->len), 0);
    int err = -1;
    ld_conn_t *c = sh_dial_wait(b, &loop, &addr, &err);
    assert_int_equal(err, 0);
    char text[LD_MULTIADDR_TEXT_MAX];
    assert_true(ld_multiaddr_to_text(ld_conn_remote_addr(c), text, sizeof text) > 0);
    assert_non_null(strstr(text, "/ip6/::1/tcp/"));
  } else {
    assert_int_equal(rc, LD_ERR_UNREACHABLE); /* no IPv6 loopback on this machine */
  }
  sh_switch_close(b, &loop);
  sh_switch_close(a, &loop);
  assert_int_equal(uv_loop_close(&loop), 0);
}

/* ---- negotiation ------------------------------------------------------------------------- */

typedef struct open_result {
  bool done;
  int err;
  ld_stream_t *s;
} open_result_t;

static void on_quiet_close(ld_stream_t *s, int err) {
  (void)s;
  (void)err;
}

static const ld_stream_handler_t quiet = {.on_close = on_quiet_close};

static void opened(ld_stream_t *s, int err, void *ud) {
  open_result_t *r = ud;
  r->done = true;
  r->err = err;
  r->s = s;
  if (s != NULL)
    ld_stream_set_handler(s, &quiet, NULL);
}

static bool open_done(void *ud) {
  return ((open_result_t *)ud)->done;
}

static void negotiation_picks_first_supported(void **state) {
  (void)state;
  pair_t p;
  pair_setup(&p, NULL);
  const char *protos[] = {"/nope/1.0.0", "/still-nope/2", SH_ECHO};
  open_result_t r = {0};
  assert_int_equal(ld_switch_open_stream(p.b, p.conn, protos, 3, opened, &r), 0);
  assert_false(r.done); /* never from inside the call */
  assert_true(sh_run_until(&p.loop, open_done, &r, 5000));
  assert_int_equal(r.err, 0);
  assert_string_equal(ld_stream_protocol(r.s), SH_ECHO);
  assert_false(ld_stream_is_inbound(r.s));
  assert_ptr_equal(ld_stream_conn(r.s), p.conn);
  ld_stream_reset(r.s);

  const char *none[] = {"/nope/1.0.0"};
  open_result_t r2 = {0};
  assert_int_equal(ld_switch_open_stream(p.b, p.conn, none, 1, opened, &r2), 0);
  assert_true(sh_run_until(&p.loop, open_done, &r2, 5000));
  assert_int_equal(r2.err, LD_ERR_PROTOCOL_UNSUPPORTED);
  assert_null(r2.s);
  sh_run_for(&p.loop, 20);
  assert_int_equal(ld_conn_stream_count(p.conn), 0);
  pair_teardown(&p);
}

/* ---- 1,000 concurrent echo streams -------------------------------------------------------- */

typedef struct client_stream {
  uint32_t idx;
  size_t size;
  size_t sent;
  size_t recv;
  bool eof;
  bool closed;
  bool bad;
  int err;
  ld_stream_t *s;
} client_stream_t;

typedef struct bulk {
  client_stream_t cs[N_STREAMS];
  int closed;
  int failures;
  size_t bytes;
} bulk_t;

static void bulk_data(ld_stream_t *s, const uint8_t *data, size_t len) {
  client_stream_t *c = ld_stream_user_data(s);
  for (size_t i = 0; i < len; i++)
    if (data[i] != sh_pattern(c->idx, c->recv + i))
      c->bad = true;
  c->recv += len;
}

static void bulk_eof(ld_stream_t *s) {
  client_stream_t *c = ld_stream_user_data(s);
  c->eof = true;
}

static bulk_t *the_bulk;

static void bulk_close(ld_stream_t *s, int err) {
  client_stream_t *c = ld_stream_user_data(s);
  c->closed = true;
  c->err = err;
  the_bulk->closed++;
  the_bulk->bytes += c->recv;
}

static const ld_stream_handler_t bulk_handler = {
    .on_data = bulk_data,
    .on_eof = bulk_eof,
    .on_close = bulk_close,
};

static void bulk_send(client_stream_t *c) {
  uint8_t buf[CHUNK];
  while (c->sent < c->size) {
    size_t n = c->size - c->sent < CHUNK ? c->size - c->sent : CHUNK;
    for (size_t i = 0; i < n; i++)
      buf[i] = sh_pattern(c->idx, c->sent + i);
    assert_int_equal(ld_stream_write(c->s, buf, n), 0);
    c->sent += n;
  }
  assert_int_equal(ld_stream_close_write(c->s), 0);
}

static void bulk_opened(ld_stream_t *s, int err, void *ud) {
  client_stream_t *c = ud;
  if (err != 0) {
    the_bulk->failures++;
    c->err = err;
    c->closed = true;
    the_bulk->closed++;
    return;
  }
  c->s = s;
  ld_stream_set_handler(s, &bulk_handler, c);
  bulk_send(c);
}

static bool bulk_finished(void *ud) {
  return ((bulk_t *)ud)->closed == N_STREAMS;
}

static void run_bulk(const char *muxer) {
  pair_t p;
  pair_setup(&p, muxer);
  assert_string_equal(ld_conn_muxer(p.conn), muxer);
  bulk_t *b = calloc(1, sizeof *b);
  assert_non_null(b);
  the_bulk = b;
  size_t total = 0;
  for (uint32_t i = 0; i < N_STREAMS; i++) {
    b->cs[i].idx = i;
    b->cs[i].size = 2000 + (i * 7919u) % 17000u;
    total += b->cs[i].size;
  }
  /* stretch the sizes so that exactly TOTAL_BYTES move each way */
  size_t assigned = 0;
  for (uint32_t i = 0; i < N_STREAMS; i++) {
    b->cs[i].size = (size_t)((double)b->cs[i].size * TOTAL_BYTES / (double)total);
    assigned += b->cs[i].size;
  }
  b->cs[N_STREAMS - 1].size += TOTAL_BYTES - assigned;
  const char *protos[] = {SH_ECHO};
  for (uint32_t i = 0; i < N_STREAMS; i++)
    assert_int_equal(ld_switch_open_stream(p.b, p.conn, protos, 1, bulk_opened, &b->cs[i]), 0);
  assert_true(sh_run_until(&p.loop, bulk_finished, b, 120000));
  assert_int_equal(b->failures, 0);
  size_t moved = 0;
  for (uint32_t i = 0; i < N_STREAMS; i++) {
    client_stream_t *c = &b->cs[i];
    assert_false(c->bad);
    assert_true(c->eof);
    assert_int_equal(c->err, 0);
    assert_int_equal(c->recv, c->size);
    moved += c->recv;
  }
  assert_int_equal(moved, TOTAL_BYTES);
  assert_int_equal(p.ev_a.disconnected, 0);
  assert_int_equal(p.ev_b.disconnected, 0);
  sh_run_for(&p.loop, 50);
  assert_int_equal(ld_conn_stream_count(p.conn), 0);
  free(b);
  pair_teardown(&p);
}

static void thousand_streams_over_yamux(void **state) {
  (void)state;
  run_bulk("/yamux/1.0.0");
}

static void thousand_streams_over_mplex(void **state) {
  (void)state;
  run_bulk("/mplex/6.7.0");
}

/* ---- large transfers: a verifying sink, both directions at once --------------------------- */

#define SINK "/sink/1.0.0"
#define BIG (32u * 1024 * 1024)

typedef struct sink {
  uint64_t recv;
  bool bad;
} sink_t;

static void sink_data(ld_stream_t *s, const uint8_t *data, size_t len) {
  sink_t *k = ld_stream_user_data(s);
  for (size_t i = 0; i < len; i++)
    if (data[i] != sh_pattern(99, k->recv + i))
      k->bad = true;
  k->recv += len;
}

static void sink_eof(ld_stream_t *s) {
  sink_t *k = ld_stream_user_data(s);
  uint8_t answer[9];
  for (int i = 0; i < 8; i++)
    answer[i] = (uint8_t)(k->recv >> (56 - 8 * i));
  answer[8] = k->bad ? 1 : 0;
  assert_int_equal(ld_stream_write(s, answer, sizeof answer), 0);
  assert_int_equal(ld_stream_close_write(s), 0);
}

static void sink_close(ld_stream_t *s, int err) {
  (void)err;
  free(ld_stream_user_data(s));
}

static const ld_stream_handler_t sink_handler = {
    .on_data = sink_data, .on_eof = sink_eof, .on_close = sink_close};

static void sink_accept(ld_stream_t *s, void *ud) {
  (void)ud;
  sink_t *k = calloc(1, sizeof *k);
  assert_non_null(k);
  ld_stream_set_handler(s, &sink_handler, k);
}

static void assert_sink_answer(const sh_sender_t *x) {
  assert_int_equal(x->err, 0);
  assert_int_equal(x->answer_len, 9);
  uint64_t got = 0;
  for (int i = 0; i < 8; i++)
    got = got << 8 | x->answer[i];
  assert_true(got == BIG);
  assert_int_equal(x->answer[8], 0);
}

static void run_large(const char *muxer, bool both_ways) {
  pair_t p;
  pair_setup(&p, muxer);
  assert_true(sh_run_until(&p.loop, both_connected, &p, 5000));
  assert_int_equal(ld_switch_handle(p.a, SINK, sink_accept, NULL), 0);
  assert_int_equal(ld_switch_handle(p.b, SINK, sink_accept, NULL), 0);
  sh_sender_t x[2];
  sh_sender_init(&x[0], 99, BIG, 9, false);
  sh_sender_init(&x[1], 99, BIG, 9, false);
  const char *protos[] = {SINK};
  assert_int_equal(ld_switch_open_stream(p.b, p.conn, protos, 1, sh_sender_opened, &x[0]), 0);
  if (both_ways)
    assert_int_equal(
        ld_switch_open_stream(p.a, p.ev_a.last_connected, protos, 1, sh_sender_opened, &x[1]), 0);
  sh_senders_t all = {x, both_ways ? 2 : 1};
  assert_true(sh_run_until(&p.loop, sh_senders_done, &all, 120000));
  for (size_t i = 0; i < all.n; i++)
    assert_sink_answer(&x[i]);
  assert_int_equal(p.ev_a.disconnected, 0);
  pair_teardown(&p);
}

static void large_transfer_over_yamux(void **state) {
  (void)state;
  run_large("/yamux/1.0.0", false);
}

static void large_transfer_over_mplex(void **state) {
  (void)state;
  run_large("/mplex/6.7.0", false);
}

static void large_transfers_both_ways_at_once(void **state) {
  (void)state;
  run_large("/yamux/1.0.0", true);
  run_large("/mplex/6.7.0", true);
}

/* ---- closing ------------------------------------------------------------------------------ */

typedef struct close_watch {
  open_result_t open;
  bool closed;
  int err;
} close_watch_t;

static void watched_close(ld_stream_t *s, int err) {
  close_watch_t *w = ld_stream_user_data(s);
  w->closed = true;
  w->err = err;
}

static const ld_stream_handler_t watched = {.on_close = watched_close};

static void watched_opened(ld_stream_t *s, int err, void *ud) {
  close_watch_t *w = ud;
  w->open.done = true;
  w->open.err = err;
  w->open.s = s;
  if (s != NULL)
    ld_stream_set_handler(s, &watched, w);
}

static bool one_disconnected(void *ud) {
  pair_t *p = ud;
  return p->ev_a.disconnected == 1 && p->ev_b.disconnected == 1;
}

static void closing_a_connection_ends_its_streams(void **state) {
  (void)state;
  pair_t p;
  pair_setup(&p, NULL);
  assert_true(sh_run_until(&p.loop, both_connected, &p, 5000));
  close_watch_t w = {0};
  const char *protos[] = {SH_ECHO};
  assert_int_equal(ld_switch_open_stream(p.b, p.conn, protos, 1, watched_opened, &w), 0);
  assert_true(sh_run_until(&p.loop, open_done, &w.open, 5000));
  assert_int_equal(w.open.err, 0);
  ld_conn_close(p.conn, LD_ERR_CANCELED, true);
  ld_conn_close(p.conn, LD_ERR_TIMEOUT, true); /* idempotent */
  assert_false(w.closed);                      /* never from inside the call */
  assert_true(sh_run_until(&p.loop, one_disconnected, &p, 5000));
  assert_true(w.closed);
  assert_int_equal(w.err, LD_ERR_CLOSED);
  assert_int_equal(p.ev_b.last_reason, LD_ERR_CANCELED);
  ld_conn_t *list[2];
  assert_int_equal(ld_switch_connections(p.b, list, 2), 0);
  pair_teardown(&p);
}

static void switch_close_disconnects_everyone(void **state) {
  (void)state;
  pair_t p;
  pair_setup(&p, NULL);
  assert_true(sh_run_until(&p.loop, both_connected, &p, 5000));
  sh_switch_close(p.b, &p.loop);
  assert_int_equal(p.ev_b.disconnected, 1);
  assert_int_equal(p.ev_b.last_reason, 0);
  assert_true(sh_run_until(&p.loop, one_disconnected, &p, 5000));
  sh_switch_close(p.a, &p.loop);
  sh_run_for(&p.loop, 50);
  assert_int_equal(uv_loop_close(&p.loop), 0);
}

/* ---- closing from inside callbacks -------------------------------------------------------- */

static int rude_writes_after_reset;

static void rude_data(ld_stream_t *s, const uint8_t *data, size_t len) {
  ld_stream_reset(s);
  ld_conn_close(ld_stream_conn(s), LD_ERR_CANCELED, false);
  rude_writes_after_reset = ld_stream_write(s, data, len);
  ld_stream_reset(s); /* again: a no-op */
}

static int rude_closes;

static void rude_close(ld_stream_t *s, int err) {
  (void)s;
  assert_int_equal(err, LD_ERR_RESET);
  rude_closes++;
}

static const ld_stream_handler_t rude = {.on_data = rude_data, .on_close = rude_close};

static void rude_accept(ld_stream_t *s, void *ud) {
  (void)ud;
  ld_stream_set_handler(s, &rude, NULL);
}

typedef struct closer {
  ld_switch_t *sw;
  bool closed_switch;
  bool done;
} closer_t;

static void closer_done(void *ud) {
  ((closer_t *)ud)->done = true;
}

static void close_switch_on_disconnect(ld_conn_t *c, int reason, void *ud) {
  (void)c;
  (void)reason;
  closer_t *k = ud;
  if (!k->closed_switch) {
    k->closed_switch = true;
    ld_switch_close(k->sw, closer_done, k);
  }
}

static void close_on_connect(ld_conn_t *c, void *ud) {
  (void)ud;
  ld_conn_close(c, 0, true);
}

static const ld_switch_events_t closing_events = {.on_disconnected = close_switch_on_disconnect};
static const ld_switch_events_t rude_events = {.on_connected = close_on_connect};

static bool closer_finished(void *ud) {
  return ((closer_t *)ud)->done;
}

static void closing_from_inside_callbacks(void **state) {
  (void)state;
  pair_t p;
  pair_setup(&p, NULL);
  assert_true(sh_run_until(&p.loop, both_connected, &p, 5000));
  assert_int_equal(ld_switch_handle(p.a, "/rude/1", rude_accept, NULL), 0);
  closer_t k = {.sw = p.b};
  assert_int_equal(ld_switch_add_listener(p.b, &closing_events, &k), 0);
  close_watch_t w = {0};
  const char *protos[] = {"/rude/1"};
  assert_int_equal(ld_switch_open_stream(p.b, p.conn, protos, 1, watched_opened, &w), 0);
  assert_true(sh_run_until(&p.loop, open_done, &w.open, 5000));
  assert_int_equal(w.open.err, 0);
  assert_int_equal(ld_stream_write(w.open.s, (const uint8_t *)"x", 1), 0);
  assert_true(sh_run_until(&p.loop, closer_finished, &k, 5000));
  assert_true(w.closed);
  assert_int_equal(rude_writes_after_reset, LD_ERR_CLOSED);
  assert_int_equal(rude_closes, 1);
  assert_int_equal(p.ev_b.disconnected, 1);
  assert_true(sh_run_until(&p.loop, one_disconnected, &p, 5000));
  assert_int_equal(p.ev_a.last_reason, LD_ERR_CANCELED);

  /* a listener that drops every connection as soon as it is reported */
  ld_switch_t *c = sh_switch_new(&p.loop, NULL);
  assert_int_equal(ld_switch_add_listener(p.a, &rude_events, NULL), 0);
  int err = -1;
  ld_conn_t *conn = sh_dial_wait(c, &p.loop, &p.a_addr, &err);
  if (conn == NULL)
    assert_int_equal(err, LD_ERR_CLOSED);
  sh_run_for(&p.loop, 50);
  ld_conn_t *list[2];
  assert_int_equal(ld_switch_connections(c, list, 2), 0);
  assert_int_equal(ld_switch_connections(p.a, list, 2), 0);
  sh_switch_close(c, &p.loop);
  sh_switch_close(p.a, &p.loop);
  sh_run_for(&p.loop, 50);
  assert_int_equal(uv_loop_close(&p.loop), 0);
}

int main(void) {
  ld_log_set_level(LD_LOG_WARN);
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(upgrade_reports_both_sides),
      cmocka_unit_test(dial_failures_are_named),
      cmocka_unit_test(dial_times_out_on_silent_listener),
      cmocka_unit_test(ipv6_loopback),
      cmocka_unit_test(negotiation_picks_first_supported),
      cmocka_unit_test(thousand_streams_over_yamux),
      cmocka_unit_test(thousand_streams_over_mplex),
      cmocka_unit_test(large_transfer_over_yamux),
      cmocka_unit_test(large_transfer_over_mplex),
      cmocka_unit_test(large_transfers_both_ways_at_once),
      cmocka_unit_test(closing_a_connection_ends_its_streams),
      cmocka_unit_test(switch_close_disconnects_everyone),
      cmocka_unit_test(closing_from_inside_callbacks),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
