/* The MSMs whose bucket sums run through the eight-lane batch additions (fp_ifma.h) against the
 * same MSMs with the scalar path forced (ld_fp8_force_scalar) and against the sum of [k_i] P_i
 * by double-and-add: G1 plain, over GLV and from a fixed-base table, G2 over psi, without it and
 * from a table. The points repeat (doublings inside a bucket), appear negated (sums that
 * cancel), lie at infinity or carry zero scalars, so that every round mixes general pairs with
 * the special ones the scalar code handles. The batch additions alone: every length from 1 to
 * 40 (lanes past the end), outputs over inputs, against ld_g1_add_affine / ld_g2_add_affine;
 * a batch holding a pair with equal x refused untouched.
 * Skipped, saying so, on a CPU without IFMA (the scalar path is then what every other test
 * runs). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "base/error.h"
#include "zk/curve.h"
#include "zk/fp_ifma.h"
#include "zk/msm.h"
#include "zktest.h"

#define REQUIRE_IFMA()                                                                             \
  do {                                                                                             \
    if (!ld_fp8_available()) {                                                                     \
      print_message("no AVX-512 IFMA on this CPU: the eight-lane MSM test is skipped\n");          \
      skip();                                                                                      \
    }                                                                                              \
  } while (0)

enum { N = 700 };

/* Point i (of n) and its scalar: [m] G for a random m, every 5th a repeat of the one before,
 * every 7th the negation of the one before, every 11th at infinity; scalars random, every 13th
 * zero, every 17th one, every 19th -1. */
static void make_g1(uint64_t *seed, ld_g1_affine_t *pts, ld_fr_t *k, size_t n) {
  ld_g1_affine_t gen;
  ld_g1_t g, p;
  ld_g1_generator(&gen);
  ld_g1_from_affine(&g, &gen);
  for (size_t i = 0; i < n; i++) {
    ld_fr_t m;
    zktest_fr(seed, &m);
    ld_g1_mul_fr_vartime(&p, &g, &m);
    ld_g1_to_affine(&pts[i], &p);
    if (i > 0 && i % 5 == 0) {
      pts[i] = pts[i - 1];
    } else if (i > 0 && i % 7 == 0) {
      pts[i] = pts[i - 1];
      ld_fp_neg(&pts[i].y, &pts[i].y);
    } else if (i % 11 == 0) {
      memset(&pts[i], 0, sizeof pts[i]);
      pts[i].infinity = 1;
    }
    zktest_fr(seed, &k[i]);
    if (i % 13 == 0) {
      ld_fr_set_zero(&k[i]);
    } else if (i % 17 == 0) {
      ld_fr_set_one(&k[i]);
    } else if (i % 19 == 0) {
      ld_fr_t one;
      ld_fr_set_one(&one);
      ld_fr_neg(&k[i], &one);
    }
  }
}

static void make_g2(uint64_t *seed, ld_g2_affine_t *pts, ld_fr_t *k, size_t n) {
  ld_g2_affine_t gen;
  ld_g2_t g, p;
  ld_g2_generator(&gen);
  ld_g2_from_affine(&g, &gen);
  for (size_t i = 0; i < n; i++) {
    ld_fr_t m;
    zktest_fr(seed, &m);
    ld_g2_mul_fr_vartime(&p, &g, &m);
    ld_g2_to_affine(&pts[i], &p);
    if (i > 0 && i % 5 == 0) {
      pts[i] = pts[i - 1];
    } else if (i > 0 && i % 7 == 0) {
      pts[i] = pts[i - 1];
      ld_fp2_neg(&pts[i].y, &pts[i].y);
    } else if (i % 11 == 0) {
      memset(&pts[i], 0, sizeof pts[i]);
      pts[i].infinity = 1;
    }
    zktest_fr(seed, &k[i]);
    if (i % 13 == 0) {
      ld_fr_set_zero(&k[i]);
    } else if (i % 17 == 0) {
      ld_fr_set_one(&k[i]);
    }
  }
}

static void g1_naive(ld_g1_t *r, const ld_g1_affine_t *pts, const ld_fr_t *k, size_t n) {
  ld_g1_set_infinity(r);
  for (size_t i = 0; i < n; i++) {
    if (!pts[i].infinity) {
      ld_g1_t p;
      ld_g1_from_affine(&p, &pts[i]);
      ld_g1_mul_fr_vartime(&p, &p, &k[i]);
      ld_g1_add(r, r, &p);
    }
  }
}

static void g2_naive(ld_g2_t *r, const ld_g2_affine_t *pts, const ld_fr_t *k, size_t n) {
  ld_g2_set_infinity(r);
  for (size_t i = 0; i < n; i++) {
    if (!pts[i].infinity) {
      ld_g2_t p;
      ld_g2_from_affine(&p, &pts[i]);
      ld_g2_mul_fr_vartime(&p, &p, &k[i]);
      ld_g2_add(r, r, &p);
    }
  }
}

/* The three G1 MSMs, each on the wide path and with the scalar path forced, against the naive
 * sum. */
static void g1_msms_wide_and_scalar(void **state) {
  (void)state;
  REQUIRE_IFMA();
  uint64_t seed = 801;
  ld_g1_affine_t *pts = calloc(N, sizeof *pts);
  ld_fr_t *k = calloc(N, sizeof *k);
  assert_non_null(pts);
  assert_non_null(k);
  make_g1(&seed, pts, k, N);
  ld_g1_t want, got;
  g1_naive(&want, pts, k, N);
  assert_false(ld_g1_is_infinity(&want));
  ld_msm_table_t *t;
  assert_int_equal(ld_g1_msm_table_new(&t, pts, N), 0);
  for (int scalar = 0; scalar < 2; scalar++) {
    ld_fp8_force_scalar(scalar);
    assert_int_equal(ld_fp8_available(), !scalar);
    assert_int_equal(ld_g1_msm_pippenger(&got, pts, k, N), 0);
    assert_true(ld_g1_equal(&got, &want));
    assert_int_equal(ld_g1_msm_pippenger_noglv(&got, pts, k, N), 0);
    assert_true(ld_g1_equal(&got, &want));
    assert_int_equal(ld_g1_msm_table(&got, t, k), 0);
    assert_true(ld_g1_equal(&got, &want));
  }
  ld_fp8_force_scalar(0);
  ld_msm_table_free(t);
  free(pts);
  free(k);
}

static void g2_msms_wide_and_scalar(void **state) {
  (void)state;
  REQUIRE_IFMA();
  uint64_t seed = 802;
  enum { N2 = 300 };
  ld_g2_affine_t *pts = calloc(N2, sizeof *pts);
  ld_fr_t *k = calloc(N2, sizeof *k);
  assert_non_null(pts);
  assert_non_null(k);
  make_g2(&seed, pts, k, N2);
  ld_g2_t want, got;
  g2_naive(&want, pts, k, N2);
  assert_false(ld_g2_is_infinity(&want));
  ld_msm_table_t *t;
  assert_int_equal(ld_g2_msm_table_new(&t, pts, N2), 0);
  for (int scalar = 0; scalar < 2; scalar++) {
    ld_fp8_force_scalar(scalar);
    assert_int_equal(ld_g2_msm_pippenger(&got, pts, k, N2), 0);
    assert_true(ld_g2_equal(&got, &want));
    assert_int_equal(ld_g2_msm_pippenger_nopsi(&got, pts, k, N2), 0);
    assert_true(ld_g2_equal(&got, &want));
    assert_int_equal(ld_g2_msm_table(&got, t, k), 0);
    assert_true(ld_g2_equal(&got, &want));
  }
  ld_fp8_force_scalar(0);
  ld_msm_table_free(t);
  free(pts);
  free(k);
}

enum { BATCH_MAX = 40 };

/* Up to BATCH_MAX pairs a[i] + b[i] in G1 and in G2, the sums written over x (a copy of a). */
typedef struct pair_batch {
  ld_g1_affine_t a1[BATCH_MAX], b1[BATCH_MAX], x1[BATCH_MAX], *r1[BATCH_MAX];
  const ld_g1_affine_t *pa1[BATCH_MAX], *pb1[BATCH_MAX];
  ld_g2_affine_t a2[BATCH_MAX], b2[BATCH_MAX], x2[BATCH_MAX], *r2[BATCH_MAX];
  const ld_g2_affine_t *pa2[BATCH_MAX], *pb2[BATCH_MAX];
} pair_batch_t;

/* Random pairs, every one general: neither point at infinity, distinct x. */
static void batch_make_general(pair_batch_t *t, uint64_t *seed) {
  ld_fr_t k[2 * BATCH_MAX];
  make_g1(seed, t->a1, k, BATCH_MAX);
  make_g1(seed, t->b1, k, BATCH_MAX);
  make_g2(seed, t->a2, k, BATCH_MAX);
  make_g2(seed, t->b2, k, BATCH_MAX);
  ld_g1_affine_t g1;
  ld_g2_affine_t g2;
  ld_g1_generator(&g1);
  ld_g2_generator(&g2);
  ld_g1_t d1;
  ld_g2_t d2;
  ld_g1_from_affine(&d1, &g1);
  ld_g1_dbl(&d1, &d1);
  ld_g2_from_affine(&d2, &g2);
  ld_g2_dbl(&d2, &d2);
  for (size_t i = 0; i < BATCH_MAX; i++) {
    if (t->b1[i].infinity) {
      ld_g1_to_affine(&t->b1[i], &d1);
    }
    if (t->b2[i].infinity) {
      ld_g2_to_affine(&t->b2[i], &d2);
    }
    if (t->a1[i].infinity || t->b1[i].infinity || ld_fp_equal(&t->a1[i].x, &t->b1[i].x)) {
      t->a1[i] = g1;
    }
    if (t->a2[i].infinity || t->b2[i].infinity || ld_fp2_equal(&t->a2[i].x, &t->b2[i].x)) {
      t->a2[i] = g2;
    }
    assert_false(t->b1[i].infinity || ld_fp_equal(&t->a1[i].x, &t->b1[i].x));
    assert_false(t->b2[i].infinity || ld_fp2_equal(&t->a2[i].x, &t->b2[i].x));
  }
}

/* x = a again, and the first n pairs aimed at it: r[i] = x[i] = x[i] + b[i]. */
static void batch_aim(pair_batch_t *t, size_t n) {
  memcpy(t->x1, t->a1, sizeof t->x1);
  memcpy(t->x2, t->a2, sizeof t->x2);
  for (size_t i = 0; i < n; i++) {
    t->r1[i] = &t->x1[i];
    t->pa1[i] = &t->x1[i];
    t->pb1[i] = &t->b1[i];
    t->r2[i] = &t->x2[i];
    t->pa2[i] = &t->x2[i];
    t->pb2[i] = &t->b2[i];
  }
}

/* Batches of every length 1..40 of general pairs, each sum written over its own first operand,
 * against the scalar mixed addition. */
static void batch_additions_match_scalar(void **state) {
  (void)state;
  REQUIRE_IFMA();
  uint64_t seed = 803;
  pair_batch_t *t = malloc(sizeof *t);
  assert_non_null(t);
  batch_make_general(t, &seed);
  ld_g1_affine_t w1[BATCH_MAX];
  ld_g2_affine_t w2[BATCH_MAX];
  for (size_t n = 1; n <= BATCH_MAX; n++) {
    batch_aim(t, n);
    for (size_t i = 0; i < n; i++) {
      ld_g1_t s1;
      ld_g2_t s2;
      ld_g1_from_affine(&s1, &t->a1[i]);
      ld_g1_add_affine(&s1, &s1, &t->b1[i]);
      ld_g1_to_affine(&w1[i], &s1);
      ld_g2_from_affine(&s2, &t->a2[i]);
      ld_g2_add_affine(&s2, &s2, &t->b2[i]);
      ld_g2_to_affine(&w2[i], &s2);
    }
    assert_int_equal(ld_g1_affine_add_batch(t->r1, t->pa1, t->pb1, n), 0);
    assert_int_equal(ld_g2_affine_add_batch(t->r2, t->pa2, t->pb2, n), 0);
    for (size_t i = 0; i < BATCH_MAX; i++) {
      const ld_g1_affine_t *want1 = i < n ? &w1[i] : &t->a1[i]; /* past n: untouched */
      const ld_g2_affine_t *want2 = i < n ? &w2[i] : &t->a2[i];
      const ld_g1_affine_t *x1 = &t->x1[i];
      const ld_g2_affine_t *x2 = &t->x2[i];
      assert_int_equal(x1->infinity, want1->infinity);
      assert_true(ld_fp_equal(&x1->x, &want1->x) && ld_fp_equal(&x1->y, &want1->y));
      assert_int_equal(x2->infinity, want2->infinity);
      assert_true(ld_fp2_equal(&x2->x, &want2->x) && ld_fp2_equal(&x2->y, &want2->y));
    }
  }
  free(t);
}

/* A batch with one pair whose points share their x (a doubling here, a cancellation there) is
 * refused as a whole, and nothing is written: the MSM then makes that round the checked way. */
static void batch_with_equal_x_is_refused_untouched(void **state) {
  (void)state;
  REQUIRE_IFMA();
  uint64_t seed = 809;
  enum { COUNT = 19 };
  pair_batch_t *t = malloc(sizeof *t);
  assert_non_null(t);
  for (size_t bad = 0; bad < COUNT; bad += 6) {
    batch_make_general(t, &seed);
    t->b1[bad] = t->a1[bad]; /* a doubling */
    t->b2[bad] = t->a2[bad];
    ld_fp2_neg(&t->b2[bad].y, &t->b2[bad].y); /* a cancellation */
    batch_aim(t, COUNT);
    assert_int_equal(ld_g1_affine_add_batch(t->r1, t->pa1, t->pb1, COUNT), LD_ERR_INVALID_ARG);
    assert_int_equal(ld_g2_affine_add_batch(t->r2, t->pa2, t->pb2, COUNT), LD_ERR_INVALID_ARG);
    assert_memory_equal(t->x1, t->a1, sizeof t->x1);
    assert_memory_equal(t->x2, t->a2, sizeof t->x2);
  }
  free(t);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(batch_additions_match_scalar),
      cmocka_unit_test(batch_with_equal_x_is_refused_untouched),
      cmocka_unit_test(g1_msms_wide_and_scalar),
      cmocka_unit_test(g2_msms_wide_and_scalar),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
