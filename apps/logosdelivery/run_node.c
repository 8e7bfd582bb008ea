#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <uv.h>

#include "base/error.h"
#include "base/log.h"
#include "logosdelivery/app.h"
#include "logosdelivery/flags.h"
#include "node/node.h"

typedef struct node_flags {
  char nodekey[LD_FLAG_STRING_MAX];
  char listen_address[LD_FLAG_STRING_MAX];
  int64_t tcp_port;
  int64_t ports_shift;
  int64_t max_connections;
  char log_level[LD_FLAG_STRING_MAX];
  char log_format[LD_FLAG_STRING_MAX];
  bool help;
} node_flags_t;

static size_t node_flag_table(node_flags_t *f, ld_flag_t *t) {
  const ld_flag_t table[] = {
      {"nodekey", LD_FLAG_STRING, f->nodekey, 0, 0, "P2P node private key as 64 hex chars"},
      {"listen-address", LD_FLAG_STRING, f->listen_address, 0, 0, "listening address"},
      {"tcp-port", LD_FLAG_INT, &f->tcp_port, 0, 65535, "TCP listening port (0 = any)"},
      {"ports-shift", LD_FLAG_INT, &f->ports_shift, 0, 65535, "added to every port"},
      {"max-connections", LD_FLAG_INT, &f->max_connections, 1, 100000, "maximum connections"},
      {"log-level", LD_FLAG_STRING, f->log_level, 0, 0,
       "TRACE, DEBUG, INFO, NOTICE, WARN, ERROR or FATAL"},
      {"log-format", LD_FLAG_STRING, f->log_format, 0, 0, "TEXT or JSON"},
      {"help", LD_FLAG_BOOL, &f->help, 0, 0, "print this help"},
  };
  memcpy(t, table, sizeof table);
  return sizeof table / sizeof table[0];
}

static void node_flags_default(node_flags_t *f) {
  memset(f, 0, sizeof *f);
  strcpy(f->listen_address, "0.0.0.0");
  f->tcp_port = LD_NODE_DEFAULT_TCP_PORT;
  f->max_connections = LD_NODE_DEFAULT_MAX_CONNECTIONS;
  strcpy(f->log_level, "INFO");
  strcpy(f->log_format, "TEXT");
}

static int setup_logging(const node_flags_t *f) {
  ld_log_level_t level;
  ld_log_format_t format;
  if (ld_log_parse_level(f->log_level, &level) != 0) {
    fprintf(stderr, "logosdelivery: --log-level: unknown level '%s'\n", f->log_level);
    return LD_ERR_INVALID_ARG;
  }
  if (ld_log_parse_format(f->log_format, &format) != 0) {
    fprintf(stderr, "logosdelivery: --log-format: expected TEXT or JSON, got '%s'\n",
            f->log_format);
    return LD_ERR_INVALID_ARG;
  }
  ld_log_set_level(level);
  ld_log_set_format(format);
  return 0;
}

static int build_config(const node_flags_t *f, ld_node_config_t *cfg) {
  char err[256];
  ld_node_config_default(cfg);
  cfg->max_connections = (size_t)f->max_connections;
  if (f->nodekey[0] != '\0' && ld_node_config_set_nodekey_hex(cfg, f->nodekey, err, sizeof err)) {
    fprintf(stderr, "logosdelivery: --nodekey: %s\n", err);
    return LD_ERR_INVALID_ARG;
  }
  if (ld_node_config_set_listen(cfg, f->listen_address, f->tcp_port, f->ports_shift, err,
                                sizeof err) != 0) {
    fprintf(stderr, "logosdelivery: %s\n", err);
    return LD_ERR_INVALID_ARG;
  }
  return 0;
}

/* Parses flags and environment into a node configuration. Returns 0, 1 for --help (printed), or
 * an error (printed). */
static int parse_node_flags(int argc, char **argv, ld_node_config_t *cfg) {
  node_flags_t f;
  ld_flag_t table[16];
  ld_flags_result_t res;
  memset(&res, 0, sizeof res);
  node_flags_default(&f);
  size_t n = node_flag_table(&f, table);
  if (ld_flags_parse(table, n, argc, argv, &res) != 0 ||
      ld_flags_apply_env(table, n, "WAKUNODE2_", &res) != 0) {
    fprintf(stderr, "logosdelivery: %s\n", res.error);
    return LD_ERR_INVALID_ARG;
  }
  if (f.help) {
    printf("usage: logosdelivery [flags]\n\nflags:\n");
    ld_flags_print_help(table, n, stdout);
    return 1;
  }
  if (res.n_positional > 0) {
    fprintf(stderr, "logosdelivery: unexpected argument '%s'\n", res.positional[0]);
    return LD_ERR_INVALID_ARG;
  }
  int rc = setup_logging(&f);
  return rc != 0 ? rc : build_config(&f, cfg);
}

typedef struct node_run {
  uv_loop_t loop;
  uv_signal_t sigint, sigterm;
  ld_node_t *node;
  bool stopping;
} node_run_t;

static void on_node_stopped(void *user_data) {
  node_run_t *run = user_data;
  uv_close((uv_handle_t *)&run->sigint, NULL);
  uv_close((uv_handle_t *)&run->sigterm, NULL);
}

static void on_signal(uv_signal_t *handle, int signum) {
  node_run_t *run = handle->data;
  if (run->stopping)
    return;
  run->stopping = true;
  LD_INFO("main", "Received %s, stopping the node", signum == SIGINT ? "SIGINT" : "SIGTERM");
  ld_node_stop(run->node, on_node_stopped, run);
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

int ld_app_run_node(int argc, char **argv) {
  ld_node_config_t cfg;
  int rc = parse_node_flags(argc, argv, &cfg);
  if (rc != 0)
    return rc == 1 ? LD_EXIT_OK : LD_EXIT_USAGE;
  node_run_t run;
  memset(&run, 0, sizeof run);
  uv_loop_init(&run.loop);
  int err = 0;
  run.node = ld_node_new(&run.loop, &cfg, &err);
  if (run.node == NULL || (err = ld_node_start(run.node)) != 0) {
    LD_ERROR("main", "Failed to start the node: %s (%s)", ld_strerror(err), ld_errname(err));
    if (run.node != NULL)
      ld_node_stop(run.node, NULL, NULL);
    uv_run(&run.loop, UV_RUN_DEFAULT);
    uv_loop_close(&run.loop);
    return LD_EXIT_USAGE;
  }
  start_signals(&run);
  LD_INFO("main", "Node setup complete");
  uv_run(&run.loop, UV_RUN_DEFAULT);
  uv_loop_close(&run.loop);
  LD_INFO("main", "Node stopped");
  return LD_EXIT_OK;
}
