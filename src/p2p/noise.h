/* The libp2p Noise security engine ("/noise"): Noise_XX_25519_ChaChaPoly_SHA256 with an empty
 * prologue and the libp2p handshake payload (identity key, signature over the Noise static key,
 * optional stream-muxer extensions), followed by the transport phase of 2-byte big-endian
 * length-prefixed ChaCha20-Poly1305 frames.
 *
 * The engine does no I/O: bytes from the network go in through ld_noise_read, bytes for the
 * network come out in the caller's ld_buf_t. One ld_noise_t per connection; it is not
 * thread-safe and must be used from one thread at a time (the connection's loop thread).
 *
 * Flow:
 *   initiator (TCP dialer): ld_noise_new → ld_noise_start (frame 1) → ld_noise_read(frame 2)
 *     appends frame 3 and becomes established.
 *   responder: ld_noise_new → ld_noise_read(frame 1) appends frame 2 → ld_noise_read(frame 3)
 *     establishes.
 * Every error returned by ld_noise_start and ld_noise_read, and LD_ERR_LIMIT from
 * ld_noise_encrypt, is fatal: the engine wipes its keys, refuses further work (reads return the
 * same error again, encryption LD_ERR_STATE) and the connection must be closed. */
#ifndef LD_P2P_NOISE_H
#define LD_P2P_NOISE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/buf.h"
#include "p2p/key.h"
#include "p2p/peerid.h"

#define LD_NOISE_PROTOCOL_ID "/noise"

/* Largest frame body (the length prefix is 16 bits). */
#define LD_NOISE_MAX_FRAME 65535
/* Largest plaintext carried by one transport frame: 65535 − the 16-byte tag. */
#define LD_NOISE_MAX_PLAINTEXT 65519
/* Bytes a transport frame adds to its plaintext: the length prefix and the tag. */
#define LD_NOISE_FRAME_OVERHEAD 18
/* Caps on the stream-muxer list we advertise (configuration, not peer input). */
#define LD_NOISE_MUXERS_MAX 16
#define LD_NOISE_MUXER_NAME_MAX 256

typedef struct ld_noise ld_noise_t;

typedef struct ld_noise_config {
  bool initiator;                   /* the TCP dialer */
  const ld_privkey_t *identity;     /* signs the payload; copied */
  const ld_peerid_t *expected_peer; /* initiator: the handshake must prove this peer (NULL = any) */
  const uint8_t *static_priv;       /* 32-byte X25519 static key; NULL = fresh random */
  const uint8_t *ephemeral_priv;    /* NULL = fresh random (set only by tests, for vectors) */
  const char *const *muxers; /* stream_muxers to advertise in extensions; NULL/0 = send none */
  size_t n_muxers;
} ld_noise_config_t;

/* Creates an engine. Everything `cfg` points to is copied; `cfg` may be released afterwards.
 * Generates the keys that are not given and signs the handshake payload. Returns NULL when the
 * configuration is invalid (no identity, an identity that cannot sign, more than
 * LD_NOISE_MUXERS_MAX muxers, an empty or over-long muxer name) or memory runs out.
 * Free with ld_noise_free. */
ld_noise_t *ld_noise_new(const ld_noise_config_t *cfg);

/* Wipes all key material and frees the engine. NULL is a no-op. */
void ld_noise_free(ld_noise_t *n);

/* Initiator: appends frame 1 (u16be length ‖ ephemeral public key) to wire_out. Responder:
 * appends nothing (calling it is optional). LD_ERR_STATE when called twice on an initiator,
 * LD_ERR_NOMEM when wire_out cannot grow. */
int ld_noise_start(ld_noise_t *n, ld_buf_t *wire_out);

/* Feeds bytes from the network. Consumes only complete frames: *consumed receives how many
 * bytes of `in` were used (also on error: the bytes before the failing frame); the caller keeps
 * the rest and calls again once more bytes arrived. During the handshake it appends the frames
 * to send to wire_out; once established it decrypts transport frames and appends their
 * plaintext to plaintext_out (bytes that follow the last handshake frame in the same input are
 * processed as transport frames in the same call). wire_out may be NULL once established;
 * plaintext_out must never be NULL. The input is only read, never kept.
 * Errors (all fatal):
 *   LD_ERR_STATE        an initiator that was not started;
 *   LD_ERR_HANDSHAKE    malformed or unexpected handshake message (wrong size, invalid
 *                       X25519 key, undecodable payload, missing identity_key/identity_sig);
 *   LD_ERR_BAD_KEY      identity_key not a PublicKey we can verify (Ed25519, secp256k1);
 *   LD_ERR_BAD_SIGNATURE identity_sig does not sign the static key received;
 *   LD_ERR_PEER_ID_MISMATCH initiator with expected_peer: the responder proved another peer;
 *   LD_ERR_DECRYPT      a handshake or transport frame that does not authenticate, or a
 *                       transport frame shorter than the 16-byte tag;
 *   LD_ERR_LIMIT        the receive nonce is exhausted (2^64−1 frames);
 *   LD_ERR_NOMEM, LD_ERR_INVALID_ARG (wire_out NULL while a handshake frame had to be sent). */
int ld_noise_read(ld_noise_t *n, const uint8_t *in, size_t len, size_t *consumed,
                  ld_buf_t *wire_out, ld_buf_t *plaintext_out);

bool ld_noise_is_established(const ld_noise_t *n);

/* Encrypts `pt[0..len)` into transport frames of at most LD_NOISE_MAX_PLAINTEXT plaintext bytes
 * each, appended to wire_out (len + LD_NOISE_FRAME_OVERHEAD bytes per frame). len 0 appends
 * nothing. Either every frame is appended or nothing is. Errors: LD_ERR_STATE before
 * establishment or after a fatal error, LD_ERR_LIMIT when the send nonce would reach 2^64−1,
 * LD_ERR_NOMEM. */
int ld_noise_encrypt(ld_noise_t *n, const uint8_t *pt, size_t len, ld_buf_t *wire_out);

/* The remote identity key and its peer ID: valid once established, for the engine's lifetime;
 * NULL before. */
const ld_pubkey_t *ld_noise_remote_key(const ld_noise_t *n);
const ld_peerid_t *ld_noise_remote_peer(const ld_noise_t *n);

/* The muxer agreed through extensions: the first entry of the initiator's list that the
 * responder also lists. NULL when either side sent no list, when the lists do not overlap (the
 * go-libp2p behaviour) or before establishment — then the muxer is negotiated with
 * multistream-select inside the secure channel. The string lives as long as the engine. */
const char *ld_noise_early_muxer(const ld_noise_t *n);

/* The handshake hash h (32 bytes), final once established. For tests and channel binding. */
const uint8_t *ld_noise_handshake_hash(const ld_noise_t *n);

#endif
