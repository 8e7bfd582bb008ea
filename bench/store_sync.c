/* Store-sync between two store nodes: time and bytes for two archives to converge.
 *
 *   bench_store_sync [--messages N] [--common C] [--backend sqlite|postgres] [--runs R]
 *
 * Two nodes (relay, store, store-sync on two shards) run on one libuv loop in this process,
 * connected over loopback. Before they start, node A's archive gets half of N messages and node
 * B's the other half (alternating in pairs, both shards in each half), plus C messages both hold;
 * timestamps spread over the 49 minutes before now (inside nwaku's window). Then A starts one
 * session with B, and the clock runs until both archives hold N + C messages (every transferred
 * message committed, both item sets complete). Printed per run: the time from the session's start
 * to convergence (both nodes' work on one thread: an upper bound of what two machines take), the
 * reconciliation frames and bytes (bodies and length prefixes, both directions; no Noise or
 * yamux), the transfer messages and bytes (frame bodies, both directions) and the CPU time of the
 * process over the same span. postgres uses LD_TEST_PG_URL (two schemas, dropped afterwards).
 * Timings are printed, never asserted. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <uv.h>

#include <libpq-fe.h>

#include "base/clock.h"
#include "base/error.h"
#include "base/log.h"
#include "node/node.h"
#include "waku/archive/archive.h"
#include "waku/sync/service.h"

#define SEC 1000000000ll
static const char *const k_topics[2] = {"/waku/2/rs/0/0", "/waku/2/rs/0/1"};
#define CT "/ld/1/store-sync-bench/proto"

static uv_loop_t g_loop;

typedef struct msg {
  int topic;
  char payload[64];
  ld_waku_message_t m;
  uint8_t hash[LD_WAKU_HASH_LEN];
} msg_t;

static void die(const char *what, int rc) {
  fprintf(stderr, "%s: %s\n", what, ld_strerror(rc));
  exit(1);
}

static double cpu_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Runs the loop until *flag or `ms` passed. */
static void run_until(const bool *flag, uint64_t ms) {
  uint64_t end = ld_now_ms() + ms;
  while (!*flag && ld_now_ms() < end)
    uv_run(&g_loop, UV_RUN_ONCE);
  if (!*flag)
    die("waiting", LD_ERR_TIMEOUT);
}

static void make_messages(msg_t *v, int n, int64_t now) {
  for (int i = 0; i < n; i++) {
    msg_t *x = &v[i];
    x->topic = i % 2;
    snprintf(x->payload, sizeof x->payload, "store-sync bench message %d", i);
    ld_waku_message_init(&x->m);
    x->m.payload = (const uint8_t *)x->payload;
    x->m.payload_len = strlen(x->payload);
    x->m.content_topic = CT;
    x->m.content_topic_len = strlen(CT);
    x->m.timestamp = now - 3000 * SEC + (int64_t)i * (2940 * SEC / n);
    if (ld_waku_message_hash(k_topics[x->topic], &x->m, x->hash) != 0)
      die("hash", LD_ERR_INTERNAL);
  }
}

/* ---- archives -------------------------------------------------------------------------------- */

typedef struct fill {
  ld_archive_t *a;
  bool opened, closed;
  int acks;
} fill_t;

static void on_open(ld_archive_t *a, int err, const char *why, void *ud) {
  if (err != 0) {
    fprintf(stderr, "archive: %s\n", why);
    exit(1);
  }
  fill_t *f = ud;
  f->a = a;
  f->opened = true;
}

static void on_ack(int err, void *ud) {
  if (err != 0)
    die("insert", err);
  ((fill_t *)ud)->acks++;
}

static void on_closed(void *ud) {
  ((fill_t *)ud)->closed = true;
}

/* Writes the messages `take` selects into the archive at `url`. */
static void prefill(const char *url, const msg_t *v, int n, int half, int common) {
  ld_archive_config_t cfg;
  ld_archive_config_default(&cfg);
  cfg.url = url;
  fill_t f = {0};
  int rc = ld_archive_open(&g_loop, &cfg, on_open, &f);
  if (rc != 0)
    die("open", rc);
  run_until(&f.opened, 60000);
  int want = 0;
  for (int i = 0; i < n + common; i++) {
    if (i < n && (i / 2) % 2 != half)
      continue;
    while ((rc = ld_archive_insert(f.a, k_topics[v[i].topic], &v[i].m, v[i].hash, on_ack, &f)) ==
           LD_ERR_LIMIT)
      uv_run(&g_loop, UV_RUN_NOWAIT);
    if (rc != 0)
      die("insert", rc);
    want++;
  }
  while (f.acks < want)
    uv_run(&g_loop, UV_RUN_ONCE);
  ld_archive_close(f.a, on_closed, &f);
  run_until(&f.closed, 60000);
}

/* ---- nodes ----------------------------------------------------------------------------------- */

static ld_node_t *start_node(const char *url, const ld_node_t *peer) {
  ld_node_config_t cfg;
  char err[256];
  ld_node_config_default(&cfg);
  ld_node_config_set_listen(&cfg, "127.0.0.1", 0, 0, err, sizeof err);
  ld_node_config_add_shard(&cfg, "0", err, sizeof err);
  ld_node_config_add_shard(&cfg, "1", err, sizeof err);
  cfg.colocation_limit = 0;
  cfg.store = true;
  cfg.store_sync = true;
  cfg.store_sync_interval_s = 3600;
  ld_node_config_set_store_db_url(&cfg, url, err, sizeof err);
  if (peer != NULL) {
    ld_multiaddr_t addr;
    char text[LD_MULTIADDR_TEXT_MAX];
    ld_node_listen_addrs((ld_node_t *)peer, &addr, 1);
    ld_multiaddr_to_text(&addr, text, sizeof text);
    ld_node_config_add_static_node(&cfg, text, err, sizeof err);
  }
  if (ld_node_config_finalize(&cfg, err, sizeof err) != 0) {
    fprintf(stderr, "config: %s\n", err);
    exit(1);
  }
  int rc = 0;
  ld_node_t *n = ld_node_new(&g_loop, &cfg, &rc);
  if (n == NULL)
    die("node", rc);
  if ((rc = ld_node_start(n)) != 0)
    die("start", rc);
  return n;
}

static void on_stopped(void *ud) {
  *(bool *)ud = true;
}

static void stop_node(ld_node_t *n) {
  bool done = false;
  ld_node_stop(n, on_stopped, &done);
  run_until(&done, 60000);
}

static ld_store_sync_stats_t stats(ld_node_t *n) {
  ld_store_sync_stats_t st;
  ld_store_sync_get_stats(ld_node_store_sync(n), &st);
  return st;
}

typedef struct result {
  bool done;
  ld_store_sync_result_t r;
} result_t;

static void on_session(const ld_store_sync_result_t *r, void *ud) {
  result_t *x = ud;
  x->r = *r;
  x->done = true;
}

typedef struct counted {
  bool done;
  uint64_t n;
} counted_t;

static void on_count(int err, uint64_t n, void *ud) {
  counted_t *c = ud;
  c->n = err == 0 ? n : 0;
  c->done = true;
}

static uint64_t count(ld_node_t *n) {
  counted_t c = {0};
  if (ld_archive_count(ld_node_archive(n), on_count, &c) != 0)
    return 0;
  run_until(&c.done, 60000);
  return c.n;
}

/* ---- postgres -------------------------------------------------------------------------------- */

static void pg_exec(const char *sql) {
  PGconn *c = PQconnectdb(getenv("LD_TEST_PG_URL"));
  PGresult *r = PQexec(c, sql);
  if (PQresultStatus(r) != PGRES_COMMAND_OK) {
    fprintf(stderr, "%s: %s", sql, PQerrorMessage(c));
    exit(1);
  }
  PQclear(r);
  PQfinish(c);
}

static void pg_schema(const char *name, bool create, char *url, size_t cap) {
  char sql[256];
  snprintf(sql, sizeof sql,
           "SET client_min_messages = warning; DROP SCHEMA IF EXISTS %s CASCADE%s%s", name,
           create ? "; CREATE SCHEMA " : "", create ? name : "");
  pg_exec(sql);
  const char *base = getenv("LD_TEST_PG_URL");
  if (url != NULL)
    snprintf(url, cap, "%s%coptions=-csearch_path%%3D%s", base, strchr(base, '?') ? '&' : '?',
             name);
}

/* ---- one run --------------------------------------------------------------------------------- */

static void run_once(int n, int common, bool pg, int run) {
  char dir[64] = "/tmp/ld-bench-sync-XXXXXX", ua[512], ub[512], sa[64], sb[64];
  if (pg) {
    snprintf(sa, sizeof sa, "ld_bench_sync_%d_a", (int)getpid());
    snprintf(sb, sizeof sb, "ld_bench_sync_%d_b", (int)getpid());
    pg_schema(sa, true, ua, sizeof ua);
    pg_schema(sb, true, ub, sizeof ub);
  } else {
    if (mkdtemp(dir) == NULL)
      die("mkdtemp", LD_ERR_IO);
    snprintf(ua, sizeof ua, "sqlite://%s/a.db", dir);
    snprintf(ub, sizeof ub, "sqlite://%s/b.db", dir);
  }
  msg_t *v = calloc((size_t)(n + common), sizeof *v);
  make_messages(v, n + common, (int64_t)ld_wall_ns());
  prefill(ua, v, n, 0, common);
  prefill(ub, v, n, 1, common);
  ld_node_t *a = start_node(ua, NULL), *b = start_node(ub, a);
  while (!(stats(a).ready && stats(b).ready))
    uv_run(&g_loop, UV_RUN_ONCE);
  result_t res = {0};
  int rc;
  while ((rc = ld_store_sync_start_session(ld_node_store_sync(a), ld_node_peer_id(b), on_session,
                                           &res)) == LD_ERR_NOT_FOUND)
    uv_run(&g_loop, UV_RUN_ONCE);
  if (rc != 0)
    die("session", rc);
  uint64_t t0 = ld_now_ns();
  double c0 = cpu_s();
  uint64_t all = (uint64_t)(n + common);
  for (;;) {
    uv_run(&g_loop, UV_RUN_ONCE);
    ld_store_sync_stats_t x = stats(a), y = stats(b);
    if (res.done && x.cached == all && y.cached == all && x.ingested + y.ingested == (uint64_t)n &&
        count(a) == all && count(b) == all)
      break;
  }
  double secs = (double)(ld_now_ns() - t0) / 1e9, cpu = cpu_s() - c0;
  ld_store_sync_stats_t x = stats(a), y = stats(b);
  printf("run %d (%s, %d disjoint + %d common): %.3f s, CPU %.3f s; reconciliation %zu frames, "
         "%llu B; transfer %llu messages, %llu B; session %s, %zu + %zu differences\n",
         run, pg ? "postgres" : "sqlite", n, common, secs, cpu, res.r.frames_in + res.r.frames_out,
         (unsigned long long)(res.r.bytes_in + res.r.bytes_out),
         (unsigned long long)(x.transfer_out + y.transfer_out),
         (unsigned long long)(x.transfer_bytes_out + y.transfer_bytes_out),
         res.r.err == 0 ? "complete" : ld_errname(res.r.err), res.r.have, res.r.need);
  fflush(stdout);
  stop_node(b);
  stop_node(a);
  free(v);
  if (pg) {
    pg_schema(sa, false, NULL, 0);
    pg_schema(sb, false, NULL, 0);
  } else {
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    if (system(cmd) != 0)
      fprintf(stderr, "cannot remove %s\n", dir);
  }
}

int main(int argc, char **argv) {
  int n = 10000, common = 0, runs = 3;
  bool pg = false;
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--messages") == 0 && i + 1 < argc)
      n = atoi(argv[++i]);
    else if (strcmp(argv[i], "--common") == 0 && i + 1 < argc)
      common = atoi(argv[++i]);
    else if (strcmp(argv[i], "--runs") == 0 && i + 1 < argc)
      runs = atoi(argv[++i]);
    else if (strcmp(argv[i], "--backend") == 0 && i + 1 < argc)
      pg = strcmp(argv[++i], "postgres") == 0;
    else {
      fprintf(stderr,
              "usage: %s [--messages N] [--common C] [--backend sqlite|postgres] [--runs R]\n",
              argv[0]);
      return 2;
    }
  }
  if (pg && getenv("LD_TEST_PG_URL") == NULL) {
    fprintf(stderr, "postgres: set LD_TEST_PG_URL\n");
    return 2;
  }
  ld_log_set_level(LD_LOG_WARN);
  uv_loop_init(&g_loop);
  for (int r = 1; r <= runs; r++)
    run_once(n, common, pg, r);
  uv_run(&g_loop, UV_RUN_NOWAIT);
  return 0;
}
