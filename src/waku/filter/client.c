#include "waku/filter/client.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "base/hex.h"
#include "base/log.h"
#include "base/varint.h"
#include "crypto/crypto.h"
#include "p2p/reqresp.h"

#define TOPIC "filter"
#define REQUEST_ID_BYTES (LD_FILTER_REQUEST_ID_LEN / 2)
/* nwaku's client-side causes. */
#define CAUSE_DECODE "decode_rpc_failure"
#define CAUSE_MISMATCH "request_id_mismatch"

/* One request in flight. */
typedef struct call {
  ld_filter_client_t *cl;
  struct call *prev, *next;
  ld_reqresp_call_t *rr;
  ld_peerid_t service;
  uint32_t type;
  char request_id[LD_FILTER_REQUEST_ID_LEN + 1];
  ld_filter_done_fn done;
  void *user_data;
} call_t;

/* One inbound push stream. */
typedef struct push_stream {
  ld_filter_client_t *cl;
  ld_peerid_t from;
  ld_buf_t rx;
} push_stream_t;

struct ld_filter_client {
  ld_switch_t *sw;
  ld_filter_client_config_t cfg;
  ld_filter_push_fn on_push;
  void *push_ud;
  call_t *calls; /* in flight */
  ld_filter_client_stats_t stats;
};

/* ---- setup ---------------------------------------------------------------------------------- */

void ld_filter_client_config_default(ld_filter_client_config_t *cfg) {
  cfg->max_push_streams = LD_FILTER_CLIENT_MAX_PUSH_STREAMS;
  cfg->max_push_size = LD_FILTER_MAX_PUSH_SIZE;
  cfg->subscribe_timeout_ms = LD_FILTER_CLIENT_SUBSCRIBE_TIMEOUT_MS;
  cfg->ping_timeout_ms = LD_FILTER_CLIENT_PING_TIMEOUT_MS;
}

static void accept_push(ld_stream_t *s, void *user_data);

ld_filter_client_t *ld_filter_client_new(ld_switch_t *sw, const ld_filter_client_config_t *cfg) {
  int rc = sw != NULL ? 0 : LD_ERR_INVALID_ARG;
  ld_filter_client_t *cl = rc == 0 ? calloc(1, sizeof *cl) : NULL;
  if (rc == 0 && cl == NULL)
    rc = LD_ERR_NOMEM;
  if (rc == 0) {
    cl->sw = sw;
    ld_filter_client_config_default(&cl->cfg);
    if (cfg != NULL && cfg->max_push_streams > 0)
      cl->cfg.max_push_streams = cfg->max_push_streams;
    if (cfg != NULL && cfg->max_push_size > 0)
      cl->cfg.max_push_size = cfg->max_push_size;
    if (cfg != NULL && cfg->subscribe_timeout_ms > 0)
      cl->cfg.subscribe_timeout_ms = cfg->subscribe_timeout_ms;
    if (cfg != NULL && cfg->ping_timeout_ms > 0)
      cl->cfg.ping_timeout_ms = cfg->ping_timeout_ms;
    rc = ld_switch_handle(sw, LD_FILTER_PUSH_PROTOCOL, accept_push, cl);
  }
  if (rc != 0) {
    LD_ERROR(TOPIC, "filter client not started: %s", ld_errname(rc));
    free(cl);
    return NULL;
  }
  return cl;
}

void ld_filter_client_free(ld_filter_client_t *cl) {
  if (cl == NULL)
    return;
  while (cl->calls != NULL) {
    call_t *c = cl->calls;
    cl->calls = c->next;
    ld_reqresp_cancel(c->rr);
    free(c);
  }
  free(cl);
}

void ld_filter_client_set_push_handler(ld_filter_client_t *cl, ld_filter_push_fn fn,
                                       void *user_data) {
  cl->on_push = fn;
  cl->push_ud = user_data;
}

void ld_filter_client_get_stats(const ld_filter_client_t *cl, ld_filter_client_stats_t *out) {
  *out = cl->stats;
}

/* ---- results -------------------------------------------------------------------------------- */

static void unlink_call(call_t *c) {
  if (c->prev != NULL)
    c->prev->next = c->next;
  else
    c->cl->calls = c->next;
  if (c->next != NULL)
    c->next->prev = c->prev;
}

static void finish(call_t *c, int err, uint32_t code, const char *desc) {
  ld_filter_result_t res = {err, code, desc, c->request_id, &c->service, c->type};
  if (err != 0)
    c->cl->stats.failed++;
  else
    c->cl->stats.answered++;
  c->done(&res, c->user_data);
  free(c);
}

/* A local failure: 504 when no stream or no answer in time, 300 for a broken answer. */
static void finish_local(call_t *c, int err, const char *cause) {
  ld_filter_status_t st;
  bool dial = err == LD_ERR_TIMEOUT || err == LD_ERR_PROTOCOL_UNSUPPORTED ||
              err == LD_ERR_NEGOTIATION_FAILED || err == LD_ERR_CLOSED ||
              err == LD_ERR_TOO_MANY_STREAMS || err == LD_ERR_GOAWAY;
  if (dial) {
    char peer[LD_PEERID_TEXT_MAX];
    if (ld_peerid_to_text(&c->service, peer, sizeof peer) < 0)
      peer[0] = '\0';
    ld_filter_status_set(&st, LD_FILTER_STATUS_PEER_DIAL_FAILURE, "%s", peer);
  } else {
    ld_filter_status_set(&st, LD_FILTER_STATUS_BAD_RESPONSE, "%s",
                         cause != NULL ? cause : ld_errname(err));
  }
  LD_DEBUG(TOPIC, "%s request failed: %s (%s)", ld_filter_request_type_name(c->type), st.desc,
           ld_errname(err));
  finish(c, err, st.code, st.desc);
}

static bool id_matches(const call_t *c, const ld_filter_response_t *r) {
  return r->request_id.len == strlen(c->request_id) &&
         memcmp(r->request_id.data, c->request_id, r->request_id.len) == 0;
}

static void finish_answer(call_t *c, const ld_filter_response_t *r) {
  if (r->status_code != LD_FILTER_STATUS_TOO_MANY_REQUESTS && !id_matches(c, r)) {
    finish_local(c, LD_ERR_PROTOCOL, CAUSE_MISMATCH);
    return;
  }
  char *desc = malloc(r->status_desc.len + 1);
  if (desc == NULL) {
    finish_local(c, LD_ERR_NOMEM, NULL);
    return;
  }
  memcpy(desc, r->status_desc.data, r->status_desc.len);
  desc[r->status_desc.len] = '\0';
  finish(c, 0, r->status_code, desc);
  free(desc);
}

static void on_done(const uint8_t *resp, size_t len, int err, void *user_data) {
  call_t *c = user_data;
  unlink_call(c);
  if (err != 0) {
    finish_local(c, err, NULL);
    return;
  }
  const uint8_t *body = NULL;
  size_t blen = 0;
  ld_filter_response_t r;
  int rc = ld_reqresp_read_frame(resp, len, LD_FILTER_MAX_RESPONSE_SIZE, &body, &blen);
  if (rc >= 0)
    rc = ld_filter_response_decode(body, blen, &r);
  if (rc < 0)
    finish_local(c, rc, CAUSE_DECODE);
  else
    finish_answer(c, &r);
}

/* ---- requests ------------------------------------------------------------------------------- */

static void new_request_id(char out[LD_FILTER_REQUEST_ID_LEN + 1]) {
  uint8_t raw[REQUEST_ID_BYTES];
  ld_random_bytes(raw, sizeof raw);
  ld_hex_encode(raw, sizeof raw, out);
}

static int encode_request(const call_t *c, const char *pubsub_topic, const char *const *topics,
                          size_t n, ld_buf_t *out) {
  ld_filter_str_t *views = n > 0 ? malloc(n * sizeof *views) : NULL;
  if (n > 0 && views == NULL)
    return LD_ERR_NOMEM;
  int rc = 0;
  for (size_t i = 0; i < n && rc == 0; i++) {
    if (topics[i] == NULL)
      rc = LD_ERR_INVALID_ARG;
    else
      views[i] = (ld_filter_str_t){topics[i], strlen(topics[i])};
  }
  ld_filter_str_t id = {c->request_id, strlen(c->request_id)};
  ld_filter_str_t ps = {pubsub_topic, pubsub_topic != NULL ? strlen(pubsub_topic) : 0};
  if (rc == 0)
    rc = ld_filter_request_encode_topics(&id, c->type, pubsub_topic != NULL ? &ps : NULL, views, n,
                                         out);
  free(views);
  return rc;
}

static int start(ld_filter_client_t *cl, ld_conn_t *service, uint32_t type,
                 const char *pubsub_topic, const char *const *topics, size_t n,
                 ld_filter_done_fn done, void *user_data) {
  if (cl == NULL || service == NULL || done == NULL || (topics == NULL && n > 0))
    return LD_ERR_INVALID_ARG;
  call_t *c = calloc(1, sizeof *c);
  if (c == NULL)
    return LD_ERR_NOMEM;
  *c = (call_t){.cl = cl, .type = type, .done = done, .user_data = user_data};
  c->service = *ld_conn_remote_peer(service);
  new_request_id(c->request_id);
  ld_buf_t req;
  ld_buf_init(&req);
  int rc = encode_request(c, pubsub_topic, topics, n, &req);
  ld_reqresp_opts_t o = {.max_bytes = LD_FILTER_MAX_RESPONSE_SIZE + LD_UVARINT_MAX_LEN,
                         .frame_max = LD_FILTER_MAX_RESPONSE_SIZE,
                         .timeout_ms = type == LD_FILTER_SUBSCRIBER_PING
                                           ? cl->cfg.ping_timeout_ms
                                           : cl->cfg.subscribe_timeout_ms};
  if (rc == 0)
    rc = ld_reqresp_request(cl->sw, service, LD_FILTER_SUBSCRIBE_PROTOCOL, req.data, req.len, &o,
                            on_done, c, &c->rr);
  ld_buf_clear(&req);
  if (rc != 0) {
    free(c);
    return rc;
  }
  c->next = cl->calls;
  if (cl->calls != NULL)
    cl->calls->prev = c;
  cl->calls = c;
  cl->stats.requests++;
  return 0;
}

int ld_filter_client_subscribe(ld_filter_client_t *cl, ld_conn_t *service, const char *pubsub_topic,
                               const char *const *content_topics, size_t n, ld_filter_done_fn done,
                               void *user_data) {
  if (pubsub_topic == NULL)
    return LD_ERR_INVALID_ARG;
  return start(cl, service, LD_FILTER_SUBSCRIBE, pubsub_topic, content_topics, n, done, user_data);
}

int ld_filter_client_unsubscribe(ld_filter_client_t *cl, ld_conn_t *service,
                                 const char *pubsub_topic, const char *const *content_topics,
                                 size_t n, ld_filter_done_fn done, void *user_data) {
  if (pubsub_topic == NULL)
    return LD_ERR_INVALID_ARG;
  return start(cl, service, LD_FILTER_UNSUBSCRIBE, pubsub_topic, content_topics, n, done,
               user_data);
}

int ld_filter_client_unsubscribe_all(ld_filter_client_t *cl, ld_conn_t *service,
                                     ld_filter_done_fn done, void *user_data) {
  return start(cl, service, LD_FILTER_UNSUBSCRIBE_ALL, NULL, NULL, 0, done, user_data);
}

int ld_filter_client_ping(ld_filter_client_t *cl, ld_conn_t *service, ld_filter_done_fn done,
                          void *user_data) {
  return start(cl, service, LD_FILTER_SUBSCRIBER_PING, NULL, NULL, 0, done, user_data);
}

/* ---- pushes --------------------------------------------------------------------------------- */

/* Decodes one MessagePush body and hands it to the handler. */
static int deliver(push_stream_t *ps, const uint8_t *body, size_t len) {
  ld_filter_client_t *cl = ps->cl;
  ld_filter_push_frame_t f;
  int rc = ld_filter_push_decode(body, len, &f);
  if (rc != 0)
    return rc;
  if (memchr(f.pubsub_topic.data, '\0', f.pubsub_topic.len) != NULL)
    return LD_ERR_BAD_PUBSUB_TOPIC;
  char *topic = malloc(f.pubsub_topic.len + 1);
  if (topic == NULL)
    return LD_ERR_NOMEM;
  memcpy(topic, f.pubsub_topic.data, f.pubsub_topic.len);
  topic[f.pubsub_topic.len] = '\0';
  ld_waku_message_t msg;
  ld_waku_message_init(&msg);
  ld_filter_push_t push = {&ps->from, topic, f.pubsub_topic.len, &msg, {0}};
  rc = ld_waku_message_decode(f.message, f.message_len, cl->cfg.max_push_size, 0, &msg);
  if (rc == 0)
    rc = ld_waku_message_hash_ex(topic, f.pubsub_topic.len, &msg, 0, push.hash);
  if (rc == 0) {
    cl->stats.pushes++;
    if (cl->on_push != NULL)
      cl->on_push(&push, cl->push_ud);
  }
  ld_waku_message_clear(&msg);
  free(topic);
  return rc;
}

static void push_data(ld_stream_t *s, const uint8_t *data, size_t len) {
  push_stream_t *ps = ld_stream_user_data(s);
  int rc = ld_buf_append(&ps->rx, data, len);
  size_t used = 0;
  while (rc == 0 && used < ps->rx.len) {
    const uint8_t *body;
    size_t blen;
    int n = ld_reqresp_read_frame(ps->rx.data + used, ps->rx.len - used, ps->cl->cfg.max_push_size,
                                  &body, &blen);
    if (n == LD_ERR_TRUNCATED)
      break;
    rc = n < 0 ? n : deliver(ps, body, blen);
    if (n > 0)
      used += (size_t)n;
  }
  ld_buf_consume(&ps->rx, used);
  if (rc != 0) {
    ps->cl->stats.push_errors++;
    LD_DEBUG(TOPIC, "bad push frame: %s", ld_errname(rc));
    ld_buf_clear(&ps->rx);
    ld_stream_reset(s);
  }
}

static void push_eof(ld_stream_t *s) {
  ld_stream_close_write(s);
}

static void push_close(ld_stream_t *s, int err) {
  (void)err;
  push_stream_t *ps = ld_stream_user_data(s);
  ps->cl->stats.push_streams_open--;
  ld_buf_clear(&ps->rx);
  free(ps);
}

static const ld_stream_handler_t k_push_handler = {
    .on_data = push_data, .on_eof = push_eof, .on_close = push_close};

static void accept_push(ld_stream_t *s, void *user_data) {
  ld_filter_client_t *cl = user_data;
  push_stream_t *ps =
      cl->stats.push_streams_open < cl->cfg.max_push_streams ? calloc(1, sizeof *ps) : NULL;
  if (ps == NULL) {
    cl->stats.push_refused++;
    ld_stream_reset(s);
    return;
  }
  ps->cl = cl;
  ps->from = *ld_conn_remote_peer(ld_stream_conn(s));
  ld_buf_init(&ps->rx);
  cl->stats.push_streams++;
  cl->stats.push_streams_open++;
  ld_stream_set_handler(s, &k_push_handler, ps);
}
