/* A slow or dead PostgreSQL never stalls the loop: requests fail with LD_ERR_DB or
 * LD_ERR_TIMEOUT within their deadline while a 10 ms timer keeps ticking.
 *
 * Without a server: a port where nothing listens (refused at once) and a TCP listener that never
 * answers (the connection attempt times out). With the server of LD_TEST_PG_URL (same skip rules
 * as test_archive): a proxy in front of it that can swallow traffic (the server hangs) or cut
 * every connection (the server died), then recovers; the archive reconnects. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <arpa/inet.h>
#include <libpq-fe.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdatomic.h>
#include <sys/socket.h>
#include <unistd.h>
#include <uv.h>

#include "base/clock.h"
#include "base/error.h"
#include "waku/archive/archive.h"

#define TIMEOUT_MS 1000
/* How late past its deadline a failure may come on a loaded machine. */
#define SLACK_MS 2500
#define TICK_MS 10
#define PUBSUB "/waku/2/rs/1/0"
#define CT "/app/1/fault/proto"

static uv_loop_t g_loop;
static uv_timer_t g_ticker;
static uint64_t g_ticks;
static ld_archive_t *g_a;
static char g_schema[64];

static void on_tick(uv_timer_t *t) {
  (void)t;
  g_ticks++;
}

static void run_until(const bool *flag, uint64_t max_ms) {
  uint64_t end = ld_now_ms() + max_ms;
  while (!*flag && ld_now_ms() < end)
    uv_run(&g_loop, UV_RUN_ONCE);
  assert_true(*flag);
}

static int setup(void **state) {
  (void)state;
  uv_loop_init(&g_loop);
  uv_timer_init(&g_loop, &g_ticker);
  uv_timer_start(&g_ticker, on_tick, TICK_MS, TICK_MS);
  g_ticks = 0;
  return 0;
}

static void closed(void *ud) {
  *(bool *)ud = true;
}

static int teardown(void **state) {
  (void)state;
  if (g_a != NULL) {
    bool done = false;
    ld_archive_close(g_a, closed, &done);
    run_until(&done, 30000);
    g_a = NULL;
  }
  uv_close((uv_handle_t *)&g_ticker, NULL);
  uv_run(&g_loop, UV_RUN_DEFAULT);
  assert_int_equal(uv_loop_close(&g_loop), 0);
  return 0;
}

/* The loop kept running timers for the last `ms` milliseconds. */
static void assert_loop_alive(uint64_t ticks_before, uint64_t ms) {
  uint64_t ticks = g_ticks - ticks_before;
  if (ticks < ms / TICK_MS / 4)
    fail_msg("only %llu ticks of %d ms in %llu ms", (unsigned long long)ticks, TICK_MS,
             (unsigned long long)ms);
}

typedef struct opening {
  bool done;
  int err;
  char why[160];
} opening_t;

static void opened(ld_archive_t *a, int err, const char *why, void *ud) {
  opening_t *o = ud;
  o->done = true;
  o->err = err;
  snprintf(o->why, sizeof o->why, "%s", why);
  g_a = a;
}

static int open_url_with(const char *url, uint32_t max_db_connections, opening_t *o) {
  ld_archive_config_t cfg;
  ld_archive_config_default(&cfg);
  cfg.url = url;
  cfg.request_timeout_ms = TIMEOUT_MS;
  cfg.max_db_connections = max_db_connections;
  memset(o, 0, sizeof *o);
  int rc = ld_archive_open(&g_loop, &cfg, opened, o);
  if (rc == 0)
    run_until(&o->done, TIMEOUT_MS + 60000);
  return rc;
}

static int open_url(const char *url, opening_t *o) {
  return open_url_with(url, 4, o);
}

/* ---- without a server ----------------------------------------------------------------------- */

static int listener(int *port) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  struct sockaddr_in sa = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
  socklen_t len = sizeof sa;
  assert_int_equal(bind(fd, (struct sockaddr *)&sa, sizeof sa), 0);
  assert_int_equal(listen(fd, 16), 0);
  assert_int_equal(getsockname(fd, (struct sockaddr *)&sa, &len), 0);
  *port = ntohs(sa.sin_port);
  return fd;
}

static void nothing_listens(void **state) {
  (void)state;
  int port;
  close(listener(&port)); /* a port that was just free */
  char url[128];
  snprintf(url, sizeof url, "postgres://u:p@127.0.0.1:%d/db", port);
  uint64_t t0 = ld_now_ms();
  opening_t o;
  assert_int_equal(open_url(url, &o), 0);
  uint64_t took = ld_now_ms() - t0;
  assert_int_equal(o.err, LD_ERR_DB);
  assert_null(g_a);
  assert_true(took < TIMEOUT_MS + SLACK_MS);
  print_message("refused: %s after %llu ms\n", o.why, (unsigned long long)took);
}

static void listener_never_answers(void **state) {
  (void)state;
  int port, fd = listener(&port); /* accepts in the kernel, never speaks */
  char url[128];
  snprintf(url, sizeof url, "postgres://u:p@127.0.0.1:%d/db", port);
  uint64_t t0 = ld_now_ms(), ticks = g_ticks;
  opening_t o;
  assert_int_equal(open_url(url, &o), 0);
  uint64_t took = ld_now_ms() - t0;
  close(fd);
  assert_int_equal(o.err, LD_ERR_TIMEOUT);
  assert_null(g_a);
  assert_true(took >= TIMEOUT_MS - 50 && took < TIMEOUT_MS + SLACK_MS);
  assert_loop_alive(ticks, took);
  print_message("silent: %s after %llu ms, %llu ticks\n", o.why, (unsigned long long)took,
                (unsigned long long)(g_ticks - ticks));
}

/* ---- a proxy in front of the real server ---------------------------------------------------- */

enum { P_PASS = 0, P_SWALLOW, P_CUT };
#define MAX_PAIRS 64

typedef struct proxy {
  int lfd, port, upstream_port;
  atomic_int mode;
  atomic_bool stop;
  uv_thread_t thread;
  int client[MAX_PAIRS], server[MAX_PAIRS];
  bool talked[MAX_PAIRS]; /* while swallowing: the client sent something */
  int n;
  atomic_int n_talked; /* connections that sent something since swallowing began */
} proxy_t;

static proxy_t g_proxy;

static int connect_upstream(int port) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  struct sockaddr_in sa = {.sin_family = AF_INET,
                           .sin_port = htons((uint16_t)port),
                           .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
  if (connect(fd, (struct sockaddr *)&sa, sizeof sa) != 0) {
    close(fd);
    return -1;
  }
  return fd;
}

static void drop_pair(proxy_t *p, int i) {
  close(p->client[i]);
  close(p->server[i]);
  p->n--;
  p->client[i] = p->client[p->n];
  p->server[i] = p->server[p->n];
  p->talked[i] = p->talked[p->n];
}

static void accept_one(proxy_t *p) {
  int c = accept(p->lfd, NULL, NULL);
  if (c < 0)
    return;
  int s =
      atomic_load(&p->mode) == P_CUT || p->n == MAX_PAIRS ? -1 : connect_upstream(p->upstream_port);
  if (s < 0) {
    close(c); /* a dead server: the connection ends at once */
    return;
  }
  p->client[p->n] = c;
  p->server[p->n] = s;
  p->talked[p->n] = false;
  p->n++;
}

/* Moves what is readable on one side to the other; false when the pair is finished. */
static bool forward(int from, int to) {
  char buf[16384];
  ssize_t n = read(from, buf, sizeof buf);
  if (n <= 0)
    return false;
  for (ssize_t off = 0; off < n;) {
    ssize_t w = write(to, buf + off, (size_t)(n - off));
    if (w <= 0)
      return false;
    off += w;
  }
  return true;
}

/* While swallowing, marks the connections whose client has sent something (left unread). */
static void note_talkers(proxy_t *p, const struct pollfd *fds) {
  for (int i = 0; i < p->n; i++) {
    if (!p->talked[i] && fds[1 + 2 * i].revents != 0) {
      p->talked[i] = true;
      atomic_fetch_add(&p->n_talked, 1);
    }
  }
}

static void proxy_main(void *arg) {
  proxy_t *p = arg;
  while (!atomic_load(&p->stop)) {
    int mode = atomic_load(&p->mode);
    while (mode == P_CUT && p->n > 0)
      drop_pair(p, 0);
    if (mode != P_SWALLOW && atomic_load(&p->n_talked) > 0) {
      memset(p->talked, 0, sizeof p->talked);
      atomic_store(&p->n_talked, 0);
    }
    struct pollfd fds[1 + 2 * MAX_PAIRS] = {{.fd = p->lfd, .events = POLLIN}};
    int nfds = 1;
    for (int i = 0; mode != P_CUT && i < p->n; i++) { /* a negative fd is not polled */
      bool pass = mode == P_PASS;
      fds[nfds++] =
          (struct pollfd){.fd = pass || !p->talked[i] ? p->client[i] : -1, .events = POLLIN};
      fds[nfds++] = (struct pollfd){.fd = pass ? p->server[i] : -1, .events = POLLIN};
    }
    if (poll(fds, (nfds_t)nfds, 20) <= 0)
      continue;
    if (mode == P_SWALLOW)
      note_talkers(p, fds);
    if (fds[0].revents & POLLIN)
      accept_one(p);
    for (int i = p->n - 1; mode == P_PASS && i >= 0; i--) {
      bool ok = true;
      if (fds[1 + 2 * i].revents & (POLLIN | POLLHUP | POLLERR))
        ok = forward(p->client[i], p->server[i]);
      if (ok && fds[2 + 2 * i].revents & (POLLIN | POLLHUP | POLLERR))
        ok = forward(p->server[i], p->client[i]);
      if (!ok)
        drop_pair(p, i);
    }
  }
  while (p->n > 0)
    drop_pair(p, 0);
}

/* "postgres://user:password@127.0.0.1:<proxy>/db?options=-csearch_path%3D<schema>" */
static void proxy_url(char *out, size_t cap) {
  PQconninfoOption *opts = PQconninfoParse(getenv("LD_TEST_PG_URL"), NULL);
  assert_non_null(opts);
  const char *user = "", *pass = "", *db = "";
  for (PQconninfoOption *o = opts; o->keyword != NULL; o++) {
    if (o->val == NULL)
      continue;
    if (strcmp(o->keyword, "user") == 0)
      user = o->val;
    else if (strcmp(o->keyword, "password") == 0)
      pass = o->val;
    else if (strcmp(o->keyword, "dbname") == 0)
      db = o->val;
    else if (strcmp(o->keyword, "port") == 0)
      g_proxy.upstream_port = atoi(o->val);
  }
  snprintf(out, cap, "postgres://%s:%s@127.0.0.1:%d/%s?options=-csearch_path%%3D%s", user, pass,
           g_proxy.port, db, g_schema);
  PQconninfoFree(opts);
}

static void pg_admin(const char *sql) {
  PGconn *c = PQconnectdb(getenv("LD_TEST_PG_URL"));
  assert_int_equal(PQstatus(c), CONNECTION_OK);
  PGresult *r = PQexec(c, sql);
  assert_int_equal(PQresultStatus(r), PGRES_COMMAND_OK);
  PQclear(r);
  PQfinish(c);
}

static void schema_reset(bool create) {
  char sql[256];
  int n = snprintf(sql, sizeof sql,
                   "SET client_min_messages = warning; DROP SCHEMA IF EXISTS %s CASCADE", g_schema);
  if (create)
    snprintf(sql + n, sizeof sql - (size_t)n, "; CREATE SCHEMA %s", g_schema);
  pg_admin(sql);
}

/* ---- requests ------------------------------------------------------------------------------- */

typedef struct answer {
  bool done;
  int err;
  uint64_t at;
} answer_t;

static void answered(int err, const char *why, const ld_archive_result_t *res, void *ud) {
  (void)why;
  (void)res;
  answer_t *a = ud;
  a->done = true;
  a->err = err;
  a->at = ld_now_ms();
}

static void acked(int err, void *ud) {
  answer_t *a = ud;
  a->done = true;
  a->err = err;
  a->at = ld_now_ms();
}

/* Runs one query and returns its error; *took gets how long the answer took. */
static int query_once(uint64_t *took) {
  answer_t a = {0};
  ld_archive_query_t q = {.forward = true, .include_data = true};
  uint64_t t0 = ld_now_ms();
  assert_int_equal(ld_archive_query(g_a, &q, answered, &a), 0);
  run_until(&a.done, TIMEOUT_MS + 60000);
  *took = a.at - t0;
  return a.err;
}

static int insert_once(int i, uint64_t *took) {
  char payload[32];
  snprintf(payload, sizeof payload, "fault %d", i);
  ld_waku_message_t m;
  ld_waku_message_init(&m);
  m.payload = (const uint8_t *)payload;
  m.payload_len = strlen(payload);
  m.content_topic = CT;
  m.content_topic_len = strlen(CT);
  m.timestamp = (int64_t)ld_wall_ns();
  uint8_t hash[LD_WAKU_HASH_LEN];
  ld_waku_message_hash(PUBSUB, &m, hash);
  answer_t a = {0};
  uint64_t t0 = ld_now_ms();
  assert_int_equal(ld_archive_handle_message(g_a, PUBSUB, &m, hash, acked, &a),
                   LD_ARCHIVE_ACCEPTED);
  run_until(&a.done, TIMEOUT_MS + 60000);
  *took = a.at - t0;
  return a.err;
}

/* An archive on a fresh schema of the LD_TEST_PG_URL server, reached through the proxy (passing
 * traffic). Skips without a server. */
static void open_proxied(const char *schema_prefix, uint32_t max_db_connections) {
  if (getenv("LD_TEST_PG_URL") == NULL) {
    if (getenv("LD_REQUIRE_PG") != NULL)
      fail_msg("LD_REQUIRE_PG is set but LD_TEST_PG_URL is not");
    skip();
  }
  snprintf(g_schema, sizeof g_schema, "%s_%d", schema_prefix, (int)getpid());
  schema_reset(true);
  memset(&g_proxy, 0, sizeof g_proxy);
  g_proxy.lfd = listener(&g_proxy.port);
  char url[512];
  proxy_url(url, sizeof url);
  assert_int_equal(uv_thread_create(&g_proxy.thread, proxy_main, &g_proxy), 0);
  opening_t o;
  assert_int_equal(open_url_with(url, max_db_connections, &o), 0);
  assert_int_equal(o.err, 0);
}

static void close_proxied(void) {
  bool done = false;
  ld_archive_close(g_a, closed, &done);
  run_until(&done, 30000);
  g_a = NULL;
  atomic_store(&g_proxy.stop, true);
  uv_thread_join(&g_proxy.thread);
  close(g_proxy.lfd);
  schema_reset(false);
}

static void server_hangs_dies_and_comes_back(void **state) {
  (void)state;
  open_proxied("ld_pgfault", 4);
  uint64_t took;
  assert_int_equal(insert_once(0, &took), 0);
  assert_int_equal(query_once(&took), 0);

  /* the server stops answering */
  atomic_store(&g_proxy.mode, P_SWALLOW);
  uint64_t ticks = g_ticks;
  int err = query_once(&took);
  assert_int_equal(err, LD_ERR_TIMEOUT);
  assert_true(took >= TIMEOUT_MS - 50 && took < TIMEOUT_MS + SLACK_MS);
  assert_loop_alive(ticks, took);
  ticks = g_ticks;
  err = insert_once(1, &took);
  assert_int_equal(err, LD_ERR_TIMEOUT);
  assert_true(took < TIMEOUT_MS + SLACK_MS);
  assert_loop_alive(ticks, took);

  /* it answers again: new connections replace the stuck ones */
  atomic_store(&g_proxy.mode, P_PASS);
  uv_sleep(TIMEOUT_MS); /* let the workers give up their stuck statements */
  assert_int_equal(query_once(&took), 0);
  assert_int_equal(insert_once(2, &took), 0);

  /* the server dies: connections cut, new ones closed at once */
  atomic_store(&g_proxy.mode, P_CUT);
  uv_sleep(100);
  ticks = g_ticks;
  err = query_once(&took);
  assert_int_equal(err, LD_ERR_DB);
  assert_true(took < TIMEOUT_MS + SLACK_MS);
  err = insert_once(3, &took);
  assert_int_equal(err, LD_ERR_DB);
  ld_archive_stats_t st;
  ld_archive_stats(g_a, &st);
  assert_true(st.insert_errors == 2 && st.query_errors == 2);

  /* and comes back */
  atomic_store(&g_proxy.mode, P_PASS);
  assert_int_equal(query_once(&took), 0);
  assert_int_equal(insert_once(4, &took), 0);
  close_proxied();
}

/* A burst of queries against a server that stopped answering: the driver works on exactly
 * max_db_connections connections at once (a burst in one loop turn still gets them all), and
 * the queries time out. */
static void burst_uses_max_db_connections(void **state) {
  (void)state;
  open_proxied("ld_pgburst", 2);
  uint64_t took;
  assert_int_equal(query_once(&took), 0);

  atomic_store(&g_proxy.mode, P_SWALLOW);
  enum { BURST = 10 };
  answer_t a[BURST] = {0};
  ld_archive_query_t q = {.forward = true, .include_data = true};
  for (int i = 0; i < BURST; i++)
    assert_int_equal(ld_archive_query(g_a, &q, answered, &a[i]), 0);
  for (int i = 0; i < BURST; i++) {
    run_until(&a[i].done, TIMEOUT_MS + 60000);
    assert_int_equal(a[i].err, LD_ERR_TIMEOUT);
  }
  uv_sleep(100); /* the proxy notices the last connection's bytes */
  assert_int_equal(atomic_load(&g_proxy.n_talked), 2);

  atomic_store(&g_proxy.mode, P_PASS);
  uv_sleep(TIMEOUT_MS); /* let the threads give up their stuck statements */
  assert_int_equal(query_once(&took), 0);
  close_proxied();
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(nothing_listens, setup, teardown),
      cmocka_unit_test_setup_teardown(listener_never_answers, setup, teardown),
      cmocka_unit_test_setup_teardown(server_hangs_dies_and_comes_back, setup, teardown),
      cmocka_unit_test_setup_teardown(burst_uses_max_db_connections, setup, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
