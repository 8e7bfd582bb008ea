/* Pippenger's multi-scalar multiplication in G1 and G2. */
#include "zk/msm.h"

#include <stdint.h>
#include <stdlib.h>

#include "base/error.h"

/* The window that minimises windows * (n + 2^(c-1)) roughly: about log2(n) * 2/3 + 2. */
static unsigned msm_window_bits(size_t n) {
  unsigned lg = 0;
  while (lg < 40 && ((size_t)1 << (lg + 1)) <= n) {
    lg++;
  }
  unsigned c = lg * 2 / 3 + 2;
  return c < 2 ? 2 : c > 16 ? 16 : c;
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

#define MSM_NAME ld_g1_msm_pippenger
#define MSM_P ld_g1_t
#define MSM_A ld_g1_affine_t
#define MSM_(x) ld_g1_##x
#define MSM_NEG_Y ld_fp_neg
#include "zk/msm_tmpl.h"
#undef MSM_NAME
#undef MSM_P
#undef MSM_A
#undef MSM_
#undef MSM_NEG_Y

#define MSM_NAME ld_g2_msm_pippenger
#define MSM_P ld_g2_t
#define MSM_A ld_g2_affine_t
#define MSM_(x) ld_g2_##x
#define MSM_NEG_Y ld_fp2_neg
#include "zk/msm_tmpl.h"
