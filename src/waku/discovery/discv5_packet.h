/* Node Discovery v5.1 packets (devp2p discv5-wire.md, discv5-theory.md "Handshake Steps"):
 * header masking, the three packet kinds, message encryption, and the handshake's key
 * derivation and ID signature.
 *
 *   packet        = masking-iv ‖ masked-header ‖ message
 *   masked-header = AES-128-CTR(key = dest-id[:16], iv = masking-iv, header)
 *   header        = protocol-id ‖ version 0x0001 ‖ flag ‖ nonce(12) ‖ authdata-size(2) ‖ authdata
 *   message       = AES-128-GCM(key, nonce, message-pt, ad = masking-iv ‖ header)
 *
 * Authdata is src-id (flag 0, ordinary message), id-nonce(16) ‖ enr-seq(8) (flag 1, WHOAREYOU,
 * no message) or src-id ‖ sig-size ‖ eph-key-size ‖ id-signature ‖ eph-pubkey ‖ [record]
 * (flag 2, handshake message).
 *
 * The protocol-id is a parameter: "discv5" on Ethereum networks, "d5waku" on Waku networks
 * (nwaku builds nim-eth with -d:discv5_protocol_id=d5waku, 33/WAKU2-DISCV5), so the two DHTs
 * never mix. Only the "v4" identity scheme exists: 64-byte signatures and 33-byte compressed
 * secp256k1 ephemeral keys.
 *
 * Pure functions on caller storage, no heap; any thread. Nothing here keeps state: sessions,
 * challenges and request matching live in the engine (discv5.h). */
#ifndef LD_WAKU_DISCOVERY_DISCV5_PACKET_H
#define LD_WAKU_DISCOVERY_DISCV5_PACKET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Packet sizes: implementations must neither send nor process packets above 1280 bytes, and
 * reject packets below 63 (the size of a WHOAREYOU). */
#define LD_DISCV5_MAX_PACKET 1280
#define LD_DISCV5_MIN_PACKET 63

#define LD_DISCV5_PROTOCOL_ID_LEN 6
#define LD_DISCV5_PROTOCOL_ID_ETH "discv5"
#define LD_DISCV5_PROTOCOL_ID_WAKU "d5waku"
#define LD_DISCV5_VERSION 1

#define LD_DISCV5_NODE_ID_LEN 32
#define LD_DISCV5_IV_LEN 16
#define LD_DISCV5_NONCE_LEN 12
#define LD_DISCV5_ID_NONCE_LEN 16
#define LD_DISCV5_KEY_LEN 16
#define LD_DISCV5_TAG_LEN 16
#define LD_DISCV5_SIG_LEN 64
#define LD_DISCV5_EPH_KEY_LEN 33
#define LD_DISCV5_STATIC_HEADER_LEN 23 /* protocol-id 6, version 2, flag 1, nonce 12, size 2 */
#define LD_DISCV5_WHOAREYOU_AUTHDATA_LEN 24
#define LD_DISCV5_HANDSHAKE_HEAD_LEN 34 /* src-id, sig-size, eph-key-size */
/* masking-iv ‖ header of a WHOAREYOU: the challenge-data of the handshake. */
#define LD_DISCV5_CHALLENGE_LEN                                                                    \
  (LD_DISCV5_IV_LEN + LD_DISCV5_STATIC_HEADER_LEN + LD_DISCV5_WHOAREYOU_AUTHDATA_LEN)
/* Longest masking-iv ‖ header: a whole packet. */
#define LD_DISCV5_MAX_AD LD_DISCV5_MAX_PACKET
/* Bytes an ordinary message packet adds around its plaintext (iv, header, tag): 87. */
#define LD_DISCV5_MESSAGE_OVERHEAD                                                                 \
  (LD_DISCV5_IV_LEN + LD_DISCV5_STATIC_HEADER_LEN + LD_DISCV5_NODE_ID_LEN + LD_DISCV5_TAG_LEN)

typedef enum ld_discv5_flag {
  LD_DISCV5_FLAG_MESSAGE = 0,
  LD_DISCV5_FLAG_WHOAREYOU = 1,
  LD_DISCV5_FLAG_HANDSHAKE = 2,
} ld_discv5_flag_t;

/* A decoded packet. The header is unmasked into ad[] (masking-iv ‖ header, the message's
 * additional data, and for a WHOAREYOU the challenge-data); the pointers below point into ad[]
 * or, for `message`, into the datagram given to ld_discv5_packet_decode, which must outlive
 * their use. Caller storage (about 1.4 KB). */
typedef struct ld_discv5_packet {
  ld_discv5_flag_t flag;
  uint8_t nonce[LD_DISCV5_NONCE_LEN];
  size_t ad_len;
  uint8_t ad[LD_DISCV5_MAX_AD];
  const uint8_t *authdata;
  size_t authdata_len;
  const uint8_t *message; /* ciphertext ‖ tag; empty for WHOAREYOU */
  size_t message_len;
  /* ordinary and handshake packets */
  const uint8_t *src_id;
  /* WHOAREYOU */
  const uint8_t *id_nonce;
  uint64_t enr_seq;
  /* handshake */
  const uint8_t *id_signature; /* LD_DISCV5_SIG_LEN bytes */
  const uint8_t *eph_pubkey;   /* LD_DISCV5_EPH_KEY_LEN bytes */
  const uint8_t *record;       /* the sender's ENR (RLP), NULL when absent */
  size_t record_len;
} ld_discv5_packet_t;

/* Unmasks and parses one datagram addressed to `local_id`. Checks the protocol-id and version,
 * the flag, and the authdata layout of each kind; the message is not decrypted (see
 * ld_discv5_packet_open), nor is a handshake's signature or record checked. Errors:
 * LD_ERR_TOO_LARGE (more than LD_DISCV5_MAX_PACKET bytes), LD_ERR_TRUNCATED (fewer than
 * LD_DISCV5_MIN_PACKET, or authdata-size runs past the datagram), LD_ERR_PROTOCOL (another
 * protocol-id or version: not a packet of this network, or not for us), LD_ERR_MALFORMED (an
 * unknown flag, an authdata size that does not fit the flag, a WHOAREYOU with a message, a
 * message shorter than its tag), LD_ERR_UNSUPPORTED (a handshake whose sig-size or eph-key-size
 * is not the "v4" scheme's). `p` is meaningless on failure. */
int ld_discv5_packet_decode(ld_discv5_packet_t *p, const char *protocol_id,
                            const uint8_t local_id[LD_DISCV5_NODE_ID_LEN], const uint8_t *data,
                            size_t len);

/* Decrypts a decoded ordinary or handshake packet's message with `key` into `pt` (room for
 * p->message_len − 16 bytes) and stores its length in *pt_len. LD_ERR_DECRYPT when the tag does
 * not verify (nothing released), LD_ERR_STATE for a WHOAREYOU. */
int ld_discv5_packet_open(const ld_discv5_packet_t *p, const uint8_t key[LD_DISCV5_KEY_LEN],
                          uint8_t *pt, size_t *pt_len);

/* Builds a packet for `dest_id` into out[0..LD_DISCV5_MAX_PACKET) and stores its length in
 * *out_len: masking-iv `iv`, the header of `flag` with `nonce` and `authdata`, then the message.
 * With `key`, the message is pt encrypted under key and nonce with masking-iv ‖ header as
 * additional data; without (NULL), pt is copied as it is (the random filler of a packet sent
 * before any session exists; a WHOAREYOU has none). When `ad_out` is not NULL it receives the
 * unmasked masking-iv ‖ header (LD_DISCV5_MAX_AD bytes of room) and *ad_len its length: for a
 * WHOAREYOU, the challenge-data to keep. LD_ERR_TOO_LARGE when the packet would exceed
 * LD_DISCV5_MAX_PACKET, LD_ERR_INVALID_ARG for an unknown flag or a protocol-id that is not 6
 * bytes. */
int ld_discv5_packet_encode(uint8_t out[LD_DISCV5_MAX_PACKET], size_t *out_len,
                            const char *protocol_id, const uint8_t dest_id[LD_DISCV5_NODE_ID_LEN],
                            const uint8_t iv[LD_DISCV5_IV_LEN], ld_discv5_flag_t flag,
                            const uint8_t nonce[LD_DISCV5_NONCE_LEN], const uint8_t *authdata,
                            size_t authdata_len, const uint8_t *key, const uint8_t *pt,
                            size_t pt_len, uint8_t *ad_out, size_t *ad_len);

/* WHOAREYOU authdata: id-nonce ‖ enr-seq (big-endian). */
void ld_discv5_authdata_whoareyou(uint8_t out[LD_DISCV5_WHOAREYOU_AUTHDATA_LEN],
                                  const uint8_t id_nonce[LD_DISCV5_ID_NONCE_LEN], uint64_t enr_seq);

/* Handshake authdata: src-id ‖ 64 ‖ 33 ‖ id-signature ‖ eph-pubkey ‖ record (record may be NULL
 * when record_len is 0) into out[0..cap). Returns the length or LD_ERR_TOO_LARGE. */
int ld_discv5_authdata_handshake(uint8_t *out, size_t cap,
                                 const uint8_t src_id[LD_DISCV5_NODE_ID_LEN],
                                 const uint8_t sig[LD_DISCV5_SIG_LEN],
                                 const uint8_t eph_pubkey[LD_DISCV5_EPH_KEY_LEN],
                                 const uint8_t *record, size_t record_len);

/* ---- handshake cryptography ("v4" identity scheme) ----------------------------------------- */

/* The session keys: secret = ECDH(pub, secret_key) as the 33-byte compressed point,
 * prk = HKDF-Extract(salt = challenge, secret), key-data = HKDF-Expand(prk, "discovery v5 key
 * agreement" ‖ id_a ‖ id_b, 32); initiator-key = key-data[:16], recipient-key = key-data[16:].
 * The initiator (node A) passes its ephemeral secret and B's static key, B its static secret and
 * A's ephemeral key; both pass id_a = A's node ID, id_b = B's. LD_ERR_BAD_KEY for an invalid
 * scalar or point. */
int ld_discv5_derive_keys(const uint8_t secret_key[32], const uint8_t *pub, size_t publen,
                          const uint8_t id_a[LD_DISCV5_NODE_ID_LEN],
                          const uint8_t id_b[LD_DISCV5_NODE_ID_LEN], const uint8_t *challenge,
                          size_t challenge_len, uint8_t initiator_key[LD_DISCV5_KEY_LEN],
                          uint8_t recipient_key[LD_DISCV5_KEY_LEN]);

/* The ID signature of the handshake initiator: ECDSA with its static key over
 * sha256("discovery v5 identity proof" ‖ challenge ‖ eph_pubkey ‖ id_b), 64 bytes r ‖ s. */
int ld_discv5_id_sign(const uint8_t static_key[32], const uint8_t *challenge, size_t challenge_len,
                      const uint8_t *eph_pubkey, size_t eph_len,
                      const uint8_t id_b[LD_DISCV5_NODE_ID_LEN], uint8_t sig[LD_DISCV5_SIG_LEN]);

/* Checks an ID signature against the initiator's static public key `pub` (33 or 65 bytes).
 * 0 when valid, LD_ERR_BAD_SIGNATURE or LD_ERR_BAD_KEY. */
int ld_discv5_id_verify(const uint8_t *pub, size_t publen, const uint8_t *challenge,
                        size_t challenge_len, const uint8_t *eph_pubkey, size_t eph_len,
                        const uint8_t id_b[LD_DISCV5_NODE_ID_LEN],
                        const uint8_t sig[LD_DISCV5_SIG_LEN]);

#endif
