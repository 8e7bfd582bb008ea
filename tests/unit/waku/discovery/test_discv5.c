/* The discv5 engine over an in-memory network with a simulated clock: handshakes in both roles,
 * requests and answers, NODES splitting and checking, lookups, liveness, ENR updates, rate
 * limits and caps. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "base/error.h"
#include "discv5_sim.h"
#include "waku/discovery/discv5.h"
#include "waku/discovery/discv5_internal.h"

static ld_discv5_config_t base_config(void) {
  ld_discv5_config_t cfg;
  ld_discv5_config_default(&cfg);
  return cfg;
}

/* Makes a node `seen` in another's table (added, and answered a ping), unless its bucket is
 * full (then it waits among the replacements). Returns whether it is a member. */
static bool know(sim_t *s, size_t who, size_t whom) {
  int rc = ld_discv5_add_enr(s->nodes[who].d, &s->nodes[whom].enr, false, s->now);
  assert_true(rc >= 0);
  assert_int_equal(ld_discv5_ping(s->nodes[who].d, &s->nodes[whom].enr, s->now, NULL), 0);
  sim_deliver(s);
  const ld_discv5_node_t *n =
      ld_discv5_table_get(ld_discv5_table(s->nodes[who].d), s->nodes[whom].id);
  if (rc == LD_DISCV5_REPLACEMENT) {
    assert_null(n);
    return false;
  }
  assert_non_null(n);
  assert_true(n->seen);
  return true;
}

static void ping_pong_and_handshake_roles(void **state) {
  (void)state;
  ld_discv5_config_t cfg = base_config();
  sim_t *s = sim_new(2, &cfg, 1);
  sim_node_t *a = &s->nodes[0], *b = &s->nodes[1];
  uint64_t handle = 0;
  assert_int_equal(ld_discv5_ping(a->d, &b->enr, s->now, &handle), 0);
  assert_int_equal(ld_discv5_requests(a->d), 1);
  sim_deliver(s);
  /* A: random packet → WHOAREYOU → handshake with PING → PONG. */
  assert_int_equal(a->pongs, 1);
  assert_true(a->last_pong.request == handle);
  assert_int_equal(a->last_pong.enr_seq, 1);
  assert_true(ld_discv5_addr_equal(&a->last_pong.observed, &a->addr));
  assert_int_equal(a->sessions, 1);
  assert_int_equal(b->sessions, 1);
  assert_int_equal(ld_discv5_requests(a->d), 0);
  assert_int_equal(ld_discv5_sessions(a->d), 1);
  assert_int_equal(ld_discv5_sessions(b->d), 1);
  assert_int_equal(ld_discv5_challenges(b->d), 0);
  ld_discv5_stats_t st;
  ld_discv5_get_stats(b->d, &st);
  assert_int_equal(st.whoareyou_sent, 1);
  assert_int_equal(st.handshakes_ok, 1);
  /* B knew nothing of A: A's record came in the handshake, at the address it came from, so A
   * joined B's table, and B pings it back within ping_back_max_ms over the same session. */
  assert_non_null(ld_discv5_table_get(ld_discv5_table(b->d), a->id));
  assert_int_equal(b->added, 1);
  sim_run(s, cfg.ping_back_max_ms + 1);
  const ld_discv5_node_t *in_b = ld_discv5_table_get(ld_discv5_table(b->d), a->id);
  assert_non_null(in_b);
  assert_true(in_b->seen);
  assert_int_equal(b->sessions, 1); /* no second handshake */
  /* A second ping rides the session: no WHOAREYOU. */
  assert_int_equal(ld_discv5_ping(a->d, &b->enr, s->now, NULL), 0);
  sim_deliver(s);
  assert_int_equal(a->pongs, 2);
  ld_discv5_get_stats(b->d, &st);
  assert_int_equal(st.whoareyou_sent, 1);
  sim_free(s);
}

/* Counts the records in the handshake packets B receives. */
static size_t g_handshakes_with_record, g_handshakes_without_record;

static bool inspect_handshakes(sim_t *s, const sim_packet_t *p) {
  sim_node_t *to = sim_find(s, &p->to);
  ld_discv5_packet_t pkt;
  if (to != NULL &&
      ld_discv5_packet_decode(&pkt, LD_DISCV5_PROTOCOL_ID_WAKU, to->id, p->data, p->len) == 0 &&
      pkt.flag == LD_DISCV5_FLAG_HANDSHAKE) {
    if (pkt.record != NULL)
      g_handshakes_with_record++;
    else
      g_handshakes_without_record++;
  }
  return true;
}

/* The WHOAREYOU carries the seq of the record B holds; A sends its record only when newer. */
static void record_sent_only_when_newer(void **state) {
  (void)state;
  ld_discv5_config_t cfg = base_config();
  sim_t *s = sim_new(2, &cfg, 2);
  s->on_packet = inspect_handshakes;
  g_handshakes_with_record = g_handshakes_without_record = 0;
  sim_node_t *a = &s->nodes[0], *b = &s->nodes[1];
  /* B holds A's record (seq 1): no record in the handshake. */
  assert_true(ld_discv5_add_enr(b->d, &a->enr, false, s->now) >= 0);
  assert_int_equal(ld_discv5_ping(a->d, &b->enr, s->now, NULL), 0);
  sim_deliver(s);
  assert_int_equal(a->pongs, 1);
  assert_int_equal(g_handshakes_without_record, 1);
  assert_int_equal(g_handshakes_with_record, 0);
  /* A third node C unknown to B: its record comes along. */
  sim_free(s);
  s = sim_new(3, &cfg, 2);
  s->on_packet = inspect_handshakes;
  g_handshakes_with_record = g_handshakes_without_record = 0;
  assert_int_equal(ld_discv5_ping(s->nodes[2].d, &s->nodes[1].enr, s->now, NULL), 0);
  sim_deliver(s);
  assert_int_equal(s->nodes[2].pongs, 1);
  assert_int_equal(g_handshakes_with_record, 1);
  assert_int_equal(g_handshakes_without_record, 0);
  sim_free(s);
}

/* Requests made while a handshake is under way wait for it, then all go out. */
static void requests_queue_behind_a_handshake(void **state) {
  (void)state;
  ld_discv5_config_t cfg = base_config();
  sim_t *s = sim_new(2, &cfg, 3);
  sim_node_t *a = &s->nodes[0], *b = &s->nodes[1];
  uint16_t dist0 = 0;
  for (int i = 0; i < 3; i++)
    assert_int_equal(ld_discv5_ping(a->d, &b->enr, s->now, NULL), 0);
  assert_int_equal(ld_discv5_findnode(a->d, &b->enr, &dist0, 1, s->now, NULL), 0);
  assert_int_equal(ld_discv5_requests(a->d), 4);
  sim_deliver(s);
  assert_int_equal(a->pongs, 3);
  assert_int_equal(a->last_nodes_count, 1); /* distance 0: B's own record */
  assert_memory_equal(a->last_nodes[0].raw, b->enr.raw, b->enr.len);
  assert_int_equal(a->sessions, 1);
  ld_discv5_stats_t st;
  ld_discv5_get_stats(b->d, &st);
  assert_int_equal(st.whoareyou_sent, 1);
  assert_int_equal(ld_discv5_requests(a->d), 0);
  /* The queue holds LD_DISCV5_MAX_QUEUED per peer. */
  sim_node_t *c = NULL;
  sim_free(s);
  s = sim_new(3, &cfg, 3);
  a = &s->nodes[0];
  c = &s->nodes[2];
  assert_int_equal(ld_discv5_ping(a->d, &c->enr, s->now, NULL), 0);
  for (int i = 0; i < LD_DISCV5_MAX_QUEUED; i++)
    assert_int_equal(ld_discv5_ping(a->d, &c->enr, s->now, NULL), 0);
  assert_int_equal(ld_discv5_ping(a->d, &c->enr, s->now, NULL), LD_ERR_LIMIT);
  sim_deliver(s);
  assert_int_equal(a->pongs, 1 + LD_DISCV5_MAX_QUEUED);
  sim_free(s);
}

/* A peer that lost its session answers with WHOAREYOU; the request goes again as a handshake. */
static void session_loss_rehandshakes(void **state) {
  (void)state;
  ld_discv5_config_t cfg = base_config();
  sim_t *s = sim_new(2, &cfg, 4);
  sim_node_t *a = &s->nodes[0], *b = &s->nodes[1];
  assert_int_equal(ld_discv5_ping(a->d, &b->enr, s->now, NULL), 0);
  sim_deliver(s);
  assert_int_equal(a->pongs, 1);
  /* B restarts: same key and record, no sessions. */
  ld_discv5_free(b->d);
  ld_discv5_config_t c2 = cfg;
  c2.key = &b->key;
  c2.enr = &b->enr;
  ld_discv5_callbacks_t cb = {sim_send, sim_event};
  b->d = ld_discv5_new(&c2, &cb, b, s->now);
  assert_non_null(b->d);
  assert_int_equal(ld_discv5_ping(a->d, &b->enr, s->now, NULL), 0);
  sim_deliver(s);
  assert_int_equal(a->pongs, 2);
  assert_int_equal(a->sessions, 2);
  ld_discv5_stats_t st;
  ld_discv5_get_stats(b->d, &st);
  assert_int_equal(st.whoareyou_sent, 1);
  assert_int_equal(st.handshakes_ok, 1);
  sim_free(s);
}

static void unanswered_request_times_out(void **state) {
  (void)state;
  ld_discv5_config_t cfg = base_config();
  sim_t *s = sim_new(3, &cfg, 5);
  sim_node_t *a = &s->nodes[0], *b = &s->nodes[1], *c = &s->nodes[2];
  b->down = true;
  assert_true(ld_discv5_add_enr(a->d, &b->enr, false, s->now) >= 0);
  assert_true(ld_discv5_add_enr(a->d, &c->enr, true, s->now) >= 0);
  uint64_t hb = 0;
  assert_int_equal(ld_discv5_ping(a->d, &b->enr, s->now, &hb), 0);
  sim_run(s, cfg.request_timeout_ms - 1);
  assert_int_equal(a->failures, 0);
  sim_run(s, 1);
  assert_int_equal(a->failures, 1);
  assert_int_equal(a->last_error, LD_ERR_TIMEOUT);
  /* A node that fails is replaced (here: removed, no replacement) ... */
  assert_null(ld_discv5_table_get(ld_discv5_table(a->d), b->id));
  /* ... but a bootstrap node stays. */
  c->down = true;
  assert_int_equal(ld_discv5_ping(a->d, &c->enr, s->now, NULL), 0);
  sim_run(s, cfg.request_timeout_ms);
  assert_int_equal(a->failures, 2);
  assert_non_null(ld_discv5_table_get(ld_discv5_table(a->d), c->id));
  ld_discv5_stats_t st;
  ld_discv5_get_stats(a->d, &st);
  assert_true(st.requests_timed_out >= 2);
  sim_free(s);
}

/* Liveness: the table pings its nodes; one that went away is replaced from the cache. */
static void revalidation_replaces_dead_nodes(void **state) {
  (void)state;
  ld_discv5_config_t cfg = base_config();
  cfg.revalidate_max_ms = 1000;
  sim_t *s = sim_new(2, &cfg, 6);
  sim_node_t *a = &s->nodes[0], *b = &s->nodes[1];
  know(s, 0, 1);
  b->down = true;
  sim_run(s, 30000);
  assert_null(ld_discv5_table_get(ld_discv5_table(a->d), b->id));
  assert_int_equal(ld_discv5_table_size(ld_discv5_table(a->d)), 0);
  sim_free(s);
}

/* FINDNODE answers: our record for 0, seen nodes at the asked distances, nothing for > 256,
 * and many records over several packets of at most 1280 bytes. */
static size_t g_max_packet;
static size_t g_nodes_packets;

static bool measure(sim_t *s, const sim_packet_t *p) {
  (void)s;
  if (p->len > g_max_packet)
    g_max_packet = p->len;
  sim_node_t *to = sim_find(s, &p->to);
  ld_discv5_packet_t pkt;
  if (to != NULL &&
      ld_discv5_packet_decode(&pkt, LD_DISCV5_PROTOCOL_ID_WAKU, to->id, p->data, p->len) == 0 &&
      pkt.flag == LD_DISCV5_FLAG_MESSAGE && p->len > 400)
    g_nodes_packets++;
  return true;
}

static void findnode_answers(void **state) {
  (void)state;
  ld_discv5_config_t cfg = base_config();
  cfg.revalidate_max_ms = 1000000; /* keep the tables as they are built here */
  enum { N = 40 };
  sim_t *s = sim_new(N, &cfg, 7);
  sim_node_t *a = &s->nodes[0], *b = &s->nodes[1];
  /* Every distance B holds members at. */
  uint16_t dists[LD_DISCV5_BUCKETS];
  size_t nd = 0;
  bool have[LD_DISCV5_BUCKETS + 1] = {false};
  size_t expected = 0;
  for (size_t i = 2; i < N; i++) {
    if (!know(s, 1, i))
      continue;
    expected++;
    int dd = ld_discv5_log_distance(b->id, s->nodes[i].id);
    if (!have[dd]) {
      have[dd] = true;
      dists[nd++] = (uint16_t)dd;
    }
  }
  assert_true(expected > LD_DISCV5_MAX_NODES_RESULT);
  if (expected > LD_DISCV5_MAX_NODES_RESULT)
    expected = LD_DISCV5_MAX_NODES_RESULT;
  g_max_packet = 0;
  g_nodes_packets = 0;
  s->on_packet = measure;
  assert_int_equal(ld_discv5_findnode(a->d, &b->enr, dists, nd, s->now, NULL), 0);
  sim_deliver(s);
  assert_int_equal(a->last_nodes_count, expected);
  assert_true(g_max_packet <= LD_DISCV5_MAX_PACKET);
  assert_true(g_nodes_packets >= 2); /* 16 records of ~100 bytes do not fit one packet */
  for (size_t i = 0; i < a->last_nodes_count; i++) {
    uint8_t id[32];
    assert_int_equal(ld_enr_node_id(&a->last_nodes[i], id), 0);
    assert_true(have[ld_discv5_log_distance(b->id, id)]);
  }
  /* Distance 0: B's record. Distance 257: nothing. A distance without nodes: nothing. */
  uint16_t zero = 0, too_far = 257;
  assert_int_equal(ld_discv5_findnode(a->d, &b->enr, &zero, 1, s->now, NULL), 0);
  sim_deliver(s);
  assert_int_equal(a->last_nodes_count, 1);
  assert_memory_equal(a->last_nodes[0].raw, b->enr.raw, b->enr.len);
  a->last_nodes_count = 99;
  assert_int_equal(ld_discv5_findnode(a->d, &b->enr, &too_far, 1, s->now, NULL), 0);
  sim_deliver(s);
  assert_int_equal(a->last_nodes_count, 0);
  sim_free(s);
}

/* Records that B serves from its table are checked by A: forged, at another distance than
 * asked, duplicated, or claiming a loopback address from a site-local sender: all dropped. B's
 * table is made to serve them by filing records under made-up IDs at the asked distance. */
static void serve_under(ld_discv5_table_t *t, const uint8_t *raw, size_t len, const uint8_t *id,
                        uint8_t flip) {
  ld_discv5_node_t n;
  memset(&n, 0, sizeof n);
  memcpy(n.id, id, 32);
  n.id[31] ^= flip;
  n.addr.ip_len = 4;
  n.addr.ip[0] = 10;
  n.addr.port = 1;
  n.seen = true;
  n.enr_len = (uint16_t)len;
  memcpy(n.enr, raw, len);
  assert_int_equal(ld_discv5_table_add(t, &n), LD_DISCV5_ADDED);
}

static void nodes_answers_are_checked(void **state) {
  (void)state;
  ld_discv5_config_t cfg = base_config();
  cfg.revalidate_max_ms = 1000000;
  enum { N = 8 };
  sim_t *s = sim_new(N, &cfg, 8);
  sim_node_t *a = &s->nodes[0], *b = &s->nodes[1];
  ld_discv5_table_t *bt = ld_discv5_table(b->d);
  assert_true(know(s, 1, 2));
  ld_discv5_node_t good = *ld_discv5_table_get(bt, s->nodes[2].id);
  int dist = ld_discv5_log_distance(b->id, good.id);
  size_t other = 0;
  for (size_t i = 3; i < N && other == 0; i++)
    if (ld_discv5_log_distance(b->id, s->nodes[i].id) != dist)
      other = i;
  assert_true(other != 0);
  /* Forged: another node's record with a flipped signature byte. */
  ld_enr_t forged = s->nodes[other].enr;
  forged.raw[5] ^= 1;
  serve_under(bt, forged.raw, forged.len, good.id, 1);
  /* Valid, but at another distance than asked. */
  serve_under(bt, s->nodes[other].enr.raw, s->nodes[other].enr.len, good.id, 2);
  /* The good record a second time. */
  serve_under(bt, good.enr, good.enr_len, good.id, 3);
  /* A valid record at the asked distance, announcing 127.0.0.1, from a site-local sender. */
  ld_privkey_t key;
  ld_enr_t loop;
  ld_discv5_addr_t lo = {.ip_len = 4, .ip = {127, 0, 0, 1}, .port = 9000};
  uint8_t loop_id[32];
  size_t tries = 0;
  do {
    assert_int_equal(sim_make_enr(1000 + tries, 8, &lo, &key, &loop), 0);
    assert_int_equal(ld_enr_node_id(&loop, loop_id), 0);
  } while (ld_discv5_log_distance(b->id, loop_id) != dist && ++tries < 1000);
  assert_true(tries < 1000);
  serve_under(bt, loop.raw, loop.len, good.id, 4);
  uint16_t d16 = (uint16_t)dist;
  assert_int_equal(ld_discv5_findnode(a->d, &b->enr, &d16, 1, s->now, NULL), 0);
  sim_deliver(s);
  assert_int_equal(a->last_nodes_count, 1);
  assert_memory_equal(a->last_nodes[0].raw, good.enr, good.enr_len);
  ld_discv5_stats_t st;
  ld_discv5_get_stats(a->d, &st);
  assert_int_equal(st.nodes_records_dropped, 4);
  sim_free(s);
}

/* TALKREQ reaches the event handler, whose reply comes back; unanswered: empty. */
static void on_talkreq(sim_node_t *n, ld_discv5_event_t *ev) {
  static uint8_t reply[64];
  (void)n;
  if (ev->type == LD_DISCV5_EV_TALKREQ && ev->protocol_len == 4 &&
      memcmp(ev->protocol, "echo", 4) == 0) {
    memcpy(reply, ev->payload, ev->payload_len);
    ev->reply = reply;
    ev->reply_len = ev->payload_len;
  }
}

static void talk_requests(void **state) {
  (void)state;
  ld_discv5_config_t cfg = base_config();
  sim_t *s = sim_new(2, &cfg, 9);
  s->on_event = on_talkreq;
  sim_node_t *a = &s->nodes[0], *b = &s->nodes[1];
  assert_int_equal(ld_discv5_talkreq(a->d, &b->enr, (const uint8_t *)"echo", 4,
                                     (const uint8_t *)"hi", 2, s->now, NULL),
                   0);
  sim_deliver(s);
  assert_true(a->talkresp_seen);
  assert_int_equal(a->last_talkresp_len, 2);
  assert_memory_equal(a->last_talkresp, "hi", 2);
  a->talkresp_seen = false;
  assert_int_equal(ld_discv5_talkreq(a->d, &b->enr, (const uint8_t *)"nope", 4,
                                     (const uint8_t *)"hi", 2, s->now, NULL),
                   0);
  sim_deliver(s);
  assert_true(a->talkresp_seen);
  assert_int_equal(a->last_talkresp_len, 0);
  uint8_t big[1000] = {0};
  assert_int_equal(
      ld_discv5_talkreq(a->d, &b->enr, (const uint8_t *)"echo", 4, big, sizeof big, s->now, NULL),
      LD_ERR_TOO_LARGE);
  sim_free(s);
}

/* Lookups on a network where every node starts knowing only node 0. */
static void lookups_converge(void **state) {
  (void)state;
  ld_discv5_config_t cfg = base_config();
  enum { N = 60 };
  sim_t *s = sim_new(N, &cfg, 10);
  for (size_t i = 1; i < N; i++)
    assert_true(ld_discv5_add_enr(s->nodes[i].d, &s->nodes[0].enr, true, s->now) >= 0);
  /* The first node added makes each engine populate its table (a self and a random lookup):
   * node 0 answers them with the nodes it has seen, none yet. Node 0 pings back every node
   * whose handshake carried its record; then a round of random lookups (what the Waku search
   * loop runs every few seconds) fills the tables. */
  sim_run(s, cfg.ping_back_max_ms + 1000);
  size_t per_distance[LD_DISCV5_BUCKETS + 1] = {0}, fit = 0;
  for (size_t i = 1; i < N; i++)
    per_distance[ld_discv5_log_distance(s->nodes[0].id, s->nodes[i].id)]++;
  for (size_t dd = 1; dd <= LD_DISCV5_BUCKETS; dd++)
    fit += per_distance[dd] < LD_DISCV5_BUCKET_SIZE ? per_distance[dd] : LD_DISCV5_BUCKET_SIZE;
  assert_int_equal(ld_discv5_table_size(ld_discv5_table(s->nodes[0].d)), fit);
  for (int round = 0; round < 3; round++) {
    for (size_t i = 1; i < N; i++)
      assert_int_equal(ld_discv5_lookup(s->nodes[i].d, NULL, s->now, NULL), 0);
    sim_run(s, 10000);
  }
  size_t total = 0;
  for (size_t i = 0; i < N; i++) {
    size_t n = ld_discv5_table_size(ld_discv5_table(s->nodes[i].d));
    assert_true(n >= 5);
    total += n;
    assert_true(s->nodes[i].lookups_done >= (i == 0 ? 0u : 2u));
  }
  assert_true(total / N >= 15);
  /* A lookup from node 7 for node 42's ID finds node 42 among the closest. */
  uint64_t handle;
  size_t before = s->nodes[7].lookups_done;
  assert_int_equal(ld_discv5_lookup(s->nodes[7].d, s->nodes[42].id, s->now, &handle), 0);
  sim_run(s, 20000);
  assert_int_equal(s->nodes[7].lookups_done, before + 1);
  ld_discv5_node_t *closest[1];
  assert_int_equal(ld_discv5_table_neighbours(ld_discv5_table(s->nodes[7].d), s->nodes[42].id, 1,
                                              false, closest),
                   1);
  assert_memory_equal(closest[0]->id, s->nodes[42].id, 32);
  assert_int_equal(ld_discv5_lookups(s->nodes[7].d), 0);
  assert_int_equal(ld_discv5_requests(s->nodes[7].d), 0);
  sim_free(s);
}

/* A lookup with an empty table ends at once. */
static void lookup_on_empty_table(void **state) {
  (void)state;
  ld_discv5_config_t cfg = base_config();
  sim_t *s = sim_new(1, &cfg, 11);
  uint64_t h;
  assert_int_equal(ld_discv5_lookup(s->nodes[0].d, NULL, s->now, &h), 0);
  assert_int_equal(s->nodes[0].lookups_done, 1);
  assert_int_equal(ld_discv5_lookups(s->nodes[0].d), 0);
  sim_free(s);
}

/* Our record: set_enr rules, and peers pick up a higher seq through PONG → FINDNODE [0]. */
static void enr_seq_bump_propagates(void **state) {
  (void)state;
  ld_discv5_config_t cfg = base_config();
  cfg.revalidate_max_ms = 1000;
  sim_t *s = sim_new(2, &cfg, 12);
  sim_node_t *a = &s->nodes[0], *b = &s->nodes[1];
  know(s, 1, 0);
  ld_enr_builder_t bld;
  ld_enr_builder_init(&bld, 1);
  ld_enr_builder_set_ip4(&bld, a->addr.ip);
  ld_enr_builder_set_uint(&bld, "udp", a->addr.port);
  ld_enr_builder_set_waku2(&bld, 0x01);
  ld_enr_t same_seq, newer;
  assert_int_equal(ld_enr_builder_sign(&bld, &a->key, &same_seq), 0);
  assert_int_equal(ld_discv5_set_enr(a->d, &same_seq), LD_ERR_STATE);
  assert_int_equal(ld_discv5_set_enr(a->d, &b->enr), LD_ERR_INVALID_ARG);
  bld.seq = 2;
  assert_int_equal(ld_enr_builder_sign(&bld, &a->key, &newer), 0);
  assert_int_equal(ld_discv5_set_enr(a->d, &newer), 0);
  assert_int_equal(a->enr_updates, 1);
  assert_int_equal(ld_discv5_local_enr(a->d)->seq, 2);
  /* B's liveness pings reach A, whose PONG says seq 2: B fetches the record. */
  sim_run(s, 20000);
  const ld_discv5_node_t *in_b = ld_discv5_table_get(ld_discv5_table(b->d), a->id);
  assert_non_null(in_b);
  assert_int_equal(in_b->seq, 2);
  assert_int_equal(in_b->enr_len, newer.len);
  assert_memory_equal(in_b->enr, newer.raw, newer.len);
  sim_free(s);
}

/* A node announcing a wrong address learns the right one from PONG votes. */
static void enr_auto_update_from_votes(void **state) {
  (void)state;
  ld_discv5_config_t cfg = base_config();
  cfg.ip_vote_threshold = 3;
  cfg.enr_auto_update = true;
  enum { N = 5 };
  sim_t *s = sim_new(N, &cfg, 13);
  sim_node_t *x = &s->nodes[0];
  /* X restarts announcing 10.99.99.99:1234. */
  ld_discv5_addr_t wrong = {.ip_len = 4, .ip = {10, 99, 99, 99}, .port = 1234};
  ld_enr_t wrong_enr;
  assert_int_equal(sim_make_enr(0, 13, &wrong, &x->key, &wrong_enr), 0);
  ld_discv5_free(x->d);
  ld_discv5_config_t c2 = cfg;
  c2.key = &x->key;
  c2.enr = &wrong_enr;
  ld_discv5_callbacks_t cb = {sim_send, sim_event};
  x->d = ld_discv5_new(&c2, &cb, x, s->now);
  for (size_t i = 1; i < 3; i++) {
    assert_int_equal(ld_discv5_ping(x->d, &s->nodes[i].enr, s->now, NULL), 0);
    sim_deliver(s);
  }
  assert_int_equal(x->enr_updates, 0); /* two votes, threshold three */
  assert_int_equal(ld_discv5_ping(x->d, &s->nodes[3].enr, s->now, NULL), 0);
  sim_deliver(s);
  assert_int_equal(x->enr_updates, 1);
  const ld_enr_t *now_enr = ld_discv5_local_enr(x->d);
  assert_int_equal(now_enr->seq, 2);
  ld_discv5_addr_t got;
  assert_int_equal(ld_discv5_addr_from_enr(now_enr, &got), 0);
  assert_true(ld_discv5_addr_equal(&got, &x->addr));
  /* Without auto-update the record stays. */
  sim_free(s);
  cfg.enr_auto_update = false;
  s = sim_new(N, &cfg, 13);
  x = &s->nodes[0];
  ld_discv5_free(x->d);
  c2 = cfg;
  c2.key = &x->key;
  c2.enr = &wrong_enr;
  x->d = ld_discv5_new(&c2, &cb, x, s->now);
  for (size_t i = 1; i < N; i++) {
    assert_int_equal(ld_discv5_ping(x->d, &s->nodes[i].enr, s->now, NULL), 0);
    sim_deliver(s);
  }
  assert_int_equal(x->enr_updates, 0);
  assert_int_equal(ld_discv5_local_enr(x->d)->seq, 1);
  sim_free(s);
}

/* Packets that are not ours (another protocol-id) are dropped, not answered. */
static void protocol_ids_do_not_mix(void **state) {
  (void)state;
  ld_discv5_config_t cfg = base_config();
  sim_t *s = sim_new(2, &cfg, 14);
  sim_node_t *a = &s->nodes[0], *b = &s->nodes[1];
  ld_discv5_free(a->d);
  ld_discv5_config_t eth = cfg;
  eth.protocol_id = LD_DISCV5_PROTOCOL_ID_ETH;
  eth.key = &a->key;
  eth.enr = &a->enr;
  ld_discv5_callbacks_t cb = {sim_send, sim_event};
  a->d = ld_discv5_new(&eth, &cb, a, s->now);
  assert_int_equal(ld_discv5_ping(a->d, &b->enr, s->now, NULL), 0);
  sim_deliver(s);
  ld_discv5_stats_t st;
  ld_discv5_get_stats(b->d, &st);
  assert_int_equal(st.dropped_malformed, 1);
  assert_int_equal(st.whoareyou_sent, 0);
  assert_int_equal(a->pongs, 0);
  sim_free(s);
}

/* ---- floods and caps ------------------------------------------------------------------------ */

static void undecryptable_flood_is_rate_limited(void **state) {
  (void)state;
  ld_discv5_config_t cfg = base_config();
  sim_t *s = sim_new(1, &cfg, 15);
  sim_node_t *b = &s->nodes[0];
  ld_discv5_addr_t attacker = {.ip_len = 4, .ip = {192, 0, 2, 1}, .port = 1};
  /* 200 packets from one IP, each from another node ID and port. */
  for (int i = 0; i < 200; i++) {
    uint8_t src[32], iv[16], nonce[12], filler[20], pkt[LD_DISCV5_MAX_PACKET];
    size_t len;
    memset(src, i, sizeof src);
    memset(iv, i, sizeof iv);
    memset(nonce, i, sizeof nonce);
    memset(filler, 0, sizeof filler);
    assert_int_equal(ld_discv5_packet_encode(pkt, &len, LD_DISCV5_PROTOCOL_ID_WAKU, b->id, iv,
                                             LD_DISCV5_FLAG_MESSAGE, nonce, src, 32, NULL, filler,
                                             sizeof filler, NULL, NULL),
                     0);
    attacker.port = (uint16_t)(1000 + i);
    assert_int_equal(ld_discv5_receive(b->d, &attacker, pkt, len, s->now), 0);
  }
  ld_discv5_stats_t st;
  ld_discv5_get_stats(b->d, &st);
  assert_int_equal(st.whoareyou_sent, cfg.whoareyou_burst);
  assert_int_equal(st.whoareyou_rate_limited, 200 - cfg.whoareyou_burst);
  assert_int_equal(ld_discv5_challenges(b->d), cfg.whoareyou_burst);
  /* One second later the bucket has refilled by the rate. */
  s->now += 1000;
  ld_discv5_handle_timeout(b->d, s->now); /* the challenges expire after 2 s; not yet */
  for (int i = 0; i < 50; i++) {
    uint8_t src[32], iv[16], nonce[12], filler[20] = {0}, pkt[LD_DISCV5_MAX_PACKET];
    size_t len;
    memset(src, 200 + i, sizeof src);
    memset(iv, 1, sizeof iv);
    memset(nonce, 2, sizeof nonce);
    ld_discv5_packet_encode(pkt, &len, LD_DISCV5_PROTOCOL_ID_WAKU, b->id, iv,
                            LD_DISCV5_FLAG_MESSAGE, nonce, src, 32, NULL, filler, sizeof filler,
                            NULL, NULL);
    ld_discv5_receive(b->d, &attacker, pkt, len, s->now);
  }
  ld_discv5_get_stats(b->d, &st);
  assert_int_equal(st.whoareyou_sent, cfg.whoareyou_burst + cfg.whoareyou_rate);
  /* Challenges expire. */
  s->now += cfg.handshake_timeout_ms;
  ld_discv5_handle_timeout(b->d, s->now);
  assert_int_equal(ld_discv5_challenges(b->d), 0);
  /* Another IP is not affected. */
  sim_free(s);
}

static void findnode_flood_is_rate_limited(void **state) {
  (void)state;
  ld_discv5_config_t cfg = base_config();
  sim_t *s = sim_new(2, &cfg, 16);
  sim_node_t *a = &s->nodes[0], *b = &s->nodes[1];
  uint16_t zero = 0;
  /* One handshake first (a PING), then 100 FINDNODE at the same instant. */
  assert_int_equal(ld_discv5_ping(a->d, &b->enr, s->now, NULL), 0);
  sim_deliver(s);
  ld_discv5_config_t big = cfg;
  (void)big;
  size_t answered = 0;
  for (int round = 0; round < 4; round++) {
    for (int i = 0; i < 25; i++)
      assert_int_equal(ld_discv5_findnode(a->d, &b->enr, &zero, 1, s->now, NULL), 0);
    sim_deliver(s);
  }
  ld_discv5_stats_t st;
  ld_discv5_get_stats(b->d, &st);
  answered = st.findnode_answered;
  assert_int_equal(answered, cfg.findnode_burst);
  assert_int_equal(st.findnode_rate_limited, 100 - cfg.findnode_burst);
  sim_run(s, cfg.request_timeout_ms + 1);
  ld_discv5_get_stats(a->d, &st);
  assert_int_equal(st.requests_timed_out, 100 - cfg.findnode_burst);
  sim_free(s);
}

static void sessions_are_lru_bounded(void **state) {
  (void)state;
  ld_discv5_config_t cfg = base_config();
  cfg.max_sessions = 4;
  enum { N = 8 };
  sim_t *s = sim_new(N, &cfg, 17);
  for (size_t i = 1; i < N; i++) {
    assert_int_equal(ld_discv5_ping(s->nodes[0].d, &s->nodes[i].enr, s->now, NULL), 0);
    sim_deliver(s);
    assert_true(ld_discv5_sessions(s->nodes[0].d) <= 4);
  }
  assert_int_equal(s->nodes[0].pongs, N - 1);
  assert_int_equal(ld_discv5_sessions(s->nodes[0].d), 4);
  /* The evicted session to node 1 is simply made again. */
  assert_int_equal(ld_discv5_ping(s->nodes[0].d, &s->nodes[1].enr, s->now, NULL), 0);
  sim_deliver(s);
  assert_int_equal(s->nodes[0].pongs, N);
  sim_free(s);
}

static void requests_are_bounded(void **state) {
  (void)state;
  ld_discv5_config_t cfg = base_config();
  cfg.max_requests = 3;
  sim_t *s = sim_new(4, &cfg, 18);
  for (size_t i = 1; i < 4; i++)
    assert_int_equal(ld_discv5_ping(s->nodes[0].d, &s->nodes[i].enr, s->now, NULL), 0);
  assert_int_equal(ld_discv5_ping(s->nodes[0].d, &s->nodes[1].enr, s->now, NULL), LD_ERR_LIMIT);
  sim_deliver(s);
  assert_int_equal(s->nodes[0].pongs, 3);
  assert_int_equal(ld_discv5_requests(s->nodes[0].d), 0);
  sim_free(s);
}

/* A handshake packet with a bad ID signature gets no session, and spends the challenge. */
static sim_packet_t g_captured;
static bool g_capture;

static bool capture_handshake(sim_t *s, const sim_packet_t *p) {
  sim_node_t *to = sim_find(s, &p->to);
  ld_discv5_packet_t pkt;
  if (g_capture && to != NULL &&
      ld_discv5_packet_decode(&pkt, LD_DISCV5_PROTOCOL_ID_WAKU, to->id, p->data, p->len) == 0 &&
      pkt.flag == LD_DISCV5_FLAG_HANDSHAKE) {
    g_captured = *p;
    return false; /* held back */
  }
  return true;
}

static void forged_handshakes_fail(void **state) {
  (void)state;
  ld_discv5_config_t cfg = base_config();
  sim_t *s = sim_new(2, &cfg, 19);
  sim_node_t *a = &s->nodes[0], *b = &s->nodes[1];
  s->on_packet = capture_handshake;
  g_capture = true;
  assert_int_equal(ld_discv5_ping(a->d, &b->enr, s->now, NULL), 0);
  sim_deliver(s);
  assert_int_equal(ld_discv5_challenges(b->d), 1);
  /* Flip a byte of the ID signature: unmask, patch, remask. */
  sim_packet_t bad = g_captured;
  ld_discv5_packet_t pkt;
  assert_int_equal(
      ld_discv5_packet_decode(&pkt, LD_DISCV5_PROTOCOL_ID_WAKU, b->id, bad.data, bad.len), 0);
  size_t sig_at = (size_t)(pkt.id_signature - pkt.ad);
  uint8_t plain[LD_DISCV5_MAX_PACKET];
  memcpy(plain, pkt.ad, pkt.ad_len);
  plain[sig_at + 10] ^= 1;
  ld_aes128_ctr(b->id, plain, plain + 16, pkt.ad_len - 16, bad.data + 16);
  assert_int_equal(ld_discv5_receive(b->d, &bad.from, bad.data, bad.len, s->now),
                   LD_ERR_BAD_SIGNATURE);
  assert_int_equal(ld_discv5_sessions(b->d), 0);
  assert_int_equal(ld_discv5_challenges(b->d), 0);
  /* The genuine packet now finds no challenge. */
  assert_int_equal(
      ld_discv5_receive(b->d, &g_captured.from, g_captured.data, g_captured.len, s->now),
      LD_ERR_NOT_FOUND);
  ld_discv5_stats_t st;
  ld_discv5_get_stats(b->d, &st);
  assert_int_equal(st.handshakes_failed, 1);
  assert_int_equal(st.handshakes_ok, 0);
  /* A's request times out; a fresh one succeeds. */
  g_capture = false;
  sim_run(s, cfg.request_timeout_ms + 1);
  assert_int_equal(a->failures, 1);
  assert_int_equal(ld_discv5_ping(a->d, &b->enr, s->now, NULL), 0);
  sim_deliver(s);
  assert_int_equal(a->pongs, 1);
  sim_free(s);
}

/* An answer from an unexpected address, or an unknown request ID, is unsolicited. */
static void unsolicited_answers_are_ignored(void **state) {
  (void)state;
  ld_discv5_config_t cfg = base_config();
  sim_t *s = sim_new(2, &cfg, 20);
  sim_node_t *a = &s->nodes[0], *b = &s->nodes[1];
  assert_int_equal(ld_discv5_ping(a->d, &b->enr, s->now, NULL), 0);
  sim_deliver(s);
  /* B sends A a PONG nobody asked for, over their session. */
  ld_discv5_msg_t pong;
  memset(&pong, 0, sizeof pong);
  pong.type = LD_DISCV5_PONG;
  pong.req_id_len = 1;
  pong.req_id[0] = 9;
  pong.ip_len = 4;
  ld_buf_t buf;
  ld_buf_init(&buf);
  assert_int_equal(ld_discv5_msg_encode(&buf, &pong), 0);
  assert_int_equal(ld_discv5_send_message(b->d, a->id, &a->addr, buf.data, buf.len), 0);
  ld_buf_clear(&buf);
  sim_deliver(s);
  ld_discv5_stats_t st;
  ld_discv5_get_stats(a->d, &st);
  assert_int_equal(st.unsolicited, 1);
  assert_int_equal(a->pongs, 1);
  sim_free(s);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(ping_pong_and_handshake_roles),
      cmocka_unit_test(record_sent_only_when_newer),
      cmocka_unit_test(requests_queue_behind_a_handshake),
      cmocka_unit_test(session_loss_rehandshakes),
      cmocka_unit_test(unanswered_request_times_out),
      cmocka_unit_test(revalidation_replaces_dead_nodes),
      cmocka_unit_test(findnode_answers),
      cmocka_unit_test(nodes_answers_are_checked),
      cmocka_unit_test(talk_requests),
      cmocka_unit_test(lookups_converge),
      cmocka_unit_test(lookup_on_empty_table),
      cmocka_unit_test(enr_seq_bump_propagates),
      cmocka_unit_test(enr_auto_update_from_votes),
      cmocka_unit_test(protocol_ids_do_not_mix),
      cmocka_unit_test(undecryptable_flood_is_rate_limited),
      cmocka_unit_test(findnode_flood_is_rate_limited),
      cmocka_unit_test(sessions_are_lru_bounded),
      cmocka_unit_test(requests_are_bounded),
      cmocka_unit_test(forged_handshakes_fail),
      cmocka_unit_test(unsolicited_answers_are_ignored),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
