/* Internals shared by the REST server and its endpoint files. Not for other modules. */
#ifndef LD_REST_SERVER_INTERNAL_H
#define LD_REST_SERVER_INTERNAL_H

#include <jansson.h>

#include "rest/json.h"
#include "rest/message_cache.h"
#include "rest/server.h"

typedef struct ld_rest_route {
  ld_rest_handler_fn fn;
  void *user_data;
  struct ld_rest_route *next;
} ld_rest_route_t;

typedef struct ld_rest_unavailable {
  char group[32];
  char *message;
} ld_rest_unavailable_t;

struct ld_rest_server {
  ld_rest_context_t ctx;
  ld_rest_relay_ops_t relay; /* valid when ctx.relay != NULL (then ctx.relay points here) */
  char version[128];
  bool admin;
  ld_httpd_t *httpd;
  ld_route_table_t *routes;
  ld_rest_route_t *route_list;
  ld_rest_cache_t *cache;
  ld_rest_health_t health;
  ld_rest_unavailable_t unavailable[LD_REST_MAX_UNAVAILABLE];
  void (*done)(void *);
  void *done_data;
  /* service protocols (lightpush.c, filter.c, store.c) */
  ld_rest_lightpush_ops_t lightpush; /* valid when ctx.lightpush != NULL (then it points here) */
  ld_rest_filter_ops_t filter;       /* likewise */
  ld_rest_store_ops_t store;         /* likewise */
  ld_rest_cache_t *filter_cache;     /* GET /filter/v2/messages; NULL without filter ops */
  struct ld_rest_pending *pending;   /* requests waiting for a service operation (pending.h) */
  /* the status page (status.c) */
  ld_rest_status_ops_t status;        /* zeros when ctx.status is NULL */
  struct ld_rest_status_rates *rates; /* per-topic rate history and its timer */
  uint64_t started_ms;                /* when the server started (ld_now_ms) */
};

/* The endpoint groups. Each returns 0 or the error of ld_rest_server_add_route. */
int ld_rest_install_debug(ld_rest_server_t *srv);
int ld_rest_install_health(ld_rest_server_t *srv);
int ld_rest_install_admin(ld_rest_server_t *srv);
int ld_rest_install_relay(ld_rest_server_t *srv);
int ld_rest_install_relay_auto(ld_rest_server_t *srv);
/* The service groups: each installs its routes when its ops are set (LD_ERR_INVALID_ARG when
 * they are incomplete) and nwaku's 404 text for its group otherwise. */
int ld_rest_install_lightpush(ld_rest_server_t *srv);
int ld_rest_install_filter(ld_rest_server_t *srv);
int ld_rest_install_store(ld_rest_server_t *srv);

/* The status page, its assets and its summary (rest/status.h); starts the rate sampling. */
int ld_rest_install_status(ld_rest_server_t *srv);
/* Stops the sampling and frees its history. */
void ld_rest_status_free(ld_rest_server_t *srv);

/* A peer as /admin/v1/peers lists it (admin.c): `p` from the peer store and `c` its live
 * connection, each NULL when absent. A new reference, or NULL when out of memory. */
json_t *ld_rest_peer_json(const ld_rest_context_t *ctx, const ld_peerid_t *id,
                          const ld_peerstore_peer_t *p, const ld_conn_t *c);

/* Releases what the service groups hold (the filter cache; requests still waiting for the node
 * are answered 503 and detached, see pending.h). Called when the server is freed. */
void ld_rest_services_free(ld_rest_server_t *srv);

/* 200 "OK" as text/plain. */
void ld_rest_respond_ok(ld_http_request_t *req);

/* 200 "OK" for OPTIONS routes. */
void ld_rest_options_ok(ld_rest_server_t *srv, ld_http_request_t *req, const ld_route_match_t *m,
                        void *user_data);

/* Parses the request body as JSON (rest/json.h). On failure answers 400 with the reason and
 * returns the error; on success stores a new reference in *out. */
int ld_rest_read_json(ld_http_request_t *req, json_t **out);

/* Answers `json` (a new reference, consumed) with status 200, or 500 when it is NULL. */
void ld_rest_respond_json_new(ld_http_request_t *req, json_t *json);

/* Answers `status` with "<prefix><why>" as text/plain. */
void ld_rest_respond_error(ld_http_request_t *req, unsigned status, const char *prefix,
                           const char *why);

#endif
