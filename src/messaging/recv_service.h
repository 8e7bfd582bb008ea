/* The receive core of the Messaging API (reliability-and-api.md §5.5), sans I/O: which content
 * topics are subscribed and on which shard, which arriving messages are delivered, and which time
 * ranges must be recovered after the node was offline. The caller (the messaging glue) feeds it
 * messages and connection-status changes and runs the recovery ranges it hands out through the
 * reliability interface.
 *
 * Shards: with autosharding (num_shards > 0) a content topic lives on
 * /waku/2/rs/<cluster>/<autoshard(topic)>; with static sharding (num_shards 0) every content
 * topic lives on the node's static shard /waku/2/rs/<cluster>/<static_shard>.
 *
 * Delivery (ld_recv_seen): a message is delivered when its content topic is subscribed and lives
 * on the pubsub topic it arrived on, and its hash was not seen within the de-duplication window;
 * every delivered hash is remembered with the message's own timestamp (its arrival time when the
 * message carries none). Entries older than now − dedup_window_ms are pruned every
 * LD_RECV_PRUNE_INTERVAL_MS; at most max_seen entries are kept (the oldest remembered go first).
 *
 * Recovery: the core starts offline, as if the status had gone Disconnected at creation. Going
 * Disconnected stamps the start of the missed interval (unless an earlier interval is still
 * unrecovered, which keeps its older start); coming back (any other status) makes a recovery
 * due. ld_recv_recovery_poll then hands out one recovery: for every shard with subscribed
 * content topics, the range [start − LD_RECV_RECOVERY_MARGIN_MS, now + LD_RECV_RECOVERY_MARGIN_MS]
 * with that shard's content topics (split in groups of at most LD_RECV_RANGE_MAX_TOPICS, one range
 * per group). At most one recovery is in flight; ld_recv_recovery_done ends it: on success the
 * start becomes the range's end (or the time the status went Disconnected again meanwhile); on
 * failure the same interval is due again LD_RECV_RECOVERY_RETRY_MS later while online.
 *
 * Times (`now_ms`, range bounds) are Unix-epoch wall-clock milliseconds supplied by the caller,
 * since they are compared with message timestamps and store time ranges (store queries take
 * nanoseconds: multiply by 1,000,000). Subscribing, remembering a hash and handing out a
 * recovery allocate; nothing else does. No global state; one thread at a time (the node's
 * loop). */
#ifndef LD_MESSAGING_RECV_SERVICE_H
#define LD_MESSAGING_RECV_SERVICE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "messaging/messaging.h"
#include "waku/core/message.h"
#include "waku/core/topics.h"

/* Pruning period of the de-duplication list (logos-delivery PruneOldMsgsPeriod). */
#define LD_RECV_PRUNE_INTERVAL_MS (60u * 1000)
/* Remembered hashes at most, by default. */
#define LD_RECV_DEFAULT_MAX_SEEN 100000u
/* Added before the start and after the end of a recovery range. */
#define LD_RECV_RECOVERY_MARGIN_MS 5000u
/* A failed recovery is tried again this long after it failed. */
#define LD_RECV_RECOVERY_RETRY_MS (30u * 1000)
/* Content topics per recovery range at most (a store query with a cursor accepts 10). */
#define LD_RECV_RANGE_MAX_TOPICS 10u
/* Longest content topic accepted by subscribe, in bytes without the NUL. */
#define LD_RECV_CONTENT_TOPIC_MAX 1024u

typedef struct ld_recv_config {
  uint16_t cluster_id;
  uint32_t num_shards;      /* autosharding shard count; 0 = static sharding */
  uint16_t static_shard;    /* the shard of every content topic with static sharding */
  uint32_t dedup_window_ms; /* default LD_MESSAGING_DEFAULT_DEDUP_WINDOW_MS */
  size_t max_seen;          /* default LD_RECV_DEFAULT_MAX_SEEN */
  size_t max_topics;        /* subscribed content topics; default LD_MESSAGING_MAX_CONTENT_TOPICS */
} ld_recv_config_t;

/* Cluster 0, autosharding over LD_WAKU_DEFAULT_NUM_SHARDS (1), static shard 0, the defaults
 * above. */
void ld_recv_config_default(ld_recv_config_t *cfg);

typedef struct ld_recv ld_recv_t;

/* Creates the core (configuration copied; zero fields take their defaults except cluster_id,
 * num_shards and static_shard). `now_ms` starts the first missed interval. NULL when out of
 * memory or with num_shards above LD_WAKU_MAX_SHARDS_PER_CLUSTER. */
ld_recv_t *ld_recv_new(const ld_recv_config_t *cfg, uint64_t now_ms);

/* Frees the core and the recovery in flight, if any. NULL is a no-op. */
void ld_recv_free(ld_recv_t *r);

/* ---- subscriptions -------------------------------------------------------------------------- */

/* What a subscription change did. */
typedef struct ld_recv_change {
  char pubsub_topic[LD_WAKU_PUBSUB_TOPIC_MAX_LEN + 1]; /* the content topic's shard */
  bool changed;    /* subscribe: newly subscribed; unsubscribe: it was subscribed */
  bool shard_edge; /* subscribe: first content topic on that shard; unsubscribe: the last one
                      left it (the caller joins or leaves the shard) */
} ld_recv_change_t;

/* The shard of `content_topic` (NUL-terminated) as "/waku/2/rs/<cluster>/<shard>" in `out`
 * (room for LD_WAKU_PUBSUB_TOPIC_MAX_LEN + 1). Returns 0, LD_ERR_BAD_CONTENT_TOPIC (not a
 * /app/version/name/encoding topic, or longer than LD_RECV_CONTENT_TOPIC_MAX),
 * LD_ERR_UNSUPPORTED (generation > 0 with autosharding), LD_ERR_INVALID_ARG. `why` (may be NULL)
 * gets the topic parser's reason. */
int ld_recv_shard_of(const ld_recv_t *r, const char *content_topic, char *out,
                     ld_topic_error_t *why);

/* Subscribes `content_topic`. Already subscribed is 0 with change->changed false. Errors as
 * ld_recv_shard_of, and LD_ERR_LIMIT (max_topics), LD_ERR_NOMEM. `change` may be NULL. */
int ld_recv_subscribe(ld_recv_t *r, const char *content_topic, ld_recv_change_t *change);

/* Unsubscribes `content_topic`: 0, or LD_ERR_NOT_FOUND when it is not subscribed,
 * LD_ERR_INVALID_ARG. `change` may be NULL. */
int ld_recv_unsubscribe(ld_recv_t *r, const char *content_topic, ld_recv_change_t *change);

bool ld_recv_subscribed(const ld_recv_t *r, const char *content_topic);

/* Number of subscribed content topics. */
size_t ld_recv_topic_count(const ld_recv_t *r);

/* Copies up to `max` pubsub topics with subscribed content topics (pointers into the core, valid
 * until the next subscribe, unsubscribe or free), in the order they were first subscribed, and
 * returns how many there are. */
size_t ld_recv_shards(const ld_recv_t *r, const char **out, size_t max);

/* Copies up to `max` content topics subscribed on `pubsub_topic` (pointers valid as above), in
 * subscription order, and returns how many there are. */
size_t ld_recv_shard_topics(const ld_recv_t *r, const char *pubsub_topic, const char **out,
                            size_t max);

/* ---- delivery ------------------------------------------------------------------------------- */

typedef enum ld_recv_verdict {
  LD_RECV_DELIVER = 0,    /* report it: remembered now */
  LD_RECV_DUPLICATE,      /* seen within the window */
  LD_RECV_NOT_SUBSCRIBED, /* content topic not subscribed on that shard */
} ld_recv_verdict_t;

/* Decides on a message that arrived on `pubsub_topic` (NUL-terminated) with its deterministic
 * `hash` (on that pubsub topic). Prunes first when a pruning is due. Out of memory while
 * remembering still delivers (the hash is then not remembered). */
ld_recv_verdict_t ld_recv_seen(ld_recv_t *r, const char *pubsub_topic, const ld_waku_message_t *msg,
                               const uint8_t hash[LD_WAKU_HASH_LEN], uint64_t now_ms);

/* True when `hash` is remembered (the recovery's missing set is the store's hashes minus
 * these). */
bool ld_recv_known(const ld_recv_t *r, const uint8_t hash[LD_WAKU_HASH_LEN]);

/* Number of remembered hashes. */
size_t ld_recv_seen_count(const ld_recv_t *r);

/* Prunes when a pruning is due at now_ms (every LD_RECV_PRUNE_INTERVAL_MS); returns the number
 * of entries removed. Call it from a periodic tick. */
size_t ld_recv_tick(ld_recv_t *r, uint64_t now_ms);

/* ---- recovery ------------------------------------------------------------------------------- */

/* One query to run: hashes of `pubsub_topic` messages on `content_topics` within
 * [start_ms, end_ms] (inclusive, wall-clock ms). */
typedef struct ld_recv_range {
  const char *pubsub_topic;
  const char *const *content_topics;
  size_t n_content_topics;
  uint64_t start_ms;
  uint64_t end_ms;
} ld_recv_range_t;

/* A recovery handed out by ld_recv_recovery_poll. Owned by the core; every pointer in it stays
 * valid (whatever happens to the subscriptions) until ld_recv_recovery_done or ld_recv_free. */
typedef struct ld_recv_recovery {
  const ld_recv_range_t *ranges;
  size_t n_ranges; /* ≥ 1 */
  uint64_t start_ms;
  uint64_t end_ms;
  void *storage_; /* private */
} ld_recv_recovery_t;

/* Feeds the connection status at now_ms. Returns true when this change made a recovery due. */
bool ld_recv_set_status(ld_recv_t *r, ld_connection_status_t status, uint64_t now_ms);

/* The recovery to run now, or NULL: none due, offline, one in flight, retry time not reached, or
 * out of memory (it stays due). Call it after ld_recv_set_status and from a periodic tick (a
 * retry, or a recovery that became due while another was in flight, waits for a poll). A due
 * recovery with no subscribed content topic completes at once (the start becomes now_ms) and yields
 * NULL. */
const ld_recv_recovery_t *ld_recv_recovery_poll(ld_recv_t *r, uint64_t now_ms);

/* Ends the recovery in flight (`rec` is the pointer poll returned; it is invalid afterwards).
 * `ok`: every range was queried and the missing messages fetched. */
void ld_recv_recovery_done(ld_recv_t *r, const ld_recv_recovery_t *rec, bool ok, uint64_t now_ms);

/* True while a recovery is handed out and not done. */
bool ld_recv_recovery_in_flight(const ld_recv_t *r);

/* The start of the interval not yet recovered (wall-clock ms, before the margin). */
uint64_t ld_recv_recovery_start(const ld_recv_t *r);

#endif
