/* One reconciliation session on /vac/waku/reconciliation/1.0.0, either side, sans-I/O: frame
 * bodies in, frame bodies out, the differences found, and a done flag (nwaku's
 * SyncReconciliation.processRequest and initiate, without the stream).
 *
 * The exchange (digest waku.md §7.4): the initiator writes its first payload (one fingerprint of
 * its window, or with the default policy the window already split); then each side in turn reads
 * a payload and, unless it has no ranges or only Skips (then the session ends without a reply),
 * answers it (ranges.h); a side that answers with no ranges (the single byte 00) ends the session
 * after writing it. The scope: each payload carries its sender's configured pubsub and content
 * topics; the receiver keeps the intersection with its own when both lists are non-empty, its own
 * list when only that one is, the peer's otherwise; an empty intersection is answered with a
 * zero-length frame and ends the session (nwaku's rule). The `scope` callback maps a scope to the
 * item set to use (e.g. a per-shard view); without it the configured set is used.
 *
 * Driving it (service.h does, for store nodes):
 *   initiator: dial the peer on LD_SYNC_RECONCILIATION_PROTOCOL, ld_sync_session_start, write
 *     the body as one length-prefixed frame, then loop: read a frame (cap: limits.max_payload),
 *     ld_sync_session_receive, write the reply frame when `reply` says so (it may be empty: a
 *     zero-length frame), until ld_sync_session_done; close the stream.
 *   responder: the same loop from the first frame read.
 *   after every receive: push each item of `have` to the peer by transfer (transfer.h; message
 *     bodies from the archive or the node's recent-message cache), and remember `need` and
 *     `offered` as what the peer may transfer to us (anything else arriving by transfer is
 *     unsolicited); a caller may empty the three between calls (n = 0).
 *   on any error: close (reset) the stream; the error is named by ld_strerror.
 *   time: the engine keeps none; the handler bounds every read (a stalled peer), the whole
 *     session, and the number of sessions at once.
 * Presence (the Network Reliability Service's send-side confirmation): once a session is
 * complete (ld_sync_session_complete), every item that was in our set inside the window before
 * the session started and is not in `have` is in the peer's set too: a range either matched
 * fingerprints, or the peer saw our items and answered Skip (it lacked none) or told us what it
 * holds. Two caveats: a responder with skip_old_ranges answers Skip for ranges that end before
 * its own window, so count presence only for items newer than the window start plus the clock
 * skew one tolerates (recent sends are); and XOR fingerprints do not resist a peer that forges
 * them, so presence counts towards confirmation only from several distinct peers.
 *
 * Wiring:
 *   store nodes (store-sync, --store-sync*): service.h — one tree per shard (shards.h), filled
 *     from the archive at start and fed by what the archive accepts; a `scope` callback
 *     answering with the view over the shards of a scope; every --store-sync-interval a session
 *     with a random peer that serves LD_SYNC_RECONCILIATION_PROTOCOL (identify), in nwaku's
 *     window; prune every interval, first at half an interval (nwaku).
 *   Network Reliability Service (waku/nrs/nrs.h; service.h with by_content_topic and
 *     on_presence): one tree per content topic, fed by the relay fan-out (non-ephemeral messages
 *     after validation; light nodes: their filter pushes) over the rolling window (default 7 min,
 *     window [now − window, now]), pruned on a timer; sessions with a few peers (light nodes:
 *     their service peers) on a timer, on (re)connection and after a send, content_topics = every
 *     topic kept; what a peer lacks is pushed from the recent-message cache, what we lack arrives
 *     by its push, is checked (ingress.h) and surfaces as an ordinary received message; a
 *     complete session we initiated reports presence (a zero-length first answer, disjoint
 *     scopes, reports none).
 *
 * Memory of one session at the default caps (codec.h, ranges.h): the decoded received payload
 * (≤ 32,768 ranges × 96 bytes + 127,100 items × 40 bytes ≈ 8.2 MB), the answer (the same caps:
 * ≤ 8.2 MB decoded, ≤ 4 MiB encoded in the caller's buffer), the items collected for one answer
 * (≤ 5.1 MB), and the differences (≤ 100,000 items × 40 bytes = 4 MB): about 30 MB at worst; a
 * session that finds a handful of differences uses a few KiB. At most 32 payloads are read.
 *
 * One thread (the set's owner). */
#ifndef LD_WAKU_SYNC_SESSION_H
#define LD_WAKU_SYNC_SESSION_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/buf.h"
#include "waku/sync/codec.h"
#include "waku/sync/ranges.h"
#include "waku/sync/set.h"
#include "waku/sync/spans.h"

/* nwaku's store-sync defaults (waku_store_sync/common.nim). */
#define LD_SYNC_DEFAULT_INTERVAL_NS (300ll * 1000000000ll) /* --store-sync-interval 300 s */
#define LD_SYNC_DEFAULT_RANGE_NS (3600ll * 1000000000ll)   /* --store-sync-range 3600 s */
#define LD_SYNC_DEFAULT_JITTER_NS (20ll * 1000000000ll)    /* --store-sync-relay-jitter 20 s */
#define LD_SYNC_DEFAULT_MAX_ROUNDS 32u

/* Maps a negotiated scope to the set to reconcile (see above). Returns 0 with *out filled,
 * LD_ERR_NOT_FOUND to treat the scope as disjoint, or another error (the session fails with it).
 * The topic arrays are valid during the call only. */
typedef int (*ld_sync_scope_fn)(void *user, const ld_sync_topic_t *pubsub, size_t n_pubsub,
                                const ld_sync_topic_t *content, size_t n_content,
                                ld_sync_set_t *out);

typedef struct ld_sync_session_config {
  ld_sync_set_t set; /* own scope's items; also the initiator's first payload */
  ld_sync_policy_t policy;
  ld_sync_limits_t limits; /* on every payload read and written */
  size_t max_rounds;       /* payloads read */
  size_t max_diffs;        /* have + need */
  int64_t window_start;    /* the window [start, end] an initiator reconciles */
  int64_t window_end;
  bool skip_old_ranges; /* a responder skips ranges that end before window_start */
  /* own configured topics (empty: all); borrowed for the session's life */
  const ld_sync_topic_t *pubsub_topics;
  size_t n_pubsub_topics;
  const ld_sync_topic_t *content_topics;
  size_t n_content_topics;
  ld_sync_scope_fn scope; /* optional */
  void *user;
} ld_sync_session_config_t;

/* This engine's defaults: default policy and caps, no topics, window [now − jitter − range,
 * now − jitter] with nwaku's 3600 s range and 20 s jitter, old ranges skipped. */
void ld_sync_session_config_init(ld_sync_session_config_t *cfg, ld_sync_set_t set, int64_t now_ns);

/* Switches a configuration to nwaku's own behaviour (policy, no skipping of old ranges). */
void ld_sync_session_config_nwaku(ld_sync_session_config_t *cfg);

typedef struct ld_sync_session {
  ld_sync_session_config_t cfg;
  bool initiator;
  bool done;
  int error; /* what ended the session, 0 when it ended normally or still runs */
  /* statistics: frames and bytes (bodies plus their length prefixes) in each direction */
  size_t frames_in, frames_out;
  uint64_t bytes_in, bytes_out;
  ld_sync_ranges_t ranges; /* ranges.have / ranges.need: the differences so far */
  /* The time spans of the item sets we sent (each range's lower bound as the peer decodes it to
   * its upper time, whole timestamps): there we showed the peer all we hold, so the peer may
   * push us whatever it holds there (what we lack of it we could not list as `need`: we never
   * saw those items). What a peer pushes is solicited when it is in ranges.need or in one of
   * these spans. */
  ld_sync_spans_t offered;
  /* private */
  ld_sync_payload_t in, out;
  ld_sync_payload_t peer_topics; /* the topics of the last scope resolved */
  bool scoped;
} ld_sync_session_t;

/* Caller storage. `cfg` is copied (its topic arrays stay borrowed). Errors: LD_ERR_INVALID_ARG
 * (a set without summary/each, partitions outside 2 … LD_SYNC_MAX_PARTITIONS, window end before
 * start). Release with ld_sync_session_clear. */
int ld_sync_session_init(ld_sync_session_t *s, const ld_sync_session_config_t *cfg, bool initiator);

void ld_sync_session_clear(ld_sync_session_t *s);

/* Initiator: appends the first frame body to `out`. Errors: LD_ERR_STATE (a responder, or already
 * started), LD_ERR_NOMEM. */
int ld_sync_session_start(ld_sync_session_t *s, ld_buf_t *out);

/* Takes one received frame body data[0..len). When *reply is true, one frame body (possibly
 * empty) was appended to `out` and must be written. On an error the session is done and its
 * stream should be reset: LD_ERR_STATE (done already), LD_ERR_LIMIT (more than max_rounds
 * payloads), the decoder's errors (TOO_LARGE, TRUNCATED, MALFORMED, VARINT_TOO_LONG), the scope
 * callback's, LD_ERR_NOMEM. */
int ld_sync_session_receive(ld_sync_session_t *s, const uint8_t *data, size_t len, ld_buf_t *out,
                            bool *reply);

static inline bool ld_sync_session_done(const ld_sync_session_t *s) {
  return s->done;
}

/* Done without an error and without a range given up (see ranges.h). */
static inline bool ld_sync_session_complete(const ld_sync_session_t *s) {
  return s->done && s->error == 0 && s->ranges.abandoned == 0;
}

#endif
