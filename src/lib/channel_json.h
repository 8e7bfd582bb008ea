/* The reliable channels of the C library: the channel manager of a context (entry layer
 * channels) built from channelsOverrides (c-api.md §5.6), channel_send's message JSON, and the
 * channel events as the compact JSON of c-api.md §6 (plus the LIP's delivered and delivery-error
 * events, which the Nim library lacks, and channel_message_lost):
 *
 *   channel_message_received        {"eventType":…,"channelId":…,"senderId":…,"payload":"<b64>"}
 *   channel_message_sent            {"eventType":…,"channelId":…,"requestId":…}
 *   channel_message_error           {"eventType":…,"channelId":…,"requestId":…,"error":…}
 *   channel_message_delivered       {"eventType":…,"channelId":…,"requestId":…}
 *   channel_message_delivery_error  {"eventType":…,"channelId":…,"requestId":…,"error":…}
 *   channel_message_lost            {"eventType":…,"channelId":…,"senderId":…,"messageId":…,
 *                                    "messageHash":…,"payloadHash":…,"reason":…}
 * channel_message_lost reports what another participant sent and this one will never deliver
 * (ld_channel_event_t in channels/channels.h): a causal dependency declared lost ("reason":
 * "Irretrievable"; "messageId" its SDS message ID, "messageHash" its retrieval hint "0x…") or a
 * segment set that will never reassemble ("Expired", "Evicted", "HashMismatch"; "payloadHash"
 * the hex keccak256 of the whole payload). A field that does not apply (or is unknown) is "". */
#ifndef LD_LIB_CHANNEL_JSON_H
#define LD_LIB_CHANNEL_JSON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "channels/channels.h"
#include "lib/config_json.h"
#include "node/config.h"

typedef struct ld_lib_ctx ld_lib_ctx_t;

#define LD_LIB_EVENT_CHANNEL_RECEIVED "channel_message_received"
#define LD_LIB_EVENT_CHANNEL_SENT "channel_message_sent"
#define LD_LIB_EVENT_CHANNEL_ERROR "channel_message_error"
#define LD_LIB_EVENT_CHANNEL_DELIVERED "channel_message_delivered"
#define LD_LIB_EVENT_CHANNEL_DELIVERY_ERROR "channel_message_delivery_error"
#define LD_LIB_EVENT_CHANNEL_LOST "channel_message_lost"

/* Fills `out` from the defaults and the overrides. LD_ERR_INVALID_ARG with a reason for a value
 * out of range (sdsAcknowledgementTimeoutMs 1..86 400 000, sdsMaxRetransmissions 0..1 000,
 * sdsCausalHistorySize 1..1 024, segmentationSegmentSizeBytes 128..LD_NODE_MAX_MSG_SIZE_LIMIT,
 * rateLimitEpochPeriodSec 1..86 400, rateLimitMessagesPerEpoch 1..1 000 000; rateLimitEnabled
 * turns the rate limit manager on; segmentationEnableReedSolomon sends LIP-243 Reed–Solomon parity
 * at the LIP's rate 0.125, LD_CHANNELS_PARITY_RATE_PPM, and then needs a segment size of at least
 * LD_SEGMENT_PARITY_OVERHEAD + 64). */
int ld_lib_channels_config(const ld_lib_channels_config_t *in, ld_channels_config_t *out, char *why,
                           size_t why_cap);

/* The rate limit manager's budget under RLN. RLN is on with --rln-relay (kernel options) or when
 * messagingOverrides name an RLN contract (rlnContractAddress, c-api.md §5.4: "also turns RLN
 * on"); then the rate limit is on with the RLN epoch (rln-relay-epoch-sec, LD_NODE_RLN_DEFAULT_
 * EPOCH_SEC when unset) and the user message limit per epoch (rln-relay-user-message-limit,
 * LD_NODE_RLN_DEFAULT_USER_MESSAGE_LIMIT when unset), whatever the channelsOverrides say: a relay
 * with RLN refuses what exceeds them. Returns true when it applied them; without RLN `out` is
 * left as channelsOverrides made it. */
bool ld_lib_channels_rln_budget(const ld_node_config_t *node, ld_channels_config_t *out);

/* Creates the context's channel manager on its started messaging client (its rate limit from
 * the node's RLN settings when RLN is on, see above). Worker thread. */
int ld_lib_channels_start(ld_lib_ctx_t *ctx, ld_channels_t **out, char *why, size_t why_cap);

/* Frees it (NULL is a no-op); before the messaging client is freed. Worker thread. */
void ld_lib_channels_stop(ld_lib_ctx_t *ctx, ld_channels_t *c);

/* Parses channel_send's {"payload":"<base64>","ephemeral":false}. Returns 0 (the payload is a
 * heap buffer, NULL when empty) or an error with the text for the callback:
 *   LD_ERR_MALFORMED      "Failed to parse channel message JSON: <why>"
 *   LD_ERR_MISSING_FIELD  "Missing payload field"
 *   LD_ERR_BAD_ENCODING / LD_ERR_TOO_LARGE  "invalid payload format: <why>" */
int ld_lib_channel_message_parse(const char *json, size_t len, size_t max_payload,
                                 uint8_t **payload, size_t *payload_len, bool *ephemeral, char *err,
                                 size_t errlen);

/* The event of broker kind `kind` (LD_EVENT_CHANNEL_*), or NULL (out of memory, unknown kind).
 * Heap string, its length in *len. */
char *ld_lib_event_channel_json(int kind, const ld_channel_event_t *ev, size_t *len);

/* The Nim listener name of a channel event kind ("onChannelMessageReceived", …). */
const char *ld_lib_channel_listener_name(int kind);

#endif
