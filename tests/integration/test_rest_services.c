/* The lightpush, filter and store REST endpoints over real HTTP on loopback, against a REST
 * server whose operation tables are test doubles: they record what the endpoint handed over and
 * complete from a libuv timer (or at once, or never in time) with a scripted outcome. Checked:
 * the JSON in and out of every endpoint, nwaku's status code mapping, the filter message cache,
 * the timeouts, the "not mounted" answers, the malformed requests, and a server closed while
 * requests wait for the node. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <jansson.h>
#include <uv.h>

#include "base/clock.h"
#include "base/error.h"
#include "http_client.h"
#include "rest/server.h"
#include "rest_call.h"
#include "switch_harness.h"

#define TIMEOUT_MS 300 /* the servers' service timeout */
#define LATE_MS 600    /* a completion after it */
#define JSON_HDR REST_JSON_HDR
#define PEER "16Uiu2HAmAc9H4ckpNyweSv1f4Jk3A6kvyd6UT4bH26XLy2pr2paP"
#define TS_BIG "1712345678901234567"
#define CT_A "/app/1/a/proto"
#define CT_A_ENC "%2Fapp%2F1%2Fa%2Fproto"
#define CT_B "/app/1/b/proto"
#define CT_B_ENC "%2Fapp%2F1%2Fb%2Fproto"

/* ---- the scripted node ----------------------------------------------------------------------- */

typedef struct script {
  int rc;            /* returned by the operation; 0: complete */
  bool sync;         /* complete before returning */
  uint64_t delay_ms; /* otherwise complete after this long (default 5) */
  uint32_t code;
  const char *desc;
  uint32_t peers;
  int store_error;   /* ld_rest_store_result_t.error */
  bool store_full;   /* answer two entries and a cursor */
  bool close_server; /* close g_tmp 10 ms after the call */
} script_t;

typedef struct record {
  int calls;
  char op[32];
  bool pubsub_null;
  char pubsub[128];
  ld_waku_message_t msg;
  size_t n_topics;
  char topics[4][64];
  ld_rest_store_query_t q; /* scalars only */
  char peer[256];
  uint8_t hash0[32];
} record_t;

typedef enum job_kind { JOB_PUSH, JOB_FILTER, JOB_STORE } job_kind_t;

typedef struct job {
  uv_timer_t timer;
  job_kind_t kind;
  void *done;
  void *done_ud;
  script_t s;
} job_t;

static uv_loop_t g_loop;
static ld_switch_t *g_sw;
static ld_rest_server_t *g_full, *g_bare, *g_tmp;
static uint16_t g_full_port, g_bare_port, g_tmp_port;
static script_t g_script;
static record_t g_rec;
static int g_outstanding; /* completions not yet delivered */
static bool g_tmp_closed;

static void store_complete(ld_rest_store_done_fn done, void *ud, const script_t *s) {
  ld_waku_message_t m;
  ld_waku_message_init(&m);
  m.payload = (const uint8_t *)"hi";
  m.payload_len = 2;
  m.content_topic = CT_A;
  m.content_topic_len = strlen(CT_A);
  m.timestamp = 1712345678901234567LL;
  ld_rest_store_entry_t e[2];
  memset(e, 0, sizeof e);
  memset(e[0].hash, 0x11, 32);
  memset(e[1].hash, 0x22, 32);
  e[0].message = &m;
  e[0].pubsub_topic = "/waku/2/rs/0/0";
  uint8_t cursor[32];
  memset(cursor, 0x22, sizeof cursor);
  ld_rest_store_result_t res = {.error = s->store_error,
                                .status_code = s->code,
                                .status_desc = s->desc,
                                .request_id = "req-1",
                                .entries = s->store_full ? e : NULL,
                                .n_entries = s->store_full ? 2 : 0,
                                .cursor = s->store_full ? cursor : NULL};
  done(ud, &res);
}

static void complete(job_kind_t kind, void *done, void *ud, const script_t *s) {
  g_outstanding--;
  if (kind == JOB_PUSH)
    ((ld_rest_lightpush_done_fn)done)(ud, s->code, s->desc, s->peers);
  else if (kind == JOB_FILTER)
    ((ld_rest_filter_done_fn)done)(ud, s->code, s->desc);
  else
    store_complete((ld_rest_store_done_fn)done, ud, s);
}

static void on_job_closed(uv_handle_t *h) {
  free(h->data);
}

static void on_job(uv_timer_t *t) {
  job_t *j = t->data;
  complete(j->kind, j->done, j->done_ud, &j->s);
  uv_close((uv_handle_t *)&j->timer, on_job_closed);
}

static void on_tmp_closed(void *ud) {
  (void)ud;
  g_tmp_closed = true;
}

static void on_close_timer(uv_timer_t *t) {
  ld_rest_server_close(g_tmp, on_tmp_closed, NULL);
  g_tmp = NULL;
  uv_close((uv_handle_t *)t, on_job_closed);
}

/* Runs the script for one call: returns the operation's result. */
static int run_script(job_kind_t kind, void *done, void *ud) {
  script_t s = g_script;
  g_rec.calls++;
  if (s.close_server) {
    uv_timer_t *t = malloc(sizeof *t);
    uv_timer_init(&g_loop, t);
    t->data = t;
    uv_timer_start(t, on_close_timer, 10, 0);
  }
  if (s.rc != 0)
    return s.rc;
  g_outstanding++;
  if (s.sync) {
    complete(kind, done, ud, &s);
    return 0;
  }
  job_t *j = calloc(1, sizeof *j);
  j->kind = kind;
  j->done = done;
  j->done_ud = ud;
  j->s = s;
  uv_timer_init(&g_loop, &j->timer);
  j->timer.data = j;
  uv_timer_start(&j->timer, on_job, s.delay_ms > 0 ? s.delay_ms : 5, 0);
  return 0;
}

static void record_op(const char *op, const char *pubsub) {
  snprintf(g_rec.op, sizeof g_rec.op, "%s", op);
  g_rec.pubsub_null = pubsub == NULL;
  snprintf(g_rec.pubsub, sizeof g_rec.pubsub, "%s", pubsub != NULL ? pubsub : "");
}

static void record_topics(const char *const *topics, size_t n) {
  g_rec.n_topics = n;
  for (size_t i = 0; i < n && i < 4; i++)
    snprintf(g_rec.topics[i], sizeof g_rec.topics[i], "%s", topics[i]);
}

static int op_push(void *ud, const char *pubsub, const ld_waku_message_t *msg,
                   ld_rest_lightpush_done_fn done, void *done_ud) {
  record_op((const char *)ud, pubsub);
  assert_int_equal(ld_waku_message_copy(&g_rec.msg, msg), 0);
  return run_script(JOB_PUSH, (void *)done, done_ud);
}

static int op_push_legacy(void *ud, const char *pubsub, const ld_waku_message_t *msg,
                          ld_rest_lightpush_done_fn done, void *done_ud) {
  (void)ud;
  return op_push("push_legacy", pubsub, msg, done, done_ud);
}

static int op_subscribe(void *ud, const char *pubsub, const char *const *topics, size_t n,
                        ld_rest_filter_done_fn done, void *done_ud) {
  (void)ud;
  record_op("subscribe", pubsub);
  record_topics(topics, n);
  return run_script(JOB_FILTER, (void *)done, done_ud);
}

static int op_unsubscribe(void *ud, const char *pubsub, const char *const *topics, size_t n,
                          ld_rest_filter_done_fn done, void *done_ud) {
  (void)ud;
  record_op("unsubscribe", pubsub);
  record_topics(topics, n);
  return run_script(JOB_FILTER, (void *)done, done_ud);
}

static int op_unsubscribe_all(void *ud, ld_rest_filter_done_fn done, void *done_ud) {
  (void)ud;
  record_op("unsubscribe_all", NULL);
  return run_script(JOB_FILTER, (void *)done, done_ud);
}

static int op_ping(void *ud, ld_rest_filter_done_fn done, void *done_ud) {
  (void)ud;
  record_op("ping", NULL);
  return run_script(JOB_FILTER, (void *)done, done_ud);
}

static int op_query(void *ud, const ld_rest_store_query_t *q, ld_rest_store_done_fn done,
                    void *done_ud) {
  (void)ud;
  record_op("query", q->pubsub_topic);
  record_topics(q->content_topics, q->n_content_topics);
  g_rec.q = *q;
  g_rec.peer[0] = '\0';
  if (q->peer_addr != NULL)
    assert_true(ld_multiaddr_to_text(q->peer_addr, g_rec.peer, sizeof g_rec.peer) > 0);
  if (q->n_hashes > 0)
    memcpy(g_rec.hash0, q->hashes[0], 32);
  return run_script(JOB_STORE, (void *)done, done_ud);
}

static ld_rest_lightpush_ops_t g_lightpush = {op_push, NULL, "push"};
static const ld_rest_filter_ops_t g_filter = {op_subscribe, op_unsubscribe, op_unsubscribe_all,
                                              op_ping, NULL};
static const ld_rest_store_ops_t g_store = {op_query, NULL};

/* Resets the record and sets the next outcome. */
static void script(script_t s) {
  ld_waku_message_clear(&g_rec.msg);
  memset(&g_rec, 0, sizeof g_rec);
  ld_waku_message_init(&g_rec.msg);
  g_script = s;
}

/* ---- servers --------------------------------------------------------------------------------- */

static size_t no_addrs(void *ud, ld_multiaddr_t *out, size_t max) {
  (void)ud;
  (void)out;
  (void)max;
  return 0;
}

static ld_rest_server_t *start_server(bool services, uint16_t *port) {
  ld_rest_context_t ctx;
  memset(&ctx, 0, sizeof ctx);
  ctx.loop = &g_loop;
  ctx.sw = g_sw;
  ctx.listen_addrs = no_addrs;
  if (services) {
    ctx.lightpush = &g_lightpush;
    ctx.filter = &g_filter;
    ctx.store = &g_store;
    ctx.service_timeout_ms = TIMEOUT_MS;
  }
  ld_rest_config_t cfg;
  ld_rest_config_default(&cfg);
  cfg.port = 0;
  ld_rest_server_t *srv = NULL;
  assert_int_equal(ld_rest_server_new(&ctx, &cfg, &srv), 0);
  *port = ld_rest_server_port(srv);
  return srv;
}

static void pump_until(bool *flag) {
  uint64_t deadline = ld_now_ms() + 5000;
  while (!*flag && ld_now_ms() < deadline)
    uv_run(&g_loop, UV_RUN_ONCE);
  assert_true(*flag);
}

static void on_closed(void *ud) {
  *(bool *)ud = true;
}

static void close_server(ld_rest_server_t *srv) {
  bool closed = false;
  ld_rest_server_close(srv, on_closed, &closed);
  pump_until(&closed);
}

static int setup(void **state) {
  (void)state;
  uv_loop_init(&g_loop);
  ld_privkey_t key;
  assert_int_equal(ld_privkey_generate(&key, LD_KEY_ED25519), 0);
  ld_switch_config_t c;
  ld_switch_config_default(&c);
  c.loop = &g_loop;
  c.identity = &key;
  g_sw = ld_switch_new(&c);
  assert_non_null(g_sw);
  g_full = start_server(true, &g_full_port);
  g_bare = start_server(false, &g_bare_port);
  ld_waku_message_init(&g_rec.msg);
  return 0;
}

/* Lets every scripted completion arrive (late ones included). */
static void drain(void) {
  uint64_t deadline = ld_now_ms() + 5000;
  while (g_outstanding > 0 && ld_now_ms() < deadline)
    uv_run(&g_loop, UV_RUN_ONCE);
  assert_int_equal(g_outstanding, 0);
}

static int teardown(void **state) {
  (void)state;
  drain();
  close_server(g_full);
  close_server(g_bare);
  sh_switch_close(g_sw, &g_loop);
  uv_run(&g_loop, UV_RUN_DEFAULT);
  ld_waku_message_clear(&g_rec.msg);
  assert_int_equal(uv_loop_close(&g_loop), 0); /* no timer or handle left behind */
  return 0;
}

/* ---- requests -------------------------------------------------------------------------------- */

static http_response_t call_ct(uint16_t port, const char *method, const char *path,
                               const char *headers, const char *body) {
  return rest_call(&g_loop, port, method, path, headers, body);
}

static http_response_t call(uint16_t port, const char *method, const char *path, const char *body) {
  return rest_call_json(&g_loop, port, method, path, body);
}

/* Asserts the status, the content type (when given) and the exact body (when given). */
static void expect_ct(uint16_t port, const char *method, const char *path, const char *body,
                      int status, const char *ctype, const char *text) {
  http_response_t r = call(port, method, path, body);
  char ct[64] = "";
  http_header(&r, "Content-Type", ct, sizeof ct);
  if (r.status != status || (text != NULL && strcmp(r.body, text) != 0))
    print_error("%s %s -> %d %s\n", method, path, r.status, r.body);
  assert_int_equal(r.status, status);
  if (ctype != NULL)
    assert_string_equal(ct, ctype);
  if (text != NULL)
    assert_string_equal(r.body, text);
  http_response_free(&r);
}

static void expect(uint16_t port, const char *method, const char *path, const char *body,
                   int status, const char *text) {
  expect_ct(port, method, path, body, status, NULL, text);
}

static void expect_json(uint16_t port, const char *method, const char *path, const char *body,
                        int status, const char *text) {
  expect_ct(port, method, path, body, status, "application/json", text);
}

/* ---- lightpush ------------------------------------------------------------------------------- */

#define PUSH_MSG                                                                                   \
  "{\"payload\":\"aGVsbG8=\",\"contentTopic\":\"" CT_A "\",\"timestamp\":" TS_BIG                  \
  ",\"meta\":\"bWV0YQ==\",\"ephemeral\":true}"
#define LP3 "/lightpush/v3/message"
#define LP1 "/lightpush/v1/message"

static void lightpush_v3_publishes(void **state) {
  (void)state;
  script((script_t){.code = 200, .peers = 3});
  expect_json(g_full_port, "POST", LP3,
              "{\"pubsubTopic\":\"/waku/2/rs/0/3\",\"message\":" PUSH_MSG "}", 200,
              "{\"relayPeerCount\":3}");
  assert_int_equal(g_rec.calls, 1);
  assert_string_equal(g_rec.op, "push");
  assert_string_equal(g_rec.pubsub, "/waku/2/rs/0/3");
  assert_int_equal(g_rec.msg.payload_len, 5);
  assert_memory_equal(g_rec.msg.payload, "hello", 5);
  assert_int_equal(g_rec.msg.content_topic_len, strlen(CT_A));
  assert_memory_equal(g_rec.msg.content_topic, CT_A, strlen(CT_A));
  assert_true(g_rec.msg.timestamp == 1712345678901234567LL);
  assert_int_equal(g_rec.msg.meta_len, 4);
  assert_true(g_rec.msg.ephemeral);
  /* no pubsub topic (or "") lets the node autoshard; no timestamp becomes now; a completion
   * inside the call is fine */
  uint64_t before = ld_wall_ns();
  script((script_t){.code = 200, .peers = 1, .sync = true});
  expect_json(g_full_port, "POST", LP3,
              "{\"pubsubTopic\":\"\",\"message\":{\"payload\":\"AQ==\",\"contentTopic\":\"" CT_A
              "\"}}",
              200, "{\"relayPeerCount\":1}");
  assert_true(g_rec.pubsub_null);
  assert_true(g_rec.msg.timestamp >= (int64_t)before &&
              g_rec.msg.timestamp <= (int64_t)ld_wall_ns());
}

static void lightpush_v3_status_codes(void **state) {
  (void)state;
  const char *body = "{\"message\":" PUSH_MSG "}";
  script((script_t){.code = 505, .desc = "No peers for topic, skipping publish"});
  expect_json(g_full_port, "POST", LP3, body, 505,
              "{\"statusDesc\":\"No peers for topic, skipping publish\"}");
  /* 420 is no HTTP status nwaku's library knows: 500 */
  script((script_t){.code = 420, .desc = "RLN validation failed"});
  expect_json(g_full_port, "POST", LP3, body, 500, "{\"statusDesc\":\"RLN validation failed\"}");
  script((script_t){.code = 429, .desc = "Request rejected due to too many requests"});
  expect_json(g_full_port, "POST", LP3, body, 429,
              "{\"statusDesc\":\"Request rejected due to too many requests\"}");
  script((script_t){.code = 504, .desc = NULL});
  expect_json(g_full_port, "POST", LP3, body, 504, "{}");
  /* the node has no service peer, or fails at once */
  script((script_t){.rc = LD_ERR_NOT_FOUND});
  expect_json(g_full_port, "POST", LP3, body, 503,
              "{\"statusDesc\":\"No suitable service peer & no discovery method\"}");
  script((script_t){.rc = LD_ERR_IO});
  expect_json(g_full_port, "POST", LP3, body, 500, "{\"statusDesc\":\"input/output error\"}");
  /* no answer in time: 503, and the late completion is dropped */
  script((script_t){.code = 200, .peers = 2, .delay_ms = LATE_MS});
  expect_json(g_full_port, "POST", LP3, body, 503, "{\"statusDesc\":\"Push request timed out\"}");
  drain();
}

static void lightpush_v3_bad_requests(void **state) {
  (void)state;
  script((script_t){.code = 200});
  expect_json(g_full_port, "POST", LP3, NULL, 400,
              "{\"statusDesc\":\"Invalid push request! Missing content body\"}");
  http_response_t r = call(g_full_port, "POST", LP3, "{\"message\":");
  assert_int_equal(r.status, 400);
  assert_non_null(strstr(r.body, "{\"statusDesc\":\"Invalid push request! Invalid content body"));
  http_response_free(&r);
  expect_json(g_full_port, "POST", LP3, "{\"pubsubTopic\":\"/waku/2/rs/0/0\"}", 400,
              "{\"statusDesc\":\"Invalid push request! Field `message` is missing\"}");
  expect_json(g_full_port, "POST", LP3,
              "{\"message\":{\"payload\":\"\",\"contentTopic\":\"" CT_A "\"}}", 400,
              "{\"statusDesc\":\"Invalid push request! Field `payload` is missing or empty\"}");
  expect_json(g_full_port, "POST", LP3, "{\"message\":{\"payload\":\"aGk=\"}}", 400,
              "{\"statusDesc\":\"Invalid push request! Field `contentTopic` is missing or "
              "empty\"}");
  expect_json(g_full_port, "POST", LP3,
              "{\"message\":{\"payload\":\"%%%\",\"contentTopic\":\"" CT_A "\"}}", 400,
              "{\"statusDesc\":\"Invalid message! Incorrect base64 string in field `payload`\"}");
  expect_json(g_full_port, "POST", LP3, "{\"message\":" PUSH_MSG ",\"message\":" PUSH_MSG "}", 400,
              NULL);
  r = call_ct(g_full_port, "POST", LP3, "Content-Type: application/xml\r\n",
              "{\"message\":" PUSH_MSG "}");
  assert_int_equal(r.status, 400);
  assert_string_equal(r.body, "{\"statusDesc\":\"Invalid push request! Wrong Content-Type, "
                              "expected application/json or text/plain\"}");
  http_response_free(&r);
  assert_int_equal(g_rec.calls, 0);
}

static void lightpush_legacy(void **state) {
  (void)state;
  const char *body = "{\"pubsubTopic\":\"/waku/2/rs/0/0\",\"message\":" PUSH_MSG "}";
  /* without push_legacy the v3 operation serves it */
  script((script_t){.code = 200, .peers = 1});
  expect_ct(g_full_port, "POST", LP1, body, 200, "text/plain", "OK");
  assert_string_equal(g_rec.op, "push");
  script((script_t){.code = 429, .desc = "TOO_MANY_REQUESTS"});
  expect(g_full_port, "POST", LP1, body, 429, "Request rate limmit reached");
  script((script_t){.code = 505, .desc = "not_published_to_any_peer"});
  expect(g_full_port, "POST", LP1, body, 503,
         "Failed to request a message push: not_published_to_any_peer");
  script((script_t){.rc = LD_ERR_NOT_FOUND});
  expect(g_full_port, "POST", LP1, body, 503, "No suitable service peer & no discovery method");
  script((script_t){.code = 200, .delay_ms = LATE_MS});
  expect(g_full_port, "POST", LP1, body, 503, "Push request timed out");
  drain();
  script((script_t){.code = 200});
  expect(g_full_port, "POST", LP1, NULL, 400, "Missing content body");
  expect(g_full_port, "POST", LP1, "{\"message\":{\"payload\":\"%%\",\"contentTopic\":\"x\"}}", 400,
         "Invalid message: Incorrect base64 string in field `payload`");
  expect(g_full_port, "POST", LP1, "{}", 400,
         "Invalid content body, could not decode: Field `message` is missing");
  assert_int_equal(g_rec.calls, 0);
}

static void lightpush_legacy_operation(void **state) {
  (void)state;
  /* a server whose node offers legacy lightpush uses it for /v1 */
  g_lightpush.push_legacy = op_push_legacy;
  g_tmp = start_server(true, &g_tmp_port);
  g_lightpush.push_legacy = NULL;
  script((script_t){.code = 200});
  expect(g_tmp_port, "POST", LP1, "{\"message\":" PUSH_MSG "}", 200, "OK");
  assert_string_equal(g_rec.op, "push_legacy");
  script((script_t){.code = 200, .peers = 4});
  expect(g_tmp_port, "POST", LP3, "{\"message\":" PUSH_MSG "}", 200, "{\"relayPeerCount\":4}");
  assert_string_equal(g_rec.op, "push");
  close_server(g_tmp);
  g_tmp = NULL;
}

/* ---- filter ---------------------------------------------------------------------------------- */

#define SUBS "/filter/v2/subscriptions"
#define MSGS "/filter/v2/messages/"

static void push_to_cache(const char *ct, const char *payload) {
  ld_waku_message_t m;
  ld_waku_message_init(&m);
  m.payload = (const uint8_t *)payload;
  m.payload_len = strlen(payload);
  m.content_topic = ct;
  m.content_topic_len = strlen(ct);
  m.timestamp = 1712345678901234567LL;
  ld_rest_server_filter_push(g_full, "/waku/2/rs/0/1", &m);
}

static void filter_subscribe_and_read_messages(void **state) {
  (void)state;
  expect(g_full_port, "GET", MSGS CT_A_ENC, NULL, 400, "Not subscribed to topic: " CT_A);
  script((script_t){.code = 200, .desc = "OK"});
  expect_json(
      g_full_port, "POST", SUBS,
      "{\"requestId\":\"1234\",\"pubsubTopic\":\"/waku/2/rs/0/1\",\"contentFilters\":[\"" CT_A
      "\",\"" CT_B "\"]}",
      200, "{\"requestId\":\"1234\",\"statusDesc\":\"OK\"}");
  assert_string_equal(g_rec.op, "subscribe");
  assert_string_equal(g_rec.pubsub, "/waku/2/rs/0/1");
  assert_int_equal(g_rec.n_topics, 2);
  assert_string_equal(g_rec.topics[1], CT_B);
  expect_json(g_full_port, "GET", MSGS CT_A_ENC, NULL, 200, "[]");
  /* pushed messages: only subscribed content topics are kept, an identical one once */
  push_to_cache(CT_A, "one");
  push_to_cache(CT_A, "one");
  push_to_cache("/app/1/other/proto", "x");
  push_to_cache(CT_B, "two");
  expect_json(g_full_port, "GET", MSGS CT_A_ENC, NULL, 200,
              "[{\"payload\":\"b25l\",\"contentTopic\":\"" CT_A
              "\",\"version\":0,\"timestamp\":" TS_BIG ",\"ephemeral\":false}]");
  expect_json(g_full_port, "GET", MSGS CT_A_ENC, NULL, 200, "[]");
  expect(g_full_port, "GET", MSGS "%2Fapp%2F1%2Fother%2Fproto", NULL, 400,
         "Not subscribed to topic: /app/1/other/proto");
  /* PUT works as POST; without pubsubTopic the node autoshards */
  script((script_t){.code = 200});
  expect_json(g_full_port, "PUT", SUBS, "{\"requestId\":\"5\",\"contentFilters\":[\"" CT_A "\"]}",
              200, "{\"requestId\":\"5\",\"statusDesc\":\"OK\"}");
  assert_true(g_rec.pubsub_null);
  /* unsubscribing forgets the topic and drops its messages */
  push_to_cache(CT_A, "three");
  script((script_t){.code = 200});
  expect_json(g_full_port, "DELETE", SUBS,
              "{\"requestId\":\"4321\",\"contentFilters\":[\"" CT_A "\"]}", 200,
              "{\"requestId\":\"4321\",\"statusDesc\":\"OK\"}");
  assert_string_equal(g_rec.op, "unsubscribe");
  expect(g_full_port, "GET", MSGS CT_A_ENC, NULL, 400, "Not subscribed to topic: " CT_A);
  expect_json(g_full_port, "GET", MSGS CT_B_ENC, NULL, 200,
              "[{\"payload\":\"dHdv\",\"contentTopic\":\"" CT_B
              "\",\"version\":0,\"timestamp\":" TS_BIG ",\"ephemeral\":false}]");
  /* unsubscribing from all empties the cache */
  push_to_cache(CT_B, "four");
  script((script_t){.code = 200});
  expect_json(g_full_port, "DELETE", SUBS "/all", "{\"requestId\":\"2143\"}", 200,
              "{\"requestId\":\"2143\",\"statusDesc\":\"OK\"}");
  assert_string_equal(g_rec.op, "unsubscribe_all");
  expect(g_full_port, "GET", MSGS CT_B_ENC, NULL, 400, "Not subscribed to topic: " CT_B);
  push_to_cache(CT_B, "five");
  expect(g_full_port, "GET", MSGS CT_B_ENC, NULL, 400, "Not subscribed to topic: " CT_B);
}

static void filter_ping(void **state) {
  (void)state;
  script((script_t){.code = 200, .desc = "OK"});
  expect_json(g_full_port, "GET", SUBS "/9999", NULL, 200,
              "{\"requestId\":\"9999\",\"statusDesc\":\"OK\"}");
  assert_string_equal(g_rec.op, "ping");
  script((script_t){.code = 404, .desc = "NOT_FOUND: peer has no subscriptions"});
  expect_json(g_full_port, "GET", SUBS "/9977", NULL, 404,
              "{\"requestId\":\"9977\",\"statusDesc\":\"NOT_FOUND: peer has no subscriptions\"}");
  script((script_t){.code = 200, .delay_ms = LATE_MS});
  expect_json(g_full_port, "GET", SUBS "/1", NULL, 503,
              "{\"requestId\":\"1\",\"statusDesc\":\"SERVICE_UNAVAILABLE: Ping timed out\"}");
  drain();
}

static void filter_status_codes(void **state) {
  (void)state;
  const char *body = "{\"requestId\":\"7\",\"contentFilters\":[\"" CT_A "\"]}";
  static const struct {
    uint32_t code;
    const char *desc;
    int http;
    const char *answer;
  } cases[] = {
      {300, "decode_rpc_failure", 500, "decode_rpc_failure"},
      {400, "BAD_REQUEST: pubsubTopic and contentTopics must be specified", 400,
       "BAD_REQUEST: pubsubTopic and contentTopics must be specified"},
      {429, "TOO_MANY_REQUESTS: too many requests", 429, "TOO_MANY_REQUESTS: too many requests"},
      {503, "SERVICE_UNAVAILABLE: node has reached maximum number of subscriptions: 5", 503,
       "SERVICE_UNAVAILABLE: node has reached maximum number of subscriptions: 5"},
      {504, "/ip4/127.0.0.1/tcp/1/p2p/" PEER, 504, "/ip4/127.0.0.1/tcp/1/p2p/" PEER},
      {0, "whatever", 200, "UNKNOWN"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    script((script_t){.code = cases[i].code, .desc = cases[i].desc});
    char expect_body[256];
    snprintf(expect_body, sizeof expect_body, "{\"requestId\":\"7\",\"statusDesc\":\"%s\"}",
             cases[i].answer);
    expect_json(g_full_port, "POST", SUBS, body, cases[i].http, expect_body);
  }
  script((script_t){.rc = LD_ERR_NOT_FOUND});
  expect_json(g_full_port, "DELETE", SUBS, body, 503,
              "{\"requestId\":\"7\",\"statusDesc\":\"SERVICE_UNAVAILABLE: No suitable service "
              "peer & no discovery method\"}");
  script((script_t){.rc = LD_ERR_NOMEM});
  expect(g_full_port, "DELETE", SUBS "/all", "{\"requestId\":\"7\"}", 500, "out of memory");
  /* timeouts: nwaku's texts, and the cache is left alone */
  script((script_t){.code = 200, .delay_ms = LATE_MS});
  expect_json(g_full_port, "POST", SUBS, "{\"requestId\":\"8\",\"contentFilters\":[\"/t/1/o/p\"]}",
              503,
              "{\"requestId\":\"8\",\"statusDesc\":\"SERVICE_UNAVAILABLE: Subscription request "
              "timed out\"}");
  drain();
  expect(g_full_port, "GET", MSGS "%2Ft%2F1%2Fo%2Fp", NULL, 400,
         "Not subscribed to topic: /t/1/o/p");
  script((script_t){.code = 200, .delay_ms = LATE_MS});
  expect_json(g_full_port, "DELETE", SUBS, body, 503,
              "{\"requestId\":\"7\",\"statusDesc\":\"SERVICE_UNAVAILABLE: Failed to unsubscribe "
              "from contentFilters due to timeout!\"}");
  script((script_t){.code = 200, .delay_ms = LATE_MS});
  expect_json(g_full_port, "DELETE", SUBS "/all", "{\"requestId\":\"9\"}", 503,
              "{\"requestId\":\"9\",\"statusDesc\":\"SERVICE_UNAVAILABLE: Failed to unsubscribe "
              "from all contentFilters due to timeout!\"}");
  drain();
}

static void filter_bad_requests(void **state) {
  (void)state;
  script((script_t){.code = 200});
  const char *prefix = "{\"requestId\":\"unknown\",\"statusDesc\":\"BAD_REQUEST: Failed to "
                       "decode request: ";
  char text[512];
  snprintf(text, sizeof text, "%sMissing content body\"}", prefix);
  expect_json(g_full_port, "POST", SUBS, NULL, 400, text);
  snprintf(text, sizeof text, "%sField `requestId` is missing\"}", prefix);
  expect_json(g_full_port, "POST", SUBS, "{\"contentFilters\":[\"" CT_A "\"]}", 400, text);
  snprintf(text, sizeof text, "%sField `contentFilters` is empty\"}", prefix);
  expect_json(g_full_port, "DELETE", SUBS, "{\"requestId\":\"1\",\"contentFilters\":[]}", 400,
              text);
  snprintf(text, sizeof text, "%sField `requestId` is missing\"}", prefix);
  expect_json(g_full_port, "DELETE", SUBS "/all", "{}", 400, text);
  http_response_t r = call_ct(g_full_port, "POST", SUBS, "Content-Type: text/plain\r\n",
                              "{\"requestId\":\"1\",\"contentFilters\":[\"" CT_A "\"]}");
  assert_int_equal(r.status, 400);
  snprintf(text, sizeof text, "%sWrong Content-Type, expected application/json\"}", prefix);
  assert_string_equal(r.body, text);
  http_response_free(&r);
  /* more content topics than the filter service takes */
  size_t cap = 64 + 20 * (LD_REST_FILTER_MAX_CONTENT_TOPICS + 1);
  char *body = malloc(cap);
  size_t used = (size_t)snprintf(body, cap, "{\"requestId\":\"42\",\"contentFilters\":[");
  for (int i = 0; i <= LD_REST_FILTER_MAX_CONTENT_TOPICS; i++)
    used += (size_t)snprintf(body + used, cap - used, "%s\"/a/1/t%d/p\"", i ? "," : "", i);
  snprintf(body + used, cap - used, "]}");
  expect_json(g_full_port, "POST", SUBS, body, 400,
              "{\"requestId\":\"42\",\"statusDesc\":\"BAD_REQUEST: exceeds maximum content "
              "topics: 100\"}");
  free(body);
  assert_int_equal(g_rec.calls, 0);
}

/* ---- store ----------------------------------------------------------------------------------- */

#define HASH_HEX "9e0ea917677a3d2b8610b0126986d89824b6acf76008b5fb9aa8b99ac906c1a7"
#define STORE "/store/v3/messages"

static void store_query_parameters(void **state) {
  (void)state;
  script((script_t){.code = 200, .desc = "OK", .store_full = true});
  expect_json(g_full_port, "GET",
              STORE "?peerAddr=%2Fip4%2F127.0.0.1%2Ftcp%2F60001%2Fp2p%2F" PEER
                    "&includeData=true&pubsubTopic=%2Fwaku%2F2%2Frs%2F0%2F0&contentTopics=" CT_A_ENC
                    "%2C" CT_B_ENC "&startTime=1&endTime=" TS_BIG "&hashes=0x" HASH_HEX
                    "&cursor=" HASH_HEX "&ascending=false&pageSize=500",
              NULL, 200,
              "{\"requestId\":\"req-1\",\"statusCode\":200,\"statusDesc\":\"OK\",\"messages\":[{"
              "\"messageHash\":"
              "\"0x1111111111111111111111111111111111111111111111111111111111111111\","
              "\"message\":{\"payload\":\"aGk=\",\"contentTopic\":\"" CT_A "\",\"version\":0,"
              "\"timestamp\":" TS_BIG ",\"ephemeral\":false},\"pubsubTopic\":\"/waku/2/rs/0/0\"},"
              "{\"messageHash\":"
              "\"0x2222222222222222222222222222222222222222222222222222222222222222\"}],"
              "\"paginationCursor\":"
              "\"0x2222222222222222222222222222222222222222222222222222222222222222\"}");
  assert_string_equal(g_rec.op, "query");
  assert_string_equal(g_rec.peer, "/ip4/127.0.0.1/tcp/60001/p2p/" PEER);
  assert_true(g_rec.q.include_data);
  assert_string_equal(g_rec.pubsub, "/waku/2/rs/0/0");
  assert_int_equal(g_rec.n_topics, 2);
  assert_string_equal(g_rec.topics[0], CT_A);
  assert_string_equal(g_rec.topics[1], CT_B);
  assert_true(g_rec.q.has_start_time && g_rec.q.start_time == 1);
  assert_true(g_rec.q.has_end_time && g_rec.q.end_time == 1712345678901234567LL);
  assert_int_equal(g_rec.q.n_hashes, 1);
  assert_int_equal(g_rec.hash0[0], 0x9e);
  assert_true(g_rec.q.has_cursor);
  assert_int_equal(g_rec.q.cursor[31], 0xa7);
  assert_false(g_rec.q.forward);
  assert_int_equal(g_rec.q.page_size, 100);
  /* nwaku's defaults */
  script((script_t){.code = 200, .desc = "OK"});
  expect_json(g_full_port, "GET", STORE, NULL, 200,
              "{\"requestId\":\"req-1\",\"statusCode\":200,\"statusDesc\":\"OK\",\"messages\":[]}");
  assert_true(g_rec.pubsub_null);
  assert_string_equal(g_rec.peer, "");
  assert_false(g_rec.q.include_data);
  assert_true(g_rec.q.forward);
  assert_int_equal(g_rec.q.page_size, 20);
  assert_int_equal(g_rec.n_topics, 0);
}

static void store_outcomes(void **state) {
  (void)state;
  /* a failed query as nwaku's client reports it: 200 with the status inside */
  script((script_t){.code = 504, .desc = "PEER_DIAL_FAILURE: /ip4/127.0.0.1/tcp/1"});
  expect_json(g_full_port, "GET", STORE "?pageSize=3", NULL, 200,
              "{\"requestId\":\"req-1\",\"statusCode\":504,\"statusDesc\":\"PEER_DIAL_FAILURE: "
              "/ip4/127.0.0.1/tcp/1\",\"messages\":[]}");
  script((script_t){.code = 429, .desc = "TOO_MANY_REQUESTS"});
  expect_ct(g_full_port, "GET", STORE, NULL, 429, "text/plain", "Request rate limit reached");
  script((script_t){.store_error = LD_ERR_DB, .desc = "error in handleSelfStoreRequest: x"});
  expect(g_full_port, "GET", STORE, NULL, 500, "error in handleSelfStoreRequest: x");
  script((script_t){.store_error = LD_ERR_DB, .sync = true});
  expect(g_full_port, "GET", STORE, NULL, 500, "database error");
  script((script_t){.rc = LD_ERR_NOT_FOUND});
  expect_ct(g_full_port, "GET", STORE, NULL, 412, "text/plain",
            "No suitable service peer & no discovery method");
  script((script_t){.rc = LD_ERR_STATE});
  expect(g_full_port, "GET", STORE, NULL, 500,
         "Error occurred in queryFut.read() [operation not valid in the current state]");
  script((script_t){.code = 200, .delay_ms = LATE_MS});
  expect(g_full_port, "GET", STORE, NULL, 500, "No history response received (timeout)");
  drain();
}

static void store_bad_requests(void **state) {
  (void)state;
  script((script_t){.code = 200});
  expect_ct(g_full_port, "GET", STORE "?pageSize=ten", NULL, 400, "text/plain",
            "page size parsing error: invalid integer: ten");
  expect(g_full_port, "GET", STORE "?startTime=soon", NULL, 400,
         "time parsing error: invalid integer: soon");
  expect(g_full_port, "GET", STORE "?endTime=99999999999999999999", NULL, 400,
         "time parsing error: Parsed integer outside of valid range");
  expect(g_full_port, "GET", STORE "?includeData=maybe", NULL, 400,
         "include data parsing error: cannot interpret as a bool: maybe");
  expect(g_full_port, "GET", STORE "?hashes=0xabcd", NULL, 400,
         "waku message hash parsing error: invalid hash length: 2");
  expect(g_full_port, "GET", STORE "?cursor=not%20hex!", NULL, 400,
         "Exception converting hex string to bytes: not a hex string: not hex!");
  expect(g_full_port, "GET", STORE "?peerAddr=incorrect%20multi%20address%20format", NULL, 400,
         "Failed parsing remote peer info: invalid multiaddress");
  char path[4096];
  size_t used = (size_t)snprintf(path, sizeof path, STORE "?contentTopics=");
  for (int i = 0; i <= LD_REST_STORE_MAX_CONTENT_TOPICS; i++)
    used += (size_t)snprintf(path + used, sizeof path - used, "%s/a/1/%d/p", i ? "," : "", i);
  expect(g_full_port, "GET", path, NULL, 400, "too many content topics: at most 100");
  assert_int_equal(g_rec.calls, 0);
}

/* ---- groups that are not there, and the server's end --------------------------------------- */

static void not_mounted(void **state) {
  (void)state;
  expect(g_bare_port, "POST", LP3, "{}", 404, "/lightpush endpoints are not available.");
  expect(g_bare_port, "POST", LP1, "{}", 404, "/lightpush endpoints are not available.");
  expect(g_bare_port, "POST", SUBS, "{}", 404, "/filter endpoints are not available.");
  expect(g_bare_port, "GET", MSGS CT_A_ENC, NULL, 404, "/filter endpoints are not available.");
  expect(g_bare_port, "GET", STORE, NULL, 404, "/store endpoints are not available.");
  /* a method a path does not have */
  expect(g_full_port, "GET", LP3, NULL, 400, "Bad request initiated. Invalid path or method used.");
  expect(g_full_port, "PATCH", SUBS, "{}", 400,
         "Bad request initiated. Invalid path or method used.");
  ld_waku_message_t m;
  ld_waku_message_init(&m);
  m.content_topic = CT_A;
  m.content_topic_len = strlen(CT_A);
  ld_rest_server_filter_push(g_bare, "/waku/2/rs/0/0", &m); /* no filter: ignored */
}

static void incomplete_ops_are_refused(void **state) {
  (void)state;
  ld_rest_filter_ops_t filter = g_filter;
  filter.ping = NULL;
  ld_rest_context_t ctx;
  memset(&ctx, 0, sizeof ctx);
  ctx.loop = &g_loop;
  ctx.sw = g_sw;
  ctx.listen_addrs = no_addrs;
  ctx.filter = &filter;
  ld_rest_config_t cfg;
  ld_rest_config_default(&cfg);
  cfg.port = 0;
  ld_rest_server_t *srv = NULL;
  assert_int_equal(ld_rest_server_new(&ctx, &cfg, &srv), LD_ERR_INVALID_ARG);
  ctx.filter = NULL;
  ld_rest_lightpush_ops_t lp = {NULL, op_push_legacy, NULL};
  ctx.lightpush = &lp;
  assert_int_equal(ld_rest_server_new(&ctx, &cfg, &srv), LD_ERR_INVALID_ARG);
  ctx.lightpush = NULL;
  ld_rest_store_ops_t st = {NULL, NULL};
  ctx.store = &st;
  assert_int_equal(ld_rest_server_new(&ctx, &cfg, &srv), LD_ERR_INVALID_ARG);
}

static void server_closed_while_waiting(void **state) {
  (void)state;
  g_tmp = start_server(true, &g_tmp_port);
  g_tmp_closed = false;
  /* the node completes after the server has gone: the client gets 503 or a closed connection */
  script((script_t){.code = 200, .delay_ms = 100, .close_server = true});
  http_response_t r;
  int rc = http_request_on_loop(&g_loop, g_tmp_port, "GET", STORE, NULL, NULL, 0, &r);
  if (rc == 0) {
    assert_int_equal(r.status, 503);
    http_response_free(&r);
  }
  pump_until(&g_tmp_closed);
  assert_null(g_tmp);
  drain();
  /* the same with a filter subscription, whose completion would touch the cache */
  g_tmp = start_server(true, &g_tmp_port);
  g_tmp_closed = false;
  script((script_t){.code = 200, .delay_ms = 100, .close_server = true});
  const char *body = "{\"requestId\":\"1\",\"contentFilters\":[\"" CT_A "\"]}";
  rc = http_request_on_loop(&g_loop, g_tmp_port, "POST", SUBS, JSON_HDR, body, strlen(body), &r);
  if (rc == 0)
    http_response_free(&r);
  pump_until(&g_tmp_closed);
  drain();
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(lightpush_v3_publishes),
      cmocka_unit_test(lightpush_v3_status_codes),
      cmocka_unit_test(lightpush_v3_bad_requests),
      cmocka_unit_test(lightpush_legacy),
      cmocka_unit_test(lightpush_legacy_operation),
      cmocka_unit_test(filter_subscribe_and_read_messages),
      cmocka_unit_test(filter_ping),
      cmocka_unit_test(filter_status_codes),
      cmocka_unit_test(filter_bad_requests),
      cmocka_unit_test(store_query_parameters),
      cmocka_unit_test(store_outcomes),
      cmocka_unit_test(store_bad_requests),
      cmocka_unit_test(not_mounted),
      cmocka_unit_test(incomplete_ops_are_refused),
      cmocka_unit_test(server_closed_while_waiting),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
