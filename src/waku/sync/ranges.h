/* Range processing: the answer to one received reconciliation payload, computed against an item
 * set (nwaku's SeqStorage.processPayload), and the first payload of a session. Stateless between
 * payloads (every payload carries everything), sans-I/O: payload in, payload out, plus the
 * differences found on the way.
 *
 * For each received range [lo, hi] (lo = the previous range's upper time with a zero hash):
 *   Skip          → Skip.
 *   Fingerprint f → Skip when our fingerprint of the range equals f. Otherwise, with c of our
 *                   items in the range: c = 0 → an empty item set marked reconciled (the peer
 *                   pushes everything it has there); c ≤ threshold → our items (not reconciled);
 *                   else the range is split into `partitions` sub-ranges, each answered the same
 *                   way with its own fingerprint when it holds more than `threshold` items.
 *   ItemSet S, r  → merge S with our items in the range: theirs alone go to `need` (the peer
 *                   pushes them; nothing asks for them), ours alone to `have` (push them to the
 *                   peer by transfer). Then r = true → Skip; r = false → an item set marked
 *                   reconciled, so that the peer learns what we lack.
 * Adjacent Skip ranges merge; an answer of Skips only is the empty payload (the session ends).
 *
 * Two policies, both speaking the same wire format and both interoperating with nwaku:
 *   ld_sync_policy_nwaku: nwaku's answers, byte for byte (8 equal time slices, threshold 100,
 *     item sets answered with all our items in the range, its edge cases: a range L < 8 ns long
 *     that must split is dropped from the answer; a range before our first or after our last
 *     item answers an item set with an empty reconciled set and without recording differences).
 *   ld_sync_policy_default (this engine's): ranges split at item quantiles (the set's `nth`),
 *     so that every sub-range holds the same number of items however bursty the traffic, into
 *     16 sub-ranges with threshold 2; the session's first payload is already split; an item set
 *     is answered with Skip when the peer holds everything we do not lack, else with just the
 *     items of theirs we hold (what the peer needs to find what we lack; our own extras we push
 *     anyway), so an answer is never larger than the item set it answers. Ranges that end
 *     before `window_start` are skipped (what nwaku's preProcessPayload means to do; its loop
 *     tests the wrong range type and never does).
 * bench/sync.c measures both (bench/RESULTS.md, "Store-sync engine").
 *
 * Bounds: the answer stays within `limits` (bytes, ranges, items); a range whose answer does not
 * fit, an item set above the caps, and differences beyond `max_diffs` are given up (answered
 * Skip) and counted in `abandoned`: the session is then incomplete, and a later one picks them
 * up. Work per payload is O(ranges × partitions × log n) for fingerprints and O(items sent or
 * received) for item sets.
 *
 * One thread (the set's owner). */
#ifndef LD_WAKU_SYNC_RANGES_H
#define LD_WAKU_SYNC_RANGES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "waku/sync/codec.h"
#include "waku/sync/id.h"
#include "waku/sync/set.h"

#define LD_SYNC_NWAKU_PARTITIONS 8
#define LD_SYNC_NWAKU_ITEM_SET_THRESHOLD 100
#define LD_SYNC_DEFAULT_PARTITIONS 16
#define LD_SYNC_DEFAULT_ITEM_SET_THRESHOLD 2
#define LD_SYNC_MAX_PARTITIONS 256
/* Differences one session records by default (have + need); beyond them it is incomplete. */
#define LD_SYNC_DEFAULT_MAX_DIFFS 100000u

typedef struct ld_sync_policy {
  uint32_t partitions;         /* sub-ranges of a split range, 2 … LD_SYNC_MAX_PARTITIONS */
  uint32_t item_set_threshold; /* a range with at most this many items goes as an item set */
  bool split_by_count;         /* at item quantiles (needs the set's nth), else equal time slices */
  bool lean_replies;           /* item sets answered with Skip or the common items (see above) */
  bool split_first;            /* the session's first payload is already split */
} ld_sync_policy_t;

void ld_sync_policy_nwaku(ld_sync_policy_t *p);
void ld_sync_policy_default(ld_sync_policy_t *p);

/* A growable list of items. Zero-initialise; ld_sync_ids_clear releases it. */
typedef struct ld_sync_ids {
  ld_sync_id_t *v;
  size_t n, cap;
} ld_sync_ids_t;

int ld_sync_ids_push(ld_sync_ids_t *l, const ld_sync_id_t *id);
void ld_sync_ids_clear(ld_sync_ids_t *l);

/* The context of one call. Fill the inputs; `have`, `need` and `abandoned` accumulate across
 * calls (one session). Release with ld_sync_ranges_clear. */
typedef struct ld_sync_ranges {
  /* inputs */
  ld_sync_set_t set;
  ld_sync_policy_t policy;
  ld_sync_limits_t limits; /* caps on the answer */
  int64_t window_start; /* ranges ending before it are skipped (policy default); INT64_MIN: none */
  size_t max_diffs;     /* cap on have.n + need.n growth over all calls */
  /* outputs */
  ld_sync_ids_t have; /* our items the peer lacks, ascending per range */
  ld_sync_ids_t need; /* the peer's items we lack */
  uint64_t abandoned; /* ranges given up */
  /* private */
  size_t diffs;
  size_t out_bytes;
  ld_sync_ids_t scratch, common;
} ld_sync_ranges_t;

/* Sets the inputs to: `set`, the default policy, default limits, no window, default max_diffs;
 * empty outputs. */
void ld_sync_ranges_init(ld_sync_ranges_t *r, ld_sync_set_t set);

void ld_sync_ranges_clear(ld_sync_ranges_t *r);

/* Answers `in` into `out` (initialised; reset here; topics are left for the caller to set).
 * Errors: LD_ERR_NOMEM (out is left empty; have/need may hold part of the differences). */
int ld_sync_ranges_answer(ld_sync_ranges_t *r, const ld_sync_payload_t *in, ld_sync_payload_t *out);

/* The first payload of a session over the window [lo, hi] (times; bounds with zero hashes):
 * one Fingerprint range (nwaku), or (split_first) the answer to a mismatched fingerprint over
 * the window. Errors: LD_ERR_INVALID_ARG (hi < lo), LD_ERR_NOMEM. */
int ld_sync_ranges_initial(ld_sync_ranges_t *r, int64_t lo, int64_t hi, ld_sync_payload_t *out);

#endif
