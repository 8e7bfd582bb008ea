/* Store v3 through the node:
 *   GET /store/v3/messages?peerAddr&includeData&pubsubTopic&contentTopics&startTime&endTime&
 *       hashes&cursor&ascending&pageSize
 * → 200 {requestId, statusCode, statusDesc, messages, paginationCursor?} (see store_query.h for
 * the parameters and service_json.h for the answer). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "base/log.h"
#include "rest/pending.h"
#include "rest/service_json.h"
#include "rest/store_query.h"

#define NO_PEER_TEXT "No suitable service peer & no discovery method"
#define N_PARAMS 10

/* In the order of the members of ld_rest_store_params_t. */
static const char *const PARAM_NAMES[N_PARAMS] = {
    "peerAddr", "includeData", "pubsubTopic", "contentTopics", "startTime",
    "endTime",  "hashes",      "cursor",      "ascending",     "pageSize",
};

/* ---- the query ------------------------------------------------------------------------------- */

static void on_result(void *done_ud, const ld_rest_store_result_t *res) {
  ld_rest_pending_t *p = done_ud;
  ld_http_request_t *req = ld_rest_pending_take(p);
  if (req == NULL) {
    ld_rest_pending_finish(p);
    return;
  }
  if (res == NULL) {
    ld_http_respond_text(req, 500, "Internal error");
  } else if (res->error != 0) {
    LD_WARN("rest", "Store query failed: %s", ld_strerror(res->error));
    ld_http_respond_text(req, 500,
                         res->status_desc != NULL ? res->status_desc : ld_strerror(res->error));
  } else if (res->status_code == LD_REST_STORE_TOO_MANY_REQUESTS) {
    LD_INFO("rest", "Store: request rate limit reached on peer");
    ld_http_respond_text(req, 429, "Request rate limit reached");
  } else {
    json_t *j = ld_rest_store_response_json(res);
    if (j == NULL)
      ld_http_respond_text(req, 500, "Error building the json response");
    else
      ld_http_respond_json(req, 200, j);
    json_decref(j);
  }
  ld_rest_pending_finish(p);
}

static void on_timeout(ld_rest_pending_t *p, ld_http_request_t *req) {
  (void)p;
  LD_ERROR("rest", "No history response received (timeout)");
  ld_http_respond_text(req, 500, "No history response received (timeout)");
}

static void start_query(ld_rest_server_t *srv, ld_http_request_t *req,
                        const ld_rest_store_query_t *q) {
  ld_rest_pending_t *p = ld_rest_pending_new(srv, req, sizeof *p, on_timeout);
  if (p == NULL) {
    ld_http_respond_text(req, 500, "Out of memory");
    return;
  }
  const ld_rest_store_ops_t *ops = srv->ctx.store;
  int rc = ops->query(ops->user_data, q, on_result, p);
  if (rc == 0)
    return;
  ld_http_request_t *r = ld_rest_pending_take(p);
  if (r != NULL && rc == LD_ERR_NOT_FOUND) {
    ld_http_respond_text(r, 412, NO_PEER_TEXT);
  } else if (r != NULL) {
    char text[128];
    snprintf(text, sizeof text, "Error occurred in queryFut.read() [%s]", ld_strerror(rc));
    ld_http_respond_text(r, 500, text);
  }
  ld_rest_pending_finish(p);
}

/* ---- the handler ----------------------------------------------------------------------------- */

static void free_values(char *values[N_PARAMS]) {
  for (size_t i = 0; i < N_PARAMS; i++)
    free(values[i]);
}

/* Copies the decoded query arguments; LD_ERR_NOMEM. */
static int read_values(ld_http_request_t *req, char *values[N_PARAMS]) {
  char *buf = malloc(LD_REST_STORE_MAX_PARAM + 1);
  int rc = buf != NULL ? 0 : LD_ERR_NOMEM;
  for (size_t i = 0; i < N_PARAMS && rc == 0; i++) {
    const char *v = ld_http_request_query(req, PARAM_NAMES[i], buf, LD_REST_STORE_MAX_PARAM + 1);
    if (v != NULL && (values[i] = strdup(v)) == NULL)
      rc = LD_ERR_NOMEM;
  }
  free(buf);
  return rc;
}

static void params_from(char *const values[N_PARAMS], ld_rest_store_params_t *p) {
  *p = (ld_rest_store_params_t){
      .peer_addr = values[0],
      .include_data = values[1],
      .pubsub_topic = values[2],
      .content_topics = values[3],
      .start_time = values[4],
      .end_time = values[5],
      .hashes = values[6],
      .cursor = values[7],
      .ascending = values[8],
      .page_size = values[9],
  };
}

static void get_messages(ld_rest_server_t *srv, ld_http_request_t *req, const ld_route_match_t *m,
                         void *user_data) {
  (void)m;
  (void)user_data;
  char *values[N_PARAMS] = {0};
  if (read_values(req, values) != 0) {
    free_values(values);
    ld_http_respond_text(req, 500, "Out of memory");
    return;
  }
  ld_rest_store_params_t params;
  params_from(values, &params);
  ld_rest_store_request_t *sr = malloc(sizeof *sr);
  char err[LD_REST_ERR_MAX];
  int rc = sr != NULL ? ld_rest_store_query_parse(&params, sr, err, sizeof err) : LD_ERR_NOMEM;
  free_values(values);
  if (rc == LD_ERR_NOMEM) {
    ld_http_respond_text(req, 500, "Out of memory");
  } else if (rc != 0) {
    LD_DEBUG("rest", "GET /store/v3/messages: %s", err);
    ld_http_respond_text(req, 400, err);
  } else {
    start_query(srv, req, &sr->query);
    ld_rest_store_request_clear(sr);
  }
  free(sr);
}

int ld_rest_install_store(ld_rest_server_t *srv) {
  if (srv->ctx.store == NULL)
    return ld_rest_server_set_unavailable(srv, "store", "/store endpoints are not available.");
  if (srv->ctx.store->query == NULL)
    return LD_ERR_INVALID_ARG;
  srv->store = *srv->ctx.store;
  srv->ctx.store = &srv->store;
  return ld_rest_server_add_route(srv, "GET", "/store/v3/messages", get_messages, NULL);
}
