/* The peer manager's persisted store (--peer-persistence): one SQLite file with a row per peer —
 * its ID, addresses, origin, cluster and shards, services and when it was last disconnected — so
 * that a restarted node knows its peers again and redials them (nwaku's WakuPeerStorage; our
 * own schema).
 *
 * Writes are single statements in WAL mode (synchronous=NORMAL). A file that is not a database
 * of ours is an error at open (LD_ERR_IO with SQLite's message logged); rows that do not decode
 * (a bad peer ID or address) are skipped at load. One thread (the node's loop). */
#ifndef LD_NODE_PEER_DB_H
#define LD_NODE_PEER_DB_H

#include <stdint.h>

#include "node/peer_manager_core.h"

typedef struct ld_peer_db ld_peer_db_t;

/* Opens (creating) the file. LD_ERR_IO, LD_ERR_NOMEM. */
int ld_peer_db_open(const char *path, ld_peer_db_t **out);
void ld_peer_db_close(ld_peer_db_t *db);

/* Inserts or replaces the peer's row. `disconnected_s`: wall-clock seconds of its last
 * disconnection, 0 when connected or never. LD_ERR_IO. */
int ld_peer_db_put(ld_peer_db_t *db, const ld_pm_peer_t *p, int64_t disconnected_s);

/* Deletes the peer's row (absent is 0). LD_ERR_IO. */
int ld_peer_db_delete(ld_peer_db_t *db, const ld_peerid_t *id);

/* Calls `fn` for every row, at most `max` rows; returns how many were given, or LD_ERR_IO. */
typedef void (*ld_peer_db_row_fn)(void *ud, const ld_peerid_t *id, const ld_pm_peer_info_t *info);
int ld_peer_db_load(ld_peer_db_t *db, size_t max, ld_peer_db_row_fn fn, void *ud);

/* Rows in the file. */
int64_t ld_peer_db_count(ld_peer_db_t *db);

#endif
