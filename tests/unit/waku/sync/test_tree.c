/* The store-sync B+tree against a sorted-array model: random inserts, removals, duplicates and
 * prunes with every invariant checked, rank / k-th / range count and fingerprint against brute
 * force, range walks, memory per item, and nwaku's test_storage.nim cases. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "base/error.h"
#include "waku/sync/tree.h"

static uint64_t g_rng = 0x9e3779b97f4a7c15ull;

static uint64_t rnd(void) {
  g_rng ^= g_rng << 13;
  g_rng ^= g_rng >> 7;
  g_rng ^= g_rng << 17;
  return g_rng;
}

static ld_sync_id_t random_id(int64_t time) {
  ld_sync_id_t id;
  id.time = time;
  for (int i = 0; i < 4; i++) {
    uint64_t w = rnd();
    memcpy(id.hash + 8 * i, &w, 8);
  }
  return id;
}

/* ---- the model: a sorted array --------------------------------------------------------------- */

typedef struct model {
  ld_sync_id_t *v;
  size_t n, cap;
} model_t;

static size_t model_lower(const model_t *m, const ld_sync_id_t *key, bool inclusive) {
  size_t lo = 0, hi = m->n;
  while (lo < hi) {
    size_t mid = (lo + hi) / 2;
    int c = ld_sync_id_cmp(&m->v[mid], key);
    if (c < 0 || (inclusive && c == 0))
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo;
}

static bool model_insert(model_t *m, const ld_sync_id_t *x) {
  size_t pos = model_lower(m, x, false);
  if (pos < m->n && ld_sync_id_cmp(&m->v[pos], x) == 0)
    return false;
  if (m->n == m->cap) {
    m->cap = m->cap ? 2 * m->cap : 1024;
    m->v = realloc(m->v, m->cap * sizeof m->v[0]);
  }
  memmove(&m->v[pos + 1], &m->v[pos], (m->n - pos) * sizeof m->v[0]);
  m->v[pos] = *x;
  m->n++;
  return true;
}

static bool model_remove(model_t *m, const ld_sync_id_t *x) {
  size_t pos = model_lower(m, x, false);
  if (pos >= m->n || ld_sync_id_cmp(&m->v[pos], x) != 0)
    return false;
  memmove(&m->v[pos], &m->v[pos + 1], (m->n - pos - 1) * sizeof m->v[0]);
  m->n--;
  return true;
}

static void model_summary(const model_t *m, const ld_sync_id_t *lo, const ld_sync_id_t *hi,
                          ld_sync_summary_t *out) {
  out->count = 0;
  ld_sync_fp_zero(&out->fp);
  for (size_t i = 0; i < m->n; i++) {
    if (ld_sync_id_cmp(&m->v[i], lo) >= 0 && ld_sync_id_cmp(&m->v[i], hi) <= 0) {
      out->count++;
      ld_sync_fp_xor_hash(&out->fp, m->v[i].hash);
    }
  }
}

static void assert_same(const ld_sync_tree_t *t, const model_t *m) {
  assert_int_equal(ld_sync_tree_check(t), 0);
  assert_int_equal(ld_sync_tree_size(t), m->n);
  for (int k = 0; k < 20 && m->n > 0; k++) {
    size_t r = rnd() % m->n;
    ld_sync_id_t got;
    assert_int_equal(ld_sync_tree_at(t, r, &got), 0);
    assert_int_equal(ld_sync_id_cmp(&got, &m->v[r]), 0);
    assert_int_equal(ld_sync_tree_rank(t, &m->v[r], false), r);
    assert_int_equal(ld_sync_tree_rank(t, &m->v[r], true), r + 1);
    assert_true(ld_sync_tree_contains(t, &m->v[r]));
  }
  ld_sync_id_t past;
  assert_int_equal(ld_sync_tree_at(t, m->n, &past), LD_ERR_NOT_FOUND);
  for (int k = 0; k < 10; k++) {
    ld_sync_id_t a = random_id((int64_t)(rnd() % 12000)), b = random_id((int64_t)(rnd() % 12000));
    if (k % 3 == 0 && m->n > 0)
      a = m->v[rnd() % m->n]; /* a bound on an item: inclusive ends matter */
    ld_sync_summary_t want, got;
    model_summary(m, &a, &b, &want);
    ld_sync_tree_summary(t, &a, &b, &got);
    assert_int_equal(got.count, want.count);
    assert_true(ld_sync_fp_equal(&got.fp, &want.fp));
  }
}

static void random_operations_match_the_model(void **state) {
  (void)state;
  ld_sync_tree_t *t;
  assert_int_equal(ld_sync_tree_new(&t), 0);
  model_t m = {0};
  for (int step = 0; step < 60000; step++) {
    unsigned op = (unsigned)(rnd() % 10);
    if (op < 6 || m.n == 0) { /* insert: new, or an existing one again */
      ld_sync_id_t x =
          (op == 5 && m.n > 0) ? m.v[rnd() % m.n] : random_id((int64_t)(rnd() % 10000));
      bool fresh = model_insert(&m, &x);
      assert_int_equal(ld_sync_tree_insert(t, &x), fresh ? 0 : LD_ERR_EXISTS);
    } else if (op < 9) { /* remove: present, or absent */
      ld_sync_id_t x = op == 8 ? random_id(5) : m.v[rnd() % m.n];
      bool present = model_remove(&m, &x);
      assert_int_equal(ld_sync_tree_remove(t, &x), present ? 0 : LD_ERR_NOT_FOUND);
    } else if (rnd() % 50 == 0) { /* prune a little */
      int64_t before = (int64_t)(rnd() % 300);
      size_t n = model_lower(&m, &(ld_sync_id_t){before, {0}}, false);
      for (size_t i = 0; i < n; i++)
        model_remove(&m, &m.v[0]);
      assert_int_equal(ld_sync_tree_prune(t, before), n);
    }
    if (step % 2000 == 0)
      assert_same(t, &m);
  }
  assert_same(t, &m);
  /* remove everything, one by one */
  while (m.n > 0) {
    ld_sync_id_t x = m.v[rnd() % m.n];
    model_remove(&m, &x);
    assert_int_equal(ld_sync_tree_remove(t, &x), 0);
    if (m.n % 997 == 0)
      assert_same(t, &m);
  }
  assert_same(t, &m);
  ld_sync_tree_free(t);
  free(m.v);
}

/* The rolling window: items keep arriving in time order while the oldest are pruned. */
static void rolling_window_prunes_from_the_left(void **state) {
  (void)state;
  ld_sync_tree_t *t;
  assert_int_equal(ld_sync_tree_new(&t), 0);
  model_t m = {0};
  int64_t now = 0;
  for (int round = 0; round < 200; round++) {
    for (int i = 0; i < 1000; i++) {
      ld_sync_id_t x = random_id(now + (int64_t)(rnd() % 50)); /* jitter */
      now++;
      model_insert(&m, &x);
      assert_int_equal(ld_sync_tree_insert(t, &x), 0);
    }
    int64_t before = now - 20000;
    size_t n = model_lower(&m, &(ld_sync_id_t){before, {0}}, false);
    memmove(m.v, &m.v[n], (m.n - n) * sizeof m.v[0]);
    m.n -= n;
    assert_int_equal(ld_sync_tree_prune(t, before), n);
    if (round % 20 == 0)
      assert_same(t, &m);
  }
  assert_same(t, &m);
  /* steady state: about 20,000 items in an almost time-ordered window */
  double per_item = (double)ld_sync_tree_memory(t) / (double)m.n;
  print_message("bytes per item in the window: %.1f\n", per_item);
  assert_true(per_item <= 56.0);
  /* pruning everything leaves an empty, usable tree */
  assert_int_equal(ld_sync_tree_prune(t, INT64_MAX), m.n);
  m.n = 0;
  assert_same(t, &m);
  ld_sync_id_t x = random_id(1);
  assert_int_equal(ld_sync_tree_insert(t, &x), 0);
  assert_int_equal(ld_sync_tree_size(t), 1);
  ld_sync_tree_free(t);
  free(m.v);
}

static void memory_per_item(void **state) {
  (void)state;
  const size_t n = 200000;
  ld_sync_tree_t *seq, *rnd_order;
  assert_int_equal(ld_sync_tree_new(&seq), 0);
  assert_int_equal(ld_sync_tree_new(&rnd_order), 0);
  for (size_t i = 0; i < n; i++) {
    ld_sync_id_t a = random_id((int64_t)i);
    ld_sync_id_t b = random_id((int64_t)(rnd() >> 1));
    assert_int_equal(ld_sync_tree_insert(seq, &a), 0);
    assert_int_equal(ld_sync_tree_insert(rnd_order, &b), 0);
  }
  double per_seq = (double)ld_sync_tree_memory(seq) / (double)n;
  double per_rnd = (double)ld_sync_tree_memory(rnd_order) / (double)n;
  print_message("bytes per item: ascending %.1f, random order %.1f\n", per_seq, per_rnd);
  assert_true(per_seq <= 44.0);
  assert_true(per_rnd <= 56.0);
  assert_int_equal(ld_sync_tree_check(seq), 0);
  assert_int_equal(ld_sync_tree_check(rnd_order), 0);
  ld_sync_tree_free(seq);
  ld_sync_tree_free(rnd_order);
}

typedef struct walk {
  ld_sync_id_t got[64];
  size_t n, stop_at;
} walk_t;

static int collect(void *user, const ld_sync_id_t *item) {
  walk_t *w = user;
  w->got[w->n++] = *item;
  return w->n == w->stop_at ? 7 : 0;
}

static void walks_a_range_in_order(void **state) {
  (void)state;
  ld_sync_tree_t *t;
  assert_int_equal(ld_sync_tree_new(&t), 0);
  for (int64_t i = 0; i < 1000; i++) {
    ld_sync_id_t x = ld_sync_id_bound(i * 10);
    x.hash[31] = 1;
    assert_int_equal(ld_sync_tree_insert(t, &x), 0);
  }
  /* [(500, 0…0), (700, 0…0)]: the items at 500 … 690 (the one at 700 has a nonzero hash) */
  ld_sync_id_t lo = ld_sync_id_bound(500), hi = ld_sync_id_bound(700);
  walk_t w = {.stop_at = 0};
  assert_int_equal(ld_sync_tree_each(t, &lo, &hi, collect, &w), 0);
  assert_int_equal(w.n, 20);
  for (size_t i = 0; i < w.n; i++)
    assert_int_equal(w.got[i].time, 500 + 10 * (int64_t)i);
  /* a nonzero return stops the walk and comes back */
  walk_t s = {.stop_at = 3};
  assert_int_equal(ld_sync_tree_each(t, &lo, &hi, collect, &s), 7);
  assert_int_equal(s.n, 3);
  /* the set interface answers the same */
  ld_sync_set_t set = ld_sync_tree_set(t);
  ld_sync_summary_t sum;
  ld_sync_set_summary(&set, &lo, &hi, &sum);
  assert_int_equal(sum.count, 20);
  ld_sync_id_t third;
  assert_int_equal(set.ops->nth(set.self, &lo, 3, &third), 0);
  assert_int_equal(third.time, 530);
  ld_sync_id_t end = ld_sync_id_bound(9990);
  assert_int_equal(set.ops->nth(set.self, &end, 1, &third), LD_ERR_NOT_FOUND);
  ld_sync_tree_free(t);
}

/* nwaku tests/waku_store_sync/test_storage.nim: "insert new element", "insert duplicate",
 * "prune elements". */
static void nwaku_storage_cases(void **state) {
  (void)state;
  ld_sync_tree_t *t;
  assert_int_equal(ld_sync_tree_new(&t), 0);
  ld_sync_id_t e1 = random_id(1000), e2 = random_id(2000);
  assert_int_equal(ld_sync_tree_insert(t, &e1), 0);
  assert_int_equal(ld_sync_tree_size(t), 1);
  assert_int_equal(ld_sync_tree_insert(t, &e2), 0);
  assert_int_equal(ld_sync_tree_size(t), 2);
  assert_int_equal(ld_sync_tree_insert(t, &e1), LD_ERR_EXISTS);
  assert_int_equal(ld_sync_tree_size(t), 2);
  ld_sync_tree_free(t);

  assert_int_equal(ld_sync_tree_new(&t), 0);
  for (int64_t i = 0; i < 1000; i++) {
    ld_sync_id_t x = random_id(i);
    assert_int_equal(ld_sync_tree_insert(t, &x), 0);
  }
  assert_int_equal(ld_sync_tree_size(t), 1000);
  assert_int_equal(ld_sync_tree_prune(t, 500), 500);
  assert_int_equal(ld_sync_tree_size(t), 500);
  assert_int_equal(ld_sync_tree_check(t), 0);
  ld_sync_tree_free(t);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(random_operations_match_the_model),
      cmocka_unit_test(rolling_window_prunes_from_the_left),
      cmocka_unit_test(memory_per_item),
      cmocka_unit_test(walks_a_range_in_order),
      cmocka_unit_test(nwaku_storage_cases),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
