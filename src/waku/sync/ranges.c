/* Range processing (see ranges.h). */
#include "waku/sync/ranges.h"

#include <stdlib.h>
#include <string.h>

#include "base/error.h"

/* Upper bounds of the wire size of one range of each kind (dt varint, a possible 32-byte hash
 * prefix and its length byte, the type byte, the body). */
#define RANGE_HEAD_MAX (10 + 1 + LD_SYNC_HASH_LEN + 1)
#define ITEM_MAX (10 + LD_SYNC_HASH_LEN)
#define SKIP_COST RANGE_HEAD_MAX
#define FP_COST (RANGE_HEAD_MAX + LD_SYNC_FP_LEN)
#define ITEMS_COST(n) (RANGE_HEAD_MAX + 10 + (n)*ITEM_MAX + 1)

void ld_sync_policy_nwaku(ld_sync_policy_t *p) {
  p->partitions = LD_SYNC_NWAKU_PARTITIONS;
  p->item_set_threshold = LD_SYNC_NWAKU_ITEM_SET_THRESHOLD;
  p->split_by_count = false;
  p->lean_replies = false;
  p->split_first = false;
}

void ld_sync_policy_default(ld_sync_policy_t *p) {
  p->partitions = LD_SYNC_DEFAULT_PARTITIONS;
  p->item_set_threshold = LD_SYNC_DEFAULT_ITEM_SET_THRESHOLD;
  p->split_by_count = true;
  p->lean_replies = true;
  p->split_first = true;
}

int ld_sync_ids_push(ld_sync_ids_t *l, const ld_sync_id_t *id) {
  if (l->n == l->cap) {
    size_t cap = l->cap ? 2 * l->cap : 64;
    ld_sync_id_t *v = realloc(l->v, cap * sizeof *v);
    if (v == NULL)
      return LD_ERR_NOMEM;
    l->v = v;
    l->cap = cap;
  }
  l->v[l->n++] = *id;
  return 0;
}

void ld_sync_ids_clear(ld_sync_ids_t *l) {
  free(l->v);
  l->v = NULL;
  l->n = l->cap = 0;
}

void ld_sync_ranges_init(ld_sync_ranges_t *r, ld_sync_set_t set) {
  memset(r, 0, sizeof *r);
  r->set = set;
  ld_sync_policy_default(&r->policy);
  ld_sync_limits_default(&r->limits);
  r->window_start = INT64_MIN;
  r->max_diffs = LD_SYNC_DEFAULT_MAX_DIFFS;
}

void ld_sync_ranges_clear(ld_sync_ranges_t *r) {
  ld_sync_ids_clear(&r->have);
  ld_sync_ids_clear(&r->need);
  ld_sync_ids_clear(&r->scratch);
  ld_sync_ids_clear(&r->common);
}

/* ---- the answer under its caps --------------------------------------------------------------- */

/* One answer being built: the output and the lower bound of the input range being answered (the
 * output's start when it is the first range emitted). */
typedef struct answer {
  ld_sync_ranges_t *r;
  ld_sync_payload_t *out;
  ld_sync_id_t lower;
  int rc; /* first allocation failure */
} answer_t;

static void begin_range(answer_t *a) {
  if (a->out->n_ranges == 0)
    a->out->start = a->lower;
}

/* Room for one more non-Skip range of `bytes` and `items`, keeping room for a Skip after it. */
static bool room(const answer_t *a, size_t bytes, size_t items) {
  const ld_sync_limits_t *l = &a->r->limits;
  return a->out->n_ranges + 2 <= l->max_ranges &&
         a->r->out_bytes + bytes + SKIP_COST <= l->max_payload &&
         a->out->n_items + items <= l->max_items;
}

static void emit_skip(answer_t *a, const ld_sync_id_t *upper) {
  begin_range(a);
  ld_sync_payload_t *out = a->out;
  if (out->n_ranges > 0 && out->ranges[out->n_ranges - 1].type == LD_SYNC_RANGE_SKIP) {
    out->ranges[out->n_ranges - 1].upper = *upper; /* adjacent Skips merge */
    return;
  }
  int rc = ld_sync_payload_add_skip(out, upper);
  if (rc != 0 && a->rc == 0)
    a->rc = rc;
  a->r->out_bytes += SKIP_COST;
}

/* A range given up: Skip, and the session is incomplete. */
static void abandon(answer_t *a, const ld_sync_id_t *upper) {
  a->r->abandoned++;
  emit_skip(a, upper);
}

static void emit_fp(answer_t *a, const ld_sync_id_t *upper, const ld_sync_fp_t *fp) {
  if (!room(a, FP_COST, 0)) {
    abandon(a, upper);
    return;
  }
  begin_range(a);
  int rc = ld_sync_payload_add_fingerprint(a->out, upper, fp);
  if (rc != 0 && a->rc == 0)
    a->rc = rc;
  a->r->out_bytes += FP_COST;
}

static void emit_items(answer_t *a, const ld_sync_id_t *upper, const ld_sync_id_t *items, size_t n,
                       bool reconciled) {
  if (!room(a, ITEMS_COST(n), n)) {
    abandon(a, upper);
    return;
  }
  begin_range(a);
  int rc = ld_sync_payload_add_item_set(a->out, upper, items, n, reconciled);
  if (rc != 0 && a->rc == 0)
    a->rc = rc;
  a->r->out_bytes += ITEMS_COST(n);
}

/* Items one more item set may carry. */
static size_t items_room(const answer_t *a) {
  const ld_sync_limits_t *l = &a->r->limits;
  size_t by_items = l->max_items - a->out->n_items;
  size_t used = a->r->out_bytes + ITEMS_COST(0) + SKIP_COST;
  size_t by_bytes = used < l->max_payload ? (l->max_payload - used) / ITEM_MAX : 0;
  return by_items < by_bytes ? by_items : by_bytes;
}

/* ---- reading the set ------------------------------------------------------------------------- */

typedef struct collect {
  ld_sync_ids_t *dst;
  size_t limit;
  int rc;
} collect_t;

static int collect_one(void *user, const ld_sync_id_t *item) {
  collect_t *c = user;
  if (c->dst->n >= c->limit)
    return 1;
  c->rc = ld_sync_ids_push(c->dst, item);
  return c->rc != 0 ? 1 : 0;
}

/* Our items in [lo, hi] into r->scratch; false when there are more than `limit`. */
static bool collect_items(answer_t *a, const ld_sync_id_t *lo, const ld_sync_id_t *hi,
                          size_t limit) {
  a->r->scratch.n = 0;
  collect_t c = {&a->r->scratch, limit, 0};
  int stop = ld_sync_set_each(&a->r->set, lo, hi, collect_one, &c);
  if (c.rc != 0 && a->rc == 0)
    a->rc = c.rc;
  return stop == 0 && c.rc == 0;
}

/* nwaku's findIdxBounds "none": no item at or below hi, or none at or above lo. */
static bool outside_items(const ld_sync_ranges_t *r, const ld_sync_id_t *lo,
                          const ld_sync_id_t *hi) {
  ld_sync_id_t min = ld_sync_id_min(), max = ld_sync_id_max();
  ld_sync_summary_t below, above;
  ld_sync_set_summary(&r->set, &min, hi, &below);
  ld_sync_set_summary(&r->set, lo, &max, &above);
  return below.count == 0 || above.count == 0;
}

/* ---- fingerprint ranges ---------------------------------------------------------------------- */

/* A range (or a sub-range) answered by what it holds: an empty set, our items, or its
 * fingerprint. */
static void answer_part(answer_t *a, const ld_sync_id_t *lo, const ld_sync_id_t *hi) {
  ld_sync_ranges_t *r = a->r;
  ld_sync_summary_t s;
  ld_sync_set_summary(&r->set, lo, hi, &s);
  if (s.count == 0) {
    /* nwaku: an empty stretch between our items is an unreconciled empty set */
    bool reconciled = r->policy.lean_replies || outside_items(r, lo, hi);
    emit_items(a, hi, NULL, 0, reconciled);
  } else if (s.count <= r->policy.item_set_threshold) {
    if (collect_items(a, lo, hi, r->policy.item_set_threshold))
      emit_items(a, hi, r->scratch.v, r->scratch.n, false);
    else
      abandon(a, hi);
  } else {
    emit_fp(a, hi, &s.fp);
  }
}

/* nwaku's equalPartitioning: `parts` slices of equal length, the first (L mod parts) one
 * nanosecond longer, every bound with a zero hash; none when L < parts. */
static size_t split_by_time(int64_t lo, int64_t hi, uint32_t parts, ld_sync_id_t *uppers) {
  if (hi < lo)
    return 0;
  uint64_t len = (uint64_t)hi - (uint64_t)lo;
  if (len < parts)
    return 0;
  uint64_t part = len / parts, rem = len % parts, bound = (uint64_t)lo;
  for (uint32_t i = 0; i < parts; i++) {
    bound += part + (rem > 0 ? 1 : 0);
    if (rem > 0)
      rem--;
    uppers[i] = ld_sync_id_bound((int64_t)bound);
  }
  return parts;
}

/* Bounds at the times of the items of rank j·c/parts (j = 1 … parts − 1) after lo, each strictly
 * between the previous bound and hi; the last sub-range ends at hi. Returns the number of
 * sub-ranges (1: all the items share too few timestamps to split). */
static size_t split_by_count(const ld_sync_ranges_t *r, const ld_sync_id_t *lo,
                             const ld_sync_id_t *hi, uint64_t count, ld_sync_id_t *uppers) {
  uint32_t parts = r->policy.partitions;
  size_t n = 0;
  int64_t prev = lo->time;
  for (uint32_t j = 1; j < parts; j++) {
    ld_sync_id_t x;
    if (r->set.ops->nth(r->set.self, lo, count * j / parts, &x) != 0)
      break;
    if (x.time > prev && x.time < hi->time) {
      uppers[n++] = ld_sync_id_bound(x.time);
      prev = x.time;
    }
  }
  uppers[n++] = *hi;
  return n;
}

/* The answer to a range whose fingerprint differs from the peer's (count, fp: ours). */
static void answer_mismatch(answer_t *a, const ld_sync_id_t *lo, const ld_sync_id_t *hi,
                            const ld_sync_summary_t *ours) {
  ld_sync_ranges_t *r = a->r;
  if (ours->count <= r->policy.item_set_threshold) {
    answer_part(a, lo, hi);
    return;
  }
  ld_sync_id_t uppers[LD_SYNC_MAX_PARTITIONS];
  bool by_count = r->policy.split_by_count && r->set.ops->nth != NULL;
  size_t n = by_count ? split_by_count(r, lo, hi, ours->count, uppers)
                      : split_by_time(lo->time, hi->time, r->policy.partitions, uppers);
  if (n == 0 && !r->policy.lean_replies)
    return;     /* nwaku drops a range it cannot split */
  if (n <= 1) { /* too few distinct timestamps: all our items, if they fit */
    if (collect_items(a, lo, hi, items_room(a)))
      emit_items(a, hi, r->scratch.v, r->scratch.n, false);
    else
      abandon(a, hi);
    return;
  }
  ld_sync_id_t part_lo = *lo;
  for (size_t i = 0; i < n; i++) {
    answer_part(a, &part_lo, &uppers[i]);
    part_lo = ld_sync_id_bound(uppers[i].time);
  }
}

static void answer_fingerprint(answer_t *a, const ld_sync_id_t *lo, const ld_sync_id_t *hi,
                               const uint8_t theirs[LD_SYNC_FP_LEN]) {
  ld_sync_summary_t s;
  ld_sync_fp_t fp;
  ld_sync_fp_load(&fp, theirs);
  ld_sync_set_summary(&a->r->set, lo, hi, &s);
  if (ld_sync_fp_equal(&s.fp, &fp))
    emit_skip(a, hi);
  else
    answer_mismatch(a, lo, hi, &s);
}

/* ---- item-set ranges ------------------------------------------------------------------------- */

typedef struct merge {
  answer_t *a;
  const ld_sync_id_t *theirs;
  size_t n, i;
  size_t need_added;
  size_t echo_cap; /* nwaku: all our items go back, at most this many */
  bool given_up;
} merge_t;

/* Records a difference; false once the session's budget is spent. */
static bool add_diff(merge_t *m, ld_sync_ids_t *list, const ld_sync_id_t *id) {
  ld_sync_ranges_t *r = m->a->r;
  if (r->diffs >= r->max_diffs) {
    m->given_up = true;
    return false;
  }
  int rc = ld_sync_ids_push(list, id);
  if (rc != 0) {
    if (m->a->rc == 0)
      m->a->rc = rc;
    m->given_up = true;
    return false;
  }
  r->diffs++;
  return true;
}

static bool take_theirs_below(merge_t *m, const ld_sync_id_t *x) {
  while (m->i < m->n && (x == NULL || ld_sync_id_cmp(&m->theirs[m->i], x) < 0)) {
    if (!add_diff(m, &m->a->r->need, &m->theirs[m->i++]))
      return false;
    m->need_added++;
  }
  return true;
}

static int merge_one(void *user, const ld_sync_id_t *x) {
  merge_t *m = user;
  ld_sync_ranges_t *r = m->a->r;
  if (!take_theirs_below(m, x))
    return 1;
  if (m->i < m->n && ld_sync_id_cmp(&m->theirs[m->i], x) == 0) {
    m->i++;
    if (r->policy.lean_replies && ld_sync_ids_push(&r->common, x) != 0) {
      m->given_up = true;
      return 1;
    }
  } else if (!add_diff(m, &r->have, x)) {
    return 1;
  }
  if (!r->policy.lean_replies) {
    if (r->scratch.n >= m->echo_cap || ld_sync_ids_push(&r->scratch, x) != 0) {
      m->given_up = true;
      return 1;
    }
  }
  return 0;
}

static void answer_item_set(answer_t *a, const ld_sync_id_t *lo, const ld_sync_id_t *hi,
                            const ld_sync_id_t *theirs, size_t n, bool reconciled) {
  ld_sync_ranges_t *r = a->r;
  if (!r->policy.lean_replies && outside_items(r, lo, hi)) {
    /* nwaku: nothing of ours around, no differences recorded */
    if (reconciled)
      emit_skip(a, hi);
    else
      emit_items(a, hi, NULL, 0, true);
    return;
  }
  r->scratch.n = r->common.n = 0;
  merge_t m = {a, theirs, n, 0, 0, items_room(a), false};
  ld_sync_set_each(&r->set, lo, hi, merge_one, &m);
  if (!m.given_up)
    take_theirs_below(&m, NULL);
  if (m.given_up)
    abandon(a, hi);
  else if (reconciled || (r->policy.lean_replies && m.need_added == 0))
    emit_skip(a, hi);
  else if (r->policy.lean_replies)
    emit_items(a, hi, r->common.v, r->common.n, true);
  else
    emit_items(a, hi, r->scratch.v, r->scratch.n, true);
}

/* ---- payloads -------------------------------------------------------------------------------- */

static void answer_range(answer_t *a, const ld_sync_payload_t *in, size_t i) {
  const ld_sync_range_t *range = &in->ranges[i];
  const ld_sync_id_t *hi = &range->upper;
  a->lower = ld_sync_payload_lower(in, i);
  if (range->type == LD_SYNC_RANGE_SKIP || hi->time < a->r->window_start)
    emit_skip(a, hi);
  else if (range->type == LD_SYNC_RANGE_FINGERPRINT)
    answer_fingerprint(a, &a->lower, hi, range->fingerprint);
  else
    answer_item_set(a, &a->lower, hi, ld_sync_range_items(in, range), range->n_items,
                    range->reconciled);
}

static int finish(answer_t *a) {
  if (a->rc != 0 || ld_sync_payload_all_skip(a->out)) {
    ld_sync_id_t zero = ld_sync_id_bound(0);
    ld_sync_payload_reset(a->out, &zero);
  }
  return a->rc;
}

int ld_sync_ranges_answer(ld_sync_ranges_t *r, const ld_sync_payload_t *in,
                          ld_sync_payload_t *out) {
  ld_sync_payload_reset(out, &in->start);
  r->out_bytes = 0;
  answer_t a = {r, out, in->start, 0};
  for (size_t i = 0; i < in->n_ranges && a.rc == 0; i++)
    answer_range(&a, in, i);
  return finish(&a);
}

int ld_sync_ranges_initial(ld_sync_ranges_t *r, int64_t lo, int64_t hi, ld_sync_payload_t *out) {
  if (hi < lo)
    return LD_ERR_INVALID_ARG;
  ld_sync_id_t low = ld_sync_id_bound(lo), high = ld_sync_id_bound(hi);
  ld_sync_payload_reset(out, &low);
  r->out_bytes = 0;
  answer_t a = {r, out, low, 0};
  ld_sync_summary_t s;
  ld_sync_set_summary(&r->set, &low, &high, &s);
  if (r->policy.split_first)
    answer_mismatch(&a, &low, &high, &s);
  else
    emit_fp(&a, &high, &s.fp);
  return finish(&a);
}
