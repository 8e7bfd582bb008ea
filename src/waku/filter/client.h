/* The filter client (12/WAKU2-FILTER, light-node side): sends SUBSCRIBE, SUBSCRIBER_PING,
 * UNSUBSCRIBE and UNSUBSCRIBE_ALL to a service node over /vac/waku/filter-subscribe/2.0.0-beta1
 * and receives pushes on /vac/waku/filter-push/2.0.0-beta1, which it mounts.
 *
 * Requests go to a service peer over a connection the caller already has (dial it with
 * ld_switch_dial first; the service pushes back over that connection, so a client need not
 * listen). Each request is one LP-framed FilterSubscribeRequest on a new stream with a fresh
 * request ID (10 random bytes in lowercase hex); the first response frame is the answer. The
 * result reports the service's status code and description as they came, or a local failure in
 * nwaku's client terms:
 *   - 504 PEER_DIAL_FAILURE: the stream could not be opened (protocol not supported, connection
 *     gone) or no answer came before the deadline (subscribe_timeout_ms / ping_timeout_ms);
 *   - 300 BAD_RESPONSE: the stream ended without a whole answer, the answer did not decode, or
 *     its request ID is not ours (a 429 answer, which carries "N/A", is accepted).
 * A subscription is kept alive by pinging (nwaku's service forgets it after 5 minutes without a
 * request; js-waku pings every 60 s, logos-delivery every 30 s); this client does not ping by
 * itself.
 *
 * Pushes are accepted from any peer on any number of streams (at most max_push_streams at once;
 * more are reset), each read frame after frame until EOF. Every MessagePush must carry both
 * fields and a decodable WakuMessage; a malformed frame resets that stream. Each message is
 * handed to the push handler with its deterministic hash.
 *
 * Every call must come from the switch's loop thread; callbacks come from that loop, never from
 * inside these calls. A function that returns an error never calls its callback. */
#ifndef LD_WAKU_FILTER_CLIENT_H
#define LD_WAKU_FILTER_CLIENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "p2p/peerid.h"
#include "p2p/stream.h"
#include "p2p/switch.h"
#include "waku/core/message.h"
#include "waku/filter/codec.h"

/* js-waku's maxInboundStreams for the push protocol. */
#define LD_FILTER_CLIENT_MAX_PUSH_STREAMS 100
/* logos-delivery edge client deadlines. */
#define LD_FILTER_CLIENT_SUBSCRIBE_TIMEOUT_MS (15u * 1000)
#define LD_FILTER_CLIENT_PING_TIMEOUT_MS (5u * 1000)

typedef struct ld_filter_client ld_filter_client_t;

typedef struct ld_filter_client_config {
  size_t max_push_streams;       /* default LD_FILTER_CLIENT_MAX_PUSH_STREAMS */
  size_t max_push_size;          /* frame body cap; default LD_FILTER_MAX_PUSH_SIZE */
  uint32_t subscribe_timeout_ms; /* SUBSCRIBE, UNSUBSCRIBE, UNSUBSCRIBE_ALL; default 15,000 */
  uint32_t ping_timeout_ms;      /* default 5,000 */
} ld_filter_client_config_t;

void ld_filter_client_config_default(ld_filter_client_config_t *cfg);

/* One received message. Views valid only during the handler call. */
typedef struct ld_filter_push {
  const ld_peerid_t *from;  /* the service peer that pushed it */
  const char *pubsub_topic; /* NUL-terminated */
  size_t pubsub_topic_len;
  const ld_waku_message_t *msg;
  uint8_t hash[LD_WAKU_HASH_LEN]; /* deterministic hash on pubsub_topic */
} ld_filter_push_t;

typedef void (*ld_filter_push_fn)(const ld_filter_push_t *push, void *user_data);

/* The outcome of one request. Views valid only during the callback. */
typedef struct ld_filter_result {
  int err;                 /* 0 when the service answered; else the local LD_ERR_* */
  uint32_t status_code;    /* 200 on success; the service's code; 300/504 for local failures */
  const char *status_desc; /* NUL-terminated, never NULL ("" when the answer had none) */
  const char *request_id;  /* ours, NUL-terminated */
  const ld_peerid_t *service;
  uint32_t type; /* ld_filter_request_type_t */
} ld_filter_result_t;

/* Called exactly once per accepted request. Success is err == 0 && status_code == 200. */
typedef void (*ld_filter_done_fn)(const ld_filter_result_t *res, void *user_data);

/* Creates the client on `sw` and registers the push protocol. `cfg` is copied (NULL: defaults;
 * zero fields take their defaults). Returns NULL (the reason is logged) when `sw` is NULL, the
 * push protocol is already registered, or out of memory. The switch cannot drop handlers, so the
 * client lives as long as the switch. */
ld_filter_client_t *ld_filter_client_new(ld_switch_t *sw, const ld_filter_client_config_t *cfg);

/* Frees the client. Requests still running are cancelled without callbacks (their streams are
 * reset). Free it after ld_switch_close has called its `done` (push streams are over by then).
 * NULL is a no-op. */
void ld_filter_client_free(ld_filter_client_t *cl);

/* Installs (NULL: removes) the receiver of pushed messages. */
void ld_filter_client_set_push_handler(ld_filter_client_t *cl, ld_filter_push_fn fn,
                                       void *user_data);

/* SUBSCRIBE / UNSUBSCRIBE `content_topics` (n NUL-terminated strings) on `pubsub_topic` with the
 * service peer at the other end of `service`. The request is sent as given (the service answers
 * 400 for none or more than LD_FILTER_MAX_CONTENT_TOPICS); strings are copied. Returns 0, or
 * LD_ERR_INVALID_ARG (NULL arguments), LD_ERR_NOMEM, or the direct errors of
 * ld_switch_open_stream (LD_ERR_CLOSED, LD_ERR_TOO_MANY_STREAMS, LD_ERR_GOAWAY). */
int ld_filter_client_subscribe(ld_filter_client_t *cl, ld_conn_t *service, const char *pubsub_topic,
                               const char *const *content_topics, size_t n, ld_filter_done_fn done,
                               void *user_data);
int ld_filter_client_unsubscribe(ld_filter_client_t *cl, ld_conn_t *service,
                                 const char *pubsub_topic, const char *const *content_topics,
                                 size_t n, ld_filter_done_fn done, void *user_data);

/* UNSUBSCRIBE_ALL and SUBSCRIBER_PING; errors as above. */
int ld_filter_client_unsubscribe_all(ld_filter_client_t *cl, ld_conn_t *service,
                                     ld_filter_done_fn done, void *user_data);
int ld_filter_client_ping(ld_filter_client_t *cl, ld_conn_t *service, ld_filter_done_fn done,
                          void *user_data);

/* Counters since creation, for metrics and tests. */
typedef struct ld_filter_client_stats {
  uint64_t requests;        /* requests started */
  uint64_t answered;        /* of those, answered by the service (any code) */
  uint64_t failed;          /* of those, ended with a local failure */
  uint64_t pushes;          /* messages delivered to the push handler */
  uint64_t push_errors;     /* malformed push frames (their stream was reset) */
  uint64_t push_streams;    /* push streams accepted */
  uint64_t push_refused;    /* push streams reset for exceeding max_push_streams */
  size_t push_streams_open; /* gauge */
} ld_filter_client_stats_t;

void ld_filter_client_get_stats(const ld_filter_client_t *cl, ld_filter_client_stats_t *out);

#endif
