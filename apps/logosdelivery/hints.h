/* What the program tells a person to do next when something fails: every error line it prints
 * is "<what failed, with the value>; <next step>", and the next steps are written here, in one
 * place, from what failed (an option and its value, a part of the node, a dial). */
#ifndef LD_APP_HINTS_H
#define LD_APP_HINTS_H

#include <stddef.h>

#include "node/config.h"
#include "node/node.h"
#include "node/options.h"

/* The next step for a value the node option `opt` refused: how to write it (the specific options
 * a person gets wrong most: multiaddrs, node key, database URL, addresses, topics, sizes, preset,
 * log level), else what --help says of the option. Writes a NUL-terminated line. */
void ld_app_option_hint(const ld_node_option_t *opt, char *out, size_t cap);

/* The line to print when the node cannot start or stops itself because a part failed (see
 * ld_node_failure_t): which flag and value it was, why, and what to change, e.g.
 * "--tcp-port: cannot listen on /ip4/0.0.0.0/tcp/60000: address in use; choose another port with
 * --tcp-port (0 picks a free one) or --ports-shift, or stop the process that uses it". A
 * password in a database URL is shown as "***". */
void ld_app_node_failure_text(const ld_node_config_t *cfg, const ld_node_failure_t *f, char *out,
                              size_t cap);

/* The next step after a sub-command's dial failed with `err` (LD_ERR_*): start a node there,
 * check the address and peer ID the node logged, open a firewall, …; `target` names where the
 * address was given ("--peer"). Written to `buf`, which is returned. */
const char *ld_app_dial_hint(int err, const char *target, char *buf, size_t cap);

/* The next step when `peer` answered that it does not serve the sub-command's protocol: the flag
 * the node there must run with ("--lightpush=true", "--filter=true", "--store=true", relay). */
const char *ld_app_service_flag(const char *command, int lightpush, int filter);

/* The next step after the service at --peer refused or failed a sub-command's request with
 * status `status` (lightpush, filter or store codes: 400, 404, 413, 429, 503, 505, …) or client
 * error `err`; `flag` is what the node there must run with (ld_app_service_flag). */
const char *ld_app_service_hint(unsigned status, int err, const char *desc, const char *flag,
                                char *buf, size_t cap);

/* `url` with the password of its user info replaced by "***" when it is a postgres:// or
 * postgresql:// URL; other URLs (sqlite:// paths) as they are. */
void ld_app_mask_url(const char *url, char *out, size_t cap);

#endif
