#include "metrics/server.h"

#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "base/log.h"
#include "rest/httpd.h"

struct ld_metrics_server {
  ld_httpd_t *httpd;
  ld_metrics_t *registry;
  void (*done)(void *);
  void *done_data;
};

static void on_request(ld_http_request_t *req, void *user_data) {
  ld_metrics_server_t *srv = user_data;
  const char *path = ld_http_request_path(req);
  if (strcmp(path, "/health") == 0) {
    ld_http_respond_text(req, 200, "OK");
    return;
  }
  if (strcmp(path, "/metrics") != 0) {
    ld_http_respond_text(req, 404, "Try /metrics");
    return;
  }
  ld_buf_t out;
  ld_buf_init(&out);
  if (ld_metrics_expose(srv->registry, &out) != 0)
    ld_http_respond_text(req, 500, "Failed to collect metrics");
  else
    ld_http_respond(req, 200, LD_METRICS_CONTENT_TYPE, out.data, out.len);
  ld_buf_clear(&out);
}

int ld_metrics_server_new(const ld_metrics_server_config_t *cfg, ld_metrics_server_t **out) {
  if (cfg == NULL || cfg->registry == NULL || out == NULL)
    return LD_ERR_INVALID_ARG;
  ld_metrics_server_t *srv = calloc(1, sizeof *srv);
  if (srv == NULL)
    return LD_ERR_NOMEM;
  srv->registry = cfg->registry;
  ld_httpd_config_t hc;
  ld_httpd_config_default(&hc);
  hc.loop = cfg->loop;
  hc.address = cfg->address != NULL ? cfg->address : LD_METRICS_DEFAULT_ADDRESS;
  hc.port = cfg->port;
  hc.max_body = 4096;
  hc.max_connections = LD_METRICS_MAX_CONNECTIONS;
  hc.log_topic = "metrics";
  hc.handler = on_request;
  hc.user_data = srv;
  int rc = ld_httpd_new(&hc, &srv->httpd);
  if (rc != 0) {
    free(srv);
    return rc;
  }
  LD_INFO("metrics", "Metrics HTTP server started at http://%s%s%s:%u/metrics",
          strchr(hc.address, ':') ? "[" : "", hc.address, strchr(hc.address, ':') ? "]" : "",
          ld_httpd_port(srv->httpd));
  *out = srv;
  return 0;
}

uint16_t ld_metrics_server_port(const ld_metrics_server_t *srv) {
  return ld_httpd_port(srv->httpd);
}

static void on_closed(void *user_data) {
  ld_metrics_server_t *srv = user_data;
  void (*done)(void *) = srv->done;
  void *data = srv->done_data;
  free(srv);
  if (done != NULL)
    done(data);
}

void ld_metrics_server_close(ld_metrics_server_t *srv, void (*done)(void *user_data),
                             void *user_data) {
  srv->done = done;
  srv->done_data = user_data;
  ld_httpd_close(srv->httpd, on_closed, srv);
}
