/* What the channel layer writes to its SQLite state per message (channels/channels.h,
 * channels/channel_store.h), on real nodes in one process over loopback: A and B are relay nodes
 * (B dials A), each with a messaging client and a channel manager persisting to its own file.
 * A sends N messages one after the other (each once the one before is sent), B receives them.
 * - A writes each own message's log row once (with its retrieval hint, known when the
 *   MessagingClient took the message), not once without and again with the hint.
 * - B delivers messages it never buffered: no INCOMING row is written, and none is deleted.
 * - A's state restores: a manager created again on A's file resumes the channel with all N
 *   messages in its log and a Lamport clock not behind the one before. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <uv.h>

#include "base/error.h"
#include "channels/channel_store.h"
#include "channels/channels.h"
#include "messaging/messaging.h"
#include "node/broker.h"
#include "node/node.h"
#include "node_harness.h"

#define STEP_MS 30000
#define CT "/writes/1/channel/proto"
#define CHANNEL "writes-room"
#define N 12

typedef struct tnode {
  ld_node_t *node;
  ld_messaging_t *m;
  ld_channels_t *ch;
  bool freed;
  size_t n_got, n_sent;
} tnode_t;

static uv_loop_t g_loop;
static tnode_t g_a, g_b;
static char g_dir[64];

static void on_received(int kind, const void *payload, void *ud) {
  (void)kind, (void)payload;
  ((tnode_t *)ud)->n_got++;
}

static void on_sent(int kind, const void *payload, void *ud) {
  (void)kind, (void)payload;
  ((tnode_t *)ud)->n_sent++;
}

static void start_node(tnode_t *t, const ld_node_t *peer) {
  ld_node_config_t *cfg = nh_config();
  if (peer != NULL)
    nh_add_static(cfg, (ld_node_t *)peer);
  t->node = nh_start(&g_loop, cfg);
  ld_messaging_config_t mc;
  ld_messaging_config_default(&mc);
  mc.reliability = false;
  int rc = 0;
  t->m = ld_messaging_new(t->node, &mc, &rc);
  assert_non_null(t->m);
  ld_broker_t *b = ld_node_broker(t->node);
  assert_true(ld_broker_subscribe(b, LD_EVENT_CHANNEL_RECEIVED, on_received, t) > 0);
  assert_true(ld_broker_subscribe(b, LD_EVENT_CHANNEL_SENT, on_sent, t) > 0);
}

static void start_channels(tnode_t *t, const char *name, const char *sender) {
  ld_channels_config_t cc;
  ld_channels_config_default(&cc);
  snprintf(cc.state_path, sizeof cc.state_path, "%s/%s/%s", g_dir, name, LD_CHANNEL_STORE_FILE);
  int rc = 0;
  t->ch = ld_channels_new(&g_loop, t->m, &cc, &rc);
  assert_non_null(t->ch);
  char why[256] = "";
  rc = ld_channels_create(t->ch, CHANNEL, CT, sender, why, sizeof why);
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
  t->freed = false;
  ld_messaging_free(t->m, on_freed, t);
  NH_WAIT_FOR(&g_loop, t->freed, STEP_MS);
  nh_stop(&g_loop, t->node, STEP_MS);
}

static void own_log_rows_are_written_once_and_unbuffered_deliveries_write_nothing(void **state) {
  (void)state;
  snprintf(g_dir, sizeof g_dir, "/tmp/ld_channel_writes_XXXXXX");
  assert_non_null(mkdtemp(g_dir));
  uv_loop_init(&g_loop);
  start_node(&g_a, NULL);
  start_node(&g_b, g_a.node);
  start_channels(&g_a, "a", "alice");
  start_channels(&g_b, "b", "bob");
  send_text(&g_a, "warm-up"); /* retransmitted until B's mesh carries it */
  NH_WAIT_FOR(&g_loop, g_b.n_got == 1 && g_a.n_sent == 1, STEP_MS);
  ld_channel_store_counts_t a0, b0, a1, b1;
  ld_channels_store_counts(g_a.ch, &a0);
  ld_channels_store_counts(g_b.ch, &b0);
  for (size_t i = 0; i < N; i++) {
    char text[32];
    snprintf(text, sizeof text, "message %zu", i);
    send_text(&g_a, text);
    NH_WAIT_FOR(&g_loop, g_a.n_sent == i + 2 && g_b.n_got == i + 2, STEP_MS);
  }
  ld_channels_store_counts(g_a.ch, &a1);
  ld_channels_store_counts(g_b.ch, &b1);
  assert_int_equal(a1.puts[LD_CHANNEL_RECORD_LOG] - a0.puts[LD_CHANNEL_RECORD_LOG], N);
  assert_int_equal(a1.puts[LD_CHANNEL_RECORD_OUTGOING] - a0.puts[LD_CHANNEL_RECORD_OUTGOING], N);
  assert_int_equal(b1.puts[LD_CHANNEL_RECORD_LOG] - b0.puts[LD_CHANNEL_RECORD_LOG], N);
  assert_int_equal(b1.puts[LD_CHANNEL_RECORD_INCOMING], 0);
  assert_int_equal(b1.deletes[LD_CHANNEL_RECORD_INCOMING], 0);

  /* A's manager again on its file: every message is in the restored log */
  ld_sds_stats_t before;
  assert_true(ld_channels_stats(g_a.ch, CHANNEL, &before));
  ld_channels_free(g_a.ch);
  start_channels(&g_a, "a", "alice");
  ld_sds_stats_t after;
  assert_true(ld_channels_stats(g_a.ch, CHANNEL, &after));
  assert_int_equal(after.log_len, N + 1);
  assert_true(after.lamport >= before.lamport);

  stop_node(&g_b);
  stop_node(&g_a);
  uv_run(&g_loop, UV_RUN_DEFAULT);
  assert_int_equal(uv_loop_close(&g_loop), 0);
  char cmd[128];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", g_dir);
  assert_int_equal(system(cmd), 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(own_log_rows_are_written_once_and_unbuffered_deliveries_write_nothing),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
