/* Thirty gossipsub nodes in one process over loopback TCP: each dials three others, all subscribe
 * to one topic and form a mesh; 1,000 messages published from every node in turn must reach all
 * thirty exactly once (the publisher through its own handler, as nwaku's triggerSelf does), after
 * passing two validators on every receiving node: a synchronous one for all topics and an
 * asynchronous one for the topic, called in that order. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>
#include <uv.h>

#include "base/clock.h"
#include "base/error.h"
#include "base/log.h"
#include "pubsub_harness.h"
#include "switch_harness.h"

#define N_NODES 30
#define N_MSGS 1000
#define BATCH 50
#define MSG_LEN 200
#define MESH_WAIT_MS 30000
#define BATCH_WAIT_MS 30000

typedef struct node_state {
  int index;
  uint32_t sync_validations;
  uint32_t async_validations;
  uint32_t order_errors;    /* async validator called before the sync one */
  uint64_t sync_seen[8192]; /* tokens the sync validator accepted, by token % 8192 */
  uint64_t pending[4096];   /* async tokens waiting for an answer */
  size_t n_pending;
  size_t mesh_events;
  size_t mesh_reported;
} node_state_t;

static uv_loop_t g_loop;
static uv_timer_t g_answer_timer;
static ph_node_t g_nodes[N_NODES];
static node_state_t g_state[N_NODES];
static uint8_t g_count[N_NODES][N_MSGS];
static size_t g_delivered;
static size_t g_duplicates;
static size_t g_foreign;

/* ---- callbacks ------------------------------------------------------------------------------ */

static uint32_t msg_index(const uint8_t *data, size_t len) {
  if (len != MSG_LEN)
    return UINT32_MAX;
  return (uint32_t)data[0] << 24 | (uint32_t)data[1] << 16 | (uint32_t)data[2] << 8 | data[3];
}

static void on_message(ld_gs_service_t *svc, const char *topic, const uint8_t *data, size_t len,
                       const uint8_t id[LD_GS_MSG_ID_LEN], const ld_peerid_t *from,
                       void *user_data) {
  node_state_t *st = user_data;
  (void)svc;
  (void)id;
  uint32_t m = msg_index(data, len);
  if (strcmp(topic, PH_TOPIC) != 0 || m >= N_MSGS) {
    g_foreign++;
    return;
  }
  /* only the publisher sees a message without a propagating peer */
  if ((from == NULL) != ((int)(m % N_NODES) == st->index))
    g_foreign++;
  if (g_count[st->index][m]++ == 0)
    g_delivered++;
  else
    g_duplicates++;
}

static void sync_validator(ld_gs_service_t *svc, uint64_t token, const char *topic,
                           const uint8_t *data, size_t len, const ld_peerid_t *from,
                           void *user_data) {
  node_state_t *st = user_data;
  (void)topic;
  st->sync_validations++;
  st->sync_seen[token % 8192] = token;
  bool ok = from != NULL && msg_index(data, len) < N_MSGS;
  assert_int_equal(ld_gs_service_validation_done(svc, token, ok ? LD_GS_ACCEPT : LD_GS_REJECT), 0);
  /* answered once: a second answer is refused */
  assert_int_equal(ld_gs_service_validation_done(svc, token, LD_GS_ACCEPT), LD_ERR_NOT_FOUND);
}

static void async_validator(ld_gs_service_t *svc, uint64_t token, const char *topic,
                            const uint8_t *data, size_t len, const ld_peerid_t *from,
                            void *user_data) {
  node_state_t *st = user_data;
  (void)svc;
  (void)topic;
  (void)data;
  (void)len;
  (void)from;
  st->async_validations++;
  if (st->sync_seen[token % 8192] != token)
    st->order_errors++;
  assert_true(st->n_pending < sizeof st->pending / sizeof st->pending[0]);
  st->pending[st->n_pending++] = token;
}

/* Answers the asynchronous validations from the loop, a few milliseconds later. */
static void answer_pending(uv_timer_t *t) {
  (void)t;
  for (int i = 0; i < N_NODES; i++) {
    node_state_t *st = &g_state[i];
    if (g_nodes[i].gs == NULL)
      continue;
    for (size_t k = 0; k < st->n_pending; k++)
      assert_int_equal(ld_gs_service_validation_done(g_nodes[i].gs, st->pending[k], LD_GS_ACCEPT),
                       0);
    st->n_pending = 0;
  }
}

static void on_mesh_changed(ld_gs_service_t *svc, const char *topic, size_t size, void *ud) {
  node_state_t *st = ud;
  (void)svc;
  assert_string_equal(topic, PH_TOPIC);
  st->mesh_events++;
  st->mesh_reported = size;
}

static const ld_gs_service_events_t events = {.on_mesh_changed = on_mesh_changed};

/* ---- conditions ----------------------------------------------------------------------------- */

static bool mesh_formed(void *ud) {
  (void)ud;
  for (int i = 0; i < N_NODES; i++) {
    size_t peers = ph_peer_count(&g_nodes[i]);
    size_t conns = ld_switch_connections(g_nodes[i].sw, NULL, 0);
    if (peers < 3 || peers != conns)
      return false;
    if (ld_gs_service_topic_peers(g_nodes[i].gs, PH_TOPIC, NULL, 0) != peers)
      return false;
    if (ld_gs_service_mesh_peers(g_nodes[i].gs, PH_TOPIC, NULL, 0) < 3)
      return false;
  }
  return true;
}

static size_t g_target;

static bool delivered_enough(void *ud) {
  (void)ud;
  return g_delivered >= g_target;
}

/* ---- the test ------------------------------------------------------------------------------- */

static void setup_nodes(void) {
  for (int i = 0; i < N_NODES; i++) {
    ld_gs_service_config_t cfg;
    ph_config(&cfg, 1000 + (uint64_t)i);
    ph_node_start(&g_nodes[i], &g_loop, &cfg);
    g_state[i].index = i;
    ld_gs_service_set_events(g_nodes[i].gs, &events, &g_state[i]);
    assert_true(ld_gs_service_add_validator(g_nodes[i].gs, NULL, sync_validator, &g_state[i]) > 0);
    assert_true(ld_gs_service_add_validator(g_nodes[i].gs, PH_TOPIC, async_validator, &g_state[i]) >
                0);
    assert_int_equal(ld_gs_service_subscribe(g_nodes[i].gs, PH_TOPIC, on_message, &g_state[i]), 0);
    assert_int_equal(ld_gs_service_subscribe(g_nodes[i].gs, PH_TOPIC, on_message, &g_state[i]),
                     LD_ERR_EXISTS);
  }
  static const int hops[] = {1, 7, 13};
  for (int i = 0; i < N_NODES; i++)
    for (size_t h = 0; h < sizeof hops / sizeof hops[0]; h++)
      ph_connect(&g_loop, &g_nodes[i], &g_nodes[(i + hops[h]) % N_NODES]);
}

static void publish_all(void) {
  uint8_t data[MSG_LEN];
  uint64_t start = ld_now_ms();
  for (uint32_t m = 0; m < N_MSGS; m++) {
    memset(data, 0, sizeof data);
    data[0] = (uint8_t)(m >> 24);
    data[1] = (uint8_t)(m >> 16);
    data[2] = (uint8_t)(m >> 8);
    data[3] = (uint8_t)m;
    for (size_t k = 4; k < sizeof data; k++)
      data[k] = sh_pattern(m, k);
    int rc = ld_gs_service_publish(g_nodes[m % N_NODES].gs, PH_TOPIC, data, sizeof data);
    assert_true(rc >= 3);
    /* the same data again is a duplicate */
    if (m % 100 == 0)
      assert_int_equal(ld_gs_service_publish(g_nodes[m % N_NODES].gs, PH_TOPIC, data, sizeof data),
                       LD_ERR_EXISTS);
    if ((m + 1) % BATCH == 0) {
      g_target = (size_t)(m + 1) * N_NODES;
      assert_true(sh_run_until(&g_loop, delivered_enough, NULL, BATCH_WAIT_MS));
    }
  }
  printf("# %d messages to %d nodes in %llu ms\n", N_MSGS, N_NODES,
         (unsigned long long)(ld_now_ms() - start));
}

static void check_results(void) {
  assert_int_equal(g_delivered, (size_t)N_NODES * N_MSGS);
  assert_int_equal(g_duplicates, 0);
  assert_int_equal(g_foreign, 0);
  for (int i = 0; i < N_NODES; i++) {
    for (int m = 0; m < N_MSGS; m++)
      assert_int_equal(g_count[i][m], 1);
    node_state_t *st = &g_state[i];
    /* every message but the node's own passed both validators once, in order */
    uint32_t own = N_MSGS / N_NODES + (i < N_MSGS % N_NODES ? 1 : 0);
    assert_int_equal(st->sync_validations, N_MSGS - own);
    assert_int_equal(st->async_validations, N_MSGS - own);
    assert_int_equal(st->order_errors, 0);
    ld_gs_service_stats_t stats;
    ld_gs_service_stats(g_nodes[i].gs, &stats);
    assert_int_equal(stats.frames_dropped, 0);
    assert_int_equal(stats.frames_too_large, 0);
    assert_int_equal(stats.validations_timed_out, 0);
    assert_int_equal(stats.router.rpcs_malformed, 0);
    ld_gs_topic_stats_t ts;
    assert_int_equal(ld_gs_service_topic_stats(g_nodes[i].gs, PH_TOPIC, &ts), 0);
    assert_int_equal(ts.accepted, N_MSGS - own);
    assert_int_equal(ts.rejected, 0);
    assert_int_equal(ts.published, own);
    /* the last mesh size reported is the current one */
    size_t mesh = ld_gs_service_mesh_peers(g_nodes[i].gs, PH_TOPIC, NULL, 0);
    assert_true(st->mesh_events > 0);
    assert_int_equal(st->mesh_reported, mesh);
    assert_true(mesh >= 3 && mesh <= 8);
  }
}

static void test_thirty_nodes_thousand_messages(void **state) {
  (void)state;
  setup_nodes();
  assert_true(sh_run_until(&g_loop, mesh_formed, NULL, MESH_WAIT_MS));
  publish_all();
  /* gossip keeps running for a while: nothing may arrive twice */
  sh_run_for(&g_loop, 3000);
  check_results();

  ld_peerid_t mesh[16];
  size_t n = ld_gs_service_mesh_peers(g_nodes[0].gs, PH_TOPIC, mesh, 16);
  ld_gs_peer_info_t peers[64];
  size_t np = ld_gs_service_peers(g_nodes[0].gs, peers, 64);
  for (size_t k = 0; k < n; k++) {
    bool found = false;
    for (size_t j = 0; j < np; j++)
      found = found || ld_peerid_equal(&mesh[k], &peers[j].id);
    assert_true(found);
  }
  for (size_t j = 0; j < np; j++) {
    assert_true(peers[j].writable);
    assert_int_equal(peers[j].proto, LD_GS_PROTO_WAKU_RELAY);
    assert_true(peers[j].score >= 0);
  }
  for (int i = 0; i < N_NODES; i++)
    ph_node_stop(&g_nodes[i], &g_loop);
}

int main(void) {
  ld_log_set_level(LD_LOG_WARN);
  uv_loop_init(&g_loop);
  uv_timer_init(&g_loop, &g_answer_timer);
  uv_timer_start(&g_answer_timer, answer_pending, 2, 2);
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_thirty_nodes_thousand_messages),
  };
  int rc = cmocka_run_group_tests(tests, NULL, NULL);
  uv_close((uv_handle_t *)&g_answer_timer, NULL);
  uv_run(&g_loop, UV_RUN_DEFAULT);
  uv_loop_close(&g_loop);
  return rc;
}
