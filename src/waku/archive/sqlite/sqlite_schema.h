/* The SQLite schema of the archive and its versioned migrations (PRAGMA user_version).
 *
 * Version 10 is nwaku's: table Message (messageHash BLOB PRIMARY KEY, pubsubTopic, contentTopic,
 * payload, version, timestamp, meta) WITHOUT ROWID and index i_ts on timestamp. An empty database
 * is created at version 10; databases written by nwaku at versions 7, 8 and 9 are rebuilt into
 * version 10 the way nwaku's scripts do it (the store time becomes the timestamp; version 7 rows
 * get a random hash, as nwaku's migration 8 gives them). Older or newer versions are refused. */
#ifndef LD_WAKU_ARCHIVE_SQLITE_SCHEMA_H
#define LD_WAKU_ARCHIVE_SQLITE_SCHEMA_H

#include <stddef.h>

#include <sqlite3.h>

#define LD_ARCHIVE_SQLITE_SCHEMA_VERSION 10

/* Brings `db` to version 10 in one transaction. Returns 0, or LD_ERR_DB with a reason in
 * why[0..why_len). The thread that owns `db`. */
int ld_archive_sqlite_migrate(sqlite3 *db, char *why, size_t why_len);

#endif
