#define LD_PQ_NO_REDIRECT
#include "waku/archive/postgres/pq.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stddef.h>

#include "base/error.h"
#include "base/log.h"

#define LOG_TOPIC "archive"

ld_pq_api_t ld_pq_api;
static pthread_once_t g_once = PTHREAD_ONCE_INIT;
static int g_status = LD_ERR_IO;

#define RESOLVE(lib, field, name)                                                                  \
  ((ld_pq_api.field = (__typeof__(ld_pq_api.field))dlsym((lib), (name))) != NULL                   \
       ? 0                                                                                         \
       : resolve_failed(name))

static int resolve_failed(const char *name) {
  const char *why = dlerror();
  ld_log(LD_LOG_ERROR, LOG_TOPIC, "%s lacks %s: %s", LD_PQ_SONAME, name, why ? why : "?");
  return LD_ERR_IO;
}

static void *open_library(void) {
  void *lib = dlopen(LD_PQ_SONAME, RTLD_NOW | RTLD_LOCAL);
  if (lib == NULL)
    lib = dlopen(LD_PQ_SONAME_FALLBACK, RTLD_NOW | RTLD_LOCAL);
  if (lib == NULL) {
    const char *why = dlerror();
    ld_log(LD_LOG_ERROR, LOG_TOPIC, "cannot load %s (nor %s): %s; no PostgreSQL archive",
           LD_PQ_SONAME, LD_PQ_SONAME_FALLBACK, why ? why : "?");
  }
  return lib;
}

static int resolve_all(void *lib) {
  int rc = 0;
  rc = rc ? rc : RESOLVE(lib, clear, "PQclear");
  rc = rc ? rc : RESOLVE(lib, cmdTuples, "PQcmdTuples");
  rc = rc ? rc : RESOLVE(lib, connectPoll, "PQconnectPoll");
  rc = rc ? rc : RESOLVE(lib, connectStart, "PQconnectStart");
  rc = rc ? rc : RESOLVE(lib, conninfoFree, "PQconninfoFree");
  rc = rc ? rc : RESOLVE(lib, conninfoParse, "PQconninfoParse");
  rc = rc ? rc : RESOLVE(lib, consumeInput, "PQconsumeInput");
  rc = rc ? rc : RESOLVE(lib, errorMessage, "PQerrorMessage");
  rc = rc ? rc : RESOLVE(lib, escapeIdentifier, "PQescapeIdentifier");
  rc = rc ? rc : RESOLVE(lib, finish, "PQfinish");
  rc = rc ? rc : RESOLVE(lib, flush, "PQflush");
  rc = rc ? rc : RESOLVE(lib, freemem, "PQfreemem");
  rc = rc ? rc : RESOLVE(lib, getResult, "PQgetResult");
  rc = rc ? rc : RESOLVE(lib, getisnull, "PQgetisnull");
  rc = rc ? rc : RESOLVE(lib, getlength, "PQgetlength");
  rc = rc ? rc : RESOLVE(lib, getvalue, "PQgetvalue");
  rc = rc ? rc : RESOLVE(lib, isBusy, "PQisBusy");
  rc = rc ? rc : RESOLVE(lib, ntuples, "PQntuples");
  rc = rc ? rc : RESOLVE(lib, resultErrorField, "PQresultErrorField");
  rc = rc ? rc : RESOLVE(lib, resultErrorMessage, "PQresultErrorMessage");
  rc = rc ? rc : RESOLVE(lib, resultStatus, "PQresultStatus");
  rc = rc ? rc : RESOLVE(lib, sendPrepare, "PQsendPrepare");
  rc = rc ? rc : RESOLVE(lib, sendQuery, "PQsendQuery");
  rc = rc ? rc : RESOLVE(lib, sendQueryParams, "PQsendQueryParams");
  rc = rc ? rc : RESOLVE(lib, sendQueryPrepared, "PQsendQueryPrepared");
  rc = rc ? rc : RESOLVE(lib, setNoticeProcessor, "PQsetNoticeProcessor");
  rc = rc ? rc : RESOLVE(lib, setnonblocking, "PQsetnonblocking");
  rc = rc ? rc : RESOLVE(lib, socket, "PQsocket");
  rc = rc ? rc : RESOLVE(lib, status, "PQstatus");
  rc = rc ? rc : RESOLVE(lib, transactionStatus, "PQtransactionStatus");
  return rc;
}

static void load_once(void) {
  void *lib = open_library();
  if (lib == NULL)
    return;
  if (resolve_all(lib) != 0) {
    dlclose(lib);
    return;
  }
  g_status = 0;
}

int ld_pq_load(void) {
  pthread_once(&g_once, load_once);
  return g_status;
}
