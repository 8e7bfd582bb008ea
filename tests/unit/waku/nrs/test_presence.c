/* The send side of the Network Reliability Service, sans-I/O with a fake clock: tracked items
 * are confirmed by complete sessions with enough distinct peers, and only by the presence rule
 * (tracked before the session started, newer than the window start plus skew, not lacked).
 * Sessions run on the real engine (session.h) between in-memory trees, frames passed in memory,
 * so what a peer "lacks" is what the engine finds. */
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
#include "waku/nrs/presence.h"
#include "waku/sync/session.h"
#include "waku/sync/tree.h"

#define SEC 1000000000ll
static const int64_t NOW = 1750000000000000000ll;
#define WINDOW (7 * 60 * SEC)

static ld_sync_id_t item(uint64_t i, int64_t time) {
  ld_sync_id_t id;
  id.time = time;
  char text[32];
  int n = snprintf(text, sizeof text, "p%llu", (unsigned long long)i);
  ld_sha256(text, (size_t)n, id.hash);
  return id;
}

static ld_peerid_t peer(uint8_t k) {
  ld_peerid_t p;
  memset(&p, 0, sizeof p);
  p.len = 8;
  memset(p.bytes, k, p.len);
  return p;
}

/* One node's set and session configuration over the NRS window [NOW − WINDOW, NOW]. */
typedef struct node {
  ld_sync_tree_t *tree;
  ld_sync_session_config_t cfg;
  ld_sync_session_t s;
} node_t;

static void node_init(node_t *n) {
  assert_int_equal(ld_sync_tree_new(&n->tree), 0);
  ld_sync_session_config_init(&n->cfg, ld_sync_tree_set(n->tree), NOW);
  n->cfg.window_end = NOW;
  n->cfg.window_start = NOW - WINDOW;
}

static void node_clear(node_t *n) {
  ld_sync_tree_free(n->tree);
}

static void add(node_t *n, const ld_sync_id_t *id) {
  int rc = ld_sync_tree_insert(n->tree, id);
  assert_true(rc == 0 || rc == LD_ERR_EXISTS);
}

/* A session from `a` (initiator) to `b`; returns what `a` found b lacks (caller clears). */
static ld_sync_ids_t reconcile(node_t *a, node_t *b) {
  assert_int_equal(ld_sync_session_init(&a->s, &a->cfg, true), 0);
  assert_int_equal(ld_sync_session_init(&b->s, &b->cfg, false), 0);
  ld_buf_t frame, reply;
  ld_buf_init(&frame);
  ld_buf_init(&reply);
  ld_sync_ids_t lacked = {0};
  int rc = ld_sync_session_start(&a->s, &frame);
  node_t *to = b, *from = a;
  while (rc == 0) {
    bool more;
    ld_buf_reset(&reply);
    rc = ld_sync_session_receive(&to->s, frame.data, frame.len, &reply, &more);
    if (rc != 0 || !more)
      break;
    ld_buf_t t = frame;
    frame = reply;
    reply = t;
    node_t *n = to;
    to = from;
    from = n;
  }
  assert_int_equal(rc, 0);
  assert_true(ld_sync_session_complete(&a->s));
  for (size_t i = 0; i < a->s.ranges.have.n; i++)
    assert_int_equal(ld_sync_ids_push(&lacked, &a->s.ranges.have.v[i]), 0);
  ld_sync_session_clear(&a->s);
  ld_sync_session_clear(&b->s);
  ld_buf_clear(&frame);
  ld_buf_clear(&reply);
  return lacked;
}

static size_t observe(ld_nrs_presence_t *p, uint8_t who, uint64_t started_ms, node_t *a,
                      node_t *b) {
  ld_sync_ids_t lacked = reconcile(a, b);
  ld_peerid_t id = peer(who);
  size_t n = ld_nrs_presence_observe(p, &id, started_ms, a->cfg.window_start, lacked.v, lacked.n);
  for (size_t i = 0; i < lacked.n; i++) /* what transfer does: the peer gets what it lacked */
    add(b, &lacked.v[i]);
  ld_sync_ids_clear(&lacked);
  return n;
}

/* Two peers that already hold our send confirm it; one alone does not; the same peer twice does
 * not count twice. */
static void two_distinct_peers_confirm(void **state) {
  (void)state;
  node_t me, b, c;
  node_init(&me);
  node_init(&b);
  node_init(&c);
  for (uint64_t i = 0; i < 50; i++) { /* shared traffic */
    ld_sync_id_t id = item(i, NOW - 200 * SEC + (int64_t)i * SEC);
    add(&me, &id);
    add(&b, &id);
    add(&c, &id);
  }
  ld_sync_id_t sent = item(1000, NOW - 2 * SEC);
  add(&me, &sent);
  add(&b, &sent);
  add(&c, &sent);
  ld_nrs_presence_t *p = ld_nrs_presence_new(2, 0, LD_NRS_DEFAULT_SKEW_NS);
  assert_non_null(p);
  uint64_t clock_ms = 5000;
  assert_int_equal(ld_nrs_presence_track(p, &sent, clock_ms), 0);
  assert_int_equal(ld_nrs_presence_track(p, &sent, clock_ms), LD_ERR_EXISTS);
  assert_int_equal(ld_nrs_presence_unconfirmed(p), 1);
  clock_ms += 100;
  assert_int_equal(observe(p, 1, clock_ms, &me, &b), 0);
  assert_int_equal(ld_nrs_presence_count(p, sent.hash), 1);
  assert_false(ld_nrs_presence_confirmed(p, sent.hash));
  clock_ms += 100;
  assert_int_equal(observe(p, 1, clock_ms, &me, &b), 0); /* the same peer again */
  assert_int_equal(ld_nrs_presence_count(p, sent.hash), 1);
  clock_ms += 100;
  assert_int_equal(observe(p, 2, clock_ms, &me, &c), 1);
  assert_true(ld_nrs_presence_confirmed(p, sent.hash));
  assert_int_equal(ld_nrs_presence_unconfirmed(p), 0);
  ld_nrs_presence_free(p);
  node_clear(&me);
  node_clear(&b);
  node_clear(&c);
}

/* A peer that lacks the send is not counted; once the message was pushed to it (transfer), the
 * next session counts it. */
static void a_peer_that_lacks_it_counts_after_the_push(void **state) {
  (void)state;
  node_t me, b;
  node_init(&me);
  node_init(&b);
  ld_sync_id_t sent = item(7, NOW - SEC);
  add(&me, &sent);
  ld_nrs_presence_t *p = ld_nrs_presence_new(1, 0, LD_NRS_DEFAULT_SKEW_NS);
  assert_int_equal(ld_nrs_presence_track(p, &sent, 10), 0);
  assert_int_equal(observe(p, 1, 20, &me, &b), 0); /* b lacked it; observe() pushed it */
  assert_false(ld_nrs_presence_confirmed(p, sent.hash));
  assert_int_equal(observe(p, 1, 30, &me, &b), 1);
  assert_true(ld_nrs_presence_confirmed(p, sent.hash));
  ld_nrs_presence_free(p);
  node_clear(&me);
  node_clear(&b);
}

/* A session that started before the item was tracked proves nothing about it (it may not have
 * been in our set when the ranges were compared). */
static void a_session_started_before_tracking_does_not_count(void **state) {
  (void)state;
  node_t me, b;
  node_init(&me);
  node_init(&b);
  ld_sync_id_t sent = item(9, NOW - SEC);
  add(&me, &sent);
  add(&b, &sent);
  ld_nrs_presence_t *p = ld_nrs_presence_new(1, 0, LD_NRS_DEFAULT_SKEW_NS);
  assert_int_equal(ld_nrs_presence_track(p, &sent, 1000), 0);
  assert_int_equal(observe(p, 1, 999, &me, &b), 0);
  assert_false(ld_nrs_presence_confirmed(p, sent.hash));
  assert_int_equal(observe(p, 1, 1000, &me, &b), 1);
  ld_nrs_presence_free(p);
  node_clear(&me);
  node_clear(&b);
}

/* An item within skew of the window's start is never confirmed by presence (a responder that
 * skips old ranges would answer Skip for it), nor is anything a peer answers with nothing. */
static void items_near_the_window_start_do_not_count(void **state) {
  (void)state;
  node_t me, b;
  node_init(&me);
  node_init(&b);
  ld_sync_id_t old = item(11, NOW - WINDOW + 5 * SEC);
  add(&me, &old);
  add(&b, &old);
  ld_nrs_presence_t *p = ld_nrs_presence_new(1, 0, 20 * SEC);
  assert_int_equal(ld_nrs_presence_track(p, &old, 1), 0);
  assert_int_equal(observe(p, 1, 2, &me, &b), 0);
  assert_false(ld_nrs_presence_confirmed(p, old.hash));
  ld_nrs_presence_free(p);
  node_clear(&me);
  node_clear(&b);
}

/* Tracked items leave at the window's start; forget and the cap. */
static void expiry_forget_and_cap(void **state) {
  (void)state;
  ld_nrs_presence_t *p = ld_nrs_presence_new(2, 100, 0);
  for (uint64_t i = 0; i < 100; i++) {
    ld_sync_id_t id = item(i, NOW - (int64_t)(100 - i) * SEC);
    assert_int_equal(ld_nrs_presence_track(p, &id, i), 0);
  }
  ld_sync_id_t extra = item(500, NOW);
  assert_int_equal(ld_nrs_presence_track(p, &extra, 0), LD_ERR_LIMIT);
  assert_int_equal(ld_nrs_presence_expire(p, NOW - 30 * SEC), 70);
  assert_int_equal(ld_nrs_presence_size(p), 30);
  assert_int_equal(ld_nrs_presence_unconfirmed(p), 30);
  ld_sync_id_t kept = item(99, NOW - SEC);
  assert_true(ld_nrs_presence_tracked(p, kept.hash));
  assert_int_equal(ld_nrs_presence_forget(p, kept.hash), 0);
  assert_int_equal(ld_nrs_presence_forget(p, kept.hash), LD_ERR_NOT_FOUND);
  assert_int_equal(ld_nrs_presence_unconfirmed(p), 29);
  assert_null(ld_nrs_presence_new(0, 0, 0));
  assert_null(ld_nrs_presence_new(LD_NRS_MAX_CONFIRM_PEERS + 1, 0, 0));
  ld_nrs_presence_free(p);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(two_distinct_peers_confirm),
      cmocka_unit_test(a_peer_that_lacks_it_counts_after_the_push),
      cmocka_unit_test(a_session_started_before_tracking_does_not_count),
      cmocka_unit_test(items_near_the_window_start_do_not_count),
      cmocka_unit_test(expiry_forget_and_cap),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
