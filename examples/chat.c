/* A two-terminal chat over the Messaging API of liblogosdelivery.
 *
 *   cc chat.c $(pkg-config --cflags --libs liblogosdelivery) -o chat
 *   terminal 1:  ./chat 60010
 *   terminal 2:  ./chat 60011 <an address terminal 1 printed>
 *
 * Each line typed is sent on the room's content topic; lines from the other side are printed. */
#include <liblogosdelivery.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#define ROOM "/chat/1/room/proto"

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static int answered;

/* Every call answers once through a callback (on the library's thread): wait for it. */
static void on_answer(int ret, const char *msg, size_t len, void *out) {
  if (ret != RET_OK)
    fprintf(stderr, "error: %.*s\n", (int)len, msg);
  else if (out != NULL)
    snprintf(out, 1024, "%.*s", (int)len, msg);
  pthread_mutex_lock(&mu);
  answered = 1;
  pthread_cond_signal(&cv);
  pthread_mutex_unlock(&mu);
}

static void wait_answer(void) {
  pthread_mutex_lock(&mu);
  while (!answered)
    pthread_cond_wait(&cv, &mu);
  answered = 0;
  pthread_mutex_unlock(&mu);
}

/* message_received events carry the payload as an array of byte values. */
static void on_event(int ret, const char *msg, size_t len, void *unused) {
  char json[65536];
  (void)unused;
  snprintf(json, sizeof json, "%.*s", (int)len, msg);
  const char *p = strstr(json, "\"payload\":[");
  if (ret != RET_OK || strstr(json, "\"message_received\"") == NULL || p == NULL)
    return;
  printf("> ");
  for (p += 11; *p != ']';) {
    int byte, used;
    if (sscanf(p, "%d%n", &byte, &used) != 1)
      break;
    putchar(byte);
    p += used + (p[used] == ',');
  }
  printf("\n");
  fflush(stdout);
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

int main(int argc, char **argv) {
  char config[1024], text[1024], line[700], b64[1000], json[1200];
  snprintf(config, sizeof config,
           "{\"tcpPort\":%s,\"clusterId\":42,\"numShardsInNetwork\":1,\"logLevel\":\"ERROR\","
           "\"discv5Discovery\":false,"
           "\"staticnodes\":[%s%s%s]}",
           argc > 1 ? argv[1] : "0", argc > 2 ? "\"" : "", argc > 2 ? argv[2] : "",
           argc > 2 ? "\"" : "");
  void *ctx = logosdelivery_create_node(config, on_answer, NULL);
  wait_answer();
  logosdelivery_set_event_callback(ctx, on_event, NULL);
  logosdelivery_start_node(ctx, on_answer, NULL);
  wait_answer();
  logosdelivery_get_node_info(ctx, on_answer, text, "MyMultiaddresses");
  wait_answer();
  printf("listening on %s\n", text);
  fflush(stdout);
  logosdelivery_subscribe(ctx, on_answer, NULL, ROOM);
  wait_answer();
  while (fgets(line, sizeof line, stdin) != NULL) {
    line[strcspn(line, "\n")] = 0;
    base64(line, strlen(line), b64);
    snprintf(json, sizeof json, "{\"contentTopic\":\"%s\",\"payload\":\"%s\"}", ROOM, b64);
    logosdelivery_send(ctx, on_answer, NULL, json);
    wait_answer();
  }
  logosdelivery_stop_node(ctx, on_answer, NULL);
  wait_answer();
  logosdelivery_destroy(ctx, on_answer, NULL);
  return 0;
}
