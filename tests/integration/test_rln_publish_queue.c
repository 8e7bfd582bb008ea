/* The RLN publish queue's outcome and timestamps, on two of our nodes on loopback: A (RLN-relay
 * member, proving) and B (RLN-relay, validating only; B dials A), one static group.
 *
 *  - A send through the Messaging API on A is reported propagated only once its proof is made and
 *    the message handed to relay (the queue's published count says so at the event), with the
 *    hash of the message B received; the record of the send carries that hash.
 *  - A message that waits in the queue longer than the validators' clock gap (the queue is held,
 *    as under a long backlog) is stamped again when its proof starts: B accepts it (not as
 *    invalid_timestamp), and its propagated event and record carry the hash of the message as
 *    published.
 *  - A send queued in one epoch and proved in the next, whose message ids another message took
 *    meanwhile, ends with the rate-limit error: never propagated, never on the wire.
 *  - With a 2 s epoch, a message whose proof starts after its epoch ended is stamped again and
 *    claims a message id of the current epoch; B accepts it, and the publish's outcome
 *    (ld_node_publish_async) reports the final timestamp and the hash B saw.
 *  - A REST publish on A (POST /relay/v1/messages/{topic}) of a message held past its restamp is
 *    answered only once it was proved and handed to relay; one that runs out of quota by then is
 *    answered with the rate-limit error.
 * Identities are random; the circuit's files come from LD_RLN_FIXTURES. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <uv.h>

#include "base/base64.h"
#include "base/clock.h"
#include "base/error.h"
#include "http_client.h"
#include "message_collector.h"
#include "messaging/messaging.h"
#include "node/broker.h"
#include "node/events.h"
#include "node/node.h"
#include "node/node_rln_publish.h"
#include "node_harness.h"
#include "rest_call.h"
#include "rln_harness.h"
#include "waku/rln/proof.h"
#include "waku/rln/validator.h"

#define TOPIC "/waku/2/rs/0/0"
#define CONTENT_TOPIC "/rln/1/queue/proto"
#define MEMBERS 10
#define OURS 4
#define LONG_EPOCH_SEC 1000000000ull /* no epoch change can fall inside a test */
#define WAIT_MS 120000

static uv_loop_t g_loop;
static rh_group_t g_group;

static size_t mesh(ld_node_t *n) {
  return ld_gs_service_mesh_peers(ld_node_gossipsub(n), TOPIC, NULL, 0);
}

/* A node's settings: one shard in the network (every content topic's shard is TOPIC). */
static ld_node_config_t *config(uint64_t epoch_sec, bool member) {
  char err[256];
  ld_node_config_t *cfg = nh_config();
  assert_int_equal(ld_node_config_set_num_shards(cfg, 1, err, sizeof err), 0);
  rh_configure(&g_group, cfg, epoch_sec, member);
  return cfg;
}

/* Two of our nodes in one mesh: A proving (a member of the group), B validating only (B dials
 * A), and what B received. */
typedef struct pair {
  ld_node_t *a;
  ld_node_t *b;
  got_t at_b;
} pair_t;

typedef struct pair_opts {
  uint64_t limit;     /* messages per epoch */
  uint64_t epoch_sec; /* the epoch's length */
  bool rest;          /* A serves REST (on a port of its choosing) */
  bool held;          /* A's publish queue is held once the mesh is up */
} pair_opts_t;

/* Makes a group of MEMBERS with A as member OURS, starts A and B as `o` says, waits for the
 * mesh and holds A's queue if asked. */
static void start_pair(pair_t *p, pair_opts_t o) {
  memset(p, 0, sizeof *p);
  rh_group_make(&g_group, MEMBERS, o.limit, OURS);
  rh_prover(&g_group);
  ld_node_config_t *ca = config(o.epoch_sec, true);
  ca->rest.enabled = o.rest;
  ca->rest.port = 0;
  p->a = nh_start(&g_loop, ca);
  ld_node_config_t *cb = config(o.epoch_sec, false);
  nh_add_static(cb, p->a);
  p->b = nh_start_subscribed(&g_loop, cb, LD_EVENT_MESSAGE, got_on_message, &p->at_b);
  NH_WAIT_FOR(&g_loop, mesh(p->a) == 1 && mesh(p->b) == 1, WAIT_MS);
  if (o.held)
    ld_node_rln_publish_hold(p->a, true);
}

static void stop_pair(pair_t *p) {
  nh_stop(&g_loop, p->a, WAIT_MS);
  nh_stop(&g_loop, p->b, WAIT_MS);
  rh_group_free(&g_group);
}

/* A publishes a message "hog" (taking a message id of the current epoch when it is proved). */
static void publish_hog(ld_node_t *a) {
  ld_waku_message_t hog;
  ld_waku_message_init(&hog);
  hog.payload = (const uint8_t *)"hog";
  hog.payload_len = 3;
  hog.content_topic = CONTENT_TOPIC;
  hog.content_topic_len = strlen(CONTENT_TOPIC);
  assert_int_equal(ld_node_publish(a, TOPIC, &hog, NULL), 1);
}

/* No message was refused by the validator, for any reason. */
static void assert_none_invalid(const ld_rln_validator_stats_t *v) {
  for (int r = 1; r < LD_RLN_REASON_COUNT; r++)
    assert_int_equal(v->by_reason[r], 0);
}

static uint64_t published(ld_node_t *n) {
  ld_node_rln_proving_stats_t st;
  ld_node_rln_proving_stats(n, &st);
  return st.published;
}

static uint64_t restamped(ld_node_t *n) {
  ld_node_rln_proving_stats_t st;
  ld_node_rln_proving_stats(n, &st);
  return st.restamped;
}

/* ---- the Messaging API's send events --------------------------------------------------------- */

#define MAX_OUTCOMES 8

typedef struct outcome {
  char request_id[LD_MESSAGING_REQUEST_ID_LEN + 1];
  bool propagated;
  uint64_t published_then; /* A's queue's published count at the event */
  uint8_t hash[LD_WAKU_HASH_LEN];
  char error[256];
} outcome_t;

typedef struct sends {
  ld_node_t *node;
  outcome_t out[MAX_OUTCOMES];
  size_t n;
} sends_t;

static void on_send_event(int kind, const void *payload, void *ud) {
  const ld_messaging_send_event_t *ev = payload;
  sends_t *s = ud;
  assert_true(s->n < MAX_OUTCOMES);
  outcome_t *o = &s->out[s->n++];
  snprintf(o->request_id, sizeof o->request_id, "%s", ev->request_id);
  o->propagated = kind == LD_EVENT_MESSAGING_PROPAGATED;
  o->published_then = published(s->node);
  memcpy(o->hash, ev->hash, LD_WAKU_HASH_LEN);
  if (ev->error != NULL)
    snprintf(o->error, sizeof o->error, "%s", ev->error);
}

static const outcome_t *outcome_of(const sends_t *s, const char *request_id) {
  for (size_t i = 0; i < s->n; i++)
    if (strcmp(s->out[i].request_id, request_id) == 0)
      return &s->out[i];
  return NULL;
}

static void send_text(ld_messaging_t *m, const char *text,
                      char request_id[LD_MESSAGING_REQUEST_ID_LEN + 1]) {
  ld_messaging_envelope_t env = {0};
  env.content_topic = CONTENT_TOPIC;
  env.payload = (const uint8_t *)text;
  env.payload_len = strlen(text);
  char why[256] = "";
  assert_int_equal(ld_messaging_send(m, &env, request_id, why, sizeof why), 0);
}

static void on_freed(void *ud) {
  *(bool *)ud = true;
}

static void on_freed_handle(uv_handle_t *h) {
  *(bool *)h->data = true;
}

/* A's messaging client (reliability off: done at propagation, so the event is the send's
 * outcome) with its send events collected. */
static ld_messaging_t *messaging_on(ld_node_t *a, sends_t *sends) {
  ld_messaging_config_t mc;
  ld_messaging_config_default(&mc);
  mc.reliability = false;
  int rc = 0;
  ld_messaging_t *m = ld_messaging_new(a, &mc, &rc);
  assert_non_null(m);
  sends->node = a;
  ld_broker_t *broker = ld_node_broker(a);
  assert_true(ld_broker_subscribe(broker, LD_EVENT_MESSAGING_PROPAGATED, on_send_event, sends) > 0);
  assert_true(ld_broker_subscribe(broker, LD_EVENT_MESSAGING_ERROR, on_send_event, sends) > 0);
  return m;
}

static void messaging_off(ld_messaging_t *m) {
  bool freed = false;
  ld_messaging_free(m, on_freed, &freed);
  NH_WAIT_FOR(&g_loop, freed, WAIT_MS);
}

static void messaging_sends_end_when_the_proof_is_published(void **state) {
  (void)state;
  enum { LIMIT = 2 };
  pair_t p;
  start_pair(&p, (pair_opts_t){.limit = LIMIT, .epoch_sec = LONG_EPOCH_SEC});
  const ld_rln_validator_stats_t *vb = ld_node_rln_stats(p.b);
  sends_t sends = {0};
  ld_messaging_t *m = messaging_on(p.a, &sends);

  /* propagated once proved and handed to relay, with the hash B receives */
  char first[LD_MESSAGING_REQUEST_ID_LEN + 1];
  send_text(m, "queued-1", first);
  NH_WAIT_FOR(&g_loop, outcome_of(&sends, first) != NULL, WAIT_MS);
  const outcome_t *o = outcome_of(&sends, first);
  assert_true(o->propagated);
  assert_int_equal(o->published_then, 1);
  NH_WAIT_FOR(&g_loop, got_payload(&p.at_b, "queued-1"), WAIT_MS);
  assert_memory_equal(p.at_b.hash[got_find(&p.at_b, "queued-1")], o->hash, LD_WAKU_HASH_LEN);
  const ld_message_record_t *rec = ld_messaging_record_by_request(m, first);
  assert_non_null(rec);
  assert_memory_equal(rec->hash, o->hash, LD_WAKU_HASH_LEN);

  /* the next waits in the queue past the validators' clock gap (message id 1 claimed at entry) */
  ld_node_rln_publish_hold(p.a, true);
  char late[LD_MESSAGING_REQUEST_ID_LEN + 1];
  int64_t sent_at = (int64_t)ld_wall_ns();
  send_text(m, "late", late);
  NH_WAIT_FOR(&g_loop, ld_node_rln_pending(p.a) == 1, WAIT_MS);
  nh_run_for(&g_loop, (LD_RLN_MAX_CLOCK_GAP_SEC + 1) * 1000);
  assert_null(outcome_of(&sends, late)); /* nothing reported while it waits */
  /* let go: stamped again with its id (the epoch is the same), published, accepted by B */
  ld_node_rln_publish_hold(p.a, false);
  NH_WAIT_FOR(&g_loop, outcome_of(&sends, late) != NULL, WAIT_MS);
  o = outcome_of(&sends, late);
  assert_true(o->propagated);
  assert_int_equal(o->published_then, 2);
  assert_int_equal(restamped(p.a), 1);
  NH_WAIT_FOR(&g_loop, got_payload(&p.at_b, "late"), WAIT_MS);
  int i = got_find(&p.at_b, "late");
  assert_memory_equal(p.at_b.hash[i], o->hash, LD_WAKU_HASH_LEN);
  assert_true(p.at_b.timestamp[i] >= sent_at + (int64_t)LD_RLN_MAX_CLOCK_GAP_SEC * 1000000000);
  rec = ld_messaging_record_by_request(m, late);
  assert_memory_equal(rec->hash, o->hash, LD_WAKU_HASH_LEN);
  assert_true(rec->msg.timestamp == p.at_b.timestamp[i]);
  assert_ptr_equal(ld_messaging_record_by_hash(m, o->hash), rec);
  /* B found both valid: none refused as invalid_timestamp */
  assert_int_equal(vb->valid, 2);
  assert_none_invalid(vb);
  messaging_off(m);
  stop_pair(&p);
}

/* A send queued in one epoch whose proof starts in the next, where the message ids are used up
 * by then: its send ends with the rate-limit error, never propagated, never on the wire. */
static void a_send_out_of_quota_when_proved_is_an_error(void **state) {
  (void)state;
  enum { LIMIT = 1, EPOCH_SEC = 10 };
  pair_t p;
  start_pair(&p, (pair_opts_t){.limit = LIMIT, .epoch_sec = EPOCH_SEC, .held = true});
  sends_t sends = {0};
  ld_messaging_t *m = messaging_on(p.a, &sends);

  char refused[LD_MESSAGING_REQUEST_ID_LEN + 1];
  send_text(m, "refused", refused);
  NH_WAIT_FOR(&g_loop, ld_node_rln_pending(p.a) == 1, WAIT_MS); /* id 0 of its epoch claimed */
  uint64_t epoch = ld_rln_epoch_of((int64_t)ld_wall_ns(), EPOCH_SEC);
  /* at the start of the next epoch, another message takes its one id; then the queue goes on */
  NH_WAIT_FOR(&g_loop, ld_rln_epoch_of((int64_t)ld_wall_ns(), EPOCH_SEC) > epoch, WAIT_MS);
  publish_hog(p.a);
  ld_node_rln_publish_hold(p.a, false);
  NH_WAIT_FOR(&g_loop, outcome_of(&sends, refused) != NULL, WAIT_MS);
  const outcome_t *o = outcome_of(&sends, refused);
  assert_false(o->propagated);
  char want[256];
  snprintf(want, sizeof want, "Failed to publish via relay: %s", ld_strerror(LD_ERR_LIMIT));
  assert_string_equal(o->error, want);
  const ld_message_record_t *rec = ld_messaging_record_by_request(m, refused);
  assert_non_null(rec);
  assert_false(rec->sending);
  assert_false(rec->sent);
  NH_WAIT_FOR(&g_loop, got_payload(&p.at_b, "hog"), WAIT_MS);
  assert_false(got_payload(&p.at_b, "refused"));
  assert_int_equal(published(p.a), 1);
  messaging_off(m);
  stop_pair(&p);
}

/* ---- a queued message past its epoch --------------------------------------------------------- */

typedef struct publish_outcome {
  bool done;
  int result;
  int64_t timestamp;
  uint8_t hash[LD_WAKU_HASH_LEN];
} publish_outcome_t;

static void on_published(void *ud, int result, const char *pubsub_topic,
                         const ld_waku_message_t *msg, const uint8_t hash[LD_WAKU_HASH_LEN]) {
  publish_outcome_t *p = ud;
  assert_false(p->done);
  assert_string_equal(pubsub_topic, TOPIC);
  p->done = true;
  p->result = result;
  if (result >= 0) {
    uint8_t expect[LD_WAKU_HASH_LEN];
    assert_int_equal(ld_waku_message_hash(pubsub_topic, msg, expect), 0);
    assert_memory_equal(hash, expect, LD_WAKU_HASH_LEN);
    assert_true(msg->proof_len > 0);
    p->timestamp = msg->timestamp;
    memcpy(p->hash, hash, LD_WAKU_HASH_LEN);
  }
}

static void a_message_proved_after_its_epoch_is_stamped_again(void **state) {
  (void)state;
  enum { LIMIT = 2, EPOCH_SEC = 2 };
  pair_t p;
  start_pair(&p, (pair_opts_t){.limit = LIMIT, .epoch_sec = EPOCH_SEC, .held = true});
  const ld_rln_validator_stats_t *vb = ld_node_rln_stats(p.b);

  ld_waku_message_t m;
  ld_waku_message_init(&m);
  m.payload = (const uint8_t *)"next-epoch";
  m.payload_len = strlen("next-epoch");
  m.content_topic = CONTENT_TOPIC;
  m.content_topic_len = strlen(CONTENT_TOPIC);
  m.timestamp = (int64_t)ld_wall_ns();
  publish_outcome_t out = {0};
  ld_node_publish_call_t *call = NULL;
  assert_int_equal(ld_node_publish_async(p.a, TOPIC, &m, NULL, on_published, &out, &call),
                   LD_NODE_PUBLISH_LATER);
  assert_non_null(call);
  /* its epoch ends while it waits (well within the 5 s age bound: the epoch is what changed) */
  uint64_t epoch = ld_rln_epoch_of(m.timestamp, EPOCH_SEC);
  NH_WAIT_FOR(&g_loop, ld_rln_epoch_of((int64_t)ld_wall_ns(), EPOCH_SEC) > epoch, WAIT_MS);
  assert_false(out.done);
  ld_node_rln_publish_hold(p.a, false);
  NH_WAIT_FOR(&g_loop, out.done, WAIT_MS);
  assert_int_equal(out.result, 1); /* B */
  assert_int_equal(restamped(p.a), 1);
  assert_true(out.timestamp > m.timestamp);
  assert_true(ld_rln_epoch_of(out.timestamp, EPOCH_SEC) > epoch);
  NH_WAIT_FOR(&g_loop, got_payload(&p.at_b, "next-epoch"), WAIT_MS);
  int i = got_find(&p.at_b, "next-epoch");
  assert_memory_equal(p.at_b.hash[i], out.hash, LD_WAKU_HASH_LEN);
  assert_true(p.at_b.timestamp[i] == out.timestamp);
  assert_int_equal(vb->valid, 1);
  assert_none_invalid(vb);
  stop_pair(&p);
}

/* ---- REST publish ---------------------------------------------------------------------------- */

#define REST_PATH "/relay/v1/messages/%2Fwaku%2F2%2Frs%2F0%2F0"

/* A REST publish body with `text` as payload. */
static void rest_body(const char *text, char *out, size_t cap) {
  char enc[128];
  assert_true(ld_base64_encode((const uint8_t *)text, strlen(text), enc, sizeof enc) >= 0);
  snprintf(out, cap, "{\"payload\":\"%s\",\"contentTopic\":\"%s\"}", enc, CONTENT_TOPIC);
}

/* Lets A's held queue go on from a timer, while a REST request runs the loop. */
typedef struct release {
  uv_timer_t timer;
  ld_node_t *a;
  uint64_t after_epoch; /* with epoch_sec: once the epoch passed it, publish a hog first */
  uint64_t epoch_sec;
  bool released;
} release_t;

static void on_release_timer(uv_timer_t *t) {
  release_t *r = t->data;
  if (r->epoch_sec > 0) {
    if (ld_rln_epoch_of((int64_t)ld_wall_ns(), r->epoch_sec) <= r->after_epoch)
      return;
    publish_hog(r->a);
  }
  ld_node_rln_publish_hold(r->a, false);
  r->released = true;
  uv_timer_stop(t);
}

/* Runs on_release_timer for r: first after `after_ms`, then every `repeat_ms` (0: once). */
static void release_start(release_t *r, uint64_t after_ms, uint64_t repeat_ms) {
  uv_timer_init(&g_loop, &r->timer);
  r->timer.data = r;
  uv_timer_start(&r->timer, on_release_timer, after_ms, repeat_ms);
}

static void release_close(release_t *r) {
  bool closed = false;
  r->timer.data = &closed;
  uv_close((uv_handle_t *)&r->timer, on_freed_handle);
  NH_WAIT_FOR(&g_loop, closed, WAIT_MS);
}

/* A REST publish of a message held in the queue past its restamp is answered only once it was
 * proved and handed to relay (nwaku proves inside publish); B receives it. */
static void a_rest_publish_is_answered_once_proved(void **state) {
  (void)state;
  enum { LIMIT = 2 };
  pair_t p;
  start_pair(
      &p, (pair_opts_t){.limit = LIMIT, .epoch_sec = LONG_EPOCH_SEC, .rest = true, .held = true});
  uint16_t port = ld_node_rest_port(p.a);
  assert_true(port > 0);

  release_t r = {.a = p.a};
  release_start(&r, LD_NODE_RLN_RESTAMP_AFTER_MS + 500, 0);
  char body[512];
  rest_body("rest-late", body, sizeof body);
  http_response_t res = rest_call_json(&g_loop, port, "POST", REST_PATH, body);
  assert_int_equal(res.status, 200);
  assert_true(r.released);
  assert_int_equal(published(p.a), 1); /* answered after the proof, not at queue entry */
  assert_int_equal(restamped(p.a), 1);
  http_response_free(&res);
  NH_WAIT_FOR(&g_loop, got_payload(&p.at_b, "rest-late"), WAIT_MS);
  release_close(&r);
  stop_pair(&p);
}

/* A REST publish queued in one epoch and proved in the next, whose one message id another
 * message took meanwhile, is answered with the rate-limit error and never sent. */
static void a_rest_publish_out_of_quota_when_proved_is_an_error(void **state) {
  (void)state;
  enum { LIMIT = 1, EPOCH_SEC = 4 };
  pair_t p;
  start_pair(&p, (pair_opts_t){.limit = LIMIT, .epoch_sec = EPOCH_SEC, .rest = true, .held = true});
  uint16_t port = ld_node_rest_port(p.a);

  release_t r = {.a = p.a, .epoch_sec = EPOCH_SEC};
  r.after_epoch = ld_rln_epoch_of((int64_t)ld_wall_ns(), EPOCH_SEC);
  release_start(&r, 50, 50);
  char body[512];
  rest_body("refused", body, sizeof body);
  http_response_t res = rest_call_json(&g_loop, port, "POST", REST_PATH, body);
  assert_true(r.released);
  assert_int_equal(res.status, 400);
  assert_string_equal(res.body, "Failed to publish: RLN: message limit of this epoch reached");
  http_response_free(&res);
  NH_WAIT_FOR(&g_loop, got_payload(&p.at_b, "hog"), WAIT_MS);
  assert_false(got_payload(&p.at_b, "refused"));
  assert_int_equal(published(p.a), 1);
  release_close(&r);
  stop_pair(&p);
}

int main(void) {
  uv_loop_init(&g_loop);
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(messaging_sends_end_when_the_proof_is_published),
      cmocka_unit_test(a_send_out_of_quota_when_proved_is_an_error),
      cmocka_unit_test(a_message_proved_after_its_epoch_is_stamped_again),
      cmocka_unit_test(a_rest_publish_is_answered_once_proved),
      cmocka_unit_test(a_rest_publish_out_of_quota_when_proved_is_an_error),
  };
  int rc = cmocka_run_group_tests(tests, NULL, NULL);
  uv_loop_close(&g_loop);
  return rc;
}
