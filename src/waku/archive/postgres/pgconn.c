#include "waku/archive/postgres/pgconn.h"

#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>

#include "base/clock.h"
#include "base/log.h"

#define LOG_TOPIC "archive"
/* How often the server checks, during a long statement, that we are still there (PG 14+). */
#define PG_CLIENT_CHECK_MS 1000

/* One line: libpq's multi-line messages are joined with spaces. */
static void set_why(ld_pg_status_t *st, const char *prefix, const char *msg) {
  snprintf(st->why, sizeof st->why, "%s%s", prefix, msg != NULL ? msg : "");
  size_t w = 0;
  for (size_t r = 0; st->why[r] != 0; r++) {
    char ch = st->why[r] == '\n' || st->why[r] == '\t' ? ' ' : st->why[r];
    if (ch != ' ' || (w > 0 && st->why[w - 1] != ' '))
      st->why[w++] = ch;
  }
  while (w > 0 && st->why[w - 1] == ' ')
    w--;
  st->why[w] = 0;
}

/* Waits until `fd` is ready for `events` or the deadline passes. */
static int wait_fd(int fd, short events, uint64_t deadline_ms) {
  if (fd < 0)
    return LD_ERR_IO;
  for (;;) {
    uint64_t now = ld_now_ms();
    if (now >= deadline_ms)
      return LD_ERR_TIMEOUT;
    uint64_t left = deadline_ms - now;
    struct pollfd p = {.fd = fd, .events = events};
    int rc = poll(&p, 1, left > INT_MAX ? INT_MAX : (int)left);
    if (rc > 0)
      return 0;
    if (rc == 0)
      return LD_ERR_TIMEOUT;
    if (errno != EINTR)
      return LD_ERR_IO;
  }
}

static void quiet_notices(void *arg, const char *message) {
  (void)arg;
  LD_DEBUG(LOG_TOPIC, "postgres notice: %s", message);
}

static int setup_session(PGconn *c, uint64_t deadline_ms, uint32_t statement_timeout_ms,
                         ld_pg_status_t *st) {
  char sql[128];
  snprintf(sql, sizeof sql, "SET client_encoding = 'UTF8'; SET statement_timeout = %u",
           statement_timeout_ms);
  int rc = ld_pg_run(c, sql, deadline_ms, st);
  if (rc != 0)
    return rc;
  snprintf(sql, sizeof sql, "SET client_connection_check_interval = %d", PG_CLIENT_CHECK_MS);
  rc = ld_pg_run(c, sql, deadline_ms, st);
  return ld_pg_conn_lost(rc) ? rc : 0; /* older servers lack the setting */
}

int ld_pg_connect(const char *conninfo, uint64_t deadline_ms, uint32_t statement_timeout_ms,
                  PGconn **out, ld_pg_status_t *st) {
  *out = NULL;
  PGconn *c = PQconnectStart(conninfo);
  if (c == NULL) {
    set_why(st, "", "out of memory");
    return LD_ERR_NOMEM;
  }
  PostgresPollingStatusType ps = PGRES_POLLING_WRITING;
  int rc = PQstatus(c) == CONNECTION_BAD ? LD_ERR_DB : 0;
  while (rc == 0 && ps != PGRES_POLLING_OK) {
    if (ps == PGRES_POLLING_FAILED) {
      rc = LD_ERR_DB;
      break;
    }
    rc = wait_fd(PQsocket(c), ps == PGRES_POLLING_READING ? POLLIN : POLLOUT, deadline_ms);
    if (rc == 0)
      ps = PQconnectPoll(c);
  }
  if (rc == LD_ERR_TIMEOUT)
    set_why(st, "", "connecting to the server timed out");
  else if (rc != 0)
    set_why(st, "connection failed: ", PQerrorMessage(c));
  if (rc == 0 && PQsetnonblocking(c, 1) != 0) {
    set_why(st, "", "cannot make the connection non-blocking");
    rc = LD_ERR_DB;
  }
  if (rc == 0) {
    PQsetNoticeProcessor(c, quiet_notices, NULL);
    rc = setup_session(c, deadline_ms, statement_timeout_ms, st);
  }
  if (rc != 0) {
    PQfinish(c);
    return rc == LD_ERR_TIMEOUT ? rc : LD_ERR_DB;
  }
  *out = c;
  return 0;
}

/* Sends the queued output, reading meanwhile so the server never blocks on us. */
static int flush_out(PGconn *c, uint64_t deadline_ms) {
  int r;
  while ((r = PQflush(c)) == 1) {
    int rc = wait_fd(PQsocket(c), POLLIN | POLLOUT, deadline_ms);
    if (rc != 0)
      return rc;
    if (!PQconsumeInput(c))
      return LD_ERR_IO;
  }
  return r == 0 ? 0 : LD_ERR_IO;
}

static void note_error(PGresult *r, ld_pg_status_t *st) {
  const char *msg = PQresultErrorField(r, PG_DIAG_MESSAGE_PRIMARY);
  set_why(st, "", msg != NULL ? msg : PQresultErrorMessage(r));
  const char *state = PQresultErrorField(r, PG_DIAG_SQLSTATE);
  snprintf(st->sqlstate, sizeof st->sqlstate, "%s", state != NULL ? state : "");
}

/* Collects the results of the statement sent last; keeps the last one. */
static int await_result(PGconn *c, uint64_t deadline_ms, PGresult **out, ld_pg_status_t *st) {
  int rc = flush_out(c, deadline_ms), err = 0;
  PGresult *keep = NULL;
  while (rc == 0) {
    while (rc == 0 && PQisBusy(c)) {
      rc = wait_fd(PQsocket(c), POLLIN, deadline_ms);
      if (rc == 0 && !PQconsumeInput(c))
        rc = LD_ERR_IO;
    }
    if (rc != 0)
      break;
    PGresult *r = PQgetResult(c);
    if (r == NULL)
      break;
    ExecStatusType s = PQresultStatus(r);
    if ((s == PGRES_FATAL_ERROR || s == PGRES_BAD_RESPONSE) && err == 0) {
      err = LD_ERR_DB;
      note_error(r, st);
    }
    PQclear(keep);
    keep = r;
  }
  if (rc == 0 && PQstatus(c) != CONNECTION_OK)
    rc = LD_ERR_IO;
  if (rc == LD_ERR_TIMEOUT)
    set_why(st, "", "the server did not answer in time");
  else if (rc != 0)
    set_why(st, "connection lost: ", PQerrorMessage(c));
  if (rc == 0)
    rc = err;
  if (rc != 0 || out == NULL)
    PQclear(keep);
  else
    *out = keep;
  return rc;
}

int ld_pg_exec(PGconn *c, const char *sql, int n_params, const char *const *values,
               uint64_t deadline_ms, PGresult **res, ld_pg_status_t *st) {
  if (res != NULL)
    *res = NULL;
  st->sqlstate[0] = 0;
  if (!PQsendQueryParams(c, sql, n_params, NULL, values, NULL, NULL, 0)) {
    set_why(st, "cannot send: ", PQerrorMessage(c));
    return LD_ERR_IO;
  }
  return await_result(c, deadline_ms, res, st);
}

/* SQLSTATE of "prepared statement … does not exist". */
#define SQLSTATE_NO_STATEMENT "26000"

static void statement_name(const char *sql, char out[24]) {
  uint64_t h = 14695981039346656037ull;
  for (const unsigned char *p = (const unsigned char *)sql; *p != 0; p++)
    h = (h ^ *p) * 1099511628211ull;
  snprintf(out, 24, "ld_%016llx", (unsigned long long)h);
}

static int exec_prepared(PGconn *c, const char *name, int n_params, const char *const *values,
                         uint64_t deadline_ms, PGresult **res, ld_pg_status_t *st) {
  if (res != NULL)
    *res = NULL;
  st->sqlstate[0] = 0;
  if (!PQsendQueryPrepared(c, name, n_params, values, NULL, NULL, 0)) {
    set_why(st, "cannot send: ", PQerrorMessage(c));
    return LD_ERR_IO;
  }
  return await_result(c, deadline_ms, res, st);
}

int ld_pg_exec_cached(PGconn *c, const char *sql, int n_params, const char *const *values,
                      uint64_t deadline_ms, PGresult **res, ld_pg_status_t *st) {
  char name[24];
  statement_name(sql, name);
  int rc = exec_prepared(c, name, n_params, values, deadline_ms, res, st);
  if (rc != LD_ERR_DB || strcmp(st->sqlstate, SQLSTATE_NO_STATEMENT) != 0)
    return rc;
  st->sqlstate[0] = 0;
  if (!PQsendPrepare(c, name, sql, n_params, NULL)) {
    set_why(st, "cannot send: ", PQerrorMessage(c));
    return LD_ERR_IO;
  }
  rc = await_result(c, deadline_ms, NULL, st);
  return rc == 0 ? exec_prepared(c, name, n_params, values, deadline_ms, res, st) : rc;
}

int ld_pg_run(PGconn *c, const char *sql, uint64_t deadline_ms, ld_pg_status_t *st) {
  st->sqlstate[0] = 0;
  if (!PQsendQuery(c, sql)) {
    set_why(st, "cannot send: ", PQerrorMessage(c));
    return LD_ERR_IO;
  }
  return await_result(c, deadline_ms, NULL, st);
}
