/* The Network Reliability Service on a loopback network, beside store-based reliability.
 *
 *   bench_nrs [--nodes N] [--sends S] [--missed M] [--outage-s T] [--rest-s R]
 *
 * All nodes run on one libuv loop in this process (one core does every node's work: the times
 * are upper bounds of what N machines take), over loopback TCP. Node i dials node i − 1 and
 * node i − 3, so every node has 2 to 4 relay peers on one shard. Printed, never asserted:
 *   1. send → message_sent: node 0 sends S messages (one at a time, each after the previous was
 *      confirmed) through the Messaging API; the time to LD_EVENT_MESSAGING_SENT, p50 and p90,
 *      first with p2p reliability (confirmed by 2 distinct peers' sets), then on a network of
 *      the same shape with one store node and store-based reliability (nwaku's 3 s confirmation
 *      delay, the Messaging API's default);
 *   2. recovery (p2p): the last node goes away, node 0 sends M messages spread over T seconds,
 *      the node comes back (a new node, same peers, subscribed): the time from its start until
 *      it has reported all M (and how many arrived by reconciliation);
 *   3. cost at rest (p2p): nothing sent for R seconds: reconciliation bytes (both directions,
 *      frame bodies) per second per connected peer, with the M messages in every set. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <uv.h>

#include "bench_clock.h"
#include "base/clock.h"
#include "base/error.h"
#include "messaging/messaging.h"
#include "node/node.h"
#include "waku/nrs/nrs.h"

#define CONTENT "/ld/1/nrs-bench/proto"
#define MAX_NODES 32
#define MAX_SENDS 10000

static uv_loop_t g_loop;

static void die(const char *what, int rc) {
  fprintf(stderr, "%s: %s\n", what, ld_strerror(rc));
  exit(1);
}

static void run_for(uint64_t ms) {
  uint64_t end = ld_now_ms() + ms;
  while (ld_now_ms() < end)
    uv_run(&g_loop, UV_RUN_NOWAIT), uv_sleep(1);
}

#define RUN_UNTIL(cond, ms)                                                                        \
  do {                                                                                             \
    uint64_t end_ = ld_now_ms() + (ms);                                                            \
    while (!(cond) && ld_now_ms() < end_)                                                          \
      uv_run(&g_loop, UV_RUN_ONCE);                                                                \
    if (!(cond))                                                                                   \
      die(#cond, LD_ERR_TIMEOUT);                                                                  \
  } while (0)

/* ---- nodes with a Messaging API client ------------------------------------------------------- */

typedef struct peer {
  ld_node_t *node;
  ld_messaging_t *m;
  int sent, received;
  char last_sent[LD_MESSAGING_REQUEST_ID_LEN + 1];
  bool freed;
} peer_t;

static void on_sent(int kind, const void *payload, void *ud) {
  (void)kind;
  const ld_messaging_send_event_t *ev = payload;
  peer_t *p = ud;
  p->sent++;
  snprintf(p->last_sent, sizeof p->last_sent, "%s", ev->request_id);
}

static void on_received(int kind, const void *payload, void *ud) {
  (void)kind, (void)payload;
  ((peer_t *)ud)->received++;
}

static void add_static(ld_node_config_t *cfg, ld_node_t *to) {
  ld_multiaddr_t addr;
  char text[LD_MULTIADDR_TEXT_MAX], err[256];
  ld_node_listen_addrs(to, &addr, 1);
  ld_multiaddr_to_text(&addr, text, sizeof text);
  if (ld_node_config_add_static_node(cfg, text, err, sizeof err) != 0)
    die(err, LD_ERR_INVALID_ARG);
}

static void start_peer(peer_t *p, bool p2p, bool store, ld_node_t *to1, ld_node_t *to2) {
  memset(p, 0, sizeof *p);
  ld_node_config_t cfg;
  char err[256];
  ld_node_config_default(&cfg);
  ld_node_config_set_listen(&cfg, "127.0.0.1", 0, 0, err, sizeof err);
  ld_node_config_add_shard(&cfg, "0", err, sizeof err);
  cfg.colocation_limit = 0;
  cfg.reliability_mode = p2p ? LD_NODE_RELIABILITY_P2P : LD_NODE_RELIABILITY_STORE;
  if (store) {
    cfg.store = true;
    ld_node_config_set_store_db_url(&cfg, "memory://", err, sizeof err);
  }
  if (to1 != NULL)
    add_static(&cfg, to1);
  if (to2 != NULL)
    add_static(&cfg, to2);
  if (ld_node_config_finalize(&cfg, err, sizeof err) != 0)
    die(err, LD_ERR_INVALID_ARG);
  int rc = 0;
  p->node = ld_node_new(&g_loop, &cfg, &rc);
  if (p->node == NULL)
    die("node", rc);
  ld_broker_t *b = ld_node_broker(p->node);
  ld_broker_subscribe(b, LD_EVENT_MESSAGING_SENT, on_sent, p);
  ld_broker_subscribe(b, LD_EVENT_MESSAGING_RECEIVED, on_received, p);
  if ((rc = ld_node_start(p->node)) != 0)
    die("start", rc);
  ld_messaging_config_t mc;
  ld_messaging_config_default(&mc);
  mc.tick_ms = 100;
  p->m = ld_messaging_new(p->node, &mc, &rc);
  if (p->m == NULL)
    die("messaging", rc);
  char why[128];
  if (ld_messaging_subscribe(p->m, CONTENT, why, sizeof why) != 0)
    die(why, LD_ERR_INVALID_ARG);
}

static void on_done(void *ud) {
  *(bool *)ud = true;
}

static void stop_peer(peer_t *p) {
  bool done = false;
  ld_messaging_free(p->m, on_done, &done);
  RUN_UNTIL(done, 60000);
  done = false;
  ld_node_stop(p->node, on_done, &done);
  RUN_UNTIL(done, 60000);
}

static size_t mesh_peers(peer_t *p) {
  return ld_gs_service_mesh_peers(ld_node_gossipsub(p->node), "/waku/2/rs/0/0", NULL, 0);
}

/* Node i dials i − 1 and i − 3 (node 0 is the store node when `with_store`). */
static void start_network(peer_t *v, int n, bool p2p, bool with_store) {
  for (int i = 0; i < n; i++)
    start_peer(&v[i], p2p, with_store && i == 1, i >= 1 ? v[i - 1].node : NULL,
               i >= 3 ? v[i - 3].node : NULL);
  for (int i = 0; i < n; i++)
    RUN_UNTIL(mesh_peers(&v[i]) >= 2, 60000);
  run_for(1500);
}

static void stop_network(peer_t *v, int n) {
  for (int i = n - 1; i >= 0; i--)
    stop_peer(&v[i]);
}

static void send_text(peer_t *p, const char *text, char rid[LD_MESSAGING_REQUEST_ID_LEN + 1]) {
  ld_messaging_envelope_t env = {CONTENT, (const uint8_t *)text, strlen(text), NULL, 0, false};
  char why[256];
  if (ld_messaging_send(p->m, &env, rid, why, sizeof why) != 0)
    die(why, LD_ERR_INVALID_ARG);
}

/* ---- 1. send → sent -------------------------------------------------------------------------- */

static void send_to_sent(int n, int sends, bool p2p) {
  peer_t *v = calloc((size_t)n, sizeof *v);
  start_network(v, n, p2p, !p2p);
  uint64_t *ms = calloc((size_t)sends, sizeof *ms);
  for (int i = 0; i < sends; i++) {
    char text[64], rid[LD_MESSAGING_REQUEST_ID_LEN + 1];
    snprintf(text, sizeof text, "%s send %d", p2p ? "p2p" : "store", i);
    int before = v[0].sent;
    uint64_t t0 = ld_now_ms();
    send_text(&v[0], text, rid);
    RUN_UNTIL(v[0].sent > before, 60000);
    ms[i] = ld_now_ms() - t0;
    run_for(100);
  }
  bench_sort_u64(ms, (size_t)sends);
  printf("{\"figure\":\"send_to_message_sent\",\"reliability\":\"%s\",\"nodes\":%d,\"sends\":%d,"
         "\"p50_ms\":%llu,\"p90_ms\":%llu,\"max_ms\":%llu}\n",
         p2p ? "p2p (2 peers' sets)" : "store (1 store node)", n, sends,
         (unsigned long long)bench_pct_u64(ms, (size_t)sends, 50),
         (unsigned long long)bench_pct_u64(ms, (size_t)sends, 90),
         (unsigned long long)ms[sends - 1]);
  fflush(stdout);
  free(ms);
  stop_network(v, n);
  free(v);
}

/* ---- 2. recovery and 3. cost at rest --------------------------------------------------------- */

static uint64_t recon_bytes(peer_t *v, int n) {
  uint64_t b = 0;
  for (int i = 0; i < n; i++) {
    ld_nrs_stats_t st;
    ld_nrs_get_stats(ld_node_nrs(v[i].node), &st);
    b += st.recon_bytes_in + st.recon_bytes_out;
  }
  return b;
}

static size_t connections(peer_t *v, int n) {
  size_t c = 0;
  for (int i = 0; i < n; i++)
    c += ld_gs_service_peers(ld_node_gossipsub(v[i].node), NULL, 0);
  return c; /* each link counted at both ends */
}

static void recovery_and_rest(int n, int missed, int outage_s, int rest_s) {
  peer_t *v = calloc((size_t)n, sizeof *v);
  start_network(v, n, true, false);
  peer_t *away = &v[n - 1];
  stop_peer(away);
  uint64_t t0 = ld_now_ms();
  for (int i = 0; i < missed; i++) {
    char text[64], rid[LD_MESSAGING_REQUEST_ID_LEN + 1];
    snprintf(text, sizeof text, "missed %d", i);
    send_text(&v[0], text, rid);
    uint64_t due = t0 + (uint64_t)outage_s * 1000 * (uint64_t)(i + 1) / (uint64_t)missed;
    while (ld_now_ms() < due)
      uv_run(&g_loop, UV_RUN_NOWAIT), uv_sleep(1);
  }
  run_for(5000); /* past gossip's window */
  uint64_t start = ld_now_ms();
  start_peer(away, true, false, v[n - 2].node, v[n - 4].node);
  RUN_UNTIL(away->received >= missed, 120000);
  uint64_t took = ld_now_ms() - start;
  ld_nrs_stats_t st;
  ld_nrs_get_stats(ld_node_nrs(away->node), &st);
  printf("{\"figure\":\"nrs_recovery\",\"nodes\":%d,\"missed\":%d,\"outage_s\":%d,"
         "\"recovered\":%d,\"by_reconciliation\":%llu,\"ms_after_restart\":%llu}\n",
         n, missed, (int)((start - t0) / 1000), away->received, (unsigned long long)st.items_pulled,
         (unsigned long long)took);
  fflush(stdout);
  run_for(3000);
  uint64_t b0 = recon_bytes(v, n);
  uint64_t r0 = ld_now_ms();
  run_for((uint64_t)rest_s * 1000);
  double secs = (double)(ld_now_ms() - r0) / 1000.0;
  uint64_t bytes = recon_bytes(v, n) - b0;
  size_t ends = connections(v, n);
  /* every byte is counted by its sender and its receiver: half of it per link end pair */
  printf("{\"figure\":\"nrs_cost_at_rest\",\"nodes\":%d,\"items_per_set\":%d,\"seconds\":%.0f,"
         "\"links\":%zu,\"bytes_per_s_per_peer\":%.1f,\"interval_s\":%u}\n",
         n, missed + 0, secs, ends / 2, (double)bytes / 2.0 / secs / ((double)ends / 2.0),
         LD_NRS_DEFAULT_INTERVAL_MS / 1000);
  fflush(stdout);
  stop_network(v, n);
  free(v);
}

int main(int argc, char **argv) {
  int nodes = 10, sends = 30, missed = 1000, outage_s = 60, rest_s = 120;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (strcmp(argv[i], "--nodes") == 0)
      nodes = atoi(argv[i + 1]);
    else if (strcmp(argv[i], "--sends") == 0)
      sends = atoi(argv[i + 1]);
    else if (strcmp(argv[i], "--missed") == 0)
      missed = atoi(argv[i + 1]);
    else if (strcmp(argv[i], "--outage-s") == 0)
      outage_s = atoi(argv[i + 1]);
    else if (strcmp(argv[i], "--rest-s") == 0)
      rest_s = atoi(argv[i + 1]);
  }
  if (nodes < 5 || nodes > MAX_NODES || sends < 1 || sends > MAX_SENDS || missed < 1)
    die("arguments", LD_ERR_INVALID_ARG);
  uv_loop_init(&g_loop);
  send_to_sent(nodes, sends, true);
  send_to_sent(nodes, sends, false);
  recovery_and_rest(nodes, missed, outage_s, rest_s);
  uv_loop_close(&g_loop);
  return 0;
}
