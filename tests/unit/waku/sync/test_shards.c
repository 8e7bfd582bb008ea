/* Store-sync per-topic item sets: inserts into kept and unknown topics, pruning, views over some
 * topics checked against a brute-force model (counts, fingerprints, merged order) on random
 * ranges, and a reconciliation between two nodes that keep overlapping shards through views
 * selected by the session's scope. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "base/buf.h"
#include "base/error.h"
#include "crypto/crypto.h"
#include "waku/sync/session.h"
#include "waku/sync/shards.h"

#define SEC 1000000000ll
static const int64_t NOW = 1750000000000000000ll;
#define N_TOPICS 4

static const char *const k_topics[N_TOPICS] = {"/waku/2/rs/3/0", "/waku/2/rs/3/1", "/waku/2/rs/3/2",
                                               "/waku/2/rs/3/3"};

static uint64_t g_rng = 0x243f6a8885a308d3ull;

static uint64_t rnd(void) {
  g_rng ^= g_rng << 13;
  g_rng ^= g_rng >> 7;
  g_rng ^= g_rng << 17;
  return g_rng;
}

static ld_sync_id_t item(uint64_t i, int64_t time) {
  ld_sync_id_t id;
  id.time = time;
  char text[32];
  int n = snprintf(text, sizeof text, "s%llu", (unsigned long long)i);
  ld_sha256(text, (size_t)n, id.hash);
  return id;
}

static ld_sync_topic_t topic(const char *t) {
  ld_sync_topic_t x = {(char *)t, strlen(t)};
  return x;
}

static void kept_and_unknown_topics(void **state) {
  (void)state;
  ld_sync_shards_t *s = NULL;
  const char *dup[] = {k_topics[0], k_topics[1], k_topics[0]};
  assert_int_equal(ld_sync_shards_new(dup, 3, &s), 0);
  assert_int_equal(ld_sync_shards_count(s), 2);
  assert_string_equal(ld_sync_shards_topic(s, 1), k_topics[1]);
  assert_int_equal(ld_sync_shards_find(s, k_topics[1], strlen(k_topics[1])), 1);
  assert_int_equal(ld_sync_shards_find(s, k_topics[2], strlen(k_topics[2])), -1);
  ld_sync_id_t a = item(1, NOW - 100 * SEC), b = item(2, NOW - 10 * SEC);
  assert_int_equal(ld_sync_shards_insert(s, k_topics[0], &a), 0);
  assert_int_equal(ld_sync_shards_insert(s, k_topics[0], &a), LD_ERR_EXISTS);
  assert_int_equal(ld_sync_shards_insert(s, k_topics[2], &b), LD_ERR_NOT_FOUND);
  assert_int_equal(ld_sync_shards_insert(s, k_topics[1], &b), 0);
  assert_true(ld_sync_shards_contains(s, &a));
  assert_true(ld_sync_shards_contains(s, &b));
  assert_int_equal(ld_sync_shards_size(s), 2);
  assert_true(ld_sync_shards_memory(s) > 0);
  /* removal from its own topic only */
  assert_int_equal(ld_sync_shards_remove(s, k_topics[1], &a), LD_ERR_NOT_FOUND);
  assert_int_equal(ld_sync_shards_remove(s, k_topics[2], &a), LD_ERR_NOT_FOUND);
  assert_int_equal(ld_sync_shards_remove(s, k_topics[1], &b), 0);
  assert_false(ld_sync_shards_contains(s, &b));
  assert_int_equal(ld_sync_shards_insert(s, k_topics[1], &b), 0);
  /* prune drops items with time < before, from every tree */
  assert_int_equal(ld_sync_shards_prune(s, NOW - 10 * SEC), 1);
  assert_false(ld_sync_shards_contains(s, &a));
  assert_true(ld_sync_shards_contains(s, &b));
  ld_sync_shards_free(s);
  const char *empty[] = {""};
  assert_int_equal(ld_sync_shards_new(empty, 1, &s), LD_ERR_INVALID_ARG);
  assert_int_equal(ld_sync_shards_new(k_topics, 0, &s), LD_ERR_INVALID_ARG);
}

/* ---- views against a model ------------------------------------------------------------------- */

#define N_ITEMS 3000

typedef struct model {
  ld_sync_id_t id[N_ITEMS];
  int shard[N_ITEMS];
} model_t;

static int cmp_ids(const void *a, const void *b) {
  return ld_sync_id_cmp(a, b);
}

static ld_sync_id_t g_walked[N_ITEMS];
static size_t g_n_walked;

static int walk(void *user, const ld_sync_id_t *id) {
  (void)user;
  g_walked[g_n_walked++] = *id;
  return 0;
}

static void check_view(ld_sync_view_t *v, const model_t *m, const bool *in, int64_t t0) {
  ld_sync_set_t set = ld_sync_view_set(v);
  static ld_sync_id_t want[N_ITEMS];
  for (int round = 0; round < 200; round++) {
    ld_sync_id_t lo = ld_sync_id_bound(t0 + (int64_t)(rnd() % 3000) * SEC);
    ld_sync_id_t hi = ld_sync_id_bound(lo.time + (int64_t)(rnd() % 800) * SEC);
    if (round % 10 == 0)
      hi = m->id[rnd() % N_ITEMS]; /* a bound that is an item */
    size_t n = 0;
    ld_sync_fp_t fp;
    ld_sync_fp_zero(&fp);
    for (int i = 0; i < N_ITEMS; i++)
      if (in[m->shard[i]] && ld_sync_id_cmp(&m->id[i], &lo) >= 0 &&
          ld_sync_id_cmp(&m->id[i], &hi) <= 0) {
        want[n++] = m->id[i];
        ld_sync_fp_xor_hash(&fp, m->id[i].hash);
      }
    qsort(want, n, sizeof want[0], cmp_ids);
    ld_sync_summary_t sum;
    ld_sync_set_summary(&set, &lo, &hi, &sum);
    assert_int_equal(sum.count, n);
    assert_true(ld_sync_fp_equal(&sum.fp, &fp));
    g_n_walked = 0;
    assert_int_equal(ld_sync_set_each(&set, &lo, &hi, walk, NULL), 0);
    assert_int_equal(g_n_walked, n);
    for (size_t k = 0; k < n; k++)
      assert_int_equal(ld_sync_id_cmp(&g_walked[k], &want[k]), 0);
  }
}

static void views_match_the_model(void **state) {
  (void)state;
  ld_sync_shards_t *s = NULL;
  assert_int_equal(ld_sync_shards_new(k_topics, N_TOPICS, &s), 0);
  static model_t m;
  int64_t t0 = NOW - 3600 * SEC;
  for (int i = 0; i < N_ITEMS; i++) {
    /* groups of three share a time so that ties are ordered by hash across trees */
    m.id[i] = item((uint64_t)i, t0 + (int64_t)(i / 3) * SEC);
    m.shard[i] = (int)(rnd() % N_TOPICS);
    assert_int_equal(ld_sync_shards_insert(s, k_topics[m.shard[i]], &m.id[i]), 0);
  }
  ld_sync_view_t v;
  ld_sync_view_init(&v);
  /* three of four (and one topic not kept, skipped) */
  ld_sync_topic_t three[] = {topic(k_topics[3]), topic("/waku/2/rs/3/9"), topic(k_topics[0]),
                             topic(k_topics[1])};
  assert_int_equal(ld_sync_view_select(&v, s, three, 4), 0);
  assert_int_equal(v.n, 3);
  bool in3[N_TOPICS] = {true, true, false, true};
  assert_null(ld_sync_view_set(&v).ops->nth);
  check_view(&v, &m, in3, t0);
  /* all of them */
  assert_int_equal(ld_sync_view_select(&v, s, NULL, 0), 0);
  bool all[N_TOPICS] = {true, true, true, true};
  check_view(&v, &m, all, t0);
  /* one: the tree's own set, with nth */
  ld_sync_topic_t one[] = {topic(k_topics[2]), topic(k_topics[2])};
  assert_int_equal(ld_sync_view_select(&v, s, one, 2), 0);
  assert_int_equal(v.n, 1);
  assert_non_null(ld_sync_view_set(&v).ops->nth);
  bool in1[N_TOPICS] = {false, false, true, false};
  check_view(&v, &m, in1, t0);
  /* none kept */
  ld_sync_topic_t other[] = {topic("/waku/2/rs/4/0")};
  assert_int_equal(ld_sync_view_select(&v, s, other, 1), LD_ERR_NOT_FOUND);
  assert_int_equal(v.n, 0);
  ld_sync_view_clear(&v);
  ld_sync_shards_free(s);
}

/* ---- a session through views ----------------------------------------------------------------- */

typedef struct side {
  ld_sync_shards_t *shards;
  ld_sync_view_t view, scoped;
  ld_sync_topic_t topics[N_TOPICS];
  ld_sync_session_config_t cfg;
  ld_sync_session_t s;
} side_t;

static int scope(void *user, const ld_sync_topic_t *pubsub, size_t n_pubsub,
                 const ld_sync_topic_t *content, size_t n_content, ld_sync_set_t *out) {
  side_t *side = user;
  if (n_content > 0)
    (void)content;
  int rc = ld_sync_view_select(&side->scoped, side->shards, pubsub, n_pubsub);
  if (rc == 0)
    *out = ld_sync_view_set(&side->scoped);
  return rc;
}

static void side_init(side_t *x, int first, int last) {
  const char *mine[N_TOPICS];
  size_t n = 0;
  for (int i = first; i <= last; i++) {
    mine[n] = k_topics[i];
    x->topics[n] = topic(k_topics[i]);
    n++;
  }
  assert_int_equal(ld_sync_shards_new(mine, n, &x->shards), 0);
  ld_sync_view_init(&x->view);
  ld_sync_view_init(&x->scoped);
  assert_int_equal(ld_sync_view_select(&x->view, x->shards, NULL, 0), 0);
  ld_sync_session_config_init(&x->cfg, ld_sync_view_set(&x->view), NOW);
  x->cfg.pubsub_topics = x->topics;
  x->cfg.n_pubsub_topics = n;
  x->cfg.scope = scope;
  x->cfg.user = x;
}

static void side_clear(side_t *x) {
  ld_sync_session_clear(&x->s);
  ld_sync_view_clear(&x->view);
  ld_sync_view_clear(&x->scoped);
  ld_sync_shards_free(x->shards);
}

static void run(side_t *a, side_t *b) {
  assert_int_equal(ld_sync_session_init(&a->s, &a->cfg, true), 0);
  assert_int_equal(ld_sync_session_init(&b->s, &b->cfg, false), 0);
  ld_buf_t frame, reply;
  ld_buf_init(&frame);
  ld_buf_init(&reply);
  assert_int_equal(ld_sync_session_start(&a->s, &frame), 0);
  side_t *to = b, *from = a;
  for (;;) {
    bool more;
    ld_buf_reset(&reply);
    assert_int_equal(ld_sync_session_receive(&to->s, frame.data, frame.len, &reply, &more), 0);
    if (!more)
      break;
    ld_buf_t t = frame;
    frame = reply;
    reply = t;
    side_t *x = to;
    to = from;
    from = x;
  }
  assert_true(ld_sync_session_complete(&a->s));
  assert_true(ld_sync_session_complete(&b->s));
  ld_buf_clear(&frame);
  ld_buf_clear(&reply);
}

static bool listed(const ld_sync_ids_t *l, const ld_sync_id_t *id) {
  for (size_t i = 0; i < l->n; i++)
    if (ld_sync_id_cmp(&l->v[i], id) == 0)
      return true;
  return false;
}

/* A keeps shards 0..2, B 1..3; each holds messages the other lacks on every shard. The session
 * finds exactly the differences on the shared shards 1 and 2, both ways, and each side expects
 * what the other pushes. */
static void a_session_over_shared_shards(void **state) {
  (void)state;
  side_t a, b;
  side_init(&a, 0, 2);
  side_init(&b, 1, 3);
  int64_t t0 = NOW - 1800 * SEC;
  static ld_sync_id_t only_a[400], only_b[400];
  static int shard_a[400], shard_b[400];
  for (int i = 0; i < 2000; i++) { /* common items on the shared shards */
    ld_sync_id_t id = item(100000 + (uint64_t)i, t0 + (int64_t)i * SEC / 2);
    const char *t = k_topics[1 + i % 2];
    assert_int_equal(ld_sync_shards_insert(a.shards, t, &id), 0);
    assert_int_equal(ld_sync_shards_insert(b.shards, t, &id), 0);
  }
  for (int i = 0; i < 400; i++) {
    only_a[i] = item((uint64_t)i, t0 + (int64_t)(rnd() % 1700) * SEC);
    shard_a[i] = (int)(rnd() % 3);
    assert_int_equal(ld_sync_shards_insert(a.shards, k_topics[shard_a[i]], &only_a[i]), 0);
    only_b[i] = item(50000 + (uint64_t)i, t0 + (int64_t)(rnd() % 1700) * SEC);
    shard_b[i] = 1 + (int)(rnd() % 3);
    assert_int_equal(ld_sync_shards_insert(b.shards, k_topics[shard_b[i]], &only_b[i]), 0);
  }
  run(&a, &b);
  size_t a_shared = 0, b_shared = 0;
  for (int i = 0; i < 400; i++) {
    bool shared_a = shard_a[i] != 0, shared_b = shard_b[i] != 3;
    a_shared += shared_a;
    b_shared += shared_b;
    assert_int_equal(listed(&a.s.ranges.have, &only_a[i]), shared_a);
    assert_int_equal(listed(&b.s.ranges.have, &only_b[i]), shared_b);
    if (shared_a) /* what A pushes, B expects */
      assert_true(listed(&b.s.ranges.need, &only_a[i]) ||
                  ld_sync_spans_contains(&b.s.offered, only_a[i].time));
    if (shared_b)
      assert_true(listed(&a.s.ranges.need, &only_b[i]) ||
                  ld_sync_spans_contains(&a.s.offered, only_b[i].time));
  }
  assert_int_equal(a.s.ranges.have.n, a_shared);
  assert_int_equal(b.s.ranges.have.n, b_shared);
  side_clear(&a);
  side_clear(&b);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(kept_and_unknown_topics),
      cmocka_unit_test(views_match_the_model),
      cmocka_unit_test(a_session_over_shared_shards),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
