/* Store v3 end to end: a C client queries a C store server over two switches on loopback, the
 * server backed by a real archive (SQLite in a temporary file, and memory://) holding 10,000
 * messages. Paging forward and backward (the server's cursor, and js-waku's own cursor until an
 * empty page) must cover every matching message exactly once in order; hash lookups, presence
 * queries and the error answers (nwaku's, also for a reversed time range and a short cursor) are
 * checked against the archive's contents. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <uv.h>

#include "base/error.h"
#include "p2p/reqresp.h"
#include "switch_harness.h"
#include "waku/archive/archive.h"
#include "waku/store/client.h"
#include "waku/store/server.h"

#define N_MSGS 10000
#define TS0 INT64_C(1760000000000000000)
#define SEC INT64_C(1000000000)

static const char *const k_pubsub[2] = {"/waku/2/rs/1/0", "/waku/2/rs/1/5"};
static const char *const k_topics[4] = {"/app/1/alpha/proto", "/app/1/beta/proto",
                                        "/app/1/gamma/proto", "/app/1/delta/proto"};

/* ---- the messages, in (timestamp, hash) order ------------------------------------------------ */

typedef struct msg {
  uint8_t hash[LD_WAKU_HASH_LEN];
  int pubsub, topic;
  char payload[48];
  uint8_t meta[8];
  ld_waku_message_t m;
} msg_t;

static msg_t *g_msgs;

static int msg_cmp(const void *pa, const void *pb) {
  const msg_t *a = pa, *b = pb;
  if (a->m.timestamp != b->m.timestamp)
    return a->m.timestamp < b->m.timestamp ? -1 : 1;
  return memcmp(a->hash, b->hash, LD_WAKU_HASH_LEN);
}

static void point_views(msg_t *x) {
  ld_waku_message_init(&x->m);
  x->m.payload = (const uint8_t *)x->payload;
  x->m.payload_len = strlen(x->payload);
  x->m.content_topic = k_topics[x->topic];
  x->m.content_topic_len = strlen(k_topics[x->topic]);
  x->m.meta = x->meta;
  x->m.meta_len = x->pubsub == 0 ? sizeof x->meta : 0;
}

/* Three messages share each timestamp (ties broken by hash); one second apart per group. */
static void make_messages(void) {
  g_msgs = calloc(N_MSGS, sizeof *g_msgs);
  assert_non_null(g_msgs);
  for (int i = 0; i < N_MSGS; i++) {
    msg_t *x = &g_msgs[i];
    x->pubsub = (i / 7) % 2;
    x->topic = i % 4;
    snprintf(x->payload, sizeof x->payload, "payload %d %.*s", i, i % 17, "xxxxxxxxxxxxxxxxx");
    memcpy(x->meta, &i, sizeof i);
    point_views(x);
    int64_t ts = TS0 + (int64_t)(i / 3) * SEC;
    x->m.timestamp = ts;
    assert_int_equal(ld_waku_message_hash(k_pubsub[x->pubsub], &x->m, x->hash), 0);
  }
  qsort(g_msgs, N_MSGS, sizeof *g_msgs, msg_cmp);
  for (int i = 0; i < N_MSGS; i++) {
    int64_t ts = g_msgs[i].m.timestamp;
    point_views(&g_msgs[i]);
    g_msgs[i].m.timestamp = ts;
  }
}

static int index_of(const uint8_t *hash) {
  for (int i = 0; i < N_MSGS; i++)
    if (memcmp(g_msgs[i].hash, hash, LD_WAKU_HASH_LEN) == 0)
      return i;
  return -1;
}

/* ---- fixture: an archive, a server on switch A, a client on switch B ------------------------- */

static uv_loop_t g_loop;
static ld_archive_t *g_archive;
static ld_switch_t *g_a, *g_b;
static ld_store_server_t *g_srv;
static ld_conn_t *g_conn;
static char g_db_path[64];

static int archive_backend(void *ctx, const ld_archive_query_t *q, ld_archive_query_fn done,
                           void *user_data) {
  return ld_archive_query(ctx, q, done, user_data);
}

typedef struct opened {
  bool done;
  int err;
  ld_archive_t *a;
} opened_t;

static void on_open(ld_archive_t *a, int err, const char *why, void *ud) {
  opened_t *o = ud;
  o->done = true;
  o->err = err;
  o->a = a;
  if (err != 0)
    fprintf(stderr, "archive open failed: %s\n", why);
}

static bool flag_set(void *ud) {
  return *(bool *)ud;
}

static int g_inserted, g_insert_errors;

static void on_inserted(int err, void *ud) {
  (void)ud;
  if (err == 0)
    g_inserted++;
  else
    g_insert_errors++;
}

static bool all_inserted(void *ud) {
  (void)ud;
  return g_inserted + g_insert_errors == N_MSGS;
}

static void fill_archive(void) {
  g_inserted = g_insert_errors = 0;
  for (int i = 0; i < N_MSGS; i++) { /* in a shuffled order: i * 7919 mod N visits them all */
    const msg_t *x = &g_msgs[(int)(((int64_t)i * 7919) % N_MSGS)];
    assert_int_equal(
        ld_archive_insert(g_archive, k_pubsub[x->pubsub], &x->m, x->hash, on_inserted, NULL),
        LD_ARCHIVE_ACCEPTED);
  }
  assert_true(sh_run_until(&g_loop, all_inserted, NULL, 120000));
  assert_int_equal(g_insert_errors, 0);
}

static int start(const char *url) {
  assert_int_equal(uv_loop_init(&g_loop), 0);
  ld_archive_config_t cfg;
  ld_archive_config_default(&cfg);
  cfg.url = url;
  opened_t o = {0};
  assert_int_equal(ld_archive_open(&g_loop, &cfg, on_open, &o), 0);
  assert_true(sh_run_until(&g_loop, flag_set, &o.done, 30000));
  assert_int_equal(o.err, 0);
  g_archive = o.a;
  fill_archive();
  g_a = sh_switch_new(&g_loop, NULL);
  g_b = sh_switch_new(&g_loop, NULL);
  ld_store_backend_t be = {.query = archive_backend, .ctx = g_archive};
  g_srv = ld_store_server_new(g_a, &be, NULL);
  assert_non_null(g_srv);
  ld_multiaddr_t addr;
  sh_listen_local(g_a, &addr);
  int err = -1;
  g_conn = sh_dial_wait(g_b, &g_loop, &addr, &err);
  assert_int_equal(err, 0);
  return 0;
}

static int setup_sqlite(void **state) {
  (void)state;
  snprintf(g_db_path, sizeof g_db_path, "/tmp/ld-store-XXXXXX");
  int fd = mkstemp(g_db_path);
  assert_true(fd >= 0);
  close(fd);
  unlink(g_db_path); /* the driver creates it */
  char url[96];
  snprintf(url, sizeof url, "sqlite://%s", g_db_path);
  return start(url);
}

static int setup_memory(void **state) {
  (void)state;
  g_db_path[0] = '\0';
  return start("memory://");
}

static void on_closed(void *ud) {
  *(bool *)ud = true;
}

static int teardown(void **state) {
  (void)state;
  sh_switch_close(g_b, &g_loop);
  sh_switch_close(g_a, &g_loop);
  bool closed = false;
  ld_archive_close(g_archive, on_closed, &closed);
  assert_true(sh_run_until(&g_loop, flag_set, &closed, 30000));
  ld_store_server_free(g_srv);
  sh_run_for(&g_loop, 20);
  assert_int_equal(uv_loop_close(&g_loop), 0);
  if (g_db_path[0] != '\0') {
    char p[96];
    unlink(g_db_path);
    snprintf(p, sizeof p, "%s-wal", g_db_path);
    unlink(p);
    snprintf(p, sizeof p, "%s-shm", g_db_path);
    unlink(p);
  }
  return 0;
}

/* ---- one query, and every page --------------------------------------------------------------- */

typedef struct answer {
  bool done;
  int err;
  ld_store_response_t res;
} answer_t;

static void on_answer(int err, ld_store_response_t *res, void *ud) {
  answer_t *a = ud;
  a->done = true;
  a->err = err;
  a->res = *res;
  ld_store_response_init(res);
}

static void ask(const ld_store_query_t *q, answer_t *a) {
  memset(a, 0, sizeof *a);
  ld_store_target_t to = {.conn = g_conn};
  assert_int_equal(ld_store_client_query(g_b, &to, q, NULL, on_answer, a, NULL), 0);
  assert_true(sh_run_until(&g_loop, flag_set, &a->done, 30000));
  assert_int_equal(a->err, 0);
}

typedef struct pages {
  bool done;
  int err;
  uint32_t status;
  bool include_data;
  size_t n_pages, empty_pages;
  size_t n;
  int *order; /* message index of every entry, in arrival order */
  int first_of_page[N_MSGS + 2];
  bool bad_entry; /* data missing or wrong, or a page not ascending */
} pages_t;

static bool on_page(ld_store_response_t *page, void *ud) {
  pages_t *p = ud;
  if (page->n_entries == 0)
    p->empty_pages++;
  p->first_of_page[p->n_pages++] = (int)p->n;
  for (size_t i = 0; i < page->n_entries; i++) {
    const ld_store_entry_t *e = &page->entries[i];
    int k = index_of(e->hash);
    if (k < 0 || (i > 0 && k <= p->order[p->n - 1]) || p->n >= N_MSGS) {
      p->bad_entry = true;
      continue;
    }
    if (p->include_data &&
        (e->pubsub_topic == NULL || strcmp(e->pubsub_topic, k_pubsub[g_msgs[k].pubsub]) != 0 ||
         !ld_waku_message_equal(&e->message, &g_msgs[k].m)))
      p->bad_entry = true;
    if (!p->include_data && e->pubsub_topic != NULL)
      p->bad_entry = true;
    p->order[p->n++] = k;
  }
  return true;
}

static void on_all(int err, uint32_t status, const char *desc, size_t pages, void *ud) {
  (void)desc;
  (void)pages;
  pages_t *p = ud;
  p->done = true;
  p->err = err;
  p->status = status;
}

static pages_t *read_all(const ld_store_query_t *q, ld_store_paging_t paging) {
  pages_t *p = calloc(1, sizeof *p);
  assert_non_null(p);
  p->order = calloc(N_MSGS, sizeof *p->order);
  assert_non_null(p->order);
  p->include_data = q->include_data;
  ld_store_client_opts_t o = {.paging = paging};
  ld_store_target_t to = {.conn = g_conn};
  assert_int_equal(ld_store_client_query_all(g_b, &to, q, &o, on_page, on_all, p, NULL), 0);
  assert_true(sh_run_until(&g_loop, flag_set, &p->done, 120000));
  assert_int_equal(p->err, 0);
  assert_int_equal(p->status, 200);
  assert_false(p->bad_entry);
  return p;
}

static void pages_free(pages_t *p) {
  free(p->order);
  free(p);
}

typedef bool (*filter_fn)(const msg_t *m, const void *arg);

/* Forward: the entries are exactly the matching messages in order. Backward: each page is the
 * block of matching messages just before the previous page. */
static void check_coverage(const pages_t *p, filter_fn match, const void *arg, bool forward) {
  int want[N_MSGS];
  size_t n = 0;
  for (int i = 0; i < N_MSGS; i++)
    if (match(&g_msgs[i], arg))
      want[n++] = i;
  assert_int_equal(p->n, n);
  if (forward) {
    for (size_t i = 0; i < n; i++)
      assert_int_equal(p->order[i], want[i]);
    return;
  }
  size_t end = n; /* walk the pages: page j covers want[end - len_j .. end) */
  for (size_t j = 0; j < p->n_pages; j++) {
    size_t start = (size_t)p->first_of_page[j];
    size_t stop = j + 1 < p->n_pages ? (size_t)p->first_of_page[j + 1] : p->n;
    size_t len = stop - start;
    assert_true(len <= end);
    for (size_t i = 0; i < len; i++)
      assert_int_equal(p->order[start + i], want[end - len + i]);
    end -= len;
  }
  assert_int_equal(end, 0);
}

static bool match_all(const msg_t *m, const void *arg) {
  (void)m;
  (void)arg;
  return true;
}

typedef struct content_filter {
  int pubsub;
  int topic_a, topic_b;
  int64_t start, end;
} content_filter_t;

static bool match_content(const msg_t *m, const void *arg) {
  const content_filter_t *f = arg;
  return m->pubsub == f->pubsub && (m->topic == f->topic_a || m->topic == f->topic_b) &&
         m->m.timestamp >= f->start && m->m.timestamp <= f->end;
}

/* Sends raw request bytes (framing included) and decodes the one answer. */
typedef struct raw {
  bool done;
  int err;
  ld_store_response_t res;
} raw_t;

static void on_raw(const uint8_t *resp, size_t len, int err, void *ud) {
  raw_t *r = ud;
  r->done = true;
  r->err = err;
  const uint8_t *body;
  size_t n;
  if (err == 0 && (r->err = ld_reqresp_read_frame(resp, len, 1 << 20, &body, &n)) >= 0)
    r->err = ld_store_decode_response(body, n, 0, &r->res);
}

static void send_raw(const uint8_t *req, size_t len, raw_t *r) {
  memset(r, 0, sizeof *r);
  ld_reqresp_opts_t o = {.max_bytes = 1 << 20, .frame_max = 1 << 20};
  assert_int_equal(
      ld_reqresp_request(g_b, g_conn, LD_STORE_PROTOCOL, req, len, &o, on_raw, r, NULL), 0);
  assert_true(sh_run_until(&g_loop, flag_set, &r->done, 30000));
  assert_int_equal(r->err, 0);
}

/* ---- tests ----------------------------------------------------------------------------------- */

static void forward_pages_cover_everything_in_order(void **state) {
  (void)state;
  ld_store_query_t q;
  ld_store_query_init(&q);
  q.include_data = true;
  q.has_limit = true;
  q.limit = 100;
  pages_t *p = read_all(&q, LD_STORE_PAGING_CURSOR);
  check_coverage(p, match_all, NULL, true);
  assert_int_equal(p->n_pages, N_MSGS / 100);
  assert_int_equal(p->empty_pages, 0);
  pages_free(p);
}

static void backward_pages_cover_everything(void **state) {
  (void)state;
  ld_store_query_t q;
  ld_store_query_init(&q);
  q.forward = false;
  q.has_limit = true;
  q.limit = 100;
  pages_t *p = read_all(&q, LD_STORE_PAGING_CURSOR); /* presence only: hashes */
  check_coverage(p, match_all, NULL, false);
  assert_int_equal(p->order[p->first_of_page[0] + 99], N_MSGS - 1);
  pages_free(p);
}

static void js_waku_paging_with_a_content_filter(void **state) {
  (void)state;
  /* both time bounds fall on a timestamp shared by three messages: both are inclusive */
  content_filter_t f = {
      .pubsub = 1, .topic_a = 0, .topic_b = 2, .start = TS0 + 500 * SEC, .end = TS0 + 2500 * SEC};
  const char *topics[] = {k_topics[0], k_topics[2]};
  ld_store_query_t q;
  ld_store_query_init(&q);
  q.include_data = true;
  q.pubsub_topic = k_pubsub[1];
  q.content_topics = topics;
  q.n_content_topics = 2;
  q.has_time_start = true;
  q.time_start = f.start;
  q.has_time_end = true;
  q.time_end = f.end;
  pages_t *p = read_all(&q, LD_STORE_PAGING_UNTIL_EMPTY);
  check_coverage(p, match_content, &f, true);
  assert_int_equal(p->empty_pages, 1); /* the empty 200 page after the last message */
  assert_int_equal(p->n_pages, (p->n + 19) / 20 + 1);
  assert_int_equal(g_msgs[p->order[p->n - 1]].m.timestamp, f.end);
  pages_free(p);
  q.forward = false;
  p = read_all(&q, LD_STORE_PAGING_UNTIL_EMPTY);
  check_coverage(p, match_content, &f, false);
  assert_int_equal(p->empty_pages, 1);
  pages_free(p);
}

static void page_sizes_are_defaulted_and_clamped(void **state) {
  (void)state;
  ld_store_query_t q;
  ld_store_query_init(&q);
  answer_t a;
  ask(&q, &a);
  assert_int_equal(a.res.status_code, 200);
  assert_int_equal(a.res.n_entries, 20);
  assert_true(a.res.has_cursor);
  assert_memory_equal(a.res.cursor, g_msgs[19].hash, LD_WAKU_HASH_LEN);
  ld_store_response_clear(&a.res);
  q.has_limit = true;
  q.limit = 1000;
  ask(&q, &a);
  assert_int_equal(a.res.n_entries, 100);
  ld_store_response_clear(&a.res);
}

static void hash_lookups_and_presence(void **state) {
  (void)state;
  uint8_t hashes[100][LD_WAKU_HASH_LEN];
  int picked[100];
  for (int i = 0; i < 100; i++) {
    picked[i] = (i * 97 + 13) % N_MSGS;
    memcpy(hashes[i], g_msgs[picked[i]].hash, LD_WAKU_HASH_LEN);
  }
  ld_store_query_t q;
  ld_store_query_init(&q);
  q.include_data = true;
  q.hashes = (const uint8_t(*)[LD_WAKU_HASH_LEN])hashes;
  q.n_hashes = 100;
  q.has_limit = true;
  q.limit = 100;
  answer_t a;
  ask(&q, &a);
  assert_int_equal(a.res.status_code, 200);
  assert_int_equal(a.res.n_entries, 100);
  assert_false(a.res.has_cursor);
  for (size_t i = 0; i < a.res.n_entries; i++) {
    int k = index_of(a.res.entries[i].hash);
    assert_true(k >= 0);
    if (i > 0)
      assert_true(k > index_of(a.res.entries[i - 1].hash));
    assert_string_equal(a.res.entries[i].pubsub_topic, k_pubsub[g_msgs[k].pubsub]);
    assert_true(ld_waku_message_equal(&a.res.entries[i].message, &g_msgs[k].m));
  }
  ld_store_response_clear(&a.res);
  /* presence: half stored, half not */
  for (int i = 50; i < 100; i++)
    memset(hashes[i], 0xa0 + (i % 16), LD_WAKU_HASH_LEN);
  q.include_data = false;
  ask(&q, &a);
  assert_int_equal(a.res.n_entries, 50);
  for (size_t i = 0; i < a.res.n_entries; i++) {
    assert_null(a.res.entries[i].pubsub_topic);
    int k = index_of(a.res.entries[i].hash);
    bool asked = false;
    for (int j = 0; j < 50; j++)
      asked = asked || picked[j] == k;
    assert_true(asked);
  }
  ld_store_response_clear(&a.res);
  /* a hash lookup paged as js-waku does ends with an empty page */
  q.n_hashes = 50;
  q.has_limit = false;
  pages_t *p = read_all(&q, LD_STORE_PAGING_UNTIL_EMPTY);
  assert_int_equal(p->n, 50);
  assert_int_equal(p->n_pages, 4); /* 20 + 20 + 10 + the empty page */
  assert_int_equal(p->empty_pages, 1);
  pages_free(p);
}

static void assert_refused(const ld_store_response_t *res, uint32_t code, const char *desc) {
  assert_int_equal(res->status_code, code);
  assert_string_equal(res->status_desc, desc);
  assert_string_equal(res->request_id, "");
  assert_int_equal(res->n_entries, 0);
}

static void errors_are_answered_as_nwaku_does(void **state) {
  (void)state;
  ld_store_query_t q;
  ld_store_query_init(&q);
  q.request_id = "err";
  answer_t a;
  q.has_cursor = true;
  memset(q.cursor, 0x5c, LD_WAKU_HASH_LEN); /* not stored */
  ask(&q, &a);
  assert_refused(&a.res, 300, "BAD_RESPONSE: archive error: DRIVER_ERROR: cursor not found");
  ld_store_response_clear(&a.res);
  const char *topics[11];
  for (int i = 0; i < 11; i++)
    topics[i] = k_topics[i % 4];
  q.content_topics = topics;
  q.n_content_topics = 11;
  memcpy(q.cursor, g_msgs[5].hash, LD_WAKU_HASH_LEN);
  ask(&q, &a);
  assert_refused(&a.res, 300,
                 "BAD_RESPONSE: archive error: INVALID_QUERY: too many content topics");
  ld_store_response_clear(&a.res);
  /* time_start after time_end: an empty page, as nwaku's driver finds no row (the cursor is
   * still looked up first) */
  q.n_content_topics = 0;
  q.has_cursor = false;
  q.has_time_start = q.has_time_end = true;
  q.time_start = TS0 + 10 * SEC;
  q.time_end = TS0;
  ask(&q, &a);
  assert_int_equal(a.res.status_code, 200);
  assert_string_equal(a.res.status_desc, "OK");
  assert_string_equal(a.res.request_id, "err");
  assert_int_equal(a.res.n_entries, 0);
  assert_false(a.res.has_cursor);
  ld_store_response_clear(&a.res);
  q.has_cursor = true;
  memcpy(q.cursor, g_msgs[5].hash, LD_WAKU_HASH_LEN);
  ask(&q, &a);
  assert_int_equal(a.res.status_code, 200);
  assert_int_equal(a.res.n_entries, 0);
  ld_store_response_clear(&a.res);
  memset(q.cursor, 0x5c, LD_WAKU_HASH_LEN);
  ask(&q, &a);
  assert_refused(&a.res, 300, "BAD_RESPONSE: archive error: DRIVER_ERROR: cursor not found");
  ld_store_response_clear(&a.res);
  /* an all-zero cursor and a broken request, sent as raw bytes (our client refuses the first) */
  uint8_t zero_cursor[41] = {40, 0x0a, 0x03, 'e', 'r', 'r', 0x9a, 0x03, 0x20};
  const uint8_t broken[] = {3, 0x0a, 0x05, 'x'};
  raw_t r;
  send_raw(zero_cursor, sizeof zero_cursor, &r);
  assert_refused(&r.res, 300, "BAD_RESPONSE: archive error: INVALID_QUERY: all zeroes cursor hash");
  ld_store_response_clear(&r.res);
  /* cursors shorter than 32 bytes are zero-padded, as nwaku's decoder does: all zeroes, or not
   * found */
  const uint8_t zero_short[] = {12, 0x0a, 0x03, 'e', 'r', 'r', 0x9a, 0x03, 0x04, 0, 0, 0, 0};
  send_raw(zero_short, sizeof zero_short, &r);
  assert_refused(&r.res, 300, "BAD_RESPONSE: archive error: INVALID_QUERY: all zeroes cursor hash");
  ld_store_response_clear(&r.res);
  uint8_t short_cursor[9 + 16] = {24, 0x0a, 0x03, 'e', 'r', 'r', 0x9a, 0x03, 16};
  memcpy(short_cursor + 9, g_msgs[5].hash, 16);
  send_raw(short_cursor, sizeof short_cursor, &r);
  assert_refused(&r.res, 300, "BAD_RESPONSE: archive error: DRIVER_ERROR: cursor not found");
  ld_store_response_clear(&r.res);
  send_raw(broken, sizeof broken, &r);
  assert_refused(&r.res, 400, "decoding rpc failed: MessageIncomplete");
  ld_store_response_clear(&r.res);
}

int main(void) {
  setvbuf(stdout, NULL, _IONBF, 0);
  make_messages();
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(forward_pages_cover_everything_in_order),
      cmocka_unit_test(backward_pages_cover_everything),
      cmocka_unit_test(js_waku_paging_with_a_content_filter),
      cmocka_unit_test(page_sizes_are_defaulted_and_clamped),
      cmocka_unit_test(hash_lookups_and_presence),
      cmocka_unit_test(errors_are_answered_as_nwaku_does),
  };
  int failed = cmocka_run_group_tests_name("sqlite", tests, setup_sqlite, teardown);
  failed += cmocka_run_group_tests_name("memory", tests, setup_memory, teardown);
  free(g_msgs);
  return failed;
}
