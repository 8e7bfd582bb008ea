/* The Waku hashes of our own published messages until gossipsub delivers them back to us
 * (ld_gs_service_config_t.deliver_own), so that the delivery reuses the hash computed at publish
 * instead of hashing the ~19 KB message again.
 *
 * Deliveries come back in publish order, so this is a FIFO: an entry is matched by its gossipsub
 * message ID and pubsub topic, and taking it drops the entries published before it (messages whose
 * delivery was not made). Bounded: past LD_RELAY_OWN_HASHES_MAX entries the oldest is dropped, and
 * a delivery that finds no entry simply hashes the message. Not thread-safe; owned by its relay. */
#ifndef LD_WAKU_RELAY_OWN_HASHES_H
#define LD_WAKU_RELAY_OWN_HASHES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "p2p/gossipsub/router.h"
#include "waku/core/message.h"

#define LD_RELAY_OWN_HASHES_MAX 512

typedef struct ld_relay_own_hash {
  uint8_t id[LD_GS_MSG_ID_LEN];
  uint8_t hash[LD_WAKU_HASH_LEN];
  uint64_t topic_key; /* SipHash of the pubsub topic */
} ld_relay_own_hash_t;

typedef struct ld_relay_own_hashes {
  ld_relay_own_hash_t *v; /* LD_RELAY_OWN_HASHES_MAX entries, allocated at the first push */
  size_t head, n;
} ld_relay_own_hashes_t;

/* Records that our message with gossipsub ID `id` on `topic` has Waku hash `hash`. Out of memory
 * it records nothing (the delivery then hashes). */
void ld_relay_own_hashes_push(ld_relay_own_hashes_t *q, const char *topic,
                              const uint8_t id[LD_GS_MSG_ID_LEN],
                              const uint8_t hash[LD_WAKU_HASH_LEN]);

/* For the delivery of our message `id` on `topic`: true and its hash in `hash` when recorded (the
 * entry and all older ones are removed), false otherwise (nothing removed). */
bool ld_relay_own_hashes_take(ld_relay_own_hashes_t *q, const char *topic,
                              const uint8_t id[LD_GS_MSG_ID_LEN], uint8_t hash[LD_WAKU_HASH_LEN]);

/* Frees the entries; `q` is empty and usable again. */
void ld_relay_own_hashes_clear(ld_relay_own_hashes_t *q);

#endif
