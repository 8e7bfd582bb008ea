/* Shared values of the WakuMessage test vectors (digest §1.3) and a hex helper. */
#ifndef LD_TESTS_WAKU_CORE_WAKU_VECTORS_H
#define LD_TESTS_WAKU_CORE_WAKU_VECTORS_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/hex.h"
#include "waku/core/message.h"

/* payload 0x010203045445535405060708 = "\x01\x02\x03\x04TEST\x05\x06\x07\x08" */
static const uint8_t k_std_payload[] = {0x01, 0x02, 0x03, 0x04, 'T',  'E',
                                        'S',  'T',  0x05, 0x06, 0x07, 0x08};
#define STD_CONTENT_TOPIC "/waku/2/default-content/proto"
#define STD_TIMESTAMP INT64_C(1681964442000000000) /* 0x175789bfa23f8400 */
#define META12 "super-secret"
#define RFC_PUBSUB "/waku/2/default-waku/proto"

/* meta64 = 00 01 02 … 3f */
static inline void vec_meta64(uint8_t out[64]) {
  for (int i = 0; i < 64; i++)
    out[i] = (uint8_t)i;
}

/* Decodes a hex vector into `out` (room for `cap` bytes); aborts on a malformed vector, which
 * is a bug in the test. */
static inline size_t vec_hex(const char *hex, uint8_t *out, size_t cap) {
  size_t n = 0;
  if (ld_hex_decode(hex, strlen(hex), out, cap, &n) != 0)
    abort();
  return n;
}

/* A borrowed message with the given views. */
static inline ld_waku_message_t vec_message(const void *payload, size_t payload_len,
                                            const char *content_topic, const void *meta,
                                            size_t meta_len, int64_t timestamp) {
  ld_waku_message_t m;
  ld_waku_message_init(&m);
  m.payload = payload;
  m.payload_len = payload_len;
  m.content_topic = content_topic;
  m.content_topic_len = strlen(content_topic);
  m.meta = meta;
  m.meta_len = meta_len;
  m.timestamp = timestamp;
  return m;
}

#endif
