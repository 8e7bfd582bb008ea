/* The send service: delivery tasks of the Messaging API as a sans-I/O state machine.
 *
 * A task is one message to deliver, identified by its task ID (and carried request ID). It goes
 * through the states of logos-delivery's DeliveryTask:
 *   Entry          submitted, not tried yet
 *   Propagated     relay sent it to > 0 peers, or a lightpush service accepted it
 *   Validated      a confirmation (store) found its hash: final success
 *   FallbackRetry  relay could not act: the next processor (lightpush) is tried at once
 *   NextRoundRetry nothing could act now: tried again at the next tick
 *   Failed         final failure
 * Processor chain: relay first when the ops have relay_publish (Core mode), then lightpush when
 * they have lightpush_start (Core fallback, the only one in Edge mode).
 *   relay:     peers > 0 → Propagated; 0 peers → FallbackRetry (lightpush next) when lightpush
 *              exists, else Failed; an error → Failed.
 *   lightpush: cannot start (no service peer) → NextRoundRetry; answer 200 → Propagated;
 *              429, 500, 503, 504, 505 → NextRoundRetry (logos-delivery's
 *              LightpushSendProcessor); any other status → Failed with the answer's
 *              description. The pace of the retries to a service that keeps answering so is set
 *              by whoever starts the pushes (the Messaging API: the service-peer back-off of
 *              service_peers.h, under which lightpush_start finds no peer and the task waits).
 * A message whose encoding is larger than max_msg_size fails before any processor runs with
 * "Message size exceeded maximum of <N> bytes".
 *
 * ld_send_service_process runs the chain for the tasks submitted since the last call only (a send
 * costs the same however many tasks wait).
 * The tick (every tick_ms, driven by the caller): tries the NextRoundRetry tasks again; starts a
 * confirmation for the tasks propagated (last time) at least confirm_after_ms ago, at most
 * LD_SEND_CONFIRM_BATCH_MAX hashes oldest first; present → Validated, absent → NextRoundRetry
 * (published again at the next tick). One confirmation is in flight at a time, and when it is
 * answered the next batch of eligible tasks starts at once, so confirmations keep pace with any
 * send rate (logos-delivery checks at most once per 3 s, which caps confirmations at 100 hashes
 * per 3 s). Then the timeouts: a task never propagated within
 * retry_window_ms of its submission fails with "Unable to send within retry time window" (followed
 * by "; last error: <text>" when a lightpush answered with a retryable status: its description,
 * else "lightpush failed: <code> <NAME>"; nwaku reports the bare text); a
 * task propagated but not confirmed within retry_window_ms of its first propagation is dropped
 * without an app event (counted). A task waiting for a lightpush answer is left alone by the
 * tick until the answer comes; so is a task whose relay publish answers later (LD_SEND_LATER:
 * RLN-relay proves the message first), whose outcome is taken as relay's when it comes, with the
 * message's final timestamp and hash.
 * Without confirmation (reliability off, no confirm_start op, or an ephemeral message) a task is
 * done once propagated.
 *
 * Events go out through ops.event, in the order of the transitions, each at most once per task:
 * PROPAGATED (the first propagation) always before SENT; SENT or ERROR or DROPPED at most once
 * and never two of them. Events are delivered after the state change that caused them, once the
 * entry point has finished its work; a listener may call back into the service (submit, tick,
 * the result feeds) but must not free it — free it from the loop afterwards.
 *
 * The service never calls an op from inside ld_send_service_submit. Time is the caller's
 * monotonic milliseconds. One thread at a time (the node's loop). */
#ifndef LD_MESSAGING_SEND_SERVICE_H
#define LD_MESSAGING_SEND_SERVICE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "waku/core/message.h"

/* Tasks in flight at most by default: 10,000 sends/s confirmed after 3 s hold about 45,000. */
#define LD_SEND_DEFAULT_MAX_PENDING 100000u

/* Hashes in one confirmation at most (a store query takes 100). */
#define LD_SEND_CONFIRM_BATCH_MAX 100
/* Bytes of an error text carried by an event, NUL included. */
#define LD_SEND_ERROR_MAX 256
/* Bytes of a request ID kept per task, NUL included. */
#define LD_SEND_REQUEST_ID_MAX 64

/* relay_publish's answer when its outcome comes later (ld_send_service_relay_done). */
#define LD_SEND_LATER (-1000002)

#define LD_SEND_ERR_RETRY_WINDOW "Unable to send within retry time window"
/* Joins the window's text and the last retryable answer: "<window text>; last error: <answer>". */
#define LD_SEND_ERR_LAST_ERROR "; last error: "

typedef enum ld_send_state {
  LD_SEND_ENTRY = 0,
  LD_SEND_PROPAGATED,
  LD_SEND_VALIDATED,
  LD_SEND_FALLBACK_RETRY,
  LD_SEND_NEXT_ROUND_RETRY,
  LD_SEND_FAILED,
} ld_send_state_t;

typedef enum ld_send_event_kind {
  LD_SEND_EV_PROPAGATED = 0, /* first propagation */
  LD_SEND_EV_SENT,           /* confirmed (Validated) */
  LD_SEND_EV_ERROR,          /* Failed, with `error` */
  LD_SEND_EV_DROPPED,        /* propagated, never confirmed within the window: no app event */
} ld_send_event_kind_t;

/* What an event carries; every pointer is valid only during the ops.event call. */
typedef struct ld_send_event {
  ld_send_event_kind_t kind;
  uint64_t task_id;
  const char *request_id;
  uint8_t hash[LD_WAKU_HASH_LEN];
  const char *error; /* LD_SEND_EV_ERROR only */
  int64_t timestamp; /* the message's, as published (the hash is of the message with it) */
  /* LD_SEND_EV_PROPAGATED: the task is finished (no confirmation follows: reliability off,
   * nothing to confirm with, or an ephemeral message). */
  bool done;
} ld_send_event_t;

/* The calls out. Every op is called on the caller's thread from inside ld_send_service_process,
 * _tick, _lightpush_done or _confirm_done; `msg` and the hashes are valid only during the call. */
typedef struct ld_send_ops {
  /* Relay (NULL: no relay). Publishes `msg` on `pubsub_topic` for `task_id`; `hash` is its Waku
   * hash there (computed once at submission, so that the op need not hash the message again).
   * Returns the number of relay peers it went to (0: none, nothing was sent or it counts as not
   * propagated) or an LD_ERR_*; or LD_SEND_LATER when the message goes out later (RLN-relay: once
   * proved), and then reports through ld_send_service_relay_done (never from inside this call). */
  int (*relay_publish)(void *user_data, uint64_t task_id, const char *pubsub_topic,
                       const ld_waku_message_t *msg, const uint8_t hash[LD_WAKU_HASH_LEN]);
  /* Lightpush (NULL: no lightpush). Starts pushing `msg` on `pubsub_topic` for `task_id`; returns
   * 0 and later reports through ld_send_service_lightpush_done (never from inside this call), or
   * an error (no service peer, …) and never reports. `hash` as for relay_publish. */
  int (*lightpush_start)(void *user_data, uint64_t task_id, const char *pubsub_topic,
                         const ld_waku_message_t *msg, const uint8_t hash[LD_WAKU_HASH_LEN]);
  /* Confirmation (NULL: none). Asks which of `hashes[0..n)` are present; returns 0 and later
   * reports through ld_send_service_confirm_done (never from inside this call), or an error (no
   * store peer, …): the round is skipped and does not count for the spacing. */
  int (*confirm_start)(void *user_data, const uint8_t (*hashes)[LD_WAKU_HASH_LEN], size_t n);
  /* An event (see above). Required. */
  void (*event)(void *user_data, const ld_send_event_t *ev);
} ld_send_ops_t;

typedef struct ld_send_service_config {
  bool reliability;          /* confirm non-ephemeral messages (needs ops.confirm_start) */
  uint32_t retry_window_ms;  /* 0: 60,000 */
  uint32_t confirm_after_ms; /* 0: 3,000 */
  size_t max_pending;        /* tasks at most; 0: LD_SEND_DEFAULT_MAX_PENDING */
  size_t max_msg_size;       /* encoded message at most; 0: LD_WAKU_DEFAULT_MAX_MSG_SIZE */
} ld_send_service_config_t;

typedef struct ld_send_service ld_send_service_t;

typedef struct ld_send_service_stats {
  uint64_t submitted;
  uint64_t propagated;          /* first propagations */
  uint64_t validated;           /* SENT */
  uint64_t failed;              /* ERROR */
  uint64_t validation_timeouts; /* DROPPED (logos_delivery_send_store_validation_timeout_total) */
  uint64_t confirmations;       /* confirmations (store queries) started */
} ld_send_service_stats_t;

/* Creates the service (config and ops copied). NULL on bad arguments (ops NULL, no event op,
 * neither relay_publish nor lightpush_start) or allocation failure. */
ld_send_service_t *ld_send_service_new(const ld_send_service_config_t *cfg,
                                       const ld_send_ops_t *ops, void *user_data);

/* Frees every task without an event. Must not be called from inside an op. NULL: no-op. */
void ld_send_service_free(ld_send_service_t *s);

/* Adds a task in the Entry state for `msg` (deep-copied, its timestamp as given) on
 * `pubsub_topic` (copied) with `request_id` (copied; shorter than LD_SEND_REQUEST_ID_MAX) and
 * writes its deterministic hash to `hash` (may be NULL) and its ID to *task_id (may be NULL).
 * Nothing is tried before the next ld_send_service_process or _tick. Returns 0, or
 * LD_ERR_INVALID_ARG, LD_ERR_LIMIT (max_pending tasks), LD_ERR_NOMEM. */
int ld_send_service_submit(ld_send_service_t *s, const char *request_id, const char *pubsub_topic,
                           const ld_waku_message_t *msg, uint64_t now_ms,
                           uint8_t hash[LD_WAKU_HASH_LEN], uint64_t *task_id);

/* Runs the processor chain for the tasks in the Entry state (call it soon after submitting). */
void ld_send_service_process(ld_send_service_t *s, uint64_t now_ms);

/* The periodic work described above; call it every tick_ms. */
void ld_send_service_tick(ld_send_service_t *s, uint64_t now_ms);

/* The answer of a lightpush started for `task_id`: `status` as the lightpush client reports it
 * (LD_LIGHTPUSH_* codes), `desc` its description (may be NULL). An unknown task (gone) is
 * ignored. */
void ld_send_service_lightpush_done(ld_send_service_t *s, uint64_t task_id, uint32_t status,
                                    const char *desc, uint64_t now_ms);

/* The outcome of a relay publish that answered LD_SEND_LATER for `task_id`: `result` as
 * relay_publish would have returned it (peers, 0 or an LD_ERR_*), and `timestamp` the message's
 * timestamp as it was published (the publisher may have stamped it again: the task then takes
 * it, and its hash — for the events and confirmations — is that of the message as published).
 * An unknown task (gone) is ignored. */
void ld_send_service_relay_done(ld_send_service_t *s, uint64_t task_id, int result,
                                int64_t timestamp, uint64_t now_ms);

/* The answer of the confirmation in flight: `err` 0 and present[i] for the i-th hash it was
 * asked about (n must be that count), or `err` < 0 when it failed (every task stays as it was;
 * `present` may be NULL). Ignored when no confirmation is in flight. */
void ld_send_service_confirm_done(ld_send_service_t *s, int err, const bool *present, size_t n,
                                  uint64_t now_ms);

/* The same answer from a confirmation that only knows what is present, not what is absent (peer
 * presence, reliability.h's `absent_unknown`): a task not present stays Propagated (asked again
 * in a later batch, not re-published) until it is confirmed or its retry window ends. */
void ld_send_service_confirm_some(ld_send_service_t *s, int err, const bool *present, size_t n,
                                  uint64_t now_ms);

/* ---- introspection --------------------------------------------------------------------------- */

/* Tasks held. */
size_t ld_send_service_pending(const ld_send_service_t *s);
/* State of a task; false when it is gone. */
bool ld_send_service_task_state(const ld_send_service_t *s, uint64_t task_id,
                                ld_send_state_t *state);
bool ld_send_service_confirm_in_flight(const ld_send_service_t *s);
void ld_send_service_get_stats(const ld_send_service_t *s, ld_send_service_stats_t *out);

/* "Entry", "SuccessfullyPropagated", … (logos-delivery's names). */
const char *ld_send_state_name(ld_send_state_t state);

#endif
