/* The NTTs over Fr with their butterflies and pointwise products in eight IFMA lanes against the
 * same transforms with the scalar path forced (ld_fp8_force_scalar): fft, ifft, coset fft and
 * coset ifft of random vectors and of edge values (0, 1, r - 1) for every size from 2 to 2^13
 * (the stages with fewer than eight butterflies per block stay scalar), and the round trips
 * back to the input. Skipped, saying so, on a CPU without IFMA. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "zk/fft.h"
#include "zk/fp_ifma.h"
#include "zktest.h"

typedef void transform_fn(const ld_fr_domain_t *d, ld_fr_t *a);

static void fill(uint64_t *seed, ld_fr_t *a, size_t n) {
  ld_fr_t one;
  ld_fr_set_one(&one);
  for (size_t i = 0; i < n; i++) {
    switch (zktest_next(seed) % 8) {
    case 0:
      ld_fr_set_zero(&a[i]);
      break;
    case 1:
      a[i] = one;
      break;
    case 2:
      ld_fr_neg(&a[i], &one);
      break;
    default:
      zktest_fr(seed, &a[i]);
    }
  }
}

static void transforms_match_scalar(void **state) {
  (void)state;
  if (!ld_fp8_available()) {
    print_message("no AVX-512 IFMA on this CPU: the eight-lane NTT test is skipped\n");
    skip();
  }
  transform_fn *fns[4] = {ld_fr_fft, ld_fr_ifft, ld_fr_coset_fft, ld_fr_coset_ifft};
  transform_fn *inverse[4] = {ld_fr_ifft, ld_fr_fft, ld_fr_coset_ifft, ld_fr_coset_fft};
  uint64_t seed = 901;
  for (unsigned log2 = 1; log2 <= 13; log2++) {
    size_t n = (size_t)1 << log2;
    ld_fr_domain_t *d;
    assert_int_equal(ld_fr_domain_new(&d, log2), 0);
    ld_fr_t *in = malloc(n * sizeof *in), *wide = malloc(n * sizeof *wide),
            *scalar = malloc(n * sizeof *scalar);
    assert_non_null(in);
    assert_non_null(wide);
    assert_non_null(scalar);
    for (int f = 0; f < 4; f++) {
      fill(&seed, in, n);
      memcpy(wide, in, n * sizeof *in);
      memcpy(scalar, in, n * sizeof *in);
      fns[f](d, wide);
      ld_fp8_force_scalar(1);
      fns[f](d, scalar);
      ld_fp8_force_scalar(0);
      assert_memory_equal(wide, scalar, n * sizeof *wide);
      if (log2 >= 3) {
        assert_memory_not_equal(wide, in, n * sizeof *wide);
      }
      inverse[f](d, wide); /* and back: each pair of transforms is the identity */
      assert_memory_equal(wide, in, n * sizeof *wide);
    }
    free(in);
    free(wide);
    free(scalar);
    ld_fr_domain_free(d);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(transforms_match_scalar),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
