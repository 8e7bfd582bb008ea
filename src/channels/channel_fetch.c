#include "channels/channel_fetch.h"

#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "base/log.h"
#include "messaging/store_fetch.h"

#define TOPIC "channels"

typedef struct in_flight {
  struct ld_channel_fetch *owner;
  uint8_t hash[LD_WAKU_HASH_LEN];
  bool used;
} in_flight_t;

struct ld_channel_fetch {
  ld_channels_t *channels;
  ld_messaging_fetcher_t *fetcher;
  in_flight_t slots[LD_CHANNEL_FETCH_MAX_IN_FLIGHT];
  ld_channel_fetch_stats_t stats;
};

static ld_channel_fetch_t *fetch_new(ld_channels_t *c, ld_messaging_t *m) {
  ld_channel_fetch_t *f = calloc(1, sizeof *f);
  if (f == NULL)
    return NULL;
  f->channels = c;
  if ((f->fetcher = ld_messaging_fetcher_new(ld_messaging_node(m))) == NULL) {
    free(f);
    return NULL;
  }
  for (size_t i = 0; i < LD_CHANNEL_FETCH_MAX_IN_FLIGHT; i++)
    f->slots[i].owner = f;
  return f;
}

void ld_channel_fetch_free(ld_channel_fetch_t *f) {
  if (f == NULL)
    return;
  ld_messaging_fetcher_free(f->fetcher);
  free(f);
}

void ld_channel_fetch_get_stats(const ld_channel_fetch_t *f, ld_channel_fetch_stats_t *out) {
  if (f == NULL)
    memset(out, 0, sizeof *out);
  else
    *out = f->stats;
}

static void on_fetched(const char *pubsub_topic, const uint8_t hash[LD_WAKU_HASH_LEN],
                       const ld_waku_message_t *msg, void *ud) {
  in_flight_t *slot = ud;
  slot->owner->stats.fetched++;
  ld_channels_receive_fetched(slot->owner->channels, pubsub_topic, hash, msg);
}

static void on_done(int err, size_t found, void *ud) {
  in_flight_t *slot = ud;
  slot->used = false;
  if (err != 0) {
    slot->owner->stats.failed++;
    LD_DEBUG(TOPIC, "store fetch by hash failed: %s", ld_strerror(err));
  } else if (found == 0) {
    LD_DEBUG(TOPIC, "store fetch by hash: the store does not have it");
  }
}

/* The slot to use for `hash`, or NULL when it is in flight already or every slot is busy. */
static in_flight_t *free_slot(ld_channel_fetch_t *f, const uint8_t *hash) {
  in_flight_t *free_one = NULL;
  for (size_t i = 0; i < LD_CHANNEL_FETCH_MAX_IN_FLIGHT; i++) {
    in_flight_t *s = &f->slots[i];
    if (s->used && memcmp(s->hash, hash, LD_WAKU_HASH_LEN) == 0)
      return NULL;
    if (!s->used && free_one == NULL)
      free_one = s;
  }
  return free_one;
}

void ld_channel_fetch_hint(ld_channel_fetch_t **fp, ld_channels_t *c, ld_messaging_t *m,
                           const char *channel_id, const uint8_t *hint, size_t hint_len) {
  if (*fp == NULL && (*fp = fetch_new(c, m)) == NULL)
    return;
  ld_channel_fetch_t *f = *fp;
  in_flight_t *slot = hint_len == LD_WAKU_HASH_LEN ? free_slot(f, hint) : NULL;
  if (slot == NULL) {
    f->stats.skipped++;
    return;
  }
  memcpy(slot->hash, hint, LD_WAKU_HASH_LEN);
  int rc = ld_messaging_fetch_by_hash(f->fetcher, (const uint8_t(*)[LD_WAKU_HASH_LEN])slot->hash, 1,
                                      on_fetched, on_done, slot);
  if (rc != 0) {
    f->stats.failed++;
    LD_DEBUG(TOPIC, "channel %s: no store fetch: %s", channel_id, ld_strerror(rc));
    return;
  }
  slot->used = true;
  f->stats.requested++;
}
