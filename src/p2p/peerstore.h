/* The peer store: what we know about each peer ID — addresses, protocols, agent and protocol
 * versions, public key, last-seen time. Filled by identify, read by the peer manager.
 *
 * Bounded: at most `max_peers` peers (adding one more evicts the least recently seen), and per
 * peer at most `max_addrs` addresses (the oldest go first) and `max_protocols` protocols (extra
 * ones are dropped). Times are caller-supplied monotonic milliseconds. Not thread-safe: one
 * thread (the node's loop) at a time. */
#ifndef LD_P2P_PEERSTORE_H
#define LD_P2P_PEERSTORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "p2p/key.h"
#include "p2p/multiaddr.h"
#include "p2p/peerid.h"

#define LD_PEERSTORE_DEFAULT_MAX_PEERS 1000
#define LD_PEERSTORE_DEFAULT_MAX_ADDRS 16
#define LD_PEERSTORE_DEFAULT_MAX_PROTOCOLS 64
/* Longest protocol ID, agent or protocol version stored; longer ones are rejected (protocols) or
 * cut (versions). */
#define LD_PEERSTORE_MAX_STRING 256

typedef struct ld_peerstore_config {
  size_t max_peers;     /* default LD_PEERSTORE_DEFAULT_MAX_PEERS */
  size_t max_addrs;     /* per peer; default LD_PEERSTORE_DEFAULT_MAX_ADDRS */
  size_t max_protocols; /* per peer; default LD_PEERSTORE_DEFAULT_MAX_PROTOCOLS */
} ld_peerstore_config_t;

void ld_peerstore_config_default(ld_peerstore_config_t *cfg);

/* One peer's entry. Read-only for callers; pointers inside are owned by the store and valid
 * until the next call that modifies the store. */
typedef struct ld_peerstore_peer {
  ld_peerid_t id;
  const ld_pubkey_t *public_key; /* NULL when unknown */
  const char *agent_version;     /* NULL when unknown */
  const char *protocol_version;  /* NULL when unknown */
  const ld_multiaddr_t *addrs;   /* transport addresses, without /p2p */
  size_t n_addrs;
  const char *const *protocols;
  size_t n_protocols;
  uint64_t last_seen_ms;
} ld_peerstore_peer_t;

typedef struct ld_peerstore ld_peerstore_t;

/* NULL cfg means the defaults; zero fields take their defaults too. NULL when out of memory. */
ld_peerstore_t *ld_peerstore_new(const ld_peerstore_config_t *cfg);
void ld_peerstore_free(ld_peerstore_t *ps);

/* Every setter creates the peer when unknown (evicting the least recently seen peer when the
 * store is full) and sets its last-seen time to `now_ms`. Errors: LD_ERR_NOMEM (store
 * unchanged), LD_ERR_INVALID_ARG. */

/* Adds addresses not yet known; a /p2p suffix is removed, and an address whose /p2p names
 * another peer is skipped. Returns the number of addresses added. */
int ld_peerstore_add_addrs(ld_peerstore_t *ps, const ld_peerid_t *id, const ld_multiaddr_t *addrs,
                           size_t n, uint64_t now_ms);

/* Replaces the address list (as add_addrs on an empty list). Returns the number stored. */
int ld_peerstore_set_addrs(ld_peerstore_t *ps, const ld_peerid_t *id, const ld_multiaddr_t *addrs,
                           size_t n, uint64_t now_ms);

/* Replaces the protocol list (duplicates, empty and overlong IDs dropped). Returns the number
 * stored. */
int ld_peerstore_set_protocols(ld_peerstore_t *ps, const ld_peerid_t *id,
                               const char *const *protocols, size_t n, uint64_t now_ms);

/* Sets the agent and protocol versions; a NULL argument leaves that field unchanged. */
int ld_peerstore_set_versions(ld_peerstore_t *ps, const ld_peerid_t *id, const char *agent_version,
                              const char *protocol_version, uint64_t now_ms);

/* Stores the public key; LD_ERR_PEER_ID_MISMATCH when it does not derive `id`. */
int ld_peerstore_set_public_key(ld_peerstore_t *ps, const ld_peerid_t *id, const ld_pubkey_t *pub,
                                uint64_t now_ms);

/* Records that the peer was seen. */
int ld_peerstore_touch(ld_peerstore_t *ps, const ld_peerid_t *id, uint64_t now_ms);

/* The peer's entry or NULL. */
const ld_peerstore_peer_t *ld_peerstore_get(const ld_peerstore_t *ps, const ld_peerid_t *id);

/* True when the peer is known to accept `protocol`. */
bool ld_peerstore_supports(const ld_peerstore_t *ps, const ld_peerid_t *id, const char *protocol);

/* Forgets the peer. LD_ERR_NOT_FOUND when unknown. */
int ld_peerstore_remove(ld_peerstore_t *ps, const ld_peerid_t *id);

size_t ld_peerstore_count(const ld_peerstore_t *ps);

/* Copies up to `max` peer IDs (all, or only those supporting `protocol` when it is not NULL),
 * most recently seen first, and returns how many match in total. */
size_t ld_peerstore_peers(const ld_peerstore_t *ps, const char *protocol, ld_peerid_t *out,
                          size_t max);

#endif
