#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "base/buf.h"
#include "base/error.h"
#include "p2p/muxer.h"

#include "muxer_pair.h"

static const ld_muxer_ops_t *ops = &ld_yamux_ops;

/* ---- digest vectors -------------------------------------------------------------------------- */

static void client_frames_match_vectors(void **state) {
  (void)state;
  mp_peer_t *c = mp_peer_new(ops, true, NULL);
  uint64_t sid;
  assert_int_equal(ops->open_stream(c->m, &sid), 0);
  assert_int_equal(sid, 1);
  mp_assert_output_hex(c, "000100010000000100000000");

  uint8_t payload[19];
  mp_pattern(payload, sizeof payload, 0, 1);
  assert_int_equal(ops->write(c->m, sid, payload, sizeof payload), 19);
  ld_buf_t b;
  ld_buf_init(&b);
  mp_take(c, &b);
  uint8_t hdr[12];
  mp_unhex("000000000000000100000013", hdr, sizeof hdr);
  assert_int_equal(b.len, 12 + 19);
  assert_memory_equal(b.data, hdr, 12);
  assert_memory_equal(b.data + 12, payload, 19);
  ld_buf_clear(&b);

  assert_int_equal(ops->close_write(c->m, sid), 0);
  mp_assert_output_hex(c, "000000040000000100000000");
  assert_int_equal(ops->write(c->m, sid, payload, 1), LD_ERR_CLOSED);
  assert_int_equal(ops->close_write(c->m, sid), LD_ERR_CLOSED);
  assert_int_equal(ops->go_away(c->m, 0), 0);
  mp_assert_output_hex(c, "000300000000000000000000");
  assert_int_equal(ops->go_away(c->m, 0), 0);
  assert_int_equal(ops->pending_output(c->m), 0);
  mp_peer_free(c);
}

static void server_frames_match_vectors(void **state) {
  (void)state;
  mp_peer_t *s = mp_peer_new(ops, false, NULL);
  assert_int_equal(mp_feed_hex(s, "000100010000000100000000", 0), 0);
  assert_int_equal(mp_count(s, MP_EV_OPEN, 1), 1);
  mp_assert_output_hex(s, "000100020000000100000000");

  uint64_t sid;
  assert_int_equal(ops->open_stream(s->m, &sid), 0);
  assert_int_equal(sid, 2);
  mp_assert_output_hex(s, "000100010000000200000000");
  assert_int_equal(ops->reset(s->m, sid), 0);
  mp_assert_output_hex(s, "000100080000000200000000");
  assert_int_equal(ops->write(s->m, sid, (const uint8_t *)"x", 1), LD_ERR_NOT_FOUND);

  assert_int_equal(mp_feed_hex(s, "000200010000000000000007", 0), 0);
  mp_assert_output_hex(s, "000200020000000000000007");
  assert_int_equal(ops->stream_count(s->m), 1);
  mp_peer_free(s);
}

static void decodes_vector_frames(void **state) {
  (void)state;
  mp_peer_t *s = mp_peer_new(ops, false, NULL);
  char frames[512] = "000100010000000100000000"
                     "000000000000000100000013";
  for (int i = 0; i < 19; i++)
    strcat(frames, "41");
  strcat(frames, "000000040000000100000000");
  assert_int_equal(mp_feed_hex(s, frames, 0), 0);
  assert_int_equal(s->nev, 3);
  assert_int_equal(s->ev[0].kind, MP_EV_OPEN);
  assert_int_equal(s->ev[1].kind, MP_EV_DATA);
  assert_int_equal(s->ev[1].code, 19);
  assert_int_equal(s->ev[2].kind, MP_EV_EOF);
  assert_int_equal(mp_rx_of(s, 1)->len, 19);
  assert_memory_equal(mp_rx_of(s, 1)->data, "AAAAAAAAAAAAAAAAAAA", 19);
  mp_peer_free(s);

  mp_peer_t *c = mp_peer_new(ops, true, NULL);
  assert_int_equal(mp_feed_hex(c, "000100010000000200000000000100080000000200000000", 0), 0);
  assert_int_equal(mp_count(c, MP_EV_OPEN, 2), 1);
  assert_int_equal(mp_count(c, MP_EV_RESET, 2), 1);
  assert_int_equal(ops->stream_count(c->m), 0);
  assert_int_equal(mp_feed_hex(c, "000300000000000000000000", 0), 0);
  assert_int_equal(mp_count(c, MP_EV_GOAWAY, 0), 1);
  assert_int_equal(c->ev[c->nev - 1].code, 0);
  mp_peer_free(c);
}

/* ---- engine pairs ---------------------------------------------------------------------------- */

static const size_t splits[] = {0, 1, 3, 12, 13, 1000, 70000};

static void open_accept_data_both_ways(void **state) {
  (void)state;
  for (size_t k = 0; k < sizeof splits / sizeof splits[0]; k++) {
    mp_peer_t *c = mp_peer_new(ops, true, NULL);
    mp_peer_t *s = mp_peer_new(ops, false, NULL);
    uint64_t cs, ss;
    assert_int_equal(ops->open_stream(c->m, &cs), 0);
    assert_int_equal(ops->open_stream(s->m, &ss), 0);
    assert_int_equal(cs, 1);
    assert_int_equal(ss, 2);
    static uint8_t big[200000];
    mp_pattern(big, sizeof big, 0, 7);
    /* data follows the SYN at once, without waiting for the ACK */
    assert_int_equal(ops->write(c->m, cs, big, sizeof big), (int64_t)sizeof big);
    assert_int_equal(ops->write(s->m, ss, (const uint8_t *)"pong", 4), 4);
    mp_exchange(c, s, splits[k], 0);
    assert_int_equal(mp_count(s, MP_EV_OPEN, 1), 1);
    assert_int_equal(mp_count(c, MP_EV_OPEN, 2), 1);
    assert_int_equal(mp_rx_of(s, 1)->len, sizeof big);
    assert_true(mp_matches_pattern(mp_rx_of(s, 1)->data, sizeof big, 7));
    assert_int_equal(mp_rx_of(c, 2)->len, 4);
    assert_memory_equal(mp_rx_of(c, 2)->data, "pong", 4);
    assert_int_equal(ops->write(s->m, 1, (const uint8_t *)"back", 4), 4);
    assert_int_equal(ops->write(c->m, 2, (const uint8_t *)"fore", 4), 4);
    mp_exchange(c, s, splits[k], 0);
    assert_memory_equal(mp_rx_of(c, 1)->data, "back", 4);
    assert_memory_equal(mp_rx_of(s, 2)->data, "fore", 4);
    assert_int_equal(ops->stream_count(c->m), 2);
    assert_int_equal(ops->stream_count(s->m), 2);
    mp_peer_free(c);
    mp_peer_free(s);
  }
}

static void half_close_and_eof(void **state) {
  (void)state;
  for (size_t k = 0; k < sizeof splits / sizeof splits[0]; k++) {
    mp_peer_t *c = mp_peer_new(ops, true, NULL);
    mp_peer_t *s = mp_peer_new(ops, false, NULL);
    uint64_t sid;
    assert_int_equal(ops->open_stream(c->m, &sid), 0);
    assert_int_equal(ops->write(c->m, sid, (const uint8_t *)"request", 7), 7);
    assert_int_equal(ops->close_write(c->m, sid), 0);
    mp_exchange(c, s, splits[k], 0);
    assert_int_equal(mp_count(s, MP_EV_EOF, sid), 1);
    assert_memory_equal(mp_rx_of(s, sid)->data, "request", 7);
    /* the server can still answer on its open half */
    assert_int_equal(ops->write(s->m, sid, (const uint8_t *)"response", 8), 8);
    mp_exchange(c, s, splits[k], 0);
    assert_memory_equal(mp_rx_of(c, sid)->data, "response", 8);
    assert_int_equal(ops->stream_count(c->m), 1);
    assert_int_equal(ops->close_write(s->m, sid), 0);
    assert_int_equal(ops->stream_count(s->m), 0); /* closed both ways: forgotten */
    mp_exchange(c, s, splits[k], 0);
    assert_int_equal(mp_count(c, MP_EV_EOF, sid), 1);
    assert_int_equal(ops->stream_count(c->m), 0);
    assert_int_equal(ops->write(c->m, sid, (const uint8_t *)"x", 1), LD_ERR_NOT_FOUND);
    assert_int_equal(ops->consumed(c->m, sid, 0), LD_ERR_NOT_FOUND);
    mp_peer_free(c);
    mp_peer_free(s);
  }
}

static void reset_aborts_both_sides(void **state) {
  (void)state;
  mp_peer_t *c = mp_peer_new(ops, true, NULL);
  mp_peer_t *s = mp_peer_new(ops, false, NULL);
  uint64_t sid;
  assert_int_equal(ops->open_stream(c->m, &sid), 0);
  assert_int_equal(ops->write(c->m, sid, (const uint8_t *)"one", 3), 3);
  mp_exchange(c, s, 0, 0);
  assert_int_equal(ops->reset(s->m, sid), 0);
  assert_int_equal(ops->stream_count(s->m), 0);
  /* the client writes before it learns of the reset: the server ignores those frames */
  assert_int_equal(ops->write(c->m, sid, (const uint8_t *)"two", 3), 3);
  assert_int_equal(ops->close_write(c->m, sid), 0);
  mp_exchange(c, s, 5, 0);
  assert_int_equal(mp_count(c, MP_EV_RESET, sid), 1);
  assert_int_equal(mp_count(s, MP_EV_DATA, sid), 1);
  assert_int_equal(mp_count(s, MP_EV_EOF, sid), 0);
  assert_int_equal(ops->stream_count(c->m), 0);
  assert_int_equal(ops->write(c->m, sid, (const uint8_t *)"x", 1), LD_ERR_NOT_FOUND);
  assert_int_equal(ops->reset(c->m, sid), LD_ERR_NOT_FOUND);
  mp_peer_free(c);
  mp_peer_free(s);
}

static void many_streams_both_directions(void **state) {
  (void)state;
  mp_peer_t *c = mp_peer_new(ops, true, NULL);
  mp_peer_t *s = mp_peer_new(ops, false, NULL);
  enum { N = 300 };
  uint64_t cid[N], sidv[N];
  for (int i = 0; i < N; i++) {
    assert_int_equal(ops->open_stream(c->m, &cid[i]), 0);
    assert_int_equal(ops->open_stream(s->m, &sidv[i]), 0);
    assert_int_equal(cid[i], 1 + 2 * (uint64_t)i);
    assert_int_equal(sidv[i], 2 + 2 * (uint64_t)i);
    uint8_t msg[64];
    mp_pattern(msg, sizeof msg, 0, cid[i]);
    assert_int_equal(ops->write(c->m, cid[i], msg, sizeof msg), 64);
    mp_pattern(msg, sizeof msg, 0, sidv[i]);
    assert_int_equal(ops->write(s->m, sidv[i], msg, sizeof msg), 64);
  }
  mp_exchange(c, s, 777, 0);
  assert_int_equal(ops->stream_count(c->m), 2 * N);
  for (int i = 0; i < N; i++) {
    assert_true(mp_matches_pattern(mp_rx_of(s, cid[i])->data, 64, cid[i]));
    assert_true(mp_matches_pattern(mp_rx_of(c, sidv[i])->data, 64, sidv[i]));
    assert_int_equal(ops->close_write(c->m, cid[i]), 0);
    assert_int_equal(ops->close_write(s->m, cid[i]), 0);
    assert_int_equal(ops->close_write(c->m, sidv[i]), 0);
    assert_int_equal(ops->close_write(s->m, sidv[i]), 0);
  }
  mp_exchange(c, s, 0, 0);
  assert_int_equal(ops->stream_count(c->m), 0);
  assert_int_equal(ops->stream_count(s->m), 0);
  mp_peer_free(c);
  mp_peer_free(s);
}

/* ---- flow control ---------------------------------------------------------------------------- */

static void send_window_edge_and_writable(void **state) {
  (void)state;
  mp_peer_t *c = mp_peer_new(ops, true, NULL);
  mp_peer_t *s = mp_peer_new(ops, false, NULL);
  s->auto_consume = false;
  uint64_t sid;
  assert_int_equal(ops->open_stream(c->m, &sid), 0);
  static uint8_t buf[300000];
  mp_pattern(buf, sizeof buf, 0, 3);
  assert_int_equal(ops->write(c->m, sid, buf, sizeof buf), 256000);
  assert_int_equal(ops->write(c->m, sid, buf, sizeof buf), 0);
  mp_exchange(c, s, 0, 0);
  assert_int_equal(mp_rx_of(s, sid)->len, 256000);
  assert_int_equal(ops->write(c->m, sid, buf, sizeof buf), 0);
  assert_int_equal(mp_count(c, MP_EV_WRITABLE, sid), 0);

  /* consumed long after the stream opened: no growth; no update before half the window */
  assert_int_equal(ops->read(s->m, NULL, 0, 1000), 0);
  assert_int_equal(ops->consumed(s->m, sid, 131071), 0);
  assert_int_equal(ops->pending_output(s->m), 0);
  assert_int_equal(ops->consumed(s->m, sid, 1), 0);
  mp_assert_output_hex(s, "000100000000000100020000");
  assert_int_equal(mp_feed_hex(c, "000100000000000100020000", 1000), 0);
  assert_int_equal(mp_count(c, MP_EV_WRITABLE, sid), 1);
  assert_int_equal(ops->write(c->m, sid, buf, sizeof buf), 131072);
  assert_int_equal(ops->write(c->m, sid, buf, 1), 0);
  /* a window that was not exhausted does not report writable again */
  assert_int_equal(mp_feed_hex(c, "000100000000000100000010", 1000), 0);
  assert_int_equal(mp_count(c, MP_EV_WRITABLE, sid), 2);
  assert_int_equal(ops->write(c->m, sid, buf, 8), 8);
  assert_int_equal(mp_feed_hex(c, "000100000000000100000010", 1000), 0);
  assert_int_equal(mp_count(c, MP_EV_WRITABLE, sid), 2);
  assert_int_equal(ops->consumed(s->m, sid, 256000 - 131072 + 1), LD_ERR_INVALID_ARG);
  mp_peer_free(c);
  mp_peer_free(s);
}

static void data_frames_are_at_most_64k(void **state) {
  (void)state;
  mp_peer_t *c = mp_peer_new(ops, true, NULL);
  uint64_t sid;
  assert_int_equal(ops->open_stream(c->m, &sid), 0);
  ld_buf_t b;
  ld_buf_init(&b);
  mp_take(c, &b);
  static uint8_t buf[200000];
  assert_int_equal(ops->write(c->m, sid, buf, sizeof buf), (int64_t)sizeof buf);
  mp_take(c, &b);
  size_t off = 0, frames = 0;
  while (off < b.len) {
    uint32_t len = (uint32_t)b.data[off + 8] << 24 | (uint32_t)b.data[off + 9] << 16 |
                   (uint32_t)b.data[off + 10] << 8 | b.data[off + 11];
    assert_true(len <= 65536);
    assert_int_equal(b.data[off + 1], 0);
    off += 12 + len;
    frames++;
  }
  assert_int_equal(off, b.len);
  assert_int_equal(frames, 4);
  assert_int_equal(b.len, sizeof buf + 4 * 12);
  ld_buf_clear(&b);
  mp_peer_free(c);
}

static void receive_window_overrun_is_fatal(void **state) {
  (void)state;
  /* exactly the window is accepted */
  mp_peer_t *s = mp_peer_new(ops, false, NULL);
  s->auto_consume = false;
  assert_int_equal(mp_feed_hex(s, "000100010000000100000000", 0), 0);
  uint8_t hdr[12];
  mp_unhex("000000000000000100040000", hdr, sizeof hdr); /* 262144 bytes */
  assert_int_equal(ops->read(s->m, hdr, 12, 0), 0);
  static uint8_t body[262145];
  assert_int_equal(ops->read(s->m, body, 262144, 0), 0);
  assert_int_equal(mp_rx_of(s, 1)->len, 262144);
  assert_int_equal(mp_feed_hex(s, "00000000000000010000000100", 0), LD_ERR_WINDOW_EXCEEDED);
  mp_peer_free(s);

  /* one byte over in a single frame */
  s = mp_peer_new(ops, false, NULL);
  assert_int_equal(mp_feed_hex(s, "000100010000000100000000", 0), 0);
  ld_buf_t b;
  ld_buf_init(&b);
  mp_take(s, &b);
  mp_unhex("000000000000000100040001", hdr, sizeof hdr);
  assert_int_equal(ops->read(s->m, hdr, 12, 0), LD_ERR_WINDOW_EXCEEDED);
  mp_assert_output_hex(s, "000300000000000000000001"); /* GO_AWAY protocol error */
  assert_int_equal(ops->read(s->m, body, 1, 0), LD_ERR_WINDOW_EXCEEDED); /* sticky */
  assert_int_equal(mp_count(s, MP_EV_DATA, 1), 0);
  ld_buf_clear(&b);
  mp_peer_free(s);
}

/* Moves `total` bytes from c to s on one stream, writing as much as the window takes between
 * two exchanges; returns the most bytes accepted in one such round. The pattern repeats every
 * 256 bytes, so writes can start anywhere in one source buffer. */
static size_t transfer(mp_peer_t *c, mp_peer_t *s, uint64_t sid, size_t total, uint64_t *now,
                       uint64_t step_ms) {
  static uint8_t src[(1u << 20) + 256];
  mp_pattern(src, sizeof src, 0, 9);
  size_t sent = 0, largest = 0;
  while (sent < total) {
    size_t round = 0;
    for (;;) {
      size_t want = total - sent < (1u << 20) ? total - sent : (1u << 20);
      int64_t n = want > 0 ? ops->write(c->m, sid, src + sent % 256, want) : 0;
      assert_true(n >= 0);
      if (n == 0)
        break;
      sent += (size_t)n;
      round += (size_t)n;
    }
    if (round > largest)
      largest = round;
    assert_true(round > 0 || ops->pending_output(s->m) > 0 || sent == total);
    *now += step_ms;
    assert_int_equal(mp_pump(c, s, 0, *now), 0);
    assert_int_equal(mp_pump(s, c, 0, *now), 0);
  }
  return largest;
}

static void window_grows_when_consumed_quickly(void **state) {
  (void)state;
  mp_peer_t *c = mp_peer_new(ops, true, NULL);
  mp_peer_t *s = mp_peer_new(ops, false, NULL);
  uint64_t sid, now = 0;
  assert_int_equal(ops->open_stream(c->m, &sid), 0);
  size_t total = 64u << 20;
  size_t largest = transfer(c, s, sid, total, &now, 0);
  assert_true(largest > 4u << 20);
  assert_true(largest <= 16u << 20);
  ld_buf_t *got = mp_rx_of(s, sid);
  assert_int_equal(got->len, total);
  assert_true(mp_matches_pattern(got->data, total, 9));
  mp_peer_free(c);
  mp_peer_free(s);

  /* a slow consumer keeps the initial window */
  c = mp_peer_new(ops, true, NULL);
  s = mp_peer_new(ops, false, NULL);
  now = 0;
  assert_int_equal(ops->open_stream(c->m, &sid), 0);
  mp_exchange(c, s, 0, now);
  largest = transfer(c, s, sid, 4u << 20, &now, 50);
  assert_true(largest <= 262144);
  assert_int_equal(mp_rx_of(s, sid)->len, 4u << 20);
  mp_peer_free(c);
  mp_peer_free(s);
}

static void window_growth_is_capped(void **state) {
  (void)state;
  ld_muxer_config_t cfg = mp_config();
  cfg.max_recv_window = 1u << 20;
  mp_peer_t *s = mp_peer_new(ops, false, &cfg);
  s->auto_consume = false;
  assert_int_equal(mp_feed_hex(s, "000100010000000100000000", 0), 0);
  ld_buf_t b;
  ld_buf_init(&b);
  mp_take(s, &b);
  static uint8_t body[1u << 20];
  uint32_t window = 262144;
  uint32_t expect[] = {262144 / 2 + 262144, 262144 + 524288, 524288 + 0, 524288};
  for (int i = 0; i < 4; i++) {
    /* fill half the window, consume it at once: the update doubles the window up to 1 MiB */
    uint32_t half = window / 2;
    uint8_t hdr[12] = {0, 0, 0, 0, 0, 0, 0, 1};
    hdr[8] = (uint8_t)(half >> 24);
    hdr[9] = (uint8_t)(half >> 16);
    hdr[10] = (uint8_t)(half >> 8);
    hdr[11] = (uint8_t)half;
    assert_int_equal(ops->read(s->m, hdr, 12, 0), 0);
    assert_int_equal(ops->read(s->m, body, half, 0), 0);
    assert_int_equal(ops->consumed(s->m, 1, half), 0);
    mp_take(s, &b);
    assert_int_equal(b.len, 12);
    uint32_t delta = (uint32_t)b.data[8] << 24 | (uint32_t)b.data[9] << 16 |
                     (uint32_t)b.data[10] << 8 | b.data[11];
    assert_int_equal(delta, expect[i]);
    window = window * 2 > (1u << 20) ? (1u << 20) : window * 2;
  }
  ld_buf_clear(&b);
  mp_peer_free(s);
}

static void larger_initial_window_is_announced(void **state) {
  (void)state;
  ld_muxer_config_t cfg = mp_config();
  cfg.recv_window = 1u << 20;
  mp_peer_t *c = mp_peer_new(ops, true, &cfg);
  uint64_t sid;
  assert_int_equal(ops->open_stream(c->m, &sid), 0);
  mp_assert_output_hex(c, "0001000100000001000c0000"); /* delta 1 MiB - 256 KiB */
  mp_peer_t *s = mp_peer_new(ops, false, &cfg);
  assert_int_equal(mp_feed_hex(s, "000100010000000100000000", 0), 0);
  mp_assert_output_hex(s, "0001000200000001000c0000");
  mp_peer_free(c);
  mp_peer_free(s);
}

/* ---- session frames -------------------------------------------------------------------------- */

static void ping_echo_and_keepalive(void **state) {
  (void)state;
  mp_peer_t *c = mp_peer_new(ops, true, NULL);
  mp_peer_t *s = mp_peer_new(ops, false, NULL);
  assert_int_equal(ops->next_deadline(c->m), 0);
  assert_int_equal(ops->handle_timeout(c->m, 0), 0);
  mp_assert_output_hex(c, "000200010000000000000001");
  assert_int_equal(ops->next_deadline(c->m), 30000);
  assert_int_equal(ops->handle_timeout(c->m, 29999), 0);
  assert_int_equal(ops->pending_output(c->m), 0);

  assert_int_equal(mp_feed_hex(s, "000200010000000000000001", 5), 0);
  mp_assert_output_hex(s, "000200020000000000000001");
  assert_int_equal(mp_feed_hex(c, "000200020000000000000001", 10), 0);
  assert_int_equal(ops->pending_output(c->m), 0); /* an ACK is never answered */

  assert_int_equal(ops->handle_timeout(c->m, 30000), 0);
  mp_assert_output_hex(c, "000200010000000000000002");
  assert_int_equal(ops->next_deadline(c->m), 60000);
  /* this ping goes unanswered */
  assert_int_equal(ops->handle_timeout(c->m, 59999), 0);
  assert_int_equal(ops->handle_timeout(c->m, 60000), LD_ERR_TIMEOUT);
  assert_int_equal(ops->next_deadline(c->m), UINT64_MAX);
  assert_int_equal(ops->read(c->m, (const uint8_t *)"x", 1, 60001), LD_ERR_TIMEOUT);
  mp_peer_free(c);
  mp_peer_free(s);

  ld_muxer_config_t cfg = mp_config();
  cfg.keepalive_ms = 0;
  c = mp_peer_new(ops, true, &cfg);
  assert_int_equal(ops->next_deadline(c->m), UINT64_MAX);
  assert_int_equal(ops->handle_timeout(c->m, 1000000), 0);
  assert_int_equal(ops->pending_output(c->m), 0);
  mp_peer_free(c);
}

static void keepalive_between_engines(void **state) {
  (void)state;
  mp_peer_t *c = mp_peer_new(ops, true, NULL);
  mp_peer_t *s = mp_peer_new(ops, false, NULL);
  for (uint64_t now = 0; now <= 10 * 30000; now += 1000) {
    if (ops->next_deadline(c->m) <= now)
      assert_int_equal(ops->handle_timeout(c->m, now), 0);
    if (ops->next_deadline(s->m) <= now)
      assert_int_equal(ops->handle_timeout(s->m, now), 0);
    mp_exchange(c, s, 5, now);
  }
  assert_int_equal(c->nev + s->nev, 0);
  mp_peer_free(c);
  mp_peer_free(s);
}

static void unsolicited_acks_are_ignored(void **state) {
  (void)state;
  mp_peer_t *c = mp_peer_new(ops, true, NULL);
  assert_int_equal(mp_feed_hex(c, "000200020000000000000063", 0), 0); /* PING ACK, no ping sent */
  assert_int_equal(ops->handle_timeout(c->m, 0), 0);
  ld_buf_t b;
  ld_buf_init(&b);
  mp_take(c, &b);
  assert_int_equal(mp_feed_hex(c, "000200020000000000000009", 0), 0); /* wrong value */
  assert_int_equal(mp_feed_hex(c, "000100020000000400000000", 0), 0); /* ACK, unknown stream */
  assert_int_equal(mp_feed_hex(c, "000000020000000400000003616263", 0), 0);
  assert_int_equal(ops->pending_output(c->m), 0);
  assert_int_equal(c->nev, 0);
  /* an ACK on an inbound stream is harmless too */
  assert_int_equal(mp_feed_hex(c, "000100010000000200000000000100020000000200000000", 0), 0);
  assert_int_equal(mp_count(c, MP_EV_OPEN, 2), 1);
  assert_int_equal(ops->stream_count(c->m), 1);
  ld_buf_clear(&b);
  mp_peer_free(c);
}

static void go_away_received(void **state) {
  (void)state;
  mp_peer_t *c = mp_peer_new(ops, true, NULL);
  mp_peer_t *s = mp_peer_new(ops, false, NULL);
  uint64_t sid, other;
  assert_int_equal(ops->open_stream(c->m, &sid), 0);
  mp_exchange(c, s, 0, 0);
  assert_int_equal(ops->go_away(s->m, 2), 0);
  mp_exchange(c, s, 0, 0);
  assert_int_equal(mp_count(c, MP_EV_GOAWAY, 0), 1);
  assert_int_equal(c->ev[c->nev - 1].code, 2);
  assert_int_equal(ops->open_stream(c->m, &other), LD_ERR_GOAWAY);
  assert_int_equal(ops->write(c->m, sid, (const uint8_t *)"still", 5), 5);
  mp_exchange(c, s, 0, 0);
  assert_memory_equal(mp_rx_of(s, sid)->data, "still", 5);
  assert_int_equal(ops->open_stream(s->m, &other), LD_ERR_GOAWAY);
  mp_peer_free(c);
  mp_peer_free(s);
}

static void go_away_sent_resets_inbound_syns(void **state) {
  (void)state;
  mp_peer_t *s = mp_peer_new(ops, false, NULL);
  assert_int_equal(ops->go_away(s->m, 0), 0);
  mp_assert_output_hex(s, "000300000000000000000000");
  assert_int_equal(mp_feed_hex(s, "000000010000000100000002686900020001000000000000002a", 0), 0);
  mp_assert_output_hex(s, "00010008000000010000000000020002000000000000002a");
  assert_int_equal(s->nev, 0);
  assert_int_equal(ops->stream_count(s->m), 0);
  mp_peer_free(s);
}

static void protocol_violations_are_fatal(void **state) {
  (void)state;
  static const struct {
    bool initiator;
    const char *hex;
  } cases[] = {
      {true, "000100010000000300000000"},                          /* SYN with our parity */
      {false, "000100010000000200000000"},                         /* SYN with our parity */
      {false, "000100010000000000000000"},                         /* SYN on stream 0 */
      {false, "000100010000000100000000000100010000000100000000"}, /* reused SYN */
      {false, "010200010000000000000007"},                         /* version 1 */
      {false, "000400000000000000000000"},                         /* unknown type */
      {false, "000000000000000000000000"},                         /* DATA on stream 0 */
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    mp_peer_t *p = mp_peer_new(ops, cases[i].initiator, NULL);
    assert_int_equal(mp_feed_hex(p, cases[i].hex, 0), LD_ERR_PROTOCOL);
    ld_buf_t b;
    ld_buf_init(&b);
    mp_take(p, &b);
    assert_true(b.len >= 12);
    uint8_t goaway[12];
    mp_unhex("000300000000000000000001", goaway, sizeof goaway);
    assert_memory_equal(b.data + b.len - 12, goaway, 12);
    assert_int_equal(mp_feed_hex(p, "000200010000000000000001", 0), LD_ERR_PROTOCOL);
    uint64_t sid;
    assert_int_equal(ops->open_stream(p->m, &sid), LD_ERR_PROTOCOL);
    ld_buf_clear(&b);
    mp_peer_free(p);
  }
}

static void stream_limit_resets_excess(void **state) {
  (void)state;
  ld_muxer_config_t cfg = mp_config();
  cfg.max_streams = 2;
  mp_peer_t *s = mp_peer_new(ops, false, &cfg);
  assert_int_equal(mp_feed_hex(s, "000100010000000100000000000100010000000300000000", 0), 0);
  ld_buf_t b;
  ld_buf_init(&b);
  mp_take(s, &b);
  /* the third stream is refused; its payload is skipped and the next frame still parsed */
  assert_int_equal(mp_feed_hex(s, "000000010000000500000003616263000200010000000000000005", 0), 0);
  mp_assert_output_hex(s, "000100080000000500000000000200020000000000000005");
  assert_int_equal(ops->stream_count(s->m), 2);
  assert_int_equal(mp_count(s, MP_EV_OPEN, 5), 0);
  uint64_t sid;
  assert_int_equal(ops->open_stream(s->m, &sid), LD_ERR_TOO_MANY_STREAMS);
  /* once one closes, a new one fits */
  assert_int_equal(mp_feed_hex(s, "000100080000000100000000", 0), 0);
  assert_int_equal(mp_feed_hex(s, "000100010000000700000000", 0), 0);
  assert_int_equal(mp_count(s, MP_EV_OPEN, 7), 1);
  ld_buf_clear(&b);
  mp_peer_free(s);
}

static void unknown_stream_frames_are_skipped(void **state) {
  (void)state;
  mp_peer_t *s = mp_peer_new(ops, false, NULL);
  assert_int_equal(mp_feed_hex(s, "0000000000000007000000056162636465000200010000000000000009", 0),
                   0);
  mp_assert_output_hex(s, "000200020000000000000009");
  assert_int_equal(mp_feed_hex(s, "000100040000000700000000000100080000000900000000", 0), 0);
  assert_int_equal(s->nev, 0);
  assert_int_equal(ops->pending_output(s->m), 0);
  mp_peer_free(s);
}

static void rst_length_is_not_credit(void **state) {
  (void)state;
  mp_peer_t *c = mp_peer_new(ops, true, NULL);
  uint64_t sid;
  assert_int_equal(ops->open_stream(c->m, &sid), 0);
  static uint8_t buf[256000];
  assert_int_equal(ops->write(c->m, sid, buf, sizeof buf), 256000);
  /* go-yamux puts an error code in an RST's length; it must not count as window */
  assert_int_equal(mp_feed_hex(c, "000100080000000100000005", 0), 0);
  assert_int_equal(mp_count(c, MP_EV_RESET, sid), 1);
  assert_int_equal(mp_count(c, MP_EV_WRITABLE, sid), 0);
  assert_int_equal(ops->stream_count(c->m), 0);
  /* a DATA|RST frame's payload is skipped */
  assert_int_equal(ops->open_stream(c->m, &sid), 0);
  assert_int_equal(mp_feed_hex(c, "000000080000000300000002ffff000200010000000000000001", 0), 0);
  assert_int_equal(mp_count(c, MP_EV_RESET, sid), 1);
  assert_int_equal(mp_count(c, MP_EV_DATA, sid), 0);
  mp_peer_free(c);
}

static void syn_data_fin_in_one_frame(void **state) {
  (void)state;
  mp_peer_t *s = mp_peer_new(ops, false, NULL);
  assert_int_equal(mp_feed_hex(s, "00000005000000010000000568656c6c6f", 0), 0);
  assert_int_equal(s->nev, 3);
  assert_int_equal(s->ev[0].kind, MP_EV_OPEN);
  assert_int_equal(s->ev[1].kind, MP_EV_DATA);
  assert_int_equal(s->ev[2].kind, MP_EV_EOF);
  assert_memory_equal(mp_rx_of(s, 1)->data, "hello", 5);
  /* data after the remote's FIN is dropped */
  assert_int_equal(mp_feed_hex(s, "00000000000000010000000121", 0), 0);
  assert_int_equal(s->nev, 3);
  assert_int_equal(ops->close_write(s->m, 1), 0);
  assert_int_equal(ops->stream_count(s->m), 0);
  mp_peer_free(s);
}

static void callbacks_may_act_inside_read(void **state) {
  (void)state;
  mp_peer_t *c = mp_peer_new(ops, true, NULL);
  mp_peer_t *s = mp_peer_new(ops, false, NULL);
  s->greeting = "hello";
  s->reset_on_data = true;
  uint64_t sid;
  assert_int_equal(ops->open_stream(c->m, &sid), 0);
  assert_int_equal(ops->write(c->m, sid, (const uint8_t *)"abc", 3), 3);
  assert_int_equal(mp_pump(c, s, 1, 0), 0);
  /* the ACK goes first, then the greeting written from on_stream_open, then the reset */
  ld_buf_t b;
  ld_buf_init(&b);
  mp_take(s, &b);
  uint8_t want[12 + 12 + 5 + 12];
  mp_unhex("000100020000000100000000"
           "000000000000000100000005"
           "68656c6c6f"
           "000100080000000100000000",
           want, sizeof want);
  assert_int_equal(b.len, sizeof want);
  assert_memory_equal(b.data, want, sizeof want);
  assert_int_equal(mp_count(s, MP_EV_DATA, sid), 1); /* the rest of the frame is dropped */
  assert_int_equal(ops->read(c->m, b.data, b.len, 0), 0);
  assert_memory_equal(mp_rx_of(c, sid)->data, "hello", 5);
  assert_int_equal(mp_count(c, MP_EV_RESET, sid), 1);
  ld_buf_clear(&b);
  mp_peer_free(c);
  mp_peer_free(s);
}

static void callback_error_aborts_read(void **state) {
  (void)state;
  mp_peer_t *s = mp_peer_new(ops, false, NULL);
  s->data_rc = LD_ERR_LIMIT;
  assert_int_equal(mp_feed_hex(s, "0000000100000001000000026869", 0), LD_ERR_LIMIT);
  mp_assert_output_hex(s, "000100020000000100000000000300000000000000000002");
  assert_int_equal(mp_feed_hex(s, "000200010000000000000001", 0), LD_ERR_LIMIT);
  mp_peer_free(s);
}

static void output_appends_to_nonempty_buffer(void **state) {
  (void)state;
  mp_peer_t *c = mp_peer_new(ops, true, NULL);
  uint64_t sid;
  ld_buf_t b;
  ld_buf_init(&b);
  assert_int_equal(ld_buf_append(&b, "prefix", 6), 0);
  assert_int_equal(ops->open_stream(c->m, &sid), 0);
  assert_int_equal(ops->take_output(c->m, &b), 0);
  assert_int_equal(b.len, 18);
  assert_memory_equal(b.data, "prefix", 6);
  assert_int_equal(b.data[6 + 7], 1);
  ld_buf_clear(&b);
  mp_peer_free(c);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(client_frames_match_vectors),
      cmocka_unit_test(server_frames_match_vectors),
      cmocka_unit_test(decodes_vector_frames),
      cmocka_unit_test(open_accept_data_both_ways),
      cmocka_unit_test(half_close_and_eof),
      cmocka_unit_test(reset_aborts_both_sides),
      cmocka_unit_test(many_streams_both_directions),
      cmocka_unit_test(send_window_edge_and_writable),
      cmocka_unit_test(data_frames_are_at_most_64k),
      cmocka_unit_test(receive_window_overrun_is_fatal),
      cmocka_unit_test(window_grows_when_consumed_quickly),
      cmocka_unit_test(window_growth_is_capped),
      cmocka_unit_test(larger_initial_window_is_announced),
      cmocka_unit_test(ping_echo_and_keepalive),
      cmocka_unit_test(keepalive_between_engines),
      cmocka_unit_test(unsolicited_acks_are_ignored),
      cmocka_unit_test(go_away_received),
      cmocka_unit_test(go_away_sent_resets_inbound_syns),
      cmocka_unit_test(protocol_violations_are_fatal),
      cmocka_unit_test(stream_limit_resets_excess),
      cmocka_unit_test(unknown_stream_frames_are_skipped),
      cmocka_unit_test(rst_length_is_not_credit),
      cmocka_unit_test(syn_data_fin_in_one_frame),
      cmocka_unit_test(callbacks_may_act_inside_read),
      cmocka_unit_test(callback_error_aborts_read),
      cmocka_unit_test(output_appends_to_nonempty_buffer),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
