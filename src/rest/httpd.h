/* An HTTP/1.1 server on libmicrohttpd driven by a libuv loop, shared by the REST API and the
 * metrics endpoint.
 *
 * Threading model. libmicrohttpd runs in its "external" mode with epoll (MHD_USE_EPOLL without
 * an internal thread): its single epoll descriptor is watched by a uv_poll_t and its timeouts by
 * a uv_timer_t, and MHD_run() is called from those callbacks. libmicrohttpd therefore never
 * starts a thread, and every handler, every response and every node structure a handler touches
 * stays on the loop thread (ARCHITECTURE principle 2). A handler that needs to wait (a dial)
 * returns without answering; the connection is suspended (MHD_suspend_connection) and resumed
 * when ld_http_respond is called later from the same loop.
 *
 * Connections. The server owns its listening socket (libmicrohttpd is started without one) and
 * watches it at all times. An accepted connection goes to libmicrohttpd while fewer
 * than `max_connections` are open (idle keep-alive, suspended and half-received ones count);
 * beyond that the client gets "503 Service Unavailable" (Retry-After: 1, Connection: close) and is
 * closed at once, so nobody waits in the accept queue and a slot is usable again as soon as its
 * client has gone. A connection without a byte in either direction for `timeout_s` seconds is
 * closed, a request head sent only in part included. Out of file descriptors, accepting pauses
 * for 100 ms at a time (the clients stay queued) instead of spinning.
 *
 * Requests. Each request reaches the handler once, with its whole body (at most `max_body`
 * bytes: a larger Content-Length is answered 413 before the body is read, and a chunked body
 * that grows beyond the cap closes the connection). A head over LD_HTTPD_MAX_HEAD bytes is
 * answered 431 (LD_HTTPD_HEAD_TOO_LARGE_JSON) and the connection closed, as nwaku does. The request
 * path is handed over raw, with its percent-encoding intact, so that routes can split it into
 * segments before decoding.
 *
 * CORS follows nwaku's --rest-allow-origin: with no allowed origin configured no CORS header is
 * ever added. Otherwise a request with one Origin header that matches gets
 * `Access-Control-Allow-Origin` (the origin, with `Vary: Origin`; or `*` when the only pattern is
 * "*") and `Access-Control-Allow-Headers: Content-Type`; one that does not match is answered
 * 403 "Origin not allowed"; several Origin headers are answered 400. Patterns are
 * case-insensitive, may start with http:// or https:// (otherwise both match), `*` matches any
 * run of characters and `?` at most one. */
#ifndef LD_REST_HTTPD_H
#define LD_REST_HTTPD_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <uv.h>

#define LD_HTTPD_DEFAULT_MAX_BODY (1024u * 1024u) /* request body bytes */
/* Open connections, suspended ones included. nwaku's REST server (nim-presto on chronos'
 * HttpServer, maxConnections -1) has no cap of its own and takes connections until the process
 * runs out of descriptors: about a thousand at the usual 1024-file limit. We take as many. Memory:
 * a connection that has served a request keeps its header_memory resident (libmicrohttpd zeroes
 * its whole pool between keep-alive requests), as chronos keeps a 64 KiB header buffer per
 * connection (bench/RESULTS.md). */
#define LD_HTTPD_DEFAULT_MAX_CONNECTIONS 1024
#define LD_HTTPD_DEFAULT_TIMEOUT_S 30 /* idle or half-received connection timeout */
/* Bytes of a request head (request line, headers, the empty line) accepted: nwaku's, whose
 * chronos server answers a longer head 431 with an empty text/plain body and closes. */
#define LD_HTTPD_MAX_HEAD (64u * 1024u)
/* The body of that 431 (and of the REST server's 431 for a path over its limit): JSON, so that
 * a client parsing error bodies gets one; nwaku's body is empty, its status the same. */
#define LD_HTTPD_HEAD_TOO_LARGE_JSON "{\"error\":\"Request head over 65536 bytes\"}"
/* Per-connection memory of libmicrohttpd, which holds the head and what it parses of it: room
 * for a head of LD_HTTPD_MAX_HEAD with the usual few headers (a longer head is refused by the
 * check above, one of thousands of tiny headers by libmicrohttpd itself, both with 431). */
#define LD_HTTPD_DEFAULT_HEADER_MEMORY (LD_HTTPD_MAX_HEAD + 16u * 1024u)
#define LD_HTTPD_MAX_ORIGINS 16                     /* allowed-origin patterns */
#define LD_HTTPD_MAX_ORIGIN_LEN 256                 /* longer Origin values never match */
#define LD_HTTPD_MAX_RESPONSE (64u * 1024u * 1024u) /* response body bytes */

typedef struct ld_httpd ld_httpd_t;
typedef struct ld_http_request ld_http_request_t;

/* Called on the loop thread once per complete request. The handler answers with one of the
 * ld_http_respond* functions, either before returning or later from the loop thread. */
typedef void (*ld_httpd_handler_fn)(ld_http_request_t *req, void *user_data);

typedef struct ld_httpd_config {
  uv_loop_t *loop;
  const char *address;                /* IPv4 or IPv6 literal to bind; NULL: "127.0.0.1" */
  uint16_t port;                      /* 0: any free port (see ld_httpd_port) */
  size_t max_body;                    /* 0: LD_HTTPD_DEFAULT_MAX_BODY */
  size_t max_connections;             /* 0: LD_HTTPD_DEFAULT_MAX_CONNECTIONS */
  unsigned timeout_s;                 /* 0: LD_HTTPD_DEFAULT_TIMEOUT_S */
  size_t header_memory;               /* 0: LD_HTTPD_DEFAULT_HEADER_MEMORY */
  const char *const *allowed_origins; /* CORS patterns (copied); none: CORS off */
  size_t n_allowed_origins;
  const char *log_topic;       /* topic of this server's log lines; NULL: "http" */
  ld_httpd_handler_fn handler; /* required */
  void *user_data;
} ld_httpd_config_t;

/* Fills `cfg` with zeros and the defaults above (loop and handler left NULL). */
void ld_httpd_config_default(ld_httpd_config_t *cfg);

/* Binds, listens and starts serving on cfg->loop. Loop thread only. On success stores the server
 * in *out and returns 0. Errors: LD_ERR_INVALID_ARG (no loop or handler, an address that is not
 * an IP literal, too many or overlong origins), LD_ERR_ADDR_IN_USE, LD_ERR_IO (other socket or
 * libmicrohttpd failures), LD_ERR_NOMEM. */
int ld_httpd_new(const ld_httpd_config_t *cfg, ld_httpd_t **out);

/* The bound TCP port. */
uint16_t ld_httpd_port(const ld_httpd_t *h);

typedef struct ld_httpd_stats {
  size_t open;              /* connections open now */
  uint64_t accepted;        /* connections handed to libmicrohttpd since the start */
  uint64_t refused;         /* clients answered 503 over max_connections */
  uint64_t accept_failures; /* accept() failures for lack of descriptors or memory */
} ld_httpd_stats_t;

/* Fills `out` with the server's connection figures. Loop thread only (outside handlers, as it may
 * reap connections that libmicrohttpd has finished with). */
void ld_httpd_stats(ld_httpd_t *h, ld_httpd_stats_t *out);

/* Stops accepting, answers requests still waiting for their handler with 503, closes every
 * connection, and calls `done` (may be NULL) from the loop once the libuv handles are closed; the
 * server is freed before `done` runs. Requests still held by handlers stay valid: answering them
 * later only frees them. Loop thread only; may be called from inside a handler (then it takes
 * effect when the handler returns). */
void ld_httpd_close(ld_httpd_t *h, void (*done)(void *user_data), void *user_data);

/* ---- requests -------------------------------------------------------------------------------- */

/* Accessors. Method, path and body are owned by the request and stay valid until the request is
 * answered; headers and query arguments are read from the connection and may only be asked for
 * inside the handler call. */
const char *ld_http_request_method(const ld_http_request_t *r);
/* The raw path (percent-encoding kept), without the query string. */
const char *ld_http_request_path(const ld_http_request_t *r);
/* The first header named `name` (case-insensitive), or NULL. */
const char *ld_http_request_header(const ld_http_request_t *r, const char *name);
/* The percent-decoded value of query argument `name` (decoded into `buf` of `cap` bytes), or
 * NULL when absent, undecodable or too long. */
const char *ld_http_request_query(const ld_http_request_t *r, const char *name, char *buf,
                                  size_t cap);
/* The body (not NUL-terminated; NULL when empty) and its length. */
const uint8_t *ld_http_request_body(const ld_http_request_t *r, size_t *len);

/* A slot for the handler's own per-request state. */
void ld_http_request_set_data(ld_http_request_t *r, void *data);
void *ld_http_request_data(const ld_http_request_t *r);

/* ---- responses ------------------------------------------------------------------------------- */

/* Answers the request with `status`, a Content-Type and `len` bytes of `body` (copied; may be
 * NULL when len is 0), plus the CORS headers decided for it. Exactly one answer per request:
 * after it the request belongs to the server again and must not be touched. Loop thread only.
 * Returns 0; LD_ERR_STATE for a second answer, LD_ERR_TOO_LARGE (body over
 * LD_HTTPD_MAX_RESPONSE) or LD_ERR_NOMEM — then the client gets a 500 instead and the request is
 * answered all the same. */
int ld_http_respond(ld_http_request_t *r, unsigned status, const char *content_type,
                    const void *body, size_t len);

/* The Content-Security-Policy of ld_http_respond_page: the page's own script, style and JSON
 * only; no inline script, no plugins, no frames. */
#define LD_HTTPD_PAGE_CSP                                                                          \
  "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; "                  \
  "img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

/* As ld_http_respond, for a page or asset a browser loads (the status page): adds
 * Content-Security-Policy LD_HTTPD_PAGE_CSP, X-Content-Type-Options nosniff, Cache-Control
 * no-cache, Referrer-Policy no-referrer and X-Frame-Options DENY. */
int ld_http_respond_page(ld_http_request_t *r, unsigned status, const char *content_type,
                         const void *body, size_t len);

/* `text` (NUL-terminated) as text/plain. */
int ld_http_respond_text(ld_http_request_t *r, unsigned status, const char *text);

/* `json` serialised compactly (insertion order kept) as application/json. The caller keeps its
 * reference to `json`. */
int ld_http_respond_json(ld_http_request_t *r, unsigned status, const json_t *json);

/* ---- helpers (pure; exposed for tests) --------------------------------------------------------
 */

/* Whether `origin` ("http://localhost:8080") matches one allowed-origin pattern as described
 * above. */
bool ld_httpd_origin_matches(const char *pattern, const char *origin);

#endif
