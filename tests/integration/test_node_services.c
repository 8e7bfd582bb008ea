/* A service node assembled from its configuration (relay, lightpush, filter, store on the
 * in-memory archive, peer exchange, WebSocket) in one process with a relay peer and a light
 * client over loopback: a message pushed by the client over lightpush reaches the relay peer,
 * comes back to the client through filter, and is returned by a store query with the same hash,
 * over TCP and over /ws; an archive that cannot be opened is reported as a node failure; a node
 * with lightpush but without relay starts and answers every push as nwaku v0.36 does. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <uv.h>

#include "base/clock.h"
#include "base/error.h"
#include "node/events.h"
#include "node/node.h"
#include "p2p/identify.h"
#include "waku/enr/cache.h"
#include "waku/enr/enr.h"
#include "waku/filter/client.h"
#include "waku/peer_exchange/peer_exchange.h"
#include "waku/lightpush/client.h"
#include "waku/store/client.h"
#include "node_harness.h"

#define STEP_MS 15000
#define TOPIC "/waku/2/rs/0/0"
#define CONTENT "/test/1/services/proto"

static uv_loop_t g_loop;

#define WAIT_FOR(cond) NH_WAIT_FOR(&g_loop, cond, STEP_MS)

/* ---- nodes
 * --------------------------------------------------------------------------------------- */

typedef struct watch {
  uint8_t last_hash[LD_WAKU_HASH_LEN];
  int messages; /* received from peers */
  int failures; /* LD_EVENT_NODE_FAILURE */
} watch_t;

static void on_message(int kind, const void *payload, void *ud) {
  (void)kind;
  const ld_fanout_message_t *m = payload;
  watch_t *w = ud;
  if (m->own)
    return;
  w->messages++;
  memcpy(w->last_hash, m->hash, LD_WAKU_HASH_LEN);
}

static void on_failure(int kind, const void *payload, void *ud) {
  (void)kind, (void)payload;
  ((watch_t *)ud)->failures++;
}

static ld_node_config_t *config(bool relay) {
  ld_node_config_t *cfg = nh_config();
  cfg->relay = relay;
  return cfg;
}

static ld_node_t *start(ld_node_config_t *cfg, watch_t *w) {
  char err[256];
  assert_int_equal(ld_node_config_finalize(cfg, err, sizeof err), 0);
  int rc = 0;
  ld_node_t *n = ld_node_new(&g_loop, cfg, &rc);
  free(cfg);
  assert_non_null(n);
  ld_broker_subscribe(ld_node_broker(n), LD_EVENT_MESSAGE, on_message, w);
  ld_broker_subscribe(ld_node_broker(n), LD_EVENT_NODE_FAILURE, on_failure, w);
  assert_int_equal(ld_node_start(n), 0);
  return n;
}

static void stop(ld_node_t *n) {
  nh_stop(&g_loop, n, STEP_MS);
}

/* The first listen address of `n` whose text contains `part` ("/ws/" or "/tcp/"). */
static void addr_with(ld_node_t *n, const char *part, bool ws, ld_multiaddr_t *out) {
  ld_multiaddr_t addrs[8];
  size_t count = ld_node_listen_addrs(n, addrs, 8);
  for (size_t i = 0; i < count && i < 8; i++) {
    char text[LD_MULTIADDR_TEXT_MAX];
    ld_multiaddr_to_text(&addrs[i], text, sizeof text);
    if (strstr(text, part) != NULL && (strstr(text, "/ws/") != NULL) == ws) {
      *out = addrs[i];
      return;
    }
  }
  fail_msg("no listen address with %s", part);
}

/* ---- clients
 * ------------------------------------------------------------------------------------- */

typedef struct client {
  ld_conn_t *conn;
  int dial_err;
  bool dialed;
  bool pushed;
  ld_lightpush_result_t push;
  uint8_t push_hash[LD_WAKU_HASH_LEN];
  bool filter_done;
  uint32_t filter_status;
  int filter_pushes;
  uint8_t filter_hash[LD_WAKU_HASH_LEN];
  bool store_done;
  uint32_t store_status;
  size_t store_entries;
  bool store_has_hash;
} client_t;

static void on_dial(ld_conn_t *c, int err, void *ud) {
  client_t *cl = ud;
  cl->conn = c;
  cl->dial_err = err;
  cl->dialed = true;
}

static void on_push(const ld_lightpush_result_t *res, void *ud) {
  client_t *cl = ud;
  cl->push = *res;
  cl->push.status_desc = NULL;
  cl->push.request_id = NULL;
  memcpy(cl->push_hash, res->hash, LD_WAKU_HASH_LEN);
  cl->pushed = true;
}

static void on_filter_done(const ld_filter_result_t *res, void *ud) {
  client_t *cl = ud;
  cl->filter_status = res->status_code;
  cl->filter_done = true;
}

static void on_filter_push(const ld_filter_push_t *push, void *ud) {
  client_t *cl = ud;
  assert_string_equal(push->pubsub_topic, TOPIC);
  memcpy(cl->filter_hash, push->hash, LD_WAKU_HASH_LEN);
  cl->filter_pushes++;
}

static void on_store(int err, ld_store_response_t *res, void *ud) {
  client_t *cl = ud;
  (void)err;
  cl->store_status = res->status_code;
  cl->store_entries = res->n_entries;
  cl->store_has_hash = false;
  for (size_t i = 0; i < res->n_entries; i++)
    if (memcmp(res->entries[i].hash, cl->push_hash, LD_WAKU_HASH_LEN) == 0 &&
        res->entries[i].pubsub_topic != NULL && strcmp(res->entries[i].pubsub_topic, TOPIC) == 0)
      cl->store_has_hash = true;
  cl->store_done = true;
}

static void dial(ld_switch_t *sw, const ld_multiaddr_t *addr, client_t *cl) {
  cl->dialed = false;
  assert_int_equal(ld_switch_dial(sw, addr, on_dial, cl), 0);
  WAIT_FOR(cl->dialed);
  assert_int_equal(cl->dial_err, 0);
}

static void lightpush_text(ld_switch_t *sw, client_t *cl, const char *text) {
  ld_waku_message_t msg;
  ld_waku_message_init(&msg);
  msg.payload = (const uint8_t *)text;
  msg.payload_len = strlen(text);
  msg.content_topic = CONTENT;
  msg.content_topic_len = strlen(CONTENT);
  cl->pushed = false;
  assert_int_equal(ld_lightpush_client_push(sw, cl->conn, TOPIC, &msg, on_push, cl), 0);
  WAIT_FOR(cl->pushed);
}

/* Queries by content topic until the pushed message is there (the archive commits in batches). */
static void store_finds_the_push(ld_switch_t *sw, client_t *cl) {
  const char *topics[] = {CONTENT};
  ld_store_query_t q;
  memset(&q, 0, sizeof q);
  q.include_data = true;
  q.pubsub_topic = TOPIC;
  q.content_topics = topics;
  q.n_content_topics = 1;
  q.forward = true;
  q.has_forward = true;
  ld_store_target_t to = {cl->conn, NULL};
  uint64_t deadline = ld_now_ms() + STEP_MS;
  do {
    cl->store_done = false;
    assert_int_equal(ld_store_client_query(sw, &to, &q, NULL, on_store, cl, NULL), 0);
    WAIT_FOR(cl->store_done);
    assert_int_equal(cl->store_status, 200);
  } while (!cl->store_has_hash && ld_now_ms() < deadline);
  assert_true(cl->store_has_hash);
}

/* ---- the scenario
 * -------------------------------------------------------------------------------- */

static ld_node_t *start_service(watch_t *w) {
  char err[256];
  ld_node_config_t *cfg = config(true);
  cfg->lightpush = cfg->filter = cfg->store = cfg->peer_exchange = true;
  assert_int_equal(ld_node_config_set_store_db_url(cfg, "memory://", err, sizeof err), 0);
  assert_int_equal(
      ld_node_config_set_websocket(cfg, true, 0, 0, false, NULL, NULL, err, sizeof err), 0);
  return start(cfg, w);
}

static ld_node_t *start_relay_peer(ld_node_t *service, watch_t *w) {
  char err[256], text[LD_MULTIADDR_TEXT_MAX];
  ld_node_config_t *cfg = config(true);
  ld_multiaddr_t addr;
  addr_with(service, "/tcp/", false, &addr);
  ld_multiaddr_to_text(&addr, text, sizeof text);
  assert_int_equal(ld_node_config_add_static_node(cfg, text, err, sizeof err), 0);
  return start(cfg, w);
}

static void push_reaches_relay_filter_and_store(bool over_ws) {
  watch_t ws = {0}, wr = {0}, wc = {0};
  ld_node_t *service = start_service(&ws);
  ld_node_t *relay = start_relay_peer(service, &wr);
  WAIT_FOR(ld_gs_service_topic_peers(ld_node_gossipsub(service), TOPIC, NULL, 0) >= 1);
  ld_node_config_t *cc = config(false);
  cc->listen = false;
  ld_node_t *light = start(cc, &wc);
  ld_switch_t *sw = ld_node_switch(light);
  client_t cl;
  memset(&cl, 0, sizeof cl);
  ld_multiaddr_t addr;
  addr_with(service, "/tcp/", over_ws, &addr);
  dial(sw, &addr, &cl);

  ld_filter_client_t *fc = ld_filter_client_new(sw, NULL);
  assert_non_null(fc);
  ld_filter_client_set_push_handler(fc, on_filter_push, &cl);
  const char *topics[] = {CONTENT};
  assert_int_equal(ld_filter_client_subscribe(fc, cl.conn, TOPIC, topics, 1, on_filter_done, &cl),
                   0);
  WAIT_FOR(cl.filter_done);
  assert_int_equal(cl.filter_status, 200);

  lightpush_text(sw, &cl, over_ws ? "hello over ws" : "hello over tcp");
  assert_int_equal(cl.push.status_code, 200);
  assert_true(cl.push.relay_peer_count >= 1);
  assert_true(cl.push.has_hash);
  WAIT_FOR(wr.messages == 1);
  assert_memory_equal(wr.last_hash, cl.push_hash, LD_WAKU_HASH_LEN);
  WAIT_FOR(cl.filter_pushes == 1);
  assert_memory_equal(cl.filter_hash, cl.push_hash, LD_WAKU_HASH_LEN);
  store_finds_the_push(sw, &cl);
  assert_int_equal(cl.store_entries, 1);

  stop(light);
  ld_filter_client_free(fc);
  stop(relay);
  stop(service);
  assert_int_equal(ws.failures, 0);
}

static void services_over_tcp(void **state) {
  (void)state;
  push_reaches_relay_filter_and_store(false);
}

static void services_over_websocket(void **state) {
  (void)state;
  push_reaches_relay_filter_and_store(true);
}

/* ---- lightpush without relay
 * ------------------------------------------------------------------------- */

typedef struct no_relay {
  bool v3_done, v2_done;
  uint32_t v3_code;
  bool v3_has_count;
  char v3_desc[128];
  bool v2_success;
  char v2_info[128];
} no_relay_t;

static void on_no_relay_v3(const ld_lightpush_result_t *res, void *ud) {
  no_relay_t *a = ud;
  a->v3_code = res->status_code;
  a->v3_has_count = res->relay_peer_count > 0;
  snprintf(a->v3_desc, sizeof a->v3_desc, "%s", res->status_desc != NULL ? res->status_desc : "");
  a->v3_done = true;
}

static void on_no_relay_v2(const ld_lightpush_legacy_result_t *res, void *ud) {
  no_relay_t *a = ud;
  a->v2_success = res->success;
  snprintf(a->v2_info, sizeof a->v2_info, "%s", res->info);
  a->v2_done = true;
}

/* --relay=false --lightpush=true: the node starts and serves both lightpush versions; nwaku v0.36
 * mounts them with its nil push handler, which answers v3 500 "no waku relay found" and v2
 * is_success false with the same text. */
static void lightpush_without_relay_answers_no_relay_found(void **state) {
  (void)state;
  watch_t ws = {0}, wc = {0};
  ld_node_config_t *cfg = config(false);
  cfg->lightpush = true;
  ld_node_t *service = start(cfg, &ws);
  ld_node_config_t *cc = config(false);
  cc->listen = false;
  ld_node_t *light = start(cc, &wc);
  ld_switch_t *sw = ld_node_switch(light);
  client_t cl;
  memset(&cl, 0, sizeof cl);
  ld_multiaddr_t addr;
  addr_with(service, "/tcp/", false, &addr);
  dial(sw, &addr, &cl);

  ld_waku_message_t msg;
  ld_waku_message_init(&msg);
  msg.payload = (const uint8_t *)"no relay here";
  msg.payload_len = strlen("no relay here");
  msg.content_topic = CONTENT;
  msg.content_topic_len = strlen(CONTENT);
  no_relay_t a;
  memset(&a, 0, sizeof a);
  assert_int_equal(ld_lightpush_client_push(sw, cl.conn, TOPIC, &msg, on_no_relay_v3, &a), 0);
  WAIT_FOR(a.v3_done);
  assert_int_equal(a.v3_code, LD_LIGHTPUSH_INTERNAL_SERVER_ERROR);
  assert_string_equal(a.v3_desc, "no waku relay found");
  assert_false(a.v3_has_count);
  assert_int_equal(ld_lightpush_legacy_client_push(sw, cl.conn, TOPIC, &msg, on_no_relay_v2, &a),
                   0);
  WAIT_FOR(a.v2_done);
  assert_false(a.v2_success);
  assert_string_equal(a.v2_info, "no waku relay found");

  stop(light);
  stop(service);
  assert_int_equal(ws.failures, 0);
}

static void archive_that_cannot_open_is_a_node_failure(void **state) {
  (void)state;
  char err[256];
  watch_t w = {0};
  ld_node_config_t *cfg = config(true);
  cfg->store = true;
  assert_int_equal(ld_node_config_set_store_db_url(cfg, "sqlite:///nonexistent-dir/a/b.sqlite3",
                                                   err, sizeof err),
                   0);
  ld_node_t *n = start(cfg, &w);
  WAIT_FOR(w.failures == 1);
  stop(n);
}

/* ---- peer exchange ------------------------------------------------------------------------------
 */

typedef struct px_seen {
  bool done;
  int err;
  size_t n;
  ld_peerid_t ids[8];
} px_seen_t;

static void on_px(const ld_px_response_t *resp, int err, void *ud) {
  px_seen_t *p = ud;
  p->done = true;
  p->err = err;
  for (size_t i = 0; err == 0 && i < resp->n_enrs && p->n < 8; i++)
    if (ld_enr_peer_id(&resp->enrs[i], &p->ids[p->n]) == 0)
      p->n++;
}

static void on_switch_closed(void *ud) {
  *(bool *)ud = true;
}

/* A node with --peer-exchange learns the records a peer-exchange peer knows (no discovery is
 * mounted) and hands them out in turn. */
static void peer_exchange_passes_records_on(void **state) {
  (void)state;
  watch_t ws = {0};
  ld_node_t *service = start_service(&ws);
  /* a bare peer X that serves peer exchange from a cache holding one record of cluster 0 */
  ld_privkey_t kx, ke;
  assert_int_equal(ld_privkey_generate(&kx, LD_KEY_SECP256K1), 0);
  assert_int_equal(ld_privkey_generate(&ke, LD_KEY_SECP256K1), 0);
  ld_switch_config_t sc;
  ld_switch_config_default(&sc);
  sc.loop = &g_loop;
  sc.identity = &kx;
  ld_switch_t *x = ld_switch_new(&sc);
  assert_non_null(x);
  ld_identify_t *idx = ld_identify_new(x, NULL);
  assert_non_null(idx);
  ld_enr_cache_t *cache = ld_enr_cache_new(8);
  ld_multiaddr_t ea;
  assert_int_equal(ld_multiaddr_parse(&ea, "/ip4/10.1.2.3/tcp/60000"), 0);
  uint16_t shard0 = 0;
  ld_enr_node_config_t ec = {.addrs = &ea,
                             .n_addrs = 1,
                             .waku2 = LD_ENR_RELAY,
                             .has_cluster = true,
                             .cluster_id = 0,
                             .shards = &shard0,
                             .n_shards = 1};
  ld_enr_t record;
  assert_int_equal(ld_enr_build_node(&record, &ke, &ec), 0);
  assert_int_equal(ld_enr_cache_put(cache, &record), 0);
  ld_px_server_config_t pc;
  ld_px_server_config_default(&pc);
  pc.cache = cache;
  ld_px_server_t *pxs = ld_px_server_new(x, &pc);
  assert_non_null(pxs);
  ld_peerid_t record_id;
  assert_int_equal(ld_enr_peer_id(&record, &record_id), 0);

  /* X connects to the node: the node identifies X, sees peer exchange and asks it */
  client_t cl;
  memset(&cl, 0, sizeof cl);
  ld_multiaddr_t addr;
  addr_with(service, "/tcp/", false, &addr);
  dial(x, &addr, &cl);
  px_seen_t got = {0};
  uint64_t deadline = ld_now_ms() + STEP_MS;
  while (got.n == 0 && ld_now_ms() < deadline) {
    memset(&got, 0, sizeof got);
    assert_int_equal(ld_px_client_request(x, cl.conn, 10, on_px, &got), 0);
    WAIT_FOR(got.done);
    assert_int_equal(got.err, 0);
  }
  assert_int_equal(got.n, 1);
  assert_true(ld_peerid_equal(&got.ids[0], &record_id));

  stop(service);
  bool closed = false;
  ld_switch_close(x, on_switch_closed, &closed);
  WAIT_FOR(closed);
  ld_px_server_free(pxs);
  ld_identify_free(idx);
  ld_enr_cache_free(cache);
}

static int setup(void **state) {
  (void)state;
  uv_loop_init(&g_loop);
  return 0;
}

static int teardown(void **state) {
  (void)state;
  uv_run(&g_loop, UV_RUN_NOWAIT);
  return 0;
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(services_over_tcp),
      cmocka_unit_test(services_over_websocket),
      cmocka_unit_test(archive_that_cannot_open_is_a_node_failure),
      cmocka_unit_test(lightpush_without_relay_answers_no_relay_found),
      cmocka_unit_test(peer_exchange_passes_records_on),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
