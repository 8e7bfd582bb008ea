#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "base/error.h"
#include "base/hex.h"
#include "node/config.h"
#include "p2p/peerid.h"

/* secp256k1 generator point G (secret key 1), compressed and uncompressed. */
#define G_COMPRESSED "0279be667ef9dcbbac55a06295ce870b07029bfcdb2dce28d959f2815b16f81798"
#define G_UNCOMPRESSED                                                                             \
  "0479be667ef9dcbbac55a06295ce870b07029bfcdb2dce28d959f2815b16f81798"                             \
  "483ada7726a3c4655da4fbfc0e1108a8fd17b448a68554199c47d08ffb10d4b8"
#define PEER "16Uiu2HAmLhLvBoYaoZfaMUKuibM6ac163GwKY74c5kiSLg5KvLpY"

static ld_node_config_t *new_config(void) {
  ld_node_config_t *cfg = malloc(sizeof *cfg);
  assert_non_null(cfg);
  ld_node_config_default(cfg);
  return cfg;
}

static void defaults_are_nwakus(void **state) {
  (void)state;
  ld_node_config_t *cfg = new_config();
  assert_string_equal(cfg->listen_address, "0.0.0.0");
  assert_int_equal(cfg->tcp_port, 60000);
  assert_int_equal(cfg->max_connections, 50);
  assert_false(cfg->has_nodekey);
  assert_true(cfg->relay);
  assert_int_equal(cfg->cluster_id, 0);
  assert_int_equal(cfg->num_shards_in_network, 0);
  assert_int_equal(cfg->max_msg_size, 153600);
  assert_false(cfg->rest.enabled);
  assert_string_equal(cfg->rest.address, "127.0.0.1");
  assert_int_equal(cfg->rest.port, 8645);
  assert_false(cfg->rest_admin);
  assert_false(cfg->metrics.enabled);
  assert_string_equal(cfg->metrics.address, "127.0.0.1");
  assert_int_equal(cfg->metrics.port, 8008);
  assert_int_equal(cfg->n_shards, 0);
  assert_int_equal(cfg->n_static_nodes, 0);
  free(cfg);
}

static void nodekey_gives_the_spec_peer_id(void **state) {
  (void)state;
  ld_node_config_t cfg;
  char err[128];
  ld_node_config_default(&cfg);
  /* the secp256k1 key of the peer-ID spec vectors */
  const char *hex = "53DADF1D5A164D6B4ACDB15E24AA4C5B1D3461BDBD42ABEDB0A4404D56CED8FB";
  assert_int_equal(ld_node_config_set_nodekey_hex(&cfg, hex, err, sizeof err), 0);
  assert_true(cfg.has_nodekey);
  ld_pubkey_t pub;
  ld_peerid_t id;
  char text[LD_PEERID_TEXT_MAX];
  ld_privkey_public(&cfg.nodekey, &pub);
  assert_int_equal(ld_peerid_from_pubkey(&id, &pub), 0);
  assert_true(ld_peerid_to_text(&id, text, sizeof text) > 0);
  assert_string_equal(text, PEER);
}

static void bad_nodekeys_are_refused_with_a_reason(void **state) {
  (void)state;
  ld_node_config_t cfg;
  char err[128];
  ld_node_config_default(&cfg);
  assert_int_not_equal(ld_node_config_set_nodekey_hex(&cfg, "abcd", err, sizeof err), 0);
  assert_non_null(strstr(err, "64 hex"));
  assert_int_not_equal(ld_node_config_set_nodekey_hex(&cfg, "zz", err, sizeof err), 0);
  const char *zero = "0000000000000000000000000000000000000000000000000000000000000000";
  assert_int_equal(ld_node_config_set_nodekey_hex(&cfg, zero, err, sizeof err), LD_ERR_BAD_KEY);
  assert_false(cfg.has_nodekey);
}

static void ports_shift_is_added_and_checked(void **state) {
  (void)state;
  ld_node_config_t cfg;
  char err[128];
  ld_node_config_default(&cfg);
  assert_int_equal(ld_node_config_set_listen(&cfg, "127.0.0.1", 60000, 5, err, sizeof err), 0);
  assert_int_equal(cfg.tcp_port, 60005);
  assert_int_equal(ld_node_config_set_listen(&cfg, "::1", 0, 0, err, sizeof err), 0);
  assert_int_equal(cfg.tcp_port, 0);
  assert_int_equal(ld_node_config_set_listen(&cfg, "127.0.0.1", 65535, 1, err, sizeof err),
                   LD_ERR_INVALID_ARG);
  assert_int_equal(ld_node_config_set_listen(&cfg, "example.com", 1, 0, err, sizeof err),
                   LD_ERR_INVALID_ARG);
  assert_non_null(strstr(err, "example.com"));
}

static void http_servers_take_the_shift_and_check_addresses(void **state) {
  (void)state;
  ld_node_config_t *cfg = new_config();
  char err[160];
  assert_int_equal(ld_node_config_set_rest(cfg, true, "0.0.0.0", 8645, 10, err, sizeof err), 0);
  assert_true(cfg->rest.enabled);
  assert_string_equal(cfg->rest.address, "0.0.0.0");
  assert_int_equal(cfg->rest.port, 8655);
  assert_int_equal(ld_node_config_set_metrics(cfg, true, "::1", 0, 0, err, sizeof err), 0);
  assert_true(cfg->metrics.enabled);
  assert_int_equal(cfg->metrics.port, 0);
  assert_int_equal(ld_node_config_set_rest(cfg, true, "localhost", 1, 0, err, sizeof err),
                   LD_ERR_INVALID_ARG);
  assert_non_null(strstr(err, "REST address 'localhost'"));
  assert_int_equal(ld_node_config_set_metrics(cfg, true, "127.0.0.1", 65000, 1000, err, sizeof err),
                   LD_ERR_INVALID_ARG);
  assert_non_null(strstr(err, "metrics server port 65000"));
  assert_int_equal(ld_node_config_set_rest(cfg, true, "127.0.0.1", -1, 0, err, sizeof err),
                   LD_ERR_INVALID_ARG);
  /* failures leave the values as they were */
  assert_int_equal(cfg->rest.port, 8655);
  assert_int_equal(cfg->metrics.port, 0);
  free(cfg);
}

static void numeric_options_are_range_checked(void **state) {
  (void)state;
  ld_node_config_t *cfg = new_config();
  char err[160];
  assert_int_equal(ld_node_config_set_cluster_id(cfg, 65535, err, sizeof err), 0);
  assert_int_equal(cfg->cluster_id, 65535);
  assert_int_equal(ld_node_config_set_cluster_id(cfg, 65536, err, sizeof err), LD_ERR_INVALID_ARG);
  assert_non_null(strstr(err, "cluster-id 65536"));
  assert_int_equal(ld_node_config_set_cluster_id(cfg, -1, err, sizeof err), LD_ERR_INVALID_ARG);
  assert_int_equal(ld_node_config_set_num_shards(cfg, 1024, err, sizeof err), 0);
  assert_int_equal(ld_node_config_set_num_shards(cfg, 1025, err, sizeof err), LD_ERR_INVALID_ARG);
  assert_non_null(strstr(err, "num-shards-in-network"));
  assert_int_equal(ld_node_config_set_max_connections(cfg, 0, err, sizeof err), LD_ERR_INVALID_ARG);
  assert_non_null(strstr(err, "max-connections 0"));
  assert_int_equal(ld_node_config_set_max_connections(cfg, 300, err, sizeof err), 0);
  assert_int_equal(cfg->max_connections, 300);
  assert_int_equal(ld_node_config_set_colocation_limit(cfg, 0, err, sizeof err), 0);
  assert_int_equal(cfg->colocation_limit, 0);
  assert_int_equal(ld_node_config_set_colocation_limit(cfg, -3, err, sizeof err),
                   LD_ERR_INVALID_ARG);
  assert_non_null(strstr(err, "ip-colocation-limit"));
  free(cfg);
}

static void shards_are_parsed_deduplicated_and_capped(void **state) {
  (void)state;
  ld_node_config_t *cfg = new_config();
  char err[160];
  assert_int_equal(ld_node_config_add_shard(cfg, "3", err, sizeof err), 0);
  assert_int_equal(ld_node_config_add_shard(cfg, "1023", err, sizeof err), 0);
  assert_int_equal(ld_node_config_add_shard(cfg, "3", err, sizeof err), 0);
  assert_int_equal(cfg->n_shards, 2);
  assert_int_equal(cfg->shards[0], 3);
  assert_int_equal(cfg->shards[1], 1023);
  const char *bad[] = {"1024", "-1", "", "x", "1.0", " 1", "99999999999999999999999"};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    assert_int_equal(ld_node_config_add_shard(cfg, bad[i], err, sizeof err), LD_ERR_INVALID_ARG);
    assert_non_null(strstr(err, "0..1023"));
  }
  for (int s = 0; s < LD_NODE_MAX_SHARDS; s++) {
    char text[8];
    snprintf(text, sizeof text, "%d", s % 1024);
    assert_int_equal(ld_node_config_add_shard(cfg, text, err, sizeof err), 0);
  }
  assert_int_equal(cfg->n_shards, LD_NODE_MAX_SHARDS);
  free(cfg);
}

static void finalize_picks_the_default_shards(void **state) {
  (void)state;
  ld_node_config_t *cfg = new_config();
  char err[160];
  assert_int_equal(ld_node_config_finalize(cfg, err, sizeof err), 0);
  assert_int_equal(cfg->n_shards, 8);
  for (int i = 0; i < 8; i++)
    assert_true(ld_node_config_has_shard(cfg, (uint16_t)i));
  assert_false(ld_node_config_has_shard(cfg, 8));

  ld_node_config_default(cfg);
  assert_int_equal(ld_node_config_set_num_shards(cfg, 3, err, sizeof err), 0);
  assert_int_equal(ld_node_config_finalize(cfg, err, sizeof err), 0);
  assert_int_equal(cfg->n_shards, 3);
  assert_int_equal(cfg->shards[2], 2);

  ld_node_config_default(cfg);
  assert_int_equal(ld_node_config_add_shard(cfg, "5", err, sizeof err), 0);
  assert_int_equal(ld_node_config_finalize(cfg, err, sizeof err), 0);
  assert_int_equal(cfg->n_shards, 1);
  assert_int_equal(cfg->shards[0], 5);
  free(cfg);
}

static void autosharding_checks_shards_and_topics(void **state) {
  (void)state;
  ld_node_config_t *cfg = new_config();
  char err[200];
  assert_int_equal(ld_node_config_set_num_shards(cfg, 8, err, sizeof err), 0);
  assert_int_equal(ld_node_config_add_shard(cfg, "8", err, sizeof err), 0);
  assert_int_equal(ld_node_config_finalize(cfg, err, sizeof err), LD_ERR_INVALID_ARG);
  assert_non_null(strstr(err, "shard 8 is not below num-shards-in-network 8"));

  ld_node_config_default(cfg);
  assert_int_equal(ld_node_config_set_num_shards(cfg, 8, err, sizeof err), 0);
  assert_int_equal(
      ld_node_config_add_content_topic(cfg, "/1/toychat/2/huilong/proto", err, sizeof err), 0);
  assert_int_equal(ld_node_config_finalize(cfg, err, sizeof err), LD_ERR_INVALID_ARG);
  assert_non_null(strstr(err, "/1/toychat/2/huilong/proto"));

  ld_node_config_default(cfg);
  assert_int_equal(ld_node_config_set_num_shards(cfg, 4, err, sizeof err), 0);
  assert_int_equal(ld_node_config_add_protected_shard(cfg, "4:" G_COMPRESSED, err, sizeof err), 0);
  assert_int_equal(ld_node_config_finalize(cfg, err, sizeof err), LD_ERR_INVALID_ARG);
  assert_non_null(strstr(err, "protected shard 4"));

  /* static sharding takes any shard and generation */
  ld_node_config_default(cfg);
  assert_int_equal(ld_node_config_add_shard(cfg, "900", err, sizeof err), 0);
  assert_int_equal(
      ld_node_config_add_content_topic(cfg, "/1/toychat/2/huilong/proto", err, sizeof err), 0);
  assert_int_equal(ld_node_config_finalize(cfg, err, sizeof err), 0);
  free(cfg);
}

static void content_topics_follow_nwakus_parser(void **state) {
  (void)state;
  ld_node_config_t *cfg = new_config();
  char err[300];
  const char *good[] = {"/toychat/2/huilong/proto", "/0/toychat/2/huilong/proto",
                        "/waku/2/default-content/proto"};
  for (size_t i = 0; i < 3; i++)
    assert_int_equal(ld_node_config_add_content_topic(cfg, good[i], err, sizeof err), 0);
  assert_int_equal(ld_node_config_add_content_topic(cfg, good[0], err, sizeof err), 0);
  assert_int_equal(cfg->n_content_topics, 3);
  assert_string_equal(cfg->content_topics[1], good[1]);
  const char *bad[] = {"invalid", "/a/b/c", "/a/b/c/d/e/f", "/x/app/1/n/e", "/app//n/e", ""};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    assert_int_equal(ld_node_config_add_content_topic(cfg, bad[i], err, sizeof err),
                     LD_ERR_INVALID_ARG);
    char needle[64];
    snprintf(needle, sizeof needle, "'%s'", bad[i]);
    assert_non_null(strstr(err, needle));
  }
  char long_topic[LD_NODE_CONTENT_TOPIC_MAX + 8];
  memset(long_topic, 'a', sizeof long_topic);
  memcpy(long_topic, "/app/1/n/", 9);
  long_topic[sizeof long_topic - 1] = '\0';
  assert_int_equal(ld_node_config_add_content_topic(cfg, long_topic, err, sizeof err),
                   LD_ERR_INVALID_ARG);
  assert_non_null(strstr(err, "longer than"));
  assert_int_equal(cfg->n_content_topics, 3);
  free(cfg);
}

static void static_nodes_need_a_transport_and_a_peer_id(void **state) {
  (void)state;
  ld_node_config_t *cfg = new_config();
  char err[300];
  const char *good = "/ip4/127.0.0.1/tcp/60000/p2p/" PEER;
  assert_int_equal(ld_node_config_add_static_node(cfg, good, err, sizeof err), 0);
  assert_int_equal(ld_node_config_add_static_node(cfg, good, err, sizeof err), 0);
  assert_int_equal(
      ld_node_config_add_static_node(cfg, "/dns4/node.example/tcp/1/ws/p2p/" PEER, err, sizeof err),
      0);
  assert_int_equal(cfg->n_static_nodes, 2);
  struct {
    const char *addr, *needle;
  } bad[] = {
      {"not a multiaddr", "not a valid multiaddr"},
      {"/ip4/127.0.0.1/tcp/60000", "must end with /p2p/<peer id>"},
      {"/ip4/127.0.0.1/udp/60000/p2p/" PEER, "no /ip4, /ip6 or /dns"},
      {"/p2p/" PEER, "no /ip4, /ip6 or /dns"},
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    assert_int_equal(ld_node_config_add_static_node(cfg, bad[i].addr, err, sizeof err),
                     LD_ERR_INVALID_ARG);
    assert_non_null(strstr(err, bad[i].needle));
  }
  free(cfg);
}

static void sizes_parse_as_nwaku(void **state) {
  (void)state;
  struct {
    const char *text;
    uint64_t bytes;
  } good[] = {
      {"150KiB", 153600}, {"150kib", 153600}, {"1024KiB", 1048576}, {"1MiB", 1048576},
      {"1500 B", 1500},   {"1500b", 1500},    {"1.5KB", 1500},      {"1,5 KiB", 1536},
      {" 3kb ", 3000},    {"2MB", 2000000},   {"0.5 B", 0},         {"1.B", 1},
  };
  for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
    uint64_t v = 7;
    assert_int_equal(ld_node_parse_size(good[i].text, &v, NULL, 0), 0);
    assert_int_equal(v, good[i].bytes);
  }
  const char *bad[] = {"",         "KiB",   "10",     "10 GB", "1iB",
                       "1.5.5KiB", "-1KiB", "1 K iB", "x1KB",  "1KiB extra"};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    uint64_t v;
    char err[200];
    assert_int_equal(ld_node_parse_size(bad[i], &v, err, sizeof err), LD_ERR_INVALID_ARG);
    assert_non_null(strstr(err, bad[i]));
  }
}

static void max_msg_size_is_bounded(void **state) {
  (void)state;
  ld_node_config_t *cfg = new_config();
  char err[200];
  assert_int_equal(ld_node_config_set_max_msg_size(cfg, "1024KiB", err, sizeof err), 0);
  assert_int_equal(cfg->max_msg_size, 1048576);
  assert_int_equal(ld_node_config_set_max_msg_size(cfg, "0B", err, sizeof err), LD_ERR_INVALID_ARG);
  assert_non_null(strstr(err, "between 1 and"));
  assert_int_equal(ld_node_config_set_max_msg_size(cfg, "5MiB", err, sizeof err),
                   LD_ERR_INVALID_ARG);
  assert_int_equal(ld_node_config_set_max_msg_size(cfg, "abc", err, sizeof err),
                   LD_ERR_INVALID_ARG);
  assert_int_equal(cfg->max_msg_size, 1048576);
  free(cfg);
}

static void protected_shards_take_nwakus_format(void **state) {
  (void)state;
  ld_node_config_t *cfg = new_config();
  char err[300];
  uint8_t g[33];
  size_t n;
  assert_int_equal(ld_hex_decode(G_COMPRESSED, 66, g, sizeof g, &n), 0);
  assert_int_equal(ld_node_config_add_protected_shard(cfg, "3:" G_COMPRESSED, err, sizeof err), 0);
  assert_int_equal(ld_node_config_add_protected_shard(cfg, "7:0x" G_UNCOMPRESSED, err, sizeof err),
                   0);
  assert_int_equal(
      ld_node_config_add_protected_shard(cfg, "/waku/2/rs/0/9:" G_COMPRESSED, err, sizeof err), 0);
  assert_int_equal(cfg->n_protected_shards, 3);
  const ld_node_protected_shard_t *p = ld_node_config_protected_shard(cfg, 7);
  assert_non_null(p);
  assert_memory_equal(p->public_key, g, 33); /* stored compressed */
  assert_null(ld_node_config_protected_shard(cfg, 4));
  assert_int_equal(ld_node_config_finalize(cfg, err, sizeof err), 0);

  struct {
    const char *text;
    int rc;
    const char *needle;
  } bad[] = {
      {G_COMPRESSED, LD_ERR_INVALID_ARG, "<shard>:<public key hex>"},
      {":" G_COMPRESSED, LD_ERR_INVALID_ARG, "<shard>:<public key hex>"},
      {"1:2:" G_COMPRESSED, LD_ERR_INVALID_ARG, "<shard>:<public key hex>"},
      {"1024:" G_COMPRESSED, LD_ERR_INVALID_ARG, "0..1023"},
      {"/waku/2/rs/x/1:" G_COMPRESSED, LD_ERR_INVALID_ARG, "/waku/2/rs/<cluster-id>/<shard-id>"},
      {"/waku/2/default-waku/proto:" G_COMPRESSED, LD_ERR_INVALID_ARG, "/waku/2/rs/"},
      {"1:abcd", LD_ERR_BAD_KEY, "66 or 130 hex"},
      {"1:zz", LD_ERR_BAD_KEY, "66 or 130 hex"},
      {"1:02ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff", LD_ERR_BAD_KEY,
       "not a valid secp256k1 key"},
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    assert_int_equal(ld_node_config_add_protected_shard(cfg, bad[i].text, err, sizeof err),
                     bad[i].rc);
    assert_non_null(strstr(err, bad[i].needle));
  }
  assert_int_equal(cfg->n_protected_shards, 3);

  /* the pubsub-topic form must name the node's cluster */
  assert_int_equal(
      ld_node_config_add_protected_shard(cfg, "/waku/2/rs/1/2:" G_COMPRESSED, err, sizeof err), 0);
  assert_int_equal(ld_node_config_finalize(cfg, err, sizeof err), LD_ERR_INVALID_ARG);
  assert_non_null(strstr(err, "/waku/2/rs/1/2 is not in cluster 0"));
  assert_int_equal(ld_node_config_set_cluster_id(cfg, 1, err, sizeof err), 0);
  assert_int_equal(ld_node_config_finalize(cfg, err, sizeof err), LD_ERR_INVALID_ARG);
  assert_non_null(strstr(err, "/waku/2/rs/0/9 is not in cluster 1"));
  free(cfg);
}

static void rest_cache_and_origins_are_checked(void **state) {
  (void)state;
  ld_node_config_t *cfg = new_config();
  char err[300];
  assert_int_equal(cfg->rest_relay_cache_capacity, 50);
  assert_int_equal(ld_node_config_set_rest_cache(cfg, 500, err, sizeof err), 0);
  assert_int_equal(cfg->rest_relay_cache_capacity, 500);
  assert_int_equal(ld_node_config_set_rest_cache(cfg, 0, err, sizeof err), LD_ERR_INVALID_ARG);
  assert_int_equal(ld_node_config_set_rest_cache(cfg, LD_NODE_MAX_REST_CACHE + 1, err, sizeof err),
                   LD_ERR_INVALID_ARG);
  assert_non_null(strstr(err, "rest-relay-cache-capacity"));
  assert_int_equal(ld_node_config_add_rest_origin(cfg, "localhost:*", err, sizeof err), 0);
  assert_int_equal(ld_node_config_add_rest_origin(cfg, "localhost:*", err, sizeof err), 0);
  assert_int_equal(cfg->n_rest_allow_origins, 1);
  assert_int_equal(ld_node_config_add_rest_origin(cfg, "", err, sizeof err), LD_ERR_INVALID_ARG);
  assert_int_equal(ld_node_config_add_rest_origin(cfg, "a b", err, sizeof err), LD_ERR_INVALID_ARG);
  assert_non_null(strstr(err, "rest-allow-origin 'a b'"));
  for (int i = 1; i < LD_NODE_MAX_REST_ORIGINS; i++) {
    char o[32];
    snprintf(o, sizeof o, "http://host%d:*", i);
    assert_int_equal(ld_node_config_add_rest_origin(cfg, o, err, sizeof err), 0);
  }
  assert_int_equal(ld_node_config_add_rest_origin(cfg, "x", err, sizeof err), LD_ERR_LIMIT);
  free(cfg);
}

static void lists_are_capped(void **state) {
  (void)state;
  ld_node_config_t *cfg = new_config();
  char err[300];
  for (int i = 0; i < LD_NODE_MAX_CONTENT_TOPICS; i++) {
    char t[64];
    snprintf(t, sizeof t, "/app/%d/name/proto", i);
    assert_int_equal(ld_node_config_add_content_topic(cfg, t, err, sizeof err), 0);
  }
  assert_int_equal(ld_node_config_add_content_topic(cfg, "/app/x/name/proto", err, sizeof err),
                   LD_ERR_LIMIT);
  assert_non_null(strstr(err, "content topics"));
  for (int i = 0; i < LD_NODE_MAX_PROTECTED_SHARDS; i++) {
    char t[128];
    snprintf(t, sizeof t, "%d:%s", i, G_COMPRESSED);
    assert_int_equal(ld_node_config_add_protected_shard(cfg, t, err, sizeof err), 0);
  }
  assert_int_equal(ld_node_config_add_protected_shard(cfg, "999:" G_COMPRESSED, err, sizeof err),
                   LD_ERR_LIMIT);
  /* replacing the key of a listed shard needs no room */
  assert_int_equal(ld_node_config_add_protected_shard(cfg, "5:" G_UNCOMPRESSED, err, sizeof err),
                   0);
  free(cfg);
}

static void service_options_follow_nwaku(void **state) {
  (void)state;
  ld_node_config_t *cfg = new_config();
  char err[300];
  assert_false(cfg->ws.enabled);
  assert_int_equal(cfg->ws.port, 8000);
  assert_string_equal(cfg->store_db_url, "sqlite://store.sqlite3");
  assert_string_equal(cfg->store_retention, "time:172800");
  assert_int_equal(cfg->store_max_db_connections, 50);
  assert_int_equal(cfg->filter_subscription_timeout_s, 300);
  assert_false(cfg->lightpush || cfg->filter || cfg->store || cfg->peer_exchange);
  /* WebSocket: the shift applies; secure needs both files */
  assert_int_equal(
      ld_node_config_set_websocket(cfg, true, 8000, 2, false, NULL, NULL, err, sizeof err), 0);
  assert_true(cfg->ws.enabled);
  assert_int_equal(cfg->ws.port, 8002);
  assert_int_equal(
      ld_node_config_set_websocket(cfg, true, 65535, 1, false, NULL, NULL, err, sizeof err),
      LD_ERR_INVALID_ARG);
  assert_non_null(strstr(err, "websocket-port"));
  assert_int_equal(cfg->ws.port, 8002); /* unchanged */
  assert_int_equal(
      ld_node_config_set_websocket(cfg, false, 443, 0, true, "key.pem", NULL, err, sizeof err), 0);
  assert_true(cfg->ws.enabled && cfg->ws.secure);
  assert_int_equal(ld_node_config_finalize(cfg, err, sizeof err), LD_ERR_INVALID_ARG);
  assert_non_null(strstr(err, "websocket-secure-cert-path"));
  assert_int_equal(
      ld_node_config_set_websocket(cfg, false, 443, 0, true, NULL, "cert.pem", err, sizeof err), 0);
  assert_string_equal(cfg->ws.key_path, "key.pem");
  assert_int_equal(ld_node_config_finalize(cfg, err, sizeof err), 0);
  /* database URLs */
  assert_int_equal(
      ld_node_config_set_store_db_url(cfg, "postgres://u:p@127.0.0.1:5432/db", err, sizeof err), 0);
  assert_int_equal(ld_node_config_set_store_db_url(cfg, "memory://", err, sizeof err), 0);
  assert_int_equal(ld_node_config_set_store_db_url(cfg, "sqlite://", err, sizeof err),
                   LD_ERR_INVALID_ARG);
  assert_int_equal(ld_node_config_set_store_db_url(cfg, "mysql://x", err, sizeof err),
                   LD_ERR_INVALID_ARG);
  assert_non_null(strstr(err, "mysql://x"));
  assert_string_equal(cfg->store_db_url, "memory://");
  assert_int_equal(ld_node_config_set_store_retention(cfg, "", err, sizeof err),
                   LD_ERR_INVALID_ARG);
  /* service peers need a transport and a peer ID */
  assert_int_equal(ld_node_config_set_service_node(cfg, LD_NODE_SERVICE_STORE,
                                                   "/ip4/127.0.0.1/tcp/60000/p2p/" PEER, err,
                                                   sizeof err),
                   0);
  assert_true(cfg->has_service_node[LD_NODE_SERVICE_STORE]);
  assert_int_equal(ld_node_config_set_service_node(cfg, LD_NODE_SERVICE_FILTER,
                                                   "/ip4/127.0.0.1/tcp/60000", err, sizeof err),
                   LD_ERR_INVALID_ARG);
  assert_non_null(strstr(err, "filternode"));
  assert_false(cfg->has_service_node[LD_NODE_SERVICE_FILTER]);
  /* lightpush without relay is accepted (nwaku v0.36 mounts it and answers "no waku relay
   * found") */
  cfg->lightpush = true;
  cfg->relay = false;
  assert_int_equal(ld_node_config_finalize(cfg, err, sizeof err), 0);
  assert_true(cfg->lightpush);
  assert_false(cfg->relay);
  free(cfg);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(defaults_are_nwakus),
      cmocka_unit_test(nodekey_gives_the_spec_peer_id),
      cmocka_unit_test(bad_nodekeys_are_refused_with_a_reason),
      cmocka_unit_test(ports_shift_is_added_and_checked),
      cmocka_unit_test(http_servers_take_the_shift_and_check_addresses),
      cmocka_unit_test(numeric_options_are_range_checked),
      cmocka_unit_test(shards_are_parsed_deduplicated_and_capped),
      cmocka_unit_test(finalize_picks_the_default_shards),
      cmocka_unit_test(autosharding_checks_shards_and_topics),
      cmocka_unit_test(content_topics_follow_nwakus_parser),
      cmocka_unit_test(static_nodes_need_a_transport_and_a_peer_id),
      cmocka_unit_test(sizes_parse_as_nwaku),
      cmocka_unit_test(max_msg_size_is_bounded),
      cmocka_unit_test(protected_shards_take_nwakus_format),
      cmocka_unit_test(rest_cache_and_origins_are_checked),
      cmocka_unit_test(lists_are_capped),
      cmocka_unit_test(service_options_follow_nwaku),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
