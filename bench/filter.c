/* Filter push fan-out: one message pushed to N subscribers, each a light client on its own
 * loopback connection (its own switch, Noise and muxer session), all in this process on one loop
 * with the service node.
 *
 *   bench_filter [--clients 1000] [--rounds 20] [--size 1024] [--muxer yamux|mplex]
 *
 * Every client dials the service and subscribes to one content topic. Then, per round, one
 * message with a unique payload goes into the service's fan-out (the LD_FANOUT_FILTER stage, as
 * relay feeds it) and the loop runs until every client's push handler has seen it. The figure is
 * the time from the dispatch call to the last delivery. Round 1 also opens the N push streams
 * (one multistream negotiation each); later rounds reuse them. The client side's work (Noise
 * decryption, MessagePush and WakuMessage decoding, hashing) runs on the same core and is part
 * of the figure. Prints one human line per round and a JSON summary; target < 50 ms for 1,000. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <uv.h>

#include "bench_clock.h"
#include "base/clock.h"
#include "base/error.h"
#include "base/log.h"
#include "node/fanout.h"
#include "p2p/switch.h"
#include "waku/filter/client.h"
#include "waku/filter/server.h"

#define PUBSUB "/waku/2/rs/1/0"
#define CONTENT "/ld/1/filter-bench/proto"
#define DIAL_BATCH 100
#define MAX_ROUNDS 1000

typedef struct client {
  ld_switch_t *sw;
  ld_filter_client_t *fc;
  ld_conn_t *conn;
  int dial_err;
  bool dialed, subscribed;
  uint32_t code;
  uint32_t last_round;
} client_t;

static uv_loop_t g_loop;
static client_t *g_clients;
static size_t g_n = 1000, g_rounds = 20, g_size = 1024;
static const char *g_muxer = "/yamux/1.0.0";
static size_t g_pending; /* outstanding dials, subscribes or deliveries */
static uint32_t g_round;
static uint64_t g_last_ns;

static ld_switch_t *new_switch(size_t max_connections) {
  ld_privkey_t key;
  if (ld_privkey_generate(&key, LD_KEY_ED25519) != 0)
    return NULL;
  ld_switch_config_t c;
  ld_switch_config_default(&c);
  c.loop = &g_loop;
  c.identity = &key;
  c.muxers[0] = g_muxer;
  c.muxers[1] = NULL;
  if (max_connections > 0)
    c.max_connections = max_connections;
  return ld_switch_new(&c);
}

static void run_until_done(uint64_t timeout_ms) {
  uint64_t end = ld_now_ms() + timeout_ms;
  while (g_pending > 0 && ld_now_ms() < end)
    uv_run(&g_loop, UV_RUN_ONCE);
  if (g_pending > 0) {
    fprintf(stderr, "timed out with %zu outstanding\n", g_pending);
    exit(1);
  }
}

/* ---- set-up --------------------------------------------------------------------------------- */

static void on_dialed(ld_conn_t *c, int err, void *ud) {
  client_t *cl = ud;
  cl->conn = c;
  cl->dial_err = err;
  cl->dialed = true;
  g_pending--;
}

static void on_subscribed(const ld_filter_result_t *r, void *ud) {
  client_t *cl = ud;
  cl->code = r->status_code;
  cl->subscribed = r->err == 0 && r->status_code == 200;
  g_pending--;
}

static void on_push(const ld_filter_push_t *p, void *ud) {
  client_t *cl = ud;
  uint32_t round = 0;
  if (p->msg->payload_len >= 4)
    memcpy(&round, p->msg->payload, 4);
  if (round != g_round || cl->last_round == round)
    return;
  cl->last_round = round;
  if (--g_pending == 0)
    g_last_ns = ld_now_ns();
}

static void connect_clients(const ld_multiaddr_t *addr) {
  for (size_t i = 0; i < g_n; i += DIAL_BATCH) {
    for (size_t j = i; j < g_n && j < i + DIAL_BATCH; j++) {
      client_t *cl = &g_clients[j];
      cl->sw = new_switch(0);
      cl->fc = cl->sw != NULL ? ld_filter_client_new(cl->sw, NULL) : NULL;
      if (cl->fc == NULL || ld_switch_dial(cl->sw, addr, on_dialed, cl) != 0) {
        fprintf(stderr, "client %zu: set-up failed\n", j);
        exit(1);
      }
      ld_filter_client_set_push_handler(cl->fc, on_push, cl);
      g_pending++;
    }
    run_until_done(60000);
  }
  for (size_t j = 0; j < g_n; j++) {
    if (g_clients[j].conn == NULL) {
      fprintf(stderr, "client %zu: dial failed: %s\n", j, ld_errname(g_clients[j].dial_err));
      exit(1);
    }
  }
}

static void subscribe_clients(void) {
  const char *topics[] = {CONTENT};
  for (size_t j = 0; j < g_n; j++) {
    client_t *cl = &g_clients[j];
    if (ld_filter_client_subscribe(cl->fc, cl->conn, PUBSUB, topics, 1, on_subscribed, cl) != 0) {
      fprintf(stderr, "client %zu: subscribe not sent\n", j);
      exit(1);
    }
    g_pending++;
  }
  run_until_done(60000);
  for (size_t j = 0; j < g_n; j++) {
    if (!g_clients[j].subscribed) {
      fprintf(stderr, "client %zu: subscribe answered %u\n", j, g_clients[j].code);
      exit(1);
    }
  }
}

/* ---- rounds --------------------------------------------------------------------------------- */

static void filter_stage(const ld_fanout_message_t *m, void *ud) {
  ld_filter_server_handle_message(ud, m->pubsub_topic, m->msg, m->hash);
}

/* Dispatches one message and returns the time until the last delivery, in nanoseconds. */
static uint64_t run_round(ld_fanout_t *fanout, uint8_t *payload) {
  g_round++;
  memcpy(payload, &g_round, 4);
  ld_waku_message_t m;
  ld_waku_message_init(&m);
  m.payload = payload;
  m.payload_len = g_size;
  m.content_topic = CONTENT;
  m.content_topic_len = strlen(CONTENT);
  m.timestamp = (int64_t)ld_wall_ns();
  ld_fanout_message_t fm = {.pubsub_topic = PUBSUB, .msg = &m, .own = true};
  ld_waku_message_hash(PUBSUB, &m, fm.hash);
  g_pending = g_n;
  uint64_t t0 = ld_now_ns();
  ld_fanout_dispatch(fanout, &fm);
  run_until_done(30000);
  return g_last_ns - t0;
}

static void report(const uint64_t *ns, const ld_filter_server_t *srv) {
  uint64_t first = ns[0];
  size_t k = g_rounds - 1;
  uint64_t *rest = malloc((k > 0 ? k : 1) * sizeof *rest);
  if (rest == NULL)
    exit(1);
  memcpy(rest, ns + 1, k * sizeof *rest);
  bench_sort_u64(rest, k);
  ld_filter_server_stats_t st;
  ld_filter_server_get_stats(srv, &st);
  double med = k > 0 ? bench_pct_u64(rest, k, 50) / 1e6 : 0, mx = k > 0 ? rest[k - 1] / 1e6 : 0;
  double mn = k > 0 ? rest[0] / 1e6 : 0;
  printf("{\"bench\":\"filter_push_fanout\",\"subscribers\":%zu,\"size\":%zu,\"muxer\":\"%s\","
         "\"firstMs\":%.2f,\"minMs\":%.2f,\"medianMs\":%.2f,\"maxMs\":%.2f,\"rounds\":%zu,"
         "\"pushes\":%llu,\"pushErrors\":%llu,\"pushDropped\":%llu,\"streamsOpened\":%llu}\n",
         g_n, g_size, g_muxer, first / 1e6, mn, med, mx, g_rounds, (unsigned long long)st.pushes,
         (unsigned long long)st.push_errors, (unsigned long long)st.push_dropped,
         (unsigned long long)st.push_streams_opened);
  free(rest);
}

/* ---- main ----------------------------------------------------------------------------------- */

static void parse_args(int argc, char **argv) {
  for (int i = 1; i + 1 < argc; i += 2) {
    if (strcmp(argv[i], "--clients") == 0)
      g_n = strtoul(argv[i + 1], NULL, 10);
    else if (strcmp(argv[i], "--rounds") == 0)
      g_rounds = strtoul(argv[i + 1], NULL, 10);
    else if (strcmp(argv[i], "--size") == 0)
      g_size = strtoul(argv[i + 1], NULL, 10);
    else if (strcmp(argv[i], "--muxer") == 0)
      g_muxer = strcmp(argv[i + 1], "mplex") == 0 ? "/mplex/6.7.0" : "/yamux/1.0.0";
  }
  if (g_n == 0 || g_rounds == 0 || g_rounds > MAX_ROUNDS || g_size < 4 || g_size > 100u * 1024) {
    fprintf(stderr, "usage: bench_filter [--clients N] [--rounds 1..1000] [--size 4..102400] "
                    "[--muxer yamux|mplex]\n");
    exit(2);
  }
}

static void raise_fd_limit(void) {
  struct rlimit rl;
  if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
    rl.rlim_cur = rl.rlim_max;
    setrlimit(RLIMIT_NOFILE, &rl);
  }
}

static void on_closed(void *ud) {
  (void)ud;
  g_pending--;
}

int main(int argc, char **argv) {
  parse_args(argc, argv);
  raise_fd_limit();
  ld_log_set_level(LD_LOG_WARN);
  uv_loop_init(&g_loop);
  ld_switch_t *ssw = new_switch(g_n + 64);
  ld_filter_server_t *srv = ssw != NULL ? ld_filter_server_new(ssw, &g_loop, NULL) : NULL;
  ld_fanout_t *fanout = ld_fanout_new();
  ld_multiaddr_t any, addr;
  g_clients = calloc(g_n, sizeof *g_clients);
  uint8_t *payload = calloc(1, g_size);
  uint64_t *ns = calloc(g_rounds, sizeof *ns);
  if (srv == NULL || fanout == NULL || g_clients == NULL || payload == NULL || ns == NULL ||
      ld_multiaddr_parse(&any, "/ip4/127.0.0.1/tcp/0") != 0 || ld_switch_listen(ssw, &any) != 0 ||
      ld_switch_listen_addrs(ssw, &addr, 1) < 1 ||
      ld_fanout_add(fanout, LD_FANOUT_FILTER, filter_stage, srv) < 0) {
    fprintf(stderr, "service set-up failed\n");
    return 1;
  }
  connect_clients(&addr);
  subscribe_clients();
  for (size_t r = 0; r < g_rounds; r++) {
    ns[r] = run_round(fanout, payload);
    fprintf(stderr, "round %zu: last of %zu subscribers after %.2f ms\n", r + 1, g_n, ns[r] / 1e6);
  }
  report(ns, srv);
  g_pending = g_n + 1;
  for (size_t j = 0; j < g_n; j++)
    ld_switch_close(g_clients[j].sw, on_closed, NULL);
  ld_switch_close(ssw, on_closed, NULL);
  run_until_done(30000);
  for (size_t j = 0; j < g_n; j++)
    ld_filter_client_free(g_clients[j].fc);
  ld_filter_server_free(srv);
  ld_fanout_free(fanout);
  uv_run(&g_loop, UV_RUN_NOWAIT);
  uv_loop_close(&g_loop);
  free(g_clients);
  free(payload);
  free(ns);
  return 0;
}
