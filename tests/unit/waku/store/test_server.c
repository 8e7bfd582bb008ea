/* Store v3 server and client over two real switches on loopback, with an in-test backend that
 * implements the archive's query contract over a fixed set of messages (digest §6.2). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <uv.h>

#include "base/error.h"
#include "p2p/reqresp.h"
#include "p2p/switch.h"
#include "switch_harness.h"
#include "waku/store/client.h"
#include "waku/store/server.h"

#define N_MSGS 250
#define PUBSUB_A "/waku/2/rs/0/0"
#define PUBSUB_B "/waku/2/rs/0/1"
#define TS0 INT64_C(1700000000000000000)

/* ---- the messages ---------------------------------------------------------------------------- */

typedef struct stored {
  uint8_t hash[LD_WAKU_HASH_LEN];
  const char *pubsub;
  char topic[32];
  char payload[32];
  ld_waku_message_t msg;
} stored_t;

static stored_t g_msgs[N_MSGS]; /* ascending (timestamp, hash) */

static int key_cmp(const stored_t *a, const stored_t *b) {
  if (a->msg.timestamp != b->msg.timestamp)
    return a->msg.timestamp < b->msg.timestamp ? -1 : 1;
  return memcmp(a->hash, b->hash, LD_WAKU_HASH_LEN);
}

static int qsort_cmp(const void *a, const void *b) {
  return key_cmp(a, b);
}

/* Two messages per timestamp (ties broken by hash), two pubsub topics, three content topics. */
static void make_messages(void) {
  for (int i = 0; i < N_MSGS; i++) {
    stored_t *s = &g_msgs[i];
    memset(s, 0, sizeof *s);
    s->pubsub = i % 2 ? PUBSUB_B : PUBSUB_A;
    snprintf(s->topic, sizeof s->topic, "/app/1/c%d/proto", i % 3);
    snprintf(s->payload, sizeof s->payload, "message %d", i);
    ld_waku_message_init(&s->msg);
    s->msg.payload = (const uint8_t *)s->payload;
    s->msg.payload_len = strlen(s->payload);
    s->msg.content_topic = s->topic;
    s->msg.content_topic_len = strlen(s->topic);
    s->msg.timestamp = TS0 + (i / 2) * 1000;
    assert_int_equal(ld_waku_message_hash(s->pubsub, &s->msg, s->hash), 0);
  }
  qsort(g_msgs, N_MSGS, sizeof g_msgs[0], qsort_cmp);
  for (int i = 0; i < N_MSGS; i++) { /* re-point the views after the move */
    stored_t *s = &g_msgs[i];
    s->msg.payload = (const uint8_t *)s->payload;
    s->msg.content_topic = s->topic;
  }
}

/* ---- the in-test backend --------------------------------------------------------------------- */

typedef struct pending {
  struct pending *next;
  bool held;
  int err;
  const char *why;
  ld_archive_row_t rows[LD_ARCHIVE_MAX_PAGE_SIZE];
  ld_archive_result_t res;
  ld_archive_query_fn done;
  void *ud;
} pending_t;

typedef struct backend {
  uv_timer_t tick;
  pending_t *pending;
  int calls;
  int answered;
  /* behaviour */
  bool hold_all;           /* keep every query until released */
  const char *hold_pubsub; /* keep queries on this pubsub topic */
  int fail_err;            /* answer every query with this error */
  const char *fail_why;
  bool refuse; /* return an error from query() */
  /* the last query as received */
  ld_archive_query_t last;
  char last_pubsub[64];
  char last_topic0[64];
  uint8_t last_hash0[LD_WAKU_HASH_LEN];
} backend_t;

static backend_t g_be;

static bool matches(const ld_archive_query_t *q, const stored_t *s) {
  if (q->pubsub_topic != NULL && strcmp(q->pubsub_topic, s->pubsub) != 0)
    return false;
  bool topic_ok = q->n_content_topics == 0;
  for (size_t i = 0; i < q->n_content_topics; i++)
    topic_ok = topic_ok || strcmp(q->content_topics[i], s->topic) == 0;
  bool hash_ok = q->n_hashes == 0;
  for (size_t i = 0; i < q->n_hashes; i++)
    hash_ok = hash_ok || memcmp(q->hashes[i], s->hash, LD_WAKU_HASH_LEN) == 0;
  return topic_ok && hash_ok && (!q->has_time_start || s->msg.timestamp >= q->time_start) &&
         (!q->has_time_end || s->msg.timestamp <= q->time_end);
}

static int find_hash(const uint8_t *hash) {
  for (int i = 0; i < N_MSGS; i++)
    if (memcmp(g_msgs[i].hash, hash, LD_WAKU_HASH_LEN) == 0)
      return i;
  return -1;
}

static void put_row(const ld_archive_query_t *q, const stored_t *s, ld_archive_row_t *row) {
  memcpy(row->hash, s->hash, LD_WAKU_HASH_LEN);
  row->pubsub_topic = q->include_data ? s->pubsub : NULL;
  if (q->include_data)
    row->msg = s->msg;
  else
    ld_waku_message_init(&row->msg);
}

/* The archive's semantics: limit+1 rows in query direction after the cursor, ascending result. */
static void run_query(const ld_archive_query_t *q, pending_t *p) {
  int start = q->forward ? 0 : N_MSGS - 1, step = q->forward ? 1 : -1;
  if (q->has_cursor) {
    int c = find_hash(q->cursor);
    if (c < 0) {
      p->err = LD_ERR_NOT_FOUND;
      p->why = "cursor not found";
      return;
    }
    start = c + step;
  }
  uint32_t limit = q->limit, n = 0;
  const stored_t *picked[LD_ARCHIVE_MAX_PAGE_SIZE + 1];
  for (int i = start; i >= 0 && i < N_MSGS && n <= limit; i += step)
    if (matches(q, &g_msgs[i]))
      picked[n++] = &g_msgs[i];
  if (n > limit) {
    p->res.has_cursor = true;
    memcpy(p->res.cursor, picked[limit - 1]->hash, LD_WAKU_HASH_LEN);
    n = limit;
  }
  for (uint32_t i = 0; i < n; i++)
    put_row(q, picked[q->forward ? i : n - 1 - i], &p->rows[i]);
  p->res.rows = p->rows;
  p->res.n_rows = n;
}

static void record(const ld_archive_query_t *q) {
  g_be.last = *q;
  snprintf(g_be.last_pubsub, sizeof g_be.last_pubsub, "%s",
           q->pubsub_topic != NULL ? q->pubsub_topic : "(none)");
  snprintf(g_be.last_topic0, sizeof g_be.last_topic0, "%s",
           q->n_content_topics > 0 ? q->content_topics[0] : "(none)");
  if (q->n_hashes > 0)
    memcpy(g_be.last_hash0, q->hashes[0], LD_WAKU_HASH_LEN);
  g_be.last.pubsub_topic = NULL; /* the query's pointers die with the call */
  g_be.last.content_topics = NULL;
  g_be.last.hashes = NULL;
}

static int be_query(void *ctx, const ld_archive_query_t *q, ld_archive_query_fn done, void *ud) {
  backend_t *be = ctx;
  be->calls++;
  record(q);
  if (be->refuse)
    return LD_ERR_CLOSED;
  pending_t *p = calloc(1, sizeof *p);
  assert_non_null(p);
  p->done = done;
  p->ud = ud;
  p->held = be->hold_all || (be->hold_pubsub != NULL && q->pubsub_topic != NULL &&
                             strcmp(q->pubsub_topic, be->hold_pubsub) == 0);
  if (be->fail_err != 0) {
    p->err = be->fail_err;
    p->why = be->fail_why;
  } else if (q->has_time_start && q->has_time_end && q->time_start > q->time_end) {
    p->err = LD_ERR_INVALID_ARG; /* the archive refuses a reversed range (archive.h) */
    p->why = "time_start after time_end";
  } else {
    run_query(q, p);
  }
  p->next = be->pending;
  be->pending = p;
  return 0;
}

/* Answers every pending query that is not held (or all when `all`). */
static void be_answer(bool all) {
  pending_t **pp = &g_be.pending;
  while (*pp != NULL) {
    pending_t *p = *pp;
    if (p->held && !all) {
      pp = &p->next;
      continue;
    }
    *pp = p->next;
    g_be.answered++;
    p->done(p->err, p->err != 0 ? p->why : NULL, p->err != 0 ? NULL : &p->res, p->ud);
    free(p);
  }
}

static void be_tick(uv_timer_t *t) {
  (void)t;
  be_answer(false);
}

static size_t be_held(void) {
  size_t n = 0;
  for (pending_t *p = g_be.pending; p != NULL; p = p->next)
    n++;
  return n;
}

/* sh_run_until condition: at least *(size_t *)ud queries wait at the backend. */
static bool held_at_least(void *ud) {
  return be_held() >= *(const size_t *)ud;
}

static const size_t k_one = 1, k_two = 2;

/* ---- fixture --------------------------------------------------------------------------------- */

static uv_loop_t g_loop;
static ld_switch_t *g_a, *g_b; /* a serves, b asks */
static ld_store_server_t *g_srv;
static ld_conn_t *g_conn;
static ld_multiaddr_t g_addr;
static ld_store_server_config_t g_cfg;

static void start(const ld_store_server_config_t *cfg) {
  assert_int_equal(uv_loop_init(&g_loop), 0);
  memset(&g_be, 0, sizeof g_be);
  uv_timer_init(&g_loop, &g_be.tick);
  uv_timer_start(&g_be.tick, be_tick, 1, 1);
  g_a = sh_switch_new(&g_loop, NULL);
  g_b = sh_switch_new(&g_loop, NULL);
  ld_store_backend_t be = {.query = be_query, .ctx = &g_be};
  g_srv = ld_store_server_new(g_a, &be, cfg);
  assert_non_null(g_srv);
  sh_listen_local(g_a, &g_addr);
  int err = -1;
  g_conn = sh_dial_wait(g_b, &g_loop, &g_addr, &err);
  assert_int_equal(err, 0);
}

static int setup(void **state) {
  (void)state;
  ld_store_server_config_default(&g_cfg);
  start(&g_cfg);
  return 0;
}

static int teardown(void **state) {
  (void)state;
  if (g_b != NULL)
    sh_switch_close(g_b, &g_loop);
  if (g_a != NULL)
    sh_switch_close(g_a, &g_loop);
  g_a = g_b = NULL;
  be_answer(true);
  ld_store_server_free(g_srv);
  g_srv = NULL;
  uv_close((uv_handle_t *)&g_be.tick, NULL);
  sh_run_for(&g_loop, 20);
  assert_int_equal(uv_loop_close(&g_loop), 0);
  return 0;
}

/* ---- client helpers -------------------------------------------------------------------------- */

typedef struct answer {
  bool done;
  int err;
  ld_store_response_t res; /* moved out of the callback */
} answer_t;

static void on_answer(int err, ld_store_response_t *res, void *ud) {
  answer_t *a = ud;
  assert_false(a->done);
  a->done = true;
  a->err = err;
  a->res = *res;
  ld_store_response_init(res);
}

static bool answer_done(void *ud) {
  return ((answer_t *)ud)->done;
}

static void ask(const ld_store_query_t *q, answer_t *a) {
  memset(a, 0, sizeof *a);
  ld_store_target_t to = {.conn = g_conn};
  assert_int_equal(ld_store_client_query(g_b, &to, q, NULL, on_answer, a, NULL), 0);
}

static void ask_wait(const ld_store_query_t *q, answer_t *a) {
  ask(q, a);
  assert_true(sh_run_until(&g_loop, answer_done, a, 5000));
}

/* Sends raw request bytes (framing included) and decodes the answer. */
typedef struct raw {
  bool done;
  int err;
  ld_store_response_t res;
  size_t len;
} raw_t;

static void on_raw(const uint8_t *resp, size_t len, int err, void *ud) {
  raw_t *r = ud;
  r->done = true;
  r->err = err;
  r->len = len;
  if (err != 0 || len == 0)
    return;
  const uint8_t *body;
  size_t n;
  int rc = ld_reqresp_read_frame(resp, len, LD_STORE_MAX_RESPONSE_BYTES, &body, &n);
  if (rc < 0) {
    r->err = rc;
    return;
  }
  r->err = ld_store_decode_response(body, n, 0, &r->res);
}

static bool raw_done(void *ud) {
  return ((raw_t *)ud)->done;
}

static void send_raw(const uint8_t *req, size_t len, raw_t *r) {
  memset(r, 0, sizeof *r);
  ld_reqresp_opts_t o = {.max_bytes = 1 << 20, .timeout_ms = 3000};
  assert_int_equal(
      ld_reqresp_request(g_b, g_conn, LD_STORE_PROTOCOL, req, len, &o, on_raw, r, NULL), 0);
  assert_true(sh_run_until(&g_loop, raw_done, r, 5000));
}

/* Frames `body` and sends it. */
static void send_body(const uint8_t *body, size_t n, raw_t *r) {
  ld_buf_t b;
  ld_buf_init(&b);
  assert_int_equal(ld_buf_lp(&b, body, n), 0);
  send_raw(b.data, b.len, r);
  ld_buf_clear(&b);
}

static void assert_status(const ld_store_response_t *res, uint32_t code, const char *id,
                          const char *desc) {
  assert_int_equal(res->status_code, code);
  assert_string_equal(res->request_id, id);
  assert_string_equal(res->status_desc, desc);
  assert_int_equal(res->n_entries, 0);
  assert_false(res->has_cursor);
}

/* ---- answers --------------------------------------------------------------------------------- */

static const char *const k_topics[] = {"/app/1/c0/proto", "/app/1/c1/proto"};

static void query_fields_reach_the_backend(void **state) {
  (void)state;
  uint8_t hash[1][LD_WAKU_HASH_LEN];
  memcpy(hash[0], g_msgs[7].hash, LD_WAKU_HASH_LEN);
  ld_store_query_t q;
  ld_store_query_init(&q);
  q.request_id = "req-1";
  q.include_data = true;
  q.pubsub_topic = PUBSUB_A;
  q.content_topics = k_topics;
  q.n_content_topics = 2;
  q.has_time_start = true;
  q.time_start = TS0 + 5000;
  q.has_time_end = true;
  q.time_end = TS0 + 90000;
  q.hashes = (const uint8_t(*)[LD_WAKU_HASH_LEN])hash;
  q.n_hashes = 1;
  q.has_cursor = true;
  memcpy(q.cursor, g_msgs[3].hash, LD_WAKU_HASH_LEN);
  q.forward = false;
  q.has_limit = true;
  q.limit = 7;
  answer_t a;
  ask_wait(&q, &a);
  assert_int_equal(a.err, 0);
  assert_int_equal(a.res.status_code, 200);
  assert_string_equal(a.res.request_id, "req-1");
  assert_string_equal(a.res.status_desc, "OK");
  const ld_archive_query_t *got = &g_be.last;
  assert_string_equal(g_be.last_pubsub, PUBSUB_A);
  assert_int_equal(got->n_content_topics, 2);
  assert_string_equal(g_be.last_topic0, "/app/1/c0/proto");
  assert_true(got->has_time_start && got->has_time_end);
  assert_int_equal(got->time_start, TS0 + 5000);
  assert_int_equal(got->time_end, TS0 + 90000);
  assert_int_equal(got->n_hashes, 1);
  assert_memory_equal(g_be.last_hash0, g_msgs[7].hash, LD_WAKU_HASH_LEN);
  assert_true(got->has_cursor);
  assert_memory_equal(got->cursor, g_msgs[3].hash, LD_WAKU_HASH_LEN);
  assert_false(got->forward);
  assert_int_equal(got->limit, 7);
  assert_true(got->include_data);
  ld_store_response_clear(&a.res);
}

static void page_size_default_and_clamp(void **state) {
  (void)state;
  ld_store_query_t q;
  ld_store_query_init(&q);
  q.include_data = true;
  answer_t a;
  ask_wait(&q, &a);
  assert_int_equal(g_be.last.limit, LD_STORE_DEFAULT_PAGE_SIZE);
  assert_int_equal(a.res.n_entries, 20);
  assert_true(a.res.has_cursor);
  assert_memory_equal(a.res.cursor, g_msgs[19].hash, LD_WAKU_HASH_LEN);
  for (size_t i = 0; i < a.res.n_entries; i++) {
    const ld_store_entry_t *e = &a.res.entries[i];
    assert_memory_equal(e->hash, g_msgs[i].hash, LD_WAKU_HASH_LEN);
    assert_string_equal(e->pubsub_topic, g_msgs[i].pubsub); /* js-waku needs both */
    assert_true(ld_waku_message_equal(&e->message, &g_msgs[i].msg));
  }
  ld_store_response_clear(&a.res);
  q.has_limit = true;
  q.limit = 5000;
  ask_wait(&q, &a);
  assert_int_equal(g_be.last.limit, LD_STORE_MAX_PAGE_SIZE);
  assert_int_equal(a.res.n_entries, 100);
  ld_store_response_clear(&a.res);
}

static void presence_query_returns_hashes_only(void **state) {
  (void)state;
  uint8_t hashes[3][LD_WAKU_HASH_LEN];
  memcpy(hashes[0], g_msgs[200].hash, LD_WAKU_HASH_LEN);
  memcpy(hashes[1], g_msgs[10].hash, LD_WAKU_HASH_LEN);
  memset(hashes[2], 0x99, LD_WAKU_HASH_LEN); /* not stored */
  ld_store_query_t q;
  ld_store_query_init(&q);
  q.hashes = (const uint8_t(*)[LD_WAKU_HASH_LEN])hashes;
  q.n_hashes = 3;
  answer_t a;
  ask_wait(&q, &a);
  assert_int_equal(a.res.status_code, 200);
  assert_false(g_be.last.include_data);
  assert_int_equal(a.res.n_entries, 2);
  assert_memory_equal(a.res.entries[0].hash, g_msgs[10].hash, LD_WAKU_HASH_LEN);
  assert_memory_equal(a.res.entries[1].hash, g_msgs[200].hash, LD_WAKU_HASH_LEN);
  assert_null(a.res.entries[0].pubsub_topic);
  assert_int_equal(a.res.entries[0].message.payload_len, 0);
  ld_store_response_clear(&a.res);
}

/* js-waku omits field 52 for a backward query and pages correctly only when the server reads
 * the absence as backward (the spec's reading); an explicit 52 = 1 is forward. */
static void absent_direction_reads_as_backward(void **state) {
  (void)state;
  const uint8_t body[] = {0x0a, 0x01, 'x', 0x10, 0x01}; /* id "x", include_data, no field 52 */
  raw_t r;
  send_body(body, sizeof body, &r);
  assert_int_equal(r.err, 0);
  assert_int_equal(r.res.status_code, 200);
  assert_false(g_be.last.forward);
  assert_memory_equal(r.res.entries[19].hash, g_msgs[N_MSGS - 1].hash, LD_WAKU_HASH_LEN);
  ld_store_response_clear(&r.res);
  const uint8_t fwd[] = {0x0a, 0x01, 'x', 0xa0, 0x03, 0x01}; /* explicit forward */
  send_body(fwd, sizeof fwd, &r);
  assert_true(g_be.last.forward);
  assert_memory_equal(r.res.entries[0].hash, g_msgs[0].hash, LD_WAKU_HASH_LEN);
  ld_store_response_clear(&r.res);
}

static void forward_reading_of_absent_direction(void **state) {
  (void)state;
  teardown(NULL);
  ld_store_server_config_t cfg;
  ld_store_server_config_default(&cfg);
  cfg.absent_forward = true;
  start(&cfg);
  const uint8_t body[] = {0x0a, 0x00};
  raw_t r;
  send_body(body, sizeof body, &r);
  assert_int_equal(r.res.status_code, 200);
  assert_true(g_be.last.forward);
  ld_store_response_clear(&r.res);
}

static void malformed_requests_get_400(void **state) {
  (void)state;
  raw_t r;
  const uint8_t no_id[] = {0x10, 0x01};
  send_body(no_id, sizeof no_id, &r);
  assert_int_equal(r.err, 0);
  assert_status(&r.res, 400, "", "decoding rpc failed: MissingRequiredField request_id");
  ld_store_response_clear(&r.res);
  const uint8_t truncated[] = {0x0a, 0x05, 'a'};
  send_body(truncated, sizeof truncated, &r);
  assert_status(&r.res, 400, "", "decoding rpc failed: MessageIncomplete");
  ld_store_response_clear(&r.res);
  const uint8_t big_prefix[] = {0x80, 0x80, 0x08}; /* 131072 bytes announced */
  send_raw(big_prefix, sizeof big_prefix, &r);
  assert_status(&r.res, 400, "", "decoding rpc failed: MessageTooBig");
  ld_store_response_clear(&r.res);
  assert_int_equal(g_be.calls, 0);
  ld_store_server_stats_t st;
  ld_store_server_get_stats(g_srv, &st);
  assert_int_equal(st.errors[LD_STORE_ERROR_DECODE], 3);
  assert_int_equal(st.queries, 0);
}

static void invalid_cursors_get_300(void **state) {
  (void)state;
  raw_t r;
  uint8_t body[64] = {0x0a, 0x02, 'i', 'd', 0x9a, 0x03, 0x20}; /* cursor of 32 zero bytes */
  send_body(body, 7 + 32, &r);
  assert_status(&r.res, 300, "",
                "BAD_RESPONSE: archive error: INVALID_QUERY: all zeroes cursor hash");
  ld_store_response_clear(&r.res);
  /* Shorter cursors are zero-padded to 32 bytes as nwaku's decoder does: all zeroes, or not
   * found (nwaku never answers "invalid cursor hash length" on the wire). */
  body[6] = 3;
  memset(body + 7, 0, 3);
  send_body(body, 7 + 3, &r);
  assert_status(&r.res, 300, "",
                "BAD_RESPONSE: archive error: INVALID_QUERY: all zeroes cursor hash");
  ld_store_response_clear(&r.res);
  body[6] = 0;
  send_body(body, 7, &r);
  assert_status(&r.res, 300, "",
                "BAD_RESPONSE: archive error: INVALID_QUERY: all zeroes cursor hash");
  ld_store_response_clear(&r.res);
  assert_int_equal(g_be.calls, 0);
  body[6] = 5;
  memset(body + 7, 1, 5);
  send_body(body, 7 + 5, &r);
  assert_status(&r.res, 300, "", "BAD_RESPONSE: archive error: DRIVER_ERROR: cursor not found");
  ld_store_response_clear(&r.res);
  assert_int_equal(g_be.calls, 1);
  uint8_t padded[LD_WAKU_HASH_LEN] = {1, 1, 1, 1, 1};
  assert_memory_equal(g_be.last.cursor, padded, LD_WAKU_HASH_LEN);
  /* A longer one is cut to its first 32 bytes: a stored hash followed by more bytes pages on. */
  body[6] = LD_WAKU_HASH_LEN + 8;
  memcpy(body + 7, g_msgs[7].hash, LD_WAKU_HASH_LEN);
  memset(body + 7 + LD_WAKU_HASH_LEN, 0xee, 8);
  send_body(body, 7 + LD_WAKU_HASH_LEN + 8, &r);
  assert_int_equal(r.res.status_code, 200);
  assert_string_equal(r.res.request_id, "id");
  assert_true(r.res.n_entries > 0);
  assert_memory_equal(g_be.last.cursor, g_msgs[7].hash, LD_WAKU_HASH_LEN);
  ld_store_response_clear(&r.res);
}

/* time_start after time_end: an empty page, as nwaku's driver finds no row; a cursor is still
 * looked up first (the archive itself refuses such a range). */
static void reversed_time_range_gets_an_empty_page(void **state) {
  (void)state;
  ld_store_query_t q;
  ld_store_query_init(&q);
  q.request_id = "rev";
  q.pubsub_topic = PUBSUB_A;
  q.include_data = true;
  q.has_time_start = q.has_time_end = true;
  q.time_start = g_msgs[N_MSGS - 1].msg.timestamp;
  q.time_end = g_msgs[0].msg.timestamp;
  answer_t a;
  ask_wait(&q, &a);
  assert_int_equal(a.err, 0);
  assert_status(&a.res, 200, "rev", "OK");
  ld_store_response_clear(&a.res);
  q.time_start = q.time_end + 1;
  ask_wait(&q, &a);
  assert_status(&a.res, 200, "rev", "OK");
  ld_store_response_clear(&a.res);
  q.has_cursor = true;
  memcpy(q.cursor, g_msgs[3].hash, LD_WAKU_HASH_LEN);
  ask_wait(&q, &a);
  assert_status(&a.res, 200, "rev", "OK");
  ld_store_response_clear(&a.res);
  memset(q.cursor, 0x77, LD_WAKU_HASH_LEN); /* not stored */
  ask_wait(&q, &a);
  assert_status(&a.res, 300, "", "BAD_RESPONSE: archive error: DRIVER_ERROR: cursor not found");
  ld_store_response_clear(&a.res);
  /* an equal start and end is a range of one instant, not reversed */
  q.has_cursor = false;
  q.time_start = q.time_end = g_msgs[0].msg.timestamp;
  ask_wait(&q, &a);
  assert_int_equal(a.res.status_code, 200);
  assert_true(a.res.n_entries > 0);
  assert_true(g_be.last.has_time_start && g_be.last.has_time_end);
  ld_store_response_clear(&a.res);
  ld_store_server_stats_t st;
  ld_store_server_get_stats(g_srv, &st);
  assert_int_equal(st.errors[LD_STORE_ERROR_INVALID_QUERY], 0);
}

static void too_many_topics_only_with_a_cursor(void **state) {
  (void)state;
  const char *topics[11];
  for (int i = 0; i < 11; i++)
    topics[i] = k_topics[i % 2];
  ld_store_query_t q;
  ld_store_query_init(&q);
  q.request_id = "t";
  q.pubsub_topic = PUBSUB_A;
  q.content_topics = topics;
  q.n_content_topics = 11;
  answer_t a;
  ask_wait(&q, &a);
  assert_int_equal(a.res.status_code, 200);
  ld_store_response_clear(&a.res);
  q.has_cursor = true;
  memcpy(q.cursor, g_msgs[0].hash, LD_WAKU_HASH_LEN);
  ask_wait(&q, &a);
  assert_int_equal(a.err, 0);
  assert_status(&a.res, 300, "",
                "BAD_RESPONSE: archive error: INVALID_QUERY: too many content topics");
  ld_store_response_clear(&a.res);
  q.n_content_topics = 10;
  ask_wait(&q, &a);
  assert_int_equal(a.res.status_code, 200);
  ld_store_response_clear(&a.res);
}

static void backend_errors_get_300(void **state) {
  (void)state;
  ld_store_query_t q;
  ld_store_query_init(&q);
  q.request_id = "b";
  q.has_cursor = true;
  memset(q.cursor, 0x77, LD_WAKU_HASH_LEN); /* not stored */
  answer_t a;
  ask_wait(&q, &a);
  assert_status(&a.res, 300, "", "BAD_RESPONSE: archive error: DRIVER_ERROR: cursor not found");
  ld_store_response_clear(&a.res);
  g_be.fail_err = LD_ERR_INVALID_ARG;
  g_be.fail_why = "too many hashes";
  ask_wait(&q, &a);
  assert_status(&a.res, 300, "", "BAD_RESPONSE: archive error: INVALID_QUERY: too many hashes");
  ld_store_response_clear(&a.res);
  g_be.fail_err = LD_ERR_DB;
  g_be.fail_why = NULL;
  ask_wait(&q, &a);
  assert_status(&a.res, 300, "", "BAD_RESPONSE: archive error: DRIVER_ERROR: database error");
  ld_store_response_clear(&a.res);
  g_be.fail_err = 0;
  g_be.refuse = true;
  ask_wait(&q, &a);
  assert_status(&a.res, 300, "", "BAD_RESPONSE: archive error: DRIVER_ERROR: closed");
  ld_store_response_clear(&a.res);
  ld_store_server_stats_t st;
  ld_store_server_get_stats(g_srv, &st);
  assert_int_equal(st.errors[LD_STORE_ERROR_INVALID_QUERY], 1);
  assert_int_equal(st.errors[LD_STORE_ERROR_DRIVER], 3);
  assert_int_equal(st.in_flight, 0);
}

/* ---- concurrency ----------------------------------------------------------------------------- */

static void too_many_concurrent_get_429(void **state) {
  (void)state;
  teardown(NULL);
  ld_store_server_config_t cfg;
  ld_store_server_config_default(&cfg);
  cfg.max_queries_per_peer = 2;
  start(&cfg);
  g_be.hold_all = true;
  ld_store_query_t q;
  ld_store_query_init(&q);
  q.request_id = "c";
  answer_t a[3];
  ask(&q, &a[0]);
  ask(&q, &a[1]);
  assert_true(sh_run_until(&g_loop, held_at_least, (void *)&k_two, 3000));
  sh_run_for(&g_loop, 20);
  assert_int_equal(be_held(), 2);
  ask_wait(&q, &a[2]);
  assert_int_equal(a[2].err, 0);
  assert_status(&a[2].res, 429, "N/A", "TOO_MANY_REQUESTS");
  assert_false(a[0].done || a[1].done);
  be_answer(true);
  assert_true(sh_run_until(&g_loop, answer_done, &a[1], 3000));
  assert_true(sh_run_until(&g_loop, answer_done, &a[0], 3000));
  assert_int_equal(a[0].res.status_code, 200);
  assert_int_equal(a[1].res.status_code, 200);
  ld_store_server_stats_t st;
  ld_store_server_get_stats(g_srv, &st);
  assert_int_equal(st.errors[LD_STORE_ERROR_TOO_MANY], 1);
  assert_int_equal(st.in_flight, 0);
  /* slots are free again */
  g_be.hold_all = false;
  ld_store_response_clear(&a[2].res);
  ask_wait(&q, &a[2]);
  assert_int_equal(a[2].res.status_code, 200);
  for (int i = 0; i < 3; i++)
    ld_store_response_clear(&a[i].res);
}

static void slow_backend_does_not_block_other_streams(void **state) {
  (void)state;
  g_be.hold_pubsub = PUBSUB_B;
  ld_store_query_t slow, fast;
  ld_store_query_init(&slow);
  ld_store_query_init(&fast);
  slow.pubsub_topic = PUBSUB_B;
  fast.pubsub_topic = PUBSUB_A;
  fast.include_data = true;
  answer_t a_slow, a_fast[5];
  ask(&slow, &a_slow);
  for (int i = 0; i < 5; i++) {
    ask_wait(&fast, &a_fast[i]);
    assert_int_equal(a_fast[i].res.status_code, 200);
    assert_string_equal(a_fast[i].res.entries[0].pubsub_topic, PUBSUB_A);
    ld_store_response_clear(&a_fast[i].res);
  }
  assert_false(a_slow.done);
  g_be.hold_pubsub = NULL;
  be_answer(true);
  assert_true(sh_run_until(&g_loop, answer_done, &a_slow, 3000));
  assert_int_equal(a_slow.res.status_code, 200);
  ld_store_response_clear(&a_slow.res);
}

static void backend_timeout_gets_300_and_late_answer_is_dropped(void **state) {
  (void)state;
  teardown(NULL);
  ld_store_server_config_t cfg;
  ld_store_server_config_default(&cfg);
  cfg.query_timeout_ms = 100;
  start(&cfg);
  g_be.hold_all = true;
  ld_store_query_t q;
  ld_store_query_init(&q);
  answer_t a;
  ask_wait(&q, &a);
  assert_status(&a.res, 300, "", "BAD_RESPONSE: archive error: DRIVER_ERROR: timed out");
  ld_store_response_clear(&a.res);
  ld_store_server_stats_t st;
  ld_store_server_get_stats(g_srv, &st);
  assert_int_equal(st.in_flight, 1); /* the slot stays taken until the backend answers */
  be_answer(true);
  sh_run_for(&g_loop, 20);
  ld_store_server_get_stats(g_srv, &st);
  assert_int_equal(st.in_flight, 0);
  assert_int_equal(st.latency_count, 1);
}

static void server_freed_with_queries_at_the_backend(void **state) {
  (void)state;
  g_be.hold_all = true;
  ld_store_query_t q;
  ld_store_query_init(&q);
  static answer_t a;
  ask(&q, &a);
  assert_true(sh_run_until(&g_loop, held_at_least, (void *)&k_one, 3000));
  sh_switch_close(g_b, &g_loop);
  sh_switch_close(g_a, &g_loop);
  g_a = g_b = NULL;
  assert_true(a.done); /* the connection went away under the client */
  assert_int_equal(a.res.status_code, 300);
  ld_store_response_clear(&a.res);
  ld_store_server_free(g_srv);
  g_srv = NULL;
  be_answer(true); /* the detached query's answer is ignored */
  sh_run_for(&g_loop, 20);
}

/* ---- pagination ------------------------------------------------------------------------------ */

typedef struct collect {
  bool done;
  int err;
  uint32_t status;
  size_t pages, empty_pages;
  size_t n;
  uint8_t hashes[N_MSGS + 1][LD_WAKU_HASH_LEN];
  bool ordered; /* every page ascending */
} collect_t;

static bool on_page(ld_store_response_t *page, void *ud) {
  collect_t *c = ud;
  if (page->n_entries == 0)
    c->empty_pages++;
  for (size_t i = 0; i < page->n_entries; i++) {
    if (i > 0 && find_hash(page->entries[i].hash) <= find_hash(page->entries[i - 1].hash))
      c->ordered = false;
    if (c->n <= N_MSGS)
      memcpy(c->hashes[c->n], page->entries[i].hash, LD_WAKU_HASH_LEN);
    c->n++;
  }
  return true;
}

static void on_all(int err, uint32_t status, const char *desc, size_t pages, void *ud) {
  (void)desc;
  collect_t *c = ud;
  c->done = true;
  c->err = err;
  c->status = status;
  c->pages = pages;
}

static bool all_done(void *ud) {
  return ((collect_t *)ud)->done;
}

static void collect_all(const ld_store_query_t *q, ld_store_paging_t paging, collect_t *c) {
  memset(c, 0, sizeof *c);
  c->ordered = true;
  ld_store_client_opts_t o = {.paging = paging};
  ld_store_target_t to = {.conn = g_conn};
  assert_int_equal(ld_store_client_query_all(g_b, &to, q, &o, on_page, on_all, c, NULL), 0);
  assert_true(sh_run_until(&g_loop, all_done, c, 20000));
  assert_int_equal(c->err, 0);
  assert_int_equal(c->status, 200);
  assert_true(c->ordered);
}

/* Every message on `pubsub` exactly once, forward in order, backward page by page. */
static void check_coverage(const collect_t *c, const char *pubsub, bool forward) {
  size_t expect = 0;
  for (int i = 0; i < N_MSGS; i++)
    expect += strcmp(g_msgs[i].pubsub, pubsub) == 0;
  assert_int_equal(c->n, expect);
  bool seen[N_MSGS] = {false};
  for (size_t i = 0; i < c->n; i++) {
    int k = find_hash(c->hashes[i]);
    assert_true(k >= 0);
    assert_false(seen[k]);
    seen[k] = true;
    assert_string_equal(g_msgs[k].pubsub, pubsub);
    if (forward && i > 0)
      assert_true(find_hash(c->hashes[i - 1]) < k);
  }
}

static void pages_forward_and_backward_with_server_cursor(void **state) {
  (void)state;
  ld_store_query_t q;
  ld_store_query_init(&q);
  q.pubsub_topic = PUBSUB_B;
  q.has_limit = true;
  q.limit = 9;
  collect_t c;
  collect_all(&q, LD_STORE_PAGING_CURSOR, &c);
  check_coverage(&c, PUBSUB_B, true);
  assert_int_equal(c.pages, 14); /* 125 messages, 9 a page */
  assert_int_equal(c.empty_pages, 0);
  q.forward = false;
  collect_all(&q, LD_STORE_PAGING_CURSOR, &c);
  check_coverage(&c, PUBSUB_B, false);
  /* backward: the first page holds the newest messages */
  assert_memory_equal(c.hashes[8], g_msgs[N_MSGS - 1].hash, LD_WAKU_HASH_LEN);
}

static void pages_as_js_waku_does(void **state) {
  (void)state;
  ld_store_query_t q;
  ld_store_query_init(&q);
  q.include_data = true;
  q.pubsub_topic = PUBSUB_A;
  q.content_topics = k_topics;
  q.n_content_topics = 2;
  collect_t c;
  collect_all(&q, LD_STORE_PAGING_UNTIL_EMPTY, &c);
  size_t expect = 0;
  for (int i = 0; i < N_MSGS; i++)
    expect += strcmp(g_msgs[i].pubsub, PUBSUB_A) == 0 && strcmp(g_msgs[i].topic, "/app/1/c2/proto");
  assert_int_equal(c.n, expect);
  assert_int_equal(c.empty_pages, 1); /* the empty 200 page after the last message */
  assert_int_equal(c.pages, (expect + 19) / 20 + 1);
}

static void big_pages_are_trimmed_to_the_byte_budget(void **state) {
  (void)state;
  teardown(NULL);
  ld_store_server_config_t cfg;
  ld_store_server_config_default(&cfg);
  cfg.max_response_bytes = 1500; /* about 20 entries of 70 bytes */
  start(&cfg);
  ld_store_query_t q;
  ld_store_query_init(&q);
  q.include_data = true;
  q.has_limit = true;
  q.limit = 100;
  answer_t a;
  ask_wait(&q, &a);
  assert_int_equal(a.res.status_code, 200);
  assert_true(a.res.n_entries > 5 && a.res.n_entries < 100);
  assert_true(a.res.has_cursor);
  assert_memory_equal(a.res.cursor, a.res.entries[a.res.n_entries - 1].hash, LD_WAKU_HASH_LEN);
  ld_store_response_clear(&a.res);
  q.forward = false;
  ask_wait(&q, &a);
  assert_memory_equal(a.res.cursor, a.res.entries[0].hash, LD_WAKU_HASH_LEN);
  assert_memory_equal(a.res.entries[a.res.n_entries - 1].hash, g_msgs[N_MSGS - 1].hash,
                      LD_WAKU_HASH_LEN);
  ld_store_response_clear(&a.res);
  collect_t c;
  q.pubsub_topic = PUBSUB_A;
  collect_all(&q, LD_STORE_PAGING_CURSOR, &c);
  check_coverage(&c, PUBSUB_A, false);
  ld_store_server_stats_t st;
  ld_store_server_get_stats(g_srv, &st);
  assert_true(st.trimmed >= 2);
}

/* ---- local queries and client failures ------------------------------------------------------- */

typedef struct local {
  bool done;
  uint32_t status;
  size_t n;
  char desc[128];
} local_t;

static void on_local(const ld_store_response_t *res, void *ud) {
  local_t *l = ud;
  l->done = true;
  l->status = res->status_code;
  l->n = res->n_entries;
  snprintf(l->desc, sizeof l->desc, "%s", res->status_desc);
}

static bool local_done(void *ud) {
  return ((local_t *)ud)->done;
}

static void local_queries_answer_like_the_network(void **state) {
  (void)state;
  ld_store_query_t q;
  ld_store_query_init(&q);
  q.pubsub_topic = PUBSUB_A;
  local_t l = {0};
  assert_int_equal(ld_store_server_query_local(g_srv, &q, on_local, &l), 0);
  assert_false(l.done); /* never from inside the call */
  assert_true(sh_run_until(&g_loop, local_done, &l, 3000));
  assert_int_equal(l.status, 200);
  assert_int_equal(l.n, 20);
  assert_true(g_be.last.forward);
  memset(&l, 0, sizeof l);
  q.has_cursor = true; /* all zeroes */
  assert_int_equal(ld_store_server_query_local(g_srv, &q, on_local, &l), 0);
  assert_true(sh_run_until(&g_loop, local_done, &l, 3000));
  assert_int_equal(l.status, 300);
  assert_string_equal(l.desc, "BAD_RESPONSE: archive error: INVALID_QUERY: all zeroes cursor hash");
  ld_store_server_stats_t st;
  ld_store_server_get_stats(g_srv, &st);
  assert_int_equal(st.local_queries, 2);
}

/* A disabled function is answered 503 with the request ID echoed, before the query reaches the
 * backend or takes a concurrency slot (one slot per peer here, held by a listing), over the
 * network and locally alike; the enabled functions are still served. */
static void disabled_functions_get_503(void **state) {
  (void)state;
  teardown(NULL);
  ld_store_server_config_t cfg;
  ld_store_server_config_default(&cfg);
  cfg.disabled_functions = LD_STORE_FN_KEY_VALUE;
  cfg.max_queries_per_peer = 1;
  start(&cfg);
  uint8_t hashes[1][LD_WAKU_HASH_LEN];
  memcpy(hashes[0], g_msgs[42].hash, LD_WAKU_HASH_LEN);
  ld_store_query_t listing, by_hash;
  ld_store_query_init(&listing);
  listing.request_id = "listing";
  ld_store_query_init(&by_hash);
  by_hash.request_id = "by-hash";
  by_hash.hashes = (const uint8_t(*)[LD_WAKU_HASH_LEN])hashes;
  by_hash.n_hashes = 1;
  by_hash.include_data = true;
  g_be.hold_all = true; /* the listing holds the peer's only slot */
  answer_t held, refused;
  ask(&listing, &held);
  assert_true(sh_run_until(&g_loop, held_at_least, (void *)&k_one, 3000));
  ask_wait(&by_hash, &refused);
  assert_int_equal(refused.err, 0);
  assert_status(&refused.res, 503, "by-hash",
                "SERVICE_UNAVAILABLE: not supported by this store node: key-value");
  assert_int_equal(g_be.calls, 1);
  ld_store_response_clear(&refused.res);
  be_answer(true);
  g_be.hold_all = false;
  assert_true(sh_run_until(&g_loop, answer_done, &held, 3000));
  assert_int_equal(held.res.status_code, 200);
  ld_store_response_clear(&held.res);
  /* presence is another function: served */
  by_hash.include_data = false;
  answer_t presence;
  ask_wait(&by_hash, &presence);
  assert_int_equal(presence.res.status_code, 200);
  assert_int_equal(presence.res.n_entries, 1);
  assert_memory_equal(presence.res.entries[0].hash, g_msgs[42].hash, LD_WAKU_HASH_LEN);
  ld_store_response_clear(&presence.res);
  /* a listing with data needs key-value too: refused, also locally */
  listing.include_data = true;
  local_t l = {0};
  assert_int_equal(ld_store_server_query_local(g_srv, &listing, on_local, &l), 0);
  assert_true(sh_run_until(&g_loop, local_done, &l, 3000));
  assert_int_equal(l.status, 503);
  assert_string_equal(l.desc, "SERVICE_UNAVAILABLE: not supported by this store node: key-value");
  assert_int_equal(l.n, 0);
  assert_int_equal(g_be.calls, 2);
  ld_store_server_stats_t st;
  ld_store_server_get_stats(g_srv, &st);
  assert_int_equal(st.errors[LD_STORE_ERROR_DISABLED], 2);
  assert_int_equal(st.errors[LD_STORE_ERROR_TOO_MANY], 0);
  assert_string_equal(ld_store_error_kind_name(LD_STORE_ERROR_DISABLED), "function_disabled");
}

/* Every function disabled: each kind of query names what it needs. */
static void each_query_names_the_functions_it_needs(void **state) {
  (void)state;
  teardown(NULL);
  ld_store_server_config_t cfg;
  ld_store_server_config_default(&cfg);
  cfg.disabled_functions = LD_STORE_FN_ALL;
  start(&cfg);
  uint8_t hashes[1][LD_WAKU_HASH_LEN] = {{7}};
  static const char *const want[4] = {
      "SERVICE_UNAVAILABLE: not supported by this store node: key-value",
      "SERVICE_UNAVAILABLE: not supported by this store node: key-presence",
      "SERVICE_UNAVAILABLE: not supported by this store node: wayback",
      "SERVICE_UNAVAILABLE: not supported by this store node: key-value, wayback",
  };
  for (int i = 0; i < 4; i++) {
    ld_store_query_t q;
    ld_store_query_init(&q);
    q.request_id = "r";
    q.include_data = i == 0 || i == 3;
    if (i < 2) {
      q.hashes = (const uint8_t(*)[LD_WAKU_HASH_LEN])hashes;
      q.n_hashes = 1;
    } else {
      q.content_topics = k_topics;
      q.n_content_topics = 1;
    }
    answer_t a;
    ask_wait(&q, &a);
    assert_status(&a.res, 503, "r", want[i]);
    ld_store_response_clear(&a.res);
  }
  assert_int_equal(g_be.calls, 0);
}

static void client_failures_are_reported_as_nwaku_does(void **state) {
  (void)state;
  ld_store_query_t q;
  ld_store_query_init(&q);
  answer_t a;
  /* a peer that does not speak store */
  ld_multiaddr_t b_addr;
  sh_listen_local(g_b, &b_addr);
  memset(&a, 0, sizeof a);
  ld_store_target_t to = {.addr = &b_addr};
  assert_int_equal(ld_store_client_query(g_a, &to, &q, NULL, on_answer, &a, NULL), 0);
  assert_true(sh_run_until(&g_loop, answer_done, &a, 5000));
  assert_int_equal(a.err, LD_ERR_PROTOCOL_UNSUPPORTED);
  assert_int_equal(a.res.status_code, 504);
  char text[LD_MULTIADDR_TEXT_MAX], want[LD_MULTIADDR_TEXT_MAX + 32];
  assert_true(ld_multiaddr_to_text(&b_addr, text, sizeof text) > 0);
  snprintf(want, sizeof want, "PEER_DIAL_FAILURE: %s", text);
  assert_string_equal(a.res.status_desc, want);
  ld_store_response_clear(&a.res);
  /* an all-zero cursor is refused before sending */
  q.has_cursor = true;
  ld_store_target_t conn = {.conn = g_conn};
  assert_int_equal(ld_store_client_query(g_b, &conn, &q, NULL, on_answer, &a, NULL),
                   LD_ERR_INVALID_ARG);
  /* the made-up responses */
  ld_store_response_t res;
  ld_store_response_init(&res);
  assert_int_equal(ld_store_client_error_response(LD_ERR_TIMEOUT, NULL, &res), 0);
  assert_status(&res, 300, "", "BAD_RESPONSE: timed out");
  assert_int_equal(ld_store_client_error_response(LD_ERR_BAD_PROTOBUF, NULL, &res), 0);
  assert_status(&res, 300, "", "BAD_RESPONSE: decode_rpc_failure");
  assert_int_equal(ld_store_client_error_response(LD_ERR_REFUSED, "peer", &res), 0);
  assert_status(&res, 504, "", "PEER_DIAL_FAILURE: peer");
  assert_int_equal(ld_store_client_error_response(LD_ERR_INVALID_ARG, NULL, &res), 0);
  assert_status(&res, 400, "", "BAD_REQUEST: invalid argument");
  ld_store_response_clear(&res);
}

static void a_query_by_address_dials_once(void **state) {
  (void)state;
  ld_store_query_t q;
  ld_store_query_init(&q);
  q.request_id = "by-addr";
  answer_t a;
  memset(&a, 0, sizeof a);
  ld_store_target_t to = {.addr = &g_addr};
  assert_int_equal(ld_store_client_query(g_b, &to, &q, NULL, on_answer, &a, NULL), 0);
  assert_true(sh_run_until(&g_loop, answer_done, &a, 5000));
  assert_int_equal(a.err, 0);
  assert_int_equal(a.res.status_code, 200);
  assert_string_equal(a.res.request_id, "by-addr");
  assert_int_equal(a.res.n_entries, 20);
  ld_store_response_clear(&a.res);
  ld_conn_t *conns[4];
  assert_int_equal(ld_switch_connections(g_b, conns, 4), 1); /* the existing one was reused */
}

static void idle_and_cancelled_streams(void **state) {
  (void)state;
  /* a stream closed without a request gets no answer */
  raw_t r;
  memset(&r, 0, sizeof r);
  ld_reqresp_opts_t o = {.timeout_ms = 3000};
  assert_int_equal(ld_reqresp_request(g_b, g_conn, LD_STORE_PROTOCOL, (const uint8_t *)"", 0, &o,
                                      on_raw, &r, NULL),
                   0);
  assert_true(sh_run_until(&g_loop, raw_done, &r, 5000));
  assert_int_equal(r.err, 0);
  assert_int_equal(r.len, 0);
  /* a cancelled call never reports; the server copes with the reset */
  g_be.hold_all = true;
  ld_store_query_t q;
  ld_store_query_init(&q);
  answer_t a;
  memset(&a, 0, sizeof a);
  ld_store_call_t *call = NULL;
  ld_store_target_t to = {.conn = g_conn};
  assert_int_equal(ld_store_client_query(g_b, &to, &q, NULL, on_answer, &a, &call), 0);
  assert_true(sh_run_until(&g_loop, held_at_least, (void *)&k_one, 3000));
  ld_store_client_cancel(call);
  sh_run_for(&g_loop, 30);
  be_answer(true);
  sh_run_for(&g_loop, 30);
  assert_false(a.done);
  ld_store_server_stats_t st;
  ld_store_server_get_stats(g_srv, &st);
  assert_int_equal(st.in_flight, 0);
  assert_int_equal(st.errors[LD_STORE_ERROR_READ], 0);
}

int main(void) {
  setvbuf(stdout, NULL, _IONBF, 0); /* results stay in order with the log lines */
  make_messages();
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(query_fields_reach_the_backend, setup, teardown),
      cmocka_unit_test_setup_teardown(page_size_default_and_clamp, setup, teardown),
      cmocka_unit_test_setup_teardown(presence_query_returns_hashes_only, setup, teardown),
      cmocka_unit_test_setup_teardown(absent_direction_reads_as_backward, setup, teardown),
      cmocka_unit_test_setup_teardown(forward_reading_of_absent_direction, setup, teardown),
      cmocka_unit_test_setup_teardown(malformed_requests_get_400, setup, teardown),
      cmocka_unit_test_setup_teardown(invalid_cursors_get_300, setup, teardown),
      cmocka_unit_test_setup_teardown(reversed_time_range_gets_an_empty_page, setup, teardown),
      cmocka_unit_test_setup_teardown(too_many_topics_only_with_a_cursor, setup, teardown),
      cmocka_unit_test_setup_teardown(backend_errors_get_300, setup, teardown),
      cmocka_unit_test_setup_teardown(too_many_concurrent_get_429, setup, teardown),
      cmocka_unit_test_setup_teardown(slow_backend_does_not_block_other_streams, setup, teardown),
      cmocka_unit_test_setup_teardown(backend_timeout_gets_300_and_late_answer_is_dropped, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(server_freed_with_queries_at_the_backend, setup, teardown),
      cmocka_unit_test_setup_teardown(pages_forward_and_backward_with_server_cursor, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(pages_as_js_waku_does, setup, teardown),
      cmocka_unit_test_setup_teardown(big_pages_are_trimmed_to_the_byte_budget, setup, teardown),
      cmocka_unit_test_setup_teardown(local_queries_answer_like_the_network, setup, teardown),
      cmocka_unit_test_setup_teardown(disabled_functions_get_503, setup, teardown),
      cmocka_unit_test_setup_teardown(each_query_names_the_functions_it_needs, setup, teardown),
      cmocka_unit_test_setup_teardown(client_failures_are_reported_as_nwaku_does, setup, teardown),
      cmocka_unit_test_setup_teardown(a_query_by_address_dials_once, setup, teardown),
      cmocka_unit_test_setup_teardown(idle_and_cancelled_streams, setup, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
