/* The store fallback of SDS repair (channels/channel_fetch.h, messaging/store_fetch.h) on real
 * nodes in one process over loopback. S is a relay + store node (memory archive) with a messaging
 * client subscribed to the channel's content topic; A and B are relay nodes dialing S, each with
 * a messaging client and a channel manager. A sends "first" while B has no channel yet (B misses
 * it), then B joins and A sends "second", whose causal history names "first" with its Waku hash
 * as retrieval hint. As soon as B holds "second" waiting for "first", A's channel layer is
 * freed, so no participant can answer B's repair requests.
 * - With the store's key-value function on, B fetches "first" from S by its hash after the
 *   repair window and delivers "first" then "second"; nothing is declared lost.
 * - With it off (S answers 503), the fetches fail and after the lost timeout B declares "first"
 *   lost (a channel_message_lost event: "Irretrievable", its message ID and retrieval hint) and
 *   delivers "second" alone.
 * - (A and B alone, B dialing A) A payload of two LIP-243 segments whose first segment is dropped
 *   on the way to B (and the sender gone): the first is declared lost ("Irretrievable"), the second
 * is then delivered by SDS but its set never completes, and after the reassembly timeout the set is
 * reported lost
 *   ("Expired", with the keccak256 of the whole payload); the payload is never received. */
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
#include "base/hex.h"
#include "crypto/keccak.h"
#include "channels/channels.h"
#include "messaging/messaging.h"
#include "node/broker.h"
#include "node/fanout.h"
#include "node/node.h"
#include "node_harness.h"

#define STEP_MS 30000
#define CT "/fetch/1/channel/proto"
#define CHANNEL "fetch-room"
#define LOST_TIMEOUT_MS 6000
#define MAX_GOT 8
#define REASSEMBLY_TIMEOUT_MS 2000
#define BIG_LEN 150000 /* two segments of the default 102,400 bytes */

typedef struct tnode {
  ld_node_t *node;
  ld_messaging_t *m;
  ld_channels_t *ch;
  bool freed;
} tnode_t;

typedef struct lost {
  char sender_id[64], message_id[160], message_hash[160], payload_hash[80], reason[32];
} lost_t;

typedef struct seen {
  char got[MAX_GOT][32]; /* payloads received in order (the first 31 bytes) */
  size_t n_got;
  size_t n_sent;
  lost_t lost[MAX_GOT]; /* channel_message_lost events in order */
  size_t n_lost;
} seen_t;

static uv_loop_t g_loop;
static tnode_t g_s, g_a, g_b;
static seen_t g_seen_a, g_seen_b;

static void on_received(int kind, const void *payload, void *ud) {
  (void)kind;
  const ld_channel_event_t *ev = payload;
  seen_t *s = ud;
  if (s->n_got < MAX_GOT)
    snprintf(s->got[s->n_got++], sizeof s->got[0], "%.*s", (int)ev->payload_len,
             (const char *)ev->payload);
}

static void copy_text(char *dst, size_t cap, const char *s) {
  snprintf(dst, cap, "%s", s != NULL ? s : "");
}

static void on_lost(int kind, const void *payload, void *ud) {
  (void)kind;
  const ld_channel_event_t *ev = payload;
  seen_t *s = ud;
  if (s->n_lost == MAX_GOT)
    return;
  lost_t *l = &s->lost[s->n_lost++];
  copy_text(l->sender_id, sizeof l->sender_id, ev->sender_id);
  copy_text(l->message_id, sizeof l->message_id, ev->message_id);
  copy_text(l->message_hash, sizeof l->message_hash, ev->message_hash);
  copy_text(l->payload_hash, sizeof l->payload_hash, ev->payload_hash);
  copy_text(l->reason, sizeof l->reason, ev->reason);
}

static void on_sent(int kind, const void *payload, void *ud) {
  (void)kind, (void)payload;
  ((seen_t *)ud)->n_sent++;
}

/* A node with autosharding over 8 shards and a messaging client (no store reliability). */
static void start_node(tnode_t *t, bool store, bool key_value, const ld_node_t *peer) {
  char err[256];
  ld_node_config_t *cfg = nh_config();
  assert_int_equal(ld_node_config_set_num_shards(cfg, 8, err, sizeof err), 0);
  if (store) {
    cfg->store = true;
    assert_int_equal(ld_node_config_set_store_db_url(cfg, "memory://", err, sizeof err), 0);
    cfg->store_key_value = key_value;
  }
  if (peer != NULL)
    nh_add_static(cfg, (ld_node_t *)peer);
  t->node = nh_start(&g_loop, cfg);
  ld_messaging_config_t mc;
  ld_messaging_config_default(&mc);
  mc.reliability = false;
  int rc = 0;
  t->m = ld_messaging_new(t->node, &mc, &rc);
  assert_non_null(t->m);
}

/* A channel manager whose repair window is short: requests between 200 and 600 ms after a gap
 * is seen, store fetches from 1.5 s on every 0.5 s, lost after LOST_TIMEOUT_MS. */
static void start_channels(tnode_t *t, seen_t *seen) {
  ld_channels_config_t cc;
  ld_channels_config_default(&cc);
  cc.sds.repair_t_min_ms = 200;
  cc.sds.repair_t_max_ms = 600;
  cc.sds.fetch_delay_ms = 1500;
  cc.sds.fetch_interval_ms = 500;
  cc.sds.max_fetches = 5;
  cc.sds.lost_timeout_ms = LOST_TIMEOUT_MS;
  cc.reassembly_timeout_ms = REASSEMBLY_TIMEOUT_MS;
  int rc = 0;
  t->ch = ld_channels_new(&g_loop, t->m, &cc, &rc);
  assert_non_null(t->ch);
  ld_broker_t *b = ld_node_broker(t->node);
  assert_true(ld_broker_subscribe(b, LD_EVENT_CHANNEL_RECEIVED, on_received, seen) > 0);
  assert_true(ld_broker_subscribe(b, LD_EVENT_CHANNEL_SENT, on_sent, seen) > 0);
  assert_true(ld_broker_subscribe(b, LD_EVENT_CHANNEL_LOST, on_lost, seen) > 0);
}

static void create(tnode_t *t, const char *sender) {
  char why[256] = "";
  int rc = ld_channels_create(t->ch, CHANNEL, CT, sender, why, sizeof why);
  if (rc != 0)
    fail_msg("create: %s", why);
}

static void send_bytes(tnode_t *t, const uint8_t *data, size_t len) {
  char why[256] = "", id[LD_CHANNEL_REQUEST_ID_LEN + 1];
  int rc = ld_channels_send(t->ch, CHANNEL, data, len, false, id, why, sizeof why);
  if (rc != 0)
    fail_msg("send: %s", why);
}

static void send_text(tnode_t *t, const char *text) {
  send_bytes(t, (const uint8_t *)text, strlen(text));
}

/* A lost dependency as the channel layer reports it: its SDS message ID and, when the causal
 * history that named it carried one (`hint` true: required), its retrieval hint, the Waku message
 * hash ("0x" + 64 hex digits); no payload hash. */
static void assert_irretrievable(const lost_t *l, bool hint) {
  assert_string_equal(l->reason, LD_CHANNEL_LOST_IRRETRIEVABLE);
  assert_true(strlen(l->message_id) > 0);
  if (hint || l->message_hash[0] != '\0') {
    assert_int_equal(strlen(l->message_hash), 66);
    assert_memory_equal(l->message_hash, "0x", 2);
  }
  assert_string_equal(l->payload_hash, "");
}

static void on_freed(void *ud) {
  ((tnode_t *)ud)->freed = true;
}

static void stop_node(tnode_t *t) {
  ld_channels_free(t->ch);
  t->ch = NULL;
  if (t->m != NULL) {
    t->freed = false;
    ld_messaging_free(t->m, on_freed, t);
    NH_WAIT_FOR(&g_loop, t->freed, STEP_MS);
    t->m = NULL;
  }
  if (t->node != NULL)
    nh_stop(&g_loop, t->node, STEP_MS);
  t->node = NULL;
}

static ld_sds_stats_t stats_of(const tnode_t *t) {
  ld_sds_stats_t st;
  memset(&st, 0, sizeof st);
  if (t->ch != NULL)
    assert_true(ld_channels_stats(t->ch, CHANNEL, &st));
  return st;
}

/* True once B holds a message in its incoming buffer, waiting for a dependency. Not B's count of
 * missing dependencies: a sync message naming a message that has not reached B yet (its first
 * publish found no relay peer) raises that count before the message the scenario waits for. */
static bool b_holds_a_message(void) {
  return stats_of(&g_b).incoming_len >= 1;
}

/* Runs the scenario of the file's comment against a store whose key-value function is
 * `key_value`. */
static void run_scenario(bool key_value) {
  memset(&g_seen_a, 0, sizeof g_seen_a);
  memset(&g_seen_b, 0, sizeof g_seen_b);
  uv_loop_init(&g_loop);
  start_node(&g_s, true, key_value, NULL);
  char why[256];
  assert_int_equal(ld_messaging_subscribe(g_s.m, CT, why, sizeof why), 0);
  start_node(&g_a, false, false, g_s.node);
  start_node(&g_b, false, false, g_s.node);
  start_channels(&g_a, &g_seen_a);
  start_channels(&g_b, &g_seen_b);

  /* "first": B has no channel yet; it reaches S's archive */
  create(&g_a, "alice");
  send_text(&g_a, "first");
  NH_WAIT_FOR(&g_loop, g_seen_a.n_sent == 1, STEP_MS);
  nh_run_for(&g_loop, 500); /* the archive's write batch */

  /* "second" (retransmitted until B's mesh carries it) leaves B waiting for "first" */
  create(&g_b, "bob");
  send_text(&g_a, "second");
  NH_WAIT_FOR(&g_loop, b_holds_a_message(), STEP_MS);
  assert_int_equal(g_seen_b.n_got, 0);
  /* the sender is gone: nobody can answer B's repair requests */
  ld_channels_free(g_a.ch);
  g_a.ch = NULL;

  if (key_value) {
    NH_WAIT_FOR(&g_loop, g_seen_b.n_got == 2, STEP_MS);
    assert_string_equal(g_seen_b.got[0], "first");
    assert_string_equal(g_seen_b.got[1], "second");
    ld_sds_stats_t st = stats_of(&g_b);
    assert_true(st.fetches >= 1);
    assert_int_equal(st.lost, 0);
  } else {
    NH_WAIT_FOR(&g_loop, stats_of(&g_b).lost == 1, LOST_TIMEOUT_MS + STEP_MS);
    NH_WAIT_FOR(&g_loop, g_seen_b.n_got == 1, STEP_MS);
    assert_string_equal(g_seen_b.got[0], "second");
    assert_true(stats_of(&g_b).fetches >= 1);
    nh_run_for(&g_loop, 500); /* "first" never comes */
    assert_int_equal(g_seen_b.n_got, 1);
    assert_int_equal(g_seen_b.n_lost, 1);
    assert_irretrievable(&g_seen_b.lost[0], true);
  }
  if (key_value)
    assert_int_equal(g_seen_b.n_lost, 0);
  stop_node(&g_b);
  stop_node(&g_a);
  stop_node(&g_s);
  uv_run(&g_loop, UV_RUN_DEFAULT);
  assert_int_equal(uv_loop_close(&g_loop), 0);
}

/* The third scenario of the file's comment. */
static void segment_set_that_never_completes_is_lost(void **state) {
  (void)state;
  memset(&g_seen_a, 0, sizeof g_seen_a);
  memset(&g_seen_b, 0, sizeof g_seen_b);
  uv_loop_init(&g_loop);
  start_node(&g_a, false, false, NULL); /* B dials A: no store, no relay between them */
  start_node(&g_b, false, false, g_a.node);
  start_channels(&g_a, &g_seen_a);
  start_channels(&g_b, &g_seen_b);
  create(&g_a, "alice");
  create(&g_b, "bob");
  send_text(&g_a, "hello"); /* retransmitted until B's mesh carries it */
  NH_WAIT_FOR(&g_loop, g_seen_b.n_got == 1, STEP_MS);

  uint8_t *big = malloc(BIG_LEN);
  assert_non_null(big);
  for (size_t i = 0; i < BIG_LEN; i++)
    big[i] = (uint8_t)(i * 31 + 7);
  uint8_t digest[LD_KECCAK256_LEN];
  ld_keccak256(big, BIG_LEN, digest);
  char want_hash[2 * LD_KECCAK256_LEN + 1];
  ld_hex_encode(digest, sizeof digest, want_hash);
  ld_fanout_set_test_drop_large(90000, 1); /* the first segment, at B */
  send_bytes(&g_a, big, BIG_LEN);
  free(big);
  NH_WAIT_FOR(&g_loop, b_holds_a_message(), STEP_MS); /* the second segment */
  ld_channels_free(g_a.ch);                           /* nobody can repair the first segment */
  g_a.ch = NULL;
  assert_int_equal(ld_fanout_test_loss_dropped(), 1);
  ld_fanout_set_test_drop_large(0, 0);

  NH_WAIT_FOR(&g_loop, g_seen_b.n_lost == 2, LOST_TIMEOUT_MS + REASSEMBLY_TIMEOUT_MS + STEP_MS);
  /* segment 2 was wrapped before segment 1's Waku hash was known: a hint is not required */
  assert_irretrievable(&g_seen_b.lost[0], false);
  const lost_t *set = &g_seen_b.lost[1];
  assert_string_equal(set->reason, LD_CHANNEL_LOST_EXPIRED);
  assert_string_equal(set->payload_hash, want_hash);
  assert_string_equal(set->sender_id, "alice");
  assert_string_equal(set->message_id, "");
  nh_run_for(&g_loop, 500);
  assert_int_equal(g_seen_b.n_got, 1); /* "hello" only */
  assert_int_equal(g_seen_b.n_lost, 2);
  stop_node(&g_b);
  stop_node(&g_a);
  uv_run(&g_loop, UV_RUN_DEFAULT);
  assert_int_equal(uv_loop_close(&g_loop), 0);
}

static void store_fetch_delivers_what_no_peer_repairs(void **state) {
  (void)state;
  run_scenario(true);
}

static void without_key_value_the_dependency_is_lost(void **state) {
  (void)state;
  run_scenario(false);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(store_fetch_delivers_what_no_peer_repairs),
      cmocka_unit_test(without_key_value_the_dependency_is_lost),
      cmocka_unit_test(segment_set_that_never_completes_is_lost),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
