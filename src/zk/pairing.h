/* The optimal ate pairing on BN254, e: G1 x G2 -> GT (the order-r subgroup of Fp12*), computed as
 * arkworks computes it (same loop count 6x + 2, the same two Frobenius additions, the same final
 * exponentiation chain), so values of GT agree with arkworks' byte for byte.
 *
 * A G2 point used in many pairings (a verifying key's) is prepared once: its line coefficients
 * along the Miller loop are precomputed (ld_g2_prepared_t, about 25 KiB). Variable-time: for
 * public inputs. Pure functions on caller storage; thread-safe. */
#ifndef LD_ZK_PAIRING_H
#define LD_ZK_PAIRING_H

#include <stddef.h>

#include "zk/curve.h"
#include "zk/fp12.h"

/* Upper bound of line coefficients along the loop: 65 doublings, at most 66 additions, and 2. */
#define LD_G2_PREPARED_MAX 133

typedef struct ld_g2_prepared {
  ld_fp2_t ell[LD_G2_PREPARED_MAX][3];
  size_t n;
  int infinity;
} ld_g2_prepared_t;

void ld_g2_prepare(ld_g2_prepared_t *out, const ld_g2_affine_t *q);

/* f = prod_i f_{6x+2, q_i}(p_i) times the two Frobenius lines: the Miller loop of n pairs in one
 * pass. Pairs with a point at infinity contribute 1. */
void ld_pairing_miller_loop(ld_fp12_t *f, const ld_g1_affine_t *p, const ld_g2_prepared_t *q,
                            size_t n);
/* As ld_pairing_miller_loop, with the G2 points given as pointers (prepared keys live apart). */
void ld_pairing_miller_loop_ptrs(ld_fp12_t *f, const ld_g1_affine_t *const *p,
                                 const ld_g2_prepared_t *const *q, size_t n);
/* f^((p^12 - 1)/r). f must be non-zero (a Miller loop's output always is). */
void ld_pairing_final_exp(ld_fp12_t *r, const ld_fp12_t *f);
/* e(p, q). */
void ld_pairing(ld_fp12_t *r, const ld_g1_affine_t *p, const ld_g2_affine_t *q);

#endif
