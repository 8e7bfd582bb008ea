#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "base/error.h"
#include "messaging/recv_service.h"
#include "waku/core/sharding.h"

#define T0 1700000000000ull /* a wall-clock instant, ms */
#define SEC 1000ull
#define MINUTE (60ull * SEC)
#define CHAT "/app/1/chat/proto"
#define CHAT_SHARD "/waku/2/rs/1/0" /* where CHAT lives with one shard in cluster 1 */

static ld_recv_t *new_core(uint32_t num_shards, uint32_t window_ms, size_t max_seen) {
  ld_recv_config_t cfg;
  ld_recv_config_default(&cfg);
  cfg.cluster_id = 1;
  cfg.num_shards = num_shards;
  cfg.static_shard = 5;
  cfg.dedup_window_ms = window_ms;
  cfg.max_seen = max_seen;
  ld_recv_t *r = ld_recv_new(&cfg, T0);
  assert_non_null(r);
  return r;
}

/* A core over one shard, subscribed to CHAT. */
static ld_recv_t *new_chat(uint32_t window_ms, size_t max_seen) {
  ld_recv_t *r = new_core(1, window_ms, max_seen);
  assert_int_equal(ld_recv_subscribe(r, CHAT, NULL), 0);
  return r;
}

static ld_waku_message_t message(const char *content_topic, uint64_t ts_ms) {
  ld_waku_message_t m;
  ld_waku_message_init(&m);
  m.content_topic = content_topic;
  m.content_topic_len = strlen(content_topic);
  m.timestamp = (int64_t)(ts_ms * 1000000ull);
  return m;
}

static void hash_of(uint8_t h[LD_WAKU_HASH_LEN], unsigned n) {
  memset(h, 0, LD_WAKU_HASH_LEN);
  h[0] = (uint8_t)n;
  h[1] = (uint8_t)(n >> 8);
  h[31] = 0xAA;
}

static void shard_text(const char *content_topic, uint32_t num_shards, char *out) {
  assert_true(ld_autoshard_pubsub_topic(content_topic, strlen(content_topic), num_shards, 1, out,
                                        LD_WAKU_PUBSUB_TOPIC_MAX_LEN + 1, NULL) > 0);
}

/* Two content topics that autoshard to different shards among 8, and those shards. */
static void two_shards(char a[64], char b[64], char sa[32], char sb[32]) {
  snprintf(a, 64, "/app0/1/chat/proto");
  shard_text(a, 8, sa);
  for (int i = 1; i < 100; i++) {
    snprintf(b, 64, "/app%d/1/chat/proto", i);
    shard_text(b, 8, sb);
    if (strcmp(sa, sb) != 0)
      return;
  }
  fail_msg("no two shards");
}

/* ---- subscriptions -------------------------------------------------------------------------- */

static void subscriptions_map_topics_to_shards(void **state) {
  (void)state;
  ld_recv_t *r = new_core(8, 0, 0);
  char a[64], b[64], sa[32], sb[32];
  two_shards(a, b, sa, sb);

  ld_recv_change_t ch;
  assert_int_equal(ld_recv_subscribe(r, a, &ch), 0);
  assert_true(ch.changed);
  assert_true(ch.shard_edge);
  assert_string_equal(ch.pubsub_topic, sa);
  assert_int_equal(ld_recv_subscribe(r, a, &ch), 0);
  assert_false(ch.changed);
  assert_false(ch.shard_edge);
  /* Same application and version: same shard, not the first topic on it. */
  assert_int_equal(ld_recv_subscribe(r, "/app0/1/other/proto", &ch), 0);
  assert_true(ch.changed);
  assert_false(ch.shard_edge);
  assert_int_equal(ld_recv_subscribe(r, b, &ch), 0);
  assert_true(ch.shard_edge);
  assert_string_equal(ch.pubsub_topic, sb);

  const char *shards[4];
  assert_int_equal(ld_recv_shards(r, shards, 4), 2);
  assert_string_equal(shards[0], sa);
  assert_string_equal(shards[1], sb);
  const char *topics[4];
  assert_int_equal(ld_recv_shard_topics(r, sa, topics, 4), 2);
  assert_string_equal(topics[0], a);
  assert_string_equal(topics[1], "/app0/1/other/proto");
  assert_int_equal(ld_recv_topic_count(r), 3);

  assert_int_equal(ld_recv_unsubscribe(r, a, &ch), 0);
  assert_false(ch.shard_edge);
  assert_int_equal(ld_recv_unsubscribe(r, "/app0/1/other/proto", &ch), 0);
  assert_true(ch.shard_edge);
  assert_string_equal(ch.pubsub_topic, sa);
  assert_int_equal(ld_recv_unsubscribe(r, a, &ch), LD_ERR_NOT_FOUND);
  assert_false(ld_recv_subscribed(r, a));
  assert_true(ld_recv_subscribed(r, b));
  assert_int_equal(ld_recv_shards(r, NULL, 0), 1);
  ld_recv_free(r);
}

static void bad_topics_and_limits(void **state) {
  (void)state;
  ld_recv_config_t cfg;
  ld_recv_config_default(&cfg);
  cfg.max_topics = 2;
  ld_recv_t *r = ld_recv_new(&cfg, T0);
  assert_non_null(r);
  ld_topic_error_t why = LD_TOPIC_OK;
  char out[LD_WAKU_PUBSUB_TOPIC_MAX_LEN + 1];
  assert_int_equal(ld_recv_shard_of(r, "no-slash", out, &why), LD_ERR_BAD_CONTENT_TOPIC);
  assert_int_equal(why, LD_TOPIC_ERR_NO_LEADING_SLASH);
  assert_int_equal(ld_recv_subscribe(r, "/a/b/c", NULL), LD_ERR_BAD_CONTENT_TOPIC);
  assert_int_equal(ld_recv_subscribe(r, "/1/app/1/name/proto", NULL), LD_ERR_UNSUPPORTED);
  char longer[LD_RECV_CONTENT_TOPIC_MAX + 16];
  memset(longer, 'x', sizeof longer - 1);
  longer[0] = '/';
  longer[sizeof longer - 1] = '\0';
  assert_int_equal(ld_recv_subscribe(r, longer, NULL), LD_ERR_BAD_CONTENT_TOPIC);
  assert_int_equal(ld_recv_subscribe(r, "/x/1/a/proto", NULL), 0);
  assert_int_equal(ld_recv_subscribe(r, "/x/1/b/proto", NULL), 0);
  assert_int_equal(ld_recv_subscribe(r, "/x/1/c/proto", NULL), LD_ERR_LIMIT);
  assert_int_equal(ld_recv_subscribe(r, "/x/1/a/proto", NULL), 0); /* already: no limit */
  assert_int_equal(ld_recv_topic_count(r), 2);
  ld_recv_free(r);
}

static void static_sharding_uses_the_node_shard(void **state) {
  (void)state;
  ld_recv_t *r = new_core(0, 0, 0);
  ld_recv_change_t ch;
  assert_int_equal(ld_recv_subscribe(r, "/app/1/a/proto", &ch), 0);
  assert_string_equal(ch.pubsub_topic, "/waku/2/rs/1/5");
  /* Generations are fine with static sharding. */
  assert_int_equal(ld_recv_subscribe(r, "/2/app/1/a/proto", &ch), 0);
  assert_string_equal(ch.pubsub_topic, "/waku/2/rs/1/5");
  ld_waku_message_t m = message("/2/app/1/a/proto", T0);
  uint8_t h[LD_WAKU_HASH_LEN];
  hash_of(h, 1);
  assert_int_equal(ld_recv_seen(r, "/waku/2/rs/1/5", &m, h, T0), LD_RECV_DELIVER);
  ld_recv_free(r);
}

/* ---- delivery ------------------------------------------------------------------------------- */

static void unsubscribed_topics_and_other_shards_are_dropped(void **state) {
  (void)state;
  ld_recv_t *r = new_core(8, 0, 0);
  char a[64], b[64], sa[32], sb[32];
  two_shards(a, b, sa, sb);
  assert_int_equal(ld_recv_subscribe(r, a, NULL), 0);
  uint8_t h[LD_WAKU_HASH_LEN];
  hash_of(h, 1);
  ld_waku_message_t other = message(b, T0);
  assert_int_equal(ld_recv_seen(r, sb, &other, h, T0), LD_RECV_NOT_SUBSCRIBED);
  /* The subscribed topic on a shard it does not live on. */
  ld_waku_message_t m = message(a, T0);
  assert_int_equal(ld_recv_seen(r, sb, &m, h, T0), LD_RECV_NOT_SUBSCRIBED);
  assert_int_equal(ld_recv_seen_count(r), 0);
  assert_int_equal(ld_recv_seen(r, sa, &m, h, T0), LD_RECV_DELIVER);
  /* A prefix of the topic is another topic. */
  ld_waku_message_t prefix = message(a, T0);
  prefix.content_topic_len -= 1;
  hash_of(h, 2);
  assert_int_equal(ld_recv_seen(r, sa, &prefix, h, T0), LD_RECV_NOT_SUBSCRIBED);
  /* After unsubscribing, the topic is dropped. */
  assert_int_equal(ld_recv_unsubscribe(r, a, NULL), 0);
  hash_of(h, 3);
  assert_int_equal(ld_recv_seen(r, sa, &m, h, T0), LD_RECV_NOT_SUBSCRIBED);
  ld_recv_free(r);
}

static void duplicates_are_dropped(void **state) {
  (void)state;
  ld_recv_t *r = new_chat(0, 0);
  const char *topic = CHAT, *ps = CHAT_SHARD;
  ld_waku_message_t m = message(topic, T0);
  uint8_t h1[LD_WAKU_HASH_LEN], h2[LD_WAKU_HASH_LEN];
  hash_of(h1, 1);
  hash_of(h2, 2);
  assert_false(ld_recv_known(r, h1));
  assert_int_equal(ld_recv_seen(r, ps, &m, h1, T0), LD_RECV_DELIVER);
  assert_true(ld_recv_known(r, h1));
  assert_int_equal(ld_recv_seen(r, ps, &m, h1, T0 + SEC), LD_RECV_DUPLICATE);
  assert_int_equal(ld_recv_seen(r, ps, &m, h2, T0 + SEC), LD_RECV_DELIVER);
  assert_int_equal(ld_recv_seen(r, ps, &m, h2, T0 + 2 * SEC), LD_RECV_DUPLICATE);
  assert_int_equal(ld_recv_seen_count(r), 2);
  ld_recv_free(r);
}

static void window_expiry_follows_the_message_timestamp_and_prunes_each_minute(void **state) {
  (void)state;
  ld_recv_t *r = new_chat(10 * SEC, 0);
  const char *topic = CHAT, *ps = CHAT_SHARD;
  uint8_t fresh[LD_WAKU_HASH_LEN], old[LD_WAKU_HASH_LEN], unset[LD_WAKU_HASH_LEN];
  hash_of(fresh, 1);
  hash_of(old, 2);
  hash_of(unset, 3);
  ld_waku_message_t m_fresh = message(topic, T0 + 55 * SEC);
  ld_waku_message_t m_old = message(topic, T0 - 5 * MINUTE); /* stamped long ago */
  ld_waku_message_t m_unset = message(topic, 0);             /* no timestamp: arrival time */
  assert_int_equal(ld_recv_seen(r, ps, &m_old, old, T0), LD_RECV_DELIVER);
  assert_int_equal(ld_recv_seen(r, ps, &m_unset, unset, T0 + 40 * SEC), LD_RECV_DELIVER);
  assert_int_equal(ld_recv_seen(r, ps, &m_fresh, fresh, T0 + 55 * SEC), LD_RECV_DELIVER);
  /* Older than the window, but no pruning before a minute has passed. */
  assert_int_equal(ld_recv_seen(r, ps, &m_old, old, T0 + 59 * SEC), LD_RECV_DUPLICATE);
  assert_int_equal(ld_recv_tick(r, T0 + 59 * SEC), 0);
  /* The pruning at one minute removes what is older than now − 10 s by its own timestamp. */
  assert_int_equal(ld_recv_tick(r, T0 + MINUTE), 2);
  assert_false(ld_recv_known(r, old));
  assert_false(ld_recv_known(r, unset));
  assert_true(ld_recv_known(r, fresh));
  assert_int_equal(ld_recv_tick(r, T0 + MINUTE + 30 * SEC), 0); /* not due again yet */
  /* The next pruning comes with a message, a minute after the last. */
  assert_int_equal(ld_recv_seen(r, ps, &m_old, old, T0 + 2 * MINUTE), LD_RECV_DELIVER);
  assert_false(ld_recv_known(r, fresh));
  assert_int_equal(ld_recv_seen_count(r), 1);
  ld_recv_free(r);
}

static void default_window_is_seven_minutes(void **state) {
  (void)state;
  ld_recv_t *r = new_chat(0, 0);
  const char *topic = CHAT, *ps = CHAT_SHARD;
  uint8_t h[LD_WAKU_HASH_LEN];
  hash_of(h, 1);
  ld_waku_message_t m = message(topic, T0);
  assert_int_equal(ld_recv_seen(r, ps, &m, h, T0), LD_RECV_DELIVER);
  assert_int_equal(ld_recv_seen(r, ps, &m, h, T0 + 7 * MINUTE), LD_RECV_DUPLICATE);
  assert_int_equal(ld_recv_seen(r, ps, &m, h, T0 + 8 * MINUTE), LD_RECV_DELIVER);
  ld_recv_free(r);
}

static void remembered_hashes_are_bounded(void **state) {
  (void)state;
  ld_recv_t *r = new_chat(0, 3);
  const char *topic = CHAT, *ps = CHAT_SHARD;
  ld_waku_message_t m = message(topic, T0);
  uint8_t h[5][LD_WAKU_HASH_LEN];
  for (unsigned i = 0; i < 5; i++) {
    hash_of(h[i], i + 1);
    assert_int_equal(ld_recv_seen(r, ps, &m, h[i], T0), LD_RECV_DELIVER);
    assert_true(ld_recv_seen_count(r) <= 3);
  }
  assert_false(ld_recv_known(r, h[0]));
  assert_false(ld_recv_known(r, h[1]));
  assert_true(ld_recv_known(r, h[2]));
  assert_true(ld_recv_known(r, h[4]));
  assert_int_equal(ld_recv_seen(r, ps, &m, h[0], T0), LD_RECV_DELIVER);
  ld_recv_free(r);
}

/* ---- recovery ------------------------------------------------------------------------------- */

static void check_range(const ld_recv_range_t *rg, const char *pubsub, const char *const *topics,
                        size_t n, uint64_t start, uint64_t end) {
  assert_string_equal(rg->pubsub_topic, pubsub);
  assert_int_equal(rg->n_content_topics, n);
  for (size_t i = 0; i < n; i++)
    assert_string_equal(rg->content_topics[i], topics[i]);
  assert_int_equal(rg->start_ms, start);
  assert_int_equal(rg->end_ms, end);
}

static void backfill_ranges_after_an_offline_period(void **state) {
  (void)state;
  ld_recv_t *r = new_core(8, 0, 0);
  char a[64], b[64], sa[32], sb[32];
  two_shards(a, b, sa, sb);
  assert_int_equal(ld_recv_subscribe(r, a, NULL), 0);
  assert_int_equal(ld_recv_subscribe(r, b, NULL), 0);
  assert_int_equal(ld_recv_subscribe(r, "/app0/1/more/proto", NULL), 0);

  /* Offline from creation: nothing while offline. */
  assert_null(ld_recv_recovery_poll(r, T0 + SEC));
  assert_true(ld_recv_set_status(r, LD_CONNECTION_PARTIALLY_CONNECTED, T0 + 2 * SEC));
  /* Partially → Connected is no edge. */
  assert_false(ld_recv_set_status(r, LD_CONNECTION_CONNECTED, T0 + 2 * SEC));
  const ld_recv_recovery_t *rec = ld_recv_recovery_poll(r, T0 + 2 * SEC);
  assert_non_null(rec);
  assert_int_equal(rec->n_ranges, 2);
  assert_int_equal(rec->start_ms, T0 - 5 * SEC);
  assert_int_equal(rec->end_ms, T0 + 7 * SEC);
  const char *ta[] = {a, "/app0/1/more/proto"};
  const char *tb[] = {b};
  check_range(&rec->ranges[0], sa, ta, 2, T0 - 5 * SEC, T0 + 7 * SEC);
  check_range(&rec->ranges[1], sb, tb, 1, T0 - 5 * SEC, T0 + 7 * SEC);
  /* One in flight at a time. */
  assert_true(ld_recv_recovery_in_flight(r));
  assert_null(ld_recv_recovery_poll(r, T0 + 3 * SEC));
  /* The recovery's pointers survive changes of the subscriptions. */
  assert_int_equal(ld_recv_unsubscribe(r, "/app0/1/more/proto", NULL), 0);
  check_range(&rec->ranges[0], sa, ta, 2, T0 - 5 * SEC, T0 + 7 * SEC);
  ld_recv_recovery_done(r, rec, true, T0 + 4 * SEC);
  assert_false(ld_recv_recovery_in_flight(r));
  assert_int_equal(ld_recv_recovery_start(r), T0 + 7 * SEC);
  assert_null(ld_recv_recovery_poll(r, T0 + 5 * SEC)); /* nothing due */

  /* Offline at 30 s, back at 40 s: [25 s, 45 s]; then the start moves to its end. */
  assert_false(ld_recv_set_status(r, LD_CONNECTION_DISCONNECTED, T0 + 30 * SEC));
  assert_int_equal(ld_recv_recovery_start(r), T0 + 30 * SEC);
  assert_null(ld_recv_recovery_poll(r, T0 + 35 * SEC));
  assert_true(ld_recv_set_status(r, LD_CONNECTION_CONNECTED, T0 + 40 * SEC));
  rec = ld_recv_recovery_poll(r, T0 + 40 * SEC);
  assert_non_null(rec);
  assert_int_equal(rec->n_ranges, 2);
  check_range(&rec->ranges[0], sa, ta, 1, T0 + 25 * SEC, T0 + 45 * SEC);
  check_range(&rec->ranges[1], sb, tb, 1, T0 + 25 * SEC, T0 + 45 * SEC);
  ld_recv_recovery_done(r, rec, true, T0 + 41 * SEC);
  assert_int_equal(ld_recv_recovery_start(r), T0 + 45 * SEC);
  ld_recv_free(r);
}

/* A core on CHAT that comes online at `now`: the recovery that starts then. */
static const ld_recv_recovery_t *chat_online_at(ld_recv_t **r, uint64_t now) {
  *r = new_chat(0, 0);
  assert_true(ld_recv_set_status(*r, LD_CONNECTION_CONNECTED, now));
  const ld_recv_recovery_t *rec = ld_recv_recovery_poll(*r, now);
  assert_non_null(rec);
  return rec;
}

static void going_offline_during_a_recovery_keeps_that_instant(void **state) {
  (void)state;
  ld_recv_t *r;
  const ld_recv_recovery_t *rec = chat_online_at(&r, T0 + 10 * SEC);
  assert_false(ld_recv_set_status(r, LD_CONNECTION_DISCONNECTED, T0 + 12 * SEC));
  assert_false(ld_recv_set_status(r, LD_CONNECTION_DISCONNECTED, T0 + 13 * SEC));
  /* Back online while the first is still running: no second one yet. */
  assert_false(ld_recv_set_status(r, LD_CONNECTION_CONNECTED, T0 + 14 * SEC));
  assert_null(ld_recv_recovery_poll(r, T0 + 14 * SEC));
  ld_recv_recovery_done(r, rec, true, T0 + 15 * SEC);
  assert_int_equal(ld_recv_recovery_start(r), T0 + 12 * SEC);
  rec = ld_recv_recovery_poll(r, T0 + 16 * SEC);
  assert_non_null(rec);
  assert_int_equal(rec->start_ms, T0 + 7 * SEC);
  assert_int_equal(rec->end_ms, T0 + 21 * SEC);
  ld_recv_recovery_done(r, rec, true, T0 + 17 * SEC);
  ld_recv_free(r);
}

static void failed_recovery_is_retried_and_keeps_its_start(void **state) {
  (void)state;
  ld_recv_t *r;
  const ld_recv_recovery_t *rec = chat_online_at(&r, T0 + 10 * SEC);
  ld_recv_recovery_done(r, rec, false, T0 + 11 * SEC);
  assert_int_equal(ld_recv_recovery_start(r), T0);
  assert_null(ld_recv_recovery_poll(r, T0 + 11 * SEC + LD_RECV_RECOVERY_RETRY_MS - 1));
  rec = ld_recv_recovery_poll(r, T0 + 11 * SEC + LD_RECV_RECOVERY_RETRY_MS);
  assert_non_null(rec);
  assert_int_equal(rec->start_ms, T0 - 5 * SEC);
  ld_recv_recovery_done(r, rec, false, T0 + 50 * SEC);
  /* Offline with an unrecovered interval: the older start stays; back online retries at once. */
  assert_false(ld_recv_set_status(r, LD_CONNECTION_DISCONNECTED, T0 + 60 * SEC));
  assert_int_equal(ld_recv_recovery_start(r), T0);
  assert_true(ld_recv_set_status(r, LD_CONNECTION_CONNECTED, T0 + 61 * SEC));
  rec = ld_recv_recovery_poll(r, T0 + 61 * SEC);
  assert_non_null(rec);
  assert_int_equal(rec->start_ms, T0 - 5 * SEC);
  assert_int_equal(rec->end_ms, T0 + 66 * SEC);
  /* A pointer that is not the one in flight is ignored. */
  ld_recv_recovery_done(r, NULL, true, T0 + 62 * SEC);
  assert_true(ld_recv_recovery_in_flight(r));
  ld_recv_recovery_done(r, rec, true, T0 + 62 * SEC);
  assert_int_equal(ld_recv_recovery_start(r), T0 + 66 * SEC);
  ld_recv_free(r);
}

static void many_topics_are_split_into_ranges(void **state) {
  (void)state;
  ld_recv_t *r = new_core(1, 0, 0);
  char names[25][32];
  for (int i = 0; i < 25; i++) {
    snprintf(names[i], sizeof names[i], "/app/1/t%d/proto", i);
    assert_int_equal(ld_recv_subscribe(r, names[i], NULL), 0);
  }
  assert_true(ld_recv_set_status(r, LD_CONNECTION_CONNECTED, T0));
  const ld_recv_recovery_t *rec = ld_recv_recovery_poll(r, T0);
  assert_non_null(rec);
  assert_int_equal(rec->n_ranges, 3);
  size_t k = 0;
  for (size_t i = 0; i < rec->n_ranges; i++) {
    assert_int_equal(rec->ranges[i].n_content_topics, i < 2 ? LD_RECV_RANGE_MAX_TOPICS : 5);
    assert_string_equal(rec->ranges[i].pubsub_topic, "/waku/2/rs/1/0");
    for (size_t j = 0; j < rec->ranges[i].n_content_topics; j++)
      assert_string_equal(rec->ranges[i].content_topics[j], names[k++]);
  }
  assert_int_equal(k, 25);
  /* Freeing with a recovery in flight releases it. */
  ld_recv_free(r);
}

static void nothing_subscribed_completes_at_once(void **state) {
  (void)state;
  ld_recv_t *r = new_core(1, 0, 0);
  assert_true(ld_recv_set_status(r, LD_CONNECTION_CONNECTED, T0 + 3 * SEC));
  assert_null(ld_recv_recovery_poll(r, T0 + 3 * SEC));
  assert_false(ld_recv_recovery_in_flight(r));
  assert_int_equal(ld_recv_recovery_start(r), T0 + 3 * SEC);
  /* A topic subscribed later is recovered from then on. */
  assert_int_equal(ld_recv_subscribe(r, "/app/1/chat/proto", NULL), 0);
  assert_null(ld_recv_recovery_poll(r, T0 + 4 * SEC));
  assert_false(ld_recv_set_status(r, LD_CONNECTION_DISCONNECTED, T0 + 9 * SEC));
  assert_true(ld_recv_set_status(r, LD_CONNECTION_CONNECTED, T0 + 20 * SEC));
  const ld_recv_recovery_t *rec = ld_recv_recovery_poll(r, T0 + 20 * SEC);
  assert_non_null(rec);
  assert_int_equal(rec->start_ms, T0 + 4 * SEC);
  assert_int_equal(rec->end_ms, T0 + 25 * SEC);
  ld_recv_recovery_done(r, rec, true, T0 + 21 * SEC);
  ld_recv_free(r);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(subscriptions_map_topics_to_shards),
      cmocka_unit_test(bad_topics_and_limits),
      cmocka_unit_test(static_sharding_uses_the_node_shard),
      cmocka_unit_test(unsubscribed_topics_and_other_shards_are_dropped),
      cmocka_unit_test(duplicates_are_dropped),
      cmocka_unit_test(window_expiry_follows_the_message_timestamp_and_prunes_each_minute),
      cmocka_unit_test(default_window_is_seven_minutes),
      cmocka_unit_test(remembered_hashes_are_bounded),
      cmocka_unit_test(backfill_ranges_after_an_offline_period),
      cmocka_unit_test(going_offline_during_a_recovery_keeps_that_instant),
      cmocka_unit_test(failed_recovery_is_retried_and_keeps_its_start),
      cmocka_unit_test(many_topics_are_split_into_ranges),
      cmocka_unit_test(nothing_subscribed_completes_at_once),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
