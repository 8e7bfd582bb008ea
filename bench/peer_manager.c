/* The peer manager at scale: one node holding 1,000 inbound relay connections within its
 * targets, its resident memory and CPU per connection.
 *
 *   bench_peer_manager [--clients 1000] [--extra 100] [--hold 10]
 *
 * The node runs in a child process (src/node, relay on shard 0, --max-connections 3000 and
 * --relay-service-ratio 50:50: 1,500 relay peers, 500 out and 1,000 in; --ip-colocation-limit 0,
 * everything is on 127.0.0.1). The parent runs the clients on one loop: each a switch with its
 * own key, identify, and a handler for the relay protocol that accepts and drains streams, so
 * the node's identify sees a relay peer. The clients dial the node 50 at a time.
 *
 * Printed (one JSON line): the node's VmRSS before the clients and once all are connected and
 * identified, and per connection; the node's CPU (user + system, /proc/<pid>/stat) for the whole
 * set-up, per connection, and over --hold seconds of holding them (keep-alive pings every 10 s
 * here); then --extra more clients dial in: the node is at its inbound relay target, so it keeps
 * 1,000 and disconnects the extra ones (how many connections the clients see at the end). */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>
#include <uv.h>

#include "base/clock.h"
#include "base/error.h"
#include "base/log.h"
#include "node/node.h"
#include "node/peer_manager.h"
#include "p2p/identify.h"
#include "waku/core/codecs.h"
#include "bench_clock.h"

#define MAX_CLIENTS 4000
#define IN_FLIGHT 50

/* ---- the node (child) ------------------------------------------------------------------------ */

static void on_term(uv_signal_t *s, int signum) {
  (void)signum;
  ld_node_stop(s->data, NULL, NULL);
  uv_close((uv_handle_t *)s, NULL);
}

static int run_node(int out_fd) {
  uv_loop_t loop;
  uv_loop_init(&loop);
  ld_log_set_level(LD_LOG_ERROR);
  static ld_node_config_t cfg;
  char err[256];
  ld_node_config_default(&cfg);
  ld_node_config_set_listen(&cfg, "127.0.0.1", 0, 0, err, sizeof err);
  ld_node_config_add_shard(&cfg, "0", err, sizeof err);
  ld_node_config_set_max_connections(&cfg, 3000, err, sizeof err);
  cfg.colocation_limit = 0;
  cfg.pm.relay_ratio = 50;
  cfg.pm.keepalive_interval_ms = 10000;
  if (ld_node_config_finalize(&cfg, err, sizeof err) != 0)
    return 1;
  int rc = 0;
  ld_node_t *node = ld_node_new(&loop, &cfg, &rc);
  if (node == NULL || ld_node_start(node) != 0)
    return 1;
  ld_multiaddr_t addr;
  char text[LD_MULTIADDR_TEXT_MAX + 1];
  ld_node_listen_addrs(node, &addr, 1);
  int n = ld_multiaddr_to_text(&addr, text, sizeof text - 1);
  text[n] = '\n';
  if (write(out_fd, text, (size_t)n + 1) != n + 1)
    return 1;
  close(out_fd);
  uv_signal_t term;
  uv_signal_init(&loop, &term);
  term.data = node;
  uv_signal_start(&term, on_term, SIGTERM);
  uv_run(&loop, UV_RUN_DEFAULT);
  return 0;
}

/* ---- /proc ---------------------------------------------------------------------------------- */

static double cpu_ms(pid_t pid) {
  char path[64], buf[1024];
  snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
  FILE *f = fopen(path, "r");
  size_t n = f != NULL ? fread(buf, 1, sizeof buf - 1, f) : 0;
  if (f != NULL)
    fclose(f);
  buf[n] = '\0';
  char *p = strrchr(buf, ')');
  unsigned long ut = 0, st = 0;
  if (p == NULL ||
      sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu", &ut, &st) != 2)
    return -1;
  return (double)(ut + st) * 1000.0 / (double)sysconf(_SC_CLK_TCK);
}

/* ---- the clients (parent) -------------------------------------------------------------------- */

typedef struct client {
  ld_switch_t *sw;
  ld_identify_t *id;
  bool up, done;
} client_t;

static client_t g_clients[MAX_CLIENTS];
static size_t g_next, g_in_flight, g_up, g_failed;
static ld_multiaddr_t g_node_addr;
static uv_loop_t g_loop;

static void drain(ld_stream_t *s, const uint8_t *d, size_t n) {
  (void)s, (void)d, (void)n;
}
static void closed(ld_stream_t *s, int err) {
  (void)s, (void)err;
}
static const ld_stream_handler_t k_drain = {drain, NULL, closed, NULL};

static void accept_relay(ld_stream_t *s, void *ud) {
  (void)ud;
  ld_stream_set_handler(s, &k_drain, NULL);
}

static void on_client_conn(ld_conn_t *c, void *ud) {
  (void)c;
  client_t *cl = ud;
  if (!cl->up)
    g_up++;
  cl->up = true;
}
static void on_client_gone(ld_conn_t *c, int reason, void *ud) {
  (void)c, (void)reason;
  client_t *cl = ud;
  if (cl->up)
    g_up--;
  cl->up = false;
}
static const ld_switch_events_t k_client_events = {on_client_conn, on_client_gone};

static void dial_more(size_t upto);

static void on_dialed(ld_conn_t *c, int err, void *ud) {
  (void)c;
  client_t *cl = ud;
  cl->done = true;
  g_in_flight--;
  if (err != 0)
    g_failed++;
}

static int make_client(client_t *cl) {
  ld_privkey_t key;
  ld_privkey_generate(&key, LD_KEY_SECP256K1);
  ld_switch_config_t sc;
  ld_switch_config_default(&sc);
  sc.loop = &g_loop;
  sc.identity = &key;
  cl->sw = ld_switch_new(&sc);
  if (cl->sw == NULL)
    return LD_ERR_NOMEM;
  cl->id = ld_identify_new(cl->sw, NULL);
  ld_switch_handle(cl->sw, LD_WAKU_RELAY_CODEC, accept_relay, NULL);
  ld_switch_handle(cl->sw, "/meshsub/1.1.0", accept_relay, NULL);
  return ld_switch_add_listener(cl->sw, &k_client_events, cl);
}

static void dial_more(size_t upto) {
  while (g_next < upto && g_in_flight < IN_FLIGHT) {
    client_t *cl = &g_clients[g_next++];
    if (make_client(cl) != 0 || ld_switch_dial(cl->sw, &g_node_addr, on_dialed, cl) != 0) {
      g_failed++;
      continue;
    }
    g_in_flight++;
  }
}

static void stop_loop(uv_timer_t *t) {
  uv_stop(t->loop);
}

static void run_until(bool (*cond)(void), uint64_t max_ms) {
  uint64_t end = ld_now_ms() + max_ms;
  uv_timer_t t;
  uv_timer_init(&g_loop, &t);
  while (!cond() && ld_now_ms() < end) {
    uv_timer_start(&t, stop_loop, 20, 0);
    uv_run(&g_loop, UV_RUN_ONCE);
  }
  uv_close((uv_handle_t *)&t, NULL);
  uv_run(&g_loop, UV_RUN_NOWAIT);
}

static size_t g_target;
static bool dialed_all(void) {
  dial_more(g_target);
  return g_next >= g_target && g_in_flight == 0;
}
static bool never(void) {
  return false;
}

static void wait_ms(uint64_t ms) {
  run_until(never, ms);
}

int main(int argc, char **argv) {
  size_t clients = 1000, extra = 100;
  unsigned hold_s = 10;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (strcmp(argv[i], "--clients") == 0)
      clients = (size_t)atol(argv[i + 1]);
    else if (strcmp(argv[i], "--extra") == 0)
      extra = (size_t)atol(argv[i + 1]);
    else if (strcmp(argv[i], "--hold") == 0)
      hold_s = (unsigned)atoi(argv[i + 1]);
  }
  if (clients + extra > MAX_CLIENTS)
    return 2;
  struct rlimit rl;
  getrlimit(RLIMIT_NOFILE, &rl);
  rl.rlim_cur = rl.rlim_max;
  setrlimit(RLIMIT_NOFILE, &rl);
  int fds[2];
  if (pipe(fds) != 0)
    return 1;
  pid_t pid = fork();
  if (pid == 0) {
    close(fds[0]);
    _exit(run_node(fds[1]));
  }
  close(fds[1]);
  char text[LD_MULTIADDR_TEXT_MAX + 1];
  ssize_t n = read(fds[0], text, sizeof text - 1);
  close(fds[0]);
  if (n <= 0)
    return 1;
  text[n - 1] = '\0';
  ld_log_set_level(LD_LOG_ERROR);
  if (ld_multiaddr_parse(&g_node_addr, text) != 0)
    return 1;
  uv_loop_init(&g_loop);
  usleep(500000);
  long rss0 = bench_rss_kib_of(pid);
  double cpu0 = cpu_ms(pid);
  uint64_t t0 = ld_now_ms();
  g_target = clients;
  run_until(dialed_all, 120000);
  wait_ms(3000); /* identify, metadata, gossipsub subscriptions */
  uint64_t setup_ms = ld_now_ms() - t0;
  long rss1 = bench_rss_kib_of(pid);
  double cpu1 = cpu_ms(pid);
  size_t up_after_setup = g_up;
  wait_ms((uint64_t)hold_s * 1000);
  double cpu2 = cpu_ms(pid);
  long rss2 = bench_rss_kib_of(pid);
  size_t up_after_hold = g_up;
  g_target = clients + extra;
  run_until(dialed_all, 60000);
  wait_ms(3000);
  printf("{\"clients\":%zu,\"connectedAfterSetup\":%zu,\"failedDials\":%zu,\"setupMs\":%llu,"
         "\"rssIdleKiB\":%ld,\"rssHoldingKiB\":%ld,\"rssAfterHoldKiB\":%ld,\"rssPerConnKiB\":%.2f,"
         "\"cpuSetupMs\":%.0f,\"cpuPerConnMs\":%.3f,\"holdS\":%u,\"cpuHoldMs\":%.0f,"
         "\"cpuHoldPerConnMsPerS\":%.5f,\"connectedAfterHold\":%zu,\"extra\":%zu,"
         "\"connectedAfterExtra\":%zu}\n",
         clients, up_after_setup, g_failed, (unsigned long long)setup_ms, rss0, rss1, rss2,
         (double)(rss1 - rss0) / (double)clients, cpu1 - cpu0, (cpu1 - cpu0) / (double)clients,
         hold_s, cpu2 - cpu1, (cpu2 - cpu1) / (double)clients / hold_s, up_after_hold, extra, g_up);
  fflush(stdout);
  kill(pid, SIGTERM);
  int status;
  waitpid(pid, &status, 0);
  return 0;
}
