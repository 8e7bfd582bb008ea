/* Waku metadata: codec (nwaku's double shard encoding, js-waku's packed field 2, caps and
 * malformed frames) and the connection policy. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "base/buf.h"
#include "base/error.h"
#include "base/hex.h"
#include "waku/metadata/metadata.h"

static size_t unhex(const char *text, uint8_t *out, size_t cap) {
  size_t n = 0;
  assert_int_equal(ld_hex_decode(text, strlen(text), out, cap, &n), 0);
  return n;
}

/* Frames `body` (hex) with its one-byte length prefix. */
static size_t frame(const char *body_hex, uint8_t *out, size_t cap) {
  size_t n = unhex(body_hex, out + 1, cap - 1);
  assert_true(n < 128);
  out[0] = (uint8_t)n;
  return n + 1;
}

static ld_metadata_info_t make_info(uint32_t cluster, const uint16_t *shards, size_t n) {
  ld_metadata_info_t info;
  ld_metadata_info_init(&info);
  info.has_cluster = true;
  info.cluster_id = cluster;
  for (size_t i = 0; i < n; i++)
    assert_int_equal(ld_metadata_info_add_shard(&info, shards[i]), 0);
  return info;
}

/* ---- info ----------------------------------------------------------------------------------- */

static void info_is_a_set_of_shards(void **state) {
  (void)state;
  ld_metadata_info_t info;
  ld_metadata_info_init(&info);
  assert_int_equal(ld_metadata_info_add_shard(&info, 7), 0);
  assert_int_equal(ld_metadata_info_add_shard(&info, 0), 0);
  assert_int_equal(ld_metadata_info_add_shard(&info, 1023), 0);
  assert_int_equal(ld_metadata_info_add_shard(&info, 7), 0);
  assert_int_equal(ld_metadata_info_add_shard(&info, 1024), LD_ERR_INVALID_ARG);
  assert_int_equal(info.n_shards, 3);
  assert_true(ld_metadata_info_has_shard(&info, 7));
  assert_false(ld_metadata_info_has_shard(&info, 8));
  assert_false(ld_metadata_info_has_shard(&info, 5000));
  uint16_t out[4];
  assert_int_equal(ld_metadata_info_shards(&info, out, 4), 3);
  assert_int_equal(out[0], 0);
  assert_int_equal(out[1], 7);
  assert_int_equal(out[2], 1023);
  assert_int_equal(ld_metadata_info_shards(&info, out, 1), 3);
  assert_int_equal(ld_metadata_info_shards(&info, NULL, 0), 3);
}

/* ---- codec ---------------------------------------------------------------------------------- */

/* waku.md §8: nwaku's bytes for cluster 1, shards 0..7. */
#define NWAKU_C1_S0_7 "0801100010011002100310041005100610071a080001020304050607"

static void encodes_as_nwaku(void **state) {
  (void)state;
  const uint16_t shards[] = {7, 6, 5, 4, 3, 2, 1, 0};
  ld_metadata_info_t info = make_info(1, shards, 8);
  ld_buf_t out;
  ld_buf_init(&out);
  assert_int_equal(ld_metadata_encode(&info, &out), 0);
  uint8_t want[64];
  size_t n = frame(NWAKU_C1_S0_7, want, sizeof want);
  assert_int_equal(out.len, n);
  assert_int_equal(out.data[0], 0x1c);
  assert_memory_equal(out.data, want, n);
  ld_buf_clear(&out);
}

static void encodes_cluster_only_and_nothing(void **state) {
  (void)state;
  ld_buf_t out;
  ld_buf_init(&out);
  ld_metadata_info_t info = make_info(16, NULL, 0);
  assert_int_equal(ld_metadata_encode(&info, &out), 0);
  const uint8_t want[] = {0x02, 0x08, 0x10};
  assert_int_equal(out.len, sizeof want);
  assert_memory_equal(out.data, want, sizeof want);
  ld_buf_reset(&out);
  ld_metadata_info_init(&info);
  assert_int_equal(ld_metadata_encode(&info, &out), 0);
  assert_int_equal(out.len, 1);
  assert_int_equal(out.data[0], 0);
  ld_buf_clear(&out);
}

static void decodes_nwaku_bytes(void **state) {
  (void)state;
  uint8_t buf[64];
  size_t n = frame(NWAKU_C1_S0_7, buf, sizeof buf);
  ld_metadata_info_t info;
  assert_int_equal(ld_metadata_decode(buf, n, &info), (int)n);
  assert_true(info.has_cluster);
  assert_int_equal(info.cluster_id, 1);
  assert_int_equal(info.n_shards, 8);
  for (uint32_t s = 0; s < 8; s++)
    assert_true(ld_metadata_info_has_shard(&info, s));
}

/* js-waku (protons, proto3): shards packed under field 2. */
static void decodes_packed_field_2(void **state) {
  (void)state;
  uint8_t buf[64];
  size_t n = frame("0801120400020305", buf, sizeof buf);
  ld_metadata_info_t info;
  assert_int_equal(ld_metadata_decode(buf, n, &info), (int)n);
  assert_int_equal(info.cluster_id, 1);
  assert_int_equal(info.n_shards, 4);
  assert_true(ld_metadata_info_has_shard(&info, 0));
  assert_true(ld_metadata_info_has_shard(&info, 2));
  assert_true(ld_metadata_info_has_shard(&info, 3));
  assert_true(ld_metadata_info_has_shard(&info, 5));
}

static void decodes_unpacked_field_2(void **state) {
  (void)state;
  uint8_t buf[64];
  size_t n = frame("082a1003100b", buf, sizeof buf);
  ld_metadata_info_t info;
  assert_int_equal(ld_metadata_decode(buf, n, &info), (int)n);
  assert_int_equal(info.cluster_id, 42);
  assert_int_equal(info.n_shards, 2);
  assert_true(ld_metadata_info_has_shard(&info, 3));
  assert_true(ld_metadata_info_has_shard(&info, 11));
}

static void packed_field_3_wins_over_field_2(void **state) {
  (void)state;
  uint8_t buf[64];
  size_t n = frame("080110091a020102", buf, sizeof buf);
  ld_metadata_info_t info;
  assert_int_equal(ld_metadata_decode(buf, n, &info), (int)n);
  assert_int_equal(info.n_shards, 2);
  assert_true(ld_metadata_info_has_shard(&info, 1));
  assert_true(ld_metadata_info_has_shard(&info, 2));
  assert_false(ld_metadata_info_has_shard(&info, 9));
}

static void absent_cluster_and_unknown_fields(void **state) {
  (void)state;
  uint8_t buf[64];
  /* field 2 = 4, unknown field 9 (varint), unknown field 10 (bytes) */
  size_t n = frame("100448015203616263", buf, sizeof buf);
  ld_metadata_info_t info;
  assert_int_equal(ld_metadata_decode(buf, n, &info), (int)n);
  assert_false(info.has_cluster);
  assert_int_equal(info.n_shards, 1);
  assert_true(ld_metadata_info_has_shard(&info, 4));
}

static void out_of_range_and_duplicate_shards(void **state) {
  (void)state;
  uint8_t buf[64];
  /* packed field 3: 1, 1, 1024 (80 08), 70000 (f0 a2 04), 1023 (ff 07) */
  size_t n = frame("08011a0901018008f0a204ff07", buf, sizeof buf);
  ld_metadata_info_t info;
  assert_int_equal(ld_metadata_decode(buf, n, &info), (int)n);
  assert_int_equal(info.n_shards, 2);
  assert_true(ld_metadata_info_has_shard(&info, 1));
  assert_true(ld_metadata_info_has_shard(&info, 1023));
}

static void roundtrips_many_shards(void **state) {
  (void)state;
  ld_metadata_info_t info = make_info(65535, NULL, 0);
  for (uint32_t s = 0; s < 300; s++)
    ld_metadata_info_add_shard(&info, s);
  ld_buf_t out;
  ld_buf_init(&out);
  /* Both copies do not fit in 1024 bytes: only the packed one is sent. */
  assert_int_equal(ld_metadata_encode(&info, &out), 0);
  assert_true(out.len <= LD_METADATA_MAX_MSG + 2);
  ld_metadata_info_t back;
  assert_int_equal(ld_metadata_decode(out.data, out.len, &back), (int)out.len);
  assert_memory_equal(&back, &info, sizeof info);
  ld_buf_clear(&out);
  /* Every shard: not even the packed copy fits. */
  for (uint32_t s = 0; s < LD_METADATA_MAX_SHARDS; s++)
    ld_metadata_info_add_shard(&info, s);
  ld_buf_init(&out);
  assert_int_equal(ld_metadata_encode(&info, &out), LD_ERR_TOO_LARGE);
  assert_int_equal(out.len, 0);
  ld_buf_clear(&out);
}

static void reads_one_frame_of_a_stream(void **state) {
  (void)state;
  uint8_t buf[64];
  size_t n = frame("0803", buf, sizeof buf);
  buf[n] = 0x05; /* start of a following frame */
  ld_metadata_info_t info;
  assert_int_equal(ld_metadata_decode(buf, n + 1, &info), (int)n);
  assert_int_equal(info.cluster_id, 3);
}

static void rejects_malformed_frames(void **state) {
  (void)state;
  ld_metadata_info_t info;
  uint8_t buf[2048];
  size_t n = frame(NWAKU_C1_S0_7, buf, sizeof buf);
  for (size_t cut = 0; cut < n; cut++)
    assert_int_equal(ld_metadata_decode(buf, cut, &info), LD_ERR_TRUNCATED);
  /* a prefix of 1025 */
  const uint8_t big[] = {0x81, 0x08};
  assert_int_equal(ld_metadata_decode(big, sizeof big, &info), LD_ERR_TOO_LARGE);
  /* a body of exactly 1024 bytes of padding in an unknown field is fine */
  buf[0] = 0x80;
  buf[1] = 0x08;
  buf[2] = 0x52; /* field 10, bytes */
  buf[3] = 0xfd;
  buf[4] = 0x07; /* 1021 */
  memset(buf + 5, 0xaa, 1021);
  assert_int_equal(ld_metadata_decode(buf, 1026, &info), 1026);
  const uint8_t nonminimal[] = {0x82, 0x00, 0x08, 0x01};
  assert_int_equal(ld_metadata_decode(nonminimal, sizeof nonminimal, &info),
                   LD_ERR_VARINT_NONMINIMAL);
  const uint8_t wire7[] = {0x02, 0x0f, 0x01};
  assert_int_equal(ld_metadata_decode(wire7, sizeof wire7, &info), LD_ERR_BAD_PROTOBUF);
  const uint8_t cut_varint[] = {0x02, 0x08, 0x80};
  assert_int_equal(ld_metadata_decode(cut_varint, sizeof cut_varint, &info), LD_ERR_BAD_PROTOBUF);
  const uint8_t bad_packed[] = {0x04, 0x1a, 0x02, 0x80, 0x80};
  assert_int_equal(ld_metadata_decode(bad_packed, sizeof bad_packed, &info), LD_ERR_BAD_PROTOBUF);
  assert_false(info.has_cluster);
  assert_int_equal(info.n_shards, 0);
}

/* ---- policy --------------------------------------------------------------------------------- */

static void policy_keeps_same_cluster_whatever_the_shards(void **state) {
  (void)state;
  const uint16_t other[] = {5};
  ld_metadata_info_t same = make_info(1, other, 1);
  assert_int_equal(ld_metadata_policy(1, true, 0, &same), 0);
  ld_metadata_info_t none = make_info(1, NULL, 0);
  assert_int_equal(ld_metadata_policy(1, false, 0, &none), 0);
}

static void policy_rejects_other_or_missing_cluster(void **state) {
  (void)state;
  ld_metadata_info_t other = make_info(2, NULL, 0);
  assert_int_equal(ld_metadata_policy(1, false, 0, &other), LD_ERR_CLUSTER_MISMATCH);
  assert_int_equal(ld_metadata_policy(1, true, 0, &other), LD_ERR_CLUSTER_MISMATCH);
  ld_metadata_info_t missing;
  ld_metadata_info_init(&missing);
  assert_int_equal(ld_metadata_policy(0, false, 0, &missing), LD_ERR_CLUSTER_MISMATCH);
  assert_int_equal(ld_metadata_policy(0, false, 0, NULL), LD_ERR_CLUSTER_MISMATCH);
  ld_metadata_info_t zero = make_info(0, NULL, 0);
  assert_int_equal(ld_metadata_policy(0, false, 0, &zero), 0);
}

static void policy_on_failures(void **state) {
  (void)state;
  /* a peer that does not speak metadata: closed only when metadata is required */
  assert_int_equal(ld_metadata_policy(1, true, LD_ERR_PROTOCOL_UNSUPPORTED, NULL),
                   LD_ERR_PROTOCOL_UNSUPPORTED);
  assert_int_equal(ld_metadata_policy(1, false, LD_ERR_PROTOCOL_UNSUPPORTED, NULL), 0);
  assert_int_equal(ld_metadata_policy(1, true, LD_ERR_TIMEOUT, NULL), LD_ERR_TIMEOUT);
  assert_int_equal(ld_metadata_policy(1, false, LD_ERR_TIMEOUT, NULL), 0);
  assert_int_equal(ld_metadata_policy(1, false, LD_ERR_RESET, NULL), 0);
  /* garbage answers close in any case */
  assert_int_equal(ld_metadata_policy(1, false, LD_ERR_BAD_PROTOBUF, NULL), LD_ERR_BAD_PROTOBUF);
  assert_int_equal(ld_metadata_policy(1, false, LD_ERR_TOO_LARGE, NULL), LD_ERR_TOO_LARGE);
  assert_int_equal(ld_metadata_policy(1, false, LD_ERR_TRUNCATED, NULL), LD_ERR_TRUNCATED);
  /* never for a connection already gone or our own memory */
  assert_int_equal(ld_metadata_policy(1, true, LD_ERR_CLOSED, NULL), 0);
  assert_int_equal(ld_metadata_policy(1, true, LD_ERR_NOMEM, NULL), 0);
  assert_true(ld_metadata_is_decode_error(LD_ERR_VARINT_TOO_LONG));
  assert_false(ld_metadata_is_decode_error(LD_ERR_PROTOCOL_UNSUPPORTED));
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(info_is_a_set_of_shards),
      cmocka_unit_test(encodes_as_nwaku),
      cmocka_unit_test(encodes_cluster_only_and_nothing),
      cmocka_unit_test(decodes_nwaku_bytes),
      cmocka_unit_test(decodes_packed_field_2),
      cmocka_unit_test(decodes_unpacked_field_2),
      cmocka_unit_test(packed_field_3_wins_over_field_2),
      cmocka_unit_test(absent_cluster_and_unknown_fields),
      cmocka_unit_test(out_of_range_and_duplicate_shards),
      cmocka_unit_test(roundtrips_many_shards),
      cmocka_unit_test(reads_one_frame_of_a_stream),
      cmocka_unit_test(rejects_malformed_frames),
      cmocka_unit_test(policy_keeps_same_cluster_whatever_the_shards),
      cmocka_unit_test(policy_rejects_other_or_missing_cluster),
      cmocka_unit_test(policy_on_failures),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
