/* Sorted, merged time spans (see spans.h). */
#include "waku/sync/spans.h"

#include <stdlib.h>
#include <string.h>

#include "base/error.h"

/* First span with hi ≥ t (n when none). */
static size_t first_ending_at_or_after(const ld_sync_spans_t *s, int64_t t) {
  size_t lo = 0, hi = s->n;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (s->v[mid].hi < t)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo;
}

bool ld_sync_spans_contains(const ld_sync_spans_t *s, int64_t t) {
  size_t i = first_ending_at_or_after(s, t);
  return i < s->n && s->v[i].lo <= t;
}

static bool touches(int64_t hi, int64_t lo) {
  return hi >= lo || (hi < INT64_MAX && hi + 1 == lo);
}

/* Merges span i with its successors while they overlap or touch it. */
static void absorb_following(ld_sync_spans_t *s, size_t i) {
  size_t j = i + 1;
  while (j < s->n && touches(s->v[i].hi, s->v[j].lo)) {
    if (s->v[j].hi > s->v[i].hi)
      s->v[i].hi = s->v[j].hi;
    j++;
  }
  memmove(&s->v[i + 1], &s->v[j], (s->n - j) * sizeof *s->v);
  s->n -= j - i - 1;
}

/* At the cap: widens the nearest span to cover [lo, hi]. */
static void widen_nearest(ld_sync_spans_t *s, size_t at, int64_t lo, int64_t hi) {
  size_t i = at < s->n ? at : s->n - 1;
  if (at > 0 && at < s->n &&
      (uint64_t)lo - (uint64_t)s->v[at - 1].hi < (uint64_t)s->v[at].lo - (uint64_t)hi)
    i = at - 1;
  if (lo < s->v[i].lo)
    s->v[i].lo = lo;
  if (hi > s->v[i].hi)
    s->v[i].hi = hi;
  if (i > 0 && touches(s->v[i - 1].hi, s->v[i].lo))
    i--;
  absorb_following(s, i);
}

int ld_sync_spans_add(ld_sync_spans_t *s, int64_t lo, int64_t hi) {
  if (hi < lo) {
    int64_t t = lo;
    lo = hi;
    hi = t;
  }
  size_t at = first_ending_at_or_after(s, lo == INT64_MIN ? lo : lo - 1);
  if (at < s->n && touches(hi, s->v[at].lo)) { /* overlaps or touches span `at` */
    if (lo < s->v[at].lo)
      s->v[at].lo = lo;
    if (hi > s->v[at].hi)
      s->v[at].hi = hi;
    absorb_following(s, at);
    return 0;
  }
  size_t max = s->max != 0 ? s->max : LD_SYNC_DEFAULT_MAX_SPANS;
  if (s->n >= max && s->n > 0) {
    widen_nearest(s, at, lo, hi);
    return 0;
  }
  if (s->n == s->cap) {
    size_t cap = s->cap ? 2 * s->cap : 16;
    ld_sync_span_t *v = realloc(s->v, cap * sizeof *v);
    if (v == NULL)
      return LD_ERR_NOMEM;
    s->v = v;
    s->cap = cap;
  }
  memmove(&s->v[at + 1], &s->v[at], (s->n - at) * sizeof *s->v);
  s->v[at].lo = lo;
  s->v[at].hi = hi;
  s->n++;
  return 0;
}

int ld_sync_spans_merge(ld_sync_spans_t *s, const ld_sync_spans_t *other) {
  for (size_t i = 0; i < other->n; i++) {
    int rc = ld_sync_spans_add(s, other->v[i].lo, other->v[i].hi);
    if (rc != 0)
      return rc;
  }
  return 0;
}

void ld_sync_spans_clear(ld_sync_spans_t *s) {
  free(s->v);
  s->v = NULL;
  s->n = s->cap = 0;
}
