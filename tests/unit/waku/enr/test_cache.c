/* The ENR cache: keyed by peer ID, sequence numbers, the bound with least-recently-put
 * eviction, and random sampling through a filter. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "base/error.h"
#include "p2p/key.h"
#include "waku/enr/cache.h"
#include "waku/enr/enr.h"

/* A record of key `seed` with sequence number `seq`, in cluster `cluster`. */
static void make(ld_enr_t *enr, uint8_t seed, uint64_t seq, uint16_t cluster) {
  uint8_t secret[32];
  memset(secret, seed, sizeof secret);
  ld_privkey_t key;
  assert_int_equal(ld_privkey_from_secp256k1(&key, secret), 0);
  ld_enr_builder_t b;
  ld_enr_builder_init(&b, seq);
  const uint8_t ip[4] = {10, 0, 0, seed};
  const uint16_t shard = 0;
  assert_int_equal(ld_enr_builder_set_ip4(&b, ip), 0);
  assert_int_equal(ld_enr_builder_set_uint(&b, "tcp", 60000), 0);
  assert_int_equal(ld_enr_builder_set_shards(&b, cluster, &shard, 1), 0);
  assert_int_equal(ld_enr_builder_sign(&b, &key, enr), 0);
}

static ld_peerid_t peer_of(const ld_enr_t *enr) {
  ld_peerid_t id;
  assert_int_equal(ld_enr_peer_id(enr, &id), 0);
  return id;
}

static void put_get_and_sequence_numbers(void **state) {
  (void)state;
  ld_enr_cache_t *c = ld_enr_cache_new(0);
  assert_non_null(c);
  ld_enr_t a1, a2, b1;
  make(&a1, 1, 1, 1);
  make(&a2, 1, 2, 1);
  make(&b1, 2, 1, 1);
  ld_peerid_t pa = peer_of(&a1), pb = peer_of(&b1);
  assert_null(ld_enr_cache_get(c, &pa));
  assert_int_equal(ld_enr_cache_put(c, &a2), 0);
  assert_int_equal(ld_enr_cache_put(c, &b1), 0);
  assert_int_equal(ld_enr_cache_size(c), 2);
  /* An older record does not replace a newer one; an equal one does. */
  assert_int_equal(ld_enr_cache_put(c, &a1), LD_ERR_EXISTS);
  const ld_enr_t *got = ld_enr_cache_get(c, &pa);
  assert_non_null(got);
  assert_true(got->seq == 2);
  assert_int_equal(ld_enr_cache_put(c, &a2), 0);
  assert_int_equal(ld_enr_cache_size(c), 2);
  got = ld_enr_cache_get(c, &pb);
  assert_non_null(got);
  assert_memory_equal(got->raw, b1.raw, b1.len);
  assert_int_equal(ld_enr_cache_remove(c, &pb), 0);
  assert_int_equal(ld_enr_cache_remove(c, &pb), LD_ERR_NOT_FOUND);
  assert_null(ld_enr_cache_get(c, &pb));
  assert_int_equal(ld_enr_cache_size(c), 1);
  ld_enr_cache_free(c);
  ld_enr_cache_free(NULL);
}

static void bound_evicts_least_recently_put(void **state) {
  (void)state;
  ld_enr_cache_t *c = ld_enr_cache_new(3);
  ld_enr_t e[5];
  ld_peerid_t p[5];
  for (uint8_t i = 0; i < 5; i++) {
    make(&e[i], (uint8_t)(i + 10), 1, 1);
    p[i] = peer_of(&e[i]);
  }
  for (int i = 0; i < 3; i++)
    assert_int_equal(ld_enr_cache_put(c, &e[i]), 0);
  /* Refresh e0, so e1 is now the oldest. */
  assert_int_equal(ld_enr_cache_put(c, &e[0]), 0);
  assert_int_equal(ld_enr_cache_put(c, &e[3]), 0);
  assert_int_equal(ld_enr_cache_size(c), 3);
  assert_null(ld_enr_cache_get(c, &p[1]));
  assert_non_null(ld_enr_cache_get(c, &p[0]));
  assert_non_null(ld_enr_cache_get(c, &p[2]));
  assert_int_equal(ld_enr_cache_put(c, &e[4]), 0);
  assert_null(ld_enr_cache_get(c, &p[2]));
  assert_non_null(ld_enr_cache_get(c, &p[0]));
  assert_non_null(ld_enr_cache_get(c, &p[3]));
  assert_non_null(ld_enr_cache_get(c, &p[4]));
  ld_enr_cache_free(c);
}

static bool cluster_one(const ld_enr_t *enr, const ld_peerid_t *peer, void *ud) {
  (void)peer;
  (void)ud;
  return !ld_enr_cluster_mismatch(enr, 1);
}

static bool count_two(const ld_enr_t *enr, const ld_peerid_t *peer, void *ud) {
  (void)enr;
  (void)peer;
  return ++*(int *)ud < 2;
}

static void sampling(void **state) {
  (void)state;
  ld_enr_cache_t *c = ld_enr_cache_new(100);
  ld_enr_t e[8];
  for (uint8_t i = 0; i < 8; i++) {
    make(&e[i], (uint8_t)(i + 30), 1, i < 5 ? 1 : 2); /* five in cluster 1, three in 2 */
    assert_int_equal(ld_enr_cache_put(c, &e[i]), 0);
  }
  const ld_enr_t *out[10];
  assert_int_equal(ld_enr_cache_sample(c, NULL, NULL, out, 10), 8);
  assert_int_equal(ld_enr_cache_sample(c, cluster_one, NULL, out, 10), 5);
  assert_int_equal(ld_enr_cache_sample(c, cluster_one, NULL, out, 0), 0);
  int seen[5] = {0};
  for (int round = 0; round < 300; round++) {
    size_t n = ld_enr_cache_sample(c, cluster_one, NULL, out, 2);
    assert_int_equal(n, 2);
    assert_ptr_not_equal(out[0], out[1]);
    for (size_t k = 0; k < n; k++) {
      int hit = -1;
      for (int i = 0; i < 5; i++)
        if (memcmp(out[k]->raw, e[i].raw, e[i].len) == 0)
          hit = i;
      assert_true(hit >= 0); /* never a record of cluster 2 */
      seen[hit]++;
    }
  }
  for (int i = 0; i < 5; i++)
    assert_true(seen[i] > 0);
  int visits = 0;
  ld_enr_cache_foreach(c, count_two, &visits);
  assert_int_equal(visits, 2);
  ld_enr_cache_free(c);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(put_get_and_sequence_numbers),
      cmocka_unit_test(bound_evicts_least_recently_put),
      cmocka_unit_test(sampling),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
