#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "crypto/crypto.h"

static void random_bytes_fill_and_differ(void **state) {
  (void)state;
  uint8_t a[64], b[64], zero[64] = {0};
  memset(a, 0, sizeof a);
  memset(b, 0, sizeof b);
  ld_random_bytes(a, sizeof a);
  ld_random_bytes(b, sizeof b);
  /* Each check fails by chance with probability 2^-512. */
  assert_memory_not_equal(a, zero, sizeof a);
  assert_memory_not_equal(a, b, sizeof a);
  ld_random_bytes(NULL, 0);
}

static void random_bytes_reach_the_end_of_the_buffer(void **state) {
  (void)state;
  uint8_t buf[4096];
  memset(buf, 0, sizeof buf);
  ld_random_bytes(buf, sizeof buf);
  uint8_t zero[64] = {0};
  assert_memory_not_equal(buf + sizeof buf - 64, zero, 64);
}

static void uniform_stays_in_range_and_covers_it(void **state) {
  (void)state;
  int seen[10] = {0};
  for (int i = 0; i < 10000; i++) {
    uint32_t v = ld_random_uniform(10);
    assert_true(v < 10);
    seen[v]++;
  }
  /* Each bucket is empty by chance with probability 0.9^10000. */
  for (int i = 0; i < 10; i++) {
    assert_true(seen[i] > 0);
  }
  for (int i = 0; i < 100; i++) {
    assert_int_equal(ld_random_uniform(1), 0);
  }
  uint32_t big = ld_random_uniform(UINT32_MAX);
  assert_true(big < UINT32_MAX);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(random_bytes_fill_and_differ),
      cmocka_unit_test(random_bytes_reach_the_end_of_the_buffer),
      cmocka_unit_test(uniform_stays_in_range_and_covers_it),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
