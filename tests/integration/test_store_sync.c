/* Store-sync between real nodes on loopback.
 *
 * Convergence: two store nodes whose archives (SQLite files, then PostgreSQL schemas when
 * LD_TEST_PG_URL is set; LD_REQUIRE_PG makes its absence a failure) hold disjoint halves of
 * 10,000 messages on two shards start with store-sync and reconcile once: afterwards both archives
 * hold exactly the 10,000 messages, every hash checked on both, and both item sets hold them; a
 * second session finds nothing; the metrics show the session under nwaku's names. With
 * --store-sync-interval=1 two nodes converge by themselves (the periodic session with a peer found
 * by identify), and the ENR carries the Sync bit.
 *
 * Bad peers, against one store node: a bare libp2p peer that pushes a message no session asked
 * for, one that lists messages in a session and then pushes them out of the window (old, and
 * more than 20 s ahead), one that pushes a message on a protected shard without the key's
 * signature, and one that pushes bytes that are no message: each is refused (the archive and the
 * item sets unchanged), disconnected and banned (a new session from it is refused).
 *
 * RLN-relay: a store node with RLN-relay refuses a transferred message without a valid proof (none,
 * or one made for another message) exactly as relay would, cutting the peer off, and stores a
 * solicited one with a valid proof although it is minutes old (no clock-gap rule on transfers).
 *
 * Bounded sessions: a peer that opens a session and goes silent is cut at the read deadline, one
 * that trickles bytes is cut at the session deadline, one that never stops answering is cut
 * after 32 payloads, and sessions beyond the cap (per peer and in total) are refused. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <libpq-fe.h>
#include <uv.h>

#include "base/clock.h"
#include "base/error.h"
#include "base/hex.h"
#include "crypto/crypto.h"
#include "metrics/metrics.h"
#include "metrics/service_metrics.h"
#include "node_harness.h"
#include "rln_harness.h"
#include "p2p/reqresp.h"
#include "switch_harness.h"
#include "waku/archive/archive.h"
#include "waku/enr/enr.h"
#include "waku/relay/validators.h"
#include "waku/sync/codec.h"
#include "waku/sync/session.h"
#include "waku/sync/service.h"
#include "waku/sync/transfer.h"

#define SEC 1000000000ll
#define WAIT_MS 60000
#define N_MSGS 10000
#define CLUSTER 0
static const char *const k_topics[2] = {"/waku/2/rs/0/0", "/waku/2/rs/0/1"};
#define CT "/sync/1/test/proto"

static uv_loop_t g_loop;
static char g_dir[64];
static char g_pg_schema[64];
static int64_t g_now; /* wall clock at the start of a test */

/* ---- messages -------------------------------------------------------------------------------- */

typedef struct msg {
  int topic;
  char payload[40];
  ld_waku_message_t m;
  uint8_t hash[LD_WAKU_HASH_LEN];
} msg_t;

static void make_msg(msg_t *x, int i, int topic, int64_t ts) {
  memset(x, 0, sizeof *x);
  x->topic = topic;
  snprintf(x->payload, sizeof x->payload, "message %d", i);
  ld_waku_message_init(&x->m);
  x->m.payload = (const uint8_t *)x->payload;
  x->m.payload_len = strlen(x->payload);
  x->m.content_topic = CT;
  x->m.content_topic_len = strlen(CT);
  x->m.timestamp = ts;
  assert_int_equal(ld_waku_message_hash(k_topics[topic], &x->m, x->hash), 0);
}

/* n messages over [now − 3000 s, now − 60 s] (inside nwaku's default window), two shards. */
static msg_t *make_messages(int n) {
  msg_t *v = calloc((size_t)n, sizeof *v);
  assert_non_null(v);
  for (int i = 0; i < n; i++)
    make_msg(&v[i], i, i % 2, g_now - 3000 * SEC + (int64_t)i * (2940 * SEC / n));
  return v;
}

static int cmp_hash(const void *a, const void *b) {
  return memcmp(a, b, LD_WAKU_HASH_LEN);
}

/* ---- archives -------------------------------------------------------------------------------- */

typedef struct ack {
  int calls, ok;
} ack_t;

static void acked(int err, void *ud) {
  ack_t *a = ud;
  a->calls++;
  a->ok += err == 0;
}

static void opened(ld_archive_t *a, int err, const char *why, void *ud) {
  if (err != 0)
    fail_msg("archive open failed: %s", why);
  *(ld_archive_t **)ud = a;
}

static void closed(void *ud) {
  *(bool *)ud = true;
}

/* Writes v[i] for every i with i % 2 == half (or every message with half < 0) into the archive
 * at `url`, then closes it. */
static void prefill(const char *url, const msg_t *v, int n, int half) {
  ld_archive_config_t cfg;
  ld_archive_config_default(&cfg);
  cfg.url = url;
  ld_archive_t *a = NULL;
  assert_int_equal(ld_archive_open(&g_loop, &cfg, opened, &a), 0);
  NH_WAIT_FOR(&g_loop, a != NULL, WAIT_MS);
  ack_t ack = {0};
  int want = 0;
  for (int i = 0; i < n; i++) {
    if (half >= 0 && (i / 2) % 2 != half) /* halves alternate in pairs: both shards in each */
      continue;
    int rc;
    while ((rc = ld_archive_insert(a, k_topics[v[i].topic], &v[i].m, v[i].hash, acked, &ack)) ==
           LD_ERR_LIMIT)
      uv_run(&g_loop, UV_RUN_NOWAIT);
    assert_int_equal(rc, 0);
    want++;
  }
  NH_WAIT_FOR(&g_loop, ack.calls == want, WAIT_MS);
  assert_int_equal(ack.ok, want);
  bool done = false;
  ld_archive_close(a, closed, &done);
  NH_WAIT_FOR(&g_loop, done, WAIT_MS);
}

typedef struct counted {
  bool done;
  uint64_t n;
} counted_t;

static void on_count(int err, uint64_t n, void *ud) {
  counted_t *c = ud;
  assert_int_equal(err, 0);
  c->n = n;
  c->done = true;
}

static uint64_t archive_count(ld_node_t *node) {
  counted_t c = {0};
  assert_int_equal(ld_archive_count(ld_node_archive(node), on_count, &c), 0);
  NH_WAIT_FOR(&g_loop, c.done, WAIT_MS);
  return c.n;
}

typedef struct listed {
  bool done;
  uint8_t (*hashes)[LD_WAKU_HASH_LEN];
  size_t n;
} listed_t;

static void on_listed(int err, const char *why, const ld_archive_key_t *keys, size_t n, bool more,
                      void *ud) {
  listed_t *l = ud;
  if (err != 0)
    fail_msg("listing failed: %s", why);
  assert_false(more);
  l->hashes = calloc(n + 1, LD_WAKU_HASH_LEN);
  for (size_t i = 0; i < n; i++)
    memcpy(l->hashes[i], keys[i].hash, LD_WAKU_HASH_LEN);
  l->n = n;
  l->done = true;
}

/* Every hash in the node's archive equals the expected set exactly. */
static void assert_archive_holds(ld_node_t *node, const msg_t *v, int n) {
  listed_t l = {0};
  ld_archive_listing_t q = {
      .time_start = INT64_MIN, .time_end = INT64_MAX, .limit = LD_ARCHIVE_MAX_LIST_PAGE};
  assert_int_equal(ld_archive_list_keys(ld_node_archive(node), &q, on_listed, &l), 0);
  NH_WAIT_FOR(&g_loop, l.done, WAIT_MS);
  uint8_t(*want)[LD_WAKU_HASH_LEN] = calloc((size_t)n, LD_WAKU_HASH_LEN);
  for (int i = 0; i < n; i++)
    memcpy(want[i], v[i].hash, LD_WAKU_HASH_LEN);
  qsort(want, (size_t)n, LD_WAKU_HASH_LEN, cmp_hash);
  qsort(l.hashes, l.n, LD_WAKU_HASH_LEN, cmp_hash);
  assert_int_equal(l.n, (size_t)n);
  for (int i = 0; i < n; i++)
    if (memcmp(want[i], l.hashes[i], LD_WAKU_HASH_LEN) != 0)
      fail_msg("hash %d of the expected set differs from the archive's", i);
  free(want);
  free(l.hashes);
}

/* ---- postgres ---------------------------------------------------------------------------------
 */

static void pg_admin(const char *sql) {
  PGconn *c = PQconnectdb(getenv("LD_TEST_PG_URL"));
  assert_int_equal(PQstatus(c), CONNECTION_OK);
  PGresult *r = PQexec(c, sql);
  if (PQresultStatus(r) != PGRES_COMMAND_OK)
    fail_msg("%s: %s", sql, PQerrorMessage(c));
  PQclear(r);
  PQfinish(c);
}

static void pg_schema(const char *name, bool create) {
  char sql[256];
  snprintf(sql, sizeof sql,
           "SET client_min_messages = warning; DROP SCHEMA IF EXISTS %s CASCADE%s%s", name,
           create ? "; CREATE SCHEMA " : "", create ? name : "");
  pg_admin(sql);
}

static void pg_url(char *out, size_t cap, const char *schema) {
  const char *base = getenv("LD_TEST_PG_URL");
  snprintf(out, cap, "%s%coptions=-csearch_path%%3D%s", base, strchr(base, '?') ? '&' : '?',
           schema);
}

/* ---- nodes ------------------------------------------------------------------------------------
 */

static ld_node_config_t *store_config(const char *url, uint32_t interval_s) {
  char err[256];
  ld_node_config_t *cfg = nh_config();
  assert_int_equal(ld_node_config_add_shard(cfg, "1", err, sizeof err), 0);
  cfg->store = true;
  cfg->store_sync = true;
  cfg->store_sync_interval_s = interval_s;
  assert_int_equal(ld_node_config_set_store_db_url(cfg, url, err, sizeof err), 0);
  return cfg;
}

static bool sync_ready(ld_node_t *node) {
  ld_store_sync_stats_t st;
  ld_store_sync_get_stats(ld_node_store_sync(node), &st);
  return st.ready;
}

static ld_store_sync_stats_t stats_of(ld_node_t *node) {
  ld_store_sync_stats_t st;
  ld_store_sync_get_stats(ld_node_store_sync(node), &st);
  return st;
}

typedef struct session_done {
  bool done;
  ld_store_sync_result_t r;
} session_done_t;

static void on_session(const ld_store_sync_result_t *r, void *ud) {
  session_done_t *d = ud;
  d->r = *r;
  d->done = true;
}

/* Starts a session from `a` with `b` (retrying while they are not connected yet) and waits for
 * its end. */
static ld_store_sync_result_t session(ld_node_t *a, ld_node_t *b) {
  session_done_t d = {0};
  uint64_t end = ld_now_ms() + WAIT_MS;
  int rc;
  while ((rc = ld_store_sync_start_session(ld_node_store_sync(a), ld_node_peer_id(b), on_session,
                                           &d)) == LD_ERR_NOT_FOUND &&
         ld_now_ms() < end)
    nh_run_for(&g_loop, 20);
  assert_int_equal(rc, 0);
  NH_WAIT_FOR(&g_loop, d.done, WAIT_MS);
  return d.r;
}

static double exposed(const char *text, const char *series) {
  size_t n = strlen(series);
  for (const char *p = text; *p != '\0';) {
    if (strncmp(p, series, n) == 0 && p[n] == ' ')
      return strtod(p + n + 1, NULL);
    const char *eol = strchr(p, '\n');
    p = eol != NULL ? eol + 1 : p + strlen(p);
  }
  return -1;
}

/* The node's store-sync figures under nwaku's names match its statistics. */
static void assert_metrics(ld_node_t *node) {
  ld_metrics_t *reg = ld_metrics_new();
  ld_service_metrics_sources_t src = {.store_sync = ld_node_store_sync(node)};
  ld_service_metrics_t *sm = ld_service_metrics_new(reg, &src);
  assert_non_null(sm);
  ld_buf_t out;
  ld_buf_init(&out);
  assert_int_equal(ld_metrics_expose(reg, &out), 0);
  assert_int_equal(ld_buf_u8(&out, 0), 0);
  const char *text = (const char *)out.data;
  ld_store_sync_stats_t st = stats_of(node);
  assert_true(exposed(text, "total_messages_cached") == (double)st.cached);
  assert_true(exposed(text, "reconciliation_roundtrips_count") ==
              (double)(st.sessions_complete + st.sessions_failed));
  assert_true(exposed(text, "reconciliation_differences_count") >= 1);
  assert_true(exposed(text, "reconciliation_differences_bucket{le=\"+Inf\"}") >= 1);
  assert_true(
      exposed(text,
              "total_bytes_exchanged_total{protocol=\"reconciliation\",direction=\"sent\"}") ==
      (double)st.recon_bytes_out);
  assert_true(
      exposed(text, "total_bytes_exchanged_total{protocol=\"transfer\",direction=\"receive\"}") ==
      (double)st.transfer_bytes_in);
  assert_true(exposed(text, "total_transfer_messages_exchanged_total{direction=\"sent\"}") ==
              (double)st.transfer_out);
  assert_true(exposed(text, "total_transfer_messages_exchanged_total{direction=\"receive\"}") ==
              (double)st.transfer_in);
  assert_true(exposed(text, "waku_store_sync_rejected_messages_total{type=\"unsolicited\"}") == 0);
  ld_buf_clear(&out);
  ld_service_metrics_free(sm);
  ld_metrics_free(reg);
}

/* ---- convergence ------------------------------------------------------------------------------
 */

static void converge(const char *url_a, const char *url_b, const char *label) {
  g_now = (int64_t)ld_wall_ns();
  msg_t *v = make_messages(N_MSGS);
  prefill(url_a, v, N_MSGS, 0);
  prefill(url_b, v, N_MSGS, 1);
  ld_node_t *a = nh_start(&g_loop, store_config(url_a, 3600));
  ld_node_config_t *cb = store_config(url_b, 3600);
  nh_add_static(cb, a);
  ld_node_t *b = nh_start(&g_loop, cb);
  NH_WAIT_FOR(&g_loop, sync_ready(a) && sync_ready(b), WAIT_MS);
  assert_int_equal(stats_of(a).filled, N_MSGS / 2);
  assert_int_equal(stats_of(b).filled, N_MSGS / 2);

  uint64_t t0 = ld_now_ns();
  ld_store_sync_result_t r = session(a, b);
  assert_int_equal(r.err, 0);
  assert_int_equal(r.have, N_MSGS / 2); /* what b lacks */
  NH_WAIT_FOR(&g_loop,
              stats_of(a).ingested == N_MSGS / 2 && stats_of(b).ingested == N_MSGS / 2 &&
                  stats_of(a).cached == N_MSGS && stats_of(b).cached == N_MSGS,
              WAIT_MS);
  assert_int_equal(archive_count(a), N_MSGS);
  assert_int_equal(archive_count(b), N_MSGS);
  uint64_t ns = ld_now_ns() - t0;
  ld_store_sync_stats_t sa = stats_of(a), sb = stats_of(b);
  print_message("%s: converged in %.3f s; reconciliation %zu+%zu frames, %llu B; transfer "
                "%llu+%llu messages, %llu B (bodies)\n",
                label, (double)ns / 1e9, r.frames_out, r.frames_in,
                (unsigned long long)(r.bytes_in + r.bytes_out), (unsigned long long)sa.transfer_out,
                (unsigned long long)sb.transfer_out,
                (unsigned long long)(sa.transfer_bytes_out + sb.transfer_bytes_out));
  assert_int_equal(sa.transfer_out, N_MSGS / 2);
  assert_int_equal(sb.transfer_out, N_MSGS / 2);
  assert_int_equal(sa.pushes_dropped + sb.pushes_dropped, 0);
  for (int k = LD_SYNC_INGRESS_DUPLICATE; k < LD_SYNC_INGRESS_VERDICTS; k++)
    assert_int_equal(sa.rejected[k] + sb.rejected[k], 0);
  assert_int_equal(sa.sessions_complete, 1);
  assert_int_equal(sb.sessions_complete, 1);
  assert_archive_holds(a, v, N_MSGS);
  assert_archive_holds(b, v, N_MSGS);
  /* once more: nothing left to find */
  r = session(b, a);
  assert_int_equal(r.err, 0);
  assert_int_equal(r.have + r.need, 0);
  assert_metrics(a);
  nh_stop(&g_loop, b, WAIT_MS);
  nh_stop(&g_loop, a, WAIT_MS);
  free(v);
}

static void sqlite_archives_converge(void **state) {
  (void)state;
  char a[160], b[160];
  snprintf(a, sizeof a, "sqlite://%s/a.db", g_dir);
  snprintf(b, sizeof b, "sqlite://%s/b.db", g_dir);
  converge(a, b, "sqlite");
}

static void postgres_archives_converge(void **state) {
  (void)state;
  if (getenv("LD_TEST_PG_URL") == NULL) {
    if (getenv("LD_REQUIRE_PG") != NULL)
      fail_msg("LD_REQUIRE_PG is set but LD_TEST_PG_URL is not");
    skip();
  }
  char sa[96], sb[96], a[512], b[512];
  snprintf(sa, sizeof sa, "%s_a", g_pg_schema);
  snprintf(sb, sizeof sb, "%s_b", g_pg_schema);
  pg_schema(sa, true);
  pg_schema(sb, true);
  pg_url(a, sizeof a, sa);
  pg_url(b, sizeof b, sb);
  converge(a, b, "postgres");
  pg_schema(sa, false);
  pg_schema(sb, false);
}

/* The flags take effect: two nodes with --store-sync-interval=1 converge by themselves, and the
 * ENR carries the Sync bit (store and sync: 0x12 with relay 0x13). */
static void periodic_sync_by_the_flags(void **state) {
  (void)state;
  g_now = (int64_t)ld_wall_ns();
  msg_t *v = make_messages(400);
  char ua[160], ub[160];
  snprintf(ua, sizeof ua, "sqlite://%s/pa.db", g_dir);
  snprintf(ub, sizeof ub, "sqlite://%s/pb.db", g_dir);
  prefill(ua, v, 400, 0);
  prefill(ub, v, 400, 1);
  ld_node_t *a = nh_start(&g_loop, store_config(ua, 1));
  ld_node_config_t *cb = store_config(ub, 1);
  nh_add_static(cb, a);
  ld_node_t *b = nh_start(&g_loop, cb);
  NH_WAIT_FOR(&g_loop, stats_of(a).cached == 400 && stats_of(b).cached == 400, WAIT_MS);
  NH_WAIT_FOR(&g_loop, archive_count(a) == 400 && archive_count(b) == 400, WAIT_MS);
  assert_archive_holds(a, v, 400);
  assert_archive_holds(b, v, 400);
  assert_true(stats_of(a).sessions_started + stats_of(b).sessions_started >= 1);
  char text[LD_ENR_TEXT_MAX];
  assert_true(ld_node_enr_text(a, text, sizeof text) > 0);
  ld_enr_t enr;
  assert_int_equal(ld_enr_parse_text(&enr, text), 0);
  uint8_t caps = 0;
  assert_int_equal(ld_enr_waku2(&enr, &caps), 0);
  assert_int_equal(caps & LD_ENR_SYNC, LD_ENR_SYNC);
  assert_int_equal(caps & LD_ENR_STORE, LD_ENR_STORE);
  nh_stop(&g_loop, b, WAIT_MS);
  nh_stop(&g_loop, a, WAIT_MS);
  free(v);
}

/* ---- a bare libp2p peer ------------------------------------------------------------------------
 */

typedef struct peer {
  ld_switch_t *sw;
  ld_conn_t *conn;
  sh_events_t ev;
  ld_stream_t *recon, *xfer;
  bool recon_open, xfer_open, recon_closed, xfer_closed;
  int recon_err, xfer_err;
  ld_buf_t rx;
  size_t frames; /* reconciliation frames received */
  bool echo;     /* answer every frame with `again` */
  ld_buf_t again;
} peer_t;

static void p_on_data(ld_stream_t *st, const uint8_t *data, size_t len) {
  peer_t *p = ld_stream_user_data(st);
  ld_buf_append(&p->rx, data, len);
  for (;;) {
    const uint8_t *body;
    size_t n;
    int took = ld_reqresp_read_frame(p->rx.data, p->rx.len, 64u << 20, &body, &n);
    if (took < 0)
      return;
    p->frames++;
    ld_buf_consume(&p->rx, (size_t)took);
    if (p->echo && p->recon != NULL)
      ld_stream_write(p->recon, p->again.data, p->again.len);
  }
}

static void p_on_close(ld_stream_t *st, int err) {
  peer_t *p = ld_stream_user_data(st);
  if (st == p->recon) {
    p->recon_closed = true;
    p->recon_err = err;
    p->recon = NULL;
  } else {
    p->xfer_closed = true;
    p->xfer_err = err;
    p->xfer = NULL;
  }
}

static const ld_stream_handler_t k_peer_handler = {p_on_data, NULL, p_on_close, NULL};

static void p_on_open(ld_stream_t *st, int err, void *ud) {
  peer_t *p = ud;
  bool recon = st != NULL && strcmp(ld_stream_protocol(st), LD_SYNC_RECONCILIATION_PROTOCOL) == 0;
  if (st == NULL) {
    p->recon_closed = p->xfer_closed = true;
    p->recon_err = p->xfer_err = err;
    return;
  }
  ld_stream_set_handler(st, &k_peer_handler, p);
  if (recon) {
    p->recon = st;
    p->recon_open = true;
  } else {
    p->xfer = st;
    p->xfer_open = true;
  }
}

static void peer_connect(peer_t *p, ld_node_t *node) {
  memset(p, 0, sizeof *p);
  p->sw = sh_switch_new(&g_loop, NULL);
  sh_track_events(p->sw, &p->ev);
  ld_buf_init(&p->rx);
  ld_buf_init(&p->again);
  ld_multiaddr_t addr;
  assert_int_equal(ld_node_listen_addrs(node, &addr, 1), 1);
  int err = 0;
  p->conn = sh_dial_wait(p->sw, &g_loop, &addr, &err);
  assert_non_null(p->conn);
}

static void peer_close(peer_t *p) {
  sh_switch_close(p->sw, &g_loop);
  ld_buf_clear(&p->rx);
  ld_buf_clear(&p->again);
}

static void peer_open(peer_t *p, const char *proto) {
  bool recon = strcmp(proto, LD_SYNC_RECONCILIATION_PROTOCOL) == 0;
  assert_int_equal(ld_switch_open_stream(p->sw, p->conn, &proto, 1, p_on_open, p), 0);
  if (recon)
    NH_WAIT_FOR(&g_loop, p->recon_open || p->recon_closed, WAIT_MS);
  else
    NH_WAIT_FOR(&g_loop, p->xfer_open || p->xfer_closed, WAIT_MS);
}

static void write_frame(ld_stream_t *st, const ld_buf_t *body) {
  ld_buf_t f;
  ld_buf_init(&f);
  uint8_t *dst;
  assert_int_equal(ld_reqresp_append_frame(&f, body->len, &dst), 0);
  if (body->len > 0)
    memcpy(dst, body->data, body->len);
  assert_int_equal(ld_stream_write(st, f.data, f.len), 0);
  ld_buf_clear(&f);
}

/* A first payload: one item set over [lo, hi] holding `items` (unreconciled: "push me what I
 * lack, and take these"). */
static void item_set_payload(ld_buf_t *out, int64_t lo, int64_t hi, const msg_t *const *m,
                             size_t n) {
  ld_sync_payload_t p;
  ld_sync_payload_init(&p);
  ld_sync_id_t start = ld_sync_id_bound(lo), upper = ld_sync_id_bound(hi);
  ld_sync_payload_reset(&p, &start);
  ld_sync_id_t ids[8];
  for (size_t i = 0; i < n; i++) {
    ids[i].time = m[i]->m.timestamp;
    memcpy(ids[i].hash, m[i]->hash, LD_WAKU_HASH_LEN);
  }
  for (size_t i = 1; i < n; i++) /* ascending */
    for (size_t j = i; j > 0 && ld_sync_id_cmp(&ids[j - 1], &ids[j]) > 0; j--) {
      ld_sync_id_t t = ids[j];
      ids[j] = ids[j - 1];
      ids[j - 1] = t;
    }
  assert_int_equal(ld_sync_payload_add_item_set(&p, &upper, ids, n, false), 0);
  ld_buf_reset(out);
  assert_int_equal(ld_sync_payload_encode(&p, out), 0);
  ld_sync_payload_clear(&p);
}

/* Lists `m` to the node in a session (the node answers, so it has taken the list). */
static void list_in_session(peer_t *p, const msg_t *const *m, size_t n, int64_t lo, int64_t hi) {
  peer_open(p, LD_SYNC_RECONCILIATION_PROTOCOL);
  assert_true(p->recon_open);
  ld_buf_t body;
  ld_buf_init(&body);
  item_set_payload(&body, lo, hi, m, n);
  write_frame(p->recon, &body);
  ld_buf_clear(&body);
  NH_WAIT_FOR(&g_loop, p->frames >= 1 || p->recon_closed, WAIT_MS);
  assert_true(p->frames >= 1);
}

static void push_frame(peer_t *p, const ld_buf_t *body) {
  if (p->xfer == NULL)
    peer_open(p, LD_SYNC_TRANSFER_PROTOCOL);
  assert_true(p->xfer_open);
  write_frame(p->xfer, body);
}

static void push_message(peer_t *p, const msg_t *m) {
  ld_buf_t body;
  ld_buf_init(&body);
  assert_int_equal(
      ld_sync_transfer_encode(k_topics[m->topic], strlen(k_topics[m->topic]), &m->m, 0, &body), 0);
  push_frame(p, &body);
  ld_buf_clear(&body);
}

/* ---- bad peers --------------------------------------------------------------------------------
 */

static ld_node_t *g_victim;
static uint8_t g_secret[LD_SECP256K1_SECRET_LEN];

static int victim_setup(void **state) {
  (void)state;
  memset(g_secret, 0x5a, sizeof g_secret);
  uint8_t pub[LD_SECP256K1_PUBLIC_LEN];
  assert_int_equal(ld_secp256k1_public(g_secret, pub), 0);
  char hex[2 * LD_SECP256K1_PUBLIC_LEN + 1], arg[96], err[256];
  ld_hex_encode(pub, sizeof pub, hex);
  snprintf(arg, sizeof arg, "1:%s", hex); /* shard 1 is protected */
  char url[160];
  snprintf(url, sizeof url, "sqlite://%s/victim.db", g_dir);
  ld_node_config_t *cfg = store_config(url, 3600);
  assert_int_equal(ld_node_config_add_protected_shard(cfg, arg, err, sizeof err), 0);
  cfg->store_sync_read_timeout_ms = 600;
  g_victim = nh_start(&g_loop, cfg);
  NH_WAIT_FOR(&g_loop, sync_ready(g_victim), WAIT_MS);
  return 0;
}

static int victim_teardown(void **state) {
  (void)state;
  nh_stop(&g_loop, g_victim, WAIT_MS);
  return 0;
}

/* The peer was refused and cut off: the verdict counted, the connection closed, banned (a new
 * session from it is reset), and nothing stored. */
static void assert_cut_off(peer_t *p, ld_sync_ingress_verdict_t v, uint64_t rejected_before,
                           uint64_t stored, uint64_t cached) {
  NH_WAIT_FOR(&g_loop, p->ev.disconnected >= 1, WAIT_MS);
  ld_store_sync_stats_t st = stats_of(g_victim);
  assert_int_equal(st.rejected[v], rejected_before + 1);
  assert_true(ld_store_sync_banned(ld_node_store_sync(g_victim), ld_switch_peer_id(p->sw)));
  assert_int_equal(st.ingested, 0);
  assert_int_equal(st.cached, cached);
  assert_int_equal(archive_count(g_victim), stored);
  /* back again: its sessions are refused */
  ld_multiaddr_t addr;
  assert_int_equal(ld_node_listen_addrs(g_victim, &addr, 1), 1);
  int err = 0;
  p->conn = sh_dial_wait(p->sw, &g_loop, &addr, &err);
  assert_non_null(p->conn);
  p->recon_open = p->recon_closed = false;
  peer_open(p, LD_SYNC_RECONCILIATION_PROTOCOL);
  NH_WAIT_FOR(&g_loop, p->recon_closed, WAIT_MS);
  assert_int_equal(stats_of(g_victim).sessions_refused, st.sessions_refused + 1);
}

static void unsolicited_push(void **state) {
  (void)state;
  peer_t p;
  peer_connect(&p, g_victim);
  msg_t m;
  make_msg(&m, 1, 0, (int64_t)ld_wall_ns() - 100 * SEC);
  uint64_t before = stats_of(g_victim).rejected[LD_SYNC_INGRESS_UNSOLICITED];
  push_message(&p, &m);
  assert_cut_off(&p, LD_SYNC_INGRESS_UNSOLICITED, before, 0, 0);
  peer_close(&p);
}

/* Listed in a session, then pushed: an old one (two hours back, inside a range that reaches into
 * the window) and one an hour ahead. */
static void out_of_window_pushes(void **state) {
  (void)state;
  int64_t now = (int64_t)ld_wall_ns();
  for (int future = 0; future < 2; future++) {
    peer_t p;
    peer_connect(&p, g_victim);
    msg_t m;
    make_msg(&m, 2 + future, 0, future ? now + 3600 * SEC : now - 7200 * SEC);
    const msg_t *list[] = {&m};
    if (future)
      list_in_session(&p, list, 1, now - 600 * SEC, now + 7200 * SEC);
    else
      list_in_session(&p, list, 1, now - 10800 * SEC, now - 120 * SEC);
    ld_sync_ingress_verdict_t v = future ? LD_SYNC_INGRESS_FUTURE : LD_SYNC_INGRESS_TOO_OLD;
    uint64_t before = stats_of(g_victim).rejected[v];
    push_message(&p, &m);
    assert_cut_off(&p, v, before, 0, 0);
    peer_close(&p);
  }
}

/* A message on the protected shard, listed and pushed without a valid signature: first signed by
 * another key, then unsigned. */
static void forged_pushes(void **state) {
  (void)state;
  int64_t now = (int64_t)ld_wall_ns();
  uint8_t other[LD_SECP256K1_SECRET_LEN], sig[LD_RELAY_SIGNATURE_LEN];
  memset(other, 0x33, sizeof other);
  for (int signed_by_other = 1; signed_by_other >= 0; signed_by_other--) {
    peer_t p;
    peer_connect(&p, g_victim);
    msg_t m;
    make_msg(&m, 10 + signed_by_other, 1, now - 300 * SEC);
    if (signed_by_other) {
      assert_int_equal(ld_relay_sign(other, k_topics[1], &m.m, sig), 0);
      m.m.meta = sig;
      m.m.meta_len = sizeof sig;
      assert_int_equal(ld_waku_message_hash(k_topics[1], &m.m, m.hash), 0);
    }
    const msg_t *list[] = {&m};
    list_in_session(&p, list, 1, now - 600 * SEC, now - 60 * SEC);
    uint64_t before = stats_of(g_victim).rejected[LD_SYNC_INGRESS_BAD_SIGNATURE];
    push_message(&p, &m);
    assert_cut_off(&p, LD_SYNC_INGRESS_BAD_SIGNATURE, before, 0, 0);
    peer_close(&p);
  }
  /* bytes that are no transfer message */
  peer_t p;
  peer_connect(&p, g_victim);
  ld_buf_t junk;
  ld_buf_init(&junk);
  ld_buf_append(&junk, "\x0a\x05garbage", 9);
  uint64_t before = stats_of(g_victim).rejected[LD_SYNC_INGRESS_UNDECODABLE];
  push_frame(&p, &junk);
  ld_buf_clear(&junk);
  assert_cut_off(&p, LD_SYNC_INGRESS_UNDECODABLE, before, 0, 0);
  peer_close(&p);
}

/* The control: a valid, solicited push from a well-behaved peer is stored (so the refusals above
 * are the checks', not a node that stores nothing). Runs last: it changes the archive. */
static void a_solicited_push_is_stored(void **state) {
  (void)state;
  int64_t now = (int64_t)ld_wall_ns();
  peer_t p;
  peer_connect(&p, g_victim);
  msg_t m;
  make_msg(&m, 20, 0, now - 300 * SEC);
  const msg_t *list[] = {&m};
  list_in_session(&p, list, 1, now - 600 * SEC, now - 60 * SEC);
  push_message(&p, &m);
  NH_WAIT_FOR(&g_loop, stats_of(g_victim).ingested == 1, WAIT_MS);
  NH_WAIT_FOR(&g_loop, archive_count(g_victim) == 1, WAIT_MS);
  assert_int_equal(stats_of(g_victim).cached, 1);
  assert_int_equal(p.ev.disconnected, 0);
  assert_false(ld_store_sync_banned(ld_node_store_sync(g_victim), ld_switch_peer_id(p.sw)));
  peer_close(&p);
}

/* ---- bounded sessions -------------------------------------------------------------------------
 */

/* A node of its own for the deadlines and caps below (the shared one cuts silent sessions at
 * 600 ms). */
static ld_node_t *start_patient(const char *name, uint32_t read_ms, uint32_t session_ms) {
  char url[160];
  snprintf(url, sizeof url, "sqlite://%s/%s.db", g_dir, name);
  ld_node_config_t *cfg = store_config(url, 3600);
  cfg->store_sync_read_timeout_ms = read_ms;
  cfg->store_sync_session_timeout_ms = session_ms;
  ld_node_t *n = nh_start(&g_loop, cfg);
  NH_WAIT_FOR(&g_loop, sync_ready(n), WAIT_MS);
  return n;
}

/* A silent session is cut at the read deadline (600 ms on the shared node). */
static void a_silent_session_is_cut_at_the_read_deadline(void **state) {
  (void)state;
  peer_t p;
  peer_connect(&p, g_victim);
  uint64_t cut = stats_of(g_victim).sessions_cut;
  uint64_t t0 = ld_now_ms();
  peer_open(&p, LD_SYNC_RECONCILIATION_PROTOCOL);
  NH_WAIT_FOR(&g_loop, p.recon_closed, WAIT_MS);
  assert_int_equal(p.recon_err, LD_ERR_RESET);
  assert_true(ld_now_ms() - t0 >= 550);
  assert_int_equal(stats_of(g_victim).sessions_cut, cut + 1);
  peer_close(&p);
}

/* A session that keeps its reads alive (a byte of a frame that never completes every 100 ms) is
 * cut at the session deadline, on a node whose read deadline is far away. */
static void a_trickling_session_is_cut_at_the_session_deadline(void **state) {
  (void)state;
  ld_node_t *n = start_patient("deadline", 30000, 1500);
  peer_t p;
  peer_connect(&p, n);
  peer_open(&p, LD_SYNC_RECONCILIATION_PROTOCOL);
  uint64_t t0 = ld_now_ms();
  static const uint8_t prefix[] = {0x80, 0x80, 0x01}; /* a 16,384-byte frame */
  assert_int_equal(ld_stream_write(p.recon, prefix, sizeof prefix), 0);
  while (!p.recon_closed && ld_now_ms() - t0 < WAIT_MS) {
    nh_run_for(&g_loop, 100);
    if (p.recon != NULL)
      ld_stream_write(p.recon, (const uint8_t *)"x", 1);
  }
  assert_true(p.recon_closed);
  assert_int_equal(p.recon_err, LD_ERR_RESET);
  assert_true(ld_now_ms() - t0 >= 1400);
  assert_int_equal(stats_of(n).sessions_cut, 1);
  peer_close(&p);
  nh_stop(&g_loop, n, WAIT_MS);
}

/* A peer that answers every reply with the same mismatching fingerprint never lets the session
 * end: it is cut after 32 payloads. */
static void an_endless_session_is_cut_after_32_payloads(void **state) {
  (void)state;
  peer_t p;
  peer_connect(&p, g_victim);
  int64_t now = (int64_t)ld_wall_ns();
  ld_sync_payload_t pl;
  ld_sync_payload_init(&pl);
  ld_sync_id_t start = ld_sync_id_bound(now - 3000 * SEC), upper = ld_sync_id_bound(now - 30 * SEC);
  ld_sync_payload_reset(&pl, &start);
  ld_sync_fp_t fp;
  memset(&fp, 0x42, sizeof fp);
  assert_int_equal(ld_sync_payload_add_fingerprint(&pl, &upper, &fp), 0);
  ld_buf_t body;
  ld_buf_init(&body);
  assert_int_equal(ld_sync_payload_encode(&pl, &body), 0);
  uint8_t *dst;
  assert_int_equal(ld_reqresp_append_frame(&p.again, body.len, &dst), 0);
  memcpy(dst, body.data, body.len);
  p.echo = true;
  uint64_t failed = stats_of(g_victim).sessions_failed;
  peer_open(&p, LD_SYNC_RECONCILIATION_PROTOCOL);
  write_frame(p.recon, &body);
  NH_WAIT_FOR(&g_loop, p.recon_closed, WAIT_MS);
  assert_int_equal(p.recon_err, LD_ERR_RESET);
  assert_int_equal(p.frames, LD_SYNC_DEFAULT_MAX_ROUNDS); /* 32 answered, the 33rd reset */
  assert_int_equal(stats_of(g_victim).sessions_failed, failed + 1);
  ld_buf_clear(&body);
  ld_sync_payload_clear(&pl);
  peer_close(&p);
}

/* A second session of one peer while its first runs, and one session more than the cap from as
 * many peers, are refused. */
static void sessions_beyond_the_caps_are_refused(void **state) {
  (void)state;
  ld_node_t *n = start_patient("caps", 30000, 120000);
  peer_t p[LD_STORE_SYNC_DEFAULT_MAX_SESSIONS + 1];
  peer_connect(&p[0], n);
  peer_open(&p[0], LD_SYNC_RECONCILIATION_PROTOCOL);
  NH_WAIT_FOR(&g_loop, stats_of(n).sessions_accepted == 1, WAIT_MS);
  ld_stream_t *first = p[0].recon;
  p[0].recon_open = false;
  peer_open(&p[0], LD_SYNC_RECONCILIATION_PROTOCOL);
  NH_WAIT_FOR(&g_loop, stats_of(n).sessions_refused == 1, WAIT_MS);
  assert_int_equal(stats_of(n).sessions_accepted, 1);
  ld_stream_reset(first);
  NH_WAIT_FOR(&g_loop, stats_of(n).sessions_failed == 1, WAIT_MS);
  peer_close(&p[0]);
  for (int i = 0; i <= LD_STORE_SYNC_DEFAULT_MAX_SESSIONS; i++) {
    peer_connect(&p[i], n);
    peer_open(&p[i], LD_SYNC_RECONCILIATION_PROTOCOL);
  }
  NH_WAIT_FOR(&g_loop,
              stats_of(n).sessions_accepted == 1 + LD_STORE_SYNC_DEFAULT_MAX_SESSIONS &&
                  stats_of(n).sessions_refused == 2,
              WAIT_MS);
  for (int i = 0; i <= LD_STORE_SYNC_DEFAULT_MAX_SESSIONS; i++)
    peer_close(&p[i]);
  nh_stop(&g_loop, n, WAIT_MS);
}

/* ---- RLN-relay ----------------------------------------------------------------------------------
 */

#define RLN_MEMBERS 8
#define RLN_EPOCH_SEC 600
static rh_group_t g_rln;

/* The victim of this group: a store-sync node with RLN-relay (validating only). */
static int rln_victim_setup(void **state) {
  (void)state;
  rh_group_make(&g_rln, RLN_MEMBERS, 1, 0);
  char url[160];
  snprintf(url, sizeof url, "sqlite://%s/rln-victim.db", g_dir);
  ld_node_config_t *cfg = store_config(url, 3600);
  rh_configure(&g_rln, cfg, RLN_EPOCH_SEC, false);
  g_victim = nh_start(&g_loop, cfg);
  NH_WAIT_FOR(&g_loop, sync_ready(g_victim), WAIT_MS);
  return 0;
}

static int rln_victim_teardown(void **state) {
  (void)state;
  nh_stop(&g_loop, g_victim, WAIT_MS);
  rh_group_free(&g_rln);
  return 0;
}

/* A message of member `index` with a valid proof, five minutes old. */
static void proved_msg(msg_t *x, int i, uint64_t index, uint8_t *proof) {
  make_msg(x, i, 0, (int64_t)ld_wall_ns() - 300 * SEC);
  rh_prove(&g_rln, &x->m, proof, index, 0, RLN_EPOCH_SEC);
  uv_update_time(&g_loop); /* the loop stood still while the proof was made */
  assert_int_equal(ld_waku_message_hash(k_topics[0], &x->m, x->hash), 0);
}

/* Listed in a session, then pushed: a message without a proof, then one carrying the proof of
 * another message (same epoch and member). */
static void rln_pushes_without_a_valid_proof(void **state) {
  (void)state;
  uint8_t proof[LD_RLN_RATE_LIMIT_PROOF_MAX_ENCODED];
  msg_t valid;
  proved_msg(&valid, 30, 1, proof);
  for (int borrowed = 0; borrowed < 2; borrowed++) {
    peer_t p;
    peer_connect(&p, g_victim);
    msg_t m;
    make_msg(&m, 31 + borrowed, 0, valid.m.timestamp);
    if (borrowed) {
      m.m.proof = valid.m.proof;
      m.m.proof_len = valid.m.proof_len;
    }
    int64_t now = (int64_t)ld_wall_ns();
    const msg_t *list[] = {&m};
    list_in_session(&p, list, 1, now - 600 * SEC, now - 60 * SEC);
    uint64_t before = stats_of(g_victim).rejected[LD_SYNC_INGRESS_RLN];
    uint64_t invalid = ld_node_rln_stats(g_victim)
                           ->by_reason[borrowed ? LD_RLN_INVALID_PROOF : LD_RLN_TIMESTAMP_MISMATCH];
    push_message(&p, &m);
    assert_cut_off(&p, LD_SYNC_INGRESS_RLN, before, 0, 0);
    /* the relay validator's verdict, counted under its reason */
    assert_int_equal(ld_node_rln_stats(g_victim)
                         ->by_reason[borrowed ? LD_RLN_INVALID_PROOF : LD_RLN_TIMESTAMP_MISMATCH],
                     invalid + 1);
    peer_close(&p);
  }
}

/* The control: a solicited message with a valid proof (member 2's, five minutes old) is stored.
 * Runs last: it changes the archive. */
static void rln_a_solicited_push_with_a_valid_proof_is_stored(void **state) {
  (void)state;
  uint8_t proof[LD_RLN_RATE_LIMIT_PROOF_MAX_ENCODED];
  msg_t m;
  proved_msg(&m, 40, 2, proof);
  int64_t now = (int64_t)ld_wall_ns();
  peer_t p;
  peer_connect(&p, g_victim);
  const msg_t *list[] = {&m};
  list_in_session(&p, list, 1, now - 600 * SEC, now - 60 * SEC);
  uint64_t valid = ld_node_rln_stats(g_victim)->valid;
  push_message(&p, &m);
  NH_WAIT_FOR(&g_loop, stats_of(g_victim).ingested == 1, WAIT_MS);
  NH_WAIT_FOR(&g_loop, archive_count(g_victim) == 1, WAIT_MS);
  assert_int_equal(ld_node_rln_stats(g_victim)->valid, valid + 1);
  assert_int_equal(p.ev.disconnected, 0);
  peer_close(&p);
}

int main(void) {
  snprintf(g_dir, sizeof g_dir, "/tmp/ld-store-sync-XXXXXX");
  if (mkdtemp(g_dir) == NULL)
    return 1;
  snprintf(g_pg_schema, sizeof g_pg_schema, "ld_sync_%d", (int)getpid());
  uv_loop_init(&g_loop);
  const struct CMUnitTest convergence[] = {
      cmocka_unit_test(sqlite_archives_converge),
      cmocka_unit_test(postgres_archives_converge),
      cmocka_unit_test(periodic_sync_by_the_flags),
  };
  const struct CMUnitTest bad_peers[] = {
      cmocka_unit_test(unsolicited_push),
      cmocka_unit_test(out_of_window_pushes),
      cmocka_unit_test(forged_pushes),
      cmocka_unit_test(a_silent_session_is_cut_at_the_read_deadline),
      cmocka_unit_test(a_trickling_session_is_cut_at_the_session_deadline),
      cmocka_unit_test(an_endless_session_is_cut_after_32_payloads),
      cmocka_unit_test(sessions_beyond_the_caps_are_refused),
      cmocka_unit_test(a_solicited_push_is_stored),
  };
  const struct CMUnitTest rln[] = {
      cmocka_unit_test(rln_pushes_without_a_valid_proof),
      cmocka_unit_test(rln_a_solicited_push_with_a_valid_proof_is_stored),
  };
  int failed = cmocka_run_group_tests_name("convergence", convergence, NULL, NULL);
  failed += cmocka_run_group_tests_name("bad peers", bad_peers, victim_setup, victim_teardown);
  failed += cmocka_run_group_tests_name("rln", rln, rln_victim_setup, rln_victim_teardown);
  char cmd[128];
  snprintf(cmd, sizeof cmd, "rm -rf %s", g_dir);
  if (system(cmd) != 0)
    failed++;
  uv_run(&g_loop, UV_RUN_NOWAIT);
  return failed;
}
