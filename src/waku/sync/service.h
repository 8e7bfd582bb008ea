/* Store-sync between store nodes over libp2p (nwaku's waku_store_sync, reconciliation.nim and
 * transfer.nim): the reconciliation protocol (/vac/waku/reconciliation/1.0.0) as initiator and
 * responder and the transfer protocol (/vac/waku/transfer/1.0.0) both ways, around the sans-I/O
 * engine (session.h) and per-topic item sets (shards.h).
 *
 * Framing, as nwaku's readLp/writeLp: every reconciliation payload and every transfer message is
 * one frame `uvarint(length) ‖ body`. A reconciliation session runs on one stream (the initiator
 * opens it and writes the first payload; the sides alternate until one ends, see session.h), then
 * both close it. What a session finds the peer lacks is pushed on one transfer stream per peer,
 * which we open on a connection to it, fill with one frame per message fetched from the archive by
 * hash, and half-close once the peer's sessions are over (nwaku keeps its transfer streams open
 * between sessions and reopens one it finds closed; we half-close an inbound transfer stream idle
 * for read_timeout_ms, and reset it if it stays open after that as long again).
 *
 * Items: one tree per configured pubsub topic, filled at start from the archive's key listing over
 * [now − range − jitter, now] (nwaku fills over [now − range, now]; the extra jitter covers the
 * start of the session window, which nwaku leaves unfilled), then fed by ld_store_sync_add for
 * every message the archive accepts and by every transferred message ingested, and pruned every
 * interval, first at half an interval (nwaku), of items older than the session window's start.
 * Until the fill has answered, sessions are neither started nor accepted (nwaku fills before it
 * mounts the protocols).
 *
 * Sessions: every interval_ms one with a random connected peer that identify says serves the
 * reconciliation protocol (and is not banned, nor in a session with us), over nwaku's window
 * [now − jitter − range, now − jitter], with this engine's policy (ranges.h; it interoperates with
 * nwaku's). A responder skips ranges that end before that window. Scope: our configured pubsub
 * topics; a peer's scope with content topics is answered as disjoint (a zero-length frame; the
 * item sets are kept per pubsub topic only).
 *
 * Transferred messages are checked before ingest (ingress.h): solicited means listed as needed by
 * a session with that peer, or inside the spans of the item sets we sent it (session.h), for as
 * long as the session runs and solicit_ttl_ms after it ended (or after its last accepted message).
 * An accepted message goes to the archive (the backend's `insert`: nwaku's syncMessageIngress,
 * without the relay's timestamp rule) and into the item sets. A peer that sends a frame that fails
 * a check (other than a duplicate) is cut off: every stream of ours with it is reset, every
 * connection to it closed, and it is banned from store-sync for ban_ms (its streams reset, never
 * chosen for a session); nothing it sent in that frame is stored.
 *
 * Caps: payloads (frames) of max_payload bytes read and written (nwaku caps nothing on
 * reconciliation; 150 KiB per transfer frame), max_sessions reconciliation streams at once (one
 * per peer and direction), max_transfers inbound transfer streams (two per peer), every read
 * bounded by read_timeout_ms and every session by session_timeout_ms (and by the engine's 32
 * payloads), LD_SYNC_DEFAULT_MAX_DIFFS differences per session, the bytes of a push buffered
 * before the archive is asked for more, LD_STORE_SYNC_MAX_PEERS peers with state at once. Memory
 * per session at worst: about 5.5 × max_payload (the frame read and its decoding, the answer
 * decoded and encoded, the frame being written) plus 4 MB of differences (session.h): ≈ 92 MB at
 * the default 16 MiB (nwaku's answers reach 9 MB with 1,000 differences in a million items,
 * bench/RESULTS.md), for at most max_sessions sessions; a session that finds a handful of
 * differences uses a few KiB.
 *
 * Threading: every function on the switch's loop thread; callbacks come from that loop. */
#ifndef LD_WAKU_SYNC_SERVICE_H
#define LD_WAKU_SYNC_SERVICE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "p2p/peerstore.h"
#include "p2p/switch.h"
#include "waku/archive/archive.h"
#include "waku/relay/validators.h"
#include "waku/sync/ingress.h"

#define LD_STORE_SYNC_DEFAULT_MAX_SESSIONS 4
#define LD_STORE_SYNC_DEFAULT_MAX_TRANSFERS 16
#define LD_STORE_SYNC_DEFAULT_MAX_PAYLOAD (16u * 1024 * 1024)
#define LD_STORE_SYNC_DEFAULT_READ_TIMEOUT_MS 30000
#define LD_STORE_SYNC_DEFAULT_SESSION_TIMEOUT_MS 120000
#define LD_STORE_SYNC_DEFAULT_SOLICIT_TTL_MS 120000
#define LD_STORE_SYNC_DEFAULT_BAN_MS (60u * 60 * 1000)
/* Peers with sessions, pushes or solicitations under way at once; more are refused. */
#define LD_STORE_SYNC_MAX_PEERS 64
/* Banned peers remembered at once (the oldest ban goes first). */
#define LD_STORE_SYNC_MAX_BANS 256

/* Where messages live (the archive, through the node). Each call returns 0 and later calls its
 * callback exactly once from the loop, or returns an error and never calls it (the contracts of
 * ld_archive_query, ld_archive_insert and ld_archive_list_keys; insert returns the archive's
 * verdict, 0 = accepted). */
typedef struct ld_store_sync_backend {
  int (*query)(void *ctx, const ld_archive_query_t *q, ld_archive_query_fn done, void *user_data);
  int (*insert)(void *ctx, const char *pubsub_topic, const ld_waku_message_t *msg,
                const uint8_t hash[LD_WAKU_HASH_LEN], ld_archive_done_fn done, void *user_data);
  int (*list)(void *ctx, const ld_archive_listing_t *l, ld_archive_list_fn done, void *user_data);
  void *ctx;
} ld_store_sync_backend_t;

/* What a complete session we initiated showed (the Network Reliability Service's presence rule,
 * session.h): every item that was in the scope's sets inside the window when the session started
 * (started_ms, the service's clock) and is not among lacked[0..n) is in the peer's set too. Only
 * for a session whose peer reconciled our scope (not a disjoint answer). Views valid during the
 * call. */
typedef void (*ld_store_sync_presence_fn)(void *user, const ld_peerid_t *peer, uint64_t started_ms,
                                          int64_t window_start, const ld_sync_id_t *lacked,
                                          size_t n_lacked);

typedef struct ld_store_sync_config {
  /* the configured pubsub topics (/waku/2/rs/<cluster>/<shard>), copied; at least one */
  const char *const *pubsub_topics;
  size_t n_pubsub_topics;
  uint64_t interval_ms; /* --store-sync-interval; 0: no periodic sessions nor prune */
  int64_t range_ns;     /* --store-sync-range */
  int64_t jitter_ns;    /* --store-sync-relay-jitter */
  /* ingress (ingress.h) */
  size_t max_msg_size; /* 0: LD_WAKU_DEFAULT_MAX_MSG_SIZE */
  bool js_rules;
  uint16_t cluster_id;
  const ld_relay_protected_shard_t *protected_shards; /* copied */
  size_t n_protected_shards;
  ld_sync_rln_fn rln; /* NULL: ld_sync_rln_accept */
  void *rln_ctx;
  /* caps and times; 0 takes the default */
  size_t max_sessions;
  size_t max_transfers;
  size_t max_payload;
  uint32_t read_timeout_ms;
  uint32_t session_timeout_ms;
  uint32_t solicit_ttl_ms;
  uint32_t ban_ms;
  /* wall clock, Unix ns; NULL: the system's */
  int64_t (*now_ns)(void *clock_data);
  void *clock_data;
  /* The Network Reliability Service's use (false: store-sync): the item sets are one tree per
   * content topic, made on first use (ld_store_sync_add_content, ld_store_sync_watch, a peer's
   * scope, a transferred message; at most LD_SYNC_MAX_SHARDS), sessions carry our pubsub topics
   * and every content topic we keep, and a peer's scope without content topics is answered as
   * disjoint. pubsub_topics then only name the shards a transferred message may come on. The
   * periodic sessions (interval_ms) pick one random peer as for store-sync. */
  bool by_content_topic;
  ld_store_sync_presence_fn on_presence; /* optional */
  void *presence_user;
} ld_store_sync_config_t;

/* nwaku's defaults (300 s, 3600 s, 20 s), js-waku rules, the caps above; no topics. */
void ld_store_sync_config_default(ld_store_sync_config_t *cfg);

typedef struct ld_store_sync ld_store_sync_t;

/* Creates the service, registers both protocols on `sw` and starts filling the item sets from
 * the backend (then the timers). `ps` (borrowed) tells which connected peers serve
 * reconciliation; `backend` is copied, its ctx borrowed. Returns NULL and sets *err:
 * LD_ERR_INVALID_ARG (no topics, a NULL argument, a bad topic), LD_ERR_EXISTS (a protocol is
 * registered already), LD_ERR_NOMEM. The switch cannot drop handlers: the service lives as long
 * as the switch. */
ld_store_sync_t *ld_store_sync_new(ld_switch_t *sw, ld_peerstore_t *ps,
                                   const ld_store_sync_backend_t *backend,
                                   const ld_store_sync_config_t *cfg, int *err);

/* Stops the timers, resets every stream and gives up the pushes under way; inbound streams are
 * reset from then on. Call before the switch closes; callbacks of sessions started with
 * ld_store_sync_start_session still come (from the streams' close). A second call is a no-op. */
void ld_store_sync_stop(ld_store_sync_t *s);

/* Frees the service after the switch has closed. Backend requests still out are detached (their
 * callbacks are then ignored; the backend must outlive them). NULL is a no-op. */
void ld_store_sync_free(ld_store_sync_t *s);

/* A message the archive accepted (the node's archive stage): its item goes into the set of its
 * topic (a topic not configured is ignored). Ephemeral messages never reach here. */
void ld_store_sync_add(ld_store_sync_t *s, const char *pubsub_topic, int64_t timestamp,
                       const uint8_t hash[LD_WAKU_HASH_LEN]);

/* by_content_topic: adds the item of a message on `content_topic` (len bytes) to that topic's
 * set. Returns 0, LD_ERR_EXISTS (held already), LD_ERR_LIMIT (too many topics), LD_ERR_STATE (not
 * by_content_topic), LD_ERR_INVALID_ARG, LD_ERR_NOMEM. */
int ld_store_sync_add_content(ld_store_sync_t *s, const char *content_topic, size_t len,
                              int64_t timestamp, const uint8_t hash[LD_WAKU_HASH_LEN]);

/* by_content_topic: makes the (empty) set of `content_topic` so that sessions carry it. Errors as
 * ld_store_sync_add_content. */
int ld_store_sync_watch(ld_store_sync_t *s, const char *content_topic, size_t len);

/* True when a set holds the item. */
bool ld_store_sync_holds(const ld_store_sync_t *s, int64_t timestamp,
                         const uint8_t hash[LD_WAKU_HASH_LEN]);

/* Drops the items older than the window's start (now − jitter − range) now; the periodic prune
 * does the same every interval. Returns how many. */
uint64_t ld_store_sync_prune(ld_store_sync_t *s);

/* ---- one session on demand ------------------------------------------------------------------- */

/* How a session went: err 0 when it ended complete (session.h), else why it did not; what it
 * found and what went over its stream. */
typedef struct ld_store_sync_result {
  int err;
  size_t have, need; /* differences found: ours the peer lacks, the peer's we lack */
  size_t frames_in, frames_out;
  uint64_t bytes_in, bytes_out; /* reconciliation frames, length prefixes included */
} ld_store_sync_result_t;

typedef void (*ld_store_sync_done_fn)(const ld_store_sync_result_t *r, void *user_data);

/* Starts a session with `peer` (NULL: a random eligible one, as the timer does) on one of its
 * connections. `done` (may be NULL) is called once when the session's stream is over (the pushes
 * it started go on). Returns 0, or LD_ERR_STATE (the fill has not answered yet, or stopped),
 * LD_ERR_NOT_FOUND (no such connected peer, or none eligible), LD_ERR_LIMIT (max_sessions, or a
 * session with that peer already), LD_ERR_GRAYLISTED (banned), the errors of ld_switch_open_stream;
 * then `done` is never called. */
int ld_store_sync_start_session(ld_store_sync_t *s, const ld_peerid_t *peer,
                                ld_store_sync_done_fn done, void *user_data);

/* ---- figures -----------------------------------------------------------------------------------
 */

/* nwaku's protocols_metrics.nim buckets. */
#define LD_STORE_SYNC_ROUNDTRIP_BUCKETS 6  /* 1, 2, 3, 5, 8, 13 (+Inf) */
#define LD_STORE_SYNC_DIFFERENCE_BUCKETS 7 /* 0, 10, 50, 100, 500, 1000, 5000 (+Inf) */
extern const double ld_store_sync_roundtrip_bounds[LD_STORE_SYNC_ROUNDTRIP_BUCKETS];
extern const double ld_store_sync_difference_bounds[LD_STORE_SYNC_DIFFERENCE_BUCKETS];

typedef struct ld_store_sync_stats {
  bool ready;                 /* the fill has answered */
  uint64_t filled;            /* items the fill put in the sets */
  uint64_t cached;            /* items in the sets now (total_messages_cached) */
  uint64_t sessions_started;  /* initiated (streams opened) */
  uint64_t sessions_accepted; /* inbound streams taken */
  uint64_t sessions_refused;  /* inbound streams reset: caps, banned, not ready */
  uint64_t sessions_complete; /* ended complete, either role */
  uint64_t sessions_failed;   /* ended with an error or incomplete, timeouts included */
  uint64_t sessions_cut;      /* of those: cut at a read or session deadline */
  /* reconciliation_roundtrips / reconciliation_differences: payloads read per session, and
   * have + need per session, at the end of every session that read at least one payload;
   * counts[i]: observations ≤ bounds[i], counts[BUCKETS]: all */
  uint64_t roundtrips[LD_STORE_SYNC_ROUNDTRIP_BUCKETS + 1];
  double roundtrips_sum;
  uint64_t differences[LD_STORE_SYNC_DIFFERENCE_BUCKETS + 1];
  double differences_sum;
  /* total_bytes_exchanged{protocol, direction}: frame bodies, as nwaku counts them */
  uint64_t recon_bytes_in, recon_bytes_out, transfer_bytes_in, transfer_bytes_out;
  /* total_transfer_messages_exchanged{direction} */
  uint64_t transfer_in, transfer_out;
  uint64_t transfers_refused; /* inbound transfer streams reset: caps, banned */
  uint64_t pushes_dropped;    /* items we could not push (no connection, stream error, too big) */
  uint64_t ingested;          /* transferred messages the archive accepted */
  uint64_t ingest_errors;     /* refused or not written by the archive */
  uint64_t rejected[LD_SYNC_INGRESS_VERDICTS]; /* by verdict; [DUPLICATE]: dropped duplicates */
  uint64_t peers_banned;                       /* cut off for an invalid transfer */
} ld_store_sync_stats_t;

void ld_store_sync_get_stats(const ld_store_sync_t *s, ld_store_sync_stats_t *out);

/* True while `peer` is banned. */
bool ld_store_sync_banned(const ld_store_sync_t *s, const ld_peerid_t *peer);

#endif
