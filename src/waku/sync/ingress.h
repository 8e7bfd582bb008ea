/* The checks a message that arrives by store-sync transfer passes before it is stored: relay
 * ingress's (validators.h) plus what a message old by design needs instead of relay's ±20 s
 * rule, in this order, the first failure final:
 *
 *   1. size and decoding: the frame decodes (transfer.h) and the carried message is at most
 *      max_msg_size bytes with payload and content topic (nwaku's required fields); with
 *      js_rules both must also be non-empty (relay's js-waku rule);
 *   2. not ephemeral (an ephemeral message is never archived, so never listed by a peer);
 *   3. shard: the pubsub topic is one the node keeps (its configured shards);
 *   4. time: window_start ≤ timestamp ≤ now + LD_SYNC_MAX_FUTURE_NS (the reconciled window,
 *      and never further ahead than relay accepts);
 *   5. solicited: the item (timestamp, hash computed here) is one a reconciliation with the
 *      sending peer listed as missing here (the caller's `wanted`); an item already held is a
 *      duplicate, not an offence;
 *   6. protected shard (--protected-shard): the message carries a valid signature by the
 *      shard's key (relay's check without its 5-minute window, which an old message cannot
 *      meet);
 *   7. RLN: the `rln` hook accepts it (a node with RLN-relay checks the proof as relay does,
 *      without the clock gap and nullifier log: waku/rln/hooks.h; without RLN-relay
 *      ld_sync_rln_accept).
 *
 * Pure functions (the clock is a parameter); any thread. */
#ifndef LD_WAKU_SYNC_INGRESS_H
#define LD_WAKU_SYNC_INGRESS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "waku/relay/validators.h"
#include "waku/sync/id.h"
#include "waku/sync/shards.h"
#include "waku/sync/transfer.h"

/* How far ahead of now a transferred message's timestamp may be (relay's MaxMessageTimestamp-
 * Variance). */
#define LD_SYNC_MAX_FUTURE_NS (20ll * 1000000000ll)

/* Why a transferred message was refused (or LD_SYNC_INGRESS_OK). Stable order: an index in
 * statistics. */
typedef enum ld_sync_ingress_verdict {
  LD_SYNC_INGRESS_OK = 0,
  LD_SYNC_INGRESS_DUPLICATE,     /* held already: dropped, no offence */
  LD_SYNC_INGRESS_UNDECODABLE,   /* check 1 (also too large, empty content topic or payload) */
  LD_SYNC_INGRESS_EPHEMERAL,     /* check 2 */
  LD_SYNC_INGRESS_WRONG_SHARD,   /* check 3 */
  LD_SYNC_INGRESS_TOO_OLD,       /* check 4, before window_start */
  LD_SYNC_INGRESS_FUTURE,        /* check 4, more than 20 s ahead */
  LD_SYNC_INGRESS_UNSOLICITED,   /* check 5 */
  LD_SYNC_INGRESS_BAD_SIGNATURE, /* check 6 */
  LD_SYNC_INGRESS_RLN,           /* check 7 */
  LD_SYNC_INGRESS_VERDICTS
} ld_sync_ingress_verdict_t;

/* Static names: "ok", "duplicate", "undecodable", … */
const char *ld_sync_ingress_verdict_name(ld_sync_ingress_verdict_t v);

/* What check 5 finds out about an item. */
typedef enum ld_sync_wanted {
  LD_SYNC_UNKNOWN = 0, /* neither wanted from this peer nor held */
  LD_SYNC_WANTED,      /* a reconciliation with the peer listed it as missing here */
  LD_SYNC_HELD,        /* held already */
} ld_sync_wanted_t;

typedef ld_sync_wanted_t (*ld_sync_wanted_fn)(void *ctx, const ld_sync_id_t *id);
/* The RLN hook: true accepts. */
typedef bool (*ld_sync_rln_fn)(void *ctx, const char *pubsub_topic, const ld_waku_message_t *msg);

/* The RLN hook of a node without RLN: accepts every message. */
bool ld_sync_rln_accept(void *ctx, const char *pubsub_topic, const ld_waku_message_t *msg);

typedef struct ld_sync_ingress_rules {
  const ld_sync_shards_t *shards; /* the kept pubsub topics (check 3) */
  size_t max_msg_size;            /* 0: LD_WAKU_DEFAULT_MAX_MSG_SIZE */
  bool js_rules;
  int64_t window_start; /* ns */
  int64_t now_ns;
  ld_sync_wanted_fn wanted; /* required */
  void *wanted_ctx;
  /* --protected-shard entries of the node's cluster (may be empty) */
  uint16_t cluster_id;
  const ld_relay_protected_shard_t *protected_shards;
  size_t n_protected_shards;
  ld_sync_rln_fn rln; /* NULL: ld_sync_rln_accept */
  void *rln_ctx;
} ld_sync_ingress_rules_t;

/* Runs the checks on one transfer frame body data[0..len). On LD_SYNC_INGRESS_OK `out`
 * (initialised by the caller) holds the decoded message and *id its item; on any other verdict
 * `out` is left empty, except for LD_SYNC_INGRESS_DUPLICATE (decoded, *id set). */
ld_sync_ingress_verdict_t ld_sync_ingress_check(const uint8_t *data, size_t len,
                                                const ld_sync_ingress_rules_t *rules,
                                                ld_sync_transfer_t *out, ld_sync_id_t *id);

#endif
