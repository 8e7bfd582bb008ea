/* The archive over memory:// (bounded in-memory store) with a fake clock: ordering, eviction
 * beyond the capacity, cursors, deferred callbacks, close. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <uv.h>

#include "archive_harness.h"
#include "base/clock.h"
#include "base/error.h"
#include "waku/archive/archive.h"

#define PUBSUB "/waku/2/rs/1/0"
#define CT "/app/1/chat/proto"
#define T0 (1700000000ll * 1000000000ll)
#define SEC 1000000000ll

static uv_loop_t g_loop;
static int64_t g_now = T0;
static ld_archive_t *g_a;

static int64_t fake_now(void *data) {
  (void)data;
  return g_now;
}

static void run_until(const bool *flag) {
  uint64_t end = ld_now_ms() + 5000;
  while (!*flag && ld_now_ms() < end)
    uv_run(&g_loop, UV_RUN_NOWAIT);
  assert_true(*flag);
}

static void opened(ld_archive_t *a, int err, const char *why, void *ud) {
  (void)why;
  assert_int_equal(err, 0);
  g_a = a;
  *(bool *)ud = true;
}

static void open_memory(size_t capacity, const char *policy) {
  ld_archive_config_t cfg;
  ld_archive_config_default(&cfg);
  cfg.url = "memory://";
  cfg.memory_capacity = capacity;
  cfg.now_ns = fake_now;
  if (policy != NULL) {
    int n = ld_archive_policy_parse(policy, cfg.policies, LD_ARCHIVE_MAX_POLICIES, NULL, 0);
    assert_true(n > 0);
    cfg.n_policies = (size_t)n;
  }
  bool done = false;
  assert_int_equal(ld_archive_open(&g_loop, &cfg, opened, &done), 0);
  run_until(&done);
  assert_string_equal(ld_archive_driver_name(g_a), "memory");
}

static void closed(void *ud) {
  *(bool *)ud = true;
}

static void close_archive(void) {
  ah_close(g_a, run_until);
  g_a = NULL;
}

static int setup(void **state) {
  (void)state;
  g_now = T0;
  uv_loop_init(&g_loop);
  return 0;
}

static int teardown(void **state) {
  (void)state;
  if (g_a != NULL)
    close_archive();
  uv_run(&g_loop, UV_RUN_DEFAULT);
  assert_int_equal(uv_loop_close(&g_loop), 0);
  return 0;
}

/* ---- messages ------------------------------------------------------------------------------- */

typedef struct msg {
  char payload[32];
  ld_waku_message_t m;
  uint8_t hash[LD_WAKU_HASH_LEN];
} msg_t;

static void make_msg(msg_t *out, int i, int64_t ts) {
  memset(out, 0, sizeof *out);
  snprintf(out->payload, sizeof out->payload, "message %d", i);
  ld_waku_message_init(&out->m);
  out->m.payload = (const uint8_t *)out->payload;
  out->m.payload_len = strlen(out->payload);
  out->m.content_topic = CT;
  out->m.content_topic_len = strlen(CT);
  out->m.timestamp = ts;
  assert_int_equal(ld_waku_message_hash(PUBSUB, &out->m, out->hash), 0);
}

typedef struct ack {
  int calls, last_err;
} ack_t;

static void acked(int err, void *ud) {
  ack_t *a = ud;
  a->calls++;
  a->last_err = err;
}

static void store(msg_t *m, ack_t *ack) {
  assert_int_equal(ld_archive_insert(g_a, PUBSUB, &m->m, m->hash, acked, ack), LD_ARCHIVE_ACCEPTED);
}

static void wait_acks(ack_t *ack, int n) {
  uint64_t end = ld_now_ms() + 5000;
  while (ack->calls < n && ld_now_ms() < end)
    uv_run(&g_loop, UV_RUN_NOWAIT);
  assert_int_equal(ack->calls, n);
}

/* ---- queries -------------------------------------------------------------------------------- */

typedef struct answer {
  bool done;
  int err;
  size_t n;
  uint8_t hashes[LD_ARCHIVE_MAX_PAGE_SIZE][LD_WAKU_HASH_LEN];
  int64_t ts[LD_ARCHIVE_MAX_PAGE_SIZE];
  bool has_cursor;
  uint8_t cursor[LD_WAKU_HASH_LEN];
} answer_t;

static void answered(int err, const char *why, const ld_archive_result_t *res, void *ud) {
  answer_t *a = ud;
  assert_non_null(why);
  a->done = true;
  a->err = err;
  if (err != 0)
    return;
  a->n = res->n_rows;
  for (size_t i = 0; i < res->n_rows; i++) {
    memcpy(a->hashes[i], res->rows[i].hash, LD_WAKU_HASH_LEN);
    a->ts[i] = res->rows[i].msg.timestamp;
  }
  a->has_cursor = res->has_cursor;
  memcpy(a->cursor, res->cursor, LD_WAKU_HASH_LEN);
}

static void query(const ld_archive_query_t *q, answer_t *a) {
  memset(a, 0, sizeof *a);
  assert_int_equal(ld_archive_query(g_a, q, answered, a), 0);
  assert_false(a->done); /* never from inside the call */
  run_until(&a->done);
}

static uint64_t count(void) {
  return ah_count(g_a, run_until);
}

/* ---- tests ---------------------------------------------------------------------------------- */

static void keeps_order_whatever_the_arrival(void **state) {
  (void)state;
  open_memory(0, NULL);
  enum { N = 200 };
  static msg_t m[N];
  ack_t ack = {0};
  for (int i = 0; i < N; i++) /* arrival order scrambled, five messages per timestamp */
    make_msg(&m[i], i, T0 + ((i * 37) % N) / 5 * SEC);
  for (int i = 0; i < N; i++)
    store(&m[i], &ack);
  wait_acks(&ack, N);
  assert_int_equal(ack.last_err, 0);
  assert_true(count() == N);
  ld_archive_query_t q = {.forward = true, .limit = 100, .include_data = true};
  answer_t a;
  int64_t last_ts = INT64_MIN;
  uint8_t last_hash[LD_WAKU_HASH_LEN] = {0};
  size_t seen = 0;
  for (;;) {
    query(&q, &a);
    assert_int_equal(a.err, 0);
    for (size_t i = 0; i < a.n; i++) {
      assert_true(a.ts[i] > last_ts ||
                  (a.ts[i] == last_ts && memcmp(a.hashes[i], last_hash, LD_WAKU_HASH_LEN) > 0));
      last_ts = a.ts[i];
      memcpy(last_hash, a.hashes[i], LD_WAKU_HASH_LEN);
    }
    seen += a.n;
    if (!a.has_cursor)
      break;
    assert_memory_equal(a.cursor, a.hashes[a.n - 1], LD_WAKU_HASH_LEN);
    q.has_cursor = true;
    memcpy(q.cursor, a.cursor, LD_WAKU_HASH_LEN);
  }
  assert_int_equal(seen, N);
}

static void evicts_the_oldest_beyond_capacity(void **state) {
  (void)state;
  open_memory(5, NULL);
  msg_t m[8];
  ack_t ack = {0};
  for (int i = 0; i < 7; i++) {
    make_msg(&m[i], i, T0 + i * SEC);
    store(&m[i], &ack);
  }
  wait_acks(&ack, 7);
  assert_int_equal(ack.last_err, 0);
  assert_true(count() == 5);
  uint8_t hashes[7][LD_WAKU_HASH_LEN];
  for (int i = 0; i < 7; i++)
    memcpy(hashes[i], m[i].hash, LD_WAKU_HASH_LEN);
  ld_archive_query_t q = {
      .forward = true, .hashes = (const uint8_t(*)[LD_WAKU_HASH_LEN])hashes, .n_hashes = 7};
  answer_t a;
  query(&q, &a);
  assert_int_equal(a.n, 5);
  for (int i = 0; i < 5; i++)
    assert_memory_equal(a.hashes[i], m[i + 2].hash, LD_WAKU_HASH_LEN);
  /* full of newer messages: an older one is not kept */
  ack_t old = {0};
  make_msg(&m[7], 7, T0 - SEC);
  store(&m[7], &old);
  wait_acks(&old, 1);
  assert_int_equal(old.last_err, LD_ERR_LIMIT);
  ld_archive_stats_t st;
  ld_archive_stats(g_a, &st);
  assert_true(st.inserted == 7 && st.insert_errors == 1);
}

static void ingest_window_and_duplicates(void **state) {
  (void)state;
  open_memory(0, NULL);
  msg_t m[6];
  make_msg(&m[0], 0, g_now - LD_ARCHIVE_MAX_TS_VARIANCE_NS);
  make_msg(&m[1], 1, g_now + LD_ARCHIVE_MAX_TS_VARIANCE_NS);
  make_msg(&m[2], 2, g_now - LD_ARCHIVE_MAX_TS_VARIANCE_NS - 1);
  make_msg(&m[3], 3, g_now + LD_ARCHIVE_MAX_TS_VARIANCE_NS + 1);
  make_msg(&m[4], 4, 0);
  make_msg(&m[5], 5, g_now);
  m[5].m.ephemeral = true;
  ack_t ack = {0};
  assert_int_equal(ld_archive_handle_message(g_a, PUBSUB, &m[0].m, m[0].hash, acked, &ack),
                   LD_ARCHIVE_ACCEPTED);
  assert_int_equal(ld_archive_handle_message(g_a, PUBSUB, &m[1].m, m[1].hash, acked, &ack),
                   LD_ARCHIVE_ACCEPTED);
  assert_int_equal(ld_archive_handle_message(g_a, PUBSUB, &m[2].m, m[2].hash, acked, &ack),
                   LD_ARCHIVE_TOO_OLD);
  assert_int_equal(ld_archive_handle_message(g_a, PUBSUB, &m[3].m, m[3].hash, acked, &ack),
                   LD_ARCHIVE_FUTURE);
  assert_int_equal(ld_archive_handle_message(g_a, PUBSUB, &m[4].m, m[4].hash, acked, &ack),
                   LD_ARCHIVE_TOO_OLD);
  assert_int_equal(ld_archive_handle_message(g_a, PUBSUB, &m[5].m, m[5].hash, acked, &ack),
                   LD_ARCHIVE_EPHEMERAL);
  assert_int_equal(ld_archive_handle_message(g_a, PUBSUB, &m[0].m, m[0].hash, acked, &ack),
                   LD_ARCHIVE_ACCEPTED);
  assert_int_equal(ack.calls, 0); /* deferred */
  wait_acks(&ack, 3);
  assert_int_equal(ack.last_err, 0);
  ld_archive_stats_t st;
  ld_archive_stats(g_a, &st);
  assert_true(st.inserted == 2 && st.duplicates == 1 && st.rejected_too_old == 2 &&
              st.rejected_future == 1 && st.rejected_ephemeral == 1);
  assert_int_equal(ld_archive_handle_message(g_a, NULL, &m[0].m, m[0].hash, NULL, NULL),
                   LD_ERR_INVALID_ARG);
  assert_int_equal(ld_archive_handle_message(NULL, PUBSUB, &m[0].m, m[0].hash, NULL, NULL),
                   LD_ERR_INVALID_ARG);
}

static void backward_pages_with_time_filter(void **state) {
  (void)state;
  open_memory(0, NULL);
  enum { N = 50 };
  msg_t m[N];
  ack_t ack = {0};
  for (int i = 0; i < N; i++) {
    make_msg(&m[i], i, T0 + i * SEC);
    store(&m[i], &ack);
  }
  wait_acks(&ack, N);
  /* [10 s, 39 s] inclusive: 30 messages, backward in pages of 7 */
  ld_archive_query_t q = {.forward = false,
                          .limit = 7,
                          .include_data = true,
                          .has_time_start = true,
                          .time_start = T0 + 10 * SEC,
                          .has_time_end = true,
                          .time_end = T0 + 39 * SEC};
  answer_t a;
  int expect_hi = 39, pages = 0;
  for (;;) {
    query(&q, &a);
    assert_int_equal(a.err, 0);
    pages++;
    for (size_t i = 0; i < a.n; i++) /* ascending within the page */
      assert_true(a.ts[i] == T0 + (expect_hi - (int64_t)a.n + 1 + (int64_t)i) * SEC);
    expect_hi -= (int)a.n;
    if (!a.has_cursor)
      break;
    assert_memory_equal(a.cursor, a.hashes[0], LD_WAKU_HASH_LEN); /* oldest of the page */
    q.has_cursor = true;
    memcpy(q.cursor, a.cursor, LD_WAKU_HASH_LEN);
  }
  assert_int_equal(expect_hi, 9);
  assert_int_equal(pages, 5);
}

static void capacity_retention(void **state) {
  (void)state;
  open_memory(0, "capacity:100");
  enum { N = 130 };
  msg_t *m = calloc(N, sizeof *m);
  ack_t ack = {0};
  ack_t first = {0}; /* the run that follows opening, done before any insert */
  assert_int_equal(ld_archive_apply_retention(g_a, acked, &first), 0);
  wait_acks(&first, 1);
  for (int i = 0; i < N - 1; i++) {
    make_msg(&m[i], i, T0 + i * SEC);
    store(&m[i], &ack);
  }
  wait_acks(&ack, N - 1);
  ack_t ret = {0};
  assert_int_equal(ld_archive_apply_retention(g_a, acked, &ret), 0);
  wait_acks(&ret, 1);
  assert_int_equal(ret.last_err, 0);
  assert_true(count() == N - 1); /* 129 < 130: nothing to do */
  make_msg(&m[N - 1], N - 1, T0 + (N - 1) * SEC);
  store(&m[N - 1], &ack);
  wait_acks(&ack, N);
  assert_int_equal(ld_archive_apply_retention(g_a, acked, &ret), 0);
  wait_acks(&ret, 2);
  assert_true(count() == 115); /* n + 0.15 n */
  ld_archive_query_t q = {.forward = true, .limit = 1};
  answer_t a;
  query(&q, &a);
  assert_memory_equal(a.hashes[0], m[15].hash, LD_WAKU_HASH_LEN);
  ld_archive_stats_t st;
  ld_archive_stats(g_a, &st);
  assert_true(st.retention_deleted == 15);
  free(m);
}

static void close_commits_what_was_accepted(void **state) {
  (void)state;
  open_memory(0, NULL);
  msg_t m[20];
  ack_t ack = {0};
  for (int i = 0; i < 20; i++) {
    make_msg(&m[i], i, T0 + i);
    store(&m[i], &ack);
  }
  bool done = false;
  ld_archive_close(g_a, closed, &done);
  ld_archive_t *a = g_a;
  g_a = NULL;
  assert_int_equal(ld_archive_insert(a, PUBSUB, &m[0].m, m[0].hash, acked, &ack), LD_ERR_CLOSED);
  ld_archive_query_t q = {.forward = true};
  assert_int_equal(ld_archive_query(a, &q, answered, NULL), LD_ERR_CLOSED);
  assert_int_equal(ld_archive_apply_retention(a, NULL, NULL), LD_ERR_CLOSED);
  run_until(&done);
  assert_int_equal(ack.calls, 20);
  assert_int_equal(ack.last_err, 0);
}

static void retention_without_policies_reports_later(void **state) {
  (void)state;
  open_memory(0, NULL);
  ack_t ret = {0};
  assert_int_equal(ld_archive_apply_retention(g_a, acked, &ret), 0);
  assert_int_equal(ld_archive_apply_retention(g_a, acked, &ret), 0);
  assert_int_equal(ret.calls, 0);
  wait_acks(&ret, 2);
  assert_int_equal(ret.last_err, 0);
}

static void bad_urls_fail_at_once(void **state) {
  (void)state;
  ld_archive_config_t cfg;
  ld_archive_config_default(&cfg);
  static const char *const urls[] = {"",
                                     "mysql://x",
                                     "sqlite://",
                                     "memory:/",
                                     "postgres://h/db?nosuchoption=1",
                                     "postgresql://[::1/db"};
  for (size_t i = 0; i < sizeof urls / sizeof urls[0]; i++) {
    cfg.url = urls[i];
    assert_int_equal(ld_archive_open(&g_loop, &cfg, opened, NULL), LD_ERR_INVALID_ARG);
  }
  cfg.url = NULL;
  assert_int_equal(ld_archive_open(&g_loop, &cfg, opened, NULL), LD_ERR_INVALID_ARG);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(keeps_order_whatever_the_arrival, setup, teardown),
      cmocka_unit_test_setup_teardown(evicts_the_oldest_beyond_capacity, setup, teardown),
      cmocka_unit_test_setup_teardown(ingest_window_and_duplicates, setup, teardown),
      cmocka_unit_test_setup_teardown(backward_pages_with_time_filter, setup, teardown),
      cmocka_unit_test_setup_teardown(capacity_retention, setup, teardown),
      cmocka_unit_test_setup_teardown(close_commits_what_was_accepted, setup, teardown),
      cmocka_unit_test_setup_teardown(retention_without_policies_reports_later, setup, teardown),
      cmocka_unit_test_setup_teardown(bad_urls_fail_at_once, setup, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
