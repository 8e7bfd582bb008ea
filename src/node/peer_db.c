#include "node/peer_db.h"

#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "base/log.h"
#include "base/sq.h"

#define TOPIC "peer_db"

struct ld_peer_db {
  sqlite3 *db;
  sqlite3_stmt *put, *del;
};

static const char k_schema[] = "PRAGMA journal_mode=WAL;"
                               "PRAGMA synchronous=NORMAL;"
                               "CREATE TABLE IF NOT EXISTS ld_peers ("
                               " peer_id BLOB PRIMARY KEY,"
                               " addrs TEXT NOT NULL,"
                               " origin INTEGER NOT NULL,"
                               " cluster INTEGER,"
                               " shards BLOB,"
                               " services INTEGER NOT NULL,"
                               " disconnected INTEGER NOT NULL);";

static int fail(ld_peer_db_t *db, const char *what) {
  LD_WARN(TOPIC, "%s: %s", what, sqlite3_errmsg(db->db));
  return LD_ERR_IO;
}

int ld_peer_db_open(const char *path, ld_peer_db_t **out) {
  if (ld_sq_load() != 0)
    return LD_ERR_IO;
  ld_peer_db_t *db = calloc(1, sizeof *db);
  if (db == NULL)
    return LD_ERR_NOMEM;
  int rc = sqlite3_open_v2(path, &db->db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, NULL);
  if (rc == SQLITE_OK)
    rc = sqlite3_exec(db->db, k_schema, NULL, NULL, NULL);
  if (rc == SQLITE_OK)
    rc = sqlite3_prepare_v2(db->db,
                            "INSERT OR REPLACE INTO ld_peers (peer_id, addrs, origin, cluster,"
                            " shards, services, disconnected) VALUES (?,?,?,?,?,?,?)",
                            -1, &db->put, NULL);
  if (rc == SQLITE_OK)
    rc = sqlite3_prepare_v2(db->db, "DELETE FROM ld_peers WHERE peer_id = ?", -1, &db->del, NULL);
  if (rc != SQLITE_OK) {
    LD_WARN(TOPIC, "cannot open peer store %s: %s", path,
            db->db != NULL ? sqlite3_errmsg(db->db) : "out of memory");
    ld_peer_db_close(db);
    return LD_ERR_IO;
  }
  *out = db;
  return 0;
}

void ld_peer_db_close(ld_peer_db_t *db) {
  if (db == NULL)
    return;
  sqlite3_finalize(db->put);
  sqlite3_finalize(db->del);
  sqlite3_close(db->db);
  free(db);
}

/* Addresses as text joined by single spaces. */
static void addrs_text(const ld_pm_peer_t *p, char *out, size_t cap) {
  size_t used = 0;
  out[0] = '\0';
  for (size_t i = 0; i < p->n_addrs; i++) {
    char text[LD_MULTIADDR_TEXT_MAX];
    int n = ld_multiaddr_to_text(&p->addrs[i], text, sizeof text);
    if (n <= 0 || used + (size_t)n + 2 > cap)
      continue;
    if (used > 0)
      out[used++] = ' ';
    memcpy(out + used, text, (size_t)n + 1);
    used += (size_t)n;
  }
}

int ld_peer_db_put(ld_peer_db_t *db, const ld_pm_peer_t *p, int64_t disconnected_s) {
  char addrs[LD_PM_MAX_ADDRS * (LD_MULTIADDR_TEXT_MAX + 1)];
  addrs_text(p, addrs, sizeof addrs);
  uint8_t shards[2 * LD_PM_MAX_PEER_SHARDS];
  for (size_t i = 0; i < p->n_shards; i++) {
    shards[2 * i] = (uint8_t)(p->shards[i] & 0xff);
    shards[2 * i + 1] = (uint8_t)(p->shards[i] >> 8);
  }
  sqlite3_stmt *s = db->put;
  sqlite3_reset(s);
  sqlite3_bind_blob(s, 1, p->id.bytes, (int)p->id.len, SQLITE_TRANSIENT);
  sqlite3_bind_text(s, 2, addrs, -1, SQLITE_TRANSIENT);
  sqlite3_bind_int(s, 3, (int)p->origin);
  if (p->has_shards) {
    sqlite3_bind_int(s, 4, p->cluster_id);
    sqlite3_bind_blob(s, 5, shards, (int)(2 * p->n_shards), SQLITE_TRANSIENT);
  } else {
    sqlite3_bind_null(s, 4);
    sqlite3_bind_null(s, 5);
  }
  sqlite3_bind_int(s, 6, (int)p->services);
  sqlite3_bind_int64(s, 7, disconnected_s);
  int rc = sqlite3_step(s);
  sqlite3_reset(s);
  return rc == SQLITE_DONE ? 0 : fail(db, "peer store write");
}

int ld_peer_db_delete(ld_peer_db_t *db, const ld_peerid_t *id) {
  sqlite3_stmt *s = db->del;
  sqlite3_reset(s);
  sqlite3_bind_blob(s, 1, id->bytes, (int)id->len, SQLITE_TRANSIENT);
  int rc = sqlite3_step(s);
  sqlite3_reset(s);
  return rc == SQLITE_DONE ? 0 : fail(db, "peer store delete");
}

/* Splits the address text; returns how many parsed. */
static size_t parse_addrs(const char *text, ld_multiaddr_t *out, size_t max) {
  size_t n = 0;
  while (text != NULL && *text != '\0' && n < max) {
    const char *end = strchr(text, ' ');
    size_t len = end != NULL ? (size_t)(end - text) : strlen(text);
    char one[LD_MULTIADDR_TEXT_MAX];
    if (len < sizeof one) {
      memcpy(one, text, len);
      one[len] = '\0';
      if (ld_multiaddr_parse(&out[n], one) == 0)
        n++;
    }
    text = end != NULL ? end + 1 : NULL;
  }
  return n;
}

static bool row_info(sqlite3_stmt *s, ld_peerid_t *id, ld_pm_peer_info_t *info,
                     ld_multiaddr_t *addrs, uint16_t *shards) {
  const void *idb = sqlite3_column_blob(s, 0);
  int idlen = sqlite3_column_bytes(s, 0);
  if (idb == NULL || ld_peerid_from_bytes(id, idb, (size_t)idlen) != 0)
    return false;
  memset(info, 0, sizeof *info);
  info->addrs = addrs;
  info->n_addrs = parse_addrs((const char *)sqlite3_column_text(s, 1), addrs, LD_PM_MAX_ADDRS);
  int origin = sqlite3_column_int(s, 2);
  info->origin = origin >= 0 && origin <= LD_PM_ORIGIN_DNS ? (ld_pm_origin_t)origin : 0;
  if (sqlite3_column_type(s, 3) != SQLITE_NULL) {
    const uint8_t *b = sqlite3_column_blob(s, 4);
    size_t n = (size_t)sqlite3_column_bytes(s, 4) / 2;
    n = n < LD_PM_MAX_PEER_SHARDS ? n : LD_PM_MAX_PEER_SHARDS;
    for (size_t i = 0; b != NULL && i < n; i++)
      shards[i] = (uint16_t)(b[2 * i] | b[2 * i + 1] << 8);
    info->has_shards = true;
    info->cluster_id = (uint16_t)sqlite3_column_int(s, 3);
    info->shards = shards;
    info->n_shards = b != NULL ? n : 0;
  }
  info->services = (unsigned)sqlite3_column_int(s, 5);
  return true;
}

int ld_peer_db_load(ld_peer_db_t *db, size_t max, ld_peer_db_row_fn fn, void *ud) {
  sqlite3_stmt *s = NULL;
  if (sqlite3_prepare_v2(db->db,
                         "SELECT peer_id, addrs, origin, cluster, shards, services FROM ld_peers"
                         " ORDER BY disconnected DESC",
                         -1, &s, NULL) != SQLITE_OK)
    return fail(db, "peer store read");
  int given = 0, rc;
  while ((size_t)given < max && (rc = sqlite3_step(s)) == SQLITE_ROW) {
    ld_peerid_t id;
    ld_pm_peer_info_t info;
    ld_multiaddr_t addrs[LD_PM_MAX_ADDRS];
    uint16_t shards[LD_PM_MAX_PEER_SHARDS];
    if (!row_info(s, &id, &info, addrs, shards))
      continue;
    fn(ud, &id, &info);
    given++;
  }
  sqlite3_finalize(s);
  return given;
}

int64_t ld_peer_db_count(ld_peer_db_t *db) {
  sqlite3_stmt *s = NULL;
  int64_t n = -1;
  if (sqlite3_prepare_v2(db->db, "SELECT COUNT(*) FROM ld_peers", -1, &s, NULL) == SQLITE_OK &&
      sqlite3_step(s) == SQLITE_ROW)
    n = sqlite3_column_int64(s, 0);
  sqlite3_finalize(s);
  return n;
}
