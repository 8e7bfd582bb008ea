/* The pairing's target field: Fp6 = Fp2[v] / (v^3 - xi) and Fp12 = Fp6[w] / (w^2 - v), with
 * xi = 9 + u, the tower arkworks, gnark and snarkjs use for BN254. Constant-time except where a
 * name says vartime; outputs may alias inputs. */
#ifndef LD_ZK_FP12_H
#define LD_ZK_FP12_H

#include "zk/fp2.h"

typedef struct ld_fp6 {
  ld_fp2_t c0, c1, c2; /* c0 + c1 v + c2 v^2 */
} ld_fp6_t;

typedef struct ld_fp12 {
  ld_fp6_t c0, c1; /* c0 + c1 w */
} ld_fp12_t;

void ld_fp6_set_zero(ld_fp6_t *r);
void ld_fp6_set_one(ld_fp6_t *r);
void ld_fp6_add(ld_fp6_t *r, const ld_fp6_t *a, const ld_fp6_t *b);
void ld_fp6_sub(ld_fp6_t *r, const ld_fp6_t *a, const ld_fp6_t *b);
void ld_fp6_neg(ld_fp6_t *r, const ld_fp6_t *a);
void ld_fp6_mul(ld_fp6_t *r, const ld_fp6_t *a, const ld_fp6_t *b);
void ld_fp6_sqr(ld_fp6_t *r, const ld_fp6_t *a);
/* a * v */
void ld_fp6_mul_v(ld_fp6_t *r, const ld_fp6_t *a);
/* a * (b0 + b1 v) */
void ld_fp6_mul_01(ld_fp6_t *r, const ld_fp6_t *a, const ld_fp2_t *b0, const ld_fp2_t *b1);
void ld_fp6_inv(ld_fp6_t *r, const ld_fp6_t *a);
int ld_fp6_equal(const ld_fp6_t *a, const ld_fp6_t *b);

void ld_fp12_set_one(ld_fp12_t *r);
int ld_fp12_is_one(const ld_fp12_t *a);
int ld_fp12_equal(const ld_fp12_t *a, const ld_fp12_t *b);
void ld_fp12_mul(ld_fp12_t *r, const ld_fp12_t *a, const ld_fp12_t *b);
void ld_fp12_sqr(ld_fp12_t *r, const ld_fp12_t *a);
/* a * (c0 + c3 w + c4 v w): the sparse product with a D-type twist's line. */
void ld_fp12_mul_034(ld_fp12_t *r, const ld_fp12_t *a, const ld_fp2_t *c0, const ld_fp2_t *c3,
                     const ld_fp2_t *c4);
void ld_fp12_inv(ld_fp12_t *r, const ld_fp12_t *a);
/* a^(p^6): the inverse of an element of the cyclotomic subgroup. */
void ld_fp12_conj(ld_fp12_t *r, const ld_fp12_t *a);
/* a^(p^k), k = 0..11. */
void ld_fp12_frobenius(ld_fp12_t *r, const ld_fp12_t *a, unsigned k);
/* Squaring in the cyclotomic subgroup (Granger-Scott): valid only for a^((p^6-1)(p^2+1)) forms. */
void ld_fp12_cyclotomic_sqr(ld_fp12_t *r, const ld_fp12_t *a);
/* a^e for a cyclotomic a and a public 64-bit e. */
void ld_fp12_cyclotomic_exp(ld_fp12_t *r, const ld_fp12_t *a, uint64_t e);
/* a^e for any a and a public exponent of n 64-bit limbs (least significant first). */
void ld_fp12_pow_vartime(ld_fp12_t *r, const ld_fp12_t *a, const uint64_t *e, size_t n);

/* 384 bytes: the twelve Fp coefficients in the order c0.c0.c0, c0.c0.c1, c0.c1.c0, ... c1.c2.c1,
 * each 32 bytes little-endian (arkworks' uncompressed Fp12 layout). */
void ld_fp12_to_bytes(uint8_t out[384], const ld_fp12_t *a);

#endif
