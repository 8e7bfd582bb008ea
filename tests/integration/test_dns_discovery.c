/* DNS discovery (EIP-1459) end to end on loopback: a real dnsmasq serves a tree of two nodes'
 * records, built and signed by ld_dns_tree_build; a third node started with --dns-discovery-url
 * and --dns-discovery-name-server resolves it with c-ares, hands both records to its peer manager
 * (origin Dns) and connects to both. A tree whose root
 * was signed by another key, and a name server with no tree, end the discovery with their named
 * errors and dial nobody. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <uv.h>

#include "base/error.h"
#include "node/node.h"
#include "node/node_peers.h"
#include "node/peer_manager.h"
#include "dnsmasq_child.h"
#include "node_harness.h"

#define STEP_MS 20000
#define DOMAIN "nodes.dnsdisc.test"

static uv_loop_t g_loop;
static uint8_t g_tree_key[32], g_other_key[32];
static dnsmasq_child_t g_dns; /* stopped after each test, failed ones included */

#define WAIT_FOR(cond) NH_WAIT_FOR(&g_loop, cond, STEP_MS)

static void node_enr(ld_node_t *node, ld_enr_t *out) {
  char text[LD_ENR_TEXT_MAX];
  assert_true(ld_node_enr_text(node, text, sizeof text) > 0);
  assert_int_equal(ld_enr_parse_text(out, text), 0);
}

static bool connected_to(ld_node_t *node, ld_node_t *peer) {
  ld_peerid_t ids[16];
  size_t n = ld_node_connected_peers(node, ids, 16);
  for (size_t i = 0; i < n && i < 16; i++)
    if (ld_peerid_equal(&ids[i], ld_node_peer_id(peer)))
      return true;
  return false;
}

/* Starts a node that resolves `url` through `server`. */
static ld_node_t *start_resolving(const char *url, const char *server) {
  ld_node_config_t *cfg = nh_config();
  char err[256];
  assert_int_equal(ld_node_config_set_dns_discovery_url(cfg, url, err, sizeof err), 0);
  assert_int_equal(ld_node_config_add_dns_name_server(cfg, server, err, sizeof err), 0);
  return nh_start(&g_loop, cfg);
}

static void finished(ld_node_t *node) {
  WAIT_FOR(ld_node_dns_status(node, NULL) != LD_ERR_AGAIN);
}

static void tree_peers_are_dialed(void **state) {
  (void)state;
  ld_node_t *b = nh_start(&g_loop, nh_config());
  ld_node_t *c = nh_start(&g_loop, nh_config());
  ld_enr_t enrs[2];
  node_enr(b, &enrs[0]);
  node_enr(c, &enrs[1]);
  ld_dns_built_t tree;
  assert_int_equal(ld_dns_tree_build(enrs, 2, NULL, 0, DOMAIN, 5, g_tree_key, &tree), 0);
  const char *domains[] = {DOMAIN};
  dnsmasq_child_t *dns = &g_dns;
  assert_int_equal(dnsmasq_start(dns, &tree, domains, 1), 0);

  ld_node_t *a = start_resolving(tree.url, dns->server);
  assert_int_equal(ld_node_dns_status(a, NULL), LD_ERR_AGAIN);
  WAIT_FOR(connected_to(a, b) && connected_to(a, c));
  size_t records = 0;
  assert_int_equal(ld_node_dns_status(a, &records), 0);
  assert_int_equal(records, 2);
  /* the peer manager knows where they came from */
  const ld_pm_peer_t *pb = ld_pm_get(ld_node_pm(a), ld_node_peer_id(b));
  const ld_pm_peer_t *pc = ld_pm_get(ld_node_pm(a), ld_node_peer_id(c));
  assert_non_null(pb);
  assert_non_null(pc);
  assert_int_equal(pb->origin, LD_PM_ORIGIN_DNS);
  assert_int_equal(pc->origin, LD_PM_ORIGIN_DNS);

  nh_stop(&g_loop, a, STEP_MS);
  nh_stop(&g_loop, b, STEP_MS);
  nh_stop(&g_loop, c, STEP_MS);
  ld_dns_built_clear(&tree);
}

static void bad_trees_dial_nobody(void **state) {
  (void)state;
  ld_node_t *b = nh_start(&g_loop, nh_config());
  ld_enr_t enr;
  node_enr(b, &enr);
  /* the tree is signed by g_other_key; the URL names g_tree_key */
  ld_dns_built_t forged, genuine;
  assert_int_equal(ld_dns_tree_build(&enr, 1, NULL, 0, DOMAIN, 5, g_other_key, &forged), 0);
  assert_int_equal(ld_dns_tree_build(&enr, 1, NULL, 0, DOMAIN, 5, g_tree_key, &genuine), 0);
  const char *domains[] = {DOMAIN};
  dnsmasq_child_t *dns = &g_dns;
  assert_int_equal(dnsmasq_start(dns, &forged, domains, 1), 0);
  ld_node_t *a = start_resolving(genuine.url, dns->server);
  finished(a);
  size_t records = 9;
  assert_int_equal(ld_node_dns_status(a, &records), LD_ERR_BAD_SIGNATURE);
  assert_int_equal(records, 0);
  nh_run_for(&g_loop, 300);
  assert_false(connected_to(a, b));
  nh_stop(&g_loop, a, STEP_MS);

  /* a domain the server does not serve: dnsmasq refuses the lookup */
  char url[LD_DNS_URL_MAX + 1];
  snprintf(url, sizeof url, "%.*s@elsewhere.dnsdisc.test",
           (int)(strchr(genuine.url, '@') - genuine.url), genuine.url);
  a = start_resolving(url, dns->server);
  finished(a);
  assert_int_equal(ld_node_dns_status(a, NULL), LD_ERR_DNS_QUERY);
  nh_stop(&g_loop, a, STEP_MS);

  nh_stop(&g_loop, b, STEP_MS);
  ld_dns_built_clear(&forged);
  ld_dns_built_clear(&genuine);
}

static int stop_dns(void **state) {
  (void)state;
  dnsmasq_stop(&g_dns);
  return 0;
}

static int setup(void **state) {
  (void)state;
  memset(g_tree_key, 0x42, sizeof g_tree_key);
  memset(g_other_key, 0x43, sizeof g_other_key);
  return uv_loop_init(&g_loop);
}

static int teardown(void **state) {
  (void)state;
  nh_run_for(&g_loop, 50);
  return uv_loop_close(&g_loop) == 0 ? 0 : -1;
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_teardown(tree_peers_are_dialed, stop_dns),
      cmocka_unit_test_teardown(bad_trees_dial_nobody, stop_dns),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
