/* How the PostgreSQL driver looks messages up by hash (no libpq here: tests include it). */
#ifndef LD_WAKU_ARCHIVE_POSTGRES_PG_LOOKUP_H
#define LD_WAKU_ARCHIVE_POSTGRES_PG_LOOKUP_H

/* From this many partitions of messages on, a lookup by hash first reads its (hash, timestamp)
 * pairs and then sets up only the partitions in their range (one more round trip). Below it, one
 * statement sets up every partition. */
#define LD_PG_TWO_STEP_PARTITIONS 48

#endif
