/* Fuzz target: the store-sync transfer frame decoder (a frame body on /vac/waku/transfer/1.0.0).
 * Whatever it accepts re-encodes to a frame that decodes to the same topic and message, and
 * yields an item. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "waku/sync/transfer.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  ld_sync_transfer_t t, again;
  ld_sync_transfer_init(&t);
  ld_sync_transfer_init(&again);
  char why[128] = "";
  if (ld_sync_transfer_decode(data, size, 0, &t, why, sizeof why) != 0) {
    if (t.pubsub_topic != NULL || why[0] == '\0')
      abort();
    return 0;
  }
  if (t.pubsub_topic == NULL || t.pubsub_topic_len == 0 ||
      t.pubsub_topic_len > LD_SYNC_TRANSFER_MAX_TOPIC_LEN ||
      strlen(t.pubsub_topic) != t.pubsub_topic_len)
    abort();
  ld_sync_id_t id;
  if (ld_sync_transfer_id(&t, &id) != 0 || id.time != t.message.timestamp)
    abort();
  ld_buf_t out;
  ld_buf_init(&out);
  if (ld_sync_transfer_encode(t.pubsub_topic, t.pubsub_topic_len, &t.message, SIZE_MAX, &out) !=
          0 ||
      ld_sync_transfer_decode(out.data, out.len, 0, &again, NULL, 0) != 0 ||
      again.pubsub_topic_len != t.pubsub_topic_len ||
      memcmp(again.pubsub_topic, t.pubsub_topic, t.pubsub_topic_len) != 0 ||
      !ld_waku_message_equal(&again.message, &t.message))
    abort();
  ld_buf_clear(&out);
  ld_sync_transfer_clear(&again);
  ld_sync_transfer_clear(&t);
  return 0;
}
