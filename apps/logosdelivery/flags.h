/* Command-line flags in nwaku's style: `--name=value`, `--name:value` or `--name value`;
 * booleans also as a bare `--name`; list flags repeat. Flags not given on the command line may
 * come from environment variables `<PREFIX><NAME>` with the name upper-cased and '-' → '_'
 * (WAKUNODE2_TCP_PORT for --tcp-port), and then from a TOML config file whose keys are the flag
 * names. Precedence: command line, then environment, then config file, then the defaults the
 * caller put in the targets. */
#ifndef LD_APP_FLAGS_H
#define LD_APP_FLAGS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "logosdelivery/toml.h"

typedef enum ld_flag_kind {
  LD_FLAG_STRING, /* target: char * [LD_FLAG_STRING_MAX] */
  LD_FLAG_INT,    /* target: int64_t in [min, max] (ld_node_option_parse_int) */
  LD_FLAG_BOOL,   /* target: bool; true/false/yes/no/on/off/1/0 (ld_node_option_parse_bool) */
  LD_FLAG_LIST,   /* target: ld_strlist_t */
} ld_flag_kind_t;

#define LD_FLAG_STRING_MAX 1024
#define LD_FLAG_LIST_MAX 1024 /* values of one list flag */
#define LD_FLAG_MAX_FLAGS 128 /* flags in one table */

/* The values of a list flag, in the order given. Heap strings; zero-initialise, free with
 * ld_strlist_clear. */
typedef struct ld_strlist {
  size_t count;
  char **items;
} ld_strlist_t;

/* Frees the strings and empties the list. */
void ld_strlist_clear(ld_strlist_t *l);

typedef struct ld_flag {
  const char *name; /* without the leading dashes */
  ld_flag_kind_t kind;
  void *target;
  int64_t min, max; /* LD_FLAG_INT only */
  const char *help;
} ld_flag_t;

typedef enum ld_flag_source {
  LD_FLAG_SRC_DEFAULT = 0,
  LD_FLAG_SRC_CLI,
  LD_FLAG_SRC_ENV,
  LD_FLAG_SRC_FILE,
} ld_flag_source_t;

typedef struct ld_flags_result {
  bool seen[LD_FLAG_MAX_FLAGS]; /* per flag: given on the command line, in the environment or in
                                   the config file */
  ld_flag_source_t source[LD_FLAG_MAX_FLAGS]; /* where each flag's value came from */
  unsigned line[LD_FLAG_MAX_FLAGS];           /* LD_FLAG_SRC_FILE: the line of its key */
  size_t n_positional;
  const char *positional[8]; /* arguments that are not flags, in order (point into argv) */
  char error[512];           /* why parsing failed */
} ld_flags_result_t;

/* Parses argv[0..argc) (no program name) against `flags`. Returns 0, or LD_ERR_INVALID_ARG with
 * a message in res->error naming the flag, the refused value and the problem (unknown flag,
 * missing value, not a number, out of range, too many values), then after "; " what to write
 * instead ("write --relay=true or --relay=false", "did you mean --tcp-port?"); LD_ERR_NOMEM.
 * Errors of values from the environment or a config file name the variable or line instead and
 * say how to write the value there. */
int ld_flags_parse(const ld_flag_t *flags, size_t n_flags, int argc, char **argv,
                   ld_flags_result_t *res);

/* Fills flags not seen yet from the environment (`prefix` e.g. "WAKUNODE2_"). List variables
 * hold a JSON array (`["a","b"]`, `[1,2]`, as nwaku reads them) or comma-separated values. Same
 * errors as ld_flags_parse, naming the variable. */
int ld_flags_apply_env(const ld_flag_t *flags, size_t n_flags, const char *prefix,
                       ld_flags_result_t *res);

/* Fills flags not seen yet from a parsed TOML document. Strings go to string flags, integers to
 * integer flags, booleans to boolean flags; list flags take an array (of strings or integers) or
 * a single value. Keys named in `ignore` (NULL-terminated, may be NULL) are skipped. Errors
 * (LD_ERR_INVALID_ARG, message with the line): an unknown key, a value of the wrong type, a value
 * a flag refuses. */
int ld_flags_apply_toml(const ld_flag_t *flags, size_t n_flags, const ld_toml_t *doc,
                        const char *const *ignore, ld_flags_result_t *res);

/* Writes where flag `index` got its value, for error messages: "--name" (command line or
 * default), "<prefix>NAME" (environment) or "config file '<file>': line N: name". */
void ld_flags_origin(const ld_flag_t *flags, size_t index, const ld_flags_result_t *res,
                     const char *env_prefix, const char *file, char *out, size_t cap);

/* The flag whose name is closest to `name` (its first `name_len` bytes) within a typo or two,
 * for "did you mean --…?", or NULL. */
const char *ld_flags_closest(const ld_flag_t *flags, size_t n_flags, const char *name,
                             size_t name_len);

/* Index of the flag called `name`, or -1. */
int ld_flags_find(const ld_flag_t *flags, size_t n_flags, const char *name);

/* Prints `--name  help` lines for every flag. */
void ld_flags_print_help(const ld_flag_t *flags, size_t n_flags, void *file);

#endif
