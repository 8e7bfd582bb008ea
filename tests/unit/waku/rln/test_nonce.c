/* RLN-relay's nonce manager: ids 0 .. limit-1 per epoch, requests past the limit counted as nwaku
 * counts them, and never the same (epoch, id) twice, also when messages alternate between two
 * epochs (timestamps straddling an epoch change) or come back to a forgotten epoch. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "base/error.h"
#include "waku/rln/publish.h"

static uint64_t next_ok(ld_rln_nonce_t *n, uint64_t epoch) {
  uint64_t id = UINT64_MAX;
  assert_int_equal(ld_rln_nonce_next(n, epoch, &id), 0);
  return id;
}

static void ids_per_epoch_up_to_the_limit(void **state) {
  (void)state;
  ld_rln_nonce_t n;
  ld_rln_nonce_init(&n, 3);
  assert_int_equal(next_ok(&n, 100), 0);
  assert_int_equal(next_ok(&n, 100), 1);
  assert_int_equal(next_ok(&n, 100), 2);
  uint64_t id = 0;
  assert_int_equal(ld_rln_nonce_next(&n, 100, &id), LD_ERR_LIMIT);
  assert_int_equal(id, 3); /* nwaku's "requested nonce: 3 & nonceLimit: 3" */
  assert_int_equal(ld_rln_nonce_next(&n, 100, &id), LD_ERR_LIMIT);
  assert_int_equal(id, 4);
  /* the next epoch starts at 0 */
  assert_int_equal(next_ok(&n, 101), 0);
}

/* Timestamps on both sides of an epoch change: each epoch keeps its own count (a reset to 0 on
 * every change would hand out (100, 0) twice). */
static void alternating_epochs_never_reuse_an_id(void **state) {
  (void)state;
  ld_rln_nonce_t n;
  ld_rln_nonce_init(&n, 10);
  assert_int_equal(next_ok(&n, 100), 0);
  assert_int_equal(next_ok(&n, 101), 0);
  assert_int_equal(next_ok(&n, 100), 1);
  assert_int_equal(next_ok(&n, 101), 1);
  assert_int_equal(next_ok(&n, 100), 2);
}

/* Past the window the oldest epoch is forgotten and refused from then on, as is anything before
 * it; newer epochs keep going. */
static void forgotten_epochs_are_refused(void **state) {
  (void)state;
  ld_rln_nonce_t n;
  ld_rln_nonce_init(&n, 10);
  for (uint64_t e = 10; e < 10 + LD_RLN_NONCE_EPOCHS; e++)
    assert_int_equal(next_ok(&n, e), 0);
  assert_int_equal(next_ok(&n, 10), 1); /* still in the window */
  uint64_t id = 0;
  assert_int_equal(ld_rln_nonce_next(&n, 9, &id), LD_ERR_INVALID_ARG); /* older than all */
  assert_int_equal(next_ok(&n, 10 + LD_RLN_NONCE_EPOCHS), 0);          /* 10 leaves */
  assert_int_equal(ld_rln_nonce_next(&n, 10, &id), LD_ERR_INVALID_ARG);
  assert_int_equal(ld_rln_nonce_next(&n, 5, &id), LD_ERR_INVALID_ARG);
  assert_int_equal(next_ok(&n, 11), 1);
  assert_int_equal(next_ok(&n, 100), 0); /* 11 leaves */
  assert_int_equal(ld_rln_nonce_next(&n, 11, &id), LD_ERR_INVALID_ARG);
  assert_int_equal(next_ok(&n, 12), 1);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(ids_per_epoch_up_to_the_limit),
      cmocka_unit_test(alternating_epochs_never_reuse_an_id),
      cmocka_unit_test(forgotten_epochs_are_refused),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
