/* The calling contract of liblogosdelivery (c-api.md §1.1, §2): missing callbacks, NULL and
 * stale contexts, construction errors, exact error texts, absurd arguments, many threads on one
 * context, destroy with requests in flight, several contexts side by side, the event callback
 * and the watchdog. Nodes listen on 127.0.0.1 with ephemeral ports. */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <jansson.h>

#include "base/clock.h"
#include "lib/context.h"
#include "liblogosdelivery.h"
#include "thread_wait.h"

#define WAIT_MS 60000
#define PREFIX "ffi error: handleRes fireSyncRes error: "
#define DISPATCH_PREFIX "error in sendRequestToFFIThread: "
#define CONFIG                                                                                     \
  "{\"listenAddress\":\"127.0.0.1\",\"tcpPort\":0,\"clusterId\":66,\"numShardsInNetwork\":1,"      \
  "\"discv5UdpPort\":0,\"logLevel\":\"WARN\"}"
#define MSG_JSON "{\"contentTopic\":\"/contract/1/chat/proto\",\"payload\":\"aGk=\"}"

/* ---- one request's callbacks ---------------------------------------------------------------- */

typedef struct calls {
  pthread_mutex_t mu;
  pthread_cond_t cv;
  int n;
  int ret;
  char msg[512];
  size_t len;
  bool msg_null;
  pthread_t thread; /* of the last callback */
} calls_t;

static void calls_init(calls_t *c) {
  memset(c, 0, sizeof *c);
  pthread_mutex_init(&c->mu, NULL);
  pthread_cond_init(&c->cv, NULL);
}

static void calls_clear(calls_t *c) {
  pthread_mutex_destroy(&c->mu);
  pthread_cond_destroy(&c->cv);
}

static void on_call(int ret, const char *msg, size_t len, void *ud) {
  calls_t *c = ud;
  pthread_mutex_lock(&c->mu);
  c->n++;
  c->ret = ret;
  c->msg_null = msg == NULL;
  c->len = len;
  size_t n = len < sizeof c->msg - 1 ? len : sizeof c->msg - 1;
  if (msg != NULL)
    memcpy(c->msg, msg, n);
  c->msg[msg != NULL ? n : 0] = '\0';
  c->thread = pthread_self();
  pthread_cond_broadcast(&c->cv);
  pthread_mutex_unlock(&c->mu);
}

/* Waits until `c` has had at least `n` callbacks; returns how many it had. */
static int calls_wait(calls_t *c, int n) {
  uint64_t deadline = ld_now_ms() + WAIT_MS;
  pthread_mutex_lock(&c->mu);
  while (c->n < n && ld_now_ms() < deadline) {
    tw_cond_wait_ms(&c->cv, &c->mu, 50);
  }
  int got = c->n;
  pthread_mutex_unlock(&c->mu);
  return got;
}

/* Waits for exactly one answer and checks it. */
static void expect_reply(calls_t *c, int ret, const char *msg) {
  assert_int_equal(calls_wait(c, 1), 1);
  assert_int_equal(c->ret, ret);
  assert_false(c->msg_null);
  assert_string_equal(c->msg, msg);
  assert_int_equal(c->len, strlen(msg));
}

static void expect_prefix(calls_t *c, int ret, const char *prefix) {
  assert_int_equal(calls_wait(c, 1), 1);
  assert_int_equal(c->ret, ret);
  if (strncmp(c->msg, prefix, strlen(prefix)) != 0)
    fail_msg("\"%s\" does not start with \"%s\"", c->msg, prefix);
}

/* ---- helpers -------------------------------------------------------------------------------- */

static void *create_ok(const char *config) {
  calls_t c;
  calls_init(&c);
  void *ctx = logosdelivery_create_node(config, on_call, &c);
  assert_non_null(ctx);
  expect_reply(&c, RET_OK, "");
  assert_false(pthread_equal(c.thread, pthread_self()));
  calls_clear(&c);
  return ctx;
}

/* Calls `fn(ctx, cb, ud)` and expects one answer. */
typedef int (*simple_fn)(void *ctx, FFICallBack cb, void *ud);

static void simple_expect(simple_fn fn, void *ctx, int ret, const char *msg) {
  calls_t c;
  calls_init(&c);
  assert_int_equal(fn(ctx, on_call, &c), RET_OK);
  expect_reply(&c, ret, msg);
  calls_clear(&c);
}

static void destroy_ok(void *ctx) {
  calls_t c;
  calls_init(&c);
  assert_int_equal(logosdelivery_destroy(ctx, on_call, &c), RET_OK);
  assert_int_equal(c.n, 1); /* synchronous */
  assert_int_equal(c.ret, RET_OK);
  assert_true(c.msg_null);
  assert_int_equal(c.len, 0);
  assert_true(pthread_equal(c.thread, pthread_self()));
  calls_clear(&c);
}

static void *started(void) {
  void *ctx = create_ok(CONFIG);
  simple_expect(logosdelivery_start_node, ctx, RET_OK, "");
  return ctx;
}

static void stop_destroy(void *ctx) {
  simple_expect(logosdelivery_stop_node, ctx, RET_OK, "");
  destroy_ok(ctx);
}

static void info_expect(void *ctx, const char *id, int ret, const char *msg, char *out,
                        size_t cap) {
  calls_t c;
  calls_init(&c);
  assert_int_equal(logosdelivery_get_node_info(ctx, on_call, &c, id), RET_OK);
  assert_int_equal(calls_wait(&c, 1), 1);
  assert_int_equal(c.ret, ret);
  if (msg != NULL)
    assert_string_equal(c.msg, msg);
  if (out != NULL)
    snprintf(out, cap, "%s", c.msg);
  calls_clear(&c);
}

/* Every int function of the stable tier but destroy, by number. */
#define N_INT_FNS 14
static int call_fn(int i, void *ctx, FFICallBack cb, void *ud) {
  switch (i) {
  case 0:
    return logosdelivery_start_node(ctx, cb, ud);
  case 1:
    return logosdelivery_stop_node(ctx, cb, ud);
  case 2:
    return logosdelivery_subscribe(ctx, cb, ud, "/a/1/b/c");
  case 3:
    return logosdelivery_unsubscribe(ctx, cb, ud, "/a/1/b/c");
  case 4:
    return logosdelivery_send(ctx, cb, ud, MSG_JSON);
  case 5:
    return logosdelivery_channel_create(ctx, cb, ud, "ch", "/a/1/b/c", "me");
  case 6:
    return logosdelivery_channel_exists(ctx, cb, ud, "ch");
  case 7:
    return logosdelivery_channel_send(ctx, cb, ud, "ch", "{\"payload\":\"aGk=\"}");
  case 8:
    return logosdelivery_channel_close(ctx, cb, ud, "ch");
  case 9:
    return logosdelivery_get_available_node_info_ids(ctx, cb, ud);
  case 10:
    return logosdelivery_get_node_info(ctx, cb, ud, "Version");
  case 11:
    return logosdelivery_get_available_configs(ctx, cb, ud);
  case 12:
    return logosdelivery_subscribe(ctx, cb, ud, NULL);
  default:
    return logosdelivery_send(ctx, cb, ud, NULL);
  }
}

/* ---- missing callback, NULL and stale contexts ---------------------------------------------- */

static void missing_callback(void **state) {
  (void)state;
  assert_null(logosdelivery_create_node(CONFIG, NULL, NULL));
  void *ctx = create_ok(CONFIG);
  for (int i = 0; i < N_INT_FNS; i++) {
    assert_int_equal(call_fn(i, ctx, NULL, NULL), RET_MISSING_CALLBACK);
    assert_int_equal(call_fn(i, NULL, NULL, NULL), RET_MISSING_CALLBACK);
  }
  assert_int_equal(logosdelivery_destroy(ctx, NULL, NULL), RET_MISSING_CALLBACK);
  /* the context is still alive */
  simple_expect(logosdelivery_get_available_node_info_ids, ctx, RET_OK,
                "[\"Version\",\"Metrics\",\"MyMultiaddresses\",\"MyENR\",\"MyPeerId\","
                "\"MyBoundPorts\",\"MyMixPubKey\",\"MaxMessageSize\"]");
  destroy_ok(ctx);
}

static void expect_invalid(void *ctx) {
  for (int i = 0; i < N_INT_FNS; i++) {
    calls_t c;
    calls_init(&c);
    assert_int_equal(call_fn(i, ctx, on_call, &c), RET_ERR);
    assert_int_equal(c.n, 1); /* synchronously, on this thread */
    assert_true(pthread_equal(c.thread, pthread_self()));
    assert_int_equal(c.ret, RET_ERR);
    assert_string_equal(c.msg, DISPATCH_PREFIX "invalid context");
    calls_clear(&c);
  }
  calls_t c;
  calls_init(&c);
  assert_int_equal(logosdelivery_destroy(ctx, on_call, &c), RET_ERR);
  assert_int_equal(c.n, 1);
  assert_string_equal(c.msg, "liblogosdelivery error: invalid context");
  calls_clear(&c);
  logosdelivery_set_event_callback(ctx, on_call, &c); /* ignored */
  logosdelivery_set_event_callback(ctx, NULL, NULL);
}

static void null_stale_and_bogus_contexts(void **state) {
  (void)state;
  expect_invalid(NULL);
  void *ctx = create_ok(CONFIG);
  destroy_ok(ctx);
  expect_invalid(ctx);
  int local = 0;
  expect_invalid(&local);
  expect_invalid((void *)(uintptr_t)1);
  /* a stale handle never reaches a newer context */
  void *fresh = create_ok(CONFIG);
  assert_ptr_not_equal(fresh, ctx);
  expect_invalid(ctx);
  destroy_ok(fresh);
}

/* ---- construction errors and requests without a node ---------------------------------------- */

static void bad_config_is_reported_and_nothing_else_works(void **state) {
  (void)state;
  const char *bad[] = {"{not json", "{\"bogusOption\":1}", "[1]", NULL, ""};
  for (size_t b = 0; b < sizeof bad / sizeof bad[0]; b++) {
    calls_t c;
    calls_init(&c);
    void *ctx = logosdelivery_create_node(bad[b], on_call, &c);
    assert_non_null(ctx);
    expect_prefix(&c, RET_ERR, PREFIX "failed parseLogosDeliveryConf ");
    assert_false(pthread_equal(c.thread, pthread_self()));
    calls_clear(&c);
    if (b > 0) {
      destroy_ok(ctx);
      continue;
    }
    const char *texts[N_INT_FNS] = {"START_NODE failed",
                                    "STOP_NODE failed",
                                    "Subscribe failed",
                                    "Unsubscribe failed",
                                    "Send failed",
                                    "ChannelCreate failed",
                                    "ChannelExists failed",
                                    "ChannelSend failed",
                                    "ChannelClose failed",
                                    "GetNodeInfoIds failed",
                                    "GetNodeInfoItem failed",
                                    "GetAvailableConfigs failed",
                                    "Subscribe failed",
                                    "Send failed"};
    for (int i = 0; i < N_INT_FNS; i++) {
      char want[128];
      snprintf(want, sizeof want, PREFIX "%s: node is not initialized", texts[i]);
      calls_init(&c);
      assert_int_equal(call_fn(i, ctx, on_call, &c), RET_OK);
      expect_reply(&c, RET_ERR, want);
      calls_clear(&c);
    }
    destroy_ok(ctx);
  }
}

static void requests_before_start(void **state) {
  (void)state;
  void *ctx = create_ok(CONFIG);
  calls_t c;
  calls_init(&c);
  assert_int_equal(logosdelivery_subscribe(ctx, on_call, &c, "/a/1/b/c"), RET_OK);
  expect_reply(&c, RET_ERR, PREFIX "Subscribe failed: node is not started");
  calls_clear(&c);
  calls_init(&c);
  assert_int_equal(logosdelivery_send(ctx, on_call, &c, MSG_JSON), RET_OK);
  expect_reply(&c, RET_ERR, PREFIX "Send failed: node is not started");
  calls_clear(&c);
  calls_init(&c);
  assert_int_equal(logosdelivery_channel_exists(ctx, on_call, &c, "x"), RET_OK);
  expect_reply(&c, RET_OK, "false");
  calls_clear(&c);
  calls_init(&c);
  assert_int_equal(logosdelivery_channel_create(ctx, on_call, &c, "x", "/a/1/b/c", "me"), RET_OK);
  expect_reply(&c, RET_ERR, PREFIX "ChannelCreate failed: node is not started");
  calls_clear(&c);
  info_expect(ctx, "Version", RET_OK, "v" LD_VERSION, NULL, 0);
  info_expect(ctx, "MaxMessageSize", RET_OK, "153600", NULL, 0);
  info_expect(ctx, "MyMixPubKey", RET_OK, "", NULL, 0);
  info_expect(ctx, "MyMultiaddresses", RET_OK, "", NULL, 0);
  info_expect(ctx, "version", RET_ERR, PREFIX "Invalid node info id: version", NULL, 0);
  info_expect(ctx, "", RET_ERR, PREFIX "Invalid node info id: ", NULL, 0);
  /* the configuration options, as pretty-printed JSON */
  calls_init(&c);
  assert_int_equal(logosdelivery_get_available_configs(ctx, on_call, &c), RET_OK);
  assert_int_equal(calls_wait(&c, 1), 1);
  assert_int_equal(c.ret, RET_OK);
  assert_non_null(strstr(c.msg, "\"configOptions\""));
  calls_clear(&c);
  destroy_ok(ctx);
}

/* ---- lifecycle ------------------------------------------------------------------------------ */

static void create_start_stop_destroy_repeated(void **state) {
  (void)state;
  for (int i = 0; i < 3; i++) {
    void *ctx = started();
    char id1[128], id2[128], ports[256], addrs[1024];
    info_expect(ctx, "MyPeerId", RET_OK, NULL, id1, sizeof id1);
    assert_true(strlen(id1) > 40);
    info_expect(ctx, "MyBoundPorts", RET_OK, NULL, ports, sizeof ports);
    json_error_t e;
    json_t *p = json_loads(ports, 0, &e);
    assert_non_null(p);
    assert_true(json_integer_value(json_object_get(p, "tcp")) > 0);
    assert_int_equal(json_integer_value(json_object_get(p, "rest")), 0);
    assert_int_equal(json_object_size(p), 6);
    json_decref(p);
    info_expect(ctx, "MyMultiaddresses", RET_OK, NULL, addrs, sizeof addrs);
    assert_non_null(strstr(addrs, "/ip4/127.0.0.1/tcp/"));
    assert_non_null(strstr(addrs, id1));
    char enr[1024];
    info_expect(ctx, "MyENR", RET_OK, NULL, enr, sizeof enr);
    assert_int_equal(strncmp(enr, "enr:", 4), 0);
    simple_expect(logosdelivery_start_node, ctx, RET_ERR,
                  PREFIX "failed to start: node is already started");
    /* stop twice, start again: same peer ID */
    simple_expect(logosdelivery_stop_node, ctx, RET_OK, "");
    simple_expect(logosdelivery_stop_node, ctx, RET_OK, "");
    simple_expect(logosdelivery_start_node, ctx, RET_OK, "");
    info_expect(ctx, "MyPeerId", RET_OK, NULL, id2, sizeof id2);
    assert_string_equal(id1, id2);
    stop_destroy(ctx);
  }
}

/* A started node answers the introspection calls; Metrics is Prometheus text. */
static void metrics_of_a_started_node(void **state) {
  (void)state;
  void *ctx = started();
  calls_t c;
  calls_init(&c);
  assert_int_equal(logosdelivery_get_node_info(ctx, on_call, &c, "Metrics"), RET_OK);
  assert_int_equal(calls_wait(&c, 1), 1);
  assert_int_equal(c.ret, RET_OK);
  assert_non_null(strstr(c.msg, "# TYPE "));
  calls_clear(&c);
  stop_destroy(ctx);
}

/* ---- malformed and absurd arguments --------------------------------------------------------- */

static void send_expect(void *ctx, const char *json, int ret, const char *text, bool prefix) {
  calls_t c;
  calls_init(&c);
  assert_int_equal(logosdelivery_send(ctx, on_call, &c, json), RET_OK);
  if (prefix)
    expect_prefix(&c, ret, text);
  else
    expect_reply(&c, ret, text);
  calls_clear(&c);
}

static void malformed_and_absurd_arguments(void **state) {
  (void)state;
  void *ctx = started();
  send_expect(ctx, "{", RET_ERR, PREFIX "Failed to parse message JSON: ", true);
  send_expect(ctx, NULL, RET_ERR, PREFIX "Failed to parse message JSON: ", true);
  send_expect(ctx, "{\"payload\":\"aGk=\"}", RET_ERR, PREFIX "Missing contentTopic field", false);
  send_expect(ctx, "{\"contentTopic\":\"/a/1/b/c\"}", RET_ERR, PREFIX "Missing payload field",
              false);
  send_expect(ctx, "{\"contentTopic\":\"/a/1/b/c\",\"payload\":\"%%%%\"}", RET_ERR,
              PREFIX "invalid payload format: invalid base64 encoding", false);
  send_expect(ctx, "{\"contentTopic\":\"no-slashes\",\"payload\":\"aGk=\"}", RET_ERR,
              PREFIX "Send failed: Failed to auto-subscribe before sending: ", true);

  size_t big = 9u * 1024 * 1024;
  char *huge = malloc(big + 1);
  assert_non_null(huge);
  memset(huge, ' ', big);
  huge[big] = '\0';
  send_expect(ctx, huge, RET_ERR, PREFIX "Failed to parse message JSON: input longer than ", true);
  calls_t c;
  calls_init(&c);
  assert_int_equal(logosdelivery_subscribe(ctx, on_call, &c, huge), RET_OK);
  expect_reply(&c, RET_ERR, PREFIX "Subscribe failed: content topic too long");
  calls_clear(&c);
  calls_init(&c);
  assert_int_equal(logosdelivery_get_node_info(ctx, on_call, &c, huge), RET_OK);
  expect_prefix(&c, RET_ERR, PREFIX "Invalid node info id: ");
  calls_clear(&c);
  free(huge);

  calls_init(&c);
  assert_int_equal(logosdelivery_unsubscribe(ctx, on_call, &c, "/never/1/subscribed/proto"),
                   RET_OK);
  expect_prefix(&c, RET_ERR, PREFIX "Unsubscribe failed: ");
  calls_clear(&c);
  calls_init(&c);
  assert_int_equal(logosdelivery_subscribe(ctx, on_call, &c, "/a/1/b/c"), RET_OK);
  expect_reply(&c, RET_OK, "");
  calls_clear(&c);

  /* a valid send: the request ID, 20 lowercase hex characters */
  calls_init(&c);
  assert_int_equal(logosdelivery_send(ctx, on_call, &c, MSG_JSON), RET_OK);
  assert_int_equal(calls_wait(&c, 1), 1);
  assert_int_equal(c.ret, RET_OK);
  assert_int_equal(c.len, 20);
  assert_int_equal(strspn(c.msg, "0123456789abcdef"), 20);
  calls_clear(&c);
  stop_destroy(ctx);
}

/* ---- many threads on one context ------------------------------------------------------------ */

#define HAMMER_THREADS 8
#define HAMMER_CALLS 40

typedef struct hammer {
  void *ctx;
  int index;
  calls_t calls[HAMMER_CALLS];
  int rc[HAMMER_CALLS];
} hammer_t;

static void *hammer_main(void *arg) {
  hammer_t *h = arg;
  for (int i = 0; i < HAMMER_CALLS; i++) {
    char topic[64];
    snprintf(topic, sizeof topic, "/hammer/1/t%d/proto", h->index);
    if (i % 2 == 0) {
      char json[128];
      snprintf(json, sizeof json, "{\"contentTopic\":\"%s\",\"payload\":\"aGk=\"}", topic);
      h->rc[i] = logosdelivery_send(h->ctx, on_call, &h->calls[i], json);
    } else {
      h->rc[i] = logosdelivery_subscribe(h->ctx, on_call, &h->calls[i], topic);
    }
  }
  return NULL;
}

static void eight_threads_every_request_one_callback(void **state) {
  (void)state;
  void *ctx = started();
  static hammer_t hs[HAMMER_THREADS];
  pthread_t th[HAMMER_THREADS];
  for (int t = 0; t < HAMMER_THREADS; t++) {
    hs[t].ctx = ctx;
    hs[t].index = t;
    for (int i = 0; i < HAMMER_CALLS; i++)
      calls_init(&hs[t].calls[i]);
    assert_int_equal(pthread_create(&th[t], NULL, hammer_main, &hs[t]), 0);
  }
  for (int t = 0; t < HAMMER_THREADS; t++)
    pthread_join(th[t], NULL);
  for (int t = 0; t < HAMMER_THREADS; t++) {
    for (int i = 0; i < HAMMER_CALLS; i++) {
      calls_t *c = &hs[t].calls[i];
      assert_int_equal(hs[t].rc[i], RET_OK);
      assert_int_equal(calls_wait(c, 1), 1);
      assert_int_equal(c->ret, RET_OK);
      assert_int_equal(c->len, i % 2 == 0 ? 20 : 0);
    }
  }
  /* a request answered twice would show by now: stop_node is queued behind all of them */
  simple_expect(logosdelivery_stop_node, ctx, RET_OK, "");
  for (int t = 0; t < HAMMER_THREADS; t++)
    for (int i = 0; i < HAMMER_CALLS; i++) {
      assert_int_equal(hs[t].calls[i].n, 1);
      calls_clear(&hs[t].calls[i]);
    }
  destroy_ok(ctx);
}

/* ---- destroy with requests in flight -------------------------------------------------------- */

/* A handler that keeps its request pending (it never replies). */
static void never_reply(ld_lib_ctx_t *ctx, ld_lib_request_t *req, void *args) {
  (void)ctx, (void)req, (void)args;
}

static void destroy_answers_pending_requests(void **state) {
  (void)state;
  void *ctx = started();
  calls_t c[3];
  for (int i = 0; i < 3; i++) {
    calls_init(&c[i]);
    assert_int_equal(ld_lib_dispatch(ctx, on_call, &c[i], never_reply, NULL, NULL), RET_OK);
  }
  /* queued behind the three: once answered, the three are pending on the worker */
  info_expect(ctx, "Version", RET_OK, "v" LD_VERSION, NULL, 0);
  for (int i = 0; i < 3; i++)
    assert_int_equal(c[i].n, 0);
  destroy_ok(ctx); /* the node is still running: destroy stops it */
  for (int i = 0; i < 3; i++) {
    assert_int_equal(c[i].n, 1);
    assert_int_equal(c[i].ret, RET_ERR);
    assert_string_equal(c[i].msg, PREFIX "liblogosdelivery error: the context was destroyed");
    calls_clear(&c[i]);
  }
}

#define RACERS 4
#define RACER_CALLS 400

typedef struct racer {
  void *ctx;
  calls_t calls[RACER_CALLS];
  int rc[RACER_CALLS];
  int made;
  pthread_t self;
} racer_t;

static volatile int g_destroyed; /* set once destroy has returned */
static int g_late;               /* worker callbacks seen after that */
static pthread_mutex_t g_late_mu = PTHREAD_MUTEX_INITIALIZER;

static void on_racer_call(int ret, const char *msg, size_t len, void *ud) {
  on_call(ret, msg, len, ud);
  calls_t *c = ud;
  pthread_mutex_lock(&g_late_mu);
  if (__atomic_load_n(&g_destroyed, __ATOMIC_SEQ_CST) && ret == RET_OK)
    g_late++;
  pthread_mutex_unlock(&g_late_mu);
  (void)c;
}

static void *racer_main(void *arg) {
  racer_t *r = arg;
  r->self = pthread_self();
  for (r->made = 0; r->made < RACER_CALLS; r->made++) {
    int i = r->made;
    r->rc[i] = logosdelivery_get_node_info(r->ctx, on_racer_call, &r->calls[i], "Version");
    if (r->rc[i] != RET_OK) {
      r->made++;
      break;
    }
  }
  return NULL;
}

static void destroy_while_other_threads_call(void **state) {
  (void)state;
  void *ctx = started();
  static racer_t rs[RACERS];
  pthread_t th[RACERS];
  __atomic_store_n(&g_destroyed, 0, __ATOMIC_SEQ_CST);
  g_late = 0;
  for (int t = 0; t < RACERS; t++) {
    rs[t].ctx = ctx;
    for (int i = 0; i < RACER_CALLS; i++)
      calls_init(&rs[t].calls[i]);
    assert_int_equal(pthread_create(&th[t], NULL, racer_main, &rs[t]), 0);
  }
  /* let every racer get a few requests through first */
  for (int t = 0; t < RACERS; t++)
    assert_int_equal(calls_wait(&rs[t].calls[2], 1), 1);
  destroy_ok(ctx);
  __atomic_store_n(&g_destroyed, 1, __ATOMIC_SEQ_CST);
  for (int t = 0; t < RACERS; t++)
    pthread_join(th[t], NULL);
  for (int t = 0; t < RACERS; t++) {
    for (int i = 0; i < rs[t].made; i++) {
      calls_t *c = &rs[t].calls[i];
      assert_int_equal(c->n, 1); /* exactly one answer, whichever way */
      if (rs[t].rc[i] != RET_OK) {
        assert_int_equal(c->ret, RET_ERR);
        assert_true(pthread_equal(c->thread, rs[t].self));
        assert_int_equal(strncmp(c->msg, DISPATCH_PREFIX, strlen(DISPATCH_PREFIX)), 0);
      }
    }
    for (int i = 0; i < RACER_CALLS; i++)
      calls_clear(&rs[t].calls[i]);
  }
  assert_int_equal(g_late, 0);
}

/* The worker is stuck in a handler while callers wait for it to take their requests: destroy
 * lets them go with an error, then waits for the worker. */
typedef struct blocker {
  pthread_mutex_t mu;
  pthread_cond_t cv;
  bool entered, released;
} blocker_t;

static blocker_t g_block = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, false, false};

static void block_handler(ld_lib_ctx_t *ctx, ld_lib_request_t *req, void *args) {
  (void)ctx, (void)args;
  pthread_mutex_lock(&g_block.mu);
  g_block.entered = true;
  pthread_cond_broadcast(&g_block.cv);
  while (!g_block.released)
    pthread_cond_wait(&g_block.cv, &g_block.mu);
  pthread_mutex_unlock(&g_block.mu);
  ld_lib_reply_text(req, "released");
}

static void block_reset(void) {
  g_block.entered = g_block.released = false;
}

static void block_wait_entered(void) {
  pthread_mutex_lock(&g_block.mu);
  while (!g_block.entered)
    pthread_cond_wait(&g_block.cv, &g_block.mu);
  pthread_mutex_unlock(&g_block.mu);
}

static void block_release(void) {
  pthread_mutex_lock(&g_block.mu);
  g_block.released = true;
  pthread_cond_broadcast(&g_block.cv);
  pthread_mutex_unlock(&g_block.mu);
}

typedef struct waiter {
  void *ctx;
  calls_t calls;
  int rc;
  pthread_t self;
} waiter_t;

static void *waiter_main(void *arg) {
  waiter_t *w = arg;
  w->self = pthread_self();
  w->rc = logosdelivery_get_node_info(w->ctx, on_call, &w->calls, "Version");
  return NULL;
}

static void *release_after_waiters(void *arg) {
  pthread_t *th = arg;
  for (int i = 0; i < 3; i++)
    pthread_join(th[i], NULL);
  block_release();
  return NULL;
}

/* With the worker stuck, callers do not wait until LD_LIB_QUEUE_NO_WAIT requests are queued;
 * beyond that they wait (back-pressure), and destroy lets them go with RET_ERR on their own
 * thread while every queued request gets exactly one answer. */
static void destroy_releases_callers_of_a_stuck_worker(void **state) {
  (void)state;
  void *ctx = create_ok(CONFIG);
  block_reset();
  calls_t blocked, queued;
  calls_init(&blocked);
  calls_init(&queued);
  assert_int_equal(ld_lib_dispatch(ctx, on_call, &blocked, block_handler, NULL, NULL), RET_OK);
  block_wait_entered();
  for (unsigned i = 0; i < LD_LIB_QUEUE_NO_WAIT; i++)
    assert_int_equal(logosdelivery_get_node_info(ctx, on_call, &queued, "Version"), RET_OK);
  assert_int_equal(queued.n, 0);
  static waiter_t ws[3];
  pthread_t th[3], releaser;
  for (int i = 0; i < 3; i++) {
    ws[i].ctx = ctx;
    calls_init(&ws[i].calls);
    assert_int_equal(pthread_create(&th[i], NULL, waiter_main, &ws[i]), 0);
  }
  assert_int_equal(pthread_create(&releaser, NULL, release_after_waiters, th), 0);
  destroy_ok(ctx);
  pthread_join(releaser, NULL);
  for (int i = 0; i < 3; i++) {
    assert_int_equal(ws[i].rc, RET_ERR);
    assert_int_equal(ws[i].calls.n, 1);
    assert_true(pthread_equal(ws[i].calls.thread, ws[i].self));
    assert_int_equal(strncmp(ws[i].calls.msg, DISPATCH_PREFIX, strlen(DISPATCH_PREFIX)), 0);
    calls_clear(&ws[i].calls);
  }
  assert_int_equal(blocked.n, 1);
  assert_string_equal(blocked.msg, "released");
  calls_clear(&blocked);
  /* one answer each: served if the worker took them before it stopped, else an error */
  assert_int_equal(queued.n, LD_LIB_QUEUE_NO_WAIT);
  calls_clear(&queued);
}

/* Destroy right after create or during a stop: the request in flight still gets exactly one
 * answer, and nothing comes after destroy returns. */
static void destroy_during_create_and_stop(void **state) {
  (void)state;
  calls_t c;
  calls_init(&c);
  void *ctx = logosdelivery_create_node(CONFIG, on_call, &c);
  assert_non_null(ctx);
  destroy_ok(ctx);
  assert_int_equal(c.n, 1);
  calls_clear(&c);

  ctx = started();
  calls_init(&c);
  assert_int_equal(logosdelivery_stop_node(ctx, on_call, &c), RET_OK);
  destroy_ok(ctx);
  assert_int_equal(c.n, 1);
  if (c.ret != RET_OK)
    assert_string_equal(c.msg, PREFIX "liblogosdelivery error: the context was destroyed");
  calls_clear(&c);
}

/* A start that fails (the port is taken) is answered with the reason; the node can be started
 * once the port is free. */
static void failed_start_can_be_retried(void **state) {
  (void)state;
  void *a = started();
  char ports[256];
  info_expect(a, "MyBoundPorts", RET_OK, NULL, ports, sizeof ports);
  json_error_t e;
  json_t *p = json_loads(ports, 0, &e);
  assert_non_null(p);
  int port = (int)json_integer_value(json_object_get(p, "tcp"));
  assert_true(json_integer_value(json_object_get(p, "discv5Udp")) > 0); /* discv5 is on */
  json_decref(p);
  char config[256];
  snprintf(config, sizeof config,
           "{\"listenAddress\":\"127.0.0.1\",\"tcpPort\":%d,\"clusterId\":66,"
           "\"numShardsInNetwork\":1,\"discv5UdpPort\":0,\"logLevel\":\"FATAL\"}",
           port);
  void *b = create_ok(config);
  calls_t c;
  calls_init(&c);
  assert_int_equal(logosdelivery_start_node(b, on_call, &c), RET_OK);
  expect_prefix(&c, RET_ERR, PREFIX "failed to start: ");
  calls_clear(&c);
  calls_init(&c);
  assert_int_equal(logosdelivery_subscribe(b, on_call, &c, "/a/1/b/c"), RET_OK);
  expect_reply(&c, RET_ERR, PREFIX "Subscribe failed: node is not started");
  calls_clear(&c);
  stop_destroy(a);
  simple_expect(logosdelivery_start_node, b, RET_OK, "");
  stop_destroy(b);
}

/* A flat configuration that turns relay off still gets a messaging client (sending through
 * service peers). */
static void core_configuration_without_relay_starts(void **state) {
  (void)state;
  void *ctx = create_ok(
      "{\"listenAddress\":\"127.0.0.1\",\"tcpPort\":0,\"discv5UdpPort\":0,\"relay\":false,"
      "\"lightpush\":false,\"filter\":false,\"logLevel\":\"WARN\"}");
  simple_expect(logosdelivery_start_node, ctx, RET_OK, "");
  calls_t c;
  calls_init(&c);
  assert_int_equal(logosdelivery_send(ctx, on_call, &c, MSG_JSON), RET_OK);
  assert_int_equal(calls_wait(&c, 1), 1);
  assert_int_equal(c.ret, RET_OK);
  assert_int_equal(c.len, 20);
  calls_clear(&c);
  stop_destroy(ctx);
}

/* ---- several contexts ----------------------------------------------------------------------- */

static void two_contexts_side_by_side(void **state) {
  (void)state;
  void *a = started();
  void *b = started();
  assert_ptr_not_equal(a, b);
  char ida[128], idb[128];
  info_expect(a, "MyPeerId", RET_OK, NULL, ida, sizeof ida);
  info_expect(b, "MyPeerId", RET_OK, NULL, idb, sizeof idb);
  assert_string_not_equal(ida, idb);
  stop_destroy(a);
  char again[128];
  info_expect(b, "MyPeerId", RET_OK, NULL, again, sizeof again);
  assert_string_equal(again, idb);
  stop_destroy(b);
}

static void too_many_contexts(void **state) {
  (void)state;
  void *ctxs[LD_LIB_MAX_CONTEXTS];
  for (int i = 0; i < LD_LIB_MAX_CONTEXTS; i++) {
    calls_t c;
    calls_init(&c);
    ctxs[i] = logosdelivery_create_node("{", on_call, &c);
    assert_non_null(ctxs[i]);
    assert_int_equal(calls_wait(&c, 1), 1);
    calls_clear(&c);
  }
  calls_t c;
  calls_init(&c);
  assert_null(logosdelivery_create_node(CONFIG, on_call, &c));
  assert_int_equal(c.n, 1);
  assert_true(pthread_equal(c.thread, pthread_self()));
  assert_string_equal(c.msg, DISPATCH_PREFIX "too many contexts (at most 64)");
  calls_clear(&c);
  for (int i = 0; i < LD_LIB_MAX_CONTEXTS; i++)
    destroy_ok(ctxs[i]);
  destroy_ok(create_ok(CONFIG));
}

/* ---- callbacks calling back ----------------------------------------------------------------- */

typedef struct reenter {
  void *ctx;
  calls_t inner;
  int inner_rc;
  calls_t destroy;
  int destroy_rc;
  calls_t outer;
} reenter_t;

static void on_outer(int ret, const char *msg, size_t len, void *ud) {
  reenter_t *r = ud;
  r->inner_rc = logosdelivery_get_node_info(r->ctx, on_call, &r->inner, "Version");
  r->destroy_rc = logosdelivery_destroy(r->ctx, on_call, &r->destroy);
  on_call(ret, msg, len, &r->outer);
}

static void calls_from_inside_a_callback(void **state) {
  (void)state;
  void *ctx = create_ok(CONFIG);
  static reenter_t r;
  r.ctx = ctx;
  calls_init(&r.inner);
  calls_init(&r.destroy);
  calls_init(&r.outer);
  assert_int_equal(logosdelivery_get_node_info(ctx, on_outer, &r, "MaxMessageSize"), RET_OK);
  expect_reply(&r.outer, RET_OK, "153600");
  assert_int_equal(r.inner_rc, RET_OK);
  expect_reply(&r.inner, RET_OK, "v" LD_VERSION);
  assert_int_equal(r.destroy_rc, RET_ERR);
  assert_string_equal(r.destroy.msg,
                      "liblogosdelivery error: destroy called from the context's own thread");
  destroy_ok(ctx);
  calls_clear(&r.inner);
  calls_clear(&r.destroy);
  calls_clear(&r.outer);
}

/* ---- the event callback --------------------------------------------------------------------- */

static void emit_handler(ld_lib_ctx_t *ctx, ld_lib_request_t *req, void *args) {
  const char *json = args;
  ld_lib_ctx_emit(ctx, json, strlen(json));
  ld_lib_reply_text(req, "");
}

static void emit(void *ctx, const char *json) {
  calls_t c;
  calls_init(&c);
  assert_int_equal(ld_lib_dispatch(ctx, on_call, &c, emit_handler, (void *)json, NULL), RET_OK);
  expect_reply(&c, RET_OK, "");
  calls_clear(&c);
}

typedef struct swap {
  void *ctx;
  calls_t *next;
  calls_t self;
} swap_t;

/* An event callback that hands the role over to another callback. */
static void on_swap(int ret, const char *msg, size_t len, void *ud) {
  swap_t *s = ud;
  on_call(ret, msg, len, &s->self);
  logosdelivery_set_event_callback(s->ctx, on_call, s->next);
}

static void event_callback_set_replace_clear(void **state) {
  (void)state;
  void *ctx = create_ok(CONFIG);
  emit(ctx, "{\"eventType\":\"dropped\"}");
  calls_t a, b;
  calls_init(&a);
  calls_init(&b);
  logosdelivery_set_event_callback(ctx, on_call, &a);
  emit(ctx, "{\"eventType\":\"one\"}");
  assert_int_equal(a.n, 1);
  assert_string_equal(a.msg, "{\"eventType\":\"one\"}");
  assert_false(pthread_equal(a.thread, pthread_self()));
  logosdelivery_set_event_callback(ctx, on_call, &b);
  emit(ctx, "{\"eventType\":\"two\"}");
  assert_int_equal(a.n, 1);
  assert_int_equal(b.n, 1);
  logosdelivery_set_event_callback(ctx, NULL, NULL);
  emit(ctx, "{\"eventType\":\"three\"}");
  assert_int_equal(b.n, 1);
  /* replaced from inside the callback itself */
  static swap_t s;
  s.ctx = ctx;
  s.next = &b;
  calls_init(&s.self);
  logosdelivery_set_event_callback(ctx, on_swap, &s);
  emit(ctx, "{\"eventType\":\"four\"}");
  emit(ctx, "{\"eventType\":\"five\"}");
  assert_int_equal(s.self.n, 1);
  assert_int_equal(b.n, 2);
  assert_string_equal(b.msg, "{\"eventType\":\"five\"}");
  destroy_ok(ctx);
  calls_clear(&a);
  calls_clear(&b);
  calls_clear(&s.self);
}

static void watchdog_reports_a_stuck_worker(void **state) {
  (void)state;
  ld_lib_set_watchdog_timing(20, 10, 200);
  void *ctx = create_ok(CONFIG);
  ld_lib_set_watchdog_timing(0, 0, 0);
  calls_t ev;
  calls_init(&ev);
  logosdelivery_set_event_callback(ctx, on_call, &ev);
  block_reset();
  calls_t blocked;
  calls_init(&blocked);
  assert_int_equal(ld_lib_dispatch(ctx, on_call, &blocked, block_handler, NULL, NULL), RET_OK);
  block_wait_entered();
  assert_true(calls_wait(&ev, 1) >= 1);
  assert_int_equal(ev.ret, RET_OK);
  assert_string_equal(ev.msg, "{\"eventType\":\"not_responding\"}");
  block_release();
  expect_reply(&blocked, RET_OK, "released");
  destroy_ok(ctx);
  calls_clear(&ev);
  calls_clear(&blocked);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(missing_callback),
      cmocka_unit_test(null_stale_and_bogus_contexts),
      cmocka_unit_test(bad_config_is_reported_and_nothing_else_works),
      cmocka_unit_test(requests_before_start),
      cmocka_unit_test(create_start_stop_destroy_repeated),
      cmocka_unit_test(metrics_of_a_started_node),
      cmocka_unit_test(malformed_and_absurd_arguments),
      cmocka_unit_test(eight_threads_every_request_one_callback),
      cmocka_unit_test(destroy_answers_pending_requests),
      cmocka_unit_test(destroy_while_other_threads_call),
      cmocka_unit_test(destroy_releases_callers_of_a_stuck_worker),
      cmocka_unit_test(destroy_during_create_and_stop),
      cmocka_unit_test(failed_start_can_be_retried),
      cmocka_unit_test(core_configuration_without_relay_starts),
      cmocka_unit_test(two_contexts_side_by_side),
      cmocka_unit_test(too_many_contexts),
      cmocka_unit_test(calls_from_inside_a_callback),
      cmocka_unit_test(event_callback_set_replace_clear),
      cmocka_unit_test(watchdog_reports_a_stuck_worker),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
