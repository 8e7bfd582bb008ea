/* The persisted state of reliable channels (channels/channel_store.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <sqlite3.h>

#include "base/buf.h"
#include "base/cursor.h"
#include "base/error.h"
#include "base/hashmap.h"
#include "base/log.h"
#include "base/sq.h"
#include "channels/channel_store.h"

#define TOPIC "channels"

enum {
  ST_PUT_CHANNEL,
  ST_PUT_STATE,
  ST_DELETE,
  ST_BUMP_ORD,
  ST_TRIM,
  ST_COUNT,
};

static const char *const k_sql[ST_COUNT] = {
    "INSERT OR REPLACE INTO channel(id, topic, sender, lamport) VALUES (?1, ?2, ?3, ?4)",
    "INSERT OR REPLACE INTO state(channel, kind, key, ord, rec) VALUES (?1, ?2, ?3, ?4, ?5)",
    "DELETE FROM state WHERE channel = ?1 AND kind = ?2 AND key = ?3",
    "UPDATE state SET ord = ord + 1 WHERE channel = ?1 AND kind = ?2 AND key = ?3",
    ("DELETE FROM state WHERE channel = ?1 AND kind = 1 AND key IN (SELECT key FROM state WHERE "
     "channel = ?1 AND kind = 1 ORDER BY ord DESC, key DESC LIMIT -1 OFFSET ?2)"),
};

static const char k_schema[] =
    "CREATE TABLE IF NOT EXISTS channel(id TEXT PRIMARY KEY, topic TEXT NOT NULL, "
    "sender TEXT NOT NULL, lamport INTEGER NOT NULL) WITHOUT ROWID;"
    "CREATE TABLE IF NOT EXISTS state(channel TEXT NOT NULL, kind INTEGER NOT NULL, "
    "key TEXT NOT NULL, ord INTEGER NOT NULL, rec BLOB NOT NULL, "
    "PRIMARY KEY(channel, kind, key)) WITHOUT ROWID;"
    /* the loader reads a channel's rows in (kind, ord) order: without a sort */
    "CREATE INDEX IF NOT EXISTS state_order ON state(channel, kind, ord);";

struct ld_channel_store {
  sqlite3 *db;
  sqlite3_stmt *st[ST_COUNT];
  bool in_txn;
  uint64_t errors;
  uint64_t writes;
  ld_channel_store_counts_t counts;
  /* (channel ‖ 0 ‖ message ID) of the INCOMING rows in the file (written or loaded): a message
   * delivered without ever being buffered has no row, and its deletion is no write */
  ld_hashmap_t *incoming;
};

/* ---- open / close --------------------------------------------------------------------------- */

static int make_parent_dir(const char *path) {
  char dir[4096];
  snprintf(dir, sizeof dir, "%s", path);
  char *slash = strrchr(dir, '/');
  if (slash == NULL || slash == dir)
    return 0;
  *slash = '\0';
  for (char *p = dir + 1; *p != '\0'; p++) {
    if (*p != '/')
      continue;
    *p = '\0';
    if (mkdir(dir, 0700) != 0 && errno != EEXIST)
      return -1;
    *p = '/';
  }
  return mkdir(dir, 0700) != 0 && errno != EEXIST ? -1 : 0;
}

/* The quick check's verdict: 0 when "ok", else the first message in `why`. */
static int quick_check(sqlite3 *db, char *why, size_t cap) {
  sqlite3_stmt *s = NULL;
  int rc = sqlite3_prepare_v2(db, "PRAGMA quick_check(1)", -1, &s, NULL);
  if (rc == SQLITE_OK)
    rc = sqlite3_step(s);
  int out = 0;
  if (rc != SQLITE_ROW) {
    snprintf(why, cap, "%s", sqlite3_errmsg(db));
    out = LD_ERR_DB;
  } else {
    const char *verdict = (const char *)sqlite3_column_text(s, 0);
    if (verdict == NULL || strcmp(verdict, "ok") != 0) {
      snprintf(why, cap, "%s", verdict != NULL ? verdict : "quick check failed");
      out = LD_ERR_DB;
    }
  }
  sqlite3_finalize(s);
  return out;
}

int ld_channel_store_open(const char *path, ld_channel_store_t **out, char *why, size_t why_cap) {
  *out = NULL;
  if (ld_sq_load() != 0)
    return ld_error_fmt(why, why_cap, LD_ERR_IO, "cannot open %s: libsqlite3 is not available",
                        path);
  ld_channel_store_t *st = calloc(1, sizeof *st);
  if (st != NULL && (st->incoming = ld_hashmap_new(0)) == NULL) {
    free(st);
    st = NULL;
  }
  if (st == NULL)
    return ld_error_fmt(why, why_cap, LD_ERR_NOMEM, "%s", ld_strerror(LD_ERR_NOMEM));
  if (make_parent_dir(path) != 0 ||
      sqlite3_open_v2(path, &st->db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, NULL) !=
          SQLITE_OK) {
    int rc = ld_error_fmt(why, why_cap, LD_ERR_IO, "cannot open %s: %s", path,
                          st->db != NULL ? sqlite3_errmsg(st->db) : strerror(errno));
    ld_channel_store_close(st);
    return rc;
  }
  char detail[256] = "";
  int rc = quick_check(st->db, detail, sizeof detail);
  if (rc == 0 && sqlite3_exec(st->db, "PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL;",
                              NULL, NULL, NULL) != SQLITE_OK)
    rc = LD_ERR_DB;
  if (rc == 0 && sqlite3_exec(st->db, k_schema, NULL, NULL, NULL) != SQLITE_OK)
    rc = LD_ERR_DB;
  for (int i = 0; rc == 0 && i < ST_COUNT; i++)
    if (sqlite3_prepare_v2(st->db, k_sql[i], -1, &st->st[i], NULL) != SQLITE_OK)
      rc = LD_ERR_DB;
  if (rc != 0) {
    if (detail[0] == '\0')
      snprintf(detail, sizeof detail, "%s", sqlite3_errmsg(st->db));
    rc = ld_error_fmt(why, why_cap, LD_ERR_DB, "%s is corrupted: %s", path, detail);
    ld_channel_store_close(st);
    return rc;
  }
  *out = st;
  return 0;
}

void ld_channel_store_close(ld_channel_store_t *st) {
  if (st == NULL)
    return;
  ld_channel_store_commit(st);
  for (int i = 0; i < ST_COUNT; i++)
    sqlite3_finalize(st->st[i]);
  sqlite3_close(st->db);
  ld_hashmap_free(st->incoming, NULL);
  free(st);
}

void ld_channel_store_commit(ld_channel_store_t *st) {
  if (st == NULL || !st->in_txn)
    return;
  st->in_txn = false;
  if (sqlite3_exec(st->db, "COMMIT", NULL, NULL, NULL) != SQLITE_OK) {
    st->errors++;
    LD_WARN(TOPIC, "channel state commit failed: %s", sqlite3_errmsg(st->db));
    sqlite3_exec(st->db, "ROLLBACK", NULL, NULL, NULL);
  }
}

uint64_t ld_channel_store_errors(const ld_channel_store_t *st) {
  return st != NULL ? st->errors : 0;
}

uint64_t ld_channel_store_writes(const ld_channel_store_t *st) {
  return st != NULL ? st->writes : 0;
}

void ld_channel_store_counts(const ld_channel_store_t *st, ld_channel_store_counts_t *out) {
  if (st != NULL)
    *out = st->counts;
  else
    memset(out, 0, sizeof *out);
}

/* ---- writes --------------------------------------------------------------------------------- */

/* The statement `which`, reset, inside a transaction; NULL after counting an error. */
static sqlite3_stmt *stmt(ld_channel_store_t *st, int which) {
  if (!st->in_txn) {
    if (sqlite3_exec(st->db, "BEGIN", NULL, NULL, NULL) != SQLITE_OK) {
      st->errors++;
      LD_WARN(TOPIC, "channel state: BEGIN failed: %s", sqlite3_errmsg(st->db));
      return NULL;
    }
    st->in_txn = true;
  }
  sqlite3_stmt *s = st->st[which];
  sqlite3_reset(s);
  sqlite3_clear_bindings(s);
  return s;
}

static void run(ld_channel_store_t *st, sqlite3_stmt *s) {
  st->writes++;
  if (sqlite3_step(s) != SQLITE_DONE) {
    st->errors++;
    LD_WARN(TOPIC, "channel state write failed: %s", sqlite3_errmsg(st->db));
  }
  sqlite3_reset(s);
}

void ld_channel_store_put_channel(ld_channel_store_t *st, const char *channel_id, const char *topic,
                                  const char *sender, uint64_t lamport) {
  sqlite3_stmt *s = stmt(st, ST_PUT_CHANNEL);
  if (s == NULL)
    return;
  sqlite3_bind_text(s, 1, channel_id, -1, SQLITE_STATIC);
  sqlite3_bind_text(s, 2, topic, -1, SQLITE_STATIC);
  sqlite3_bind_text(s, 3, sender, -1, SQLITE_STATIC);
  sqlite3_bind_int64(s, 4, (sqlite3_int64)(lamport > INT64_MAX ? INT64_MAX : lamport));
  run(st, s);
}

static void put_state(ld_channel_store_t *st, const char *channel_id, int kind, const char *id,
                      uint64_t ord, const ld_buf_t *rec) {
  sqlite3_stmt *s = stmt(st, ST_PUT_STATE);
  if (s == NULL)
    return;
  st->counts.puts[kind]++;
  sqlite3_bind_text(s, 1, channel_id, -1, SQLITE_STATIC);
  sqlite3_bind_int(s, 2, kind);
  sqlite3_bind_text(s, 3, id, -1, SQLITE_STATIC);
  sqlite3_bind_int64(s, 4, (sqlite3_int64)(ord > INT64_MAX ? INT64_MAX : ord));
  sqlite3_bind_blob(s, 5, rec->data != NULL ? (const void *)rec->data : "", (int)rec->len,
                    SQLITE_STATIC);
  run(st, s);
}

/* The INCOMING rows' set key of a message: channel ‖ 0 ‖ message ID (in `buf`, `cap` bytes);
 * 0 when it does not fit. */
static size_t incoming_key(char *buf, size_t cap, const char *channel_id, const char *id,
                           size_t id_len) {
  size_t c = strlen(channel_id);
  if (c + 1 + id_len > cap)
    return 0;
  memcpy(buf, channel_id, c + 1);
  memcpy(buf + c + 1, id, id_len);
  return c + 1 + id_len;
}

/* Records that the file holds the INCOMING row of `id` (counted as an error when out of
 * memory: its deletion is then skipped and the row restored again, where the engine drops it as
 * a duplicate of the log). */
static void incoming_add(ld_channel_store_t *st, const char *channel_id, const char *id,
                         size_t id_len) {
  char key[2 * LD_SDS_MAX_ID_LEN + 2];
  size_t n = incoming_key(key, sizeof key, channel_id, id, id_len);
  if (n == 0 || ld_hashmap_put(st->incoming, key, n, st, NULL) != 0) {
    st->errors++;
    LD_WARN(TOPIC, "channel state: incoming row of %.*s not tracked", (int)id_len, id);
  }
}

/* Whether the file holds the INCOMING row of `id`; forgets it. */
static bool incoming_take(ld_channel_store_t *st, const char *channel_id, const char *id) {
  char key[2 * LD_SDS_MAX_ID_LEN + 2];
  size_t n = incoming_key(key, sizeof key, channel_id, id, strlen(id));
  return n == 0 || ld_hashmap_remove(st->incoming, key, n) != NULL;
}

static void record_failed(ld_channel_store_t *st) {
  st->errors++;
  LD_WARN(TOPIC, "channel state: %s", ld_strerror(LD_ERR_NOMEM));
}

void ld_channel_store_put_log(ld_channel_store_t *st, const char *channel_id, const char *id,
                              uint64_t lamport, const char *sender, const uint8_t *hint,
                              size_t hint_len) {
  ld_buf_t rec;
  ld_buf_init(&rec);
  if (ld_buf_varint(&rec, lamport) != 0 || ld_buf_lp(&rec, id, strlen(id)) != 0 ||
      ld_buf_lp(&rec, sender, strlen(sender)) != 0 || ld_buf_lp(&rec, hint, hint_len) != 0)
    record_failed(st);
  else
    put_state(st, channel_id, LD_CHANNEL_RECORD_LOG, id, lamport, &rec);
  ld_buf_clear(&rec);
}

void ld_channel_store_put_outgoing(ld_channel_store_t *st, const char *channel_id, const char *id,
                                   const char *request_id, const uint8_t *wire, size_t len) {
  ld_buf_t rec;
  ld_buf_init(&rec);
  if (ld_buf_lp(&rec, request_id, strlen(request_id)) != 0 || ld_buf_lp(&rec, wire, len) != 0)
    record_failed(st);
  else
    put_state(st, channel_id, LD_CHANNEL_RECORD_OUTGOING, id, 0, &rec);
  ld_buf_clear(&rec);
}

static void by_key(ld_channel_store_t *st, int which, const char *channel_id, int kind,
                   const char *id) {
  sqlite3_stmt *s = stmt(st, which);
  if (s == NULL)
    return;
  if (which == ST_DELETE)
    st->counts.deletes[kind]++;
  sqlite3_bind_text(s, 1, channel_id, -1, SQLITE_STATIC);
  sqlite3_bind_int(s, 2, kind);
  sqlite3_bind_text(s, 3, id, -1, SQLITE_STATIC);
  run(st, s);
}

void ld_channel_store_count_retransmission(ld_channel_store_t *st, const char *channel_id,
                                           const char *id) {
  by_key(st, ST_BUMP_ORD, channel_id, LD_CHANNEL_RECORD_OUTGOING, id);
}

void ld_channel_store_put_incoming(ld_channel_store_t *st, const char *channel_id, const char *id,
                                   const uint8_t *wire, size_t len, const uint8_t *hint,
                                   size_t hint_len) {
  ld_buf_t rec;
  ld_buf_init(&rec);
  if (ld_buf_lp(&rec, hint, hint_len) != 0 || ld_buf_lp(&rec, wire, len) != 0) {
    record_failed(st);
  } else {
    put_state(st, channel_id, LD_CHANNEL_RECORD_INCOMING, id, 0, &rec);
    incoming_add(st, channel_id, id, strlen(id));
  }
  ld_buf_clear(&rec);
}

void ld_channel_store_put_queued(ld_channel_store_t *st, const char *channel_id,
                                 const char *request_id, uint64_t ord, const uint8_t *payload,
                                 size_t len) {
  ld_buf_t rec = {.data = (uint8_t *)payload, .len = len};
  put_state(st, channel_id, LD_CHANNEL_RECORD_QUEUED, request_id, ord, &rec);
}

void ld_channel_store_delete(ld_channel_store_t *st, const char *channel_id,
                             ld_channel_record_kind_t kind, const char *id) {
  if (kind == LD_CHANNEL_RECORD_INCOMING && !incoming_take(st, channel_id, id))
    return; /* a message delivered without being buffered: no row */
  by_key(st, ST_DELETE, channel_id, (int)kind, id);
}

void ld_channel_store_trim_log(ld_channel_store_t *st, const char *channel_id, size_t keep) {
  sqlite3_stmt *s = stmt(st, ST_TRIM);
  if (s == NULL)
    return;
  sqlite3_bind_text(s, 1, channel_id, -1, SQLITE_STATIC);
  sqlite3_bind_int64(s, 2, (sqlite3_int64)keep);
  run(st, s);
}

/* ---- the loader ----------------------------------------------------------------------------- */

static int lp(ld_cursor_t *c, size_t max, const uint8_t **p, size_t *n) {
  return ld_cursor_lp_bytes(c, max, p, n);
}

static bool printable(const uint8_t *p, size_t n) {
  if (n == 0 || n > LD_CHANNEL_STORE_MAX_REQUEST_ID)
    return false;
  for (size_t i = 0; i < n; i++)
    if (p[i] < 0x21 || p[i] > 0x7e)
      return false;
  return true;
}

static int apply_log(ld_sds_t *sds, ld_cursor_t *c, char *why, size_t cap) {
  uint64_t lamport;
  const uint8_t *id, *sender, *hint;
  size_t id_len, sender_len, hint_len;
  if (ld_cursor_uvarint(c, &lamport) != 0 || lp(c, LD_SDS_MAX_ID_LEN, &id, &id_len) != 0 ||
      lp(c, LD_SDS_MAX_ID_LEN, &sender, &sender_len) != 0 ||
      lp(c, LD_SDS_MAX_HINT_LEN, &hint, &hint_len) != 0 || !ld_cursor_empty(c))
    return ld_error_fmt(why, cap, LD_ERR_MALFORMED, "malformed log record");
  int rc = ld_sds_restore_logged(sds, lamport, (const char *)id, id_len, (const char *)sender,
                                 sender_len, hint, hint_len);
  return rc != 0 ? ld_error_fmt(why, cap, rc, "log record refused: %s", ld_strerror(rc)) : 0;
}

static int apply_outgoing(ld_sds_t *sds, uint64_t now, ld_cursor_t *c, uint64_t ord,
                          ld_channel_restored_fn restored, void *ud, char *why, size_t cap) {
  /* (the request ID's checks are shared with QUEUED records: printable()) */
  const uint8_t *req, *wire;
  size_t req_len, wire_len;
  if (lp(c, LD_CHANNEL_STORE_MAX_REQUEST_ID, &req, &req_len) != 0 || !printable(req, req_len) ||
      lp(c, LD_SDS_MAX_WIRE_SIZE, &wire, &wire_len) != 0 || !ld_cursor_empty(c) || ord > UINT32_MAX)
    return ld_error_fmt(why, cap, LD_ERR_MALFORMED, "malformed outgoing record");
  char *id = NULL;
  int rc = ld_sds_restore_outgoing(sds, now, wire, wire_len, (uint32_t)ord, &id);
  if (rc != 0)
    return ld_error_fmt(why, cap, rc, "outgoing record refused: %s", ld_strerror(rc));
  char request_id[LD_CHANNEL_STORE_MAX_REQUEST_ID + 1];
  memcpy(request_id, req, req_len);
  request_id[req_len] = '\0';
  if (restored != NULL)
    restored(ud, id, request_id);
  free(id);
  return 0;
}

static int apply_incoming(ld_sds_t *sds, uint64_t now, ld_cursor_t *c, char *why, size_t cap) {
  const uint8_t *hint, *wire;
  size_t hint_len, wire_len;
  if (lp(c, LD_SDS_MAX_HINT_LEN, &hint, &hint_len) != 0 ||
      lp(c, LD_SDS_MAX_WIRE_SIZE, &wire, &wire_len) != 0 || !ld_cursor_empty(c))
    return ld_error_fmt(why, cap, LD_ERR_MALFORMED, "malformed incoming record");
  char detail[160] = "";
  int rc = ld_sds_receive(sds, now, wire, wire_len, hint_len > 0 ? hint : NULL, hint_len, NULL,
                          detail, sizeof detail);
  return rc != 0 ? ld_error_fmt(why, cap, rc, "incoming record refused: %s", detail) : 0;
}

/* A queued send: `key` is its request ID. */
static int apply_queued(const uint8_t *key, size_t key_len, uint64_t ord, const uint8_t *rec,
                        size_t len, ld_channel_queued_fn queued, void *ud, char *why, size_t cap) {
  if (!printable(key, key_len) || len == 0 || len > LD_CHANNEL_STORE_MAX_QUEUED)
    return ld_error_fmt(why, cap, LD_ERR_MALFORMED, "malformed queued record");
  char request_id[LD_CHANNEL_STORE_MAX_REQUEST_ID + 1];
  memcpy(request_id, key, key_len);
  request_id[key_len] = '\0';
  if (queued != NULL)
    queued(ud, request_id, ord, rec, len);
  return 0;
}

int ld_channel_record_apply(ld_sds_t *sds, uint64_t now_ms, int kind, uint64_t ord,
                            const uint8_t *rec, size_t len, const ld_channel_restore_fns_t *fns,
                            void *user_data, char *why, size_t why_cap) {
  return ld_channel_record_apply_keyed(sds, now_ms, kind, NULL, 0, ord, rec, len, fns, user_data,
                                       why, why_cap);
}

int ld_channel_record_apply_keyed(ld_sds_t *sds, uint64_t now_ms, int kind, const uint8_t *key,
                                  size_t key_len, uint64_t ord, const uint8_t *rec, size_t len,
                                  const ld_channel_restore_fns_t *fns, void *user_data, char *why,
                                  size_t why_cap) {
  ld_cursor_t c;
  ld_cursor_init(&c, rec, len);
  switch (kind) {
  case LD_CHANNEL_RECORD_LOG:
    return apply_log(sds, &c, why, why_cap);
  case LD_CHANNEL_RECORD_OUTGOING:
    return apply_outgoing(sds, now_ms, &c, ord, fns != NULL ? fns->outgoing : NULL, user_data, why,
                          why_cap);
  case LD_CHANNEL_RECORD_INCOMING:
    return apply_incoming(sds, now_ms, &c, why, why_cap);
  case LD_CHANNEL_RECORD_QUEUED:
    return apply_queued(key, key_len, ord, rec, len, fns != NULL ? fns->queued : NULL, user_data,
                        why, why_cap);
  default:
    return ld_error_fmt(why, why_cap, LD_ERR_MALFORMED, "unknown record kind %d", kind);
  }
}

static void drop_channel(ld_channel_store_t *st, const char *channel_id) {
  static const char *const sql[2] = {"DELETE FROM state WHERE channel = ?1",
                                     "DELETE FROM channel WHERE id = ?1"};
  for (int i = 0; i < 2; i++) {
    sqlite3_stmt *s = NULL;
    if (sqlite3_prepare_v2(st->db, sql[i], -1, &s, NULL) == SQLITE_OK) {
      sqlite3_bind_text(s, 1, channel_id, -1, SQLITE_STATIC);
      if (sqlite3_step(s) != SQLITE_DONE)
        st->errors++;
    }
    sqlite3_finalize(s);
  }
}

/* The stored sender and Lamport clock of a channel: 1, 0 when unknown, or LD_ERR_DB. */
static int load_channel_row(ld_channel_store_t *st, const char *channel_id, char *sender,
                            size_t cap, uint64_t *lamport) {
  sqlite3_stmt *s = NULL;
  int rc =
      sqlite3_prepare_v2(st->db, "SELECT sender, lamport FROM channel WHERE id = ?1", -1, &s, NULL);
  int out = LD_ERR_DB;
  if (rc == SQLITE_OK) {
    sqlite3_bind_text(s, 1, channel_id, -1, SQLITE_STATIC);
    rc = sqlite3_step(s);
    if (rc == SQLITE_ROW) {
      const char *t = (const char *)sqlite3_column_text(s, 0);
      snprintf(sender, cap, "%s", t != NULL ? t : "");
      sqlite3_int64 l = sqlite3_column_int64(s, 1);
      *lamport = l > 0 ? (uint64_t)l : 0;
      out = 1;
    } else if (rc == SQLITE_DONE) {
      out = 0;
    }
  }
  sqlite3_finalize(s);
  return out;
}

int ld_channel_store_load(ld_channel_store_t *st, const char *channel_id, const char *sender,
                          ld_sds_t *sds, uint64_t now_ms, const ld_channel_restore_fns_t *fns,
                          void *user_data, char *why, size_t why_cap) {
  ld_channel_store_commit(st);
  char stored_sender[LD_SDS_MAX_ID_LEN + 1];
  uint64_t lamport = 0;
  int rc = load_channel_row(st, channel_id, stored_sender, sizeof stored_sender, &lamport);
  if (rc < 0)
    return ld_error_fmt(why, why_cap, rc, "corrupted state of channel %s: %s", channel_id,
                        sqlite3_errmsg(st->db));
  if (rc == 0)
    return 0;
  if (strcmp(stored_sender, sender) != 0) {
    LD_WARN(TOPIC, "channel %s: stored state of sender %s discarded (now %s)", channel_id,
            stored_sender, sender);
    drop_channel(st, channel_id);
    return 0;
  }
  ld_sds_restore_lamport(sds, lamport);
  sqlite3_stmt *s = NULL;
  rc = sqlite3_prepare_v2(
      st->db, "SELECT kind, ord, rec, key FROM state WHERE channel = ?1 ORDER BY kind, ord", -1, &s,
      NULL);
  if (rc != SQLITE_OK)
    return ld_error_fmt(why, why_cap, LD_ERR_DB, "corrupted state of channel %s: %s", channel_id,
                        sqlite3_errmsg(st->db));
  sqlite3_bind_text(s, 1, channel_id, -1, SQLITE_STATIC);
  int out = 1;
  while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
    char detail[192] = "";
    int kind = sqlite3_column_int(s, 0);
    sqlite3_int64 ord = sqlite3_column_int64(s, 1);
    const uint8_t *rec = sqlite3_column_blob(s, 2);
    size_t len = (size_t)sqlite3_column_bytes(s, 2);
    const uint8_t *key = sqlite3_column_text(s, 3);
    size_t key_len = (size_t)sqlite3_column_bytes(s, 3);
    if (kind == LD_CHANNEL_RECORD_INCOMING)
      incoming_add(st, channel_id, (const char *)key, key_len);
    int arc = ld_channel_record_apply_keyed(sds, now_ms, kind, key, key_len,
                                            ord < 0 ? UINT64_MAX : (uint64_t)ord, rec, len, fns,
                                            user_data, detail, sizeof detail);
    if (arc != 0) {
      out =
          ld_error_fmt(why, why_cap, arc, "corrupted state of channel %s: %s", channel_id, detail);
      break;
    }
  }
  if (out == 1 && rc != SQLITE_DONE)
    out = ld_error_fmt(why, why_cap, LD_ERR_DB, "corrupted state of channel %s: %s", channel_id,
                       sqlite3_errmsg(st->db));
  sqlite3_finalize(s);
  return out;
}
