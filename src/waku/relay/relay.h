/* Waku relay (11/WAKU2-RELAY) over the gossipsub service: subscriptions to pubsub topics with a
 * handler that receives decoded WakuMessages and their deterministic hashes, publishing
 * (timestamp set to now when zero, nwaku encoding, size cap), the same by content topic through
 * autosharding, the ordered validation pipeline of validators.h followed by the validators the
 * node adds (RLN later), per-topic health from the mesh size, and counters for metrics.
 *
 * The relay installs one validator for every topic and itself as the receiver of the gossipsub
 * service's events (ld_gs_service_set_events); peer events are passed on through
 * ld_relay_events_t.on_peer.
 *
 * Callback rule: callbacks never run from inside an ld_relay_* call (except the next added
 * validator, run by ld_relay_validation_done); they come from the event loop (gossipsub
 * deliveries and validations, the health timer), so they may call any ld_relay_* function but
 * ld_relay_free. A function that fails never calls a callback.
 *
 * Threading: everything on the loop thread of the gossipsub service's switch. */
#ifndef LD_WAKU_RELAY_RELAY_H
#define LD_WAKU_RELAY_RELAY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <uv.h>

#include "p2p/gossipsub/service.h"
#include "p2p/peerid.h"
#include "waku/core/message.h"
#include "waku/relay/validators.h"

/* Topics the relay keeps state for (subscribed, or published to); beyond, publishing still
 * works but is not counted per topic. */
#define LD_RELAY_MAX_TOPICS 1024
/* Validators added with ld_relay_add_validator. */
#define LD_RELAY_MAX_VALIDATORS 16
/* Messages waiting on added validators at the same time; more are ignored (not penalised). */
#define LD_RELAY_MAX_PENDING 4096
/* nwaku's D_low: the mesh size from which a topic is sufficiently healthy. */
#define LD_RELAY_DEFAULT_D_LOW 4
/* Health is recomputed at most this often (nwaku's safety cool-down). */
#define LD_RELAY_HEALTH_COOLDOWN_MS 100

typedef struct ld_relay ld_relay_t;

/* ---- configuration -------------------------------------------------------------------------- */

typedef struct ld_relay_config {
  uv_loop_t *loop;     /* required: the switch's loop (health timer) */
  uint16_t cluster_id; /* protected shards and autosharding live in this cluster */
  /* Autosharding: generation-0 shard count of the cluster; 0 disables the content-topic calls
   * (LD_ERR_UNSUPPORTED). */
  uint32_t num_shards;
  /* Cap on a serialized WakuMessage (--max-msg-size); 0 = LD_WAKU_DEFAULT_MAX_MSG_SIZE. */
  size_t max_msg_size;
  /* Also reject messages whose content topic or payload is empty (js-waku's relay validator).
   * Default true. */
  bool js_waku_rules;
  /* --protected-shard entries (copied; at most LD_RELAY_MAX_PROTECTED_SHARDS). */
  const ld_relay_protected_shard_t *protected_shards;
  size_t n_protected_shards;
  uint32_t health_d_low; /* 0 = LD_RELAY_DEFAULT_D_LOW */
  /* Wall clock in Unix nanoseconds for timestamps and the protected-shard window; NULL = the
   * system clock. Tests pass a fake. */
  int64_t (*now_ns)(void *user_data);
  void *clock_user_data;
} ld_relay_config_t;

/* Defaults: cluster 0, autosharding over 1 shard (nwaku without a preset), 150 KiB, js-waku
 * rules on, no protected shard, D_low 4, system clock. `loop` is left NULL. */
void ld_relay_config_default(ld_relay_config_t *cfg);

/* Fills a gossipsub service configuration for relay: the service defaults (relay protocol
 * first, nwaku's parameters) with the RPC frame cap set to `max_msg_size` as nwaku does (0 =
 * LD_WAKU_DEFAULT_MAX_MSG_SIZE). */
void ld_relay_gs_config(ld_gs_service_config_t *gs, size_t max_msg_size);

/* ---- lifecycle ------------------------------------------------------------------------------ */

/* Creates the relay on `gs` (borrowed; it must outlive the relay). `cfg` is copied. Returns NULL
 * and sets *err (may be NULL): LD_ERR_INVALID_ARG (no loop, too many protected shards, num_shards
 * above 1024), LD_ERR_LIMIT (the service's validator slots are full), LD_ERR_NOMEM. */
ld_relay_t *ld_relay_new(ld_gs_service_t *gs, const ld_relay_config_t *cfg, int *err);

/* Detaches from the gossipsub service (its validator and events; subscriptions stay) and frees
 * the relay; messages waiting on added validators are dropped without callbacks. Call it before
 * the service is freed. The memory is released from the loop's next turn. NULL is a no-op. */
void ld_relay_free(ld_relay_t *r);

ld_gs_service_t *ld_relay_gossipsub(ld_relay_t *r);
uint16_t ld_relay_cluster_id(const ld_relay_t *r);
size_t ld_relay_max_msg_size(const ld_relay_t *r);

/* ---- subscriptions -------------------------------------------------------------------------- */

/* A valid message on a subscribed topic, once per gossipsub message ID. `msg` is decoded and
 * owned by the relay, `hash` is its deterministic hash on `pubsub_topic`, `from` the peer that
 * propagated it or NULL for a message we published ourselves (nwaku's triggerSelf). Everything
 * is valid only during the call. */
typedef void (*ld_relay_message_fn)(ld_relay_t *r, const char *pubsub_topic,
                                    const ld_waku_message_t *msg,
                                    const uint8_t hash[LD_WAKU_HASH_LEN], const ld_peerid_t *from,
                                    void *user_data);

/* Subscribes to `pubsub_topic` (copied) with `fn` (may be NULL: relay only, the events'
 * on_message still sees the messages). Errors: LD_ERR_EXISTS (already subscribed),
 * LD_ERR_INVALID_ARG (empty or longer than LD_GS_MAX_TOPIC_LEN), LD_ERR_LIMIT, LD_ERR_NOMEM. */
int ld_relay_subscribe(ld_relay_t *r, const char *pubsub_topic, ld_relay_message_fn fn,
                       void *user_data);

/* Leaves `pubsub_topic`; its health becomes LD_RELAY_NOT_SUBSCRIBED (reported). LD_ERR_NOT_FOUND
 * when not subscribed. */
int ld_relay_unsubscribe(ld_relay_t *r, const char *pubsub_topic);

bool ld_relay_subscribed(const ld_relay_t *r, const char *pubsub_topic);

/* Writes up to `cap` subscribed topics (borrowed strings, valid until unsubscribed) into `out`
 * (may be NULL with cap 0); returns how many are subscribed. */
size_t ld_relay_subscriptions(const ld_relay_t *r, const char **out, size_t cap);

/* The shards of our cluster we are subscribed to (static-shard topics of `cluster_id`), up to
 * `max`, ascending; returns their number. `relay` is an ld_relay_t*: the signature matches the
 * metadata service's shard provider so that it can be installed directly. */
size_t ld_relay_shard_provider(void *relay, uint16_t *out, size_t max);

/* ---- content topics (autosharding) ---------------------------------------------------------- */

/* Writes the pubsub topic of `content_topic` ("/waku/2/rs/<cluster>/<shard>" and a NUL) into
 * `out` (room for `cap`); returns its length. Errors: LD_ERR_UNSUPPORTED (autosharding off, or
 * generation > 0), LD_ERR_BAD_CONTENT_TOPIC, LD_ERR_LIMIT, LD_ERR_INVALID_ARG. */
int ld_relay_autoshard(const ld_relay_t *r, const char *content_topic, char *out, size_t cap);

/* Subscribes to the shard of `content_topic` (errors of ld_relay_autoshard and
 * ld_relay_subscribe: LD_ERR_EXISTS when that shard is already subscribed). */
int ld_relay_subscribe_content_topic(ld_relay_t *r, const char *content_topic,
                                     ld_relay_message_fn fn, void *user_data);

/* Unsubscribes from the shard of `content_topic`. */
int ld_relay_unsubscribe_content_topic(ld_relay_t *r, const char *content_topic);

/* ---- publishing ----------------------------------------------------------------------------- */

/* Publishes `msg` on `pubsub_topic`: a zero timestamp is replaced by now (the caller's message
 * is not modified), the message is encoded as nwaku does and sent with gossipsub (flood publish).
 * Added validators are not run on our own messages. On success returns the number of peers it
 * was sent to (0: nobody to send to, nwaku's NoPeersToPublish) and, when `hash` is not NULL,
 * stores the message's deterministic hash (with the timestamp actually sent). Errors:
 * LD_ERR_INVALID_ARG (empty topic, NULL message), LD_ERR_TOO_LARGE (encoding above max_msg_size
 * or the RPC above the gossipsub frame cap), LD_ERR_FIELD_TOO_LONG (meta over 64 bytes),
 * LD_ERR_EXISTS (the same bytes were published or seen within the seen TTL), LD_ERR_NOMEM. */
int ld_relay_publish(ld_relay_t *r, const char *pubsub_topic, const ld_waku_message_t *msg,
                     uint8_t hash[LD_WAKU_HASH_LEN]);

/* ld_relay_publish for a caller that has computed the message's Waku hash already (the send
 * path hashes each ~19 KB channel message once): `hash` must be ld_waku_message_hash(pubsub_topic,
 * msg), and `msg` must carry its timestamp (0: LD_ERR_INVALID_ARG, as for a NULL hash). Same
 * results and errors as ld_relay_publish otherwise. */
int ld_relay_publish_hashed(ld_relay_t *r, const char *pubsub_topic, const ld_waku_message_t *msg,
                            const uint8_t hash[LD_WAKU_HASH_LEN]);

/* For a publish refused with LD_ERR_EXISTS: how many relay peers `msg` reached when this relay
 * saw it on `pubsub_topic` (sent to them when we published it; delivered by them, or forwarded
 * to them once accepted, when it came from the network: ld_gs_router_seen_reach). Returns that
 * count (≥ 0), or LD_ERR_NOT_FOUND when the message's bytes (encoded as ld_relay_publish encodes
 * them; a zero timestamp never matches) were not seen on that topic within the seen TTL or were
 * refused, or the encoding errors of ld_relay_publish. */
int ld_relay_seen_reach(const ld_relay_t *r, const char *pubsub_topic,
                        const ld_waku_message_t *msg);

/* Publishes on the shard of msg->content_topic (autosharding); the pubsub topic used is written
 * to `topic_out` (room for `cap`, may be NULL with cap 0). Errors as ld_relay_autoshard and
 * ld_relay_publish. */
int ld_relay_publish_auto(ld_relay_t *r, const ld_waku_message_t *msg,
                          uint8_t hash[LD_WAKU_HASH_LEN], char *topic_out, size_t cap);

/* The checks a service that publishes for someone else runs first (nwaku's
 * WakuRelay.validateMessage, used by lightpush): the encoded size against max_msg_size, then the
 * protected-shard signature. Added validators are not run. Returns LD_RELAY_OK or the reason. */
ld_relay_reason_t ld_relay_check_outgoing(const ld_relay_t *r, const char *pubsub_topic,
                                          const ld_waku_message_t *msg);

/* ---- added validators ----------------------------------------------------------------------- */

/* Asynchronous validator run after the built-in checks, in the order added, on messages from
 * peers. It must answer exactly once with ld_relay_validation_done(r, token, verdict), now or
 * later; `pubsub_topic`, `msg` and `from` stay valid until then. The first verdict that is not
 * Accept is final. */
typedef void (*ld_relay_validator_fn)(ld_relay_t *r, uint64_t token, const char *pubsub_topic,
                                      const ld_waku_message_t *msg, const ld_peerid_t *from,
                                      void *user_data);

/* Adds a validator for every topic; returns its id (> 0) or LD_ERR_LIMIT, LD_ERR_INVALID_ARG. */
int ld_relay_add_validator(ld_relay_t *r, ld_relay_validator_fn fn, void *user_data);

/* Removes a validator: messages already waiting on it still take its answer, later ones skip
 * it. LD_ERR_NOT_FOUND for an unknown id. */
int ld_relay_remove_validator(ld_relay_t *r, int validator_id);

/* Answers for `token`. Accept runs the next validator (before this function returns) or, after
 * the last, accepts the message in gossipsub (delivered and forwarded). Returns 0,
 * LD_ERR_NOT_FOUND (unknown or already answered token), LD_ERR_INVALID_ARG (bad verdict). */
int ld_relay_validation_done(ld_relay_t *r, uint64_t token, ld_gs_verdict_t verdict);

/* ---- events and health ---------------------------------------------------------------------- */

typedef struct ld_relay_events {
  /* The health of a topic changed (subscribed topics: from the mesh size; unsubscribing reports
   * LD_RELAY_NOT_SUBSCRIBED). The node's broker publishes it. Optional. */
  void (*on_health)(ld_relay_t *r, const char *pubsub_topic, ld_relay_health_t health,
                    void *user_data);
  /* Every message delivered on any subscribed topic, after the topic's handler (the node's
   * fan-out hook). Arguments as ld_relay_message_fn. Optional. */
  void (*on_message)(ld_relay_t *r, const char *pubsub_topic, const ld_waku_message_t *msg,
                     const uint8_t hash[LD_WAKU_HASH_LEN], const ld_peerid_t *from,
                     void *user_data);
  /* A relay (pubsub) peer came up or went away. Optional. */
  void (*on_peer)(ld_relay_t *r, const ld_peerid_t *peer, bool up, void *user_data);
} ld_relay_events_t;

/* Sets the event callbacks (`ev` copied; NULL removes them). */
void ld_relay_set_events(ld_relay_t *r, const ld_relay_events_t *ev, void *user_data);

/* Current health of `pubsub_topic` (LD_RELAY_NOT_SUBSCRIBED when not subscribed). */
ld_relay_health_t ld_relay_topic_health(const ld_relay_t *r, const char *pubsub_topic);

/* ---- statistics ----------------------------------------------------------------------------- */

typedef struct ld_relay_topic_stats {
  /* Valid messages from peers delivered on the topic; bytes = data + topic length (nwaku's
   * "net in"). */
  uint64_t msgs_in, bytes_in;
  /* Messages we published; bytes as above ("net out"). */
  uint64_t msgs_out, bytes_out;
  /* Payload sizes of the messages received and sent (nwaku's per-shard total/max/avg gauges). */
  uint64_t payload_count, payload_bytes_total, payload_bytes_max;
  /* Validation results on this topic; rejected[LD_RELAY_OK] stays 0. */
  uint64_t accepted, ignored;
  uint64_t rejected[LD_RELAY_REASON_COUNT];
  size_t mesh_size; /* at the last health computation */
  ld_relay_health_t health;
} ld_relay_topic_stats_t;

/* Counters of one topic; LD_ERR_NOT_FOUND when the relay keeps none for it. */
int ld_relay_topic_stats(const ld_relay_t *r, const char *pubsub_topic,
                         ld_relay_topic_stats_t *out);

/* Writes up to `cap` topics the relay keeps counters for (borrowed strings, valid until the
 * relay is freed) into `out`; returns their number. */
size_t ld_relay_topics(const ld_relay_t *r, const char **out, size_t cap);

typedef struct ld_relay_stats {
  uint64_t accepted, ignored;
  uint64_t rejected[LD_RELAY_REASON_COUNT];
  /* nwaku's waku_msg_validator_signed_outcome{result}: protected-shard verdicts. */
  uint64_t signed_accepted, signed_rejected;
  uint64_t published, publish_failed;
  uint64_t delivered;        /* handler calls (own messages included) */
  uint64_t pending_overflow; /* messages ignored because LD_RELAY_MAX_PENDING were waiting */
} ld_relay_stats_t;

void ld_relay_get_stats(const ld_relay_t *r, ld_relay_stats_t *out);

/* Receive latency: for every valid message from a peer that carries a timestamp, now minus that
 * timestamp (the relay's clock, Unix ns), counted in fixed buckets. Across processes of one
 * machine this is the end-to-end delay from the publisher stamping the message to its delivery
 * here; across machines it includes their clock offset. */
#define LD_RELAY_LATENCY_BUCKETS 29
/* The buckets' upper bounds in microseconds, increasing: 0.25 ms … 5 s. */
extern const uint32_t ld_relay_latency_bounds_us[LD_RELAY_LATENCY_BUCKETS];

typedef struct ld_relay_latency {
  /* counts[i]: observations in (bounds[i-1], bounds[i]] (not cumulative; a latency at or below
   * zero, from a timestamp in the future, lands in bucket 0); counts[LD_RELAY_LATENCY_BUCKETS]:
   * above the last bound. */
  uint64_t counts[LD_RELAY_LATENCY_BUCKETS + 1];
  uint64_t count; /* all observations */
  double sum_s;   /* their sum in seconds (negative latencies count as 0) */
} ld_relay_latency_t;

void ld_relay_get_latency(const ld_relay_t *r, ld_relay_latency_t *out);

#endif
