/* Lightpush service throughput: requests per second one service node answers.
 *
 *   bench_lightpush [--requests N] [--conns K] [--window W] [--size BYTES]
 *
 * The service node S (switch, identify, gossipsub, relay subscribed to /waku/2/rs/0/0, lightpush
 * v3 with the relay publish callback) runs alone on the main thread's loop. A second thread runs
 * a relay peer R subscribed to the same topic (so every publish really encodes, hashes and sends
 * the message to a peer) and K client switches, each with one connection to S, all on loopback.
 * Every client keeps W pushes in flight (one stream each, as js-waku and nwaku clients do) until
 * N pushes were answered; every message is unique (the relay refuses repeats). Printed: the
 * answered rate, how many were 200 with a relay peer, and the CPU time of S's thread per request.
 * Timings are printed, never asserted. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <uv.h>

#include "base/error.h"
#include "base/log.h"
#include "p2p/gossipsub/service.h"
#include "p2p/identify.h"
#include "p2p/switch.h"
#include "waku/lightpush/client.h"
#include "waku/lightpush/server.h"
#include "waku/relay/relay.h"

#define TOPIC "/waku/2/rs/0/0"
#define CONTENT_TOPIC "/ld/1/lightpush-bench/proto"
#define MAX_CONNS 64
#define MAX_SIZE (100u * 1024)

typedef struct node {
  ld_privkey_t key;
  ld_switch_t *sw;
  ld_identify_t *id;
  ld_gs_service_t *gs;
  ld_relay_t *relay;
} node_t;

typedef struct bench bench_t;

typedef struct client {
  bench_t *b;
  node_t node;
  ld_conn_t *conn;
} client_t;

struct bench {
  /* settings */
  uint64_t requests;
  size_t conns, window, size;
  /* the service (main thread) */
  uv_loop_t loop_s;
  node_t s;
  ld_lightpush_server_t *lp;
  uv_async_t stop_s;
  ld_multiaddr_t s_addr;
  pthread_t s_thread;
  double s_cpu0_ms, s_cpu_ms; /* the service thread's CPU time at the start and end of the run */
  /* the peers (second thread) */
  uv_loop_t loop_c;
  node_t r;
  client_t clients[MAX_CONNS];
  size_t dialed;
  uv_timer_t timer;
  uint8_t *payload;
  uint64_t seq, sent, answered, ok, failed;
  uint32_t last_failure;
  uint64_t t0_ns, t1_ns;
  size_t closing; /* switches of this thread still closing */
  bool warm, running, finished, failed_setup;
};

/* CPU time consumed so far by thread `t`. */
static double thread_cpu_ms(pthread_t t) {
  clockid_t cid;
  struct timespec ts;
  if (pthread_getcpuclockid(t, &cid) != 0 || clock_gettime(cid, &ts) != 0)
    return 0;
  return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* ---- nodes ---------------------------------------------------------------------------------- */

static int node_start(node_t *n, uv_loop_t *loop, bool relay) {
  memset(n, 0, sizeof *n);
  int rc = ld_privkey_generate(&n->key, LD_KEY_ED25519);
  ld_switch_config_t cfg;
  ld_switch_config_default(&cfg);
  cfg.loop = loop;
  cfg.identity = &n->key;
  if (rc != 0 || (n->sw = ld_switch_new(&cfg)) == NULL)
    return rc != 0 ? rc : LD_ERR_NOMEM;
  if (!relay)
    return 0;
  if ((n->id = ld_identify_new(n->sw, NULL)) == NULL)
    return LD_ERR_NOMEM;
  ld_gs_service_config_t gs;
  ld_relay_gs_config(&gs, 0);
  gs.params.ip_colocation_threshold = 100;
  if ((n->gs = ld_gs_service_new(n->sw, n->id, &gs, &rc)) == NULL)
    return rc;
  ld_relay_config_t rcfg;
  ld_relay_config_default(&rcfg);
  rcfg.loop = loop;
  if ((n->relay = ld_relay_new(n->gs, &rcfg, &rc)) == NULL)
    return rc;
  return ld_relay_subscribe(n->relay, TOPIC, NULL, NULL);
}

/* Detaches the relay and closes the switch (`done` follows from the loop); node_free after. */
static void node_close(node_t *n, void (*done)(void *), void *ud) {
  ld_relay_free(n->relay);
  n->relay = NULL;
  if (n->sw != NULL)
    ld_switch_close(n->sw, done, ud);
  else
    done(ud);
}

static void node_free(node_t *n) {
  ld_gs_service_free(n->gs);
  ld_identify_free(n->id);
}

/* ---- pushing (second thread) ---------------------------------------------------------------- */

static void push_next(client_t *c);

static void peer_closed(void *ud) {
  bench_t *b = ud;
  if (--b->closing == 0)
    uv_stop(&b->loop_c);
}

static void finish(bench_t *b) {
  if (b->finished)
    return;
  b->finished = true;
  b->t1_ns = uv_hrtime();
  b->s_cpu_ms = thread_cpu_ms(b->s_thread);
  b->running = false;
  uv_timer_stop(&b->timer);
  uv_close((uv_handle_t *)&b->timer, NULL);
  b->closing = 1 + b->conns;
  node_close(&b->r, peer_closed, b);
  for (size_t i = 0; i < b->conns; i++)
    node_close(&b->clients[i].node, peer_closed, b);
  uv_async_send(&b->stop_s);
}

static void on_pushed(const ld_lightpush_result_t *res, void *user_data) {
  client_t *c = user_data;
  bench_t *b = c->b;
  b->answered++;
  if (res->status_code == LD_LIGHTPUSH_SUCCESS && res->relay_peer_count >= 1) {
    b->ok++;
  } else {
    b->failed++;
    b->last_failure = res->status_code;
  }
  if (b->answered == b->requests)
    finish(b);
  else if (b->sent < b->requests)
    push_next(c);
}

static int push_one(client_t *c, ld_lightpush_done_fn done) {
  bench_t *b = c->b;
  int n = snprintf((char *)b->payload, b->size, "lightpush bench message %llu",
                   (unsigned long long)b->seq++);
  (void)n;
  ld_waku_message_t m;
  ld_waku_message_init(&m);
  m.payload = b->payload;
  m.payload_len = b->size;
  m.content_topic = CONTENT_TOPIC;
  m.content_topic_len = strlen(CONTENT_TOPIC);
  return ld_lightpush_client_push(c->node.sw, c->conn, TOPIC, &m, done, c);
}

static void push_next(client_t *c) {
  bench_t *b = c->b;
  b->sent++;
  int rc = push_one(c, on_pushed);
  if (rc != 0) {
    fprintf(stderr, "bench_lightpush: push: %s\n", ld_strerror(rc));
    b->answered++;
    b->failed++;
    if (b->answered == b->requests)
      finish(b);
  }
}

static void start_run(bench_t *b) {
  b->running = true;
  b->t0_ns = uv_hrtime();
  b->s_cpu0_ms = thread_cpu_ms(b->s_thread);
  for (size_t i = 0; i < b->conns; i++)
    for (size_t k = 0; k < b->window && b->sent < b->requests; k++)
      push_next(&b->clients[i]);
}

/* Warm-up: one push at a time until S relays to R (gossipsub learnt R's subscription). */
static void on_warm(const ld_lightpush_result_t *res, void *user_data) {
  client_t *c = user_data;
  bench_t *b = c->b;
  if (res->status_code == LD_LIGHTPUSH_SUCCESS && res->relay_peer_count >= 1) {
    b->warm = true;
    start_run(b);
  } else {
    uv_timer_again(&b->timer);
  }
}

static void on_timer(uv_timer_t *t) {
  bench_t *b = t->data;
  uv_timer_stop(t);
  if (!b->warm && push_one(&b->clients[0], on_warm) != 0)
    uv_timer_again(t);
}

static void on_dialed(ld_conn_t *conn, int err, void *user_data) {
  client_t *c = user_data;
  bench_t *b = c->b;
  if (conn == NULL) {
    fprintf(stderr, "bench_lightpush: dial: %s\n", ld_strerror(err));
    b->failed_setup = true;
    finish(b);
    return;
  }
  c->conn = conn;
  if (++b->dialed == b->conns)
    uv_timer_start(&b->timer, on_timer, 50, 50);
}

static void on_relay_dialed(ld_conn_t *conn, int err, void *user_data) {
  (void)user_data;
  if (conn == NULL)
    fprintf(stderr, "bench_lightpush: relay dial: %s\n", ld_strerror(err));
}

static void *peers_thread(void *arg) {
  bench_t *b = arg;
  uv_loop_init(&b->loop_c);
  uv_timer_init(&b->loop_c, &b->timer);
  b->timer.data = b;
  int rc = node_start(&b->r, &b->loop_c, true);
  if (rc == 0)
    rc = ld_switch_dial(b->r.sw, &b->s_addr, on_relay_dialed, NULL);
  for (size_t i = 0; i < b->conns && rc == 0; i++) {
    b->clients[i].b = b;
    rc = node_start(&b->clients[i].node, &b->loop_c, false);
    if (rc == 0)
      rc = ld_switch_dial(b->clients[i].node.sw, &b->s_addr, on_dialed, &b->clients[i]);
  }
  if (rc != 0) {
    fprintf(stderr, "bench_lightpush: peers: %s\n", ld_strerror(rc));
    b->failed_setup = true;
    finish(b);
  }
  uv_run(&b->loop_c, UV_RUN_DEFAULT);
  node_free(&b->r);
  for (size_t i = 0; i < b->conns; i++)
    node_free(&b->clients[i].node);
  uv_run(&b->loop_c, UV_RUN_DEFAULT); /* the freed services' handles close */
  uv_loop_close(&b->loop_c);
  return NULL;
}

/* ---- the service (main thread) -------------------------------------------------------------- */

static void service_closed(void *ud) {
  uv_stop(ud);
}

static void on_stop_s(uv_async_t *a) {
  bench_t *b = a->data;
  uv_close((uv_handle_t *)a, NULL);
  node_close(&b->s, service_closed, &b->loop_s);
}

static int start_service(bench_t *b) {
  uv_loop_init(&b->loop_s);
  uv_async_init(&b->loop_s, &b->stop_s, on_stop_s);
  b->stop_s.data = b;
  int rc = node_start(&b->s, &b->loop_s, true);
  if (rc != 0)
    return rc;
  ld_lightpush_server_config_t cfg;
  ld_lightpush_server_config_default(&cfg);
  cfg.publish = ld_lightpush_relay_publish;
  cfg.publish_ctx = b->s.relay;
  cfg.mount_legacy = false;
  if ((b->lp = ld_lightpush_server_new(b->s.sw, &cfg)) == NULL)
    return LD_ERR_NOMEM;
  ld_multiaddr_t any;
  rc = ld_multiaddr_parse(&any, "/ip4/127.0.0.1/tcp/0");
  if (rc == 0)
    rc = ld_switch_listen(b->s.sw, &any);
  if (rc == 0 && ld_switch_listen_addrs(b->s.sw, &b->s_addr, 1) < 1)
    rc = LD_ERR_STATE;
  const ld_peerid_t *id = ld_switch_peer_id(b->s.sw);
  if (rc == 0)
    rc = ld_multiaddr_push(&b->s_addr, LD_MA_P2P, id->bytes, id->len);
  return rc;
}

static void report(const bench_t *b) {
  double secs = (double)(b->t1_ns - b->t0_ns) / 1e9;
  ld_lightpush_server_stats_t st;
  ld_lightpush_server_get_stats(b->lp, &st);
  printf("lightpush v3: %llu pushes of %zu-byte messages from %zu connections (%zu in flight "
         "each), relay publish to 1 peer\n",
         (unsigned long long)b->answered, b->size, b->conns, b->window);
  printf("  served: %.0f req/s (%.3f s), %llu answered 200 with a relay peer, %llu failed",
         (double)b->answered / secs, secs, (unsigned long long)b->ok,
         (unsigned long long)b->failed);
  if (b->failed > 0)
    printf(" (last status %u)", b->last_failure);
  double cpu = b->s_cpu_ms - b->s_cpu0_ms;
  printf("\n  service thread CPU: %.0f ms (%.0f%% of one core), %.1f us per request; service "
         "counted %llu requests\n",
         cpu, cpu / 10 / secs, cpu * 1e3 / (double)(b->answered > 0 ? b->answered : 1),
         (unsigned long long)st.v3_requests);
}

static int parse_args(bench_t *b, int argc, char **argv) {
  b->requests = 20000;
  b->conns = 4;
  b->window = 32;
  b->size = 100;
  for (int i = 1; i + 1 < argc; i += 2) {
    unsigned long long v = strtoull(argv[i + 1], NULL, 10);
    if (strcmp(argv[i], "--requests") == 0)
      b->requests = v;
    else if (strcmp(argv[i], "--conns") == 0)
      b->conns = (size_t)v;
    else if (strcmp(argv[i], "--window") == 0)
      b->window = (size_t)v;
    else if (strcmp(argv[i], "--size") == 0)
      b->size = (size_t)v;
    else
      return -1;
  }
  if (b->requests == 0 || b->conns == 0 || b->conns > MAX_CONNS || b->window == 0 || b->size < 32 ||
      b->size > MAX_SIZE)
    return -1;
  return 0;
}

int main(int argc, char **argv) {
  static bench_t b;
  if (parse_args(&b, argc, argv) != 0) {
    fprintf(stderr,
            "usage: bench_lightpush [--requests N] [--conns K≤%d] [--window W] "
            "[--size 32..%u]\n",
            MAX_CONNS, MAX_SIZE);
    return 2;
  }
  ld_log_set_level(LD_LOG_WARN);
  b.payload = calloc(1, b.size);
  int rc = b.payload != NULL ? start_service(&b) : LD_ERR_NOMEM;
  if (rc != 0) {
    fprintf(stderr, "bench_lightpush: service: %s\n", ld_strerror(rc));
    return 1;
  }
  b.s_thread = pthread_self();
  pthread_t peers;
  pthread_create(&peers, NULL, peers_thread, &b);
  uv_run(&b.loop_s, UV_RUN_DEFAULT);
  pthread_join(peers, NULL);
  if (!b.failed_setup)
    report(&b);
  ld_lightpush_server_free(b.lp);
  node_free(&b.s);
  uv_run(&b.loop_s, UV_RUN_DEFAULT);
  uv_loop_close(&b.loop_s);
  free(b.payload);
  return b.failed_setup || b.failed > 0 ? 1 : 0;
}
