/* Identify and ping between switches in one process over loopback TCP: A and B serve identify
 * and ping, C serves identify only. B dials A and C. D is a switch whose identify and ping
 * handlers misbehave on purpose (silence, garbage, a foreign key, wrong echoes). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>
#include <uv.h>

#include "base/buf.h"
#include "base/clock.h"
#include "base/error.h"
#include "identify.pb-c.h"
#include "p2p/identify.h"
#include "p2p/peerstore.h"
#include "p2p/ping.h"
#include "p2p/switch.h"
#include "node_harness.h"

#define STEP_MS 10000
#define EXTRA_PROTOCOL "/test/extra/1.0.0"

typedef struct node {
  const char *name;
  ld_privkey_t key;
  ld_pubkey_t pub;
  ld_switch_t *sw;
  ld_identify_t *id;
  ld_peerstore_t *ps;
  ld_multiaddr_t listen; /* bound address, with /p2p */
  int identified;        /* on_identified calls */
  ld_identify_info_t last;
  ld_conn_t *last_conn;
  int failed;
  bool closed;
} node_t;

typedef struct ping_result {
  unsigned rounds;
  uint64_t rtt_us[8];
  bool done;
  int err;
} ping_result_t;

typedef struct dial_result {
  ld_conn_t *conn;
  int err;
  bool done;
} dial_result_t;

static uv_loop_t g_loop;
static uv_timer_t g_ticker;
static node_t g_a = {.name = "test-a/1.0"}, g_b = {.name = "test-b/2.0"}, g_c = {.name = "test-c"};
static ld_conn_t *g_b_to_a, *g_b_to_c;

static void on_tick(uv_timer_t *t) {
  (void)t;
}

#define WAIT_FOR(cond) WAIT_FOR_MS(cond, STEP_MS)
#define WAIT_FOR_MS(cond, ms) NH_WAIT_FOR(&g_loop, cond, ms)

/* ---- callbacks ------------------------------------------------------------------------------ */

static void on_identified(ld_conn_t *c, const ld_identify_info_t *info, void *user_data) {
  node_t *n = user_data;
  assert_int_equal(ld_identify_info_copy(&n->last, info), 0);
  n->last_conn = c;
  n->identified++;
}

static void on_failed(ld_conn_t *c, int err, void *user_data) {
  (void)c;
  node_t *n = user_data;
  n->failed = err;
}

static void on_dialed(ld_conn_t *c, int err, void *user_data) {
  dial_result_t *r = user_data;
  r->conn = c;
  r->err = err;
  r->done = true;
}

static void on_ping(int err, unsigned index, uint64_t rtt_us, bool done, void *user_data) {
  ping_result_t *r = user_data;
  if (!done) {
    assert_int_equal(err, 0);
    assert_int_equal(index, r->rounds);
    if (r->rounds < 8)
      r->rtt_us[r->rounds] = rtt_us;
    r->rounds++;
    return;
  }
  assert_false(r->done);
  r->done = true;
  r->err = err;
  assert_int_equal(index, r->rounds);
}

static void reset_accept(ld_stream_t *s, void *user_data) {
  (void)user_data;
  ld_stream_reset(s);
}

static void on_closed(void *user_data) {
  node_t *n = user_data;
  n->closed = true;
}

/* ---- helpers -------------------------------------------------------------------------------- */

static void node_start(node_t *n, ld_key_type_t type, bool with_ping) {
  assert_int_equal(ld_privkey_generate(&n->key, type), 0);
  ld_privkey_public(&n->key, &n->pub);
  ld_switch_config_t cfg;
  ld_switch_config_default(&cfg);
  cfg.loop = &g_loop;
  cfg.identity = &n->key;
  n->sw = ld_switch_new(&cfg);
  assert_non_null(n->sw);
  n->id = ld_identify_new(n->sw, n->name);
  assert_non_null(n->id);
  n->ps = ld_peerstore_new(NULL);
  assert_non_null(n->ps);
  static const ld_identify_events_t events = {on_identified, on_failed};
  ld_identify_set_events(n->id, &events, n);
  ld_identify_set_peerstore(n->id, n->ps);
  if (with_ping)
    assert_int_equal(ld_ping_handle(n->sw), 0);
  ld_identify_info_init(&n->last);

  ld_multiaddr_t any;
  assert_int_equal(ld_multiaddr_parse(&any, "/ip4/127.0.0.1/tcp/0"), 0);
  assert_int_equal(ld_switch_listen(n->sw, &any), 0);
  assert_int_equal(ld_switch_listen_addrs(n->sw, &n->listen, 1), 1);
  const ld_peerid_t *self = ld_switch_peer_id(n->sw);
  assert_int_equal(ld_multiaddr_push(&n->listen, LD_MA_P2P, self->bytes, self->len), 0);
}

static ld_conn_t *dial(node_t *from, const node_t *to) {
  dial_result_t r = {0};
  assert_int_equal(ld_switch_dial(from->sw, &to->listen, on_dialed, &r), 0);
  WAIT_FOR(r.done);
  assert_int_equal(r.err, 0);
  assert_non_null(r.conn);
  return r.conn;
}

static bool has_protocol(const ld_identify_info_t *info, const char *p) {
  return ld_identify_info_has_protocol(info, p);
}

/* The bound address of `n` without /p2p. */
static ld_multiaddr_t transport_addr(const node_t *n) {
  ld_multiaddr_t ma = n->listen;
  ld_multiaddr_peerid(&ma, NULL, true);
  return ma;
}

static bool lists_addr(const ld_identify_info_t *info, const ld_multiaddr_t *ma) {
  for (size_t i = 0; i < info->n_listen_addrs; i++)
    if (ld_multiaddr_equal(&info->listen_addrs[i], ma))
      return true;
  return false;
}

/* ---- the misbehaving peer D ----------------------------------------------------------------- */

typedef enum d_mode {
  D_SILENT,    /* accept and never answer */
  D_HOLD,      /* a valid message, but no half-close */
  D_GARBAGE,   /* bytes that are no protobuf */
  D_WRONG_KEY, /* a valid message carrying A's key */
  D_NO_KEY,    /* a message without publicKey */
} d_mode_t;

typedef enum d_ping_mode { D_PING_SILENT, D_PING_WRONG } d_ping_mode_t;

static ld_switch_t *g_d;
static ld_privkey_t g_d_key;
static ld_multiaddr_t g_d_listen;
static bool g_d_closed;
static d_mode_t g_d_mode_for_b = D_SILENT;
static d_ping_mode_t g_d_ping_mode = D_PING_SILENT;

static void d_data(ld_stream_t *s, const uint8_t *data, size_t len) {
  if (strcmp(ld_stream_protocol(s), LD_PING_PROTOCOL) != 0 || g_d_ping_mode == D_PING_SILENT)
    return;
  uint8_t wrong[256];
  for (size_t off = 0; off < len; off += sizeof wrong) {
    size_t n = len - off < sizeof wrong ? len - off : sizeof wrong;
    for (size_t i = 0; i < n; i++)
      wrong[i] = (uint8_t)(data[off + i] ^ 0x5a);
    ld_stream_write(s, wrong, n);
  }
}

static void d_close(ld_stream_t *s, int err) {
  (void)s;
  (void)err;
}

static const ld_stream_handler_t g_d_handler = {.on_data = d_data, .on_close = d_close};

static void d_message(d_mode_t mode, ld_buf_t *out) {
  ld_pubkey_t pub;
  ld_privkey_public(mode == D_WRONG_KEY ? &g_a.key : &g_d_key, &pub);
  if (mode == D_GARBAGE) {
    const uint8_t junk[] = {0x05, 0xff, 0xff, 0xff, 0xff, 0xff};
    assert_int_equal(ld_buf_append(out, junk, sizeof junk), 0);
  } else if (mode == D_NO_KEY) {
    Ld__Identify__Identify m = LD__IDENTIFY__IDENTIFY__INIT;
    m.has_agentversion = 1;
    m.agentversion.data = (uint8_t *)"test-d";
    m.agentversion.len = 6;
    uint8_t body[64];
    size_t n = ld__identify__identify__pack(&m, body);
    assert_int_equal(ld_buf_lp(out, body, n), 0);
  } else {
    const char *protos[] = {LD_IDENTIFY_PROTOCOL, LD_PING_PROTOCOL};
    ld_identify_local_t local = {.public_key = &pub,
                                 .protocols = protos,
                                 .n_protocols = 2,
                                 .protocol_version = LD_IDENTIFY_PROTOCOL_VERSION,
                                 .agent_version = "test-d"};
    assert_int_equal(ld_identify_encode(&local, out), 0);
  }
}

static void d_identify_accept(ld_stream_t *s, void *user_data) {
  (void)user_data;
  ld_stream_set_handler(s, &g_d_handler, NULL);
  const ld_peerid_t *remote = ld_conn_remote_peer(ld_stream_conn(s));
  d_mode_t mode = ld_peerid_equal(remote, ld_switch_peer_id(g_a.sw)) ? D_HOLD : g_d_mode_for_b;
  if (mode == D_SILENT)
    return;
  ld_buf_t msg;
  ld_buf_init(&msg);
  d_message(mode, &msg);
  assert_int_equal(ld_stream_write(s, msg.data, msg.len), 0);
  ld_buf_clear(&msg);
  if (mode != D_HOLD)
    ld_stream_close_write(s);
}

static void d_ping_accept(ld_stream_t *s, void *user_data) {
  (void)user_data;
  ld_stream_set_handler(s, &g_d_handler, NULL);
}

static void d_closed(void *user_data) {
  (void)user_data;
  g_d_closed = true;
}

static void d_start(void) {
  assert_int_equal(ld_privkey_generate(&g_d_key, LD_KEY_ED25519), 0);
  ld_switch_config_t cfg;
  ld_switch_config_default(&cfg);
  cfg.loop = &g_loop;
  cfg.identity = &g_d_key;
  g_d = ld_switch_new(&cfg);
  assert_non_null(g_d);
  assert_int_equal(ld_switch_handle(g_d, LD_IDENTIFY_PROTOCOL, d_identify_accept, NULL), 0);
  assert_int_equal(ld_switch_handle(g_d, LD_PING_PROTOCOL, d_ping_accept, NULL), 0);
  ld_multiaddr_t any;
  assert_int_equal(ld_multiaddr_parse(&any, "/ip4/127.0.0.1/tcp/0"), 0);
  assert_int_equal(ld_switch_listen(g_d, &any), 0);
  assert_int_equal(ld_switch_listen_addrs(g_d, &g_d_listen, 1), 1);
  const ld_peerid_t *self = ld_switch_peer_id(g_d);
  assert_int_equal(ld_multiaddr_push(&g_d_listen, LD_MA_P2P, self->bytes, self->len), 0);
}

static ld_conn_t *dial_d(node_t *from) {
  node_t d = {.listen = g_d_listen};
  return dial(from, &d);
}

/* ---- setup ---------------------------------------------------------------------------------- */

static int setup(void **state) {
  (void)state;
  uv_loop_init(&g_loop);
  uv_timer_init(&g_loop, &g_ticker);
  uv_timer_start(&g_ticker, on_tick, 20, 20);
  node_start(&g_a, LD_KEY_SECP256K1, true);
  node_start(&g_b, LD_KEY_ED25519, true);
  node_start(&g_c, LD_KEY_SECP256K1, false);
  d_start();
  return 0;
}

static int teardown(void **state) {
  (void)state;
  node_t *nodes[] = {&g_a, &g_b, &g_c};
  for (size_t i = 0; i < 3; i++)
    ld_switch_close(nodes[i]->sw, on_closed, nodes[i]);
  ld_switch_close(g_d, d_closed, NULL);
  WAIT_FOR(g_a.closed && g_b.closed && g_c.closed && g_d_closed);
  uv_close((uv_handle_t *)&g_ticker, NULL);
  uv_run(&g_loop, UV_RUN_DEFAULT);
  for (size_t i = 0; i < 3; i++) {
    ld_identify_free(nodes[i]->id);
    ld_peerstore_free(nodes[i]->ps);
    ld_identify_info_clear(&nodes[i]->last);
  }
  assert_int_equal(uv_loop_close(&g_loop), 0);
  return 0;
}

/* ---- tests ---------------------------------------------------------------------------------- */

static void identifies_both_ways(void **state) {
  (void)state;
  g_b_to_a = dial(&g_b, &g_a);
  WAIT_FOR(g_a.identified >= 1 && g_b.identified >= 1);
  assert_int_equal(g_a.failed, 0);
  assert_int_equal(g_b.failed, 0);

  /* B's view of A. */
  const ld_identify_info_t *a = &g_b.last;
  assert_ptr_equal(g_b.last_conn, g_b_to_a);
  assert_true(ld_peerid_equal(&a->peer_id, ld_switch_peer_id(g_a.sw)));
  assert_true(a->has_public_key);
  assert_true(ld_pubkey_equal(&a->public_key, &g_a.pub));
  assert_string_equal(a->agent_version, "test-a/1.0");
  assert_string_equal(a->protocol_version, LD_IDENTIFY_PROTOCOL_VERSION);
  assert_true(has_protocol(a, LD_IDENTIFY_PROTOCOL));
  assert_true(has_protocol(a, LD_IDENTIFY_PUSH_PROTOCOL));
  assert_true(has_protocol(a, LD_PING_PROTOCOL));
  ld_multiaddr_t a_addr = transport_addr(&g_a);
  assert_true(lists_addr(a, &a_addr));
  assert_true(a->has_observed_addr); /* how A sees B: B's end of the connection */
  assert_true(ld_multiaddr_equal(&a->observed_addr, ld_conn_local_addr(g_b_to_a)));
  assert_non_null(ld_identify_get(g_b.id, g_b_to_a));

  /* A's view of B. */
  const ld_identify_info_t *b = &g_a.last;
  assert_true(ld_peerid_equal(&b->peer_id, ld_switch_peer_id(g_b.sw)));
  assert_true(ld_pubkey_equal(&b->public_key, &g_b.pub));
  assert_string_equal(b->agent_version, "test-b/2.0");
  assert_true(has_protocol(b, LD_PING_PROTOCOL));
  ld_multiaddr_t b_addr = transport_addr(&g_b);
  assert_true(lists_addr(b, &b_addr));
  assert_true(ld_multiaddr_equal(&b->observed_addr, ld_conn_local_addr(g_a.last_conn)));
  assert_false(ld_conn_is_outbound(g_a.last_conn));

  /* B's peer store. */
  const ld_peerstore_peer_t *p = ld_peerstore_get(g_b.ps, ld_switch_peer_id(g_a.sw));
  assert_non_null(p);
  assert_string_equal(p->agent_version, "test-a/1.0");
  assert_string_equal(p->protocol_version, LD_IDENTIFY_PROTOCOL_VERSION);
  assert_non_null(p->public_key);
  assert_true(ld_pubkey_equal(p->public_key, &g_a.pub));
  assert_true(ld_peerstore_supports(g_b.ps, ld_switch_peer_id(g_a.sw), LD_PING_PROTOCOL));
  assert_true(p->n_addrs >= 1);
}

static void push_updates_protocols_and_addresses(void **state) {
  (void)state;
  int before = g_b.identified;
  assert_false(has_protocol(&g_b.last, EXTRA_PROTOCOL));
  assert_int_equal(ld_switch_handle(g_a.sw, EXTRA_PROTOCOL, reset_accept, NULL), 0);
  assert_int_equal(ld_identify_push(g_a.id), 1);
  WAIT_FOR(g_b.identified > before);
  assert_true(has_protocol(&g_b.last, EXTRA_PROTOCOL));
  assert_string_equal(g_b.last.agent_version, "test-a/1.0");
  assert_true(ld_peerstore_supports(g_b.ps, ld_switch_peer_id(g_a.sw), EXTRA_PROTOCOL));

  ld_multiaddr_t announce;
  assert_int_equal(ld_multiaddr_parse(&announce, "/dns4/a.example/tcp/443/wss"), 0);
  assert_int_equal(ld_identify_set_listen_addrs(g_a.id, &announce, 1), 0);
  before = g_b.identified;
  assert_int_equal(ld_identify_push(g_a.id), 1);
  WAIT_FOR(g_b.identified > before);
  assert_int_equal(g_b.last.n_listen_addrs, 1);
  assert_true(ld_multiaddr_equal(&g_b.last.listen_addrs[0], &announce));
  const ld_peerstore_peer_t *p = ld_peerstore_get(g_b.ps, ld_switch_peer_id(g_a.sw));
  assert_int_equal(p->n_addrs, 1);
  assert_true(ld_multiaddr_equal(&p->addrs[0], &announce));
  assert_int_equal(ld_identify_set_listen_addrs(g_a.id, NULL, 0), 0);
  assert_int_equal(g_b.failed, 0);
}

static void ping_measures_round_trips(void **state) {
  (void)state;
  ping_result_t r = {0}, busy = {0};
  assert_int_equal(ld_ping(g_b.sw, g_b_to_a, 3, on_ping, &r), 0);
  assert_int_equal(ld_ping(g_b.sw, g_b_to_a, 1, on_ping, &busy), LD_ERR_AGAIN);
  assert_int_equal(ld_ping(g_b.sw, g_b_to_a, 0, on_ping, &busy), LD_ERR_INVALID_ARG);
  WAIT_FOR(r.done);
  assert_int_equal(r.err, 0);
  assert_int_equal(r.rounds, 3);
  for (unsigned i = 0; i < 3; i++)
    assert_true(r.rtt_us[i] < 5u * 1000 * 1000);

  /* The other direction, on A's inbound connection; and again from B once the first ended. */
  ping_result_t back = {0}, again = {0};
  assert_int_equal(ld_ping(g_a.sw, g_a.last_conn, 2, on_ping, &back), 0);
  assert_int_equal(ld_ping(g_b.sw, g_b_to_a, 1, on_ping, &again), 0);
  WAIT_FOR(back.done && again.done);
  assert_int_equal(back.err, 0);
  assert_int_equal(back.rounds, 2);
  assert_int_equal(again.err, 0);
  assert_int_equal(again.rounds, 1);
  assert_false(busy.done);
}

static void ping_without_handler_is_unsupported(void **state) {
  (void)state;
  int before = g_b.identified;
  g_b_to_c = dial(&g_b, &g_c);
  WAIT_FOR(g_b.identified > before && g_b.last_conn == g_b_to_c);
  assert_string_equal(g_b.last.agent_version, "test-c");
  assert_false(has_protocol(&g_b.last, LD_PING_PROTOCOL));
  assert_true(has_protocol(&g_b.last, LD_IDENTIFY_PROTOCOL));

  ping_result_t r = {0};
  assert_int_equal(ld_ping(g_b.sw, g_b_to_c, 2, on_ping, &r), 0);
  WAIT_FOR(r.done);
  assert_int_equal(r.err, LD_ERR_PROTOCOL_UNSUPPORTED);
  assert_int_equal(r.rounds, 0);

  /* The failed ping leaves the connection usable for another attempt. */
  ping_result_t again = {0};
  assert_int_equal(ld_ping(g_b.sw, g_b_to_c, 1, on_ping, &again), 0);
  WAIT_FOR(again.done);
  assert_int_equal(again.err, LD_ERR_PROTOCOL_UNSUPPORTED);
}

static void closing_a_connection_forgets_it(void **state) {
  (void)state;
  ld_conn_close(g_b_to_c, 0, true);
  WAIT_FOR(ld_switch_connections(g_b.sw, NULL, 0) == 1);
  /* The peer store keeps what identify learnt. */
  assert_non_null(ld_peerstore_get(g_b.ps, ld_switch_peer_id(g_c.sw)));
  assert_int_equal(ld_identify_push(g_b.id), 1);
  nh_pump(&g_loop);
}

/* A request that is never answered times out; a message without half-close is used when the
 * deadline passes; a ping that is never echoed times out. All three run at the same time. */
static void slow_peers_time_out(void **state) {
  (void)state;
  g_d_mode_for_b = D_SILENT;
  g_d_ping_mode = D_PING_SILENT;
  g_b.failed = 0;
  int a_before = g_a.identified;
  ld_conn_t *a_to_d = dial_d(&g_a);
  ld_conn_t *b_to_d = dial_d(&g_b);
  ping_result_t r = {0};
  assert_int_equal(ld_ping(g_b.sw, b_to_d, 1, on_ping, &r), 0);
  uint64_t start = ld_now_ms();
  WAIT_FOR_MS(g_b.failed != 0 && g_a.identified > a_before, LD_IDENTIFY_TIMEOUT_MS + 3000);
  assert_true(ld_now_ms() - start >= LD_IDENTIFY_TIMEOUT_MS - 500);
  assert_int_equal(g_b.failed, LD_ERR_TIMEOUT);
  assert_ptr_equal(g_a.last_conn, a_to_d);
  assert_string_equal(g_a.last.agent_version, "test-d");
  assert_true(ld_peerid_equal(&g_a.last.peer_id, ld_switch_peer_id(g_d)));
  assert_null(ld_identify_get(g_b.id, b_to_d));
  WAIT_FOR_MS(r.done, LD_PING_TIMEOUT_MS + 3000);
  assert_true(ld_now_ms() - start >= LD_PING_TIMEOUT_MS - 500);
  assert_int_equal(r.err, LD_ERR_TIMEOUT);
  assert_int_equal(r.rounds, 0);

  /* A wrong echo is a protocol error. */
  g_d_ping_mode = D_PING_WRONG;
  ping_result_t wrong = {0};
  assert_int_equal(ld_ping(g_b.sw, b_to_d, 3, on_ping, &wrong), 0);
  WAIT_FOR(wrong.done);
  assert_int_equal(wrong.err, LD_ERR_PROTOCOL);
  assert_int_equal(wrong.rounds, 0);
  ld_conn_close(b_to_d, 0, true);
  ld_conn_close(a_to_d, 0, true);
}

static void bad_identify_messages_fail(void **state) {
  (void)state;
  const struct {
    d_mode_t mode;
    int err;
  } cases[] = {
      {D_GARBAGE, LD_ERR_BAD_PROTOBUF},
      {D_WRONG_KEY, LD_ERR_PEER_ID_MISMATCH},
      {D_NO_KEY, LD_ERR_BAD_KEY},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    WAIT_FOR(ld_switch_connections(g_d, NULL, 0) == 0);
    g_d_mode_for_b = cases[i].mode;
    g_b.failed = 0;
    int before = g_b.identified;
    ld_conn_t *c = dial_d(&g_b);
    WAIT_FOR(g_b.failed != 0);
    assert_int_equal(g_b.failed, cases[i].err);
    assert_int_equal(g_b.identified, before);
    assert_null(ld_identify_get(g_b.id, c));
    ld_conn_close(c, 0, true);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(identifies_both_ways),
      cmocka_unit_test(push_updates_protocols_and_addresses),
      cmocka_unit_test(ping_measures_round_trips),
      cmocka_unit_test(ping_without_handler_is_unsupported),
      cmocka_unit_test(closing_a_connection_forgets_it),
      cmocka_unit_test(slow_peers_time_out),
      cmocka_unit_test(bad_identify_messages_fail),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
