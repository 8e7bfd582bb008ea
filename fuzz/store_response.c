/* Fuzz target: the store v3 response decoder (a frame body, as a client reads it). Whatever it
 * accepts must stay within the caps and re-encode to a response that decodes to the same one. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "p2p/reqresp.h"
#include "waku/store/codec.h"

static bool same_entry(const ld_store_entry_t *a, const ld_store_entry_t *b) {
  if (memcmp(a->hash, b->hash, LD_WAKU_HASH_LEN) != 0)
    return false;
  if (a->pubsub_topic == NULL || b->pubsub_topic == NULL)
    return a->pubsub_topic == b->pubsub_topic;
  return strcmp(a->pubsub_topic, b->pubsub_topic) == 0 &&
         ld_waku_message_equal(&a->message, &b->message);
}

static bool same_response(const ld_store_response_t *a, const ld_store_response_t *b) {
  if (strcmp(a->request_id, b->request_id) != 0 || a->status_code != b->status_code ||
      strcmp(a->status_desc, b->status_desc) != 0 || a->n_entries != b->n_entries ||
      a->has_cursor != b->has_cursor ||
      (a->has_cursor && memcmp(a->cursor, b->cursor, LD_WAKU_HASH_LEN) != 0))
    return false;
  for (size_t i = 0; i < a->n_entries; i++)
    if (!same_entry(&a->entries[i], &b->entries[i]))
      return false;
  return true;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  ld_store_response_t res, again;
  ld_store_response_init(&res);
  ld_store_response_init(&again);
  if (ld_store_decode_response(data, size, 0, &res) != 0) {
    if (res.storage != NULL || res.n_entries != 0)
      abort();
    return 0;
  }
  if (res.request_id == NULL || res.status_desc == NULL ||
      res.n_entries > LD_STORE_MAX_RESPONSE_ENTRIES || (res.n_entries > 0 && res.entries == NULL))
    abort();
  ld_buf_t out;
  ld_buf_init(&out);
  if (ld_store_encode_response(&res, &out) != 0)
    abort();
  const uint8_t *body;
  size_t n;
  /* nwaku-style re-encoding writes every message field, so allow it to grow past the cap */
  if (ld_reqresp_read_frame(out.data, out.len, SIZE_MAX, &body, &n) != (int)out.len ||
      ld_store_decode_response(body, n, SIZE_MAX, &again) != 0 || !same_response(&res, &again))
    abort();
  ld_buf_clear(&out);
  ld_store_response_clear(&again);
  ld_store_response_clear(&res);
  return 0;
}
