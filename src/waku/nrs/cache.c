/* Recent-message cache (see cache.h). Entries sit in a map by hash and on a list in insertion
 * order; relay feeds messages in about time order, so pruning walks the list from its head and
 * stops at the first entry that is new enough, after at most a few late ones. */
#include "waku/nrs/cache.h"

#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "base/hashmap.h"

typedef struct entry entry_t;
struct entry {
  entry_t *prev, *next;
  uint8_t hash[LD_WAKU_HASH_LEN];
  char *pubsub_topic;
  ld_waku_message_t msg;
  size_t bytes;
};

struct ld_nrs_cache {
  ld_hashmap_t *by_hash;
  entry_t *head, *tail; /* oldest first */
  size_t bytes, max_bytes;
};

/* How far past an entry that is new enough pruning keeps looking (messages arrive out of
 * timestamp order by up to the relay's jitter). */
#define PRUNE_LOOKAHEAD 256

ld_nrs_cache_t *ld_nrs_cache_new(size_t max_bytes) {
  ld_nrs_cache_t *c = calloc(1, sizeof *c);
  if (c == NULL)
    return NULL;
  c->by_hash = ld_hashmap_new(256);
  if (c->by_hash == NULL) {
    free(c);
    return NULL;
  }
  c->max_bytes = max_bytes != 0 ? max_bytes : LD_NRS_CACHE_DEFAULT_MAX_BYTES;
  return c;
}

static void entry_free(entry_t *e) {
  ld_waku_message_clear(&e->msg);
  free(e->pubsub_topic);
  free(e);
}

static void unlink_entry(ld_nrs_cache_t *c, entry_t *e) {
  if (e->prev != NULL)
    e->prev->next = e->next;
  else
    c->head = e->next;
  if (e->next != NULL)
    e->next->prev = e->prev;
  else
    c->tail = e->prev;
  ld_hashmap_remove(c->by_hash, e->hash, LD_WAKU_HASH_LEN);
  c->bytes -= e->bytes;
  entry_free(e);
}

void ld_nrs_cache_free(ld_nrs_cache_t *c) {
  if (c == NULL)
    return;
  for (entry_t *e = c->head, *next; e != NULL; e = next) {
    next = e->next;
    entry_free(e);
  }
  ld_hashmap_free(c->by_hash, NULL);
  free(c);
}

static size_t message_bytes(const char *pubsub_topic, const ld_waku_message_t *m) {
  return strlen(pubsub_topic) + m->payload_len + m->content_topic_len + m->meta_len + m->proof_len +
         sizeof(entry_t);
}

int ld_nrs_cache_put(ld_nrs_cache_t *c, const char *pubsub_topic, const ld_waku_message_t *msg,
                     const uint8_t hash[LD_WAKU_HASH_LEN]) {
  if (ld_hashmap_contains(c->by_hash, hash, LD_WAKU_HASH_LEN))
    return LD_ERR_EXISTS;
  size_t bytes = message_bytes(pubsub_topic, msg);
  if (bytes > c->max_bytes)
    return LD_ERR_TOO_LARGE;
  entry_t *e = calloc(1, sizeof *e);
  if (e == NULL)
    return LD_ERR_NOMEM;
  ld_waku_message_init(&e->msg);
  e->pubsub_topic = strdup(pubsub_topic);
  if (e->pubsub_topic == NULL || ld_waku_message_copy(&e->msg, msg) != 0 ||
      ld_hashmap_put(c->by_hash, hash, LD_WAKU_HASH_LEN, e, NULL) != 0) {
    entry_free(e);
    return LD_ERR_NOMEM;
  }
  memcpy(e->hash, hash, LD_WAKU_HASH_LEN);
  e->bytes = bytes;
  while (c->head != NULL && c->bytes + bytes > c->max_bytes)
    unlink_entry(c, c->head);
  e->prev = c->tail;
  if (c->tail != NULL)
    c->tail->next = e;
  else
    c->head = e;
  c->tail = e;
  c->bytes += bytes;
  return 0;
}

bool ld_nrs_cache_get(const ld_nrs_cache_t *c, const uint8_t hash[LD_WAKU_HASH_LEN],
                      const char **pubsub_topic, const ld_waku_message_t **msg) {
  const entry_t *e = ld_hashmap_get(c->by_hash, hash, LD_WAKU_HASH_LEN);
  if (e == NULL)
    return false;
  *pubsub_topic = e->pubsub_topic;
  *msg = &e->msg;
  return true;
}

size_t ld_nrs_cache_prune(ld_nrs_cache_t *c, int64_t before) {
  size_t removed = 0, fresh = 0;
  for (entry_t *e = c->head, *next; e != NULL && fresh < PRUNE_LOOKAHEAD; e = next) {
    next = e->next;
    if (e->msg.timestamp < before) {
      unlink_entry(c, e);
      removed++;
    } else {
      fresh++;
    }
  }
  return removed;
}

size_t ld_nrs_cache_size(const ld_nrs_cache_t *c) {
  return ld_hashmap_size(c->by_hash);
}

size_t ld_nrs_cache_bytes(const ld_nrs_cache_t *c) {
  return c->bytes;
}
