#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "crypto/crypto.h"

#define THREADS 8

static void *init_thread(void *arg) {
  int *rc = arg;
  *rc = ld_crypto_init();
  return NULL;
}

static void concurrent_init_succeeds_everywhere(void **state) {
  (void)state;
  pthread_t threads[THREADS];
  int rcs[THREADS];
  for (int i = 0; i < THREADS; i++) {
    rcs[i] = -1;
    assert_int_equal(pthread_create(&threads[i], NULL, init_thread, &rcs[i]), 0);
  }
  for (int i = 0; i < THREADS; i++) {
    assert_int_equal(pthread_join(threads[i], NULL), 0);
    assert_int_equal(rcs[i], 0);
  }
}

static void init_is_idempotent(void **state) {
  (void)state;
  assert_int_equal(ld_crypto_init(), 0);
  assert_int_equal(ld_crypto_init(), 0);
  uint8_t secret[LD_SECP256K1_SECRET_LEN];
  ld_secp256k1_generate(secret);
  assert_int_equal(ld_secp256k1_secret_check(secret), 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(concurrent_init_succeeds_everywhere),
      cmocka_unit_test(init_is_idempotent),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
