/* Command-line flags in nwaku's style: `--name=value`, `--name:value` or `--name value`;
 * booleans also as a bare `--name`; list flags repeat. Flags not given on the command line may
 * come from environment variables `<PREFIX><NAME>` with the name upper-cased and '-' → '_'
 * (WAKUNODE2_TCP_PORT for --tcp-port). */
#ifndef LD_APP_FLAGS_H
#define LD_APP_FLAGS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef enum ld_flag_kind {
  LD_FLAG_STRING, /* target: char * [LD_FLAG_STRING_MAX] */
  LD_FLAG_INT,    /* target: int64_t, checked against [min, max] */
  LD_FLAG_BOOL,   /* target: bool; values true/false/1/0/yes/no */
  LD_FLAG_LIST,   /* target: ld_strlist_t */
} ld_flag_kind_t;

#define LD_FLAG_STRING_MAX 1024
#define LD_FLAG_LIST_MAX 32

typedef struct ld_strlist {
  size_t count;
  char items[LD_FLAG_LIST_MAX][LD_FLAG_STRING_MAX];
} ld_strlist_t;

typedef struct ld_flag {
  const char *name; /* without the leading dashes */
  ld_flag_kind_t kind;
  void *target;
  int64_t min, max; /* LD_FLAG_INT only */
  const char *help;
} ld_flag_t;

typedef struct ld_flags_result {
  bool seen[128]; /* per flag: given on the command line or in the environment */
  size_t n_positional;
  const char *positional[8]; /* arguments that are not flags, in order (point into argv) */
  char error[256];           /* why parsing failed */
} ld_flags_result_t;

/* Parses argv[0..argc) (no program name) against `flags`. Returns 0, or LD_ERR_INVALID_ARG with
 * a message in res->error naming the flag and the problem (unknown flag, missing value, not a
 * number, out of range, too many values). */
int ld_flags_parse(const ld_flag_t *flags, size_t n_flags, int argc, char **argv,
                   ld_flags_result_t *res);

/* Fills flags not seen on the command line from the environment (`prefix` e.g. "WAKUNODE2_").
 * List variables hold comma-separated values. Same errors as ld_flags_parse. */
int ld_flags_apply_env(const ld_flag_t *flags, size_t n_flags, const char *prefix,
                       ld_flags_result_t *res);

/* Prints `--name  help` lines for every flag. */
void ld_flags_print_help(const ld_flag_t *flags, size_t n_flags, void *file);

#endif
