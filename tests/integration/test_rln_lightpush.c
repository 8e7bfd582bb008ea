/* Lightpush on an RLN-relay service node, as nwaku serves it: S (relay, lightpush, RLN-relay with
 * the credentials of a member whose limit is 2) and R (relay, RLN-relay validating only) on one
 * shard, static group of 20 members; a light client C (a bare switch with the C lightpush
 * client) pushes to S.
 *
 *  - C's messages without a proof get one of S's: the first over v3, the second over legacy v2;
 *    both reach R, whose validator found them valid (R's relay forwards nothing else).
 *  - The third in the epoch: S's nonce is used up, v3 answers 504 OUT_OF_RLN_PROOF with nwaku's
 *    text; v2 answers is_success false with the same text (the next requested nonce), which
 *    js-waku maps to "Proof generation failed".
 *  - A message that carries a proof of its own (another member's, made by the test) is passed on
 *    as is: R gets it with that proof.
 *  - A message carrying a proof made for another message is refused before relay:
 *    420 "RLN validation failed" (v2: that info); R never gets it.
 *  - T, an RLN-relay node without credentials serving lightpush, answers 504 "could not generate
 *    rln-v2 proof: identity credentials are not set".
 * Proofs for light clients are made off the loop (push_proves_off_the_loop): while S proves a
 * pushed message its loop answers a REST health check, and the push is answered 200 once the
 * message is published; legacy v2 and the REST lightpush endpoint (S's own service) likewise.
 * The epoch is 10^9 s long, so that no epoch change can fall inside the test. */
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
#include "http_client.h"
#include "message_collector.h"
#include "node/events.h"
#include "node/node.h"
#include "node_harness.h"
#include "rln_harness.h"
#include "switch_harness.h"
#include "waku/lightpush/client.h"
#include "waku/rln/proof.h"

#define TOPIC "/waku/2/rs/0/0"
#define CONTENT_TOPIC "/rln/1/lightpush/proto"
#define MEMBERS 20
#define LIMIT 2
#define OURS 3
#define OTHER 11
#define EPOCH_SEC 1000000000ull
#define WAIT_MS 60000

#define NONCE_TEXT(n)                                                                              \
  "could not get new message id to generate an rln proof: NonceLimitReached: Nonce limit "         \
  "reached. Please wait for the next epoch. requested nonce: " #n " & nonceLimit: 2"

static uv_loop_t g_loop;

/* The proof length of the message `text` R got, or 0 when it did not get it. */
static size_t got_with_proof(const got_t *g, const char *text) {
  int i = got_find(g, text);
  return i >= 0 ? g->proof_len[i] : 0;
}

typedef struct push_res {
  bool done, legacy_success;
  uint32_t code, peers;
  char desc[1024];
} push_res_t;

static void on_push(const ld_lightpush_result_t *r, void *ud) {
  push_res_t *p = ud;
  p->done = true;
  p->code = r->status_code;
  p->peers = r->relay_peer_count;
  snprintf(p->desc, sizeof p->desc, "%s", r->status_desc != NULL ? r->status_desc : "");
}

static void on_legacy(const ld_lightpush_legacy_result_t *r, void *ud) {
  push_res_t *p = ud;
  p->done = true;
  p->legacy_success = r->success;
  snprintf(p->desc, sizeof p->desc, "%s", r->info);
}

static bool push_done(void *ud) {
  return ((push_res_t *)ud)->done;
}

static push_res_t push(ld_switch_t *c, ld_conn_t *conn, const ld_waku_message_t *m, bool legacy) {
  push_res_t p;
  memset(&p, 0, sizeof p);
  /* S proves on its loop, which this process shares: seconds in the sanitizer build under load,
   * more than the client's default deadline */
  ld_lightpush_push_opts_t opts = {.timeout_ms = WAIT_MS};
  if (legacy)
    assert_int_equal(
        ld_lightpush_legacy_client_push_ex(c, conn, TOPIC, m, &opts, on_legacy, &p, NULL), 0);
  else
    assert_int_equal(ld_lightpush_client_push_ex(c, conn, TOPIC, m, &opts, on_push, &p, NULL), 0);
  assert_true(sh_run_until(&g_loop, push_done, &p, WAIT_MS));
  return p;
}

static void text_message(ld_waku_message_t *m, const char *text) {
  ld_waku_message_init(m);
  m->payload = (const uint8_t *)text;
  m->payload_len = strlen(text);
  m->content_topic = CONTENT_TOPIC;
  m->content_topic_len = strlen(CONTENT_TOPIC);
  m->timestamp = (int64_t)ld_wall_ns();
}

static size_t mesh(ld_node_t *n) {
  return ld_gs_service_mesh_peers(ld_node_gossipsub(n), TOPIC, NULL, 0);
}

static ld_node_t *start_service(rh_group_t *g, bool member, ld_node_t *peer) {
  ld_node_config_t *cfg = nh_config();
  cfg->lightpush = true;
  rh_configure(g, cfg, EPOCH_SEC, member);
  if (peer != NULL)
    nh_add_static(cfg, peer);
  return nh_start(&g_loop, cfg);
}

static ld_conn_t *dial(ld_switch_t *c, ld_node_t *node) {
  ld_multiaddr_t addr;
  assert_int_equal(ld_node_listen_addrs(node, &addr, 1), 1);
  int err = 0;
  ld_conn_t *conn = sh_dial_wait(c, &g_loop, &addr, &err);
  assert_non_null(conn);
  return conn;
}

static void light_clients_get_proofs_attached(void **state) {
  (void)state;
  rh_group_t g;
  rh_group_make(&g, MEMBERS, LIMIT, OURS);
  got_t at_r = {0};
  ld_node_config_t *cr = nh_config();
  rh_configure(&g, cr, EPOCH_SEC, false);
  ld_node_t *r = nh_start_subscribed(&g_loop, cr, LD_EVENT_MESSAGE, got_on_message, &at_r);
  ld_node_t *s = start_service(&g, true, r);
  NH_WAIT_FOR(&g_loop, mesh(s) == 1 && mesh(r) == 1, WAIT_MS);
  const ld_rln_validator_stats_t *rs = ld_node_rln_stats(r);
  assert_non_null(rs);
  ld_switch_t *c = sh_switch_new(&g_loop, NULL);
  ld_conn_t *to_s = dial(c, s);

  /* proofs attached by S: v3, then legacy v2 */
  ld_waku_message_t m;
  text_message(&m, "light-1");
  push_res_t p = push(c, to_s, &m, false);
  assert_int_equal(p.code, 200);
  assert_int_equal(p.peers, 1);
  text_message(&m, "light-2");
  p = push(c, to_s, &m, true);
  assert_true(p.legacy_success);
  assert_string_equal(p.desc, "OK");
  NH_WAIT_FOR(&g_loop, got_payload(&at_r, "light-1") && got_payload(&at_r, "light-2"), WAIT_MS);
  assert_true(got_with_proof(&at_r, "light-1") > 300);
  assert_true(got_with_proof(&at_r, "light-2") > 300);
  assert_int_equal(rs->valid, 2);

  /* the limit of 2 is used up: 504 with nwaku's text, then the v2 answer */
  text_message(&m, "light-3");
  p = push(c, to_s, &m, false);
  assert_int_equal(p.code, 504);
  assert_string_equal(p.desc, NONCE_TEXT(2));
  text_message(&m, "light-4");
  p = push(c, to_s, &m, true);
  assert_false(p.legacy_success);
  assert_string_equal(p.desc, NONCE_TEXT(3));

  /* a message with a proof of its own is passed on as is */
  uint8_t own[LD_RLN_RATE_LIMIT_PROOF_MAX_ENCODED];
  text_message(&m, "own-proof");
  rh_prove(&g, &m, own, OTHER, 0, EPOCH_SEC);
  uv_update_time(&g_loop); /* the loop stood still while the proof was made */
  p = push(c, to_s, &m, false);
  assert_int_equal(p.code, 200);
  NH_WAIT_FOR(&g_loop, got_payload(&at_r, "own-proof"), WAIT_MS);
  assert_int_equal(got_with_proof(&at_r, "own-proof"), m.proof_len);
  assert_int_equal(rs->valid, 3);

  /* that proof on another message: refused by S's validator, v3 and v2 */
  ld_waku_message_t forged;
  text_message(&forged, "forged");
  forged.timestamp = m.timestamp;
  forged.proof = m.proof;
  forged.proof_len = m.proof_len;
  p = push(c, to_s, &forged, false);
  assert_int_equal(p.code, 420);
  assert_string_equal(p.desc, "RLN validation failed");
  p = push(c, to_s, &forged, true);
  assert_false(p.legacy_success);
  assert_string_equal(p.desc, "RLN validation failed");
  /* a later valid message reaches R: the forged one was never sent */
  uint8_t later[LD_RLN_RATE_LIMIT_PROOF_MAX_ENCODED];
  text_message(&m, "sentinel");
  rh_prove(&g, &m, later, OTHER, 1, EPOCH_SEC);
  uv_update_time(&g_loop);
  p = push(c, to_s, &m, false);
  assert_int_equal(p.code, 200);
  NH_WAIT_FOR(&g_loop, got_payload(&at_r, "sentinel"), WAIT_MS);
  assert_false(got_payload(&at_r, "forged"));
  assert_false(got_payload(&at_r, "light-3"));
  assert_false(got_payload(&at_r, "light-4"));
  assert_int_equal(rs->valid, 4);
  for (int i = 1; i < LD_RLN_REASON_COUNT; i++)
    assert_int_equal(rs->by_reason[i], 0);

  /* a validating-only service node has no credentials to prove with */
  ld_node_t *t = start_service(&g, false, r);
  ld_conn_t *to_t = dial(c, t);
  text_message(&m, "no-credentials");
  p = push(c, to_t, &m, false);
  assert_int_equal(p.code, 504);
  assert_string_equal(p.desc, "could not generate rln-v2 proof: identity credentials are not set");

  sh_switch_close(c, &g_loop);
  nh_stop(&g_loop, t, WAIT_MS);
  nh_stop(&g_loop, s, WAIT_MS);
  nh_stop(&g_loop, r, WAIT_MS);
  rh_group_free(&g);
}

/* A push that proves: S's loop answers a REST health check while the proof is made on the thread
 * pool (S's proving queue holds it), and the push is answered 200 once the message is
 * published, as is a legacy push queued behind it; REST lightpush through S's own service too
 * (its answer may come after the message is published, the REST handler's 5 s wait is short). */
static void push_proves_off_the_loop(void **state) {
  (void)state;
  rh_group_t g;
  rh_group_make(&g, MEMBERS, 4, OURS);
  got_t at_r = {0};
  ld_node_config_t *cr = nh_config();
  rh_configure(&g, cr, EPOCH_SEC, false);
  ld_node_t *r = nh_start_subscribed(&g_loop, cr, LD_EVENT_MESSAGE, got_on_message, &at_r);
  ld_node_config_t *cs = nh_config();
  cs->lightpush = true;
  rh_configure(&g, cs, EPOCH_SEC, true);
  char err[256];
  assert_int_equal(ld_node_config_set_rest(cs, true, "127.0.0.1", 0, 0, err, sizeof err), 0);
  nh_add_static(cs, r);
  ld_node_t *s = nh_start(&g_loop, cs);
  NH_WAIT_FOR(&g_loop, mesh(s) == 1 && mesh(r) == 1, WAIT_MS);
  ld_switch_t *c = sh_switch_new(&g_loop, NULL);
  ld_conn_t *to_s = dial(c, s);
  assert_int_equal(ld_node_rln_pending(s), 0);

  push_res_t v3, v2;
  memset(&v3, 0, sizeof v3);
  memset(&v2, 0, sizeof v2);
  ld_lightpush_push_opts_t opts = {.timeout_ms = WAIT_MS};
  ld_waku_message_t m1, m2;
  text_message(&m1, "offloop-v3");
  text_message(&m2, "offloop-v2");
  assert_int_equal(ld_lightpush_client_push_ex(c, to_s, TOPIC, &m1, &opts, on_push, &v3, NULL), 0);
  assert_int_equal(
      ld_lightpush_legacy_client_push_ex(c, to_s, TOPIC, &m2, &opts, on_legacy, &v2, NULL), 0);
  /* both pushes reached S and wait in its proving queue */
  NH_WAIT_FOR(&g_loop, ld_node_rln_pending(s) == 2, WAIT_MS);
  http_response_t h;
  assert_int_equal(
      http_request_on_loop(&g_loop, ld_node_rest_port(s), "GET", "/health", NULL, NULL, 0, &h), 0);
  assert_int_equal(h.status, 200);
  http_response_free(&h);
  assert_true(ld_node_rln_pending(s) >= 1); /* answered while a proof was still pending */
  assert_false(v2.done);

  assert_true(sh_run_until(&g_loop, push_done, &v3, WAIT_MS));
  assert_int_equal(v3.code, 200);
  assert_int_equal(v3.peers, 1);
  assert_true(sh_run_until(&g_loop, push_done, &v2, WAIT_MS));
  assert_true(v2.legacy_success);
  assert_string_equal(v2.desc, "OK");
  NH_WAIT_FOR(&g_loop, got_payload(&at_r, "offloop-v3") && got_payload(&at_r, "offloop-v2"),
              WAIT_MS);
  assert_true(got_with_proof(&at_r, "offloop-v3") > 300);
  assert_true(got_with_proof(&at_r, "offloop-v2") > 300);

  /* REST lightpush through S's own service: proved the same way, answered when published */
  char body[256];
  snprintf(body, sizeof body,
           "{\"pubsubTopic\":\"%s\",\"message\":{\"payload\":\"b2ZmbG9vcC1yZXN0\","
           "\"contentTopic\":\"%s\"}}",
           TOPIC, CONTENT_TOPIC); /* "offloop-rest", stamped by S */
  assert_int_equal(
      http_request_on_loop(&g_loop, ld_node_rest_port(s), "POST", "/lightpush/v3/message",
                           "Content-Type: application/json\r\n", body, strlen(body), &h),
      0);
  /* 200 once published; the REST server waits 5 s at most for a push (nwaku's), less than a
   * proof can take under the sanitizers on a loaded machine: then 503 and the push goes on */
  if (h.status == 503)
    assert_non_null(strstr(h.body, "Push request timed out"));
  else
    assert_int_equal(h.status, 200);
  if (h.status == 200)
    assert_non_null(strstr(h.body, "\"relayPeerCount\":1"));
  http_response_free(&h);
  NH_WAIT_FOR(&g_loop, got_payload(&at_r, "offloop-rest"), WAIT_MS);
  assert_true(got_with_proof(&at_r, "offloop-rest") > 300);
  assert_int_equal(ld_node_rln_pending(s), 0);

  sh_switch_close(c, &g_loop);
  nh_stop(&g_loop, s, WAIT_MS);
  nh_stop(&g_loop, r, WAIT_MS);
  rh_group_free(&g);
}

int main(void) {
  uv_loop_init(&g_loop);
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(light_clients_get_proofs_attached),
      cmocka_unit_test(push_proves_off_the_loop),
  };
  int rc = cmocka_run_group_tests(tests, NULL, NULL);
  uv_loop_close(&g_loop);
  return rc;
}
