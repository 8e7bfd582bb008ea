/* nwaku's per-protocol health rules (rest/health.h): names and order, each service's dependence
 * on relay, each client's dependence on a service peer (or the node's own service), and
 * NOT_MOUNTED for what the node does not run. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "rest/health.h"

#define NR LD_REST_HEALTH_NOT_READY
#define RD LD_REST_HEALTH_READY
#define NM LD_REST_HEALTH_NOT_MOUNTED

#define PUSH_DESC "Node has no relay peers to fullfill push requests"
#define FILTER_DESC "Relay is not ready, filter will not be able to sort out messages"
#define LP_CLIENT_DESC "No Lightpush service peer available yet"
#define STORE_CLIENT_DESC                                                                          \
  "No Store service peer available yet, neither Store service set up for the node"
#define FILTER_CLIENT_DESC "No Filter service peer available yet"

enum {
  RELAY,
  RLN,
  LP,
  LEGACY_LP,
  FILTER,
  STORE,
  LEGACY_STORE,
  PX,
  RDV,
  MIX,
  LP_CLIENT,
  LEGACY_LP_CLIENT,
  STORE_CLIENT,
  LEGACY_STORE_CLIENT,
  FILTER_CLIENT,
};

static ld_rest_protocol_health_t g_out[LD_REST_HEALTH_N_PROTOCOLS];

static void eval(ld_rest_health_t relay, const ld_rest_protocols_t *p) {
  memset(g_out, 0, sizeof g_out);
  ld_rest_protocols_health(relay, p, g_out);
}

static void expect(size_t i, ld_rest_health_t h, const char *desc) {
  assert_int_equal(g_out[i].health, h);
  if (desc == NULL)
    assert_null(g_out[i].desc);
  else
    assert_string_equal(g_out[i].desc, desc);
}

static ld_rest_protocols_t all_services(void) {
  ld_rest_protocols_t p;
  memset(&p, 0, sizeof p);
  p.lightpush = p.legacy_lightpush = p.filter = p.store = p.peer_exchange = true;
  return p;
}

static ld_rest_protocols_t all_clients(void) {
  ld_rest_protocols_t p;
  memset(&p, 0, sizeof p);
  p.lightpush_client = p.legacy_lightpush_client = p.filter_client = p.store_client = true;
  return p;
}

static void names_follow_nwaku_order(void **state) {
  (void)state;
  static const char *const names[] = {
      "Relay",
      "Rln Relay",
      "Lightpush",
      "Legacy Lightpush",
      "Filter",
      "Store",
      "Legacy Store",
      "Peer Exchange",
      "Rendezvous",
      "Mix",
      "Lightpush Client",
      "Legacy Lightpush Client",
      "Store Client",
      "Legacy Store Client",
      "Filter Client",
  };
  ld_rest_protocols_t p;
  memset(&p, 0, sizeof p);
  eval(NM, &p);
  for (size_t i = 0; i < LD_REST_HEALTH_N_PROTOCOLS; i++) {
    assert_string_equal(g_out[i].name, names[i]);
    expect(i, NM, NULL);
  }
}

static void relay_status_and_desc(void **state) {
  (void)state;
  ld_rest_protocols_t p;
  memset(&p, 0, sizeof p);
  eval(NR, &p);
  expect(RELAY, NR, "No connected peers");
  eval(RD, &p);
  expect(RELAY, RD, NULL);
}

static void services_without_relay_peers(void **state) {
  (void)state;
  ld_rest_protocols_t p = all_services();
  eval(NR, &p);
  expect(LP, NR, PUSH_DESC);
  expect(LEGACY_LP, NR, PUSH_DESC);
  expect(FILTER, NR, FILTER_DESC);
  expect(STORE, RD, NULL);
  expect(PX, RD, NULL);
  static const size_t never[] = {RLN, LEGACY_STORE, RDV, MIX, LEGACY_STORE_CLIENT};
  for (size_t i = 0; i < sizeof never / sizeof never[0]; i++)
    expect(never[i], NM, NULL);
  /* no client of its own: the clients are not mounted */
  expect(LP_CLIENT, NM, NULL);
  expect(STORE_CLIENT, NM, NULL);
  expect(FILTER_CLIENT, NM, NULL);
}

static void services_with_relay_peers(void **state) {
  (void)state;
  ld_rest_protocols_t p = all_services();
  eval(RD, &p);
  for (size_t i = LP; i <= PX; i++)
    expect(i, i == LEGACY_STORE ? NM : RD, NULL);
}

static void clients_without_service_peers(void **state) {
  (void)state;
  ld_rest_protocols_t p = all_clients();
  eval(RD, &p);
  expect(LP_CLIENT, NR, LP_CLIENT_DESC);
  expect(LEGACY_LP_CLIENT, NR, LP_CLIENT_DESC);
  expect(STORE_CLIENT, NR, STORE_CLIENT_DESC);
  expect(FILTER_CLIENT, NR, FILTER_CLIENT_DESC);
  expect(LEGACY_STORE_CLIENT, NM, NULL);
}

static void clients_with_service_peers(void **state) {
  (void)state;
  ld_rest_protocols_t p = all_clients();
  p.lightpush_peer = p.store_peer = p.filter_peer = true;
  eval(NM, &p);
  expect(LP_CLIENT, RD, NULL);
  expect(STORE_CLIENT, RD, NULL);
  expect(FILTER_CLIENT, RD, NULL);
  /* each lightpush version needs a peer of its own */
  expect(LEGACY_LP_CLIENT, NR, LP_CLIENT_DESC);
  p.legacy_lightpush_peer = true;
  eval(NM, &p);
  expect(LEGACY_LP_CLIENT, RD, NULL);
}

static void clients_served_by_the_node_itself(void **state) {
  (void)state;
  ld_rest_protocols_t p = all_clients();
  p.lightpush = p.legacy_lightpush = p.store = p.filter = true;
  /* lightpush serves its own client only with relay ready; store always; filter never */
  eval(NR, &p);
  expect(LP_CLIENT, NR, LP_CLIENT_DESC);
  expect(LEGACY_LP_CLIENT, NR, LP_CLIENT_DESC);
  expect(STORE_CLIENT, RD, NULL);
  expect(FILTER_CLIENT, NR, FILTER_CLIENT_DESC);
  eval(RD, &p);
  expect(LP_CLIENT, RD, NULL);
  expect(LEGACY_LP_CLIENT, RD, NULL);
  expect(FILTER_CLIENT, NR, FILTER_CLIENT_DESC);
}

static void peers_alone_mount_nothing(void **state) {
  (void)state;
  ld_rest_protocols_t p;
  memset(&p, 0, sizeof p);
  p.lightpush_peer = p.legacy_lightpush_peer = p.store_peer = p.filter_peer = true;
  eval(RD, &p);
  for (size_t i = RLN; i < LD_REST_HEALTH_N_PROTOCOLS; i++)
    expect(i, NM, NULL);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(names_follow_nwaku_order),
      cmocka_unit_test(relay_status_and_desc),
      cmocka_unit_test(services_without_relay_peers),
      cmocka_unit_test(services_with_relay_peers),
      cmocka_unit_test(clients_without_service_peers),
      cmocka_unit_test(clients_with_service_peers),
      cmocka_unit_test(clients_served_by_the_node_itself),
      cmocka_unit_test(peers_alone_mount_nothing),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
