/* Eight BN254 Fp elements at once with AVX-512 IFMA: one element per 64-bit lane in radix 2^52,
 * limb j of the eight lanes in one register, in ld_fp_t's Montgomery form (x 2^256 mod p).
 *
 * Multiplication (operand scanning, per lane) reduces by five 52-bit steps, i.e. divides by
 * 2^260, so one operand enters multiplied by 16 (a shift by 4 bits, not reduced: 16 b < 2^258
 * fits the five limbs): a (16 b) / 2^260 = a b / 2^256. For i = 0..4, t += a * (16 b)_i, then
 * m = t_0 * (-p^-1) mod 2^52 and t += m * p, which clears t's low 52 bits; t is shifted down one
 * limb (t_0's bits above 52 carried into t_1). vpmadd52luq / vpmadd52huq add the low / high 52
 * bits of a 52 x 52-bit product to a 64-bit accumulator, so the limbs of t collect carries
 * instead of propagating them: limb j gains at most four terms below 2^52 per step, and five
 * steps keep every limb below 2^58. At the end t = (16 a b + M p) / 2^260 with M < 2^260, so for
 * a, b < p, t < 16 p^2 / 2^260 + p < 1.25 p: one carry propagation with a subtraction of p and
 * one conditional addition of p give the reduced result. */
#include "zk/fp_ifma.h"

#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "zk/fp2.h"

static int forced_scalar;

void ld_fp8_force_scalar(int on) {
  __atomic_store_n(&forced_scalar, on != 0, __ATOMIC_RELAXED);
}

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define LD_FP8_X86 1
#include <immintrin.h>
#endif

#ifdef LD_FP8_X86

#define LIMB_BITS 52
#define LIMB_MASK ((UINT64_C(1) << LIMB_BITS) - 1)

/* p in radix 2^52. */
static const uint64_t P52[LD_FP8_LIMBS] = {0x8c16d87cfd47ULL, 0x916871ca8d3c2ULL,
                                           0x181585d97816aULL, 0xa029b85045b68ULL,
                                           0x30644e72e131ULL};
/* -p^-1 mod 2^52 */
#define NPRIME52 0x20782e4866389ULL
/* r (the order of G1 and G2, Fr's modulus) in radix 2^52, and -r^-1 mod 2^52: Fr in lanes is
 * the same code over another modulus below 2^254. */
static const uint64_t R52[LD_FP8_LIMBS] = {0x1f593f0000001ULL, 0x4879b9709143eULL,
                                           0x181585d2833e8ULL, 0xa029b85045b68ULL,
                                           0x30644e72e131ULL};
#define RNPRIME52 0x1f593efffffffULL
#define FP8_TARGET __attribute__((target("avx512f,avx512ifma")))
#define FP8_INLINE static inline __attribute__((target("avx512f,avx512ifma"), always_inline))

int ld_fp8_available(void) {
  if (__atomic_load_n(&forced_scalar, __ATOMIC_RELAXED)) {
    return 0;
  }
  static int cached = -1;
  int have = __atomic_load_n(&cached, __ATOMIC_RELAXED);
  if (have < 0) {
    __builtin_cpu_init();
    have = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512ifma");
    __atomic_store_n(&cached, have, __ATOMIC_RELAXED);
  }
  return have;
}

FP8_INLINE void fp8v_load(__m512i r[LD_FP8_LIMBS], const ld_fp8_t *a) {
  for (int j = 0; j < LD_FP8_LIMBS; j++) {
    r[j] = _mm512_load_si512((const void *)a->v[j]);
  }
}

FP8_INLINE void fp8v_store(ld_fp8_t *r, const __m512i a[LD_FP8_LIMBS]) {
  for (int j = 0; j < LD_FP8_LIMBS; j++) {
    _mm512_store_si512((void *)r->v[j], a[j]);
  }
}

/* r = u + (p if u is negative else 0), u's limbs 0..3 in [0, 2^52) and limb 4 signed, the
 * value u in [-p, p): r in [0, p), normalised. */
FP8_INLINE void fp8v_add_p_if_negative(__m512i r[LD_FP8_LIMBS], const __m512i u[LD_FP8_LIMBS],
                                       const uint64_t *m52) {
  const __m512i mask = _mm512_set1_epi64((long long)LIMB_MASK);
  const __m512i neg = _mm512_srai_epi64(u[4], 63);
  __m512i carry = _mm512_setzero_si512();
  for (int j = 0; j < LD_FP8_LIMBS; j++) {
    __m512i p = _mm512_and_si512(_mm512_set1_epi64((long long)m52[j]), neg);
    __m512i s = _mm512_add_epi64(_mm512_add_epi64(u[j], p), carry);
    if (j + 1 < LD_FP8_LIMBS) {
      carry = _mm512_srli_epi64(s, LIMB_BITS);
      s = _mm512_and_si512(s, mask);
    }
    r[j] = s;
  }
}

/* r = t mod p for t in [0, 2p) whose limbs may exceed 52 bits (below 2^62): t - p with the
 * carries propagated (signed), then p added back when that went negative. */
FP8_INLINE void fp8v_reduce_below_2p(__m512i r[LD_FP8_LIMBS], const __m512i t[LD_FP8_LIMBS],
                                     const uint64_t *m52) {
  const __m512i mask = _mm512_set1_epi64((long long)LIMB_MASK);
  __m512i u[LD_FP8_LIMBS], carry = _mm512_setzero_si512();
  for (int j = 0; j < LD_FP8_LIMBS; j++) {
    __m512i d = _mm512_sub_epi64(t[j], _mm512_set1_epi64((long long)m52[j]));
    d = _mm512_add_epi64(d, carry);
    if (j + 1 < LD_FP8_LIMBS) {
      carry = _mm512_srai_epi64(d, LIMB_BITS);
      d = _mm512_and_si512(d, mask);
    }
    u[j] = d;
  }
  fp8v_add_p_if_negative(r, u, m52);
}

/* r = 16 b (not reduced: below 16 p < 2^258), limbs normalised: a shift by 4 bits. */
FP8_INLINE void fp8v_times16(__m512i r[LD_FP8_LIMBS], const __m512i b[LD_FP8_LIMBS]) {
  const __m512i mask = _mm512_set1_epi64((long long)LIMB_MASK);
  r[0] = _mm512_and_si512(_mm512_slli_epi64(b[0], 4), mask);
  for (int j = 1; j < LD_FP8_LIMBS; j++) {
    r[j] = _mm512_or_si512(_mm512_slli_epi64(b[j], 4), _mm512_srli_epi64(b[j - 1], LIMB_BITS - 4));
    if (j + 1 < LD_FP8_LIMBS) {
      r[j] = _mm512_and_si512(r[j], mask);
    }
  }
}

/* r = a b / 2^260 mod p, lane by lane, for a < p and b < 16 p with normalised limbs (p the
 * modulus m52 below 2^254, nprime52 = -p^-1 mod 2^52). */
FP8_INLINE void fp8v_mont260(__m512i r[LD_FP8_LIMBS], const __m512i a[LD_FP8_LIMBS],
                             const __m512i b[LD_FP8_LIMBS], const uint64_t *m52,
                             uint64_t nprime52) {
  const __m512i zero = _mm512_setzero_si512();
  const __m512i nprime = _mm512_set1_epi64((long long)nprime52);
  __m512i p[LD_FP8_LIMBS];
  for (int j = 0; j < LD_FP8_LIMBS; j++) {
    p[j] = _mm512_set1_epi64((long long)m52[j]);
  }
  __m512i t0 = zero, t1 = zero, t2 = zero, t3 = zero, t4 = zero, t5;
  for (int i = 0; i < LD_FP8_LIMBS; i++) {
    const __m512i bi = b[i];
    /* t += a * b_i: low halves into limb j, high halves into limb j + 1 */
    t0 = _mm512_madd52lo_epu64(t0, a[0], bi);
    t1 = _mm512_madd52hi_epu64(t1, a[0], bi);
    t1 = _mm512_madd52lo_epu64(t1, a[1], bi);
    t2 = _mm512_madd52hi_epu64(t2, a[1], bi);
    t2 = _mm512_madd52lo_epu64(t2, a[2], bi);
    t3 = _mm512_madd52hi_epu64(t3, a[2], bi);
    t3 = _mm512_madd52lo_epu64(t3, a[3], bi);
    t4 = _mm512_madd52hi_epu64(t4, a[3], bi);
    t4 = _mm512_madd52lo_epu64(t4, a[4], bi);
    t5 = _mm512_madd52hi_epu64(zero, a[4], bi);
    /* t += m * p with m = t_0 * (-p^-1) mod 2^52: t_0's low 52 bits become zero */
    const __m512i m = _mm512_madd52lo_epu64(zero, t0, nprime);
    t0 = _mm512_madd52lo_epu64(t0, m, p[0]);
    t1 = _mm512_madd52hi_epu64(t1, m, p[0]);
    t1 = _mm512_madd52lo_epu64(t1, m, p[1]);
    t2 = _mm512_madd52hi_epu64(t2, m, p[1]);
    t2 = _mm512_madd52lo_epu64(t2, m, p[2]);
    t3 = _mm512_madd52hi_epu64(t3, m, p[2]);
    t3 = _mm512_madd52lo_epu64(t3, m, p[3]);
    t4 = _mm512_madd52hi_epu64(t4, m, p[3]);
    t4 = _mm512_madd52lo_epu64(t4, m, p[4]);
    t5 = _mm512_madd52hi_epu64(t5, m, p[4]);
    /* t /= 2^52: t_0's carry into t_1, the limbs move down */
    t0 = _mm512_add_epi64(t1, _mm512_srli_epi64(t0, LIMB_BITS));
    t1 = t2;
    t2 = t3;
    t3 = t4;
    t4 = t5;
  }
  const __m512i t[LD_FP8_LIMBS] = {t0, t1, t2, t3, t4};
  fp8v_reduce_below_2p(r, t, m52);
}

/* r = a b mod m in the Montgomery form of R = 2^256, for a, b < m: a (16 b) / 2^260. */
FP8_INLINE void mod8v_mul(__m512i r[LD_FP8_LIMBS], const __m512i a[LD_FP8_LIMBS],
                          const __m512i b[LD_FP8_LIMBS], const uint64_t *m52, uint64_t nprime52) {
  __m512i b16[LD_FP8_LIMBS];
  fp8v_times16(b16, b);
  fp8v_mont260(r, a, b16, m52, nprime52);
}

/* r = a + b mod m for a, b < m. */
FP8_INLINE void mod8v_add(__m512i r[LD_FP8_LIMBS], const __m512i a[LD_FP8_LIMBS],
                          const __m512i b[LD_FP8_LIMBS], const uint64_t *m52) {
  __m512i s[LD_FP8_LIMBS];
  for (int j = 0; j < LD_FP8_LIMBS; j++) {
    s[j] = _mm512_add_epi64(a[j], b[j]);
  }
  fp8v_reduce_below_2p(r, s, m52);
}

/* r = a - b mod m for a, b < m. */
FP8_INLINE void mod8v_sub(__m512i r[LD_FP8_LIMBS], const __m512i a[LD_FP8_LIMBS],
                          const __m512i b[LD_FP8_LIMBS], const uint64_t *m52) {
  const __m512i mask = _mm512_set1_epi64((long long)LIMB_MASK);
  __m512i u[LD_FP8_LIMBS], carry = _mm512_setzero_si512();
  for (int j = 0; j < LD_FP8_LIMBS; j++) {
    __m512i d = _mm512_add_epi64(_mm512_sub_epi64(a[j], b[j]), carry);
    if (j + 1 < LD_FP8_LIMBS) {
      carry = _mm512_srai_epi64(d, LIMB_BITS);
      d = _mm512_and_si512(d, mask);
    }
    u[j] = d;
  }
  fp8v_add_p_if_negative(r, u, m52);
}

/* Fp: r = a b, a + b, a - b mod p. */
FP8_INLINE void fp8v_mul(__m512i r[LD_FP8_LIMBS], const __m512i a[LD_FP8_LIMBS],
                         const __m512i b[LD_FP8_LIMBS]) {
  mod8v_mul(r, a, b, P52, NPRIME52);
}

FP8_INLINE void fp8v_add(__m512i r[LD_FP8_LIMBS], const __m512i a[LD_FP8_LIMBS],
                         const __m512i b[LD_FP8_LIMBS]) {
  mod8v_add(r, a, b, P52);
}

FP8_INLINE void fp8v_sub(__m512i r[LD_FP8_LIMBS], const __m512i a[LD_FP8_LIMBS],
                         const __m512i b[LD_FP8_LIMBS]) {
  mod8v_sub(r, a, b, P52);
}

/* The 8 x 4 limbs of eight ld_fp_t (four registers, two elements each: e[0] = a0 a1, ...)
 * transposed into four registers of one limb each (w[k] = limb k of a0 .. a7), and back. The
 * same index pattern serves both directions. */
FP8_INLINE void fp8v_transpose(__m512i out[4], const __m512i in[4]) {
  const __m512i even = _mm512_setr_epi64(0, 4, 8, 12, 1, 5, 9, 13);
  const __m512i odd = _mm512_setr_epi64(2, 6, 10, 14, 3, 7, 11, 15);
  const __m512i low = _mm512_setr_epi64(0, 1, 2, 3, 8, 9, 10, 11);
  const __m512i high = _mm512_setr_epi64(4, 5, 6, 7, 12, 13, 14, 15);
  __m512i u0 = _mm512_permutex2var_epi64(in[0], even, in[1]);
  __m512i u1 = _mm512_permutex2var_epi64(in[0], odd, in[1]);
  __m512i v0 = _mm512_permutex2var_epi64(in[2], even, in[3]);
  __m512i v1 = _mm512_permutex2var_epi64(in[2], odd, in[3]);
  out[0] = _mm512_permutex2var_epi64(u0, low, v0);
  out[1] = _mm512_permutex2var_epi64(u0, high, v0);
  out[2] = _mm512_permutex2var_epi64(u1, low, v1);
  out[3] = _mm512_permutex2var_epi64(u1, high, v1);
}

/* The inverse of fp8v_transpose. */
FP8_INLINE void fp8v_untranspose(__m512i out[4], const __m512i w[4]) {
  const __m512i even = _mm512_setr_epi64(0, 4, 8, 12, 1, 5, 9, 13);
  const __m512i odd = _mm512_setr_epi64(2, 6, 10, 14, 3, 7, 11, 15);
  const __m512i low = _mm512_setr_epi64(0, 1, 2, 3, 8, 9, 10, 11);
  const __m512i high = _mm512_setr_epi64(4, 5, 6, 7, 12, 13, 14, 15);
  __m512i u0 = _mm512_permutex2var_epi64(w[0], low, w[1]);  /* a0..a3: limb 0, limb 1 */
  __m512i u1 = _mm512_permutex2var_epi64(w[2], low, w[3]);  /* a0..a3: limb 2, limb 3 */
  __m512i v0 = _mm512_permutex2var_epi64(w[0], high, w[1]); /* a4..a7: limb 0, limb 1 */
  __m512i v1 = _mm512_permutex2var_epi64(w[2], high, w[3]); /* a4..a7: limb 2, limb 3 */
  out[0] = _mm512_permutex2var_epi64(u0, even, u1);
  out[1] = _mm512_permutex2var_epi64(u0, odd, u1);
  out[2] = _mm512_permutex2var_epi64(v0, even, v1);
  out[3] = _mm512_permutex2var_epi64(v0, odd, v1);
}

/* Four registers of two ld_fp_t each (in[k] = a[2k], a[2k+1]) into the eight-lane form. */
FP8_INLINE void fp8v_from_words(__m512i x[LD_FP8_LIMBS], const __m512i in[4]) {
  const __m512i mask = _mm512_set1_epi64((long long)LIMB_MASK);
  __m512i w[4];
  fp8v_transpose(w, in);
  /* the bits of 4 x 64 regrouped as 5 x 52 (the value is below 2^254) */
  x[0] = _mm512_and_si512(w[0], mask);
  x[1] = _mm512_and_si512(_mm512_or_si512(_mm512_srli_epi64(w[0], 52), _mm512_slli_epi64(w[1], 12)),
                          mask);
  x[2] = _mm512_and_si512(_mm512_or_si512(_mm512_srli_epi64(w[1], 40), _mm512_slli_epi64(w[2], 24)),
                          mask);
  x[3] = _mm512_and_si512(_mm512_or_si512(_mm512_srli_epi64(w[2], 28), _mm512_slli_epi64(w[3], 36)),
                          mask);
  x[4] = _mm512_srli_epi64(w[3], 16);
}

/* The inverse: the eight lanes as four registers of two ld_fp_t each. */
FP8_INLINE void fp8v_to_words(__m512i out[4], const __m512i y[LD_FP8_LIMBS]) {
  __m512i w[4];
  /* 5 x 52 bits back to 4 x 64 (the value is below p) */
  w[0] = _mm512_or_si512(y[0], _mm512_slli_epi64(y[1], 52));
  w[1] = _mm512_or_si512(_mm512_srli_epi64(y[1], 12), _mm512_slli_epi64(y[2], 40));
  w[2] = _mm512_or_si512(_mm512_srli_epi64(y[2], 24), _mm512_slli_epi64(y[3], 28));
  w[3] = _mm512_or_si512(_mm512_srli_epi64(y[3], 36), _mm512_slli_epi64(y[4], 16));
  fp8v_untranspose(out, w);
}

FP8_TARGET void ld_fp8_from_fp(ld_fp8_t *r, const ld_fp_t a[LD_FP8_LANES]) {
  __m512i in[4], x[LD_FP8_LIMBS];
  for (int k = 0; k < 4; k++) {
    in[k] = _mm512_loadu_si512((const void *)&a[2 * k]);
  }
  fp8v_from_words(x, in);
  fp8v_store(r, x);
}

FP8_TARGET void ld_fp8_to_fp(ld_fp_t r[LD_FP8_LANES], const ld_fp8_t *a) {
  __m512i y[LD_FP8_LIMBS], out[4];
  fp8v_load(y, a);
  fp8v_to_words(out, y);
  for (int k = 0; k < 4; k++) {
    _mm512_storeu_si512((void *)&r[2 * k], out[k]);
  }
}

FP8_TARGET void ld_fp8_mul(ld_fp8_t *r, const ld_fp8_t *a, const ld_fp8_t *b) {
  __m512i x[LD_FP8_LIMBS], y[LD_FP8_LIMBS], z[LD_FP8_LIMBS];
  fp8v_load(x, a);
  fp8v_load(y, b);
  fp8v_mul(z, x, y);
  fp8v_store(r, z);
}

FP8_TARGET void ld_fp8_add(ld_fp8_t *r, const ld_fp8_t *a, const ld_fp8_t *b) {
  __m512i x[LD_FP8_LIMBS], y[LD_FP8_LIMBS], z[LD_FP8_LIMBS];
  fp8v_load(x, a);
  fp8v_load(y, b);
  fp8v_add(z, x, y);
  fp8v_store(r, z);
}

FP8_TARGET void ld_fp8_sub(ld_fp8_t *r, const ld_fp8_t *a, const ld_fp8_t *b) {
  __m512i x[LD_FP8_LIMBS], y[LD_FP8_LIMBS], z[LD_FP8_LIMBS];
  fp8v_load(x, a);
  fp8v_load(y, b);
  fp8v_sub(z, x, y);
  fp8v_store(r, z);
}

/* Eight 4 x 64-bit elements (ld_fp_t or ld_fr_t) at scattered addresses into eight lanes: two
 * 256-bit loads per register, with no copy in between (a copy's narrower stores would stall the
 * wider loads that follow). */
FP8_INLINE void fp8v_gather_words(__m512i x[LD_FP8_LIMBS], const void *const a[LD_FP8_LANES]) {
  __m512i in[4];
  for (int k = 0; k < 4; k++) {
    __m256i lo = _mm256_loadu_si256((const __m256i *)a[2 * k]);
    __m256i hi = _mm256_loadu_si256((const __m256i *)a[2 * k + 1]);
    in[k] = _mm512_inserti64x4(_mm512_castsi256_si512(lo), hi, 1);
  }
  fp8v_from_words(x, in);
}

FP8_INLINE void fp8v_gather_fp(__m512i x[LD_FP8_LIMBS], const ld_fp_t *const a[LD_FP8_LANES]) {
  const void *w[LD_FP8_LANES];
  for (int i = 0; i < LD_FP8_LANES; i++) {
    w[i] = a[i];
  }
  fp8v_gather_words(x, w);
}

/* The first `lanes` lanes out to eight scattered ld_fp_t (the others are not written). */
FP8_INLINE void fp8v_scatter_fp(ld_fp_t *const r[LD_FP8_LANES], const __m512i y[LD_FP8_LIMBS],
                                int lanes) {
  __m512i out[4];
  fp8v_to_words(out, y);
  for (int k = 0; k < 4; k++) {
    if (2 * k < lanes) {
      _mm256_storeu_si256((void *)r[2 * k], _mm512_castsi512_si256(out[k]));
    }
    if (2 * k + 1 < lanes) {
      _mm256_storeu_si256((void *)r[2 * k + 1], _mm512_extracti64x4_epi64(out[k], 1));
    }
  }
}

FP8_TARGET void ld_g1_affine_add8(ld_g1_affine_t *const r[LD_FP8_LANES],
                                  const ld_g1_affine_t *const a[LD_FP8_LANES],
                                  const ld_g1_affine_t *const b[LD_FP8_LANES],
                                  const ld_fp_t *const inv[LD_FP8_LANES]) {
  const ld_fp_t *xa[LD_FP8_LANES], *ya[LD_FP8_LANES], *xb[LD_FP8_LANES], *yb[LD_FP8_LANES];
  for (int i = 0; i < LD_FP8_LANES; i++) {
    xa[i] = &a[i]->x;
    ya[i] = &a[i]->y;
    xb[i] = &b[i]->x;
    yb[i] = &b[i]->y;
  }
  __m512i x1[LD_FP8_LIMBS], y1[LD_FP8_LIMBS], x2[LD_FP8_LIMBS], y2[LD_FP8_LIMBS], d[LD_FP8_LIMBS],
      t[LD_FP8_LIMBS], lambda[LD_FP8_LIMBS], x3[LD_FP8_LIMBS], y3[LD_FP8_LIMBS];
  fp8v_gather_fp(x1, xa);
  fp8v_gather_fp(y1, ya);
  fp8v_gather_fp(x2, xb);
  fp8v_gather_fp(y2, yb);
  fp8v_gather_fp(d, inv);
  fp8v_sub(t, y2, y1);
  fp8v_mul(lambda, t, d); /* (y2 - y1) / (x2 - x1) */
  fp8v_mul(t, lambda, lambda);
  fp8v_sub(t, t, x1);
  fp8v_sub(x3, t, x2); /* lambda^2 - x1 - x2 */
  fp8v_sub(t, x1, x3);
  fp8v_mul(t, t, lambda);
  fp8v_sub(y3, t, y1); /* lambda (x1 - x3) - y1 */
  ld_fp8_t ox, oy;
  fp8v_store(&ox, x3);
  fp8v_store(&oy, y3);
  ld_fp_t xs[LD_FP8_LANES], ys[LD_FP8_LANES];
  ld_fp8_to_fp(xs, &ox);
  ld_fp8_to_fp(ys, &oy);
  for (int i = 0; i < LD_FP8_LANES; i++) {
    r[i]->x = xs[i];
    r[i]->y = ys[i];
    r[i]->infinity = 0;
  }
}

/* ---- batch-affine additions with the denominators inverted in lanes ---- */

/* inv[l] = 1 / tot[l] for eight non-zero elements: one inversion of their product. */
static void invert_eight(ld_fp_t inv[LD_FP8_LANES], const ld_fp_t tot[LD_FP8_LANES]) {
  ld_fp_t acc[LD_FP8_LANES], all;
  acc[0] = tot[0];
  for (int l = 1; l < LD_FP8_LANES; l++) {
    ld_fp_mul(&acc[l], &acc[l - 1], &tot[l]);
  }
  ld_fp_inv(&all, &acc[LD_FP8_LANES - 1]);
  for (int l = LD_FP8_LANES - 1; l > 0; l--) {
    ld_fp_mul(&inv[l], &all, &acc[l - 1]);
    ld_fp_mul(&all, &all, &tot[l]);
  }
  inv[0] = all;
}

/* Pair k * 8 + lane of a batch of n, the last pair standing in for the lanes past n (their
 * results are dropped). */
static size_t batch_index(size_t k, int lane, size_t n) {
  size_t j = k * LD_FP8_LANES + (size_t)lane;
  return j < n ? j : n - 1;
}

/* prod = d for a batch's first group (k = 0), else prod * d: the running product of its
 * denominators, lane by lane. */
FP8_INLINE void fp8v_running_product(__m512i prod[LD_FP8_LIMBS], const __m512i d[LD_FP8_LIMBS],
                                     size_t k) {
  if (k == 0) {
    memcpy(prod, d, LD_FP8_LIMBS * sizeof *prod);
  } else {
    fp8v_mul(prod, prod, d);
  }
}

/* inv = 1 / total, lane by lane: one scalar inversion. 0, or LD_ERR_INVALID_ARG (inv not
 * written) when a lane's total is zero. */
FP8_INLINE int fp8v_invert_lanes(__m512i inv[LD_FP8_LIMBS], const ld_fp8_t *total) {
  ld_fp_t tot[LD_FP8_LANES], tinv[LD_FP8_LANES];
  ld_fp8_t v;
  ld_fp8_to_fp(tot, total);
  for (int l = 0; l < LD_FP8_LANES; l++) {
    if (ld_fp_is_zero(&tot[l])) {
      return LD_ERR_INVALID_ARG;
    }
  }
  invert_eight(tinv, tot);
  ld_fp8_from_fp(&v, tinv);
  fp8v_load(inv, &v);
  return 0;
}

/* How many groups ahead a batch asks for its points. */
enum { BATCH_AHEAD = 2 };

/* Asks for the points of batch group k (pairs k * 8 .. k * 8 + 7) ahead of their gathering:
 * they may lie anywhere. */
static inline void prefetch_group(const void *const *a, const void *const *b, size_t k, size_t n,
                                  size_t bytes) {
  for (int i = 0; i < LD_FP8_LANES; i++) {
    size_t j = batch_index(k, i, n);
    for (size_t at = 0; at < bytes; at += 64) {
      __builtin_prefetch((const char *)a[j] + at);
      __builtin_prefetch((const char *)b[j] + at);
    }
    __builtin_prefetch((const char *)a[j] + bytes - 1);
    __builtin_prefetch((const char *)b[j] + bytes - 1);
  }
}

/* One group of eight G1 pairs in lanes, and the running product of the denominators up to it. */
typedef struct g1_group8 {
  ld_fp8_t x1, y1, x2, y2, prod;
} g1_group8_t;

FP8_TARGET int ld_g1_affine_add_batch(ld_g1_affine_t *const *r, const ld_g1_affine_t *const *a,
                                      const ld_g1_affine_t *const *b, size_t n) {
  if (n == 0) {
    return 0;
  }
  size_t groups = (n + LD_FP8_LANES - 1) / LD_FP8_LANES;
  g1_group8_t *g = aligned_alloc(64, groups * sizeof *g);
  if (g == NULL) {
    return LD_ERR_NOMEM;
  }
  __m512i x1[LD_FP8_LIMBS], y1[LD_FP8_LIMBS], x2[LD_FP8_LIMBS], y2[LD_FP8_LIMBS], d[LD_FP8_LIMBS],
      prod[LD_FP8_LIMBS], inv[LD_FP8_LIMBS], t[LD_FP8_LIMBS];
  /* forwards: the pairs into lanes, prod = the product of each lane's denominators so far */
  for (size_t k = 0; k < groups; k++) {
    if (k + BATCH_AHEAD < groups) {
      prefetch_group((const void *const *)a, (const void *const *)b, k + BATCH_AHEAD, n,
                     sizeof **a);
    }
    const ld_fp_t *xa[LD_FP8_LANES], *ya[LD_FP8_LANES], *xb[LD_FP8_LANES], *yb[LD_FP8_LANES];
    for (int i = 0; i < LD_FP8_LANES; i++) {
      size_t j = batch_index(k, i, n);
      xa[i] = &a[j]->x;
      ya[i] = &a[j]->y;
      xb[i] = &b[j]->x;
      yb[i] = &b[j]->y;
    }
    fp8v_gather_fp(x1, xa);
    fp8v_gather_fp(y1, ya);
    fp8v_gather_fp(x2, xb);
    fp8v_gather_fp(y2, yb);
    fp8v_store(&g[k].x1, x1);
    fp8v_store(&g[k].y1, y1);
    fp8v_store(&g[k].x2, x2);
    fp8v_store(&g[k].y2, y2);
    fp8v_sub(d, x2, x1);
    fp8v_running_product(prod, d, k);
    fp8v_store(&g[k].prod, prod);
  }
  if (fp8v_invert_lanes(inv, &g[groups - 1].prod) != 0) { /* a pair with x_a = x_b */
    free(g);
    return LD_ERR_INVALID_ARG;
  }
  /* backwards: inv = 1 / prod of group k on entry; each group's own inverses, then its sums */
  for (size_t k = groups; k-- > 0;) {
    __m512i lambda[LD_FP8_LIMBS], x3[LD_FP8_LIMBS], y3[LD_FP8_LIMBS], dinv[LD_FP8_LIMBS];
    fp8v_load(x1, &g[k].x1);
    fp8v_load(y1, &g[k].y1);
    fp8v_load(x2, &g[k].x2);
    fp8v_load(y2, &g[k].y2);
    if (k > 0) {
      fp8v_sub(d, x2, x1);
      fp8v_load(prod, &g[k - 1].prod);
      fp8v_mul(dinv, inv, prod);
      fp8v_mul(inv, inv, d);
    } else {
      memcpy(dinv, inv, sizeof dinv);
    }
    fp8v_sub(t, y2, y1);
    fp8v_mul(lambda, t, dinv); /* (y2 - y1) / (x2 - x1) */
    fp8v_mul(t, lambda, lambda);
    fp8v_sub(t, t, x1);
    fp8v_sub(x3, t, x2); /* lambda^2 - x1 - x2 */
    fp8v_sub(t, x1, x3);
    fp8v_mul(t, t, lambda);
    fp8v_sub(y3, t, y1); /* lambda (x1 - x3) - y1 */
    /* written only after every group was read (forwards pass): outputs may alias inputs */
    ld_fp_t *ox[LD_FP8_LANES], *oy[LD_FP8_LANES];
    int lanes = n - k * LD_FP8_LANES < LD_FP8_LANES ? (int)(n - k * LD_FP8_LANES) : LD_FP8_LANES;
    for (int i = 0; i < lanes; i++) {
      ld_g1_affine_t *o = r[k * LD_FP8_LANES + (size_t)i];
      ox[i] = &o->x;
      oy[i] = &o->y;
      o->infinity = 0;
    }
    fp8v_scatter_fp(ox, x3, lanes);
    fp8v_scatter_fp(oy, y3, lanes);
  }
  free(g);
  return 0;
}

/* An Fp2 element in lanes: c0 and c1 each an eight-lane Fp. */
typedef struct fp28 {
  ld_fp8_t c0, c1;
} fp28_t;

/* One group of eight G2 pairs in lanes, the norm of their denominators (in Fp) and the running
 * product of the norms up to it. */
typedef struct g2_group8 {
  fp28_t x1, y1, x2, y2;
  ld_fp8_t norm, prod;
} g2_group8_t;

typedef struct fp28v {
  __m512i c0[LD_FP8_LIMBS], c1[LD_FP8_LIMBS];
} fp28v_t;

FP8_INLINE void fp28v_load(fp28v_t *r, const fp28_t *a) {
  fp8v_load(r->c0, &a->c0);
  fp8v_load(r->c1, &a->c1);
}

FP8_INLINE void fp28v_store(fp28_t *r, const fp28v_t *a) {
  fp8v_store(&r->c0, a->c0);
  fp8v_store(&r->c1, a->c1);
}

FP8_INLINE void fp28v_sub(fp28v_t *r, const fp28v_t *a, const fp28v_t *b) {
  fp8v_sub(r->c0, a->c0, b->c0);
  fp8v_sub(r->c1, a->c1, b->c1);
}

/* Karatsuba over u^2 = -1, as ld_fp2_mul: three products. r may alias a or b. */
FP8_INLINE void fp28v_mul(fp28v_t *r, const fp28v_t *a, const fp28v_t *b) {
  __m512i v0[LD_FP8_LIMBS], v1[LD_FP8_LIMBS], s[LD_FP8_LIMBS], t[LD_FP8_LIMBS];
  fp8v_mul(v0, a->c0, b->c0);
  fp8v_mul(v1, a->c1, b->c1);
  fp8v_add(s, a->c0, a->c1);
  fp8v_add(t, b->c0, b->c1);
  fp8v_mul(s, s, t);
  fp8v_sub(s, s, v0);
  fp8v_sub(r->c1, s, v1);
  fp8v_sub(r->c0, v0, v1);
}

/* (a0 + a1 u)^2 = (a0 + a1)(a0 - a1) + 2 a0 a1 u, as ld_fp2_sqr: two products. */
FP8_INLINE void fp28v_sqr(fp28v_t *r, const fp28v_t *a) {
  __m512i s[LD_FP8_LIMBS], d[LD_FP8_LIMBS], m[LD_FP8_LIMBS];
  fp8v_add(s, a->c0, a->c1);
  fp8v_sub(d, a->c0, a->c1);
  fp8v_mul(m, a->c0, a->c1);
  fp8v_mul(r->c0, s, d);
  fp8v_add(r->c1, m, m);
}

/* Eight Fp2 elements at scattered addresses into lanes. */
FP8_INLINE void fp28v_gather(fp28v_t *r, const ld_fp2_t *const a[LD_FP8_LANES]) {
  const ld_fp_t *c0[LD_FP8_LANES], *c1[LD_FP8_LANES];
  for (int i = 0; i < LD_FP8_LANES; i++) {
    c0[i] = &a[i]->c0;
    c1[i] = &a[i]->c1;
  }
  fp8v_gather_fp(r->c0, c0);
  fp8v_gather_fp(r->c1, c1);
}

/* The slope denominators d = x2 - x1 are inverted through their norms: 1 / d = conj(d) / N(d)
 * with N(d) = d0^2 + d1^2 in Fp, so the running products and their inversion are over Fp (one
 * product per step instead of an Fp2 product's three): seven products per denominator in all
 * instead of nine. */
FP8_TARGET int ld_g2_affine_add_batch(ld_g2_affine_t *const *r, const ld_g2_affine_t *const *a,
                                      const ld_g2_affine_t *const *b, size_t n) {
  if (n == 0) {
    return 0;
  }
  size_t groups = (n + LD_FP8_LANES - 1) / LD_FP8_LANES;
  g2_group8_t *g = aligned_alloc(64, groups * sizeof *g);
  if (g == NULL) {
    return LD_ERR_NOMEM;
  }
  fp28v_t x1, y1, x2, y2, d, t;
  __m512i norm[LD_FP8_LIMBS], prod[LD_FP8_LIMBS], inv[LD_FP8_LIMBS], sq[LD_FP8_LIMBS];
  __m512i zero[LD_FP8_LIMBS];
  for (int j = 0; j < LD_FP8_LIMBS; j++) {
    zero[j] = _mm512_setzero_si512();
  }
  for (size_t k = 0; k < groups; k++) {
    if (k + BATCH_AHEAD < groups) {
      prefetch_group((const void *const *)a, (const void *const *)b, k + BATCH_AHEAD, n,
                     sizeof **a);
    }
    const ld_fp2_t *xa[LD_FP8_LANES], *ya[LD_FP8_LANES], *xb[LD_FP8_LANES], *yb[LD_FP8_LANES];
    for (int i = 0; i < LD_FP8_LANES; i++) {
      size_t j = batch_index(k, i, n);
      xa[i] = &a[j]->x;
      ya[i] = &a[j]->y;
      xb[i] = &b[j]->x;
      yb[i] = &b[j]->y;
    }
    fp28v_gather(&x1, xa);
    fp28v_gather(&y1, ya);
    fp28v_gather(&x2, xb);
    fp28v_gather(&y2, yb);
    fp28v_store(&g[k].x1, &x1);
    fp28v_store(&g[k].y1, &y1);
    fp28v_store(&g[k].x2, &x2);
    fp28v_store(&g[k].y2, &y2);
    fp28v_sub(&d, &x2, &x1);
    fp8v_mul(norm, d.c0, d.c0);
    fp8v_mul(sq, d.c1, d.c1);
    fp8v_add(norm, norm, sq);
    fp8v_store(&g[k].norm, norm);
    fp8v_running_product(prod, norm, k);
    fp8v_store(&g[k].prod, prod);
  }
  if (fp8v_invert_lanes(inv, &g[groups - 1].prod) != 0) { /* a pair with x_a = x_b */
    free(g);
    return LD_ERR_INVALID_ARG;
  }
  /* backwards: inv = 1 / prod of group k on entry */
  for (size_t k = groups; k-- > 0;) {
    fp28v_t lambda, x3, y3, dinv;
    __m512i ninv[LD_FP8_LIMBS];
    fp28v_load(&x1, &g[k].x1);
    fp28v_load(&y1, &g[k].y1);
    fp28v_load(&x2, &g[k].x2);
    fp28v_load(&y2, &g[k].y2);
    if (k > 0) {
      fp8v_load(prod, &g[k - 1].prod);
      fp8v_load(norm, &g[k].norm);
      fp8v_mul(ninv, inv, prod);
      fp8v_mul(inv, inv, norm);
    } else {
      memcpy(ninv, inv, sizeof ninv);
    }
    fp28v_sub(&d, &x2, &x1); /* 1 / d = (d0 - d1 u) / N(d) */
    fp8v_mul(dinv.c0, d.c0, ninv);
    fp8v_mul(dinv.c1, d.c1, ninv);
    fp8v_sub(dinv.c1, zero, dinv.c1);
    fp28v_sub(&t, &y2, &y1);
    fp28v_mul(&lambda, &t, &dinv);
    fp28v_sqr(&t, &lambda);
    fp28v_sub(&t, &t, &x1);
    fp28v_sub(&x3, &t, &x2);
    fp28v_sub(&t, &x1, &x3);
    fp28v_mul(&t, &t, &lambda);
    fp28v_sub(&y3, &t, &y1);
    ld_fp_t *ox0[LD_FP8_LANES], *ox1[LD_FP8_LANES], *oy0[LD_FP8_LANES], *oy1[LD_FP8_LANES];
    int lanes = n - k * LD_FP8_LANES < LD_FP8_LANES ? (int)(n - k * LD_FP8_LANES) : LD_FP8_LANES;
    for (int i = 0; i < lanes; i++) {
      ld_g2_affine_t *o = r[k * LD_FP8_LANES + (size_t)i];
      ox0[i] = &o->x.c0;
      ox1[i] = &o->x.c1;
      oy0[i] = &o->y.c0;
      oy1[i] = &o->y.c1;
      o->infinity = 0;
    }
    fp8v_scatter_fp(ox0, x3.c0, lanes);
    fp8v_scatter_fp(ox1, x3.c1, lanes);
    fp8v_scatter_fp(oy0, y3.c0, lanes);
    fp8v_scatter_fp(oy1, y3.c1, lanes);
  }
  free(g);
  return 0;
}

/* ---- Fr in lanes: the NTT's butterflies ---- */

/* Eight consecutive ld_fr_t into lanes, and back. */
FP8_INLINE void fr8v_load8(__m512i x[LD_FP8_LIMBS], const ld_fr_t *a) {
  __m512i in[4];
  for (int k = 0; k < 4; k++) {
    in[k] = _mm512_loadu_si512((const void *)&a[2 * k]);
  }
  fp8v_from_words(x, in);
}

FP8_INLINE void fr8v_store8(ld_fr_t *r, const __m512i x[LD_FP8_LIMBS]) {
  __m512i out[4];
  fp8v_to_words(out, x);
  for (int k = 0; k < 4; k++) {
    _mm512_storeu_si512((void *)&r[2 * k], out[k]);
  }
}

FP8_TARGET void ld_fr8_fft_stage(ld_fr_t *a, size_t n, size_t half, const ld_fr_t *tw,
                                 size_t step) {
  for (size_t start = 0; start < n; start += 2 * half) {
    for (size_t k = 0; k < half; k += LD_FP8_LANES) {
      __m512i u[LD_FP8_LIMBS], v[LD_FP8_LIMBS], w[LD_FP8_LIMBS], t[LD_FP8_LIMBS];
      if (step == 1) {
        fr8v_load8(w, &tw[k]);
      } else {
        const void *tp[LD_FP8_LANES];
        for (int i = 0; i < LD_FP8_LANES; i++) {
          tp[i] = &tw[(k + (size_t)i) * step];
        }
        fp8v_gather_words(w, tp);
      }
      fr8v_load8(u, &a[start + k]);
      fr8v_load8(v, &a[start + k + half]);
      mod8v_mul(t, v, w, R52, RNPRIME52);
      mod8v_sub(v, u, t, R52);
      mod8v_add(u, u, t, R52);
      fr8v_store8(&a[start + k], u);
      fr8v_store8(&a[start + k + half], v);
    }
  }
}

FP8_TARGET void ld_fr8_mul_pointwise(ld_fr_t *a, const ld_fr_t *b, size_t n) {
  for (size_t i = 0; i < n; i += LD_FP8_LANES) {
    __m512i x[LD_FP8_LIMBS], y[LD_FP8_LIMBS];
    fr8v_load8(x, &a[i]);
    fr8v_load8(y, &b[i]);
    mod8v_mul(x, x, y, R52, RNPRIME52);
    fr8v_store8(&a[i], x);
  }
}

FP8_TARGET void ld_fr8_scale(ld_fr_t *a, const ld_fr_t *c, size_t n) {
  const void *cp[LD_FP8_LANES] = {c, c, c, c, c, c, c, c};
  __m512i y[LD_FP8_LIMBS];
  fp8v_gather_words(y, cp);
  for (size_t i = 0; i < n; i += LD_FP8_LANES) {
    __m512i x[LD_FP8_LIMBS];
    fr8v_load8(x, &a[i]);
    mod8v_mul(x, x, y, R52, RNPRIME52);
    fr8v_store8(&a[i], x);
  }
}

#else /* not x86-64: no IFMA; callers take the scalar path */

int ld_fp8_available(void) {
  (void)forced_scalar;
  return 0;
}

void ld_fp8_from_fp(ld_fp8_t *r, const ld_fp_t a[LD_FP8_LANES]) {
  (void)r;
  (void)a;
  abort();
}

void ld_fp8_to_fp(ld_fp_t r[LD_FP8_LANES], const ld_fp8_t *a) {
  (void)r;
  (void)a;
  abort();
}

void ld_fp8_mul(ld_fp8_t *r, const ld_fp8_t *a, const ld_fp8_t *b) {
  (void)r;
  (void)a;
  (void)b;
  abort();
}

void ld_fp8_add(ld_fp8_t *r, const ld_fp8_t *a, const ld_fp8_t *b) {
  (void)r;
  (void)a;
  (void)b;
  abort();
}

void ld_fp8_sub(ld_fp8_t *r, const ld_fp8_t *a, const ld_fp8_t *b) {
  (void)r;
  (void)a;
  (void)b;
  abort();
}

void ld_g1_affine_add8(ld_g1_affine_t *const r[LD_FP8_LANES],
                       const ld_g1_affine_t *const a[LD_FP8_LANES],
                       const ld_g1_affine_t *const b[LD_FP8_LANES],
                       const ld_fp_t *const inv[LD_FP8_LANES]) {
  (void)r;
  (void)a;
  (void)b;
  (void)inv;
  abort();
}

int ld_g1_affine_add_batch(ld_g1_affine_t *const *r, const ld_g1_affine_t *const *a,
                           const ld_g1_affine_t *const *b, size_t n) {
  (void)r;
  (void)a;
  (void)b;
  (void)n;
  abort();
}

int ld_g2_affine_add_batch(ld_g2_affine_t *const *r, const ld_g2_affine_t *const *a,
                           const ld_g2_affine_t *const *b, size_t n) {
  (void)r;
  (void)a;
  (void)b;
  (void)n;
  abort();
}

void ld_fr8_fft_stage(ld_fr_t *a, size_t n, size_t half, const ld_fr_t *tw, size_t step) {
  (void)a;
  (void)n;
  (void)half;
  (void)tw;
  (void)step;
  abort();
}

void ld_fr8_mul_pointwise(ld_fr_t *a, const ld_fr_t *b, size_t n) {
  (void)a;
  (void)b;
  (void)n;
  abort();
}

void ld_fr8_scale(ld_fr_t *a, const ld_fr_t *c, size_t n) {
  (void)a;
  (void)c;
  (void)n;
  abort();
}

#endif
