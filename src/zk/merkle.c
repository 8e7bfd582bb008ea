/* Dense-prefix Merkle tree with the zero ladder beyond the last set leaf. */
#include "zk/merkle.h"

#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "zk/poseidon.h"

struct ld_merkle_tree {
  unsigned depth;
  uint64_t next_index;
  ld_fr_t zero[LD_MERKLE_MAX_DEPTH + 1];
  /* level[l] holds nodes 0..len[l)-1 of level l (0 = leaves); the others equal zero[l] */
  ld_fr_t *level[LD_MERKLE_MAX_DEPTH + 1];
  uint64_t len[LD_MERKLE_MAX_DEPTH + 1];
  uint64_t cap[LD_MERKLE_MAX_DEPTH + 1];
};

int ld_merkle_new(ld_merkle_tree_t **out, unsigned depth) {
  if (depth == 0 || depth > LD_MERKLE_MAX_DEPTH) {
    return LD_ERR_INVALID_ARG;
  }
  ld_merkle_tree_t *t = calloc(1, sizeof *t);
  if (t == NULL) {
    return LD_ERR_NOMEM;
  }
  t->depth = depth;
  ld_fr_set_zero(&t->zero[0]);
  for (unsigned l = 0; l < depth; l++) {
    ld_poseidon_hash2(&t->zero[l + 1], &t->zero[l], &t->zero[l]);
  }
  *out = t;
  return 0;
}

void ld_merkle_free(ld_merkle_tree_t *t) {
  if (t == NULL) {
    return;
  }
  for (unsigned l = 0; l <= t->depth; l++) {
    free(t->level[l]);
  }
  free(t);
}

unsigned ld_merkle_depth(const ld_merkle_tree_t *t) {
  return t->depth;
}

uint64_t ld_merkle_capacity(const ld_merkle_tree_t *t) {
  return (uint64_t)1 << t->depth;
}

uint64_t ld_merkle_next_index(const ld_merkle_tree_t *t) {
  return t->next_index;
}

static const ld_fr_t *node(const ld_merkle_tree_t *t, unsigned l, uint64_t i) {
  return i < t->len[l] ? &t->level[l][i] : &t->zero[l];
}

/* Makes level l hold nodes 0..n-1, the new ones set to zero[l]. */
static int grow_level(ld_merkle_tree_t *t, unsigned l, uint64_t n) {
  if (n <= t->len[l]) {
    return 0;
  }
  if (n > t->cap[l]) {
    uint64_t cap = t->cap[l] ? t->cap[l] : 16;
    while (cap < n) {
      cap *= 2;
    }
    uint64_t max = ((uint64_t)1 << (t->depth - l));
    if (cap > max) {
      cap = max;
    }
    ld_fr_t *grown = realloc(t->level[l], (size_t)cap * sizeof *grown);
    if (grown == NULL) {
      return LD_ERR_NOMEM;
    }
    t->level[l] = grown;
    t->cap[l] = cap;
  }
  for (uint64_t i = t->len[l]; i < n; i++) {
    t->level[l][i] = t->zero[l];
  }
  t->len[l] = n;
  return 0;
}

/* Makes every level cover the leaves 0..end-1. */
static int cover(ld_merkle_tree_t *t, uint64_t end) {
  for (unsigned l = 0; l <= t->depth; l++) {
    uint64_t n = ((end - 1) >> l) + 1;
    int rc = grow_level(t, l, n);
    if (rc != 0) {
      return rc;
    }
  }
  return 0;
}

/* Re-hashes the parents of level-0 nodes first..last, level by level. */
static void rehash(ld_merkle_tree_t *t, uint64_t first, uint64_t last) {
  for (unsigned l = 0; l < t->depth; l++) {
    first >>= 1;
    last >>= 1;
    for (uint64_t i = first; i <= last; i++) {
      ld_poseidon_hash2(&t->level[l + 1][i], node(t, l, 2 * i), node(t, l, 2 * i + 1));
    }
  }
}

int ld_merkle_set_range(ld_merkle_tree_t *t, uint64_t start, const ld_fr_t *leaves, size_t n) {
  uint64_t capacity = ld_merkle_capacity(t);
  if (start >= capacity || n > capacity - start) {
    return LD_ERR_LIMIT;
  }
  if (n == 0) {
    return 0;
  }
  uint64_t end = start + n;
  int rc = cover(t, end > t->next_index ? end : t->next_index);
  if (rc != 0) {
    return rc;
  }
  memcpy(&t->level[0][start], leaves, n * sizeof *leaves);
  rehash(t, start, end - 1);
  if (end > t->next_index) {
    t->next_index = end;
  }
  return 0;
}

int ld_merkle_set(ld_merkle_tree_t *t, uint64_t index, const ld_fr_t *leaf) {
  return ld_merkle_set_range(t, index, leaf, 1);
}

int ld_merkle_append(ld_merkle_tree_t *t, const ld_fr_t *leaf, uint64_t *index) {
  uint64_t at = t->next_index;
  int rc = ld_merkle_set(t, at, leaf);
  if (rc == 0 && index != NULL) {
    *index = at;
  }
  return rc;
}

int ld_merkle_delete(ld_merkle_tree_t *t, uint64_t index) {
  ld_fr_t zero;
  ld_fr_set_zero(&zero);
  if (index >= ld_merkle_capacity(t)) {
    return LD_ERR_LIMIT;
  }
  if (index >= t->len[0]) {
    return 0; /* already empty */
  }
  t->level[0][index] = zero;
  rehash(t, index, index);
  return 0;
}

int ld_merkle_get(const ld_merkle_tree_t *t, uint64_t index, ld_fr_t *leaf) {
  if (index >= ld_merkle_capacity(t)) {
    return LD_ERR_LIMIT;
  }
  *leaf = *node(t, 0, index);
  return 0;
}

void ld_merkle_root(const ld_merkle_tree_t *t, ld_fr_t *root) {
  *root = *node(t, t->depth, 0);
}

int ld_merkle_proof(const ld_merkle_tree_t *t, uint64_t index, ld_merkle_proof_t *proof) {
  if (index >= ld_merkle_capacity(t)) {
    return LD_ERR_LIMIT;
  }
  proof->depth = t->depth;
  for (unsigned l = 0; l < t->depth; l++) {
    proof->path[l] = *node(t, l, index ^ 1);
    proof->index_bits[l] = (uint8_t)(index & 1);
    index >>= 1;
  }
  return 0;
}

void ld_merkle_root_from_proof(const ld_fr_t *leaf, const ld_merkle_proof_t *proof, ld_fr_t *root) {
  ld_fr_t acc = *leaf;
  for (unsigned l = 0; l < proof->depth; l++) {
    if (proof->index_bits[l]) {
      ld_poseidon_hash2(&acc, &proof->path[l], &acc);
    } else {
      ld_poseidon_hash2(&acc, &acc, &proof->path[l]);
    }
  }
  *root = acc;
}

void ld_merkle_zero(const ld_merkle_tree_t *t, unsigned level, ld_fr_t *out) {
  *out = t->zero[level <= t->depth ? level : t->depth];
}
