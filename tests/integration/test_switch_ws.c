/* Switches over the WebSocket transport on 127.0.0.1: listening on /ws, /wss and /tls/ws next to
 * TCP (with a self-signed certificate made at test time), 10 MiB each way at once with SHA-256
 * checks over yamux and mplex, dialing a /dns4 name with SNI, certificate verification, and a
 * node under misbehaving raw clients (garbage instead of HTTP, an oversize header block, a stalled
 * handshake, unmasked and oversize frames, plain text on the TLS port, too many handshakes at
 * once). Each bad connection is cut off with a named reason in the log while a well-behaved
 * WebSocket peer keeps exchanging data with the same node. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "base/error.h"
#include "base/log.h"
#include "crypto/crypto.h"
#include "p2p/stream.h"
#include "p2p/switch.h"
#include "p2p/tls.h"
#include "p2p/transport_ws.h"
#include "switch_harness.h"
#include "switch_traffic.h"

#define YAMUX "/yamux/1.0.0"
#define MPLEX "/mplex/6.7.0"
#define HASH_SINK "/hashsink/1.0.0"
#define BIG (10u * 1024 * 1024)
#define WS_KEY "dGhlIHNhbXBsZSBub25jZQ=="
#define WS_ACCEPT "s3pPLMBiTxaQ9kYGzzhZRbK+xOo="

static char g_dir[64], g_cert[128], g_key[128];

static int group_setup(void **state) {
  (void)state;
  strcpy(g_dir, "/tmp/ld_ws_XXXXXX");
  assert_non_null(mkdtemp(g_dir));
  snprintf(g_cert, sizeof g_cert, "%s/cert.pem", g_dir);
  snprintf(g_key, sizeof g_key, "%s/key.pem", g_dir);
  assert_int_equal(ld_tls_write_self_signed(g_cert, g_key, "localhost", 1), 0);
  return 0;
}

static int group_teardown(void **state) {
  (void)state;
  unlink(g_cert);
  unlink(g_key);
  rmdir(g_dir);
  return 0;
}

/* ---- switches with the WebSocket transport -------------------------------------------------- */

/* A switch offering `muxer` only (both when NULL) with a WebSocket transport from `wcfg` (the
 * defaults plus the test certificate when NULL). */
static ld_switch_t *ws_switch(uv_loop_t *loop, const char *muxer, const ld_ws_config_t *wcfg,
                              const ld_switch_config_t *scfg) {
  ld_switch_config_t cfg;
  if (scfg != NULL)
    cfg = *scfg;
  else
    ld_switch_config_default(&cfg);
  if (muxer != NULL) {
    cfg.muxers[0] = muxer;
    cfg.muxers[1] = NULL;
  }
  ld_switch_t *sw = sh_switch_new(loop, &cfg);
  ld_ws_config_t w;
  if (wcfg != NULL) {
    w = *wcfg;
  } else {
    ld_ws_config_default(&w);
    w.tls_cert_path = g_cert;
    w.tls_key_path = g_key;
  }
  int err = -1;
  ld_transport_t *t = ld_transport_ws_new(loop, &w, &err);
  assert_non_null(t);
  assert_int_equal(err, 0);
  assert_int_equal(ld_switch_add_transport(sw, t), 0);
  assert_int_equal(ld_switch_add_transport(sw, t), LD_ERR_EXISTS);
  return sw;
}

static bool ends_with(const ld_multiaddr_t *a, const char *suffix) {
  char text[LD_MULTIADDR_TEXT_MAX];
  assert_true(ld_multiaddr_to_text(a, text, sizeof text) > 0);
  size_t n = strlen(text), k = strlen(suffix);
  return n >= k && strcmp(text + n - k, suffix) == 0;
}

/* Listens on `text` and stores the bound address with /p2p/<id> in `out`. */
static void listen_on(ld_switch_t *sw, const char *text, ld_multiaddr_t *out) {
  ld_multiaddr_t a;
  assert_int_equal(ld_multiaddr_parse(&a, text), 0);
  assert_int_equal(ld_switch_listen(sw, &a), 0);
  ld_multiaddr_t all[8];
  size_t n = ld_switch_listen_addrs(sw, all, 8);
  assert_true(n >= 1 && n <= 8);
  *out = all[n - 1];
  const ld_peerid_t *id = ld_switch_peer_id(sw);
  assert_int_equal(ld_multiaddr_push(out, LD_MA_P2P, id->bytes, id->len), 0);
}

/* The /ip4/…/tcp/<port> part of an address. */
static ld_multiaddr_t tcp_part(const ld_multiaddr_t *a) {
  ld_multiaddr_t out;
  memset(&out, 0, sizeof out);
  size_t off = 0;
  ld_multiaddr_component_t c;
  for (int i = 0; i < 2 && ld_multiaddr_next(a, &off, &c) == 1; i++)
    assert_int_equal(ld_multiaddr_push(&out, c.code, c.value, c.value_len), 0);
  return out;
}

static uint16_t port_of(const ld_multiaddr_t *a) {
  size_t off = 0;
  ld_multiaddr_component_t c;
  while (ld_multiaddr_next(a, &off, &c) == 1)
    if (c.code == LD_MA_TCP)
      return (uint16_t)(c.value[0] << 8 | c.value[1]);
  fail();
  return 0;
}

static void close_all(uv_loop_t *loop, ld_switch_t **sws, size_t n) {
  for (size_t i = 0; i < n; i++)
    sh_switch_close(sws[i], loop);
  sh_run_for(loop, 50);
  assert_int_equal(uv_loop_close(loop), 0);
}

/* ---- listen addresses ---------------------------------------------------------------------- */

static void listen_addresses_carry_the_suffix_and_port(void **state) {
  (void)state;
  uv_loop_t loop;
  assert_int_equal(uv_loop_init(&loop), 0);
  ld_switch_t *a = ws_switch(&loop, NULL, NULL, NULL);
  ld_multiaddr_t tcp, ws, wss, tlsws;
  sh_listen_local(a, &tcp);
  listen_on(a, "/ip4/127.0.0.1/tcp/0/ws", &ws);
  listen_on(a, "/ip4/127.0.0.1/tcp/0/wss", &wss);
  listen_on(a, "/ip4/127.0.0.1/tcp/0/tls/ws", &tlsws);
  ld_multiaddr_t all[8];
  assert_int_equal(ld_switch_listen_addrs(a, all, 8), 4);
  assert_false(ends_with(&all[0], "/ws"));
  assert_true(ends_with(&all[1], "/ws"));
  assert_true(ends_with(&all[2], "/wss"));
  assert_true(ends_with(&all[3], "/tls/ws"));
  for (int i = 1; i < 4; i++)
    assert_true(port_of(&all[i]) != 0);
  assert_true(port_of(&all[1]) != port_of(&all[2]));
  /* no certificate: no secure listening; no transport for /ws without the WebSocket one */
  ld_ws_config_t plain;
  ld_ws_config_default(&plain);
  ld_switch_t *b = ws_switch(&loop, NULL, &plain, NULL);
  ld_switch_t *c = sh_switch_new(&loop, NULL);
  ld_multiaddr_t addr;
  ld_multiaddr_parse(&addr, "/ip4/127.0.0.1/tcp/0/wss");
  assert_int_equal(ld_switch_listen(b, &addr), LD_ERR_UNSUPPORTED);
  ld_multiaddr_parse(&addr, "/ip4/127.0.0.1/tcp/0/ws");
  assert_int_equal(ld_switch_listen(c, &addr), LD_ERR_UNSUPPORTED);
  int err = 0;
  assert_null(sh_dial_wait(c, &loop, &ws, &err));
  assert_int_equal(err, LD_ERR_UNSUPPORTED);
  ld_switch_t *sws[] = {a, b, c};
  close_all(&loop, sws, 3);
}

/* ---- large transfers with SHA-256 ---------------------------------------------------------- */

/* The sink answers EOF with SHA-256 of what it received and the byte count (8 bytes, BE). */
typedef struct sink {
  ld_sha256_ctx_t h;
  uint64_t recv;
} sink_t;

static void sink_data(ld_stream_t *s, const uint8_t *data, size_t len) {
  sink_t *k = ld_stream_user_data(s);
  assert_int_equal(ld_sha256_update(&k->h, data, len), 0);
  k->recv += len;
}

static void sink_eof(ld_stream_t *s) {
  sink_t *k = ld_stream_user_data(s);
  uint8_t answer[LD_SHA256_LEN + 8];
  assert_int_equal(ld_sha256_final(&k->h, answer), 0);
  for (int i = 0; i < 8; i++)
    answer[LD_SHA256_LEN + i] = (uint8_t)(k->recv >> (56 - 8 * i));
  assert_int_equal(ld_stream_write(s, answer, sizeof answer), 0);
  assert_int_equal(ld_stream_close_write(s), 0);
}

static void sink_close(ld_stream_t *s, int err) {
  (void)err;
  sink_t *k = ld_stream_user_data(s);
  ld_sha256_clear(&k->h);
  free(k);
}

static const ld_stream_handler_t sink_handler = {
    .on_data = sink_data, .on_eof = sink_eof, .on_close = sink_close};

static void sink_accept(ld_stream_t *s, void *ud) {
  (void)ud;
  sink_t *k = calloc(1, sizeof *k);
  assert_non_null(k);
  assert_int_equal(ld_sha256_begin(&k->h), 0);
  ld_stream_set_handler(s, &sink_handler, k);
}

static void assert_sink_answer(sh_sender_t *x) {
  uint8_t digest[LD_SHA256_LEN];
  assert_int_equal(ld_sha256_final(&x->h, digest), 0);
  assert_int_equal(x->err, 0);
  assert_int_equal(x->answer_len, LD_SHA256_LEN + 8);
  assert_memory_equal(x->answer, digest, LD_SHA256_LEN);
  uint64_t got = 0;
  for (int i = 0; i < 8; i++)
    got = got << 8 | x->answer[LD_SHA256_LEN + i];
  assert_true(got == BIG);
}

static bool both_connected(void *ud) {
  sh_events_t *ev = ud;
  return ev[0].connected == 1 && ev[1].connected == 1;
}

/* b dials a's `listen` address offering `muxer`; 10 MiB go each way at once. */
static void run_transfer(const char *listen, const char *suffix, const char *muxer) {
  uv_loop_t loop;
  assert_int_equal(uv_loop_init(&loop), 0);
  ld_switch_t *a = ws_switch(&loop, NULL, NULL, NULL);
  ld_switch_t *b = ws_switch(&loop, muxer, NULL, NULL);
  sh_events_t ev[2];
  sh_track_events(a, &ev[0]);
  sh_track_events(b, &ev[1]);
  assert_int_equal(ld_switch_handle(a, HASH_SINK, sink_accept, NULL), 0);
  assert_int_equal(ld_switch_handle(b, HASH_SINK, sink_accept, NULL), 0);
  ld_multiaddr_t addr;
  listen_on(a, listen, &addr);
  int err = -1;
  ld_conn_t *c = sh_dial_wait(b, &loop, &addr, &err);
  assert_int_equal(err, 0);
  assert_true(sh_run_until(&loop, both_connected, ev, 5000));
  assert_string_equal(ld_conn_muxer(c), muxer);
  assert_true(ends_with(ld_conn_remote_addr(c), suffix));
  assert_true(ends_with(ld_conn_local_addr(c), suffix));
  assert_true(ends_with(ld_conn_remote_addr(ev[0].last_connected), suffix));
  sh_sender_t x[2];
  sh_sender_init(&x[0], 1, BIG, LD_SHA256_LEN + 8, true);
  sh_sender_init(&x[1], 2, BIG, LD_SHA256_LEN + 8, true);
  const char *protos[] = {HASH_SINK};
  assert_int_equal(ld_switch_open_stream(b, c, protos, 1, sh_sender_opened, &x[0]), 0);
  assert_int_equal(
      ld_switch_open_stream(a, ev[0].last_connected, protos, 1, sh_sender_opened, &x[1]), 0);
  sh_senders_t all = {x, 2};
  assert_true(sh_run_until(&loop, sh_senders_done, &all, 120000));
  assert_sink_answer(&x[0]);
  assert_sink_answer(&x[1]);
  assert_int_equal(ev[0].disconnected, 0);
  assert_int_equal(ev[1].disconnected, 0);
  ld_switch_t *sws[] = {b, a};
  close_all(&loop, sws, 2);
}

static void ws_yamux(void **state) {
  (void)state;
  run_transfer("/ip4/127.0.0.1/tcp/0/ws", "/ws", YAMUX);
}

static void ws_mplex(void **state) {
  (void)state;
  run_transfer("/ip4/127.0.0.1/tcp/0/ws", "/ws", MPLEX);
}

static void wss_yamux(void **state) {
  (void)state;
  run_transfer("/ip4/127.0.0.1/tcp/0/wss", "/wss", YAMUX);
}

static void wss_mplex(void **state) {
  (void)state;
  run_transfer("/ip4/127.0.0.1/tcp/0/wss", "/wss", MPLEX);
}

static void tls_ws_over_ipv6(void **state) {
  (void)state;
  run_transfer("/ip6/::1/tcp/0/tls/ws", "/tls/ws", YAMUX);
}

/* ---- names, SNI and verification ------------------------------------------------------------ */

/* `a`'s address with its host replaced by /dns4/localhost. */
static ld_multiaddr_t as_localhost(const ld_multiaddr_t *a) {
  ld_multiaddr_t out;
  memset(&out, 0, sizeof out);
  size_t off = 0;
  ld_multiaddr_component_t c;
  ld_multiaddr_next(a, &off, &c);
  assert_int_equal(ld_multiaddr_push(&out, LD_MA_DNS4, (const uint8_t *)"localhost", 9), 0);
  while (ld_multiaddr_next(a, &off, &c) == 1)
    assert_int_equal(ld_multiaddr_push(&out, c.code, c.value, c.value_len), 0);
  return out;
}

static void dials_names_and_verifies_certificates(void **state) {
  (void)state;
  uv_loop_t loop;
  assert_int_equal(uv_loop_init(&loop), 0);
  sh_log_capture();
  ld_switch_t *a = ws_switch(&loop, NULL, NULL, NULL);
  ld_multiaddr_t wss, ws, tcp;
  listen_on(a, "/ip4/127.0.0.1/tcp/0/wss", &wss);
  listen_on(a, "/ip4/127.0.0.1/tcp/0/ws", &ws);
  sh_listen_local(a, &tcp);
  /* not verifying: any certificate, by name (SNI localhost) */
  ld_switch_t *b = ws_switch(&loop, NULL, NULL, NULL);
  ld_multiaddr_t named = as_localhost(&wss);
  int err = -1;
  ld_conn_t *c = sh_dial_wait(b, &loop, &named, &err);
  assert_int_equal(err, 0);
  assert_non_null(c);
  /* verifying against the test certificate as the trust anchor */
  ld_ws_config_t v;
  ld_ws_config_default(&v);
  v.tls_verify = true;
  v.tls_ca_path = g_cert;
  ld_switch_t *d = ws_switch(&loop, NULL, &v, NULL);
  c = sh_dial_wait(d, &loop, &named, &err);
  assert_int_equal(err, 0);
  assert_non_null(c);
  ld_switch_t *e = ws_switch(&loop, NULL, &v, NULL);
  assert_null(sh_dial_wait(e, &loop, &wss, &err)); /* 127.0.0.1 is not the certificate's name */
  assert_int_equal(err, LD_ERR_HANDSHAKE);
  assert_true(sh_log_contains("ws dial failed"));
  /* the wrong kind of listener behind the address */
  ld_multiaddr_t wrong = tcp_part(&ws);
  ld_multiaddr_push(&wrong, LD_MA_WSS, NULL, 0);
  assert_null(sh_dial_wait(e, &loop, &wrong, &err)); /* TLS to a plain WebSocket port */
  assert_int_equal(err, LD_ERR_HANDSHAKE);
  wrong = tcp_part(&tcp);
  ld_multiaddr_push(&wrong, LD_MA_WS, NULL, 0);
  assert_null(sh_dial_wait(e, &loop, &wrong, &err)); /* HTTP to a libp2p TCP port */
  assert_true(err == LD_ERR_CLOSED || err == LD_ERR_MALFORMED);
  ld_switch_t *sws[] = {b, d, e, a};
  close_all(&loop, sws, 4);
  sh_log_release();
}

/* ---- bad peers ------------------------------------------------------------------------------ */

typedef struct fixture {
  sh_target_t t; /* the node under attack and a well-behaved WebSocket peer */
  ld_multiaddr_t ws_addr, wss_addr;
} fixture_t;

static int setup_with(void **state, size_t max_pending) {
  fixture_t *f = calloc(1, sizeof *f);
  assert_non_null(f);
  sh_target_init(&f->t);
  ld_switch_config_t cfg;
  ld_switch_config_default(&cfg);
  cfg.handshake_timeout_ms = 2000;
  ld_ws_config_t w;
  ld_ws_config_default(&w);
  w.tls_cert_path = g_cert;
  w.tls_key_path = g_key;
  w.handshake_timeout_ms = max_pending > 0 ? 5000 : 500;
  w.max_pending_handshakes = max_pending;
  f->t.node = ws_switch(&f->t.loop, NULL, &w, &cfg);
  f->t.good = ws_switch(&f->t.loop, MPLEX, NULL, NULL);
  sh_target_track(&f->t);
  listen_on(f->t.node, "/ip4/127.0.0.1/tcp/0/ws", &f->ws_addr);
  listen_on(f->t.node, "/ip4/127.0.0.1/tcp/0/wss", &f->wss_addr);
  sh_target_connect(&f->t, &f->wss_addr);
  *state = f;
  return 0;
}

static int setup(void **state) {
  return setup_with(state, 0);
}

static int setup_two_handshakes(void **state) {
  return setup_with(state, 2);
}

static int teardown(void **state) {
  fixture_t *f = *state;
  sh_target_assert_progress(&f->t, 50);
  assert_int_equal(f->t.ev_node.connected, 1); /* only the good peer ever got through */
  sh_target_close(&f->t);
  free(f);
  return 0;
}

static void raw_connect(fixture_t *f, sh_raw_t *r, const ld_multiaddr_t *addr) {
  ld_multiaddr_t tcp = tcp_part(addr);
  sh_raw_connect(r, &f->t.loop, &tcp);
}

static bool rx_has(const sh_raw_t *r, const void *bytes, size_t n) {
  return r->rx.len >= n && memmem(r->rx.data, r->rx.len, bytes, n) != NULL;
}

static bool rx_has_header_end(void *ud) {
  return rx_has(ud, "\r\n\r\n", 4) || ((sh_raw_t *)ud)->eof;
}

/* Completes the opening handshake by hand and drops the answer from rx. */
static void raw_ws_upgrade(fixture_t *f, sh_raw_t *r) {
  raw_connect(f, r, &f->ws_addr);
  static const char req[] = "GET /anything HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\n"
                            "Connection: Upgrade\r\nSec-WebSocket-Key: " WS_KEY "\r\n"
                            "Sec-WebSocket-Version: 13\r\n"
                            "Sec-WebSocket-Extensions: permessage-deflate\r\n\r\n";
  assert_int_equal(sh_raw_write(r, req, strlen(req)), 0);
  assert_true(sh_run_until(&f->t.loop, rx_has_header_end, r, 5000));
  assert_memory_equal(r->rx.data, "HTTP/1.1 101 ", 13);
  assert_true(rx_has(r, "Sec-WebSocket-Accept: " WS_ACCEPT "\r\n", 52));
  assert_false(rx_has(r, "Extensions", 10));
  const uint8_t *end = memmem(r->rx.data, r->rx.len, "\r\n\r\n", 4);
  ld_buf_consume(&r->rx, (size_t)(end + 4 - r->rx.data));
}

/* A masked client frame. */
static size_t masked(uint8_t *out, uint8_t first, const char *payload, size_t n) {
  static const uint8_t key[4] = {9, 8, 7, 6};
  assert_true(n < 126);
  out[0] = first;
  out[1] = 0x80 | (uint8_t)n;
  memcpy(out + 2, key, 4);
  for (size_t i = 0; i < n; i++)
    out[6 + i] = (uint8_t)payload[i] ^ key[i % 4];
  return 6 + n;
}

static void garbage_instead_of_http(void **state) {
  fixture_t *f = *state;
  sh_raw_t r;
  raw_connect(f, &r, &f->ws_addr);
  static const char ms[] = "\x13/multistream/1.0.0\n\x07/noise\n";
  assert_int_equal(sh_raw_write(&r, ms, sizeof ms - 1), 0);
  sh_raw_assert_cut_off(&r, "/ws", "MALFORMED");
  assert_memory_equal(r.rx.data, "HTTP/1.1 400 ", 13);
  sh_raw_close(&r);
}

static void http_without_upgrade(void **state) {
  fixture_t *f = *state;
  sh_raw_t r;
  raw_connect(f, &r, &f->ws_addr);
  static const char req[] = "GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nUser-Agent: curl/8.0\r\n"
                            "Accept: */*\r\n\r\n";
  assert_int_equal(sh_raw_write(&r, req, strlen(req)), 0);
  sh_raw_assert_cut_off(&r, "/ws", "HANDSHAKE");
  assert_memory_equal(r.rx.data, "HTTP/1.1 400 ", 13);
  assert_true(sh_log_contains("no Upgrade: websocket"));
  sh_raw_close(&r);
}

static void oversize_header_block(void **state) {
  fixture_t *f = *state;
  sh_raw_t r;
  raw_connect(f, &r, &f->ws_addr);
  ld_buf_t b;
  ld_buf_init(&b);
  ld_buf_append(&b, "GET / HTTP/1.1\r\n", 16);
  while (b.len < 12 * 1024)
    ld_buf_append(&b, "X-Filler: abcdefghijklmnopqrstuvwxyz0123456789\r\n", 48);
  assert_int_equal(sh_raw_write(&r, b.data, b.len), 0);
  ld_buf_clear(&b);
  sh_target_assert_progress(&f->t, 5);
  sh_raw_assert_cut_off(&r, "/ws", "TOO_LARGE");
  assert_memory_equal(r.rx.data, "HTTP/1.1 431 ", 13);
  sh_raw_close(&r);
}

static void stalled_handshake(void **state) {
  fixture_t *f = *state;
  sh_raw_t r;
  raw_connect(f, &r, &f->ws_addr);
  static const char part[] = "GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n";
  assert_int_equal(sh_raw_write(&r, part, strlen(part)), 0);
  sh_target_assert_progress(&f->t, 5);
  sh_raw_assert_cut_off(&r, "/ws", "TIMEOUT");
  sh_raw_close(&r);
}

static void unmasked_client_frame(void **state) {
  fixture_t *f = *state;
  sh_raw_t r;
  raw_ws_upgrade(f, &r);
  static const uint8_t frame[] = {0x82, 0x05, 'h', 'e', 'l', 'l', 'o'};
  assert_int_equal(sh_raw_write(&r, frame, sizeof frame), 0);
  sh_raw_assert_cut_off(&r, "/ws", "PROTOCOL");
  assert_true(rx_has(&r, "\x88\x02\x03\xea", 4)); /* close 1002 */
  sh_raw_close(&r);
}

static void oversize_frame(void **state) {
  fixture_t *f = *state;
  sh_raw_t r;
  raw_ws_upgrade(f, &r);
  /* a binary frame announcing 2^40 bytes, then its first byte */
  static const uint8_t frame[] = {0x82, 0xff, 0, 0, 0x01, 0, 0, 0, 0, 0, 1, 2, 3, 4, 'x'};
  assert_int_equal(sh_raw_write(&r, frame, sizeof frame), 0);
  sh_raw_assert_cut_off(&r, "/ws", "FRAME_TOO_LARGE");
  assert_true(rx_has(&r, "\x88\x02\x03\xf1", 4)); /* close 1009 */
  sh_raw_close(&r);
}

static bool rx_has_pong(void *ud) {
  return rx_has(ud, "\x8a\x02hi", 4);
}

static void ping_then_close_frame(void **state) {
  fixture_t *f = *state;
  sh_raw_t r;
  raw_ws_upgrade(f, &r);
  uint8_t frame[32];
  size_t n = masked(frame, 0x89, "hi", 2);
  assert_int_equal(sh_raw_write(&r, frame, n), 0);
  assert_true(sh_run_until(&f->t.loop, rx_has_pong, &r, 5000));
  n = masked(frame, 0x88, "\x03\xe8", 2);
  assert_int_equal(sh_raw_write(&r, frame, n), 0);
  sh_raw_assert_cut_off(&r, "/ws", "CLOSED");
  assert_true(rx_has(&r, "\x88\x02\x03\xe8", 4)); /* the close answered */
  sh_raw_close(&r);
}

static void plain_text_on_the_tls_port(void **state) {
  fixture_t *f = *state;
  sh_raw_t r;
  raw_connect(f, &r, &f->wss_addr);
  static const char req[] = "GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\n"
                            "Connection: Upgrade\r\nSec-WebSocket-Key: " WS_KEY "\r\n"
                            "Sec-WebSocket-Version: 13\r\n\r\n";
  assert_int_equal(sh_raw_write(&r, req, strlen(req)), 0);
  sh_raw_assert_cut_off(&r, "/wss", "HANDSHAKE");
  sh_raw_close(&r);
  /* random bytes */
  raw_connect(f, &r, &f->wss_addr);
  uint8_t junk[512];
  ld_random_bytes(junk, sizeof junk);
  junk[0] = 0x16; /* looks like a handshake record at first */
  assert_int_equal(sh_raw_write(&r, junk, sizeof junk), 0);
  sh_raw_assert_cut_off(&r, "/wss", "HANDSHAKE");
  sh_raw_close(&r);
}

static void too_many_handshakes_at_once(void **state) {
  fixture_t *f = *state;
  sh_raw_t r[3];
  raw_connect(f, &r[0], &f->ws_addr);
  raw_connect(f, &r[1], &f->ws_addr);
  sh_run_for(&f->t.loop, 50);
  raw_connect(f, &r[2], &f->ws_addr);
  assert_true(sh_run_until(&f->t.loop, sh_raw_eof, &r[2], 2000)); /* long before the 5 s deadline */
  assert_false(r[0].eof);
  assert_false(r[1].eof);
  assert_true(sh_log_contains("reason=LIMIT"));
  sh_target_assert_progress(&f->t, 5);
  for (int i = 0; i < 3; i++)
    sh_raw_close(&r[i]);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(listen_addresses_carry_the_suffix_and_port),
      cmocka_unit_test(ws_yamux),
      cmocka_unit_test(ws_mplex),
      cmocka_unit_test(wss_yamux),
      cmocka_unit_test(wss_mplex),
      cmocka_unit_test(tls_ws_over_ipv6),
      cmocka_unit_test(dials_names_and_verifies_certificates),
      cmocka_unit_test_setup_teardown(garbage_instead_of_http, setup, teardown),
      cmocka_unit_test_setup_teardown(http_without_upgrade, setup, teardown),
      cmocka_unit_test_setup_teardown(oversize_header_block, setup, teardown),
      cmocka_unit_test_setup_teardown(stalled_handshake, setup, teardown),
      cmocka_unit_test_setup_teardown(unmasked_client_frame, setup, teardown),
      cmocka_unit_test_setup_teardown(oversize_frame, setup, teardown),
      cmocka_unit_test_setup_teardown(ping_then_close_frame, setup, teardown),
      cmocka_unit_test_setup_teardown(plain_text_on_the_tls_port, setup, teardown),
      cmocka_unit_test_setup_teardown(too_many_handshakes_at_once, setup_two_handshakes, teardown),
  };
  return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
