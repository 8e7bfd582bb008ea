/* A node under misbehaving raw TCP clients: garbage instead of multistream, oversize multistream
 * messages and muxer frames, a forged Noise identity signature, a flood of streams, a stalled
 * handshake, and more connections than allowed. Each one is cut off with a named reason (checked
 * through on_disconnected or the dial result, and in the log), while a well-behaved peer keeps
 * exchanging data with the same node during and after. */
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
#include "p2p/multistream.h"
#include "p2p/stream.h"
#include "p2p/switch.h"
#include "switch_harness.h"
#include "switch_traffic.h"

typedef struct fixture {
  sh_target_t t; /* the node under attack and a well-behaved peer */
  ld_multiaddr_t node_addr;
} fixture_t;

/* ---- fixture --------------------------------------------------------------------------------- */

static int setup_with(void **state, size_t max_connections) {
  fixture_t *f = calloc(1, sizeof *f);
  assert_non_null(f);
  sh_target_init(&f->t);
  ld_switch_config_t cfg;
  ld_switch_config_default(&cfg);
  cfg.handshake_timeout_ms = 500;
  cfg.negotiation_timeout_ms = 300;
  cfg.max_connections = max_connections;
  f->t.node = sh_switch_new(&f->t.loop, &cfg);
  f->t.good = sh_switch_new(&f->t.loop, NULL);
  sh_target_track(&f->t);
  sh_listen_local(f->t.node, &f->node_addr);
  sh_target_connect(&f->t, &f->node_addr);
  *state = f;
  return 0;
}

static int setup(void **state) {
  return setup_with(state, 50);
}

static int setup_two_connections(void **state) {
  return setup_with(state, 1);
}

static int teardown(void **state) {
  fixture_t *f = *state;
  sh_target_assert_progress(&f->t, 50);
  sh_target_close(&f->t);
  free(f);
  return 0;
}

/* ---- helpers ------------------------------------------------------------------------------- */

static bool secure_settled(void *ud) {
  sh_secure_t *s = ud;
  return s->done || s->err != 0 || s->raw.eof;
}

static void secure_upgrade(fixture_t *f, sh_secure_t *s, const char *muxer) {
  ld_privkey_t id;
  assert_int_equal(ld_privkey_generate(&id, LD_KEY_SECP256K1), 0);
  ld_multiaddr_t a = sh_strip_peer(&f->node_addr);
  sh_secure_connect(s, &f->t.loop, &a, &id, muxer, NULL, 0);
  assert_true(sh_run_until(&f->t.loop, secure_settled, s, 5000));
  assert_true(s->done);
  assert_string_equal(s->muxer, muxer);
}

typedef struct disconnect_wait {
  fixture_t *f;
  int count;
} disconnect_wait_t;

static bool node_disconnected(void *ud) {
  disconnect_wait_t *w = ud;
  return w->f->t.ev_node.disconnected >= w->count;
}

/* ---- (a) garbage instead of multistream ------------------------------------------------------ */

static void garbage_instead_of_multistream(void **state) {
  fixture_t *f = *state;
  sh_raw_t r;
  ld_multiaddr_t a = sh_strip_peer(&f->node_addr);
  sh_raw_connect(&r, &f->t.loop, &a);
  char req[256];
  int n = snprintf(req, sizeof req,
                   "GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nUser-Agent: curl/8.0\r\nAccept: */*\r\n"
                   "Connection: keep-alive\r\nCache-Control: no-cache\r\n\r\n");
  assert_int_equal(sh_raw_write(&r, req, (size_t)n), 0);
  sh_target_assert_progress(&f->t, 5);
  sh_raw_assert_cut_off(&r, "", "MALFORMED");
  sh_raw_close(&r);
  assert_int_equal(f->t.ev_node.disconnected, 0); /* never reported connected */
}

static void wrong_multistream_version(void **state) {
  fixture_t *f = *state;
  sh_raw_t r;
  ld_multiaddr_t a = sh_strip_peer(&f->node_addr);
  sh_raw_connect(&r, &f->t.loop, &a);
  ld_buf_t b;
  ld_buf_init(&b);
  assert_int_equal(ld_mss_write_message(&b, "/multistream/2.0.0", 18), 0);
  assert_int_equal(sh_raw_write(&r, b.data, b.len), 0);
  ld_buf_clear(&b);
  sh_raw_assert_cut_off(&r, "", "NEGOTIATION_FAILED");
  sh_raw_close(&r);
}

/* ---- (b) oversize messages and frames -------------------------------------------------------- */

static void oversize_multistream_message(void **state) {
  fixture_t *f = *state;
  sh_raw_t r;
  ld_multiaddr_t a = sh_strip_peer(&f->node_addr);
  sh_raw_connect(&r, &f->t.loop, &a);
  uint8_t msg[2 + 2048];
  msg[0] = 0x80; /* uvarint 2048 */
  msg[1] = 0x10;
  memset(msg + 2, 'a', 2047);
  msg[2 + 2047] = '\n';
  assert_int_equal(sh_raw_write(&r, msg, sizeof msg), 0);
  sh_raw_assert_cut_off(&r, "", "TOO_LARGE");
  sh_raw_close(&r);
}

static void oversize_mplex_frame(void **state) {
  fixture_t *f = *state;
  sh_secure_t s;
  secure_upgrade(f, &s, "/mplex/6.7.0");
  /* NewStream 0 "0", then MessageInitiator 0 announcing 2 MiB (mplex allows 1 MiB) */
  size_t big = 2u * 1024 * 1024;
  uint8_t *frame = calloc(1, 16 + big);
  assert_non_null(frame);
  size_t n = 0;
  frame[n++] = 0x00;
  frame[n++] = 0x01;
  frame[n++] = '0';
  frame[n++] = 0x02;
  frame[n++] = 0x80;
  frame[n++] = 0x80;
  frame[n++] = 0x80;
  frame[n++] = 0x01;
  assert_int_equal(sh_secure_send(&s, frame, n + big), 0);
  free(frame);
  disconnect_wait_t w = {f, 1};
  assert_true(sh_run_until(&f->t.loop, node_disconnected, &w, 10000));
  assert_int_equal(f->t.ev_node.last_reason, LD_ERR_FRAME_TOO_LARGE);
  sh_raw_assert_cut_off(&s.raw, "", "FRAME_TOO_LARGE");
  sh_secure_close(&s);
}

static void oversize_noise_frame_garbage(void **state) {
  fixture_t *f = *state;
  sh_secure_t s;
  secure_upgrade(f, &s, "/yamux/1.0.0");
  /* a maximal Noise frame that does not authenticate */
  uint8_t *frame = malloc(2 + 65535);
  assert_non_null(frame);
  frame[0] = 0xff;
  frame[1] = 0xff;
  memset(frame + 2, 0x5a, 65535);
  assert_int_equal(sh_raw_write(&s.raw, frame, 2 + 65535), 0);
  free(frame);
  disconnect_wait_t w = {f, 1};
  assert_true(sh_run_until(&f->t.loop, node_disconnected, &w, 10000));
  assert_int_equal(f->t.ev_node.last_reason, LD_ERR_DECRYPT);
  sh_raw_assert_cut_off(&s.raw, "", "DECRYPT");
  sh_secure_close(&s);
}

/* ---- (c) a forged identity signature --------------------------------------------------------- */

static void forged_identity_signature(void **state) {
  fixture_t *f = *state;
  ld_privkey_t id;
  assert_int_equal(ld_privkey_generate(&id, LD_KEY_ED25519), 0);
  ld_pubkey_t pub;
  ld_privkey_public(&id, &pub);
  /* NoiseHandshakePayload { identity_key = pub, identity_sig = 64 bytes that sign nothing } */
  ld_buf_t payload;
  ld_buf_init(&payload);
  ld_buf_u8(&payload, 0x0a);
  ld_buf_lp(&payload, pub.proto, pub.proto_len);
  uint8_t sig[64];
  memset(sig, 0x11, sizeof sig);
  ld_buf_u8(&payload, 0x12);
  ld_buf_lp(&payload, sig, sizeof sig);
  sh_secure_t s;
  ld_multiaddr_t a = sh_strip_peer(&f->node_addr);
  sh_secure_connect(&s, &f->t.loop, &a, &id, "/yamux/1.0.0", payload.data, payload.len);
  ld_buf_clear(&payload);
  sh_target_assert_progress(&f->t, 5);
  sh_raw_assert_cut_off(&s.raw, "", "BAD_SIGNATURE");
  assert_false(s.done);
  assert_int_equal(f->t.ev_node.connected, 1); /* only the good peer */
  sh_secure_close(&s);
}

/* ---- (d) a flood of streams ------------------------------------------------------------------ */

static void ten_thousand_streams(void **state) {
  fixture_t *f = *state;
  sh_secure_t s;
  secure_upgrade(f, &s, "/yamux/1.0.0");
  enum { N = 10000 };
  uint8_t *frames = malloc(N * 12);
  assert_non_null(frames);
  for (uint32_t i = 0; i < N; i++) {
    uint8_t *h = frames + 12 * i;
    uint32_t id = 2 * i + 1;
    /* WINDOW_UPDATE | SYN on a fresh odd stream ID, delta 0 */
    const uint8_t hdr[12] = {
        0, 1, 0, 1, (uint8_t)(id >> 24), (uint8_t)(id >> 16), (uint8_t)(id >> 8), (uint8_t)id,
        0, 0, 0, 0};
    memcpy(h, hdr, 12);
  }
  assert_int_equal(sh_secure_send(&s, frames, N * 12), 0);
  free(frames);
  sh_target_assert_progress(&f->t, 5);
  disconnect_wait_t w = {f, 1};
  assert_true(sh_run_until(&f->t.loop, node_disconnected, &w, 10000));
  assert_int_equal(f->t.ev_node.last_reason, LD_ERR_TOO_MANY_STREAMS);
  sh_raw_assert_cut_off(&s.raw, "", "TOO_MANY_STREAMS");
  sh_secure_close(&s);
}

/* ---- (e) a stalled handshake ----------------------------------------------------------------- */

static void stalled_handshake(void **state) {
  fixture_t *f = *state;
  sh_raw_t r;
  ld_multiaddr_t a = sh_strip_peer(&f->node_addr);
  sh_raw_connect(&r, &f->t.loop, &a);
  ld_buf_t b;
  ld_buf_init(&b);
  ld_mss_write_message(&b, LD_MSS_PROTOCOL_ID, strlen(LD_MSS_PROTOCOL_ID));
  ld_mss_write_message(&b, "/noise", 6);
  assert_int_equal(sh_raw_write(&r, b.data, b.len), 0);
  ld_buf_clear(&b);
  /* the node answers the negotiation, then waits for Noise message 1 that never comes */
  sh_target_assert_progress(&f->t, 5);
  assert_false(r.eof);
  sh_raw_assert_cut_off(&r, "", "TIMEOUT");
  assert_true(sh_log_contains("stage=handshake"));
  sh_raw_close(&r);
}

static void silent_client(void **state) {
  fixture_t *f = *state;
  sh_raw_t r;
  ld_multiaddr_t a = sh_strip_peer(&f->node_addr);
  sh_raw_connect(&r, &f->t.loop, &a);
  sh_raw_assert_cut_off(&r, "", "TIMEOUT");
  sh_raw_close(&r);
}

/* ---- streams that never negotiate ------------------------------------------------------------ */

typedef struct open_wait {
  bool done;
  int err;
} open_wait_t;

static void open_failed(ld_stream_t *s, int err, void *ud) {
  open_wait_t *w = ud;
  assert_null(s);
  w->done = true;
  w->err = err;
}

static bool open_done(void *ud) {
  return ((open_wait_t *)ud)->done;
}

/* A yamux frame with `flags` for stream `id` among the bytes the client received. */
static bool received_frame(const sh_secure_t *s, uint16_t flags, uint32_t id) {
  for (size_t off = 0; off + 12 <= s->plain.len;) {
    const uint8_t *h = s->plain.data + off;
    uint32_t len = (uint32_t)h[8] << 24 | (uint32_t)h[9] << 16 | (uint32_t)h[10] << 8 | h[11];
    uint32_t sid = (uint32_t)h[4] << 24 | (uint32_t)h[5] << 16 | (uint32_t)h[6] << 8 | h[7];
    if ((h[2] << 8 | h[3]) & flags && sid == id)
      return true;
    off += 12 + (h[1] == 0 ? len : 0);
  }
  return false;
}

typedef struct rst_wait {
  sh_secure_t *s;
  uint32_t id;
} rst_wait_t;

static bool got_reset(void *ud) {
  rst_wait_t *w = ud;
  return received_frame(w->s, 0x8, w->id);
}

static void silent_streams_time_out(void **state) {
  fixture_t *f = *state;
  sh_secure_t s;
  secure_upgrade(f, &s, "/yamux/1.0.0");
  /* the node opens a stream to a peer that never answers multistream */
  ld_conn_t *c = f->t.ev_node.last_connected;
  assert_non_null(c);
  const char *protos[] = {SH_ECHO};
  open_wait_t w = {0};
  assert_int_equal(ld_switch_open_stream(f->t.node, c, protos, 1, open_failed, &w), 0);
  assert_true(sh_run_until(&f->t.loop, open_done, &w, 5000));
  assert_int_equal(w.err, LD_ERR_TIMEOUT);
  rst_wait_t mine = {&s, 2}; /* the node resets its stream 2 */
  assert_true(sh_run_until(&f->t.loop, got_reset, &mine, 5000));

  /* the peer opens stream 1 and never sends a proposal: the node resets it */
  const uint8_t syn[12] = {0, 1, 0, 1, 0, 0, 0, 1, 0, 0, 0, 0};
  assert_int_equal(sh_secure_send(&s, syn, sizeof syn), 0);
  rst_wait_t rw = {&s, 1};
  assert_true(sh_run_until(&f->t.loop, got_reset, &rw, 5000));
  assert_int_equal(ld_conn_stream_count(c), 0);
  assert_int_equal(f->t.ev_node.disconnected, 0); /* the connection itself stays */
  sh_secure_close(&s);
  disconnect_wait_t dw = {f, 1};
  assert_true(sh_run_until(&f->t.loop, node_disconnected, &dw, 5000));
  assert_int_equal(f->t.ev_node.last_reason, LD_ERR_CLOSED);
}

/* ---- connection cap -------------------------------------------------------------------------- */

static void connections_beyond_the_cap_are_refused(void **state) {
  fixture_t *f = *state; /* max_connections = 1, taken by the good peer */
  ld_switch_t *extra = sh_switch_new(&f->t.loop, NULL);
  int err = 0;
  assert_null(sh_dial_wait(extra, &f->t.loop, &f->node_addr, &err));
  assert_int_equal(err, LD_ERR_CLOSED);
  assert_true(sh_log_contains("refusing inbound connection"));
  assert_true(sh_log_contains("reason=TOO_MANY_CONNECTIONS"));
  sh_switch_close(extra, &f->t.loop);
}

int main(void) {
  ld_log_set_level(LD_LOG_INFO);
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(garbage_instead_of_multistream, setup, teardown),
      cmocka_unit_test_setup_teardown(wrong_multistream_version, setup, teardown),
      cmocka_unit_test_setup_teardown(oversize_multistream_message, setup, teardown),
      cmocka_unit_test_setup_teardown(oversize_mplex_frame, setup, teardown),
      cmocka_unit_test_setup_teardown(oversize_noise_frame_garbage, setup, teardown),
      cmocka_unit_test_setup_teardown(forged_identity_signature, setup, teardown),
      cmocka_unit_test_setup_teardown(ten_thousand_streams, setup, teardown),
      cmocka_unit_test_setup_teardown(stalled_handshake, setup, teardown),
      cmocka_unit_test_setup_teardown(silent_client, setup, teardown),
      cmocka_unit_test_setup_teardown(silent_streams_time_out, setup, teardown),
      cmocka_unit_test_setup_teardown(connections_beyond_the_cap_are_refused, setup_two_connections,
                                      teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
