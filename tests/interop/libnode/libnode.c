/* ld_libnode: one liblogosdelivery context driven through the public C API only (the installed
 * headers and the shared library), for the interop tests against js-waku (library.test.mjs).
 *
 *   ld_libnode '<logosdelivery_create_node configuration JSON>'
 *
 * Creates the context, sets its event callback, starts the node and prints
 *   ADDRS <MyMultiaddresses: the announced multiaddrs, comma-separated>
 * then reads one command per line on stdin:
 *   SUBSCRIBE <contentTopic>
 *   UNSUBSCRIBE <contentTopic>
 *   SEND <contentTopic> <base64 payload> [ephemeral]
 *   INFO <nodeInfoId>
 *   CHANNEL_CREATE <channelId> <contentTopic> <senderId>
 *   CHANNEL_SEND <channelId> <base64 payload> [ephemeral]
 *   CHANNEL_EXISTS <channelId>
 *   CHANNEL_CLOSE <channelId>
 *   QUIT                        (also: end of input, SIGTERM, SIGINT)
 * Each command is answered by exactly one line, `OK <reply>` or `ERR <reply>`, before the next
 * command is read (empty lines are skipped); an unknown command gets `ERR unknown command: …`.
 * Every event is printed as `EVENT <json>` (an event callback with RET_ERR as `EVENTERR <text>`).
 * Result lines are printed from inside the result callback, so their order among the EVENT lines
 * is the order in which the library called back. A reply that does not come within 120 s is
 * answered `ERR no reply in time` (should it come later, it is printed as `LATE <reply>`).
 * Lines are written whole (one lock for all threads) and flushed; a newline inside a text is
 * written as the two characters \n.
 *
 * QUIT stops the node and destroys the context, answering OK/ERR for each, and exits 0. When the
 * context cannot be created or started the driver prints `ERR <reason>`, cleans up (printing only
 * errors) and exits 1; bad usage exits 2. */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "liblogosdelivery.h"

#define REPLY_WAIT_S 120
#define MAX_JSON_EXTRA 128

static pthread_mutex_t out_mu = PTHREAD_MUTEX_INITIALIZER;
static volatile sig_atomic_t quit_signal;

/* ---- output --------------------------------------------------------------------------------- */

static void put_escaped(const char *text, size_t len) {
  for (size_t i = 0; i < len; i++) {
    if (text[i] == '\n')
      fputs("\\n", stdout);
    else if (text[i] == '\r')
      fputs("\\r", stdout);
    else
      putchar(text[i]);
  }
}

/* One whole line "<tag> <text>", flushed; safe from any thread. */
static void emit(const char *tag, const char *text, size_t len) {
  pthread_mutex_lock(&out_mu);
  fputs(tag, stdout);
  putchar(' ');
  if (text != NULL)
    put_escaped(text, len);
  putchar('\n');
  fflush(stdout);
  pthread_mutex_unlock(&out_mu);
}

static void emit_str(const char *tag, const char *text) {
  emit(tag, text, strlen(text));
}

static void on_event(int ret, const char *msg, size_t len, void *ud) {
  (void)ud;
  emit(ret == RET_OK ? "EVENT" : "EVENTERR", msg, msg == NULL ? 0 : len);
}

/* ---- replies -------------------------------------------------------------------------------- */

/* Shared by the waiting thread and the callback; the last of the two to let go frees it, so a
 * reply that comes after the wait gave up is harmless. The callback prints the result line
 * itself, so that it is ordered with the events exactly as the library delivered them. */
typedef struct reply {
  pthread_mutex_t mu;
  pthread_cond_t cv;
  atomic_int refs;
  const char *ok_tag; /* the tag of a successful reply; NULL: print nothing on success */
  bool done, abandoned;
  int ret;
} reply_t;

static reply_t *reply_new(const char *ok_tag) {
  reply_t *r = calloc(1, sizeof *r);
  if (r == NULL) {
    emit_str("ERR", "out of memory");
    exit(1);
  }
  pthread_mutex_init(&r->mu, NULL);
  pthread_cond_init(&r->cv, NULL);
  atomic_init(&r->refs, 2);
  r->ok_tag = ok_tag;
  return r;
}

static void reply_unref(reply_t *r) {
  if (atomic_fetch_sub(&r->refs, 1) != 1)
    return;
  pthread_mutex_destroy(&r->mu);
  pthread_cond_destroy(&r->cv);
  free(r);
}

static void on_reply(int ret, const char *msg, size_t len, void *ud) {
  reply_t *r = ud;
  pthread_mutex_lock(&r->mu);
  if (!r->done) {
    const char *tag = r->abandoned ? "LATE" : ret == RET_OK ? r->ok_tag : "ERR";
    if (tag != NULL)
      emit(tag, msg, msg == NULL ? 0 : len);
    r->done = true;
    r->ret = ret;
    pthread_cond_signal(&r->cv);
  }
  pthread_mutex_unlock(&r->mu);
  reply_unref(r);
}

/* Waits (up to REPLY_WAIT_S) for the reply to a call that returned `rc`, lets go of it; returns
 * whether it was OK. A call answered RET_MISSING_CALLBACK never calls back: its reply is made up
 * here. Without a reply in time, prints `ERR no reply in time` (a later one prints `LATE …`). */
static bool reply_finish(reply_t *r, int rc) {
  if (rc == RET_MISSING_CALLBACK)
    on_reply(RET_ERR, "RET_MISSING_CALLBACK", strlen("RET_MISSING_CALLBACK"), r);
  struct timespec until;
  clock_gettime(CLOCK_REALTIME, &until);
  until.tv_sec += REPLY_WAIT_S;
  pthread_mutex_lock(&r->mu);
  while (!r->done)
    if (pthread_cond_timedwait(&r->cv, &r->mu, &until) == ETIMEDOUT)
      break;
  bool ok = r->done && r->ret == RET_OK && rc == RET_OK;
  if (!r->done) {
    r->abandoned = true;
    emit_str("ERR", "no reply in time");
  }
  pthread_mutex_unlock(&r->mu);
  reply_unref(r);
  return ok;
}

/* ---- commands ------------------------------------------------------------------------------- */

/* `s` as a JSON string body (no quotes) appended at out[*at]; false when it does not fit. */
static bool json_escape(char *out, size_t cap, size_t *at, const char *s) {
  for (; *s != '\0'; s++) {
    unsigned char c = (unsigned char)*s;
    char tmp[8];
    int n;
    if (c == '"' || c == '\\')
      n = snprintf(tmp, sizeof tmp, "\\%c", c);
    else if (c < 0x20)
      n = snprintf(tmp, sizeof tmp, "\\u%04x", c);
    else
      n = snprintf(tmp, sizeof tmp, "%c", c);
    if (*at + (size_t)n >= cap)
      return false;
    memcpy(out + *at, tmp, (size_t)n);
    *at += (size_t)n;
  }
  out[*at] = '\0';
  return true;
}

static bool append(char *out, size_t cap, size_t *at, const char *s) {
  size_t n = strlen(s);
  if (*at + n >= cap)
    return false;
  memcpy(out + *at, s, n + 1);
  *at += n;
  return true;
}

/* {"contentTopic":…,"payload":…,"ephemeral":…}, malloc'd; NULL when out of memory. */
static char *message_json(const char *topic, const char *payload, bool ephemeral) {
  size_t cap = 2 * strlen(topic) + 6 * strlen(payload) + MAX_JSON_EXTRA;
  char *json = malloc(cap);
  size_t at = 0;
  if (json == NULL)
    return NULL;
  bool ok =
      append(json, cap, &at, "{\"contentTopic\":\"") && json_escape(json, cap, &at, topic) &&
      append(json, cap, &at, "\",\"payload\":\"") && json_escape(json, cap, &at, payload) &&
      append(json, cap, &at, ephemeral ? "\",\"ephemeral\":true}" : "\",\"ephemeral\":false}");
  if (!ok) {
    free(json);
    return NULL;
  }
  return json;
}

static bool cmd_send(void *ctx, char *args) {
  char *save = NULL;
  char *topic = strtok_r(args, " ", &save);
  char *payload = strtok_r(NULL, " ", &save);
  char *flag = strtok_r(NULL, " ", &save);
  if (topic == NULL || payload == NULL || (flag != NULL && strcmp(flag, "ephemeral") != 0)) {
    emit_str("ERR", "usage: SEND <contentTopic> <base64 payload> [ephemeral]");
    return false;
  }
  char *json = message_json(topic, payload, flag != NULL);
  if (json == NULL) {
    emit_str("ERR", "out of memory");
    return false;
  }
  reply_t *r = reply_new("OK");
  bool ok = reply_finish(r, logosdelivery_send(ctx, on_reply, r, json));
  free(json);
  return ok;
}

/* {"payload":…,"ephemeral":…}, malloc'd; NULL when out of memory. */
static char *channel_message_json(const char *payload, bool ephemeral) {
  size_t cap = 6 * strlen(payload) + MAX_JSON_EXTRA;
  char *json = malloc(cap);
  size_t at = 0;
  if (json == NULL)
    return NULL;
  bool ok =
      append(json, cap, &at, "{\"payload\":\"") && json_escape(json, cap, &at, payload) &&
      append(json, cap, &at, ephemeral ? "\",\"ephemeral\":true}" : "\",\"ephemeral\":false}");
  if (!ok) {
    free(json);
    return NULL;
  }
  return json;
}

static bool cmd_channel_create(void *ctx, char *args) {
  char *save = NULL;
  char *id = strtok_r(args, " ", &save);
  char *topic = strtok_r(NULL, " ", &save);
  char *sender = strtok_r(NULL, " ", &save);
  if (id == NULL || topic == NULL || sender == NULL || strtok_r(NULL, " ", &save) != NULL) {
    emit_str("ERR", "usage: CHANNEL_CREATE <channelId> <contentTopic> <senderId>");
    return false;
  }
  reply_t *r = reply_new("OK");
  return reply_finish(r, logosdelivery_channel_create(ctx, on_reply, r, id, topic, sender));
}

static bool cmd_channel_send(void *ctx, char *args) {
  char *save = NULL;
  char *id = strtok_r(args, " ", &save);
  char *payload = strtok_r(NULL, " ", &save);
  char *flag = strtok_r(NULL, " ", &save);
  if (id == NULL || payload == NULL || (flag != NULL && strcmp(flag, "ephemeral") != 0)) {
    emit_str("ERR", "usage: CHANNEL_SEND <channelId> <base64 payload> [ephemeral]");
    return false;
  }
  char *json = channel_message_json(payload, flag != NULL);
  if (json == NULL) {
    emit_str("ERR", "out of memory");
    return false;
  }
  reply_t *r = reply_new("OK");
  bool ok = reply_finish(r, logosdelivery_channel_send(ctx, on_reply, r, id, json));
  free(json);
  return ok;
}

typedef int (*topic_fn)(void *ctx, FFICallBack cb, void *ud, const char *arg);

static bool cmd_with_arg(void *ctx, topic_fn fn, const char *arg, const char *usage) {
  if (arg == NULL || arg[0] == '\0') {
    emit_str("ERR", usage);
    return false;
  }
  reply_t *r = reply_new("OK");
  return reply_finish(r, fn(ctx, on_reply, r, arg));
}

/* Runs one command line; returns false for QUIT. */
static bool run_command(void *ctx, char *line) {
  char *args = strchr(line, ' ');
  if (args != NULL)
    *args++ = '\0';
  if (strcmp(line, "QUIT") == 0)
    return false;
  if (strcmp(line, "SEND") == 0)
    cmd_send(ctx, args == NULL ? "" : args);
  else if (strcmp(line, "SUBSCRIBE") == 0)
    cmd_with_arg(ctx, logosdelivery_subscribe, args, "usage: SUBSCRIBE <contentTopic>");
  else if (strcmp(line, "UNSUBSCRIBE") == 0)
    cmd_with_arg(ctx, logosdelivery_unsubscribe, args, "usage: UNSUBSCRIBE <contentTopic>");
  else if (strcmp(line, "INFO") == 0)
    cmd_with_arg(ctx, logosdelivery_get_node_info, args, "usage: INFO <nodeInfoId>");
  else if (strcmp(line, "CHANNEL_CREATE") == 0)
    cmd_channel_create(ctx, args == NULL ? "" : args);
  else if (strcmp(line, "CHANNEL_SEND") == 0)
    cmd_channel_send(ctx, args == NULL ? "" : args);
  else if (strcmp(line, "CHANNEL_EXISTS") == 0)
    cmd_with_arg(ctx, logosdelivery_channel_exists, args, "usage: CHANNEL_EXISTS <channelId>");
  else if (strcmp(line, "CHANNEL_CLOSE") == 0)
    cmd_with_arg(ctx, logosdelivery_channel_close, args, "usage: CHANNEL_CLOSE <channelId>");
  else if (line[0] != '\0')
    emit_str("ERR unknown command:", line);
  return true;
}

static void command_loop(void *ctx) {
  char *line = NULL;
  size_t cap = 0;
  ssize_t n;
  while (!quit_signal && (n = getline(&line, &cap, stdin)) >= 0) {
    while (n > 0 && (line[n - 1] == '\n' || line[n - 1] == '\r'))
      line[--n] = '\0';
    if (!run_command(ctx, line))
      break;
  }
  free(line);
}

/* ---- lifecycle ------------------------------------------------------------------------------ */

static void on_signal(int sig) {
  (void)sig;
  quit_signal = 1;
}

/* SIGTERM and SIGINT interrupt the blocking read of stdin (no SA_RESTART) and end the loop. */
static void install_signals(void) {
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGTERM, &sa, NULL);
  sigaction(SIGINT, &sa, NULL);
  signal(SIGPIPE, SIG_IGN);
}

/* The new context, or NULL after an ERR line. Prints nothing on success. */
static void *create(const char *config) {
  reply_t *r = reply_new(NULL);
  void *ctx = logosdelivery_create_node(config, on_reply, r);
  if (ctx == NULL) {
    /* with a callback given, NULL comes after a synchronous RET_ERR reply */
    pthread_mutex_lock(&r->mu);
    bool came = r->done;
    r->abandoned = true;
    pthread_mutex_unlock(&r->mu);
    if (!came)
      emit_str("ERR", "logosdelivery_create_node returned NULL");
    reply_unref(r);
    return NULL;
  }
  if (!reply_finish(r, RET_OK)) {
    reply_t *d = reply_new(NULL);
    reply_finish(d, logosdelivery_destroy(ctx, on_reply, d));
    return NULL;
  }
  return ctx;
}

/* Stops the node (when `stop`) and destroys the context; `tag` is the success tag of both result
 * lines (NULL: only errors are printed). */
static void shutdown_ctx(void *ctx, bool stop, const char *tag) {
  if (stop) {
    reply_t *r = reply_new(tag);
    reply_finish(r, logosdelivery_stop_node(ctx, on_reply, r));
  }
  reply_t *r = reply_new(tag);
  /* destroy calls back on this thread before it returns */
  reply_finish(r, logosdelivery_destroy(ctx, on_reply, r));
}

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: %s '<create_node configuration JSON>'\n", argv[0]);
    return 2;
  }
  install_signals();
  void *ctx = create(argv[1]);
  if (ctx == NULL)
    return 1;
  logosdelivery_set_event_callback(ctx, on_event, NULL);
  reply_t *r = reply_new(NULL);
  if (!reply_finish(r, logosdelivery_start_node(ctx, on_reply, r))) {
    shutdown_ctx(ctx, false, NULL);
    return 1;
  }
  r = reply_new("ADDRS");
  if (!reply_finish(r, logosdelivery_get_node_info(ctx, on_reply, r, "MyMultiaddresses"))) {
    shutdown_ctx(ctx, true, NULL);
    return 1;
  }
  command_loop(ctx);
  shutdown_ctx(ctx, true, "OK");
  return 0;
}
