/* Eight-lane Fp arithmetic with AVX-512 IFMA against the scalar ld_fp_* code: random values
 * over the whole range [0, p) and the edges (0, 1, p - 1, limbs full of ones, values at and
 * above 2^253; p < 2^254, so no element reaches 2^255), lane independence, and the
 * representation's invariants (limbs below 2^52, values below p). Skipped, saying so, on a CPU
 * without IFMA. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "zk/curve.h"
#include "zk/field.h"
#include "zk/fp_ifma.h"
#include "zktest.h"

#define PRODUCTS 100000
#define BATCHES (PRODUCTS / LD_FP8_LANES)

#define REQUIRE_IFMA()                                                                             \
  do {                                                                                             \
    if (!ld_fp8_available()) {                                                                     \
      print_message("no AVX-512 IFMA on this CPU: the eight-lane Fp test is skipped\n");           \
      skip();                                                                                      \
    }                                                                                              \
  } while (0)

/* Internal (Montgomery) limbs of edge elements. */
static ld_fp_t edges[16];
static size_t n_edges;

static void add_edge(uint64_t l0, uint64_t l1, uint64_t l2, uint64_t l3) {
  ld_fp_t *e = &edges[n_edges++];
  e->l[0] = l0;
  e->l[1] = l1;
  e->l[2] = l2;
  e->l[3] = l3;
  assert_true(mont_is_canonical(e->l, &LD_FP_MONT));
}

static int setup_edges(void **state) {
  (void)state;
  const uint64_t *p = LD_FP_MONT.m;
  n_edges = 0;
  add_edge(0, 0, 0, 0);
  add_edge(1, 0, 0, 0);
  add_edge(p[0] - 1, p[1], p[2], p[3]); /* p - 1 */
  add_edge(p[0] - 2, p[1], p[2], p[3]); /* p - 2 */
  add_edge(LD_FP_MONT.one[0], LD_FP_MONT.one[1], LD_FP_MONT.one[2], LD_FP_MONT.one[3]);
  add_edge((UINT64_C(1) << 52) - 1, 0, 0, 0);              /* one full 52-bit limb */
  add_edge(UINT64_C(1) << 52, 0, 0, 0);                    /* a carry into limb 1 */
  add_edge(UINT64_MAX, (UINT64_C(1) << 40) - 1, 0, 0);     /* 2^104 - 1 */
  add_edge(UINT64_MAX, UINT64_MAX, UINT64_MAX, 0xffff);    /* 2^208 - 1 */
  add_edge(0, 0, 0, UINT64_C(1) << 61);                    /* 2^253 */
  add_edge(UINT64_MAX, UINT64_MAX, UINT64_MAX, p[3] - 1);  /* just below p's top limb */
  add_edge(0, 0, 0, UINT64_C(3) << 60);                    /* 2^253 + 2^252 */
  add_edge(p[0] >> 1 | p[1] << 63, p[1] >> 1 | p[2] << 63, /* (p - 1) / 2 */
           p[2] >> 1 | p[3] << 63, p[3] >> 1);
  return 0;
}

/* Uniform in [0, p) as internal limbs (Montgomery form): 254 random bits, rejected when >= p. */
static void random_fp(uint64_t *seed, ld_fp_t *a) {
  do {
    for (int i = 0; i < 4; i++) {
      a->l[i] = zktest_next(seed);
    }
    a->l[3] &= (UINT64_C(1) << 62) - 1;
  } while (!mont_is_canonical(a->l, &LD_FP_MONT));
}

/* A random element, one time in eight an edge one. */
static void pick_fp(uint64_t *seed, ld_fp_t *a) {
  uint64_t r = zktest_next(seed);
  if ((r & 7) == 0) {
    *a = edges[(r >> 3) % n_edges];
  } else {
    random_fp(seed, a);
  }
}

/* Every limb below 2^52 and every lane's value below p. */
static void assert_fp8_reduced(const ld_fp8_t *a) {
  for (int i = 0; i < LD_FP8_LANES; i++) {
    uint64_t l[LD_FP8_LIMBS];
    for (int j = 0; j < LD_FP8_LIMBS; j++) {
      l[j] = a->v[j][i];
      assert_true(l[j] < (UINT64_C(1) << 52));
    }
    assert_true(l[4] < (UINT64_C(1) << 48)); /* nothing at 2^256 or above */
    const uint64_t w[4] = {l[0] | l[1] << 52, l[1] >> 12 | l[2] << 40, l[2] >> 24 | l[3] << 28,
                           l[3] >> 36 | l[4] << 16};
    assert_true(mont_is_canonical(w, &LD_FP_MONT));
  }
}

static void assert_fp_equal(const ld_fp_t *got, const ld_fp_t *want) {
  assert_memory_equal(got->l, want->l, sizeof got->l);
}

static void conversion_round_trips(void **state) {
  (void)state;
  REQUIRE_IFMA();
  uint64_t seed = 1;
  ld_fp8_t x;
  ld_fp_t a[LD_FP8_LANES], back[LD_FP8_LANES];
  for (size_t e = 0; e < n_edges; e++) { /* every edge in every lane */
    for (int i = 0; i < LD_FP8_LANES; i++) {
      a[i] = edges[(e + (size_t)i) % n_edges];
    }
    ld_fp8_from_fp(&x, a);
    assert_fp8_reduced(&x);
    ld_fp8_to_fp(back, &x);
    for (int i = 0; i < LD_FP8_LANES; i++) {
      assert_fp_equal(&back[i], &a[i]);
    }
  }
  for (int round = 0; round < 2000; round++) {
    for (int i = 0; i < LD_FP8_LANES; i++) {
      random_fp(&seed, &a[i]);
    }
    ld_fp8_from_fp(&x, a);
    assert_fp8_reduced(&x);
    ld_fp8_to_fp(back, &x);
    for (int i = 0; i < LD_FP8_LANES; i++) {
      assert_fp_equal(&back[i], &a[i]);
    }
  }
}

enum op { OP_MUL, OP_ADD, OP_SUB };

static void scalar_op(enum op op, ld_fp_t *r, const ld_fp_t *a, const ld_fp_t *b) {
  switch (op) {
  case OP_MUL:
    ld_fp_mul(r, a, b);
    break;
  case OP_ADD:
    ld_fp_add(r, a, b);
    break;
  case OP_SUB:
    ld_fp_sub(r, a, b);
    break;
  }
}

static void fp8_op(enum op op, ld_fp8_t *r, const ld_fp8_t *a, const ld_fp8_t *b) {
  switch (op) {
  case OP_MUL:
    ld_fp8_mul(r, a, b);
    break;
  case OP_ADD:
    ld_fp8_add(r, a, b);
    break;
  case OP_SUB:
    ld_fp8_sub(r, a, b);
    break;
  }
}

/* PRODUCTS random operations (one operand in eight an edge) against the scalar code, lane by
 * lane. */
static void check_op_against_scalar(enum op op, uint64_t seed) {
  ld_fp_t a[LD_FP8_LANES], b[LD_FP8_LANES], got[LD_FP8_LANES], want;
  ld_fp8_t x, y, z;
  for (int batch = 0; batch < BATCHES; batch++) {
    for (int i = 0; i < LD_FP8_LANES; i++) {
      pick_fp(&seed, &a[i]);
      pick_fp(&seed, &b[i]);
    }
    ld_fp8_from_fp(&x, a);
    ld_fp8_from_fp(&y, b);
    fp8_op(op, &z, &x, &y);
    assert_fp8_reduced(&z);
    ld_fp8_to_fp(got, &z);
    for (int i = 0; i < LD_FP8_LANES; i++) {
      scalar_op(op, &want, &a[i], &b[i]);
      assert_fp_equal(&got[i], &want);
    }
  }
  /* every pair of edges */
  for (size_t e = 0; e < n_edges; e++) {
    for (size_t f = 0; f < n_edges; f += LD_FP8_LANES) {
      for (int i = 0; i < LD_FP8_LANES; i++) {
        a[i] = edges[e];
        b[i] = edges[(f + (size_t)i) % n_edges];
      }
      ld_fp8_from_fp(&x, a);
      ld_fp8_from_fp(&y, b);
      fp8_op(op, &z, &x, &y);
      assert_fp8_reduced(&z);
      ld_fp8_to_fp(got, &z);
      for (int i = 0; i < LD_FP8_LANES; i++) {
        scalar_op(op, &want, &a[i], &b[i]);
        assert_fp_equal(&got[i], &want);
      }
    }
  }
}

static void products_match_scalar(void **state) {
  (void)state;
  REQUIRE_IFMA();
  check_op_against_scalar(OP_MUL, 11);
}

static void sums_match_scalar(void **state) {
  (void)state;
  REQUIRE_IFMA();
  check_op_against_scalar(OP_ADD, 12);
}

static void differences_match_scalar(void **state) {
  (void)state;
  REQUIRE_IFMA();
  check_op_against_scalar(OP_SUB, 13);
}

/* Long chains inside the eight-lane form (outputs fed back as inputs, no conversion between):
 * x = x * y + x - y, against the same chain in scalar code. */
static void chains_match_scalar(void **state) {
  (void)state;
  REQUIRE_IFMA();
  uint64_t seed = 14;
  ld_fp_t a[LD_FP8_LANES], b[LD_FP8_LANES], got[LD_FP8_LANES];
  for (int i = 0; i < LD_FP8_LANES; i++) {
    pick_fp(&seed, &a[i]);
    pick_fp(&seed, &b[i]);
  }
  ld_fp8_t x, y, t;
  ld_fp8_from_fp(&x, a);
  ld_fp8_from_fp(&y, b);
  for (int step = 0; step < 5000; step++) {
    ld_fp8_mul(&t, &x, &y);
    ld_fp8_add(&t, &t, &x);
    ld_fp8_sub(&x, &t, &y);
    for (int i = 0; i < LD_FP8_LANES; i++) {
      ld_fp_t s;
      ld_fp_mul(&s, &a[i], &b[i]);
      ld_fp_add(&s, &s, &a[i]);
      ld_fp_sub(&a[i], &s, &b[i]);
    }
  }
  assert_fp8_reduced(&x);
  ld_fp8_to_fp(got, &x);
  for (int i = 0; i < LD_FP8_LANES; i++) {
    assert_fp_equal(&got[i], &a[i]);
  }
}

/* Changing one lane's operands (to every edge value) changes that lane's result alone. */
static void lanes_are_independent(void **state) {
  (void)state;
  REQUIRE_IFMA();
  uint64_t seed = 15;
  ld_fp_t a[LD_FP8_LANES], b[LD_FP8_LANES], got[LD_FP8_LANES], want;
  for (int i = 0; i < LD_FP8_LANES; i++) {
    random_fp(&seed, &a[i]);
    random_fp(&seed, &b[i]);
  }
  for (int op = OP_MUL; op <= OP_SUB; op++) {
    ld_fp8_t x, y, base, z;
    ld_fp8_from_fp(&x, a);
    ld_fp8_from_fp(&y, b);
    fp8_op((enum op)op, &base, &x, &y);
    for (int lane = 0; lane < LD_FP8_LANES; lane++) {
      for (size_t e = 0; e < n_edges; e++) {
        ld_fp_t a2[LD_FP8_LANES], b2[LD_FP8_LANES];
        memcpy(a2, a, sizeof a2);
        memcpy(b2, b, sizeof b2);
        a2[lane] = edges[e];
        b2[lane] = edges[n_edges - 1 - e];
        ld_fp8_from_fp(&x, a2);
        ld_fp8_from_fp(&y, b2);
        fp8_op((enum op)op, &z, &x, &y);
        for (int i = 0; i < LD_FP8_LANES; i++) {
          if (i != lane) {
            for (int j = 0; j < LD_FP8_LIMBS; j++) {
              assert_true(z.v[j][i] == base.v[j][i]);
            }
          }
        }
        ld_fp8_to_fp(got, &z);
        scalar_op((enum op)op, &want, &a2[lane], &b2[lane]);
        assert_fp_equal(&got[lane], &want);
      }
    }
  }
}

/* Eight affine additions at once against the scalar mixed addition, over points [k] G with
 * random k, outputs written over their own inputs (as the MSM's bucket sums do). */
static void g1_affine_add8_matches_scalar(void **state) {
  (void)state;
  REQUIRE_IFMA();
  uint64_t seed = 16;
  ld_g1_affine_t gen;
  ld_g1_t g;
  ld_g1_generator(&gen);
  ld_g1_from_affine(&g, &gen);
  for (int round = 0; round < 200; round++) {
    ld_g1_affine_t pa[LD_FP8_LANES], pb[LD_FP8_LANES], want[LD_FP8_LANES];
    ld_fp_t inv[LD_FP8_LANES];
    ld_g1_affine_t *r[LD_FP8_LANES];
    const ld_g1_affine_t *a[LD_FP8_LANES], *b[LD_FP8_LANES];
    const ld_fp_t *iv[LD_FP8_LANES];
    for (int i = 0; i < LD_FP8_LANES; i++) {
      ld_fr_t k;
      ld_g1_t p, q, sum;
      zktest_fr(&seed, &k);
      ld_g1_mul_fr_vartime(&p, &g, &k);
      zktest_fr(&seed, &k);
      ld_g1_mul_fr_vartime(&q, &g, &k);
      ld_g1_to_affine(&pa[i], &p);
      ld_g1_to_affine(&pb[i], &q);
      assert_false(ld_fp_equal(&pa[i].x, &pb[i].x));
      ld_g1_add_affine(&sum, &p, &pb[i]);
      ld_g1_to_affine(&want[i], &sum);
      ld_fp_t d;
      ld_fp_sub(&d, &pb[i].x, &pa[i].x);
      ld_fp_inv(&inv[i], &d);
      /* lane i's sum replaces pa[7 - i]: every output lands on another lane's input */
      r[i] = &pa[LD_FP8_LANES - 1 - i];
      a[i] = &pa[i];
      b[i] = &pb[i];
      iv[i] = &inv[i];
    }
    ld_g1_affine_add8(r, a, b, iv);
    for (int i = 0; i < LD_FP8_LANES; i++) {
      const ld_g1_affine_t *got = &pa[LD_FP8_LANES - 1 - i];
      assert_false(got->infinity);
      assert_fp_equal(&got->x, &want[i].x);
      assert_fp_equal(&got->y, &want[i].y);
    }
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(conversion_round_trips),
      cmocka_unit_test(products_match_scalar),
      cmocka_unit_test(sums_match_scalar),
      cmocka_unit_test(differences_match_scalar),
      cmocka_unit_test(chains_match_scalar),
      cmocka_unit_test(lanes_are_independent),
      cmocka_unit_test(g1_affine_add8_matches_scalar),
  };
  return cmocka_run_group_tests(tests, setup_edges, NULL);
}
