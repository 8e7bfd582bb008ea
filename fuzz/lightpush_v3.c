/* Fuzz target: the lightpush v3 decoders. The input is a frame body read both as a
 * LightPushRequest and as a LightPushResponse; whatever decodes must re-encode to a frame whose
 * body decodes to the same values, and every failure must come with a description. */
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

/* The body of the single frame in `out`. */
static void body_of(const ld_buf_t *out, const uint8_t **body, size_t *n) {
  if (ld_reqresp_read_frame(out->data, out->len, SIZE_MAX, body, n) != (int)out->len)
    abort();
}

static void check_request(const uint8_t *data, size_t size) {
  ld_lightpush_request_t req, again;
  ld_lightpush_request_init(&req);
  ld_lightpush_request_init(&again);
  char why[128] = "";
  if (ld_lightpush_request_decode(data, size, &req, why, sizeof why) != 0) {
    if (why[0] == '\0' || req.request_id != NULL || req.storage != NULL)
      abort();
    return;
  }
  if (req.request_id == NULL || req.request_id_len > LD_LIGHTPUSH_MAX_REQUEST_ID_LEN ||
      req.message.meta_len > LD_WAKU_MAX_META_LEN)
    abort();
  ld_buf_t out;
  ld_buf_init(&out);
  const uint8_t *body;
  size_t n;
  if (ld_lightpush_request_encode(&req, SIZE_MAX, &out) == 0) {
    body_of(&out, &body, &n);
    if (ld_lightpush_request_decode(body, n, &again, NULL, 0) != 0 ||
        !same_text(req.request_id, req.request_id_len, again.request_id, again.request_id_len) ||
        !same_text(req.pubsub_topic, req.pubsub_topic_len, again.pubsub_topic,
                   again.pubsub_topic_len) ||
        !ld_waku_message_equal(&req.message, &again.message))
      abort();
  }
  ld_buf_clear(&out);
  ld_lightpush_request_clear(&again);
  ld_lightpush_request_clear(&req);
}

static void check_response(const uint8_t *data, size_t size) {
  ld_lightpush_response_t resp, again;
  ld_lightpush_response_init(&resp);
  ld_lightpush_response_init(&again);
  char why[128] = "";
  if (ld_lightpush_response_decode(data, size, &resp, why, sizeof why) != 0) {
    if (why[0] == '\0' || resp.request_id != NULL)
      abort();
    return;
  }
  ld_buf_t out;
  ld_buf_init(&out);
  const uint8_t *body;
  size_t n;
  if (ld_lightpush_response_encode(&resp, &out) == 0) {
    body_of(&out, &body, &n);
    if (ld_lightpush_response_decode(body, n, &again, NULL, 0) != 0 ||
        !same_text(resp.request_id, resp.request_id_len, again.request_id, again.request_id_len) ||
        !same_text(resp.status_desc, resp.status_desc_len, again.status_desc,
                   again.status_desc_len) ||
        resp.status_code != again.status_code ||
        resp.has_relay_peer_count != again.has_relay_peer_count ||
        resp.relay_peer_count != again.relay_peer_count)
      abort();
  }
  ld_buf_clear(&out);
  ld_lightpush_response_clear(&again);
  ld_lightpush_response_clear(&resp);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  check_request(data, size);
  check_response(data, size);
  return 0;
}
