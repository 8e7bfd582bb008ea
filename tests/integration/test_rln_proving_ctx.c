/* The publish queue's proving context: a member node's first proof is made without it; the
 * context is then made and its tables built in the queue's idle time, and the next proofs go
 * through it: the first of them makes the membership wires' sums (a miss), the next reuses them
 * (a hit). Every proof is accepted by the validating peer B. Stopping frees the context (the
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
#include "node/node_rln_publish.h"
#include "node_harness.h"
#include "rln_harness.h"
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

static bool ctx_complete(ld_node_t *n) {
  ld_node_rln_proving_stats_t s;
  ld_node_rln_proving_stats(n, &s);
  return s.ctx_complete;
}

static void proofs_come_from_the_context_after_warm_up(void **state) {
  (void)state;
  rh_group_make(&g_group, MEMBERS, LIMIT, OURS);
  got_t at_b = {0};
  ld_node_t *b =
      nh_start_subscribed(&g_loop, rln_config(false), LD_EVENT_MESSAGE, got_on_message, &at_b);
  ld_node_config_t *ca = rln_config(true);
  nh_add_static(ca, b);
  ld_node_t *a = nh_start(&g_loop, ca);
  NH_WAIT_FOR(&g_loop, mesh(a) == 1 && mesh(b) == 1, WAIT_MS);

  ld_node_rln_proving_stats_t s;
  ld_node_rln_proving_stats(a, &s);
  assert_int_equal(s.plain + s.ctx_hits + s.ctx_misses + s.build_slices, 0);
  assert_false(s.ctx_complete); /* nothing is built before the first publish */

  publish_text(a, "ctx-1"); /* no context yet: proved without */
  NH_WAIT_FOR(&g_loop, at_b.n == 1, WAIT_MS);
  /* then the context is made and its tables built, a slice at a time, while the queue idles */
  NH_WAIT_FOR(&g_loop, ctx_complete(a), BUILD_WAIT_MS);
  ld_node_rln_proving_stats(a, &s);
  assert_int_equal(s.plain, 1);
  assert_int_equal(s.ctx_hits + s.ctx_misses, 0);
  assert_true(s.build_slices > 2); /* the making and more than one slice of tables */

  /* one at a time: each message's proof must be done within the validators' 20 s clock gap of
   * its timestamp, and a proof takes seconds under the sanitizers on a loaded machine */
  publish_text(a, "ctx-2"); /* makes the membership sums */
  NH_WAIT_FOR(&g_loop, at_b.n == 2, WAIT_MS);
  publish_text(a, "ctx-3"); /* reuses them */
  NH_WAIT_FOR(&g_loop, at_b.n == 3, WAIT_MS);
  assert_int_equal(ld_node_rln_pending(a), 0);
  ld_node_rln_proving_stats(a, &s);
  assert_int_equal(s.plain, 1);
  assert_int_equal(s.ctx_misses, 1);
  assert_int_equal(s.ctx_hits, 1);
  assert_string_equal(at_b.payloads[1], "ctx-2");
  assert_string_equal(at_b.payloads[2], "ctx-3");
  /* B verified all three proofs */
  const ld_rln_validator_stats_t *sb = ld_node_rln_stats(b);
  assert_non_null(sb);
  assert_int_equal(sb->valid, 3);

  nh_stop(&g_loop, a, WAIT_MS);
  nh_stop(&g_loop, b, WAIT_MS);
  rh_group_free(&g_group);
}

int main(void) {
  uv_loop_init(&g_loop);
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(proofs_come_from_the_context_after_warm_up),
  };
  int rc = cmocka_run_group_tests(tests, NULL, NULL);
  uv_loop_close(&g_loop);
  return rc;
}
