/* The message JSON the C API takes: logosdelivery_send's messageJson (c-api.md §2) and the
 * kernel tier's jsonWakuMessage (c-api.md §3), with the Nim library's leniency (a field of the
 * wrong JSON type reads as empty, zero or false) and its error texts. Inputs are bounded: the
 * JSON by LD_LIB_MESSAGE_JSON_MAX, the decoded payload by the caller's cap, the content topic by
 * LD_LIB_CONTENT_TOPIC_MAX.
 *
 * Base64 fields are standard base64; the '=' padding may be left out.
 *
 * Pure functions on caller storage; any thread. */
#ifndef LD_LIB_MESSAGE_JSON_H
#define LD_LIB_MESSAGE_JSON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "waku/core/message.h"

/* Longest message JSON accepted: the base64 of the largest message a node can be configured for
 * (node/config.h LD_NODE_MAX_MSG_SIZE_LIMIT) plus room for the other fields. */
#define LD_LIB_MESSAGE_JSON_MAX (8u * 1024 * 1024)
/* Longest content topic, in bytes (node/config.h LD_NODE_CONTENT_TOPIC_MAX without the NUL). */
#define LD_LIB_CONTENT_TOPIC_MAX 255u

/* logosdelivery_send's message. Owned buffers (ld_lib_send_message_clear). */
typedef struct ld_lib_send_message {
  char *content_topic; /* NUL-terminated; "" when the key held no string */
  uint8_t *payload;    /* NULL when empty */
  size_t payload_len;
  bool ephemeral;
} ld_lib_send_message_t;

/* Parses `len` bytes of `json` (need not be NUL-terminated) into `out` (zeroed here). Returns 0,
 * or an LD_ERR_* with the text for the callback in `err` (without the nim-ffi prefix):
 *   LD_ERR_MALFORMED  "Failed to parse message JSON: <why>" (not JSON, not an object, over
 *                     LD_LIB_MESSAGE_JSON_MAX, content topic over LD_LIB_CONTENT_TOPIC_MAX bytes
 *                     or holding a NUL)
 *   LD_ERR_MISSING_FIELD  "Missing contentTopic field", "Missing payload field"
 *   LD_ERR_BAD_ENCODING   "invalid payload format: <why>"
 *   LD_ERR_TOO_LARGE      "invalid payload format: payload larger than <max_payload> bytes"
 *   LD_ERR_NOMEM */
int ld_lib_send_message_parse(const char *json, size_t len, size_t max_payload,
                              ld_lib_send_message_t *out, char *err, size_t errlen);

void ld_lib_send_message_clear(ld_lib_send_message_t *m);

/* A kernel-tier WakuMessage: `msg` views the owned buffers below (valid until
 * ld_lib_json_message_clear). */
typedef struct ld_lib_json_message {
  ld_waku_message_t msg;
  char *content_topic; /* NUL-terminated */
  uint8_t *payload, *meta, *proof;
} ld_lib_json_message_t;

/* Parses a jsonWakuMessage: payload (base64, required), contentTopic (required), version,
 * timestamp (ns: a JSON integer or a decimal string; absent or null is 0), ephemeral, meta and
 * proof (base64). `max_size` caps the decoded payload and proof (bytes); meta is capped at
 * LD_WAKU_MAX_META_LEN. Returns 0 or an LD_ERR_* with the text in `err`:
 *   LD_ERR_MALFORMED / LD_ERR_MISSING_FIELD  "Error parsing json message: <why>", e.g.
 *       "… Missing required field in WakuMessage: payload", "… Invalid int64 value in
 *       `timestamp`", "… Invalid uint32 value in `version`"
 *   LD_ERR_BAD_ENCODING / LD_ERR_TOO_LARGE / LD_ERR_FIELD_TOO_LONG  "Problem building the
 *       WakuMessage: invalid payload format: <why>" (meta, proof likewise)
 *   LD_ERR_NOMEM */
int ld_lib_json_message_parse(const char *json, size_t len, size_t max_size,
                              ld_lib_json_message_t *out, char *err, size_t errlen);

void ld_lib_json_message_clear(ld_lib_json_message_t *m);

#endif
