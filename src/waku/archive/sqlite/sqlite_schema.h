/* The SQLite schema of the archive and its versioned migrations (PRAGMA user_version).
 *
 * Version 10 is nwaku's: table Message (messageHash BLOB PRIMARY KEY, pubsubTopic, contentTopic,
 * payload, version, timestamp, meta) and index i_ts on timestamp, plus our index i_ct_ts on
 * (contentTopic, timestamp). nwaku declares the table WITHOUT ROWID; a new database here keeps
 * the rows in insertion order instead (a rowid table whose messageHash key is a separate unique
 * index): rows keyed by a random hash land on random pages, so at a million messages every
 * insert rewrote a page of the table (28,900 inserts/s), while appended rows and a small key
 * index give 80,000–94,000 (bench_archive). The columns, keys and queries are the same, so nwaku
 * reads either layout and both are version 10; a WITHOUT ROWID file written by nwaku is used as
 * it is. An empty database
 * is created at version 10; databases written by nwaku at versions 7, 8 and 9 are rebuilt into
 * version 10 the way nwaku's scripts do it (the store time becomes the timestamp; version 7 rows
 * get a random hash, as nwaku's migration 8 gives them). Older or newer versions are refused. */
#ifndef LD_WAKU_ARCHIVE_SQLITE_SCHEMA_H
#define LD_WAKU_ARCHIVE_SQLITE_SCHEMA_H

#include <stddef.h>

#include <sqlite3.h>

#include "base/sq.h"

#define LD_ARCHIVE_SQLITE_SCHEMA_VERSION 10

/* Brings `db` to version 10 in one transaction. Returns 0, or LD_ERR_DB with a reason in
 * why[0..why_len). The thread that owns `db`. */
int ld_archive_sqlite_migrate(sqlite3 *db, char *why, size_t why_len);

#endif
