/* libmicrohttpd loaded at run time. The library (and the TLS stack it depends on) is mapped only
 * when an HTTP server is actually started, so a node without REST or metrics never pays for it.
 *
 * <microhttpd.h> still supplies the types and constants; the functions are reached through the
 * table returned by ld_mhd_load(), whose members have exactly the signatures of the MHD_*
 * functions they are named after. */
#ifndef LD_REST_MHD_H
#define LD_REST_MHD_H

#include <microhttpd.h>

/* The runtime SONAME tried first, then the development name. */
#define LD_MHD_SONAME "libmicrohttpd.so.12"
#define LD_MHD_SONAME_FALLBACK "libmicrohttpd.so"

typedef struct ld_mhd_api {
  __typeof__(MHD_start_daemon) *start_daemon;
  __typeof__(MHD_stop_daemon) *stop_daemon;
  __typeof__(MHD_run) *run;
  __typeof__(MHD_add_connection) *add_connection;
  __typeof__(MHD_get_timeout) *get_timeout;
  __typeof__(MHD_get_daemon_info) *get_daemon_info;
  __typeof__(MHD_lookup_connection_value) *lookup_connection_value;
  __typeof__(MHD_get_connection_values) *get_connection_values;
  __typeof__(MHD_get_connection_info) *get_connection_info;
  __typeof__(MHD_suspend_connection) *suspend_connection;
  __typeof__(MHD_resume_connection) *resume_connection;
  __typeof__(MHD_create_response_from_buffer) *create_response_from_buffer;
  __typeof__(MHD_add_response_header) *add_response_header;
  __typeof__(MHD_destroy_response) *destroy_response;
  __typeof__(MHD_queue_response) *queue_response;
} ld_mhd_api_t;

/* Loads libmicrohttpd and resolves every member of the table, once per process (later calls
 * return the outcome of the first). Thread-safe. On success stores a table that stays valid for
 * the life of the process (the library is never unloaded) in *out and returns 0. Errors:
 * LD_ERR_INVALID_ARG (out is NULL), LD_ERR_IO (the library cannot be loaded or lacks a symbol;
 * the first failure is logged with the library's name). */
int ld_mhd_load(const ld_mhd_api_t **out);

#endif
