/* The flags of `send`, `subscribe` and `query`, the store query built from the query flags, the
 * JSON line of a message, and the exit codes of service outcomes. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "base/error.h"
#include "logosdelivery/app.h"
#include "logosdelivery/client.h"
#include "waku/core/sharding.h"

#define PEER "/ip4/127.0.0.1/tcp/60000/p2p/16Uiu2HAkx3GoZmXmHbBcphAVJAU6gDuFWWLyBgAaEpyPzbZqccLQ"
#define H1 "0x1111111111111111111111111111111111111111111111111111111111111111"
#define H2 "abababababababababababababababababababababababababababababababab"

typedef struct fixture {
  ld_client_opts_t o;
  ld_client_query_t q;
  const char *positional[8];
  size_t n_positional;
  char err[512];
} fixture_t;

static int setup(void **state) {
  *state = calloc(1, sizeof(fixture_t));
  return *state != NULL ? 0 : -1;
}

static int teardown(void **state) {
  fixture_t *f = *state;
  ld_client_opts_clear(&f->o);
  free(f);
  return 0;
}

/* Parses a NULL-terminated argument list. */
static int parse_args(fixture_t *f, ld_client_command_t cmd, const char *const *args) {
  char *argv[48];
  int argc = 0;
  for (; args[argc] != NULL; argc++)
    argv[argc] = (char *)args[argc];
  ld_client_opts_clear(&f->o);
  f->err[0] = '\0';
  return ld_client_parse(cmd, argc, argv, &f->o, f->positional, &f->n_positional, f->err,
                         sizeof f->err);
}

/* ---- flags ---------------------------------------------------------------------------------- */

static void send_takes_lightpush_and_its_text(void **state) {
  fixture_t *f = *state;
  const char *args[] = {"--peer", PEER,   "--content-topic", "/a/1/b/proto", "--lightpush",
                        "--meta", "0a0b", "--ephemeral",     "hello there",  NULL};
  assert_int_equal(parse_args(f, LD_CLIENT_SEND, args), 0);
  assert_true(f->o.light);
  assert_true(f->o.ephemeral);
  assert_string_equal(f->o.meta_hex, "0a0b");
  assert_int_equal(f->o.timeout_s, LD_CLIENT_SEND_TIMEOUT_S);
  assert_int_equal(f->o.cluster_id, -1);
  assert_int_equal(f->n_positional, 1);
  assert_string_equal(f->positional[0], "hello there");

  const char *relay[] = {"--peer", PEER, "--content-topic", "/a/1/b/proto", "x", NULL};
  assert_int_equal(parse_args(f, LD_CLIENT_SEND, relay), 0);
  assert_false(f->o.light);
}

static void subscribe_takes_filter_ping_interval_and_count(void **state) {
  fixture_t *f = *state;
  const char *args[] = {"--peer",
                        PEER,
                        "--content-topic",
                        "/a/1/b/proto",
                        "--filter",
                        "--ping-interval",
                        "5",
                        "--count",
                        "3",
                        NULL};
  assert_int_equal(parse_args(f, LD_CLIENT_SUBSCRIBE, args), 0);
  assert_true(f->o.light);
  assert_int_equal(f->o.ping_interval_s, 5);
  assert_int_equal(f->o.count, 3);
  assert_int_equal(f->o.timeout_s, 0);

  const char *plain[] = {"--peer", PEER, "--content-topic", "/a/1/b/proto", NULL};
  assert_int_equal(parse_args(f, LD_CLIENT_SUBSCRIBE, plain), 0);
  assert_false(f->o.light);
  assert_int_equal(f->o.ping_interval_s, LD_CLIENT_FILTER_PING_S);
}

static void query_flags_repeat_and_keep_their_order(void **state) {
  fixture_t *f = *state;
  const char *args[] = {"--peer",
                        PEER,
                        "--content-topic",
                        "/a/1/b/proto",
                        "--content-topic",
                        "/a/1/c/proto",
                        "--hash",
                        H1,
                        "--hash",
                        H2,
                        "--start-time",
                        "100",
                        "--end-time",
                        "200",
                        "--page-size",
                        "7",
                        "--backward",
                        "--no-data",
                        "--all",
                        "--cluster-id",
                        "3",
                        NULL};
  assert_int_equal(parse_args(f, LD_CLIENT_QUERY, args), 0);
  assert_int_equal(f->o.content_topics.count, 2);
  assert_string_equal(f->o.content_topics.items[1], "/a/1/c/proto");
  assert_int_equal(f->o.hashes.count, 2);
  assert_string_equal(f->o.hashes.items[0], H1);
  assert_int_equal(f->o.start_time, 100);
  assert_int_equal(f->o.end_time, 200);
  assert_int_equal(f->o.page_size, 7);
  assert_true(f->o.backward && f->o.no_data && f->o.all);
  assert_int_equal(f->o.cluster_id, 3);
  assert_int_equal(f->o.timeout_s, 0);
}

static void flags_of_other_commands_are_unknown(void **state) {
  fixture_t *f = *state;
  const char *send_filter[] = {"--peer", PEER, "--content-topic", "/a/1/b/proto", "--filter", NULL};
  assert_int_equal(parse_args(f, LD_CLIENT_SEND, send_filter), LD_ERR_INVALID_ARG);
  assert_string_equal(f->err, "send: unknown flag --filter; --help lists the flags");
  const char *query_count[] = {"--peer", PEER, "--count", "1", NULL};
  assert_int_equal(parse_args(f, LD_CLIENT_QUERY, query_count), LD_ERR_INVALID_ARG);
  assert_string_equal(f->err, "query: unknown flag --count; --help lists the flags");
  const char *sub_hash[] = {"--peer", PEER, "--content-topic", "/a/1/b/proto", "--hash", H1, NULL};
  assert_int_equal(parse_args(f, LD_CLIENT_SUBSCRIBE, sub_hash), LD_ERR_INVALID_ARG);
  assert_string_equal(f->err, "subscribe: unknown flag --hash; --help lists the flags");
  const char *query_shards[] = {"--peer", PEER, "--num-shards-in-network", "2", NULL};
  assert_int_equal(parse_args(f, LD_CLIENT_QUERY, query_shards), LD_ERR_INVALID_ARG);
}

static void bad_values_and_missing_flags_are_named(void **state) {
  fixture_t *f = *state;
  const char *page[] = {"--peer", PEER, "--page-size", "101", NULL};
  assert_int_equal(parse_args(f, LD_CLIENT_QUERY, page), LD_ERR_INVALID_ARG);
  assert_non_null(strstr(f->err, "query: --page-size: value 101 out of range"));
  const char *time[] = {"--peer", PEER, "--start-time", "-1", NULL};
  assert_int_equal(parse_args(f, LD_CLIENT_QUERY, time), LD_ERR_INVALID_ARG);
  assert_non_null(strstr(f->err, "--start-time"));
  const char *ping[] = {"--peer", PEER, "--content-topic", "/a/1/b/proto", "--ping-interval", NULL};
  assert_int_equal(parse_args(f, LD_CLIENT_SUBSCRIBE, ping), LD_ERR_INVALID_ARG);
  assert_string_equal(f->err, "subscribe: --ping-interval: missing value; write "
                              "--ping-interval=<value> (--help describes it)");
  const char *no_peer[] = {"--all", NULL};
  assert_int_equal(parse_args(f, LD_CLIENT_QUERY, no_peer), LD_ERR_INVALID_ARG);
  assert_string_equal(f->err, "query: --peer is required; give --peer <multiaddr of the node, as "
                              "it logs it> (`logosdelivery query --help`)");
  const char *no_topic[] = {"--peer", PEER, "x", NULL};
  assert_int_equal(parse_args(f, LD_CLIENT_SEND, no_topic), LD_ERR_INVALID_ARG);
  assert_string_equal(f->err, "send: --peer and --content-topic are required; give --peer "
                              "<multiaddr of the node, as it logs it> and --content-topic "
                              "/<app>/<version>/<topic>/<encoding> (`logosdelivery send --help`)");
}

static void usage_lines_name_the_flags(void **state) {
  (void)state;
  assert_non_null(strstr(ld_client_usage(LD_CLIENT_SEND), "[--lightpush]"));
  assert_non_null(strstr(ld_client_usage(LD_CLIENT_SUBSCRIBE), "[--filter"));
  const char *q = ld_client_usage(LD_CLIENT_QUERY);
  assert_non_null(strstr(q, "usage: logosdelivery query --peer <multiaddr>"));
  const char *flags[] = {
      "--pubsub-topic", "--content-topic", "--start-time", "--end-time", "--hash",
      "--cursor",       "--page-size",     "--backward",   "--no-data",  "--all"};
  for (size_t i = 0; i < sizeof flags / sizeof flags[0]; i++)
    assert_non_null(strstr(q, flags[i]));
  assert_string_equal(ld_client_command_name(LD_CLIENT_QUERY), "query");
}

/* ---- the store query ------------------------------------------------------------------------ */

static void query_defaults_ask_for_data_forward(void **state) {
  fixture_t *f = *state;
  const char *args[] = {"--peer", PEER, NULL};
  assert_int_equal(parse_args(f, LD_CLIENT_QUERY, args), 0);
  assert_int_equal(ld_client_query_build(&f->o, &f->q, f->err, sizeof f->err), 0);
  const ld_store_query_t *q = &f->q.q;
  assert_true(q->include_data);
  assert_true(q->forward);
  assert_null(q->pubsub_topic);
  assert_int_equal(q->n_content_topics, 0);
  assert_int_equal(q->n_hashes, 0);
  assert_false(q->has_cursor || q->has_limit || q->has_time_start || q->has_time_end);
  assert_null(q->request_id);
}

static void query_carries_every_criterion(void **state) {
  fixture_t *f = *state;
  const char *args[] = {"--peer",
                        PEER,
                        "--pubsub-topic",
                        "/waku/2/rs/1/4",
                        "--content-topic",
                        "/a/1/b/proto",
                        "--content-topic",
                        "/a/1/c/proto",
                        "--hash",
                        H1,
                        "--hash",
                        H2,
                        "--cursor",
                        H2,
                        "--start-time",
                        "0",
                        "--end-time",
                        "9",
                        "--page-size",
                        "3",
                        "--backward",
                        "--no-data",
                        NULL};
  assert_int_equal(parse_args(f, LD_CLIENT_QUERY, args), 0);
  assert_int_equal(ld_client_query_build(&f->o, &f->q, f->err, sizeof f->err), 0);
  const ld_store_query_t *q = &f->q.q;
  assert_false(q->include_data);
  assert_false(q->forward);
  assert_string_equal(q->pubsub_topic, "/waku/2/rs/1/4");
  assert_int_equal(q->n_content_topics, 2);
  assert_string_equal(q->content_topics[0], "/a/1/b/proto");
  assert_string_equal(q->content_topics[1], "/a/1/c/proto");
  assert_int_equal(q->n_hashes, 2);
  for (size_t i = 0; i < LD_WAKU_HASH_LEN; i++) {
    assert_int_equal(q->hashes[0][i], 0x11);
    assert_int_equal(q->hashes[1][i], 0xab);
    assert_int_equal(q->cursor[i], 0xab);
  }
  assert_true(q->has_cursor);
  assert_true(q->has_time_start && q->has_time_end);
  assert_int_equal(q->time_start, 0);
  assert_int_equal(q->time_end, 9);
  assert_true(q->has_limit);
  assert_int_equal(q->limit, 3);
}

static void query_refuses_bad_hashes_cursors_and_ranges(void **state) {
  fixture_t *f = *state;
  struct {
    const char *args[8];
    const char *err;
  } cases[] = {
      {{"--peer", PEER, "--hash", "0x12", NULL},
       "--hash '0x12': expected 64 hex digits (0x optional)"},
      {{"--peer", PEER, "--hash", H1 "00", NULL}, "--hash '" H1 "00': expected 64 hex digits"},
      {{"--peer", PEER, "--cursor", "zz", NULL}, "--cursor 'zz': expected 64 hex digits"},
      {{"--peer", PEER, "--cursor",
        "0x0000000000000000000000000000000000000000000000000000000000000000", NULL},
       "--cursor: an all-zero cursor is invalid"},
      {{"--peer", PEER, "--start-time", "10", "--end-time", "9", NULL},
       "--start-time 10 is after --end-time 9"},
      {{"--peer", PEER, "--content-topic", "", NULL}, "--content-topic: empty topic"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    assert_int_equal(parse_args(f, LD_CLIENT_QUERY, cases[i].args), 0);
    assert_int_equal(ld_client_query_build(&f->o, &f->q, f->err, sizeof f->err),
                     LD_ERR_INVALID_ARG);
    if (strncmp(f->err, cases[i].err, strlen(cases[i].err)) != 0)
      fail_msg("case %zu: '%s'", i, f->err);
  }
}

static void query_refuses_too_many_hashes(void **state) {
  fixture_t *f = *state;
  const char *args[] = {"--peer", PEER, NULL};
  assert_int_equal(parse_args(f, LD_CLIENT_QUERY, args), 0);
  for (int i = 0; i <= LD_STORE_MAX_HASHES; i++) {
    char **items = realloc(f->o.hashes.items, (f->o.hashes.count + 1) * sizeof *items);
    assert_non_null(items);
    f->o.hashes.items = items;
    f->o.hashes.items[f->o.hashes.count++] = strdup(H1);
  }
  assert_int_equal(ld_client_query_build(&f->o, &f->q, f->err, sizeof f->err), LD_ERR_INVALID_ARG);
  assert_string_equal(f->err, "--hash: at most 100 values; split the hashes over several queries");
  free(f->o.hashes.items[--f->o.hashes.count]);
  assert_int_equal(ld_client_query_build(&f->o, &f->q, f->err, sizeof f->err), 0);
  assert_int_equal(f->q.q.n_hashes, LD_STORE_MAX_HASHES);
}

/* ---- output --------------------------------------------------------------------------------- */

static char *line_of(const char *topic, const ld_waku_message_t *msg, uint8_t fill) {
  uint8_t hash[LD_WAKU_HASH_LEN];
  memset(hash, fill, sizeof hash);
  json_t *o = ld_client_message_json(topic, msg, hash);
  assert_non_null(o);
  char *s = json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER);
  json_decref(o);
  return s;
}

static void message_lines_have_a_fixed_shape(void **state) {
  (void)state;
  ld_waku_message_t m;
  ld_waku_message_init(&m);
  m.payload = (const uint8_t *)"hi\tthere";
  m.payload_len = 8;
  m.content_topic = "/a/1/b/proto";
  m.content_topic_len = 12;
  m.timestamp = 1700000000123456789;
  char *s = line_of("/waku/2/rs/0/0", &m, 0x22);
  assert_string_equal(
      s, "{\"pubsubTopic\":\"/waku/2/rs/0/0\",\"contentTopic\":\"/a/1/b/proto\","
         "\"payload\":\"aGkJdGhlcmU=\",\"text\":\"hi\\tthere\","
         "\"timestamp\":1700000000123456789,\"ephemeral\":false,"
         "\"hash\":\"0x2222222222222222222222222222222222222222222222222222222222222222\"}");
  free(s);

  static const uint8_t binary[] = {0x00, 0xff, 0x10};
  static const uint8_t meta[] = {0x0a, 0x0b};
  m.payload = binary;
  m.payload_len = sizeof binary;
  m.meta = meta;
  m.meta_len = sizeof meta;
  m.ephemeral = true;
  s = line_of("/waku/2/rs/0/0", &m, 0x22);
  assert_non_null(strstr(s, "\"payload\":\"AP8Q\",\"timestamp\""));
  assert_null(strstr(s, "\"text\""));
  assert_non_null(strstr(s, "\"ephemeral\":true,\"meta\":\"Cgs=\",\"hash\""));
  free(s);

  static const uint8_t invalid_utf8[] = {'a', 0xc3, 'b'};
  m.payload = invalid_utf8;
  m.payload_len = sizeof invalid_utf8;
  s = line_of("/waku/2/rs/0/0", &m, 0x22);
  assert_null(strstr(s, "\"text\""));
  free(s);
}

/* ---- exit codes ----------------------------------------------------------------------------- */

static void service_outcomes_have_distinct_exit_codes(void **state) {
  (void)state;
  assert_int_equal(ld_client_service_exit(0), LD_EXIT_SERVICE);
  assert_int_equal(LD_EXIT_SERVICE, 7);
  assert_int_equal(ld_client_service_exit(LD_ERR_PROTOCOL_UNSUPPORTED), LD_CANARY_EXIT_UNSUPPORTED);
  assert_int_equal(ld_client_service_exit(LD_ERR_CLOSED), LD_CANARY_EXIT_UNREACHABLE);
  assert_int_equal(ld_client_service_exit(LD_ERR_TIMEOUT), LD_CANARY_EXIT_TIMEOUT);
  assert_int_equal(ld_client_service_exit(LD_ERR_BAD_PROTOBUF), LD_CANARY_EXIT_OTHER);
  assert_int_equal(ld_client_exit_code(LD_ERR_REFUSED), LD_CANARY_EXIT_UNREACHABLE);
  assert_int_equal(ld_client_exit_code(LD_ERR_PEER_ID_MISMATCH), LD_CANARY_EXIT_HANDSHAKE);
}

/* ---- topics --------------------------------------------------------------------------------- */

/* What a peer's metadata says: its cluster and the shards from..to (none when from > to). */
static ld_metadata_info_t peer_info(uint32_t cluster, uint32_t from, uint32_t to) {
  ld_metadata_info_t info;
  ld_metadata_info_init(&info);
  info.has_cluster = true;
  info.cluster_id = cluster;
  for (uint32_t s = from; s <= to; s++)
    assert_int_equal(ld_metadata_info_add_shard(&info, s), 0);
  return info;
}

/* The autosharding topic of /a/1/b/proto over `n` shards of `cluster`. */
static const char *autoshard_topic(uint32_t n, uint16_t cluster) {
  static char topic[64];
  ld_relay_shard_t rs;
  assert_int_equal(ld_autoshard("/a/1/b/proto", 12, n, cluster, &rs, NULL), 0);
  ld_pubsub_topic_format(rs, topic, sizeof topic);
  return topic;
}

static void topics_come_from_the_flags_first(void **state) {
  fixture_t *f = *state;
  ld_client_topic_t t;
  ld_metadata_info_t eight = peer_info(0, 0, 7);
  const char *flags[] = {"--peer",
                         PEER,
                         "--content-topic",
                         "/a/1/b/proto",
                         "--cluster-id",
                         "4",
                         "--num-shards-in-network",
                         "16",
                         NULL};
  assert_int_equal(parse_args(f, LD_CLIENT_SUBSCRIBE, flags), 0);
  assert_true(ld_client_topic_from_flags(&f->o));
  assert_int_equal(ld_client_topic(&f->o, &eight, &t, f->err, sizeof f->err), 0);
  assert_string_equal(t.topic, autoshard_topic(16, 4)); /* the flags win over the peer */
  assert_int_equal(t.cluster, 4);
  assert_int_equal(t.num_shards, 16);
  assert_string_equal(t.source, "--num-shards-in-network");

  const char *fixed[] = {
      "--peer", PEER, "--content-topic", "/a/1/b/proto", "--pubsub-topic", "/waku/2/rs/4/9", NULL};
  assert_int_equal(parse_args(f, LD_CLIENT_SEND, fixed), 0);
  assert_true(ld_client_topic_from_flags(&f->o));
  assert_true(ld_client_cluster_from_flags(&f->o));
  assert_int_equal(ld_client_topic(&f->o, &eight, &t, f->err, sizeof f->err), 0);
  assert_string_equal(t.topic, "/waku/2/rs/4/9");
  assert_int_equal(t.shard, 9);
  assert_int_equal(t.num_shards, 0);
  assert_string_equal(t.source, "--pubsub-topic");

  const char *other[] = {"--peer",
                         PEER,
                         "--content-topic",
                         "/a/1/b/proto",
                         "--pubsub-topic",
                         "/waku/2/rs/4/9",
                         "--cluster-id",
                         "5",
                         NULL};
  assert_int_equal(parse_args(f, LD_CLIENT_SUBSCRIBE, other), 0);
  assert_int_equal(ld_client_topic(&f->o, NULL, &t, f->err, sizeof f->err), LD_ERR_INVALID_ARG);
  assert_string_equal(f->err, "--pubsub-topic '/waku/2/rs/4/9' is not in --cluster-id 5; give one "
                              "of them, or the same cluster in both");

  const char *bad[] = {"--peer", PEER, "--content-topic", "/a/b", NULL};
  assert_int_equal(parse_args(f, LD_CLIENT_SUBSCRIBE, bad), 0);
  assert_int_equal(ld_client_topic(&f->o, &eight, &t, f->err, sizeof f->err), LD_ERR_INVALID_ARG);
  assert_memory_equal(f->err, "--content-topic '/a/b'", 21);
}

static void topics_follow_the_peers_cluster_and_shards(void **state) {
  fixture_t *f = *state;
  ld_client_topic_t t;
  const char *plain[] = {"--peer", PEER, "--content-topic", "/a/1/b/proto", NULL};
  assert_int_equal(parse_args(f, LD_CLIENT_SUBSCRIBE, plain), 0);
  assert_false(ld_client_topic_from_flags(&f->o));
  assert_false(ld_client_cluster_from_flags(&f->o));

  /* shards 0..7: autosharding over 8, in the peer's cluster */
  ld_metadata_info_t peer = peer_info(7, 0, 7);
  assert_int_equal(ld_client_topic(&f->o, &peer, &t, f->err, sizeof f->err), 0);
  assert_string_equal(t.topic, autoshard_topic(8, 7));
  assert_int_equal(t.cluster, 7);
  assert_int_equal(t.num_shards, 8);
  assert_string_equal(t.source, "the peer serves shards 0..7");

  /* shards 0..2 of cluster 0 */
  peer = peer_info(0, 0, 2);
  assert_int_equal(ld_client_topic(&f->o, &peer, &t, f->err, sizeof f->err), 0);
  assert_string_equal(t.topic, autoshard_topic(3, 0));
  assert_int_equal(t.num_shards, 3);

  /* a subset of a preset's shards: the preset's count (twn: cluster 1, 8 shards) */
  peer = peer_info(1, 2, 2);
  assert_int_equal(ld_client_topic(&f->o, &peer, &t, f->err, sizeof f->err), 0);
  assert_string_equal(t.topic, autoshard_topic(8, 1));
  assert_string_equal(t.source, "the network preset twn of cluster 1");

  /* no shards, or no answer at all: one shard (nwaku's default) */
  peer = peer_info(5, 1, 0);
  assert_int_equal(ld_client_topic(&f->o, &peer, &t, f->err, sizeof f->err), 0);
  assert_string_equal(t.topic, "/waku/2/rs/5/0");
  assert_int_equal(t.num_shards, 1);
  assert_int_equal(ld_client_topic(&f->o, NULL, &t, f->err, sizeof f->err), 0);
  assert_string_equal(t.topic, "/waku/2/rs/0/0");
  assert_string_equal(t.source, "the default: the peer named no shards");

  /* shards that tell no count: named, with the flags to give */
  peer = peer_info(0, 3, 5);
  assert_int_equal(ld_client_topic(&f->o, &peer, &t, f->err, sizeof f->err), LD_ERR_INVALID_ARG);
  assert_string_equal(f->err, "the peer serves shards 3, 4, 5 of cluster 0, which tell no "
                              "autosharding shard count: give --num-shards-in-network or "
                              "--pubsub-topic");

  /* --cluster-id alone: the peer's shard count in that cluster */
  const char *cluster[] = {"--peer", PEER, "--content-topic", "/a/1/b/proto", "--cluster-id",
                           "4",      NULL};
  assert_int_equal(parse_args(f, LD_CLIENT_SUBSCRIBE, cluster), 0);
  assert_false(ld_client_topic_from_flags(&f->o));
  assert_true(ld_client_cluster_from_flags(&f->o));
  peer = peer_info(4, 0, 7);
  assert_int_equal(ld_client_topic(&f->o, &peer, &t, f->err, sizeof f->err), 0);
  assert_string_equal(t.topic, autoshard_topic(8, 4));
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(send_takes_lightpush_and_its_text, setup, teardown),
      cmocka_unit_test_setup_teardown(subscribe_takes_filter_ping_interval_and_count, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(query_flags_repeat_and_keep_their_order, setup, teardown),
      cmocka_unit_test_setup_teardown(flags_of_other_commands_are_unknown, setup, teardown),
      cmocka_unit_test_setup_teardown(bad_values_and_missing_flags_are_named, setup, teardown),
      cmocka_unit_test(usage_lines_name_the_flags),
      cmocka_unit_test_setup_teardown(query_defaults_ask_for_data_forward, setup, teardown),
      cmocka_unit_test_setup_teardown(query_carries_every_criterion, setup, teardown),
      cmocka_unit_test_setup_teardown(query_refuses_bad_hashes_cursors_and_ranges, setup, teardown),
      cmocka_unit_test_setup_teardown(query_refuses_too_many_hashes, setup, teardown),
      cmocka_unit_test(message_lines_have_a_fixed_shape),
      cmocka_unit_test(service_outcomes_have_distinct_exit_codes),
      cmocka_unit_test_setup_teardown(topics_come_from_the_flags_first, setup, teardown),
      cmocka_unit_test_setup_teardown(topics_follow_the_peers_cluster_and_shards, setup, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
