#define LD_PQ_NO_REDIRECT
#include "waku/archive/postgres/pq.h"

#include <pthread.h>
#include <stddef.h>

#include "base/dynlib.h"
#include "base/error.h"

#define LOG_TOPIC "archive"

ld_pq_api_t ld_pq_api;
static pthread_once_t g_once = PTHREAD_ONCE_INIT;
static int g_status = LD_ERR_IO;

#define SYM(field, name)                                                                           \
  { name, (void **)&ld_pq_api.field }

static const ld_dynlib_sym_t SYMS[] = {
    SYM(clear, "PQclear"),
    SYM(cmdTuples, "PQcmdTuples"),
    SYM(connectPoll, "PQconnectPoll"),
    SYM(connectStart, "PQconnectStart"),
    SYM(conninfoFree, "PQconninfoFree"),
    SYM(conninfoParse, "PQconninfoParse"),
    SYM(consumeInput, "PQconsumeInput"),
    SYM(errorMessage, "PQerrorMessage"),
    SYM(escapeIdentifier, "PQescapeIdentifier"),
    SYM(finish, "PQfinish"),
    SYM(flush, "PQflush"),
    SYM(freemem, "PQfreemem"),
    SYM(getResult, "PQgetResult"),
    SYM(getisnull, "PQgetisnull"),
    SYM(getlength, "PQgetlength"),
    SYM(getvalue, "PQgetvalue"),
    SYM(isBusy, "PQisBusy"),
    SYM(ntuples, "PQntuples"),
    SYM(resultErrorField, "PQresultErrorField"),
    SYM(resultErrorMessage, "PQresultErrorMessage"),
    SYM(resultStatus, "PQresultStatus"),
    SYM(sendPrepare, "PQsendPrepare"),
    SYM(sendQuery, "PQsendQuery"),
    SYM(sendQueryParams, "PQsendQueryParams"),
    SYM(sendQueryPrepared, "PQsendQueryPrepared"),
    SYM(setNoticeProcessor, "PQsetNoticeProcessor"),
    SYM(setnonblocking, "PQsetnonblocking"),
    SYM(socket, "PQsocket"),
    SYM(status, "PQstatus"),
    SYM(transactionStatus, "PQtransactionStatus"),
};

static void load_once(void) {
  g_status = ld_dynlib_load(LD_PQ_SONAME, LD_PQ_SONAME_FALLBACK, SYMS, sizeof SYMS / sizeof SYMS[0],
                            LOG_TOPIC, "no PostgreSQL archive");
}

int ld_pq_load(void) {
  pthread_once(&g_once, load_once);
  return g_status;
}
