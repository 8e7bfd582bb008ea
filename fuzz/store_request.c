/* Fuzz target: the store v3 request decoder (a frame body, as a server reads it). Whatever it
 * accepts must stay within the caps and re-encode to a request that decodes to the same query. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "p2p/reqresp.h"
#include "waku/store/codec.h"

static bool same_string(const char *a, const char *b) {
  if (a == NULL || b == NULL)
    return a == b;
  return strcmp(a, b) == 0;
}

static bool same_query(const ld_store_query_t *a, const ld_store_query_t *b) {
  if (!same_string(a->request_id, b->request_id) || a->include_data != b->include_data ||
      !same_string(a->pubsub_topic, b->pubsub_topic) ||
      a->n_content_topics != b->n_content_topics || a->n_hashes != b->n_hashes ||
      a->has_time_start != b->has_time_start || a->has_time_end != b->has_time_end ||
      (a->has_time_start && a->time_start != b->time_start) ||
      (a->has_time_end && a->time_end != b->time_end) || a->has_cursor != b->has_cursor ||
      memcmp(a->cursor, b->cursor, LD_WAKU_HASH_LEN) != 0 || a->forward != b->forward ||
      a->has_limit != b->has_limit || a->limit != b->limit)
    return false;
  for (size_t i = 0; i < a->n_content_topics; i++)
    if (!same_string(a->content_topics[i], b->content_topics[i]))
      return false;
  for (size_t i = 0; i < a->n_hashes; i++)
    if (memcmp(a->hashes[i], b->hashes[i], LD_WAKU_HASH_LEN) != 0)
      return false;
  return true;
}

static void check_caps(const ld_store_query_t *q) {
  if (q->request_id == NULL || strlen(q->request_id) > LD_STORE_MAX_REQUEST_ID_LEN ||
      q->n_content_topics > LD_STORE_MAX_CONTENT_TOPICS || q->n_hashes > LD_STORE_MAX_HASHES ||
      (q->n_hashes > 0 && q->hashes == NULL) ||
      (q->n_content_topics > 0 && q->content_topics == NULL))
    abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  ld_store_query_t q, again;
  ld_store_query_init(&q);
  ld_store_query_init(&again);
  const char *why = NULL;
  if (ld_store_decode_request(data, size, &q, &why) != 0) {
    if (why == NULL || q.storage != NULL)
      abort();
    return 0;
  }
  check_caps(&q);
  ld_buf_t out;
  ld_buf_init(&out);
  if (ld_store_encode_request(&q, &out) != 0)
    abort(); /* every accepted query fits the encoder's caps */
  const uint8_t *body;
  size_t n;
  if (ld_reqresp_read_frame(out.data, out.len, SIZE_MAX, &body, &n) != (int)out.len ||
      ld_store_decode_request(body, n, &again, NULL) != 0 || !same_query(&q, &again) ||
      !again.has_forward)
    abort();
  ld_buf_clear(&out);
  ld_store_query_clear(&again);
  ld_store_query_clear(&q);
  return 0;
}
