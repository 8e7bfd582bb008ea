/* Internal: 256-bit Montgomery arithmetic over a 4x64-bit modulus below 2^254 (both BN254 fields).
 *
 * Every function here runs in time independent of the values of its operands (no branches or
 * memory accesses that depend on them), so the fields built on it are constant-time. Values are
 * kept fully reduced (< modulus). Included by fp.c and fr.c only, which bind the modulus. */
#ifndef LD_ZK_MONT_H
#define LD_ZK_MONT_H

#include <stdint.h>
#include <string.h>

#if defined(__x86_64__)
#include <x86intrin.h>
#define LD_MONT_X86 1
#endif

typedef unsigned __int128 ld_u128_t;

/* 1 when the CPU has BMI2 and ADX (mulx, adcx, adox): mont_mul then takes the assembly path.
 * Set once at load time (field.c). */
extern int ld_mont_have_adx;

typedef struct {
  uint64_t m[4];   /* the modulus */
  uint64_t nprime; /* -m^-1 mod 2^64 */
  uint64_t one[4]; /* 2^256 mod m */
  uint64_t r2[4];  /* 2^512 mod m */
} ld_mont_t;

/* r = a - b over 256 bits; returns the borrow (0 or 1). */
static inline uint64_t mont_sub_raw(uint64_t r[4], const uint64_t a[4], const uint64_t b[4]) {
#ifdef LD_MONT_X86
  unsigned long long d0, d1, d2, d3;
  unsigned char borrow = _subborrow_u64(0, a[0], b[0], &d0);
  borrow = _subborrow_u64(borrow, a[1], b[1], &d1);
  borrow = _subborrow_u64(borrow, a[2], b[2], &d2);
  borrow = _subborrow_u64(borrow, a[3], b[3], &d3);
  r[0] = d0;
  r[1] = d1;
  r[2] = d2;
  r[3] = d3;
  return borrow;
#else
  uint64_t borrow = 0;
  for (int i = 0; i < 4; i++) {
    ld_u128_t d = (ld_u128_t)a[i] - b[i] - borrow;
    r[i] = (uint64_t)d;
    borrow = (uint64_t)(d >> 64) & 1;
  }
  return borrow;
#endif
}

/* r = a + b over 256 bits; returns the carry. */
static inline uint64_t mont_add_raw(uint64_t r[4], const uint64_t a[4], const uint64_t b[4]) {
#ifdef LD_MONT_X86
  unsigned long long s0, s1, s2, s3;
  unsigned char carry = _addcarry_u64(0, a[0], b[0], &s0);
  carry = _addcarry_u64(carry, a[1], b[1], &s1);
  carry = _addcarry_u64(carry, a[2], b[2], &s2);
  carry = _addcarry_u64(carry, a[3], b[3], &s3);
  r[0] = s0;
  r[1] = s1;
  r[2] = s2;
  r[3] = s3;
  return carry;
#else
  uint64_t carry = 0;
  for (int i = 0; i < 4; i++) {
    ld_u128_t s = (ld_u128_t)a[i] + b[i] + carry;
    r[i] = (uint64_t)s;
    carry = (uint64_t)(s >> 64);
  }
  return carry;
#endif
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
 * modulus' top word is below 2^63 - 1, so intermediate values stay below 2m). Portable C. */
static inline void mont_mul_c(uint64_t r[4], const uint64_t a[4], const uint64_t b[4],
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

#ifdef LD_MONT_X86
/* The same CIOS with mulx and two carry chains (adcx, adox): the multiplication by b[i] and the
 * reduction interleave as in gnark-crypto's generated amd64 code. Needs BMI2 and ADX. */
static inline __attribute__((always_inline)) void
mont_mul_adx(uint64_t r[4], const uint64_t x[4], const uint64_t y[4], const ld_mont_t *f) {
  uint64_t t0, t1, t2, t3, a, ax, bx;
  const uint64_t *q = f->m;
  uint64_t np = f->nprime;
  __asm__(
      /* i = 0: t = x * y[0] */
      "xorq %[ax], %[ax]\n\t"
      "movq 0(%[y]), %%rdx\n\t"
      "mulxq 0(%[x]), %[t0], %[t1]\n\t"
      "mulxq 8(%[x]), %[ax], %[t2]\n\t"
      "adoxq %[ax], %[t1]\n\t"
      "mulxq 16(%[x]), %[ax], %[t3]\n\t"
      "adoxq %[ax], %[t2]\n\t"
      "mulxq 24(%[x]), %[ax], %[a]\n\t"
      "adoxq %[ax], %[t3]\n\t"
      "movq $0, %[ax]\n\t"
      "adoxq %[ax], %[a]\n\t"
#define REDUCE                                                                                     \
  "movq %[np], %%rdx\n\t"                                                                          \
  "imulq %[t0], %%rdx\n\t"                                                                         \
  "xorq %[ax], %[ax]\n\t"                                                                          \
  "mulxq 0(%[q]), %[ax], %[bx]\n\t"                                                                \
  "adcxq %[t0], %[ax]\n\t"                                                                         \
  "movq %[bx], %[t0]\n\t"                                                                          \
  "adcxq %[t1], %[t0]\n\t"                                                                         \
  "mulxq 8(%[q]), %[ax], %[t1]\n\t"                                                                \
  "adoxq %[ax], %[t0]\n\t"                                                                         \
  "adcxq %[t2], %[t1]\n\t"                                                                         \
  "mulxq 16(%[q]), %[ax], %[t2]\n\t"                                                               \
  "adoxq %[ax], %[t1]\n\t"                                                                         \
  "adcxq %[t3], %[t2]\n\t"                                                                         \
  "mulxq 24(%[q]), %[ax], %[t3]\n\t"                                                               \
  "adoxq %[ax], %[t2]\n\t"                                                                         \
  "movq $0, %[ax]\n\t"                                                                             \
  "adcxq %[ax], %[t3]\n\t"                                                                         \
  "adoxq %[a], %[t3]\n\t"
#define MULSTEP(off)                                                                               \
  "movq " #off "(%[y]), %%rdx\n\t"                                                                 \
  "xorq %[ax], %[ax]\n\t"                                                                          \
  "mulxq 0(%[x]), %[ax], %[bx]\n\t"                                                                \
  "adoxq %[ax], %[t0]\n\t"                                                                         \
  "adcxq %[bx], %[t1]\n\t"                                                                         \
  "mulxq 8(%[x]), %[ax], %[bx]\n\t"                                                                \
  "adoxq %[ax], %[t1]\n\t"                                                                         \
  "adcxq %[bx], %[t2]\n\t"                                                                         \
  "mulxq 16(%[x]), %[ax], %[bx]\n\t"                                                               \
  "adoxq %[ax], %[t2]\n\t"                                                                         \
  "adcxq %[bx], %[t3]\n\t"                                                                         \
  "mulxq 24(%[x]), %[ax], %[a]\n\t"                                                                \
  "adoxq %[ax], %[t3]\n\t"                                                                         \
  "movq $0, %[ax]\n\t"                                                                             \
  "adcxq %[ax], %[a]\n\t"                                                                          \
  "adoxq %[ax], %[a]\n\t"
      REDUCE MULSTEP(8) REDUCE MULSTEP(16) REDUCE MULSTEP(24) REDUCE
#undef REDUCE
#undef MULSTEP
      : [t0] "=&r"(t0), [t1] "=&r"(t1), [t2] "=&r"(t2), [t3] "=&r"(t3), [a] "=&r"(a),
        [ax] "=&r"(ax), [bx] "=&r"(bx)
      : [x] "r"(x), [y] "r"(y), [q] "r"(q), [np] "rm"(np), "m"(*(const uint64_t(*)[4])x),
        "m"(*(const uint64_t(*)[4])y), "m"(*(const uint64_t(*)[4])q)
      : "rdx", "cc");
  const uint64_t t[4] = {t0, t1, t2, t3};
  mont_reduce_once(r, t, f);
}
#endif

static inline __attribute__((always_inline)) void
mont_mul(uint64_t r[4], const uint64_t a[4], const uint64_t b[4], const ld_mont_t *f) {
#ifdef LD_MONT_X86
  if (__builtin_expect(ld_mont_have_adx, 1)) {
    mont_mul_adx(r, a, b, f);
    return;
  }
#endif
  mont_mul_c(r, a, b, f);
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
