/* What a channel reports as lost (channels/channel_lost.h, channels/segment.h): the reassembler
 * reports each segment set it drops undelivered (expired, evicted, hash mismatch) and none it
 * delivers or frees; the event of a lost dependency and of a lost set; the C library's
 * channel_message_lost JSON (lib/channel_json.h). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "channels/channel_lost.h"
#include "channels/segment.h"
#include "crypto/keccak.h"
#include "lib/channel_json.h"

typedef struct losses {
  int n;
  char sender[8][16];
  uint8_t hash[8][LD_SEGMENT_HASH_LEN];
  uint32_t held[8], count[8];
  ld_reassembly_loss_t why[8];
} losses_t;

static void on_loss(void *ud, const char *sender, const uint8_t hash[LD_SEGMENT_HASH_LEN],
                    uint32_t held, uint32_t count, ld_reassembly_loss_t why) {
  losses_t *l = ud;
  assert_true(l->n < 8);
  snprintf(l->sender[l->n], sizeof l->sender[0], "%s", sender);
  memcpy(l->hash[l->n], hash, LD_SEGMENT_HASH_LEN);
  l->held[l->n] = held;
  l->count[l->n] = count;
  l->why[l->n] = why;
  l->n++;
}

/* Segment `index` of `count` of a set whose hash is keccak256 of `whole`. */
static ld_segment_t seg_of(const uint8_t hash[32], uint32_t index, uint32_t count,
                           const uint8_t *part, size_t len) {
  ld_segment_t s = {.hash = hash, .index = index, .count = count, .payload = part, .len = len};
  return s;
}

static void reassembler_reports_each_set_dropped_undelivered(void **state) {
  (void)state;
  losses_t l = {0};
  ld_reassembler_t *r = ld_reassembler_new(2, 1000, 100);
  ld_reassembler_on_loss(r, on_loss, &l);
  const uint8_t whole[6] = {1, 2, 3, 4, 5, 6};
  uint8_t h[3][32];
  ld_keccak256(whole, sizeof whole, h[0]);
  memset(h[1], 0xbb, 32);
  memset(h[2], 0xcc, 32);
  uint8_t *out = NULL;
  size_t out_len = 0;

  /* a set that completes is not reported */
  ld_segment_t s = seg_of(h[0], 0, 2, whole, 3);
  assert_int_equal(ld_reassembler_add(r, "ann", &s, 0, &out, &out_len), LD_REASSEMBLY_HELD);
  s = seg_of(h[0], 1, 2, whole + 3, 3);
  assert_int_equal(ld_reassembler_add(r, "ann", &s, 0, &out, &out_len), LD_REASSEMBLY_COMPLETE);
  free(out);
  assert_int_equal(l.n, 0);

  /* complete with the wrong hash: HashMismatch, 2 of 2 held */
  s = seg_of(h[1], 0, 2, whole, 3);
  assert_int_equal(ld_reassembler_add(r, "bob", &s, 0, &out, &out_len), LD_REASSEMBLY_HELD);
  s = seg_of(h[1], 1, 2, whole + 3, 3);
  assert_int_equal(ld_reassembler_add(r, "bob", &s, 0, &out, &out_len),
                   LD_REASSEMBLY_HASH_MISMATCH);
  assert_int_equal(l.n, 1);
  assert_int_equal(l.why[0], LD_REASSEMBLY_LOST_HASH_MISMATCH);
  assert_string_equal(l.sender[0], "bob");
  assert_memory_equal(l.hash[0], h[1], 32);
  assert_int_equal(l.held[0], 2);

  /* a third set beyond max_sets 2 evicts the oldest, 1 of 3 held */
  s = seg_of(h[1], 0, 3, whole, 2);
  assert_int_equal(ld_reassembler_add(r, "cy", &s, 10, &out, &out_len), LD_REASSEMBLY_HELD);
  s = seg_of(h[2], 0, 3, whole, 2);
  assert_int_equal(ld_reassembler_add(r, "cy", &s, 20, &out, &out_len), LD_REASSEMBLY_HELD);
  s = seg_of(h[0], 0, 4, whole, 2);
  assert_int_equal(ld_reassembler_add(r, "dee", &s, 30, &out, &out_len), LD_REASSEMBLY_HELD);
  assert_int_equal(l.n, 2);
  assert_int_equal(l.why[1], LD_REASSEMBLY_LOST_EVICTED);
  assert_memory_equal(l.hash[1], h[1], 32);
  assert_int_equal(l.held[1], 1);
  assert_int_equal(l.count[1], 3);

  /* the timeout (100 ms after each set's first segment) expires the rest, oldest first */
  uint64_t next = 0;
  assert_int_equal(ld_reassembler_expire(r, 119, &next), 0);
  assert_int_equal(next, 120);
  assert_int_equal(ld_reassembler_expire(r, 130, &next), 2);
  assert_int_equal(l.n, 4);
  assert_int_equal(l.why[2], LD_REASSEMBLY_LOST_EXPIRED);
  assert_string_equal(l.sender[2], "cy");
  assert_int_equal(l.why[3], LD_REASSEMBLY_LOST_EXPIRED);
  assert_string_equal(l.sender[3], "dee");
  assert_int_equal(l.count[3], 4);
  assert_int_equal(ld_reassembler_dropped(r), 4);

  /* freeing drops what is held without a report (the channel is closing) */
  s = seg_of(h[2], 0, 2, whole, 2);
  assert_int_equal(ld_reassembler_add(r, "eve", &s, 200, &out, &out_len), LD_REASSEMBLY_HELD);
  ld_reassembler_free(r);
  assert_int_equal(l.n, 4);
}

static void lost_events_carry_what_is_known(void **state) {
  (void)state;
  ld_channel_event_t ev;
  char hint_text[LD_CHANNEL_LOST_HINT_TEXT];
  uint8_t hint[32];
  for (int i = 0; i < 32; i++)
    hint[i] = (uint8_t)i;
  ld_channel_lost_dependency(&ev, "room", "abc123", "alice", hint, sizeof hint, hint_text);
  assert_string_equal(ev.channel_id, "room");
  assert_string_equal(ev.message_id, "abc123");
  assert_string_equal(ev.sender_id, "alice");
  assert_string_equal(ev.message_hash,
                      "0x000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f");
  assert_null(ev.payload_hash);
  assert_string_equal(ev.reason, "Irretrievable");
  ld_channel_lost_dependency(&ev, "room", "abc123", "", NULL, 0, hint_text);
  assert_null(ev.message_hash);
  assert_null(ev.sender_id);

  char hash_text[LD_CHANNEL_LOST_HASH_TEXT];
  uint8_t h[32];
  memset(h, 0xab, sizeof h);
  ld_channel_lost_segments(&ev, "room", "bob", h, LD_REASSEMBLY_LOST_EVICTED, hash_text);
  assert_string_equal(ev.payload_hash,
                      "abababababababababababababababababababababababababababababababab");
  assert_string_equal(ev.reason, "Evicted");
  assert_string_equal(ev.sender_id, "bob");
  assert_null(ev.message_id);
  assert_string_equal(ld_channel_lost_reason(LD_REASSEMBLY_LOST_EXPIRED), "Expired");
  assert_string_equal(ld_channel_lost_reason(LD_REASSEMBLY_LOST_HASH_MISMATCH), "HashMismatch");
}

static void library_json_of_a_lost_message(void **state) {
  (void)state;
  ld_channel_event_t ev = {.channel_id = "room",
                           .sender_id = "alice",
                           .message_id = "abc123",
                           .message_hash = "0x01ff",
                           .reason = LD_CHANNEL_LOST_IRRETRIEVABLE};
  size_t len = 0;
  char *s = ld_lib_event_channel_json(LD_EVENT_CHANNEL_LOST, &ev, &len);
  assert_non_null(s);
  assert_string_equal(s, "{\"eventType\":\"channel_message_lost\",\"channelId\":\"room\","
                         "\"senderId\":\"alice\",\"messageId\":\"abc123\",\"messageHash\":"
                         "\"0x01ff\",\"payloadHash\":\"\",\"reason\":\"Irretrievable\"}");
  assert_int_equal(len, strlen(s));
  free(s);
  ld_channel_event_t set = {.channel_id = "room",
                            .sender_id = "bob",
                            .payload_hash = "abcd",
                            .reason = LD_CHANNEL_LOST_EXPIRED};
  s = ld_lib_event_channel_json(LD_EVENT_CHANNEL_LOST, &set, &len);
  assert_string_equal(s, "{\"eventType\":\"channel_message_lost\",\"channelId\":\"room\","
                         "\"senderId\":\"bob\",\"messageId\":\"\",\"messageHash\":\"\","
                         "\"payloadHash\":\"abcd\",\"reason\":\"Expired\"}");
  free(s);
  assert_string_equal(ld_lib_channel_listener_name(LD_EVENT_CHANNEL_LOST), "onChannelMessageLost");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(reassembler_reports_each_set_dropped_undelivered),
      cmocka_unit_test(lost_events_carry_what_is_known),
      cmocka_unit_test(library_json_of_a_lost_message),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
