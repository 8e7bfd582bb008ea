/* The store-sync transfer message, one per length-prefixed frame on /vac/waku/transfer/1.0.0
 * (LD_WAKU_TRANSFER_CODEC): nwaku's WakuMessageAndTopic as its code writes it (⚠ the written
 * spec swaps the field numbers):
 *
 *   message WakuMessageAndTopic {
 *     string pubsub_topic = 1;  // required
 *     bytes  message      = 2;  // required, a serialized WakuMessage
 *   }
 *
 * The sender pushes, unasked, every message the reconciliation found the peer lacks, one frame
 * each on one stream per peer; the receiver reads frames until the stream ends. nwaku reads a
 * frame of at most 150 KiB (DefaultMaxWakuMessageSize covers topic and message together, so a
 * message of the maximum size does not get through); the encoder refuses a frame above the cap
 * it is given (nwaku's by default), since nwaku's receiver drops the whole stream on one.
 *
 * Decoding walks the frame with the bounds-checked cursor in nwaku's protobuf dialect (last
 * occurrence of a field wins, unknown fields and fields with another wire type are skipped);
 * both fields are required, the message is decoded by ld_waku_message_decode with payload and
 * content topic required (as nwaku's decoder does). Accepting a decoded message is the caller's
 * job (the node's transfer handler): recompute its hash (ld_sync_transfer_id), check that a
 * reconciliation with that peer listed it as missing, that it is not ephemeral, its shard,
 * size, and a timestamp inside the reconciled window and at most 20 s ahead, then RLN once it
 * exists; nwaku checks none of these (its transfer.nim has a TODO for RLN).
 *
 * Pure functions; one thread at a time per value. */
#ifndef LD_WAKU_SYNC_TRANSFER_H
#define LD_WAKU_SYNC_TRANSFER_H

#include <stddef.h>
#include <stdint.h>

#include "base/buf.h"
#include "waku/core/codecs.h"
#include "waku/core/message.h"
#include "waku/sync/id.h"

#define LD_SYNC_TRANSFER_PROTOCOL LD_WAKU_TRANSFER_CODEC
/* nwaku's read cap on one transfer frame (DefaultMaxWakuMessageSize). */
#define LD_SYNC_TRANSFER_MAX_FRAME LD_WAKU_DEFAULT_MAX_MSG_SIZE
/* Longest pubsub topic accepted in a transfer frame. */
#define LD_SYNC_TRANSFER_MAX_TOPIC_LEN 512u

/* A decoded transfer message; owns its topic (NUL-terminated, not counted in the length) and
 * message. Caller storage: zero it or ld_sync_transfer_init, release with
 * ld_sync_transfer_clear. */
typedef struct ld_sync_transfer {
  char *pubsub_topic;
  size_t pubsub_topic_len;
  ld_waku_message_t message;
} ld_sync_transfer_t;

void ld_sync_transfer_init(ld_sync_transfer_t *t);
void ld_sync_transfer_clear(ld_sync_transfer_t *t);

/* Appends one frame body (no length prefix) carrying `topic` (len bytes, not empty) and `msg`
 * (nwaku's WakuMessage dialect) to `out`. `max_frame` caps the body (0: nwaku's
 * LD_SYNC_TRANSFER_MAX_FRAME). Errors (nothing appended): LD_ERR_INVALID_ARG (empty topic),
 * LD_ERR_TOO_LARGE (body over the cap), errors of ld_waku_message_encode, LD_ERR_NOMEM. */
int ld_sync_transfer_encode(const char *topic, size_t len, const ld_waku_message_t *msg,
                            size_t max_frame, ld_buf_t *out);

/* Decodes a frame body data[0..len) into `out` (initialised; its old content is released first).
 * `max_msg_size` caps the carried message (0: LD_WAKU_DEFAULT_MAX_MSG_SIZE). On failure `out` is
 * left empty and a description goes to why[0..cap) (may be NULL). Errors: LD_ERR_BAD_PROTOBUF,
 * LD_ERR_MISSING_FIELD (topic or message absent, or the message lacks payload or content topic),
 * LD_ERR_FIELD_TOO_LONG (topic over LD_SYNC_TRANSFER_MAX_TOPIC_LEN), LD_ERR_BAD_ENCODING (empty
 * topic or one holding a NUL byte), LD_ERR_TOO_LARGE, the errors of ld_waku_message_decode,
 * LD_ERR_NOMEM. */
int ld_sync_transfer_decode(const uint8_t *data, size_t len, size_t max_msg_size,
                            ld_sync_transfer_t *out, char *why, size_t cap);

/* The item a decoded message stands for: (its timestamp, its deterministic hash computed here
 * from topic and message; the sender's word for it is never taken). Errors of
 * ld_waku_message_hash_ex. */
int ld_sync_transfer_id(const ld_sync_transfer_t *t, ld_sync_id_t *out);

#endif
