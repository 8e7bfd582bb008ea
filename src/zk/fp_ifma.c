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
#define FP8_TARGET __attribute__((target("avx512f,avx512ifma")))
#define FP8_INLINE static inline __attribute__((target("avx512f,avx512ifma"), always_inline))

int ld_fp8_available(void) {
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
FP8_INLINE void fp8v_add_p_if_negative(__m512i r[LD_FP8_LIMBS], const __m512i u[LD_FP8_LIMBS]) {
  const __m512i mask = _mm512_set1_epi64((long long)LIMB_MASK);
  const __m512i neg = _mm512_srai_epi64(u[4], 63);
  __m512i carry = _mm512_setzero_si512();
  for (int j = 0; j < LD_FP8_LIMBS; j++) {
    __m512i p = _mm512_and_si512(_mm512_set1_epi64((long long)P52[j]), neg);
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
FP8_INLINE void fp8v_reduce_below_2p(__m512i r[LD_FP8_LIMBS], const __m512i t[LD_FP8_LIMBS]) {
  const __m512i mask = _mm512_set1_epi64((long long)LIMB_MASK);
  __m512i u[LD_FP8_LIMBS], carry = _mm512_setzero_si512();
  for (int j = 0; j < LD_FP8_LIMBS; j++) {
    __m512i d = _mm512_sub_epi64(t[j], _mm512_set1_epi64((long long)P52[j]));
    d = _mm512_add_epi64(d, carry);
    if (j + 1 < LD_FP8_LIMBS) {
      carry = _mm512_srai_epi64(d, LIMB_BITS);
      d = _mm512_and_si512(d, mask);
    }
    u[j] = d;
  }
  fp8v_add_p_if_negative(r, u);
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

/* r = a b / 2^260 mod p, lane by lane, for a < p and b < 16 p with normalised limbs. */
FP8_INLINE void fp8v_mont260(__m512i r[LD_FP8_LIMBS], const __m512i a[LD_FP8_LIMBS],
                             const __m512i b[LD_FP8_LIMBS]) {
  const __m512i zero = _mm512_setzero_si512();
  const __m512i nprime = _mm512_set1_epi64((long long)NPRIME52);
  __m512i p[LD_FP8_LIMBS];
  for (int j = 0; j < LD_FP8_LIMBS; j++) {
    p[j] = _mm512_set1_epi64((long long)P52[j]);
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
  fp8v_reduce_below_2p(r, t);
}

/* r = a b mod p in the Montgomery form of R = 2^256, for a, b < p: a (16 b) / 2^260. */
FP8_INLINE void fp8v_mul(__m512i r[LD_FP8_LIMBS], const __m512i a[LD_FP8_LIMBS],
                         const __m512i b[LD_FP8_LIMBS]) {
  __m512i b16[LD_FP8_LIMBS];
  fp8v_times16(b16, b);
  fp8v_mont260(r, a, b16);
}

/* r = a + b mod p for a, b < p. */
FP8_INLINE void fp8v_add(__m512i r[LD_FP8_LIMBS], const __m512i a[LD_FP8_LIMBS],
                         const __m512i b[LD_FP8_LIMBS]) {
  __m512i s[LD_FP8_LIMBS];
  for (int j = 0; j < LD_FP8_LIMBS; j++) {
    s[j] = _mm512_add_epi64(a[j], b[j]);
  }
  fp8v_reduce_below_2p(r, s);
}

/* r = a - b mod p for a, b < p. */
FP8_INLINE void fp8v_sub(__m512i r[LD_FP8_LIMBS], const __m512i a[LD_FP8_LIMBS],
                         const __m512i b[LD_FP8_LIMBS]) {
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
  fp8v_add_p_if_negative(r, u);
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

FP8_TARGET void ld_fp8_from_fp(ld_fp8_t *r, const ld_fp_t a[LD_FP8_LANES]) {
  const __m512i mask = _mm512_set1_epi64((long long)LIMB_MASK);
  __m512i in[4], w[4], x[LD_FP8_LIMBS];
  for (int k = 0; k < 4; k++) {
    in[k] = _mm512_loadu_si512((const void *)&a[2 * k]);
  }
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
  fp8v_store(r, x);
}

FP8_TARGET void ld_fp8_to_fp(ld_fp_t r[LD_FP8_LANES], const ld_fp8_t *a) {
  __m512i y[LD_FP8_LIMBS], w[4], out[4];
  fp8v_load(y, a);
  /* 5 x 52 bits back to 4 x 64 (the value is below p) */
  w[0] = _mm512_or_si512(y[0], _mm512_slli_epi64(y[1], 52));
  w[1] = _mm512_or_si512(_mm512_srli_epi64(y[1], 12), _mm512_slli_epi64(y[2], 40));
  w[2] = _mm512_or_si512(_mm512_srli_epi64(y[2], 24), _mm512_slli_epi64(y[3], 28));
  w[3] = _mm512_or_si512(_mm512_srli_epi64(y[3], 36), _mm512_slli_epi64(y[4], 16));
  fp8v_untranspose(out, w);
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

/* Eight ld_fp_t at scattered addresses into eight lanes. */
FP8_INLINE void fp8v_gather_fp(__m512i x[LD_FP8_LIMBS], const ld_fp_t *const a[LD_FP8_LANES]) {
  ld_fp_t tmp[LD_FP8_LANES];
  for (int i = 0; i < LD_FP8_LANES; i++) {
    tmp[i] = *a[i];
  }
  ld_fp8_t t;
  ld_fp8_from_fp(&t, tmp);
  fp8v_load(x, &t);
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

#else /* not x86-64: no IFMA; callers take the scalar path */

int ld_fp8_available(void) {
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

#endif
