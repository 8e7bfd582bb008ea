#include "switch_harness.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "base/clock.h"
#include "base/error.h"
#include "base/log.h"
#include "p2p/noise_internal.h"

/* ---- running the loop -------------------------------------------------------------------- */

static void tick(uv_timer_t *t) {
  (void)t;
}

static void tick_closed(uv_handle_t *h) {
  free(h);
}

bool sh_run_until(uv_loop_t *loop, bool (*cond)(void *ud), void *ud, uint64_t timeout_ms) {
  uv_timer_t *t = malloc(sizeof *t);
  assert_non_null(t);
  uv_timer_init(loop, t);
  uv_timer_start(t, tick, 5, 5);
  uint64_t end = ld_now_ms() + timeout_ms;
  bool ok;
  while (!(ok = cond(ud)) && ld_now_ms() < end)
    uv_run(loop, UV_RUN_ONCE);
  uv_close((uv_handle_t *)t, tick_closed);
  uv_run(loop, UV_RUN_NOWAIT);
  return ok;
}

static bool never(void *ud) {
  (void)ud;
  return false;
}

void sh_run_for(uv_loop_t *loop, uint64_t ms) {
  sh_run_until(loop, never, NULL, ms);
}

/* ---- switches ---------------------------------------------------------------------------- */

ld_switch_t *sh_switch_new(uv_loop_t *loop, const ld_switch_config_t *cfg) {
  static ld_privkey_t keys[64];
  static size_t n_keys;
  assert_true(n_keys < 64);
  ld_privkey_t *key = &keys[n_keys++];
  assert_int_equal(ld_privkey_generate(key, LD_KEY_ED25519), 0);
  ld_switch_config_t c;
  if (cfg != NULL)
    c = *cfg;
  else
    ld_switch_config_default(&c);
  c.loop = loop;
  c.identity = key;
  ld_switch_t *sw = ld_switch_new(&c);
  assert_non_null(sw);
  return sw;
}

void sh_listen_local(ld_switch_t *sw, ld_multiaddr_t *out) {
  ld_multiaddr_t any;
  assert_int_equal(ld_multiaddr_parse(&any, "/ip4/127.0.0.1/tcp/0"), 0);
  assert_int_equal(ld_switch_listen(sw, &any), 0);
  size_t n = ld_switch_listen_addrs(sw, out, 1);
  assert_true(n >= 1);
  const ld_peerid_t *id = ld_switch_peer_id(sw);
  assert_int_equal(ld_multiaddr_push(out, LD_MA_P2P, id->bytes, id->len), 0);
}

ld_multiaddr_t sh_strip_peer(const ld_multiaddr_t *addr) {
  ld_multiaddr_t a = *addr;
  ld_multiaddr_peerid(&a, NULL, true);
  return a;
}

static void switch_done(void *ud) {
  *(bool *)ud = true;
}

static bool flag_set(void *ud) {
  return *(bool *)ud;
}

void sh_switch_close(ld_switch_t *sw, uv_loop_t *loop) {
  bool done = false;
  ld_switch_close(sw, switch_done, &done);
  assert_true(sh_run_until(loop, flag_set, &done, 10000));
  sh_run_for(loop, 20); /* let the close callbacks free the handles */
}

/* ---- echo -------------------------------------------------------------------------------- */

static void echo_data(ld_stream_t *s, const uint8_t *data, size_t len) {
  int rc = ld_stream_write(s, data, len);
  if (rc != 0)
    ld_stream_reset(s);
}

static void echo_eof(ld_stream_t *s) {
  ld_stream_close_write(s);
}

static void echo_close(ld_stream_t *s, int err) {
  (void)s;
  (void)err;
}

static const ld_stream_handler_t echo_handler = {
    .on_data = echo_data,
    .on_eof = echo_eof,
    .on_close = echo_close,
};

static void echo_accept(ld_stream_t *s, void *ud) {
  (void)ud;
  ld_stream_set_handler(s, &echo_handler, NULL);
}

void sh_register_echo(ld_switch_t *sw) {
  assert_int_equal(ld_switch_handle(sw, SH_ECHO, echo_accept, NULL), 0);
}

/* ---- events ------------------------------------------------------------------------------ */

static void ev_connected(ld_conn_t *c, void *ud) {
  sh_events_t *ev = ud;
  ev->connected++;
  ev->last_connected = c;
}

static void ev_disconnected(ld_conn_t *c, int reason, void *ud) {
  sh_events_t *ev = ud;
  (void)c;
  ev->disconnected++;
  ev->last_reason = reason;
}

static const ld_switch_events_t tracked = {.on_connected = ev_connected,
                                           .on_disconnected = ev_disconnected};

void sh_track_events(ld_switch_t *sw, sh_events_t *ev) {
  memset(ev, 0, sizeof *ev);
  assert_int_equal(ld_switch_add_listener(sw, &tracked, ev), 0);
}

typedef struct dial_result {
  bool done;
  int err;
  ld_conn_t *conn;
} dial_result_t;

static void dialed(ld_conn_t *c, int err, void *ud) {
  dial_result_t *r = ud;
  r->done = true;
  r->err = err;
  r->conn = c;
}

ld_conn_t *sh_dial_wait(ld_switch_t *sw, uv_loop_t *loop, const ld_multiaddr_t *addr, int *err) {
  dial_result_t r = {0};
  int rc = ld_switch_dial(sw, addr, dialed, &r);
  if (rc != 0) {
    *err = rc;
    return NULL;
  }
  assert_true(sh_run_until(loop, flag_set, &r.done, 20000));
  *err = r.err;
  return r.conn;
}

/* ---- log capture ------------------------------------------------------------------------- */

static FILE *log_file;

void sh_log_capture(void) {
  if (log_file == NULL)
    log_file = tmpfile();
  assert_non_null(log_file);
  ld_log_set_output(log_file);
}

bool sh_log_contains(const char *needle) {
  fflush(log_file);
  long n = ftell(log_file);
  if (n <= 0)
    return false;
  char *text = malloc((size_t)n + 1);
  assert_non_null(text);
  ssize_t got = pread(fileno(log_file), text, (size_t)n, 0);
  text[got > 0 ? got : 0] = '\0';
  bool found = strstr(text, needle) != NULL;
  free(text);
  return found;
}

void sh_log_release(void) {
  ld_log_set_output(stderr);
  if (log_file != NULL && getenv("SH_LOG_DUMP") != NULL) {
    fflush(log_file);
    char buf[4096];
    ssize_t n;
    off_t off = 0;
    while ((n = pread(fileno(log_file), buf, sizeof buf, off)) > 0) {
      fwrite(buf, 1, (size_t)n, stderr);
      off += n;
    }
  }
  if (log_file != NULL)
    fclose(log_file);
  log_file = NULL;
}

/* ---- raw TCP clients --------------------------------------------------------------------- */

static void raw_alloc(uv_handle_t *h, size_t suggested, uv_buf_t *buf) {
  (void)h;
  static char storage[65536];
  (void)suggested;
  *buf = uv_buf_init(storage, sizeof storage);
}

static void raw_read(uv_stream_t *s, ssize_t n, const uv_buf_t *buf) {
  sh_raw_t *r = s->data;
  if (n < 0) {
    r->eof = true;
    r->status = (int)n;
    uv_read_stop(s);
    return;
  }
  if (n == 0)
    return;
  if (r->on_read != NULL)
    r->on_read(r, (const uint8_t *)buf->base, (size_t)n);
  else
    ld_buf_append(&r->rx, buf->base, (size_t)n);
}

static void raw_connected(uv_connect_t *req, int status) {
  sh_raw_t *r = req->data;
  r->status = status;
  r->connected = status == 0;
  if (status != 0) {
    r->eof = true;
    return;
  }
  struct sockaddr_storage ss;
  int len = sizeof ss;
  uv_tcp_getsockname(&r->tcp, (struct sockaddr *)&ss, &len);
  ld_multiaddr_from_sockaddr(&r->local, &ss);
  uv_read_start((uv_stream_t *)&r->tcp, raw_alloc, raw_read);
}

static bool raw_settled(void *ud) {
  sh_raw_t *r = ud;
  return r->connected || r->eof;
}

void sh_raw_connect(sh_raw_t *r, uv_loop_t *loop, const ld_multiaddr_t *addr) {
  memset(r, 0, sizeof *r);
  r->loop = loop;
  ld_buf_init(&r->rx);
  struct sockaddr_storage ss;
  assert_int_equal(ld_multiaddr_to_sockaddr(addr, &ss), 0);
  uv_tcp_init(loop, &r->tcp);
  r->tcp.data = r;
  r->connect_req.data = r;
  assert_int_equal(uv_tcp_connect(&r->connect_req, &r->tcp, (struct sockaddr *)&ss, raw_connected),
                   0);
  assert_true(sh_run_until(loop, raw_settled, r, 5000));
  assert_true(r->connected);
}

static void raw_written(uv_write_t *req, int status) {
  (void)status;
  free(req);
}

int sh_raw_write(sh_raw_t *r, const void *data, size_t len) {
  if (r->closed)
    return LD_ERR_CLOSED;
  uv_write_t *req = malloc(sizeof *req + len);
  assert_non_null(req);
  memcpy(req + 1, data, len);
  uv_buf_t b = uv_buf_init((char *)(req + 1), (unsigned)len);
  int rc = uv_write(req, (uv_stream_t *)&r->tcp, &b, 1, raw_written);
  if (rc != 0)
    free(req);
  return rc;
}

static void raw_closed(uv_handle_t *h) {
  sh_raw_t *r = h->data;
  r->closed = true;
}

static bool raw_is_closed(void *ud) {
  return ((sh_raw_t *)ud)->closed;
}

void sh_raw_close(sh_raw_t *r) {
  if (!uv_is_closing((uv_handle_t *)&r->tcp))
    uv_close((uv_handle_t *)&r->tcp, raw_closed);
  assert_true(sh_run_until(r->loop, raw_is_closed, r, 5000));
  ld_buf_clear(&r->rx);
}

const char *sh_raw_local_text(sh_raw_t *r, char *buf, size_t cap) {
  assert_true(ld_multiaddr_to_text(&r->local, buf, cap) > 0);
  return buf;
}

bool sh_raw_eof(void *ud) {
  return ((sh_raw_t *)ud)->eof;
}

void sh_raw_assert_cut_off(sh_raw_t *r, const char *suffix, const char *reason) {
  assert_true(sh_run_until(r->loop, sh_raw_eof, r, 10000));
  char addr[LD_MULTIADDR_TEXT_MAX], needle[LD_MULTIADDR_TEXT_MAX + 64];
  snprintf(needle, sizeof needle, "addr=%s%s reason=%s", sh_raw_local_text(r, addr, sizeof addr),
           suffix, reason);
  if (!sh_log_contains(needle))
    fail_msg("no log line with \"%s\"", needle);
}

/* ---- the hand-driven upgrade ------------------------------------------------------------- */

static void secure_write_raw(sh_secure_t *s, ld_buf_t *out) {
  if (out->len > 0)
    sh_raw_write(&s->raw, out->data, out->len);
  ld_buf_reset(out);
}

static void secure_after_upgrade(sh_secure_t *s, const uint8_t *in, size_t len) {
  size_t used = 0;
  if (s->noise == NULL)
    return;
  int rc = ld_noise_read(s->noise, in, len, &used, NULL, &s->plain);
  if (rc < 0)
    s->err = rc;
  ld_buf_consume(&s->inbuf, used);
}

static void secure_read(sh_raw_t *r, const uint8_t *data, size_t len) {
  sh_secure_t *s = r->user_data;
  if (s->err != 0)
    return;
  ld_buf_append(&s->inbuf, data, len);
  if (s->done) {
    secure_after_upgrade(s, s->inbuf.data, s->inbuf.len);
    return;
  }
  ld_buf_t out;
  ld_buf_init(&out);
  size_t used = 0;
  int rc = ld_upgrader_read(&s->up, s->inbuf.data, s->inbuf.len, &used, &out);
  secure_write_raw(s, &out);
  ld_buf_clear(&out);
  ld_buf_consume(&s->inbuf, used);
  if (rc < 0) {
    s->err = rc;
    return;
  }
  if (rc == LD_UPGRADER_DONE) {
    s->done = true;
    s->muxer = ld_upgrader_muxer(&s->up);
    s->noise = ld_upgrader_take_noise(&s->up);
    size_t n;
    const uint8_t *rest = ld_upgrader_leftover(&s->up, &n);
    ld_buf_append(&s->plain, rest, n);
    secure_after_upgrade(s, s->inbuf.data, s->inbuf.len);
  }
}

void sh_secure_connect(sh_secure_t *s, uv_loop_t *loop, const ld_multiaddr_t *addr,
                       const ld_privkey_t *id, const char *muxer, const uint8_t *payload,
                       size_t payload_len) {
  memset(s, 0, sizeof *s);
  ld_buf_init(&s->inbuf);
  ld_buf_init(&s->plain);
  const char *muxers[1] = {muxer};
  ld_upgrader_config_t uc = {
      .initiator = true,
      .identity = id,
      .muxers = muxers,
      .n_muxers = 1,
  };
  assert_int_equal(ld_upgrader_init(&s->up, &uc), 0);
  if (payload != NULL)
    assert_int_equal(ld_noise_set_local_payload(s->up.noise, payload, payload_len), 0);
  ld_multiaddr_t a = sh_strip_peer(addr);
  sh_raw_connect(&s->raw, loop, &a);
  s->raw.on_read = secure_read;
  s->raw.user_data = s;
  ld_buf_t out;
  ld_buf_init(&out);
  assert_int_equal(ld_upgrader_start(&s->up, &out), 0);
  secure_write_raw(s, &out);
  ld_buf_clear(&out);
}

int sh_secure_send(sh_secure_t *s, const uint8_t *pt, size_t len) {
  if (s->noise == NULL)
    return LD_ERR_STATE;
  ld_buf_t wire;
  ld_buf_init(&wire);
  int rc = ld_noise_encrypt(s->noise, pt, len, &wire);
  if (rc == 0)
    rc = sh_raw_write(&s->raw, wire.data, wire.len);
  ld_buf_clear(&wire);
  return rc;
}

void sh_secure_close(sh_secure_t *s) {
  sh_raw_close(&s->raw);
  ld_upgrader_clear(&s->up);
  ld_noise_free(s->noise);
  s->noise = NULL;
  ld_buf_clear(&s->inbuf);
  ld_buf_clear(&s->plain);
}
