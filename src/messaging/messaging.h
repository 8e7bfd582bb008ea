/* The Messaging API (the MessagingClient): send with delivery confirmation, receive with
 * de-duplication and recovery of missed messages, connection health, and the message records of
 * the Message Storage API. It sits on a started node (node/node.h) and reports through the
 * node's broker (node/broker.h), under the event kinds below, so that several consumers (the C
 * library's event callback, the REST event caches) listen side by side.
 *
 * Sending. ld_messaging_send returns a request ID at once; delivery runs on the node's loop:
 *   Core mode: relay publish first; when relay has no peer for the shard, lightpush through a
 *   service peer as the fallback. Edge mode: lightpush only.
 *   A service tick (tick_ms) retries what has not propagated, until retry_window_ms after the
 *   send: then LD_EVENT_MESSAGING_ERROR "Unable to send within retry time window" (with
 *   "; last error: <answer>" after a retryable lightpush answer). A lightpush service that
 *   answers with a server-side or transient status (505 no relay peers, 429, 500, 503, 504, a
 *   timeout) is asked again at the next round, paced by the back-off of service_peers.h; only a
 *   dial or protocol failure skips it for the failure expiry (60 s). Store and filter service
 *   peers follow the same rule.
 *   LD_EVENT_MESSAGING_PROPAGATED once the message reached relay peers or a lightpush service.
 *   With `reliability` on and a non-ephemeral message: once propagated for confirm_after_ms, the
 *   message's hash is checked for presence on a store peer (batched, at most one check per
 *   confirm_after_ms); present → LD_EVENT_MESSAGING_SENT; absent → re-published; no confirmation
 *   within retry_window_ms of the first propagation → dropped silently (nwaku's behaviour).
 *   A message over the node's size limit → LD_EVENT_MESSAGING_ERROR "Message size exceeded
 *   maximum of <N> bytes". Each request gets at most one SENT and at most one ERROR, SENT never
 *   before PROPAGATED, and never both SENT and ERROR.
 * Receiving. Subscribing a content topic (also implicitly on the first send on it) subscribes
 *   relay to its shard (Core) or keeps filter subscriptions at service peers (Edge, with pings
 *   and re-subscription elsewhere on failure). Each message on a subscribed content topic is
 *   reported once (LD_EVENT_MESSAGING_RECEIVED), de-duplicated by hash over dedup_window_ms.
 *   After the connection status goes Disconnected and comes back, the missed interval is
 *   recovered (hashes first, then the missing messages) and reported like live ones.
 * Confirmation and recovery go through one internal interface (messaging/reliability.h):
 *   store-based, or peer-to-peer when the node runs the Network Reliability Service
 *   (--reliability-mode=p2p, waku/nrs/nrs.h): a send is then confirmed once the sets of
 *   --reliability-confirm-peers distinct peers hold it (not re-published while unconfirmed), and
 *   missed messages come back by reconciliation with peers (a light node: with up to
 *   LD_MESSAGING_EDGE_SYNC_PEERS of its service peers) and are reported like live ones. The store
 *   is then asked once, at start-up (resume.h): as soon as something is subscribed and a store
 *   peer is known, for [max(last online, now − 6 h), now] on the subscribed content topics; the
 *   last-online time is kept in the node's --local-storage-path.
 * Health. LD_EVENT_MESSAGING_CONNECTION_STATUS on every change of Disconnected /
 *   PartiallyConnected / Connected (rules: reliability-and-api.md §5.7).
 *
 * Threading: everything on the node's loop thread; events are published from the loop. */
#ifndef LD_MESSAGING_MESSAGING_H
#define LD_MESSAGING_MESSAGING_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "node/events.h"
#include "node/node.h"
#include "waku/core/message.h"

/* Request IDs: 10 random bytes as 20 lowercase hex characters. */
#define LD_MESSAGING_REQUEST_ID_LEN 20
/* Subscription IDs (one per subscribed content topic): 20 lowercase hex characters. */
#define LD_MESSAGING_SUBSCRIPTION_ID_LEN 20

#define LD_MESSAGING_DEFAULT_TICK_MS 1000u
#define LD_MESSAGING_DEFAULT_RETRY_WINDOW_MS 60000u
#define LD_MESSAGING_DEFAULT_CONFIRM_AFTER_MS 3000u
/* With p2p reliability (the node's --reliability-mode=p2p) and the default above: 100 ms. */
#define LD_MESSAGING_P2P_CONFIRM_AFTER_MS 100u
/* Service peers a light node reconciles with (p2p reliability). */
#define LD_MESSAGING_EDGE_SYNC_PEERS 2u
#define LD_MESSAGING_DEFAULT_DEDUP_WINDOW_MS (7u * 60u * 1000u)
#define LD_MESSAGING_DEFAULT_MAX_RECORDS 10000u  /* Message Storage API records kept */
#define LD_MESSAGING_DEFAULT_MAX_PENDING 100000u /* sends in flight; more are refused */
#define LD_MESSAGING_MAX_CONTENT_TOPICS 1024u    /* subscribed content topics at most */

typedef enum ld_messaging_mode {
  LD_MESSAGING_CORE = 0, /* relay node: relay first, lightpush fallback */
  LD_MESSAGING_EDGE,     /* light node: lightpush, filter, store clients */
} ld_messaging_mode_t;

typedef enum ld_connection_status {
  LD_CONNECTION_DISCONNECTED = 0,
  LD_CONNECTION_PARTIALLY_CONNECTED,
  LD_CONNECTION_CONNECTED,
} ld_connection_status_t;

/* "Disconnected", "PartiallyConnected", "Connected". */
const char *ld_connection_status_name(ld_connection_status_t s);

typedef struct ld_messaging_config {
  ld_messaging_mode_t mode;
  bool reliability; /* store-confirmed sends (LD_EVENT_MESSAGING_SENT) */
  uint32_t tick_ms;
  uint32_t retry_window_ms;
  uint32_t confirm_after_ms;
  uint32_t dedup_window_ms;
  size_t max_records;
  size_t max_pending;
} ld_messaging_config_t;

/* Defaults above; mode Core, reliability on. */
void ld_messaging_config_default(ld_messaging_config_t *cfg);

/* ---- events (published on the node's broker) ------------------------------------------------ */

enum {
  /* Payload: ld_messaging_send_event_t. */
  LD_EVENT_MESSAGING_PROPAGATED = LD_EVENT_USER + 1,
  LD_EVENT_MESSAGING_SENT = LD_EVENT_USER + 2,
  LD_EVENT_MESSAGING_ERROR = LD_EVENT_USER + 3,
  /* Payload: ld_messaging_received_event_t. */
  LD_EVENT_MESSAGING_RECEIVED = LD_EVENT_USER + 4,
  /* Payload: ld_messaging_status_event_t. */
  LD_EVENT_MESSAGING_CONNECTION_STATUS = LD_EVENT_USER + 5,
};

typedef struct ld_messaging_send_event {
  const char *request_id; /* LD_MESSAGING_REQUEST_ID_LEN characters, NUL-terminated */
  bool has_hash;          /* false only for an error before the message was built */
  uint8_t hash[LD_WAKU_HASH_LEN];
  const char *error; /* LD_EVENT_MESSAGING_ERROR only: one line */
} ld_messaging_send_event_t;

typedef struct ld_messaging_received_event {
  const char *pubsub_topic;
  uint8_t hash[LD_WAKU_HASH_LEN];
  const ld_waku_message_t *msg;
} ld_messaging_received_event_t;

typedef struct ld_messaging_status_event {
  ld_connection_status_t status;
} ld_messaging_status_event_t;

/* ---- the client ----------------------------------------------------------------------------- */

typedef struct ld_messaging ld_messaging_t;

/* The message to send. Borrowed for the call. */
typedef struct ld_messaging_envelope {
  const char *content_topic;
  const uint8_t *payload;
  size_t payload_len;
  const uint8_t *meta; /* optional */
  size_t meta_len;
  bool ephemeral;
} ld_messaging_envelope_t;

/* Creates the client on a started node (configuration copied) and attaches it to the node's
 * fan-out and broker. NULL with *err set (LD_ERR_NOMEM, LD_ERR_INVALID_ARG, LD_ERR_STATE when
 * the node is not started). */
ld_messaging_t *ld_messaging_new(ld_node_t *node, const ld_messaging_config_t *cfg, int *err);

/* Detaches from the node, cancels what is in flight (no event is published for it) and frees the
 * client; `done` (may be NULL) is called from the loop once nothing of the client runs any more.
 * Call it before ld_node_stop. */
void ld_messaging_free(ld_messaging_t *m, void (*done)(void *user_data), void *user_data);

/* Queues `env` for delivery and writes its request ID (NUL-terminated). The content topic is
 * subscribed first if it is not. Returns 0, or an error with a one-line reason in `why`:
 * LD_ERR_INVALID_ARG (content topic not a valid /app/version/name/encoding topic, or its shard
 * cannot be derived: "Failed to auto-subscribe before sending: <why>"), LD_ERR_LIMIT (max_pending
 * sends in flight: "Failed to create delivery task: too many messages in flight"), LD_ERR_NOMEM. */
int ld_messaging_send(ld_messaging_t *m, const ld_messaging_envelope_t *env,
                      char request_id[LD_MESSAGING_REQUEST_ID_LEN + 1], char *why, size_t why_cap);

/* Subscribes a content topic (already subscribed: 0). Errors with a reason: LD_ERR_INVALID_ARG
 * (bad content topic), LD_ERR_LIMIT (LD_MESSAGING_MAX_CONTENT_TOPICS), LD_ERR_NOMEM. */
int ld_messaging_subscribe(ld_messaging_t *m, const char *content_topic, char *why, size_t why_cap);

/* Unsubscribes a content topic. LD_ERR_NOT_FOUND when it is not subscribed ("not subscribed to
 * <topic>"); LD_ERR_INVALID_ARG for a bad topic. */
int ld_messaging_unsubscribe(ld_messaging_t *m, const char *content_topic, char *why,
                             size_t why_cap);

bool ld_messaging_subscribed(const ld_messaging_t *m, const char *content_topic);

/* The subscription ID of a subscribed content topic (NUL-terminated), or false. */
bool ld_messaging_subscription_id(const ld_messaging_t *m, const char *content_topic,
                                  char out[LD_MESSAGING_SUBSCRIPTION_ID_LEN + 1]);

/* Calls `fn` for each subscribed content topic with its subscription ID (both NUL-terminated,
 * valid during the call), in no particular order, until `fn` returns true; returns true then.
 * `fn` must not subscribe or unsubscribe. */
bool ld_messaging_each_subscription(const ld_messaging_t *m,
                                    bool (*fn)(void *ctx, const char *content_topic,
                                               const char *subscription_id),
                                    void *ctx);

ld_connection_status_t ld_messaging_connection_status(const ld_messaging_t *m);
const ld_messaging_config_t *ld_messaging_config(const ld_messaging_t *m);
ld_node_t *ld_messaging_node(ld_messaging_t *m);

/* ---- Message Storage API (records of sent and received messages) ------------------------------
 *
 * A record per message hash, kept in memory up to max_records (oldest dropped first); a send's
 * record exists from ld_messaging_send on (hash set once the message is built). Records are
 * updated before the matching event is published. Pointers returned stay valid until the next
 * call into the client or the next loop turn, whichever comes first. */

typedef struct ld_message_record {
  bool sending;  /* own message, delivery under way */
  bool sent;     /* own message, confirmed (propagated, and stored when reliability is on) */
  bool stored;   /* confirmed present on a store peer */
  bool received; /* seen through a subscription */
  bool has_request_id;
  char request_id[LD_MESSAGING_REQUEST_ID_LEN + 1];
  bool has_hash;
  uint8_t hash[LD_WAKU_HASH_LEN];
  const char *pubsub_topic;
  ld_waku_message_t msg;
  const char *error; /* NULL when none; cleared when a failed request later succeeds */
} ld_message_record_t;

const ld_message_record_t *ld_messaging_record_by_request(const ld_messaging_t *m,
                                                          const char *request_id);
const ld_message_record_t *ld_messaging_record_by_hash(const ld_messaging_t *m,
                                                       const uint8_t hash[LD_WAKU_HASH_LEN]);

/* Records on `content_topic` (or of the subscription `subscription_id`), oldest first, skipping
 * `skip` and writing at most min(take, max) into `out`; returns how many were written. */
size_t ld_messaging_records_by_topic(const ld_messaging_t *m, const char *content_topic,
                                     size_t skip, size_t take, const ld_message_record_t **out,
                                     size_t max);
size_t ld_messaging_records_by_subscription(const ld_messaging_t *m, const char *subscription_id,
                                            size_t skip, size_t take,
                                            const ld_message_record_t **out, size_t max);

/* ---- counters -------------------------------------------------------------------------------- */

/* Counters since ld_messaging_new, for metrics and tests. */
typedef struct ld_messaging_stats {
  uint64_t submitted;           /* sends accepted by ld_messaging_send */
  uint64_t propagated;          /* LD_EVENT_MESSAGING_PROPAGATED published */
  uint64_t sent;                /* LD_EVENT_MESSAGING_SENT published */
  uint64_t send_errors;         /* LD_EVENT_MESSAGING_ERROR published */
  uint64_t validation_timeouts; /* propagated, never confirmed, given up without an event
                                   (logos_delivery_send_store_validation_timeout_total) */
  uint64_t received;            /* LD_EVENT_MESSAGING_RECEIVED published */
  uint64_t recovered;           /* of those, fetched by a recovery after a disconnection */
  uint64_t recoveries;          /* recoveries that completed (every range examined) */
  uint64_t resumes;             /* p2p reliability: resume queries at start-up finished (0 or 1) */
} ld_messaging_stats_t;

/* Copies the counters into *out. Loop thread. */
void ld_messaging_get_stats(const ld_messaging_t *m, ld_messaging_stats_t *out);

#endif
