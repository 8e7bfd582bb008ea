/* The MSMs against each other and against GMP: the psi split of G2 scalars (k = k1 + 6x^2 k2)
 * and psi(Q) = [6x^2] Q, G2's MSM over psi against the one without it, and bucket sums over
 * windows larger than the segment they are summed in (a fixed-base table over 1,500 points, one
 * bucket of 9,000 entries) against the plain MSM and [k] P. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "zk/curve.h"
#include "zk/msm.h"
#include "zktest.h"

/* The psi split against GMP: k = k1 + 6x^2 k2 (mod r) with both halves below 2^127, for random
 * scalars and the edges (0, 1, r - 1, 6x^2, 6x^2 - 1, -6x^2, 2^253); psi(Q) is [6x^2] Q; and the
 * G2 MSM over psi equals the one without it for a thousand random points and scalars, edges
 * included. */
static void psi_split_and_msm(void **state) {
  (void)state;
  static const char *LAMBDA = "147946756881789318990833708069417712966"; /* 6x^2 = p - r */
  static const char *R =
      "21888242871839275222246405745257275088548364400416034343698204186575808495617";
  mpz_t r, lambda, want, got, h1, h2, bound;
  mpz_inits(r, lambda, want, got, h1, h2, bound, NULL);
  mpz_set_str(r, R, 10);
  mpz_set_str(lambda, LAMBDA, 10);
  mpz_ui_pow_ui(bound, 2, 127);
  uint64_t seed = 1234;
  ld_fr_t lam, one;
  assert_int_equal(ld_fr_from_decimal(&lam, LAMBDA, strlen(LAMBDA)), 0);
  ld_fr_set_one(&one);
  for (int i = 0; i < 20000; i++) {
    ld_fr_t k;
    switch (i) {
    case 0:
      ld_fr_set_zero(&k);
      break;
    case 1:
      k = one;
      break;
    case 2:
      ld_fr_neg(&k, &one);
      break;
    case 3:
      k = lam;
      break;
    case 4:
      ld_fr_sub(&k, &lam, &one);
      break;
    case 5:
      ld_fr_neg(&k, &lam);
      break;
    case 6: {
      uint8_t b[32] = {0};
      b[31] = 0x20; /* 2^253 */
      assert_int_equal(ld_fr_from_bytes(&k, b), 0);
      break;
    }
    default:
      zktest_fr(&seed, &k);
    }
    uint64_t k1[4], k2[4];
    ld_fr_psi_split(&k, k1, k2);
    mpz_import(h1, 4, -1, 8, 0, 0, k1);
    mpz_import(h2, 4, -1, 8, 0, 0, k2);
    assert_true(mpz_cmp(h1, bound) < 0 && mpz_cmp(h2, bound) < 0);
    assert_true(mpz_cmp(h1, lambda) < 0); /* k1 is the remainder */
    mpz_mul(got, h2, lambda);
    mpz_add(got, got, h1);
    zktest_mpz_from_fr(want, &k);
    assert_int_equal(mpz_cmp(got, want), 0); /* exact: k = k1 + 6x^2 k2 as integers */
  }
  mpz_clears(r, lambda, want, got, h1, h2, bound, NULL);

  ld_g2_affine_t gen;
  ld_g2_t g;
  ld_g2_generator(&gen);
  ld_g2_from_affine(&g, &gen);
  for (int i = 0; i < 4; i++) {
    ld_fr_t m;
    zktest_fr(&seed, &m);
    ld_g2_t pj, lq;
    ld_g2_affine_t pa, psi, want_a;
    ld_g2_mul_fr_vartime(&pj, &g, &m);
    ld_g2_to_affine(&pa, &pj);
    ld_g2_psi(&psi, &pa);
    ld_g2_mul_fr_vartime(&lq, &pj, &lam);
    ld_g2_to_affine(&want_a, &lq);
    assert_memory_equal(&psi.x, &want_a.x, sizeof psi.x);
    assert_memory_equal(&psi.y, &want_a.y, sizeof psi.y);
  }

  enum { N = 1000 };
  ld_g2_affine_t *pts = calloc(N, sizeof *pts);
  ld_fr_t *k = calloc(N, sizeof *k);
  assert_non_null(pts);
  assert_non_null(k);
  ld_g2_t acc, step;
  ld_g2_mul_fr_vartime(&acc, &g, &lam);
  for (size_t i = 0; i < N; i++) { /* points from a cheap chain: Q_i = Q_{i-1} + step */
    if (i % 97 == 0) {
      ld_fr_t m;
      zktest_fr(&seed, &m);
      ld_g2_mul_fr_vartime(&step, &g, &m);
    }
    ld_g2_add(&acc, &acc, &step);
    ld_g2_to_affine(&pts[i], &acc);
    switch (i % 11) {
    case 0:
      ld_fr_set_zero(&k[i]);
      break;
    case 1:
      k[i] = one;
      break;
    case 2:
      ld_fr_neg(&k[i], &one);
      break;
    case 3:
      k[i] = lam;
      break;
    default:
      zktest_fr(&seed, &k[i]);
    }
  }
  ld_g2_t a, b;
  assert_int_equal(ld_g2_msm_pippenger(&a, pts, k, N), 0);
  assert_int_equal(ld_g2_msm_pippenger_nopsi(&b, pts, k, N), 0);
  assert_true(ld_g2_equal(&a, &b));
  free(pts);
  free(k);
}

/* Windows larger than the segment the bucket sums run over at a time (8,192 entries): a
 * fixed-base table over 1,500 points (some 33,000 (point, window) entries) against the plain
 * MSM, and one bucket holding more entries than a segment (9,000 times the same point with
 * scalar 1, then with r - 1: all of its sums are doublings) against [k] P. */
static void msm_segments(void **state) {
  (void)state;
  uint64_t seed = 4321;
  enum { N = 1500, SAME = 9000 };
  ld_g1_affine_t *pts = calloc(SAME, sizeof *pts), gen;
  ld_fr_t *k = calloc(SAME, sizeof *k), one;
  assert_non_null(pts);
  assert_non_null(k);
  ld_fr_set_one(&one);
  ld_g1_t g, acc, step;
  ld_g1_generator(&gen);
  ld_g1_from_affine(&g, &gen);
  ld_g1_set_infinity(&acc);
  for (size_t i = 0; i < N; i++) {
    if (i % 97 == 0) {
      ld_fr_t m;
      zktest_fr(&seed, &m);
      ld_g1_mul_fr_vartime(&step, &g, &m);
    }
    ld_g1_add(&acc, &acc, &step);
    ld_g1_to_affine(&pts[i], &acc);
    switch (i % 13) {
    case 0:
      ld_fr_set_zero(&k[i]);
      break;
    case 1:
      k[i] = one;
      break;
    case 2:
      ld_fr_neg(&k[i], &one);
      break;
    case 3:
      pts[i] = pts[i - 1];
      zktest_fr(&seed, &k[i]);
      break;
    default:
      zktest_fr(&seed, &k[i]);
    }
  }
  ld_msm_table_t *t;
  ld_g1_t a, b, want;
  assert_int_equal(ld_g1_msm_table_new(&t, pts, N), 0);
  assert_true(ld_msm_table_bytes(t) / sizeof(ld_g1_affine_t) > 4 * 8192);
  assert_int_equal(ld_g1_msm_table(&a, t, k), 0);
  assert_int_equal(ld_g1_msm_pippenger_noglv(&b, pts, k, N), 0);
  assert_true(ld_g1_equal(&a, &b));
  assert_false(ld_g1_is_infinity(&a));
  ld_msm_table_free(t);

  ld_fr_t count;
  ld_fr_from_u64(&count, SAME);
  for (int neg = 0; neg < 2; neg++) {
    for (size_t i = 0; i < SAME; i++) {
      pts[i] = pts[5];
      k[i] = one;
      if (neg) {
        ld_fr_neg(&k[i], &one);
      }
    }
    ld_g1_t p5;
    ld_g1_from_affine(&p5, &pts[5]);
    ld_fr_t total = count;
    if (neg) {
      ld_fr_neg(&total, &count);
    }
    ld_g1_mul_fr_vartime(&want, &p5, &total);
    assert_int_equal(ld_g1_msm_pippenger(&a, pts, k, SAME), 0);
    assert_int_equal(ld_g1_msm_pippenger_noglv(&b, pts, k, SAME), 0);
    assert_true(ld_g1_equal(&a, &want));
    assert_true(ld_g1_equal(&b, &want));
  }
  free(pts);
  free(k);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(psi_split_and_msm),
      cmocka_unit_test(msm_segments),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
