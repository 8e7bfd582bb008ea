/* Fuzz target: what a filter client reads from a push stream. The input is the stream's bytes:
 * length-prefixed frames one after the other, each a MessagePush whose WakuMessage is decoded and
 * hashed as the client does. Every push that decodes must re-encode (nwaku-style) to a frame that
 * decodes to the same topic and message with the same hash. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "base/error.h"
#include "p2p/reqresp.h"
#include "waku/filter/codec.h"

/* A small cap so that inputs can reach it. */
#define FRAME_MAX 4096

static void check_round_trip(const ld_filter_push_frame_t *f, const ld_waku_message_t *m,
                             const uint8_t hash[LD_WAKU_HASH_LEN]) {
  ld_buf_t out;
  ld_buf_init(&out);
  int rc = ld_filter_push_encode(f->pubsub_topic.data, f->pubsub_topic.len, m, &out);
  if (rc != 0)
    abort(); /* meta over 64 bytes never decodes, so encoding cannot fail */
  const uint8_t *body;
  size_t len;
  if (ld_reqresp_read_frame(out.data, out.len, SIZE_MAX, &body, &len) != (int)out.len)
    abort();
  ld_filter_push_frame_t back;
  ld_waku_message_t again;
  ld_waku_message_init(&again);
  uint8_t h2[LD_WAKU_HASH_LEN];
  if (ld_filter_push_decode(body, len, &back) != 0 ||
      back.pubsub_topic.len != f->pubsub_topic.len ||
      memcmp(back.pubsub_topic.data, f->pubsub_topic.data, back.pubsub_topic.len) != 0 ||
      ld_waku_message_decode(back.message, back.message_len, SIZE_MAX, 0, &again) != 0 ||
      !ld_waku_message_equal(&again, m) ||
      ld_waku_message_hash_ex(back.pubsub_topic.data, back.pubsub_topic.len, &again, 0, h2) != 0 ||
      memcmp(h2, hash, sizeof h2) != 0)
    abort();
  ld_waku_message_clear(&again);
  ld_buf_clear(&out);
}

static void one_frame(const uint8_t *body, size_t len) {
  ld_filter_push_frame_t f;
  int rc = ld_filter_push_decode(body, len, &f);
  if (rc != 0) {
    if (rc != LD_ERR_BAD_PROTOBUF && rc != LD_ERR_MISSING_FIELD)
      abort();
    return;
  }
  if (f.message_len > len || f.pubsub_topic.len > len)
    abort();
  ld_waku_message_t m;
  ld_waku_message_init(&m);
  uint8_t hash[LD_WAKU_HASH_LEN];
  if (ld_waku_message_decode(f.message, f.message_len, FRAME_MAX, 0, &m) == 0) {
    if (ld_waku_message_hash_ex(f.pubsub_topic.data, f.pubsub_topic.len, &m, 0, hash) != 0)
      abort();
    check_round_trip(&f, &m, hash);
  }
  ld_waku_message_clear(&m);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  size_t used = 0;
  while (used < size) {
    const uint8_t *body;
    size_t len;
    int n = ld_reqresp_read_frame(data + used, size - used, FRAME_MAX, &body, &len);
    if (n < 0)
      break; /* truncated or oversized: the client waits or resets */
    if ((size_t)n > size - used || len > FRAME_MAX)
      abort();
    one_frame(body, len);
    used += (size_t)n;
  }
  return 0;
}
