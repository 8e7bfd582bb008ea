/* Fp2 = Fp[u] / (u^2 + 1), the field of G2's coordinates, and the non-residue xi = 9 + u over
 * which Fp6 and Fp12 are built (fp12.h). An element is c0 + c1 u. Constant-time like field.h;
 * outputs may alias inputs.
 *
 * Serialised as arkworks does: c0 then c1, each 32 bytes little-endian. */
#ifndef LD_ZK_FP2_H
#define LD_ZK_FP2_H

#include "zk/field.h"

typedef struct ld_fp2 {
  ld_fp_t c0, c1;
} ld_fp2_t;

static inline void ld_fp2_set_zero(ld_fp2_t *r) {
  ld_fp_set_zero(&r->c0);
  ld_fp_set_zero(&r->c1);
}
static inline void ld_fp2_set_one(ld_fp2_t *r) {
  ld_fp_set_one(&r->c0);
  ld_fp_set_zero(&r->c1);
}
static inline void ld_fp2_add(ld_fp2_t *r, const ld_fp2_t *a, const ld_fp2_t *b) {
  ld_fp_add(&r->c0, &a->c0, &b->c0);
  ld_fp_add(&r->c1, &a->c1, &b->c1);
}
static inline void ld_fp2_sub(ld_fp2_t *r, const ld_fp2_t *a, const ld_fp2_t *b) {
  ld_fp_sub(&r->c0, &a->c0, &b->c0);
  ld_fp_sub(&r->c1, &a->c1, &b->c1);
}
static inline void ld_fp2_dbl(ld_fp2_t *r, const ld_fp2_t *a) {
  ld_fp_dbl(&r->c0, &a->c0);
  ld_fp_dbl(&r->c1, &a->c1);
}
static inline void ld_fp2_neg(ld_fp2_t *r, const ld_fp2_t *a) {
  ld_fp_neg(&r->c0, &a->c0);
  ld_fp_neg(&r->c1, &a->c1);
}
static inline void ld_fp2_conj(ld_fp2_t *r, const ld_fp2_t *a) {
  r->c0 = a->c0;
  ld_fp_neg(&r->c1, &a->c1);
}
/* Karatsuba: three Fp multiplications. */
static inline void ld_fp2_mul(ld_fp2_t *r, const ld_fp2_t *a, const ld_fp2_t *b) {
  ld_fp_t v0, v1, s, t;
  ld_fp_mul(&v0, &a->c0, &b->c0);
  ld_fp_mul(&v1, &a->c1, &b->c1);
  ld_fp_add(&s, &a->c0, &a->c1);
  ld_fp_add(&t, &b->c0, &b->c1);
  ld_fp_mul(&s, &s, &t);
  ld_fp_sub(&s, &s, &v0);
  ld_fp_sub(&r->c1, &s, &v1);
  ld_fp_sub(&r->c0, &v0, &v1);
}
/* (a0 + a1 u)^2 = (a0 + a1)(a0 - a1) + 2 a0 a1 u. */
static inline void ld_fp2_sqr(ld_fp2_t *r, const ld_fp2_t *a) {
  ld_fp_t s, d, m;
  ld_fp_add(&s, &a->c0, &a->c1);
  ld_fp_sub(&d, &a->c0, &a->c1);
  ld_fp_mul(&m, &a->c0, &a->c1);
  ld_fp_mul(&r->c0, &s, &d);
  ld_fp_dbl(&r->c1, &m);
}
static inline void ld_fp2_mul_fp(ld_fp2_t *r, const ld_fp2_t *a, const ld_fp_t *b) {
  ld_fp_mul(&r->c0, &a->c0, b);
  ld_fp_mul(&r->c1, &a->c1, b);
}
/* a * (9 + u) = (9 a0 - a1) + (a0 + 9 a1) u. */
static inline void ld_fp2_mul_xi(ld_fp2_t *r, const ld_fp2_t *a) {
  ld_fp_t n0, n1;
  ld_fp_dbl(&n0, &a->c0);
  ld_fp_dbl(&n0, &n0);
  ld_fp_dbl(&n0, &n0);
  ld_fp_add(&n0, &n0, &a->c0);
  ld_fp_dbl(&n1, &a->c1);
  ld_fp_dbl(&n1, &n1);
  ld_fp_dbl(&n1, &n1);
  ld_fp_add(&n1, &n1, &a->c1);
  ld_fp_sub(&n0, &n0, &a->c1);
  ld_fp_add(&r->c1, &n1, &a->c0);
  r->c0 = n0;
}
static inline int ld_fp2_equal(const ld_fp2_t *a, const ld_fp2_t *b) {
  return ld_fp_equal(&a->c0, &b->c0) & ld_fp_equal(&a->c1, &b->c1);
}
static inline int ld_fp2_is_zero(const ld_fp2_t *a) {
  return ld_fp_is_zero(&a->c0) & ld_fp_is_zero(&a->c1);
}

/* 1/a (constant-time; 0 maps to 0). */
void ld_fp2_inv(ld_fp2_t *r, const ld_fp2_t *a);
/* a^e for a public 256-bit exponent. */
void ld_fp2_pow(ld_fp2_t *r, const ld_fp2_t *a, const uint64_t e[4]);
/* A square root of a (p = 3 mod 4 method of Adj and Rodriguez-Henriquez). 1 and r set when a is
 * a square, else 0. Variable-time: for public data (point decompression). */
int ld_fp2_sqrt_vartime(ld_fp2_t *r, const ld_fp2_t *a);
/* arkworks' order on Fp2 compares c1 first, then c0: 1 when a > -a in that order, the "negative"
 * y of a compressed G2 point. */
int ld_fp2_is_lexicographically_largest(const ld_fp2_t *a);

/* 64 bytes c0 ‖ c1, each canonical little-endian. 0 or LD_ERR_OVERFLOW. */
int ld_fp2_from_bytes(ld_fp2_t *r, const uint8_t in[64]);
void ld_fp2_to_bytes(uint8_t out[64], const ld_fp2_t *a);

#endif
