/* The publish queue's proving context: a member node makes it at start, prepares it for its
 * Merkle path and builds its tables in the queue's idle time, so that its first publish is a
 * cache hit already. When a member joins the group (a new root, our path's upper levels change),
 * the node prepares the context for the new path: by itself while idle, and before a publish
 * that arrives meanwhile, which waits for the prepare; the publishes' proofs are hits and carry
 * the new root. Every proof is accepted by the validating peer B. Stopping frees the context (the
 * sanitizers' leak check sees it). Identities are random; the circuit's files come from
 * LD_RLN_FIXTURES. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <uv.h>

#include "base/clock.h"
#include "base/error.h"
#include "message_collector.h"
#include "node/config.h"
#include "node/events.h"
#include "node/node.h"
#include "node/node_internal.h"
#include "node/node_rln_publish.h"
#include "node_harness.h"
#include "rln_harness.h"
#include "node/fanout.h"
#include "waku/rln/proof.h"
#include "waku/rln/validator.h"

#define TOPIC "/waku/2/rs/0/0"
#define CONTENT_TOPIC "/rln/1/ctx-test/proto"
#define MEMBERS 16
#define LIMIT 8
#define EPOCH_SEC 600
#define OURS 3
#define WAIT_MS 120000
/* the context's tables take seconds of CPU under the sanitizers on a loaded machine */
#define BUILD_WAIT_MS 300000

static uv_loop_t g_loop;
static rh_group_t g_group;

/* Node settings for the group: with `member`, member OURS, which proves. */
static ld_node_config_t *rln_config(bool member) {
  ld_node_config_t *cfg = nh_config();
  rh_configure(&g_group, cfg, EPOCH_SEC, member);
  return cfg;
}

static void publish_text(ld_node_t *n, const char *text) {
  ld_waku_message_t m;
  ld_waku_message_init(&m);
  m.payload = (const uint8_t *)text;
  m.payload_len = strlen(text);
  m.content_topic = CONTENT_TOPIC;
  m.content_topic_len = strlen(CONTENT_TOPIC);
  m.timestamp = (int64_t)ld_wall_ns();
  assert_true(ld_node_publish(n, TOPIC, &m, NULL) >= 0);
}

static size_t mesh(ld_node_t *n) {
  return ld_gs_service_mesh_peers(ld_node_gossipsub(n), TOPIC, NULL, 0);
}

static ld_node_rln_proving_stats_t stats_of(ld_node_t *n) {
  ld_node_rln_proving_stats_t s;
  ld_node_rln_proving_stats(n, &s);
  return s;
}

static bool ctx_complete(ld_node_t *n) {
  return stats_of(n).ctx_complete;
}

static uint64_t prepares(ld_node_t *n) {
  return stats_of(n).prepares;
}

/* What B received: payloads and the Merkle root each proof was made for. */
typedef struct roots_seen {
  got_t got;
  ld_fr_t root[GOT_MAX];
} roots_seen_t;

static void on_message(int kind, const void *payload, void *ud) {
  roots_seen_t *r = ud;
  const ld_fanout_message_t *m = payload;
  size_t at = r->got.n;
  got_on_message(kind, payload, &r->got);
  if (r->got.n == at)
    return;
  ld_rln_rate_limit_proof_t p;
  assert_int_equal(ld_rln_rate_limit_proof_decode(&p, m->msg->proof, m->msg->proof_len), 0);
  assert_int_equal(ld_fr_from_bytes(&r->root[at], p.merkle_root), 0);
}

static void assert_root_is_groups(const roots_seen_t *at_b, size_t i) {
  ld_fr_t root;
  ld_merkle_root(g_group.tree, &root);
  assert_true(ld_fr_equal(&at_b->root[i], &root));
}

/* A new member joins the static group of both nodes (and the test's copy of the tree). */
static void member_joins(ld_node_t *a, ld_node_t *b) {
  ld_fr_t secret, id, rate;
  rh_random_secret(&secret);
  ld_rln_id_commitment(&id, &secret);
  ld_rln_rate_commitment(&rate, &id, LIMIT);
  uint64_t index = 0, index_b = 0;
  assert_int_equal(ld_merkle_append(g_group.tree, &rate, &index), 0);
  assert_int_equal(ld_node_rln_group_add(b, &rate, &index_b), 0); /* B knows the root first */
  assert_int_equal(index_b, index);
  assert_int_equal(ld_node_rln_group_add(a, &rate, &index_b), 0);
  assert_int_equal(index_b, index);
}

/* A publishes `text`; B gets it as its n-th message, proved with the group's root of now, and A's
 * proof reused prepared sums (hit number n) without ever proving from nothing. */
static void publish_and_expect_hit(ld_node_t *a, roots_seen_t *at_b, const char *text, size_t n) {
  publish_text(a, text);
  NH_WAIT_FOR(&g_loop, at_b->got.n == n, WAIT_MS);
  ld_node_rln_proving_stats_t s = stats_of(a);
  assert_int_equal(s.ctx_hits, n);
  assert_int_equal(s.ctx_misses + s.plain, 0);
  assert_root_is_groups(at_b, n - 1);
}

static void proofs_are_warm_from_the_start_and_after_new_roots(void **state) {
  (void)state;
  rh_group_make(&g_group, MEMBERS, LIMIT, OURS);
  roots_seen_t at_b;
  memset(&at_b, 0, sizeof at_b);
  ld_node_t *b =
      nh_start_subscribed(&g_loop, rln_config(false), LD_EVENT_MESSAGE, on_message, &at_b);
  ld_node_config_t *ca = rln_config(true);
  nh_add_static(ca, b);
  ld_node_t *a = nh_start(&g_loop, ca);
  NH_WAIT_FOR(&g_loop, mesh(a) == 1 && mesh(b) == 1, WAIT_MS);
  /* the validator only pays nothing: no context, no prepare */
  ld_node_rln_proving_stats_t s = stats_of(b);
  assert_int_equal(s.build_slices + s.prepares + s.plain, 0);

  /* A made its context at start, prepared it for its path and built its tables while idle */
  NH_WAIT_FOR(&g_loop, ctx_complete(a), BUILD_WAIT_MS);
  s = stats_of(a);
  assert_int_equal(s.prepares, 1);
  assert_true(s.build_slices > 2); /* the making and more than one slice of tables */
  assert_int_equal(s.plain + s.ctx_hits + s.ctx_misses, 0);

  /* one at a time: each message's proof must be done within the validators' 20 s clock gap of
   * its timestamp, and a proof takes seconds under the sanitizers on a loaded machine */
  publish_and_expect_hit(a, &at_b, "ctx-1", 1); /* the first publish reuses the prepared sums */

  /* a member joins: A prepares for its new path while idle */
  member_joins(a, b);
  NH_WAIT_FOR(&g_loop, prepares(a) == 2, WAIT_MS);
  publish_and_expect_hit(a, &at_b, "ctx-2", 2);

  /* another joins, and A publishes at once: the message waits for the prepare under way */
  member_joins(a, b);
  publish_and_expect_hit(a, &at_b, "ctx-3", 3);
  assert_int_equal(ld_node_rln_pending(a), 0);
  assert_int_equal(stats_of(a).prepares, 3);
  assert_string_equal(at_b.got.payloads[0], "ctx-1");
  assert_string_equal(at_b.got.payloads[1], "ctx-2");
  assert_string_equal(at_b.got.payloads[2], "ctx-3");
  /* B verified all three proofs */
  const ld_rln_validator_stats_t *sb = ld_node_rln_stats(b);
  assert_non_null(sb);
  assert_int_equal(sb->valid, 3);
  s = stats_of(b);
  assert_int_equal(s.build_slices + s.prepares + s.plain, 0);

  nh_stop(&g_loop, a, WAIT_MS);
  nh_stop(&g_loop, b, WAIT_MS);
  rh_group_free(&g_group);
}

/* A member node stopped while its context is made or prepared at start stops cleanly: the job
 * out on the thread pool is waited for, the context freed (the leak check sees it). */
static void stop_during_the_warm_up(void **state) {
  (void)state;
  rh_group_make(&g_group, MEMBERS, LIMIT, OURS);
  ld_node_config_t *cfg = rln_config(true);
  char err[256];
  assert_int_equal(ld_node_config_finalize(cfg, err, sizeof err), 0);
  int rc = 0;
  ld_node_t *a = ld_node_new(&g_loop, cfg, &rc); /* nh_start would wait for the warm-up */
  free(cfg);
  assert_non_null(a);
  assert_int_equal(ld_node_start(a), 0);
  nh_pump(&g_loop); /* the context is made on the thread pool */
  nh_stop(&g_loop, a, WAIT_MS);
  rh_group_free(&g_group);
}

int main(void) {
  uv_loop_init(&g_loop);
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(proofs_are_warm_from_the_start_and_after_new_roots),
      cmocka_unit_test(stop_during_the_warm_up),
  };
  int rc = cmocka_run_group_tests(tests, NULL, NULL);
  uv_loop_close(&g_loop);
  return rc;
}
