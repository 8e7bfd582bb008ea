/* Groth16 proof generation over BN254 from a snarkjs proving key (zkey.h), as snarkjs and
 * arkworks-circom compute it, so that the proofs verify against the key's verifying key:
 *
 *   the rows of A·w and B·w on the domain (C·w = A·w ∘ B·w for a satisfied system), each
 *   interpolated (iFFT) and evaluated on the odd coset (FFT), h = A·B − C there; then
 *   A  = alpha1 + sum w_i A_i + r delta1
 *   B  = beta2  + sum w_i B2_i + s delta2       (and B1 the same in G1)
 *   C  = sum_{private i} w_i C_i + sum_j h_j H_j + s A + r B1 − r s delta1
 *
 * with r and s fresh random scalars (the zkey's H points absorb the division by the vanishing
 * polynomial). The prover holds the key and the domain; it is immutable once built and may be
 * shared between threads. Witness values are secret: the MSMs are variable-time as in arkworks
 * and snarkjs; r and s blind the result. */
#ifndef LD_ZK_GROTH16_PROVE_H
#define LD_ZK_GROTH16_PROVE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "zk/groth16.h"
#include "zk/zkey.h"

typedef struct ld_groth16_prover ld_groth16_prover_t;

/* Takes ownership of `zk` (also on failure). LD_ERR_NOMEM. */
int ld_groth16_prover_new(ld_groth16_prover_t **out, ld_zkey_t *zk);
void ld_groth16_prover_free(ld_groth16_prover_t *p);
const ld_zkey_t *ld_groth16_prover_key(const ld_groth16_prover_t *p);
/* 1 (the default): a proof runs on the caller's thread alone. 2: its MSMs are split over the
 * caller's thread and a second one started for each proof (A and B there, B1, C and H here).
 * Set it before sharing the prover between threads. */
void ld_groth16_prover_set_threads(ld_groth16_prover_t *p, unsigned threads);

/* Proves for the full witness `w` (zk->num_wires elements, w[0] = 1) with blinding scalars r
 * and s. LD_ERR_INVALID_ARG when n differs from the key's wire count or w[0] != 1,
 * LD_ERR_NOMEM. The proof is only valid when w satisfies the circuit. */
int ld_groth16_prove_rs(const ld_groth16_prover_t *p, const ld_fr_t *w, size_t n, const ld_fr_t *r,
                        const ld_fr_t *s, ld_groth16_proof_t *out);
/* As ld_groth16_prove_rs with r and s drawn from the system's CSPRNG. */
int ld_groth16_prove(const ld_groth16_prover_t *p, const ld_fr_t *w, size_t n,
                     ld_groth16_proof_t *out);

/* A cache of the witness-independent part of a proof for one prover: the A, B1, B2 and C sums
 * over the "fixed" wires (those a caller expects to keep their values from proof to proof, e.g.
 * a member's Merkle path hashes), so that a proof computes only the other wires' MSMs, the
 * quotient and its MSM. Every proof compares the fixed wires' values with those the sums were
 * made for and, when some differ, moves the sums by the MSMs over the differences (the cost of
 * the changed wires alone; the first proof costs all fixed wires), so a wrong guess of which
 * wires are fixed costs time, never correctness. The sums and values are as secret as the witness:
 * ld_groth16_cache_free wipes them. A cache is used by one proof at a time (not thread-safe);
 * the prover must outlive it.
 *
 * The MSMs a cached proof runs (the varying wires' A, B1, B2, C and the quotient's H) go over
 * fixed-base tables (msm.h) that the cache builds once when made: some 16 MB and a few hundred
 * milliseconds of CPU per cache. */
typedef struct ld_groth16_cache ld_groth16_cache_t;

/* `wire_varies`: the key's num_wires flags, non-zero for the wires that may change between
 * proofs. The cache starts empty (the first proof fills it); its tables are built here.
 * LD_ERR_NOMEM. */
int ld_groth16_cache_new(ld_groth16_cache_t **out, const ld_groth16_prover_t *p,
                         const uint8_t *wire_varies);
/* The same without the tables: the cache proves at once (plain MSMs where a table is missing)
 * and ld_groth16_cache_build_step makes the tables a slice at a time (up to about max_points
 * points' rows per call): 1 while work remains, 0 once every table is complete, LD_ERR_NOMEM.
 * Steps and proofs on one cache must not run at the same time. */
int ld_groth16_cache_new_deferred(ld_groth16_cache_t **out, const ld_groth16_prover_t *p,
                                  const uint8_t *wire_varies);
int ld_groth16_cache_build_step(ld_groth16_cache_t *c, size_t max_points);
bool ld_groth16_cache_complete(const ld_groth16_cache_t *c);
void ld_groth16_cache_free(ld_groth16_cache_t *c);
/* The number of fixed wires, proofs that reused the sums and proofs that (re)made them (any of
 * the pointers may be NULL). */
void ld_groth16_cache_stats(const ld_groth16_cache_t *c, size_t *fixed_wires, uint64_t *hits,
                            uint64_t *misses);
/* As ld_groth16_prove_rs / ld_groth16_prove (same proof for the same r and s), through the
 * cache; runs on the caller's thread alone. */
int ld_groth16_prove_cached_rs(ld_groth16_cache_t *c, const ld_fr_t *w, size_t n, const ld_fr_t *r,
                               const ld_fr_t *s, ld_groth16_proof_t *out);
int ld_groth16_prove_cached(ld_groth16_cache_t *c, const ld_fr_t *w, size_t n,
                            ld_groth16_proof_t *out);
/* Brings the cache's fixed-wire sums to the fixed wires of the witness w (n wires) without a
 * proof, as a proof's miss would (moved by the wires that differ, or made from scratch when the
 * cache is empty), so that the next proof with those values is a hit. Not counted in the hits
 * and misses. 1 when the sums were (re)made, 0 when they already were w's, LD_ERR_INVALID_ARG
 * (n is not the key's wire count or w[0] is not 1), LD_ERR_NOMEM (the cache is then empty). */
int ld_groth16_cache_prepare(ld_groth16_cache_t *c, const ld_fr_t *w, size_t n);

#endif
