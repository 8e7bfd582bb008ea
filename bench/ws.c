/* One-way throughput between two switches in one process over loopback, on TCP (the baseline),
 * /ws and /wss (a self-signed certificate made in a temporary directory), each with Noise and the
 * chosen muxer:
 *
 *   bench_ws [--mib N] [--muxer yamux|mplex] [--transports tcp,ws,wss]
 *
 * One stream carries N MiB (default 256) to a sink that answers the byte count at EOF; MB/s is
 * 10^6 payload bytes per second from the first write to that answer. Both ends share one core's
 * loop, so the figure is the cost of sending plus receiving. One JSON line per transport; nothing
 * passes or fails on a time. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <uv.h>

#include "base/clock.h"
#include "base/error.h"
#include "base/log.h"
#include "p2p/stream.h"
#include "p2p/switch.h"
#include "p2p/tls.h"
#include "p2p/transport_ws.h"

#define SINK "/ld/bench/sink/1.0.0"
#define CHUNK (256 * 1024)
#define WRITE_AHEAD (4u * 1024 * 1024)

static uv_loop_t loop;

typedef struct run {
  ld_stream_t *s;
  uint64_t total, sent;
  uint64_t start_ns, end_ns;
  bool done;
  int err;
  ld_conn_t *conn;
  ld_switch_t *sw;
} run_t;

/* ---- sink --------------------------------------------------------------------------------- */

static void sink_data(ld_stream_t *s, const uint8_t *data, size_t len) {
  (void)data;
  *(uint64_t *)ld_stream_user_data(s) += len;
}

static void sink_eof(ld_stream_t *s) {
  uint64_t n = *(uint64_t *)ld_stream_user_data(s);
  uint8_t be[8];
  for (int i = 0; i < 8; i++)
    be[i] = (uint8_t)(n >> (56 - 8 * i));
  ld_stream_write(s, be, sizeof be);
  ld_stream_close_write(s);
}

static void sink_close(ld_stream_t *s, int err) {
  (void)err;
  free(ld_stream_user_data(s));
}

static const ld_stream_handler_t sink_handler = {sink_data, sink_eof, sink_close, NULL};

static void sink_accept(ld_stream_t *s, void *user_data) {
  (void)user_data;
  ld_stream_set_handler(s, &sink_handler, calloc(1, sizeof(uint64_t)));
}

/* ---- sender ------------------------------------------------------------------------------- */

static void pump(run_t *r) {
  static uint8_t chunk[CHUNK];
  while (r->sent < r->total && ld_stream_buffered(r->s) < WRITE_AHEAD) {
    if (ld_stream_write(r->s, chunk, CHUNK) != 0)
      return;
    r->sent += CHUNK;
  }
  if (r->sent >= r->total)
    ld_stream_close_write(r->s);
}

static void tx_data(ld_stream_t *s, const uint8_t *data, size_t len) {
  (void)data;
  run_t *r = ld_stream_user_data(s);
  if (len > 0 && r->end_ns == 0)
    r->end_ns = ld_now_ns();
}

static void tx_drain(ld_stream_t *s) {
  pump(ld_stream_user_data(s));
}

static void tx_close(ld_stream_t *s, int err) {
  run_t *r = ld_stream_user_data(s);
  r->err = err;
  r->done = true;
}

static const ld_stream_handler_t tx_handler = {tx_data, NULL, tx_close, tx_drain};

static void tx_opened(ld_stream_t *s, int err, void *user_data) {
  run_t *r = user_data;
  if (s == NULL) {
    r->err = err;
    r->done = true;
    return;
  }
  r->s = s;
  ld_stream_set_handler(s, &tx_handler, r);
  r->start_ns = ld_now_ns();
  pump(r);
}

static void dialed(ld_conn_t *c, int err, void *user_data) {
  run_t *r = user_data;
  if (c == NULL) {
    r->err = err;
    r->done = true;
    return;
  }
  r->conn = c;
  const char *protos[] = {SINK};
  int rc = ld_switch_open_stream(r->sw, c, protos, 1, tx_opened, r);
  if (rc != 0) {
    r->err = rc;
    r->done = true;
  }
}

/* ---- setup -------------------------------------------------------------------------------- */

static ld_switch_t *make_switch(const char *muxer, const char *cert, const char *key) {
  ld_privkey_t id;
  if (ld_privkey_generate(&id, LD_KEY_ED25519) != 0)
    return NULL;
  ld_switch_config_t cfg;
  ld_switch_config_default(&cfg);
  cfg.loop = &loop;
  cfg.identity = &id;
  cfg.muxers[0] = muxer;
  cfg.muxers[1] = NULL;
  ld_switch_t *sw = ld_switch_new(&cfg);
  ld_ws_config_t w;
  ld_ws_config_default(&w);
  w.tls_cert_path = cert;
  w.tls_key_path = key;
  ld_transport_t *t = sw != NULL ? ld_transport_ws_new(&loop, &w, NULL) : NULL;
  if (t == NULL || ld_switch_add_transport(sw, t) != 0) {
    fprintf(stderr, "bench_ws: cannot set up a switch\n");
    exit(1);
  }
  return sw;
}

/* Listens on `text` and returns the bound address with /p2p/<id>. */
static ld_multiaddr_t listen_on(ld_switch_t *sw, const char *text) {
  ld_multiaddr_t a, all[8];
  if (ld_multiaddr_parse(&a, text) != 0 || ld_switch_listen(sw, &a) != 0) {
    fprintf(stderr, "bench_ws: cannot listen on %s\n", text);
    exit(1);
  }
  size_t n = ld_switch_listen_addrs(sw, all, 8);
  const ld_peerid_t *id = ld_switch_peer_id(sw);
  ld_multiaddr_push(&all[n - 1], LD_MA_P2P, id->bytes, id->len);
  return all[n - 1];
}

static void measure(ld_switch_t *client, const char *name, const ld_multiaddr_t *addr,
                    const char *muxer, uint64_t mib) {
  run_t r = {.total = mib * 1024 * 1024, .sw = client};
  if (ld_switch_dial(client, addr, dialed, &r) != 0)
    r.done = true;
  while (!r.done)
    uv_run(&loop, UV_RUN_ONCE);
  if (r.conn != NULL)
    ld_conn_close(r.conn, 0, true);
  double ms = r.end_ns > r.start_ns ? (double)(r.end_ns - r.start_ns) / 1e6 : 0;
  printf("{\"bench\":\"ws\",\"transport\":\"%s\",\"muxer\":\"%s\",\"mib\":%llu,\"ms\":%.1f,"
         "\"mbps\":%.1f,\"error\":%s%s%s}\n",
         name, muxer, (unsigned long long)mib, ms, ms > 0 ? (double)r.total / ms / 1000.0 : 0.0,
         r.err != 0 ? "\"" : "", r.err != 0 ? ld_errname(r.err) : "null", r.err != 0 ? "\"" : "");
  fflush(stdout);
}

static const char *opt(int argc, char **argv, const char *name, const char *dflt) {
  for (int i = 1; i + 1 < argc; i++)
    if (strcmp(argv[i], name) == 0)
      return argv[i + 1];
  return dflt;
}

/* True when the comma-separated `list` names `name`. */
static bool listed(const char *list, const char *name) {
  size_t n = strlen(name);
  for (const char *p = list; *p != '\0';) {
    const char *end = strchr(p, ',');
    size_t len = end != NULL ? (size_t)(end - p) : strlen(p);
    if (len == n && strncmp(p, name, n) == 0)
      return true;
    p += len + (end != NULL);
  }
  return false;
}

static void on_closed(void *ud) {
  (*(int *)ud)++;
}

int main(int argc, char **argv) {
  uint64_t mib = strtoull(opt(argc, argv, "--mib", "256"), NULL, 10);
  const char *m = opt(argc, argv, "--muxer", "yamux");
  const char *which = opt(argc, argv, "--transports", "tcp,ws,wss");
  const char *muxer = strcmp(m, "mplex") == 0 ? "/mplex/6.7.0" : "/yamux/1.0.0";
  ld_log_set_level(LD_LOG_WARN);
  char dir[] = "/tmp/ld_bench_ws_XXXXXX", cert[64], key[64];
  if (mkdtemp(dir) == NULL)
    return 1;
  snprintf(cert, sizeof cert, "%s/cert.pem", dir);
  snprintf(key, sizeof key, "%s/key.pem", dir);
  if (ld_tls_write_self_signed(cert, key, "localhost", 1) != 0)
    return 1;
  uv_loop_init(&loop);
  ld_switch_t *server = make_switch(muxer, cert, key);
  ld_switch_t *client = make_switch(muxer, NULL, NULL);
  ld_switch_handle(server, SINK, sink_accept, NULL);
  static const char *const names[] = {"tcp", "ws", "wss"};
  static const char *const addrs[] = {"/ip4/127.0.0.1/tcp/0", "/ip4/127.0.0.1/tcp/0/ws",
                                      "/ip4/127.0.0.1/tcp/0/wss"};
  for (int i = 0; i < 3; i++) {
    if (!listed(which, names[i]))
      continue;
    ld_multiaddr_t a = listen_on(server, addrs[i]);
    measure(client, names[i], &a, m, mib);
  }
  int closed = 0;
  ld_switch_close(client, on_closed, &closed);
  ld_switch_close(server, on_closed, &closed);
  while (closed < 2)
    uv_run(&loop, UV_RUN_ONCE);
  uv_run(&loop, UV_RUN_DEFAULT);
  uv_loop_close(&loop);
  unlink(cert);
  unlink(key);
  rmdir(dir);
  return 0;
}
