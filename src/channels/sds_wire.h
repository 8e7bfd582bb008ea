/* The SDS message (Scalable Data Sync with the SDS-Repair fields) on the wire: the value type and
 * its protobuf codec (proto/sds_message.proto), in the layout of the SDS specification and of
 * js-waku's `@waku/sds` — field numbers 1, 2, 3, 10, 11, 12, 13, 20, the Lamport timestamp in
 * Unix milliseconds — not nim-sds's layout (fields 1–7, seconds), which this decoder refuses
 * (a varint where the sender ID's string belongs is malformed here).
 *
 * Encoding writes what js-waku writes, byte for byte: fields in number order; sender, message
 * and channel IDs and an entry's message ID only when not empty (proto3 implicit presence);
 * lamport_timestamp, bloom_filter, content and an entry's retrieval_hint and sender_id whenever
 * their has_ flag is set, even when zero or empty (proto3 `optional`). protobuf-c packs it.
 *
 * Decoding walks the input with the bounds-checked cursor as js-waku's decoder reads it: unknown
 * fields are skipped, a singular field that repeats keeps its last value, every occurrence of a
 * repeated field adds an entry. It is stricter where js-waku would read garbage: a known field
 * sent with another wire type is malformed. Caps (a decode fails rather than allocate more):
 *   input              LD_SDS_MAX_WIRE_SIZE bytes              LD_ERR_TOO_LARGE
 *   IDs (any of them)  LD_SDS_MAX_ID_LEN bytes                 LD_ERR_FIELD_TOO_LONG
 *   retrieval hints    LD_SDS_MAX_HINT_LEN bytes               LD_ERR_FIELD_TOO_LONG
 *   causal_history     LD_SDS_MAX_CAUSAL_HISTORY entries       LD_ERR_LIMIT
 *   repair_request     LD_SDS_MAX_REPAIR_REQUESTS entries      LD_ERR_LIMIT
 * Text fields must be UTF-8 without NUL (LD_ERR_BAD_ENCODING); a malformed protobuf (truncated
 * field, varint over 10 bytes or 64 bits, field number 0, group or reserved wire type, a known
 * field with another wire type, a malformed history entry) is LD_ERR_BAD_PROTOBUF. `why`, when
 * not NULL, receives a one-line description of the failure.
 *
 * Pure functions (no I/O, no global state): any thread; one thread at a time per value. */
#ifndef LD_CHANNELS_SDS_WIRE_H
#define LD_CHANNELS_SDS_WIRE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/buf.h"

/* Longest serialized SDS message decoded (above every Waku max message size in use). */
#define LD_SDS_MAX_WIRE_SIZE (4u * 1024u * 1024u)
/* Longest message, sender or channel ID (js-waku's IDs are 64 hex digits; senders are
 * application-chosen strings). */
#define LD_SDS_MAX_ID_LEN 1024u
/* Longest retrieval hint (a Waku message hash is 32 bytes). */
#define LD_SDS_MAX_HINT_LEN 256u
/* Most causal-history entries in one message (js-waku sends 200, the LIP recommends 2). */
#define LD_SDS_MAX_CAUSAL_HISTORY 1024u
/* Most repair requests in one message (the spec recommends at most 3). */
#define LD_SDS_MAX_REPAIR_REQUESTS 64u

/* One causal-history or repair-request entry.
 *
 * Text fields are `_len` bytes of UTF-8, NUL-terminated in a decoded message (the NUL is not
 * counted). An absent optional field has its has_ flag false; in a decoded message its pointer
 * then points at an empty string (never NULL). When building a message for encoding, a NULL
 * pointer is allowed for a field of length 0. */
typedef struct ld_sds_history_entry {
  const char *message_id;
  size_t message_id_len;
  bool has_retrieval_hint;
  const uint8_t *retrieval_hint;
  size_t retrieval_hint_len;
  bool has_sender_id; /* SDS-R: the original sender */
  const char *sender_id;
  size_t sender_id_len;
} ld_sds_history_entry_t;

/* An SDS message as a set of views.
 *
 * Ownership: either borrowed (built for encoding: ld_sds_message_init, then point the fields at
 * the caller's buffers, which must outlive every use) or owned (after ld_sds_message_decode:
 * every view points into storage the message owns; ld_sds_message_clear releases it). A decoded
 * message never points into its input. Conventions of the fields as in ld_sds_history_entry_t;
 * sender, message and channel IDs are never absent on the wire (absent reads as ""). */
typedef struct ld_sds_message {
  const char *sender_id;
  size_t sender_id_len;
  const char *message_id;
  size_t message_id_len;
  const char *channel_id;
  size_t channel_id_len;
  bool has_lamport;
  uint64_t lamport; /* Unix milliseconds advanced as a Lamport clock */
  const ld_sds_history_entry_t *causal_history;
  size_t causal_history_len;
  bool has_bloom;
  const uint8_t *bloom; /* js-waku: 64-bit words, big-endian (channels/bloom.h) */
  size_t bloom_len;
  const ld_sds_history_entry_t *repair_request;
  size_t repair_request_len;
  bool has_content;
  const uint8_t *content;
  size_t content_len;
  void *storage; /* private: owned storage, NULL for a borrowed message */
} ld_sds_message_t;

/* The message classes, decided as js-waku decides them. */
typedef enum ld_sds_class {
  LD_SDS_CLASS_INVALID = 0,   /* no Lamport timestamp and no content: dropped */
  LD_SDS_CLASS_CONTENT = 1,   /* Lamport timestamp and non-empty content */
  LD_SDS_CLASS_SYNC = 2,      /* Lamport timestamp, content absent or empty */
  LD_SDS_CLASS_EPHEMERAL = 3, /* no Lamport timestamp, non-empty content */
} ld_sds_class_t;

/* Makes `m` an empty borrowed message (every field absent or empty). */
void ld_sds_message_init(ld_sds_message_t *m);

/* Releases an owned message's storage (no-op for a borrowed one) and re-initialises it. */
void ld_sds_message_clear(ld_sds_message_t *m);

ld_sds_class_t ld_sds_message_class(const ld_sds_message_t *m);

/* Static name of a class: "content", "sync", "ephemeral", "invalid". */
const char *ld_sds_class_name(ld_sds_class_t c);

/* Appends the js-waku encoding of `m` to `out` (no length prefix).
 * Errors (nothing appended): LD_ERR_INVALID_ARG (NULL arguments, a NULL pointer with a nonzero
 * length), LD_ERR_FIELD_TOO_LONG / LD_ERR_LIMIT / LD_ERR_BAD_ENCODING (a value the decoder would
 * refuse), LD_ERR_NOMEM. */
int ld_sds_message_encode(const ld_sds_message_t *m, ld_buf_t *out);

/* Size of the encoding of a valid `m`. */
size_t ld_sds_message_encoded_len(const ld_sds_message_t *m);

/* Decodes `data[0..len)` (NULL allowed when len is 0) into `out` (initialised; its old content
 * is cleared first), which becomes an owned message. Errors (listed above; `out` left empty):
 * LD_ERR_TOO_LARGE, LD_ERR_BAD_PROTOBUF, LD_ERR_FIELD_TOO_LONG, LD_ERR_LIMIT,
 * LD_ERR_BAD_ENCODING, LD_ERR_INVALID_ARG, LD_ERR_NOMEM. `why` (NULL or `why_cap` bytes) gets a
 * description on failure. */
int ld_sds_message_decode(const uint8_t *data, size_t len, ld_sds_message_t *out, char *why,
                          size_t why_cap);

#endif
