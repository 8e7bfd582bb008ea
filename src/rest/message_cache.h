/* The relay message cache behind GET /relay/v1/messages/{pubsubTopic} and
 * GET /relay/v1/auto/messages/{contentTopic}, with nwaku's MessageCache semantics:
 *
 * - It caches a set of pubsub topics and a set of content topics (the node's --shard and
 *   --content-topic topics at start, plus the ones subscribed over REST).
 * - A message is kept when its pubsub topic or its content topic is cached; the other topic then
 *   becomes cached as well (so the content topic of a message seen on a cached shard can be read
 *   through the autosharding path, as with nwaku).
 * - Adding is idempotent: a message equal to a kept one (same seven values) is not kept twice.
 * - At most `capacity` messages are kept (nwaku's --rest-relay-cache-capacity, 50 by default);
 *   when full, the message with the oldest timestamp (the earliest received among equals) goes.
 * - Taking the messages of a topic returns them in arrival order and removes them.
 * - Forgetting a topic drops the messages that no longer have a cached topic.
 *
 * Pure data structure; one thread at a time. */
#ifndef LD_REST_MESSAGE_CACHE_H
#define LD_REST_MESSAGE_CACHE_H

#include <stdbool.h>
#include <stddef.h>

#include "rest/route.h"
#include "waku/core/message.h"

#define LD_REST_CACHE_DEFAULT_CAPACITY 50
/* Cached topics of each kind. */
#define LD_REST_CACHE_MAX_TOPICS 1024
/* Longest topic kept, in bytes. */
#define LD_REST_CACHE_MAX_TOPIC_LEN LD_ROUTE_MAX_PATH /* any topic a request path can carry */

typedef enum ld_rest_topic_kind {
  LD_REST_PUBSUB_TOPIC,
  LD_REST_CONTENT_TOPIC,
} ld_rest_topic_kind_t;

typedef struct ld_rest_cache ld_rest_cache_t;

/* `capacity` 0 means LD_REST_CACHE_DEFAULT_CAPACITY. NULL when out of memory. */
ld_rest_cache_t *ld_rest_cache_new(size_t capacity);
void ld_rest_cache_free(ld_rest_cache_t *c);

/* Caches a topic (`len` bytes, copied). Already cached: 0. LD_ERR_LIMIT (LD_REST_CACHE_MAX_TOPICS
 * or a topic over LD_REST_CACHE_MAX_TOPIC_LEN bytes), LD_ERR_NOMEM. */
int ld_rest_cache_subscribe(ld_rest_cache_t *c, ld_rest_topic_kind_t kind, const char *topic,
                            size_t len);

/* Forgets a topic and drops the messages left without a cached topic. Unknown topic: no-op. */
void ld_rest_cache_unsubscribe(ld_rest_cache_t *c, ld_rest_topic_kind_t kind, const char *topic,
                               size_t len);

bool ld_rest_cache_cached(const ld_rest_cache_t *c, ld_rest_topic_kind_t kind, const char *topic,
                          size_t len);

/* Offers a message received (or published) on `pubsub_topic` (NUL-terminated); it is deep-copied
 * when kept. Returns 1 when kept, 0 when ignored (no cached topic, a duplicate, or a topic over
 * LD_REST_CACHE_MAX_TOPIC_LEN), LD_ERR_NOMEM. */
int ld_rest_cache_add(ld_rest_cache_t *c, const char *pubsub_topic, const ld_waku_message_t *msg);

/* Moves the messages of a cached topic, in arrival order, into a new array *out of *n owned
 * messages (NULL when none); the caller clears each message and frees the array. Returns 0, or
 * LD_ERR_NOT_FOUND when the topic is not cached (nothing moved), LD_ERR_NOMEM. */
int ld_rest_cache_take(ld_rest_cache_t *c, ld_rest_topic_kind_t kind, const char *topic, size_t len,
                       ld_waku_message_t **out, size_t *n);

/* Messages currently kept. */
size_t ld_rest_cache_count(const ld_rest_cache_t *c);

#endif
