/* The Reliable Channels paths of the REST server. They reach the channel layer only through the
 * ops table below, which the channel layer fills and hands over (channels/channels_rest.h).
 *
 *   POST   /channels/v1/channels                 {"channelId", "contentTopic", "senderId"}
 *          → 200 {"channelId"}; 400 bad body ("Invalid content body, could not decode: <why>",
 *          "Missing content body", "Wrong Content-Type, …"), "Invalid channel: <why>" (a field
 *          missing, empty or too long, a bad content topic); 409 "channel already exists: <id>";
 *          500 "Create failed: <why>" (state store errors)
 *   GET    /channels/v1/channels/{channelId}     → 200 {"channelId", "exists": true}; 404
 *          "unknown channel: <id>"
 *   DELETE /channels/v1/channels/{channelId}     → 200 "OK"; 404 "unknown channel: <id>"
 *   POST   /channels/v1/channels/{channelId}/messages  {"payload": base64, "ephemeral"?: bool}
 *          → 200 {"requestId"}; 400 bad body or "Invalid message: <why>" (base64, empty payload);
 *          404 "unknown channel: <id>"; 413 "Payload too large: <why>" (over what the channel can
 *          segment; a body over the server's cap is 413 "Request body too large" already);
 *          429 "Too many requests in flight: <why>"; 500 "Send failed: <why>"
 *   GET    /channels/v1/events                   [ChannelEvent…] oldest first, then forgotten
 *   OPTIONS on each of them → 200 "OK"
 * A ChannelEvent is the C library's channel event: {"eventType": "channel_message_received" |
 * "channel_message_sent" | "channel_message_error" | "channel_message_delivered" |
 * "channel_message_delivery_error" | "channel_message_lost", "channelId", "requestId"? (all but
 * received and lost), "senderId"? and "payload"? (base64, received), "error"? (the two errors),
 * "senderId", "messageId", "messageHash", "payloadHash" and "reason" (lost, as the C library's
 * channel_message_lost: "" when not applicable), "timestamp" (ns, when cached)}.
 * The cache keeps at most LD_REST_CHANNEL_EVENTS_MAX events and LD_REST_CHANNEL_EVENTS_MAX_BYTES
 * bytes of payload between polls: beyond either, the oldest go first (counted, see
 * ld_rest_channels_dropped).
 *
 * Before attach and after detach (a node without the channel layer) every path below /channels/
 * answers 404 LD_REST_CHANNELS_UNAVAILABLE.
 *
 * Threading: the server's loop thread only. */
#ifndef LD_REST_CHANNELS_ROUTES_H
#define LD_REST_CHANNELS_ROUTES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "rest/server.h"

#define LD_REST_CHANNELS_UNAVAILABLE                                                               \
  "/channels endpoints are not available. Please check your configuration: --channels=true "       \
  "(library: entryLayer channels)"
#define LD_REST_CHANNEL_EVENTS_MAX 1000
#define LD_REST_CHANNEL_EVENTS_MAX_BYTES (32u * 1024 * 1024)
#define LD_REST_CHANNEL_REQUEST_ID_MAX 64

/* The channel layer's calls. Each writes a one-line reason into `why` on failure and returns the
 * channel layer's error: LD_ERR_EXISTS, LD_ERR_NOT_FOUND, LD_ERR_INVALID_ARG, LD_ERR_TOO_LARGE,
 * LD_ERR_LIMIT, LD_ERR_DB / LD_ERR_IO / LD_ERR_NOMEM (anything else: 500). */
typedef struct ld_rest_channels_ops {
  int (*create)(void *user_data, const char *channel_id, const char *content_topic,
                const char *sender_id, char *why, size_t why_cap);
  bool (*exists)(void *user_data, const char *channel_id);
  /* writes the request ID (at most LD_REST_CHANNEL_REQUEST_ID_MAX characters and a NUL) */
  int (*send)(void *user_data, const char *channel_id, const uint8_t *payload, size_t len,
              bool ephemeral, char request_id[LD_REST_CHANNEL_REQUEST_ID_MAX + 1], char *why,
              size_t why_cap);
  int (*close)(void *user_data, const char *channel_id, char *why, size_t why_cap);
  void *user_data;
} ld_rest_channels_ops_t;

typedef enum ld_rest_channel_event_kind {
  LD_REST_CHANNEL_RECEIVED = 0,
  LD_REST_CHANNEL_SENT,
  LD_REST_CHANNEL_ERROR,
  LD_REST_CHANNEL_DELIVERED,
  LD_REST_CHANNEL_DELIVERY_ERROR,
  LD_REST_CHANNEL_LOST,
} ld_rest_channel_event_kind_t;

/* "channel_message_received", …; "unknown" for anything else. */
const char *ld_rest_channel_event_name(ld_rest_channel_event_kind_t kind);

/* An event as the channel layer reports it (every pointer borrowed; NULL when absent). */
typedef struct ld_rest_channel_event {
  ld_rest_channel_event_kind_t kind;
  const char *channel_id;
  const char *request_id;
  const char *sender_id;
  const uint8_t *payload;
  size_t payload_len;
  const char *error;
  /* LOST (channels/channels.h ld_channel_event_t) */
  const char *message_id, *message_hash, *payload_hash, *reason;
} ld_rest_channel_event_t;

typedef struct ld_rest_channels ld_rest_channels_t;

/* Marks /channels unavailable (LD_REST_CHANNELS_UNAVAILABLE). Called by the server at start. */
int ld_rest_install_channels_unavailable(ld_rest_server_t *srv);

/* Installs the paths above on `srv` with `ops` (copied; create, exists, send and close are
 * required) and an empty event cache. Errors: LD_ERR_INVALID_ARG (incomplete ops),
 * LD_ERR_EXISTS (attached already), LD_ERR_LIMIT, LD_ERR_NOMEM; nothing stays installed. */
int ld_rest_channels_attach(ld_rest_server_t *srv, const ld_rest_channels_ops_t *ops,
                            ld_rest_channels_t **out);

/* Removes the paths (404 again) and frees the cache. NULL is a no-op. */
void ld_rest_channels_detach(ld_rest_channels_t *rc);

/* Caches a copy of `ev` for GET /channels/v1/events (dropping the oldest beyond the bounds).
 * LD_ERR_INVALID_ARG (no channel ID, unknown kind), LD_ERR_TOO_LARGE (a payload over
 * LD_REST_CHANNEL_EVENTS_MAX_BYTES alone: not cached, counted), LD_ERR_NOMEM. */
int ld_rest_channels_event(ld_rest_channels_t *rc, const ld_rest_channel_event_t *ev,
                           int64_t now_ns);

/* Events cached now, and events dropped (over the bounds) since attach. */
size_t ld_rest_channels_cached(const ld_rest_channels_t *rc);
uint64_t ld_rest_channels_dropped(const ld_rest_channels_t *rc);

#endif
