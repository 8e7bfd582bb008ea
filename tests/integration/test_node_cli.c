/* `logosdelivery send` and `logosdelivery subscribe` (the program from $LD_BIN, as child
 * processes) against a relay node running in this process: the hash `send` prints is the hash
 * the node received and the one `subscribe` prints; static and autosharded topics, given by
 * flags or learnt from the node (its cluster and shards); the exit codes of an unreachable peer,
 * a wrong peer ID, another cluster, shards that tell no shard count and bad usage. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <jansson.h>
#include <uv.h>

#include "base/clock.h"
#include "child_harness.h"
#include "base/error.h"
#include "node/events.h"
#include "node/node.h"
#include "waku/core/sharding.h"
#include "node_harness.h"

#define STEP_MS 30000
#define CONTENT_TOPIC "/cli/1/chat/proto"

static uv_loop_t g_loop;
static const char *g_bin;

#define WAIT_FOR(cond) NH_WAIT_FOR(&g_loop, cond, STEP_MS)

/* ---- the node -------------------------------------------------------------------------------- */

typedef struct received {
  int count;
  char hash[LD_WAKU_HASH_HEX_LEN + 1];
  char topic[64];
} received_t;

static void on_message(int kind, const void *payload, void *ud) {
  (void)kind;
  const ld_fanout_message_t *m = payload;
  received_t *r = ud;
  r->count++;
  ld_waku_hash_to_hex(m->hash, r->hash);
  snprintf(r->topic, sizeof r->topic, "%s", m->pubsub_topic);
}

static ld_node_t *start_node(uint16_t cluster, uint16_t num_shards, const char *shard,
                             received_t *r, char *addr, size_t cap) {
  ld_node_config_t *cfg = malloc(sizeof *cfg);
  char err[256];
  ld_node_config_default(cfg);
  assert_int_equal(ld_node_config_set_listen(cfg, "127.0.0.1", 0, 0, err, sizeof err), 0);
  cfg->cluster_id = cluster;
  cfg->num_shards_in_network = num_shards;
  if (shard != NULL)
    assert_int_equal(ld_node_config_add_shard(cfg, shard, err, sizeof err), 0);
  ld_node_t *n = nh_start_subscribed(&g_loop, cfg, LD_EVENT_MESSAGE, on_message, r);
  nh_only_addr_text(n, addr, cap);
  return n;
}

static void stop_node(ld_node_t *n) {
  nh_stop(&g_loop, n, STEP_MS);
}

static void trim(char *s) {
  size_t n = strlen(s);
  while (n > 0 && (s[n - 1] == '\n' || s[n - 1] == '\r'))
    s[--n] = '\0';
}

/* ---- tests ----------------------------------------------------------------------------------- */

static void send_and_subscribe_agree_on_the_hash(void **state) {
  (void)state;
  received_t r = {0};
  char addr[LD_MULTIADDR_TEXT_MAX];
  ld_node_t *n = start_node(0, 0, NULL, &r, addr, sizeof addr); /* shards 0..7 of cluster 0 */

  const char *sub_args[] = {"subscribe",   "--peer",  addr, "--content-topic",
                            CONTENT_TOPIC, "--count", "1",  "--timeout",
                            "25",          NULL};
  ch_child_t *sub = ch_spawn(&g_loop, g_bin, sub_args);
  /* the subscriber is in the topic before the sender publishes */
  WAIT_FOR(strstr(sub->stderr_buf, "subscribe: receiving") != NULL);

  const char *send_args[] = {
      "send", "--peer", addr, "--content-topic", CONTENT_TOPIC, "hello from the command line",
      NULL};
  ch_child_t *snd = ch_spawn(&g_loop, g_bin, send_args);
  ch_expect_success(snd, STEP_MS);
  trim(snd->stdout_buf);
  assert_int_equal(strlen(snd->stdout_buf), LD_WAKU_HASH_HEX_LEN);
  assert_memory_equal(snd->stdout_buf, "0x", 2);

  WAIT_FOR(r.count == 1);
  assert_string_equal(r.hash, snd->stdout_buf);
  char topic[64]; /* the node serves shards 0..7: autosharding over 8 */
  ld_relay_shard_t shard;
  assert_int_equal(ld_autoshard(CONTENT_TOPIC, strlen(CONTENT_TOPIC), 8, 0, &shard, NULL), 0);
  ld_pubsub_topic_format(shard, topic, sizeof topic);
  assert_string_equal(r.topic, topic);
  char says[256];
  snprintf(says, sizeof says,
           "send: pubsub topic %s (autosharding of " CONTENT_TOPIC
           " over 8 shards in cluster 0: the peer serves shards 0..7)",
           topic);
  if (strstr(snd->stderr_buf, says) == NULL)
    fail_msg("no '%s' in '%s'", says, snd->stderr_buf);

  ch_expect_success(sub, STEP_MS);
  json_error_t jerr;
  json_t *line = json_loads(sub->stdout_buf, JSON_DISABLE_EOF_CHECK, &jerr);
  assert_non_null(line);
  assert_string_equal(json_string_value(json_object_get(line, "hash")), snd->stdout_buf);
  assert_string_equal(json_string_value(json_object_get(line, "text")),
                      "hello from the command line");
  assert_string_equal(json_string_value(json_object_get(line, "payload")),
                      "aGVsbG8gZnJvbSB0aGUgY29tbWFuZCBsaW5l");
  assert_string_equal(json_string_value(json_object_get(line, "contentTopic")), CONTENT_TOPIC);
  assert_string_equal(json_string_value(json_object_get(line, "pubsubTopic")), topic);
  assert_true(json_integer_value(json_object_get(line, "timestamp")) > 0);
  json_decref(line);
  free(sub);
  free(snd);
  stop_node(n);
}

static void autosharding_and_static_topics_reach_the_right_shard(void **state) {
  (void)state;
  received_t r = {0};
  char addr[LD_MULTIADDR_TEXT_MAX];
  ld_relay_shard_t shard;
  assert_int_equal(ld_autoshard(CONTENT_TOPIC, strlen(CONTENT_TOPIC), 8, 2, &shard, NULL), 0);
  ld_node_t *n = start_node(2, 8, NULL, &r, addr, sizeof addr); /* autosharding: all 8 shards */
  const char *auto_args[] = {"send",        "--peer",       addr, "--content-topic",
                             CONTENT_TOPIC, "--cluster-id", "2",  "--num-shards-in-network",
                             "8",           "auto",         NULL};
  ch_child_t *c = ch_spawn(&g_loop, g_bin, auto_args);
  ch_expect_success(c, STEP_MS);
  WAIT_FOR(r.count == 1);
  char expect[64];
  snprintf(expect, sizeof expect, "/waku/2/rs/2/%u", shard.shard_id);
  assert_string_equal(r.topic, expect);
  free(c);

  const char *static_args[] = {
      "send",           "--peer", addr,   "--content-topic", CONTENT_TOPIC, "--pubsub-topic",
      "/waku/2/rs/2/5", "--meta", "0102", "static",          NULL};
  c = ch_spawn(&g_loop, g_bin, static_args);
  ch_expect_success(c, STEP_MS);
  WAIT_FOR(r.count == 2);
  assert_string_equal(r.topic, "/waku/2/rs/2/5");
  free(c);

  /* without flags: the peer's cluster and shard count, learnt from its metadata (the first
   * connection, in cluster 0, is refused; the command connects again in cluster 2) */
  const char *learnt_args[] = {"send",        "--peer", addr, "--content-topic",
                               CONTENT_TOPIC, "learnt", NULL};
  c = ch_spawn(&g_loop, g_bin, learnt_args);
  ch_expect_success(c, STEP_MS);
  WAIT_FOR(r.count == 3);
  snprintf(expect, sizeof expect, "/waku/2/rs/2/%u", shard.shard_id);
  assert_string_equal(r.topic, expect);
  char says[256];
  snprintf(says, sizeof says,
           "send: pubsub topic %s (autosharding of " CONTENT_TOPIC
           " over 8 shards in cluster 2: the peer serves shards 0..7)",
           expect);
  if (strstr(c->stderr_buf, says) == NULL)
    fail_msg("no '%s' in '%s'", says, c->stderr_buf);
  free(c);
  stop_node(n);
}

static void shards_that_tell_no_shard_count_are_named(void **state) {
  (void)state;
  received_t r = {0};
  char addr[LD_MULTIADDR_TEXT_MAX];
  ld_node_t *n = start_node(0, 0, "3", &r, addr, sizeof addr); /* static sharding: shard 3 */
  const char *args[] = {"send", "--peer", addr, "--content-topic", CONTENT_TOPIC, "x", NULL};
  ch_child_t *c = ch_spawn(&g_loop, g_bin, args);
  int64_t status = ch_finish(c, STEP_MS);
  const char *needle = "send: the peer serves shards 3 of cluster 0, which tell no autosharding "
                       "shard count: give --num-shards-in-network or --pubsub-topic";
  if (status != 1 || strstr(c->stderr_buf, needle) == NULL)
    fail_msg("exit %lld, stderr '%s'", (long long)status, c->stderr_buf);
  free(c);
  const char *given[] = {
      "send",           "--peer", addr, "--content-topic", CONTENT_TOPIC, "--pubsub-topic",
      "/waku/2/rs/0/3", "y",      NULL};
  c = ch_spawn(&g_loop, g_bin, given);
  ch_expect_success(c, STEP_MS);
  WAIT_FOR(r.count == 1);
  assert_string_equal(r.topic, "/waku/2/rs/0/3");
  free(c);
  stop_node(n);
}

static void failures_have_clear_exit_codes(void **state) {
  (void)state;
  received_t r = {0};
  char addr[LD_MULTIADDR_TEXT_MAX];
  ld_node_t *n = start_node(0, 0, "0", &r, addr, sizeof addr);
  char wrong_id[LD_MULTIADDR_TEXT_MAX];
  snprintf(wrong_id, sizeof wrong_id,
           "%.*s/p2p/16Uiu2HAkx3GoZmXmHbBcphAVJAU6gDuFWWLyBgAaEpyPzbZqccLQ",
           (int)(strstr(addr, "/p2p/") - addr), addr);
  struct {
    const char *args[16];
    int64_t status;
    const char *needle;
  } cases[] = {
      {{"send", "--peer",
        "/ip4/127.0.0.1/tcp/1/p2p/16Uiu2HAkx3GoZmXmHbBcphAVJAU6gDuFWWLyBgAaEpyPzbZqccLQ",
        "--content-topic", CONTENT_TOPIC, "x", NULL},
       2,
       "cannot reach"},
      {{"send", "--peer", wrong_id, "--content-topic", CONTENT_TOPIC, "x", NULL},
       3,
       "PEER_ID_MISMATCH"},
      {{"send", "--peer", addr, "--content-topic", CONTENT_TOPIC, "--cluster-id", "9", "x", NULL},
       2,
       "CLUSTER_MISMATCH"},
      {{"send", "--peer", addr, "--content-topic", CONTENT_TOPIC, "--pubsub-topic",
        "/waku/2/rs/0/6", "--timeout", "1", "x", NULL},
       5,
       "timed out"},
      {{"send", "--peer", addr, "--content-topic", "bad-topic", "x", NULL}, 1, "--content-topic"},
      {{"send", "--peer", "/ip4/127.0.0.1/tcp/1", "--content-topic", CONTENT_TOPIC, "x", NULL},
       1,
       "must end with /p2p/"},
      {{"send", "--peer", addr, "--content-topic", CONTENT_TOPIC, NULL}, 1, "usage"},
      {{"send", "--content-topic", CONTENT_TOPIC, "x", NULL}, 1, "--peer and --content-topic"},
      {{"send", "--peer", addr, "--content-topic", CONTENT_TOPIC, "--pubsub-topic",
        "/waku/2/rs/1/0", "--cluster-id", "0", "x", NULL},
       1,
       "not in --cluster-id 0"},
      {{"subscribe", "--peer", addr, "--content-topic", CONTENT_TOPIC, "extra", NULL},
       1,
       "unexpected argument"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    ch_child_t *c = ch_spawn(&g_loop, g_bin, cases[i].args);
    int64_t status = ch_finish(c, STEP_MS);
    if (status != cases[i].status || strstr(c->stderr_buf, cases[i].needle) == NULL)
      fail_msg("case %zu: exit %lld, stderr '%s'", i, (long long)status, c->stderr_buf);
    free(c);
  }
  assert_int_equal(r.count, 0);
  stop_node(n);
}

static int setup(void **state) {
  (void)state;
  g_bin = getenv("LD_BIN");
  if (g_bin == NULL)
    return -1;
  uv_loop_init(&g_loop);
  return 0;
}

static int teardown(void **state) {
  (void)state;
  uint64_t end = ld_now_ms() + 50;
  while (ld_now_ms() < end)
    nh_pump(&g_loop);
  return uv_loop_close(&g_loop) == 0 ? 0 : -1;
}

int main(void) {
  if (!ch_program_ready())
    return 0;
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(send_and_subscribe_agree_on_the_hash),
      cmocka_unit_test(autosharding_and_static_topics_reach_the_right_shard),
      cmocka_unit_test(shards_that_tell_no_shard_count_are_named),
      cmocka_unit_test(failures_have_clear_exit_codes),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
