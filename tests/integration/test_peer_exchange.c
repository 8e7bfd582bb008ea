/* Waku peer exchange between two switches on loopback in one process: the C client asks the C
 * server, which samples its ENR cache (our cluster only, never the requester's own record);
 * num_peers 0 and huge; a provider callback; js-waku's request bytes; malformed, unframed and
 * oversized requests; a peer without the protocol; cancelling a request. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <uv.h>

#include "base/buf.h"
#include "base/error.h"
#include "p2p/reqresp.h"
#include "switch_harness.h"
#include "waku/enr/cache.h"
#include "waku/enr/enr.h"
#include "waku/peer_exchange/peer_exchange.h"

#define WAIT_MS 10000
#define N_CLUSTER1 10
#define N_CLUSTER2 4
#define N_PROVIDED 70

static uv_loop_t g_loop;

/* ---- fixtures ------------------------------------------------------------------------------- */

typedef struct fixture {
  ld_switch_t *server_sw, *client_sw;
  ld_privkey_t client_key;
  ld_px_server_t *px;
  ld_enr_cache_t *cache;
  ld_conn_t *conn; /* client → server */
} fixture_t;

static fixture_t g_fx;
static ld_enr_t g_provided[N_PROVIDED];

/* A signed record for key `seed` in `cluster`, dialable at 10.1.<seed>.1:60000. */
static void make_enr(ld_enr_t *enr, const ld_privkey_t *key, uint8_t seed, uint16_t cluster) {
  ld_enr_node_config_t cfg = {.has_cluster = true, .cluster_id = cluster, .waku2 = 0x01};
  ld_multiaddr_t addr;
  char text[64];
  snprintf(text, sizeof text, "/ip4/10.1.%u.1/tcp/60000", seed);
  assert_int_equal(ld_multiaddr_parse(&addr, text), 0);
  cfg.addrs = &addr;
  cfg.n_addrs = 1;
  assert_int_equal(ld_enr_build_node(enr, key, &cfg), 0);
}

static void key_from(ld_privkey_t *key, uint8_t seed) {
  uint8_t secret[32];
  memset(secret, seed, sizeof secret);
  secret[0] = 0x42;
  assert_int_equal(ld_privkey_from_secp256k1(key, secret), 0);
}

static void fill_cache(ld_enr_cache_t *cache, const ld_privkey_t *client_key) {
  for (uint8_t i = 0; i < N_CLUSTER1 + N_CLUSTER2; i++) {
    ld_privkey_t key;
    key_from(&key, (uint8_t)(i + 1));
    ld_enr_t enr;
    make_enr(&enr, &key, (uint8_t)(i + 1), i < N_CLUSTER1 ? 1 : 2);
    assert_int_equal(ld_enr_cache_put(cache, &enr), 0);
  }
  ld_enr_t own;
  make_enr(&own, client_key, 200, 1); /* the requester's own record */
  assert_int_equal(ld_enr_cache_put(cache, &own), 0);
}

static int fx_setup(void **state) {
  (void)state;
  fixture_t *fx = &g_fx;
  memset(fx, 0, sizeof *fx);
  fx->server_sw = sh_switch_new(&g_loop, NULL);
  ld_multiaddr_t server_addr;
  sh_listen_local(fx->server_sw, &server_addr);
  key_from(&fx->client_key, 250);
  ld_switch_config_t cfg;
  ld_switch_config_default(&cfg);
  cfg.loop = &g_loop;
  cfg.identity = &fx->client_key;
  fx->client_sw = ld_switch_new(&cfg);
  assert_non_null(fx->client_sw);

  fx->cache = ld_enr_cache_new(100);
  assert_non_null(fx->cache);
  fill_cache(fx->cache, &fx->client_key);
  ld_px_server_config_t pcfg;
  ld_px_server_config_default(&pcfg);
  pcfg.cache = fx->cache;
  pcfg.has_cluster = true;
  pcfg.cluster_id = 1;
  fx->px = ld_px_server_new(fx->server_sw, &pcfg);
  assert_non_null(fx->px);
  assert_null(ld_px_server_new(fx->server_sw, &pcfg)); /* registered once */

  int err = 0;
  fx->conn = sh_dial_wait(fx->client_sw, &g_loop, &server_addr, &err);
  assert_int_equal(err, 0);
  assert_non_null(fx->conn);
  return 0;
}

static int fx_teardown(void **state) {
  (void)state;
  sh_switch_close(g_fx.client_sw, &g_loop);
  sh_switch_close(g_fx.server_sw, &g_loop);
  ld_px_server_free(g_fx.px);
  ld_enr_cache_free(g_fx.cache);
  return 0;
}

/* ---- client results ------------------------------------------------------------------------- */

typedef struct result {
  bool done;
  int err;
  uint32_t status;
  char desc[LD_PX_MAX_STATUS_DESC + 1];
  size_t n_enrs, n_received;
  ld_enr_t enrs[LD_PX_MAX_RESPONSE_ENRS];
} result_t;

static result_t g_res;

static void on_result(const ld_px_response_t *resp, int err, void *ud) {
  result_t *r = ud;
  assert_false(r->done);
  r->done = true;
  r->err = err;
  if (err != 0) {
    assert_null(resp);
    return;
  }
  r->status = resp->status_code;
  snprintf(r->desc, sizeof r->desc, "%s", resp->has_status_desc ? resp->status_desc : "");
  r->n_enrs = resp->n_enrs;
  r->n_received = resp->n_received;
  if (resp->n_enrs > 0)
    memcpy(r->enrs, resp->enrs, resp->n_enrs * sizeof resp->enrs[0]);
}

static bool result_done(void *ud) {
  return ((result_t *)ud)->done;
}

static void ask(uint64_t num_peers) {
  memset(&g_res, 0, sizeof g_res);
  assert_int_equal(ld_px_client_request(g_fx.client_sw, g_fx.conn, num_peers, on_result, &g_res),
                   0);
  assert_true(sh_run_until(&g_loop, result_done, &g_res, WAIT_MS));
}

static bool is_client_record(const ld_enr_t *enr) {
  ld_peerid_t id;
  assert_int_equal(ld_enr_peer_id(enr, &id), 0);
  return ld_peerid_equal(&id, ld_switch_peer_id(g_fx.client_sw));
}

static void assert_distinct_cluster1(const result_t *r) {
  for (size_t i = 0; i < r->n_enrs; i++) {
    assert_false(ld_enr_cluster_mismatch(&r->enrs[i], 1));
    assert_false(is_client_record(&r->enrs[i]));
    for (size_t j = 0; j < i; j++)
      assert_false(r->enrs[i].len == r->enrs[j].len &&
                   memcmp(r->enrs[i].raw, r->enrs[j].raw, r->enrs[i].len) == 0);
  }
}

/* ---- tests ---------------------------------------------------------------------------------- */

static void records_from_the_cache(void **state) {
  (void)state;
  /* The requester's own record is cached under its peer ID: the same ID the connection shows. */
  ld_enr_t own;
  make_enr(&own, &g_fx.client_key, 200, 1);
  assert_true(is_client_record(&own));

  ask(5);
  assert_int_equal(g_res.err, 0);
  assert_int_equal(g_res.status, LD_PX_STATUS_SUCCESS);
  assert_int_equal(g_res.n_enrs, 5);
  assert_distinct_cluster1(&g_res);
  ld_multiaddr_t dial[2];
  assert_int_equal(ld_enr_dial_addrs(&g_res.enrs[0], dial, 2), 1);

  /* Asking for more than there are: every cluster-1 record but the requester's. */
  ask(LD_PX_MAX_PEERS);
  assert_int_equal(g_res.err, 0);
  assert_int_equal(g_res.n_enrs, N_CLUSTER1);
  assert_distinct_cluster1(&g_res);

  ask(0);
  assert_int_equal(g_res.err, 0);
  assert_int_equal(g_res.status, LD_PX_STATUS_SUCCESS);
  assert_int_equal(g_res.n_received, 0);

  ld_px_server_stats_t st;
  ld_px_server_get_stats(g_fx.px, &st);
  assert_int_equal(st.requests, 3);
  assert_int_equal(st.enrs_sent, 5 + N_CLUSTER1);
}

typedef struct provider_log {
  int calls;
  size_t last_max;
  ld_peerid_t last_requester;
} provider_log_t;

static provider_log_t g_plog;

static size_t provide(void *ud, const ld_peerid_t *requester, const ld_enr_t **out, size_t max) {
  provider_log_t *log = ud;
  log->calls++;
  log->last_max = max;
  log->last_requester = *requester;
  size_t n = 0;
  for (; n < max && n < N_PROVIDED; n++)
    out[n] = &g_provided[n];
  return N_PROVIDED + 5; /* more than asked: the server keeps only `max` */
}

static void provider_and_caps(void **state) {
  (void)state;
  memset(&g_plog, 0, sizeof g_plog);
  ld_px_server_set_provider(g_fx.px, provide, &g_plog);

  ask(UINT64_MAX);
  assert_int_equal(g_res.err, 0);
  assert_int_equal(g_res.n_enrs, LD_PX_MAX_PEERS); /* nwaku's cap */
  assert_int_equal(g_plog.last_max, LD_PX_MAX_PEERS);
  assert_true(ld_peerid_equal(&g_plog.last_requester, ld_switch_peer_id(g_fx.client_sw)));
  for (size_t i = 0; i < g_res.n_enrs; i++)
    assert_memory_equal(g_res.enrs[i].raw, g_provided[i].raw, g_provided[i].len);

  ask(7);
  assert_int_equal(g_res.n_enrs, 7);
  assert_int_equal(g_plog.last_max, 7);

  /* num_peers 0 does not even ask the provider. */
  int calls = g_plog.calls;
  ask(0);
  assert_int_equal(g_res.err, 0);
  assert_int_equal(g_res.n_received, 0);
  assert_int_equal(g_plog.calls, calls);

  /* A client that keeps fewer than it asked for. */
  memset(&g_res, 0, sizeof g_res);
  ld_px_client_opts_t opts = {.max_enrs = 3};
  assert_int_equal(
      ld_px_client_request_ex(g_fx.client_sw, g_fx.conn, 20, &opts, on_result, &g_res, NULL), 0);
  assert_true(sh_run_until(&g_loop, result_done, &g_res, WAIT_MS));
  assert_int_equal(g_res.n_received, 20);
  assert_int_equal(g_res.n_enrs, 3);
  ld_px_server_set_provider(g_fx.px, NULL, NULL);
}

/* ---- raw requests --------------------------------------------------------------------------- */

typedef struct raw_result {
  bool done;
  int err;
  ld_buf_t resp;
} raw_result_t;

static void raw_done(const uint8_t *resp, size_t len, int err, void *ud) {
  raw_result_t *r = ud;
  r->done = true;
  r->err = err;
  if (err == 0)
    ld_buf_append(&r->resp, resp, len);
}

static bool raw_is_done(void *ud) {
  return ((raw_result_t *)ud)->done;
}

/* Sends `req` as is and collects the answer until EOF. */
static void raw_request(const uint8_t *req, size_t len, raw_result_t *r) {
  memset(r, 0, sizeof *r);
  ld_buf_init(&r->resp);
  ld_reqresp_opts_t opts = {.max_bytes = LD_PX_MAX_RPC_SIZE, .timeout_ms = 5000};
  assert_int_equal(ld_reqresp_request(g_fx.client_sw, g_fx.conn, LD_PX_PROTOCOL, req, len, &opts,
                                      raw_done, r, NULL),
                   0);
  assert_true(sh_run_until(&g_loop, raw_is_done, r, WAIT_MS));
}

static void raw_status(const uint8_t *req, size_t len, uint32_t status, size_t n_enrs) {
  raw_result_t r;
  raw_request(req, len, &r);
  assert_int_equal(r.err, 0);
  ld_px_response_t resp;
  assert_int_equal(ld_px_decode_response(r.resp.data, r.resp.len, 60, &resp), (int)r.resp.len);
  assert_int_equal(resp.status_code, status);
  assert_int_equal(resp.n_enrs, n_enrs);
  if (status == LD_PX_STATUS_BAD_REQUEST)
    assert_true(resp.has_status_desc && strlen(resp.status_desc) > 0);
  ld_px_response_clear(&resp);
  ld_buf_clear(&r.resp);
}

static void raw_requests(void **state) {
  (void)state;
  /* js-waku's request: only the query, numPeers 60. */
  const uint8_t js[] = {0x04, 0x0a, 0x02, 0x08, 0x3c};
  raw_status(js, sizeof js, LD_PX_STATUS_SUCCESS, N_CLUSTER1);
  /* nwaku's request bytes for 5. */
  const uint8_t nwaku[] = {0x08, 0x0a, 0x02, 0x08, 0x05, 0x12, 0x02, 0x50, 0x00};
  raw_status(nwaku, sizeof nwaku, LD_PX_STATUS_SUCCESS, 5);
  /* Undecodable protobuf and a missing query: BAD_REQUEST with a description. */
  const uint8_t garbage[] = {0x03, 0x0a, 0xff, 0xff};
  raw_status(garbage, sizeof garbage, LD_PX_STATUS_BAD_REQUEST, 0);
  const uint8_t no_query[] = {0x02, 0x12, 0x00};
  raw_status(no_query, sizeof no_query, LD_PX_STATUS_BAD_REQUEST, 0);
  const uint8_t empty_msg[] = {0x00};
  raw_status(empty_msg, sizeof empty_msg, LD_PX_STATUS_BAD_REQUEST, 0);

  /* Frames the server cannot read: the stream is reset, no answer. */
  raw_result_t r;
  const uint8_t oversized[] = {0xa0, 0x9c, 0x01, 0x0a}; /* 20,000-byte frame announced */
  raw_request(oversized, sizeof oversized, &r);
  assert_int_not_equal(r.err, 0);
  ld_buf_clear(&r.resp);
  const uint8_t truncated[] = {0x09, 0x0a, 0x02};
  raw_request(truncated, sizeof truncated, &r); /* half-closed before the frame is whole */
  assert_int_not_equal(r.err, 0);
  ld_buf_clear(&r.resp);
  raw_request(truncated, 0, &r); /* nothing written before the half-close */
  assert_int_not_equal(r.err, 0);
  ld_buf_clear(&r.resp);

  ld_px_server_stats_t st;
  ld_px_server_get_stats(g_fx.px, &st);
  assert_true(st.bad_requests >= 3);
  assert_true(st.failed >= 2);

  /* The server still answers afterwards. */
  ask(2);
  assert_int_equal(g_res.err, 0);
  assert_int_equal(g_res.n_enrs, 2);
}

static void peer_without_protocol(void **state) {
  (void)state;
  /* The client switch serves no peer exchange: ask it over an inbound connection. */
  ld_conn_t *conns[4];
  size_t n = ld_switch_connections(g_fx.server_sw, conns, 4);
  assert_int_equal(n, 1);
  memset(&g_res, 0, sizeof g_res);
  assert_int_equal(ld_px_client_request(g_fx.server_sw, conns[0], 5, on_result, &g_res), 0);
  assert_true(sh_run_until(&g_loop, result_done, &g_res, WAIT_MS));
  assert_int_equal(g_res.err, LD_ERR_PROTOCOL_UNSUPPORTED);
  assert_int_equal(ld_px_client_request(g_fx.server_sw, NULL, 5, on_result, &g_res),
                   LD_ERR_INVALID_ARG);
}

static void cancelled_request_never_calls_back(void **state) {
  (void)state;
  memset(&g_res, 0, sizeof g_res);
  ld_px_call_t *call = NULL;
  assert_int_equal(
      ld_px_client_request_ex(g_fx.client_sw, g_fx.conn, 5, NULL, on_result, &g_res, &call), 0);
  assert_non_null(call);
  ld_px_call_cancel(call);
  sh_run_for(&g_loop, 300);
  assert_false(g_res.done);
  /* And the connection is still good. */
  ask(1);
  assert_int_equal(g_res.err, 0);
  assert_int_equal(g_res.n_enrs, 1);
}

static int setup(void **state) {
  (void)state;
  for (uint8_t i = 0; i < N_PROVIDED; i++) {
    ld_privkey_t key;
    key_from(&key, (uint8_t)(100 + i));
    make_enr(&g_provided[i], &key, (uint8_t)(100 + i), 1);
  }
  return uv_loop_init(&g_loop);
}

static int teardown(void **state) {
  (void)state;
  uv_run(&g_loop, UV_RUN_NOWAIT);
  return uv_loop_close(&g_loop) == 0 ? 0 : -1;
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(records_from_the_cache, fx_setup, fx_teardown),
      cmocka_unit_test_setup_teardown(provider_and_caps, fx_setup, fx_teardown),
      cmocka_unit_test_setup_teardown(raw_requests, fx_setup, fx_teardown),
      cmocka_unit_test_setup_teardown(peer_without_protocol, fx_setup, fx_teardown),
      cmocka_unit_test_setup_teardown(cancelled_request_never_calls_back, fx_setup, fx_teardown),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
