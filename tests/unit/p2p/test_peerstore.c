#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "base/error.h"
#include "base/hex.h"
#include "p2p/peerstore.h"

#define ED25519_PUB "080112201ed1e8fae2c4a144b8be8fd4b47bf3d3b34b871c3cacf6010f0e42d474fce27e"
#define SECP_PUB "08021221037777e994e452c21604f91de093ce415f5432f701dd8cd1a7a6fea0e630bfca99"

/* A sha2-256 peer ID whose digest is 32 copies of `tag`. */
static ld_peerid_t fake_id(uint8_t tag) {
  uint8_t mh[34] = {0x12, 0x20};
  memset(mh + 2, tag, 32);
  ld_peerid_t id;
  assert_int_equal(ld_peerid_from_bytes(&id, mh, sizeof mh), 0);
  return id;
}

static void load_key(const char *hex, ld_pubkey_t *pub, ld_peerid_t *id) {
  uint8_t raw[64];
  size_t n = 0;
  assert_int_equal(ld_hex_decode(hex, strlen(hex), raw, sizeof raw, &n), 0);
  assert_int_equal(ld_pubkey_decode(pub, raw, n), 0);
  assert_int_equal(ld_peerid_from_pubkey(id, pub), 0);
}

static ld_multiaddr_t addr(const char *text) {
  ld_multiaddr_t ma;
  assert_int_equal(ld_multiaddr_parse(&ma, text), 0);
  return ma;
}

static ld_multiaddr_t addr_with_peer(const char *base, const ld_peerid_t *id) {
  char idtext[LD_PEERID_TEXT_MAX], text[LD_MULTIADDR_TEXT_MAX];
  assert_true(ld_peerid_to_text(id, idtext, sizeof idtext) > 0);
  snprintf(text, sizeof text, "%s/p2p/%s", base, idtext);
  return addr(text);
}

static void stores_identify_fields(void **state) {
  (void)state;
  ld_peerstore_t *ps = ld_peerstore_new(NULL);
  assert_non_null(ps);
  ld_pubkey_t pub, other;
  ld_peerid_t id, other_id;
  load_key(ED25519_PUB, &pub, &id);
  load_key(SECP_PUB, &other, &other_id);
  assert_null(ld_peerstore_get(ps, &id));

  const char *protos[] = {"/ipfs/id/1.0.0", "/vac/waku/relay/2.0.0", "/ipfs/id/1.0.0", ""};
  assert_int_equal(ld_peerstore_set_protocols(ps, &id, protos, 4, 100), 2);
  assert_int_equal(ld_peerstore_set_versions(ps, &id, "js-waku", "ipfs/0.1.0", 110), 0);
  assert_int_equal(ld_peerstore_set_versions(ps, &id, NULL, "ipfs/0.2.0", 120), 0);
  assert_int_equal(ld_peerstore_set_public_key(ps, &id, &other, 130), LD_ERR_PEER_ID_MISMATCH);
  assert_int_equal(ld_peerstore_set_public_key(ps, &id, &pub, 140), 0);

  ld_multiaddr_t addrs[] = {
      addr_with_peer("/ip4/10.0.0.1/tcp/60000", &id),       /* own suffix: stripped */
      addr("/ip4/10.0.0.1/tcp/60000"),                      /* duplicate after stripping */
      addr_with_peer("/ip4/10.0.0.2/tcp/60000", &other_id), /* names another peer */
      addr("/dns4/node.example/tcp/443/wss"),
  };
  assert_int_equal(ld_peerstore_add_addrs(ps, &id, addrs, 4, 150), 2);

  const ld_peerstore_peer_t *p = ld_peerstore_get(ps, &id);
  assert_non_null(p);
  assert_true(ld_peerid_equal(&p->id, &id));
  assert_int_equal(p->n_protocols, 2);
  assert_string_equal(p->protocols[1], "/vac/waku/relay/2.0.0");
  assert_string_equal(p->agent_version, "js-waku");
  assert_string_equal(p->protocol_version, "ipfs/0.2.0");
  assert_non_null(p->public_key);
  assert_true(ld_pubkey_equal(p->public_key, &pub));
  assert_int_equal(p->n_addrs, 2);
  ld_multiaddr_t plain = addr("/ip4/10.0.0.1/tcp/60000");
  assert_true(ld_multiaddr_equal(&p->addrs[0], &plain));
  assert_int_equal(p->last_seen_ms, 150);
  assert_true(ld_peerstore_supports(ps, &id, "/vac/waku/relay/2.0.0"));
  assert_false(ld_peerstore_supports(ps, &id, "/vac/waku/store/2.0.0"));
  assert_false(ld_peerstore_supports(ps, &other_id, "/ipfs/id/1.0.0"));

  /* set_addrs replaces. */
  ld_multiaddr_t fresh = addr("/ip6/::1/tcp/1");
  assert_int_equal(ld_peerstore_set_addrs(ps, &id, &fresh, 1, 160), 1);
  p = ld_peerstore_get(ps, &id);
  assert_int_equal(p->n_addrs, 1);
  assert_true(ld_multiaddr_equal(&p->addrs[0], &fresh));

  assert_int_equal(ld_peerstore_count(ps), 1);
  assert_int_equal(ld_peerstore_remove(ps, &id), 0);
  assert_int_equal(ld_peerstore_remove(ps, &id), LD_ERR_NOT_FOUND);
  assert_int_equal(ld_peerstore_count(ps), 0);
  ld_peerstore_free(ps);
}

static void caps_addresses_and_protocols(void **state) {
  (void)state;
  ld_peerstore_config_t cfg = {.max_addrs = 3, .max_protocols = 2};
  ld_peerstore_t *ps = ld_peerstore_new(&cfg);
  ld_peerid_t id = fake_id(1);
  for (int i = 0; i < 5; i++) {
    char text[64];
    snprintf(text, sizeof text, "/ip4/10.0.0.%d/tcp/1", i);
    ld_multiaddr_t ma = addr(text);
    assert_int_equal(ld_peerstore_add_addrs(ps, &id, &ma, 1, (uint64_t)i), 1);
  }
  const ld_peerstore_peer_t *p = ld_peerstore_get(ps, &id);
  assert_int_equal(p->n_addrs, 3);
  ld_multiaddr_t oldest_kept = addr("/ip4/10.0.0.2/tcp/1");
  ld_multiaddr_t newest = addr("/ip4/10.0.0.4/tcp/1");
  assert_true(ld_multiaddr_equal(&p->addrs[0], &oldest_kept));
  assert_true(ld_multiaddr_equal(&p->addrs[2], &newest));

  const char *protos[] = {"/a", "/b", "/c"};
  assert_int_equal(ld_peerstore_set_protocols(ps, &id, protos, 3, 10), 2);
  assert_false(ld_peerstore_supports(ps, &id, "/c"));

  char longv[LD_PEERSTORE_MAX_STRING + 10];
  memset(longv, 'v', sizeof longv - 1);
  longv[sizeof longv - 1] = '\0';
  char longp[LD_PEERSTORE_MAX_STRING + 2];
  memset(longp, 'p', sizeof longp - 1);
  longp[0] = '/';
  longp[sizeof longp - 1] = '\0';
  const char *bad[] = {longp, "/ok"};
  assert_int_equal(ld_peerstore_set_protocols(ps, &id, bad, 2, 11), 1);
  assert_int_equal(ld_peerstore_set_versions(ps, &id, longv, NULL, 12), 0);
  p = ld_peerstore_get(ps, &id);
  assert_int_equal(strlen(p->agent_version), LD_PEERSTORE_MAX_STRING);
  assert_null(p->protocol_version);
  assert_string_equal(p->protocols[0], "/ok");
  ld_peerstore_free(ps);
}

static void evicts_least_recently_seen(void **state) {
  (void)state;
  ld_peerstore_config_t cfg = {.max_peers = 3};
  ld_peerstore_t *ps = ld_peerstore_new(&cfg);
  ld_peerid_t a = fake_id(1), b = fake_id(2), c = fake_id(3), d = fake_id(4);
  assert_int_equal(ld_peerstore_touch(ps, &a, 10), 0);
  assert_int_equal(ld_peerstore_touch(ps, &b, 20), 0);
  assert_int_equal(ld_peerstore_touch(ps, &c, 30), 0);
  assert_int_equal(ld_peerstore_touch(ps, &a, 40), 0); /* a is now the freshest */
  assert_int_equal(ld_peerstore_touch(ps, &d, 50), 0);
  assert_int_equal(ld_peerstore_count(ps), 3);
  assert_null(ld_peerstore_get(ps, &b));
  assert_non_null(ld_peerstore_get(ps, &a));
  assert_non_null(ld_peerstore_get(ps, &c));
  assert_non_null(ld_peerstore_get(ps, &d));
  ld_peerstore_free(ps);
}

static void lists_peers_by_recency_and_protocol(void **state) {
  (void)state;
  ld_peerstore_t *ps = ld_peerstore_new(NULL);
  const char *relay[] = {"/vac/waku/relay/2.0.0"};
  const char *store[] = {"/vac/waku/store-query/3.0.0"};
  for (uint8_t i = 1; i <= 6; i++) {
    ld_peerid_t id = fake_id(i);
    const char *const *list = (i % 2) ? relay : store;
    assert_int_equal(ld_peerstore_set_protocols(ps, &id, list, 1, 1000 + (uint64_t)(7 - i)), 1);
  }
  ld_peerid_t out[6];
  assert_int_equal(ld_peerstore_peers(ps, NULL, out, 6), 6);
  for (uint8_t i = 0; i < 6; i++) {
    ld_peerid_t expect = fake_id((uint8_t)(i + 1)); /* peer 1 was seen last */
    assert_true(ld_peerid_equal(&out[i], &expect));
  }
  assert_int_equal(ld_peerstore_peers(ps, relay[0], out, 2), 3);
  ld_peerid_t p1 = fake_id(1), p3 = fake_id(3);
  assert_true(ld_peerid_equal(&out[0], &p1));
  assert_true(ld_peerid_equal(&out[1], &p3));
  assert_int_equal(ld_peerstore_peers(ps, "/none", out, 6), 0);
  assert_int_equal(ld_peerstore_peers(ps, NULL, NULL, 0), 6);
  ld_peerstore_free(ps);
}

static void rejects_bad_arguments(void **state) {
  (void)state;
  ld_peerstore_t *ps = ld_peerstore_new(NULL);
  ld_peerid_t empty = {0};
  assert_int_equal(ld_peerstore_touch(ps, &empty, 1), LD_ERR_INVALID_ARG);
  assert_int_equal(ld_peerstore_touch(NULL, &empty, 1), LD_ERR_INVALID_ARG);
  ld_peerid_t id = fake_id(9);
  assert_int_equal(ld_peerstore_add_addrs(ps, &id, NULL, 1, 1), LD_ERR_INVALID_ARG);
  assert_int_equal(ld_peerstore_set_protocols(ps, &id, NULL, 1, 1), LD_ERR_INVALID_ARG);
  assert_int_equal(ld_peerstore_count(ps), 0);
  ld_peerstore_free(ps);
  ld_peerstore_free(NULL);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(stores_identify_fields),
      cmocka_unit_test(caps_addresses_and_protocols),
      cmocka_unit_test(evicts_least_recently_seen),
      cmocka_unit_test(lists_peers_by_recency_and_protocol),
      cmocka_unit_test(rejects_bad_arguments),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
