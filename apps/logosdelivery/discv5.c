/* `logosdelivery discv5`: a discv5 node alone, for operators and tests. It listens on UDP,
 * joins the DHT through --discv5-bootstrap-node records, answers PING/FINDNODE/TALKREQ, runs the
 * Waku search loop and prints what happens as JSON lines on stdout:
 *   {"event":"listening","enr":…,"nodeId":…,"peerId":…,"udp":…}    once, first
 *   {"event":"session","nodeId":…,"addr":…,"initiator":…}           a handshake completed
 *   {"event":"added","nodeId":…,"enr":…}                            a new routing table node
 *   {"event":"discovered","nodeId":…,"addr":…,"enr":…}              a record a lookup learnt
 *   {"event":"peer","nodeId":…,"peerId":…,"enr":…,"multiaddrs":[…]} a record the search matched
 *   {"event":"lookup","found":…,"asked":…}                          a lookup ended
 *   {"event":"enr","enr":…,"seq":…}                                 our record changed
 *   {"event":"stats",…}                                             at exit
 * It exits 0 on SIGINT/SIGTERM, after --count matching peers, or at --timeout. */
#include <jansson.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <uv.h>

#include "base/error.h"
#include "base/hex.h"
#include "base/log.h"
#include "crypto/crypto.h"
#include "logosdelivery/app.h"
#include "logosdelivery/flags.h"
#include "waku/discovery/discv5_uv.h"

typedef struct discv5_opts {
  char nodekey[LD_FLAG_STRING_MAX];
  char listen[LD_FLAG_STRING_MAX];
  char ext_ip[LD_FLAG_STRING_MAX];
  char protocol[LD_FLAG_STRING_MAX];
  char log_level[LD_FLAG_STRING_MAX];
  int64_t udp_port, tcp_port, cluster, waku2, interval_ms, bits_per_hop, bucket_ip_limit,
      table_ip_limit, timeout_s, count;
  bool auto_update;
  ld_strlist_t bootstrap, shards;
} discv5_opts_t;

typedef struct discv5_app {
  uv_loop_t loop;
  uv_signal_t sigint, sigterm;
  uv_timer_t deadline;
  ld_discv5_uv_t *u;
  int64_t peers, count;
  bool stopping;
} discv5_app_t;

static void print_json(json_t *obj) {
  char *text = json_dumps(obj, JSON_COMPACT);
  if (text != NULL) {
    printf("%s\n", text);
    fflush(stdout);
    free(text);
  }
  json_decref(obj);
}

static json_t *hex_string(const uint8_t *data, size_t len) {
  char text[2 * 64 + 1];
  ld_hex_encode(data, len, text);
  return json_string(text);
}

static json_t *enr_string(const ld_enr_t *enr) {
  char text[LD_ENR_TEXT_MAX];
  return ld_enr_to_text(enr, text, sizeof text) > 0 ? json_string(text) : json_null();
}

static json_t *addr_string(const ld_discv5_addr_t *a) {
  char text[64];
  return json_string(ld_discv5_addr_text(a, text, sizeof text));
}

static void stop(discv5_app_t *app) {
  if (app->stopping)
    return;
  app->stopping = true;
  ld_discv5_t *d = app->u != NULL ? ld_discv5_uv_engine(app->u) : NULL;
  if (d != NULL) {
    ld_discv5_stats_t st;
    ld_discv5_get_stats(d, &st);
    print_json(json_pack("{s:s,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I}", "event", "stats", "packetsIn",
                         (json_int_t)st.packets_in, "packetsOut", (json_int_t)st.packets_out,
                         "handshakes", (json_int_t)st.handshakes_ok, "findnodeAnswered",
                         (json_int_t)st.findnode_answered, "lookups", (json_int_t)st.lookups_done,
                         "tableSize", (json_int_t)ld_discv5_table_size(ld_discv5_table(d)),
                         "timedOut", (json_int_t)st.requests_timed_out, "recordsDropped",
                         (json_int_t)st.nodes_records_dropped, "peers", (json_int_t)app->peers));
  }
  ld_discv5_uv_close(app->u);
  uv_close((uv_handle_t *)&app->sigint, NULL);
  uv_close((uv_handle_t *)&app->sigterm, NULL);
  uv_close((uv_handle_t *)&app->deadline, NULL);
}

static void on_signal(uv_signal_t *s, int signum) {
  (void)signum;
  stop(s->data);
}

static void on_deadline(uv_timer_t *t) {
  stop(t->data);
}

/* The adapter must not be closed from its own callbacks: stop on the next loop turn. */
static void stop_soon(discv5_app_t *app) {
  uv_timer_start(&app->deadline, on_deadline, 0, 0);
}

static void on_event(void *ud, ld_discv5_event_t *ev) {
  json_t *o = NULL;
  (void)ud;
  switch (ev->type) {
  case LD_DISCV5_EV_SESSION:
    o = json_pack("{s:s,s:o,s:o,s:b}", "event", "session", "nodeId", hex_string(ev->node_id, 32),
                  "addr", addr_string(ev->addr), "initiator", ev->initiator);
    break;
  case LD_DISCV5_EV_NODE_ADDED:
    o = json_pack("{s:s,s:o,s:o,s:o}", "event", "added", "nodeId", hex_string(ev->node_id, 32),
                  "addr", addr_string(ev->addr), "enr", enr_string(ev->enr));
    break;
  case LD_DISCV5_EV_DISCOVERED:
    o = json_pack("{s:s,s:o,s:o,s:o}", "event", "discovered", "nodeId", hex_string(ev->node_id, 32),
                  "addr", addr_string(ev->addr), "enr", enr_string(ev->enr));
    break;
  case LD_DISCV5_EV_LOOKUP_DONE:
    o = json_pack("{s:s,s:I,s:I}", "event", "lookup", "found", (json_int_t)ev->count, "asked",
                  (json_int_t)ev->asked);
    break;
  case LD_DISCV5_EV_ENR_UPDATED:
    o = json_pack("{s:s,s:o,s:I}", "event", "enr", "enr", enr_string(ev->enr), "seq",
                  (json_int_t)ev->enr->seq);
    break;
  default:
    break;
  }
  if (o != NULL)
    print_json(o);
}

static void on_peer(void *ud, const ld_enr_t *enr) {
  discv5_app_t *app = ud;
  uint8_t id[32];
  ld_peerid_t pid;
  char pid_text[LD_PEERID_TEXT_MAX];
  ld_multiaddr_t addrs[8];
  json_t *mas = json_array();
  size_t n = ld_enr_dial_addrs(enr, addrs, 8);
  for (size_t i = 0; i < n && i < 8; i++) {
    char text[LD_MULTIADDR_TEXT_MAX];
    if (ld_multiaddr_to_text(&addrs[i], text, sizeof text) > 0)
      json_array_append_new(mas, json_string(text));
  }
  if (ld_enr_node_id(enr, id) != 0 || ld_enr_peer_id(enr, &pid) != 0 ||
      ld_peerid_to_text(&pid, pid_text, sizeof pid_text) < 0) {
    json_decref(mas);
    return;
  }
  print_json(json_pack("{s:s,s:o,s:s,s:o,s:o}", "event", "peer", "nodeId", hex_string(id, 32),
                       "peerId", pid_text, "enr", enr_string(enr), "multiaddrs", mas));
  app->peers++;
  if (app->count > 0 && app->peers >= app->count)
    stop_soon(app);
}

/* ---- setup ---------------------------------------------------------------------------------- */

static int parse_shards(const ld_strlist_t *l, uint16_t *out) {
  if (l->count > LD_WAKU_DISCV5_MAX_SHARDS)
    return LD_ERR_LIMIT;
  for (size_t i = 0; i < l->count; i++) {
    char *end;
    long v = strtol(l->items[i], &end, 10);
    if (*end != '\0' || end == l->items[i] || v < 0 || v > LD_ENR_MAX_SHARD)
      return LD_ERR_INVALID_ARG;
    out[i] = (uint16_t)v;
  }
  return 0;
}

static int load_key(const discv5_opts_t *o, ld_privkey_t *key) {
  if (o->nodekey[0] == '\0')
    return ld_privkey_generate(key, LD_KEY_SECP256K1);
  uint8_t secret[32];
  size_t len;
  if (ld_hex_decode(o->nodekey, strlen(o->nodekey), secret, sizeof secret, &len) != 0 || len != 32)
    return LD_ERR_BAD_KEY;
  return ld_privkey_from_secp256k1(key, secret);
}

/* Our record: ip (--ext-ip, else the listen address unless it is a wildcard), udp, and the
 * Waku fields asked for. */
static int build_record(const discv5_opts_t *o, const ld_privkey_t *key, uint16_t port,
                        ld_enr_t *enr) {
  ld_enr_builder_t b;
  ld_enr_builder_init(&b, 1);
  const char *ip = o->ext_ip[0] ? o->ext_ip : o->listen;
  uint8_t ip4[4], ip6[16];
  int rc = 0;
  if (uv_inet_pton(AF_INET, ip, ip4) == 0) {
    if (ip4[0] != 0)
      rc = ld_enr_builder_set_ip4(&b, ip4);
  } else if (uv_inet_pton(AF_INET6, ip, ip6) == 0) {
    rc = ld_enr_builder_set_ip6(&b, ip6);
  } else {
    return LD_ERR_INVALID_ARG;
  }
  if (rc == 0)
    rc = ld_enr_builder_set_uint(&b, "udp", port);
  if (rc == 0 && o->tcp_port > 0)
    rc = ld_enr_builder_set_uint(&b, "tcp", (uint64_t)o->tcp_port);
  if (rc == 0 && o->waku2 > 0)
    rc = ld_enr_builder_set_waku2(&b, (uint8_t)o->waku2);
  if (rc == 0 && o->cluster >= 0) {
    uint16_t shards[LD_WAKU_DISCV5_MAX_SHARDS];
    rc = parse_shards(&o->shards, shards);
    if (rc == 0)
      rc = ld_enr_builder_set_shards(&b, (uint16_t)o->cluster, shards, o->shards.count);
  }
  return rc != 0 ? rc : ld_enr_builder_sign(&b, key, enr);
}

static int search_config(const discv5_opts_t *o, const ld_enr_t *boots, size_t n_boots,
                         ld_waku_discv5_config_t *s) {
  ld_waku_discv5_config_default(s);
  s->interval_ms = (uint32_t)o->interval_ms;
  for (size_t i = 0; i < n_boots; i++)
    ld_waku_discv5_config_add_bootnode(s, &boots[i]);
  if (o->cluster < 0)
    return 0;
  uint16_t shards[LD_WAKU_DISCV5_MAX_SHARDS];
  int rc = parse_shards(&o->shards, shards);
  return rc != 0
             ? rc
             : ld_waku_discv5_config_set_shards(s, (uint16_t)o->cluster, shards, o->shards.count);
}

static int start(discv5_app_t *app, const discv5_opts_t *o, const ld_enr_t *boots, size_t n_boots) {
  ld_privkey_t key;
  ld_enr_t enr;
  ld_waku_discv5_config_t search;
  int rc = load_key(o, &key);
  if (rc == 0)
    rc = ld_discv5_uv_open(&app->loop, o->listen, (uint16_t)o->udp_port, &app->u);
  if (rc == 0)
    rc = build_record(o, &key, ld_discv5_uv_port(app->u), &enr);
  if (rc == 0)
    rc = search_config(o, boots, n_boots, &search);
  if (rc != 0)
    return rc;
  ld_discv5_config_t cfg;
  ld_discv5_config_default(&cfg);
  cfg.protocol_id = o->protocol;
  cfg.key = &key;
  cfg.enr = &enr;
  cfg.table.bits_per_hop = (int)o->bits_per_hop;
  cfg.table.bucket_ip_limit = (unsigned)o->bucket_ip_limit;
  cfg.table.table_ip_limit = (unsigned)o->table_ip_limit;
  cfg.enr_auto_update = o->auto_update;
  ld_random_bytes(&cfg.seed, sizeof cfg.seed);
  ld_discv5_uv_callbacks_t cb = {on_event, on_peer};
  if ((rc = ld_discv5_uv_start(app->u, &cfg, &search, &cb, app)) != 0)
    return rc;
  uint8_t id[32];
  ld_peerid_t pid;
  char pid_text[LD_PEERID_TEXT_MAX] = "";
  ld_enr_node_id(&enr, id);
  if (ld_enr_peer_id(&enr, &pid) == 0)
    ld_peerid_to_text(&pid, pid_text, sizeof pid_text);
  print_json(json_pack("{s:s,s:o,s:o,s:s,s:i,s:s}", "event", "listening", "enr", enr_string(&enr),
                       "nodeId", hex_string(id, 32), "peerId", pid_text, "udp",
                       ld_discv5_uv_port(app->u), "protocolId", o->protocol));
  ld_discv5_t *d = ld_discv5_uv_engine(app->u);
  for (size_t i = 0; i < n_boots; i++)
    if (ld_discv5_add_enr(d, &boots[i], true, uv_now(&app->loop)) < 0)
      fprintf(stderr,
              "discv5: bootstrap record %zu has no UDP endpoint, skipped; give a record with "
              "ip and udp fields (a discv5 node's ENR)\n",
              i);
  ld_discv5_uv_update(app->u);
  return 0;
}

static int parse_bootstrap(const ld_strlist_t *l, ld_enr_t **out) {
  *out = calloc(l->count + 1, sizeof **out);
  if (*out == NULL)
    return LD_ERR_NOMEM;
  for (size_t i = 0; i < l->count; i++) {
    int rc = ld_enr_parse_text(&(*out)[i], l->items[i]);
    if (rc != 0) {
      fprintf(stderr,
              "discv5: --discv5-bootstrap-node '%.60s': %s (%s); give a node record as text, "
              "enr:…, as /debug/v1/info shows it (enrUri)\n",
              l->items[i], ld_strerror(rc), ld_errname(rc));
      return rc;
    }
  }
  return 0;
}

static int run(discv5_opts_t *o) {
  discv5_app_t app;
  memset(&app, 0, sizeof app);
  app.count = o->count;
  ld_enr_t *boots = NULL;
  int rc = parse_bootstrap(&o->bootstrap, &boots);
  bool reported = rc != 0; /* parse_bootstrap said which record */
  uv_loop_init(&app.loop);
  uv_signal_init(&app.loop, &app.sigint);
  uv_signal_init(&app.loop, &app.sigterm);
  uv_timer_init(&app.loop, &app.deadline);
  app.sigint.data = app.sigterm.data = app.deadline.data = &app;
  if (rc == 0)
    rc = start(&app, o, boots, o->bootstrap.count);
  if (rc != 0) {
    if (rc == LD_ERR_ADDR_IN_USE)
      fprintf(stderr,
              "discv5: --discv5-udp-port: cannot listen on UDP %s:%lld: address already in use; "
              "choose another port with --discv5-udp-port (0 picks a free one), or stop the "
              "process that uses it\n",
              o->listen, (long long)o->udp_port);
    else if (!reported)
      fprintf(stderr,
              "discv5: cannot start: %s (%s); check the flags (`logosdelivery discv5 "
              "--help`)\n",
              ld_strerror(rc), ld_errname(rc));
    stop(&app);
  } else {
    uv_signal_start(&app.sigint, on_signal, SIGINT);
    uv_signal_start(&app.sigterm, on_signal, SIGTERM);
    if (o->timeout_s > 0)
      uv_timer_start(&app.deadline, on_deadline, (uint64_t)o->timeout_s * 1000, 0);
  }
  uv_run(&app.loop, UV_RUN_DEFAULT);
  uv_loop_close(&app.loop);
  free(boots);
  return rc == 0 ? LD_EXIT_OK : (rc == LD_ERR_ADDR_IN_USE ? LD_CANARY_EXIT_OTHER : LD_EXIT_USAGE);
}

#define DISCV5_N_FLAGS 18

/* The defaults into `o`, and the flag table over it into `flags` (DISCV5_N_FLAGS entries). */
static void discv5_flags(discv5_opts_t *o, ld_flag_t *flags) {
  memset(o, 0, sizeof *o);
  strcpy(o->listen, "0.0.0.0");
  strcpy(o->protocol, LD_DISCV5_PROTOCOL_ID_WAKU);
  strcpy(o->log_level, "WARN");
  o->udp_port = 9000;
  o->cluster = -1;
  o->interval_ms = LD_WAKU_DISCV5_DEFAULT_INTERVAL_MS;
  o->bits_per_hop = 1;
  o->bucket_ip_limit = LD_DISCV5_DEFAULT_BUCKET_IP_LIMIT;
  o->table_ip_limit = LD_DISCV5_DEFAULT_TABLE_IP_LIMIT;
  const ld_flag_t table[] = {
      {"nodekey", LD_FLAG_STRING, o->nodekey, 0, 0, "secp256k1 key, 64 hex digits (default: new)"},
      {"listen-address", LD_FLAG_STRING, o->listen, 0, 0, "IP to bind (default 0.0.0.0)"},
      {"discv5-udp-port", LD_FLAG_INT, &o->udp_port, 0, 65535, "UDP port (default 9000; 0: any)"},
      {"ext-ip", LD_FLAG_STRING, o->ext_ip, 0, 0, "IP our record announces (default: listen)"},
      {"tcp-port", LD_FLAG_INT, &o->tcp_port, 0, 65535, "TCP port our record announces"},
      {"discv5-bootstrap-node", LD_FLAG_LIST, &o->bootstrap, 0, 0, "bootstrap ENR (repeatable)"},
      {"protocol-id", LD_FLAG_STRING, o->protocol, 0, 0, "d5waku (default, Waku) or discv5"},
      {"cluster-id", LD_FLAG_INT, &o->cluster, -1, 65535, "our cluster: announced and searched"},
      {"shard", LD_FLAG_LIST, &o->shards, 0, 0, "our shard (repeatable)"},
      {"waku2", LD_FLAG_INT, &o->waku2, 0, 255, "waku2 capability bits our record announces"},
      {"interval", LD_FLAG_INT, &o->interval_ms, 1, 3600000, "ms between lookups (default 5000)"},
      {"discv5-bits-per-hop", LD_FLAG_INT, &o->bits_per_hop, 1, LD_DISCV5_BITS_PER_HOP_MAX,
       "routing table bits-per-hop (default 1)"},
      {"discv5-bucket-ip-limit", LD_FLAG_INT, &o->bucket_ip_limit, 0, 16, "(default 2)"},
      {"discv5-table-ip-limit", LD_FLAG_INT, &o->table_ip_limit, 0, 6144, "(default 10)"},
      {"discv5-enr-auto-update", LD_FLAG_BOOL, &o->auto_update, 0, 0, "update our ip from PONGs"},
      {"count", LD_FLAG_INT, &o->count, 0, 1000000, "exit after this many matching peers"},
      {"timeout", LD_FLAG_INT, &o->timeout_s, 0, 86400, "exit after this many seconds"},
      {"log-level", LD_FLAG_STRING, o->log_level, 0, 0, "log level on stderr (default WARN)"},
  };
  _Static_assert(sizeof table / sizeof table[0] == DISCV5_N_FLAGS, "DISCV5_N_FLAGS");
  memcpy(flags, table, sizeof table);
}

size_t ld_app_discv5_flags(ld_flag_t *out, size_t cap) {
  static discv5_opts_t unused;
  ld_flag_t flags[DISCV5_N_FLAGS];
  discv5_flags(&unused, flags);
  size_t n = cap < DISCV5_N_FLAGS ? cap : DISCV5_N_FLAGS;
  memcpy(out, flags, n * sizeof *flags);
  return n;
}

int ld_app_discv5(int argc, char **argv) {
  discv5_opts_t o;
  ld_flag_t flags[DISCV5_N_FLAGS];
  discv5_flags(&o, flags);
  size_t n_flags = DISCV5_N_FLAGS;
  ld_flags_result_t res;
  memset(&res, 0, sizeof res);
  ld_log_level_t level;
  int code = LD_EXIT_USAGE;
  if (argc > 0 && strcmp(argv[0], "--help") == 0) {
    printf("usage: logosdelivery discv5 [flags]\n");
    ld_flags_print_help(flags, n_flags, stdout);
    code = LD_EXIT_OK;
  } else if (ld_flags_parse(flags, n_flags, argc, argv, &res) != 0) {
    fprintf(stderr, "discv5: %s\n", res.error);
  } else if (res.n_positional != 0) {
    fprintf(stderr,
            "discv5: unexpected argument '%s'; bootstrap records go in "
            "--discv5-bootstrap-node\n",
            res.positional[0]);
  } else if (ld_log_parse_level(o.log_level, &level) != 0) {
    fprintf(stderr,
            "discv5: --log-level: unknown level '%s'; write TRACE, DEBUG, INFO, NOTICE, "
            "WARN, ERROR or FATAL\n",
            o.log_level);
  } else if (strlen(o.protocol) != LD_DISCV5_PROTOCOL_ID_LEN) {
    fprintf(stderr, "discv5: --protocol-id '%s' is not 6 bytes; write d5waku or discv5\n",
            o.protocol);
  } else {
    ld_log_set_level(level);
    code = run(&o);
  }
  ld_strlist_clear(&o.bootstrap);
  ld_strlist_clear(&o.shards);
  return code;
}
