#include "rest/mhd.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stddef.h>

#include "base/error.h"
#include "base/log.h"

#define LOG_TOPIC "http"

static pthread_once_t g_once = PTHREAD_ONCE_INIT;
static ld_mhd_api_t g_api;
static int g_status = LD_ERR_IO;

#define RESOLVE(lib, field, name)                                                                  \
  ((g_api.field = (__typeof__(g_api.field))dlsym((lib), (name))) != NULL ? 0 : resolve_failed(name))

static int resolve_failed(const char *name) {
  const char *why = dlerror();
  ld_log(LD_LOG_ERROR, LOG_TOPIC, "%s lacks %s: %s", LD_MHD_SONAME, name, why ? why : "?");
  return LD_ERR_IO;
}

static void *open_library(void) {
  void *lib = dlopen(LD_MHD_SONAME, RTLD_NOW | RTLD_LOCAL);
  if (lib != NULL)
    return lib;
  const char *why = dlerror();
  ld_log(LD_LOG_DEBUG, LOG_TOPIC, "cannot load %s: %s", LD_MHD_SONAME, why ? why : "?");
  lib = dlopen(LD_MHD_SONAME_FALLBACK, RTLD_NOW | RTLD_LOCAL);
  if (lib == NULL) {
    why = dlerror();
    ld_log(LD_LOG_ERROR, LOG_TOPIC, "cannot load %s (nor %s): %s; no HTTP server available",
           LD_MHD_SONAME, LD_MHD_SONAME_FALLBACK, why ? why : "?");
  }
  return lib;
}

static int resolve_all(void *lib) {
  int rc = 0;
  rc = rc ? rc : RESOLVE(lib, start_daemon, "MHD_start_daemon");
  rc = rc ? rc : RESOLVE(lib, stop_daemon, "MHD_stop_daemon");
  rc = rc ? rc : RESOLVE(lib, run, "MHD_run");
  rc = rc ? rc : RESOLVE(lib, get_timeout, "MHD_get_timeout");
  rc = rc ? rc : RESOLVE(lib, get_daemon_info, "MHD_get_daemon_info");
  rc = rc ? rc : RESOLVE(lib, lookup_connection_value, "MHD_lookup_connection_value");
  rc = rc ? rc : RESOLVE(lib, get_connection_values, "MHD_get_connection_values");
  rc = rc ? rc : RESOLVE(lib, suspend_connection, "MHD_suspend_connection");
  rc = rc ? rc : RESOLVE(lib, resume_connection, "MHD_resume_connection");
  rc = rc ? rc : RESOLVE(lib, create_response_from_buffer, "MHD_create_response_from_buffer");
  rc = rc ? rc : RESOLVE(lib, add_response_header, "MHD_add_response_header");
  rc = rc ? rc : RESOLVE(lib, destroy_response, "MHD_destroy_response");
  rc = rc ? rc : RESOLVE(lib, queue_response, "MHD_queue_response");
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

int ld_mhd_load(const ld_mhd_api_t **out) {
  if (out == NULL)
    return LD_ERR_INVALID_ARG;
  pthread_once(&g_once, load_once);
  if (g_status != 0)
    return g_status;
  *out = &g_api;
  return 0;
}
