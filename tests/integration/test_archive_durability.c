/* Crash durability of sqlite://: a child process ingests as fast as it can and writes the hash of
 * every message whose `done` reported 0 to a pipe; the parent SIGKILLs it mid-ingest, then checks
 * the database (PRAGMA integrity_check) and that every acknowledged hash is stored. Three rounds
 * on the same file, killed at different points. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sqlite3.h>
#include <sys/wait.h>
#include <unistd.h>
#include <uv.h>

#include "base/clock.h"
#include "base/error.h"
#include "waku/archive/archive.h"

#define PUBSUB "/waku/2/rs/1/0"
#define CT "/app/1/durable/proto"
#define ROUNDS 3
#define PER_TICK 400
#define MAX_ACKS 400000

static char g_dir[64], g_path[128], g_url[160];

/* ---- the child: ingest until killed --------------------------------------------------------- */

typedef struct child {
  uv_loop_t loop;
  uv_timer_t tick;
  ld_archive_t *a;
  int fd;
  uint64_t seq;
  int round;
} child_t;

typedef struct pending {
  child_t *c;
  uint8_t hash[LD_WAKU_HASH_LEN];
} pending_t;

static void child_acked(int err, void *ud) {
  pending_t *p = ud;
  if (err == 0 && write(p->c->fd, p->hash, LD_WAKU_HASH_LEN) != LD_WAKU_HASH_LEN)
    _exit(3);
  free(p);
}

static void child_tick(uv_timer_t *t) {
  child_t *c = t->data;
  for (int i = 0; i < PER_TICK; i++) {
    char payload[160];
    int n = snprintf(payload, sizeof payload, "round %d message %llu %0100d", c->round,
                     (unsigned long long)c->seq, 7);
    ld_waku_message_t m;
    ld_waku_message_init(&m);
    m.payload = (const uint8_t *)payload;
    m.payload_len = (size_t)n;
    m.content_topic = CT;
    m.content_topic_len = strlen(CT);
    m.timestamp = (int64_t)ld_wall_ns();
    pending_t *p = malloc(sizeof *p);
    p->c = c;
    ld_waku_message_hash(PUBSUB, &m, p->hash);
    int rc = ld_archive_handle_message(c->a, PUBSUB, &m, p->hash, child_acked, p);
    if (rc != LD_ARCHIVE_ACCEPTED) {
      free(p);
      break; /* backlog full: next tick */
    }
    c->seq++;
  }
}

static void child_opened(ld_archive_t *a, int err, const char *why, void *ud) {
  child_t *c = ud;
  if (err != 0) {
    fprintf(stderr, "child: open failed: %s\n", why);
    _exit(2);
  }
  c->a = a;
  uv_timer_start(&c->tick, child_tick, 0, 1);
}

static void run_child(int fd, int round) {
  static child_t c;
  c.fd = fd;
  c.round = round;
  uv_loop_init(&c.loop);
  uv_timer_init(&c.loop, &c.tick);
  c.tick.data = &c;
  ld_archive_config_t cfg;
  ld_archive_config_default(&cfg);
  cfg.url = g_url;
  if (ld_archive_open(&c.loop, &cfg, child_opened, &c) != 0)
    _exit(2);
  uv_run(&c.loop, UV_RUN_DEFAULT);
  _exit(4); /* never reached: killed */
}

/* ---- the parent ----------------------------------------------------------------------------- */

/* Reads acknowledged hashes until `until` of them arrived (or 60 s passed); returns the count. */
static size_t read_acks(int fd, uint8_t (*acks)[LD_WAKU_HASH_LEN], size_t have, size_t until) {
  static uint8_t partial[LD_WAKU_HASH_LEN];
  static size_t partial_len;
  uint64_t end = ld_now_ms() + 60000;
  while (have < until && ld_now_ms() < end) {
    struct pollfd p = {.fd = fd, .events = POLLIN};
    if (poll(&p, 1, 200) <= 0)
      continue;
    ssize_t n = read(fd, partial + partial_len, LD_WAKU_HASH_LEN - partial_len);
    if (n <= 0)
      break; /* EOF: the child is gone */
    partial_len += (size_t)n;
    if (partial_len == LD_WAKU_HASH_LEN) {
      if (have < MAX_ACKS)
        memcpy(acks[have++], partial, LD_WAKU_HASH_LEN);
      partial_len = 0;
    }
  }
  return have;
}

static void check_database(uint8_t (*acks)[LD_WAKU_HASH_LEN], size_t n) {
  sqlite3 *db;
  assert_int_equal(sqlite3_open(g_path, &db), SQLITE_OK);
  sqlite3_stmt *st;
  assert_int_equal(sqlite3_prepare_v2(db, "PRAGMA integrity_check", -1, &st, NULL), SQLITE_OK);
  assert_int_equal(sqlite3_step(st), SQLITE_ROW);
  assert_string_equal((const char *)sqlite3_column_text(st, 0), "ok");
  sqlite3_finalize(st);
  assert_int_equal(
      sqlite3_prepare_v2(db, "SELECT 1 FROM Message WHERE messageHash = ?", -1, &st, NULL),
      SQLITE_OK);
  size_t missing = 0;
  for (size_t i = 0; i < n; i++) {
    sqlite3_bind_blob(st, 1, acks[i], LD_WAKU_HASH_LEN, SQLITE_STATIC);
    missing += sqlite3_step(st) != SQLITE_ROW;
    sqlite3_reset(st);
  }
  sqlite3_finalize(st);
  sqlite3_close(db);
  assert_int_equal(missing, 0);
}

typedef struct counted {
  bool done;
  int err;
  uint64_t n;
} counted_t;

static void parent_opened(ld_archive_t *a, int err, const char *why, void *ud) {
  (void)why;
  assert_int_equal(err, 0);
  *(ld_archive_t **)ud = a;
}

static void counted(int err, uint64_t n, void *ud) {
  counted_t *c = ud;
  c->done = true;
  c->err = err;
  c->n = n;
}

static void closed(void *ud) {
  *(bool *)ud = true;
}

/* Reopens through the archive: recovery works and at least `n` messages are there. */
static void reopen_and_count(size_t n) {
  uv_loop_t loop;
  uv_loop_init(&loop);
  ld_archive_config_t cfg;
  ld_archive_config_default(&cfg);
  cfg.url = g_url;
  ld_archive_t *a = NULL;
  assert_int_equal(ld_archive_open(&loop, &cfg, parent_opened, &a), 0);
  while (a == NULL)
    uv_run(&loop, UV_RUN_ONCE);
  counted_t c = {0};
  assert_int_equal(ld_archive_count(a, counted, &c), 0);
  while (!c.done)
    uv_run(&loop, UV_RUN_ONCE);
  assert_int_equal(c.err, 0);
  assert_true(c.n >= n);
  bool done = false;
  ld_archive_close(a, closed, &done);
  while (!done)
    uv_run(&loop, UV_RUN_ONCE);
  uv_run(&loop, UV_RUN_DEFAULT);
  assert_int_equal(uv_loop_close(&loop), 0);
}

static void acknowledged_messages_survive_sigkill(void **state) {
  (void)state;
  uint8_t(*acks)[LD_WAKU_HASH_LEN] = calloc(MAX_ACKS, LD_WAKU_HASH_LEN);
  size_t total = 0;
  for (int round = 0; round < ROUNDS; round++) {
    int fds[2];
    assert_int_equal(pipe(fds), 0);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
      close(fds[0]);
      run_child(fds[1], round);
    }
    close(fds[1]);
    size_t before = total;
    total = read_acks(fds[0], acks, total, total + 3000 + (size_t)round * 7000);
    assert_true(total > before); /* the child did commit something */
    kill(pid, SIGKILL);
    int status;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
    total = read_acks(fds[0], acks, total, MAX_ACKS); /* what it wrote before dying */
    close(fds[0]);
    print_message("round %d: %zu messages acknowledged in all\n", round, total);
    check_database(acks, total);
    reopen_and_count(total);
  }
  free(acks);
}

int main(void) {
  snprintf(g_dir, sizeof g_dir, "/tmp/ld-durable-XXXXXX");
  if (mkdtemp(g_dir) == NULL)
    return 1;
  snprintf(g_path, sizeof g_path, "%s/archive.db", g_dir);
  snprintf(g_url, sizeof g_url, "sqlite://%s", g_path);
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(acknowledged_messages_survive_sigkill),
  };
  int failed = cmocka_run_group_tests(tests, NULL, NULL);
  char path[160];
  static const char *const suffix[] = {"", "-wal", "-shm"};
  for (size_t i = 0; i < 3; i++) {
    snprintf(path, sizeof path, "%s%s", g_path, suffix[i]);
    unlink(path);
  }
  rmdir(g_dir);
  return failed;
}
