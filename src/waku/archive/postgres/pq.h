/* libpq loaded at run time. The library and its dependencies (Kerberos, LDAP, GnuTLS: several
 * MiB of resident memory) are mapped only when a postgres:// archive is opened, so a node without
 * one never pays for them.
 *
 * <libpq-fe.h> still supplies the types and constants. The driver's files include this header
 * after libpq-fe.h; from then on each PQ* function name stands for the member of the table
 * ld_pq_load() filled, with exactly the signature of the libpq function it is named after. */
#ifndef LD_WAKU_ARCHIVE_POSTGRES_PQ_H
#define LD_WAKU_ARCHIVE_POSTGRES_PQ_H

#include <libpq-fe.h>

/* The runtime SONAME tried first, then the development name. */
#define LD_PQ_SONAME "libpq.so.5"
#define LD_PQ_SONAME_FALLBACK "libpq.so"

typedef struct ld_pq_api {
  __typeof__(PQclear) *clear;
  __typeof__(PQcmdTuples) *cmdTuples;
  __typeof__(PQconnectPoll) *connectPoll;
  __typeof__(PQconnectStart) *connectStart;
  __typeof__(PQconninfoFree) *conninfoFree;
  __typeof__(PQconninfoParse) *conninfoParse;
  __typeof__(PQconsumeInput) *consumeInput;
  __typeof__(PQerrorMessage) *errorMessage;
  __typeof__(PQescapeIdentifier) *escapeIdentifier;
  __typeof__(PQfinish) *finish;
  __typeof__(PQflush) *flush;
  __typeof__(PQfreemem) *freemem;
  __typeof__(PQgetResult) *getResult;
  __typeof__(PQgetisnull) *getisnull;
  __typeof__(PQgetlength) *getlength;
  __typeof__(PQgetvalue) *getvalue;
  __typeof__(PQisBusy) *isBusy;
  __typeof__(PQntuples) *ntuples;
  __typeof__(PQresultErrorField) *resultErrorField;
  __typeof__(PQresultErrorMessage) *resultErrorMessage;
  __typeof__(PQresultStatus) *resultStatus;
  __typeof__(PQsendPrepare) *sendPrepare;
  __typeof__(PQsendQuery) *sendQuery;
  __typeof__(PQsendQueryParams) *sendQueryParams;
  __typeof__(PQsendQueryPrepared) *sendQueryPrepared;
  __typeof__(PQsetNoticeProcessor) *setNoticeProcessor;
  __typeof__(PQsetnonblocking) *setnonblocking;
  __typeof__(PQsocket) *socket;
  __typeof__(PQstatus) *status;
  __typeof__(PQtransactionStatus) *transactionStatus;
} ld_pq_api_t;

/* The table, valid once ld_pq_load returned 0 (never unloaded). */
extern ld_pq_api_t ld_pq_api;

/* Loads libpq and resolves every member of the table, once per process (later calls return the
 * outcome of the first). Thread-safe. Returns 0, or LD_ERR_IO when the library cannot be loaded
 * or lacks a function (the first failure is logged with the library's name). */
int ld_pq_load(void);

#ifndef LD_PQ_NO_REDIRECT
#define PQclear (ld_pq_api.clear)
#define PQcmdTuples (ld_pq_api.cmdTuples)
#define PQconnectPoll (ld_pq_api.connectPoll)
#define PQconnectStart (ld_pq_api.connectStart)
#define PQconninfoFree (ld_pq_api.conninfoFree)
#define PQconninfoParse (ld_pq_api.conninfoParse)
#define PQconsumeInput (ld_pq_api.consumeInput)
#define PQerrorMessage (ld_pq_api.errorMessage)
#define PQescapeIdentifier (ld_pq_api.escapeIdentifier)
#define PQfinish (ld_pq_api.finish)
#define PQflush (ld_pq_api.flush)
#define PQfreemem (ld_pq_api.freemem)
#define PQgetResult (ld_pq_api.getResult)
#define PQgetisnull (ld_pq_api.getisnull)
#define PQgetlength (ld_pq_api.getlength)
#define PQgetvalue (ld_pq_api.getvalue)
#define PQisBusy (ld_pq_api.isBusy)
#define PQntuples (ld_pq_api.ntuples)
#define PQresultErrorField (ld_pq_api.resultErrorField)
#define PQresultErrorMessage (ld_pq_api.resultErrorMessage)
#define PQresultStatus (ld_pq_api.resultStatus)
#define PQsendPrepare (ld_pq_api.sendPrepare)
#define PQsendQuery (ld_pq_api.sendQuery)
#define PQsendQueryParams (ld_pq_api.sendQueryParams)
#define PQsendQueryPrepared (ld_pq_api.sendQueryPrepared)
#define PQsetNoticeProcessor (ld_pq_api.setNoticeProcessor)
#define PQsetnonblocking (ld_pq_api.setnonblocking)
#define PQsocket (ld_pq_api.socket)
#define PQstatus (ld_pq_api.status)
#define PQtransactionStatus (ld_pq_api.transactionStatus)
#endif

#endif
