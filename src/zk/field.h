/* The BN254 base field Fp (p =
 * 21888242871839275222246405745257275088696311157297823662689037894645226208583) and scalar field
 * Fr (r = 21888242871839275222246405745257275088548364400416034343698204186575808495617).
 *
 * An element is four 64-bit limbs, least significant first, in Montgomery form (value * 2^256 mod
 * modulus), always fully reduced. The arithmetic below is inline and constant-time: no branch or
 * memory access depends on the values (the ones that take a public exponent depend on it only).
 * Functions named *_vartime may branch on their inputs; use them on public data only.
 *
 * Serialised form: 32 bytes little-endian of the canonical value, as arkworks and zerokit write
 * field elements; decoders reject values >= modulus (LD_ERR_OVERFLOW) unless they say they reduce.
 * Pure functions on caller storage; thread-safe. Outputs may alias inputs. */
#ifndef LD_ZK_FIELD_H
#define LD_ZK_FIELD_H

#include <stddef.h>
#include <stdint.h>

#include "zk/bn254_constants.h"
#include "zk/mont.h"

#define LD_FP_BYTES 32
#define LD_FR_BYTES 32

typedef struct ld_fp {
  uint64_t l[4];
} ld_fp_t;

typedef struct ld_fr {
  uint64_t l[4];
} ld_fr_t;

static const ld_mont_t LD_FP_MONT = {LD_BN254_P_LIMBS, LD_BN254_P_NPRIME, LD_BN254_P_ONE,
                                     LD_BN254_P_R2};
static const ld_mont_t LD_FR_MONT = {LD_BN254_R_LIMBS, LD_BN254_R_NPRIME, LD_BN254_R_ONE,
                                     LD_BN254_R_R2};

/* ---- Fp -------------------------------------------------------------------------------------- */

static inline void ld_fp_set_zero(ld_fp_t *r) {
  r->l[0] = r->l[1] = r->l[2] = r->l[3] = 0;
}
static inline void ld_fp_set_one(ld_fp_t *r) {
  memcpy(r->l, LD_FP_MONT.one, sizeof r->l);
}
static inline void ld_fp_add(ld_fp_t *r, const ld_fp_t *a, const ld_fp_t *b) {
  mont_add(r->l, a->l, b->l, &LD_FP_MONT);
}
static inline void ld_fp_sub(ld_fp_t *r, const ld_fp_t *a, const ld_fp_t *b) {
  mont_sub(r->l, a->l, b->l, &LD_FP_MONT);
}
static inline void ld_fp_neg(ld_fp_t *r, const ld_fp_t *a) {
  mont_neg(r->l, a->l, &LD_FP_MONT);
}
static inline void ld_fp_dbl(ld_fp_t *r, const ld_fp_t *a) {
  mont_add(r->l, a->l, a->l, &LD_FP_MONT);
}
static inline void ld_fp_mul(ld_fp_t *r, const ld_fp_t *a, const ld_fp_t *b) {
  mont_mul(r->l, a->l, b->l, &LD_FP_MONT);
}
static inline void ld_fp_sqr(ld_fp_t *r, const ld_fp_t *a) {
  mont_mul(r->l, a->l, a->l, &LD_FP_MONT);
}
static inline int ld_fp_equal(const ld_fp_t *a, const ld_fp_t *b) {
  return mont_equal(a->l, b->l);
}
static inline int ld_fp_is_zero(const ld_fp_t *a) {
  return mont_is_zero(a->l);
}
/* r = mask ? a : b with mask 0 or 1, constant-time. */
static inline void ld_fp_select(ld_fp_t *r, int mask, const ld_fp_t *a, const ld_fp_t *b) {
  mont_select(r->l, (uint64_t)0 - (uint64_t)(mask & 1), a->l, b->l);
}

/* a^e for a public 256-bit exponent (limbs least significant first). */
void ld_fp_pow(ld_fp_t *r, const ld_fp_t *a, const uint64_t e[4]);
/* 1/a by Bernstein and Yang's safegcd (constant-time: a fixed count of branch-free divsteps);
 * 0 maps to 0. */
void ld_fp_inv(ld_fp_t *r, const ld_fp_t *a);
/* 1/a by Fermat's little theorem (constant-time); 0 maps to 0. The reference for ld_fp_inv. */
void ld_fp_inv_fermat(ld_fp_t *r, const ld_fp_t *a);
/* A square root of a (a^((p+1)/4), constant-time). Returns 1 and sets r when a is a square,
 * returns 0 (r unspecified) when it is not. */
int ld_fp_sqrt(ld_fp_t *r, const ld_fp_t *a);
/* 1 when a is a non-zero square, 0 when zero or a non-square (Euler's criterion). */
int ld_fp_is_square(const ld_fp_t *a);

void ld_fp_from_u64(ld_fp_t *r, uint64_t v);
/* Canonical little-endian encoding. 0, or LD_ERR_OVERFLOW when the value is >= p. */
int ld_fp_from_bytes(ld_fp_t *r, const uint8_t in[LD_FP_BYTES]);
void ld_fp_to_bytes(uint8_t out[LD_FP_BYTES], const ld_fp_t *a);
/* Plain (non-Montgomery) canonical limbs, for comparisons and bit access. */
void ld_fp_to_limbs(uint64_t out[4], const ld_fp_t *a);
/* Parses a decimal string of at most 80 digits, as snarkjs writes field elements: 0,
 * LD_ERR_MALFORMED for an empty string or a non-digit, LD_ERR_OVERFLOW for a value >= p. */
int ld_fp_from_decimal(ld_fp_t *r, const char *s, size_t len);
/* 1 when canonical(a) > canonical(-a), i.e. a > (p-1)/2: arkworks' "negative" y. */
int ld_fp_is_lexicographically_largest(const ld_fp_t *a);
/* Compares canonical values: -1, 0, 1. Variable-time. */
int ld_fp_cmp_vartime(const ld_fp_t *a, const ld_fp_t *b);

/* ---- Fr -------------------------------------------------------------------------------------- */

static inline void ld_fr_set_zero(ld_fr_t *r) {
  r->l[0] = r->l[1] = r->l[2] = r->l[3] = 0;
}
static inline void ld_fr_set_one(ld_fr_t *r) {
  memcpy(r->l, LD_FR_MONT.one, sizeof r->l);
}
static inline void ld_fr_add(ld_fr_t *r, const ld_fr_t *a, const ld_fr_t *b) {
  mont_add(r->l, a->l, b->l, &LD_FR_MONT);
}
static inline void ld_fr_sub(ld_fr_t *r, const ld_fr_t *a, const ld_fr_t *b) {
  mont_sub(r->l, a->l, b->l, &LD_FR_MONT);
}
static inline void ld_fr_neg(ld_fr_t *r, const ld_fr_t *a) {
  mont_neg(r->l, a->l, &LD_FR_MONT);
}
static inline void ld_fr_mul(ld_fr_t *r, const ld_fr_t *a, const ld_fr_t *b) {
  mont_mul(r->l, a->l, b->l, &LD_FR_MONT);
}
static inline void ld_fr_sqr(ld_fr_t *r, const ld_fr_t *a) {
  mont_mul(r->l, a->l, a->l, &LD_FR_MONT);
}
static inline int ld_fr_equal(const ld_fr_t *a, const ld_fr_t *b) {
  return mont_equal(a->l, b->l);
}
static inline int ld_fr_is_zero(const ld_fr_t *a) {
  return mont_is_zero(a->l);
}

void ld_fr_pow(ld_fr_t *r, const ld_fr_t *a, const uint64_t e[4]);
/* 1/a by Fermat's little theorem (constant-time); 0 maps to 0. */
void ld_fr_inv(ld_fr_t *r, const ld_fr_t *a);
/* 1/a for public a by the binary extended Euclidean algorithm (variable-time); 0 maps to 0. */
void ld_fr_inv_vartime(ld_fr_t *r, const ld_fr_t *a);
/* Inverts a[0..n) in place with one inversion (Montgomery's trick); zeros stay zero. `scratch`
 * holds n elements. Constant-time in the values when `vartime` is 0. */
void ld_fr_batch_inv(ld_fr_t *a, size_t n, ld_fr_t *scratch, int vartime);

void ld_fr_from_u64(ld_fr_t *r, uint64_t v);
/* Canonical little-endian encoding: 0, or LD_ERR_OVERFLOW when the value is >= r. */
int ld_fr_from_bytes(ld_fr_t *r, const uint8_t in[LD_FR_BYTES]);
/* Any 32 little-endian bytes, reduced mod r (as arkworks' from_le_bytes_mod_order and zerokit's
 * bytes_le_to_fr do). Constant-time. */
void ld_fr_from_bytes_reduce(ld_fr_t *r, const uint8_t in[LD_FR_BYTES]);
void ld_fr_to_bytes(uint8_t out[LD_FR_BYTES], const ld_fr_t *a);
void ld_fr_to_limbs(uint64_t out[4], const ld_fr_t *a);
/* As ld_fp_from_decimal, against r. */
int ld_fr_from_decimal(ld_fr_t *r, const char *s, size_t len);

#endif
