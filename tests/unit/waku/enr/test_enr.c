/* ENR: the EIP-778 example and the Waku vectors of the digest (§10.3) decoded with their
 * signatures checked and every field compared; our own records signed and read back; tampered,
 * unsorted, duplicate, oversized and truncated records refused; the Waku keys (waku2,
 * multiaddrs, rs, rsv) and the record of our own node. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "base/buf.h"
#include "base/error.h"
#include "base/hex.h"
#include "crypto/keccak.h"
#include "p2p/key.h"
#include "p2p/multiaddr.h"
#include "p2p/peerid.h"
#include "waku/core/codecs.h"
#include "waku/enr/enr.h"
#include "waku/enr/rlp.h"

static size_t unhex(const char *hex, uint8_t *out) {
  size_t n = 0;
  assert_int_equal(ld_hex_decode(hex, strlen(hex), out, strlen(hex) / 2, &n), 0);
  return n;
}

static void assert_hex(const uint8_t *got, size_t len, const char *hex) {
  uint8_t want[512];
  assert_int_equal(len, unhex(hex, want));
  assert_memory_equal(got, want, len);
}

static void assert_value(const ld_enr_t *enr, const char *key, const char *hex) {
  size_t len;
  const uint8_t *v = ld_enr_get(enr, key, &len);
  assert_non_null(v);
  assert_hex(v, len, hex);
}

static void assert_ma_text(const ld_multiaddr_t *ma, const char *text) {
  char buf[LD_MULTIADDR_TEXT_MAX];
  assert_true(ld_multiaddr_to_text(ma, buf, sizeof buf) > 0);
  assert_string_equal(buf, text);
}

/* ---- vectors -------------------------------------------------------------------------------- */

static const char *EIP778 =
    "enr:-"
    "IS4QHCYrYZbAKWCBRlAy5zzaDZXJBGkcnh4MHcBFZntXNFrdvJjX04jRzjzCBOonrkTfj499SZuOh8R33Ls8RRcy5w"
    "BgmlkgnY0gmlwhH8AAAGJc2VjcDI1NmsxoQPKY0yuDUmstAHYpMa2_oxVtw0RW_QAdpzBQA8yWM0xOIN1ZHCCdl8";
static const char *EIP778_RLP =
    "f884b8407098ad865b00a582051940cb9cf36836572411a47278783077011599ed5cd16b76f2635f4e234738f30813"
    "a8"
    "9eb9137e3e3df5266e3a1f11df72ecf1145ccb9c01826964827634826970847f00000189736563703235366b31a103"
    "ca"
    "634cae0d49acb401d8a4c6b6fe8c55b70d115bf400769cc1400f3258cd31388375647082765f";
static const char *EIP778_SECRET =
    "b71c71a67e1177ad4e901695e1b4b9ee17ae16c6668d313eac2f96dbcda3f291";

static const char *JS_MULTIADDRS = "enr:-QEnuEBEAyErHEfhiQxAVQoWowGTCuEF9fKZtXSd7H_"
                                   "PymHFhGJA3rGAYDVSHKCyJDGRLBGsloNbS8AZF33IVuefjOO6"
                                   "BIJpZIJ2NIJpcIQS39tkim11bHRpYWRkcnO4lgAvNihub2RlLTAxLmRvLWFtczM"
                                   "ud2FrdXYyLnRlc3Quc3RhdHVzaW0ubmV0"
                                   "BgG73gMAODcxbm9kZS0wMS5hYy1jbi1ob25na29uZy1jLndha3V2Mi50ZXN0LnN"
                                   "0YXR1c2ltLm5ldAYBu94DACm9A62t7AQL"
                                   "4Ef5ZYZosRpQTzFVAB8jGjf1TER2wH-0zBOe1-"
                                   "MDBNLeA4lzZWNwMjU2azGhAzfsxbxyCkgCqq8WwYsVWH7YkpMLnU2Bw5xJ"
                                   "SimxKav-g3VkcIIjKA";

static const char *NWAKU_STORE =
    "enr:-QEMuEAs8JmmyUI3b9v_ADqYtELHUYAsAMS21lA2BMtrzF86tVmyy9cCrhmzfHGHx_"
    "g3nybn7jIRybzXTGNj3C2Kzrri"
    "AYJpZIJ2NIJpcISf3_"
    "Jeim11bHRpYWRkcnO4XAArNiZzdG9yZS0wMS5kby1hbXMzLnN0YXR1cy5wcm9kLnN0YXR1cy5pbQZ2"
    "XwAtNiZzdG9yZS0wMS5kby1hbXMzLnN0YXR1cy5wcm9kLnN0YXR1cy5pbQYBu94DgnJzjQAQBQABACAAQACAAQCJc2VjcD"
    "I1"
    "NmsxoQLfoaQH3oSYW59yxEBfeAZbltmUnC4BzYkHqer2VQMTyoN0Y3CCdl-DdWRwgiMohXdha3UyAw";

static const char *TWN_BOOT =
    "enr:-QESuED0qW1BCmF-oH_ARGPr97Nv767bl_43uoy70vrbah3EaCAdK3Q0iRQ6wkSTTpdrg_dU_"
    "NC2ydO8leSlRpBX4pxi"
    "AYJpZIJ2NIJpcIRA4VDAim11bHRpYWRkcnO4XAArNiZub2RlLTAxLmRvLWFtczMud2FrdS5zYW5kYm94LnN0YXR1cy5pbQ"
    "Z2"
    "XwAtNiZub2RlLTAxLmRvLWFtczMud2FrdS5zYW5kYm94LnN0YXR1cy5pbQYfQN4DgnJzkwABCAAAAAEAAgADAAQABQAGAA"
    "eJ"
    "c2VjcDI1NmsxoQOTd-h5owwj-cx7xrmbvQKU8CV3Fomfdvcv1MBc-67T5oN0Y3CCdl-DdWRwgiMohXdha3UyDw";

static const char *JS_TCP =
    "enr:-IS4QAmC_o1PMi5DbR4Bh4oHVyQunZblg4bTaottPtBodAhJZvxVlWW-4rXITPNg4mwJ8cW__D9FBDc9N4mdhyMqB-"
    "EB"
    "gmlkgnY0gmlwhIbRi9KJc2VjcDI1NmsxoQOevTdO6jvv3fRruxguKR-3Ge4bcFsLeAIWEDjrfaigNoN0Y3CCdl8";

static const char *ETH_RECORD =
    "enr:-KG4QOtcP9X1FbIMOe17QNMKqDxCpm14jcX5tiOE4_TyMrFqbmhPZHK_ZPG2Gxb1GE2xdtodOfx9-"
    "cgvNtxnRyHEmC0g"
    "hGV0aDKQ9aX9QgAAAAD__________4JpZIJ2NIJpcIQDE8KdiXNlY3AyNTZrMaEDhpehBDbZjM_L9ek699Y7vhUJ-"
    "eAdMyQW_"
    "Fil522Y0fODdGNwgiMog3VkcIIjKA";

static void parse_ok(ld_enr_t *enr, const char *text) {
  assert_int_equal(ld_enr_parse_text(enr, text), 0);
  char back[LD_ENR_TEXT_MAX];
  assert_int_equal(ld_enr_to_text(enr, back, sizeof back), (int)strlen(text));
  assert_string_equal(back, text);
}

static void assert_node_id(const ld_enr_t *enr, const char *hex) {
  uint8_t id[LD_ENR_NODE_ID_LEN];
  assert_int_equal(ld_enr_node_id(enr, id), 0);
  assert_hex(id, sizeof id, hex);
}

static void assert_port(const ld_enr_t *enr, const char *key, uint16_t want) {
  uint16_t port = 0;
  assert_int_equal(ld_enr_port(enr, key, &port), 0);
  assert_int_equal(port, want);
}

static void assert_ip4(const ld_enr_t *enr, uint8_t a, uint8_t b, uint8_t c, uint8_t d) {
  uint8_t ip[4], want[4] = {a, b, c, d};
  assert_int_equal(ld_enr_ip4(enr, ip), 0);
  assert_memory_equal(ip, want, 4);
}

static void eip778_example(void **state) {
  (void)state;
  ld_enr_t enr;
  parse_ok(&enr, EIP778);
  assert_hex(enr.raw, enr.len, EIP778_RLP);
  assert_true(enr.seq == 1);
  assert_int_equal(enr.n_pairs, 4);
  assert_value(&enr, "id", "7634");
  assert_value(&enr, "secp256k1",
               "03ca634cae0d49acb401d8a4c6b6fe8c55b70d115bf400769cc1400f3258cd3138");
  assert_ip4(&enr, 127, 0, 0, 1);
  assert_port(&enr, "udp", 30303);
  uint16_t port;
  assert_int_equal(ld_enr_port(&enr, "tcp", &port), LD_ERR_NOT_FOUND);
  assert_node_id(&enr, "a448f24c6d18e575453db13171562b71999873db5b286df957af199ec94617f7");
  /* No tcp: nothing to dial (udp is discovery). */
  ld_multiaddr_t addrs[4];
  assert_int_equal(ld_enr_dial_addrs(&enr, addrs, 4), 0);
  uint8_t caps;
  assert_int_equal(ld_enr_waku2(&enr, &caps), LD_ERR_NOT_FOUND);
}

/* Signing the EIP-778 pairs with its key reproduces the published record byte for byte. */
static void eip778_reproduced(void **state) {
  (void)state;
  uint8_t secret[32];
  unhex(EIP778_SECRET, secret);
  ld_privkey_t key;
  assert_int_equal(ld_privkey_from_secp256k1(&key, secret), 0);
  ld_enr_builder_t b;
  ld_enr_builder_init(&b, 1);
  const uint8_t ip[4] = {127, 0, 0, 1};
  assert_int_equal(ld_enr_builder_set_uint(&b, "udp", 30303), 0);
  assert_int_equal(ld_enr_builder_set_ip4(&b, ip), 0);
  ld_enr_t enr;
  assert_int_equal(ld_enr_builder_sign(&b, &key, &enr), 0);
  assert_hex(enr.raw, enr.len, EIP778_RLP);
  char text[LD_ENR_TEXT_MAX];
  assert_true(ld_enr_to_text(&enr, text, sizeof text) > 0);
  assert_string_equal(text, EIP778);
}

static void js_waku_multiaddrs_vector(void **state) {
  (void)state;
  ld_enr_t enr;
  parse_ok(&enr, JS_MULTIADDRS);
  assert_int_equal(enr.len, 298);
  assert_true(enr.seq == 4);
  assert_value(&enr, "id", "7634");
  assert_ip4(&enr, 18, 223, 219, 100);
  assert_port(&enr, "udp", 9000);
  assert_value(&enr, "secp256k1",
               "0337ecc5bc720a4802aaaf16c18b15587ed892930b9d4d81c39c494a29b129abfe");
  assert_node_id(&enr, "9c8fec60233025a4cca32a646869327f1543bbfe14f849823fe1f6984415b887");
  /* Three entries; the onion3 one is not a multiaddr we decode, so it is skipped. */
  size_t len;
  const uint8_t *v = ld_enr_get(&enr, "multiaddrs", &len);
  assert_non_null(v);
  assert_int_equal(len, 2 + 0x2f + 2 + 0x38 + 2 + 0x29);
  assert_hex(v + 2 + 0x2f + 2 + 0x38, 2 + 0x29,
             "0029bd03adadec040be047f9658668b11a504f3155001f231a37f54c4476c07fb4cc139ed7e30304d2"
             "de03");
  ld_multiaddr_t ma[4];
  size_t skipped = 9;
  assert_int_equal(ld_enr_multiaddrs(&enr, ma, 4, &skipped), 2);
  assert_int_equal(skipped, 1);
  assert_ma_text(&ma[0], "/dns4/node-01.do-ams3.wakuv2.test.statusim.net/tcp/443/wss");
  assert_ma_text(&ma[1], "/dns6/node-01.ac-cn-hongkong-c.wakuv2.test.statusim.net/tcp/443/wss");
  assert_hex(ma[0].bytes, ma[0].len,
             "36286e6f64652d30312e646f2d616d73332e77616b7576322e746573742e737461747573696d2e6e6574"
             "0601bbde03");
  ld_multiaddr_t dial[4];
  assert_int_equal(ld_enr_dial_addrs(&enr, dial, 4), 2);
  assert_true(ld_multiaddr_equal(&dial[0], &ma[0]));
  assert_true(ld_multiaddr_equal(&dial[1], &ma[1]));
}

static void nwaku_store_vector(void **state) {
  (void)state;
  ld_enr_t enr;
  parse_ok(&enr, NWAKU_STORE);
  assert_int_equal(enr.len, 271);
  assert_true(enr.seq == 1);
  assert_ip4(&enr, 159, 223, 242, 94);
  assert_port(&enr, "tcp", 30303);
  assert_port(&enr, "udp", 9000);
  uint8_t caps;
  assert_int_equal(ld_enr_waku2(&enr, &caps), 0);
  assert_int_equal(caps, LD_ENR_RELAY | LD_ENR_STORE);
  const char *codecs[8];
  assert_int_equal(ld_enr_waku2_codecs(caps, codecs, 8), 2);
  assert_string_equal(codecs[0], LD_WAKU_RELAY_CODEC);
  assert_string_equal(codecs[1], LD_WAKU_STORE_CODEC);
  assert_value(&enr, "rs", "00100500010020004000800100");
  ld_enr_shards_t sh;
  assert_int_equal(ld_enr_shards(&enr, &sh), 0);
  assert_int_equal(sh.cluster_id, 16);
  assert_int_equal(sh.n_shards, 5);
  const uint16_t want[] = {1, 32, 64, 128, 256};
  for (size_t i = 0; i < 5; i++)
    assert_true(ld_enr_shards_has(&sh, want[i]));
  assert_false(ld_enr_shards_has(&sh, 0));
  assert_false(ld_enr_cluster_mismatch(&enr, 16));
  assert_true(ld_enr_cluster_mismatch(&enr, 1));
  ld_multiaddr_t dial[4];
  assert_int_equal(ld_enr_dial_addrs(&enr, dial, 4), 3);
  assert_ma_text(&dial[0], "/ip4/159.223.242.94/tcp/30303");
  assert_ma_text(&dial[1], "/dns4/store-01.do-ams3.status.prod.status.im/tcp/30303");
  assert_ma_text(&dial[2], "/dns4/store-01.do-ams3.status.prod.status.im/tcp/443/wss");
  /* A smaller output array still reports the total. */
  assert_int_equal(ld_enr_dial_addrs(&enr, dial, 1), 3);
}

static void twn_bootstrap_vector(void **state) {
  (void)state;
  ld_enr_t enr;
  parse_ok(&enr, TWN_BOOT);
  assert_int_equal(enr.len, 277);
  assert_true(enr.seq == 1);
  assert_ip4(&enr, 64, 225, 80, 192);
  assert_port(&enr, "tcp", 30303);
  assert_port(&enr, "udp", 9000);
  uint8_t caps;
  assert_int_equal(ld_enr_waku2(&enr, &caps), 0);
  assert_int_equal(caps, 0x0f);
  const char *codecs[8];
  assert_int_equal(ld_enr_waku2_codecs(caps, codecs, 8), 4);
  assert_string_equal(codecs[2], LD_WAKU_FILTER_SUBSCRIBE_CODEC);
  assert_string_equal(codecs[3], LD_WAKU_LIGHTPUSH_CODEC);
  ld_enr_shards_t sh;
  assert_int_equal(ld_enr_shards(&enr, &sh), 0);
  assert_int_equal(sh.cluster_id, 1);
  assert_int_equal(sh.n_shards, 8);
  for (uint16_t s = 0; s < 8; s++)
    assert_true(ld_enr_shards_has(&sh, s));
  assert_false(ld_enr_shards_has(&sh, 8));
  ld_multiaddr_t ma[4];
  assert_int_equal(ld_enr_multiaddrs(&enr, ma, 4, NULL), 2);
  assert_ma_text(&ma[0], "/dns4/node-01.do-ams3.waku.sandbox.status.im/tcp/30303");
  assert_ma_text(&ma[1], "/dns4/node-01.do-ams3.waku.sandbox.status.im/tcp/8000/wss");
  assert_value(&enr, "secp256k1",
               "039377e879a30c23f9cc7bc6b99bbd0294f0257716899f76f72fd4c05cfbaed3e6");
}

static void js_waku_tcp_vector(void **state) {
  (void)state;
  ld_enr_t enr;
  parse_ok(&enr, JS_TCP);
  assert_ip4(&enr, 134, 209, 139, 210);
  assert_port(&enr, "tcp", 30303);
  ld_peerid_t id;
  assert_int_equal(ld_enr_peer_id(&enr, &id), 0);
  char text[LD_PEERID_TEXT_MAX];
  assert_true(ld_peerid_to_text(&id, text, sizeof text) > 0);
  assert_string_equal(text, "16Uiu2HAmPLe7Mzm8TsYUubgCAW1aJoeFScxrLj8ppHFivPo97bUZ");
  ld_multiaddr_t dial[2];
  assert_int_equal(ld_enr_dial_addrs(&enr, dial, 2), 1);
  assert_ma_text(&dial[0], "/ip4/134.209.139.210/tcp/30303");
  ld_enr_shards_t sh;
  assert_int_equal(ld_enr_shards(&enr, &sh), LD_ERR_NOT_FOUND);
  assert_false(ld_enr_cluster_mismatch(&enr, 1)); /* no shard info: never mismatched */
}

static void ethereum_vector(void **state) {
  (void)state;
  ld_enr_t enr;
  parse_ok(&enr, ETH_RECORD);
  assert_int_equal(enr.len, 163);
  assert_true(enr.seq == 32);
  assert_value(&enr, "eth2", "f5a5fd4200000000ffffffffffffffff");
  assert_ip4(&enr, 3, 19, 194, 157);
  assert_port(&enr, "tcp", 9000);
  assert_port(&enr, "udp", 9000);
  uint8_t caps;
  assert_int_equal(ld_enr_waku2(&enr, &caps), LD_ERR_NOT_FOUND);
  assert_int_equal(ld_enr_waku2_codecs(0, NULL, 0), 0);
  ld_multiaddr_t ma[2];
  assert_int_equal(ld_enr_multiaddrs(&enr, ma, 2, NULL), 0);
  size_t len;
  const uint8_t *item = ld_enr_get_item(&enr, "eth2", &len);
  assert_non_null(item);
  assert_int_equal(len, 17); /* 0x90 header + 16 bytes */
  assert_null(ld_enr_get(&enr, "nonexistent", &len));
}

/* ---- malformed records ---------------------------------------------------------------------- */

static void decode_hex(ld_enr_t *enr, const char *text, uint8_t *raw, size_t *len) {
  assert_int_equal(ld_enr_parse_text(enr, text), 0);
  memcpy(raw, enr->raw, enr->len);
  *len = enr->len;
}

static void tampered_records_rejected(void **state) {
  (void)state;
  ld_enr_t enr;
  uint8_t raw[LD_ENR_MAX_SIZE];
  size_t len;
  decode_hex(&enr, NWAKU_STORE, raw, &len);
  /* A signature bit. */
  raw[10] ^= 0x01;
  assert_int_equal(ld_enr_decode(&enr, raw, len), LD_ERR_BAD_SIGNATURE);
  raw[10] ^= 0x01;
  assert_int_equal(ld_enr_decode(&enr, raw, len), 0);
  /* The last byte (waku2 = 03 → 07): same shape, signature no longer matches. */
  raw[len - 1] = 0x07;
  assert_int_equal(ld_enr_decode(&enr, raw, len), LD_ERR_BAD_SIGNATURE);
  raw[len - 1] = 0x03;
  /* Truncation, trailing bytes, oversize. */
  for (size_t cut = 0; cut < len; cut += 13)
    assert_int_not_equal(ld_enr_decode(&enr, raw, cut), 0);
  assert_int_equal(ld_enr_decode(&enr, raw, len - 1), LD_ERR_TRUNCATED);
  uint8_t longer[LD_ENR_MAX_SIZE + 1];
  memcpy(longer, raw, len);
  longer[len] = 0;
  assert_int_equal(ld_enr_decode(&enr, longer, len + 1), LD_ERR_MALFORMED);
  assert_int_equal(ld_enr_decode(&enr, longer, LD_ENR_MAX_SIZE + 1), LD_ERR_TOO_LARGE);
  /* Text form. */
  assert_int_equal(ld_enr_parse_text(&enr, NWAKU_STORE + 4), LD_ERR_BAD_ENCODING);
  assert_int_equal(ld_enr_parse_text(&enr, "enr:"), LD_ERR_TRUNCATED);
  assert_int_equal(ld_enr_parse_text(&enr, "enr:-IS4Q!"), LD_ERR_BAD_ENCODING);
  char big[LD_ENR_TEXT_PARSE_MAX + 8];
  memset(big, 'A', sizeof big - 1);
  memcpy(big, "enr:", 4);
  big[sizeof big - 1] = '\0';
  assert_int_equal(ld_enr_parse_text(&enr, big), LD_ERR_BAD_ENCODING);
  /* Padded text is accepted too. */
  char padded[LD_ENR_TEXT_MAX + 4];
  snprintf(padded, sizeof padded, "%s=", EIP778);
  assert_int_equal(ld_enr_parse_text(&enr, padded), 0);
}

/* Builds RLP [sig, seq, k, v, …] with pairs in the given order, signed with `secret`. */
static size_t raw_record(const uint8_t secret[32], const char *const *keys,
                         const uint8_t *const *vals, const size_t *val_lens, size_t n,
                         uint8_t *out) {
  ld_buf_t content, msg, rec;
  ld_buf_init(&content);
  ld_buf_init(&msg);
  ld_buf_init(&rec);
  assert_int_equal(ld_rlp_put_uint(&content, 1), 0);
  for (size_t i = 0; i < n; i++) {
    assert_int_equal(ld_rlp_put_string(&content, keys[i], strlen(keys[i])), 0);
    assert_int_equal(ld_rlp_put_string(&content, vals[i], val_lens[i]), 0);
  }
  ld_rlp_put_list_header(&msg, content.len);
  ld_buf_append(&msg, content.data, content.len);
  uint8_t sig[64];
  assert_int_equal(ld_secp256k1_sign_keccak(secret, msg.data, msg.len, sig), 0);
  ld_rlp_put_list_header(&rec, 66 + content.len);
  ld_rlp_put_string(&rec, sig, 64);
  ld_buf_append(&rec, content.data, content.len);
  size_t len = rec.len;
  memcpy(out, rec.data, len);
  ld_buf_clear(&content);
  ld_buf_clear(&msg);
  ld_buf_clear(&rec);
  return len;
}

static void structure_rules(void **state) {
  (void)state;
  uint8_t secret[32], pub[33];
  unhex(EIP778_SECRET, secret);
  assert_int_equal(ld_secp256k1_public(secret, pub), 0);
  const uint8_t ip[4] = {10, 0, 0, 1};
  uint8_t raw[600];
  ld_enr_t enr;
  /* Sorted, unique keys: valid. */
  const char *sorted[] = {"id", "ip", "secp256k1"};
  const uint8_t *vals[] = {(const uint8_t *)"v4", ip, pub};
  const size_t lens[] = {2, 4, 33};
  size_t n = raw_record(secret, sorted, vals, lens, 3, raw);
  assert_int_equal(ld_enr_decode(&enr, raw, n), 0);
  /* Unsorted keys, correctly signed: refused. */
  const char *unsorted[] = {"id", "secp256k1", "ip"};
  const uint8_t *uvals[] = {(const uint8_t *)"v4", pub, ip};
  const size_t ulens[] = {2, 33, 4};
  n = raw_record(secret, unsorted, uvals, ulens, 3, raw);
  assert_int_equal(ld_enr_decode(&enr, raw, n), LD_ERR_MALFORMED);
  /* A duplicate key: refused. */
  const char *dup[] = {"id", "ip", "ip", "secp256k1"};
  const uint8_t *dvals[] = {(const uint8_t *)"v4", ip, ip, pub};
  const size_t dlens[] = {2, 4, 4, 33};
  n = raw_record(secret, dup, dvals, dlens, 4, raw);
  assert_int_equal(ld_enr_decode(&enr, raw, n), LD_ERR_MALFORMED);
  /* Another identity scheme, and none. */
  const uint8_t *v5vals[] = {(const uint8_t *)"v5", ip, pub};
  n = raw_record(secret, sorted, v5vals, lens, 3, raw);
  assert_int_equal(ld_enr_decode(&enr, raw, n), LD_ERR_UNSUPPORTED);
  n = raw_record(secret, sorted + 1, vals + 1, lens + 1, 2, raw);
  assert_int_equal(ld_enr_decode(&enr, raw, n), LD_ERR_UNSUPPORTED);
  /* No key, and a key that is not a point. */
  n = raw_record(secret, sorted, vals, lens, 2, raw);
  assert_int_equal(ld_enr_decode(&enr, raw, n), LD_ERR_BAD_KEY);
  uint8_t bad_pub[33];
  memset(bad_pub, 0xff, sizeof bad_pub);
  bad_pub[0] = 0x02;
  const uint8_t *bvals[] = {(const uint8_t *)"v4", ip, bad_pub};
  n = raw_record(secret, sorted, bvals, lens, 3, raw);
  assert_int_equal(ld_enr_decode(&enr, raw, n), LD_ERR_BAD_KEY);
  /* Signed by another key than the one in the record. */
  uint8_t other[32];
  memcpy(other, secret, 32);
  other[31] ^= 1;
  n = raw_record(other, sorted, vals, lens, 3, raw);
  assert_int_equal(ld_enr_decode(&enr, raw, n), LD_ERR_BAD_SIGNATURE);
  /* A list where a key belongs, a missing value, a short signature. */
  const uint8_t bad1[] = {0xc5, 0x80, 0x01, 0xc0, 0x80, 0x80};
  assert_int_equal(ld_enr_decode(&enr, bad1, sizeof bad1), LD_ERR_MALFORMED);
  const uint8_t bad2[] = {0xc5, 0x80, 0x01, 0x82, 'i', 'd'};
  assert_int_equal(ld_enr_decode(&enr, bad2, sizeof bad2), LD_ERR_MALFORMED);
  const uint8_t bad3[] = {0xc8, 0x80, 0x01, 0x82, 'i', 'd', 0x82, 'v', '4'};
  assert_int_equal(ld_enr_decode(&enr, bad3, sizeof bad3), LD_ERR_BAD_SIGNATURE);
  const uint8_t not_list[] = {0x80};
  assert_int_equal(ld_enr_decode(&enr, not_list, 1), LD_ERR_MALFORMED);
  assert_int_equal(ld_enr_decode(&enr, NULL, 0), LD_ERR_TRUNCATED);
}

/* ---- our records ---------------------------------------------------------------------------- */

static void key_from(ld_privkey_t *key, uint8_t seed) {
  uint8_t secret[32];
  memset(secret, seed, sizeof secret);
  assert_int_equal(ld_privkey_from_secp256k1(key, secret), 0);
}

static void ma(ld_multiaddr_t *out, const char *text) {
  assert_int_equal(ld_multiaddr_parse(out, text), 0);
}

static void round_trip(void **state) {
  (void)state;
  ld_privkey_t key;
  key_from(&key, 7);
  ld_enr_builder_t b;
  ld_enr_builder_init(&b, 42);
  const uint8_t ip[4] = {192, 168, 1, 2}, ip6[16] = {0x20, 0x01, 0x0d, 0xb8, [15] = 1};
  assert_int_equal(ld_enr_builder_set_ip4(&b, ip), 0);
  assert_int_equal(ld_enr_builder_set_ip6(&b, ip6), 0);
  assert_int_equal(ld_enr_builder_set_uint(&b, "tcp", 60000), 0);
  assert_int_equal(ld_enr_builder_set_uint(&b, "udp", 9000), 0);
  assert_int_equal(ld_enr_builder_set_uint(&b, "tcp", 60001), 0); /* replaces */
  assert_int_equal(ld_enr_builder_set_waku2(&b, LD_ENR_RELAY | LD_ENR_FILTER | LD_ENR_SYNC), 0);
  const uint16_t shards[] = {5, 1, 5, 1023};
  assert_int_equal(ld_enr_builder_set_shards(&b, 2, shards, 4), 0);
  ld_multiaddr_t addrs[3];
  ma(&addrs[0],
     "/dns4/example.org/tcp/443/wss/p2p/16Uiu2HAmPLe7Mzm8TsYUubgCAW1aJoeFScxrLj8ppHFivPo97bUZ");
  ma(&addrs[1], "/dns4/example.org/tcp/443/wss");
  ma(&addrs[2], "/ip4/192.168.1.2/tcp/8000/ws");
  assert_int_equal(ld_enr_builder_set_multiaddrs(&b, addrs, 3), 0);
  assert_int_equal(ld_enr_builder_set(&b, "id", "v5", 2), LD_ERR_INVALID_ARG);
  assert_int_equal(ld_enr_builder_set(&b, "", "x", 1), LD_ERR_INVALID_ARG);

  ld_enr_t enr, again;
  assert_int_equal(ld_enr_builder_sign(&b, &key, &enr), 0);
  assert_true(enr.seq == 42);
  assert_memory_equal(enr.pubkey, key.pub, 33);
  /* Keys come out sorted. */
  const char *order[] = {"id", "ip", "ip6", "multiaddrs", "rs", "secp256k1", "tcp", "udp", "waku2"};
  assert_int_equal(enr.n_pairs, 9);
  for (size_t i = 0; i < 9; i++) {
    assert_int_equal(enr.pairs[i].key_len, strlen(order[i]));
    assert_memory_equal(enr.raw + enr.pairs[i].key_off, order[i], strlen(order[i]));
  }
  assert_value(&enr, "rs",
               "000203000100050"
               "3ff");
  char text[LD_ENR_TEXT_MAX];
  assert_true(ld_enr_to_text(&enr, text, sizeof text) > 0);
  assert_int_equal(ld_enr_parse_text(&again, text), 0);
  assert_int_equal(again.len, enr.len);
  assert_memory_equal(again.raw, enr.raw, enr.len);
  assert_port(&again, "tcp", 60001);
  ld_peerid_t id, want;
  ld_pubkey_t pub;
  ld_privkey_public(&key, &pub);
  assert_int_equal(ld_peerid_from_pubkey(&want, &pub), 0);
  assert_int_equal(ld_enr_peer_id(&again, &id), 0);
  assert_true(ld_peerid_equal(&id, &want));
  /* The /p2p copy and the plain one are one entry. */
  ld_multiaddr_t got[4];
  assert_int_equal(ld_enr_multiaddrs(&again, got, 4, NULL), 2);
  assert_ma_text(&got[0], "/dns4/example.org/tcp/443/wss");
  assert_ma_text(&got[1], "/ip4/192.168.1.2/tcp/8000/ws");
  ld_multiaddr_t dial[6];
  assert_int_equal(ld_enr_dial_addrs(&again, dial, 6), 4);
  assert_ma_text(&dial[0], "/ip4/192.168.1.2/tcp/60001");
  assert_ma_text(&dial[1], "/ip6/2001:db8::1/tcp/60001");
  assert_ma_text(&dial[2], "/dns4/example.org/tcp/443/wss");
  /* Signatures are deterministic. */
  assert_int_equal(ld_enr_builder_sign(&b, &key, &again), 0);
  assert_memory_equal(again.raw, enr.raw, enr.len);
  /* An Ed25519 key cannot sign a v4 record. */
  ld_privkey_t ed;
  assert_int_equal(ld_privkey_generate(&ed, LD_KEY_ED25519), 0);
  assert_int_equal(ld_enr_builder_sign(&b, &ed, &again), LD_ERR_UNSUPPORTED);
  /* Too large. */
  uint8_t blob[250] = {0};
  assert_int_equal(ld_enr_builder_set(&b, "blob", blob, sizeof blob), 0);
  assert_int_equal(ld_enr_builder_sign(&b, &key, &again), LD_ERR_TOO_LARGE);
  assert_int_equal(ld_enr_builder_remove(&b, "blob"), 0);
  assert_int_equal(ld_enr_builder_remove(&b, "blob"), LD_ERR_NOT_FOUND);
  assert_int_equal(ld_enr_builder_sign(&b, &key, &again), 0);
  assert_memory_equal(again.raw, enr.raw, enr.len);
}

static void shard_encodings(void **state) {
  (void)state;
  ld_privkey_t key;
  key_from(&key, 9);
  ld_enr_builder_t b;
  ld_enr_t enr;
  ld_enr_shards_t sh;
  /* rs vectors of the digest. */
  ld_enr_builder_init(&b, 1);
  const uint16_t s73[] = {10, 1};
  assert_int_equal(ld_enr_builder_set_shards(&b, 73, s73, 2), 0);
  assert_int_equal(ld_enr_builder_sign(&b, &key, &enr), 0);
  assert_value(&enr, "rs",
               "00490200010"
               "00a");
  const uint16_t s16[] = {13, 14, 45};
  assert_int_equal(ld_enr_builder_set_shards(&b, 16, s16, 3), 0);
  assert_int_equal(ld_enr_builder_sign(&b, &key, &enr), 0);
  assert_value(&enr, "rs", "001003000d000e002d");
  /* rsv: nwaku's vector, cluster 73 shards {1, 10}, read back. */
  uint8_t rsv[LD_ENR_RSV_LEN] = {0x00, 0x49, 0x02, 0x04};
  ld_enr_builder_init(&b, 1);
  assert_int_equal(ld_enr_builder_set(&b, "rsv", rsv, sizeof rsv), 0);
  assert_int_equal(ld_enr_builder_sign(&b, &key, &enr), 0);
  assert_int_equal(ld_enr_shards(&enr, &sh), 0);
  assert_int_equal(sh.cluster_id, 73);
  assert_int_equal(sh.n_shards, 2);
  assert_true(ld_enr_shards_has(&sh, 1));
  assert_true(ld_enr_shards_has(&sh, 10));
  /* From 64 shards on the builder writes rsv (and drops rs). */
  uint16_t many[64];
  for (uint16_t i = 0; i < 64; i++)
    many[i] = (uint16_t)(i * 16);
  ld_enr_builder_init(&b, 1);
  const uint16_t one[] = {3};
  assert_int_equal(ld_enr_builder_set_shards(&b, 5, one, 1), 0);
  assert_int_equal(ld_enr_builder_set_shards(&b, 5, many, 64), 0);
  assert_int_equal(ld_enr_builder_sign(&b, &key, &enr), 0);
  size_t len;
  assert_null(ld_enr_get(&enr, "rs", &len));
  const uint8_t *v = ld_enr_get(&enr, "rsv", &len);
  assert_non_null(v);
  assert_int_equal(len, LD_ENR_RSV_LEN);
  assert_int_equal(v[2], 0x01);       /* shard 0: byte 0, bit 0 */
  assert_int_equal(v[2 + 2], 0x01);   /* shard 16 */
  assert_int_equal(v[2 + 126], 0x01); /* shard 1008 */
  assert_int_equal(ld_enr_shards(&enr, &sh), 0);
  assert_int_equal(sh.cluster_id, 5);
  assert_int_equal(sh.n_shards, 64);
  assert_int_equal(ld_enr_builder_set_shards(&b, 5, (const uint16_t[]){1024}, 1),
                   LD_ERR_INVALID_ARG);
  /* rs of the wrong length falls back to rsv; both invalid: no shards. */
  ld_enr_builder_init(&b, 1);
  const uint8_t bad_rs[] = {0x00, 0x01, 0x02, 0x00, 0x01};
  assert_int_equal(ld_enr_builder_set(&b, "rs", bad_rs, sizeof bad_rs), 0);
  assert_int_equal(ld_enr_builder_sign(&b, &key, &enr), 0);
  assert_int_equal(ld_enr_shards(&enr, &sh), LD_ERR_NOT_FOUND);
  assert_false(ld_enr_cluster_mismatch(&enr, 99));
  assert_int_equal(ld_enr_builder_set(&b, "rsv", rsv, sizeof rsv), 0);
  assert_int_equal(ld_enr_builder_sign(&b, &key, &enr), 0);
  assert_int_equal(ld_enr_shards(&enr, &sh), 0);
  assert_int_equal(sh.cluster_id, 73);
  /* rs shards above 1023 are dropped; a valid rs wins over rsv. */
  const uint8_t big_rs[] = {0x00, 0x07, 0x02, 0x04, 0x00, 0x00, 0x02};
  assert_int_equal(ld_enr_builder_set(&b, "rs", big_rs, sizeof big_rs), 0);
  assert_int_equal(ld_enr_builder_sign(&b, &key, &enr), 0);
  assert_int_equal(ld_enr_shards(&enr, &sh), 0);
  assert_int_equal(sh.cluster_id, 7);
  assert_int_equal(sh.n_shards, 1);
  assert_true(ld_enr_shards_has(&sh, 2));
}

static void multiaddrs_key_rules(void **state) {
  (void)state;
  ld_privkey_t key;
  key_from(&key, 11);
  ld_enr_builder_t b;
  ld_enr_t enr;
  ld_multiaddr_t out[4];
  size_t skipped;
  /* nwaku's layout: uint16_be(len) ‖ binary multiaddr, back to back. */
  ld_multiaddr_t wss;
  ma(&wss, "/dns4/node-01.do-ams3.wakuv2.test.statusim.net/tcp/443/wss");
  ld_enr_builder_init(&b, 1);
  assert_int_equal(ld_enr_builder_set_multiaddrs(&b, &wss, 1), 0);
  assert_int_equal(ld_enr_builder_sign(&b, &key, &enr), 0);
  assert_value(&enr, "multiaddrs",
               "002f36286e6f64652d30312e646f2d616d73332e77616b7576322e746573742e737461747573696d2e"
               "6e65740601bbde03");
  /* A zero length or a truncated entry invalidates the whole value. */
  const uint8_t zero_len[] = {0x00, 0x08, 0x04, 1, 2, 3, 4, 0x06, 0x00, 0x50, 0x00, 0x00};
  const uint8_t *cut = zero_len;
  ld_enr_builder_init(&b, 1);
  assert_int_equal(ld_enr_builder_set(&b, "multiaddrs", cut, sizeof zero_len), 0);
  assert_int_equal(ld_enr_builder_sign(&b, &key, &enr), 0);
  assert_int_equal(ld_enr_multiaddrs(&enr, out, 4, &skipped), LD_ERR_MALFORMED);
  const uint8_t truncated[] = {0x00, 0x08, 0x04, 1, 2, 3, 4, 0x06, 0x00};
  assert_int_equal(ld_enr_builder_set(&b, "multiaddrs", truncated, sizeof truncated), 0);
  assert_int_equal(ld_enr_builder_sign(&b, &key, &enr), 0);
  assert_int_equal(ld_enr_multiaddrs(&enr, out, 4, NULL), LD_ERR_MALFORMED);
  /* An undecodable entry is skipped, the others kept. */
  const uint8_t mixed[] = {0x00, 0x02, 0xff, 0xff, 0x00, 0x08, 0x04, 1, 2, 3, 4, 0x06, 0x00, 0x50};
  assert_int_equal(ld_enr_builder_set(&b, "multiaddrs", mixed, sizeof mixed), 0);
  assert_int_equal(ld_enr_builder_sign(&b, &key, &enr), 0);
  assert_int_equal(ld_enr_multiaddrs(&enr, out, 4, &skipped), 1);
  assert_int_equal(skipped, 1);
  assert_ma_text(&out[0], "/ip4/1.2.3.4/tcp/80");
}

static void node_record(void **state) {
  (void)state;
  ld_privkey_t key;
  key_from(&key, 13);
  ld_multiaddr_t addrs[6];
  ma(&addrs[0], "/ip4/0.0.0.0/tcp/60000");
  ma(&addrs[1], "/ip4/203.0.113.5/tcp/60000");
  ma(&addrs[2], "/ip4/203.0.113.5/tcp/8000/ws");
  ma(&addrs[3], "/dns4/node.example.org/tcp/443/wss");
  ma(&addrs[4], "/ip6/2001:db8::5/tcp/60000");
  ma(&addrs[5], "/ip4/203.0.113.6/tcp/60000"); /* a second plain address: not representable */
  const uint16_t shards[] = {0, 1, 2, 3, 4, 5, 6, 7};
  ld_enr_node_config_t cfg = {.addrs = addrs,
                              .n_addrs = 6,
                              .udp_port = 9000,
                              .waku2 =
                                  LD_ENR_RELAY | LD_ENR_STORE | LD_ENR_FILTER | LD_ENR_LIGHTPUSH,
                              .has_cluster = true,
                              .cluster_id = 1,
                              .shards = shards,
                              .n_shards = 8};
  ld_enr_t enr;
  assert_int_equal(ld_enr_build_node(&enr, &key, &cfg), 0);
  assert_true(enr.seq == 1);
  assert_ip4(&enr, 203, 0, 113, 5);
  assert_port(&enr, "tcp", 60000);
  assert_port(&enr, "tcp6", 60000);
  assert_port(&enr, "udp", 9000);
  assert_value(&enr, "waku2", "0f");
  assert_value(&enr, "rs", "00010800000001000200030004000500060007");
  ld_multiaddr_t dial[8];
  assert_int_equal(ld_enr_dial_addrs(&enr, dial, 8), 4);
  assert_ma_text(&dial[0], "/ip4/203.0.113.5/tcp/60000");
  assert_ma_text(&dial[1], "/ip6/2001:db8::5/tcp/60000");
  assert_ma_text(&dial[2], "/ip4/203.0.113.5/tcp/8000/ws");
  assert_ma_text(&dial[3], "/dns4/node.example.org/tcp/443/wss");
  /* Cluster without shards: rs with a zero count, as nwaku writes it. */
  cfg.n_shards = 0;
  cfg.n_addrs = 0;
  cfg.seq = 5;
  assert_int_equal(ld_enr_build_node(&enr, &key, &cfg), 0);
  assert_true(enr.seq == 5);
  assert_value(&enr, "rs", "000100");
  /* Too many long addresses: trailing ones are dropped until the record fits. */
  ld_multiaddr_t many[6];
  for (int i = 0; i < 6; i++) {
    char text[160];
    snprintf(text, sizeof text,
             "/dns4/a-rather-long-host-name-number-%d.wakuv2.example.statusim.net/tcp/443/wss", i);
    ma(&many[i], text);
  }
  cfg.addrs = many;
  cfg.n_addrs = 6;
  cfg.n_shards = 8;
  assert_int_equal(ld_enr_build_node(&enr, &key, &cfg), 0);
  assert_true(enr.len <= LD_ENR_MAX_SIZE);
  ld_multiaddr_t got[8];
  int kept = ld_enr_multiaddrs(&enr, got, 8, NULL);
  assert_true(kept >= 1 && kept < 6);
  for (int i = 0; i < kept; i++)
    assert_true(ld_multiaddr_equal(&got[i], &many[i]));
  /* Shards out of range, wrong key type. */
  const uint16_t bad[] = {1024};
  cfg.shards = bad;
  cfg.n_shards = 1;
  assert_int_equal(ld_enr_build_node(&enr, &key, &cfg), LD_ERR_INVALID_ARG);
}

/* decode_verified: the same fields as decode, every structural check, no signature check. */
static void decode_verified_skips_only_the_signature(void **state) {
  (void)state;
  ld_enr_t enr, trusted;
  parse_ok(&enr, EIP778);
  assert_int_equal(ld_enr_decode_verified(&trusted, enr.raw, enr.len), 0);
  assert_int_equal(trusted.len, enr.len);
  assert_true(trusted.seq == enr.seq);
  assert_int_equal(trusted.n_pairs, enr.n_pairs);
  assert_memory_equal(trusted.pubkey, enr.pubkey, sizeof enr.pubkey);
  assert_memory_equal(trusted.signature, enr.signature, sizeof enr.signature);
  uint8_t raw[LD_ENR_MAX_SIZE];
  memcpy(raw, enr.raw, enr.len);
  raw[10] ^= 1; /* a signature byte */
  assert_int_equal(ld_enr_decode(&trusted, raw, enr.len), LD_ERR_BAD_SIGNATURE);
  assert_int_equal(ld_enr_decode_verified(&trusted, raw, enr.len), 0);
  assert_int_equal(ld_enr_decode_verified(&trusted, raw, enr.len - 1), LD_ERR_TRUNCATED);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(eip778_example),
      cmocka_unit_test(eip778_reproduced),
      cmocka_unit_test(js_waku_multiaddrs_vector),
      cmocka_unit_test(nwaku_store_vector),
      cmocka_unit_test(twn_bootstrap_vector),
      cmocka_unit_test(js_waku_tcp_vector),
      cmocka_unit_test(ethereum_vector),
      cmocka_unit_test(tampered_records_rejected),
      cmocka_unit_test(structure_rules),
      cmocka_unit_test(round_trip),
      cmocka_unit_test(shard_encodings),
      cmocka_unit_test(multiaddrs_key_rules),
      cmocka_unit_test(node_record),
      cmocka_unit_test(decode_verified_skips_only_the_signature),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
