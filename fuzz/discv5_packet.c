/* Fuzz target: discv5 packets as node B of the devp2p test vectors receives them. The first
 * byte picks the form of the rest: even, a datagram as it travels (masked header); odd, a
 * datagram whose header is given unmasked and is masked here first, so that mutations reach
 * the flag, authdata sizes, handshake fields and records directly. A decoded packet is opened
 * with the vectors' session keys; a handshake packet's record is decoded, its ID signature
 * checked and its keys derived with B's key, and a message that decrypts is decoded and encoded
 * again (it must round trip). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "crypto/crypto.h"
#include "crypto/keccak.h"
#include "waku/discovery/discv5_msg.h"
#include "waku/discovery/discv5_packet.h"
#include "waku/enr/enr.h"

static const uint8_t node_b_key[32] = {
    0x66, 0xfb, 0x62, 0xbf, 0xbd, 0x66, 0xb9, 0x17, 0x7a, 0x13, 0x8c, 0x1e, 0x5c, 0xdd, 0xbe, 0x4f,
    0x7c, 0x30, 0xc3, 0x43, 0xe9, 0x4e, 0x68, 0xdf, 0x87, 0x69, 0x45, 0x9c, 0xb1, 0xcd, 0xe6, 0x28};
/* The read keys of the ping, handshake and handshake-with-record vectors. */
static const uint8_t read_keys[3][16] = {{0},
                                         {0x4f, 0x9f, 0xac, 0x6d, 0xe7, 0x56, 0x7d, 0x1e, 0x3b,
                                          0x12, 0x41, 0xdf, 0xfe, 0x90, 0xf6, 0x62},
                                         {0x53, 0xb1, 0xc0, 0x75, 0xf4, 0x18, 0x76, 0x42, 0x31,
                                          0x54, 0xe1, 0x57, 0x47, 0x0c, 0x2f, 0x48}};

/* The challenges of the handshake vectors (enr-seq 0 and 1): masking-iv 0, nonce 0102…0c,
 * id-nonce 0102…10. */
static uint8_t challenges[2][LD_DISCV5_CHALLENGE_LEN];

static uint8_t g_b_id[32];

static void init(void) {
  static int done;
  if (done)
    return;
  uint8_t pub[33];
  if (ld_secp256k1_public(node_b_key, pub) != 0 || ld_secp256k1_keccak_id(pub, 33, g_b_id) != 0)
    abort();
  for (int seq = 0; seq < 2; seq++) {
    uint8_t *c = challenges[seq];
    memset(c, 0, LD_DISCV5_CHALLENGE_LEN);
    memcpy(c + 16, "discv5\x00\x01\x01", 9);
    for (int i = 0; i < 12; i++)
      c[25 + i] = (uint8_t)(i + 1);
    c[38] = 24;
    for (int i = 0; i < 16; i++)
      c[39 + i] = (uint8_t)(i + 1);
    c[62] = (uint8_t)seq;
  }
  done = 1;
}

static void use_message(const uint8_t *pt, size_t len) {
  ld_discv5_msg_t m, again;
  if (ld_discv5_msg_decode(&m, pt, len) != 0)
    return;
  ld_buf_t b;
  ld_buf_init(&b);
  if (ld_discv5_msg_encode(&b, &m) != 0 || ld_discv5_msg_decode(&again, b.data, b.len) != 0 ||
      again.type != m.type || again.req_id_len != m.req_id_len)
    abort();
  ld_buf_clear(&b);
}

/* What node B does with a handshake answering one of the vectors' challenges. */
static void use_handshake(const ld_discv5_packet_t *p, const uint8_t *challenge) {
  ld_enr_t enr;
  uint8_t ikey[16], rkey[16];
  if (p->record != NULL && ld_enr_decode(&enr, p->record, p->record_len) == 0)
    ld_discv5_id_verify(enr.pubkey, sizeof enr.pubkey, challenge, LD_DISCV5_CHALLENGE_LEN,
                        p->eph_pubkey, LD_DISCV5_EPH_KEY_LEN, g_b_id, p->id_signature);
  if (ld_discv5_derive_keys(node_b_key, p->eph_pubkey, LD_DISCV5_EPH_KEY_LEN, p->src_id, g_b_id,
                            challenge, LD_DISCV5_CHALLENGE_LEN, ikey, rkey) == 0) {
    uint8_t pt[LD_DISCV5_MAX_PACKET];
    size_t pt_len;
    if (ld_discv5_packet_open(p, ikey, pt, &pt_len) == 0)
      use_message(pt, pt_len);
  }
}

static void use_packet(const uint8_t *data, size_t size) {
  ld_discv5_packet_t p;
  if (ld_discv5_packet_decode(&p, LD_DISCV5_PROTOCOL_ID_ETH, g_b_id, data, size) != 0)
    return;
  if (p.ad_len > size || p.authdata_len + LD_DISCV5_STATIC_HEADER_LEN + 16 != p.ad_len ||
      p.ad_len + p.message_len != size)
    abort();
  if (p.flag == LD_DISCV5_FLAG_WHOAREYOU)
    return;
  if (p.flag == LD_DISCV5_FLAG_HANDSHAKE)
    for (int i = 0; i < 2; i++)
      use_handshake(&p, challenges[i]);
  uint8_t pt[LD_DISCV5_MAX_PACKET];
  size_t pt_len;
  for (int i = 0; i < 3; i++)
    if (ld_discv5_packet_open(&p, read_keys[i], pt, &pt_len) == 0)
      use_message(pt, pt_len);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  init();
  if (size < 1)
    return 0;
  uint8_t mode = data[0];
  data++;
  size--;
  if (size > LD_DISCV5_MAX_PACKET + 1)
    size = LD_DISCV5_MAX_PACKET + 1;
  uint8_t pkt[LD_DISCV5_MAX_PACKET + 1];
  memcpy(pkt, data, size);
  if ((mode & 1) != 0 && size >= LD_DISCV5_IV_LEN + LD_DISCV5_STATIC_HEADER_LEN) {
    /* Mask the header whose authdata-size the unmasked bytes announce (as far as present). */
    size_t header = LD_DISCV5_STATIC_HEADER_LEN +
                    (size_t)(pkt[LD_DISCV5_IV_LEN + 21] << 8 | pkt[LD_DISCV5_IV_LEN + 22]);
    if (header > size - LD_DISCV5_IV_LEN)
      header = size - LD_DISCV5_IV_LEN;
    ld_aes128_ctr(g_b_id, pkt, pkt + LD_DISCV5_IV_LEN, header, pkt + LD_DISCV5_IV_LEN);
  }
  use_packet(pkt, size);
  return 0;
}
