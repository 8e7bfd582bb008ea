/* A chat room on a reliable channel of liblogosdelivery: every participant sees every message,
 * in causal order, once, also when it was away for a while.
 *
 *   cc channel_chat.c $(pkg-config --cflags --libs liblogosdelivery) -lpthread -o channel_chat
 *   terminal 1:  ./channel_chat alice ./alice 60010
 *   terminal 2:  ./channel_chat bob ./bob 60011 <an address terminal 1 printed>
 *   terminal 3:  ./channel_chat carol ./carol 60012 <an address terminal 1 printed>
 *
 * Each line typed is sent on the channel; messages from the others are printed as
 * "> sender: text". The room's history ("sender: text" lines) is kept in <dir>/history.log and
 * the channel's state in <dir>/channels.sqlite3 (the library's localStoragePath): stop a
 * participant (Ctrl-D) and start it again with the same name and folder, and it resumes the
 * channel and receives what it missed from the others, with nothing twice. With --fast first,
 * missed messages are asked for within about a second instead of the SDS-R default of 30 s to
 * 2 min (channelsOverrides sdsRepairTMinMs / sdsRepairTMaxMs / sdsSyncIntervalMs). */
#include <liblogosdelivery.h>
#include <liblogosdelivery_kernel.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHANNEL "chat-room"
#define TOPIC "/chat/1/channel-room/proto"
#define TEXT_MAX 1024

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static int answered, failed;
static FILE *history;

/* Every call answers once through a callback (on the library's thread): wait for it. */
static void on_answer(int ret, const char *msg, size_t len, void *out) {
  pthread_mutex_lock(&mu);
  if (ret != RET_OK)
    fprintf(stderr, "error: %.*s\n", (int)len, msg);
  else if (out != NULL)
    snprintf(out, TEXT_MAX, "%.*s", (int)len, msg);
  failed = ret != RET_OK;
  answered = 1;
  pthread_cond_signal(&cv);
  pthread_mutex_unlock(&mu);
}

/* Waits for the answer; 0 when it was RET_OK. */
static int wait_answer(void) {
  pthread_mutex_lock(&mu);
  while (!answered)
    pthread_cond_wait(&cv, &mu);
  answered = 0;
  int rc = failed;
  pthread_mutex_unlock(&mu);
  return rc;
}

static int b64_value(char c) {
  static const char k[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  const char *p = c != '\0' ? strchr(k, c) : NULL;
  return p != NULL ? (int)(p - k) : -1;
}

/* Decodes base64 text (up to a '"') into out[0..cap); returns the length. */
static size_t unbase64(const char *in, char *out, size_t cap) {
  size_t n = 0;
  unsigned acc = 0;
  int bits = 0;
  for (; *in != '"' && *in != '\0' && *in != '=' && n + 1 < cap; in++) {
    int v = b64_value(*in);
    if (v < 0)
      break;
    acc = acc << 6 | (unsigned)v;
    if ((bits += 6) >= 8) {
      bits -= 8;
      out[n++] = (char)(acc >> bits & 0xff);
    }
  }
  out[n] = '\0';
  return n;
}

static void base64(const char *in, size_t n, char *out) {
  static const char k[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  for (size_t i = 0; i < n; i += 3, out += 4) {
    unsigned v = (unsigned char)in[i] << 16 | (i + 1 < n ? (unsigned char)in[i + 1] << 8 : 0) |
                 (i + 2 < n ? (unsigned char)in[i + 2] : 0);
    out[0] = k[v >> 18], out[1] = k[v >> 12 & 63];
    out[2] = i + 1 < n ? k[v >> 6 & 63] : '=', out[3] = i + 2 < n ? k[v & 63] : '=';
  }
  *out = 0;
}

/* Appends "sender: text" to the history (flushed at once: the file is the room as seen here). */
static void remember(const char *sender, const char *text) {
  pthread_mutex_lock(&mu);
  fprintf(history, "%s: %s\n", sender, text);
  fflush(history);
  pthread_mutex_unlock(&mu);
}

/* The string value of "key":"…" in a flat event object (names and IDs hold no quotes here). */
static const char *field(const char *json, const char *key, char *out, size_t cap) {
  char pattern[64];
  snprintf(pattern, sizeof pattern, "\"%s\":\"", key);
  const char *p = strstr(json, pattern);
  if (p == NULL)
    return NULL;
  p += strlen(pattern);
  size_t n = strcspn(p, "\"");
  snprintf(out, cap, "%.*s", (int)(n < cap ? n : cap - 1), p);
  return out;
}

/* channel_message_received: {"eventType":…,"channelId":…,"senderId":…,"payload":"<base64>"} */
static void on_event(int ret, const char *msg, size_t len, void *unused) {
  char json[8192], sender[256], b64[4096], text[TEXT_MAX];
  (void)unused;
  snprintf(json, sizeof json, "%.*s", (int)len, msg);
  if (ret != RET_OK || strstr(json, "\"eventType\":\"channel_message_received\"") == NULL ||
      field(json, "senderId", sender, sizeof sender) == NULL ||
      field(json, "payload", b64, sizeof b64) == NULL)
    return;
  unbase64(b64, text, sizeof text);
  remember(sender, text);
  printf("> %s: %s\n", sender, text);
  fflush(stdout);
}

int main(int argc, char **argv) {
  int fast = argc > 1 && strcmp(argv[1], "--fast") == 0;
  argv += fast, argc -= fast;
  if (argc < 3) {
    fprintf(stderr, "usage: channel_chat [--fast] <name> <folder> [<port> [<peer address>]]\n");
    return 2;
  }
  const char *name = argv[1], *dir = argv[2];
  char config[2048], text[TEXT_MAX], path[1024], line[700], b64[1000], json[1200];
  snprintf(path, sizeof path, "%s/history.log", dir);
  if ((history = fopen(path, "a")) == NULL) {
    perror(path);
    return 1;
  }
  snprintf(config, sizeof config,
           "{\"messagingOverrides\":{\"p2pTcpPort\":%s,\"clusterId\":42,"
           "\"numShardsInCluster\":1,\"logLevel\":\"ERROR\",\"localStoragePath\":\"%s\"},"
           "\"channelsOverrides\":{%s}}",
           argc > 3 ? argv[3] : "0", dir,
           fast ? "\"sdsRepairTMinMs\":200,\"sdsRepairTMaxMs\":1000,\"sdsSyncIntervalMs\":1000"
                : "");
  void *ctx = logosdelivery_create_node(config, on_answer, NULL);
  if (ctx == NULL || wait_answer() != 0)
    return 1;
  logosdelivery_set_event_callback(ctx, on_event, NULL);
  logosdelivery_start_node(ctx, on_answer, NULL);
  if (wait_answer() != 0)
    return 1;
  logosdelivery_get_node_info(ctx, on_answer, text, "MyMultiaddresses");
  wait_answer();
  printf("listening on %s\n", text);
  /* the peer to join through (the messaging configuration has no static peers: the kernel call
   * dials it) */
  if (argc > 4) {
    waku_connect(ctx, on_answer, NULL, argv[4], 10000);
    if (wait_answer() != 0)
      return 1;
  }
  /* a channel created again resumes from <folder>/channels.sqlite3 */
  logosdelivery_channel_create(ctx, on_answer, NULL, CHANNEL, TOPIC, name);
  if (wait_answer() != 0)
    return 1;
  printf("joined %s as %s\n", CHANNEL, name);
  fflush(stdout);
  while (fgets(line, sizeof line, stdin) != NULL) {
    line[strcspn(line, "\n")] = 0;
    if (line[0] == '\0')
      continue;
    base64(line, strlen(line), b64);
    snprintf(json, sizeof json, "{\"payload\":\"%s\"}", b64);
    logosdelivery_channel_send(ctx, on_answer, NULL, CHANNEL, json);
    if (wait_answer() == 0)
      remember(name, line);
  }
  logosdelivery_stop_node(ctx, on_answer, NULL);
  wait_answer();
  logosdelivery_destroy(ctx, on_answer, NULL);
  wait_answer();
  fclose(history);
  return 0;
}
