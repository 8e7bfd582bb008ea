/* libp2p identity keys: the key protobuf, signing and verification.
 *
 * Private keys are secp256k1 (the default, as nwaku's node keys) or Ed25519. Public keys of any
 * type can be decoded and carried (their protobuf is kept verbatim so that peer IDs can be
 * derived), but only Ed25519 and secp256k1 signatures can be verified; others give
 * LD_ERR_UNSUPPORTED. */
#ifndef LD_P2P_KEY_H
#define LD_P2P_KEY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/buf.h"
#include "crypto/crypto.h"

typedef enum ld_key_type {
  LD_KEY_RSA = 0,
  LD_KEY_ED25519 = 1,
  LD_KEY_SECP256K1 = 2,
  LD_KEY_ECDSA = 3,
} ld_key_type_t;

/* Largest PublicKey protobuf accepted (an RSA-8192 SubjectPublicKeyInfo plus the header). */
#define LD_PUBKEY_PROTO_MAX 1100
/* Largest signature produced or accepted by the key types we verify. */
#define LD_SIG_MAX 72

typedef struct ld_privkey {
  ld_key_type_t type;                    /* LD_KEY_SECP256K1 or LD_KEY_ED25519 */
  uint8_t secret[LD_ED25519_SECRET_LEN]; /* secp256k1: 32-byte scalar; Ed25519: seed ‖ pub */
  uint8_t pub[LD_SECP256K1_PUBLIC_LEN];  /* secp256k1: 33 bytes compressed; Ed25519: 32 bytes */
} ld_privkey_t;

typedef struct ld_pubkey {
  ld_key_type_t type;
  size_t data_len;  /* length of the key's Data field */
  size_t proto_len; /* length of the full PublicKey protobuf */
  uint8_t
      proto[LD_PUBKEY_PROTO_MAX]; /* `08 type 12 len data`; Data starts at proto_len - data_len */
} ld_pubkey_t;

/* Generates a fresh private key of `type` (secp256k1 or Ed25519). */
int ld_privkey_generate(ld_privkey_t *key, ld_key_type_t type);

/* A secp256k1 key from its 32-byte scalar (nwaku's --nodekey). LD_ERR_BAD_KEY when invalid. */
int ld_privkey_from_secp256k1(ld_privkey_t *key, const uint8_t secret[32]);

/* An Ed25519 key from its 32-byte seed. */
int ld_privkey_from_ed25519_seed(ld_privkey_t *key, const uint8_t seed[32]);

/* Decodes a PrivateKey protobuf (secp256k1: 32-byte scalar; Ed25519: 64 bytes seed ‖ pub, or the
 * legacy 96 bytes whose two public keys must be equal). */
int ld_privkey_decode(ld_privkey_t *key, const uint8_t *data, size_t len);

/* Appends the PrivateKey protobuf to `out`. */
int ld_privkey_encode(const ld_privkey_t *key, ld_buf_t *out);

/* The public half of `key`. */
void ld_privkey_public(const ld_privkey_t *key, ld_pubkey_t *pub);

/* Signs `msg` by libp2p's rules (secp256k1: ECDSA over SHA-256, DER, low S; Ed25519: plain).
 * `sig` needs LD_SIG_MAX bytes; *siglen receives the length. */
int ld_privkey_sign(const ld_privkey_t *key, const void *msg, size_t len, uint8_t *sig,
                    size_t *siglen);

/* Decodes a PublicKey protobuf. Both fields (Type, Data) must be present; secp256k1 keys must
 * be 33 bytes compressed (65-byte uncompressed keys are re-encoded compressed), Ed25519 keys 32
 * bytes, RSA and ECDSA keys a DER SEQUENCE. As in go and js, field order does not matter and
 * unknown fields are skipped: pub->proto always holds the canonical `08 type 12 len data`
 * re-encoding, from which peer IDs derive. Errors: LD_ERR_BAD_KEY, LD_ERR_BAD_PROTOBUF,
 * LD_ERR_TOO_LARGE (input above LD_PUBKEY_PROTO_MAX). */
int ld_pubkey_decode(ld_pubkey_t *pub, const uint8_t *data, size_t len);

/* The key's Data field (raw key bytes) inside pub->proto. */
static inline const uint8_t *ld_pubkey_data(const ld_pubkey_t *pub) {
  return pub->proto + (pub->proto_len - pub->data_len);
}

/* 0 when `sig` is a valid signature of `msg`; LD_ERR_BAD_SIGNATURE, or LD_ERR_UNSUPPORTED for
 * RSA and ECDSA keys. */
int ld_pubkey_verify(const ld_pubkey_t *pub, const void *msg, size_t len, const uint8_t *sig,
                     size_t siglen);

bool ld_pubkey_equal(const ld_pubkey_t *a, const ld_pubkey_t *b);

#endif
