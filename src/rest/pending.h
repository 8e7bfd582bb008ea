/* A REST request waiting for an asynchronous service operation of the node (lightpush, filter,
 * store), with nwaku's timeout.
 *
 * Life of one: the handler creates it (which starts the timeout), calls the node's operation
 * with the pending request as the completion's user data, and
 * - when the operation fails at once, answers and calls ld_rest_pending_finish;
 * - otherwise the completion takes the request (ld_rest_pending_take: NULL when the timeout or
 *   the server's end answered it already), answers it, and calls ld_rest_pending_finish.
 * The timeout takes the request and answers it through `on_timeout`; the memory stays until the
 * completion has run, because the node still holds the pointer. When the server is freed the
 * requests still waiting are answered 503 and `srv` becomes NULL; the completion then only
 * finishes.
 *
 * Loop thread only. */
#ifndef LD_REST_PENDING_H
#define LD_REST_PENDING_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <uv.h>

#include "rest/server_internal.h"

typedef struct ld_rest_pending ld_rest_pending_t;

/* Answers `req` when the node did not complete in time. */
typedef void (*ld_rest_pending_fn)(ld_rest_pending_t *p, ld_http_request_t *req);

struct ld_rest_pending {
  ld_rest_server_t *srv;  /* NULL once the server is freed */
  ld_http_request_t *req; /* NULL once taken */
  ld_rest_pending_fn on_timeout;
  void (*cleanup)(ld_rest_pending_t *p); /* frees the owner's fields; may be NULL */
  uv_timer_t timer;
  int timer_state;
  bool finished;
  ld_rest_pending_t *prev, *next;
};

/* Allocates `size` zeroed bytes whose start is an ld_rest_pending_t (embed it as the first
 * member), links it to the server and starts the timer (ctx.service_timeout_ms). NULL when out
 * of memory (nothing answered). */
void *ld_rest_pending_new(ld_rest_server_t *srv, ld_http_request_t *req, size_t size,
                          ld_rest_pending_fn on_timeout);

/* ld_rest_pending_new with a timeout of `timeout_ms` instead of the service timeout. */
void *ld_rest_pending_new_timed(ld_rest_server_t *srv, ld_http_request_t *req, size_t size,
                                ld_rest_pending_fn on_timeout, uint32_t timeout_ms);

/* Hands the request over to the caller, who answers it; NULL when it was answered already. */
ld_http_request_t *ld_rest_pending_take(ld_rest_pending_t *p);

/* The operation is over: the memory goes (after `cleanup`) once the timer is closed. An
 * unanswered request is answered 500 first. `p` must not be used afterwards. */
void ld_rest_pending_finish(ld_rest_pending_t *p);

/* The server is going: answers the waiting requests with 503, closes their timers and detaches
 * them (srv becomes NULL). */
void ld_rest_pending_detach_all(ld_rest_server_t *srv);

#endif
