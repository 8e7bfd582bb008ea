/* Waku lightpush service: /vac/waku/lightpush/3.0.0 and the legacy
 * /vac/waku/lightpush/2.0.0-beta1 on a switch, answering as nwaku does.
 *
 * One request per stream: the peer writes one length-prefixed request (and may half-close); the
 * service publishes the message through a callback, writes one response and half-closes (the
 * request/response helper, p2p/reqresp.h). A request frame larger than
 * ld_lightpush_max_frame(max_msg_size), or none within the timeout, resets the stream unanswered.
 *
 * The service does not know the node: `publish` in its configuration does the relay work (the
 * relay's outgoing checks, then relay publish); ld_lightpush_relay_publish is that callback for an
 * ld_relay_t. Wiring in a node:
 *
 *   ld_lightpush_server_config_t cfg;
 *   ld_lightpush_server_config_default(&cfg);
 *   cfg.publish = ld_lightpush_relay_publish;   (or a node-level wrapper with the same contract)
 *   cfg.publish_ctx = relay;
 *   cfg.cluster_id = <cluster>; cfg.num_shards = <autosharding shard count>;
 *   cfg.static_sharding = <true when the node is not autosharding>;
 *   cfg.max_msg_size = <--max-msg-size>;
 *   ld_lightpush_server_t *lp = ld_lightpush_server_new(sw, &cfg);   (after relay is mounted)
 *
 * v3 answers (status code, status_desc, request_id), in the order nwaku checks:
 *   400 "decode_rpc_failure: <why>", id "N/A"        the request does not decode (codec.h lists
 *                                                    the <why> texts)
 *   420 "Pubsub topic must be specified when static sharding is enabled"
 *                                                    no pubsub topic under static sharding
 *   420 "Invalid content-topic:<parse error>"        no pubsub topic and the content topic does
 *                                                    not parse (nwaku's wording, e.g. "invalid
 *                                                    format: content-topic 'x' must start with
 *                                                    slash")
 *   500 "Auto-sharding error: <error>"               no pubsub topic and autosharding fails
 *                                                    ("Generation > 0 are not supported yet")
 *   400 "topic must not be empty"                    the pubsub topic is empty or whitespace
 *   then the publish callback's result:
 *   200 relay_peer_count = n (no desc)               published to n ≥ 1 peers
 *   505 "No peers for topic, skipping publish"       published to 0 peers
 *   420 <why>                                        LD_ERR_TOO_LARGE (default why "Message size
 *                                                    exceeded maximum of N bytes"),
 *                                                    LD_ERR_BAD_SIGNATURE, LD_ERR_MALFORMED
 *                                                    (default "validator failed"): the relay's
 *                                                    validation refused the message
 *   420 "Dropping already-seen message"              LD_ERR_EXISTS (the relay glue below returns
 *                                                    it only for a message the relay did not
 *                                                    accept on that topic)
 *   420 "Empty topic, skipping publish"              LD_ERR_INVALID_ARG
 *   504 <why> (default "could not generate rln proof")
 *                                                    LD_ERR_CRYPTO: no RLN proof could be made
 *   500 "no waku relay found"                        LD_ERR_UNSUPPORTED, or no callback
 *   500 <why> (default "Error generating message id, skipping publish")
 *                                                    any other error
 *   429 "Request rejected due to too many requests", id "N/A"
 *                                                    rate limit on and the peer over it
 *
 * Legacy v2 answers (PushRPC.response is_success, info; request_id echoed, "" when the request
 * did not decode or had no request):
 *   false "decode_rpc_failure: <why>" | false "empty_request_body_failure" |
 *   true "OK" (published to ≥ 1 peers) | false <why> (validation: the 420 cases of
 *   LD_ERR_TOO_LARGE / LD_ERR_BAD_SIGNATURE / LD_ERR_MALFORMED, and LD_ERR_CRYPTO) |
 *   false "no waku relay found" | false "not_published_to_any_peer" (every other publish
 *   failure, 0 peers included) | rate-limited: id "N/A", false "TOO_MANY_REQUESTS".
 * The legacy protocol carries a pubsub topic in every request: no sharding step.
 *
 * A publish step that takes time (an RLN proof made off the loop) answers later: the service's
 * `publish_later` callback returns LD_LIGHTPUSH_LATER and gives its result afterwards through
 * ld_lightpush_reply_send, which answers the push as if the callback had returned it.
 *
 * Threading: everything on the switch's loop thread; the publish and autoshard callbacks are
 * called from that loop, from inside the stream's request handling (never from inside an
 * ld_lightpush_server_* call but ld_lightpush_server_push_local*). */
#ifndef LD_WAKU_LIGHTPUSH_SERVER_H
#define LD_WAKU_LIGHTPUSH_SERVER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "p2p/switch.h"
#include "waku/core/message.h"
#include "waku/lightpush/codec.h"

/* Deadline of one served stream (request read and answered), generous because js-waku opens a
 * stream per service early and uses it later. */
#define LD_LIGHTPUSH_SERVER_TIMEOUT_MS 30000
/* Inbound lightpush streams being read at the same time on one connection; more are reset.
 * With the frame cap this bounds what one connection can make the service buffer. */
#define LD_LIGHTPUSH_MAX_INBOUND_PER_CONN 1024
/* Peers the rate limiter keeps a bucket for; beyond, full buckets are forgotten first. */
#define LD_LIGHTPUSH_RATE_MAX_PEERS 4096
/* Room for a callback's `why` text (NUL included). */
#define LD_LIGHTPUSH_WHY_MAX 256
/* Room for an answer's status_desc or info text (NUL included); longer texts are truncated. */
#define LD_LIGHTPUSH_DESC_MAX 1024

/* nwaku's texts. */
#define LD_LIGHTPUSH_TOO_MANY_REQUESTS_DESC "Request rejected due to too many requests"
#define LD_LIGHTPUSH_LEGACY_TOO_MANY_REQUESTS "TOO_MANY_REQUESTS"
#define LD_LIGHTPUSH_NO_RELAY_DESC "no waku relay found"

/* Publishes `msg` on `pubsub_topic` (NUL-terminated, never NULL: the service resolves the topic
 * before calling) after the relay's outgoing checks, as nwaku's relay push handler does.
 * Returns the number of relay peers the message was sent to (≥ 0), or an LD_ERR_* code chosen
 * from the table at the top (it decides the answer); it may write a NUL-terminated description
 * to `why` (why_len ≥ 1 bytes of room, initially ""), which becomes the answer's text where the
 * table says <why>. `msg` is valid only during the call and is not to be modified. */
typedef int (*ld_lightpush_publish_fn)(void *ctx, const char *pubsub_topic,
                                       const ld_waku_message_t *msg, char *why, size_t why_len);

/* A push waiting for its publish result (see ld_lightpush_publish_later_fn). */
typedef struct ld_lightpush_reply ld_lightpush_reply_t;

/* A publish callback's "the result comes later". */
#define LD_LIGHTPUSH_LATER (-1000000)

/* As ld_lightpush_publish_fn, except that the callback may take `reply` and return
 * LD_LIGHTPUSH_LATER: it then gives the result (what it would have returned, with its `why`
 * text) through ld_lightpush_reply_send exactly once, on the loop, before the service is freed
 * (from inside the callback too). Meanwhile the request's stream stays open under its deadline;
 * when the stream ends first (deadline, reset by the peer, connection gone) the result is only
 * counted. `reply` is NULL when the push must be answered at once (ld_lightpush_server_push_local):
 * the callback must not return LD_LIGHTPUSH_LATER then. */
typedef int (*ld_lightpush_publish_later_fn)(void *ctx, const char *pubsub_topic,
                                             const ld_waku_message_t *msg,
                                             ld_lightpush_reply_t *reply, char *why,
                                             size_t why_len);

/* Gives a publish result that came later (`result` as a publish callback returns it, `why` its
 * text or NULL): the push is answered by the table at the top, and `reply` is freed. */
void ld_lightpush_reply_send(ld_lightpush_reply_t *reply, int result, const char *why);

/* Resolves the pubsub topic of a content topic (bytes, not NUL-terminated) into `out` (room for
 * `cap`, NUL-terminated). Returns its length, or LD_ERR_BAD_CONTENT_TOPIC (answered 420
 * "Invalid content-topic:<why>") or another error (answered 500 "Auto-sharding error: <why>"),
 * with a description in `why` (as for publish). */
typedef int (*ld_lightpush_autoshard_fn)(void *ctx, const char *content_topic, size_t len,
                                         char *out, size_t cap, char *why, size_t why_len);

typedef struct ld_lightpush_server_config {
  bool mount_v3;                   /* default true */
  bool mount_legacy;               /* default true */
  ld_lightpush_publish_fn publish; /* NULL: every push answered "no waku relay found" */
  void *publish_ctx;
  /* Used instead of `publish` when set (same publish_ctx): a publish step that may answer
   * later. */
  ld_lightpush_publish_later_fn publish_later;
  /* Static sharding: a v3 request without pubsub topic is refused (420). Default false. */
  bool static_sharding;
  /* Autosharding of v3 requests without pubsub topic: the callback when set, otherwise
   * generation-0 autosharding over `num_shards` shards of `cluster_id` (waku/core/sharding.h).
   * Defaults: cluster 0, 1 shard (nwaku without a preset). */
  ld_lightpush_autoshard_fn autoshard;
  void *autoshard_ctx;
  uint16_t cluster_id;
  uint32_t num_shards;
  /* The relay's message cap (--max-msg-size); sets the request frame cap. 0: 150 KiB. */
  size_t max_msg_size;
  uint32_t timeout_ms;         /* 0: LD_LIGHTPUSH_SERVER_TIMEOUT_MS */
  size_t max_inbound_per_conn; /* 0: LD_LIGHTPUSH_MAX_INBOUND_PER_CONN */
  /* Per-peer rate limit (nwaku's --rate-limit=lightpush:<volume>/<period>): a token bucket of
   * `rate_volume` requests refilled continuously over `rate_period_ms`. 0: off (nwaku's
   * default). Both protocols draw from the same bucket. */
  uint32_t rate_volume;
  uint32_t rate_period_ms;
  /* Monotonic milliseconds for the rate limiter; NULL: ld_now_ms. Tests pass a fake. */
  uint64_t (*now_ms)(void *ctx);
  void *clock_ctx;
} ld_lightpush_server_config_t;

/* The defaults above; publish and the callbacks left NULL. */
void ld_lightpush_server_config_default(ld_lightpush_server_config_t *cfg);

typedef struct ld_lightpush_server ld_lightpush_server_t;

/* Creates the service and registers the configured protocols on `sw` (borrowed). `cfg` is
 * copied. Returns NULL on bad configuration (nothing to mount, num_shards 0 or above 1024
 * without an autoshard callback), allocation failure, or when a protocol is already registered.
 * The switch cannot drop handlers, so the service lives as long as the switch: free it only
 * after ld_switch_close has called its `done`. Loop thread only. */
ld_lightpush_server_t *ld_lightpush_server_new(ld_switch_t *sw,
                                               const ld_lightpush_server_config_t *cfg);

/* Frees the service (see ld_lightpush_server_new for when). NULL is a no-op. */
void ld_lightpush_server_free(ld_lightpush_server_t *srv);

/* Replaces the publish callback (e.g. once relay is mounted); NULL answers "no waku relay
 * found". */
void ld_lightpush_server_set_publish(ld_lightpush_server_t *srv, ld_lightpush_publish_fn fn,
                                     void *ctx);

/* The answer to a push this node makes to its own service. */
typedef struct ld_lightpush_local_result {
  uint32_t status_code;                    /* as a peer would be answered */
  uint32_t relay_peer_count;               /* > 0 on 200 */
  char status_desc[LD_LIGHTPUSH_DESC_MAX]; /* "" when the answer has none */
} ld_lightpush_local_result_t;

/* Pushes `msg` (borrowed for the call) on `pubsub_topic` (NULL: autosharding) through the v3
 * service itself, as if a peer had sent it (nwaku's self request handler, for the REST API of a
 * node that serves lightpush): the request is encoded and answered by the same code, counted in
 * the statistics, and a 200 without relay peers is reported as 505 (the client rule). The
 * publish callback runs before this returns. Returns 0 with `out` filled, or LD_ERR_INVALID_ARG /
 * LD_ERR_NOMEM (nothing published). Loop thread only. */
int ld_lightpush_server_push_local(ld_lightpush_server_t *srv, const char *pubsub_topic,
                                   const ld_waku_message_t *msg, ld_lightpush_local_result_t *out);

/* The result of ld_lightpush_server_push_local_async; `res` valid during the call only. */
typedef void (*ld_lightpush_local_done_fn)(void *user_data, const ld_lightpush_local_result_t *res);

/* As ld_lightpush_server_push_local, with a publish step that may answer later
 * (publish_later): `done` is called exactly once with the answer, from inside this call when
 * it is known at once. Returns 0, or LD_ERR_INVALID_ARG / LD_ERR_NOMEM (nothing published,
 * `done` never called). */
int ld_lightpush_server_push_local_async(ld_lightpush_server_t *srv, const char *pubsub_topic,
                                         const ld_waku_message_t *msg,
                                         ld_lightpush_local_done_fn done, void *user_data);

/* Counters since creation, for metrics (nwaku's waku_lightpush_v3_messages / _errors and
 * waku_lightpush_messages / _errors) and tests. */
typedef enum ld_lightpush_legacy_error {
  LD_LIGHTPUSH_LEGACY_DECODE = 0,      /* "decode_rpc_failure" */
  LD_LIGHTPUSH_LEGACY_EMPTY_BODY,      /* "empty_request_body_failure" */
  LD_LIGHTPUSH_LEGACY_INVALID_MESSAGE, /* refused by validation (the validator's message) */
  LD_LIGHTPUSH_LEGACY_NOT_PUBLISHED,   /* "not_published_to_any_peer" */
  LD_LIGHTPUSH_LEGACY_NO_RELAY,        /* "no waku relay found" */
  LD_LIGHTPUSH_LEGACY_RATE_LIMITED,    /* "TOO_MANY_REQUESTS" */
  LD_LIGHTPUSH_LEGACY_N_ERRORS
} ld_lightpush_legacy_error_t;

/* Metric label of a legacy error kind ("decode_rpc_failure", …, "validation_failure",
 * "no_relay", "request_limit_reached_failure"). Static string. */
const char *ld_lightpush_legacy_error_name(ld_lightpush_legacy_error_t e);

typedef struct ld_lightpush_server_stats {
  uint64_t v3_requests; /* v3 requests answered (all outcomes) */
  uint64_t v3_pushes;   /* v3 requests that reached the publish step (nwaku's "PushRequest") */
  /* v3 answers by status code, index as ld_lightpush_codes (the SUCCESS slot counts the
   * successes; the others are nwaku's waku_lightpush_v3_errors{type=<code>}). */
  uint64_t v3_answers[LD_LIGHTPUSH_N_CODES];
  uint64_t legacy_requests;
  uint64_t legacy_pushes;
  uint64_t legacy_successes;
  uint64_t legacy_errors[LD_LIGHTPUSH_LEGACY_N_ERRORS];
  uint64_t bytes_in;        /* request bytes read (nwaku's waku_service_network_bytes "in") */
  uint64_t bytes_out;       /* response bytes written */
  uint64_t streams_failed;  /* streams reset without an answer (timeout, oversize, reset, …) */
  uint64_t streams_refused; /* streams reset because a connection had too many open */
} ld_lightpush_server_stats_t;

void ld_lightpush_server_get_stats(const ld_lightpush_server_t *srv,
                                   ld_lightpush_server_stats_t *out);

/* ---- relay glue ----------------------------------------------------------------------------- */

/* The publish callback for an ld_relay_t* `relay` (waku/relay/relay.h): the relay's outgoing
 * checks (size, protected shard), mapped to nwaku's messages ("Message size exceeded maximum of
 * N bytes" → LD_ERR_TOO_LARGE, "signed shard validation failed" → LD_ERR_BAD_SIGNATURE, other
 * refusals "validator failed" → LD_ERR_MALFORMED), then ld_relay_publish (its errors returned
 * unchanged: LD_ERR_INVALID_ARG, LD_ERR_TOO_LARGE with nwaku's size text, …).
 * A message the relay has already seen on this topic and not refused (it arrived by relay just
 * before the push) is answered as published, with the peers it reached (ld_relay_seen_reach):
 * 200 with that relay_peer_count (v2: is_success), where nwaku v0.36 answers 420 "Dropping
 * already-seen message" (v2: not_published_to_any_peer). Other already-seen messages:
 * LD_ERR_EXISTS. NULL relay: LD_ERR_UNSUPPORTED. Loop thread of the relay. */
int ld_lightpush_relay_publish(void *relay, const char *pubsub_topic, const ld_waku_message_t *msg,
                               char *why, size_t why_len);

#endif
