/* The create_node configuration JSON (c-api.md §5): the three shapes, case-insensitive keys by
 * field or CLI name, the mode expansion, presets, and every error text byte for byte. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <jansson.h>

#include "base/error.h"
#include "lib/channel_json.h"
#include "lib/config_json.h"
#include "node/options.h"

#define PEER "16Uiu2HAmLhLvBoYaoZfaMUKuibM6ac163GwKY74c5kiSLg5KvLpY"

static ld_lib_config_t *g_cfg;
static char g_err[2048];

static int setup(void **state) {
  (void)state;
  g_cfg = malloc(sizeof *g_cfg);
  return g_cfg == NULL;
}

static int teardown(void **state) {
  (void)state;
  free(g_cfg);
  return 0;
}

static int parse(const char *json) {
  memset(g_err, 'x', sizeof g_err);
  return ld_lib_config_parse(json, strlen(json), g_cfg, g_err, sizeof g_err);
}

static void parse_ok(const char *json) {
  int rc = parse(json);
  if (rc != 0)
    fail_msg("%s: rc %d: %s", json, rc, g_err);
}

static void parse_fails(const char *json, const char *text) {
  int rc = parse(json);
  if (rc == 0)
    fail_msg("%s: accepted, expected '%s'", json, text);
  if (strcmp(g_err, text) != 0)
    fail_msg("%s:\n got      '%s'\n expected '%s'", json, g_err, text);
}

static bool inert(const char *name) {
  for (size_t i = 0; i < g_cfg->node.n_inert; i++)
    if (strcmp(g_cfg->node.inert[i], name) == 0)
      return true;
  return false;
}

/* ---- legacy flat shape ----------------------------------------------------------------------- */

static void flat_example_of_the_spec(void **state) {
  (void)state;
  parse_ok("{\"logLevel\":\"DEBUG\",\"listenAddress\":\"0.0.0.0\",\"tcpPort\":40123,"
           "\"discv5UdpPort\":40124,\"restPort\":40125,\"restAddress\":\"0.0.0.0\","
           "\"clusterId\":\"198\",\"relay\":true,\"store\":true,\"filter\":false,"
           "\"lightpush\":false,\"peerExchange\":false,\"discv5Discovery\":false,"
           "\"numShardsInNetwork\":1}");
  const ld_node_config_t *c = &g_cfg->node;
  assert_int_equal(g_cfg->log_level, LD_LOG_DEBUG);
  assert_int_equal(g_cfg->log_format, LD_LOG_FORMAT_TEXT);
  assert_string_equal(c->listen_address, "0.0.0.0");
  assert_int_equal(c->tcp_port, 40123);
  assert_false(c->rest.enabled);
  assert_int_equal(c->rest.port, 40125);
  assert_string_equal(c->rest.address, "0.0.0.0");
  assert_int_equal(c->cluster_id, 198);
  assert_true(c->relay && c->store);
  assert_false(c->filter || c->lightpush || c->peer_exchange);
  assert_int_equal(c->num_shards_in_network, 1);
  assert_int_equal(c->n_shards, 1); /* finalized: autosharding over one shard */
  assert_int_equal(c->shards[0], 0);
  assert_int_equal(c->max_connections, 150);
  assert_int_equal(g_cfg->entry_layer, LD_LIB_LAYER_CHANNELS);
  assert_int_equal(g_cfg->messaging.mode, LD_MESSAGING_CORE);
  assert_true(g_cfg->messaging.reliability);
  assert_string_equal(g_cfg->preset, "");
  assert_false(c->discv5.enabled);
  assert_int_equal(c->discv5.udp_port, 40124);
  assert_int_equal(c->n_inert, 0);
}

static void flat_defaults_are_the_kernels(void **state) {
  (void)state;
  parse_ok("{\"relay\":true}");
  const ld_node_config_t *c = &g_cfg->node;
  assert_int_equal(c->tcp_port, 60000);
  assert_int_equal(c->max_connections, 150);
  assert_true(c->relay && c->filter && c->lightpush && c->peer_exchange);
  assert_false(c->store || c->rest.enabled || c->metrics.enabled || c->ws.enabled);
  assert_int_equal(c->max_msg_size, 150 * 1024);
  assert_int_equal(c->cluster_id, 0);
  assert_int_equal(c->n_shards, 8); /* static sharding, 0..7 */
  assert_int_equal(c->ws.port, 8000);
  assert_true(c->discv5.enabled); /* the kernel's default: discv5 on UDP 9000 */
  assert_int_equal(c->pm.relay_ratio, 50);
  assert_int_equal(c->discv5.udp_port, 9000);
  assert_int_equal(c->n_inert, 0);
}

static void ports_zero_and_shift(void **state) {
  (void)state;
  parse_ok("{\"tcpPort\":0,\"restPort\":0,\"websocketPort\":\"0\",\"rest\":true,"
           "\"metricsServerPort\":0,\"websocketSupport\":true,\"discv5UdpPort\":0,\"quicPort\":0}");
  assert_int_equal(g_cfg->node.tcp_port, 0);
  assert_int_equal(g_cfg->node.rest.port, 0);
  assert_true(g_cfg->node.rest.enabled);
  assert_int_equal(g_cfg->node.metrics.port, 0);
  assert_int_equal(g_cfg->node.ws.port, 0);
  assert_true(g_cfg->node.ws.enabled);
  parse_ok("{\"tcp-port\":1000,\"ports-shift\":5,\"rest-port\":2000,\"websocket-port\":3000}");
  assert_int_equal(g_cfg->node.tcp_port, 1005);
  assert_int_equal(g_cfg->node.rest.port, 2005);
  assert_int_equal(g_cfg->node.ws.port, 3005);
}

static void keys_are_case_insensitive_by_field_or_cli_name(void **state) {
  (void)state;
  parse_ok("{\"TCPPORT\":1,\"Cluster-ID\":7,\"MAX-msg-size\":\"1KiB\",\"Shard\":[1,\"2\"],"
           "\"LOGFORMAT\":\"json\"}");
  assert_int_equal(g_cfg->node.tcp_port, 1);
  assert_int_equal(g_cfg->node.cluster_id, 7);
  assert_int_equal(g_cfg->node.max_msg_size, 1024);
  assert_int_equal(g_cfg->node.n_shards, 2);
  assert_int_equal(g_cfg->node.shards[1], 2);
  assert_int_equal(g_cfg->log_format, LD_LOG_FORMAT_JSON);
}

static void scalars_as_strings_numbers_or_bools(void **state) {
  (void)state;
  parse_ok("{\"relay\":\"false\",\"store\":\"true\",\"clusterId\":\"198\",\"rest\":1,"
           "\"lightpush\":\"no\",\"filter\":\"ON\"}");
  assert_false(g_cfg->node.relay);
  assert_true(g_cfg->node.store && g_cfg->node.rest.enabled && g_cfg->node.filter);
  assert_false(g_cfg->node.lightpush);
  assert_int_equal(g_cfg->node.cluster_id, 198);
}

static void null_keeps_the_default(void **state) {
  (void)state;
  parse_ok("{\"tcpPort\":null,\"shard\":null,\"relay\":null,\"logLevel\":null,\"store\":true}");
  assert_int_equal(g_cfg->node.tcp_port, 60000);
  assert_true(g_cfg->node.relay);
  assert_int_equal(g_cfg->node.n_shards, 8);
  assert_int_equal(g_cfg->log_level, LD_LOG_INFO);
}

static void lists_take_arrays(void **state) {
  (void)state;
  parse_ok("{\"staticnode\":[\"/ip4/127.0.0.1/tcp/1/p2p/" PEER "\"],"
           "\"contentTopics\":[\"/a/1/b/proto\"],\"rest-allow-origin\":[\"*\"],"
           "\"shards\":[3],\"entryNodes\":[\"/dns4/x.example/tcp/1/p2p/" PEER "\"]}");
  assert_int_equal(g_cfg->node.n_static_nodes, 1);
  assert_int_equal(g_cfg->node.n_content_topics, 1);
  assert_int_equal(g_cfg->node.n_rest_allow_origins, 1);
  assert_int_equal(g_cfg->node.shards[0], 3);
  assert_true(inert("entry-node"));
}

static void mode_expands_before_explicit_options(void **state) {
  (void)state;
  parse_ok("{\"mode\":\"Edge\",\"tcpPort\":0}");
  const ld_node_config_t *c = &g_cfg->node;
  assert_false(c->relay || c->filter || c->lightpush || c->store);
  assert_true(c->peer_exchange);
  assert_int_equal(g_cfg->messaging.mode, LD_MESSAGING_EDGE);
  parse_ok("{\"mode\":\" edge \",\"store\":true,\"relay\":true}");
  assert_true(c->store && c->relay);
  assert_false(c->filter || c->lightpush);
  parse_ok("{\"mode\":\"CORE\",\"filter\":false}");
  assert_true(c->relay && c->lightpush && c->peer_exchange);
  assert_false(c->filter);
  assert_int_equal(g_cfg->messaging.mode, LD_MESSAGING_CORE);
  /* Core's lightpush without relay is dropped; asked for explicitly it is kept, as nwaku v0.36
   * mounts it (every push is then answered "no waku relay found") */
  parse_ok("{\"relay\":false}");
  assert_false(c->relay || c->lightpush);
  parse_ok("{\"relay\":false,\"lightpush\":true}");
  assert_true(c->lightpush);
  assert_false(c->relay);
}

static void reliability_is_lifted_into_messaging(void **state) {
  (void)state;
  parse_ok("{\"tcpPort\":0,\"reliabilityEnabled\":false}");
  assert_false(g_cfg->messaging.reliability);
  parse_ok("{\"tcpPort\":0,\"Reliability\":\"true\"}");
  assert_true(g_cfg->messaging.reliability);
  parse_ok("{\"tcpPort\":0,\"preset\":\"twn\"}");
  assert_false(g_cfg->messaging.reliability); /* twn's default */
  parse_ok("{\"tcpPort\":0,\"preset\":\"twn\",\"reliability\":true}");
  assert_true(g_cfg->messaging.reliability);
  parse_fails("{\"reliabilityEnabled\":true,\"reliability\":false}",
              "config option 'reliabilityEnabled' was set twice, via 'reliabilityEnabled' and "
              "'reliability'");
  parse_fails("{\"reliability\":\"sure\"}",
              "Failed to parse reliability field 'reliabilityEnabled' from JSON key 'reliability': "
              "expected true or false. Value: sure");
}

/* reliabilityMode beside reliability, flat and in messagingOverrides. */
static void reliability_mode_reaches_the_node(void **state) {
  (void)state;
  parse_ok("{\"tcpPort\":0}");
  assert_int_equal(g_cfg->node.reliability_mode, LD_NODE_RELIABILITY_STORE);
  parse_ok("{\"tcpPort\":0,\"reliability\":true,\"reliabilityMode\":\"p2p\","
           "\"reliabilityConfirmPeers\":3,\"reliabilityWindow\":\"2m\"}");
  assert_true(g_cfg->messaging.reliability);
  assert_int_equal(g_cfg->node.reliability_mode, LD_NODE_RELIABILITY_P2P);
  assert_int_equal(g_cfg->node.reliability_confirm_peers, 3);
  assert_int_equal(g_cfg->node.reliability_window_ms, 120000);
  parse_ok("{\"messagingOverrides\":{\"reliabilityMode\":\"p2p\"}}");
  assert_int_equal(g_cfg->node.reliability_mode, LD_NODE_RELIABILITY_P2P);
  assert_int_not_equal(parse("{\"reliabilityMode\":\"gossip\"}"), 0);
  assert_non_null(strstr(g_err, "store or p2p"));
}

static void flat_errors(void **state) {
  (void)state;
  parse_fails("{\"tcpPort\":1,\"TcpPort\":2}",
              "Duplicate configuration option (case-insensitive): 'tcpPort' and 'TcpPort'");
  parse_fails("{\"tcpPort\":1,\"tcp-port\":2}",
              "config option 'tcpPort' was set twice, via 'tcpPort' and 'tcp-port'");
  parse_fails("{\"TCP-PORT\":1,\"tcpport\":2}",
              "config option 'tcpPort' was set twice, via 'tcpport' and 'TCP-PORT'");
  parse_fails("{\"nope\":1,\"relay\":true,\"alsoNope\":2,\"zzz\":null}",
              "Unrecognized configuration option(s) found: nope, alsoNope, zzz");
  parse_fails("{\"tcpPort\":\"x\"}",
              "Failed to parse config field 'tcpPort' from JSON key 'tcpPort': expected an "
              "integer. Value: x");
  parse_fails("{\"tcp-port\":70000}",
              "Failed to parse config field 'tcpPort' from JSON key 'tcp-port': value 70000 out "
              "of range (0..65535). Value: 70000");
  parse_fails("{\"clusterId\":1.5}",
              "Failed to parse config field 'clusterId' from JSON key 'clusterId': expected an "
              "integer. Value: 1.5");
  parse_fails("{\"relay\":\"maybe\"}",
              "Failed to parse config field 'relay' from JSON key 'relay': expected true or "
              "false. Value: maybe");
  parse_fails("{\"relay\":[true]}",
              "Failed to parse config field 'relay' from JSON key 'relay': expected scalar JSON "
              "value, got JArray");
  parse_fails("{\"tcpPort\":{}}",
              "Failed to parse config field 'tcpPort' from JSON key 'tcpPort': expected scalar "
              "JSON value, got JObject");
  parse_fails("{\"shard\":3}",
              "Failed to parse config field 'shards' from JSON key 'shard' must be a JSON array");
  parse_fails("{\"shards\":[1,[2]]}",
              "Failed to parse config field 'shards' from JSON key 'shards': expected scalar JSON "
              "value, got JArray");
  parse_fails("{\"shards\":[1,null]}",
              "Failed to parse config field 'shards' from JSON key 'shards': expected scalar JSON "
              "value, got JNull");
  parse_fails("{\"shard\":[1,5000]}",
              "Failed to parse config field 'shards' from JSON key 'shard': shard '5000' is not "
              "an integer in 0..1023. Value: 5000");
  parse_fails("{\"logLevel\":\"LOUD\"}",
              "Failed to parse config field 'logLevel' from JSON key 'logLevel': unknown level "
              "'LOUD'. Value: LOUD");
  parse_fails("{\"listenAddress\":\"localhost\"}",
              "Failed to parse config field 'listenAddress' from JSON key 'listenAddress': listen "
              "address 'localhost' is not an IPv4 or IPv6 address. Value: localhost");
  parse_fails("{\"nat\":\"sometimes\"}",
              "Failed to parse config field 'nat' from JSON key 'nat': nat 'sometimes' must be "
              "any, none, upnp, pmp or extip:<IP address>. Value: sometimes");
  parse_fails("{\"rln-relay-eth-client-address\":[\"ws://x.example\"]}",
              "Failed to parse config field 'ethClientUrls' from JSON key "
              "'rln-relay-eth-client-address': 'ws://x.example': WebSocket RPC URLs are not "
              "supported, use an HTTP URL. Value: ws://x.example");
  parse_fails("{\"mode\":3}", "mode must be a string");
  parse_fails("{\"mode\":null}", "mode must be a string");
  parse_fails("{\"mode\":\"Fleet\"}", "invalid mode: 'Fleet' (expected 'Core' or 'Edge')");
  parse_fails("{\"entryLayer\":true}", "entryLayer must be a string");
  parse_fails("{\"entryLayer\":\"app\"}",
              "invalid entryLayer: 'app' (expected 'kernel', 'messaging' or 'channels')");
  parse_fails("{\"tcpPort\":0,\"preset\":\"Nope\"}", "Invalid --preset value passed: nope");
  parse_fails("{\"tcpPort\":65535,\"portsShift\":1}",
              "TCP port 65535 plus ports shift 1 is not a valid port");
}

static void not_an_object(void **state) {
  (void)state;
  parse_fails("[1]", "configuration JSON must be an object");
  parse_fails("\"x\"", "configuration JSON must be an object");
  assert_int_equal(parse("{"), LD_ERR_INVALID_ARG);
  assert_memory_equal(g_err, "invalid JSON: ", 14);
  assert_int_equal(parse(""), LD_ERR_INVALID_ARG);
  assert_memory_equal(g_err, "invalid JSON: ", 14);
  char *big = malloc(LD_LIB_CONFIG_MAX_JSON + 2);
  assert_non_null(big);
  memset(big, ' ', LD_LIB_CONFIG_MAX_JSON + 1);
  big[LD_LIB_CONFIG_MAX_JSON + 1] = '\0';
  assert_int_equal(ld_lib_config_parse(big, LD_LIB_CONFIG_MAX_JSON + 1, g_cfg, g_err, 64),
                   LD_ERR_TOO_LARGE);
  free(big);
}

/* ---- structured shape ------------------------------------------------------------------------ */

static void structured_ports_default_to_zero(void **state) {
  (void)state;
  parse_ok("{}");
  const ld_node_config_t *c = &g_cfg->node;
  assert_int_equal(c->tcp_port, 0);
  assert_int_equal(c->ws.port, 0);
  assert_false(c->ws.enabled);
  assert_true(c->relay && c->filter && c->lightpush && c->peer_exchange);
  assert_int_equal(g_cfg->entry_layer, LD_LIB_LAYER_CHANNELS);
  assert_true(g_cfg->messaging.reliability);
  parse_ok("{\"mode\":\"Edge\",\"entryLayer\":\"messaging\"}");
  assert_int_equal(c->tcp_port, 0);
  assert_false(c->relay);
  assert_int_equal(g_cfg->entry_layer, LD_LIB_LAYER_MESSAGING);
  assert_int_equal(g_cfg->messaging.mode, LD_MESSAGING_EDGE);
  parse_ok("{\"messagingOverrides\":{\"p2pTcpPort\":60010,\"websocket-support\":true}}");
  assert_int_equal(c->tcp_port, 60010);
  assert_true(c->ws.enabled);
  assert_int_equal(c->ws.port, 0);
}

static void structured_example_of_the_spec(void **state) {
  (void)state;
  parse_ok("{ \"mode\": \"Core\", \"preset\": \"logos.dev\",\n"
           "  \"messagingOverrides\": { \"tcp-port\": 60000, \"discv5-udp-port\": 9000, "
           "\"log-level\": \"INFO\" },\n"
           "  \"channelsOverrides\": { \"sdsAcknowledgementTimeoutMs\": 5000, "
           "\"sdsCausalHistorySize\": 2 } }");
  const ld_waku_network_preset_t *p = ld_waku_network_preset_find("logos.dev");
  assert_non_null(p);
  assert_string_equal(g_cfg->preset, "logos.dev");
  assert_int_equal(g_cfg->node.cluster_id, p->cluster_id);
  assert_int_equal(g_cfg->node.num_shards_in_network, 8);
  assert_int_equal(g_cfg->node.n_shards, 8);
  assert_int_equal(g_cfg->node.tcp_port, 60000);
  assert_true(g_cfg->messaging.reliability);
  assert_true(g_cfg->channels.has_ack_timeout);
  assert_int_equal(g_cfg->channels.ack_timeout_ms, 5000);
  assert_true(g_cfg->channels.has_causal_history);
  assert_int_equal(g_cfg->channels.causal_history_size, 2);
  assert_false(g_cfg->channels.has_segment_size || g_cfg->channels.has_rate_limit);
  assert_int_equal(g_cfg->node.discv5.udp_port, 9000);
  assert_false(inert("discv5-udp-port"));
  assert_true(inert("mix") && inert("entry-node"));
}

static void structured_messaging_fields(void **state) {
  (void)state;
  parse_ok("{\"messagingOverrides\":{\"clusterId\":5,\"numShardsInCluster\":4,"
           "\"listenIpv4\":\"127.0.0.1\",\"maxMessageSize\":\"100 KiB\",\"store\":true,"
           "\"storeMessageDbUrl\":\"memory://\",\"storeMessageRetentionPolicy\":\"capacity:5\","
           "\"storeMaxNumDbConnections\":3,\"logLevel\":\"trace\",\"logFormat\":\"JSON\","
           "\"nodeKey\":\"0000000000000000000000000000000000000000000000000000000000000001\","
           "\"reliabilityEnabled\":false,\"rlnContractAddress\":"
           "\"0xB9cd878C90E49F797B4431fBF4fb333108CB90e6\","
           "\"storenode\":\"/ip4/127.0.0.1/tcp/1/p2p/" PEER "\"},"
           "\"channelsOverrides\":{\"segmentationEnableReedSolomon\":true,"
           "\"rateLimitEnabled\":\"false\",\"rateLimitEpochPeriodSec\":\"10\","
           "\"rateLimitMessagesPerEpoch\":7,\"sdsMaxRetransmissions\":-1,"
           "\"segmentationSegmentSizeBytes\":1000}}");
  const ld_node_config_t *c = &g_cfg->node;
  assert_int_equal(c->cluster_id, 5);
  assert_int_equal(c->num_shards_in_network, 4);
  assert_string_equal(c->listen_address, "127.0.0.1");
  assert_int_equal(c->max_msg_size, 100 * 1024);
  assert_true(c->store);
  assert_string_equal(c->store_db_url, "memory://");
  assert_string_equal(c->store_retention, "capacity:5");
  assert_int_equal(c->store_max_db_connections, 3);
  assert_true(c->has_nodekey);
  assert_true(c->has_service_node[LD_NODE_SERVICE_STORE]);
  assert_int_equal(g_cfg->log_level, LD_LOG_TRACE);
  assert_int_equal(g_cfg->log_format, LD_LOG_FORMAT_JSON);
  assert_false(g_cfg->messaging.reliability);
  /* the contract turns RLN-relay on with the on-chain group, as the node's flags do */
  assert_true(c->rln.enabled);
  assert_true(c->rln.dynamic);
  assert_string_equal(c->rln.eth_contract, "0xB9cd878C90E49F797B4431fBF4fb333108CB90e6");
  assert_false(inert("rln-relay"));
  assert_false(inert("rln-relay-eth-contract-address")); /* the on-chain group reads it */
  const ld_lib_channels_config_t *ch = &g_cfg->channels;
  assert_true(ch->has_segmentation_rs && ch->segmentation_rs);
  assert_true(ch->has_rate_limit && !ch->rate_limit);
  assert_int_equal(ch->rate_epoch_sec, 10);
  assert_int_equal(ch->rate_messages_per_epoch, 7);
  assert_int_equal(ch->max_retransmissions, -1);
  assert_int_equal(ch->segment_size_bytes, 1000);
}

static void structured_errors(void **state) {
  (void)state;
  parse_fails("{\"messagingOverrides\":[]}", "messagingOverrides must be a JSON object");
  parse_fails("{\"messagingOverrides\":null}", "messagingOverrides must be a JSON object");
  parse_fails("{\"channelsOverrides\":1}", "channelsOverrides must be a JSON object");
  parse_fails("{\"preset\":1,\"messagingOverrides\":{}}", "preset must be a string");
  parse_fails("{\"messagingOverrides\":{},\"relay\":true,\"kernelConf\":{}}",
              "Unrecognized configuration option(s) found: relay, kernelConf");
  parse_fails("{\"messagingOverrides\":{\"tcpPort\":1,\"what\":2}}",
              "Unrecognized messagingOverrides option(s) found: tcpPort, what");
  parse_fails("{\"messagingOverrides\":{\"p2pTcpPort\":1,\"tcp-port\":2}}",
              "config option 'p2pTcpPort' was set twice, via 'p2pTcpPort' and 'tcp-port'");
  parse_fails("{\"messagingOverrides\":{\"a\":1,\"A\":2}}",
              "Duplicate configuration option (case-insensitive): 'a' and 'A'");
  parse_fails("{\"messagingOverrides\":{\"clusterId\":\"x\"}}",
              "Failed to parse messagingOverrides field 'clusterId' from JSON key 'clusterId': "
              "expected an integer. Value: x");
  parse_fails("{\"messagingOverrides\":{\"entryNodes\":\"enr:x\"}}",
              "Failed to parse messagingOverrides field 'entryNodes' from JSON key 'entryNodes' "
              "must be a JSON array");
  parse_fails("{\"messagingOverrides\":{\"reliability\":7}}",
              "Failed to parse messagingOverrides field 'reliabilityEnabled' from JSON key "
              "'reliability': expected true or false. Value: 7");
  parse_fails("{\"messagingOverrides\":{\"rateLimit\":{}}}",
              "config option 'rateLimit' cannot be set via JSON");
  parse_fails("{\"channelsOverrides\":{\"sdsCausalHistorySize\":\"two\"}}",
              "Failed to parse channelsOverrides field 'sdsCausalHistorySize' from JSON key "
              "'sdsCausalHistorySize': expected an integer. Value: two");
  parse_fails("{\"channelsOverrides\":{\"rateLimitEnabled\":{}}}",
              "Failed to parse channelsOverrides field 'rateLimitEnabled' from JSON key "
              "'rateLimitEnabled': expected scalar JSON value, got JObject");
  parse_fails("{\"channelsOverrides\":{\"segment\":1,\"sds\":2}}",
              "Unrecognized channelsOverrides option(s) found: segment, sds");
  parse_fails("{\"preset\":\"mainnet\",\"messagingOverrides\":{}}",
              "Invalid --preset value passed: mainnet");
  /* the preset alone is not a flat configuration */
  parse_fails("{\"preset\":\"Bad\"}", "Invalid --preset value passed: bad");
}

/* ---- kernel-only shape ----------------------------------------------------------------------- */

static void kernel_only_shape(void **state) {
  (void)state;
  parse_ok("{\"entryLayer\":\"Kernel\",\"mode\":\"Edge\",\"kernelConf\":{\"tcpPort\":0,"
           "\"relay\":false,\"store\":true,\"dns-discovery-url\":"
           "\"enrtree://AKPYQIUQIL7PSIACI32J7FGZW56E5FKHEFCCOFHILBIMW3M6LWXS2@x.example\"}}");
  const ld_node_config_t *c = &g_cfg->node;
  assert_int_equal(g_cfg->entry_layer, LD_LIB_LAYER_KERNEL);
  assert_int_equal(c->tcp_port, 0);
  assert_false(c->relay || c->lightpush); /* lightpush follows relay when not asked for */
  assert_true(c->store && c->filter && c->peer_exchange); /* mode is ignored */
  assert_false(inert("dns-discovery-url"));
  assert_string_equal(c->dns_discovery_url,
                      "enrtree://AKPYQIUQIL7PSIACI32J7FGZW56E5FKHEFCCOFHILBIMW3M6LWXS2@x.example");
  parse_ok("{\"entryLayer\":\"kernel\",\"kernelConf\":{}}");
  assert_int_equal(c->tcp_port, 60000); /* the kernel's defaults */
}

static void kernel_only_errors(void **state) {
  (void)state;
  parse_fails("{\"entryLayer\":\"kernel\"}", "kernel entry layer requires a 'kernelConf' object");
  parse_fails("{\"entryLayer\":\"kernel\",\"relay\":true}",
              "kernel entry layer requires a 'kernelConf' object");
  parse_fails("{\"entryLayer\":\"kernel\",\"kernelConf\":\"x\"}",
              "kernelConf must be a JSON object");
  parse_fails("{\"entryLayer\":\"kernel\",\"kernelConf\":{},\"preset\":\"twn\",\"relay\":1}",
              "kernel entry layer takes only 'kernelConf'; unexpected: preset, relay");
  parse_fails("{\"entryLayer\":\"kernel\",\"kernelConf\":{\"x\":1,\"relay\":true,\"y\":2}}",
              "Unrecognized kernelConf option(s) found: x, y");
  parse_fails("{\"entryLayer\":\"kernel\",\"kernelConf\":{\"restPort\":\"p\"}}",
              "Failed to parse kernelConf field 'restPort' from JSON key 'restPort': expected an "
              "integer. Value: p");
  parse_fails("{\"entryLayer\":\"kernel\",\"kernelConf\":{\"shard\":1}}",
              "Failed to parse kernelConf field 'shards' from JSON key 'shard' must be a JSON "
              "array");
  parse_fails("{\"entryLayer\":\"kernel\",\"kernelConf\":{\"Relay\":1,\"relay\":2}}",
              "Duplicate configuration option (case-insensitive): 'Relay' and 'relay'");
}

/* ---- presets --------------------------------------------------------------------------------- */

static void presets_fill_what_was_not_given(void **state) {
  (void)state;
  parse_ok("{\"tcpPort\":0,\"preset\":\"twn\"}");
  assert_string_equal(g_cfg->preset, "twn");
  assert_int_equal(g_cfg->node.cluster_id, 1);
  assert_int_equal(g_cfg->node.num_shards_in_network, 8);
  assert_int_equal(g_cfg->node.max_msg_size, 150 * 1024);
  assert_true(inert("rln-relay"));
  parse_ok("{\"tcpPort\":0,\"preset\":\"StatusProd\"}");
  assert_string_equal(g_cfg->preset, "status.prod");
  assert_int_equal(g_cfg->node.cluster_id, 16);
  assert_int_equal(g_cfg->node.num_shards_in_network, 1);
  assert_int_equal(g_cfg->node.max_msg_size, 1024 * 1024);
  assert_false(g_cfg->messaging.reliability);
  assert_false(inert("rln-relay"));
  parse_ok("{\"tcpPort\":0,\"preset\":\"logostest\",\"clusterId\":9,\"maxMessageSize\":\"2KiB\","
           "\"numShardsInNetwork\":2}");
  assert_string_equal(g_cfg->preset, "logos.test");
  assert_int_equal(g_cfg->node.cluster_id, 9);
  assert_int_equal(g_cfg->node.num_shards_in_network, 2);
  assert_int_equal(g_cfg->node.max_msg_size, 2048);
  assert_true(g_cfg->messaging.reliability);
  parse_ok("{\"preset\":\" twn \"}"); /* structured: stripped */
  assert_string_equal(g_cfg->preset, "twn");
  parse_ok("{\"tcpPort\":0,\"preset\":\"\"}");
  assert_string_equal(g_cfg->preset, "");
}

/* ---- every option of the table is a key --------------------------------------------------------
 */

static void every_kernel_option_is_accepted_as_null(void **state) {
  (void)state;
  char json[256];
  for (size_t i = 0; i < ld_node_options_count(); i++) {
    const ld_node_option_t *opt = ld_node_option_at(i);
    const char *other = strcmp(opt->field, "tcpPort") == 0 ? "restPort" : "tcpPort";
    if (strcmp(opt->cli, "mode") != 0) { /* "mode" is a top-level key of its own */
      snprintf(json, sizeof json, "{\"%s\":null,\"%s\":0}", opt->cli, other);
      parse_ok(json);
    }
    for (int by_cli = 0; by_cli < 2; by_cli++) {
      snprintf(json, sizeof json, "{\"entryLayer\":\"kernel\",\"kernelConf\":{\"%s\":null}}",
               by_cli ? opt->cli : opt->field);
      parse_ok(json);
    }
  }
}

static void available_configs_list_every_option(void **state) {
  (void)state;
  char *text = ld_lib_config_available_json();
  assert_non_null(text);
  assert_non_null(strstr(text, "\n  \"configOptions\": [\n"));
  json_error_t jerr;
  json_t *root = json_loads(text, 0, &jerr);
  assert_non_null(root);
  json_t *list = json_object_get(root, "configOptions");
  assert_int_equal(json_array_size(list), ld_node_options_count());
  json_t *first = json_array_get(list, 0);
  assert_int_equal(json_object_size(first), 2);
  assert_non_null(json_object_get(first, "desc"));
  json_t *tcp = NULL;
  for (size_t i = 0; i < json_array_size(list); i++)
    if (json_object_get(json_array_get(list, i), "tcpPort") != NULL)
      tcp = json_array_get(list, i);
  assert_non_null(tcp);
  assert_string_equal(json_string_value(json_object_get(tcp, "tcpPort")), "Port(60000)");
  json_decref(root);
  free(text);
}

/* What ld_lib_channels_config makes of `json`'s channelsOverrides (the JSON must parse). */
static int channels_config(const char *json, ld_channels_config_t *out, char *why, size_t cap) {
  parse_ok(json);
  why[0] = '\0';
  return ld_lib_channels_config(&g_cfg->channels, out, why, cap);
}

/* The channel configuration `json`'s channelsOverrides give (they must be valid). */
static ld_channels_config_t channels_from(const char *json) {
  ld_channels_config_t out;
  char why[256];
  if (channels_config(json, &out, why, sizeof why) != 0)
    fail_msg("%s: refused: %s", json, why);
  return out;
}

/* `json` parses, but its channelsOverrides are refused with `text`. */
static void channels_refused(const char *json, const char *text) {
  ld_channels_config_t out;
  char why[256];
  assert_int_equal(channels_config(json, &out, why, sizeof why), LD_ERR_INVALID_ARG);
  assert_string_equal(why, text);
}

/* Our extension keys: the SDS-R window (with the store fetch right after it), the sync
 * interval, the bloom filter's interval and the acknowledgement sync count, with their ranges. */
static void channel_timing_extension(void **state) {
  (void)state;
  ld_channels_config_t out =
      channels_from("{\"channelsOverrides\":{\"sdsRepairTMinMs\":200,\"sdsRepairTMaxMs\":900,"
                    "\"sdsSyncIntervalMs\":0}}");
  assert_int_equal(out.sds.repair_t_min_ms, 200);
  assert_int_equal(out.sds.repair_t_max_ms, 900);
  assert_int_equal(out.sds.fetch_delay_ms, 1100);
  assert_int_equal(out.sds.sync_interval_ms, 0);
  channels_refused("{\"channelsOverrides\":{\"sdsRepairTMinMs\":200000}}",
                   "channelsOverrides 'sdsRepairTMinMs' (200000) must be below "
                   "'sdsRepairTMaxMs' (120000)");
  channels_refused("{\"channelsOverrides\":{\"sdsSyncIntervalMs\":-1}}",
                   "channelsOverrides 'sdsSyncIntervalMs' is -1, expected 0..3600000");
  /* the bloom filter's interval on content messages: 1 s by default, 0 = every message */
  out = channels_from("{\"channelsOverrides\":{}}");
  assert_int_equal(out.sds.bloom_interval_ms, LD_CHANNELS_DEFAULT_BLOOM_INTERVAL_MS);
  out = channels_from("{\"channelsOverrides\":{\"sdsBloomIntervalMs\":0}}");
  assert_int_equal(out.sds.bloom_interval_ms, 0);
  channels_refused("{\"channelsOverrides\":{\"sdsBloomIntervalMs\":-5}}",
                   "channelsOverrides 'sdsBloomIntervalMs' is -5, expected 0..3600000");
  /* an acknowledgement sync at once per this many content messages received: 250 by default, 0 =
   * only the timer */
  out = channels_from("{\"channelsOverrides\":{}}");
  assert_int_equal(out.sds.ack_sync_every, LD_CHANNELS_DEFAULT_ACK_SYNC_EVERY);
  out = channels_from("{\"channelsOverrides\":{\"sdsAckSyncEvery\":0}}");
  assert_int_equal(out.sds.ack_sync_every, 0);
  out = channels_from("{\"channelsOverrides\":{\"sdsAckSyncEvery\":1000000}}");
  assert_int_equal(out.sds.ack_sync_every, 1000000);
  channels_refused("{\"channelsOverrides\":{\"sdsAckSyncEvery\":-1}}",
                   "channelsOverrides 'sdsAckSyncEvery' is -1, expected 0..1000000");
  channels_refused("{\"channelsOverrides\":{\"sdsAckSyncEvery\":1000001}}",
                   "channelsOverrides 'sdsAckSyncEvery' is 1000001, expected 0..1000000");
  parse_fails("{\"channelsOverrides\":{\"sdsAckSyncEvery\":\"often\"}}",
              "Failed to parse channelsOverrides field 'sdsAckSyncEvery' from JSON key "
              "'sdsAckSyncEvery': expected an integer. Value: often");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(flat_example_of_the_spec),
      cmocka_unit_test(channel_timing_extension),
      cmocka_unit_test(flat_defaults_are_the_kernels),
      cmocka_unit_test(ports_zero_and_shift),
      cmocka_unit_test(keys_are_case_insensitive_by_field_or_cli_name),
      cmocka_unit_test(scalars_as_strings_numbers_or_bools),
      cmocka_unit_test(null_keeps_the_default),
      cmocka_unit_test(lists_take_arrays),
      cmocka_unit_test(mode_expands_before_explicit_options),
      cmocka_unit_test(reliability_is_lifted_into_messaging),
      cmocka_unit_test(reliability_mode_reaches_the_node),
      cmocka_unit_test(flat_errors),
      cmocka_unit_test(not_an_object),
      cmocka_unit_test(structured_ports_default_to_zero),
      cmocka_unit_test(structured_example_of_the_spec),
      cmocka_unit_test(structured_messaging_fields),
      cmocka_unit_test(structured_errors),
      cmocka_unit_test(kernel_only_shape),
      cmocka_unit_test(kernel_only_errors),
      cmocka_unit_test(presets_fill_what_was_not_given),
      cmocka_unit_test(every_kernel_option_is_accepted_as_null),
      cmocka_unit_test(available_configs_list_every_option),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
