#include "metrics/service_metrics.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "waku/core/codecs.h"

/* A count under way; `sm` is cleared when its answer no longer matters. */
typedef struct count_req {
  ld_service_metrics_t *sm;
} count_req_t;

struct ld_service_metrics {
  ld_metrics_t *reg;
  ld_service_metrics_sources_t src;
  uv_timer_t *timer; /* NULL without a loop */
  count_req_t *counting;
  bool has_stored;
  uint64_t stored;
};

/* ---- the stored-messages count --------------------------------------------------------------- */

static void on_count(int err, uint64_t count, void *user_data) {
  count_req_t *req = user_data;
  ld_service_metrics_t *sm = req->sm;
  if (sm != NULL) {
    sm->counting = NULL;
    if (err == 0) {
      sm->stored = count;
      sm->has_stored = true;
    }
  }
  free(req);
}

static void detach_count(ld_service_metrics_t *sm) {
  if (sm->counting != NULL)
    sm->counting->sm = NULL;
  sm->counting = NULL;
}

int ld_service_metrics_refresh(ld_service_metrics_t *sm) {
  if (sm->src.archive == NULL)
    return LD_ERR_STATE;
  if (sm->counting != NULL)
    return 0;
  count_req_t *req = calloc(1, sizeof *req);
  if (req == NULL)
    return LD_ERR_NOMEM;
  req->sm = sm;
  int rc = ld_archive_count(sm->src.archive, on_count, req);
  if (rc != 0) {
    free(req);
    return rc;
  }
  sm->counting = req;
  return 0;
}

bool ld_service_metrics_stored(const ld_service_metrics_t *sm, uint64_t *count) {
  if (!sm->has_stored)
    return false;
  *count = sm->stored;
  return true;
}

static void on_tick(uv_timer_t *t) {
  ld_service_metrics_t *sm = t->data;
  if (sm->src.archive != NULL)
    ld_service_metrics_refresh(sm);
}

static void on_timer_closed(uv_handle_t *h) {
  free(h);
}

static int start_timer(ld_service_metrics_t *sm) {
  uint32_t every = sm->src.archive_count_interval_ms != 0
                       ? sm->src.archive_count_interval_ms
                       : LD_SERVICE_METRICS_ARCHIVE_COUNT_INTERVAL_MS;
  sm->timer = calloc(1, sizeof *sm->timer);
  if (sm->timer == NULL)
    return LD_ERR_NOMEM;
  uv_timer_init(sm->src.loop, sm->timer);
  sm->timer->data = sm;
  uv_unref((uv_handle_t *)sm->timer);
  uv_timer_start(sm->timer, on_tick, every, every);
  return 0;
}

static void stop_timer(ld_service_metrics_t *sm) {
  if (sm->timer == NULL)
    return;
  uv_timer_stop(sm->timer);
  uv_close((uv_handle_t *)sm->timer, on_timer_closed);
  sm->timer = NULL;
}

/* ---- archive --------------------------------------------------------------------------------- */

static void c_archive_messages(ld_metrics_emitter_t *e, void *ud) {
  ld_service_metrics_t *sm = ud;
  if (sm->src.archive != NULL && sm->has_stored)
    ld_metrics_emit(e, (const char *const[]){"stored"}, (double)sm->stored);
}

static void c_archive_errors(ld_metrics_emitter_t *e, void *ud) {
  ld_service_metrics_t *sm = ud;
  if (sm->src.archive == NULL)
    return;
  ld_archive_stats_t st;
  ld_archive_stats(sm->src.archive, &st);
  ld_metrics_emit(e, (const char *const[]){"invalid_message_too_old"}, (double)st.rejected_too_old);
  ld_metrics_emit(e, (const char *const[]){"invalid_message_future_timestamp"},
                  (double)st.rejected_future);
  ld_metrics_emit(e, (const char *const[]){"insert_failure"}, (double)st.insert_errors);
}

/* ---- store ----------------------------------------------------------------------------------- */

static void c_query_duration(ld_metrics_emitter_t *e, void *ud) {
  ld_service_metrics_t *sm = ud;
  if (sm->src.store == NULL)
    return;
  ld_store_server_stats_t st;
  ld_store_server_get_stats(sm->src.store, &st);
  double bounds[LD_STORE_LATENCY_BUCKETS];
  uint64_t cum[LD_STORE_LATENCY_BUCKETS], acc = 0;
  for (size_t i = 0; i < LD_STORE_LATENCY_BUCKETS; i++) {
    bounds[i] = ld_store_latency_bounds_us[i] / 1e6;
    acc += st.latency[i];
    cum[i] = acc;
  }
  ld_metrics_emit_histogram(e, NULL, bounds, cum, LD_STORE_LATENCY_BUCKETS, st.latency_count,
                            st.latency_sum_s);
}

static void c_store_queries(ld_metrics_emitter_t *e, void *ud) {
  ld_service_metrics_t *sm = ud;
  if (sm->src.store == NULL)
    return;
  ld_store_server_stats_t st;
  ld_store_server_get_stats(sm->src.store, &st);
  ld_metrics_emit(e, NULL, (double)st.queries);
}

static void c_store_errors(ld_metrics_emitter_t *e, void *ud) {
  ld_service_metrics_t *sm = ud;
  if (sm->src.store == NULL)
    return;
  ld_store_server_stats_t st;
  ld_store_server_get_stats(sm->src.store, &st);
  for (int k = 0; k < LD_STORE_ERROR_KIND_COUNT; k++)
    ld_metrics_emit(e, (const char *const[]){ld_store_error_kind_name(k)}, (double)st.errors[k]);
}

/* ---- lightpush ------------------------------------------------------------------------------- */

static bool lightpush_stats(const ld_service_metrics_t *sm, ld_lightpush_server_stats_t *st) {
  if (sm->src.lightpush == NULL)
    return false;
  ld_lightpush_server_get_stats(sm->src.lightpush, st);
  return true;
}

static void c_lp_v3_messages(ld_metrics_emitter_t *e, void *ud) {
  ld_lightpush_server_stats_t st;
  if (lightpush_stats(ud, &st))
    ld_metrics_emit(e, (const char *const[]){"PushRequest"}, (double)st.v3_pushes);
}

static void c_lp_v3_errors(ld_metrics_emitter_t *e, void *ud) {
  ld_lightpush_server_stats_t st;
  if (!lightpush_stats(ud, &st))
    return;
  for (size_t i = 0; i < LD_LIGHTPUSH_N_CODES; i++) {
    if (ld_lightpush_codes[i] == LD_LIGHTPUSH_SUCCESS)
      continue;
    char code[16];
    snprintf(code, sizeof code, "%u", (unsigned)ld_lightpush_codes[i]);
    ld_metrics_emit(e, (const char *const[]){code}, (double)st.v3_answers[i]);
  }
}

static void c_lp_messages(ld_metrics_emitter_t *e, void *ud) {
  ld_lightpush_server_stats_t st;
  if (lightpush_stats(ud, &st))
    ld_metrics_emit(e, (const char *const[]){"PushRequest"}, (double)st.legacy_pushes);
}

static void c_lp_errors(ld_metrics_emitter_t *e, void *ud) {
  ld_lightpush_server_stats_t st;
  if (!lightpush_stats(ud, &st))
    return;
  for (int k = 0; k < LD_LIGHTPUSH_LEGACY_N_ERRORS; k++)
    ld_metrics_emit(e, (const char *const[]){ld_lightpush_legacy_error_name(k)},
                    (double)st.legacy_errors[k]);
}

/* ---- filter ---------------------------------------------------------------------------------- */

static bool filter_stats(const ld_service_metrics_t *sm, ld_filter_server_stats_t *st) {
  if (sm->src.filter == NULL)
    return false;
  ld_filter_server_get_stats(sm->src.filter, st);
  return true;
}

static void c_filter_requests(ld_metrics_emitter_t *e, void *ud) {
  ld_filter_server_stats_t st;
  if (!filter_stats(ud, &st))
    return;
  for (uint32_t t = 0; t < LD_FILTER_REQUEST_TYPES; t++)
    ld_metrics_emit(e, (const char *const[]){ld_filter_request_type_name(t)},
                    (double)st.requests[t]);
}

static void c_filter_errors(ld_metrics_emitter_t *e, void *ud) {
  ld_filter_server_stats_t st;
  if (!filter_stats(ud, &st))
    return;
  ld_metrics_emit(e, (const char *const[]){"decode_rpc_failure"}, (double)st.decode_errors);
  ld_metrics_emit(e, (const char *const[]){"push_timeout_failure"}, (double)st.push_timeouts);
  ld_metrics_emit(e, (const char *const[]){"dial_failure"}, (double)st.push_errors);
}

static void c_filter_subscriptions(ld_metrics_emitter_t *e, void *ud) {
  ld_filter_server_stats_t st;
  if (filter_stats(ud, &st))
    ld_metrics_emit(e, NULL, (double)st.peers);
}

/* ---- peer exchange --------------------------------------------------------------------------- */

static bool px_stats(const ld_service_metrics_t *sm, ld_px_server_stats_t *st) {
  if (sm->src.px == NULL)
    return false;
  ld_px_server_get_stats(sm->src.px, st);
  return true;
}

static void c_px_sent(ld_metrics_emitter_t *e, void *ud) {
  ld_px_server_stats_t st;
  if (px_stats(ud, &st))
    ld_metrics_emit(e, NULL, (double)st.enrs_sent);
}

static void c_px_errors(ld_metrics_emitter_t *e, void *ud) {
  ld_px_server_stats_t st;
  if (!px_stats(ud, &st))
    return;
  ld_metrics_emit(e, (const char *const[]){"decode_rpc_failure"}, (double)st.bad_requests);
  ld_metrics_emit(e, (const char *const[]){"px_failure"}, (double)st.failed);
}

/* ---- traffic --------------------------------------------------------------------------------- */

static void c_network_bytes(ld_metrics_emitter_t *e, void *ud) {
  ld_service_metrics_t *sm = ud;
  if (sm->src.store != NULL) {
    ld_store_server_stats_t st;
    ld_store_server_get_stats(sm->src.store, &st);
    ld_metrics_emit(e, (const char *const[]){LD_WAKU_STORE_CODEC, "in"}, (double)st.bytes_in);
    ld_metrics_emit(e, (const char *const[]){LD_WAKU_STORE_CODEC, "out"}, (double)st.bytes_out);
  }
  ld_filter_server_stats_t fs;
  if (filter_stats(sm, &fs))
    ld_metrics_emit(e, (const char *const[]){LD_WAKU_FILTER_PUSH_CODEC, "out"},
                    (double)fs.push_bytes);
}

/* ---- store-sync ------------------------------------------------------------------------------ */

static bool sync_stats(const ld_service_metrics_t *sm, ld_store_sync_stats_t *st) {
  if (sm->src.store_sync == NULL)
    return false;
  ld_store_sync_get_stats(sm->src.store_sync, st);
  return true;
}

static void emit_sync_histogram(ld_metrics_emitter_t *e, const uint64_t *counts,
                                const double *bounds, size_t n, double sum) {
  ld_metrics_emit_histogram(e, NULL, bounds, counts, n, counts[n], sum);
}

static void c_sync_roundtrips(ld_metrics_emitter_t *e, void *ud) {
  ld_store_sync_stats_t st;
  if (sync_stats(ud, &st))
    emit_sync_histogram(e, st.roundtrips, ld_store_sync_roundtrip_bounds,
                        LD_STORE_SYNC_ROUNDTRIP_BUCKETS, st.roundtrips_sum);
}

static void c_sync_differences(ld_metrics_emitter_t *e, void *ud) {
  ld_store_sync_stats_t st;
  if (sync_stats(ud, &st))
    emit_sync_histogram(e, st.differences, ld_store_sync_difference_bounds,
                        LD_STORE_SYNC_DIFFERENCE_BUCKETS, st.differences_sum);
}

static void c_sync_bytes(ld_metrics_emitter_t *e, void *ud) {
  ld_store_sync_stats_t st;
  if (!sync_stats(ud, &st))
    return;
  ld_metrics_emit(e, (const char *const[]){"reconciliation", "receive"}, (double)st.recon_bytes_in);
  ld_metrics_emit(e, (const char *const[]){"reconciliation", "sent"}, (double)st.recon_bytes_out);
  ld_metrics_emit(e, (const char *const[]){"transfer", "receive"}, (double)st.transfer_bytes_in);
  ld_metrics_emit(e, (const char *const[]){"transfer", "sent"}, (double)st.transfer_bytes_out);
}

static void c_sync_messages(ld_metrics_emitter_t *e, void *ud) {
  ld_store_sync_stats_t st;
  if (!sync_stats(ud, &st))
    return;
  ld_metrics_emit(e, (const char *const[]){"receive"}, (double)st.transfer_in);
  ld_metrics_emit(e, (const char *const[]){"sent"}, (double)st.transfer_out);
}

static void c_sync_cached(ld_metrics_emitter_t *e, void *ud) {
  ld_store_sync_stats_t st;
  if (sync_stats(ud, &st))
    ld_metrics_emit(e, NULL, (double)st.cached);
}

static void c_sync_rejected(ld_metrics_emitter_t *e, void *ud) {
  ld_store_sync_stats_t st;
  if (!sync_stats(ud, &st))
    return;
  for (int v = LD_SYNC_INGRESS_DUPLICATE; v < LD_SYNC_INGRESS_VERDICTS; v++)
    ld_metrics_emit(e, (const char *const[]){ld_sync_ingress_verdict_name(v)},
                    (double)st.rejected[v]);
}

/* ---- registration ---------------------------------------------------------------------------- */

typedef struct family_def {
  const char *name;
  ld_metric_type_t type;
  const char *help;
  const char *labels[2];
  size_t n_labels;
  ld_metrics_collect_fn fn;
} family_def_t;

static const family_def_t FAMILIES[] = {
    {"waku_archive_messages",
     LD_METRIC_GAUGE,
     "number of historical messages",
     {"type"},
     1,
     c_archive_messages},
    {"waku_archive_errors",
     LD_METRIC_COUNTER,
     "number of messages the archive refused or could not store",
     {"type"},
     1,
     c_archive_errors},
    {"waku_archive_query_duration_seconds",
     LD_METRIC_HISTOGRAM,
     "history query duration",
     {0},
     0,
     c_query_duration},
    {"waku_store_queries",
     LD_METRIC_COUNTER,
     "number of store queries received",
     {0},
     0,
     c_store_queries},
    {"waku_store_errors",
     LD_METRIC_COUNTER,
     "number of store protocol errors",
     {"type"},
     1,
     c_store_errors},
    {"waku_lightpush_v3_messages",
     LD_METRIC_COUNTER,
     "number of lightpush messages received",
     {"type"},
     1,
     c_lp_v3_messages},
    {"waku_lightpush_v3_errors",
     LD_METRIC_COUNTER,
     "number of lightpush protocol errors",
     {"type"},
     1,
     c_lp_v3_errors},
    {"waku_lightpush_messages",
     LD_METRIC_COUNTER,
     "number of lightpush messages received",
     {"type"},
     1,
     c_lp_messages},
    {"waku_lightpush_errors",
     LD_METRIC_COUNTER,
     "number of lightpush protocol errors",
     {"type"},
     1,
     c_lp_errors},
    {"waku_filter_requests",
     LD_METRIC_COUNTER,
     "number of filter subscribe requests received",
     {"type"},
     1,
     c_filter_requests},
    {"waku_filter_errors",
     LD_METRIC_COUNTER,
     "number of filter protocol errors",
     {"type"},
     1,
     c_filter_errors},
    {"waku_filter_subscriptions",
     LD_METRIC_GAUGE,
     "number of subscribed filter clients",
     {0},
     0,
     c_filter_subscriptions},
    {"waku_px_peers_sent",
     LD_METRIC_COUNTER,
     "number of ENRs sent to peer exchange requesters",
     {0},
     0,
     c_px_sent},
    {"waku_px_errors",
     LD_METRIC_COUNTER,
     "number of peer exchange errors",
     {"type"},
     1,
     c_px_errors},
    {"waku_service_network_bytes",
     LD_METRIC_COUNTER,
     "traffic of the non-relay services per protocol and direction",
     {"service", "direction"},
     2,
     c_network_bytes},
    {"reconciliation_roundtrips",
     LD_METRIC_HISTOGRAM,
     "the nubmer of roundtrips for each reconciliation",
     {0},
     0,
     c_sync_roundtrips},
    {"reconciliation_differences",
     LD_METRIC_HISTOGRAM,
     "the nubmer of differences for each reconciliation",
     {0},
     0,
     c_sync_differences},
    {"total_bytes_exchanged",
     LD_METRIC_COUNTER,
     "the number of bytes sent and received by the protocols",
     {"protocol", "direction"},
     2,
     c_sync_bytes},
    {"total_transfer_messages_exchanged",
     LD_METRIC_COUNTER,
     "the number of messages sent and received by the transfer protocol",
     {"direction"},
     1,
     c_sync_messages},
    {"total_messages_cached",
     LD_METRIC_GAUGE,
     "the number of messages cached by the node after prunning",
     {0},
     0,
     c_sync_cached},
    {"waku_store_sync_rejected_messages",
     LD_METRIC_COUNTER,
     "transferred messages refused by store-sync, by reason",
     {"type"},
     1,
     c_sync_rejected},
};

#define N_FAMILIES (sizeof FAMILIES / sizeof FAMILIES[0])

static void remove_families(ld_service_metrics_t *sm, size_t n) {
  for (size_t i = 0; i < n; i++)
    ld_metrics_remove_family(sm->reg, FAMILIES[i].name);
}

static int add_families(ld_service_metrics_t *sm) {
  for (size_t i = 0; i < N_FAMILIES; i++) {
    const family_def_t *d = &FAMILIES[i];
    int rc = ld_metrics_add_collector(sm->reg, d->name, d->type, d->help, d->labels, d->n_labels,
                                      d->fn, sm);
    if (rc != 0) {
      remove_families(sm, i);
      return rc;
    }
  }
  return 0;
}

ld_service_metrics_t *ld_service_metrics_new(ld_metrics_t *reg,
                                             const ld_service_metrics_sources_t *src) {
  if (reg == NULL || src == NULL)
    return NULL;
  ld_service_metrics_t *sm = calloc(1, sizeof *sm);
  if (sm == NULL)
    return NULL;
  sm->reg = reg;
  sm->src = *src;
  if (add_families(sm) != 0) {
    free(sm);
    return NULL;
  }
  if (src->loop != NULL && start_timer(sm) != 0) {
    remove_families(sm, N_FAMILIES);
    free(sm);
    return NULL;
  }
  if (sm->src.archive != NULL)
    ld_service_metrics_refresh(sm);
  return sm;
}

void ld_service_metrics_set_archive(ld_service_metrics_t *sm, ld_archive_t *archive) {
  if (archive == sm->src.archive)
    return;
  detach_count(sm);
  sm->has_stored = false;
  sm->src.archive = archive;
  if (archive != NULL)
    ld_service_metrics_refresh(sm);
}

void ld_service_metrics_set_store(ld_service_metrics_t *sm, ld_store_server_t *store) {
  sm->src.store = store;
}

void ld_service_metrics_set_lightpush(ld_service_metrics_t *sm, ld_lightpush_server_t *lightpush) {
  sm->src.lightpush = lightpush;
}

void ld_service_metrics_set_filter(ld_service_metrics_t *sm, ld_filter_server_t *filter) {
  sm->src.filter = filter;
}

void ld_service_metrics_set_px(ld_service_metrics_t *sm, ld_px_server_t *px) {
  sm->src.px = px;
}

void ld_service_metrics_set_store_sync(ld_service_metrics_t *sm, ld_store_sync_t *store_sync) {
  sm->src.store_sync = store_sync;
}

void ld_service_metrics_free(ld_service_metrics_t *sm) {
  if (sm == NULL)
    return;
  remove_families(sm, N_FAMILIES);
  detach_count(sm);
  stop_timer(sm);
  free(sm);
}
