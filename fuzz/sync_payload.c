/* Fuzz target: the store-sync reconciliation payload decoder (a frame body as a session reads
 * it), then the range processing that answers it. Whatever the decoder accepts must respect the
 * caps and survive a re-encoding unchanged; the answer, under both policies, must itself be a
 * payload the decoder accepts (ranges in order, items inside them) within the caps. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "waku/sync/codec.h"
#include "waku/sync/ranges.h"
#include "waku/sync/tree.h"

static ld_sync_tree_t *g_tree;

/* A fixed set: 3,000 items at small times (the ones fuzzed payloads reach), every tenth pair
 * sharing a timestamp. */
static void build_tree(void) {
  if (g_tree != NULL)
    return;
  if (ld_sync_tree_new(&g_tree) != 0)
    abort();
  for (uint32_t i = 0; i < 3000; i++) {
    ld_sync_id_t id = ld_sync_id_bound((int64_t)(i - i % 2 * (i % 10 == 1)) * 7);
    memcpy(id.hash, &i, sizeof i);
    id.hash[31] = (uint8_t)(i * 37);
    if (ld_sync_tree_insert(g_tree, &id) != 0)
      abort();
  }
}

/* An upper bound after an encoding: its hash travels only when its time equals the previous
 * bound's, and then only up to its first nonzero byte (the reference is the zero hash); the rest
 * reads back as zeros. */
static bool same_upper(const ld_sync_id_t *sent, const ld_sync_id_t *got, int64_t prev) {
  if (sent->time != got->time)
    return false;
  uint8_t want[32] = {0};
  for (size_t i = 0; i < 32 && sent->time == prev; i++) {
    want[i] = sent->hash[i];
    if (sent->hash[i] != 0)
      break;
  }
  return memcmp(want, got->hash, 32) == 0;
}

static bool same_topics(const ld_sync_topic_t *a, const ld_sync_topic_t *b, size_t n) {
  for (size_t i = 0; i < n; i++)
    if (a[i].len != b[i].len || memcmp(a[i].data, b[i].data, a[i].len) != 0)
      return false;
  return true;
}

static bool same_payload(const ld_sync_payload_t *a, const ld_sync_payload_t *b) {
  if (a->n_ranges == 0) /* encoded as 00: the topics are not written */
    return b->n_ranges == 0 && b->n_pubsub_topics == 0 && b->n_content_topics == 0;
  if (a->n_ranges != b->n_ranges || a->n_items != b->n_items ||
      a->n_pubsub_topics != b->n_pubsub_topics || a->n_content_topics != b->n_content_topics ||
      a->start.time != b->start.time)
    return false;
  if (!same_topics(a->pubsub_topics, b->pubsub_topics, a->n_pubsub_topics) ||
      !same_topics(a->content_topics, b->content_topics, a->n_content_topics))
    return false;
  for (size_t i = 0; i < a->n_ranges; i++) {
    const ld_sync_range_t *x = &a->ranges[i], *y = &b->ranges[i];
    int64_t prev = i == 0 ? a->start.time : a->ranges[i - 1].upper.time;
    if (!same_upper(&x->upper, &y->upper, prev) || x->type != y->type || x->n_items != y->n_items ||
        x->first_item != y->first_item ||
        (x->type == LD_SYNC_RANGE_ITEM_SET && x->reconciled != y->reconciled) ||
        (x->type == LD_SYNC_RANGE_FINGERPRINT && memcmp(x->fingerprint, y->fingerprint, 32) != 0))
      return false;
  }
  for (size_t i = 0; i < a->n_items; i++)
    if (ld_sync_id_cmp(&a->items[i], &b->items[i]) != 0)
      return false;
  return true;
}

static void check_caps(const ld_sync_payload_t *p, const ld_sync_limits_t *lim) {
  if (p->n_ranges > lim->max_ranges || p->n_items > lim->max_items ||
      p->n_pubsub_topics > lim->max_topics || p->n_content_topics > lim->max_topics)
    abort();
}

/* Encodes p and decodes it again under `lim`: it must come back the same (but for what the
 * hash-prefix rule drops from equal-time bounds). */
static void check_round_trip(const ld_sync_payload_t *p, const ld_sync_limits_t *lim) {
  ld_buf_t b;
  ld_buf_init(&b);
  if (ld_sync_payload_encode(p, &b) != 0 || b.len != ld_sync_payload_encoded_len(p))
    abort();
  ld_sync_payload_t q;
  ld_sync_payload_init(&q);
  if (ld_sync_payload_decode(b.data, b.len, lim, &q, NULL, 0) != 0 || !same_payload(p, &q))
    abort();
  ld_sync_payload_clear(&q);
  ld_buf_clear(&b);
}

static void answer(const ld_sync_payload_t *in, bool nwaku, const ld_sync_limits_t *lim) {
  ld_sync_ranges_t r;
  ld_sync_ranges_init(&r, ld_sync_tree_set(g_tree));
  if (nwaku)
    ld_sync_policy_nwaku(&r.policy);
  r.limits = *lim;
  r.max_diffs = 500;
  r.window_start = nwaku ? INT64_MIN : 700;
  ld_sync_payload_t out;
  ld_sync_payload_init(&out);
  if (ld_sync_ranges_answer(&r, in, &out) != 0)
    abort();
  check_caps(&out, lim);
  if (r.have.n + r.need.n > r.max_diffs)
    abort();
  check_round_trip(&out, lim);
  ld_sync_payload_clear(&out);
  ld_sync_ranges_clear(&r);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  build_tree();
  ld_sync_limits_t lim;
  ld_sync_limits_default(&lim);
  lim.max_ranges = 64; /* small caps, so that inputs reach them */
  lim.max_items = 300;
  lim.max_topics = 4;
  lim.max_topic_len = 64;
  ld_sync_payload_t p;
  ld_sync_payload_init(&p);
  char why[128];
  if (ld_sync_payload_decode(data, size, &lim, &p, why, sizeof why) != 0) {
    if (p.n_ranges != 0 || p.n_items != 0 || why[0] == '\0')
      abort();
    ld_sync_payload_clear(&p);
    return 0;
  }
  check_caps(&p, &lim);
  check_round_trip(&p, &lim);
  answer(&p, false, &lim);
  answer(&p, true, &lim);
  ld_sync_payload_clear(&p);
  return 0;
}
