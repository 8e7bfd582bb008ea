/* The node's configuration options: one table shared by the node program (flags, WAKUNODE2_*
 * environment variables, TOML config-file keys) and the C library's create_node JSON
 * (c-api.md §5.5). Each option has a JSON field name ("tcpPort"), a CLI name ("tcp-port", also
 * the TOML key and, upper-cased with '_', the environment variable), a kind, a type and default
 * as get_available_configs shows them, and a help text.
 *
 * A value is given as text, as a command line would give it ("60000", "true", "150KiB"); list
 * options take one item per call. ld_node_opts_set checks the text exactly as the program's
 * flag would (kind, range, syntax) and applies it to a node configuration. Options whose
 * subsystem does not exist yet (discv5, DNS discovery, RLN, mix, kademlia, QUIC, NAT, …) are
 * still checked the same way and then recorded in the configuration as "accepted, no effect yet"
 * (ld_node_config_add_inert) so that the node can name them when it starts.
 *
 * Filling a configuration: ld_node_opts_init (defaults of the chosen profile), ld_node_opts_set
 * for each given value, ld_node_opts_finish (the preset and the settings that combine several
 * options: listen address/port, REST, metrics and WebSocket with --ports-shift), then
 * ld_node_config_finalize.
 *
 * Defaults. The table's `def` is the library's default (c-api.md §5.5); `program_def` is set
 * where the node program, a drop-in for nwaku's wakunode2, defaults differently:
 *   max-connections   library 150,   program 50
 *   filter            library true,  program false
 *   lightpush         library true,  program false
 *   peer-exchange     library true,  program false
 *   discv5-discovery  library true,  program false
 *   relay-service-ratio library 50:50, program 60:40
 *   rendezvous        library true,  program false (no effect yet either way)
 * Other deviations from nwaku's parser, kept on purpose:
 *   - port options accept 0 (any free port) everywhere, not only in JSON;
 *   - a preset's maximum message size applies when --max-msg-size is not given (nwaku always
 *     keeps its 150KiB default there);
 *   - --cluster-id=1 does not select the twn preset implicitly;
 *   - bool values accept y/yes/true/1/on and n/no/false/0/off in any case.
 *
 * Pure functions over static tables and caller storage; any thread. */
#ifndef LD_NODE_OPTIONS_H
#define LD_NODE_OPTIONS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/log.h"
#include "node/config.h"
#include "waku/core/sharding.h"

/* Options in the table; room for a few more. */
#define LD_NODE_OPTIONS_MAX 112
#define LD_NODE_OPTS_PRESET_MAX 64 /* a --preset value with its NUL */

typedef enum ld_node_opt_kind {
  LD_NODE_OPT_BOOL = 0, /* true/false (ld_node_option_parse_bool) */
  LD_NODE_OPT_INT,      /* decimal integer in [min, max] */
  LD_NODE_OPT_STRING,   /* text, checked per option */
  LD_NODE_OPT_LIST,     /* repeatable: one text item per value */
} ld_node_opt_kind_t;

/* ld_node_option_t.flags */
#define LD_NODE_OPT_INERT 1u  /* accepted and checked, no effect yet */
#define LD_NODE_OPT_CALLER 2u /* handled by the caller (config-file): checked, no effect here */

typedef struct ld_node_option {
  const char *field;       /* JSON field name, e.g. "tcpPort" */
  const char *cli;         /* flag / TOML key / JSON alias, e.g. "tcp-port" */
  ld_node_opt_kind_t kind; /* for lists: the kind of one item is STRING */
  int64_t min, max;        /* LD_NODE_OPT_INT: accepted range */
  const char *type;        /* the value type as get_available_configs shows it, e.g. "Port" */
  const char *def;         /* the library's default as text, e.g. "60000" */
  const char *program_def; /* the program's default where it differs, else NULL */
  const char *help;        /* one line */
  unsigned flags;          /* LD_NODE_OPT_INERT, LD_NODE_OPT_CALLER */
} ld_node_option_t;

/* The table, in nwaku's WakuNodeConf order (c-api.md §5.5). Static storage. */
size_t ld_node_options_count(void);
const ld_node_option_t *ld_node_option_at(size_t index);

/* The position of `opt` in the table (opt must come from the table). */
size_t ld_node_option_index(const ld_node_option_t *opt);

/* The option whose field name or CLI name equals `name` (ASCII case-insensitively), or NULL. */
const ld_node_option_t *ld_node_option_find(const char *name);

/* The option whose CLI name is exactly `cli`, or NULL. */
const ld_node_option_t *ld_node_option_find_cli(const char *cli);

/* ---- value parsers shared with the program's flag layer ------------------------------------ */

/* y, yes, true, 1, on / n, no, false, 0, off (ASCII case-insensitive). 0 or LD_ERR_INVALID_ARG. */
int ld_node_option_parse_bool(const char *text, bool *out);

/* An optional sign and decimal digits, nothing else, within [min, max]. On failure returns
 * LD_ERR_INVALID_ARG with "expected an integer" or "value <v> out of range (<min>..<max>)" in
 * `err` (may be NULL). */
int ld_node_option_parse_int(const char *text, int64_t min, int64_t max, int64_t *out, char *err,
                             size_t errlen);

typedef enum ld_node_mode {
  LD_NODE_MODE_CORE = 0, /* relay, filter, lightpush, peer exchange servers on */
  LD_NODE_MODE_EDGE,     /* clients only: relay, filter, lightpush, store off */
} ld_node_mode_t;

/* "Core" / "Edge", ASCII case-insensitive. 0 or LD_ERR_INVALID_ARG. */
int ld_node_option_parse_mode(const char *text, ld_node_mode_t *out);

/* ---- filling a configuration ----------------------------------------------------------------- */

typedef enum ld_node_opts_profile {
  LD_NODE_OPTS_PROGRAM = 0, /* the node program's defaults (nwaku's wakunode2) */
  LD_NODE_OPTS_LIBRARY,     /* the C library's JSON defaults (c-api.md §5.5) */
} ld_node_opts_profile_t;

/* The state of one configuration being filled. Caller storage; the fields below `cfg` are
 * readable, and the settings combined by ld_node_opts_finish may be overwritten by the caller
 * between ld_node_opts_set and ld_node_opts_finish (the library's structured JSON shape sets the
 * unset ports to 0 this way). */
typedef struct ld_node_opts {
  ld_node_config_t *cfg;
  ld_node_opts_profile_t profile;
  ld_log_level_t log_level;
  ld_log_format_t log_format;
  bool set[LD_NODE_OPTIONS_MAX]; /* per option: a value was given */

  /* combined by ld_node_opts_finish (ports before the shift) */
  char listen_address[LD_NODE_ADDRESS_MAX];
  int64_t tcp_port, ports_shift;
  bool rest, metrics;
  char rest_address[LD_NODE_ADDRESS_MAX], metrics_address[LD_NODE_ADDRESS_MAX];
  int64_t rest_port, metrics_port;
  bool ws, wss;
  int64_t ws_port;
  int64_t discv5_udp_port;
  char ws_key[LD_NODE_PATH_MAX], ws_cert[LD_NODE_PATH_MAX];

  char preset[LD_NODE_OPTS_PRESET_MAX];        /* --preset as given, "" when none */
  const ld_waku_network_preset_t *preset_conf; /* resolved by ld_node_opts_finish, or NULL */
  ld_node_mode_t mode;                         /* --mode as given (recorded, not applied) */
} ld_node_opts_t;

/* Starts filling `cfg` (ld_node_config_default, then the profile's differences). `cfg` must
 * outlive `o`'s use. */
void ld_node_opts_init(ld_node_opts_t *o, ld_node_config_t *cfg, ld_node_opts_profile_t profile);

/* Checks `text` as the option's flag would and applies it; a list option takes one item per
 * call, appended. On failure returns LD_ERR_INVALID_ARG / LD_ERR_BAD_KEY / LD_ERR_LIMIT / … with
 * a one-line reason in `err` that does not repeat the option's name when the checker is
 * generic ("expected true or false", "value 70000 out of range (0..65535)") and names the value
 * otherwise ("shard '5000' is not an integer in 0..1023"); nothing is applied then. */
int ld_node_opts_set(ld_node_opts_t *o, const ld_node_option_t *opt, const char *text, char *err,
                     size_t errlen);

/* True when a value of option `cli` (its CLI name) was given. */
bool ld_node_opts_is_set(const ld_node_opts_t *o, const char *cli);

/* The protocol switches of a mode (c-api.md §5.3), applied as defaults: Core turns relay, filter,
 * lightpush and peer exchange on (discv5 and rendezvous are on by default already); Edge turns
 * peer exchange on and relay, filter, lightpush and store off. Options are not marked as set. */
void ld_node_opts_apply_mode(ld_node_opts_t *o, ld_node_mode_t mode);

/* Resolves the preset ("Invalid --preset value passed: <name>", LD_ERR_INVALID_ARG) and applies
 * it where the option was not given (cluster, autosharding shard count, maximum message size;
 * its RLN, discovery and entry nodes are recorded as no effect yet), then combines listen
 * address and port, REST, metrics and WebSocket with the ports shift. Errors with the reason in
 * `err`. Call once, then ld_node_config_finalize. */
int ld_node_opts_finish(ld_node_opts_t *o, char *err, size_t errlen);

/* The preset named `name` as --preset accepts it (ASCII case-insensitive; "logosdev",
 * "logostest" and "statusprod" also name the dotted ones), or NULL. "" is no preset (NULL). */
const ld_waku_network_preset_t *ld_node_option_preset(const char *name);

#endif
