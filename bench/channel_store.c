/* The reliable channels' SQLite store alone (src/channels/channel_store.c): the rows a burst of
 * channel messages writes, on the sender and on the receiver, with the channel manager's commit
 * batches. Prints CPU time per message; nothing is asserted.
 *
 *   bench_channel_store [--messages 20000] [--batch 20] [--ack-after 400] [--size 300]
 *                       [--log-twice 0]
 *
 * Per message, as the channel layer writes them: at the sender the outgoing row (--size bytes of
 * SDS message) and the log row with its hint (known at submission; --log-twice 1: first without
 * the hint, then again with it, as the channel layer wrote it before), and the outgoing row's
 * deletion when the message is acknowledged --ack-after messages later; at the receiver the log
 * row with its hint and the deletion of the message's incoming row (asked on every delivery; the
 * store skips it for a message that was never buffered). Both commit every --batch messages
 * (a burst of ~4,000 messages/s fills a 5 ms batch with ~20), the channel row with each commit,
 * and the log is trimmed as the manager trims it (every max_log / 10 + 1 puts). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bench_clock.h"
#include "channels/channel_store.h"

#define CHANNEL "bench"
#define MAX_LOG 10000u

static uint64_t thread_cpu_us(void) {
  return bench_clock_us(CLOCK_THREAD_CPUTIME_ID);
}

static ld_channel_store_t *open_at(const char *dir, const char *name) {
  char path[256], why[256] = "";
  snprintf(path, sizeof path, "%s/%s/%s", dir, name, LD_CHANNEL_STORE_FILE);
  ld_channel_store_t *st = NULL;
  if (ld_channel_store_open(path, &st, why, sizeof why) != 0) {
    fprintf(stderr, "%s\n", why);
    exit(1);
  }
  return st;
}

static void message_id(size_t i, char out[65]) {
  snprintf(out, 65, "%064zx", i * 2654435761u);
}

int main(int argc, char **argv) {
  size_t messages = 20000, batch = 20, ack_after = 400, size = 300, log_twice = 0;
  for (int i = 1; i + 1 < argc; i += 2) {
    size_t v = (size_t)atol(argv[i + 1]);
    if (strcmp(argv[i], "--messages") == 0)
      messages = v;
    else if (strcmp(argv[i], "--batch") == 0)
      batch = v;
    else if (strcmp(argv[i], "--ack-after") == 0)
      ack_after = v;
    else if (strcmp(argv[i], "--size") == 0)
      size = v;
    else if (strcmp(argv[i], "--log-twice") == 0)
      log_twice = v;
  }
  if (messages == 0 || batch == 0 || size == 0 || size > 65536)
    return 2;
  char dir[] = "/tmp/ld_bench_channel_store_XXXXXX";
  if (mkdtemp(dir) == NULL)
    return 1;
  ld_channel_store_t *a = open_at(dir, "a"), *b = open_at(dir, "b");
  uint8_t *wire = malloc(size), hint[32];
  memset(wire, 0x5a, size);
  memset(hint, 0xa5, sizeof hint);
  size_t trim_every = MAX_LOG / 10 + 1, puts_a = 0, puts_b = 0;
  uint64_t t0 = thread_cpu_us();
  for (size_t i = 0; i < messages; i++) {
    char id[65], acked[65];
    message_id(i, id);
    if (log_twice) {
      ld_channel_store_put_log(a, CHANNEL, id, i + 1, "alice", NULL, 0);
      puts_a++;
    }
    ld_channel_store_put_outgoing(a, CHANNEL, id, "request-id-of-the-send", wire, size);
    ld_channel_store_put_log(a, CHANNEL, id, i + 1, "alice", hint, sizeof hint);
    puts_a++;
    ld_channel_store_put_log(b, CHANNEL, id, i + 1, "alice", hint, sizeof hint);
    ld_channel_store_delete(b, CHANNEL, LD_CHANNEL_RECORD_INCOMING, id);
    puts_b++;
    if (i >= ack_after) {
      message_id(i - ack_after, acked);
      ld_channel_store_delete(a, CHANNEL, LD_CHANNEL_RECORD_OUTGOING, acked);
    }
    if (puts_a >= trim_every) {
      puts_a = 0;
      ld_channel_store_trim_log(a, CHANNEL, MAX_LOG);
    }
    if (puts_b >= trim_every) {
      puts_b = 0;
      ld_channel_store_trim_log(b, CHANNEL, MAX_LOG);
    }
    if ((i + 1) % batch == 0) {
      ld_channel_store_put_channel(a, CHANNEL, "/bench/1/c/proto", "alice", i + 1);
      ld_channel_store_put_channel(b, CHANNEL, "/bench/1/c/proto", "bob", i + 1);
      ld_channel_store_commit(a);
      ld_channel_store_commit(b);
    }
  }
  ld_channel_store_commit(a);
  ld_channel_store_commit(b);
  uint64_t cpu = thread_cpu_us() - t0;
  printf("channel store, %zu messages, commit every %zu, acknowledged %zu later, %zu-byte SDS "
         "messages:\n",
         messages, batch, ack_after, size);
  printf("  CPU %.2f us per message (sender and receiver); SQL writes: sender %llu, receiver %llu "
         "(%.2f per message); write errors %llu\n",
         (double)cpu / (double)messages, (unsigned long long)ld_channel_store_writes(a),
         (unsigned long long)ld_channel_store_writes(b),
         (double)(ld_channel_store_writes(a) + ld_channel_store_writes(b)) / (double)messages,
         (unsigned long long)(ld_channel_store_errors(a) + ld_channel_store_errors(b)));
  ld_channel_store_close(a);
  ld_channel_store_close(b);
  free(wire);
  char cmd[128];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
  return system(cmd) == 0 ? 0 : 1;
}
