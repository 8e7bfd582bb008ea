/* ld_testpeer: the C side of the interop tests. A switch with identify, ping and the echo
 * protocol /ld/echo/1.0.0, driven from the command line, printing one JSON object per line.
 *
 *   ld_testpeer listen [--key secp256k1|ed25519] [--addr MA] [--muxers yamux,mplex] [--agent S]
 *                      [--ws-addr MA]… [--tls-cert PEM --tls-key PEM [--tls-generate NAME]]
 *   ld_testpeer dial MA [--key …] [--muxers …] [--ping N] [--echo-bytes N] [--echo-streams K]
 *                       [--timeout S] [--agent S]
 *
 * The switch has the WebSocket transport besides TCP, so dial takes /ws, /wss and /tls/ws
 * addresses too (wss without certificate verification). --ws-addr (up to 4 times) listens on a
 * WebSocket address as well, e.g. /ip4/127.0.0.1/tcp/0/ws or …/wss; secure ones need --tls-cert
 * and --tls-key (PEM), which --tls-generate NAME first fills with a new self-signed certificate
 * for NAME. The listening event lists the TCP address first.
 *
 * Both take --log-level LEVEL (stderr, default WARN). listen runs until SIGTERM, SIGINT or the end
 * of stdin and exits 0; dial exits 0 after {"event":"done"}, or 1 after {"event":"error",…}. */
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <uv.h>

#include "base/buf.h"
#include "base/clock.h"
#include "base/error.h"
#include "base/hex.h"
#include "base/log.h"
#include "p2p/identify.h"
#include "p2p/peerstore.h"
#include "p2p/ping.h"
#include "p2p/switch.h"
#include "p2p/tls.h"
#include "p2p/transport_ws.h"

#define ECHO_PROTOCOL "/ld/echo/1.0.0"
#define YAMUX_ID "/yamux/1.0.0"
#define MPLEX_ID "/mplex/6.7.0"
#define EXIT_USAGE 64
#define MAX_PINGS 100000
#define MAX_ECHO_STREAMS 256
#define ECHO_CHUNK (64 * 1024)
/* Bytes an echo client keeps in flight per stream (sent, not yet echoed): mplex has no flow
 * control and js resets a stream holding more than 4 MiB unread. */
#define ECHO_WINDOW_MPLEX (1024 * 1024)
#define ECHO_WINDOW_YAMUX (8 * 1024 * 1024)
/* Bytes queued in a stream before the client waits for on_drain. */
#define ECHO_QUEUE (512 * 1024)
/* An echo server whose peer does not read gives up past this. */
#define ECHO_SERVER_MAX_PENDING (64u * 1024 * 1024)
#define SHUTDOWN_GRACE_MS 3000
#define MAX_WS_ADDRS 4

typedef struct options {
  bool dial;
  const char *target;
  ld_key_type_t key;
  const char *addr;
  const char *muxers[2];
  const char *agent;
  unsigned ping;
  uint64_t echo_bytes;
  unsigned echo_streams;
  unsigned timeout_s;
  ld_log_level_t log_level;
  const char *ws_addrs[MAX_WS_ADDRS];
  size_t n_ws_addrs;
  const char *tls_cert;
  const char *tls_key;
  const char *tls_generate;
} options_t;

typedef struct echo_run echo_run_t;

typedef struct testpeer {
  options_t opt;
  uv_loop_t loop;
  uv_signal_t sigterm, sigint;
  union {
    uv_pipe_t pipe;
    uv_tty_t tty;
  } in;
  bool watching_stdin;
  uv_timer_t deadline;
  uv_timer_t grace;
  ld_switch_t *sw;
  ld_identify_t *identify;
  ld_peerstore_t *ps;
  bool stopping;
  int exit_code;
  /* dial session */
  ld_conn_t *conn;
  bool identified;
  bool started;
  echo_run_t *echo;
} testpeer_t;

/* ---- JSON lines ----------------------------------------------------------------------------- */

static void j_raw(ld_buf_t *b, const char *s) {
  ld_buf_append(b, s, strlen(s));
}

static void j_str(ld_buf_t *b, const char *s) {
  ld_buf_u8(b, '"');
  for (const unsigned char *p = (const unsigned char *)s; *p != '\0'; p++) {
    if (*p == '"' || *p == '\\') {
      ld_buf_u8(b, '\\');
      ld_buf_u8(b, *p);
    } else if (*p < 0x20 || *p == 0x7f) {
      char esc[7] = "\\u00";
      ld_hex_encode(p, 1, esc + 4);
      j_raw(b, esc);
    } else {
      ld_buf_u8(b, *p);
    }
  }
  ld_buf_u8(b, '"');
}

static void j_key(ld_buf_t *b, const char *key) {
  ld_buf_u8(b, ',');
  j_str(b, key);
  ld_buf_u8(b, ':');
}

static void j_begin(ld_buf_t *b, const char *event) {
  ld_buf_init(b);
  j_raw(b, "{\"event\":");
  j_str(b, event);
}

static void j_num(ld_buf_t *b, const char *key, double v) {
  char text[64];
  snprintf(text, sizeof text, "%.3f", v);
  j_key(b, key);
  j_raw(b, text);
}

static void j_uint(ld_buf_t *b, const char *key, uint64_t v) {
  char text[32];
  snprintf(text, sizeof text, "%" PRIu64, v);
  j_key(b, key);
  j_raw(b, text);
}

static void j_bool(ld_buf_t *b, const char *key, bool v) {
  j_key(b, key);
  j_raw(b, v ? "true" : "false");
}

static void j_addr(ld_buf_t *b, const ld_multiaddr_t *ma) {
  char text[LD_MULTIADDR_TEXT_MAX];
  if (ld_multiaddr_to_text(ma, text, sizeof text) < 0)
    text[0] = '\0';
  j_str(b, text);
}

static void j_peer(ld_buf_t *b, const ld_peerid_t *id) {
  char text[LD_PEERID_TEXT_MAX];
  if (ld_peerid_to_text(id, text, sizeof text) < 0)
    text[0] = '\0';
  j_key(b, "peerId");
  j_str(b, text);
}

static void j_emit(ld_buf_t *b) {
  j_raw(b, "}\n");
  fwrite(b->data, 1, b->len, stdout);
  fflush(stdout);
  ld_buf_clear(b);
}

/* ---- lifecycle ------------------------------------------------------------------------------ */

static void on_handle_closed(uv_handle_t *h) {
  (void)h;
}

static void close_handle(uv_handle_t *h) {
  if (!uv_is_closing(h))
    uv_close(h, on_handle_closed);
}

static void on_switch_closed(void *user_data) {
  testpeer_t *tp = user_data;
  tp->sw = NULL;
  close_handle((uv_handle_t *)&tp->grace);
}

static void on_grace_expired(uv_timer_t *t) {
  testpeer_t *tp = t->data;
  fprintf(stderr, "ld_testpeer: the switch did not close in time\n");
  fflush(stdout);
  _exit(tp->exit_code);
}

static void shutdown_peer(testpeer_t *tp, int exit_code) {
  if (tp->stopping)
    return;
  tp->stopping = true;
  tp->exit_code = exit_code;
  close_handle((uv_handle_t *)&tp->deadline);
  close_handle((uv_handle_t *)&tp->sigterm);
  close_handle((uv_handle_t *)&tp->sigint);
  if (tp->watching_stdin)
    close_handle((uv_handle_t *)&tp->in);
  uv_timer_start(&tp->grace, on_grace_expired, SHUTDOWN_GRACE_MS, 0);
  if (tp->sw != NULL)
    ld_switch_close(tp->sw, on_switch_closed, tp);
  else
    close_handle((uv_handle_t *)&tp->grace);
}

static void fail(testpeer_t *tp, int err) {
  if (tp->stopping)
    return;
  ld_buf_t b;
  j_begin(&b, "error");
  j_key(&b, "error");
  j_str(&b, ld_errname(err));
  j_key(&b, "message");
  j_str(&b, ld_strerror(err));
  j_emit(&b);
  shutdown_peer(tp, 1);
}

static void on_signal(uv_signal_t *s, int signum) {
  (void)signum;
  shutdown_peer(s->data, 0);
}

static void on_deadline(uv_timer_t *t) {
  fail(t->data, LD_ERR_TIMEOUT);
}

static void on_stdin_alloc(uv_handle_t *h, size_t suggested, uv_buf_t *buf) {
  (void)h;
  static char scratch[1024];
  (void)suggested;
  buf->base = scratch;
  buf->len = sizeof scratch;
}

static void on_stdin_read(uv_stream_t *s, ssize_t nread, const uv_buf_t *buf) {
  (void)buf;
  if (nread < 0)
    shutdown_peer(s->data, 0);
}

/* Ends a listener when stdin reaches its end (stdin that is a pipe or a terminal). */
static void watch_stdin(testpeer_t *tp) {
  uv_handle_type type = uv_guess_handle(0);
  int rc = -1;
  if (type == UV_NAMED_PIPE && uv_pipe_init(&tp->loop, &tp->in.pipe, 0) == 0) {
    rc = uv_pipe_open(&tp->in.pipe, 0);
    tp->watching_stdin = true;
  } else if (type == UV_TTY && uv_tty_init(&tp->loop, &tp->in.tty, 0, 1) == 0) {
    rc = 0;
    tp->watching_stdin = true;
  }
  tp->in.pipe.data = tp;
  if (rc == 0)
    rc = uv_read_start((uv_stream_t *)&tp->in, on_stdin_alloc, on_stdin_read);
  if (rc != 0 && tp->watching_stdin)
    LD_WARN("testpeer", "cannot watch stdin: %s", uv_strerror(rc));
}

/* ---- echo server ---------------------------------------------------------------------------- */

typedef struct echo_server {
  ld_buf_t pending;
  bool eof;
  bool closed_write;
} echo_server_t;

static void echo_server_flush(ld_stream_t *s, echo_server_t *e) {
  while (e->pending.len > 0) {
    size_t buffered = ld_stream_buffered(s);
    if (buffered >= LD_STREAM_MAX_BUFFERED)
      break;
    size_t n = LD_STREAM_MAX_BUFFERED - buffered;
    if (n > e->pending.len)
      n = e->pending.len;
    int rc = ld_stream_write(s, e->pending.data, n);
    if (rc == LD_ERR_LIMIT)
      break;
    if (rc != 0) {
      ld_stream_reset(s);
      return;
    }
    ld_buf_consume(&e->pending, n);
  }
  if (e->eof && e->pending.len == 0 && !e->closed_write) {
    e->closed_write = true;
    ld_stream_close_write(s);
  }
}

static void echo_server_data(ld_stream_t *s, const uint8_t *data, size_t len) {
  echo_server_t *e = ld_stream_user_data(s);
  if (e->pending.len == 0 && ld_stream_buffered(s) + len <= LD_STREAM_MAX_BUFFERED &&
      ld_stream_write(s, data, len) == 0)
    return;
  if (e->pending.len + len > ECHO_SERVER_MAX_PENDING ||
      ld_buf_append(&e->pending, data, len) != 0) {
    ld_stream_reset(s);
    return;
  }
  echo_server_flush(s, e);
}

static void echo_server_eof(ld_stream_t *s) {
  echo_server_t *e = ld_stream_user_data(s);
  e->eof = true;
  echo_server_flush(s, e);
}

static void echo_server_drain(ld_stream_t *s) {
  echo_server_flush(s, ld_stream_user_data(s));
}

static void echo_server_close(ld_stream_t *s, int err) {
  (void)err;
  echo_server_t *e = ld_stream_user_data(s);
  ld_buf_clear(&e->pending);
  free(e);
}

static const ld_stream_handler_t g_echo_server = {
    .on_data = echo_server_data,
    .on_eof = echo_server_eof,
    .on_close = echo_server_close,
    .on_drain = echo_server_drain,
};

static void on_echo_accept(ld_stream_t *s, void *user_data) {
  (void)user_data;
  echo_server_t *e = calloc(1, sizeof *e);
  if (e == NULL) {
    ld_stream_reset(s);
    return;
  }
  ld_buf_init(&e->pending);
  ld_stream_set_handler(s, &g_echo_server, e);
}

/* ---- echo client ---------------------------------------------------------------------------- */

typedef struct echo_stream {
  echo_run_t *run;
  ld_stream_t *s;
  uint64_t index;
  uint64_t sent;
  uint64_t received;
  bool write_closed;
  bool done;
} echo_stream_t;

struct echo_run {
  testpeer_t *tp;
  uint64_t bytes;
  unsigned streams;
  unsigned done;
  uint64_t window;
  uint64_t start_ns;
  echo_stream_t *st;
  uint8_t chunk[ECHO_CHUNK];
};

static uint64_t splitmix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

static void put_le64(uint8_t *out, uint64_t v) {
  for (int i = 0; i < 8; i++)
    out[i] = (uint8_t)(v >> (8 * i));
}

/* The deterministic payload: byte `off` of stream `index` is byte (off % 8) of the little-endian
 * word splitmix64(index << 48 ^ off / 8). Whole words are written eight bytes at a time. */
static void pattern(uint64_t index, uint64_t off, uint8_t *out, size_t n) {
  size_t i = 0;
  while (i < n && (off & 7) != 0) {
    out[i++] = (uint8_t)(splitmix64((index << 48) ^ (off >> 3)) >> ((off & 7) * 8));
    off++;
  }
  for (; i + 8 <= n; i += 8, off += 8)
    put_le64(out + i, splitmix64((index << 48) ^ (off >> 3)));
  for (; i < n; i++, off++)
    out[i] = (uint8_t)(splitmix64((index << 48) ^ (off >> 3)) >> ((off & 7) * 8));
}

static void echo_finished(echo_run_t *run);

static void echo_pump(echo_stream_t *es) {
  echo_run_t *run = es->run;
  while (es->s != NULL && es->sent < run->bytes && ld_stream_buffered(es->s) < ECHO_QUEUE) {
    uint64_t in_flight = es->sent - es->received;
    if (in_flight >= run->window)
      return;
    uint64_t n = run->bytes - es->sent;
    if (n > ECHO_CHUNK)
      n = ECHO_CHUNK;
    if (n > run->window - in_flight)
      n = run->window - in_flight;
    pattern(es->index, es->sent, run->chunk, (size_t)n);
    int rc = ld_stream_write(es->s, run->chunk, (size_t)n);
    if (rc == LD_ERR_LIMIT)
      return;
    if (rc != 0) {
      fail(run->tp, rc);
      return;
    }
    es->sent += n;
  }
  if (es->s != NULL && es->sent == run->bytes && !es->write_closed) {
    es->write_closed = true;
    ld_stream_close_write(es->s);
  }
}

static void echo_client_data(ld_stream_t *s, const uint8_t *data, size_t len) {
  echo_stream_t *es = ld_stream_user_data(s);
  echo_run_t *run = es->run;
  if (es->received + len > run->bytes) {
    fail(run->tp, LD_ERR_PROTOCOL);
    return;
  }
  uint8_t expect[4096];
  for (size_t done = 0; done < len;) {
    size_t n = len - done < sizeof expect ? len - done : sizeof expect;
    pattern(es->index, es->received + done, expect, n);
    if (memcmp(expect, data + done, n) != 0) {
      fail(run->tp, LD_ERR_PROTOCOL);
      return;
    }
    done += n;
  }
  es->received += len;
  echo_pump(es);
}

static void echo_client_eof(ld_stream_t *s) {
  echo_stream_t *es = ld_stream_user_data(s);
  if (es->received != es->run->bytes) {
    fail(es->run->tp, LD_ERR_PROTOCOL);
    return;
  }
  es->done = true;
  if (++es->run->done == es->run->streams)
    echo_finished(es->run);
}

static void echo_client_drain(ld_stream_t *s) {
  echo_pump(ld_stream_user_data(s));
}

static void echo_client_close(ld_stream_t *s, int err) {
  echo_stream_t *es = ld_stream_user_data(s);
  es->s = NULL;
  if (!es->done)
    fail(es->run->tp, err != 0 ? err : LD_ERR_PROTOCOL);
}

static const ld_stream_handler_t g_echo_client = {
    .on_data = echo_client_data,
    .on_eof = echo_client_eof,
    .on_close = echo_client_close,
    .on_drain = echo_client_drain,
};

static void on_echo_open(ld_stream_t *s, int err, void *user_data) {
  echo_stream_t *es = user_data;
  if (s == NULL) {
    fail(es->run->tp, err);
    return;
  }
  es->s = s;
  ld_stream_set_handler(s, &g_echo_client, es);
  if (es->run->tp->stopping) {
    ld_stream_reset(s);
    return;
  }
  echo_pump(es);
}

static int start_echo(testpeer_t *tp) {
  echo_run_t *run = calloc(1, sizeof *run);
  if (run == NULL)
    return LD_ERR_NOMEM;
  run->tp = tp;
  run->bytes = tp->opt.echo_bytes;
  run->streams = tp->opt.echo_streams;
  bool mplex = strcmp(ld_conn_muxer(tp->conn), MPLEX_ID) == 0;
  run->window = mplex ? ECHO_WINDOW_MPLEX : ECHO_WINDOW_YAMUX;
  run->st = calloc(run->streams, sizeof *run->st);
  tp->echo = run;
  if (run->st == NULL)
    return LD_ERR_NOMEM;
  run->start_ns = ld_now_ns();
  const char *protocol = ECHO_PROTOCOL;
  for (unsigned i = 0; i < run->streams; i++) {
    run->st[i].run = run;
    run->st[i].index = i;
    int rc = ld_switch_open_stream(tp->sw, tp->conn, &protocol, 1, on_echo_open, &run->st[i]);
    if (rc != 0)
      return rc;
  }
  return 0;
}

static void free_echo(echo_run_t *run) {
  if (run != NULL)
    free(run->st);
  free(run);
}

/* ---- dial session --------------------------------------------------------------------------- */

static void session_done(testpeer_t *tp) {
  ld_buf_t b;
  j_begin(&b, "done");
  j_emit(&b);
  shutdown_peer(tp, 0);
}

static void echo_finished(echo_run_t *run) {
  testpeer_t *tp = run->tp;
  double ms = (double)(ld_now_ns() - run->start_ns) / 1e6;
  ld_buf_t b;
  j_begin(&b, "echo");
  j_uint(&b, "bytes", run->bytes);
  j_uint(&b, "streams", run->streams);
  j_bool(&b, "ok", true);
  j_num(&b, "ms", ms);
  j_num(&b, "mbps", ms > 0 ? (double)run->bytes * run->streams / ms / 1000.0 : 0.0);
  j_emit(&b);
  session_done(tp);
}

static void after_pings(testpeer_t *tp) {
  if (tp->opt.echo_bytes == 0) {
    session_done(tp);
    return;
  }
  int rc = start_echo(tp);
  if (rc != 0)
    fail(tp, rc);
}

static void on_ping(int err, unsigned index, uint64_t rtt_us, bool done, void *user_data) {
  testpeer_t *tp = user_data;
  (void)index;
  if (tp->stopping)
    return;
  if (!done) {
    ld_buf_t b;
    j_begin(&b, "ping");
    j_num(&b, "rttMs", (double)rtt_us / 1000.0);
    j_emit(&b);
  } else if (err != 0) {
    fail(tp, err);
  } else {
    after_pings(tp);
  }
}

/* Runs once the connection is up and the remote is identified. */
static void session_next(testpeer_t *tp) {
  if (tp->started || tp->conn == NULL || !tp->identified || tp->stopping)
    return;
  tp->started = true;
  if (tp->opt.ping == 0) {
    after_pings(tp);
    return;
  }
  int rc = ld_ping(tp->sw, tp->conn, tp->opt.ping, on_ping, tp);
  if (rc != 0)
    fail(tp, rc);
}

static void on_dialed(ld_conn_t *c, int err, void *user_data) {
  testpeer_t *tp = user_data;
  if (c == NULL) {
    fail(tp, err != 0 ? err : LD_ERR_INTERNAL);
    return;
  }
  tp->conn = c;
  if (ld_identify_get(tp->identify, c) != NULL)
    tp->identified = true;
  session_next(tp);
}

/* ---- events --------------------------------------------------------------------------------- */

static void on_connected(ld_conn_t *c, void *user_data) {
  (void)user_data;
  ld_buf_t b;
  j_begin(&b, "connected");
  j_peer(&b, ld_conn_remote_peer(c));
  j_key(&b, "muxer");
  j_str(&b, ld_conn_muxer(c));
  j_bool(&b, "outbound", ld_conn_is_outbound(c));
  j_emit(&b);
}

static void on_disconnected(ld_conn_t *c, int reason, void *user_data) {
  testpeer_t *tp = user_data;
  ld_buf_t b;
  j_begin(&b, "disconnected");
  j_peer(&b, ld_conn_remote_peer(c));
  j_key(&b, "reason");
  j_str(&b, ld_errname(reason != 0 ? reason : LD_ERR_CLOSED));
  j_emit(&b);
  if (tp->opt.dial && c == tp->conn) {
    tp->conn = NULL;
    fail(tp, reason != 0 ? reason : LD_ERR_CLOSED);
  }
}

static const ld_switch_events_t g_switch_events = {
    .on_connected = on_connected,
    .on_disconnected = on_disconnected,
};

static void on_identified(ld_conn_t *c, const ld_identify_info_t *info, void *user_data) {
  testpeer_t *tp = user_data;
  ld_buf_t b;
  j_begin(&b, "identified");
  j_peer(&b, ld_conn_remote_peer(c));
  j_key(&b, "agentVersion");
  j_str(&b, info->agent_version);
  j_key(&b, "protocolVersion");
  j_str(&b, info->protocol_version);
  j_key(&b, "protocols");
  ld_buf_u8(&b, '[');
  for (size_t i = 0; i < info->n_protocols; i++) {
    if (i > 0)
      ld_buf_u8(&b, ',');
    j_str(&b, info->protocols[i]);
  }
  j_raw(&b, "]");
  j_key(&b, "listenAddrs");
  ld_buf_u8(&b, '[');
  for (size_t i = 0; i < info->n_listen_addrs; i++) {
    if (i > 0)
      ld_buf_u8(&b, ',');
    j_addr(&b, &info->listen_addrs[i]);
  }
  j_raw(&b, "]");
  j_key(&b, "observedAddr");
  if (info->has_observed_addr)
    j_addr(&b, &info->observed_addr);
  else
    j_raw(&b, "null");
  j_emit(&b);
  if (tp->opt.dial && (tp->conn == NULL || c == tp->conn)) {
    tp->identified = true;
    session_next(tp);
  }
}

static void on_identify_failed(ld_conn_t *c, int err, void *user_data) {
  testpeer_t *tp = user_data;
  char peer[LD_PEERID_TEXT_MAX] = "";
  ld_peerid_to_text(ld_conn_remote_peer(c), peer, sizeof peer);
  LD_WARN("testpeer", "identify of %s failed: %s", peer, ld_errname(err));
  if (tp->opt.dial && (tp->conn == NULL || c == tp->conn))
    fail(tp, err);
}

/* ---- setup ---------------------------------------------------------------------------------- */

static void print_listening(testpeer_t *tp) {
  char id[LD_PEERID_TEXT_MAX];
  ld_peerid_to_text(ld_switch_peer_id(tp->sw), id, sizeof id);
  ld_multiaddr_t addrs[16];
  size_t n = ld_switch_listen_addrs(tp->sw, addrs, 16);
  ld_buf_t b;
  j_begin(&b, "listening");
  j_key(&b, "peerId");
  j_str(&b, id);
  j_key(&b, "addrs");
  ld_buf_u8(&b, '[');
  for (size_t i = 0; i < n && i < 16; i++) {
    char text[LD_MULTIADDR_TEXT_MAX + LD_PEERID_TEXT_MAX + 8];
    if (ld_multiaddr_to_text(&addrs[i], text, LD_MULTIADDR_TEXT_MAX) < 0)
      continue;
    strcat(text, "/p2p/");
    strcat(text, id);
    if (i > 0)
      ld_buf_u8(&b, ',');
    j_str(&b, text);
  }
  j_raw(&b, "]");
  j_emit(&b);
}

/* The WebSocket transport, with the certificate when one is given (generated first on request). */
static int add_websocket(testpeer_t *tp) {
  const options_t *o = &tp->opt;
  int rc = 0;
  if (o->tls_generate != NULL)
    rc = ld_tls_write_self_signed(o->tls_cert, o->tls_key, o->tls_generate, 1);
  if (rc != 0)
    return rc;
  ld_ws_config_t wcfg;
  ld_ws_config_default(&wcfg);
  wcfg.tls_cert_path = o->tls_cert;
  wcfg.tls_key_path = o->tls_key;
  ld_transport_t *ws = ld_transport_ws_new(&tp->loop, &wcfg, &rc);
  if (ws == NULL)
    return rc;
  rc = ld_switch_add_transport(tp->sw, ws);
  if (rc != 0)
    ws->ops->destroy(ws);
  return rc;
}

static int setup_switch(testpeer_t *tp) {
  ld_privkey_t key;
  int rc = ld_privkey_generate(&key, tp->opt.key);
  if (rc != 0)
    return rc;
  ld_switch_config_t cfg;
  ld_switch_config_default(&cfg);
  cfg.loop = &tp->loop;
  cfg.identity = &key;
  cfg.muxers[0] = tp->opt.muxers[0];
  cfg.muxers[1] = tp->opt.muxers[1];
  tp->sw = ld_switch_new(&cfg);
  if (tp->sw == NULL)
    return LD_ERR_INVALID_ARG;
  if (ld_switch_add_listener(tp->sw, &g_switch_events, tp) != 0)
    return LD_ERR_LIMIT;
  if ((rc = add_websocket(tp)) != 0)
    return rc;
  tp->identify = ld_identify_new(tp->sw, tp->opt.agent);
  tp->ps = ld_peerstore_new(NULL);
  if (tp->identify == NULL || tp->ps == NULL)
    return LD_ERR_NOMEM;
  static const ld_identify_events_t events = {on_identified, on_identify_failed};
  ld_identify_set_events(tp->identify, &events, tp);
  ld_identify_set_peerstore(tp->identify, tp->ps);
  if ((rc = ld_ping_handle(tp->sw)) != 0)
    return rc;
  return ld_switch_handle(tp->sw, ECHO_PROTOCOL, on_echo_accept, NULL);
}

static int start(testpeer_t *tp) {
  int rc = setup_switch(tp);
  if (rc != 0)
    return rc;
  if (!tp->opt.dial) {
    ld_multiaddr_t addr;
    if ((rc = ld_multiaddr_parse(&addr, tp->opt.addr)) != 0)
      return rc;
    if ((rc = ld_switch_listen(tp->sw, &addr)) != 0)
      return rc;
    for (size_t i = 0; i < tp->opt.n_ws_addrs; i++)
      if ((rc = ld_multiaddr_parse(&addr, tp->opt.ws_addrs[i])) != 0 ||
          (rc = ld_switch_listen(tp->sw, &addr)) != 0)
        return rc;
    print_listening(tp);
    watch_stdin(tp);
    return 0;
  }
  ld_multiaddr_t target;
  if ((rc = ld_multiaddr_parse(&target, tp->opt.target)) != 0)
    return rc;
  uv_timer_start(&tp->deadline, on_deadline, (uint64_t)tp->opt.timeout_s * 1000, 0);
  return ld_switch_dial(tp->sw, &target, on_dialed, tp);
}

static int run(testpeer_t *tp) {
  uv_loop_init(&tp->loop);
  uv_timer_init(&tp->loop, &tp->deadline);
  uv_timer_init(&tp->loop, &tp->grace);
  uv_signal_init(&tp->loop, &tp->sigterm);
  uv_signal_init(&tp->loop, &tp->sigint);
  tp->deadline.data = tp->grace.data = tp->sigterm.data = tp->sigint.data = tp;
  uv_signal_start(&tp->sigterm, on_signal, SIGTERM);
  uv_signal_start(&tp->sigint, on_signal, SIGINT);
  int rc = start(tp);
  if (rc != 0)
    fail(tp, rc);
  uv_run(&tp->loop, UV_RUN_DEFAULT);
  ld_identify_free(tp->identify);
  ld_peerstore_free(tp->ps);
  free_echo(tp->echo);
  uv_loop_close(&tp->loop);
  return tp->exit_code;
}

/* ---- command line --------------------------------------------------------------------------- */

static int usage(const char *why) {
  if (why != NULL)
    fprintf(stderr, "ld_testpeer: %s\n", why);
  fprintf(stderr,
          "usage: ld_testpeer listen [--key secp256k1|ed25519] [--addr MA] [--muxers yamux,mplex]\n"
          "                          [--ws-addr MA]... [--tls-cert PEM --tls-key PEM]\n"
          "                          [--tls-generate NAME]\n"
          "       ld_testpeer dial MA [--key …] [--muxers …] [--ping N] [--echo-bytes N]\n"
          "                           [--echo-streams K] [--timeout S]\n"
          "       common: [--agent S] [--log-level LEVEL]\n");
  return EXIT_USAGE;
}

static bool parse_uint(const char *text, uint64_t max, uint64_t *out) {
  char *end = NULL;
  if (text == NULL || *text == '\0' || *text == '-')
    return false;
  unsigned long long v = strtoull(text, &end, 10);
  if (*end != '\0' || v > max)
    return false;
  *out = v;
  return true;
}

static bool parse_muxers(const char *text, options_t *o) {
  char copy[64];
  if (strlen(text) >= sizeof copy)
    return false;
  strcpy(copy, text);
  o->muxers[0] = o->muxers[1] = NULL;
  size_t n = 0;
  for (char *save = NULL, *tok = strtok_r(copy, ",", &save); tok != NULL;
       tok = strtok_r(NULL, ",", &save)) {
    const char *ids[2] = {NULL, NULL};
    if (strcmp(tok, "yamux") == 0)
      ids[0] = YAMUX_ID;
    else if (strcmp(tok, "mplex") == 0)
      ids[0] = MPLEX_ID;
    else if (strcmp(tok, "both") == 0)
      ids[0] = YAMUX_ID, ids[1] = MPLEX_ID;
    else
      return false;
    for (size_t i = 0; i < 2 && ids[i] != NULL; i++) {
      if (n >= 2 || (n == 1 && o->muxers[0] == ids[i]))
        return false;
      o->muxers[n++] = ids[i];
    }
  }
  return n > 0;
}

/* Applies option `name` with `value`; false when unknown or invalid. */
static bool apply_option(options_t *o, const char *name, const char *value) {
  uint64_t v;
  if (strcmp(name, "key") == 0) {
    if (strcmp(value, "secp256k1") == 0)
      o->key = LD_KEY_SECP256K1;
    else if (strcmp(value, "ed25519") == 0)
      o->key = LD_KEY_ED25519;
    else
      return false;
  } else if (strcmp(name, "addr") == 0) {
    o->addr = value;
  } else if (strcmp(name, "muxers") == 0 || strcmp(name, "muxer") == 0) {
    return parse_muxers(value, o);
  } else if (strcmp(name, "agent") == 0) {
    o->agent = value;
  } else if (strcmp(name, "ping") == 0 && parse_uint(value, MAX_PINGS, &v)) {
    o->ping = (unsigned)v;
  } else if (strcmp(name, "echo-bytes") == 0 && parse_uint(value, UINT64_MAX / 2, &v)) {
    o->echo_bytes = v;
  } else if (strcmp(name, "echo-streams") == 0 && parse_uint(value, MAX_ECHO_STREAMS, &v) &&
             v > 0) {
    o->echo_streams = (unsigned)v;
  } else if (strcmp(name, "timeout") == 0 && parse_uint(value, 86400, &v) && v > 0) {
    o->timeout_s = (unsigned)v;
  } else if (strcmp(name, "log-level") == 0) {
    return ld_log_parse_level(value, &o->log_level) == 0;
  } else if (strcmp(name, "ws-addr") == 0 && o->n_ws_addrs < MAX_WS_ADDRS) {
    o->ws_addrs[o->n_ws_addrs++] = value;
  } else if (strcmp(name, "tls-cert") == 0) {
    o->tls_cert = value;
  } else if (strcmp(name, "tls-key") == 0) {
    o->tls_key = value;
  } else if (strcmp(name, "tls-generate") == 0) {
    o->tls_generate = value;
  } else {
    return false;
  }
  return true;
}

static int parse_args(int argc, char **argv, options_t *o) {
  *o = (options_t){.key = LD_KEY_SECP256K1,
                   .addr = "/ip4/127.0.0.1/tcp/0",
                   .muxers = {YAMUX_ID, MPLEX_ID},
                   .echo_streams = 1,
                   .timeout_s = 30,
                   .log_level = LD_LOG_WARN};
  if (argc < 2)
    return usage(NULL);
  if (strcmp(argv[1], "dial") == 0)
    o->dial = true;
  else if (strcmp(argv[1], "listen") != 0)
    return usage("unknown command");
  for (int i = 2; i < argc; i++) {
    const char *arg = argv[i];
    if (strncmp(arg, "--", 2) != 0) {
      if (!o->dial || o->target != NULL)
        return usage("unexpected argument");
      o->target = arg;
      continue;
    }
    const char *eq = strchr(arg, '=');
    char name[32];
    const char *value;
    size_t len = eq != NULL ? (size_t)(eq - arg - 2) : strlen(arg + 2);
    if (len >= sizeof name)
      return usage("unknown option");
    memcpy(name, arg + 2, len);
    name[len] = '\0';
    if (eq != NULL)
      value = eq + 1;
    else if (i + 1 < argc)
      value = argv[++i];
    else
      return usage("option without a value");
    if (!apply_option(o, name, value))
      return usage("invalid option");
  }
  if (o->dial && o->target == NULL)
    return usage("dial needs a multiaddr");
  if ((o->tls_cert == NULL) != (o->tls_key == NULL) ||
      (o->tls_generate != NULL && o->tls_cert == NULL))
    return usage("--tls-cert and --tls-key go together");
  return 0;
}

int main(int argc, char **argv) {
  static testpeer_t tp;
  int rc = parse_args(argc, argv, &tp.opt);
  if (rc != 0)
    return rc;
  signal(SIGPIPE, SIG_IGN);
  setvbuf(stdout, NULL, _IOLBF, 0);
  ld_log_set_level(tp.opt.log_level);
  return run(&tp);
}
