/* The metrics of the node's service protocols (archive, store, lightpush, filter, peer exchange)
 * under nwaku's names, collected at scrape time from the stats getters of the services:
 *
 *   waku_archive_messages{type="stored"}          gauge: messages in the archive, from a count
 *                                                 the collector asks the archive for (async)
 *                                                 when the archive is set and then every
 *                                                 archive_count_interval_ms (nwaku: 30 min);
 *                                                 no sample until the first count answered
 *   waku_archive_errors_total{type}               counter: "invalid_message_too_old",
 *                                                 "invalid_message_future_timestamp" (ingest
 *                                                 refusals), "insert_failure" (rows whose write
 *                                                 batch failed)
 *   waku_archive_query_duration_seconds           histogram: time from a store query decoded
 *                                                 (network or local) to the archive's answer,
 *                                                 from the store server's latency buckets
 *                                                 (0.1 ms … 10 s; needs the store server)
 *   waku_store_queries_total                      counter: queries admitted to the archive
 *   waku_store_errors_total{type}                 counter: "decode_rpc_failure",
 *                                                 "invalid_query", "driver_error",
 *                                                 "too_many_requests", "read_failure",
 *                                                 "write_failure" (ld_store_error_kind_name)
 *   waku_lightpush_v3_messages_total{type="PushRequest"}
 *                                                 counter: v3 requests that reached publishing
 *   waku_lightpush_v3_errors_total{type}          counter: v3 answers by non-200 status code,
 *                                                 the code in decimal ("400", "420", …) as
 *                                                 nwaku labels them
 *   waku_lightpush_messages_total{type="PushRequest"}
 *                                                 counter: legacy requests that reached
 *                                                 publishing
 *   waku_lightpush_errors_total{type}             counter: legacy failures by kind
 *                                                 (ld_lightpush_legacy_error_name: nwaku labels
 *                                                 them with the answer's info text, whose
 *                                                 variable parts are left out here)
 *   waku_filter_requests_total{type}              counter: decoded subscribe requests by type
 *                                                 ("SUBSCRIBER_PING", "SUBSCRIBE",
 *                                                 "UNSUBSCRIBE", "UNSUBSCRIBE_ALL")
 *   waku_filter_errors_total{type}                counter: "decode_rpc_failure" (requests
 *                                                 that do not decode), "push_timeout_failure"
 *                                                 (pushes that waited longer than the push
 *                                                 timeout), "dial_failure" (pushes lost for
 *                                                 want of a connection or a push stream)
 *   waku_filter_subscriptions                     gauge: subscribed peers
 *   waku_px_peers_sent_total                      counter: records sent to requesters
 *   waku_px_errors_total{type}                    counter: "decode_rpc_failure" (answered
 *                                                 BAD_REQUEST), "px_failure" (streams reset:
 *                                                 framing errors, timeouts, in-flight cap)
 *   waku_service_network_bytes_total{service,direction}
 *                                                 counter: bytes of the store protocol
 *                                                 ("/vac/waku/store-query/3.0.0", "in" and
 *                                                 "out") and of filter pushes
 *                                                 ("/vac/waku/filter-push/2.0.0-beta1",
 *                                                 "out"), as written on the streams: length
 *                                                 prefixes included, which nwaku leaves out
 *
 * Store-sync, nwaku's names (waku_store_sync/protocols_metrics.nim, without a waku_ prefix):
 *   reconciliation_roundtrips                     histogram: payloads read per session
 *                                                 (buckets 1, 2, 3, 5, 8, 13)
 *   reconciliation_differences                    histogram: differences found per session
 *                                                 (buckets 0, 10, 50, 100, 500, 1000, 5000)
 *   total_bytes_exchanged{protocol,direction}     counter: frame bodies, protocol
 *                                                 "reconciliation" or "transfer", direction
 *                                                 "receive" or "sent" (nwaku's label values)
 *   total_transfer_messages_exchanged{direction}  counter: transfer messages, "receive"/"sent"
 *   total_messages_cached                         gauge: items in the store-sync sets
 * and one nwaku lacks (it checks nothing it receives):
 *   waku_store_sync_rejected_messages{type}       counter: transferred messages refused, by
 *                                                 verdict (ld_sync_ingress_verdict_name:
 *                                                 "duplicate", "unsolicited", "too_old", …)
 *
 * Not exposed, for want of the figure in the services' stats: waku_archive_messages_per_shard,
 * waku_archive_errors{type="retpolicy_failure"}, waku_archive_insert_duration_seconds,
 * waku_store_time_seconds{phase} (a last duration, not kept), waku_filter_request_duration_seconds,
 * waku_filter_handle_message_duration_seconds, and the lightpush traffic (its byte counters do
 * not tell v3 from legacy, which nwaku labels apart).
 *
 * Every family is registered whatever the sources; a NULL source leaves its families without
 * samples. Counters come from the services' own counters, so they restart at zero when a
 * service is replaced.
 *
 * Wiring into a node (src/node/node_servers.c, start_metrics, after ld_node_metrics_new):
 *
 *   ld_service_metrics_sources_t ss = {
 *       .archive = node->archive,         (NULL while it is still opening)
 *       .store = <store server>, .lightpush = <lightpush server>,
 *       .filter = <filter server>, .px = <peer-exchange server>,
 *       .store_sync = <store-sync service>,                        (NULL when not mounted)
 *       .loop = node->loop};
 *   node->service_metrics = ld_service_metrics_new(node->metrics_reg, &ss);
 *
 * then ld_service_metrics_set_archive(node->service_metrics, a) when the archive has opened
 * (on_archive_open), ld_service_metrics_set_archive(…, NULL) before ld_archive_close, and
 * ld_service_metrics_free(node->service_metrics) before ld_metrics_free in
 * ld_node_servers_free. */
#ifndef LD_METRICS_SERVICE_METRICS_H
#define LD_METRICS_SERVICE_METRICS_H

#include <stdbool.h>
#include <stdint.h>
#include <uv.h>

#include "metrics/metrics.h"
#include "waku/archive/archive.h"
#include "waku/filter/server.h"
#include "waku/lightpush/server.h"
#include "waku/peer_exchange/peer_exchange.h"
#include "waku/store/server.h"
#include "waku/sync/service.h"

/* How often the stored-messages gauge is refreshed by default (nwaku's
 * WakuArchiveDefaultMetricsReportInterval). */
#define LD_SERVICE_METRICS_ARCHIVE_COUNT_INTERVAL_MS (30u * 60 * 1000)

/* Where the figures come from. Every pointer is borrowed and must stay valid until
 * ld_service_metrics_free (or until replaced); NULL sources leave their metrics without
 * samples. */
typedef struct ld_service_metrics_sources {
  ld_archive_t *archive;
  ld_store_server_t *store;
  ld_lightpush_server_t *lightpush;
  ld_filter_server_t *filter;
  ld_px_server_t *px;
  ld_store_sync_t *store_sync;
  /* The loop of the services, for the timer that refreshes the stored-messages count; NULL: no
   * timer (the count is then asked for only by ld_service_metrics_set_archive and
   * ld_service_metrics_refresh). */
  uv_loop_t *loop;
  uint32_t archive_count_interval_ms; /* 0: LD_SERVICE_METRICS_ARCHIVE_COUNT_INTERVAL_MS */
} ld_service_metrics_sources_t;

typedef struct ld_service_metrics ld_service_metrics_t;

/* Registers the families above in `reg` (borrowed; must outlive the object), starts the count
 * timer (unreferenced: it does not keep the loop alive) and, with an archive, a first count.
 * Loop thread only. Returns NULL on allocation failure or when a name is already registered
 * (then nothing stays registered). */
ld_service_metrics_t *ld_service_metrics_new(ld_metrics_t *reg,
                                             const ld_service_metrics_sources_t *src);

/* Replaces the archive (it has opened, or is about to close: set NULL before ld_archive_close).
 * The stored-messages gauge loses its sample until a count of the new archive answers; a count
 * started on the former archive is ignored when it answers. With an archive, a count starts at
 * once. */
void ld_service_metrics_set_archive(ld_service_metrics_t *sm, ld_archive_t *archive);

/* Replace the other sources (a service mounted or freed); NULL removes it. */
void ld_service_metrics_set_store(ld_service_metrics_t *sm, ld_store_server_t *store);
void ld_service_metrics_set_lightpush(ld_service_metrics_t *sm, ld_lightpush_server_t *lightpush);
void ld_service_metrics_set_filter(ld_service_metrics_t *sm, ld_filter_server_t *filter);
void ld_service_metrics_set_px(ld_service_metrics_t *sm, ld_px_server_t *px);
void ld_service_metrics_set_store_sync(ld_service_metrics_t *sm, ld_store_sync_t *store_sync);

/* Asks the archive for its message count now (the gauge changes when it answers, from the
 * loop). Returns 0 (also when a count is already under way), LD_ERR_STATE without an archive,
 * or the errors of ld_archive_count (LD_ERR_CLOSED, LD_ERR_NOMEM). */
int ld_service_metrics_refresh(ld_service_metrics_t *sm);

/* The last stored-messages count: true and *count set when one has answered for the current
 * archive, false otherwise. */
bool ld_service_metrics_stored(const ld_service_metrics_t *sm, uint64_t *count);

/* Removes the families from the registry and frees the object. A count still under way is
 * detached (its answer is ignored); the timer handle is released from the loop's next turn, so
 * call this while the loop still runs, or run it once more before uv_loop_close. NULL is a
 * no-op. */
void ld_service_metrics_free(ld_service_metrics_t *sm);

#endif
