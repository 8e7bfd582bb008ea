#include "waku/archive/postgres/pg_schema.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"

/* Advisory lock ids: migrations (nwaku's) and partition changes. */
#define LOCK_MIGRATION 841886
#define LOCK_PARTITIONS 841887

static const char k_create_v8[] =
    "CREATE TABLE IF NOT EXISTS version (version INTEGER NOT NULL);"
    "CREATE TABLE IF NOT EXISTS messages ("
    " pubsubTopic VARCHAR NOT NULL, contentTopic VARCHAR NOT NULL, payload VARCHAR,"
    " version INTEGER NOT NULL, id VARCHAR NOT NULL, messageHash VARCHAR NOT NULL,"
    " timestamp BIGINT NOT NULL, meta VARCHAR DEFAULT NULL,"
    " CONSTRAINT messageIndex PRIMARY KEY (messageHash, timestamp)"
    ") PARTITION BY RANGE (timestamp);"
    "CREATE INDEX IF NOT EXISTS idx_messages_messagehash ON messages (messageHash);"
    "CREATE INDEX IF NOT EXISTS idx_messages_timestamp ON messages (timestamp);"
    "CREATE INDEX IF NOT EXISTS idx_query_pubsubtopic ON messages (pubsubTopic);"
    "CREATE INDEX IF NOT EXISTS idx_query_contenttopic ON messages (contentTopic);"
    "CREATE TABLE IF NOT EXISTS messages_lookup ("
    " timestamp BIGINT NOT NULL, messageHash VARCHAR NOT NULL,"
    " CONSTRAINT messageIndexLookupTable PRIMARY KEY (messageHash, timestamp)"
    ") PARTITION BY RANGE (timestamp);"
    "INSERT INTO version (version) VALUES (8)";

/* Version 7 → 8: the lookup table becomes partitioned like messages and is rebuilt. */
static const char k_lookup_v8[] =
    "DROP TABLE IF EXISTS messages_lookup;"
    "CREATE TABLE messages_lookup ("
    " timestamp BIGINT NOT NULL, messageHash VARCHAR NOT NULL,"
    " CONSTRAINT messageIndexLookupTable PRIMARY KEY (messageHash, timestamp)"
    ") PARTITION BY RANGE (timestamp)";
static const char k_backfill_v8[] =
    "INSERT INTO messages_lookup (messageHash, timestamp) SELECT messageHash, timestamp "
    "FROM messages ON CONFLICT DO NOTHING;"
    "UPDATE version SET version = 8";

/* Extension 2 (our own version table; nwaku's tables keep version 8): an unpartitioned
 * hash key → timestamp index kept by statement triggers on messages, so that a lookup by hash
 * probes one partition per hash. The key is hashtextextended(messageHash, 0), the 64-bit text hash
 * PostgreSQL itself uses for hash partitions (stable across versions, defined for any text): the
 * index is four times smaller than one on the hex text and compares integers. Equal keys of
 * different hashes are harmless: lookups join back to messages by messageHash, and a key row is
 * deleted only when no stored message at its timestamp still has that key. Extension 1 (the same
 * index on the hex text, ld_messages_hash_ts) is replaced. The trigger bodies name the tables
 * through the schema of the table that fired them, whatever the writer's search_path. */
static const char k_ext_v2[] =
    "CREATE TABLE IF NOT EXISTS ld_archive_version (version INTEGER NOT NULL);"
    "DROP TRIGGER IF EXISTS ld_messages_hash_ts_add ON messages;"
    "DROP TRIGGER IF EXISTS ld_messages_hash_ts_del ON messages;"
    "DROP TRIGGER IF EXISTS ld_messages_hash_ts_truncate ON messages;"
    "DROP FUNCTION IF EXISTS ld_messages_hash_ts_add();"
    "DROP FUNCTION IF EXISTS ld_messages_hash_ts_del();"
    "DROP FUNCTION IF EXISTS ld_messages_hash_ts_truncate();"
    "DROP TABLE IF EXISTS ld_messages_hash_ts;"
    "CREATE TABLE IF NOT EXISTS ld_messages_key_ts ("
    " hashKey BIGINT NOT NULL, timestamp BIGINT NOT NULL,"
    " CONSTRAINT ldMessagesKeyTsIndex PRIMARY KEY (hashKey, timestamp));"
    "CREATE INDEX IF NOT EXISTS idx_ld_messages_key_ts_timestamp ON ld_messages_key_ts "
    "(timestamp);"
    "CREATE OR REPLACE FUNCTION ld_messages_key_ts_add() RETURNS trigger LANGUAGE plpgsql AS $f$"
    " BEGIN EXECUTE format('INSERT INTO %I.ld_messages_key_ts (hashKey, timestamp)"
    " SELECT hashtextextended(messageHash, 0), timestamp FROM ld_new ON CONFLICT DO NOTHING',"
    " TG_TABLE_SCHEMA);"
    " RETURN NULL; END $f$;"
    "CREATE OR REPLACE FUNCTION ld_messages_key_ts_del() RETURNS trigger LANGUAGE plpgsql AS $f$"
    " BEGIN EXECUTE format('DELETE FROM %1$I.ld_messages_key_ts k USING ld_old o"
    " WHERE k.hashKey = hashtextextended(o.messageHash, 0) AND k.timestamp = o.timestamp"
    " AND NOT EXISTS (SELECT 1 FROM %1$I.messages m WHERE m.timestamp = k.timestamp"
    " AND hashtextextended(m.messageHash, 0) = k.hashKey)', TG_TABLE_SCHEMA);"
    " RETURN NULL; END $f$;"
    "CREATE OR REPLACE FUNCTION ld_messages_key_ts_truncate() RETURNS trigger LANGUAGE plpgsql"
    " AS $f$ BEGIN EXECUTE format('TRUNCATE %I.ld_messages_key_ts', TG_TABLE_SCHEMA);"
    " RETURN NULL; END $f$;"
    "DROP TRIGGER IF EXISTS ld_messages_key_ts_add ON messages;"
    "DROP TRIGGER IF EXISTS ld_messages_key_ts_del ON messages;"
    "DROP TRIGGER IF EXISTS ld_messages_key_ts_truncate ON messages;"
    "CREATE TRIGGER ld_messages_key_ts_add AFTER INSERT ON messages"
    " REFERENCING NEW TABLE AS ld_new FOR EACH STATEMENT EXECUTE FUNCTION "
    "ld_messages_key_ts_add();"
    "CREATE TRIGGER ld_messages_key_ts_del AFTER DELETE ON messages"
    " REFERENCING OLD TABLE AS ld_old FOR EACH STATEMENT EXECUTE FUNCTION "
    "ld_messages_key_ts_del();"
    "CREATE TRIGGER ld_messages_key_ts_truncate AFTER TRUNCATE ON messages"
    " FOR EACH STATEMENT EXECUTE FUNCTION ld_messages_key_ts_truncate();"
    "INSERT INTO ld_messages_key_ts (hashKey, timestamp)"
    " SELECT hashtextextended(messageHash, 0), timestamp FROM messages ON CONFLICT DO NOTHING;"
    "DELETE FROM ld_archive_version;"
    "INSERT INTO ld_archive_version (version) VALUES (2)";

/* Key rows in [lo, hi) whose message is gone (partitions dropped without the triggers firing).
 * Rows of concurrent inserts are either visible in both tables or in neither. */
static const char k_key_ts_stale[] =
    "DELETE FROM ld_messages_key_ts k WHERE k.timestamp >= $1::bigint AND k.timestamp < $2::bigint"
    " AND NOT EXISTS (SELECT 1 FROM messages m"
    " WHERE m.timestamp = k.timestamp AND hashtextextended(m.messageHash, 0) = k.hashKey)";

/* ---- partitions ---------------------------------------------------------------------------- */

void ld_pg_partitions_clear(ld_pg_partitions_t *ps) {
  free(ps->p);
  memset(ps, 0, sizeof *ps);
}

static int partitions_add(ld_pg_partitions_t *ps, const ld_pg_partition_t *p) {
  if (ps->n == ps->cap) {
    size_t cap = ps->cap ? ps->cap * 2 : 16;
    ld_pg_partition_t *np = realloc(ps->p, cap * sizeof *np);
    if (np == NULL)
      return LD_ERR_NOMEM;
    ps->p = np;
    ps->cap = cap;
  }
  ps->p[ps->n++] = *p;
  return 0;
}

int ld_pg_partitions_copy(ld_pg_partitions_t *dst, const ld_pg_partitions_t *src) {
  ld_pg_partitions_t tmp = {0};
  for (size_t i = 0; i < src->n; i++)
    if (partitions_add(&tmp, &src->p[i]) != 0) {
      ld_pg_partitions_clear(&tmp);
      return LD_ERR_NOMEM;
    }
  ld_pg_partitions_clear(dst);
  *dst = tmp;
  return 0;
}

long ld_pg_partitions_find(const ld_pg_partitions_t *ps, int64_t ts) {
  for (size_t i = 0; i < ps->n; i++)
    if (ps->p[i].lo <= ts && ts < ps->p[i].hi)
      return (long)i;
  return -1;
}

static int cmp_partition(const void *x, const void *y) {
  const ld_pg_partition_t *a = x, *b = y;
  return a->lo < b->lo ? -1 : a->lo > b->lo;
}

/* One bound of "FOR VALUES FROM ('x') TO ('y')". */
static int64_t parse_bound(const char *s) {
  while (*s == '\'' || *s == ' ')
    s++;
  if (strncmp(s, "MINVALUE", 8) == 0)
    return INT64_MIN;
  if (strncmp(s, "MAXVALUE", 8) == 0)
    return INT64_MAX;
  return strtoll(s, NULL, 10);
}

static int parse_partition(const char *name, const char *bound, ld_pg_partition_t *out) {
  char lo[64], hi[64];
  if (name == NULL || bound == NULL || strlen(name) >= sizeof out->name ||
      sscanf(bound, "FOR VALUES FROM (%63[^)]) TO (%63[^)])", lo, hi) != 2)
    return LD_ERR_MALFORMED;
  snprintf(out->name, sizeof out->name, "%s", name);
  out->lo = parse_bound(lo);
  out->hi = parse_bound(hi);
  return 0;
}

int ld_pg_partitions_load(PGconn *c, uint64_t deadline_ms, ld_pg_partitions_t *out,
                          ld_pg_status_t *st) {
  PGresult *r;
  int rc = ld_pg_exec(c,
                      "SELECT c.relname, pg_get_expr(c.relpartbound, c.oid) FROM pg_inherits i "
                      "JOIN pg_class c ON c.oid = i.inhrelid "
                      "WHERE i.inhparent = to_regclass('messages')",
                      0, NULL, deadline_ms, &r, st);
  if (rc != 0)
    return rc;
  ld_pg_partitions_t ps = {0};
  for (int i = 0; i < PQntuples(r) && rc == 0; i++) {
    ld_pg_partition_t p;
    if (parse_partition(PQgetvalue(r, i, 0), PQgetvalue(r, i, 1), &p) == 0)
      rc = partitions_add(&ps, &p);
  }
  PQclear(r);
  if (rc != 0) {
    ld_pg_partitions_clear(&ps);
    return rc;
  }
  if (ps.n > 1)
    qsort(ps.p, ps.n, sizeof *ps.p, cmp_partition);
  ld_pg_partitions_clear(out);
  *out = ps;
  return 0;
}

/* floor(ts / hour) · hour, saturating. */
static int64_t hour_floor(int64_t ts) {
  int64_t h = ts / LD_PG_PARTITION_NS * LD_PG_PARTITION_NS;
  if (ts < 0 && h != ts)
    h = h >= INT64_MIN + LD_PG_PARTITION_NS ? h - LD_PG_PARTITION_NS : INT64_MIN;
  return h;
}

static int64_t floor_sec(int64_t ns) {
  int64_t s = ns / 1000000000ll;
  return ns < 0 && s * 1000000000ll != ns ? s - 1 : s;
}

/* The free range around ts within its hour, given the existing partitions. */
static void free_range(const ld_pg_partitions_t *ps, int64_t ts, int64_t *lo, int64_t *hi) {
  *lo = hour_floor(ts);
  *hi = *lo <= INT64_MAX - LD_PG_PARTITION_NS ? *lo + LD_PG_PARTITION_NS : INT64_MAX;
  for (size_t i = 0; i < ps->n; i++) {
    if (ps->p[i].hi <= ts && ps->p[i].hi > *lo)
      *lo = ps->p[i].hi;
    if (ps->p[i].lo > ts && ps->p[i].lo < *hi)
      *hi = ps->p[i].lo;
  }
}

static int quoted(PGconn *c, const char *name, char *out, size_t cap) {
  char *q = PQescapeIdentifier(c, name, strlen(name));
  if (q == NULL)
    return LD_ERR_NOMEM;
  int n = snprintf(out, cap, "%s", q);
  PQfreemem(q);
  return n > 0 && (size_t)n < cap ? 0 : LD_ERR_OVERFLOW;
}

static int create_range(PGconn *c, int64_t lo, int64_t hi, uint64_t deadline_ms,
                        ld_pg_status_t *st) {
  char name[LD_PG_PARTITION_NAME_MAX], lookup[LD_PG_PARTITION_NAME_MAX],
      check[LD_PG_PARTITION_NAME_MAX + 16];
  char qname[2 * LD_PG_PARTITION_NAME_MAX], qlookup[2 * LD_PG_PARTITION_NAME_MAX],
      qcheck[2 * LD_PG_PARTITION_NAME_MAX + 32];
  long long ls = (long long)floor_sec(lo), hs = (long long)floor_sec(hi);
  snprintf(name, sizeof name, "messages_%lld_%lld", ls, hs);
  snprintf(lookup, sizeof lookup, "lookup_%lld_%lld", ls, hs);
  snprintf(check, sizeof check, "%s_by_range_check", name);
  int rc = quoted(c, name, qname, sizeof qname);
  if (rc == 0)
    rc = quoted(c, lookup, qlookup, sizeof qlookup);
  if (rc == 0)
    rc = quoted(c, check, qcheck, sizeof qcheck);
  if (rc != 0)
    return rc;
  char sql[2048];
  long long l = (long long)lo, h = (long long)hi;
  snprintf(sql, sizeof sql,
           "CREATE TABLE IF NOT EXISTS %s PARTITION OF messages_lookup FOR VALUES FROM (%lld) TO "
           "(%lld);"
           "CREATE TABLE IF NOT EXISTS %s (LIKE messages INCLUDING DEFAULTS INCLUDING "
           "CONSTRAINTS);"
           "ALTER TABLE %s ADD CONSTRAINT %s CHECK (timestamp >= %lld AND timestamp < %lld);"
           "ALTER TABLE messages ATTACH PARTITION %s FOR VALUES FROM (%lld) TO (%lld);"
           "ALTER TABLE %s DROP CONSTRAINT %s",
           qlookup, l, h, qname, qname, qcheck, l, h, qname, l, h, qname, qcheck);
  return ld_pg_run(c, sql, deadline_ms, st);
}

int ld_pg_partition_ensure(PGconn *c, const ld_pg_partitions_t *known, int64_t ts,
                           uint64_t deadline_ms, ld_pg_status_t *st) {
  if (ld_pg_partitions_find(known, ts) >= 0)
    return 0;
  char sql[128];
  snprintf(sql, sizeof sql, "BEGIN; SELECT pg_advisory_xact_lock(%d)", LOCK_PARTITIONS);
  int rc = ld_pg_run(c, sql, deadline_ms, st);
  ld_pg_partitions_t now = {0};
  if (rc == 0) /* another node may have been first */
    rc = ld_pg_partitions_load(c, deadline_ms, &now, st);
  if (rc == 0 && ld_pg_partitions_find(&now, ts) < 0) {
    int64_t lo, hi;
    free_range(&now, ts, &lo, &hi);
    rc = create_range(c, lo, hi, deadline_ms, st);
  }
  ld_pg_partitions_clear(&now);
  if (rc == 0)
    rc = ld_pg_run(c, "COMMIT", deadline_ms, st);
  if (rc != 0 && !ld_pg_conn_lost(rc)) {
    ld_pg_status_t ignored;
    ld_pg_run(c, "ROLLBACK", deadline_ms, &ignored);
  }
  return rc;
}

static int drop_table(PGconn *c, const char *name, uint64_t deadline_ms, ld_pg_status_t *st) {
  char q[2 * LD_PG_PARTITION_NAME_MAX + 8], sql[256];
  int rc = quoted(c, name, q, sizeof q);
  if (rc != 0)
    return rc;
  snprintf(sql, sizeof sql, "DROP TABLE IF EXISTS %s", q);
  return ld_pg_run(c, sql, deadline_ms, st);
}

static int detach(PGconn *c, const char *qname, uint64_t deadline_ms, ld_pg_status_t *st) {
  char sql[256];
  snprintf(sql, sizeof sql, "ALTER TABLE messages DETACH PARTITION %s CONCURRENTLY", qname);
  int rc = ld_pg_run(c, sql, deadline_ms, st);
  if (rc == LD_ERR_DB && (strstr(st->why, "FINALIZE") || strstr(st->why, "pending"))) {
    snprintf(sql, sizeof sql, "ALTER TABLE messages DETACH PARTITION %s FINALIZE", qname);
    rc = ld_pg_run(c, sql, deadline_ms, st);
  }
  return rc;
}

int ld_pg_partition_drop(PGconn *c, const ld_pg_partition_t *p, uint64_t deadline_ms,
                         uint64_t *rows, ld_pg_status_t *st) {
  char qname[2 * LD_PG_PARTITION_NAME_MAX], sql[256], lookup[LD_PG_PARTITION_NAME_MAX + 8];
  int rc = quoted(c, p->name, qname, sizeof qname);
  if (rc != 0)
    return rc;
  snprintf(sql, sizeof sql, "SELECT count(*) FROM %s", qname);
  PGresult *r;
  rc = ld_pg_exec(c, sql, 0, NULL, deadline_ms, &r, st);
  if (rc != 0)
    return rc;
  *rows = PQntuples(r) == 1 ? strtoull(PQgetvalue(r, 0, 0), NULL, 10) : 0;
  PQclear(r);
  const char *suffix = strncmp(p->name, "messages_", 9) == 0 ? p->name + 9 : p->name;
  snprintf(lookup, sizeof lookup, "lookup_%s", suffix);
  rc = drop_table(c, lookup, deadline_ms, st);
  if (rc == 0)
    rc = detach(c, qname, deadline_ms, st);
  if (rc == 0)
    rc = drop_table(c, p->name, deadline_ms, st);
  if (rc == 0)
    rc = ld_pg_key_ts_forget(c, p->lo, p->hi, deadline_ms, st);
  return rc;
}

int ld_pg_key_ts_forget(PGconn *c, int64_t lo, int64_t hi, uint64_t deadline_ms,
                        ld_pg_status_t *st) {
  char l[24], h[24];
  snprintf(l, sizeof l, "%lld", (long long)lo);
  snprintf(h, sizeof h, "%lld", (long long)hi);
  const char *vals[2] = {l, h};
  return ld_pg_exec(c, k_key_ts_stale, 2, vals, deadline_ms, NULL, st);
}

int ld_pg_key_ts_trim(PGconn *c, uint64_t deadline_ms, ld_pg_status_t *st) {
  ld_pg_partitions_t ps = {0};
  int rc = ld_pg_partitions_load(c, deadline_ms, &ps, st);
  if (rc == 0)
    rc = ld_pg_key_ts_forget(c, INT64_MIN, ps.n > 0 ? ps.p[0].lo : INT64_MAX, deadline_ms, st);
  ld_pg_partitions_clear(&ps);
  return rc;
}

static int drop_listed(PGconn *c, const char *select, uint64_t deadline_ms, ld_pg_status_t *st) {
  PGresult *r;
  int rc = ld_pg_exec(c, select, 0, NULL, deadline_ms, &r, st);
  for (int i = 0; rc == 0 && i < PQntuples(r); i++)
    rc = drop_table(c, PQgetvalue(r, i, 0), deadline_ms, st);
  PQclear(r);
  return rc;
}

int ld_pg_drop_strays(PGconn *c, uint64_t deadline_ms, ld_pg_status_t *st) {
  int rc = drop_listed(c,
                       "SELECT c.relname FROM pg_class c "
                       "JOIN pg_namespace n ON n.oid = c.relnamespace "
                       "LEFT JOIN pg_inherits i ON i.inhrelid = c.oid "
                       "WHERE n.nspname = current_schema() AND c.relkind = 'r' "
                       "AND i.inhrelid IS NULL AND c.relname ~ '^messages_-?[0-9]+_-?[0-9]+$'",
                       deadline_ms, st);
  if (rc != 0)
    return rc;
  return drop_listed(c,
                     "SELECT c.relname FROM pg_class c "
                     "JOIN pg_namespace n ON n.oid = c.relnamespace "
                     "WHERE n.nspname = current_schema() AND c.relkind = 'r' "
                     "AND c.relname LIKE 'lookup\\_%' "
                     "AND to_regclass(quote_ident('messages_' || substr(c.relname, 8))) IS NULL",
                     deadline_ms, st);
}

/* ---- migrations ---------------------------------------------------------------------------- */

static int int_value(PGconn *c, const char *sql, uint64_t deadline_ms, long *out,
                     ld_pg_status_t *st) {
  PGresult *r;
  int rc = ld_pg_exec(c, sql, 0, NULL, deadline_ms, &r, st);
  if (rc != 0)
    return rc;
  *out = PQntuples(r) > 0 && !PQgetisnull(r, 0, 0) ? strtol(PQgetvalue(r, 0, 0), NULL, 10) : 0;
  PQclear(r);
  return 0;
}

/* Version 7 → 8: lookup siblings get the exact bounds of the messages partitions. */
static int upgrade_v7(PGconn *c, uint64_t deadline_ms, ld_pg_status_t *st) {
  int rc = ld_pg_run(c, k_lookup_v8, deadline_ms, st);
  PGresult *r = NULL;
  if (rc == 0)
    rc = ld_pg_exec(c,
                    "SELECT c.relname, pg_get_expr(c.relpartbound, c.oid) FROM pg_inherits i "
                    "JOIN pg_class c ON c.oid = i.inhrelid "
                    "WHERE i.inhparent = to_regclass('messages')",
                    0, NULL, deadline_ms, &r, st);
  for (int i = 0; rc == 0 && i < PQntuples(r); i++) {
    const char *name = PQgetvalue(r, i, 0), *bound = PQgetvalue(r, i, 1);
    char lookup[LD_PG_PARTITION_NAME_MAX + 8], q[2 * LD_PG_PARTITION_NAME_MAX + 16], sql[512];
    snprintf(lookup, sizeof lookup, "lookup_%s",
             strncmp(name, "messages_", 9) == 0 ? name + 9 : name);
    rc = quoted(c, lookup, q, sizeof q);
    if (rc == 0 && strncmp(bound, "FOR VALUES ", 11) == 0) {
      snprintf(sql, sizeof sql, "CREATE TABLE IF NOT EXISTS %s PARTITION OF messages_lookup %s", q,
               bound);
      rc = ld_pg_run(c, sql, deadline_ms, st);
    }
  }
  PQclear(r);
  return rc == 0 ? ld_pg_run(c, k_backfill_v8, deadline_ms, st) : rc;
}

/* Our extensions on top of nwaku's version 8, by their own version number. */
static int migrate_ext(PGconn *c, uint64_t deadline_ms, ld_pg_status_t *st) {
  long has_table = 0, version = 0;
  int rc = int_value(c, "SELECT (to_regclass('ld_archive_version') IS NOT NULL)::int", deadline_ms,
                     &has_table, st);
  if (rc == 0 && has_table)
    rc = int_value(c, "SELECT COALESCE(MAX(version), 0) FROM ld_archive_version", deadline_ms,
                   &version, st);
  if (rc != 0 || version == LD_PG_EXT_VERSION)
    return rc;
  if (version < LD_PG_EXT_VERSION) /* absent or version 1 */
    return ld_pg_run(c, k_ext_v2, deadline_ms, st);
  snprintf(st->why, sizeof st->why, "cannot migrate from archive extension version %ld", version);
  return LD_ERR_DB;
}

static int migrate_locked(PGconn *c, uint64_t deadline_ms, ld_pg_status_t *st) {
  long has_version = 0, has_messages = 0, version = 0;
  int rc = int_value(c, "SELECT (to_regclass('version') IS NOT NULL)::int", deadline_ms,
                     &has_version, st);
  if (rc == 0)
    rc = int_value(c, "SELECT (to_regclass('messages') IS NOT NULL)::int", deadline_ms,
                   &has_messages, st);
  if (rc == 0 && has_version)
    rc = int_value(c, "SELECT COALESCE(MAX(version), 0) FROM version", deadline_ms, &version, st);
  if (rc != 0)
    return rc;
  if (version == 0 && !has_messages)
    rc = ld_pg_run(c, k_create_v8, deadline_ms, st);
  else if (version == 7)
    rc = upgrade_v7(c, deadline_ms, st);
  else if (version != LD_PG_SCHEMA_VERSION) {
    snprintf(st->why, sizeof st->why, "cannot migrate from schema version %ld", version);
    return LD_ERR_DB;
  }
  return rc == 0 ? migrate_ext(c, deadline_ms, st) : rc;
}

int ld_pg_migrate(PGconn *c, uint64_t deadline_ms, ld_pg_status_t *st) {
  char sql[160];
  snprintf(sql, sizeof sql,
           "BEGIN; SET LOCAL statement_timeout = 0; SELECT pg_advisory_xact_lock(%d)",
           LOCK_MIGRATION);
  int rc = ld_pg_run(c, sql, deadline_ms, st);
  if (rc == 0)
    rc = migrate_locked(c, deadline_ms, st);
  if (rc == 0)
    rc = ld_pg_run(c, "COMMIT", deadline_ms, st);
  if (rc != 0 && !ld_pg_conn_lost(rc)) {
    ld_pg_status_t ignored;
    ld_pg_run(c, "ROLLBACK", deadline_ms, &ignored);
  }
  return rc;
}
