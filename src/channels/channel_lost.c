/* LD_EVENT_CHANNEL_LOST events (channels/channel_lost.h). */
#include "channels/channel_lost.h"

#include <string.h>

#include "base/hex.h"

void ld_channel_lost_dependency(ld_channel_event_t *ev, const char *channel_id,
                                const char *message_id, const char *sender_id, const uint8_t *hint,
                                size_t hint_len, char hint_text[LD_CHANNEL_LOST_HINT_TEXT]) {
  memset(ev, 0, sizeof *ev);
  hint_text[0] = '\0';
  if (hint != NULL && hint_len > 0 && hint_len <= (LD_CHANNEL_LOST_HINT_TEXT - 3) / 2) {
    memcpy(hint_text, "0x", 2);
    ld_hex_encode(hint, hint_len, hint_text + 2);
  }
  ev->channel_id = channel_id;
  ev->message_id = message_id;
  ev->sender_id = sender_id != NULL && sender_id[0] != '\0' ? sender_id : NULL;
  ev->message_hash = hint_text[0] != '\0' ? hint_text : NULL;
  ev->reason = LD_CHANNEL_LOST_IRRETRIEVABLE;
}

const char *ld_channel_lost_reason(ld_reassembly_loss_t why) {
  switch (why) {
  case LD_REASSEMBLY_LOST_EXPIRED:
    return LD_CHANNEL_LOST_EXPIRED;
  case LD_REASSEMBLY_LOST_EVICTED:
    return LD_CHANNEL_LOST_EVICTED;
  default:
    return LD_CHANNEL_LOST_HASH_MISMATCH;
  }
}

void ld_channel_lost_segments(ld_channel_event_t *ev, const char *channel_id, const char *sender,
                              const uint8_t hash[LD_SEGMENT_HASH_LEN], ld_reassembly_loss_t why,
                              char hash_text[LD_CHANNEL_LOST_HASH_TEXT]) {
  memset(ev, 0, sizeof *ev);
  ld_hex_encode(hash, LD_SEGMENT_HASH_LEN, hash_text);
  ev->channel_id = channel_id;
  ev->sender_id = sender;
  ev->payload_hash = hash_text;
  ev->reason = ld_channel_lost_reason(why);
}
