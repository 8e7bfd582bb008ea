/* GET /health: nwaku's HealthReport with its per-protocol rules, plus logos-delivery's
 * "connectionStatus" while a messaging client is attached (rest/health.h). The route's user
 * data is the ld_rest_health_source_t, or NULL. */
#include "rest/health.h"

#include <string.h>

#include "base/error.h"
#include "rest/messaging_json.h"
#include "rest/server_internal.h"

#define NO_RELAY_PEERS "No connected peers"
#define NO_PUSH_RELAY_PEERS "Node has no relay peers to fullfill push requests"
#define FILTER_RELAY_NOT_READY "Relay is not ready, filter will not be able to sort out messages"
#define NO_LIGHTPUSH_PEER "No Lightpush service peer available yet"
#define NO_STORE_PEER                                                                              \
  "No Store service peer available yet, neither Store service set up for the node"
#define NO_FILTER_PEER "No Filter service peer available yet"

typedef struct status {
  ld_rest_health_t health;
  const char *desc;
} status_t;

static const status_t NOT_MOUNTED = {LD_REST_HEALTH_NOT_MOUNTED, NULL};
static const status_t READY = {LD_REST_HEALTH_READY, NULL};

static status_t not_ready(const char *desc) {
  return (status_t){LD_REST_HEALTH_NOT_READY, desc};
}

static status_t relay_status(ld_rest_health_t relay) {
  if (relay == LD_REST_HEALTH_READY || relay == LD_REST_HEALTH_NOT_MOUNTED)
    return (status_t){relay, NULL};
  return not_ready(NO_RELAY_PEERS);
}

/* A service that hands its work to relay: ready with relay. */
static status_t relay_backed(bool mounted, bool relay_ready, const char *desc) {
  if (!mounted)
    return NOT_MOUNTED;
  return relay_ready ? READY : not_ready(desc);
}

static status_t served(bool mounted) {
  return mounted ? READY : NOT_MOUNTED;
}

static status_t client(bool mounted, bool usable, const char *desc) {
  if (!mounted)
    return NOT_MOUNTED;
  return usable ? READY : not_ready(desc);
}

/* nwaku's getNodeHealthReport order. */
static const char *const NAMES[LD_REST_HEALTH_N_PROTOCOLS] = {
    "Relay",
    "Rln Relay",
    "Lightpush",
    "Legacy Lightpush",
    "Filter",
    "Store",
    "Legacy Store",
    "Peer Exchange",
    "Rendezvous",
    "Mix",
    "Lightpush Client",
    "Legacy Lightpush Client",
    "Store Client",
    "Legacy Store Client",
    "Filter Client",
};

void ld_rest_protocols_health(ld_rest_health_t relay, const ld_rest_protocols_t *p,
                              ld_rest_protocol_health_t out[LD_REST_HEALTH_N_PROTOCOLS]) {
  bool up = relay == LD_REST_HEALTH_READY;
  const status_t st[LD_REST_HEALTH_N_PROTOCOLS] = {
      relay_status(relay),
      NOT_MOUNTED,
      relay_backed(p->lightpush, up, NO_PUSH_RELAY_PEERS),
      relay_backed(p->legacy_lightpush, up, NO_PUSH_RELAY_PEERS),
      relay_backed(p->filter, up, FILTER_RELAY_NOT_READY),
      served(p->store),
      NOT_MOUNTED,
      served(p->peer_exchange),
      NOT_MOUNTED,
      NOT_MOUNTED,
      client(p->lightpush_client, p->lightpush_peer || (p->lightpush && up), NO_LIGHTPUSH_PEER),
      client(p->legacy_lightpush_client, p->legacy_lightpush_peer || (p->legacy_lightpush && up),
             NO_LIGHTPUSH_PEER),
      client(p->store_client, p->store_peer || p->store, NO_STORE_PEER),
      NOT_MOUNTED,
      client(p->filter_client, p->filter_peer, NO_FILTER_PEER),
  };
  for (size_t i = 0; i < LD_REST_HEALTH_N_PROTOCOLS; i++)
    out[i] = (ld_rest_protocol_health_t){NAMES[i], st[i].health, st[i].desc};
}

/* ---- the endpoint ---------------------------------------------------------------------------- */

static ld_rest_health_t relay_health(const ld_rest_server_t *srv) {
  const ld_rest_relay_ops_t *relay = srv->ctx.relay;
  if (relay == NULL)
    return LD_REST_HEALTH_NOT_MOUNTED;
  if (relay->peer_count != NULL && relay->peer_count(relay->user_data) == 0)
    return LD_REST_HEALTH_NOT_READY;
  return LD_REST_HEALTH_READY;
}

static json_t *entry_json(const ld_rest_protocol_health_t *e) {
  json_t *o = json_object();
  if (o == NULL)
    return NULL;
  int rc = json_object_set_new(o, e->name, json_string(ld_rest_health_name(e->health)));
  if (e->desc != NULL)
    rc |= json_object_set_new(o, "desc", json_string(e->desc));
  if (rc != 0) {
    json_decref(o);
    return NULL;
  }
  return o;
}

static json_t *protocols_health(const ld_rest_server_t *srv, bool messaging) {
  ld_rest_protocols_t p;
  memset(&p, 0, sizeof p);
  if (srv->ctx.protocols != NULL)
    srv->ctx.protocols(srv->ctx.user_data, &p);
  if (messaging)
    p.lightpush_client = p.store_client = true;
  ld_rest_protocol_health_t entries[LD_REST_HEALTH_N_PROTOCOLS];
  ld_rest_protocols_health(relay_health(srv), &p, entries);
  json_t *list = json_array();
  int rc = list != NULL ? 0 : -1;
  for (size_t i = 0; rc == 0 && i < LD_REST_HEALTH_N_PROTOCOLS; i++)
    rc = json_array_append_new(list, entry_json(&entries[i]));
  if (rc != 0) {
    json_decref(list);
    return NULL;
  }
  return list;
}

static void get_health(ld_rest_server_t *srv, ld_http_request_t *req, const ld_route_match_t *m,
                       void *user_data) {
  (void)m;
  const ld_rest_health_source_t *src = user_data;
  const char *status = src != NULL ? src->connection_status(src->user_data) : NULL;
  json_t *report = ld_rest_health_report_json(ld_rest_health_name(srv->health), status,
                                              protocols_health(srv, src != NULL));
  if (report == NULL) {
    ld_http_respond_text(req, 500, "Failed to serialize health report");
    return;
  }
  ld_http_respond_json(req, 200, report);
  json_decref(report);
}

int ld_rest_install_health(ld_rest_server_t *srv) {
  return ld_rest_server_add_route(srv, "GET", "/health", get_health, NULL);
}

int ld_rest_server_set_health_source(ld_rest_server_t *srv, const ld_rest_health_source_t *src) {
  if (src != NULL && src->connection_status == NULL)
    return LD_ERR_INVALID_ARG;
  ld_rest_server_remove_route(srv, "GET", "/health");
  return ld_rest_server_add_route(srv, "GET", "/health", get_health, (void *)src);
}
