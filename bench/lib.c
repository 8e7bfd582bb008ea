/* The library through its public C API only (liblogosdelivery.h): several contexts in one
 * process, on loopback.
 *
 *   bench_lib [--only rss|start|latency|rate] [--contexts 10] [--starts 20] [--sends 2000]
 *             [--interval-us 1000] [--seconds 10] [--window 65536] [--drain 30]
 *             [--reliability on|off|both] [--size 100] [--log-level WARN]
 *
 * Sections, in this order (each prints its figures; nothing is asserted):
 *   rss      VmRSS of the process before any context, after the first one and after --contexts
 *            idle contexts were created and started (Core mode, not connected): growth per context
 *            and per additional context.
 *   start    logosdelivery_create_node + logosdelivery_start_node, from the create call until the
 *            start callback, --starts times (each context is then stopped and destroyed):
 *            p50 / p90 / max.
 *   latency  two contexts joined by "staticnodes", both subscribed to one content topic; after a
 *            warm-up, --sends messages of --size bytes from A, one every --interval-us; latency =
 *            from just before logosdelivery_send to B's message_received callback (the payload
 *            carries the sequence number). p50 / p90 / p99 / max, lost messages, and how long the
 *            send call itself blocks.
 *   rate     a store context S and a sender A (reliabilityEnabled true, staticnodes [S]), so
 *            message_sent arrives once the store confirms a message. A sends as fast as the API
 *            accepts for --seconds, keeping at most --window requests not yet finished (confirmed
 * by message_sent with reliability on, propagated with it off; the library holds 100,000 in flight
 * at most); printed: sends accepted per second, message_propagated and message_sent per second
 * within the window, then how many message_sent arrived in total after up to --drain seconds. Load
 * averages are printed before and after. Exit status 1 only when a context cannot be set up or a
 * reply never comes. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "liblogosdelivery.h"
#include "bench_clock.h"

#define CONTENT_TOPIC "/ldbench/1/lib/proto"
#define MAX_CONTEXTS 64
#define MAX_SENDS 1000000
#define MAX_SIZE (100u * 1024)
#define REPLY_WAIT_NS (120ull * 1000000000ull)
#define WARMUP_WAIT_NS (30ull * 1000000000ull)
#define WARMUP_MESSAGES 200
#define SEQ_MAGIC 0x4c44424cu /* "LDBL" */
#define WARMUP_SEQ 0xffffffffu
#define ADDR_CAP 1024
#define CONFIG_CAP 4096

typedef struct options {
  const char *only;
  unsigned contexts, starts, sends, interval_us, seconds, window, drain;
  size_t size;
  const char *log_level, *reliability;
} options_t;

static options_t opt = {NULL, 10, 20, 2000, 1000, 10, 65536, 30, 100, "WARN", "both"};

/* ---- time, memory, load --------------------------------------------------------------------- */

static uint64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void sleep_until(uint64_t t) {
  struct timespec ts = {(time_t)(t / 1000000000ull), (long)(t % 1000000000ull)};
  while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) != 0) {
  }
}

static void sleep_ms(unsigned ms) {
  sleep_until(now_ns() + (uint64_t)ms * 1000000ull);
}

static void print_load(const char *when) {
  FILE *f = fopen("/proc/loadavg", "r");
  char text[128] = "?";
  if (f != NULL) {
    if (fgets(text, sizeof text, f) == NULL)
      snprintf(text, sizeof text, "?");
    fclose(f);
  }
  text[strcspn(text, "\n")] = '\0';
  printf("# load average %s: %s\n", when, text);
}

/* The q-quantile (nearest rank) of n sorted values. */
static uint64_t quantile(const uint64_t *v, size_t n, double q) {
  if (n == 0)
    return 0;
  size_t rank = (size_t)(q * (double)n + 0.999999);
  return v[rank == 0 ? 0 : rank > n ? n - 1 : rank - 1];
}

static double ms(uint64_t ns) {
  return (double)ns / 1e6;
}

/* ---- base64 --------------------------------------------------------------------------------- */

static size_t base64(const uint8_t *in, size_t n, char *out) {
  static const char k[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  size_t o = 0;
  for (size_t i = 0; i < n; i += 3) {
    uint32_t v = (uint32_t)in[i] << 16;
    if (i + 1 < n)
      v |= (uint32_t)in[i + 1] << 8;
    if (i + 2 < n)
      v |= in[i + 2];
    out[o++] = k[v >> 18 & 63];
    out[o++] = k[v >> 12 & 63];
    out[o++] = i + 1 < n ? k[v >> 6 & 63] : '=';
    out[o++] = i + 2 < n ? k[v & 63] : '=';
  }
  out[o] = '\0';
  return o;
}

/* ---- synchronous calls ---------------------------------------------------------------------- */

typedef struct reply {
  pthread_mutex_t mu;
  pthread_cond_t cv;
  bool done;
  int ret;
  char text[ADDR_CAP];
} reply_t;

static void on_reply(int ret, const char *msg, size_t len, void *ud) {
  reply_t *r = ud;
  pthread_mutex_lock(&r->mu);
  size_t n = msg == NULL ? 0 : len < sizeof r->text - 1 ? len : sizeof r->text - 1;
  if (n > 0)
    memcpy(r->text, msg, n);
  r->text[n] = '\0';
  r->ret = ret;
  r->done = true;
  pthread_cond_signal(&r->cv);
  pthread_mutex_unlock(&r->mu);
}

static void reply_init(reply_t *r) {
  memset(r, 0, sizeof *r);
  pthread_mutex_init(&r->mu, NULL);
  pthread_cond_init(&r->cv, NULL);
}

/* Waits for the reply of a call that returned `rc`; exits on an error or silence. */
static void reply_wait(reply_t *r, int rc, const char *what) {
  struct timespec until;
  clock_gettime(CLOCK_REALTIME, &until);
  until.tv_sec += (time_t)(REPLY_WAIT_NS / 1000000000ull);
  pthread_mutex_lock(&r->mu);
  while (!r->done && rc != RET_MISSING_CALLBACK)
    if (pthread_cond_timedwait(&r->cv, &r->mu, &until) != 0)
      break;
  bool ok = r->done && r->ret == RET_OK && rc == RET_OK;
  pthread_mutex_unlock(&r->mu);
  if (!ok) {
    fprintf(stderr, "bench_lib: %s failed (rc %d): %s\n", what, rc, r->done ? r->text : "no reply");
    exit(1);
  }
  pthread_mutex_destroy(&r->mu);
  pthread_cond_destroy(&r->cv);
}

typedef int (*simple_fn)(void *ctx, FFICallBack cb, void *ud);

static void call(void *ctx, simple_fn fn, const char *what) {
  reply_t r;
  reply_init(&r);
  reply_wait(&r, fn(ctx, on_reply, &r), what);
}

typedef int (*arg_fn)(void *ctx, FFICallBack cb, void *ud, const char *arg);

static void call_arg(void *ctx, arg_fn fn, const char *arg, const char *what, char *out,
                     size_t cap) {
  reply_t r;
  reply_init(&r);
  reply_wait(&r, fn(ctx, on_reply, &r, arg), what);
  if (out != NULL)
    snprintf(out, cap, "%s", r.text);
}

/* The sum of every series of the Prometheus metric `name` in a context's Metrics, -1 if absent. */
typedef struct metrics_reply {
  reply_t r;
  char *text;
} metrics_reply_t;

static void on_metrics(int ret, const char *msg, size_t len, void *ud) {
  metrics_reply_t *m = ud;
  if (ret == RET_OK && msg != NULL && (m->text = malloc(len + 1)) != NULL) {
    memcpy(m->text, msg, len);
    m->text[len] = '\0';
  }
  on_reply(ret, "", 0, &m->r);
}

static double metric(void *ctx, const char *name) {
  metrics_reply_t m = {.text = NULL};
  reply_init(&m.r);
  reply_wait(&m.r, logosdelivery_get_node_info(ctx, on_metrics, &m, "Metrics"), "Metrics");
  double sum = -1;
  size_t n = strlen(name);
  for (char *line = m.text; line != NULL && *line != '\0';) {
    char *next = strchr(line, '\n');
    if (strncmp(line, name, n) == 0 && (line[n] == '{' || line[n] == ' ')) {
      char *v = strchr(line + n, ' ');
      sum = (sum < 0 ? 0 : sum) + (v != NULL ? strtod(v + 1, NULL) : 0);
    }
    line = next == NULL ? NULL : next + 1;
  }
  free(m.text);
  return sum;
}

/* ---- contexts and their events -------------------------------------------------------------- */

typedef struct latency latency_t;

typedef struct lctx {
  void *h;
  char addr[ADDR_CAP];
  atomic_ulong received, propagated, sent, errors;
  latency_t *lat; /* set while this context's message_received events are timed */
  pthread_mutex_t mu;
  char last_error[256];
} lctx_t;

struct latency {
  uint64_t *sent_at, *recv_at;
  size_t n;
  atomic_ulong got, warm;
};

static bool event_is(const char *msg, size_t len, const char *type) {
  char prefix[64];
  int n = snprintf(prefix, sizeof prefix, "{\"eventType\":\"%s\"", type);
  return (size_t)n <= len && memcmp(msg, prefix, (size_t)n) == 0;
}

/* The sequence number carried in a message_received payload, or -1. */
static int64_t payload_seq(const char *msg, size_t len) {
  const char *p = memmem(msg, len, "\"payload\":[", 11);
  if (p == NULL)
    return -1;
  p += 11;
  uint8_t b[8];
  for (int i = 0; i < 8; i++) {
    char *end;
    long v = strtol(p, &end, 10);
    if (end == p || v < 0 || v > 255)
      return -1;
    b[i] = (uint8_t)v;
    p = end + 1;
  }
  uint32_t magic = (uint32_t)b[0] << 24 | (uint32_t)b[1] << 16 | (uint32_t)b[2] << 8 | b[3];
  uint32_t seq = (uint32_t)b[4] << 24 | (uint32_t)b[5] << 16 | (uint32_t)b[6] << 8 | b[7];
  return magic == SEQ_MAGIC ? (int64_t)seq : -1;
}

static void on_received(lctx_t *c, const char *msg, size_t len) {
  uint64_t t = now_ns();
  atomic_fetch_add(&c->received, 1);
  latency_t *lat = c->lat;
  if (lat == NULL)
    return;
  int64_t seq = payload_seq(msg, len);
  if (seq == WARMUP_SEQ)
    atomic_fetch_add(&lat->warm, 1);
  else if (seq >= 0 && (size_t)seq < lat->n && lat->recv_at[seq] == 0) {
    lat->recv_at[seq] = t;
    atomic_fetch_add(&lat->got, 1);
  }
}

static void on_event(int ret, const char *msg, size_t len, void *ud) {
  lctx_t *c = ud;
  if (ret != RET_OK || msg == NULL)
    return;
  if (event_is(msg, len, "message_received"))
    on_received(c, msg, len);
  else if (event_is(msg, len, "message_propagated"))
    atomic_fetch_add(&c->propagated, 1);
  else if (event_is(msg, len, "message_sent"))
    atomic_fetch_add(&c->sent, 1);
  else if (event_is(msg, len, "message_error")) {
    atomic_fetch_add(&c->errors, 1);
    pthread_mutex_lock(&c->mu);
    snprintf(c->last_error, sizeof c->last_error, "%.*s", (int)len, msg);
    pthread_mutex_unlock(&c->mu);
  }
}

/* The configuration: a Core node on loopback plus `extra` fields (without braces, may be ""). */
static void config(char *out, size_t cap, const char *extra) {
  snprintf(out, cap,
           "{\"listenAddress\":\"127.0.0.1\",\"tcpPort\":0,\"discv5UdpPort\":0,\"clusterId\":77,"
           "\"numShardsInNetwork\":1,\"logLevel\":\"%s\"%s%s}",
           opt.log_level, extra[0] != '\0' ? "," : "", extra);
}

static void ctx_create(lctx_t *c, const char *extra) {
  char cfg[CONFIG_CAP];
  config(cfg, sizeof cfg, extra);
  reply_t r;
  reply_init(&r);
  c->h = logosdelivery_create_node(cfg, on_reply, &r);
  if (c->h == NULL) {
    fprintf(stderr, "bench_lib: create_node returned NULL: %s\n", r.text);
    exit(1);
  }
  reply_wait(&r, RET_OK, "create_node");
}

/* Creates and starts a context; its first multiaddr goes to c->addr. */
static void ctx_start(lctx_t *c, const char *extra) {
  memset(c, 0, sizeof *c);
  pthread_mutex_init(&c->mu, NULL);
  ctx_create(c, extra);
  logosdelivery_set_event_callback(c->h, on_event, c);
  call(c->h, logosdelivery_start_node, "start_node");
  call_arg(c->h, logosdelivery_get_node_info, "MyMultiaddresses", "get_node_info", c->addr,
           sizeof c->addr);
  c->addr[strcspn(c->addr, ",")] = '\0';
}

static void ctx_free(lctx_t *c) {
  call(c->h, logosdelivery_stop_node, "stop_node");
  reply_t r;
  reply_init(&r);
  reply_wait(&r, logosdelivery_destroy(c->h, on_reply, &r), "destroy");
  pthread_mutex_destroy(&c->mu);
}

/* ---- sending -------------------------------------------------------------------------------- */

typedef struct sends {
  atomic_ulong ok, err;
  _Atomic uint64_t first_err_ns;
  atomic_ulong ok_at_first_err;
  pthread_mutex_t mu;
  char last_error[256];
} sends_t;

static sends_t sends = {.mu = PTHREAD_MUTEX_INITIALIZER};

static void on_send(int ret, const char *msg, size_t len, void *ud) {
  (void)ud;
  if (ret == RET_OK) {
    atomic_fetch_add(&sends.ok, 1);
    return;
  }
  atomic_fetch_add(&sends.err, 1);
  uint64_t zero = 0;
  if (atomic_compare_exchange_strong(&sends.first_err_ns, &zero, now_ns()))
    atomic_store(&sends.ok_at_first_err, atomic_load(&sends.ok));
  pthread_mutex_lock(&sends.mu);
  snprintf(sends.last_error, sizeof sends.last_error, "%.*s", msg == NULL ? 0 : (int)len,
           msg == NULL ? "" : msg);
  pthread_mutex_unlock(&sends.mu);
}

typedef struct sender {
  uint8_t *payload;
  char *json;
  size_t size;
  uint64_t counter; /* makes every payload unique */
} sender_t;

static void sender_init(sender_t *s, size_t size) {
  s->size = size < 16 ? 16 : size > MAX_SIZE ? MAX_SIZE : size;
  s->payload = calloc(1, s->size);
  s->json = malloc(s->size * 4 / 3 + 256);
  if (s->payload == NULL || s->json == NULL) {
    fprintf(stderr, "bench_lib: out of memory\n");
    exit(1);
  }
  for (size_t i = 16; i < s->size; i++)
    s->payload[i] = (uint8_t)('a' + i % 26);
}

static void sender_clear(sender_t *s) {
  free(s->payload);
  free(s->json);
}

static void put_be32(uint8_t *p, uint32_t v) {
  p[0] = (uint8_t)(v >> 24);
  p[1] = (uint8_t)(v >> 16);
  p[2] = (uint8_t)(v >> 8);
  p[3] = (uint8_t)v;
}

/* Sends one message carrying `seq`; returns the dispatch status. */
static int send_seq(void *ctx, sender_t *s, uint32_t seq) {
  put_be32(s->payload, SEQ_MAGIC);
  put_be32(s->payload + 4, seq);
  s->counter++;
  memcpy(s->payload + 8, &s->counter, sizeof s->counter);
  int n = sprintf(s->json, "{\"contentTopic\":\"" CONTENT_TOPIC "\",\"payload\":\"");
  n += (int)base64(s->payload, s->size, s->json + n);
  strcpy(s->json + n, "\",\"ephemeral\":false}");
  return logosdelivery_send(ctx, on_send, NULL, s->json);
}

/* ---- sections ------------------------------------------------------------------------------- */

static void section_rss(void) {
  unsigned n = opt.contexts > MAX_CONTEXTS ? MAX_CONTEXTS : opt.contexts;
  lctx_t *cs = calloc(n, sizeof *cs);
  long rss0 = bench_rss_kib(), rss1 = 0;
  for (unsigned i = 0; i < n; i++) {
    ctx_start(&cs[i], "");
    if (i == 0)
      rss1 = bench_rss_kib();
  }
  long rss_n = bench_rss_kib();
  sleep_ms(2000);
  long rss_idle = bench_rss_kib();
  printf("rss: %u idle contexts (Core mode, started, not connected): VmRSS %.1f MiB before, "
         "%.1f MiB with one, %.1f MiB with %u (%.1f MiB after 2 s idle)\n",
         n, rss0 / 1024.0, rss1 / 1024.0, rss_n / 1024.0, n, rss_idle / 1024.0);
  printf("  per context: %.2f MiB ((all - before) / %u); per additional context: %.2f MiB; "
         "first context: %.2f MiB\n",
         (rss_idle - rss0) / 1024.0 / n, n, n > 1 ? (rss_idle - rss1) / 1024.0 / (n - 1) : 0.0,
         (rss1 - rss0) / 1024.0);
  for (unsigned i = 0; i < n; i++)
    ctx_free(&cs[i]);
  printf("  after stop + destroy of all: VmRSS %.1f MiB\n", bench_rss_kib() / 1024.0);
  free(cs);
}

static void section_start(void) {
  unsigned n = opt.starts == 0 ? 1 : opt.starts;
  uint64_t *total = calloc(n, sizeof *total), *create = calloc(n, sizeof *create);
  for (unsigned i = 0; i < n; i++) {
    lctx_t c;
    memset(&c, 0, sizeof c);
    pthread_mutex_init(&c.mu, NULL);
    uint64_t t0 = now_ns();
    ctx_create(&c, "");
    uint64_t t1 = now_ns();
    call(c.h, logosdelivery_start_node, "start_node");
    uint64_t t2 = now_ns();
    create[i] = t1 - t0;
    total[i] = t2 - t0;
    ctx_free(&c);
  }
  bench_sort_u64(total, n);
  bench_sort_u64(create, n);
  printf("start: create_node + start_node (callback to callback), %u times: p50 %.2f ms, p90 %.2f "
         "ms, max %.2f ms (create_node alone: p50 %.2f ms)\n",
         n, ms(quantile(total, n, 0.5)), ms(quantile(total, n, 0.9)), ms(total[n - 1]),
         ms(quantile(create, n, 0.5)));
  free(total);
  free(create);
}

/* Sends warm-up messages from a until b has received `want` of them; false after the timeout. */
static bool warm_up(lctx_t *a, latency_t *lat, sender_t *s, unsigned want, unsigned every_us) {
  uint64_t deadline = now_ns() + WARMUP_WAIT_NS;
  while (atomic_load(&lat->warm) < want && now_ns() < deadline) {
    send_seq(a->h, s, WARMUP_SEQ);
    sleep_until(now_ns() + (uint64_t)every_us * 1000ull);
  }
  return atomic_load(&lat->warm) >= want;
}

static void latency_report(latency_t *lat, uint64_t *call_ns) {
  size_t n = lat->n, got = 0;
  uint64_t *d = calloc(n, sizeof *d);
  for (size_t i = 0; i < n; i++)
    if (lat->recv_at[i] != 0)
      d[got++] = lat->recv_at[i] - lat->sent_at[i];
  bench_sort_u64(d, got);
  bench_sort_u64(call_ns, n);
  printf("latency: %zu messages of %zu bytes, one every %u us, A → B over relay (staticnodes): "
         "p50 %.3f ms, p90 %.3f ms, p99 %.3f ms, max %.3f ms; %zu received, %zu lost\n",
         n, opt.size, opt.interval_us, ms(quantile(d, got, 0.5)), ms(quantile(d, got, 0.9)),
         ms(quantile(d, got, 0.99)), got ? ms(d[got - 1]) : 0.0, got, n - got);
  printf("  logosdelivery_send call itself: p50 %.3f ms, p99 %.3f ms, max %.3f ms\n",
         ms(quantile(call_ns, n, 0.5)), ms(quantile(call_ns, n, 0.99)), ms(call_ns[n - 1]));
  free(d);
}

static void section_latency(void) {
  lctx_t a, b;
  char extra[ADDR_CAP + 128];
  ctx_start(&a, "\"reliabilityEnabled\":false");
  snprintf(extra, sizeof extra, "\"reliabilityEnabled\":false,\"staticnodes\":[\"%s\"]", a.addr);
  ctx_start(&b, extra);
  call_arg(a.h, logosdelivery_subscribe, CONTENT_TOPIC, "subscribe", NULL, 0);
  call_arg(b.h, logosdelivery_subscribe, CONTENT_TOPIC, "subscribe", NULL, 0);

  latency_t lat = {.n = opt.sends > MAX_SENDS ? MAX_SENDS : opt.sends};
  lat.sent_at = calloc(lat.n, sizeof *lat.sent_at);
  lat.recv_at = calloc(lat.n, sizeof *lat.recv_at);
  uint64_t *call_ns = calloc(lat.n, sizeof *call_ns);
  sender_t s;
  sender_init(&s, opt.size);
  b.lat = &lat;
  if (!warm_up(&a, &lat, &s, 1, 20000) || !warm_up(&a, &lat, &s, WARMUP_MESSAGES, 1000)) {
    fprintf(stderr, "bench_lib: no warm-up message reached B within 30 s\n");
    exit(1);
  }
  sleep_ms(200);
  uint64_t start = now_ns();
  for (size_t i = 0; i < lat.n; i++) {
    lat.sent_at[i] = now_ns();
    send_seq(a.h, &s, (uint32_t)i);
    call_ns[i] = now_ns() - lat.sent_at[i];
    sleep_until(start + (uint64_t)(i + 1) * opt.interval_us * 1000ull);
  }
  uint64_t deadline = now_ns() + 10ull * 1000000000ull;
  while (atomic_load(&lat.got) < lat.n && now_ns() < deadline)
    sleep_ms(10);
  b.lat = NULL;
  latency_report(&lat, call_ns);
  ctx_free(&b);
  ctx_free(&a);
  sender_clear(&s);
  free(lat.sent_at);
  free(lat.recv_at);
  free(call_ns);
}

/* Requests finished: confirmed (message_sent) with confirmations on, else propagated; or failed
 * or refused. */
static uint64_t settled(lctx_t *a, bool confirmed) {
  return atomic_load(confirmed ? &a->sent : &a->propagated) + atomic_load(&a->errors) +
         atomic_load(&sends.err);
}

/* Sends for opt.seconds with at most opt.window requests not yet finished (see settled).
 * Returns the number of send calls; *start gets the start time. */
static uint64_t call_hist[MAX_SENDS];
static size_t n_call_hist;
static uint64_t waited_ns;

static uint64_t flood(lctx_t *a, sender_t *s, bool confirmed, uint64_t *start, uint64_t *elapsed) {
  uint64_t issued = 0, end;
  n_call_hist = 0;
  waited_ns = 0;
  uint64_t done0 = settled(a, confirmed);
  *start = now_ns();
  end = *start + (uint64_t)opt.seconds * 1000000000ull;
  while (now_ns() < end) {
    uint64_t done = settled(a, confirmed) - done0;
    if (issued > done && issued - done >= opt.window) {
      uint64_t w0 = now_ns();
      sleep_until(w0 + 100000ull);
      waited_ns += now_ns() - w0;
      continue;
    }
    uint64_t c0 = now_ns();
    send_seq(a->h, s, (uint32_t)issued);
    if (n_call_hist < MAX_SENDS)
      call_hist[n_call_hist++] = now_ns() - c0;
    issued++;
  }
  *elapsed = now_ns() - *start;
  return issued;
}

typedef struct rate_run {
  lctx_t st, a;
  sender_t s;
  bool reliability;
  unsigned long ok0, prop0, sent0, err0, refused0;
  unsigned long ok, prop, sent, err, refused;
  uint64_t issued, start, elapsed, drained;
} rate_run_t;

/* A store context and a sender joined to it, subscribed, with one message through (and, with
 * reliability on, confirmed by message_sent); exits when that does not happen in time. */
static void rate_setup(rate_run_t *r) {
  char extra[ADDR_CAP + 128];
  ctx_start(&r->st,
            "\"store\":true,\"storeMessageDbUrl\":\"memory://\",\"reliabilityEnabled\":false");
  snprintf(extra, sizeof extra, "\"reliabilityEnabled\":%s,\"staticnodes\":[\"%s\"]",
           r->reliability ? "true" : "false", r->st.addr);
  ctx_start(&r->a, extra);
  call_arg(r->a.h, logosdelivery_subscribe, CONTENT_TOPIC, "subscribe", NULL, 0);
  call_arg(r->st.h, logosdelivery_subscribe, CONTENT_TOPIC, "subscribe", NULL, 0);
  sender_init(&r->s, opt.size);
  atomic_ulong *through = r->reliability ? &r->a.sent : &r->a.propagated;
  uint64_t deadline = now_ns() + WARMUP_WAIT_NS;
  while (atomic_load(through) == 0 && now_ns() < deadline) {
    send_seq(r->a.h, &r->s, WARMUP_SEQ);
    sleep_ms(200);
  }
  if (atomic_load(through) == 0) {
    fprintf(stderr, "bench_lib: no %s within 30 s\n",
            r->reliability ? "message_sent (store confirmation)" : "message_propagated");
    exit(1);
  }
  /* every warm-up send propagated (they may have waited for the mesh), then their confirmations */
  deadline = now_ns() + WARMUP_WAIT_NS;
  while (atomic_load(&r->a.propagated) + atomic_load(&r->a.errors) < atomic_load(&sends.ok) &&
         now_ns() < deadline)
    sleep_ms(50);
  sleep_ms(r->reliability ? 4000 : 500);
}

static void rate_measure(rate_run_t *r) {
  r->ok0 = atomic_load(&sends.ok);
  r->prop0 = atomic_load(&r->a.propagated);
  r->sent0 = atomic_load(&r->a.sent);
  r->err0 = atomic_load(&r->a.errors);
  r->refused0 = atomic_load(&sends.err);
  atomic_store(&sends.first_err_ns, 0);
  r->issued = flood(&r->a, &r->s, r->reliability, &r->start, &r->elapsed);
  r->ok = atomic_load(&sends.ok) - r->ok0;
  r->prop = atomic_load(&r->a.propagated) - r->prop0;
  r->sent = atomic_load(&r->a.sent) - r->sent0;
  r->err = atomic_load(&r->a.errors) - r->err0;
  r->refused = atomic_load(&sends.err) - r->refused0;
  uint64_t t_end = now_ns(), until = t_end + (uint64_t)opt.drain * 1000000000ull;
  atomic_ulong *final = r->reliability ? &r->a.sent : &r->a.propagated;
  unsigned long base = r->reliability ? r->sent0 : r->prop0;
  while (atomic_load(final) - base + atomic_load(&r->a.errors) - r->err0 < r->ok &&
         now_ns() < until)
    sleep_ms(50);
  r->drained = now_ns() - t_end;
}

/* Waits until `v` has not changed for one second (at most ten). */
static void wait_quiet(atomic_ulong *v) {
  uint64_t until = now_ns() + 10ull * 1000000000ull;
  unsigned long last = atomic_load(v);
  for (;;) {
    sleep_ms(1000);
    unsigned long cur = atomic_load(v);
    if (cur == last || now_ns() > until)
      return;
    last = cur;
  }
}

static void rate_report(rate_run_t *r) {
  wait_quiet(&r->st.received);
  double secs = (double)r->elapsed / 1e9;
  printf("rate: %.1f s of sends (%zu-byte payloads, at most %u not yet finished), reliability "
         "%s, a store context beside: %llu send calls, %.0f sends/s accepted (%lu), "
         "%.0f message_propagated/s, %.0f message_sent/s within the window, %lu message_error\n",
         secs, r->s.size, opt.window, r->reliability ? "on" : "off", (unsigned long long)r->issued,
         r->ok / secs, r->ok, r->prop / secs, r->sent / secs, r->err);
  unsigned long sent_all = atomic_load(&r->a.sent) - r->sent0;
  unsigned long prop_all = atomic_load(&r->a.propagated) - r->prop0;
  unsigned long err_all = atomic_load(&r->a.errors) - r->err0;
  printf("  %.1f s after the window: of %lu accepted, %lu message_propagated, %lu message_sent, "
         "%lu message_error; the store context received %lu\n",
         (double)r->drained / 1e9, r->ok, prop_all, sent_all, err_all,
         atomic_load(&r->st.received));
  if (err_all > 0)
    printf("  last message_error: %s\n", r->a.last_error);
  printf("  metrics: sender libp2p_pubsub_messages_published_total %.0f; store context "
         "libp2p_gossipsub_received_total %.0f, libp2p_pubsub_validation_success_total %.0f, "
         "_failure_total %.0f, _ignore_total %.0f\n",
         metric(r->a.h, "libp2p_pubsub_messages_published_total"),
         metric(r->st.h, "libp2p_gossipsub_received_total"),
         metric(r->st.h, "libp2p_pubsub_validation_success_total"),
         metric(r->st.h, "libp2p_pubsub_validation_failure_total"),
         metric(r->st.h, "libp2p_pubsub_validation_ignore_total"));
  bench_sort_u64(call_hist, n_call_hist);
  printf("  logosdelivery_send call: p50 %.3f ms, p99 %.3f ms, max %.3f ms; %.2f s waiting for "
         "the window\n",
         ms(quantile(call_hist, n_call_hist, 0.5)), ms(quantile(call_hist, n_call_hist, 0.99)),
         n_call_hist ? ms(call_hist[n_call_hist - 1]) : 0.0, (double)waited_ns / 1e9);
  uint64_t first_err = atomic_load(&sends.first_err_ns);
  if (r->refused > 0 && first_err > r->start) {
    double before = (double)(first_err - r->start) / 1e9;
    unsigned long ok_before = atomic_load(&sends.ok_at_first_err) - r->ok0;
    printf("  sends refused (RET_ERR reply): %lu, the first %.2f s into the window, after %lu "
           "accepted (%.0f sends/s until then); last refusal: %s\n",
           r->refused, before, ok_before, ok_before / before, sends.last_error);
  }
}

/* With reliability on (as asked), then off (what the same path does without confirmations). */
static void section_rate(void) {
  for (int pass = 0; pass < 2; pass++) {
    if (strcmp(opt.reliability, "both") != 0 && strcmp(opt.reliability, pass == 0 ? "on" : "off"))
      continue;
    rate_run_t r;
    memset(&r, 0, sizeof r);
    r.reliability = pass == 0;
    rate_setup(&r);
    rate_measure(&r);
    rate_report(&r);
    ctx_free(&r.a);
    ctx_free(&r.st);
    sender_clear(&r.s);
  }
}

/* ---- main ----------------------------------------------------------------------------------- */

static bool parse_args(int argc, char **argv) {
  for (int i = 1; i < argc; i++) {
    const char *k = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
    if (v == NULL)
      return false;
    i++;
    if (strcmp(k, "--only") == 0)
      opt.only = v;
    else if (strcmp(k, "--reliability") == 0)
      opt.reliability = v;
    else if (strcmp(k, "--log-level") == 0)
      opt.log_level = v;
    else if (strcmp(k, "--contexts") == 0)
      opt.contexts = (unsigned)strtoul(v, NULL, 10);
    else if (strcmp(k, "--starts") == 0)
      opt.starts = (unsigned)strtoul(v, NULL, 10);
    else if (strcmp(k, "--sends") == 0)
      opt.sends = (unsigned)strtoul(v, NULL, 10);
    else if (strcmp(k, "--interval-us") == 0)
      opt.interval_us = (unsigned)strtoul(v, NULL, 10);
    else if (strcmp(k, "--seconds") == 0)
      opt.seconds = (unsigned)strtoul(v, NULL, 10);
    else if (strcmp(k, "--drain") == 0)
      opt.drain = (unsigned)strtoul(v, NULL, 10);
    else if (strcmp(k, "--window") == 0)
      opt.window = (unsigned)strtoul(v, NULL, 10);
    else if (strcmp(k, "--size") == 0)
      opt.size = strtoul(v, NULL, 10);
    else
      return false;
  }
  return opt.sends > 0 && opt.contexts > 0 && opt.window > 0;
}

static bool wanted(const char *section) {
  return opt.only == NULL || strcmp(opt.only, section) == 0;
}

int main(int argc, char **argv) {
  if (!parse_args(argc, argv)) {
    fprintf(stderr, "usage: bench_lib [--only rss|start|latency|rate] [--contexts N] [--starts N] "
                    "[--sends N] [--interval-us US] [--seconds S] [--window W] [--drain S] "
                    "[--reliability on|off|both] [--size BYTES] [--log-level LEVEL]\n");
    return 2;
  }
  setvbuf(stdout, NULL, _IOLBF, 0);
  print_load("before");
  if (wanted("rss"))
    section_rss();
  if (wanted("start"))
    section_start();
  if (wanted("latency"))
    section_latency();
  if (wanted("rate"))
    section_rate();
  print_load("after");
  return 0;
}
