/* Internal: 256-bit Montgomery arithmetic over a 4x64-bit modulus below 2^254 (both BN254 fields).
 *
 * Every function here runs in time independent of the values of its operands (no branches or
 * memory accesses that depend on them), so the fields built on it are constant-time. Values are
 * kept fully reduced (< modulus). Included by fp.c and fr.c only, which bind the modulus. */
#ifndef LD_ZK_MONT_H
#define LD_ZK_MONT_H

#include <stdint.h>
#include <string.h>

typedef unsigned __int128 ld_u128_t;

typedef struct {
  uint64_t m[4];   /* the modulus */
  uint64_t nprime; /* -m^-1 mod 2^64 */
  uint64_t one[4]; /* 2^256 mod m */
  uint64_t r2[4];  /* 2^512 mod m */
} ld_mont_t;

/* r = a - b over 256 bits; returns the borrow (0 or 1). */
static inline uint64_t mont_sub_raw(uint64_t r[4], const uint64_t a[4], const uint64_t b[4]) {
  uint64_t borrow = 0;
  for (int i = 0; i < 4; i++) {
    ld_u128_t d = (ld_u128_t)a[i] - b[i] - borrow;
    r[i] = (uint64_t)d;
    borrow = (uint64_t)(d >> 64) & 1;
  }
  return borrow;
}

/* r = a + b over 256 bits; returns the carry. */
static inline uint64_t mont_add_raw(uint64_t r[4], const uint64_t a[4], const uint64_t b[4]) {
  uint64_t carry = 0;
  for (int i = 0; i < 4; i++) {
    ld_u128_t s = (ld_u128_t)a[i] + b[i] + carry;
    r[i] = (uint64_t)s;
    carry = (uint64_t)(s >> 64);
  }
  return carry;
}

/* r = mask ? a : b, mask all ones or zero. */
static inline void mont_select(uint64_t r[4], uint64_t mask, const uint64_t a[4],
                               const uint64_t b[4]) {
  for (int i = 0; i < 4; i++) {
    r[i] = (a[i] & mask) | (b[i] & ~mask);
  }
}

/* r = t mod m for t < 2m. */
static inline void mont_reduce_once(uint64_t r[4], const uint64_t t[4], const ld_mont_t *f) {
  uint64_t s[4];
  uint64_t borrow = mont_sub_raw(s, t, f->m);
  mont_select(r, (uint64_t)0 - borrow, t, s);
}

static inline void mont_add(uint64_t r[4], const uint64_t a[4], const uint64_t b[4],
                            const ld_mont_t *f) {
  uint64_t t[4];
  mont_add_raw(t, a, b); /* no carry: a + b < 2m < 2^255 */
  mont_reduce_once(r, t, f);
}

static inline void mont_sub(uint64_t r[4], const uint64_t a[4], const uint64_t b[4],
                            const ld_mont_t *f) {
  uint64_t t[4], u[4];
  uint64_t borrow = mont_sub_raw(t, a, b);
  mont_add_raw(u, t, f->m);
  mont_select(r, (uint64_t)0 - borrow, u, t);
}

static inline void mont_neg(uint64_t r[4], const uint64_t a[4], const ld_mont_t *f) {
  uint64_t t[4];
  mont_sub_raw(t, f->m, a);
  uint64_t nz = a[0] | a[1] | a[2] | a[3];
  uint64_t mask = (uint64_t)0 - ((nz | ((uint64_t)0 - nz)) >> 63); /* all ones when a != 0 */
  for (int i = 0; i < 4; i++) {
    r[i] = t[i] & mask;
  }
}

/* Montgomery product a * b / 2^256 mod m (CIOS; the final carry is never needed because the
 * modulus' top word is below 2^63 - 1, so intermediate values stay below 2m). */
static inline void mont_mul(uint64_t r[4], const uint64_t a[4], const uint64_t b[4],
                            const ld_mont_t *f) {
  uint64_t t[4] = {0, 0, 0, 0};
  const uint64_t *m = f->m;
  for (int i = 0; i < 4; i++) {
    ld_u128_t acc = (ld_u128_t)a[0] * b[i] + t[0];
    uint64_t hi_a = (uint64_t)(acc >> 64);
    uint64_t lo = (uint64_t)acc;
    uint64_t q = lo * f->nprime;
    ld_u128_t red = (ld_u128_t)q * m[0] + lo;
    uint64_t hi_c = (uint64_t)(red >> 64);
    for (int j = 1; j < 4; j++) {
      acc = (ld_u128_t)a[j] * b[i] + t[j] + hi_a;
      hi_a = (uint64_t)(acc >> 64);
      red = (ld_u128_t)q * m[j] + (uint64_t)acc + hi_c;
      hi_c = (uint64_t)(red >> 64);
      t[j - 1] = (uint64_t)red;
    }
    t[3] = hi_a + hi_c;
  }
  mont_reduce_once(r, t, f);
}

/* 1 when a == b, else 0, without branching on the values. */
static inline int mont_equal(const uint64_t a[4], const uint64_t b[4]) {
  uint64_t d = (a[0] ^ b[0]) | (a[1] ^ b[1]) | (a[2] ^ b[2]) | (a[3] ^ b[3]);
  return (int)(1 ^ ((d | ((uint64_t)0 - d)) >> 63));
}

static inline int mont_is_zero(const uint64_t a[4]) {
  uint64_t d = a[0] | a[1] | a[2] | a[3];
  return (int)(1 ^ ((d | ((uint64_t)0 - d)) >> 63));
}

/* r = a^e for a public exponent e (256 bits, limbs least significant first): the sequence of
 * operations depends on e only. */
static inline void mont_pow(uint64_t r[4], const uint64_t a[4], const uint64_t e[4],
                            const ld_mont_t *f) {
  uint64_t acc[4], base[4];
  memcpy(acc, f->one, sizeof acc);
  memcpy(base, a, sizeof base);
  int top = 255;
  while (top > 0 && ((e[top / 64] >> (top % 64)) & 1) == 0) {
    top--;
  }
  for (int i = top; i >= 0; i--) {
    mont_mul(acc, acc, acc, f);
    if ((e[i / 64] >> (i % 64)) & 1) {
      mont_mul(acc, acc, base, f);
    }
  }
  memcpy(r, acc, sizeof acc);
}

/* Little-endian bytes <-> plain (non-Montgomery) limbs. */
static inline void mont_limbs_from_le(uint64_t r[4], const uint8_t in[32]) {
  for (int i = 0; i < 4; i++) {
    uint64_t w = 0;
    for (int j = 7; j >= 0; j--) {
      w = (w << 8) | in[8 * i + j];
    }
    r[i] = w;
  }
}

static inline void mont_limbs_to_le(uint8_t out[32], const uint64_t a[4]) {
  for (int i = 0; i < 4; i++) {
    for (int j = 0; j < 8; j++) {
      out[8 * i + j] = (uint8_t)(a[i] >> (8 * j));
    }
  }
}

/* 1 when the plain value a is below the modulus. */
static inline int mont_is_canonical(const uint64_t a[4], const ld_mont_t *f) {
  uint64_t t[4];
  return (int)mont_sub_raw(t, a, f->m);
}

#endif
