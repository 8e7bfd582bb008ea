/* The node option table shared by the program's flags and the library's JSON: every option of
 * c-api.md §5.5 is there under its field and CLI names, each value is checked as the flag would
 * check it, options without a subsystem yet are recorded as such, and the combined settings
 * (ports shift, preset) come out right. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <cmocka.h>

#include "base/error.h"
#include "node/options.h"

#define PEER "16Uiu2HAmLhLvBoYaoZfaMUKuibM6ac163GwKY74c5kiSLg5KvLpY"
#define G_COMPRESSED "0279be667ef9dcbbac55a06295ce870b07029bfcdb2dce28d959f2815b16f81798"
#define KEY64 "0000000000000000000000000000000000000000000000000000000000000001"

typedef struct fixture {
  ld_node_config_t cfg;
  ld_node_opts_t opts;
  char err[512];
} fixture_t;

static int setup(void **state) {
  fixture_t *f = malloc(sizeof *f);
  *state = f;
  if (f == NULL)
    return -1;
  ld_node_opts_init(&f->opts, &f->cfg, LD_NODE_OPTS_LIBRARY);
  return 0;
}

static int teardown(void **state) {
  free(*state);
  return 0;
}

static int set(fixture_t *f, const char *cli, const char *text) {
  const ld_node_option_t *opt = ld_node_option_find_cli(cli);
  if (opt == NULL)
    fail_msg("no option %s", cli);
  f->err[0] = '\0';
  return ld_node_opts_set(&f->opts, opt, text, f->err, sizeof f->err);
}

static bool inert(const ld_node_config_t *cfg, const char *name) {
  for (size_t i = 0; i < cfg->n_inert; i++)
    if (strcmp(cfg->inert[i], name) == 0)
      return true;
  return false;
}

/* ---- the table ------------------------------------------------------------------------------- */

/* c-api.md §5.5, row by row: field name, CLI name. */
static const char *const k_spec[][2] = {
    {"configFile", "config-file"},
    {"logLevel", "log-level"},
    {"logFormat", "log-format"},
    {"rlnRelayCredPath", "rln-relay-cred-path"},
    {"ethClientUrls", "rln-relay-eth-client-address"},
    {"rlnRelayEthContractAddress", "rln-relay-eth-contract-address"},
    {"rlnRelayChainId", "rln-relay-chain-id"},
    {"rlnRelayCredPassword", "rln-relay-cred-password"},
    {"rlnRelayEthPrivateKey", "rln-relay-eth-private-key"},
    {"rlnRelayUserMessageLimit", "rln-relay-user-message-limit"},
    {"rlnEpochSizeSec", "rln-relay-epoch-sec"},
    {"maxMessageSize", "max-msg-size"},
    {"protectedShards", "protected-shard"},
    {"preset", "preset"},
    {"entryLayer", "entry-layer"},
    {"mode", "mode"},
    {"clusterId", "cluster-id"},
    {"agentString", "agent-string"},
    {"nodekey", "nodekey"},
    {"listenAddress", "listen-address"},
    {"tcpPort", "tcp-port"},
    {"portsShift", "ports-shift"},
    {"nat", "nat"},
    {"extMultiAddrs", "ext-multiaddr"},
    {"extMultiAddrsOnly", "ext-multiaddr-only"},
    {"maxConnections", "max-connections"},
    {"relayServiceRatio", "relay-service-ratio"},
    {"colocationLimit", "ip-colocation-limit"},
    {"peerStoreCapacity", "peer-store-capacity"},
    {"peerPersistence", "peer-persistence"},
    {"dnsAddrsNameServers", "dns-addrs-name-server"},
    {"dns4DomainName", "dns4-domain-name"},
    {"isRelayClient", "relay-client"},
    {"relay", "relay"},
    {"relayPeerExchange", "relay-peer-exchange"},
    {"relayShardedPeerManagement", "relay-shard-manager"},
    {"rlnRelay", "rln-relay"},
    {"rlnRelayCredIndex", "rln-relay-membership-index"},
    {"rlnRelayDynamic", "rln-relay-dynamic"},
    {"entryNodes", "entry-node"},
    {"staticnodes", "staticnode"},
    {"keepAlive", "keep-alive"},
    {"numShardsInNetwork", "num-shards-in-network"},
    {"shards", "shard"},
    {"contentTopics", "content-topic"},
    {"store", "store"},
    {"storenode", "storenode"},
    {"storeMessageRetentionPolicy", "store-message-retention-policy"},
    {"storeMessageDbUrl", "store-message-db-url"},
    {"storeMessageDbVacuum", "store-message-db-vacuum"},
    {"storeMessageDbMigration", "store-message-db-migration"},
    {"storeMaxNumDbConnections", "store-max-num-db-connections"},
    {"storeResume", "store-resume"},
    {"storeSync", "store-sync"},
    {"storeSyncInterval", "store-sync-interval"},
    {"storeSyncRange", "store-sync-range"},
    {"storeSyncRelayJitter", "store-sync-relay-jitter"},
    {"storeKeyValue", "store-key-value"},
    {"storeKeyPresence", "store-key-presence"},
    {"storeWayback", "store-wayback"},
    {"reliabilityMode", "reliability-mode"},
    {"reliabilityConfirmPeers", "reliability-confirm-peers"},
    {"reliabilityWindow", "reliability-window"},
    {"filter", "filter"},
    {"filternode", "filternode"},
    {"filterSubscriptionTimeout", "filter-subscription-timeout"},
    {"filterMaxPeersToServe", "filter-max-peers-to-serve"},
    {"filterMaxCriteria", "filter-max-criteria"},
    {"lightpush", "lightpush"},
    {"lightpushnode", "lightpushnode"},
    {"rest", "rest"},
    {"restAddress", "rest-address"},
    {"restPort", "rest-port"},
    {"restRelayCacheCapacity", "rest-relay-cache-capacity"},
    {"restAdmin", "rest-admin"},
    {"restAllowOrigin", "rest-allow-origin"},
    {"metricsServer", "metrics-server"},
    {"metricsServerAddress", "metrics-server-address"},
    {"metricsServerPort", "metrics-server-port"},
    {"metricsLogging", "metrics-logging"},
    {"dnsDiscovery", "dns-discovery"},
    {"dnsDiscoveryUrl", "dns-discovery-url"},
    {"dnsDiscoveryNameServers", "dns-discovery-name-server"},
    {"discv5Discovery", "discv5-discovery"},
    {"discv5UdpPort", "discv5-udp-port"},
    {"discv5BootstrapNodes", "discv5-bootstrap-node"},
    {"discv5EnrAutoUpdate", "discv5-enr-auto-update"},
    {"discv5TableIpLimit", "discv5-table-ip-limit"},
    {"discv5BucketIpLimit", "discv5-bucket-ip-limit"},
    {"discv5BitsPerHop", "discv5-bits-per-hop"},
    {"peerExchange", "peer-exchange"},
    {"peerExchangeNode", "peer-exchange-node"},
    {"rendezvous", "rendezvous"},
    {"mix", "mix"},
    {"mixkey", "mixkey"},
    {"mixnodes", "mixnode"},
    {"enableKadDiscovery", "enable-kad-discovery"},
    {"kadBootstrapNodes", "kad-bootstrap-node"},
    {"kadRandomLookupIntervalSec", "kad-random-lookup-interval"},
    {"kadServiceLookupIntervalSec", "kad-service-lookup-interval"},
    {"websocketSupport", "websocket-support"},
    {"websocketPort", "websocket-port"},
    {"websocketSecureSupport", "websocket-secure-support"},
    {"websocketSecureKeyPath", "websocket-secure-key-path"},
    {"websocketSecureCertPath", "websocket-secure-cert-path"},
    {"quicSupport", "quic-support"},
    {"quicPort", "quic-port"},
    {"rateLimits", "rate-limit"},
    {"localStoragePath", "local-storage-path"},
    {"rlnRelayStaticGroupFile", "rln-relay-static-group-file"},
    {"rlnRelayCircuitDir", "rln-relay-circuit-dir"},
    {"channels", "channels"},
};
#define N_SPEC (sizeof k_spec / sizeof k_spec[0])

static void table_is_the_spec_in_order(void **state) {
  (void)state;
  assert_int_equal(ld_node_options_count(), N_SPEC);
  for (size_t i = 0; i < N_SPEC; i++) {
    const ld_node_option_t *opt = ld_node_option_at(i);
    assert_string_equal(opt->field, k_spec[i][0]);
    assert_string_equal(opt->cli, k_spec[i][1]);
    assert_ptr_equal(ld_node_option_find(k_spec[i][0]), opt);
    assert_ptr_equal(ld_node_option_find(k_spec[i][1]), opt);
    assert_ptr_equal(ld_node_option_find_cli(k_spec[i][1]), opt);
    assert_int_equal(ld_node_option_index(opt), i);
    assert_true(opt->help[0] != '\0' && opt->type[0] != '\0' && opt->def != NULL);
    if (opt->kind == LD_NODE_OPT_LIST)
      assert_memory_equal(opt->type, "seq[", 4);
    if (opt->kind == LD_NODE_OPT_INT)
      assert_true(opt->min <= opt->max);
  }
  assert_null(ld_node_option_at(N_SPEC));
  assert_null(ld_node_option_find("no-such-option"));
  assert_null(ld_node_option_find_cli("tcpPort")); /* exact CLI names only */
  assert_ptr_equal(ld_node_option_find("TCP-PORT"), ld_node_option_find("tcpport"));
}

/* No name of one option is a name of another, ignoring case: a JSON key names one option. */
static void names_do_not_collide(void **state) {
  (void)state;
  size_t n = ld_node_options_count();
  for (size_t i = 0; i < n; i++)
    for (size_t j = i + 1; j < n; j++) {
      const ld_node_option_t *a = ld_node_option_at(i), *b = ld_node_option_at(j);
      assert_true(strcasecmp(a->field, b->field) != 0 && strcasecmp(a->field, b->cli) != 0);
      assert_true(strcasecmp(a->cli, b->field) != 0 && strcasecmp(a->cli, b->cli) != 0);
    }
}

/* ---- value parsers --------------------------------------------------------------------------- */

static void bools_and_integers(void **state) {
  (void)state;
  const char *yes[] = {"true", "TRUE", "yes", "Y", "1", "on"};
  const char *no[] = {"false", "No", "n", "0", "OFF"};
  bool b;
  for (size_t i = 0; i < 6; i++) {
    b = false;
    assert_int_equal(ld_node_option_parse_bool(yes[i], &b), 0);
    assert_true(b);
  }
  for (size_t i = 0; i < 5; i++) {
    b = true;
    assert_int_equal(ld_node_option_parse_bool(no[i], &b), 0);
    assert_false(b);
  }
  assert_int_equal(ld_node_option_parse_bool("maybe", &b), LD_ERR_INVALID_ARG);
  assert_int_equal(ld_node_option_parse_bool("", &b), LD_ERR_INVALID_ARG);
  assert_int_equal(ld_node_option_parse_bool("truex", &b), LD_ERR_INVALID_ARG);

  int64_t v = 0;
  char err[96];
  assert_int_equal(ld_node_option_parse_int("+42", 0, 100, &v, err, sizeof err), 0);
  assert_int_equal(v, 42);
  assert_int_equal(
      ld_node_option_parse_int("-9223372036854775808", INT64_MIN, INT64_MAX, &v, err, sizeof err),
      0);
  assert_true(v == INT64_MIN);
  assert_int_equal(
      ld_node_option_parse_int("9223372036854775807", INT64_MIN, INT64_MAX, &v, err, sizeof err),
      0);
  assert_true(v == INT64_MAX);
  assert_int_equal(
      ld_node_option_parse_int("9223372036854775808", INT64_MIN, INT64_MAX, &v, err, sizeof err),
      LD_ERR_INVALID_ARG);
  assert_string_equal(err, "value 9223372036854775808 out of range "
                           "(-9223372036854775808..9223372036854775807)");
  assert_int_equal(ld_node_option_parse_int("99999999999999999999999", 0, 10, &v, err, sizeof err),
                   LD_ERR_INVALID_ARG);
  assert_int_equal(ld_node_option_parse_int("11", 0, 10, &v, err, sizeof err), LD_ERR_INVALID_ARG);
  assert_string_equal(err, "value 11 out of range (0..10)");
  const char *bad[] = {"", "-", "+", " 5", "5 ", "0x10", "1.0", "1e3", "1_000"};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    assert_int_equal(ld_node_option_parse_int(bad[i], INT64_MIN, INT64_MAX, &v, err, sizeof err),
                     LD_ERR_INVALID_ARG);
    assert_string_equal(err, "expected an integer");
  }
  ld_node_mode_t mode;
  assert_int_equal(ld_node_option_parse_mode("eDGE", &mode), 0);
  assert_int_equal(mode, LD_NODE_MODE_EDGE);
  assert_int_equal(ld_node_option_parse_mode("Core", &mode), 0);
  assert_int_equal(mode, LD_NODE_MODE_CORE);
  assert_int_equal(ld_node_option_parse_mode("Fleet", &mode), LD_ERR_INVALID_ARG);
}

/* ---- every option: a good value is taken, a bad one refused ------------------------------------
 */

typedef struct sample {
  const char *cli, *good, *bad; /* bad NULL: any text is a valid value */
} sample_t;

static const sample_t k_samples[] = {
    {"config-file", "/dev/null", "/nonexistent/x.toml"},
    {"log-level", "notice", "LOUD"},
    {"log-format", "json", "XML"},
    {"rln-relay-cred-path", "/tmp/creds", NULL},
    {"rln-relay-eth-client-address", "https://user:pw@rpc.example:8545/v1?x=1", "ftp://x"},
    {"rln-relay-eth-contract-address", "0xB9cd878C90E49F797B4431fBF4fb333108CB90e6", NULL},
    {"rln-relay-chain-id", "59141", "-1"},
    {"rln-relay-cred-password", "secret", NULL},
    {"rln-relay-eth-private-key", "abc", NULL},
    {"rln-relay-user-message-limit", "100", "0"},
    {"rln-relay-epoch-sec", "600", "0"},
    {"max-msg-size", "1 MiB", "1 parsec"},
    {"protected-shard", "3:" G_COMPRESSED, "3:zz"},
    {"preset", "twn", NULL},
    {"entry-layer", "Messaging", "app"},
    {"channels", "true", "x"},
    {"mode", "edge", "fleet"},
    {"cluster-id", "65535", "65536"},
    {"agent-string", "me/1.0", NULL},
    {"nodekey", KEY64, "12"},
    {"listen-address", "::1", "localhost"},
    {"tcp-port", "0", "65536"},
    {"ports-shift", "10", "-1"},
    {"nat", "extip:203.0.113.7", "extip:nowhere"},
    {"ext-multiaddr", "/dns4/node.example/tcp/443/wss", "/dns4"},
    {"ext-multiaddr-only", "true", "sometimes"},
    {"max-connections", "1", "0"},
    {"relay-service-ratio", "60:40", "60:50"},
    {"ip-colocation-limit", "0", "-1"},
    {"peer-store-capacity", "1000", "many"},
    {"peer-persistence", "yes", "2"},
    {"dns-addrs-name-server", "8.8.8.8", "dns.example"},
    {"dns4-domain-name", "node.example", NULL},
    {"relay-client", "false", "x"},
    {"relay", "false", "x"},
    {"relay-peer-exchange", "true", "x"},
    {"relay-shard-manager", "true", "x"},
    {"rln-relay", "true", "x"},
    {"rln-relay-membership-index", "3", "-3"},
    {"rln-relay-dynamic", "true", "x"},
    {"entry-node", "enrtree://AM@boot.example", "boot.example"},
    {"staticnode", "/ip4/127.0.0.1/tcp/60000/p2p/" PEER, "/ip4/127.0.0.1/tcp/60000"},
    {"keep-alive", "false", "x"},
    {"num-shards-in-network", "8", "1025"},
    {"shard", "1023", "1024"},
    {"content-topic", "/toychat/2/huilong/proto", "toychat"},
    {"store", "true", "x"},
    {"storenode", "/ip4/127.0.0.1/tcp/1/p2p/" PEER, "/ip4/127.0.0.1/tcp/1"},
    {"store-message-retention-policy", "capacity:100", ""},
    {"store-message-db-url", "sqlite://x.db", "mysql://x"},
    {"store-message-db-vacuum", "true", "x"},
    {"store-message-db-migration", "false", "x"},
    {"store-max-num-db-connections", "7", "0"},
    {"store-resume", "true", "x"},
    {"store-sync", "true", "x"},
    {"store-sync-interval", "60", "4294967296"},
    {"store-sync-range", "60", "-60"},
    {"store-sync-relay-jitter", "2", "x"},
    {"store-key-value", "false", "x"},
    {"store-key-presence", "false", "x"},
    {"store-wayback", "false", "x"},
    {"reliability-mode", "p2p", "rln"},
    {"reliability-confirm-peers", "3", "0"},
    {"reliability-window", "90s", "5s"},
    {"filter", "false", "x"},
    {"filternode", "", "/ip4/1.2.3.4/tcp/1"},
    {"filter-subscription-timeout", "60", "0"},
    {"filter-max-peers-to-serve", "5", "0"},
    {"filter-max-criteria", "5", "0"},
    {"lightpush", "true", "x"},
    {"lightpushnode", "/ip4/127.0.0.1/tcp/1/ws/p2p/" PEER, "nope"},
    {"rest", "true", "x"},
    {"rest-address", "0.0.0.0", "any"},
    {"rest-port", "8646", "70000"},
    {"rest-relay-cache-capacity", "10", "0"},
    {"rest-admin", "true", "x"},
    {"rest-allow-origin", "localhost:*", ""},
    {"metrics-server", "true", "x"},
    {"metrics-server-address", "127.0.0.1", "1.2.3"},
    {"metrics-server-port", "9100", "x"},
    {"metrics-logging", "false", "x"},
    {"dns-discovery", "true", "x"},
    {"dns-discovery-url",
     "enrtree://AKPYQIUQIL7PSIACI32J7FGZW56E5FKHEFCCOFHILBIMW3M6LWXS2@x.example",
     "enrtree://AM@x.example"},
    {"dns-discovery-name-server", "127.0.0.1:5353", "1.2.3"},
    {"discv5-discovery", "false", "x"},
    {"discv5-udp-port", "9001", "65536"},
    {"discv5-bootstrap-node",
     "enr:-"
     "IS4QHCYrYZbAKWCBRlAy5zzaDZXJBGkcnh4MHcBFZntXNFrdvJjX04jRzjzCBOonrkTfj499SZuOh8R33Ls8RRcy5wBgm"
     "lkgnY0gmlwhH8AAAGJc2VjcDI1NmsxoQPKY0yuDUmstAHYpMa2_oxVtw0RW_QAdpzBQA8yWM0xOIN1ZHCCdl8",
     "enr:-abc"},
    {"discv5-enr-auto-update", "true", "x"},
    {"discv5-table-ip-limit", "10", "-1"},
    {"discv5-bucket-ip-limit", "2", "x"},
    {"discv5-bits-per-hop", "2", "0"},
    {"peer-exchange", "false", "x"},
    {"peer-exchange-node", "/ip4/127.0.0.1/tcp/1/p2p/" PEER, "/ip4/127.0.0.1/tcp/1"},
    {"rendezvous", "false", "x"},
    {"mix", "true", "x"},
    {"mixkey", KEY64, "0x01"},
    {"mixnode", "/ip4/127.0.0.1/tcp/1:" KEY64, "/dns4/x.example/tcp/1:" KEY64},
    {"enable-kad-discovery", "true", "x"},
    {"kad-bootstrap-node", "/ip4/127.0.0.1/tcp/1/p2p/" PEER, "/ip4/127.0.0.1/tcp/1"},
    {"kad-random-lookup-interval", "30", "-30"},
    {"kad-service-lookup-interval", "30", "x"},
    {"websocket-support", "true", "x"},
    {"websocket-port", "8001", "65536"},
    {"websocket-secure-support", "false", "x"},
    {"websocket-secure-key-path", "/k.pem", NULL},
    {"websocket-secure-cert-path", "/c.pem", NULL},
    {"quic-support", "true", "x"},
    {"quic-port", "0", "-1"},
    {"rate-limit", "store:10/1s", "store:ten/1s"},
    {"local-storage-path", "/var/lib/x", NULL},
    {"rln-relay-static-group-file", "/etc/group.json", NULL},
    {"rln-relay-circuit-dir", "/usr/share/rln", NULL},
};
#define N_SAMPLES (sizeof k_samples / sizeof k_samples[0])

static void every_option_checks_its_value(void **state) {
  fixture_t *f = *state;
  assert_int_equal(N_SAMPLES, ld_node_options_count());
  for (size_t i = 0; i < N_SAMPLES; i++) {
    const sample_t *s = &k_samples[i];
    const ld_node_option_t *opt = ld_node_option_find_cli(s->cli);
    assert_non_null(opt);
    ld_node_opts_init(&f->opts, &f->cfg, LD_NODE_OPTS_LIBRARY);
    if (s->bad != NULL) {
      if (set(f, s->cli, s->bad) == 0)
        fail_msg("--%s accepted '%s'", s->cli, s->bad);
      assert_true(f->err[0] != '\0');
      assert_false(f->opts.set[ld_node_option_index(opt)]);
      assert_int_equal(f->cfg.n_inert, 0);
    }
    if (set(f, s->cli, s->good) != 0)
      fail_msg("--%s refused '%s': %s", s->cli, s->good, f->err);
    assert_true(f->opts.set[ld_node_option_index(opt)]);
    bool no_effect = (opt->flags & (LD_NODE_OPT_INERT | LD_NODE_OPT_CALLER)) != 0;
    assert_int_equal(inert(&f->cfg, s->cli), no_effect);
    assert_int_equal(f->cfg.n_inert, no_effect ? 1 : 0);
  }
}

/* ---- applying -------------------------------------------------------------------------------- */

static void profiles_differ_where_documented(void **state) {
  fixture_t *f = *state;
  ld_node_opts_init(&f->opts, &f->cfg, LD_NODE_OPTS_PROGRAM);
  assert_int_equal(f->cfg.max_connections, 50);
  assert_false(f->cfg.filter || f->cfg.lightpush || f->cfg.peer_exchange);
  ld_node_opts_init(&f->opts, &f->cfg, LD_NODE_OPTS_LIBRARY);
  assert_int_equal(f->cfg.max_connections, 150);
  assert_true(f->cfg.filter && f->cfg.lightpush && f->cfg.peer_exchange && f->cfg.relay);
  assert_int_equal(ld_node_option_find_cli("max-connections")->max, 100000);
  assert_string_equal(ld_node_option_find_cli("max-connections")->def, "150");
  assert_string_equal(ld_node_option_find_cli("max-connections")->program_def, "50");
  assert_int_equal(ld_node_opts_finish(&f->opts, f->err, sizeof f->err), 0);
  assert_int_equal(f->cfg.tcp_port, 60000);
  assert_string_equal(f->cfg.listen_address, "0.0.0.0");
  assert_int_equal(f->cfg.rest.port, 8645);
  assert_int_equal(f->cfg.metrics.port, 8008);
  assert_int_equal(f->cfg.ws.port, 8000);
  assert_int_equal(f->opts.log_level, LD_LOG_INFO);
}

static void values_reach_the_configuration(void **state) {
  fixture_t *f = *state;
  assert_int_equal(set(f, "relay", "off"), 0);
  assert_int_equal(set(f, "filter-max-criteria", "9"), 0);
  assert_int_equal(set(f, "shard", "4"), 0);
  assert_int_equal(set(f, "shard", "2"), 0);
  assert_int_equal(set(f, "log-level", "warn"), 0);
  assert_int_equal(set(f, "log-format", "JSON"), 0);
  assert_int_equal(set(f, "storenode", "/ip4/127.0.0.1/tcp/1/p2p/" PEER), 0);
  assert_int_equal(set(f, "mode", "Edge"), 0);
  assert_false(f->cfg.relay);
  assert_int_equal(f->cfg.filter_max_criteria, 9);
  assert_int_equal(f->cfg.n_shards, 2);
  assert_int_equal(f->cfg.shards[1], 2);
  assert_int_equal(f->opts.log_level, LD_LOG_WARN);
  assert_int_equal(f->opts.log_format, LD_LOG_FORMAT_JSON);
  assert_true(f->cfg.has_service_node[LD_NODE_SERVICE_STORE]);
  assert_int_equal(f->opts.mode, LD_NODE_MODE_EDGE);
  assert_true(inert(&f->cfg, "mode"));
  assert_true(ld_node_opts_is_set(&f->opts, "relay"));
  assert_false(ld_node_opts_is_set(&f->opts, "filter"));
  assert_false(ld_node_opts_is_set(&f->opts, "no-such"));
  /* the store functions are served unless disabled one by one */
  assert_true(f->cfg.store_key_value && f->cfg.store_key_presence && f->cfg.store_wayback);
  assert_int_equal(set(f, "store-wayback", "false"), 0);
  assert_int_equal(set(f, "store-key-presence", "false"), 0);
  assert_true(f->cfg.store_key_value);
  assert_false(f->cfg.store_key_presence || f->cfg.store_wayback);
  /* "" unsets a service peer */
  assert_int_equal(set(f, "storenode", ""), 0);
  assert_false(f->cfg.has_service_node[LD_NODE_SERVICE_STORE]);
  /* a refused value leaves everything as it was */
  assert_int_equal(set(f, "cluster-id", "7"), 0);
  assert_int_equal(set(f, "cluster-id", "x"), LD_ERR_INVALID_ARG);
  assert_string_equal(f->err, "expected an integer");
  assert_int_equal(f->cfg.cluster_id, 7);
  assert_int_equal(set(f, "relay", "perhaps"), LD_ERR_INVALID_ARG);
  assert_string_equal(f->err, "expected true or false");
  assert_int_equal(set(f, "shard", "x"), LD_ERR_INVALID_ARG);
  assert_string_equal(f->err, "shard 'x' is not an integer in 0..1023");
  assert_int_equal(f->cfg.n_shards, 2);
}

static void ports_shift_applies_to_every_port(void **state) {
  fixture_t *f = *state;
  assert_int_equal(set(f, "ports-shift", "3"), 0); /* before the ports: order does not matter */
  assert_int_equal(set(f, "tcp-port", "100"), 0);
  assert_int_equal(set(f, "rest", "true"), 0);
  assert_int_equal(set(f, "rest-port", "200"), 0);
  assert_int_equal(set(f, "rest-address", "::"), 0);
  assert_int_equal(set(f, "metrics-server-port", "300"), 0);
  assert_int_equal(set(f, "websocket-port", "400"), 0);
  assert_int_equal(set(f, "websocket-secure-support", "true"), 0);
  assert_int_equal(set(f, "websocket-secure-key-path", "/k"), 0);
  assert_int_equal(set(f, "websocket-secure-cert-path", "/c"), 0);
  assert_int_equal(set(f, "listen-address", "127.0.0.1"), 0);
  assert_int_equal(ld_node_opts_finish(&f->opts, f->err, sizeof f->err), 0);
  assert_int_equal(ld_node_config_finalize(&f->cfg, f->err, sizeof f->err), 0);
  assert_int_equal(f->cfg.tcp_port, 103);
  assert_string_equal(f->cfg.listen_address, "127.0.0.1");
  assert_true(f->cfg.rest.enabled);
  assert_string_equal(f->cfg.rest.address, "::");
  assert_int_equal(f->cfg.rest.port, 203);
  assert_false(f->cfg.metrics.enabled);
  assert_int_equal(f->cfg.metrics.port, 303);
  assert_true(f->cfg.ws.enabled && f->cfg.ws.secure);
  assert_int_equal(f->cfg.ws.port, 403);
  assert_string_equal(f->cfg.ws.key_path, "/k");

  ld_node_opts_init(&f->opts, &f->cfg, LD_NODE_OPTS_PROGRAM);
  assert_int_equal(set(f, "ports-shift", "65535"), 0);
  assert_int_equal(set(f, "tcp-port", "0"), 0);
  assert_int_equal(ld_node_opts_finish(&f->opts, f->err, sizeof f->err), LD_ERR_INVALID_ARG);
  assert_string_equal(f->err, "REST port 8645 plus ports shift 65535 is not a valid port");
}

static void presets_apply_where_not_given(void **state) {
  fixture_t *f = *state;
  assert_null(ld_node_option_preset(""));
  assert_null(ld_node_option_preset("mainnet"));
  assert_string_equal(ld_node_option_preset("LOGOSDEV")->name, "logos.dev");
  assert_string_equal(ld_node_option_preset("Logos.Test")->name, "logos.test");
  assert_string_equal(ld_node_option_preset("statusprod")->name, "status.prod");

  assert_int_equal(set(f, "preset", "status.prod"), 0);
  assert_int_equal(ld_node_opts_finish(&f->opts, f->err, sizeof f->err), 0);
  assert_non_null(f->opts.preset_conf);
  assert_int_equal(f->cfg.cluster_id, 16);
  assert_int_equal(f->cfg.num_shards_in_network, 1);
  assert_int_equal(f->cfg.max_msg_size, 1024 * 1024);
  /* the preset's DNS discovery tree takes effect */
  assert_false(inert(&f->cfg, "dns-discovery-url"));
  assert_string_equal(
      f->cfg.dns_discovery_url,
      "enrtree://"
      "AMOJVZX4V6EXP7NTJPMAYJYST2QP6AJXYW76IU6VGJS7UVSNDYZG4@boot.prod.status.nodes.status.im");
  assert_true(inert(&f->cfg, "entry-node"));
  assert_false(inert(&f->cfg, "rln-relay"));
  assert_int_equal(ld_node_config_finalize(&f->cfg, f->err, sizeof f->err), 0);
  assert_int_equal(f->cfg.n_shards, 1);

  ld_node_opts_init(&f->opts, &f->cfg, LD_NODE_OPTS_PROGRAM);
  assert_int_equal(set(f, "preset", "TWN"), 0);
  assert_int_equal(set(f, "cluster-id", "0"), 0);
  assert_int_equal(set(f, "max-msg-size", "10KiB"), 0);
  assert_int_equal(ld_node_opts_finish(&f->opts, f->err, sizeof f->err), 0);
  assert_int_equal(f->cfg.cluster_id, 0);
  assert_int_equal(f->cfg.num_shards_in_network, 8);
  assert_int_equal(f->cfg.max_msg_size, 10240);
  assert_true(inert(&f->cfg, "rln-relay"));

  ld_node_opts_init(&f->opts, &f->cfg, LD_NODE_OPTS_PROGRAM);
  assert_int_equal(set(f, "relay", "false"), 0);
  assert_int_equal(set(f, "preset", "twn"), 0);
  assert_int_equal(ld_node_opts_finish(&f->opts, f->err, sizeof f->err), 0);
  assert_false(inert(&f->cfg, "rln-relay")); /* RLN only guards relay */

  ld_node_opts_init(&f->opts, &f->cfg, LD_NODE_OPTS_PROGRAM);
  assert_int_equal(set(f, "preset", "Mainnet"), 0);
  assert_int_equal(ld_node_opts_finish(&f->opts, f->err, sizeof f->err), LD_ERR_INVALID_ARG);
  assert_string_equal(f->err, "Invalid --preset value passed: mainnet");
}

static void modes_switch_the_protocols(void **state) {
  fixture_t *f = *state;
  f->cfg.store = true;
  ld_node_opts_apply_mode(&f->opts, LD_NODE_MODE_EDGE);
  assert_false(f->cfg.relay || f->cfg.filter || f->cfg.lightpush || f->cfg.store);
  assert_true(f->cfg.peer_exchange);
  ld_node_opts_apply_mode(&f->opts, LD_NODE_MODE_CORE);
  assert_true(f->cfg.relay && f->cfg.filter && f->cfg.lightpush && f->cfg.peer_exchange);
  assert_false(f->cfg.store); /* Core leaves store as it is */
  assert_false(ld_node_opts_is_set(&f->opts, "relay"));
}

static void inert_list_is_capped_and_printed(void **state) {
  fixture_t *f = *state;
  char text[64];
  assert_int_equal(ld_node_config_inert_text(&f->cfg, text, sizeof text), 0);
  assert_string_equal(text, "");
  assert_int_equal(set(f, "mix", "true"), 0);
  assert_int_equal(set(f, "quic-support", "true"), 0);
  assert_int_equal(set(f, "mix", "false"), 0);
  assert_int_equal(ld_node_config_inert_text(&f->cfg, text, sizeof text), 2);
  assert_string_equal(text, "mix, quic-support");
  assert_int_equal(ld_node_config_inert_text(&f->cfg, text, 6), 2);
  assert_string_equal(text, "mix, ");
  static char names[LD_NODE_MAX_INERT + 1][8];
  ld_node_config_default(&f->cfg);
  for (int i = 0; i <= LD_NODE_MAX_INERT; i++) {
    snprintf(names[i], sizeof names[i], "o%d", i);
    int rc = ld_node_config_add_inert(&f->cfg, names[i]);
    assert_int_equal(rc, i < LD_NODE_MAX_INERT ? 0 : LD_ERR_LIMIT);
  }
  assert_int_equal(f->cfg.n_inert, LD_NODE_MAX_INERT);
}

/* --nat, --ext-multiaddr(-only), --dns4-domain-name and the DNS discovery options take effect. */
static void nat_and_discovery_reach_the_configuration(void **state) {
  fixture_t *f = *state;
  assert_int_equal(f->cfg.nat, LD_NODE_NAT_ANY);
  assert_int_equal(set(f, "nat", "EXTIP:203.0.113.7"), 0);
  assert_int_equal(f->cfg.nat, LD_NODE_NAT_EXTIP);
  assert_string_equal(f->cfg.nat_ext_ip, "203.0.113.7");
  assert_int_equal(set(f, "nat", "upnp"), 0);
  assert_int_equal(f->cfg.nat, LD_NODE_NAT_UPNP);
  assert_string_equal(f->cfg.nat_ext_ip, "");
  assert_int_equal(set(f, "nat", "pmp"), 0);
  assert_int_equal(f->cfg.nat, LD_NODE_NAT_PMP);
  assert_int_equal(set(f, "ext-multiaddr", "/dns4/node.example/tcp/443/wss"), 0);
  assert_int_equal(set(f, "ext-multiaddr", "/ip4/198.51.100.1/tcp/60000"), 0);
  assert_int_equal(set(f, "ext-multiaddr", "/dns4/node.example/tcp/443/wss"), 0);
  assert_int_equal(f->cfg.n_ext_multiaddrs, 2);
  assert_int_equal(set(f, "ext-multiaddr-only", "true"), 0);
  assert_true(f->cfg.ext_multiaddr_only);
  assert_int_equal(set(f, "dns4-domain-name", "node.example"), 0);
  assert_string_equal(f->cfg.dns4_domain_name, "node.example");
  assert_int_not_equal(set(f, "dns4-domain-name", "no spaces.example"), 0);
  assert_int_equal(set(f, "dns-discovery-name-server", "[::1]:5353"), 0);
  assert_int_equal(set(f, "dns-discovery-name-server", "127.0.0.1"), 0);
  assert_int_not_equal(set(f, "dns-discovery-name-server", "127.0.0.1:0"), 0);
  assert_int_equal(f->cfg.n_dns_name_servers, 2);
  char text[64];
  assert_int_equal(ld_node_config_inert_text(&f->cfg, text, sizeof text), 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(nat_and_discovery_reach_the_configuration, setup, teardown),
      cmocka_unit_test(table_is_the_spec_in_order),
      cmocka_unit_test(names_do_not_collide),
      cmocka_unit_test(bools_and_integers),
      cmocka_unit_test_setup_teardown(every_option_checks_its_value, setup, teardown),
      cmocka_unit_test_setup_teardown(profiles_differ_where_documented, setup, teardown),
      cmocka_unit_test_setup_teardown(values_reach_the_configuration, setup, teardown),
      cmocka_unit_test_setup_teardown(ports_shift_applies_to_every_port, setup, teardown),
      cmocka_unit_test_setup_teardown(presets_apply_where_not_given, setup, teardown),
      cmocka_unit_test_setup_teardown(modes_switch_the_protocols, setup, teardown),
      cmocka_unit_test_setup_teardown(inert_list_is_capped_and_printed, setup, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
