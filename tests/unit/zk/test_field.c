/* BN254 Fp and Fr against GMP as the oracle: random values, the edges (0, 1, modulus - 1) and
 * the encodings. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "base/error.h"
#include "zk/field.h"
#include "zktest.h"

#define ROUNDS 3000

static void assert_fp_is(const ld_fp_t *a, const mpz_t want) {
  mpz_t got;
  mpz_init(got);
  zktest_mpz_from_fp(got, a);
  assert_int_equal(mpz_cmp(got, want), 0);
  mpz_clear(got);
}

static void assert_fr_is(const ld_fr_t *a, const mpz_t want) {
  mpz_t got;
  mpz_init(got);
  zktest_mpz_from_fr(got, a);
  assert_int_equal(mpz_cmp(got, want), 0);
  mpz_clear(got);
}

static void moduli_and_constants(void **state) {
  (void)state;
  mpz_t p, r, m;
  mpz_inits(p, r, m, NULL);
  mpz_set_str(p, ZKTEST_P, 10);
  mpz_set_str(r, ZKTEST_R, 10);
  mpz_import(m, 4, -1, 8, 0, 0, LD_FP_MONT.m);
  assert_int_equal(mpz_cmp(m, p), 0);
  mpz_import(m, 4, -1, 8, 0, 0, LD_FR_MONT.m);
  assert_int_equal(mpz_cmp(m, r), 0);
  /* one = 2^256 mod m; r2 = 2^512 mod m; nprime * m = -1 mod 2^64 */
  const ld_mont_t *fields[2] = {&LD_FP_MONT, &LD_FR_MONT};
  for (int i = 0; i < 2; i++) {
    mpz_t want, got;
    mpz_inits(want, got, NULL);
    mpz_import(m, 4, -1, 8, 0, 0, fields[i]->m);
    mpz_ui_pow_ui(want, 2, 256);
    mpz_mod(want, want, m);
    mpz_import(got, 4, -1, 8, 0, 0, fields[i]->one);
    assert_int_equal(mpz_cmp(got, want), 0);
    mpz_ui_pow_ui(want, 2, 512);
    mpz_mod(want, want, m);
    mpz_import(got, 4, -1, 8, 0, 0, fields[i]->r2);
    assert_int_equal(mpz_cmp(got, want), 0);
    assert_true((uint64_t)(fields[i]->nprime * fields[i]->m[0]) == UINT64_MAX);
    mpz_clears(want, got, NULL);
  }
  mpz_clears(p, r, m, NULL);
}

static void fr_against_gmp(void **state);

static void fp_against_gmp(void **state) {
  (void)state;
  uint64_t seed = 1;
  mpz_t p, a, b, want, t;
  mpz_inits(p, a, b, want, t, NULL);
  mpz_set_str(p, ZKTEST_P, 10);
  for (int i = 0; i < ROUNDS; i++) {
    ld_fp_t x, y, z;
    zktest_fp(&seed, &x);
    zktest_fp(&seed, &y);
    if (i == 0) {
      ld_fp_set_zero(&x);
    } else if (i == 1) {
      ld_fp_set_one(&x);
      ld_fp_neg(&y, &x); /* p - 1 */
    }
    zktest_mpz_from_fp(a, &x);
    zktest_mpz_from_fp(b, &y);
    ld_fp_add(&z, &x, &y);
    mpz_add(want, a, b);
    mpz_mod(want, want, p);
    assert_fp_is(&z, want);
    ld_fp_sub(&z, &x, &y);
    mpz_sub(want, a, b);
    mpz_mod(want, want, p);
    assert_fp_is(&z, want);
    ld_fp_mul(&z, &x, &y);
    mpz_mul(want, a, b);
    mpz_mod(want, want, p);
    assert_fp_is(&z, want);
    ld_fp_sqr(&z, &y);
    mpz_mul(want, b, b);
    mpz_mod(want, want, p);
    assert_fp_is(&z, want);
    ld_fp_neg(&z, &x);
    mpz_neg(want, a);
    mpz_mod(want, want, p);
    assert_fp_is(&z, want);
    ld_fp_dbl(&z, &y);
    mpz_add(want, b, b);
    mpz_mod(want, want, p);
    assert_fp_is(&z, want);
    ld_fp_inv(&z, &y);
    if (mpz_sgn(b) == 0) {
      assert_true(ld_fp_is_zero(&z));
    } else {
      mpz_invert(want, b, p);
      assert_fp_is(&z, want);
    }
    /* square roots exist exactly for the quadratic residues */
    int legendre = mpz_legendre(b, p);
    ld_fp_t s;
    int has = ld_fp_sqrt(&s, &y);
    assert_int_equal(has, legendre >= 0);
    assert_int_equal(ld_fp_is_square(&y), legendre == 1);
    if (has) {
      ld_fp_sqr(&z, &s);
      assert_true(ld_fp_equal(&z, &y));
    }
    /* comparison and the arkworks sign */
    mpz_sub_ui(t, p, 1);
    mpz_fdiv_q_2exp(t, t, 1);
    assert_int_equal(ld_fp_is_lexicographically_largest(&x), mpz_cmp(a, t) > 0);
    int c = mpz_cmp(a, b);
    assert_int_equal(ld_fp_cmp_vartime(&x, &y), (c > 0) - (c < 0));
  }
  mpz_clears(p, a, b, want, t, NULL);
}

/* The portable multiplication, where the CPU would otherwise take the mulx/adcx/adox path. */
static void fp_against_gmp_portable(void **state) {
  int saved = ld_mont_have_adx;
  ld_mont_have_adx = 0;
  fp_against_gmp(state);
  fr_against_gmp(state);
  ld_mont_have_adx = saved;
}

static void fp_laws(void **state) {
  (void)state;
  uint64_t seed = 2;
  for (int i = 0; i < 500; i++) {
    ld_fp_t a, b, c, l, r, t;
    zktest_fp(&seed, &a);
    zktest_fp(&seed, &b);
    zktest_fp(&seed, &c);
    ld_fp_add(&t, &b, &c); /* a(b + c) = ab + ac */
    ld_fp_mul(&l, &a, &t);
    ld_fp_mul(&t, &a, &b);
    ld_fp_mul(&r, &a, &c);
    ld_fp_add(&r, &r, &t);
    assert_true(ld_fp_equal(&l, &r));
    ld_fp_mul(&l, &a, &b); /* (ab)c = a(bc) */
    ld_fp_mul(&l, &l, &c);
    ld_fp_mul(&t, &b, &c);
    ld_fp_mul(&r, &a, &t);
    assert_true(ld_fp_equal(&l, &r));
    ld_fp_inv(&t, &a); /* a * a^-1 = 1 */
    ld_fp_mul(&t, &t, &a);
    ld_fp_set_one(&r);
    assert_true(ld_fp_equal(&t, &r));
    ld_fp_sub(&t, &a, &b); /* (a - b) + b = a */
    ld_fp_add(&t, &t, &b);
    assert_true(ld_fp_equal(&t, &a));
  }
}

static void fr_against_gmp(void **state) {
  (void)state;
  uint64_t seed = 3;
  mpz_t r, a, b, want;
  mpz_inits(r, a, b, want, NULL);
  mpz_set_str(r, ZKTEST_R, 10);
  ld_fr_t batch[64], scratch[64], orig[64];
  for (int i = 0; i < ROUNDS; i++) {
    ld_fr_t x, y, z;
    zktest_fr(&seed, &x);
    zktest_fr(&seed, &y);
    if (i == 0) {
      ld_fr_set_zero(&y);
    }
    zktest_mpz_from_fr(a, &x);
    zktest_mpz_from_fr(b, &y);
    ld_fr_add(&z, &x, &y);
    mpz_add(want, a, b);
    mpz_mod(want, want, r);
    assert_fr_is(&z, want);
    ld_fr_sub(&z, &x, &y);
    mpz_sub(want, a, b);
    mpz_mod(want, want, r);
    assert_fr_is(&z, want);
    ld_fr_mul(&z, &x, &y);
    mpz_mul(want, a, b);
    mpz_mod(want, want, r);
    assert_fr_is(&z, want);
    ld_fr_sqr(&z, &x);
    mpz_mul(want, a, a);
    mpz_mod(want, want, r);
    assert_fr_is(&z, want);
    ld_fr_neg(&z, &y);
    mpz_neg(want, b);
    mpz_mod(want, want, r);
    assert_fr_is(&z, want);
    ld_fr_t v;
    ld_fr_inv(&z, &y);
    ld_fr_inv_vartime(&v, &y);
    if (mpz_sgn(b) == 0) {
      assert_true(ld_fr_is_zero(&z));
      assert_true(ld_fr_is_zero(&v));
    } else {
      mpz_invert(want, b, r);
      assert_fr_is(&z, want);
      assert_fr_is(&v, want);
    }
    batch[i % 64] = (i % 7 == 0) ? (ld_fr_t){{0, 0, 0, 0}} : x;
    if (i % 64 == 63) {
      memcpy(orig, batch, sizeof batch);
      ld_fr_batch_inv(batch, 64, scratch, i % 128 == 127);
      for (int k = 0; k < 64; k++) {
        ld_fr_t single;
        ld_fr_inv(&single, &orig[k]);
        assert_true(ld_fr_equal(&single, &batch[k]));
      }
    }
  }
  mpz_clears(r, a, b, want, NULL);
}

static void encodings(void **state) {
  (void)state;
  uint8_t b[32], out[32];
  mpz_t p, r, z, want;
  mpz_inits(p, r, z, want, NULL);
  mpz_set_str(p, ZKTEST_P, 10);
  mpz_set_str(r, ZKTEST_R, 10);
  ld_fp_t x;
  ld_fr_t y;
  /* p - 1 is the largest canonical value; p and 2^256 - 1 are rejected */
  mpz_sub_ui(z, p, 1);
  zktest_le_from_mpz(b, z);
  assert_int_equal(ld_fp_from_bytes(&x, b), 0);
  ld_fp_to_bytes(out, &x);
  assert_memory_equal(out, b, 32);
  zktest_le_from_mpz(b, p);
  assert_int_equal(ld_fp_from_bytes(&x, b), LD_ERR_OVERFLOW);
  memset(b, 0xff, 32);
  assert_int_equal(ld_fp_from_bytes(&x, b), LD_ERR_OVERFLOW);
  assert_int_equal(ld_fr_from_bytes(&y, b), LD_ERR_OVERFLOW);
  zktest_le_from_mpz(b, r);
  assert_int_equal(ld_fr_from_bytes(&y, b), LD_ERR_OVERFLOW);
  /* reduction of any 32 bytes */
  uint64_t seed = 4;
  for (int i = 0; i < ROUNDS; i++) {
    if (i == 0) {
      memset(b, 0xff, 32);
    } else if (i == 1) {
      zktest_le_from_mpz(b, r);
    } else {
      zktest_bytes(&seed, b, 32);
    }
    ld_fr_from_bytes_reduce(&y, b);
    zktest_mpz_from_le(z, b);
    mpz_mod(want, z, r);
    assert_fr_is(&y, want);
    /* canonical bytes round-trip exactly */
    ld_fr_to_bytes(out, &y);
    ld_fr_t again;
    assert_int_equal(ld_fr_from_bytes(&again, out), 0);
    assert_true(ld_fr_equal(&again, &y));
  }
  /* decimals, as snarkjs writes them */
  char dec[100];
  for (int i = 0; i < 200; i++) {
    zktest_fp(&seed, &x);
    zktest_mpz_from_fp(z, &x);
    mpz_get_str(dec, 10, z);
    ld_fp_t parsed;
    assert_int_equal(ld_fp_from_decimal(&parsed, dec, strlen(dec)), 0);
    assert_true(ld_fp_equal(&parsed, &x));
  }
  assert_int_equal(ld_fp_from_decimal(&x, "", 0), LD_ERR_MALFORMED);
  assert_int_equal(ld_fp_from_decimal(&x, "12a", 3), LD_ERR_MALFORMED);
  assert_int_equal(ld_fp_from_decimal(&x, "-1", 2), LD_ERR_MALFORMED);
  assert_int_equal(ld_fp_from_decimal(&x, ZKTEST_P, strlen(ZKTEST_P)), LD_ERR_OVERFLOW);
  assert_int_equal(ld_fr_from_decimal(&y, ZKTEST_R, strlen(ZKTEST_R)), LD_ERR_OVERFLOW);
  const char *huge =
      "999999999999999999999999999999999999999999999999999999999999999999999999999999";
  assert_int_equal(ld_fp_from_decimal(&x, huge, strlen(huge)), LD_ERR_OVERFLOW);
  assert_int_equal(ld_fr_from_decimal(&y, "0", 1), 0);
  assert_true(ld_fr_is_zero(&y));
  ld_fr_from_u64(&y, 123456789);
  ld_fr_to_bytes(out, &y);
  assert_int_equal(out[0] | out[1] << 8 | out[2] << 16 | out[3] << 24, 123456789);
  mpz_clears(p, r, z, want, NULL);
}

/* ld_fp_inv (safegcd) equals ld_fp_inv_fermat: random values; 0 (to 0), 1, p - 1 and 2; and
 * Montgomery limbs of every shape the divsteps see: 2^k, p - 2^k, all ones below p, 1 and p - 1 as
 * raw limbs. */
static void fp_inv_against_fermat(void **state) {
  (void)state;
  const uint64_t *p_limbs = LD_FP_MONT.m;
  ld_fp_t cases[2 * 254 + 16];
  size_t n = 0;
  ld_fp_set_zero(&cases[n++]);
  ld_fp_set_one(&cases[n++]);
  ld_fp_neg(&cases[n], &cases[1]); /* p - 1 */
  n++;
  ld_fp_from_u64(&cases[n++], 2);
  memset(&cases[n], 0, sizeof cases[n]); /* raw 1 */
  cases[n++].l[0] = 1;
  memcpy(cases[n].l, p_limbs, sizeof cases[n].l); /* raw p - 1 */
  cases[n++].l[0] -= 1;
  memcpy(cases[n].l, p_limbs, sizeof cases[n].l); /* raw p - 2^64 */
  cases[n++].l[1] -= 1;
  for (int k = 0; k < 254; k++) {
    ld_fp_t *pow2 = &cases[n++], *below = &cases[n++];
    memset(pow2, 0, sizeof *pow2);
    pow2->l[k / 64] = (uint64_t)1 << (k % 64);
    if (k < 253) { /* 2^253 < p; p - 2^k by raw limbs */
      uint64_t borrow = 0;
      for (int i = 0; i < 4; i++) {
        uint64_t sub = pow2->l[i] + borrow;
        borrow = (sub < borrow) | (p_limbs[i] < sub);
        below->l[i] = p_limbs[i] - sub;
      }
    } else {
      *below = *pow2;
    }
  }
  for (size_t i = 0; i < n; i++) {
    ld_fp_t got, want;
    ld_fp_inv(&got, &cases[i]);
    ld_fp_inv_fermat(&want, &cases[i]);
    assert_true(ld_fp_equal(&got, &want));
  }
  uint64_t seed = 15;
  for (int i = 0; i < 20000; i++) {
    ld_fp_t a, got, want, one;
    zktest_fp(&seed, &a);
    ld_fp_inv(&got, &a);
    ld_fp_inv_fermat(&want, &a);
    assert_true(ld_fp_equal(&got, &want));
    ld_fp_mul(&got, &got, &a);
    ld_fp_set_one(&one);
    assert_true(ld_fp_equal(&got, &one));
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(moduli_and_constants),
      cmocka_unit_test(fp_against_gmp),
      cmocka_unit_test(fp_laws),
      cmocka_unit_test(fr_against_gmp),
      cmocka_unit_test(encodings),
      cmocka_unit_test(fp_against_gmp_portable),
      cmocka_unit_test(fp_inv_against_fermat),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
