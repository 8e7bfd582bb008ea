/* Many dashboards on one node while its relay carries traffic. The node program (LD_BIN) runs
 * with REST, metrics and relay on shard 0; two relay nodes of this process (B and C) join its mesh
 * and publish to each other through it. Meanwhile CLIENTS keep-alive clients poll
 * `GET /health` on REST and CLIENTS more `GET /metrics` on the metrics server, each once per
 * INTERVAL_MS. At the end every request must have been answered 200, no connection dropped, and
 * every relay message delivered.
 *
 * CI runs it for 10 s; the full scenario is a minute (bench/http-load.sh):
 *   LD_HTTP_LOAD_SECONDS (10), LD_HTTP_LOAD_CLIENTS (500), LD_HTTP_LOAD_INTERVAL_MS (1000),
 *   LD_HTTP_LOAD_MSG_RATE (messages per second from each of B and C, 50).
 * It prints one JSON line per endpoint (requests, errors, latency percentiles), one for the relay
 * and one for the node program's CPU and memory.
 *
 * Before that, the node program is started with a soft limit of 1024 open files and must have
 * raised it, as its servers' connections need. */
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cmocka.h>
#include <uv.h>

#include "base/clock.h"
#include "child_harness.h"
#include "http_conn.h"
#include "node/node.h"
#include "node_harness.h"
#include "p2p/gossipsub/service.h"
#include "waku/relay/relay.h"

#define STEP_MS 30000
#define DRAIN_MS 30000
#define TOPIC "/waku/2/rs/0/0"
#define CT "/load/1/test/proto"
#define PAYLOAD_LEN 1024
#define MAX_RESPONSE (4u * 1024u * 1024u)
#define RECONNECT_MS 100

enum { EP_REST, EP_METRICS, EP_COUNT };

static const char *const EP_NAME[EP_COUNT] = {"REST /health", "metrics /metrics"};
static const char *const EP_REQUEST[EP_COUNT] = {HCONN_GET("/health"), HCONN_GET("/metrics")};

typedef struct ep_stats {
  uint64_t sent, answered, non_200, dropped, failed_connects;
  uint32_t *lat_us;
  size_t n_lat, cap_lat;
} ep_stats_t;

typedef struct load load_t;

/* One keep-alive client: a request, its answer, INTERVAL_MS, the next request. */
typedef struct poller {
  load_t *load;
  int ep;
  uv_tcp_t tcp;
  uv_connect_t creq;
  uv_write_t wreq;
  uv_timer_t timer;
  char *buf;
  size_t len, cap;
  uint64_t sent_ns;
  uint64_t answered;
  bool tcp_open, connected, in_flight;
} poller_t;

struct load {
  uv_loop_t *loop;
  uint16_t port[EP_COUNT];
  unsigned interval_ms;
  bool running;
  size_t n; /* pollers */
  poller_t *pollers;
  ep_stats_t ep[EP_COUNT];
  size_t in_flight, handles;
};

typedef struct publisher {
  ld_node_t *node;
  uv_timer_t timer;
  uint64_t published, failed, received_base;
  uint32_t seq;
  char tag;
} publisher_t;

static uv_loop_t g_loop;
static const char *g_bin;
static load_t g_load;       /* freed by the teardown, also after a failed assertion */
static ch_child_t *g_child; /* the node program; killed by the teardown if still running */

static unsigned env_uint(const char *name, unsigned def) {
  const char *v = getenv(name);
  return v != NULL && atoi(v) > 0 ? (unsigned)atoi(v) : def;
}

/* ---- the node program ------------------------------------------------------------------------ */

/* Copies the text after `marker` in the child's log up to `stop` into out; false until logged. */
static bool logged_value(ch_child_t *c, const char *marker, char stop, char *out, size_t cap) {
  const char *bufs[2] = {c->stderr_buf, c->stdout_buf};
  for (int i = 0; i < 2; i++) {
    const char *p = strstr(bufs[i], marker);
    if (p == NULL)
      continue;
    p += strlen(marker);
    size_t n = 0;
    while (p[n] != '\0' && p[n] != stop && p[n] != '\n' && n + 1 < cap)
      n++;
    if (p[n] != stop)
      return false;
    memcpy(out, p, n);
    out[n] = '\0';
    return true;
  }
  return false;
}

static uint16_t logged_port(ch_child_t *c, const char *marker) {
  char text[16];
  return logged_value(c, marker, '/', text, sizeof text) ? (uint16_t)atoi(text) : 0;
}

/* CPU seconds (user + system) and resident / peak resident KiB of process `pid`. */
static void process_figures(int pid, double *cpu_s, long *rss_kib, long *hwm_kib) {
  char path[64], buf[2048];
  snprintf(path, sizeof path, "/proc/%d/stat", pid);
  FILE *f = fopen(path, "r");
  assert_non_null(f);
  size_t n = fread(buf, 1, sizeof buf - 1, f);
  fclose(f);
  buf[n] = '\0';
  unsigned long ut = 0, st = 0;
  const char *p = strrchr(buf, ')');
  assert_non_null(p);
  assert_int_equal(sscanf(p + 1, " %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %lu %lu", &ut, &st),
                   2);
  *cpu_s = (double)(ut + st) / (double)sysconf(_SC_CLK_TCK);
  snprintf(path, sizeof path, "/proc/%d/status", pid);
  f = fopen(path, "r");
  assert_non_null(f);
  while (fgets(buf, sizeof buf, f) != NULL) {
    sscanf(buf, "VmRSS: %ld", rss_kib);
    sscanf(buf, "VmHWM: %ld", hwm_kib);
  }
  fclose(f);
}

/* ---- pollers --------------------------------------------------------------------------------- */

static void poller_connect(poller_t *p);

static void poller_schedule(poller_t *p, uint64_t ms);

static void record_latency(ep_stats_t *e, uint64_t ns) {
  if (e->n_lat == e->cap_lat) {
    e->cap_lat = e->cap_lat ? e->cap_lat * 2 : 4096;
    e->lat_us = realloc(e->lat_us, e->cap_lat * sizeof *e->lat_us);
    assert_non_null(e->lat_us);
  }
  e->lat_us[e->n_lat++] = (uint32_t)(ns / 1000);
}

static void on_tcp_closed(uv_handle_t *h) {
  poller_t *p = h->data;
  p->load->handles--;
  if (p->load->running)
    poller_schedule(p, RECONNECT_MS);
}

/* The connection failed or was closed by the server: an error, then a new connection. */
static void poller_drop(poller_t *p) {
  ep_stats_t *e = &p->load->ep[p->ep];
  if (p->in_flight) {
    p->in_flight = false;
    p->load->in_flight--;
  }
  e->dropped++;
  p->connected = false;
  p->tcp_open = false;
  uv_close((uv_handle_t *)&p->tcp, on_tcp_closed);
}

static void on_alloc(uv_handle_t *h, size_t suggested, uv_buf_t *buf) {
  (void)suggested;
  poller_t *p = h->data;
  if (p->cap - p->len < 16384 && p->cap < MAX_RESPONSE) {
    p->cap = p->cap ? p->cap * 2 : 32768;
    p->buf = realloc(p->buf, p->cap);
    assert_non_null(p->buf);
  }
  *buf = uv_buf_init(p->buf + p->len, (unsigned)(p->cap - p->len));
}

static void take_responses(poller_t *p) {
  int status = 0;
  size_t used = 0;
  while (hconn_parse_response(p->buf, p->len, &status, &used)) {
    ep_stats_t *e = &p->load->ep[p->ep];
    if (p->in_flight) {
      record_latency(e, uv_hrtime() - p->sent_ns);
      p->in_flight = false;
      p->load->in_flight--;
    }
    e->answered++;
    p->answered++;
    if (status != 200)
      e->non_200++;
    memmove(p->buf, p->buf + used, p->len - used);
    p->len -= used;
    if (p->load->running)
      poller_schedule(p, p->load->interval_ms);
  }
}

static void on_read(uv_stream_t *s, ssize_t n, const uv_buf_t *buf) {
  (void)buf;
  poller_t *p = s->data;
  if (n > 0) {
    p->len += (size_t)n;
    take_responses(p);
  } else if (n < 0) {
    poller_drop(p);
  }
}

static void on_written(uv_write_t *w, int status) {
  if (status != 0 && ((poller_t *)w->data)->tcp_open)
    poller_drop(w->data);
}

static void poller_send(poller_t *p) {
  const char *req = EP_REQUEST[p->ep];
  uv_buf_t b = uv_buf_init((char *)req, (unsigned)strlen(req));
  p->wreq.data = p;
  if (uv_write(&p->wreq, (uv_stream_t *)&p->tcp, &b, 1, on_written) != 0) {
    poller_drop(p);
    return;
  }
  p->sent_ns = uv_hrtime();
  p->in_flight = true;
  p->load->in_flight++;
  p->load->ep[p->ep].sent++;
}

static void on_timer(uv_timer_t *t) {
  poller_t *p = t->data;
  if (!p->load->running)
    return;
  if (!p->tcp_open)
    poller_connect(p);
  else if (p->connected && !p->in_flight)
    poller_send(p);
}

static void poller_schedule(poller_t *p, uint64_t ms) {
  uv_timer_start(&p->timer, on_timer, ms, 0);
}

static void on_connected(uv_connect_t *req, int status) {
  poller_t *p = req->data;
  if (status == UV_ECANCELED)
    return; /* closed by load_close */
  if (status != 0) {
    p->load->ep[p->ep].failed_connects++;
    poller_drop(p);
    return;
  }
  p->connected = true;
  uv_read_start((uv_stream_t *)&p->tcp, on_alloc, on_read);
  /* the first request at a random point of the interval, so that the clients spread out */
  poller_schedule(p, (uint64_t)(rand() % (int)p->load->interval_ms));
}

static void poller_connect(poller_t *p) {
  struct sockaddr_in sa;
  uv_ip4_addr("127.0.0.1", p->load->port[p->ep], &sa);
  uv_tcp_init(p->load->loop, &p->tcp);
  p->tcp.data = p->creq.data = p;
  p->tcp_open = true;
  p->load->handles++;
  if (uv_tcp_connect(&p->creq, &p->tcp, (struct sockaddr *)&sa, on_connected) != 0) {
    p->load->ep[p->ep].failed_connects++;
    poller_drop(p);
  }
}

static void load_start(load_t *l, size_t clients) {
  l->n = clients * EP_COUNT;
  l->pollers = calloc(l->n, sizeof *l->pollers);
  assert_non_null(l->pollers);
  l->running = true;
  for (size_t i = 0; i < l->n; i++) {
    poller_t *p = &l->pollers[i];
    p->load = l;
    p->ep = (int)(i % EP_COUNT);
    uv_timer_init(l->loop, &p->timer);
    p->timer.data = p;
    l->handles++;
    poller_connect(p);
  }
}

static void on_timer_closed(uv_handle_t *h) {
  ((poller_t *)h->data)->load->handles--;
}

/* Stops sending and waits (at most DRAIN_MS) for the answers still due. */
static void load_drain(load_t *l) {
  l->running = false;
  uint64_t deadline = ld_now_ms() + DRAIN_MS;
  while (l->in_flight > 0 && ld_now_ms() < deadline)
    nh_run_for(l->loop, 10);
}

/* Closes every handle still open; true once all are closed (the pollers may then be freed). */
static bool load_close(load_t *l) {
  l->running = false;
  for (size_t i = 0; i < l->n; i++) {
    poller_t *p = &l->pollers[i];
    if (!uv_is_closing((uv_handle_t *)&p->timer))
      uv_close((uv_handle_t *)&p->timer, on_timer_closed);
    if (p->tcp_open) {
      p->tcp_open = false;
      uv_close((uv_handle_t *)&p->tcp, on_tcp_closed);
    }
  }
  uint64_t deadline = ld_now_ms() + DRAIN_MS;
  while (l->handles > 0 && ld_now_ms() < deadline)
    nh_run_for(l->loop, 10);
  return l->handles == 0;
}

/* Clients that never got an answer. */
static size_t silent_clients(const load_t *l, int ep) {
  size_t n = 0;
  for (size_t i = 0; i < l->n; i++)
    n += l->pollers[i].ep == ep && l->pollers[i].answered == 0;
  return n;
}

static int cmp_u32(const void *a, const void *b) {
  uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
  return x < y ? -1 : x > y;
}

static double pct_ms(const ep_stats_t *e, double q) {
  if (e->n_lat == 0)
    return 0;
  size_t i = (size_t)(q * (double)(e->n_lat - 1) + 0.5);
  return e->lat_us[i] / 1000.0;
}

static void report_endpoint(const load_t *l, int ep, size_t clients, unsigned seconds) {
  const ep_stats_t *e = &l->ep[ep];
  qsort(e->lat_us, e->n_lat, sizeof *e->lat_us, cmp_u32);
  printf("{\"endpoint\":\"%s\",\"clients\":%zu,\"never_answered_clients\":%zu,"
         "\"seconds\":%u,\"requests\":%llu,"
         "\"answered\":%llu,\"non_200\":%llu,\"dropped\":%llu,\"failed_connects\":%llu,"
         "\"per_s\":%.0f,\"p50_ms\":%.2f,\"p90_ms\":%.2f,\"p99_ms\":%.2f,\"p999_ms\":%.2f,"
         "\"max_ms\":%.2f}\n",
         EP_NAME[ep], clients, silent_clients(l, ep), seconds, (unsigned long long)e->sent,
         (unsigned long long)e->answered, (unsigned long long)e->non_200,
         (unsigned long long)e->dropped, (unsigned long long)e->failed_connects,
         (double)e->answered / seconds, pct_ms(e, 0.5), pct_ms(e, 0.9), pct_ms(e, 0.99),
         pct_ms(e, 0.999), pct_ms(e, 1.0));
}

/* ---- relay traffic --------------------------------------------------------------------------- */

static uint64_t received(ld_node_t *node) {
  ld_relay_topic_stats_t st;
  return ld_relay_topic_stats(ld_node_relay(node), TOPIC, &st) == 0 ? st.msgs_in : 0;
}

static int publish(publisher_t *pub) {
  uint8_t payload[PAYLOAD_LEN];
  memset(payload, pub->tag, sizeof payload);
  memcpy(payload, &pub->seq, sizeof pub->seq);
  pub->seq++;
  ld_waku_message_t msg;
  ld_waku_message_init(&msg);
  msg.payload = payload;
  msg.payload_len = sizeof payload;
  msg.content_topic = CT;
  msg.content_topic_len = strlen(CT);
  msg.timestamp = (int64_t)ld_wall_ns();
  return ld_node_publish(pub->node, TOPIC, &msg, NULL);
}

static void on_publish_timer(uv_timer_t *t) {
  publisher_t *pub = t->data;
  if (publish(pub) >= 1)
    pub->published++;
  else
    pub->failed++;
}

static ld_node_t *start_relay_peer(const char *child_addr) {
  char err[256];
  ld_node_config_t *cfg = nh_config();
  assert_int_equal(ld_node_config_add_static_node(cfg, child_addr, err, sizeof err), 0);
  return nh_start(&g_loop, cfg);
}

/* Publishes from `from` until `to` has received one more message: the mesh through the node
 * program carries traffic both ways before the measurement starts. */
static void warm_up(publisher_t *from, publisher_t *to) {
  uint64_t before = received(to->node);
  for (int i = 0; i < 60 && received(to->node) == before; i++) {
    publish(from);
    nh_run_for(&g_loop, 500);
  }
  assert_true(received(to->node) > before);
}

/* ---- the scenario ---------------------------------------------------------------------------- */

static void serves_many_pollers_while_relaying(void **state) {
  (void)state;
  unsigned seconds = env_uint("LD_HTTP_LOAD_SECONDS", 10);
  unsigned clients = env_uint("LD_HTTP_LOAD_CLIENTS", 500);
  unsigned rate = env_uint("LD_HTTP_LOAD_MSG_RATE", 50);
  const char *args[] = {"--relay=true",
                        "--cluster-id=0",
                        "--shard=0",
                        "--listen-address=127.0.0.1",
                        "--tcp-port=0",
                        "--rest=true",
                        "--rest-port=0",
                        "--metrics-server=true",
                        "--metrics-server-port=0",
                        NULL};
  ch_child_t *node = g_child = ch_spawn(&g_loop, g_bin, args);
  char addr[256];
  NH_WAIT_FOR(&g_loop, logged_value(node, "Listening on ", ' ', addr, sizeof addr), STEP_MS);
  load_t *load = &g_load;
  load->loop = &g_loop;
  load->interval_ms = env_uint("LD_HTTP_LOAD_INTERVAL_MS", 1000);
  NH_WAIT_FOR(
      &g_loop,
      (load->port[EP_REST] = logged_port(node, "REST service started at http://127.0.0.1:")) > 0,
      STEP_MS);
  NH_WAIT_FOR(&g_loop,
              (load->port[EP_METRICS] =
                   logged_port(node, "Metrics HTTP server started at http://127.0.0.1:")) > 0,
              STEP_MS);

  publisher_t b = {.node = start_relay_peer(addr), .tag = 'b'};
  publisher_t c = {.node = start_relay_peer(addr), .tag = 'c'};
  ld_gs_service_t *gb = ld_node_gossipsub(b.node), *gc = ld_node_gossipsub(c.node);
  NH_WAIT_FOR(&g_loop,
              ld_gs_service_mesh_peers(gb, TOPIC, NULL, 0) >= 1 &&
                  ld_gs_service_mesh_peers(gc, TOPIC, NULL, 0) >= 1,
              STEP_MS);
  warm_up(&b, &c);
  warm_up(&c, &b);
  nh_run_for(&g_loop, 1000); /* warm-up copies still travelling */
  b.received_base = received(b.node);
  c.received_base = received(c.node);

  double cpu0, cpu1;
  long rss0 = 0, rss = 0, hwm = 0;
  process_figures(node->proc.pid, &cpu0, &rss0, &hwm);
  uint64_t t0 = ld_now_ms();
  load_start(load, clients);
  publisher_t *pubs[2] = {&b, &c};
  for (int i = 0; i < 2; i++) {
    uv_timer_init(&g_loop, &pubs[i]->timer);
    pubs[i]->timer.data = pubs[i];
    uv_timer_start(&pubs[i]->timer, on_publish_timer, 1000 / rate, 1000 / rate);
  }
  nh_run_for(&g_loop, (uint64_t)seconds * 1000);
  for (int i = 0; i < 2; i++)
    uv_close((uv_handle_t *)&pubs[i]->timer, NULL);
  process_figures(node->proc.pid, &cpu1, &rss, &hwm);
  load_drain(load);
  double elapsed = (double)(ld_now_ms() - t0) / 1000.0;

  /* every message is to cross the node program */
  uint64_t deadline = ld_now_ms() + DRAIN_MS;
  while (ld_now_ms() < deadline && (received(c.node) - c.received_base < b.published ||
                                    received(b.node) - b.received_base < c.published))
    nh_run_for(&g_loop, 10);
  for (int ep = 0; ep < EP_COUNT; ep++)
    report_endpoint(load, ep, clients, seconds);
  printf(
      "{\"relay\":\"B->node->C and C->node->B\",\"published\":%llu,\"delivered\":%llu,"
      "\"publish_failures\":%llu}\n",
      (unsigned long long)(b.published + c.published),
      (unsigned long long)(received(c.node) - c.received_base + received(b.node) - b.received_base),
      (unsigned long long)(b.failed + c.failed));
  printf("{\"node_program\":{\"cpu_percent\":%.1f,\"rss_before_mib\":%.1f,"
         "\"rss_under_load_mib\":%.1f,\"peak_rss_mib\":%.1f}}\n",
         100.0 * (cpu1 - cpu0) / elapsed, rss0 / 1024.0, rss / 1024.0, hwm / 1024.0);
  fflush(stdout);

  assert_true(load_close(load));
  assert_int_equal(received(c.node) - c.received_base, b.published);
  assert_int_equal(received(b.node) - b.received_base, c.published);
  for (int ep = 0; ep < EP_COUNT; ep++) {
    ep_stats_t *e = &load->ep[ep];
    assert_int_equal(e->non_200, 0);
    assert_int_equal(e->dropped, 0);
    assert_int_equal(e->failed_connects, 0);
    assert_int_equal(e->answered, e->sent);
  }
  for (size_t i = 0; i < load->n; i++)
    assert_true(load->pollers[i].answered >= 1);
  assert_int_equal(b.failed + c.failed, 0);
  assert_false(node->exited);

  nh_stop(&g_loop, b.node, STEP_MS);
  nh_stop(&g_loop, c.node, STEP_MS);
  uv_process_kill(&node->proc, SIGTERM);
  ch_expect_success(node, STEP_MS);
}

/* The soft limit of open files of process `pid` (/proc/<pid>/limits), or 0. */
static unsigned long long soft_fd_limit(int pid) {
  char path[64], line[256];
  snprintf(path, sizeof path, "/proc/%d/limits", pid);
  FILE *f = fopen(path, "r");
  assert_non_null(f);
  unsigned long long soft = 0;
  while (fgets(line, sizeof line, f) != NULL)
    if (sscanf(line, "Max open files %llu", &soft) == 1)
      break;
  fclose(f);
  return soft;
}

/* Started with the common soft limit of 1024 open files, the node program raises it to its hard
 * limit (at most 65536) so that its HTTP servers can take their connections. */
static void program_raises_its_open_file_limit(void **state) {
  (void)state;
  struct rlimit saved, low;
  assert_int_equal(getrlimit(RLIMIT_NOFILE, &saved), 0);
  low = saved;
  low.rlim_cur = 1024;
  assert_int_equal(setrlimit(RLIMIT_NOFILE, &low), 0);
  const char *args[] = {"--relay=true",
                        "--listen-address=127.0.0.1",
                        "--tcp-port=0",
                        "--rest=true",
                        "--rest-port=0",
                        "--metrics-server=true",
                        "--metrics-server-port=0",
                        NULL};
  g_child = ch_spawn(&g_loop, g_bin, args);
  assert_int_equal(setrlimit(RLIMIT_NOFILE, &saved), 0);
  NH_WAIT_FOR(&g_loop, logged_port(g_child, "Metrics HTTP server started at http://127.0.0.1:") > 0,
              STEP_MS);
  unsigned long long want =
      saved.rlim_max == RLIM_INFINITY || saved.rlim_max > 65536 ? 65536 : saved.rlim_max;
  assert_int_equal(soft_fd_limit(g_child->proc.pid), want);
  assert_null(strstr(g_child->stderr_buf, "Open file limit"));
  uv_process_kill(&g_child->proc, SIGTERM);
  ch_expect_success(g_child, STEP_MS);
}

static int teardown(void **state) {
  (void)state;
  bool closed = g_load.pollers == NULL || load_close(&g_load);
  for (int ep = 0; ep < EP_COUNT; ep++)
    free(g_load.ep[ep].lat_us);
  for (size_t i = 0; closed && i < g_load.n; i++)
    free(g_load.pollers[i].buf);
  if (closed)
    free(g_load.pollers); /* else libuv still holds them: left to the process exit */
  memset(&g_load, 0, sizeof g_load);
  if (g_child != NULL && !g_child->exited) {
    uv_process_kill(&g_child->proc, SIGKILL);
    ch_finish(g_child, STEP_MS);
  }
  free(g_child);
  g_child = NULL;
  return 0;
}

int main(void) {
  if (!ch_program_ready())
    return 0;
  g_bin = getenv("LD_BIN");
  /* this process holds both kinds of client connections; the node program inherits the limit */
  size_t fds = 2 * (size_t)env_uint("LD_HTTP_LOAD_CLIENTS", 500) + 1024;
  if (hconn_raise_fd_limit(fds) != 0) {
    fprintf(stderr, "cannot raise RLIMIT_NOFILE to %zu descriptors\n", fds);
    return 1;
  }
  uv_loop_init(&g_loop);
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_teardown(program_raises_its_open_file_limit, teardown),
      cmocka_unit_test_teardown(serves_many_pollers_while_relaying, teardown),
  };
  int rc = cmocka_run_group_tests(tests, NULL, NULL);
  uv_run(&g_loop, UV_RUN_NOWAIT);
  uv_loop_close(&g_loop);
  return rc;
}
