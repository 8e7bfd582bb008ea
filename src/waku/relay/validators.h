/* The checks Waku relay applies to every message before it is delivered and forwarded, as pure
 * functions (no I/O, no clock: the current time is a parameter), and the topic health rule.
 *
 * Order of the built-in checks (waku.md §3.4; the first failure is final, Reject in gossipsub):
 * 1. size: the serialized WakuMessage must not exceed the configured maximum (150 KiB default);
 * 2. decodability: the data must decode as a WakuMessage carrying payload and content topic
 *    (nwaku's required fields; meta at most 64 bytes); with the js-waku rules also both must be
 *    non-empty (js-waku's relay validator rejects anything else);
 * 3. protected shards (`--protected-shard=<shard>:<public key>`, nwaku's signed-shard
 *    validator): on a listed shard the message must carry a timestamp within 5 minutes of now
 *    and, in `meta`, a raw 64-byte secp256k1 signature (r ‖ s, low S) by that shard's key over
 *      SHA-256(pubsub_topic ‖ payload ‖ content_topic ‖ uint64_le(timestamp) ‖ ephemeral?01:00)
 *    (little-endian timestamp; meta is not covered since it carries the signature). */
#ifndef LD_WAKU_RELAY_VALIDATORS_H
#define LD_WAKU_RELAY_VALIDATORS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "crypto/crypto.h"
#include "p2p/gossipsub/router.h"
#include "waku/core/message.h"

/* nwaku's MessageWindowInSec: ±5 minutes around now. */
#define LD_RELAY_PROTECTED_WINDOW_NS (5LL * 60 * 1000000000)
/* The raw compact signature carried in `meta`. */
#define LD_RELAY_SIGNATURE_LEN 64
/* --protected-shard entries accepted. */
#define LD_RELAY_MAX_PROTECTED_SHARDS 64

/* Why a message was refused (or LD_RELAY_OK). Stable order: used as an index in statistics. */
typedef enum ld_relay_reason {
  LD_RELAY_OK = 0,
  LD_RELAY_TOO_LARGE,           /* serialized message above the maximum */
  LD_RELAY_UNDECODABLE,         /* not a WakuMessage, a required field missing, meta > 64 B */
  LD_RELAY_EMPTY_CONTENT_TOPIC, /* js-waku rule */
  LD_RELAY_EMPTY_PAYLOAD,       /* js-waku rule */
  LD_RELAY_NO_TIMESTAMP,        /* protected shard: timestamp 0 */
  LD_RELAY_OUT_OF_WINDOW,       /* protected shard: timestamp more than 5 min away from now */
  LD_RELAY_BAD_SIGNATURE,       /* protected shard: meta is not a valid signature by the key */
  LD_RELAY_VALIDATOR,           /* an added (application) validator refused it */
  LD_RELAY_REASON_COUNT
} ld_relay_reason_t;

/* Static names: "ok", "too_large", "undecodable", … (metric label values). */
const char *ld_relay_reason_name(ld_relay_reason_t reason);

/* ---- size and decodability ------------------------------------------------------------------ */

/* Checks 1 and 2 on the gossipsub `data`. On LD_RELAY_OK `out` (initialised by the caller)
 * holds the decoded, owned message (release with ld_waku_message_clear); otherwise it is left
 * empty. `max_size` 0 means LD_WAKU_DEFAULT_MAX_MSG_SIZE. Pure function; any thread. */
ld_relay_reason_t ld_relay_check_message(const uint8_t *data, size_t len, size_t max_size,
                                         bool js_rules, ld_waku_message_t *out);

/* ---- protected shards ----------------------------------------------------------------------- */

typedef struct ld_relay_protected_shard {
  uint16_t shard;
  uint8_t pubkey[LD_SECP256K1_PUBLIC_LEN]; /* compressed */
} ld_relay_protected_shard_t;

/* Parses a --protected-shard value as nwaku does: "<shard>:<public key hex>" or
 * "/waku/2/rs/<cluster>/<shard>:<public key hex>" (only the shard is kept; the cluster is the
 * node's). The key is 33 (compressed), 65 (uncompressed) or 64 (uncompressed without its 04
 * prefix) bytes of hex, an optional 0x prefix allowed, and must be a point on the curve.
 * Errors (`out` untouched): LD_ERR_INVALID_ARG (not exactly one ':', NULL), LD_ERR_OVERFLOW
 * (shard not a decimal uint16), LD_ERR_BAD_PUBSUB_TOPIC, LD_ERR_BAD_ENCODING (not hex),
 * LD_ERR_BAD_KEY. */
int ld_relay_protected_shard_parse(const char *text, ld_relay_protected_shard_t *out);

/* The 32-byte digest a protected-shard signature signs (see the file comment).
 * LD_ERR_INVALID_ARG or LD_ERR_NOMEM. */
int ld_relay_signed_digest(const char *pubsub_topic, const ld_waku_message_t *msg,
                           uint8_t out[LD_SHA256_LEN]);

/* Signs `msg` for `pubsub_topic` with a secp256k1 secret: writes the 64-byte r ‖ s (low S) to
 * `sig`, ready to be put in `meta` (set the timestamp first: it is signed).
 * LD_ERR_BAD_KEY, LD_ERR_INVALID_ARG, LD_ERR_NOMEM, LD_ERR_CRYPTO. */
int ld_relay_sign(const uint8_t secret[LD_SECP256K1_SECRET_LEN], const char *pubsub_topic,
                  const ld_waku_message_t *msg, uint8_t sig[LD_RELAY_SIGNATURE_LEN]);

/* Check 3 for a message on a protected shard with key `pubkey` (33 bytes). `now_ns` is the wall
 * clock in Unix nanoseconds. Returns LD_RELAY_OK, LD_RELAY_NO_TIMESTAMP, LD_RELAY_OUT_OF_WINDOW
 * or LD_RELAY_BAD_SIGNATURE (meta not 64 bytes, r or s out of range, high S, or not verifying). */
ld_relay_reason_t ld_relay_verify_signed(const uint8_t pubkey[LD_SECP256K1_PUBLIC_LEN],
                                         const char *pubsub_topic, const ld_waku_message_t *msg,
                                         int64_t now_ns);

/* The protected-shard entry that covers `pubsub_topic` in `cluster_id` (the topic must be
 * exactly "/waku/2/rs/<cluster_id>/<shard>"), or NULL. */
const ld_relay_protected_shard_t *ld_relay_protected_find(const ld_relay_protected_shard_t *list,
                                                          size_t n, uint16_t cluster_id,
                                                          const char *pubsub_topic);

/* ---- topic health --------------------------------------------------------------------------- */

/* Health of a pubsub topic (nwaku's TopicHealth plus "not subscribed"). */
typedef enum ld_relay_health {
  LD_RELAY_NOT_SUBSCRIBED = 0,
  LD_RELAY_UNHEALTHY,            /* no mesh peer */
  LD_RELAY_MINIMALLY_HEALTHY,    /* 1 ≤ mesh peers < D_low */
  LD_RELAY_SUFFICIENTLY_HEALTHY, /* mesh peers ≥ D_low */
} ld_relay_health_t;

/* nwaku's rule for a subscribed topic with `mesh_size` mesh peers (d_low: 4 in nwaku). */
ld_relay_health_t ld_relay_health_from_mesh(size_t mesh_size, uint32_t d_low);

/* nwaku's names: "NotSubscribed", "UnHealthy", "MinimallyHealthy", "SufficientlyHealthy". */
const char *ld_relay_health_name(ld_relay_health_t health);

#endif
