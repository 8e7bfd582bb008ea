/* Loading a shared library at run time (dlopen) and filling a table of its functions, for the
 * optional dependencies a node only needs when a feature is used (libpq for a postgres://
 * archive, libmicrohttpd for the REST and metrics servers). */
#ifndef LD_BASE_DYNLIB_H
#define LD_BASE_DYNLIB_H

#include <stddef.h>

/* One function to resolve: its exported name and where its address goes (a function-pointer
 * member of the caller's table, cast to void **). */
typedef struct ld_dynlib_sym {
  const char *name;
  void **slot;
} ld_dynlib_sym_t;

/* Opens `soname`, or else `fallback` (may be NULL), and resolves every symbol of `syms`. On
 * success returns 0 and keeps the library loaded for the life of the process. Otherwise logs one
 * error line under `topic` naming the library and the missing piece, followed by `consequence`
 * ("no HTTP server available"), closes the library and returns LD_ERR_IO (slots may be partly
 * filled). Not thread-safe by itself: call it once (pthread_once). */
int ld_dynlib_load(const char *soname, const char *fallback, const ld_dynlib_sym_t *syms,
                   size_t n_syms, const char *topic, const char *consequence);

#endif
