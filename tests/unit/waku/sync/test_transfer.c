/* Store-sync transfer message (nwaku's WakuMessageAndTopic, pubsub_topic = 1, message = 2):
 * hand-derived bytes, nwaku's protobuf dialect, required fields, caps, and the item a message
 * stands for. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "base/buf.h"
#include "base/error.h"
#include "base/hex.h"
#include "waku/sync/transfer.h"

/* {payload 01 02, content topic /a/1/b/c, version 0, timestamp 10, empty meta and proof,
 * ephemeral false}, every field written as nwaku writes it */
#define MSG_HEX "0a02010212082f612f312f622f63180050145a00aa0100f80100"
#define TOPIC_HEX "2f77616b752f322f72732f302f30" /* /waku/2/rs/0/0 */

static size_t unhex(const char *text, uint8_t *out, size_t cap) {
  size_t n;
  assert_int_equal(ld_hex_decode(text, strlen(text), out, cap, &n), 0);
  return n;
}

static void sample(ld_waku_message_t *m) {
  static const uint8_t payload[] = {1, 2};
  ld_waku_message_init(m);
  m->payload = payload;
  m->payload_len = 2;
  m->content_topic = "/a/1/b/c";
  m->content_topic_len = 8;
  m->timestamp = 10;
}

static void encodes_nwaku_bytes(void **state) {
  (void)state;
  ld_waku_message_t m;
  sample(&m);
  ld_buf_t b;
  ld_buf_init(&b);
  assert_int_equal(ld_sync_transfer_encode("/waku/2/rs/0/0", 14, &m, 0, &b), 0);
  uint8_t want[128];
  size_t n = unhex("0a0e" TOPIC_HEX "121a" MSG_HEX, want, sizeof want);
  assert_int_equal(b.len, n);
  assert_memory_equal(b.data, want, n);
  /* a cap below the frame: refused, nothing appended */
  assert_int_equal(ld_sync_transfer_encode("/waku/2/rs/0/0", 14, &m, n - 1, &b), LD_ERR_TOO_LARGE);
  assert_int_equal(b.len, n);
  assert_int_equal(ld_sync_transfer_encode("", 0, &m, 0, &b), LD_ERR_INVALID_ARG);
  ld_buf_clear(&b);
}

static int decode_hex(const char *hex, ld_sync_transfer_t *t) {
  uint8_t buf[256];
  size_t n = unhex(hex, buf, sizeof buf);
  return ld_sync_transfer_decode(buf, n, 0, t, NULL, 0);
}

static void decodes_in_nwaku_dialect(void **state) {
  (void)state;
  ld_sync_transfer_t t;
  ld_sync_transfer_init(&t);
  /* fields in the other order, an unknown varint field and a repeated topic (the last wins) */
  assert_int_equal(decode_hex("121a" MSG_HEX "1801"
                              "0a0178"
                              "0a0e" TOPIC_HEX,
                              &t),
                   0);
  assert_string_equal(t.pubsub_topic, "/waku/2/rs/0/0");
  assert_int_equal(t.pubsub_topic_len, 14);
  assert_int_equal(t.message.timestamp, 10);
  assert_int_equal(t.message.content_topic_len, 8);
  assert_memory_equal(t.message.content_topic, "/a/1/b/c", 8);
  /* the item is computed here: (timestamp, deterministic hash) */
  ld_sync_id_t id;
  assert_int_equal(ld_sync_transfer_id(&t, &id), 0);
  uint8_t want[32];
  assert_int_equal(ld_waku_message_hash("/waku/2/rs/0/0", &t.message, want), 0);
  assert_int_equal(id.time, 10);
  assert_memory_equal(id.hash, want, 32);
  ld_sync_transfer_clear(&t);
}

static void rejects_bad_frames(void **state) {
  (void)state;
  ld_sync_transfer_t t;
  ld_sync_transfer_init(&t);
  struct {
    const char *hex;
    int rc;
  } cases[] = {
      {"121a" MSG_HEX, LD_ERR_MISSING_FIELD},   /* no topic */
      {"0a0e" TOPIC_HEX, LD_ERR_MISSING_FIELD}, /* no message */
      {"0a0e" TOPIC_HEX "1204"
       "0a020102",
       LD_ERR_MISSING_FIELD},                                 /* message lacks topic */
      {"0a0e" TOPIC_HEX "121b" MSG_HEX, LD_ERR_BAD_PROTOBUF}, /* length past the end */
      {"0a0361006212"
       "1a" MSG_HEX,
       LD_ERR_BAD_ENCODING},                     /* NUL in the topic */
      {"0a00121a" MSG_HEX, LD_ERR_BAD_ENCODING}, /* empty topic */
      {"0b", LD_ERR_BAD_PROTOBUF},               /* group wire type */
      {"0a0e" TOPIC_HEX "1203"
       "ffffff",
       LD_ERR_BAD_PROTOBUF}, /* broken message */
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    int rc = decode_hex(cases[i].hex, &t);
    if (rc != cases[i].rc)
      print_message("case %zu: %s\n", i, ld_errname(rc));
    assert_int_equal(rc, cases[i].rc);
    assert_null(t.pubsub_topic);
  }
  /* a topic over the cap */
  ld_buf_t b;
  ld_buf_init(&b);
  char topic[LD_SYNC_TRANSFER_MAX_TOPIC_LEN + 1];
  memset(topic, 'x', sizeof topic);
  ld_waku_message_t m;
  sample(&m);
  assert_int_equal(ld_sync_transfer_encode(topic, sizeof topic, &m, 0, &b), 0);
  assert_int_equal(ld_sync_transfer_decode(b.data, b.len, 0, &t, NULL, 0), LD_ERR_FIELD_TOO_LONG);
  /* a message over the receiver's cap */
  ld_buf_reset(&b);
  assert_int_equal(ld_sync_transfer_encode("/waku/2/rs/0/0", 14, &m, 0, &b), 0);
  assert_int_equal(ld_sync_transfer_decode(b.data, b.len, 10, &t, NULL, 0), LD_ERR_TOO_LARGE);
  assert_int_equal(ld_sync_transfer_decode(b.data, b.len, 0, &t, NULL, 0), 0);
  ld_sync_transfer_clear(&t);
  ld_buf_clear(&b);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(encodes_nwaku_bytes),
      cmocka_unit_test(decodes_in_nwaku_dialect),
      cmocka_unit_test(rejects_bad_frames),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
