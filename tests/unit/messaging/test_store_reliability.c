/* The store-based reliability implementation without a network: presence marking from a store
 * answer, argument checks, and the calls refused when there is no store peer to ask (no callback
 * then). The exchanges with a real store node are in tests/integration/test_messaging.c. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>
#include <uv.h>

#include "base/error.h"
#include "messaging/reliability.h"
#include "switch_harness.h"
#include "waku/store/codec.h"

typedef struct probe {
  int picks;
  int pick_rc;
  bool give_unreachable; /* a peer neither connected nor with an address */
  int callbacks;
} probe_t;

static int fake_pick(void *ud, ld_service_peer_t *out) {
  probe_t *p = ud;
  p->picks++;
  if (p->pick_rc != 0)
    return p->pick_rc;
  memset(out, 0, sizeof *out);
  assert_int_equal(
      ld_peerid_parse(&out->id, "12D3KooWDpJ7As7BWAwRMfu1VU2WCqNjvq387JEYKDBj4kx6nXTN"), 0);
  return 0;
}

static void on_confirm(int err, const bool *present, size_t n, void *ud) {
  (void)err, (void)present, (void)n;
  ((probe_t *)ud)->callbacks++;
}

static bool on_known(const uint8_t hash[LD_WAKU_HASH_LEN], void *ud) {
  (void)hash, (void)ud;
  return false;
}

static void on_message(const char *pubsub_topic, const uint8_t hash[LD_WAKU_HASH_LEN],
                       const ld_waku_message_t *msg, void *ud) {
  (void)pubsub_topic, (void)hash, (void)msg;
  ((probe_t *)ud)->callbacks++;
}

static void on_done(int err, size_t recovered, void *ud) {
  (void)err, (void)recovered;
  ((probe_t *)ud)->callbacks++;
}

static void presence_is_marked_per_asked_hash(void **state) {
  (void)state;
  uint8_t asked[4][LD_WAKU_HASH_LEN];
  for (int i = 0; i < 4; i++)
    memset(asked[i], 0x10 + i, LD_WAKU_HASH_LEN);
  ld_store_entry_t entries[3];
  memset(entries, 0, sizeof entries);
  memcpy(entries[0].hash, asked[2], LD_WAKU_HASH_LEN);
  memset(entries[1].hash, 0x99, LD_WAKU_HASH_LEN); /* not asked for */
  memcpy(entries[2].hash, asked[0], LD_WAKU_HASH_LEN);
  ld_store_response_t res;
  ld_store_response_init(&res);
  res.status_code = LD_STORE_STATUS_OK;
  res.entries = entries;
  res.n_entries = 3;
  bool present[4];
  memset(present, 0xff, sizeof present);
  ld_store_reliability_mark_present((const uint8_t(*)[LD_WAKU_HASH_LEN])asked, 4, &res, present);
  assert_true(present[0]);
  assert_false(present[1]);
  assert_true(present[2]);
  assert_false(present[3]);
  res.n_entries = 0;
  ld_store_reliability_mark_present((const uint8_t(*)[LD_WAKU_HASH_LEN])asked, 4, &res, present);
  for (int i = 0; i < 4; i++)
    assert_false(present[i]);
}

static void calls_without_a_store_peer_are_refused(void **state) {
  (void)state;
  uv_loop_t loop;
  uv_loop_init(&loop);
  ld_switch_t *sw = sh_switch_new(&loop, NULL);
  probe_t p = {0};
  p.pick_rc = LD_ERR_NOT_FOUND;
  ld_store_reliability_config_t cfg = {0};
  cfg.pick = fake_pick;
  cfg.pick_user_data = &p;
  ld_reliability_t *r = ld_store_reliability_new(sw, NULL, &cfg);
  assert_non_null(r);
  uint8_t hashes[2][LD_WAKU_HASH_LEN] = {{1}, {2}};
  ld_reliability_call_t *call = NULL;
  assert_int_equal(ld_reliability_confirm(r, (const uint8_t(*)[LD_WAKU_HASH_LEN])hashes, 2,
                                          on_confirm, &p, &call),
                   LD_ERR_NOT_FOUND);
  assert_null(call);
  const char *topics[] = {"/app/1/a/proto"};
  ld_reliability_range_t range = {"/waku/2/rs/0/0", topics, 1, 0, 1000};
  assert_int_equal(ld_reliability_recover(r, &range, on_known, on_message, on_done, &p, &call),
                   LD_ERR_NOT_FOUND);
  assert_int_equal(p.picks, 2);
  /* a peer that is neither connected nor has an address cannot be reached either */
  p.pick_rc = 0;
  assert_int_equal(ld_reliability_confirm(r, (const uint8_t(*)[LD_WAKU_HASH_LEN])hashes, 1,
                                          on_confirm, &p, NULL),
                   LD_ERR_NOT_FOUND);
  sh_run_for(&loop, 20);
  assert_int_equal(p.callbacks, 0);
  ld_reliability_free(r);
  ld_reliability_free(NULL);

  /* with a selector over no node there is never a peer */
  ld_service_peers_t *sp = ld_service_peers_new(NULL, 0);
  r = ld_store_reliability_new(sw, sp, NULL);
  assert_non_null(r);
  assert_int_equal(ld_reliability_confirm(r, (const uint8_t(*)[LD_WAKU_HASH_LEN])hashes, 1,
                                          on_confirm, &p, NULL),
                   LD_ERR_NOT_FOUND);
  ld_reliability_free(r);
  ld_service_peers_free(sp);
  sh_switch_close(sw, &loop);
  assert_int_equal(p.callbacks, 0);
  uv_loop_close(&loop);
}

static void bad_arguments_are_refused(void **state) {
  (void)state;
  uv_loop_t loop;
  uv_loop_init(&loop);
  ld_switch_t *sw = sh_switch_new(&loop, NULL);
  probe_t p = {0};
  ld_store_reliability_config_t cfg = {0};
  cfg.pick = fake_pick;
  cfg.pick_user_data = &p;
  assert_null(ld_store_reliability_new(NULL, NULL, &cfg));
  assert_null(ld_store_reliability_new(sw, NULL, NULL)); /* no selector and no pick */
  ld_reliability_t *r = ld_store_reliability_new(sw, NULL, &cfg);
  static uint8_t many[LD_RELIABILITY_MAX_CONFIRM + 1][LD_WAKU_HASH_LEN];
  const uint8_t(*h)[LD_WAKU_HASH_LEN] = (const uint8_t(*)[LD_WAKU_HASH_LEN])many;
  assert_int_equal(ld_reliability_confirm(r, h, 0, on_confirm, &p, NULL), LD_ERR_INVALID_ARG);
  assert_int_equal(
      ld_reliability_confirm(r, h, LD_RELIABILITY_MAX_CONFIRM + 1, on_confirm, &p, NULL),
      LD_ERR_INVALID_ARG);
  assert_int_equal(ld_reliability_confirm(r, h, 1, NULL, &p, NULL), LD_ERR_INVALID_ARG);
  const char *topics[LD_RELIABILITY_MAX_TOPICS + 1];
  for (size_t i = 0; i <= LD_RELIABILITY_MAX_TOPICS; i++)
    topics[i] = "/app/1/a/proto";
  ld_reliability_range_t range = {"/waku/2/rs/0/0", topics, 0, 0, 1000};
  assert_int_equal(ld_reliability_recover(r, &range, NULL, on_message, on_done, &p, NULL),
                   LD_ERR_INVALID_ARG); /* no content topic */
  range.n_content_topics = LD_RELIABILITY_MAX_TOPICS + 1;
  assert_int_equal(ld_reliability_recover(r, &range, NULL, on_message, on_done, &p, NULL),
                   LD_ERR_INVALID_ARG);
  range.n_content_topics = 1;
  range.start_ns = 2000;
  assert_int_equal(ld_reliability_recover(r, &range, NULL, on_message, on_done, &p, NULL),
                   LD_ERR_INVALID_ARG); /* start after end */
  range.start_ns = 0;
  range.pubsub_topic = NULL;
  assert_int_equal(ld_reliability_recover(r, &range, NULL, on_message, on_done, &p, NULL),
                   LD_ERR_INVALID_ARG);
  range.pubsub_topic = "/waku/2/rs/0/0";
  assert_int_equal(ld_reliability_recover(r, &range, NULL, NULL, on_done, &p, NULL),
                   LD_ERR_INVALID_ARG);
  assert_int_equal(ld_reliability_recover(r, &range, NULL, on_message, NULL, &p, NULL),
                   LD_ERR_INVALID_ARG);
  assert_int_equal(p.picks, 0); /* refused before looking for a peer */
  ld_reliability_free(r);
  sh_switch_close(sw, &loop);
  assert_int_equal(p.callbacks, 0);
  uv_loop_close(&loop);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(presence_is_marked_per_asked_hash),
      cmocka_unit_test(calls_without_a_store_peer_are_refused),
      cmocka_unit_test(bad_arguments_are_refused),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
