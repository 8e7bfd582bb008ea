/* discv5 packets against every devp2p test vector: the ping message packet, WHOAREYOU, the
 * handshake with and without a record (decoded, authenticated, decrypted, and re-encoded byte
 * for byte), ECDH, key derivation, ID signing, AES-GCM; then the errors of the decoder. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "base/error.h"
#include "crypto/crypto.h"
#include "crypto/keccak.h"
#include "discv5_vectors.h"
#include "waku/discovery/discv5_msg.h"
#include "waku/discovery/discv5_packet.h"
#include "waku/enr/enr.h"

#define ETH LD_DISCV5_PROTOCOL_ID_ETH

typedef struct keys {
  uint8_t a_key[32], b_key[32], a_pub[33], b_pub[33], a_id[32], b_id[32];
} keys_t;

static void load_keys(keys_t *k) {
  vhex(V_NODE_A_KEY, k->a_key);
  vhex(V_NODE_B_KEY, k->b_key);
  assert_int_equal(ld_secp256k1_public(k->a_key, k->a_pub), 0);
  assert_int_equal(ld_secp256k1_public(k->b_key, k->b_pub), 0);
  assert_int_equal(ld_secp256k1_keccak_id(k->a_pub, 33, k->a_id), 0);
  assert_int_equal(ld_secp256k1_keccak_id(k->b_pub, 33, k->b_id), 0);
}

static void node_ids_match_the_keys(void **state) {
  (void)state;
  keys_t k;
  uint8_t want[32];
  load_keys(&k);
  vhex(V_NODE_A_ID, want);
  assert_memory_equal(k.a_id, want, 32);
  vhex(V_NODE_B_ID, want);
  assert_memory_equal(k.b_id, want, 32);
}

static void ping_message_packet(void **state) {
  (void)state;
  keys_t k;
  uint8_t pkt[LD_DISCV5_MAX_PACKET], key[16] = {0}, pt[LD_DISCV5_MAX_PACKET], nonce[12];
  load_keys(&k);
  size_t len = vhex(V_PING_PACKET, pkt);
  ld_discv5_packet_t p;
  assert_int_equal(ld_discv5_packet_decode(&p, ETH, k.b_id, pkt, len), 0);
  assert_int_equal(p.flag, LD_DISCV5_FLAG_MESSAGE);
  assert_memory_equal(p.src_id, k.a_id, 32);
  vhex(V_NONCE_FF, nonce);
  assert_memory_equal(p.nonce, nonce, 12);
  size_t pt_len;
  assert_int_equal(ld_discv5_packet_open(&p, key, pt, &pt_len), 0);
  ld_discv5_msg_t m;
  assert_int_equal(ld_discv5_msg_decode(&m, pt, pt_len), 0);
  assert_int_equal(m.type, LD_DISCV5_PING);
  assert_int_equal(m.req_id_len, 4);
  assert_memory_equal(m.req_id, "\x00\x00\x00\x01", 4);
  assert_int_equal(m.enr_seq, 2);
  /* Our encoder writes the same message and the same packet. */
  ld_buf_t b;
  ld_buf_init(&b);
  assert_int_equal(ld_discv5_msg_encode(&b, &m), 0);
  assert_int_equal(b.len, pt_len);
  assert_memory_equal(b.data, pt, pt_len);
  uint8_t out[LD_DISCV5_MAX_PACKET];
  size_t out_len;
  assert_int_equal(ld_discv5_packet_encode(out, &out_len, ETH, k.b_id, pkt, LD_DISCV5_FLAG_MESSAGE,
                                           nonce, k.a_id, 32, key, b.data, b.len, NULL, NULL),
                   0);
  assert_int_equal(out_len, len);
  assert_memory_equal(out, pkt, len);
  ld_buf_clear(&b);
  /* Another key does not open it. */
  key[0] = 1;
  assert_int_equal(ld_discv5_packet_open(&p, key, pt, &pt_len), LD_ERR_DECRYPT);
}

static void whoareyou_packet(void **state) {
  (void)state;
  keys_t k;
  uint8_t pkt[LD_DISCV5_MAX_PACKET], challenge[LD_DISCV5_CHALLENGE_LEN], nonce[12], id_nonce[16];
  load_keys(&k);
  size_t len = vhex(V_WHOAREYOU_PACKET, pkt);
  vhex(V_WHOAREYOU_CHALLENGE, challenge);
  vhex(V_REQUEST_NONCE, nonce);
  vhex(V_ID_NONCE, id_nonce);
  ld_discv5_packet_t p;
  assert_int_equal(ld_discv5_packet_decode(&p, ETH, k.b_id, pkt, len), 0);
  assert_int_equal(p.flag, LD_DISCV5_FLAG_WHOAREYOU);
  assert_memory_equal(p.nonce, nonce, 12);
  assert_memory_equal(p.id_nonce, id_nonce, 16);
  assert_int_equal(p.enr_seq, 0);
  assert_int_equal(p.message_len, 0);
  assert_int_equal(p.ad_len, LD_DISCV5_CHALLENGE_LEN);
  assert_memory_equal(p.ad, challenge, LD_DISCV5_CHALLENGE_LEN);
  uint8_t authdata[LD_DISCV5_WHOAREYOU_AUTHDATA_LEN], out[LD_DISCV5_MAX_PACKET];
  uint8_t ad[LD_DISCV5_MAX_AD];
  size_t out_len, ad_len;
  ld_discv5_authdata_whoareyou(authdata, id_nonce, 0);
  assert_int_equal(ld_discv5_packet_encode(out, &out_len, ETH, k.b_id, pkt,
                                           LD_DISCV5_FLAG_WHOAREYOU, nonce, authdata,
                                           sizeof authdata, NULL, NULL, 0, ad, &ad_len),
                   0);
  assert_int_equal(out_len, len);
  assert_memory_equal(out, pkt, len);
  assert_int_equal(ad_len, LD_DISCV5_CHALLENGE_LEN);
  assert_memory_equal(ad, challenge, ad_len);
}

/* Decodes a handshake vector as B, checks everything B checks, then rebuilds it as A. */
static void check_handshake(const char *packet_hex, const char *challenge_hex,
                            const char *read_key_hex, uint64_t ping_seq, bool with_record) {
  keys_t k;
  uint8_t pkt[LD_DISCV5_MAX_PACKET], challenge[LD_DISCV5_CHALLENGE_LEN], read_key[16];
  uint8_t eph_key[32], eph_pub[33], nonce[12];
  load_keys(&k);
  size_t len = vhex(packet_hex, pkt);
  vhex(challenge_hex, challenge);
  vhex(read_key_hex, read_key);
  vhex(V_EPH_KEY, eph_key);
  vhex(V_EPH_PUB, eph_pub);
  vhex(V_NONCE_FF, nonce);

  ld_discv5_packet_t p;
  assert_int_equal(ld_discv5_packet_decode(&p, ETH, k.b_id, pkt, len), 0);
  assert_int_equal(p.flag, LD_DISCV5_FLAG_HANDSHAKE);
  assert_memory_equal(p.src_id, k.a_id, 32);
  assert_memory_equal(p.nonce, nonce, 12);
  assert_memory_equal(p.eph_pubkey, eph_pub, 33);
  const uint8_t *signer = k.a_pub;
  ld_enr_t enr;
  if (with_record) {
    assert_non_null(p.record);
    assert_int_equal(ld_enr_decode(&enr, p.record, p.record_len), 0);
    uint8_t id[32];
    assert_int_equal(ld_enr_node_id(&enr, id), 0);
    assert_memory_equal(id, k.a_id, 32);
    assert_int_equal(enr.seq, 1);
    signer = enr.pubkey;
  } else {
    assert_null(p.record);
    assert_int_equal(p.record_len, 0);
  }
  assert_int_equal(ld_discv5_id_verify(signer, 33, challenge, sizeof challenge, p.eph_pubkey, 33,
                                       k.b_id, p.id_signature),
                   0);
  uint8_t ikey[16], rkey[16];
  assert_int_equal(ld_discv5_derive_keys(k.b_key, p.eph_pubkey, 33, k.a_id, k.b_id, challenge,
                                         sizeof challenge, ikey, rkey),
                   0);
  assert_memory_equal(ikey, read_key, 16);
  uint8_t pt[LD_DISCV5_MAX_PACKET];
  size_t pt_len;
  assert_int_equal(ld_discv5_packet_open(&p, ikey, pt, &pt_len), 0);
  ld_discv5_msg_t m;
  assert_int_equal(ld_discv5_msg_decode(&m, pt, pt_len), 0);
  assert_int_equal(m.type, LD_DISCV5_PING);
  assert_memory_equal(m.req_id, "\x00\x00\x00\x01", 4);
  assert_int_equal(m.enr_seq, ping_seq);

  /* A's side: the same keys from its ephemeral key and B's public key, the same (RFC 6979)
   * signature, the same packet. */
  uint8_t a_ikey[16], a_rkey[16], sig[64];
  assert_int_equal(ld_discv5_derive_keys(eph_key, k.b_pub, 33, k.a_id, k.b_id, challenge,
                                         sizeof challenge, a_ikey, a_rkey),
                   0);
  assert_memory_equal(a_ikey, ikey, 16);
  assert_memory_equal(a_rkey, rkey, 16);
  assert_int_equal(
      ld_discv5_id_sign(k.a_key, challenge, sizeof challenge, eph_pub, 33, k.b_id, sig), 0);
  assert_memory_equal(sig, p.id_signature, 64);
  uint8_t authdata[LD_DISCV5_MAX_PACKET], out[LD_DISCV5_MAX_PACKET];
  int alen = ld_discv5_authdata_handshake(authdata, sizeof authdata, k.a_id, sig, eph_pub, p.record,
                                          p.record_len);
  assert_int_equal(alen, (int)p.authdata_len);
  size_t out_len;
  assert_int_equal(ld_discv5_packet_encode(out, &out_len, ETH, k.b_id, pkt,
                                           LD_DISCV5_FLAG_HANDSHAKE, nonce, authdata, (size_t)alen,
                                           a_ikey, pt, pt_len, NULL, NULL),
                   0);
  assert_int_equal(out_len, len);
  assert_memory_equal(out, pkt, len);

  /* A signature over another challenge does not verify. */
  challenge[LD_DISCV5_CHALLENGE_LEN - 1] ^= 1;
  assert_int_equal(ld_discv5_id_verify(signer, 33, challenge, sizeof challenge, p.eph_pubkey, 33,
                                       k.b_id, p.id_signature),
                   LD_ERR_BAD_SIGNATURE);
}

static void handshake_packet(void **state) {
  (void)state;
  check_handshake(V_HANDSHAKE_PACKET, V_CHALLENGE_SEQ1, V_HANDSHAKE_READ_KEY, 1, false);
}

static void handshake_packet_with_record(void **state) {
  (void)state;
  check_handshake(V_HANDSHAKE_ENR_PACKET, V_WHOAREYOU_CHALLENGE, V_HANDSHAKE_ENR_READ_KEY, 1, true);
}

static void ecdh(void **state) {
  (void)state;
  uint8_t pub[33], secret[32], want[33], got[33];
  vhex(V_ECDH_PUB, pub);
  vhex(V_ECDH_SECRET, secret);
  vhex(V_ECDH_SHARED, want);
  assert_int_equal(ld_secp256k1_ecdh_point(secret, pub, 33, got), 0);
  assert_memory_equal(got, want, 33);
}

static void key_derivation(void **state) {
  (void)state;
  uint8_t eph[32], dest[33], a[32], b[32], challenge[LD_DISCV5_CHALLENGE_LEN];
  uint8_t want_i[16], want_r[16], ikey[16], rkey[16];
  vhex(V_KDF_EPH_KEY, eph);
  vhex(V_KDF_DEST_PUB, dest);
  vhex(V_NODE_A_ID, a);
  vhex(V_NODE_B_ID, b);
  vhex(V_WHOAREYOU_CHALLENGE, challenge);
  vhex(V_KDF_INITIATOR_KEY, want_i);
  vhex(V_KDF_RECIPIENT_KEY, want_r);
  assert_int_equal(
      ld_discv5_derive_keys(eph, dest, 33, a, b, challenge, sizeof challenge, ikey, rkey), 0);
  assert_memory_equal(ikey, want_i, 16);
  assert_memory_equal(rkey, want_r, 16);
  dest[0] = 0x05;
  assert_int_equal(
      ld_discv5_derive_keys(eph, dest, 33, a, b, challenge, sizeof challenge, ikey, rkey),
      LD_ERR_BAD_KEY);
}

static void id_nonce_signing(void **state) {
  (void)state;
  uint8_t key[32], pub[33], eph[33], b[32], challenge[LD_DISCV5_CHALLENGE_LEN], want[64], sig[64];
  vhex(V_IDSIG_STATIC_KEY, key);
  vhex(V_IDSIG_EPH_PUB, eph);
  vhex(V_NODE_B_ID, b);
  vhex(V_WHOAREYOU_CHALLENGE, challenge);
  vhex(V_IDSIG, want);
  assert_int_equal(ld_discv5_id_sign(key, challenge, sizeof challenge, eph, 33, b, sig), 0);
  assert_memory_equal(sig, want, 64);
  assert_int_equal(ld_secp256k1_public(key, pub), 0);
  assert_int_equal(ld_discv5_id_verify(pub, 33, challenge, sizeof challenge, eph, 33, b, want), 0);
  b[0] ^= 1;
  assert_int_equal(ld_discv5_id_verify(pub, 33, challenge, sizeof challenge, eph, 33, b, want),
                   LD_ERR_BAD_SIGNATURE);
}

static void encryption(void **state) {
  (void)state;
  uint8_t key[16], nonce[12], pt[4], ad[32], want[20], ct[20], back[4];
  vhex(V_GCM_KEY, key);
  vhex(V_GCM_NONCE, nonce);
  vhex(V_GCM_PT, pt);
  vhex(V_GCM_AD, ad);
  vhex(V_GCM_CT, want);
  ld_aes128_gcm_encrypt(key, nonce, ad, sizeof ad, pt, sizeof pt, ct);
  assert_memory_equal(ct, want, sizeof want);
  assert_int_equal(ld_aes128_gcm_decrypt(key, nonce, ad, sizeof ad, ct, sizeof ct, back), 0);
  assert_memory_equal(back, pt, sizeof pt);
}

/* ---- decoder errors ------------------------------------------------------------------------- */

/* Builds a packet for `dest` with `flag`, `authdata` and a raw message. */
static size_t build(uint8_t *out, const char *proto, const uint8_t *dest, ld_discv5_flag_t flag,
                    const uint8_t *authdata, size_t alen, size_t msg_len) {
  uint8_t iv[16], nonce[12], msg[LD_DISCV5_MAX_PACKET];
  memset(iv, 7, sizeof iv);
  memset(nonce, 9, sizeof nonce);
  memset(msg, 0x5a, sizeof msg);
  size_t len;
  assert_int_equal(ld_discv5_packet_encode(out, &len, proto, dest, iv, flag, nonce, authdata, alen,
                                           NULL, msg, msg_len, NULL, NULL),
                   0);
  return len;
}

static void decoder_errors(void **state) {
  (void)state;
  keys_t k;
  load_keys(&k);
  uint8_t pkt[LD_DISCV5_MAX_PACKET + 1], authdata[LD_DISCV5_MAX_PACKET];
  ld_discv5_packet_t p;
  memset(authdata, 0x11, sizeof authdata);
  size_t len = build(pkt, ETH, k.b_id, LD_DISCV5_FLAG_MESSAGE, k.a_id, 32, 20);
  assert_int_equal(ld_discv5_packet_decode(&p, ETH, k.b_id, pkt, len), 0);
  /* Another network's protocol-id, or a packet masked for someone else. */
  assert_int_equal(ld_discv5_packet_decode(&p, LD_DISCV5_PROTOCOL_ID_WAKU, k.b_id, pkt, len),
                   LD_ERR_PROTOCOL);
  assert_int_equal(ld_discv5_packet_decode(&p, ETH, k.a_id, pkt, len), LD_ERR_PROTOCOL);
  /* Sizes. */
  assert_int_equal(ld_discv5_packet_decode(&p, ETH, k.b_id, pkt, 62), LD_ERR_TRUNCATED);
  memset(pkt, 0, sizeof pkt);
  assert_int_equal(ld_discv5_packet_decode(&p, ETH, k.b_id, pkt, LD_DISCV5_MAX_PACKET + 1),
                   LD_ERR_TOO_LARGE);
  /* An ordinary packet whose message is shorter than a tag, or whose authdata is not 32. */
  len = build(pkt, ETH, k.b_id, LD_DISCV5_FLAG_MESSAGE, k.a_id, 32, 15);
  assert_int_equal(ld_discv5_packet_decode(&p, ETH, k.b_id, pkt, len), LD_ERR_MALFORMED);
  len = build(pkt, ETH, k.b_id, LD_DISCV5_FLAG_MESSAGE, authdata, 33, 20);
  assert_int_equal(ld_discv5_packet_decode(&p, ETH, k.b_id, pkt, len), LD_ERR_MALFORMED);
  /* A WHOAREYOU with a message, or with authdata of another size. */
  len = build(pkt, ETH, k.b_id, LD_DISCV5_FLAG_WHOAREYOU, authdata, 24, 1);
  assert_int_equal(ld_discv5_packet_decode(&p, ETH, k.b_id, pkt, len), LD_ERR_MALFORMED);
  len = build(pkt, ETH, k.b_id, LD_DISCV5_FLAG_WHOAREYOU, authdata, 25, 0);
  assert_int_equal(ld_discv5_packet_decode(&p, ETH, k.b_id, pkt, len), LD_ERR_MALFORMED);
  /* A handshake whose sizes run past its authdata, or are not the v4 scheme's. */
  authdata[32] = 64;
  authdata[33] = 33;
  len = build(pkt, ETH, k.b_id, LD_DISCV5_FLAG_HANDSHAKE, authdata, 34 + 64 + 32, 16);
  assert_int_equal(ld_discv5_packet_decode(&p, ETH, k.b_id, pkt, len), LD_ERR_MALFORMED);
  authdata[32] = 65;
  authdata[33] = 32;
  len = build(pkt, ETH, k.b_id, LD_DISCV5_FLAG_HANDSHAKE, authdata, 34 + 65 + 32, 16);
  assert_int_equal(ld_discv5_packet_decode(&p, ETH, k.b_id, pkt, len), LD_ERR_UNSUPPORTED);
  authdata[32] = 64;
  authdata[33] = 33;
  len = build(pkt, ETH, k.b_id, LD_DISCV5_FLAG_HANDSHAKE, authdata, 34 + 64 + 33 + 5, 16);
  assert_int_equal(ld_discv5_packet_decode(&p, ETH, k.b_id, pkt, len), 0);
  assert_int_equal(p.record_len, 5);
  /* authdata-size beyond the datagram: take a valid packet and cut it. */
  len = build(pkt, ETH, k.b_id, LD_DISCV5_FLAG_HANDSHAKE, authdata, 200, 16);
  assert_int_equal(ld_discv5_packet_decode(&p, ETH, k.b_id, pkt, 16 + 23 + 199), LD_ERR_TRUNCATED);
  /* Packets with flag 3 never come from our encoder: unmask, patch, remask. */
  len = build(pkt, ETH, k.b_id, LD_DISCV5_FLAG_MESSAGE, k.a_id, 32, 20);
  ld_aes128_ctr(k.b_id, pkt, pkt + 16, 23, pkt + 16);
  pkt[16 + 8] = 3;
  ld_aes128_ctr(k.b_id, pkt, pkt + 16, 23, pkt + 16);
  assert_int_equal(ld_discv5_packet_decode(&p, ETH, k.b_id, pkt, len), LD_ERR_MALFORMED);
  /* Version 2. */
  ld_aes128_ctr(k.b_id, pkt, pkt + 16, 23, pkt + 16);
  pkt[16 + 8] = 0;
  pkt[16 + 7] = 2;
  ld_aes128_ctr(k.b_id, pkt, pkt + 16, 23, pkt + 16);
  assert_int_equal(ld_discv5_packet_decode(&p, ETH, k.b_id, pkt, len), LD_ERR_PROTOCOL);
}

static void encoder_limits(void **state) {
  (void)state;
  uint8_t out[LD_DISCV5_MAX_PACKET], id[32] = {0}, iv[16] = {0}, nonce[12] = {0};
  uint8_t big[LD_DISCV5_MAX_PACKET] = {0};
  size_t len;
  /* 16 + 23 + 32 + 1193 + 16 = 1280 fits, one more byte does not. */
  assert_int_equal(ld_discv5_packet_encode(out, &len, ETH, id, iv, LD_DISCV5_FLAG_MESSAGE, nonce,
                                           id, 32, id, big, 1193, NULL, NULL),
                   0);
  assert_int_equal(len, LD_DISCV5_MAX_PACKET);
  assert_int_equal(ld_discv5_packet_encode(out, &len, ETH, id, iv, LD_DISCV5_FLAG_MESSAGE, nonce,
                                           id, 32, id, big, 1194, NULL, NULL),
                   LD_ERR_TOO_LARGE);
  assert_int_equal(ld_discv5_packet_encode(out, &len, "disc", id, iv, LD_DISCV5_FLAG_MESSAGE, nonce,
                                           id, 32, id, big, 4, NULL, NULL),
                   LD_ERR_INVALID_ARG);
  assert_int_equal(ld_discv5_packet_encode(out, &len, ETH, id, iv, (ld_discv5_flag_t)3, nonce, id,
                                           32, id, big, 4, NULL, NULL),
                   LD_ERR_INVALID_ARG);
  uint8_t ad[LD_DISCV5_MAX_PACKET];
  assert_int_equal(ld_discv5_authdata_handshake(ad, 130, id, big, big, NULL, 0), LD_ERR_TOO_LARGE);
  assert_int_equal(ld_discv5_authdata_handshake(ad, 131, id, big, big, NULL, 0), 131);
}

/* The Waku network's protocol-id round trips and is told apart from Ethereum's. */
static void waku_protocol_id(void **state) {
  (void)state;
  keys_t k;
  load_keys(&k);
  uint8_t pkt[LD_DISCV5_MAX_PACKET], key[16] = {3}, pt[64];
  uint8_t iv[16] = {1}, nonce[12] = {2};
  size_t len, pt_len;
  const uint8_t msg[] = {0x01, 0xc2, 0x01, 0x01};
  assert_int_equal(ld_discv5_packet_encode(pkt, &len, LD_DISCV5_PROTOCOL_ID_WAKU, k.b_id, iv,
                                           LD_DISCV5_FLAG_MESSAGE, nonce, k.a_id, 32, key, msg,
                                           sizeof msg, NULL, NULL),
                   0);
  ld_discv5_packet_t p;
  assert_int_equal(ld_discv5_packet_decode(&p, ETH, k.b_id, pkt, len), LD_ERR_PROTOCOL);
  assert_int_equal(ld_discv5_packet_decode(&p, LD_DISCV5_PROTOCOL_ID_WAKU, k.b_id, pkt, len), 0);
  assert_int_equal(ld_discv5_packet_open(&p, key, pt, &pt_len), 0);
  assert_int_equal(pt_len, sizeof msg);
  assert_memory_equal(pt, msg, sizeof msg);
  /* A flipped bit of the masked authdata (here the src-id) breaks the authentication. */
  pkt[16 + 23 + 5] ^= 1;
  assert_int_equal(ld_discv5_packet_decode(&p, LD_DISCV5_PROTOCOL_ID_WAKU, k.b_id, pkt, len), 0);
  assert_int_equal(ld_discv5_packet_open(&p, key, pt, &pt_len), LD_ERR_DECRYPT);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(node_ids_match_the_keys),
      cmocka_unit_test(ping_message_packet),
      cmocka_unit_test(whoareyou_packet),
      cmocka_unit_test(handshake_packet),
      cmocka_unit_test(handshake_packet_with_record),
      cmocka_unit_test(ecdh),
      cmocka_unit_test(key_derivation),
      cmocka_unit_test(id_nonce_signing),
      cmocka_unit_test(encryption),
      cmocka_unit_test(decoder_errors),
      cmocka_unit_test(encoder_limits),
      cmocka_unit_test(waku_protocol_id),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
