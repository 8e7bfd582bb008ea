/* Reliable channels through the public C API: two contexts in one process on loopback, one
 * channel. Prints figures; nothing is asserted.
 *
 *   bench_channels [--messages 2000] [--size 100] [--window 256] [--rate 0]
 *
 * Sends are pipelined: up to --window channel_send calls in flight, at --rate per second (0: as
 * fast as the calls are answered). BENCH_TRACE=1 prints each receipt's time at B, BENCH_LOG the
 * contexts' log level (ERROR).
 *
 * 1. throughput: A sends --messages messages of --size bytes as fast as the API answers; figures:
 *    messages per second received by B, and acknowledged at A (channel_message_delivered), from
 *    the first send to the last event; send → channel_message_sent and send → delivered p50/p90;
 *    the most messages A had sent but not yet seen acknowledged (what the engine's outgoing buffer
 *    holds); per thread of the process over the burst: time on a CPU, time runnable but waiting
 *    for one, and the rest of the wall time off the CPU (blocked: poll, locks, I/O), with its
 *    voluntary and involuntary context switches (/proc/self/task).
 * 2. restart: B is stopped, destroyed, created again on its state directory and starts; the time
 *    of channel_create (which restores the channel: log of every message, bloom filter) and the
 *    process RSS growth it causes. */
#include <dirent.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "liblogosdelivery.h"
#include "bench_clock.h"
#include "channels/channels.h"

#define TOPIC "/ldbench/1/channels/proto"
#define MAX_MESSAGES 100000

static size_t g_messages = 2000, g_size = 100;

static uint64_t now_us(void) {
  return bench_clock_us(CLOCK_MONOTONIC);
}

/* ---- replies -------------------------------------------------------------------------------- */

typedef struct reply {
  pthread_mutex_t mu;
  pthread_cond_t cv;
  bool done;
  int ret;
  char msg[256];
} reply_t;

static void on_reply(int ret, const char *msg, size_t len, void *ud) {
  reply_t *r = ud;
  pthread_mutex_lock(&r->mu);
  r->ret = ret;
  size_t n = msg == NULL ? 0 : len < sizeof r->msg - 1 ? len : sizeof r->msg - 1;
  if (n > 0)
    memcpy(r->msg, msg, n);
  r->msg[n] = '\0';
  r->done = true;
  pthread_cond_signal(&r->cv);
  pthread_mutex_unlock(&r->mu);
}

static void reply_init(reply_t *r) {
  memset(r, 0, sizeof *r);
  pthread_mutex_init(&r->mu, NULL);
  pthread_cond_init(&r->cv, NULL);
}

static int reply_wait(reply_t *r, char *out, size_t cap) {
  pthread_mutex_lock(&r->mu);
  while (!r->done)
    pthread_cond_wait(&r->cv, &r->mu);
  pthread_mutex_unlock(&r->mu);
  if (out != NULL && cap > 0) {
    size_t n = strnlen(r->msg, cap - 1);
    memcpy(out, r->msg, n);
    out[n] = '\0';
  }
  if (r->ret != RET_OK)
    fprintf(stderr, "request failed: %s\n", r->msg);
  pthread_mutex_destroy(&r->mu);
  pthread_cond_destroy(&r->cv);
  return r->ret;
}

/* ---- events --------------------------------------------------------------------------------- */

typedef struct stats {
  atomic_size_t received, sent, delivered, errors;
  atomic_uint_fast64_t last_us;
  atomic_long tid;           /* the thread that reports the events: the context's loop */
  atomic_size_t max_unacked; /* the most `sent` − `delivered` seen at an event */
} stats_t;

static stats_t g_a, g_b;

/* The main thread waits for the counters' progress on g_progress (the contexts' threads signal
 * it) rather than polling: a polling thread would take CPU from the two contexts it measures. */
static pthread_mutex_t g_progress_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t g_progress = PTHREAD_COND_INITIALIZER;

static _Atomic(atomic_size_t *) g_wait_on; /* the counter the main thread waits on */
static atomic_size_t g_wait_want;          /* and the value it waits for */

/* `counter` moved: wakes the main thread when it waits for this value of it. */
static void progress(atomic_size_t *counter) {
  if (atomic_load(&g_wait_on) != counter || atomic_load(counter) < atomic_load(&g_wait_want))
    return;
  pthread_mutex_lock(&g_progress_mu);
  pthread_cond_broadcast(&g_progress);
  pthread_mutex_unlock(&g_progress_mu);
}

/* Waits until `*counter` ≥ want or `deadline_us` (monotonic) passed. */
static void wait_counter(atomic_size_t *counter, size_t want, uint64_t deadline_us);
static char g_ids[MAX_MESSAGES][24];
static uint64_t g_send_us[MAX_MESSAGES], g_sent_us[MAX_MESSAGES], g_delivered_us[MAX_MESSAGES];
static atomic_size_t g_issued;

/* Request ID → message index: an open-addressing table over the IDs' first 16 hex digits
 * (written by the reply callback, read by the event callback: both on A's worker thread). */
#define ID_SLOTS (2 * MAX_MESSAGES + 1)
static int32_t g_slot[ID_SLOTS];

static size_t id_slot(const char *id) {
  char head[17];
  memcpy(head, id, 16);
  head[16] = '\0';
  return (size_t)(strtoull(head, NULL, 16) % ID_SLOTS);
}

static void id_index(size_t i) {
  size_t h = id_slot(g_ids[i]);
  while (g_slot[h] != 0)
    h = (h + 1) % ID_SLOTS;
  g_slot[h] = (int32_t)i + 1;
}

static void mark(const char *json, uint64_t *times) {
  const char *p = strstr(json, "\"requestId\":\"");
  if (p == NULL)
    return;
  p += 13;
  for (size_t h = id_slot(p); g_slot[h] != 0; h = (h + 1) % ID_SLOTS)
    if (strncmp(g_ids[g_slot[h] - 1], p, 20) == 0) {
      times[g_slot[h] - 1] = now_us();
      return;
    }
}

static void on_event(int ret, const char *msg, size_t len, void *ud) {
  (void)len;
  stats_t *s = ud;
  if (ret != RET_OK || msg == NULL || strncmp(msg, "{\"eventType\":\"channel_message_", 30) != 0)
    return;
  const char *t = msg + 30;
  atomic_size_t *moved = &s->errors;
  if (strncmp(t, "received", 8) == 0) {
    moved = &s->received;
    size_t k = atomic_fetch_add(&s->received, 1);
    if (getenv("BENCH_TRACE") != NULL)
      fprintf(stderr, "rx %zu %llu\n", k, (unsigned long long)(now_us() / 1000));
  } else if (strncmp(t, "sent", 4) == 0) {
    moved = &s->sent;
    size_t sent = atomic_fetch_add(&s->sent, 1) + 1, acked = atomic_load(&s->delivered);
    if (sent > acked && sent - acked > atomic_load(&s->max_unacked))
      atomic_store(&s->max_unacked, sent - acked);
    mark(msg, g_sent_us);
  } else if (strncmp(t, "delivered", 9) == 0) {
    moved = &s->delivered;
    atomic_fetch_add(&s->delivered, 1);
    mark(msg, g_delivered_us);
  } else
    atomic_fetch_add(&s->errors, 1);
  atomic_store(&s->last_us, now_us());
  atomic_store(&s->tid, (long)syscall(SYS_gettid));
  progress(moved);
}

/* ---- threads: CPU, run-queue wait and switches of each thread over the burst ----------------- */

#define MAX_THREADS 64

typedef struct thread_stat {
  long tid;
  unsigned long long run_ns, wait_ns, vol, invol;
} thread_stat_t;

static size_t threads_read(thread_stat_t *out) {
  DIR *d = opendir("/proc/self/task");
  size_t n = 0;
  struct dirent *e;
  while (d != NULL && n < MAX_THREADS && (e = readdir(d)) != NULL) {
    if (e->d_name[0] == '.')
      continue;
    thread_stat_t *t = &out[n];
    memset(t, 0, sizeof *t);
    t->tid = atol(e->d_name);
    char path[96], line[256];
    snprintf(path, sizeof path, "/proc/self/task/%ld/schedstat", t->tid);
    FILE *f = fopen(path, "r");
    if (f == NULL || fscanf(f, "%llu %llu", &t->run_ns, &t->wait_ns) != 2) {
      if (f != NULL)
        fclose(f);
      continue;
    }
    fclose(f);
    snprintf(path, sizeof path, "/proc/self/task/%ld/status", t->tid);
    if ((f = fopen(path, "r")) != NULL) {
      while (fgets(line, sizeof line, f) != NULL)
        if (sscanf(line, "voluntary_ctxt_switches: %llu", &t->vol) != 1)
          sscanf(line, "nonvoluntary_ctxt_switches: %llu", &t->invol);
      fclose(f);
    }
    n++;
  }
  if (d != NULL)
    closedir(d);
  return n;
}

static const char *thread_role(long tid) {
  if (tid == atomic_load(&g_a.tid))
    return "A loop";
  if (tid == atomic_load(&g_b.tid))
    return "B loop";
  if (tid == (long)getpid())
    return "bench main";
  return "other";
}

/* Prints each thread that ran over the interval; `before` as read at its start. */
static void threads_report(const thread_stat_t *before, size_t nb, uint64_t wall_us) {
  thread_stat_t after[MAX_THREADS];
  size_t na = threads_read(after);
  double wall = wall_us / 1e3, total_run = 0;
  printf("  threads over %.0f ms (run = on a CPU, wait = runnable, off = blocked):\n", wall);
  for (size_t i = 0; i < na; i++) {
    thread_stat_t z = {0};
    const thread_stat_t *b = &z;
    for (size_t j = 0; j < nb; j++)
      if (before[j].tid == after[i].tid)
        b = &before[j];
    double run = (after[i].run_ns - b->run_ns) / 1e6, wait = (after[i].wait_ns - b->wait_ns) / 1e6;
    total_run += run;
    if (run < 1.0)
      continue;
    printf("    %-10s %6ld  run %7.1f ms  wait %6.1f ms  off %7.1f ms  switches %llu vol, %llu "
           "invol\n",
           thread_role(after[i].tid), after[i].tid, run, wait, wall - run - wait,
           after[i].vol - b->vol, after[i].invol - b->invol);
  }
  printf("    all threads: %.1f ms of CPU, %.2f cores busy\n", total_run, total_run / wall);
}

/* ---- contexts ------------------------------------------------------------------------------- */

static void *start(const char *dir, const char *peer, stats_t *s, char *addr, size_t cap) {
  char config[2048];
  snprintf(config, sizeof config,
           "{\"listenAddress\":\"127.0.0.1\",\"tcpPort\":0,\"discv5UdpPort\":0,\"clusterId\":66,"
           "\"numShardsInNetwork\":1,\"logLevel\":\"%s\",\"localStoragePath\":\"%s\"%s%s%s}",
           getenv("BENCH_LOG") != NULL ? getenv("BENCH_LOG") : "ERROR", dir,
           peer != NULL ? ",\"staticnodes\":[\"" : "", peer != NULL ? peer : "",
           peer != NULL ? "\"]" : "");
  reply_t r;
  reply_init(&r);
  void *ctx = logosdelivery_create_node(config, on_reply, &r);
  if (ctx == NULL || reply_wait(&r, NULL, 0) != RET_OK)
    exit(1);
  logosdelivery_set_event_callback(ctx, on_event, s);
  reply_init(&r);
  logosdelivery_start_node(ctx, on_reply, &r);
  if (reply_wait(&r, NULL, 0) != RET_OK)
    exit(1);
  if (addr != NULL) {
    reply_init(&r);
    logosdelivery_get_node_info(ctx, on_reply, &r, "MyMultiaddresses");
    reply_wait(&r, addr, cap);
    char *comma = strchr(addr, ',');
    if (comma != NULL)
      *comma = '\0';
  }
  return ctx;
}

static void finish(void *ctx) {
  reply_t r;
  reply_init(&r);
  logosdelivery_stop_node(ctx, on_reply, &r);
  reply_wait(&r, NULL, 0);
  reply_init(&r);
  logosdelivery_destroy(ctx, on_reply, &r);
}

static uint64_t g_create_cpu_us; /* process CPU time of the last create_channel */

static uint64_t cpu_us(void) {
  return bench_clock_us(CLOCK_PROCESS_CPUTIME_ID);
}

static uint64_t create_channel(void *ctx, const char *sender) {
  reply_t r;
  reply_init(&r);
  uint64_t t0 = now_us(), c0 = cpu_us();
  logosdelivery_channel_create(ctx, on_reply, &r, "bench", TOPIC, sender);
  if (reply_wait(&r, NULL, 0) != RET_OK)
    exit(1);
  g_create_cpu_us = cpu_us() - c0;
  return now_us() - t0;
}

static void send_one(void *ctx, const char *json, char *id) {
  reply_t r;
  reply_init(&r);
  logosdelivery_channel_send(ctx, on_reply, &r, "bench", json);
  if (reply_wait(&r, id, 24) != RET_OK)
    exit(1);
}

/* Pipelined sends: up to g_window calls in flight; each reply records its request ID. */
static size_t g_window = 256;
static atomic_size_t g_answered, g_refused;
static char g_refusal[256];

static void on_send_reply(int ret, const char *msg, size_t len, void *ud) {
  size_t i = (size_t)(uintptr_t)ud;
  if (ret == RET_OK && msg != NULL && len < sizeof g_ids[i]) {
    memcpy(g_ids[i], msg, len);
    g_ids[i][len] = '\0';
    if (len >= 16)
      id_index(i);
    atomic_fetch_add(&g_issued, 1);
  } else if (atomic_fetch_add(&g_refused, 1) == 0) {
    snprintf(g_refusal, sizeof g_refusal, "%.*s", (int)len, msg != NULL ? msg : "");
  }
  atomic_fetch_add(&g_answered, 1);
  progress(&g_answered);
}

static size_t g_rate; /* sends per second; 0 = as fast as the window allows */

static void sleep_until_us(uint64_t due) {
  struct timespec ts = {.tv_sec = (time_t)(due / 1000000u),
                        .tv_nsec = (long)(due % 1000000u) * 1000};
  while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) != 0) {
  }
}

static void wait_counter(atomic_size_t *counter, size_t want, uint64_t deadline_us) {
  pthread_mutex_lock(&g_progress_mu);
  atomic_store(&g_wait_want, want);
  atomic_store(&g_wait_on, counter);
  uint64_t now;
  while (atomic_load(counter) < want && (now = now_us()) < deadline_us) {
    struct timespec ts; /* g_progress waits on the realtime clock: at most 100 ms at a time */
    clock_gettime(CLOCK_REALTIME, &ts);
    uint64_t left = deadline_us - now < 100000u ? deadline_us - now : 100000u;
    uint64_t ns = (uint64_t)ts.tv_nsec + left * 1000u;
    ts.tv_sec += (time_t)(ns / 1000000000u);
    ts.tv_nsec = (long)(ns % 1000000000u);
    pthread_cond_timedwait(&g_progress, &g_progress_mu, &ts);
  }
  atomic_store(&g_wait_on, NULL);
  pthread_mutex_unlock(&g_progress_mu);
}

static void send_all(void *ctx, const char *json) {
  uint64_t start = now_us();
  for (size_t i = 0; i < g_messages; i++) {
    if (g_rate > 0)
      sleep_until_us(start + (uint64_t)i * 1000000u / g_rate);
    if (i >= g_window && i - atomic_load(&g_answered) >= g_window) /* then a quarter at once */
      wait_counter(&g_answered, i - g_window + 1 + g_window / 4, UINT64_MAX);
    g_send_us[i] = now_us();
    if (logosdelivery_channel_send(ctx, on_send_reply, (void *)(uintptr_t)i, "bench", json) !=
        RET_OK)
      exit(1);
  }
  wait_counter(&g_answered, g_messages, UINT64_MAX);
}

static void wait_for(atomic_size_t *counter, size_t want, int seconds) {
  wait_counter(counter, want, now_us() + (uint64_t)seconds * 1000000u);
}

static void percentiles(const char *what, const uint64_t *end) {
  uint64_t *d = calloc(g_messages, sizeof *d);
  size_t n = 0;
  for (size_t i = 0; i < g_messages; i++)
    if (end[i] > 0)
      d[n++] = end[i] - g_send_us[i];
  bench_sort_u64(d, n);
  if (n > 0)
    printf("  send -> %-9s p50 %.1f ms, p90 %.1f ms, max %.1f ms (%zu of %zu)\n", what,
           bench_pct_u64(d, n, 50) / 1000.0, bench_pct_u64(d, n, 90) / 1000.0, d[n - 1] / 1000.0, n,
           g_messages);
  free(d);
}

int main(int argc, char **argv) {
  for (int i = 1; i + 1 < argc; i += 2) {
    if (strcmp(argv[i], "--messages") == 0)
      g_messages = (size_t)atol(argv[i + 1]);
    else if (strcmp(argv[i], "--size") == 0)
      g_size = (size_t)atol(argv[i + 1]);
    else if (strcmp(argv[i], "--window") == 0)
      g_window = (size_t)atol(argv[i + 1]);
    else if (strcmp(argv[i], "--rate") == 0)
      g_rate = (size_t)atol(argv[i + 1]);
    else if (strcmp(argv[i], "--max-outgoing") == 0) /* the engine's outgoing buffer (1,000) */
      ld_channels_set_test_limits((size_t)atol(argv[i + 1]), 0);
  }
  setvbuf(stdout, NULL, _IOLBF, 0);
  if (g_messages == 0 || g_messages > MAX_MESSAGES || g_size == 0 || g_size > 65536)
    return 2;
  char dir[] = "/tmp/ld_bench_channels_XXXXXX";
  if (mkdtemp(dir) == NULL)
    return 1;
  char dir_a[128], dir_b[128], addr[512];
  snprintf(dir_a, sizeof dir_a, "%s/a", dir);
  snprintf(dir_b, sizeof dir_b, "%s/b", dir);
  void *a = start(dir_a, NULL, &g_a, addr, sizeof addr);
  void *b = start(dir_b, addr, &g_b, NULL, 0);
  create_channel(a, "alice");
  create_channel(b, "bob");

  /* warm-up: the mesh is formed once a message is acknowledged */
  char id[24];
  send_one(a, "{\"payload\":\"d2FybS11cA==\"}", id);
  wait_for(&g_a.delivered, 1, 120);
  size_t base_received = atomic_load(&g_b.received), base_delivered = atomic_load(&g_a.delivered);

  size_t b64_len = (g_size + 2) / 3 * 4;
  char *json = malloc(b64_len + 32);
  strcpy(json, "{\"payload\":\"");
  memset(json + 12, 'A', b64_len);
  strcpy(json + 12 + b64_len, "\"}");
  atomic_store(&g_issued, 0);
  atomic_store(&g_a.max_unacked, 0);
  thread_stat_t threads0[MAX_THREADS];
  size_t nthreads0 = threads_read(threads0);
  uint64_t t0 = now_us();
  send_all(a, json);
  uint64_t t_sent = now_us();
  wait_for(&g_b.received, base_received + g_messages, 300);
  wait_for(&g_a.delivered, base_delivered + g_messages, 300);
  uint64_t t_rx = atomic_load(&g_b.last_us), t_ack = atomic_load(&g_a.last_us);
  uint64_t t_end = now_us();
  size_t rx = atomic_load(&g_b.received) - base_received;
  size_t acked = atomic_load(&g_a.delivered) - base_delivered;
  printf("throughput, %zu messages of %zu bytes, A -> B%s:\n", g_messages, g_size,
         g_rate > 0 ? " (paced)" : "");
  if (g_rate > 0)
    printf("  paced at %zu sends/s\n", g_rate);
  printf("  channel_send calls: %.0f /s (%zu in flight at most), %zu refused%s%s\n",
         g_messages / ((t_sent - t0) / 1e6), g_window, atomic_load(&g_refused),
         g_refusal[0] != '\0' ? ": " : "", g_refusal);
  printf("  received by B: %zu, %.0f msg/s (first send to last receipt)\n", rx,
         rx / ((t_rx - t0) / 1e6));
  printf("  acknowledged at A: %zu, %.0f msg/s (first send to last delivered event)\n", acked,
         acked / ((t_ack - t0) / 1e6));
  percentiles("sent", g_sent_us);
  percentiles("delivered", g_delivered_us);
  printf("  errors: %zu at A, %zu at B; channel_message_sent events at A: %zu (warm-up included)\n",
         atomic_load(&g_a.errors), atomic_load(&g_b.errors), atomic_load(&g_a.sent));
  printf("  sent but not yet acknowledged at A: at most %zu\n", atomic_load(&g_a.max_unacked));
  threads_report(threads0, nthreads0, t_end - t0);

  /* restart B on its state directory */
  finish(b);
  long rss0 = bench_rss_kib();
  b = start(dir_b, addr, &g_b, NULL, 0);
  long rss1 = bench_rss_kib();
  uint64_t restore_us = create_channel(b, "bob");
  long rss2 = bench_rss_kib();
  printf("restart: channel_create restoring %zu logged messages took %.1f ms (%.1f ms of process "
         "CPU); RSS +%ld KiB for the channel (context itself +%ld KiB)\n",
         rx + 1, restore_us / 1000.0, g_create_cpu_us / 1000.0, rss2 - rss1, rss1 - rss0);
  finish(b);
  finish(a);
  free(json);
  char cmd[128];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
  return system(cmd) == 0 ? 0 : 1;
}
