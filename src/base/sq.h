/* libsqlite3 loaded at run time. The library (about 0.3 MiB of resident memory once its
 * relocations are done) is mapped only when a SQLite database is first opened (a sqlite://
 * archive, the peer store of --peer-persistence), so a node without one never pays for it.
 *
 * <sqlite3.h> still supplies the types and constants. A file that uses SQLite includes this header
 * after sqlite3.h; from then on each sqlite3_* function name stands for the member of the table
 * ld_sq_load() filled, with exactly the signature of the function it is named after. */
#ifndef LD_BASE_SQ_H
#define LD_BASE_SQ_H

#include <sqlite3.h>

/* The runtime SONAME tried first, then the development name. */
#define LD_SQ_SONAME "libsqlite3.so.0"
#define LD_SQ_SONAME_FALLBACK "libsqlite3.so"

typedef struct ld_sq_api {
  __typeof__(sqlite3_bind_blob64) *bind_blob64;
  __typeof__(sqlite3_bind_int64) *bind_int64;
  __typeof__(sqlite3_bind_null) *bind_null;
  __typeof__(sqlite3_busy_timeout) *busy_timeout;
  __typeof__(sqlite3_changes) *changes;
  __typeof__(sqlite3_changes64) *changes64;
  __typeof__(sqlite3_clear_bindings) *clear_bindings;
  __typeof__(sqlite3_close) *close;
  __typeof__(sqlite3_column_blob) *column_blob;
  __typeof__(sqlite3_column_bytes) *column_bytes;
  __typeof__(sqlite3_column_int) *column_int;
  __typeof__(sqlite3_column_int64) *column_int64;
  __typeof__(sqlite3_column_text) *column_text;
  __typeof__(sqlite3_errmsg) *errmsg;
  __typeof__(sqlite3_exec) *exec;
  __typeof__(sqlite3_finalize) *finalize;
  __typeof__(sqlite3_last_insert_rowid) *last_insert_rowid;
  __typeof__(sqlite3_open_v2) *open_v2;
  __typeof__(sqlite3_prepare_v2) *prepare_v2;
  __typeof__(sqlite3_prepare_v3) *prepare_v3;
  __typeof__(sqlite3_reset) *reset;
  __typeof__(sqlite3_step) *step;
  __typeof__(sqlite3_wal_checkpoint_v2) *wal_checkpoint_v2;
  __typeof__(sqlite3_bind_blob) *bind_blob;
  __typeof__(sqlite3_bind_int) *bind_int;
  __typeof__(sqlite3_bind_text) *bind_text;
  __typeof__(sqlite3_column_type) *column_type;
} ld_sq_api_t;

/* The table, valid once ld_sq_load returned 0 (never unloaded). */
extern ld_sq_api_t ld_sq_api;

/* Loads libsqlite3 and resolves every member of the table, once per process (later calls return
 * the outcome of the first). Thread-safe. Returns 0, or LD_ERR_IO when the library cannot be
 * loaded or lacks a function (the first failure is logged with the library's name). */
int ld_sq_load(void);

#ifndef LD_SQ_NO_REDIRECT
#define sqlite3_bind_blob64 (ld_sq_api.bind_blob64)
#define sqlite3_bind_int64 (ld_sq_api.bind_int64)
#define sqlite3_bind_null (ld_sq_api.bind_null)
#define sqlite3_busy_timeout (ld_sq_api.busy_timeout)
#define sqlite3_changes (ld_sq_api.changes)
#define sqlite3_changes64 (ld_sq_api.changes64)
#define sqlite3_clear_bindings (ld_sq_api.clear_bindings)
#define sqlite3_close (ld_sq_api.close)
#define sqlite3_column_blob (ld_sq_api.column_blob)
#define sqlite3_column_bytes (ld_sq_api.column_bytes)
#define sqlite3_column_int (ld_sq_api.column_int)
#define sqlite3_column_int64 (ld_sq_api.column_int64)
#define sqlite3_column_text (ld_sq_api.column_text)
#define sqlite3_errmsg (ld_sq_api.errmsg)
#define sqlite3_exec (ld_sq_api.exec)
#define sqlite3_finalize (ld_sq_api.finalize)
#define sqlite3_last_insert_rowid (ld_sq_api.last_insert_rowid)
#define sqlite3_open_v2 (ld_sq_api.open_v2)
#define sqlite3_prepare_v2 (ld_sq_api.prepare_v2)
#define sqlite3_prepare_v3 (ld_sq_api.prepare_v3)
#define sqlite3_reset (ld_sq_api.reset)
#define sqlite3_step (ld_sq_api.step)
#define sqlite3_wal_checkpoint_v2 (ld_sq_api.wal_checkpoint_v2)
#define sqlite3_bind_blob (ld_sq_api.bind_blob)
#define sqlite3_bind_int (ld_sq_api.bind_int)
#define sqlite3_bind_text (ld_sq_api.bind_text)
#define sqlite3_column_type (ld_sq_api.column_type)
#endif

#endif
