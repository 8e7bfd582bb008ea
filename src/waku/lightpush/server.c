#include "waku/lightpush/server.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/clock.h"
#include "base/error.h"
#include "base/hashmap.h"
#include "base/log.h"
#include "p2p/reqresp.h"
#include "waku/core/sharding.h"
#include "waku/core/topics.h"
#include "waku/relay/relay.h"

#define LOG_TOPIC "waku lightpush"

#define DESC_MAX LD_LIGHTPUSH_DESC_MAX
/* Bytes of a frame's length prefix at most. */
#define PREFIX_MAX 10

struct ld_lightpush_server {
  ld_switch_t *sw;
  ld_lightpush_server_config_t cfg;
  size_t frame_max;
  ld_hashmap_t *conns;   /* connection address → streams being served (uintptr_t) */
  ld_hashmap_t *buckets; /* peer ID bytes → bucket_t */
  ld_lightpush_server_stats_t stats;
};

/* One served stream. */
typedef struct served {
  ld_lightpush_server_t *srv;
  ld_conn_t *conn; /* only a key: never dereferenced after the stream is over */
  bool legacy;
  ld_reqresp_call_t *call;     /* for an answer given later */
  ld_lightpush_reply_t *reply; /* the push waiting for its publish result, or NULL */
} served_t;

/* Where a push came from: a stream, or the node itself (a local push). */
typedef struct origin {
  served_t *sv;  /* the stream, or NULL for a local push */
  bool can_wait; /* the publish result may come later */
  ld_lightpush_local_done_fn local_done;
  void *local_ud;
} origin_t;

/* A push waiting for its publish result (publish_later). */
struct ld_lightpush_reply {
  ld_lightpush_server_t *srv;
  served_t *sv; /* the stream to answer; NULL once it is over, and for a local push */
  ld_lightpush_local_done_fn local_done;
  void *local_ud;
  bool legacy;
  char *request_id;
  size_t request_id_len;
  char *topic;      /* the pubsub topic, for the log */
  bool in_callback; /* publish_later is running */
  bool given;       /* the result was given from inside publish_later */
  int result;
  char why[LD_LIGHTPUSH_WHY_MAX];
};

typedef struct bucket {
  double tokens;
  uint64_t last_ms;
} bucket_t;

static void set_text(char *out, size_t cap, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(out, cap, fmt, ap);
  va_end(ap);
}

/* ---- rate limit ----------------------------------------------------------------------------- */

static uint64_t now_ms(const ld_lightpush_server_t *srv) {
  return srv->cfg.now_ms != NULL ? srv->cfg.now_ms(srv->cfg.clock_ctx) : ld_now_ms();
}

static void refill(const ld_lightpush_server_t *srv, bucket_t *b, uint64_t now) {
  double volume = srv->cfg.rate_volume;
  if (now > b->last_ms)
    b->tokens += (double)(now - b->last_ms) * volume / srv->cfg.rate_period_ms;
  if (b->tokens > volume)
    b->tokens = volume;
  b->last_ms = now;
}

/* Forgets full buckets (a new one is the same); if none is, the first one found. */
static void prune_buckets(ld_lightpush_server_t *srv, uint64_t now) {
  ld_hashmap_iter_t it = {0};
  const void *key, *any = NULL;
  size_t klen, any_len = 0;
  void *value;
  while (ld_hashmap_next(srv->buckets, &it, &key, &klen, &value)) {
    refill(srv, value, now);
    if (((bucket_t *)value)->tokens >= srv->cfg.rate_volume) {
      free(ld_hashmap_remove(srv->buckets, key, klen));
    } else if (any == NULL) {
      any = key;
      any_len = klen;
    }
  }
  if (ld_hashmap_size(srv->buckets) >= LD_LIGHTPUSH_RATE_MAX_PEERS && any != NULL)
    free(ld_hashmap_remove(srv->buckets, any, any_len));
}

static bucket_t *bucket_of(ld_lightpush_server_t *srv, const ld_peerid_t *peer, uint64_t now) {
  bucket_t *b = ld_hashmap_get(srv->buckets, peer->bytes, peer->len);
  if (b != NULL)
    return b;
  if (ld_hashmap_size(srv->buckets) >= LD_LIGHTPUSH_RATE_MAX_PEERS)
    prune_buckets(srv, now);
  if ((b = malloc(sizeof *b)) == NULL)
    return NULL;
  b->tokens = srv->cfg.rate_volume;
  b->last_ms = now;
  if (ld_hashmap_put(srv->buckets, peer->bytes, peer->len, b, NULL) != 0) {
    free(b);
    return NULL;
  }
  return b;
}

/* Takes one token of `peer`'s bucket; false when it is empty. Fails open on allocation failure. */
static bool rate_allow(ld_lightpush_server_t *srv, const ld_peerid_t *peer) {
  if (srv->cfg.rate_volume == 0 || peer == NULL)
    return true;
  uint64_t now = now_ms(srv);
  bucket_t *b = bucket_of(srv, peer, now);
  if (b == NULL)
    return true;
  refill(srv, b, now);
  if (b->tokens < 1.0)
    return false;
  b->tokens -= 1.0;
  return true;
}

/* ---- publishing ----------------------------------------------------------------------------- */

static void reply_free(ld_lightpush_reply_t *reply) {
  free(reply->topic);
  free(reply->request_id);
  free(reply);
}

static ld_lightpush_reply_t *reply_new(ld_lightpush_server_t *srv, const origin_t *o, bool legacy,
                                       const char *request_id, size_t request_id_len,
                                       const char *topic) {
  ld_lightpush_reply_t *reply = calloc(1, sizeof *reply);
  if (reply == NULL)
    return NULL;
  if ((reply->request_id = malloc(request_id_len + 1)) == NULL ||
      (reply->topic = strdup(topic)) == NULL) {
    reply_free(reply);
    return NULL;
  }
  if (request_id_len > 0)
    memcpy(reply->request_id, request_id, request_id_len);
  reply->request_id[request_id_len] = '\0';
  reply->request_id_len = request_id_len;
  reply->srv = srv;
  reply->sv = o->sv;
  reply->local_done = o->local_done;
  reply->local_ud = o->local_ud;
  reply->legacy = legacy;
  return reply;
}

/* The publish_later step: its result, or LD_LIGHTPUSH_LATER with the reply kept for the
 * answer. */
static int publish_later(ld_lightpush_server_t *srv, const origin_t *o, bool legacy,
                         const char *request_id, size_t request_id_len, const char *topic,
                         const ld_waku_message_t *msg, char *why, size_t cap) {
  ld_lightpush_reply_t *reply = NULL;
  if (o->can_wait && (reply = reply_new(srv, o, legacy, request_id, request_id_len, topic)) == NULL)
    return LD_ERR_NOMEM;
  if (reply != NULL)
    reply->in_callback = true;
  int rc = srv->cfg.publish_later(srv->cfg.publish_ctx, topic, msg, reply, why, cap);
  why[cap - 1] = '\0';
  if (reply == NULL)
    return rc == LD_LIGHTPUSH_LATER ? LD_ERR_INTERNAL : rc;
  reply->in_callback = false;
  if (rc == LD_LIGHTPUSH_LATER && !reply->given) {
    if (o->sv != NULL)
      o->sv->reply = reply;
    return rc;
  }
  if (rc == LD_LIGHTPUSH_LATER) {
    rc = reply->result;
    set_text(why, cap, "%s", reply->why);
  }
  reply_free(reply);
  return rc;
}

static int do_publish(ld_lightpush_server_t *srv, const origin_t *o, bool legacy,
                      const char *request_id, size_t request_id_len, const char *topic,
                      const ld_waku_message_t *msg, char *why, size_t cap) {
  why[0] = '\0';
  if (srv->cfg.publish_later != NULL)
    return publish_later(srv, o, legacy, request_id, request_id_len, topic, msg, why, cap);
  if (srv->cfg.publish == NULL)
    return LD_ERR_UNSUPPORTED;
  int rc = srv->cfg.publish(srv->cfg.publish_ctx, topic, msg, why, cap);
  why[cap - 1] = '\0';
  return rc;
}

static size_t max_msg(const ld_lightpush_server_t *srv) {
  return srv->cfg.max_msg_size != 0 ? srv->cfg.max_msg_size : LD_WAKU_DEFAULT_MAX_MSG_SIZE;
}

/* The validation refusals: their text is the validator's message. */
static bool is_validation_error(int rc) {
  return rc == LD_ERR_TOO_LARGE || rc == LD_ERR_BAD_SIGNATURE || rc == LD_ERR_MALFORMED ||
         rc == LD_ERR_CRYPTO;
}

/* The text of a validation refusal: the callback's, or nwaku's default. */
static void validation_text(const ld_lightpush_server_t *srv, int rc, const char *why, char *desc,
                            size_t cap) {
  if (why[0] != '\0')
    set_text(desc, cap, "%s", why);
  else if (rc == LD_ERR_TOO_LARGE)
    set_text(desc, cap, "Message size exceeded maximum of %zu bytes", max_msg(srv));
  else if (rc == LD_ERR_CRYPTO)
    set_text(desc, cap, "could not generate rln proof");
  else
    set_text(desc, cap, "validator failed");
}

/* v3 status of a publish result (not a success), with its text in `desc`. */
static uint32_t publish_status(const ld_lightpush_server_t *srv, int rc, const char *why,
                               char *desc, size_t cap) {
  if (rc == 0) {
    set_text(desc, cap, "No peers for topic, skipping publish");
    return LD_LIGHTPUSH_NO_PEERS_TO_RELAY;
  }
  if (is_validation_error(rc)) {
    validation_text(srv, rc, why, desc, cap);
    return rc == LD_ERR_CRYPTO ? LD_LIGHTPUSH_OUT_OF_RLN_PROOF : LD_LIGHTPUSH_INVALID_MESSAGE;
  }
  switch (rc) {
  case LD_ERR_EXISTS:
    set_text(desc, cap, "Dropping already-seen message");
    return LD_LIGHTPUSH_INVALID_MESSAGE;
  case LD_ERR_INVALID_ARG:
    set_text(desc, cap, "Empty topic, skipping publish");
    return LD_LIGHTPUSH_INVALID_MESSAGE;
  case LD_ERR_UNSUPPORTED:
    set_text(desc, cap, LD_LIGHTPUSH_NO_RELAY_DESC);
    return LD_LIGHTPUSH_INTERNAL_SERVER_ERROR;
  default:
    set_text(desc, cap, "%s",
             why[0] != '\0' ? why : "Error generating message id, skipping publish");
    return LD_LIGHTPUSH_INTERNAL_SERVER_ERROR;
  }
}

/* ---- v3 ------------------------------------------------------------------------------------- */

/* nwaku's text of a content topic that does not parse. */
static void content_topic_error(const ld_waku_message_t *msg, ld_topic_error_t te, char *desc,
                                size_t cap) {
  if (te == LD_TOPIC_ERR_NO_LEADING_SLASH)
    set_text(desc, cap,
             "Invalid content-topic:invalid format: content-topic '%.*s' must start with slash",
             (int)(msg->content_topic_len > 512 ? 512 : msg->content_topic_len),
             msg->content_topic);
  else
    set_text(desc, cap, "Invalid content-topic:%s", ld_topic_strerror(te));
}

static uint32_t builtin_autoshard(const ld_lightpush_server_t *srv, const ld_waku_message_t *msg,
                                  char *out, size_t cap, char *desc, size_t desc_cap) {
  ld_content_topic_t ct;
  ld_topic_error_t te = LD_TOPIC_OK;
  if (ld_content_topic_parse(msg->content_topic, msg->content_topic_len, &ct, &te) != 0) {
    content_topic_error(msg, te, desc, desc_cap);
    return LD_LIGHTPUSH_INVALID_MESSAGE;
  }
  ld_relay_shard_t shard;
  if (ld_autoshard_parsed(&ct, srv->cfg.num_shards, srv->cfg.cluster_id, &shard, &te) != 0 ||
      ld_pubsub_topic_format(shard, out, cap) < 0) {
    set_text(desc, desc_cap, "Auto-sharding error: %s", ld_topic_strerror(te));
    return LD_LIGHTPUSH_INTERNAL_SERVER_ERROR;
  }
  return 0;
}

static uint32_t callback_autoshard(const ld_lightpush_server_t *srv, const ld_waku_message_t *msg,
                                   char *out, size_t cap, char *desc, size_t desc_cap) {
  char why[LD_LIGHTPUSH_WHY_MAX] = "";
  int rc = srv->cfg.autoshard(srv->cfg.autoshard_ctx, msg->content_topic, msg->content_topic_len,
                              out, cap, why, sizeof why);
  why[sizeof why - 1] = '\0';
  if (rc >= 0 && (size_t)rc < cap)
    return 0;
  if (rc == LD_ERR_BAD_CONTENT_TOPIC) {
    set_text(desc, desc_cap, "Invalid content-topic:%s", why);
    return LD_LIGHTPUSH_INVALID_MESSAGE;
  }
  set_text(desc, desc_cap, "Auto-sharding error: %s", why[0] != '\0' ? why : ld_strerror(rc));
  return LD_LIGHTPUSH_INTERNAL_SERVER_ERROR;
}

/* The pubsub topic of a request without one; 0 or the status to answer (text in `desc`). */
static uint32_t resolve_topic(const ld_lightpush_server_t *srv, const ld_waku_message_t *msg,
                              char *out, size_t cap, char *desc, size_t desc_cap) {
  if (srv->cfg.static_sharding) {
    set_text(desc, desc_cap, "Pubsub topic must be specified when static sharding is enabled");
    return LD_LIGHTPUSH_INVALID_MESSAGE;
  }
  if (srv->cfg.autoshard != NULL)
    return callback_autoshard(srv, msg, out, cap, desc, desc_cap);
  return builtin_autoshard(srv, msg, out, cap, desc, desc_cap);
}

/* Nim's isEmptyOrWhitespace. */
static bool is_blank(const char *s) {
  for (; *s != '\0'; s++)
    if (strchr(" \t\v\r\n\f", *s) == NULL)
      return false;
  return true;
}

/* Fills `r` (texts in `desc`) for a publish result. */
static void v3_result(const ld_lightpush_server_t *srv, const char *topic, int rc, const char *why,
                      ld_lightpush_response_t *r, char *desc, size_t cap) {
  if (rc > 0) {
    r->status_code = LD_LIGHTPUSH_SUCCESS;
    r->has_relay_peer_count = true;
    r->relay_peer_count = (uint32_t)rc;
    return;
  }
  r->status_code = publish_status(srv, rc, why, desc, cap);
  LD_DEBUG(LOG_TOPIC, "push on %s failed: %u %s", topic, r->status_code, desc);
}

/* Fills `r` (texts in `desc` or the request) for a decoded request; LD_LIGHTPUSH_LATER when the
 * publish result comes later. */
static int push_v3(ld_lightpush_server_t *srv, const origin_t *o, const ld_lightpush_request_t *req,
                   ld_lightpush_response_t *r, char *desc, size_t cap) {
  char topic_buf[LD_LIGHTPUSH_MAX_TOPIC_LEN + 1];
  const char *topic = req->pubsub_topic;
  if (topic == NULL) {
    r->status_code = resolve_topic(srv, &req->message, topic_buf, sizeof topic_buf, desc, cap);
    if (r->status_code != 0)
      return 0;
    topic = topic_buf;
  }
  if (is_blank(topic)) {
    r->status_code = LD_LIGHTPUSH_BAD_REQUEST;
    set_text(desc, cap, "topic must not be empty");
    return 0;
  }
  srv->stats.v3_pushes++;
  char why[LD_LIGHTPUSH_WHY_MAX];
  int rc = do_publish(srv, o, false, req->request_id, req->request_id_len, topic, &req->message,
                      why, sizeof why);
  if (rc == LD_LIGHTPUSH_LATER)
    return rc;
  v3_result(srv, topic, rc, why, r, desc, cap);
  return 0;
}

static int answer_v3(ld_lightpush_server_t *srv, const origin_t *o, const uint8_t *body, size_t len,
                     bool limited, ld_lightpush_request_t *req, ld_lightpush_response_t *r,
                     char *desc, size_t cap) {
  char why[LD_LIGHTPUSH_WHY_MAX];
  r->request_id = LD_LIGHTPUSH_NA;
  r->request_id_len = strlen(LD_LIGHTPUSH_NA);
  if (limited) {
    r->status_code = LD_LIGHTPUSH_TOO_MANY_REQUESTS;
    set_text(desc, cap, LD_LIGHTPUSH_TOO_MANY_REQUESTS_DESC);
  } else if (ld_lightpush_request_decode(body, len, req, why, sizeof why) != 0) {
    r->status_code = LD_LIGHTPUSH_BAD_REQUEST;
    set_text(desc, cap, "decode_rpc_failure: %s", why);
  } else {
    r->request_id = req->request_id;
    r->request_id_len = req->request_id_len;
    return push_v3(srv, o, req, r, desc, cap);
  }
  return 0;
}

/* Counts and encodes the answer `r` (its text in `desc` unless a success). */
static int encode_v3(ld_lightpush_server_t *srv, ld_lightpush_response_t *r, const char *desc,
                     ld_buf_t *out) {
  if (r->status_code != LD_LIGHTPUSH_SUCCESS) {
    r->status_desc = desc;
    r->status_desc_len = strlen(desc);
  }
  int i = ld_lightpush_code_index(r->status_code);
  if (i >= 0)
    srv->stats.v3_answers[i]++;
  return ld_lightpush_response_encode(r, out);
}

/* The answer in `out`, or LD_REQRESP_LATER when it comes later (ld_lightpush_reply_send). */
static int serve_v3(ld_lightpush_server_t *srv, const origin_t *o, const uint8_t *body, size_t len,
                    bool limited, ld_buf_t *out) {
  ld_lightpush_request_t req;
  ld_lightpush_response_t r;
  char desc[DESC_MAX] = "";
  ld_lightpush_request_init(&req);
  ld_lightpush_response_init(&r);
  srv->stats.v3_requests++;
  int rc = answer_v3(srv, o, body, len, limited, &req, &r, desc, sizeof desc);
  rc = rc == LD_LIGHTPUSH_LATER ? LD_REQRESP_LATER : encode_v3(srv, &r, desc, out);
  ld_lightpush_request_clear(&req);
  return rc;
}

static int encode_local_request(const char *topic, const ld_waku_message_t *msg, ld_buf_t *out) {
  if (msg == NULL || (topic != NULL && strlen(topic) > LD_LIGHTPUSH_MAX_TOPIC_LEN))
    return LD_ERR_INVALID_ARG;
  ld_lightpush_request_t req;
  ld_lightpush_request_init(&req);
  req.request_id = "local";
  req.request_id_len = 5;
  req.pubsub_topic = topic;
  req.pubsub_topic_len = topic != NULL ? strlen(topic) : 0;
  req.message = *msg;
  int rc = ld_lightpush_request_encode(&req, SIZE_MAX, out);
  return rc == LD_ERR_FIELD_TOO_LONG ? LD_ERR_INVALID_ARG : rc;
}

/* The local result of the encoded answer `resp` (one frame). */
static int local_result(const ld_buf_t *resp, ld_lightpush_local_result_t *out) {
  const uint8_t *body;
  size_t n;
  ld_lightpush_response_t r;
  ld_lightpush_response_init(&r);
  int rc =
      ld_reqresp_read_frame(resp->data, resp->len, SIZE_MAX, &body, &n) < 0 ? LD_ERR_INTERNAL : 0;
  if (rc == 0)
    rc = ld_lightpush_response_decode(body, n, &r, NULL, 0);
  if (rc == 0) {
    out->status_code = r.status_code;
    out->relay_peer_count = r.has_relay_peer_count ? r.relay_peer_count : 0;
    if (out->status_code == LD_LIGHTPUSH_SUCCESS && out->relay_peer_count == 0)
      out->status_code = LD_LIGHTPUSH_NO_PEERS_TO_RELAY;
    set_text(out->status_desc, sizeof out->status_desc, "%.*s", (int)r.status_desc_len,
             r.status_desc != NULL ? r.status_desc : "");
  }
  ld_lightpush_response_clear(&r);
  return rc;
}

/* Serves a local push from `o`: 0 with the answer in `resp`, LD_REQRESP_LATER, or an error. */
static int serve_local(ld_lightpush_server_t *srv, const origin_t *o, const char *pubsub_topic,
                       const ld_waku_message_t *msg, ld_buf_t *resp) {
  ld_buf_t frame;
  ld_buf_init(&frame);
  const uint8_t *body;
  size_t n;
  int rc = encode_local_request(pubsub_topic, msg, &frame);
  if (rc == 0 && ld_reqresp_read_frame(frame.data, frame.len, SIZE_MAX, &body, &n) < 0)
    rc = LD_ERR_INTERNAL;
  if (rc == 0)
    rc = serve_v3(srv, o, body, n, false, resp);
  ld_buf_clear(&frame);
  return rc;
}

int ld_lightpush_server_push_local(ld_lightpush_server_t *srv, const char *pubsub_topic,
                                   const ld_waku_message_t *msg, ld_lightpush_local_result_t *out) {
  if (srv == NULL || out == NULL)
    return LD_ERR_INVALID_ARG;
  origin_t o = {0};
  ld_buf_t resp;
  ld_buf_init(&resp);
  int rc = serve_local(srv, &o, pubsub_topic, msg, &resp);
  if (rc == 0)
    rc = local_result(&resp, out);
  ld_buf_clear(&resp);
  return rc;
}

int ld_lightpush_server_push_local_async(ld_lightpush_server_t *srv, const char *pubsub_topic,
                                         const ld_waku_message_t *msg,
                                         ld_lightpush_local_done_fn done, void *user_data) {
  if (srv == NULL || done == NULL)
    return LD_ERR_INVALID_ARG;
  origin_t o = {.can_wait = true, .local_done = done, .local_ud = user_data};
  ld_buf_t resp;
  ld_buf_init(&resp);
  ld_lightpush_local_result_t out;
  int rc = serve_local(srv, &o, pubsub_topic, msg, &resp);
  if (rc == 0)
    rc = local_result(&resp, &out);
  ld_buf_clear(&resp);
  if (rc == LD_REQRESP_LATER)
    return 0;
  if (rc == 0)
    done(user_data, &out);
  return rc;
}

/* ---- legacy --------------------------------------------------------------------------------- */

static void legacy_error(ld_lightpush_server_t *srv, ld_lightpush_legacy_error_t e) {
  srv->stats.legacy_errors[e]++;
}

/* Fills the response fields of `r` (info text in `info`) for a publish result. */
static void legacy_result(ld_lightpush_server_t *srv, int rc, const char *why,
                          ld_lightpush_rpc_t *r, char *info, size_t cap) {
  r->is_success = rc > 0;
  if (rc > 0) {
    srv->stats.legacy_successes++;
    set_text(info, cap, "OK");
  } else if (is_validation_error(rc)) {
    legacy_error(srv, LD_LIGHTPUSH_LEGACY_INVALID_MESSAGE);
    validation_text(srv, rc, why, info, cap);
  } else if (rc == LD_ERR_UNSUPPORTED) {
    legacy_error(srv, LD_LIGHTPUSH_LEGACY_NO_RELAY);
    set_text(info, cap, LD_LIGHTPUSH_NO_RELAY_DESC);
  } else {
    legacy_error(srv, LD_LIGHTPUSH_LEGACY_NOT_PUBLISHED);
    set_text(info, cap, "not_published_to_any_peer");
  }
}

/* Publishes a decoded request; fills the response fields of `r` (info text in `info`), or
 * LD_LIGHTPUSH_LATER when the publish result comes later. */
static int push_legacy(ld_lightpush_server_t *srv, const origin_t *o, const ld_lightpush_rpc_t *in,
                       ld_lightpush_rpc_t *r, char *info, size_t cap) {
  char why[LD_LIGHTPUSH_WHY_MAX];
  srv->stats.legacy_pushes++;
  int rc = do_publish(srv, o, true, in->request_id, in->request_id_len, in->pubsub_topic,
                      &in->message, why, sizeof why);
  if (rc == LD_LIGHTPUSH_LATER)
    return rc;
  legacy_result(srv, rc, why, r, info, cap);
  return 0;
}

static int answer_legacy(ld_lightpush_server_t *srv, const origin_t *o, const uint8_t *body,
                         size_t len, bool limited, ld_lightpush_rpc_t *in, ld_lightpush_rpc_t *r,
                         char *info, size_t cap) {
  char why[LD_LIGHTPUSH_WHY_MAX];
  r->request_id = "";
  r->has_response = true;
  if (limited) {
    r->request_id = LD_LIGHTPUSH_NA;
    legacy_error(srv, LD_LIGHTPUSH_LEGACY_RATE_LIMITED);
    set_text(info, cap, LD_LIGHTPUSH_LEGACY_TOO_MANY_REQUESTS);
  } else if (ld_lightpush_rpc_decode(body, len, in, why, sizeof why) != 0) {
    legacy_error(srv, LD_LIGHTPUSH_LEGACY_DECODE);
    set_text(info, cap, "decode_rpc_failure: %s", why);
  } else if (!in->has_request) {
    legacy_error(srv, LD_LIGHTPUSH_LEGACY_EMPTY_BODY);
    set_text(info, cap, "empty_request_body_failure");
  } else {
    r->request_id = in->request_id;
    if (push_legacy(srv, o, in, r, info, cap) == LD_LIGHTPUSH_LATER)
      return LD_LIGHTPUSH_LATER;
  }
  r->request_id_len = strlen(r->request_id);
  if (r->request_id == in->request_id)
    r->request_id_len = in->request_id_len;
  return 0;
}

static int encode_legacy(ld_lightpush_rpc_t *r, const char *info, ld_buf_t *out) {
  r->info = info;
  r->info_len = strlen(info);
  if (!r->is_success)
    LD_DEBUG(LOG_TOPIC, "legacy push failed: %s", info);
  return ld_lightpush_rpc_encode(r, 0, out);
}

/* The answer in `out`, or LD_REQRESP_LATER when it comes later (ld_lightpush_reply_send). */
static int serve_legacy(ld_lightpush_server_t *srv, const origin_t *o, const uint8_t *body,
                        size_t len, bool limited, ld_buf_t *out) {
  ld_lightpush_rpc_t in, r;
  char info[DESC_MAX] = "";
  ld_lightpush_rpc_init(&in);
  ld_lightpush_rpc_init(&r);
  srv->stats.legacy_requests++;
  int rc = answer_legacy(srv, o, body, len, limited, &in, &r, info, sizeof info);
  rc = rc == LD_LIGHTPUSH_LATER ? LD_REQRESP_LATER : encode_legacy(&r, info, out);
  ld_lightpush_rpc_clear(&in);
  return rc;
}

/* ---- answers given later -------------------------------------------------------------------- */

static int encode_later(ld_lightpush_reply_t *reply, int result, const char *why, ld_buf_t *out) {
  char text[DESC_MAX] = "";
  if (reply->legacy) {
    ld_lightpush_rpc_t r;
    ld_lightpush_rpc_init(&r);
    r.has_response = true;
    r.request_id = reply->request_id;
    r.request_id_len = reply->request_id_len;
    legacy_result(reply->srv, result, why, &r, text, sizeof text);
    return encode_legacy(&r, text, out);
  }
  ld_lightpush_response_t r;
  ld_lightpush_response_init(&r);
  r.request_id = reply->request_id;
  r.request_id_len = reply->request_id_len;
  v3_result(reply->srv, reply->topic, result, why, &r, text, sizeof text);
  return encode_v3(reply->srv, &r, text, out);
}

static void answer_local(ld_lightpush_reply_t *reply, int rc, const ld_buf_t *resp) {
  ld_lightpush_local_result_t out;
  if (rc == 0)
    rc = local_result(resp, &out);
  if (rc != 0) {
    memset(&out, 0, sizeof out);
    out.status_code = LD_LIGHTPUSH_INTERNAL_SERVER_ERROR;
    set_text(out.status_desc, sizeof out.status_desc, "%s", ld_strerror(rc));
  }
  reply->local_done(reply->local_ud, &out);
}

void ld_lightpush_reply_send(ld_lightpush_reply_t *reply, int result, const char *why) {
  if (reply == NULL)
    return;
  char text[LD_LIGHTPUSH_WHY_MAX];
  set_text(text, sizeof text, "%s", why != NULL ? why : "");
  if (reply->in_callback) { /* publish_later answers with it when it returns */
    reply->given = true;
    reply->result = result;
    set_text(reply->why, sizeof reply->why, "%s", text);
    return;
  }
  ld_buf_t out;
  ld_buf_init(&out);
  int rc = encode_later(reply, result, text, &out);
  if (reply->sv != NULL) {
    reply->sv->reply = NULL;
    if (rc == 0)
      reply->srv->stats.bytes_out += out.len;
    ld_reqresp_respond(reply->sv->call, out.data, out.len, rc);
  } else if (reply->local_done != NULL) {
    answer_local(reply, rc, &out);
  }
  ld_buf_clear(&out);
  reply_free(reply);
}

/* ---- streams -------------------------------------------------------------------------------- */

static size_t conn_streams(const ld_lightpush_server_t *srv, const ld_conn_t *c) {
  return (size_t)(uintptr_t)ld_hashmap_get_u64(srv->conns, (uint64_t)(uintptr_t)c);
}

static int conn_set_streams(ld_lightpush_server_t *srv, const ld_conn_t *c, size_t n) {
  uint64_t key = (uint64_t)(uintptr_t)c;
  if (n == 0) {
    ld_hashmap_remove_u64(srv->conns, key);
    return 0;
  }
  return ld_hashmap_put_u64(srv->conns, key, (void *)(uintptr_t)n, NULL);
}

static int on_request(ld_stream_t *s, const uint8_t *req, size_t len, ld_buf_t *resp, void *ud) {
  served_t *sv = ud;
  ld_lightpush_server_t *srv = sv->srv;
  srv->stats.bytes_in += len;
  const uint8_t *body;
  size_t n;
  int rc = ld_reqresp_read_frame(req, len, srv->frame_max, &body, &n);
  if (rc < 0)
    return rc;
  bool limited = !rate_allow(srv, ld_conn_remote_peer(ld_stream_conn(s)));
  origin_t o = {.sv = sv, .can_wait = true};
  rc = sv->legacy ? serve_legacy(srv, &o, body, n, limited, resp)
                  : serve_v3(srv, &o, body, n, limited, resp);
  if (rc == LD_REQRESP_LATER)
    return rc;
  if (rc == 0)
    srv->stats.bytes_out += resp->len;
  else
    LD_WARN(LOG_TOPIC, "cannot answer a lightpush request: %s", ld_errname(rc));
  return rc;
}

static void on_failed(ld_stream_t *s, int err, void *ud) {
  served_t *sv = ud;
  sv->srv->stats.streams_failed++;
  char peer[LD_PEERID_TEXT_MAX] = "?";
  if (s != NULL)
    ld_peerid_to_text(ld_conn_remote_peer(ld_stream_conn(s)), peer, sizeof peer);
  LD_DEBUG(LOG_TOPIC, "%s request from %s not served: %s",
           sv->legacy ? "legacy lightpush" : "lightpush", peer, ld_errname(err));
}

static void on_closed(void *ud) {
  served_t *sv = ud;
  if (sv->reply != NULL) /* its result comes later: only counted */
    sv->reply->sv = NULL;
  size_t n = conn_streams(sv->srv, sv->conn);
  conn_set_streams(sv->srv, sv->conn, n > 0 ? n - 1 : 0);
  free(sv);
}

static const ld_reqresp_server_t g_server = {
    .on_request = on_request,
    .on_failed = on_failed,
    .on_closed = on_closed,
};

static void accept_stream(ld_lightpush_server_t *srv, ld_stream_t *s, bool legacy) {
  ld_conn_t *c = ld_stream_conn(s);
  size_t n = conn_streams(srv, c);
  served_t *sv = NULL;
  if (n >= srv->cfg.max_inbound_per_conn || conn_set_streams(srv, c, n + 1) != 0 ||
      (sv = malloc(sizeof *sv)) == NULL) {
    srv->stats.streams_refused++;
    conn_set_streams(srv, c, n);
    ld_stream_reset(s);
    return;
  }
  sv->srv = srv;
  sv->conn = c;
  sv->legacy = legacy;
  sv->call = NULL;
  sv->reply = NULL;
  ld_reqresp_opts_t o = {.max_bytes = srv->frame_max + PREFIX_MAX,
                         .frame_max = srv->frame_max,
                         .timeout_ms = srv->cfg.timeout_ms};
  if (ld_reqresp_serve(srv->sw, s, &o, &g_server, sv, &sv->call) != 0) {
    conn_set_streams(srv, c, n);
    free(sv);
  }
}

static void accept_v3(ld_stream_t *s, void *ud) {
  accept_stream(ud, s, false);
}

static void accept_legacy(ld_stream_t *s, void *ud) {
  accept_stream(ud, s, true);
}

/* ---- public --------------------------------------------------------------------------------- */

void ld_lightpush_server_config_default(ld_lightpush_server_config_t *cfg) {
  memset(cfg, 0, sizeof *cfg);
  cfg->mount_v3 = true;
  cfg->mount_legacy = true;
  cfg->cluster_id = LD_WAKU_DEFAULT_CLUSTER_ID;
  cfg->num_shards = LD_WAKU_DEFAULT_NUM_SHARDS;
  cfg->timeout_ms = LD_LIGHTPUSH_SERVER_TIMEOUT_MS;
  cfg->max_inbound_per_conn = LD_LIGHTPUSH_MAX_INBOUND_PER_CONN;
}

static bool config_ok(const ld_lightpush_server_config_t *cfg) {
  if (!cfg->mount_v3 && !cfg->mount_legacy)
    return false;
  if (cfg->rate_volume > 0 && cfg->rate_period_ms == 0)
    return false;
  return cfg->autoshard != NULL || cfg->static_sharding ||
         (cfg->num_shards > 0 && cfg->num_shards <= LD_WAKU_MAX_SHARDS_PER_CLUSTER);
}

/* The switch cannot drop a handler: check both IDs before registering either. */
static bool registered(ld_switch_t *sw, const char *protocol) {
  size_t n = ld_switch_protocols(sw, NULL, 0);
  const char **ids = calloc(n + 1, sizeof *ids);
  if (ids == NULL)
    return true; /* cannot tell: refuse */
  n = ld_switch_protocols(sw, ids, n);
  bool found = false;
  for (size_t i = 0; i < n && !found; i++)
    found = strcmp(ids[i], protocol) == 0;
  free(ids);
  return found;
}

static int mount(ld_lightpush_server_t *srv) {
  if ((srv->cfg.mount_v3 && registered(srv->sw, LD_LIGHTPUSH_PROTOCOL)) ||
      (srv->cfg.mount_legacy && registered(srv->sw, LD_LIGHTPUSH_LEGACY_PROTOCOL)))
    return LD_ERR_EXISTS;
  int rc = 0;
  if (srv->cfg.mount_v3)
    rc = ld_switch_handle(srv->sw, LD_LIGHTPUSH_PROTOCOL, accept_v3, srv);
  if (rc == 0 && srv->cfg.mount_legacy)
    rc = ld_switch_handle(srv->sw, LD_LIGHTPUSH_LEGACY_PROTOCOL, accept_legacy, srv);
  return rc;
}

ld_lightpush_server_t *ld_lightpush_server_new(ld_switch_t *sw,
                                               const ld_lightpush_server_config_t *cfg) {
  if (sw == NULL || cfg == NULL || !config_ok(cfg))
    return NULL;
  ld_lightpush_server_t *srv = calloc(1, sizeof *srv);
  if (srv == NULL)
    return NULL;
  srv->sw = sw;
  srv->cfg = *cfg;
  if (srv->cfg.timeout_ms == 0)
    srv->cfg.timeout_ms = LD_LIGHTPUSH_SERVER_TIMEOUT_MS;
  if (srv->cfg.max_inbound_per_conn == 0)
    srv->cfg.max_inbound_per_conn = LD_LIGHTPUSH_MAX_INBOUND_PER_CONN;
  srv->frame_max = ld_lightpush_max_frame(cfg->max_msg_size);
  if ((srv->conns = ld_hashmap_new(16)) == NULL || (srv->buckets = ld_hashmap_new(16)) == NULL ||
      mount(srv) != 0) {
    ld_lightpush_server_free(srv);
    return NULL;
  }
  return srv;
}

void ld_lightpush_server_free(ld_lightpush_server_t *srv) {
  if (srv == NULL)
    return;
  ld_hashmap_free(srv->conns, NULL);
  ld_hashmap_free(srv->buckets, free);
  free(srv);
}

void ld_lightpush_server_set_publish(ld_lightpush_server_t *srv, ld_lightpush_publish_fn fn,
                                     void *ctx) {
  srv->cfg.publish = fn;
  srv->cfg.publish_ctx = ctx;
}

static const char *const k_legacy_error_names[LD_LIGHTPUSH_LEGACY_N_ERRORS] = {
    "decode_rpc_failure", "empty_request_body_failure",
    "validation_failure", "not_published_to_any_peer",
    "no_relay",           "request_limit_reached_failure",
};

const char *ld_lightpush_legacy_error_name(ld_lightpush_legacy_error_t e) {
  return (unsigned)e < LD_LIGHTPUSH_LEGACY_N_ERRORS ? k_legacy_error_names[e] : "unknown";
}

void ld_lightpush_server_get_stats(const ld_lightpush_server_t *srv,
                                   ld_lightpush_server_stats_t *out) {
  *out = srv->stats;
}

/* ---- relay glue ----------------------------------------------------------------------------- */

static int outgoing_refusal(ld_relay_t *r, ld_relay_reason_t reason, char *why, size_t cap) {
  switch (reason) {
  case LD_RELAY_TOO_LARGE:
    set_text(why, cap, "Message size exceeded maximum of %zu bytes", ld_relay_max_msg_size(r));
    return LD_ERR_TOO_LARGE;
  case LD_RELAY_NO_TIMESTAMP:
  case LD_RELAY_OUT_OF_WINDOW:
  case LD_RELAY_BAD_SIGNATURE:
    set_text(why, cap, "signed shard validation failed");
    return LD_ERR_BAD_SIGNATURE;
  default:
    set_text(why, cap, "validator failed");
    return LD_ERR_MALFORMED;
  }
}

/* The relay has seen these bytes already: typically the message arrived by relay a moment before
 * the push was handled (a client pushing the same message to two service nodes at once). When
 * the relay has it on this topic (accepted, or still being validated: the peers that sent it have
 * it) the message is in the network: the push succeeds with the peers it reached. Deviation:
 * nwaku v0.36 answers 420 "Dropping already-seen message" (v2 not_published_to_any_peer) here and
 * only loses this race less often because its relay is slower. A message seen but refused, or
 * seen on another topic, keeps nwaku's answer. */
static int already_relayed(ld_relay_t *r, const char *pubsub_topic, const ld_waku_message_t *msg) {
  int reach = ld_relay_seen_reach(r, pubsub_topic, msg);
  if (reach < 0)
    return LD_ERR_EXISTS;
  LD_DEBUG(LOG_TOPIC, "push of a message already relayed on %s: answered as reaching %d peers",
           pubsub_topic, reach);
  return reach;
}

int ld_lightpush_relay_publish(void *relay, const char *pubsub_topic, const ld_waku_message_t *msg,
                               char *why, size_t why_len) {
  ld_relay_t *r = relay;
  if (r == NULL)
    return LD_ERR_UNSUPPORTED;
  ld_relay_reason_t reason = ld_relay_check_outgoing(r, pubsub_topic, msg);
  if (reason != LD_RELAY_OK)
    return outgoing_refusal(r, reason, why, why_len);
  int rc = ld_relay_publish(r, pubsub_topic, msg, NULL);
  if (rc == LD_ERR_TOO_LARGE)
    return outgoing_refusal(r, LD_RELAY_TOO_LARGE, why, why_len);
  if (rc == LD_ERR_EXISTS)
    return already_relayed(r, pubsub_topic, msg);
  return rc;
}
