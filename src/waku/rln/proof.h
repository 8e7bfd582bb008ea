/* RLN-relay's RateLimitProof (17/WAKU2-RLN-RELAY, proto/rln.proto), the bytes a WakuMessage
 * carries in its rate_limit_proof field, decoded as nwaku decodes it: every field copied into a
 * fixed-size array, a shorter one zero-padded and a longer one truncated, a missing one all
 * zeros (so a message without a proof decodes and then fails the checks); only bytes that are
 * not a protobuf message are refused. Pure functions; any thread. */
#ifndef LD_WAKU_RLN_PROOF_H
#define LD_WAKU_RLN_PROOF_H

#include <stddef.h>
#include <stdint.h>

#include "zk/rln.h"

/* nwaku's default rln_identifier: "rln/waku-rln-relay/v2.0.0" zero-padded to 32 bytes. */
extern const uint8_t ld_rln_default_identifier[32];

typedef struct ld_rln_rate_limit_proof {
  uint8_t proof[LD_RLN_PROOF_BYTES];
  uint8_t merkle_root[32];
  uint8_t epoch[32]; /* uint64 little-endian, zero-padded */
  uint8_t share_x[32];
  uint8_t share_y[32];
  uint8_t nullifier[32];
  uint8_t rln_identifier[32];
} ld_rln_rate_limit_proof_t;

/* Upper bound of an encoded proof (seven fields, tags and lengths). */
#define LD_RLN_RATE_LIMIT_PROOF_MAX_ENCODED 352

/* 0, or LD_ERR_BAD_PROTOBUF (len 0 decodes as all zeros, as nwaku does). */
int ld_rln_rate_limit_proof_decode(ld_rln_rate_limit_proof_t *out, const uint8_t *data, size_t len);
/* Encodes all seven fields (as nwaku writes them); returns the length written to `out`
 * (room for LD_RLN_RATE_LIMIT_PROOF_MAX_ENCODED bytes). */
size_t ld_rln_rate_limit_proof_encode(const ld_rln_rate_limit_proof_t *p,
                                      uint8_t out[LD_RLN_RATE_LIMIT_PROOF_MAX_ENCODED]);

/* The epoch of a time: floor(unix_seconds / epoch_sec) (0 for a negative time, epoch_sec 0 or
 * past 2^64 ns), and its 32 bytes little-endian. */
void ld_rln_epoch_bytes(uint8_t out[32], uint64_t epoch);
uint64_t ld_rln_epoch_of(int64_t unix_ns, uint64_t epoch_sec);

/* The signal a message's proof binds: payload ‖ content_topic ‖ uint64_le(timestamp). Returns
 * its length; `out` has room for payload_len + content_topic_len + 8 (NULL: length only). */
size_t ld_rln_message_signal(uint8_t *out, const uint8_t *payload, size_t payload_len,
                             const char *content_topic, size_t content_topic_len,
                             int64_t timestamp);

/* The external nullifier as nwaku computes it: zerokit's poseidon_hash over the epoch's and
 * the rln_identifier's 32 bytes read as field elements (little-endian, reduced mod r). */
void ld_rln_external_nullifier_nwaku(ld_fr_t *out, const uint8_t epoch[32],
                                     const uint8_t rln_identifier[32]);

#endif
