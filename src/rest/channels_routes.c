#include "rest/channels_routes.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "base/log.h"
#include "rest/json.h"
#include "rest/messaging_json.h"
#include "rest/server_groups.h"
#include "rest/server_internal.h"

#define TOPIC "rest"
/* Longest channel ID, sender ID or content topic accepted (the channel layer's limit). */
#define FIELD_MAX 255

typedef struct cached_event {
  ld_rest_channel_event_kind_t kind;
  char *channel_id, *request_id, *sender_id, *error;
  char *message_id, *message_hash, *payload_hash, *reason; /* LOST */
  uint8_t *payload;
  size_t payload_len;
  int64_t timestamp;
} cached_event_t;

struct ld_rest_channels {
  ld_rest_server_t *srv;
  ld_rest_channels_ops_t ops;
  cached_event_t *ring; /* LD_REST_CHANNEL_EVENTS_MAX slots */
  size_t start, n, bytes;
  uint64_t dropped;
};

static const char *const SEGMENTS[] = {"channels"};

static const char *const EVENT_NAMES[] = {
    "channel_message_received",  "channel_message_sent",           "channel_message_error",
    "channel_message_delivered", "channel_message_delivery_error", "channel_message_lost",
};

const char *ld_rest_channel_event_name(ld_rest_channel_event_kind_t kind) {
  return (unsigned)kind < sizeof EVENT_NAMES / sizeof EVENT_NAMES[0] ? EVENT_NAMES[kind]
                                                                     : "unknown";
}

int ld_rest_install_channels_unavailable(ld_rest_server_t *srv) {
  return ld_rest_server_set_unavailable(srv, SEGMENTS[0], LD_REST_CHANNELS_UNAVAILABLE);
}

/* ---- answers --------------------------------------------------------------------------------- */

static void respond_text(ld_http_request_t *req, unsigned status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void respond_text(ld_http_request_t *req, unsigned status, const char *fmt, ...) {
  char text[LD_REST_ERR_MAX + 2 * FIELD_MAX];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(text, sizeof text, fmt, ap);
  va_end(ap);
  ld_http_respond_text(req, status, text);
}

/* The HTTP status of a channel layer error. */
static unsigned status_of(int rc) {
  switch (rc) {
  case LD_ERR_NOT_FOUND:
    return 404;
  case LD_ERR_EXISTS:
    return 409;
  case LD_ERR_TOO_LARGE:
    return 413;
  case LD_ERR_LIMIT:
    return 429;
  case LD_ERR_INVALID_ARG:
  case LD_ERR_BAD_CONTENT_TOPIC:
  case LD_ERR_UNSUPPORTED:
    return 400;
  default:
    return 500;
  }
}

/* Answers a failed call: the channel layer's reason, prefixed for what is not a lookup. */
static void respond_failure(ld_http_request_t *req, int rc, const char *op, const char *what,
                            const char *why) {
  unsigned status = status_of(rc);
  const char *reason = why[0] != '\0' ? why : ld_strerror(rc);
  if (status == 404 || status == 409)
    respond_text(req, status, "%s", reason);
  else if (status == 413)
    respond_text(req, status, "Payload too large: %s", reason);
  else if (status == 429)
    respond_text(req, status, "Too many requests in flight: %s", reason);
  else if (status == 400)
    respond_text(req, status, "Invalid %s: %s", what, reason);
  else
    respond_text(req, status, "%s failed: %s", op, reason);
}

static json_t *channel_json(const char *id, bool with_exists) {
  json_t *o = json_object();
  if (o == NULL)
    return NULL;
  int rc = ld_rest_json_set(o, "channelId", ld_rest_json_string(id, strlen(id)));
  if (with_exists)
    rc |= ld_rest_json_set(o, "exists", json_true());
  if (rc != 0) {
    json_decref(o);
    return NULL;
  }
  return o;
}

/* ---- request bodies -------------------------------------------------------------------------- */

/* A required string field of 1..FIELD_MAX bytes without NUL or blank-only; NULL with `why`. */
static const char *required_field(const json_t *body, const char *key, char *why, size_t cap) {
  const json_t *v = json_object_get(body, key);
  if (v == NULL || !json_is_string(v)) {
    snprintf(why, cap, "field `%s` is missing or not a string", key);
    return NULL;
  }
  const char *s = json_string_value(v);
  size_t len = json_string_length(v);
  if (len == 0 || ld_rest_is_blank(s, len) || strlen(s) != len) {
    snprintf(why, cap, "field `%s` is empty", key);
    return NULL;
  }
  if (len > FIELD_MAX) {
    snprintf(why, cap, "field `%s` is longer than %d bytes", key, FIELD_MAX);
    return NULL;
  }
  return s;
}

/* Parses the body as a JSON object; answers 400 and returns NULL on failure. */
static json_t *read_object(ld_http_request_t *req) {
  json_t *body = NULL;
  if (ld_rest_read_json(req, &body) != 0)
    return NULL;
  if (!json_is_object(body)) {
    ld_http_respond_text(req, 400,
                         "Invalid content body, could not decode: expected a JSON object");
    json_decref(body);
    return NULL;
  }
  return body;
}

/* ---- handlers -------------------------------------------------------------------------------- */

static void post_channel(ld_rest_server_t *srv, ld_http_request_t *req, const ld_route_match_t *m,
                         void *user_data) {
  (void)srv, (void)m;
  ld_rest_channels_t *rc = user_data;
  char why[LD_REST_ERR_MAX] = "";
  json_t *body = read_object(req);
  if (body == NULL)
    return;
  const char *id = required_field(body, "channelId", why, sizeof why);
  const char *topic = id ? required_field(body, "contentTopic", why, sizeof why) : NULL;
  const char *sender = topic ? required_field(body, "senderId", why, sizeof why) : NULL;
  if (sender == NULL) {
    respond_text(req, 400, "Invalid channel: %s", why);
  } else {
    int err = rc->ops.create(rc->ops.user_data, id, topic, sender, why, sizeof why);
    if (err != 0) {
      LD_DEBUG(TOPIC, "channel create %s: %s", id, why);
      respond_failure(req, err, "Create", "channel", why);
    } else {
      ld_rest_respond_json_new(req, channel_json(id, false));
    }
  }
  json_decref(body);
}

static void get_channel(ld_rest_server_t *srv, ld_http_request_t *req, const ld_route_match_t *m,
                        void *user_data) {
  (void)srv;
  ld_rest_channels_t *rc = user_data;
  const char *id = ld_route_param(m, "channelId");
  if (!rc->ops.exists(rc->ops.user_data, id))
    respond_text(req, 404, "unknown channel: %s", id);
  else
    ld_rest_respond_json_new(req, channel_json(id, true));
}

static void delete_channel(ld_rest_server_t *srv, ld_http_request_t *req, const ld_route_match_t *m,
                           void *user_data) {
  (void)srv;
  ld_rest_channels_t *rc = user_data;
  const char *id = ld_route_param(m, "channelId");
  char why[LD_REST_ERR_MAX] = "";
  int err = rc->ops.close(rc->ops.user_data, id, why, sizeof why);
  if (err != 0)
    respond_failure(req, err, "Close", "channel", why);
  else
    ld_rest_respond_ok(req);
}

/* Reads {"payload": base64, "ephemeral"?: bool}; answers 400 and returns non-zero on failure. */
static int read_message(ld_http_request_t *req, const json_t *body, uint8_t **payload, size_t *len,
                        bool *ephemeral) {
  const json_t *p = json_object_get(body, "payload");
  const json_t *eph = json_object_get(body, "ephemeral");
  if (p == NULL || !json_is_string(p)) {
    ld_http_respond_text(req, 400, "Invalid message: field `payload` is missing or not a string");
    return LD_ERR_MALFORMED;
  }
  if (eph != NULL && !json_is_boolean(eph)) {
    ld_http_respond_text(req, 400, "Invalid message: field `ephemeral` must be a boolean");
    return LD_ERR_MALFORMED;
  }
  *ephemeral = eph != NULL && json_is_true(eph);
  int rc = ld_rest_base64_decode(json_string_value(p), json_string_length(p), payload, len);
  if (rc == LD_ERR_NOMEM)
    ld_http_respond_text(req, 500, "Out of memory");
  else if (rc != 0)
    ld_http_respond_text(req, 400, "Invalid message: incorrect base64 string in field `payload`");
  else if (*len == 0)
    ld_http_respond_text(req, 400, "Invalid message: empty payload");
  if (rc == 0 && *len == 0)
    rc = LD_ERR_INVALID_ARG;
  return rc;
}

static void post_message(ld_rest_server_t *srv, ld_http_request_t *req, const ld_route_match_t *m,
                         void *user_data) {
  (void)srv;
  ld_rest_channels_t *rc = user_data;
  const char *id = ld_route_param(m, "channelId");
  if (!rc->ops.exists(rc->ops.user_data, id)) {
    respond_text(req, 404, "unknown channel: %s", id);
    return;
  }
  json_t *body = read_object(req);
  uint8_t *payload = NULL;
  size_t len = 0;
  bool ephemeral = false;
  if (body != NULL && read_message(req, body, &payload, &len, &ephemeral) == 0) {
    char why[LD_REST_ERR_MAX] = "", request_id[LD_REST_CHANNEL_REQUEST_ID_MAX + 1] = "";
    int err =
        rc->ops.send(rc->ops.user_data, id, payload, len, ephemeral, request_id, why, sizeof why);
    if (err != 0)
      respond_failure(req, err, "Send", "message", why);
    else
      ld_rest_respond_json_new(req, ld_rest_request_id_json(request_id));
  }
  free(payload);
  json_decref(body);
}

/* ---- the event cache ------------------------------------------------------------------------- */

static void event_clear(cached_event_t *e) {
  free(e->channel_id);
  free(e->request_id);
  free(e->sender_id);
  free(e->error);
  free(e->message_id);
  free(e->message_hash);
  free(e->payload_hash);
  free(e->reason);
  free(e->payload);
  memset(e, 0, sizeof *e);
}

static void drop_oldest(ld_rest_channels_t *rc) {
  cached_event_t *e = &rc->ring[rc->start];
  rc->bytes -= e->payload_len;
  event_clear(e);
  rc->start = (rc->start + 1) % LD_REST_CHANNEL_EVENTS_MAX;
  rc->n--;
  rc->dropped++;
}

static char *dup_or_null(const char *s, bool *failed) {
  if (s == NULL)
    return NULL;
  char *copy = strdup(s);
  *failed |= copy == NULL;
  return copy;
}

static int copy_event(cached_event_t *e, const ld_rest_channel_event_t *ev, int64_t now_ns) {
  bool failed = false;
  memset(e, 0, sizeof *e);
  e->kind = ev->kind;
  e->timestamp = now_ns;
  e->channel_id = dup_or_null(ev->channel_id, &failed);
  e->request_id = dup_or_null(ev->request_id, &failed);
  e->sender_id = dup_or_null(ev->sender_id, &failed);
  e->error = dup_or_null(ev->error, &failed);
  e->message_id = dup_or_null(ev->message_id, &failed);
  e->message_hash = dup_or_null(ev->message_hash, &failed);
  e->payload_hash = dup_or_null(ev->payload_hash, &failed);
  e->reason = dup_or_null(ev->reason, &failed);
  if (ev->payload_len > 0 && (e->payload = malloc(ev->payload_len)) != NULL) {
    memcpy(e->payload, ev->payload, ev->payload_len);
    e->payload_len = ev->payload_len;
  }
  failed |= ev->payload_len > 0 && e->payload == NULL;
  if (failed) {
    event_clear(e);
    return LD_ERR_NOMEM;
  }
  return 0;
}

int ld_rest_channels_event(ld_rest_channels_t *rc, const ld_rest_channel_event_t *ev,
                           int64_t now_ns) {
  if (ev->channel_id == NULL || (unsigned)ev->kind > LD_REST_CHANNEL_LOST)
    return LD_ERR_INVALID_ARG;
  if (ev->payload_len > LD_REST_CHANNEL_EVENTS_MAX_BYTES) {
    rc->dropped++;
    return LD_ERR_TOO_LARGE;
  }
  cached_event_t e;
  int err = copy_event(&e, ev, now_ns);
  if (err != 0)
    return err;
  while (rc->n > 0 && (rc->n == LD_REST_CHANNEL_EVENTS_MAX ||
                       rc->bytes + e.payload_len > LD_REST_CHANNEL_EVENTS_MAX_BYTES))
    drop_oldest(rc);
  rc->ring[(rc->start + rc->n) % LD_REST_CHANNEL_EVENTS_MAX] = e;
  rc->n++;
  rc->bytes += e.payload_len;
  return 0;
}

size_t ld_rest_channels_cached(const ld_rest_channels_t *rc) {
  return rc->n;
}

uint64_t ld_rest_channels_dropped(const ld_rest_channels_t *rc) {
  return rc->dropped;
}

static json_t *text_or_null(const char *s) {
  return s != NULL ? ld_rest_json_string(s, strlen(s)) : NULL;
}

static json_t *event_json(const cached_event_t *e) {
  json_t *o = json_object();
  if (o == NULL)
    return NULL;
  int rc = ld_rest_json_set(o, "eventType", json_string(ld_rest_channel_event_name(e->kind)));
  rc |= ld_rest_json_set(o, "channelId", text_or_null(e->channel_id));
  if (e->request_id != NULL)
    rc |= ld_rest_json_set(o, "requestId", text_or_null(e->request_id));
  if (e->kind == LD_REST_CHANNEL_RECEIVED) {
    rc |= ld_rest_json_set(o, "senderId", text_or_null(e->sender_id ? e->sender_id : ""));
    rc |= ld_rest_json_set(o, "payload", ld_rest_json_base64(e->payload, e->payload_len));
  }
  if (e->kind == LD_REST_CHANNEL_ERROR || e->kind == LD_REST_CHANNEL_DELIVERY_ERROR)
    rc |= ld_rest_json_set(o, "error", text_or_null(e->error ? e->error : ""));
  if (e->kind == LD_REST_CHANNEL_LOST) {
    rc |= ld_rest_json_set(o, "senderId", text_or_null(e->sender_id ? e->sender_id : ""));
    rc |= ld_rest_json_set(o, "messageId", text_or_null(e->message_id ? e->message_id : ""));
    rc |= ld_rest_json_set(o, "messageHash", text_or_null(e->message_hash ? e->message_hash : ""));
    rc |= ld_rest_json_set(o, "payloadHash", text_or_null(e->payload_hash ? e->payload_hash : ""));
    rc |= ld_rest_json_set(o, "reason", text_or_null(e->reason ? e->reason : ""));
  }
  rc |= ld_rest_json_set(o, "timestamp", json_integer(e->timestamp));
  if (rc != 0) {
    json_decref(o);
    return NULL;
  }
  return o;
}

/* The cached events as a JSON array, oldest first; NULL when out of memory (the cache is kept). */
static json_t *events_json(const ld_rest_channels_t *rc) {
  json_t *list = json_array();
  for (size_t i = 0; list != NULL && i < rc->n; i++) {
    json_t *item = event_json(&rc->ring[(rc->start + i) % LD_REST_CHANNEL_EVENTS_MAX]);
    if (item == NULL || json_array_append_new(list, item) != 0) {
      json_decref(list);
      list = NULL;
    }
  }
  return list;
}

static void clear_events(ld_rest_channels_t *rc) {
  while (rc->n > 0)
    drop_oldest(rc);
  rc->start = rc->bytes = 0;
}

static void get_events(ld_rest_server_t *srv, ld_http_request_t *req, const ld_route_match_t *m,
                       void *user_data) {
  (void)srv, (void)m;
  ld_rest_channels_t *rc = user_data;
  json_t *list = events_json(rc);
  if (list == NULL) {
    ld_http_respond_text(req, 500, "Out of memory");
    return;
  }
  uint64_t dropped = rc->dropped;
  clear_events(rc);
  rc->dropped = dropped; /* handed over, not dropped */
  ld_rest_respond_json_new(req, list);
}

/* ---- attach / detach ------------------------------------------------------------------------- */

#define CHANNEL "/channels/v1/channels/{channelId}"

static const ld_rest_route_spec_t ROUTES[] = {
    {"POST", "/channels/v1/channels", post_channel},
    {"OPTIONS", "/channels/v1/channels", ld_rest_options_ok},
    {"GET", CHANNEL, get_channel},
    {"DELETE", CHANNEL, delete_channel},
    {"OPTIONS", CHANNEL, ld_rest_options_ok},
    {"POST", CHANNEL "/messages", post_message},
    {"OPTIONS", CHANNEL "/messages", ld_rest_options_ok},
    {"GET", "/channels/v1/events", get_events},
    {"OPTIONS", "/channels/v1/events", ld_rest_options_ok},
};

static const ld_rest_group_t GROUP = {
    .routes = ROUTES,
    .n_routes = sizeof ROUTES / sizeof ROUTES[0],
    .segments = SEGMENTS,
    .n_segments = 1,
    .unavailable = LD_REST_CHANNELS_UNAVAILABLE,
};

int ld_rest_channels_attach(ld_rest_server_t *srv, const ld_rest_channels_ops_t *ops,
                            ld_rest_channels_t **out) {
  if (srv == NULL || ops == NULL || ops->create == NULL || ops->exists == NULL ||
      ops->send == NULL || ops->close == NULL || out == NULL)
    return LD_ERR_INVALID_ARG;
  ld_rest_channels_t *rc = calloc(1, sizeof *rc);
  if (rc == NULL || (rc->ring = calloc(LD_REST_CHANNEL_EVENTS_MAX, sizeof *rc->ring)) == NULL) {
    free(rc);
    return LD_ERR_NOMEM;
  }
  rc->srv = srv;
  rc->ops = *ops;
  int err = ld_rest_server_add_group(srv, &GROUP, rc);
  if (err != 0) {
    free(rc->ring);
    free(rc);
    return err;
  }
  *out = rc;
  return 0;
}

void ld_rest_channels_detach(ld_rest_channels_t *rc) {
  if (rc == NULL)
    return;
  ld_rest_server_remove_group(rc->srv, &GROUP);
  clear_events(rc);
  free(rc->ring);
  free(rc);
}
