#include "p2p/key.h"

#include <string.h>

#include "base/error.h"
#include "keys.pb-c.h"

/* Largest PrivateKey protobuf decoded (an RSA-8192 PKCS#1 key with its header fits). */
#define PRIVKEY_PROTO_MAX 8192

_Static_assert(LD_SIG_MAX >= LD_SECP256K1_DER_MAX && LD_SIG_MAX >= LD_ED25519_SIG_LEN,
               "LD_SIG_MAX too small");
_Static_assert(LD_ED25519_SECRET_LEN >= LD_SECP256K1_SECRET_LEN, "secret storage too small");

static const uint8_t empty_input[1];

static void wipe(void *p, size_t n) {
  if (p != NULL && n > 0)
    explicit_bzero(p, n);
}

static bool type_known(int type) {
  return type >= LD_KEY_RSA && type <= LD_KEY_ECDSA;
}

/* Packs `08 type 12 len data` (protobuf-c emits fields in number order) into pub->proto. */
static int pubkey_set(ld_pubkey_t *pub, ld_key_type_t type, const uint8_t *data, size_t len) {
  Ld__Keys__PublicKey msg = LD__KEYS__PUBLIC_KEY__INIT;
  msg.type = (Ld__Keys__KeyType)type;
  msg.data.data = (uint8_t *)data;
  msg.data.len = len;
  size_t size = ld__keys__public_key__get_packed_size(&msg);
  if (size > LD_PUBKEY_PROTO_MAX)
    return LD_ERR_TOO_LARGE;
  pub->type = type;
  pub->proto_len = ld__keys__public_key__pack(&msg, pub->proto);
  pub->data_len = len;
  return 0;
}

/* A DER SEQUENCE whose definite length covers exactly `len` bytes (SPKI sanity check). */
static bool der_sequence_ok(const uint8_t *d, size_t len) {
  if (len < 2 || d[0] != 0x30)
    return false;
  size_t hdr = 2, body = d[1];
  if (d[1] & 0x80) {
    size_t n = d[1] & 0x7f;
    if (n == 0 || n > 3 || len < 2 + n)
      return false;
    body = 0;
    for (size_t i = 0; i < n; i++)
      body = (body << 8) | d[2 + i];
    hdr += n;
  }
  return body == len - hdr;
}

static int pubkey_from_fields(ld_pubkey_t *pub, int type, const uint8_t *d, size_t len) {
  uint8_t compressed[LD_SECP256K1_PUBLIC_LEN];
  switch (type) {
  case LD_KEY_ED25519:
    if (len != LD_ED25519_PUBLIC_LEN)
      return LD_ERR_BAD_KEY;
    return pubkey_set(pub, LD_KEY_ED25519, d, len);
  case LD_KEY_SECP256K1:
    if (len != LD_SECP256K1_PUBLIC_LEN && !(len == LD_SECP256K1_UNCOMPRESSED_LEN && d[0] == 0x04))
      return LD_ERR_BAD_KEY; /* hybrid 06/07 forms are refused, as go and js refuse them */
    if (ld_secp256k1_compress(d, len, compressed) != 0)
      return LD_ERR_BAD_KEY;
    return pubkey_set(pub, LD_KEY_SECP256K1, compressed, sizeof compressed);
  case LD_KEY_RSA:
  case LD_KEY_ECDSA:
    if (!der_sequence_ok(d, len))
      return LD_ERR_BAD_KEY;
    return pubkey_set(pub, (ld_key_type_t)type, d, len);
  default:
    return LD_ERR_BAD_KEY;
  }
}

int ld_pubkey_decode(ld_pubkey_t *pub, const uint8_t *data, size_t len) {
  if (pub == NULL || (data == NULL && len > 0))
    return LD_ERR_INVALID_ARG;
  if (len > LD_PUBKEY_PROTO_MAX)
    return LD_ERR_TOO_LARGE;
  Ld__Keys__PublicKey *msg =
      ld__keys__public_key__unpack(NULL, len, data != NULL ? data : empty_input);
  if (msg == NULL)
    return LD_ERR_BAD_PROTOBUF;
  int rc = pubkey_from_fields(pub, (int)msg->type, msg->data.data, msg->data.len);
  ld__keys__public_key__free_unpacked(msg, NULL);
  return rc;
}

int ld_privkey_generate(ld_privkey_t *key, ld_key_type_t type) {
  if (key == NULL)
    return LD_ERR_INVALID_ARG;
  memset(key, 0, sizeof *key);
  key->type = type;
  if (type == LD_KEY_ED25519) {
    ld_ed25519_generate(key->pub, key->secret);
    return 0;
  }
  if (type != LD_KEY_SECP256K1)
    return LD_ERR_UNSUPPORTED;
  ld_secp256k1_generate(key->secret);
  int rc = ld_secp256k1_public(key->secret, key->pub);
  if (rc != 0)
    wipe(key, sizeof *key);
  return rc;
}

int ld_privkey_from_secp256k1(ld_privkey_t *key, const uint8_t secret[32]) {
  if (key == NULL || secret == NULL)
    return LD_ERR_INVALID_ARG;
  memset(key, 0, sizeof *key);
  if (ld_secp256k1_secret_check(secret) != 0 || ld_secp256k1_public(secret, key->pub) != 0)
    return LD_ERR_BAD_KEY;
  key->type = LD_KEY_SECP256K1;
  memcpy(key->secret, secret, LD_SECP256K1_SECRET_LEN);
  return 0;
}

int ld_privkey_from_ed25519_seed(ld_privkey_t *key, const uint8_t seed[32]) {
  if (key == NULL || seed == NULL)
    return LD_ERR_INVALID_ARG;
  memset(key, 0, sizeof *key);
  key->type = LD_KEY_ED25519;
  ld_ed25519_from_seed(seed, key->pub, key->secret);
  return 0;
}

/* Ed25519 Data: seed ‖ pub, or the legacy seed ‖ pub ‖ pub; the seed must derive pub. */
static int privkey_ed25519(ld_privkey_t *key, const uint8_t *d, size_t len) {
  const size_t seed = LD_ED25519_SEED_LEN, pub = LD_ED25519_PUBLIC_LEN;
  if (len != seed + pub && len != seed + 2 * pub)
    return LD_ERR_BAD_KEY;
  if (len == seed + 2 * pub && memcmp(d + seed, d + seed + pub, pub) != 0)
    return LD_ERR_BAD_KEY;
  ld_privkey_from_ed25519_seed(key, d);
  if (memcmp(key->pub, d + seed, pub) != 0) {
    wipe(key, sizeof *key);
    return LD_ERR_BAD_KEY;
  }
  return 0;
}

static int privkey_from_fields(ld_privkey_t *key, int type, const uint8_t *d, size_t len) {
  switch (type) {
  case LD_KEY_ED25519:
    return privkey_ed25519(key, d, len);
  case LD_KEY_SECP256K1:
    if (len != LD_SECP256K1_SECRET_LEN)
      return LD_ERR_BAD_KEY;
    return ld_privkey_from_secp256k1(key, d);
  case LD_KEY_RSA:
  case LD_KEY_ECDSA:
    return LD_ERR_UNSUPPORTED;
  default:
    return LD_ERR_BAD_KEY;
  }
}

int ld_privkey_decode(ld_privkey_t *key, const uint8_t *data, size_t len) {
  if (key == NULL || (data == NULL && len > 0))
    return LD_ERR_INVALID_ARG;
  if (len > PRIVKEY_PROTO_MAX)
    return LD_ERR_TOO_LARGE;
  Ld__Keys__PrivateKey *msg =
      ld__keys__private_key__unpack(NULL, len, data != NULL ? data : empty_input);
  if (msg == NULL)
    return LD_ERR_BAD_PROTOBUF;
  int rc = privkey_from_fields(key, (int)msg->type, msg->data.data, msg->data.len);
  wipe(msg->data.data, msg->data.len);
  ld__keys__private_key__free_unpacked(msg, NULL);
  return rc;
}

int ld_privkey_encode(const ld_privkey_t *key, ld_buf_t *out) {
  if (key == NULL || out == NULL)
    return LD_ERR_INVALID_ARG;
  size_t n;
  if (key->type == LD_KEY_ED25519)
    n = LD_ED25519_SECRET_LEN;
  else if (key->type == LD_KEY_SECP256K1)
    n = LD_SECP256K1_SECRET_LEN;
  else
    return LD_ERR_UNSUPPORTED;
  Ld__Keys__PrivateKey msg = LD__KEYS__PRIVATE_KEY__INIT;
  msg.type = (Ld__Keys__KeyType)key->type;
  msg.data.data = (uint8_t *)key->secret;
  msg.data.len = n;
  uint8_t packed[8 + LD_ED25519_SECRET_LEN];
  if (ld__keys__private_key__get_packed_size(&msg) > sizeof packed)
    return LD_ERR_INTERNAL;
  size_t len = ld__keys__private_key__pack(&msg, packed);
  int rc = ld_buf_append(out, packed, len);
  wipe(packed, sizeof packed);
  return rc;
}

void ld_privkey_public(const ld_privkey_t *key, ld_pubkey_t *pub) {
  size_t n = key->type == LD_KEY_ED25519 ? LD_ED25519_PUBLIC_LEN : LD_SECP256K1_PUBLIC_LEN;
  (void)pubkey_set(pub, key->type, key->pub, n);
}

int ld_privkey_sign(const ld_privkey_t *key, const void *msg, size_t len, uint8_t *sig,
                    size_t *siglen) {
  if (key == NULL || sig == NULL || siglen == NULL || (msg == NULL && len > 0))
    return LD_ERR_INVALID_ARG;
  if (key->type == LD_KEY_ED25519) {
    ld_ed25519_sign(key->secret, msg, len, sig);
    *siglen = LD_ED25519_SIG_LEN;
    return 0;
  }
  if (key->type == LD_KEY_SECP256K1)
    return ld_secp256k1_sign(key->secret, msg, len, sig, siglen);
  return LD_ERR_UNSUPPORTED;
}

int ld_pubkey_verify(const ld_pubkey_t *pub, const void *msg, size_t len, const uint8_t *sig,
                     size_t siglen) {
  if (pub == NULL || (msg == NULL && len > 0) || (sig == NULL && siglen > 0))
    return LD_ERR_INVALID_ARG;
  if (!type_known(pub->type) || pub->type == LD_KEY_RSA || pub->type == LD_KEY_ECDSA)
    return LD_ERR_UNSUPPORTED;
  if (pub->type == LD_KEY_ED25519) {
    if (siglen != LD_ED25519_SIG_LEN)
      return LD_ERR_BAD_SIGNATURE;
    return ld_ed25519_verify(ld_pubkey_data(pub), msg, len, sig) == 0 ? 0 : LD_ERR_BAD_SIGNATURE;
  }
  if (siglen == 0 || siglen > LD_SIG_MAX)
    return LD_ERR_BAD_SIGNATURE;
  return ld_secp256k1_verify(ld_pubkey_data(pub), pub->data_len, msg, len, sig, siglen) == 0
             ? 0
             : LD_ERR_BAD_SIGNATURE;
}

bool ld_pubkey_equal(const ld_pubkey_t *a, const ld_pubkey_t *b) {
  return a->type == b->type && a->proto_len == b->proto_len &&
         memcmp(a->proto, b->proto, a->proto_len) == 0;
}
