/* WakuMessage (14/WAKU2-MESSAGE): the value type, its protobuf codec (proto/waku_message.proto,
 * compiled with protobuf-c) in the dialect nwaku speaks, the deterministic message hash and the
 * relay message ID.
 *
 * Encoding follows nwaku: every field is written, even when zero or empty (`18 00` for version 0,
 * `aa 01 00` for an empty proof, `f8 01 00` for ephemeral=false), in field-number order, so that
 * nwaku's decoder, which requires payload and content topic, accepts every message we send.
 *
 * Decoding is lenient, as js-waku and go-waku peers need: an absent field reads as empty or zero
 * (js-waku and go-waku omit an empty payload), unknown fields are skipped, a known field sent
 * with another wire type is skipped, and when a field repeats the last occurrence wins. The input
 * is walked with the bounds-checked cursor first (structure, caps); protobuf-c then unpacks the
 * fields. Decoding fails on a malformed protobuf, a serialized message above the size cap, and a
 * `meta` longer than 64 bytes (nwaku's InvalidLengthField("meta"), a relay Reject).
 *
 * Other protocols carry a WakuMessage as a length-delimited field: declare it `bytes` in their
 * schema and hand the bytes to ld_waku_message_decode, so the same leniency and caps apply.
 *
 * All functions are pure (no global state) and may be called from any thread; a message value is
 * not synchronised, so one thread at a time uses it. */
#ifndef LD_WAKU_CORE_MESSAGE_H
#define LD_WAKU_CORE_MESSAGE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/buf.h"

/* Longest `meta` (application-defined bytes) nwaku accepts. */
#define LD_WAKU_MAX_META_LEN 64
/* Default cap on a serialized WakuMessage: nwaku's DefaultMaxWakuMessageSize "150KiB". Operators
 * change it with --max-msg-size; the codec takes the cap as a parameter. */
#define LD_WAKU_DEFAULT_MAX_MSG_SIZE (150 * 1024)
/* nwaku's DefaultSafetyBufferProtocolOverhead, used in protocol read limits. */
#define LD_WAKU_PROTOCOL_OVERHEAD (64 * 1024)

#define LD_WAKU_HASH_LEN 32
/* Text length of a hash as "0x" and 64 lowercase hex digits (without the NUL). */
#define LD_WAKU_HASH_HEX_LEN (2 + 2 * LD_WAKU_HASH_LEN)

/* Bits of ld_waku_message_t.fields: which fields a decoded message carried on the wire. */
#define LD_WAKU_FIELD_PAYLOAD (1u << 0)
#define LD_WAKU_FIELD_CONTENT_TOPIC (1u << 1)
#define LD_WAKU_FIELD_VERSION (1u << 2)
#define LD_WAKU_FIELD_TIMESTAMP (1u << 3)
#define LD_WAKU_FIELD_META (1u << 4)
#define LD_WAKU_FIELD_PROOF (1u << 5)
#define LD_WAKU_FIELD_EPHEMERAL (1u << 6)

/* A WakuMessage as a set of views.
 *
 * Ownership: the pointers either borrow the caller's buffers (a message built for encoding or
 * hashing: fill the fields after ld_waku_message_init; `storage` stays NULL and the buffers must
 * outlive every use of the message) or point into storage the message owns (after
 * ld_waku_message_decode or ld_waku_message_copy; ld_waku_message_clear releases it and every
 * view with it). A decoded or copied message never points into the input it came from.
 *
 * Pointers of a decoded or copied message are never NULL (empty fields point at a static empty
 * string). When building one, NULL is allowed for a field whose length is 0. `content_topic` is
 * `content_topic_len` bytes and is NOT NUL-terminated; it may in principle hold any bytes (the
 * decoder does not validate it; ld_content_topic_parse does). */
typedef struct ld_waku_message {
  const uint8_t *payload;
  size_t payload_len;
  const char *content_topic;
  size_t content_topic_len;
  uint32_t version;    /* 0 plain / app-encrypted, 1 WAKU-PAYLOAD, 2 Noise; others opaque */
  int64_t timestamp;   /* sender's Unix time in nanoseconds; 0 = unset */
  const uint8_t *meta; /* at most LD_WAKU_MAX_META_LEN bytes */
  size_t meta_len;
  const uint8_t *proof; /* rate_limit_proof: serialized RLN RateLimitProof, opaque here */
  size_t proof_len;
  bool ephemeral;  /* not to be stored by archive or sync */
  unsigned fields; /* LD_WAKU_FIELD_* present on the wire (decode); ignored by the encoder */
  void *storage;   /* private: owned storage, NULL for a borrowed message */
} ld_waku_message_t;

/* Makes `msg` an empty borrowed message (every field empty or zero). */
void ld_waku_message_init(ld_waku_message_t *msg);

/* Releases the storage of an owned message (no-op for a borrowed one) and re-initialises it.
 * Every view the message handed out becomes invalid. */
void ld_waku_message_clear(ld_waku_message_t *msg);

/* Deep copy: `dst` (initialised; its old content is cleared first) becomes an owned message
 * with the values of `src` (`fields` is copied too). LD_ERR_NOMEM leaves `dst` empty;
 * LD_ERR_INVALID_ARG for NULL arguments or a NULL pointer with a nonzero length. */
int ld_waku_message_copy(ld_waku_message_t *dst, const ld_waku_message_t *src);

/* True when both messages carry the same seven values (`fields` and ownership are ignored). */
bool ld_waku_message_equal(const ld_waku_message_t *a, const ld_waku_message_t *b);

/* Size of the nwaku-style encoding of `msg` (not NULL; no length prefix). NULL views count as
 * empty; meta is not checked. */
size_t ld_waku_message_encoded_len(const ld_waku_message_t *msg);

/* Appends the nwaku-style encoding of `msg` (all seven fields, no length prefix) to `out`.
 * `max_size` caps the encoding (0 = LD_WAKU_DEFAULT_MAX_MSG_SIZE, SIZE_MAX = no cap).
 * Errors (nothing appended): LD_ERR_INVALID_ARG (NULL arguments, a NULL pointer with a nonzero
 * length), LD_ERR_FIELD_TOO_LONG (meta over LD_WAKU_MAX_META_LEN), LD_ERR_TOO_LARGE (encoding
 * over the cap), LD_ERR_NOMEM. */
int ld_waku_message_encode(const ld_waku_message_t *msg, size_t max_size, ld_buf_t *out);

/* Decode flags. */
/* Fail with LD_ERR_MISSING_FIELD when payload or content topic is absent, as nwaku does. Without
 * it an absent field reads as empty (what js-waku and go-waku peers need). */
#define LD_WAKU_DECODE_REQUIRE_FIELDS (1u << 0)

/* Decodes one serialized WakuMessage `data[0..len)` (no length prefix; `data` may be NULL when
 * len is 0) into `out` (initialised; its old content is cleared first), which becomes an owned
 * message independent of `data`; release it with ld_waku_message_clear. `max_size` caps `len`
 * (0 = LD_WAKU_DEFAULT_MAX_MSG_SIZE, SIZE_MAX = no cap).
 * Errors (`out` left empty): LD_ERR_TOO_LARGE (len over the cap), LD_ERR_BAD_PROTOBUF (malformed:
 * truncated field, overlong varint, field number 0, group or reserved wire type),
 * LD_ERR_FIELD_TOO_LONG (meta over 64 bytes), LD_ERR_MISSING_FIELD (with
 * LD_WAKU_DECODE_REQUIRE_FIELDS), LD_ERR_INVALID_ARG, LD_ERR_NOMEM. */
int ld_waku_message_decode(const uint8_t *data, size_t len, size_t max_size, unsigned flags,
                           ld_waku_message_t *out);

/* ---- deterministic message hash --------------------------------------------------------- */

/* Hash flags. */
/* js-waku's variant: the timestamp bytes are left out when the timestamp is 0 (js-waku omits
 * them when it is undefined or 0). Only for comparing with js-waku; nodes use the nwaku rule. */
#define LD_WAKU_HASH_JS_OMIT_ZERO_TIMESTAMP (1u << 0)

/* The message's key in store, sync and filter deduplication:
 *   SHA-256(pubsub_topic ‖ payload ‖ content_topic ‖ meta ‖ uint64_be(timestamp))
 * with the timestamp always 8 big-endian bytes, 0 included (nwaku and go-waku). version,
 * ephemeral and the proof are not hashed. `pubsub_topic` is NUL-terminated.
 * Errors: LD_ERR_INVALID_ARG (NULL arguments, NULL pointer with a nonzero length),
 * LD_ERR_NOMEM / LD_ERR_CRYPTO from the hash context. */
int ld_waku_message_hash(const char *pubsub_topic, const ld_waku_message_t *msg,
                         uint8_t out[LD_WAKU_HASH_LEN]);

/* As ld_waku_message_hash with a counted pubsub topic and LD_WAKU_HASH_* flags. */
int ld_waku_message_hash_ex(const char *pubsub_topic, size_t pubsub_topic_len,
                            const ld_waku_message_t *msg, unsigned flags,
                            uint8_t out[LD_WAKU_HASH_LEN]);

/* The gossipsub message ID relay uses: SHA-256 of the serialized message exactly as carried in
 * the gossipsub `data` field (not the deterministic hash: two encodings of one message have two
 * IDs). `data` may be NULL when len is 0. */
void ld_waku_relay_message_id(const uint8_t *data, size_t len, uint8_t out[LD_WAKU_HASH_LEN]);

/* Writes "0x" and the 64 lowercase hex digits of `hash` and a NUL to `out` (nwaku's to0xHex);
 * returns LD_WAKU_HASH_HEX_LEN. */
size_t ld_waku_hash_to_hex(const uint8_t hash[LD_WAKU_HASH_LEN],
                           char out[LD_WAKU_HASH_HEX_LEN + 1]);

/* Parses a hash written as 64 hex digits of either case, with or without a "0x"/"0X" prefix.
 * Returns 0 or LD_ERR_BAD_ENCODING (not hex, or not exactly 32 bytes); `out` is written only on
 * success. */
int ld_waku_hash_from_hex(const char *text, size_t len, uint8_t out[LD_WAKU_HASH_LEN]);

#endif
