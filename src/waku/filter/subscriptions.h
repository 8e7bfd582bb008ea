/* The filter service's subscription table, without I/O: which peer wants which filter criteria,
 * and which live peers want a given message.
 *
 * A criterion is a (pubsub topic, content topic) pair; subscriptions are keyed by the requesting
 * peer's ID. Each criterion indexes its peers, so matching a message costs one hash lookup plus
 * the criterion's peers. A peer is *live* while now − last_seen ≤ ttl; SUBSCRIBE, UNSUBSCRIBE and
 * PING refresh last_seen. Expired peers get nothing from ld_filter_subs_match and are removed by
 * ld_filter_subs_expire (the service's maintenance), or as soon as they send a request.
 *
 * Answers follow nwaku (waku_filter_v2/protocol.nim, subscriptions.nim), with statuses worded
 * "<KIND>: <cause>":
 * - SUBSCRIBE / UNSUBSCRIBE without a pubsub topic or content topics: 400 "pubsubTopic and
 *   contentTopics must be specified"; more than LD_FILTER_MAX_CONTENT_TOPICS: 400 "exceeds
 *   maximum content topics: 100"; a topic longer than LD_FILTER_MAX_TOPIC_LEN (our cap on what a
 *   peer makes us store): 400 "topic exceeds maximum length: 512".
 * - SUBSCRIBE from a new peer while max_peers peers are subscribed (expired ones are purged
 *   first): 503 "node has reached maximum number of subscriptions: N"; criteria beyond
 *   max_criteria_per_peer: 503 "peer has reached maximum number of filter criteria" (only
 *   criteria the peer does not have yet count; nwaku also counts repeats). Subscribing is
 *   idempotent.
 * - UNSUBSCRIBE: 404 "peer has no subscriptions" when the peer has no live subscription, or as
 *   soon as a criterion it is not subscribed to comes up; the criteria before it (request order)
 *   stay removed. A peer left without criteria is removed.
 * - UNSUBSCRIBE_ALL and SUBSCRIBER_PING: 404 "peer has no subscriptions" unless live.
 * Duplicate content topics within one request count once.
 *
 * Times are caller-supplied monotonic milliseconds. Not thread-safe: one thread at a time. */
#ifndef LD_WAKU_FILTER_SUBSCRIPTIONS_H
#define LD_WAKU_FILTER_SUBSCRIPTIONS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "p2p/peerid.h"
#include "waku/filter/codec.h"

/* nwaku CLI defaults: --filter-max-peers-to-serve, --filter-max-criteria,
 * --filter-subscription-timeout (300 s). */
#define LD_FILTER_DEFAULT_MAX_PEERS 1000
#define LD_FILTER_DEFAULT_MAX_CRITERIA 1000
#define LD_FILTER_DEFAULT_TTL_MS (300u * 1000)
/* Longest pubsub or content topic stored; longer ones are answered with 400. */
#define LD_FILTER_MAX_TOPIC_LEN 512

typedef struct ld_filter_subs ld_filter_subs_t;

typedef struct ld_filter_subs_config {
  size_t max_peers;             /* default LD_FILTER_DEFAULT_MAX_PEERS */
  size_t max_criteria_per_peer; /* default LD_FILTER_DEFAULT_MAX_CRITERIA */
  uint64_t ttl_ms;              /* default LD_FILTER_DEFAULT_TTL_MS */
} ld_filter_subs_config_t;

void ld_filter_subs_config_default(ld_filter_subs_config_t *cfg);

/* Called when a peer leaves the table (unsubscribed from its last criterion, UNSUBSCRIBE_ALL,
 * expired, ld_filter_subs_remove_peer, ld_filter_subs_free) with the data attached to it. It
 * must not call back into the table. */
typedef void (*ld_filter_subs_removed_fn)(const ld_peerid_t *peer, void *peer_data,
                                          void *user_data);

/* NULL cfg: the defaults; zero fields take their defaults too. NULL when out of memory. */
ld_filter_subs_t *ld_filter_subs_new(const ld_filter_subs_config_t *cfg);

/* Frees the table; the removal callback sees every remaining peer first. NULL is a no-op. */
void ld_filter_subs_free(ld_filter_subs_t *s);

void ld_filter_subs_set_on_removed(ld_filter_subs_t *s, ld_filter_subs_removed_fn fn,
                                   void *user_data);

/* Changes the TTL for every peer (tests and operators). */
void ld_filter_subs_set_ttl(ld_filter_subs_t *s, uint64_t ttl_ms);

/* ---- requests ------------------------------------------------------------------------------- */

/* Each returns the status code (200, 400, 404, 503) and, when `st` is not NULL, stores it with
 * its description ("OK" on success). `pubsub_topic` NULL means the request carried none;
 * `topics` holds `n` content topics (n may exceed LD_FILTER_MAX_CONTENT_TOPICS, then only the
 * count is looked at). Strings are copied. Allocation failure answers 503 "out of memory"
 * (criteria added before it stay). */
uint32_t ld_filter_subs_subscribe(ld_filter_subs_t *s, const ld_peerid_t *peer,
                                  const ld_filter_str_t *pubsub_topic,
                                  const ld_filter_str_t *topics, size_t n, uint64_t now,
                                  ld_filter_status_t *st);
uint32_t ld_filter_subs_unsubscribe(ld_filter_subs_t *s, const ld_peerid_t *peer,
                                    const ld_filter_str_t *pubsub_topic,
                                    const ld_filter_str_t *topics, size_t n, uint64_t now,
                                    ld_filter_status_t *st);
uint32_t ld_filter_subs_unsubscribe_all(ld_filter_subs_t *s, const ld_peerid_t *peer, uint64_t now,
                                        ld_filter_status_t *st);
uint32_t ld_filter_subs_ping(ld_filter_subs_t *s, const ld_peerid_t *peer, uint64_t now,
                             ld_filter_status_t *st);

/* Dispatches a decoded request by its type (see ld_filter_request_decode). */
uint32_t ld_filter_subs_handle(ld_filter_subs_t *s, const ld_peerid_t *peer,
                               const ld_filter_request_t *req, uint64_t now,
                               ld_filter_status_t *st);

/* ---- matching and maintenance --------------------------------------------------------------- */

/* Calls fn (may be NULL) for every live peer subscribed to (pubsub_topic, content_topic) and
 * returns how many there are. `fn` must not change the table. */
typedef void (*ld_filter_subs_match_fn)(const ld_peerid_t *peer, void *peer_data, void *user_data);
size_t ld_filter_subs_match(const ld_filter_subs_t *s, const char *pubsub_topic, size_t pubsub_len,
                            const char *content_topic, size_t content_len, uint64_t now,
                            ld_filter_subs_match_fn fn, void *user_data);

/* Removes every peer that is no longer live; returns how many went. */
size_t ld_filter_subs_expire(ld_filter_subs_t *s, uint64_t now);

/* Earliest time a peer stops being live (last_seen + ttl + 1), UINT64_MAX when empty. O(peers). */
uint64_t ld_filter_subs_next_expiry(const ld_filter_subs_t *s);

/* Removes `peer` and all its criteria. LD_ERR_NOT_FOUND when unknown. */
int ld_filter_subs_remove_peer(ld_filter_subs_t *s, const ld_peerid_t *peer);

/* ---- queries -------------------------------------------------------------------------------- */

/* True when `peer` is in the table and live at `now`. */
bool ld_filter_subs_is_subscribed(const ld_filter_subs_t *s, const ld_peerid_t *peer, uint64_t now);

/* True when `peer` is in the table (live or not yet purged). */
bool ld_filter_subs_has_peer(const ld_filter_subs_t *s, const ld_peerid_t *peer);

/* The owner's pointer attached to `peer` (NULL when none or unknown). */
void *ld_filter_subs_peer_data(const ld_filter_subs_t *s, const ld_peerid_t *peer);

/* Attaches `data` to a peer in the table. LD_ERR_NOT_FOUND when unknown. */
int ld_filter_subs_set_peer_data(ld_filter_subs_t *s, const ld_peerid_t *peer, void *data);

/* Peers in the table (live or not yet purged). */
size_t ld_filter_subs_peer_count(const ld_filter_subs_t *s);
/* Distinct criteria with at least one peer. */
size_t ld_filter_subs_criteria_count(const ld_filter_subs_t *s);
/* Criteria of `peer` (0 when unknown). */
size_t ld_filter_subs_peer_criteria_count(const ld_filter_subs_t *s, const ld_peerid_t *peer);

typedef struct ld_filter_subs_peer_info {
  const ld_peerid_t *id;
  uint64_t last_seen_ms;
  size_t n_criteria;
  void *data;
} ld_filter_subs_peer_info_t;

/* Calls fn for every peer (order unspecified); returns the count. `fn` must not change the
 * table; `info` is valid during the call. */
size_t ld_filter_subs_foreach_peer(const ld_filter_subs_t *s,
                                   void (*fn)(const ld_filter_subs_peer_info_t *info, void *ud),
                                   void *user_data);

/* Calls fn for every criterion of `peer` (in subscription order, as long as nothing was removed)
 * with views valid during the call; returns the count. */
size_t ld_filter_subs_peer_criteria(const ld_filter_subs_t *s, const ld_peerid_t *peer,
                                    void (*fn)(const ld_filter_str_t *pubsub_topic,
                                               const ld_filter_str_t *content_topic, void *ud),
                                    void *user_data);

#endif
