/* Filter v2 over loopback TCP: a service node (switch + filter server fed through a real fan-out
 * at the filter stage) and light clients (switch + filter client) that dial it and never listen.
 * Subscribe, pushes, deduplication, ping, unsubscribe, unsubscribe-all, expiry without pings,
 * maintenance of vanished subscribers, 100 subscribers, limits (criteria, peers, rate), push
 * stream reuse and reopening, bounded queues, a subscriber without the push protocol, and
 * malformed requests that get no answer while other clients keep working. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <uv.h>

#include "base/error.h"
#include "node/fanout.h"
#include "p2p/reqresp.h"
#include "p2p/switch.h"
#include "switch_harness.h"
#include "waku/filter/client.h"
#include "waku/filter/server.h"

#define PS "/waku/2/rs/1/3"
#define T1 "/toychat/2/huilong/proto"
#define T2 "/toychat/2/other/proto"
#define T3 "/toychat/2/unsubscribed/proto"
#define WAIT_MS 10000
#define QUIET_MS 150

/* ---- nodes ---------------------------------------------------------------------------------- */

typedef struct received {
  int n;
  char topic[64];
  char payload[64];
  uint8_t hash[LD_WAKU_HASH_LEN];
  ld_peerid_t from;
} received_t;

typedef struct light {
  ld_switch_t *sw;
  ld_filter_client_t *fc;
  ld_conn_t *conn; /* to the service */
  received_t rx;
} light_t;

typedef struct service {
  ld_switch_t *sw;
  ld_filter_server_t *srv;
  ld_fanout_t *fanout;
  ld_multiaddr_t addr;
} service_t;

static uv_loop_t g_loop;
static service_t g_svc;

static ld_switch_t *new_switch(size_t max_connections) {
  ld_privkey_t key;
  assert_int_equal(ld_privkey_generate(&key, LD_KEY_ED25519), 0);
  ld_switch_config_t c;
  ld_switch_config_default(&c);
  c.loop = &g_loop;
  c.identity = &key;
  if (max_connections > 0)
    c.max_connections = max_connections;
  ld_switch_t *sw = ld_switch_new(&c);
  assert_non_null(sw);
  return sw;
}

static void filter_stage(const ld_fanout_message_t *m, void *ud) {
  ld_filter_server_handle_message(ud, m->pubsub_topic, m->msg, m->hash);
}

static void service_start(const ld_filter_server_config_t *cfg) {
  memset(&g_svc, 0, sizeof g_svc);
  g_svc.sw = new_switch(300);
  g_svc.srv = ld_filter_server_new(g_svc.sw, &g_loop, cfg);
  assert_non_null(g_svc.srv);
  assert_null(ld_filter_server_new(g_svc.sw, &g_loop, cfg)); /* the protocol is taken */
  g_svc.fanout = ld_fanout_new();
  assert_true(ld_fanout_add(g_svc.fanout, LD_FANOUT_FILTER, filter_stage, g_svc.srv) > 0);
  sh_listen_local(g_svc.sw, &g_svc.addr);
}

static void service_stop(void) {
  sh_switch_close(g_svc.sw, &g_loop);
  ld_filter_server_free(g_svc.srv);
  ld_fanout_free(g_svc.fanout);
  sh_run_for(&g_loop, 10);
}

static void on_push(const ld_filter_push_t *p, void *ud) {
  received_t *rx = ud;
  rx->n++;
  snprintf(rx->topic, sizeof rx->topic, "%s", p->pubsub_topic);
  size_t n =
      p->msg->payload_len < sizeof rx->payload - 1 ? p->msg->payload_len : sizeof rx->payload - 1;
  memcpy(rx->payload, p->msg->payload, n);
  rx->payload[n] = '\0';
  memcpy(rx->hash, p->hash, sizeof rx->hash);
  rx->from = *p->from;
}

static void light_start(light_t *l) {
  memset(l, 0, sizeof *l);
  l->sw = new_switch(0);
  int err = -1;
  l->fc = ld_filter_client_new(l->sw, NULL);
  assert_non_null(l->fc);
  ld_filter_client_set_push_handler(l->fc, on_push, &l->rx);
  l->conn = sh_dial_wait(l->sw, &g_loop, &g_svc.addr, &err);
  assert_int_equal(err, 0);
}

/* A light node without a filter client: requests by hand, an optional push handler of its own. */
static void bare_start(light_t *l) {
  memset(l, 0, sizeof *l);
  l->sw = new_switch(0);
  int err = -1;
  l->conn = sh_dial_wait(l->sw, &g_loop, &g_svc.addr, &err);
  assert_int_equal(err, 0);
}

static void light_stop(light_t *l) {
  sh_switch_close(l->sw, &g_loop);
  ld_filter_client_free(l->fc);
}

/* ---- requests ------------------------------------------------------------------------------- */

typedef struct result {
  bool done;
  int err;
  uint32_t code;
  uint32_t type;
  char desc[128];
  char id[64];
} result_t;

static void on_result(const ld_filter_result_t *r, void *ud) {
  result_t *res = ud;
  assert_false(res->done);
  res->done = true;
  res->err = r->err;
  res->code = r->status_code;
  res->type = r->type;
  snprintf(res->desc, sizeof res->desc, "%s", r->status_desc);
  snprintf(res->id, sizeof res->id, "%s", r->request_id);
}

static bool result_done(void *ud) {
  return ((result_t *)ud)->done;
}

static void wait_result(result_t *r) {
  assert_true(sh_run_until(&g_loop, result_done, r, WAIT_MS));
}

static result_t do_subscribe(light_t *l, const char *const *topics, size_t n) {
  result_t r = {0};
  assert_int_equal(ld_filter_client_subscribe(l->fc, l->conn, PS, topics, n, on_result, &r), 0);
  wait_result(&r);
  return r;
}

static result_t do_unsubscribe(light_t *l, const char *const *topics, size_t n) {
  result_t r = {0};
  assert_int_equal(ld_filter_client_unsubscribe(l->fc, l->conn, PS, topics, n, on_result, &r), 0);
  wait_result(&r);
  return r;
}

static result_t do_ping(light_t *l) {
  result_t r = {0};
  assert_int_equal(ld_filter_client_ping(l->fc, l->conn, on_result, &r), 0);
  wait_result(&r);
  return r;
}

static result_t do_unsubscribe_all(light_t *l) {
  result_t r = {0};
  assert_int_equal(ld_filter_client_unsubscribe_all(l->fc, l->conn, on_result, &r), 0);
  wait_result(&r);
  return r;
}

/* Raw exchanges on the subscribe protocol. */
typedef struct raw_result {
  bool done;
  int err;
  uint8_t data[256];
  size_t len;
} raw_result_t;

static void on_raw(const uint8_t *resp, size_t len, int err, void *ud) {
  raw_result_t *r = ud;
  r->done = true;
  r->err = err;
  r->len = len < sizeof r->data ? len : sizeof r->data;
  if (r->len > 0)
    memcpy(r->data, resp, r->len);
}

static bool raw_done(void *ud) {
  return ((raw_result_t *)ud)->done;
}

static void raw_request(light_t *l, const uint8_t *req, size_t len, raw_result_t *r) {
  memset(r, 0, sizeof *r);
  ld_reqresp_opts_t o = {.max_bytes = 70000, .frame_max = 65536, .timeout_ms = 5000};
  assert_int_equal(ld_reqresp_request(l->sw, l->conn, LD_FILTER_SUBSCRIBE_PROTOCOL, req, len, &o,
                                      on_raw, r, NULL),
                   0);
  assert_true(sh_run_until(&g_loop, raw_done, r, WAIT_MS));
}

/* Subscribes by hand (for nodes without a filter client) and checks the 200. */
static void raw_subscribe(light_t *l, const char *topic) {
  ld_filter_str_t id = {"raw", 3}, ps = {PS, strlen(PS)}, t = {topic, strlen(topic)};
  ld_buf_t b;
  ld_buf_init(&b);
  assert_int_equal(ld_filter_request_encode_topics(&id, LD_FILTER_SUBSCRIBE, &ps, &t, 1, &b), 0);
  raw_result_t r;
  raw_request(l, b.data, b.len, &r);
  ld_buf_clear(&b);
  assert_int_equal(r.err, 0);
  const uint8_t *body;
  size_t blen;
  assert_true(ld_reqresp_read_frame(r.data, r.len, sizeof r.data, &body, &blen) > 0);
  ld_filter_response_t resp;
  assert_int_equal(ld_filter_response_decode(body, blen, &resp), 0);
  assert_int_equal(resp.status_code, 200);
}

/* ---- messages ------------------------------------------------------------------------------- */

/* Dispatches a message with `payload` on (PS, content_topic) through the fan-out. */
static void publish(const char *content_topic, const char *payload, int64_t ts) {
  ld_waku_message_t m;
  ld_waku_message_init(&m);
  m.payload = (const uint8_t *)payload;
  m.payload_len = strlen(payload);
  m.content_topic = content_topic;
  m.content_topic_len = strlen(content_topic);
  m.timestamp = ts;
  ld_fanout_message_t fm = {.pubsub_topic = PS, .msg = &m, .own = true};
  assert_int_equal(ld_waku_message_hash(PS, &m, fm.hash), 0);
  assert_int_equal(ld_fanout_dispatch(g_svc.fanout, &fm), 1);
}

typedef struct count_wait {
  const int *counter;
  int want;
} count_wait_t;

static bool count_reached(void *ud) {
  const count_wait_t *w = ud;
  return *w->counter >= w->want;
}

static void wait_count(const int *counter, int want) {
  count_wait_t w = {counter, want};
  assert_true(sh_run_until(&g_loop, count_reached, &w, WAIT_MS));
}

static ld_filter_server_stats_t stats(void) {
  ld_filter_server_stats_t st;
  ld_filter_server_get_stats(g_svc.srv, &st);
  return st;
}

/* ---- setup ---------------------------------------------------------------------------------- */

static int setup(void **state) {
  (void)state;
  assert_int_equal(uv_loop_init(&g_loop), 0);
  return 0;
}

static int teardown(void **state) {
  (void)state;
  sh_run_for(&g_loop, 20);
  assert_int_equal(uv_loop_close(&g_loop), 0);
  return 0;
}

/* ---- tests ---------------------------------------------------------------------------------- */

static void subscribe_push_dedup_ping_unsubscribe(void **state) {
  (void)state;
  service_start(NULL);
  light_t a;
  light_start(&a);
  const char *topics[] = {T1, T2};
  result_t r = do_subscribe(&a, topics, 2);
  assert_int_equal(r.err, 0);
  assert_int_equal(r.code, 200);
  assert_string_equal(r.desc, "OK");
  assert_int_equal(strlen(r.id), LD_FILTER_REQUEST_ID_LEN);

  publish(T1, "hello", 1000);
  wait_count(&a.rx.n, 1);
  assert_string_equal(a.rx.topic, PS);
  assert_string_equal(a.rx.payload, "hello");
  assert_true(ld_peerid_equal(&a.rx.from, ld_switch_peer_id(g_svc.sw)));
  ld_waku_message_t m;
  ld_waku_message_init(&m);
  m.payload = (const uint8_t *)"hello";
  m.payload_len = 5;
  m.content_topic = T1;
  m.content_topic_len = strlen(T1);
  m.timestamp = 1000;
  uint8_t want[LD_WAKU_HASH_LEN];
  assert_int_equal(ld_waku_message_hash(PS, &m, want), 0);
  assert_memory_equal(a.rx.hash, want, sizeof want);

  /* the same message again within 2 minutes: not pushed */
  publish(T1, "hello", 1000);
  publish(T3, "not for us", 1001);
  publish(T2, "second", 1002);
  wait_count(&a.rx.n, 2);
  sh_run_for(&g_loop, QUIET_MS);
  assert_int_equal(a.rx.n, 2);
  assert_string_equal(a.rx.payload, "second");
  ld_filter_server_stats_t st = stats();
  assert_int_equal(st.duplicates, 1);
  assert_int_equal(st.pushes, 2);
  assert_int_equal(st.push_streams_opened, 1); /* one stream carries every push */

  r = do_ping(&a);
  assert_int_equal(r.code, 200);
  assert_int_equal(r.type, LD_FILTER_SUBSCRIBER_PING);

  const char *just_t1[] = {T1};
  r = do_unsubscribe(&a, just_t1, 1);
  assert_int_equal(r.code, 200);
  publish(T1, "after unsubscribe", 1003);
  publish(T2, "still subscribed", 1004);
  wait_count(&a.rx.n, 3);
  sh_run_for(&g_loop, QUIET_MS);
  assert_int_equal(a.rx.n, 3);
  assert_string_equal(a.rx.payload, "still subscribed");

  r = do_unsubscribe(&a, just_t1, 1); /* no longer subscribed to T1 */
  assert_int_equal(r.code, 404);
  assert_string_equal(r.desc, "NOT_FOUND: peer has no subscriptions");

  r = do_unsubscribe_all(&a);
  assert_int_equal(r.code, 200);
  assert_int_equal(stats().peers, 0);
  publish(T2, "after unsubscribe all", 1005);
  sh_run_for(&g_loop, QUIET_MS);
  assert_int_equal(a.rx.n, 3);
  r = do_ping(&a);
  assert_int_equal(r.code, 404);
  assert_string_equal(r.desc, "NOT_FOUND: peer has no subscriptions");
  r = do_unsubscribe_all(&a);
  assert_int_equal(r.code, 404);

  st = stats();
  assert_int_equal(st.requests[LD_FILTER_SUBSCRIBE], 1);
  assert_int_equal(st.requests[LD_FILTER_SUBSCRIBER_PING], 2);
  assert_int_equal(st.requests[LD_FILTER_UNSUBSCRIBE], 2);
  assert_int_equal(st.requests[LD_FILTER_UNSUBSCRIBE_ALL], 2);
  assert_int_equal(st.status_ok, 4);
  assert_int_equal(st.status_not_found, 3);
  light_stop(&a);
  service_stop();
}

static void bad_requests_are_answered_400(void **state) {
  (void)state;
  service_start(NULL);
  light_t a;
  light_start(&a);
  result_t r = do_subscribe(&a, NULL, 0);
  assert_int_equal(r.code, 400);
  assert_string_equal(r.desc, "BAD_REQUEST: pubsubTopic and contentTopics must be specified");
  const char *many[101];
  char names[101][24];
  for (int i = 0; i < 101; i++) {
    snprintf(names[i], sizeof names[i], "/app/1/t%d/proto", i);
    many[i] = names[i];
  }
  r = do_subscribe(&a, many, 101);
  assert_int_equal(r.code, 400);
  assert_string_equal(r.desc, "BAD_REQUEST: exceeds maximum content topics: 100");
  r = do_subscribe(&a, many, 100);
  assert_int_equal(r.code, 200);
  assert_int_equal(stats().criteria, 100);
  light_stop(&a);
  service_stop();
}

static void subscription_expires_without_ping(void **state) {
  (void)state;
  ld_filter_server_config_t cfg;
  ld_filter_server_config_default(&cfg);
  cfg.subscription_ttl_ms = 1500;
  cfg.maintenance_interval_ms = 60000; /* purged by hand below */
  service_start(&cfg);
  light_t a, b;
  light_start(&a);
  light_start(&b);
  const char *topics[] = {T1};
  assert_int_equal(do_subscribe(&a, topics, 1).code, 200);
  assert_int_equal(do_subscribe(&b, topics, 1).code, 200);
  /* b pings halfway, a does not */
  sh_run_for(&g_loop, 900);
  assert_int_equal(do_ping(&b).code, 200);
  sh_run_for(&g_loop, 900);
  publish(T1, "only b", 2000);
  wait_count(&b.rx.n, 1);
  sh_run_for(&g_loop, QUIET_MS);
  assert_int_equal(a.rx.n, 0);
  assert_int_equal(stats().peers, 2); /* a expired but not purged yet */
  ld_filter_server_maintain(g_svc.srv);
  assert_int_equal(stats().peers, 1);
  assert_int_equal(stats().expired_peers, 1);
  result_t r = do_ping(&a);
  assert_int_equal(r.code, 404);
  /* a subscribes again and receives again */
  assert_int_equal(do_subscribe(&a, topics, 1).code, 200);
  publish(T1, "both", 2001);
  wait_count(&a.rx.n, 1);
  wait_count(&b.rx.n, 2);
  light_stop(&a);
  light_stop(&b);
  service_stop();
}

static void maintenance_timer_purges_expired_and_vanished(void **state) {
  (void)state;
  ld_filter_server_config_t cfg;
  ld_filter_server_config_default(&cfg);
  cfg.subscription_ttl_ms = 200;
  cfg.maintenance_interval_ms = 100;
  service_start(&cfg);
  light_t a;
  light_start(&a);
  const char *topics[] = {T1};
  assert_int_equal(do_subscribe(&a, topics, 1).code, 200);
  assert_int_equal(stats().peers, 1);
  sh_run_for(&g_loop, 500);
  assert_int_equal(stats().peers, 0);
  /* a subscriber whose connection went away is dropped after one interval */
  ld_filter_server_set_subscription_ttl(g_svc.srv, 60000);
  assert_int_equal(do_subscribe(&a, topics, 1).code, 200);
  ld_conn_close(a.conn, 0, false);
  sh_run_for(&g_loop, 400);
  assert_int_equal(stats().peers, 0);
  assert_int_equal(stats().expired_peers, 2);
  light_stop(&a);
  service_stop();
}

#define MANY 100

static bool streams_opened(void *ud) {
  return stats().push_streams_opened >= (uintptr_t)ud;
}

static void hundred_subscribers(void **state) {
  (void)state;
  service_start(NULL);
  light_t *ls = calloc(MANY, sizeof *ls);
  assert_non_null(ls);
  const char *topics[] = {T1};
  for (int i = 0; i < MANY; i++) {
    light_start(&ls[i]);
    assert_int_equal(do_subscribe(&ls[i], topics, 1).code, 200);
  }
  assert_int_equal(stats().peers, MANY);
  assert_int_equal(stats().criteria, 1);
  /* the push streams were opened by the SUBSCRIBEs, before any message */
  assert_true(sh_run_until(&g_loop, streams_opened, (void *)(uintptr_t)MANY, WAIT_MS));
  for (int i = 0; i < MANY; i++) {
    ld_filter_client_stats_t cs;
    ld_filter_client_get_stats(ls[i].fc, &cs);
    assert_int_equal(cs.push_streams_open, 1);
  }
  publish(T1, "to everyone", 3000);
  for (int i = 0; i < MANY; i++) {
    wait_count(&ls[i].rx.n, 1);
    assert_string_equal(ls[i].rx.payload, "to everyone");
  }
  publish(T1, "again", 3001);
  for (int i = 0; i < MANY; i++)
    wait_count(&ls[i].rx.n, 2);
  ld_filter_server_stats_t st = stats();
  assert_int_equal(st.pushes, 2 * MANY);
  assert_int_equal(st.push_streams_opened, MANY);
  assert_int_equal(st.push_errors, 0);
  for (int i = 0; i < MANY; i++)
    light_stop(&ls[i]);
  free(ls);
  service_stop();
}

static void subscription_flood_is_capped(void **state) {
  (void)state;
  ld_filter_server_config_t cfg;
  ld_filter_server_config_default(&cfg);
  cfg.max_peers = 2;
  cfg.rate_limit_period_ms = 3600u * 1000; /* 30 an hour: no token comes back during the test */
  service_start(&cfg);
  light_t a, b, c;
  light_start(&a);
  light_start(&b);
  light_start(&c);
  /* criteria: 10 requests of 100 fill the 1000, the 11th is refused */
  static char names[1100][32];
  const char *batch[100];
  result_t r;
  for (int req = 0; req < 11; req++) {
    for (int i = 0; i < 100; i++) {
      snprintf(names[req * 100 + i], sizeof names[0], "/flood/1/t%d/proto", req * 100 + i);
      batch[i] = names[req * 100 + i];
    }
    r = do_subscribe(&a, batch, 100);
    assert_int_equal(r.code, req < 10 ? 200 : 503);
  }
  assert_string_equal(r.desc,
                      "SERVICE_UNAVAILABLE: peer has reached maximum number of filter criteria");
  ld_peerid_t pa = *ld_switch_peer_id(a.sw);
  assert_int_equal(
      ld_filter_subs_peer_criteria_count(ld_filter_server_subscriptions(g_svc.srv), &pa), 1000);
  /* peers: b fits, c does not */
  const char *topics[] = {T1};
  assert_int_equal(do_subscribe(&b, topics, 1).code, 200);
  r = do_subscribe(&c, topics, 1);
  assert_int_equal(r.code, 503);
  assert_string_equal(r.desc,
                      "SERVICE_UNAVAILABLE: node has reached maximum number of subscriptions: 2");
  /* rate: a has used 11 of its 30 requests */
  int ok = 0, limited = 0;
  for (int i = 0; i < 25; i++) {
    r = do_ping(&a);
    if (r.code == 200)
      ok++;
    if (r.code == 429) {
      limited++;
      assert_int_equal(r.err, 0); /* the "N/A" request ID is accepted for 429 */
      assert_string_equal(r.desc, "filter request rejected due rate limit exceeded");
    }
  }
  assert_int_equal(ok, 19);
  assert_int_equal(limited, 6);
  assert_int_equal(stats().status_too_many_requests, 6);
  /* others are not affected */
  assert_int_equal(do_ping(&b).code, 200);
  light_stop(&a);
  light_stop(&b);
  light_stop(&c);
  service_stop();
}

static void malformed_requests_get_no_answer(void **state) {
  (void)state;
  service_start(NULL);
  light_t bad, good;
  bare_start(&bad);
  light_start(&good);
  const char *topics[] = {T1};
  assert_int_equal(do_subscribe(&good, topics, 1).code, 200);

  raw_result_t r;
  const uint8_t garbage[] = {0x04, 0xff, 0xff, 0xff, 0xff}; /* one frame: not a protobuf */
  raw_request(&bad, garbage, sizeof garbage, &r);
  assert_int_equal(r.err, LD_ERR_PROTOCOL);   /* the stream ended with nothing */
  const uint8_t no_id[] = {0x02, 0x10, 0x01}; /* SUBSCRIBE without request_id */
  raw_request(&bad, no_id, sizeof no_id, &r);
  assert_int_equal(r.err, LD_ERR_PROTOCOL);
  const uint8_t bad_type[] = {0x05, 0x0a, 0x01, 0x78, 0x10, 0x09}; /* type 9 */
  raw_request(&bad, bad_type, sizeof bad_type, &r);
  assert_int_equal(r.err, LD_ERR_PROTOCOL);
  const uint8_t huge[] = {0xff, 0xff, 0xff, 0x7f}; /* frame prefix over the request cap */
  raw_request(&bad, huge, sizeof huge, &r);
  assert_true(r.err == LD_ERR_RESET || r.err == LD_ERR_PROTOCOL);
  const uint8_t ping_of_js[] = {0x05, 0x0a, 0x03, 'a', 'b', 'c'}; /* type omitted: a ping */
  raw_request(&bad, ping_of_js, sizeof ping_of_js, &r);
  assert_int_equal(r.err, 0);
  const uint8_t *body;
  size_t blen;
  assert_true(ld_reqresp_read_frame(r.data, r.len, sizeof r.data, &body, &blen) > 0);
  ld_filter_response_t resp;
  assert_int_equal(ld_filter_response_decode(body, blen, &resp), 0);
  assert_int_equal(resp.status_code, 404);
  assert_int_equal(resp.request_id.len, 3);
  assert_memory_equal(resp.request_id.data, "abc", 3);

  ld_filter_server_stats_t st = stats();
  assert_int_equal(st.decode_errors, 3);
  /* the other client is unaffected */
  publish(T1, "still works", 4000);
  wait_count(&good.rx.n, 1);
  assert_int_equal(do_ping(&good).code, 200);
  light_stop(&bad);
  light_stop(&good);
  service_stop();
}

/* ---- push streams seen from a hand-made subscriber ------------------------------------------ */

typedef struct push_sink {
  int streams;
  int frames;
  bool reset_first; /* reset the first stream after its first frame */
  ld_buf_t rx;
} push_sink_t;

static push_sink_t g_sink;

static void sink_data(ld_stream_t *s, const uint8_t *data, size_t len) {
  assert_int_equal(ld_buf_append(&g_sink.rx, data, len), 0);
  const uint8_t *body;
  size_t blen;
  int n;
  while ((n = ld_reqresp_read_frame(g_sink.rx.data, g_sink.rx.len, LD_FILTER_MAX_PUSH_SIZE, &body,
                                    &blen)) > 0) {
    ld_filter_push_frame_t f;
    assert_int_equal(ld_filter_push_decode(body, blen, &f), 0);
    g_sink.frames++;
    ld_buf_consume(&g_sink.rx, (size_t)n);
  }
  if (g_sink.reset_first && g_sink.streams == 1 && g_sink.frames == 1) {
    ld_buf_reset(&g_sink.rx);
    ld_stream_reset(s);
  }
}

static void sink_close(ld_stream_t *s, int err) {
  (void)s;
  (void)err;
}

static const ld_stream_handler_t k_sink = {.on_data = sink_data, .on_close = sink_close};

static void accept_sink(ld_stream_t *s, void *ud) {
  (void)ud;
  g_sink.streams++;
  ld_stream_set_handler(s, &k_sink, NULL);
}

static void push_stream_reopened_after_reset(void **state) {
  (void)state;
  service_start(NULL);
  light_t l;
  bare_start(&l);
  memset(&g_sink, 0, sizeof g_sink);
  ld_buf_init(&g_sink.rx);
  g_sink.reset_first = true;
  assert_int_equal(ld_switch_handle(l.sw, LD_FILTER_PUSH_PROTOCOL, accept_sink, NULL), 0);
  raw_subscribe(&l, T1);
  publish(T1, "one", 5000);
  wait_count(&g_sink.frames, 1);
  sh_run_for(&g_loop, 100); /* the reset reaches the service */
  publish(T1, "two", 5001);
  wait_count(&g_sink.frames, 2);
  assert_int_equal(g_sink.streams, 2);
  publish(T1, "three", 5002);
  wait_count(&g_sink.frames, 3);
  assert_int_equal(g_sink.streams, 2);
  assert_int_equal(stats().push_streams_opened, 2);
  light_stop(&l);
  ld_buf_clear(&g_sink.rx);
  service_stop();
}

static void burst_beyond_queue_is_dropped_and_counted(void **state) {
  (void)state;
  ld_filter_server_config_t cfg;
  ld_filter_server_config_default(&cfg);
  cfg.push_queue_max = 16;
  cfg.open_push_on_subscribe = false; /* the stream is opened by the first message */
  service_start(&cfg);
  light_t l;
  bare_start(&l);
  memset(&g_sink, 0, sizeof g_sink);
  ld_buf_init(&g_sink.rx);
  assert_int_equal(ld_switch_handle(l.sw, LD_FILTER_PUSH_PROTOCOL, accept_sink, NULL), 0);
  raw_subscribe(&l, T1);
  /* 40 messages before the push stream is open: 16 wait, 24 are dropped */
  char payload[32];
  for (int i = 0; i < 40; i++) {
    snprintf(payload, sizeof payload, "burst %d", i);
    publish(T1, payload, 6000 + i);
  }
  wait_count(&g_sink.frames, 16);
  sh_run_for(&g_loop, QUIET_MS);
  assert_int_equal(g_sink.frames, 16);
  ld_filter_server_stats_t st = stats();
  assert_int_equal(st.push_dropped, 24);
  assert_int_equal(st.pushes, 16);
  assert_int_equal(st.queued, 0);
  light_stop(&l);
  ld_buf_clear(&g_sink.rx);
  service_stop();
}

static void subscriber_without_push_protocol(void **state) {
  (void)state;
  service_start(NULL);
  light_t l;
  bare_start(&l);
  raw_subscribe(&l, T1);
  publish(T1, "nowhere", 7000);
  ld_filter_server_stats_t st;
  for (int i = 0; i < 200; i++) {
    sh_run_for(&g_loop, 10);
    st = stats();
    if (st.push_errors > 0)
      break;
  }
  assert_int_equal(st.push_errors, 1); /* one frame lost after the open and its one retry */
  assert_int_equal(st.pushes, 0);
  assert_int_equal(st.queued, 0);
  light_stop(&l);
  service_stop();
}

/* ---- the client's side of push streams ------------------------------------------------------ */

typedef struct opened {
  int n;
  ld_stream_t *s[4];
  int errs;
} opened_t;

static void quiet_close(ld_stream_t *s, int err) {
  (void)s;
  (void)err;
}

static const ld_stream_handler_t k_quiet = {.on_data = NULL, .on_close = quiet_close};

static void on_opened(ld_stream_t *s, int err, void *ud) {
  (void)err;
  opened_t *o = ud;
  if (s == NULL) {
    o->errs++;
    return;
  }
  ld_stream_set_handler(s, &k_quiet, NULL);
  o->s[o->n++] = s;
}

typedef struct open_wait {
  const opened_t *o;
  int want;
} open_wait_t;

static bool opened_enough(void *ud) {
  const open_wait_t *w = ud;
  return w->o->n + w->o->errs >= w->want;
}

static void write_push(ld_stream_t *s, const char *payload) {
  ld_waku_message_t m;
  ld_waku_message_init(&m);
  m.payload = (const uint8_t *)payload;
  m.payload_len = strlen(payload);
  m.content_topic = T1;
  m.content_topic_len = strlen(T1);
  ld_buf_t b;
  ld_buf_init(&b);
  assert_int_equal(ld_filter_push_encode(PS, strlen(PS), &m, &b), 0);
  /* split the frame in two writes: the client must reassemble it */
  assert_int_equal(ld_stream_write(s, b.data, 3), 0);
  assert_int_equal(ld_stream_write(s, b.data + 3, b.len - 3), 0);
  ld_buf_clear(&b);
}

static bool client_counted(void *ud) {
  light_t *l = ud;
  ld_filter_client_stats_t st;
  ld_filter_client_get_stats(l->fc, &st);
  return st.push_refused >= 1 && st.push_errors >= 1 && l->rx.n >= 3;
}

static void client_push_streams(void **state) {
  (void)state;
  service_start(NULL);
  light_t l;
  memset(&l, 0, sizeof l);
  l.sw = new_switch(0);
  ld_filter_client_config_t cc;
  ld_filter_client_config_default(&cc);
  cc.max_push_streams = 2;
  int err = -1;
  l.fc = ld_filter_client_new(l.sw, &cc);
  assert_non_null(l.fc);
  ld_filter_client_set_push_handler(l.fc, on_push, &l.rx);
  l.conn = sh_dial_wait(l.sw, &g_loop, &g_svc.addr, &err);
  assert_int_equal(err, 0);
  ld_conn_t *back = NULL;
  assert_int_equal(ld_switch_connections(g_svc.sw, &back, 1), 1);
  /* three push streams from the service side: the third is refused */
  opened_t o = {0};
  for (int i = 0; i < 3; i++) {
    const char *proto = LD_FILTER_PUSH_PROTOCOL;
    assert_int_equal(ld_switch_open_stream(g_svc.sw, back, &proto, 1, on_opened, &o), 0);
    open_wait_t w = {&o, i + 1};
    assert_true(sh_run_until(&g_loop, opened_enough, &w, WAIT_MS));
  }
  /* the refused stream may have negotiated before the client reset it */
  sh_run_for(&g_loop, 50);
  assert_true(o.n >= 2);
  write_push(o.s[0], "first");
  write_push(o.s[1], "second");
  write_push(o.s[0], "third");
  /* a frame without pubsub_topic ends the second stream */
  const uint8_t bad[] = {0x02, 0x0a, 0x00};
  assert_int_equal(ld_stream_write(o.s[1], bad, sizeof bad), 0);
  assert_true(sh_run_until(&g_loop, client_counted, &l, WAIT_MS));
  ld_filter_client_stats_t st;
  ld_filter_client_get_stats(l.fc, &st);
  assert_int_equal(st.pushes, 3);
  assert_int_equal(st.push_errors, 1);
  assert_int_equal(st.push_refused, 1);
  assert_int_equal(st.push_streams, 2);
  assert_int_equal(l.rx.n, 3);
  assert_true(ld_peerid_equal(&l.rx.from, ld_switch_peer_id(g_svc.sw)));
  /* EOF from the service ends the first stream cleanly */
  ld_stream_close_write(o.s[0]);
  for (int i = 0; i < 100; i++) {
    ld_filter_client_get_stats(l.fc, &st);
    if (st.push_streams_open == 0)
      break;
    sh_run_for(&g_loop, 10);
  }
  assert_int_equal(st.push_streams_open, 0);
  light_stop(&l);
  service_stop();
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(subscribe_push_dedup_ping_unsubscribe, setup, teardown),
      cmocka_unit_test_setup_teardown(bad_requests_are_answered_400, setup, teardown),
      cmocka_unit_test_setup_teardown(subscription_expires_without_ping, setup, teardown),
      cmocka_unit_test_setup_teardown(maintenance_timer_purges_expired_and_vanished, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(hundred_subscribers, setup, teardown),
      cmocka_unit_test_setup_teardown(subscription_flood_is_capped, setup, teardown),
      cmocka_unit_test_setup_teardown(malformed_requests_get_no_answer, setup, teardown),
      cmocka_unit_test_setup_teardown(push_stream_reopened_after_reset, setup, teardown),
      cmocka_unit_test_setup_teardown(burst_beyond_queue_is_dropped_and_counted, setup, teardown),
      cmocka_unit_test_setup_teardown(subscriber_without_push_protocol, setup, teardown),
      cmocka_unit_test_setup_teardown(client_push_streams, setup, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
