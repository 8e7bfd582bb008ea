/* The RLN membership tree: a binary Merkle tree of fixed depth over Fr with Poseidon(left, right)
 * nodes and 0 as the empty leaf, as zerokit's PoseidonTree (OptimalMerkleTree / pmtree) keeps it,
 * so that roots and proofs agree with zerokit, nwaku and the membership contract. RLN-v2 uses
 * depth 20 (LD_MERKLE_RLN_DEPTH).
 *
 * Storage is dense up to the highest leaf ever set ("next index", as zerokit counts it) and the
 * zero ladder z[0] = 0, z[l+1] = Poseidon(z[l], z[l]) stands for everything beyond: memory is about
 * 64 bytes per member (64 MiB for all 2^20). Setting a leaf re-hashes its path (depth hashes);
 * ld_merkle_set_range re-hashes each touched node once. Not thread-safe: one owner. */
#ifndef LD_ZK_MERKLE_H
#define LD_ZK_MERKLE_H

#include <stddef.h>
#include <stdint.h>

#include "zk/field.h"

#define LD_MERKLE_RLN_DEPTH 20
#define LD_MERKLE_MAX_DEPTH 32

typedef struct ld_merkle_tree ld_merkle_tree_t;

/* A membership proof: the sibling at each level from the leaf up, and the leaf index's bits
 * (least significant first: 1 when the node is the right child), as the circuit takes them. */
typedef struct ld_merkle_proof {
  ld_fr_t path[LD_MERKLE_MAX_DEPTH];
  uint8_t index_bits[LD_MERKLE_MAX_DEPTH];
  unsigned depth;
} ld_merkle_proof_t;

/* Creates an empty tree of `depth` levels (1..LD_MERKLE_MAX_DEPTH). LD_ERR_INVALID_ARG or
 * LD_ERR_NOMEM. Free with ld_merkle_free. */
int ld_merkle_new(ld_merkle_tree_t **out, unsigned depth);
void ld_merkle_free(ld_merkle_tree_t *t);

unsigned ld_merkle_depth(const ld_merkle_tree_t *t);
/* 2^depth. */
uint64_t ld_merkle_capacity(const ld_merkle_tree_t *t);
/* One past the highest index ever set: where ld_merkle_append writes. */
uint64_t ld_merkle_next_index(const ld_merkle_tree_t *t);

/* Sets leaf `index`. LD_ERR_LIMIT when index >= capacity, LD_ERR_NOMEM. */
int ld_merkle_set(ld_merkle_tree_t *t, uint64_t index, const ld_fr_t *leaf);
/* Sets leaves start..start+n-1 in one pass. LD_ERR_LIMIT when they do not fit; nothing changes
 * then. */
int ld_merkle_set_range(ld_merkle_tree_t *t, uint64_t start, const ld_fr_t *leaves, size_t n);
/* Sets the leaf at ld_merkle_next_index (returned in *index when not NULL). */
int ld_merkle_append(ld_merkle_tree_t *t, const ld_fr_t *leaf, uint64_t *index);
/* Resets a leaf to 0, as zerokit's delete does (the next index does not move back). */
int ld_merkle_delete(ld_merkle_tree_t *t, uint64_t index);
/* The leaf at `index` (0 when never set). LD_ERR_LIMIT beyond capacity. */
int ld_merkle_get(const ld_merkle_tree_t *t, uint64_t index, ld_fr_t *leaf);
void ld_merkle_root(const ld_merkle_tree_t *t, ld_fr_t *root);
/* The proof of membership of leaf `index`. LD_ERR_LIMIT beyond capacity. */
int ld_merkle_proof(const ld_merkle_tree_t *t, uint64_t index, ld_merkle_proof_t *proof);
/* The root that `leaf` and `proof` imply (what the circuit recomputes). */
void ld_merkle_root_from_proof(const ld_fr_t *leaf, const ld_merkle_proof_t *proof, ld_fr_t *root);
/* z[level] of the zero ladder (level 0..depth), the root of an empty subtree of that height. */
void ld_merkle_zero(const ld_merkle_tree_t *t, unsigned level, ld_fr_t *out);

#endif
