/* Reliable channels: the channel manager above the Messaging API (reliability-and-api.md §2).
 *
 * A channel is (channel ID, content topic, sender ID) with one SDS engine (channels/sds.h) on
 * the node's loop. The manager owns the channels of one node and wires each engine to the
 * MessagingClient through its public functions only:
 *
 *   send:    payload → request ID (10 random bytes, hex) → SDS content message with the LIP's
 *            message ID → Waku message {content topic, payload = SDS bytes, meta =
 *            "RELIABLE-CHANNEL-API/1"} → ld_messaging_send. Retransmissions go out as the same SDS
 *            bytes; sync messages and repair answers as ephemeral Waku messages.
 *   receive: LD_EVENT_MESSAGING_RECEIVED on a channel's content topic, with the marker in `meta`
 *            or no marker at all (js-waku's ReliableChannel sends none; only another version
 *            of the marker is ignored) → ld_sds_receive with the Waku hash as retrieval hint,
 *            which drops what is not SDS or of another channel; messages delivered in causal
 *            order become LD_EVENT_CHANNEL_RECEIVED.
 *   timers:  one uv timer per channel armed at the engine's next deadline (retransmission, sync,
 *            repair, lost dependencies).
 *
 * Events (published on the node's broker, payload ld_channel_event_t, on the loop thread):
 *   LD_EVENT_CHANNEL_RECEIVED        a message delivered in causal order (channel, sender, payload)
 *   LD_EVENT_CHANNEL_SENT            every segment of a request propagated (the LIP's "sent": on
 *                                    the network; not store-confirmed, so that it never depends on
 *                                    a store peer — digest §0 hazard 7)
 *   LD_EVENT_CHANNEL_ERROR           one or more segments could not be dispatched (error)
 *   LD_EVENT_CHANNEL_DELIVERED       every segment acknowledged by a participant (SDS, end to end)
 *   LD_EVENT_CHANNEL_DELIVERY_ERROR  retransmissions exhausted (or the outgoing buffer overflowed)
 *                                    before every segment was acknowledged (error)
 *   LD_EVENT_CHANNEL_LOST            what another participant sent and this one will never
 *                                    deliver (reason): a dependency that no participant repaired
 *                                    and no store returned within the lost timeout
 *                                    (LD_CHANNEL_LOST_IRRETRIEVABLE: the messages waiting for it
 *                                    are delivered without it), or a segment set that will never
 *                                    reassemble (LD_CHANNEL_LOST_EXPIRED after the reassembly
 *                                    timeout, _EVICTED by the reassembly bounds, _HASH_MISMATCH)
 * A request gets one of SENT / ERROR, and (not ephemeral) one of DELIVERED / DELIVERY_ERROR, in
 * either order. Each request's terminal events fire at most once.
 *
 * Segmentation (LIP-243, channels/segment.h): a payload over `segment_size` is split; each
 * segment is its own SDS message (so each is acknowledged, retransmitted and repaired on its
 * own); the request is SENT when every segment propagated and DELIVERED when every segment is
 * acknowledged (parity segments included). Received segments are reassembled per (sender, hash)
 * and delivered whole once keccak256 matches; with Reed–Solomon parity (parity_rate_ppm) from any
 * `data count` of a set's segments. Partial reassemblies are not persisted.
 *
 * Send queue and pacing: a send goes to the engine only while its outgoing buffer has room for
 * every segment (sds.max_outgoing), so that the engine never gives up an unacknowledged message
 * to make room; until then it waits, in order, in the channel's send queue (persisted, bounded by
 * send_queue_max / _bytes: beyond, LD_ERR_LIMIT). Whatever the channels hand to the
 * MessagingClient (first transmissions, retransmissions, syncs, repairs) waits in the rate
 * limiter's FIFOs while the relay's peers have LD_CHANNELS_NET_BACKLOG_BYTES waiting to be
 * written, so that a burst is never dropped by the relay's per-peer cap.
 *
 * Limits: LD_CHANNELS_MAX_CHANNELS channels; per channel `max_requests` requests whose events are
 * not all reported (beyond: LD_ERR_LIMIT); the send queue; the engine's own limits (sds.h);
 * payloads up to LD_SEGMENT_MAX_SEGMENTS segments; reassembly per channel:
 * LD_SEGMENT_DEFAULT_MAX_SETS sets, LD_SEGMENT_DEFAULT_MAX_BYTES bytes,
 * LD_SEGMENT_DEFAULT_TIMEOUT_MS.
 *
 * Threading: the node's loop thread only. */
#ifndef LD_CHANNELS_CHANNELS_H
#define LD_CHANNELS_CHANNELS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <uv.h>

#include "channels/channel_store.h"
#include "channels/sds.h"
#include "messaging/messaging.h"

/* The spec marker carried in each channel message's Waku `meta`, outside any encryption. */
#define LD_CHANNELS_MARKER "RELIABLE-CHANNEL-API/1"
#define LD_CHANNELS_MAX_CHANNELS 256u
#define LD_CHANNEL_REQUEST_ID_LEN 20
/* Longest channel ID and sender ID (bytes). */
#define LD_CHANNEL_ID_MAX 255u

/* The LIP's segment size: larger payloads are sent as LIP-243 segments (channels/segment.h). */
#define LD_CHANNELS_DEFAULT_SEGMENT_SIZE 102400u
/* The LIP-243 parity rate, 0.125, per million. */
#define LD_CHANNELS_PARITY_RATE_PPM 125000u
/* Requests whose events are not all reported, per channel: a burst of 20,000 sends fits. */
#define LD_CHANNELS_DEFAULT_MAX_REQUESTS 50000u
/* The send queue of a channel: sends accepted by ld_channels_send that wait for room in the
 * engine's outgoing buffer (sds.max_outgoing unacknowledged messages) or on the network. */
#define LD_CHANNELS_DEFAULT_SEND_QUEUE 50000u
#define LD_CHANNELS_DEFAULT_SEND_QUEUE_BYTES (64u * 1024 * 1024)
/* The network takes more while most relay peers have at most this many bytes waiting to be
 * written (half gossipsub's per-peer cap, beyond which frames are dropped); polled this often
 * while a queue waits for it. */
#define LD_CHANNELS_NET_BACKLOG_BYTES (1024u * 1024)
#define LD_CHANNELS_NET_POLL_MS 1u
/* The channels' state is written to SQLite in one transaction per this many ms (write-behind;
 * closing a channel or the manager commits at once). */
#define LD_CHANNELS_COMMIT_MS 5u
/* Acknowledgement syncs (sds.h ack_sync_delay_ms) of the channel layer. */
#define LD_CHANNELS_DEFAULT_ACK_SYNC_MS 100u
/* ... and one at once per this many content messages received (sds.h ack_sync_every;
 * channelsOverrides sdsAckSyncEvery, 0 = only the delay): a quarter of the outgoing buffer
 * (1,000), which a sender's message leaves only when acknowledged (two syncs); at 100 ms per
 * sync a burst drained at ~5,000 messages/s. */
#define LD_CHANNELS_DEFAULT_ACK_SYNC_EVERY 250u
/* Content messages carry the bloom filter at most once per second (sds.h bloom_interval_ms;
 * channelsOverrides sdsBloomIntervalMs): syncs carry it always, and the acknowledgement syncs
 * above follow every burst received, so bloom acknowledgements keep flowing while a burst's
 * messages are ~200 bytes instead of ~19 KB. */
#define LD_CHANNELS_DEFAULT_BLOOM_INTERVAL_MS 1000u
#define LD_CHANNELS_DEFAULT_EPOCH_MS 600000u /* the RLN epoch of the LIP: 600 s */
#define LD_CHANNELS_DEFAULT_MAX_QUEUED 10000u
#define LD_CHANNELS_DEFAULT_MAX_QUEUED_BYTES (64u * 1024 * 1024)

enum {
  LD_EVENT_CHANNEL_RECEIVED = 1000 + 40, /* LD_EVENT_USER + 40 */
  LD_EVENT_CHANNEL_SENT,
  LD_EVENT_CHANNEL_ERROR,
  LD_EVENT_CHANNEL_DELIVERED,
  LD_EVENT_CHANNEL_DELIVERY_ERROR,
  LD_EVENT_CHANNEL_LOST,
};

/* The reasons of LD_EVENT_CHANNEL_LOST (js-waku's "irretrievable-message"; the segment set
 * reasons of logos-delivery's ChannelMessageLostEvent). */
#define LD_CHANNEL_LOST_IRRETRIEVABLE "Irretrievable"
#define LD_CHANNEL_LOST_EXPIRED "Expired"
#define LD_CHANNEL_LOST_EVICTED "Evicted"
#define LD_CHANNEL_LOST_HASH_MISMATCH "HashMismatch"

typedef struct ld_channel_event {
  const char *channel_id;
  const char *request_id; /* all but RECEIVED */
  const char *sender_id;  /* RECEIVED */
  const uint8_t *payload; /* RECEIVED */
  size_t payload_len;
  const char *error; /* ERROR, DELIVERY_ERROR */
  /* LOST: message_id = the SDS message ID of a lost dependency, message_hash = its retrieval
   * hint ("0x" + hex of the Waku message hash; NULL when none was known); payload_hash = hex
   * keccak256 of a lost segment set's whole payload; sender_id = the set's sender, or the
   * dependency's when its causal history entry named one; NULL when not applicable. */
  const char *message_id;
  const char *message_hash;
  const char *payload_hash;
  const char *reason; /* LOST: one of LD_CHANNEL_LOST_* */
} ld_channel_event_t;

typedef struct ld_channels_config {
  ld_sds_config_t sds;
  /* Payloads up to segment_size go out as one SDS message; larger ones as segments of at most
   * segment_size bytes (wrapper included), at most LD_SEGMENT_MAX_SEGMENTS of them. Must exceed
   * LD_SEGMENT_OVERHEAD. */
  size_t segment_size; /* LD_CHANNELS_DEFAULT_SEGMENT_SIZE */
  /* Reed–Solomon parity of segmented payloads (LIP-243, Leopard-RS), in parity segments per
   * million data segments: 0 = none (the default, as segmentationEnableReedSolomon false);
   * LD_CHANNELS_PARITY_RATE_PPM is the LIP's 0.125. With parity, data segments carry
   * alignDown64(segment_size - LD_SEGMENT_PARITY_OVERHEAD) bytes, so segment_size must be at
   * least LD_SEGMENT_PARITY_OVERHEAD + 64; a payload whose set would exceed
   * LD_SEGMENT_MAX_SEGMENTS or GF(2^8) with parity goes without. A receiver rebuilds a set from
   * any `data count` of its segments, whatever its own setting: segments SDS holds for missing
   * dependencies are offered to the reassembler at once, so a payload missing up to its parity
   * count of segments is delivered without waiting for their repair (ahead of the held segments,
   * which SDS delivers later as duplicates of a delivered set); on a channel with an encryption
   * hook, once SDS delivers them (the hook decrypts each message once). */
  uint32_t parity_rate_ppm;
  /* A received segment set still incomplete this long after its first segment is dropped and
   * reported lost (LD_CHANNEL_LOST_EXPIRED). LD_SEGMENT_DEFAULT_TIMEOUT_MS (the LIP's 300 s). */
  uint64_t reassembly_timeout_ms;
  size_t max_requests; /* per channel, LD_CHANNELS_DEFAULT_MAX_REQUESTS */
  /* Per channel: the send queue's bounds (LD_CHANNELS_DEFAULT_SEND_QUEUE, _BYTES). A send that
   * would exceed them is refused with LD_ERR_LIMIT; nothing accepted is given up for room. */
  size_t send_queue_max;
  size_t send_queue_max_bytes;
  /* The SQLite file of the channels' state (channels/channel_store.h), opened at the first
   * create; "" = no persistence. A channel created again (same ID and sender, in this or a
   * later manager) resumes from it: Lamport clock, log, unacknowledged own messages (their
   * delivered / delivery_error events follow under their request IDs), buffered messages. */
  char state_path[4096];
  /* Rate limit manager (off by default, as the LIP's RateLimitConfig): every message the
   * channels hand to the MessagingClient (content, retransmission, sync, repair) counts against
   * a budget of rate_limit_per_epoch per epoch of rate_limit_epoch_ms (wall clock, epoch =
   * now div period, as RLN's); beyond it (and, rate limit on or off, while the network is
   * backlogged, see above) messages wait in FIFOs shared by the node's channels
   * and go out at the next epochs: first transmissions and repair answers first, in order, then
   * retransmissions and syncs (a retransmission of a message already waiting is not queued
   * twice). The FIFOs hold at most rate_limit_max_queued
   * messages and rate_limit_max_queued_bytes: a channel_send that would not fit is refused
   * (LD_ERR_LIMIT), a retransmission / sync / repair that does not fit is dropped and counted
   * (SDS sends it again). Nothing is dropped silently. */
  bool rate_limit;
  uint64_t rate_limit_epoch_ms;       /* LD_CHANNELS_DEFAULT_EPOCH_MS */
  uint64_t rate_limit_per_epoch;      /* 1 (the LIP's messagesPerEpoch default) */
  size_t rate_limit_max_queued;       /* LD_CHANNELS_DEFAULT_MAX_QUEUED */
  size_t rate_limit_max_queued_bytes; /* LD_CHANNELS_DEFAULT_MAX_QUEUED_BYTES */
} ld_channels_config_t;

/* The defaults above with the LIP's SDS settings (ack timeout 5 s, 5 retransmissions, causal
 * history 2) and the SDS-R timing of sds.h (or the test timing, see below). */
void ld_channels_config_default(ld_channels_config_t *cfg);

/* Tests only: the rate limit that ld_channels_config_default gives from now on in this process
 * (epoch_ms 0 turns it back off). Any thread. */
void ld_channels_set_test_rate_limit(uint64_t epoch_ms, uint64_t per_epoch);

/* Tests only: SDS-R T_min / T_max, the sync interval and the acknowledgement timeout that
 * ld_channels_config_default gives from now on in this process (0 keeps a default). With T_min
 * and T_max set, a missing dependency is also requested up to 20 times and declared lost after
 * 25 T_max (a test over a lossy path has no store to fall back to); with the acknowledgement
 * timeout set, a message is retransmitted up to 10 times. Any thread. */
void ld_channels_set_test_timing(uint64_t repair_t_min_ms, uint64_t repair_t_max_ms,
                                 uint64_t sync_interval_ms, uint64_t ack_timeout_ms);

/* Tests only: the engine's outgoing buffer and the send queue's length that
 * ld_channels_config_default gives from now on in this process (0 keeps a default). Any thread. */
void ld_channels_set_test_limits(size_t max_outgoing, size_t send_queue_max);

/* Tests only: the acknowledgement sync delay (sds.h ack_sync_delay_ms) that
 * ld_channels_config_default gives from now on in this process (0 keeps the default). Any
 * thread. */
void ld_channels_set_test_ack_sync_delay(uint64_t delay_ms);

typedef struct ld_channels ld_channels_t;

/* Creates the manager on `loop` above `m` (which must outlive it) and subscribes to the
 * messaging events. NULL with *err (LD_ERR_INVALID_ARG for a bad configuration, LD_ERR_NOMEM). */
ld_channels_t *ld_channels_new(uv_loop_t *loop, ld_messaging_t *m, const ld_channels_config_t *cfg,
                               int *err);

/* Unsubscribes, closes every channel (no further event) and frees the manager once its timers
 * are closed (from the loop). Call before the messaging client is freed. NULL is a no-op. */
void ld_channels_free(ld_channels_t *c);

/* Creates channel `channel_id` on `content_topic` as `sender_id` and subscribes the topic; with
 * persistence, restores its stored state first. Errors with a one-line reason in `why`:
 * LD_ERR_EXISTS ("channel already exists: <id>"), LD_ERR_DB / LD_ERR_IO (the state store cannot
 * be opened, is corrupted, or the channel's stored state does not parse: the reason says which),
 * LD_ERR_INVALID_ARG ("failed to subscribe to content topic: <why>", empty or over-long IDs),
 * LD_ERR_LIMIT (LD_CHANNELS_MAX_CHANNELS), LD_ERR_NOMEM. */
int ld_channels_create(ld_channels_t *c, const char *channel_id, const char *content_topic,
                       const char *sender_id, char *why, size_t why_cap);

bool ld_channels_exists(const ld_channels_t *c, const char *channel_id);

/* Sends `payload` on the channel; writes the request ID. Errors with a reason: LD_ERR_NOT_FOUND
 * ("unknown channel: <id>"), LD_ERR_INVALID_ARG ("empty payload"), LD_ERR_TOO_LARGE, LD_ERR_LIMIT
 * (too many requests in flight), LD_ERR_NOMEM. */
int ld_channels_send(ld_channels_t *c, const char *channel_id, const uint8_t *payload, size_t len,
                     bool ephemeral, char request_id[LD_CHANNEL_REQUEST_ID_LEN + 1], char *why,
                     size_t why_cap);

/* Closes the channel: its engine stops, requests under way get no further event, the content
 * topic is unsubscribed unless another channel uses it. LD_ERR_NOT_FOUND ("unknown channel:
 * <id>"). */
int ld_channels_close(ld_channels_t *c, const char *channel_id, char *why, size_t why_cap);

/* The application's encryption hook of a channel (c-api extension, liblogosdelivery_channels.h):
 * applied to each segment before the SDS wrap and after SDS delivery; `*out` is copied. A hook
 * that fails (non-zero) fails the send (LD_ERR_CRYPTO) or drops the received segment. */
typedef int (*ld_channel_crypto_fn)(void *user_data, const uint8_t *in, size_t in_len,
                                    const uint8_t **out, size_t *out_len);

/* Registers (or with both NULL, clears) the pair of `channel_id`; kept across close / create.
 * LD_ERR_INVALID_ARG (one NULL and not the other, bad ID), LD_ERR_LIMIT (more pairs than
 * LD_CHANNELS_MAX_CHANNELS), LD_ERR_NOMEM. */
int ld_channels_set_encryption(ld_channels_t *c, const char *channel_id, ld_channel_crypto_fn enc,
                               ld_channel_crypto_fn dec, void *user_data);

/* True when `msg` is a channel message (the marker in `meta`) on the content topic of one of the
 * manager's channels: the channel layer consumes it and reports what it delivers as
 * LD_EVENT_CHANNEL_RECEIVED, so the C library does not repeat it as a message_received event
 * (whose byte fields are JSON integer arrays: 19 KB of bloom filter become ~100 KB of JSON). */
bool ld_channels_consumes(const ld_channels_t *c, const ld_waku_message_t *msg);

/* The engine's counters of a channel (tests, metrics); false for an unknown channel. */
bool ld_channels_stats(const ld_channels_t *c, const char *channel_id, ld_sds_stats_t *out);

/* The state rows the manager's store has put and deleted since it opened (zeros without
 * persistence). */
void ld_channels_store_counts(const ld_channels_t *c, ld_channel_store_counts_t *out);

#endif
