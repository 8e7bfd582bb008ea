/* The LD_EVENT_CHANNEL_LOST event of the channel layer (channels/channels.h): what another
 * participant sent and this one will never deliver, either a causal dependency that SDS declared
 * irretrievably lost or a LIP-243 segment set that will never reassemble.
 *
 * Pure functions: they fill an event whose texts point into `ev` and the caller's buffers. */
#ifndef LD_CHANNELS_CHANNEL_LOST_H
#define LD_CHANNELS_CHANNEL_LOST_H

#include <stddef.h>
#include <stdint.h>

#include "channels/channels.h"
#include "channels/segment.h"

/* "0x" + 64 hex digits of a Waku message hash (or of a longer hint, cut), NUL. */
#define LD_CHANNEL_LOST_HINT_TEXT (2 + 2 * 64 + 1)
/* 64 hex digits of a keccak256 digest, NUL. */
#define LD_CHANNEL_LOST_HASH_TEXT (2 * LD_SEGMENT_HASH_LEN + 1)

/* The event of dependency `message_id` (sent by `sender_id`, NULL when the history entry named
 * none) declared lost; `hint` / `hint_len` its retrieval hint (none: NULL / 0), written to
 * `hint_text` as "0x…" (a hint longer than 64 bytes is left out). */
void ld_channel_lost_dependency(ld_channel_event_t *ev, const char *channel_id,
                                const char *message_id, const char *sender_id, const uint8_t *hint,
                                size_t hint_len, char hint_text[LD_CHANNEL_LOST_HINT_TEXT]);

/* The event of `sender`'s segment set `hash` dropped for `why`; the hash is written to
 * `hash_text`. */
void ld_channel_lost_segments(ld_channel_event_t *ev, const char *channel_id, const char *sender,
                              const uint8_t hash[LD_SEGMENT_HASH_LEN], ld_reassembly_loss_t why,
                              char hash_text[LD_CHANNEL_LOST_HASH_TEXT]);

/* The LD_CHANNEL_LOST_* reason of a dropped segment set. */
const char *ld_channel_lost_reason(ld_reassembly_loss_t why);

#endif
