/* The node's broker vocabulary: the event kinds it publishes with their payloads, and the names
 * of the request providers it registers. Payloads are borrowed, valid only during the listener
 * call. */
#ifndef LD_NODE_EVENTS_H
#define LD_NODE_EVENTS_H

#include <stdbool.h>
#include <stddef.h>

#include "node/fanout.h"
#include "p2p/multiaddr.h"
#include "p2p/peerid.h"
#include "p2p/stream.h"
#include "waku/metadata/metadata.h"
#include "waku/relay/validators.h"

enum {
  /* A connection came up or went away. Payload: ld_event_connection_t. */
  LD_EVENT_CONNECTION = 1,
  /* The health of a relay topic changed. Payload: ld_event_topic_health_t. */
  LD_EVENT_TOPIC_HEALTH = 2,
  /* A message reached the end of the fan-out (received from a peer or published by the node).
   * Payload: ld_fanout_message_t. */
  LD_EVENT_MESSAGE = 3,
  /* A relay (gossipsub) peer came up or went away. Payload: ld_event_relay_peer_t. */
  LD_EVENT_RELAY_PEER = 4,
  /* A static peer's connection state changed. Payload: ld_event_static_peer_t. */
  LD_EVENT_STATIC_PEER = 5,
  /* A part the node cannot run without failed after start (the archive could not be opened).
   * Payload: ld_event_node_failure_t. The node keeps running without it; the program stops. */
  LD_EVENT_NODE_FAILURE = 6,
  /* A peer said its cluster and shards (metadata: its answer to our request, or its own
   * request), or its connection is being closed for what it said (another cluster) or did not
   * say. Payload: ld_event_peer_metadata_t. */
  LD_EVENT_PEER_METADATA = 7,
  /* Upper layers number their own kinds from here. */
  LD_EVENT_USER = 1000,
};

typedef struct ld_event_connection {
  const ld_peerid_t *peer;
  ld_conn_t *conn;
  bool connected; /* false: it went away */
  bool outbound;  /* we dialed it */
  int reason;     /* when it went away: 0 or the LD_ERR_* */
  size_t n_conns; /* connections to this peer after the change */
} ld_event_connection_t;

typedef struct ld_event_topic_health {
  const char *pubsub_topic;
  ld_relay_health_t health;
} ld_event_topic_health_t;

typedef struct ld_event_relay_peer {
  const ld_peerid_t *peer;
  bool up;
} ld_event_relay_peer_t;

typedef struct ld_event_node_failure {
  const char *part; /* "archive" */
  int err;          /* LD_ERR_* */
  const char *why;  /* one line */
} ld_event_node_failure_t;

typedef struct ld_event_peer_metadata {
  const ld_peerid_t *peer;
  ld_conn_t *conn;
  const ld_metadata_info_t *info; /* what it said; NULL when it answered nothing (rejected only) */
  int rejected;                   /* 0, or why the connection is being closed (LD_ERR_*) */
} ld_event_peer_metadata_t;

typedef struct ld_event_static_peer {
  const ld_multiaddr_t *addr; /* as configured, with /p2p */
  bool connected;
  int dial_error;        /* the failed dial's error, or 0 */
  uint64_t next_dial_ms; /* when not connected: the next dial (monotonic ms) */
} ld_event_static_peer_t;

/* ---- request providers the node registers ------------------------------------------------------
 */

/* The node's announced listen addresses, each ending in /p2p/<id>. Request: NULL. Response:
 * ld_request_addrs_t (the provider fills up to `max` entries of `out` and sets `total`). */
#define LD_PROVIDE_LISTEN_ADDRS "node.listen_addrs"
typedef struct ld_request_addrs {
  ld_multiaddr_t *out;
  size_t max;
  size_t total;
} ld_request_addrs_t;

/* Health of a relay topic. Request: const char * (pubsub topic). Response: ld_relay_health_t.
 * LD_ERR_UNSUPPORTED when relay is not mounted. */
#define LD_PROVIDE_TOPIC_HEALTH "relay.topic_health"

/* Publishes a message over relay. Request: ld_request_publish_t. Response:
 * ld_response_publish_t. Errors of ld_node_publish. */
#define LD_PROVIDE_RELAY_PUBLISH "relay.publish"
typedef struct ld_request_publish {
  const char *pubsub_topic; /* NULL: by autosharding from msg->content_topic */
  const ld_waku_message_t *msg;
} ld_request_publish_t;
typedef struct ld_response_publish {
  int peers;                      /* relay peers it was sent to */
  uint8_t hash[LD_WAKU_HASH_LEN]; /* its deterministic hash */
} ld_response_publish_t;

#endif
