/* Multi-scalar multiplication for the prover: sum_i [k_i] P_i over many affine points
 * (Pippenger's bucket method with signed c-bit digits: about 254/c windows of n mixed additions
 * plus 2^c bucket additions each). Variable-time in the scalars and points, like arkworks' and
 * snarkjs' MSMs; the Groth16 prover blinds its result with fresh r and s. Points at infinity
 * and zero scalars are fine. Scratch memory: 2^(c-1) buckets (c <= 16), allocated per call. */
#ifndef LD_ZK_MSM_H
#define LD_ZK_MSM_H

#include <stddef.h>

#include "zk/curve.h"

/* 0, or LD_ERR_NOMEM. n may be 0 (r = infinity). */
int ld_g1_msm_pippenger(ld_g1_t *r, const ld_g1_affine_t *points, const ld_fr_t *scalars, size_t n);
int ld_g2_msm_pippenger(ld_g2_t *r, const ld_g2_affine_t *points, const ld_fr_t *scalars, size_t n);

#endif
