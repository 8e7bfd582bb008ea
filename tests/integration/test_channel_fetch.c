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
 *   lost and delivers "second" alone. */
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
#include "messaging/messaging.h"
#include "node/broker.h"
#include "node/node.h"
#include "node_harness.h"

#define STEP_MS 30000
#define CT "/fetch/1/channel/proto"
#define CHANNEL "fetch-room"
#define LOST_TIMEOUT_MS 6000
#define MAX_GOT 8

typedef struct tnode {
  ld_node_t *node;
  ld_messaging_t *m;
  ld_channels_t *ch;
  bool freed;
} tnode_t;

typedef struct seen {
  char got[MAX_GOT][32]; /* payloads received in order */
  size_t n_got;
  size_t n_sent;
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
  int rc = 0;
  t->ch = ld_channels_new(&g_loop, t->m, &cc, &rc);
  assert_non_null(t->ch);
  ld_broker_t *b = ld_node_broker(t->node);
  assert_true(ld_broker_subscribe(b, LD_EVENT_CHANNEL_RECEIVED, on_received, seen) > 0);
  assert_true(ld_broker_subscribe(b, LD_EVENT_CHANNEL_SENT, on_sent, seen) > 0);
}

static void create(tnode_t *t, const char *sender) {
  char why[256] = "";
  int rc = ld_channels_create(t->ch, CHANNEL, CT, sender, why, sizeof why);
  if (rc != 0)
    fail_msg("create: %s", why);
}

static void send_text(tnode_t *t, const char *text) {
  char why[256] = "", id[LD_CHANNEL_REQUEST_ID_LEN + 1];
  int rc = ld_channels_send(t->ch, CHANNEL, (const uint8_t *)text, strlen(text), false, id, why,
                            sizeof why);
  if (rc != 0)
    fail_msg("send: %s", why);
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
  NH_WAIT_FOR(&g_loop, stats_of(&g_b).missing >= 1, STEP_MS);
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
  }
  stop_node(&g_b);
  stop_node(&g_a);
  stop_node(&g_s);
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
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
