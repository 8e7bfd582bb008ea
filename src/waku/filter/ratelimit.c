#include "waku/filter/ratelimit.h"

#include <stdlib.h>

#include "base/hashmap.h"

/* Bucket levels are kept in units of 1/period_ms token: a request costs period_ms units, the
 * bucket holds volume × period_ms and gains `volume` units per millisecond. */
typedef struct bucket {
  uint64_t level;
  uint64_t last_ms;
} bucket_t;

struct ld_filter_ratelimit {
  uint64_t volume;
  uint64_t period_ms;
  size_t max_peers;
  ld_hashmap_t *buckets; /* peer ID bytes → bucket_t */
};

ld_filter_ratelimit_t *ld_filter_ratelimit_new(uint32_t volume, uint64_t period_ms,
                                               size_t max_peers) {
  ld_filter_ratelimit_t *rl = calloc(1, sizeof *rl);
  if (rl == NULL)
    return NULL;
  rl->volume = volume < LD_FILTER_RATE_LIMIT_MAX_VOLUME ? volume : LD_FILTER_RATE_LIMIT_MAX_VOLUME;
  rl->period_ms = period_ms < LD_FILTER_RATE_LIMIT_MAX_PERIOD_MS
                      ? period_ms
                      : LD_FILTER_RATE_LIMIT_MAX_PERIOD_MS;
  rl->max_peers = max_peers > 0 ? max_peers : LD_FILTER_RATE_LIMIT_MAX_PEERS;
  rl->buckets = ld_hashmap_new(16);
  if (rl->buckets == NULL) {
    free(rl);
    return NULL;
  }
  return rl;
}

static void free_value(void *v) {
  free(v);
}

void ld_filter_ratelimit_free(ld_filter_ratelimit_t *rl) {
  if (rl == NULL)
    return;
  ld_hashmap_free(rl->buckets, free_value);
  free(rl);
}

static bool unlimited(const ld_filter_ratelimit_t *rl) {
  return rl->volume == 0 || rl->period_ms == 0;
}

static uint64_t capacity(const ld_filter_ratelimit_t *rl) {
  return rl->volume * rl->period_ms;
}

static void refill(const ld_filter_ratelimit_t *rl, bucket_t *b, uint64_t now) {
  if (now <= b->last_ms)
    return;
  uint64_t elapsed = now - b->last_ms;
  uint64_t room = capacity(rl) - b->level;
  b->level = elapsed > room / rl->volume ? capacity(rl) : b->level + elapsed * rl->volume;
  b->last_ms = now;
}

void ld_filter_ratelimit_prune(ld_filter_ratelimit_t *rl, uint64_t now) {
  if (unlimited(rl))
    return;
  ld_hashmap_iter_t it = {0};
  const void *key;
  size_t klen;
  void *v;
  while (ld_hashmap_next(rl->buckets, &it, &key, &klen, &v)) {
    refill(rl, v, now);
    if (((bucket_t *)v)->level >= capacity(rl))
      free(ld_hashmap_remove(rl->buckets, key, klen));
  }
}

static bucket_t *bucket_of(ld_filter_ratelimit_t *rl, const ld_peerid_t *peer, uint64_t now) {
  bucket_t *b = ld_hashmap_get(rl->buckets, peer->bytes, peer->len);
  if (b != NULL)
    return b;
  if (ld_hashmap_size(rl->buckets) >= rl->max_peers)
    ld_filter_ratelimit_prune(rl, now);
  if (ld_hashmap_size(rl->buckets) >= rl->max_peers || (b = malloc(sizeof *b)) == NULL)
    return NULL;
  b->level = capacity(rl);
  b->last_ms = now;
  if (ld_hashmap_put(rl->buckets, peer->bytes, peer->len, b, NULL) != 0) {
    free(b);
    return NULL;
  }
  return b;
}

bool ld_filter_ratelimit_take(ld_filter_ratelimit_t *rl, const ld_peerid_t *peer, uint64_t now) {
  if (unlimited(rl))
    return true;
  bucket_t *b = bucket_of(rl, peer, now);
  if (b == NULL)
    return true;
  refill(rl, b, now);
  if (b->level < rl->period_ms)
    return false;
  b->level -= rl->period_ms;
  return true;
}

size_t ld_filter_ratelimit_count(const ld_filter_ratelimit_t *rl) {
  return ld_hashmap_size(rl->buckets);
}
