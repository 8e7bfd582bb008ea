/* The pure Noise layer under the libp2p engine of p2p/noise.h: CipherState, SymmetricState and
 * the XX handshake (Noise spec rev 34, §5 and §7.5) with X25519, ChaCha20-Poly1305 and SHA-256.
 * Exposed for unit tests (the cacophony vectors run here without the libp2p payload) and for
 * test hooks on the engine; production code uses p2p/noise.h only.
 *
 * Handshake messages are raw (no length prefix). Functions returning int give 0 or a negative
 * LD_ERR_* code; after an error the handshake state is unusable. Not thread-safe. */
#ifndef LD_P2P_NOISE_INTERNAL_H
#define LD_P2P_NOISE_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/buf.h"
#include "p2p/noise.h"

#define LD_NOISE_PROTOCOL_NAME "Noise_XX_25519_ChaChaPoly_SHA256"
#define LD_NOISE_HASH_LEN 32
#define LD_NOISE_KEY_LEN 32
#define LD_NOISE_DH_LEN 32
#define LD_NOISE_TAG_LEN 16
/* Reserved nonce value: a cipher whose counter reaches it refuses to work. */
#define LD_NOISE_NONCE_MAX UINT64_MAX

/* Minimum sizes of the three XX messages (empty payloads). */
#define LD_NOISE_MSG1_MIN LD_NOISE_DH_LEN
#define LD_NOISE_MSG2_MIN (LD_NOISE_DH_LEN + LD_NOISE_DH_LEN + 2 * LD_NOISE_TAG_LEN)
#define LD_NOISE_MSG3_MIN (LD_NOISE_DH_LEN + 2 * LD_NOISE_TAG_LEN)

typedef struct ld_noise_cipher {
  uint8_t k[LD_NOISE_KEY_LEN];
  uint64_t n;
  bool has_key;
} ld_noise_cipher_t;

/* AEAD with the cipher's key and nonce, then n++. `out` receives len + 16 bytes and may equal
 * `pt`. LD_ERR_LIMIT when the nonce is exhausted; LD_ERR_STATE without a key. */
int ld_noise_cipher_encrypt(ld_noise_cipher_t *c, const uint8_t *ad, size_t adlen,
                            const uint8_t *pt, size_t len, uint8_t *out);

/* Opens ciphertext ‖ tag (len ≥ 16) into `out` (len − 16 bytes, may equal `ct`), then n++.
 * LD_ERR_DECRYPT when it does not authenticate (the nonce is then not advanced), LD_ERR_LIMIT
 * when the nonce is exhausted, LD_ERR_STATE without a key. */
int ld_noise_cipher_decrypt(ld_noise_cipher_t *c, const uint8_t *ad, size_t adlen,
                            const uint8_t *ct, size_t len, uint8_t *out);

typedef struct ld_noise_symmetric {
  uint8_t ck[LD_NOISE_HASH_LEN];
  uint8_t h[LD_NOISE_HASH_LEN];
  ld_noise_cipher_t cs;
} ld_noise_symmetric_t;

/* InitializeSymmetric(protocol name) followed by MixHash(prologue). */
void ld_noise_symmetric_init(ld_noise_symmetric_t *s, const uint8_t *prologue, size_t len);

/* h = SHA-256(h ‖ data). */
void ld_noise_mix_hash(ld_noise_symmetric_t *s, const uint8_t *data, size_t len);

/* HKDF with two outputs as Noise defines it (HMAC-SHA256, chaining key as the salt). */
void ld_noise_hkdf(const uint8_t ck[LD_NOISE_HASH_LEN], const uint8_t *ikm, size_t len,
                   uint8_t out1[LD_NOISE_HASH_LEN], uint8_t out2[LD_NOISE_HASH_LEN]);

/* (ck, k) = HKDF(ck, ikm); the cipher gets key k and nonce 0. */
void ld_noise_mix_key(ld_noise_symmetric_t *s, const uint8_t *ikm, size_t len);

/* Writes len (+16 once a key is set) bytes to `out` (may equal `pt`), then MixHash of them.
 * *outlen receives the count. */
int ld_noise_encrypt_and_hash(ld_noise_symmetric_t *s, const uint8_t *pt, size_t len, uint8_t *out,
                              size_t *outlen);

/* Mirror of ld_noise_encrypt_and_hash; `out` (len or len − 16 bytes) must not overlap `ct`.
 * LD_ERR_DECRYPT when it does not authenticate or is shorter than a tag. */
int ld_noise_decrypt_and_hash(ld_noise_symmetric_t *s, const uint8_t *ct, size_t len, uint8_t *out,
                              size_t *outlen);

/* (c1, c2) = HKDF(ck, ""): c1 carries initiator → responder, c2 the other way. */
void ld_noise_split(const ld_noise_symmetric_t *s, ld_noise_cipher_t *c1, ld_noise_cipher_t *c2);

typedef struct ld_noise_hs {
  ld_noise_symmetric_t sym;
  bool initiator;
  uint8_t s_priv[LD_NOISE_DH_LEN], s_pub[LD_NOISE_DH_LEN];
  uint8_t e_priv[LD_NOISE_DH_LEN], e_pub[LD_NOISE_DH_LEN];
  uint8_t rs[LD_NOISE_DH_LEN], re[LD_NOISE_DH_LEN];
} ld_noise_hs_t;

/* Sets up an XX handshake. s_priv / e_priv NULL = fresh random keys. */
void ld_noise_hs_init(ld_noise_hs_t *hs, bool initiator, const uint8_t *prologue,
                      size_t prologue_len, const uint8_t *s_priv, const uint8_t *e_priv);

/* Wipes every secret of the handshake state. */
void ld_noise_hs_wipe(ld_noise_hs_t *hs);

/* Exact size of each message carrying a payload of `payload_len` bytes. */
size_t ld_noise_msg1_len(size_t payload_len);
size_t ld_noise_msg2_len(size_t payload_len);
size_t ld_noise_msg3_len(size_t payload_len);

/* Writers append one raw message to `out` (all or nothing). Readers parse one whole raw message
 * and append its decrypted payload to `payload`. Reader errors: LD_ERR_HANDSHAKE (too short,
 * an X25519 key giving an all-zero shared secret), LD_ERR_DECRYPT, LD_ERR_NOMEM. */
int ld_noise_hs_write_msg1(ld_noise_hs_t *hs, const uint8_t *payload, size_t len, ld_buf_t *out);
int ld_noise_hs_read_msg1(ld_noise_hs_t *hs, const uint8_t *msg, size_t len, ld_buf_t *payload);
int ld_noise_hs_write_msg2(ld_noise_hs_t *hs, const uint8_t *payload, size_t len, ld_buf_t *out);
int ld_noise_hs_read_msg2(ld_noise_hs_t *hs, const uint8_t *msg, size_t len, ld_buf_t *payload);
int ld_noise_hs_write_msg3(ld_noise_hs_t *hs, const uint8_t *payload, size_t len, ld_buf_t *out);
int ld_noise_hs_read_msg3(ld_noise_hs_t *hs, const uint8_t *msg, size_t len, ld_buf_t *payload);

/* Split by role: `send` / `recv` get the ciphers of this side. */
void ld_noise_hs_split(const ld_noise_hs_t *hs, ld_noise_cipher_t *send, ld_noise_cipher_t *recv);

/* ---- test hooks on the engine --------------------------------------------------------------- */

/* Replaces the encoded handshake payload the engine will send (before it is sent). Used to
 * present forged or incomplete payloads to a peer. LD_ERR_STATE once sent. */
int ld_noise_set_local_payload(ld_noise_t *n, const uint8_t *payload, size_t len);

/* Sets the transport nonces of an established engine (nonce-exhaustion tests). */
int ld_noise_set_nonces(ld_noise_t *n, uint64_t send, uint64_t recv);

#endif
