/* The item set a reconciliation runs against: a pluggable interface (a vtable and its object).
 *
 * The engine (ranges.h, session.h) never sees how the items are kept; it asks a set for the count
 * and fingerprint of a range, for the items of a range in order, and (optionally) for the item k
 * places into a range, to split ranges at item quantiles. Two backings are planned:
 *   - the in-memory B+tree of tree.h, as a rolling window fed by the relay fan-out (every node
 *     running the Network Reliability Service, one tree per subscribed content topic), and
 *   - the archive's window on a store node: the same tree filled from the archive at start
 *     (forward pages over [now − range, now], as nwaku's initFillStorage does) and then fed by
 *     the archive's inserts and retention, since neither SQLite nor PostgreSQL can XOR-aggregate
 *     hashes over an index range in O(log n).
 * A topic-scoped view (several per-shard trees answering as one: counts added, fingerprints
 * XORed, items merged) is another implementation of the same interface; it leaves `nth` NULL and
 * the engine then splits ranges into equal time slices as nwaku does.
 *
 * Contract for every implementation: ranges are inclusive on both ends, items are unique and
 * ordered by ld_sync_id_cmp, and the set does not change during one call. Calls come from the
 * thread that owns the set (the node's loop); the engine never keeps a pointer an implementation
 * hands to a callback beyond that callback. */
#ifndef LD_WAKU_SYNC_SET_H
#define LD_WAKU_SYNC_SET_H

#include <stdint.h>

#include "waku/sync/id.h"

/* Count and fingerprint of a range. */
typedef struct ld_sync_summary {
  uint64_t count;
  ld_sync_fp_t fp;
} ld_sync_summary_t;

/* Called for each item of a range, in ascending order; a nonzero return stops the walk and is
 * returned by `each`. `item` is valid during the call only. */
typedef int (*ld_sync_item_fn)(void *user, const ld_sync_id_t *item);

typedef struct ld_sync_set_ops {
  /* Count and XOR of the items x with lo ≤ x ≤ hi (zero when hi < lo). */
  void (*summary)(void *self, const ld_sync_id_t *lo, const ld_sync_id_t *hi,
                  ld_sync_summary_t *out);
  /* Calls fn for the items in [lo, hi] in order until it returns nonzero; returns that value, or
   * 0 after the last item. */
  int (*each)(void *self, const ld_sync_id_t *lo, const ld_sync_id_t *hi, ld_sync_item_fn fn,
              void *user);
  /* Optional (NULL: the engine splits by time): stores the item that comes `k` places after the
   * first item ≥ lo (k = 0: that first item); LD_ERR_NOT_FOUND past the last item. */
  int (*nth)(void *self, const ld_sync_id_t *lo, uint64_t k, ld_sync_id_t *out);
} ld_sync_set_ops_t;

typedef struct ld_sync_set {
  const ld_sync_set_ops_t *ops;
  void *self;
} ld_sync_set_t;

static inline void ld_sync_set_summary(const ld_sync_set_t *s, const ld_sync_id_t *lo,
                                       const ld_sync_id_t *hi, ld_sync_summary_t *out) {
  s->ops->summary(s->self, lo, hi, out);
}

static inline int ld_sync_set_each(const ld_sync_set_t *s, const ld_sync_id_t *lo,
                                   const ld_sync_id_t *hi, ld_sync_item_fn fn, void *user) {
  return s->ops->each(s->self, lo, hi, fn, user);
}

#endif
