/* The peer manager's decisions with a fake clock: nwaku's targets, dials toward the outbound
 * target (parallel limit, shards first), back-off of failed dials, the inbound relay target, IP
 * colocation, metadata gating, pruning of the store and service slots. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "base/error.h"
#include "node/peer_manager_core.h"
#include "p2p/key.h"

#define NPEERS 64
#define SEC 1000ull

static ld_peerid_t g_ids[NPEERS];

static int setup_ids(void **state) {
  (void)state;
  for (size_t i = 0; i < NPEERS; i++) {
    ld_privkey_t k;
    ld_pubkey_t pub;
    assert_int_equal(ld_privkey_generate(&k, LD_KEY_SECP256K1), 0);
    ld_privkey_public(&k, &pub);
    assert_int_equal(ld_peerid_from_pubkey(&g_ids[i], &pub), 0);
  }
  return 0;
}

static ld_pm_t *make(size_t max_conns, size_t capacity, size_t colocation) {
  static const uint16_t shards[] = {0, 1};
  ld_pm_config_t c;
  ld_pm_config_default(&c);
  c.max_connections = max_conns;
  c.capacity = capacity;
  c.colocation_limit = colocation;
  c.cluster_id = 7;
  c.shards = shards;
  c.n_shards = 2;
  c.seed = 42;
  ld_pm_t *pm = ld_pm_new(&c);
  assert_non_null(pm);
  return pm;
}

/* Adds peer i with an address, relay service and (when shard ≥ 0) that shard of cluster 7. */
static void add(ld_pm_t *pm, size_t i, int shard, ld_pm_origin_t origin, uint64_t now) {
  char text[64];
  snprintf(text, sizeof text, "/ip4/10.0.%zu.%zu/tcp/60000", i / 250, i % 250 + 1);
  ld_multiaddr_t ma;
  assert_int_equal(ld_multiaddr_parse(&ma, text), 0);
  uint16_t s = (uint16_t)(shard >= 0 ? shard : 0);
  ld_pm_peer_info_t info = {.addrs = &ma,
                            .n_addrs = 1,
                            .origin = origin,
                            .has_shards = shard >= 0,
                            .cluster_id = 7,
                            .shards = &s,
                            .n_shards = 1,
                            .services = LD_PM_RELAY};
  assert_true(ld_pm_add(pm, &g_ids[i], &info, now, NULL, 0) >= 0);
}

static size_t count_type(const ld_pm_action_t *a, size_t n, ld_pm_action_type_t t) {
  size_t k = 0;
  for (size_t i = 0; i < n; i++)
    k += a[i].type == t;
  return k;
}

static bool has_action(const ld_pm_action_t *a, size_t n, ld_pm_action_type_t t, size_t peer) {
  for (size_t i = 0; i < n; i++)
    if (a[i].type == t && ld_peerid_equal(&a[i].peer, &g_ids[peer]))
      return true;
  return false;
}

static size_t index_of(const ld_peerid_t *id) {
  for (size_t i = 0; i < NPEERS; i++)
    if (ld_peerid_equal(id, &g_ids[i]))
      return i;
  fail_msg("unknown peer");
  return 0;
}

static void targets_follow_nwaku(void **state) {
  (void)state;
  ld_pm_targets_t t;
  ld_pm_compute_targets(50, 50, &t);
  assert_int_equal(t.max_relay, 25);
  assert_int_equal(t.max_service, 25);
  assert_int_equal(t.out_relay, 8);
  assert_int_equal(t.in_relay, 17);
  ld_pm_compute_targets(50, 60, &t);
  assert_int_equal(t.max_relay, 30);
  assert_int_equal(t.max_service, 20);
  assert_int_equal(t.out_relay, 10);
  assert_int_equal(t.in_relay, 20);
  ld_pm_compute_targets(45, 55, &t); /* ceil(24.75), floor(20.25) */
  assert_int_equal(t.max_relay, 25);
  assert_int_equal(t.max_service, 20);
}

static void dials_toward_the_out_target_ten_at_a_time(void **state) {
  (void)state;
  ld_pm_t *pm = make(150, 1000, 0); /* relay 75: out 25, in 50 */
  for (size_t i = 0; i < 40; i++)
    add(pm, i, (int)(i % 2), LD_PM_ORIGIN_DISCV5, 0);
  ld_pm_action_t a[64];
  size_t n = ld_pm_connectivity(pm, 0, a, 64);
  assert_int_equal(n, 10); /* MaxParallelDials */
  assert_int_equal(count_type(a, n, LD_PM_DIAL), 10);
  /* the dials under way count: nothing more now */
  assert_int_equal(ld_pm_connectivity(pm, 1, a, 64), 0);
  for (size_t i = 0; i < n; i++) {
    ld_pm_on_dial_result(pm, &a[i].peer, true, 2);
    ld_pm_on_connected(pm, &a[i].peer, true, "10.0.0.1", 2, NULL, 0);
  }
  size_t in, out;
  ld_pm_relay_counts(pm, &in, &out);
  assert_int_equal(out, 10);
  n = ld_pm_connectivity(pm, 3, a, 64);
  assert_int_equal(count_type(a, n, LD_PM_DIAL), 10);
  for (size_t i = 0; i < n; i++) {
    const ld_pm_peer_t *p = ld_pm_get(pm, &a[i].peer);
    assert_int_equal(p->conns, 0); /* never a connected peer */
    ld_pm_on_connected(pm, &a[i].peer, true, "10.0.0.1", 4, NULL, 0);
  }
  n = ld_pm_connectivity(pm, 5, a, 64);
  assert_int_equal(count_type(a, n, LD_PM_DIAL), 5); /* 25 − 20 */
  for (size_t i = 0; i < n; i++)
    ld_pm_on_connected(pm, &a[i].peer, true, "10.0.0.1", 6, NULL, 0);
  assert_int_equal(ld_pm_connectivity(pm, 7, a, 64), 0); /* at target */
  assert_int_equal(ld_pm_next_interval(pm, 30000), 30000);
  ld_pm_free(pm);
}

static void an_empty_node_runs_the_loop_every_second(void **state) {
  (void)state;
  ld_pm_t *pm = make(50, 1000, 0);
  assert_int_equal(ld_pm_next_interval(pm, 30000), 1000);
  ld_pm_free(pm);
}

static void failed_dials_back_off_exponentially(void **state) {
  (void)state;
  ld_pm_t *pm = make(50, 1000, 0);
  add(pm, 0, 0, LD_PM_ORIGIN_DISCV5, 0);
  ld_pm_action_t a[8];
  uint64_t now = 0;
  uint64_t waits[] = {120 * SEC, 480 * SEC, 1920 * SEC, 7680 * SEC};
  for (size_t attempt = 0; attempt < 4; attempt++) {
    assert_int_equal(ld_pm_connectivity(pm, now, a, 8), 1);
    assert_true(has_action(a, 1, LD_PM_DIAL, 0));
    ld_pm_on_dial_result(pm, &g_ids[0], false, now);
    assert_false(ld_pm_can_dial(pm, &g_ids[0], now + waits[attempt] - 1));
    assert_int_equal(ld_pm_connectivity(pm, now + waits[attempt] - 1, a, 8), 0);
    now += waits[attempt];
    assert_true(ld_pm_can_dial(pm, &g_ids[0], now));
  }
  assert_int_equal(ld_pm_connectivity(pm, now, a, 8), 1);
  ld_pm_on_dial_result(pm, &g_ids[0], false, now); /* the fifth failure: given up */
  assert_false(ld_pm_can_dial(pm, &g_ids[0], now + 1000000 * SEC));
  /* a peer that connects is dialable again once it leaves */
  ld_pm_on_connected(pm, &g_ids[0], true, "10.0.0.1", now, NULL, 0);
  ld_pm_on_disconnected(pm, &g_ids[0], now);
  assert_true(ld_pm_can_dial(pm, &g_ids[0], now));
  ld_pm_free(pm);
}

static void a_success_clears_the_failures(void **state) {
  (void)state;
  ld_pm_t *pm = make(50, 1000, 0);
  add(pm, 0, 0, LD_PM_ORIGIN_DISCV5, 0);
  ld_pm_on_dialing(pm, &g_ids[0]);
  ld_pm_on_dial_result(pm, &g_ids[0], false, 0);
  ld_pm_on_dialing(pm, &g_ids[0]);
  ld_pm_on_dial_result(pm, &g_ids[0], true, 200 * SEC);
  assert_int_equal(ld_pm_get(pm, &g_ids[0])->failed_attempts, 0);
  assert_true(ld_pm_can_dial(pm, &g_ids[0], 200 * SEC));
  ld_pm_free(pm);
}

static void a_peer_held_off_is_not_dialed_until_it_connects(void **state) {
  (void)state;
  ld_pm_t *pm = make(50, 1000, 0);
  add(pm, 0, 0, LD_PM_ORIGIN_DISCV5, 0);
  ld_pm_action_t a[8];
  ld_pm_hold_off(pm, &g_ids[0], 120 * SEC);
  assert_int_equal(ld_pm_connectivity(pm, 119 * SEC, a, 8), 0);
  assert_int_equal(ld_pm_connectivity(pm, 120 * SEC, a, 8), 1);
  ld_pm_on_dial_result(pm, &g_ids[0], true, 120 * SEC);
  ld_pm_hold_off(pm, &g_ids[0], 500 * SEC);
  ld_pm_on_connected(pm, &g_ids[0], false, "10.0.0.1", 130 * SEC, NULL, 0); /* it came back */
  ld_pm_on_disconnected(pm, &g_ids[0], 131 * SEC);
  assert_true(ld_pm_can_dial(pm, &g_ids[0], 131 * SEC));
  ld_pm_free(pm);
}

static void colocation_drops_the_earliest_beyond_the_limit(void **state) {
  (void)state;
  ld_pm_t *pm = make(50, 1000, 2);
  ld_pm_action_t a[8];
  assert_int_equal(ld_pm_on_connected(pm, &g_ids[0], false, "192.0.2.1", 1, a, 8), 0);
  assert_int_equal(ld_pm_on_connected(pm, &g_ids[1], false, "192.0.2.1", 2, a, 8), 0);
  assert_int_equal(ld_pm_on_connected(pm, &g_ids[2], false, "192.0.2.9", 3, a, 8), 0);
  size_t n = ld_pm_on_connected(pm, &g_ids[3], false, "192.0.2.1", 4, a, 8);
  assert_int_equal(n, 2);
  assert_true(has_action(a, n, LD_PM_DISCONNECT, 0));
  assert_true(has_action(a, n, LD_PM_FORGET, 0));
  assert_null(ld_pm_get(pm, &g_ids[0]));
  assert_non_null(ld_pm_get(pm, &g_ids[1]));
  assert_non_null(ld_pm_get(pm, &g_ids[3]));
  ld_pm_free(pm);
  /* 0: no limit */
  pm = make(50, 1000, 0);
  for (size_t i = 0; i < 20; i++)
    assert_int_equal(ld_pm_on_connected(pm, &g_ids[i], false, "127.0.0.1", i, a, 8), 0);
  ld_pm_free(pm);
}

static void inbound_relay_peers_above_target_are_disconnected(void **state) {
  (void)state;
  ld_pm_t *pm = make(12, 1000, 0); /* relay 6: out 2, in 4 */
  ld_pm_action_t a[16];
  for (size_t i = 0; i < 6; i++) {
    add(pm, i, 0, LD_PM_ORIGIN_UNKNOWN, 0);
    size_t n = ld_pm_on_connected(pm, &g_ids[i], false, "10.0.0.1", i, a, 16);
    /* known relay peers: the fifth and sixth inbound ones are refused at once */
    assert_int_equal(n, i < 4 ? 0 : 1);
    if (n == 1)
      assert_true(has_action(a, n, LD_PM_DISCONNECT, i));
  }
  /* the loop agrees: two inbound relay peers too many */
  size_t n = ld_pm_connectivity(pm, 10, a, 16);
  assert_int_equal(count_type(a, n, LD_PM_DISCONNECT), 2);
  ld_pm_on_disconnected(pm, &g_ids[4], 11);
  ld_pm_on_disconnected(pm, &g_ids[5], 11);
  n = ld_pm_connectivity(pm, 12, a, 16);
  assert_int_equal(count_type(a, n, LD_PM_DISCONNECT), 0);
  ld_pm_free(pm);
}

static void another_cluster_is_disconnected_and_forgotten(void **state) {
  (void)state;
  ld_pm_t *pm = make(50, 1000, 0);
  add(pm, 0, 0, LD_PM_ORIGIN_DISCV5, 0);
  ld_pm_on_connected(pm, &g_ids[0], true, "10.0.0.1", 1, NULL, 0);
  ld_pm_action_t a[4];
  uint16_t shards[] = {3, 4};
  assert_int_equal(ld_pm_on_metadata(pm, &g_ids[0], 7, shards, 2, a, 4), 0);
  const ld_pm_peer_t *p = ld_pm_get(pm, &g_ids[0]);
  assert_int_equal(p->n_shards, 2);
  assert_int_equal(p->shards[1], 4);
  size_t n = ld_pm_on_metadata(pm, &g_ids[0], 7 + 65536, shards, 2, a, 4); /* not truncated */
  assert_int_equal(n, 2);
  assert_true(has_action(a, n, LD_PM_DISCONNECT, 0));
  assert_true(has_action(a, n, LD_PM_FORGET, 0));
  assert_null(ld_pm_get(pm, &g_ids[0]));
  ld_pm_free(pm);
}

static void pruning_keeps_capacity_connected_and_static_peers(void **state) {
  (void)state;
  ld_pm_t *pm = make(50, 12, 0);
  /* 0..4 failed five times, 5..9 without shards, 10..19 on shard 0, 20..21 connected without
   * shards, 22 static without shards */
  for (size_t i = 0; i < 23; i++)
    add(pm, i, i >= 10 && i < 20 ? 0 : -1, i == 22 ? LD_PM_ORIGIN_STATIC : LD_PM_ORIGIN_DISCV5, 0);
  for (size_t i = 0; i < 5; i++)
    for (int k = 0; k < 5; k++)
      ld_pm_on_dial_result(pm, &g_ids[i], false, 0);
  ld_pm_on_connected(pm, &g_ids[20], true, "10.0.0.1", 0, NULL, 0);
  ld_pm_on_connected(pm, &g_ids[21], true, "10.0.0.2", 0, NULL, 0);
  ld_pm_action_t a[32];
  size_t n = ld_pm_prune(pm, a, 32);
  assert_int_equal(n, 11);
  assert_int_equal(ld_pm_count(pm), 12);
  assert_int_equal(count_type(a, n, LD_PM_FORGET), 11);
  for (size_t i = 0; i < 10; i++) /* the failed and the shardless go first */
    assert_null(ld_pm_get(pm, &g_ids[i]));
  assert_non_null(ld_pm_get(pm, &g_ids[20]));
  assert_non_null(ld_pm_get(pm, &g_ids[21]));
  assert_non_null(ld_pm_get(pm, &g_ids[22]));
  size_t on_shard = 0;
  for (size_t i = 10; i < 20; i++)
    on_shard += ld_pm_get(pm, &g_ids[i]) != NULL;
  assert_int_equal(on_shard, 9);
  /* the store grows up to twice its capacity between prunes; beyond, adding prunes at once */
  for (size_t i = 30; i < 42; i++)
    add(pm, i, -1, LD_PM_ORIGIN_PX, 1);
  assert_int_equal(ld_pm_count(pm), 24);
  add(pm, 42, -1, LD_PM_ORIGIN_PX, 1);
  assert_int_equal(ld_pm_count(pm), 12);
  ld_pm_free(pm);
}

static void every_shard_gets_a_dial_first(void **state) {
  (void)state;
  ld_pm_t *pm = make(9, 1000, 0); /* relay 5: out 1 */
  for (size_t i = 0; i < 20; i++)
    add(pm, i, 0, LD_PM_ORIGIN_DISCV5, 0);
  add(pm, 20, 1, LD_PM_ORIGIN_DISCV5, 0);
  ld_pm_action_t a[8];
  /* out target 1 over two shards: the shard-0 dial comes first; once shard 0 has its peer the
   * next dial goes to the only peer on shard 1 */
  size_t n = ld_pm_connectivity(pm, 0, a, 8);
  assert_int_equal(n, 1);
  assert_true(index_of(&a[0].peer) < 20);
  ld_pm_free(pm);
  pm = make(18, 1000, 0); /* relay 9: out 3 over two shards */
  for (size_t i = 0; i < 20; i++)
    add(pm, i, 0, LD_PM_ORIGIN_DISCV5, 0);
  add(pm, 20, 1, LD_PM_ORIGIN_DISCV5, 0);
  n = ld_pm_connectivity(pm, 0, a, 8);
  assert_int_equal(n, 3);
  assert_true(has_action(a, n, LD_PM_DIAL, 20));
  ld_pm_free(pm);
}

static void service_slots(void **state) {
  (void)state;
  ld_pm_t *pm = make(50, 1000, 0);
  assert_null(ld_pm_select_service(pm, LD_PM_SLOT_STORE, 0));
  add(pm, 0, 0, LD_PM_ORIGIN_DISCV5, 0);
  add(pm, 1, 0, LD_PM_ORIGIN_DISCV5, 0);
  add(pm, 2, 0, LD_PM_ORIGIN_DISCV5, 0);
  ld_pm_set_services(pm, &g_ids[0], LD_PM_STORE);
  ld_pm_set_services(pm, &g_ids[1], LD_PM_STORE | LD_PM_RELAY);
  ld_pm_on_dial_result(pm, &g_ids[0], false, 0); /* backing off */
  assert_true(ld_peerid_equal(&ld_pm_select_service(pm, LD_PM_SLOT_STORE, 1)->id, &g_ids[1]));
  ld_pm_on_dial_result(pm, &g_ids[1], false, 0);
  assert_null(ld_pm_select_service(pm, LD_PM_SLOT_STORE, 1));
  ld_pm_on_connected(pm, &g_ids[0], true, "10.0.0.1", 2, NULL, 0); /* connected wins */
  assert_true(ld_peerid_equal(&ld_pm_select_service(pm, LD_PM_SLOT_STORE, 2)->id, &g_ids[0]));
  assert_null(ld_pm_select_service(pm, LD_PM_SLOT_FILTER, 2));
  assert_int_equal(ld_pm_set_slot(pm, LD_PM_SLOT_FILTER, &g_ids[2]), 0);
  assert_true(ld_peerid_equal(&ld_pm_select_service(pm, LD_PM_SLOT_FILTER, 2)->id, &g_ids[2]));
  assert_int_equal(ld_pm_set_slot(pm, LD_PM_SLOT_FILTER, &g_ids[40]), LD_ERR_NOT_FOUND);
  ld_pm_remove(pm, &g_ids[2]);
  assert_null(ld_pm_select_service(pm, LD_PM_SLOT_FILTER, 2));
  ld_pm_free(pm);
}

static void origins_and_static_peers_keep_theirs(void **state) {
  (void)state;
  ld_pm_t *pm = make(50, 1000, 0);
  add(pm, 0, 0, LD_PM_ORIGIN_STATIC, 0);
  add(pm, 0, 0, LD_PM_ORIGIN_DISCV5, 1);
  assert_int_equal(ld_pm_get(pm, &g_ids[0])->origin, LD_PM_ORIGIN_STATIC);
  add(pm, 1, 0, LD_PM_ORIGIN_PX, 0);
  add(pm, 1, 0, LD_PM_ORIGIN_DISCV5, 1);
  assert_int_equal(ld_pm_get(pm, &g_ids[1])->origin, LD_PM_ORIGIN_DISCV5);
  assert_string_equal(ld_pm_origin_name(LD_PM_ORIGIN_PX), "PeerExchange");
  assert_string_equal(ld_pm_origin_name(LD_PM_ORIGIN_DNS), "Dns");
  assert_string_equal(ld_pm_origin_name(LD_PM_ORIGIN_UNKNOWN), "UnknownOrigin");
  ld_pm_free(pm);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(targets_follow_nwaku),
      cmocka_unit_test(dials_toward_the_out_target_ten_at_a_time),
      cmocka_unit_test(an_empty_node_runs_the_loop_every_second),
      cmocka_unit_test(failed_dials_back_off_exponentially),
      cmocka_unit_test(a_success_clears_the_failures),
      cmocka_unit_test(a_peer_held_off_is_not_dialed_until_it_connects),
      cmocka_unit_test(colocation_drops_the_earliest_beyond_the_limit),
      cmocka_unit_test(inbound_relay_peers_above_target_are_disconnected),
      cmocka_unit_test(another_cluster_is_disconnected_and_forgotten),
      cmocka_unit_test(pruning_keeps_capacity_connected_and_static_peers),
      cmocka_unit_test(every_shard_gets_a_dial_first),
      cmocka_unit_test(service_slots),
      cmocka_unit_test(origins_and_static_peers_keep_theirs),
  };
  return cmocka_run_group_tests(tests, setup_ids, NULL);
}
