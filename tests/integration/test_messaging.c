/* The Messaging API over real nodes on loopback, all in one process and one loop:
 *   - two Core nodes and a store node: a send is received once on the other node and the sender
 *     sees PROPAGATED then SENT; ephemeral and reliability-off sends end at PROPAGATED;
 *   - an isolated node: a send fails after the retry window, an oversize one with the size text;
 *   - an Edge node sends through lightpush and receives through filter via a service node;
 *   - a receiver that loses its peers reports Disconnected, misses messages, gets its static
 *     peer back and recovers them from the store, each reported once;
 *   - the store-based reliability implementation against a store node (confirm, recover,
 *     cancel);
 *   - service peers that answer with transient errors: a lightpush service that never relays is
 *     asked again on a back-off schedule until the window ends, with its last answer in the
 *     error; a store peer whose first answer is an error still confirms the send; a filter
 *     service that refuses a subscription for its rate limit (429) is asked again and the
 *     subscription is made once it allows it. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <uv.h>

#include "base/clock.h"
#include "base/error.h"
#include "messaging/messaging.h"
#include "messaging/reliability.h"
#include "node/events.h"
#include "node/node.h"
#include "messaging/service_peers.h"
#include "node_harness.h"
#include "switch_harness.h"
#include "node/node_filter.h"
#include "waku/filter/server.h"
#include "waku/lightpush/server.h"
#include "waku/store/server.h"

#define STEP_MS 20000
#define PUBSUB "/waku/2/rs/0/0"
#define CONTENT "/test/1/messaging/proto"
#define MAX_HASHES 64

static uv_loop_t g_loop;

#define WAIT_FOR(cond) NH_WAIT_FOR(&g_loop, cond, STEP_MS)

/* ---- what a client reports ------------------------------------------------------------------- */

typedef struct sink {
  char log[16384]; /* P:<rid> S:<rid> E:<rid>:<error> R:<hash prefix> C:<status>, comma-separated */
  int propagated, sent, errors, received, statuses;
  ld_connection_status_t status;
  bool saw_disconnected_after_up;
  bool was_up;
  uint8_t hashes[MAX_HASHES][LD_WAKU_HASH_LEN];
  int counts[MAX_HASHES];
  int n_hashes;
} sink_t;

static void note(sink_t *s, const char *what) {
  size_t n = strlen(s->log);
  snprintf(s->log + n, sizeof s->log - n, "%s%s", n > 0 ? "," : "", what);
}

static void on_send_event(int kind, const void *payload, void *ud) {
  const ld_messaging_send_event_t *ev = payload;
  sink_t *s = ud;
  char line[512];
  assert_int_equal(strlen(ev->request_id), LD_MESSAGING_REQUEST_ID_LEN);
  if (kind == LD_EVENT_MESSAGING_PROPAGATED) {
    snprintf(line, sizeof line, "P:%s", ev->request_id);
    s->propagated++;
  } else if (kind == LD_EVENT_MESSAGING_SENT) {
    snprintf(line, sizeof line, "S:%s", ev->request_id);
    s->sent++;
  } else {
    snprintf(line, sizeof line, "E:%s:%s", ev->request_id, ev->error);
    s->errors++;
  }
  note(s, line);
}

static int hash_slot(sink_t *s, const uint8_t hash[LD_WAKU_HASH_LEN]) {
  for (int i = 0; i < s->n_hashes; i++)
    if (memcmp(s->hashes[i], hash, LD_WAKU_HASH_LEN) == 0)
      return i;
  assert_true(s->n_hashes < MAX_HASHES);
  memcpy(s->hashes[s->n_hashes], hash, LD_WAKU_HASH_LEN);
  return s->n_hashes++;
}

static int received_count(sink_t *s, const uint8_t hash[LD_WAKU_HASH_LEN]) {
  for (int i = 0; i < s->n_hashes; i++)
    if (memcmp(s->hashes[i], hash, LD_WAKU_HASH_LEN) == 0)
      return s->counts[i];
  return 0;
}

static void on_received(int kind, const void *payload, void *ud) {
  (void)kind;
  const ld_messaging_received_event_t *ev = payload;
  sink_t *s = ud;
  uint8_t check[LD_WAKU_HASH_LEN];
  assert_int_equal(ld_waku_message_hash(ev->pubsub_topic, ev->msg, check), 0);
  assert_memory_equal(check, ev->hash, LD_WAKU_HASH_LEN);
  s->counts[hash_slot(s, ev->hash)]++;
  s->received++;
  char line[16];
  snprintf(line, sizeof line, "R:%02x%02x", ev->hash[0], ev->hash[1]);
  note(s, line);
}

static void on_status(int kind, const void *payload, void *ud) {
  (void)kind;
  const ld_messaging_status_event_t *ev = payload;
  sink_t *s = ud;
  s->status = ev->status;
  s->statuses++;
  if (ev->status != LD_CONNECTION_DISCONNECTED)
    s->was_up = true;
  else if (s->was_up)
    s->saw_disconnected_after_up = true;
  char line[32];
  snprintf(line, sizeof line, "C:%s", ld_connection_status_name(ev->status));
  note(s, line);
}

static bool logged(const sink_t *s, const char *prefix, const char *rid) {
  char needle[64];
  snprintf(needle, sizeof needle, "%s%s", prefix, rid);
  return strstr(s->log, needle) != NULL;
}

/* Occurrences of "<prefix><rid>" in the log. */
static int count_of(const sink_t *s, const char *prefix, const char *rid) {
  char needle[64];
  snprintf(needle, sizeof needle, "%s%s", prefix, rid);
  int n = 0;
  for (const char *p = strstr(s->log, needle); p != NULL; p = strstr(p + 1, needle))
    n++;
  return n;
}

/* ---- nodes and clients ----------------------------------------------------------------------- */

typedef struct peer {
  ld_node_t *node;
  ld_messaging_t *m;
  sink_t sink;
  bool done;
} peer_t;

static ld_node_config_t *node_config(bool relay) {
  ld_node_config_t *cfg = nh_config();
  cfg->relay = relay;
  return cfg;
}

static void add_static(ld_node_config_t *cfg, peer_t *to) {
  nh_add_static(cfg, to->node);
}

static void start_node(peer_t *p, ld_node_config_t *cfg) {
  memset(p, 0, sizeof *p);
  p->node = nh_start(&g_loop, cfg);
  ld_broker_t *b = ld_node_broker(p->node);
  assert_true(ld_broker_subscribe(b, LD_EVENT_MESSAGING_PROPAGATED, on_send_event, &p->sink) > 0);
  assert_true(ld_broker_subscribe(b, LD_EVENT_MESSAGING_SENT, on_send_event, &p->sink) > 0);
  assert_true(ld_broker_subscribe(b, LD_EVENT_MESSAGING_ERROR, on_send_event, &p->sink) > 0);
  assert_true(ld_broker_subscribe(b, LD_EVENT_MESSAGING_RECEIVED, on_received, &p->sink) > 0);
  assert_true(ld_broker_subscribe(b, LD_EVENT_MESSAGING_CONNECTION_STATUS, on_status, &p->sink) >
              0);
}

static ld_messaging_config_t test_config(ld_messaging_mode_t mode) {
  ld_messaging_config_t c;
  ld_messaging_config_default(&c);
  c.mode = mode;
  c.tick_ms = 100;
  c.confirm_after_ms = 300;
  c.retry_window_ms = 15000;
  return c;
}

static void start_messaging(peer_t *p, const ld_messaging_config_t *cfg) {
  int err = -1;
  p->m = ld_messaging_new(p->node, cfg, &err);
  assert_int_equal(err, 0);
  assert_non_null(p->m);
}

static void on_done(void *ud) {
  *(bool *)ud = true;
}

static void free_messaging(peer_t *p) {
  if (p->m == NULL)
    return;
  p->done = false;
  ld_messaging_free(p->m, on_done, &p->done);
  WAIT_FOR(p->done);
  p->m = NULL;
}

static void stop_peer(peer_t *p) {
  free_messaging(p);
  nh_stop(&g_loop, p->node, STEP_MS);
}

static void send_text(peer_t *p, const char *text, bool ephemeral, char rid[21]) {
  ld_messaging_envelope_t env = {CONTENT, (const uint8_t *)text, strlen(text), NULL, 0, ephemeral};
  char why[256] = "";
  assert_int_equal(ld_messaging_send(p->m, &env, rid, why, sizeof why), 0);
  assert_int_equal(strlen(rid), LD_MESSAGING_REQUEST_ID_LEN);
  for (size_t i = 0; i < LD_MESSAGING_REQUEST_ID_LEN; i++)
    assert_non_null(strchr("0123456789abcdef", rid[i]));
}

static const ld_message_record_t *record(peer_t *p, const char *rid) {
  const ld_message_record_t *r = ld_messaging_record_by_request(p->m, rid);
  assert_non_null(r);
  return r;
}

/* Relay forwards along the mesh: tests wait until it has formed. */
static size_t mesh_peers(peer_t *p) {
  return ld_gs_service_mesh_peers(ld_node_gossipsub(p->node), PUBSUB, NULL, 0);
}

/* A store node and two Core nodes attached to it, B subscribed to CONTENT. */
static void start_trio(peer_t *store, peer_t *a, peer_t *b, const ld_messaging_config_t *cfg_a) {
  char err[256];
  ld_node_config_t *cs = node_config(true);
  cs->store = true;
  assert_int_equal(ld_node_config_set_store_db_url(cs, "memory://", err, sizeof err), 0);
  start_node(store, cs);
  ld_node_config_t *ca = node_config(true);
  add_static(ca, store);
  start_node(a, ca);
  ld_node_config_t *cb = node_config(true);
  add_static(cb, store);
  /* room to miss messages when the connection is dropped, and long enough for them to leave
   * gossipsub's IHAVE window (3 heartbeats): they can come back only through a recovery */
  cb->reconnect_min_ms = 6000;
  cb->reconnect_max_ms = 6000;
  start_node(b, cb);
  start_messaging(a, cfg_a);
  ld_messaging_config_t core = test_config(LD_MESSAGING_CORE);
  start_messaging(b, &core);
  char why[128];
  assert_int_equal(ld_messaging_subscribe(b->m, CONTENT, why, sizeof why), 0);
  WAIT_FOR(mesh_peers(store) >= 2 && mesh_peers(a) >= 1 && mesh_peers(b) >= 1);
}

/* ---- Core nodes ------------------------------------------------------------------------------ */

static void core_send_is_received_once_and_confirmed(void **state) {
  (void)state;
  peer_t s, a, b;
  ld_messaging_config_t ca = test_config(LD_MESSAGING_CORE);
  start_trio(&s, &a, &b, &ca);

  char rid[21];
  send_text(&a, "hello from a", false, rid);
  const ld_message_record_t *r = record(&a, rid);
  assert_true(r->sending);
  assert_true(r->has_hash);
  uint8_t hash[LD_WAKU_HASH_LEN];
  memcpy(hash, r->hash, LD_WAKU_HASH_LEN);
  assert_true(ld_messaging_subscribed(a.m, CONTENT)); /* auto-subscribed */
  WAIT_FOR(logged(&a.sink, "S:", rid));
  WAIT_FOR(received_count(&b.sink, hash) == 1);
  /* PROPAGATED strictly before SENT, each once */
  const char *p = strstr(a.sink.log, "P:");
  assert_non_null(p);
  assert_true(strstr(a.sink.log, "S:") > p);
  assert_int_equal(count_of(&a.sink, "P:", rid), 1);
  assert_int_equal(count_of(&a.sink, "S:", rid), 1);
  assert_int_equal(a.sink.errors, 0);
  r = record(&a, rid);
  assert_false(r->sending);
  assert_true(r->sent && r->stored);
  assert_null(r->error);
  const ld_message_record_t *rb = ld_messaging_record_by_hash(b.m, hash);
  assert_non_null(rb);
  assert_true(rb->received);
  assert_false(rb->has_request_id);
  assert_memory_equal(rb->msg.payload, "hello from a", 12);
  char sub[LD_MESSAGING_SUBSCRIPTION_ID_LEN + 1];
  assert_true(ld_messaging_subscription_id(b.m, CONTENT, sub));
  const ld_message_record_t *list[4];
  assert_int_equal(ld_messaging_records_by_subscription(b.m, sub, 0, 10, list, 4), 1);
  assert_ptr_equal(list[0], rb);

  /* a second message: once it is through, the first was still received only once */
  char rid2[21];
  send_text(&a, "second", false, rid2);
  uint8_t hash2[LD_WAKU_HASH_LEN];
  memcpy(hash2, record(&a, rid2)->hash, LD_WAKU_HASH_LEN);
  WAIT_FOR(logged(&a.sink, "S:", rid2));
  WAIT_FOR(received_count(&b.sink, hash2) == 1);
  assert_int_equal(received_count(&b.sink, hash), 1);
  assert_int_equal(count_of(&a.sink, "S:", rid), 1);
  ld_messaging_stats_t st;
  ld_messaging_get_stats(a.m, &st);
  assert_int_equal(st.submitted, 2);
  assert_int_equal(st.propagated, 2);
  assert_int_equal(st.sent, 2);
  assert_int_equal(st.send_errors, 0);

  stop_peer(&b);
  stop_peer(&a);
  stop_peer(&s);
}

static void ephemeral_and_reliability_off_end_at_propagation(void **state) {
  (void)state;
  peer_t s, a, b;
  ld_messaging_config_t ca = test_config(LD_MESSAGING_CORE);
  start_trio(&s, &a, &b, &ca);

  char eph[21], normal[21];
  send_text(&a, "ephemeral", true, eph);
  WAIT_FOR(logged(&a.sink, "P:", eph));
  const ld_message_record_t *r = record(&a, eph);
  assert_false(r->sending); /* nothing follows */
  assert_true(r->sent);
  assert_false(r->stored);
  /* a confirmed message afterwards: the ephemeral one still has no SENT */
  send_text(&a, "confirmed", false, normal);
  WAIT_FOR(logged(&a.sink, "S:", normal));
  assert_false(logged(&a.sink, "S:", eph));
  assert_false(logged(&a.sink, "E:", eph));

  /* the same node with a new client that does not confirm */
  free_messaging(&a);
  ld_messaging_config_t off = test_config(LD_MESSAGING_CORE);
  off.reliability = false;
  start_messaging(&a, &off);
  char plain[21];
  send_text(&a, "no confirmation", false, plain);
  uint8_t hash[LD_WAKU_HASH_LEN];
  memcpy(hash, record(&a, plain)->hash, LD_WAKU_HASH_LEN);
  WAIT_FOR(logged(&a.sink, "P:", plain));
  r = record(&a, plain);
  assert_false(r->sending);
  assert_true(r->sent);
  assert_false(r->stored);
  WAIT_FOR(received_count(&b.sink, hash) == 1);
  assert_false(logged(&a.sink, "S:", plain));
  assert_int_equal(a.sink.errors, 0);

  stop_peer(&b);
  stop_peer(&a);
  stop_peer(&s);
}

/* ---- failures -------------------------------------------------------------------------------- */

static void an_isolated_node_fails_after_the_window_and_refuses_oversize(void **state) {
  (void)state;
  peer_t n;
  char text[256];
  ld_node_config_t *nc = node_config(true);
  /* with a REST server: the client installs and removes its paths there */
  assert_int_equal(ld_node_config_set_rest(nc, true, "127.0.0.1", 0, 0, text, sizeof text), 0);
  start_node(&n, nc);
  assert_true(ld_node_rest_port(n.node) > 0);
  ld_messaging_config_t c = test_config(LD_MESSAGING_CORE);
  c.retry_window_ms = 1500;
  start_messaging(&n, &c);
  char rid[21];
  send_text(&n, "nobody listens", false, rid);
  WAIT_FOR(n.sink.errors == 1);
  char expect[128];
  snprintf(expect, sizeof expect, "E:%s:Unable to send within retry time window", rid);
  assert_non_null(strstr(n.sink.log, expect));
  assert_int_equal(n.sink.propagated, 0);
  const ld_message_record_t *r = record(&n, rid);
  assert_false(r->sending || r->sent);
  assert_string_equal(r->error, "Unable to send within retry time window");

  size_t big_len = 151 * 1024;
  uint8_t *big = calloc(1, big_len);
  ld_messaging_envelope_t env = {CONTENT, big, big_len, NULL, 0, false};
  char why[256];
  char big_rid[21];
  assert_int_equal(ld_messaging_send(n.m, &env, big_rid, why, sizeof why), 0);
  free(big);
  WAIT_FOR(n.sink.errors == 2);
  snprintf(expect, sizeof expect, "E:%s:Message size exceeded maximum of %u bytes", big_rid,
           150u * 1024);
  assert_non_null(strstr(n.sink.log, expect));
  assert_true(record(&n, big_rid)->has_hash);

  /* synchronous refusals */
  env.content_topic = "not-a-topic";
  env.payload = (const uint8_t *)"x";
  env.payload_len = 1;
  assert_int_equal(ld_messaging_send(n.m, &env, big_rid, why, sizeof why), LD_ERR_INVALID_ARG);
  assert_non_null(strstr(why, "Failed to auto-subscribe before sending: "));
  assert_int_equal(ld_messaging_unsubscribe(n.m, "/other/1/topic/proto", why, sizeof why),
                   LD_ERR_NOT_FOUND);
  assert_string_equal(why, "not subscribed to /other/1/topic/proto");
  assert_int_equal(ld_messaging_unsubscribe(n.m, CONTENT, why, sizeof why), 0);
  assert_false(ld_messaging_subscribed(n.m, CONTENT));
  assert_int_equal(ld_messaging_connection_status(n.m), LD_CONNECTION_DISCONNECTED);
  stop_peer(&n);

  int err = 0;
  ld_node_config_t *cfg = node_config(true);
  assert_int_equal(ld_node_config_finalize(cfg, text, sizeof text), 0);
  ld_node_t *unstarted = ld_node_new(&g_loop, cfg, &err);
  free(cfg);
  assert_non_null(unstarted);
  ld_messaging_config_t core = test_config(LD_MESSAGING_CORE);
  assert_null(ld_messaging_new(unstarted, &core, &err));
  assert_int_equal(err, LD_ERR_STATE);
  bool stopped = false;
  ld_node_stop(unstarted, on_done, &stopped);
  WAIT_FOR(stopped);
}

/* ---- Edge ------------------------------------------------------------------------------------ */

static void edge_sends_by_lightpush_and_receives_by_filter(void **state) {
  (void)state;
  char err[256];
  peer_t svc, core, edge;
  ld_node_config_t *cs = node_config(true);
  cs->store = cs->lightpush = cs->filter = true;
  assert_int_equal(ld_node_config_set_store_db_url(cs, "memory://", err, sizeof err), 0);
  start_node(&svc, cs);
  ld_node_config_t *cc = node_config(true);
  add_static(cc, &svc);
  start_node(&core, cc);
  ld_node_config_t *ce = node_config(false);
  add_static(ce, &svc);
  start_node(&edge, ce);
  ld_messaging_config_t mc = test_config(LD_MESSAGING_CORE);
  start_messaging(&core, &mc);
  ld_messaging_config_t me = test_config(LD_MESSAGING_EDGE);
  start_messaging(&edge, &me);
  char why[128];
  assert_int_equal(ld_messaging_subscribe(core.m, CONTENT, why, sizeof why), 0);
  assert_int_equal(ld_messaging_subscribe(edge.m, CONTENT, why, sizeof why), 0);
  WAIT_FOR(mesh_peers(&core) >= 1 && mesh_peers(&svc) >= 1);
  /* filter, lightpush and store at the service node: PartiallyConnected */
  WAIT_FOR(ld_messaging_connection_status(edge.m) == LD_CONNECTION_PARTIALLY_CONNECTED);

  char rid[21];
  send_text(&edge, "from the edge", false, rid);
  uint8_t hash[LD_WAKU_HASH_LEN];
  memcpy(hash, record(&edge, rid)->hash, LD_WAKU_HASH_LEN);
  WAIT_FOR(logged(&edge.sink, "S:", rid));
  assert_true(strstr(edge.sink.log, "P:") < strstr(edge.sink.log, "S:"));
  WAIT_FOR(received_count(&core.sink, hash) == 1);

  char rid2[21];
  send_text(&core, "to the edge", false, rid2);
  uint8_t hash2[LD_WAKU_HASH_LEN];
  memcpy(hash2, record(&core, rid2)->hash, LD_WAKU_HASH_LEN);
  WAIT_FOR(received_count(&edge.sink, hash2) == 1);
  WAIT_FOR(logged(&core.sink, "S:", rid2));
  assert_int_equal(received_count(&edge.sink, hash2), 1);
  assert_int_equal(edge.sink.errors + core.sink.errors, 0);

  stop_peer(&edge);
  stop_peer(&core);
  stop_peer(&svc);
}

/* ---- recovery -------------------------------------------------------------------------------- */

static void drop_connections(peer_t *p) {
  ld_conn_t *conns[16];
  size_t n = ld_switch_connections(ld_node_switch(p->node), conns, 16);
  for (size_t i = 0; i < n && i < 16; i++)
    ld_conn_close(conns[i], LD_ERR_CLOSED, false);
}

static void a_receiver_back_online_recovers_missed_messages(void **state) {
  (void)state;
  peer_t s, a, b;
  ld_messaging_config_t ca = test_config(LD_MESSAGING_CORE);
  start_trio(&s, &a, &b, &ca);
  WAIT_FOR(b.sink.was_up);

  char rid1[21];
  send_text(&a, "before", false, rid1);
  uint8_t h1[LD_WAKU_HASH_LEN];
  memcpy(h1, record(&a, rid1)->hash, LD_WAKU_HASH_LEN);
  WAIT_FOR(received_count(&b.sink, h1) == 1);

  drop_connections(&b);
  WAIT_FOR(b.sink.saw_disconnected_after_up);
  assert_int_equal(ld_messaging_connection_status(b.m), LD_CONNECTION_DISCONNECTED);
  char rid2[21], rid3[21];
  send_text(&a, "missed one", false, rid2);
  send_text(&a, "missed two", false, rid3);
  uint8_t h2[LD_WAKU_HASH_LEN], h3[LD_WAKU_HASH_LEN];
  memcpy(h2, record(&a, rid2)->hash, LD_WAKU_HASH_LEN);
  memcpy(h3, record(&a, rid3)->hash, LD_WAKU_HASH_LEN);
  WAIT_FOR(logged(&a.sink, "S:", rid2) && logged(&a.sink, "S:", rid3)); /* stored */
  /* the messages went by while B was away */
  assert_int_equal(ld_messaging_connection_status(b.m), LD_CONNECTION_DISCONNECTED);
  assert_int_equal(received_count(&b.sink, h2), 0);
  assert_int_equal(received_count(&b.sink, h3), 0);

  /* the static peer is redialed; the missed interval is recovered from the store */
  WAIT_FOR(received_count(&b.sink, h2) == 1 && received_count(&b.sink, h3) == 1);
  assert_int_not_equal(ld_messaging_connection_status(b.m), LD_CONNECTION_DISCONNECTED);
  /* one more live message: the recovered ones are still reported once, the first too */
  WAIT_FOR(mesh_peers(&s) >= 2 && mesh_peers(&b) >= 1);
  char rid4[21];
  send_text(&a, "after", false, rid4);
  uint8_t h4[LD_WAKU_HASH_LEN];
  memcpy(h4, record(&a, rid4)->hash, LD_WAKU_HASH_LEN);
  WAIT_FOR(received_count(&b.sink, h4) == 1);
  assert_int_equal(received_count(&b.sink, h1), 1);
  assert_int_equal(received_count(&b.sink, h2), 1);
  assert_int_equal(received_count(&b.sink, h3), 1);
  const ld_message_record_t *r2 = ld_messaging_record_by_hash(b.m, h2);
  assert_non_null(r2);
  assert_true(r2->received);
  assert_memory_equal(r2->msg.payload, "missed one", 10);
  ld_messaging_stats_t st;
  ld_messaging_get_stats(b.m, &st);
  assert_int_equal(st.recovered, 2); /* through the store, not relay */
  assert_true(st.recoveries >= 1);

  stop_peer(&b);
  stop_peer(&a);
  stop_peer(&s);
}

/* ---- the store-based reliability implementation ---------------------------------------------- */

typedef struct rel_probe {
  ld_service_peer_t peer;
  bool answered;
  int err;
  bool present[4];
  size_t n;
  int messages;
  uint8_t known[LD_WAKU_HASH_LEN];
  bool have_known;
  ld_reliability_t *r;
  ld_reliability_call_t *call;
  bool cancel_in_message;
  size_t recovered;
} rel_probe_t;

static int pick_it(void *ud, ld_service_peer_t *out) {
  *out = ((rel_probe_t *)ud)->peer;
  return 0;
}

static void on_rel_confirm(int err, const bool *present, size_t n, void *ud) {
  rel_probe_t *p = ud;
  p->err = err;
  p->n = n;
  for (size_t i = 0; i < n && i < 4; i++)
    p->present[i] = present[i];
  p->answered = true;
}

static bool on_rel_known(const uint8_t hash[LD_WAKU_HASH_LEN], void *ud) {
  rel_probe_t *p = ud;
  return p->have_known && memcmp(hash, p->known, LD_WAKU_HASH_LEN) == 0;
}

static void on_rel_message(const char *pubsub_topic, const uint8_t hash[LD_WAKU_HASH_LEN],
                           const ld_waku_message_t *msg, void *ud) {
  rel_probe_t *p = ud;
  assert_string_equal(pubsub_topic, PUBSUB);
  uint8_t check[LD_WAKU_HASH_LEN];
  assert_int_equal(ld_waku_message_hash(pubsub_topic, msg, check), 0);
  assert_memory_equal(check, hash, LD_WAKU_HASH_LEN);
  p->messages++;
  if (p->cancel_in_message) {
    ld_reliability_cancel(p->r, p->call);
    p->answered = true; /* no done must follow */
  }
}

static void on_rel_done(int err, size_t recovered, void *ud) {
  rel_probe_t *p = ud;
  assert_false(p->cancel_in_message);
  p->err = err;
  p->recovered = recovered;
  p->answered = true;
}

static void store_reliability_confirms_and_recovers(void **state) {
  (void)state;
  peer_t s, a, b;
  ld_messaging_config_t ca = test_config(LD_MESSAGING_CORE);
  start_trio(&s, &a, &b, &ca);
  char rid1[21], rid2[21];
  send_text(&a, "one", false, rid1);
  send_text(&a, "two", false, rid2);
  WAIT_FOR(logged(&a.sink, "S:", rid1) && logged(&a.sink, "S:", rid2));
  uint8_t hashes[3][LD_WAKU_HASH_LEN];
  memcpy(hashes[0], record(&a, rid1)->hash, LD_WAKU_HASH_LEN);
  memset(hashes[1], 0x5a, LD_WAKU_HASH_LEN);
  memcpy(hashes[2], record(&a, rid2)->hash, LD_WAKU_HASH_LEN);

  rel_probe_t p;
  memset(&p, 0, sizeof p);
  ld_multiaddr_t addrs[2];
  assert_true(ld_node_listen_addrs(s.node, addrs, 2) >= 1);
  p.peer.id = *ld_node_peer_id(s.node);
  p.peer.addr = addrs[0];
  ld_store_reliability_config_t cfg = {0};
  cfg.pick = pick_it;
  cfg.pick_user_data = &p;
  p.r = ld_store_reliability_new(ld_node_switch(b.node), NULL, &cfg);
  assert_non_null(p.r);

  assert_int_equal(ld_reliability_confirm(p.r, (const uint8_t(*)[LD_WAKU_HASH_LEN])hashes, 3,
                                          on_rel_confirm, &p, &p.call),
                   0);
  assert_false(p.answered); /* never from inside the call */
  WAIT_FOR(p.answered);
  assert_int_equal(p.err, 0);
  assert_int_equal(p.n, 3);
  assert_true(p.present[0]);
  assert_false(p.present[1]);
  assert_true(p.present[2]);

  const char *topics[] = {CONTENT};
  int64_t now = (int64_t)ld_wall_ns();
  ld_reliability_range_t range = {PUBSUB, topics, 1, now - 60 * 1000000000LL, now};
  memcpy(p.known, hashes[0], LD_WAKU_HASH_LEN);
  p.have_known = true;
  p.answered = false;
  assert_int_equal(
      ld_reliability_recover(p.r, &range, on_rel_known, on_rel_message, on_rel_done, &p, &p.call),
      0);
  WAIT_FOR(p.answered);
  assert_int_equal(p.err, 0);
  assert_int_equal(p.recovered, 1); /* "two" only: "one" is known */
  assert_int_equal(p.messages, 1);

  /* cancelled from inside on_message: no done, nothing more */
  p.have_known = false;
  p.answered = false;
  p.messages = 0;
  p.cancel_in_message = true;
  assert_int_equal(
      ld_reliability_recover(p.r, &range, on_rel_known, on_rel_message, on_rel_done, &p, &p.call),
      0);
  WAIT_FOR(p.answered);
  assert_int_equal(p.messages, 1);
  p.cancel_in_message = false;

  /* cancelled before the answer, then freed with a call under way */
  p.answered = false;
  assert_int_equal(ld_reliability_confirm(p.r, (const uint8_t(*)[LD_WAKU_HASH_LEN])hashes, 1,
                                          on_rel_confirm, &p, &p.call),
                   0);
  ld_reliability_cancel(p.r, p.call);
  assert_int_equal(ld_reliability_confirm(p.r, (const uint8_t(*)[LD_WAKU_HASH_LEN])hashes, 1,
                                          on_rel_confirm, &p, NULL),
                   0);
  ld_reliability_free(p.r);
  for (int i = 0; i < 20; i++)
    uv_run(&g_loop, UV_RUN_NOWAIT);
  assert_false(p.answered);

  stop_peer(&b);
  stop_peer(&a);
  stop_peer(&s);
}

/* ---- service peers answering with transient errors --------------------------------------------
 */

#define MAX_PUSHES 256

/* A lightpush service on a bare switch whose relay has no peer: every push is answered 505 "No
 * peers for topic, skipping publish", forever. It notes when each push arrived. */
typedef struct stubborn {
  ld_switch_t *sw;
  ld_lightpush_server_t *lp;
  ld_multiaddr_t addr;
  uint64_t at[MAX_PUSHES];
  int pushes;
} stubborn_t;

static int publish_to_nobody(void *ctx, const char *pubsub_topic, const ld_waku_message_t *msg,
                             char *why, size_t why_len) {
  (void)pubsub_topic, (void)msg, (void)why, (void)why_len;
  stubborn_t *s = ctx;
  if (s->pushes < MAX_PUSHES)
    s->at[s->pushes] = ld_now_ms();
  s->pushes++;
  return 0; /* relayed to 0 peers */
}

static void stubborn_start(stubborn_t *s) {
  memset(s, 0, sizeof *s);
  s->sw = sh_switch_new(&g_loop, NULL);
  sh_listen_local(s->sw, &s->addr);
  ld_lightpush_server_config_t cfg;
  ld_lightpush_server_config_default(&cfg);
  cfg.publish = publish_to_nobody;
  cfg.publish_ctx = s;
  s->lp = ld_lightpush_server_new(s->sw, &cfg);
  assert_non_null(s->lp);
}

static void stubborn_stop(stubborn_t *s) {
  sh_switch_close(s->sw, &g_loop);
  ld_lightpush_server_free(s->lp);
}

static void set_service_node(ld_node_config_t *cfg, ld_node_service_t which,
                             const ld_multiaddr_t *addr) {
  char text[LD_MULTIADDR_TEXT_MAX], err[256];
  assert_true(ld_multiaddr_to_text(addr, text, sizeof text) > 0);
  assert_int_equal(ld_node_config_set_service_node(cfg, which, text, err, sizeof err), 0);
}

/* How many pushes the back-off schedule allows within `window_ms` of the first: each push waits
 * at least the pause of the answers before it. */
static int pushes_allowed(uint64_t window_ms) {
  int n = 1;
  uint64_t t = 0;
  for (uint32_t k = 1;; k++) {
    t += ld_service_peers_backoff_ms(k);
    if (t >= window_ms)
      return n;
    n++;
  }
}

#define STUBBORN_WINDOW_MS 12000u

/* Bad input: a service that answers every push with a transient error forever. The Edge sender
 * asks it again and again, paced by the back-off (rounds of 100 ms here, 120 of them in the
 * window), and ends with an error at the end of the window naming the last answer. */
static void a_service_that_never_relays_is_retried_with_back_off(void **state) {
  (void)state;
  stubborn_t svc;
  stubborn_start(&svc);
  peer_t edge;
  ld_node_config_t *ce = node_config(false);
  set_service_node(ce, LD_NODE_SERVICE_LIGHTPUSH, &svc.addr);
  start_node(&edge, ce);
  ld_messaging_config_t me = test_config(LD_MESSAGING_EDGE);
  me.reliability = false;
  me.retry_window_ms = STUBBORN_WINDOW_MS;
  start_messaging(&edge, &me);

  char rid[21];
  uint64_t sent = ld_now_ms();
  send_text(&edge, "never relayed", false, rid);
  WAIT_FOR(edge.sink.errors == 1);
  uint64_t ended = ld_now_ms();
  char expect[256];
  snprintf(expect, sizeof expect,
           "E:%s:Unable to send within retry time window; last error: No peers for topic, "
           "skipping publish",
           rid);
  assert_string_equal(edge.sink.log, expect);
  assert_true(ended - sent >= STUBBORN_WINDOW_MS);
  assert_int_equal(edge.sink.propagated, 0);

  /* the same peer was asked again, round after round at first … */
  int pushes = svc.pushes;
  print_message("pushes received in %u ms: %d (the schedule allows %d)\n", STUBBORN_WINDOW_MS,
                pushes, pushes_allowed(STUBBORN_WINDOW_MS));
  assert_true(pushes >= (int)LD_SERVICE_PEERS_RETRY_FAST + 1);
  /* … never sooner than the back-off allows, so no more than the schedule fits in the window */
  assert_true(pushes <= pushes_allowed(STUBBORN_WINDOW_MS));
  for (int i = 1; i < pushes && i < MAX_PUSHES; i++)
    if (svc.at[i] - svc.at[i - 1] + 1 < ld_service_peers_backoff_ms((uint32_t)i))
      fail_msg("push %d came %llu ms after the previous one, the back-off is %llu ms", i + 1,
               (unsigned long long)(svc.at[i] - svc.at[i - 1]),
               (unsigned long long)ld_service_peers_backoff_ms((uint32_t)i));
  /* nothing more once the send has ended */
  nh_run_for(&g_loop, 1000);
  assert_int_equal(svc.pushes, pushes);

  stop_peer(&edge);
  stubborn_stop(&svc);
}

/* A store service on a bare switch whose archive fails the first `failures` queries (answered
 * 300 "BAD_RESPONSE: archive error: DRIVER_ERROR: …") and then holds every hash it is asked
 * about. */
typedef struct flaky_store {
  ld_switch_t *sw;
  ld_store_server_t *store;
  ld_multiaddr_t addr;
  int failures;
  int queries;
} flaky_store_t;

static int flaky_query(void *ctx, const ld_archive_query_t *q, ld_archive_query_fn done,
                       void *user_data) {
  flaky_store_t *f = ctx;
  f->queries++;
  if (f->failures > 0) {
    f->failures--;
    done(LD_ERR_DB, "disk busy", NULL, user_data);
    return 0;
  }
  ld_archive_row_t rows[LD_STORE_MAX_HASHES];
  size_t n = q->n_hashes < LD_STORE_MAX_HASHES ? q->n_hashes : LD_STORE_MAX_HASHES;
  memset(rows, 0, sizeof rows);
  for (size_t i = 0; i < n; i++) {
    memcpy(rows[i].hash, q->hashes[i], LD_WAKU_HASH_LEN);
    rows[i].pubsub_topic = PUBSUB;
    ld_waku_message_init(&rows[i].msg);
  }
  ld_archive_result_t res = {rows, n, false, {0}};
  done(0, NULL, &res, user_data);
  return 0;
}

static void flaky_start(flaky_store_t *f, int failures) {
  memset(f, 0, sizeof *f);
  f->failures = failures;
  f->sw = sh_switch_new(&g_loop, NULL);
  sh_listen_local(f->sw, &f->addr);
  ld_store_backend_t backend = {flaky_query, f};
  f->store = ld_store_server_new(f->sw, &backend, NULL);
  assert_non_null(f->store);
}

static void flaky_stop(flaky_store_t *f) {
  sh_switch_close(f->sw, &g_loop);
  ld_store_server_free(f->store);
}

/* The store peer's first confirmation answer is an error: it stays the store peer for the next
 * confirmation round, which confirms the send (one error answer does not disqualify it for the
 * whole confirmation window). */
static void a_store_error_answer_does_not_disqualify_the_store_peer(void **state) {
  (void)state;
  flaky_store_t store;
  flaky_start(&store, 1);
  peer_t relay, sender;
  start_node(&relay, node_config(true));
  ld_node_config_t *cs = node_config(true);
  add_static(cs, &relay);
  set_service_node(cs, LD_NODE_SERVICE_STORE, &store.addr);
  start_node(&sender, cs);
  ld_messaging_config_t mc = test_config(LD_MESSAGING_CORE);
  start_messaging(&sender, &mc);
  ld_messaging_config_t mr = test_config(LD_MESSAGING_CORE);
  start_messaging(&relay, &mr);
  char why[128];
  assert_int_equal(ld_messaging_subscribe(relay.m, CONTENT, why, sizeof why), 0);
  assert_int_equal(ld_messaging_subscribe(sender.m, CONTENT, why, sizeof why), 0);
  WAIT_FOR(mesh_peers(&sender) >= 1);

  char rid[21];
  send_text(&sender, "confirmed at the second ask", false, rid);
  WAIT_FOR(logged(&sender.sink, "S:", rid));
  assert_true(store.queries >= 2);
  assert_int_equal(store.failures, 0);
  assert_int_equal(sender.sink.errors, 0);

  stop_peer(&sender);
  stop_peer(&relay);
  flaky_stop(&store);
}

/* A filter service on a bare switch that takes one request per RATION_MS from each peer and
 * answers the others 429. */
#define RATION_MS 4000u

typedef struct rationed_filter {
  ld_switch_t *sw;
  ld_filter_server_t *srv;
  ld_multiaddr_t addr;
} rationed_filter_t;

static void rationed_start(rationed_filter_t *f) {
  memset(f, 0, sizeof *f);
  f->sw = sh_switch_new(&g_loop, NULL);
  sh_listen_local(f->sw, &f->addr);
  ld_filter_server_config_t cfg;
  ld_filter_server_config_default(&cfg);
  cfg.rate_limit_volume = 1;
  cfg.rate_limit_period_ms = RATION_MS;
  f->srv = ld_filter_server_new(f->sw, &g_loop, &cfg);
  assert_non_null(f->srv);
}

static void rationed_stop(rationed_filter_t *f) {
  sh_switch_close(f->sw, &g_loop);
  ld_filter_server_free(f->srv);
  uv_run(&g_loop, UV_RUN_NOWAIT);
}

static void on_other_subscribed(const ld_filter_result_t *res, void *ud) {
  *(int *)ud = res->err == 0 && res->status_code == LD_FILTER_STATUS_OK ? 1 : -1;
}

static size_t connections(peer_t *p) {
  ld_conn_t *conns[4];
  return ld_switch_connections(ld_node_switch(p->node), conns, 4);
}

static void rationed_push(rationed_filter_t *f, int i) {
  char text[32];
  snprintf(text, sizeof text, "rationed %d", i);
  ld_waku_message_t msg;
  ld_waku_message_init(&msg);
  msg.content_topic = CONTENT;
  msg.content_topic_len = strlen(CONTENT);
  msg.payload = (const uint8_t *)text;
  msg.payload_len = strlen(text);
  msg.timestamp = (int64_t)ld_wall_ns();
  assert_true(ld_filter_server_handle_message(f->srv, PUBSUB, &msg, NULL) >= 0);
}

/* The edge node's own SUBSCRIBE for CONTENT comes right after another one from the same node
 * and is answered 429: the service is asked again at later rounds (not skipped for a minute),
 * and messages arrive once it took the subscription. */
static void a_rate_limited_filter_service_is_asked_again(void **state) {
  (void)state;
  rationed_filter_t svc;
  rationed_start(&svc);
  peer_t edge;
  ld_node_config_t *ce = node_config(false);
  set_service_node(ce, LD_NODE_SERVICE_FILTER, &svc.addr);
  start_node(&edge, ce);
  WAIT_FOR(connections(&edge) == 1); /* the configured filter node is dialed at start */
  /* a first request from this node takes the ration */
  int err = 0, other = 0;
  ld_filter_client_t *fc = ld_node_filter_client(edge.node, &err);
  assert_non_null(fc);
  ld_conn_t *conn;
  assert_int_equal(ld_switch_connections(ld_node_switch(edge.node), &conn, 1), 1);
  const char *topics[] = {"/test/1/other/proto"};
  assert_int_equal(
      ld_filter_client_subscribe(fc, conn, PUBSUB, topics, 1, on_other_subscribed, &other), 0);
  WAIT_FOR(other != 0);
  assert_int_equal(other, 1);

  ld_messaging_config_t me = test_config(LD_MESSAGING_EDGE);
  me.reliability = false;
  start_messaging(&edge, &me);
  char why[128];
  assert_int_equal(ld_messaging_subscribe(edge.m, CONTENT, why, sizeof why), 0);
  uint64_t deadline = ld_now_ms() + STEP_MS;
  for (int i = 0; edge.sink.received == 0 && ld_now_ms() < deadline; i++) {
    rationed_push(&svc, i);
    nh_run_for(&g_loop, 250);
  }
  assert_true(edge.sink.received >= 1);
  ld_filter_server_stats_t st;
  ld_filter_server_get_stats(svc.srv, &st);
  assert_true(st.status_too_many_requests >= 1);

  stop_peer(&edge);
  rationed_stop(&svc);
}

static int setup(void **state) {
  (void)state;
  uv_loop_init(&g_loop);
  return 0;
}

static int teardown(void **state) {
  (void)state;
  uv_run(&g_loop, UV_RUN_NOWAIT);
  return 0;
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(core_send_is_received_once_and_confirmed),
      cmocka_unit_test(ephemeral_and_reliability_off_end_at_propagation),
      cmocka_unit_test(an_isolated_node_fails_after_the_window_and_refuses_oversize),
      cmocka_unit_test(edge_sends_by_lightpush_and_receives_by_filter),
      cmocka_unit_test(a_receiver_back_online_recovers_missed_messages),
      cmocka_unit_test(store_reliability_confirms_and_recovers),
      cmocka_unit_test(a_service_that_never_relays_is_retried_with_back_off),
      cmocka_unit_test(a_store_error_answer_does_not_disqualify_the_store_peer),
      cmocka_unit_test(a_rate_limited_filter_service_is_asked_again),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
