/* The libmicrohttpd adapter on a libuv loop: synchronous and deferred answers, the body cap, CORS
 * as nwaku's --rest-allow-origin, raw paths, closing with requests still pending, and the
 * connection limit: 503 beyond it, slots freed by clients leaving or by the idle timeout, and
 * accepting paused (not spinning) while the process is out of descriptors. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cmocka.h>
#include <uv.h>

#include "base/error.h"
#include "http_client.h"
#include "http_conn.h"
#include "rest/httpd.h"

#define ANSWER_MS 1000 /* a free slot serves a new client within this */
#define WAIT_MS 10000  /* generous bound for everything else */

typedef struct server {
  uv_loop_t loop;
  ld_httpd_t *h;
  ld_http_request_t *held; /* a request answered later */
  char last_path[256];
  char last_body[256];
  int calls;
  bool closed;
} server_t;

static void handler(ld_http_request_t *req, void *ud) {
  server_t *s = ud;
  s->calls++;
  snprintf(s->last_path, sizeof s->last_path, "%s", ld_http_request_path(req));
  size_t len = 0;
  const uint8_t *body = ld_http_request_body(req, &len);
  snprintf(s->last_body, sizeof s->last_body, "%.*s", (int)len, body ? (const char *)body : "");
  if (strcmp(ld_http_request_path(req), "/later") == 0) {
    s->held = req;
    return;
  }
  if (strcmp(ld_http_request_path(req), "/json") == 0) {
    json_t *j = json_pack("{s:I}", "big", (json_int_t)9007199254740993LL);
    ld_http_respond_json(req, 201, j);
    json_decref(j);
    return;
  }
  char q[64];
  const char *arg = ld_http_request_query(req, "x", q, sizeof q);
  char text[512];
  snprintf(text, sizeof text, "%s %s x=%s", ld_http_request_method(req), ld_http_request_path(req),
           arg ? arg : "-");
  ld_http_respond_text(req, 200, text);
}

/* Starts a server with `cfg` (loop, handler and user data filled in here). */
static void start_with(server_t *s, ld_httpd_config_t *cfg) {
  memset(s, 0, sizeof *s);
  uv_loop_init(&s->loop);
  cfg->loop = &s->loop;
  cfg->port = 0;
  cfg->handler = handler;
  cfg->user_data = s;
  assert_int_equal(ld_httpd_new(cfg, &s->h), 0);
  assert_true(ld_httpd_port(s->h) > 0);
}

static void start(server_t *s, const char *const *origins, size_t n_origins, size_t max_body) {
  ld_httpd_config_t cfg;
  ld_httpd_config_default(&cfg);
  cfg.allowed_origins = origins;
  cfg.n_allowed_origins = n_origins;
  if (max_body > 0)
    cfg.max_body = max_body;
  start_with(s, &cfg);
}

static void start_limited(server_t *s, size_t max_connections, unsigned timeout_s) {
  ld_httpd_config_t cfg;
  ld_httpd_config_default(&cfg);
  cfg.max_connections = max_connections;
  cfg.timeout_s = timeout_s;
  start_with(s, &cfg);
}

static void on_closed(void *ud) {
  ((server_t *)ud)->closed = true;
}

static void stop(server_t *s) {
  ld_httpd_close(s->h, on_closed, s);
  while (!s->closed)
    uv_run(&s->loop, UV_RUN_ONCE);
  uv_run(&s->loop, UV_RUN_NOWAIT);
  assert_int_equal(uv_loop_close(&s->loop), 0);
}

static void serves_text_json_and_raw_paths(void **state) {
  (void)state;
  server_t s;
  start(&s, NULL, 0, 0);
  http_response_t r;
  uint16_t port = ld_httpd_port(s.h);
  assert_int_equal(
      http_request_on_loop(&s.loop, port, "GET", "/a/%2Fb%20c?x=1%2B1", NULL, NULL, 0, &r), 0);
  assert_int_equal(r.status, 200);
  assert_string_equal(r.body, "GET /a/%2Fb%20c x=1+1");
  char ct[64];
  assert_string_equal(http_header(&r, "Content-Type", ct, sizeof ct), "text/plain");
  assert_null(http_header(&r, "Access-Control-Allow-Origin", ct, sizeof ct));
  http_response_free(&r);
  assert_int_equal(http_request_on_loop(&s.loop, port, "POST", "/json", NULL, "{\"k\":1}", 7, &r),
                   0);
  assert_int_equal(r.status, 201);
  assert_string_equal(r.body, "{\"big\":9007199254740993}");
  assert_string_equal(http_header(&r, "Content-Type", ct, sizeof ct), "application/json");
  assert_string_equal(s.last_body, "{\"k\":1}");
  http_response_free(&r);
  stop(&s);
}

/* The client request runs in a thread; the loop answers the held request on a timer. */
static void answer_later(uv_timer_t *t) {
  server_t *s = t->data;
  if (s->held != NULL) {
    assert_int_equal(ld_http_respond_text(s->held, 202, "done later"), 0);
    s->held = NULL;
  }
}

static void answers_after_the_handler_returned(void **state) {
  (void)state;
  server_t s;
  start(&s, NULL, 0, 0);
  uv_timer_t t;
  uv_timer_init(&s.loop, &t);
  t.data = &s;
  uv_timer_start(&t, answer_later, 50, 50);
  http_response_t r;
  assert_int_equal(
      http_request_on_loop(&s.loop, ld_httpd_port(s.h), "GET", "/later", NULL, NULL, 0, &r), 0);
  assert_int_equal(r.status, 202);
  assert_string_equal(r.body, "done later");
  http_response_free(&r);
  uv_close((uv_handle_t *)&t, NULL);
  stop(&s);
}

static void caps_the_body(void **state) {
  (void)state;
  server_t s;
  start(&s, NULL, 0, 16);
  uint16_t port = ld_httpd_port(s.h);
  http_response_t r;
  assert_int_equal(
      http_request_on_loop(&s.loop, port, "POST", "/x", NULL, "0123456789abcdef", 16, &r), 0);
  assert_int_equal(r.status, 200);
  http_response_free(&r);
  int calls = s.calls;
  assert_int_equal(
      http_request_on_loop(&s.loop, port, "POST", "/x", NULL, "0123456789abcdefg", 17, &r), 0);
  assert_int_equal(r.status, 413);
  assert_string_equal(r.body, "Request body too large");
  assert_int_equal(s.calls, calls);
  http_response_free(&r);
  /* chunked beyond the cap: the connection is closed without an answer */
  const char chunked[] =
      "POST /x HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n"
      "Connection: close\r\n\r\n10\r\n0123456789abcdef\r\n4\r\nwxyz\r\n0\r\n\r\n";
  http_raw_on_loop(&s.loop, port, chunked, sizeof chunked - 1, &r);
  assert_int_equal(r.status, 0);
  assert_int_equal(s.calls, calls);
  http_response_free(&r);
  stop(&s);
}

static void cors_as_nwaku(void **state) {
  (void)state;
  const char *origins[] = {"localhost:*", "https://*.example.org", "a?b.net"};
  server_t s;
  start(&s, origins, 3, 0);
  uint16_t port = ld_httpd_port(s.h);
  http_response_t r;
  char v[128];
  assert_int_equal(http_request_on_loop(&s.loop, port, "GET", "/x",
                                        "Origin: http://localhost:3000\r\n", NULL, 0, &r),
                   0);
  assert_int_equal(r.status, 200);
  assert_string_equal(http_header(&r, "Access-Control-Allow-Origin", v, sizeof v),
                      "http://localhost:3000");
  assert_string_equal(http_header(&r, "Access-Control-Allow-Headers", v, sizeof v), "Content-Type");
  assert_string_equal(http_header(&r, "Vary", v, sizeof v), "Origin");
  http_response_free(&r);
  int calls = s.calls;
  assert_int_equal(
      http_request_on_loop(&s.loop, port, "GET", "/x", "Origin: http://evil.com\r\n", NULL, 0, &r),
      0);
  assert_int_equal(r.status, 403);
  assert_string_equal(r.body, "Origin not allowed");
  http_response_free(&r);
  assert_int_equal(http_request_on_loop(&s.loop, port, "GET", "/x",
                                        "Origin: http://localhost:1\r\nOrigin: http://b\r\n", NULL,
                                        0, &r),
                   0);
  assert_int_equal(r.status, 400);
  assert_string_equal(r.body, "Only a single Origin header must be specified");
  http_response_free(&r);
  assert_int_equal(s.calls, calls);
  /* no Origin: no CORS header, request served */
  assert_int_equal(http_request_on_loop(&s.loop, port, "GET", "/x", NULL, NULL, 0, &r), 0);
  assert_int_equal(r.status, 200);
  assert_null(http_header(&r, "Access-Control-Allow-Origin", v, sizeof v));
  http_response_free(&r);
  stop(&s);

  const char *any[] = {"*"};
  start(&s, any, 1, 0);
  assert_int_equal(http_request_on_loop(&s.loop, ld_httpd_port(s.h), "GET", "/x",
                                        "Origin: https://whatever.io\r\n", NULL, 0, &r),
                   0);
  assert_string_equal(http_header(&r, "Access-Control-Allow-Origin", v, sizeof v), "*");
  assert_null(http_header(&r, "Vary", v, sizeof v));
  http_response_free(&r);
  stop(&s);
}

static void origin_patterns(void **state) {
  (void)state;
  assert_true(ld_httpd_origin_matches("*", "http://x"));
  assert_true(ld_httpd_origin_matches("localhost:*", "http://localhost:8080"));
  assert_true(ld_httpd_origin_matches("localhost:*", "https://LOCALHOST:1"));
  assert_false(ld_httpd_origin_matches("localhost:*", "ftp://localhost:1"));
  assert_false(ld_httpd_origin_matches("localhost:*", "http://localhostx:1"));
  assert_true(ld_httpd_origin_matches("http://a.b", "http://a.b"));
  assert_false(ld_httpd_origin_matches("http://a.b", "https://a.b"));
  assert_false(ld_httpd_origin_matches("a.b", "http://aXb"));
  assert_true(ld_httpd_origin_matches("https://*.example.org", "https://x.y.example.org"));
  assert_false(ld_httpd_origin_matches("https://*.example.org", "https://example.org"));
  assert_true(ld_httpd_origin_matches("a?b.net", "http://ab.net"));
  assert_true(ld_httpd_origin_matches("a?b.net", "http://axb.net"));
  assert_false(ld_httpd_origin_matches("a?b.net", "http://axxb.net"));
  assert_true(ld_httpd_origin_matches("127.0.0.1:8080", "http://127.0.0.1:8080"));
  char huge[LD_HTTPD_MAX_ORIGIN_LEN + 16] = "http://";
  memset(huge + 7, 'a', LD_HTTPD_MAX_ORIGIN_LEN);
  huge[LD_HTTPD_MAX_ORIGIN_LEN + 7] = '\0';
  assert_false(ld_httpd_origin_matches("*a*a*a*a*a*", huge));
}

static void on_connect(uv_connect_t *req, int status) {
  assert_int_equal(status, 0);
  *(bool *)req->data = true;
}

static void closing_answers_pending_requests(void **state) {
  (void)state;
  server_t s;
  start(&s, NULL, 0, 0);
  /* a raw client whose request the handler holds */
  uv_tcp_t tcp;
  uv_connect_t creq;
  uv_tcp_init(&s.loop, &tcp);
  struct sockaddr_in sa;
  uv_ip4_addr("127.0.0.1", ld_httpd_port(s.h), &sa);
  bool connected = false;
  creq.data = &connected;
  uv_tcp_connect(&creq, &tcp, (struct sockaddr *)&sa, on_connect);
  uv_write_t w;
  char req[] = "GET /later HTTP/1.1\r\nHost: x\r\n\r\n";
  uv_buf_t b = uv_buf_init(req, sizeof req - 1);
  while (!connected)
    uv_run(&s.loop, UV_RUN_ONCE);
  uv_write(&w, (uv_stream_t *)&tcp, &b, 1, NULL);
  while (s.held == NULL)
    uv_run(&s.loop, UV_RUN_ONCE);
  ld_http_request_t *held = s.held;
  ld_httpd_close(s.h, on_closed, &s);
  while (!s.closed)
    uv_run(&s.loop, UV_RUN_ONCE);
  /* the owner answers after the server is gone: the request is only freed */
  assert_int_equal(ld_http_respond_text(held, 200, "too late"), 0);
  uv_close((uv_handle_t *)&tcp, NULL);
  uv_run(&s.loop, UV_RUN_DEFAULT);
  assert_int_equal(uv_loop_close(&s.loop), 0);
}

/* One request on a new connection, waited for at most `ms`; returns its final state. */
static hconn_state_t request_once(server_t *s, hconn_t *c, const char *request, uint64_t ms) {
  assert_int_equal(hconn_open(c, ld_httpd_port(s->h)), 0);
  assert_int_equal(hconn_send(c, request), 0);
  hconn_state_t st;
  hconn_wait_all(&s->loop, c, 1, &st, ms);
  return st;
}

/* Suspended, idle keep-alive and waiting connections all count; the one beyond gets 503 at once
 * and leaves; when the others are gone a new client is served at once. */
static void refuses_over_the_limit_and_recovers(void **state) {
  (void)state;
  server_t s;
  start_limited(&s, 3, 0);
  hconn_t c[3];
  hconn_state_t st[3];
  assert_int_equal(request_once(&s, &c[0], HCONN_GET("/later"), 0), HCONN_PENDING);
  for (int i = 0; s.held == NULL && i < 1000; i++)
    hconn_wait_all(&s.loop, c, 1, st, 10);
  assert_non_null(s.held);
  assert_int_equal(request_once(&s, &c[1], HCONN_GET("/a"), WAIT_MS), HCONN_DONE);
  assert_int_equal(request_once(&s, &c[2], HCONN_GET("/b"), WAIT_MS), HCONN_DONE);
  ld_httpd_stats_t stats;
  ld_httpd_stats(s.h, &stats);
  assert_int_equal(stats.open, 3);
  assert_int_equal(stats.refused, 0);
  hconn_t extra;
  assert_int_equal(request_once(&s, &extra, HCONN_GET("/c"), ANSWER_MS), HCONN_DONE);
  assert_int_equal(extra.status, 503);
  assert_int_equal(hconn_poll(&extra), HCONN_CLOSED); /* and closed */
  ld_httpd_stats(s.h, &stats);
  assert_int_equal(stats.refused, 1);
  assert_int_equal(stats.accepted, 3);
  /* the held request is still answered, then everybody leaves */
  assert_int_equal(ld_http_respond_text(s.held, 202, "done later"), 0);
  s.held = NULL;
  assert_int_equal(hconn_wait_all(&s.loop, c, 1, st, WAIT_MS), 1);
  assert_int_equal(c[0].status, 202);
  for (int i = 0; i < 3; i++)
    hconn_close(&c[i]);
  hconn_t fresh;
  assert_int_equal(request_once(&s, &fresh, HCONN_GET("/d"), ANSWER_MS), HCONN_DONE);
  assert_int_equal(fresh.status, 200);
  hconn_close(&fresh);
  stop(&s);
}

/* At the limit, a client that has already gone does not count: a new client that arrives
 * before the server has noticed the departure is served, not refused. */
static void counts_out_clients_that_have_left(void **state) {
  (void)state;
  server_t s;
  start_limited(&s, 1, 0);
  hconn_t old, next;
  assert_int_equal(request_once(&s, &old, HCONN_GET("/a"), WAIT_MS), HCONN_DONE);
  /* the next client queues first, then the old one leaves, all before the loop runs again */
  assert_int_equal(hconn_open(&next, ld_httpd_port(s.h)), 0);
  assert_int_equal(hconn_send(&next, HCONN_GET("/b")), 0);
  hconn_close(&old);
  hconn_state_t st;
  assert_int_equal(hconn_wait_all(&s.loop, &next, 1, &st, ANSWER_MS), 1);
  assert_int_equal(next.status, 200);
  hconn_close(&next);
  ld_httpd_stats_t stats;
  ld_httpd_stats(s.h, &stats);
  assert_int_equal(stats.refused, 0);
  stop(&s);
}

/* Connections that stop sending halfway through their head are closed after timeout_s, and their
 * slots serve new clients at once. */
static void timed_out_connections_free_their_slots(void **state) {
  (void)state;
  server_t s;
  start_limited(&s, 2, 1);
  hconn_t c[2];
  hconn_state_t st[2];
  for (int i = 0; i < 2; i++) {
    assert_int_equal(hconn_open(&c[i], ld_httpd_port(s.h)), 0);
    assert_int_equal(hconn_send(&c[i], "GET /x HTTP/1.1\r\nHost: 127.0.0.1\r\n"), 0);
  }
  assert_int_equal(hconn_wait_all(&s.loop, c, 2, st, WAIT_MS), 0);
  assert_int_equal(st[0], HCONN_CLOSED);
  assert_int_equal(st[1], HCONN_CLOSED);
  assert_int_equal(s.calls, 0);
  hconn_t fresh;
  assert_int_equal(request_once(&s, &fresh, HCONN_GET("/y"), ANSWER_MS), HCONN_DONE);
  assert_int_equal(fresh.status, 200);
  hconn_close(&fresh);
  stop(&s);
}

/* Fills every free descriptor slot below a lowered RLIMIT_NOFILE with copies of stdin; returns
 * how many (their numbers in fds[]). */
static size_t exhaust_descriptors(int *fds, size_t cap) {
  size_t n = 0;
  while (n < cap) {
    int fd = dup(0);
    if (fd < 0)
      break;
    fds[n++] = fd;
  }
  return n;
}

/* Without a descriptor for the client, accepting pauses (a few attempts, not a spin) and resumes
 * once descriptors are free again: the waiting client is then served. */
static void pauses_accepting_when_out_of_descriptors(void **state) {
  (void)state;
  server_t s;
  start_limited(&s, 0, 0);
  hconn_t c;
  assert_int_equal(hconn_open(&c, ld_httpd_port(s.h)), 0);
  assert_int_equal(hconn_send(&c, HCONN_GET("/z")), 0);
  struct rlimit saved, low;
  assert_int_equal(getrlimit(RLIMIT_NOFILE, &saved), 0);
  int probe = dup(0);
  assert_true(probe >= 0);
  close(probe);
  low = saved;
  low.rlim_cur = (rlim_t)probe + 8;
  assert_int_equal(setrlimit(RLIMIT_NOFILE, &low), 0);
  int fds[16];
  size_t n = exhaust_descriptors(fds, 16);
  assert_true(n < 16);
  hconn_state_t st;
  hconn_wait_all(&s.loop, &c, 1, &st, 500); /* 500 ms without a descriptor */
  ld_httpd_stats_t stats;
  ld_httpd_stats(s.h, &stats);
  for (size_t i = 0; i < n; i++)
    close(fds[i]);
  assert_int_equal(setrlimit(RLIMIT_NOFILE, &saved), 0);
  assert_int_equal(st, HCONN_PENDING);
  assert_int_equal(stats.accepted, 0);
  assert_true(stats.accept_failures >= 1);
  assert_true(stats.accept_failures <= 20); /* one per 100 ms pause, not one per loop turn */
  assert_int_equal(hconn_wait_all(&s.loop, &c, 1, &st, WAIT_MS), 1);
  assert_int_equal(c.status, 200);
  hconn_close(&c);
  stop(&s);
}

static void refuses_bad_configuration(void **state) {
  (void)state;
  uv_loop_t loop;
  uv_loop_init(&loop);
  ld_httpd_config_t cfg;
  ld_httpd_config_default(&cfg);
  ld_httpd_t *h = NULL;
  cfg.loop = &loop;
  assert_int_equal(ld_httpd_new(&cfg, &h), LD_ERR_INVALID_ARG); /* no handler */
  cfg.handler = handler;
  cfg.address = "localhost";
  assert_int_equal(ld_httpd_new(&cfg, &h), LD_ERR_INVALID_ARG);
  cfg.address = "127.0.0.1";
  server_t s;
  cfg.user_data = &s;
  assert_int_equal(ld_httpd_new(&cfg, &h), 0);
  ld_httpd_t *h2 = NULL;
  cfg.port = ld_httpd_port(h);
  assert_int_equal(ld_httpd_new(&cfg, &h2), LD_ERR_ADDR_IN_USE);
  s.closed = false;
  ld_httpd_close(h, on_closed, &s);
  uv_run(&loop, UV_RUN_DEFAULT);
  assert_true(s.closed);
  cfg.address = "::1";
  cfg.port = 0;
  if (ld_httpd_new(&cfg, &h) == 0) /* IPv6 loopback may be missing in containers */
    ld_httpd_close(h, NULL, NULL);
  uv_run(&loop, UV_RUN_DEFAULT);
  assert_int_equal(uv_loop_close(&loop), 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(serves_text_json_and_raw_paths),
      cmocka_unit_test(answers_after_the_handler_returned),
      cmocka_unit_test(caps_the_body),
      cmocka_unit_test(cors_as_nwaku),
      cmocka_unit_test(origin_patterns),
      cmocka_unit_test(closing_answers_pending_requests),
      cmocka_unit_test(refuses_over_the_limit_and_recovers),
      cmocka_unit_test(counts_out_clients_that_have_left),
      cmocka_unit_test(timed_out_connections_free_their_slots),
      cmocka_unit_test(pauses_accepting_when_out_of_descriptors),
      cmocka_unit_test(refuses_bad_configuration),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
