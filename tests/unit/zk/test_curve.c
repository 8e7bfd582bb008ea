/* G1 and G2: group laws, scalar multiplication, the subgroup check, and arkworks' encodings
 * (round trips, known encodings, and every kind of bad input). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "../crypto/testhex.h"
#include "base/error.h"
#include "zk/curve.h"
#include "zktest.h"

static const uint64_t R_LIMBS[4] = LD_BN254_R_LIMBS;

static void g1_random(uint64_t *seed, ld_g1_t *out, ld_fr_t *k) {
  ld_g1_affine_t g;
  ld_g1_t gj;
  ld_g1_generator(&g);
  ld_g1_from_affine(&gj, &g);
  zktest_fr(seed, k);
  ld_g1_mul_fr_vartime(out, &gj, k);
}

static void g2_random(uint64_t *seed, ld_g2_t *out, ld_fr_t *k) {
  ld_g2_affine_t g;
  ld_g2_t gj;
  ld_g2_generator(&g);
  ld_g2_from_affine(&gj, &g);
  zktest_fr(seed, k);
  ld_g2_mul_fr_vartime(out, &gj, k);
}

static void g1_group_laws(void **state) {
  (void)state;
  uint64_t seed = 10;
  ld_g1_affine_t g, a;
  ld_g1_t gj, p, q, s, t;
  ld_g1_generator(&g);
  assert_true(ld_g1_is_on_curve(&g));
  ld_g1_from_affine(&gj, &g);
  ld_g1_mul_vartime(&p, &gj, R_LIMBS, 4); /* [r]G = O */
  assert_true(ld_g1_is_infinity(&p));
  for (int i = 0; i < 20; i++) {
    ld_fr_t ka, kb, ks;
    g1_random(&seed, &p, &ka);
    g1_random(&seed, &q, &kb);
    ld_fr_add(&ks, &ka, &kb); /* [a]G + [b]G = [a + b]G */
    ld_g1_add(&s, &p, &q);
    ld_g1_mul_fr_vartime(&t, &gj, &ks);
    assert_true(ld_g1_equal(&s, &t));
    ld_g1_to_affine(&a, &q); /* mixed addition agrees */
    assert_true(ld_g1_is_on_curve(&a));
    ld_g1_add_affine(&t, &p, &a);
    assert_true(ld_g1_equal(&s, &t));
    ld_g1_add(&t, &p, &p); /* P + P = 2P, P - P = O */
    ld_g1_dbl(&s, &p);
    assert_true(ld_g1_equal(&s, &t));
    ld_g1_neg(&t, &p);
    ld_g1_add(&t, &t, &p);
    assert_true(ld_g1_is_infinity(&t));
  }
  /* [2]G is EIP-196's known value */
  uint8_t want[64], got[64];
  testhex("030644e72e131a029b85045b68181585d97816a916871ca8d3c208c16d87cfd3"
          "15ed738c0e0a7c92e7845f96b2ae9c0a68a6a449e3538fc7ff3ebf7a5a18a2c4",
          want);
  ld_g1_dbl(&p, &gj);
  ld_g1_to_affine(&a, &p);
  uint8_t le[32];
  ld_fp_to_bytes(le, &a.x);
  for (int i = 0; i < 32; i++) {
    got[i] = le[31 - i];
  }
  ld_fp_to_bytes(le, &a.y);
  for (int i = 0; i < 32; i++) {
    got[32 + i] = le[31 - i];
  }
  assert_memory_equal(got, want, 64);
}

static void g1_msm(void **state) {
  (void)state;
  uint64_t seed = 11;
  for (size_t n = 0; n <= 19; n += 3) {
    ld_g1_affine_t pts[19];
    ld_fr_t ks[19];
    ld_g1_t want, p;
    ld_g1_set_infinity(&want);
    for (size_t i = 0; i < n; i++) {
      ld_fr_t unused;
      g1_random(&seed, &p, &unused);
      ld_g1_to_affine(&pts[i], &p);
      zktest_fr(&seed, &ks[i]);
      if (i == 1) {
        ld_fr_set_zero(&ks[i]);
      }
      ld_g1_mul_fr_vartime(&p, &p, &ks[i]);
      ld_g1_add(&want, &want, &p);
    }
    ld_g1_t got;
    ld_g1_msm_vartime(&got, pts, ks, n);
    assert_true(ld_g1_equal(&got, &want));
  }
}

static void g2_group_laws_and_subgroup(void **state) {
  (void)state;
  uint64_t seed = 12;
  ld_g2_affine_t g, a;
  ld_g2_t gj, p, q, s, t;
  ld_g2_generator(&g);
  assert_true(ld_g2_is_on_curve(&g));
  assert_true(ld_g2_is_in_subgroup(&g));
  ld_g2_from_affine(&gj, &g);
  ld_g2_mul_vartime(&p, &gj, R_LIMBS, 4);
  assert_true(ld_g2_is_infinity(&p));
  for (int i = 0; i < 8; i++) {
    ld_fr_t ka, kb, ks;
    g2_random(&seed, &p, &ka);
    g2_random(&seed, &q, &kb);
    ld_fr_add(&ks, &ka, &kb);
    ld_g2_add(&s, &p, &q);
    ld_g2_mul_fr_vartime(&t, &gj, &ks);
    assert_true(ld_g2_equal(&s, &t));
    ld_g2_to_affine(&a, &q);
    assert_true(ld_g2_is_on_curve(&a));
    assert_true(ld_g2_is_in_subgroup(&a));
    ld_g2_add_affine(&t, &p, &a);
    assert_true(ld_g2_equal(&s, &t));
  }
  /* Points of the twist outside the subgroup: both the psi check and [r]P say so; after
   * clearing the cofactor 2p - r they pass both. */
  int found = 0;
  for (uint64_t x0 = 1; found < 4; x0++) {
    ld_g2_affine_t pt = {.infinity = 0};
    ld_fp2_t rhs;
    static const ld_fp2_t b = LD_BN254_G2_B;
    ld_fp_from_u64(&pt.x.c0, x0);
    ld_fp_from_u64(&pt.x.c1, 7);
    ld_fp2_sqr(&rhs, &pt.x);
    ld_fp2_mul(&rhs, &rhs, &pt.x);
    ld_fp2_add(&rhs, &rhs, &b);
    if (!ld_fp2_sqrt_vartime(&pt.y, &rhs)) {
      continue;
    }
    found++;
    assert_true(ld_g2_is_on_curve(&pt));
    assert_false(ld_g2_is_in_subgroup(&pt));
    ld_g2_from_affine(&p, &pt);
    ld_g2_mul_vartime(&q, &p, R_LIMBS, 4);
    assert_false(ld_g2_is_infinity(&q));
    /* cofactor h = 2p - r */
    mpz_t h, pz, rz;
    mpz_inits(h, pz, rz, NULL);
    mpz_set_str(pz, ZKTEST_P, 10);
    mpz_set_str(rz, ZKTEST_R, 10);
    mpz_mul_ui(h, pz, 2);
    mpz_sub(h, h, rz);
    uint64_t hl[4] = {0, 0, 0, 0};
    mpz_export(hl, NULL, -1, 8, 0, 0, h);
    mpz_clears(h, pz, rz, NULL);
    ld_g2_mul_vartime(&q, &p, hl, 4);
    ld_g2_affine_t cleared;
    ld_g2_to_affine(&cleared, &q);
    assert_true(ld_g2_is_in_subgroup(&cleared));
    ld_g2_mul_vartime(&q, &q, R_LIMBS, 4);
    assert_true(ld_g2_is_infinity(&q));
    /* a non-subgroup point is refused by both decoders */
    uint8_t c[64], u[128];
    ld_g2_affine_t back;
    ld_g2_to_compressed(c, &pt);
    assert_int_equal(ld_g2_from_compressed(&back, c), LD_ERR_BAD_POINT);
    ld_g2_to_uncompressed(u, &pt);
    assert_int_equal(ld_g2_from_uncompressed(&back, u), LD_ERR_BAD_POINT);
  }
}

static void g1_encodings(void **state) {
  (void)state;
  uint64_t seed = 13;
  uint8_t c[32], u[64], want[32];
  ld_g1_affine_t g, a, b;
  ld_g1_t p;
  /* the generator (1, 2): 2 is the smaller root, no flag */
  ld_g1_generator(&g);
  ld_g1_to_compressed(c, &g);
  testhex("0100000000000000000000000000000000000000000000000000000000000000", want);
  assert_memory_equal(c, want, 32);
  ld_g1_t gj;
  ld_g1_from_affine(&gj, &g);
  ld_g1_neg(&p, &gj); /* (1, -2): the larger root, bit 7 */
  ld_g1_to_affine(&a, &p);
  ld_g1_to_compressed(c, &a);
  want[31] = 0x80;
  assert_memory_equal(c, want, 32);
  assert_int_equal(ld_g1_from_compressed(&b, c), 0);
  assert_true(ld_fp_equal(&b.y, &a.y));
  for (int i = 0; i < 50; i++) {
    ld_fr_t k;
    g1_random(&seed, &p, &k);
    ld_g1_to_affine(&a, &p);
    ld_g1_to_compressed(c, &a);
    assert_int_equal(ld_g1_from_compressed(&b, c), 0);
    assert_true(ld_fp_equal(&a.x, &b.x) && ld_fp_equal(&a.y, &b.y) && !b.infinity);
    ld_g1_to_uncompressed(u, &a);
    assert_int_equal(ld_g1_from_uncompressed(&b, u), 0);
    assert_true(ld_fp_equal(&a.x, &b.x) && ld_fp_equal(&a.y, &b.y));
    assert_int_equal(u[63] & 0x80, c[31] & 0x80);
    /* the wrong sign in an uncompressed encoding, and both flags, are refused */
    u[63] ^= 0x80;
    assert_int_equal(ld_g1_from_uncompressed(&b, u), LD_ERR_MALFORMED);
    c[31] |= 0xc0;
    assert_int_equal(ld_g1_from_compressed(&b, c), LD_ERR_MALFORMED);
  }
  /* infinity: 0x40 in the last byte, zero coordinates */
  a.infinity = 1;
  ld_g1_to_compressed(c, &a);
  memset(want, 0, 32);
  want[31] = 0x40;
  assert_memory_equal(c, want, 32);
  assert_int_equal(ld_g1_from_compressed(&b, c), 0);
  assert_true(b.infinity);
  c[0] = 1;
  assert_int_equal(ld_g1_from_compressed(&b, c), LD_ERR_MALFORMED);
  ld_g1_to_uncompressed(u, &a);
  assert_int_equal(ld_g1_from_uncompressed(&b, u), 0);
  assert_true(b.infinity);
  u[5] = 1;
  assert_int_equal(ld_g1_from_uncompressed(&b, u), LD_ERR_MALFORMED);
  /* x >= p, and an x with no point (x^3 + 3 not a square: x = 3) */
  testhex("47fd7cd8168c203c8dca7168916a81975d588181b64550b829a031e1724e6430", c);
  assert_int_equal(ld_g1_from_compressed(&b, c), LD_ERR_OVERFLOW);
  memset(c, 0, 32);
  int refused = 0;
  for (uint8_t x = 0; x < 20; x++) {
    c[0] = x;
    ld_fp_t fx, rhs, y;
    ld_fp_from_u64(&fx, x);
    ld_fp_sqr(&rhs, &fx);
    ld_fp_mul(&rhs, &rhs, &fx);
    ld_fp_t three;
    ld_fp_from_u64(&three, 3);
    ld_fp_add(&rhs, &rhs, &three);
    int want_rc = ld_fp_sqrt(&y, &rhs) ? 0 : LD_ERR_BAD_POINT;
    assert_int_equal(ld_g1_from_compressed(&b, c), want_rc);
    refused += want_rc != 0;
  }
  assert_true(refused > 0);
  /* an uncompressed point off the curve: (1, 3) */
  memset(u, 0, 64);
  u[0] = 1;
  u[32] = 3;
  assert_int_equal(ld_g1_from_uncompressed(&b, u), LD_ERR_BAD_POINT);
}

static void g2_encodings(void **state) {
  (void)state;
  uint64_t seed = 14;
  uint8_t c[64], u[128];
  ld_g2_affine_t a, b;
  ld_g2_t p;
  for (int i = 0; i < 12; i++) {
    ld_fr_t k;
    g2_random(&seed, &p, &k);
    if (i == 0) {
      ld_g2_affine_t g;
      ld_g2_generator(&g);
      ld_g2_from_affine(&p, &g);
    }
    ld_g2_to_affine(&a, &p);
    ld_g2_to_compressed(c, &a);
    assert_int_equal(ld_g2_from_compressed(&b, c), 0);
    assert_true(ld_fp2_equal(&a.x, &b.x) && ld_fp2_equal(&a.y, &b.y) && !b.infinity);
    ld_g2_to_uncompressed(u, &a);
    assert_int_equal(ld_g2_from_uncompressed(&b, u), 0);
    assert_true(ld_fp2_equal(&a.x, &b.x) && ld_fp2_equal(&a.y, &b.y));
    /* the negated point differs only in the flag */
    ld_g2_neg(&p, &p);
    ld_g2_affine_t n;
    ld_g2_to_affine(&n, &p);
    uint8_t cn[64];
    ld_g2_to_compressed(cn, &n);
    assert_memory_equal(cn, c, 63);
    assert_int_equal(cn[63] ^ c[63], 0x80);
    c[63] |= 0xc0;
    assert_int_equal(ld_g2_from_compressed(&b, c), LD_ERR_MALFORMED);
    u[127] ^= 0x80;
    assert_int_equal(ld_g2_from_uncompressed(&b, u), LD_ERR_MALFORMED);
  }
  a.infinity = 1;
  ld_g2_to_compressed(c, &a);
  assert_int_equal(c[63], 0x40);
  assert_int_equal(ld_g2_from_compressed(&b, c), 0);
  assert_true(b.infinity);
  c[40] = 1;
  assert_int_equal(ld_g2_from_compressed(&b, c), LD_ERR_MALFORMED);
  /* a coordinate >= p in c0 or c1 */
  memset(c, 0xff, 64);
  c[63] = 0x3f;
  assert_int_equal(ld_g2_from_compressed(&b, c), LD_ERR_OVERFLOW);
  /* x with no point on the twist */
  int refused = 0;
  memset(c, 0, 64);
  for (uint8_t x = 1; x < 20; x++) {
    c[0] = x;
    int rc = ld_g2_from_compressed(&b, c);
    assert_true(rc == 0 || rc == LD_ERR_BAD_POINT);
    refused += rc == LD_ERR_BAD_POINT;
  }
  assert_true(refused > 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(g1_group_laws),
      cmocka_unit_test(g1_msm),
      cmocka_unit_test(g2_group_laws_and_subgroup),
      cmocka_unit_test(g1_encodings),
      cmocka_unit_test(g2_encodings),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
