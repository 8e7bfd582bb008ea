/* The REST route table: a method plus a path pattern whose segments are literals or `{name}`
 * parameters ("/relay/v1/messages/{pubsubTopic}"), and percent-decoding of the parameters.
 *
 * Paths are matched in their raw, percent-encoded form, segment by segment, so an encoded slash
 * (`%2Fwaku%2F2%2Frs%2F0%2F0`) stays inside its segment and is decoded into the parameter value
 * only after matching. Pure code: no I/O, no global state; a table is used from one thread at a
 * time. */
#ifndef LD_REST_ROUTE_H
#define LD_REST_ROUTE_H

#include <stdbool.h>
#include <stddef.h>

#define LD_ROUTE_MAX_SEGMENTS 16 /* segments in a pattern or a matched path */
#define LD_ROUTE_MAX_PARAMS 4    /* `{name}` segments in one pattern */
#define LD_ROUTE_MAX_NAME 32     /* bytes of a parameter name */
#define LD_ROUTE_MAX_PATH 65536  /* bytes of a raw request path: nwaku's request head limit */
#define LD_ROUTE_MAX_METHOD 16   /* bytes of a method name */
#define LD_ROUTE_MAX_ROUTES 128  /* routes in one table */

/* The parameters of a matched path, decoded and NUL-terminated. Caller storage; values point into
 * `buf` and live as long as the struct. */
typedef struct ld_route_match {
  size_t n_params;
  char names[LD_ROUTE_MAX_PARAMS][LD_ROUTE_MAX_NAME + 1];
  const char *values[LD_ROUTE_MAX_PARAMS];
  char buf[LD_ROUTE_MAX_PATH + 1];
} ld_route_match_t;

typedef struct ld_route_table ld_route_table_t;

/* Creates an empty table; NULL when out of memory. */
ld_route_table_t *ld_route_table_new(void);

/* Frees the table (the handler pointers are the caller's). NULL is a no-op. */
void ld_route_table_free(ld_route_table_t *t);

/* Adds a route. `method` ("GET", "POST", …) and `pattern` are copied; `handler` is an opaque
 * pointer returned by ld_route_find (typically a caller's static route descriptor). A pattern
 * starts with '/', has no empty segment (except the root pattern "/"), and a parameter segment
 * is exactly `{name}` with 1..LD_ROUTE_MAX_NAME bytes of [A-Za-z0-9_].
 * Errors: LD_ERR_INVALID_ARG (malformed pattern or method), LD_ERR_EXISTS (same method and
 * pattern), LD_ERR_LIMIT (LD_ROUTE_MAX_ROUTES), LD_ERR_NOMEM. */
int ld_route_add(ld_route_table_t *t, const char *method, const char *pattern, void *handler);

/* Removes the route with exactly this method and pattern (as given to ld_route_add) and stores its
 * handler in *handler (may be NULL). The other routes keep their order. LD_ERR_NOT_FOUND when
 * there is no such route. */
int ld_route_remove(ld_route_table_t *t, const char *method, const char *pattern, void **handler);

/* Finds the first route, in the order they were added, whose pattern matches the raw `path` (no
 * query string) and whose method equals `method` (case-sensitive, as HTTP methods are). A
 * parameter matches one non-empty segment. On success stores the handler and fills `m` with the
 * decoded parameters and returns 0. Errors:
 * - LD_ERR_NOT_FOUND: no pattern matches the path;
 * - LD_ERR_UNSUPPORTED: some pattern matches the path, but none with this method;
 * - LD_ERR_BAD_ENCODING: the matching route's parameter is not valid percent-encoding or decodes
 *   to a NUL byte;
 * - LD_ERR_TOO_LARGE: the path is longer than LD_ROUTE_MAX_PATH bytes. */
int ld_route_find(const ld_route_table_t *t, const char *method, const char *path, void **handler,
                  ld_route_match_t *m);

/* The decoded value of parameter `name`, or NULL when the matched pattern has none. */
const char *ld_route_param(const ld_route_match_t *m, const char *name);

/* Percent-decodes in[0..len) into `out` (room for `cap` bytes including the NUL written after the
 * result) and stores the decoded length in *outlen. '+' is kept as is (path semantics). Returns
 * 0, LD_ERR_BAD_ENCODING (a '%' not followed by two hex digits, or an encoded NUL) or
 * LD_ERR_LIMIT (`cap` too small). */
int ld_url_decode(const char *in, size_t len, char *out, size_t cap, size_t *outlen);

#endif
