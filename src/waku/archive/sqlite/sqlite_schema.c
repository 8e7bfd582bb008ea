#include "waku/archive/sqlite/sqlite_schema.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "base/error.h"

static const char k_create_v10[] =
    "CREATE TABLE IF NOT EXISTS Message (messageHash BLOB NOT NULL PRIMARY KEY, "
    "pubsubTopic BLOB NOT NULL, contentTopic BLOB NOT NULL, payload BLOB, "
    "version INTEGER NOT NULL, timestamp INTEGER NOT NULL, meta BLOB)";
static const char k_index_v10[] =
    "CREATE INDEX IF NOT EXISTS i_ts ON Message (timestamp);"
    "CREATE INDEX IF NOT EXISTS i_ct_ts ON Message (contentTopic, timestamp)";

/* Rebuilds of nwaku's versions 7, 8 and 9 into version 10: storedAt becomes the timestamp. */
static const char k_rebuild_v10[] =
    "CREATE TABLE Message_v10 (messageHash BLOB NOT NULL PRIMARY KEY, "
    "pubsubTopic BLOB NOT NULL, contentTopic BLOB NOT NULL, payload BLOB, "
    "version INTEGER NOT NULL, timestamp INTEGER NOT NULL, meta BLOB) WITHOUT ROWID";
static const char *const k_copy_from[] = {
    /* 7 */ "INSERT OR IGNORE INTO Message_v10 SELECT randomblob(32), pubsubTopic, contentTopic, "
            "payload, version, storedAt, NULL FROM Message",
    /* 8 */
    "INSERT OR IGNORE INTO Message_v10 SELECT COALESCE(messageHash, randomblob(32)), "
    "pubsubTopic, contentTopic, payload, version, storedAt, NULL FROM Message",
    /* 9 */
    "INSERT OR IGNORE INTO Message_v10 SELECT COALESCE(messageHash, randomblob(32)), "
    "pubsubTopic, contentTopic, payload, version, storedAt, meta FROM Message",
};
static const char k_swap_v10[] = "DROP TABLE Message; ALTER TABLE Message_v10 RENAME TO Message";

typedef struct migrate_ctx {
  sqlite3 *db;
  char *why;
  size_t why_len;
} migrate_ctx_t;

static int fail(migrate_ctx_t *c, const char *what) {
  snprintf(c->why, c->why_len, "%s: %s", what, sqlite3_errmsg(c->db));
  return LD_ERR_DB;
}

static int exec(migrate_ctx_t *c, const char *sql) {
  return sqlite3_exec(c->db, sql, NULL, NULL, NULL) == SQLITE_OK ? 0 : fail(c, sql);
}

static int int_query(migrate_ctx_t *c, const char *sql, int *out) {
  sqlite3_stmt *st;
  if (sqlite3_prepare_v2(c->db, sql, -1, &st, NULL) != SQLITE_OK)
    return fail(c, sql);
  int rc = sqlite3_step(st);
  *out = rc == SQLITE_ROW ? sqlite3_column_int(st, 0) : 0;
  sqlite3_finalize(st);
  return rc == SQLITE_ROW || rc == SQLITE_DONE ? 0 : fail(c, sql);
}

/* Column names of Message joined by ',' in column order; `pk` keeps only key columns. */
static int columns(migrate_ctx_t *c, bool pk, char *out, size_t cap) {
  sqlite3_stmt *st;
  const char *sql = pk ? "SELECT name FROM pragma_table_info('Message') WHERE pk > 0 ORDER BY cid"
                       : "SELECT name FROM pragma_table_info('Message') ORDER BY cid";
  if (sqlite3_prepare_v2(c->db, sql, -1, &st, NULL) != SQLITE_OK)
    return fail(c, sql);
  size_t len = 0;
  out[0] = 0;
  int rc;
  while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
    const char *name = (const char *)sqlite3_column_text(st, 0);
    int n = snprintf(out + len, cap - len, "%s%s", len ? "," : "", name ? name : "");
    if (n < 0 || (size_t)n >= cap - len)
      break;
    len += (size_t)n;
  }
  sqlite3_finalize(st);
  return rc == SQLITE_ROW || rc == SQLITE_DONE ? 0 : fail(c, sql);
}

/* The version of a Message table whose user_version was never set: nwaku 0.14–0.18 wrote
 * version 7 tables without setting it. Returns 0 (no table), 7, 10, or -1 (unknown layout). */
static int unversioned_layout(migrate_ctx_t *c, int *version) {
  char cols[512], pk[256];
  int rc = columns(c, false, cols, sizeof cols);
  if (rc == 0)
    rc = columns(c, true, pk, sizeof pk);
  if (rc != 0)
    return rc;
  if (cols[0] == 0)
    *version = 0;
  else if (strcasecmp(pk, "pubsubTopic,id,storedAt") == 0)
    *version = 7;
  else if (strcasecmp(cols,
                      "messageHash,pubsubTopic,contentTopic,payload,version,timestamp,meta") == 0)
    *version = 10;
  else
    *version = -1;
  return 0;
}

static int upgrade(migrate_ctx_t *c, int version) {
  int rc;
  if (version == 0)
    rc = exec(c, k_create_v10);
  else if (version >= 7 && version <= 9) {
    rc = exec(c, k_rebuild_v10);
    if (rc == 0)
      rc = exec(c, k_copy_from[version - 7]);
    if (rc == 0)
      rc = exec(c, k_swap_v10);
  } else if (version == LD_ARCHIVE_SQLITE_SCHEMA_VERSION) {
    rc = 0;
  } else if (version < 0) {
    snprintf(c->why, c->why_len, "Message table of an unknown layout without a schema version");
    return LD_ERR_DB;
  } else {
    snprintf(c->why, c->why_len, "cannot migrate from schema version %d", version);
    return LD_ERR_DB;
  }
  if (rc == 0)
    rc = exec(c, k_index_v10);
  if (rc == 0)
    rc = exec(c, "PRAGMA user_version = 10");
  return rc;
}

int ld_archive_sqlite_migrate(sqlite3 *db, char *why, size_t why_len) {
  migrate_ctx_t c = {db, why, why_len};
  why[0] = 0;
  if (exec(&c, "BEGIN IMMEDIATE") != 0)
    return LD_ERR_DB;
  int version = 0;
  int rc = int_query(&c, "PRAGMA user_version", &version);
  if (rc == 0 && version == 0)
    rc = unversioned_layout(&c, &version);
  if (rc == 0)
    rc = upgrade(&c, version);
  if (rc == 0)
    rc = exec(&c, "COMMIT");
  if (rc != 0)
    sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
  return rc;
}
