/* The gossipsub message cache: the messages of the last `len` heartbeat windows, looked up by ID
 * to answer IWANT, and the IDs of the newest `gossip` windows for IHAVE.
 *
 * put() files a message in the current window; shift() (once per heartbeat) opens a new window
 * and frees the messages of the oldest. Each cached message also counts how often it was sent
 * to each peer in answer to IWANT. Caller storage, not thread-safe. */
#ifndef LD_P2P_GOSSIPSUB_MCACHE_H
#define LD_P2P_GOSSIPSUB_MCACHE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "p2p/gossipsub/idset.h"

#define LD_GS_MCACHE_MAX_MSGS (1u << 20) /* messages held at once */
#define LD_GS_MCACHE_MAX_TX_PEERS 256    /* peers whose IWANT answers are counted per message */

typedef struct ld_gs_mcache_tx {
  uint64_t peer;
  uint32_t count;
} ld_gs_mcache_tx_t;

/* A cached message; topic and data live inside the same allocation. */
typedef struct ld_gs_cmsg {
  uint8_t id[LD_GS_IDSET_ID_LEN];
  const char *topic;
  size_t topic_len;
  const uint8_t *data;
  size_t len;
  ld_gs_mcache_tx_t *tx;
  uint32_t n_tx, cap_tx;
} ld_gs_cmsg_t;

typedef struct ld_gs_mcache {
  ld_gs_idset_t idx; /* id -> ld_gs_cmsg_t* (value), expiry = window + len */
  uint64_t window;
  uint32_t len, gossip;
} ld_gs_mcache_t;

/* `len` windows of history, the newest `gossip` of them advertised (1 <= gossip <= len). */
void ld_gs_mcache_init(ld_gs_mcache_t *mc, uint32_t len, uint32_t gossip);
/* Frees every cached message. */
void ld_gs_mcache_clear(ld_gs_mcache_t *mc);

/* Copies the message into the current window. Returns the cached message through *out (may be
 * NULL; valid until it leaves the cache). Errors: LD_ERR_EXISTS, LD_ERR_LIMIT, LD_ERR_NOMEM. */
int ld_gs_mcache_put(ld_gs_mcache_t *mc, const uint8_t id[LD_GS_IDSET_ID_LEN], const char *topic,
                     const uint8_t *data, size_t len, ld_gs_cmsg_t **out);

/* The cached message with this ID (any window) or NULL. */
ld_gs_cmsg_t *ld_gs_mcache_get(const ld_gs_mcache_t *mc, const uint8_t *id, size_t id_len);

/* Calls fn for every message of the newest `gossip` windows, newest first. */
void ld_gs_mcache_gossip_each(const ld_gs_mcache_t *mc, void (*fn)(void *ctx, ld_gs_cmsg_t *m),
                              void *ctx);

/* Counts one more IWANT answer of `m` to `peer` and returns the new count (UINT32_MAX when the
 * per-message peer table is full or out of memory: treat as exhausted). */
uint32_t ld_gs_mcache_count_tx(ld_gs_cmsg_t *m, uint64_t peer);

/* Opens a new window; messages older than `len` windows are freed. */
void ld_gs_mcache_shift(ld_gs_mcache_t *mc);

static inline size_t ld_gs_mcache_size(const ld_gs_mcache_t *mc) {
  return ld_gs_idset_size(&mc->idx);
}

#endif
