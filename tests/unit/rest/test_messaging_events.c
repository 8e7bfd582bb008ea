/* The Messaging API's event caches: send timelines grouped by request ID in arrival order,
 * evicted after a poll or beyond the request cap (oldest first); the received ring keeps the
 * newest messages, oldest first, as copies. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "base/error.h"
#include "rest/messaging_events.h"

static const uint8_t H1[LD_WAKU_HASH_LEN] = {1};
static const uint8_t H2[LD_WAKU_HASH_LEN] = {2};

static void timelines_group_by_request(void **state) {
  (void)state;
  ld_rest_msg_events_t *c = ld_rest_msg_events_new(0, 0);
  assert_non_null(c);
  assert_int_equal(ld_rest_msg_events_add_send(c, "r1", LD_REST_SEND_PROPAGATED, H1, NULL, 10), 0);
  assert_int_equal(ld_rest_msg_events_add_send(c, "r2", LD_REST_SEND_ERROR, NULL, "boom", 20), 0);
  assert_int_equal(ld_rest_msg_events_add_send(c, "r1", LD_REST_SEND_SENT, H1, "ignored", 30), 0);
  assert_int_equal(ld_rest_msg_events_send_count(c), 2);
  ld_rest_send_status_t *list = NULL;
  size_t n = 0;
  assert_int_equal(ld_rest_msg_events_poll_sends(c, &list, &n), 0);
  assert_int_equal(n, 2);
  assert_string_equal(list[0].request_id, "r1");
  assert_int_equal(list[0].n_events, 2);
  assert_int_equal(list[0].events[0].kind, LD_REST_SEND_PROPAGATED);
  assert_true(list[0].events[0].has_hash);
  assert_memory_equal(list[0].events[0].hash, H1, LD_WAKU_HASH_LEN);
  assert_int_equal(list[0].events[0].timestamp, 10);
  assert_int_equal(list[0].events[1].kind, LD_REST_SEND_SENT);
  assert_null(list[0].events[1].error);
  assert_int_equal(list[0].events[1].timestamp, 30);
  assert_string_equal(list[1].request_id, "r2");
  assert_int_equal(list[1].n_events, 1);
  assert_false(list[1].events[0].has_hash);
  assert_string_equal(list[1].events[0].error, "boom");
  ld_rest_send_statuses_free(list, n);
  /* evicted after the poll */
  assert_int_equal(ld_rest_msg_events_send_count(c), 0);
  assert_int_equal(ld_rest_msg_events_poll_sends(c, &list, &n), 0);
  assert_null(list);
  assert_int_equal(n, 0);
  ld_rest_msg_events_free(c);
}

static void one_request_is_polled_alone(void **state) {
  (void)state;
  ld_rest_msg_events_t *c = ld_rest_msg_events_new(0, 0);
  ld_rest_msg_events_add_send(c, "a", LD_REST_SEND_PROPAGATED, H1, NULL, 1);
  ld_rest_msg_events_add_send(c, "b", LD_REST_SEND_PROPAGATED, H2, NULL, 2);
  ld_rest_msg_events_add_send(c, "c", LD_REST_SEND_PROPAGATED, H2, NULL, 3);
  ld_rest_send_status_t st;
  assert_int_equal(ld_rest_msg_events_poll_send(c, "b", &st), 0);
  assert_string_equal(st.request_id, "b");
  assert_int_equal(st.n_events, 1);
  assert_memory_equal(st.events[0].hash, H2, LD_WAKU_HASH_LEN);
  ld_rest_send_status_clear(&st);
  assert_int_equal(ld_rest_msg_events_poll_send(c, "b", &st), LD_ERR_NOT_FOUND);
  assert_int_equal(ld_rest_msg_events_poll_send(c, "zz", &st), LD_ERR_NOT_FOUND);
  /* a request seen again after its poll starts a new timeline at the end */
  ld_rest_msg_events_add_send(c, "b", LD_REST_SEND_SENT, H2, NULL, 4);
  ld_rest_send_status_t *list = NULL;
  size_t n = 0;
  assert_int_equal(ld_rest_msg_events_poll_sends(c, &list, &n), 0);
  assert_int_equal(n, 3);
  assert_string_equal(list[0].request_id, "a");
  assert_string_equal(list[1].request_id, "c");
  assert_string_equal(list[2].request_id, "b");
  assert_int_equal(list[2].n_events, 1);
  assert_int_equal(list[2].events[0].kind, LD_REST_SEND_SENT);
  ld_rest_send_statuses_free(list, n);
  ld_rest_msg_events_free(c);
}

static void oldest_request_goes_beyond_the_cap(void **state) {
  (void)state;
  ld_rest_msg_events_t *c = ld_rest_msg_events_new(0, 3);
  char id[16];
  for (int i = 0; i < 5; i++) {
    snprintf(id, sizeof id, "req%d", i);
    assert_int_equal(ld_rest_msg_events_add_send(c, id, LD_REST_SEND_PROPAGATED, H1, NULL, i), 0);
    /* a later event of a kept request does not change the order */
    if (i == 3)
      ld_rest_msg_events_add_send(c, "req2", LD_REST_SEND_SENT, H1, NULL, 99);
  }
  assert_int_equal(ld_rest_msg_events_send_count(c), 3);
  ld_rest_send_status_t st;
  assert_int_equal(ld_rest_msg_events_poll_send(c, "req0", &st), LD_ERR_NOT_FOUND);
  assert_int_equal(ld_rest_msg_events_poll_send(c, "req1", &st), LD_ERR_NOT_FOUND);
  ld_rest_send_status_t *list = NULL;
  size_t n = 0;
  assert_int_equal(ld_rest_msg_events_poll_sends(c, &list, &n), 0);
  assert_int_equal(n, 3);
  assert_string_equal(list[0].request_id, "req2");
  assert_int_equal(list[0].n_events, 2);
  assert_string_equal(list[1].request_id, "req3");
  assert_string_equal(list[2].request_id, "req4");
  ld_rest_send_statuses_free(list, n);
  ld_rest_msg_events_free(c);
}

static void timeline_refusals(void **state) {
  (void)state;
  ld_rest_msg_events_t *c = ld_rest_msg_events_new(0, 0);
  char long_id[LD_REST_MSG_EVENTS_MAX_REQUEST_ID + 2];
  memset(long_id, 'x', sizeof long_id - 1);
  long_id[sizeof long_id - 1] = '\0';
  assert_int_equal(ld_rest_msg_events_add_send(c, "", LD_REST_SEND_SENT, H1, NULL, 0),
                   LD_ERR_INVALID_ARG);
  assert_int_equal(ld_rest_msg_events_add_send(c, NULL, LD_REST_SEND_SENT, H1, NULL, 0),
                   LD_ERR_INVALID_ARG);
  assert_int_equal(ld_rest_msg_events_add_send(c, long_id, LD_REST_SEND_SENT, H1, NULL, 0),
                   LD_ERR_INVALID_ARG);
  assert_int_equal(ld_rest_msg_events_add_send(c, "r", (ld_rest_send_kind_t)7, H1, NULL, 0),
                   LD_ERR_INVALID_ARG);
  long_id[LD_REST_MSG_EVENTS_MAX_REQUEST_ID] = '\0';
  assert_int_equal(ld_rest_msg_events_add_send(c, long_id, LD_REST_SEND_SENT, H1, NULL, 0), 0);
  for (int i = 1; i < LD_REST_MSG_EVENTS_MAX_PER_REQUEST; i++)
    assert_int_equal(ld_rest_msg_events_add_send(c, long_id, LD_REST_SEND_SENT, H1, NULL, i), 0);
  assert_int_equal(ld_rest_msg_events_add_send(c, long_id, LD_REST_SEND_SENT, H1, NULL, 0),
                   LD_ERR_LIMIT);
  /* an overlong error text is cut */
  char *big = malloc(LD_REST_MSG_EVENTS_MAX_ERROR * 2 + 1);
  memset(big, 'e', LD_REST_MSG_EVENTS_MAX_ERROR * 2);
  big[LD_REST_MSG_EVENTS_MAX_ERROR * 2] = '\0';
  assert_int_equal(ld_rest_msg_events_add_send(c, "err", LD_REST_SEND_ERROR, NULL, big, 0), 0);
  assert_int_equal(ld_rest_msg_events_add_send(c, "err2", LD_REST_SEND_ERROR, NULL, NULL, 0), 0);
  free(big);
  ld_rest_send_status_t st;
  assert_int_equal(ld_rest_msg_events_poll_send(c, "err", &st), 0);
  assert_int_equal(strlen(st.events[0].error), LD_REST_MSG_EVENTS_MAX_ERROR);
  ld_rest_send_status_clear(&st);
  assert_int_equal(ld_rest_msg_events_poll_send(c, "err2", &st), 0);
  assert_string_equal(st.events[0].error, "");
  ld_rest_send_status_clear(&st);
  assert_int_equal(ld_rest_msg_events_poll_send(c, long_id, &st), 0);
  assert_int_equal(st.n_events, LD_REST_MSG_EVENTS_MAX_PER_REQUEST);
  ld_rest_send_status_clear(&st);
  assert_string_equal(ld_rest_send_kind_name(LD_REST_SEND_PROPAGATED), "propagated");
  assert_string_equal(ld_rest_send_kind_name(LD_REST_SEND_SENT), "sent");
  assert_string_equal(ld_rest_send_kind_name(LD_REST_SEND_ERROR), "error");
  ld_rest_msg_events_free(c);
}

static void received_ring_keeps_the_newest(void **state) {
  (void)state;
  ld_rest_msg_events_t *c = ld_rest_msg_events_new(3, 0);
  for (int i = 0; i < 5; i++) {
    char payload[8], topic[32];
    snprintf(payload, sizeof payload, "m%d", i);
    snprintf(topic, sizeof topic, "/app/1/t%d/proto", i);
    ld_waku_message_t m;
    ld_waku_message_init(&m);
    m.payload = (const uint8_t *)payload;
    m.payload_len = strlen(payload);
    m.content_topic = topic;
    m.content_topic_len = strlen(topic);
    m.timestamp = i;
    uint8_t hash[LD_WAKU_HASH_LEN] = {(uint8_t)i};
    assert_int_equal(ld_rest_msg_events_add_received(c, hash, &m), 0);
    /* the cache holds its own copy */
    memset(payload, 'X', sizeof payload);
    memset(topic, 'X', sizeof topic);
  }
  assert_int_equal(ld_rest_msg_events_received_count(c), 3);
  ld_rest_received_t *list = NULL;
  size_t n = 0;
  assert_int_equal(ld_rest_msg_events_poll_received(c, &list, &n), 0);
  assert_int_equal(n, 3);
  for (size_t i = 0; i < 3; i++) {
    char payload[8];
    snprintf(payload, sizeof payload, "m%zu", i + 2);
    assert_int_equal(list[i].hash[0], i + 2);
    assert_int_equal(list[i].msg.payload_len, strlen(payload));
    assert_memory_equal(list[i].msg.payload, payload, strlen(payload));
    assert_int_equal(list[i].msg.timestamp, (int64_t)(i + 2));
    assert_int_equal(list[i].msg.content_topic[0], '/');
  }
  ld_rest_received_free(list, n);
  assert_int_equal(ld_rest_msg_events_received_count(c), 0);
  assert_int_equal(ld_rest_msg_events_poll_received(c, &list, &n), 0);
  assert_null(list);
  assert_int_equal(n, 0);
  /* messages left unpolled are freed with the cache */
  ld_waku_message_t m;
  ld_waku_message_init(&m);
  m.payload = (const uint8_t *)"x";
  m.payload_len = 1;
  assert_int_equal(ld_rest_msg_events_add_received(c, H1, &m), 0);
  ld_rest_msg_events_add_send(c, "left", LD_REST_SEND_ERROR, NULL, "unpolled", 1);
  ld_rest_msg_events_free(c);
  ld_rest_msg_events_free(NULL);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(timelines_group_by_request),
      cmocka_unit_test(one_request_is_polled_alone),
      cmocka_unit_test(oldest_request_goes_beyond_the_cap),
      cmocka_unit_test(timeline_refusals),
      cmocka_unit_test(received_ring_keeps_the_newest),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
