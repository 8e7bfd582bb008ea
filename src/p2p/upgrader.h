/* The connection upgrade as a sans-I/O engine: multistream-select "/noise" on the raw bytes, the
 * Noise handshake, then multistream-select of the stream muxer inside the secure channel (the
 * dialer proposes its muxers in order, the listener accepts any of its list), as nim-libp2p and
 * nwaku do. No Noise extensions are sent, so the muxer is always negotiated with multistream;
 * should the remote's extensions and ours agree anyway, that muxer is used directly.
 *
 * Raw bytes from the network go in with ld_upgrader_read; raw bytes for the network are appended
 * to the caller's buffer. When the upgrade is done the caller takes the Noise engine (for the
 * transport phase), the muxer protocol ID and the plaintext that already followed the muxer
 * agreement (it belongs to the muxer). Caller storage; single-threaded. */
#ifndef LD_P2P_UPGRADER_H
#define LD_P2P_UPGRADER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/buf.h"
#include "p2p/key.h"
#include "p2p/multistream.h"
#include "p2p/noise.h"
#include "p2p/peerid.h"

#define LD_UPGRADER_MAX_MUXERS 4

/* ld_upgrader_read results besides errors. */
#define LD_UPGRADER_PENDING 0
#define LD_UPGRADER_DONE 1

typedef enum ld_upgrader_stage {
  LD_UPGRADER_SECURITY = 0, /* multistream-select of "/noise" */
  LD_UPGRADER_HANDSHAKE,    /* Noise XX */
  LD_UPGRADER_MUXER,        /* multistream-select of the muxer, encrypted */
  LD_UPGRADER_FINISHED,
} ld_upgrader_stage_t;

typedef struct ld_upgrader_config {
  bool initiator;                   /* the TCP dialer */
  const ld_privkey_t *identity;     /* copied by the Noise engine */
  const ld_peerid_t *expected_peer; /* initiator: the peer the handshake must prove; NULL = any */
  const char *const *muxers;        /* initiator: proposals in order; listener: accepted IDs */
  size_t n_muxers;                  /* 1..LD_UPGRADER_MAX_MUXERS; the strings must outlive u */
} ld_upgrader_config_t;

typedef struct ld_upgrader {
  ld_upgrader_stage_t stage;
  bool initiator;
  ld_mss_t mss;
  ld_noise_t *noise;
  const char *muxers[LD_UPGRADER_MAX_MUXERS];
  size_t n_muxers;
  const char *muxer;
  ld_buf_t plain; /* decrypted bytes not yet negotiated; after agreement, the muxer's bytes */
  ld_buf_t scratch;
} ld_upgrader_t;

/* Prepares an upgrade and creates its Noise engine. LD_ERR_INVALID_ARG for a bad muxer list,
 * LD_ERR_BAD_KEY when the Noise engine refuses the identity, LD_ERR_NOMEM. On error nothing needs
 * clearing. */
int ld_upgrader_init(ld_upgrader_t *u, const ld_upgrader_config_t *cfg);

/* Releases everything the upgrader still owns (the Noise engine unless taken). */
void ld_upgrader_clear(ld_upgrader_t *u);

/* Initiator: appends the multistream header and the "/noise" proposal. Listener: appends
 * nothing (it answers once the dialer's header arrives). */
int ld_upgrader_start(ld_upgrader_t *u, ld_buf_t *wire_out);

/* Feeds raw bytes. Only complete Noise frames are consumed: *consumed receives the number of
 * bytes used and the caller keeps the rest (a partial frame, at most LD_NOISE_MAX_FRAME + 2
 * bytes) for the next call. Returns LD_UPGRADER_PENDING, LD_UPGRADER_DONE, or a fatal error:
 * the multistream errors (LD_ERR_NEGOTIATION_FAILED, LD_ERR_PROTOCOL_UNSUPPORTED, LD_ERR_MALFORMED,
 * LD_ERR_TOO_LARGE, …) and the Noise errors (LD_ERR_HANDSHAKE, LD_ERR_BAD_KEY,
 * LD_ERR_BAD_SIGNATURE, LD_ERR_PEER_ID_MISMATCH, LD_ERR_DECRYPT, …). After LD_UPGRADER_DONE the
 * remaining input is Noise transport frames, and nothing more may be fed. */
int ld_upgrader_read(ld_upgrader_t *u, const uint8_t *in, size_t len, size_t *consumed,
                     ld_buf_t *wire_out);

/* After LD_UPGRADER_DONE: hands the established Noise engine to the caller, who frees it. */
ld_noise_t *ld_upgrader_take_noise(ld_upgrader_t *u);

/* After LD_UPGRADER_DONE: the agreed muxer protocol ID (one of the configured strings). */
const char *ld_upgrader_muxer(const ld_upgrader_t *u);

/* After LD_UPGRADER_DONE: plaintext that followed the muxer agreement; valid until clear. */
const uint8_t *ld_upgrader_leftover(const ld_upgrader_t *u, size_t *len);

/* A short name of the current stage for logs ("security", "handshake", "muxer", "finished"). */
const char *ld_upgrader_stage_name(const ld_upgrader_t *u);

#endif
