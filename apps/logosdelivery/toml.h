/* A strict parser for the subset of TOML that nwaku configuration files use:
 *
 *   # comment
 *   key = "basic string"          (escapes \" \\ \b \t \n \f \r \uXXXX \UXXXXXXXX)
 *   key = 'literal string'
 *   key = 42                      (decimal with optional sign and '_' between digits,
 *                                  or 0x / 0o / 0b)
 *   key = true
 *   key = ["a", 'b', 1, 2]        (strings, integers and booleans; may span lines, with
 *                                  comments and a trailing comma)
 *
 * Keys are bare ([A-Za-z0-9_-]+) or basic-quoted. Anything else — tables, dotted keys, floats,
 * dates, multi-line strings, inline tables, nested arrays, duplicate keys — is refused with an
 * error naming the line. Every size is capped (LD_TOML_MAX_*). Pure: no I/O, any thread. */
#ifndef LD_APP_TOML_H
#define LD_APP_TOML_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define LD_TOML_MAX_INPUT (1024u * 1024) /* bytes of one document */
#define LD_TOML_MAX_ENTRIES 512          /* key = value lines */
#define LD_TOML_MAX_ITEMS 1024           /* elements of one array */
#define LD_TOML_MAX_KEY 128              /* bytes of one key */
#define LD_TOML_MAX_STRING 8192          /* bytes of one decoded string */
#define LD_TOML_ERROR_MAX 200            /* suggested size of an error buffer */

typedef enum ld_toml_type {
  LD_TOML_STRING,
  LD_TOML_INTEGER,
  LD_TOML_BOOL,
  LD_TOML_ARRAY,
} ld_toml_type_t;

/* A scalar (string, integer or boolean) or an array of scalars. Strings are NUL-terminated UTF-8
 * without NUL bytes. */
typedef struct ld_toml_value {
  ld_toml_type_t type;
  char *string;    /* LD_TOML_STRING: heap, owned by the document */
  int64_t integer; /* LD_TOML_INTEGER */
  bool boolean;    /* LD_TOML_BOOL */
  size_t n_items;  /* LD_TOML_ARRAY */
  struct ld_toml_value *items;
} ld_toml_value_t;

typedef struct ld_toml_entry {
  char *key;     /* heap, owned by the document */
  unsigned line; /* 1-based line of the key */
  ld_toml_value_t value;
} ld_toml_entry_t;

/* A parsed document: entries in file order. Caller storage; ld_toml_clear frees it. */
typedef struct ld_toml {
  size_t n_entries;
  ld_toml_entry_t *entries;
} ld_toml_t;

/* Parses text[0..len) (NUL bytes are refused) into `doc`, which is overwritten. Returns 0, or
 * LD_ERR_MALFORMED with "line N: <reason>" in `err` (doc left empty), LD_ERR_TOO_LARGE when a
 * cap is exceeded (also with a line-numbered reason), LD_ERR_NOMEM. `err` may be NULL. */
int ld_toml_parse(const char *text, size_t len, ld_toml_t *doc, char *err, size_t errlen);

/* Frees everything the document owns and leaves it empty. */
void ld_toml_clear(ld_toml_t *doc);

/* The entry with `key`, or NULL. Valid until ld_toml_clear. */
const ld_toml_entry_t *ld_toml_get(const ld_toml_t *doc, const char *key);

/* "string", "integer", "boolean" or "array". */
const char *ld_toml_type_name(ld_toml_type_t type);

#endif
