/* Message records of the Message Storage API: the flags through a send's life, receptions
 * merged with own sends by hash, lookups by request ID, hash and content topic, skip/take
 * pagination, and the bound that drops the oldest records. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "base/error.h"
#include "messaging/records.h"

#define PUBSUB "/waku/2/rs/0/0"
#define TOPIC_A "/app/1/a/proto"
#define TOPIC_B "/app/1/b/proto"

static ld_waku_message_t text_msg(const char *topic, const char *text, uint8_t hash[32]) {
  ld_waku_message_t msg;
  ld_waku_message_init(&msg);
  msg.payload = (const uint8_t *)text;
  msg.payload_len = strlen(text);
  msg.content_topic = topic;
  msg.content_topic_len = strlen(topic);
  msg.timestamp = 1700000000000000000;
  assert_int_equal(ld_waku_message_hash(PUBSUB, &msg, hash), 0);
  return msg;
}

static void a_send_goes_from_sending_to_sent_and_stored(void **state) {
  (void)state;
  ld_records_t *r = ld_records_new(0);
  assert_non_null(r);
  uint8_t h[32];
  ld_waku_message_t msg = text_msg(TOPIC_A, "one", h);
  assert_int_equal(ld_records_add_send(r, "0123456789abcdef0123", PUBSUB, &msg, h), 0);
  const ld_message_record_t *rec = ld_records_by_request(r, "0123456789abcdef0123");
  assert_non_null(rec);
  assert_true(rec->sending);
  assert_false(rec->sent || rec->stored || rec->received);
  assert_true(rec->has_request_id && rec->has_hash);
  assert_string_equal(rec->request_id, "0123456789abcdef0123");
  assert_memory_equal(rec->hash, h, 32);
  assert_string_equal(rec->pubsub_topic, PUBSUB);
  assert_true(ld_waku_message_equal(&rec->msg, &msg));
  assert_ptr_equal(ld_records_by_hash(r, h), rec);
  assert_null(rec->error);

  assert_true(ld_records_mark_propagated(r, "0123456789abcdef0123", false));
  assert_true(rec->sending);
  assert_false(rec->sent);
  assert_true(ld_records_mark_sent(r, "0123456789abcdef0123"));
  assert_false(rec->sending);
  assert_true(rec->sent && rec->stored);
  assert_false(rec->received);
  assert_int_equal(ld_records_count(r), 1);
  ld_records_free(r);
}

static void a_final_propagation_is_sent_without_stored(void **state) {
  (void)state;
  ld_records_t *r = ld_records_new(0);
  uint8_t h[32];
  ld_waku_message_t msg = text_msg(TOPIC_A, "eph", h);
  assert_int_equal(ld_records_add_send(r, "r1", PUBSUB, &msg, h), 0);
  assert_true(ld_records_mark_propagated(r, "r1", true));
  const ld_message_record_t *rec = ld_records_by_request(r, "r1");
  assert_false(rec->sending);
  assert_true(rec->sent);
  assert_false(rec->stored);
  assert_true(ld_records_mark_given_up(r, "r1"));
  assert_false(ld_records_mark_given_up(r, "nope"));
  ld_records_free(r);
}

static void errors_are_kept_and_cleared_by_a_later_success(void **state) {
  (void)state;
  ld_records_t *r = ld_records_new(0);
  uint8_t h[32];
  ld_waku_message_t msg = text_msg(TOPIC_A, "err", h);
  assert_int_equal(ld_records_add_send(r, "r1", PUBSUB, &msg, h), 0);
  assert_true(ld_records_mark_error(r, "r1", "Unable to send within retry time window"));
  const ld_message_record_t *rec = ld_records_by_request(r, "r1");
  assert_false(rec->sending);
  assert_false(rec->sent);
  assert_string_equal(rec->error, "Unable to send within retry time window");
  assert_true(ld_records_mark_error(r, "r1", "second"));
  assert_string_equal(rec->error, "second");
  assert_true(ld_records_mark_sent(r, "r1"));
  assert_null(rec->error);
  assert_true(rec->sent);
  assert_false(ld_records_mark_error(r, "unknown", "x"));
  assert_false(ld_records_mark_sent(r, "unknown"));
  assert_false(ld_records_mark_propagated(r, "unknown", true));
  ld_records_free(r);
}

static void receptions_merge_with_own_sends_by_hash(void **state) {
  (void)state;
  ld_records_t *r = ld_records_new(0);
  uint8_t h1[32], h2[32];
  ld_waku_message_t own = text_msg(TOPIC_A, "own", h1);
  ld_waku_message_t other = text_msg(TOPIC_A, "other", h2);
  assert_int_equal(ld_records_add_send(r, "r1", PUBSUB, &own, h1), 0);
  assert_int_equal(ld_records_add_received(r, PUBSUB, h1, &own), 0);
  assert_int_equal(ld_records_count(r), 1);
  const ld_message_record_t *rec = ld_records_by_hash(r, h1);
  assert_true(rec->received && rec->sending && rec->has_request_id);
  assert_int_equal(ld_records_add_received(r, PUBSUB, h2, &other), 0);
  assert_int_equal(ld_records_add_received(r, PUBSUB, h2, &other), 0);
  assert_int_equal(ld_records_count(r), 2);
  rec = ld_records_by_hash(r, h2);
  assert_true(rec->received);
  assert_false(rec->sending || rec->sent || rec->has_request_id);
  assert_true(ld_waku_message_equal(&rec->msg, &other));
  uint8_t zero[32] = {0};
  assert_null(ld_records_by_hash(r, zero));
  assert_null(ld_records_by_request(r, "nope"));
  ld_records_free(r);
}

static void topic_lookups_page_with_skip_and_take(void **state) {
  (void)state;
  ld_records_t *r = ld_records_new(0);
  uint8_t h[32];
  char text[16];
  for (int i = 0; i < 6; i++) {
    snprintf(text, sizeof text, "m%d", i);
    ld_waku_message_t msg = text_msg(i % 2 == 0 ? TOPIC_A : TOPIC_B, text, h);
    assert_int_equal(ld_records_add_received(r, PUBSUB, h, &msg), 0);
  }
  const ld_message_record_t *out[8];
  assert_int_equal(ld_records_by_topic(r, TOPIC_A, 0, LD_RECORDS_ALL, out, 8), 3);
  assert_memory_equal(out[0]->msg.payload, "m0", 2); /* oldest first */
  assert_memory_equal(out[1]->msg.payload, "m2", 2);
  assert_memory_equal(out[2]->msg.payload, "m4", 2);
  assert_int_equal(ld_records_by_topic(r, TOPIC_A, 1, LD_RECORDS_ALL, out, 8), 2);
  assert_memory_equal(out[0]->msg.payload, "m2", 2);
  assert_int_equal(ld_records_by_topic(r, TOPIC_A, 1, 1, out, 8), 1);
  assert_memory_equal(out[0]->msg.payload, "m2", 2);
  assert_int_equal(ld_records_by_topic(r, TOPIC_A, 0, 0, out, 8), 0);    /* take 0 */
  assert_int_equal(ld_records_by_topic(r, TOPIC_A, 3, 10, out, 8), 0);   /* skip = total */
  assert_int_equal(ld_records_by_topic(r, TOPIC_A, 100, 10, out, 8), 0); /* skip beyond */
  assert_int_equal(ld_records_by_topic(r, TOPIC_A, 2, 100, out, 8), 1);  /* take > left */
  assert_int_equal(ld_records_by_topic(r, TOPIC_B, 0, LD_RECORDS_ALL, out, 2), 2); /* max */
  assert_memory_equal(out[1]->msg.payload, "m3", 2);
  assert_int_equal(ld_records_by_topic(r, "/app/1/c/proto", 0, 5, out, 8), 0);
  assert_int_equal(ld_records_by_topic(r, "/app/1/a/prot", 0, 5, out, 8), 0);
  ld_records_free(r);
}

static void the_oldest_records_are_dropped_beyond_the_bound(void **state) {
  (void)state;
  ld_records_t *r = ld_records_new(3);
  uint8_t hashes[5][32];
  char rid[8], text[8];
  for (int i = 0; i < 5; i++) {
    snprintf(rid, sizeof rid, "r%d", i);
    snprintf(text, sizeof text, "t%d", i);
    ld_waku_message_t msg = text_msg(TOPIC_A, text, hashes[i]);
    assert_int_equal(ld_records_add_send(r, rid, PUBSUB, &msg, hashes[i]), 0);
  }
  assert_int_equal(ld_records_count(r), 3);
  assert_null(ld_records_by_request(r, "r0"));
  assert_null(ld_records_by_request(r, "r1"));
  assert_null(ld_records_by_hash(r, hashes[1]));
  assert_false(ld_records_mark_sent(r, "r1"));
  assert_non_null(ld_records_by_request(r, "r2"));
  assert_non_null(ld_records_by_hash(r, hashes[4]));
  const ld_message_record_t *out[4];
  assert_int_equal(ld_records_by_topic(r, TOPIC_A, 0, LD_RECORDS_ALL, out, 4), 3);
  assert_string_equal(out[0]->request_id, "r2");
  ld_records_free(r);
}

static void bad_arguments_are_refused(void **state) {
  (void)state;
  ld_records_t *r = ld_records_new(0);
  uint8_t h[32];
  ld_waku_message_t msg = text_msg(TOPIC_A, "x", h);
  assert_int_equal(ld_records_add_send(r, "r1", PUBSUB, &msg, h), 0);
  assert_int_equal(ld_records_add_send(r, "r1", PUBSUB, &msg, h), LD_ERR_EXISTS);
  assert_int_equal(ld_records_add_send(r, "", PUBSUB, &msg, h), LD_ERR_INVALID_ARG);
  assert_int_equal(ld_records_add_send(r, "0123456789abcdef01234", PUBSUB, &msg, h),
                   LD_ERR_INVALID_ARG);
  assert_int_equal(ld_records_add_send(r, "r2", NULL, &msg, h), LD_ERR_INVALID_ARG);
  assert_int_equal(ld_records_add_received(r, PUBSUB, NULL, &msg), LD_ERR_INVALID_ARG);
  /* a send without a known hash still has its record */
  assert_int_equal(ld_records_add_send(r, "r3", PUBSUB, &msg, NULL), 0);
  const ld_message_record_t *rec = ld_records_by_request(r, "r3");
  assert_false(rec->has_hash);
  assert_ptr_equal(ld_records_by_hash(r, h), ld_records_by_request(r, "r1"));
  ld_records_free(r);
  ld_records_free(NULL);
}

/* A send published with another timestamp (RLN-relay stamped it again): the record takes the
 * timestamp and is found by the new hash only. */
static void a_send_published_again_is_found_by_its_final_hash(void **state) {
  (void)state;
  ld_records_t *r = ld_records_new(0);
  assert_non_null(r);
  uint8_t h[32], final[32];
  ld_waku_message_t msg = text_msg(TOPIC_A, "late", h);
  assert_int_equal(ld_records_add_send(r, "req-late", PUBSUB, &msg, h), 0);
  const ld_message_record_t *rec = ld_records_by_request(r, "req-late");
  msg.timestamp += 30000000000;
  assert_int_equal(ld_waku_message_hash(PUBSUB, &msg, final), 0);
  assert_true(ld_records_set_published(r, "req-late", final, msg.timestamp));
  assert_memory_equal(rec->hash, final, 32);
  assert_true(rec->msg.timestamp == msg.timestamp);
  assert_ptr_equal(ld_records_by_hash(r, final), rec);
  assert_null(ld_records_by_hash(r, h));
  assert_true(ld_records_set_published(r, "req-late", final, msg.timestamp)); /* unchanged */
  assert_ptr_equal(ld_records_by_hash(r, final), rec);
  assert_false(ld_records_set_published(r, "req-unknown", final, msg.timestamp));
  assert_int_equal(ld_records_count(r), 1);
  ld_records_free(r);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(a_send_goes_from_sending_to_sent_and_stored),
      cmocka_unit_test(a_final_propagation_is_sent_without_stored),
      cmocka_unit_test(errors_are_kept_and_cleared_by_a_later_success),
      cmocka_unit_test(receptions_merge_with_own_sends_by_hash),
      cmocka_unit_test(topic_lookups_page_with_skip_and_take),
      cmocka_unit_test(the_oldest_records_are_dropped_beyond_the_bound),
      cmocka_unit_test(bad_arguments_are_refused),
      cmocka_unit_test(a_send_published_again_is_found_by_its_final_hash),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
