/* Multi-scalar multiplication for the prover: sum_i [k_i] P_i over many affine points
 * (Pippenger's bucket method with signed c-bit digits: about 254/c windows of n batch-affine
 * additions plus some 2^c more to weight the window's 2^(c-1) buckets). Variable-time in the
 * scalars and points, like arkworks' and snarkjs' MSMs; the Groth16 prover blinds its result
 * with fresh r and s. Points at infinity and zero scalars are fine. Scratch memory: some n
 * entries (2^c at least, c <= 16), allocated per call. */
#ifndef LD_ZK_MSM_H
#define LD_ZK_MSM_H

#include <stdbool.h>
#include <stddef.h>

#include "zk/curve.h"

/* 0, or LD_ERR_NOMEM. n may be 0 (r = infinity). */
int ld_g1_msm_pippenger(ld_g1_t *r, const ld_g1_affine_t *points, const ld_fr_t *scalars, size_t n);
int ld_g2_msm_pippenger(ld_g2_t *r, const ld_g2_affine_t *points, const ld_fr_t *scalars, size_t n);
/* G1's MSM above runs over the GLV endomorphism: each point P with scalar k counts as P with k1
 * and phi(P) = [lambda] P with k2, k = k1 + lambda k2 and both halves below 2^127, so its
 * windows cover 128 bits instead of 255 (half the bucket reductions and doublings). The same
 * sum without it (tests and benchmarks): */
int ld_g1_msm_pippenger_noglv(ld_g1_t *r, const ld_g1_affine_t *points, const ld_fr_t *scalars,
                              size_t n);
/* The split: k = (-1)^neg1 k1 + lambda (-1)^neg2 k2 (mod r), k1 and k2 as plain limbs below
 * 2^127. */
void ld_fr_glv_split(const ld_fr_t *k, uint64_t k1[4], int *neg1, uint64_t k2[4], int *neg2);
/* phi(P) = (beta x, y) = [lambda] P, lambda =
 * 4407920970296243842393367215006156084916469457145843978461. */
void ld_g1_endomorphism(ld_g1_affine_t *r, const ld_g1_affine_t *p);

/* G2's MSM above runs over the psi endomorphism the same way: psi(Q) = [6 x^2] Q (6 x^2 = p - r,
 * below 2^127), k = k1 + 6 x^2 k2 with k1 = k mod 6 x^2 and k2 = floor(k / 6 x^2). The sum without
 * it, and the split (both halves as plain limbs below 2^127): */
int ld_g2_msm_pippenger_nopsi(ld_g2_t *r, const ld_g2_affine_t *points, const ld_fr_t *scalars,
                              size_t n);
void ld_fr_psi_split(const ld_fr_t *k, uint64_t k1[4], uint64_t k2[4]);

/* Fixed bases: a table of every point's window multiples (2^(c w) P for each of the ~255/c
 * windows), made once, so that an MSM over those points puts all (point, window) pairs into one
 * set of buckets: one bucket reduction and no doublings, about a third of the plain MSM's work
 * for thousands of points. The table takes n * 255/c points of memory (c about 13 for 8,192
 * points: some 12 MB in G1) and as many affine doublings to build. Immutable once built. */
typedef struct ld_msm_table ld_msm_table_t;

/* LD_ERR_NOMEM. n may be 0. */
int ld_g1_msm_table_new(ld_msm_table_t **out, const ld_g1_affine_t *points, size_t n);
int ld_g2_msm_table_new(ld_msm_table_t **out, const ld_g2_affine_t *points, size_t n);
void ld_msm_table_free(ld_msm_table_t *t);
/* A table built in slices (so that the work can be spread over idle moments): begin allocates
 * it (LD_ERR_NOMEM) and keeps a pointer to `points`, which must stay valid until the table is
 * complete; each step makes up to max_rows more points' rows: 1 while rows remain, 0 once
 * complete, LD_ERR_NOMEM. An incomplete table's MSM is LD_ERR_STATE. */
int ld_g1_msm_table_begin(ld_msm_table_t **out, const ld_g1_affine_t *points, size_t n);
int ld_g2_msm_table_begin(ld_msm_table_t **out, const ld_g2_affine_t *points, size_t n);
int ld_msm_table_build_step(ld_msm_table_t *t, size_t max_rows);
bool ld_msm_table_complete(const ld_msm_table_t *t);
/* The table's memory in bytes. */
size_t ld_msm_table_bytes(const ld_msm_table_t *t);
/* r = sum_j scalars[j] points[j] over the table's n points (the same value as the plain MSM).
 * 0, LD_ERR_NOMEM, LD_ERR_INVALID_ARG for a table of the other group, LD_ERR_STATE for an
 * incomplete one. */
int ld_g1_msm_table(ld_g1_t *r, const ld_msm_table_t *t, const ld_fr_t *scalars);
int ld_g2_msm_table(ld_g2_t *r, const ld_msm_table_t *t, const ld_fr_t *scalars);

#endif
