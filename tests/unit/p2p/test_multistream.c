#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "base/buf.h"
#include "base/error.h"
#include "p2p/multistream.h"

#include "muxer_pair.h"

/* ---- helpers ---------------------------------------------------------------------------- */

#define HDR "132f6d756c746973747265616d2f312e302e300a"
#define NA "036e610a"
#define LS "036c730a"
#define NOISE "072f6e6f6973650a"
#define YAMUX "0d2f79616d75782f312e302e300a"
#define MPLEX "0d2f6d706c65782f362e372e300a"

static const char *const served[] = {"/noise", "/yamux/1.0.0", "/ipfs/id/1.0.0"};

static const char *select_served(void *ud, const char *p, size_t len) {
  (void)ud;
  for (size_t i = 0; i < sizeof served / sizeof served[0]; i++)
    if (strlen(served[i]) == len && memcmp(served[i], p, len) == 0)
      return served[i];
  return NULL;
}

static size_t list_served(void *ud, const char **out, size_t max) {
  (void)ud;
  size_t n = sizeof served / sizeof served[0];
  for (size_t i = 0; i < n && i < max; i++)
    out[i] = served[i];
  return n;
}

/* Feeds hex bytes; returns the result and stores consumed. */
static int feed_hex(ld_mss_t *m, const char *hex, size_t *consumed, ld_buf_t *out) {
  uint8_t in[4096];
  size_t n = mp_unhex(hex, in, sizeof in);
  return ld_mss_read(m, in, n, consumed, out);
}

/* ---- wire bytes ------------------------------------------------------------------------- */

static void encodes_digest_vectors(void **state) {
  (void)state;
  static const struct {
    const char *text, *hex;
  } v[] = {
      {"/multistream/1.0.0", HDR},
      {"na", NA},
      {"ls", LS},
      {"/noise", NOISE},
      {"/yamux/1.0.0", YAMUX},
      {"/mplex/6.7.0", MPLEX},
      {"/ipfs/id/1.0.0", "0f2f697066732f69642f312e302e300a"},
      {"/ipfs/id/push/1.0.0", "142f697066732f69642f707573682f312e302e300a"},
      {"/ipfs/ping/1.0.0", "112f697066732f70696e672f312e302e300a"},
      {"/meshsub/1.1.0", "0f2f6d6573687375622f312e312e300a"},
      {"/meshsub/1.2.0", "0f2f6d6573687375622f312e322e300a"},
      {"/floodsub/1.0.0", "102f666c6f6f647375622f312e302e300a"},
      {"/vac/waku/relay/2.0.0", "162f7661632f77616b752f72656c61792f322e302e300a"},
  };
  for (size_t i = 0; i < sizeof v / sizeof v[0]; i++) {
    ld_buf_t b;
    ld_buf_init(&b);
    assert_int_equal(ld_mss_write_message(&b, v[i].text, strlen(v[i].text)), 0);
    mp_assert_buf_hex(&b, v[i].hex);
    ld_buf_clear(&b);
  }
  ld_buf_t b;
  ld_buf_init(&b);
  char big[LD_MSS_MAX_MESSAGE];
  memset(big, 'a', sizeof big);
  assert_int_equal(ld_mss_write_message(&b, big, LD_MSS_MAX_MESSAGE), LD_ERR_INVALID_ARG);
  assert_int_equal(ld_mss_write_message(&b, big, LD_MSS_MAX_MESSAGE - 1), 0);
  assert_int_equal(b.len, 2 + LD_MSS_MAX_MESSAGE);
  ld_buf_clear(&b);
}

/* ---- initiator -------------------------------------------------------------------------- */

static void initiator_sends_header_and_proposal_in_one_write(void **state) {
  (void)state;
  const char *protos[] = {"/noise"};
  ld_mss_t m;
  ld_buf_t out;
  ld_buf_init(&out);
  ld_mss_init_initiator(&m, protos, 1);
  assert_int_equal(ld_mss_start(&m, &out), 0);
  mp_assert_buf_hex(&out, HDR NOISE);
  assert_int_equal(ld_mss_start(&m, &out), LD_ERR_STATE);
  ld_buf_reset(&out);
  size_t used;
  assert_int_equal(feed_hex(&m, HDR NOISE, &used, &out), LD_MSS_DONE);
  assert_int_equal(used, 20 + 8);
  assert_int_equal(out.len, 0);
  assert_string_equal(ld_mss_selected(&m), "/noise");
  assert_int_equal(ld_mss_selected_index(&m), 0);
  assert_true(ld_mss_is_done(&m));
  ld_mss_clear(&m);
  ld_buf_clear(&out);
}

static void initiator_proposes_next_after_na(void **state) {
  (void)state;
  const char *protos[] = {"/yamux/1.0.0", "/mplex/6.7.0"};
  ld_mss_t m;
  ld_buf_t out;
  ld_buf_init(&out);
  ld_mss_init_initiator(&m, protos, 2);
  assert_int_equal(ld_mss_start(&m, &out), 0);
  mp_assert_buf_hex(&out, HDR YAMUX);
  ld_buf_reset(&out);
  size_t used;
  assert_int_equal(feed_hex(&m, HDR NA, &used, &out), LD_MSS_PENDING);
  assert_int_equal(used, 24);
  mp_assert_buf_hex(&out, MPLEX);
  assert_null(ld_mss_selected(&m));
  ld_buf_reset(&out);
  assert_int_equal(feed_hex(&m, MPLEX, &used, &out), LD_MSS_DONE);
  assert_string_equal(ld_mss_selected(&m), "/mplex/6.7.0");
  assert_int_equal(ld_mss_selected_index(&m), 1);
  assert_int_equal(out.len, 0);
  ld_mss_clear(&m);
  ld_buf_clear(&out);
}

static void initiator_fails_when_every_proposal_is_refused(void **state) {
  (void)state;
  const char *protos[] = {"/a", "/b"};
  ld_mss_t m;
  ld_buf_t out;
  ld_buf_init(&out);
  ld_mss_init_initiator(&m, protos, 2);
  assert_int_equal(ld_mss_start(&m, &out), 0);
  size_t used;
  assert_int_equal(feed_hex(&m, HDR NA NA, &used, &out), LD_ERR_PROTOCOL_UNSUPPORTED);
  ld_mss_clear(&m);
  ld_buf_clear(&out);
}

static void initiator_rejects_wrong_answer_and_missing_header(void **state) {
  (void)state;
  const char *protos[] = {"/noise"};
  ld_mss_t m;
  ld_buf_t out;
  ld_buf_init(&out);
  size_t used;
  ld_mss_init_initiator(&m, protos, 1);
  assert_int_equal(ld_mss_start(&m, &out), 0);
  assert_int_equal(feed_hex(&m, HDR YAMUX, &used, &out), LD_ERR_NEGOTIATION_FAILED);
  ld_mss_clear(&m);

  ld_mss_init_initiator(&m, protos, 1);
  assert_int_equal(ld_mss_start(&m, &out), 0);
  assert_int_equal(feed_hex(&m, NOISE HDR, &used, &out), LD_ERR_NEGOTIATION_FAILED);
  ld_mss_clear(&m);

  ld_mss_init_initiator(&m, protos, 1);
  assert_int_equal(ld_mss_start(&m, &out), 0);
  assert_int_equal(feed_hex(&m, HDR LS, &used, &out), LD_ERR_NEGOTIATION_FAILED);
  ld_mss_clear(&m);
  ld_buf_clear(&out);
}

static void initiator_hands_back_pipelined_protocol_bytes(void **state) {
  (void)state;
  const char *protos[] = {"/ipfs/id/1.0.0"};
  ld_mss_t m;
  ld_buf_t out;
  ld_buf_init(&out);
  ld_mss_init_initiator(&m, protos, 1);
  assert_int_equal(ld_mss_start(&m, &out), 0);
  size_t used;
  /* header ‖ echo ‖ "\x03abc" (an identify-style LP message) */
  assert_int_equal(feed_hex(&m,
                            HDR "0f2f697066732f69642f312e302e300a"
                                "03616263",
                            &used, &out),
                   LD_MSS_DONE);
  assert_int_equal(used, 20 + 16);
  /* once done, nothing more is consumed */
  assert_int_equal(feed_hex(&m, "03616263", &used, &out), LD_MSS_DONE);
  assert_int_equal(used, 0);
  ld_mss_clear(&m);
  ld_buf_clear(&out);
}

static void initiator_rejects_empty_proposal_list(void **state) {
  (void)state;
  const char *protos[] = {""};
  ld_mss_t m;
  ld_buf_t out;
  ld_buf_init(&out);
  ld_mss_init_initiator(&m, protos, 0);
  assert_int_equal(ld_mss_start(&m, &out), LD_ERR_INVALID_ARG);
  ld_mss_init_initiator(&m, protos, 1);
  assert_int_equal(ld_mss_start(&m, &out), LD_ERR_INVALID_ARG);
  assert_int_equal(out.len, 0);
  ld_buf_clear(&out);
}

/* ---- listener --------------------------------------------------------------------------- */

static void listener_answers_header_after_receiving_it(void **state) {
  (void)state;
  ld_mss_t m;
  ld_buf_t out;
  ld_buf_init(&out);
  ld_mss_init_listener(&m, select_served, list_served, NULL);
  size_t used;
  assert_int_equal(feed_hex(&m, HDR NOISE, &used, &out), LD_MSS_DONE);
  assert_int_equal(used, 28);
  mp_assert_buf_hex(&out, HDR NOISE); /* header and answer in one write */
  assert_ptr_equal(ld_mss_selected(&m), served[0]);
  ld_mss_clear(&m);
  ld_buf_clear(&out);
}

static void listener_sends_header_first_when_started(void **state) {
  (void)state;
  ld_mss_t m;
  ld_buf_t out;
  ld_buf_init(&out);
  ld_mss_init_listener(&m, select_served, NULL, NULL);
  assert_int_equal(ld_mss_start(&m, &out), 0);
  mp_assert_buf_hex(&out, HDR);
  ld_buf_reset(&out);
  size_t used;
  assert_int_equal(feed_hex(&m, HDR, &used, &out), LD_MSS_PENDING);
  assert_int_equal(out.len, 0); /* no second header */
  assert_int_equal(feed_hex(&m, YAMUX, &used, &out), LD_MSS_DONE);
  mp_assert_buf_hex(&out, YAMUX);
  assert_string_equal(ld_mss_selected(&m), "/yamux/1.0.0");
  ld_mss_clear(&m);
  ld_buf_clear(&out);
}

static void listener_answers_na_then_accepts(void **state) {
  (void)state;
  ld_mss_t m;
  ld_buf_t out;
  ld_buf_init(&out);
  ld_mss_init_listener(&m, select_served, NULL, NULL);
  size_t used;
  assert_int_equal(feed_hex(&m, HDR MPLEX, &used, &out), LD_MSS_PENDING);
  mp_assert_buf_hex(&out, HDR NA);
  ld_buf_reset(&out);
  assert_int_equal(feed_hex(&m, YAMUX, &used, &out), LD_MSS_DONE);
  mp_assert_buf_hex(&out, YAMUX);
  ld_mss_clear(&m);
  ld_buf_clear(&out);
}

static void listener_hands_back_pipelined_data(void **state) {
  (void)state;
  ld_mss_t m;
  ld_buf_t out;
  ld_buf_init(&out);
  ld_mss_init_listener(&m, select_served, NULL, NULL);
  size_t used;
  assert_int_equal(feed_hex(&m,
                            HDR "0f2f697066732f69642f312e302e300a"
                                "68656c6c6f",
                            &used, &out),
                   LD_MSS_DONE);
  assert_int_equal(used, 20 + 16);
  assert_string_equal(ld_mss_selected(&m), "/ipfs/id/1.0.0");
  ld_mss_clear(&m);
  ld_buf_clear(&out);
}

static void listener_answers_ls(void **state) {
  (void)state;
  ld_mss_t m;
  ld_buf_t out;
  ld_buf_init(&out);
  ld_mss_init_listener(&m, select_served, list_served, NULL);
  size_t used;
  assert_int_equal(feed_hex(&m, HDR LS, &used, &out), LD_MSS_PENDING);
  /* one LP message: (07 "/noise\n") (0d "/yamux/1.0.0\n") (0f "/ipfs/id/1.0.0\n") "\n" */
  mp_assert_buf_hex(&out, HDR "27" NOISE YAMUX "0f2f697066732f69642f312e302e300a"
                              "0a");
  ld_mss_clear(&m);

  ld_buf_reset(&out);
  ld_mss_init_listener(&m, select_served, NULL, NULL);
  assert_int_equal(feed_hex(&m, HDR LS, &used, &out), LD_MSS_PENDING);
  mp_assert_buf_hex(&out, HDR NA);
  ld_mss_clear(&m);
  ld_buf_clear(&out);
}

static void listener_bounds_na_rounds(void **state) {
  (void)state;
  ld_mss_t m;
  ld_buf_t out;
  ld_buf_init(&out);
  ld_mss_init_listener(&m, select_served, NULL, NULL);
  size_t used;
  assert_int_equal(feed_hex(&m, HDR, &used, &out), LD_MSS_PENDING);
  for (int i = 0; i < LD_MSS_MAX_ROUNDS; i++)
    assert_int_equal(feed_hex(&m, MPLEX, &used, &out), LD_MSS_PENDING);
  assert_int_equal(feed_hex(&m, MPLEX, &used, &out), LD_ERR_NEGOTIATION_FAILED);
  ld_mss_clear(&m);
  ld_buf_clear(&out);
}

static void listener_rejects_proposal_before_header(void **state) {
  (void)state;
  ld_mss_t m;
  ld_buf_t out;
  ld_buf_init(&out);
  size_t used;
  ld_mss_init_listener(&m, select_served, NULL, NULL);
  assert_int_equal(feed_hex(&m, NOISE, &used, &out), LD_ERR_NEGOTIATION_FAILED);
  ld_mss_clear(&m);
  /* "/multistream/2.0.0" */
  ld_mss_init_listener(&m, select_served, NULL, NULL);
  assert_int_equal(feed_hex(&m, "132f6d756c746973747265616d2f322e302e300a", &used, &out),
                   LD_ERR_NEGOTIATION_FAILED);
  ld_mss_clear(&m);
  ld_buf_clear(&out);
}

static void proposal_with_embedded_nul_is_refused(void **state) {
  (void)state;
  ld_mss_t m;
  ld_buf_t out;
  ld_buf_init(&out);
  size_t used;
  ld_mss_init_listener(&m, select_served, NULL, NULL);
  /* "/noise\0x\n" */
  assert_int_equal(feed_hex(&m, HDR "092f6e6f69736500780a", &used, &out), LD_MSS_PENDING);
  mp_assert_buf_hex(&out, HDR NA);
  ld_mss_clear(&m);
  ld_buf_clear(&out);
}

/* ---- framing errors --------------------------------------------------------------------- */

static void rejects_oversize_messages(void **state) {
  (void)state;
  ld_mss_t m;
  ld_buf_t out;
  ld_buf_init(&out);
  size_t used;
  ld_mss_init_listener(&m, select_served, NULL, NULL);
  assert_int_equal(feed_hex(&m, "8108", &used, &out), LD_ERR_TOO_LARGE); /* 1025 */
  ld_mss_clear(&m);
  ld_mss_init_listener(&m, select_served, NULL, NULL);
  assert_int_equal(feed_hex(&m, "808001", &used, &out), LD_ERR_TOO_LARGE); /* 16384 */
  ld_mss_clear(&m);
  /* a split three-byte prefix is refused as soon as the third byte shows up */
  ld_mss_init_listener(&m, select_served, NULL, NULL);
  assert_int_equal(feed_hex(&m, "ff", &used, &out), LD_MSS_PENDING);
  assert_int_equal(feed_hex(&m, "ff", &used, &out), LD_MSS_PENDING);
  assert_int_equal(feed_hex(&m, "ff", &used, &out), LD_ERR_TOO_LARGE);
  ld_mss_clear(&m);

  /* exactly 1024 bytes is allowed: answered with na */
  uint8_t msg[2 + LD_MSS_MAX_MESSAGE];
  msg[0] = 0x80;
  msg[1] = 0x08;
  memset(msg + 2, 'x', LD_MSS_MAX_MESSAGE - 1);
  msg[1 + LD_MSS_MAX_MESSAGE] = '\n';
  ld_mss_init_listener(&m, select_served, NULL, NULL);
  assert_int_equal(feed_hex(&m, HDR, &used, &out), LD_MSS_PENDING);
  ld_buf_reset(&out);
  assert_int_equal(ld_mss_read(&m, msg, sizeof msg, &used, &out), LD_MSS_PENDING);
  assert_int_equal(used, sizeof msg);
  mp_assert_buf_hex(&out, NA);
  ld_mss_clear(&m);
  ld_buf_clear(&out);
}

static void rejects_missing_newline_empty_and_bad_prefix(void **state) {
  (void)state;
  ld_mss_t m;
  ld_buf_t out;
  ld_buf_init(&out);
  size_t used;
  ld_mss_init_listener(&m, select_served, NULL, NULL);
  assert_int_equal(feed_hex(&m, "072f6e6f697365ff", &used, &out), LD_ERR_MALFORMED);
  ld_mss_clear(&m);
  ld_mss_init_listener(&m, select_served, NULL, NULL);
  assert_int_equal(feed_hex(&m, "00", &used, &out), LD_ERR_MALFORMED);
  ld_mss_clear(&m);
  ld_mss_init_listener(&m, select_served, NULL, NULL);
  assert_int_equal(feed_hex(&m, "8100", &used, &out), LD_ERR_VARINT_NONMINIMAL);
  ld_mss_clear(&m);
  ld_buf_clear(&out);
}

static void rejects_garbage(void **state) {
  (void)state;
  static const char http[] = "GET / HTTP/1.1\r\nHost: example.org\r\nUser-Agent: x\r\n"
                             "Accept: */*\r\nConnection: keep-alive\r\n\r\n";
  ld_mss_t m;
  ld_buf_t out;
  ld_buf_init(&out);
  size_t used;
  ld_mss_init_listener(&m, select_served, NULL, NULL);
  int rc = ld_mss_read(&m, (const uint8_t *)http, sizeof http - 1, &used, &out);
  assert_true(rc < 0);
  assert_int_equal(out.len, 0);
  ld_mss_clear(&m);

  /* random bytes never produce agreement and never read out of bounds */
  uint32_t x = 12345;
  for (int round = 0; round < 200; round++) {
    uint8_t junk[300];
    for (size_t i = 0; i < sizeof junk; i++) {
      x = x * 1103515245u + 12345u;
      junk[i] = (uint8_t)(x >> 16);
    }
    ld_mss_init_listener(&m, select_served, list_served, NULL);
    rc = ld_mss_read(&m, junk, sizeof junk, &used, &out);
    assert_true(rc <= LD_MSS_PENDING);
    assert_true(used <= sizeof junk);
    ld_mss_clear(&m);
    ld_buf_reset(&out);
  }
  ld_buf_clear(&out);
}

/* ---- chunking --------------------------------------------------------------------------- */

static void byte_by_byte_matches_one_read(void **state) {
  (void)state;
  uint8_t in[256];
  size_t n = mp_unhex(HDR MPLEX "0f2f697066732f69642f312e302e300a"
                                "c0ffee",
                      in, sizeof in);
  ld_mss_t m;
  ld_buf_t out;
  ld_buf_init(&out);
  ld_mss_init_listener(&m, select_served, NULL, NULL);
  size_t pos = 0, used = 0;
  int rc = LD_MSS_PENDING;
  while (rc == LD_MSS_PENDING && pos < n) {
    rc = ld_mss_read(&m, in + pos, 1, &used, &out);
    pos += used;
  }
  assert_int_equal(rc, LD_MSS_DONE);
  assert_int_equal(pos, n - 3); /* the three protocol bytes are left over */
  mp_assert_buf_hex(&out, HDR NA "0f2f697066732f69642f312e302e300a");
  ld_mss_clear(&m);

  /* initiator, answers split at every position */
  const char *protos[] = {"/mplex/6.7.0", "/yamux/1.0.0"};
  n = mp_unhex(HDR NA YAMUX "01", in, sizeof in);
  for (size_t cut = 1; cut < n - 1; cut++) {
    ld_buf_reset(&out);
    ld_mss_init_initiator(&m, protos, 2);
    assert_int_equal(ld_mss_start(&m, &out), 0);
    rc = ld_mss_read(&m, in, cut, &used, &out);
    assert_int_equal(rc, LD_MSS_PENDING);
    assert_int_equal(used, cut);
    rc = ld_mss_read(&m, in + cut, n - cut, &used, &out);
    assert_int_equal(rc, LD_MSS_DONE);
    assert_int_equal(cut + used, n - 1);
    assert_string_equal(ld_mss_selected(&m), "/yamux/1.0.0");
    mp_assert_buf_hex(&out, HDR MPLEX YAMUX);
    ld_mss_clear(&m);
  }
  ld_buf_clear(&out);
}

/* Two engines talking to each other through buffers. */
static void initiator_and_listener_agree(void **state) {
  (void)state;
  const char *protos[] = {"/meshsub/1.2.0", "/yamux/1.0.0"};
  ld_mss_t a, b;
  ld_buf_t ab, ba;
  ld_buf_init(&ab);
  ld_buf_init(&ba);
  ld_mss_init_initiator(&a, protos, 2);
  ld_mss_init_listener(&b, select_served, NULL, NULL);
  assert_int_equal(ld_mss_start(&b, &ba), 0);
  assert_int_equal(ld_mss_start(&a, &ab), 0);
  int ra = LD_MSS_PENDING, rb = LD_MSS_PENDING;
  for (int i = 0; i < 5 && (ra != LD_MSS_DONE || rb != LD_MSS_DONE); i++) {
    size_t used;
    ld_buf_t tmp;
    ld_buf_init(&tmp);
    if (ab.len > 0) {
      rb = ld_mss_read(&b, ab.data, ab.len, &used, &tmp);
      assert_true(rb >= 0);
      ld_buf_consume(&ab, used);
      ld_buf_append(&ba, tmp.data, tmp.len);
      ld_buf_reset(&tmp);
    }
    if (ba.len > 0) {
      ra = ld_mss_read(&a, ba.data, ba.len, &used, &tmp);
      assert_true(ra >= 0);
      ld_buf_consume(&ba, used);
      ld_buf_append(&ab, tmp.data, tmp.len);
    }
    ld_buf_clear(&tmp);
  }
  assert_int_equal(ra, LD_MSS_DONE);
  assert_int_equal(rb, LD_MSS_DONE);
  assert_string_equal(ld_mss_selected(&a), "/yamux/1.0.0");
  assert_string_equal(ld_mss_selected(&b), "/yamux/1.0.0");
  ld_mss_clear(&a);
  ld_mss_clear(&b);
  ld_buf_clear(&ab);
  ld_buf_clear(&ba);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(encodes_digest_vectors),
      cmocka_unit_test(initiator_sends_header_and_proposal_in_one_write),
      cmocka_unit_test(initiator_proposes_next_after_na),
      cmocka_unit_test(initiator_fails_when_every_proposal_is_refused),
      cmocka_unit_test(initiator_rejects_wrong_answer_and_missing_header),
      cmocka_unit_test(initiator_hands_back_pipelined_protocol_bytes),
      cmocka_unit_test(initiator_rejects_empty_proposal_list),
      cmocka_unit_test(listener_answers_header_after_receiving_it),
      cmocka_unit_test(listener_sends_header_first_when_started),
      cmocka_unit_test(listener_answers_na_then_accepts),
      cmocka_unit_test(listener_hands_back_pipelined_data),
      cmocka_unit_test(listener_answers_ls),
      cmocka_unit_test(listener_bounds_na_rounds),
      cmocka_unit_test(listener_rejects_proposal_before_header),
      cmocka_unit_test(proposal_with_embedded_nul_is_refused),
      cmocka_unit_test(rejects_oversize_messages),
      cmocka_unit_test(rejects_missing_newline_empty_and_bad_prefix),
      cmocka_unit_test(rejects_garbage),
      cmocka_unit_test(byte_by_byte_matches_one_read),
      cmocka_unit_test(initiator_and_listener_agree),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
