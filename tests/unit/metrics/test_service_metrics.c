/* The service metrics: every family registered under its nwaku name and type, no samples without
 * sources; the archive's figures from a memory:// archive with a fake clock (ingest refusals,
 * the stored-messages count and its timer, a count answering after its collector is gone); and
 * the store, lightpush, filter and peer-exchange servers on a switch, driven by their clients
 * from a second switch over loopback, with the exposed values checked against what was done. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <uv.h>

#include "base/buf.h"
#include "base/error.h"
#include "metrics/service_metrics.h"
#include "switch_harness.h"
#include "waku/enr/enr.h"
#include "waku/filter/client.h"
#include "waku/lightpush/client.h"
#include "waku/core/codecs.h"
#include "waku/store/client.h"

#define PS "/waku/2/rs/0/0"
#define CT "/app/1/chat/proto"
#define T0 (1700000000ll * 1000000000ll)
#define SEC 1000000000ll
#define WAIT_MS 10000
#define N_FAMILIES 21

static uv_loop_t g_loop;
static int64_t g_now = T0;

/* ---- exposition helpers ---------------------------------------------------------------------- */

static char *expose(ld_metrics_t *reg) {
  ld_buf_t out;
  ld_buf_init(&out);
  assert_int_equal(ld_metrics_expose(reg, &out), 0);
  char *text = malloc(out.len + 1);
  assert_non_null(text);
  if (out.len > 0)
    memcpy(text, out.data, out.len);
  text[out.len] = '\0';
  ld_buf_clear(&out);
  return text;
}

static size_t count_lines(const char *text, const char *prefix) {
  size_t n = 0;
  for (const char *p = text; *p != '\0';) {
    n += strncmp(p, prefix, strlen(prefix)) == 0;
    const char *eol = strchr(p, '\n');
    p = eol != NULL ? eol + 1 : p + strlen(p);
  }
  return n;
}

/* The value of the sample line "<series> <value>", or -1 when there is none. */
static double sample(const char *text, const char *series) {
  size_t n = strlen(series);
  for (const char *p = text; *p != '\0';) {
    if (strncmp(p, series, n) == 0 && p[n] == ' ')
      return strtod(p + n + 1, NULL);
    const char *eol = strchr(p, '\n');
    p = eol != NULL ? eol + 1 : p + strlen(p);
  }
  return -1;
}

static const char *const k_types[N_FAMILIES] = {
    "waku_archive_messages gauge",
    "waku_archive_errors_total counter",
    "waku_archive_query_duration_seconds histogram",
    "waku_store_queries_total counter",
    "waku_store_errors_total counter",
    "waku_lightpush_v3_messages_total counter",
    "waku_lightpush_v3_errors_total counter",
    "waku_lightpush_messages_total counter",
    "waku_lightpush_errors_total counter",
    "waku_filter_requests_total counter",
    "waku_filter_errors_total counter",
    "waku_filter_subscriptions gauge",
    "waku_px_peers_sent_total counter",
    "waku_px_errors_total counter",
    "waku_service_network_bytes_total counter",
    "reconciliation_roundtrips histogram",
    "reconciliation_differences histogram",
    "total_bytes_exchanged_total counter",
    "total_transfer_messages_exchanged_total counter",
    "total_messages_cached gauge",
    "waku_store_sync_rejected_messages_total counter",
};

static void assert_types(const char *text) {
  for (size_t i = 0; i < N_FAMILIES; i++) {
    char line[128];
    snprintf(line, sizeof line, "# TYPE %s\n", k_types[i]);
    assert_non_null(strstr(text, line));
  }
}

/* ---- loop and archive ------------------------------------------------------------------------ */

static int64_t fake_now(void *data) {
  (void)data;
  return g_now;
}

static bool flag_set(void *ud) {
  return *(bool *)ud;
}

static void on_open(ld_archive_t *a, int err, const char *why, void *ud) {
  (void)why;
  assert_int_equal(err, 0);
  *(ld_archive_t **)ud = a;
}

static bool archive_set(void *ud) {
  return *(ld_archive_t **)ud != NULL;
}

static ld_archive_t *open_archive(void) {
  ld_archive_config_t cfg;
  ld_archive_config_default(&cfg);
  cfg.url = "memory://";
  cfg.now_ns = fake_now;
  ld_archive_t *a = NULL;
  assert_int_equal(ld_archive_open(&g_loop, &cfg, on_open, &a), 0);
  assert_true(sh_run_until(&g_loop, archive_set, &a, WAIT_MS));
  return a;
}

static void on_closed(void *ud) {
  *(bool *)ud = true;
}

static void close_archive(ld_archive_t *a) {
  bool closed = false;
  ld_archive_close(a, on_closed, &closed);
  assert_true(sh_run_until(&g_loop, flag_set, &closed, WAIT_MS));
}

typedef struct message {
  char payload[32];
  ld_waku_message_t m;
  uint8_t hash[LD_WAKU_HASH_LEN];
} message_t;

static void make_message(message_t *x, int i, int64_t ts, bool ephemeral) {
  snprintf(x->payload, sizeof x->payload, "message %d", i);
  ld_waku_message_init(&x->m);
  x->m.payload = (const uint8_t *)x->payload;
  x->m.payload_len = strlen(x->payload);
  x->m.content_topic = CT;
  x->m.content_topic_len = strlen(CT);
  x->m.timestamp = ts;
  x->m.ephemeral = ephemeral;
  assert_int_equal(ld_waku_message_hash(PS, &x->m, x->hash), 0);
}

static int g_stored_ok;

static void on_stored(int err, void *ud) {
  (void)ud;
  assert_int_equal(err, 0);
  g_stored_ok++;
}

static bool stored_reached(void *ud) {
  return g_stored_ok >= *(int *)ud;
}

/* Ingests message i at timestamp ts; returns the verdict. */
static int ingest(ld_archive_t *a, int i, int64_t ts, bool ephemeral) {
  message_t x;
  make_message(&x, i, ts, ephemeral);
  return ld_archive_handle_message(a, PS, &x.m, x.hash, on_stored, NULL);
}

static void ingest_accepted(ld_archive_t *a, int first, int n) {
  int want = g_stored_ok + n;
  for (int i = first; i < first + n; i++)
    assert_int_equal(ingest(a, i, g_now - i, false), LD_ARCHIVE_ACCEPTED);
  assert_true(sh_run_until(&g_loop, stored_reached, &want, WAIT_MS));
}

typedef struct stored_wait {
  ld_service_metrics_t *sm;
  uint64_t want;
} stored_wait_t;

static bool stored_is(void *ud) {
  stored_wait_t *w = ud;
  uint64_t n;
  return ld_service_metrics_stored(w->sm, &n) && n == w->want;
}

static int setup(void **state) {
  (void)state;
  g_stored_ok = 0;
  return uv_loop_init(&g_loop);
}

static int teardown(void **state) {
  (void)state;
  sh_run_for(&g_loop, 20);
  assert_int_equal(uv_loop_close(&g_loop), 0);
  return 0;
}

/* ---- without sources ------------------------------------------------------------------------- */

static void collect_nothing(ld_metrics_emitter_t *e, void *ud) {
  (void)e;
  (void)ud;
}

static void families_without_sources(void **state) {
  (void)state;
  ld_metrics_t *reg = ld_metrics_new();
  ld_service_metrics_sources_t src = {0};
  ld_service_metrics_t *sm = ld_service_metrics_new(reg, &src);
  assert_non_null(sm);
  char *text = expose(reg);
  assert_types(text);
  assert_int_equal(count_lines(text, "# HELP "), N_FAMILIES);
  assert_int_equal(count_lines(text, ""), 2 * N_FAMILIES); /* no samples at all */
  free(text);
  uint64_t n = 7;
  assert_false(ld_service_metrics_stored(sm, &n));
  assert_int_equal(n, 7);
  assert_int_equal(ld_service_metrics_refresh(sm), LD_ERR_STATE);
  /* the names are taken */
  assert_null(ld_service_metrics_new(reg, &src));
  ld_service_metrics_free(sm);
  text = expose(reg);
  assert_string_equal(text, "");
  free(text);
  /* a name taken by someone else: nothing of ours stays registered */
  assert_int_equal(ld_metrics_add_collector(reg, "waku_px_errors", LD_METRIC_GAUGE, "x", NULL, 0,
                                            collect_nothing, NULL),
                   0);
  assert_null(ld_service_metrics_new(reg, &src));
  assert_int_equal(ld_metrics_remove_family(reg, "waku_px_errors"), 0);
  text = expose(reg);
  assert_string_equal(text, "");
  free(text);
  sm = ld_service_metrics_new(reg, &src);
  assert_non_null(sm);
  ld_service_metrics_set_archive(sm, NULL);
  ld_service_metrics_set_store(sm, NULL);
  ld_service_metrics_set_lightpush(sm, NULL);
  ld_service_metrics_set_filter(sm, NULL);
  ld_service_metrics_set_px(sm, NULL);
  ld_service_metrics_set_store_sync(sm, NULL);
  ld_service_metrics_free(sm);
  ld_service_metrics_free(NULL);
  ld_metrics_free(reg);
}

/* ---- the archive ----------------------------------------------------------------------------- */

static void archive_figures(void **state) {
  (void)state;
  ld_archive_t *a = open_archive();
  ingest_accepted(a, 0, 3);
  assert_int_equal(ingest(a, 90, g_now - 21 * SEC, false), LD_ARCHIVE_TOO_OLD);
  assert_int_equal(ingest(a, 91, g_now + 21 * SEC, false), LD_ARCHIVE_FUTURE);
  assert_int_equal(ingest(a, 92, g_now + 30 * SEC, false), LD_ARCHIVE_FUTURE);
  assert_int_equal(ingest(a, 93, g_now, true), LD_ARCHIVE_EPHEMERAL);

  ld_metrics_t *reg = ld_metrics_new();
  ld_service_metrics_sources_t src = {.loop = &g_loop, .archive_count_interval_ms = 40};
  ld_service_metrics_t *sm = ld_service_metrics_new(reg, &src);
  assert_non_null(sm);
  char *text = expose(reg);
  assert_int_equal(count_lines(text, "waku_archive"), 0);
  free(text);

  /* set: counted at once */
  ld_service_metrics_set_archive(sm, a);
  stored_wait_t w = {sm, 3};
  assert_true(sh_run_until(&g_loop, stored_is, &w, WAIT_MS));
  text = expose(reg);
  assert_types(text);
  assert_true(strstr(text, "# HELP waku_archive_messages number of historical messages\n"
                           "# TYPE waku_archive_messages gauge\n"
                           "waku_archive_messages{type=\"stored\"} 3\n") != NULL);
  assert_true(sample(text, "waku_archive_errors_total{type=\"invalid_message_too_old\"}") == 1);
  assert_true(
      sample(text, "waku_archive_errors_total{type=\"invalid_message_future_timestamp\"}") == 2);
  assert_true(sample(text, "waku_archive_errors_total{type=\"insert_failure\"}") == 0);
  assert_int_equal(count_lines(text, "waku_archive_errors_total{"), 3);
  assert_int_equal(count_lines(text, "waku_archive_query_duration_seconds"), 0); /* no store */
  free(text);

  /* the timer brings newer messages in without being asked */
  ingest_accepted(a, 3, 2);
  w.want = 5;
  assert_true(sh_run_until(&g_loop, stored_is, &w, WAIT_MS));
  text = expose(reg);
  assert_true(sample(text, "waku_archive_messages{type=\"stored\"}") == 5);
  free(text);
  assert_int_equal(ld_service_metrics_refresh(sm), 0);
  assert_int_equal(ld_service_metrics_refresh(sm), 0); /* one under way already */

  /* unset (with a count under way): no archive samples, the late answer is ignored */
  ld_service_metrics_set_archive(sm, NULL);
  uint64_t n;
  assert_false(ld_service_metrics_stored(sm, &n));
  sh_run_for(&g_loop, 100);
  assert_false(ld_service_metrics_stored(sm, &n));
  text = expose(reg);
  assert_int_equal(count_lines(text, "waku_archive_"), 0);
  assert_int_equal(count_lines(text, ""), 2 * N_FAMILIES);
  free(text);

  /* a count still under way when the collector goes */
  ld_service_metrics_set_archive(sm, a);
  ld_service_metrics_free(sm);
  sh_run_for(&g_loop, 50);
  text = expose(reg);
  assert_string_equal(text, "");
  free(text);

  /* a count under way while the archive closes (answered or failed, never lost) */
  sm = ld_service_metrics_new(reg, &(ld_service_metrics_sources_t){.archive = a});
  assert_non_null(sm);
  close_archive(a);
  ld_service_metrics_set_archive(sm, NULL);
  ld_service_metrics_free(sm);
  ld_metrics_free(reg);
}

/* ---- the servers ----------------------------------------------------------------------------- */

typedef struct services {
  ld_archive_t *archive;
  ld_switch_t *sa, *sb; /* servers on A, clients on B */
  ld_conn_t *conn;      /* B → A */
  ld_store_server_t *store;
  ld_lightpush_server_t *lightpush;
  ld_filter_server_t *filter;
  ld_px_server_t *px;
  ld_filter_client_t *fc;
  ld_enr_t enrs[3];
} services_t;

static int g_publish_result;

static int fake_publish(void *ctx, const char *pubsub_topic, const ld_waku_message_t *msg,
                        char *why, size_t why_len) {
  (void)ctx;
  (void)pubsub_topic;
  (void)msg;
  (void)why;
  (void)why_len;
  return g_publish_result;
}

static int archive_backend(void *ctx, const ld_archive_query_t *q, ld_archive_query_fn done,
                           void *user_data) {
  return ld_archive_query(ctx, q, done, user_data);
}

static size_t provide(void *ud, const ld_peerid_t *requester, const ld_enr_t **out, size_t max) {
  (void)requester;
  services_t *s = ud;
  size_t n = 0;
  for (; n < 3 && n < max; n++)
    out[n] = &s->enrs[n];
  return n;
}

static void make_enrs(services_t *s) {
  for (int i = 0; i < 3; i++) {
    ld_privkey_t key;
    assert_int_equal(ld_privkey_generate(&key, LD_KEY_SECP256K1), 0);
    ld_multiaddr_t addr;
    char text[64];
    snprintf(text, sizeof text, "/ip4/10.1.%d.1/tcp/60000", i + 1);
    assert_int_equal(ld_multiaddr_parse(&addr, text), 0);
    ld_enr_node_config_t cfg = {.addrs = &addr, .n_addrs = 1, .waku2 = 0x01};
    assert_int_equal(ld_enr_build_node(&s->enrs[i], &key, &cfg), 0);
  }
}

static void services_start(services_t *s) {
  memset(s, 0, sizeof *s);
  s->archive = open_archive();
  ingest_accepted(s->archive, 0, 4);
  s->sa = sh_switch_new(&g_loop, NULL);
  s->sb = sh_switch_new(&g_loop, NULL);
  ld_store_backend_t be = {.query = archive_backend, .ctx = s->archive};
  s->store = ld_store_server_new(s->sa, &be, NULL);
  ld_lightpush_server_config_t lc;
  ld_lightpush_server_config_default(&lc);
  lc.publish = fake_publish;
  s->lightpush = ld_lightpush_server_new(s->sa, &lc);
  s->filter = ld_filter_server_new(s->sa, &g_loop, NULL);
  make_enrs(s);
  ld_px_server_config_t pc;
  ld_px_server_config_default(&pc);
  pc.provider = provide;
  pc.provider_data = s;
  s->px = ld_px_server_new(s->sa, &pc);
  assert_true(s->store != NULL && s->lightpush != NULL && s->filter != NULL && s->px != NULL);
  s->fc = ld_filter_client_new(s->sb, NULL);
  assert_non_null(s->fc);
  ld_multiaddr_t addr;
  sh_listen_local(s->sa, &addr);
  int err = -1;
  s->conn = sh_dial_wait(s->sb, &g_loop, &addr, &err);
  assert_int_equal(err, 0);
}

static void services_stop(services_t *s) {
  sh_switch_close(s->sb, &g_loop);
  sh_switch_close(s->sa, &g_loop);
  ld_filter_client_free(s->fc);
  ld_store_server_free(s->store);
  ld_lightpush_server_free(s->lightpush);
  ld_filter_server_free(s->filter);
  ld_px_server_free(s->px);
  close_archive(s->archive);
}

/* One request of each client, waited for. */

typedef struct done_flag {
  bool done;
  int err;
  uint32_t status;
  size_t n;
} done_flag_t;

static void on_store(int err, ld_store_response_t *res, void *ud) {
  done_flag_t *d = ud;
  d->done = true;
  d->err = err;
  d->status = res->status_code;
  d->n = res->n_entries;
}

static void store_query(services_t *s) {
  done_flag_t d = {0};
  ld_store_query_t q;
  ld_store_query_init(&q);
  q.include_data = true;
  ld_store_target_t to = {.conn = s->conn};
  assert_int_equal(ld_store_client_query(s->sb, &to, &q, NULL, on_store, &d, NULL), 0);
  assert_true(sh_run_until(&g_loop, flag_set, &d.done, WAIT_MS));
  assert_int_equal(d.err, 0);
  assert_int_equal(d.status, 200);
  assert_int_equal(d.n, 4);
}

static void on_push_v3(const ld_lightpush_result_t *res, void *ud) {
  done_flag_t *d = ud;
  d->done = true;
  d->err = res->err;
  d->status = res->status_code;
}

static void on_push_legacy(const ld_lightpush_legacy_result_t *res, void *ud) {
  done_flag_t *d = ud;
  d->done = true;
  d->err = res->err;
  d->status = res->success ? 200 : 0;
}

static void push(services_t *s, bool legacy, int publish_result, uint32_t want_status) {
  message_t x;
  make_message(&x, 100, g_now, false);
  g_publish_result = publish_result;
  done_flag_t d = {0};
  if (legacy)
    assert_int_equal(ld_lightpush_legacy_client_push(s->sb, s->conn, PS, &x.m, on_push_legacy, &d),
                     0);
  else
    assert_int_equal(ld_lightpush_client_push(s->sb, s->conn, PS, &x.m, on_push_v3, &d), 0);
  assert_true(sh_run_until(&g_loop, flag_set, &d.done, WAIT_MS));
  assert_int_equal(d.err, 0);
  assert_int_equal(d.status, want_status);
}

static void on_filter(const ld_filter_result_t *res, void *ud) {
  done_flag_t *d = ud;
  d->done = true;
  d->err = res->err;
  d->status = res->status_code;
}

static int g_pushed;

static void on_filter_push(const ld_filter_push_t *p, void *ud) {
  (void)p;
  (void)ud;
  g_pushed++;
}

static bool pushed(void *ud) {
  (void)ud;
  return g_pushed > 0;
}

static void filter_requests(services_t *s) {
  done_flag_t d = {0};
  const char *topics[] = {CT};
  assert_int_equal(ld_filter_client_subscribe(s->fc, s->conn, PS, topics, 1, on_filter, &d), 0);
  assert_true(sh_run_until(&g_loop, flag_set, &d.done, WAIT_MS));
  assert_int_equal(d.status, 200);
  d = (done_flag_t){0};
  assert_int_equal(ld_filter_client_ping(s->fc, s->conn, on_filter, &d), 0);
  assert_true(sh_run_until(&g_loop, flag_set, &d.done, WAIT_MS));
  assert_int_equal(d.status, 200);
  g_pushed = 0;
  ld_filter_client_set_push_handler(s->fc, on_filter_push, NULL);
  message_t x;
  make_message(&x, 200, g_now, false);
  assert_int_equal(ld_filter_server_handle_message(s->filter, PS, &x.m, x.hash), 1);
  assert_true(sh_run_until(&g_loop, pushed, NULL, WAIT_MS));
}

static void on_px(const ld_px_response_t *resp, int err, void *ud) {
  done_flag_t *d = ud;
  d->done = true;
  d->err = err;
  d->status = resp != NULL ? resp->status_code : 0;
  d->n = resp != NULL ? resp->n_enrs : 0;
}

static void px_request(services_t *s) {
  done_flag_t d = {0};
  assert_int_equal(ld_px_client_request(s->sb, s->conn, 5, on_px, &d), 0);
  assert_true(sh_run_until(&g_loop, flag_set, &d.done, WAIT_MS));
  assert_int_equal(d.err, 0);
  assert_int_equal(d.status, LD_PX_STATUS_SUCCESS);
  assert_int_equal(d.n, 3);
}

/* A request that does not decode (an unterminated varint) on a stream of `proto`, which is then
 * half-closed; waits until the stream is over. */
typedef struct raw {
  bool closed;
  int err;
} raw_t;

static void raw_on_data(ld_stream_t *st, const uint8_t *data, size_t len) {
  (void)st;
  (void)data;
  (void)len;
}

static void raw_on_close(ld_stream_t *st, int err) {
  (void)err;
  ((raw_t *)ld_stream_user_data(st))->closed = true;
}

static const ld_stream_handler_t k_raw_handler = {.on_data = raw_on_data, .on_close = raw_on_close};

static void raw_opened(ld_stream_t *st, int err, void *ud) {
  raw_t *r = ud;
  if (err != 0) {
    r->err = err;
    r->closed = true;
    return;
  }
  ld_stream_set_handler(st, &k_raw_handler, r);
  static const uint8_t junk[] = {0x03, 0xff, 0xff, 0xff};
  assert_int_equal(ld_stream_write(st, junk, sizeof junk), 0);
  assert_int_equal(ld_stream_close_write(st), 0);
}

static void send_junk(services_t *s, const char *proto) {
  raw_t r = {0};
  const char *protos[] = {proto};
  assert_int_equal(ld_switch_open_stream(s->sb, s->conn, protos, 1, raw_opened, &r), 0);
  assert_true(sh_run_until(&g_loop, flag_set, &r.closed, WAIT_MS));
  assert_int_equal(r.err, 0);
}

static void check_servers_exposed(const char *text, services_t *s) {
  assert_types(text);
  /* store */
  assert_true(sample(text, "waku_store_queries_total") == 1);
  assert_int_equal(count_lines(text, "waku_store_errors_total{"), LD_STORE_ERROR_KIND_COUNT);
  assert_true(sample(text, "waku_store_errors_total{type=\"decode_rpc_failure\"}") == 1);
  assert_true(sample(text, "waku_store_errors_total{type=\"too_many_requests\"}") == 0);
  assert_true(sample(text, "waku_archive_query_duration_seconds_count") == 1);
  assert_true(sample(text, "waku_archive_query_duration_seconds_bucket{le=\"+Inf\"}") == 1);
  assert_true(sample(text, "waku_archive_query_duration_seconds_bucket{le=\"10\"}") == 1);
  assert_true(sample(text, "waku_archive_query_duration_seconds_bucket{le=\"0.0001\"}") >= 0);
  assert_int_equal(count_lines(text, "waku_archive_query_duration_seconds_bucket{"),
                   LD_STORE_LATENCY_BUCKETS + 1);
  double sum = sample(text, "waku_archive_query_duration_seconds_sum");
  assert_true(sum > 0 && sum < WAIT_MS / 1000.0);
  ld_store_server_stats_t ss;
  ld_store_server_get_stats(s->store, &ss);
  assert_true(ss.bytes_in > 0 && ss.bytes_out > ss.bytes_in);
  assert_true(sample(text, "waku_service_network_bytes_total{service=\"/vac/waku/store-query/"
                           "3.0.0\",direction=\"in\"}") == (double)ss.bytes_in);
  assert_true(sample(text, "waku_service_network_bytes_total{service=\"/vac/waku/store-query/"
                           "3.0.0\",direction=\"out\"}") == (double)ss.bytes_out);
  /* lightpush */
  assert_true(sample(text, "waku_lightpush_v3_messages_total{type=\"PushRequest\"}") == 2);
  assert_true(sample(text, "waku_lightpush_v3_errors_total{type=\"420\"}") == 1);
  assert_true(sample(text, "waku_lightpush_v3_errors_total{type=\"400\"}") == 1);
  assert_true(sample(text, "waku_lightpush_v3_errors_total{type=\"505\"}") == 0);
  assert_true(sample(text, "waku_lightpush_v3_errors_total{type=\"200\"}") == -1);
  assert_int_equal(count_lines(text, "waku_lightpush_v3_errors_total{"), LD_LIGHTPUSH_N_CODES - 1);
  assert_true(sample(text, "waku_lightpush_messages_total{type=\"PushRequest\"}") == 2);
  assert_true(sample(text, "waku_lightpush_errors_total{type=\"not_published_to_any_peer\"}") == 1);
  assert_true(sample(text, "waku_lightpush_errors_total{type=\"decode_rpc_failure\"}") == 1);
  assert_int_equal(count_lines(text, "waku_lightpush_errors_total{"), LD_LIGHTPUSH_LEGACY_N_ERRORS);
  /* filter */
  assert_true(sample(text, "waku_filter_requests_total{type=\"SUBSCRIBE\"}") == 1);
  assert_true(sample(text, "waku_filter_requests_total{type=\"SUBSCRIBER_PING\"}") == 1);
  assert_true(sample(text, "waku_filter_requests_total{type=\"UNSUBSCRIBE\"}") == 0);
  assert_true(sample(text, "waku_filter_requests_total{type=\"UNSUBSCRIBE_ALL\"}") == 0);
  assert_true(sample(text, "waku_filter_errors_total{type=\"decode_rpc_failure\"}") == 1);
  assert_true(sample(text, "waku_filter_errors_total{type=\"push_timeout_failure\"}") == 0);
  assert_true(sample(text, "waku_filter_errors_total{type=\"dial_failure\"}") == 0);
  assert_true(sample(text, "waku_filter_subscriptions") == 1);
  ld_filter_server_stats_t fs;
  ld_filter_server_get_stats(s->filter, &fs);
  assert_true(fs.push_bytes > 0);
  assert_true(sample(text, "waku_service_network_bytes_total{service=\"/vac/waku/filter-push/"
                           "2.0.0-beta1\",direction=\"out\"}") == (double)fs.push_bytes);
  assert_int_equal(count_lines(text, "waku_service_network_bytes_total{"), 3);
  /* peer exchange */
  assert_true(sample(text, "waku_px_peers_sent_total") == 3);
  assert_true(sample(text, "waku_px_errors_total{type=\"decode_rpc_failure\"}") == 1);
  assert_true(sample(text, "waku_px_errors_total{type=\"px_failure\"}") == 0);
  /* the archive behind the store */
  assert_true(sample(text, "waku_archive_messages{type=\"stored\"}") == 4);
  assert_true(sample(text, "waku_archive_errors_total{type=\"insert_failure\"}") == 0);
}

static void server_figures(void **state) {
  (void)state;
  services_t s;
  services_start(&s);
  ld_metrics_t *reg = ld_metrics_new();
  ld_service_metrics_sources_t src = {.archive = s.archive,
                                      .store = s.store,
                                      .lightpush = s.lightpush,
                                      .filter = s.filter,
                                      .px = s.px,
                                      .loop = &g_loop};
  ld_service_metrics_t *sm = ld_service_metrics_new(reg, &src);
  assert_non_null(sm);
  stored_wait_t w = {sm, 4};
  assert_true(sh_run_until(&g_loop, stored_is, &w, WAIT_MS));

  char *text = expose(reg);
  assert_true(sample(text, "waku_store_queries_total") == 0);
  assert_true(sample(text, "waku_archive_query_duration_seconds_count") == 0);
  assert_true(sample(text, "waku_lightpush_v3_messages_total{type=\"PushRequest\"}") == 0);
  assert_true(sample(text, "waku_filter_subscriptions") == 0);
  assert_true(sample(text, "waku_px_peers_sent_total") == 0);
  free(text);

  store_query(&s);
  push(&s, false, 2, LD_LIGHTPUSH_SUCCESS);
  push(&s, false, LD_ERR_EXISTS, LD_LIGHTPUSH_INVALID_MESSAGE);
  push(&s, true, 2, 200);
  push(&s, true, 0, 0);
  filter_requests(&s);
  px_request(&s);
  send_junk(&s, LD_WAKU_STORE_CODEC);
  send_junk(&s, LD_WAKU_LIGHTPUSH_CODEC);
  send_junk(&s, LD_WAKU_LEGACY_LIGHTPUSH_CODEC);
  send_junk(&s, LD_WAKU_FILTER_SUBSCRIBE_CODEC);
  send_junk(&s, LD_WAKU_PEER_EXCHANGE_CODEC);

  text = expose(reg);
  check_servers_exposed(text, &s);
  free(text);

  /* sources removed one by one take their samples with them */
  ld_service_metrics_set_store(sm, NULL);
  ld_service_metrics_set_lightpush(sm, NULL);
  text = expose(reg);
  assert_int_equal(count_lines(text, "waku_store_"), 0);
  assert_int_equal(count_lines(text, "waku_archive_query_duration_seconds_"), 0);
  assert_int_equal(count_lines(text, "waku_lightpush_"), 0);
  assert_int_equal(count_lines(text, "waku_service_network_bytes_total{"), 1);
  assert_true(sample(text, "waku_filter_subscriptions") == 1);
  free(text);
  ld_service_metrics_set_filter(sm, NULL);
  ld_service_metrics_set_px(sm, NULL);
  ld_service_metrics_set_archive(sm, NULL);
  text = expose(reg);
  assert_int_equal(count_lines(text, ""), 2 * N_FAMILIES);
  free(text);
  ld_service_metrics_set_store(sm, s.store);
  text = expose(reg);
  assert_true(sample(text, "waku_store_queries_total") == 1);
  free(text);

  ld_service_metrics_free(sm);
  ld_metrics_free(reg);
  services_stop(&s);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(families_without_sources),
      cmocka_unit_test_setup_teardown(archive_figures, setup, teardown),
      cmocka_unit_test_setup_teardown(server_figures, setup, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
