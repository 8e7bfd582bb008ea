/* The filter service (12/WAKU2-FILTER, service side): answers
 * /vac/waku/filter-subscribe/2.0.0-beta1 requests and pushes matching messages to subscribers on
 * /vac/waku/filter-push/2.0.0-beta1.
 *
 * Requests: one length-prefixed FilterSubscribeRequest per inbound stream, answered with one
 * FilterSubscribeResponse, then our side is half-closed (js-waku reads until the stream ends).
 * Codes and descriptions are nwaku's (see waku/filter/subscriptions.h). A request that cannot be
 * decoded gets no answer: the stream is half-closed at once. A peer over the rate limit (30
 * requests per minute by default) gets 429 with request ID "N/A" and "filter request rejected due
 * rate limit exceeded". Inbound streams that send nothing are reset after request_timeout_ms
 * (js-waku pre-opens streams and opens a new one when its stream is gone); more than
 * LD_FILTER_MAX_INBOUND_STREAMS at once on one connection are reset.
 *
 * Pushes: the node feeds every relay-accepted message to ld_filter_server_handle_message (the
 * LD_FANOUT_FILTER stage). For each live subscriber of (pubsub topic, content topic) the message
 * is written as one LP-framed MessagePush on that peer's push stream. Light clients do not
 * listen, so the service never dials: the stream is opened on the connection the subscriber's
 * latest request came from (or another live connection to that peer) as soon as a SUBSCRIBE
 * succeeds (see open_push_on_subscribe), and kept for later pushes.
 * When the stream fails, one new stream is opened for the frames still waiting; when that fails
 * too, they are dropped. A message whose deterministic hash was pushed within dedup_ttl_ms (2
 * minutes) is not pushed again (a repeat refreshes the entry, as nwaku's timed cache does).
 * Each subscriber has a bounded queue: frames wait there while the stream is being opened or
 * while more than LD_FILTER_PUSH_HIGH_WATER bytes wait in it (a subscriber that does not read);
 * a frame that finds the queue full is dropped and counted, and frames older than
 * push_timeout_ms (20 s) are dropped as timed out.
 *
 * Maintenance (every maintenance_interval_ms, 1 minute): expired subscriptions are removed, and
 * so are subscribers that have had no connection for a whole interval (nwaku drops peers that
 * left its peer store); full rate-limit buckets are forgotten.
 *
 * Wiring into a node (the fan-out lives in a higher layer, so the adapter lives there):
 *
 *   static void filter_stage(const ld_fanout_message_t *m, void *ud) {
 *     ld_filter_server_handle_message(ud, m->pubsub_topic, m->msg, m->hash);
 *   }
 *   srv = ld_filter_server_new(sw, loop, &cfg);
 *   ld_fanout_add(fanout, LD_FANOUT_FILTER, filter_stage, srv);
 *   ...after ld_switch_close has called its `done`: ld_filter_server_free(srv);
 *
 * Every call must come from the switch's loop thread; nothing calls back into the owner. */
#ifndef LD_WAKU_FILTER_SERVER_H
#define LD_WAKU_FILTER_SERVER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <uv.h>

#include "p2p/switch.h"
#include "waku/core/message.h"
#include "waku/filter/codec.h"
#include "waku/filter/subscriptions.h"

#define LD_FILTER_MAINTENANCE_INTERVAL_MS (60u * 1000)
/* nwaku MessageCacheTTL. */
#define LD_FILTER_DEDUP_TTL_MS (120u * 1000)
/* Message hashes remembered at most (about 8,700 messages a second over 2 minutes). */
#define LD_FILTER_DEDUP_MAX 1048576u
/* nwaku MessagePushTimeout. */
#define LD_FILTER_PUSH_TIMEOUT_MS (20u * 1000)
/* Frames waiting for one subscriber at most. */
#define LD_FILTER_PUSH_QUEUE_MAX 64
/* Bytes waiting inside a push stream above which further frames wait in our queue. */
#define LD_FILTER_PUSH_HIGH_WATER (512u * 1024)
/* Deadline for an inbound subscribe stream to deliver its request. */
#define LD_FILTER_REQUEST_TIMEOUT_MS (30u * 1000)
/* Inbound subscribe streams served at once on one connection. */
#define LD_FILTER_MAX_INBOUND_STREAMS 16

typedef struct ld_filter_server ld_filter_server_t;

typedef struct ld_filter_server_config {
  size_t max_peers;                 /* --filter-max-peers-to-serve; default 1000 */
  size_t max_criteria_per_peer;     /* --filter-max-criteria; default 1000 */
  uint64_t subscription_ttl_ms;     /* --filter-subscription-timeout; default 300,000 */
  uint32_t maintenance_interval_ms; /* default LD_FILTER_MAINTENANCE_INTERVAL_MS */
  uint32_t dedup_ttl_ms;            /* default LD_FILTER_DEDUP_TTL_MS */
  uint32_t push_timeout_ms;         /* default LD_FILTER_PUSH_TIMEOUT_MS */
  size_t push_queue_max;            /* default LD_FILTER_PUSH_QUEUE_MAX */
  uint32_t request_timeout_ms;      /* default LD_FILTER_REQUEST_TIMEOUT_MS */
  /* Per-peer requests per period (--rate-limit filter:V/P). Defaults 30 per 60,000 ms; set
   * `rate_limit_unlimited` to switch the limit off. */
  uint32_t rate_limit_volume;
  uint64_t rate_limit_period_ms;
  bool rate_limit_unlimited;
  /* Open the push stream as soon as a SUBSCRIBE succeeds, so that the first message does not
   * wait for a protocol negotiation (nwaku opens it at the first push). Default true; a config
   * not made by ld_filter_server_config_default has it false. */
  bool open_push_on_subscribe;
} ld_filter_server_config_t;

/* Fills `cfg` with the defaults above. Zero fields of a config passed to ld_filter_server_new
 * also take their defaults. */
void ld_filter_server_config_default(ld_filter_server_config_t *cfg);

/* Creates the service on `sw` (running on `loop`): registers the subscribe protocol and a
 * connection listener and starts the maintenance timer (unreferenced: it does not keep the loop
 * alive). `cfg` is copied (NULL: defaults). Returns NULL (the reason is logged) for NULL
 * arguments, when the protocol is already registered, when the switch has no listener slot left,
 * or when out of memory. The switch cannot drop handlers or listeners, so the service lives as
 * long as the switch. */
ld_filter_server_t *ld_filter_server_new(ld_switch_t *sw, uv_loop_t *loop,
                                         const ld_filter_server_config_t *cfg);

/* Frees the service: call it only after ld_switch_close has called its `done` (every stream is
 * over by then). Its timer handle is released from the loop's next turn, so run the loop once
 * more before uv_loop_close. NULL is a no-op. */
void ld_filter_server_free(ld_filter_server_t *srv);

/* Pushes `msg` (published on `pubsub_topic`, NUL-terminated) to every live subscriber of its
 * (pubsub topic, content topic). `hash` is the message's deterministic hash on that topic, or
 * NULL to have it computed. Everything is copied; the frames go out from the loop. Returns the
 * number of subscribers it was handed to (a subscriber whose queue is full drops it, counted in
 * push_dropped), 0 when there are none or it is a repeat within dedup_ttl_ms, or
 * LD_ERR_INVALID_ARG / LD_ERR_NOMEM / the hashing errors. */
int ld_filter_server_handle_message(ld_filter_server_t *srv, const char *pubsub_topic,
                                    const ld_waku_message_t *msg, const uint8_t *hash);

/* Runs the maintenance now (also what the timer does). */
void ld_filter_server_maintain(ld_filter_server_t *srv);

/* The subscription table, for queries (REST admin, metrics); do not change it. Valid as long as
 * the service. */
const ld_filter_subs_t *ld_filter_server_subscriptions(const ld_filter_server_t *srv);

/* Changes the subscription TTL (tests; operators' --filter-subscription-timeout). */
void ld_filter_server_set_subscription_ttl(ld_filter_server_t *srv, uint64_t ttl_ms);

/* Counters since creation (gauges: current values), for metrics and tests. Names follow nwaku's
 * metrics: waku_filter_requests{type}, waku_filter_errors{type}, waku_filter_subscriptions. */
typedef struct ld_filter_server_stats {
  uint64_t requests[LD_FILTER_REQUEST_TYPES]; /* decoded requests by type */
  uint64_t status_ok;                         /* answers by code */
  uint64_t status_bad_request;
  uint64_t status_not_found;
  uint64_t status_too_many_requests;
  uint64_t status_service_unavailable;
  uint64_t decode_errors;    /* requests not decodable (no answer) */
  uint64_t request_failures; /* streams that ended without a request, or answers not written */
  uint64_t streams_refused;  /* inbound streams over LD_FILTER_MAX_INBOUND_STREAMS */
  uint64_t messages;         /* messages with at least one live subscriber */
  uint64_t duplicates;       /* of those, repeats within dedup_ttl_ms (not pushed) */
  uint64_t pushes;           /* MessagePush frames written to push streams */
  uint64_t push_bytes;
  uint64_t push_errors;   /* frames lost: no connection, stream could not be opened twice */
  uint64_t push_dropped;  /* frames dropped because the subscriber's queue was full */
  uint64_t push_timeouts; /* frames that waited longer than push_timeout_ms */
  uint64_t push_streams_opened;
  uint64_t expired_peers; /* subscribers removed for TTL or for having no connection */
  size_t peers;           /* gauge: subscribers in the table (waku_filter_subscriptions) */
  size_t criteria;        /* gauge: distinct criteria */
  size_t queued;          /* gauge: frames waiting in subscriber queues */
} ld_filter_server_stats_t;

void ld_filter_server_get_stats(const ld_filter_server_t *srv, ld_filter_server_stats_t *out);

#endif
