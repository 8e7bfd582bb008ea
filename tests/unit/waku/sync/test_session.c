/* Reconciliation sessions end to end, in memory: nwaku's test_protocol.nim scenarios (empty and
 * full sides, different hashes, shards, 100,000 items with one difference, 10,000 with 1,000),
 * each run with this engine's policy on both sides, nwaku's on both sides, and mixed (so that
 * this engine is checked against nwaku's behaviour in both roles); then convergence of random
 * differences, topic scopes, the window, and bad peers. Every push is checked to be solicited on
 * the receiving side (in its `need` or its offered spans). */
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
#include "waku/sync/tree.h"

#define SEC 1000000000ll
static const int64_t NOW = 1750000000000000000ll;

static uint64_t g_rng = 0x13198a2e03707344ull;

static uint64_t rnd(void) {
  g_rng ^= g_rng << 13;
  g_rng ^= g_rng >> 7;
  g_rng ^= g_rng << 17;
  return g_rng;
}

/* Item i: time inside the default window, hash sha256("m" ‖ i). */
static ld_sync_id_t item(uint64_t i, int64_t time) {
  ld_sync_id_t id;
  id.time = time;
  char text[32];
  int n = snprintf(text, sizeof text, "m%llu", (unsigned long long)i);
  ld_sha256(text, (size_t)n, id.hash);
  return id;
}

/* The default window is [NOW − 20 s − 3600 s, NOW − 20 s]. */
static int64_t in_window(uint64_t i, uint64_t n) {
  int64_t start = NOW - 20 * SEC - 3600 * SEC + SEC;
  return start + (int64_t)(i * (uint64_t)(3590 * SEC) / n);
}

typedef enum { OURS, NWAKU } policy_t;

typedef struct node {
  ld_sync_tree_t *tree;
  ld_sync_session_config_t cfg;
  ld_sync_session_t s;
} node_t;

static void node_init(node_t *n, policy_t p) {
  assert_int_equal(ld_sync_tree_new(&n->tree), 0);
  ld_sync_session_config_init(&n->cfg, ld_sync_tree_set(n->tree), NOW);
  if (p == NWAKU)
    ld_sync_session_config_nwaku(&n->cfg);
}

static void node_clear(node_t *n) {
  ld_sync_session_clear(&n->s);
  ld_sync_tree_free(n->tree);
}

static void add(node_t *n, const ld_sync_id_t *id) {
  int rc = ld_sync_tree_insert(n->tree, id);
  assert_true(rc == 0 || rc == LD_ERR_EXISTS);
}

typedef struct stats {
  size_t frames;
  uint64_t bytes;
  int rc;
} stats_t;

/* Runs a session from `a` (initiator) to `b`, frames passed in memory. */
static stats_t run(node_t *a, node_t *b) {
  stats_t st = {0, 0, 0};
  assert_int_equal(ld_sync_session_init(&a->s, &a->cfg, true), 0);
  assert_int_equal(ld_sync_session_init(&b->s, &b->cfg, false), 0);
  ld_buf_t frame, reply;
  ld_buf_init(&frame);
  ld_buf_init(&reply);
  st.rc = ld_sync_session_start(&a->s, &frame);
  node_t *to = b, *from = a;
  while (st.rc == 0) {
    st.frames++;
    st.bytes += frame.len;
    bool more;
    ld_buf_reset(&reply);
    st.rc = ld_sync_session_receive(&to->s, frame.data, frame.len, &reply, &more);
    if (st.rc != 0 || !more)
      break;
    ld_buf_t t = frame;
    frame = reply;
    reply = t;
    node_t *n = to;
    to = from;
    from = n;
  }
  if (st.rc == 0) {
    assert_true(ld_sync_session_done(&a->s));
    assert_true(ld_sync_session_done(&b->s));
  }
  ld_buf_clear(&frame);
  ld_buf_clear(&reply);
  return st;
}

/* What transfer would do: each side's `have` arrives at the other. */
static void transfer(node_t *a, node_t *b) {
  for (size_t i = 0; i < a->s.ranges.have.n; i++)
    add(b, &a->s.ranges.have.v[i]);
  for (size_t i = 0; i < b->s.ranges.have.n; i++)
    add(a, &b->s.ranges.have.v[i]);
}

static bool has_item(const ld_sync_ids_t *l, const ld_sync_id_t *id) {
  for (size_t i = 0; i < l->n; i++)
    if (ld_sync_id_cmp(&l->v[i], id) == 0)
      return true;
  return false;
}

/* Items pushed to a side only through its offered spans (not in its `need`), over the tests. */
static size_t g_pushed_by_span;

/* What one side pushes (its `have`) is solicited on the other: in its `need` or inside the spans
 * of the item sets it sent. */
static void assert_solicited(const node_t *from, const node_t *to) {
  for (size_t i = 0; i < from->s.ranges.have.n; i++) {
    const ld_sync_id_t *x = &from->s.ranges.have.v[i];
    bool in_need = has_item(&to->s.ranges.need, x);
    bool in_span = ld_sync_spans_contains(&to->s.offered, x->time);
    if (!in_need && !in_span)
      fail_msg("a pushed item at %lld is neither needed nor offered", (long long)x->time);
    g_pushed_by_span += !in_need;
  }
}

static void assert_both_solicited(const node_t *a, const node_t *b) {
  assert_solicited(a, b);
  assert_solicited(b, a);
}

static bool same_window(const node_t *a, const node_t *b) {
  ld_sync_id_t lo = ld_sync_id_bound(a->cfg.window_start), hi = ld_sync_id_bound(a->cfg.window_end);
  ld_sync_summary_t x, y;
  ld_sync_tree_summary(a->tree, &lo, &hi, &x);
  ld_sync_tree_summary(b->tree, &lo, &hi, &y);
  return x.count == y.count && ld_sync_fp_equal(&x.fp, &y.fp);
}

static const policy_t k_pairs[4][2] = {{OURS, OURS}, {NWAKU, NWAKU}, {OURS, NWAKU}, {NWAKU, OURS}};
static const char *k_pair_names[4] = {"ours/ours", "nwaku/nwaku", "ours/nwaku", "nwaku/ours"};

/* ---- test_protocol.nim ----------------------------------------------------------------------- */

static void both_empty(void **state) {
  (void)state;
  for (int p = 0; p < 4; p++) {
    node_t client, server;
    node_init(&client, k_pairs[p][0]);
    node_init(&server, k_pairs[p][1]);
    stats_t st = run(&client, &server);
    assert_int_equal(st.rc, 0);
    assert_int_equal(st.frames, 2);
    assert_true(ld_sync_session_complete(&client.s) && ld_sync_session_complete(&server.s));
    assert_int_equal(client.s.ranges.have.n + server.s.ranges.have.n, 0);
    node_clear(&client);
    node_clear(&server);
  }
}

/* "empty client full server", "full client empty server", "different hashes", "same hashes" */
static void small_differences(void **state) {
  (void)state;
  ld_sync_id_t m[3];
  for (int i = 0; i < 3; i++)
    m[i] = item((uint64_t)i, NOW - 60 * SEC + i);
  for (int p = 0; p < 4; p++) {
    for (int scenario = 0; scenario < 4; scenario++) {
      node_t client, server;
      node_init(&client, k_pairs[p][0]);
      node_init(&server, k_pairs[p][1]);
      size_t want_server = 0, want_client = 0;
      if (scenario == 0) { /* empty client, full server */
        for (int i = 0; i < 3; i++)
          add(&server, &m[i]);
        want_server = 3;
      } else if (scenario == 1) { /* full client, empty server */
        for (int i = 0; i < 3; i++)
          add(&client, &m[i]);
        want_client = 3;
      } else if (scenario == 2) { /* both m0; server m1, client m2 */
        add(&server, &m[0]);
        add(&client, &m[0]);
        add(&server, &m[1]);
        add(&client, &m[2]);
        want_server = want_client = 1;
      } else { /* same hashes */
        for (int i = 0; i < 2; i++) {
          add(&server, &m[i]);
          add(&client, &m[i]);
        }
      }
      stats_t st = run(&client, &server);
      assert_int_equal(st.rc, 0);
      if (server.s.ranges.have.n != want_server || client.s.ranges.have.n != want_client)
        print_message("%s scenario %d: server sends %zu, client %zu\n", k_pair_names[p], scenario,
                      server.s.ranges.have.n, client.s.ranges.have.n);
      assert_int_equal(server.s.ranges.have.n, want_server);
      assert_int_equal(client.s.ranges.have.n, want_client);
      if (scenario == 2) {
        assert_true(has_item(&server.s.ranges.have, &m[1]));
        assert_true(has_item(&client.s.ranges.have, &m[2]));
      }
      assert_true(ld_sync_session_complete(&client.s));
      assert_both_solicited(&client, &server);
      transfer(&client, &server);
      assert_true(same_window(&client, &server));
      node_clear(&client);
      node_clear(&server);
    }
  }
}

/* "sync 2 nodes 100K msgs 1 diff" and "10K msgs 1K diffs" (nwaku's test accepts 90 % of the
 * differences; every pair here must find all of them). */
static void many_items(void **state) {
  (void)state;
  struct {
    uint64_t n, missing;
  } cases[] = {{100000, 1}, {10000, 1000}};
  for (size_t c = 0; c < 2; c++) {
    for (int p = 0; p < 4; p++) {
      node_t client, server;
      node_init(&client, k_pairs[p][0]);
      node_init(&server, k_pairs[p][1]);
      uint64_t n = cases[c].n, step = n / cases[c].missing;
      for (uint64_t i = 0; i < n; i++) {
        ld_sync_id_t x = item(i, in_window(i, n));
        add(&server, &x);
        if (i % step != step / 2)
          add(&client, &x);
      }
      stats_t st = run(&client, &server);
      assert_int_equal(st.rc, 0);
      print_message("%llu items, %llu missing, %s: %zu frames, %llu bytes\n", (unsigned long long)n,
                    (unsigned long long)cases[c].missing, k_pair_names[p], st.frames,
                    (unsigned long long)st.bytes);
      assert_int_equal(server.s.ranges.have.n, cases[c].missing);
      assert_int_equal(client.s.ranges.have.n, 0);
      assert_true(ld_sync_session_complete(&client.s) && ld_sync_session_complete(&server.s));
      assert_both_solicited(&client, &server);
      transfer(&client, &server);
      assert_true(same_window(&client, &server));
      node_clear(&client);
      node_clear(&server);
    }
  }
}

/* Differences on both sides at random: one session finds them all, in every pairing. */
static void random_differences_converge(void **state) {
  (void)state;
  for (int p = 0; p < 4; p++) {
    for (int round = 0; round < 6; round++) {
      node_t a, b;
      node_init(&a, k_pairs[p][0]);
      node_init(&b, k_pairs[p][1]);
      uint64_t n = 2000 + rnd() % 30000;
      unsigned only_a = (unsigned)(rnd() % 50), only_b = (unsigned)(rnd() % 50);
      size_t want_a = 0, want_b = 0;
      for (uint64_t i = 0; i < n; i++) {
        ld_sync_id_t x = item(i + 1000000 * (uint64_t)round, in_window(rnd() % n, n));
        unsigned r = (unsigned)(rnd() % 1000);
        if (r < only_a) {
          add(&a, &x);
          want_a++;
        } else if (r < only_a + only_b) {
          add(&b, &x);
          want_b++;
        } else {
          add(&a, &x);
          add(&b, &x);
        }
      }
      stats_t st = run(&a, &b);
      assert_int_equal(st.rc, 0);
      assert_int_equal(a.s.ranges.have.n, want_a);
      assert_int_equal(b.s.ranges.have.n, want_b);
      assert_true(ld_sync_session_complete(&a.s) && ld_sync_session_complete(&b.s));
      assert_both_solicited(&a, &b);
      transfer(&a, &b);
      assert_true(same_window(&a, &b));
      node_clear(&a);
      node_clear(&b);
    }
  }
}

/* "hash-fingerprint collision, same timestamp" and "duplicate ID is queued only once" */
static void same_timestamp_and_duplicates(void **state) {
  (void)state;
  for (int p = 0; p < 4; p++) {
    node_t client, server;
    node_init(&client, k_pairs[p][0]);
    node_init(&server, k_pairs[p][1]);
    ld_sync_id_t h1 = item(1, NOW - 60 * SEC), h2 = item(2, NOW - 60 * SEC);
    memcpy(h2.hash, h1.hash, 8); /* same first 8 bytes, same time */
    add(&server, &h1);
    add(&server, &h1);
    add(&client, &h2);
    assert_int_equal(run(&client, &server).rc, 0);
    assert_int_equal(server.s.ranges.have.n, 1);
    assert_int_equal(client.s.ranges.have.n, 1);
    assert_int_equal(ld_sync_id_cmp(&server.s.ranges.have.v[0], &h1), 0);
    node_clear(&client);
    node_clear(&server);
  }
}

/* "malformed message-ID is ignored", "future-timestamp msg is ignored": items outside the
 * window are not reconciled. */
static void items_outside_the_window(void **state) {
  (void)state;
  for (int p = 0; p < 4; p++) {
    node_t client, server;
    node_init(&client, k_pairs[p][0]);
    node_init(&server, k_pairs[p][1]);
    ld_sync_id_t good = item(1, NOW - 60 * SEC), zero = ld_sync_id_bound(0),
                 future = item(3, NOW + 10 * 365 * 24 * 3600 * SEC);
    add(&server, &good);
    add(&server, &zero);
    add(&server, &future);
    assert_int_equal(run(&client, &server).rc, 0);
    assert_int_equal(server.s.ranges.have.n, 1);
    assert_int_equal(ld_sync_id_cmp(&server.s.ranges.have.v[0], &good), 0);
    node_clear(&client);
    node_clear(&server);
  }
}

/* ---- topic scopes: "sync 2 nodes different shards" ------------------------------------------- */

/* A node keeping one tree per pubsub topic; a scope is answered by a view over the trees of its
 * topics (counts added, fingerprints XORed, items merged), no nth: time splits. */
#define N_SHARDS 8

typedef struct sharded {
  ld_sync_tree_t *tree[N_SHARDS];
  bool in_view[N_SHARDS];
  int scope_calls;
} sharded_t;

static int shard_of(const ld_sync_topic_t *t) {
  return t->len == 14 && memcmp(t->data, "/waku/2/rs/2/", 13) == 0 ? t->data[13] - '0' : -1;
}

static void view_summary(void *self, const ld_sync_id_t *lo, const ld_sync_id_t *hi,
                         ld_sync_summary_t *out) {
  sharded_t *s = self;
  out->count = 0;
  ld_sync_fp_zero(&out->fp);
  for (int i = 0; i < N_SHARDS; i++) {
    if (!s->in_view[i])
      continue;
    ld_sync_summary_t one;
    ld_sync_tree_summary(s->tree[i], lo, hi, &one);
    out->count += one.count;
    ld_sync_fp_xor(&out->fp, &one.fp);
  }
}

static int collect(void *user, const ld_sync_id_t *item) {
  return ld_sync_ids_push(user, item) == 0 ? 0 : 1;
}

static int cmp_ids(const void *a, const void *b) {
  return ld_sync_id_cmp(a, b);
}

static int view_each(void *self, const ld_sync_id_t *lo, const ld_sync_id_t *hi, ld_sync_item_fn fn,
                     void *user) {
  sharded_t *s = self;
  ld_sync_ids_t all = {0};
  for (int i = 0; i < N_SHARDS; i++)
    if (s->in_view[i])
      ld_sync_tree_each(s->tree[i], lo, hi, collect, &all);
  if (all.n > 0)
    qsort(all.v, all.n, sizeof all.v[0], cmp_ids);
  int rc = 0;
  for (size_t i = 0; i < all.n && rc == 0; i++)
    rc = fn(user, &all.v[i]);
  ld_sync_ids_clear(&all);
  return rc;
}

static const ld_sync_set_ops_t k_view_ops = {view_summary, view_each, NULL};

static int scope(void *user, const ld_sync_topic_t *pubsub, size_t n_pubsub,
                 const ld_sync_topic_t *content, size_t n_content, ld_sync_set_t *out) {
  (void)content;
  (void)n_content;
  sharded_t *s = user;
  s->scope_calls++;
  for (int i = 0; i < N_SHARDS; i++)
    s->in_view[i] = n_pubsub == 0;
  for (size_t k = 0; k < n_pubsub; k++) {
    int i = shard_of(&pubsub[k]);
    if (i >= 0)
      s->in_view[i] = true;
  }
  out->ops = &k_view_ops;
  out->self = s;
  return 0;
}

static ld_sync_topic_t g_topics[N_SHARDS];
static char g_topic_text[N_SHARDS][16];

static void sharded_node(node_t *n, sharded_t *s, policy_t p, int first, int last) {
  memset(s, 0, sizeof *s);
  for (int i = 0; i < N_SHARDS; i++) {
    assert_int_equal(ld_sync_tree_new(&s->tree[i]), 0);
    snprintf(g_topic_text[i], sizeof g_topic_text[i], "/waku/2/rs/2/%d", i);
    g_topics[i].data = g_topic_text[i];
    g_topics[i].len = strlen(g_topic_text[i]);
  }
  n->tree = NULL;
  ld_sync_set_t view = {&k_view_ops, s};
  ld_sync_session_config_init(&n->cfg, view, NOW);
  if (p == NWAKU)
    ld_sync_session_config_nwaku(&n->cfg);
  n->cfg.pubsub_topics = &g_topics[first];
  n->cfg.n_pubsub_topics = (size_t)(last - first + 1);
  n->cfg.scope = scope;
  n->cfg.user = s;
  for (int i = 0; i < N_SHARDS; i++)
    s->in_view[i] = i >= first && i <= last;
}

static void sharded_clear(node_t *n, sharded_t *s) {
  ld_sync_session_clear(&n->s);
  for (int i = 0; i < N_SHARDS; i++)
    ld_sync_tree_free(s->tree[i]);
}

static void different_shards(void **state) {
  (void)state;
  for (int p = 0; p < 4; p++) {
    node_t server, client;
    sharded_t ss, cs;
    sharded_node(&server, &ss, k_pairs[p][1], 1, 4); /* /waku/2/rs/2/1 … 4 */
    sharded_node(&client, &cs, k_pairs[p][0], 3, 6); /* 3 … 6 */
    ld_sync_id_t m[7];
    for (int i = 1; i <= 6; i++) {
      m[i] = item((uint64_t)i, NOW - 60 * SEC + i);
      sharded_t *owner = i <= 3 ? &ss : &cs;
      assert_int_equal(ld_sync_tree_insert(owner->tree[i], &m[i]), 0);
    }
    assert_int_equal(run(&client, &server).rc, 0);
    /* shards 3 and 4 are shared: the server sends m3, the client m4 */
    assert_int_equal(server.s.ranges.have.n, 1);
    assert_int_equal(ld_sync_id_cmp(&server.s.ranges.have.v[0], &m[3]), 0);
    assert_int_equal(client.s.ranges.have.n, 1);
    assert_int_equal(ld_sync_id_cmp(&client.s.ranges.have.v[0], &m[4]), 0);
    assert_true(ss.scope_calls >= 1 && ss.scope_calls <= 1);
    sharded_clear(&server, &ss);
    sharded_clear(&client, &cs);
  }
}

/* Disjoint scopes: the responder answers a zero-length frame and both sides end. */
static void disjoint_shards(void **state) {
  (void)state;
  node_t server, client;
  sharded_t ss, cs;
  sharded_node(&server, &ss, OURS, 0, 1);
  sharded_node(&client, &cs, OURS, 4, 5);
  ld_sync_id_t x = item(1, NOW - 60 * SEC);
  assert_int_equal(ld_sync_tree_insert(cs.tree[4], &x), 0);
  stats_t st = run(&client, &server);
  assert_int_equal(st.rc, 0);
  assert_int_equal(st.frames, 2);
  assert_int_equal(ss.scope_calls, 0);
  assert_int_equal(server.s.bytes_out, 1); /* the zero-length frame's length byte */
  assert_int_equal(client.s.ranges.have.n + server.s.ranges.have.n, 0);
  sharded_clear(&server, &ss);
  sharded_clear(&client, &cs);
}

/* ---- bad peers ------------------------------------------------------------------------------- */

static void endless_and_malformed_peers(void **state) {
  (void)state;
  node_t n;
  node_init(&n, OURS);
  for (uint64_t i = 0; i < 5000; i++) {
    ld_sync_id_t x = item(i, in_window(i, 5000));
    add(&n, &x);
  }
  /* a peer that sends the same mismatching fingerprint of the whole window, again and again */
  ld_sync_payload_t p;
  ld_sync_payload_init(&p);
  ld_sync_id_t lo = ld_sync_id_bound(n.cfg.window_start), hi = ld_sync_id_bound(n.cfg.window_end);
  ld_sync_payload_reset(&p, &lo);
  ld_sync_fp_t junk = {{1, 2, 3, 4}};
  assert_int_equal(ld_sync_payload_add_fingerprint(&p, &hi, &junk), 0);
  ld_buf_t in, out;
  ld_buf_init(&in);
  ld_buf_init(&out);
  assert_int_equal(ld_sync_payload_encode(&p, &in), 0);
  assert_int_equal(ld_sync_session_init(&n.s, &n.cfg, false), 0);
  int rc = 0;
  size_t rounds = 0;
  while (rc == 0) {
    bool reply;
    ld_buf_reset(&out);
    rc = ld_sync_session_receive(&n.s, in.data, in.len, &out, &reply);
    rounds++;
  }
  assert_int_equal(rc, LD_ERR_LIMIT);
  assert_int_equal(rounds, LD_SYNC_DEFAULT_MAX_ROUNDS + 1);
  assert_true(ld_sync_session_done(&n.s));
  bool reply;
  assert_int_equal(ld_sync_session_receive(&n.s, in.data, in.len, &out, &reply), LD_ERR_STATE);
  ld_sync_session_clear(&n.s);
  /* a malformed payload ends the session with its error */
  assert_int_equal(ld_sync_session_init(&n.s, &n.cfg, false), 0);
  uint8_t bad[] = {0, 0, 10, 5, 9};
  assert_int_equal(ld_sync_session_receive(&n.s, bad, sizeof bad, &out, &reply), LD_ERR_MALFORMED);
  assert_false(reply);
  assert_true(ld_sync_session_done(&n.s));
  assert_int_equal(n.s.error, LD_ERR_MALFORMED);
  assert_false(ld_sync_session_complete(&n.s));
  ld_sync_session_clear(&n.s);
  /* an item set of a million entries is refused before anything is allocated for it */
  assert_int_equal(ld_sync_session_init(&n.s, &n.cfg, false), 0);
  uint8_t huge[] = {0, 0, 10, 5, 2, 0xc0, 0x84, 0x3d};
  assert_int_equal(ld_sync_session_receive(&n.s, huge, sizeof huge, &out, &reply),
                   LD_ERR_TOO_LARGE);
  ld_sync_session_clear(&n.s);
  /* the start is for initiators only */
  assert_int_equal(ld_sync_session_init(&n.s, &n.cfg, false), 0);
  assert_int_equal(ld_sync_session_start(&n.s, &out), LD_ERR_STATE);
  ld_sync_payload_clear(&p);
  ld_buf_clear(&in);
  ld_buf_clear(&out);
  node_clear(&n);
}

/* The spans matter: over the scenarios above some pushes (this engine's lean replies, nwaku's
 * empty reconciled sets) reach a side that never saw the item, so they are solicited only by the
 * spans of the item sets it sent. Runs after them. */
static void some_pushes_are_solicited_by_spans_only(void **state) {
  (void)state;
  print_message("%zu pushes solicited by spans only\n", g_pushed_by_span);
  assert_true(g_pushed_by_span > 0);
}

/* Spans merge when they overlap or touch, answer membership, and at the cap grow instead of
 * being dropped. */
static void spans_merge_and_stay_bounded(void **state) {
  (void)state;
  ld_sync_spans_t s = {0};
  assert_int_equal(ld_sync_spans_add(&s, 10, 20), 0);
  assert_int_equal(ld_sync_spans_add(&s, 40, 30), 0); /* swapped */
  assert_int_equal(s.n, 2);
  assert_true(ld_sync_spans_contains(&s, 10) && ld_sync_spans_contains(&s, 20));
  assert_true(ld_sync_spans_contains(&s, 35));
  assert_false(ld_sync_spans_contains(&s, 25) || ld_sync_spans_contains(&s, 9));
  assert_int_equal(ld_sync_spans_add(&s, 21, 29), 0); /* touches both */
  assert_int_equal(s.n, 1);
  assert_true(s.v[0].lo == 10 && s.v[0].hi == 40);
  assert_int_equal(ld_sync_spans_add(&s, INT64_MIN, INT64_MIN + 5), 0);
  assert_int_equal(ld_sync_spans_add(&s, INT64_MAX - 5, INT64_MAX), 0);
  assert_true(ld_sync_spans_contains(&s, INT64_MIN) && ld_sync_spans_contains(&s, INT64_MAX));
  ld_sync_spans_clear(&s);
  s.max = 8;
  for (int64_t i = 0; i < 100; i++)
    assert_int_equal(ld_sync_spans_add(&s, i * 100, i * 100 + 10), 0);
  assert_true(s.n <= 8);
  for (int64_t i = 0; i < 100; i++) /* every time added is still held */
    assert_true(ld_sync_spans_contains(&s, i * 100 + 5));
  for (size_t i = 1; i < s.n; i++)
    assert_true(s.v[i - 1].hi + 1 < s.v[i].lo);
  ld_sync_spans_clear(&s);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(both_empty),
      cmocka_unit_test(small_differences),
      cmocka_unit_test(many_items),
      cmocka_unit_test(random_differences_converge),
      cmocka_unit_test(same_timestamp_and_duplicates),
      cmocka_unit_test(items_outside_the_window),
      cmocka_unit_test(different_shards),
      cmocka_unit_test(disjoint_shards),
      cmocka_unit_test(endless_and_malformed_peers),
      cmocka_unit_test(some_pushes_are_solicited_by_spans_only),
      cmocka_unit_test(spans_merge_and_stay_bounded),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
