/* DNS TXT lookups with c-ares on a libuv loop, and DNS discovery (EIP-1459) driving a
 * dns_tree.h walker with them.
 *
 * libcares is loaded at run time (dlopen of libcares.so.2) the first time a resolver is made, so
 * a node without DNS discovery never maps it. Everything here runs on the loop's thread. */
#ifndef LD_WAKU_DISCOVERY_DNS_RESOLVER_H
#define LD_WAKU_DISCOVERY_DNS_RESOLVER_H

#include <stddef.h>
#include <uv.h>

#include "waku/discovery/dns_tree.h"

#define LD_CARES_SONAME "libcares.so.2"
#define LD_CARES_SONAME_FALLBACK "libcares.so"

/* Per-try timeout and tries of one lookup. */
#define LD_DNS_QUERY_TIMEOUT_MS 3000
#define LD_DNS_QUERY_TRIES 3
/* Lookups a discovery keeps in flight. */
#define LD_DNS_DEFAULT_PARALLEL 16
/* Bytes of one joined TXT record passed on; longer records are cut to this (and then refused by
 * the walker's TXT limit, which must stay below). */
#define LD_DNS_TXT_READ_MAX 4096

typedef struct ld_dns_resolver ld_dns_resolver_t;

/* The answer to one TXT lookup: on success (err 0) records[0..n) with lens[0..n), each record's
 * strings joined (valid during the call only); on failure err is LD_ERR_DNS_QUERY (with c-ares's
 * reason, e.g. "Domain name not found") or LD_ERR_CANCELED (the resolver was closed). Called
 * once, on the loop. */
typedef void (*ld_dns_txt_cb)(void *arg, const char *name, int err, const char *reason,
                              const char *const *records, const size_t *lens, size_t n);

/* A resolver asking `servers` ("ip", "ip:port", "[ip6]:port"; n_servers 0: the system's
 * resolv.conf). Errors: LD_ERR_IO (libcares missing: logged), LD_ERR_INVALID_ARG (a server that
 * c-ares does not accept), LD_ERR_NOMEM. Close with ld_dns_resolver_close. */
int ld_dns_resolver_new(uv_loop_t *loop, const char *const *servers, size_t n_servers,
                        ld_dns_resolver_t **out);

/* Starts a TXT lookup of `name`; `cb` runs later, or from within this call when c-ares fails the
 * lookup at once. Returns 0 or LD_ERR_STATE (closing), LD_ERR_INVALID_ARG (name too long),
 * LD_ERR_NOMEM (no callback then). */
int ld_dns_resolver_txt(ld_dns_resolver_t *r, const char *name, ld_dns_txt_cb cb, void *arg);

/* Cancels the pending lookups (their callbacks run with LD_ERR_CANCELED, possibly from within
 * this call) and releases the resolver once its handles are closed. Safe from a callback. */
void ld_dns_resolver_close(ld_dns_resolver_t *r);

/* ---- DNS discovery -------------------------------------------------------------------------- */

typedef struct ld_dns_discovery ld_dns_discovery_t;

/* The end of a discovery: err 0 and the tree's records enrs[0..n) (valid during the call), or
 * the error that ended the walk (a DNS_* code, BAD_SIGNATURE) with its reason; n is 0 then.
 * Called once, on the loop, never from within ld_dns_discovery_start; the discovery is freed
 * when it returns. */
typedef void (*ld_dns_discovery_cb)(void *arg, int err, const char *reason, const ld_enr_t *enrs,
                                    size_t n, const ld_dns_walker_stats_t *stats);

/* Syncs the tree of `url` (enrtree://…) through `servers` (as ld_dns_resolver_new) with up to
 * `parallel` lookups in flight (0: LD_DNS_DEFAULT_PARALLEL) and `limits` (NULL: defaults).
 * Errors (no callback then): LD_ERR_DNS_BAD_URL and those of ld_dns_resolver_new. *out (may be
 * NULL) stays valid until the callback runs or ld_dns_discovery_cancel. */
int ld_dns_discovery_start(uv_loop_t *loop, const char *url, const char *const *servers,
                           size_t n_servers, const ld_dns_limits_t *limits, size_t parallel,
                           ld_dns_discovery_cb cb, void *arg, ld_dns_discovery_t **out);

/* Stops a discovery whose callback has not run; the callback never runs. */
void ld_dns_discovery_cancel(ld_dns_discovery_t *d);

#endif
