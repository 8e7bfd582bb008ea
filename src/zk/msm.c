/* Pippenger's multi-scalar multiplication in G1 and G2. */
#include "zk/msm.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"

/* The window c minimising (255 / c) * (6 n + 14 * 2^c): the batch-affine additions of every
 * (point, window) pair against each window's running-sum bucket reduction. */
static unsigned msm_window_bits(size_t n) {
  unsigned best = 2;
  double best_cost = 0;
  for (unsigned c = 2; c <= 16; c++) {
    double cost = (255.0 / c) * (6.0 * (double)n + 14.0 * (double)((size_t)1 << c));
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

/* Signed digits in [-2^(c-1), 2^(c-1)]: k = sum_w d_w 2^(c w). With windows * c >= 255 and
 * k < 2^254 the top digit never needs a carry out. */
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

/* The signed digits of the live points' scalars, window-major: out[w * m + j] is window w's
 * digit of scalars[live[j]]. */
static void msm_scalar_digits(int32_t *out, const ld_fr_t *scalars, const uint32_t *live, size_t m,
                              unsigned c, unsigned windows) {
  int32_t d[256];
  for (size_t j = 0; j < m; j++) {
    uint64_t k[4];
    ld_fr_to_limbs(k, &scalars[live[j]]);
    msm_signed_digits(d, k, c, windows);
    for (unsigned w = 0; w < windows; w++) {
      out[(size_t)w * m + j] = d[w];
    }
  }
}

/* A window's working memory (entries, den and prod typed by the instance). */
typedef struct msm_scratch {
  uint32_t *start, *len;
  void *entries, *den, *prod;
} msm_scratch_t;

#define MSM_NAME ld_g1_msm_pippenger
#define MSM_P ld_g1_t
#define MSM_A ld_g1_affine_t
#define MSM_F ld_fp_t
#define MSM_(x) msm_g1_##x
#define MSM_CURVE_(x) ld_g1_##x
#define MSM_F_(x) ld_fp_##x
#include "zk/msm_tmpl.h"
#undef MSM_NAME
#undef MSM_P
#undef MSM_A
#undef MSM_F
#undef MSM_
#undef MSM_CURVE_
#undef MSM_F_

#define MSM_NAME ld_g2_msm_pippenger
#define MSM_P ld_g2_t
#define MSM_A ld_g2_affine_t
#define MSM_F ld_fp2_t
#define MSM_(x) msm_g2_##x
#define MSM_CURVE_(x) ld_g2_##x
#define MSM_F_(x) ld_fp2_##x
#include "zk/msm_tmpl.h"

/* ---- fixed-base tables ---- */

struct ld_msm_table {
  size_t n;
  unsigned c, windows;
  int g2;
  void *points;       /* ld_g1_affine_t or ld_g2_affine_t, n * windows */
  const void *source; /* the points being tabulated (until complete) */
  size_t built;       /* rows made so far */
};

/* The window minimising n * (255 / c) affine additions plus one reduction of 2^(c-1) buckets
 * (each bucket about two Jacobian additions, some 14 additions' worth). */
static unsigned table_window_bits(size_t n) {
  unsigned best = 2;
  double best_cost = 0;
  for (unsigned c = 2; c <= 16; c++) {
    double windows = (double)((255 + c - 1) / c);
    double cost = 6.0 * (double)n * windows + 14.0 * (double)((size_t)1 << (c - 1));
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
