#include "p2p/reqresp.h"

#include <stdlib.h>
#include <string.h>
#include <uv.h>

#include "base/cursor.h"
#include "base/error.h"
#include "base/log.h"
#include "base/varint.h"

#define LOG_TOPIC "reqresp"

int ld_reqresp_read_frame(const uint8_t *data, size_t len, size_t max_body, const uint8_t **body,
                          size_t *body_len) {
  ld_cursor_t c;
  ld_cursor_init(&c, data, len);
  const uint8_t *p;
  size_t n;
  int rc = ld_cursor_lp_bytes(&c, max_body, &p, &n);
  if (rc != 0)
    return rc;
  if (body != NULL)
    *body = p;
  if (body_len != NULL)
    *body_len = n;
  return (int)c.pos;
}

int ld_reqresp_append_frame(ld_buf_t *out, size_t body_len, uint8_t **body) {
  size_t total = ld_varint_len(body_len) + body_len;
  int rc = ld_buf_reserve(out, total);
  if (rc != 0)
    return rc;
  uint8_t *p = out->data + out->len;
  *body = p + ld_varint_encode(body_len, p);
  out->len += total;
  return 0;
}

/* ---- calls ---------------------------------------------------------------------------------- */

struct ld_reqresp_call {
  ld_reqresp_opts_t opts;
  ld_stream_t *stream;
  ld_buf_t rx;
  ld_buf_t req; /* client: the request, until it is written */
  bool has_req; /* client: write req and half-close at once */
  bool is_server;
  bool finished;  /* the result was reported, or the call was cancelled */
  bool cancelled; /* no callback at all any more */
  bool reset;     /* ld_stream_reset was called */
  bool released;
  bool deferred; /* server: on_request answers later (ld_reqresp_respond) */
  uv_timer_t timer;
  ld_reqresp_done_fn done;
  const ld_reqresp_server_t *srv;
  void *user_data;
};

static void on_timer_closed(uv_handle_t *h) {
  ld_reqresp_call_t *call = h->data;
  ld_buf_clear(&call->rx);
  ld_buf_clear(&call->req);
  free(call);
}

/* The stream is over (or was never opened): reclaim the call from the loop. */
static void release(ld_reqresp_call_t *call) {
  if (call->released)
    return;
  call->released = true;
  call->stream = NULL;
  uv_timer_stop(&call->timer);
  uv_close((uv_handle_t *)&call->timer, on_timer_closed);
}

static void reset_stream(ld_reqresp_call_t *call) {
  if (call->stream != NULL && !call->reset) {
    call->reset = true;
    ld_stream_reset(call->stream);
  }
}

static void on_timeout(uv_timer_t *t);

static ld_reqresp_call_t *call_new(uv_loop_t *loop, const ld_reqresp_opts_t *opts) {
  ld_reqresp_call_t *call = calloc(1, sizeof *call);
  if (call == NULL)
    return NULL;
  if (opts != NULL)
    call->opts = *opts;
  if (call->opts.max_bytes == 0)
    call->opts.max_bytes = LD_REQRESP_DEFAULT_MAX_BYTES;
  if (call->opts.timeout_ms == 0)
    call->opts.timeout_ms = LD_REQRESP_DEFAULT_TIMEOUT_MS;
  ld_buf_init(&call->rx);
  ld_buf_init(&call->req);
  uv_timer_init(loop, &call->timer);
  call->timer.data = call;
  uv_timer_start(&call->timer, on_timeout, call->opts.timeout_ms, 0);
  return call;
}

void ld_reqresp_cancel(ld_reqresp_call_t *call) {
  if (call == NULL)
    return;
  call->finished = true;
  call->cancelled = true;
  reset_stream(call);
}

/* ---- results -------------------------------------------------------------------------------- */

static void fail(ld_reqresp_call_t *call, int err) {
  if (call->finished)
    return;
  call->finished = true;
  if (!call->is_server)
    call->done(NULL, 0, err, call->user_data);
  else if (call->srv->on_failed != NULL)
    call->srv->on_failed(call->stream, err, call->user_data);
}

/* Writes a server's answer (when `err` is 0) and closes the stream's write side; an answer that
 * cannot be written is reported to the server's on_failed; the stream is reset on `err` or on a
 * failed write. */
static void write_answer(ld_reqresp_call_t *call, const uint8_t *data, size_t len, int err) {
  int rc = err;
  if (rc == 0 && len > 0)
    rc = ld_stream_write(call->stream, data, len);
  if (rc == 0)
    rc = ld_stream_close_write(call->stream);
  if (rc != 0 && err == 0) {
    LD_DEBUG(LOG_TOPIC, "%s: answer not written: %s", ld_stream_protocol(call->stream),
             ld_errname(rc));
    if (call->srv->on_failed != NULL)
      call->srv->on_failed(call->stream, rc, call->user_data);
  }
  if (rc != 0)
    reset_stream(call);
}

static void answer(ld_reqresp_call_t *call) {
  ld_buf_t resp;
  ld_buf_init(&resp);
  int rc = call->srv->on_request(call->stream, call->rx.data, call->rx.len, &resp, call->user_data);
  if (rc == LD_REQRESP_LATER && !call->cancelled && !call->reset) {
    call->deferred = true;
    ld_buf_clear(&resp);
    return;
  }
  if (call->cancelled) {
    if (rc != 0)
      reset_stream(call);
  } else {
    write_answer(call, resp.data, resp.len, rc);
  }
  ld_buf_clear(&resp);
}

/* The message is complete in call->rx. */
static void complete(ld_reqresp_call_t *call) {
  if (call->finished)
    return;
  call->finished = true;
  if (call->is_server)
    answer(call);
  else
    call->done(call->rx.data, call->rx.len, 0, call->user_data);
}

static void on_timeout(uv_timer_t *t) {
  ld_reqresp_call_t *call = t->data;
  if (!call->finished && call->opts.frame_max == 0 && call->opts.partial_on_timeout &&
      call->rx.len > 0)
    complete(call);
  else
    fail(call, LD_ERR_TIMEOUT);
  reset_stream(call);
}

void ld_reqresp_respond(ld_reqresp_call_t *call, const uint8_t *resp, size_t len, int err) {
  if (call == NULL || !call->deferred)
    return;
  call->deferred = false;
  if (call->cancelled || call->reset || call->stream == NULL)
    return;
  write_answer(call, resp, len, err);
}

/* ---- stream handler ------------------------------------------------------------------------- */

static void on_data(ld_stream_t *s, const uint8_t *data, size_t len) {
  ld_reqresp_call_t *call = ld_stream_user_data(s);
  if (call->finished)
    return;
  int rc = call->rx.len + len > call->opts.max_bytes ? LD_ERR_TOO_LARGE
                                                     : ld_buf_append(&call->rx, data, len);
  if (rc == 0 && call->opts.frame_max > 0) {
    rc = ld_reqresp_read_frame(call->rx.data, call->rx.len, call->opts.frame_max, NULL, NULL);
    if (rc == LD_ERR_TRUNCATED)
      return;
  }
  if (rc < 0) {
    fail(call, rc);
    reset_stream(call);
  } else if (call->opts.frame_max > 0) {
    complete(call);
  }
}

static void on_eof(ld_stream_t *s) {
  ld_reqresp_call_t *call = ld_stream_user_data(s);
  if (!call->finished && call->opts.frame_max > 0) {
    fail(call, call->rx.len == 0 ? LD_ERR_PROTOCOL : LD_ERR_TRUNCATED);
    reset_stream(call);
    return;
  }
  complete(call);
  if (!call->reset && !call->deferred)
    ld_stream_close_write(s);
}

static void on_close(ld_stream_t *s, int err) {
  ld_reqresp_call_t *call = ld_stream_user_data(s);
  fail(call, err != 0 ? err : LD_ERR_PROTOCOL);
  bool notify = call->is_server && !call->cancelled && call->srv->on_closed != NULL;
  void *ud = call->user_data;
  const ld_reqresp_server_t *srv = call->srv;
  release(call);
  if (notify)
    srv->on_closed(ud);
}

static const ld_stream_handler_t g_handler = {
    .on_data = on_data,
    .on_eof = on_eof,
    .on_close = on_close,
};

/* ---- client --------------------------------------------------------------------------------- */

static void on_open(ld_stream_t *s, int err, void *user_data) {
  ld_reqresp_call_t *call = user_data;
  if (s == NULL) {
    fail(call, err);
    release(call);
    return;
  }
  call->stream = s;
  ld_stream_set_handler(s, &g_handler, call);
  if (call->finished) {
    reset_stream(call); /* cancelled or timed out while opening */
    return;
  }
  int rc = 0;
  if (call->has_req && call->req.len > 0)
    rc = ld_stream_write(s, call->req.data, call->req.len);
  if (rc == 0 && call->has_req)
    rc = ld_stream_close_write(s);
  ld_buf_clear(&call->req);
  if (rc != 0) {
    fail(call, rc);
    reset_stream(call);
  }
}

int ld_reqresp_request(ld_switch_t *sw, ld_conn_t *c, const char *protocol, const uint8_t *req,
                       size_t req_len, const ld_reqresp_opts_t *opts, ld_reqresp_done_fn done,
                       void *user_data, ld_reqresp_call_t **out) {
  if (sw == NULL || c == NULL || protocol == NULL || done == NULL || (req == NULL && req_len > 0))
    return LD_ERR_INVALID_ARG;
  ld_reqresp_call_t *call = call_new(ld_switch_loop(sw), opts);
  if (call == NULL)
    return LD_ERR_NOMEM;
  call->done = done;
  call->user_data = user_data;
  call->has_req = req != NULL;
  int rc = req_len > 0 ? ld_buf_append(&call->req, req, req_len) : 0;
  if (rc == 0)
    rc = ld_switch_open_stream(sw, c, &protocol, 1, on_open, call);
  if (rc != 0) {
    call->finished = true;
    release(call);
    return rc;
  }
  if (out != NULL)
    *out = call;
  return 0;
}

/* ---- server --------------------------------------------------------------------------------- */

int ld_reqresp_serve(ld_switch_t *sw, ld_stream_t *s, const ld_reqresp_opts_t *opts,
                     const ld_reqresp_server_t *srv, void *user_data, ld_reqresp_call_t **out) {
  if (s == NULL)
    return LD_ERR_INVALID_ARG;
  if (sw == NULL || srv == NULL || srv->on_request == NULL) {
    ld_stream_reset(s);
    return LD_ERR_INVALID_ARG;
  }
  ld_reqresp_call_t *call = call_new(ld_switch_loop(sw), opts);
  if (call == NULL) {
    ld_stream_reset(s);
    return LD_ERR_NOMEM;
  }
  call->is_server = true;
  call->srv = srv;
  call->user_data = user_data;
  call->stream = s;
  ld_stream_set_handler(s, &g_handler, call);
  if (out != NULL)
    *out = call;
  return 0;
}
