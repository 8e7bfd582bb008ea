/* LIP-243 segments with Reed–Solomon parity (channels/segment.h): the wire fields of parity
 * segments, the refusal of inconsistent ones, the parity count, and reassembly from any `count`
 * segments of a set (every erasure pattern of a small set), with late segments of a delivered
 * set taken as duplicates and inconsistent shards refused. */
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
#include "channels/leopard_rs.h"
#include "channels/segment.h"
#include "crypto/keccak.h"

static const uint8_t k_hash[32] = {0xaa, 0xbb};

static void parity_segment_wire_bytes(void **state) {
  (void)state;
  const uint8_t payload[2] = {0x10, 0x20};
  ld_segment_t seg = {.hash = k_hash,
                      .count = 3,
                      .payload = payload,
                      .len = 2,
                      .is_parity = true,
                      .parity_index = 1,
                      .parity_count = 2,
                      .total_len = 300};
  ld_buf_t out;
  ld_buf_init(&out);
  assert_int_equal(ld_segment_encode_full(&seg, &out), 0);
  /* 0a 20 <hash> | 18 03 | 22 02 10 20 | 28 01 | 30 02 | 38 01 | 40 ac 02 */
  uint8_t want[34 + 2 + 4 + 2 + 2 + 2 + 3];
  want[0] = 0x0a, want[1] = 0x20;
  memcpy(want + 2, k_hash, 32);
  const uint8_t tail[] = {0x18, 0x03, 0x22, 0x02, 0x10, 0x20, 0x28, 0x01,
                          0x30, 0x02, 0x38, 0x01, 0x40, 0xac, 0x02};
  memcpy(want + 34, tail, sizeof tail);
  assert_int_equal(out.len, sizeof want);
  assert_memory_equal(out.data, want, sizeof want);
  ld_segment_t back;
  assert_int_equal(ld_segment_decode(out.data, out.len, &back), 0);
  assert_true(back.is_parity);
  assert_int_equal(back.parity_index, 1);
  assert_int_equal(back.parity_count, 2);
  assert_int_equal(back.count, 3);
  assert_int_equal(back.total_len, 300);
  assert_int_equal(back.len, 2);
  ld_buf_clear(&out);

  /* a data segment of a set with parity: index, both counts, the length; no is_parity */
  seg.is_parity = false, seg.parity_index = 0, seg.index = 2;
  ld_buf_init(&out);
  assert_int_equal(ld_segment_encode_full(&seg, &out), 0);
  assert_int_equal(ld_segment_decode(out.data, out.len, &back), 0);
  assert_false(back.is_parity);
  assert_int_equal(back.index, 2);
  assert_int_equal(back.parity_count, 2);
  assert_int_equal(back.total_len, 300);
  ld_buf_clear(&out);
}

/* Encodes raw protobuf from a hash-led tail, decodes it, returns the result. */
static int decode_with_tail(const uint8_t *tail, size_t n) {
  uint8_t msg[128];
  msg[0] = 0x0a, msg[1] = 0x20;
  memcpy(msg + 2, k_hash, 32);
  memcpy(msg + 34, tail, n);
  ld_segment_t seg;
  return ld_segment_decode(msg, 34 + n, &seg);
}

static void inconsistent_segments_refused(void **state) {
  (void)state;
  /* count 3, payload {1}: then parity fields */
#define T(...)                                                                                     \
  do {                                                                                             \
    const uint8_t t[] = {0x18, 0x03, 0x22, 0x01, 0x01, __VA_ARGS__};                               \
    rc = decode_with_tail(t, sizeof t);                                                            \
  } while (0)
  int rc;
  T(0x28, 0x01, 0x30, 0x02, 0x38, 0x01); /* parity 1 of 2: fine */
  assert_int_equal(rc, 0);
  T(0x28, 0x02, 0x30, 0x02, 0x38, 0x01); /* parity index out of range */
  assert_int_equal(rc, LD_ERR_MALFORMED);
  T(0x28, 0x00, 0x30, 0x00, 0x38, 0x01); /* parity without a parity count */
  assert_int_equal(rc, LD_ERR_MALFORMED);
  T(0x30, 0x04, 0x38, 0x01); /* more parity than data */
  assert_int_equal(rc, LD_ERR_MALFORMED);
  T(0x10, 0x01, 0x30, 0x02, 0x38, 0x01); /* a parity segment with a data index */
  assert_int_equal(rc, LD_ERR_MALFORMED);
  T(0x28, 0x01, 0x30, 0x02); /* a data segment with a parity index */
  assert_int_equal(rc, LD_ERR_MALFORMED);
  T(0x30, 0x02, 0x38, 0x02); /* is_parity not a bool */
  assert_int_equal(rc, LD_ERR_MALFORMED);
  T(0x30, 0x02, 0x30, 0x02); /* a field twice */
  assert_int_equal(rc, LD_ERR_MALFORMED);
  T(0x48, 0x01); /* an unknown field */
  assert_int_equal(rc, LD_ERR_MALFORMED);
  T(0x42, 0x00); /* the length with the wrong wire type */
  assert_int_equal(rc, LD_ERR_MALFORMED);
#undef T
  /* count 200 + parity 57 > 256 */
  const uint8_t big[] = {0x18, 0xc8, 0x01, 0x22, 0x01, 0x01, 0x30, 0x39, 0x38, 0x01};
  assert_int_equal(decode_with_tail(big, sizeof big), LD_ERR_MALFORMED);
  const uint8_t fits[] = {0x18, 0xc8, 0x01, 0x22, 0x01, 0x01, 0x30, 0x38, 0x38, 0x01};
  assert_int_equal(decode_with_tail(fits, sizeof fits), 0);
}

static void parity_counts(void **state) {
  (void)state;
  assert_int_equal(ld_segment_parity_count(1, 125000), 1);
  assert_int_equal(ld_segment_parity_count(8, 125000), 1); /* exactly 1.0, not 2 */
  assert_int_equal(ld_segment_parity_count(9, 125000), 2);
  assert_int_equal(ld_segment_parity_count(11, 125000), 2);
  assert_int_equal(ld_segment_parity_count(224, 125000), 28);
  assert_int_equal(ld_segment_parity_count(225, 125000), 0); /* needs GF(2^16) */
  assert_int_equal(ld_segment_parity_count(10, 0), 0);
  assert_int_equal(ld_segment_parity_count(3, 1000000), 3);
  assert_int_equal(ld_segment_parity_count(200, 1000000), 0); /* 400 segments */
}

/* A payload of k-1 full 64-byte shards and a short last one, its m parity shards. */
typedef struct set_fixture {
  uint32_t k, m;
  size_t len;
  uint8_t payload[8 * 64];
  uint8_t hash[32];
  uint8_t parity_bytes[8][64];
  uint8_t *parity[8];
} set_fixture_t;

static void fixture_init(set_fixture_t *f, uint32_t k, uint32_t m, size_t last_len) {
  f->k = k, f->m = m, f->len = (size_t)(k - 1) * 64 + last_len;
  for (size_t i = 0; i < f->len; i++)
    f->payload[i] = (uint8_t)(i * 37 + 11);
  ld_keccak256(f->payload, f->len, f->hash);
  for (uint32_t j = 0; j < m; j++)
    f->parity[j] = f->parity_bytes[j];
  assert_int_equal(ld_segment_parity(f->payload, f->len, 64, k, m, f->parity), 0);
}

/* Segment `i` (data first, then parity) of the fixture. */
static ld_segment_t fixture_seg(const set_fixture_t *f, uint32_t i) {
  ld_segment_t s = {.hash = f->hash, .count = f->k, .parity_count = f->m, .total_len = f->len};
  if (i < f->k) {
    s.index = i;
    s.payload = f->payload + (size_t)i * 64;
    s.len = i + 1 < f->k ? 64 : f->len - (size_t)i * 64;
  } else {
    s.is_parity = true;
    s.parity_index = i - f->k;
    s.payload = f->parity[s.parity_index];
    s.len = 64;
  }
  return s;
}

/* Adds the segments of `mask` (bit i: segment i present) in order; returns the payload once. */
static void rebuild_with(const set_fixture_t *f, unsigned mask, bool with_length) {
  ld_reassembler_t *r = ld_reassembler_new(4, 1 << 20, 1000);
  int completes = 0;
  for (uint32_t i = 0; i < f->k + f->m; i++) {
    if (!(mask >> i & 1))
      continue;
    ld_segment_t s = fixture_seg(f, i);
    if (!with_length)
      s.total_len = 0;
    uint8_t *out = NULL;
    size_t out_len = 0;
    int rc = ld_reassembler_add(r, "peer", &s, 10, &out, &out_len);
    if (rc == LD_REASSEMBLY_COMPLETE) {
      completes++;
      assert_int_equal(out_len, f->len);
      assert_memory_equal(out, f->payload, f->len);
    } else {
      /* before the payload: held; after it: the late segments are duplicates */
      assert_int_equal(rc, completes == 0 ? LD_REASSEMBLY_HELD : LD_REASSEMBLY_DUPLICATE);
    }
    free(out);
  }
  assert_int_equal(completes, 1);
  assert_int_equal(ld_reassembler_sets(r), 0);
  assert_int_equal(ld_reassembler_bytes(r), 0);
  ld_reassembler_free(r);
}

static void every_erasure_pattern_rebuilds(void **state) {
  (void)state;
  static const uint32_t shapes[][3] = {{2, 1, 64}, {3, 2, 10}, {4, 3, 1}, {5, 2, 63}, {6, 4, 40}};
  for (size_t s = 0; s < sizeof shapes / sizeof *shapes; s++) {
    set_fixture_t f;
    fixture_init(&f, shapes[s][0], shapes[s][1], shapes[s][2]);
    unsigned n = f.k + f.m;
    for (unsigned mask = 0; mask < 1u << n; mask++) {
      unsigned missing = n - (unsigned)__builtin_popcount(mask);
      if (missing > f.m)
        continue;
      rebuild_with(&f, mask, true);
      /* without original_payload_length: rebuilt when the last data segment is there */
      if (mask >> (f.k - 1) & 1)
        rebuild_with(&f, mask, false);
    }
  }
}

static void too_few_segments_wait(void **state) {
  (void)state;
  set_fixture_t f;
  fixture_init(&f, 5, 2, 30);
  ld_reassembler_t *r = ld_reassembler_new(4, 1 << 20, 1000);
  uint8_t *out = NULL;
  size_t out_len = 0;
  /* 4 of 5 needed (data 0, 2, parity 0, 1): held */
  const uint32_t some[] = {0, 2, 5, 6};
  for (size_t i = 0; i < 4; i++) {
    ld_segment_t s = fixture_seg(&f, some[i]);
    assert_int_equal(ld_reassembler_add(r, "peer", &s, 10, &out, &out_len), LD_REASSEMBLY_HELD);
  }
  assert_int_equal(ld_reassembler_sets(r), 1);
  ld_segment_t s = fixture_seg(&f, 5); /* again: duplicate */
  assert_int_equal(ld_reassembler_add(r, "peer", &s, 10, &out, &out_len), LD_REASSEMBLY_DUPLICATE);
  /* the set expires after the timeout */
  assert_int_equal(ld_reassembler_expire(r, 1010, NULL), 1);
  ld_reassembler_free(r);
}

static void inconsistent_shards_refused(void **state) {
  (void)state;
  set_fixture_t f;
  fixture_init(&f, 4, 2, 20);
  ld_reassembler_t *r = ld_reassembler_new(4, 1 << 20, 1000);
  uint8_t *out = NULL;
  size_t out_len = 0;
  ld_segment_t s = fixture_seg(&f, 4); /* parity 0: the shard is 64 bytes */
  assert_int_equal(ld_reassembler_add(r, "peer", &s, 10, &out, &out_len), LD_REASSEMBLY_HELD);
  s = fixture_seg(&f, 5);
  s.len = 128; /* a parity shard of another size */
  assert_int_equal(ld_reassembler_add(r, "peer", &s, 10, &out, &out_len), LD_REASSEMBLY_MISMATCH);
  s = fixture_seg(&f, 0);
  s.len = 32; /* a data segment that is not the last, shorter than the shard */
  assert_int_equal(ld_reassembler_add(r, "peer", &s, 10, &out, &out_len), LD_REASSEMBLY_MISMATCH);
  s = fixture_seg(&f, 1);
  s.parity_count = 3; /* other counts */
  assert_int_equal(ld_reassembler_add(r, "peer", &s, 10, &out, &out_len), LD_REASSEMBLY_MISMATCH);
  s = fixture_seg(&f, 1);
  s.total_len = 7; /* another length */
  assert_int_equal(ld_reassembler_add(r, "peer", &s, 10, &out, &out_len), LD_REASSEMBLY_MISMATCH);
  assert_int_equal(ld_reassembler_bytes(r), 64);
  ld_reassembler_free(r);
}

static void impossible_length_drops_the_set(void **state) {
  (void)state;
  set_fixture_t f;
  fixture_init(&f, 3, 1, 5);
  ld_reassembler_t *r = ld_reassembler_new(4, 1 << 20, 1000);
  uint8_t *out = NULL;
  size_t out_len = 0;
  int rc = 0;
  /* data 0, 1 and the parity, all claiming a length beyond 3 shards */
  const uint32_t which[] = {0, 1, 3};
  for (size_t i = 0; i < 3; i++) {
    ld_segment_t s = fixture_seg(&f, which[i]);
    s.total_len = 3 * 64 + 1;
    rc = ld_reassembler_add(r, "peer", &s, 10, &out, &out_len);
  }
  assert_int_equal(rc, LD_REASSEMBLY_HASH_MISMATCH);
  assert_null(out);
  assert_int_equal(ld_reassembler_sets(r), 0);
  assert_int_equal(ld_reassembler_dropped(r), 1);
  ld_reassembler_free(r);
}

static void unaligned_shards_wait_for_data(void **state) {
  (void)state;
  /* shards of 100 bytes cannot be Leopard shards: the set waits for its data segments */
  uint8_t payload[250];
  for (size_t i = 0; i < sizeof payload; i++)
    payload[i] = (uint8_t)i;
  uint8_t hash[32], junk[100] = {0};
  ld_keccak256(payload, sizeof payload, hash);
  ld_reassembler_t *r = ld_reassembler_new(4, 1 << 20, 1000);
  uint8_t *out = NULL;
  size_t out_len = 0;
  ld_segment_t p = {.hash = hash,
                    .count = 3,
                    .parity_count = 1,
                    .is_parity = true,
                    .payload = junk,
                    .len = 100,
                    .total_len = 250};
  assert_int_equal(ld_reassembler_add(r, "peer", &p, 1, &out, &out_len), LD_REASSEMBLY_HELD);
  for (uint32_t i = 0; i < 3; i++) {
    ld_segment_t s = {.hash = hash,
                      .index = i,
                      .count = 3,
                      .parity_count = 1,
                      .payload = payload + i * 100,
                      .len = i < 2 ? 100 : 50,
                      .total_len = 250};
    int rc = ld_reassembler_add(r, "peer", &s, 1, &out, &out_len);
    assert_int_equal(rc, i < 2 ? LD_REASSEMBLY_HELD : LD_REASSEMBLY_COMPLETE);
  }
  assert_int_equal(out_len, sizeof payload);
  assert_memory_equal(out, payload, sizeof payload);
  free(out);
  ld_reassembler_free(r);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(parity_segment_wire_bytes),
      cmocka_unit_test(inconsistent_segments_refused),
      cmocka_unit_test(parity_counts),
      cmocka_unit_test(every_erasure_pattern_rebuilds),
      cmocka_unit_test(too_few_segments_wait),
      cmocka_unit_test(inconsistent_shards_refused),
      cmocka_unit_test(impossible_length_drops_the_set),
      cmocka_unit_test(unaligned_shards_wait_for_data),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
