/* Discovery and the peer manager with real nodes on loopback in one process:
 * - 20 nodes that each know one bootstrap ENR (of an earlier node) find every other node through
 *   discv5 and reach their outbound relay target; /admin/v1/peers names the origin "Discv5";
 * - nodes of another cluster in the same DHT are never kept: not discovered, and a connection
 *   from one is closed and the peer forgotten;
 * - a node restarted with --peer-persistence redials the peers it knew;
 * - a configured --storenode fills the store slot. */
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

#include "base/clock.h"
#include "base/error.h"
#include "http_client.h"
#include "node/node_peers.h"
#include "node/peer_db.h"
#include "node/peer_manager.h"
#include "node_harness.h"

#define N_NODES 20
#define CONVERGE_MS 60000
#define STEP_MS 15000

static uv_loop_t g_loop;

static ld_node_config_t *discv5_config(uint16_t cluster, ld_node_t *bootstrap) {
  char err[256];
  ld_node_config_t *cfg = nh_config();
  cfg->cluster_id = cluster;
  cfg->discv5.enabled = true;
  cfg->discv5.udp_port = 0;
  /* every node is on 127.0.0.1: lift discv5's per-IP limits, as an operator of a local network
   * would with --discv5-table-ip-limit / --discv5-bucket-ip-limit */
  cfg->discv5.table_ip_limit = 1000;
  cfg->discv5.bucket_ip_limit = 1000;
  cfg->discv5.search_interval_ms = 300;
  cfg->pm.connectivity_interval_ms = 1000;
  /* 60:40: 12 relay peers, 4 dialed out and 8 let in, so that among 20 nodes everyone can
   * reach its outbound target (with 18 relay peers, 6 out and 12 in, a node connected to 12 in
   * and 5 out may find only full nodes among the 2 left: nwaku does not rebalance either) */
  cfg->max_connections = 20;
  if (bootstrap != NULL) {
    char enr[LD_ENR_TEXT_MAX];
    assert_true(ld_node_enr_text(bootstrap, enr, sizeof enr) > 0);
    assert_int_equal(ld_node_config_add_discv5_bootnode(cfg, enr, err, sizeof err), 0);
  }
  return cfg;
}

/* Peers of the store that came from discv5. */
static size_t discv5_peers(ld_node_t *n) {
  ld_pm_t *pm = ld_node_pm(n);
  size_t k = 0;
  for (size_t i = 0; i < ld_pm_count(pm); i++)
    k += ld_pm_at(pm, i)->origin == LD_PM_ORIGIN_DISCV5;
  return k;
}

static size_t out_relay(ld_node_t *n) {
  size_t in, out;
  ld_pm_relay_counts(ld_node_pm(n), &in, &out);
  return out;
}

static size_t in_relay(ld_node_t *n) {
  size_t in, out;
  ld_pm_relay_counts(ld_node_pm(n), &in, &out);
  return in;
}

static bool all_converged(ld_node_t **nodes, size_t n, size_t want_found) {
  for (size_t i = 0; i < n; i++) {
    const ld_pm_targets_t *t = ld_pm_targets(ld_node_pm(nodes[i]));
    if (discv5_peers(nodes[i]) < want_found || out_relay(nodes[i]) < t->out_relay)
      return false;
  }
  return true;
}

static void twenty_nodes_find_each_other_through_discv5(void **state) {
  (void)state;
  ld_node_t *nodes[N_NODES];
  uint64_t t0 = ld_now_ms();
  for (size_t i = 0; i < N_NODES; i++) {
    ld_node_config_t *cfg = discv5_config(0, i > 0 ? nodes[(i - 1) / 2] : NULL);
    if (i == 1) {
      cfg->rest.enabled = true;
      cfg->rest.port = 0;
      cfg->rest_admin = true;
    }
    nodes[i] = nh_start(&g_loop, cfg);
    assert_non_null(ld_node_discv5(nodes[i]));
    assert_true(ld_node_discv5_port(nodes[i]) > 0);
  }
  /* every node learns the 19 others (the root learns them as they bootstrap from it) and holds
   * its outbound relay target */
  NH_WAIT_FOR(&g_loop, all_converged(nodes, N_NODES, N_NODES - 1), CONVERGE_MS);
  print_message("20 nodes converged in %llu ms\n", (unsigned long long)(ld_now_ms() - t0));
  for (size_t i = 0; i < N_NODES; i++) {
    const ld_pm_targets_t *t = ld_pm_targets(ld_node_pm(nodes[i]));
    assert_int_equal(t->out_relay, 4);
    NH_WAIT_FOR(&g_loop, in_relay(nodes[i]) <= t->in_relay, STEP_MS); /* pruned if above */
    assert_true(ld_node_connected_peers(nodes[i], NULL, 0) <= 20);
  }
  /* the ENR a node serves carries its discv5 port */
  char enr_text[LD_ENR_TEXT_MAX];
  ld_enr_t enr;
  uint16_t udp = 0;
  assert_true(ld_node_enr_text(nodes[3], enr_text, sizeof enr_text) > 0);
  assert_int_equal(ld_enr_parse_text(&enr, enr_text), 0);
  assert_int_equal(ld_enr_port(&enr, "udp", &udp), 0);
  assert_int_equal(udp, ld_node_discv5_port(nodes[3]));
  /* /admin/v1/peers names where the peers came from */
  http_response_t r;
  assert_int_equal(http_request_on_loop(&g_loop, ld_node_rest_port(nodes[1]), "GET",
                                        "/admin/v1/peers", NULL, NULL, 0, &r),
                   0);
  assert_int_equal(r.status, 200);
  assert_non_null(strstr(r.body, "\"origin\":\"Discv5\""));
  http_response_free(&r);
  for (size_t i = 0; i < N_NODES; i++)
    nh_stop(&g_loop, nodes[i], STEP_MS);
}

static bool holds_peer(ld_node_t *n, ld_node_t *other) {
  return ld_pm_get(ld_node_pm(n), ld_node_peer_id(other)) != NULL ||
         ld_node_peer_connected(n, ld_node_peer_id(other));
}

static void on_dialed(ld_conn_t *c, int err, void *ud) {
  (void)c;
  *(int *)ud = err == 0 ? 1 : -1;
}

static bool found_all(ld_node_t **nodes, size_t n) {
  for (size_t i = 0; i < n; i++)
    if (discv5_peers(nodes[i]) < n - 1 || ld_node_connected_peers(nodes[i], NULL, 0) == 0)
      return false;
  return true;
}

static void other_cluster_nodes_are_never_kept(void **state) {
  (void)state;
  enum { N_OURS = 5, N_OTHERS = 3 };
  ld_node_t *ours[N_OURS], *others[N_OTHERS];
  for (size_t i = 0; i < N_OURS; i++)
    ours[i] = nh_start(&g_loop, discv5_config(7, i > 0 ? ours[0] : NULL));
  for (size_t i = 0; i < N_OTHERS; i++)
    others[i] = nh_start(&g_loop, discv5_config(8, ours[0]));
  /* ours find each other; the other cluster's records are in the same DHT */
  NH_WAIT_FOR(&g_loop, found_all(ours, N_OURS), CONVERGE_MS);
  nh_run_for(&g_loop, 2000); /* more lookups */
  for (size_t i = 0; i < N_OURS; i++)
    for (size_t k = 0; k < N_OTHERS; k++)
      assert_false(holds_peer(ours[i], others[k]));
  /* a node of the other cluster that connects on its own is disconnected and forgotten */
  char addr[LD_MULTIADDR_TEXT_MAX];
  nh_addr_text(ours[1], addr, sizeof addr);
  ld_multiaddr_t ma;
  assert_int_equal(ld_multiaddr_parse(&ma, addr), 0);
  int dialed = 0;
  assert_int_equal(ld_switch_dial(ld_node_switch(others[0]), &ma, on_dialed, &dialed), 0);
  NH_WAIT_FOR(&g_loop, dialed != 0, STEP_MS);
  NH_WAIT_FOR(&g_loop, !holds_peer(ours[1], others[0]) && !holds_peer(others[0], ours[1]), STEP_MS);
  nh_run_for(&g_loop, 1500);
  assert_false(holds_peer(ours[1], others[0]));
  for (size_t i = 0; i < N_OURS; i++)
    nh_stop(&g_loop, ours[i], STEP_MS);
  for (size_t i = 0; i < N_OTHERS; i++)
    nh_stop(&g_loop, others[i], STEP_MS);
}

#define KEY_A "5a0ab2f71f2a6b1e4c5d7b2f9e3c1a08d4b6e2f7c9a1b3d5e7f90213a4c6e8b1"

static ld_node_config_t *persistent_config(const char *db) {
  char err[256];
  ld_node_config_t *cfg = nh_config();
  assert_int_equal(ld_node_config_set_nodekey_hex(cfg, KEY_A, err, sizeof err), 0);
  cfg->pm.persistence = true;
  snprintf(cfg->pm.db_path, sizeof cfg->pm.db_path, "%s", db);
  cfg->pm.connectivity_interval_ms = 1000;
  return cfg;
}

static void a_restarted_node_redials_its_peers(void **state) {
  (void)state;
  char db[] = "/tmp/ld-peers-XXXXXX";
  int fd = mkstemp(db);
  assert_true(fd >= 0);
  close(fd);
  ld_node_t *b = nh_start(&g_loop, nh_config());
  ld_node_t *c = nh_start(&g_loop, nh_config());
  ld_node_t *a = nh_start(&g_loop, persistent_config(db));
  ld_node_t *peers[] = {b, c};
  for (size_t i = 0; i < 2; i++) {
    char addr[LD_MULTIADDR_TEXT_MAX];
    nh_addr_text(peers[i], addr, sizeof addr);
    ld_multiaddr_t ma;
    assert_int_equal(ld_multiaddr_parse(&ma, addr), 0);
    int dialed = 0;
    assert_int_equal(ld_switch_dial(ld_node_switch(a), &ma, on_dialed, &dialed), 0);
    NH_WAIT_FOR(&g_loop, dialed == 1, STEP_MS);
  }
  /* identified as relay peers */
  NH_WAIT_FOR(&g_loop, out_relay(a) == 2, STEP_MS);
  nh_stop(&g_loop, a, STEP_MS);
  NH_WAIT_FOR(&g_loop,
              ld_node_connected_peers(b, NULL, 0) == 0 && ld_node_connected_peers(c, NULL, 0) == 0,
              STEP_MS);
  ld_peer_db_t *pdb = NULL;
  assert_int_equal(ld_peer_db_open(db, &pdb), 0);
  assert_int_equal(ld_peer_db_count(pdb), 2);
  ld_peer_db_close(pdb);
  /* the same node again, told about nobody */
  a = nh_start(&g_loop, persistent_config(db));
  NH_WAIT_FOR(&g_loop,
              ld_node_peer_connected(a, ld_node_peer_id(b)) &&
                  ld_node_peer_connected(a, ld_node_peer_id(c)),
              STEP_MS);
  nh_stop(&g_loop, a, STEP_MS);
  nh_stop(&g_loop, b, STEP_MS);
  nh_stop(&g_loop, c, STEP_MS);
  unlink(db);
  char side[sizeof db + 8];
  snprintf(side, sizeof side, "%s-wal", db);
  unlink(side);
  snprintf(side, sizeof side, "%s-shm", db);
  unlink(side);
}

static void configured_service_peers_fill_their_slots(void **state) {
  (void)state;
  char err[256], addr[LD_MULTIADDR_TEXT_MAX];
  ld_node_t *b = nh_start(&g_loop, nh_config());
  nh_addr_text(b, addr, sizeof addr);
  ld_node_config_t *cfg = nh_config();
  assert_int_equal(
      ld_node_config_set_service_node(cfg, LD_NODE_SERVICE_STORE, addr, err, sizeof err), 0);
  ld_node_t *a = nh_start(&g_loop, cfg);
  const ld_pm_peer_t *p = ld_pm_select_service(ld_node_pm(a), LD_PM_SLOT_STORE, ld_now_ms());
  assert_non_null(p);
  assert_true(ld_peerid_equal(&p->id, ld_node_peer_id(b)));
  assert_null(ld_pm_select_service(ld_node_pm(a), LD_PM_SLOT_FILTER, ld_now_ms()));
  nh_stop(&g_loop, a, STEP_MS);
  nh_stop(&g_loop, b, STEP_MS);
}

int main(void) {
  uv_loop_init(&g_loop);
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(twenty_nodes_find_each_other_through_discv5),
      cmocka_unit_test(other_cluster_nodes_are_never_kept),
      cmocka_unit_test(a_restarted_node_redials_its_peers),
      cmocka_unit_test(configured_service_peers_fill_their_slots),
  };
  int rc = cmocka_run_group_tests(tests, NULL, NULL);
  uv_loop_close(&g_loop);
  return rc;
}
