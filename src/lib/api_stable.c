/* The stable tier (liblogosdelivery.h): argument copies on the caller's thread, handlers on the
 * context's worker thread, and the event listeners start_node attaches to the node's broker. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "base/error.h"
#include "base/log.h"
#include "crypto/crypto.h"
#include "liblogosdelivery_channels.h"
#include "lib/channel_json.h"
#include "lib/context.h"
#include "lib/events_json.h"
#include "lib/message_json.h"
#include "node/events.h"
#include "node/peer_manager.h"
#include "p2p/multiaddr.h"
#include "p2p/switch.h"
#include "waku/enr/enr.h"

#define TOPIC "lib"
/* Longest content topic or node info id copied from a caller; longer ones are refused. */
#define ARG_TEXT_MAX 4096u
#define LISTENERS_MAX 16

/* ---- arguments ------------------------------------------------------------------------------ */

/* A caller's string, copied (at most `cap` bytes; `too_long` when it was longer). */
typedef struct arg_text {
  char *s;
  size_t len;
  bool too_long;
} arg_text_t;

static void arg_free(void *p) {
  arg_text_t *a = p;
  if (a != NULL)
    free(a->s);
  free(a);
}

static arg_text_t *arg_new(const char *s, size_t cap) {
  arg_text_t *a = calloc(1, sizeof *a);
  if (a == NULL)
    return NULL;
  size_t n = s != NULL ? strnlen(s, cap + 1) : 0;
  a->too_long = n > cap;
  a->len = n > cap ? cap : n;
  a->s = malloc(a->len + 1);
  if (a->s == NULL) {
    free(a);
    return NULL;
  }
  if (a->len > 0)
    memcpy(a->s, s, a->len);
  a->s[a->len] = '\0';
  return a;
}

/* Dispatches `fn` with a copy of `s`. */
static int dispatch_text(void *ctx, FFICallBack cb, void *ud, ld_lib_handler_fn fn, const char *s,
                         size_t cap) {
  if (cb == NULL)
    return RET_MISSING_CALLBACK;
  arg_text_t *a = arg_new(s, cap);
  if (a == NULL) {
    static const char oom[] = "error in sendRequestToFFIThread: out of memory";
    cb(RET_ERR, oom, sizeof oom - 1, ud);
    return RET_ERR;
  }
  return ld_lib_dispatch(ctx, cb, ud, fn, a, arg_free);
}

/* ---- handler preconditions ------------------------------------------------------------------ */

/* The node, or NULL after answering "<op> failed: node is not initialized". */
static ld_node_t *need_node(ld_lib_ctx_t *ctx, ld_lib_request_t *req, const char *op) {
  ld_node_t *node = ld_lib_ctx_config(ctx) != NULL ? ld_lib_ctx_node(ctx) : NULL;
  if (node == NULL)
    ld_lib_reply_err(req, "%s failed: node is not initialized", op);
  return node;
}

static bool kernel_only(ld_lib_ctx_t *ctx) {
  return ld_lib_ctx_config(ctx)->entry_layer == LD_LIB_LAYER_KERNEL;
}

/* The messaging client, or NULL after answering why there is none. */
static ld_messaging_t *need_messaging(ld_lib_ctx_t *ctx, ld_lib_request_t *req, const char *op) {
  if (need_node(ctx, req, op) == NULL)
    return NULL;
  ld_messaging_t *m = ld_lib_ctx_messaging(ctx);
  if (kernel_only(ctx))
    ld_lib_reply_err(req, "%s failed: node has no messaging client (kernel-only node)", op);
  else if (m == NULL)
    ld_lib_reply_err(req, "%s failed: node is not started", op);
  return kernel_only(ctx) ? NULL : m;
}

/* ---- event listeners ------------------------------------------------------------------------ */

typedef struct listeners {
  ld_lib_ctx_t *ctx;
  ld_broker_t *broker;
  int64_t handles[LISTENERS_MAX];
  size_t n;
} listeners_t;

/* Emits a built event, or the error of a listener whose event could not be built. */
static void emit_built(ld_lib_ctx_t *ctx, const char *listener, char *json, size_t len) {
  if (json == NULL) {
    ld_lib_ctx_emit_error(ctx, listener, "out of memory");
    return;
  }
  ld_lib_ctx_emit(ctx, json, len);
  free(json);
}

static void on_send_event(int kind, const void *payload, void *ud) {
  listeners_t *l = ud;
  const char *type = LD_LIB_EVENT_MESSAGE_ERROR, *name = LD_LIB_LISTENER_MESSAGE_ERROR;
  if (kind == LD_EVENT_MESSAGING_PROPAGATED) {
    type = LD_LIB_EVENT_MESSAGE_PROPAGATED;
    name = LD_LIB_LISTENER_MESSAGE_PROPAGATED;
  } else if (kind == LD_EVENT_MESSAGING_SENT) {
    type = LD_LIB_EVENT_MESSAGE_SENT;
    name = LD_LIB_LISTENER_MESSAGE_SENT;
  }
  size_t len = 0;
  char *json = ld_lib_event_send_json(type, payload, &len);
  emit_built(l->ctx, name, json, len);
}

static void on_received(int kind, const void *payload, void *ud) {
  (void)kind;
  listeners_t *l = ud;
  const ld_messaging_received_event_t *ev = payload;
  if (ld_channels_consumes(ld_lib_ctx_channels(l->ctx), ev->msg))
    return; /* reported as channel_message_received */
  size_t len = 0;
  char *json = ld_lib_event_received_json(ev->hash, ev->msg, &len);
  emit_built(l->ctx, LD_LIB_LISTENER_MESSAGE_RECEIVED, json, len);
}

static void on_status(int kind, const void *payload, void *ud) {
  (void)kind;
  listeners_t *l = ud;
  const ld_messaging_status_event_t *ev = payload;
  size_t len = 0;
  char *json = ld_lib_event_connection_status_json(ev->status, &len);
  emit_built(l->ctx, LD_LIB_LISTENER_CONNECTION_STATUS, json, len);
}

static void on_topic_health(int kind, const void *payload, void *ud) {
  (void)kind;
  listeners_t *l = ud;
  const ld_event_topic_health_t *ev = payload;
  size_t len = 0;
  char *json = ld_lib_event_topic_health_json(ev->pubsub_topic, ev->health, &len);
  emit_built(l->ctx, LD_LIB_LISTENER_TOPIC_HEALTH, json, len);
}

/* A peer joins with its first connection and leaves with its last. */
static void on_connection(int kind, const void *payload, void *ud) {
  (void)kind;
  listeners_t *l = ud;
  const ld_event_connection_t *ev = payload;
  bool joined = ev->connected && ev->n_conns == 1;
  if (!joined && !(!ev->connected && ev->n_conns == 0))
    return;
  size_t len = 0;
  char *json = ld_lib_event_connection_change_json(
      ev->peer, joined ? LD_LIB_PEER_CONNECTED : LD_LIB_PEER_DISCONNECTED, &len);
  emit_built(l->ctx, LD_LIB_LISTENER_CONNECTION_CHANGE, json, len);
}

static void on_channel_event(int kind, const void *payload, void *ud) {
  listeners_t *l = ud;
  size_t len = 0;
  char *json = ld_lib_event_channel_json(kind, payload, &len);
  emit_built(l->ctx, ld_lib_channel_listener_name(kind), json, len);
}

static void listeners_detach(ld_lib_ctx_t *ctx, void *ud) {
  (void)ctx;
  listeners_t *l = ud;
  for (size_t i = 0; i < l->n; i++)
    ld_broker_unsubscribe(l->broker, l->handles[i]);
  free(l);
}

typedef struct listener_spec {
  int kind;
  ld_broker_listener_fn fn;
  const char *event; /* the Nim event type, for the error text */
} listener_spec_t;

static const listener_spec_t k_listeners[] = {
    {LD_EVENT_MESSAGING_SENT, on_send_event, "MessageSentEvent"},
    {LD_EVENT_MESSAGING_ERROR, on_send_event, "MessageErrorEvent"},
    {LD_EVENT_MESSAGING_PROPAGATED, on_send_event, "MessagePropagatedEvent"},
    {LD_EVENT_MESSAGING_RECEIVED, on_received, "MessageReceivedEvent"},
    {LD_EVENT_MESSAGING_CONNECTION_STATUS, on_status, "ConnectionStatusChange"},
    {LD_EVENT_TOPIC_HEALTH, on_topic_health, "EventShardTopicHealthChange"},
    {LD_EVENT_CONNECTION, on_connection, "WakuPeerEvent"},
    {LD_EVENT_CHANNEL_RECEIVED, on_channel_event, "ChannelMessageReceivedEvent"},
    {LD_EVENT_CHANNEL_SENT, on_channel_event, "ChannelMessageSentEvent"},
    {LD_EVENT_CHANNEL_ERROR, on_channel_event, "ChannelMessageErrorEvent"},
    {LD_EVENT_CHANNEL_DELIVERED, on_channel_event, "ChannelMessageDeliveredEvent"},
    {LD_EVENT_CHANNEL_DELIVERY_ERROR, on_channel_event, "ChannelMessageDeliveryErrorEvent"},
    {LD_EVENT_CHANNEL_LOST, on_channel_event, "ChannelMessageLostEvent"},
};

/* Attaches the listeners (detached by a stop hook). Returns 0, or an error with the text of
 * the listener that failed in `why`. */
static int listeners_attach(ld_lib_ctx_t *ctx, ld_node_t *node, char *why, size_t cap) {
  listeners_t *l = calloc(1, sizeof *l);
  if (l == NULL) {
    snprintf(why, cap, "%s.listen failed: %s", k_listeners[0].event, ld_strerror(LD_ERR_NOMEM));
    return LD_ERR_NOMEM;
  }
  l->ctx = ctx;
  l->broker = ld_node_broker(node);
  for (size_t i = 0; i < sizeof k_listeners / sizeof k_listeners[0]; i++) {
    int64_t h = ld_broker_subscribe(l->broker, k_listeners[i].kind, k_listeners[i].fn, l);
    if (h < 0) {
      snprintf(why, cap, "%s.listen failed: %s", k_listeners[i].event, ld_strerror((int)h));
      listeners_detach(ctx, l);
      return (int)h;
    }
    l->handles[l->n++] = h;
  }
  int64_t hook = ld_lib_ctx_add_stop_hook(ctx, listeners_detach, l);
  if (hook < 0) {
    snprintf(why, cap, "stop hook failed: %s", ld_strerror((int)hook));
    listeners_detach(ctx, l);
    return (int)hook;
  }
  return 0;
}

/* ---- lifecycle ------------------------------------------------------------------------------ */

static void h_create(ld_lib_ctx_t *ctx, ld_lib_request_t *req, void *args) {
  arg_text_t *a = args;
  ld_lib_config_t *cfg = calloc(1, sizeof *cfg);
  if (cfg == NULL) {
    ld_lib_reply_err(req, "failed parseLogosDeliveryConf %s", ld_strerror(LD_ERR_NOMEM));
    return;
  }
  char err[512] = "";
  size_t len = a->too_long ? a->len + 1 : a->len; /* over the cap: the parser says so */
  ld_channels_config_t ch_cfg;
  if (ld_lib_config_parse(a->s, len, cfg, err, sizeof err) != 0 ||
      ld_lib_channels_config(&cfg->channels, &ch_cfg, err, sizeof err) != 0) {
    free(cfg);
    ld_lib_reply_err(req, "failed parseLogosDeliveryConf %s", err);
    return;
  }
  ld_log_set_level(cfg->log_level);
  ld_log_set_format(cfg->log_format);
  ld_lib_ctx_set_config(ctx, cfg);
  if (ld_lib_ctx_node_build(ctx, err, sizeof err) != 0) {
    ld_lib_reply_err(req, "%s", err);
    return;
  }
  ld_lib_reply_text(req, "");
}

static void ignore_reply(int ret, const char *msg, size_t len, void *ud) {
  (void)ret, (void)msg, (void)len, (void)ud;
}

void *logosdelivery_create_node(const char *configJson, FFICallBack callback, void *userData) {
  if (callback == NULL)
    return NULL;
  char why[128];
  if (ld_crypto_init() != 0) {
    snprintf(why, sizeof why, "error in sendRequestToFFIThread: %s", ld_strerror(LD_ERR_CRYPTO));
    callback(RET_ERR, why, strlen(why), userData);
    return NULL;
  }
  void *ctx = ld_lib_ctx_create(why, sizeof why);
  if (ctx == NULL) {
    char text[192];
    int n = snprintf(text, sizeof text, "error in sendRequestToFFIThread: %s", why);
    callback(RET_ERR, text, n > 0 ? (size_t)n : 0, userData);
    return NULL;
  }
  /* One byte past the cap is kept so that the parser reports an oversized configuration. */
  arg_text_t *a = arg_new(configJson, LD_LIB_CONFIG_MAX_JSON);
  int rc = a != NULL ? ld_lib_dispatch(ctx, callback, userData, h_create, a, arg_free) : RET_ERR;
  if (a == NULL) {
    static const char oom[] = "error in sendRequestToFFIThread: out of memory";
    callback(RET_ERR, oom, sizeof oom - 1, userData);
  }
  if (rc != RET_OK) {
    ld_lib_ctx_destroy(ctx, ignore_reply, NULL);
    return NULL;
  }
  return ctx;
}

typedef struct failed_start {
  ld_lib_request_t *req;
  char why[256];
} failed_start_t;

static void on_failed_start_stopped(ld_lib_ctx_t *ctx, void *ud) {
  (void)ctx;
  failed_start_t *fs = ud;
  ld_lib_reply_err(fs->req, "failed to start: %s", fs->why);
  free(fs);
}

/* Stops what a failed start left running, then answers. */
static void start_failed(ld_lib_ctx_t *ctx, ld_lib_request_t *req, const char *why) {
  failed_start_t *fs = malloc(sizeof *fs);
  if (fs == NULL) {
    ld_lib_reply_err(req, "failed to start: %s", why);
    return;
  }
  fs->req = req;
  snprintf(fs->why, sizeof fs->why, "%s", why);
  if (ld_lib_ctx_node_stop(ctx, on_failed_start_stopped, fs) != 0) {
    ld_lib_reply_err(req, "failed to start: %s", why);
    free(fs);
  }
}

static void h_start(ld_lib_ctx_t *ctx, ld_lib_request_t *req, void *args) {
  (void)args;
  ld_node_t *node = need_node(ctx, req, "START_NODE");
  if (node == NULL)
    return;
  if (ld_lib_ctx_started(ctx) || ld_lib_ctx_stopping(ctx)) {
    ld_lib_reply_err(req, "failed to start: node is %s",
                     ld_lib_ctx_started(ctx) ? "already started" : "stopping");
    return;
  }
  char why[256];
  if (listeners_attach(ctx, node, why, sizeof why) != 0) {
    ld_lib_reply_err(req, "%s", why);
    return;
  }
  if (ld_lib_ctx_node_start(ctx, why, sizeof why) != 0) {
    LD_ERROR(TOPIC, "START_NODE failed: %s", why);
    start_failed(ctx, req, why);
    return;
  }
  ld_lib_reply_text(req, "");
}

int logosdelivery_start_node(void *ctx, FFICallBack callback, void *userData) {
  return ld_lib_dispatch(ctx, callback, userData, h_start, NULL, NULL);
}

static void on_stopped(ld_lib_ctx_t *ctx, void *ud) {
  (void)ctx;
  ld_lib_reply_text(ud, "");
}

static void h_stop(ld_lib_ctx_t *ctx, ld_lib_request_t *req, void *args) {
  (void)args;
  if (ld_lib_ctx_config(ctx) == NULL) {
    ld_lib_reply_err(req, "STOP_NODE failed: node is not initialized");
    return;
  }
  if (ld_lib_ctx_node_stop(ctx, on_stopped, req) != 0)
    ld_lib_reply_err(req, "failed to stop: too many stop requests under way");
}

int logosdelivery_stop_node(void *ctx, FFICallBack callback, void *userData) {
  return ld_lib_dispatch(ctx, callback, userData, h_stop, NULL, NULL);
}

int logosdelivery_destroy(void *ctx, FFICallBack callback, void *userData) {
  return ld_lib_ctx_destroy(ctx, callback, userData);
}

void logosdelivery_set_event_callback(void *ctx, FFICallBack callback, void *userData) {
  ld_lib_ctx_set_event_callback(ctx, callback, userData);
}

/* ---- messaging ------------------------------------------------------------------------------ */

static void h_subscribe(ld_lib_ctx_t *ctx, ld_lib_request_t *req, void *args) {
  arg_text_t *a = args;
  ld_messaging_t *m = need_messaging(ctx, req, "Subscribe");
  if (m == NULL)
    return;
  char why[256] = "content topic too long";
  if (!a->too_long && ld_messaging_subscribe(m, a->s, why, sizeof why) == 0)
    ld_lib_reply_text(req, "");
  else
    ld_lib_reply_err(req, "Subscribe failed: %s", why);
}

static void h_unsubscribe(ld_lib_ctx_t *ctx, ld_lib_request_t *req, void *args) {
  arg_text_t *a = args;
  ld_messaging_t *m = need_messaging(ctx, req, "Unsubscribe");
  if (m == NULL)
    return;
  char why[256] = "content topic too long";
  if (!a->too_long && ld_messaging_unsubscribe(m, a->s, why, sizeof why) == 0)
    ld_lib_reply_text(req, "");
  else
    ld_lib_reply_err(req, "Unsubscribe failed: %s", why);
}

int logosdelivery_subscribe(void *ctx, FFICallBack callback, void *userData,
                            const char *contentTopic) {
  return dispatch_text(ctx, callback, userData, h_subscribe, contentTopic, ARG_TEXT_MAX);
}

int logosdelivery_unsubscribe(void *ctx, FFICallBack callback, void *userData,
                              const char *contentTopic) {
  return dispatch_text(ctx, callback, userData, h_unsubscribe, contentTopic, ARG_TEXT_MAX);
}

static void h_send(ld_lib_ctx_t *ctx, ld_lib_request_t *req, void *args) {
  arg_text_t *a = args;
  ld_messaging_t *m = need_messaging(ctx, req, "Send");
  if (m == NULL)
    return;
  ld_lib_send_message_t msg;
  char err[512];
  size_t len = a->too_long ? a->len + 1 : a->len;
  /* A payload over the node's limit is reported by a message_error event, as the Nim library
   * does; the parser's cap only bounds what any node could carry. */
  if (ld_lib_send_message_parse(a->s, len, LD_NODE_MAX_MSG_SIZE_LIMIT, &msg, err, sizeof err)) {
    ld_lib_reply_err(req, "%s", err);
    return;
  }
  ld_messaging_envelope_t env = {msg.content_topic, msg.payload, msg.payload_len, NULL, 0,
                                 msg.ephemeral};
  char id[LD_MESSAGING_REQUEST_ID_LEN + 1];
  int rc = ld_messaging_send(m, &env, id, err, sizeof err);
  ld_lib_send_message_clear(&msg);
  if (rc == 0)
    ld_lib_reply_text(req, id);
  else if (rc == LD_ERR_INVALID_ARG)
    ld_lib_reply_err(req, "Send failed: %s", err);
  else
    ld_lib_reply_err(req, "Send failed: MessagingClient.send: %s", err);
}

int logosdelivery_send(void *ctx, FFICallBack callback, void *userData, const char *messageJson) {
  return dispatch_text(ctx, callback, userData, h_send, messageJson, LD_LIB_MESSAGE_JSON_MAX);
}

/* ---- reliable channels ---------------------------------------------------------------------- */

/* The channel manager, or NULL after answering why there is none. */
static ld_channels_t *need_channels(ld_lib_ctx_t *ctx, ld_lib_request_t *req, const char *op) {
  if (need_node(ctx, req, op) == NULL)
    return NULL;
  ld_lib_entry_layer_t layer = ld_lib_ctx_config(ctx)->entry_layer;
  ld_channels_t *c = ld_lib_ctx_channels(ctx);
  if (layer != LD_LIB_LAYER_CHANNELS)
    ld_lib_reply_err(req, "%s failed: node has no reliable channel manager (%s node)", op,
                     layer == LD_LIB_LAYER_KERNEL ? "kernel-only" : "messaging-only");
  else if (c == NULL)
    ld_lib_reply_err(req, "%s failed: node is not started", op);
  return layer == LD_LIB_LAYER_CHANNELS ? c : NULL;
}

/* Copies of a channel call's arguments (each at most ARG_TEXT_MAX bytes, the JSON at most
 * LD_LIB_MESSAGE_JSON_MAX). */
typedef struct channel_args {
  arg_text_t *a[3];
} channel_args_t;

static void channel_args_free(void *p) {
  channel_args_t *c = p;
  if (c == NULL)
    return;
  for (int i = 0; i < 3; i++)
    arg_free(c->a[i]);
  free(c);
}

static bool channel_args_too_long(const channel_args_t *c) {
  for (int i = 0; i < 3; i++)
    if (c->a[i] != NULL && c->a[i]->too_long)
      return true;
  return false;
}

static int dispatch_channel(void *ctx, FFICallBack cb, void *ud, ld_lib_handler_fn fn,
                            const char *s0, const char *s1, const char *s2, size_t cap1) {
  if (cb == NULL)
    return RET_MISSING_CALLBACK;
  channel_args_t *c = calloc(1, sizeof *c);
  const char *in[3] = {s0, s1, s2};
  bool ok = c != NULL;
  for (int i = 0; ok && i < 3; i++)
    if (i == 0 || in[i] != NULL)
      ok = (c->a[i] = arg_new(in[i], i == 1 ? cap1 : ARG_TEXT_MAX)) != NULL;
  if (!ok) {
    channel_args_free(c);
    static const char oom[] = "error in sendRequestToFFIThread: out of memory";
    cb(RET_ERR, oom, sizeof oom - 1, ud);
    return RET_ERR;
  }
  return ld_lib_dispatch(ctx, cb, ud, fn, c, channel_args_free);
}

static void h_channel_create(ld_lib_ctx_t *ctx, ld_lib_request_t *req, void *args) {
  channel_args_t *a = args;
  ld_channels_t *c = need_channels(ctx, req, "ChannelCreate");
  if (c == NULL)
    return;
  char why[512] = "argument too long";
  if (a->a[1] == NULL || a->a[2] == NULL)
    snprintf(why, sizeof why, "missing %s", a->a[1] == NULL ? "content topic" : "sender id");
  else if (!channel_args_too_long(a) &&
           ld_channels_create(c, a->a[0]->s, a->a[1]->s, a->a[2]->s, why, sizeof why) == 0) {
    ld_lib_reply_text(req, a->a[0]->s);
    return;
  }
  ld_lib_reply_err(req, "ChannelCreate failed: %s", why);
}

static void h_channel_exists(ld_lib_ctx_t *ctx, ld_lib_request_t *req, void *args) {
  channel_args_t *a = args;
  if (need_node(ctx, req, "ChannelExists") == NULL)
    return;
  ld_channels_t *c = ld_lib_ctx_channels(ctx);
  if (c == NULL && ld_lib_ctx_config(ctx)->entry_layer == LD_LIB_LAYER_CHANNELS) {
    ld_lib_reply_text(req, "false"); /* not started: no channel exists */
    return;
  }
  if (c == NULL && need_channels(ctx, req, "ChannelExists") == NULL)
    return;
  bool exists = !channel_args_too_long(a) && ld_channels_exists(c, a->a[0]->s);
  ld_lib_reply_text(req, exists ? "true" : "false");
}

static void h_channel_send(ld_lib_ctx_t *ctx, ld_lib_request_t *req, void *args) {
  channel_args_t *a = args;
  ld_channels_t *c = need_channels(ctx, req, "ChannelSend");
  if (c == NULL)
    return;
  char err[512];
  uint8_t *payload = NULL;
  size_t len = 0;
  bool ephemeral = false;
  const arg_text_t *j = a->a[1];
  size_t jlen = j == NULL ? 0 : j->too_long ? j->len + 1 : j->len;
  if (ld_lib_channel_message_parse(j != NULL ? j->s : NULL, jlen, LD_NODE_MAX_MSG_SIZE_LIMIT,
                                   &payload, &len, &ephemeral, err, sizeof err) != 0) {
    ld_lib_reply_err(req, "%s", err);
    return;
  }
  char id[LD_CHANNEL_REQUEST_ID_LEN + 1];
  int rc = a->a[0]->too_long
               ? ld_error_fmt(err, sizeof err, LD_ERR_NOT_FOUND, "unknown channel: %s", a->a[0]->s)
               : ld_channels_send(c, a->a[0]->s, payload, len, ephemeral, id, err, sizeof err);
  free(payload);
  if (rc == 0)
    ld_lib_reply_text(req, id);
  else
    ld_lib_reply_err(req, "ChannelSend failed: %s", err);
}

static void h_channel_close(ld_lib_ctx_t *ctx, ld_lib_request_t *req, void *args) {
  channel_args_t *a = args;
  ld_channels_t *c = need_channels(ctx, req, "ChannelClose");
  if (c == NULL)
    return;
  char why[512];
  if (a->a[0]->too_long)
    snprintf(why, sizeof why, "unknown channel: %s", a->a[0]->s);
  else if (ld_channels_close(c, a->a[0]->s, why, sizeof why) == 0) {
    ld_lib_reply_text(req, "");
    return;
  }
  ld_lib_reply_err(req, "ChannelClose failed: %s", why);
}

int logosdelivery_channel_create(void *ctx, FFICallBack callback, void *userData,
                                 const char *channelId, const char *contentTopic,
                                 const char *senderId) {
  return dispatch_channel(ctx, callback, userData, h_channel_create, channelId, contentTopic,
                          senderId, ARG_TEXT_MAX);
}

int logosdelivery_channel_exists(void *ctx, FFICallBack callback, void *userData,
                                 const char *channelId) {
  return dispatch_channel(ctx, callback, userData, h_channel_exists, channelId, NULL, NULL, 0);
}

int logosdelivery_channel_send(void *ctx, FFICallBack callback, void *userData,
                               const char *channelId, const char *messageJson) {
  return dispatch_channel(ctx, callback, userData, h_channel_send, channelId, messageJson, NULL,
                          LD_LIB_MESSAGE_JSON_MAX);
}

int logosdelivery_channel_close(void *ctx, FFICallBack callback, void *userData,
                                const char *channelId) {
  return dispatch_channel(ctx, callback, userData, h_channel_close, channelId, NULL, NULL, 0);
}

/* ---- channel encryption hook (liblogosdelivery_channels.h) ---------------------------------- */

typedef struct crypto_args {
  arg_text_t *id;
  LogosDeliveryCryptoFn enc, dec;
  void *ud;
} crypto_args_t;

static void crypto_args_free(void *p) {
  crypto_args_t *a = p;
  if (a != NULL)
    arg_free(a->id);
  free(a);
}

static void h_channel_set_encryption(ld_lib_ctx_t *ctx, ld_lib_request_t *req, void *args) {
  crypto_args_t *a = args;
  ld_channels_t *c = need_channels(ctx, req, "ChannelSetEncryption");
  if (c == NULL)
    return;
  int rc = a->id->too_long ? LD_ERR_INVALID_ARG
                           : ld_channels_set_encryption(c, a->id->s, (ld_channel_crypto_fn)a->enc,
                                                        (ld_channel_crypto_fn)a->dec, a->ud);
  if (rc == 0)
    ld_lib_reply_text(req, "");
  else
    ld_lib_reply_err(req, "ChannelSetEncryption failed: %s",
                     rc == LD_ERR_INVALID_ARG
                         ? "invalid channel id, or only one of encryptFn and decryptFn"
                         : ld_strerror(rc));
}

int logosdelivery_channel_set_encryption(void *ctx, FFICallBack callback, void *userData,
                                         const char *channelId, LogosDeliveryCryptoFn encryptFn,
                                         LogosDeliveryCryptoFn decryptFn, void *cryptoUserData) {
  if (callback == NULL)
    return RET_MISSING_CALLBACK;
  crypto_args_t *a = calloc(1, sizeof *a);
  if (a != NULL && (a->id = arg_new(channelId, ARG_TEXT_MAX)) == NULL) {
    free(a);
    a = NULL;
  }
  if (a == NULL) {
    static const char oom[] = "error in sendRequestToFFIThread: out of memory";
    callback(RET_ERR, oom, sizeof oom - 1, userData);
    return RET_ERR;
  }
  a->enc = encryptFn;
  a->dec = decryptFn;
  a->ud = cryptoUserData;
  return ld_lib_dispatch(ctx, callback, userData, h_channel_set_encryption, a, crypto_args_free);
}

/* ---- debug / introspection ------------------------------------------------------------------ */

static const char *const k_info_ids[] = {"Version",     "Metrics",       "MyMultiaddresses",
                                         "MyENR",       "MyPeerId",      "MyBoundPorts",
                                         "MyMixPubKey", "MaxMessageSize"};
#define N_INFO_IDS (sizeof k_info_ids / sizeof k_info_ids[0])

static void h_info_ids(ld_lib_ctx_t *ctx, ld_lib_request_t *req, void *args) {
  (void)args;
  if (need_node(ctx, req, "GetNodeInfoIds") == NULL)
    return;
  char out[256] = "[";
  for (size_t i = 0; i < N_INFO_IDS; i++) {
    size_t n = strlen(out);
    snprintf(out + n, sizeof out - n, "%s\"%s\"", i > 0 ? "," : "", k_info_ids[i]);
  }
  size_t n = strlen(out);
  snprintf(out + n, sizeof out - n, "]");
  ld_lib_reply_text(req, out);
}

int logosdelivery_get_available_node_info_ids(void *ctx, FFICallBack callback, void *userData) {
  return ld_lib_dispatch(ctx, callback, userData, h_info_ids, NULL, NULL);
}

static void reply_addrs(ld_lib_request_t *req, ld_node_t *node) {
  ld_multiaddr_t addrs[LD_NODE_MAX_LISTEN_ADDRS];
  size_t n = ld_node_listen_addrs(node, addrs, LD_NODE_MAX_LISTEN_ADDRS);
  n = n < LD_NODE_MAX_LISTEN_ADDRS ? n : LD_NODE_MAX_LISTEN_ADDRS;
  ld_buf_t out;
  ld_buf_init(&out);
  char text[LD_MULTIADDR_TEXT_MAX];
  int rc = 0;
  for (size_t i = 0; i < n && rc == 0; i++) {
    if (ld_multiaddr_to_text(&addrs[i], text, sizeof text) < 0)
      continue;
    if (out.len > 0)
      rc = ld_buf_u8(&out, ',');
    if (rc == 0)
      rc = ld_buf_append(&out, text, strlen(text));
  }
  if (rc != 0)
    ld_lib_reply_err(req, "GetNodeInfoItem failed: %s", ld_strerror(rc));
  else
    ld_lib_reply_ok(req, (const char *)out.data, out.len);
  ld_buf_clear(&out);
}

/* The TCP port of a bound address, and whether it is a WebSocket one. */
static uint16_t bound_port(const ld_multiaddr_t *ma, bool *ws) {
  ld_multiaddr_component_t c;
  size_t off = 0;
  uint16_t port = 0;
  *ws = false;
  while (ld_multiaddr_next(ma, &off, &c) == 1) {
    if (c.code == LD_MA_TCP && c.value_len == 2)
      port = (uint16_t)(c.value[0] << 8 | c.value[1]);
    if (c.code == LD_MA_WS || c.code == LD_MA_WSS)
      *ws = true;
  }
  return port;
}

static void reply_ports(ld_lib_request_t *req, ld_node_t *node) {
  ld_multiaddr_t addrs[LD_NODE_MAX_LISTEN_ADDRS];
  uint16_t tcp = 0, ws_port = 0;
  ld_switch_t *sw = ld_node_switch(node);
  size_t n = sw != NULL ? ld_switch_listen_addrs(sw, addrs, LD_NODE_MAX_LISTEN_ADDRS) : 0;
  for (size_t i = 0; i < n && i < LD_NODE_MAX_LISTEN_ADDRS; i++) {
    bool ws;
    uint16_t p = bound_port(&addrs[i], &ws);
    if (ws && ws_port == 0)
      ws_port = p;
    else if (!ws && tcp == 0)
      tcp = p;
  }
  char out[160];
  snprintf(out, sizeof out,
           "{\"tcp\":%u,\"webSocket\":%u,\"quic\":0,\"rest\":%u,\"discv5Udp\":%u,\"metrics\":%u}",
           tcp, ws_port, ld_node_rest_port(node), ld_node_discv5_port(node),
           ld_node_metrics_port(node));
  ld_lib_reply_text(req, out);
}

static void reply_metrics(ld_lib_ctx_t *ctx, ld_lib_request_t *req) {
  ld_buf_t out;
  ld_buf_init(&out);
  int rc = ld_lib_ctx_metrics_text(ctx, &out);
  if (rc != 0)
    ld_lib_reply_err(req, "GetNodeInfoItem failed: %s", ld_strerror(rc));
  else
    ld_lib_reply_ok(req, (const char *)out.data, out.len);
  ld_buf_clear(&out);
}

static void reply_text_item(ld_lib_ctx_t *ctx, ld_lib_request_t *req, ld_node_t *node, size_t id) {
  char out[LD_ENR_TEXT_MAX + LD_PEERID_TEXT_MAX];
  out[0] = '\0';
  if (id == 0) {
    snprintf(out, sizeof out, "%s", ld_lib_version());
  } else if (id == 3) {
    if (ld_lib_ctx_enr_text(ctx, out, sizeof out) != 0)
      out[0] = '\0';
  } else if (id == 4) {
    if (ld_peerid_to_text(ld_node_peer_id(node), out, sizeof out) < 0)
      out[0] = '\0';
  } else if (id == 7) {
    snprintf(out, sizeof out, "%zu", ld_lib_ctx_config(ctx)->node.max_msg_size);
  }
  ld_lib_reply_text(req, out);
}

static void h_node_info(ld_lib_ctx_t *ctx, ld_lib_request_t *req, void *args) {
  arg_text_t *a = args;
  ld_node_t *node = need_node(ctx, req, "GetNodeInfoItem");
  if (node == NULL)
    return;
  size_t id = N_INFO_IDS;
  for (size_t i = 0; i < N_INFO_IDS && !a->too_long; i++)
    if (strcmp(a->s, k_info_ids[i]) == 0)
      id = i;
  if (id == N_INFO_IDS)
    ld_lib_reply_err(req, "Invalid node info id: %s", a->s);
  else if (id == 1)
    reply_metrics(ctx, req);
  else if (id == 2)
    reply_addrs(req, node);
  else if (id == 5)
    reply_ports(req, node);
  else
    reply_text_item(ctx, req, node, id);
}

int logosdelivery_get_node_info(void *ctx, FFICallBack callback, void *userData,
                                const char *nodeInfoId) {
  return dispatch_text(ctx, callback, userData, h_node_info, nodeInfoId, ARG_TEXT_MAX);
}

static void h_configs(ld_lib_ctx_t *ctx, ld_lib_request_t *req, void *args) {
  (void)args;
  if (need_node(ctx, req, "GetAvailableConfigs") == NULL)
    return;
  char *json = ld_lib_config_available_json();
  if (json == NULL) {
    ld_lib_reply_err(req, "GetAvailableConfigs failed: %s", ld_strerror(LD_ERR_NOMEM));
    return;
  }
  ld_lib_reply_text(req, json);
  free(json);
}

int logosdelivery_get_available_configs(void *ctx, FFICallBack callback, void *userData) {
  return ld_lib_dispatch(ctx, callback, userData, h_configs, NULL, NULL);
}
