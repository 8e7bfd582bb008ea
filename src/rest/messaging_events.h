/* The event caches behind the Messaging API's poll endpoints (logos-delivery's REST):
 *   GET /messaging/v1/events/send[/{requestId}]  the send timelines, grouped by request ID;
 *   GET /messaging/v1/events/received            the received messages, oldest first.
 * Both are evict-after-poll: a poll hands the entries over and forgets them. Unpolled entries
 * are bounded: at most `max_requests` timelines (the oldest request is dropped first) and a ring
 * of `max_received` messages (the oldest is overwritten).
 *
 * Pure data structure: no I/O, no clock (the caller stamps events with `now_ns`). One thread at a
 * time. */
#ifndef LD_REST_MESSAGING_EVENTS_H
#define LD_REST_MESSAGING_EVENTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "waku/core/message.h"

#define LD_REST_MSG_EVENTS_DEFAULT_RECEIVED 50    /* received messages kept between polls */
#define LD_REST_MSG_EVENTS_DEFAULT_REQUESTS 10000 /* request IDs kept between polls */
#define LD_REST_MSG_EVENTS_MAX_PER_REQUEST 16     /* events in one timeline; later ones dropped */
#define LD_REST_MSG_EVENTS_MAX_REQUEST_ID 64      /* bytes of a request ID */
#define LD_REST_MSG_EVENTS_MAX_ERROR 512          /* bytes of an error text (longer: cut) */

typedef enum ld_rest_send_kind {
  LD_REST_SEND_PROPAGATED = 0,
  LD_REST_SEND_SENT,
  LD_REST_SEND_ERROR,
} ld_rest_send_kind_t;

/* "propagated", "sent", "error". */
const char *ld_rest_send_kind_name(ld_rest_send_kind_t kind);

typedef struct ld_rest_send_event {
  ld_rest_send_kind_t kind;
  bool has_hash;
  uint8_t hash[LD_WAKU_HASH_LEN];
  char *error;       /* LD_REST_SEND_ERROR: the reason (owned); NULL otherwise */
  int64_t timestamp; /* ns, when cached */
} ld_rest_send_event_t;

/* The timeline of one request. Handed out by the polls below; release it with
 * ld_rest_send_status_clear. */
typedef struct ld_rest_send_status {
  char request_id[LD_REST_MSG_EVENTS_MAX_REQUEST_ID + 1];
  ld_rest_send_event_t *events; /* in arrival order */
  size_t n_events;
} ld_rest_send_status_t;

/* A received message. */
typedef struct ld_rest_received {
  uint8_t hash[LD_WAKU_HASH_LEN];
  ld_waku_message_t msg; /* owned */
} ld_rest_received_t;

typedef struct ld_rest_msg_events ld_rest_msg_events_t;

/* Creates empty caches; 0 for either bound selects its default. NULL when out of memory. */
ld_rest_msg_events_t *ld_rest_msg_events_new(size_t max_received, size_t max_requests);

/* Frees the caches and everything in them. NULL is a no-op. */
void ld_rest_msg_events_free(ld_rest_msg_events_t *c);

/* Appends an event to the timeline of `request_id` (created, at the end of the order, when the
 * request has none; the oldest timeline is dropped beyond max_requests). `hash` may be NULL;
 * `error` (copied, cut to LD_REST_MSG_EVENTS_MAX_ERROR bytes) is kept for LD_REST_SEND_ERROR
 * only. Errors: LD_ERR_INVALID_ARG (empty or overlong request ID, unknown kind), LD_ERR_LIMIT
 * (the timeline holds LD_REST_MSG_EVENTS_MAX_PER_REQUEST events: this one is dropped),
 * LD_ERR_NOMEM (dropped). */
int ld_rest_msg_events_add_send(ld_rest_msg_events_t *c, const char *request_id,
                                ld_rest_send_kind_t kind, const uint8_t *hash, const char *error,
                                int64_t now_ns);

/* Appends a copy of `msg` with its hash to the received ring. LD_ERR_NOMEM (dropped). */
int ld_rest_msg_events_add_received(ld_rest_msg_events_t *c, const uint8_t hash[LD_WAKU_HASH_LEN],
                                    const ld_waku_message_t *msg);

/* Hands over every timeline, oldest request first, as a new array (*out; NULL when there is
 * none; free with ld_rest_send_statuses_free) and empties the send cache. LD_ERR_NOMEM leaves
 * the cache as it was. */
int ld_rest_msg_events_poll_sends(ld_rest_msg_events_t *c, ld_rest_send_status_t **out, size_t *n);

/* Hands over the timeline of `request_id` into `out` (release with ld_rest_send_status_clear)
 * and forgets it. LD_ERR_NOT_FOUND when the request has none. */
int ld_rest_msg_events_poll_send(ld_rest_msg_events_t *c, const char *request_id,
                                 ld_rest_send_status_t *out);

/* Hands over the received messages, oldest first, as a new array (*out; NULL when there is none;
 * free with ld_rest_received_free) and empties the ring. LD_ERR_NOMEM leaves it as it was. */
int ld_rest_msg_events_poll_received(ld_rest_msg_events_t *c, ld_rest_received_t **out, size_t *n);

/* Timelines and received messages currently kept. */
size_t ld_rest_msg_events_send_count(const ld_rest_msg_events_t *c);
size_t ld_rest_msg_events_received_count(const ld_rest_msg_events_t *c);

void ld_rest_send_status_clear(ld_rest_send_status_t *s);
void ld_rest_send_statuses_free(ld_rest_send_status_t *s, size_t n);
void ld_rest_received_free(ld_rest_received_t *r, size_t n);

#endif
