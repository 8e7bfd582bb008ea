/* The rate limit manager of reliable channels against real RLN-relay nodes: two of our nodes on
 * loopback (B dials A), both --rln-relay with one static group whose message limit is LIMIT per
 * epoch; A is a member publishing with proofs, B validates. Each has a channel manager whose
 * budget is the C library's RLN budget (ld_lib_channels_rln_budget: the RLN epoch and user
 * message limit); B sends nothing (no acknowledgement syncs), so that one prover runs. A sends
 * N_SEND messages at once, three times the per-epoch limit (without the
 * pacing, A's nonce manager would refuse the second and third: channel_message_error):
 *  - every send ends as channel_message_sent, none as channel_message_error (nothing dropped,
 *    nothing refused by A's own nonce manager), and B receives each once, in order;
 *  - every message A published was valid at B's RLN validator: no spam (no double signal), no
 *    invalid proof;
 *  - A's messages as B saw them are at most LIMIT per RLN epoch (of their timestamps) and span at
 *    least N_SEND / LIMIT epochs: the sends were paced into later epochs.
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
#include "channels/channels.h"
#include "lib/channel_json.h"
#include "messaging/messaging.h"
#include "node/broker.h"
#include "node/events.h"
#include "node/node.h"
#include "node_harness.h"
#include "rln_harness.h"
#include "waku/rln/validator.h"

#define CT "/rlnchan/1/room/proto"
#define CHANNEL "rln-room"
#define MEMBERS 10
#define LIMIT 1
#define N_SEND 3
#define A_MEMBER 3
#define MAX_SEEN 256
#define WAIT_MS 60000

typedef struct side {
  ld_node_t *node;
  ld_messaging_t *m;
  ld_channels_t *ch;
  bool freed;
  size_t sent, errors;
  char got[N_SEND][16];
  size_t n_got;
  /* the timestamps (ns) of the other node's messages on CT as this node's relay saw them */
  int64_t seen_ts[MAX_SEEN];
  size_t n_seen;
} side_t;

static uv_loop_t g_loop;
/* The RLN epoch: a few proofs long (at least 10 s), so that a message's proof is done before the
 * next is handed over: a message is proved after the rate limiter let it go, and a validator
 * refuses one whose timestamp is more than LD_RLN_MAX_CLOCK_GAP_SEC old. */
static uint64_t g_epoch_sec;
static rh_group_t g_group;
static side_t g_a, g_b;

static void on_received(int kind, const void *payload, void *ud) {
  (void)kind;
  const ld_channel_event_t *ev = payload;
  side_t *s = ud;
  if (s->n_got < N_SEND)
    snprintf(s->got[s->n_got], sizeof s->got[0], "%.*s", (int)ev->payload_len,
             (const char *)ev->payload);
  s->n_got++;
}

static void on_sent(int kind, const void *payload, void *ud) {
  (void)payload;
  side_t *s = ud;
  if (kind == LD_EVENT_CHANNEL_SENT)
    s->sent++;
  else
    s->errors++;
}

static void on_relay_message(int kind, const void *payload, void *ud) {
  (void)kind;
  const ld_fanout_message_t *m = payload;
  side_t *s = ud;
  if (m->own || m->msg->content_topic_len != strlen(CT) ||
      memcmp(m->msg->content_topic, CT, strlen(CT)) != 0)
    return;
  assert_true(s->n_seen < MAX_SEEN);
  s->seen_ts[s->n_seen++] = m->msg->timestamp;
}

/* An RLN-relay node (proving as `member` with the credentials in `cred`; validating only when
 * NULL) with a messaging client and a channel manager on the RLN budget; dials `peer` when
 * given. */
static void start_side(side_t *s, uint64_t member, const char *cred, const ld_node_t *peer) {
  char err[256];
  ld_node_config_t *cfg = nh_config();
  assert_int_equal(ld_node_config_set_num_shards(cfg, 8, err, sizeof err), 0);
  rh_configure(&g_group, cfg, g_epoch_sec, cred != NULL);
  if (cred != NULL) {
    assert_int_equal(ld_node_config_set_rln_cred_path(cfg, cred, err, sizeof err), 0);
    assert_int_equal(ld_node_config_set_rln_membership_index(cfg, member, err, sizeof err), 0);
  }
  if (peer != NULL)
    nh_add_static(cfg, (ld_node_t *)peer);
  ld_channels_config_t cc;
  ld_channels_config_default(&cc);
  assert_true(ld_lib_channels_rln_budget(cfg, &cc));
  assert_true(cc.rate_limit);
  assert_int_equal(cc.rate_limit_epoch_ms, g_epoch_sec * 1000u);
  assert_int_equal(cc.rate_limit_per_epoch, LIMIT);
  /* A proof takes seconds under the sanitizers on a loaded machine, and a message waits for its
   * proof after the rate limiter let it go: no retransmission or periodic sync competes with the
   * content for the budget or the prover, and the receiver sends nothing (no acknowledgement
   * syncs). */
  cc.sds.ack_timeout_ms = 300000;
  cc.sds.possibly_acked_timeout_ms = 600000;
  cc.sds.sync_interval_ms = 600000;
  cc.sds.ack_sync_delay_ms = 0;
  s->node = nh_start_subscribed(&g_loop, cfg, LD_EVENT_MESSAGE, on_relay_message, s);
  ld_messaging_config_t mc;
  ld_messaging_config_default(&mc);
  mc.reliability = false;
  int rc = 0;
  s->m = ld_messaging_new(s->node, &mc, &rc);
  assert_non_null(s->m);
  s->ch = ld_channels_new(&g_loop, s->m, &cc, &rc);
  assert_non_null(s->ch);
  ld_broker_t *b = ld_node_broker(s->node);
  assert_true(ld_broker_subscribe(b, LD_EVENT_CHANNEL_RECEIVED, on_received, s) > 0);
  assert_true(ld_broker_subscribe(b, LD_EVENT_CHANNEL_SENT, on_sent, s) > 0);
  assert_true(ld_broker_subscribe(b, LD_EVENT_CHANNEL_ERROR, on_sent, s) > 0);
}

static void create(side_t *s, const char *sender) {
  char why[256] = "";
  if (ld_channels_create(s->ch, CHANNEL, CT, sender, why, sizeof why) != 0)
    fail_msg("create: %s", why);
}

static void on_freed(void *ud) {
  ((side_t *)ud)->freed = true;
}

static void stop_side(side_t *s) {
  ld_channels_free(s->ch);
  s->freed = false;
  ld_messaging_free(s->m, on_freed, s);
  NH_WAIT_FOR(&g_loop, s->freed, WAIT_MS);
  nh_stop(&g_loop, s->node, WAIT_MS);
}

/* No message of the other node was refused by `s`'s validator. */
static void assert_all_valid(const side_t *s, const char *name) {
  const ld_rln_validator_stats_t *st = ld_node_rln_stats(s->node);
  assert_non_null(st);
  for (int r = 1; r < LD_RLN_REASON_COUNT; r++)
    if (st->by_reason[r] != 0)
      fail_msg("%s's validator: %s: %llu", name, ld_rln_reason_name((ld_rln_reason_t)r),
               (unsigned long long)st->by_reason[r]);
  assert_int_equal(st->spam, 0);
  assert_true(st->valid >= 1);
}

/* Wall seconds of one proof by the test's prover (after a first one that loads the circuit). */
static double proof_seconds(void) {
  ld_waku_message_t m;
  ld_waku_message_init(&m);
  m.payload = (const uint8_t *)"x";
  m.payload_len = 1;
  m.content_topic = CT;
  m.content_topic_len = strlen(CT);
  m.timestamp = (int64_t)ld_wall_ns();
  uint8_t proof[LD_RLN_RATE_LIMIT_PROOF_MAX_ENCODED];
  rh_prove(&g_group, &m, proof, A_MEMBER, 0, 600);
  uint64_t t0 = ld_now_ms();
  rh_prove(&g_group, &m, proof, A_MEMBER, 0, 600);
  return (double)(ld_now_ms() - t0) / 1000.0;
}

static void sends_beyond_the_epoch_limit_are_paced_not_dropped(void **state) {
  (void)state;
  rh_group_make(&g_group, MEMBERS, LIMIT, A_MEMBER);
  double proof_s = proof_seconds();
  if (proof_s > LD_RLN_MAX_CLOCK_GAP_SEC / 2.0) {
    rh_group_free(&g_group);
    print_message("a proof takes %.1f s here: messages would be older than the validators' "
                  "%d s clock gap when published; skipped\n",
                  proof_s, LD_RLN_MAX_CLOCK_GAP_SEC);
    skip();
  }
  g_epoch_sec = (uint64_t)(4 * proof_s) + 1;
  if (g_epoch_sec < 10)
    g_epoch_sec = 10;
  print_message("one proof: %.2f s; RLN epoch %llu s\n", proof_s, (unsigned long long)g_epoch_sec);
  uv_loop_init(&g_loop);
  start_side(&g_a, A_MEMBER, g_group.cred_path, NULL);
  start_side(&g_b, 0, NULL, g_a.node);
  create(&g_a, "alice");
  create(&g_b, "bob");

  for (int i = 0; i < N_SEND; i++) {
    char text[16], why[256] = "", id[LD_CHANNEL_REQUEST_ID_LEN + 1];
    snprintf(text, sizeof text, "m%d", i);
    if (ld_channels_send(g_a.ch, CHANNEL, (const uint8_t *)text, strlen(text), false, id, why,
                         sizeof why) != 0)
      fail_msg("send %d: %s", i, why);
  }
  NH_WAIT_FOR(&g_loop, g_a.sent + g_a.errors == N_SEND && g_b.n_got >= N_SEND,
              (N_SEND + 3) * g_epoch_sec * 1000u + WAIT_MS);
  nh_run_for(&g_loop, 500);
  assert_int_equal(g_a.errors, 0);
  assert_int_equal(g_a.sent, N_SEND);
  assert_int_equal(g_b.n_got, N_SEND);
  for (int i = 0; i < N_SEND; i++) {
    char want[16];
    snprintf(want, sizeof want, "m%d", i);
    assert_string_equal(g_b.got[i], want);
  }
  assert_all_valid(&g_b, "B");

  /* A's messages per RLN epoch, as B saw them */
  int64_t first = g_b.seen_ts[0] / 1000000000 / g_epoch_sec, last = first;
  size_t per_epoch[64] = {0};
  assert_true(g_b.n_seen >= N_SEND);
  for (size_t i = 0; i < g_b.n_seen; i++) {
    int64_t e = g_b.seen_ts[i] / 1000000000 / g_epoch_sec;
    assert_true(e >= first && e < first + 64);
    if (++per_epoch[e - first] > LIMIT)
      fail_msg("%zu messages of A in epoch %lld", per_epoch[e - first], (long long)e);
    if (e > last)
      last = e;
  }
  assert_true(last - first + 1 >= N_SEND / LIMIT);

  stop_side(&g_b);
  stop_side(&g_a);
  uv_run(&g_loop, UV_RUN_DEFAULT);
  assert_int_equal(uv_loop_close(&g_loop), 0);
  rh_group_free(&g_group);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(sends_beyond_the_epoch_limit_are_paced_not_dropped),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
