/* The events of the C API (c-api.md §6) as the compact JSON the event callback receives:
 * "eventType" first, the other fields in the documented order, no blanks.
 *
 * Text fields that come from the network (content topics, pubsub topics, errors) are written as
 * valid UTF-8: bytes that are not UTF-8 become U+FFFD.
 *
 * Every builder returns a heap string (free()) and its length in *len (not counting the NUL),
 * or NULL when out of memory. Pure functions; any thread. */
#ifndef LD_LIB_EVENTS_JSON_H
#define LD_LIB_EVENTS_JSON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "messaging/messaging.h"
#include "p2p/peerid.h"
#include "waku/core/message.h"
#include "waku/relay/validators.h"

/* The eventType of each event. */
#define LD_LIB_EVENT_MESSAGE_SENT "message_sent"
#define LD_LIB_EVENT_MESSAGE_PROPAGATED "message_propagated"
#define LD_LIB_EVENT_MESSAGE_ERROR "message_error"
#define LD_LIB_EVENT_MESSAGE_RECEIVED "message_received"
#define LD_LIB_EVENT_CONNECTION_STATUS "connection_status_change"
#define LD_LIB_EVENT_TOPIC_HEALTH "relay_topic_health_change"
#define LD_LIB_EVENT_CONNECTION_CHANGE "connection_change"
#define LD_LIB_EVENT_KERNEL_MESSAGE "message"
#define LD_LIB_EVENT_NOT_RESPONDING "not_responding"

/* The listener names of the Nim library, used in "Exception <name> when calling
 * 'eventCallBack': …" (ld_lib_ctx_emit_error). */
#define LD_LIB_LISTENER_MESSAGE_SENT "onMessageSent"
#define LD_LIB_LISTENER_MESSAGE_PROPAGATED "onMessagePropagated"
#define LD_LIB_LISTENER_MESSAGE_ERROR "onMessageError"
#define LD_LIB_LISTENER_MESSAGE_RECEIVED "onMessageReceived"
#define LD_LIB_LISTENER_CONNECTION_STATUS "onConnectionStatusChange"
#define LD_LIB_LISTENER_TOPIC_HEALTH "onTopicHealthChange"
#define LD_LIB_LISTENER_CONNECTION_CHANGE "onConnectionChange"
#define LD_LIB_LISTENER_KERNEL_MESSAGE "onReceivedMessage"

/* The peerEvent of connection_change. */
typedef enum ld_lib_peer_event {
  LD_LIB_PEER_CONNECTED = 0,  /* "EventConnected" */
  LD_LIB_PEER_DISCONNECTED,   /* "EventDisconnected" */
  LD_LIB_PEER_IDENTIFIED,     /* "EventIdentified" */
  LD_LIB_PEER_METADATA_UPDATE /* "EventMetadataUpdated" */
} ld_lib_peer_event_t;

/* message_sent / message_propagated / message_error:
 * {"eventType":…,"requestId":"…","messageHash":"0x…"[,"error":"…"]}. `event_type` is one of the
 * three LD_LIB_EVENT_MESSAGE_* above; messageHash is "" when ev->has_hash is false; "error" is
 * written for message_error only ("" when ev->error is NULL). */
char *ld_lib_event_send_json(const char *event_type, const ld_messaging_send_event_t *ev,
                             size_t *len);

/* message_received: {"eventType":"message_received","messageHash":"0x…","message":{"payload":
 * [ints],"contentTopic":"…","meta":[ints],"version":N,"timestamp":N,"ephemeral":bool,"proof":
 * [ints]}}; byte fields as arrays of integers 0..255. */
char *ld_lib_event_received_json(const uint8_t hash[LD_WAKU_HASH_LEN], const ld_waku_message_t *msg,
                                 size_t *len);

/* connection_status_change: {"eventType":…,"connectionStatus":"Disconnected"|
 * "PartiallyConnected"|"Connected"}. */
char *ld_lib_event_connection_status_json(ld_connection_status_t status, size_t *len);

/* relay_topic_health_change: {"eventType":…,"pubsubTopic":"…","topicHealth":"UnHealthy"|
 * "MinimallyHealthy"|"SufficientlyHealthy"|"NotSubscribed"}. */
char *ld_lib_event_topic_health_json(const char *pubsub_topic, ld_relay_health_t health,
                                     size_t *len);

/* connection_change: {"eventType":…,"peerId":"16U…","peerEvent":"EventConnected"|…}. */
char *ld_lib_event_connection_change_json(const ld_peerid_t *peer, ld_lib_peer_event_t ev,
                                          size_t *len);

/* The kernel tier's message event: {"eventType":"message","pubsubTopic":"…","messageHash":
 * "0x…","wakuMessage":{"payload":"<b64>","contentTopic":"…","version":N,"timestamp":N,
 * "ephemeral":bool,"meta":"<b64>","proof":"<b64>"}}; byte fields as padded standard base64.
 * `hash` is the message's deterministic hash on `pubsub_topic`. */
char *ld_lib_event_kernel_message_json(const char *pubsub_topic,
                                       const uint8_t hash[LD_WAKU_HASH_LEN],
                                       const ld_waku_message_t *msg, size_t *len);

/* not_responding: {"eventType":"not_responding"}. */
char *ld_lib_event_not_responding_json(size_t *len);

#endif
