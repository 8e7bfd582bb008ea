/* Messages with RLN-v2 proofs made beforehand, for the relay benchmark with RLN validation on
 * (tests/interop/bench/relay-rate.mjs --rln drives it; bench_relay's `replay` publishes them).
 *
 *   bench_relay_rln_prove --circuit DIR --group-out FILE --out PREFIX
 *                         --segment RATE:COUNT [--segment …] [--gap-ms 4000] [--size 1024]
 *                         [--epoch-sec 3600] [--limit 1000000] [--threads 2] [--start-ns NS]
 *
 * One member (a fixed identity at index 0 of a static group of one, written to --group-out as
 * nwaku's static group file) proves every message. The messages of segment k (COUNT messages
 * at RATE per second, the segments back to back with --gap-ms between them) go to PREFIX.k;
 * message i of the whole schedule has message id i (so --limit must exceed the total, and the
 * fleet runs with --rln-relay-user-message-limit of it) and timestamp = its planned send time,
 * which is part of the proved signal: the fleet checks it within nwaku's 20 s clock gap, and
 * bench_relay sends each message at that time. The schedule starts at --start-ns or, by
 * default, once the proofs are expected to be done: each thread builds a proving context and
 * times one warm proof first, and the start is put at now + (messages / threads) × that × 1.5
 * + 5 s. When the proofs end less than 2 s before the start the program fails ("late").
 *
 * Output: one JSON line {"startNs":…,"segments":[{"file","rate","count","firstNs"}…],
 * "proofs":N,"wallSeconds":…,"cpuSeconds":…}. File format (little-endian): "LDRLNMS1", u32
 * count, then per message i64 timestamp, u32 payload length, payload, u32 proof length, the
 * encoded RateLimitProof. Content topic /ld/1/bench/proto (bench_relay's). */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/clock.h"
#include "waku/rln/publish.h"
#include "zk/merkle.h"
#include "zk/rln_prover.h"

#define CONTENT_TOPIC "/ld/1/bench/proto"
#define MAX_SEGMENTS 16
#define MAX_THREADS 8

typedef struct record {
  int64_t timestamp;
  uint8_t proof[LD_RLN_RATE_LIMIT_PROOF_MAX_ENCODED];
  size_t proof_len;
  int rc;
} record_t;

typedef struct plan {
  const ld_rln_prover_t *prover;
  ld_rln_member_t member;
  uint64_t epoch_sec;
  size_t size;
  size_t total;
  record_t *records;
  atomic_size_t next;
  ld_rln_proving_ctx_t *ctx[MAX_THREADS];
  double warm_seconds[MAX_THREADS];
} plan_t;

static double seconds_of(clockid_t id) {
  struct timespec ts;
  clock_gettime(id, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void payload_of(uint8_t *out, size_t size, size_t i) {
  for (size_t k = 0; k < size; k++)
    out[k] = (uint8_t)(k * 2654435761u >> 24);
  int n = snprintf((char *)out, size, "ld-bench-rln %zu ", i);
  (void)n;
}

/* Proves message i with the thread's context. */
static int prove_one(plan_t *p, ld_rln_proving_ctx_t *ctx, size_t i, int64_t timestamp,
                     uint8_t *payload, record_t *out) {
  payload_of(payload, p->size, i);
  ld_waku_message_t msg;
  ld_waku_message_init(&msg);
  msg.payload = payload;
  msg.payload_len = p->size;
  msg.content_topic = CONTENT_TOPIC;
  msg.content_topic_len = strlen(CONTENT_TOPIC);
  msg.timestamp = timestamp;
  ld_rln_rate_limit_proof_t rp;
  memset(&rp, 0, sizeof rp);
  memcpy(rp.rln_identifier, ld_rln_default_identifier, 32);
  ld_rln_epoch_bytes(rp.epoch, ld_rln_epoch_of(timestamp, p->epoch_sec));
  ld_rln_witness_t w;
  memset(&w, 0, sizeof w);
  w.identity_secret = p->member.identity_secret;
  w.user_message_limit = p->member.user_message_limit;
  w.message_id = i;
  w.merkle = p->member.merkle;
  size_t n = ld_rln_message_signal(NULL, NULL, msg.payload_len, NULL, msg.content_topic_len,
                                   msg.timestamp);
  uint8_t *signal = malloc(n);
  if (signal == NULL)
    return -1;
  ld_rln_message_signal(signal, msg.payload, msg.payload_len, msg.content_topic,
                        msg.content_topic_len, msg.timestamp);
  ld_rln_hash_to_field(&w.x, signal, n);
  free(signal);
  ld_rln_external_nullifier_nwaku(&w.external_nullifier, rp.epoch, rp.rln_identifier);
  ld_rln_proof_values_t values;
  int rc = ld_rln_prove_ctx(ctx, &w, rp.proof, &values);
  if (rc != 0)
    return rc;
  ld_fr_to_bytes(rp.merkle_root, &values.root);
  ld_fr_to_bytes(rp.share_x, &values.x);
  ld_fr_to_bytes(rp.share_y, &values.y);
  ld_fr_to_bytes(rp.nullifier, &values.nullifier);
  out->timestamp = timestamp;
  out->proof_len = ld_rln_rate_limit_proof_encode(&rp, out->proof);
  return 0;
}

typedef struct worker {
  plan_t *plan;
  size_t id;
  bool calibrate;
} worker_t;

static void *work(void *arg) {
  worker_t *wk = arg;
  plan_t *p = wk->plan;
  uint8_t *payload = malloc(p->size);
  if (payload == NULL)
    return NULL;
  record_t scratch;
  if (wk->calibrate) { /* the context, its cold proof, then one warm proof timed */
    if (ld_rln_proving_ctx_new(&p->ctx[wk->id], p->prover) != 0) {
      free(payload);
      return NULL;
    }
    prove_one(p, p->ctx[wk->id], 0, (int64_t)ld_wall_ns(), payload, &scratch);
    double t = seconds_of(CLOCK_MONOTONIC);
    prove_one(p, p->ctx[wk->id], 1, (int64_t)ld_wall_ns(), payload, &scratch);
    p->warm_seconds[wk->id] = seconds_of(CLOCK_MONOTONIC) - t;
  } else {
    for (;;) {
      size_t i = atomic_fetch_add(&p->next, 1);
      if (i >= p->total)
        break;
      record_t *r = &p->records[i];
      r->rc = prove_one(p, p->ctx[wk->id], i, r->timestamp, payload, r);
    }
  }
  free(payload);
  return NULL;
}

static int run_threads(plan_t *p, size_t threads, bool calibrate) {
  pthread_t t[MAX_THREADS];
  worker_t w[MAX_THREADS];
  for (size_t k = 0; k < threads; k++) {
    w[k] = (worker_t){p, k, calibrate};
    if (pthread_create(&t[k], NULL, work, &w[k]) != 0)
      return -1;
  }
  for (size_t k = 0; k < threads; k++)
    pthread_join(t[k], NULL);
  for (size_t k = 0; k < threads; k++)
    if (p->ctx[k] == NULL)
      return -1;
  return 0;
}

static void write_u32(FILE *f, uint32_t v) {
  uint8_t b[4] = {(uint8_t)v, (uint8_t)(v >> 8), (uint8_t)(v >> 16), (uint8_t)(v >> 24)};
  fwrite(b, 1, 4, f);
}

static void write_i64(FILE *f, int64_t v) {
  uint8_t b[8];
  for (int k = 0; k < 8; k++)
    b[k] = (uint8_t)((uint64_t)v >> (8 * k));
  fwrite(b, 1, 8, f);
}

static int write_segment(const plan_t *p, const char *path, size_t from, size_t count) {
  FILE *f = fopen(path, "wb");
  if (f == NULL)
    return -1;
  uint8_t *payload = malloc(p->size);
  if (payload == NULL) {
    fclose(f);
    return -1;
  }
  fwrite("LDRLNMS1", 1, 8, f);
  write_u32(f, (uint32_t)count);
  for (size_t i = from; i < from + count; i++) {
    const record_t *r = &p->records[i];
    payload_of(payload, p->size, i);
    write_i64(f, r->timestamp);
    write_u32(f, (uint32_t)p->size);
    fwrite(payload, 1, p->size, f);
    write_u32(f, (uint32_t)r->proof_len);
    fwrite(r->proof, 1, r->proof_len, f);
  }
  free(payload);
  return fclose(f) == 0 ? 0 : -1;
}

static int write_group(const char *path, const ld_fr_t *leaf) {
  FILE *f = fopen(path, "w");
  if (f == NULL)
    return -1;
  uint8_t le[32];
  ld_fr_to_bytes(le, leaf);
  fputs("[\"0x", f);
  for (int k = 31; k >= 0; k--)
    fprintf(f, "%02x", le[k]);
  fputs("\"]\n", f);
  return fclose(f) == 0 ? 0 : -1;
}

static int usage(void) {
  fprintf(stderr, "usage: bench_relay_rln_prove --circuit DIR --group-out FILE --out PREFIX "
                  "--segment RATE:COUNT [--segment …] [--gap-ms 4000] [--size 1024] "
                  "[--epoch-sec 3600] [--limit 1000000] [--threads 2] [--start-ns NS]\n");
  return 2;
}

int main(int argc, char **argv) {
  const char *circuit = NULL, *group_out = NULL, *out = NULL;
  double rates[MAX_SEGMENTS];
  size_t counts[MAX_SEGMENTS], n_seg = 0, threads = 2;
  uint64_t gap_ms = 4000, limit = 1000000;
  int64_t start_ns = 0;
  static plan_t p;
  p.size = 1024;
  p.epoch_sec = 3600;
  for (int i = 1; i + 1 < argc; i += 2) {
    const char *k = argv[i], *v = argv[i + 1];
    if (strcmp(k, "--circuit") == 0)
      circuit = v;
    else if (strcmp(k, "--group-out") == 0)
      group_out = v;
    else if (strcmp(k, "--out") == 0)
      out = v;
    else if (strcmp(k, "--segment") == 0 && n_seg < MAX_SEGMENTS &&
             sscanf(v, "%lf:%zu", &rates[n_seg], &counts[n_seg]) == 2 && rates[n_seg] > 0)
      n_seg++;
    else if (strcmp(k, "--gap-ms") == 0)
      gap_ms = strtoull(v, NULL, 10);
    else if (strcmp(k, "--size") == 0)
      p.size = strtoul(v, NULL, 10);
    else if (strcmp(k, "--epoch-sec") == 0)
      p.epoch_sec = strtoull(v, NULL, 10);
    else if (strcmp(k, "--limit") == 0)
      limit = strtoull(v, NULL, 10);
    else if (strcmp(k, "--threads") == 0)
      threads = strtoul(v, NULL, 10);
    else if (strcmp(k, "--start-ns") == 0)
      start_ns = strtoll(v, NULL, 10);
    else
      return usage();
  }
  for (size_t s = 0; s < n_seg; s++)
    p.total += counts[s];
  if (circuit == NULL || group_out == NULL || out == NULL || n_seg == 0 || p.size < 32 ||
      p.epoch_sec == 0 || threads == 0 || threads > MAX_THREADS || p.total + 2 > limit)
    return usage();

  char zkey[4096], graph[4096];
  snprintf(zkey, sizeof zkey, "%s/rln_final.zkey", circuit);
  snprintf(graph, sizeof graph, "%s/graph.bin", circuit);
  ld_rln_prover_t *prover;
  if (ld_rln_prover_new_from_files(&prover, zkey, graph) != 0) {
    fprintf(stderr, "bench_relay_rln_prove: cannot read %s and %s\n", zkey, graph);
    return 1;
  }
  p.prover = prover;
  ld_fr_from_u64(&p.member.identity_secret, 0xbe7c4a11ull);
  p.member.user_message_limit = limit;
  ld_fr_t idc, leaf;
  ld_rln_id_commitment(&idc, &p.member.identity_secret);
  ld_rln_rate_commitment(&leaf, &idc, limit);
  ld_merkle_tree_t *tree;
  if (ld_merkle_new(&tree, LD_MERKLE_RLN_DEPTH) != 0 || ld_merkle_set(tree, 0, &leaf) != 0 ||
      ld_merkle_proof(tree, 0, &p.member.merkle) != 0 || write_group(group_out, &leaf) != 0) {
    fprintf(stderr, "bench_relay_rln_prove: group %s not written\n", group_out);
    return 1;
  }
  ld_merkle_free(tree);

  double wall0 = seconds_of(CLOCK_MONOTONIC), cpu0 = seconds_of(CLOCK_PROCESS_CPUTIME_ID);
  if (run_threads(&p, threads, true) != 0) {
    fprintf(stderr, "bench_relay_rln_prove: no proving context\n");
    return 1;
  }
  double warm = 0;
  for (size_t k = 0; k < threads; k++)
    warm = p.warm_seconds[k] > warm ? p.warm_seconds[k] : warm;
  if (start_ns == 0)
    start_ns = (int64_t)ld_wall_ns() +
               (int64_t)(((double)p.total / (double)threads * warm * 1.5 + 5.0) * 1e9);
  p.records = calloc(p.total, sizeof *p.records);
  if (p.records == NULL)
    return 1;
  int64_t t = start_ns;
  int64_t first[MAX_SEGMENTS];
  for (size_t s = 0, i = 0; s < n_seg; s++) {
    first[s] = t;
    for (size_t k = 0; k < counts[s]; k++, i++)
      p.records[i].timestamp = t + (int64_t)((double)k * 1e9 / rates[s]);
    t += (int64_t)((double)counts[s] * 1e9 / rates[s]) + (int64_t)gap_ms * 1000000;
  }
  fprintf(stderr,
          "bench_relay_rln_prove: %zu proofs on %zu threads, %.0f ms per warm proof, "
          "start in %.1f s\n",
          p.total, threads, warm * 1e3, (double)(start_ns - (int64_t)ld_wall_ns()) / 1e9);
  run_threads(&p, threads, false);
  double wall = seconds_of(CLOCK_MONOTONIC) - wall0;
  double cpu = seconds_of(CLOCK_PROCESS_CPUTIME_ID) - cpu0;
  for (size_t i = 0; i < p.total; i++)
    if (p.records[i].rc != 0) {
      fprintf(stderr, "bench_relay_rln_prove: proof %zu failed (%d)\n", i, p.records[i].rc);
      return 1;
    }
  printf("{\"startNs\":%lld,\"segments\":[", (long long)start_ns);
  for (size_t s = 0, i = 0; s < n_seg; i += counts[s], s++) {
    char path[4200];
    snprintf(path, sizeof path, "%s.%zu", out, s);
    if (write_segment(&p, path, i, counts[s]) != 0) {
      fprintf(stderr, "bench_relay_rln_prove: %s not written\n", path);
      return 1;
    }
    printf("%s{\"file\":\"%s\",\"rate\":%g,\"count\":%zu,\"firstNs\":%lld}", s > 0 ? "," : "", path,
           rates[s], counts[s], (long long)first[s]);
  }
  double ahead = (double)(start_ns - (int64_t)ld_wall_ns()) / 1e9;
  printf("],\"proofs\":%zu,\"wallSeconds\":%.1f,\"cpuSeconds\":%.1f,\"secondsAhead\":%.1f}\n",
         p.total, wall, cpu, ahead);
  for (size_t k = 0; k < threads; k++)
    ld_rln_proving_ctx_free(p.ctx[k]);
  ld_rln_prover_free(prover);
  free(p.records);
  if (ahead < 2.0) {
    fprintf(stderr, "bench_relay_rln_prove: late (the schedule starts %.1f s from now)\n", ahead);
    return 3;
  }
  return 0;
}
