#include "node_harness.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdlib.h>

#include <cmocka.h>

#include "node/node_rln_publish.h"
#include "p2p/multiaddr.h"

void nh_pump(uv_loop_t *loop) {
  uv_run(loop, UV_RUN_ONCE);
}

static void on_tick(uv_timer_t *t) {
  (void)t;
}

void nh_run_for(uv_loop_t *loop, uint64_t ms) {
  uv_timer_t t;
  uv_timer_init(loop, &t);
  uv_timer_start(&t, on_tick, ms, 0);
  uint64_t end = ld_now_ms() + ms;
  while (ld_now_ms() < end)
    nh_pump(loop);
  uv_close((uv_handle_t *)&t, NULL);
  nh_pump(loop);
}

ld_node_config_t *nh_config(void) {
  char err[256];
  ld_node_config_t *cfg = malloc(sizeof *cfg);
  assert_non_null(cfg);
  ld_node_config_default(cfg);
  assert_int_equal(ld_node_config_set_listen(cfg, "127.0.0.1", 0, 0, err, sizeof err), 0);
  assert_int_equal(ld_node_config_add_shard(cfg, "0", err, sizeof err), 0);
  cfg->colocation_limit = 0;
  return cfg;
}

void nh_addr_text(ld_node_t *node, char *out, size_t cap) {
  ld_multiaddr_t addrs[4];
  assert_true(ld_node_listen_addrs(node, addrs, 4) >= 1);
  assert_true(ld_multiaddr_to_text(&addrs[0], out, cap) > 0);
}

void nh_add_static(ld_node_config_t *cfg, ld_node_t *to) {
  char text[LD_MULTIADDR_TEXT_MAX], err[256];
  nh_addr_text(to, text, sizeof text);
  assert_int_equal(ld_node_config_add_static_node(cfg, text, err, sizeof err), 0);
}

/* Whether a member node's publish queue prepared its proving context (node_rln_publish.c). */
static bool warm(const ld_node_t *node) {
  ld_node_rln_proving_stats_t s;
  ld_node_rln_proving_stats(node, &s);
  return s.prepares > 0;
}

ld_node_t *nh_start_subscribed(uv_loop_t *loop, ld_node_config_t *cfg, int kind,
                               ld_broker_listener_fn fn, void *ud) {
  char err[256];
  assert_int_equal(ld_node_config_finalize(cfg, err, sizeof err), 0);
  bool member = cfg->rln.enabled && cfg->rln.cred_path[0] != '\0';
  int rc = 0;
  ld_node_t *node = ld_node_new(loop, cfg, &rc);
  free(cfg);
  assert_non_null(node);
  if (fn != NULL)
    ld_broker_subscribe(ld_node_broker(node), kind, fn, ud);
  assert_int_equal(ld_node_start(node), 0);
  if (member)
    NH_WAIT_FOR(loop, warm(node), NH_WARM_WAIT_MS);
  return node;
}

ld_node_t *nh_start(uv_loop_t *loop, ld_node_config_t *cfg) {
  return nh_start_subscribed(loop, cfg, 0, NULL, NULL);
}

void nh_only_addr_text(ld_node_t *node, char *out, size_t cap) {
  ld_multiaddr_t ma;
  assert_int_equal(ld_node_listen_addrs(node, &ma, 1), 1);
  ld_multiaddr_to_text(&ma, out, cap);
}

static void on_stopped(void *ud) {
  *(bool *)ud = true;
}

void nh_stop(uv_loop_t *loop, ld_node_t *node, uint64_t ms) {
  bool stopped = false;
  ld_node_stop(node, on_stopped, &stopped);
  NH_WAIT_FOR(loop, stopped, ms);
}
