/* RLN-v2 proof generation: the circuit's full witness computed natively by evaluating zerokit's
 * witness graph of the circom circuit (witness_graph.h; zerokit v0.8's
 * resources/tree_height_20/graph.bin), then a Groth16 proof from the circuit's proving key
 * (rln_final.zkey), as zerokit's generate_proof does. The proof verifies with ld_rln_verify and
 * with zerokit's verifier.
 *
 * A prover is immutable once built (about 10 MiB: the key's points and the graph); share it
 * between threads freely. */
#ifndef LD_ZK_RLN_PROVER_H
#define LD_ZK_RLN_PROVER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "zk/rln.h"

typedef struct ld_rln_prover ld_rln_prover_t;

/* Builds a prover from the zkey's and the graph's bytes (copied as needed; the caller keeps
 * them). Errors as ld_zkey_read and ld_witness_graph_load, and LD_ERR_MALFORMED when the graph
 * and the key do not describe the RLN-v2 circuit of depth LD_RLN_TREE_DEPTH (its input signals,
 * wire count, 5 public values). */
int ld_rln_prover_new(ld_rln_prover_t **out, const uint8_t *zkey, size_t zkey_len,
                      const uint8_t *graph, size_t graph_len);
/* The same from two files; LD_ERR_IO when one cannot be read. */
int ld_rln_prover_new_from_files(ld_rln_prover_t **out, const char *zkey_path,
                                 const char *graph_path);
void ld_rln_prover_free(ld_rln_prover_t *p);

/* As ld_groth16_prover_set_threads: 1 (the default) or 2 threads per proof. Set it before
 * sharing the prover. */
void ld_rln_prover_set_threads(ld_rln_prover_t *p, unsigned threads);

/* Number of wires of the circuit's witness. */
size_t ld_rln_prover_num_wires(const ld_rln_prover_t *p);
/* The circuit's full witness for `w` (ld_rln_prover_num_wires elements, wire 0 = 1, wires 1..5
 * the public values y, root, nullifier, x, external_nullifier). LD_ERR_INVALID_ARG for a
 * message id >= the limit or a Merkle path of another depth; LD_ERR_NOMEM. */
int ld_rln_witness_compute(const ld_rln_prover_t *p, const ld_rln_witness_t *w, ld_fr_t *wires);

/* Proves `w`: writes the 128-byte proof and the values it proves. Fresh randomness from the
 * system's CSPRNG. Errors as ld_rln_witness_compute. */
int ld_rln_prove(const ld_rln_prover_t *p, const ld_rln_witness_t *w,
                 uint8_t proof[LD_RLN_PROOF_BYTES], ld_rln_proof_values_t *values);
/* As ld_rln_prove with the Groth16 blinding scalars given (tests, reproducible benchmarks). */
int ld_rln_prove_rs(const ld_rln_prover_t *p, const ld_rln_witness_t *w, const ld_fr_t *r,
                    const ld_fr_t *s, uint8_t proof[LD_RLN_PROOF_BYTES],
                    ld_rln_proof_values_t *values);

/* A member's proving context: proofs for one member (identity, limit, Merkle path) reuse the
 * MSM sums over the wires that depend on the membership alone (ld_groth16_cache_t), so that
 * after the first proof only the wires that depend on the message id, x and the external
 * nullifier, and the quotient, cost MSM work (the steady state of a publishing node). Every
 * proof checks the membership wires against those the sums were made for and updates the sums
 * by the wires that differ (a new root changes the path's upper levels; a new member nearly
 * all), so proofs are always right. The context holds
 * secret values derived from the identity and wipes them when freed. One proof at a time per
 * context (not thread-safe); the prover must outlive it. */
typedef struct ld_rln_proving_ctx ld_rln_proving_ctx_t;

/* Builds the context's fixed-base MSM tables (some 16 MB, about 0.7 s of CPU on one core: make
 * it off any event loop). LD_ERR_NOMEM. */
int ld_rln_proving_ctx_new(ld_rln_proving_ctx_t **out, const ld_rln_prover_t *p);
/* The same without the tables, in a few milliseconds: the context proves at once (its cache of
 * the membership wires' sums works from the first proof; plain MSMs stand in for the missing
 * tables) and ld_rln_proving_ctx_build_step makes the tables a slice at a time (up to about
 * max_points points' rows per call; 256 is some 15 ms of CPU in a Release build), so that the
 * work fits in the gaps between proofs: 1 while work remains, 0 once complete, LD_ERR_NOMEM.
 * Steps and proofs on one context must not run at the same time. */
int ld_rln_proving_ctx_new_deferred(ld_rln_proving_ctx_t **out, const ld_rln_prover_t *p);
int ld_rln_proving_ctx_build_step(ld_rln_proving_ctx_t *c, size_t max_points);
bool ld_rln_proving_ctx_complete(const ld_rln_proving_ctx_t *c);
/* The prover the context was made for. */
const ld_rln_prover_t *ld_rln_proving_ctx_prover(const ld_rln_proving_ctx_t *c);
void ld_rln_proving_ctx_free(ld_rln_proving_ctx_t *c);
/* As ld_rln_prove / ld_rln_prove_rs (the same proof for the same r and s), through the
 * context's cache. */
int ld_rln_prove_ctx(ld_rln_proving_ctx_t *c, const ld_rln_witness_t *w,
                     uint8_t proof[LD_RLN_PROOF_BYTES], ld_rln_proof_values_t *values);
int ld_rln_prove_ctx_rs(ld_rln_proving_ctx_t *c, const ld_rln_witness_t *w, const ld_fr_t *r,
                        const ld_fr_t *s, uint8_t proof[LD_RLN_PROOF_BYTES],
                        ld_rln_proof_values_t *values);
/* Wires whose sums are cached, proofs that reused the sums and proofs that (re)made them
 * (ld_rln_proving_ctx_prepare's work is not counted there; any pointer may be NULL). */
void ld_rln_proving_ctx_stats(const ld_rln_proving_ctx_t *c, size_t *fixed_wires, uint64_t *hits,
                              uint64_t *misses);

/* Brings the context's cached sums to the membership of `w` (identity secret, user message
 * limit, Merkle path; its message id, x and external nullifier are ignored) without a proof for
 * the caller, so that the next proof for that membership is a hit: the sums move by the wires
 * that differ, as a proof's miss moves them (a new root: the path's changed levels; a new
 * member: all) and no proof is made (no varying wires, no quotient). 1 when the
 * sums were moved, 0 when they already were this membership's (the last proof or prepare through
 * the context had it: nothing done), LD_ERR_INVALID_ARG for a limit of 0 or a path of another
 * depth, LD_ERR_NOMEM. One call or proof at a time per context. */
int ld_rln_proving_ctx_prepare(ld_rln_proving_ctx_t *c, const ld_rln_witness_t *w);
/* Prepares that moved the sums. */
uint64_t ld_rln_proving_ctx_prepares(const ld_rln_proving_ctx_t *c);

#endif
