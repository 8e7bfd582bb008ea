/* Autosharding and network presets (digest §2.3, §2.4). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "base/error.h"
#include "crypto/crypto.h"
#include "waku/core/message.h"
#include "waku/core/sharding.h"
#include "waku_vectors.h"

typedef struct {
  const char *content_topic;
  uint32_t num_shards;
  uint16_t shard;
} shard_vector_t;

/* Digest §2.3, cluster 1. */
static const shard_vector_t shard_vectors[] = {
    {"/toychat/2/huilong/proto", 8, 3},       {"/0/toychat/2/huilong/proto", 8, 3},
    {"/toychat2/2/huilong/proto", 8, 6},      {"/0/toychat2/2/huilong/proto", 8, 6},
    {"/toychat/2/huilong/proto2", 8, 3},      {"/0/toychat/2/huilong/proto2", 8, 3},
    {"/0/toychat/4/huilong/proto2", 8, 7},    {"/myapp/1/latest/proto", 8, 0},
    {"/waku/2/content/test.js", 8, 1},        {"/statusim/1/community/cbor", 8, 4},
    {"/0/statusim/1/community/cbor", 8, 4},   {"/app/22/sometopic/someencoding", 8, 2},
    {"/app/27/sometopic/someencoding", 8, 5}, {"/app/20/sometopic/someencoding", 8, 7},
    {"/app/29/sometopic/someencoding", 8, 6}, {"/app/20/sometopic/someencoding", 16, 15},
    {"/app/20/sometopic/someencoding", 2, 1}, {"/app/20/sometopic/someencoding", 1, 0},
};

static void shards_match_every_digest_vector(void **state) {
  (void)state;
  for (size_t i = 0; i < sizeof shard_vectors / sizeof shard_vectors[0]; i++) {
    const shard_vector_t *v = &shard_vectors[i];
    ld_relay_shard_t s = {0, 0};
    ld_topic_error_t why = LD_TOPIC_ERR_STRUCTURE;
    int rc = ld_autoshard(v->content_topic, strlen(v->content_topic), v->num_shards, 1, &s, &why);
    if (rc != 0 || s.shard_id != v->shard)
      fail_msg("%s over %u shards: %s, shard %u (want %u)", v->content_topic, v->num_shards,
               ld_errname(rc), s.shard_id, v->shard);
    assert_int_equal(s.cluster_id, 1);
    assert_int_equal(why, LD_TOPIC_OK);
  }
}

static void spec_example_hashes_application_and_version_only(void **state) {
  (void)state;
  uint8_t h[32], want[32];
  ld_sha256_2("myapp", 5, "1", 1, h);
  vec_hex("8e541178adbd8126068c47be6a221d77d64837221893a8e4e53139fb802d4928", want, 32);
  assert_memory_equal(h, want, 32);
  assert_int_equal(ld_autoshard_index("myapp", 5, "1", 1, 8), 0);
  /* name and encoding do not route */
  ld_relay_shard_t a, b;
  assert_int_equal(ld_autoshard("/myapp/1/x/y", 12, 8, 1, &a, NULL), 0);
  assert_int_equal(ld_autoshard("/myapp/1/other-name/cbor", 24, 8, 1, &b, NULL), 0);
  assert_int_equal(a.shard_id, b.shard_id);
  assert_int_equal(ld_autoshard_index("myapp", 5, "1", 1, 0), 0);
}

static void uses_the_last_64_bits_not_the_whole_hash(void **state) {
  (void)state;
  /* /toychat/2/… over 3 shards: last-64-bit rule 1, whole-hash rule 0 */
  uint8_t h[32];
  ld_sha256_2("toychat", 7, "2", 1, h);
  unsigned whole_mod3 = 0; /* 256 ≡ 1 (mod 3): the number mod 3 is its byte sum mod 3 */
  for (int i = 0; i < 32; i++)
    whole_mod3 += h[i];
  assert_int_equal(whole_mod3 % 3, 0);
  assert_int_equal(ld_autoshard_index("toychat", 7, "2", 1, 3), 1);
  ld_relay_shard_t s;
  assert_int_equal(ld_autoshard("/toychat/2/huilong/proto", 24, 3, 1, &s, NULL), 0);
  assert_int_equal(s.shard_id, 1);
}

static void formats_the_autoshard_pubsub_topic(void **state) {
  (void)state;
  /* nwaku: parseSharding(none, "/toychat/2/huilong/proto"), cluster 1, 8 shards */
  char out[LD_WAKU_PUBSUB_TOPIC_MAX_LEN + 1];
  const char *ct = "/toychat/2/huilong/proto";
  assert_int_equal(ld_autoshard_pubsub_topic(ct, strlen(ct), 8, 1, out, sizeof out, NULL), 14);
  assert_string_equal(out, "/waku/2/rs/1/3");
  assert_int_equal(ld_autoshard_pubsub_topic(ct, strlen(ct), 8, 1, out, 5, NULL), LD_ERR_LIMIT);
  ct = "/statusim/1/community/cbor";
  assert_int_equal(ld_autoshard_pubsub_topic(ct, strlen(ct), 1, 16, out, sizeof out, NULL), 15);
  assert_string_equal(out, "/waku/2/rs/16/0");
}

static void refuses_later_generations_and_bad_topics(void **state) {
  (void)state;
  ld_relay_shard_t s = {5, 5};
  ld_topic_error_t why = LD_TOPIC_OK;
  const char *ct = "/1/toychat/2/huilong/proto";
  assert_int_equal(ld_autoshard(ct, strlen(ct), 8, 1, &s, &why), LD_ERR_UNSUPPORTED);
  assert_int_equal(why, LD_TOPIC_ERR_GENERATION_UNSUPPORTED);
  assert_string_equal(ld_topic_strerror(why), "Generation > 0 are not supported yet");
  assert_int_equal(s.shard_id, 5);
  why = LD_TOPIC_OK;
  assert_int_equal(ld_autoshard("invalid", 7, 8, 1, &s, &why), LD_ERR_BAD_CONTENT_TOPIC);
  assert_int_equal(why, LD_TOPIC_ERR_NO_LEADING_SLASH);
  assert_non_null(strstr(ld_topic_strerror(why), "must start with slash"));
  char out[32];
  assert_int_equal(ld_autoshard_pubsub_topic("/a/b/c", 6, 8, 1, out, sizeof out, &why),
                   LD_ERR_BAD_CONTENT_TOPIC);
  assert_int_equal(why, LD_TOPIC_ERR_STRUCTURE);
  /* shard counts outside 1..1024 */
  ct = "/app/20/sometopic/someencoding";
  assert_int_equal(ld_autoshard(ct, strlen(ct), 0, 1, &s, NULL), LD_ERR_INVALID_ARG);
  assert_int_equal(ld_autoshard(ct, strlen(ct), 1025, 1, &s, NULL), LD_ERR_INVALID_ARG);
  assert_int_equal(ld_autoshard(ct, strlen(ct), 1024, 1, &s, NULL), 0);
  assert_true(s.shard_id < 1024);
  assert_int_equal(ld_autoshard(ct, strlen(ct), 8, 1, NULL, NULL), LD_ERR_INVALID_ARG);
  assert_int_equal(ld_autoshard_parsed(NULL, 8, 1, &s, NULL), LD_ERR_INVALID_ARG);
}

static void validates_configured_shards(void **state) {
  (void)state;
  const uint16_t ok[] = {0, 3, 7};
  const uint16_t bad[] = {0, 8, 2};
  size_t at = 99;
  assert_int_equal(ld_waku_validate_shards(8, ok, 3, &at), 0);
  assert_int_equal(at, 99);
  assert_int_equal(ld_waku_validate_shards(8, bad, 3, &at), LD_ERR_OVERFLOW);
  assert_int_equal(at, 1);
  assert_int_equal(ld_waku_validate_shards(8, bad, 3, NULL), LD_ERR_OVERFLOW);
  assert_int_equal(ld_waku_validate_shards(8, NULL, 0, NULL), 0);
  assert_int_equal(ld_waku_validate_shards(8, NULL, 1, NULL), LD_ERR_INVALID_ARG);
  assert_int_equal(ld_waku_validate_shards(0, ok, 3, NULL), LD_ERR_INVALID_ARG);
  assert_int_equal(ld_waku_validate_shards(1, ok, 1, NULL), 0);
}

static void network_presets_follow_logos_delivery(void **state) {
  (void)state;
  const ld_waku_network_preset_t *twn = ld_waku_network_preset_find("twn");
  assert_non_null(twn);
  assert_int_equal(twn->cluster_id, 1);
  assert_int_equal(twn->num_shards, 8);
  assert_int_equal(twn->max_msg_size, 153600);
  assert_true(twn->rln_relay);
  assert_true(twn->rln_dynamic);
  assert_int_equal(twn->rln_chain_id, 59141);
  assert_string_equal(twn->rln_contract, "0xB9cd878C90E49F797B4431fBF4fb333108CB90e6");
  assert_int_equal(twn->rln_epoch_sec, 600);
  assert_int_equal(twn->rln_user_message_limit, 100);
  assert_true(twn->discv5);

  const ld_waku_network_preset_t *dev = ld_waku_network_preset_find("logos.dev");
  assert_non_null(dev);
  assert_int_equal(dev->cluster_id, 3);
  assert_int_equal(dev->num_shards, 8);
  assert_false(dev->rln_relay);
  assert_null(dev->rln_contract);
  assert_true(dev->kademlia && dev->mix && dev->p2p_reliability);

  const ld_waku_network_preset_t *test = ld_waku_network_preset_find("logos.test");
  assert_non_null(test);
  assert_int_equal(test->cluster_id, 2);
  assert_int_equal(test->num_shards, 8);

  const ld_waku_network_preset_t *status = ld_waku_network_preset_find("status.prod");
  assert_non_null(status);
  assert_int_equal(status->cluster_id, 16);
  assert_int_equal(status->num_shards, 1);
  assert_int_equal(status->max_msg_size, 1024 * 1024);
  assert_false(status->rln_relay);
  assert_non_null(status->dns_discovery_url);
  assert_memory_equal(status->dns_discovery_url, "enrtree://", 10);

  assert_null(ld_waku_network_preset_find("TWN"));
  assert_null(ld_waku_network_preset_find(""));
  assert_null(ld_waku_network_preset_find(NULL));
  size_t n = 0;
  const ld_waku_network_preset_t *all = ld_waku_network_presets(&n);
  assert_int_equal(n, 4);
  for (size_t i = 0; i < n; i++) {
    assert_ptr_equal(ld_waku_network_preset_find(all[i].name), &all[i]);
    assert_true(all[i].num_shards >= 1 && all[i].num_shards <= LD_WAKU_MAX_SHARDS_PER_CLUSTER);
  }
  assert_ptr_equal(ld_waku_network_preset_for_cluster(1), twn);
  assert_null(ld_waku_network_preset_for_cluster(0));
  assert_null(ld_waku_network_preset_for_cluster(16));
  assert_int_equal(LD_WAKU_DEFAULT_CLUSTER_ID, 0);
  assert_int_equal(LD_WAKU_DEFAULT_NUM_SHARDS, 1);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(shards_match_every_digest_vector),
      cmocka_unit_test(spec_example_hashes_application_and_version_only),
      cmocka_unit_test(uses_the_last_64_bits_not_the_whole_hash),
      cmocka_unit_test(formats_the_autoshard_pubsub_topic),
      cmocka_unit_test(refuses_later_generations_and_bad_topics),
      cmocka_unit_test(validates_configured_shards),
      cmocka_unit_test(network_presets_follow_logos_delivery),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
