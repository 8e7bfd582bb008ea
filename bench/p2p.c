/* Benchmarks of the libp2p core between two processes over loopback TCP + Noise + muxer:
 *
 *   bench_p2p serve
 *       runs a node on 127.0.0.1 (identify, ping, the sink protocol); prints `LISTEN <multiaddr>`
 *   bench_p2p throughput <multiaddr> [--mib N] [--muxer yamux|mplex]
 *       moves N MiB on one stream to the sink and prints MB/s
 *   bench_p2p connections <multiaddr> [--seconds S] [--parallel P] [--muxer yamux|mplex]
 *       P dialers each dial, wait for identify, close, again and again; prints set-ups/s
 *   bench_p2p hold <multiaddr> [--count N]
 *       opens N connections from N identities and keeps them until stdin closes
 *
 * Every figure is printed as one JSON line. Nothing passes or fails on a time. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <uv.h>

#include "base/clock.h"
#include "base/error.h"
#include "base/log.h"
#include "node/node.h"
#include "p2p/identify.h"
#include "p2p/switch.h"

#define SINK_PROTOCOL "/ld/bench/sink/1.0.0"
#define CHUNK (256 * 1024)
#define MAX_HOLD 1000

static uv_loop_t loop;

/* ---- sink: counts bytes, answers the 8-byte count at EOF ---------------------------------- */

typedef struct sink {
  uint64_t bytes;
} sink_t;

static void sink_data(ld_stream_t *s, const uint8_t *data, size_t len) {
  (void)data;
  ((sink_t *)ld_stream_user_data(s))->bytes += len;
}

static void sink_eof(ld_stream_t *s) {
  uint64_t n = ((sink_t *)ld_stream_user_data(s))->bytes;
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
  sink_t *k = calloc(1, sizeof *k);
  if (k == NULL) {
    ld_stream_reset(s);
    return;
  }
  ld_stream_set_handler(s, &sink_handler, k);
}

static int serve(void) {
  ld_node_config_t cfg;
  char err[128];
  ld_node_config_default(&cfg);
  cfg.max_connections = 2 * MAX_HOLD;
  ld_node_config_set_listen(&cfg, "127.0.0.1", 0, 0, err, sizeof err);
  int rc;
  ld_node_t *node = ld_node_new(&loop, &cfg, &rc);
  if (node == NULL || ld_node_start(node) != 0 ||
      ld_switch_handle(ld_node_switch(node), SINK_PROTOCOL, sink_accept, NULL) != 0)
    return 1;
  ld_multiaddr_t listen[4];
  char text[LD_MULTIADDR_TEXT_MAX];
  if (ld_node_listen_addrs(node, listen, 4) == 0 ||
      ld_multiaddr_to_text(&listen[0], text, sizeof text) < 0)
    return 1;
  printf("LISTEN %s\n", text);
  fflush(stdout);
  uv_run(&loop, UV_RUN_DEFAULT);
  return 0;
}

/* ---- client side ----------------------------------------------------------------------------- */

typedef struct client {
  ld_switch_t *sw;
  ld_identify_t *identify;
  ld_privkey_t key;
  const char *muxer;
} client_t;

static int client_init(client_t *c, const char *muxer, bool with_identify) {
  ld_privkey_generate(&c->key, LD_KEY_ED25519);
  ld_switch_config_t sc;
  ld_switch_config_default(&sc);
  sc.loop = &loop;
  sc.identity = &c->key;
  c->muxer = strcmp(muxer, "mplex") == 0 ? "/mplex/6.7.0" : "/yamux/1.0.0";
  sc.muxers[0] = c->muxer;
  sc.muxers[1] = NULL;
  c->sw = ld_switch_new(&sc);
  if (c->sw == NULL)
    return LD_ERR_NOMEM;
  c->identify = with_identify ? ld_identify_new(c->sw, NULL) : NULL;
  return 0;
}

typedef struct throughput {
  client_t client;
  ld_stream_t *stream;
  uint64_t total, sent;
  uint64_t started_ns;
  uint8_t *chunk;
  uint8_t reply[8];
  size_t reply_len;
  int result;
} throughput_t;

static void pump(throughput_t *t) {
  while (t->sent < t->total && ld_stream_buffered(t->stream) < 2 * CHUNK) {
    size_t n = t->total - t->sent < CHUNK ? (size_t)(t->total - t->sent) : CHUNK;
    if (ld_stream_write(t->stream, t->chunk, n) != 0)
      return;
    t->sent += n;
  }
  if (t->sent == t->total)
    ld_stream_close_write(t->stream);
}

static void tp_data(ld_stream_t *s, const uint8_t *data, size_t len) {
  throughput_t *t = ld_stream_user_data(s);
  size_t n = len < 8 - t->reply_len ? len : 8 - t->reply_len;
  memcpy(t->reply + t->reply_len, data, n);
  t->reply_len += n;
}

static void tp_drain(ld_stream_t *s) {
  throughput_t *t = ld_stream_user_data(s);
  if (t->sent < t->total)
    pump(t);
}

static void tp_close(ld_stream_t *s, int err) {
  throughput_t *t = ld_stream_user_data(s);
  double secs = (double)(ld_now_ns() - t->started_ns) / 1e9;
  uint64_t echoed = 0;
  for (size_t i = 0; i < t->reply_len; i++)
    echoed = (echoed << 8) | t->reply[i];
  t->result = err != 0 || echoed != t->total ? 1 : 0;
  printf("{\"impl\":\"c\",\"test\":\"throughput\",\"muxer\":\"%s\",\"bytes\":%llu,"
         "\"seconds\":%.3f,\"MBps\":%.1f,\"ok\":%s}\n",
         t->client.muxer, (unsigned long long)t->total, secs, (double)t->total / secs / 1e6,
         t->result == 0 ? "true" : "false");
  ld_switch_close(t->client.sw, NULL, NULL);
}

static const ld_stream_handler_t tp_handler = {tp_data, NULL, tp_close, tp_drain};

static void tp_opened(ld_stream_t *s, int err, void *user_data) {
  throughput_t *t = user_data;
  if (err != 0) {
    fprintf(stderr, "open stream: %s\n", ld_errname(err));
    ld_switch_close(t->client.sw, NULL, NULL);
    return;
  }
  t->stream = s;
  ld_stream_set_handler(s, &tp_handler, t);
  t->started_ns = ld_now_ns();
  pump(t);
}

static void tp_dialed(ld_conn_t *c, int err, void *user_data) {
  throughput_t *t = user_data;
  const char *protos[] = {SINK_PROTOCOL};
  if (err != 0 || ld_switch_open_stream(t->client.sw, c, protos, 1, tp_opened, t) != 0) {
    fprintf(stderr, "dial: %s\n", ld_errname(err));
    ld_switch_close(t->client.sw, NULL, NULL);
  }
}

static int throughput(const ld_multiaddr_t *target, int64_t mib, const char *muxer) {
  throughput_t t;
  memset(&t, 0, sizeof t);
  t.result = 1;
  t.total = (uint64_t)mib * 1024 * 1024;
  t.chunk = malloc(CHUNK);
  for (size_t i = 0; i < CHUNK; i++)
    t.chunk[i] = (uint8_t)(i * 31 + 7);
  if (client_init(&t.client, muxer, false) != 0 ||
      ld_switch_dial(t.client.sw, target, tp_dialed, &t) != 0)
    return 1;
  uv_run(&loop, UV_RUN_DEFAULT);
  free(t.chunk);
  return t.result;
}

/* ---- connection set-ups ---------------------------------------------------------------------- */

/* `parallel` dialers, each its own switch and identity, each dialing, waiting for identify and
 * closing in a loop until the deadline; the figure is the total of completed set-ups. */
#define MAX_PARALLEL 64

typedef struct setups {
  const ld_multiaddr_t *target;
  uint64_t started_ns, deadline_ns;
  unsigned done, failed, running;
  const char *muxer;
} setups_t;

typedef struct dialer {
  client_t client;
  setups_t *totals;
} dialer_t;

static void setup_next(dialer_t *d);

static void on_setup_identified(ld_conn_t *c, const ld_identify_info_t *info, void *user_data) {
  (void)info;
  dialer_t *d = user_data;
  d->totals->done++;
  ld_conn_close(c, 0, false);
}

static void on_setup_failed(ld_conn_t *c, int err, void *user_data) {
  (void)err;
  dialer_t *d = user_data;
  d->totals->failed++;
  ld_conn_close(c, 0, false);
}

static void on_setup_gone(ld_conn_t *c, int reason, void *user_data) {
  (void)c;
  (void)reason;
  setup_next(user_data);
}

static void on_setup_dialed(ld_conn_t *c, int err, void *user_data) {
  dialer_t *d = user_data;
  (void)c;
  if (err != 0) {
    d->totals->failed++;
    setup_next(d);
  }
}

static void report_setups(const setups_t *s, unsigned parallel) {
  double secs = (double)(ld_now_ns() - s->started_ns) / 1e9;
  printf("{\"impl\":\"c\",\"test\":\"connections\",\"muxer\":\"%s\",\"concurrency\":%u,"
         "\"setups\":%u,\"failed\":%u,\"seconds\":%.3f,\"perSecond\":%.1f}\n",
         s->muxer, parallel, s->done, s->failed, secs, s->done / secs);
}

static void setup_next(dialer_t *d) {
  setups_t *s = d->totals;
  if (ld_now_ns() < s->deadline_ns && s->failed < 100) {
    if (ld_switch_dial(d->client.sw, s->target, on_setup_dialed, d) == 0)
      return;
    s->failed++;
  }
  ld_switch_close(d->client.sw, NULL, NULL);
  s->running--;
}

static int connections(const ld_multiaddr_t *target, int64_t seconds, int64_t parallel,
                       const char *muxer) {
  static setups_t s;
  static dialer_t dialers[MAX_PARALLEL];
  static const ld_identify_events_t id_events = {on_setup_identified, on_setup_failed};
  static const ld_switch_events_t sw_events = {NULL, on_setup_gone};
  if (parallel < 1 || parallel > MAX_PARALLEL)
    return 2;
  memset(&s, 0, sizeof s);
  s.target = target;
  s.started_ns = ld_now_ns();
  s.deadline_ns = s.started_ns + (uint64_t)seconds * 1000000000ull;
  for (int64_t i = 0; i < parallel; i++) {
    dialer_t *d = &dialers[i];
    d->totals = &s;
    if (client_init(&d->client, muxer, true) != 0 || d->client.identify == NULL)
      return 1;
    s.muxer = d->client.muxer;
    ld_identify_set_events(d->client.identify, &id_events, d);
    ld_switch_add_listener(d->client.sw, &sw_events, d);
    s.running++;
  }
  for (int64_t i = 0; i < parallel; i++)
    setup_next(&dialers[i]);
  uv_run(&loop, UV_RUN_DEFAULT);
  report_setups(&s, (unsigned)parallel);
  for (int64_t i = 0; i < parallel; i++)
    ld_identify_free(dialers[i].client.identify);
  return s.done > 0 ? 0 : 1;
}

/* ---- holding connections --------------------------------------------------------------------- */

static unsigned held;
static uv_tty_t stdin_handle;

static void on_held(ld_conn_t *c, int err, void *user_data) {
  (void)c;
  (void)user_data;
  if (err == 0 && ++held % 100 == 0) {
    printf("{\"impl\":\"c\",\"test\":\"hold\",\"connections\":%u}\n", held);
    fflush(stdout);
  }
}

static void stdin_alloc(uv_handle_t *h, size_t n, uv_buf_t *buf) {
  (void)h;
  static char space[256];
  (void)n;
  *buf = uv_buf_init(space, sizeof space);
}

static void stdin_read(uv_stream_t *h, ssize_t n, const uv_buf_t *buf) {
  (void)buf;
  if (n < 0) {
    uv_read_stop(h);
    uv_stop(&loop);
  }
}

static int hold(const ld_multiaddr_t *target, int64_t count) {
  static client_t clients[MAX_HOLD];
  for (int64_t i = 0; i < count; i++) {
    if (client_init(&clients[i], "yamux", false) != 0 ||
        ld_switch_dial(clients[i].sw, target, on_held, NULL) != 0)
      return 1;
  }
  uv_tty_init(&loop, &stdin_handle, 0, 1);
  uv_read_start((uv_stream_t *)&stdin_handle, stdin_alloc, stdin_read);
  uv_run(&loop, UV_RUN_DEFAULT);
  return 0;
}

static const char *opt(int argc, char **argv, const char *name, const char *dflt) {
  for (int i = 0; i + 1 < argc; i++)
    if (strcmp(argv[i], name) == 0)
      return argv[i + 1];
  return dflt;
}

int main(int argc, char **argv) {
  ld_log_set_level(LD_LOG_WARN);
  uv_loop_init(&loop);
  if (argc >= 2 && strcmp(argv[1], "serve") == 0)
    return serve();
  ld_multiaddr_t target;
  if (argc < 3 || ld_multiaddr_parse(&target, argv[2]) != 0) {
    fprintf(stderr, "usage: bench_p2p serve | throughput|connections|hold <multiaddr> [...]\n");
    return 2;
  }
  const char *muxer = opt(argc, argv, "--muxer", "yamux");
  if (strcmp(argv[1], "throughput") == 0)
    return throughput(&target, atoll(opt(argc, argv, "--mib", "1024")), muxer);
  if (strcmp(argv[1], "connections") == 0)
    return connections(&target, atoll(opt(argc, argv, "--seconds", "5")),
                       atoll(opt(argc, argv, "--parallel", "1")), muxer);
  if (strcmp(argv[1], "hold") == 0) {
    int64_t n = atoll(opt(argc, argv, "--count", "100"));
    return hold(&target, n > MAX_HOLD ? MAX_HOLD : n);
  }
  return 2;
}
