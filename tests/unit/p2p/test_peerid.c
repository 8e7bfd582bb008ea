#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "base/error.h"
#include "base/hex.h"
#include "p2p/peerid.h"

#define ED25519_PUB "080112201ed1e8fae2c4a144b8be8fd4b47bf3d3b34b871c3cacf6010f0e42d474fce27e"
#define SECP_PUB "08021221037777e994e452c21604f91de093ce415f5432f701dd8cd1a7a6fea0e630bfca99"
#define ECDSA_PUB                                                                                  \
  "0803125b3059301306072a8648ce3d020106082a8648ce3d03010703420004de3d300fa36ae0e8f5d530899d83abab" \
  "44abf3161f162a4bc901d8e6ecda020e8b6d5f8da30525e71d6851510c098e5c47c646a597fb4dcec034e9f77c409e" \
  "62"
/* RSA-2048 PublicKey and its peer ID as printed by go-ipfs `ipfs id`. */
#define RSA_PUB                                                                                    \
  "080012a60230820122300d06092a864886f70d01010105000382010f003082010a0282010100e3207c194068956d34" \
  "2c36022fd2bda927c19bcd98b309e206ff3a98335a80c1361c6df594d8b6b92210c79ab92017aca1ee0acd5ed93e6b" \
  "cab2a53347c33bb3ff7463cdcf999fd4c336e3986a95fc1ae136163fb56b254a160e2219f0aea4fbc6719685b92ead" \
  "7210d56863f0d03bb24d4aee9bb36564e5f893c81a28cc9f6089aa0c9d150bafd64693128eedd84ad7e18c7375fabf" \
  "ca6d1fbef0e89650690bcec500ebd0a472a7782c0233df21930b4c0a223e484d8da1cebfda9f61b5afb6878cbeaa8a" \
  "ab074f358614c75de522057e65a5ebd901dfe139e87f835266e0ca95b6e68da8f9a4279b7cbacd248e8d4539d00485" \
  "0affbc0f4c126a5df152076f0203010001"

typedef struct {
  const char *key;
  const char *multihash;
  const char *base58;
  const char *cid; /* NULL when the digest lists none */
} vector_t;

/* Digest §3.4 peer IDs (checked with js @libp2p/peer-id) plus the go-ipfs RSA identity. */
static const vector_t vectors[] = {
    {ED25519_PUB, "0024080112201ed1e8fae2c4a144b8be8fd4b47bf3d3b34b871c3cacf6010f0e42d474fce27e",
     "12D3KooWBtg3aaRMjxwedh83aGiUkwSxDwUZkzuJcfaqUmo7R3pq",
     "bafzaajaiaejcahwr5d5ofrfbis4l5d6uwr57hu5tjodrypfm6yaq6dsc2r2pzyt6"},
    {SECP_PUB, "002508021221037777e994e452c21604f91de093ce415f5432f701dd8cd1a7a6fea0e630bfca99",
     "16Uiu2HAmLhLvBoYaoZfaMUKuibM6ac163GwKY74c5kiSLg5KvLpY",
     "bafzaajiiaijcca3xo7uzjzcsyilaj6i54cj44qk7kqzpoao5rti2pjx6udtdbp6kte"},
    {ECDSA_PUB, "122068362c312e155f4f7290b67f5cd094a22a0a4fbf20efd8c287934419350d36f7",
     "QmVMT29id3TUASyfZZ6k9hmNyc2nYabCo4uMSpDw4zrgDk",
     "bafzbeidigywdclqvl5hxfefwp5onbffcfife7pza57mmfb4tiqmtkdjw64"},
    {RSA_PUB, NULL, "QmUk11oukR2Fp8TSX1RLQZAivyo96JvydSiKfrkJdJoEQb", NULL},
};

typedef struct {
  uint8_t b[400];
  size_t n;
} bytes_t;

static bytes_t hex(const char *text) {
  bytes_t out;
  assert_int_equal(ld_hex_decode(text, strlen(text), out.b, sizeof out.b, &out.n), 0);
  return out;
}

static void pubkey(ld_pubkey_t *pub, const char *text) {
  bytes_t b = hex(text);
  assert_int_equal(ld_pubkey_decode(pub, b.b, b.n), 0);
}

static void derives_published_peer_ids(void **state) {
  (void)state;
  for (size_t i = 0; i < sizeof vectors / sizeof vectors[0]; i++) {
    ld_pubkey_t pub;
    ld_peerid_t id;
    char text[LD_PEERID_TEXT_MAX];
    pubkey(&pub, vectors[i].key);
    assert_int_equal(ld_peerid_from_pubkey(&id, &pub), 0);
    if (vectors[i].multihash != NULL) {
      bytes_t mh = hex(vectors[i].multihash);
      assert_int_equal(id.len, mh.n);
      assert_memory_equal(id.bytes, mh.b, mh.n);
    }
    assert_int_equal(ld_peerid_to_text(&id, text, sizeof text), strlen(vectors[i].base58));
    assert_string_equal(text, vectors[i].base58);
    if (vectors[i].cid != NULL) {
      assert_int_equal(ld_peerid_to_cid_text(&id, text, sizeof text), strlen(vectors[i].cid));
      assert_string_equal(text, vectors[i].cid);
    }
    assert_true(ld_peerid_matches(&id, &pub));
  }
}

static void parses_both_text_forms(void **state) {
  (void)state;
  for (size_t i = 0; i < sizeof vectors / sizeof vectors[0]; i++) {
    ld_pubkey_t pub;
    ld_peerid_t want, got;
    pubkey(&pub, vectors[i].key);
    assert_int_equal(ld_peerid_from_pubkey(&want, &pub), 0);
    assert_int_equal(ld_peerid_parse(&got, vectors[i].base58), 0);
    assert_true(ld_peerid_equal(&got, &want));
    if (vectors[i].cid != NULL) {
      memset(&got, 0, sizeof got);
      assert_int_equal(ld_peerid_parse(&got, vectors[i].cid), 0);
      assert_true(ld_peerid_equal(&got, &want));
    }
  }
}

static void spec_text_examples_are_the_same_peer(void **state) {
  (void)state;
  ld_peerid_t a, b, c;
  assert_int_equal(ld_peerid_parse(&a, "QmYyQSo1c1Ym7orWxLYvCrM2EmxFTANf8wXmmE7DWjhx5N"), 0);
  assert_int_equal(
      ld_peerid_parse(&b, "bafzbeie5745rpv2m6tjyuugywy4d5ewrqgqqhfnf445he3omzpjbx5xqxe"), 0);
  assert_true(ld_peerid_equal(&a, &b));
  bytes_t mh = hex("12209dff3b17d74cf4d38a50d8b6383e92d181a10395a5e73a726dcccbd21bf6f0b9");
  assert_int_equal(a.len, mh.n);
  assert_memory_equal(a.bytes, mh.b, mh.n);

  assert_int_equal(ld_peerid_parse(&c, "12D3KooWD3eckifWpRn9wQpMG9R9hX3sD158z7EqHWmweQAJU5SA"), 0);
  mh = hex("0024080112202ffa35a99d3a3cfbb17bb7c1dc5561b18a8dcca4df38dc613ea859c37eb1336b");
  assert_int_equal(c.len, mh.n);
  assert_memory_equal(c.bytes, mh.b, mh.n);
}

static void other_multibases_of_the_cid(void **state) {
  (void)state;
  ld_peerid_t want, got;
  assert_int_equal(ld_peerid_parse(&want, vectors[0].base58), 0);
  assert_int_equal(ld_peerid_parse(&got, "z5AanNVJCxnGuh8TJu4nye3dE3NbxAd8FB9cr46uVagyFPuibMxok2R"),
                   0);
  assert_true(ld_peerid_equal(&got, &want));
  assert_int_equal(
      ld_peerid_parse(
          &got,
          "f01720024080112201ed1e8fae2c4a144b8be8fd4b47bf3d3b34b871c3cacf6010f0e42d474fce27e"),
      0);
  assert_true(ld_peerid_equal(&got, &want));
  assert_int_equal(
      ld_peerid_parse(&got, "BAFZAAJAIAEJCAHWR5D5OFRFBIS4L5D6UWR57HU5TJODRYPFM6YAQ6DSC2R2PZYT6"),
      0);
  assert_true(ld_peerid_equal(&got, &want));
}

static void rejects_invalid_text(void **state) {
  (void)state;
  static const char *bad[] = {
      "",
      "QmxoHT6iViN5xAjoz1VZ553cL31U9F94ht3QvWR1FrEbZY",  /* sha2-256 digest length != 32 */
      "QmYyQSo1c1Ym7orWxLYvCrM2EmxFTANf8wXmmE7DWjhx5",   /* truncated */
      "QmYyQSo1c1Ym7orWxLYvCrM2EmxFTANf8wXmmE7DWjhx5N0", /* '0' is not base58 */
      "bafkreie5745rpv2m6tjyuugywy4d5ewrqgqqhfnf445he3omzpjbx5xqxe", /* codec raw, not libp2p-key */
      "bajzbeie5745rpv2m6tjyuugywy4d5ewrqgqqhfnf445he3omzpjbx5xqxe", /* CID version 2 */
      "k51qzi5uqu5dh9ihj4p2v5sl3hxvv27ryx2w0xrsv6jmmqi91t9xp8p9kaipc2", /* base36 unsupported */
      "bafzbeie5745rpv2m6tjyuugywy4d5ewrqgqqhfnf445he3omzpjbx5xqx",     /* truncated base32 */
      "f0x01720024080112201ed1e8fae2c4a144b8be8fd4b47bf3d3b34b871c3cacf6010f0e42d474fce27e",
      "12D3KooWBtg3aaRMjxwedh83aGiUkwSxDwUZkzuJcfaqUmo7R3pq12D3KooWBtg3aaRMjxwedh83aGiUkwSxDwUZkzu",
      "Q",
      "1",
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    ld_peerid_t id;
    assert_int_equal(ld_peerid_parse(&id, bad[i]), LD_ERR_BAD_PEER_ID);
  }
}

static void validates_binary_multihashes(void **state) {
  (void)state;
  ld_peerid_t id;
  bytes_t ok = hex(vectors[1].multihash);
  assert_int_equal(ld_peerid_from_bytes(&id, ok.b, ok.n), 0);
  assert_int_equal(ld_peerid_from_bytes(&id, ok.b, ok.n - 1), LD_ERR_BAD_PEER_ID);
  ok.b[ok.n] = 0;
  assert_int_equal(ld_peerid_from_bytes(&id, ok.b, ok.n + 1), LD_ERR_BAD_PEER_ID);

  static const char *bad[] = {
      "",
      "1221c05877cbae039d70a5e600ea02c6f9f2942439285c9e344e26f8d280c850fad6", /* digest 33 */
      "121f9dff3b17d74cf4d38a50d8b6383e92d181a10395a5e73a726dcccbd21bf6f0",   /* digest 31 */
      "13209dff3b17d74cf4d38a50d8b6383e92d181a10395a5e73a726dcccbd21bf6f0b9", /* sha2-512 code */
      "00040801ffff",                                                         /* not a key */
      /* identity content with Data before Type: decodable but not canonical */
      "002412201ed1e8fae2c4a144b8be8fd4b47bf3d3b34b871c3cacf6010f0e42d474fce27e0801",
      /* identity content with an extra field: decodable but not canonical */
      "0026080112201ed1e8fae2c4a144b8be8fd4b47bf3d3b34b871c3cacf6010f0e42d474fce27e1801",
      "8000",
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    bytes_t b = hex(bad[i]);
    assert_int_equal(ld_peerid_from_bytes(&id, b.b, b.n), LD_ERR_BAD_PEER_ID);
  }
}

static void extracts_inlined_public_keys(void **state) {
  (void)state;
  ld_peerid_t id;
  ld_pubkey_t pub, want;
  assert_int_equal(ld_peerid_parse(&id, vectors[1].base58), 0);
  assert_int_equal(ld_peerid_pubkey(&id, &pub), 0);
  pubkey(&want, SECP_PUB);
  assert_true(ld_pubkey_equal(&pub, &want));
  assert_true(ld_peerid_matches(&id, &pub));

  pubkey(&want, ED25519_PUB);
  assert_false(ld_peerid_matches(&id, &want));

  assert_int_equal(ld_peerid_parse(&id, vectors[2].base58), 0);
  assert_int_equal(ld_peerid_pubkey(&id, &pub), LD_ERR_NOT_FOUND);
  pubkey(&want, ECDSA_PUB);
  assert_true(ld_peerid_matches(&id, &want));
}

static void text_output_respects_capacity(void **state) {
  (void)state;
  ld_peerid_t id;
  char small[20];
  assert_int_equal(ld_peerid_parse(&id, vectors[0].base58), 0);
  assert_int_equal(ld_peerid_to_text(&id, small, sizeof small), LD_ERR_LIMIT);
  assert_int_equal(ld_peerid_to_cid_text(&id, small, sizeof small), LD_ERR_LIMIT);
  assert_int_equal(ld_peerid_to_cid_text(&id, small, 1), LD_ERR_LIMIT);
  char exact[53];
  assert_int_equal(ld_peerid_to_text(&id, exact, sizeof exact), 52);
  assert_int_equal(ld_peerid_to_text(&id, exact, 52), LD_ERR_LIMIT);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(derives_published_peer_ids),
      cmocka_unit_test(parses_both_text_forms),
      cmocka_unit_test(spec_text_examples_are_the_same_peer),
      cmocka_unit_test(other_multibases_of_the_cid),
      cmocka_unit_test(rejects_invalid_text),
      cmocka_unit_test(validates_binary_multihashes),
      cmocka_unit_test(extracts_inlined_public_keys),
      cmocka_unit_test(text_output_respects_capacity),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
