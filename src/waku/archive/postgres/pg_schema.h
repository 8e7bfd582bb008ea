/* The PostgreSQL layout of the archive (nwaku's content script version 8) and its hourly
 * partitions. Worker threads only; every call blocks its thread until done or `deadline_ms`.
 *
 * Tables: `version`, `messages` (hash, payload and meta as lowercase hex text; primary key
 * (messageHash, timestamp); indexes on messageHash, timestamp, pubsubTopic, contentTopic) and
 * `messages_lookup` (messageHash, timestamp), both range-partitioned on timestamp (ns). Our
 * partitions are `messages_<startSec>_<endSec>` and their sibling `lookup_<startSec>_<endSec>`,
 * one hour aligned to o'clock unless a neighbour cuts the hour short. All names are resolved
 * through the connection's search_path (current_schema()).
 *
 * On top of version 8, without changing nwaku's tables or its `version` row, our own extension
 * (table `ld_archive_version`, version LD_PG_EXT_VERSION) adds `ld_messages_key_ts` (hashKey,
 * timestamp), hashKey = hashtextextended(messageHash, 0): an unpartitioned index of every message,
 * so a hash finds its timestamp with one integer index probe and the messages partition is then
 * picked by the timestamp. AFTER INSERT / DELETE /
 * TRUNCATE statement triggers on `messages` keep it in step with every writer (nwaku's too), in
 * the writer's transaction; partition drops, which fire no trigger, are followed by
 * ld_pg_key_ts_forget. A stale index row is harmless (queries join back to `messages`); a
 * missing one would hide a message.
 *
 * DDL cannot take parameters: the only values written into DDL text are integers computed here
 * and partition bounds read back from the server's catalog. */
#ifndef LD_WAKU_ARCHIVE_POSTGRES_PG_SCHEMA_H
#define LD_WAKU_ARCHIVE_POSTGRES_PG_SCHEMA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "waku/archive/postgres/pgconn.h"

#define LD_PG_SCHEMA_VERSION 8
#define LD_PG_EXT_VERSION 2
#define LD_PG_PARTITION_NS (3600ll * 1000000000ll)
#define LD_PG_PARTITION_NAME_MAX 64

typedef struct ld_pg_partition {
  char name[LD_PG_PARTITION_NAME_MAX]; /* messages_<startSec>_<endSec> */
  int64_t lo, hi;                      /* [lo, hi) in ns */
} ld_pg_partition_t;

/* Attached partitions of `messages`, ascending. */
typedef struct ld_pg_partitions {
  ld_pg_partition_t *p;
  size_t n, cap;
} ld_pg_partitions_t;

void ld_pg_partitions_clear(ld_pg_partitions_t *ps);
int ld_pg_partitions_copy(ld_pg_partitions_t *dst, const ld_pg_partitions_t *src);
/* Index of the partition holding ts, or -1. */
long ld_pg_partitions_find(const ld_pg_partitions_t *ps, int64_t ts);

/* Creates or upgrades the tables under an advisory lock, in one transaction: an empty schema gets
 * version 8; version 7 is upgraded (partitioned lookup table, rebuilt from messages). Other
 * versions are refused (LD_ERR_DB). Then the extension: absent or version 1 → version 2
 * (ld_messages_key_ts and its triggers, filled from messages; version 1's ld_messages_hash_ts
 * dropped); a newer extension version is refused (LD_ERR_DB). */
int ld_pg_migrate(PGconn *c, uint64_t deadline_ms, ld_pg_status_t *st);

/* Reads the attached partitions of `messages` from the catalog. */
int ld_pg_partitions_load(PGconn *c, uint64_t deadline_ms, ld_pg_partitions_t *out,
                          ld_pg_status_t *st);

/* Makes sure a partition holds `ts`: creates the free part of its hour (lookup sibling first; the
 * messages partition detached, range-checked, attached, check dropped), in one transaction under
 * an advisory lock. `known` is the caller's last view of the partitions. */
int ld_pg_partition_ensure(PGconn *c, const ld_pg_partitions_t *known, int64_t ts,
                           uint64_t deadline_ms, ld_pg_status_t *st);

/* Counts the rows of partition `p`, drops its lookup sibling, detaches it concurrently, drops
 * it and forgets its range in ld_messages_key_ts. *rows gets the count. */
int ld_pg_partition_drop(PGconn *c, const ld_pg_partition_t *p, uint64_t deadline_ms,
                         uint64_t *rows, ld_pg_status_t *st);

/* Deletes the ld_messages_key_ts rows in [lo, hi) whose message is no longer stored. */
int ld_pg_key_ts_forget(PGconn *c, int64_t lo, int64_t hi, uint64_t deadline_ms,
                        ld_pg_status_t *st);

/* Deletes the ld_messages_key_ts rows older than the oldest partition whose message is gone
 * (partitions dropped by an interrupted drop or by another writer). */
int ld_pg_key_ts_trim(PGconn *c, uint64_t deadline_ms, ld_pg_status_t *st);

/* Drops leftovers of interrupted work: detached messages_* tables and lookup_* tables without a
 * messages sibling. */
int ld_pg_drop_strays(PGconn *c, uint64_t deadline_ms, ld_pg_status_t *st);

#endif
