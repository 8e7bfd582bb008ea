/* The libmicrohttpd adapter on a libuv loop: synchronous and deferred answers, the body cap, CORS
 * as nwaku's --rest-allow-origin, raw paths, and closing with requests still pending. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <uv.h>

#include "base/error.h"
#include "http_client.h"
#include "rest/httpd.h"

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

static void start(server_t *s, const char *const *origins, size_t n_origins, size_t max_body) {
  memset(s, 0, sizeof *s);
  uv_loop_init(&s->loop);
  ld_httpd_config_t cfg;
  ld_httpd_config_default(&cfg);
  cfg.loop = &s->loop;
  cfg.port = 0;
  cfg.handler = handler;
  cfg.user_data = s;
  cfg.allowed_origins = origins;
  cfg.n_allowed_origins = n_origins;
  if (max_body > 0)
    cfg.max_body = max_body;
  assert_int_equal(ld_httpd_new(&cfg, &s->h), 0);
  assert_true(ld_httpd_port(s->h) > 0);
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
      cmocka_unit_test(refuses_bad_configuration),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
