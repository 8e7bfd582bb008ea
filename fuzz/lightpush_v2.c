/* Fuzz target: the legacy lightpush PushRPC decoder. Whatever decodes must re-encode to a frame
 * whose body decodes to the same values; every failure must come with a description. */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "p2p/reqresp.h"
#include "waku/lightpush/codec.h"

static bool same_text(const char *a, size_t alen, const char *b, size_t blen) {
  if (a == NULL || b == NULL)
    return a == b;
  return alen == blen && memcmp(a, b, alen) == 0 && a[alen] == '\0' && b[blen] == '\0';
}

static bool same_rpc(const ld_lightpush_rpc_t *a, const ld_lightpush_rpc_t *b) {
  return same_text(a->request_id, a->request_id_len, b->request_id, b->request_id_len) &&
         a->has_request == b->has_request && a->has_response == b->has_response &&
         same_text(a->pubsub_topic, a->pubsub_topic_len, b->pubsub_topic, b->pubsub_topic_len) &&
         ld_waku_message_equal(&a->message, &b->message) && a->is_success == b->is_success &&
         same_text(a->info, a->info_len, b->info, b->info_len);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  ld_lightpush_rpc_t rpc, again;
  ld_lightpush_rpc_init(&rpc);
  ld_lightpush_rpc_init(&again);
  char why[128] = "";
  if (ld_lightpush_rpc_decode(data, size, &rpc, why, sizeof why) != 0) {
    if (why[0] == '\0' || rpc.request_id != NULL || rpc.has_request || rpc.has_response)
      abort();
    return 0;
  }
  if (rpc.request_id == NULL || (rpc.has_request && rpc.pubsub_topic == NULL))
    abort();
  ld_buf_t out;
  ld_buf_init(&out);
  const uint8_t *body;
  size_t n;
  if (ld_lightpush_rpc_encode(&rpc, SIZE_MAX, &out) == 0) {
    if (ld_reqresp_read_frame(out.data, out.len, SIZE_MAX, &body, &n) != (int)out.len ||
        ld_lightpush_rpc_decode(body, n, &again, NULL, 0) != 0 || !same_rpc(&rpc, &again))
      abort();
  }
  ld_buf_clear(&out);
  ld_lightpush_rpc_clear(&again);
  ld_lightpush_rpc_clear(&rpc);
  return 0;
}
