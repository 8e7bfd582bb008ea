#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <uv.h>

#include "base/clock.h"
#include "base/error.h"
#include "base/log.h"
#include "channels/channel_store.h"
#include "channels/channels.h"
#include "channels/channels_rest.h"
#include "logosdelivery/app.h"
#include "logosdelivery/hints.h"
#include "logosdelivery/node_options.h"
#include "messaging/messaging.h"
#include "node/events.h"
#include "node/node.h"

/* Parses flags, environment and config file into `*out` (freed by the caller) and sets up
 * logging. Returns 0, 1 for --help (printed), or an error (printed). */
static int parse_node_flags(int argc, char **argv, ld_app_node_options_t **out) {
  ld_app_node_options_t *opts = malloc(sizeof *opts);
  char err[512];
  *out = NULL;
  if (opts == NULL)
    return LD_ERR_NOMEM;
  int rc = ld_app_node_options_parse(argc, argv, opts, err, sizeof err);
  if (rc != 0) {
    fprintf(stderr, "logosdelivery: %s\n", err);
  } else if (opts->help) {
    printf("usage: logosdelivery [flags]\n\nflags (also WAKUNODE2_<FLAG> variables and "
           "--config-file keys):\n");
    ld_app_node_options_help(stdout);
    rc = 1;
  } else {
    ld_log_set_level(opts->log_level);
    ld_log_set_format(opts->log_format);
    *out = opts;
    return 0;
  }
  free(opts);
  return rc;
}

/* The REST and metrics servers take up to LD_HTTPD_DEFAULT_MAX_CONNECTIONS clients each, beside
 * the libp2p connections; the usual soft limit of 1024 open files would cut them short. The soft
 * limit goes up to the hard one (at most NODE_FD_LIMIT): nothing in the node uses select(). */
#define NODE_FD_LIMIT 65536

static void raise_fd_limit(void) {
  struct rlimit rl;
  if (getrlimit(RLIMIT_NOFILE, &rl) != 0)
    return;
  rlim_t want =
      rl.rlim_max == RLIM_INFINITY || rl.rlim_max > NODE_FD_LIMIT ? NODE_FD_LIMIT : rl.rlim_max;
  if (rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur < want) {
    rl.rlim_cur = want;
    if (setrlimit(RLIMIT_NOFILE, &rl) == 0)
      LD_DEBUG("main", "Open file limit raised to %llu", (unsigned long long)want);
  }
}

typedef struct node_run {
  uv_loop_t loop;
  uv_signal_t sigint, sigterm;
  ld_node_t *node;
  ld_messaging_t *messaging; /* with --rest: the client behind /messaging/v1 */
  ld_channels_t *channels;   /* with --rest --channels: the manager behind /channels/v1 */
  bool stopping;
  bool failed;        /* a part the node needs failed after start */
  char failure[2048]; /* what failed and what to do, printed last (hints.c); "" when unknown */
} node_run_t;

static void on_node_stopped(void *user_data) {
  node_run_t *run = user_data;
  uv_close((uv_handle_t *)&run->sigint, NULL);
  uv_close((uv_handle_t *)&run->sigterm, NULL);
}

static void on_messaging_freed(void *user_data) {
  node_run_t *run = user_data;
  ld_node_stop(run->node, on_node_stopped, run);
}

/* The messaging client goes first (its REST paths with it), then the node. */
static void stop_node(node_run_t *run) {
  if (run->channels != NULL) {
    ld_channels_rest_detach(run->channels, run->messaging);
    ld_channels_free(run->channels);
    run->channels = NULL;
  }
  ld_messaging_t *m = run->messaging;
  run->messaging = NULL;
  if (m != NULL)
    ld_messaging_free(m, on_messaging_freed, run);
  else
    ld_node_stop(run->node, on_node_stopped, run);
}

/* As logos-delivery's program with the messaging entry layer, the REST server serves the
 * Messaging API (/messaging/v1/…): a MessagingClient on the started node, in Core mode when the
 * node runs relay (Edge otherwise: lightpush and filter through the service peers), with
 * confirmed sends when they can be confirmed: by a store peer (--storenode), or by peer presence
 * with --reliability-mode=p2p (no store node needed). Only with --rest, since
 * nothing else in the program uses it. A client that cannot start is logged and the node runs
 * without it (the paths then answer 404). */
static void start_messaging(node_run_t *run) {
  const ld_node_config_t *cfg = ld_node_config(run->node);
  if (!cfg->rest.enabled)
    return;
  ld_messaging_config_t mc;
  ld_messaging_config_default(&mc);
  mc.mode = cfg->relay ? LD_MESSAGING_CORE : LD_MESSAGING_EDGE;
  mc.reliability = cfg->has_service_node[LD_NODE_SERVICE_STORE] ||
                   cfg->reliability_mode == LD_NODE_RELIABILITY_P2P;
  int err = 0;
  run->messaging = ld_messaging_new(run->node, &mc, &err);
  if (run->messaging == NULL)
    LD_WARN("main", "Messaging API not available: %s", ld_strerror(err));
}

/* With --channels, the Reliable Channels layer above the messaging client, served on REST as
 * /channels/v1 (channels/channels_rest.h); its state in <--local-storage-path>/channels.sqlite3
 * when that is set, in memory otherwise. A layer that cannot start is logged and the node runs
 * without it (the paths then answer 404). */
static void start_channels(node_run_t *run) {
  const ld_node_config_t *cfg = ld_node_config(run->node);
  if (!cfg->channels || run->messaging == NULL)
    return;
  ld_channels_config_t cc;
  ld_channels_config_default(&cc);
  if (cfg->local_storage_path[0] != '\0')
    snprintf(cc.state_path, sizeof cc.state_path, "%s/%s", cfg->local_storage_path,
             LD_CHANNEL_STORE_FILE);
  int err = 0;
  run->channels = ld_channels_new(&run->loop, run->messaging, &cc, &err);
  if (run->channels != NULL &&
      (err = ld_channels_rest_attach(run->channels, run->messaging)) != 0) {
    ld_channels_free(run->channels);
    run->channels = NULL;
  }
  if (run->channels == NULL)
    LD_WARN("main", "Reliable channels not available: %s", ld_strerror(err));
}

static void on_signal(uv_signal_t *handle, int signum) {
  node_run_t *run = handle->data;
  if (run->stopping)
    return;
  run->stopping = true;
  LD_INFO("main", "Received %s, stopping the node", signum == SIGINT ? "SIGINT" : "SIGTERM");
  stop_node(run);
}

/* Keeps what failed in the node and what to change (hints.c), for the last line the program
 * prints once the node has stopped (the node and its record are gone by then). */
static void keep_failure(node_run_t *run, int err) {
  const ld_node_failure_t *f = run->node != NULL ? ld_node_failure(run->node) : NULL;
  if (f != NULL)
    ld_app_node_failure_text(ld_node_config(run->node), f, run->failure, sizeof run->failure);
  else if (err != 0)
    snprintf(run->failure, sizeof run->failure,
             "the node did not start: %s (%s); the log lines above name the part that failed, "
             "and --log-level=DEBUG shows more",
             ld_strerror(err), ld_errname(err));
}

static void tell_failure(const node_run_t *run) {
  if (run->failure[0] != '\0')
    fprintf(stderr, "logosdelivery: %s\n", run->failure);
}

/* A part the node cannot run without failed (the archive): stop as nwaku does at start-up. */
static void on_node_failure(int kind, const void *payload, void *user_data) {
  (void)kind;
  const ld_event_node_failure_t *ev = payload;
  node_run_t *run = user_data;
  if (run->stopping)
    return;
  run->stopping = run->failed = true;
  LD_ERROR("main", "Stopping the node: the %s failed: %s", ev->part, ev->why);
  keep_failure(run, ev->err);
  stop_node(run);
}

static int start_signals(node_run_t *run) {
  uv_signal_init(&run->loop, &run->sigint);
  uv_signal_init(&run->loop, &run->sigterm);
  run->sigint.data = run->sigterm.data = run;
  if (uv_signal_start(&run->sigint, on_signal, SIGINT) != 0 ||
      uv_signal_start(&run->sigterm, on_signal, SIGTERM) != 0)
    return LD_ERR_IO;
  return 0;
}

/* "Start-up: listening 3.1 ms after main, set up (REST, metrics, Messaging API) after 4.0 ms". */
static void log_startup_time(const ld_node_t *node) {
  uint64_t now = ld_now_ns(), listening = ld_node_listening_ns(node);
  double ready_ms = (double)(now - ld_app_main_ns) / 1e6;
  if (listening == 0)
    LD_INFO("main", "Start-up: set up %.1f ms after main (not listening)", ready_ms);
  else
    LD_INFO("main", "Start-up: listening %.1f ms after main, set up after %.1f ms",
            (double)(listening - ld_app_main_ns) / 1e6, ready_ms);
}

int ld_app_run_node(int argc, char **argv) {
  ld_app_node_options_t *opts;
  int rc = parse_node_flags(argc, argv, &opts);
  if (rc != 0)
    return rc == 1 ? LD_EXIT_OK : LD_EXIT_USAGE;
  raise_fd_limit();
  node_run_t run;
  memset(&run, 0, sizeof run);
  uv_loop_init(&run.loop);
  int err = 0;
  /* The node keeps its own copy of the configuration: the options go back to the heap before
   * the node starts allocating, instead of a second copy living in static storage. */
  run.node = ld_node_new(&run.loop, &opts->config, &err);
  free(opts);
  /* Signals are watched before the node starts: it logs its listen addresses while starting,
   * and a supervisor that reads them may stop it at once. A signal that arrives meanwhile is
   * handled when the loop runs. */
  if (run.node != NULL && start_signals(&run) != 0)
    err = LD_ERR_IO;
  if (run.node == NULL || err != 0 || (err = ld_node_start(run.node)) != 0) {
    LD_ERROR("main", "Failed to start the node: %s (%s)", ld_strerror(err), ld_errname(err));
    keep_failure(&run, err);
    run.stopping = true;
    if (run.node != NULL)
      ld_node_stop(run.node, on_node_stopped, &run);
    uv_run(&run.loop, UV_RUN_DEFAULT);
    uv_loop_close(&run.loop);
    tell_failure(&run);
    return LD_EXIT_USAGE;
  }
  ld_broker_subscribe(ld_node_broker(run.node), LD_EVENT_NODE_FAILURE, on_node_failure, &run);
  start_messaging(&run);
  start_channels(&run);
  log_startup_time(run.node);
  LD_INFO("main", "Node setup complete");
  uv_run(&run.loop, UV_RUN_DEFAULT);
  uv_loop_close(&run.loop);
  LD_INFO("main", "Node stopped");
  tell_failure(&run);
  return run.failed ? LD_EXIT_USAGE : LD_EXIT_OK;
}
