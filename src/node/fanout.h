/* The subscription fan-out: where a message goes once relay has accepted it (or the node
 * published it itself). Consumers plug in at a stage, and stages run in nwaku's order:
 *
 *   relay → filter (push to light subscribers) → archive (store) → sync (reconciliation set)
 *         → broker (events for the Messaging API, REST caches, sub-commands)
 *
 * Within a stage, handlers run in the order they were added. Everything is synchronous: the
 * message is valid only during the dispatch, so a handler copies what it keeps. Handlers may add
 * and remove handlers (also themselves) during a dispatch; a removed handler is not called
 * afterwards, an added one from the next dispatch on.
 *
 * One fan-out per node, used on the node's loop thread only. */
#ifndef LD_NODE_FANOUT_H
#define LD_NODE_FANOUT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "p2p/peerid.h"
#include "waku/core/message.h"

#define LD_FANOUT_MAX_HANDLERS 64

typedef enum ld_fanout_stage {
  LD_FANOUT_FILTER = 0,
  LD_FANOUT_ARCHIVE,
  LD_FANOUT_SYNC,
  LD_FANOUT_BROKER,
  LD_FANOUT_STAGES,
} ld_fanout_stage_t;

/* One message on its way through the stages. Borrowed views, valid during the dispatch only. */
typedef struct ld_fanout_message {
  const char *pubsub_topic;       /* NUL-terminated */
  const ld_waku_message_t *msg;   /* decoded message */
  uint8_t hash[LD_WAKU_HASH_LEN]; /* deterministic message hash on pubsub_topic */
  const ld_peerid_t *from;        /* the relay peer that propagated it; NULL when own */
  bool own;                       /* published by this node (REST, lightpush, API) */
  uint64_t received_ms;           /* monotonic time of arrival or publication */
} ld_fanout_message_t;

typedef void (*ld_fanout_fn)(const ld_fanout_message_t *m, void *user_data);

typedef struct ld_fanout ld_fanout_t;

ld_fanout_t *ld_fanout_new(void);

/* Frees the registry without calling anyone. Not from inside a handler. NULL is a no-op. */
void ld_fanout_free(ld_fanout_t *f);

/* Adds a handler at `stage`. Returns a handle (> 0) for ld_fanout_remove, or
 * LD_ERR_INVALID_ARG (bad stage, NULL fn), LD_ERR_LIMIT (LD_FANOUT_MAX_HANDLERS). */
int ld_fanout_add(ld_fanout_t *f, ld_fanout_stage_t stage, ld_fanout_fn fn, void *user_data);

/* Removes a handler. LD_ERR_NOT_FOUND for an unknown handle. */
int ld_fanout_remove(ld_fanout_t *f, int handle);

/* Runs every stage in order for `m`. Returns the number of handlers called. A dispatch started
 * from inside a handler is refused with LD_ERR_STATE (relay, the source of the node's
 * dispatches, never calls back from inside its own functions, so handlers may publish). */
int ld_fanout_dispatch(ld_fanout_t *f, const ld_fanout_message_t *m);

/* Tests only: from now on every fan-out of the process drops `permille` in 1000 of the messages
 * that came from peers (never the node's own), before any stage, as if relay had not delivered
 * them (pseudo-random from `seed`); 0 turns it off. Any thread. */
void ld_fanout_set_test_loss(uint32_t permille, uint64_t seed);
/* Tests only: drops the next `count` messages from peers whose payload has at least
 * `min_payload_len` bytes (counted with the test loss). Any thread. */
void ld_fanout_set_test_drop_large(size_t min_payload_len, uint32_t count);

/* Messages dropped by the test loss since it was last set. */
uint64_t ld_fanout_test_loss_dropped(void);

/* Number of handlers at `stage`. */
size_t ld_fanout_count(const ld_fanout_t *f, ld_fanout_stage_t stage);

#endif
