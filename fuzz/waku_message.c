/* Fuzz target: the WakuMessage decoder and the topic parsers.
 *
 * Whatever the decoder accepts must re-encode within the caps, decode back to the same values
 * (now with every field present), re-encode to the same bytes, copy and hash identically. The
 * strict decode (nwaku's required fields) must agree with the lenient one. A content topic that
 * parses must format back to text that parses to the same parts; a pubsub topic that parses must
 * format back to exactly the input. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "base/error.h"
#include "waku/core/message.h"
#include "waku/core/sharding.h"
#include "waku/core/topics.h"

#define ALL_FIELDS 0x7fu
#define REQUIRED_FIELDS (LD_WAKU_FIELD_PAYLOAD | LD_WAKU_FIELD_CONTENT_TOPIC)

static void check_strict_agrees(const uint8_t *data, size_t size, int lenient_rc, unsigned fields) {
  ld_waku_message_t m;
  ld_waku_message_init(&m);
  int rc = ld_waku_message_decode(data, size, 0, LD_WAKU_DECODE_REQUIRE_FIELDS, &m);
  int want = lenient_rc != 0                                 ? lenient_rc
             : (fields & REQUIRED_FIELDS) != REQUIRED_FIELDS ? LD_ERR_MISSING_FIELD
                                                             : 0;
  /* a missing required field is reported before an overlong meta */
  if (rc != want && !(want == LD_ERR_FIELD_TOO_LONG && rc == LD_ERR_MISSING_FIELD))
    abort();
  ld_waku_message_clear(&m);
}

static void check_hashes(const ld_waku_message_t *a, const ld_waku_message_t *b) {
  uint8_t ha[LD_WAKU_HASH_LEN], hb[LD_WAKU_HASH_LEN], hj[LD_WAKU_HASH_LEN];
  char hex[LD_WAKU_HASH_HEX_LEN + 1];
  if (ld_waku_message_hash(LD_WAKU_DEFAULT_PUBSUB_TOPIC, a, ha) != 0 ||
      ld_waku_message_hash(LD_WAKU_DEFAULT_PUBSUB_TOPIC, b, hb) != 0 ||
      memcmp(ha, hb, sizeof ha) != 0)
    abort();
  if (ld_waku_message_hash_ex("", 0, a, LD_WAKU_HASH_JS_OMIT_ZERO_TIMESTAMP, hj) != 0)
    abort();
  if (ld_waku_hash_to_hex(ha, hex) != LD_WAKU_HASH_HEX_LEN ||
      ld_waku_hash_from_hex(hex, LD_WAKU_HASH_HEX_LEN, hb) != 0 || memcmp(ha, hb, sizeof ha) != 0)
    abort();
}

/* Re-encode, decode, re-encode: values and bytes must be stable. */
static void check_round_trip(const ld_waku_message_t *m) {
  ld_buf_t first, second;
  ld_buf_init(&first);
  ld_buf_init(&second);
  ld_waku_message_t back, copy;
  ld_waku_message_init(&back);
  ld_waku_message_init(&copy);
  if (m->meta_len > LD_WAKU_MAX_META_LEN || ld_waku_message_encode(m, SIZE_MAX, &first) != 0 ||
      first.len != ld_waku_message_encoded_len(m))
    abort();
  if (ld_waku_message_decode(first.data, first.len, SIZE_MAX, LD_WAKU_DECODE_REQUIRE_FIELDS,
                             &back) != 0 ||
      back.fields != ALL_FIELDS || !ld_waku_message_equal(m, &back))
    abort();
  if (ld_waku_message_encode(&back, SIZE_MAX, &second) != 0 || second.len != first.len ||
      memcmp(first.data, second.data, first.len) != 0)
    abort();
  if (ld_waku_message_copy(&copy, m) != 0 || !ld_waku_message_equal(&copy, m) ||
      copy.fields != m->fields)
    abort();
  check_hashes(m, &copy);
  ld_waku_message_clear(&copy);
  ld_waku_message_clear(&back);
  ld_buf_clear(&first);
  ld_buf_clear(&second);
}

static void check_content_topic(const char *text, size_t len) {
  ld_content_topic_t t, again;
  char out[256];
  ld_relay_shard_t shard;
  ld_topic_error_t why = LD_TOPIC_OK;
  int rc = ld_autoshard(text, len, 8, 1, &shard, &why);
  if (rc == 0 && shard.shard_id >= 8)
    abort();
  if (ld_content_topic_parse(text, len, &t, &why) != 0) {
    if (why == LD_TOPIC_OK)
      abort();
    return;
  }
  int n = ld_content_topic_format(&t, out, sizeof out);
  if (n == LD_ERR_LIMIT)
    return;
  if (n < 0 || ld_content_topic_parse(out, (size_t)n, &again, NULL) != 0 ||
      again.has_generation != t.has_generation || again.generation != t.generation ||
      again.application.len != t.application.len || again.encoding.len != t.encoding.len)
    abort();
}

static void check_pubsub_topic(const uint8_t *data, size_t size) {
  ld_relay_shard_t s;
  char out[LD_WAKU_PUBSUB_TOPIC_MAX_LEN + 1];
  if (ld_pubsub_topic_parse((const char *)data, size, &s, NULL) != 0)
    return;
  int n = ld_pubsub_topic_format(s, out, sizeof out);
  if (n < 0 || (size_t)n != size || memcmp(out, data, size) != 0)
    abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  ld_waku_message_t m;
  ld_waku_message_init(&m);
  int rc = ld_waku_message_decode(data, size, 0, 0, &m);
  /* the cursor walk and protobuf-c must agree: NOMEM would mean protobuf-c refused */
  if (rc == LD_ERR_NOMEM || (rc != 0 && m.storage != NULL))
    abort();
  check_strict_agrees(data, size, rc, m.fields);
  if (rc == 0) {
    check_round_trip(&m);
    check_content_topic(m.content_topic, m.content_topic_len);
  }
  ld_waku_message_clear(&m);
  check_content_topic((const char *)data, size);
  check_pubsub_topic(data, size);
  return 0;
}
