/* Scalable Data Sync (SDS) with the SDS-Repair extension (SDS-R): the end-to-end reliability of
 * one reliable channel, as a sans-I/O state machine.
 *
 * What goes in: the current time, payloads to send, SDS messages received (the bytes of a Waku
 * message's payload, with that message's hash as retrieval hint). What comes out: events in a
 * queue the caller drains — bytes to broadcast, messages delivered in causal order,
 * acknowledgements, give-ups, missing and lost dependencies — and the next deadline at which
 * ld_sds_handle_timeout must run. The engine never touches a socket, a clock or a thread.
 *
 * Wire format and bloom filter: channels/sds_wire.h and channels/bloom.h (the SDS specification's
 * and js-waku's `@waku/sds`, not nim-sds's). Behaviour (shared/specs/reliability-and-api.md §1):
 *
 * - Lamport clock in Unix milliseconds: starts at `now`; before each content or sync message
 *   L = max(now, L + 1); on delivery L = max(L, message's L). It saturates at UINT64_MAX instead
 *   of wrapping. A received timestamp more than `max_lamport_ahead_ms` ahead of `now` is refused
 *   (LD_ERR_OVERFLOW), so that one peer cannot push the channel's clock to the end of time.
 * - Local log: delivered and own content message IDs ordered by (Lamport, ID), at most `max_log`
 *   entries (the oldest are forgotten). Each outgoing message carries the last
 *   `causal_history_size` entries as its causal history, each with its retrieval hint and
 *   sender, and the bloom filter of every content message ID received.
 * - Sending: the message enters the log, the bloom filter and the outgoing buffer at once and
 *   comes out as a SEND event. Until acknowledged it is retransmitted, as the identical bytes,
 *   every `ack_timeout_ms` (every `possibly_acked_timeout_ms` once a bloom filter of a peer
 *   holds it), at most `max_retransmissions` times; then SEND_FAILED (LD_ERR_TIMEOUT).
 *   Acknowledged = its ID in a received causal history, or in `possible_acks_threshold`
 *   received bloom filters (of our size; another size is ignored and counted).
 * - Receiving: foreign channel and own messages are ignored, content duplicates (in the log or
 *   the incoming buffer) dropped, ephemeral messages delivered at once. A content message whose
 *   causal history is all in the log (or declared lost) is delivered; otherwise it waits in the
 *   incoming buffer and each dependency neither logged nor buffered is "missing" (MISSING
 *   event). Delivering a message delivers every buffered message it completes, in order.
 * - Missing dependencies are repaired first by peers (SDS-R: after T_req a repair request rides
 *   on the next outgoing message, or on a sync message sent for it; a peer holding the message
 *   and in the response group rebroadcasts it at T_resp unless someone did first), then, when
 *   they carry a retrieval hint, by the caller from a store (FETCH events, from `fetch_delay_ms`
 *   after detection, every `fetch_interval_ms`, at most `max_fetches` times). A dependency still
 *   missing `lost_timeout_ms` after detection is declared lost (LOST event) and stops blocking
 *   the messages that wait for it; a buffered message whose wait exceeds `lost_timeout_ms` has
 *   its missing dependencies declared lost the same way.
 * - Sync messages (no content; causal history, bloom filter and repair requests) go out when the
 *   channel is idle: after a random delay in [0, sync_interval_ms) that restarts when a content
 *   message is sent or a sync received (×1), when content is received (×0.5, to acknowledge it
 *   sooner) and after each sync (×2), as js-waku's ReliableChannel does. None is sent while there
 *   is neither history nor a repair request to carry. With `ack_sync_delay_ms`, received content
 *   also brings acknowledgement syncs (see the configuration).
 * - SDS-R timing (identical for every participant, as js-waku computes it): H(x) = the first 8
 *   bytes of SHA-256(x) as a big-endian integer; T_req = now + H(self ‖ id) mod (T_max − T_min) +
 *   T_min; T_resp = now + (H(self) XOR H(sender)) · H(id) mod T_max (the original sender answers
 *   at once); in the response group when H(self ‖ id) mod G = H(sender ‖ id) mod G. A request
 *   not answered within T_max is sent again, at most `repair_max_requests` times. Repair
 *   answers are rebuilt from the log's cache of the last `repair_cache_max` messages (content,
 *   Lamport, causal history, original sender; no bloom filter).
 *
 * Limits (every buffer is bounded; what exceeds a limit is refused or dropped and reported):
 *   log            max_log entries                   oldest forgotten
 *   repair cache   repair_cache_max / _bytes         oldest uncached (no longer repairable)
 *   outgoing       max_outgoing messages             oldest given up: SEND_FAILED (LD_ERR_LIMIT)
 *   incoming       max_incoming / max_incoming_bytes oldest dropped: DROPPED (LD_ERR_LIMIT)
 *   missing        max_missing dependencies          newer ones not tracked (counted)
 *   responses      max_repair_responses              newer requests not answered (counted)
 *   lost IDs       max_lost remembered               oldest forgotten
 *   events         max_events queued                 calls refused with LD_ERR_AGAIN until
 *                                                    the caller drains (one call may add more)
 * and the wire caps of sds_wire.h.
 *
 * Intended wiring (the channel layer, one engine per channel on the node's loop thread):
 * segment a payload, ld_sds_send each segment with a LIP message ID (ld_sds_message_id), drain
 * the events: SEND → encryption hook → Waku message (content topic, the RELIABLE-CHANNEL-API/1
 * meta marker, ephemeral for REPAIR) → rate limiter → MessagingClient; the messaging layer's
 * propagated event gives the Waku hash → ld_sds_set_retrieval_hint. A Waku message received on
 * the channel's content topic with the marker → decrypt → ld_sds_receive with its Waku hash as
 * the hint; DELIVERED → reassembly → channel_message_received; ACKNOWLEDGED → delivered event;
 * SEND_FAILED → channel_message_error / delivery-error; FETCH → store query by message hash,
 * each result fed to ld_sds_receive; LOST and DROPPED → reported. A uv timer armed at
 * ld_sds_next_deadline calls ld_sds_handle_timeout. Persistence will snapshot the Lamport clock,
 * log, outgoing and incoming buffers (the bloom filter is rebuilt from the log).
 *
 * Threading: an engine is used by one thread at a time. Errors: negative LD_ERR_* codes; a call
 * that fails changes nothing and queues no event, except LD_ERR_NOMEM, which may leave the
 * operation half done (the engine stays consistent and usable). */
#ifndef LD_CHANNELS_SDS_H
#define LD_CHANNELS_SDS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/buf.h"
#include "channels/sds_wire.h"

typedef struct ld_sds ld_sds_t;

/* ---- configuration -------------------------------------------------------------------------- */

typedef struct ld_sds_config {
  /* causal history and acknowledgement */
  uint32_t causal_history_size;       /* 2 (LIP); js-waku uses 200; <= LD_SDS_MAX_CAUSAL_HISTORY */
  uint32_t possible_acks_threshold;   /* 2 bloom hits acknowledge (js-waku); >= 1 */
  uint64_t ack_timeout_ms;            /* 5 000 (LIP acknowledgementTimeoutMs) */
  uint64_t possibly_acked_timeout_ms; /* 10 000: resend period once possibly acknowledged */
  uint32_t max_retransmissions;       /* 5 (LIP maxRetransmissions) */
  /* missing dependencies */
  uint64_t lost_timeout_ms;   /* 300 000 (> 2·T_max: a repair can still come); 0 = never */
  uint64_t fetch_delay_ms;    /* 130 000: after peers had their chance (at once without repair) */
  uint64_t fetch_interval_ms; /* 10 000 (js-waku's retrieve frequency) */
  uint32_t max_fetches;       /* 5; 0 = no FETCH events */
  /* sync */
  uint64_t sync_interval_ms; /* 30 000 (js-waku); 0 = no periodic sync */
  /* Acknowledgement syncs: content received makes a sync go out at most this long after it, and
   * while the content received since the previous sync exceeds what one causal history names,
   * further ones every ack_sync_delay_ms until each message was in possible_acks_threshold bloom
   * filters (so that a burst is acknowledged within a few delays, not the 30 s sync interval).
   * 0 = off (js-waku's behaviour: only the random periodic sync). */
  uint64_t ack_sync_delay_ms; /* 0 */
  /* With ack_sync_delay_ms: an acknowledgement sync also goes out at once when this many content
   * messages were received since the previous sync, so that in a burst the sender's outgoing
   * buffer (max_outgoing, which a message leaves only when acknowledged) drains at the rate the
   * messages arrive rather than at possible_acks_threshold delays per message. 0 = only the
   * delay. */
  uint32_t ack_sync_every; /* 0 */
  /* SDS-R */
  bool repair;                     /* true */
  uint64_t repair_t_min_ms;        /* 30 000 */
  uint64_t repair_t_max_ms;        /* 120 000; < 2^32 */
  uint32_t repair_response_groups; /* 1 (num_participants div 128 + 1) */
  uint32_t repair_max_per_message; /* 3 */
  uint32_t repair_max_requests;    /* 3 requests per missing dependency */
  uint64_t repair_sync_gap_ms;     /* 1 000: least time between syncs sent to carry requests */
  /* bloom filter (must match the peers': js-waku's defaults) */
  uint32_t bloom_capacity; /* 10 000; rebuilt from the newest half of the log when full */
  double bloom_error_rate; /* 0.001 */
  /* Content messages carry the bloom filter (optional in the SDS specification; 18,752 bytes at
   * js-waku's size) at most once per this many ms; sync messages always carry it, so bloom
   * acknowledgements keep flowing through them. 0 = on every message (js-waku's behaviour). */
  uint64_t bloom_interval_ms; /* 0 */
  /* limits */
  uint64_t max_lamport_ahead_ms; /* 86 400 000 (one day); 0 = no check */
  size_t max_log;                /* 10 000 */
  size_t repair_cache_max;       /* 1 000 messages */
  size_t repair_cache_bytes;     /* 32 MiB */
  size_t max_outgoing;           /* 1 000 */
  size_t max_incoming;           /* 1 000 messages */
  size_t max_incoming_bytes;     /* 32 MiB (each unmet dependency counts 64 bytes more) */
  size_t max_missing;            /* 1 000 */
  size_t max_repair_responses;   /* 1 000 */
  size_t max_lost;               /* 1 000 */
  size_t max_events;             /* 65 536 */
  uint64_t random_seed;          /* sync delays and sync IDs; 0 = from the system's CSPRNG */
} ld_sds_config_t;

/* Fills `c` with the defaults above. */
void ld_sds_config_default(ld_sds_config_t *c);

/* 0, or LD_ERR_INVALID_ARG for an inconsistent configuration (a zero limit, T_min >= T_max,
 * T_max >= 2^32, a threshold of 0, an unusable bloom size, a history over the wire cap). */
int ld_sds_config_check(const ld_sds_config_t *c);

/* ---- events --------------------------------------------------------------------------------- */

typedef enum ld_sds_event_type {
  /* Broadcast `data` (an encoded SdsMessage) on the channel; lamport = its Lamport timestamp
   * when it is a new content message (LD_SDS_SEND_CONTENT), 0 otherwise. */
  LD_SDS_EV_SEND = 1,
  /* A content message delivered in causal order: message_id, sender_id, lamport, data =
   * content, hint = the retrieval hint it was received with. */
  LD_SDS_EV_DELIVERED,
  /* An ephemeral message (delivered at once, not logged): message_id, sender_id, data. */
  LD_SDS_EV_EPHEMERAL,
  /* Own message acknowledged and out of the outgoing buffer: message_id; count = bloom hits
   * (0 when a causal history named it). */
  LD_SDS_EV_ACKNOWLEDGED,
  /* Own message seen in a peer's bloom filter, below the threshold: message_id, count. */
  LD_SDS_EV_POSSIBLY_ACKNOWLEDGED,
  /* Own message given up: message_id; error = LD_ERR_TIMEOUT (retransmissions exhausted) or
   * LD_ERR_LIMIT (pushed out of a full outgoing buffer). */
  LD_SDS_EV_SEND_FAILED,
  /* A causal dependency is missing: the entry (message_id, hint, sender_id). */
  LD_SDS_EV_MISSING,
  /* Fetch a missing dependency from a store by its retrieval hint: the entry (hint non-empty). */
  LD_SDS_EV_FETCH,
  /* A missing dependency declared irretrievably lost: the entry. */
  LD_SDS_EV_LOST,
  /* A buffered message dropped before delivery (incoming buffer full): message_id, sender_id,
   * error = LD_ERR_LIMIT. */
  LD_SDS_EV_DROPPED,
} ld_sds_event_type_t;

/* What a SEND event carries. */
typedef enum ld_sds_send_kind {
  LD_SDS_SEND_CONTENT = 1,    /* a new content message (ld_sds_send) */
  LD_SDS_SEND_RETRANSMISSION, /* the same bytes again, not yet acknowledged */
  LD_SDS_SEND_SYNC,           /* a sync message */
  LD_SDS_SEND_REPAIR,         /* a repair answer: another participant asked for this message */
  LD_SDS_SEND_EPHEMERAL,      /* ld_sds_send_ephemeral */
} ld_sds_send_kind_t;

/* An event taken from the queue; it owns its fields (NULL / 0 when not used by its type) until
 * ld_sds_event_clear. Texts are NUL-terminated. */
typedef struct ld_sds_event {
  ld_sds_event_type_t type;
  ld_sds_send_kind_t send_kind; /* LD_SDS_EV_SEND */
  char *message_id;
  char *sender_id;
  uint64_t lamport;
  uint8_t *data;
  size_t len;
  uint8_t *hint;
  size_t hint_len;
  uint32_t count;
  int error;
} ld_sds_event_t;

void ld_sds_event_clear(ld_sds_event_t *ev);

/* Static name of an event type ("send", "delivered", ...) and of a send kind. */
const char *ld_sds_event_name(ld_sds_event_type_t t);
const char *ld_sds_send_kind_name(ld_sds_send_kind_t k);

/* ---- the engine ----------------------------------------------------------------------------- */

/* Creates the engine of channel `channel_id` for participant `sender_id` (UTF-8, non-empty
 * sender, both at most LD_SDS_MAX_ID_LEN bytes; copied). `cfg` NULL = defaults. `now_ms` is the
 * Unix time in milliseconds; every call takes it (a value below an earlier one is read as the
 * earlier one). Errors: LD_ERR_INVALID_ARG, LD_ERR_NOMEM. */
int ld_sds_new(const ld_sds_config_t *cfg, const char *channel_id, const char *sender_id,
               uint64_t now_ms, ld_sds_t **out);

/* Frees the engine and every queued event. NULL is a no-op. */
void ld_sds_free(ld_sds_t *s);

/* Sends `content[0..len)` (len > 0) as content message `message_id` (unique in the channel, see
 * ld_sds_message_id): queues SEND (LD_SDS_SEND_CONTENT). Errors: LD_ERR_INVALID_ARG (empty
 * content, bad ID), LD_ERR_EXISTS (ID already logged, outgoing or buffered), LD_ERR_TOO_LARGE (the
 * encoded message would exceed LD_SDS_MAX_WIRE_SIZE), LD_ERR_AGAIN (event queue full),
 * LD_ERR_NOMEM. */
int ld_sds_send(ld_sds_t *s, uint64_t now_ms, const char *message_id, const uint8_t *content,
                size_t len);

/* Sends an ephemeral message (no Lamport clock, history, bloom filter, buffering or
 * acknowledgement): queues SEND (LD_SDS_SEND_EPHEMERAL). Errors as ld_sds_send but never
 * LD_ERR_EXISTS. */
int ld_sds_send_ephemeral(ld_sds_t *s, uint64_t now_ms, const char *message_id,
                          const uint8_t *content, size_t len);

/* What ld_sds_receive did with a well-formed message. */
typedef enum ld_sds_rx {
  LD_SDS_RX_DELIVERED = 1, /* content delivered (and perhaps buffered ones after it) */
  LD_SDS_RX_BUFFERED,      /* content waits for dependencies */
  LD_SDS_RX_SYNC,          /* sync processed */
  LD_SDS_RX_EPHEMERAL,     /* ephemeral delivered */
  LD_SDS_RX_DUPLICATE,     /* content already logged or buffered */
  LD_SDS_RX_OWN,           /* sent by this participant */
  LD_SDS_RX_FOREIGN,       /* another channel */
} ld_sds_rx_t;

/* Processes one received SDS message; `hint` (NULL when hint_len is 0; at most
 * LD_SDS_MAX_HINT_LEN bytes) is its retrieval hint, the Waku message hash. `*outcome` (may be
 * NULL) says what happened. Errors: the decoder's (LD_ERR_BAD_PROTOBUF, LD_ERR_LIMIT, ...;
 * `why` gets its description when not NULL), LD_ERR_MALFORMED (neither content, sync nor
 * ephemeral), LD_ERR_OVERFLOW (Lamport timestamp too far ahead), LD_ERR_INVALID_ARG,
 * LD_ERR_AGAIN, LD_ERR_NOMEM. */
int ld_sds_receive(ld_sds_t *s, uint64_t now_ms, const uint8_t *data, size_t len,
                   const uint8_t *hint, size_t hint_len, ld_sds_rx_t *outcome, char *why,
                   size_t why_cap);

/* Records the retrieval hint (the Waku hash of the message that carried it) of a logged
 * message, typically our own once the messaging layer reports it. LD_ERR_NOT_FOUND when not in
 * the log, LD_ERR_INVALID_ARG, LD_ERR_NOMEM. */
int ld_sds_set_retrieval_hint(ld_sds_t *s, const char *message_id, const uint8_t *hint,
                              size_t hint_len);

/* Whether the logged message `message_id` already has the retrieval hint `hint` (false when it
 * is not in the log, has none or another one). */
bool ld_sds_has_retrieval_hint(const ld_sds_t *s, const char *message_id, const uint8_t *hint,
                               size_t hint_len);

/* Runs everything due at `now_ms`: retransmissions and give-ups, repair answers, repair requests
 * (a sync message carries them when due), fetches, lost dependencies, periodic sync.
 * LD_ERR_AGAIN when the event queue is full (nothing done), LD_ERR_NOMEM. */
int ld_sds_handle_timeout(ld_sds_t *s, uint64_t now_ms);

/* The earliest time ld_sds_handle_timeout has work, or UINT64_MAX. */
uint64_t ld_sds_next_deadline(const ld_sds_t *s);

/* Sends a sync message now (if there is history or a repair request to carry): queues SEND
 * (LD_SDS_SEND_SYNC) and returns 1, or returns 0 when there is nothing to carry.
 * LD_ERR_AGAIN, LD_ERR_NOMEM. */
int ld_sds_sync_now(ld_sds_t *s, uint64_t now_ms);

/* Moves the oldest queued event into `ev` (which the caller later releases with
 * ld_sds_event_clear) and returns true; false when the queue is empty. */
bool ld_sds_next_event(ld_sds_t *s, ld_sds_event_t *ev);

/* Counters and sizes, for tests, metrics and the channel's sync status. */
typedef struct ld_sds_stats {
  uint64_t lamport;
  size_t log_len, repair_cache_len, repair_cache_bytes;
  size_t outgoing_len, incoming_len, incoming_bytes, missing_len, responses_len, lost_len;
  size_t events_len;
  uint64_t sent, retransmitted, acked_by_history, acked_by_bloom, send_failed;
  uint64_t delivered, buffered, duplicates, own, foreign, refused, ephemeral, syncs_sent,
      syncs_received;
  uint64_t bloom_size_mismatch, bloom_rebuilds, ack_syncs_sent;
  uint64_t missing, missing_untracked, fetches, lost, dropped;
  uint64_t repair_requests_sent, repairs_answered, repairs_untracked;
} ld_sds_stats_t;

void ld_sds_get_stats(const ld_sds_t *s, ld_sds_stats_t *out);

/* True when `message_id` is in the local log. */
bool ld_sds_in_log(const ld_sds_t *s, const char *message_id);

/* ---- persistence: restoring a fresh engine -----------------------------------------------------
 *
 * A channel's persisted state goes back into an engine just made by ld_sds_new, before any other
 * call: the Lamport clock, the log entries (any order), the outgoing messages (their exact bytes,
 * retransmitted from one ack timeout after `now`), then the buffered incoming messages through
 * ld_sds_receive (which finds their missing dependencies again). The bloom filter is rebuilt
 * from the restored log. Repair copies are not restored (what was logged before cannot be
 * answered to a repair request). Every function checks what it restores as the decoder checks
 * the wire (lengths, UTF-8) and fails without changing anything. */

/* L = max(L, lamport). */
void ld_sds_restore_lamport(ld_sds_t *s, uint64_t lamport);

/* A delivered or own message of the log. Errors: LD_ERR_INVALID_ARG (empty or over-long ID or
 * sender, not UTF-8, hint over LD_SDS_MAX_HINT_LEN), LD_ERR_EXISTS, LD_ERR_NOMEM. */
int ld_sds_restore_logged(ld_sds_t *s, uint64_t lamport, const char *id, size_t id_len,
                          const char *sender, size_t sender_len, const uint8_t *hint,
                          size_t hint_len);

/* An own content message not acknowledged yet: `wire` is the encoded SdsMessage as sent, or as
 * ld_sds_strip_bloom left it (then it is retransmitted with the engine's bloom filter of now);
 * `*message_id` (may be NULL) gets its ID (heap). Errors: the decoder's; LD_ERR_MALFORMED (not a
 * content message of this channel and sender, or more retransmissions than configured);
 * LD_ERR_EXISTS; LD_ERR_NOMEM. */
int ld_sds_restore_outgoing(ld_sds_t *s, uint64_t now_ms, const uint8_t *wire, size_t len,
                            uint32_t retransmissions, char **message_id);

/* Re-encodes the SdsMessage `wire` without its bloom filter (19 KB of a js-waku-sized one) into
 * `out` (reset first): what persistence stores of a message whose filter is rebuilt anyway.
 * Errors: the decoder's and the encoder's; LD_ERR_NOMEM. */
int ld_sds_strip_bloom(const uint8_t *wire, size_t len, ld_buf_t *out);

/* The message ID of the Reliable Channel LIP: lowercase hex of
 * keccak256(sender_id ‖ decimal(unix_ns) ‖ content) — unique per sender and send even for
 * identical content. `out` has room for 65 chars. */
void ld_sds_message_id(const char *sender_id, uint64_t unix_ns, const uint8_t *content, size_t len,
                       char out[65]);

#endif
