#include "waku/discovery/discv5_packet.h"

#include <string.h>

#include "base/error.h"
#include "crypto/crypto.h"

#define ID_SIGNATURE_TEXT "discovery v5 identity proof"
#define KEY_AGREEMENT_TEXT "discovery v5 key agreement"

/* Offsets in the static header. */
#define SH_VERSION 6
#define SH_FLAG 8
#define SH_NONCE 9
#define SH_AUTHDATA_SIZE 21

static uint16_t be16(const uint8_t *p) {
  return (uint16_t)(p[0] << 8 | p[1]);
}

static uint64_t be64(const uint8_t *p) {
  uint64_t v = 0;
  for (int i = 0; i < 8; i++)
    v = v << 8 | p[i];
  return v;
}

/* Checks the authdata of an ordinary message packet and points at its parts. */
static int parse_message(ld_discv5_packet_t *p) {
  if (p->authdata_len != LD_DISCV5_NODE_ID_LEN || p->message_len < LD_DISCV5_TAG_LEN)
    return LD_ERR_MALFORMED;
  p->src_id = p->authdata;
  return 0;
}

static int parse_whoareyou(ld_discv5_packet_t *p) {
  if (p->authdata_len != LD_DISCV5_WHOAREYOU_AUTHDATA_LEN || p->message_len != 0)
    return LD_ERR_MALFORMED;
  p->id_nonce = p->authdata;
  p->enr_seq = be64(p->authdata + LD_DISCV5_ID_NONCE_LEN);
  return 0;
}

static int parse_handshake(ld_discv5_packet_t *p) {
  const uint8_t *a = p->authdata;
  if (p->authdata_len < LD_DISCV5_HANDSHAKE_HEAD_LEN || p->message_len < LD_DISCV5_TAG_LEN)
    return LD_ERR_MALFORMED;
  size_t sig_size = a[32], key_size = a[33];
  if (p->authdata_len < LD_DISCV5_HANDSHAKE_HEAD_LEN + sig_size + key_size)
    return LD_ERR_MALFORMED;
  if (sig_size != LD_DISCV5_SIG_LEN || key_size != LD_DISCV5_EPH_KEY_LEN)
    return LD_ERR_UNSUPPORTED;
  p->src_id = a;
  p->id_signature = a + LD_DISCV5_HANDSHAKE_HEAD_LEN;
  p->eph_pubkey = p->id_signature + sig_size;
  size_t used = LD_DISCV5_HANDSHAKE_HEAD_LEN + sig_size + key_size;
  p->record_len = p->authdata_len - used;
  p->record = p->record_len > 0 ? a + used : NULL;
  return 0;
}

/* Unmasks the static header, checks it, then unmasks the authdata it announces. The CTR
 * keystream runs on from the static header into the authdata, so both are unmasked in one
 * call over their joint length once that length is known. */
static int unmask_header(ld_discv5_packet_t *p, const char *protocol_id, const uint8_t *local_id,
                         const uint8_t *data, size_t len) {
  uint8_t *header = p->ad + LD_DISCV5_IV_LEN;
  memcpy(p->ad, data, LD_DISCV5_IV_LEN);
  ld_aes128_ctr(local_id, data, data + LD_DISCV5_IV_LEN, LD_DISCV5_STATIC_HEADER_LEN, header);
  if (memcmp(header, protocol_id, LD_DISCV5_PROTOCOL_ID_LEN) != 0 ||
      be16(header + SH_VERSION) != LD_DISCV5_VERSION)
    return LD_ERR_PROTOCOL;
  size_t authdata_len = be16(header + SH_AUTHDATA_SIZE);
  size_t header_len = LD_DISCV5_STATIC_HEADER_LEN + authdata_len;
  if (LD_DISCV5_IV_LEN + header_len > len)
    return LD_ERR_TRUNCATED;
  ld_aes128_ctr(local_id, data, data + LD_DISCV5_IV_LEN, header_len, header);
  p->ad_len = LD_DISCV5_IV_LEN + header_len;
  p->flag = (ld_discv5_flag_t)header[SH_FLAG];
  memcpy(p->nonce, header + SH_NONCE, LD_DISCV5_NONCE_LEN);
  p->authdata = header + LD_DISCV5_STATIC_HEADER_LEN;
  p->authdata_len = authdata_len;
  p->message = data + p->ad_len;
  p->message_len = len - p->ad_len;
  return 0;
}

int ld_discv5_packet_decode(ld_discv5_packet_t *p, const char *protocol_id,
                            const uint8_t local_id[LD_DISCV5_NODE_ID_LEN], const uint8_t *data,
                            size_t len) {
  if (len > LD_DISCV5_MAX_PACKET)
    return LD_ERR_TOO_LARGE;
  if (len < LD_DISCV5_MIN_PACKET)
    return LD_ERR_TRUNCATED;
  if (strlen(protocol_id) != LD_DISCV5_PROTOCOL_ID_LEN)
    return LD_ERR_INVALID_ARG;
  p->src_id = p->id_nonce = p->id_signature = p->eph_pubkey = p->record = NULL;
  p->record_len = 0;
  p->enr_seq = 0;
  int rc = unmask_header(p, protocol_id, local_id, data, len);
  if (rc != 0)
    return rc;
  switch (p->flag) {
  case LD_DISCV5_FLAG_MESSAGE:
    return parse_message(p);
  case LD_DISCV5_FLAG_WHOAREYOU:
    return parse_whoareyou(p);
  case LD_DISCV5_FLAG_HANDSHAKE:
    return parse_handshake(p);
  }
  return LD_ERR_MALFORMED;
}

int ld_discv5_packet_open(const ld_discv5_packet_t *p, const uint8_t key[LD_DISCV5_KEY_LEN],
                          uint8_t *pt, size_t *pt_len) {
  if (p->flag == LD_DISCV5_FLAG_WHOAREYOU || p->message_len < LD_DISCV5_TAG_LEN)
    return LD_ERR_STATE;
  int rc = ld_aes128_gcm_decrypt(key, p->nonce, p->ad, p->ad_len, p->message, p->message_len, pt);
  if (rc != 0)
    return rc;
  *pt_len = p->message_len - LD_DISCV5_TAG_LEN;
  return 0;
}

static void write_static_header(uint8_t *h, const char *protocol_id, ld_discv5_flag_t flag,
                                const uint8_t nonce[LD_DISCV5_NONCE_LEN], size_t authdata_len) {
  memcpy(h, protocol_id, LD_DISCV5_PROTOCOL_ID_LEN);
  h[SH_VERSION] = 0;
  h[SH_VERSION + 1] = LD_DISCV5_VERSION;
  h[SH_FLAG] = (uint8_t)flag;
  memcpy(h + SH_NONCE, nonce, LD_DISCV5_NONCE_LEN);
  h[SH_AUTHDATA_SIZE] = (uint8_t)(authdata_len >> 8);
  h[SH_AUTHDATA_SIZE + 1] = (uint8_t)authdata_len;
}

int ld_discv5_packet_encode(uint8_t out[LD_DISCV5_MAX_PACKET], size_t *out_len,
                            const char *protocol_id, const uint8_t dest_id[LD_DISCV5_NODE_ID_LEN],
                            const uint8_t iv[LD_DISCV5_IV_LEN], ld_discv5_flag_t flag,
                            const uint8_t nonce[LD_DISCV5_NONCE_LEN], const uint8_t *authdata,
                            size_t authdata_len, const uint8_t *key, const uint8_t *pt,
                            size_t pt_len, uint8_t *ad_out, size_t *ad_len) {
  if (flag > LD_DISCV5_FLAG_HANDSHAKE || strlen(protocol_id) != LD_DISCV5_PROTOCOL_ID_LEN)
    return LD_ERR_INVALID_ARG;
  size_t ad_size = LD_DISCV5_IV_LEN + LD_DISCV5_STATIC_HEADER_LEN + authdata_len;
  size_t msg_size = pt_len + (key != NULL ? LD_DISCV5_TAG_LEN : 0);
  if (authdata_len > UINT16_MAX || ad_size > LD_DISCV5_MAX_PACKET ||
      msg_size > LD_DISCV5_MAX_PACKET - ad_size)
    return LD_ERR_TOO_LARGE;
  /* The unmasked masking-iv ‖ header is built in `out`, used as the message's additional data,
   * copied out if asked for, then masked in place. */
  uint8_t *header = out + LD_DISCV5_IV_LEN;
  memcpy(out, iv, LD_DISCV5_IV_LEN);
  write_static_header(header, protocol_id, flag, nonce, authdata_len);
  if (authdata_len > 0)
    memcpy(header + LD_DISCV5_STATIC_HEADER_LEN, authdata, authdata_len);
  if (key != NULL)
    ld_aes128_gcm_encrypt(key, nonce, out, ad_size, pt, pt_len, out + ad_size);
  else if (pt_len > 0)
    memcpy(out + ad_size, pt, pt_len);
  if (ad_out != NULL) {
    memcpy(ad_out, out, ad_size);
    *ad_len = ad_size;
  }
  ld_aes128_ctr(dest_id, iv, header, ad_size - LD_DISCV5_IV_LEN, header);
  *out_len = ad_size + msg_size;
  return 0;
}

void ld_discv5_authdata_whoareyou(uint8_t out[LD_DISCV5_WHOAREYOU_AUTHDATA_LEN],
                                  const uint8_t id_nonce[LD_DISCV5_ID_NONCE_LEN],
                                  uint64_t enr_seq) {
  memcpy(out, id_nonce, LD_DISCV5_ID_NONCE_LEN);
  for (int i = 0; i < 8; i++)
    out[LD_DISCV5_ID_NONCE_LEN + i] = (uint8_t)(enr_seq >> (56 - 8 * i));
}

int ld_discv5_authdata_handshake(uint8_t *out, size_t cap,
                                 const uint8_t src_id[LD_DISCV5_NODE_ID_LEN],
                                 const uint8_t sig[LD_DISCV5_SIG_LEN],
                                 const uint8_t eph_pubkey[LD_DISCV5_EPH_KEY_LEN],
                                 const uint8_t *record, size_t record_len) {
  size_t len =
      LD_DISCV5_HANDSHAKE_HEAD_LEN + LD_DISCV5_SIG_LEN + LD_DISCV5_EPH_KEY_LEN + record_len;
  if (len > cap)
    return LD_ERR_TOO_LARGE;
  memcpy(out, src_id, LD_DISCV5_NODE_ID_LEN);
  out[32] = LD_DISCV5_SIG_LEN;
  out[33] = LD_DISCV5_EPH_KEY_LEN;
  memcpy(out + LD_DISCV5_HANDSHAKE_HEAD_LEN, sig, LD_DISCV5_SIG_LEN);
  memcpy(out + LD_DISCV5_HANDSHAKE_HEAD_LEN + LD_DISCV5_SIG_LEN, eph_pubkey, LD_DISCV5_EPH_KEY_LEN);
  if (record_len > 0)
    memcpy(out + len - record_len, record, record_len);
  return (int)len;
}

int ld_discv5_derive_keys(const uint8_t secret_key[32], const uint8_t *pub, size_t publen,
                          const uint8_t id_a[LD_DISCV5_NODE_ID_LEN],
                          const uint8_t id_b[LD_DISCV5_NODE_ID_LEN], const uint8_t *challenge,
                          size_t challenge_len, uint8_t initiator_key[LD_DISCV5_KEY_LEN],
                          uint8_t recipient_key[LD_DISCV5_KEY_LEN]) {
  uint8_t shared[LD_SECP256K1_PUBLIC_LEN];
  uint8_t info[sizeof KEY_AGREEMENT_TEXT - 1 + 2 * LD_DISCV5_NODE_ID_LEN];
  uint8_t key_data[2 * LD_DISCV5_KEY_LEN];
  int rc = ld_secp256k1_ecdh_point(secret_key, pub, publen, shared);
  if (rc != 0)
    return rc;
  size_t n = sizeof KEY_AGREEMENT_TEXT - 1;
  memcpy(info, KEY_AGREEMENT_TEXT, n);
  memcpy(info + n, id_a, LD_DISCV5_NODE_ID_LEN);
  memcpy(info + n + LD_DISCV5_NODE_ID_LEN, id_b, LD_DISCV5_NODE_ID_LEN);
  rc = ld_hkdf_sha256(challenge, challenge_len, shared, sizeof shared, info, sizeof info, key_data,
                      sizeof key_data);
  if (rc == 0) {
    memcpy(initiator_key, key_data, LD_DISCV5_KEY_LEN);
    memcpy(recipient_key, key_data + LD_DISCV5_KEY_LEN, LD_DISCV5_KEY_LEN);
  }
  memset(shared, 0, sizeof shared);
  memset(key_data, 0, sizeof key_data);
  return rc;
}

/* sha256("discovery v5 identity proof" ‖ challenge ‖ eph_pubkey ‖ id_b). */
static int id_digest(const uint8_t *challenge, size_t challenge_len, const uint8_t *eph_pubkey,
                     size_t eph_len, const uint8_t id_b[LD_DISCV5_NODE_ID_LEN],
                     uint8_t digest[LD_SHA256_LEN]) {
  uint8_t input[sizeof ID_SIGNATURE_TEXT - 1 + LD_DISCV5_MAX_AD + 65 + LD_DISCV5_NODE_ID_LEN];
  size_t n = sizeof ID_SIGNATURE_TEXT - 1;
  if (challenge_len > LD_DISCV5_MAX_AD || eph_len > 65)
    return LD_ERR_INVALID_ARG;
  memcpy(input, ID_SIGNATURE_TEXT, n);
  memcpy(input + n, challenge, challenge_len);
  n += challenge_len;
  memcpy(input + n, eph_pubkey, eph_len);
  n += eph_len;
  memcpy(input + n, id_b, LD_DISCV5_NODE_ID_LEN);
  n += LD_DISCV5_NODE_ID_LEN;
  ld_sha256(input, n, digest);
  return 0;
}

int ld_discv5_id_sign(const uint8_t static_key[32], const uint8_t *challenge, size_t challenge_len,
                      const uint8_t *eph_pubkey, size_t eph_len,
                      const uint8_t id_b[LD_DISCV5_NODE_ID_LEN], uint8_t sig[LD_DISCV5_SIG_LEN]) {
  uint8_t digest[LD_SHA256_LEN];
  int rc = id_digest(challenge, challenge_len, eph_pubkey, eph_len, id_b, digest);
  return rc != 0 ? rc : ld_secp256k1_sign_digest(static_key, digest, sig);
}

int ld_discv5_id_verify(const uint8_t *pub, size_t publen, const uint8_t *challenge,
                        size_t challenge_len, const uint8_t *eph_pubkey, size_t eph_len,
                        const uint8_t id_b[LD_DISCV5_NODE_ID_LEN],
                        const uint8_t sig[LD_DISCV5_SIG_LEN]) {
  uint8_t digest[LD_SHA256_LEN];
  int rc = id_digest(challenge, challenge_len, eph_pubkey, eph_len, id_b, digest);
  return rc != 0 ? rc : ld_secp256k1_verify_digest(pub, publen, digest, sig);
}
