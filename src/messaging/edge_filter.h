/* Edge-mode subscriptions over filter (WAKU-P2P-RELIABILITY §4.3, logos-delivery's edge filter
 * maintenance): every subscribed content topic is kept subscribed at up to target_peers filter
 * service peers of its shard.
 *
 *   - Peers come from service_peers.h (LD_WAKU_FILTER_SUBSCRIBE_CODEC), the ones already used for
 *     that shard excluded. A new peer gets SUBSCRIBE for all the shard's content topics (in
 *     requests of at most LD_FILTER_MAX_CONTENT_TOPICS); it counts once every request succeeded.
 *   - A content topic added later is subscribed at the shard's peers; one removed is
 *     unsubscribed there (the answer is not awaited); the last one removed forgets the shard.
 *   - Each peer is pinged (SUBSCRIBER_PING) ping_interval_ms after it was subscribed or last
 *     answered a ping; at once when its connection goes away (LD_EVENT_CONNECTION); and
 *     ping_retry_ms after a failed ping. The ping deadline is the filter client's
 *     (ld_filter_client_config_t.ping_timeout_ms, 5 s by default). A ping answered
 *     404 (the service forgot us) re-subscribes that peer.
 *   - A failed SUBSCRIBE or LD_EDGE_FILTER_MAX_PING_FAILURES consecutive failed pings drop the
 *     peer, and the selector hears why (service_peers.h): a SUBSCRIBE refused or answered with a
 *     transient status (429, 5xx, a timeout) is transient, so the same peer may be picked again
 *     at a later tick, paced by the selector's back-off; a dial or protocol failure, or the
 *     repeated ping failures, mark it failed. Another peer is picked on the next maintenance
 *     tick (every tick_ms), as are peers for shards below target. A peer whose SUBSCRIBEs all
 *     succeeded is reported served (its transient count is reset).
 *   - Every push the node's filter client receives (LD_EVENT_FILTER_PUSH on the node's broker,
 *     node/node_filter.h) goes to on_push, whichever peer sent it (redundant peers push the same
 *     message: the caller de-duplicates, e.g. with recv_service.h).
 *
 * Requests reach a peer over its existing connection or a new dial (ld_service_peers_connect).
 *
 * Ownership: the node, the filter client and the selector are borrowed and must outlive the
 * edge filter. The client is the node's own (ld_node_filter_client): a switch carries one filter
 * client, which the node shares and frees with itself.
 *
 * Every call on the node's loop thread; callbacks come from the loop, never from inside these
 * calls. */
#ifndef LD_MESSAGING_EDGE_FILTER_H
#define LD_MESSAGING_EDGE_FILTER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "messaging/service_peers.h"
#include "node/node.h"
#include "p2p/peerid.h"
#include "waku/filter/client.h"

#define LD_EDGE_FILTER_DEFAULT_TARGET_PEERS 2
#define LD_EDGE_FILTER_MAX_TARGET_PEERS 8
#define LD_EDGE_FILTER_DEFAULT_PING_INTERVAL_MS (30u * 1000)
#define LD_EDGE_FILTER_DEFAULT_PING_RETRY_MS (5u * 1000)
#define LD_EDGE_FILTER_DEFAULT_TICK_MS 1000u
#define LD_EDGE_FILTER_MAX_PING_FAILURES 2
/* Shards with subscriptions at most. */
#define LD_EDGE_FILTER_MAX_SHARDS 1024
/* Content topics per shard at most. */
#define LD_EDGE_FILTER_MAX_TOPICS 1024

typedef struct ld_edge_filter_config {
  uint32_t target_peers;     /* per shard, 1..LD_EDGE_FILTER_MAX_TARGET_PEERS; default 2 */
  uint32_t ping_interval_ms; /* default 30 s */
  uint32_t ping_retry_ms;    /* after a failed ping; default 5 s */
  uint32_t tick_ms;          /* maintenance period; default 1 s */
} ld_edge_filter_config_t;

void ld_edge_filter_config_default(ld_edge_filter_config_t *cfg);

typedef struct ld_edge_filter_callbacks {
  /* A pushed message (views valid during the call only). Required. */
  void (*on_push)(const ld_filter_push_t *push, void *user_data);
  /* The number of distinct peers holding all of some shard's subscriptions changed (health's
   * filter count). Optional. */
  void (*on_peers_changed)(size_t n_peers, void *user_data);
} ld_edge_filter_callbacks_t;

typedef struct ld_edge_filter ld_edge_filter_t;

/* Creates the edge filter on a started node. `cfg` copied (NULL: defaults; zero fields take
 * their defaults), `cb` copied. NULL with *err (may be NULL) set: LD_ERR_INVALID_ARG (NULL
 * arguments, no on_push, target above the maximum), LD_ERR_STATE (node not started),
 * LD_ERR_NOMEM. */
ld_edge_filter_t *ld_edge_filter_new(ld_node_t *node, ld_filter_client_t *client,
                                     ld_service_peers_t *peers, const ld_edge_filter_config_t *cfg,
                                     const ld_edge_filter_callbacks_t *cb, void *user_data,
                                     int *err);

/* Stops everything at once: the timer, dials, pending answers (ignored when they come back) and
 * the push listener; no callback after it returns. Nothing is unsubscribed at the service peers
 * (their subscriptions time out). Memory still referenced by the loop or the filter client is
 * reclaimed when they let go of it (at the latest when the switch closes). NULL is a no-op. */
void ld_edge_filter_free(ld_edge_filter_t *ef);

/* Keeps `content_topic` subscribed on `pubsub_topic` (both NUL-terminated, copied; the caller
 * computes the shard, e.g. ld_recv_shard_of). Already subscribed is 0. Peers are picked on the
 * next tick; a shard that has peers subscribes them now. Errors: LD_ERR_INVALID_ARG (NULL or
 * empty), LD_ERR_LIMIT (LD_EDGE_FILTER_MAX_SHARDS / _MAX_TOPICS), LD_ERR_NOMEM. */
int ld_edge_filter_subscribe(ld_edge_filter_t *ef, const char *pubsub_topic,
                             const char *content_topic);

/* Stops keeping `content_topic` on `pubsub_topic` and sends UNSUBSCRIBE to the shard's peers.
 * LD_ERR_NOT_FOUND when not subscribed, LD_ERR_INVALID_ARG. */
int ld_edge_filter_unsubscribe(ld_edge_filter_t *ef, const char *pubsub_topic,
                               const char *content_topic);

bool ld_edge_filter_subscribed(const ld_edge_filter_t *ef, const char *pubsub_topic,
                               const char *content_topic);

/* Peers whose SUBSCRIBE for the shard all succeeded: copies up to `max` IDs and returns how many
 * there are (NULL pubsub_topic: distinct peers over all shards). */
size_t ld_edge_filter_peers(const ld_edge_filter_t *ef, const char *pubsub_topic, ld_peerid_t *out,
                            size_t max);

/* Counters since creation, for tests and metrics. */
typedef struct ld_edge_filter_stats {
  uint64_t subscribes;         /* SUBSCRIBE requests answered 200 */
  uint64_t subscribe_failures; /* SUBSCRIBE requests failed (dial, no answer, or not 200) */
  uint64_t pings;              /* pings answered 200 */
  uint64_t ping_failures;
  uint64_t peers_dropped;
  uint64_t pushes;
} ld_edge_filter_stats_t;

void ld_edge_filter_get_stats(const ld_edge_filter_t *ef, ld_edge_filter_stats_t *out);

#endif
