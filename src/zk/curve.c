/* G1 and G2: arithmetic (from curve_tmpl.h), subgroup checks, multi-scalar multiplication and
 * arkworks' point encodings. */
#include "zk/curve.h"

#include <string.h>

#include "base/error.h"

static const ld_fp_t G1_B = LD_BN254_G1_B;
static const ld_fp2_t G2_B = LD_BN254_G2_B;
static const ld_fp2_t PSI_CX = LD_BN254_PSI_CX;
static const ld_fp2_t PSI_CY = LD_BN254_PSI_CY;
static const uint64_t SIX_X_SQUARED[2] = LD_BN254_SIX_X_SQUARED;

#define FLAG_NEGATIVE 0x80
#define FLAG_INFINITY 0x40
#define FLAG_MASK 0xc0

/* ---- the template, twice ----------------------------------------------------------------------
 */

#define CT_NAME(x) ld_g1_##x
#define CT_F ld_fp_t
#define CT_P ld_g1_t
#define CT_A ld_g1_affine_t
#define CT_ADD ld_fp_add
#define CT_SUB ld_fp_sub
#define CT_DBL ld_fp_dbl
#define CT_NEG ld_fp_neg
#define CT_MUL ld_fp_mul
#define CT_SQR ld_fp_sqr
#define CT_INV ld_fp_inv
#define CT_IS_ZERO ld_fp_is_zero
#define CT_EQUAL ld_fp_equal
#define CT_ONE ld_fp_set_one
#define CT_ZERO ld_fp_set_zero
#define CT_B (&G1_B)
#include "zk/curve_tmpl.h"
#undef CT_NAME
#undef CT_F
#undef CT_P
#undef CT_A
#undef CT_ADD
#undef CT_SUB
#undef CT_DBL
#undef CT_NEG
#undef CT_MUL
#undef CT_SQR
#undef CT_INV
#undef CT_IS_ZERO
#undef CT_EQUAL
#undef CT_ONE
#undef CT_ZERO
#undef CT_B

#define CT_NAME(x) ld_g2_##x
#define CT_F ld_fp2_t
#define CT_P ld_g2_t
#define CT_A ld_g2_affine_t
#define CT_ADD ld_fp2_add
#define CT_SUB ld_fp2_sub
#define CT_DBL ld_fp2_dbl
#define CT_NEG ld_fp2_neg
#define CT_MUL ld_fp2_mul
#define CT_SQR ld_fp2_sqr
#define CT_INV ld_fp2_inv
#define CT_IS_ZERO ld_fp2_is_zero
#define CT_EQUAL ld_fp2_equal
#define CT_ONE ld_fp2_set_one
#define CT_ZERO ld_fp2_set_zero
#define CT_B (&G2_B)
#include "zk/curve_tmpl.h"

/* ---- G1 ---------------------------------------------------------------------------------------
 */

void ld_g1_generator(ld_g1_affine_t *r) {
  static const ld_fp_t x = LD_BN254_G1_GEN_X, y = LD_BN254_G1_GEN_Y;
  r->x = x;
  r->y = y;
  r->infinity = 0;
}

void ld_g1_mul_fr_vartime(ld_g1_t *r, const ld_g1_t *p, const ld_fr_t *k) {
  uint64_t limbs[4];
  ld_fr_to_limbs(limbs, k);
  ld_g1_mul_vartime(r, p, limbs, 4);
}

#define MSM_CHUNK 8

/* Straus: one shared doubling chain, 4-bit windows, up to MSM_CHUNK points at a time. */
static void msm_chunk(ld_g1_t *r, const ld_g1_affine_t *points, const ld_fr_t *scalars, size_t n) {
  ld_g1_t table[MSM_CHUNK][16];
  uint64_t k[MSM_CHUNK][4];
  for (size_t i = 0; i < n; i++) {
    ld_fr_to_limbs(k[i], &scalars[i]);
    ld_g1_set_infinity(&table[i][0]);
    ld_g1_from_affine(&table[i][1], &points[i]);
    for (int j = 2; j < 16; j++) {
      ld_g1_add_affine(&table[i][j], &table[i][j - 1], &points[i]);
    }
  }
  ld_g1_t acc;
  ld_g1_set_infinity(&acc);
  for (int w = 63; w >= 0; w--) {
    if (!ld_g1_is_infinity(&acc)) {
      for (int d = 0; d < 4; d++) {
        ld_g1_dbl(&acc, &acc);
      }
    }
    for (size_t i = 0; i < n; i++) {
      unsigned nib = (unsigned)(k[i][w / 16] >> (4 * (w % 16))) & 15;
      if (nib) {
        ld_g1_add(&acc, &acc, &table[i][nib]);
      }
    }
  }
  *r = acc;
}

void ld_g1_msm_vartime(ld_g1_t *r, const ld_g1_affine_t *points, const ld_fr_t *scalars, size_t n) {
  ld_g1_t acc, part;
  ld_g1_set_infinity(&acc);
  for (size_t off = 0; off < n; off += MSM_CHUNK) {
    size_t m = n - off < MSM_CHUNK ? n - off : MSM_CHUNK;
    msm_chunk(&part, points + off, scalars + off, m);
    ld_g1_add(&acc, &acc, &part);
  }
  *r = acc;
}

/* Reads a 32-byte coordinate whose last byte may carry flags; returns the flags or an error. */
static int read_flagged(uint8_t buf[32], const uint8_t in[32], unsigned *flags) {
  memcpy(buf, in, 32);
  *flags = buf[31] & FLAG_MASK;
  buf[31] &= (uint8_t)~FLAG_MASK;
  return *flags == FLAG_MASK ? LD_ERR_MALFORMED : 0;
}

static int all_zero(const uint8_t *b, size_t n) {
  uint8_t acc = 0;
  for (size_t i = 0; i < n; i++) {
    acc |= b[i];
  }
  return acc == 0;
}

static void g1_rhs(ld_fp_t *r, const ld_fp_t *x) {
  ld_fp_sqr(r, x);
  ld_fp_mul(r, r, x);
  ld_fp_add(r, r, &G1_B);
}

int ld_g1_from_compressed(ld_g1_affine_t *r, const uint8_t in[LD_G1_COMPRESSED_BYTES]) {
  uint8_t buf[32];
  unsigned flags;
  int rc = read_flagged(buf, in, &flags);
  if (rc != 0) {
    return rc;
  }
  if (flags == FLAG_INFINITY) {
    if (!all_zero(buf, 32)) {
      return LD_ERR_MALFORMED;
    }
    memset(r, 0, sizeof *r);
    r->infinity = 1;
    return 0;
  }
  ld_fp_t x, y, rhs;
  if ((rc = ld_fp_from_bytes(&x, buf)) != 0) {
    return rc;
  }
  g1_rhs(&rhs, &x);
  if (!ld_fp_sqrt(&y, &rhs)) {
    return LD_ERR_BAD_POINT;
  }
  if (ld_fp_is_lexicographically_largest(&y) != (flags == FLAG_NEGATIVE)) {
    ld_fp_neg(&y, &y);
  }
  r->x = x;
  r->y = y;
  r->infinity = 0;
  return 0; /* the cofactor is 1: every curve point is in G1 */
}

void ld_g1_to_compressed(uint8_t out[LD_G1_COMPRESSED_BYTES], const ld_g1_affine_t *p) {
  if (p->infinity) {
    memset(out, 0, 32);
    out[31] = FLAG_INFINITY;
    return;
  }
  ld_fp_to_bytes(out, &p->x);
  if (ld_fp_is_lexicographically_largest(&p->y)) {
    out[31] |= FLAG_NEGATIVE;
  }
}

int ld_g1_from_uncompressed(ld_g1_affine_t *r, const uint8_t in[LD_G1_UNCOMPRESSED_BYTES]) {
  uint8_t buf[32];
  unsigned flags;
  int rc = read_flagged(buf, in + 32, &flags);
  if (rc != 0) {
    return rc;
  }
  if (flags == FLAG_INFINITY) {
    if (!all_zero(in, 32) || !all_zero(buf, 32)) {
      return LD_ERR_MALFORMED;
    }
    memset(r, 0, sizeof *r);
    r->infinity = 1;
    return 0;
  }
  ld_g1_affine_t p = {.infinity = 0};
  if ((rc = ld_fp_from_bytes(&p.x, in)) != 0 || (rc = ld_fp_from_bytes(&p.y, buf)) != 0) {
    return rc;
  }
  if (!ld_g1_is_on_curve(&p)) {
    return LD_ERR_BAD_POINT;
  }
  if (ld_fp_is_lexicographically_largest(&p.y) != (flags == FLAG_NEGATIVE)) {
    return LD_ERR_MALFORMED;
  }
  *r = p;
  return 0;
}

void ld_g1_to_uncompressed(uint8_t out[LD_G1_UNCOMPRESSED_BYTES], const ld_g1_affine_t *p) {
  if (p->infinity) {
    memset(out, 0, 64);
    out[63] = FLAG_INFINITY;
    return;
  }
  ld_fp_to_bytes(out, &p->x);
  ld_fp_to_bytes(out + 32, &p->y);
  if (ld_fp_is_lexicographically_largest(&p->y)) {
    out[63] |= FLAG_NEGATIVE;
  }
}

/* ---- G2 ---------------------------------------------------------------------------------------
 */

void ld_g2_generator(ld_g2_affine_t *r) {
  static const ld_fp2_t x = LD_BN254_G2_GEN_X, y = LD_BN254_G2_GEN_Y;
  r->x = x;
  r->y = y;
  r->infinity = 0;
}

void ld_g2_mul_fr_vartime(ld_g2_t *r, const ld_g2_t *p, const ld_fr_t *k) {
  uint64_t limbs[4];
  ld_fr_to_limbs(limbs, k);
  ld_g2_mul_vartime(r, p, limbs, 4);
}

void ld_g2_psi(ld_g2_affine_t *r, const ld_g2_affine_t *p) {
  if (p->infinity) {
    *r = *p;
    return;
  }
  ld_fp2_t x, y;
  ld_fp2_conj(&x, &p->x);
  ld_fp2_conj(&y, &p->y);
  ld_fp2_mul(&r->x, &x, &PSI_CX);
  ld_fp2_mul(&r->y, &y, &PSI_CY);
  r->infinity = 0;
}

int ld_g2_is_in_subgroup(const ld_g2_affine_t *p) {
  if (p->infinity) {
    return 1;
  }
  ld_g2_affine_t psi;
  ld_g2_t lhs, rhs;
  ld_g2_psi(&psi, p);
  ld_g2_from_affine(&lhs, &psi);
  ld_g2_from_affine(&rhs, p);
  ld_g2_mul_vartime(&rhs, &rhs, SIX_X_SQUARED, 2);
  return ld_g2_equal(&lhs, &rhs);
}

static int read_fp2_flagged(ld_fp2_t *x, const uint8_t in[64], unsigned *flags, int *zero) {
  uint8_t buf[32];
  int rc = read_flagged(buf, in + 32, flags);
  if (rc != 0) {
    return rc;
  }
  *zero = all_zero(in, 32) && all_zero(buf, 32);
  if ((rc = ld_fp_from_bytes(&x->c0, in)) != 0) {
    return rc;
  }
  return ld_fp_from_bytes(&x->c1, buf);
}

int ld_g2_from_compressed(ld_g2_affine_t *r, const uint8_t in[LD_G2_COMPRESSED_BYTES]) {
  ld_fp2_t x, y, rhs;
  unsigned flags;
  int zero;
  int rc = read_fp2_flagged(&x, in, &flags, &zero);
  if (rc != 0) {
    return rc;
  }
  if (flags == FLAG_INFINITY) {
    if (!zero) {
      return LD_ERR_MALFORMED;
    }
    memset(r, 0, sizeof *r);
    r->infinity = 1;
    return 0;
  }
  ld_fp2_sqr(&rhs, &x);
  ld_fp2_mul(&rhs, &rhs, &x);
  ld_fp2_add(&rhs, &rhs, &G2_B);
  if (!ld_fp2_sqrt_vartime(&y, &rhs)) {
    return LD_ERR_BAD_POINT;
  }
  if (ld_fp2_is_lexicographically_largest(&y) != (flags == FLAG_NEGATIVE)) {
    ld_fp2_neg(&y, &y);
  }
  ld_g2_affine_t p = {.x = x, .y = y, .infinity = 0};
  if (!ld_g2_is_in_subgroup(&p)) {
    return LD_ERR_BAD_POINT;
  }
  *r = p;
  return 0;
}

void ld_g2_to_compressed(uint8_t out[LD_G2_COMPRESSED_BYTES], const ld_g2_affine_t *p) {
  if (p->infinity) {
    memset(out, 0, 64);
    out[63] = FLAG_INFINITY;
    return;
  }
  ld_fp2_to_bytes(out, &p->x);
  if (ld_fp2_is_lexicographically_largest(&p->y)) {
    out[63] |= FLAG_NEGATIVE;
  }
}

int ld_g2_from_uncompressed(ld_g2_affine_t *r, const uint8_t in[LD_G2_UNCOMPRESSED_BYTES]) {
  ld_g2_affine_t p = {.infinity = 0};
  unsigned flags;
  int zero;
  int rc = read_fp2_flagged(&p.y, in + 64, &flags, &zero);
  if (rc != 0) {
    return rc;
  }
  if (flags == FLAG_INFINITY) {
    if (!zero || !all_zero(in, 64)) {
      return LD_ERR_MALFORMED;
    }
    memset(r, 0, sizeof *r);
    r->infinity = 1;
    return 0;
  }
  if ((rc = ld_fp2_from_bytes(&p.x, in)) != 0) {
    return rc;
  }
  if (!ld_g2_is_on_curve(&p) || !ld_g2_is_in_subgroup(&p)) {
    return LD_ERR_BAD_POINT;
  }
  if (ld_fp2_is_lexicographically_largest(&p.y) != (flags == FLAG_NEGATIVE)) {
    return LD_ERR_MALFORMED;
  }
  *r = p;
  return 0;
}

void ld_g2_to_uncompressed(uint8_t out[LD_G2_UNCOMPRESSED_BYTES], const ld_g2_affine_t *p) {
  if (p->infinity) {
    memset(out, 0, 128);
    out[127] = FLAG_INFINITY;
    return;
  }
  ld_fp2_to_bytes(out, &p->x);
  ld_fp2_to_bytes(out + 64, &p->y);
  if (ld_fp2_is_lexicographically_largest(&p->y)) {
    out[127] |= FLAG_NEGATIVE;
  }
}
