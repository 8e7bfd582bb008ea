/* GET /debug/v1/info, /info, /debug/v1/version, /version. */
#include <stdlib.h>

#include "base/error.h"
#include "rest/server_internal.h"

static json_t *listen_addresses(const ld_rest_context_t *ctx) {
  json_t *list = json_array();
  ld_multiaddr_t *addrs = calloc(LD_REST_MAX_LISTEN_ADDRS, sizeof *addrs);
  if (list == NULL || addrs == NULL) {
    json_decref(list);
    free(addrs);
    return NULL;
  }
  size_t n = ctx->listen_addrs(ctx->user_data, addrs, LD_REST_MAX_LISTEN_ADDRS);
  for (size_t i = 0; i < n && i < LD_REST_MAX_LISTEN_ADDRS; i++) {
    char text[LD_MULTIADDR_TEXT_MAX];
    if (ld_multiaddr_to_text(&addrs[i], text, sizeof text) > 0)
      json_array_append_new(list, json_string(text));
  }
  free(addrs);
  return list;
}

static void get_info(ld_rest_server_t *srv, ld_http_request_t *req, const ld_route_match_t *m,
                     void *user_data) {
  (void)m;
  (void)user_data;
  const ld_rest_context_t *ctx = &srv->ctx;
  json_t *info = json_object();
  json_t *addrs = listen_addresses(ctx);
  if (info == NULL || addrs == NULL || json_object_set_new(info, "listenAddresses", addrs) != 0) {
    json_decref(info);
    ld_rest_respond_json_new(req, NULL);
    return;
  }
  char enr[LD_REST_MAX_ENR];
  if (ctx->enr_uri != NULL && ctx->enr_uri(ctx->user_data, enr, sizeof enr) > 0)
    json_object_set_new(info, "enrUri", json_string(enr));
  if (ctx->reliability_mode != NULL)
    json_object_set_new(info, "reliabilityMode", json_string(ctx->reliability_mode));
  ld_rest_respond_json_new(req, info);
}

static void get_version(ld_rest_server_t *srv, ld_http_request_t *req, const ld_route_match_t *m,
                        void *user_data) {
  (void)m;
  (void)user_data;
  ld_http_respond_text(req, 200, srv->version);
}

int ld_rest_install_debug(ld_rest_server_t *srv) {
  int rc = ld_rest_server_add_route(srv, "GET", "/debug/v1/info", get_info, NULL);
  rc = rc ? rc : ld_rest_server_add_route(srv, "GET", "/info", get_info, NULL);
  rc = rc ? rc : ld_rest_server_add_route(srv, "GET", "/debug/v1/version", get_version, NULL);
  return rc ? rc : ld_rest_server_add_route(srv, "GET", "/version", get_version, NULL);
}
