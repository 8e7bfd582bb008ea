/* Fp6 and Fp12 arithmetic for the pairing. */
#include "zk/fp12.h"

static const ld_fp2_t FROB_GAMMA1[12] = LD_BN254_FROB_GAMMA1;
static const ld_fp2_t FROB_FP6_C1[6] = LD_BN254_FROB_FP6_C1;
static const ld_fp2_t FROB_FP6_C2[6] = LD_BN254_FROB_FP6_C2;

/* ---- Fp6 --------------------------------------------------------------------------------------
 */

void ld_fp6_set_zero(ld_fp6_t *r) {
  ld_fp2_set_zero(&r->c0);
  ld_fp2_set_zero(&r->c1);
  ld_fp2_set_zero(&r->c2);
}

void ld_fp6_set_one(ld_fp6_t *r) {
  ld_fp2_set_one(&r->c0);
  ld_fp2_set_zero(&r->c1);
  ld_fp2_set_zero(&r->c2);
}

void ld_fp6_add(ld_fp6_t *r, const ld_fp6_t *a, const ld_fp6_t *b) {
  ld_fp2_add(&r->c0, &a->c0, &b->c0);
  ld_fp2_add(&r->c1, &a->c1, &b->c1);
  ld_fp2_add(&r->c2, &a->c2, &b->c2);
}

void ld_fp6_sub(ld_fp6_t *r, const ld_fp6_t *a, const ld_fp6_t *b) {
  ld_fp2_sub(&r->c0, &a->c0, &b->c0);
  ld_fp2_sub(&r->c1, &a->c1, &b->c1);
  ld_fp2_sub(&r->c2, &a->c2, &b->c2);
}

void ld_fp6_neg(ld_fp6_t *r, const ld_fp6_t *a) {
  ld_fp2_neg(&r->c0, &a->c0);
  ld_fp2_neg(&r->c1, &a->c1);
  ld_fp2_neg(&r->c2, &a->c2);
}

int ld_fp6_equal(const ld_fp6_t *a, const ld_fp6_t *b) {
  return ld_fp2_equal(&a->c0, &b->c0) & ld_fp2_equal(&a->c1, &b->c1) & ld_fp2_equal(&a->c2, &b->c2);
}

/* Karatsuba over three coefficients (six Fp2 multiplications). */
void ld_fp6_mul(ld_fp6_t *r, const ld_fp6_t *a, const ld_fp6_t *b) {
  ld_fp2_t v0, v1, v2, s, t, c0, c1, c2;
  ld_fp2_mul(&v0, &a->c0, &b->c0);
  ld_fp2_mul(&v1, &a->c1, &b->c1);
  ld_fp2_mul(&v2, &a->c2, &b->c2);
  /* c0 = v0 + xi((a1 + a2)(b1 + b2) - v1 - v2) */
  ld_fp2_add(&s, &a->c1, &a->c2);
  ld_fp2_add(&t, &b->c1, &b->c2);
  ld_fp2_mul(&s, &s, &t);
  ld_fp2_sub(&s, &s, &v1);
  ld_fp2_sub(&s, &s, &v2);
  ld_fp2_mul_xi(&s, &s);
  ld_fp2_add(&c0, &s, &v0);
  /* c1 = (a0 + a1)(b0 + b1) - v0 - v1 + xi v2 */
  ld_fp2_add(&s, &a->c0, &a->c1);
  ld_fp2_add(&t, &b->c0, &b->c1);
  ld_fp2_mul(&s, &s, &t);
  ld_fp2_sub(&s, &s, &v0);
  ld_fp2_sub(&s, &s, &v1);
  ld_fp2_mul_xi(&t, &v2);
  ld_fp2_add(&c1, &s, &t);
  /* c2 = (a0 + a2)(b0 + b2) - v0 - v2 + v1 */
  ld_fp2_add(&s, &a->c0, &a->c2);
  ld_fp2_add(&t, &b->c0, &b->c2);
  ld_fp2_mul(&s, &s, &t);
  ld_fp2_sub(&s, &s, &v0);
  ld_fp2_sub(&s, &s, &v2);
  ld_fp2_add(&c2, &s, &v1);
  r->c0 = c0;
  r->c1 = c1;
  r->c2 = c2;
}

/* Chung-Hasan SQR2. */
void ld_fp6_sqr(ld_fp6_t *r, const ld_fp6_t *a) {
  ld_fp2_t s0, s1, s2, s3, s4, t;
  ld_fp2_sqr(&s0, &a->c0);
  ld_fp2_mul(&s1, &a->c0, &a->c1);
  ld_fp2_dbl(&s1, &s1);
  ld_fp2_sub(&s2, &a->c0, &a->c1);
  ld_fp2_add(&s2, &s2, &a->c2);
  ld_fp2_sqr(&s2, &s2);
  ld_fp2_mul(&s3, &a->c1, &a->c2);
  ld_fp2_dbl(&s3, &s3);
  ld_fp2_sqr(&s4, &a->c2);
  ld_fp2_mul_xi(&t, &s3);
  ld_fp2_add(&r->c0, &s0, &t);
  ld_fp2_add(&r->c2, &s1, &s2);
  ld_fp2_add(&r->c2, &r->c2, &s3);
  ld_fp2_sub(&r->c2, &r->c2, &s0);
  ld_fp2_sub(&r->c2, &r->c2, &s4);
  ld_fp2_mul_xi(&t, &s4);
  ld_fp2_add(&r->c1, &s1, &t);
}

void ld_fp6_mul_v(ld_fp6_t *r, const ld_fp6_t *a) {
  ld_fp2_t t;
  ld_fp2_mul_xi(&t, &a->c2);
  r->c2 = a->c1;
  r->c1 = a->c0;
  r->c0 = t;
}

void ld_fp6_mul_01(ld_fp6_t *r, const ld_fp6_t *a, const ld_fp2_t *b0, const ld_fp2_t *b1) {
  ld_fp2_t v0, v1, s, t, c0, c1, c2;
  ld_fp2_mul(&v0, &a->c0, b0);
  ld_fp2_mul(&v1, &a->c1, b1);
  /* c0 = xi((a1 + a2) b1 - v1) + v0 */
  ld_fp2_add(&s, &a->c1, &a->c2);
  ld_fp2_mul(&s, &s, b1);
  ld_fp2_sub(&s, &s, &v1);
  ld_fp2_mul_xi(&s, &s);
  ld_fp2_add(&c0, &s, &v0);
  /* c1 = (a0 + a1)(b0 + b1) - v0 - v1 */
  ld_fp2_add(&s, &a->c0, &a->c1);
  ld_fp2_add(&t, b0, b1);
  ld_fp2_mul(&s, &s, &t);
  ld_fp2_sub(&s, &s, &v0);
  ld_fp2_sub(&c1, &s, &v1);
  /* c2 = (a0 + a2) b0 - v0 + v1 */
  ld_fp2_add(&s, &a->c0, &a->c2);
  ld_fp2_mul(&s, &s, b0);
  ld_fp2_sub(&s, &s, &v0);
  ld_fp2_add(&c2, &s, &v1);
  r->c0 = c0;
  r->c1 = c1;
  r->c2 = c2;
}

void ld_fp6_inv(ld_fp6_t *r, const ld_fp6_t *a) {
  ld_fp2_t t0, t1, t2, s, den;
  /* t0 = a0^2 - xi a1 a2, t1 = xi a2^2 - a0 a1, t2 = a1^2 - a0 a2 */
  ld_fp2_sqr(&t0, &a->c0);
  ld_fp2_mul(&s, &a->c1, &a->c2);
  ld_fp2_mul_xi(&s, &s);
  ld_fp2_sub(&t0, &t0, &s);
  ld_fp2_sqr(&t1, &a->c2);
  ld_fp2_mul_xi(&t1, &t1);
  ld_fp2_mul(&s, &a->c0, &a->c1);
  ld_fp2_sub(&t1, &t1, &s);
  ld_fp2_sqr(&t2, &a->c1);
  ld_fp2_mul(&s, &a->c0, &a->c2);
  ld_fp2_sub(&t2, &t2, &s);
  /* den = a0 t0 + xi (a2 t1 + a1 t2) */
  ld_fp2_mul(&den, &a->c2, &t1);
  ld_fp2_mul(&s, &a->c1, &t2);
  ld_fp2_add(&den, &den, &s);
  ld_fp2_mul_xi(&den, &den);
  ld_fp2_mul(&s, &a->c0, &t0);
  ld_fp2_add(&den, &den, &s);
  ld_fp2_inv(&den, &den);
  ld_fp2_mul(&r->c0, &t0, &den);
  ld_fp2_mul(&r->c1, &t1, &den);
  ld_fp2_mul(&r->c2, &t2, &den);
}

static void fp6_frobenius(ld_fp6_t *r, const ld_fp6_t *a, unsigned k) {
  ld_fp2_t c0 = a->c0, c1 = a->c1, c2 = a->c2;
  if (k & 1) {
    ld_fp2_conj(&c0, &c0);
    ld_fp2_conj(&c1, &c1);
    ld_fp2_conj(&c2, &c2);
  }
  ld_fp2_mul(&c1, &c1, &FROB_FP6_C1[k % 6]);
  ld_fp2_mul(&c2, &c2, &FROB_FP6_C2[k % 6]);
  r->c0 = c0;
  r->c1 = c1;
  r->c2 = c2;
}

/* ---- Fp12 -------------------------------------------------------------------------------------
 */

void ld_fp12_set_one(ld_fp12_t *r) {
  ld_fp6_set_one(&r->c0);
  ld_fp6_set_zero(&r->c1);
}

int ld_fp12_equal(const ld_fp12_t *a, const ld_fp12_t *b) {
  return ld_fp6_equal(&a->c0, &b->c0) & ld_fp6_equal(&a->c1, &b->c1);
}

int ld_fp12_is_one(const ld_fp12_t *a) {
  ld_fp12_t one;
  ld_fp12_set_one(&one);
  return ld_fp12_equal(a, &one);
}

void ld_fp12_mul(ld_fp12_t *r, const ld_fp12_t *a, const ld_fp12_t *b) {
  ld_fp6_t v0, v1, s, t;
  ld_fp6_mul(&v0, &a->c0, &b->c0);
  ld_fp6_mul(&v1, &a->c1, &b->c1);
  ld_fp6_add(&s, &a->c0, &a->c1);
  ld_fp6_add(&t, &b->c0, &b->c1);
  ld_fp6_mul(&s, &s, &t);
  ld_fp6_sub(&s, &s, &v0);
  ld_fp6_sub(&r->c1, &s, &v1);
  ld_fp6_mul_v(&v1, &v1);
  ld_fp6_add(&r->c0, &v0, &v1);
}

/* Complex squaring: (a0 + a1 w)^2 = (a0 + a1)(a0 + v a1) - ab - v ab + 2ab w, ab = a0 a1. */
void ld_fp12_sqr(ld_fp12_t *r, const ld_fp12_t *a) {
  ld_fp6_t ab, s, t;
  ld_fp6_mul(&ab, &a->c0, &a->c1);
  ld_fp6_add(&s, &a->c0, &a->c1);
  ld_fp6_mul_v(&t, &a->c1);
  ld_fp6_add(&t, &t, &a->c0);
  ld_fp6_mul(&s, &s, &t);
  ld_fp6_sub(&s, &s, &ab);
  ld_fp6_mul_v(&t, &ab);
  ld_fp6_sub(&r->c0, &s, &t);
  ld_fp6_add(&r->c1, &ab, &ab);
}

void ld_fp12_mul_034(ld_fp12_t *r, const ld_fp12_t *a, const ld_fp2_t *c0, const ld_fp2_t *c3,
                     const ld_fp2_t *c4) {
  ld_fp6_t x, y, e;
  ld_fp2_t s;
  ld_fp2_mul(&x.c0, &a->c0.c0, c0);
  ld_fp2_mul(&x.c1, &a->c0.c1, c0);
  ld_fp2_mul(&x.c2, &a->c0.c2, c0);
  ld_fp6_mul_01(&y, &a->c1, c3, c4);
  ld_fp6_add(&e, &a->c0, &a->c1);
  ld_fp2_add(&s, c0, c3);
  ld_fp6_mul_01(&e, &e, &s, c4);
  ld_fp6_sub(&e, &e, &x);
  ld_fp6_sub(&r->c1, &e, &y);
  ld_fp6_mul_v(&y, &y);
  ld_fp6_add(&r->c0, &x, &y);
}

void ld_fp12_inv(ld_fp12_t *r, const ld_fp12_t *a) {
  /* 1/(a0 + a1 w) = (a0 - a1 w) / (a0^2 - v a1^2) */
  ld_fp6_t t0, t1;
  ld_fp6_sqr(&t0, &a->c0);
  ld_fp6_sqr(&t1, &a->c1);
  ld_fp6_mul_v(&t1, &t1);
  ld_fp6_sub(&t0, &t0, &t1);
  ld_fp6_inv(&t0, &t0);
  ld_fp6_mul(&r->c0, &a->c0, &t0);
  ld_fp6_mul(&t1, &a->c1, &t0);
  ld_fp6_neg(&r->c1, &t1);
}

void ld_fp12_conj(ld_fp12_t *r, const ld_fp12_t *a) {
  r->c0 = a->c0;
  ld_fp6_neg(&r->c1, &a->c1);
}

void ld_fp12_frobenius(ld_fp12_t *r, const ld_fp12_t *a, unsigned k) {
  k %= 12;
  ld_fp6_t c1;
  fp6_frobenius(&r->c0, &a->c0, k);
  fp6_frobenius(&c1, &a->c1, k);
  ld_fp2_mul(&r->c1.c0, &c1.c0, &FROB_GAMMA1[k]);
  ld_fp2_mul(&r->c1.c1, &c1.c1, &FROB_GAMMA1[k]);
  ld_fp2_mul(&r->c1.c2, &c1.c2, &FROB_GAMMA1[k]);
}

/* (a + b s)^2 in Fp4 = Fp2[s] / (s^2 - xi): returns a^2 + xi b^2 and 2ab. */
static void fp4_sqr(ld_fp2_t *c0, ld_fp2_t *c1, const ld_fp2_t *a, const ld_fp2_t *b) {
  ld_fp2_t t0, t1, t2;
  ld_fp2_sqr(&t0, a);
  ld_fp2_sqr(&t1, b);
  ld_fp2_mul_xi(&t2, &t1);
  ld_fp2_add(c0, &t2, &t0);
  ld_fp2_add(&t2, a, b);
  ld_fp2_sqr(&t2, &t2);
  ld_fp2_sub(&t2, &t2, &t0);
  ld_fp2_sub(c1, &t2, &t1);
}

/* z = 3t - 2z (for the real parts) and z = 3t + 2z (for the imaginary ones). */
static void cyclo_minus(ld_fp2_t *z, const ld_fp2_t *t) {
  ld_fp2_sub(z, t, z);
  ld_fp2_dbl(z, z);
  ld_fp2_add(z, z, t);
}

static void cyclo_plus(ld_fp2_t *z, const ld_fp2_t *t) {
  ld_fp2_add(z, t, z);
  ld_fp2_dbl(z, z);
  ld_fp2_add(z, z, t);
}

void ld_fp12_cyclotomic_sqr(ld_fp12_t *r, const ld_fp12_t *a) {
  /* Granger-Scott: Fp12 seen as Fp4^3 with the pairs (c0.c0, c1.c1), (c1.c0, c0.c2),
   * (c0.c1, c1.c2). */
  ld_fp2_t z0 = a->c0.c0, z4 = a->c0.c1, z3 = a->c0.c2;
  ld_fp2_t z2 = a->c1.c0, z1 = a->c1.c1, z5 = a->c1.c2;
  ld_fp2_t t0, t1, t2, t3;
  fp4_sqr(&t0, &t1, &z0, &z1);
  cyclo_minus(&z0, &t0);
  cyclo_plus(&z1, &t1);
  fp4_sqr(&t0, &t1, &z2, &z3);
  fp4_sqr(&t2, &t3, &z4, &z5);
  cyclo_minus(&z4, &t0);
  cyclo_plus(&z5, &t1);
  ld_fp2_mul_xi(&t0, &t3);
  cyclo_plus(&z2, &t0);
  cyclo_minus(&z3, &t2);
  r->c0.c0 = z0;
  r->c0.c1 = z4;
  r->c0.c2 = z3;
  r->c1.c0 = z2;
  r->c1.c1 = z1;
  r->c1.c2 = z5;
}

void ld_fp12_cyclotomic_exp(ld_fp12_t *r, const ld_fp12_t *a, uint64_t e) {
  ld_fp12_t acc, base = *a;
  ld_fp12_set_one(&acc);
  int top = 63;
  while (top >= 0 && ((e >> top) & 1) == 0) {
    top--;
  }
  for (int i = top; i >= 0; i--) {
    ld_fp12_cyclotomic_sqr(&acc, &acc);
    if ((e >> i) & 1) {
      ld_fp12_mul(&acc, &acc, &base);
    }
  }
  *r = acc;
}

void ld_fp12_pow_vartime(ld_fp12_t *r, const ld_fp12_t *a, const uint64_t *e, size_t n) {
  ld_fp12_t acc, base = *a;
  ld_fp12_set_one(&acc);
  for (size_t i = n * 64; i-- > 0;) {
    ld_fp12_sqr(&acc, &acc);
    if ((e[i / 64] >> (i % 64)) & 1) {
      ld_fp12_mul(&acc, &acc, &base);
    }
  }
  *r = acc;
}

void ld_fp12_to_bytes(uint8_t out[384], const ld_fp12_t *a) {
  const ld_fp6_t *halves[2] = {&a->c0, &a->c1};
  for (int h = 0; h < 2; h++) {
    ld_fp2_to_bytes(out + 192 * h, &halves[h]->c0);
    ld_fp2_to_bytes(out + 192 * h + 64, &halves[h]->c1);
    ld_fp2_to_bytes(out + 192 * h + 128, &halves[h]->c2);
  }
}
