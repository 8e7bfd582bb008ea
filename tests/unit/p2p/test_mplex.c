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
#include "base/hex.h"
#include "base/varint.h"
#include "p2p/muxer.h"

#include "muxer_pair.h"

static const ld_muxer_ops_t *ops = &ld_mplex_ops;

static size_t put_varint_hex(uint64_t v, char *out) {
  uint8_t b[10];
  size_t n = ld_varint_encode(v, b);
  return ld_hex_encode(b, n, out);
}

/* ---- digest vectors -------------------------------------------------------------------------- */

static void frames_match_vectors(void **state) {
  (void)state;
  mp_peer_t *a = mp_peer_new(ops, true, NULL);
  uint64_t sid;
  assert_int_equal(ops->open_stream(a->m, &sid), 0);
  assert_int_equal(sid, 0);
  mp_assert_output_hex(a, "000130");
  assert_int_equal(ops->write(a->m, sid, (const uint8_t *)"hi", 2), 2);
  mp_assert_output_hex(a, "02026869");
  assert_int_equal(ops->close_write(a->m, sid), 0);
  mp_assert_output_hex(a, "0400");
  assert_int_equal(ops->write(a->m, sid, (const uint8_t *)"x", 1), LD_ERR_CLOSED);
  assert_int_equal(ops->close_write(a->m, sid), LD_ERR_CLOSED);
  mp_peer_free(a);

  mp_peer_t *b = mp_peer_new(ops, false, NULL);
  assert_int_equal(mp_feed_hex(b, "880100", 0), 0); /* NewStream id 17, empty name */
  assert_int_equal(mp_count(b, MP_EV_OPEN, 17 << 1 | 1), 1);
  assert_int_equal(ops->write(b->m, 17 << 1 | 1, (const uint8_t *)"hi", 2), 2);
  mp_assert_output_hex(b, "8901026869");
  assert_int_equal(ops->reset(b->m, 17 << 1 | 1), 0);
  mp_assert_output_hex(b, "8d0100");
  assert_int_equal(ops->stream_count(b->m), 0);
  assert_int_equal(ops->write(b->m, 17 << 1 | 1, (const uint8_t *)"x", 1), LD_ERR_NOT_FOUND);
  mp_peer_free(b);
}

static void decodes_vector_frames(void **state) {
  (void)state;
  mp_peer_t *b = mp_peer_new(ops, false, NULL);
  assert_int_equal(mp_feed_hex(b, "000130020268690400", 0), 0);
  assert_int_equal(b->nev, 3);
  assert_int_equal(b->ev[0].kind, MP_EV_OPEN);
  assert_int_equal(b->ev[0].sid, 1);
  assert_int_equal(b->ev[1].kind, MP_EV_DATA);
  assert_int_equal(b->ev[2].kind, MP_EV_EOF);
  assert_memory_equal(mp_rx_of(b, 1)->data, "hi", 2);
  assert_int_equal(ops->write(b->m, 1, (const uint8_t *)"ok", 2), 2);
  mp_assert_output_hex(b, "01026f6b");
  assert_int_equal(ops->close_write(b->m, 1), 0);
  mp_assert_output_hex(b, "0300");
  assert_int_equal(ops->stream_count(b->m), 0);
  assert_int_equal(ops->consumed(b->m, 1, 2), LD_ERR_NOT_FOUND);
  mp_peer_free(b);
}

static void names_streams_by_decimal_id(void **state) {
  (void)state;
  mp_peer_t *a = mp_peer_new(ops, true, NULL);
  uint64_t sid;
  for (int i = 0; i < 10; i++)
    assert_int_equal(ops->open_stream(a->m, &sid), 0);
  ld_buf_t b;
  ld_buf_init(&b);
  mp_take(a, &b);
  ld_buf_clear(&b);
  assert_int_equal(ops->open_stream(a->m, &sid), 0);
  assert_int_equal(sid, 10 << 1);
  mp_assert_output_hex(a, "50023130");
  assert_int_equal(ops->stream_count(a->m), 11);
  assert_int_equal(ops->next_deadline(a->m), UINT64_MAX);
  assert_int_equal(ops->handle_timeout(a->m, 123456), 0);
  mp_peer_free(a);
}

/* ---- flags for the same numeric ID on both sides ------------------------------------------- */

static void same_id_on_both_sides(void **state) {
  (void)state;
  mp_peer_t *a = mp_peer_new(ops, true, NULL);
  mp_peer_t *b = mp_peer_new(ops, false, NULL);
  uint64_t sa, sb;
  assert_int_equal(ops->open_stream(a->m, &sa), 0);
  assert_int_equal(ops->open_stream(b->m, &sb), 0);
  assert_int_equal(sa, 0);
  assert_int_equal(sb, 0);
  mp_exchange(a, b, 0, 0);
  assert_int_equal(mp_count(a, MP_EV_OPEN, 1), 1); /* b's stream 0 */
  assert_int_equal(mp_count(b, MP_EV_OPEN, 1), 1); /* a's stream 0 */

  assert_int_equal(ops->write(a->m, 0, (const uint8_t *)"a-init", 6), 6);
  assert_int_equal(ops->write(a->m, 1, (const uint8_t *)"a-recv", 6), 6);
  mp_assert_output_hex(a, "0206612d696e6974"
                          "0106612d72656376");
  assert_int_equal(ops->write(a->m, 0, (const uint8_t *)"a-init", 6), 6);
  assert_int_equal(ops->write(a->m, 1, (const uint8_t *)"a-recv", 6), 6);
  assert_int_equal(ops->write(b->m, 0, (const uint8_t *)"b-init", 6), 6);
  assert_int_equal(ops->write(b->m, 1, (const uint8_t *)"b-recv", 6), 6);
  mp_exchange(a, b, 1, 0);
  assert_memory_equal(mp_rx_of(b, 1)->data, "a-init", 6);
  assert_memory_equal(mp_rx_of(b, 0)->data, "a-recv", 6);
  assert_memory_equal(mp_rx_of(a, 1)->data, "b-init", 6);
  assert_memory_equal(mp_rx_of(a, 0)->data, "b-recv", 6);

  /* a closes its own stream 0 (CloseInitiator) and resets b's stream 0 (ResetReceiver) */
  assert_int_equal(ops->close_write(a->m, 0), 0);
  assert_int_equal(ops->reset(a->m, 1), 0);
  mp_assert_output_hex(a, "04000500");
  assert_int_equal(mp_feed_hex(b, "04000500", 0), 0);
  assert_int_equal(mp_count(b, MP_EV_EOF, 1), 1);
  assert_int_equal(mp_count(b, MP_EV_RESET, 0), 1);
  assert_int_equal(mp_count(b, MP_EV_EOF, 0) + mp_count(b, MP_EV_RESET, 1), 0);
  /* b closes a's stream (CloseReceiver): closed both ways on both sides */
  assert_int_equal(ops->close_write(b->m, 1), 0);
  mp_assert_output_hex(b, "0300");
  assert_int_equal(mp_feed_hex(a, "0300", 0), 0);
  assert_int_equal(mp_count(a, MP_EV_EOF, 0), 1);
  assert_int_equal(ops->stream_count(a->m), 0);
  assert_int_equal(ops->stream_count(b->m), 0);
  mp_peer_free(a);
  mp_peer_free(b);
}

/* ---- sizes ----------------------------------------------------------------------------------- */

static void oversize_message_is_fatal(void **state) {
  (void)state;
  char hex[64] = "000130"
                 "02";
  put_varint_hex(1048577, hex + strlen(hex));
  mp_peer_t *b = mp_peer_new(ops, false, NULL);
  assert_int_equal(mp_feed_hex(b, hex, 0), LD_ERR_FRAME_TOO_LARGE);
  assert_int_equal(mp_count(b, MP_EV_DATA, 1), 0);
  assert_int_equal(mp_feed_hex(b, "000130", 0), LD_ERR_FRAME_TOO_LARGE);
  mp_peer_free(b);

  /* exactly 1 MiB is accepted */
  b = mp_peer_new(ops, false, NULL);
  strcpy(hex, "000130"
              "02");
  put_varint_hex(1048576, hex + strlen(hex));
  assert_int_equal(mp_feed_hex(b, hex, 0), 0);
  static uint8_t body[1048576];
  mp_pattern(body, sizeof body, 0, 4);
  assert_int_equal(ops->read(b->m, body, sizeof body, 0), 0);
  assert_int_equal(mp_rx_of(b, 1)->len, sizeof body);
  assert_true(mp_matches_pattern(mp_rx_of(b, 1)->data, sizeof body, 4));
  mp_peer_free(b);

  /* a smaller configured cap applies to every message, NewStream names included */
  ld_muxer_config_t cfg = mp_config();
  cfg.max_frame = 4;
  b = mp_peer_new(ops, false, &cfg);
  assert_int_equal(mp_feed_hex(b, "00056162636465", 0), LD_ERR_FRAME_TOO_LARGE);
  mp_peer_free(b);
}

static void writes_split_into_1mib_messages(void **state) {
  (void)state;
  mp_peer_t *a = mp_peer_new(ops, true, NULL);
  mp_peer_t *b = mp_peer_new(ops, false, NULL);
  uint64_t sid;
  assert_int_equal(ops->open_stream(a->m, &sid), 0);
  assert_int_equal(mp_pump(a, b, 0, 0), 0);
  size_t total = 2621440; /* 2.5 MiB */
  uint8_t *data = malloc(total);
  assert_non_null(data);
  mp_pattern(data, total, 0, 5);
  assert_int_equal(ops->write(a->m, sid, data, total), (int64_t)total);
  ld_buf_t out;
  ld_buf_init(&out);
  mp_take(a, &out);
  static const size_t sizes[] = {1048576, 1048576, 524288};
  size_t off = 0;
  for (int i = 0; i < 3; i++) {
    assert_int_equal(out.data[off], 0x02); /* MessageInitiator, id 0 */
    uint8_t want[4];
    size_t n = ld_varint_encode(sizes[i], want);
    assert_memory_equal(out.data + off + 1, want, n);
    off += 1 + n + sizes[i];
  }
  assert_int_equal(off, out.len);
  for (size_t pos = 0; pos < out.len; pos += 4093) {
    size_t n = out.len - pos < 4093 ? out.len - pos : 4093;
    assert_int_equal(ops->read(b->m, out.data + pos, n, 0), 0);
  }
  assert_int_equal(mp_rx_of(b, 1)->len, total);
  assert_true(mp_matches_pattern(mp_rx_of(b, 1)->data, total, 5));
  ld_buf_clear(&out);
  free(data);
  mp_peer_free(a);
  mp_peer_free(b);
}

/* ---- engine pairs ---------------------------------------------------------------------------- */

static const size_t splits[] = {0, 1, 2, 3, 7, 1000, 70000};

static void open_accept_data_both_ways(void **state) {
  (void)state;
  for (size_t k = 0; k < sizeof splits / sizeof splits[0]; k++) {
    mp_peer_t *a = mp_peer_new(ops, true, NULL);
    mp_peer_t *b = mp_peer_new(ops, false, NULL);
    uint64_t sa, sb;
    assert_int_equal(ops->open_stream(a->m, &sa), 0);
    assert_int_equal(ops->open_stream(b->m, &sb), 0);
    static uint8_t big[300000];
    mp_pattern(big, sizeof big, 0, 8);
    assert_int_equal(ops->write(a->m, sa, big, sizeof big), (int64_t)sizeof big);
    assert_int_equal(ops->write(b->m, sb, (const uint8_t *)"pong", 4), 4);
    mp_exchange(a, b, splits[k], 0);
    assert_int_equal(mp_rx_of(b, sa | 1)->len, sizeof big);
    assert_true(mp_matches_pattern(mp_rx_of(b, sa | 1)->data, sizeof big, 8));
    assert_memory_equal(mp_rx_of(a, sb | 1)->data, "pong", 4);
    assert_int_equal(ops->write(b->m, sa | 1, (const uint8_t *)"back", 4), 4);
    mp_exchange(a, b, splits[k], 0);
    assert_memory_equal(mp_rx_of(a, sa)->data, "back", 4);
    assert_int_equal(ops->stream_count(a->m), 2);
    assert_int_equal(ops->stream_count(b->m), 2);
    mp_peer_free(a);
    mp_peer_free(b);
  }
}

static void half_close_and_eof(void **state) {
  (void)state;
  for (size_t k = 0; k < sizeof splits / sizeof splits[0]; k++) {
    mp_peer_t *a = mp_peer_new(ops, true, NULL);
    mp_peer_t *b = mp_peer_new(ops, false, NULL);
    uint64_t sid;
    assert_int_equal(ops->open_stream(a->m, &sid), 0);
    assert_int_equal(ops->write(a->m, sid, (const uint8_t *)"request", 7), 7);
    assert_int_equal(ops->close_write(a->m, sid), 0);
    mp_exchange(a, b, splits[k], 0);
    assert_int_equal(mp_count(b, MP_EV_EOF, sid | 1), 1);
    assert_memory_equal(mp_rx_of(b, sid | 1)->data, "request", 7);
    assert_int_equal(ops->write(b->m, sid | 1, (const uint8_t *)"response", 8), 8);
    assert_int_equal(ops->close_write(b->m, sid | 1), 0);
    assert_int_equal(ops->stream_count(b->m), 0);
    mp_exchange(a, b, splits[k], 0);
    assert_memory_equal(mp_rx_of(a, sid)->data, "response", 8);
    assert_int_equal(mp_count(a, MP_EV_EOF, sid), 1);
    assert_int_equal(ops->stream_count(a->m), 0);
    mp_peer_free(a);
    mp_peer_free(b);
  }
}

static void reset_aborts_both_sides(void **state) {
  (void)state;
  mp_peer_t *a = mp_peer_new(ops, true, NULL);
  mp_peer_t *b = mp_peer_new(ops, false, NULL);
  uint64_t sid;
  assert_int_equal(ops->open_stream(a->m, &sid), 0);
  assert_int_equal(ops->write(a->m, sid, (const uint8_t *)"one", 3), 3);
  mp_exchange(a, b, 0, 0);
  assert_int_equal(ops->reset(b->m, sid | 1), 0);
  assert_int_equal(ops->write(a->m, sid, (const uint8_t *)"two", 3), 3);
  mp_exchange(a, b, 1, 0);
  assert_int_equal(mp_count(a, MP_EV_RESET, sid), 1);
  assert_int_equal(mp_count(b, MP_EV_DATA, sid | 1), 1);
  assert_int_equal(ops->stream_count(a->m), 0);
  assert_int_equal(ops->stream_count(b->m), 0);
  assert_int_equal(ops->reset(a->m, sid), LD_ERR_NOT_FOUND);
  mp_peer_free(a);
  mp_peer_free(b);
}

static void many_streams_both_directions(void **state) {
  (void)state;
  mp_peer_t *a = mp_peer_new(ops, true, NULL);
  mp_peer_t *b = mp_peer_new(ops, false, NULL);
  enum { N = 300 };
  for (uint64_t i = 0; i < N; i++) {
    uint64_t sa, sb;
    assert_int_equal(ops->open_stream(a->m, &sa), 0);
    assert_int_equal(ops->open_stream(b->m, &sb), 0);
    assert_int_equal(sa, i << 1);
    assert_int_equal(sb, i << 1);
    uint8_t msg[40];
    mp_pattern(msg, sizeof msg, 0, i);
    assert_int_equal(ops->write(a->m, sa, msg, sizeof msg), 40);
    mp_pattern(msg, sizeof msg, 0, i + 1000);
    assert_int_equal(ops->write(b->m, sb, msg, sizeof msg), 40);
  }
  mp_exchange(a, b, 333, 0);
  assert_int_equal(ops->stream_count(a->m), 2 * N);
  for (uint64_t i = 0; i < N; i++) {
    assert_true(mp_matches_pattern(mp_rx_of(b, i << 1 | 1)->data, 40, i));
    assert_true(mp_matches_pattern(mp_rx_of(a, i << 1 | 1)->data, 40, i + 1000));
    assert_int_equal(ops->close_write(a->m, i << 1), 0);
    assert_int_equal(ops->close_write(a->m, i << 1 | 1), 0);
    assert_int_equal(ops->close_write(b->m, i << 1), 0);
    assert_int_equal(ops->close_write(b->m, i << 1 | 1), 0);
  }
  mp_exchange(a, b, 0, 0);
  assert_int_equal(ops->stream_count(a->m), 0);
  assert_int_equal(ops->stream_count(b->m), 0);
  mp_peer_free(a);
  mp_peer_free(b);
}

/* ---- limits and errors ----------------------------------------------------------------------- */

static void stream_limit_resets_excess(void **state) {
  (void)state;
  ld_muxer_config_t cfg = mp_config();
  cfg.max_streams = 2;
  mp_peer_t *b = mp_peer_new(ops, false, &cfg);
  assert_int_equal(mp_feed_hex(b, "000130080131", 0), 0);
  assert_int_equal(mp_feed_hex(b,
                               "100132"
                               "120178"
                               "0a0179",
                               0),
                   0);
  mp_assert_output_hex(b, "1500"); /* ResetReceiver for stream 2 */
  assert_int_equal(mp_count(b, MP_EV_OPEN, 5), 0);
  assert_int_equal(mp_count(b, MP_EV_DATA, 5), 0);
  assert_int_equal(mp_count(b, MP_EV_DATA, 3), 1);
  assert_int_equal(ops->stream_count(b->m), 2);
  uint64_t sid;
  assert_int_equal(ops->open_stream(b->m, &sid), LD_ERR_TOO_MANY_STREAMS);
  mp_peer_free(b);
}

static void unknown_stream_messages_are_skipped(void **state) {
  (void)state;
  mp_peer_t *b = mp_peer_new(ops, false, NULL);
  assert_int_equal(mp_feed_hex(b,
                               "0a03616263"
                               "0903616263"
                               "0c00"
                               "0e00"
                               "1300"
                               "000130",
                               0),
                   0);
  assert_int_equal(b->nev, 1);
  assert_int_equal(b->ev[0].kind, MP_EV_OPEN);
  /* Close and Reset payloads are skipped too */
  assert_int_equal(mp_feed_hex(b,
                               "0401ff"
                               "020178",
                               0),
                   0);
  assert_int_equal(mp_count(b, MP_EV_EOF, 1), 1);
  assert_int_equal(mp_count(b, MP_EV_DATA, 1), 0); /* data after the remote's close is dropped */
  assert_int_equal(ops->pending_output(b->m), 0);
  mp_peer_free(b);
}

static void malformed_input_is_fatal(void **state) {
  (void)state;
  static const struct {
    const char *hex;
    int err;
  } cases[] = {
      {"8000", LD_ERR_MALFORMED},                 /* non-minimal header varint */
      {"008000", LD_ERR_MALFORMED},               /* non-minimal length varint */
      {"ffffffffffffffffff01", LD_ERR_MALFORMED}, /* 10-byte varint */
      {"0700", LD_ERR_PROTOCOL},                  /* flag 7 */
      {"00000000", LD_ERR_PROTOCOL},              /* duplicate NewStream */
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    for (size_t split = 0; split <= 1; split++) {
      mp_peer_t *b = mp_peer_new(ops, false, NULL);
      uint8_t buf[32];
      size_t n = mp_unhex(cases[i].hex, buf, sizeof buf);
      int rc = 0;
      if (split == 0) {
        rc = ops->read(b->m, buf, n, 0);
      } else {
        for (size_t j = 0; j < n && rc == 0; j++)
          rc = ops->read(b->m, buf + j, 1, 0);
      }
      assert_int_equal(rc, cases[i].err);
      assert_int_equal(mp_feed_hex(b, "000130", 0), cases[i].err);
      uint64_t sid;
      assert_int_equal(ops->open_stream(b->m, &sid), cases[i].err);
      mp_peer_free(b);
    }
  }
}

static void go_away_resets_everything(void **state) {
  (void)state;
  mp_peer_t *a = mp_peer_new(ops, true, NULL);
  mp_peer_t *b = mp_peer_new(ops, false, NULL);
  uint64_t sid;
  for (int i = 0; i < 3; i++)
    assert_int_equal(ops->open_stream(a->m, &sid), 0);
  assert_int_equal(ops->open_stream(b->m, &sid), 0);
  mp_exchange(a, b, 0, 0);
  assert_int_equal(ops->go_away(a->m, 0), 0);
  assert_int_equal(ops->stream_count(a->m), 0);
  assert_int_equal(ops->open_stream(a->m, &sid), LD_ERR_GOAWAY);
  assert_int_equal(mp_pump(a, b, 0, 0), 0);
  for (uint64_t i = 0; i < 3; i++)
    assert_int_equal(mp_count(b, MP_EV_RESET, i << 1 | 1), 1);
  assert_int_equal(mp_count(b, MP_EV_RESET, 0), 1);
  assert_int_equal(ops->stream_count(b->m), 0);
  /* a refuses new inbound streams */
  assert_int_equal(ops->open_stream(b->m, &sid), 0);
  assert_int_equal(mp_pump(b, a, 0, 0), 0);
  mp_assert_output_hex(a, "0d00");
  assert_int_equal(mp_count(a, MP_EV_OPEN, 3), 0);
  mp_peer_free(a);
  mp_peer_free(b);
}

static void callbacks_may_act_inside_read(void **state) {
  (void)state;
  mp_peer_t *b = mp_peer_new(ops, false, NULL);
  b->greeting = "yo";
  b->reset_on_data = true;
  assert_int_equal(mp_feed_hex(b,
                               "000130"
                               "0203616263"
                               "020164",
                               0),
                   0);
  mp_assert_output_hex(b, "0102796f"
                          "0500");
  assert_int_equal(mp_count(b, MP_EV_DATA, 1), 1);
  assert_int_equal(ops->stream_count(b->m), 0);
  mp_peer_free(b);

  b = mp_peer_new(ops, false, NULL);
  b->data_rc = LD_ERR_LIMIT;
  assert_int_equal(mp_feed_hex(b,
                               "000130"
                               "02026869",
                               0),
                   LD_ERR_LIMIT);
  assert_int_equal(mp_feed_hex(b, "0400", 0), LD_ERR_LIMIT);
  mp_peer_free(b);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(frames_match_vectors),
      cmocka_unit_test(decodes_vector_frames),
      cmocka_unit_test(names_streams_by_decimal_id),
      cmocka_unit_test(same_id_on_both_sides),
      cmocka_unit_test(oversize_message_is_fatal),
      cmocka_unit_test(writes_split_into_1mib_messages),
      cmocka_unit_test(open_accept_data_both_ways),
      cmocka_unit_test(half_close_and_eof),
      cmocka_unit_test(reset_aborts_both_sides),
      cmocka_unit_test(many_streams_both_directions),
      cmocka_unit_test(stream_limit_resets_excess),
      cmocka_unit_test(unknown_stream_messages_are_skipped),
      cmocka_unit_test(malformed_input_is_fatal),
      cmocka_unit_test(go_away_resets_everything),
      cmocka_unit_test(callbacks_may_act_inside_read),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
