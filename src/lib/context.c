#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/clock.h"
#include "base/error.h"
#include "base/log.h"
#include "crypto/crypto.h"
#include "lib/channel_json.h"
#include "lib/context.h"
#include "metrics/metrics.h"
#include "metrics/node_metrics.h"
#include "metrics/process.h"

#define TOPIC "lib"
#define REPLY_ERR_PREFIX "ffi error: handleRes fireSyncRes error: "
#define DISPATCH_ERR_PREFIX "error in sendRequestToFFIThread: "
#define MAX_STOP_WAITERS 16
#define NOT_RESPONDING_JSON "{\"eventType\":\"not_responding\"}"
/* Spacing between handles, so that a handle never looks like a small integer. */
#define HANDLE_BASE 0x10000u
#define HANDLE_STEP 16u

struct ld_lib_request {
  ld_lib_request_t *next, *prev;
  ld_lib_ctx_t *ctx;
  FFICallBack cb;
  void *user_data;
  ld_lib_handler_fn fn;
  void *args;
  void (*free_args)(void *args);
  bool *taken_out; /* the waiting caller's flag (under ctx->mu); NULL when nobody waits */
  bool answered;   /* the callback was called (worker only) */
};

typedef struct req_list {
  ld_lib_request_t *head, *tail;
} req_list_t;

typedef struct stop_hook {
  int64_t handle;
  ld_lib_ctx_fn fn;
  void *user_data;
} stop_hook_t;

typedef struct stop_waiter {
  ld_lib_ctx_fn fn;
  void *user_data;
} stop_waiter_t;

struct ld_lib_ctx {
  void *handle;
  unsigned users;            /* callers inside an API function (g_reg_mu) */
  pthread_cond_t users_cond; /* with g_reg_mu */

  pthread_mutex_t mu; /* the fields down to wd_* */
  pthread_cond_t cond;
  req_list_t queue; /* handed over, not yet taken */
  size_t n_queued;  /* requests in `queue` */
  bool closing;
  bool wd_quit;
  uint64_t probe_sent_ms; /* 0: no probe outstanding */
  bool wd_fired;
  uint32_t wd_start_ms, wd_period_ms, wd_timeout_ms;

  pthread_mutex_t ev_mu; /* recursive: the event callback may replace itself */
  FFICallBack ev_cb;
  void *ev_user_data;

  uv_loop_t loop;
  uv_async_t req_async, stop_async, probe_async;
  uv_thread_t worker, watchdog;

  /* worker thread only */
  req_list_t pending; /* taken, not yet completed by their handler */
  ld_lib_config_t *cfg;
  ld_node_t *node;
  ld_messaging_t *messaging;
  ld_channels_t *channels; /* entry layer channels: the reliable channel manager */
  bool started;            /* running */
  bool needs_stop;         /* ld_node_start was called */
  bool stopping;
  bool tearing_down;
  stop_hook_t hooks[LD_LIB_MAX_STOP_HOOKS];
  size_t n_hooks;
  int64_t next_hook;
  stop_waiter_t waiters[MAX_STOP_WAITERS];
  size_t n_waiters;
};

static pthread_mutex_t g_reg_mu = PTHREAD_MUTEX_INITIALIZER;
static ld_lib_ctx_t *g_live[LD_LIB_MAX_CONTEXTS];
static uintptr_t g_handles; /* handles given out so far */
static uint32_t g_wd_start = LD_LIB_WATCHDOG_START_MS;
static uint32_t g_wd_period = LD_LIB_WATCHDOG_PERIOD_MS;
static uint32_t g_wd_timeout = LD_LIB_WATCHDOG_TIMEOUT_MS;

/* The context whose worker or watchdog runs on this thread. */
static _Thread_local ld_lib_ctx_t *tl_own_ctx;

/* ---- lists ---------------------------------------------------------------------------------- */

static void list_push(req_list_t *l, ld_lib_request_t *r) {
  r->next = NULL;
  r->prev = l->tail;
  if (l->tail != NULL)
    l->tail->next = r;
  else
    l->head = r;
  l->tail = r;
}

static void list_remove(req_list_t *l, ld_lib_request_t *r) {
  if (r->prev != NULL)
    r->prev->next = r->next;
  else
    l->head = r->next;
  if (r->next != NULL)
    r->next->prev = r->prev;
  else
    l->tail = r->prev;
  r->next = r->prev = NULL;
}

/* ---- registry ------------------------------------------------------------------------------- */

static int registry_slot(void *handle) {
  if (handle == NULL)
    return -1;
  for (int i = 0; i < LD_LIB_MAX_CONTEXTS; i++)
    if (g_live[i] != NULL && g_live[i]->handle == handle)
      return i;
  return -1;
}

ld_lib_ctx_t *ld_lib_ctx_get(void *handle) {
  pthread_mutex_lock(&g_reg_mu);
  int i = registry_slot(handle);
  ld_lib_ctx_t *ctx = i >= 0 ? g_live[i] : NULL;
  pthread_mutex_unlock(&g_reg_mu);
  return ctx;
}

/* Looks the context up and counts the caller in, so that destroy waits for it. */
static ld_lib_ctx_t *ctx_acquire(void *handle) {
  pthread_mutex_lock(&g_reg_mu);
  int i = registry_slot(handle);
  ld_lib_ctx_t *ctx = i >= 0 ? g_live[i] : NULL;
  if (ctx != NULL)
    ctx->users++;
  pthread_mutex_unlock(&g_reg_mu);
  return ctx;
}

static void ctx_release(ld_lib_ctx_t *ctx) {
  pthread_mutex_lock(&g_reg_mu);
  if (--ctx->users == 0)
    pthread_cond_broadcast(&ctx->users_cond);
  pthread_mutex_unlock(&g_reg_mu);
}

void *ld_lib_ctx_handle(ld_lib_ctx_t *ctx) {
  return ctx->handle;
}

void ld_lib_set_watchdog_timing(uint32_t start_ms, uint32_t period_ms, uint32_t timeout_ms) {
  pthread_mutex_lock(&g_reg_mu);
  g_wd_start = start_ms != 0 ? start_ms : LD_LIB_WATCHDOG_START_MS;
  g_wd_period = period_ms != 0 ? period_ms : LD_LIB_WATCHDOG_PERIOD_MS;
  g_wd_timeout = timeout_ms != 0 ? timeout_ms : LD_LIB_WATCHDOG_TIMEOUT_MS;
  pthread_mutex_unlock(&g_reg_mu);
}

const char *ld_lib_version(void) {
  return "v" LD_VERSION;
}

/* ---- time ----------------------------------------------------------------------------------- */

static struct timespec deadline_in(uint64_t ms) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  uint64_t ns = (uint64_t)ts.tv_nsec + (ms % 1000u) * 1000000u;
  ts.tv_sec += (time_t)(ms / 1000u + ns / 1000000000u);
  ts.tv_nsec = (long)(ns % 1000000000u);
  return ts;
}

static int cond_init_monotonic(pthread_cond_t *c) {
  pthread_condattr_t attr;
  pthread_condattr_init(&attr);
  pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
  int rc = pthread_cond_init(c, &attr);
  pthread_condattr_destroy(&attr);
  return rc;
}

/* ---- events --------------------------------------------------------------------------------- */

static void emit_raw(ld_lib_ctx_t *ctx, int ret, const char *msg, size_t len) {
  pthread_mutex_lock(&ctx->ev_mu);
  if (ctx->ev_cb != NULL)
    ctx->ev_cb(ret, msg, len, ctx->ev_user_data);
  pthread_mutex_unlock(&ctx->ev_mu);
}

void ld_lib_ctx_emit(ld_lib_ctx_t *ctx, const char *json, size_t len) {
  emit_raw(ctx, RET_OK, json, len);
}

void ld_lib_ctx_emit_error(ld_lib_ctx_t *ctx, const char *listener, const char *msg) {
  char text[512];
  int n =
      snprintf(text, sizeof text, "Exception %s when calling 'eventCallBack': %s", listener, msg);
  size_t len = n < 0 ? 0 : (size_t)n < sizeof text ? (size_t)n : sizeof text - 1;
  emit_raw(ctx, RET_ERR, text, len);
}

void ld_lib_ctx_set_event_callback(void *handle, FFICallBack cb, void *user_data) {
  ld_lib_ctx_t *ctx = ctx_acquire(handle);
  if (ctx == NULL)
    return;
  pthread_mutex_lock(&ctx->ev_mu);
  ctx->ev_cb = cb;
  ctx->ev_user_data = cb != NULL ? user_data : NULL;
  pthread_mutex_unlock(&ctx->ev_mu);
  ctx_release(ctx);
}

/* ---- replies -------------------------------------------------------------------------------- */

static void request_free(ld_lib_request_t *req) {
  if (req->free_args != NULL)
    req->free_args(req->args);
  free(req);
}

static void complete(ld_lib_request_t *req, int ret, const char *msg, size_t len) {
  if (!req->answered) {
    req->answered = true;
    req->cb(ret, msg, len, req->user_data);
  }
  list_remove(&req->ctx->pending, req);
  request_free(req);
}

void ld_lib_reply_ok(ld_lib_request_t *req, const char *msg, size_t len) {
  complete(req, RET_OK, msg != NULL ? msg : "", msg != NULL ? len : 0);
}

void ld_lib_reply_text(ld_lib_request_t *req, const char *text) {
  ld_lib_reply_ok(req, text, text != NULL ? strlen(text) : 0);
}

/* "<prefix><formatted text>" on the heap; NULL when out of memory. */
static char *format_with_prefix(const char *prefix, const char *fmt, va_list ap, size_t *len) {
  va_list ap2;
  va_copy(ap2, ap);
  int n = vsnprintf(NULL, 0, fmt, ap2);
  va_end(ap2);
  size_t plen = strlen(prefix);
  size_t total = plen + (n > 0 ? (size_t)n : 0);
  char *out = malloc(total + 1);
  if (out == NULL)
    return NULL;
  memcpy(out, prefix, plen);
  out[plen] = '\0';
  if (n > 0)
    vsnprintf(out + plen, (size_t)n + 1, fmt, ap);
  *len = total;
  return out;
}

void ld_lib_reply_err(ld_lib_request_t *req, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  size_t len = 0;
  char *text = format_with_prefix(REPLY_ERR_PREFIX, fmt, ap, &len);
  va_end(ap);
  if (text == NULL) {
    static const char oom[] = REPLY_ERR_PREFIX "out of memory";
    complete(req, RET_ERR, oom, sizeof oom - 1);
    return;
  }
  complete(req, RET_ERR, text, len);
  free(text);
}

static void sync_fail(FFICallBack cb, void *user_data, const char *prefix, const char *why) {
  char text[256];
  int n = snprintf(text, sizeof text, "%s%s", prefix, why);
  size_t len = n < 0 ? 0 : (size_t)n < sizeof text ? (size_t)n : sizeof text - 1;
  cb(RET_ERR, text, len, user_data);
}

/* ---- dispatch ------------------------------------------------------------------------------- */

/* Queues `req`. The worker's queue is the worker's: the caller returns at once, except when
 * LD_LIB_QUEUE_NO_WAIT requests are already waiting there — then (unless the caller is one of the
 * context's own threads) it waits until the worker has taken them, which holds back a caller
 * that outruns the worker. Returns NULL, or the reason it was not handed over (then `req` is not
 * queued). */
static const char *hand_over(ld_lib_ctx_t *ctx, ld_lib_request_t *req) {
  bool taken = false;
  pthread_mutex_lock(&ctx->mu);
  if (ctx->closing) {
    pthread_mutex_unlock(&ctx->mu);
    return "the context is being destroyed";
  }
  bool no_wait = tl_own_ctx == ctx || ctx->n_queued < LD_LIB_QUEUE_NO_WAIT;
  req->taken_out = no_wait ? NULL : &taken;
  list_push(&ctx->queue, req);
  ctx->n_queued++;
  uv_async_send(&ctx->req_async); /* coalesced by libuv while one is pending */
  struct timespec until = deadline_in(LD_LIB_HANDOVER_TIMEOUT_MS);
  int rc = 0;
  while (!no_wait && !taken && !ctx->closing && rc == 0)
    rc = pthread_cond_timedwait(&ctx->cond, &ctx->mu, &until);
  const char *why = NULL;
  if (!no_wait && !taken) {
    list_remove(&ctx->queue, req);
    ctx->n_queued--;
    why = ctx->closing ? "the context is being destroyed"
                       : "the worker thread did not take the request in time";
  }
  pthread_mutex_unlock(&ctx->mu);
  return why;
}

int ld_lib_dispatch(void *handle, FFICallBack cb, void *user_data, ld_lib_handler_fn fn, void *args,
                    void (*free_args)(void *args)) {
  if (cb == NULL || fn == NULL) {
    if (free_args != NULL)
      free_args(args);
    return RET_MISSING_CALLBACK;
  }
  ld_lib_ctx_t *ctx = ctx_acquire(handle);
  ld_lib_request_t *req = ctx != NULL ? calloc(1, sizeof *req) : NULL;
  const char *why = ctx == NULL ? "invalid context" : req == NULL ? "out of memory" : NULL;
  if (why == NULL) {
    *req = (ld_lib_request_t){.ctx = ctx,
                              .cb = cb,
                              .user_data = user_data,
                              .fn = fn,
                              .args = args,
                              .free_args = free_args};
    why = hand_over(ctx, req);
  }
  if (ctx != NULL)
    ctx_release(ctx);
  if (why == NULL)
    return RET_OK;
  free(req);
  if (free_args != NULL)
    free_args(args);
  sync_fail(cb, user_data, DISPATCH_ERR_PREFIX, why);
  return RET_ERR;
}

/* Worker: takes everything queued, lets the callers go, then runs the handlers. */
static void on_requests(uv_async_t *a) {
  ld_lib_ctx_t *ctx = a->data;
  pthread_mutex_lock(&ctx->mu);
  req_list_t taken = ctx->queue;
  ctx->queue = (req_list_t){NULL, NULL};
  ctx->n_queued = 0;
  for (ld_lib_request_t *r = taken.head; r != NULL; r = r->next) {
    if (r->taken_out != NULL)
      *r->taken_out = true;
    r->taken_out = NULL;
  }
  pthread_cond_broadcast(&ctx->cond);
  pthread_mutex_unlock(&ctx->mu);
  while (taken.head != NULL) {
    ld_lib_request_t *r = taken.head;
    list_remove(&taken, r);
    list_push(&ctx->pending, r);
    r->fn(ctx, r, r->args);
  }
}

static void on_probe(uv_async_t *a) {
  ld_lib_ctx_t *ctx = a->data;
  pthread_mutex_lock(&ctx->mu);
  ctx->probe_sent_ms = 0;
  ctx->wd_fired = false;
  pthread_mutex_unlock(&ctx->mu);
}

/* ---- accessors ------------------------------------------------------------------------------ */

uv_loop_t *ld_lib_ctx_loop(ld_lib_ctx_t *ctx) {
  return &ctx->loop;
}

ld_node_t *ld_lib_ctx_node(ld_lib_ctx_t *ctx) {
  return ctx->node;
}

ld_messaging_t *ld_lib_ctx_messaging(ld_lib_ctx_t *ctx) {
  return ctx->messaging;
}

ld_channels_t *ld_lib_ctx_channels(ld_lib_ctx_t *ctx) {
  return ctx->channels;
}

const ld_lib_config_t *ld_lib_ctx_config(ld_lib_ctx_t *ctx) {
  return ctx->cfg;
}

bool ld_lib_ctx_started(ld_lib_ctx_t *ctx) {
  return ctx->started;
}

bool ld_lib_ctx_stopping(ld_lib_ctx_t *ctx) {
  return ctx->stopping;
}

/* ---- the node ------------------------------------------------------------------------------- */

void ld_lib_ctx_set_config(ld_lib_ctx_t *ctx, ld_lib_config_t *cfg) {
  free(ctx->cfg);
  ctx->cfg = cfg;
  if (cfg != NULL && !cfg->node.has_nodekey &&
      ld_privkey_generate(&cfg->node.nodekey, LD_KEY_SECP256K1) == 0)
    cfg->node.has_nodekey = true;
}

int ld_lib_ctx_node_build(ld_lib_ctx_t *ctx, char *why, size_t why_cap) {
  if (ctx->cfg == NULL || ctx->node != NULL || ctx->stopping) {
    snprintf(why, why_cap, "%s", ctx->cfg == NULL ? "no configuration" : "node already exists");
    return LD_ERR_STATE;
  }
  int err = 0;
  ctx->node = ld_node_new(&ctx->loop, &ctx->cfg->node, &err);
  if (ctx->node == NULL)
    snprintf(why, why_cap, "failed to create the node: %s", ld_strerror(err));
  return ctx->node != NULL ? 0 : err;
}

int ld_lib_ctx_node_start(ld_lib_ctx_t *ctx, char *why, size_t why_cap) {
  if (ctx->node == NULL || ctx->needs_stop || ctx->stopping) {
    snprintf(why, why_cap, "%s",
             ctx->stopping       ? "node is stopping"
             : ctx->node == NULL ? "node is not initialized"
                                 : "node is already started");
    return LD_ERR_STATE;
  }
  ctx->needs_stop = true;
  int err = ld_node_start(ctx->node);
  if (err != 0) {
    snprintf(why, why_cap, "%s", ld_strerror(err));
    return err;
  }
  if (ctx->cfg->entry_layer != LD_LIB_LAYER_KERNEL) {
    /* Without relay a Core client has nothing to publish on: it sends and receives through
     * service peers, as an Edge client does (the Nim send service then has only lightpush). */
    ld_messaging_config_t mc = ctx->cfg->messaging;
    if (mc.mode == LD_MESSAGING_CORE && ld_node_relay(ctx->node) == NULL)
      mc.mode = LD_MESSAGING_EDGE;
    ctx->messaging = ld_messaging_new(ctx->node, &mc, &err);
    if (ctx->messaging == NULL) {
      snprintf(why, why_cap, "failed to create the messaging client: %s", ld_strerror(err));
      return err;
    }
  }
  if (ctx->cfg->entry_layer == LD_LIB_LAYER_CHANNELS) {
    err = ld_lib_channels_start(ctx, &ctx->channels, why, why_cap);
    if (err != 0)
      return err;
  }
  ctx->started = true;
  return 0;
}

static void run_stop_hooks(ld_lib_ctx_t *ctx) {
  while (ctx->n_hooks > 0) {
    stop_hook_t h = ctx->hooks[--ctx->n_hooks];
    h.fn(ctx, h.user_data);
  }
}

static void call_waiters(ld_lib_ctx_t *ctx) {
  stop_waiter_t w[MAX_STOP_WAITERS];
  size_t n = ctx->n_waiters;
  memcpy(w, ctx->waiters, n * sizeof w[0]);
  ctx->n_waiters = 0;
  for (size_t i = 0; i < n; i++)
    if (w[i].fn != NULL)
      w[i].fn(ctx, w[i].user_data);
}

static void on_node_stopped(void *user_data) {
  ld_lib_ctx_t *ctx = user_data;
  ctx->stopping = false;
  ctx->needs_stop = false;
  if (!ctx->tearing_down) {
    char why[256];
    if (ld_lib_ctx_node_build(ctx, why, sizeof why) != 0)
      LD_ERROR(TOPIC, "the node could not be rebuilt after stopping: %s", why);
  }
  call_waiters(ctx);
}

static void stop_node_now(ld_lib_ctx_t *ctx) {
  ld_node_t *node = ctx->node;
  ctx->node = NULL;
  if (node != NULL)
    ld_node_stop(node, on_node_stopped, ctx);
  else
    on_node_stopped(ctx);
}

static void on_messaging_freed(void *user_data) {
  stop_node_now(user_data);
}

/* Stops (and frees) the node; `force` also stops a node that was never started. */
static int node_stop(ld_lib_ctx_t *ctx, bool force, ld_lib_ctx_fn done, void *user_data) {
  if (ctx->n_waiters == MAX_STOP_WAITERS)
    return LD_ERR_LIMIT;
  if (!ctx->stopping && !ctx->needs_stop && !(force && ctx->node != NULL)) {
    run_stop_hooks(ctx);
    if (done != NULL)
      done(ctx, user_data);
    return 0;
  }
  ctx->waiters[ctx->n_waiters++] = (stop_waiter_t){done, user_data};
  if (ctx->stopping)
    return 0;
  ctx->stopping = true;
  ctx->started = false;
  run_stop_hooks(ctx);
  ld_lib_channels_stop(ctx, ctx->channels);
  ctx->channels = NULL;
  ld_messaging_t *m = ctx->messaging;
  ctx->messaging = NULL;
  if (m != NULL)
    ld_messaging_free(m, on_messaging_freed, ctx);
  else
    stop_node_now(ctx);
  return 0;
}

int ld_lib_ctx_node_stop(ld_lib_ctx_t *ctx, ld_lib_ctx_fn done, void *user_data) {
  return node_stop(ctx, false, done, user_data);
}

int64_t ld_lib_ctx_add_stop_hook(ld_lib_ctx_t *ctx, ld_lib_ctx_fn fn, void *user_data) {
  if (fn == NULL)
    return LD_ERR_INVALID_ARG;
  if (ctx->n_hooks == LD_LIB_MAX_STOP_HOOKS)
    return LD_ERR_LIMIT;
  int64_t h = ++ctx->next_hook;
  ctx->hooks[ctx->n_hooks++] = (stop_hook_t){h, fn, user_data};
  return h;
}

int ld_lib_ctx_remove_stop_hook(ld_lib_ctx_t *ctx, int64_t handle) {
  for (size_t i = 0; i < ctx->n_hooks; i++) {
    if (ctx->hooks[i].handle != handle)
      continue;
    memmove(&ctx->hooks[i], &ctx->hooks[i + 1], (ctx->n_hooks - i - 1) * sizeof ctx->hooks[0]);
    ctx->n_hooks--;
    return 0;
  }
  return LD_ERR_NOT_FOUND;
}

/* ---- node information ----------------------------------------------------------------------- */

int ld_lib_ctx_enr_text(ld_lib_ctx_t *ctx, char *out, size_t cap) {
  if (ctx->node == NULL)
    return LD_ERR_STATE;
  int rc = ld_node_enr_text(ctx->node, out, cap);
  return rc < 0 ? rc : 0;
}

int ld_lib_ctx_metrics_text(ld_lib_ctx_t *ctx, ld_buf_t *out) {
  ld_node_t *node = ctx->node;
  if (node == NULL)
    return LD_ERR_STATE;
  ld_metrics_t *reg = ld_metrics_new();
  if (reg == NULL)
    return LD_ERR_NOMEM;
  ld_metrics_register_process(reg);
  ld_gs_service_t *gs = ld_node_gossipsub(node);
  ld_node_metrics_sources_t src = {ld_node_switch(node), ld_node_peerstore(node),
                                   ld_node_metadata(node),
                                   gs != NULL ? ld_gs_service_router(gs) : NULL, NULL};
  ld_node_metrics_t *nm = ld_node_metrics_new(reg, &src);
  int rc = LD_ERR_NOMEM;
  if (nm != NULL) {
    ld_node_metrics_set_relay(nm, ld_node_relay(node));
    rc = ld_metrics_expose(reg, out);
  }
  ld_node_metrics_free(nm);
  ld_metrics_free(reg);
  return rc;
}

/* ---- threads -------------------------------------------------------------------------------- */

static void worker_main(void *arg) {
  ld_lib_ctx_t *ctx = arg;
  tl_own_ctx = ctx;
  uv_run(&ctx->loop, UV_RUN_DEFAULT);
}

/* One watchdog step at `now` (ctx->mu held): sends a probe or reports a silent worker. Returns
 * true when not_responding must be emitted. */
static bool watchdog_step(ld_lib_ctx_t *ctx, uint64_t now) {
  if (ctx->probe_sent_ms == 0) {
    ctx->probe_sent_ms = now;
    uv_async_send(&ctx->probe_async);
    return false;
  }
  if (ctx->wd_fired || now - ctx->probe_sent_ms < ctx->wd_timeout_ms)
    return false;
  ctx->wd_fired = true;
  return true;
}

static void watchdog_main(void *arg) {
  ld_lib_ctx_t *ctx = arg;
  tl_own_ctx = ctx;
  pthread_mutex_lock(&ctx->mu);
  uint64_t next = ld_now_ms() + ctx->wd_start_ms;
  while (!ctx->wd_quit) {
    uint64_t now = ld_now_ms();
    if (now < next) {
      struct timespec until = deadline_in(next - now);
      pthread_cond_timedwait(&ctx->cond, &ctx->mu, &until);
      continue;
    }
    next = now + ctx->wd_period_ms;
    if (!watchdog_step(ctx, now))
      continue;
    pthread_mutex_unlock(&ctx->mu);
    LD_WARN(TOPIC, "the worker thread has not answered for %u ms", ctx->wd_timeout_ms);
    ld_lib_ctx_emit(ctx, NOT_RESPONDING_JSON, sizeof NOT_RESPONDING_JSON - 1);
    pthread_mutex_lock(&ctx->mu);
  }
  pthread_mutex_unlock(&ctx->mu);
}

/* ---- create --------------------------------------------------------------------------------- */

static int ctx_init_sync(ld_lib_ctx_t *ctx) {
  pthread_mutexattr_t attr;
  pthread_mutexattr_init(&attr);
  pthread_mutexattr_settype(&attr, PTHREAD_MUTEX_RECURSIVE);
  int rc = pthread_mutex_init(&ctx->ev_mu, &attr);
  pthread_mutexattr_destroy(&attr);
  if (rc == 0)
    rc = pthread_mutex_init(&ctx->mu, NULL);
  if (rc == 0)
    rc = cond_init_monotonic(&ctx->cond);
  if (rc == 0)
    rc = pthread_cond_init(&ctx->users_cond, NULL);
  return rc;
}

static int ctx_init_loop(ld_lib_ctx_t *ctx) {
  if (uv_loop_init(&ctx->loop) != 0)
    return -1;
  uv_async_init(&ctx->loop, &ctx->req_async, on_requests);
  uv_async_init(&ctx->loop, &ctx->probe_async, on_probe);
  ctx->req_async.data = ctx->probe_async.data = ctx;
  return 0;
}

static void ctx_free(ld_lib_ctx_t *ctx) {
  pthread_mutex_destroy(&ctx->ev_mu);
  pthread_mutex_destroy(&ctx->mu);
  pthread_cond_destroy(&ctx->cond);
  pthread_cond_destroy(&ctx->users_cond);
  free(ctx->cfg);
  free(ctx);
}

/* Reserves a registry slot and a handle; -1 when every slot is taken. */
static int registry_add(ld_lib_ctx_t *ctx) {
  pthread_mutex_lock(&g_reg_mu);
  int slot = -1;
  for (int i = 0; i < LD_LIB_MAX_CONTEXTS && slot < 0; i++)
    if (g_live[i] == NULL)
      slot = i;
  if (slot >= 0) {
    g_handles++;
    ctx->handle = (void *)(uintptr_t)(HANDLE_BASE + g_handles * HANDLE_STEP);
    ctx->wd_start_ms = g_wd_start;
    ctx->wd_period_ms = g_wd_period;
    ctx->wd_timeout_ms = g_wd_timeout;
    g_live[slot] = ctx;
  }
  pthread_mutex_unlock(&g_reg_mu);
  return slot;
}

static void registry_remove(ld_lib_ctx_t *ctx) {
  pthread_mutex_lock(&g_reg_mu);
  int i = registry_slot(ctx->handle);
  if (i >= 0)
    g_live[i] = NULL;
  pthread_mutex_unlock(&g_reg_mu);
}

static void on_stop(uv_async_t *a);

/* Closes the loop's handles of a context whose worker never ran. */
static void loop_discard(ld_lib_ctx_t *ctx) {
  uv_close((uv_handle_t *)&ctx->req_async, NULL);
  uv_close((uv_handle_t *)&ctx->probe_async, NULL);
  uv_close((uv_handle_t *)&ctx->stop_async, NULL);
  uv_run(&ctx->loop, UV_RUN_DEFAULT);
  uv_loop_close(&ctx->loop);
}

static void worker_cleanup(ld_lib_ctx_t *ctx);

/* Tears the worker down (on_stop) and joins it. */
static void stop_worker(ld_lib_ctx_t *ctx) {
  uv_async_send(&ctx->stop_async);
  uv_thread_join(&ctx->worker);
  worker_cleanup(ctx);
}

static void stop_watchdog(ld_lib_ctx_t *ctx) {
  pthread_mutex_lock(&ctx->mu);
  ctx->wd_quit = true;
  pthread_cond_broadcast(&ctx->cond);
  pthread_mutex_unlock(&ctx->mu);
  uv_thread_join(&ctx->watchdog);
}

void *ld_lib_ctx_create(char *why, size_t why_cap) {
  ld_lib_ctx_t *ctx = calloc(1, sizeof *ctx);
  if (ctx == NULL || ctx_init_sync(ctx) != 0 || ctx_init_loop(ctx) != 0) {
    snprintf(why, why_cap, "failed to create the context");
    if (ctx != NULL)
      ctx_free(ctx);
    return NULL;
  }
  uv_async_init(&ctx->loop, &ctx->stop_async, on_stop);
  ctx->stop_async.data = ctx;
  if (registry_add(ctx) < 0) {
    snprintf(why, why_cap, "too many contexts (at most %d)", LD_LIB_MAX_CONTEXTS);
    loop_discard(ctx);
    ctx_free(ctx);
    return NULL;
  }
  if (uv_thread_create(&ctx->worker, worker_main, ctx) != 0) {
    snprintf(why, why_cap, "failed to create the worker thread");
    registry_remove(ctx);
    loop_discard(ctx);
    ctx_free(ctx);
    return NULL;
  }
  if (uv_thread_create(&ctx->watchdog, watchdog_main, ctx) != 0) {
    snprintf(why, why_cap, "failed to create the watchdog thread");
    registry_remove(ctx);
    stop_worker(ctx);
    ctx_free(ctx);
    return NULL;
  }
  return ctx->handle;
}

/* ---- destroy -------------------------------------------------------------------------------- */

static void close_handles(ld_lib_ctx_t *ctx, void *user_data) {
  (void)user_data;
  uv_close((uv_handle_t *)&ctx->req_async, NULL);
  uv_close((uv_handle_t *)&ctx->probe_async, NULL);
  uv_close((uv_handle_t *)&ctx->stop_async, NULL);
}

/* Requests queued by the context's own threads that the worker has not taken yet. */
static void fail_queued(ld_lib_ctx_t *ctx) {
  pthread_mutex_lock(&ctx->mu);
  req_list_t q = ctx->queue;
  ctx->queue = (req_list_t){NULL, NULL};
  ctx->n_queued = 0;
  pthread_mutex_unlock(&ctx->mu);
  while (q.head != NULL) {
    ld_lib_request_t *r = q.head;
    list_remove(&q, r);
    list_push(&ctx->pending, r);
    ld_lib_reply_err(r, "liblogosdelivery error: the context was destroyed");
  }
}

/* Answers every request still pending; their handlers may complete them later (silently). */
static void answer_pending(ld_lib_ctx_t *ctx) {
  static const char text[] = REPLY_ERR_PREFIX "liblogosdelivery error: the context was destroyed";
  for (ld_lib_request_t *r = ctx->pending.head; r != NULL; r = r->next) {
    if (r->answered)
      continue;
    r->answered = true;
    r->cb(RET_ERR, text, sizeof text - 1, r->user_data);
  }
}

static void on_stop(uv_async_t *a) {
  ld_lib_ctx_t *ctx = a->data;
  if (ctx->tearing_down)
    return;
  ctx->tearing_down = true;
  fail_queued(ctx);
  answer_pending(ctx);
  if (ctx->node != NULL || ctx->stopping || ctx->needs_stop) {
    if (node_stop(ctx, true, close_handles, NULL) == 0)
      return;
  }
  run_stop_hooks(ctx);
  close_handles(ctx, NULL);
}

static void close_any(uv_handle_t *h, void *arg) {
  (void)arg;
  if (!uv_is_closing(h))
    uv_close(h, NULL);
}

/* After the worker has returned: frees what handlers never completed and closes the loop. */
static void worker_cleanup(ld_lib_ctx_t *ctx) {
  while (ctx->pending.head != NULL) {
    ld_lib_request_t *r = ctx->pending.head;
    list_remove(&ctx->pending, r);
    request_free(r);
  }
  for (int i = 0; i < 8 && uv_loop_close(&ctx->loop) == UV_EBUSY; i++) {
    uv_walk(&ctx->loop, close_any, NULL);
    uv_run(&ctx->loop, UV_RUN_DEFAULT);
  }
}

/* Removes the context from the registry, lets waiting callers go and waits until no caller is
 * inside an API function with it. */
static void retire(ld_lib_ctx_t *ctx, int slot) {
  g_live[slot] = NULL;
  pthread_mutex_lock(&ctx->mu);
  ctx->closing = true;
  pthread_cond_broadcast(&ctx->cond);
  pthread_mutex_unlock(&ctx->mu);
  while (ctx->users > 0)
    pthread_cond_wait(&ctx->users_cond, &g_reg_mu);
}

int ld_lib_ctx_destroy(void *handle, FFICallBack cb, void *user_data) {
  if (cb == NULL)
    return RET_MISSING_CALLBACK;
  pthread_mutex_lock(&g_reg_mu);
  int slot = registry_slot(handle);
  const char *why = slot < 0                     ? "invalid context"
                    : tl_own_ctx == g_live[slot] ? "destroy called from the context's own thread"
                                                 : NULL;
  if (why != NULL) {
    pthread_mutex_unlock(&g_reg_mu);
    sync_fail(cb, user_data, "liblogosdelivery error: ", why);
    return RET_ERR;
  }
  ld_lib_ctx_t *ctx = g_live[slot];
  retire(ctx, slot);
  pthread_mutex_unlock(&g_reg_mu);
  stop_watchdog(ctx); /* first: it signals the worker's loop */
  stop_worker(ctx);
  ctx_free(ctx);
  cb(RET_OK, NULL, 0, user_data);
  return RET_OK;
}
