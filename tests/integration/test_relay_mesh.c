/* Waku relay between several nodes on loopback in one process. Each node is a switch with
 * identify, gossipsub, metadata (cluster 1) and relay. The nodes form a ring with chords (each
 * dials the next two), subscribe to a static shard and to an autoshard, and exchange
 * WakuMessages: every node receives every message exactly once with the hash the publisher
 * computed. A misbehaving node without relay validation sends undecodable, oversized and
 * empty-payload messages, which are rejected while its valid messages keep flowing; a node of
 * another cluster is disconnected by metadata; unsubscribing reports NotSubscribed. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <uv.h>

#include "base/buf.h"
#include "base/clock.h"
#include "base/error.h"
#include "p2p/gossipsub/service.h"
#include "p2p/identify.h"
#include "switch_harness.h"
#include "waku/core/message.h"
#include "waku/metadata/metadata.h"
#include "waku/relay/relay.h"

#define N_RELAY 6
#define WAIT_MS 15000
#define MAX_GOT 256
#define STATIC_TOPIC "/waku/2/rs/1/0"
#define CONTENT_TOPIC "/toychat/2/huilong/proto" /* shard 3 of 8 in cluster 1 */
#define AUTO_TOPIC "/waku/2/rs/1/3"
#define SMALL_MAX_MSG 1024 /* relay size cap below the gossipsub frame cap */
#define PROTECTED_TOPIC "/waku/2/rs/1/7"
/* public key of the secret 01…01 */
#define PROTECTED_KEY "031b84c5567b126440995d3ed5aaba0565d71e1834604819ff9c17f5e9d5dd078f"

typedef struct got {
  char topic[32];
  uint8_t hash[LD_WAKU_HASH_LEN];
  bool own;
  size_t payload_len;
} got_t;

typedef struct rnode {
  int index;
  ld_switch_t *sw;
  ld_identify_t *id;
  ld_gs_service_t *gs;
  ld_metadata_t *md;
  ld_relay_t *relay; /* NULL for the misbehaving node */
  ld_multiaddr_t addr;
  sh_events_t ev;
  got_t got[MAX_GOT];
  size_t n_got;
  ld_relay_health_t health_static, health_auto;
  int health_events;
  int md_rejects;
  int last_md_reject;
} rnode_t;

static uv_loop_t g_loop;
static rnode_t g_nodes[N_RELAY];
static rnode_t g_bad;   /* plain gossipsub, no relay validation, cluster 1 */
static rnode_t g_alien; /* relay node of cluster 2 */

/* ---- node assembly -------------------------------------------------------------------------- */

static void on_relay_message(ld_relay_t *r, const char *topic, const ld_waku_message_t *msg,
                             const uint8_t hash[LD_WAKU_HASH_LEN], const ld_peerid_t *from,
                             void *ud) {
  (void)r;
  rnode_t *n = ud;
  assert_true(n->n_got < MAX_GOT);
  got_t *g = &n->got[n->n_got++];
  snprintf(g->topic, sizeof g->topic, "%s", topic);
  memcpy(g->hash, hash, LD_WAKU_HASH_LEN);
  g->own = from == NULL;
  g->payload_len = msg->payload_len;
}

static void on_health(ld_relay_t *r, const char *topic, ld_relay_health_t h, void *ud) {
  (void)r;
  rnode_t *n = ud;
  n->health_events++;
  if (strcmp(topic, STATIC_TOPIC) == 0)
    n->health_static = h;
  else if (strcmp(topic, AUTO_TOPIC) == 0)
    n->health_auto = h;
}

static void on_md_rejected(ld_conn_t *c, int reason, const ld_metadata_info_t *info, void *ud) {
  (void)c;
  (void)info;
  rnode_t *n = ud;
  n->md_rejects++;
  n->last_md_reject = reason;
}

static const ld_metadata_events_t g_md_events = {.on_rejected = on_md_rejected};

static void node_start(rnode_t *n, int index, uint32_t cluster, bool with_relay) {
  memset(n, 0, sizeof *n);
  n->index = index;
  n->sw = sh_switch_new(&g_loop, NULL);
  sh_track_events(n->sw, &n->ev);
  n->id = ld_identify_new(n->sw, NULL);
  assert_non_null(n->id);
  ld_gs_service_config_t gs_cfg;
  ld_relay_gs_config(&gs_cfg, 0); /* 150 KiB frames */
  gs_cfg.params.ip_colocation_threshold = 100;
  gs_cfg.seed = 1000 + (uint64_t)index;
  int err = 0;
  n->gs = ld_gs_service_new(n->sw, n->id, &gs_cfg, &err);
  assert_non_null(n->gs);
  ld_metadata_config_t md_cfg;
  ld_metadata_config_default(&md_cfg);
  md_cfg.cluster_id = cluster;
  n->md = ld_metadata_new(n->sw, &md_cfg);
  assert_non_null(n->md);
  ld_metadata_set_events(n->md, &g_md_events, n);
  if (with_relay) {
    ld_relay_config_t cfg;
    ld_relay_config_default(&cfg);
    cfg.loop = &g_loop;
    cfg.cluster_id = (uint16_t)cluster;
    cfg.num_shards = 8;
    cfg.max_msg_size = SMALL_MAX_MSG;
    ld_relay_protected_shard_t ps;
    assert_int_equal(ld_relay_protected_shard_parse("7:" PROTECTED_KEY, &ps), 0);
    cfg.protected_shards = &ps;
    cfg.n_protected_shards = 1;
    n->relay = ld_relay_new(n->gs, &cfg, &err);
    assert_non_null(n->relay);
    static const ld_relay_events_t ev = {.on_health = on_health};
    ld_relay_set_events(n->relay, &ev, n);
    ld_metadata_set_shard_provider(n->md, ld_relay_shard_provider, n->relay);
  }
  sh_listen_local(n->sw, &n->addr);
}

static void node_stop(rnode_t *n) {
  ld_relay_free(n->relay);
  sh_switch_close(n->sw, &g_loop);
  ld_gs_service_free(n->gs);
  ld_metadata_free(n->md);
  ld_identify_free(n->id);
  n->relay = NULL;
}

static void dial(rnode_t *from, rnode_t *to) {
  int err = 0;
  ld_conn_t *c = sh_dial_wait(from->sw, &g_loop, &to->addr, &err);
  assert_int_equal(err, 0);
  assert_non_null(c);
}

/* ---- conditions ----------------------------------------------------------------------------- */

static bool meshes_formed(void *ud) {
  (void)ud;
  for (int i = 0; i < N_RELAY; i++) {
    ld_gs_service_t *gs = g_nodes[i].gs;
    if (ld_gs_service_mesh_peers(gs, STATIC_TOPIC, NULL, 0) < 2 ||
        ld_gs_service_mesh_peers(gs, AUTO_TOPIC, NULL, 0) < 2 ||
        g_nodes[i].health_static < LD_RELAY_MINIMALLY_HEALTHY ||
        g_nodes[i].health_auto < LD_RELAY_MINIMALLY_HEALTHY)
      return false;
  }
  return true;
}

static size_t count_hash(const rnode_t *n, const uint8_t hash[LD_WAKU_HASH_LEN], const char *topic,
                         bool *own) {
  size_t c = 0;
  for (size_t i = 0; i < n->n_got; i++) {
    if (memcmp(n->got[i].hash, hash, LD_WAKU_HASH_LEN) == 0 &&
        strcmp(n->got[i].topic, topic) == 0) {
      c++;
      if (own != NULL)
        *own = n->got[i].own;
    }
  }
  return c;
}

typedef struct expect {
  const uint8_t (*hashes)[LD_WAKU_HASH_LEN];
  size_t n;
  const char *topic;
} expect_t;

static bool all_received(void *ud) {
  const expect_t *e = ud;
  for (int i = 0; i < N_RELAY; i++)
    for (size_t k = 0; k < e->n; k++)
      if (count_hash(&g_nodes[i], e->hashes[k], e->topic, NULL) == 0)
        return false;
  return true;
}

/* Every node got each message exactly once; the publisher as its own. */
static void assert_exactly_once(const expect_t *e, int publisher) {
  for (int i = 0; i < N_RELAY; i++) {
    for (size_t k = 0; k < e->n; k++) {
      bool own = false;
      assert_int_equal(count_hash(&g_nodes[i], e->hashes[k], e->topic, &own), 1);
      assert_int_equal(own, i == publisher);
    }
  }
}

/* ---- messages ------------------------------------------------------------------------------- */

static ld_waku_message_t text_message(const char *content_topic, const char *text) {
  ld_waku_message_t m;
  ld_waku_message_init(&m);
  m.payload = (const uint8_t *)text;
  m.payload_len = strlen(text);
  m.content_topic = content_topic;
  m.content_topic_len = strlen(content_topic);
  return m;
}

/* ---- tests ---------------------------------------------------------------------------------- */

static void mesh_forms_and_reports_health(void **state) {
  (void)state;
  for (int i = 0; i < N_RELAY; i++) {
    rnode_t *n = &g_nodes[i];
    assert_int_equal(ld_relay_subscribe(n->relay, STATIC_TOPIC, on_relay_message, n), 0);
    assert_int_equal(ld_relay_subscribe_content_topic(n->relay, CONTENT_TOPIC, on_relay_message, n),
                     0);
    assert_int_equal(ld_relay_subscribe(n->relay, STATIC_TOPIC, on_relay_message, n),
                     LD_ERR_EXISTS);
    assert_true(ld_relay_subscribed(n->relay, AUTO_TOPIC));
    assert_int_equal(ld_relay_topic_health(n->relay, AUTO_TOPIC), LD_RELAY_UNHEALTHY);
  }
  for (int i = 0; i < N_RELAY; i++) {
    dial(&g_nodes[i], &g_nodes[(i + 1) % N_RELAY]);
    dial(&g_nodes[i], &g_nodes[(i + 2) % N_RELAY]);
  }
  assert_true(sh_run_until(&g_loop, meshes_formed, NULL, WAIT_MS));

  /* Metadata saw the relay's shards of every neighbour. */
  const ld_peerid_t *p1 = ld_switch_peer_id(g_nodes[1].sw);
  assert_true(ld_metadata_peer_on_shard(g_nodes[0].md, p1, 0));
  assert_true(ld_metadata_peer_on_shard(g_nodes[0].md, p1, 3));
  assert_false(ld_metadata_peer_on_shard(g_nodes[0].md, p1, 1));
  uint16_t shards[4];
  assert_int_equal(ld_relay_shard_provider(g_nodes[0].relay, shards, 4), 2);
  assert_int_equal(shards[0], 0);
  assert_int_equal(shards[1], 3);
}

#define N_MSGS 20

static void static_shard_messages_reach_every_node_once(void **state) {
  (void)state;
  static uint8_t hashes[N_MSGS][LD_WAKU_HASH_LEN];
  char text[N_MSGS][32];
  for (int k = 0; k < N_MSGS; k++) {
    snprintf(text[k], sizeof text[k], "static message %d", k);
    ld_waku_message_t m = text_message("/app/1/static/proto", text[k]);
    int sent = ld_relay_publish(g_nodes[0].relay, STATIC_TOPIC, &m, hashes[k]);
    assert_true(sent > 0);
    assert_true(m.timestamp == 0); /* the caller's message is left alone */
  }
  expect_t e = {(const uint8_t(*)[LD_WAKU_HASH_LEN])hashes, N_MSGS, STATIC_TOPIC};
  assert_true(sh_run_until(&g_loop, all_received, &e, WAIT_MS));
  sh_run_for(&g_loop, 300); /* late duplicates would show up now */
  assert_exactly_once(&e, 0);
  ld_relay_topic_stats_t st;
  assert_int_equal(ld_relay_topic_stats(g_nodes[0].relay, STATIC_TOPIC, &st), 0);
  assert_int_equal(st.msgs_out, N_MSGS);
  assert_int_equal(ld_relay_topic_stats(g_nodes[3].relay, STATIC_TOPIC, &st), 0);
  assert_int_equal(st.msgs_in, N_MSGS);
  assert_true(st.accepted >= N_MSGS);
}

/* Publishing with the hash the caller computed: every node, the publisher included (its own
 * delivery reuses the hash), gets each message once under that hash. */
static void hashed_publish_reaches_every_node_once(void **state) {
  (void)state;
  static uint8_t hashes[N_MSGS][LD_WAKU_HASH_LEN];
  char text[N_MSGS][32];
  for (int k = 0; k < N_MSGS; k++) {
    snprintf(text[k], sizeof text[k], "hashed message %d", k);
    ld_waku_message_t m = text_message("/app/1/static/proto", text[k]);
    assert_int_equal(ld_relay_publish_hashed(g_nodes[1].relay, STATIC_TOPIC, &m, hashes[k]),
                     LD_ERR_INVALID_ARG); /* no timestamp: the hash would change */
    m.timestamp = (int64_t)ld_wall_ns() + k;
    assert_int_equal(ld_waku_message_hash(STATIC_TOPIC, &m, hashes[k]), 0);
    assert_int_equal(ld_relay_publish_hashed(g_nodes[1].relay, STATIC_TOPIC, &m, NULL),
                     LD_ERR_INVALID_ARG);
    assert_true(ld_relay_publish_hashed(g_nodes[1].relay, STATIC_TOPIC, &m, hashes[k]) > 0);
  }
  expect_t e = {(const uint8_t(*)[LD_WAKU_HASH_LEN])hashes, N_MSGS, STATIC_TOPIC};
  assert_true(sh_run_until(&g_loop, all_received, &e, WAIT_MS));
  sh_run_for(&g_loop, 300); /* late duplicates would show up now */
  assert_exactly_once(&e, 1);
}

static void autoshard_messages_reach_every_node_once(void **state) {
  (void)state;
  static uint8_t hashes[N_MSGS][LD_WAKU_HASH_LEN];
  char text[N_MSGS][32];
  for (int k = 0; k < N_MSGS; k++) {
    snprintf(text[k], sizeof text[k], "auto message %d", k);
    ld_waku_message_t m = text_message(CONTENT_TOPIC, text[k]);
    m.timestamp = 1700000000000000000LL + k;
    char topic[32];
    int sent = ld_relay_publish_auto(g_nodes[3].relay, &m, hashes[k], topic, sizeof topic);
    assert_true(sent > 0);
    assert_string_equal(topic, AUTO_TOPIC);
    uint8_t again[LD_WAKU_HASH_LEN];
    assert_int_equal(ld_waku_message_hash(AUTO_TOPIC, &m, again), 0);
    assert_memory_equal(again, hashes[k], LD_WAKU_HASH_LEN);
  }
  expect_t e = {(const uint8_t(*)[LD_WAKU_HASH_LEN])hashes, N_MSGS, AUTO_TOPIC};
  assert_true(sh_run_until(&g_loop, all_received, &e, WAIT_MS));
  sh_run_for(&g_loop, 300);
  assert_exactly_once(&e, 3);
  /* Publishing the same bytes again is refused as a duplicate. */
  ld_waku_message_t m = text_message(CONTENT_TOPIC, "auto message 0");
  m.timestamp = 1700000000000000000LL;
  assert_int_equal(ld_relay_publish_auto(g_nodes[3].relay, &m, NULL, NULL, 0), LD_ERR_EXISTS);
  /* Too large for the relay's cap: refused locally. */
  static uint8_t big[SMALL_MAX_MSG];
  m.payload = big;
  m.payload_len = sizeof big;
  assert_int_equal(ld_relay_publish(g_nodes[3].relay, AUTO_TOPIC, &m, NULL), LD_ERR_TOO_LARGE);
  assert_int_equal(ld_relay_check_outgoing(g_nodes[3].relay, AUTO_TOPIC, &m), LD_RELAY_TOO_LARGE);
}

static void publish_raw(rnode_t *n, const uint8_t *data, size_t len) {
  assert_true(ld_gs_service_publish(n->gs, STATIC_TOPIC, data, len) > 0);
}

static void publish_waku(rnode_t *n, const ld_waku_message_t *m, uint8_t hash[LD_WAKU_HASH_LEN]) {
  ld_buf_t b;
  ld_buf_init(&b);
  assert_int_equal(ld_waku_message_encode(m, SIZE_MAX, &b), 0);
  publish_raw(n, b.data, b.len);
  if (hash != NULL)
    assert_int_equal(ld_waku_message_hash(STATIC_TOPIC, m, hash), 0);
  ld_buf_clear(&b);
}

static uint64_t total_rejected(ld_relay_reason_t why) {
  uint64_t sum = 0;
  for (int i = 0; i < N_RELAY; i++) {
    ld_relay_stats_t st;
    ld_relay_get_stats(g_nodes[i].relay, &st);
    sum += st.rejected[why];
  }
  return sum;
}

static bool bad_peer_known(void *ud) {
  (void)ud;
  /* four relay neighbours each, plus the bad node */
  return ld_gs_service_topic_peers(g_nodes[0].gs, STATIC_TOPIC, NULL, 0) >= 5 &&
         ld_gs_service_topic_peers(g_nodes[1].gs, STATIC_TOPIC, NULL, 0) >= 5 &&
         ld_gs_service_topic_peers(g_bad.gs, STATIC_TOPIC, NULL, 0) >= 2;
}

static bool rejections_seen(void *ud) {
  (void)ud;
  return total_rejected(LD_RELAY_UNDECODABLE) >= 1 && total_rejected(LD_RELAY_TOO_LARGE) >= 1 &&
         total_rejected(LD_RELAY_EMPTY_PAYLOAD) >= 1;
}

static void bad_messages_rejected_valid_ones_flow(void **state) {
  (void)state;
  size_t before[N_RELAY];
  for (int i = 0; i < N_RELAY; i++)
    before[i] = g_nodes[i].n_got;
  node_start(&g_bad, 100, 1, false);
  assert_int_equal(ld_gs_service_subscribe(g_bad.gs, STATIC_TOPIC, NULL, NULL), 0);
  dial(&g_bad, &g_nodes[0]);
  dial(&g_bad, &g_nodes[1]);
  assert_true(sh_run_until(&g_loop, bad_peer_known, NULL, WAIT_MS));

  static uint8_t hashes[4][LD_WAKU_HASH_LEN];
  ld_waku_message_t ok1 = text_message("/app/1/bad/proto", "valid before");
  ok1.timestamp = 1;
  publish_waku(&g_bad, &ok1, hashes[0]);
  const uint8_t garbage[] = {0x0f, 0x01, 0x02, 0x03};
  publish_raw(&g_bad, garbage, sizeof garbage);
  static uint8_t big_payload[2 * SMALL_MAX_MSG];
  ld_waku_message_t big = text_message("/app/1/bad/proto", "");
  big.payload = big_payload;
  big.payload_len = sizeof big_payload;
  publish_waku(&g_bad, &big, NULL);
  ld_waku_message_t empty = text_message("/app/1/bad/proto", "");
  publish_waku(&g_bad, &empty, NULL);
  ld_waku_message_t ok2 = text_message("/app/1/bad/proto", "valid after");
  ok2.timestamp = 2;
  publish_waku(&g_bad, &ok2, hashes[1]);

  expect_t e = {(const uint8_t(*)[LD_WAKU_HASH_LEN])hashes, 2, STATIC_TOPIC};
  assert_true(sh_run_until(&g_loop, all_received, &e, WAIT_MS));
  assert_true(sh_run_until(&g_loop, rejections_seen, NULL, WAIT_MS));
  sh_run_for(&g_loop, 300);
  /* Only the two valid messages were delivered anywhere, once each. */
  for (int i = 0; i < N_RELAY; i++) {
    assert_int_equal(g_nodes[i].n_got, before[i] + 2);
    for (size_t k = before[i]; k < g_nodes[i].n_got; k++)
      assert_true(g_nodes[i].got[k].payload_len > 0 &&
                  g_nodes[i].got[k].payload_len < SMALL_MAX_MSG);
  }
  /* The rejected messages were not forwarded: only the bad node's direct peers saw them. */
  for (int i = 2; i < N_RELAY; i++) {
    ld_relay_stats_t st;
    ld_relay_get_stats(g_nodes[i].relay, &st);
    assert_int_equal(st.rejected[LD_RELAY_UNDECODABLE] + st.rejected[LD_RELAY_TOO_LARGE] +
                         st.rejected[LD_RELAY_EMPTY_PAYLOAD],
                     0);
  }
  ld_relay_topic_stats_t ts;
  assert_int_equal(ld_relay_topic_stats(g_nodes[0].relay, STATIC_TOPIC, &ts), 0);
  assert_true(ts.rejected[LD_RELAY_UNDECODABLE] + ts.rejected[LD_RELAY_TOO_LARGE] +
                  ts.rejected[LD_RELAY_EMPTY_PAYLOAD] >=
              1);
  /* And relaying goes on. */
  static uint8_t after[1][LD_WAKU_HASH_LEN];
  ld_waku_message_t m = text_message("/app/1/static/proto", "still relaying");
  assert_true(ld_relay_publish(g_nodes[2].relay, STATIC_TOPIC, &m, after[0]) > 0);
  expect_t e2 = {(const uint8_t(*)[LD_WAKU_HASH_LEN])after, 1, STATIC_TOPIC};
  assert_true(sh_run_until(&g_loop, all_received, &e2, WAIT_MS));
  node_stop(&g_bad);
}

/* ---- protected shard ------------------------------------------------------------------------ */

static bool protected_mesh_formed(void *ud) {
  (void)ud;
  for (int i = 0; i < N_RELAY; i++)
    if (ld_gs_service_topic_peers(g_nodes[i].gs, PROTECTED_TOPIC, NULL, 0) < 4 ||
        ld_gs_service_mesh_peers(g_nodes[i].gs, PROTECTED_TOPIC, NULL, 0) < 2)
      return false;
  return true;
}

static uint64_t total_rejected_topic(const char *topic, ld_relay_reason_t why) {
  uint64_t sum = 0;
  for (int i = 0; i < N_RELAY; i++) {
    ld_relay_topic_stats_t st;
    if (ld_relay_topic_stats(g_nodes[i].relay, topic, &st) == 0)
      sum += st.rejected[why];
  }
  return sum;
}

static bool unsigned_rejected(void *ud) {
  (void)ud;
  return total_rejected_topic(PROTECTED_TOPIC, LD_RELAY_BAD_SIGNATURE) >= 2;
}

static void protected_shard_needs_signature(void **state) {
  (void)state;
  for (int i = 0; i < N_RELAY; i++)
    assert_int_equal(
        ld_relay_subscribe(g_nodes[i].relay, PROTECTED_TOPIC, on_relay_message, &g_nodes[i]), 0);
  assert_true(sh_run_until(&g_loop, protected_mesh_formed, NULL, WAIT_MS));

  uint8_t secret[32];
  memset(secret, 0x01, sizeof secret);
  ld_waku_message_t m = text_message("/app/1/signed/proto", "signed by the shard owner");
  m.timestamp = (int64_t)ld_wall_ns();
  uint8_t sig[LD_RELAY_SIGNATURE_LEN];
  assert_int_equal(ld_relay_sign(secret, PROTECTED_TOPIC, &m, sig), 0);
  m.meta = sig;
  m.meta_len = sizeof sig;
  assert_int_equal(ld_relay_check_outgoing(g_nodes[1].relay, PROTECTED_TOPIC, &m), LD_RELAY_OK);
  static uint8_t hashes[1][LD_WAKU_HASH_LEN];
  assert_true(ld_relay_publish(g_nodes[1].relay, PROTECTED_TOPIC, &m, hashes[0]) > 0);
  expect_t e = {(const uint8_t(*)[LD_WAKU_HASH_LEN])hashes, 1, PROTECTED_TOPIC};
  assert_true(sh_run_until(&g_loop, all_received, &e, WAIT_MS));

  /* Unsigned: published (nwaku does not check its own messages) but refused by every peer. */
  ld_waku_message_t bare = text_message("/app/1/signed/proto", "not signed");
  assert_int_equal(ld_relay_check_outgoing(g_nodes[1].relay, PROTECTED_TOPIC, &bare),
                   LD_RELAY_NO_TIMESTAMP);
  uint8_t bare_hash[LD_WAKU_HASH_LEN];
  assert_true(ld_relay_publish(g_nodes[1].relay, PROTECTED_TOPIC, &bare, bare_hash) > 0);
  assert_true(sh_run_until(&g_loop, unsigned_rejected, NULL, WAIT_MS));
  sh_run_for(&g_loop, 300);
  for (int i = 0; i < N_RELAY; i++)
    assert_int_equal(count_hash(&g_nodes[i], bare_hash, PROTECTED_TOPIC, NULL), i == 1 ? 1 : 0);
  ld_relay_stats_t st;
  ld_relay_get_stats(g_nodes[0].relay, &st);
  assert_true(st.signed_accepted >= 1);
  assert_true(st.signed_rejected >= 1);
}

/* ---- added validators ----------------------------------------------------------------------- */

typedef struct later {
  uv_timer_t timer;
  ld_relay_t *relay;
  uint64_t token;
  ld_gs_verdict_t verdict;
} later_t;

static int g_first_calls, g_second_calls, g_order_errors;

static void later_closed(uv_handle_t *h) {
  free(h->data);
}

static void later_fire(uv_timer_t *t) {
  later_t *l = t->data;
  assert_int_equal(ld_relay_validation_done(l->relay, l->token, l->verdict), 0);
  assert_int_equal(ld_relay_validation_done(l->relay, l->token, l->verdict), LD_ERR_NOT_FOUND);
  uv_close((uv_handle_t *)t, later_closed);
}

/* First validator: answers at once, Accept. */
static void first_validator(ld_relay_t *r, uint64_t token, const char *topic,
                            const ld_waku_message_t *msg, const ld_peerid_t *from, void *ud) {
  (void)topic;
  (void)msg;
  (void)ud;
  assert_non_null(from);
  g_first_calls++;
  assert_int_equal(ld_relay_validation_done(r, token, LD_GS_ACCEPT), 0);
}

/* Second validator: answers from a timer; rejects payloads starting with "forbidden". */
static void second_validator(ld_relay_t *r, uint64_t token, const char *topic,
                             const ld_waku_message_t *msg, const ld_peerid_t *from, void *ud) {
  (void)topic;
  (void)from;
  (void)ud;
  g_second_calls++;
  if (g_second_calls > g_first_calls)
    g_order_errors++;
  later_t *l = calloc(1, sizeof *l);
  assert_non_null(l);
  l->relay = r;
  l->token = token;
  l->verdict = msg->payload_len >= 9 && memcmp(msg->payload, "forbidden", 9) == 0 ? LD_GS_REJECT
                                                                                  : LD_GS_ACCEPT;
  uv_timer_init(&g_loop, &l->timer);
  l->timer.data = l;
  uv_timer_start(&l->timer, later_fire, 1, 0);
}

static bool forbidden_rejected(void *ud) {
  (void)ud;
  return total_rejected_topic(STATIC_TOPIC, LD_RELAY_VALIDATOR) >= 2;
}

static void added_validators_run_in_order(void **state) {
  (void)state;
  int ids[N_RELAY][2];
  for (int i = 0; i < N_RELAY; i++) {
    ids[i][0] = ld_relay_add_validator(g_nodes[i].relay, first_validator, NULL);
    ids[i][1] = ld_relay_add_validator(g_nodes[i].relay, second_validator, NULL);
    assert_true(ids[i][0] > 0 && ids[i][1] > ids[i][0]);
  }
  ld_waku_message_t bad = text_message("/app/1/static/proto", "forbidden words");
  uint8_t bad_hash[LD_WAKU_HASH_LEN];
  assert_true(ld_relay_publish(g_nodes[4].relay, STATIC_TOPIC, &bad, bad_hash) > 0);
  static uint8_t good[1][LD_WAKU_HASH_LEN];
  ld_waku_message_t ok = text_message("/app/1/static/proto", "kind words");
  assert_true(ld_relay_publish(g_nodes[4].relay, STATIC_TOPIC, &ok, good[0]) > 0);
  expect_t e = {(const uint8_t(*)[LD_WAKU_HASH_LEN])good, 1, STATIC_TOPIC};
  assert_true(sh_run_until(&g_loop, all_received, &e, WAIT_MS));
  assert_true(sh_run_until(&g_loop, forbidden_rejected, NULL, WAIT_MS));
  sh_run_for(&g_loop, 300);
  for (int i = 0; i < N_RELAY; i++)
    assert_int_equal(count_hash(&g_nodes[i], bad_hash, STATIC_TOPIC, NULL), i == 4 ? 1 : 0);
  assert_int_equal(g_order_errors, 0);
  assert_true(g_first_calls >= N_RELAY - 1);
  for (int i = 0; i < N_RELAY; i++) {
    assert_int_equal(ld_relay_remove_validator(g_nodes[i].relay, ids[i][0]), 0);
    assert_int_equal(ld_relay_remove_validator(g_nodes[i].relay, ids[i][1]), 0);
    assert_int_equal(ld_relay_remove_validator(g_nodes[i].relay, ids[i][1]), LD_ERR_NOT_FOUND);
  }
  assert_int_equal(ld_relay_validation_done(g_nodes[0].relay, 12345, LD_GS_ACCEPT),
                   LD_ERR_NOT_FOUND);
}

static bool alien_gone(void *ud) {
  (void)ud;
  /* Both sides judge; whichever reads the other's answer first closes the connection. */
  return (g_nodes[0].md_rejects > 0 || g_alien.md_rejects > 0) && g_alien.ev.disconnected > 0 &&
         ld_switch_connections(g_alien.sw, NULL, 0) == 0;
}

static void other_cluster_disconnected_by_metadata(void **state) {
  (void)state;
  node_start(&g_alien, 200, 2, true);
  assert_int_equal(ld_relay_subscribe(g_alien.relay, STATIC_TOPIC, NULL, NULL), 0);
  size_t conns_before = ld_switch_connections(g_nodes[0].sw, NULL, 0);
  dial(&g_alien, &g_nodes[0]);
  assert_true(sh_run_until(&g_loop, alien_gone, NULL, WAIT_MS));
  if (g_nodes[0].md_rejects > 0)
    assert_int_equal(g_nodes[0].last_md_reject, LD_ERR_CLUSTER_MISMATCH);
  if (g_alien.md_rejects > 0)
    assert_int_equal(g_alien.last_md_reject, LD_ERR_CLUSTER_MISMATCH);
  sh_run_for(&g_loop, 100);
  assert_int_equal(ld_switch_connections(g_nodes[0].sw, NULL, 0), conns_before);
  assert_null(ld_metadata_peer(g_nodes[0].md, ld_switch_peer_id(g_alien.sw)));
  node_stop(&g_alien);
}

static bool not_subscribed_reported(void *ud) {
  return ((rnode_t *)ud)->health_auto == LD_RELAY_NOT_SUBSCRIBED;
}

static void unsubscribe_reports_not_subscribed(void **state) {
  (void)state;
  rnode_t *n = &g_nodes[5];
  assert_int_equal(ld_relay_unsubscribe_content_topic(n->relay, CONTENT_TOPIC), 0);
  assert_int_equal(ld_relay_unsubscribe(n->relay, AUTO_TOPIC), LD_ERR_NOT_FOUND);
  assert_false(ld_relay_subscribed(n->relay, AUTO_TOPIC));
  assert_int_equal(ld_relay_topic_health(n->relay, AUTO_TOPIC), LD_RELAY_NOT_SUBSCRIBED);
  assert_true(sh_run_until(&g_loop, not_subscribed_reported, n, WAIT_MS));
  const char *subs[4];
  size_t n_subs = ld_relay_subscriptions(n->relay, subs, 4);
  assert_int_equal(n_subs, 2); /* the static and the protected shard */
  for (size_t i = 0; i < n_subs; i++)
    assert_string_not_equal(subs[i], AUTO_TOPIC);
}

static int setup(void **state) {
  (void)state;
  if (uv_loop_init(&g_loop) != 0)
    return -1;
  for (int i = 0; i < N_RELAY; i++)
    node_start(&g_nodes[i], i, 1, true);
  return 0;
}

static int teardown(void **state) {
  (void)state;
  for (int i = 0; i < N_RELAY; i++)
    node_stop(&g_nodes[i]);
  sh_run_for(&g_loop, 50);
  return uv_loop_close(&g_loop) == 0 ? 0 : -1;
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(mesh_forms_and_reports_health),
      cmocka_unit_test(static_shard_messages_reach_every_node_once),
      cmocka_unit_test(hashed_publish_reaches_every_node_once),
      cmocka_unit_test(autoshard_messages_reach_every_node_once),
      cmocka_unit_test(bad_messages_rejected_valid_ones_flow),
      cmocka_unit_test(protected_shard_needs_signature),
      cmocka_unit_test(added_validators_run_in_order),
      cmocka_unit_test(other_cluster_disconnected_by_metadata),
      cmocka_unit_test(unsubscribe_reports_not_subscribed),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
