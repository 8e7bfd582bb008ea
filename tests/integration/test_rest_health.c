/* GET /health's per-protocol entries on real nodes in one process over loopback, by nwaku's
 * health monitor rules (rest/health.h):
 *   S serves relay, lightpush, filter, store and peer exchange: without relay peers lightpush and
 *     filter are NOT_READY with nwaku's reasons, store and peer exchange READY; once R (a plain
 *     relay node, all but Relay NOT_MOUNTED) joins it, all of them are READY;
 *   C runs no relay and names S as --storenode, --lightpushnode and --filternode: its client
 *     entries are READY;
 *   E runs no relay and an Edge-mode Messaging API client without any configured service node:
 *     its lightpush, store and filter clients are NOT_READY until it connects to S, then READY;
 *     with the client gone the Messaging API's clients are NOT_MOUNTED again. */
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
#include "base/error.h"
#include "http_client.h"
#include "messaging/messaging.h"
#include "node_harness.h"
#include "node/node.h"
#include "p2p/switch.h"

#define STEP_MS 20000

#define NO_RELAY_PEERS "No connected peers"
#define PUSH_DESC "Node has no relay peers to fullfill push requests"
#define FILTER_DESC "Relay is not ready, filter will not be able to sort out messages"
#define LP_CLIENT_DESC "No Lightpush service peer available yet"
#define STORE_CLIENT_DESC                                                                          \
  "No Store service peer available yet, neither Store service set up for the node"
#define FILTER_CLIENT_DESC "No Filter service peer available yet"

#define NM "NOT_MOUNTED"
#define NR "NOT_READY"
#define RD "READY"

typedef struct tnode {
  ld_node_t *node;
  ld_messaging_t *m;
  uint16_t rest;
  char addr[LD_MULTIADDR_TEXT_MAX];
  bool stopped, freed;
} tnode_t;

/* One expected entry: status and desc (NULL: none). */
typedef struct entry {
  const char *status;
  const char *desc;
} entry_t;

static const char *const NAMES[15] = {
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

enum {
  RELAY,
  LP = 2,
  LEGACY_LP,
  FILTER,
  STORE,
  PX = 7,
  LP_CLIENT = 10,
  LEGACY_LP_CLIENT,
  STORE_CLIENT,
  LEGACY_STORE_CLIENT,
  FILTER_CLIENT
};

static uv_loop_t g_loop;
static tnode_t g_s, g_r, g_c, g_e;
static bool g_dialed;
static int g_dial_err;

static void pump(void) {
  uv_run(&g_loop, UV_RUN_ONCE);
}

/* ---- nodes ----------------------------------------------------------------------------------- */

static ld_node_config_t *config(bool relay) {
  char err[256];
  ld_node_config_t *cfg = nh_config();
  assert_int_equal(ld_node_config_set_rest(cfg, true, "127.0.0.1", 0, 0, err, sizeof err), 0);
  assert_int_equal(ld_node_config_set_num_shards(cfg, 8, err, sizeof err), 0);
  cfg->relay = relay;
  return cfg;
}

static void start(tnode_t *t, ld_node_config_t *cfg) {
  t->node = nh_start(&g_loop, cfg);
  t->rest = ld_node_rest_port(t->node);
  assert_true(t->rest > 0);
  nh_addr_text(t->node, t->addr, sizeof t->addr);
}

static void start_service(tnode_t *t) {
  char err[256];
  ld_node_config_t *cfg = config(true);
  cfg->lightpush = cfg->filter = cfg->store = cfg->peer_exchange = true;
  assert_int_equal(ld_node_config_set_store_db_url(cfg, "memory://", err, sizeof err), 0);
  start(t, cfg);
}

static void start_client(tnode_t *t, const char *service) {
  char err[256];
  ld_node_config_t *cfg = config(false);
  static const ld_node_service_t all[] = {LD_NODE_SERVICE_STORE, LD_NODE_SERVICE_FILTER,
                                          LD_NODE_SERVICE_LIGHTPUSH};
  for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
    assert_int_equal(ld_node_config_set_service_node(cfg, all[i], service, err, sizeof err), 0);
  start(t, cfg);
}

static void start_edge(tnode_t *t) {
  start(t, config(false));
  ld_messaging_config_t mc;
  ld_messaging_config_default(&mc);
  mc.mode = LD_MESSAGING_EDGE;
  mc.reliability = false;
  int rc = 0;
  t->m = ld_messaging_new(t->node, &mc, &rc);
  assert_non_null(t->m);
}

static void start_relay_peer(tnode_t *t, const char *static_node) {
  char err[256];
  ld_node_config_t *cfg = config(true);
  assert_int_equal(ld_node_config_add_static_node(cfg, static_node, err, sizeof err), 0);
  start(t, cfg);
}

static void on_freed(void *ud) {
  ((tnode_t *)ud)->freed = true;
}

static void on_stopped(void *ud) {
  ((tnode_t *)ud)->stopped = true;
}

static void free_messaging(tnode_t *t) {
  uint64_t deadline = ld_now_ms() + STEP_MS;
  ld_messaging_free(t->m, on_freed, t);
  t->m = NULL;
  while (!t->freed && ld_now_ms() < deadline)
    pump();
  assert_true(t->freed);
}

static void stop(tnode_t *t) {
  if (t->node == NULL)
    return;
  if (t->m != NULL)
    free_messaging(t);
  uint64_t deadline = ld_now_ms() + STEP_MS;
  ld_node_stop(t->node, on_stopped, t);
  while (!t->stopped && ld_now_ms() < deadline)
    pump();
  assert_true(t->stopped);
}

static int setup(void **state) {
  (void)state;
  uv_loop_init(&g_loop);
  start_service(&g_s);
  start_client(&g_c, g_s.addr);
  start_edge(&g_e);
  return 0;
}

static int teardown(void **state) {
  (void)state;
  stop(&g_e);
  stop(&g_c);
  stop(&g_r);
  stop(&g_s);
  uv_run(&g_loop, UV_RUN_NOWAIT);
  return 0;
}

/* ---- /health --------------------------------------------------------------------------------- */

static http_response_t get_health(const tnode_t *t) {
  http_response_t r;
  assert_int_equal(http_request_on_loop(&g_loop, t->rest, "GET", "/health", NULL, NULL, 0, &r), 0);
  assert_int_equal(r.status, 200);
  return r;
}

/* The protocolsHealth list (a new reference), checked for nwaku's names and order. */
static json_t *protocols(const tnode_t *t) {
  http_response_t r = get_health(t);
  json_error_t err;
  json_t *h = json_loads(r.body, 0, &err);
  http_response_free(&r);
  assert_non_null(h);
  assert_string_equal(json_string_value(json_object_get(h, "nodeHealth")), "READY");
  json_t *list = json_incref(json_object_get(h, "protocolsHealth"));
  json_decref(h);
  assert_int_equal(json_array_size(list), 15);
  for (size_t i = 0; i < 15; i++) {
    json_t *e = json_array_get(list, i);
    assert_non_null(json_object_get(e, NAMES[i]));
    assert_int_equal(json_object_size(e), json_object_get(e, "desc") != NULL ? 2 : 1);
  }
  return list;
}

static bool entry_is(json_t *list, size_t i, const char *status, const char *desc) {
  json_t *e = json_array_get(list, i);
  const char *s = json_string_value(json_object_get(e, NAMES[i]));
  const char *d = json_string_value(json_object_get(e, "desc"));
  if (s == NULL || strcmp(s, status) != 0)
    return false;
  return desc == NULL ? d == NULL : d != NULL && strcmp(d, desc) == 0;
}

static void expect_entry(json_t *list, size_t i, const char *status, const char *desc) {
  if (!entry_is(list, i, status, desc)) {
    char *text = json_dumps(json_array_get(list, i), JSON_COMPACT);
    print_error("%s: expected %s (%s), got %s\n", NAMES[i], status, desc ? desc : "-", text);
    free(text);
  }
  assert_true(entry_is(list, i, status, desc));
}

/* Asserts all 15 entries. */
static void expect_all(const tnode_t *t, const entry_t want[15]) {
  json_t *list = protocols(t);
  for (size_t i = 0; i < 15; i++)
    expect_entry(list, i, want[i].status, want[i].desc);
  json_decref(list);
}

/* Polls until entry `i` of `t` has `status`. */
static void wait_entry(const tnode_t *t, size_t i, const char *status) {
  uint64_t deadline = ld_now_ms() + STEP_MS;
  bool ok = false;
  while (!ok && ld_now_ms() < deadline) {
    json_t *list = protocols(t);
    json_t *e = json_array_get(list, i);
    ok = strcmp(json_string_value(json_object_get(e, NAMES[i])), status) == 0;
    json_decref(list);
    if (!ok)
      pump();
  }
  assert_true(ok);
}

/* ---- tests ----------------------------------------------------------------------------------- */

static void service_node_without_relay_peers(void **state) {
  (void)state;
  static const entry_t want[15] = {
      {NR, NO_RELAY_PEERS}, {NM, NULL}, {NR, PUSH_DESC}, {NR, PUSH_DESC}, {NR, FILTER_DESC},
      {RD, NULL},           {NM, NULL}, {RD, NULL},      {NM, NULL},      {NM, NULL},
      {NM, NULL},           {NM, NULL}, {NM, NULL},      {NM, NULL},      {NM, NULL},
  };
  expect_all(&g_s, want);
  /* nwaku's field order: the protocol's name, then desc */
  http_response_t r = get_health(&g_s);
  assert_non_null(strstr(r.body, "{\"Lightpush\":\"NOT_READY\",\"desc\":\"" PUSH_DESC "\"}"));
  assert_non_null(strstr(r.body, "{\"Store\":\"READY\"},{\"Legacy Store\":\"NOT_MOUNTED\"}"));
  http_response_free(&r);
}

static void configured_service_nodes_make_clients_ready(void **state) {
  (void)state;
  static const entry_t want[15] = {
      {NM, NULL}, {NM, NULL}, {NM, NULL}, {NM, NULL}, {NM, NULL},
      {NM, NULL}, {NM, NULL}, {NM, NULL}, {NM, NULL}, {NM, NULL},
      {RD, NULL}, {RD, NULL}, {RD, NULL}, {NM, NULL}, {RD, NULL},
  };
  expect_all(&g_c, want);
}

static void on_dial(ld_conn_t *c, int err, void *ud) {
  (void)c;
  (void)ud;
  g_dial_err = err;
  g_dialed = true;
}

static void messaging_clients_follow_service_peers(void **state) {
  (void)state;
  static const entry_t alone[15] = {
      {NM, NULL},
      {NM, NULL},
      {NM, NULL},
      {NM, NULL},
      {NM, NULL},
      {NM, NULL},
      {NM, NULL},
      {NM, NULL},
      {NM, NULL},
      {NM, NULL},
      {NR, LP_CLIENT_DESC},
      {NM, NULL},
      {NR, STORE_CLIENT_DESC},
      {NM, NULL},
      {NR, FILTER_CLIENT_DESC},
  };
  expect_all(&g_e, alone);
  http_response_t r = get_health(&g_e);
  assert_non_null(strstr(r.body, "\"connectionStatus\":\"Disconnected\""));
  http_response_free(&r);

  /* connected to S, whose identified protocols land in E's peer store */
  ld_multiaddr_t addr;
  assert_int_equal(ld_multiaddr_parse(&addr, g_s.addr), 0);
  assert_int_equal(ld_switch_dial(ld_node_switch(g_e.node), &addr, on_dial, NULL), 0);
  uint64_t deadline = ld_now_ms() + STEP_MS;
  while (!g_dialed && ld_now_ms() < deadline)
    pump();
  assert_true(g_dialed);
  assert_int_equal(g_dial_err, 0);
  wait_entry(&g_e, LP_CLIENT, RD);
  json_t *list = protocols(&g_e);
  expect_entry(list, STORE_CLIENT, RD, NULL);
  expect_entry(list, FILTER_CLIENT, RD, NULL);
  expect_entry(list, LEGACY_LP_CLIENT, NM, NULL);
  expect_entry(list, LEGACY_STORE_CLIENT, NM, NULL);
  json_decref(list);

  /* without the Messaging API client its lightpush and store clients are gone; the node's
   * filter client it created stays */
  free_messaging(&g_e);
  list = protocols(&g_e);
  expect_entry(list, LP_CLIENT, NM, NULL);
  expect_entry(list, STORE_CLIENT, NM, NULL);
  expect_entry(list, FILTER_CLIENT, RD, NULL);
  json_decref(list);
  r = get_health(&g_e);
  assert_null(strstr(r.body, "connectionStatus"));
  http_response_free(&r);
}

static void relay_peers_make_services_ready(void **state) {
  (void)state;
  start_relay_peer(&g_r, g_s.addr);
  wait_entry(&g_s, RELAY, RD);
  static const entry_t served[15] = {
      {RD, NULL}, {NM, NULL}, {RD, NULL}, {RD, NULL}, {RD, NULL},
      {RD, NULL}, {NM, NULL}, {RD, NULL}, {NM, NULL}, {NM, NULL},
      {NM, NULL}, {NM, NULL}, {NM, NULL}, {NM, NULL}, {NM, NULL},
  };
  expect_all(&g_s, served);
  /* a plain relay node: everything but Relay is NOT_MOUNTED */
  wait_entry(&g_r, RELAY, RD);
  static const entry_t plain[15] = {
      {RD, NULL}, {NM, NULL}, {NM, NULL}, {NM, NULL}, {NM, NULL},
      {NM, NULL}, {NM, NULL}, {NM, NULL}, {NM, NULL}, {NM, NULL},
      {NM, NULL}, {NM, NULL}, {NM, NULL}, {NM, NULL}, {NM, NULL},
  };
  expect_all(&g_r, plain);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(service_node_without_relay_peers),
      cmocka_unit_test(configured_service_nodes_make_clients_ready),
      cmocka_unit_test(messaging_clients_follow_service_peers),
      cmocka_unit_test(relay_peers_make_services_ready),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
