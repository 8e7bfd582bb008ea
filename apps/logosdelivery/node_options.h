/* The node program's options: nwaku's flags, their WAKUNODE2_* environment variables and the
 * TOML --config-file, turned into a validated node configuration plus the logging settings.
 * Precedence: command line, then environment, then config file, then nwaku's defaults. */
#ifndef LD_APP_NODE_OPTIONS_H
#define LD_APP_NODE_OPTIONS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "base/log.h"
#include "node/config.h"

#define LD_APP_ENV_PREFIX "WAKUNODE2_"

typedef struct ld_app_node_options {
  ld_node_config_t config;
  ld_log_level_t log_level;
  ld_log_format_t log_format;
  bool help; /* --help was given: print ld_app_node_options_help and exit */
} ld_app_node_options_t;

/* Parses argv[0..argc) (no program name, no sub-command) into `opts`. Returns 0 (also for
 * --help, with opts->help set), or LD_ERR_INVALID_ARG / LD_ERR_IO (config file unreadable) /
 * LD_ERR_NOMEM with a one-line message in `err` naming the flag, variable or config-file line. */
int ld_app_node_options_parse(int argc, char **argv, ld_app_node_options_t *opts, char *err,
                              size_t errlen);

/* Writes the flags and their help lines. */
void ld_app_node_options_help(FILE *out);

/* Reads a whole file of at most `max` bytes into a heap buffer (NUL-terminated; free it). Returns
 * 0, LD_ERR_IO (with errno's text in `err`), LD_ERR_TOO_LARGE or LD_ERR_NOMEM. */
int ld_app_read_file(const char *path, size_t max, char **out, size_t *len, char *err,
                     size_t errlen);

#endif
