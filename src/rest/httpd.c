#include "rest/httpd.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include "base/buf.h"
#include "base/error.h"
#include "base/log.h"
#include "rest/mhd.h"
#include "rest/route.h"

#define LISTEN_BACKLOG 1024 /* the kernel caps it at net.core.somaxconn */
#define ACCEPT_BATCH 64     /* connections accepted per wake-up, as libuv's fairness cap */
#define ACCEPT_PAUSE_MS 100 /* wait before accepting again when out of file descriptors */
#define REFUSE_DRAIN 16384  /* request bytes read from a refused client before answering */
#define FD_LIMIT_MARGIN 64  /* descriptors a process needs besides one per connection */

/* The answer to a client over the connection limit, written straight to its socket. */
static const char OVER_LIMIT_RESPONSE[] = "HTTP/1.1 503 Service Unavailable\r\n"
                                          "Content-Type: text/plain\r\n"
                                          "Content-Length: 20\r\n"
                                          "Retry-After: 1\r\n"
                                          "Connection: close\r\n"
                                          "\r\n"
                                          "Too many connections";

/* Every caller runs after ld_httpd_new has loaded the library successfully. */
static const ld_mhd_api_t *mhd(void) {
  const ld_mhd_api_t *api = NULL;
  ld_mhd_load(&api);
  return api;
}

struct ld_http_request {
  ld_httpd_t *httpd; /* NULL once libmicrohttpd is done with the connection */
  struct MHD_Connection *conn;
  char *method;
  char *path;
  ld_buf_t body;
  void *data;
  struct MHD_Response *response; /* prepared, not yet queued */
  unsigned status;
  const char *cors_origin; /* "*" or the request's Origin (owned copy in cors_buf) */
  char *cors_buf;
  bool dispatched; /* the handler has it */
  bool responded;
  bool suspended;
  bool mhd_done;
  bool page;                      /* ld_http_respond_page: with the page's security headers */
  ld_http_request_t *prev, *next; /* suspended requests */
};

struct ld_httpd {
  uv_loop_t *loop;
  struct MHD_Daemon *mhd;
  int listen_fd;
  uint16_t port;
  uv_poll_t poll;        /* libmicrohttpd's epoll descriptor */
  uv_timer_t timer;      /* libmicrohttpd's next timeout */
  uv_poll_t listen_poll; /* the listening socket, accepted here */
  uv_timer_t accept_timer;
  int open_handles;
  size_t max_connections;
  uint64_t accepted, refused, accept_failures;
  size_t max_body;
  char *origins[LD_HTTPD_MAX_ORIGINS];
  size_t n_origins;
  bool any_origin;
  char topic[32];
  ld_httpd_handler_fn handler;
  void *user_data;
  ld_http_request_t *suspended;
  bool in_run;
  bool closing;
  bool close_pending;
  bool poll_inited;
  bool listen_inited;
  bool full_logged; /* the limit was reached and logged; cleared when a connection fits again */
  bool fds_logged;  /* running out of descriptors was logged; cleared on the next accept */
  void (*done)(void *);
  void *done_data;
};

void ld_httpd_config_default(ld_httpd_config_t *cfg) {
  memset(cfg, 0, sizeof *cfg);
  cfg->max_body = LD_HTTPD_DEFAULT_MAX_BODY;
  cfg->max_connections = LD_HTTPD_DEFAULT_MAX_CONNECTIONS;
  cfg->timeout_s = LD_HTTPD_DEFAULT_TIMEOUT_S;
  cfg->header_memory = LD_HTTPD_DEFAULT_HEADER_MEMORY;
}

/* ---- origin patterns ------------------------------------------------------------------------- */

/* Glob match where `*` is any run and `?` at most one character, case-insensitive, anchored. */
static bool glob_match(const char *p, size_t plen, const char *s, size_t slen) {
  bool prev[LD_HTTPD_MAX_ORIGIN_LEN + 1], cur[LD_HTTPD_MAX_ORIGIN_LEN + 1];
  memset(prev, 0, sizeof prev);
  prev[0] = true;
  for (size_t i = 0; i < plen; i++) {
    char pc = p[i];
    memset(cur, 0, sizeof cur);
    for (size_t j = 0; j <= slen; j++) {
      if (pc == '*')
        cur[j] = prev[j] || (j > 0 && cur[j - 1]);
      else if (pc == '?')
        cur[j] = prev[j] || (j > 0 && prev[j - 1]);
      else
        cur[j] =
            j > 0 && prev[j - 1] && tolower((unsigned char)pc) == tolower((unsigned char)s[j - 1]);
    }
    memcpy(prev, cur, sizeof prev);
  }
  return prev[slen];
}

static bool starts_with_ci(const char *s, const char *prefix) {
  return strncasecmp(s, prefix, strlen(prefix)) == 0;
}

bool ld_httpd_origin_matches(const char *pattern, const char *origin) {
  static const char *const schemes[2] = {"http://", "https://"};
  if (strlen(origin) > LD_HTTPD_MAX_ORIGIN_LEN)
    return false;
  if (strcmp(pattern, "*") == 0)
    return true;
  for (size_t k = 0; k < 2; k++) {
    size_t n = strlen(schemes[k]);
    if (starts_with_ci(pattern, schemes[k]))
      return starts_with_ci(origin, schemes[k]) &&
             glob_match(pattern + n, strlen(pattern + n), origin + n, strlen(origin + n));
  }
  for (size_t k = 0; k < 2; k++) {
    size_t n = strlen(schemes[k]);
    if (starts_with_ci(origin, schemes[k]) &&
        glob_match(pattern, strlen(pattern), origin + n, strlen(origin + n)))
      return true;
  }
  return false;
}

/* ---- requests -------------------------------------------------------------------------------- */

static void request_free(ld_http_request_t *r) {
  if (r->response != NULL)
    mhd()->destroy_response(r->response);
  ld_buf_clear(&r->body);
  free(r->method);
  free(r->path);
  free(r->cors_buf);
  free(r);
}

static void unlink_suspended(ld_httpd_t *h, ld_http_request_t *r) {
  if (r->prev != NULL)
    r->prev->next = r->next;
  else if (h != NULL && h->suspended == r)
    h->suspended = r->next;
  if (r->next != NULL)
    r->next->prev = r->prev;
  r->prev = r->next = NULL;
}

static ld_http_request_t *request_new(ld_httpd_t *h, struct MHD_Connection *conn,
                                      const char *method, const char *url) {
  ld_http_request_t *r = calloc(1, sizeof *r);
  if (r == NULL)
    return NULL;
  r->httpd = h;
  r->conn = conn;
  r->method = strdup(method);
  r->path = strdup(url);
  ld_buf_init(&r->body);
  if (r->method == NULL || r->path == NULL) {
    request_free(r);
    return NULL;
  }
  return r;
}

const char *ld_http_request_method(const ld_http_request_t *r) {
  return r->method;
}

const char *ld_http_request_path(const ld_http_request_t *r) {
  return r->path;
}

const char *ld_http_request_header(const ld_http_request_t *r, const char *name) {
  if (r->conn == NULL)
    return NULL;
  return mhd()->lookup_connection_value(r->conn, MHD_HEADER_KIND, name);
}

const char *ld_http_request_query(const ld_http_request_t *r, const char *name, char *buf,
                                  size_t cap) {
  const char *raw =
      r->conn != NULL ? mhd()->lookup_connection_value(r->conn, MHD_GET_ARGUMENT_KIND, name) : NULL;
  size_t len = 0;
  if (raw == NULL || ld_url_decode(raw, strlen(raw), buf, cap, &len) != 0)
    return NULL;
  return buf;
}

const uint8_t *ld_http_request_body(const ld_http_request_t *r, size_t *len) {
  *len = r->body.len;
  return r->body.len > 0 ? r->body.data : NULL;
}

void ld_http_request_set_data(ld_http_request_t *r, void *data) {
  r->data = data;
}

void *ld_http_request_data(const ld_http_request_t *r) {
  return r->data;
}

/* ---- the loop adapter ------------------------------------------------------------------------ */

static void httpd_finish_close(ld_httpd_t *h);

static void on_timer(uv_timer_t *t);

static void arm_timer(ld_httpd_t *h) {
  MHD_UNSIGNED_LONG_LONG ms = 0;
  if (mhd()->get_timeout(h->mhd, &ms) == MHD_YES)
    uv_timer_start(&h->timer, on_timer, (uint64_t)ms, 0);
  else
    uv_timer_stop(&h->timer);
}

/* One pass of libmicrohttpd. Returns false when a handler closed the server during it: `h` is
 * then freed. */
static bool httpd_run(ld_httpd_t *h) {
  if (h->mhd == NULL)
    return true;
  h->in_run = true;
  mhd()->run(h->mhd);
  h->in_run = false;
  if (h->close_pending) {
    httpd_finish_close(h);
    return false;
  }
  arm_timer(h);
  return true;
}

static void on_timer(uv_timer_t *t) {
  httpd_run(t->data);
}

static void on_poll(uv_poll_t *p, int status, int events) {
  (void)status;
  (void)events;
  httpd_run(p->data);
}

/* ---- accepting ------------------------------------------------------------------------------- *
 * The listening socket is ours, not libmicrohttpd's: in its external epoll mode libmicrohttpd
 * takes the listening socket out of its epoll set when it reaches its connection limit and puts
 * it back only at the start of a later MHD_run(), which nothing triggers once the connections
 * have closed — the server then never accepts again. Here the listening socket is always
 * watched: a connection that fits is handed over with MHD_add_connection(), one over the limit
 * is answered 503 and closed at once. */

static size_t open_connections(ld_httpd_t *h) {
  const union MHD_DaemonInfo *info =
      mhd()->get_daemon_info(h->mhd, MHD_DAEMON_INFO_CURRENT_CONNECTIONS);
  return info != NULL ? info->num_connections : 0;
}

/* Answers a client over the limit and closes its socket. What it already sent is read first
 * (up to REFUSE_DRAIN bytes) so that closing does not reset the connection under the answer. */
static void refuse(ld_httpd_t *h, int fd) {
  char sink[4096];
  for (size_t drained = 0; drained < REFUSE_DRAIN;) {
    ssize_t n = recv(fd, sink, sizeof sink, MSG_DONTWAIT);
    if (n <= 0)
      break;
    drained += (size_t)n;
  }
  ssize_t sent =
      send(fd, OVER_LIMIT_RESPONSE, sizeof OVER_LIMIT_RESPONSE - 1, MSG_DONTWAIT | MSG_NOSIGNAL);
  (void)sent;
  shutdown(fd, SHUT_WR);
  close(fd);
  h->refused++;
  if (!h->full_logged)
    LD_WARN(h->topic, "HTTP connection limit of %zu reached: answering new clients 503",
            h->max_connections);
  h->full_logged = true;
}

/* Whether one more connection fits. At the limit libmicrohttpd runs once first (`*refreshed`
 * records it), so that connections whose clients have already gone are counted out. Returns
 * false, with *alive false, when that run closed the server. */
static bool has_room(ld_httpd_t *h, bool *refreshed, bool *alive) {
  *alive = true;
  if (open_connections(h) < h->max_connections)
    return true;
  if (*refreshed)
    return false;
  *refreshed = true;
  *alive = httpd_run(h);
  return *alive && open_connections(h) < h->max_connections;
}

static void on_accept_timer(uv_timer_t *t);

/* Out of descriptors: the pending clients stay queued until some are free again. */
static void pause_accepting(ld_httpd_t *h, int err) {
  if (!h->fds_logged)
    LD_WARN(h->topic, "Cannot accept HTTP connections (%s) with %zu open: retrying every %d ms",
            strerror(err), open_connections(h), ACCEPT_PAUSE_MS);
  h->fds_logged = true;
  h->accept_failures++;
  uv_poll_stop(&h->listen_poll);
  uv_timer_start(&h->accept_timer, on_accept_timer, ACCEPT_PAUSE_MS, 0);
}

/* Accepts one connection: 1 taken (added or refused), 0 none pending, -1 stop (paused or the
 * server was closed; *alive tells which). */
static int accept_one(ld_httpd_t *h, bool *refreshed, bool *added, bool *alive) {
  struct sockaddr_storage ss;
  socklen_t slen = sizeof ss;
  int fd = accept4(h->listen_fd, (struct sockaddr *)&ss, &slen, SOCK_NONBLOCK | SOCK_CLOEXEC);
  if (fd < 0) {
    if (errno == EINTR || errno == ECONNABORTED)
      return 1;
    if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM) {
      pause_accepting(h, errno);
      return -1;
    }
    return 0; /* EAGAIN, or an error the next readiness reports again */
  }
  h->fds_logged = false;
  if (!has_room(h, refreshed, alive)) {
    if (!*alive) {
      close(fd);
      return -1;
    }
    refuse(h, fd);
    return 1;
  }
  h->full_logged = false;
  if (mhd()->add_connection(h->mhd, fd, (struct sockaddr *)&ss, slen) == MHD_YES) {
    h->accepted++;
    *added = true;
  } /* otherwise libmicrohttpd closed it (and logged why) */
  return 1;
}

static void on_listen(uv_poll_t *p, int status, int events) {
  (void)status;
  (void)events;
  ld_httpd_t *h = p->data;
  bool refreshed = false, added = false, alive = true;
  int rc = 1;
  for (int i = 0; i < ACCEPT_BATCH && rc > 0 && !h->closing; i++)
    rc = accept_one(h, &refreshed, &added, &alive);
  if (alive && added)
    httpd_run(h); /* a new connection may have its request waiting already */
}

static void on_accept_timer(uv_timer_t *t) {
  ld_httpd_t *h = t->data;
  if (!h->closing)
    uv_poll_start(&h->listen_poll, UV_READABLE, on_listen);
}

static void kick(ld_httpd_t *h) {
  if (h->mhd != NULL && !h->in_run)
    uv_timer_start(&h->timer, on_timer, 0, 0);
}

/* ---- responses ------------------------------------------------------------------------------- */

/* The headers of a page served to a browser: only its own script, style and JSON may load (a
 * string from a peer that slipped into the markup could not run), nothing is cached stale, the
 * type is never sniffed and the page is never framed. */
static bool add_page_headers(struct MHD_Response *resp) {
  static const char *const headers[][2] = {
      {"Content-Security-Policy", LD_HTTPD_PAGE_CSP},
      {"X-Content-Type-Options", "nosniff"},
      {"Cache-Control", "no-cache"},
      {"Referrer-Policy", "no-referrer"},
      {"X-Frame-Options", "DENY"},
  };
  for (size_t i = 0; i < sizeof headers / sizeof headers[0]; i++)
    if (mhd()->add_response_header(resp, headers[i][0], headers[i][1]) != MHD_YES)
      return false;
  return true;
}

static struct MHD_Response *build_response(const ld_http_request_t *r, const char *content_type,
                                           const void *body, size_t len) {
  struct MHD_Response *resp =
      mhd()->create_response_from_buffer(len, (void *)(len > 0 ? body : ""), MHD_RESPMEM_MUST_COPY);
  if (resp == NULL)
    return NULL;
  bool ok = mhd()->add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, content_type) == MHD_YES;
  if (ok && r->cors_origin != NULL) {
    if (strcmp(r->cors_origin, "*") != 0)
      ok = mhd()->add_response_header(resp, "Vary", "Origin") == MHD_YES;
    ok = ok &&
         mhd()->add_response_header(resp, "Access-Control-Allow-Origin", r->cors_origin) == MHD_YES;
    ok = ok && mhd()->add_response_header(resp, "Access-Control-Allow-Headers", "Content-Type") ==
                   MHD_YES;
  }
  if (ok && r->page)
    ok = add_page_headers(resp);
  if (!ok) {
    mhd()->destroy_response(resp);
    return NULL;
  }
  return resp;
}

static struct MHD_Response *fallback_response(void) {
  static const char text[] = "Internal server error";
  struct MHD_Response *resp =
      mhd()->create_response_from_buffer(sizeof text - 1, (void *)text, MHD_RESPMEM_PERSISTENT);
  if (resp != NULL)
    mhd()->add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, "text/plain");
  return resp;
}

/* Prepares the answer without queueing it (used before the handler runs: 413, CORS). */
static void prepare(ld_http_request_t *r, unsigned status, const char *text) {
  r->response = build_response(r, "text/plain", text, strlen(text));
  r->status = status;
  if (r->response == NULL) {
    r->response = fallback_response();
    r->status = MHD_HTTP_INTERNAL_SERVER_ERROR;
  }
}

int ld_http_respond(ld_http_request_t *r, unsigned status, const char *content_type,
                    const void *body, size_t len) {
  if (r->responded)
    return LD_ERR_STATE;
  r->responded = true;
  int rc = len > LD_HTTPD_MAX_RESPONSE ? LD_ERR_TOO_LARGE : 0;
  if (r->mhd_done) {
    request_free(r);
    return rc;
  }
  r->response = rc == 0 ? build_response(r, content_type, body, len) : NULL;
  r->status = status;
  if (r->response == NULL) {
    rc = rc != 0 ? rc : LD_ERR_NOMEM;
    r->response = fallback_response();
    r->status = MHD_HTTP_INTERNAL_SERVER_ERROR;
  }
  if (r->suspended) {
    r->suspended = false;
    unlink_suspended(r->httpd, r);
    mhd()->resume_connection(r->conn);
    kick(r->httpd);
  }
  return rc;
}

int ld_http_respond_page(ld_http_request_t *r, unsigned status, const char *content_type,
                         const void *body, size_t len) {
  r->page = true;
  return ld_http_respond(r, status, content_type, body, len);
}

int ld_http_respond_text(ld_http_request_t *r, unsigned status, const char *text) {
  return ld_http_respond(r, status, "text/plain", text, strlen(text));
}

int ld_http_respond_json(ld_http_request_t *r, unsigned status, const json_t *json) {
  char *text = json_dumps(json, JSON_COMPACT | JSON_PRESERVE_ORDER | JSON_ENCODE_ANY);
  if (text == NULL) {
    ld_http_respond_text(r, MHD_HTTP_INTERNAL_SERVER_ERROR, "Failed to serialize response");
    return LD_ERR_NOMEM;
  }
  int rc = ld_http_respond(r, status, "application/json", text, strlen(text));
  free(text);
  return rc;
}

/* ---- libmicrohttpd callbacks ----------------------------------------------------------------- */

static enum MHD_Result count_origin(void *cls, enum MHD_ValueKind kind, const char *key,
                                    const char *value) {
  (void)kind;
  (void)value;
  if (strcasecmp(key, "Origin") == 0)
    ++*(int *)cls;
  return MHD_YES;
}

/* Decides the CORS headers; prepares a 403/400 answer when the request must be refused. */
static void check_cors(ld_httpd_t *h, ld_http_request_t *r) {
  if (h->n_origins == 0)
    return;
  int count = 0;
  mhd()->get_connection_values(r->conn, MHD_HEADER_KIND, count_origin, &count);
  if (count == 0)
    return;
  if (count > 1) {
    prepare(r, MHD_HTTP_BAD_REQUEST, "Only a single Origin header must be specified");
    return;
  }
  const char *origin = mhd()->lookup_connection_value(r->conn, MHD_HEADER_KIND, "Origin");
  if (h->any_origin) {
    r->cors_origin = "*";
    return;
  }
  for (size_t i = 0; i < h->n_origins; i++) {
    if (ld_httpd_origin_matches(h->origins[i], origin)) {
      r->cors_buf = strdup(origin);
      r->cors_origin = r->cors_buf;
      if (r->cors_buf == NULL)
        prepare(r, MHD_HTTP_INTERNAL_SERVER_ERROR, "Out of memory");
      return;
    }
  }
  prepare(r, MHD_HTTP_FORBIDDEN, "Origin not allowed");
}

static bool content_length_too_large(const ld_httpd_t *h, struct MHD_Connection *conn) {
  const char *cl = mhd()->lookup_connection_value(conn, MHD_HEADER_KIND, "Content-Length");
  if (cl == NULL)
    return false;
  char *end = NULL;
  errno = 0;
  unsigned long long v = strtoull(cl, &end, 10);
  return errno != 0 || v > h->max_body;
}

static enum MHD_Result queue(ld_http_request_t *r) {
  enum MHD_Result res = mhd()->queue_response(r->conn, r->status, r->response);
  mhd()->destroy_response(r->response);
  r->response = NULL;
  return res;
}

static bool head_too_large(struct MHD_Connection *conn) {
  const union MHD_ConnectionInfo *info =
      mhd()->get_connection_info(conn, MHD_CONNECTION_INFO_REQUEST_HEADER_SIZE);
  return info != NULL && info->header_size > LD_HTTPD_MAX_HEAD;
}

/* nwaku's answer to a head over its limit: 431, connection closed (with a JSON body where
 * nwaku's is empty). */
static void refuse_head(ld_http_request_t *r) {
  static const char body[] = LD_HTTPD_HEAD_TOO_LARGE_JSON;
  r->response = build_response(r, "application/json", body, sizeof body - 1);
  r->status = 431;
  if (r->response == NULL) {
    r->response = fallback_response();
    r->status = MHD_HTTP_INTERNAL_SERVER_ERROR;
  }
  if (r->status == 431)
    mhd()->add_response_header(r->response, MHD_HTTP_HEADER_CONNECTION, "close");
}

static enum MHD_Result on_first_call(ld_httpd_t *h, struct MHD_Connection *conn, const char *method,
                                     const char *url, void **con_cls) {
  ld_http_request_t *r = request_new(h, conn, method, url);
  if (r == NULL)
    return MHD_NO;
  *con_cls = r;
  if (head_too_large(conn)) {
    LD_DEBUG(h->topic, "Request head over %u bytes: 431", LD_HTTPD_MAX_HEAD);
    refuse_head(r);
    return queue(r);
  }
  check_cors(h, r);
  if (r->response == NULL && content_length_too_large(h, conn))
    prepare(r, 413, "Request body too large");
  return r->response != NULL ? queue(r) : MHD_YES;
}

static enum MHD_Result on_upload(ld_httpd_t *h, ld_http_request_t *r, const char *data,
                                 size_t *size) {
  if (r->body.len + *size > h->max_body || ld_buf_append(&r->body, data, *size) != 0) {
    LD_DEBUG(h->topic, "Closing HTTP connection: request body over %zu bytes", h->max_body);
    return MHD_NO;
  }
  *size = 0;
  return MHD_YES;
}

static enum MHD_Result on_access(void *cls, struct MHD_Connection *conn, const char *url,
                                 const char *method, const char *version, const char *upload_data,
                                 size_t *upload_data_size, void **con_cls) {
  (void)version;
  ld_httpd_t *h = cls;
  ld_http_request_t *r = *con_cls;
  if (r == NULL)
    return on_first_call(h, conn, method, url, con_cls);
  if (*upload_data_size > 0)
    return on_upload(h, r, upload_data, upload_data_size);
  if (!r->dispatched && !h->closing) {
    r->dispatched = true;
    h->handler(r, h->user_data);
  }
  if (r->response != NULL)
    return queue(r);
  if (h->closing) {
    prepare(r, MHD_HTTP_SERVICE_UNAVAILABLE, "Server shutting down");
    return queue(r);
  }
  r->suspended = true;
  r->next = h->suspended;
  if (h->suspended != NULL)
    h->suspended->prev = r;
  h->suspended = r;
  mhd()->suspend_connection(conn);
  return MHD_YES;
}

static void on_completed(void *cls, struct MHD_Connection *conn, void **con_cls,
                         enum MHD_RequestTerminationCode toe) {
  (void)conn;
  (void)toe;
  ld_httpd_t *h = cls;
  ld_http_request_t *r = *con_cls;
  if (r == NULL)
    return;
  *con_cls = NULL;
  if (r->suspended)
    unlink_suspended(h, r);
  r->suspended = false;
  r->mhd_done = true;
  r->httpd = NULL;
  r->conn = NULL;
  if (!r->dispatched || r->responded)
    request_free(r);
}

static size_t keep_escaped(void *cls, struct MHD_Connection *c, char *s) {
  (void)cls;
  (void)c;
  return strlen(s);
}

static void on_mhd_log(void *cls, const char *fmt, va_list ap) {
  ld_httpd_t *h = cls;
  if (LD_LOG_ENABLED(LD_LOG_DEBUG))
    ld_logv(LD_LOG_DEBUG, h->topic, fmt, ap);
}

/* ---- lifecycle ------------------------------------------------------------------------------- */

static int open_listener(ld_httpd_t *h, const char *address, uint16_t port) {
  struct sockaddr_storage ss;
  memset(&ss, 0, sizeof ss);
  struct sockaddr_in *v4 = (struct sockaddr_in *)&ss;
  struct sockaddr_in6 *v6 = (struct sockaddr_in6 *)&ss;
  socklen_t slen;
  if (inet_pton(AF_INET, address, &v4->sin_addr) == 1) {
    v4->sin_family = AF_INET;
    v4->sin_port = htons(port);
    slen = sizeof *v4;
  } else if (inet_pton(AF_INET6, address, &v6->sin6_addr) == 1) {
    v6->sin6_family = AF_INET6;
    v6->sin6_port = htons(port);
    slen = sizeof *v6;
  } else {
    return LD_ERR_INVALID_ARG;
  }
  int fd = socket(ss.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0)
    return LD_ERR_IO;
  int one = 1;
  setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  if (bind(fd, (struct sockaddr *)&ss, slen) != 0 || listen(fd, LISTEN_BACKLOG) != 0) {
    int err = errno == EADDRINUSE ? LD_ERR_ADDR_IN_USE : LD_ERR_IO;
    close(fd);
    return err;
  }
  slen = sizeof ss;
  getsockname(fd, (struct sockaddr *)&ss, &slen);
  h->port = ntohs(ss.ss_family == AF_INET6 ? v6->sin6_port : v4->sin_port);
  h->listen_fd = fd;
  return 0;
}

static int copy_origins(ld_httpd_t *h, const ld_httpd_config_t *cfg) {
  if (cfg->n_allowed_origins > LD_HTTPD_MAX_ORIGINS)
    return LD_ERR_INVALID_ARG;
  for (size_t i = 0; i < cfg->n_allowed_origins; i++) {
    const char *o = cfg->allowed_origins[i];
    if (o == NULL || o[0] == '\0' || strlen(o) > LD_HTTPD_MAX_ORIGIN_LEN)
      return LD_ERR_INVALID_ARG;
    if ((h->origins[h->n_origins++] = strdup(o)) == NULL)
      return LD_ERR_NOMEM;
  }
  h->any_origin = h->n_origins == 1 && strcmp(h->origins[0], "*") == 0;
  return 0;
}

/* libmicrohttpd without a listening socket of its own (connections come from on_listen). */
static int start_mhd(ld_httpd_t *h, const ld_httpd_config_t *cfg) {
  unsigned flags =
      MHD_USE_EPOLL | MHD_USE_NO_LISTEN_SOCKET | MHD_ALLOW_SUSPEND_RESUME | MHD_USE_ERROR_LOG;
  h->mhd = mhd()->start_daemon(
      flags, 0, NULL, NULL, on_access, h, MHD_OPTION_NOTIFY_COMPLETED, on_completed, h,
      MHD_OPTION_CONNECTION_LIMIT, (unsigned)h->max_connections, MHD_OPTION_CONNECTION_TIMEOUT,
      (unsigned)(cfg->timeout_s ? cfg->timeout_s : LD_HTTPD_DEFAULT_TIMEOUT_S),
      MHD_OPTION_CONNECTION_MEMORY_LIMIT,
      (size_t)(cfg->header_memory ? cfg->header_memory : LD_HTTPD_DEFAULT_HEADER_MEMORY),
      MHD_OPTION_UNESCAPE_CALLBACK, keep_escaped, NULL, MHD_OPTION_EXTERNAL_LOGGER, on_mhd_log, h,
      MHD_OPTION_END);
  if (h->mhd == NULL)
    return LD_ERR_IO;
  const union MHD_DaemonInfo *info = mhd()->get_daemon_info(h->mhd, MHD_DAEMON_INFO_EPOLL_FD);
  if (info == NULL || uv_poll_init(h->loop, &h->poll, info->epoll_fd) != 0)
    return LD_ERR_IO;
  h->poll.data = h;
  h->poll_inited = true;
  h->open_handles++;
  uv_poll_start(&h->poll, UV_READABLE, on_poll);
  return 0;
}

static int start_listening(ld_httpd_t *h) {
  if (uv_poll_init_socket(h->loop, &h->listen_poll, h->listen_fd) != 0)
    return LD_ERR_IO;
  h->listen_poll.data = h;
  h->listen_inited = true;
  h->open_handles++;
  uv_poll_start(&h->listen_poll, UV_READABLE, on_listen);
  return 0;
}

/* A server whose connections would run the process out of descriptors says so once at start. */
static void check_fd_limit(const ld_httpd_t *h) {
  struct rlimit rl;
  if (getrlimit(RLIMIT_NOFILE, &rl) != 0 || rl.rlim_cur == RLIM_INFINITY ||
      rl.rlim_cur >= h->max_connections + FD_LIMIT_MARGIN)
    return;
  LD_WARN(h->topic,
          "Open file limit %llu is below this server's %zu connections: raise it (ulimit -n)",
          (unsigned long long)rl.rlim_cur, h->max_connections);
}

static void free_httpd(ld_httpd_t *h) {
  for (size_t i = 0; i < h->n_origins; i++)
    free(h->origins[i]);
  free(h);
}

static void on_handle_closed(uv_handle_t *handle) {
  ld_httpd_t *h = handle->data;
  if (--h->open_handles > 0)
    return;
  void (*done)(void *) = h->done;
  void *data = h->done_data;
  free_httpd(h);
  if (done != NULL)
    done(data);
}

static void stop_mhd(ld_httpd_t *h) {
  if (h->poll_inited)
    uv_poll_stop(&h->poll); /* before libmicrohttpd closes the descriptor */
  for (ld_http_request_t *r = h->suspended; r != NULL; r = r->next) {
    r->suspended = false;
    mhd()->resume_connection(r->conn);
  }
  h->suspended = NULL;
  mhd()->run(h->mhd);
  mhd()->stop_daemon(h->mhd);
  h->mhd = NULL;
}

/* Stops libmicrohttpd, closes the listener and the libuv handles; frees `h` when the last
 * handle is closed (or at once when there is none). */
static void httpd_finish_close(ld_httpd_t *h) {
  h->close_pending = false;
  if (h->listen_inited)
    uv_close((uv_handle_t *)&h->listen_poll, on_handle_closed); /* stops watching at once */
  if (h->listen_fd >= 0)
    close(h->listen_fd);
  h->listen_fd = -1;
  if (h->mhd != NULL)
    stop_mhd(h);
  if (h->open_handles == 0) {
    void (*done)(void *) = h->done;
    void *data = h->done_data;
    free_httpd(h);
    if (done != NULL)
      done(data);
    return;
  }
  if (h->poll_inited)
    uv_close((uv_handle_t *)&h->poll, on_handle_closed);
  uv_close((uv_handle_t *)&h->timer, on_handle_closed);
  uv_close((uv_handle_t *)&h->accept_timer, on_handle_closed);
}

int ld_httpd_new(const ld_httpd_config_t *cfg, ld_httpd_t **out) {
  if (cfg == NULL || cfg->loop == NULL || cfg->handler == NULL || out == NULL)
    return LD_ERR_INVALID_ARG;
  const ld_mhd_api_t *api = NULL;
  int rc = ld_mhd_load(&api);
  if (rc != 0)
    return rc;
  ld_httpd_t *h = calloc(1, sizeof *h);
  if (h == NULL)
    return LD_ERR_NOMEM;
  h->loop = cfg->loop;
  h->listen_fd = -1;
  h->max_connections =
      cfg->max_connections ? cfg->max_connections : LD_HTTPD_DEFAULT_MAX_CONNECTIONS;
  h->max_body = cfg->max_body ? cfg->max_body : LD_HTTPD_DEFAULT_MAX_BODY;
  h->handler = cfg->handler;
  h->user_data = cfg->user_data;
  snprintf(h->topic, sizeof h->topic, "%s", cfg->log_topic ? cfg->log_topic : "http");
  rc = copy_origins(h, cfg);
  if (rc == 0)
    rc = open_listener(h, cfg->address ? cfg->address : "127.0.0.1", cfg->port);
  if (rc == 0) {
    uv_timer_init(h->loop, &h->timer);
    uv_timer_init(h->loop, &h->accept_timer);
    h->timer.data = h->accept_timer.data = h;
    h->open_handles = 2;
    rc = start_mhd(h, cfg);
  }
  if (rc == 0)
    rc = start_listening(h);
  if (rc != 0) {
    httpd_finish_close(h);
    return rc;
  }
  arm_timer(h);
  check_fd_limit(h);
  *out = h;
  return 0;
}

uint16_t ld_httpd_port(const ld_httpd_t *h) {
  return h->port;
}

void ld_httpd_stats(ld_httpd_t *h, ld_httpd_stats_t *out) {
  out->open = h->mhd != NULL ? open_connections(h) : 0;
  out->accepted = h->accepted;
  out->refused = h->refused;
  out->accept_failures = h->accept_failures;
}

void ld_httpd_close(ld_httpd_t *h, void (*done)(void *user_data), void *user_data) {
  if (h->closing)
    return;
  h->closing = true;
  h->done = done;
  h->done_data = user_data;
  if (h->in_run)
    h->close_pending = true;
  else
    httpd_finish_close(h);
}
