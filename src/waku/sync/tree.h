/* The in-memory item set of store-sync: a counted B+tree of (timestamp, hash) items whose inner
 * entries cache the item count and the XOR fingerprint of their subtree.
 *
 * Costs (n items): insert, remove, rank, k-th item and the count and fingerprint of any range
 * O(log n) (a range's fingerprint is two prefix descents; at each level the shorter side of the
 * node is XORed and the node's cached total supplies the rest); walking a range O(log n + items);
 * pruning everything older than a time O(log n + removed leaves).
 *
 * Memory: leaves hold up to 100 items of 40 bytes (4 KiB), inner nodes 64 children with their
 * counts, fingerprints and separators (5.6 KiB, about 1 byte per item). A leaf that overflows
 * while taking an item near its end (the relay feeds items in roughly ascending time) keeps what
 * it has and starts a new leaf, and a full leaf first hands items to a neighbour with room, so a
 * window filled in time order packs its leaves full: 41 bytes per item (44 with the relay's
 * jitter), and inserts in random order leave them about 82 % full: 49 bytes per item
 * (tests/unit/waku/sync/test_tree.c measures both). Worst case, an adversarial insert order that
 * always overflows full leaves at their end: about 80 bytes per item. ld_sync_tree_memory
 * reports the figure of a live tree.
 *
 * The rolling window: ld_sync_tree_prune(before) drops every item older than `before`, as nwaku's
 * SeqStorage.prune does (items with time < before).
 *
 * Not synchronised: one thread (the node's loop) owns a tree. */
#ifndef LD_WAKU_SYNC_TREE_H
#define LD_WAKU_SYNC_TREE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "waku/sync/id.h"
#include "waku/sync/set.h"

typedef struct ld_sync_tree ld_sync_tree_t;

/* Creates an empty tree in *out. Errors: LD_ERR_NOMEM. Free with ld_sync_tree_free. */
int ld_sync_tree_new(ld_sync_tree_t **out);

/* Frees the tree and every item (NULL is a no-op). */
void ld_sync_tree_free(ld_sync_tree_t *t);

/* Adds `id`. Returns 0, LD_ERR_EXISTS when the tree already holds it (nothing changes, as nwaku
 * ignores duplicates), LD_ERR_NOMEM (nothing changes). */
int ld_sync_tree_insert(ld_sync_tree_t *t, const ld_sync_id_t *id);

/* Removes `id`. Returns 0 or LD_ERR_NOT_FOUND. Never allocates. */
int ld_sync_tree_remove(ld_sync_tree_t *t, const ld_sync_id_t *id);

/* Removes every item with time < before; returns how many. Never allocates. */
uint64_t ld_sync_tree_prune(ld_sync_tree_t *t, int64_t before);

uint64_t ld_sync_tree_size(const ld_sync_tree_t *t);

bool ld_sync_tree_contains(const ld_sync_tree_t *t, const ld_sync_id_t *id);

/* Number of items < key (inclusive: ≤ key). */
uint64_t ld_sync_tree_rank(const ld_sync_tree_t *t, const ld_sync_id_t *key, bool inclusive);

/* The item of rank `rank` (0 = the smallest). LD_ERR_NOT_FOUND when rank ≥ size. */
int ld_sync_tree_at(const ld_sync_tree_t *t, uint64_t rank, ld_sync_id_t *out);

/* Count and fingerprint of the items in [lo, hi] (zero when hi < lo). */
void ld_sync_tree_summary(const ld_sync_tree_t *t, const ld_sync_id_t *lo, const ld_sync_id_t *hi,
                          ld_sync_summary_t *out);

/* Calls fn for the items in [lo, hi] in order until it returns nonzero (see set.h). The tree must
 * not change during the walk. */
int ld_sync_tree_each(const ld_sync_tree_t *t, const ld_sync_id_t *lo, const ld_sync_id_t *hi,
                      ld_sync_item_fn fn, void *user);

/* Bytes held by the tree's nodes (what malloc was asked for). */
size_t ld_sync_tree_memory(const ld_sync_tree_t *t);

/* The tree as an ld_sync_set_t (with `nth`); valid while the tree lives. */
ld_sync_set_t ld_sync_tree_set(ld_sync_tree_t *t);

/* Checks every invariant (order, separators, cached counts and fingerprints, fill, leaf chain);
 * returns 0 or LD_ERR_INTERNAL. O(n); for tests. */
int ld_sync_tree_check(const ld_sync_tree_t *t);

#endif
