#include "child_harness.h"

#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include <cmocka.h>

#include "base/clock.h"

bool ch_program_ready(void) {
  signal(SIGPIPE, SIG_IGN);
  if (getenv("LD_BIN") != NULL)
    return true;
  printf("LD_BIN is not set: skipping the program tests\n");
  return false;
}

static void on_alloc(uv_handle_t *h, size_t suggested, uv_buf_t *buf) {
  (void)suggested;
  ch_child_t *c = h->data;
  bool is_out = h == (uv_handle_t *)&c->out;
  char *base = is_out ? c->stdout_buf : c->stderr_buf;
  size_t len = is_out ? c->out_len : c->err_len;
  *buf = uv_buf_init(base + len, (unsigned)(CH_OUTPUT_MAX - 1 - len));
}

static void on_closed(uv_handle_t *h) {
  ((ch_child_t *)h->data)->closed++;
}

static void on_read(uv_stream_t *s, ssize_t n, const uv_buf_t *buf) {
  (void)buf;
  ch_child_t *c = s->data;
  if (n > 0) {
    bool is_out = s == (uv_stream_t *)&c->out;
    size_t *len = is_out ? &c->out_len : &c->err_len;
    *len += (size_t)n;
    (is_out ? c->stdout_buf : c->stderr_buf)[*len] = '\0';
  } else if (n < 0) {
    uv_close((uv_handle_t *)s, on_closed);
  }
}

static void on_exit_cb(uv_process_t *p, int64_t status, int signal) {
  (void)signal;
  ch_child_t *c = p->data;
  c->exited = true;
  c->status = status;
  uv_close((uv_handle_t *)p, on_closed);
}

ch_child_t *ch_spawn(uv_loop_t *loop, const char *bin, const char *const *args) {
  ch_child_t *c = calloc(1, sizeof *c);
  assert_non_null(c);
  c->loop = loop;
  char *argv[CH_MAX_ARGS + 2];
  size_t n = 0;
  argv[n++] = (char *)bin;
  for (; args[n - 1] != NULL && n <= CH_MAX_ARGS; n++)
    argv[n] = (char *)args[n - 1];
  argv[n] = NULL;
  uv_pipe_init(loop, &c->out, 0);
  uv_pipe_init(loop, &c->err, 0);
  c->proc.data = c->out.data = c->err.data = c;
  uv_stdio_container_t stdio[3] = {
      {.flags = UV_IGNORE},
      {.flags = UV_CREATE_PIPE | UV_WRITABLE_PIPE, .data.stream = (uv_stream_t *)&c->out},
      {.flags = UV_CREATE_PIPE | UV_WRITABLE_PIPE, .data.stream = (uv_stream_t *)&c->err},
  };
  uv_process_options_t opts = {
      .exit_cb = on_exit_cb, .file = bin, .args = argv, .stdio_count = 3, .stdio = stdio};
  assert_int_equal(uv_spawn(loop, &c->proc, &opts), 0);
  uv_read_start((uv_stream_t *)&c->out, on_alloc, on_read);
  uv_read_start((uv_stream_t *)&c->err, on_alloc, on_read);
  return c;
}

int64_t ch_finish(ch_child_t *c, uint64_t timeout_ms) {
  uint64_t deadline = ld_now_ms() + timeout_ms;
  while (!(c->exited && c->closed == 3) && ld_now_ms() < deadline)
    uv_run(c->loop, UV_RUN_ONCE);
  assert_true(c->exited && c->closed == 3);
  return c->status;
}

void ch_expect_success(ch_child_t *c, uint64_t timeout_ms) {
  int64_t status = ch_finish(c, timeout_ms);
  if (status != 0)
    fail_msg("exit %lld, stderr '%s'", (long long)status, c->stderr_buf);
}
