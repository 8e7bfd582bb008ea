#include "channels/channels_rest.h"

#include <stdlib.h>
#include <string.h>

#include "base/clock.h"
#include "base/error.h"
#include "base/log.h"
#include "node/broker.h"
#include "node/node.h"
#include "rest/channels_routes.h"

#define TOPIC "rest"
#define N_KINDS 6

typedef struct chrest {
  ld_channels_t *channels;
  ld_broker_t *broker;
  ld_rest_channels_t *rest;
  int64_t listeners[N_KINDS];
  bool provider;
} chrest_t;

static const int KINDS[N_KINDS] = {LD_EVENT_CHANNEL_RECEIVED,       LD_EVENT_CHANNEL_SENT,
                                   LD_EVENT_CHANNEL_ERROR,          LD_EVENT_CHANNEL_DELIVERED,
                                   LD_EVENT_CHANNEL_DELIVERY_ERROR, LD_EVENT_CHANNEL_LOST};

/* ---- the ops table --------------------------------------------------------------------------- */

static int op_create(void *ud, const char *channel_id, const char *content_topic,
                     const char *sender_id, char *why, size_t why_cap) {
  chrest_t *r = ud;
  return ld_channels_create(r->channels, channel_id, content_topic, sender_id, why, why_cap);
}

static bool op_exists(void *ud, const char *channel_id) {
  const chrest_t *r = ud;
  return ld_channels_exists(r->channels, channel_id);
}

static int op_send(void *ud, const char *channel_id, const uint8_t *payload, size_t len,
                   bool ephemeral, char request_id[LD_REST_CHANNEL_REQUEST_ID_MAX + 1], char *why,
                   size_t why_cap) {
  _Static_assert(LD_CHANNEL_REQUEST_ID_LEN <= LD_REST_CHANNEL_REQUEST_ID_MAX, "request ID room");
  chrest_t *r = ud;
  return ld_channels_send(r->channels, channel_id, payload, len, ephemeral, request_id, why,
                          why_cap);
}

static int op_close(void *ud, const char *channel_id, char *why, size_t why_cap) {
  chrest_t *r = ud;
  return ld_channels_close(r->channels, channel_id, why, why_cap);
}

/* ---- events ---------------------------------------------------------------------------------- */

static void on_channel_event(int kind, const void *payload, void *user_data) {
  const ld_channel_event_t *ev = payload;
  chrest_t *r = user_data;
  ld_rest_channel_event_t out = {
      .kind = (ld_rest_channel_event_kind_t)(kind - LD_EVENT_CHANNEL_RECEIVED),
      .channel_id = ev->channel_id,
      .request_id = ev->request_id,
      .sender_id = ev->sender_id,
      .payload = ev->payload,
      .payload_len = ev->payload_len,
      .error = ev->error,
      .message_id = ev->message_id,
      .message_hash = ev->message_hash,
      .payload_hash = ev->payload_hash,
      .reason = ev->reason,
  };
  int rc = ld_rest_channels_event(r->rest, &out, (int64_t)ld_wall_ns());
  if (rc != 0)
    LD_WARN(TOPIC, "Channels REST: %s event of %s not cached: %s",
            ld_rest_channel_event_name(out.kind), ev->channel_id, ld_strerror(rc));
}

static int provide_state(const void *request, void *response, void *user_data) {
  (void)request;
  *(void **)response = user_data;
  return 0;
}

/* ---- attach / detach ------------------------------------------------------------------------- */

static void release(chrest_t *r) {
  for (size_t i = 0; i < N_KINDS; i++)
    if (r->listeners[i] > 0)
      ld_broker_unsubscribe(r->broker, r->listeners[i]);
  if (r->provider)
    ld_broker_remove_provider(r->broker, LD_PROVIDE_CHANNELS_REST);
  ld_rest_channels_detach(r->rest);
  free(r);
}

static int install(chrest_t *r, ld_rest_server_t *srv) {
  int rc = ld_broker_set_provider(r->broker, LD_PROVIDE_CHANNELS_REST, provide_state, r);
  r->provider = rc == 0;
  for (size_t i = 0; i < N_KINDS && rc == 0; i++) {
    r->listeners[i] = ld_broker_subscribe(r->broker, KINDS[i], on_channel_event, r);
    rc = r->listeners[i] < 0 ? (int)r->listeners[i] : 0;
  }
  ld_rest_channels_ops_t ops = {op_create, op_exists, op_send, op_close, r};
  return rc ? rc : ld_rest_channels_attach(srv, &ops, &r->rest);
}

int ld_channels_rest_attach(ld_channels_t *c, ld_messaging_t *m) {
  ld_node_t *node = ld_messaging_node(m);
  ld_rest_server_t *srv = node != NULL ? ld_node_rest_server(node) : NULL;
  if (srv == NULL)
    return 0;
  chrest_t *r = calloc(1, sizeof *r);
  if (r == NULL)
    return LD_ERR_NOMEM;
  r->channels = c;
  r->broker = ld_node_broker(node);
  int rc = install(r, srv);
  if (rc != 0) {
    release(r);
    return rc;
  }
  LD_INFO(TOPIC, "Mounted reliable channels REST API endpoints");
  return 0;
}

void ld_channels_rest_detach(ld_channels_t *c, ld_messaging_t *m) {
  ld_node_t *node = ld_messaging_node(m);
  chrest_t *r = NULL;
  if (node == NULL ||
      ld_broker_request(ld_node_broker(node), LD_PROVIDE_CHANNELS_REST, NULL, &r) != 0 ||
      r == NULL || r->channels != c)
    return;
  release(r);
  LD_INFO(TOPIC, "Unmounted reliable channels REST API endpoints");
}
