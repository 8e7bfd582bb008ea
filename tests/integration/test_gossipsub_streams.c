/* The gossipsub adapter's stream model and application API against real switches on loopback:
 * the outbound stream reopened after the peer resets it (with our subscriptions again), a newer
 * inbound stream replacing the older one, two connections to one peer forming one pubsub peer,
 * peer events, the ordered asynchronous validation pipeline (accept, reject, ignore, timeout),
 * and the subscription API's errors. */
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

#define WAIT_MS 10000
#define TOPIC2 "/waku/2/rs/1/1"

typedef struct inbox {
  size_t messages;
  char last[64];
  size_t last_len;
  bool last_from_set;
  ld_peerid_t last_from;
} inbox_t;

typedef struct peer_events {
  int up, down;
} peer_events_t;

static uv_loop_t g_loop;
static ph_node_t g_a, g_b;
static inbox_t g_in_a, g_in_b;
static peer_events_t g_ev_a;

/* ---- callbacks ------------------------------------------------------------------------------ */

static void on_message(ld_gs_service_t *svc, const char *topic, const uint8_t *data, size_t len,
                       const uint8_t id[LD_GS_MSG_ID_LEN], const ld_peerid_t *from,
                       void *user_data) {
  inbox_t *in = user_data;
  (void)svc;
  (void)topic;
  uint8_t expect[LD_GS_MSG_ID_LEN];
  ld_gs_msg_id(data, len, expect);
  assert_memory_equal(id, expect, LD_GS_MSG_ID_LEN);
  in->messages++;
  in->last_len = len < sizeof in->last ? len : sizeof in->last;
  memcpy(in->last, data, in->last_len);
  in->last_from_set = from != NULL;
  if (from != NULL)
    in->last_from = *from;
}

static void on_peer(ld_gs_service_t *svc, const ld_peerid_t *peer, bool up, void *ud) {
  peer_events_t *ev = ud;
  (void)svc;
  (void)peer;
  if (up)
    ev->up++;
  else
    ev->down++;
}

static const ld_gs_service_events_t events = {.on_peer = on_peer};

/* ---- helpers -------------------------------------------------------------------------------- */

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

static void start_a(uint32_t validation_timeout_ms) {
  memset(&g_in_a, 0, sizeof g_in_a);
  memset(&g_ev_a, 0, sizeof g_ev_a);
  ld_gs_service_config_t cfg;
  ph_config(&cfg, 11);
  cfg.validation_timeout_ms = validation_timeout_ms;
  ph_node_start(&g_a, &g_loop, &cfg);
  ld_gs_service_set_events(g_a.gs, &events, &g_ev_a);
  assert_int_equal(ld_gs_service_subscribe(g_a.gs, PH_TOPIC, on_message, &g_in_a), 0);
}

static void start_b(void) {
  memset(&g_in_b, 0, sizeof g_in_b);
  ld_gs_service_config_t cfg;
  ph_config(&cfg, 12);
  ph_node_start(&g_b, &g_loop, &cfg);
  assert_int_equal(ld_gs_service_subscribe(g_b.gs, PH_TOPIC, on_message, &g_in_b), 0);
}

static bool a_b_meshed(void *ud) {
  (void)ud;
  return ld_gs_service_mesh_peers(g_a.gs, PH_TOPIC, NULL, 0) >= 1 &&
         ld_gs_service_mesh_peers(g_b.gs, PH_TOPIC, NULL, 0) >= 1;
}

static void publish_text(ph_node_t *n, const char *text) {
  assert_true(ld_gs_service_publish(n->gs, PH_TOPIC, (const uint8_t *)text, strlen(text)) >= 1);
}

static void raw_publish(ph_raw_t *r, const char *text) {
  ld_buf_t body;
  ld_buf_init(&body);
  ph_rpc_msg(&body, PH_TOPIC, (const uint8_t *)text, strlen(text));
  ph_raw_send_rpc(r, &body);
  ld_buf_clear(&body);
}

static ld_gs_service_stats_t stats_a(void) {
  ld_gs_service_stats_t s;
  ld_gs_service_stats(g_a.gs, &s);
  return s;
}

/* ---- reopening ------------------------------------------------------------------------------ */

static bool hello_on_stream(void *ud) {
  const ph_raw_t *r = ud;
  return r->in != NULL && r->rx.last_stream_subscribes >= 1;
}

static size_t g_want_streams;

static bool streams_at_least(void *ud) {
  const ph_raw_t *r = ud;
  return r->rx.streams >= g_want_streams && r->in != NULL && r->rx.last_stream_subscribes >= 1;
}

static void test_outbound_reopened_after_reset(void **state) {
  (void)state;
  start_a(0);
  ph_raw_t r;
  ph_raw_start(&r, &g_loop, &g_a, LD_GS_ID_WAKU_RELAY);
  r.reset_next = 1; /* as js does with a stream it does not like */
  ph_raw_open(&r, LD_GS_ID_WAKU_RELAY);
  ph_raw_subscribe(&r); /* subscriptions in the first RPC, as js sends them */
  assert_true(sh_run_until(&g_loop, hello_on_stream, &r, WAIT_MS));
  assert_int_equal(r.rx.streams, 2);
  assert_int_equal(r.rx.streams_reset, 1);
  assert_int_equal(stats_a().outbound_opened, 2);
  assert_int_equal(ld_gs_service_topic_peers(g_a.gs, PH_TOPIC, NULL, 0), 1);
  assert_int_equal(g_ev_a.up, 1);

  /* an idle reset of the accepted stream (nim does this after 5 minutes): reopened after the
   * back-off, again starting with our subscriptions; A still knows the peer's subscriptions */
  ld_stream_reset(r.in);
  g_want_streams = 3;
  assert_true(sh_run_until(&g_loop, streams_at_least, &r, WAIT_MS));
  /* an EOF on it counts as the end of the stream too (go treats it so) */
  assert_int_equal(ld_stream_close_write(r.in), 0);
  g_want_streams = 4;
  assert_true(sh_run_until(&g_loop, streams_at_least, &r, WAIT_MS));
  assert_int_equal(ld_gs_service_topic_peers(g_a.gs, PH_TOPIC, NULL, 0), 1);
  assert_int_equal(g_ev_a.up, 1);
  assert_int_equal(g_ev_a.down, 0);
  size_t m0 = r.rx.messages;
  publish_text(&g_a, "after-reopen");
  wait_count(&r.rx.messages, m0 + 1);

  /* our own messages reach our own handler, without a propagating peer */
  assert_int_equal(g_in_a.messages, 1);
  assert_false(g_in_a.last_from_set);

  ph_raw_stop(&r);
  assert_int_equal(g_ev_a.down, 1);
  assert_int_equal(ph_peer_count(&g_a), 0);
  ph_node_stop(&g_a, &g_loop);
}

/* ---- inbound replacement -------------------------------------------------------------------- */

static void test_newer_inbound_stream_replaces_older(void **state) {
  (void)state;
  start_a(0);
  ph_raw_t r;
  ph_raw_start(&r, &g_loop, &g_a, LD_GS_ID_MESHSUB_12);
  ph_raw_open(&r, LD_GS_ID_MESHSUB_12);
  ph_raw_subscribe(&r);
  assert_true(sh_run_until(&g_loop, hello_on_stream, &r, WAIT_MS));
  uint64_t resets0 = stats_a().inbound_resets;
  ld_stream_t *first = r.out;
  ph_raw_open(&r, LD_GS_ID_MESHSUB_12);
  assert_ptr_not_equal(first, r.out);
  raw_publish(&r, "on-the-new-stream");
  wait_count(&g_in_a.messages, 1);
  assert_memory_equal(g_in_a.last, "on-the-new-stream", 17);
  assert_true(g_in_a.last_from_set);
  assert_true(ld_peerid_equal(&g_in_a.last_from, ld_switch_peer_id(r.sw)));
  assert_int_equal(stats_a().inbound_resets, resets0 + 1);
  assert_int_equal(ph_peer_count(&g_a), 1);
  assert_int_equal(stats_a().outbound_opened, 1);
  ph_raw_stop(&r);
  ph_node_stop(&g_a, &g_loop);
}

/* ---- two connections ------------------------------------------------------------------------ */

typedef struct dial_res {
  ld_conn_t *c;
  int err;
  bool done;
} dial_res_t;

static void dialed(ld_conn_t *c, int err, void *ud) {
  dial_res_t *d = ud;
  d->c = c;
  d->err = err;
  d->done = true;
}

static bool both_dialed(void *ud) {
  dial_res_t *d = ud;
  return d[0].done && d[1].done;
}

static bool one_writable_peer(void *ud) {
  ph_node_t *n = ud;
  ld_gs_peer_info_t info;
  return ld_gs_service_peers(n->gs, &info, 1) == 1 && info.writable;
}

static void test_two_connections_one_pubsub_peer(void **state) {
  (void)state;
  start_a(0);
  start_b();
  dial_res_t d[2] = {{0}};
  /* simultaneous dials in both directions give two connections */
  assert_int_equal(ld_switch_dial(g_a.sw, &g_b.addr, dialed, &d[0]), 0);
  assert_int_equal(ld_switch_dial(g_b.sw, &g_a.addr, dialed, &d[1]), 0);
  assert_true(sh_run_until(&g_loop, both_dialed, d, WAIT_MS));
  assert_int_equal(d[0].err, 0);
  assert_int_equal(d[1].err, 0);
  assert_true(sh_run_until(&g_loop, a_b_meshed, NULL, WAIT_MS));
  size_t conns = ld_switch_connections(g_a.sw, NULL, 0);
  assert_true(conns >= 1);
  ld_gs_peer_info_t info;
  assert_int_equal(ld_gs_service_peers(g_a.gs, &info, 1), 1);
  assert_int_equal(info.n_conns, conns);
  assert_int_equal(g_ev_a.up, 1);
  publish_text(&g_b, "two-conns-1");
  wait_count(&g_in_a.messages, 1);

  /* closing one connection keeps the peer; its stream moves to the other one if needed */
  ld_conn_t *list[4];
  assert_int_equal(ld_switch_connections(g_a.sw, list, 4), conns);
  size_t busiest = 0; /* the one carrying the pubsub streams */
  for (size_t i = 1; i < conns && i < 4; i++)
    if (ld_conn_stream_count(list[i]) > ld_conn_stream_count(list[busiest]))
      busiest = i;
  ld_gs_service_stats_t sb;
  ld_gs_service_stats(g_b.gs, &sb);
  uint64_t opened = stats_a().outbound_opened + sb.outbound_opened;
  ld_conn_close(list[busiest], LD_ERR_CLOSED, false);
  sh_run_for(&g_loop, 100);
  if (conns >= 2) {
    assert_true(sh_run_until(&g_loop, one_writable_peer, &g_a, WAIT_MS));
    assert_true(sh_run_until(&g_loop, one_writable_peer, &g_b, WAIT_MS));
    assert_int_equal(g_ev_a.down, 0);
    /* at least one side's stream was on the closed connection and moved */
    ld_gs_service_stats(g_b.gs, &sb);
    assert_true(stats_a().outbound_opened + sb.outbound_opened > opened);
    publish_text(&g_b, "two-conns-2");
    wait_count(&g_in_a.messages, 2);
    publish_text(&g_a, "two-conns-3");
    wait_count(&g_in_b.messages, 3); /* two from B itself, one from A */
  } else {
    print_message("# the switch merged the simultaneous dials into one connection\n");
    assert_int_equal(g_ev_a.down, 1);
  }
  ph_node_stop(&g_b, &g_loop);
  assert_int_equal(ph_peer_count(&g_a), 0);
  assert_int_equal(g_ev_a.down, 1);
  ph_node_stop(&g_a, &g_loop);
}

/* ---- validation pipeline -------------------------------------------------------------------- */

typedef struct vstate {
  int first_calls, second_calls;
  int order_errors;
  uint64_t first_seen[16];
  size_t n_first;
  uint64_t hang_token;
  uint64_t ok_token;
  bool ok_pending;
} vstate_t;

static vstate_t g_v;

static bool data_is(const uint8_t *data, size_t len, const char *text) {
  return len == strlen(text) && memcmp(data, text, len) == 0;
}

static void first_validator(ld_gs_service_t *svc, uint64_t token, const char *topic,
                            const uint8_t *data, size_t len, const ld_peerid_t *from, void *ud) {
  (void)topic;
  (void)data;
  (void)len;
  (void)ud;
  assert_non_null(from);
  g_v.first_calls++;
  if (g_v.n_first < 16)
    g_v.first_seen[g_v.n_first++] = token;
  assert_int_equal(ld_gs_service_validation_done(svc, token, LD_GS_ACCEPT), 0);
}

static void second_validator(ld_gs_service_t *svc, uint64_t token, const char *topic,
                             const uint8_t *data, size_t len, const ld_peerid_t *from, void *ud) {
  (void)from;
  (void)ud;
  assert_string_equal(topic, PH_TOPIC);
  g_v.second_calls++;
  bool seen = false;
  for (size_t i = 0; i < g_v.n_first; i++)
    seen = seen || g_v.first_seen[i] == token;
  if (!seen)
    g_v.order_errors++;
  if (data_is(data, len, "ign"))
    assert_int_equal(ld_gs_service_validation_done(svc, token, LD_GS_IGNORE), 0);
  else if (data_is(data, len, "rej"))
    assert_int_equal(ld_gs_service_validation_done(svc, token, LD_GS_REJECT), 0);
  else if (data_is(data, len, "hang"))
    g_v.hang_token = token;
  else {
    g_v.ok_token = token; /* answered later, from the test */
    g_v.ok_pending = true;
  }
}

static bool ok_pending(void *ud) {
  (void)ud;
  return g_v.ok_pending;
}

static bool topic_results(void *ud) {
  const uint64_t *want = ud; /* accepted, rejected, ignored */
  ld_gs_topic_stats_t ts;
  return ld_gs_service_topic_stats(g_a.gs, PH_TOPIC, &ts) == 0 && ts.accepted == want[0] &&
         ts.rejected == want[1] && ts.ignored == want[2];
}

static void test_validation_pipeline(void **state) {
  (void)state;
  memset(&g_v, 0, sizeof g_v);
  start_a(300);
  start_b();
  int v1 = ld_gs_service_add_validator(g_a.gs, NULL, first_validator, NULL);
  int v2 = ld_gs_service_add_validator(g_a.gs, PH_TOPIC, second_validator, NULL);
  assert_true(v1 > 0 && v2 > v1);
  assert_int_equal(ld_gs_service_add_validator(g_a.gs, "", first_validator, NULL),
                   LD_ERR_INVALID_ARG);
  assert_int_equal(ld_gs_service_subscribe(g_a.gs, TOPIC2, on_message, &g_in_a), 0);
  assert_int_equal(ld_gs_service_subscribe(g_b.gs, TOPIC2, NULL, NULL), 0);
  ph_connect(&g_loop, &g_b, &g_a);
  assert_true(sh_run_until(&g_loop, a_b_meshed, NULL, WAIT_MS));

  /* accepted only when the asynchronous answer comes */
  publish_text(&g_b, "fine");
  assert_true(sh_run_until(&g_loop, ok_pending, NULL, WAIT_MS));
  sh_run_for(&g_loop, 50);
  assert_int_equal(g_in_a.messages, 0);
  assert_int_equal(ld_gs_service_validation_done(g_a.gs, g_v.ok_token, 7), LD_ERR_INVALID_ARG);
  assert_int_equal(ld_gs_service_validation_done(g_a.gs, g_v.ok_token, LD_GS_ACCEPT), 0);
  wait_count(&g_in_a.messages, 1);
  assert_memory_equal(g_in_a.last, "fine", 4);

  publish_text(&g_b, "ign");
  publish_text(&g_b, "rej");
  publish_text(&g_b, "hang");
  uint64_t want[3] = {1, 1, 2};
  assert_true(sh_run_until(&g_loop, topic_results, want, WAIT_MS));
  ld_gs_service_stats_t s = stats_a();
  assert_int_equal(s.validations_timed_out, 1);
  assert_int_equal(ld_gs_service_validation_done(g_a.gs, g_v.hang_token, LD_GS_ACCEPT),
                   LD_ERR_NOT_FOUND);
  assert_int_equal(g_in_a.messages, 1);
  assert_int_equal(g_v.first_calls, 4);
  assert_int_equal(g_v.second_calls, 4);
  assert_int_equal(g_v.order_errors, 0);

  /* the other topic passes the first validator only */
  size_t before = g_in_a.messages;
  assert_true(ld_gs_service_publish(g_b.gs, TOPIC2, (const uint8_t *)"t2", 2) >= 1);
  wait_count(&g_in_a.messages, before + 1);
  assert_int_equal(g_v.first_calls, 5);
  assert_int_equal(g_v.second_calls, 4);

  /* without validators for it, a message is accepted at once */
  assert_int_equal(ld_gs_service_remove_validator(g_a.gs, v1), 0);
  assert_int_equal(ld_gs_service_remove_validator(g_a.gs, v1), LD_ERR_NOT_FOUND);
  assert_true(ld_gs_service_publish(g_b.gs, TOPIC2, (const uint8_t *)"t2-again", 8) >= 1);
  wait_count(&g_in_a.messages, before + 2);
  assert_int_equal(g_v.first_calls, 5);
  ph_node_stop(&g_b, &g_loop);
  ph_node_stop(&g_a, &g_loop);
}

/* ---- subscription API ----------------------------------------------------------------------- */

static void test_subscription_api(void **state) {
  (void)state;
  start_a(0);
  start_b();
  char long_topic[LD_GS_MAX_TOPIC_LEN + 2];
  memset(long_topic, 'x', sizeof long_topic - 1);
  long_topic[sizeof long_topic - 1] = '\0';
  assert_int_equal(ld_gs_service_subscribe(g_a.gs, "", on_message, NULL), LD_ERR_INVALID_ARG);
  assert_int_equal(ld_gs_service_subscribe(g_a.gs, long_topic, on_message, NULL),
                   LD_ERR_INVALID_ARG);
  assert_int_equal(ld_gs_service_unsubscribe(g_a.gs, TOPIC2), LD_ERR_NOT_FOUND);
  assert_true(ld_gs_service_subscribed(g_a.gs, PH_TOPIC));
  assert_false(ld_gs_service_subscribed(g_a.gs, TOPIC2));
  /* nobody to send to yet */
  assert_int_equal(ld_gs_service_publish(g_a.gs, TOPIC2, (const uint8_t *)"x", 1), 0);
  assert_int_equal(ld_gs_service_publish(g_a.gs, NULL, (const uint8_t *)"x", 1),
                   LD_ERR_INVALID_ARG);

  ph_connect(&g_loop, &g_a, &g_b);
  assert_true(sh_run_until(&g_loop, a_b_meshed, NULL, WAIT_MS));
  publish_text(&g_b, "while-subscribed");
  wait_count(&g_in_a.messages, 1);
  assert_int_equal(ld_gs_service_unsubscribe(g_a.gs, PH_TOPIC), 0);
  assert_false(ld_gs_service_subscribed(g_a.gs, PH_TOPIC));
  sh_run_for(&g_loop, 200);
  assert_int_equal(ld_gs_service_mesh_peers(g_b.gs, PH_TOPIC, NULL, 0), 0);
  /* publishing to a topic we left goes through fanout */
  size_t b0 = g_in_b.messages;
  publish_text(&g_a, "from-fanout");
  wait_count(&g_in_b.messages, b0 + 1);
  /* B knows A left: nobody to send to */
  assert_int_equal(
      ld_gs_service_publish(g_b.gs, PH_TOPIC, (const uint8_t *)"after-unsubscribe", 17), 0);
  sh_run_for(&g_loop, 300);
  assert_int_equal(g_in_a.messages, 1);
  ph_node_stop(&g_b, &g_loop);
  ph_node_stop(&g_a, &g_loop);
}

int main(void) {
  ld_log_set_level(LD_LOG_WARN);
  uv_loop_init(&g_loop);
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_outbound_reopened_after_reset),
      cmocka_unit_test(test_newer_inbound_stream_replaces_older),
      cmocka_unit_test(test_two_connections_one_pubsub_peer),
      cmocka_unit_test(test_validation_pipeline),
      cmocka_unit_test(test_subscription_api),
  };
  int rc = cmocka_run_group_tests(tests, NULL, NULL);
  uv_run(&g_loop, UV_RUN_NOWAIT);
  uv_loop_close(&g_loop);
  return rc;
}
