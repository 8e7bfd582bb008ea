/* The Messaging API over real nodes on loopback, all in one process and one loop:
 *   - two Core nodes and a store node: a send is received once on the other node and the sender
 *     sees PROPAGATED then SENT; ephemeral and reliability-off sends end at PROPAGATED;
 *   - an isolated node: a send fails after the retry window, an oversize one with the size text;
 *   - an Edge node sends through lightpush and receives through filter via a service node;
 *   - a receiver that loses its peers reports Disconnected, misses messages, gets its static
 *     peer back and recovers them from the store, each reported once;
 *   - the store-based reliability implementation against a store node (confirm, recover,
 *     cancel). */
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
#include "node_harness.h"

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
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
