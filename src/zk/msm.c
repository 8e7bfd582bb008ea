/* Pippenger's multi-scalar multiplication in G1 and G2. */
#include "zk/msm.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "zk/fp_ifma.h"

/* What a batch-affine bucket addition costs in scalar Fp products: six on the scalar path;
 * some two in eight IFMA lanes (six products at a quarter of the cost, and the conversions). */
static double bucket_add_cost(void) {
  return ld_fp8_available() ? 2.0 : 6.0;
}

/* log2 of L, the split of a window's digits d = q L + r in its bucket weighting (weigh_buckets
 * in msm_tmpl.h): the least with L^2 >= half, the window's 2^(c-1) buckets. */
static unsigned weighting_split_bits(size_t half) {
  unsigned bits = 0;
  while (((size_t)1 << (2 * bits)) < half) {
    bits++;
  }
  return bits;
}

/* What the Jacobian additions of a window's bucket weighting cost in scalar Fp products: the
 * running sums over its L values of r and 2^(c-1) / L of q, two additions per value, some 14
 * products each. */
static double weighting_cost(unsigned c) {
  size_t half = (size_t)1 << (c - 1);
  unsigned lbits = weighting_split_bits(half);
  return 28.0 * (double)(((size_t)1 << lbits) + (half >> lbits));
}

/* The window c minimising windows * (a (n + 2^c) + weighting_cost(c)): the batch-affine
 * additions of every (point, window) pair and the two batch-affine sums of each bucket in the
 * weighting (a = bucket_add_cost() each), and the weighting's Jacobian additions. */
static unsigned msm_window_bits(size_t n, unsigned bits) {
  unsigned best = 2;
  double best_cost = 0, a = bucket_add_cost();
  for (unsigned c = 2; c <= 16; c++) {
    double windows = (double)((bits + c - 1) / c);
    double cost = windows * (a * ((double)n + (double)((size_t)1 << c)) + weighting_cost(c));
    if (c == 2 || cost < best_cost) {
      best = c;
      best_cost = cost;
    }
  }
  return best;
}

/* Bits [at, at + c) of a 256-bit scalar. */
static uint32_t scalar_bits(const uint64_t k[4], unsigned at, unsigned c) {
  if (at >= 256) {
    return 0;
  }
  unsigned limb = at / 64, shift = at % 64;
  uint64_t v = k[limb] >> shift;
  if (shift + c > 64 && limb + 1 < 4) {
    v |= k[limb + 1] << (64 - shift);
  }
  return (uint32_t)(v & (((uint64_t)1 << c) - 1));
}

/* Signed digits in [-2^(c-1), 2^(c-1)]: k = sum_w d_w 2^(c w). With k < 2^(windows * c - 1)
 * (windows * c >= 255 for k < 2^254) the top digit never needs a carry out. */
static void msm_signed_digits(int32_t *out, const uint64_t k[4], unsigned c, unsigned windows) {
  int32_t half = (int32_t)1 << (c - 1), full = (int32_t)1 << c;
  int32_t carry = 0;
  for (unsigned w = 0; w < windows; w++) {
    int32_t d = (int32_t)scalar_bits(k, w * c, c) + carry;
    carry = 0;
    if (d > half || (d == half && w + 1 < windows)) {
      d -= full;
      carry = 1;
    }
    out[w] = d;
  }
}

/* The signed digits of m scalars (plain limbs), window-major: out[w * m + j] is window w's digit
 * of k[j]. Made window by window (each scalar's carry kept between windows), so that the digits
 * are written in order rather than a window's stride apart. */
static void msm_scalar_digits(int32_t *out, const uint64_t (*k)[4], size_t m, unsigned c,
                              unsigned windows) {
  int32_t half = (int32_t)1 << (c - 1), full = (int32_t)1 << c;
  uint64_t mask = ((uint64_t)1 << c) - 1;
  uint8_t *carry = calloc(m + 1, 1);
  if (carry == NULL) { /* the scalar by scalar way needs no memory */
    int32_t d[256];
    for (size_t j = 0; j < m; j++) {
      msm_signed_digits(d, k[j], c, windows);
      for (unsigned w = 0; w < windows; w++) {
        out[(size_t)w * m + j] = d[w];
      }
    }
    explicit_bzero(d, sizeof d);
    return;
  }
  for (unsigned w = 0; w < windows; w++) {
    unsigned at = w * c, limb = at / 64, shift = at % 64;
    int last = w + 1 == windows;
    int32_t *o = &out[(size_t)w * m];
    for (size_t j = 0; j < m; j++) {
      uint64_t v = 0;
      if (limb < 4) {
        unsigned __int128 pair = k[j][limb];
        if (limb + 1 < 4) {
          pair |= (unsigned __int128)k[j][limb + 1] << 64;
        }
        v = (uint64_t)(pair >> shift) & mask;
      }
      int32_t d = (int32_t)v + carry[j];
      /* d > half, or d == half below the top window: without branches (the digits are random,
       * so a branch would be mispredicted half the time; and they come from secret scalars) */
      int32_t over = (int32_t)((uint32_t)(half - d) >> 31) | ((d == half) & !last);
      o[j] = d - over * full;
      carry[j] = (uint8_t)over;
    }
  }
  explicit_bzero(carry, m);
  free(carry);
}

/* A window's working memory (entries, den and prod typed by the instance). */
typedef struct msm_scratch {
  uint32_t *start, *len, *order;
  uint32_t *group_start, *group_len; /* weigh_buckets' groups of bucket sums */
  void *entries, *den, *prod, *sums;
  void *special;                     /* a round's sums of its special pairs */
  const void **src;                  /* the first round's inputs, where they lie */
  void **pair_r, **pair_a, **pair_b; /* a round's pairs: r = a + b */
} msm_scratch_t;

/* How many entries a window sums at a time (see window_sum): some 600 KB of G1 entries, so
 * that they and their denominators stay in the core's cache. */
enum { MSM_SEGMENT_ENTRIES = 8192 };

static void msm_scratch_free(msm_scratch_t *s) {
  free(s->group_start);
  free(s->group_len);
  free(s->special);
  free(s->src);
  free(s->pair_r);
  free(s->pair_a);
  free(s->pair_b);
  free(s->start);
  free(s->len);
  free(s->order);
  free(s->sums);
  free(s->entries);
  free(s->den);
  free(s->prod);
}

#define MSM_P ld_g1_t
#define MSM_A ld_g1_affine_t
#define MSM_F ld_fp_t
#define MSM_(x) msm_g1_##x
#define MSM_CURVE_(x) ld_g1_##x
#define MSM_F_(x) ld_fp_##x
#define MSM_PAIR_ADD_BATCH ld_g1_affine_add_batch
#define MSM_PAIR_ADD_BATCH_AVAILABLE ld_fp8_available
#include "zk/msm_tmpl.h"
#undef MSM_PAIR_ADD_BATCH
#undef MSM_PAIR_ADD_BATCH_AVAILABLE
#undef MSM_P
#undef MSM_A
#undef MSM_F
#undef MSM_
#undef MSM_CURVE_
#undef MSM_F_

#define MSM_P ld_g2_t
#define MSM_A ld_g2_affine_t
#define MSM_F ld_fp2_t
#define MSM_(x) msm_g2_##x
#define MSM_CURVE_(x) ld_g2_##x
#define MSM_F_(x) ld_fp2_##x
#define MSM_PAIR_ADD_BATCH ld_g2_affine_add_batch
#define MSM_PAIR_ADD_BATCH_AVAILABLE ld_fp8_available
#include "zk/msm_tmpl.h"

/* ---- G1 with the GLV endomorphism ---- */

/* BN254's G1 has phi(x, y) = (beta x, y) = [lambda](x, y), beta a cube root of unity in Fp and
 * lambda = 4407920970296243842393367215006156084916469457145843978461 one in Fr. A scalar k
 * splits as k = k1 + lambda k2 (mod r) with |k1|, |k2| < 2^127 by rounding against the short
 * basis v1 = (a1, b1), v2 = (a2, b2) of the lattice {(x, y): x + lambda y = 0 mod r}:
 *   c1 = round(b2 k / r), c2 = round(-b1 k / r) (as (k g) >> 256 with g = 2^256 b / r; the
 *   floor instead of rounding keeps the bound), k1 = k - c1 a1 - c2 a2, k2 = -c1 b1 - c2 b2. */
static const uint64_t GLV_A1 = 0x89d3256894d213e3ULL; /* = b2 */
static const uint64_t GLV_A2[2] = {0x0be4e1541221250bULL, 0x6f4d8248eeb859fdULL};
static const uint64_t GLV_MINUS_B1[2] = {0x8211bbeb7d4f1128ULL, 0x6f4d8248eeb859fcULL};
static const uint64_t GLV_G1[2] = {0xd91d232ec7e0b3d7ULL, 0x0000000000000002ULL}; /* 2^256 b2/r */
static const uint64_t GLV_G2[3] = {0x7a7bd9d4391eb18dULL, 0x4ccef014a773d2cfULL,
                                   0x0000000000000002ULL}; /* 2^256 (-b1) / r */
/* beta in Montgomery form (beta 2^256 mod p) */
static const ld_fp_t GLV_BETA = {
    {0x71930c11d782e155ULL, 0xa6bb947cffbe3323ULL, 0xaa303344d4741444ULL, 0x2c3b3f0d26594943ULL}};

/* out = x * y over limbs (nx + ny <= 8 limbs of out, the rest zero). */
static void limbs_mul(uint64_t out[8], const uint64_t *x, size_t nx, const uint64_t *y, size_t ny) {
  memset(out, 0, 8 * sizeof *out);
  for (size_t i = 0; i < nx; i++) {
    uint64_t carry = 0;
    for (size_t j = 0; j < ny; j++) {
      unsigned __int128 t = (unsigned __int128)x[i] * y[j] + out[i + j] + carry;
      out[i + j] = (uint64_t)t;
      carry = (uint64_t)(t >> 64);
    }
    out[i + ny] = carry;
  }
}

/* r = a - b mod 2^256. */
static void limbs_sub4(uint64_t r[4], const uint64_t a[4], const uint64_t b[4]) {
  uint64_t borrow = 0;
  for (int i = 0; i < 4; i++) {
    unsigned __int128 d = (unsigned __int128)a[i] - b[i] - borrow;
    r[i] = (uint64_t)d;
    borrow = (uint64_t)(d >> 64) & 1;
  }
}

/* a += b mod 2^256. */
static void limbs_add4(uint64_t a[4], const uint64_t b[4]) {
  uint64_t carry = 0;
  for (int i = 0; i < 4; i++) {
    unsigned __int128 s = (unsigned __int128)a[i] + b[i] + carry;
    a[i] = (uint64_t)s;
    carry = (uint64_t)(s >> 64);
  }
}

/* |v| of a two's complement 256-bit v, its sign to *neg. */
static void limbs_abs4(uint64_t v[4], int *neg) {
  *neg = (int)(v[3] >> 63);
  if (*neg) {
    const uint64_t zero[4] = {0, 0, 0, 0};
    limbs_sub4(v, zero, v);
  }
}

void ld_fr_glv_split(const ld_fr_t *k, uint64_t k1[4], int *neg1, uint64_t k2[4], int *neg2) {
  uint64_t kl[4], t[8], u[8];
  ld_fr_to_limbs(kl, k);
  limbs_mul(t, kl, 4, GLV_G1, 2);
  uint64_t c1 = t[4]; /* k g1 < 2^320 */
  limbs_mul(u, kl, 4, GLV_G2, 3);
  uint64_t c2[2] = {u[4], u[5]};
  /* k1 = k - c1 a1 - c2 a2 */
  limbs_mul(t, &c1, 1, &GLV_A1, 1);
  limbs_sub4(k1, kl, t);
  limbs_mul(t, c2, 2, GLV_A2, 2);
  limbs_sub4(k1, k1, t);
  /* k2 = c1 (-b1) - c2 b2, b2 = a1 */
  limbs_mul(t, &c1, 1, GLV_MINUS_B1, 2);
  limbs_mul(u, c2, 2, &GLV_A1, 1);
  limbs_sub4(k2, t, u);
  limbs_abs4(k1, neg1);
  limbs_abs4(k2, neg2);
  explicit_bzero(kl, sizeof kl);
  explicit_bzero(t, sizeof t);
  explicit_bzero(u, sizeof u);
}

void ld_g1_endomorphism(ld_g1_affine_t *r, const ld_g1_affine_t *p) {
  *r = *p;
  if (!p->infinity) {
    ld_fp_mul(&r->x, &p->x, &GLV_BETA);
  }
}

int ld_g1_msm_pippenger_noglv(ld_g1_t *r, const ld_g1_affine_t *points, const ld_fr_t *scalars,
                              size_t n) {
  return msm_g1_pippenger_full(r, points, scalars, n);
}

int ld_g1_msm_pippenger(ld_g1_t *r, const ld_g1_affine_t *points, const ld_fr_t *scalars,
                        size_t n) {
  return msm_g1_pippenger_endo(r, points, scalars, n, ld_fr_glv_split, ld_g1_endomorphism);
}

/* ---- G2 with the psi endomorphism ---- */

/* psi(Q) = [p - r] Q = [6 x^2] Q on BN254's G2 (x the curve's parameter), 6 x^2 < 2^127 and r <
 * (6 x^2)^2 + 2^127: k = k1 + 6 x^2 k2 with k2 = floor(k / 6 x^2), k1 = k mod 6 x^2, both below
 * 2^127 and non-negative. The quotient comes from g = floor(2^256 / 6 x^2) as (k g) >> 256,
 * which is at most one below it. */
static const uint64_t PSI_LAMBDA[4] = {0xf83e9682e87cfd46ULL, 0x6f4d8248eeb859fbULL, 0, 0};
static const uint64_t PSI_G[3] = {0x2cb62031c8e01941ULL, 0x4ccef014a773d2d5ULL,
                                  0x0000000000000002ULL};

/* 1 when a >= b (256-bit limbs). */
static int limbs_geq4(const uint64_t a[4], const uint64_t b[4]) {
  for (int i = 3; i >= 0; i--) {
    if (a[i] != b[i]) {
      return a[i] > b[i];
    }
  }
  return 1;
}

void ld_fr_psi_split(const ld_fr_t *k, uint64_t k1[4], uint64_t k2[4]) {
  uint64_t kl[4], t[8];
  ld_fr_to_limbs(kl, k);
  limbs_mul(t, kl, 4, PSI_G, 3);
  uint64_t q[4] = {t[4], t[5], 0, 0}; /* k g < 2^384: the quotient is below 2^128 */
  limbs_mul(t, q, 2, PSI_LAMBDA, 2);
  limbs_sub4(k1, kl, t);
  while (limbs_geq4(k1, PSI_LAMBDA)) {
    const uint64_t one[4] = {1, 0, 0, 0};
    limbs_sub4(k1, k1, PSI_LAMBDA);
    limbs_add4(q, one);
  }
  memcpy(k2, q, sizeof q);
  explicit_bzero(kl, sizeof kl);
  explicit_bzero(t, sizeof t);
  explicit_bzero(q, sizeof q);
}

static void psi_split(const ld_fr_t *k, uint64_t k1[4], int *neg1, uint64_t k2[4], int *neg2) {
  ld_fr_psi_split(k, k1, k2);
  *neg1 = 0;
  *neg2 = 0;
}

int ld_g2_msm_pippenger(ld_g2_t *r, const ld_g2_affine_t *points, const ld_fr_t *scalars,
                        size_t n) {
  return msm_g2_pippenger_endo(r, points, scalars, n, psi_split, ld_g2_psi);
}

int ld_g2_msm_pippenger_nopsi(ld_g2_t *r, const ld_g2_affine_t *points, const ld_fr_t *scalars,
                              size_t n) {
  return msm_g2_pippenger_full(r, points, scalars, n);
}

/* ---- fixed-base tables ---- */

struct ld_msm_table {
  size_t n;
  unsigned c, windows;
  int g2;
  void *points;       /* ld_g1_affine_t or ld_g2_affine_t, n * windows */
  const void *source; /* the points being tabulated (until complete) */
  size_t built;       /* rows made so far */
};

/* The window minimising a (n windows + 2^c) + weighting_cost(c): every (point, window) pair's
 * batch-affine addition and one bucket weighting (msm_window_bits). */
static unsigned table_window_bits(size_t n) {
  unsigned best = 2;
  double best_cost = 0, a = bucket_add_cost();
  for (unsigned c = 2; c <= 16; c++) {
    double windows = (double)((255 + c - 1) / c);
    double cost = a * ((double)n * windows + (double)((size_t)1 << c)) + weighting_cost(c);
    if (c == 2 || cost < best_cost) {
      best = c;
      best_cost = cost;
    }
  }
  return best;
}

static int table_begin(ld_msm_table_t **out, const void *points, size_t n, int g2) {
  *out = NULL;
  ld_msm_table_t *t = calloc(1, sizeof *t);
  if (t == NULL) {
    return LD_ERR_NOMEM;
  }
  t->n = n;
  t->g2 = g2;
  t->c = table_window_bits(n);
  t->windows = (255 + t->c - 1) / t->c;
  t->source = points;
  size_t size = g2 ? sizeof(ld_g2_affine_t) : sizeof(ld_g1_affine_t);
  t->points = malloc((n * t->windows + 1) * size);
  if (t->points == NULL) {
    ld_msm_table_free(t);
    return LD_ERR_NOMEM;
  }
  *out = t;
  return 0;
}

int ld_g1_msm_table_begin(ld_msm_table_t **out, const ld_g1_affine_t *points, size_t n) {
  return table_begin(out, points, n, 0);
}

int ld_g2_msm_table_begin(ld_msm_table_t **out, const ld_g2_affine_t *points, size_t n) {
  return table_begin(out, points, n, 1);
}

int ld_msm_table_build_step(ld_msm_table_t *t, size_t max_rows) {
  size_t from = t->built, to = t->n - from < max_rows ? t->n : from + max_rows;
  if (from < to) {
    int rc = t->g2 ? msm_g2_table_build(t->points, t->source, from, to, t->c, t->windows)
                   : msm_g1_table_build(t->points, t->source, from, to, t->c, t->windows);
    if (rc != 0) {
      return rc;
    }
    t->built = to;
  }
  if (t->built == t->n) {
    t->source = NULL;
    return 0;
  }
  return 1;
}

bool ld_msm_table_complete(const ld_msm_table_t *t) {
  return t->built == t->n;
}

static int table_new(ld_msm_table_t **out, const void *points, size_t n, int g2) {
  int rc = table_begin(out, points, n, g2);
  if (rc == 0) {
    rc = ld_msm_table_build_step(*out, n);
  }
  if (rc != 0) {
    ld_msm_table_free(*out);
    *out = NULL;
  }
  return rc;
}

int ld_g1_msm_table_new(ld_msm_table_t **out, const ld_g1_affine_t *points, size_t n) {
  return table_new(out, points, n, 0);
}

int ld_g2_msm_table_new(ld_msm_table_t **out, const ld_g2_affine_t *points, size_t n) {
  return table_new(out, points, n, 1);
}

void ld_msm_table_free(ld_msm_table_t *t) {
  if (t == NULL) {
    return;
  }
  free(t->points);
  free(t);
}

size_t ld_msm_table_bytes(const ld_msm_table_t *t) {
  return t->n * t->windows * (t->g2 ? sizeof(ld_g2_affine_t) : sizeof(ld_g1_affine_t));
}

int ld_g1_msm_table(ld_g1_t *r, const ld_msm_table_t *t, const ld_fr_t *scalars) {
  if (t->g2) {
    return LD_ERR_INVALID_ARG;
  }
  if (!ld_msm_table_complete(t)) {
    return LD_ERR_STATE;
  }
  return msm_g1_table_msm(r, t->points, t->n, t->c, t->windows, scalars);
}

int ld_g2_msm_table(ld_g2_t *r, const ld_msm_table_t *t, const ld_fr_t *scalars) {
  if (!t->g2) {
    return LD_ERR_INVALID_ARG;
  }
  if (!ld_msm_table_complete(t)) {
    return LD_ERR_STATE;
  }
  return msm_g2_table_msm(r, t->points, t->n, t->c, t->windows, scalars);
}
