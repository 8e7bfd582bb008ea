#define LD_SQ_NO_REDIRECT
#include "base/sq.h"

#include <pthread.h>
#include <stddef.h>

#include "base/dynlib.h"
#include "base/error.h"

#define LOG_TOPIC "sqlite"

ld_sq_api_t ld_sq_api;
static pthread_once_t g_once = PTHREAD_ONCE_INIT;
static int g_status = LD_ERR_IO;

#define SYM(field)                                                                                 \
  { "sqlite3_" #field, (void **)&ld_sq_api.field }

static const ld_dynlib_sym_t SYMS[] = {
    SYM(bind_blob64),
    SYM(bind_int64),
    SYM(bind_null),
    SYM(busy_timeout),
    SYM(changes),
    SYM(changes64),
    SYM(clear_bindings),
    SYM(close),
    SYM(column_blob),
    SYM(column_bytes),
    SYM(column_int),
    SYM(column_int64),
    SYM(column_text),
    SYM(errmsg),
    SYM(exec),
    SYM(finalize),
    SYM(last_insert_rowid),
    SYM(open_v2),
    SYM(prepare_v2),
    SYM(prepare_v3),
    SYM(reset),
    SYM(step),
    SYM(wal_checkpoint_v2),
    SYM(column_type),
    SYM(bind_text),
    SYM(bind_int),
    SYM(bind_blob),
};

static void load_once(void) {
  g_status = ld_dynlib_load(LD_SQ_SONAME, LD_SQ_SONAME_FALLBACK, SYMS, sizeof SYMS / sizeof SYMS[0],
                            LOG_TOPIC, "no SQLite database");
}

int ld_sq_load(void) {
  pthread_once(&g_once, load_once);
  return g_status;
}
