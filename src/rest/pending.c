#include "rest/pending.h"

#include <stdlib.h>

enum { TIMER_ACTIVE, TIMER_CLOSING, TIMER_CLOSED };

static void unlink_pending(ld_rest_pending_t *p) {
  if (p->srv == NULL)
    return;
  if (p->prev != NULL)
    p->prev->next = p->next;
  else
    p->srv->pending = p->next;
  if (p->next != NULL)
    p->next->prev = p->prev;
  p->prev = p->next = NULL;
  p->srv = NULL;
}

static void release(ld_rest_pending_t *p) {
  unlink_pending(p);
  if (p->cleanup != NULL)
    p->cleanup(p);
  free(p);
}

static void on_closed(uv_handle_t *h) {
  ld_rest_pending_t *p = h->data;
  p->timer_state = TIMER_CLOSED;
  if (p->finished)
    release(p);
}

static void close_timer(ld_rest_pending_t *p) {
  if (p->timer_state != TIMER_ACTIVE)
    return;
  p->timer_state = TIMER_CLOSING;
  uv_close((uv_handle_t *)&p->timer, on_closed);
}

static void on_timer(uv_timer_t *t) {
  ld_rest_pending_t *p = t->data;
  ld_http_request_t *req = ld_rest_pending_take(p);
  if (req != NULL)
    p->on_timeout(p, req);
  close_timer(p);
}

void *ld_rest_pending_new(ld_rest_server_t *srv, ld_http_request_t *req, size_t size,
                          ld_rest_pending_fn on_timeout) {
  uint32_t ms =
      srv->ctx.service_timeout_ms > 0 ? srv->ctx.service_timeout_ms : LD_REST_SERVICE_TIMEOUT_MS;
  return ld_rest_pending_new_timed(srv, req, size, on_timeout, ms);
}

void *ld_rest_pending_new_timed(ld_rest_server_t *srv, ld_http_request_t *req, size_t size,
                                ld_rest_pending_fn on_timeout, uint32_t ms) {
  if (size < sizeof(ld_rest_pending_t))
    return NULL;
  ld_rest_pending_t *p = calloc(1, size);
  if (p == NULL)
    return NULL;
  p->srv = srv;
  p->req = req;
  p->on_timeout = on_timeout;
  uv_timer_init(srv->ctx.loop, &p->timer);
  p->timer.data = p;
  uv_timer_start(&p->timer, on_timer, ms, 0);
  p->next = srv->pending;
  if (p->next != NULL)
    p->next->prev = p;
  srv->pending = p;
  return p;
}

ld_http_request_t *ld_rest_pending_take(ld_rest_pending_t *p) {
  ld_http_request_t *req = p->req;
  p->req = NULL;
  return req;
}

void ld_rest_pending_finish(ld_rest_pending_t *p) {
  p->finished = true;
  ld_http_request_t *req = ld_rest_pending_take(p);
  if (req != NULL)
    ld_http_respond_text(req, 500, "Internal error");
  if (p->timer_state == TIMER_ACTIVE)
    close_timer(p);
  else if (p->timer_state == TIMER_CLOSED)
    release(p);
}

void ld_rest_pending_detach_all(ld_rest_server_t *srv) {
  ld_rest_pending_t *p = srv->pending;
  while (p != NULL) {
    ld_rest_pending_t *next = p->next;
    ld_http_request_t *req = ld_rest_pending_take(p);
    if (req != NULL)
      ld_http_respond_text(req, 503, "Server shutting down");
    p->prev = p->next = NULL;
    p->srv = NULL;
    close_timer(p);
    p = next;
  }
  srv->pending = NULL;
}

void ld_rest_services_free(ld_rest_server_t *srv) {
  ld_rest_pending_detach_all(srv);
  ld_rest_cache_free(srv->filter_cache);
  srv->filter_cache = NULL;
}
