/* The one internal interface for delivery confirmation and recovery of missed messages
 * (WAKU-P2P-RELIABILITY). The Messaging API calls only this; an implementation decides how:
 * store-based (ld_store_reliability_new, store queries to a store service peer) or peer-to-peer
 * (ld_p2p_reliability_new, the Network Reliability Service of waku/nrs/nrs.h). Nothing else uses
 * the store client for reliability.
 *
 *   confirm  which of these message hashes does the network hold? (present[i] per hash)
 *   recover  which messages of these content topics on this shard, within this time range, do
 *            we not know (by the caller's predicate)? Each one comes back with its data.
 *   cancel   ends a call early: no callback afterwards.
 *   track    (optional) a message we sent: a push-model implementation registers it as awaiting
 *            confirmation; watch (optional): a content topic we receive on.
 * A push-model implementation (peer presence) learns what is present, never what is absent:
 * it sets `absent_unknown`, and a hash not present in confirm's answer means "not confirmed
 * yet" (the caller asks again later and does not re-publish), not "absent". Its recover only
 * triggers reconciliation: missing messages arrive like live ones (through the node's fan-out),
 * not through on_message.
 *
 * Callback rules: a call that returns an error never calls back; otherwise its final callback
 * (confirm's `cb`, recover's `done`) is called exactly once, from the loop, never from inside
 * the starting call, unless the call is cancelled first. recover's `known` and `on_message` are
 * called any number of times before `done`. cancel is allowed at any time before the final
 * callback, also from inside the call's own `known` / `on_message` callbacks; not after the
 * final callback has started. Every call on the node's loop thread. */
#ifndef LD_MESSAGING_RELIABILITY_H
#define LD_MESSAGING_RELIABILITY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <uv.h>

#include "messaging/service_peers.h"
#include "p2p/switch.h"
#include "waku/core/message.h"

/* Hashes one confirm call takes at most. */
#define LD_RELIABILITY_MAX_CONFIRM 100
/* Content topics of one recover call at most. */
#define LD_RELIABILITY_MAX_TOPICS 10
/* Missing messages one recover call fetches at most (the rest is left for a later range). */
#define LD_RELIABILITY_MAX_RECOVER 10000

typedef struct ld_reliability ld_reliability_t;
typedef struct ld_reliability_call ld_reliability_call_t;

/* confirm's answer: err 0 and present[0..n) (n = the count asked about), or err < 0 (no
 * answer; `present` NULL). */
typedef void (*ld_reliability_confirm_fn)(int err, const bool *present, size_t n, void *user_data);
/* recover: true when the caller already has the message of `hash` (it is not fetched). */
typedef bool (*ld_reliability_known_fn)(const uint8_t hash[LD_WAKU_HASH_LEN], void *user_data);
/* recover: one missing message with its data (views valid during the call). */
typedef void (*ld_reliability_message_fn)(const char *pubsub_topic,
                                          const uint8_t hash[LD_WAKU_HASH_LEN],
                                          const ld_waku_message_t *msg, void *user_data);
/* recover's end: err 0 when the range was fully examined and the missing messages fetched
 * (`recovered` of them delivered through on_message), else the error. */
typedef void (*ld_reliability_done_fn)(int err, size_t recovered, void *user_data);

/* What recover looks at. Borrowed for the call (copied). */
typedef struct ld_reliability_range {
  const char *pubsub_topic;
  const char *const *content_topics;
  size_t n_content_topics; /* 1..LD_RELIABILITY_MAX_TOPICS */
  int64_t start_ns;        /* Unix ns, inclusive */
  int64_t end_ns;          /* Unix ns, inclusive */
} ld_reliability_range_t;

/* The vtable an implementation fills; see the top for the semantics. */
typedef struct ld_reliability_ops {
  /* Errors: LD_ERR_INVALID_ARG (n 0 or above LD_RELIABILITY_MAX_CONFIRM), LD_ERR_NOT_FOUND
   * (nobody to ask), LD_ERR_NOMEM, or the implementation's direct errors. `out` may be NULL. */
  int (*confirm)(ld_reliability_t *r, const uint8_t (*hashes)[LD_WAKU_HASH_LEN], size_t n,
                 ld_reliability_confirm_fn cb, void *user_data, ld_reliability_call_t **out);
  /* Errors as confirm (LD_ERR_INVALID_ARG also for a bad range). `known` may be NULL (nothing
   * known); `on_message` and `done` are required. */
  int (*recover)(ld_reliability_t *r, const ld_reliability_range_t *range,
                 ld_reliability_known_fn known, ld_reliability_message_fn on_message,
                 ld_reliability_done_fn done, void *user_data, ld_reliability_call_t **out);
  void (*cancel)(ld_reliability_t *r, ld_reliability_call_t *call);
  /* Cancels every call (no callbacks) and frees the object. Not from inside its callbacks. */
  void (*free)(ld_reliability_t *r);
  /* Optional (NULL: nothing to do). Views valid during the call. */
  int (*track)(ld_reliability_t *r, const char *pubsub_topic, const ld_waku_message_t *msg,
               const uint8_t hash[LD_WAKU_HASH_LEN]);
  int (*watch)(ld_reliability_t *r, const char *content_topic);
  bool absent_unknown; /* see the top */
} ld_reliability_ops_t;

/* Every implementation starts with this header. */
struct ld_reliability {
  const ld_reliability_ops_t *ops;
};

static inline int ld_reliability_confirm(ld_reliability_t *r,
                                         const uint8_t (*hashes)[LD_WAKU_HASH_LEN], size_t n,
                                         ld_reliability_confirm_fn cb, void *user_data,
                                         ld_reliability_call_t **out) {
  return r->ops->confirm(r, hashes, n, cb, user_data, out);
}

static inline int ld_reliability_recover(ld_reliability_t *r, const ld_reliability_range_t *range,
                                         ld_reliability_known_fn known,
                                         ld_reliability_message_fn on_message,
                                         ld_reliability_done_fn done, void *user_data,
                                         ld_reliability_call_t **out) {
  return r->ops->recover(r, range, known, on_message, done, user_data, out);
}

static inline void ld_reliability_cancel(ld_reliability_t *r, ld_reliability_call_t *call) {
  r->ops->cancel(r, call);
}

static inline int ld_reliability_track(ld_reliability_t *r, const char *pubsub_topic,
                                       const ld_waku_message_t *msg,
                                       const uint8_t hash[LD_WAKU_HASH_LEN]) {
  return r->ops->track != NULL ? r->ops->track(r, pubsub_topic, msg, hash) : 0;
}

static inline int ld_reliability_watch(ld_reliability_t *r, const char *content_topic) {
  return r->ops->watch != NULL ? r->ops->watch(r, content_topic) : 0;
}

/* NULL is a no-op. */
static inline void ld_reliability_free(ld_reliability_t *r) {
  if (r != NULL)
    r->ops->free(r);
}

/* ---- the store-based implementation (store_reliability.c) ----------------------------------
 *
 * confirm: one store v3 query (include_data=false, message_hashes = the batch, page size
 *   LD_STORE_MAX_PAGE_SIZE) to a store peer; present = the hashes among the answer's entries.
 * recover: a content-filtered hash query (include_data=false, pubsub topic, content topics,
 *   time range), every page by cursor; the hashes `known` does not recognise are then fetched by
 *   hash lookup with data, in batches of LD_STORE_MAX_HASHES, on the same connection.
 * The store peer comes from `pick` when set, else from ld_service_peers_pick(peers,
 * LD_WAKU_STORE_CODEC, …); the connection from ld_service_peers_connect. Every exchange's
 * outcome goes to `peers` (when set; ld_service_peers_report): a dial or protocol failure marks
 * the peer failed, so the next call asks another one; a transient answer (429, 5xx, a timeout)
 * keeps it eligible for the next call, paced by the selector's back-off, so that one error answer
 * does not disqualify a store peer for the whole confirmation window; a 200 clears its count. */

/* Picks the store peer for one call: 0 with *out filled, or LD_ERR_NOT_FOUND. */
typedef int (*ld_store_reliability_pick_fn)(void *user_data, ld_service_peer_t *out);

typedef struct ld_store_reliability_config {
  uint32_t timeout_ms;               /* per store exchange; 0: the store client's default */
  size_t max_msg_size;               /* cap of each fetched message; 0: the default 150 KiB */
  ld_store_reliability_pick_fn pick; /* NULL: ld_service_peers_pick on `peers` */
  void *pick_user_data;
} ld_store_reliability_config_t;

/* Creates the store-based implementation on `sw` (borrowed; must outlive it) with `peers`
 * (borrowed; may be NULL only when cfg->pick is set). `cfg` copied (NULL: defaults). NULL on bad
 * arguments or out of memory. */
ld_reliability_t *ld_store_reliability_new(ld_switch_t *sw, ld_service_peers_t *peers,
                                           const ld_store_reliability_config_t *cfg);

/* ---- the peer-to-peer implementation (p2p_reliability.c) -----------------------------------
 *
 * Over the node's Network Reliability Service (borrowed; must outlive it). absent_unknown.
 * track: ld_nrs_track (into the sets and the cache, awaiting confirmation, a round soon).
 * watch: ld_nrs_watch. confirm: answers present[i] = confirmed by peer presence (nrs.h); the
 *   answer waits until at least one hash of the call is confirmed or hold_ms passed (so that a
 *   caller asking again at once is paced), and comes on a later loop turn.
 * recover: a round of reconciliation now; done(0, 0) once it was started (what is missing comes
 *   by transfer through the node's fan-out). */

#define LD_P2P_RELIABILITY_DEFAULT_HOLD_MS 1000u

struct ld_nrs;

/* hold_ms 0: the default. NULL on bad arguments or out of memory. */
ld_reliability_t *ld_p2p_reliability_new(uv_loop_t *loop, struct ld_nrs *nrs, uint32_t hold_ms);

/* ---- helpers of the store-based implementation (pure; exposed for tests) --------------------- */

struct ld_store_response;

/* present[i] = hashes[i] is among the entries of `res`. */
void ld_store_reliability_mark_present(const uint8_t (*hashes)[LD_WAKU_HASH_LEN], size_t n,
                                       const struct ld_store_response *res, bool *present);

#endif
