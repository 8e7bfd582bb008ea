/* A set of time spans [lo, hi] (inclusive, Unix ns), kept sorted and merged: the stretches of
 * time for which a reconciliation session showed the peer every item it holds (item sets it
 * sent), so that the peer may push there whatever it has and the session lacks.
 *
 * Bounded: at most `max` spans (LD_SYNC_DEFAULT_MAX_SPANS when 0); a span that would exceed it
 * is merged into its nearest neighbour instead, so the set only ever grows to cover more, never
 * loses a time it held.
 *
 * Pure; one thread at a time per value. */
#ifndef LD_WAKU_SYNC_SPANS_H
#define LD_WAKU_SYNC_SPANS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define LD_SYNC_DEFAULT_MAX_SPANS 4096u

typedef struct ld_sync_span {
  int64_t lo, hi;
} ld_sync_span_t;

/* Zero-initialise (max 0: the default); ld_sync_spans_clear releases it. */
typedef struct ld_sync_spans {
  ld_sync_span_t *v;
  size_t n, cap;
  size_t max;
} ld_sync_spans_t;

/* Adds [lo, hi] (swapped when hi < lo), merging it with the spans it overlaps or touches (a span
 * ending at t and one starting at t + 1 merge). Returns 0 or LD_ERR_NOMEM (unchanged). */
int ld_sync_spans_add(ld_sync_spans_t *s, int64_t lo, int64_t hi);

/* Adds every span of `other`. Returns 0 or LD_ERR_NOMEM (part may have been added). */
int ld_sync_spans_merge(ld_sync_spans_t *s, const ld_sync_spans_t *other);

/* True when some span holds t. O(log n). */
bool ld_sync_spans_contains(const ld_sync_spans_t *s, int64_t t);

void ld_sync_spans_clear(ld_sync_spans_t *s);

#endif
