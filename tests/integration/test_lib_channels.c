/* Reliable channels through the stable C API, several contexts in one process over loopback:
 * - the four channel calls answer with c-api.md's replies and error texts; channelsOverrides
 *   values out of range fail the create; kernel and messaging entry layers have no channels;
 * - three contexts in one channel over a lossy path (30 % of the messages from peers dropped in
 *   each node's relay fan-out): a conversation in which each message answers the previous one;
 *   every participant delivers every other participant's message exactly once and in causal
 *   order, every send ends as channel_message_sent and channel_message_delivered, and nothing
 *   ends in error;
 * - one participant destroyed mid-conversation and created again on its state directory
 *   resumes the channel: across its two lives it delivers every other participant's message
 *   exactly once and in causal order (those sent while it was away come back through repair),
 *   and its own message left unacknowledged is still acknowledged;
 * - a state database that is not SQLite makes channel_create fail with a clear error;
 * - a 1 MiB payload crosses as LIP-243 segments, one of which is lost on the way and repaired,
 *   and arrives whole; its send ends as sent and delivered;
 * - with Reed–Solomon parity on, a 1 MiB payload two of whose data segments are lost on the way
 *   is rebuilt from the parity segments, with no repair;
 * - with the rate limit on (2 messages per 3 s epoch), eight sends queue and go out over at
 *   least four epochs, all sent, delivered and received in order;
 * - the encryption hook (liblogosdelivery_channels.h) is applied per segment: a receiver without
 *   it sees the ciphertext, one with it the plain text;
 * - a burst beyond the outgoing buffer waits in the send queue (beyond the queue's bound a send
 *   is refused with a clear error), survives a restart of the sender, and is delivered whole
 *   once the other participant joins: nothing given up, lost or duplicated;
 * - an SDS message sent as a plain Waku message (no `meta` marker, as js-waku's ReliableChannel
 *   sends them) on the channel's content topic is channel traffic: it is delivered;
 * - a message sent while the previous one has not propagated yet (no peer) carries that one's
 *   Waku hash as retrieval hint in its causal history, as js-waku's ReliableChannel does;
 * - channelsOverrides sdsAckSyncEvery: with 2, the second message received brings an
 *   acknowledgement sync at once (the timer far away); with 0, a burst is acknowledged only once
 *   the acknowledgement sync timer fired. */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>
#include <jansson.h>

#include "base/base64.h"
#include "base/clock.h"
#include "base/hex.h"
#include "channels/channels.h"
#include "channels/sds_wire.h"
#include "liblogosdelivery.h"
#include "liblogosdelivery_channels.h"
#include "node/fanout.h"
#include "lib_reply.h"
#include "thread_wait.h"

#define WAIT_MS 120000
#define MAX_EVENTS 8192
#define CTOPIC "/chantest/1/room/proto"
#define PREFIX "ffi error: handleRes fireSyncRes error: "
#define BASE                                                                                       \
  "\"listenAddress\":\"127.0.0.1\",\"tcpPort\":0,\"clusterId\":66,\"discv5UdpPort\":0,"            \
  "\"numShardsInNetwork\":1,\"logLevel\":\"WARN\""

/* ---- replies -------------------------------------------------------------------------------- */

/* Waits for the answer and checks its code and (when not NULL) its text; copies the text. */
static void reply_expect(reply_t *r, int ret, const char *text, char *out, size_t cap) {
  reply_wait(r, WAIT_MS);
  if (r->ret != ret)
    fail_msg("expected %d, got %d: %s", ret, r->ret, r->msg);
  if (text != NULL)
    assert_string_equal(r->msg, text);
  if (out != NULL && cap > 0) { /* the text, cut to fit */
    size_t n = strnlen(r->msg, cap - 1);
    memcpy(out, r->msg, n);
    out[n] = '\0';
  }
}

/* ---- nodes and their events ----------------------------------------------------------------- */

typedef struct node {
  void *ctx;
  pthread_mutex_t mu;
  pthread_cond_t cv;
  char *events[MAX_EVENTS];
  int n_events;
  int errors;
  char addr[512];
} node_t;

static void on_event(int ret, const char *msg, size_t len, void *ud) {
  node_t *n = ud;
  pthread_mutex_lock(&n->mu);
  static const char channel_event[] = "{\"eventType\":\"channel_";
  if (ret != RET_OK)
    n->errors++;
  else if (n->n_events < MAX_EVENTS && len >= sizeof channel_event - 1 &&
           memcmp(msg, channel_event, sizeof channel_event - 1) == 0) /* the channel's only */
    n->events[n->n_events++] = strndup(msg, len);
  pthread_cond_broadcast(&n->cv);
  pthread_mutex_unlock(&n->mu);
}

static node_t *node_create(const char *config, bool start) {
  node_t *n = calloc(1, sizeof *n);
  pthread_mutex_init(&n->mu, NULL);
  pthread_cond_init(&n->cv, NULL);
  reply_t r;
  reply_init(&r);
  n->ctx = logosdelivery_create_node(config, on_reply, &r);
  assert_non_null(n->ctx);
  reply_expect(&r, RET_OK, NULL, NULL, 0);
  logosdelivery_set_event_callback(n->ctx, on_event, n);
  if (start) {
    reply_init(&r);
    assert_int_equal(logosdelivery_start_node(n->ctx, on_reply, &r), RET_OK);
    reply_expect(&r, RET_OK, NULL, NULL, 0);
    reply_init(&r);
    assert_int_equal(logosdelivery_get_node_info(n->ctx, on_reply, &r, "MyMultiaddresses"), RET_OK);
    reply_expect(&r, RET_OK, NULL, n->addr, sizeof n->addr);
    char *comma = strchr(n->addr, ',');
    if (comma != NULL)
      *comma = '\0';
  }
  return n;
}

static char g_dir[] = "/tmp/ld_chan_XXXXXX";

/* A flat configuration with `fields` (without braces) after the base, its channel state in
 * <g_dir>/<state>. */
static node_t *node_start_in(const char *state, const char *fields) {
  char config[4096];
  snprintf(config, sizeof config, "{" BASE ",\"localStoragePath\":\"%s/%s\"%s%s}", g_dir, state,
           fields[0] != '\0' ? "," : "", fields);
  return node_create(config, true);
}

/* node_start_in(state) with `peer` as its one static node (it dials the peer). */
static node_t *node_start_dialing(const char *state, const node_t *peer) {
  char fields[1536];
  snprintf(fields, sizeof fields, "\"staticnodes\":[\"%s\"]", peer->addr);
  return node_start_in(state, fields);
}

/* A context (structured configuration) in state `state` whose channelsOverrides are `overrides`
 * (its members, without braces). */
static node_t *node_start_overriding(const char *state, const char *overrides) {
  char config[1024];
  snprintf(config, sizeof config,
           "{\"channelsOverrides\":{%s},"
           "\"messagingOverrides\":{\"clusterId\":66,\"numShardsInCluster\":1,"
           "\"listenIpv4\":\"127.0.0.1\",\"logLevel\":\"WARN\",\"reliabilityEnabled\":false,"
           "\"localStoragePath\":\"%s/%s\"}}",
           overrides, g_dir, state);
  return node_create(config, true);
}

static void node_free(node_t *n) {
  reply_t r;
  reply_init(&r);
  assert_int_equal(logosdelivery_stop_node(n->ctx, on_reply, &r), RET_OK);
  reply_expect(&r, RET_OK, NULL, NULL, 0);
  reply_init(&r);
  assert_int_equal(logosdelivery_destroy(n->ctx, on_reply, &r), RET_OK);
  assert_int_equal(r.n, 1);
  assert_int_equal(n->errors, 0);
  for (int i = 0; i < n->n_events; i++)
    free(n->events[i]);
  pthread_mutex_destroy(&n->mu);
  pthread_cond_destroy(&n->cv);
  free(n);
}

/* eventType of `v` is `type`, and it is the first key. */
static bool is_type(json_t *v, const char *type) {
  const char *first = json_object_iter_key(json_object_iter(v));
  if (first == NULL || strcmp(first, "eventType") != 0)
    fail_msg("eventType is not the first key");
  return strcmp(json_string_value(json_object_get(v, "eventType")), type) == 0;
}

static const char *field(json_t *v, const char *key) {
  const char *s = json_string_value(json_object_get(v, key));
  return s != NULL ? s : "";
}

/* The received channel payloads of `n` in order, decoded, into out[] (texts); returns how many. */
static int received_texts(node_t *n, char out[][64], int max) {
  int k = 0;
  pthread_mutex_lock(&n->mu);
  for (int i = 0; i < n->n_events && k < max; i++) {
    json_error_t e;
    json_t *v = json_loads(n->events[i], 0, &e);
    assert_non_null(v);
    if (is_type(v, "channel_message_received")) {
      assert_string_equal(field(v, "channelId"), "room");
      const char *b64 = field(v, "payload");
      uint8_t raw[64];
      size_t got = 0;
      assert_int_equal(ld_base64_decode(b64, strlen(b64), raw, sizeof raw - 1, &got), 0);
      memcpy(out[k], raw, got);
      out[k][got] = '\0';
      k++;
    }
    json_decref(v);
  }
  pthread_mutex_unlock(&n->mu);
  return k;
}

/* Number of events of `type` whose `key` is `value`. */
static int count(node_t *n, const char *type, const char *key, const char *value) {
  int c = 0;
  pthread_mutex_lock(&n->mu);
  for (int i = 0; i < n->n_events; i++) {
    json_error_t e;
    json_t *v = json_loads(n->events[i], 0, &e);
    assert_non_null(v);
    c += is_type(v, type) && (key == NULL || strcmp(field(v, key), value) == 0);
    json_decref(v);
  }
  pthread_mutex_unlock(&n->mu);
  return c;
}

static bool has_received(node_t *n, const char *text) {
  char got[256][64];
  int k = received_texts(n, got, 256);
  for (int i = 0; i < k; i++)
    if (strcmp(got[i], text) == 0)
      return true;
  return false;
}

/* Waits until `pred(n, arg)` holds; false after WAIT_MS. */
static bool wait_until(node_t *n, bool (*pred)(node_t *, const void *), const void *arg) {
  uint64_t deadline = ld_now_ms() + WAIT_MS;
  while (!pred(n, arg)) {
    if (ld_now_ms() >= deadline)
      return false;
    pthread_mutex_lock(&n->mu);
    tw_cond_wait_ms(&n->cv, &n->mu, 100);
    pthread_mutex_unlock(&n->mu);
  }
  return true;
}

static bool pred_received(node_t *n, const void *arg) {
  return has_received(n, arg);
}

typedef struct req_event {
  const char *type, *id;
} req_event_t;

static bool pred_event(node_t *n, const void *arg) {
  const req_event_t *r = arg;
  return count(n, r->type, "requestId", r->id) > 0;
}

/* ---- channel calls -------------------------------------------------------------------------- */

static void channel_create(node_t *n, const char *id, const char *topic, const char *sender,
                           int ret, const char *text) {
  reply_t r;
  reply_init(&r);
  assert_int_equal(logosdelivery_channel_create(n->ctx, on_reply, &r, id, topic, sender), RET_OK);
  reply_expect(&r, ret, text, NULL, 0);
}

static void channel_exists(node_t *n, const char *id, const char *want) {
  reply_t r;
  reply_init(&r);
  assert_int_equal(logosdelivery_channel_exists(n->ctx, on_reply, &r, id), RET_OK);
  reply_expect(&r, RET_OK, want, NULL, 0);
}

static void channel_send_json(node_t *n, const char *id, const char *json, int ret,
                              const char *text, char out[64]) {
  reply_t r;
  reply_init(&r);
  assert_int_equal(logosdelivery_channel_send(n->ctx, on_reply, &r, id, json), RET_OK);
  reply_expect(&r, ret, text, out, out != NULL ? 64 : 0);
}

/* Sends `text` on channel "room"; writes the request ID. */
static void channel_send_text(node_t *n, const char *text, char id[64]) {
  char b64[128], json[256];
  assert_true(ld_base64_encode((const uint8_t *)text, strlen(text), b64, sizeof b64) > 0);
  snprintf(json, sizeof json, "{\"payload\":\"%s\"}", b64);
  channel_send_json(n, "room", json, RET_OK, NULL, id);
  assert_int_equal(strlen(id), LD_CHANNEL_REQUEST_ID_LEN);
}

static void channel_close(node_t *n, const char *id, int ret, const char *text) {
  reply_t r;
  reply_init(&r);
  assert_int_equal(logosdelivery_channel_close(n->ctx, on_reply, &r, id), RET_OK);
  reply_expect(&r, ret, text, NULL, 0);
}

/* ---- tests ---------------------------------------------------------------------------------- */

static void calls_answer_as_documented(void **state) {
  (void)state;
  char config[1024];
  snprintf(config, sizeof config,
           "{\"channelsOverrides\":{\"sdsCausalHistorySize\":4,"
           "\"sdsAcknowledgementTimeoutMs\":2000,\"sdsMaxRetransmissions\":3},"
           "\"messagingOverrides\":{\"clusterId\":66,\"numShardsInCluster\":1,"
           "\"listenIpv4\":\"127.0.0.1\",\"logLevel\":\"WARN\",\"localStoragePath\":\"%s/calls\"}}",
           g_dir);
  node_t *a = node_create(config, true);
  channel_exists(a, "room", "false");
  channel_create(a, "room", CTOPIC, "alice", RET_OK, "room");
  channel_exists(a, "room", "true");
  channel_exists(a, "other", "false");
  channel_create(a, "room", CTOPIC, "alice", RET_ERR,
                 PREFIX "ChannelCreate failed: channel already exists: room");
  channel_create(a, "bad", "not-a-topic", "alice", RET_ERR, NULL);
  channel_exists(a, "bad", "false");
  channel_send_json(a, "nope", "{\"payload\":\"aGk=\"}", RET_ERR,
                    PREFIX "ChannelSend failed: unknown channel: nope", NULL);
  channel_send_json(a, "room", "{\"payload\":\"\"}", RET_ERR,
                    PREFIX "ChannelSend failed: empty payload", NULL);
  channel_send_json(a, "room", "{\"ephemeral\":true}", RET_ERR, PREFIX "Missing payload field",
                    NULL);
  channel_send_json(a, "room", "{\"payload\":\"a\"}", RET_ERR,
                    PREFIX "invalid payload format: not base64", NULL);
  reply_t r;
  reply_init(&r);
  assert_int_equal(logosdelivery_channel_send(a->ctx, on_reply, &r, "room", "{nope"), RET_OK);
  char text[1024];
  reply_expect(&r, RET_ERR, NULL, text, sizeof text);
  assert_non_null(strstr(text, PREFIX "Failed to parse channel message JSON: "));
  char id[64];
  channel_send_json(a, "room", "{\"payload\":\"aGk\"}", RET_OK, NULL, id); /* unpadded: "hi" */
  assert_int_equal(strlen(id), LD_CHANNEL_REQUEST_ID_LEN);
  channel_close(a, "room", RET_OK, "");
  channel_exists(a, "room", "false");
  channel_close(a, "room", RET_ERR, PREFIX "ChannelClose failed: unknown channel: room");
  channel_create(a, "room", CTOPIC, "alice", RET_OK, "room"); /* created again after close */
  node_free(a);

  /* out-of-range overrides fail the create */
  reply_init(&r);
  assert_null(logosdelivery_create_node("{\"channelsOverrides\":{\"sdsCausalHistorySize\":0}}",
                                        NULL, NULL));
  void *ctx = logosdelivery_create_node("{\"channelsOverrides\":{\"sdsCausalHistorySize\":0}}",
                                        on_reply, &r);
  reply_expect(&r, RET_ERR, NULL, text, sizeof text);
  assert_non_null(strstr(text, "channelsOverrides 'sdsCausalHistorySize' is 0, expected 1..1024"));
  reply_init(&r);
  logosdelivery_destroy(ctx, on_reply, &r);

  /* a messaging-only node has no channel manager */
  node_t *m = node_create("{\"entryLayer\":\"messaging\",\"messagingOverrides\":{\"clusterId\":66,"
                          "\"numShardsInCluster\":1,\"listenIpv4\":\"127.0.0.1\"}}",
                          true);
  channel_create(m, "room", CTOPIC, "alice", RET_ERR,
                 PREFIX "ChannelCreate failed: node has no reliable channel manager "
                        "(messaging-only node)");
  node_free(m);
}

#define ROUNDS 8

static void three_participants_over_a_lossy_path(void **state) {
  (void)state;
  ld_channels_set_test_timing(1000, 4000, 2000, 1000);
  node_t *a = node_start_in("lossy-a", "");
  node_t *b = node_start_dialing("lossy-b", a);
  char fields[1536];
  snprintf(fields, sizeof fields, "\"staticnodes\":[\"%s\",\"%s\"]", a->addr, b->addr);
  node_t *c = node_start_in("lossy-c", fields);
  node_t *nodes[3] = {a, b, c};
  const char *names[3] = {"alice", "bob", "carol"};
  for (int i = 0; i < 3; i++)
    channel_create(nodes[i], "room", CTOPIC, names[i], RET_OK, "room");
  ld_fanout_set_test_loss(300, 42);

  /* each message answers the one before: alice-r, then bob-r once bob has it, then carol-r */
  char ids[3][ROUNDS][64];
  for (int r = 0; r < ROUNDS; r++) {
    for (int i = 0; i < 3; i++) {
      if (r > 0 || i > 0) {
        char prev[64];
        int p = (i + 2) % 3;
        snprintf(prev, sizeof prev, "%s-%d", names[p], i == 0 ? r - 1 : r);
        if (!wait_until(nodes[i], pred_received, prev))
          fail_msg("%s never received %s", names[i], prev);
      }
      char text[64];
      snprintf(text, sizeof text, "%s-%d", names[i], r);
      channel_send_text(nodes[i], text, ids[i][r]);
    }
  }

  /* everyone delivers every other participant's message once, in the conversation's order */
  for (int i = 0; i < 3; i++) {
    char last[64];
    snprintf(last, sizeof last, "%s-%d", names[(i + 2) % 3], ROUNDS - 1);
    if (!wait_until(nodes[i], pred_received, last))
      fail_msg("%s never received %s", names[i], last);
    if (i == 1) { /* bob: carol's last message closes the conversation */
      snprintf(last, sizeof last, "carol-%d", ROUNDS - 1);
      assert_true(wait_until(nodes[i], pred_received, last));
    }
  }
  for (int i = 0; i < 3; i++) {
    char got[256][64];
    int k = received_texts(nodes[i], got, 256);
    assert_int_equal(k, 2 * ROUNDS);
    int at = 0;
    for (int r = 0; r < ROUNDS; r++)
      for (int j = 0; j < 3; j++) {
        if (j == i)
          continue;
        char want[64];
        snprintf(want, sizeof want, "%s-%d", names[j], r);
        if (strcmp(got[at], want) != 0)
          fail_msg("%s delivered %s at %d, expected %s", names[i], got[at], at, want);
        at++;
      }
  }

  /* every send ends as sent and delivered (acknowledged), none in error */
  for (int i = 0; i < 3; i++)
    for (int r = 0; r < ROUNDS; r++) {
      req_event_t sent = {"channel_message_sent", ids[i][r]};
      req_event_t delivered = {"channel_message_delivered", ids[i][r]};
      if (!wait_until(nodes[i], pred_event, &sent))
        fail_msg("%s-%d never sent", names[i], r);
      if (!wait_until(nodes[i], pred_event, &delivered))
        fail_msg("%s-%d never delivered", names[i], r);
      assert_int_equal(count(nodes[i], "channel_message_sent", "requestId", ids[i][r]), 1);
      assert_int_equal(count(nodes[i], "channel_message_delivered", "requestId", ids[i][r]), 1);
    }
  for (int i = 0; i < 3; i++) {
    assert_int_equal(count(nodes[i], "channel_message_error", NULL, NULL), 0);
    assert_int_equal(count(nodes[i], "channel_message_delivery_error", NULL, NULL), 0);
  }
  assert_true(ld_fanout_test_loss_dropped() > 0); /* the path was lossy */
  ld_fanout_set_test_loss(0, 0);
  ld_channels_set_test_timing(0, 0, 0, 0);
  node_free(c);
  node_free(b);
  node_free(a);
}

/* ---- restart -------------------------------------------------------------------------------- */

/* A conversation: turn k is spoken by speakers[k], after it has received turn k-1 (when another
 * participant spoke it). Texts are "<name>-<k>". */
#define MAX_TURNS 32

typedef struct talk {
  node_t *nodes[3];
  const char *names[3];
  int speakers[MAX_TURNS];
  char ids[MAX_TURNS][64];
  int n;
} talk_t;

static void turn(talk_t *t, int speaker) {
  int k = t->n;
  if (k > 0 && t->speakers[k - 1] != speaker) {
    char prev[64];
    snprintf(prev, sizeof prev, "%s-%d", t->names[t->speakers[k - 1]], k - 1);
    if (!wait_until(t->nodes[speaker], pred_received, prev))
      fail_msg("%s never received %s", t->names[speaker], prev);
  }
  char text[64];
  snprintf(text, sizeof text, "%s-%d", t->names[speaker], k);
  channel_send_text(t->nodes[speaker], text, t->ids[k]);
  t->speakers[k] = speaker;
  t->n++;
}

/* Appends the channel payloads `n` delivered to `out`. */
static int collect(node_t *n, char out[][64], int at, int max) {
  return at + received_texts(n, out + at, max - at);
}

static void a_participant_restarts_mid_conversation(void **state) {
  (void)state;
  ld_channels_set_test_timing(1000, 4000, 2000, 1000);
  talk_t t = {.names = {"alice", "bob", "carol"}};
  t.nodes[0] = node_start_in("restart-a", "");
  char fields[1536];
  snprintf(fields, sizeof fields, "\"staticnodes\":[\"%s\"]", t.nodes[0]->addr);
  t.nodes[1] = node_start_in("restart-b", fields);
  snprintf(fields, sizeof fields, "\"staticnodes\":[\"%s\",\"%s\"]", t.nodes[0]->addr,
           t.nodes[1]->addr);
  t.nodes[2] = node_start_in("restart-c", fields);
  for (int i = 0; i < 3; i++)
    channel_create(t.nodes[i], "room", CTOPIC, t.names[i], RET_OK, "room");

  for (int r = 0; r < 3; r++)
    for (int i = 0; i < 3; i++)
      turn(&t, i);
  /* carol leaves once alice has her last message (its acknowledgement may still be under way) */
  char last[64];
  snprintf(last, sizeof last, "carol-%d", t.n - 1);
  assert_true(wait_until(t.nodes[0], pred_received, last));
  int carol_sent_first_life = 3;
  char first_life[64][64];
  int n_first = collect(t.nodes[2], first_life, 0, 64);
  char carol_ids[3][64];
  for (int r = 0; r < 3; r++)
    snprintf(carol_ids[r], sizeof carol_ids[r], "%s", t.ids[3 * r + 2]);
  bool carol_acked[3];
  for (int r = 0; r < 3; r++)
    carol_acked[r] = count(t.nodes[2], "channel_message_delivered", "requestId", carol_ids[r]) > 0;
  node_free(t.nodes[2]);
  t.nodes[2] = NULL;

  for (int r = 0; r < 3; r++)
    for (int i = 0; i < 2; i++)
      turn(&t, i);

  /* carol comes back on her state directory */
  t.nodes[2] = node_start_in("restart-c", fields);
  uint64_t t0 = ld_now_ms();
  channel_create(t.nodes[2], "room", CTOPIC, "carol", RET_OK, "room");
  printf("channel resumed in %llu ms\n", (unsigned long long)(ld_now_ms() - t0));
  for (int r = 0; r < 2; r++)
    for (int i = 0; i < 3; i++)
      turn(&t, i);
  snprintf(last, sizeof last, "carol-%d", t.n - 1);
  for (int i = 0; i < 2; i++)
    assert_true(wait_until(t.nodes[i], pred_received, last));

  /* across both lives carol delivers each message of the others once, in the conversation's
   * order */
  char all[64][64];
  memcpy(all, first_life, sizeof first_life);
  int n_all = collect(t.nodes[2], all, n_first, 64);
  int at = 0;
  for (int k = 0; k < t.n; k++) {
    if (t.speakers[k] == 2)
      continue;
    char want[64];
    snprintf(want, sizeof want, "%s-%d", t.names[t.speakers[k]], k);
    if (at >= n_all || strcmp(all[at], want) != 0)
      fail_msg("carol delivered %s at %d, expected %s", at < n_all ? all[at] : "nothing", at, want);
    at++;
  }
  assert_int_equal(at, n_all);
  /* her messages of the first life are acknowledged in one life or the other */
  for (int r = 0; r < carol_sent_first_life; r++) {
    if (carol_acked[r])
      continue;
    req_event_t delivered = {"channel_message_delivered", carol_ids[r]};
    if (!wait_until(t.nodes[2], pred_event, &delivered))
      fail_msg("carol's first-life message %d never acknowledged", r);
  }
  /* the others delivered everything once too */
  for (int i = 0; i < 2; i++) {
    char got[64][64];
    int k = received_texts(t.nodes[i], got, 64);
    int expect = 0;
    for (int j = 0; j < t.n; j++)
      expect += t.speakers[j] != i;
    assert_int_equal(k, expect);
  }
  for (int i = 0; i < 3; i++) {
    assert_int_equal(count(t.nodes[i], "channel_message_error", NULL, NULL), 0);
    assert_int_equal(count(t.nodes[i], "channel_message_delivery_error", NULL, NULL), 0);
  }
  ld_channels_set_test_timing(0, 0, 0, 0);
  for (int i = 2; i >= 0; i--)
    node_free(t.nodes[i]);
}

static void a_corrupted_state_database_is_refused(void **state) {
  (void)state;
  char dir[256], path[300];
  snprintf(dir, sizeof dir, "%s/corrupt", g_dir);
  assert_int_equal(mkdir(dir, 0700), 0);
  snprintf(path, sizeof path, "%s/channels.sqlite3", dir);
  FILE *f = fopen(path, "wb");
  assert_non_null(f);
  for (int i = 0; i < 4096; i++)
    fputc((i * 7919) & 0xff, f);
  fclose(f);
  node_t *a = node_start_in("corrupt", "");
  reply_t r;
  reply_init(&r);
  assert_int_equal(logosdelivery_channel_create(a->ctx, on_reply, &r, "room", CTOPIC, "alice"),
                   RET_OK);
  char text[1024];
  reply_expect(&r, RET_ERR, NULL, text, sizeof text);
  char want[512];
  snprintf(want, sizeof want,
           PREFIX "ChannelCreate failed: channel state store: %s is corrupted: file is not a "
                  "database",
           path);
  assert_string_equal(text, want);
  channel_exists(a, "room", "false");
  node_free(a);
}

/* ---- segmentation -----------------------------------------------------------------------------
 */

#define BIG (1024 * 1024)

/* The payload of the first channel_message_received of `n` with `len` bytes into `out`. */
static bool pred_big(node_t *n, const void *arg) {
  (void)arg;
  bool found = false;
  pthread_mutex_lock(&n->mu);
  for (int i = 0; i < n->n_events && !found; i++)
    found = strstr(n->events[i], "channel_message_received") != NULL && strlen(n->events[i]) > BIG;
  pthread_mutex_unlock(&n->mu);
  return found;
}

/* BIG pseudo-random bytes from an xorshift seed (the caller frees them). */
static uint8_t *big_payload(uint64_t seed) {
  uint8_t *big = malloc(BIG);
  assert_non_null(big);
  uint64_t x = seed;
  for (size_t i = 0; i < BIG; i++) {
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
    big[i] = (uint8_t)x;
  }
  return big;
}

/* The channel_send JSON carrying BIG bytes as its base64 payload (the caller frees it). */
static char *payload_json(const uint8_t *big) {
  size_t b64_cap = (BIG + 2) / 3 * 4 + 1;
  char *json = malloc(b64_cap + 32);
  assert_non_null(json);
  strcpy(json, "{\"payload\":\"");
  assert_true(ld_base64_encode(big, BIG, json + strlen(json), b64_cap) > 0);
  strcat(json, "\"}");
  return json;
}

/* How many of n's events carry alice's payload of BIG bytes equal to `big`; any other large
 * event fails the test. */
static int big_payloads_from_alice(node_t *n, const uint8_t *big) {
  int found = 0;
  pthread_mutex_lock(&n->mu);
  for (int i = 0; i < n->n_events; i++) {
    if (strlen(n->events[i]) < BIG)
      continue;
    json_error_t e;
    json_t *v = json_loads(n->events[i], 0, &e);
    assert_non_null(v);
    assert_string_equal(field(v, "senderId"), "alice");
    const char *p = field(v, "payload");
    uint8_t *got = malloc(BIG + 3);
    size_t len = 0;
    assert_int_equal(ld_base64_decode(p, strlen(p), got, BIG + 3, &len), 0);
    assert_int_equal(len, BIG);
    assert_memory_equal(got, big, BIG);
    free(got);
    json_decref(v);
    found++;
  }
  pthread_mutex_unlock(&n->mu);
  return found;
}

/* A 1 MiB send from alice on A to bob on B (B dials A), both in one channel. */
typedef struct big_send {
  node_t *a;
  node_t *b;
  const char *channel;
  uint8_t *big;
  char *json; /* big as channel_send's JSON */
} big_send_t;

/* Starts B in state `b_name` dialing `a`, creates `channel` on A as alice and on B as bob, and
 * makes the payload from `seed`. */
static void big_send_start(big_send_t *s, node_t *a, const char *b_name, const char *channel,
                           uint64_t seed) {
  s->a = a;
  s->b = node_start_dialing(b_name, a);
  s->channel = channel;
  channel_create(s->a, channel, CTOPIC, "alice", RET_OK, channel);
  channel_create(s->b, channel, CTOPIC, "bob", RET_OK, channel);
  s->big = big_payload(seed);
  s->json = payload_json(s->big);
}

/* Sends the payload from alice with the fan-out's random loss off and the first `drops` large
 * messages (segments) dropped on the way; the request id in `id`. */
static void big_send_go(big_send_t *s, int drops, char id[64]) {
  ld_fanout_set_test_loss(0, 0);
  ld_fanout_set_test_drop_large(90000, drops);
  channel_send_json(s->a, s->channel, s->json, RET_OK, NULL, id);
}

/* Frees the payload and both nodes, with the drop hook and the channels' timing reset. */
static void big_send_end(big_send_t *s) {
  free(s->json);
  free(s->big);
  ld_fanout_set_test_drop_large(0, 0);
  ld_channels_set_test_timing(0, 0, 0, 0);
  node_free(s->b);
  node_free(s->a);
}

static void a_large_payload_crosses_as_segments(void **state) {
  (void)state;
  /* segments of 120 KB each: acknowledgements take longer than 1 s under the sanitizers */
  ld_channels_set_test_timing(1000, 4000, 2000, 5000);
  big_send_t s;
  big_send_start(&s, node_start_in("big-a", ""), "big-b", "files", 88172645463325252u);
  node_t *a = s.a, *b = s.b;
  /* bob sees alice before the big send (so that nothing waits for the mesh) */
  char id[64];
  channel_send_json(a, "files", "{\"payload\":\"aGVsbG8=\"}", RET_OK, NULL, id);
  req_event_t hello = {"channel_message_delivered", id};
  assert_true(wait_until(a, pred_event, &hello));

  big_send_go(&s, 1, id); /* one segment lost on the way */
  assert_true(wait_until(b, pred_big, NULL));
  req_event_t sent = {"channel_message_sent", id}, delivered = {"channel_message_delivered", id};
  assert_true(wait_until(a, pred_event, &sent));
  if (!wait_until(a, pred_event, &delivered)) {
    for (int i = 0; i < a->n_events; i++)
      fprintf(stderr, "A: %.300s\n", a->events[i]);
    fail_msg("the 1 MiB send was never acknowledged");
  }
  assert_int_equal(ld_fanout_test_loss_dropped(), 1);

  assert_int_equal(big_payloads_from_alice(b, s.big), 1); /* the payload arrived whole, once */
  big_send_end(&s);
}

/* With segmentationEnableReedSolomon, 1 MiB goes as 11 data and 2 parity segments (Leopard-RS,
 * LIP-243's rate 0.125); two data segments dropped on the way are rebuilt from the parity by the
 * receiver. Repair and retransmission are set 10 minutes away, so the payload can only arrive
 * within the wait through the parity. */
static void a_large_payload_is_rebuilt_from_parity(void **state) {
  (void)state;
  ld_channels_set_test_timing(600000, 1200000, 2000, 600000);
  big_send_t s;
  node_t *parity_a = node_start_overriding("parity-a", "\"segmentationEnableReedSolomon\":true");
  big_send_start(&s, parity_a, "parity-b", "room", 0x9E3779B97F4A7C15u);
  node_t *a = s.a, *b = s.b;
  char id[64];
  channel_send_json(a, "room", "{\"payload\":\"aGVsbG8=\"}", RET_OK, NULL, id);
  assert_true(wait_until(b, pred_received, "hello")); /* the mesh is formed */

  big_send_go(&s, 2, id); /* the first two segments lost on the way */
  req_event_t sent = {"channel_message_sent", id};
  assert_true(wait_until(a, pred_event, &sent)); /* all 13 segments went out */
  assert_true(wait_until(b, pred_big, NULL));
  assert_int_equal(ld_fanout_test_loss_dropped(), 2);

  assert_int_equal(big_payloads_from_alice(b, s.big), 1);
  big_send_end(&s);
}

/* ---- rate limit -------------------------------------------------------------------------------
 */

static void sends_over_the_rate_limit_wait_for_the_next_epochs(void **state) {
  (void)state;
  /* acknowledgements wait for the budget too: a timeout longer than an epoch */
  ld_channels_set_test_timing(1000, 4000, 2000, 10000);
  ld_channels_set_test_rate_limit(3000, 2);
  node_t *a = node_start_in("rate-a", "");
  node_t *b = node_start_dialing("rate-b", a);
  channel_create(a, "room", CTOPIC, "alice", RET_OK, "room");
  channel_create(b, "room", CTOPIC, "bob", RET_OK, "room");
  char id[64];
  channel_send_text(a, "warm-up", id); /* the mesh is formed once it is delivered */
  req_event_t warm = {"channel_message_delivered", id};
  assert_true(wait_until(a, pred_event, &warm));

  char ids[8][64];
  uint64_t t0 = ld_now_ms();
  for (int i = 0; i < 8; i++) {
    char text[32];
    snprintf(text, sizeof text, "alice-%d", i);
    channel_send_text(a, text, ids[i]);
  }
  for (int i = 0; i < 8; i++) {
    req_event_t sent = {"channel_message_sent", ids[i]};
    assert_true(wait_until(a, pred_event, &sent));
  }
  uint64_t elapsed = ld_now_ms() - t0;
  printf("eight sends at 2 per 3 s epoch took %llu ms\n", (unsigned long long)elapsed);
  assert_true(elapsed >= 6000); /* four epochs at least: two whole epochs in between */
  for (int i = 0; i < 8; i++) {
    req_event_t delivered = {"channel_message_delivered", ids[i]};
    assert_true(wait_until(a, pred_event, &delivered));
  }
  char got[16][64];
  int k = received_texts(b, got, 16);
  assert_int_equal(k, 9);
  for (int i = 0; i < 8; i++) {
    char want[32];
    snprintf(want, sizeof want, "alice-%d", i);
    assert_string_equal(got[i + 1], want);
  }
  ld_channels_set_test_rate_limit(0, 0);
  ld_channels_set_test_timing(0, 0, 0, 0);
  node_free(b);
  node_free(a);
}

/* ---- encryption hook ----------------------------------------------------------------------------
 */

static _Thread_local uint8_t tl_crypto_out[256];

/* XOR with the key byte in user data; the result lives until the next call on this thread. */
static int xor_hook(void *ud, const uint8_t *in, size_t len, const uint8_t **out, size_t *out_len) {
  uint8_t key = (uint8_t)(uintptr_t)ud;
  if (len > sizeof tl_crypto_out)
    return 1;
  for (size_t i = 0; i < len; i++)
    tl_crypto_out[i] = in[i] ^ key;
  *out = tl_crypto_out;
  *out_len = len;
  return 0;
}

static void set_encryption(node_t *n, LogosDeliveryCryptoFn enc, LogosDeliveryCryptoFn dec,
                           int ret) {
  reply_t r;
  reply_init(&r);
  assert_int_equal(logosdelivery_channel_set_encryption(n->ctx, on_reply, &r, "room", enc, dec,
                                                        (void *)(uintptr_t)0x20),
                   RET_OK);
  reply_expect(&r, ret, NULL, NULL, 0);
}

static void the_encryption_hook_is_applied_per_segment(void **state) {
  (void)state;
  ld_channels_set_test_timing(1000, 4000, 2000, 1000);
  node_t *a = node_start_in("crypto-a", "");
  node_t *b = node_start_dialing("crypto-b", a);
  set_encryption(a, xor_hook, NULL, RET_ERR); /* a pair or nothing */
  set_encryption(a, xor_hook, xor_hook, RET_OK);
  channel_create(a, "room", CTOPIC, "alice", RET_OK, "room");
  channel_create(b, "room", CTOPIC, "bob", RET_OK, "room");
  char id[64];
  channel_send_text(a, "hello", id); /* XOR 0x20: "HELLO" on the wire */
  assert_true(wait_until(b, pred_received, "HELLO"));
  set_encryption(b, xor_hook, xor_hook, RET_OK);
  channel_send_text(a, "secret", id);
  assert_true(wait_until(b, pred_received, "secret"));
  assert_false(has_received(b, "SECRET"));
  ld_channels_set_test_timing(0, 0, 0, 0);
  node_free(b);
  node_free(a);
}

/* ---- channel traffic without the meta marker (js-waku's ReliableChannel) -------------------- */

/* A plain Messaging API send (no `meta`) whose payload is an SDS content message of channel
 * "room", as js-waku's ReliableChannel puts it on the wire. */
static void send_unmarked_sds(node_t *n, const char *text) {
  ld_sds_message_t m;
  ld_sds_message_init(&m);
  m.sender_id = "js-sender";
  m.sender_id_len = strlen(m.sender_id);
  m.message_id = "a1b2c3d4e5f60718293a4b5c6d7e8f90a1b2c3d4e5f60718293a4b5c6d7e8f90";
  m.message_id_len = strlen(m.message_id);
  m.channel_id = "room";
  m.channel_id_len = strlen(m.channel_id);
  m.has_lamport = true;
  m.lamport = ld_wall_ns() / 1000000u;
  m.has_content = true;
  m.content = (const uint8_t *)text;
  m.content_len = strlen(text);
  ld_buf_t wire;
  ld_buf_init(&wire);
  assert_int_equal(ld_sds_message_encode(&m, &wire), 0);
  char b64[512], json[1024];
  assert_true(ld_base64_encode(wire.data, wire.len, b64, sizeof b64) > 0);
  ld_buf_clear(&wire);
  snprintf(json, sizeof json, "{\"contentTopic\":\"%s\",\"payload\":\"%s\"}", CTOPIC, b64);
  reply_t r;
  reply_init(&r);
  assert_int_equal(logosdelivery_send(n->ctx, on_reply, &r, json), RET_OK);
  reply_expect(&r, RET_OK, NULL, NULL, 0);
}

static void an_unmarked_sds_message_is_channel_traffic(void **state) {
  (void)state;
  node_t *a = node_start_in("unmarked-a", "");
  node_t *b = node_start_dialing("unmarked-b", a);
  channel_create(a, "room", CTOPIC, "c-receiver", RET_OK, "room");
  /* b's relay reaches a once a's subscription is in b's mesh: send until it is delivered */
  uint64_t deadline = ld_now_ms() + WAIT_MS;
  while (!has_received(a, "NO-MARKER")) {
    if (ld_now_ms() >= deadline)
      fail_msg("an SDS message without the meta marker was not delivered");
    send_unmarked_sds(b, "NO-MARKER");
    pthread_mutex_lock(&a->mu);
    tw_cond_wait_ms(&a->cv, &a->mu, 1000);
    pthread_mutex_unlock(&a->mu);
  }
  assert_int_equal(count(a, "channel_message_received", "senderId", "js-sender"), 1);
  node_free(b);
  node_free(a);
}

/* ---- retrieval hints from the moment of submission ------------------------------------------ */

/* Keeps every event (b, a plain subscriber, reads the channel's Waku messages). */
static void on_any_event(int ret, const char *msg, size_t len, void *ud) {
  node_t *n = ud;
  pthread_mutex_lock(&n->mu);
  if (ret != RET_OK)
    n->errors++;
  else if (n->n_events < MAX_EVENTS)
    n->events[n->n_events++] = strndup(msg, len);
  pthread_cond_broadcast(&n->cv);
  pthread_mutex_unlock(&n->mu);
}

typedef struct seen_sds {
  ld_sds_message_t sds;
  char hash[80]; /* the Waku message hash, 0x-hex */
} seen_sds_t;

/* The SDS message of n's message_received event `i` whose content is `text`, or false. */
static bool received_sds_at(node_t *n, int i, const char *text, seen_sds_t *out) {
  json_error_t e;
  json_t *v = json_loads(n->events[i], 0, &e);
  assert_non_null(v);
  bool found = false;
  json_t *payload = json_object_get(json_object_get(v, "message"), "payload");
  if (is_type(v, "message_received") && json_array_size(payload) > 0) {
    size_t len = json_array_size(payload);
    uint8_t *bytes = malloc(len);
    for (size_t k = 0; k < len; k++)
      bytes[k] = (uint8_t)json_integer_value(json_array_get(payload, k));
    ld_sds_message_init(&out->sds);
    found = ld_sds_message_decode(bytes, len, &out->sds, NULL, 0) == 0 && out->sds.has_content &&
            out->sds.content_len == strlen(text) &&
            memcmp(out->sds.content, text, out->sds.content_len) == 0;
    if (found)
      snprintf(out->hash, sizeof out->hash, "%s", field(v, "messageHash"));
    else
      ld_sds_message_clear(&out->sds);
    free(bytes);
  }
  json_decref(v);
  return found;
}

static bool received_sds(node_t *n, const char *text, seen_sds_t *out) {
  pthread_mutex_lock(&n->mu);
  bool found = false;
  for (int i = 0; i < n->n_events && !found; i++)
    found = received_sds_at(n, i, text, out);
  pthread_mutex_unlock(&n->mu);
  return found;
}

static bool pred_received_sds(node_t *n, const void *arg) {
  seen_sds_t seen;
  if (!received_sds(n, arg, &seen))
    return false;
  ld_sds_message_clear(&seen.sds);
  return true;
}

static void a_message_carries_the_hint_of_one_not_yet_propagated(void **state) {
  (void)state;
  node_t *a = node_start_in("hint-a", "");
  channel_create(a, "room", CTOPIC, "alice", RET_OK, "room");
  char id1[64], id2[64];
  channel_send_text(a, "hint-1", id1); /* a has no peer: neither message propagates yet */
  channel_send_text(a, "hint-2", id2);
  node_t *b = node_start_dialing("hint-b", a);
  logosdelivery_set_event_callback(b->ctx, on_any_event, b);
  reply_t r;
  reply_init(&r);
  assert_int_equal(logosdelivery_subscribe(b->ctx, on_reply, &r, CTOPIC), RET_OK);
  reply_expect(&r, RET_OK, NULL, NULL, 0);
  if (!wait_until(b, pred_received_sds, "hint-1") || !wait_until(b, pred_received_sds, "hint-2"))
    fail_msg("b did not receive both channel messages");
  seen_sds_t m1, m2;
  assert_true(received_sds(b, "hint-1", &m1));
  assert_true(received_sds(b, "hint-2", &m2));
  bool checked = false;
  for (size_t i = 0; i < m2.sds.causal_history_len; i++) {
    const ld_sds_history_entry_t *h = &m2.sds.causal_history[i];
    if (h->message_id_len != m1.sds.message_id_len ||
        memcmp(h->message_id, m1.sds.message_id, h->message_id_len) != 0)
      continue;
    assert_true(h->has_retrieval_hint);
    char hex[80] = "0x";
    assert_int_equal(h->retrieval_hint_len, 32);
    ld_hex_encode(h->retrieval_hint, h->retrieval_hint_len, hex + 2);
    assert_string_equal(hex, m1.hash);
    checked = true;
  }
  assert_true(checked); /* hint-1 is in hint-2's causal history */
  ld_sds_message_clear(&m1.sds);
  ld_sds_message_clear(&m2.sds);
  node_free(b);
  node_free(a);
}

static int setup(void **state) {
  (void)state;
  return mkdtemp(g_dir) != NULL ? 0 : -1;
}

/* ---- send queue ---------------------------------------------------------------------------------
 */

/* A burst larger than the outgoing buffer (4 here) while the only other participant does not
 * acknowledge yet (its channel is not created): 4 messages go to SDS, 8 wait in the send queue
 * (its bound), the 13th send is refused with the queue's error; the sender is destroyed and
 * created again (the queued sends come back from its state), then the other participant joins:
 * every accepted message is received once and in order, and acknowledged under its request
 * ID; none is given up. */
static void a_burst_beyond_the_outgoing_buffer_waits_in_the_send_queue(void **state) {
  (void)state;
  ld_channels_set_test_timing(200, 1000, 2000, 1000);
  ld_channels_set_test_limits(4, 8);
  node_t *b = node_start_in("queue-b", "");
  node_t *a = node_start_dialing("queue-a", b);
  channel_create(a, "room", CTOPIC, "alice", RET_OK, "room");
  char ids[12][64];
  for (int i = 0; i < 12; i++) {
    char text[32];
    snprintf(text, sizeof text, "burst-%02d", i);
    channel_send_text(a, text, ids[i]);
  }
  channel_send_json(a, "room", "{\"payload\":\"YQ==\"}", RET_ERR,
                    PREFIX "ChannelSend failed: send queue of channel room full (8 messages, 64 "
                           "bytes waiting; at most 8 messages, 67108864 bytes)",
                    NULL);
  node_free(a);
  a = node_start_dialing("queue-a", b);
  channel_create(a, "room", CTOPIC, "alice", RET_OK, "room");
  channel_create(b, "room", CTOPIC, "bob", RET_OK, "room");
  for (int i = 0; i < 12; i++) {
    req_event_t delivered = {"channel_message_delivered", ids[i]};
    assert_true(wait_until(a, pred_event, &delivered));
  }
  assert_int_equal(count(a, "channel_message_delivery_error", NULL, NULL), 0);
  char want[32];
  snprintf(want, sizeof want, "burst-%02d", 11);
  assert_true(wait_until(b, pred_received, want));
  char got[32][64];
  int k = received_texts(b, got, 32);
  assert_int_equal(k, 12);
  for (int i = 0; i < 12; i++) {
    snprintf(want, sizeof want, "burst-%02d", i);
    assert_string_equal(got[i], want);
  }
  ld_channels_set_test_limits(0, 0);
  ld_channels_set_test_timing(0, 0, 0, 0);
  node_free(a);
  node_free(b);
}

/* ---- acknowledgement syncs ------------------------------------------------------------------ */

/* With channelsOverrides sdsAckSyncEvery 2, the second content message B receives brings an
 * acknowledgement sync at once: A's two messages are delivered although B's acknowledgement
 * sync timer is 10 minutes away and B sends no periodic sync (nor anything else). */
static void sds_ack_sync_every_acknowledges_at_once(void **state) {
  (void)state;
  ld_channels_set_test_ack_sync_delay(600000);
  node_t *b = node_start_overriding("every-b", "\"sdsAckSyncEvery\":2,\"sdsSyncIntervalMs\":0");
  node_t *a = node_start_dialing("every-a", b);
  channel_create(a, "room", CTOPIC, "alice", RET_OK, "room");
  channel_create(b, "room", CTOPIC, "bob", RET_OK, "room");
  char first[64], second[64];
  channel_send_text(a, "first", first);
  assert_true(wait_until(b, pred_received, "first"));
  /* one received: B sent nothing, so nothing acknowledged it */
  assert_int_equal(count(a, "channel_message_delivered", "requestId", first), 0);
  channel_send_text(a, "second", second);
  req_event_t d1 = {"channel_message_delivered", first};
  req_event_t d2 = {"channel_message_delivered", second};
  assert_true(wait_until(a, pred_event, &d2));
  assert_true(wait_until(a, pred_event, &d1));
  ld_channels_set_test_ack_sync_delay(0);
  node_free(a);
  node_free(b);
}

/* With sdsAckSyncEvery 0 a burst received is acknowledged only by the acknowledgement sync
 * timer (2 s here): no send is delivered before it fired. */
static void sds_ack_sync_every_zero_leaves_it_to_the_timer(void **state) {
  (void)state;
  enum { DELAY_MS = 2000, BURST = 4 };
  ld_channels_set_test_ack_sync_delay(DELAY_MS);
  node_t *b = node_start_overriding("timer-b", "\"sdsAckSyncEvery\":0,\"sdsSyncIntervalMs\":0");
  node_t *a = node_start_dialing("timer-a", b);
  channel_create(a, "room", CTOPIC, "alice", RET_OK, "room");
  channel_create(b, "room", CTOPIC, "bob", RET_OK, "room");
  char ids[BURST][64];
  uint64_t t0 = ld_now_ms();
  for (int i = 0; i < BURST; i++) {
    char text[32];
    snprintf(text, sizeof text, "burst-%d", i);
    channel_send_text(a, text, ids[i]);
  }
  uint64_t first_delivered = 0;
  for (int i = 0; i < BURST; i++) {
    req_event_t delivered = {"channel_message_delivered", ids[i]};
    assert_true(wait_until(a, pred_event, &delivered));
    if (first_delivered == 0)
      first_delivered = ld_now_ms();
  }
  /* the timer is armed when B receives the first (after t0); the loop's clock may be a coarse
   * one, a few milliseconds behind */
  assert_true(first_delivered - t0 >= DELAY_MS - 50);
  ld_channels_set_test_ack_sync_delay(0);
  node_free(a);
  node_free(b);
}

static int teardown(void **state) {
  (void)state;
  char cmd[128];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", g_dir);
  return system(cmd) == 0 ? 0 : -1;
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(calls_answer_as_documented),
      cmocka_unit_test(three_participants_over_a_lossy_path),
      cmocka_unit_test(a_participant_restarts_mid_conversation),
      cmocka_unit_test(a_corrupted_state_database_is_refused),
      cmocka_unit_test(a_large_payload_crosses_as_segments),
      cmocka_unit_test(a_large_payload_is_rebuilt_from_parity),
      cmocka_unit_test(sends_over_the_rate_limit_wait_for_the_next_epochs),
      cmocka_unit_test(the_encryption_hook_is_applied_per_segment),
      cmocka_unit_test(a_burst_beyond_the_outgoing_buffer_waits_in_the_send_queue),
      cmocka_unit_test(an_unmarked_sds_message_is_channel_traffic),
      cmocka_unit_test(a_message_carries_the_hint_of_one_not_yet_propagated),
      cmocka_unit_test(sds_ack_sync_every_acknowledges_at_once),
      cmocka_unit_test(sds_ack_sync_every_zero_leaves_it_to_the_timer),
  };
  if (getenv("LD_TEST_FILTER") != NULL)
    cmocka_set_test_filter(getenv("LD_TEST_FILTER"));
  return cmocka_run_group_tests(tests, setup, teardown);
}
