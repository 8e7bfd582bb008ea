/* The PostgreSQL driver's data statements: batch inserts, store queries, counts and deletes.
 * Worker threads only; each call blocks its thread until done or `deadline_ms`. Every value
 * travels as a parameter of PQsendQueryParams; hashes, payloads and meta as lowercase hex as
 * nwaku stores them. */
#ifndef LD_WAKU_ARCHIVE_POSTGRES_PG_ROWS_H
#define LD_WAKU_ARCHIVE_POSTGRES_PG_ROWS_H

#include <stdbool.h>
#include <stdint.h>

#include "waku/archive/driver.h"
#include "waku/archive/postgres/pg_lookup.h"
#include "waku/archive/postgres/pgconn.h"

/* Rows per INSERT statement (7 parameters each). */
#define LD_PG_INSERT_CHUNK 500

/* Inserts the batch in one transaction (messages, then messages_lookup for the rows that were
 * new) and sets every row's result: 1 new, 0 already stored, LD_ERR_BAD_ENCODING for a topic
 * that is not valid UTF-8 without NUL (not sent). Returns 0 or the error of the transaction
 * (rolled back). */
int ld_pg_insert_batch(PGconn *c, ld_archive_batch_t *b, uint64_t deadline_ms, ld_pg_status_t *st);

/* Runs a store query (q->limit rows at most, in q's direction) into `rows`. `n_partitions` is
 * the caller's last count of messages' partitions. LD_ERR_NOT_FOUND when the cursor is not
 * stored. Topics that cannot be stored (not UTF-8) match nothing. */
int ld_pg_query(PGconn *c, const ld_archive_query_t *q, size_t n_partitions, uint64_t deadline_ms,
                ld_archive_rows_t *rows, ld_pg_status_t *st);

/* The keys of a listing (LIST_KEYS: q's time range, limit and resume key (after_ts, q->cursor)
 * when q->has_cursor) into `rows`, ascending (timestamp, messageHash). */
int ld_pg_list_keys(PGconn *c, const ld_archive_query_t *q, int64_t after_ts, uint64_t deadline_ms,
                    ld_archive_rows_t *rows, ld_pg_status_t *st);

/* A statement with at most one parameter returning one integer (0 when no row). */
int ld_pg_scalar(PGconn *c, const char *sql, const char *param, uint64_t deadline_ms, uint64_t *out,
                 ld_pg_status_t *st);

/* The key of the row at `offset` from the newest; *found false when there are fewer rows. */
int ld_pg_nth_newest(PGconn *c, uint64_t offset, uint64_t deadline_ms, bool *found, int64_t *ts,
                     uint8_t hash[LD_WAKU_HASH_LEN], ld_pg_status_t *st);

/* Deletes from both tables, in one transaction, the rows before `ts` (hash NULL) or before the
 * key (ts, hash). *rows gets the count deleted from messages. */
int ld_pg_delete_before(PGconn *c, int64_t ts, const uint8_t *hash, uint64_t deadline_ms,
                        uint64_t *rows, ld_pg_status_t *st);

#endif
