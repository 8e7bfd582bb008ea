/* The metrics HTTP server: the registry's exposition on its own address and port, as nwaku's
 * --metrics-server, --metrics-server-address and --metrics-server-port. Any method on
 * `/metrics` gets the exposition (Content-Type LD_METRICS_CONTENT_TYPE), `/health` gets "OK",
 * any other path 404 "Try /metrics".
 *
 * The server runs on the node's libuv loop (see rest/httpd.h): scrapes run the registry's
 * collectors on the loop thread, so they read node state safely. */
#ifndef LD_METRICS_SERVER_H
#define LD_METRICS_SERVER_H

#include <stdint.h>
#include <uv.h>

#include "metrics/metrics.h"

#define LD_METRICS_DEFAULT_ADDRESS "127.0.0.1"
#define LD_METRICS_DEFAULT_PORT 8008
/* Concurrent connections (scrapers and /health pollers), as many as the REST server takes: nwaku's
 * metrics server (nim-metrics on chronos' HttpServer) has no cap of its own either. Over it a
 * client is answered 503 at once (rest/httpd.h). */
#define LD_METRICS_MAX_CONNECTIONS 1024

typedef struct ld_metrics_server ld_metrics_server_t;

typedef struct ld_metrics_server_config {
  uv_loop_t *loop;
  ld_metrics_t *registry; /* borrowed; must outlive the server */
  const char *address;    /* IP literal; NULL: LD_METRICS_DEFAULT_ADDRESS */
  uint16_t port;          /* 0: any free port */
} ld_metrics_server_config_t;

/* Starts serving. Loop thread only. Errors as ld_httpd_new (LD_ERR_ADDR_IN_USE, LD_ERR_IO,
 * LD_ERR_INVALID_ARG, LD_ERR_NOMEM). Logs the URL it serves at INFO. */
int ld_metrics_server_new(const ld_metrics_server_config_t *cfg, ld_metrics_server_t **out);

uint16_t ld_metrics_server_port(const ld_metrics_server_t *srv);

/* Closes the server; `done` (may be NULL) is called from the loop after it is freed. */
void ld_metrics_server_close(ld_metrics_server_t *srv, void (*done)(void *user_data),
                             void *user_data);

#endif
