/* Range processing against nwaku's own cases (tests/waku_store_sync/test_range_split.nim,
 * test_state_transition.nim, test_storage.nim), run with nwaku's policy: the same sub-ranges,
 * range types and differences as nwaku's SeqStorage.processPayload. Then this engine's policy:
 * quantile splits, lean item-set answers, skipped old ranges, caps. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "base/error.h"
#include "crypto/keccak.h"
#include "waku/sync/ranges.h"
#include "waku/sync/tree.h"

/* nwaku's toDigest: keccak256 of the text */
static void digest(const char *text, uint8_t out[32]) {
  ld_keccak256(text, strlen(text), out);
}

static void msg_hash(int i, const char *suffix, uint8_t out[32]) {
  char text[64];
  snprintf(text, sizeof text, "msg%d%s", i, suffix);
  digest(text, out);
}

static ld_sync_id_t id_of(int64_t time, const uint8_t hash[32]) {
  ld_sync_id_t id;
  id.time = time;
  memcpy(id.hash, hash, 32);
  return id;
}

static void insert(ld_sync_tree_t *t, int64_t time, const uint8_t hash[32]) {
  ld_sync_id_t id = id_of(time, hash);
  int rc = ld_sync_tree_insert(t, &id);
  assert_true(rc == 0 || rc == LD_ERR_EXISTS);
}

/* One side: a tree and the processing context over it. */
typedef struct side {
  ld_sync_tree_t *tree;
  ld_sync_ranges_t r;
} side_t;

static void side_init(side_t *s, bool nwaku, uint32_t threshold, uint32_t partitions) {
  assert_int_equal(ld_sync_tree_new(&s->tree), 0);
  ld_sync_ranges_init(&s->r, ld_sync_tree_set(s->tree));
  if (nwaku)
    ld_sync_policy_nwaku(&s->r.policy);
  if (threshold > 0)
    s->r.policy.item_set_threshold = threshold;
  if (partitions > 0)
    s->r.policy.partitions = partitions;
}

static void side_clear(side_t *s) {
  ld_sync_ranges_clear(&s->r);
  ld_sync_tree_free(s->tree);
}

static void forget_diffs(side_t *s) {
  s->r.have.n = s->r.need.n = 0;
}

/* A payload of one Fingerprint range [lo, hi] with `from`'s fingerprint of it. */
static void fp_payload(const side_t *from, const ld_sync_id_t *lo, const ld_sync_id_t *hi,
                       ld_sync_payload_t *p) {
  ld_sync_summary_t s;
  ld_sync_tree_summary(from->tree, lo, hi, &s);
  ld_sync_payload_reset(p, lo);
  assert_int_equal(ld_sync_payload_add_fingerprint(p, hi, &s.fp), 0);
}

static void answer(side_t *s, const ld_sync_payload_t *in, ld_sync_payload_t *out) {
  assert_int_equal(ld_sync_ranges_answer(&s->r, in, out), 0);
}

static bool all_of_type(const ld_sync_payload_t *p, uint8_t type) {
  for (size_t i = 0; i < p->n_ranges; i++)
    if (p->ranges[i].type != type)
      return false;
  return true;
}

/* Index of the range of p that holds time t (lower ≤ t ≤ upper), or -1. */
static int range_with(const ld_sync_payload_t *p, int64_t t) {
  for (size_t i = 0; i < p->n_ranges; i++) {
    ld_sync_id_t lo = ld_sync_payload_lower(p, i);
    if (t >= lo.time && t <= p->ranges[i].upper.time)
      return (int)i;
  }
  return -1;
}

static bool set_has(const ld_sync_payload_t *p, size_t i, int64_t time, const uint8_t hash[32]) {
  const ld_sync_range_t *r = &p->ranges[i];
  for (size_t k = 0; k < r->n_items; k++) {
    const ld_sync_id_t *x = &p->items[r->first_item + k];
    if (x->time == time && memcmp(x->hash, hash, 32) == 0)
      return true;
  }
  return false;
}

/* Two sides with items at 1000 + i, i < n, hashes keccak("msg<i>"), `remote`'s item `bad`
 * hashed from "msg<bad>_x" (its base and altered hashes are returned). */
static void two_sides(side_t *local, side_t *remote, int n, int bad, const char *suffix,
                      uint8_t base[32], uint8_t altered[32]) {
  for (int i = 0; i < n; i++) {
    uint8_t h[32];
    msg_hash(i, "", h);
    insert(local->tree, 1000 + i, h);
    if (i == bad) {
      memcpy(base, h, 32);
      msg_hash(i, suffix, altered);
      insert(remote->tree, 1000 + i, altered);
    } else {
      insert(remote->tree, 1000 + i, h);
    }
  }
}

/* ---- test_range_split.nim -------------------------------------------------------------------- */

static void fan_out_eight_fingerprints(void **state) {
  (void)state;
  side_t local, remote;
  side_init(&local, true, 0, 0);
  side_init(&remote, true, 0, 0);
  uint8_t base[32], alt[32];
  two_sides(&local, &remote, 2048, 70, "_x", base, alt);
  ld_sync_id_t lo = ld_sync_id_bound(1000), hi = ld_sync_id_bound(1000 + 2048 - 1);
  ld_sync_summary_t a, b;
  ld_sync_tree_summary(local.tree, &lo, &hi, &a);
  ld_sync_tree_summary(remote.tree, &lo, &hi, &b);
  assert_false(ld_sync_fp_equal(&a.fp, &b.fp));
  ld_sync_payload_t in, out;
  ld_sync_payload_init(&in);
  ld_sync_payload_init(&out);
  fp_payload(&remote, &lo, &hi, &in);
  answer(&local, &in, &out);
  assert_int_equal(out.n_ranges, 8);
  assert_true(all_of_type(&out, LD_SYNC_RANGE_FINGERPRINT));
  assert_int_equal(out.n_items, 0);
  assert_true(range_with(&out, 1000 + 70) >= 0);
  assert_int_equal(local.r.have.n, 0);
  assert_int_equal(local.r.need.n, 0);
  /* nwaku's equalPartitioning of 2047 ns: eight slices, the first seven 256 ns long */
  assert_int_equal(out.start.time, 1000);
  assert_int_equal(out.ranges[0].upper.time, 1256);
  assert_int_equal(out.ranges[6].upper.time, 1000 + 7 * 256);
  assert_int_equal(out.ranges[7].upper.time, 3047);
  ld_sync_payload_clear(&in);
  ld_sync_payload_clear(&out);
  side_clear(&local);
  side_clear(&remote);
}

static void two_partitions_then_item_sets(void **state) {
  (void)state;
  side_t local, remote;
  side_init(&local, true, 4, 2);
  side_init(&remote, true, 4, 2);
  /* here the local side holds the altered hash */
  uint8_t base[32], alt[32];
  two_sides(&remote, &local, 8, 3, "_x", base, alt);
  ld_sync_id_t lo = ld_sync_id_bound(1000), hi = ld_sync_id_bound(1007);
  ld_sync_payload_t in, out;
  ld_sync_payload_init(&in);
  ld_sync_payload_init(&out);
  fp_payload(&remote, &lo, &hi, &in);
  answer(&local, &in, &out);
  assert_int_equal(out.n_ranges, 2);
  assert_true(all_of_type(&out, LD_SYNC_RANGE_ITEM_SET));
  assert_true(set_has(&out, 0, 1003, alt) || set_has(&out, 1, 1003, alt));
  ld_sync_payload_clear(&in);
  ld_sync_payload_clear(&out);
  side_clear(&local);
  side_clear(&remote);
}

static void second_round_with_one_remote_item(void **state) {
  (void)state;
  side_t local, remote;
  side_init(&local, true, 0, 0);
  side_init(&remote, true, 0, 0);
  uint8_t base[32], alt[32];
  for (int i = 0; i < 2048; i++) {
    uint8_t h[32];
    msg_hash(i, "", h);
    insert(local.tree, 1000 + i, h);
    if (i == 70) {
      memcpy(base, h, 32);
      msg_hash(i, "_x", alt);
      insert(remote.tree, 1000 + i, alt); /* the remote holds only this one */
    }
  }
  ld_sync_id_t lo = ld_sync_id_bound(1000), hi = ld_sync_id_bound(1000 + 2048 - 1);
  ld_sync_payload_t in, out;
  ld_sync_payload_init(&in);
  ld_sync_payload_init(&out);
  fp_payload(&remote, &lo, &hi, &in);
  answer(&local, &in, &out);
  assert_int_equal(out.n_ranges, 8);
  assert_true(all_of_type(&out, LD_SYNC_RANGE_FINGERPRINT));
  int k = range_with(&out, 1070);
  assert_true(k >= 0);
  ld_sync_id_t sub_lo = ld_sync_payload_lower(&out, (size_t)k), sub_hi = out.ranges[k].upper;
  assert_true(sub_lo.time != 0);
  fp_payload(&remote, &sub_lo, &sub_hi, &in);
  answer(&local, &in, &out);
  assert_int_equal(out.n_ranges, 8);
  assert_true(all_of_type(&out, LD_SYNC_RANGE_ITEM_SET));
  int matches = 0;
  for (size_t i = 0; i < out.n_ranges; i++) {
    if (set_has(&out, i, 1070, base)) {
      matches++;
      assert_false(set_has(&out, i, 1070, alt));
    }
  }
  assert_int_equal(matches, 1);
  assert_int_equal(local.r.have.n + local.r.need.n, 0);
  ld_sync_payload_clear(&in);
  ld_sync_payload_clear(&out);
  side_clear(&local);
  side_clear(&remote);
}

static void second_round_payload_remote(void **state) {
  (void)state;
  side_t local, remote;
  side_init(&local, true, 0, 0);
  side_init(&remote, true, 0, 0);
  uint8_t base[32], alt[32];
  two_sides(&local, &remote, 8, 3, "_x", base, alt);
  ld_sync_id_t lo = ld_sync_id_bound(1000), hi = ld_sync_id_bound(1007);
  ld_sync_payload_t in, rep1, rep2;
  ld_sync_payload_init(&in);
  ld_sync_payload_init(&rep1);
  ld_sync_payload_init(&rep2);
  fp_payload(&remote, &lo, &hi, &in);
  answer(&local, &in, &rep1);
  assert_int_equal(rep1.n_ranges, 1);
  assert_int_equal(rep1.ranges[0].type, LD_SYNC_RANGE_ITEM_SET);
  assert_int_equal(local.r.have.n + local.r.need.n, 0);
  answer(&remote, &rep1, &rep2);
  assert_int_equal(remote.r.have.n, 1); /* nwaku's hashToSend */
  assert_memory_equal(remote.r.have.v[0].hash, alt, 32);
  assert_int_equal(remote.r.need.n, 1); /* hashToRecv */
  assert_memory_equal(remote.r.need.v[0].hash, base, 32);
  ld_sync_payload_clear(&in);
  ld_sync_payload_clear(&rep1);
  ld_sync_payload_clear(&rep2);
  side_clear(&local);
  side_clear(&remote);
}

/* ---- test_state_transition.nim --------------------------------------------------------------- */

static void fingerprint_item_set_zero(void **state) {
  (void)state;
  side_t local, remote;
  side_init(&local, true, 0, 0);
  side_init(&remote, true, 0, 0);
  uint8_t base[32], alt[32];
  two_sides(&local, &remote, 2000, 137, "x", base, alt);
  ld_sync_id_t lo = ld_sync_id_bound(1000), hi = ld_sync_id_bound(1000 + 2000 - 1);
  ld_sync_payload_t in, rep, rep3;
  ld_sync_payload_init(&in);
  ld_sync_payload_init(&rep);
  ld_sync_payload_init(&rep3);
  fp_payload(&remote, &lo, &hi, &in);
  answer(&local, &in, &rep);
  assert_int_equal(rep.n_ranges, 8);
  assert_true(all_of_type(&rep, LD_SYNC_RANGE_FINGERPRINT));
  int k = range_with(&rep, 1137);
  ld_sync_id_t sub_lo = ld_sync_payload_lower(&rep, (size_t)k), sub_hi = rep.ranges[k].upper;
  fp_payload(&remote, &sub_lo, &sub_hi, &in);
  answer(&local, &in, &rep);
  assert_int_equal(rep.n_ranges, 8);
  assert_true(all_of_type(&rep, LD_SYNC_RANGE_ITEM_SET));
  answer(&remote, &rep, &rep3);
  assert_int_equal(remote.r.have.n, 1);
  assert_memory_equal(remote.r.have.v[0].hash, alt, 32);
  assert_int_equal(remote.r.need.n, 1);
  assert_memory_equal(remote.r.need.v[0].hash, base, 32);
  /* both transfer: the sub-range matches */
  insert(local.tree, 1137, alt);
  insert(remote.tree, 1137, base);
  forget_diffs(&local);
  fp_payload(&remote, &sub_lo, &sub_hi, &in);
  answer(&local, &in, &rep);
  assert_int_equal(rep.n_ranges, 0);
  assert_int_equal(local.r.have.n + local.r.need.n, 0);
  ld_sync_payload_clear(&in);
  ld_sync_payload_clear(&rep);
  ld_sync_payload_clear(&rep3);
  side_clear(&local);
  side_clear(&remote);
}

/* nwaku builds two disjoint ranges; on the wire the second starts where the first ends. */
static void two_ranges_one_skip(void **state) {
  (void)state;
  side_t local, remote;
  side_init(&local, true, 0, 0);
  side_init(&remote, true, 0, 0);
  uint8_t diff[32] = {0};
  for (int i = 0; i < 120; i++) {
    uint8_t h[32];
    msg_hash(i, "", h);
    insert(local.tree, 1000 + i, h);
    if (i >= 60) {
      msg_hash(i, "_x", diff);
      insert(remote.tree, 1000 + i, diff);
    } else {
      insert(remote.tree, 1000 + i, h);
    }
  }
  ld_sync_id_t a_lo = ld_sync_id_bound(1000), a_hi = ld_sync_id_bound(1059);
  ld_sync_id_t b_hi = ld_sync_id_bound(1119);
  ld_sync_payload_t in, out;
  ld_sync_payload_init(&in);
  ld_sync_payload_init(&out);
  ld_sync_summary_t sa, sb;
  ld_sync_tree_summary(remote.tree, &a_lo, &a_hi, &sa);
  ld_sync_tree_summary(remote.tree, &a_hi, &b_hi, &sb);
  ld_sync_payload_reset(&in, &a_lo);
  assert_int_equal(ld_sync_payload_add_fingerprint(&in, &a_hi, &sa.fp), 0);
  assert_int_equal(ld_sync_payload_add_fingerprint(&in, &b_hi, &sb.fp), 0);
  answer(&local, &in, &out);
  assert_int_equal(out.n_ranges, 2);
  assert_int_equal(out.ranges[0].type, LD_SYNC_RANGE_SKIP);
  assert_int_equal(out.ranges[1].type, LD_SYNC_RANGE_ITEM_SET);
  assert_false(set_has(&out, 1, 1119, diff));
  ld_sync_payload_clear(&in);
  ld_sync_payload_clear(&out);
  side_clear(&local);
  side_clear(&remote);
}

static void threshold_fifty_eight_item_sets(void **state) {
  (void)state;
  side_t local, remote;
  side_init(&local, true, 50, 8);
  side_init(&remote, true, 50, 8);
  uint8_t base[32], alt[32];
  two_sides(&local, &remote, 300, 123, "_x", base, alt);
  ld_sync_id_t lo = ld_sync_id_bound(1000), hi = ld_sync_id_bound(1299);
  ld_sync_payload_t in, out;
  ld_sync_payload_init(&in);
  ld_sync_payload_init(&out);
  fp_payload(&remote, &lo, &hi, &in);
  answer(&local, &in, &out);
  assert_int_equal(out.n_ranges, 8);
  assert_true(all_of_type(&out, LD_SYNC_RANGE_ITEM_SET));
  int hits = 0;
  for (size_t i = 0; i < out.n_ranges; i++)
    hits += set_has(&out, i, 1123, base);
  assert_int_equal(hits, 1);
  ld_sync_payload_clear(&in);
  ld_sync_payload_clear(&out);
  side_clear(&local);
  side_clear(&remote);
}

/* "test N=80K,3FP,2IS,SKIP": three rounds of eight fingerprints, eight item sets, one item set,
 * then the differences, then nothing. */
static void eighty_thousand(void **state) {
  (void)state;
  side_t local, remote;
  side_init(&local, true, 0, 0);
  side_init(&remote, true, 0, 0);
  const int n = 80000, bad = n - 10;
  uint8_t base[32], alt[32];
  two_sides(&local, &remote, n, bad, "_x", base, alt);
  ld_sync_id_t lo = ld_sync_id_bound(1000), hi = ld_sync_id_max();
  hi.time = 1000 + n - 1;
  ld_sync_payload_t in, out;
  ld_sync_payload_init(&in);
  ld_sync_payload_init(&out);
  for (int round = 1; round <= 3; round++) {
    fp_payload(&remote, &lo, &hi, &in);
    answer(&local, &in, &out);
    assert_int_equal(out.n_ranges, 8);
    assert_true(all_of_type(&out, LD_SYNC_RANGE_FINGERPRINT));
    for (size_t i = 0; i < out.n_ranges; i++) {
      ld_sync_id_t l = ld_sync_payload_lower(&out, i);
      ld_sync_summary_t a, b;
      ld_sync_tree_summary(local.tree, &l, &out.ranges[i].upper, &a);
      ld_sync_tree_summary(remote.tree, &l, &out.ranges[i].upper, &b);
      if (!ld_sync_fp_equal(&a.fp, &b.fp)) {
        lo = l;
        hi = out.ranges[i].upper;
        break;
      }
    }
  }
  fp_payload(&remote, &lo, &hi, &in);
  answer(&local, &in, &out);
  assert_int_equal(out.n_ranges, 8);
  assert_true(all_of_type(&out, LD_SYNC_RANGE_ITEM_SET));
  int k = range_with(&out, 1000 + bad);
  lo = ld_sync_payload_lower(&out, (size_t)k);
  hi = out.ranges[k].upper;
  fp_payload(&remote, &lo, &hi, &in);
  answer(&local, &in, &out);
  assert_int_equal(out.n_ranges, 1);
  assert_int_equal(out.ranges[0].type, LD_SYNC_RANGE_ITEM_SET);
  ld_sync_payload_t back;
  ld_sync_payload_init(&back);
  answer(&remote, &out, &back);
  assert_int_equal(remote.r.have.n, 1);
  assert_memory_equal(remote.r.have.v[0].hash, alt, 32);
  assert_int_equal(remote.r.need.n, 1);
  assert_memory_equal(remote.r.need.v[0].hash, base, 32);
  insert(local.tree, 1000 + bad, alt);
  insert(remote.tree, 1000 + bad, base);
  forget_diffs(&local);
  fp_payload(&remote, &lo, &hi, &in);
  answer(&local, &in, &out);
  assert_int_equal(out.n_ranges, 0);
  assert_int_equal(local.r.have.n + local.r.need.n, 0);
  ld_sync_payload_clear(&in);
  ld_sync_payload_clear(&out);
  ld_sync_payload_clear(&back);
  side_clear(&local);
  side_clear(&remote);
}

/* ---- test_storage.nim: "process hash range", "process item set range" ------------------------ */

static void nwaku_storage_ranges(void **state) {
  (void)state;
  side_t s1, s2;
  side_init(&s1, true, 0, 0);
  side_init(&s2, true, 0, 0);
  ld_sync_id_t *all = malloc(10000 * sizeof *all);
  for (int i = 0; i < 10000; i++) {
    uint8_t h[32];
    char text[32];
    snprintf(text, sizeof text, "item %d", i);
    digest(text, h);
    all[i] = id_of(i, h);
    insert(s1.tree, i, h);
    insert(s2.tree, i, h);
  }
  /* equal storages: the fingerprint range is skipped with its bounds */
  ld_sync_payload_t in, out;
  ld_sync_payload_init(&in);
  ld_sync_payload_init(&out);
  fp_payload(&s1, &all[0], &all[9999], &in);
  answer(&s2, &in, &out);
  assert_int_equal(out.n_ranges, 0); /* a lone Skip: the empty answer */
  /* an item set holding about a tenth of 1,000 items: the rest is ours to send */
  side_t s3;
  side_init(&s3, true, 0, 0);
  ld_sync_ids_t theirs = {0}, diffs = {0};
  for (int i = 0; i < 1000; i++) {
    insert(s3.tree, all[i].time, all[i].hash);
    if (i % 10 == 0)
      assert_int_equal(ld_sync_ids_push(&theirs, &all[i]), 0);
    else
      assert_int_equal(ld_sync_ids_push(&diffs, &all[i]), 0);
  }
  ld_sync_id_t start = ld_sync_id_bound(0);
  ld_sync_payload_reset(&in, &start);
  assert_int_equal(ld_sync_payload_add_item_set(&in, &all[999], theirs.v, theirs.n, true), 0);
  answer(&s3, &in, &out);
  assert_int_equal(s3.r.have.n, diffs.n);
  for (size_t i = 0; i < diffs.n; i++)
    assert_int_equal(ld_sync_id_cmp(&s3.r.have.v[i], &diffs.v[i]), 0);
  assert_int_equal(s3.r.need.n, 0);
  assert_int_equal(out.n_ranges, 0); /* reconciled: Skip */
  ld_sync_ids_clear(&theirs);
  ld_sync_ids_clear(&diffs);
  free(all);
  ld_sync_payload_clear(&in);
  ld_sync_payload_clear(&out);
  side_clear(&s1);
  side_clear(&s2);
  side_clear(&s3);
}

/* nwaku's findIdxBounds edge: a range with none of our items answers an empty item set marked
 * reconciled when it lies before our first or after our last item, unreconciled when it lies
 * between two of them; an item set there records no differences at all. */
static void nwaku_empty_ranges(void **state) {
  (void)state;
  side_t s;
  side_init(&s, true, 0, 0);
  uint8_t h[32];
  msg_hash(1, "", h);
  insert(s.tree, 100, h);
  msg_hash(2, "", h);
  insert(s.tree, 300, h);
  ld_sync_payload_t in, out;
  ld_sync_payload_init(&in);
  ld_sync_payload_init(&out);
  ld_sync_fp_t one = {{1, 0, 0, 0}};
  ld_sync_id_t b0 = ld_sync_id_bound(0), b50 = ld_sync_id_bound(50), b150 = ld_sync_id_bound(150),
               b250 = ld_sync_id_bound(250), b400 = ld_sync_id_bound(400),
               b500 = ld_sync_id_bound(500);
  ld_sync_payload_reset(&in, &b0);
  assert_int_equal(ld_sync_payload_add_fingerprint(&in, &b50, &one), 0); /* before */
  assert_int_equal(ld_sync_payload_add_skip(&in, &b150), 0);
  assert_int_equal(ld_sync_payload_add_fingerprint(&in, &b250, &one), 0); /* between */
  assert_int_equal(ld_sync_payload_add_skip(&in, &b400), 0);
  assert_int_equal(ld_sync_payload_add_fingerprint(&in, &b500, &one), 0); /* after */
  answer(&s, &in, &out);
  assert_int_equal(out.n_ranges, 5);
  assert_int_equal(out.ranges[0].type, LD_SYNC_RANGE_ITEM_SET);
  assert_true(out.ranges[0].reconciled);
  assert_int_equal(out.ranges[2].type, LD_SYNC_RANGE_ITEM_SET);
  assert_false(out.ranges[2].reconciled);
  assert_int_equal(out.ranges[4].type, LD_SYNC_RANGE_ITEM_SET);
  assert_true(out.ranges[4].reconciled);
  /* an item set after our last item: answered, no differences recorded */
  uint8_t theirs_hash[32];
  msg_hash(3, "", theirs_hash);
  ld_sync_id_t theirs = id_of(450, theirs_hash);
  ld_sync_payload_reset(&in, &b400);
  assert_int_equal(ld_sync_payload_add_item_set(&in, &b500, &theirs, 1, false), 0);
  answer(&s, &in, &out);
  assert_int_equal(s.r.need.n, 0);
  assert_int_equal(out.n_ranges, 1);
  assert_true(out.ranges[0].reconciled);
  assert_int_equal(out.ranges[0].n_items, 0);
  /* this engine's policy records it */
  s.r.policy.lean_replies = true;
  answer(&s, &in, &out);
  assert_int_equal(s.r.need.n, 1);
  ld_sync_payload_clear(&in);
  ld_sync_payload_clear(&out);
  side_clear(&s);
}

/* ---- this engine's policy -------------------------------------------------------------------- */

/* Bursty traffic: 10,000 items in one second, 100 spread over an hour. Time slices put almost
 * everything in one slice; quantile splits give every sub-range the same share. */
static void quantile_splits(void **state) {
  (void)state;
  side_t ours, theirs;
  side_init(&ours, false, 0, 0);
  side_init(&theirs, false, 0, 0);
  const int64_t hour = 3600ll * 1000000000ll;
  for (int i = 0; i < 10100; i++) {
    uint8_t h[32];
    msg_hash(i, "", h);
    int64_t t = i < 10000 ? hour / 2 + i * 100000ll : (int64_t)(i - 10000) * (hour / 100);
    insert(ours.tree, t, h);
    if (i != 5000)
      insert(theirs.tree, t, h);
  }
  ld_sync_id_t lo = ld_sync_id_bound(0), hi = ld_sync_id_bound(hour);
  ld_sync_payload_t in, out;
  ld_sync_payload_init(&in);
  ld_sync_payload_init(&out);
  fp_payload(&theirs, &lo, &hi, &in);
  answer(&ours, &in, &out);
  assert_int_equal(out.n_ranges, LD_SYNC_DEFAULT_PARTITIONS);
  for (size_t i = 0; i < out.n_ranges; i++) {
    ld_sync_id_t l = ld_sync_payload_lower(&out, i);
    ld_sync_summary_t s;
    ld_sync_tree_summary(ours.tree, &l, &out.ranges[i].upper, &s);
    assert_true(s.count >= 10100 / LD_SYNC_DEFAULT_PARTITIONS - 1 &&
                s.count <= 10100 / LD_SYNC_DEFAULT_PARTITIONS + 2);
    assert_int_equal(out.ranges[i].type, LD_SYNC_RANGE_FINGERPRINT);
  }
  assert_int_equal(out.start.time, 0);
  assert_int_equal(out.ranges[LD_SYNC_DEFAULT_PARTITIONS - 1].upper.time, hour);
  /* nwaku's time slices for comparison: one slice holds nearly all of it */
  side_t nw;
  side_init(&nw, true, 0, 0);
  for (int i = 0; i < 10100; i++) {
    uint8_t h[32];
    msg_hash(i, "", h);
    int64_t t = i < 10000 ? hour / 2 + i * 100000ll : (int64_t)(i - 10000) * (hour / 100);
    insert(nw.tree, t, h);
  }
  answer(&nw, &in, &out);
  assert_int_equal(out.n_ranges, 8);
  uint64_t biggest = 0;
  for (size_t i = 0; i < out.n_ranges; i++) {
    ld_sync_id_t l = ld_sync_payload_lower(&out, i);
    ld_sync_summary_t s;
    ld_sync_tree_summary(nw.tree, &l, &out.ranges[i].upper, &s);
    biggest = s.count > biggest ? s.count : biggest;
  }
  assert_true(biggest >= 10000);
  ld_sync_payload_clear(&in);
  ld_sync_payload_clear(&out);
  side_clear(&ours);
  side_clear(&theirs);
  side_clear(&nw);
}

/* An unreconciled item set: Skip when the peer holds nothing we lack, else only the common
 * items; nwaku's policy sends all of ours back. */
static void lean_item_set_answers(void **state) {
  (void)state;
  side_t lean, nw;
  side_init(&lean, false, 0, 0);
  side_init(&nw, true, 0, 0);
  ld_sync_id_t items[10];
  for (int i = 0; i < 10; i++) {
    uint8_t h[32];
    msg_hash(i, "", h);
    items[i] = id_of(100 + i, h);
    insert(lean.tree, 100 + i, h);
    insert(nw.tree, 100 + i, h);
  }
  ld_sync_id_t lo = ld_sync_id_bound(100), hi = ld_sync_id_bound(200);
  ld_sync_payload_t in, out;
  ld_sync_payload_init(&in);
  ld_sync_payload_init(&out);
  /* they hold items 0 … 4: we lack nothing */
  ld_sync_payload_reset(&in, &lo);
  assert_int_equal(ld_sync_payload_add_item_set(&in, &hi, items, 5, false), 0);
  answer(&lean, &in, &out);
  assert_int_equal(out.n_ranges, 0);
  assert_int_equal(lean.r.have.n, 5); /* 5 … 9 go to them by transfer */
  answer(&nw, &in, &out);
  assert_int_equal(out.n_ranges, 1);
  assert_int_equal(out.ranges[0].n_items, 10);
  assert_true(out.ranges[0].reconciled);
  /* they also hold one we lack: the answer names the 5 common items only */
  uint8_t extra[32];
  msg_hash(99, "", extra);
  ld_sync_id_t with_extra[6];
  memcpy(with_extra, items, 5 * sizeof items[0]);
  with_extra[5] = id_of(150, extra);
  ld_sync_payload_reset(&in, &lo);
  assert_int_equal(ld_sync_payload_add_item_set(&in, &hi, with_extra, 6, false), 0);
  forget_diffs(&lean);
  answer(&lean, &in, &out);
  assert_int_equal(out.n_ranges, 1);
  assert_int_equal(out.ranges[0].n_items, 5);
  assert_true(out.ranges[0].reconciled);
  assert_int_equal(lean.r.need.n, 1);
  assert_int_equal(lean.r.need.v[0].time, 150);
  assert_int_equal(lean.r.have.n, 5);
  /* the peer (nwaku's policy) finds exactly what we lack */
  side_t peer;
  side_init(&peer, true, 0, 0);
  for (int i = 0; i < 6; i++)
    insert(peer.tree, with_extra[i].time, with_extra[i].hash);
  ld_sync_payload_t back;
  ld_sync_payload_init(&back);
  answer(&peer, &out, &back);
  assert_int_equal(peer.r.have.n, 1);
  assert_int_equal(peer.r.have.v[0].time, 150);
  assert_int_equal(back.n_ranges, 0);
  ld_sync_payload_clear(&in);
  ld_sync_payload_clear(&out);
  ld_sync_payload_clear(&back);
  side_clear(&lean);
  side_clear(&nw);
  side_clear(&peer);
}

/* Ranges that end before our window are skipped; an answer that would pass the caps gives the
 * ranges up (Skip) and counts them. */
static void old_ranges_and_caps(void **state) {
  (void)state;
  side_t s;
  side_init(&s, false, 0, 0);
  for (int i = 0; i < 1000; i++) {
    uint8_t h[32];
    msg_hash(i, "", h);
    insert(s.tree, i * 10, h);
  }
  ld_sync_payload_t in, out;
  ld_sync_payload_init(&in);
  ld_sync_payload_init(&out);
  ld_sync_id_t lo = ld_sync_id_bound(0), mid = ld_sync_id_bound(5000), hi = ld_sync_id_bound(10000);
  ld_sync_fp_t zero;
  ld_sync_fp_zero(&zero);
  ld_sync_payload_reset(&in, &lo);
  assert_int_equal(ld_sync_payload_add_fingerprint(&in, &mid, &zero), 0);
  assert_int_equal(ld_sync_payload_add_fingerprint(&in, &hi, &zero), 0);
  s.r.window_start = 6000;
  answer(&s, &in, &out);
  assert_int_equal(out.ranges[0].type, LD_SYNC_RANGE_SKIP);
  assert_int_equal(out.ranges[0].upper.time, 5000);
  assert_int_equal(out.n_ranges, 1 + LD_SYNC_DEFAULT_PARTITIONS);
  assert_int_equal(s.r.abandoned, 0);
  /* room for a few ranges only */
  s.r.window_start = INT64_MIN;
  s.r.limits.max_ranges = 6;
  answer(&s, &in, &out);
  assert_true(out.n_ranges <= 6);
  assert_true(s.r.abandoned > 0);
  assert_int_equal(out.ranges[out.n_ranges - 1].type, LD_SYNC_RANGE_SKIP);
  assert_int_equal(out.ranges[out.n_ranges - 1].upper.time, 10000);
  /* the difference budget: an empty reconciled-less item set over everything */
  s.r.limits.max_ranges = 100;
  s.r.abandoned = 0;
  s.r.max_diffs = 10;
  ld_sync_payload_reset(&in, &lo);
  assert_int_equal(ld_sync_payload_add_item_set(&in, &hi, NULL, 0, false), 0);
  answer(&s, &in, &out);
  assert_int_equal(s.r.have.n, 10);
  assert_int_equal(s.r.abandoned, 1);
  assert_int_equal(out.n_ranges, 0);
  ld_sync_payload_clear(&in);
  ld_sync_payload_clear(&out);
  side_clear(&s);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(fan_out_eight_fingerprints),
      cmocka_unit_test(two_partitions_then_item_sets),
      cmocka_unit_test(second_round_with_one_remote_item),
      cmocka_unit_test(second_round_payload_remote),
      cmocka_unit_test(fingerprint_item_set_zero),
      cmocka_unit_test(two_ranges_one_skip),
      cmocka_unit_test(threshold_fifty_eight_item_sets),
      cmocka_unit_test(eighty_thousand),
      cmocka_unit_test(nwaku_storage_ranges),
      cmocka_unit_test(nwaku_empty_ranges),
      cmocka_unit_test(quantile_splits),
      cmocka_unit_test(lean_item_set_answers),
      cmocka_unit_test(old_ranges_and_caps),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
