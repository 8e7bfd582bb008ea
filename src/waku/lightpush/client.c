#include "waku/lightpush/client.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/clock.h"
#include "base/error.h"
#include "base/hex.h"
#include "base/log.h"
#include "crypto/crypto.h"
#include "p2p/reqresp.h"

#define LOG_TOPIC "waku lightpush client"

/* Bytes of a frame's length prefix at most. */
#define PREFIX_MAX 10
/* Room for a description we make up (NUL included). */
#define DESC_MAX 256

struct ld_lightpush_call {
  ld_reqresp_call_t *rr;
  bool legacy;
  ld_lightpush_done_fn done;
  ld_lightpush_legacy_done_fn legacy_done;
  void *user_data;
  char request_id[LD_LIGHTPUSH_MAX_REQUEST_ID_LEN + 1];
  size_t request_id_len;
  int64_t timestamp;
  bool has_hash;
  uint8_t hash[LD_WAKU_HASH_LEN];
};

static const char *describe(char *out, size_t cap, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(out, cap, fmt, ap);
  va_end(ap);
  return out;
}

/* The stream could not be opened (as opposed to: no answer came on it). */
static bool is_open_failure(int err) {
  switch (err) {
  case LD_ERR_PROTOCOL_UNSUPPORTED:
  case LD_ERR_NEGOTIATION_FAILED:
  case LD_ERR_CLOSED:
  case LD_ERR_NOT_CONNECTED:
  case LD_ERR_GOAWAY:
  case LD_ERR_TOO_MANY_STREAMS:
    return true;
  default:
    return false;
  }
}

static bool is_unsupported(int err) {
  return err == LD_ERR_PROTOCOL_UNSUPPORTED || err == LD_ERR_NEGOTIATION_FAILED;
}

/* ---- v3 result ------------------------------------------------------------------------------ */

static void transport_failure(ld_lightpush_result_t *r, int err, char *desc, size_t cap) {
  r->err = err;
  if (is_unsupported(err)) {
    r->status_code = LD_LIGHTPUSH_SERVICE_NOT_AVAILABLE;
    describe(desc, cap, "lightpush is not supported by the peer");
  } else if (is_open_failure(err)) {
    r->status_code = LD_LIGHTPUSH_NO_PEERS_TO_RELAY;
    describe(desc, cap, "Peer is not accessible: dial_failure");
  } else {
    r->status_code = LD_LIGHTPUSH_INTERNAL_SERVER_ERROR;
    describe(desc, cap, "Failed to read response from peer: %s", ld_strerror(err));
  }
  r->status_desc = desc;
}

static bool same_id(const ld_lightpush_call_t *c, const ld_lightpush_response_t *resp) {
  return resp->request_id_len == c->request_id_len &&
         memcmp(resp->request_id, c->request_id, c->request_id_len) == 0;
}

/* nwaku's client rules on a decoded response. */
static void apply_rules(const ld_lightpush_call_t *c, const ld_lightpush_response_t *resp,
                        ld_lightpush_result_t *r, char *desc, size_t cap) {
  r->status_code = resp->status_code;
  r->status_desc = resp->status_desc;
  r->relay_peer_count = resp->has_relay_peer_count ? resp->relay_peer_count : 0;
  if (!same_id(c, resp) && resp->status_code != LD_LIGHTPUSH_TOO_MANY_REQUESTS) {
    r->status_code = LD_LIGHTPUSH_INTERNAL_SERVER_ERROR;
    describe(desc, cap, "response failure, requestId mismatch");
    r->status_desc = desc;
    r->relay_peer_count = 0;
  } else if (resp->status_code == LD_LIGHTPUSH_SUCCESS && r->relay_peer_count == 0) {
    r->status_code = LD_LIGHTPUSH_NO_PEERS_TO_RELAY;
  }
}

static int decode_frame(const uint8_t *data, size_t len, const uint8_t **body, size_t *n) {
  int rc = ld_reqresp_read_frame(data, len, LD_LIGHTPUSH_MAX_RESPONSE, body, n);
  return rc < 0 ? rc : 0;
}

static void finish_v3(ld_lightpush_call_t *c, const uint8_t *data, size_t len, int err) {
  ld_lightpush_result_t r;
  memset(&r, 0, sizeof r);
  r.request_id = c->request_id;
  r.timestamp = c->timestamp;
  r.has_hash = c->has_hash;
  memcpy(r.hash, c->hash, sizeof r.hash);
  ld_lightpush_response_t resp;
  ld_lightpush_response_init(&resp);
  char desc[DESC_MAX];
  const uint8_t *body = NULL;
  size_t n = 0;
  bool answered = err == 0;
  if (err == 0)
    err = decode_frame(data, len, &body, &n);
  if (err == 0)
    err = ld_lightpush_response_decode(body, n, &resp, NULL, 0);
  if (err == 0) {
    apply_rules(c, &resp, &r, desc, sizeof desc);
  } else if (answered) {
    r.err = err;
    r.status_code = LD_LIGHTPUSH_INTERNAL_SERVER_ERROR;
    r.status_desc = "decode_rpc_failure";
  } else {
    transport_failure(&r, err, desc, sizeof desc);
  }
  LD_DEBUG(LOG_TOPIC, "push %s: %u %s", c->request_id, r.status_code,
           r.status_desc != NULL ? r.status_desc : "");
  c->done(&r, c->user_data);
  ld_lightpush_response_clear(&resp);
}

/* ---- legacy result -------------------------------------------------------------------------- */

static void legacy_outcome(const ld_lightpush_rpc_t *rpc, ld_lightpush_legacy_result_t *r) {
  if (!rpc->has_response) {
    r->info = "empty_response_body_failure";
    return;
  }
  r->success = rpc->is_success;
  if (rpc->info != NULL)
    r->info = rpc->info;
  else
    r->info = rpc->is_success ? "" : "unknown failure";
}

static void finish_legacy(ld_lightpush_call_t *c, const uint8_t *data, size_t len, int err) {
  ld_lightpush_legacy_result_t r;
  memset(&r, 0, sizeof r);
  r.request_id = c->request_id;
  r.timestamp = c->timestamp;
  memcpy(r.hash, c->hash, sizeof r.hash);
  ld_lightpush_rpc_t rpc;
  ld_lightpush_rpc_init(&rpc);
  char desc[DESC_MAX];
  const uint8_t *body = NULL;
  size_t n = 0;
  bool answered = err == 0;
  if (err == 0)
    err = decode_frame(data, len, &body, &n);
  if (err == 0)
    err = ld_lightpush_rpc_decode(body, n, &rpc, NULL, 0);
  r.err = err;
  if (err == 0)
    legacy_outcome(&rpc, &r);
  else if (answered)
    r.info = "decode_rpc_failure";
  else if (is_open_failure(err))
    r.info = "dial_failure";
  else
    r.info = describe(desc, sizeof desc, "Exception reading: %s", ld_strerror(err));
  LD_DEBUG(LOG_TOPIC, "legacy push %s: %s %s", c->request_id, r.success ? "ok" : "failed", r.info);
  c->legacy_done(&r, c->user_data);
  ld_lightpush_rpc_clear(&rpc);
}

static void on_done(const uint8_t *resp, size_t len, int err, void *user_data) {
  ld_lightpush_call_t *c = user_data;
  if (c->legacy)
    finish_legacy(c, resp, len, err);
  else
    finish_v3(c, resp, len, err);
  free(c);
}

/* ---- sending -------------------------------------------------------------------------------- */

static int set_request_id(ld_lightpush_call_t *c, const ld_lightpush_push_opts_t *opts) {
  if (opts != NULL && opts->request_id != NULL) {
    size_t n = strlen(opts->request_id);
    if (n > LD_LIGHTPUSH_MAX_REQUEST_ID_LEN)
      return LD_ERR_FIELD_TOO_LONG;
    memcpy(c->request_id, opts->request_id, n + 1);
    c->request_id_len = n;
    return 0;
  }
  uint8_t raw[LD_LIGHTPUSH_REQUEST_ID_BYTES];
  ld_random_bytes(raw, sizeof raw);
  c->request_id_len = ld_hex_encode(raw, sizeof raw, c->request_id);
  return 0;
}

/* The message as sent: a zero timestamp stamped with the wall clock, the hash on `topic`. */
static int prepare_message(ld_lightpush_call_t *c, const char *topic,
                           const ld_lightpush_push_opts_t *opts, ld_waku_message_t *m) {
  if (m->timestamp == 0 && (opts == NULL || !opts->keep_zero_timestamp))
    m->timestamp = (int64_t)ld_wall_ns();
  c->timestamp = m->timestamp;
  c->has_hash = topic != NULL;
  return topic != NULL ? ld_waku_message_hash(topic, m, c->hash) : 0;
}

static size_t client_cap(const ld_lightpush_push_opts_t *opts) {
  return opts != NULL && opts->max_msg_size != 0 ? opts->max_msg_size : LD_LIGHTPUSH_CLIENT_MAX_MSG;
}

static int encode_request(const ld_lightpush_call_t *c, const char *topic,
                          const ld_waku_message_t *m, size_t cap, ld_buf_t *out) {
  if (c->legacy) {
    ld_lightpush_rpc_t rpc;
    ld_lightpush_rpc_init(&rpc);
    rpc.request_id = c->request_id;
    rpc.request_id_len = c->request_id_len;
    rpc.has_request = true;
    rpc.pubsub_topic = topic;
    rpc.pubsub_topic_len = strlen(topic);
    rpc.message = *m;
    return ld_lightpush_rpc_encode(&rpc, cap, out);
  }
  ld_lightpush_request_t req;
  ld_lightpush_request_init(&req);
  req.request_id = c->request_id;
  req.request_id_len = c->request_id_len;
  req.pubsub_topic = topic;
  req.pubsub_topic_len = topic != NULL ? strlen(topic) : 0;
  req.message = *m;
  return ld_lightpush_request_encode(&req, cap, out);
}

static int send_request(ld_switch_t *sw, ld_conn_t *conn, ld_lightpush_call_t *c, const char *topic,
                        const ld_waku_message_t *msg, const ld_lightpush_push_opts_t *opts) {
  ld_waku_message_t m = *msg;
  ld_buf_t req;
  ld_buf_init(&req);
  int rc = set_request_id(c, opts);
  if (rc == 0)
    rc = prepare_message(c, topic, opts, &m);
  if (rc == 0)
    rc = encode_request(c, topic, &m, client_cap(opts), &req);
  ld_reqresp_opts_t ro = {.max_bytes = LD_LIGHTPUSH_MAX_RESPONSE + PREFIX_MAX,
                          .frame_max = LD_LIGHTPUSH_MAX_RESPONSE,
                          .timeout_ms = opts != NULL ? opts->timeout_ms : 0};
  if (ro.timeout_ms == 0)
    ro.timeout_ms = LD_LIGHTPUSH_CLIENT_TIMEOUT_MS;
  if (rc == 0)
    rc = ld_reqresp_request(sw, conn,
                            c->legacy ? LD_LIGHTPUSH_LEGACY_PROTOCOL : LD_LIGHTPUSH_PROTOCOL,
                            req.data, req.len, &ro, on_done, c, &c->rr);
  ld_buf_clear(&req);
  return rc;
}

static int push(ld_switch_t *sw, ld_conn_t *conn, const char *topic, const ld_waku_message_t *msg,
                const ld_lightpush_push_opts_t *opts, ld_lightpush_call_t *c,
                ld_lightpush_call_t **out) {
  if (topic != NULL && strlen(topic) > LD_LIGHTPUSH_MAX_TOPIC_LEN) {
    free(c);
    return LD_ERR_FIELD_TOO_LONG;
  }
  int rc = send_request(sw, conn, c, topic, msg, opts);
  if (rc != 0) {
    free(c);
    return rc;
  }
  if (out != NULL)
    *out = c;
  return 0;
}

/* ---- public --------------------------------------------------------------------------------- */

int ld_lightpush_client_push_ex(ld_switch_t *sw, ld_conn_t *conn, const char *pubsub_topic,
                                const ld_waku_message_t *msg, const ld_lightpush_push_opts_t *opts,
                                ld_lightpush_done_fn done, void *user_data,
                                ld_lightpush_call_t **out) {
  if (sw == NULL || conn == NULL || msg == NULL || done == NULL)
    return LD_ERR_INVALID_ARG;
  ld_lightpush_call_t *c = calloc(1, sizeof *c);
  if (c == NULL)
    return LD_ERR_NOMEM;
  c->done = done;
  c->user_data = user_data;
  return push(sw, conn, pubsub_topic, msg, opts, c, out);
}

int ld_lightpush_client_push(ld_switch_t *sw, ld_conn_t *conn, const char *pubsub_topic,
                             const ld_waku_message_t *msg, ld_lightpush_done_fn done,
                             void *user_data) {
  return ld_lightpush_client_push_ex(sw, conn, pubsub_topic, msg, NULL, done, user_data, NULL);
}

int ld_lightpush_legacy_client_push_ex(ld_switch_t *sw, ld_conn_t *conn, const char *pubsub_topic,
                                       const ld_waku_message_t *msg,
                                       const ld_lightpush_push_opts_t *opts,
                                       ld_lightpush_legacy_done_fn done, void *user_data,
                                       ld_lightpush_call_t **out) {
  if (sw == NULL || conn == NULL || pubsub_topic == NULL || msg == NULL || done == NULL)
    return LD_ERR_INVALID_ARG;
  ld_lightpush_call_t *c = calloc(1, sizeof *c);
  if (c == NULL)
    return LD_ERR_NOMEM;
  c->legacy = true;
  c->legacy_done = done;
  c->user_data = user_data;
  return push(sw, conn, pubsub_topic, msg, opts, c, out);
}

int ld_lightpush_legacy_client_push(ld_switch_t *sw, ld_conn_t *conn, const char *pubsub_topic,
                                    const ld_waku_message_t *msg, ld_lightpush_legacy_done_fn done,
                                    void *user_data) {
  return ld_lightpush_legacy_client_push_ex(sw, conn, pubsub_topic, msg, NULL, done, user_data,
                                            NULL);
}

void ld_lightpush_client_cancel(ld_lightpush_call_t *call) {
  if (call == NULL)
    return;
  ld_reqresp_cancel(call->rr);
  free(call);
}
