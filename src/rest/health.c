/* GET /health: nwaku's HealthReport {"nodeHealth": …, "protocolsHealth": [{<name>: <status>,
 * "desc"?: …}, …]} with nwaku's protocol list and order, plus logos-delivery's
 * "connectionStatus" after nodeHealth while a messaging client is attached (rest/health.h). The
 * route's user data is the ld_rest_health_source_t, or NULL. */
#include "rest/health.h"

#include "base/error.h"
#include "rest/messaging_json.h"
#include "rest/server_internal.h"

/* nwaku's getNodeHealthReport order. */
static const char *const PROTOCOLS[] = {
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

static json_t *protocol_health(const char *name, ld_rest_health_t h, const char *desc) {
  json_t *o = json_object();
  if (o == NULL)
    return NULL;
  json_object_set_new(o, name, json_string(ld_rest_health_name(h)));
  if (desc != NULL)
    json_object_set_new(o, "desc", json_string(desc));
  return o;
}

static json_t *relay_health(const ld_rest_server_t *srv) {
  const ld_rest_relay_ops_t *relay = srv->ctx.relay;
  if (relay == NULL)
    return protocol_health("Relay", LD_REST_HEALTH_NOT_MOUNTED, NULL);
  if (relay->peer_count != NULL && relay->peer_count(relay->user_data) == 0)
    return protocol_health("Relay", LD_REST_HEALTH_NOT_READY, "No connected peers");
  return protocol_health("Relay", LD_REST_HEALTH_READY, NULL);
}

static json_t *protocols_health(const ld_rest_server_t *srv) {
  json_t *list = json_array();
  if (list == NULL)
    return NULL;
  int rc = json_array_append_new(list, relay_health(srv));
  for (size_t i = 1; i < sizeof PROTOCOLS / sizeof PROTOCOLS[0]; i++)
    rc |= json_array_append_new(list,
                                protocol_health(PROTOCOLS[i], LD_REST_HEALTH_NOT_MOUNTED, NULL));
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
  json_t *report =
      ld_rest_health_report_json(ld_rest_health_name(srv->health), status, protocols_health(srv));
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
