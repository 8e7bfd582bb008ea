#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "base/error.h"
#include "base/hashmap.h"

#define MANY 100000

static void siphash24_matches_reference_vector(void **state) {
  (void)state;
  /* SipHash paper, Appendix A: key 00..0f, message 00..0e */
  uint8_t key[16], msg[15];
  for (int i = 0; i < 16; i++)
    key[i] = (uint8_t)i;
  for (int i = 0; i < 15; i++)
    msg[i] = (uint8_t)i;
  assert_true(ld_siphash24(key, msg, 15) == 0xa129ca6149be45e5ULL);
  /* reference vectors.h: the empty message and the 8-byte message 00..07 */
  assert_true(ld_siphash24(key, msg, 0) == 0x726fdb47dd0e0e31ULL);
  assert_true(ld_siphash24(key, msg, 8) == 0x93f5f5799a932462ULL);
}

static void keyed_hash_is_stable_and_key_dependent(void **state) {
  (void)state;
  uint8_t k1[16] = {0}, k2[16] = {1};
  assert_true(ld_siphash13(k1, "abc", 3) != ld_siphash13(k2, "abc", 3));
  assert_true(ld_siphash13(k1, "abc", 3) != ld_siphash24(k1, "abc", 3));
  assert_true(ld_hash_bytes("peer", 4) == ld_hash_bytes("peer", 4));
  assert_true(ld_hash_bytes("peer", 4) != ld_hash_bytes("peer", 3));
}

static void put_get_replace_remove(void **state) {
  (void)state;
  ld_hashmap_t *m = ld_hashmap_new(0);
  assert_non_null(m);
  int a = 1, b = 2;
  void *old = &b;
  assert_int_equal(ld_hashmap_put(m, "alpha", 5, &a, &old), 0);
  assert_null(old);
  assert_ptr_equal(ld_hashmap_get(m, "alpha", 5), &a);
  assert_null(ld_hashmap_get(m, "alph", 4));
  assert_null(ld_hashmap_get(m, "alphab", 6));
  assert_int_equal(ld_hashmap_put(m, "alpha", 5, &b, &old), 0);
  assert_ptr_equal(old, &a);
  assert_int_equal(ld_hashmap_size(m), 1);
  assert_ptr_equal(ld_hashmap_get(m, "alpha", 5), &b);
  assert_ptr_equal(ld_hashmap_remove(m, "alpha", 5), &b);
  assert_null(ld_hashmap_remove(m, "alpha", 5));
  assert_int_equal(ld_hashmap_size(m), 0);
  ld_hashmap_free(m, NULL);
}

static void keys_are_copied_and_binary(void **state) {
  (void)state;
  ld_hashmap_t *m = ld_hashmap_new(4);
  char key[4] = {'a', '\0', 'b', '\0'};
  int v = 7;
  assert_int_equal(ld_hashmap_put(m, key, 4, &v, NULL), 0);
  key[0] = 'z';
  assert_null(ld_hashmap_get(m, key, 4));
  assert_ptr_equal(ld_hashmap_get(m, "a\0b\0", 4), &v);
  assert_null(ld_hashmap_get(m, "a", 1));
  /* the empty key and a stored NULL value */
  assert_int_equal(ld_hashmap_put(m, NULL, 0, NULL, NULL), 0);
  assert_true(ld_hashmap_contains(m, "", 0));
  assert_null(ld_hashmap_get(m, "", 0));
  assert_false(ld_hashmap_contains(m, "q", 1));
  assert_int_equal(ld_hashmap_size(m), 2);
  ld_hashmap_free(m, NULL);
}

static void many_keys(void **state) {
  (void)state;
  ld_hashmap_t *m = ld_hashmap_new(0);
  char key[32];
  for (uintptr_t i = 0; i < MANY; i++) {
    int n = snprintf(key, sizeof key, "key-%lu", (unsigned long)i);
    assert_int_equal(ld_hashmap_put(m, key, (size_t)n, (void *)(i + 1), NULL), 0);
  }
  assert_int_equal(ld_hashmap_size(m), MANY);
  for (uintptr_t i = 0; i < MANY; i++) {
    int n = snprintf(key, sizeof key, "key-%lu", (unsigned long)i);
    assert_ptr_equal(ld_hashmap_get(m, key, (size_t)n), (void *)(i + 1));
  }
  for (uintptr_t i = 0; i < MANY; i += 2) {
    int n = snprintf(key, sizeof key, "key-%lu", (unsigned long)i);
    assert_ptr_equal(ld_hashmap_remove(m, key, (size_t)n), (void *)(i + 1));
  }
  assert_int_equal(ld_hashmap_size(m), MANY / 2);
  for (uintptr_t i = 0; i < MANY; i++) {
    int n = snprintf(key, sizeof key, "key-%lu", (unsigned long)i);
    void *want = (i % 2 == 0) ? NULL : (void *)(i + 1);
    assert_ptr_equal(ld_hashmap_get(m, key, (size_t)n), want);
  }
  ld_hashmap_free(m, NULL);
}

static void iteration_visits_every_entry_once(void **state) {
  (void)state;
  ld_hashmap_t *m = ld_hashmap_new(16);
  enum { N = 5000 };
  static uint8_t seen[N];
  memset(seen, 0, sizeof seen);
  for (uint64_t i = 0; i < N; i++)
    assert_int_equal(ld_hashmap_put_u64(m, i * 7919, (void *)(uintptr_t)(i + 1), NULL), 0);
  ld_hashmap_iter_t it = {0};
  const void *key;
  size_t klen;
  void *value;
  size_t count = 0;
  while (ld_hashmap_next(m, &it, &key, &klen, &value)) {
    uint64_t k;
    assert_int_equal(klen, sizeof k);
    memcpy(&k, key, sizeof k);
    uintptr_t idx = (uintptr_t)value - 1;
    assert_true(idx < N);
    assert_true(k == idx * 7919);
    seen[idx]++;
    count++;
  }
  assert_int_equal(count, N);
  for (size_t i = 0; i < N; i++)
    assert_int_equal(seen[i], 1);
  assert_false(ld_hashmap_next(m, &it, NULL, NULL, NULL));
  ld_hashmap_free(m, NULL);
}

static void removing_current_entry_while_iterating(void **state) {
  (void)state;
  ld_hashmap_t *m = ld_hashmap_new(0);
  enum { N = 3000 };
  for (uint64_t i = 0; i < N; i++)
    assert_int_equal(ld_hashmap_put_u64(m, i, (void *)(uintptr_t)(i + 1), NULL), 0);
  ld_hashmap_iter_t it;
  ld_hashmap_iter_init(&it);
  const void *key;
  size_t klen, visited = 0;
  void *value;
  while (ld_hashmap_next(m, &it, &key, &klen, &value)) {
    uint64_t k;
    memcpy(&k, key, sizeof k);
    visited++;
    if (k % 3 != 0)
      assert_ptr_equal(ld_hashmap_remove_u64(m, k), value);
  }
  assert_int_equal(visited, N);
  assert_int_equal(ld_hashmap_size(m), (N + 2) / 3);
  for (uint64_t i = 0; i < N; i++)
    assert_ptr_equal(ld_hashmap_get_u64(m, i), i % 3 == 0 ? (void *)(uintptr_t)(i + 1) : NULL);
  ld_hashmap_free(m, NULL);
}

static void u64_conveniences(void **state) {
  (void)state;
  ld_hashmap_t *m = ld_hashmap_new(0);
  int a, b;
  void *old;
  assert_int_equal(ld_hashmap_put_u64(m, UINT64_MAX, &a, &old), 0);
  assert_null(old);
  assert_int_equal(ld_hashmap_put_u64(m, 0, &b, NULL), 0);
  assert_ptr_equal(ld_hashmap_get_u64(m, UINT64_MAX), &a);
  assert_ptr_equal(ld_hashmap_get_u64(m, 0), &b);
  assert_null(ld_hashmap_get_u64(m, 1));
  assert_int_equal(ld_hashmap_put_u64(m, 0, &a, &old), 0);
  assert_ptr_equal(old, &b);
  assert_ptr_equal(ld_hashmap_remove_u64(m, 0), &a);
  assert_null(ld_hashmap_remove_u64(m, 0));
  assert_int_equal(ld_hashmap_size(m), 1);
  ld_hashmap_free(m, NULL);
}

static int freed;
static void count_free(void *p) {
  freed++;
  free(p);
}

static void free_and_clear_release_values(void **state) {
  (void)state;
  ld_hashmap_t *m = ld_hashmap_new(0);
  for (uint64_t i = 0; i < 100; i++)
    assert_int_equal(ld_hashmap_put_u64(m, i, malloc(8), NULL), 0);
  freed = 0;
  ld_hashmap_clear(m, count_free);
  assert_int_equal(freed, 100);
  assert_int_equal(ld_hashmap_size(m), 0);
  assert_null(ld_hashmap_get_u64(m, 5));
  for (uint64_t i = 0; i < 10; i++)
    assert_int_equal(ld_hashmap_put_u64(m, i, malloc(8), NULL), 0);
  freed = 0;
  ld_hashmap_free(m, count_free);
  assert_int_equal(freed, 10);
  ld_hashmap_free(NULL, count_free);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(siphash24_matches_reference_vector),
      cmocka_unit_test(keyed_hash_is_stable_and_key_dependent),
      cmocka_unit_test(put_get_replace_remove),
      cmocka_unit_test(keys_are_copied_and_binary),
      cmocka_unit_test(many_keys),
      cmocka_unit_test(iteration_visits_every_entry_once),
      cmocka_unit_test(removing_current_entry_while_iterating),
      cmocka_unit_test(u64_conveniences),
      cmocka_unit_test(free_and_clear_release_values),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
