/* Publisher for the relay mesh benchmark (tests/interop/bench/relay-rate.mjs drives it): a
 * process that joins a fleet of relay nodes as relay peers and publishes 1 KiB WakuMessages at a
 * given rate, without the REST API's one-HTTP-request-per-message ceiling.
 *
 *   bench_relay --peer MULTIADDR [--peer …] [--cluster 42] [--shard 0] [--size 1024]
 *               [--log-level WARN]
 *
 * For every --peer it runs one node (src/node: switch, Noise, yamux, metadata, gossipsub, relay;
 * not listening) whose only static peer is that fleet node, all on one loop. The nodes mount
 * relay on /waku/2/rs/<cluster>/<shard> and leave the topic right away, so they are publishers
 * only: the fleet node keeps them out of its mesh and never forwards the fleet's traffic to them,
 * and each message enters the fleet at exactly one node, as the REST driver's publishes do. A
 * message is published by the next node in round-robin order, with a unique payload and
 * timestamp = now (Unix ns); from there it travels through the fleet's own mesh.
 *
 * Protocol on stdin/stdout, one line each:
 *   READY                      printed once every node sees its fleet node on the topic
 *   run RATE COUNT             publishes COUNT messages paced at RATE per second in total
 *                              (open loop, 1 ms ticks), then prints one JSON line:
 *                              {"run":N,"published":…,"failed":…,"firstNs":…,"lastNs":…,
 *                               "publisherCpuMs":…}  (failed: refused, or no peer to send to)
 *   replay PATH                publishes the messages of PATH (bench_relay_rln_prove's file:
 *                              messages with RLN proofs made beforehand), each at its own
 *                              timestamp (the planned send time, part of its proved signal),
 *                              then prints the same JSON line with "lateMaxMs" (the most a
 *                              message went out after its timestamp); firstNs/lastNs are the
 *                              first and last timestamps
 *   quit (or end of input)     stops the nodes and exits
 *
 * Measuring (done by the driver, not here): every fleet node runs with its metrics server; the
 * driver scrapes each node's /metrics before a run and every 50 ms during it, reading
 * waku_relay_message_latency_seconds (a histogram of now − message timestamp for each message
 * delivered from a peer, src/waku/relay/relay.h). Per node, deliveries in the run = the growth of
 * the histogram's count; messages delivered to every node = the minimum over the nodes (exact
 * when nothing is lost, an upper bound otherwise); the delivered-to-every-node rate = that
 * minimum / (time from the first publish to the scrape at which the last node reached it); the
 * latency percentiles come from the sum over the nodes of the histograms' growth (bucket upper
 * bounds, 0.25 ms … 5 s). No log line is parsed, so the fleet runs at log level INFO. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <uv.h>

#include "base/clock.h"
#include "base/error.h"
#include "base/log.h"
#include "node/node.h"

#define MAX_PEERS 32
#define MAX_SIZE (100u * 1024)
#define BURST_PER_TICK 128
#define CONTENT_TOPIC "/ld/1/bench/proto"

/* A message of a replay file. */
typedef struct replay_msg {
  int64_t timestamp;
  uint8_t *payload;
  size_t payload_len;
  uint8_t *proof;
  size_t proof_len;
} replay_msg_t;

typedef struct bench {
  uv_loop_t loop;
  ld_node_t *nodes[MAX_PEERS];
  size_t n_nodes, n_stopped;
  char topic[64];
  uint8_t *payload;
  size_t size;
  uv_pipe_t in;
  char line[4096];
  size_t line_len;
  uv_timer_t tick;
  bool ready, running, quitting;
  unsigned run_id;
  uint64_t rate, count, sent, failed, start_hr;
  uint64_t first_ns, last_ns;
  double cpu0_ms;
  size_t rr;
  replay_msg_t *replay; /* the replayed file, while replaying */
  size_t n_replay, replay_next;
  int64_t late_max_ns;
} bench_t;

static double cpu_ms(void) {
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  return (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1e3 +
         (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e3;
}

/* ---- nodes ---------------------------------------------------------------------------------- */

static int add_node(bench_t *b, const char *peer, unsigned cluster, unsigned shard) {
  static ld_node_config_t cfg;
  char why[300];
  ld_node_config_default(&cfg);
  cfg.listen = false;
  cfg.max_connections = 8;
  cfg.cluster_id = (uint16_t)cluster;
  cfg.shards[0] = (uint16_t)shard;
  cfg.n_shards = 1;
  cfg.colocation_limit = 0;
  int rc = ld_node_config_add_static_node(&cfg, peer, why, sizeof why);
  if (rc == 0)
    rc = ld_node_config_finalize(&cfg, why, sizeof why);
  if (rc != 0) {
    fprintf(stderr, "bench_relay: --peer %s: %s\n", peer, why);
    return rc;
  }
  ld_node_t *node = ld_node_new(&b->loop, &cfg, &rc);
  if (node == NULL)
    return rc;
  b->nodes[b->n_nodes++] = node;
  rc = ld_node_start(node);
  if (rc == 0)
    rc = ld_node_unsubscribe(node, b->topic);
  if (rc != 0)
    fprintf(stderr, "bench_relay: node for %s: %s\n", peer, ld_strerror(rc));
  return rc;
}

static bool all_see_topic(bench_t *b) {
  for (size_t i = 0; i < b->n_nodes; i++) {
    ld_gs_service_t *gs = ld_node_gossipsub(b->nodes[i]);
    if (gs == NULL || ld_gs_service_topic_peers(gs, b->topic, NULL, 0) == 0)
      return false;
  }
  return true;
}

static void on_node_stopped(void *ud) {
  bench_t *b = ud;
  if (++b->n_stopped == b->n_nodes) {
    uv_close((uv_handle_t *)&b->tick, NULL);
    uv_close((uv_handle_t *)&b->in, NULL);
  }
}

static void quit(bench_t *b) {
  if (b->quitting)
    return;
  b->quitting = true;
  uv_timer_stop(&b->tick);
  uv_read_stop((uv_stream_t *)&b->in);
  if (b->n_nodes == 0) {
    b->n_nodes = 1; /* closes the handles at once */
    on_node_stopped(b);
    return;
  }
  for (size_t i = 0; i < b->n_nodes; i++)
    ld_node_stop(b->nodes[i], on_node_stopped, b);
}

/* ---- publishing ----------------------------------------------------------------------------- */

static void publish_one(bench_t *b) {
  int n = snprintf((char *)b->payload, b->size, "ld-bench-c %u %llu ", b->run_id,
                   (unsigned long long)b->sent);
  (void)n;
  ld_waku_message_t msg;
  ld_waku_message_init(&msg);
  msg.payload = b->payload;
  msg.payload_len = b->size;
  msg.content_topic = CONTENT_TOPIC;
  msg.content_topic_len = strlen(CONTENT_TOPIC);
  uint64_t now = ld_wall_ns();
  msg.timestamp = (int64_t)now;
  ld_node_t *node = b->nodes[b->rr++ % b->n_nodes];
  int rc = ld_node_publish(node, b->topic, &msg, NULL);
  if (rc <= 0)
    b->failed++;
  if (b->sent == 0)
    b->first_ns = now;
  b->last_ns = now;
  b->sent++;
}

static void free_replay(bench_t *b) {
  for (size_t i = 0; i < b->n_replay; i++) {
    free(b->replay[i].payload);
    free(b->replay[i].proof);
  }
  free(b->replay);
  b->replay = NULL;
  b->n_replay = b->replay_next = 0;
}

static void finish_run(bench_t *b) {
  b->running = false;
  char late[48] = "";
  if (b->replay != NULL)
    snprintf(late, sizeof late, ",\"lateMaxMs\":%.1f", (double)b->late_max_ns / 1e6);
  free_replay(b);
  printf("{\"run\":%u,\"published\":%llu,\"failed\":%llu,\"firstNs\":%llu,\"lastNs\":%llu,"
         "\"publisherCpuMs\":%.1f%s}\n",
         b->run_id, (unsigned long long)(b->sent - b->failed), (unsigned long long)b->failed,
         (unsigned long long)b->first_ns, (unsigned long long)b->last_ns, cpu_ms() - b->cpu0_ms,
         late);
  fflush(stdout);
}

/* ---- replaying messages proved beforehand --------------------------------------------------- */

static bool read_exact(FILE *f, void *out, size_t n) {
  return fread(out, 1, n, f) == n;
}

static bool read_u32(FILE *f, uint32_t *v) {
  uint8_t b[4];
  if (!read_exact(f, b, 4))
    return false;
  *v = (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 | (uint32_t)b[3] << 24;
  return true;
}

static bool read_blob(FILE *f, uint8_t **out, size_t *len, size_t max) {
  uint32_t n;
  if (!read_u32(f, &n) || n > max || (*out = malloc(n > 0 ? n : 1)) == NULL)
    return false;
  *len = n;
  return read_exact(f, *out, n);
}

/* Loads bench_relay_rln_prove's file (see its header). */
static bool load_replay(bench_t *b, const char *path) {
  FILE *f = fopen(path, "rb");
  if (f == NULL)
    return false;
  char magic[8];
  uint32_t count = 0;
  bool ok = read_exact(f, magic, 8) && memcmp(magic, "LDRLNMS1", 8) == 0 && read_u32(f, &count) &&
            count > 0 && (b->replay = calloc(count, sizeof *b->replay)) != NULL;
  for (uint32_t i = 0; ok && i < count; i++) {
    replay_msg_t *m = &b->replay[i];
    uint8_t ts[8];
    b->n_replay = i + 1;
    ok = read_exact(f, ts, 8) && read_blob(f, &m->payload, &m->payload_len, MAX_SIZE) &&
         read_blob(f, &m->proof, &m->proof_len, 1024);
    uint64_t t = 0;
    for (int k = 7; k >= 0; k--)
      t = t << 8 | ts[k];
    m->timestamp = (int64_t)t;
  }
  fclose(f);
  if (!ok)
    free_replay(b);
  return ok;
}

static void replay_one(bench_t *b, const replay_msg_t *m, uint64_t now) {
  ld_waku_message_t msg;
  ld_waku_message_init(&msg);
  msg.payload = m->payload;
  msg.payload_len = m->payload_len;
  msg.content_topic = CONTENT_TOPIC;
  msg.content_topic_len = strlen(CONTENT_TOPIC);
  msg.timestamp = m->timestamp;
  msg.proof = m->proof;
  msg.proof_len = m->proof_len;
  ld_node_t *node = b->nodes[b->rr++ % b->n_nodes];
  if (ld_node_publish(node, b->topic, &msg, NULL) <= 0)
    b->failed++;
  int64_t late = (int64_t)now - m->timestamp;
  if (late > b->late_max_ns)
    b->late_max_ns = late;
  b->sent++;
}

static void replay_tick(bench_t *b) {
  uint64_t now = ld_wall_ns();
  for (int k = 0; k < BURST_PER_TICK && b->replay_next < b->n_replay &&
                  b->replay[b->replay_next].timestamp <= (int64_t)now;
       k++)
    replay_one(b, &b->replay[b->replay_next++], now);
  if (b->replay_next == b->n_replay)
    finish_run(b);
}

static void start_replay(bench_t *b, const char *path) {
  if (!b->ready || b->running || !load_replay(b, path)) {
    printf("{\"error\":\"%s\"}\n", !b->ready ? "not ready" : b->running ? "busy" : "bad file");
    fflush(stdout);
    return;
  }
  b->run_id++;
  b->sent = b->failed = 0;
  b->late_max_ns = 0;
  b->first_ns = (uint64_t)b->replay[0].timestamp;
  b->last_ns = (uint64_t)b->replay[b->n_replay - 1].timestamp;
  b->cpu0_ms = cpu_ms();
  b->running = true;
}

static void on_tick(uv_timer_t *t) {
  bench_t *b = t->data;
  if (!b->ready) {
    if (all_see_topic(b)) {
      b->ready = true;
      printf("READY\n");
      fflush(stdout);
    }
    return;
  }
  if (!b->running)
    return;
  if (b->replay != NULL) {
    replay_tick(b);
    return;
  }
  uint64_t elapsed_ns = uv_hrtime() - b->start_hr;
  uint64_t due = (uint64_t)((double)elapsed_ns * (double)b->rate / 1e9) + 1;
  if (due > b->count)
    due = b->count;
  for (int k = 0; k < BURST_PER_TICK && b->sent < due; k++)
    publish_one(b);
  if (b->sent == b->count)
    finish_run(b);
}

static void start_run(bench_t *b, uint64_t rate, uint64_t count) {
  if (!b->ready || b->running || rate == 0 || count == 0) {
    printf("{\"error\":\"%s\"}\n", !b->ready ? "not ready" : b->running ? "busy" : "bad run");
    fflush(stdout);
    return;
  }
  b->run_id++;
  b->rate = rate;
  b->count = count;
  b->sent = b->failed = 0;
  b->start_hr = uv_hrtime();
  b->cpu0_ms = cpu_ms();
  b->running = true;
}

/* ---- commands on stdin ---------------------------------------------------------------------- */

static void command(bench_t *b, const char *line) {
  unsigned long long rate, count;
  if (sscanf(line, "run %llu %llu", &rate, &count) == 2)
    start_run(b, rate, count);
  else if (strncmp(line, "replay ", 7) == 0)
    start_replay(b, line + 7);
  else if (strncmp(line, "quit", 4) == 0)
    quit(b);
}

static void on_alloc(uv_handle_t *h, size_t suggested, uv_buf_t *buf) {
  (void)h;
  (void)suggested;
  static char space[1024];
  *buf = uv_buf_init(space, sizeof space);
}

static void on_read(uv_stream_t *s, ssize_t nread, const uv_buf_t *buf) {
  bench_t *b = s->data;
  if (nread < 0) {
    quit(b);
    return;
  }
  for (ssize_t i = 0; i < nread && !b->quitting; i++) {
    char c = buf->base[i];
    if (c == '\n') {
      b->line[b->line_len] = '\0';
      b->line_len = 0;
      command(b, b->line);
    } else if (b->line_len + 1 < sizeof b->line) {
      b->line[b->line_len++] = c;
    }
  }
}

/* ---- main ----------------------------------------------------------------------------------- */

static int usage(void) {
  fprintf(stderr, "usage: bench_relay --peer MULTIADDR [--peer …] [--cluster 42] [--shard 0] "
                  "[--size 1024] [--log-level WARN]\n");
  return 2;
}

int main(int argc, char **argv) {
  static bench_t b;
  const char *peers[MAX_PEERS];
  size_t n_peers = 0;
  unsigned cluster = 42, shard = 0;
  const char *level_text = "WARN";
  b.size = 1024;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (strcmp(argv[i], "--peer") == 0 && n_peers < MAX_PEERS)
      peers[n_peers++] = argv[i + 1];
    else if (strcmp(argv[i], "--cluster") == 0)
      cluster = (unsigned)strtoul(argv[i + 1], NULL, 10);
    else if (strcmp(argv[i], "--shard") == 0)
      shard = (unsigned)strtoul(argv[i + 1], NULL, 10);
    else if (strcmp(argv[i], "--size") == 0)
      b.size = strtoul(argv[i + 1], NULL, 10);
    else if (strcmp(argv[i], "--log-level") == 0)
      level_text = argv[i + 1];
    else
      return usage();
  }
  ld_log_level_t level;
  if (n_peers == 0 || b.size < 32 || b.size > MAX_SIZE || ld_log_parse_level(level_text, &level))
    return usage();
  ld_log_set_level(level);
  b.payload = malloc(b.size);
  if (b.payload == NULL)
    return 1;
  for (size_t i = 0; i < b.size; i++)
    b.payload[i] = (uint8_t)(i * 2654435761u >> 24);
  snprintf(b.topic, sizeof b.topic, "/waku/2/rs/%u/%u", cluster, shard);

  uv_loop_init(&b.loop);
  uv_timer_init(&b.loop, &b.tick);
  b.tick.data = &b;
  uv_pipe_init(&b.loop, &b.in, 0);
  b.in.data = &b;
  int rc = uv_pipe_open(&b.in, 0);
  if (rc == 0)
    rc = uv_read_start((uv_stream_t *)&b.in, on_alloc, on_read);
  if (rc != 0)
    fprintf(stderr, "bench_relay: stdin: %s\n", uv_strerror(rc));
  for (size_t i = 0; i < n_peers && rc == 0; i++)
    rc = add_node(&b, peers[i], cluster, shard);
  uv_timer_start(&b.tick, on_tick, 1, 1);
  if (rc != 0)
    quit(&b);
  uv_run(&b.loop, UV_RUN_DEFAULT);
  uv_loop_close(&b.loop);
  free_replay(&b);
  free(b.payload);
  return rc != 0 ? 1 : 0;
}
