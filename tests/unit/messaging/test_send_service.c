/* The send service's delivery tasks driven with a fake clock and fake relay, lightpush and
 * confirmation ops: processor chain and fallback, lightpush status codes, retries per tick, store
 * confirmation batching and spacing, the two timeouts, ephemeral and reliability-off sends, the
 * size check, the pending bound, and the exact order of the events. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "base/error.h"
#include "messaging/send_service.h"
#include "waku/lightpush/codec.h"

#define PUBSUB "/waku/2/rs/0/0"
#define CONTENT "/test/1/send/proto"
#define MAX_SEEN 256

typedef struct fake {
  ld_send_service_t *s;
  /* relay */
  int relay_peers; /* what relay_publish answers */
  int relay_calls;
  uint64_t relay_task; /* the task of the last relay_publish */
  uint8_t relay_hash[LD_WAKU_HASH_LEN];
  uint8_t event_hash[LD_WAKU_HASH_LEN]; /* of the last event */
  int64_t event_timestamp;
  /* lightpush */
  bool lp_peer; /* false: lightpush_start fails (no service peer) */
  int lp_calls;
  uint64_t lp_tasks[MAX_SEEN];
  /* confirmation */
  bool store_peer; /* false: confirm_start fails */
  int confirm_calls;
  uint8_t confirm_hashes[LD_SEND_CONFIRM_BATCH_MAX][LD_WAKU_HASH_LEN];
  size_t confirm_n;
  /* events */
  char log[8192];
  int events;
  bool last_done;
  char last_error[LD_SEND_ERROR_MAX];
  /* submit another message from inside the first PROPAGATED event */
  bool submit_from_event;
} fake_t;

static void note(fake_t *f, const char *what) {
  size_t n = strlen(f->log);
  snprintf(f->log + n, sizeof f->log - n, "%s%s", n > 0 ? "," : "", what);
}

/* The ops get the message's Waku hash computed at submission: it must be the real one. */
static void assert_hash_of(const char *pubsub_topic, const ld_waku_message_t *msg,
                           const uint8_t hash[LD_WAKU_HASH_LEN]) {
  uint8_t expect[LD_WAKU_HASH_LEN];
  assert_int_equal(ld_waku_message_hash(pubsub_topic, msg, expect), 0);
  assert_non_null(hash);
  assert_memory_equal(hash, expect, LD_WAKU_HASH_LEN);
}

static int fake_relay(void *ud, uint64_t task_id, const char *pubsub_topic,
                      const ld_waku_message_t *msg, const uint8_t hash[LD_WAKU_HASH_LEN]) {
  fake_t *f = ud;
  assert_string_equal(pubsub_topic, PUBSUB);
  assert_non_null(msg);
  assert_hash_of(pubsub_topic, msg, hash);
  f->relay_calls++;
  f->relay_task = task_id;
  memcpy(f->relay_hash, hash, LD_WAKU_HASH_LEN);
  return f->relay_peers;
}

static int fake_lightpush(void *ud, uint64_t task_id, const char *pubsub_topic,
                          const ld_waku_message_t *msg, const uint8_t hash[LD_WAKU_HASH_LEN]) {
  fake_t *f = ud;
  assert_string_equal(pubsub_topic, PUBSUB);
  assert_non_null(msg);
  assert_hash_of(pubsub_topic, msg, hash);
  if (!f->lp_peer)
    return LD_ERR_NOT_FOUND;
  assert_true(f->lp_calls < MAX_SEEN);
  f->lp_tasks[f->lp_calls++] = task_id;
  return 0;
}

static int fake_confirm(void *ud, const uint8_t (*hashes)[LD_WAKU_HASH_LEN], size_t n) {
  fake_t *f = ud;
  if (!f->store_peer)
    return LD_ERR_NOT_FOUND;
  assert_true(n >= 1 && n <= LD_SEND_CONFIRM_BATCH_MAX);
  f->confirm_calls++;
  memcpy(f->confirm_hashes, hashes, n * LD_WAKU_HASH_LEN);
  f->confirm_n = n;
  return 0;
}

static void submit_text(fake_t *f, const char *request_id, const char *text, uint64_t now,
                        uint64_t *task_id);

static void fake_event(void *ud, const ld_send_event_t *ev) {
  fake_t *f = ud;
  char buf[LD_SEND_ERROR_MAX + 64];
  static const char *const names[] = {"P", "S", "E", "D"};
  if (ev->kind == LD_SEND_EV_ERROR) {
    snprintf(buf, sizeof buf, "E:%s:%s", ev->request_id, ev->error);
    snprintf(f->last_error, sizeof f->last_error, "%s", ev->error);
  } else {
    snprintf(buf, sizeof buf, "%s:%s", names[ev->kind], ev->request_id);
  }
  note(f, buf);
  memcpy(f->event_hash, ev->hash, LD_WAKU_HASH_LEN);
  f->event_timestamp = ev->timestamp;
  f->events++;
  f->last_done = ev->done;
  if (f->submit_from_event && ev->kind == LD_SEND_EV_PROPAGATED) {
    f->submit_from_event = false;
    submit_text(f, "inner", "from inside", 0, NULL);
  }
}

typedef struct setup {
  bool relay, lightpush, confirm, reliability;
  size_t max_pending;
  size_t max_msg_size;
} setup_t;

static void fake_init(fake_t *f, setup_t s) {
  memset(f, 0, sizeof *f);
  ld_send_ops_t ops = {s.relay ? fake_relay : NULL, s.lightpush ? fake_lightpush : NULL,
                       s.confirm ? fake_confirm : NULL, fake_event};
  ld_send_service_config_t cfg = {s.reliability, 0, 0, s.max_pending, s.max_msg_size};
  f->s = ld_send_service_new(&cfg, &ops, f);
  assert_non_null(f->s);
  f->lp_peer = true;
  f->store_peer = true;
}

static const setup_t CORE = {true, true, true, true, 0, 0};
static const setup_t EDGE = {false, true, true, true, 0, 0};

/* A message on CONTENT with `text` (NULL: no payload) as its payload. */
static ld_waku_message_t text_message(const char *text, int64_t timestamp) {
  ld_waku_message_t msg;
  ld_waku_message_init(&msg);
  if (text != NULL) {
    msg.payload = (const uint8_t *)text;
    msg.payload_len = strlen(text);
  }
  msg.content_topic = CONTENT;
  msg.content_topic_len = strlen(CONTENT);
  msg.timestamp = timestamp;
  return msg;
}

static void submit_text(fake_t *f, const char *request_id, const char *text, uint64_t now,
                        uint64_t *task_id) {
  ld_waku_message_t msg = text_message(text, 1700000000000000000 + (int64_t)now);
  uint8_t hash[LD_WAKU_HASH_LEN], expect[LD_WAKU_HASH_LEN];
  assert_int_equal(ld_send_service_submit(f->s, request_id, PUBSUB, &msg, now, hash, task_id), 0);
  assert_int_equal(ld_waku_message_hash(PUBSUB, &msg, expect), 0);
  assert_memory_equal(hash, expect, LD_WAKU_HASH_LEN);
}

/* A new service with `relay_peers` relay peers, one message submitted and processed at 0 ms;
 * returns its task. */
static uint64_t send_one(fake_t *f, setup_t s, int relay_peers, const char *request_id,
                         const char *text) {
  fake_init(f, s);
  f->relay_peers = relay_peers;
  uint64_t id;
  submit_text(f, request_id, text, 0, &id);
  ld_send_service_process(f->s, 0);
  return id;
}

/* A core service with neither relay nor lightpush peers, one message submitted and processed at
 * `now`; returns its task. */
static uint64_t send_nowhere(fake_t *f, const char *request_id, const char *text, uint64_t now) {
  fake_init(f, CORE);
  f->lp_peer = false;
  uint64_t id;
  submit_text(f, request_id, text, now, &id);
  ld_send_service_process(f->s, now);
  return id;
}

/* The confirmation in flight answers one hash: present or not. */
static void confirm_one(fake_t *f, bool present, uint64_t now) {
  ld_send_service_confirm_done(f->s, 0, &present, 1, now);
}

static ld_send_state_t state_of(fake_t *f, uint64_t id) {
  ld_send_state_t st;
  assert_true(ld_send_service_task_state(f->s, id, &st));
  return st;
}

static void ticks(fake_t *f, uint64_t from, uint64_t to) {
  for (uint64_t t = from; t <= to; t += 1000)
    ld_send_service_tick(f->s, t);
}

/* ---- the happy paths ------------------------------------------------------------------------- */

static void relay_propagates_then_the_store_confirms(void **state) {
  (void)state;
  fake_t f;
  fake_init(&f, CORE);
  f.relay_peers = 3;
  uint64_t id;
  submit_text(&f, "r1", "hello", 0, &id);
  assert_int_equal(f.relay_calls, 0); /* nothing is tried inside submit */
  assert_int_equal(state_of(&f, id), LD_SEND_ENTRY);
  ld_send_service_process(f.s, 10);
  assert_int_equal(f.relay_calls, 1);
  assert_int_equal(f.lp_calls, 0);
  assert_string_equal(f.log, "P:r1");
  assert_false(f.last_done);
  assert_int_equal(state_of(&f, id), LD_SEND_PROPAGATED);
  ticks(&f, 1000, 3000); /* propagated 2,990 ms ago at most: not yet checked */
  assert_int_equal(f.confirm_calls, 0);
  ld_send_service_tick(f.s, 3010);
  assert_int_equal(f.confirm_calls, 1);
  assert_int_equal(f.confirm_n, 1);
  assert_true(ld_send_service_confirm_in_flight(f.s));
  confirm_one(&f, true, 3100);
  assert_string_equal(f.log, "P:r1,S:r1");
  assert_int_equal(ld_send_service_pending(f.s), 0);
  assert_false(ld_send_service_task_state(f.s, id, NULL));
  assert_int_equal(f.relay_calls, 1); /* never re-published */
  ld_send_service_stats_t st;
  ld_send_service_get_stats(f.s, &st);
  assert_int_equal(st.submitted, 1);
  assert_int_equal(st.propagated, 1);
  assert_int_equal(st.validated, 1);
  assert_int_equal(st.failed, 0);
  ld_send_service_free(f.s);
}

static void edge_sends_through_lightpush_only(void **state) {
  (void)state;
  fake_t f;
  uint64_t id = send_one(&f, EDGE, 0, "e1", "light");
  assert_int_equal(f.relay_calls, 0);
  assert_int_equal(f.lp_calls, 1);
  assert_true(f.lp_tasks[0] == id);
  assert_string_equal(f.log, "");
  ticks(&f, 1000, 5000); /* the answer is pending: no second push */
  assert_int_equal(f.lp_calls, 1);
  ld_send_service_lightpush_done(f.s, id, LD_LIGHTPUSH_SUCCESS, NULL, 5500);
  assert_string_equal(f.log, "P:e1");
  ticks(&f, 6000, 8000);
  assert_int_equal(f.confirm_calls, 0);
  ld_send_service_tick(f.s, 8500);
  assert_int_equal(f.confirm_calls, 1);
  confirm_one(&f, true, 8600);
  assert_string_equal(f.log, "P:e1,S:e1");
  ld_send_service_free(f.s);
}

static void relay_without_peers_falls_back_to_lightpush(void **state) {
  (void)state;
  fake_t f;
  uint64_t id = send_one(&f, CORE, 0, "f1", "fallback");
  assert_int_equal(f.relay_calls, 1);
  assert_int_equal(f.lp_calls, 1);
  assert_int_equal(state_of(&f, id), LD_SEND_FALLBACK_RETRY);
  ld_send_service_lightpush_done(f.s, id, LD_LIGHTPUSH_SUCCESS, NULL, 100);
  assert_string_equal(f.log, "P:f1");
  assert_int_equal(state_of(&f, id), LD_SEND_PROPAGATED);
  ld_send_service_free(f.s);
}

/* ---- lightpush answers ----------------------------------------------------------------------- */

static void retryable_lightpush_codes_retry_next_round(void **state) {
  (void)state;
  const uint32_t codes[] = {LD_LIGHTPUSH_TOO_MANY_REQUESTS, LD_LIGHTPUSH_INTERNAL_SERVER_ERROR,
                            LD_LIGHTPUSH_SERVICE_NOT_AVAILABLE, LD_LIGHTPUSH_OUT_OF_RLN_PROOF,
                            LD_LIGHTPUSH_NO_PEERS_TO_RELAY};
  for (size_t i = 0; i < sizeof codes / sizeof codes[0]; i++) {
    fake_t f;
    uint64_t id = send_one(&f, EDGE, 0, "c1", "code");
    ld_send_service_lightpush_done(f.s, id, codes[i], "busy", 200);
    assert_int_equal(state_of(&f, id), LD_SEND_NEXT_ROUND_RETRY);
    assert_int_equal(f.events, 0);
    ld_send_service_tick(f.s, 1000);
    assert_int_equal(f.lp_calls, 2);
    ld_send_service_lightpush_done(f.s, id, LD_LIGHTPUSH_SUCCESS, NULL, 1200);
    assert_string_equal(f.log, "P:c1");
    ld_send_service_free(f.s);
  }
}

static void other_lightpush_codes_fail_with_the_description(void **state) {
  (void)state;
  const uint32_t codes[] = {LD_LIGHTPUSH_BAD_REQUEST, LD_LIGHTPUSH_INVALID_MESSAGE,
                            LD_LIGHTPUSH_PAYLOAD_TOO_LARGE, LD_LIGHTPUSH_UNSUPPORTED_PUBSUB_TOPIC};
  for (size_t i = 0; i < sizeof codes / sizeof codes[0]; i++) {
    fake_t f;
    uint64_t id = send_one(&f, EDGE, 0, "c2", "code");
    ld_send_service_lightpush_done(f.s, id, codes[i], "refused here", 200);
    assert_string_equal(f.log, "E:c2:refused here");
    assert_false(ld_send_service_task_state(f.s, id, NULL));
    ticks(&f, 1000, 70000);
    assert_int_equal(f.events, 1); /* one terminal event only */
    assert_int_equal(f.lp_calls, 1);
    ld_send_service_free(f.s);
  }
  fake_t f;
  uint64_t id = send_one(&f, EDGE, 0, "c3", "code");
  ld_send_service_lightpush_done(f.s, id, LD_LIGHTPUSH_INVALID_MESSAGE, NULL, 10);
  assert_string_equal(f.log, "E:c3:lightpush failed: 420 INVALID_MESSAGE");
  ld_send_service_lightpush_done(f.s, id, LD_LIGHTPUSH_SUCCESS, NULL, 20); /* gone: ignored */
  assert_int_equal(f.events, 1);
  ld_send_service_free(f.s);
}

/* ---- retries and the timeouts ---------------------------------------------------------------- */

static void nothing_to_send_with_fails_after_the_retry_window(void **state) {
  (void)state;
  fake_t f;
  uint64_t id = send_nowhere(&f, "w1", "nobody", 500);
  assert_int_equal(state_of(&f, id), LD_SEND_NEXT_ROUND_RETRY);
  for (uint64_t t = 1500; t < 60500; t += 1000)
    ld_send_service_tick(f.s, t);
  assert_int_equal(f.relay_calls, 60); /* once by process, then every tick */
  assert_int_equal(f.events, 0);
  ld_send_service_tick(f.s, 60500);
  assert_string_equal(f.log, "E:w1:" LD_SEND_ERR_RETRY_WINDOW);
  assert_false(ld_send_service_task_state(f.s, id, NULL));
  ticks(&f, 61500, 65500);
  assert_int_equal(f.events, 1);
  ld_send_service_free(f.s);
}

static void a_peer_within_the_window_saves_the_send(void **state) {
  (void)state;
  fake_t f;
  send_nowhere(&f, "w2", "late peer", 0);
  ticks(&f, 1000, 20000);
  f.relay_peers = 1;
  ld_send_service_tick(f.s, 21000);
  assert_string_equal(f.log, "P:w2");
  f.store_peer = false;
  ticks(&f, 22000, 70000);
  assert_string_equal(f.log, "P:w2");
  ld_send_service_free(f.s);
}

static void unconfirmed_messages_are_dropped_silently(void **state) {
  (void)state;
  fake_t f;
  uint64_t id = send_one(&f, CORE, 2, "d1", "no store");
  f.store_peer = false; /* asked at the first check only */
  assert_string_equal(f.log, "P:d1");
  ticks(&f, 1000, 59000);
  assert_int_equal(f.confirm_calls, 0);
  assert_int_equal(state_of(&f, id), LD_SEND_PROPAGATED);
  ld_send_service_tick(f.s, 60000);
  assert_string_equal(f.log, "P:d1,D:d1"); /* no ERROR: given up without an app event */
  assert_false(ld_send_service_task_state(f.s, id, NULL));
  ld_send_service_stats_t st;
  ld_send_service_get_stats(f.s, &st);
  assert_int_equal(st.validation_timeouts, 1);
  assert_int_equal(st.failed, 0);
  ld_send_service_free(f.s);
}

static void absent_messages_are_published_again(void **state) {
  (void)state;
  fake_t f;
  uint64_t id = send_one(&f, CORE, 2, "a1", "absent");
  uint64_t t = 3000, checks = 0;
  while (ld_send_service_task_state(f.s, id, NULL)) {
    ld_send_service_tick(f.s, t);
    if (ld_send_service_confirm_in_flight(f.s)) {
      checks++;
      confirm_one(&f, false, t + 100);
      assert_int_equal(state_of(&f, id), LD_SEND_NEXT_ROUND_RETRY);
    }
    t += 1000;
  }
  /* checks at 3 s, then the next tick re-publishes, and 3 s later the next check … */
  assert_int_equal(t, 61000);   /* given up at the tick of 60 s */
  assert_int_equal(checks, 15); /* at 3 s, 7 s, …, 59 s */
  /* published again after each absent answer but the last: at 60 s the window is over */
  assert_int_equal(f.relay_calls, 15);
  assert_string_equal(f.log, "P:a1,D:a1");
  ld_send_service_free(f.s);
}

/* A confirmation that only knows what is present (peer presence): an unconfirmed send stays
 * Propagated, is asked about again at once and never re-published, until it is confirmed. */
static void presence_answers_leave_unconfirmed_sends_propagated(void **state) {
  (void)state;
  fake_t f;
  uint64_t id = send_one(&f, CORE, 2, "u1", "not yet");
  ld_send_service_tick(f.s, 3000);
  assert_int_equal(f.confirm_calls, 1);
  bool no = false, yes = true;
  for (uint64_t t = 3100; t < 3600; t += 100) {
    ld_send_service_confirm_some(f.s, 0, &no, 1, t);
    assert_int_equal(state_of(&f, id), LD_SEND_PROPAGATED);
    assert_true(ld_send_service_confirm_in_flight(f.s)); /* the next batch: asked again */
  }
  ld_send_service_tick(f.s, 4000);
  assert_int_equal(f.relay_calls, 1); /* never published again */
  ld_send_service_confirm_some(f.s, 0, &yes, 1, 4100);
  assert_string_equal(f.log, "P:u1,S:u1");
  assert_false(ld_send_service_task_state(f.s, id, NULL));
  ld_send_service_free(f.s);
}

static void lightpush_in_flight_is_not_timed_out(void **state) {
  (void)state;
  fake_t f;
  uint64_t id = send_one(&f, EDGE, 0, "t1", "slow");
  ticks(&f, 1000, 65000);
  assert_int_equal(f.events, 0);
  ld_send_service_lightpush_done(f.s, id, LD_LIGHTPUSH_NO_PEERS_TO_RELAY, NULL, 65500);
  assert_int_equal(f.events, 0);
  ld_send_service_tick(f.s, 66000);
  assert_string_equal(f.log, "E:t1:" LD_SEND_ERR_RETRY_WINDOW LD_SEND_ERR_LAST_ERROR
                             "lightpush failed: 505 NO_PEERS_TO_RELAY");
  ld_send_service_free(f.s);
}

/* Retryable answers until the window ends: the error names the last one (its description, or
 * its code when it had none). */
static void the_window_error_carries_the_last_answer(void **state) {
  (void)state;
  fake_t f;
  uint64_t id = send_one(&f, EDGE, 0, "l1", "always busy");
  ld_send_service_lightpush_done(f.s, id, LD_LIGHTPUSH_NO_PEERS_TO_RELAY,
                                 "No peers for topic, skipping publish", 100);
  ld_send_service_tick(f.s, 1000);
  ld_send_service_lightpush_done(f.s, id, LD_LIGHTPUSH_TOO_MANY_REQUESTS,
                                 "Request rejected due to too many requests", 1100);
  f.lp_peer = false; /* paused: no push, nothing new to report */
  ticks(&f, 2000, 59000);
  assert_int_equal(f.lp_calls, 2);
  assert_int_equal(f.events, 0);
  ld_send_service_tick(f.s, 60000);
  assert_string_equal(f.log, "E:l1:" LD_SEND_ERR_RETRY_WINDOW LD_SEND_ERR_LAST_ERROR
                             "Request rejected due to too many requests");
  ld_send_service_free(f.s);
}

/* ---- confirmation batching and pacing -------------------------------------------------------- */

/* One confirmation in flight at a time; a task becomes eligible confirm_after_ms after its last
 * propagation; an answered confirmation starts the next eligible batch at once. */
static void confirmations_keep_pace_one_at_a_time(void **state) {
  (void)state;
  fake_t f;
  fake_init(&f, CORE);
  f.relay_peers = 1;
  uint64_t id1, id2;
  submit_text(&f, "b1", "one", 0, &id1);
  ld_send_service_process(f.s, 0);
  submit_text(&f, "b2", "two", 1000, &id2);
  ld_send_service_process(f.s, 1000);
  ld_send_service_tick(f.s, 2900);
  assert_int_equal(f.confirm_calls, 0); /* nothing propagated 3 s ago yet */
  ld_send_service_tick(f.s, 3000);
  assert_int_equal(f.confirm_calls, 1);
  assert_int_equal(f.confirm_n, 1); /* b2 was propagated 2 s ago only */
  confirm_one(&f, false, 3100);
  assert_int_equal(f.confirm_calls, 1); /* b2 not eligible before 4 s */
  assert_int_equal(state_of(&f, id1), LD_SEND_NEXT_ROUND_RETRY);
  ld_send_service_tick(f.s, 4000); /* b1 published again; b2 due now */
  assert_int_equal(f.relay_calls, 3);
  assert_int_equal(f.confirm_calls, 2);
  assert_int_equal(f.confirm_n, 1); /* b2 only: b1 was published again at 4 s */
  ld_send_service_tick(f.s, 5000);
  ld_send_service_tick(f.s, 7000); /* one in flight: no second one */
  assert_int_equal(f.confirm_calls, 2);
  confirm_one(&f, true, 7100); /* b2 confirmed; b1 (4 s) is due: checked at once */
  assert_string_equal(f.log, "P:b1,P:b2,S:b2");
  assert_int_equal(f.confirm_calls, 3);
  assert_int_equal(f.confirm_n, 1);
  confirm_one(&f, true, 7200);
  assert_string_equal(f.log, "P:b1,P:b2,S:b2,S:b1");
  assert_int_equal(f.confirm_calls, 3); /* nothing left */
  ld_send_service_free(f.s);
}

static void one_confirmation_takes_at_most_a_batch(void **state) {
  (void)state;
  fake_t f;
  fake_init(&f, CORE);
  f.relay_peers = 1;
  const size_t total = LD_SEND_CONFIRM_BATCH_MAX + 50;
  uint8_t first[LD_WAKU_HASH_LEN];
  for (size_t i = 0; i < total; i++) {
    char rid[16], text[16];
    snprintf(rid, sizeof rid, "m%zu", i);
    snprintf(text, sizeof text, "msg %zu", i);
    submit_text(&f, rid, text, 0, NULL);
    if (i == 0) {
      ld_waku_message_t msg = text_message(text, 1700000000000000000);
      ld_waku_message_hash(PUBSUB, &msg, first);
    }
  }
  ld_send_service_process(f.s, 0);
  assert_int_equal(f.events, (int)total);
  ld_send_service_tick(f.s, 3000);
  assert_int_equal(f.confirm_n, LD_SEND_CONFIRM_BATCH_MAX);
  assert_memory_equal(f.confirm_hashes[0], first, LD_WAKU_HASH_LEN); /* oldest first */
  bool all[LD_SEND_CONFIRM_BATCH_MAX];
  for (size_t i = 0; i < LD_SEND_CONFIRM_BATCH_MAX; i++)
    all[i] = true;
  ld_send_service_confirm_done(f.s, 0, all, LD_SEND_CONFIRM_BATCH_MAX, 3100);
  assert_int_equal(ld_send_service_pending(f.s), 50);
  ld_send_service_tick(f.s, 6000);
  assert_int_equal(f.confirm_n, 50);
  ld_send_service_confirm_done(f.s, 0, all, 50, 6100);
  assert_int_equal(ld_send_service_pending(f.s), 0);
  assert_int_equal(f.events, (int)(2 * total));
  ld_send_service_free(f.s);
}

static void a_failed_confirmation_changes_nothing(void **state) {
  (void)state;
  fake_t f;
  uint64_t id = send_one(&f, CORE, 1, "x1", "x");
  ld_send_service_tick(f.s, 3000);
  assert_int_equal(f.confirm_calls, 1);
  ld_send_service_confirm_done(f.s, LD_ERR_TIMEOUT, NULL, 0, 3500);
  assert_int_equal(state_of(&f, id), LD_SEND_PROPAGATED);
  assert_int_equal(f.relay_calls, 1);
  assert_int_equal(f.confirm_calls, 1); /* a failure waits for the next tick */
  ld_send_service_tick(f.s, 4000);
  assert_int_equal(f.confirm_calls, 2);
  ld_send_service_confirm_done(f.s, 0, NULL, 0, 4100); /* answered, none present */
  assert_int_equal(state_of(&f, id), LD_SEND_NEXT_ROUND_RETRY);
  ld_send_service_confirm_done(f.s, 0, NULL, 0, 4200); /* nothing in flight: ignored */
  ld_send_service_free(f.s);
}

/* ---- without confirmation -------------------------------------------------------------------- */

static void ephemeral_and_reliability_off_end_at_propagation(void **state) {
  (void)state;
  for (int variant = 0; variant < 3; variant++) {
    fake_t f;
    setup_t s = CORE;
    if (variant == 1)
      s.reliability = false;
    if (variant == 2)
      s.confirm = false;
    fake_init(&f, s);
    f.relay_peers = 1;
    ld_waku_message_t msg = text_message("e", 0);
    msg.ephemeral = variant == 0;
    uint64_t id;
    assert_int_equal(ld_send_service_submit(f.s, "p1", PUBSUB, &msg, 0, NULL, &id), 0);
    ld_send_service_process(f.s, 0);
    assert_string_equal(f.log, "P:p1");
    assert_true(f.last_done);
    assert_false(ld_send_service_task_state(f.s, id, NULL));
    ticks(&f, 1000, 70000);
    assert_int_equal(f.confirm_calls, 0);
    assert_int_equal(f.events, 1);
    ld_send_service_free(f.s);
  }
}

/* ---- refusals -------------------------------------------------------------------------------- */

static void oversize_messages_fail_before_any_processor(void **state) {
  (void)state;
  fake_t f;
  setup_t s = CORE;
  s.max_msg_size = 100;
  fake_init(&f, s);
  f.relay_peers = 5;
  char big[200];
  memset(big, 'x', sizeof big - 1);
  big[sizeof big - 1] = '\0';
  uint64_t id;
  submit_text(&f, "o1", big, 0, &id);
  submit_text(&f, "o2", "small", 0, NULL);
  ld_send_service_process(f.s, 0);
  assert_string_equal(f.log, "E:o1:Message size exceeded maximum of 100 bytes,P:o2");
  assert_int_equal(f.relay_calls, 1);
  assert_false(ld_send_service_task_state(f.s, id, NULL));
  ld_send_service_free(f.s);
}

static void relay_errors_and_relay_only_nodes(void **state) {
  (void)state;
  fake_t f;
  setup_t s = CORE;
  s.lightpush = false;
  fake_init(&f, s);
  f.relay_peers = 0;
  submit_text(&f, "n1", "none", 0, NULL);
  ld_send_service_process(f.s, 0);
  assert_string_equal(f.log, "E:n1:No peers to relay the message");
  f.log[0] = '\0';
  f.relay_peers = LD_ERR_NOMEM;
  submit_text(&f, "n2", "err", 0, NULL);
  ld_send_service_process(f.s, 0);
  assert_string_equal(f.log, "E:n2:Failed to publish via relay: out of memory");
  ld_send_service_free(f.s);
}

static void pending_tasks_are_bounded(void **state) {
  (void)state;
  fake_t f;
  setup_t s = CORE;
  s.max_pending = 2;
  fake_init(&f, s);
  ld_waku_message_t msg = text_message(NULL, 0);
  assert_int_equal(ld_send_service_submit(f.s, "1", PUBSUB, &msg, 0, NULL, NULL), 0);
  assert_int_equal(ld_send_service_submit(f.s, "2", PUBSUB, &msg, 0, NULL, NULL), 0);
  assert_int_equal(ld_send_service_submit(f.s, "3", PUBSUB, &msg, 0, NULL, NULL), LD_ERR_LIMIT);
  assert_int_equal(ld_send_service_submit(f.s, NULL, PUBSUB, &msg, 0, NULL, NULL),
                   LD_ERR_INVALID_ARG);
  char longid[LD_SEND_REQUEST_ID_MAX + 1];
  memset(longid, 'a', sizeof longid - 1);
  longid[sizeof longid - 1] = '\0';
  assert_int_equal(ld_send_service_submit(f.s, longid, PUBSUB, &msg, 0, NULL, NULL),
                   LD_ERR_INVALID_ARG);
  assert_int_equal(ld_send_service_pending(f.s), 2);
  ld_send_service_free(f.s); /* tasks freed without events */
  assert_int_equal(f.events, 0);

  ld_send_ops_t none = {NULL, NULL, fake_confirm, fake_event};
  ld_send_service_config_t cfg = {true, 0, 0, 0, 0};
  assert_null(ld_send_service_new(&cfg, &none, &f));
  ld_send_ops_t no_event = {fake_relay, NULL, NULL, NULL};
  assert_null(ld_send_service_new(&cfg, &no_event, &f));
  ld_send_service_free(NULL);
}

/* ---- event order and re-entrancy ------------------------------------------------------------- */

static void events_come_in_order_and_listeners_may_submit(void **state) {
  (void)state;
  fake_t f;
  fake_init(&f, CORE);
  f.relay_peers = 1;
  f.submit_from_event = true;
  submit_text(&f, "q1", "first", 0, NULL);
  submit_text(&f, "q2", "second", 0, NULL);
  ld_send_service_process(f.s, 0);
  assert_string_equal(f.log, "P:q1,P:q2");
  assert_int_equal(ld_send_service_pending(f.s), 3); /* "inner" waits in Entry */
  ld_send_service_process(f.s, 0);
  assert_string_equal(f.log, "P:q1,P:q2,P:inner");
  ld_send_service_tick(f.s, 3000);
  assert_int_equal(f.confirm_n, 3);
  bool answer[3] = {true, false, true};
  ld_send_service_confirm_done(f.s, 0, answer, 3, 3100);
  assert_string_equal(f.log, "P:q1,P:q2,P:inner,S:q1,S:inner");
  ld_send_service_free(f.s);
}

static void state_names(void **state) {
  (void)state;
  assert_string_equal(ld_send_state_name(LD_SEND_ENTRY), "Entry");
  assert_string_equal(ld_send_state_name(LD_SEND_PROPAGATED), "SuccessfullyPropagated");
  assert_string_equal(ld_send_state_name(LD_SEND_VALIDATED), "SuccessfullyValidated");
  assert_string_equal(ld_send_state_name(LD_SEND_FALLBACK_RETRY), "FallbackRetry");
  assert_string_equal(ld_send_state_name(LD_SEND_NEXT_ROUND_RETRY), "NextRoundRetry");
  assert_string_equal(ld_send_state_name(LD_SEND_FAILED), "FailedToDeliver");
}

/* ---- relay outcomes that come later (RLN-relay proves first) --------------------------------- */

/* Nothing is reported before the outcome; a publisher that stamped the message again makes the
 * events and the confirmations carry the hash of the message as published. */
static void a_later_relay_outcome_carries_the_final_hash(void **state) {
  (void)state;
  fake_t f;
  uint64_t id = send_one(&f, CORE, LD_SEND_LATER, "l1", "proved");
  assert_int_equal(f.relay_calls, 1);
  assert_true(f.relay_task == id);
  assert_int_equal(f.lp_calls, 0);
  assert_string_equal(f.log, ""); /* not propagated before relay has it */
  ticks(&f, 1000, 70000);         /* in flight: neither retried nor timed out */
  assert_int_equal(f.relay_calls, 1);
  assert_string_equal(f.log, "");
  int64_t restamped = 1700000000000000000 + 69000000000;
  ld_send_service_relay_done(f.s, id, 2, restamped, 70000);
  assert_string_equal(f.log, "P:l1");
  ld_waku_message_t published = text_message("proved", restamped);
  assert_hash_of(PUBSUB, &published, f.event_hash);
  assert_true(f.event_timestamp == restamped);
  ld_send_service_tick(f.s, 73000);
  assert_int_equal(f.confirm_calls, 1);
  assert_memory_equal(f.confirm_hashes[0], f.event_hash, LD_WAKU_HASH_LEN);
  /* absent: published again, with the message as it went out */
  confirm_one(&f, false, 73100);
  f.relay_peers = 1;
  ld_send_service_tick(f.s, 74000);
  assert_int_equal(f.relay_calls, 2);
  assert_memory_equal(f.relay_hash, f.event_hash, LD_WAKU_HASH_LEN);
  ld_send_service_relay_done(f.s, id, 1, restamped, 74000); /* no longer in flight: ignored */
  assert_string_equal(f.log, "P:l1");
  ld_send_service_free(f.s);
}

/* A later failure (no RLN message id left, the proof failed) is the send's error; a later "no
 * peers" falls back to lightpush. */
static void a_later_relay_failure_is_the_send_error(void **state) {
  (void)state;
  fake_t f;
  uint64_t id = send_one(&f, CORE, LD_SEND_LATER, "l2", "refused");
  ld_send_service_relay_done(f.s, id, LD_ERR_LIMIT, 0, 500);
  char want[LD_SEND_ERROR_MAX + 16];
  snprintf(want, sizeof want, "E:l2:Failed to publish via relay: %s", ld_strerror(LD_ERR_LIMIT));
  assert_string_equal(f.log, want);
  assert_int_equal(ld_send_service_pending(f.s), 0);
  assert_int_equal(f.lp_calls, 0);
  ld_send_service_free(f.s);

  id = send_one(&f, CORE, LD_SEND_LATER, "l3", "nobody");
  ld_send_service_relay_done(f.s, id, 0, 1700000000000000000, 500);
  assert_int_equal(f.lp_calls, 1);
  assert_true(f.lp_tasks[0] == id);
  assert_string_equal(f.log, "");
  ld_send_service_lightpush_done(f.s, id, LD_LIGHTPUSH_SUCCESS, NULL, 600);
  assert_string_equal(f.log, "P:l3");
  ld_send_service_free(f.s);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(relay_propagates_then_the_store_confirms),
      cmocka_unit_test(edge_sends_through_lightpush_only),
      cmocka_unit_test(relay_without_peers_falls_back_to_lightpush),
      cmocka_unit_test(retryable_lightpush_codes_retry_next_round),
      cmocka_unit_test(the_window_error_carries_the_last_answer),
      cmocka_unit_test(other_lightpush_codes_fail_with_the_description),
      cmocka_unit_test(nothing_to_send_with_fails_after_the_retry_window),
      cmocka_unit_test(a_peer_within_the_window_saves_the_send),
      cmocka_unit_test(unconfirmed_messages_are_dropped_silently),
      cmocka_unit_test(absent_messages_are_published_again),
      cmocka_unit_test(presence_answers_leave_unconfirmed_sends_propagated),
      cmocka_unit_test(lightpush_in_flight_is_not_timed_out),
      cmocka_unit_test(confirmations_keep_pace_one_at_a_time),
      cmocka_unit_test(one_confirmation_takes_at_most_a_batch),
      cmocka_unit_test(a_failed_confirmation_changes_nothing),
      cmocka_unit_test(ephemeral_and_reliability_off_end_at_propagation),
      cmocka_unit_test(oversize_messages_fail_before_any_processor),
      cmocka_unit_test(relay_errors_and_relay_only_nodes),
      cmocka_unit_test(pending_tasks_are_bounded),
      cmocka_unit_test(events_come_in_order_and_listeners_may_submit),
      cmocka_unit_test(state_names),
      cmocka_unit_test(a_later_relay_outcome_carries_the_final_hash),
      cmocka_unit_test(a_later_relay_failure_is_the_send_error),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
