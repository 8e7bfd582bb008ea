/* Throughput of the WakuMessage codec, the deterministic hash, the relay message ID and
 * autosharding on one core. Prints one figure per line; never fails on a time. Each figure runs
 * for about half a second. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/buf.h"
#include "waku/core/message.h"
#include "waku/core/sharding.h"
#include "waku/core/topics.h"

#define RUN_SECONDS 0.5

typedef void (*bench_fn)(void *arg);

static volatile uint32_t g_sink;

static double now_seconds(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Calls fn in batches until RUN_SECONDS have passed; returns calls per second. */
static double calls_per_second(bench_fn fn, void *arg, int batch) {
  fn(arg);
  double start = now_seconds(), elapsed;
  long calls = 0;
  do {
    for (int i = 0; i < batch; i++)
      fn(arg);
    calls += batch;
    elapsed = now_seconds() - start;
  } while (elapsed < RUN_SECONDS);
  return (double)calls / elapsed;
}

static void report(const char *name, bench_fn fn, void *arg, size_t bytes) {
  double rate = calls_per_second(fn, arg, 64);
  printf("%-52s %12.0f ops/s %10.1f MB/s\n", name, rate, rate * (double)bytes / 1e6);
}

typedef struct {
  ld_waku_message_t msg;
  ld_buf_t wire; /* the nwaku-style encoding of msg */
  ld_buf_t out;
} msg_bench_t;

static void do_encode(void *arg) {
  msg_bench_t *b = arg;
  ld_buf_reset(&b->out);
  if (ld_waku_message_encode(&b->msg, SIZE_MAX, &b->out) != 0)
    abort();
  g_sink += b->out.data[0];
}

static void do_decode(void *arg) {
  msg_bench_t *b = arg;
  ld_waku_message_t m;
  ld_waku_message_init(&m);
  if (ld_waku_message_decode(b->wire.data, b->wire.len, SIZE_MAX, 0, &m) != 0)
    abort();
  g_sink += (uint32_t)m.payload_len;
  ld_waku_message_clear(&m);
}

static void do_hash(void *arg) {
  msg_bench_t *b = arg;
  uint8_t h[LD_WAKU_HASH_LEN];
  if (ld_waku_message_hash("/waku/2/rs/1/3", &b->msg, h) != 0)
    abort();
  g_sink += h[0];
}

static void do_message_id(void *arg) {
  msg_bench_t *b = arg;
  uint8_t h[LD_WAKU_HASH_LEN];
  ld_waku_relay_message_id(b->wire.data, b->wire.len, h);
  g_sink += h[0];
}

/* What a relay node does per received message: ID, decode, hash. */
static void do_receive(void *arg) {
  do_message_id(arg);
  do_decode(arg);
  do_hash(arg);
}

static void do_autoshard(void *arg) {
  (void)arg;
  static const char ct[] = "/toychat/2/huilong/proto";
  ld_relay_shard_t s;
  if (ld_autoshard(ct, sizeof ct - 1, 8, 1, &s, NULL) != 0)
    abort();
  g_sink += s.shard_id;
}

static void do_pubsub_parse(void *arg) {
  (void)arg;
  static const char t[] = "/waku/2/rs/16/32";
  ld_relay_shard_t s;
  if (ld_pubsub_topic_parse(t, sizeof t - 1, &s, NULL) != 0)
    abort();
  g_sink += s.shard_id;
}

static void bench_size(size_t payload_len) {
  msg_bench_t b;
  uint8_t *payload = malloc(payload_len + 1);
  static const uint8_t meta[12] = "super-secret";
  for (size_t i = 0; i < payload_len; i++)
    payload[i] = (uint8_t)(i * 31 + 7);
  ld_waku_message_init(&b.msg);
  b.msg.payload = payload;
  b.msg.payload_len = payload_len;
  b.msg.content_topic = "/toychat/2/huilong/proto";
  b.msg.content_topic_len = strlen(b.msg.content_topic);
  b.msg.meta = meta;
  b.msg.meta_len = sizeof meta;
  b.msg.timestamp = INT64_C(1681964442000000000);
  ld_buf_init(&b.wire);
  ld_buf_init(&b.out);
  if (ld_waku_message_encode(&b.msg, SIZE_MAX, &b.wire) != 0)
    abort();
  char name[96];
  const char *what[] = {"encode", "decode", "deterministic hash", "relay message ID",
                        "receive (ID + decode + hash)"};
  bench_fn fns[] = {do_encode, do_decode, do_hash, do_message_id, do_receive};
  for (size_t i = 0; i < sizeof fns / sizeof fns[0]; i++) {
    snprintf(name, sizeof name, "%s, %zu B message", what[i], b.wire.len);
    report(name, fns[i], &b, b.wire.len);
  }
  ld_buf_clear(&b.wire);
  ld_buf_clear(&b.out);
  free(payload);
}

int main(void) {
  bench_size(100);
  bench_size(1024);
  bench_size(64 * 1024);
  bench_size(150 * 1024 - 100);
  report("autoshard /toychat/2/huilong/proto (8 shards)", do_autoshard, NULL, 0);
  report("pubsub topic parse /waku/2/rs/16/32", do_pubsub_parse, NULL, 0);
  return g_sink == 0x12345678 ? 1 : 0;
}
