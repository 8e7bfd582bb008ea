/* The store fallback of SDS repair: a missing dependency that peers did not repair within the
 * SDS-R window (the engine's FETCH events, channels/sds.h) is fetched from a store node by its
 * retrieval hint, the Waku message hash, through the messaging layer's internal fetch
 * (messaging/store_fetch.h: store v3 by message hash, the reduced store's key-value function).
 * What the store returns goes into the channels' receive path exactly as a message from relay
 * (ld_channels_receive_fetched), so SDS delivers it and whatever waited for it. A store that
 * does not have it, refuses (key-value off) or cannot be reached changes nothing: the engine
 * asks again at its fetch interval and, past its lost timeout, declares the dependency lost.
 *
 * Limits: at most LD_CHANNEL_FETCH_MAX_IN_FLIGHT fetches at a time, one per hash (a hint already
 * being fetched is not asked again); beyond, the hint is skipped (counted) until the engine's
 * next FETCH. A hint that is not a 32-byte hash is skipped (counted).
 *
 * Threading: the node's loop thread only. */
#ifndef LD_CHANNELS_CHANNEL_FETCH_H
#define LD_CHANNELS_CHANNEL_FETCH_H

#include <stddef.h>
#include <stdint.h>

#include "channels/channels.h"
#include "messaging/messaging.h"

#define LD_CHANNEL_FETCH_MAX_IN_FLIGHT 32u

typedef struct ld_channel_fetch ld_channel_fetch_t;

typedef struct ld_channel_fetch_stats {
  uint64_t requested; /* fetches started */
  uint64_t fetched;   /* messages the store returned and the channels received */
  uint64_t failed;    /* fetches that ended with an error (no store peer, refused, dial) */
  uint64_t skipped;   /* hints not fetched: not a hash, already in flight, over the limit */
} ld_channel_fetch_stats_t;

/* Fetches the message of `hint` for channel manager `c` above `m`; creates *f on first use
 * (NULL on failure: the hint is skipped). Results reach ld_channels_receive_fetched(c, …) from
 * the loop. */
void ld_channel_fetch_hint(ld_channel_fetch_t **f, ld_channels_t *c, ld_messaging_t *m,
                           const char *channel_id, const uint8_t *hint, size_t hint_len);

/* Hands a message a store returned to the channels of `c` on its content topic, as relay's
 * would be (defined in channels.c). */
void ld_channels_receive_fetched(ld_channels_t *c, const char *pubsub_topic,
                                 const uint8_t hash[LD_WAKU_HASH_LEN],
                                 const ld_waku_message_t *msg);

/* Cancels every fetch under way (no result is delivered afterwards) and frees. NULL: no-op. */
void ld_channel_fetch_free(ld_channel_fetch_t *f);

/* Counters; zeros when `f` is NULL. */
void ld_channel_fetch_get_stats(const ld_channel_fetch_t *f, ld_channel_fetch_stats_t *out);

#endif
