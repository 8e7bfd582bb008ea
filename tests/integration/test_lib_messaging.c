/* Messaging through the stable C API, several contexts in one process over loopback:
 * - two Core nodes joined by a staticnode entry exchange a message: message_received once at
 *   the receiver, with the payload as an integer array; connection and health events flow;
 * - with a third node running store, a send goes message_propagated → message_sent;
 * - a store node whose archive is still opening keeps what it relays meanwhile and confirms it
 *   once open;
 * - an Edge node sends through lightpush and receives through filter via a service node;
 * - a context that loses its peers reports Disconnected, and once reconnected recovers the
 *   messages it missed from a store node, each reported once;
 * - an Edge sender whose lightpush service has no relay peer (every push answered 505) keeps
 *   pushing to it, and its message propagates and is confirmed once the service gets one;
 * - a Core context whose only configured peer is its store node (a relay node too) is connected
 *   to it at start and its send is propagated and confirmed. */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>
#include <jansson.h>

#include "base/clock.h"
#include "liblogosdelivery.h"
#include "liblogosdelivery_kernel.h"
#include "lib_reply.h"
#include "thread_wait.h"
#include "waku/archive/archive.h"

#define WAIT_MS 90000
#define MAX_EVENTS 4096
#define TOPIC "/libmsg/1/chat/proto"
#define SHARD "/waku/2/rs/66/0" /* TOPIC's shard: cluster 66, one shard */
#define BASE                                                                                       \
  "\"listenAddress\":\"127.0.0.1\",\"tcpPort\":0,\"clusterId\":66,\"discv5UdpPort\":0,"            \
  "\"numShardsInNetwork\":1,\"logLevel\":\"WARN\""

/* ---- replies -------------------------------------------------------------------------------- */

/* Waits for the answer; fails the test on RET_ERR or silence. Copies the text to `out`. */
static void reply_ok(reply_t *r, char *out, size_t cap) {
  reply_wait(r, WAIT_MS);
  if (r->ret != RET_OK)
    fail_msg("request failed: %s", r->msg);
  if (out != NULL && cap > 0) {
    size_t n = strnlen(r->msg, cap - 1);
    memcpy(out, r->msg, n);
    out[n] = '\0';
  }
}

typedef int (*simple_fn)(void *ctx, FFICallBack cb, void *ud);

static void call_ok(simple_fn fn, void *ctx) {
  reply_t r;
  reply_init(&r);
  assert_int_equal(fn(ctx, on_reply, &r), RET_OK);
  reply_ok(&r, NULL, 0);
}

/* ---- nodes and their events ----------------------------------------------------------------- */

typedef struct node {
  void *ctx;
  pthread_mutex_t mu;
  pthread_cond_t cv;
  char *events[MAX_EVENTS];
  uint64_t event_ms[MAX_EVENTS]; /* when each event arrived (monotonic) */
  int n_events;
  int errors; /* RET_ERR events */
  char addr[512];
  char peer_id[128];
} node_t;

static void on_event(int ret, const char *msg, size_t len, void *ud) {
  node_t *n = ud;
  pthread_mutex_lock(&n->mu);
  if (ret != RET_OK)
    n->errors++;
  else if (n->n_events < MAX_EVENTS) {
    n->event_ms[n->n_events] = ld_now_ms();
    n->events[n->n_events++] = strndup(msg, len);
  }
  pthread_cond_broadcast(&n->cv);
  pthread_mutex_unlock(&n->mu);
}

static void info(node_t *n, const char *id, char *out, size_t cap) {
  reply_t r;
  reply_init(&r);
  assert_int_equal(logosdelivery_get_node_info(n->ctx, on_reply, &r, id), RET_OK);
  reply_ok(&r, out, cap);
}

/* Creates and starts a node from the configuration `fields` (without braces). */
static node_t *node_start(const char *fields) {
  node_t *n = calloc(1, sizeof *n);
  pthread_mutex_init(&n->mu, NULL);
  pthread_cond_init(&n->cv, NULL);
  char config[2048];
  snprintf(config, sizeof config, "{" BASE "%s%s}", fields[0] != '\0' ? "," : "", fields);
  reply_t r;
  reply_init(&r);
  n->ctx = logosdelivery_create_node(config, on_reply, &r);
  assert_non_null(n->ctx);
  reply_ok(&r, NULL, 0);
  logosdelivery_set_event_callback(n->ctx, on_event, n);
  call_ok(logosdelivery_start_node, n->ctx);
  info(n, "MyMultiaddresses", n->addr, sizeof n->addr);
  char *comma = strchr(n->addr, ',');
  if (comma != NULL)
    *comma = '\0';
  assert_non_null(strstr(n->addr, "/ip4/127.0.0.1/tcp/"));
  info(n, "MyPeerId", n->peer_id, sizeof n->peer_id);
  return n;
}

static void node_free(node_t *n) {
  call_ok(logosdelivery_stop_node, n->ctx);
  reply_t r;
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

/* Does event `json` have eventType `type` and (when key is not NULL) `key` == `value`? */
static bool event_is(const char *json, const char *type, const char *key, const char *value) {
  json_error_t e;
  json_t *v = json_loads(json, 0, &e);
  if (v == NULL)
    fail_msg("event is not JSON: %s", json);
  const char *first = json_object_iter_key(json_object_iter(v));
  if (first == NULL || strcmp(first, "eventType") != 0)
    fail_msg("eventType is not the first key: %s", json);
  bool ok = strcmp(json_string_value(json_object_get(v, "eventType")), type) == 0;
  if (ok && key != NULL) {
    json_t *f = json_object_get(v, key);
    ok = json_is_string(f) && strcmp(json_string_value(f), value) == 0;
  }
  json_decref(v);
  return ok;
}

static int count_events(node_t *n, const char *type, const char *key, const char *value) {
  int c = 0;
  pthread_mutex_lock(&n->mu);
  for (int i = 0; i < n->n_events; i++)
    c += event_is(n->events[i], type, key, value);
  pthread_mutex_unlock(&n->mu);
  return c;
}

typedef bool (*event_pred)(const char *json, const void *arg);

/* The number of events so far: later waits can start there. */
static int events_now(node_t *n) {
  pthread_mutex_lock(&n->mu);
  int c = n->n_events;
  pthread_mutex_unlock(&n->mu);
  return c;
}

/* Index of the first event at or after index `from` matching `pred`, waiting for it; -1 after
 * `ms`. */
static int wait_match_from(node_t *n, int from, event_pred pred, const void *arg, uint64_t ms) {
  uint64_t deadline = ld_now_ms() + ms;
  int seen = from;
  pthread_mutex_lock(&n->mu);
  for (;;) {
    for (; seen < n->n_events; seen++)
      if (pred(n->events[seen], arg)) {
        pthread_mutex_unlock(&n->mu);
        return seen;
      }
    if (ld_now_ms() >= deadline)
      break;
    tw_cond_wait_ms(&n->cv, &n->mu, 50);
  }
  pthread_mutex_unlock(&n->mu);
  return -1;
}

/* Index of the first event matching `pred`, waiting for it; -1 after `ms`. */
static int wait_match_for(node_t *n, event_pred pred, const void *arg, uint64_t ms) {
  return wait_match_from(n, 0, pred, arg, ms);
}

static int wait_match(node_t *n, event_pred pred, const void *arg) {
  return wait_match_for(n, pred, arg, WAIT_MS);
}

typedef struct match {
  const char *type, *key, *value;
} match_t;

static bool match_event(const char *json, const void *arg) {
  const match_t *m = arg;
  return event_is(json, m->type, m->key, m->value);
}

static int wait_event(node_t *n, const char *type, const char *key, const char *value) {
  match_t m = {type, key, value};
  return wait_match(n, match_event, &m);
}

/* A message_received event whose payload is the text `arg`. */
static bool received_text(const char *json, const void *arg) {
  if (!event_is(json, "message_received", NULL, NULL))
    return false;
  json_error_t e;
  json_t *v = json_loads(json, 0, &e);
  json_t *payload = json_object_get(json_object_get(v, "message"), "payload");
  const char *want = arg;
  bool same = json_array_size(payload) == strlen(want);
  for (size_t k = 0; same && k < json_array_size(payload); k++)
    same = json_integer_value(json_array_get(payload, k)) == (unsigned char)want[k];
  json_decref(v);
  return same;
}

static void subscribe(node_t *n, const char *topic) {
  reply_t r;
  reply_init(&r);
  assert_int_equal(logosdelivery_subscribe(n->ctx, on_reply, &r, topic), RET_OK);
  reply_ok(&r, NULL, 0);
}

/* Sends `text` on TOPIC; returns the request ID in `id`. */
static void send_text(node_t *n, const char *b64, bool ephemeral, char id[32]) {
  char json[256];
  snprintf(json, sizeof json,
           "{\"contentTopic\":\"" TOPIC "\",\"payload\":\"%s\",\"ephemeral\":%s}", b64,
           ephemeral ? "true" : "false");
  reply_t r;
  reply_init(&r);
  assert_int_equal(logosdelivery_send(n->ctx, on_reply, &r, json), RET_OK);
  reply_ok(&r, id, 32);
  assert_int_equal(strlen(id), 20);
}

/* The payload of a message_received event as text. */
static void received_payload(node_t *n, int index, char *out, size_t cap, char *hash,
                             size_t hash_cap) {
  pthread_mutex_lock(&n->mu);
  json_error_t e;
  json_t *v = json_loads(n->events[index], 0, &e);
  pthread_mutex_unlock(&n->mu);
  assert_non_null(v);
  json_t *msg = json_object_get(v, "message");
  assert_string_equal(json_string_value(json_object_get(msg, "contentTopic")), TOPIC);
  json_t *payload = json_object_get(msg, "payload");
  assert_true(json_is_array(payload));
  size_t k = 0;
  for (; k < json_array_size(payload) && k + 1 < cap; k++)
    out[k] = (char)json_integer_value(json_array_get(payload, k));
  out[k] = '\0';
  assert_true(json_is_array(json_object_get(msg, "meta")));
  assert_true(json_is_array(json_object_get(msg, "proof")));
  assert_true(json_integer_value(json_object_get(msg, "timestamp")) > 0);
  snprintf(hash, hash_cap, "%s", json_string_value(json_object_get(v, "messageHash")));
  json_decref(v);
}

static void staticnode(char *out, size_t cap, const node_t *peer) {
  snprintf(out, cap, "\"staticnodes\":[\"%s\"]", peer->addr);
}

/* ---- tests ---------------------------------------------------------------------------------- */

static void two_core_nodes_exchange_a_message(void **state) {
  (void)state;
  node_t *a = node_start("");
  char fields[768];
  staticnode(fields, sizeof fields, a);
  node_t *b = node_start(fields);
  assert_true(wait_event(a, "connection_change", "peerId", b->peer_id) >= 0);
  assert_true(wait_event(b, "connection_change", "peerId", a->peer_id) >= 0);
  assert_true(wait_event(a, "connection_change", "peerEvent", "EventConnected") >= 0);
  subscribe(a, TOPIC);
  subscribe(b, TOPIC);

  char id[32];
  send_text(b, "aGVsbG8gZnJvbSBi", false, id); /* "hello from b" */
  assert_true(wait_event(b, "message_propagated", "requestId", id) >= 0);
  int at = wait_event(a, "message_received", NULL, NULL);
  assert_true(at >= 0);
  char text[64], hash[80];
  received_payload(a, at, text, sizeof text, hash, sizeof hash);
  assert_string_equal(text, "hello from b");
  assert_int_equal(strlen(hash), 66);
  /* the propagated event names the same message */
  int p = wait_event(b, "message_propagated", "messageHash", hash);
  assert_true(p >= 0);

  /* once only: a later message arrives, and the first was still reported a single time */
  send_text(b, "c2Vjb25k", true, id); /* "second" */
  assert_true(wait_match(a, received_text, "second") > at);
  assert_int_equal(count_events(a, "message_received", NULL, NULL), 2);
  assert_int_equal(count_events(a, "message_received", "messageHash", hash), 1);
  assert_true(wait_event(a, "connection_status_change", NULL, NULL) >= 0);
  /* the mesh forms at a gossipsub heartbeat: the shard becomes minimally healthy */
  assert_true(wait_event(a, "relay_topic_health_change", "topicHealth", "MinimallyHealthy") >= 0);
  assert_true(wait_event(a, "relay_topic_health_change", "pubsubTopic", "/waku/2/rs/66/0") >= 0);
  node_free(b);
  assert_true(wait_event(a, "connection_change", "peerEvent", "EventDisconnected") >= 0);
  node_free(a);
}

static void wait_mesh(node_t *n, int want);
static int received_at(node_t *n, int from, const char *text, char hash[80]);

static void store_confirms_a_send(void **state) {
  (void)state;
  node_t *store = node_start("\"store\":true,\"storeMessageDbUrl\":\"memory://\"");
  char fields[768];
  staticnode(fields, sizeof fields, store);
  node_t *a = node_start(fields);
  node_t *b = node_start(fields);
  assert_true(wait_event(store, "connection_change", "peerId", a->peer_id) >= 0);
  assert_true(wait_event(store, "connection_change", "peerId", b->peer_id) >= 0);
  subscribe(a, TOPIC);
  subscribe(b, TOPIC);
  wait_mesh(store, 2); /* the store forwards along its mesh only */

  char id[32];
  send_text(b, "c3RvcmVk", false, id); /* "stored" */
  int p = wait_event(b, "message_propagated", "requestId", id);
  int s = wait_event(b, "message_sent", "requestId", id);
  assert_true(p >= 0);
  assert_true(s > p);
  assert_int_equal(count_events(b, "message_propagated", "requestId", id), 1);
  assert_int_equal(count_events(b, "message_sent", "requestId", id), 1);
  assert_int_equal(count_events(b, "message_error", "requestId", id), 0);
  assert_true(wait_event(a, "message_received", NULL, NULL) >= 0);
  node_free(a);
  node_free(b);
  node_free(store);
}

/* A store node whose archive is still opening (held open by the archive's test hook, as a large
 * archive or a long migration would) already takes part in relay: the messages it relays
 * meanwhile are kept and written once the archive is open, the store queries that confirm the
 * sends wait for the open instead of failing, and every send ends in message_sent. */
static void a_store_node_keeps_what_it_relays_while_its_archive_opens(void **state) {
  (void)state;
  char dir[] = "/tmp/ld-libmsg-XXXXXX";
  assert_non_null(mkdtemp(dir));
  char fields[768];
  snprintf(fields, sizeof fields, "\"store\":true,\"storeMessageDbUrl\":\"sqlite://%s/archive.db\"",
           dir);
  ld_archive_hold_opening(true);
  node_t *store = node_start(fields);
  staticnode(fields, sizeof fields, store);
  node_t *b = node_start(fields);
  subscribe(store, TOPIC); /* its message_received events show what it relayed */
  subscribe(b, TOPIC);
  wait_mesh(store, 1);

  enum { N = 3 };
  static const char *const b64[N] = {
      "b3BlbmluZyBvbmU=", "b3BlbmluZyB0d28=", "b3BlbmluZyB0aHJlZQ=="};
  static const char *const text[N] = {"opening one", "opening two", "opening three"};
  char id[N][32], hash[N][80];
  for (int i = 0; i < N; i++) {
    send_text(b, b64[i], false, id[i]);
    assert_true(wait_event(b, "message_propagated", "requestId", id[i]) >= 0);
    received_at(store, 0, text[i], hash[i]);
  }
  /* the archive is not open yet: nothing can have been confirmed */
  assert_int_equal(count_events(b, "message_sent", NULL, NULL), 0);
  ld_archive_hold_opening(false);

  for (int i = 0; i < N; i++) {
    assert_true(wait_event(b, "message_sent", "requestId", id[i]) >= 0);
    assert_int_equal(count_events(b, "message_error", "requestId", id[i]), 0);
  }
  char query[512];
  snprintf(query, sizeof query,
           "{\"requestId\":\"opening\",\"includeData\":false,\"paginationForward\":true,"
           "\"messageHashes\":[\"%s\",\"%s\",\"%s\"]}",
           hash[0], hash[1], hash[2]);
  reply_t r;
  reply_init(&r);
  assert_int_equal(waku_store_query(b->ctx, on_reply, &r, query, store->addr, 10000), RET_OK);
  char res[1024];
  reply_ok(&r, res, sizeof res);
  for (int i = 0; i < N; i++)
    if (strstr(res, hash[i]) == NULL)
      fail_msg("message %d (%s) is not in the archive: %s", i, hash[i], res);
  node_free(b);
  node_free(store);
  char path[64];
  static const char *const suffix[] = {"", "-wal", "-shm"};
  for (int i = 0; i < 3; i++) {
    snprintf(path, sizeof path, "%s/archive.db%s", dir, suffix[i]);
    unlink(path);
  }
  rmdir(dir);
}

/* Lets the other tests' archives open even when the test above failed while holding them. */
static int release_archive_hold(void **state) {
  (void)state;
  ld_archive_hold_opening(false);
  return 0;
}

static void edge_sends_by_lightpush_and_receives_by_filter(void **state) {
  (void)state;
  node_t *service = node_start("\"store\":true,\"storeMessageDbUrl\":\"memory://\","
                               "\"filter\":true,\"lightpush\":true");
  char fields[1024];
  staticnode(fields, sizeof fields, service);
  node_t *relay = node_start(fields);
  subscribe(relay, TOPIC);
  assert_true(wait_event(service, "connection_change", "peerId", relay->peer_id) >= 0);
  char edge_fields[1100];
  snprintf(edge_fields, sizeof edge_fields, "\"mode\":\"Edge\",%s", fields);
  node_t *edge = node_start(edge_fields);
  assert_true(wait_event(service, "connection_change", "peerId", edge->peer_id) >= 0);
  subscribe(edge, TOPIC);

  /* from the relay side to the edge node, through filter: the edge node's filter subscription
   * at the service node is made in the background, so messages sent before it is in place are
   * not pushed; send until one arrives */
  char id[32];
  int got = -1;
  uint64_t deadline = ld_now_ms() + WAIT_MS;
  while (got < 0 && ld_now_ms() < deadline) {
    send_text(relay, "dG8gZWRnZQ==", false, id); /* "to edge" */
    got = wait_match_for(edge, received_text, "to edge", 1000);
  }
  assert_true(got >= 0);

  /* from the edge node, through lightpush, to the relay side */
  send_text(edge, "ZnJvbSBlZGdl", false, id); /* "from edge" */
  assert_true(wait_event(edge, "message_propagated", "requestId", id) >= 0);
  int r = wait_match(relay, received_text, "from edge");
  assert_true(r >= 0);
  node_free(edge);
  node_free(relay);
  node_free(service);
}

/* A payload over the node's size limit is accepted by send (a request ID) and then reported by
 * message_error, as the Nim library does. */
static void oversized_send_is_a_message_error(void **state) {
  (void)state;
  node_t *a = node_start("");
  size_t raw = 160 * 1024, b64 = (raw + 2) / 3 * 4;
  char *json = malloc(b64 + 128);
  assert_non_null(json);
  int n = snprintf(json, 128, "{\"contentTopic\":\"" TOPIC "\",\"payload\":\"");
  memset(json + n, 'A', b64);
  snprintf(json + n + b64, 8, "\"}");
  reply_t r;
  reply_init(&r);
  assert_int_equal(logosdelivery_send(a->ctx, on_reply, &r, json), RET_OK);
  free(json);
  char id[32];
  reply_ok(&r, id, sizeof id);
  assert_int_equal(strlen(id), 20);
  int e = wait_event(a, "message_error", "requestId", id);
  assert_true(e >= 0);
  pthread_mutex_lock(&a->mu);
  assert_non_null(strstr(a->events[e], "Message size exceeded maximum of 153600 bytes"));
  pthread_mutex_unlock(&a->mu);
  assert_int_equal(count_events(a, "message_propagated", "requestId", id), 0);
  node_free(a);
}

/* ---- recovery ------------------------------------------------------------------------------- */

/* Gossipsub with nwaku's parameters (one heartbeat a second, IHAVE for the messages of the last 3
 * heartbeats, IWANT answered from the last 6): a message a relay peer got this long before
 * another peer joins it can reach that peer only through a store recovery. */
#define GOSSIP_FORGETS_MS 8000

static void connect_to(node_t *n, const node_t *peer) {
  reply_t r;
  reply_init(&r);
  assert_int_equal(waku_connect(n->ctx, on_reply, &r, peer->addr, WAIT_MS), RET_OK);
  reply_ok(&r, NULL, 0);
}

static void relay_subscribe(node_t *n, const char *pubsub_topic) {
  reply_t r;
  reply_init(&r);
  assert_int_equal(waku_relay_subscribe(n->ctx, on_reply, &r, pubsub_topic), RET_OK);
  reply_ok(&r, NULL, 0);
}

/* Waits until the relay mesh of `n` on SHARD holds at least `want` peers: a message published
 * on a peer before the receiver is in its mesh is neither forwarded to the receiver nor, once the
 * heartbeat has grafted it, gossiped to it. */
static void wait_mesh(node_t *n, int want) {
  uint64_t deadline = ld_now_ms() + WAIT_MS;
  for (;;) {
    char text[32];
    reply_t r;
    reply_init(&r);
    assert_int_equal(waku_relay_get_num_peers_in_mesh(n->ctx, on_reply, &r, SHARD), RET_OK);
    reply_ok(&r, text, sizeof text);
    if (atoi(text) >= want)
      return;
    if (ld_now_ms() >= deadline)
      fail_msg("the mesh on %s has %s peers, not %d", SHARD, text, want);
    nanosleep(&(struct timespec){0, 100 * 1000 * 1000}, NULL);
  }
}

static bool status_up(const char *json, const void *arg) {
  (void)arg;
  return event_is(json, "connection_status_change", NULL, NULL) &&
         !event_is(json, "connection_status_change", "connectionStatus", "Disconnected");
}

static bool status_down(const char *json, const void *arg) {
  (void)arg;
  return event_is(json, "connection_status_change", "connectionStatus", "Disconnected");
}

static bool any_received(const char *json, const void *arg) {
  (void)arg;
  return event_is(json, "message_received", NULL, NULL);
}

static bool any_status(const char *json, const void *arg) {
  (void)arg;
  return event_is(json, "connection_status_change", NULL, NULL);
}

/* Waits for the message_received event of `text` at `n` (from event `from` on), checks its
 * payload and content topic, and returns its index; its hash goes to `hash`. */
static int received_at(node_t *n, int from, const char *text, char hash[80]) {
  int at = wait_match_from(n, from, received_text, text, WAIT_MS);
  if (at < 0)
    fail_msg("no message_received for \"%s\"", text);
  char got[64];
  received_payload(n, at, got, sizeof got, hash, 80);
  assert_string_equal(got, text);
  assert_int_equal(strlen(hash), 66);
  return at;
}

/* Sends `text` (`b64`) from `n` and waits until the store confirmed it (message_sent). */
static void send_stored(node_t *n, const char *b64) {
  char id[32];
  send_text(n, b64, false, id);
  int p = wait_event(n, "message_propagated", "requestId", id);
  assert_true(p >= 0);
  assert_true(wait_event(n, "message_sent", "requestId", id) > p);
  assert_int_equal(count_events(n, "message_error", "requestId", id), 0);
}

/* R, connected to the store node S by waku_connect (no static node), gets
 * P's first message live, is cut off by waku_disconnect_all_peers and misses two messages that S
 * archives; reconnected by hand after gossip has forgotten them, it reports them from a store
 * recovery. A kernel relay subscription on the shard at R is the witness: it reports what relay
 * delivered ("message" events), so the missed messages must not appear there. */
static void a_reconnected_context_recovers_missed_messages(void **state) {
  (void)state;
  node_t *s = node_start("\"store\":true,\"storeMessageDbUrl\":\"memory://\"");
  char fields[768];
  staticnode(fields, sizeof fields, s);
  node_t *p = node_start(fields);
  node_t *r = node_start("");
  subscribe(r, TOPIC);
  relay_subscribe(r, SHARD);
  subscribe(p, TOPIC);
  connect_to(r, s);
  assert_true(wait_match(r, status_up, NULL) >= 0);
  wait_mesh(s, 2);

  char h1[80], h2[80], h3[80], h4[80];
  send_stored(p, "bGl2ZSBvbmU="); /* "live one" */
  received_at(r, 0, "live one", h1);
  assert_true(wait_event(r, "message", "messageHash", h1) >= 0); /* the witness sees relay */

  /* cut off: Disconnected, then nothing arrives while P's next two messages are archived (both
   * sides disconnect on purpose, so neither peer manager redials the other) */
  int cut = events_now(r);
  reply_t off;
  reply_init(&off);
  assert_int_equal(waku_disconnect_peer_by_id(s->ctx, on_reply, &off, r->peer_id), RET_OK);
  reply_ok(&off, NULL, 0);
  call_ok(waku_disconnect_all_peers, r->ctx);
  int down = wait_match_from(r, cut, status_down, NULL, WAIT_MS);
  assert_true(down >= cut);
  send_stored(p, "bWlzc2VkIHR3bw=="); /* "missed two" */
  send_stored(p, "bWlzc2VkIHRocmVl"); /* "missed three" */
  assert_true(wait_match_from(r, down, any_received, NULL, GOSSIP_FORGETS_MS) < 0);
  assert_true(wait_match_from(r, down + 1, any_status, NULL, 0) < 0); /* still Disconnected */

  int back = events_now(r);
  connect_to(r, s);
  int up = wait_match_from(r, back, status_up, NULL, WAIT_MS);
  assert_true(up >= back);
  int i2 = received_at(r, back, "missed two", h2);
  int i3 = received_at(r, back, "missed three", h3);
  assert_true(down < up && up < i2 && up < i3);

  /* one more live message once R is back in S's mesh: by then the recovered ones were still
   * reported once, the first one was not reported again, and relay delivered only the live
   * ones */
  wait_mesh(s, 2);
  send_stored(p, "bGl2ZSBmb3Vy"); /* "live four" */
  received_at(r, back, "live four", h4);
  assert_true(wait_event(r, "message", "messageHash", h4) >= 0);
  assert_int_equal(count_events(r, "message_received", NULL, NULL), 4);
  assert_int_equal(count_events(r, "message_received", "messageHash", h1), 1);
  assert_int_equal(count_events(r, "message_received", "messageHash", h2), 1);
  assert_int_equal(count_events(r, "message_received", "messageHash", h3), 1);
  assert_int_equal(count_events(r, "message", "messageHash", h2), 0);
  assert_int_equal(count_events(r, "message", "messageHash", h3), 0);
  node_free(r);
  node_free(p);
  node_free(s);
}

/* ---- service peers ----------------------------------------------------------------------------
 */

/* message_propagated or message_error of the request `arg`. */
static bool send_outcome(const char *json, const void *arg) {
  return event_is(json, "message_propagated", "requestId", arg) ||
         event_is(json, "message_error", "requestId", arg);
}

/* Waits for the first outcome of request `id` and fails unless it is message_propagated; returns
 * its index. */
static int expect_propagated(node_t *n, const char *id) {
  int at = wait_match(n, send_outcome, id);
  assert_true(at >= 0);
  pthread_mutex_lock(&n->mu);
  bool ok = event_is(n->events[at], "message_propagated", "requestId", id);
  char text[512];
  snprintf(text, sizeof text, "%s", n->events[at]);
  pthread_mutex_unlock(&n->mu);
  if (!ok)
    fail_msg("not propagated: %s", text);
  return at;
}

static uint64_t event_time(node_t *n, int index) {
  pthread_mutex_lock(&n->mu);
  uint64_t ms = n->event_ms[index];
  pthread_mutex_unlock(&n->mu);
  return ms;
}

/* Long enough for several pushes to be answered 505 (one round a second). */
#define SERVICE_ALONE_MS 3000

static void edge_push_goes_through_once_the_service_has_a_relay_peer(void **state) {
  (void)state;
  node_t *svc = node_start("\"store\":true,\"storeMessageDbUrl\":\"memory://\","
                           "\"lightpush\":true");
  char fields[1400];
  snprintf(fields, sizeof fields, "\"mode\":\"Edge\",\"lightpushnode\":\"%s\",\"storenode\":\"%s\"",
           svc->addr, svc->addr);
  node_t *edge = node_start(fields);
  assert_true(wait_event(svc, "connection_change", "peerId", edge->peer_id) >= 0);

  /* the service has no relay peer: its answers are 505 NO_PEERS_TO_RELAY */
  char id[32];
  send_text(edge, "YmVmb3JlIGFueSByZWxheQ==", false, id); /* "before any relay" */
  nanosleep(&(struct timespec){SERVICE_ALONE_MS / 1000, 0}, NULL);
  assert_int_equal(count_events(edge, "message_propagated", "requestId", id), 0);
  assert_int_equal(count_events(edge, "message_error", "requestId", id), 0);

  /* then a relay node joins it */
  char relay_fields[768];
  staticnode(relay_fields, sizeof relay_fields, svc);
  node_t *relay = node_start(relay_fields);
  subscribe(relay, TOPIC);
  int joined = wait_event(svc, "connection_change", "peerId", relay->peer_id);
  assert_true(joined >= 0);
  int p = expect_propagated(edge, id);
  int sent = wait_event(edge, "message_sent", "requestId", id);
  assert_true(sent > p);
  assert_true(wait_match(relay, received_text, "before any relay") >= 0);
  assert_int_equal(count_events(edge, "message_error", "requestId", id), 0);
  uint64_t joined_ms = event_time(svc, joined), propagated_ms = event_time(edge, p);
  print_message("message_propagated %lld ms after the service's connection to its first relay "
                "peer\n",
                (long long)propagated_ms - (long long)joined_ms);
  node_free(relay);
  node_free(edge);
  node_free(svc);
}

static void core_with_only_a_store_node_connects_and_confirms(void **state) {
  (void)state;
  node_t *svc = node_start("\"store\":true,\"storeMessageDbUrl\":\"memory://\"");
  char fields[768];
  snprintf(fields, sizeof fields, "\"storenode\":\"%s\"", svc->addr);
  node_t *core = node_start(fields);
  /* dialed at start, without any store query */
  assert_true(wait_event(svc, "connection_change", "peerId", core->peer_id) >= 0);
  assert_true(wait_event(core, "connection_change", "peerId", svc->peer_id) >= 0);
  subscribe(core, TOPIC);

  char id[32];
  send_text(core, "b25seSBhIHN0b3Jl", false, id); /* "only a store" */
  int p = expect_propagated(core, id);
  assert_true(wait_event(core, "message_sent", "requestId", id) > p);
  assert_int_equal(count_events(core, "message_error", "requestId", id), 0);
  node_free(core);
  node_free(svc);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(two_core_nodes_exchange_a_message),
      cmocka_unit_test(store_confirms_a_send),
      cmocka_unit_test_teardown(a_store_node_keeps_what_it_relays_while_its_archive_opens,
                                release_archive_hold),
      cmocka_unit_test(edge_sends_by_lightpush_and_receives_by_filter),
      cmocka_unit_test(oversized_send_is_a_message_error),
      cmocka_unit_test(a_reconnected_context_recovers_missed_messages),
      cmocka_unit_test(edge_push_goes_through_once_the_service_has_a_relay_peer),
      cmocka_unit_test(core_with_only_a_store_node_connects_and_confirms),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
