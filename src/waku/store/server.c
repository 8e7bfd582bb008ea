#include "waku/store/server.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <uv.h>

#include "base/clock.h"
#include "base/error.h"
#include "base/hashmap.h"
#include "base/log.h"
#include "p2p/reqresp.h"

#define LOG_TOPIC "waku store"

/* Bytes handed to the stream per write, and buffered in it at most before waiting for a drain. */
#define WRITE_CHUNK (256u * 1024)
#define WRITE_HIGH_WATER (1024u * 1024)
/* Room left in a response for everything but its entries. */
#define RESPONSE_HEADER_MAX (LD_STORE_MAX_REQUEST_ID_LEN + 128u)
#define DESC_MAX 512

const uint32_t ld_store_latency_bounds_us[LD_STORE_LATENCY_BUCKETS] = {
    100,   250,    500,    1000,   2500,    5000,    10000,   25000,
    50000, 100000, 250000, 500000, 1000000, 2500000, 5000000, 10000000,
};

static const char *const k_error_names[LD_STORE_ERROR_KIND_COUNT] = {
    "decode_rpc_failure", "invalid_query", "driver_error",      "too_many_requests",
    "read_failure",       "write_failure", "function_disabled",
};

typedef enum phase {
  PH_QUEUED,   /* local: waiting for the loop to start it */
  PH_READING,  /* stream: waiting for the request frame */
  PH_QUERYING, /* at the backend */
  PH_WRITING,  /* stream: the response is being written */
  PH_DONE,     /* answered (or given up) */
} phase_t;

typedef struct job job_t;

struct ld_store_server {
  ld_switch_t *sw;
  ld_store_backend_t backend;
  ld_store_server_config_t cfg;
  ld_hashmap_t *per_peer; /* peer ID bytes → queries at the backend (as uintptr_t) */
  size_t n_streams;
  job_t *jobs; /* every live job */
  ld_store_server_stats_t stats;
};

struct job {
  ld_store_server_t *srv; /* NULL once the server is freed */
  job_t *prev, *next;
  phase_t phase;
  ld_store_query_t query;
  bool at_backend; /* the backend's done is still expected */
  bool counted;    /* holds a concurrency slot */
  bool in_call;    /* inside backend.query */
  bool released;
  uint64_t started_ns;
  ld_peerid_t peer;
  uv_timer_t timer;
  /* a served stream */
  ld_stream_t *stream; /* NULL once closed, and for local jobs */
  ld_buf_t rx, tx;
  size_t tx_off;
  /* a local query */
  bool local;
  ld_store_local_fn local_done;
  void *local_ud;
};

static void deliver(job_t *job, const ld_store_response_t *res);
static void start_query(job_t *job);

const char *ld_store_error_kind_name(int kind) {
  return kind >= 0 && kind < LD_STORE_ERROR_KIND_COUNT ? k_error_names[kind] : "unknown";
}

/* ---- job lifetime ---------------------------------------------------------------------------- */

static void on_timer_closed(uv_handle_t *h) {
  job_t *job = h->data;
  ld_store_query_clear(&job->query);
  ld_buf_clear(&job->rx);
  ld_buf_clear(&job->tx);
  free(job);
}

static void unlink_job(job_t *job) {
  ld_store_server_t *srv = job->srv;
  if (srv == NULL)
    return;
  if (job->prev != NULL)
    job->prev->next = job->next;
  else
    srv->jobs = job->next;
  if (job->next != NULL)
    job->next->prev = job->prev;
  job->prev = job->next = NULL;
}

/* Frees the job once nothing refers to it any more: its stream is over and the backend answered. */
static void maybe_release(job_t *job) {
  if (job->released || job->in_call || job->at_backend || job->stream != NULL)
    return;
  if (job->local && job->phase != PH_DONE && job->srv != NULL)
    return;
  job->released = true;
  unlink_job(job);
  uv_timer_stop(&job->timer);
  uv_close((uv_handle_t *)&job->timer, on_timer_closed);
}

static void on_timer(uv_timer_t *t);

static job_t *job_new(ld_store_server_t *srv) {
  job_t *job = calloc(1, sizeof *job);
  if (job == NULL)
    return NULL;
  job->srv = srv;
  ld_store_query_init(&job->query);
  ld_buf_init(&job->rx);
  ld_buf_init(&job->tx);
  uv_timer_init(ld_switch_loop(srv->sw), &job->timer);
  job->timer.data = job;
  job->next = srv->jobs;
  if (srv->jobs != NULL)
    srv->jobs->prev = job;
  srv->jobs = job;
  return job;
}

static void arm(job_t *job, uint32_t ms) {
  uv_timer_start(&job->timer, on_timer, ms, 0);
}

/* ---- concurrency slots ----------------------------------------------------------------------- */

static size_t peer_count(const ld_store_server_t *srv, const ld_peerid_t *p) {
  return (size_t)(uintptr_t)ld_hashmap_get(srv->per_peer, p->bytes, p->len);
}

static bool admit(ld_store_server_t *srv, job_t *job) {
  size_t n = peer_count(srv, &job->peer);
  if (srv->stats.in_flight >= srv->cfg.max_queries || n >= srv->cfg.max_queries_per_peer)
    return false;
  if (ld_hashmap_put(srv->per_peer, job->peer.bytes, job->peer.len, (void *)(uintptr_t)(n + 1),
                     NULL) != 0)
    return false;
  srv->stats.in_flight++;
  job->counted = true;
  return true;
}

static void release_slot(job_t *job) {
  ld_store_server_t *srv = job->srv;
  if (!job->counted || srv == NULL)
    return;
  job->counted = false;
  srv->stats.in_flight--;
  size_t n = peer_count(srv, &job->peer);
  if (n <= 1)
    ld_hashmap_remove(srv->per_peer, job->peer.bytes, job->peer.len);
  else
    ld_hashmap_put(srv->per_peer, job->peer.bytes, job->peer.len, (void *)(uintptr_t)(n - 1), NULL);
}

static void observe_latency(ld_store_server_t *srv, uint64_t ns) {
  uint64_t us = ns / 1000;
  size_t i = 0;
  while (i < LD_STORE_LATENCY_BUCKETS && us > ld_store_latency_bounds_us[i])
    i++;
  srv->stats.latency[i]++;
  srv->stats.latency_count++;
  srv->stats.latency_sum_s += (double)ns / 1e9;
}

/* ---- answers --------------------------------------------------------------------------------- */

static void count_error(job_t *job, ld_store_error_kind_t kind) {
  if (job->srv != NULL)
    job->srv->stats.errors[kind]++;
}

static void answer_status(job_t *job, uint32_t code, const char *request_id, const char *desc) {
  ld_store_response_t res;
  ld_store_response_init(&res);
  res.request_id = request_id;
  res.status_code = code;
  res.status_desc = desc;
  deliver(job, &res);
}

static void answer_decode_error(job_t *job, const char *why) {
  char desc[DESC_MAX];
  snprintf(desc, sizeof desc, "decoding rpc failed: %s", why);
  count_error(job, LD_STORE_ERROR_DECODE);
  LD_DEBUG(LOG_TOPIC, "failed to decode rpc: %s", why);
  answer_status(job, LD_STORE_STATUS_BAD_REQUEST, "", desc);
}

/* 300 as nwaku words it: "BAD_RESPONSE: archive error: <KIND>: <cause>". */
static void answer_archive_error(job_t *job, bool invalid, const char *cause) {
  char desc[DESC_MAX];
  snprintf(desc, sizeof desc, "%s: archive error: %s: %s",
           ld_store_status_name(LD_STORE_STATUS_BAD_RESPONSE),
           invalid ? "INVALID_QUERY" : "DRIVER_ERROR", cause);
  count_error(job, invalid ? LD_STORE_ERROR_INVALID_QUERY : LD_STORE_ERROR_DRIVER);
  LD_DEBUG(LOG_TOPIC, "store query failed: %s", desc);
  answer_status(job, LD_STORE_STATUS_BAD_RESPONSE, "", desc);
}

/* A query that needs a function this server does not serve gets 503 (server.h). Returns true
 * when it was answered so. */
static bool refuse_disabled(job_t *job) {
  uint32_t off = ld_store_query_functions(&job->query) & job->srv->cfg.disabled_functions;
  if (off == 0)
    return false;
  char names[64], desc[DESC_MAX];
  ld_store_functions_text(off, names, sizeof names);
  snprintf(desc, sizeof desc, "%s: not supported by this store node: %s",
           ld_store_status_name(LD_STORE_STATUS_SERVICE_UNAVAILABLE), names);
  count_error(job, LD_STORE_ERROR_DISABLED);
  LD_DEBUG(LOG_TOPIC, "store query refused: %s", desc);
  answer_status(job, LD_STORE_STATUS_SERVICE_UNAVAILABLE, job->query.request_id, desc);
  return true;
}

static size_t keep_count(const ld_store_entry_t *e, size_t n, bool forward, size_t budget) {
  size_t used = RESPONSE_HEADER_MAX, k = 0;
  while (k < n && k < LD_STORE_MAX_PAGE_SIZE) { /* a backend that overfills a page is cut too */
    size_t i = forward ? k : n - 1 - k;
    used += ld_store_entry_wire_len(&e[i]);
    if (k > 0 && used > budget)
      break;
    k++;
  }
  return k;
}

/* Cuts a page over the byte budget: keeps its first entries in query direction and points the
 * cursor at the last one kept. */
static void trim_page(job_t *job, bool forward, ld_store_response_t *res) {
  size_t n = res->n_entries;
  size_t k = keep_count(res->entries, n, forward, job->srv->cfg.max_response_bytes);
  if (k == n)
    return;
  job->srv->stats.trimmed++;
  if (!forward)
    res->entries += n - k;
  res->n_entries = k;
  res->has_cursor = true;
  memcpy(res->cursor, res->entries[forward ? k - 1 : 0].hash, LD_WAKU_HASH_LEN);
}

static void row_to_entry(const ld_archive_row_t *row, bool include_data, ld_store_entry_t *e) {
  memcpy(e->hash, row->hash, LD_WAKU_HASH_LEN);
  e->message = row->msg;
  e->pubsub_topic = NULL;
  if (include_data)
    e->pubsub_topic = row->pubsub_topic != NULL ? row->pubsub_topic : "";
  else
    ld_waku_message_init(&e->message);
}

static bool query_forward(const job_t *job) {
  const ld_store_query_t *q = &job->query;
  return q->has_forward ? q->forward : job->srv->cfg.absent_forward;
}

/* time_start after time_end: nwaku passes the range to its driver, whose SQL finds no row, so
 * the answer is an empty page (or the driver's "cursor not found" first). The archive refuses
 * such a range, so it is asked the query without the range and with a page of one row instead:
 * that checks the cursor as nwaku's driver does, and the rows are dropped (answer_rows). */
static bool reversed_range(const ld_store_query_t *q) {
  return q->has_time_start && q->has_time_end && q->time_start > q->time_end;
}

static void answer_rows(job_t *job, const ld_archive_result_t *full) {
  static const ld_archive_result_t none;
  const ld_archive_result_t *r = reversed_range(&job->query) ? &none : full;
  ld_store_entry_t *entries = r->n_rows > 0 ? calloc(r->n_rows, sizeof *entries) : NULL;
  if (r->n_rows > 0 && entries == NULL) {
    answer_archive_error(job, false, ld_strerror(LD_ERR_NOMEM));
    return;
  }
  for (size_t i = 0; i < r->n_rows; i++)
    row_to_entry(&r->rows[i], job->query.include_data, &entries[i]);
  ld_store_response_t res;
  ld_store_response_init(&res);
  res.request_id = job->query.request_id;
  res.status_code = LD_STORE_STATUS_OK;
  res.status_desc = ld_store_status_name(LD_STORE_STATUS_OK);
  res.entries = entries;
  res.n_entries = r->n_rows;
  res.has_cursor = r->has_cursor;
  memcpy(res.cursor, r->cursor, LD_WAKU_HASH_LEN);
  trim_page(job, query_forward(job), &res);
  job->srv->stats.answered_ok++;
  job->srv->stats.rows += res.n_entries;
  deliver(job, &res);
  free(entries);
}

/* ---- the backend ----------------------------------------------------------------------------- */

static void on_backend_done(int err, const char *why, const ld_archive_result_t *res,
                            void *user_data) {
  job_t *job = user_data;
  job->at_backend = false;
  release_slot(job);
  if (job->srv != NULL)
    observe_latency(job->srv, ld_now_ns() - job->started_ns);
  if (job->srv != NULL && job->phase == PH_QUERYING) {
    if (err != 0)
      answer_archive_error(job, err == LD_ERR_INVALID_ARG,
                           why != NULL && why[0] != '\0' ? why : ld_strerror(err));
    else if (res == NULL)
      answer_archive_error(job, false, ld_strerror(LD_ERR_INTERNAL));
    else
      answer_rows(job, res);
  }
  maybe_release(job);
}

static bool all_zero(const uint8_t *p, size_t n) {
  for (size_t i = 0; i < n; i++)
    if (p[i] != 0)
      return false;
  return true;
}

/* The checks nwaku's archive makes before it queries (findMessages). A cursor of another length
 * than 32 bytes is not refused, as nwaku does not: its decoder copies the field into a 32-byte
 * hash (rpc_codec.nim, copyFrom), zero-padding a shorter one and cutting a longer one, which is
 * what `cursor` holds; so a short cursor is answered "all zeroes cursor hash" or, from the
 * archive, "cursor not found", and findMessages' "invalid cursor hash length" never happens. */
static const char *invalid_reason(const ld_store_query_t *q) {
  if (!q->has_cursor)
    return NULL;
  if (all_zero(q->cursor, LD_WAKU_HASH_LEN))
    return "all zeroes cursor hash";
  if (q->n_content_topics > LD_STORE_MAX_CURSOR_CONTENT_TOPICS)
    return "too many content topics";
  return NULL;
}

static void to_archive(const job_t *job, ld_archive_query_t *aq) {
  const ld_store_query_t *q = &job->query;
  bool reversed = reversed_range(q);
  memset(aq, 0, sizeof *aq);
  aq->pubsub_topic = q->pubsub_topic;
  aq->content_topics = q->content_topics;
  aq->n_content_topics = q->n_content_topics;
  aq->has_time_start = q->has_time_start && !reversed;
  aq->time_start = q->time_start;
  aq->has_time_end = q->has_time_end && !reversed;
  aq->time_end = q->time_end;
  aq->hashes = q->hashes;
  aq->n_hashes = q->n_hashes;
  aq->has_cursor = q->has_cursor;
  memcpy(aq->cursor, q->cursor, LD_WAKU_HASH_LEN);
  aq->forward = query_forward(job);
  aq->limit = reversed ? 1 : ld_store_page_size(q->has_limit, q->limit);
  aq->include_data = q->include_data && !reversed;
}

static void start_query(job_t *job) {
  ld_store_server_t *srv = job->srv;
  const char *invalid = invalid_reason(&job->query);
  if (invalid != NULL) {
    answer_archive_error(job, true, invalid);
    maybe_release(job);
    return;
  }
  ld_archive_query_t aq;
  to_archive(job, &aq);
  job->phase = PH_QUERYING;
  job->at_backend = true;
  job->in_call = true;
  job->started_ns = ld_now_ns();
  if (!job->local)
    srv->stats.queries++;
  arm(job, srv->cfg.query_timeout_ms);
  int rc = srv->backend.query(srv->backend.ctx, &aq, on_backend_done, job);
  job->in_call = false;
  if (rc != 0) {
    job->at_backend = false;
    release_slot(job);
    answer_archive_error(job, false, ld_strerror(rc));
  }
  maybe_release(job);
}

/* ---- writing the response -------------------------------------------------------------------- */

static void write_failed(job_t *job, int err) {
  LD_DEBUG(LOG_TOPIC, "store response not delivered: %s", ld_errname(err));
  count_error(job, LD_STORE_ERROR_WRITE);
  job->phase = PH_DONE;
  ld_stream_reset(job->stream);
}

static void pump(job_t *job) {
  while (job->tx_off < job->tx.len && ld_stream_buffered(job->stream) < WRITE_HIGH_WATER) {
    size_t n = job->tx.len - job->tx_off;
    if (n > WRITE_CHUNK)
      n = WRITE_CHUNK;
    int rc = ld_stream_write(job->stream, job->tx.data + job->tx_off, n);
    if (rc == LD_ERR_LIMIT)
      return; /* wait for on_drain */
    if (rc != 0) {
      write_failed(job, rc);
      return;
    }
    job->tx_off += n;
  }
  if (job->tx_off < job->tx.len)
    return;
  job->phase = PH_DONE;
  int rc = ld_stream_close_write(job->stream);
  if (rc != 0)
    write_failed(job, rc);
}

static void deliver_stream(job_t *job, const ld_store_response_t *res) {
  ld_buf_reset(&job->tx);
  int rc = ld_store_encode_response(res, &job->tx);
  if (rc != 0) {
    LD_WARN(LOG_TOPIC, "cannot encode store response: %s", ld_errname(rc));
    write_failed(job, rc);
    return;
  }
  if (job->srv != NULL)
    job->srv->stats.bytes_out += job->tx.len;
  job->phase = PH_WRITING;
  job->tx_off = 0;
  arm(job, job->srv != NULL ? job->srv->cfg.write_timeout_ms : LD_STORE_DEFAULT_WRITE_TIMEOUT_MS);
  pump(job);
}

static void deliver(job_t *job, const ld_store_response_t *res) {
  if (!job->local) {
    if (job->stream != NULL)
      deliver_stream(job, res);
    else
      job->phase = PH_DONE;
    return;
  }
  job->phase = PH_DONE;
  uv_timer_stop(&job->timer);
  job->local_done(res, job->local_ud);
}

/* ---- reading the request --------------------------------------------------------------------- */

static void handle_request(job_t *job, const uint8_t *body, size_t len) {
  const char *why = "IncorrectBlob";
  int rc = ld_store_decode_request(body, len, &job->query, &why);
  if (rc != 0) {
    answer_decode_error(job, why);
    return;
  }
  if (refuse_disabled(job))
    return;
  if (!admit(job->srv, job)) {
    count_error(job, LD_STORE_ERROR_TOO_MANY);
    LD_DEBUG(LOG_TOPIC, "store query rejected: too many queries");
    answer_status(job, LD_STORE_STATUS_TOO_MANY_REQUESTS, "N/A",
                  ld_store_status_name(LD_STORE_STATUS_TOO_MANY_REQUESTS));
    return;
  }
  start_query(job);
}

static const char *frame_error_text(int err) {
  return err == LD_ERR_TOO_LARGE ? "MessageTooBig" : "VarintDecode";
}

static void on_data(ld_stream_t *s, const uint8_t *data, size_t len) {
  job_t *job = ld_stream_user_data(s);
  if (job->phase != PH_READING || job->srv == NULL)
    return; /* one request per stream: anything after it is ignored */
  job->srv->stats.bytes_in += len;
  if (ld_buf_append(&job->rx, data, len) != 0) {
    job->phase = PH_DONE;
    ld_stream_reset(s);
    return;
  }
  const uint8_t *body;
  size_t n;
  int rc = ld_reqresp_read_frame(job->rx.data, job->rx.len, LD_STORE_MAX_REQUEST_BYTES, &body, &n);
  if (rc == LD_ERR_TRUNCATED)
    return;
  if (rc < 0)
    answer_decode_error(job, frame_error_text(rc));
  else
    handle_request(job, body, n);
}

static void on_eof(ld_stream_t *s) {
  job_t *job = ld_stream_user_data(s);
  if (job->phase != PH_READING)
    return;
  if (job->rx.len > 0) {
    count_error(job, LD_STORE_ERROR_READ);
    LD_DEBUG(LOG_TOPIC, "store request incomplete at end of stream");
  }
  job->phase = PH_DONE;
  ld_stream_close_write(s);
  arm(job, job->srv != NULL ? job->srv->cfg.write_timeout_ms : LD_STORE_DEFAULT_WRITE_TIMEOUT_MS);
}

static void on_drain(ld_stream_t *s) {
  job_t *job = ld_stream_user_data(s);
  if (job->phase == PH_WRITING)
    pump(job);
}

static void on_close(ld_stream_t *s, int err) {
  job_t *job = ld_stream_user_data(s);
  if (job->phase == PH_WRITING) {
    LD_DEBUG(LOG_TOPIC, "store stream closed before the response was written: %s", ld_errname(err));
    count_error(job, LD_STORE_ERROR_WRITE);
  }
  job->phase = PH_DONE; /* a query still at the backend keeps the job alive */
  job->stream = NULL;
  if (job->srv != NULL)
    job->srv->n_streams--;
  maybe_release(job);
}

static const ld_stream_handler_t g_handler = {
    .on_data = on_data,
    .on_eof = on_eof,
    .on_close = on_close,
    .on_drain = on_drain,
};

static void on_timer(uv_timer_t *t) {
  job_t *job = t->data;
  switch (job->phase) {
  case PH_QUEUED:
    if (job->srv == NULL)
      return;
    if (refuse_disabled(job))
      maybe_release(job);
    else
      start_query(job);
    return;
  case PH_QUERYING:
    if (job->srv != NULL)
      answer_archive_error(job, false, "timed out");
    return;
  case PH_WRITING:
    write_failed(job, LD_ERR_TIMEOUT);
    return;
  default:
    job->phase = PH_DONE;
    if (job->stream != NULL)
      ld_stream_reset(job->stream);
    return;
  }
}

static void on_accept(ld_stream_t *s, void *user_data) {
  ld_store_server_t *srv = user_data;
  job_t *job = srv->n_streams < srv->cfg.max_streams ? job_new(srv) : NULL;
  if (job == NULL) {
    srv->stats.streams_refused++;
    LD_DEBUG(LOG_TOPIC, "store stream refused: %zu streams open", srv->n_streams);
    ld_stream_reset(s);
    return;
  }
  srv->n_streams++;
  srv->stats.streams++;
  job->stream = s;
  job->phase = PH_READING;
  job->peer = *ld_conn_remote_peer(ld_stream_conn(s));
  ld_stream_set_handler(s, &g_handler, job);
  arm(job, srv->cfg.read_timeout_ms);
}

/* ---- public ---------------------------------------------------------------------------------- */

void ld_store_server_config_default(ld_store_server_config_t *cfg) {
  memset(cfg, 0, sizeof *cfg);
  cfg->max_queries = LD_STORE_DEFAULT_MAX_QUERIES;
  cfg->max_queries_per_peer = LD_STORE_DEFAULT_MAX_QUERIES_PER_PEER;
  cfg->max_streams = LD_STORE_DEFAULT_MAX_STREAMS;
  cfg->max_response_bytes = LD_STORE_DEFAULT_MAX_RESPONSE_BYTES;
  cfg->read_timeout_ms = LD_STORE_DEFAULT_READ_TIMEOUT_MS;
  cfg->query_timeout_ms = LD_STORE_DEFAULT_QUERY_TIMEOUT_MS;
  cfg->write_timeout_ms = LD_STORE_DEFAULT_WRITE_TIMEOUT_MS;
  cfg->absent_forward = false;
}

static void apply_defaults(ld_store_server_config_t *c) {
  ld_store_server_config_t d;
  ld_store_server_config_default(&d);
  if (c->max_queries == 0)
    c->max_queries = d.max_queries;
  if (c->max_queries_per_peer == 0)
    c->max_queries_per_peer = d.max_queries_per_peer;
  if (c->max_streams == 0)
    c->max_streams = d.max_streams;
  if (c->max_response_bytes == 0)
    c->max_response_bytes = d.max_response_bytes;
  if (c->read_timeout_ms == 0)
    c->read_timeout_ms = d.read_timeout_ms;
  if (c->query_timeout_ms == 0)
    c->query_timeout_ms = d.query_timeout_ms;
  if (c->write_timeout_ms == 0)
    c->write_timeout_ms = d.write_timeout_ms;
}

ld_store_server_t *ld_store_server_new(ld_switch_t *sw, const ld_store_backend_t *backend,
                                       const ld_store_server_config_t *cfg) {
  if (sw == NULL || backend == NULL || backend->query == NULL)
    return NULL;
  ld_store_server_t *srv = calloc(1, sizeof *srv);
  if (srv == NULL)
    return NULL;
  srv->sw = sw;
  srv->backend = *backend;
  if (cfg != NULL)
    srv->cfg = *cfg;
  else
    ld_store_server_config_default(&srv->cfg);
  apply_defaults(&srv->cfg);
  if ((srv->per_peer = ld_hashmap_new(16)) == NULL ||
      ld_switch_handle(sw, LD_STORE_PROTOCOL, on_accept, srv) != 0) {
    ld_hashmap_free(srv->per_peer, NULL);
    free(srv);
    return NULL;
  }
  return srv;
}

void ld_store_server_free(ld_store_server_t *srv) {
  if (srv == NULL)
    return;
  job_t *job = srv->jobs;
  while (job != NULL) {
    job_t *next = job->next;
    job->srv = NULL;
    job->counted = false;
    job->prev = job->next = NULL;
    if (job->stream != NULL)
      ld_stream_reset(job->stream);
    maybe_release(job);
    job = next;
  }
  ld_hashmap_free(srv->per_peer, NULL);
  free(srv);
}

int ld_store_server_query_local(ld_store_server_t *srv, const ld_store_query_t *q,
                                ld_store_local_fn done, void *user_data) {
  if (srv == NULL || q == NULL || done == NULL)
    return LD_ERR_INVALID_ARG;
  ld_buf_t frame;
  ld_buf_init(&frame);
  int rc = ld_store_encode_request(q, &frame); /* a deep copy through the codec */
  const uint8_t *body = NULL;
  size_t n = 0;
  if (rc == 0)
    rc =
        ld_reqresp_read_frame(frame.data, frame.len, SIZE_MAX, &body, &n) < 0 ? LD_ERR_INTERNAL : 0;
  job_t *job = rc == 0 ? job_new(srv) : NULL;
  if (rc == 0 && job == NULL)
    rc = LD_ERR_NOMEM;
  if (rc == 0)
    rc = ld_store_decode_request(body, n, &job->query, NULL);
  ld_buf_clear(&frame);
  if (rc != 0) {
    if (job != NULL) {
      job->phase = PH_DONE;
      job->local = true;
      maybe_release(job);
    }
    return rc == LD_ERR_NOMEM ? rc : LD_ERR_INVALID_ARG;
  }
  job->local = true;
  job->local_done = done;
  job->local_ud = user_data;
  job->phase = PH_QUEUED;
  srv->stats.local_queries++;
  arm(job, 0);
  return 0;
}

void ld_store_server_get_stats(const ld_store_server_t *srv, ld_store_server_stats_t *out) {
  *out = srv->stats;
}
