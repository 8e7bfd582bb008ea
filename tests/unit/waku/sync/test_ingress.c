/* The checks of a message arriving by store-sync transfer, one verdict each: a valid solicited
 * message, then every way to fail (bytes, size, empty fields, ephemeral, shard, time window on
 * both sides with its exact bounds, unsolicited, duplicate, a protected shard's signature checked
 * without relay's 5-minute window, the RLN hook). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "base/buf.h"
#include "base/error.h"
#include "crypto/crypto.h"
#include "waku/sync/ingress.h"

#define SEC 1000000000ll
static const int64_t NOW = 1750000000000000000ll;
static const char *const k_topics[2] = {"/waku/2/rs/5/0", "/waku/2/rs/5/1"};

typedef struct fixture {
  ld_sync_shards_t *shards;
  ld_sync_ingress_rules_t rules;
  ld_sync_wanted_t answer; /* what `wanted` says */
  ld_sync_id_t asked;      /* the item it was asked about */
  int asked_n;
  bool rln_ok;
  int rln_calls;
} fixture_t;

static fixture_t g;

static ld_sync_wanted_t wanted(void *ctx, const ld_sync_id_t *id) {
  fixture_t *f = ctx;
  f->asked = *id;
  f->asked_n++;
  return f->answer;
}

static bool rln(void *ctx, const char *topic, const ld_waku_message_t *msg) {
  (void)topic, (void)msg;
  fixture_t *f = ctx;
  f->rln_calls++;
  return f->rln_ok;
}

static int setup(void **state) {
  (void)state;
  memset(&g, 0, sizeof g);
  assert_int_equal(ld_sync_shards_new(k_topics, 2, &g.shards), 0);
  g.rules.shards = g.shards;
  g.rules.js_rules = true;
  g.rules.window_start = NOW - 3600 * SEC;
  g.rules.now_ns = NOW;
  g.rules.wanted = wanted;
  g.rules.wanted_ctx = &g;
  g.rules.cluster_id = 5;
  g.answer = LD_SYNC_WANTED;
  g.rln_ok = true;
  return 0;
}

static int teardown(void **state) {
  (void)state;
  ld_sync_shards_free(g.shards);
  return 0;
}

static void message(ld_waku_message_t *m, int64_t ts, const char *payload) {
  ld_waku_message_init(m);
  m->payload = (const uint8_t *)payload;
  m->payload_len = strlen(payload);
  m->content_topic = "/app/1/chat/proto";
  m->content_topic_len = strlen(m->content_topic);
  m->timestamp = ts;
}

/* Encodes (topic, m) as a frame body and checks it. */
static ld_sync_ingress_verdict_t check(const char *topic, const ld_waku_message_t *m,
                                       ld_sync_id_t *id) {
  ld_buf_t b;
  ld_buf_init(&b);
  assert_int_equal(ld_sync_transfer_encode(topic, strlen(topic), m, SIZE_MAX, &b), 0);
  ld_sync_transfer_t t;
  ld_sync_transfer_init(&t);
  ld_sync_ingress_verdict_t v = ld_sync_ingress_check(b.data, b.len, &g.rules, &t, id);
  if (v == LD_SYNC_INGRESS_OK || v == LD_SYNC_INGRESS_DUPLICATE)
    assert_non_null(t.pubsub_topic);
  else
    assert_null(t.pubsub_topic);
  ld_sync_transfer_clear(&t);
  ld_buf_clear(&b);
  return v;
}

static void a_solicited_message_passes(void **state) {
  (void)state;
  ld_waku_message_t m;
  message(&m, NOW - 600 * SEC, "hello");
  ld_sync_id_t id;
  assert_int_equal(check(k_topics[1], &m, &id), LD_SYNC_INGRESS_OK);
  uint8_t hash[LD_WAKU_HASH_LEN];
  assert_int_equal(ld_waku_message_hash(k_topics[1], &m, hash), 0);
  assert_memory_equal(id.hash, hash, LD_WAKU_HASH_LEN); /* computed here */
  assert_int_equal(id.time, m.timestamp);
  assert_int_equal(g.asked_n, 1);
  assert_int_equal(ld_sync_id_cmp(&g.asked, &id), 0);
  /* the exact bounds of the window are inside it */
  message(&m, g.rules.window_start, "first");
  assert_int_equal(check(k_topics[0], &m, &id), LD_SYNC_INGRESS_OK);
  message(&m, NOW + LD_SYNC_MAX_FUTURE_NS, "last");
  assert_int_equal(check(k_topics[0], &m, &id), LD_SYNC_INGRESS_OK);
  assert_string_equal(ld_sync_ingress_verdict_name(LD_SYNC_INGRESS_OK), "ok");
}

static void bad_bytes_and_fields(void **state) {
  (void)state;
  ld_sync_transfer_t t;
  ld_sync_transfer_init(&t);
  ld_sync_id_t id;
  static const uint8_t junk[] = {0x0a, 0x05, 'a', 'b'};
  assert_int_equal(ld_sync_ingress_check(junk, sizeof junk, &g.rules, &t, &id),
                   LD_SYNC_INGRESS_UNDECODABLE);
  ld_waku_message_t m;
  message(&m, NOW - SEC, "");
  assert_int_equal(check(k_topics[0], &m, &id), LD_SYNC_INGRESS_UNDECODABLE); /* js rule */
  g.rules.js_rules = false;
  assert_int_equal(check(k_topics[0], &m, &id), LD_SYNC_INGRESS_OK);
  g.rules.js_rules = true;
  static char big[2048];
  memset(big, 'x', sizeof big - 1);
  message(&m, NOW - SEC, big);
  g.rules.max_msg_size = 1024;
  assert_int_equal(check(k_topics[0], &m, &id), LD_SYNC_INGRESS_UNDECODABLE);
  g.rules.max_msg_size = 4096;
  assert_int_equal(check(k_topics[0], &m, &id), LD_SYNC_INGRESS_OK);
  message(&m, NOW - SEC, "eph");
  m.ephemeral = true;
  assert_int_equal(check(k_topics[0], &m, &id), LD_SYNC_INGRESS_EPHEMERAL);
  assert_int_equal(g.asked_n, 2); /* only the messages that passed were looked up */
}

static void shard_and_time_window(void **state) {
  (void)state;
  ld_waku_message_t m;
  ld_sync_id_t id;
  message(&m, NOW - SEC, "x");
  assert_int_equal(check("/waku/2/rs/5/2", &m, &id), LD_SYNC_INGRESS_WRONG_SHARD);
  assert_int_equal(check("/waku/2/rs/6/0", &m, &id), LD_SYNC_INGRESS_WRONG_SHARD);
  message(&m, g.rules.window_start - 1, "old");
  assert_int_equal(check(k_topics[0], &m, &id), LD_SYNC_INGRESS_TOO_OLD);
  message(&m, 0, "zero");
  assert_int_equal(check(k_topics[0], &m, &id), LD_SYNC_INGRESS_TOO_OLD);
  message(&m, NOW + LD_SYNC_MAX_FUTURE_NS + 1, "ahead");
  assert_int_equal(check(k_topics[0], &m, &id), LD_SYNC_INGRESS_FUTURE);
  message(&m, INT64_MAX, "far ahead");
  assert_int_equal(check(k_topics[0], &m, &id), LD_SYNC_INGRESS_FUTURE);
  assert_int_equal(g.asked_n, 0);
}

static void unsolicited_and_duplicates(void **state) {
  (void)state;
  ld_waku_message_t m;
  ld_sync_id_t id;
  message(&m, NOW - SEC, "x");
  g.answer = LD_SYNC_UNKNOWN;
  assert_int_equal(check(k_topics[0], &m, &id), LD_SYNC_INGRESS_UNSOLICITED);
  g.answer = LD_SYNC_HELD;
  assert_int_equal(check(k_topics[0], &m, &id), LD_SYNC_INGRESS_DUPLICATE);
  assert_string_equal(ld_sync_ingress_verdict_name(LD_SYNC_INGRESS_UNSOLICITED), "unsolicited");
}

/* A protected shard: unsigned or wrongly signed messages are refused; a signed message an hour
 * old (outside relay's 5-minute window) passes. */
static void protected_shard_signatures(void **state) {
  (void)state;
  uint8_t secret[LD_SECP256K1_SECRET_LEN], other[LD_SECP256K1_SECRET_LEN];
  memset(secret, 0x11, sizeof secret);
  memset(other, 0x22, sizeof other);
  ld_relay_protected_shard_t ps = {.shard = 1};
  assert_int_equal(ld_secp256k1_public(secret, ps.pubkey), 0);
  g.rules.protected_shards = &ps;
  g.rules.n_protected_shards = 1;
  ld_waku_message_t m;
  ld_sync_id_t id;
  message(&m, NOW - 3000 * SEC, "signed");
  assert_int_equal(check(k_topics[1], &m, &id), LD_SYNC_INGRESS_BAD_SIGNATURE);
  uint8_t sig[LD_RELAY_SIGNATURE_LEN];
  assert_int_equal(ld_relay_sign(other, k_topics[1], &m, sig), 0);
  m.meta = sig;
  m.meta_len = sizeof sig;
  assert_int_equal(check(k_topics[1], &m, &id), LD_SYNC_INGRESS_BAD_SIGNATURE);
  assert_int_equal(ld_relay_sign(secret, k_topics[1], &m, sig), 0);
  assert_int_equal(check(k_topics[1], &m, &id), LD_SYNC_INGRESS_OK);
  /* the other shard is not protected */
  message(&m, NOW - 3000 * SEC, "plain");
  assert_int_equal(check(k_topics[0], &m, &id), LD_SYNC_INGRESS_OK);
}

static void the_rln_hook(void **state) {
  (void)state;
  ld_waku_message_t m;
  ld_sync_id_t id;
  message(&m, NOW - SEC, "x");
  assert_true(ld_sync_rln_accept(NULL, k_topics[0], &m));
  g.rules.rln = rln;
  g.rules.rln_ctx = &g;
  g.rln_ok = false;
  assert_int_equal(check(k_topics[0], &m, &id), LD_SYNC_INGRESS_RLN);
  g.rln_ok = true;
  assert_int_equal(check(k_topics[0], &m, &id), LD_SYNC_INGRESS_OK);
  assert_int_equal(g.rln_calls, 2);
  g.answer = LD_SYNC_UNKNOWN; /* not asked for unsolicited messages */
  assert_int_equal(check(k_topics[0], &m, &id), LD_SYNC_INGRESS_UNSOLICITED);
  assert_int_equal(g.rln_calls, 2);
}

#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)

int main(void) {
  const struct CMUnitTest tests[] = {
      T(a_solicited_message_passes), T(bad_bytes_and_fields),       T(shard_and_time_window),
      T(unsolicited_and_duplicates), T(protected_shard_signatures), T(the_rln_hook),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
