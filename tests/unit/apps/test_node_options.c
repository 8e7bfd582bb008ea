/* The node program's options: nwaku's flags, WAKUNODE2_* variables and the TOML config file, with
 * command line > environment > config file > defaults, and a named error for every bad value. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "base/error.h"
#include "logosdelivery/node_options.h"
#include "node/options.h"

#define PEER "16Uiu2HAmLhLvBoYaoZfaMUKuibM6ac163GwKY74c5kiSLg5KvLpY"
#define G_COMPRESSED "0279be667ef9dcbbac55a06295ce870b07029bfcdb2dce28d959f2815b16f81798"

static const char *const g_env[] = {
    "WAKUNODE2_CONFIG_FILE",
    "WAKUNODE2_TCP_PORT",
    "WAKUNODE2_CLUSTER_ID",
    "WAKUNODE2_SHARD",
    "WAKUNODE2_RELAY",
    "WAKUNODE2_STATICNODE",
    "WAKUNODE2_REST",
    "WAKUNODE2_LOG_LEVEL",
    "WAKUNODE2_MAX_MSG_SIZE",
    "WAKUNODE2_STORE_MESSAGE_DB_URL",
    "WAKUNODE2_DISCV5_UDP_PORT",
    "WAKUNODE2_PRESET",
};

static int clean_env(void **state) {
  (void)state;
  for (size_t i = 0; i < sizeof g_env / sizeof g_env[0]; i++)
    unsetenv(g_env[i]);
  return 0;
}

static char g_path[64];

static const char *write_file(const char *text) {
  strcpy(g_path, "/tmp/ld-options-XXXXXX");
  int fd = mkstemp(g_path);
  assert_true(fd >= 0);
  assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
  close(fd);
  return g_path;
}

static int parse(ld_app_node_options_t *o, char *err, int argc, ...) {
  char *argv[32];
  va_list ap;
  va_start(ap, argc);
  for (int i = 0; i < argc; i++)
    argv[i] = va_arg(ap, char *);
  va_end(ap);
  err[0] = '\0';
  return ld_app_node_options_parse(argc, argv, o, err, 512);
}

static ld_app_node_options_t *opts_new(void) {
  ld_app_node_options_t *o = malloc(sizeof *o);
  assert_non_null(o);
  return o;
}

static void defaults_without_anything(void **state) {
  (void)state;
  ld_app_node_options_t *o = opts_new();
  char err[512];
  assert_int_equal(parse(o, err, 0), 0);
  assert_false(o->help);
  assert_int_equal(o->log_level, LD_LOG_INFO);
  assert_int_equal(o->log_format, LD_LOG_FORMAT_TEXT);
  assert_int_equal(o->config.tcp_port, 60000);
  assert_true(o->config.relay);
  assert_int_equal(o->config.n_shards, 8); /* finalized: 0..7 */
  assert_int_equal(o->config.max_msg_size, 153600);
  assert_false(o->config.rest.enabled);
  /* wakunode2's discovery and peer-manager defaults */
  assert_false(o->config.discv5.enabled);
  assert_int_equal(o->config.discv5.udp_port, 9000);
  assert_int_equal(o->config.pm.relay_ratio, 60);
  assert_false(o->config.pm.persistence);
  assert_string_equal(o->config.pm.db_path, "peers.db");
  free(o);
}

static void every_milestone_flag_reaches_the_config(void **state) {
  (void)state;
  ld_app_node_options_t *o = opts_new();
  char err[512];
  int rc = parse(
      o, err, 25, "--rest-relay-cache-capacity=70", "--rest-allow-origin=localhost:*",
      "--rest-allow-origin=https://x.example", "--relay=false", "--cluster-id=16", "--shard=3",
      "--shard", "5", "--num-shards-in-network=8", "--content-topic=/toychat/2/huilong/proto",
      "--staticnode=/ip4/127.0.0.1/tcp/1/p2p/" PEER, "--max-connections=7", "--max-msg-size=1MiB",
      "--protected-shard=3:" G_COMPRESSED, "--rest", "--rest-address=0.0.0.0", "--rest-port=9000",
      "--rest-admin=true", "--metrics-server", "--metrics-server-address=::1",
      "--metrics-server-port=9100", "--ports-shift=2", "--ip-colocation-limit=0",
      "--log-level=debug", "--log-format=JSON");
  if (rc != 0)
    fail_msg("%s", err);
  const ld_node_config_t *c = &o->config;
  assert_false(c->relay);
  assert_int_equal(c->cluster_id, 16);
  assert_int_equal(c->n_shards, 2);
  assert_int_equal(c->shards[1], 5);
  assert_int_equal(c->num_shards_in_network, 8);
  assert_int_equal(c->n_content_topics, 1);
  assert_int_equal(c->n_static_nodes, 1);
  assert_int_equal(c->max_connections, 7);
  assert_int_equal(c->max_msg_size, 1048576);
  assert_int_equal(c->n_protected_shards, 1);
  assert_true(c->rest.enabled);
  assert_string_equal(c->rest.address, "0.0.0.0");
  assert_int_equal(c->rest.port, 9002);
  assert_true(c->rest_admin);
  assert_int_equal(c->rest_relay_cache_capacity, 70);
  assert_int_equal(c->n_rest_allow_origins, 2);
  assert_string_equal(c->rest_allow_origins[1], "https://x.example");
  assert_true(c->metrics.enabled);
  assert_string_equal(c->metrics.address, "::1");
  assert_int_equal(c->metrics.port, 9102);
  assert_int_equal(c->tcp_port, 60002);
  assert_int_equal(c->colocation_limit, 0);
  assert_int_equal(o->log_level, LD_LOG_DEBUG);
  assert_int_equal(o->log_format, LD_LOG_FORMAT_JSON);
  free(o);
}

static void command_line_beats_environment_beats_file(void **state) {
  (void)state;
  ld_app_node_options_t *o = opts_new();
  char err[512];
  const char *path = write_file("# node\n"
                                "tcp-port = 1111\n"
                                "cluster-id = 3\n"
                                "shard = [1, 2]\n"
                                "relay = false\n"
                                "max-msg-size = \"10KiB\"\n"
                                "rest = true\n");
  setenv("WAKUNODE2_CONFIG_FILE", path, 1);
  setenv("WAKUNODE2_TCP_PORT", "2222", 1);
  setenv("WAKUNODE2_CLUSTER_ID", "4", 1);
  setenv("WAKUNODE2_SHARD", "6,7", 1);
  int rc = parse(o, err, 2, "--tcp-port=3333", "--shard=9");
  if (rc != 0)
    fail_msg("%s", err);
  assert_int_equal(o->config.tcp_port, 3333); /* command line */
  assert_int_equal(o->config.cluster_id, 4);  /* environment */
  assert_int_equal(o->config.n_shards, 1);    /* command line list wins whole */
  assert_int_equal(o->config.shards[0], 9);
  assert_false(o->config.relay); /* file */
  assert_int_equal(o->config.max_msg_size, 10240);
  assert_true(o->config.rest.enabled);

  unsetenv("WAKUNODE2_SHARD");
  rc = parse(o, err, 0);
  assert_int_equal(rc, 0);
  assert_int_equal(o->config.tcp_port, 2222); /* environment over file */
  assert_int_equal(o->config.n_shards, 2);    /* file */
  assert_int_equal(o->config.shards[1], 2);

  unsetenv("WAKUNODE2_CONFIG_FILE");
  rc = parse(o, err, 2, "--config-file", path);
  assert_int_equal(rc, 0);
  assert_int_equal(o->config.cluster_id, 4);
  unlink(path);
  free(o);
}

typedef struct {
  const char *arg;
  const char *needle;
} bad_flag_t;

static const bad_flag_t bad_flags[] = {
    {"--no-such-flag=1", "unknown flag --no-such-flag"},
    {"--relay=maybe", "--relay: expected true or false"},
    {"--cluster-id=70000", "--cluster-id: value 70000 out of range"},
    {"--cluster-id=x", "--cluster-id: expected an integer"},
    {"--shard=1024", "--shard: shard '1024' is not an integer in 0..1023"},
    {"--num-shards-in-network=2000", "--num-shards-in-network: value 2000 out of range"},
    {"--content-topic=nope", "--content-topic: content topic 'nope' is invalid"},
    {"--staticnode=/ip4/1.2.3.4/tcp/1", "--staticnode: staticnode '/ip4/1.2.3.4/tcp/1' must end"},
    {"--max-connections=0", "--max-connections: value 0 out of range"},
    {"--max-msg-size=10", "--max-msg-size: size '10' needs a unit"},
    {"--max-msg-size=100MiB", "--max-msg-size: max-msg-size '100MiB' is 104857600 bytes"},
    {"--protected-shard=1", "--protected-shard: protected-shard '1' must be"},
    {"--protected-shard=1:00", "--protected-shard: protected-shard public key '00'"},
    {"--rest-address=localhost", "REST address 'localhost' is not an IPv4 or IPv6 address"},
    {"--rest-port=65536", "--rest-port: value 65536 out of range"},
    {"--metrics-server-address=1.2.3", "metrics server address '1.2.3'"},
    {"--metrics-server-port=-1", "--metrics-server-port: value -1 out of range"},
    {"--listen-address=::g", "listen address '::g'"},
    {"--tcp-port=99999", "--tcp-port: value 99999 out of range"},
    {"--nodekey=12", "--nodekey: nodekey must be 64 hex characters"},
    {"--log-level=LOUD", "--log-level: unknown level 'LOUD'"},
    {"--log-format=XML", "--log-format: expected TEXT or JSON, got 'XML'"},
    {"--ip-colocation-limit=-1", "--ip-colocation-limit: value -1 out of range"},
    {"--rest-relay-cache-capacity=0", "--rest-relay-cache-capacity: value 0 out of range"},
    {"--rest-allow-origin=", "--rest-allow-origin: rest-allow-origin '' must be"},
    {"stray", "unexpected argument 'stray'"},
    {"--config-file=/nonexistent/ld.toml", "--config-file: cannot open '/nonexistent/ld.toml'"},
};

static void service_flags_reach_the_config(void **state) {
  (void)state;
  ld_app_node_options_t *o = opts_new();
  char err[512];
  setenv("WAKUNODE2_STORE_MESSAGE_DB_URL", "postgres://u:p@127.0.0.1:5432/db", 1);
  const char *file = write_file("filter = true\nfilter-subscription-timeout = 60\n");
  char config[128];
  snprintf(config, sizeof config, "--config-file=%s", file);
  int rc = parse(o, err, 12, config, "--lightpush=true", "--store=true", "--peer-exchange=true",
                 "--store-message-retention-policy=capacity:100;time:60",
                 "--store-max-num-db-connections=7", "--websocket-support=true",
                 "--websocket-port=8001", "--ports-shift=1", "--filter-max-criteria=5",
                 "--storenode=/ip4/127.0.0.1/tcp/60000/p2p/" PEER,
                 "--lightpushnode=/ip4/127.0.0.1/tcp/60001/ws/p2p/" PEER);
  unlink(file);
  assert_int_equal(rc, 0);
  const ld_node_config_t *c = &o->config;
  assert_true(c->lightpush && c->store && c->peer_exchange && c->filter);
  assert_int_equal(c->filter_subscription_timeout_s, 60);
  assert_int_equal(c->filter_max_criteria, 5);
  assert_string_equal(c->store_db_url, "postgres://u:p@127.0.0.1:5432/db");
  assert_string_equal(c->store_retention, "capacity:100;time:60");
  assert_int_equal(c->store_max_db_connections, 7);
  assert_true(c->ws.enabled && !c->ws.secure);
  assert_int_equal(c->ws.port, 8002);
  assert_true(c->has_service_node[LD_NODE_SERVICE_STORE]);
  assert_false(c->has_service_node[LD_NODE_SERVICE_FILTER]);
  assert_true(c->has_service_node[LD_NODE_SERVICE_LIGHTPUSH]);
  assert_int_equal(parse(o, err, 1, "--store-message-db-url=mysql://x"), LD_ERR_INVALID_ARG);
  assert_non_null(strstr(err, "store-message-db-url"));
  /* lightpush without relay starts, as nwaku v0.36 does */
  assert_int_equal(parse(o, err, 2, "--lightpush=true", "--relay=false"), 0);
  assert_true(o->config.lightpush);
  assert_false(o->config.relay);
  assert_int_equal(parse(o, err, 1, "--filternode=/ip4/1.2.3.4/tcp/1"), LD_ERR_INVALID_ARG);
  assert_non_null(strstr(err, "--filternode"));
  free(o);
}

static void every_bad_flag_is_named(void **state) {
  (void)state;
  ld_app_node_options_t *o = opts_new();
  char err[512];
  for (size_t i = 0; i < sizeof bad_flags / sizeof bad_flags[0]; i++) {
    int rc = parse(o, err, 1, bad_flags[i].arg);
    if (rc == 0 || strstr(err, bad_flags[i].needle) == NULL)
      fail_msg("%s: rc %d, error '%s'", bad_flags[i].arg, rc, err);
  }
  /* cross-option check after everything was read */
  assert_int_equal(parse(o, err, 2, "--num-shards-in-network=2", "--shard=2"), LD_ERR_INVALID_ARG);
  assert_non_null(strstr(err, "shard 2 is not below num-shards-in-network 2"));
  assert_int_equal(parse(o, err, 1, "--shard"), LD_ERR_INVALID_ARG);
  assert_non_null(strstr(err, "--shard: missing value"));
  free(o);
}

static void environment_errors_name_the_variable(void **state) {
  (void)state;
  ld_app_node_options_t *o = opts_new();
  char err[512];
  setenv("WAKUNODE2_RELAY", "perhaps", 1);
  assert_int_equal(parse(o, err, 0), LD_ERR_INVALID_ARG);
  assert_string_equal(err,
                      "WAKUNODE2_RELAY (--relay): expected true or false, got 'perhaps'; write "
                      "WAKUNODE2_RELAY=true or WAKUNODE2_RELAY=false");
  setenv("WAKUNODE2_RELAY", "true", 1);
  setenv("WAKUNODE2_SHARD", "1,4000", 1);
  assert_int_equal(parse(o, err, 0), LD_ERR_INVALID_ARG);
  assert_non_null(strstr(err, "WAKUNODE2_SHARD: shard '4000'"));
  unsetenv("WAKUNODE2_SHARD");
  unsetenv("WAKUNODE2_RELAY");
  setenv("WAKUNODE2_STATICNODE", "[\"/ip4/1.2.3.4/tcp/1/p2p/" PEER "\", \"bad\"]", 1);
  assert_int_equal(parse(o, err, 0), LD_ERR_INVALID_ARG);
  assert_non_null(strstr(err, "staticnode 'bad' is not a valid multiaddr"));
  setenv("WAKUNODE2_STATICNODE", "[\"/ip4/1.2.3.4/tcp/1/p2p/" PEER "\"]", 1);
  assert_int_equal(parse(o, err, 0), 0);
  assert_int_equal(o->config.n_static_nodes, 1);
  unsetenv("WAKUNODE2_STATICNODE");
  setenv("WAKUNODE2_MAX_MSG_SIZE", "huge", 1);
  assert_int_equal(parse(o, err, 0), LD_ERR_INVALID_ARG);
  assert_non_null(strstr(err, "WAKUNODE2_MAX_MSG_SIZE: size 'huge'"));
  unsetenv("WAKUNODE2_MAX_MSG_SIZE");
  free(o);
}

static void config_file_errors_name_the_file_and_line(void **state) {
  (void)state;
  ld_app_node_options_t *o = opts_new();
  char err[512];
  char arg[96];
  struct {
    const char *text, *needle;
  } bad[] = {
      {"a = 1\n[table]\n", "line 2: tables are not supported"},
      {"\n\nfoo = 1\n", "line 3: foo: unknown option"},
      {"tcp-port = \"1\"\n", "line 1: tcp-port: expected an integer, got a string"},
      {"\nshard = [1, 5000]\n", "line 2: shard: shard '5000' is not an integer in 0..1023"},
      {"protected-shard = ['1:00']\n", "line 1: protected-shard: protected-shard public key"},
      {"log-level = 'LOUD'\n", "line 1: log-level: unknown level 'LOUD'"},
      {"config-file = \"/x\"\n", "line 1: config-file cannot be set in a config file"},
      {"relay = yes\n", "line 1: invalid value"},
      {"staticnode = [\"/ip4/1.2.3.4/tcp/1\"]\n", "must end with /p2p/<peer id>"},
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    const char *path = write_file(bad[i].text);
    snprintf(arg, sizeof arg, "--config-file=%s", path);
    int rc = parse(o, err, 1, arg);
    unlink(path);
    if (rc == 0 || strstr(err, bad[i].needle) == NULL || strstr(err, path) == NULL)
      fail_msg("case %zu: rc %d, error '%s'", i, rc, err);
  }
  free(o);
}

static void help_skips_validation(void **state) {
  (void)state;
  ld_app_node_options_t *o = opts_new();
  char err[512];
  assert_int_equal(parse(o, err, 2, "--help", "--config-file=/nonexistent"), 0);
  assert_true(o->help);
  FILE *out = tmpfile();
  ld_app_node_options_help(out);
  long size = ftell(out);
  fclose(out);
  assert_true(size > 1000);
  free(o);
}

static bool inert(const ld_node_config_t *cfg, const char *name) {
  for (size_t i = 0; i < cfg->n_inert; i++)
    if (strcmp(cfg->inert[i], name) == 0)
      return true;
  return false;
}

/* Every option of the shared table is a flag, an environment variable and a config-file key;
 * those without a subsystem yet are recorded, not dropped. */
static void every_kernel_option_is_a_flag(void **state) {
  (void)state;
  ld_app_node_options_t *o = opts_new();
  char err[512];
  setenv("WAKUNODE2_DISCV5_UDP_PORT", "9001", 1);
  const char *file = write_file("rln-relay-eth-client-address = ['http://rpc.example:8545']\n"
                                "store-resume = true\n"
                                "store-sync = true\n");
  char config[128];
  snprintf(config, sizeof config, "--config-file=%s", file);
  int rc = parse(o, err, 7, config, "--preset=twn", "--discv5-discovery=true",
                 "--nat=extip:203.0.113.7", "--quic-port", "0", "--mode=Edge");
  unlink(file);
  if (rc != 0)
    fail_msg("%s", err);
  const ld_node_config_t *c = &o->config;
  assert_int_equal(c->cluster_id, 1); /* the preset */
  assert_int_equal(c->num_shards_in_network, 8);
  assert_int_equal(c->n_shards, 8);
  assert_true(c->relay); /* --mode is the library's; the program keeps its flags */
  const char *names[] = {"quic-port", "mode", "store-resume", "rln-relay"};
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
    if (!inert(c, names[i]))
      fail_msg("%s not recorded as without effect", names[i]);
  assert_false(inert(c, "preset"));
  assert_false(inert(c, "rln-relay-eth-client-address")); /* the on-chain RLN group reads it */
  assert_int_equal(c->rln.n_eth_clients, 1);
  assert_string_equal(c->rln.eth_clients[0], "http://rpc.example:8545");
  assert_false(inert(c, "store-sync")); /* store-sync takes effect */
  assert_false(inert(c, "nat"));        /* so does --nat */
  assert_int_equal(c->nat, LD_NODE_NAT_EXTIP);
  assert_string_equal(c->nat_ext_ip, "203.0.113.7");
  assert_false(inert(c, "discv5-discovery") || inert(c, "discv5-udp-port")); /* so does discv5 */
  assert_true(c->discv5.enabled);
  assert_int_equal(c->discv5.udp_port, 9001);
  assert_true(c->store_sync);
  free(o);
}

static void new_flags_are_checked_like_the_others(void **state) {
  (void)state;
  ld_app_node_options_t *o = opts_new();
  char err[512];
  char arg[96];
  assert_int_equal(parse(o, err, 1, "--nat=sometimes"), LD_ERR_INVALID_ARG);
  assert_string_equal(err,
                      "--nat: nat 'sometimes' must be any, none, upnp, pmp or "
                      "extip:<IP address>; write none, any, upnp, pmp or extip:<IPv4 address>");
  assert_int_equal(parse(o, err, 1, "--discv5-udp-port=70000"), LD_ERR_INVALID_ARG);
  assert_string_equal(err, "--discv5-udp-port: value 70000 out of range (0..65535); write "
                           "--discv5-udp-port=<n> with <n> in 0..65535");
  assert_int_equal(parse(o, err, 1, "--preset=mainnet"), LD_ERR_INVALID_ARG);
  assert_string_equal(err, "Invalid --preset value passed: mainnet; choose twn, logos.dev, "
                           "logos.test or status.prod, or leave --preset out");
  setenv("WAKUNODE2_PRESET", "twn", 1);
  assert_int_equal(parse(o, err, 1, "--mixkey=12"), LD_ERR_INVALID_ARG);
  assert_string_equal(err, "--mixkey: mixkey must be 64 hex characters, got '12'; fix the value; "
                           "`logosdelivery --help` says of --mixkey: Ed25519 mix private key as 64 "
                           "hex characters");
  assert_int_equal(parse(o, err, 0), 0);
  assert_int_equal(o->config.cluster_id, 1);
  unsetenv("WAKUNODE2_PRESET");
  const char *path = write_file("\nentry-node = ['nowhere']\n");
  snprintf(arg, sizeof arg, "--config-file=%s", path);
  assert_int_equal(parse(o, err, 1, arg), LD_ERR_INVALID_ARG);
  unlink(path);
  if (strstr(err, "line 2: entry-node: entry node 'nowhere' must be") == NULL)
    fail_msg("%s", err);
  path = write_file("mixkey = 5\n");
  snprintf(arg, sizeof arg, "--config-file=%s", path);
  assert_int_equal(parse(o, err, 1, arg), LD_ERR_INVALID_ARG);
  unlink(path);
  if (strstr(err, "line 1: mixkey: expected a string, got an integer") == NULL)
    fail_msg("%s", err);
  free(o);
}

static void help_lists_every_option(void **state) {
  (void)state;
  FILE *out = tmpfile();
  assert_non_null(out);
  ld_app_node_options_help(out);
  long size = ftell(out);
  char *text = calloc(1, (size_t)size + 1);
  assert_non_null(text);
  rewind(out);
  assert_int_equal(fread(text, 1, (size_t)size, out), (size_t)size);
  fclose(out);
  char needle[96];
  for (size_t i = 0; i < ld_node_options_count(); i++) {
    snprintf(needle, sizeof needle, "  --%s ", ld_node_option_at(i)->cli);
    if (strstr(text, needle) == NULL)
      fail_msg("help lacks %s", needle);
  }
  /* the program's own defaults are shown */
  const char *line = strstr(text, "  --max-connections ");
  assert_non_null(line);
  const char *end = strchr(line, '\n');
  assert_non_null(end);
  const char *def = strstr(line, "(default 50)");
  assert_true(def != NULL && def < end);
  free(text);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup(defaults_without_anything, clean_env),
      cmocka_unit_test_setup(every_milestone_flag_reaches_the_config, clean_env),
      cmocka_unit_test_setup(command_line_beats_environment_beats_file, clean_env),
      cmocka_unit_test_setup(service_flags_reach_the_config, clean_env),
      cmocka_unit_test_setup(every_bad_flag_is_named, clean_env),
      cmocka_unit_test_setup(environment_errors_name_the_variable, clean_env),
      cmocka_unit_test_setup(config_file_errors_name_the_file_and_line, clean_env),
      cmocka_unit_test_setup(help_skips_validation, clean_env),
      cmocka_unit_test_setup(every_kernel_option_is_a_flag, clean_env),
      cmocka_unit_test_setup(new_flags_are_checked_like_the_others, clean_env),
      cmocka_unit_test_setup(help_lists_every_option, clean_env),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
