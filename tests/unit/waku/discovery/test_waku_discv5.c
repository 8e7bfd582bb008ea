/* The Waku search: the predicate (waku2 bits, dialable address, cluster and shards from rs/rsv,
 * the bootnode exception) and the loop over an in-memory network of engines. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "base/error.h"
#include "discv5_sim.h"
#include "waku/discovery/waku_discv5.h"

static ld_privkey_t g_key;

static void make_key(void) {
  uint8_t secret[32];
  memset(secret, 0x42, sizeof secret);
  assert_int_equal(ld_privkey_from_secp256k1(&g_key, secret), 0);
}

/* A record with the given waku2 bits (0: none), TCP port (0: none) and shards of `cluster`. */
static ld_enr_t record(uint8_t caps, uint16_t tcp, int cluster, const uint16_t *shards, size_t n) {
  ld_enr_builder_t b;
  ld_enr_t e;
  ld_enr_builder_init(&b, 1);
  uint8_t ip[4] = {1, 2, 3, 4};
  ld_enr_builder_set_ip4(&b, ip);
  ld_enr_builder_set_uint(&b, "udp", 9000);
  if (tcp)
    ld_enr_builder_set_uint(&b, "tcp", tcp);
  if (caps)
    ld_enr_builder_set_waku2(&b, caps);
  if (cluster >= 0)
    assert_int_equal(ld_enr_builder_set_shards(&b, (uint16_t)cluster, shards, n), 0);
  assert_int_equal(ld_enr_builder_sign(&b, &g_key, &e), 0);
  return e;
}

static void predicate(void **state) {
  (void)state;
  make_key();
  ld_waku_discv5_config_t cfg;
  ld_waku_discv5_config_default(&cfg);
  uint16_t ours[] = {2, 5};
  assert_int_equal(ld_waku_discv5_config_set_shards(&cfg, 42, ours, 2), 0);
  uint16_t s5[] = {5}, s3[] = {3}, many[100];
  for (int i = 0; i < 100; i++)
    many[i] = (uint16_t)(i * 3 + 2); /* 2, 5, 8, …: rsv, holds 5 */
  ld_enr_t e = record(0x01, 60000, 42, s5, 1);
  assert_int_equal(ld_waku_discv5_match(&cfg, &e), LD_WAKU_DISCV5_MATCH);
  e = record(0x01, 60000, 42, many, 100);
  assert_non_null(ld_enr_get(&e, "rsv", &(size_t){0}));
  assert_int_equal(ld_waku_discv5_match(&cfg, &e), LD_WAKU_DISCV5_MATCH);
  e = record(0x01, 60000, 42, s3, 1);
  assert_int_equal(ld_waku_discv5_match(&cfg, &e), LD_WAKU_DISCV5_OTHER_SHARDS);
  e = record(0x01, 60000, 7, s5, 1);
  assert_int_equal(ld_waku_discv5_match(&cfg, &e), LD_WAKU_DISCV5_OTHER_CLUSTER);
  e = record(0x01, 60000, -1, NULL, 0);
  assert_int_equal(ld_waku_discv5_match(&cfg, &e), LD_WAKU_DISCV5_NO_SHARDS);
  e = record(0x00, 60000, 42, s5, 1);
  assert_int_equal(ld_waku_discv5_match(&cfg, &e), LD_WAKU_DISCV5_NO_WAKU2);
  e = record(0x01, 0, 42, s5, 1);
  assert_int_equal(ld_waku_discv5_match(&cfg, &e), LD_WAKU_DISCV5_NOT_DIALABLE);
  /* Required capabilities. */
  cfg.required_caps = LD_ENR_STORE;
  e = record(LD_ENR_RELAY, 60000, 42, s5, 1);
  assert_int_equal(ld_waku_discv5_match(&cfg, &e), LD_WAKU_DISCV5_NO_WAKU2);
  e = record(LD_ENR_RELAY | LD_ENR_STORE, 60000, 42, s5, 1);
  assert_int_equal(ld_waku_discv5_match(&cfg, &e), LD_WAKU_DISCV5_MATCH);
  cfg.required_caps = 0;
  /* Any shard of the cluster when we name none. */
  assert_int_equal(ld_waku_discv5_config_set_shards(&cfg, 42, NULL, 0), 0);
  e = record(0x01, 60000, 42, s3, 1);
  assert_int_equal(ld_waku_discv5_match(&cfg, &e), LD_WAKU_DISCV5_MATCH);
  /* No cluster: only waku2 and an address count. */
  ld_waku_discv5_config_default(&cfg);
  e = record(0x01, 60000, 7, s3, 1);
  assert_int_equal(ld_waku_discv5_match(&cfg, &e), LD_WAKU_DISCV5_MATCH);
  /* A bootnode passes whatever it announces. */
  assert_int_equal(ld_waku_discv5_config_set_shards(&cfg, 42, ours, 2), 0);
  e = record(0, 0, -1, NULL, 0);
  assert_int_equal(ld_waku_discv5_match(&cfg, &e), LD_WAKU_DISCV5_NO_WAKU2);
  assert_int_equal(ld_waku_discv5_config_add_bootnode(&cfg, &e), 0);
  assert_int_equal(ld_waku_discv5_match(&cfg, &e), LD_WAKU_DISCV5_MATCH);
  /* Limits. */
  uint16_t bad = LD_ENR_MAX_SHARD + 1;
  assert_int_equal(ld_waku_discv5_config_set_shards(&cfg, 42, &bad, 1), LD_ERR_INVALID_ARG);
  assert_int_equal(ld_waku_discv5_config_set_shards(&cfg, 42, many, LD_WAKU_DISCV5_MAX_SHARDS + 1),
                   LD_ERR_LIMIT);
}

/* Nodes of the test network: every third node is a Waku relay node of cluster 42 shard 5, the
 * others are on cluster 7 or announce no waku2. */
static void waku_fields(size_t i, ld_enr_builder_t *b) {
  uint16_t s5 = 5;
  if (i == 0)
    return; /* the bootstrap node: a plain discv5 node */
  ld_enr_builder_set_uint(b, "tcp", 60000);
  if (i % 3 == 0) {
    ld_enr_builder_set_waku2(b, LD_ENR_RELAY);
    ld_enr_builder_set_shards(b, 42, &s5, 1);
  } else if (i % 3 == 1) {
    ld_enr_builder_set_waku2(b, LD_ENR_RELAY);
    ld_enr_builder_set_shards(b, 7, &s5, 1);
  }
}

typedef struct found {
  size_t count;
  size_t per_node[64];
  uint8_t ids[64][32];
  sim_t *sim;
} found_t;

static found_t g_found;

static void on_peer(void *ud, const ld_enr_t *enr) {
  found_t *f = ud;
  uint8_t id[32];
  assert_int_equal(ld_enr_node_id(enr, id), 0);
  for (size_t i = 0; i < f->sim->n; i++)
    if (memcmp(f->sim->nodes[i].id, id, 32) == 0)
      f->per_node[i]++;
  f->count++;
}

static ld_waku_discv5_t *g_search;

static void route(sim_node_t *n, ld_discv5_event_t *ev) {
  if (n->idx == 1 && g_search != NULL)
    ld_waku_discv5_on_event(g_search, ev, n->sim->now);
}

static void search_loop(void **state) {
  (void)state;
  enum { N = 40 };
  ld_discv5_config_t cfg;
  ld_discv5_config_default(&cfg);
  g_sim_enr_fields = waku_fields;
  sim_t *s = sim_new(N, &cfg, 31);
  g_sim_enr_fields = NULL;
  assert_non_null(s);
  memset(&g_found, 0, sizeof g_found);
  g_found.sim = s;
  s->on_event = route;
  for (size_t i = 1; i < N; i++)
    assert_true(ld_discv5_add_enr(s->nodes[i].d, &s->nodes[0].enr, true, s->now) >= 0);
  /* Node 1 runs the search for cluster 42, shard 5; node 0 is its bootnode. */
  ld_waku_discv5_config_t wcfg;
  ld_waku_discv5_config_default(&wcfg);
  uint16_t s5 = 5;
  assert_int_equal(ld_waku_discv5_config_set_shards(&wcfg, 42, &s5, 1), 0);
  assert_int_equal(ld_waku_discv5_config_add_bootnode(&wcfg, &s->nodes[0].enr), 0);
  g_search = ld_waku_discv5_new(s->nodes[1].d, &wcfg, on_peer, &g_found, s->now);
  assert_non_null(g_search);
  /* Everyone else looks around too, so that tables fill. */
  for (int round = 0; round < 12; round++) {
    for (size_t i = 2; i < N; i++)
      ld_discv5_lookup(s->nodes[i].d, NULL, s->now, NULL);
    uint64_t until = s->now + 5000;
    while (s->now < until) {
      uint64_t next = ld_waku_discv5_next_deadline(g_search);
      sim_run_until(s, next < until ? next : until);
      ld_waku_discv5_handle_timeout(g_search, s->now);
    }
  }
  ld_waku_discv5_stats_t st;
  ld_waku_discv5_get_stats(g_search, &st);
  assert_true(st.lookups >= 5);
  /* Every report is a node of cluster 42 or the bootnode, each once. */
  size_t matching = 0;
  for (size_t i = 0; i < N; i++) {
    bool should = i == 0 || (i != 1 && i % 3 == 0);
    if (!should)
      assert_int_equal(g_found.per_node[i], 0);
    else
      assert_true(g_found.per_node[i] <= 1);
    matching += should && g_found.per_node[i] == 1;
  }
  assert_int_equal(g_found.count, matching);
  assert_true(matching >= 8); /* of 13 */
  assert_true(st.rejected[LD_WAKU_DISCV5_OTHER_CLUSTER] > 0);
  assert_true(st.rejected[LD_WAKU_DISCV5_NO_WAKU2] > 0);
  /* After repeat_ms, seen again means reported again. */
  size_t before = g_found.count;
  s->now += wcfg.repeat_ms;
  for (int round = 0; round < 3; round++) {
    uint64_t until = s->now + 5000;
    while (s->now < until) {
      uint64_t next = ld_waku_discv5_next_deadline(g_search);
      sim_run_until(s, next < until ? next : until);
      ld_waku_discv5_handle_timeout(g_search, s->now);
    }
  }
  assert_true(g_found.count > before);
  ld_waku_discv5_free(g_search);
  g_search = NULL;
  sim_free(s);
}

/* With an empty table the lookup ends inside the call: the loop waits interval_ms. */
static void empty_table_waits(void **state) {
  (void)state;
  ld_discv5_config_t cfg;
  ld_discv5_config_default(&cfg);
  sim_t *s = sim_new(1, &cfg, 32);
  ld_waku_discv5_config_t wcfg;
  ld_waku_discv5_config_default(&wcfg);
  memset(&g_found, 0, sizeof g_found);
  g_found.sim = s;
  g_search = ld_waku_discv5_new(s->nodes[0].d, &wcfg, on_peer, &g_found, s->now);
  s->on_event = NULL;
  /* Route node 0's events. */
  s->nodes[0].idx = 1;
  s->on_event = route;
  ld_waku_discv5_handle_timeout(g_search, s->now);
  assert_int_equal(ld_waku_discv5_next_deadline(g_search), s->now + wcfg.interval_ms);
  ld_waku_discv5_handle_timeout(g_search, s->now + 1);
  ld_waku_discv5_stats_t st;
  ld_waku_discv5_get_stats(g_search, &st);
  assert_int_equal(st.lookups, 1);
  ld_waku_discv5_handle_timeout(g_search, s->now + wcfg.interval_ms);
  ld_waku_discv5_get_stats(g_search, &st);
  assert_int_equal(st.lookups, 2);
  ld_waku_discv5_free(g_search);
  g_search = NULL;
  sim_free(s);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(predicate),
      cmocka_unit_test(search_loop),
      cmocka_unit_test(empty_table_waits),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
