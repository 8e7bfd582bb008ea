/* JSON of the Messaging API's REST endpoints (reliability-and-api.md §3.2, §3.3):
 *
 * logos-delivery's paths (/messaging/v1/…):
 *   request   MessagingJsonEnvelope  {"payload": b64 (required, not blank), "contentTopic"
 *                                    (required, not blank), "ephemeral"?: bool, "meta"?: b64}
 *   answers   {"requestId"}; SendStatus {"requestId", "events": [{"kind", "messageHash",
 *             "error"? (error events), "timestamp" (ns, when cached)}]}; ReceivedMessageRecord
 *             {"messageHash", "message": RelayWakuMessage (rest/json.h)}; HealthReport
 *             {"nodeHealth", "connectionStatus"?, "protocolsHealth"}.
 * The Messaging API draft's Message Storage paths (/message, /messages, /subscribe, …): the
 *   request bodies below, errors {"error": "<text>"}, and MessageRecord, which messaging builds
 *   from its records (messaging/messaging_rest.h).
 * Hashes are written "0x" + 64 lowercase hex digits, byte fields standard base64 with padding.
 *
 * Builders return a new reference, or NULL when out of memory. Parsers borrow from the JSON they
 * read (valid while it lives) and write a one-line reason into `err` on failure.
 * Pure functions; any thread. */
#ifndef LD_REST_MESSAGING_JSON_H
#define LD_REST_MESSAGING_JSON_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "rest/messaging_events.h"
#include "waku/core/message.h"

/* Largest skip / take accepted in a query. */
#define LD_REST_MAX_COUNT 1000000000u

/* ---- answers --------------------------------------------------------------------------------- */

/* {"error": text} (text made valid UTF-8). */
json_t *ld_rest_error_json(const char *text);

/* {"requestId": id}, {"subscriptionId": id}, {"status": "ok"}. */
json_t *ld_rest_request_id_json(const char *request_id);
json_t *ld_rest_subscription_id_json(const char *subscription_id);
json_t *ld_rest_status_ok_json(void);

/* ["<s0>", …]. */
json_t *ld_rest_string_list_json(const char *const *s, size_t n);

/* SendStatus, and a JSON array of `n` of them. messageHash is "" for an event without hash. */
json_t *ld_rest_send_status_json(const ld_rest_send_status_t *s);
json_t *ld_rest_send_statuses_json(const ld_rest_send_status_t *s, size_t n);

/* ReceivedMessageRecord, and a JSON array of `n` of them. */
json_t *ld_rest_received_json(const ld_rest_received_t *r);
json_t *ld_rest_received_list_json(const ld_rest_received_t *r, size_t n);

/* HealthReport {"nodeHealth", "connectionStatus" (left out when NULL), "protocolsHealth"}.
 * `protocols` (a JSON array) is consumed, also on failure. */
json_t *ld_rest_health_report_json(const char *node_health, const char *connection_status,
                                   json_t *protocols);

/* ---- requests -------------------------------------------------------------------------------- */

/* A decoded MessagingJsonEnvelope. */
typedef struct ld_rest_envelope {
  const char *content_topic; /* borrowed from the JSON, NUL-terminated */
  size_t content_topic_len;
  uint8_t *payload; /* owned */
  size_t payload_len;
  uint8_t *meta; /* owned; NULL when absent or empty */
  size_t meta_len;
  bool ephemeral;
} ld_rest_envelope_t;

/* Reads a MessagingJsonEnvelope (unknown fields ignored). On failure `out` is left empty and:
 * LD_ERR_MALFORMED (not an object, a required field missing or blank, a field of the wrong
 * type: "Field `payload` is missing or empty", …), LD_ERR_BAD_ENCODING ("Incorrect base64
 * string in field `meta`"; missing '=' padding is tolerated), LD_ERR_FIELD_TOO_LONG ("Field
 * `meta` is longer than 64 bytes"), LD_ERR_TOO_LARGE (decoded payload over `max_payload` bytes;
 * 0: no cap), LD_ERR_NOMEM. */
int ld_rest_envelope_parse(const json_t *json, size_t max_payload, ld_rest_envelope_t *out,
                           char *err, size_t errcap);

/* Frees what the envelope owns and empties it. */
void ld_rest_envelope_clear(ld_rest_envelope_t *e);

/* The draft's POST /subscribe body {"pubsubTopic"?, "contentTopic"}: `*pubsub_topic` is NULL
 * when absent. LD_ERR_MALFORMED ("Field `contentTopic` is missing or empty", …). */
int ld_rest_subscribe_request_parse(const json_t *json, const char **pubsub_topic,
                                    const char **content_topic, char *err, size_t errcap);

/* The draft's POST /unsubscribe body {"subscriptionId"}. LD_ERR_MALFORMED. */
int ld_rest_unsubscribe_request_parse(const json_t *json, const char **subscription_id, char *err,
                                      size_t errcap);

/* A skip / take query value: decimal digits only, at most LD_REST_MAX_COUNT. LD_ERR_MALFORMED
 * (empty, sign, other characters) or LD_ERR_OVERFLOW. */
int ld_rest_parse_count(const char *text, size_t *out);

#endif
