#include "rest/server.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "base/log.h"
#include "rest/channels_routes.h"
#include "rest/server_groups.h"
#include "rest/server_internal.h"

#define NOT_FOUND_TEXT "Bad request initiated. Invalid path or method used."

static const char *const HEALTH_NAMES[] = {"INITIALIZING", "SYNCHRONIZING", "READY",
                                           "NOT_READY",    "NOT_MOUNTED",   "SHUTTING_DOWN"};

const char *ld_rest_health_name(ld_rest_health_t h) {
  return (unsigned)h < sizeof HEALTH_NAMES / sizeof HEALTH_NAMES[0] ? HEALTH_NAMES[h] : "UNKNOWN";
}

void ld_rest_config_default(ld_rest_config_t *cfg) {
  memset(cfg, 0, sizeof *cfg);
  cfg->address = LD_REST_DEFAULT_ADDRESS;
  cfg->port = LD_REST_DEFAULT_PORT;
  cfg->relay_cache_capacity = LD_REST_CACHE_DEFAULT_CAPACITY;
  cfg->max_body = LD_HTTPD_DEFAULT_MAX_BODY;
  cfg->max_connections = LD_HTTPD_DEFAULT_MAX_CONNECTIONS;
}

/* ---- helpers for the endpoint files ---------------------------------------------------------- */

void ld_rest_respond_ok(ld_http_request_t *req) {
  ld_http_respond_text(req, 200, "OK");
}

void ld_rest_options_ok(ld_rest_server_t *srv, ld_http_request_t *req, const ld_route_match_t *m,
                        void *user_data) {
  (void)srv;
  (void)m;
  (void)user_data;
  ld_rest_respond_ok(req);
}

int ld_rest_read_json(ld_http_request_t *req, json_t **out) {
  char err[LD_REST_ERR_MAX];
  size_t len = 0;
  const uint8_t *body = ld_http_request_body(req, &len);
  int rc = ld_rest_json_parse(body, len, ld_http_request_header(req, "Content-Type"), out, err,
                              sizeof err);
  if (rc != 0)
    ld_http_respond_text(req, 400, err);
  return rc;
}

void ld_rest_respond_json_new(ld_http_request_t *req, json_t *json) {
  if (json == NULL) {
    ld_http_respond_text(req, 500, "An error occurred while building the json response");
    return;
  }
  ld_http_respond_json(req, 200, json);
  json_decref(json);
}

void ld_rest_respond_error(ld_http_request_t *req, unsigned status, const char *prefix,
                           const char *why) {
  char text[LD_REST_ERR_MAX + 128];
  snprintf(text, sizeof text, "%s%s", prefix, why != NULL ? why : "");
  ld_http_respond_text(req, status, text);
}

/* ---- routing --------------------------------------------------------------------------------- */

int ld_rest_server_add_route(ld_rest_server_t *srv, const char *method, const char *pattern,
                             ld_rest_handler_fn fn, void *user_data) {
  if (fn == NULL)
    return LD_ERR_INVALID_ARG;
  ld_rest_route_t *r = calloc(1, sizeof *r);
  if (r == NULL)
    return LD_ERR_NOMEM;
  r->fn = fn;
  r->user_data = user_data;
  int rc = ld_route_add(srv->routes, method, pattern, r);
  if (rc != 0) {
    free(r);
    return rc;
  }
  r->next = srv->route_list;
  srv->route_list = r;
  return 0;
}

int ld_rest_server_remove_route(ld_rest_server_t *srv, const char *method, const char *pattern) {
  void *handler = NULL;
  int rc = ld_route_remove(srv->routes, method, pattern, &handler);
  if (rc != 0)
    return rc;
  for (ld_rest_route_t **p = &srv->route_list; *p != NULL; p = &(*p)->next) {
    if (*p == handler) {
      *p = (*p)->next;
      free(handler);
      break;
    }
  }
  return 0;
}

int ld_rest_server_set_unavailable(ld_rest_server_t *srv, const char *group, const char *message) {
  ld_rest_unavailable_t *free_slot = NULL;
  if (group == NULL || strlen(group) >= sizeof srv->unavailable[0].group)
    return LD_ERR_INVALID_ARG;
  for (size_t i = 0; i < LD_REST_MAX_UNAVAILABLE; i++) {
    ld_rest_unavailable_t *u = &srv->unavailable[i];
    if (u->message != NULL && strcmp(u->group, group) == 0) {
      free(u->message);
      u->message = NULL;
    }
    if (u->message == NULL && free_slot == NULL)
      free_slot = u;
  }
  if (message == NULL)
    return 0;
  if (free_slot == NULL)
    return LD_ERR_LIMIT;
  if ((free_slot->message = strdup(message)) == NULL)
    return LD_ERR_NOMEM;
  snprintf(free_slot->group, sizeof free_slot->group, "%s", group);
  return 0;
}

/* The 404 text for the first path segment, or NULL. */
static const char *unavailable_text(const ld_rest_server_t *srv, const char *path) {
  const char *seg = path[0] == '/' ? path + 1 : path;
  size_t len = strcspn(seg, "/");
  for (size_t i = 0; i < LD_REST_MAX_UNAVAILABLE; i++) {
    const ld_rest_unavailable_t *u = &srv->unavailable[i];
    if (u->message != NULL && strlen(u->group) == len && strncmp(u->group, seg, len) == 0)
      return u->message;
  }
  return NULL;
}

static void on_request(ld_http_request_t *req, void *user_data) {
  ld_rest_server_t *srv = user_data;
  const char *path = ld_http_request_path(req);
  ld_route_match_t *m = malloc(sizeof *m);
  if (m == NULL) {
    ld_http_respond_text(req, 500, "Out of memory");
    return;
  }
  void *handler = NULL;
  int rc = ld_route_find(srv->routes, ld_http_request_method(req), path, &handler, m);
  LD_DEBUG("rest", "%s %s", ld_http_request_method(req), path);
  if (rc == 0) {
    const ld_rest_route_t *r = handler;
    r->fn(srv, req, m, r->user_data);
  } else if (rc == LD_ERR_BAD_ENCODING) {
    ld_http_respond_text(req, 400, "Invalid path parameter: bad percent-encoding");
  } else if (rc == LD_ERR_TOO_LARGE) {
    static const char body[] = LD_HTTPD_HEAD_TOO_LARGE_JSON; /* as for a head that long */
    ld_http_respond(req, 431, "application/json", body, sizeof body - 1);
  } else {
    const char *text = unavailable_text(srv, path);
    ld_http_respond_text(req, text != NULL ? 404 : 400, text != NULL ? text : NOT_FOUND_TEXT);
  }
  free(m);
}

/* ---- the relay cache ------------------------------------------------------------------------- */

void ld_rest_server_relay_message(ld_rest_server_t *srv, const char *pubsub_topic,
                                  const ld_waku_message_t *msg) {
  if (ld_rest_cache_add(srv->cache, pubsub_topic, msg) < 0)
    LD_WARN("rest", "Relay REST cache: out of memory");
}

static int fill_cache(ld_rest_server_t *srv, const ld_rest_config_t *cfg) {
  srv->cache = ld_rest_cache_new(cfg->relay_cache_capacity);
  if (srv->cache == NULL)
    return LD_ERR_NOMEM;
  int rc = 0;
  for (size_t i = 0; i < cfg->n_cached_pubsub_topics && rc == 0; i++)
    rc = ld_rest_cache_subscribe(srv->cache, LD_REST_PUBSUB_TOPIC, cfg->cached_pubsub_topics[i],
                                 strlen(cfg->cached_pubsub_topics[i]));
  for (size_t i = 0; i < cfg->n_cached_content_topics && rc == 0; i++)
    rc = ld_rest_cache_subscribe(srv->cache, LD_REST_CONTENT_TOPIC, cfg->cached_content_topics[i],
                                 strlen(cfg->cached_content_topics[i]));
  return rc;
}

/* ---- lifecycle ------------------------------------------------------------------------------- */

static bool relay_ops_complete(const ld_rest_relay_ops_t *ops) {
  return ops->subscribe != NULL && ops->unsubscribe != NULL && ops->subscribed != NULL &&
         ops->publish != NULL;
}

static int copy_context(ld_rest_server_t *srv, const ld_rest_context_t *ctx) {
  if (ctx->loop == NULL || ctx->sw == NULL || ctx->listen_addrs == NULL)
    return LD_ERR_INVALID_ARG;
  srv->ctx = *ctx;
  if (ctx->relay != NULL) {
    if (!relay_ops_complete(ctx->relay))
      return LD_ERR_INVALID_ARG;
    srv->relay = *ctx->relay;
    srv->ctx.relay = &srv->relay;
  }
  if (ctx->status != NULL)
    srv->status = *ctx->status;
  srv->ctx.status = NULL; /* srv->status holds the copy */
  snprintf(srv->version, sizeof srv->version, "%s",
           ctx->version != NULL ? ctx->version : "v" LD_VERSION);
  srv->ctx.version = srv->version;
  return 0;
}

static int install(ld_rest_server_t *srv) {
  int rc = ld_rest_install_health(srv);
  rc = rc ? rc : ld_rest_install_debug(srv);
  if (rc == 0 && srv->admin)
    rc = ld_rest_install_admin(srv);
  else if (rc == 0)
    rc = ld_rest_server_set_unavailable(
        srv, "admin",
        "/admin endpoints are not available. Please check your configuration: --rest-admin=true");
  if (rc == 0 && srv->ctx.relay != NULL) {
    rc = ld_rest_install_relay(srv);
    rc = rc ? rc : ld_rest_install_relay_auto(srv);
  } else if (rc == 0) {
    rc = ld_rest_server_set_unavailable(
        srv, "relay",
        "/relay endpoints are not available. Please check your configuration: --relay");
  }
  rc = rc ? rc : ld_rest_install_lightpush(srv);
  rc = rc ? rc : ld_rest_install_filter(srv);
  rc = rc ? rc : ld_rest_install_messaging_unavailable(srv);
  rc = rc ? rc : ld_rest_install_channels_unavailable(srv);
  rc = rc ? rc : ld_rest_install_status(srv);
  return rc ? rc : ld_rest_install_store(srv);
}

/* The configured cap, raised so that a message of the node's largest size fits base64-encoded. */
static size_t body_cap(const ld_rest_server_t *srv, const ld_rest_config_t *cfg) {
  size_t cap = cfg->max_body > 0 ? cfg->max_body : LD_HTTPD_DEFAULT_MAX_BODY;
  size_t msg = srv->ctx.max_msg_size > 0 ? srv->ctx.max_msg_size : LD_WAKU_DEFAULT_MAX_MSG_SIZE;
  size_t needed = (msg + 2) / 3 * 4 + LD_REST_BODY_OVERHEAD;
  return cap > needed ? cap : needed;
}

static int start_http(ld_rest_server_t *srv, const ld_rest_config_t *cfg) {
  ld_httpd_config_t hc;
  ld_httpd_config_default(&hc);
  hc.loop = srv->ctx.loop;
  hc.address = cfg->address != NULL ? cfg->address : LD_REST_DEFAULT_ADDRESS;
  hc.port = cfg->port;
  hc.max_body = body_cap(srv, cfg);
  hc.max_connections = cfg->max_connections;
  hc.allowed_origins = cfg->allowed_origins;
  hc.n_allowed_origins = cfg->n_allowed_origins;
  hc.log_topic = "rest";
  hc.handler = on_request;
  hc.user_data = srv;
  int rc = ld_httpd_new(&hc, &srv->httpd);
  if (rc == 0) {
    bool v6 = strchr(hc.address, ':') != NULL;
    LD_INFO("rest", "REST service started at http://%s%s%s:%u/", v6 ? "[" : "", hc.address,
            v6 ? "]" : "", ld_httpd_port(srv->httpd));
  }
  return rc;
}

static void free_server(ld_rest_server_t *srv) {
  ld_rest_status_free(srv);
  ld_rest_services_free(srv);
  for (ld_rest_route_t *r = srv->route_list, *next; r != NULL; r = next) {
    next = r->next;
    free(r);
  }
  for (size_t i = 0; i < LD_REST_MAX_UNAVAILABLE; i++)
    free(srv->unavailable[i].message);
  ld_route_table_free(srv->routes);
  ld_rest_cache_free(srv->cache);
  free(srv);
}

int ld_rest_server_new(const ld_rest_context_t *ctx, const ld_rest_config_t *cfg,
                       ld_rest_server_t **out) {
  if (ctx == NULL || cfg == NULL || out == NULL)
    return LD_ERR_INVALID_ARG;
  ld_rest_server_t *srv = calloc(1, sizeof *srv);
  if (srv == NULL)
    return LD_ERR_NOMEM;
  srv->admin = cfg->admin;
  srv->health = LD_REST_HEALTH_INITIALIZING;
  int rc = copy_context(srv, ctx);
  if (rc == 0)
    rc = (srv->routes = ld_route_table_new()) != NULL ? 0 : LD_ERR_NOMEM;
  rc = rc ? rc : install(srv);
  rc = rc ? rc : fill_cache(srv, cfg);
  rc = rc ? rc : start_http(srv, cfg);
  if (rc != 0) {
    free_server(srv);
    return rc;
  }
  *out = srv;
  return 0;
}

uint16_t ld_rest_server_port(const ld_rest_server_t *srv) {
  return ld_httpd_port(srv->httpd);
}

void ld_rest_server_set_health(ld_rest_server_t *srv, ld_rest_health_t health) {
  srv->health = health;
}

const ld_rest_context_t *ld_rest_server_context(const ld_rest_server_t *srv) {
  return &srv->ctx;
}

static void on_http_closed(void *user_data) {
  ld_rest_server_t *srv = user_data;
  void (*done)(void *) = srv->done;
  void *data = srv->done_data;
  free_server(srv);
  if (done != NULL)
    done(data);
}

void ld_rest_server_close(ld_rest_server_t *srv, void (*done)(void *user_data), void *user_data) {
  srv->done = done;
  srv->done_data = user_data;
  LD_INFO("rest", "REST service stopped");
  ld_httpd_close(srv->httpd, on_http_closed, srv);
}
