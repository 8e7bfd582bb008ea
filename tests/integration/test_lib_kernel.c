/* The kernel tier of liblogosdelivery (liblogosdelivery_kernel.h, c-api.md §3) through the
 * public API only: contexts on 127.0.0.1 with ephemeral ports connected with waku_connect; relay
 * publish and subscribe with `message` events only while a kernel subscription exists; relay
 * peer counts; lightpush; filter; store queries and their JSON; peer lists, dialing, ping, peer
 * exchange, disconnecting; node information; the discovery calls this build does not have; and
 * the error paths (bad JSON, missing fields, bad addresses, unknown peers, timeouts, a node that
 * is not started or stops while a request waits). */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cmocka.h>
#include <jansson.h>

#include "base/clock.h"
#include "base/error.h"
#include "liblogosdelivery.h"
#include "liblogosdelivery_kernel.h"
#include "lib/context.h"
#include "node/node.h"
#include "node/node_rln_publish.h"
#include "rln_harness.h"
#include "waku/rln/proof.h"
#include "thread_wait.h"

#define WAIT_MS 30000
#define PREFIX "ffi error: handleRes fireSyncRes error: "
#define CLUSTER "42"
#define TOPIC "/waku/2/rs/42/3"
#define OTHER_TOPIC "/waku/2/rs/42/5"
#define CONTENT "/kernel/1/chat/proto"

/* Service node: relay, store on the in-memory archive, lightpush, filter, peer exchange. */
#define CONFIG_SERVICE                                                                             \
  "{\"entryLayer\":\"kernel\",\"kernelConf\":{\"listenAddress\":\"127.0.0.1\",\"tcpPort\":0,"      \
  "\"clusterId\":" CLUSTER ",\"numShardsInNetwork\":8,\"relay\":true,\"store\":true,"              \
  "\"storeMessageDbUrl\":\"memory://\",\"lightpush\":true,\"filter\":true,"                        \
  "\"peerExchange\":true,\"discv5Discovery\":false,\"rest\":false,\"logLevel\":\"WARN\"}}"
/* A plain relay node in the legacy flat shape (the full stack mounted). */
#define CONFIG_RELAY                                                                               \
  "{\"listenAddress\":\"127.0.0.1\",\"tcpPort\":0,\"relay\":true,\"clusterId\":" CLUSTER           \
  ",\"numShardsInNetwork\":8,\"discv5Discovery\":false,\"rest\":false,\"filter\":false,"           \
  "\"lightpush\":false,\"peerExchange\":false,\"logLevel\":\"WARN\"}"

/* ---- replies -------------------------------------------------------------------------------- */

typedef struct reply {
  pthread_mutex_t mu;
  pthread_cond_t cv;
  int n;
  int ret;
  char *text;
} reply_t;

static reply_t R;

static void on_reply(int ret, const char *msg, size_t len, void *ud) {
  reply_t *r = ud;
  pthread_mutex_lock(&r->mu);
  free(r->text);
  r->text = malloc(len + 1);
  if (len > 0)
    memcpy(r->text, msg, len);
  r->text[len] = '\0';
  r->ret = ret;
  r->n++;
  pthread_cond_broadcast(&r->cv);
  pthread_mutex_unlock(&r->mu);
}

static void reply_reset(reply_t *r) {
  pthread_mutex_lock(&r->mu);
  r->n = 0;
  r->ret = -1;
  free(r->text);
  r->text = NULL;
  pthread_mutex_unlock(&r->mu);
}

/* Waits for the one answer of a dispatched call; returns its text (valid until the next call). */
static const char *g_what = "";

static const char *reply_wait(reply_t *r, int dispatched) {
  if (dispatched != RET_OK)
    fail_msg("%s: dispatch returned %d", g_what, dispatched);
  uint64_t deadline = ld_now_ms() + WAIT_MS;
  pthread_mutex_lock(&r->mu);
  while (r->n == 0 && ld_now_ms() < deadline)
    tw_cond_wait_ms(&r->cv, &r->mu, 20);
  int n = r->n;
  pthread_mutex_unlock(&r->mu);
  if (n != 1)
    fail_msg("%s: %d answers", g_what, n);
  return r->text;
}

#define CALL(expr) (reply_reset(&R), g_what = #expr, reply_wait(&R, (expr)))

/* The call must succeed; returns its reply text. */
#define OK(expr) ok_text(CALL(expr), #expr)
static const char *ok_text(const char *text, const char *what) {
  if (R.ret != RET_OK)
    fail_msg("%s failed: %s", what, text);
  return text;
}

/* The call must fail with PREFIX + `expected` (a trailing '*' matches any rest). */
#define ERR(expr, expected) err_text(CALL(expr), expected)
static void err_text(const char *text, const char *expected) {
  if (R.ret != RET_ERR)
    fail_msg("%s succeeded: \"%s\"", g_what, text);
  char want[1024];
  snprintf(want, sizeof want, PREFIX "%s", expected);
  size_t n = strlen(want);
  if (n > 0 && want[n - 1] == '*') {
    if (strncmp(text, want, n - 1) != 0)
      fail_msg("\"%s\" does not start with \"%.*s\"", text, (int)(n - 1), want);
  } else if (strcmp(text, want) != 0) {
    fail_msg("\"%s\" is not \"%s\"", text, want);
  }
}

/* ---- events --------------------------------------------------------------------------------- */

#define MAX_EVENTS 512

typedef struct events {
  pthread_mutex_t mu;
  pthread_cond_t cv;
  char *items[MAX_EVENTS];
  size_t n;
} events_t;

static void on_event(int ret, const char *msg, size_t len, void *ud) {
  events_t *e = ud;
  if (ret != RET_OK || msg == NULL)
    return;
  pthread_mutex_lock(&e->mu);
  if (e->n < MAX_EVENTS) {
    e->items[e->n] = strndup(msg, len);
    e->n++;
  }
  pthread_cond_broadcast(&e->cv);
  pthread_mutex_unlock(&e->mu);
}

static void events_init(events_t *e) {
  memset(e, 0, sizeof *e);
  pthread_mutex_init(&e->mu, NULL);
  pthread_cond_init(&e->cv, NULL);
}

static void events_clear(events_t *e) {
  for (size_t i = 0; i < e->n; i++)
    free(e->items[i]);
  pthread_mutex_destroy(&e->mu);
  pthread_cond_destroy(&e->cv);
}

/* Kernel `message` events holding `needle` so far. */
static size_t count_messages(events_t *e, const char *needle) {
  size_t found = 0;
  pthread_mutex_lock(&e->mu);
  for (size_t i = 0; i < e->n; i++)
    if (strncmp(e->items[i], "{\"eventType\":\"message\",", 23) == 0 &&
        strstr(e->items[i], needle) != NULL)
      found++;
  pthread_mutex_unlock(&e->mu);
  return found;
}

/* Waits for a `message` event holding `needle`; returns a copy (free()). */
static char *wait_message(events_t *e, const char *needle) {
  uint64_t deadline = ld_now_ms() + WAIT_MS;
  char *found = NULL;
  pthread_mutex_lock(&e->mu);
  while (found == NULL) {
    for (size_t i = 0; i < e->n && found == NULL; i++)
      if (strncmp(e->items[i], "{\"eventType\":\"message\",", 23) == 0 &&
          strstr(e->items[i], needle) != NULL)
        found = strdup(e->items[i]);
    if (found != NULL || ld_now_ms() >= deadline)
      break;
    tw_cond_wait_ms(&e->cv, &e->mu, 20);
  }
  pthread_mutex_unlock(&e->mu);
  if (found == NULL)
    fail_msg("no message event with %s", needle);
  return found;
}

/* ---- contexts ------------------------------------------------------------------------------- */

typedef struct node {
  void *ctx;
  events_t ev;
  char id[128];
  char addr[512]; /* first listen address, with /p2p */
} node_t;

static void create(node_t *n, const char *config) {
  events_init(&n->ev);
  reply_reset(&R);
  n->ctx = logosdelivery_create_node(config, on_reply, &R);
  assert_non_null(n->ctx);
  ok_text(reply_wait(&R, RET_OK), "create");
  logosdelivery_set_event_callback(n->ctx, on_event, &n->ev);
  snprintf(n->id, sizeof n->id, "%s", OK(waku_get_my_peerid(n->ctx, on_reply, &R)));
}

static void start(node_t *n, const char *config) {
  create(n, config);
  OK(logosdelivery_start_node(n->ctx, on_reply, &R));
  const char *addrs = OK(waku_listen_addresses(n->ctx, on_reply, &R));
  size_t len = strcspn(addrs, ",");
  assert_true(len > 0 && len < sizeof n->addr);
  memcpy(n->addr, addrs, len);
  n->addr[len] = '\0';
  assert_non_null(strstr(n->addr, n->id));
}

static void finish(node_t *n) {
  OK(logosdelivery_stop_node(n->ctx, on_reply, &R));
  reply_reset(&R);
  assert_int_equal(logosdelivery_destroy(n->ctx, on_reply, &R), RET_OK);
  assert_int_equal(R.n, 1);
  events_clear(&n->ev);
}

static uint64_t number(const char *text) {
  char *end = NULL;
  unsigned long long v = strtoull(text, &end, 10);
  assert_true(end != text && *end == '\0');
  return v;
}

typedef int (*topic_fn)(void *ctx, FFICallBack cb, void *ud, const char *topic);

static void wait_topic_count(topic_fn fn, node_t *n, const char *topic, uint64_t min) {
  uint64_t deadline = ld_now_ms() + WAIT_MS;
  uint64_t v = 0;
  while ((v = number(OK(fn(n->ctx, on_reply, &R, topic)))) < min && ld_now_ms() < deadline)
    usleep(20000);
  assert_true(v >= min);
}

/* Polls a list reply until it holds `needle`. */
typedef int (*plain_fn)(void *ctx, FFICallBack cb, void *ud);

static void wait_listed(plain_fn fn, node_t *n, const char *needle) {
  uint64_t deadline = ld_now_ms() + WAIT_MS;
  bool found = false;
  while (!(found = strstr(OK(fn(n->ctx, on_reply, &R)), needle) != NULL) && ld_now_ms() < deadline)
    usleep(20000);
  assert_true(found);
}

/* The connected-peers info of `n` as JSON (the caller frees it). */
static json_t *peers_info(node_t *n) {
  json_error_t je;
  json_t *info = json_loads(OK(waku_get_connected_peers_info(n->ctx, on_reply, &R)), 0, &je);
  assert_non_null(info);
  return info;
}

/* Waits until `n` lists `peer_id` as connected with the protocols its identify announced. */
static void wait_identified(node_t *n, const char *peer_id) {
  uint64_t deadline = ld_now_ms() + WAIT_MS;
  bool identified = false;
  while (!identified && ld_now_ms() < deadline) {
    json_t *info = peers_info(n);
    identified = json_array_size(json_object_get(json_object_get(info, peer_id), "protocols")) > 0;
    json_decref(info);
    if (!identified)
      usleep(20000);
  }
  assert_true(identified);
}

static void connect_nodes(node_t *from, const node_t *to) {
  assert_string_equal(OK(waku_connect(from->ctx, on_reply, &R, to->addr, 10000)), "");
  wait_listed(waku_get_connected_peers, from, to->id);
}

/* A TCP socket that accepts connections and never speaks: dials to it stall in the upgrade. */
static int mute_listener(uint16_t *port) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = 0};
  sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  assert_int_equal(bind(fd, (struct sockaddr *)&sa, sizeof sa), 0);
  assert_int_equal(listen(fd, 16), 0);
  socklen_t len = sizeof sa;
  assert_int_equal(getsockname(fd, (struct sockaddr *)&sa, &len), 0);
  *port = ntohs(sa.sin_port);
  return fd;
}

static char *message_json(const char *payload_b64) {
  char *json = NULL;
  assert_true(
      asprintf(&json, "{\"payload\":\"%s\",\"contentTopic\":\"" CONTENT "\"}", payload_b64) > 0);
  return json;
}

/* Queries until the reply holds `hash`; returns the reply text. */
static const char *wait_stored(node_t *n, const char *query, const char *addr, const char *hash) {
  uint64_t deadline = ld_now_ms() + WAIT_MS;
  const char *res = NULL;
  while (strstr(res = OK(waku_store_query(n->ctx, on_reply, &R, query, addr, 5000)), hash) ==
             NULL &&
         ld_now_ms() < deadline)
    usleep(20000);
  assert_non_null(strstr(res, hash));
  return res;
}

static json_t *entry_of(json_t *messages, const char *hash) {
  for (size_t i = 0; i < json_array_size(messages); i++) {
    json_t *e = json_array_get(messages, i);
    if (strcmp(json_string_value(json_object_get(e, "messageHash")), hash) == 0)
      return e;
  }
  return NULL;
}

/* ---- topics and version --------------------------------------------------------------------- */

static void version_and_topics(void **state) {
  (void)state;
  node_t a;
  create(&a, CONFIG_RELAY);
  const char *v = OK(waku_version(a.ctx, on_reply, &R));
  assert_true(v[0] == 'v' && strlen(v) > 1);
  assert_string_equal(OK(waku_content_topic(a.ctx, on_reply, &R, "app", 7, "chat", "proto")),
                      "/app/7/chat/proto");
  assert_string_equal(OK(waku_content_topic(a.ctx, on_reply, &R, NULL, 0, NULL, NULL)), "//0//");
  assert_string_equal(OK(waku_pubsub_topic(a.ctx, on_reply, &R, "my-topic")), "/waku/2/my-topic");
  assert_string_equal(OK(waku_default_pubsub_topic(a.ctx, on_reply, &R)), "/waku/2/rs/0/0");
  /* the contract: missing callback, NULL context */
  assert_int_equal(waku_version(a.ctx, NULL, NULL), RET_MISSING_CALLBACK);
  reply_reset(&R);
  assert_int_equal(waku_version(NULL, on_reply, &R), RET_ERR);
  assert_int_equal(R.n, 1);
  assert_int_equal(R.ret, RET_ERR);
  /* a node that is not started */
  char *json = message_json("aGk=");
  ERR(waku_relay_publish(a.ctx, on_reply, &R, TOPIC, json, 0),
      "relayPublish failed: node is not started");
  ERR(waku_relay_subscribe(a.ctx, on_reply, &R, TOPIC),
      "relaySubscribe failed: node is not started");
  ERR(waku_store_query(a.ctx, on_reply, &R, "{}", "", 0),
      "StoreRequest failed: node is not started");
  ERR(waku_get_my_enr(a.ctx, on_reply, &R), "myEnr failed: node is not started");
  assert_true(strlen(OK(waku_get_my_peerid(a.ctx, on_reply, &R))) > 40);
  free(json);
  reply_reset(&R);
  assert_int_equal(logosdelivery_destroy(a.ctx, on_reply, &R), RET_OK);
  events_clear(&a.ev);
}

/* A node with discv5 on an ephemeral UDP port. */
#define CONFIG_DISCV5                                                                              \
  "{\"entryLayer\":\"kernel\",\"kernelConf\":{\"listenAddress\":\"127.0.0.1\",\"tcpPort\":0,"      \
  "\"clusterId\":" CLUSTER ",\"numShardsInNetwork\":8,\"relay\":true,\"discv5Discovery\":true,"    \
  "\"discv5UdpPort\":0,\"rest\":false,\"logLevel\":\"WARN\"}}"

static void discovery_calls(void **state) {
  (void)state;
  node_t a, b;
  start(&a, CONFIG_SERVICE); /* discv5 off */
  start(&b, CONFIG_DISCV5);
  ERR(waku_dns_discovery(a.ctx, on_reply, &R, "enrtree://AO47@test.example.org", "1.1.1.1", 1000),
      "error in dnsDiscovery: invalid enrtree:// URL");
  /* a name server that does not answer (nothing listens on that port): the walk's named error */
  ERR(waku_dns_discovery(a.ctx, on_reply, &R,
                         "enrtree://AKPYQIUQIL7PSIACI32J7FGZW56E5FKHEFCCOFHILBIMW3M6LWXS2@"
                         "test.example.org",
                         "127.0.0.1:9", 30000),
      "error in dnsDiscovery: DNS_QUERY (test.example.org: lookup failed*");
  char b_enr[1024];
  snprintf(b_enr, sizeof b_enr, "[\"%s\"]", OK(waku_get_my_enr(b.ctx, on_reply, &R)));
  char b_id[128];
  snprintf(b_id, sizeof b_id, "%s", OK(waku_get_my_peerid(b.ctx, on_reply, &R)));
  ERR(waku_discv5_update_bootnodes(a.ctx, on_reply, &R, b_enr),
      "error in updateDiscv5BootstrapNodes: discv5 is not running");
  assert_string_equal(OK(waku_start_discv5(a.ctx, on_reply, &R)), "discv5 started correctly");
  assert_string_equal(OK(waku_start_discv5(a.ctx, on_reply, &R)), "discv5 started correctly");
  char bad_json[] = "[\"enr:";
  ERR(waku_discv5_update_bootnodes(a.ctx, on_reply, &R, bad_json),
      "error in updateDiscv5BootstrapNodes: exception parsing json enr records: *");
  char not_array[] = "{\"enr\":1}";
  ERR(waku_discv5_update_bootnodes(a.ctx, on_reply, &R, not_array),
      "error in updateDiscv5BootstrapNodes: updateBootstrapRecords should receive a json array "
      "containing ENRs");
  char bad_enr[] = "[\"enr:-abc\"]";
  ERR(waku_discv5_update_bootnodes(a.ctx, on_reply, &R, bad_enr),
      "error in updateDiscv5BootstrapNodes: wrong enr given: enr:-abc");
  assert_string_equal(OK(waku_discv5_update_bootnodes(a.ctx, on_reply, &R, b_enr)),
                      "discovery request processed correctly");
  /* the peer manager dials the bootstrap node it was given */
  uint64_t deadline = ld_now_ms() + WAIT_MS;
  while (strstr(OK(waku_get_connected_peers(a.ctx, on_reply, &R)), b_id) == NULL &&
         ld_now_ms() < deadline)
    usleep(20000);
  assert_non_null(strstr(OK(waku_get_connected_peers(a.ctx, on_reply, &R)), b_id));
  assert_string_equal(OK(waku_stop_discv5(a.ctx, on_reply, &R)), "discv5 stopped correctly");
  ERR(waku_discv5_update_bootnodes(a.ctx, on_reply, &R, b_enr),
      "error in updateDiscv5BootstrapNodes: discv5 is not running");
  assert_int_equal(waku_start_discv5(a.ctx, NULL, NULL), RET_MISSING_CALLBACK);
  /* again on the same UDP port (the ENR announces it) */
  assert_string_equal(OK(waku_start_discv5(a.ctx, on_reply, &R)), "discv5 started correctly");
  assert_string_equal(OK(waku_discv5_update_bootnodes(a.ctx, on_reply, &R, b_enr)),
                      "discovery request processed correctly");
  assert_string_equal(OK(waku_stop_discv5(a.ctx, on_reply, &R)), "discv5 stopped correctly");
  finish(&b);
  finish(&a);
}

static void node_information(void **state) {
  (void)state;
  node_t a;
  start(&a, CONFIG_SERVICE);
  assert_true(strncmp(OK(waku_get_my_enr(a.ctx, on_reply, &R)), "enr:", 4) == 0);
  assert_non_null(strstr(OK(waku_get_metrics(a.ctx, on_reply, &R)), "libp2p_peers"));
  assert_string_equal(OK(waku_is_online(a.ctx, on_reply, &R)), "false");
  assert_string_equal(OK(waku_get_connected_peers(a.ctx, on_reply, &R)), "");
  assert_string_equal(OK(waku_get_connected_peers_info(a.ctx, on_reply, &R)), "{}");
  finish(&a);
}

/* ---- relay ---------------------------------------------------------------------------------- */

static void relay_messages_become_events_while_subscribed(void **state) {
  (void)state;
  node_t a, b;
  start(&a, CONFIG_SERVICE);
  start(&b, CONFIG_RELAY);
  connect_nodes(&b, &a);
  wait_listed(waku_get_connected_peers, &a, b.id);
  assert_string_equal(OK(waku_is_online(b.ctx, on_reply, &R)), "true");
  assert_non_null(strstr(OK(waku_get_peerids_from_peerstore(b.ctx, on_reply, &R)), a.id));

  assert_string_equal(OK(waku_relay_subscribe(a.ctx, on_reply, &R, TOPIC)), "");
  assert_string_equal(OK(waku_relay_subscribe(b.ctx, on_reply, &R, TOPIC)), "");
  assert_string_equal(OK(waku_relay_subscribe(b.ctx, on_reply, &R, TOPIC)), ""); /* again: fine */
  wait_topic_count(waku_relay_get_num_connected_peers, &a, TOPIC, 1);
  assert_non_null(strstr(OK(waku_relay_get_connected_peers(a.ctx, on_reply, &R, TOPIC)), b.id));
  assert_non_null(strstr(OK(waku_relay_get_connected_peers(a.ctx, on_reply, &R, "")), b.id));
  wait_topic_count(waku_relay_get_num_peers_in_mesh, &a, TOPIC, 1);
  assert_string_equal(OK(waku_relay_get_peers_in_mesh(a.ctx, on_reply, &R, TOPIC)), b.id);
  assert_true(number(OK(waku_relay_get_num_peers_in_mesh(a.ctx, on_reply, &R, ""))) >= 1);
  assert_string_equal(OK(waku_relay_get_num_connected_peers(a.ctx, on_reply, &R, "/no/such")), "0");

  /* B is in OTHER_TOPIC's shard by its configuration but not through the kernel: no event */
  char *quiet = message_json("cXVpZXQ=");
  wait_topic_count(waku_relay_get_num_connected_peers, &a, OTHER_TOPIC, 1);
  char quiet_hash[80];
  snprintf(quiet_hash, sizeof quiet_hash, "%s",
           OK(waku_relay_publish(a.ctx, on_reply, &R, OTHER_TOPIC, quiet, 0)));
  assert_int_equal(strlen(quiet_hash), 66);

  const char *json = "{\"payload\":\"aGVsbG8=\",\"contentTopic\":\"" CONTENT "\",\"version\":1,"
                     "\"timestamp\":\"1700000000000000000\",\"meta\":\"AQI=\"}";
  char hash[80];
  snprintf(hash, sizeof hash, "%s", OK(waku_relay_publish(a.ctx, on_reply, &R, TOPIC, json, 1000)));
  assert_true(strncmp(hash, "0x", 2) == 0 && strlen(hash) == 66);
  char *ev = wait_message(&b.ev, hash);
  json_error_t je;
  json_t *o = json_loads(ev, 0, &je);
  assert_non_null(o);
  assert_string_equal(json_string_value(json_object_get(o, "pubsubTopic")), TOPIC);
  assert_string_equal(json_string_value(json_object_get(o, "messageHash")), hash);
  json_t *wm = json_object_get(o, "wakuMessage");
  assert_string_equal(json_string_value(json_object_get(wm, "payload")), "aGVsbG8=");
  assert_string_equal(json_string_value(json_object_get(wm, "contentTopic")), CONTENT);
  assert_string_equal(json_string_value(json_object_get(wm, "meta")), "AQI=");
  assert_int_equal(json_integer_value(json_object_get(wm, "version")), 1);
  assert_true(json_integer_value(json_object_get(wm, "timestamp")) == 1700000000000000000LL);
  json_decref(o);
  free(ev);
  /* A is subscribed too: its own message is an event as well */
  free(wait_message(&a.ev, hash));
  assert_int_equal(count_messages(&b.ev, quiet_hash), 0);

  /* after unsubscribing, B's relay leaves the topic and A has nobody to publish to */
  assert_string_equal(OK(waku_relay_unsubscribe(b.ctx, on_reply, &R, TOPIC)), "");
  uint64_t deadline = ld_now_ms() + WAIT_MS;
  while (number(OK(waku_relay_get_num_connected_peers(a.ctx, on_reply, &R, TOPIC))) > 0 &&
         ld_now_ms() < deadline)
    usleep(20000);
  char *late = message_json("bGF0ZQ==");
  ERR(waku_relay_publish(a.ctx, on_reply, &R, TOPIC, late, 0), "NoPeersToPublish");

  /* error paths of publish */
  ERR(waku_relay_publish(a.ctx, on_reply, &R, TOPIC, "{not json", 0),
      "Error parsing json message: *");
  ERR(waku_relay_publish(a.ctx, on_reply, &R, TOPIC, "{\"contentTopic\":\"" CONTENT "\"}", 0),
      "Error parsing json message: Missing required field in WakuMessage: payload");
  ERR(waku_relay_publish(a.ctx, on_reply, &R, TOPIC, "{\"payload\":\"aGk=\"}", 0),
      "Error parsing json message: Missing required field in WakuMessage: contentTopic");
  ERR(waku_relay_publish(a.ctx, on_reply, &R, TOPIC,
                         "{\"payload\":\"%%%\",\"contentTopic\":\"" CONTENT "\"}", 0),
      "Problem building the WakuMessage: invalid payload format: *");
  ERR(waku_relay_publish(a.ctx, on_reply, &R, "  ", late, 0), "NoTopicSpecified");
  free(late);
  free(quiet);
  finish(&b);
  finish(&a);
}

#define SHARD6 "/waku/2/rs/42/6"

static void protected_shards(void **state) {
  (void)state;
  node_t a, b;
  start(&a, CONFIG_SERVICE);
  start(&b, CONFIG_RELAY);
  connect_nodes(&b, &a);
  assert_string_equal(OK(waku_relay_subscribe(a.ctx, on_reply, &R, SHARD6)), "");
  assert_string_equal(OK(waku_relay_subscribe(a.ctx, on_reply, &R, OTHER_TOPIC)), "");
  wait_topic_count(waku_relay_get_num_connected_peers, &b, SHARD6, 1);
  wait_topic_count(waku_relay_get_num_connected_peers, &b, OTHER_TOPIC, 1);
  /* before the protection an unsigned message is delivered */
  char *w = message_json("dw==");
  char hash_w[80];
  snprintf(hash_w, sizeof hash_w, "%s", OK(waku_relay_publish(b.ctx, on_reply, &R, SHARD6, w, 0)));
  free(wait_message(&a.ev, hash_w));

  char key[] = "0x0279be667ef9dcbbac55a06295ce870b07029bfcdb2dce28d959f2815b16f81798";
  assert_string_equal(OK(waku_relay_add_protected_shard(a.ctx, on_reply, &R, 42, 6, key)), "");
  assert_string_equal(OK(waku_relay_add_protected_shard(a.ctx, on_reply, &R, 42, 6, key + 2)), "");
  /* now X (unsigned, on the protected shard) is refused; M on another topic follows it */
  char *x = message_json("eA==");
  char *m = message_json("bQ==");
  char hash_x[80], hash_m[80];
  snprintf(hash_x, sizeof hash_x, "%s", OK(waku_relay_publish(b.ctx, on_reply, &R, SHARD6, x, 0)));
  snprintf(hash_m, sizeof hash_m, "%s",
           OK(waku_relay_publish(b.ctx, on_reply, &R, OTHER_TOPIC, m, 0)));
  free(wait_message(&a.ev, hash_m));
  assert_int_equal(count_messages(&a.ev, hash_x), 0);

  char bad[] = "0x02zz";
  ERR(waku_relay_add_protected_shard(a.ctx, on_reply, &R, 42, 6, bad),
      "relayAddProtectedShard: invalid public key: *");
  char short_key[] = "0x0279be667ef9dcbbac55a062";
  ERR(waku_relay_add_protected_shard(a.ctx, on_reply, &R, 42, 6, short_key),
      "relayAddProtectedShard: invalid public key: *");
  ERR(waku_relay_add_protected_shard(a.ctx, on_reply, &R, 70000, 6, key),
      "relayAddProtectedShard: clusterId and shardId must be 0..65535");
  ERR(waku_relay_add_protected_shard(a.ctx, on_reply, &R, 42, -1, key),
      "relayAddProtectedShard: clusterId and shardId must be 0..65535");
  free(w);
  free(x);
  free(m);
  finish(&b);
  finish(&a);
}

/* ---- lightpush, filter and store ------------------------------------------------------------ */

static void lightpush_filter_and_store(void **state) {
  (void)state;
  node_t a, b, c;
  start(&a, CONFIG_SERVICE);
  start(&b, CONFIG_RELAY);
  start(&c, CONFIG_RELAY);
  connect_nodes(&b, &a);
  connect_nodes(&c, &a);
  wait_listed(waku_get_connected_peers_info, &b, "/vac/waku/lightpush/3.0.0");
  char proto_list[512];
  snprintf(proto_list, sizeof proto_list, "%s",
           OK(waku_get_peerids_by_protocol(b.ctx, on_reply, &R, "/vac/waku/store-query/3.0.0")));
  assert_string_equal(proto_list, a.id);
  assert_string_equal(OK(waku_get_peerids_by_protocol(b.ctx, on_reply, &R, "/no/such/1")), "");

  /* B asks A (a filter service) for pushes of CONTENT on TOPIC */
  assert_string_equal(
      OK(waku_filter_subscribe(b.ctx, on_reply, &R, TOPIC, CONTENT ",/kernel/1/other/proto")), "");
  /* C relays nothing on TOPIC through the kernel; A needs a relay peer on it for lightpush */
  wait_topic_count(waku_relay_get_num_connected_peers, &a, TOPIC, 1);

  /* B pushes through A: the message reaches the network, A archives it, B gets it by filter */
  char *json = message_json("bGlnaHRwdXNo");
  char hash[80];
  snprintf(hash, sizeof hash, "%s", OK(waku_lightpush_publish(b.ctx, on_reply, &R, TOPIC, json)));
  assert_int_equal(strlen(hash), 66);
  char *ev = wait_message(&b.ev, hash);
  assert_non_null(strstr(ev, "\"pubsubTopic\":\"" TOPIC "\""));
  assert_non_null(strstr(ev, "\"payload\":\"bGlnaHRwdXNo\""));
  free(ev);
  /* an empty topic is derived from the content topic by autosharding */
  char *json2 = message_json("YXV0bw==");
  char hash2[80];
  snprintf(hash2, sizeof hash2, "%s", OK(waku_lightpush_publish(b.ctx, on_reply, &R, "", json2)));
  assert_int_equal(strlen(hash2), 66);

  /* the store: one page with data, a lookup by hash, a hash-only page with a cursor */
  char query[512];
  snprintf(query, sizeof query,
           "{\"requestId\":\"q-1\",\"includeData\":true,\"pubsubTopic\":\"" TOPIC "\","
           "\"contentTopics\":[\"" CONTENT "\"],\"paginationForward\":true}");
  const char *res = wait_stored(&b, query, a.addr, hash);
  json_error_t je;
  json_t *o = json_loads(res, 0, &je);
  assert_non_null(o);
  assert_string_equal(json_string_value(json_object_get(o, "requestId")), "q-1");
  assert_int_equal(json_integer_value(json_object_get(o, "statusCode")), 200);
  assert_string_equal(json_string_value(json_object_get(o, "statusDesc")), "OK");
  json_t *e0 = entry_of(json_object_get(o, "messages"), hash);
  assert_non_null(e0);
  assert_string_equal(json_string_value(json_object_get(e0, "pubsubTopic")), TOPIC);
  json_t *m = json_object_get(e0, "message");
  json_t *payload = json_object_get(m, "payload");
  assert_int_equal(json_array_size(payload), 9); /* "lightpush" */
  assert_int_equal(json_integer_value(json_array_get(payload, 0)), 'l');
  assert_string_equal(json_string_value(json_object_get(m, "contentTopic")), CONTENT);
  assert_true(json_integer_value(json_object_get(m, "timestamp")) > 0);
  assert_int_equal(json_array_size(json_object_get(m, "meta")), 0);
  assert_int_equal(json_array_size(json_object_get(m, "proof")), 0);
  assert_true(json_is_false(json_object_get(m, "ephemeral")));
  assert_null(json_object_get(o, "paginationCursor"));
  json_decref(o);
  snprintf(query, sizeof query,
           "{\"requestId\":\"q-2\",\"includeData\":true,\"messageHashes\":[\"%s\"],"
           "\"paginationForward\":true}",
           hash2);
  wait_stored(&b, query, a.addr, hash2);
  /* no peerAddr: a connected store peer is found */
  res = OK(waku_store_query(b.ctx, on_reply, &R,
                            "{\"requestId\":\"q-3\",\"includeData\":false,"
                            "\"paginationForward\":false,\"paginationLimit\":1}",
                            "", -1));
  o = json_loads(res, 0, &je);
  assert_non_null(o);
  json_t *msgs = json_object_get(o, "messages");
  assert_int_equal(json_array_size(msgs), 1);
  assert_non_null(json_object_get(json_array_get(msgs, 0), "messageHash"));
  assert_null(json_object_get(json_array_get(msgs, 0), "message"));
  assert_null(json_object_get(json_array_get(msgs, 0), "pubsubTopic"));
  assert_non_null(json_object_get(o, "paginationCursor"));
  json_decref(o);

  /* store error paths */
  ERR(waku_store_query(b.ctx, on_reply, &R, "{\"requestId\":", a.addr, 0),
      "StoreRequest failed parsing store request: *");
  ERR(waku_store_query(b.ctx, on_reply, &R, "{\"includeData\":true,\"paginationForward\":true}",
                       a.addr, 0),
      "StoreRequest failed parsing store request: key not found: requestId");
  const char *minimal = "{\"requestId\":\"x\",\"includeData\":true,\"paginationForward\":true}";
  ERR(waku_store_query(b.ctx, on_reply, &R, minimal, "/ip4/nope", 0),
      "StoreRequest failed store query: storeQuery failed to parse peer addr: invalid multiaddr");
  /* C serves no store */
  ERR(waku_store_query(b.ctx, on_reply, &R, minimal, c.addr, 5000),
      "StoreRequest failed store query: storeQuery failed: PEER_DIAL_FAILURE: *");
  ERR(waku_store_query(c.ctx, on_reply, &R,
                       "{\"requestId\":\"x\",\"includeData\":true,\"paginationForward\":true,"
                       "\"paginationCursor\":"
                       "\"0x0000000000000000000000000000000000000000000000000000000000000000\"}",
                       a.addr, 5000),
      "StoreRequest failed store query: storeQuery failed: BAD_REQUEST: invalid cursor");

  /* after unsubscribing, pushes stop being events: X on TOPIC travels ahead of M on OTHER_TOPIC
   * (C → A → B on one stream each), which B subscribed through the kernel: only M is an event */
  assert_string_equal(OK(waku_filter_unsubscribe(b.ctx, on_reply, &R, TOPIC, CONTENT)), "");
  assert_string_equal(OK(waku_filter_unsubscribe_all(b.ctx, on_reply, &R)), "");
  assert_string_equal(OK(waku_relay_subscribe(b.ctx, on_reply, &R, OTHER_TOPIC)), "");
  char *x = message_json("eA==");
  char *marker = message_json("bWFya2Vy");
  char hash_x[80], hash_m[80];
  snprintf(hash_x, sizeof hash_x, "%s", OK(waku_relay_publish(c.ctx, on_reply, &R, TOPIC, x, 0)));
  snprintf(hash_m, sizeof hash_m, "%s",
           OK(waku_relay_publish(c.ctx, on_reply, &R, OTHER_TOPIC, marker, 0)));
  free(wait_message(&b.ev, hash_m));
  assert_int_equal(count_messages(&b.ev, hash_x), 0);
  free(x);
  free(marker);
  ERR(waku_filter_subscribe(c.ctx, on_reply, &R, TOPIC,
                            "a,b,c,d,e,f,g,h,i,j,k,l,m,n,o,p,q,r,s,t,u,v,w,x,y,z,a,b,c,d,e,f,g,h,i,"
                            "j,k,l,m,n,o,p,q,r,s,t,u,v,w,x,y,z,a,b,c,d,e,f,g,h,i,j,k,l,m,n,o,p,q,r,"
                            "s,t,u,v,w,x,y,z,a,b,c,d,e,f,g,h,i,j,k,l,m,n,o,p,q,r,s,t,u,v,w,x,y,z"),
      "filterSubscribe: too many content topics (at most 100)");
  free(json);
  free(json2);
  finish(&c);
  finish(&b);
  finish(&a);
}

static void lightpush_and_filter_without_service(void **state) {
  (void)state;
  node_t b;
  start(&b, CONFIG_RELAY);
  char *json = message_json("aGk=");
  ERR(waku_lightpush_publish(b.ctx, on_reply, &R, TOPIC, json),
      "failed to lightpublish message, no suitable remote peers");
  ERR(waku_filter_subscribe(b.ctx, on_reply, &R, TOPIC, CONTENT),
      "could not find peer with WakuFilterSubscribeCodec when subscribing");
  ERR(waku_filter_unsubscribe(b.ctx, on_reply, &R, TOPIC, CONTENT),
      "could not find peer with WakuFilterSubscribeCodec when unsubscribing");
  ERR(waku_filter_unsubscribe_all(b.ctx, on_reply, &R),
      "could not find peer with WakuFilterSubscribeCodec when unsubscribing all");
  ERR(waku_store_query(b.ctx, on_reply, &R,
                       "{\"requestId\":\"x\",\"includeData\":true,\"paginationForward\":true}", "",
                       0),
      "StoreRequest failed store query: no store peer: give peerAddr or configure a storenode");
  ERR(waku_peer_exchange_request(b.ctx, on_reply, &R, 5),
      "failed peer exchange: no peer supporting peer exchange");
  free(json);
  finish(&b);
}

/* ---- peers ---------------------------------------------------------------------------------- */

static void peers_dial_ping_exchange_disconnect(void **state) {
  (void)state;
  node_t a, b, c;
  start(&a, CONFIG_SERVICE);
  start(&b, CONFIG_RELAY);
  start(&c, CONFIG_SERVICE);
  /* B connects to both with one call */
  char both[1100];
  snprintf(both, sizeof both, "%s, %s", a.addr, c.addr);
  assert_string_equal(OK(waku_connect(b.ctx, on_reply, &R, both, 10000)), "");
  const char *peers = OK(waku_get_connected_peers(b.ctx, on_reply, &R));
  assert_non_null(strstr(peers, a.id));
  assert_non_null(strstr(peers, c.id));

  wait_identified(&b, a.id); /* each connection's identify ends on its own */
  json_t *info = peers_info(&b);
  json_t *ai = json_object_get(info, a.id);
  assert_non_null(ai);
  assert_true(json_array_size(json_object_get(ai, "addresses")) >= 1);
  assert_true(json_array_size(json_object_get(ai, "protocols")) >= 1);
  json_decref(info);

  /* ping: RTT in nanoseconds */
  assert_true(number(OK(waku_ping_peer(b.ctx, on_reply, &R, a.addr, 5000))) > 0);
  assert_true(number(OK(waku_ping_peer(b.ctx, on_reply, &R, a.addr, -1))) > 0);
  ERR(waku_ping_peer(b.ctx, on_reply, &R, "not-an-address", 1000),
      "pingPeer failed to parse peer addr: invalid multiaddr");

  /* dialing with a protocol, by address and by ID */
  assert_string_equal(
      OK(waku_dial_peer(b.ctx, on_reply, &R, a.addr, "/vac/waku/store-query/3.0.0", 5000)), "");
  assert_string_equal(OK(waku_dial_peer(b.ctx, on_reply, &R, a.addr, "", -1)), "");
  ERR(waku_dial_peer(b.ctx, on_reply, &R, a.addr, "/no/such/1.0.0", 5000),
      "failed dialing peer: protocol not supported by the peer");
  ERR(waku_dial_peer(b.ctx, on_reply, &R, "/ip4/1.2.3.4/tcp", "", 1000),
      "failed dialing peer: invalid multiaddr: '/ip4/1.2.3.4/tcp'");
  assert_string_equal(
      OK(waku_dial_peer_by_id(b.ctx, on_reply, &R, c.id, "/vac/waku/relay/2.0.0", 5000)), "");
  ERR(waku_dial_peer_by_id(b.ctx, on_reply, &R, "nonsense", "", 1000),
      "failed dialing peer: invalid peer ID: 'nonsense'");

  /* peer exchange: A's records are whatever it learned (none here); the count is a number */
  assert_true(number(OK(waku_peer_exchange_request(b.ctx, on_reply, &R, 5))) <= 5);

  /* connect error paths */
  ERR(waku_connect(b.ctx, on_reply, &R, "", 1000), "no peer address given");
  ERR(waku_connect(b.ctx, on_reply, &R, "/ip4/127.0.0.1/tcp/1", 1000),
      "invalid peer multiaddr (expected .../p2p/<peer id>): '/ip4/127.0.0.1/tcp/1'");

  /* disconnecting */
  assert_string_equal(OK(waku_disconnect_peer_by_id(b.ctx, on_reply, &R, a.id)), "");
  peers = OK(waku_get_connected_peers(b.ctx, on_reply, &R));
  assert_null(strstr(peers, a.id));
  assert_non_null(strstr(peers, c.id));
  ERR(waku_disconnect_peer_by_id(b.ctx, on_reply, &R, "xyz"),
      "disconnectPeerById: invalid peer ID: 'xyz'");
  assert_string_equal(OK(waku_disconnect_peer_by_id(b.ctx, on_reply, &R, a.id)), ""); /* again */
  /* A is still known by ID: dial it back */
  assert_string_equal(OK(waku_dial_peer_by_id(b.ctx, on_reply, &R, a.id, "", 5000)), "");
  assert_string_equal(OK(waku_disconnect_all_peers(b.ctx, on_reply, &R)), "");
  assert_string_equal(OK(waku_get_connected_peers(b.ctx, on_reply, &R)), "");
  assert_string_equal(OK(waku_is_online(b.ctx, on_reply, &R)), "false");
  finish(&c);
  finish(&b);
  finish(&a);
}

static void unknown_peers_and_timeouts(void **state) {
  (void)state;
  node_t a, stranger;
  start(&a, CONFIG_RELAY);
  create(&stranger, CONFIG_RELAY); /* never started: a valid peer ID nobody knows */
  char msg[1024];
  snprintf(msg, sizeof msg, "failed dialing peer: no address known for %s", stranger.id);
  ERR(waku_dial_peer_by_id(a.ctx, on_reply, &R, stranger.id, "", 1000), msg);

  char refused[600];
  snprintf(refused, sizeof refused, "/ip4/127.0.0.1/tcp/1/p2p/%s", stranger.id);
  snprintf(msg, sizeof msg, "failed to connect to %s: connection refused", refused);
  ERR(waku_connect(a.ctx, on_reply, &R, refused, 5000), msg);

  uint16_t port = 0;
  int fd = mute_listener(&port);
  char mute[600];
  snprintf(mute, sizeof mute, "/ip4/127.0.0.1/tcp/%u/p2p/%s", port, stranger.id);
  ERR(waku_connect(a.ctx, on_reply, &R, mute, 300), "connect timed out");
  ERR(waku_ping_peer(a.ctx, on_reply, &R, mute, 300), "ping timed out");
  ERR(waku_dial_peer(a.ctx, on_reply, &R, mute, "", 300), "failed dialing peer: timed out");
  ERR(waku_store_query(a.ctx, on_reply, &R,
                       "{\"requestId\":\"x\",\"includeData\":true,\"paginationForward\":true}",
                       mute, 300),
      "StoreRequest failed store query: *");

  /* a request still waiting when the node stops is answered */
  reply_t waiting;
  memset(&waiting, 0, sizeof waiting);
  pthread_mutex_init(&waiting.mu, NULL);
  pthread_cond_init(&waiting.cv, NULL);
  assert_int_equal(waku_connect(a.ctx, on_reply, &waiting, mute, 0), RET_OK);
  OK(logosdelivery_stop_node(a.ctx, on_reply, &R));
  reply_wait(&waiting, RET_OK);
  assert_int_equal(waiting.ret, RET_ERR);
  assert_string_equal(waiting.text, PREFIX "connect failed: node stopped");
  /* and one waiting when the context is destroyed */
  OK(logosdelivery_start_node(a.ctx, on_reply, &R));
  reply_reset(&waiting);
  assert_int_equal(waku_ping_peer(a.ctx, on_reply, &waiting, mute, 0), RET_OK);
  reply_reset(&R);
  assert_int_equal(logosdelivery_destroy(a.ctx, on_reply, &R), RET_OK);
  assert_int_equal(waiting.n, 1);
  assert_int_equal(waiting.ret, RET_ERR);
  free(waiting.text);
  pthread_mutex_destroy(&waiting.mu);
  pthread_cond_destroy(&waiting.cv);
  events_clear(&a.ev);
  close(fd);
  reply_reset(&R);
  assert_int_equal(logosdelivery_destroy(stranger.ctx, on_reply, &R), RET_OK);
  events_clear(&stranger.ev);
}

static int setup(void **state) {
  (void)state;
  pthread_mutex_init(&R.mu, NULL);
  pthread_cond_init(&R.cv, NULL);
  return 0;
}

static int teardown(void **state) {
  (void)state;
  free(R.text);
  R.text = NULL;
  return 0;
}

/* ---- relayPublish with RLN-relay ------------------------------------------------------------- */

#define RLN_MEMBERS 10
#define RLN_OURS 4

/* A relay node's configuration with RLN-relay on the static group; `member`: proving with the
 * credentials of RLN_OURS. */
static void rln_config(const rh_group_t *g, uint64_t epoch_sec, bool member, char *out,
                       size_t cap) {
  const char *fixtures = getenv("LD_RLN_FIXTURES");
  assert_non_null(fixtures);
  char creds[1024] = "";
  if (member)
    snprintf(creds, sizeof creds,
             ",\"rlnRelayCredPath\":\"%s\",\"rlnRelayCredIndex\":%d,\"rlnRelayCircuitDir\":\"%s\"",
             g->cred_path, RLN_OURS, fixtures);
  snprintf(out, cap,
           "{\"listenAddress\":\"127.0.0.1\",\"tcpPort\":0,\"relay\":true,\"clusterId\":" CLUSTER
           ",\"numShardsInNetwork\":8,\"discv5Discovery\":false,\"rest\":false,\"filter\":false,"
           "\"lightpush\":false,\"peerExchange\":false,\"logLevel\":\"WARN\",\"rlnRelay\":true,"
           "\"rlnRelayStaticGroupFile\":\"%s\",\"rlnRelayUserMessageLimit\":%llu,"
           "\"rlnEpochSizeSec\":%llu%s}",
           g->group_path, (unsigned long long)g->limit, (unsigned long long)epoch_sec, creds);
}

/* A proving (member) and B validating, in one mesh on TOPIC. */
static void rln_start_pair(rh_group_t *g, uint64_t limit, uint64_t epoch_sec, node_t *a,
                           node_t *b) {
  rh_group_make(g, RLN_MEMBERS, limit, RLN_OURS);
  char config[4096];
  rln_config(g, epoch_sec, true, config, sizeof config);
  start(a, config);
  rln_config(g, epoch_sec, false, config, sizeof config);
  start(b, config);
  connect_nodes(b, a);
  OK(waku_relay_subscribe(a->ctx, on_reply, &R, TOPIC));
  OK(waku_relay_subscribe(b->ctx, on_reply, &R, TOPIC));
  wait_topic_count(waku_relay_get_num_peers_in_mesh, a, TOPIC, 1);
}

static void h_rln_hold(ld_lib_ctx_t *ctx, ld_lib_request_t *req, void *args) {
  ld_node_rln_publish_hold(ld_lib_ctx_node(ctx), args != NULL);
  ld_lib_reply_ok(req, NULL, 0);
}

/* Holds (or lets go of) the node's RLN publish queue, on its thread. */
static void rln_hold(node_t *n, bool on) {
  OK(ld_lib_dispatch(n->ctx, on_reply, &R, h_rln_hold, on ? (void *)n : NULL, NULL));
}

static int replies(reply_t *r) {
  pthread_mutex_lock(&r->mu);
  int n = r->n;
  pthread_mutex_unlock(&r->mu);
  return n;
}

static const char *rln_message(const char *payload_b64) {
  static char json[256];
  snprintf(json, sizeof json, "{\"payload\":\"%s\",\"contentTopic\":\"" CONTENT "\"}", payload_b64);
  return json;
}

/* A relayPublish of a message held in the RLN queue past its restamp is answered only once it
 * was proved and handed to relay, with the hash B receives (not the one at queue entry). */
static void relay_publish_with_rln_answers_once_proved(void **state) {
  (void)state;
  rh_group_t g;
  node_t a, b;
  rln_start_pair(&g, 2, 1000000000ull, &a, &b);
  rln_hold(&a, true);
  reply_t p = {.mu = PTHREAD_MUTEX_INITIALIZER, .cv = PTHREAD_COND_INITIALIZER};
  reply_reset(&p);
  g_what = "held relayPublish";
  assert_int_equal(waku_relay_publish(a.ctx, on_reply, &p, TOPIC, rln_message("bGF0ZQ=="), 0),
                   RET_OK);
  usleep((LD_NODE_RLN_RESTAMP_AFTER_MS + 500) * 1000);
  assert_int_equal(replies(&p), 0); /* nothing answered while it waits for its proof */
  rln_hold(&a, false);
  const char *hash = reply_wait(&p, RET_OK);
  assert_int_equal(p.ret, RET_OK);
  assert_true(strncmp(hash, "0x", 2) == 0 && strlen(hash) == 66);
  free(wait_message(&b.ev, hash)); /* B received the message with the hash answered */
  reply_reset(&p);
  finish(&a);
  finish(&b);
  rh_group_free(&g);
}

/* A relayPublish queued in one epoch and proved in the next, whose one message id another
 * message took meanwhile, is answered with the rate-limit error. */
static void relay_publish_with_rln_out_of_quota_is_an_error(void **state) {
  (void)state;
  enum { EPOCH_SEC = 4 };
  rh_group_t g;
  node_t a, b;
  rln_start_pair(&g, 1, EPOCH_SEC, &a, &b);
  rln_hold(&a, true);
  reply_t refused = {.mu = PTHREAD_MUTEX_INITIALIZER, .cv = PTHREAD_COND_INITIALIZER};
  reply_t hog = {.mu = PTHREAD_MUTEX_INITIALIZER, .cv = PTHREAD_COND_INITIALIZER};
  reply_reset(&refused);
  reply_reset(&hog);
  uint64_t epoch = ld_rln_epoch_of((int64_t)ld_wall_ns(), EPOCH_SEC);
  assert_int_equal(
      waku_relay_publish(a.ctx, on_reply, &refused, TOPIC, rln_message("cmVmdXNlZA=="), 0), RET_OK);
  while (ld_rln_epoch_of((int64_t)ld_wall_ns(), EPOCH_SEC) <= epoch)
    usleep(20000);
  assert_int_equal(waku_relay_publish(a.ctx, on_reply, &hog, TOPIC, rln_message("aG9n"), 0),
                   RET_OK);
  usleep(200000);
  assert_int_equal(replies(&refused), 0);
  rln_hold(&a, false);
  g_what = "refused relayPublish";
  const char *text = reply_wait(&refused, RET_OK);
  assert_int_not_equal(refused.ret, RET_OK);
  char want[256];
  snprintf(want, sizeof want, PREFIX "relayPublish: %s", ld_strerror(LD_ERR_LIMIT));
  assert_string_equal(text, want);
  g_what = "hog relayPublish";
  const char *hash = reply_wait(&hog, RET_OK);
  assert_int_equal(hog.ret, RET_OK);
  free(wait_message(&b.ev, hash));
  reply_reset(&refused);
  reply_reset(&hog);
  finish(&a);
  finish(&b);
  rh_group_free(&g);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(version_and_topics),
      cmocka_unit_test(discovery_calls),
      cmocka_unit_test(node_information),
      cmocka_unit_test(relay_messages_become_events_while_subscribed),
      cmocka_unit_test(protected_shards),
      cmocka_unit_test(lightpush_filter_and_store),
      cmocka_unit_test(lightpush_and_filter_without_service),
      cmocka_unit_test(peers_dial_ping_exchange_disconnect),
      cmocka_unit_test(unknown_peers_and_timeouts),
      cmocka_unit_test(relay_publish_with_rln_answers_once_proved),
      cmocka_unit_test(relay_publish_with_rln_out_of_quota_is_an_error),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
