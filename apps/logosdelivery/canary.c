#include <jansson.h>
#include <stdio.h>
#include <string.h>
#include <uv.h>

#include "base/error.h"
#include "base/log.h"
#include "logosdelivery/app.h"
#include "logosdelivery/client.h"
#include "logosdelivery/flags.h"
#include "logosdelivery/hints.h"
#include "p2p/identify.h"
#include "p2p/ping.h"
#include "p2p/switch.h"

#define CANARY_MAX_PINGS 1000

typedef struct canary {
  uv_loop_t loop;
  uv_timer_t deadline;
  ld_switch_t *sw;
  ld_identify_t *identify;
  ld_conn_t *conn;
  json_t *report;
  json_t *pings;
  bool identified, pinging, finished;
  int64_t ping_count;
  int exit_code;
} canary_t;

/* The send/subscribe mapping, except that the canary counts a closed connection and a cluster
 * mismatch as "other". */
static int exit_code_for(int err) {
  if (err == LD_ERR_CLOSED || err == LD_ERR_CLUSTER_MISMATCH)
    return LD_CANARY_EXIT_OTHER;
  return ld_client_exit_code(err);
}

static void on_closed(void *user_data) {
  canary_t *c = user_data;
  uv_close((uv_handle_t *)&c->deadline, NULL);
}

static void finish(canary_t *c, int err, const char *stage) {
  if (c->finished)
    return;
  c->finished = true;
  if (err == 0) {
    json_object_set(c->report, "pings", c->pings);
    char *text = json_dumps(c->report, JSON_COMPACT | JSON_REAL_PRECISION(6));
    printf("%s\n", text);
    free(text);
    c->exit_code = LD_EXIT_OK;
  } else {
    char hint[384];
    if (strcmp(stage, "dial") == 0)
      ld_app_dial_hint(err, "the multiaddr", hint, sizeof hint);
    else if (err == LD_ERR_TIMEOUT)
      snprintf(hint, sizeof hint, "give the peer more time with --timeout");
    else
      snprintf(hint, sizeof hint, "check that the multiaddr names a libp2p node that serves %s",
               stage);
    fprintf(stderr, "canary: %s failed: %s (%s); %s\n", stage, ld_strerror(err), ld_errname(err),
            hint);
    c->exit_code = exit_code_for(err);
  }
  uv_timer_stop(&c->deadline);
  ld_switch_close(c->sw, on_closed, c);
}

static json_t *addrs_json(const ld_multiaddr_t *addrs, size_t n) {
  json_t *arr = json_array();
  for (size_t i = 0; i < n; i++) {
    char text[LD_MULTIADDR_TEXT_MAX];
    if (ld_multiaddr_to_text(&addrs[i], text, sizeof text) > 0)
      json_array_append_new(arr, json_string(text));
  }
  return arr;
}

static void report_identify(canary_t *c, const ld_identify_info_t *info) {
  json_t *protocols = json_array();
  for (size_t i = 0; i < info->n_protocols; i++)
    json_array_append_new(protocols, json_string(info->protocols[i]));
  json_object_set_new(c->report, "agentVersion", json_string(info->agent_version));
  json_object_set_new(c->report, "protocolVersion", json_string(info->protocol_version));
  json_object_set_new(c->report, "protocols", protocols);
  json_object_set_new(c->report, "listenAddrs",
                      addrs_json(info->listen_addrs, info->n_listen_addrs));
  char observed[LD_MULTIADDR_TEXT_MAX];
  if (info->has_observed_addr &&
      ld_multiaddr_to_text(&info->observed_addr, observed, sizeof observed) > 0)
    json_object_set_new(c->report, "observedAddr", json_string(observed));
}

static void on_ping(int err, unsigned index, uint64_t rtt_us, bool done, void *user_data) {
  canary_t *c = user_data;
  (void)index;
  if (!done) {
    json_array_append_new(c->pings, json_real((double)rtt_us / 1000.0));
    return;
  }
  finish(c, err, "ping");
}

static void start_pings(canary_t *c) {
  if (c->pinging || c->conn == NULL || !c->identified)
    return;
  c->pinging = true;
  if (c->ping_count == 0) {
    finish(c, 0, "");
    return;
  }
  int rc = ld_ping(c->sw, c->conn, (unsigned)c->ping_count, on_ping, c);
  if (rc != 0)
    finish(c, rc, "ping");
}

static void on_identified(ld_conn_t *conn, const ld_identify_info_t *info, void *user_data) {
  canary_t *c = user_data;
  if (c->identified)
    return;
  c->identified = true;
  c->conn = conn;
  report_identify(c, info);
  start_pings(c);
}

static void on_identify_failed(ld_conn_t *conn, int err, void *user_data) {
  (void)conn;
  finish(user_data, err, "identify");
}

static void on_dialed(ld_conn_t *conn, int err, void *user_data) {
  canary_t *c = user_data;
  if (err != 0) {
    finish(c, err, "dial");
    return;
  }
  char id[LD_PEERID_TEXT_MAX];
  ld_peerid_to_text(ld_conn_remote_peer(conn), id, sizeof id);
  json_object_set_new(c->report, "peerId", json_string(id));
  json_object_set_new(c->report, "connected", json_true());
  json_object_set_new(c->report, "muxer", json_string(ld_conn_muxer(conn)));
  c->conn = conn;
  start_pings(c);
}

static void on_deadline(uv_timer_t *t) {
  finish(t->data, LD_ERR_TIMEOUT, "canary");
}

static int canary_setup(canary_t *c, const ld_privkey_t *key) {
  ld_switch_config_t sc;
  ld_switch_config_default(&sc);
  sc.loop = &c->loop;
  sc.identity = key;
  c->sw = ld_switch_new(&sc);
  if (c->sw == NULL)
    return LD_ERR_NOMEM;
  c->identify = ld_identify_new(c->sw, NULL);
  if (c->identify == NULL || ld_ping_handle(c->sw) != 0)
    return LD_ERR_NOMEM;
  static const ld_identify_events_t events = {on_identified, on_identify_failed};
  ld_identify_set_events(c->identify, &events, c);
  return 0;
}

static int canary_run(canary_t *c, const ld_multiaddr_t *target, int64_t timeout_s) {
  ld_privkey_t key;
  int rc = ld_privkey_generate(&key, LD_KEY_SECP256K1);
  uv_loop_init(&c->loop);
  uv_timer_init(&c->loop, &c->deadline);
  c->deadline.data = c;
  if (rc == 0)
    rc = canary_setup(c, &key);
  if (rc == 0)
    rc = ld_switch_dial(c->sw, target, on_dialed, c);
  if (rc != 0) {
    fprintf(stderr,
            "canary: cannot start: %s (%s); run it again with --log-level=DEBUG to see why\n",
            ld_strerror(rc), ld_errname(rc));
    c->exit_code = exit_code_for(rc);
    c->finished = true;
    if (c->sw != NULL)
      ld_switch_close(c->sw, on_closed, c);
    else
      uv_close((uv_handle_t *)&c->deadline, NULL);
  } else {
    uv_timer_start(&c->deadline, on_deadline, (uint64_t)timeout_s * 1000, 0);
  }
  uv_run(&c->loop, UV_RUN_DEFAULT);
  uv_loop_close(&c->loop);
  ld_identify_free(c->identify);
  return c->exit_code;
}

typedef struct canary_opts {
  int64_t ping, timeout;
  char log_level[LD_FLAG_STRING_MAX];
} canary_opts_t;

#define CANARY_N_FLAGS 3

static void canary_flags(canary_opts_t *o, ld_flag_t *flags) {
  *o = (canary_opts_t){.ping = 3, .timeout = 10, .log_level = "ERROR"};
  const ld_flag_t table[CANARY_N_FLAGS] = {
      {"ping", LD_FLAG_INT, &o->ping, 0, CANARY_MAX_PINGS, "number of pings (default 3)"},
      {"timeout", LD_FLAG_INT, &o->timeout, 1, 3600, "seconds before giving up (default 10)"},
      {"log-level", LD_FLAG_STRING, o->log_level, 0, 0, "log level on stderr (default ERROR)"},
  };
  _Static_assert(sizeof table / sizeof table[0] == CANARY_N_FLAGS, "CANARY_N_FLAGS");
  memcpy(flags, table, sizeof table);
}

size_t ld_app_canary_flags(ld_flag_t *out, size_t cap) {
  static canary_opts_t unused;
  ld_flag_t flags[CANARY_N_FLAGS];
  canary_flags(&unused, flags);
  size_t n = cap < CANARY_N_FLAGS ? cap : CANARY_N_FLAGS;
  memcpy(out, flags, n * sizeof *flags);
  return n;
}

int ld_app_canary(int argc, char **argv) {
  canary_opts_t o;
  ld_flag_t flags[CANARY_N_FLAGS];
  canary_flags(&o, flags);
  int64_t ping = 0, timeout = 0;
  char *log_level = o.log_level;
  ld_flags_result_t res;
  memset(&res, 0, sizeof res);
  ld_log_level_t level;
  if (ld_flags_parse(flags, CANARY_N_FLAGS, argc, argv, &res) != 0) {
    fprintf(stderr, "canary: %s\n", res.error);
    return LD_EXIT_USAGE;
  }
  if (res.n_positional != 1) {
    fprintf(stderr,
            "canary: %s; give the peer's multiaddr as the one argument\n"
            "usage: logosdelivery canary <multiaddr> [--ping N] [--timeout S]\n",
            res.n_positional == 0 ? "no multiaddr" : "more than one argument");
    return LD_EXIT_USAGE;
  }
  if (ld_log_parse_level(log_level, &level) != 0) {
    fprintf(stderr,
            "canary: --log-level: unknown level '%s'; write TRACE, DEBUG, INFO, NOTICE, "
            "WARN, ERROR or FATAL\n",
            log_level);
    return LD_EXIT_USAGE;
  }
  ld_log_set_level(level);
  ping = o.ping;
  timeout = o.timeout;
  ld_multiaddr_t target;
  if (ld_multiaddr_parse(&target, res.positional[0]) != 0) {
    fprintf(stderr,
            "canary: '%s' is not a valid multiaddr; give one such as "
            "/ip4/127.0.0.1/tcp/60000/p2p/16Uiu2… (the node logs it as `Listening on …`)\n",
            res.positional[0]);
    return LD_EXIT_USAGE;
  }
  canary_t c;
  memset(&c, 0, sizeof c);
  c.report = json_object();
  c.pings = json_array();
  c.ping_count = ping;
  int code = canary_run(&c, &target, timeout);
  json_decref(c.pings);
  json_decref(c.report);
  return code;
}
