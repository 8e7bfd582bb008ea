/* Lightpush through the node's lightpush client:
 *   POST /lightpush/v3/message  {pubsubTopic?, message} → 200 {"relayPeerCount": n}, or the
 *                               lightpush status as the HTTP status with {"statusDesc": …}
 *   POST /lightpush/v1/message  the legacy endpoint: 200 "OK" or a text reason */
#include <stdio.h>
#include <string.h>

#include "base/clock.h"
#include "base/error.h"
#include "base/log.h"
#include "rest/pending.h"
#include "rest/service_json.h"

#define NO_PEER_TEXT "No suitable service peer & no discovery method"
#define TIMEOUT_TEXT "Push request timed out"

typedef struct push_pending {
  ld_rest_pending_t base;
  bool legacy;
} push_pending_t;

/* ---- answers --------------------------------------------------------------------------------- */

static void respond_v3(ld_http_request_t *req, uint32_t code, const char *desc, uint32_t peers) {
  json_t *j = ld_rest_push_response_json(code, desc, peers);
  if (j == NULL) {
    ld_http_respond_text(req, 500, "An error occurred while building the json response");
    return;
  }
  ld_http_respond_json(req, ld_rest_push_http_status(code), j);
  json_decref(j);
}

static void respond_legacy(ld_http_request_t *req, uint32_t code, const char *desc) {
  if (code == LD_REST_LIGHTPUSH_SUCCESS)
    ld_rest_respond_ok(req);
  else if (code == LD_REST_LIGHTPUSH_TOO_MANY_REQUESTS)
    ld_http_respond_text(req, 429, "Request rate limmit reached"); /* nwaku's text */
  else
    ld_rest_respond_error(req, 503, "Failed to request a message push: ", desc);
}

/* An answer nwaku gives before any push (no peer, timeout, internal error). */
static void respond_local(bool legacy, ld_http_request_t *req, unsigned status, const char *text) {
  if (legacy)
    ld_http_respond_text(req, status, text);
  else
    respond_v3(req, status, text, 0);
}

/* ---- the push -------------------------------------------------------------------------------- */

static void on_pushed(void *done_ud, uint32_t code, const char *desc, uint32_t peers) {
  push_pending_t *p = done_ud;
  ld_http_request_t *req = ld_rest_pending_take(&p->base);
  if (req != NULL) {
    if (code == LD_REST_LIGHTPUSH_SUCCESS)
      LD_INFO("rest", "Lightpush: message relayed to %u peers", peers);
    else
      LD_INFO("rest", "Lightpush failed: %u %s", code, desc != NULL ? desc : "");
    if (p->legacy)
      respond_legacy(req, code, desc);
    else
      respond_v3(req, code, desc, peers);
  }
  ld_rest_pending_finish(&p->base);
}

static void on_timeout(ld_rest_pending_t *base, ld_http_request_t *req) {
  LD_ERROR("rest", "Failed to request a message push due to timeout!");
  respond_local(((push_pending_t *)base)->legacy, req, 503, TIMEOUT_TEXT);
}

static void start_push(ld_rest_server_t *srv, ld_http_request_t *req, bool legacy,
                       const ld_rest_push_request_t *pr) {
  push_pending_t *p = ld_rest_pending_new(srv, req, sizeof *p, on_timeout);
  if (p == NULL) {
    respond_local(legacy, req, 500, "Out of memory");
    return;
  }
  p->legacy = legacy;
  const ld_rest_lightpush_ops_t *ops = srv->ctx.lightpush;
  int rc = legacy && ops->push_legacy != NULL
               ? ops->push_legacy(ops->user_data, pr->pubsub_topic, &pr->msg, on_pushed, p)
               : ops->push(ops->user_data, pr->pubsub_topic, &pr->msg, on_pushed, p);
  if (rc == 0)
    return;
  ld_http_request_t *r = ld_rest_pending_take(&p->base);
  if (r != NULL && rc == LD_ERR_NOT_FOUND)
    respond_local(legacy, r, 503, NO_PEER_TEXT);
  else if (r != NULL)
    respond_local(legacy, r, 500, ld_strerror(rc));
  ld_rest_pending_finish(&p->base);
}

/* ---- handlers -------------------------------------------------------------------------------- */

static void post_v3(ld_rest_server_t *srv, ld_http_request_t *req, const ld_route_match_t *m,
                    void *user_data) {
  (void)m;
  (void)user_data;
  char err[LD_REST_ERR_MAX];
  size_t len = 0;
  const uint8_t *data = ld_http_request_body(req, &len);
  json_t *body = NULL;
  ld_rest_push_request_t pr;
  int rc = ld_rest_json_parse(data, len, ld_http_request_header(req, "Content-Type"), &body, err,
                              sizeof err);
  if (rc == 0)
    rc = ld_rest_push_request_parse(body, (int64_t)ld_wall_ns(), &pr, err, sizeof err);
  if (rc == LD_ERR_NOMEM) {
    respond_v3(req, 500, "Out of memory", 0);
  } else if (rc != 0) {
    char text[LD_REST_ERR_MAX + 32];
    snprintf(text, sizeof text, "%s%s",
             rc == LD_ERR_BAD_ENCODING ? "Invalid message! " : "Invalid push request! ", err);
    respond_v3(req, LD_REST_LIGHTPUSH_BAD_REQUEST, text, 0);
  } else {
    start_push(srv, req, false, &pr);
    ld_rest_push_request_clear(&pr);
  }
  json_decref(body);
}

static void post_v1(ld_rest_server_t *srv, ld_http_request_t *req, const ld_route_match_t *m,
                    void *user_data) {
  (void)m;
  (void)user_data;
  char err[LD_REST_ERR_MAX];
  json_t *body = NULL;
  if (ld_rest_read_json(req, &body) != 0)
    return;
  ld_rest_push_request_t pr;
  int rc = ld_rest_push_request_parse(body, (int64_t)ld_wall_ns(), &pr, err, sizeof err);
  if (rc == LD_ERR_NOMEM)
    ld_http_respond_text(req, 500, "Out of memory");
  else if (rc == LD_ERR_BAD_ENCODING)
    ld_rest_respond_error(req, 400, "Invalid message: ", err);
  else if (rc != 0)
    ld_rest_respond_error(req, 400, "Invalid content body, could not decode: ", err);
  if (rc == 0) {
    start_push(srv, req, true, &pr);
    ld_rest_push_request_clear(&pr);
  }
  json_decref(body);
}

int ld_rest_install_lightpush(ld_rest_server_t *srv) {
  if (srv->ctx.lightpush == NULL)
    return ld_rest_server_set_unavailable(srv, "lightpush",
                                          "/lightpush endpoints are not available.");
  if (srv->ctx.lightpush->push == NULL)
    return LD_ERR_INVALID_ARG;
  srv->lightpush = *srv->ctx.lightpush;
  srv->ctx.lightpush = &srv->lightpush;
  int rc = ld_rest_server_add_route(srv, "POST", "/lightpush/v3/message", post_v3, NULL);
  return rc ? rc : ld_rest_server_add_route(srv, "POST", "/lightpush/v1/message", post_v1, NULL);
}
