/* The Network Reliability Service (NRS): peer-to-peer anti-entropy over range-based set
 * reconciliation, the store-free way to confirm sends and recover missed messages
 * (reliability-and-api.md §4, §7; the design is session.h's "Presence" and "Wiring").
 *
 * Items: one in-memory set per content topic (ld_store_sync_t with by_content_topic) over the
 * rolling window [now − window, now], fed by ld_nrs_observe with every non-ephemeral message the
 * node sees (a relay node: the relay fan-out after validation, every content topic of its shards;
 * a light node: its filter pushes) and by ld_nrs_track with its own sends; the bodies of those
 * messages wait in a recent-message cache (cache.h) to be pushed by transfer to a peer that lacks
 * them. ld_nrs_watch makes the set of a subscribed content topic before anything arrives on it,
 * so that a node that was away reconciles it from an empty set.
 *
 * Sessions (initiator): every interval_ms and soon after a (re)connection or a send (kick), a
 * round with up to peers_per_round random connected peers that serve the reconciliation protocol
 * (and pass the optional `eligible` filter: a light node's service peers), scoped to our content
 * topics; while sends wait for confirmation (for at most fast_for_ms after the last one) a round
 * follows every fast_ms. Responder: any peer's session on the content topics it names (an
 * unknown topic is an empty set). What a peer lacks is pushed from the cache; what we lack comes
 * by its push, passes ingress.h's checks (a peer that sends a message no session asked for, out of
 * the window or otherwise invalid is cut off and banned) and is handed to `deliver` (the node
 * dispatches it like a relay message, so the Messaging API reports it once).
 *
 * Confirmation: ld_nrs_track registers a sent message's item; a complete session we initiated
 * establishes its presence at that peer by presence.h's rule; confirm_peers distinct peers
 * confirm it (ld_nrs_confirmed), and the confirm listener is told.
 *
 * Memory: the sets (about 45 bytes per item, tree.h), the cache (cache.h, max_cache_bytes), the
 * tracked sends (presence.h), and per session store-sync's bounds (service.h).
 *
 * Threading: the switch's loop thread; callbacks come from that loop, never from inside the call
 * that caused them. */
#ifndef LD_WAKU_NRS_NRS_H
#define LD_WAKU_NRS_NRS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "p2p/peerstore.h"
#include "p2p/switch.h"
#include "waku/core/message.h"
#include "waku/relay/validators.h"
#include "waku/sync/service.h"

#define LD_NRS_DEFAULT_WINDOW_NS (7ll * 60 * 1000000000ll) /* the dedup window */
#define LD_NRS_DEFAULT_INTERVAL_MS 30000u
#define LD_NRS_DEFAULT_PEERS_PER_ROUND 3u
#define LD_NRS_DEFAULT_KICK_MS 100u
#define LD_NRS_DEFAULT_FAST_MS 300u
#define LD_NRS_DEFAULT_FAST_FOR_MS 60000u

typedef struct ld_nrs ld_nrs_t;

/* A message that arrived by transfer and passed the checks (views valid during the call). */
typedef void (*ld_nrs_deliver_fn)(void *user, const char *pubsub_topic,
                                  const ld_waku_message_t *msg,
                                  const uint8_t hash[LD_WAKU_HASH_LEN]);
/* Whether to start sessions with `peer` (light nodes: their service peers only). */
typedef bool (*ld_nrs_eligible_fn)(void *user, const ld_peerid_t *peer);
/* Some tracked items became confirmed. */
typedef void (*ld_nrs_confirmed_fn)(void *user);
/* A session we initiated with `peer` ended: err 0 when complete; `disjoint` when the peer
 * answered that it reconciles none of our content topics (a store-sync node). */
typedef void (*ld_nrs_session_fn)(void *user, const ld_peerid_t *peer, uint64_t started_ms, int err,
                                  bool disjoint);

typedef struct ld_nrs_config {
  const char *const *pubsub_topics; /* the node's shards (copied); at least one */
  size_t n_pubsub_topics;
  int64_t window_ns;        /* 0: LD_NRS_DEFAULT_WINDOW_NS */
  size_t confirm_peers;     /* 0: LD_NRS_DEFAULT_CONFIRM_PEERS */
  uint32_t interval_ms;     /* 0: default */
  size_t peers_per_round;   /* 0: default */
  uint32_t kick_ms;         /* delay of a round after a send or a connection; 0: default */
  uint32_t fast_ms;         /* 0: default */
  uint32_t fast_for_ms;     /* 0: default */
  size_t max_cache_bytes;   /* 0: cache.h's default */
  uint32_t read_timeout_ms; /* 0: store-sync's default */
  uint32_t session_timeout_ms;
  uint32_t ban_ms;
  /* ingress (ingress.h) */
  size_t max_msg_size;
  uint16_t cluster_id;
  const ld_relay_protected_shard_t *protected_shards;
  size_t n_protected_shards;
  ld_sync_rln_fn rln; /* RLN-relay's check of transferred messages; NULL: ld_sync_rln_accept */
  void *rln_ctx;
  ld_nrs_deliver_fn deliver; /* required */
  void *deliver_user;
  /* wall clock, Unix ns; NULL: the system's (store-sync's clock too) */
  int64_t (*now_ns)(void *clock_data);
  void *clock_data;
} ld_nrs_config_t;

void ld_nrs_config_default(ld_nrs_config_t *cfg);

/* Registers the reconciliation and transfer protocols on `sw` (so the node cannot also run
 * store-sync: LD_ERR_EXISTS). Returns NULL and sets *err: LD_ERR_INVALID_ARG, LD_ERR_EXISTS,
 * LD_ERR_NOMEM. */
ld_nrs_t *ld_nrs_new(ld_switch_t *sw, ld_peerstore_t *ps, const ld_nrs_config_t *cfg, int *err);
/* Stops timers and sessions (before the switch closes). A second call is a no-op. */
void ld_nrs_stop(ld_nrs_t *n);
/* After the switch has closed. NULL is a no-op. */
void ld_nrs_free(ld_nrs_t *n);

void ld_nrs_set_eligible(ld_nrs_t *n, ld_nrs_eligible_fn fn, void *user);
void ld_nrs_set_confirm_listener(ld_nrs_t *n, ld_nrs_confirmed_fn fn, void *user);
/* Told about every session a round started (light nodes report it to their service-peer
 * selector, so that a service peer that fails or does not reconcile their topics is replaced). */
void ld_nrs_set_session_listener(ld_nrs_t *n, ld_nrs_session_fn fn, void *user);

/* A message the node saw (ephemeral ones and ones outside the window are ignored). */
void ld_nrs_observe(ld_nrs_t *n, const char *pubsub_topic, const ld_waku_message_t *msg,
                    const uint8_t hash[LD_WAKU_HASH_LEN]);
/* Our own send: observed, tracked for confirmation, and a round soon. Returns 0 or the error of
 * the tracking (LD_ERR_INVALID_ARG for an ephemeral message or one outside the window). */
int ld_nrs_track(ld_nrs_t *n, const char *pubsub_topic, const ld_waku_message_t *msg,
                 const uint8_t hash[LD_WAKU_HASH_LEN]);
/* Keeps a set for `content_topic` (NUL-terminated) from now on. */
int ld_nrs_watch(ld_nrs_t *n, const char *content_topic);
/* A round soon (after kick_ms). */
void ld_nrs_kick(ld_nrs_t *n);

/* Distinct peers known to hold our tracked item, and whether that confirms it. */
size_t ld_nrs_presence(const ld_nrs_t *n, const uint8_t hash[LD_WAKU_HASH_LEN]);
bool ld_nrs_confirmed(const ld_nrs_t *n, const uint8_t hash[LD_WAKU_HASH_LEN]);
size_t ld_nrs_confirm_peers(const ld_nrs_t *n);

typedef struct ld_nrs_stats {
  uint64_t rounds;             /* rounds run (timer, kicks, fast rounds) */
  uint64_t reconciliations;    /* sessions we initiated */
  uint64_t reconciliations_ok; /* of those, ended complete */
  uint64_t items_pulled;       /* messages that arrived by transfer and were delivered */
  uint64_t items_pushed;       /* messages we pushed by transfer */
  uint64_t confirmations;      /* own items confirmed by peer presence */
  uint64_t tracked;            /* own items tracked now */
  uint64_t unconfirmed;        /* of those, not yet confirmed */
  uint64_t items;              /* items in the sets now */
  uint64_t cached;             /* messages in the cache now */
  uint64_t recon_bytes_in, recon_bytes_out, transfer_bytes_in, transfer_bytes_out;
  uint64_t rejected;     /* transferred messages refused (duplicates excluded) */
  uint64_t peers_banned; /* cut off for an invalid transfer */
} ld_nrs_stats_t;

void ld_nrs_get_stats(const ld_nrs_t *n, ld_nrs_stats_t *out);

/* The store-sync service underneath (figures, bans, tests). */
ld_store_sync_t *ld_nrs_sync(ld_nrs_t *n);

#endif
