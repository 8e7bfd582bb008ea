/* Store-sync reconciliation payload codec: byte-exact vectors (the digest's, derived by hand from
 * nwaku's codec.nim), nwaku's test_codec.nim round trips, the hash-prefix rule of equal-time
 * bounds, nwaku's decoder tolerances, and every named rejection. */
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
#include "base/hex.h"
#include "crypto/crypto.h"
#include "waku/sync/codec.h"

#define SEC 1000000000ll
static const int64_t A = 1700000000000000000ll; /* the digest's window start */

static uint64_t g_rng = 0x243f6a8885a308d3ull;

static uint64_t rnd(void) {
  g_rng ^= g_rng << 13;
  g_rng ^= g_rng >> 7;
  g_rng ^= g_rng << 17;
  return g_rng;
}

static void random_hash(uint8_t h[32]) {
  for (int i = 0; i < 4; i++) {
    uint64_t w = rnd();
    memcpy(h + 8 * i, &w, 8);
  }
}

static size_t unhex(const char *text, uint8_t *out, size_t cap) {
  size_t n;
  assert_int_equal(ld_hex_decode(text, strlen(text), out, cap, &n), 0);
  return n;
}

static void assert_encodes_to(const ld_sync_payload_t *p, const char *hex) {
  uint8_t want[512];
  size_t n = unhex(hex, want, sizeof want);
  ld_buf_t b;
  ld_buf_init(&b);
  assert_int_equal(ld_sync_payload_encode(p, &b), 0);
  assert_int_equal(b.len, n);
  assert_int_equal(ld_sync_payload_encoded_len(p), n);
  assert_memory_equal(b.data, want, n);
  ld_buf_clear(&b);
}

static ld_sync_id_t item(int64_t time, const uint8_t hash[32]) {
  ld_sync_id_t id;
  id.time = time;
  memcpy(id.hash, hash, 32);
  return id;
}

/* Encodes p, decodes it back into q (initialised by the caller). */
static void round_trip(const ld_sync_payload_t *p, ld_sync_payload_t *q) {
  ld_buf_t b;
  ld_buf_init(&b);
  assert_int_equal(ld_sync_payload_encode(p, &b), 0);
  char why[128] = "";
  int rc = ld_sync_payload_decode(b.data, b.len, NULL, q, why, sizeof why);
  if (rc != 0)
    print_message("decode: %s (%s)\n", ld_strerror(rc), why);
  assert_int_equal(rc, 0);
  ld_buf_clear(&b);
}

static void assert_same_ranges(const ld_sync_payload_t *p, const ld_sync_payload_t *q) {
  assert_int_equal(q->n_ranges, p->n_ranges);
  assert_int_equal(q->start.time, p->start.time);
  for (size_t i = 0; i < p->n_ranges; i++) {
    const ld_sync_range_t *a = &p->ranges[i], *b = &q->ranges[i];
    assert_int_equal(b->upper.time, a->upper.time);
    assert_int_equal(b->type, a->type);
    if (a->type == LD_SYNC_RANGE_FINGERPRINT)
      assert_memory_equal(b->fingerprint, a->fingerprint, 32);
    if (a->type == LD_SYNC_RANGE_ITEM_SET) {
      assert_int_equal(b->reconciled, a->reconciled);
      assert_int_equal(b->n_items, a->n_items);
      for (size_t k = 0; k < a->n_items; k++)
        assert_int_equal(ld_sync_id_cmp(&p->items[a->first_item + k], &q->items[b->first_item + k]),
                         0);
    }
  }
}

/* ---- the digest's vectors (waku.md §7.3) ----------------------------------------------------- */

static void digest_vectors(void **state) {
  (void)state;
  uint8_t h1[32], h2[32];
  ld_sha256("one", 3, h1);
  ld_sha256("two", 3, h2);
  ld_sync_fp_t fp;
  ld_sync_fp_zero(&fp);
  ld_sync_fp_xor_hash(&fp, h1);
  ld_sync_fp_xor_hash(&fp, h2);
  ld_sync_payload_t p;
  ld_sync_payload_init(&p);
  ld_sync_id_t lo = ld_sync_id_bound(A), hi = ld_sync_id_bound(A + 3600 * SEC);
  ld_sync_payload_reset(&p, &lo);
  assert_int_equal(ld_sync_payload_add_topic(&p, false, "/waku/2/rs/1/0", 14), 0);
  assert_int_equal(ld_sync_payload_add_fingerprint(&p, &hi, &fp), 0);
  assert_encodes_to(&p, "010e2f77616b752f322f72732f312f30008080a8b1e39fe7cb1780c0e285e36801"
                        "49560f534118cb62fcdb944b1d693dedeb9fdfe0f6cdb9a290b61d0cd971d31e");
  ld_sync_payload_reset(&p, &lo);
  assert_int_equal(ld_sync_payload_add_topic(&p, false, "/waku/2/rs/1/0", 14), 0);
  ld_sync_id_t items[2] = {item(A + 5 * SEC, h1), item(A + 7 * SEC, h2)};
  assert_int_equal(ld_sync_payload_add_item_set(&p, &hi, items, 2, false), 0);
  assert_encodes_to(&p, "010e2f77616b752f322f72732f312f30008080a8b1e39fe7cb1780c0e285e3680202"
                        "80e4bf81f69fe7cb17"
                        "7692c3ad3540bb803c020b3aee66cd8887123234ea0c6e7143c0add73ff431ed"
                        "80a8d6b907"
                        "3fc4ccfe745870e2c0d99f71f30ff0656c8dedd41cc1d7d3d376b0dbe685e2f3"
                        "00");
  /* and back */
  ld_sync_payload_t q;
  ld_sync_payload_init(&q);
  round_trip(&p, &q);
  assert_same_ranges(&p, &q);
  assert_int_equal(q.n_pubsub_topics, 1);
  assert_string_equal(q.pubsub_topics[0].data, "/waku/2/rs/1/0");
  assert_int_equal(q.n_content_topics, 0);
  /* no ranges: the single byte 00, topics left out */
  ld_sync_payload_reset(&p, &lo);
  assert_int_equal(ld_sync_payload_add_topic(&p, false, "/waku/2/rs/1/0", 14), 0);
  assert_encodes_to(&p, "00");
  ld_sync_payload_clear(&p);
  ld_sync_payload_clear(&q);
}

/* ---- nwaku tests/waku_store_sync/test_codec.nim ---------------------------------------------- */

/* randomItemSet: count items, each 1 … 10 µs after the previous. */
static void add_random_item_set(ld_sync_payload_t *p, int count, int64_t *t, bool reconciled) {
  ld_sync_id_t items[16];
  for (int i = 0; i < count; i++) {
    *t += (int64_t)(rnd() % 10 + 1) * 1000;
    items[i].time = *t;
    random_hash(items[i].hash);
  }
  ld_sync_id_t upper = ld_sync_id_bound(items[count - 1].time);
  assert_int_equal(ld_sync_payload_add_item_set(p, &upper, items, (size_t)count, reconciled), 0);
}

static void nwaku_round_trips(void **state) {
  (void)state;
  const int64_t now = 1750000000000000000ll;
  ld_sync_payload_t p, q;
  ld_sync_payload_init(&p);
  ld_sync_payload_init(&q);
  ld_sync_id_t start = ld_sync_id_bound(now);

  /* "empty item set encoding roundtrip" */
  ld_sync_payload_reset(&p, &start);
  ld_sync_id_t up = ld_sync_id_bound(now + SEC);
  assert_int_equal(ld_sync_payload_add_item_set(&p, &up, NULL, 0, true), 0);
  round_trip(&p, &q);
  assert_same_ranges(&p, &q);

  /* "item set encoding roundtrip": 10 random items */
  ld_sync_payload_reset(&p, &start);
  int64_t t = now;
  add_random_item_set(&p, 10, &t, true);
  round_trip(&p, &q);
  assert_same_ranges(&p, &q);

  /* "payload item set encoding roundtrip": four ranges of five items, 10 ms apart */
  ld_sync_payload_reset(&p, &start);
  assert_int_equal(ld_sync_payload_add_topic(&p, false, "/waku/2/rs/0/0", 14), 0);
  for (int k = 0; k < 4; k++) {
    t = now + k * 11000000ll;
    add_random_item_set(&p, 5, &t, true);
  }
  round_trip(&p, &q);
  assert_same_ranges(&p, &q);

  /* "payload fingerprint encoding roundtrip": four 10 s ranges */
  ld_sync_payload_reset(&p, &start);
  assert_int_equal(ld_sync_payload_add_topic(&p, false, "/waku/2/rs/0/0", 14), 0);
  for (int k = 1; k <= 4; k++) {
    ld_sync_fp_t fp;
    uint8_t h[32];
    random_hash(h);
    ld_sync_fp_load(&fp, h);
    ld_sync_id_t u = ld_sync_id_bound(now + k * 10 * SEC);
    assert_int_equal(ld_sync_payload_add_fingerprint(&p, &u, &fp), 0);
  }
  round_trip(&p, &q);
  assert_same_ranges(&p, &q);

  /* "payload mixed encoding roundtrip": fingerprint, item set, 50 s later again */
  ld_sync_payload_reset(&p, &start);
  assert_int_equal(ld_sync_payload_add_topic(&p, false, "/waku/2/rs/0/0", 14), 0);
  t = now;
  for (int k = 0; k < 2; k++) {
    ld_sync_fp_t fp;
    uint8_t h[32];
    random_hash(h);
    ld_sync_fp_load(&fp, h);
    t += 10 * SEC;
    ld_sync_id_t u = ld_sync_id_bound(t);
    assert_int_equal(ld_sync_payload_add_fingerprint(&p, &u, &fp), 0);
    add_random_item_set(&p, 5, &t, false);
    t += 50 * SEC;
  }
  round_trip(&p, &q);
  assert_same_ranges(&p, &q);
  ld_sync_payload_clear(&p);
  ld_sync_payload_clear(&q);
}

/* ---- bounds sharing a timestamp: the hash prefix --------------------------------------------- */

static void equal_time_bounds_carry_a_hash_prefix(void **state) {
  (void)state;
  ld_sync_payload_t p, q;
  ld_sync_payload_init(&p);
  ld_sync_payload_init(&q);
  ld_sync_id_t lo = ld_sync_id_bound(5);
  ld_sync_payload_reset(&p, &lo);
  ld_sync_id_t u1 = ld_sync_id_bound(5); /* dt 0, hash 00 00 7a 01 …: 3 bytes travel */
  u1.hash[2] = 0x7a;
  u1.hash[3] = 0x01;
  ld_sync_id_t u2 = ld_sync_id_bound(5); /* dt 0, hash zero: all 32 travel */
  ld_sync_id_t u3 = ld_sync_id_bound(6);
  u3.hash[0] = 0xff; /* dt 1: the hash does not travel */
  assert_int_equal(ld_sync_payload_add_skip(&p, &u1), 0);
  assert_int_equal(ld_sync_payload_add_skip(&p, &u2), 0);
  assert_int_equal(ld_sync_payload_add_skip(&p, &u3), 0);
  assert_encodes_to(&p, "0000"
                        "05"
                        "00"
                        "0300007a"
                        "00"
                        "00"
                        "20"
                        "0000000000000000000000000000000000000000000000000000000000000000"
                        "00"
                        "01"
                        "00");
  round_trip(&p, &q);
  assert_int_equal(q.n_ranges, 3);
  uint8_t want1[32] = {0, 0, 0x7a}; /* what follows the prefix reads as zeros */
  assert_memory_equal(q.ranges[0].upper.hash, want1, 32);
  uint8_t zero[32] = {0};
  assert_memory_equal(q.ranges[1].upper.hash, zero, 32);
  assert_memory_equal(q.ranges[2].upper.hash, zero, 32);
  ld_sync_payload_clear(&p);
  ld_sync_payload_clear(&q);
}

/* ---- nwaku's decoder tolerances -------------------------------------------------------------- */

static int decode_hex(const char *hex, ld_sync_payload_t *q) {
  uint8_t buf[512];
  size_t n = unhex(hex, buf, sizeof buf);
  return ld_sync_payload_decode(buf, n, NULL, q, NULL, 0);
}

static void short_inputs_and_a_trailing_byte(void **state) {
  (void)state;
  ld_sync_payload_t q;
  ld_sync_payload_init(&q);
  assert_int_equal(ld_sync_payload_decode(NULL, 0, NULL, &q, NULL, 0), 0);
  assert_int_equal(q.n_ranges, 0);
  assert_int_equal(decode_hex("00", &q), 0);
  assert_int_equal(q.n_ranges, 0);
  assert_int_equal(decode_hex("07", &q), 0); /* any single byte: nwaku reads "no ranges" */
  assert_int_equal(q.n_ranges, 0);
  /* topics, T0 = 10, one Skip range of dt 5, then one stray byte nwaku never reads */
  assert_int_equal(decode_hex("00000a050099", &q), 0);
  assert_int_equal(q.n_ranges, 1);
  assert_int_equal(q.start.time, 10);
  assert_int_equal(q.ranges[0].upper.time, 15);
  /* header only: no ranges */
  assert_int_equal(decode_hex("00000a", &q), 0);
  assert_int_equal(q.n_ranges, 0);
  ld_sync_payload_clear(&q);
}

/* ---- rejections ------------------------------------------------------------------------------ */

static void rejects_bad_payloads(void **state) {
  (void)state;
  ld_sync_payload_t q;
  ld_sync_payload_init(&q);
  struct {
    const char *hex;
    int rc;
  } cases[] = {
      {"00000a0503", LD_ERR_MALFORMED},       /* range type 3 */
      {"00000a0502010000", LD_ERR_TRUNCATED}, /* item set: count 1, 2 bytes left */
      {"00000a050201"
       "05"
       "1111111111111111111111111111111111111111111111111111111111111111"
       "02",
       LD_ERR_MALFORMED},                     /* reconciled 2 */
      {"00000a0501112233", LD_ERR_TRUNCATED}, /* fingerprint of 3 bytes */
      {"00000a0021"
       "0000000000000000000000000000000000000000000000000000000000000000"
       "0000",
       LD_ERR_MALFORMED},                                 /* hash prefix of 33 bytes */
      {"00000a00050102", LD_ERR_TRUNCATED},               /* prefix of 5 bytes, 2 there */
      {"00000affffffffffffffffff0100", LD_ERR_MALFORMED}, /* dt wraps: runs backwards */
      {"00000a80808080808080808080800100", LD_ERR_VARINT_TOO_LONG},
      {"02", 0},                          /* a single byte: no ranges */
      {"0201", LD_ERR_TRUNCATED},         /* two pubsub topics announced, none there */
      {"01ffffffff0f", LD_ERR_TOO_LARGE}, /* a topic of 4 GiB */
      {"00000a050202"
       "06"
       "2222222222222222222222222222222222222222222222222222222222222222"
       "00"
       "1111111111111111111111111111111111111111111111111111111111111111"
       "00",
       LD_ERR_MALFORMED}, /* second item before the first (same time, smaller hash) */
      {"00000a050201"
       "03"
       "1111111111111111111111111111111111111111111111111111111111111111"
       "00",
       LD_ERR_MALFORMED},                         /* item at 3, range [10, 15] */
      {"00000a0502ffffffff0f", LD_ERR_TOO_LARGE}, /* four billion items announced */
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    int rc = decode_hex(cases[i].hex, &q);
    if (rc != cases[i].rc)
      print_message("case %zu: %s\n", i, ld_errname(rc));
    assert_int_equal(rc, cases[i].rc);
    if (rc != 0)
      assert_int_equal(q.n_ranges, 0);
  }
  /* caps: ranges, topics, the payload itself */
  ld_sync_limits_t lim;
  ld_sync_limits_default(&lim);
  lim.max_ranges = 2;
  uint8_t three[] = {0, 0, 10, 1, 0, 1, 0, 1, 0};
  assert_int_equal(ld_sync_payload_decode(three, sizeof three, &lim, &q, NULL, 0),
                   LD_ERR_TOO_LARGE);
  assert_int_equal(ld_sync_payload_decode(three, 7, &lim, &q, NULL, 0), 0);
  assert_int_equal(q.n_ranges, 2);
  lim.max_topics = 1;
  uint8_t topics[] = {2, 1, 'a', 1, 'b', 0, 10, 1, 0};
  char why[64];
  assert_int_equal(ld_sync_payload_decode(topics, sizeof topics, &lim, &q, why, sizeof why),
                   LD_ERR_TOO_LARGE);
  assert_string_equal(why, "pubsub topics");
  lim.max_payload = 8;
  assert_int_equal(ld_sync_payload_decode(three, sizeof three, &lim, &q, NULL, 0),
                   LD_ERR_TOO_LARGE);
  ld_sync_payload_clear(&q);
}

/* Random payloads of every kind survive a round trip, and encoded_len is exact. */
static void random_round_trips(void **state) {
  (void)state;
  ld_sync_payload_t p, q;
  ld_sync_payload_init(&p);
  ld_sync_payload_init(&q);
  for (int round = 0; round < 300; round++) {
    int64_t t = (int64_t)(rnd() >> 2);
    ld_sync_id_t start = ld_sync_id_bound(t);
    ld_sync_payload_reset(&p, &start);
    int topics = (int)(rnd() % 3);
    for (int k = 0; k < topics; k++)
      assert_int_equal(ld_sync_payload_add_topic(&p, k % 2 == 1, "/waku/2/rs/3/7", 14), 0);
    int n = (int)(rnd() % 20) + 1;
    for (int k = 0; k < n; k++) {
      unsigned kind = (unsigned)(rnd() % 3);
      if (kind == LD_SYNC_RANGE_ITEM_SET) {
        add_random_item_set(&p, (int)(rnd() % 16) + 1, &t, rnd() % 2 == 0);
        continue;
      }
      t += (int64_t)(rnd() % 1000000);
      ld_sync_id_t u = ld_sync_id_bound(t);
      if (kind == LD_SYNC_RANGE_SKIP) {
        assert_int_equal(ld_sync_payload_add_skip(&p, &u), 0);
      } else {
        ld_sync_fp_t fp;
        uint8_t h[32];
        random_hash(h);
        ld_sync_fp_load(&fp, h);
        assert_int_equal(ld_sync_payload_add_fingerprint(&p, &u, &fp), 0);
      }
    }
    round_trip(&p, &q);
    assert_same_ranges(&p, &q);
  }
  ld_sync_payload_clear(&p);
  ld_sync_payload_clear(&q);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(digest_vectors),
      cmocka_unit_test(nwaku_round_trips),
      cmocka_unit_test(equal_time_bounds_carry_a_hash_prefix),
      cmocka_unit_test(short_inputs_and_a_trailing_byte),
      cmocka_unit_test(rejects_bad_payloads),
      cmocka_unit_test(random_round_trips),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
