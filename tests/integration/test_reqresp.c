/* One request per stream over loopback TCP: switch A serves a few protocols (a reqresp echo, a
 * flood, a silent peer, a resetting peer), switch B dials A and calls them. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>
#include <uv.h>

#include "base/error.h"
#include "p2p/reqresp.h"
#include "p2p/switch.h"
#include "switch_harness.h"

#define P_ECHO "/rr/echo/1.0.0"
#define P_FLOOD "/rr/flood/1.0.0"
#define P_SILENT "/rr/silent/1.0.0"
#define P_RESET "/rr/reset/1.0.0"
#define SHORT_MS 300

typedef struct result {
  bool done;
  int calls;
  int err;
  uint8_t data[64];
  size_t len;
} result_t;

typedef struct server_log {
  int requests, failed, closed;
  int last_err;
} server_log_t;

static uv_loop_t g_loop;
static ld_switch_t *g_a, *g_b;
static ld_conn_t *g_conn;
static server_log_t g_srv;

/* ---- server side ---------------------------------------------------------------------------- */

static int echo_request(ld_stream_t *s, const uint8_t *req, size_t len, ld_buf_t *resp, void *ud) {
  (void)s;
  (void)ud;
  g_srv.requests++;
  if (len >= 2 && req[1] == '!')
    return LD_ERR_INVALID_ARG; /* refuse: the stream is reset */
  return ld_buf_append(resp, req, len);
}

static void echo_failed(ld_stream_t *s, int err, void *ud) {
  (void)s;
  (void)ud;
  g_srv.failed++;
  g_srv.last_err = err;
}

static void echo_closed(void *ud) {
  (void)ud;
  g_srv.closed++;
}

static const ld_reqresp_server_t g_echo_server = {
    .on_request = echo_request,
    .on_failed = echo_failed,
    .on_closed = echo_closed,
};

static void accept_echo(ld_stream_t *s, void *ud) {
  (void)ud;
  ld_reqresp_opts_t o = {.max_bytes = 64, .frame_max = 32, .timeout_ms = SHORT_MS};
  assert_int_equal(ld_reqresp_serve(g_a, s, &o, &g_echo_server, NULL, NULL), 0);
}

static void ignore_data(ld_stream_t *s, const uint8_t *data, size_t len) {
  (void)s;
  (void)data;
  (void)len;
}

static void reset_on_data(ld_stream_t *s, const uint8_t *data, size_t len) {
  (void)data;
  (void)len;
  ld_stream_reset(s);
}

static void quiet_close(ld_stream_t *s, int err) {
  (void)s;
  (void)err;
}

static const ld_stream_handler_t g_silent = {.on_data = ignore_data, .on_close = quiet_close};
static const ld_stream_handler_t g_resetter = {.on_data = reset_on_data, .on_close = quiet_close};

static void accept_silent(ld_stream_t *s, void *ud) {
  (void)ud;
  ld_stream_set_handler(s, &g_silent, NULL);
}

static void accept_reset(ld_stream_t *s, void *ud) {
  (void)ud;
  ld_stream_set_handler(s, &g_resetter, NULL);
}

static void accept_flood(ld_stream_t *s, void *ud) {
  (void)ud;
  uint8_t junk[1000];
  memset(junk, 0x5a, sizeof junk);
  ld_stream_set_handler(s, &g_silent, NULL);
  assert_int_equal(ld_stream_write(s, junk, sizeof junk), 0);
  ld_stream_close_write(s);
}

/* ---- client side ---------------------------------------------------------------------------- */

static void on_done(const uint8_t *resp, size_t len, int err, void *ud) {
  result_t *r = ud;
  r->calls++;
  r->done = true;
  r->err = err;
  r->len = len < sizeof r->data ? len : sizeof r->data;
  if (r->len > 0)
    memcpy(r->data, resp, r->len);
  if (err != 0)
    assert_null(resp);
}

static bool is_done(void *ud) {
  return ((result_t *)ud)->done;
}

static int call(const char *protocol, const uint8_t *req, size_t len, const ld_reqresp_opts_t *o,
                result_t *r) {
  memset(r, 0, sizeof *r);
  int rc = ld_reqresp_request(g_b, g_conn, protocol, req, len, o, on_done, r, NULL);
  if (rc == 0)
    assert_true(sh_run_until(&g_loop, is_done, r, 10000));
  return rc;
}

static int setup(void **state) {
  (void)state;
  memset(&g_srv, 0, sizeof g_srv);
  assert_int_equal(uv_loop_init(&g_loop), 0);
  g_a = sh_switch_new(&g_loop, NULL);
  g_b = sh_switch_new(&g_loop, NULL);
  assert_int_equal(ld_switch_handle(g_a, P_ECHO, accept_echo, NULL), 0);
  assert_int_equal(ld_switch_handle(g_a, P_FLOOD, accept_flood, NULL), 0);
  assert_int_equal(ld_switch_handle(g_a, P_SILENT, accept_silent, NULL), 0);
  assert_int_equal(ld_switch_handle(g_a, P_RESET, accept_reset, NULL), 0);
  ld_multiaddr_t addr;
  sh_listen_local(g_a, &addr);
  int err = -1;
  g_conn = sh_dial_wait(g_b, &g_loop, &addr, &err);
  assert_int_equal(err, 0);
  return 0;
}

static int teardown(void **state) {
  (void)state;
  sh_switch_close(g_b, &g_loop);
  sh_switch_close(g_a, &g_loop);
  sh_run_for(&g_loop, 50);
  assert_int_equal(uv_loop_close(&g_loop), 0);
  return 0;
}

/* ---- tests ---------------------------------------------------------------------------------- */

static void framed_request_is_answered(void **state) {
  (void)state;
  const uint8_t req[] = {0x03, 'a', 'b', 'c'};
  ld_reqresp_opts_t o = {.max_bytes = 64, .frame_max = 32};
  result_t r;
  assert_int_equal(call(P_ECHO, req, sizeof req, &o, &r), 0);
  assert_int_equal(r.err, 0);
  assert_int_equal(r.len, sizeof req);
  assert_memory_equal(r.data, req, sizeof req);
  sh_run_for(&g_loop, 50);
  assert_int_equal(r.calls, 1);
  assert_int_equal(g_srv.requests, 1);
  assert_int_equal(g_srv.failed, 0);
  assert_int_equal(g_srv.closed, 1);
}

static void response_until_eof(void **state) {
  (void)state;
  const uint8_t req[] = {0x01, 'z'};
  result_t r;
  assert_int_equal(call(P_ECHO, req, sizeof req, NULL, &r), 0); /* EOF mode: all defaults */
  assert_int_equal(r.err, 0);
  assert_int_equal(r.len, sizeof req);
}

static void handler_error_resets(void **state) {
  (void)state;
  const uint8_t req[] = {0x01, '!'};
  ld_reqresp_opts_t o = {.frame_max = 32};
  result_t r;
  assert_int_equal(call(P_ECHO, req, sizeof req, &o, &r), 0);
  assert_int_equal(r.err, LD_ERR_RESET);
  assert_int_equal(g_srv.requests, 1);
}

static void response_cap_exceeded(void **state) {
  (void)state;
  ld_reqresp_opts_t o = {.max_bytes = 100};
  result_t r;
  assert_int_equal(call(P_FLOOD, (const uint8_t *)"", 0, &o, &r), 0);
  assert_int_equal(r.err, LD_ERR_TOO_LARGE);
  o.max_bytes = 1000; /* exactly the cap is fine */
  assert_int_equal(call(P_FLOOD, (const uint8_t *)"", 0, &o, &r), 0);
  assert_int_equal(r.err, 0);
  assert_int_equal(r.len, sizeof r.data);
}

static void oversized_frame_refused(void **state) {
  (void)state;
  ld_reqresp_opts_t o = {.frame_max = 16};
  result_t r;
  assert_int_equal(call(P_FLOOD, (const uint8_t *)"", 0, &o, &r), 0);
  assert_int_equal(r.err, LD_ERR_TOO_LARGE); /* 0x5a 0x5a: a frame of 90 bytes */
}

static void silent_peer_times_out(void **state) {
  (void)state;
  ld_reqresp_opts_t o = {.timeout_ms = SHORT_MS};
  result_t r;
  assert_int_equal(call(P_SILENT, (const uint8_t *)"x", 1, &o, &r), 0);
  assert_int_equal(r.err, LD_ERR_TIMEOUT);
  sh_run_for(&g_loop, 50);
  assert_int_equal(r.calls, 1);
}

static void peer_reset_is_reported(void **state) {
  (void)state;
  result_t r;
  assert_int_equal(call(P_RESET, (const uint8_t *)"x", 1, NULL, &r), 0);
  assert_int_equal(r.err, LD_ERR_RESET);
}

static void unsupported_protocol(void **state) {
  (void)state;
  result_t r;
  assert_int_equal(call("/rr/none/1.0.0", (const uint8_t *)"x", 1, NULL, &r), 0);
  assert_int_equal(r.err, LD_ERR_PROTOCOL_UNSUPPORTED);
}

static void bad_arguments_never_call_back(void **state) {
  (void)state;
  result_t r = {0};
  assert_int_equal(ld_reqresp_request(g_b, g_conn, P_ECHO, NULL, 3, NULL, on_done, &r, NULL),
                   LD_ERR_INVALID_ARG);
  assert_int_equal(ld_reqresp_request(g_b, g_conn, P_ECHO, NULL, 0, NULL, NULL, &r, NULL),
                   LD_ERR_INVALID_ARG);
  sh_run_for(&g_loop, 50);
  assert_int_equal(r.calls, 0);
}

static void owner_gone_before_and_after_open(void **state) {
  (void)state;
  result_t r1 = {0}, r2 = {0};
  ld_reqresp_call_t *c1 = NULL, *c2 = NULL;
  assert_int_equal(
      ld_reqresp_request(g_b, g_conn, P_SILENT, (const uint8_t *)"x", 1, NULL, on_done, &r1, &c1),
      0);
  ld_reqresp_cancel(c1); /* still negotiating */
  assert_int_equal(
      ld_reqresp_request(g_b, g_conn, P_SILENT, (const uint8_t *)"x", 1, NULL, on_done, &r2, &c2),
      0);
  sh_run_for(&g_loop, 200); /* open and written */
  ld_reqresp_cancel(c2);
  sh_run_for(&g_loop, 200);
  assert_int_equal(r1.calls, 0);
  assert_int_equal(r2.calls, 0);
}

static void server_times_out_a_silent_client(void **state) {
  (void)state;
  ld_reqresp_opts_t o = {.timeout_ms = 5000};
  result_t r;
  /* no request and no half-close: the server waits for a frame that never comes */
  assert_int_equal(call(P_ECHO, NULL, 0, &o, &r), 0);
  assert_int_equal(r.err, LD_ERR_RESET);
  assert_int_equal(g_srv.failed, 1);
  assert_int_equal(g_srv.last_err, LD_ERR_TIMEOUT);
  sh_run_for(&g_loop, 50);
  assert_int_equal(g_srv.closed, 1);
  assert_int_equal(g_srv.requests, 0);
}

static void server_sees_truncated_request(void **state) {
  (void)state;
  const uint8_t req[] = {0x05, 'a'};
  result_t r;
  assert_int_equal(call(P_ECHO, req, sizeof req, NULL, &r), 0);
  assert_int_equal(r.err, LD_ERR_RESET);
  assert_int_equal(g_srv.last_err, LD_ERR_TRUNCATED);
}

#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)

int main(void) {
  const struct CMUnitTest tests[] = {
      T(framed_request_is_answered),
      T(response_until_eof),
      T(handler_error_resets),
      T(response_cap_exceeded),
      T(oversized_frame_refused),
      T(silent_peer_times_out),
      T(peer_reset_is_reported),
      T(unsupported_protocol),
      T(bad_arguments_never_call_back),
      T(owner_gone_before_and_after_open),
      T(server_times_out_a_silent_client),
      T(server_sees_truncated_request),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
