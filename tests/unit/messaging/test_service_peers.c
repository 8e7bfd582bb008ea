#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "base/error.h"
#include "messaging/service_peers.h"
#include "waku/core/codecs.h"

#define FILTER LD_WAKU_FILTER_SUBSCRIBE_CODEC
#define STORE LD_WAKU_STORE_CODEC
#define NOW 5000000u

/* A sha2-256 peer ID whose digest is 32 copies of `tag`. */
static ld_peerid_t fake_id(uint8_t tag) {
  uint8_t mh[34] = {0x12, 0x20};
  memset(mh + 2, tag, 32);
  ld_peerid_t id;
  assert_int_equal(ld_peerid_from_bytes(&id, mh, sizeof mh), 0);
  return id;
}

static ld_multiaddr_t addr(const char *text) {
  ld_multiaddr_t ma;
  assert_int_equal(ld_multiaddr_parse(&ma, text), 0);
  return ma;
}

static ld_multiaddr_t addr_with_peer(const char *base, const ld_peerid_t *id) {
  char idtext[LD_PEERID_TEXT_MAX], text[LD_MULTIADDR_TEXT_MAX];
  assert_true(ld_peerid_to_text(id, idtext, sizeof idtext) > 0);
  snprintf(text, sizeof text, "%s/p2p/%s", base, idtext);
  return addr(text);
}

static void know(ld_peerstore_t *ps, uint8_t tag, const char *base, const char *protocol,
                 uint64_t seen_ms) {
  ld_peerid_t id = fake_id(tag);
  if (base != NULL) {
    ld_multiaddr_t a = addr(base);
    assert_int_equal(ld_peerstore_add_addrs(ps, &id, &a, 1, seen_ms), 1);
  }
  if (protocol != NULL) {
    const char *protos[] = {"/ipfs/id/1.0.0", protocol};
    assert_int_equal(ld_peerstore_set_protocols(ps, &id, protos, 2, seen_ms), 2);
  }
}

/* The world of most tests:
 *   1  configured filter node (unknown to the peer store)
 *   2  connected, filter, address in the peer store
 *   3  connected, protocols unknown
 *   4  connected, filter, no stored address (its connection's address is known)
 *   5  known, filter, with an address, seen recently
 *   6  known, filter, no address
 *   7  known, store only
 *   8  known, filter, with an address, seen long ago
 *   9  ourselves (connected, filter) */
typedef struct world {
  ld_peerstore_t *ps;
  ld_multiaddr_t configured;
  ld_peerid_t connected[4];
  ld_multiaddr_t connected_addrs[4];
  ld_peerid_t self;
  ld_service_peers_view_t view;
} world_t;

static int setup(void **state) {
  static world_t w;
  memset(&w, 0, sizeof w);
  w.ps = ld_peerstore_new(NULL);
  assert_non_null(w.ps);
  know(w.ps, 8, "/ip4/10.0.0.8/tcp/8", FILTER, 100);
  know(w.ps, 2, "/ip4/10.0.0.2/tcp/2", FILTER, 200);
  know(w.ps, 3, "/ip4/10.0.0.3/tcp/3", NULL, 200);
  know(w.ps, 4, NULL, FILTER, 200);
  know(w.ps, 6, NULL, FILTER, 300);
  know(w.ps, 7, "/ip4/10.0.0.7/tcp/7", STORE, 300);
  know(w.ps, 9, "/ip4/10.0.0.9/tcp/9", FILTER, 300);
  know(w.ps, 5, "/ip4/10.0.0.5/tcp/5", FILTER, 400);
  w.self = fake_id(9);
  ld_peerid_t id1 = fake_id(1);
  w.configured = addr_with_peer("/ip4/10.0.0.1/tcp/1", &id1);
  w.connected[0] = fake_id(9);
  w.connected[1] = fake_id(2);
  w.connected[2] = fake_id(3);
  w.connected[3] = fake_id(4);
  w.connected_addrs[3] = addr("/ip4/10.0.0.4/tcp/4");
  w.view =
      (ld_service_peers_view_t){&w.self, &w.configured, w.ps, w.connected, w.connected_addrs, 4};
  *state = &w;
  return 0;
}

static int teardown(void **state) {
  world_t *w = *state;
  ld_peerstore_free(w->ps);
  return 0;
}

static void expect_ids(const ld_service_peer_t *out, size_t n, const uint8_t *tags, size_t n_tags) {
  assert_int_equal(n, n_tags);
  for (size_t i = 0; i < n; i++) {
    ld_peerid_t id = fake_id(tags[i]);
    assert_true(ld_peerid_equal(&out[i].id, &id));
  }
}

static void configured_then_connected_then_known(void **state) {
  world_t *w = *state;
  ld_service_peers_t *sp = ld_service_peers_new(NULL, 0);
  assert_non_null(sp);
  ld_service_peer_t out[16];
  size_t n = ld_service_peers_select(sp, &w->view, FILTER, NULL, 0, NOW, out, 16);
  const uint8_t order[] = {1, 2, 4, 5, 8};
  expect_ids(out, n, order, sizeof order);

  assert_true(out[0].configured);
  assert_false(out[0].connected);
  assert_true(ld_multiaddr_equal(&out[0].addr, &w->configured));
  assert_true(out[1].connected);
  assert_false(out[1].configured);
  ld_multiaddr_t a2 = addr_with_peer("/ip4/10.0.0.2/tcp/2", &out[1].id);
  assert_true(ld_multiaddr_equal(&out[1].addr, &a2));
  /* No stored address: the connection's, with /p2p added. */
  ld_multiaddr_t a4 = addr_with_peer("/ip4/10.0.0.4/tcp/4", &out[2].id);
  assert_true(out[2].connected);
  assert_true(ld_multiaddr_equal(&out[2].addr, &a4));
  assert_false(out[3].connected);
  ld_multiaddr_t a5 = addr_with_peer("/ip4/10.0.0.5/tcp/5", &out[3].id);
  assert_true(ld_multiaddr_equal(&out[3].addr, &a5));

  /* Another protocol: no configured node for store here, only the store peer. */
  w->view.configured = NULL;
  n = ld_service_peers_select(sp, &w->view, STORE, NULL, 0, NOW, out, 16);
  const uint8_t stores[] = {7};
  expect_ids(out, n, stores, sizeof stores);
  ld_service_peers_free(sp);
}

static void max_and_exclusions_are_respected(void **state) {
  world_t *w = *state;
  ld_service_peers_t *sp = ld_service_peers_new(NULL, 0);
  ld_service_peer_t out[16];
  size_t n = ld_service_peers_select(sp, &w->view, FILTER, NULL, 0, NOW, out, 2);
  const uint8_t first_two[] = {1, 2};
  expect_ids(out, n, first_two, sizeof first_two);
  ld_peerid_t ex[2] = {fake_id(2), fake_id(1)};
  n = ld_service_peers_select(sp, &w->view, FILTER, ex, 2, NOW, out, 16);
  const uint8_t rest[] = {4, 5, 8};
  expect_ids(out, n, rest, sizeof rest);
  assert_int_equal(ld_service_peers_select(sp, &w->view, FILTER, NULL, 0, NOW, out, 0), 0);
  /* The configured node counts as connected when it is. */
  w->connected[2] = fake_id(1);
  n = ld_service_peers_select(sp, &w->view, FILTER, NULL, 0, NOW, out, 1);
  assert_int_equal(n, 1);
  assert_true(out[0].configured);
  assert_true(out[0].connected);
  ld_service_peers_free(sp);
}

static void failed_peers_are_skipped_until_expiry(void **state) {
  world_t *w = *state;
  ld_service_peers_t *sp = ld_service_peers_new(NULL, 1000);
  ld_peerid_t id1 = fake_id(1), id5 = fake_id(5);
  ld_service_peers_mark_failed(sp, &id1, NOW);
  ld_service_peers_mark_failed(sp, &id5, NOW + 500);
  assert_true(ld_service_peers_failed(sp, &id1, NOW + 999));
  ld_service_peer_t out[16];
  size_t n = ld_service_peers_select(sp, &w->view, FILTER, NULL, 0, NOW + 999, out, 16);
  const uint8_t without[] = {2, 4, 8};
  expect_ids(out, n, without, sizeof without);
  /* Peer 1 expires at NOW + 1000, peer 5 at NOW + 1500. */
  n = ld_service_peers_select(sp, &w->view, FILTER, NULL, 0, NOW + 1000, out, 16);
  const uint8_t back1[] = {1, 2, 4, 8};
  expect_ids(out, n, back1, sizeof back1);
  assert_false(ld_service_peers_failed(sp, &id1, NOW + 1000));
  /* Failing again renews; clearing forgets. */
  ld_service_peers_mark_failed(sp, &id5, NOW + 1400);
  assert_true(ld_service_peers_failed(sp, &id5, NOW + 2000));
  ld_service_peers_clear_failed(sp, &id5);
  assert_false(ld_service_peers_failed(sp, &id5, NOW + 2000));
  ld_service_peers_free(sp);
}

static void failure_list_is_bounded(void **state) {
  (void)state;
  ld_service_peers_t *sp = ld_service_peers_new(NULL, 0);
  for (unsigned i = 0; i < LD_SERVICE_PEERS_MAX_FAILED; i++) {
    ld_peerid_t id = fake_id((uint8_t)(100 + i));
    ld_service_peers_mark_failed(sp, &id, NOW + i);
  }
  ld_peerid_t first = fake_id(100), second = fake_id(101), extra = fake_id(250);
  assert_true(ld_service_peers_failed(sp, &first, NOW + 100));
  /* One more replaces the entry that expires first. */
  ld_service_peers_mark_failed(sp, &extra, NOW + 100);
  assert_true(ld_service_peers_failed(sp, &extra, NOW + 100));
  assert_false(ld_service_peers_failed(sp, &first, NOW + 100));
  assert_true(ld_service_peers_failed(sp, &second, NOW + 100));
  ld_service_peers_free(sp);
}

/* ---- outcomes and back-off ----------------------------------------------------------------- */

typedef struct answer {
  int err;
  uint32_t status;
  ld_service_outcome_t outcome;
} answer_t;

/* Lightpush v3, filter v2 and store v3 answers as their clients report them. */
static void answers_are_told_apart(void **state) {
  (void)state;
  static const answer_t table[] = {
      /* served */
      {0, 200, LD_SERVICE_SERVED},
      /* the request's fault: the peer is fine */
      {0, 400, LD_SERVICE_REFUSED}, /* bad request (lightpush, filter, store) */
      {0, 404, LD_SERVICE_REFUSED}, /* filter: no such subscription */
      {0, 413, LD_SERVICE_REFUSED}, /* lightpush: payload too large */
      {0, 420, LD_SERVICE_REFUSED}, /* lightpush: invalid message */
      {0, 421, LD_SERVICE_REFUSED}, /* lightpush: unsupported pubsub topic */
      /* server-side or passing: the same peer next round */
      {0, 429, LD_SERVICE_TRANSIENT}, /* too many requests */
      {0, 500, LD_SERVICE_TRANSIENT}, /* internal server error */
      {0, 503, LD_SERVICE_TRANSIENT}, /* service not available / unavailable */
      {0, 504, LD_SERVICE_TRANSIENT}, /* out of RLN proof / store's peer dial failure */
      {0, 505, LD_SERVICE_TRANSIENT}, /* no peers to relay (also a 200 with 0 relay peers) */
      {LD_ERR_TIMEOUT, 500, LD_SERVICE_TRANSIENT}, /* no answer in time */
      {LD_ERR_RESET, 500, LD_SERVICE_TRANSIENT},   /* the service reset the stream */
      /* dial or protocol failures */
      {LD_ERR_PROTOCOL_UNSUPPORTED, 503, LD_SERVICE_BROKEN}, /* does not speak the protocol */
      {LD_ERR_NEGOTIATION_FAILED, 503, LD_SERVICE_BROKEN},
      {LD_ERR_CLOSED, 505, LD_SERVICE_BROKEN}, /* connection gone: "dial_failure" */
      {LD_ERR_UNREACHABLE, 504, LD_SERVICE_BROKEN},
      {LD_ERR_BAD_PROTOBUF, 500, LD_SERVICE_BROKEN}, /* the answer does not decode */
      {LD_ERR_TOO_LARGE, 500, LD_SERVICE_BROKEN},
      {LD_ERR_MALFORMED, 300, LD_SERVICE_BROKEN}, /* store/filter client: BAD_RESPONSE */
      {0, 0, LD_SERVICE_BROKEN},                  /* no status */
      {0, 300, LD_SERVICE_TRANSIENT}, /* store: archive error (DRIVER_ERROR, timed out) */
      {0, 600, LD_SERVICE_BROKEN},    /* not a status of these protocols */
  };
  for (size_t i = 0; i < sizeof table / sizeof table[0]; i++) {
    ld_service_outcome_t got = ld_service_outcome_of(table[i].err, table[i].status);
    if (got != table[i].outcome)
      fail_msg("err %s status %u: %s, expected %s", ld_errname(table[i].err), table[i].status,
               ld_service_outcome_name(got), ld_service_outcome_name(table[i].outcome));
  }
  assert_string_equal(ld_service_outcome_name(LD_SERVICE_TRANSIENT), "transient");
}

static void backoff_schedule(void **state) {
  (void)state;
  static const uint64_t expect[] = {0,    500,  500,   500,   500,   2000,
                                    4000, 8000, 16000, 30000, 30000, 30000};
  for (uint32_t n = 0; n < sizeof expect / sizeof expect[0]; n++)
    assert_int_equal(ld_service_peers_backoff_ms(n), expect[n]);
  assert_int_equal(ld_service_peers_backoff_ms(UINT32_MAX), LD_SERVICE_PEERS_RETRY_MAX_MS);
}

/* A peer that answers transiently on every round of 1 s (fake clock): it stays the pick at the
 * next round for the first LD_SERVICE_PEERS_RETRY_FAST answers, then is paused 2 s, 4 s, … */
static void transient_answers_pace_the_same_peer(void **state) {
  world_t *w = *state;
  ld_service_peers_t *sp = ld_service_peers_new(NULL, 0);
  ld_peerid_t id1 = fake_id(1);
  ld_service_peer_t out[1];
  uint64_t t = NOW, pushes = 0, last_push = 0;
  uint64_t gaps[16];
  /* one round a second for 60 s: ask the configured peer whenever it is picked */
  for (uint64_t round = 0; round < 60; round++, t += 1000) {
    size_t n = ld_service_peers_select(sp, &w->view, FILTER, NULL, 0, t, out, 1);
    if (n == 0 || !ld_peerid_equal(&out[0].id, &id1))
      continue;
    if (pushes > 0 && pushes <= 16)
      gaps[pushes - 1] = t - last_push;
    pushes++;
    last_push = t;
    ld_service_peers_report(sp, &id1, LD_SERVICE_TRANSIENT, t, t + 5); /* answered in 5 ms */
  }
  /* rounds 0-4 (4 fast retries), then pauses of 2 s (round 7), 4 s (12), 8 s (21), 16 s (38):
   * the pause runs from the answer, 5 ms after the round, so each one costs a round more */
  assert_int_equal(pushes, 9);
  const uint64_t expect[] = {1000, 1000, 1000, 1000, 3000, 5000, 9000, 17000};
  for (size_t i = 0; i < 8; i++)
    assert_int_equal(gaps[i], expect[i]);
  assert_int_equal(ld_service_peers_transient_count(sp, &id1), 9);
  /* while it is paused, the next candidate is picked */
  size_t n = ld_service_peers_select(sp, &w->view, FILTER, NULL, 0, last_push + 10, out, 1);
  assert_int_equal(n, 1);
  assert_false(ld_peerid_equal(&out[0].id, &id1));
  /* one served answer resets it */
  ld_service_peers_report(sp, &id1, LD_SERVICE_SERVED, t, t + 5);
  assert_int_equal(ld_service_peers_transient_count(sp, &id1), 0);
  assert_false(ld_service_peers_failed(sp, &id1, t + 5));
  ld_service_peers_report(sp, &id1, LD_SERVICE_TRANSIENT, t + 10, t + 15);
  assert_int_equal(ld_service_peers_transient_count(sp, &id1), 1);
  assert_true(ld_service_peers_failed(sp, &id1, t + 15 + 499));
  assert_false(ld_service_peers_failed(sp, &id1, t + 15 + 500));
  ld_service_peers_free(sp);
}

/* A refused request says nothing about the peer; a broken exchange marks it failed for the
 * failure expiry, which a later transient answer does not shorten. */
static void refused_and_broken_exchanges(void **state) {
  (void)state;
  ld_service_peers_t *sp = ld_service_peers_new(NULL, 60000);
  ld_peerid_t id = fake_id(7);
  ld_service_peers_report(sp, &id, LD_SERVICE_REFUSED, NOW, NOW + 1);
  assert_false(ld_service_peers_failed(sp, &id, NOW + 1));
  assert_int_equal(ld_service_peers_transient_count(sp, &id), 0);
  ld_service_peers_report(sp, &id, LD_SERVICE_BROKEN, NOW, NOW + 2);
  assert_true(ld_service_peers_failed(sp, &id, NOW + 2 + 59999));
  ld_service_peers_report(sp, &id, LD_SERVICE_TRANSIENT, NOW + 10, NOW + 20);
  assert_true(ld_service_peers_failed(sp, &id, NOW + 2 + 59999));
  assert_false(ld_service_peers_failed(sp, &id, NOW + 2 + 60000));
  ld_service_peers_free(sp);
}

/* Exchanges in flight side by side (several sends pushed in the same round) count once. */
static void side_by_side_answers_count_once(void **state) {
  (void)state;
  ld_service_peers_t *sp = ld_service_peers_new(NULL, 0);
  ld_peerid_t id = fake_id(3);
  for (unsigned i = 0; i < 50; i++) /* 50 pushes started in the round at NOW */
    ld_service_peers_report(sp, &id, LD_SERVICE_TRANSIENT, NOW + i / 10, NOW + 20 + i);
  assert_int_equal(ld_service_peers_transient_count(sp, &id), 1);
  ld_service_peers_report(sp, &id, LD_SERVICE_TRANSIENT, NOW + 1000, NOW + 1010);
  assert_int_equal(ld_service_peers_transient_count(sp, &id), 2);
  ld_service_peers_free(sp);
}

static void protocols_map_to_configured_services(void **state) {
  (void)state;
  assert_int_equal(ld_service_peers_service_of(LD_WAKU_STORE_CODEC), LD_NODE_SERVICE_STORE);
  assert_int_equal(ld_service_peers_service_of(LD_WAKU_FILTER_SUBSCRIBE_CODEC),
                   LD_NODE_SERVICE_FILTER);
  assert_int_equal(ld_service_peers_service_of(LD_WAKU_LIGHTPUSH_CODEC), LD_NODE_SERVICE_LIGHTPUSH);
  assert_int_equal(ld_service_peers_service_of(LD_WAKU_LEGACY_LIGHTPUSH_CODEC),
                   LD_NODE_SERVICE_LIGHTPUSH);
  assert_int_equal(ld_service_peers_service_of(LD_WAKU_RELAY_CODEC), LD_NODE_SERVICES);
  assert_int_equal(ld_service_peers_service_of(NULL), LD_NODE_SERVICES);
}

static void without_a_node_nothing_is_picked(void **state) {
  (void)state;
  ld_service_peers_t *sp = ld_service_peers_new(NULL, 0);
  ld_service_peer_t out[4];
  assert_int_equal(ld_service_peers_pick(sp, FILTER, NULL, 0, NOW, out, 4), 0);
  assert_int_equal(ld_service_peers_count_connected(sp, FILTER), 0);
  ld_service_peer_t p = {0};
  assert_int_equal(ld_service_peers_connect(NULL, &p, NULL, NULL, NULL), LD_ERR_INVALID_ARG);
  ld_service_peers_free(sp);
  ld_service_peers_free(NULL);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(configured_then_connected_then_known, setup, teardown),
      cmocka_unit_test_setup_teardown(max_and_exclusions_are_respected, setup, teardown),
      cmocka_unit_test_setup_teardown(failed_peers_are_skipped_until_expiry, setup, teardown),
      cmocka_unit_test(failure_list_is_bounded),
      cmocka_unit_test(answers_are_told_apart),
      cmocka_unit_test(backoff_schedule),
      cmocka_unit_test_setup_teardown(transient_answers_pace_the_same_peer, setup, teardown),
      cmocka_unit_test(refused_and_broken_exchanges),
      cmocka_unit_test(side_by_side_answers_count_once),
      cmocka_unit_test(protocols_map_to_configured_services),
      cmocka_unit_test(without_a_node_nothing_is_picked),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
