/* The libuv adapter over real UDP sockets on 127.0.0.1: three engines in one loop handshake,
 * answer each other, and a search attached to one of them reports the Waku node it finds. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>
#include <uv.h>

#include "base/error.h"
#include "waku/discovery/discv5_uv.h"

typedef struct peer {
  ld_discv5_uv_t *u;
  ld_privkey_t key;
  ld_enr_t enr;
  size_t pongs, sessions, discovered, peers, lookups_done;
  ld_enr_t last_peer;
} peer_t;

static void on_event(void *ud, ld_discv5_event_t *ev) {
  peer_t *p = ud;
  p->pongs += ev->type == LD_DISCV5_EV_PONG;
  p->sessions += ev->type == LD_DISCV5_EV_SESSION;
  p->discovered += ev->type == LD_DISCV5_EV_DISCOVERED;
  p->lookups_done += ev->type == LD_DISCV5_EV_LOOKUP_DONE;
}

static void on_peer(void *ud, const ld_enr_t *enr) {
  peer_t *p = ud;
  p->peers++;
  p->last_peer = *enr;
}

static void start_peer(uv_loop_t *loop, peer_t *p, uint8_t key_byte, bool waku,
                       const ld_waku_discv5_config_t *search) {
  uint8_t secret[32];
  memset(secret, key_byte, sizeof secret);
  assert_int_equal(ld_privkey_from_secp256k1(&p->key, secret), 0);
  assert_int_equal(ld_discv5_uv_open(loop, "127.0.0.1", 0, &p->u), 0);
  assert_true(ld_discv5_uv_port(p->u) != 0);
  ld_enr_builder_t b;
  ld_enr_builder_init(&b, 1);
  ld_enr_builder_set_ip4(&b, (const uint8_t[]){127, 0, 0, 1});
  ld_enr_builder_set_uint(&b, "udp", ld_discv5_uv_port(p->u));
  if (waku) {
    uint16_t shard = 3;
    ld_enr_builder_set_uint(&b, "tcp", 60000);
    ld_enr_builder_set_waku2(&b, LD_ENR_RELAY);
    ld_enr_builder_set_shards(&b, 42, &shard, 1);
  }
  assert_int_equal(ld_enr_builder_sign(&b, &p->key, &p->enr), 0);
  ld_discv5_config_t cfg;
  ld_discv5_config_default(&cfg);
  cfg.key = &p->key;
  cfg.enr = &p->enr;
  ld_discv5_uv_callbacks_t cb = {on_event, on_peer};
  assert_int_equal(ld_discv5_uv_start(p->u, &cfg, search, &cb, p), 0);
  assert_int_equal(ld_discv5_uv_start(p->u, &cfg, search, &cb, p), LD_ERR_STATE);
}

/* Runs the loop until *counter reaches `want` or 10 s pass (the engines' timers keep it
 * turning). */
static void run_until(uv_loop_t *loop, size_t *counter, size_t want) {
  uint64_t deadline = uv_now(loop) + 10000;
  while (*counter < want && uv_now(loop) < deadline)
    uv_run(loop, UV_RUN_ONCE);
}

static void udp_loopback(void **state) {
  (void)state;
  uv_loop_t loop;
  uv_loop_init(&loop);
  peer_t a = {0}, b = {0}, c = {0};
  ld_waku_discv5_config_t search;
  ld_waku_discv5_config_default(&search);
  uint16_t shard = 3;
  assert_int_equal(ld_waku_discv5_config_set_shards(&search, 42, &shard, 1), 0);
  search.interval_ms = 200;
  start_peer(&loop, &a, 1, false, NULL);
  start_peer(&loop, &b, 2, true, NULL);
  assert_int_equal(ld_waku_discv5_config_add_bootnode(&search, &a.enr), 0);
  start_peer(&loop, &c, 3, false, &search);
  /* A pings B: a handshake over real sockets; B answers, so it is `seen` in A's table. */
  assert_true(ld_discv5_add_enr(ld_discv5_uv_engine(a.u), &b.enr, false, uv_now(&loop)) >= 0);
  assert_int_equal(ld_discv5_ping(ld_discv5_uv_engine(a.u), &b.enr, uv_now(&loop), NULL), 0);
  ld_discv5_uv_update(a.u);
  run_until(&loop, &a.pongs, 1);
  assert_int_equal(a.pongs, 1);
  assert_int_equal(a.sessions, 1);
  assert_int_equal(b.sessions, 1);
  /* C knows only A (its bootnode); its search's lookups ask A, which answers with B. */
  assert_true(ld_discv5_add_enr(ld_discv5_uv_engine(c.u), &a.enr, true, uv_now(&loop)) >= 0);
  ld_discv5_uv_update(c.u);
  run_until(&loop, &c.peers, 2);
  /* The search reports the bootnode (A) and the Waku node of cluster 42 shard 3 (B). */
  assert_int_equal(c.peers, 2);
  uint8_t id[32], bid[32];
  assert_int_equal(ld_enr_node_id(&c.last_peer, id), 0);
  assert_int_equal(ld_enr_node_id(&b.enr, bid), 0);
  assert_memory_equal(id, bid, 32); /* A came first, when C added it */
  assert_true(c.discovered >= 1);
  ld_waku_discv5_stats_t st;
  ld_waku_discv5_get_stats(ld_discv5_uv_search(c.u), &st);
  assert_true(st.lookups >= 1);
  assert_int_equal(ld_discv5_uv_send_drops(a.u), 0);
  ld_discv5_uv_close(a.u);
  ld_discv5_uv_close(b.u);
  ld_discv5_uv_close(c.u);
  assert_int_equal(uv_run(&loop, UV_RUN_DEFAULT), 0);
  assert_int_equal(uv_loop_close(&loop), 0);
}

static void open_errors(void **state) {
  (void)state;
  uv_loop_t loop;
  uv_loop_init(&loop);
  ld_discv5_uv_t *u, *v;
  assert_int_equal(ld_discv5_uv_open(&loop, "not-an-ip", 0, &u), LD_ERR_INVALID_ARG);
  assert_int_equal(ld_discv5_uv_open(&loop, "127.0.0.1", 0, &u), 0);
  assert_int_equal(ld_discv5_uv_open(&loop, "127.0.0.1", ld_discv5_uv_port(u), &v),
                   LD_ERR_ADDR_IN_USE);
  /* A configuration the engine refuses. */
  ld_discv5_config_t cfg;
  ld_discv5_config_default(&cfg);
  assert_int_equal(ld_discv5_uv_start(u, &cfg, NULL, NULL, NULL), LD_ERR_INVALID_ARG);
  ld_discv5_uv_close(u);
  assert_int_equal(uv_run(&loop, UV_RUN_DEFAULT), 0);
  assert_int_equal(uv_loop_close(&loop), 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(udp_loopback),
      cmocka_unit_test(open_errors),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
