/* Poseidon over the BN254 scalar field with the parameters of circom's circomlib and zerokit: the
 * x^5 S-box, 8 full rounds, 56/57/56/60/60/63/64/63 partial rounds for 1..8 inputs (state width
 * t = inputs + 1), round constants and Cauchy MDS matrices from the Grain LFSR of the Poseidon
 * paper (scripts/gen-zk-constants.py). The state starts as [0, inputs...]; the hash is state[0]
 * after the last round. This is the hash the RLN-v2 circuit computes (identity commitment, rate
 * commitment, external nullifier, the shares' a1, the nullifier, the Merkle tree's nodes).
 *
 * Constant-time (only public round counts steer it), so it may hash secrets. Pure; thread-safe. */
#ifndef LD_ZK_POSEIDON_H
#define LD_ZK_POSEIDON_H

#include <stddef.h>

#include "zk/field.h"

#define LD_POSEIDON_MAX_INPUTS 8

/* out = Poseidon(in[0..n)). LD_ERR_INVALID_ARG when n is 0 or above LD_POSEIDON_MAX_INPUTS. */
int ld_poseidon_hash(ld_fr_t *out, const ld_fr_t *in, size_t n);
/* Poseidon(a, b): a Merkle node. */
void ld_poseidon_hash2(ld_fr_t *out, const ld_fr_t *a, const ld_fr_t *b);
/* Poseidon(a). */
void ld_poseidon_hash1(ld_fr_t *out, const ld_fr_t *a);

#endif
