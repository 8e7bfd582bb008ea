/* Misbehaving pubsub peers against a gossipsub node A that relays between itself and node B: a
 * peer sending RPC frames over the 150 KiB cap (reset, penalised, and after repeated offences
 * disconnected), a peer publishing invalid messages (scored down, then disconnected), a peer
 * flooding IHAVE/IWANT/GRAFT (capped), and a peer that cannot be written to (its outbound queue
 * is capped: frames dropped and counted). After each, A must still relay between itself and B. */
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
#include "base/log.h"
#include "crypto/crypto.h"
#include "pubsub_harness.h"
#include "switch_harness.h"

#define WAIT_MS 10000

typedef struct inbox {
  size_t messages;
  size_t bad; /* deliveries of data a validator should have rejected */
  char last[64];
  size_t last_len;
} inbox_t;

static uv_loop_t g_loop;
static ph_node_t g_a, g_b;
static inbox_t g_in_a, g_in_b;
static unsigned g_round;

/* ---- callbacks ------------------------------------------------------------------------------ */

static void on_message(ld_gs_service_t *svc, const char *topic, const uint8_t *data, size_t len,
                       const uint8_t id[LD_GS_MSG_ID_LEN], const ld_peerid_t *from,
                       void *user_data) {
  inbox_t *in = user_data;
  (void)svc;
  (void)topic;
  (void)id;
  (void)from;
  in->messages++;
  if (len >= 3 && memcmp(data, "bad", 3) == 0)
    in->bad++;
  in->last_len = len < sizeof in->last ? len : sizeof in->last;
  memcpy(in->last, data, in->last_len);
}

/* Rejects data starting with "bad". */
static void validator(ld_gs_service_t *svc, uint64_t token, const char *topic, const uint8_t *data,
                      size_t len, const ld_peerid_t *from, void *user_data) {
  (void)topic;
  (void)from;
  (void)user_data;
  bool bad = len >= 3 && memcmp(data, "bad", 3) == 0;
  ld_gs_service_validation_done(svc, token, bad ? LD_GS_REJECT : LD_GS_ACCEPT);
}

/* ---- helpers -------------------------------------------------------------------------------- */

static bool both_meshed(void *ud) {
  (void)ud;
  return ld_gs_service_mesh_peers(g_a.gs, PH_TOPIC, NULL, 0) >= 1 &&
         ld_gs_service_mesh_peers(g_b.gs, PH_TOPIC, NULL, 0) >= 1;
}

typedef struct count_wait {
  const size_t *counter;
  size_t target;
} count_wait_t;

static bool reached(void *ud) {
  count_wait_t *w = ud;
  return *w->counter >= w->target;
}

static void wait_count(const size_t *counter, size_t target) {
  count_wait_t w = {counter, target};
  assert_true(sh_run_until(&g_loop, reached, &w, WAIT_MS));
}

/* A message from B reaches A and one from A reaches B. */
static void assert_relays(void) {
  char text[32];
  size_t a0 = g_in_a.messages, b0 = g_in_b.messages;
  int n = snprintf(text, sizeof text, "ok-b-%u", g_round++);
  assert_true(ld_gs_service_publish(g_b.gs, PH_TOPIC, (uint8_t *)text, (size_t)n) >= 1);
  wait_count(&g_in_a.messages, a0 + 1);
  assert_memory_equal(g_in_a.last, text, (size_t)n);
  n = snprintf(text, sizeof text, "ok-a-%u", g_round++);
  assert_true(ld_gs_service_publish(g_a.gs, PH_TOPIC, (uint8_t *)text, (size_t)n) >= 1);
  wait_count(&g_in_b.messages, b0 + 2); /* its own and A's */
  assert_memory_equal(g_in_b.last, text, (size_t)n);
}

static bool raw_joined(void *ud) {
  ph_raw_t *r = ud;
  return r->rx.subscribes >= 1 && ld_gs_service_topic_peers(g_a.gs, PH_TOPIC, NULL, 0) == 2;
}

/* A raw peer on `protocol` that announced the topic and got A's hello. */
static void raw_join(ph_raw_t *r, const char *protocol) {
  ph_raw_start(r, &g_loop, &g_a, protocol);
  ph_raw_open(r, protocol);
  ph_raw_subscribe(r);
  assert_true(sh_run_until(&g_loop, raw_joined, r, WAIT_MS));
}

/* A's view of the raw peer. */
static bool raw_info(const ph_raw_t *r, ld_gs_peer_info_t *out) {
  ld_gs_peer_info_t peers[8];
  size_t n = ld_gs_service_peers(g_a.gs, peers, 8);
  const ld_peerid_t *id = ld_switch_peer_id(r->sw);
  for (size_t i = 0; i < n && i < 8; i++) {
    if (ld_peerid_equal(&peers[i].id, id)) {
      *out = peers[i];
      return true;
    }
  }
  return false;
}

static bool raw_gone(void *ud) {
  const ph_raw_t *r = ud;
  return r->conn == NULL;
}

static ld_gs_service_stats_t stats_a(void) {
  ld_gs_service_stats_t s;
  ld_gs_service_stats(g_a.gs, &s);
  return s;
}

/* ---- fixtures ------------------------------------------------------------------------------- */

static int setup(void **state) {
  (void)state;
  memset(&g_in_a, 0, sizeof g_in_a);
  memset(&g_in_b, 0, sizeof g_in_b);
  ld_gs_service_config_t cfg;
  ph_config(&cfg, 7);
  ph_node_start(&g_a, &g_loop, &cfg);
  ph_config(&cfg, 8);
  ph_node_start(&g_b, &g_loop, &cfg);
  assert_true(ld_gs_service_add_validator(g_a.gs, PH_TOPIC, validator, NULL) > 0);
  assert_int_equal(ld_gs_service_subscribe(g_a.gs, PH_TOPIC, on_message, &g_in_a), 0);
  assert_int_equal(ld_gs_service_subscribe(g_b.gs, PH_TOPIC, on_message, &g_in_b), 0);
  ph_connect(&g_loop, &g_b, &g_a);
  assert_true(sh_run_until(&g_loop, both_meshed, NULL, WAIT_MS));
  assert_relays();
  return 0;
}

static int teardown(void **state) {
  (void)state;
  ph_node_stop(&g_a, &g_loop);
  ph_node_stop(&g_b, &g_loop);
  return 0;
}

/* ---- oversize ------------------------------------------------------------------------------- */

static bool frame_refused(void *ud) {
  const ph_raw_t *r = ud;
  ld_gs_service_stats_t s = stats_a();
  return s.frames_too_large >= 1 && r->out_closed;
}

static void send_oversize(ph_raw_t *r) {
  ld_buf_t f;
  ld_buf_init(&f);
  assert_int_equal(ld_buf_varint(&f, LD_GS_MAX_RPC_SIZE + 1), 0);
  uint8_t filler[4096] = {0};
  assert_int_equal(ld_buf_append(&f, filler, sizeof filler), 0);
  assert_int_equal(ph_raw_send(r, f.data, f.len), 0);
  ld_buf_clear(&f);
}

static void test_rpc_over_the_cap(void **state) {
  (void)state;
  /* our own publish over the cap is refused before anything is sent */
  uint8_t *big = calloc(1, LD_GS_MAX_RPC_SIZE);
  assert_non_null(big);
  assert_int_equal(ld_gs_service_publish(g_a.gs, PH_TOPIC, big, LD_GS_MAX_RPC_SIZE),
                   LD_ERR_TOO_LARGE);
  /* a large message that fits crosses several reads and is relayed */
  size_t b0 = g_in_b.messages;
  memcpy(big, "large", 5);
  assert_true(ld_gs_service_publish(g_a.gs, PH_TOPIC, big, 120 * 1024) >= 1);
  wait_count(&g_in_b.messages, b0 + 1);
  assert_int_equal(g_in_b.last_len, sizeof g_in_b.last);
  free(big);

  ph_raw_t r;
  raw_join(&r, LD_GS_ID_MESHSUB_11);
  sh_log_capture();
  send_oversize(&r);
  assert_true(sh_run_until(&g_loop, frame_refused, &r, WAIT_MS));
  assert_true(sh_log_contains("TOO_LARGE"));
  sh_log_release();
  assert_int_equal(r.out_err, LD_ERR_RESET);
  ld_gs_service_stats_t s = stats_a();
  assert_int_equal(s.frames_too_large, 1);
  assert_int_equal(s.router.rpcs_malformed, 1);
  ld_gs_peer_info_t info;
  memset(&info, 0, sizeof info);
  assert_true(raw_info(&r, &info));
  assert_true(info.score < 0);
  assert_true(info.writable);

  /* A keeps relaying, to B and to the penalised peer alike */
  size_t r0 = r.rx.messages;
  assert_relays();
  assert_true(r.rx.messages >= r0 + 1);

  /* repeated offences cost the connection */
  for (int i = 0; i < 5 && r.conn != NULL; i++) {
    ph_raw_open(&r, LD_GS_ID_MESHSUB_11);
    send_oversize(&r);
    sh_run_for(&g_loop, 50);
  }
  assert_true(sh_run_until(&g_loop, raw_gone, &r, WAIT_MS));
  assert_true(stats_a().disconnects >= 1);
  assert_relays();
  ph_raw_stop(&r);
}

/* ---- invalid messages ----------------------------------------------------------------------- */

static bool rejected_at_least(void *ud) {
  size_t want = *(size_t *)ud;
  ld_gs_topic_stats_t ts;
  return ld_gs_service_topic_stats(g_a.gs, PH_TOPIC, &ts) == 0 && ts.rejected >= want;
}

static void send_bad(ph_raw_t *r, unsigned from, unsigned to, bool seqno) {
  for (unsigned i = from; i < to; i++) {
    char text[32];
    int n = snprintf(text, sizeof text, "bad-%u", i);
    ld_buf_t body;
    ld_buf_init(&body);
    if (seqno)
      ph_rpc_msg_seqno(&body, PH_TOPIC, (uint8_t *)text, (size_t)n);
    else
      ph_rpc_msg(&body, PH_TOPIC, (uint8_t *)text, (size_t)n);
    ph_raw_send_rpc(r, &body);
    ld_buf_clear(&body);
  }
}

static void test_invalid_messages_score_down_then_disconnect(void **state) {
  (void)state;
  ph_raw_t r;
  raw_join(&r, LD_GS_ID_WAKU_RELAY);
  send_bad(&r, 0, 5, false);
  size_t want = 5;
  assert_true(sh_run_until(&g_loop, rejected_at_least, &want, WAIT_MS));
  ld_gs_peer_info_t info;
  memset(&info, 0, sizeof info);
  assert_true(raw_info(&r, &info));
  assert_true(info.score <= -100 * 25 + 1); /* P4: -100 x 5^2 */
  assert_true(r.conn != NULL);
  assert_int_equal(g_in_a.bad, 0);
  assert_relays();

  /* StrictNoSign violations are rejected too */
  uint64_t before = stats_a().router.msgs_invalid_sign;
  send_bad(&r, 100, 103, true);
  sh_run_for(&g_loop, 200);
  assert_int_equal(stats_a().router.msgs_invalid_sign, before + 3);

  /* more of them push it below the graylist threshold: disconnected at a heartbeat */
  send_bad(&r, 5, 40, false);
  assert_true(sh_run_until(&g_loop, raw_gone, &r, WAIT_MS));
  ld_gs_service_stats_t s = stats_a();
  assert_int_equal(s.disconnects, 1);
  assert_int_equal(g_in_a.bad, 0);
  assert_int_equal(g_in_b.bad, 0);
  assert_int_equal(ph_peer_count(&g_a), 1);
  assert_relays();
  ph_raw_stop(&r);
}

/* ---- control flood -------------------------------------------------------------------------- */

#define FLOOD_RPCS 100
#define FLOOD_IHAVE_ENTRIES 10
#define FLOOD_IHAVE_IDS 200
#define FLOOD_IWANT_IDS 1000
#define FLOOD_GRAFTS 200

static void flood_body(ld_buf_t *body) {
  static uint8_t ids[FLOOD_IWANT_IDS * 32];
  ld_buf_t ctrl;
  ld_buf_init(&ctrl);
  for (int e = 0; e < FLOOD_IHAVE_ENTRIES; e++) {
    ld_random_bytes(ids, FLOOD_IHAVE_IDS * 32);
    ph_ctrl_ihave(&ctrl, PH_TOPIC, ids, FLOOD_IHAVE_IDS);
  }
  ld_random_bytes(ids, sizeof ids);
  ph_ctrl_iwant(&ctrl, ids, FLOOD_IWANT_IDS);
  for (int g = 0; g < FLOOD_GRAFTS; g++)
    ph_ctrl_graft(&ctrl, g % 2 == 0 ? PH_TOPIC : "/waku/2/rs/1/7");
  ph_rpc_control(body, &ctrl);
  ld_buf_clear(&ctrl);
  assert_true(body->len < LD_GS_MAX_RPC_SIZE);
}

static void test_control_flood_is_capped(void **state) {
  (void)state;
  ph_raw_t r;
  raw_join(&r, LD_GS_ID_MESHSUB_12);
  uint64_t start = ld_now_ms();
  uint64_t frames0 = stats_a().frames_in;
  size_t a0 = g_in_a.messages;
  size_t b_published = 0;
  ld_buf_t body, frame;
  ld_buf_init(&body);
  ld_buf_init(&frame);
  for (int i = 0; i < FLOOD_RPCS && r.conn != NULL; i++) {
    ld_buf_reset(&body);
    ld_buf_reset(&frame);
    flood_body(&body);
    ph_frame(&frame, &body);
    int rc;
    while ((rc = ph_raw_send(&r, frame.data, frame.len)) == LD_ERR_LIMIT)
      sh_run_for(&g_loop, 5);
    if (rc != 0)
      break; /* A dropped us: that is a valid reaction too */
    if (i % 10 == 0) {
      char text[32];
      int n = snprintf(text, sizeof text, "during-flood-%d", i);
      assert_true(ld_gs_service_publish(g_b.gs, PH_TOPIC, (uint8_t *)text, (size_t)n) >= 1);
      b_published++;
    }
    uv_run(&g_loop, UV_RUN_NOWAIT);
  }
  ld_buf_clear(&body);
  ld_buf_clear(&frame);
  /* everything B published during the flood reaches A */
  wait_count(&g_in_a.messages, a0 + b_published);
  sh_run_for(&g_loop, 1500);
  uint64_t elapsed = ld_now_ms() - start;

  ld_gs_service_stats_t s = stats_a();
  printf("# flood: %llu RPCs handled in %llu ms, %llu control entries dropped, %zu IWANT ids "
         "asked of the flooder, %zu IHAVE ids offered\n",
         (unsigned long long)(s.frames_in - frames0), (unsigned long long)elapsed,
         (unsigned long long)s.router.ctrl_dropped, r.rx.iwant_ids,
         (size_t)FLOOD_RPCS * FLOOD_IHAVE_ENTRIES * FLOOD_IHAVE_IDS);
  assert_true(s.router.ctrl_dropped > 0);
  /* IWANTs towards the flooder stay within the per-heartbeat cap */
  ld_gs_service_config_t cfg;
  ph_config(&cfg, 0);
  uint64_t heartbeats = elapsed / cfg.params.heartbeat_ms + 2;
  assert_true(r.rx.iwant_ids <= cfg.params.max_ihave_len * heartbeats);
  assert_true(r.rx.iwant_ids < (size_t)FLOOD_RPCS * FLOOD_IHAVE_ENTRIES * FLOOD_IHAVE_IDS / 4);
  /* the random IWANTs were not served: the flooder got at most what B published meanwhile */
  assert_true(r.rx.messages <= b_published);
  assert_relays();
  ph_raw_stop(&r);
}

/* ---- a peer we cannot write to --------------------------------------------------------------- */

static bool c_knows_raw(void *ud) {
  const ph_node_t *c = ud;
  return ld_gs_service_topic_peers(c->gs, PH_TOPIC, NULL, 0) == 1;
}

static bool open_failed(void *ud) {
  const ph_node_t *c = ud;
  ld_gs_service_stats_t s;
  ld_gs_service_stats(c->gs, &s);
  return s.outbound_failed >= 1;
}

static void test_outbound_queue_capped(void **state) {
  (void)state;
  ph_node_t c;
  ld_gs_service_config_t cfg;
  ph_config(&cfg, 9);
  cfg.max_queued_bytes = 8192;
  ph_node_start(&c, &g_loop, &cfg);
  assert_int_equal(ld_gs_service_subscribe(c.gs, PH_TOPIC, NULL, NULL), 0);
  /* the raw peer talks to C but serves no pubsub protocol: C's frames for it can only wait */
  ph_raw_t r;
  ph_raw_start(&r, &g_loop, &c, "/test/not-pubsub/1.0.0");
  ph_raw_open(&r, LD_GS_ID_WAKU_RELAY);
  ph_raw_subscribe(&r);
  assert_true(sh_run_until(&g_loop, c_knows_raw, &c, WAIT_MS));
  uint8_t data[1024];
  for (int i = 0; i < 50; i++) {
    memset(data, i, sizeof data);
    assert_int_equal(ld_gs_service_publish(c.gs, PH_TOPIC, data, sizeof data), 1);
  }
  ld_gs_service_stats_t s;
  ld_gs_service_stats(c.gs, &s);
  ld_gs_peer_info_t info;
  memset(&info, 0, sizeof info);
  assert_int_equal(ld_gs_service_peers(c.gs, &info, 1), 1);
  printf("# %llu frames (%llu bytes) dropped for a peer we cannot write to\n",
         (unsigned long long)s.frames_dropped, (unsigned long long)s.bytes_dropped);
  assert_false(info.writable);
  assert_true(s.frames_dropped >= 40);
  assert_int_equal(info.rpcs_dropped, s.frames_dropped);
  assert_true(s.bytes_dropped >= 40 * sizeof data);
  assert_true(sh_run_until(&g_loop, open_failed, &c, WAIT_MS));
  assert_relays(); /* A and B are unaffected */
  ph_raw_stop(&r);
  ph_node_stop(&c, &g_loop);
}

int main(void) {
  ld_log_set_level(LD_LOG_WARN);
  uv_loop_init(&g_loop);
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_rpc_over_the_cap, setup, teardown),
      cmocka_unit_test_setup_teardown(test_invalid_messages_score_down_then_disconnect, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(test_control_flood_is_capped, setup, teardown),
      cmocka_unit_test_setup_teardown(test_outbound_queue_capped, setup, teardown),
  };
  int rc = cmocka_run_group_tests(tests, NULL, NULL);
  uv_run(&g_loop, UV_RUN_NOWAIT);
  uv_loop_close(&g_loop);
  return rc;
}
