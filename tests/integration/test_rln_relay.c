/* RLN-relay with a static group of 100 members across three of our nodes on loopback, in a line
 * A — B — C (A and C dial B; nothing else connects them). All three run --rln-relay with the
 * same group file; A holds the credentials of member 7 and attaches proofs to what it publishes
 * (ld_node_publish and REST relay publish), B and C only validate.
 *
 *  - A member's messages (A's own, through both publish paths) reach C.
 *  - A's nonce manager refuses a third message in one epoch with a limit of 2.
 *  - Spam: two messages of member 42 with the same message id in one epoch, published raw from
 *    A; B accepts the first and rejects the second as spam, which never reaches C.
 *  - A non-member (a valid proof over a tree with an extra leaf) and a message without a proof are
 *    rejected by B and never reach C.
 *  - C never saw a bad message: every rejection happened at the first hop.
 * Identities are random; the circuit's files come from LD_RLN_FIXTURES. */
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
#include "node/config.h"
#include "node/events.h"
#include "node/node.h"
#include "node_harness.h"
#include "rln_harness.h"
#include "waku/rln/publish.h"
#include "zk/merkle.h"
#include "zk/rln_prover.h"

#define TOPIC "/waku/2/rs/0/0"
#define TOPIC_URL "%2Fwaku%2F2%2Frs%2F0%2F0"
#define CONTENT_TOPIC "/rln/1/test/proto"
#define MEMBERS 100
#define LIMIT 2
/* No epoch change can fall inside a test: a message stale when it enters the publish queue is
 * stamped again in the current epoch, and the limit checks below count on one epoch. */
#define EPOCH_SEC 1000000000ull
#define OURS 7      /* node A's membership */
#define SPAMMER 42  /* the member the test spams as */
#define SENTINEL 43 /* a member whose late message shows that the path was flushed */
#define WAIT_MS 60000

static uv_loop_t g_loop;
static rh_group_t g_group;

/* The group: 100 random identities with a limit of LIMIT; member OURS's secret as the credentials
 * file. */
static void make_group(void) {
  rh_group_make(&g_group, MEMBERS, LIMIT, OURS);
}

static ld_node_config_t *rln_config(bool member) {
  char err[256];
  ld_node_config_t *cfg = nh_config();
  rh_configure(&g_group, cfg, EPOCH_SEC, member);
  /* LIMIT, whatever limit the group was made with (a test raises it for one node) */
  assert_int_equal(ld_node_config_set_rln_user_message_limit(cfg, LIMIT, err, sizeof err), 0);
  return cfg;
}

static void init_message(ld_waku_message_t *m, const char *text, int64_t ts) {
  ld_waku_message_init(m);
  m->payload = (const uint8_t *)text;
  m->payload_len = strlen(text);
  m->content_topic = CONTENT_TOPIC;
  m->content_topic_len = strlen(CONTENT_TOPIC);
  m->timestamp = ts;
}

/* A message of member `index` of `tree` with `message_id`, proved by the test. */
static void proved_message(ld_waku_message_t *m, uint8_t *proof, const char *text, int64_t ts,
                           const ld_fr_t *secret, const ld_merkle_tree_t *tree, uint64_t index,
                           uint64_t message_id) {
  init_message(m, text, ts);
  rh_prove_in_tree(&g_group, m, proof, secret, tree, index, message_id, EPOCH_SEC);
}

static size_t mesh(ld_node_t *n) {
  return ld_gs_service_mesh_peers(ld_node_gossipsub(n), TOPIC, NULL, 0);
}

static void rln_group_across_three_nodes(void **state) {
  (void)state;
  make_group();
  rh_prover(&g_group); /* loaded before the nodes start, not between two timed proofs */

  got_t at_b = {0}, at_c = {0};
  char err[256];
  ld_node_config_t *cb = rln_config(false);
  assert_int_equal(ld_node_config_set_metrics(cb, true, "127.0.0.1", 0, 0, err, sizeof err), 0);
  ld_node_t *b = nh_start_subscribed(&g_loop, cb, LD_EVENT_MESSAGE, got_on_message, &at_b);
  ld_node_config_t *ca = rln_config(true);
  assert_int_equal(ld_node_config_set_rest(ca, true, "127.0.0.1", 0, 0, err, sizeof err), 0);
  nh_add_static(ca, b);
  ld_node_t *a = nh_start(&g_loop, ca);
  ld_node_config_t *cc = rln_config(false);
  nh_add_static(cc, b);
  ld_node_t *c = nh_start_subscribed(&g_loop, cc, LD_EVENT_MESSAGE, got_on_message, &at_c);
  NH_WAIT_FOR(&g_loop, mesh(a) == 1 && mesh(b) == 2 && mesh(c) == 1, WAIT_MS);
  const ld_rln_validator_stats_t *sb = ld_node_rln_stats(b), *sc = ld_node_rln_stats(c);
  assert_non_null(sb);
  assert_non_null(sc);

  /* A member's messages: A proves them (ld_node_publish, then REST), C gets both. */
  int64_t t0 = (int64_t)ld_wall_ns();
  ld_waku_message_t m;
  init_message(&m, "member-1", t0);
  assert_true(ld_node_publish(a, TOPIC, &m, NULL) >= 0);
  char body[256];
  snprintf(body, sizeof body,
           "{\"payload\":\"bWVtYmVyLTI=\",\"contentTopic\":\"%s\",\"timestamp\":%lld}",
           CONTENT_TOPIC, (long long)t0);
  http_response_t r;
  assert_int_equal(
      http_request_on_loop(&g_loop, ld_node_rest_port(a), "POST", "/relay/v1/messages/" TOPIC_URL,
                           "Content-Type: application/json\r\n", body, strlen(body), &r),
      0);
  assert_int_equal(r.status, 200);
  http_response_free(&r);
  NH_WAIT_FOR(&g_loop, got_payload(&at_c, "member-1") && got_payload(&at_c, "member-2"), WAIT_MS);
  /* the limit of 2 is used up in t0's epoch: A refuses a third, on both paths */
  init_message(&m, "member-3", t0);
  assert_int_equal(ld_node_publish(a, TOPIC, &m, NULL), LD_ERR_LIMIT);
  assert_int_equal(
      http_request_on_loop(&g_loop, ld_node_rest_port(a), "POST", "/relay/v1/messages/" TOPIC_URL,
                           "Content-Type: application/json\r\n", body, strlen(body), &r),
      0);
  assert_true(r.status >= 400);
  http_response_free(&r);

  /* Spam: member 42 twice with message id 0 in one epoch, sent raw from A one after the other
   * (A's stream to B keeps their order). Both are proved first, so that the second is not stale
   * by the relay's 20 s clock rule when it arrives on a slow machine. */
  uint8_t p1[LD_RLN_RATE_LIMIT_PROOF_MAX_ENCODED], p2[LD_RLN_RATE_LIMIT_PROOF_MAX_ENCODED];
  int64_t t1 = (int64_t)ld_wall_ns();
  ld_waku_message_t spam2;
  proved_message(&m, p1, "spam-1", t1, &g_group.secrets[SPAMMER], g_group.tree, SPAMMER, 0);
  proved_message(&spam2, p2, "spam-2", t1, &g_group.secrets[SPAMMER], g_group.tree, SPAMMER, 0);
  assert_true(ld_relay_publish(ld_node_relay(a), TOPIC, &m, NULL) >= 0);
  assert_true(ld_relay_publish(ld_node_relay(a), TOPIC, &spam2, NULL) >= 0);
  NH_WAIT_FOR(&g_loop, got_payload(&at_c, "spam-1"), WAIT_MS);
  NH_WAIT_FOR(&g_loop, sb->spam == 1, WAIT_MS);
  assert_int_equal(sb->by_reason[LD_RLN_DUPLICATE], 1);

  /* A non-member: a valid proof over the group with its leaf added (another root). */
  ld_merkle_tree_t *outsiders;
  assert_int_equal(ld_merkle_new(&outsiders, LD_MERKLE_RLN_DEPTH), 0);
  for (uint64_t i = 0; i < MEMBERS; i++) {
    ld_fr_t leaf;
    assert_int_equal(ld_merkle_get(g_group.tree, i, &leaf), 0);
    assert_int_equal(ld_merkle_set(outsiders, i, &leaf), 0);
  }
  ld_fr_t stranger, id, rate;
  rh_random_secret(&stranger);
  ld_rln_id_commitment(&id, &stranger);
  ld_rln_rate_commitment(&rate, &id, LIMIT);
  assert_int_equal(ld_merkle_set(outsiders, MEMBERS, &rate), 0);
  uint8_t p3[LD_RLN_RATE_LIMIT_PROOF_MAX_ENCODED];
  proved_message(&m, p3, "stranger", (int64_t)ld_wall_ns(), &stranger, outsiders, MEMBERS, 0);
  ld_merkle_free(outsiders);
  assert_true(ld_relay_publish(ld_node_relay(a), TOPIC, &m, NULL) >= 0);
  NH_WAIT_FOR(&g_loop, sb->by_reason[LD_RLN_INVALID_ROOT] == 1, WAIT_MS);
  /* and a message without any proof */
  init_message(&m, "no-proof", (int64_t)ld_wall_ns());
  assert_true(ld_relay_publish(ld_node_relay(a), TOPIC, &m, NULL) >= 0);
  NH_WAIT_FOR(&g_loop, sb->by_reason[LD_RLN_TIMESTAMP_MISMATCH] == 1, WAIT_MS);

  /* A later valid message crosses the same path: what came before it was dropped at B. */
  uint8_t p4[LD_RLN_RATE_LIMIT_PROOF_MAX_ENCODED];
  proved_message(&m, p4, "sentinel", (int64_t)ld_wall_ns(), &g_group.secrets[SENTINEL],
                 g_group.tree, SENTINEL, 0);
  assert_true(ld_relay_publish(ld_node_relay(a), TOPIC, &m, NULL) >= 0);
  NH_WAIT_FOR(&g_loop, got_payload(&at_c, "sentinel"), WAIT_MS);
  assert_false(got_payload(&at_c, "spam-2"));
  assert_false(got_payload(&at_c, "stranger"));
  assert_false(got_payload(&at_c, "no-proof"));
  assert_false(got_payload(&at_b, "spam-2"));
  assert_false(got_payload(&at_b, "stranger"));
  assert_false(got_payload(&at_b, "no-proof"));
  /* B passed on exactly the four valid messages (member-1, member-2, spam-1, sentinel); C saw
   * only those and found them all valid */
  assert_int_equal(sb->valid, 4);
  assert_int_equal(sc->valid, 4);
  assert_int_equal(sc->spam, 0);
  for (int i = 1; i < LD_RLN_REASON_COUNT; i++)
    assert_int_equal(sc->by_reason[i], 0);
  /* B's /metrics under nwaku's names */
  http_response_t mr;
  assert_int_equal(
      http_request_on_loop(&g_loop, ld_node_metrics_port(b), "GET", "/metrics", NULL, NULL, 0, &mr),
      0);
  assert_int_equal(mr.status, 200);
  assert_non_null(strstr(mr.body, "\nwaku_rln_spam_messages_total 1\n"));
  assert_non_null(strstr(mr.body, "\nwaku_rln_invalid_messages_total{type=\"invalid_root\"} 1\n"));
  assert_non_null(
      strstr(mr.body, "\nwaku_rln_invalid_messages_total{type=\"timestamp_mismatch\"} 1\n"));
  assert_non_null(strstr(mr.body, "\nwaku_rln_valid_messages_total 4\n"));
  assert_non_null(strstr(mr.body, "\nwaku_rln_messages_total 7\n"));
  assert_non_null(strstr(mr.body, "\nwaku_rln_proof_verification_duration_seconds_count "));
  /* relay's zk verifications went through the batched validator (waku/rln/batch.h) */
  assert_true(sb->batches >= 1);
  assert_int_equal(sb->batched, sb->verifications);
  char batches[96];
  snprintf(batches, sizeof batches, "\nwaku_rln_proof_verification_batches_total %llu\n",
           (unsigned long long)sb->batches);
  assert_non_null(strstr(mr.body, batches));
  http_response_free(&mr);
  /* A and C never connected: every message C got came through B */
  assert_int_equal(ld_gs_service_topic_peers(ld_node_gossipsub(c), TOPIC, NULL, 0), 1);

  nh_stop(&g_loop, a, WAIT_MS);
  nh_stop(&g_loop, b, WAIT_MS);
  nh_stop(&g_loop, c, WAIT_MS);
  rh_group_free(&g_group);
}

/* Proofs are made off the loop: while A proves its queued messages (a third of a second of CPU
 * each in a release build, seconds under the sanitizers), its loop answers REST requests (a
 * health check comes back while a proof is still pending; a REST publish once its own message is
 * proved), and B gets the messages in the order they were published. The nonce manager still
 * refuses at once; a message still being proved when A stops is dropped cleanly. Two messages at
 * most wait in the queue, so that none is older than the validators' 20 s clock gap when it goes
 * out on a slow machine. */
static void publish_proves_off_the_loop(void **state) {
  (void)state;
  enum { ASYNC_LIMIT = 3 };
  rh_group_make(&g_group, MEMBERS, ASYNC_LIMIT, OURS);
  got_t at_b = {0};
  char err[256];
  ld_node_t *b =
      nh_start_subscribed(&g_loop, rln_config(false), LD_EVENT_MESSAGE, got_on_message, &at_b);
  ld_node_config_t *ca = rln_config(true);
  assert_int_equal(ld_node_config_set_rln_user_message_limit(ca, ASYNC_LIMIT, err, sizeof err), 0);
  assert_int_equal(ld_node_config_set_rest(ca, true, "127.0.0.1", 0, 0, err, sizeof err), 0);
  nh_add_static(ca, b);
  ld_node_t *a = nh_start(&g_loop, ca);
  NH_WAIT_FOR(&g_loop, mesh(a) == 1 && mesh(b) == 1, WAIT_MS);
  assert_int_equal(ld_node_rln_pending(a), 0);

  /* ld_node_publish queues the message with its hash known at once */
  ld_waku_message_t m;
  init_message(&m, "async-1", (int64_t)ld_wall_ns());
  uint8_t hash[LD_WAKU_HASH_LEN], want[LD_WAKU_HASH_LEN];
  assert_int_equal(ld_node_publish(a, TOPIC, &m, hash), 1); /* B, the one relay peer */
  assert_int_equal(ld_waku_message_hash(TOPIC, &m, want), 0);
  assert_memory_equal(hash, want, sizeof hash);
  assert_int_equal(ld_node_rln_pending(a), 1); /* queued, not yet proved */
  /* a health check is answered while the proof is still pending */
  http_response_t r;
  assert_int_equal(
      http_request_on_loop(&g_loop, ld_node_rest_port(a), "GET", "/health", NULL, NULL, 0, &r), 0);
  assert_int_equal(r.status, 200);
  http_response_free(&r);
  assert_true(ld_node_rln_pending(a) >= 1);
  /* REST publish: answered once its message is proved and handed to relay, as nwaku does */
  char body[256];
  snprintf(body, sizeof body, "{\"payload\":\"YXN5bmMtMg==\",\"contentTopic\":\"%s\"}",
           CONTENT_TOPIC); /* "async-2", stamped by the node */
  assert_int_equal(
      http_request_on_loop(&g_loop, ld_node_rest_port(a), "POST", "/relay/v1/messages/" TOPIC_URL,
                           "Content-Type: application/json\r\n", body, strlen(body), &r),
      0);
  assert_int_equal(r.status, 200);
  http_response_free(&r);
  assert_int_equal(ld_node_rln_pending(a), 0); /* both proved: the REST one after the first */

  NH_WAIT_FOR(&g_loop, at_b.n == 2, WAIT_MS);
  assert_int_equal(ld_node_rln_pending(a), 0);
  assert_string_equal(at_b.payloads[0], "async-1");
  assert_string_equal(at_b.payloads[1], "async-2");
  /* the nonce manager's limit is reported at once: one id is left in this epoch (all three when
   * the epoch changed meanwhile), then LD_ERR_LIMIT while the accepted ones are still queued */
  int64_t t = (int64_t)ld_wall_ns();
  char text[16];
  int rc = 0;
  size_t accepted = 0;
  while (accepted <= ASYNC_LIMIT) {
    snprintf(text, sizeof text, "async-%zu", 3 + accepted);
    init_message(&m, text, t);
    if ((rc = ld_node_publish(a, TOPIC, &m, NULL)) < 0)
      break;
    accepted++;
  }
  assert_int_equal(rc, LD_ERR_LIMIT);
  assert_true(accepted >= 1 && accepted <= ASYNC_LIMIT);
  assert_int_equal(ld_node_rln_pending(a), accepted);
  nh_stop(&g_loop, a, WAIT_MS); /* with async-3 being proved: dropped cleanly */
  nh_stop(&g_loop, b, WAIT_MS);
  rh_group_free(&g_group);
}

/* A node refuses to start with credentials that are not the member at the index, and with the
 * on-chain group but no contract address. */
static void bad_rln_settings_refused(void **state) {
  (void)state;
  make_group();
  ld_node_config_t *cfg = rln_config(true);
  char err[256];
  assert_int_equal(ld_node_config_set_rln_membership_index(cfg, OURS + 1, err, sizeof err), 0);
  assert_int_equal(ld_node_config_finalize(cfg, err, sizeof err), 0);
  int rc = 0;
  ld_node_t *n = ld_node_new(&g_loop, cfg, &rc);
  assert_non_null(n);
  assert_int_equal(ld_node_start(n), LD_ERR_INVALID_ARG);
  nh_stop(&g_loop, n, WAIT_MS);
  cfg->rln.dynamic = true;
  n = ld_node_new(&g_loop, cfg, &rc);
  assert_non_null(n);
  assert_int_equal(ld_node_start(n), LD_ERR_INVALID_ARG);
  nh_stop(&g_loop, n, WAIT_MS);
  free(cfg);
  rh_group_free(&g_group);
}

int main(void) {
  uv_loop_init(&g_loop);
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(rln_group_across_three_nodes),
      cmocka_unit_test(publish_proves_off_the_loop),
      cmocka_unit_test(bad_rln_settings_refused),
  };
  int rc = cmocka_run_group_tests(tests, NULL, NULL);
  uv_loop_close(&g_loop);
  return rc;
}
