/* The Network Reliability Service between real nodes on loopback, with no store node anywhere
 * (--reliability-mode=p2p):
 *   - a send on a Core node is confirmed (LD_EVENT_MESSAGING_SENT) by peer presence: the sets of
 *     two distinct peers hold it; with more confirming peers asked for than exist it is not, nor
 *     by a store-sync peer that answers our content-topic scope as disjoint;
 *   - a Core node that was away for a minute while messages were sent comes back and receives
 *     every one of them by reconciliation (not by relay: they left gossip's window), each
 *     reported once;
 *   - store at start-up only: a node whose last-online time is an hour old asks a store node once
 *     for [last online, now] and gets what it holds from then (not from before), and writes its
 *     last-online time when it closes;
 *   - an Edge node does both against two service peers, and replaces a service peer that does
 *     not reconcile its topics (a store-sync node) by another (lightpush send confirmed, missed
 *     messages recovered over its filter peers' sets);
 *   - a bare libp2p peer that pushes in NRS sessions a forged message (on a protected shard,
 *     signed by another key or unsigned), one older than the window, one far ahead, or one nobody
 *     asked for, is refused, disconnected and banned; a valid solicited push is delivered once
 *     (the control);
 *   - on a node with RLN-relay, a pushed message without a valid proof is refused as relay would
 *     refuse it (and the peer cut off), one with a valid proof delivered.
 * The offline node is away for a minute (OUTAGE_MS); bench/nrs.c measures 1,000 messages then. */
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

#include "base/buf.h"
#include "base/clock.h"
#include "base/error.h"
#include "base/hex.h"
#include "crypto/crypto.h"
#include "messaging/messaging.h"
#include "messaging/resume.h"
#include "node/events.h"
#include "node/node.h"
#include "http_client.h"
#include "node_harness.h"
#include "rln_harness.h"
#include "p2p/reqresp.h"
#include "switch_harness.h"
#include "waku/archive/archive.h"
#include "waku/nrs/nrs.h"
#include "waku/relay/validators.h"
#include "waku/sync/codec.h"
#include "waku/sync/transfer.h"

#define SEC 1000000000ll
#define STEP_MS 30000
#define PUBSUB "/waku/2/rs/0/0"
#define CONTENT "/test/1/nrs/proto"
#define MAX_HASHES 64
/* Longer than gossipsub's IHAVE/IWANT window (3 heartbeats of 1 s): what was sent before is
 * gone from relay and can come back only through reconciliation. */
#define PAST_GOSSIP_MS 5000
/* How long the offline node of an_offline_node_recovers_every_missed_message is away. */
#define OUTAGE_MS 60000

static uv_loop_t g_loop;

#define WAIT_FOR(cond) NH_WAIT_FOR(&g_loop, cond, STEP_MS)

/* ---- clients --------------------------------------------------------------------------------- */

typedef struct peer {
  ld_node_t *node;
  ld_messaging_t *m;
  int propagated, sent, errors, received;
  uint8_t hashes[MAX_HASHES][LD_WAKU_HASH_LEN];
  int counts[MAX_HASHES];
  int n_hashes;
  bool done;
} peer_t;

static void on_send_event(int kind, const void *payload, void *ud) {
  (void)payload;
  peer_t *p = ud;
  if (kind == LD_EVENT_MESSAGING_PROPAGATED)
    p->propagated++;
  else if (kind == LD_EVENT_MESSAGING_SENT)
    p->sent++;
  else
    p->errors++;
}

static int received_count(const peer_t *p, const uint8_t hash[LD_WAKU_HASH_LEN]) {
  for (int i = 0; i < p->n_hashes; i++)
    if (memcmp(p->hashes[i], hash, LD_WAKU_HASH_LEN) == 0)
      return p->counts[i];
  return 0;
}

static void on_received(int kind, const void *payload, void *ud) {
  (void)kind;
  const ld_messaging_received_event_t *ev = payload;
  peer_t *p = ud;
  int i = 0;
  while (i < p->n_hashes && memcmp(p->hashes[i], ev->hash, LD_WAKU_HASH_LEN) != 0)
    i++;
  if (i == p->n_hashes) {
    assert_true(p->n_hashes < MAX_HASHES);
    memcpy(p->hashes[p->n_hashes++], ev->hash, LD_WAKU_HASH_LEN);
  }
  p->counts[i]++;
  p->received++;
}

static ld_node_config_t *p2p_config(bool relay, size_t confirm_peers) {
  ld_node_config_t *cfg = nh_config();
  cfg->relay = relay;
  cfg->reliability_mode = LD_NODE_RELIABILITY_P2P;
  cfg->reliability_confirm_peers = (uint32_t)confirm_peers;
  cfg->reliability_interval_ms = 1000;
  return cfg;
}

static void start_node(peer_t *p, ld_node_config_t *cfg) {
  memset(p, 0, sizeof *p);
  p->node = nh_start(&g_loop, cfg);
  assert_non_null(ld_node_nrs(p->node));
  assert_null(ld_node_store_sync(p->node));
  ld_broker_t *b = ld_node_broker(p->node);
  assert_true(ld_broker_subscribe(b, LD_EVENT_MESSAGING_PROPAGATED, on_send_event, p) > 0);
  assert_true(ld_broker_subscribe(b, LD_EVENT_MESSAGING_SENT, on_send_event, p) > 0);
  assert_true(ld_broker_subscribe(b, LD_EVENT_MESSAGING_ERROR, on_send_event, p) > 0);
  assert_true(ld_broker_subscribe(b, LD_EVENT_MESSAGING_RECEIVED, on_received, p) > 0);
}

static void start_messaging(peer_t *p, ld_messaging_mode_t mode) {
  ld_messaging_config_t c;
  ld_messaging_config_default(&c);
  c.mode = mode;
  c.tick_ms = 100;
  c.retry_window_ms = 30000;
  int err = -1;
  p->m = ld_messaging_new(p->node, &c, &err);
  assert_int_equal(err, 0);
  char why[128];
  assert_int_equal(ld_messaging_subscribe(p->m, CONTENT, why, sizeof why), 0);
}

static void on_done(void *ud) {
  *(bool *)ud = true;
}

static void stop_peer(peer_t *p) {
  if (p->m != NULL) {
    p->done = false;
    ld_messaging_free(p->m, on_done, &p->done);
    WAIT_FOR(p->done);
    p->m = NULL;
  }
  nh_stop(&g_loop, p->node, STEP_MS);
  p->node = NULL;
}

static void send_text(peer_t *p, const char *text, uint8_t hash[LD_WAKU_HASH_LEN]) {
  ld_messaging_envelope_t env = {CONTENT, (const uint8_t *)text, strlen(text), NULL, 0, false};
  char rid[LD_MESSAGING_REQUEST_ID_LEN + 1], why[256] = "";
  assert_int_equal(ld_messaging_send(p->m, &env, rid, why, sizeof why), 0);
  const ld_message_record_t *r = ld_messaging_record_by_request(p->m, rid);
  assert_non_null(r);
  assert_true(r->has_hash);
  memcpy(hash, r->hash, LD_WAKU_HASH_LEN);
}

static size_t mesh_peers(peer_t *p) {
  return ld_gs_service_mesh_peers(ld_node_gossipsub(p->node), PUBSUB, NULL, 0);
}

static ld_nrs_stats_t nrs_stats(peer_t *p) {
  ld_nrs_stats_t st;
  ld_nrs_get_stats(ld_node_nrs(p->node), &st);
  return st;
}

static bool sync_ready(peer_t *p) {
  ld_store_sync_stats_t st;
  ld_store_sync_get_stats(ld_nrs_sync(ld_node_nrs(p->node)), &st);
  return st.ready;
}

/* ---- Core: confirmation by presence ---------------------------------------------------------- */

/* A (the sender) and B, C, all connected to each other, p2p, no store node. */
static void start_core_trio(peer_t *a, peer_t *b, peer_t *c, size_t confirm_peers) {
  start_node(b, p2p_config(true, confirm_peers));
  ld_node_config_t *cc = p2p_config(true, confirm_peers);
  nh_add_static(cc, b->node);
  start_node(c, cc);
  ld_node_config_t *ca = p2p_config(true, confirm_peers);
  nh_add_static(ca, b->node);
  nh_add_static(ca, c->node);
  char err[256];
  assert_int_equal(ld_node_config_set_rest(ca, true, "127.0.0.1", 0, 0, err, sizeof err), 0);
  assert_int_equal(ld_node_config_set_metrics(ca, true, "127.0.0.1", 0, 0, err, sizeof err), 0);
  start_node(a, ca);
  start_messaging(a, LD_MESSAGING_CORE);
  start_messaging(b, LD_MESSAGING_CORE);
  start_messaging(c, LD_MESSAGING_CORE);
  WAIT_FOR(mesh_peers(a) >= 2 && mesh_peers(b) >= 2 && mesh_peers(c) >= 2);
  WAIT_FOR(sync_ready(a) && sync_ready(b) && sync_ready(c));
}

static void a_send_is_confirmed_by_two_peers(void **state) {
  (void)state;
  peer_t a, b, c;
  start_core_trio(&a, &b, &c, 2);
  uint8_t hash[LD_WAKU_HASH_LEN];
  send_text(&a, "confirmed by presence", hash);
  WAIT_FOR(a.sent == 1);
  assert_int_equal(a.errors, 0);
  assert_true(ld_nrs_presence(ld_node_nrs(a.node), hash) >= 2);
  assert_true(ld_nrs_confirmed(ld_node_nrs(a.node), hash));
  ld_nrs_stats_t st = nrs_stats(&a);
  assert_int_equal(st.confirmations, 1);
  assert_true(st.reconciliations_ok >= 2);
  WAIT_FOR(received_count(&b, hash) == 1 && received_count(&c, hash) == 1);
  const ld_message_record_t *r = ld_messaging_record_by_hash(a.m, hash);
  assert_non_null(r);
  assert_true(r->sent);
  /* the figures and the mode over HTTP */
  http_response_t res;
  assert_int_equal(http_request_on_loop(&g_loop, ld_node_metrics_port(a.node), "GET", "/metrics",
                                        NULL, NULL, 0, &res),
                   0);
  assert_int_equal(res.status, 200);
  assert_non_null(strstr(res.body, "waku_reliability_mode{mode=\"p2p\"} 1"));
  assert_non_null(strstr(res.body, "waku_nrs_confirmations_total 1"));
  assert_non_null(strstr(res.body, "waku_nrs_reconciliations_total{result=\"complete\"}"));
  assert_non_null(strstr(res.body, "waku_nrs_items_pulled_total 0"));
  http_response_free(&res);
  assert_int_equal(http_request_on_loop(&g_loop, ld_node_rest_port(a.node), "GET", "/debug/v1/info",
                                        NULL, NULL, 0, &res),
                   0);
  assert_int_equal(res.status, 200);
  assert_non_null(strstr(res.body, "\"reliabilityMode\":\"p2p\""));
  http_response_free(&res);
  stop_peer(&a);
  stop_peer(&b);
  stop_peer(&c);
}

/* Three confirming peers asked for, two exist: propagated, never confirmed (the rounds run and
 * each of the two peers is counted once). */
static void too_few_peers_never_confirm(void **state) {
  (void)state;
  peer_t a, b, c;
  start_core_trio(&a, &b, &c, 3);
  uint8_t hash[LD_WAKU_HASH_LEN];
  send_text(&a, "not enough peers", hash);
  WAIT_FOR(a.propagated == 1);
  WAIT_FOR(ld_nrs_presence(ld_node_nrs(a.node), hash) == 2);
  uint64_t rounds = nrs_stats(&a).rounds;
  WAIT_FOR(nrs_stats(&a).rounds >= rounds + 5);
  assert_int_equal(ld_nrs_presence(ld_node_nrs(a.node), hash), 2);
  assert_false(ld_nrs_confirmed(ld_node_nrs(a.node), hash));
  assert_int_equal(a.sent, 0);
  assert_int_equal(nrs_stats(&a).confirmations, 0);
  stop_peer(&a);
  stop_peer(&b);
  stop_peer(&c);
}

/* A store-sync node serves the reconciliation protocol too, but keeps its sets per shard: it
 * answers our content-topic scope with a zero-length frame (disjoint). Such a session is complete
 * and lists nothing as lacking, yet proves no presence: the send stays unconfirmed. */
static void a_disjoint_store_sync_peer_confirms_nothing(void **state) {
  (void)state;
  char err[256];
  peer_t s, a;
  ld_node_config_t *cs = nh_config();
  cs->store = cs->store_sync = true;
  assert_int_equal(ld_node_config_set_store_db_url(cs, "memory://", err, sizeof err), 0);
  memset(&s, 0, sizeof s);
  s.node = nh_start(&g_loop, cs);
  ld_node_config_t *ca = p2p_config(true, 1);
  nh_add_static(ca, s.node);
  start_node(&a, ca);
  start_messaging(&a, LD_MESSAGING_CORE);
  WAIT_FOR(mesh_peers(&a) >= 1 && sync_ready(&a));
  uint8_t hash[LD_WAKU_HASH_LEN];
  send_text(&a, "only a store-sync peer", hash);
  WAIT_FOR(a.propagated == 1);
  uint64_t ok = nrs_stats(&a).reconciliations_ok;
  WAIT_FOR(nrs_stats(&a).reconciliations_ok >= ok + 3); /* sessions with it end complete */
  assert_int_equal(ld_nrs_presence(ld_node_nrs(a.node), hash), 0);
  assert_int_equal(a.sent, 0);
  stop_peer(&a);
  nh_stop(&g_loop, s.node, STEP_MS);
}

/* ---- Core: recovery -------------------------------------------------------------------------- */

#define N_MISSED 20

static void an_offline_node_recovers_every_missed_message(void **state) {
  (void)state;
  peer_t a, b, c;
  start_core_trio(&a, &b, &c, 1);
  stop_peer(&c); /* C goes away for a minute; half the messages at its start, half midway */
  uint64_t away_since = uv_now(&g_loop);
  uint8_t hashes[N_MISSED][LD_WAKU_HASH_LEN];
  for (int i = 0; i < N_MISSED; i++) {
    if (i == N_MISSED / 2)
      nh_run_for(&g_loop, OUTAGE_MS / 2);
    char text[32];
    snprintf(text, sizeof text, "missed %d", i);
    send_text(&a, text, hashes[i]);
  }
  WAIT_FOR(a.sent == N_MISSED);
  for (int i = 0; i < N_MISSED; i++)
    WAIT_FOR(received_count(&b, hashes[i]) == 1);
  uint64_t away = uv_now(&g_loop) - away_since;
  if (away < OUTAGE_MS)
    nh_run_for(&g_loop, OUTAGE_MS - away);
  /* C comes back: a new node, connected to B only, subscribed to the content topic */
  ld_node_config_t *cc = p2p_config(true, 1);
  nh_add_static(cc, b.node);
  start_node(&c, cc);
  start_messaging(&c, LD_MESSAGING_CORE);
  for (int i = 0; i < N_MISSED; i++)
    WAIT_FOR(received_count(&c, hashes[i]) == 1);
  ld_nrs_stats_t st = nrs_stats(&c);
  assert_true(st.items_pulled >= N_MISSED); /* by reconciliation, not by relay */
  assert_true(nrs_stats(&b).items_pushed >= N_MISSED);
  nh_run_for(&g_loop, 2000); /* further rounds deliver nothing twice */
  for (int i = 0; i < N_MISSED; i++)
    assert_int_equal(received_count(&c, hashes[i]), 1);
  assert_int_equal(c.received, N_MISSED);
  stop_peer(&a);
  stop_peer(&b);
  stop_peer(&c);
}

/* ---- Edge ------------------------------------------------------------------------------------ */

static void an_edge_node_confirms_and_recovers_through_service_peers(void **state) {
  (void)state;
  peer_t s1, s2, a, e;
  ld_node_config_t *c1 = p2p_config(true, 2);
  c1->lightpush = c1->filter = true;
  start_node(&s1, c1);
  ld_node_config_t *c2 = p2p_config(true, 2);
  c2->lightpush = c2->filter = true;
  nh_add_static(c2, s1.node);
  start_node(&s2, c2);
  ld_node_config_t *ca = p2p_config(true, 2);
  nh_add_static(ca, s1.node);
  nh_add_static(ca, s2.node);
  start_node(&a, ca);
  start_messaging(&a, LD_MESSAGING_CORE);
  WAIT_FOR(mesh_peers(&s1) >= 2 && mesh_peers(&s2) >= 2 && mesh_peers(&a) >= 2);
  ld_node_config_t *ce = p2p_config(false, 2);
  nh_add_static(ce, s1.node);
  nh_add_static(ce, s2.node);
  start_node(&e, ce);
  start_messaging(&e, LD_MESSAGING_EDGE);
  WAIT_FOR(sync_ready(&e));
  WAIT_FOR(ld_messaging_connection_status(e.m) != LD_CONNECTION_DISCONNECTED);

  /* a lightpush send confirmed by the two service peers' sets */
  uint8_t hash[LD_WAKU_HASH_LEN];
  send_text(&e, "from the edge", hash);
  WAIT_FOR(e.sent == 1);
  assert_true(ld_nrs_confirmed(ld_node_nrs(e.node), hash));
  WAIT_FOR(received_count(&a, hash) == 1);

  /* away while A sends; back (a new Edge node): recovered from its service peers' sets */
  stop_peer(&e);
  uint8_t missed[5][LD_WAKU_HASH_LEN];
  for (int i = 0; i < 5; i++) {
    char text[32];
    snprintf(text, sizeof text, "edge missed %d", i);
    send_text(&a, text, missed[i]);
  }
  WAIT_FOR(nrs_stats(&s1).items >= 6 && nrs_stats(&s2).items >= 6);
  nh_run_for(&g_loop, PAST_GOSSIP_MS);
  ce = p2p_config(false, 2);
  nh_add_static(ce, s1.node);
  nh_add_static(ce, s2.node);
  start_node(&e, ce);
  start_messaging(&e, LD_MESSAGING_EDGE);
  for (int i = 0; i < 5; i++)
    WAIT_FOR(received_count(&e, missed[i]) == 1);
  assert_true(nrs_stats(&e).items_pulled >= 5);
  stop_peer(&e);
  stop_peer(&a);
  stop_peer(&s2);
  stop_peer(&s1);
}

/* A light node's first service peers that serve reconciliation are a store-sync node (which
 * answers its content-topic scope as disjoint) and S1: the store-sync node is reported to the
 * selector and replaced by S2, so the send is confirmed by two real peers' sets. */
static void an_edge_node_replaces_a_service_peer_that_does_not_reconcile(void **state) {
  (void)state;
  char err[256];
  peer_t x, s1, s2, e;
  ld_node_config_t *cx = nh_config();
  cx->store = cx->store_sync = true;
  assert_int_equal(ld_node_config_set_store_db_url(cx, "memory://", err, sizeof err), 0);
  memset(&x, 0, sizeof x);
  x.node = nh_start(&g_loop, cx);
  ld_node_config_t *c1 = p2p_config(true, 2);
  c1->lightpush = c1->filter = true;
  nh_add_static(c1, x.node);
  start_node(&s1, c1);
  ld_node_config_t *c2 = p2p_config(true, 2);
  c2->lightpush = c2->filter = true;
  nh_add_static(c2, s1.node);
  start_node(&s2, c2);
  WAIT_FOR(mesh_peers(&s1) >= 2 && mesh_peers(&s2) >= 1);
  ld_node_config_t *ce = p2p_config(false, 2);
  nh_add_static(ce, x.node);
  nh_add_static(ce, s1.node);
  nh_add_static(ce, s2.node);
  start_node(&e, ce);
  start_messaging(&e, LD_MESSAGING_EDGE);
  WAIT_FOR(sync_ready(&e) && ld_messaging_connection_status(e.m) != LD_CONNECTION_DISCONNECTED);
  uint8_t hash[LD_WAKU_HASH_LEN];
  send_text(&e, "past a store-sync node", hash);
  WAIT_FOR(e.sent == 1);
  ld_store_sync_stats_t xs;
  ld_store_sync_get_stats(ld_node_store_sync(x.node), &xs);
  assert_true(xs.sessions_accepted >= 1); /* it was one of the first two, and was asked */
  assert_int_equal(ld_nrs_presence(ld_node_nrs(e.node), hash), 2);
  stop_peer(&e);
  stop_peer(&s2);
  stop_peer(&s1);
  nh_stop(&g_loop, x.node, STEP_MS);
}

/* ---- bad peers ------------------------------------------------------------------------------- */

typedef struct bare {
  ld_switch_t *sw;
  ld_conn_t *conn;
  sh_events_t ev;
  ld_stream_t *recon, *xfer;
  bool recon_open, xfer_open, recon_closed, xfer_closed;
  ld_buf_t rx;
  size_t frames;
} bare_t;

static void b_on_data(ld_stream_t *st, const uint8_t *data, size_t len) {
  bare_t *p = ld_stream_user_data(st);
  ld_buf_append(&p->rx, data, len);
  for (;;) {
    const uint8_t *body;
    size_t n;
    int took = ld_reqresp_read_frame(p->rx.data, p->rx.len, 64u << 20, &body, &n);
    if (took < 0)
      return;
    p->frames++;
    ld_buf_consume(&p->rx, (size_t)took);
  }
}

static void b_on_close(ld_stream_t *st, int err) {
  (void)err;
  bare_t *p = ld_stream_user_data(st);
  if (st == p->recon) {
    p->recon_closed = true;
    p->recon = NULL;
  } else {
    p->xfer_closed = true;
    p->xfer = NULL;
  }
}

static const ld_stream_handler_t k_bare_handler = {b_on_data, NULL, b_on_close, NULL};

static void b_on_open(ld_stream_t *st, int err, void *ud) {
  (void)err;
  bare_t *p = ud;
  if (st == NULL) {
    p->recon_closed = p->xfer_closed = true;
    return;
  }
  ld_stream_set_handler(st, &k_bare_handler, p);
  if (strcmp(ld_stream_protocol(st), LD_SYNC_RECONCILIATION_PROTOCOL) == 0) {
    p->recon = st;
    p->recon_open = true;
  } else {
    p->xfer = st;
    p->xfer_open = true;
  }
}

static void bare_connect(bare_t *p, ld_node_t *node) {
  memset(p, 0, sizeof *p);
  p->sw = sh_switch_new(&g_loop, NULL);
  sh_track_events(p->sw, &p->ev);
  ld_buf_init(&p->rx);
  ld_multiaddr_t addr;
  assert_int_equal(ld_node_listen_addrs(node, &addr, 1), 1);
  int err = 0;
  p->conn = sh_dial_wait(p->sw, &g_loop, &addr, &err);
  assert_non_null(p->conn);
}

static void bare_close(bare_t *p) {
  sh_switch_close(p->sw, &g_loop);
  ld_buf_clear(&p->rx);
}

static void bare_open(bare_t *p, const char *proto) {
  bool recon = strcmp(proto, LD_SYNC_RECONCILIATION_PROTOCOL) == 0;
  assert_int_equal(ld_switch_open_stream(p->sw, p->conn, &proto, 1, b_on_open, p), 0);
  if (recon)
    WAIT_FOR(p->recon_open || p->recon_closed);
  else
    WAIT_FOR(p->xfer_open || p->xfer_closed);
}

static void write_frame(ld_stream_t *st, const ld_buf_t *body) {
  ld_buf_t f;
  ld_buf_init(&f);
  uint8_t *dst;
  assert_int_equal(ld_reqresp_append_frame(&f, body->len, &dst), 0);
  if (body->len > 0)
    memcpy(dst, body->data, body->len);
  assert_int_equal(ld_stream_write(st, f.data, f.len), 0);
  ld_buf_clear(&f);
}

typedef struct msg {
  char payload[40];
  uint8_t sig[LD_RELAY_SIGNATURE_LEN];
  ld_waku_message_t m;
  uint8_t hash[LD_WAKU_HASH_LEN];
} msg_t;

/* The key of the victim's protected shard (0), and another one. */
static uint8_t g_shard_key[LD_SECP256K1_SECRET_LEN], g_other_key[LD_SECP256K1_SECRET_LEN];

/* A message on PUBSUB signed with `key` (NULL: unsigned). */
static void make_msg(msg_t *x, const char *text, int64_t ts, const uint8_t *key) {
  memset(x, 0, sizeof *x);
  snprintf(x->payload, sizeof x->payload, "%s", text);
  ld_waku_message_init(&x->m);
  x->m.payload = (const uint8_t *)x->payload;
  x->m.payload_len = strlen(x->payload);
  x->m.content_topic = CONTENT;
  x->m.content_topic_len = strlen(CONTENT);
  x->m.timestamp = ts;
  if (key != NULL) {
    assert_int_equal(ld_relay_sign(key, PUBSUB, &x->m, x->sig), 0);
    x->m.meta = x->sig;
    x->m.meta_len = sizeof x->sig;
  }
  assert_int_equal(ld_waku_message_hash(PUBSUB, &x->m, x->hash), 0);
}

/* Lists one item to the node in a session scoped to CONTENT over [lo, hi]; the node answers. */
static void list_in_session(bare_t *p, const msg_t *m, int64_t lo, int64_t hi) {
  bare_open(p, LD_SYNC_RECONCILIATION_PROTOCOL);
  assert_true(p->recon_open);
  ld_sync_payload_t pl;
  ld_sync_payload_init(&pl);
  ld_sync_id_t start = ld_sync_id_bound(lo), upper = ld_sync_id_bound(hi);
  ld_sync_payload_reset(&pl, &start);
  assert_int_equal(ld_sync_payload_add_topic(&pl, false, PUBSUB, strlen(PUBSUB)), 0);
  assert_int_equal(ld_sync_payload_add_topic(&pl, true, CONTENT, strlen(CONTENT)), 0);
  ld_sync_id_t id;
  id.time = m->m.timestamp;
  memcpy(id.hash, m->hash, LD_WAKU_HASH_LEN);
  assert_int_equal(ld_sync_payload_add_item_set(&pl, &upper, &id, 1, false), 0);
  ld_buf_t body;
  ld_buf_init(&body);
  assert_int_equal(ld_sync_payload_encode(&pl, &body), 0);
  write_frame(p->recon, &body);
  ld_buf_clear(&body);
  ld_sync_payload_clear(&pl);
  WAIT_FOR(p->frames >= 1 || p->recon_closed);
  assert_true(p->frames >= 1);
}

static void push_message(bare_t *p, const msg_t *m) {
  if (p->xfer == NULL)
    bare_open(p, LD_SYNC_TRANSFER_PROTOCOL);
  assert_true(p->xfer_open);
  ld_buf_t body;
  ld_buf_init(&body);
  assert_int_equal(ld_sync_transfer_encode(PUBSUB, strlen(PUBSUB), &m->m, 0, &body), 0);
  write_frame(p->xfer, &body);
  ld_buf_clear(&body);
}

/* ---- store at start-up only ----------------------------------------------------------------- */

static void inserted(int err, void *ud) {
  assert_int_equal(err, 0);
  (*(int *)ud)++;
}

static void a_node_resumes_from_the_store_once_at_start(void **state) {
  (void)state;
  char dir[] = "/tmp/ld-nrs-resume-XXXXXX";
  assert_non_null(mkdtemp(dir));
  char path[128];
  snprintf(path, sizeof path, "%s/%s", dir, LD_RESUME_FILE);
  uint64_t now_ms = ld_wall_ns() / 1000000u;
  FILE *f = fopen(path, "w");
  assert_non_null(f);
  fprintf(f, "%llu\n", (unsigned long long)(now_ms - 3600u * 1000u)); /* an hour ago */
  fclose(f);

  /* a store node (store-based itself) whose archive holds a message from before the last-online
   * time and one from after it, both older than the NRS window */
  char err[256];
  peer_t s;
  ld_node_config_t *cs = nh_config();
  cs->store = true;
  assert_int_equal(ld_node_config_set_store_db_url(cs, "memory://", err, sizeof err), 0);
  memset(&s, 0, sizeof s);
  s.node = nh_start(&g_loop, cs);
  WAIT_FOR(ld_node_archive(s.node) != NULL);
  int64_t now = (int64_t)ld_wall_ns();
  msg_t before, after;
  make_msg(&before, "before the last-online time", now - 7200 * SEC, NULL);
  make_msg(&after, "after the last-online time", now - 1800 * SEC, NULL);
  int acks = 0;
  assert_int_equal(
      ld_archive_insert(ld_node_archive(s.node), PUBSUB, &before.m, before.hash, inserted, &acks),
      0);
  assert_int_equal(
      ld_archive_insert(ld_node_archive(s.node), PUBSUB, &after.m, after.hash, inserted, &acks), 0);
  WAIT_FOR(acks == 2);

  peer_t c;
  ld_node_config_t *cc = p2p_config(true, 2);
  nh_add_static(cc, s.node);
  assert_int_equal(ld_node_config_set_local_storage_path(cc, dir, err, sizeof err), 0);
  start_node(&c, cc);
  start_messaging(&c, LD_MESSAGING_CORE);
  WAIT_FOR(received_count(&c, after.hash) == 1);
  ld_messaging_stats_t st;
  WAIT_FOR((ld_messaging_get_stats(c.m, &st), st.resumes == 1));
  nh_run_for(&g_loop, 2500); /* more ticks: no further store query */
  ld_messaging_get_stats(c.m, &st);
  assert_int_equal(st.resumes, 1);
  assert_int_equal(received_count(&c, before.hash), 0);
  assert_int_equal(c.received, 1);
  assert_int_equal(st.recovered, 1);
  stop_peer(&c);
  /* the last-online time was written when the client closed */
  uint64_t written = ld_resume_read(path);
  assert_true(written >= now_ms);
  remove(path);
  rmdir(dir);
  nh_stop(&g_loop, s.node, STEP_MS);
}

static peer_t g_victim;

static int victim_setup(void **state) {
  (void)state;
  memset(g_shard_key, 0x5a, sizeof g_shard_key);
  memset(g_other_key, 0x33, sizeof g_other_key);
  uint8_t pub[LD_SECP256K1_PUBLIC_LEN];
  assert_int_equal(ld_secp256k1_public(g_shard_key, pub), 0);
  char hex[2 * LD_SECP256K1_PUBLIC_LEN + 1], arg[96], err[256];
  ld_hex_encode(pub, sizeof pub, hex);
  snprintf(arg, sizeof arg, "0:%s", hex);
  ld_node_config_t *cfg = p2p_config(true, 2);
  assert_int_equal(ld_node_config_add_protected_shard(cfg, arg, err, sizeof err), 0);
  start_node(&g_victim, cfg);
  start_messaging(&g_victim, LD_MESSAGING_CORE);
  WAIT_FOR(sync_ready(&g_victim));
  return 0;
}

static int victim_teardown(void **state) {
  (void)state;
  stop_peer(&g_victim);
  return 0;
}

static uint64_t rejected(ld_sync_ingress_verdict_t v) {
  ld_store_sync_stats_t st;
  ld_store_sync_get_stats(ld_nrs_sync(ld_node_nrs(g_victim.node)), &st);
  return st.rejected[v];
}

/* Refused, disconnected and banned; nothing delivered. */
static void assert_cut_off(bare_t *p, ld_sync_ingress_verdict_t v, uint64_t before) {
  WAIT_FOR(p->ev.disconnected >= 1);
  assert_int_equal(rejected(v), before + 1);
  assert_true(
      ld_store_sync_banned(ld_nrs_sync(ld_node_nrs(g_victim.node)), ld_switch_peer_id(p->sw)));
  assert_int_equal(g_victim.received, 0);
  assert_int_equal(nrs_stats(&g_victim).items_pulled, 0);
}

/* On the victim's protected shard: listed, then pushed signed by another key, then unsigned. */
static void forged_pushes_are_cut_off(void **state) {
  (void)state;
  int64_t now = (int64_t)ld_wall_ns();
  for (int by_other = 1; by_other >= 0; by_other--) {
    bare_t p;
    bare_connect(&p, g_victim.node);
    msg_t m;
    make_msg(&m, by_other ? "signed by another key" : "unsigned", now - 30 * SEC,
             by_other ? g_other_key : NULL);
    list_in_session(&p, &m, now - 60 * SEC, now);
    uint64_t before = rejected(LD_SYNC_INGRESS_BAD_SIGNATURE);
    push_message(&p, &m);
    assert_cut_off(&p, LD_SYNC_INGRESS_BAD_SIGNATURE, before);
    bare_close(&p);
  }
}

static void out_of_window_pushes_are_cut_off(void **state) {
  (void)state;
  int64_t now = (int64_t)ld_wall_ns();
  for (int future = 0; future < 2; future++) {
    bare_t p;
    bare_connect(&p, g_victim.node);
    msg_t m;
    make_msg(&m, future ? "from the future" : "too old",
             future ? now + 3600 * SEC : now - 3600 * SEC, g_shard_key);
    if (future)
      list_in_session(&p, &m, now - 60 * SEC, now + 7200 * SEC);
    else
      list_in_session(&p, &m, now - 7200 * SEC, now);
    ld_sync_ingress_verdict_t v = future ? LD_SYNC_INGRESS_FUTURE : LD_SYNC_INGRESS_TOO_OLD;
    uint64_t before = rejected(v);
    push_message(&p, &m);
    assert_cut_off(&p, v, before);
    bare_close(&p);
  }
}

static void an_unsolicited_push_is_cut_off(void **state) {
  (void)state;
  bare_t p;
  bare_connect(&p, g_victim.node);
  msg_t m;
  make_msg(&m, "nobody asked", (int64_t)ld_wall_ns() - 10 * SEC, g_shard_key);
  uint64_t before = rejected(LD_SYNC_INGRESS_UNSOLICITED);
  push_message(&p, &m);
  assert_cut_off(&p, LD_SYNC_INGRESS_UNSOLICITED, before);
  bare_close(&p);
}

/* The control (last: it changes what the victim received). */
static void a_solicited_push_is_delivered_once(void **state) {
  (void)state;
  int64_t now = (int64_t)ld_wall_ns();
  bare_t p;
  bare_connect(&p, g_victim.node);
  msg_t m;
  make_msg(&m, "a good one", now - 30 * SEC, g_shard_key);
  list_in_session(&p, &m, now - 60 * SEC, now);
  push_message(&p, &m);
  WAIT_FOR(received_count(&g_victim, m.hash) == 1);
  assert_int_equal(nrs_stats(&g_victim).items_pulled, 1);
  push_message(&p, &m); /* a duplicate: dropped, no offence */
  WAIT_FOR(rejected(LD_SYNC_INGRESS_DUPLICATE) >= 1);
  nh_run_for(&g_loop, 300);
  assert_int_equal(received_count(&g_victim, m.hash), 1);
  assert_int_equal(p.ev.disconnected, 0);
  bare_close(&p);
}

/* ---- RLN-relay ------------------------------------------------------------------------------ */

#define RLN_EPOCH_SEC 600
static rh_group_t g_rln;

static int rln_victim_setup(void **state) {
  (void)state;
  rh_group_make(&g_rln, 4, 1, 0);
  ld_node_config_t *cfg = p2p_config(true, 2);
  rh_configure(&g_rln, cfg, RLN_EPOCH_SEC, false);
  start_node(&g_victim, cfg);
  start_messaging(&g_victim, LD_MESSAGING_CORE);
  WAIT_FOR(sync_ready(&g_victim));
  return 0;
}

static int rln_victim_teardown(void **state) {
  (void)state;
  stop_peer(&g_victim);
  rh_group_free(&g_rln);
  return 0;
}

/* Listed and pushed without a proof: refused by the RLN check, cut off; then with a valid proof of
 * member 1: delivered once. */
static void rln_pushes_need_a_valid_proof(void **state) {
  (void)state;
  int64_t now = (int64_t)ld_wall_ns();
  bare_t p;
  bare_connect(&p, g_victim.node);
  msg_t m;
  make_msg(&m, "no proof", now - 30 * SEC, NULL);
  list_in_session(&p, &m, now - 60 * SEC, now);
  uint64_t before = rejected(LD_SYNC_INGRESS_RLN);
  push_message(&p, &m);
  assert_cut_off(&p, LD_SYNC_INGRESS_RLN, before);
  bare_close(&p);

  /* proved before connecting: the loop stands still while the proof is made (then its clock is
   * brought up to date, so that timers started next do not count the stall) */
  uint8_t proof[LD_RLN_RATE_LIMIT_PROOF_MAX_ENCODED];
  make_msg(&m, "proved", now - 30 * SEC, NULL);
  rh_prove(&g_rln, &m.m, proof, 1, 0, RLN_EPOCH_SEC);
  uv_update_time(&g_loop);
  assert_int_equal(ld_waku_message_hash(PUBSUB, &m.m, m.hash), 0);
  bare_connect(&p, g_victim.node);
  list_in_session(&p, &m, now - 60 * SEC, now);
  push_message(&p, &m);
  WAIT_FOR(received_count(&g_victim, m.hash) == 1);
  assert_int_equal(p.ev.disconnected, 0);
  bare_close(&p);
}

int main(void) {
  uv_loop_init(&g_loop);
  const struct CMUnitTest core[] = {
      cmocka_unit_test(a_send_is_confirmed_by_two_peers),
      cmocka_unit_test(too_few_peers_never_confirm),
      cmocka_unit_test(a_disjoint_store_sync_peer_confirms_nothing),
      cmocka_unit_test(an_offline_node_recovers_every_missed_message),
      cmocka_unit_test(an_edge_node_confirms_and_recovers_through_service_peers),
      cmocka_unit_test(an_edge_node_replaces_a_service_peer_that_does_not_reconcile),
      cmocka_unit_test(a_node_resumes_from_the_store_once_at_start),
  };
  const struct CMUnitTest bad[] = {
      cmocka_unit_test(forged_pushes_are_cut_off),
      cmocka_unit_test(out_of_window_pushes_are_cut_off),
      cmocka_unit_test(an_unsolicited_push_is_cut_off),
      cmocka_unit_test(a_solicited_push_is_delivered_once),
  };
  const struct CMUnitTest rln[] = {
      cmocka_unit_test(rln_pushes_need_a_valid_proof),
  };
  int rc = cmocka_run_group_tests_name("nrs", core, NULL, NULL);
  rc |= cmocka_run_group_tests_name("nrs bad peers", bad, victim_setup, victim_teardown);
  rc |= cmocka_run_group_tests_name("nrs rln", rln, rln_victim_setup, rln_victim_teardown);
  uv_loop_close(&g_loop);
  return rc;
}
