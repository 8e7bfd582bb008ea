/* The REST and metrics servers of a real node at their connection limits. Each server is filled
 * to its limit, either with keep-alive clients that got their `GET /health` answered and stay
 * open (as a dashboard's), or with clients that sent only part of a request head. Then:
 *   - one more client is answered 503 at once instead of waiting in the accept queue;
 *   - once every held client has closed, a new request is answered within a second, and the
 *     server takes its full number of connections again.
 * The clients are non-blocking sockets of this thread; the node runs on the same loop, which
 * the test turns between steps. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <uv.h>

#include "http_conn.h"
#include "metrics/server.h"
#include "node/node.h"
#include "node_harness.h"
#include "rest/httpd.h"

#define STEP_MS 20000
/* for all of a server's clients to be answered (sanitizers, shared cores) */
#define HOLD_MS 60000
#define ANSWER_MS 1000 /* the bound the servers must meet once a slot is free */
#define PARTIAL_HEAD "GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n"

#define REST_LIMIT LD_HTTPD_DEFAULT_MAX_CONNECTIONS
#define METRICS_LIMIT LD_METRICS_MAX_CONNECTIONS
#define MAX_LIMIT (REST_LIMIT > METRICS_LIMIT ? REST_LIMIT : METRICS_LIMIT)

typedef enum hold_mode { KEEP_ALIVE, PARTIAL_HEADS } hold_mode_t;

static uv_loop_t g_loop;
static ld_node_t *g_node;
static hconn_t *g_conns;        /* MAX_LIMIT held clients */
static hconn_state_t *g_states; /* their states */

static int setup(void **state) {
  (void)state;
  char err[256];
  uv_loop_init(&g_loop);
  ld_node_config_t *cfg = nh_config();
  assert_int_equal(ld_node_config_set_rest(cfg, true, "127.0.0.1", 0, 0, err, sizeof err), 0);
  assert_int_equal(ld_node_config_set_metrics(cfg, true, "127.0.0.1", 0, 0, err, sizeof err), 0);
  g_node = nh_start(&g_loop, cfg);
  g_conns = calloc(MAX_LIMIT, sizeof *g_conns);
  g_states = calloc(MAX_LIMIT, sizeof *g_states);
  assert_non_null(g_conns);
  assert_non_null(g_states);
  return 0;
}

static int teardown(void **state) {
  (void)state;
  nh_stop(&g_loop, g_node, STEP_MS);
  uv_run(&g_loop, UV_RUN_NOWAIT);
  assert_int_equal(uv_loop_close(&g_loop), 0);
  free(g_conns);
  free(g_states);
  return 0;
}

/* One request on a new connection; returns its final state (the status in c->status). */
static hconn_state_t request_once(hconn_t *c, uint16_t port, const char *request, uint64_t ms) {
  assert_int_equal(hconn_open(c, port), 0);
  assert_int_equal(hconn_send(c, request), 0);
  hconn_state_t st;
  hconn_wait_all(&g_loop, c, 1, &st, ms);
  return st;
}

/* Fills the server on `port` with `limit` connections. KEEP_ALIVE: each one's GET /health is
 * answered 200 and it stays open. PARTIAL_HEADS: all but the last send an unfinished head; the
 * last one's complete request is answered, which proves the others were accepted before it. */
static void hold(uint16_t port, size_t limit, hold_mode_t mode) {
  size_t answered_wanted = mode == KEEP_ALIVE ? limit : 1;
  hconn_t *answered = mode == KEEP_ALIVE ? g_conns : &g_conns[limit - 1];
  for (size_t i = 0; i < limit; i++) {
    assert_int_equal(hconn_open(&g_conns[i], port), 0);
    bool partial = mode == PARTIAL_HEADS && i + 1 < limit;
    assert_int_equal(hconn_send(&g_conns[i], partial ? PARTIAL_HEAD : HCONN_GET("/health")), 0);
  }
  size_t done = hconn_wait_all(&g_loop, answered, answered_wanted, g_states, HOLD_MS);
  assert_int_equal(done, answered_wanted);
  for (size_t i = 0; i < answered_wanted; i++)
    assert_int_equal(answered[i].status, 200);
  for (size_t i = 0; mode == PARTIAL_HEADS && i + 1 < limit; i++)
    assert_int_equal(hconn_poll(&g_conns[i]), HCONN_PENDING);
}

static void release(size_t limit) {
  for (size_t i = 0; i < limit; i++)
    hconn_close(&g_conns[i]);
}

/* With every slot taken, one more client is answered 503 within ANSWER_MS. */
static void refuses_over_limit(uint16_t port, size_t limit, hold_mode_t mode) {
  hold(port, limit, mode);
  hconn_t extra;
  assert_int_equal(request_once(&extra, port, HCONN_GET("/health"), ANSWER_MS), HCONN_DONE);
  assert_int_equal(extra.status, 503);
  hconn_close(&extra);
  release(limit);
}

/* Held to the limit, then released: a new request is answered within ANSWER_MS and the server
 * takes `limit` connections again. */
static void recovers(uint16_t port, size_t limit, hold_mode_t mode) {
  hold(port, limit, mode);
  release(limit);
  hconn_t fresh;
  assert_int_equal(request_once(&fresh, port, HCONN_GET("/health"), ANSWER_MS), HCONN_DONE);
  assert_int_equal(fresh.status, 200);
  hconn_close(&fresh);
  hold(port, limit, mode);
  release(limit);
}

static void rest_recovers_after_keep_alive_clients(void **state) {
  (void)state;
  recovers(ld_node_rest_port(g_node), REST_LIMIT, KEEP_ALIVE);
}

static void rest_recovers_after_partial_heads(void **state) {
  (void)state;
  recovers(ld_node_rest_port(g_node), REST_LIMIT, PARTIAL_HEADS);
}

static void rest_answers_503_over_the_limit(void **state) {
  (void)state;
  refuses_over_limit(ld_node_rest_port(g_node), REST_LIMIT, KEEP_ALIVE);
  refuses_over_limit(ld_node_rest_port(g_node), REST_LIMIT, PARTIAL_HEADS);
}

static void metrics_recovers_after_keep_alive_clients(void **state) {
  (void)state;
  recovers(ld_node_metrics_port(g_node), METRICS_LIMIT, KEEP_ALIVE);
}

static void metrics_recovers_after_partial_heads(void **state) {
  (void)state;
  recovers(ld_node_metrics_port(g_node), METRICS_LIMIT, PARTIAL_HEADS);
}

static void metrics_answers_503_over_the_limit(void **state) {
  (void)state;
  refuses_over_limit(ld_node_metrics_port(g_node), METRICS_LIMIT, KEEP_ALIVE);
  refuses_over_limit(ld_node_metrics_port(g_node), METRICS_LIMIT, PARTIAL_HEADS);
}

int main(void) {
  /* Both ends of every held connection live in this process. */
  size_t fds = 2 * MAX_LIMIT + 1024;
  if (hconn_raise_fd_limit(fds) != 0) {
    fprintf(stderr, "cannot raise RLIMIT_NOFILE to %zu descriptors\n", fds);
    return 1;
  }
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(rest_recovers_after_keep_alive_clients, setup, teardown),
      cmocka_unit_test_setup_teardown(rest_recovers_after_partial_heads, setup, teardown),
      cmocka_unit_test_setup_teardown(rest_answers_503_over_the_limit, setup, teardown),
      cmocka_unit_test_setup_teardown(metrics_recovers_after_keep_alive_clients, setup, teardown),
      cmocka_unit_test_setup_teardown(metrics_recovers_after_partial_heads, setup, teardown),
      cmocka_unit_test_setup_teardown(metrics_answers_503_over_the_limit, setup, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
