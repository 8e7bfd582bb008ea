/* Fp2: inversion, exponentiation, square roots and encodings. */
#include "zk/fp2.h"

#include "base/error.h"

static const uint64_t P_MINUS_3_DIV_4[4] = LD_BN254_P_MINUS_3_DIV_4;
static const uint64_t P_MINUS_1_DIV_2[4] = LD_BN254_P_MINUS_1_DIV_2;

void ld_fp2_inv(ld_fp2_t *r, const ld_fp2_t *a) {
  /* 1/(a0 + a1 u) = (a0 - a1 u) / (a0^2 + a1^2) */
  ld_fp_t t0, t1;
  ld_fp_sqr(&t0, &a->c0);
  ld_fp_sqr(&t1, &a->c1);
  ld_fp_add(&t0, &t0, &t1);
  ld_fp_inv(&t0, &t0);
  ld_fp_mul(&r->c0, &a->c0, &t0);
  ld_fp_mul(&t1, &a->c1, &t0);
  ld_fp_neg(&r->c1, &t1);
}

void ld_fp2_pow(ld_fp2_t *r, const ld_fp2_t *a, const uint64_t e[4]) {
  ld_fp2_t acc, base = *a;
  ld_fp2_set_one(&acc);
  for (int i = 255; i >= 0; i--) {
    ld_fp2_sqr(&acc, &acc);
    if ((e[i / 64] >> (i % 64)) & 1) {
      ld_fp2_mul(&acc, &acc, &base);
    }
  }
  *r = acc;
}

int ld_fp2_sqrt_vartime(ld_fp2_t *r, const ld_fp2_t *a) {
  if (ld_fp2_is_zero(a)) {
    ld_fp2_set_zero(r);
    return 1;
  }
  /* Algorithm 9 of "Square root computation over even extension fields" (p = 3 mod 4). */
  ld_fp2_t a1, alpha, a0, x0, minus_one, check;
  ld_fp2_pow(&a1, a, P_MINUS_3_DIV_4);
  ld_fp2_mul(&alpha, &a1, a);
  ld_fp2_mul(&alpha, &alpha, &a1); /* a^((p-1)/2) */
  ld_fp2_conj(&a0, &alpha);        /* alpha^p */
  ld_fp2_mul(&a0, &a0, &alpha);
  ld_fp2_set_one(&minus_one);
  ld_fp2_neg(&minus_one, &minus_one);
  if (ld_fp2_equal(&a0, &minus_one)) {
    return 0;
  }
  ld_fp2_mul(&x0, &a1, a);
  if (ld_fp2_equal(&alpha, &minus_one)) {
    /* x = u * x0 */
    ld_fp_t t = x0.c0;
    ld_fp_neg(&r->c0, &x0.c1);
    r->c1 = t;
  } else {
    ld_fp2_t b, one;
    ld_fp2_set_one(&one);
    ld_fp2_add(&b, &alpha, &one);
    ld_fp2_pow(&b, &b, P_MINUS_1_DIV_2);
    ld_fp2_mul(r, &b, &x0);
  }
  ld_fp2_sqr(&check, r);
  return ld_fp2_equal(&check, a);
}

int ld_fp2_is_lexicographically_largest(const ld_fp2_t *a) {
  if (!ld_fp_is_zero(&a->c1)) {
    return ld_fp_is_lexicographically_largest(&a->c1);
  }
  return ld_fp_is_lexicographically_largest(&a->c0);
}

int ld_fp2_from_bytes(ld_fp2_t *r, const uint8_t in[64]) {
  int rc = ld_fp_from_bytes(&r->c0, in);
  if (rc == 0) {
    rc = ld_fp_from_bytes(&r->c1, in + 32);
  }
  return rc;
}

void ld_fp2_to_bytes(uint8_t out[64], const ld_fp2_t *a) {
  ld_fp_to_bytes(out, &a->c0);
  ld_fp_to_bytes(out + 32, &a->c1);
}
