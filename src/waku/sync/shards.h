/* The item sets of a store node's store-sync: one tree (tree.h) per configured pubsub topic (a
 * shard of the node's cluster), and views that answer for several of them as one set.
 *
 * A reconciliation's scope is a list of pubsub topics (session.h): the view over the topics of
 * that list the node keeps answers it — counts added, fingerprints XORed, items merged in order.
 * A view of one tree is the tree's own set (with `nth`, so the default policy splits ranges at
 * item quantiles); a view of several leaves `nth` NULL (ranges are split into equal time slices,
 * as nwaku does). Merging k trees costs O(k log n) per item walked.
 *
 * Not synchronised: one thread (the node's loop) owns the sets and their views. A view borrows
 * the trees: it is valid while the shards object lives. */
#ifndef LD_WAKU_SYNC_SHARDS_H
#define LD_WAKU_SYNC_SHARDS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "waku/sync/codec.h"
#include "waku/sync/id.h"
#include "waku/sync/set.h"
#include "waku/sync/tree.h"

/* Pubsub topics one shards object keeps at most (a cluster has 1024 shards). */
#define LD_SYNC_MAX_SHARDS 1024

typedef struct ld_sync_shards ld_sync_shards_t;

/* Creates one empty tree for each of topics[0..n) (NUL-terminated, copied; duplicates are kept
 * once). Errors: LD_ERR_INVALID_ARG (n = 0, more than LD_SYNC_MAX_SHARDS, an empty or NULL
 * topic), LD_ERR_NOMEM. Free with ld_sync_shards_free. */
int ld_sync_shards_new(const char *const *topics, size_t n, ld_sync_shards_t **out);

void ld_sync_shards_free(ld_sync_shards_t *s);

/* Growing use (the Network Reliability Service: one tree per content topic, made on first use):
 * an object with no topic, and the index of `topic` (len bytes, no NUL inside), adding an empty
 * tree for it when new. A topic's tree and string stay at their address while the object lives
 * (views and topic lists may point at them); topics are never removed. Errors: LD_ERR_INVALID_ARG
 * (empty, or a NUL inside), LD_ERR_LIMIT (LD_SYNC_MAX_SHARDS kept already), LD_ERR_NOMEM. */
int ld_sync_shards_new_empty(ld_sync_shards_t **out);
int ld_sync_shards_ensure(ld_sync_shards_t *s, const char *topic, size_t len);

/* The kept topics, in the order given (duplicates dropped); valid while `s` lives. */
size_t ld_sync_shards_count(const ld_sync_shards_t *s);
const char *ld_sync_shards_topic(const ld_sync_shards_t *s, size_t i);

/* Index of `topic` (len bytes) among the kept topics, or -1. */
int ld_sync_shards_find(const ld_sync_shards_t *s, const char *topic, size_t len);

/* Adds `id` to the tree of `topic` (NUL-terminated). Returns 0, LD_ERR_EXISTS (held already),
 * LD_ERR_NOT_FOUND (a topic not kept: nothing changes), LD_ERR_NOMEM. */
int ld_sync_shards_insert(ld_sync_shards_t *s, const char *topic, const ld_sync_id_t *id);

/* Removes `id` from the tree of `topic`. Returns 0 or LD_ERR_NOT_FOUND. */
int ld_sync_shards_remove(ld_sync_shards_t *s, const char *topic, const ld_sync_id_t *id);

/* True when any tree holds `id`. */
bool ld_sync_shards_contains(const ld_sync_shards_t *s, const ld_sync_id_t *id);

/* Removes every item with time < before from every tree; returns how many. */
uint64_t ld_sync_shards_prune(ld_sync_shards_t *s, int64_t before);

/* Items over all trees, and the bytes the trees hold. */
uint64_t ld_sync_shards_size(const ld_sync_shards_t *s);
size_t ld_sync_shards_memory(const ld_sync_shards_t *s);

/* A set over some trees. Caller storage: zero it (or ld_sync_view_init) before use, release with
 * ld_sync_view_clear. */
typedef struct ld_sync_view {
  const ld_sync_shards_t *shards;
  ld_sync_tree_t **trees;
  size_t n, cap;
  void *walk; /* private: one cursor per tree for merged walks */
} ld_sync_view_t;

void ld_sync_view_init(ld_sync_view_t *v);
void ld_sync_view_clear(ld_sync_view_t *v);

/* Points `v` at the trees of topics[0..n) that `s` keeps (unknown topics are skipped), or at
 * every tree when n = 0. Returns 0, LD_ERR_NOT_FOUND when none of the topics is kept (v is left
 * empty), LD_ERR_NOMEM. */
int ld_sync_view_select(ld_sync_view_t *v, const ld_sync_shards_t *s, const ld_sync_topic_t *topics,
                        size_t n);

/* The view as a set (see above); valid while `v` keeps its selection. An empty view is an empty
 * set. */
ld_sync_set_t ld_sync_view_set(ld_sync_view_t *v);

#endif
