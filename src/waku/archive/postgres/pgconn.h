/* libpq with deadlines: connecting and running one statement never wait past a monotonic
 * deadline (ld_now_ms()), whatever the server does. For the PostgreSQL driver's worker threads:
 * every function blocks its calling thread (never the loop) until done or the deadline. A
 * connection is used by one thread at a time. */
#ifndef LD_WAKU_ARCHIVE_POSTGRES_PGCONN_H
#define LD_WAKU_ARCHIVE_POSTGRES_PGCONN_H

#include <stddef.h>
#include <stdint.h>

#include "waku/archive/postgres/pq.h"

#include "base/error.h"

/* SQLSTATE of "no partition of relation … found for row" (check_violation). */
#define LD_PG_SQLSTATE_CHECK_VIOLATION "23514"

/* The outcome of a statement. On failure `why` holds the server's or libpq's message and
 * `sqlstate` the SQLSTATE ("" when none). */
typedef struct ld_pg_status {
  char why[160];
  char sqlstate[6];
} ld_pg_status_t;

/* Connects to `conninfo` (a "postgres://" URI or key=value string) before `deadline_ms`, then
 * sets the session up (UTF8, statement_timeout of `statement_timeout_ms`, quiet notices).
 * Returns 0 with *out set, LD_ERR_TIMEOUT, or LD_ERR_DB (refused, authentication, …). */
int ld_pg_connect(const char *conninfo, uint64_t deadline_ms, uint32_t statement_timeout_ms,
                  PGconn **out, ld_pg_status_t *st);

/* Runs `sql` with text parameters (values[i] NULL = SQL NULL) and waits for its result until
 * `deadline_ms`. Returns 0 with *res (PQclear it; NULL allowed when the caller wants no
 * result), LD_ERR_DB (the server refused the statement; the connection is still usable), or
 * LD_ERR_TIMEOUT / LD_ERR_IO (the connection is lost or in an unknown state: PQfinish it). */
int ld_pg_exec(PGconn *c, const char *sql, int n_params, const char *const *values,
               uint64_t deadline_ms, PGresult **res, ld_pg_status_t *st);

/* ld_pg_exec through a statement prepared on this connection, named after a hash of `sql`: the
 * first call on a connection prepares it (the server reports it unknown, SQLSTATE 26000), later
 * calls skip parsing and, once the server settles on a generic plan, planning. For statements
 * whose text takes a bounded number of shapes; never inside a transaction (the first call's
 * error would abort it). Same results and errors as ld_pg_exec. */
int ld_pg_exec_cached(PGconn *c, const char *sql, int n_params, const char *const *values,
                      uint64_t deadline_ms, PGresult **res, ld_pg_status_t *st);

/* ld_pg_exec without parameters or result. */
int ld_pg_run(PGconn *c, const char *sql, uint64_t deadline_ms, ld_pg_status_t *st);

/* True when a failure left the connection unusable (timed out mid-statement, or broken). */
static inline int ld_pg_conn_lost(int err) {
  return err == LD_ERR_TIMEOUT || err == LD_ERR_IO;
}

#endif
