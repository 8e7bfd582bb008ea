#include "rest/mhd.h"

#include <pthread.h>
#include <stddef.h>

#include "base/dynlib.h"
#include "base/error.h"

#define LOG_TOPIC "http"

static pthread_once_t g_once = PTHREAD_ONCE_INIT;
static ld_mhd_api_t g_api;
static int g_status = LD_ERR_IO;

#define SYM(field, name)                                                                           \
  { name, (void **)&g_api.field }

static const ld_dynlib_sym_t SYMS[] = {
    SYM(start_daemon, "MHD_start_daemon"),
    SYM(stop_daemon, "MHD_stop_daemon"),
    SYM(run, "MHD_run"),
    SYM(add_connection, "MHD_add_connection"),
    SYM(get_timeout, "MHD_get_timeout"),
    SYM(get_daemon_info, "MHD_get_daemon_info"),
    SYM(lookup_connection_value, "MHD_lookup_connection_value"),
    SYM(get_connection_values, "MHD_get_connection_values"),
    SYM(get_connection_info, "MHD_get_connection_info"),
    SYM(suspend_connection, "MHD_suspend_connection"),
    SYM(resume_connection, "MHD_resume_connection"),
    SYM(create_response_from_buffer, "MHD_create_response_from_buffer"),
    SYM(add_response_header, "MHD_add_response_header"),
    SYM(destroy_response, "MHD_destroy_response"),
    SYM(queue_response, "MHD_queue_response"),
};

static void load_once(void) {
  g_status = ld_dynlib_load(LD_MHD_SONAME, LD_MHD_SONAME_FALLBACK, SYMS,
                            sizeof SYMS / sizeof SYMS[0], LOG_TOPIC, "no HTTP server available");
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
