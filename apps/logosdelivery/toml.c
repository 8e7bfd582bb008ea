#include "toml.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "base/hex.h"

typedef struct parser {
  const char *p;
  const char *end;
  unsigned line;
  char *err;
  size_t errlen;
} parser_t;

static int fail(parser_t *ps, int code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static int fail(parser_t *ps, int code, const char *fmt, ...) {
  if (ps->err == NULL || ps->errlen == 0)
    return code;
  int n = snprintf(ps->err, ps->errlen, "line %u: ", ps->line);
  if (n >= 0 && (size_t)n < ps->errlen) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(ps->err + n, ps->errlen - (size_t)n, fmt, ap);
    va_end(ap);
  }
  return code;
}

static bool at_end(const parser_t *ps) {
  return ps->p >= ps->end;
}

static int peek(const parser_t *ps) {
  return at_end(ps) ? -1 : (unsigned char)*ps->p;
}

static bool peek_is(const parser_t *ps, const char *s) {
  size_t n = strlen(s);
  return (size_t)(ps->end - ps->p) >= n && memcmp(ps->p, s, n) == 0;
}

/* ---- UTF-8 -------------------------------------------------------------------------------- */

/* Length of the valid UTF-8 sequence at s[0..n), or 0 when invalid. */
static size_t utf8_seq_len(const unsigned char *s, size_t n) {
  unsigned c = s[0];
  size_t len = c < 0x80 ? 1 : (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xE ? 3 : (c >> 3) == 0x1E ? 4 : 0;
  if (len == 0 || len > n)
    return 0;
  uint32_t cp = len == 1 ? c : len == 2 ? (c & 0x1F) : len == 3 ? (c & 0x0F) : (c & 0x07);
  for (size_t i = 1; i < len; i++) {
    if ((s[i] & 0xC0) != 0x80)
      return 0;
    cp = (cp << 6) | (s[i] & 0x3F);
  }
  static const uint32_t min_cp[5] = {0, 0, 0x80, 0x800, 0x10000};
  if (cp < min_cp[len] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
    return 0;
  return len;
}

static bool utf8_valid(const char *s, size_t n) {
  const unsigned char *u = (const unsigned char *)s;
  for (size_t i = 0; i < n;) {
    size_t len = utf8_seq_len(u + i, n - i);
    if (len == 0)
      return false;
    i += len;
  }
  return true;
}

static size_t utf8_encode(uint32_t cp, char out[4]) {
  if (cp < 0x80) {
    out[0] = (char)cp;
    return 1;
  }
  if (cp < 0x800) {
    out[0] = (char)(0xC0 | (cp >> 6));
    out[1] = (char)(0x80 | (cp & 0x3F));
    return 2;
  }
  if (cp < 0x10000) {
    out[0] = (char)(0xE0 | (cp >> 12));
    out[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
    out[2] = (char)(0x80 | (cp & 0x3F));
    return 3;
  }
  out[0] = (char)(0xF0 | (cp >> 18));
  out[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
  out[2] = (char)(0x80 | ((cp >> 6) & 0x3F));
  out[3] = (char)(0x80 | (cp & 0x3F));
  return 4;
}

/* ---- whitespace, comments, line ends --------------------------------------------------------- */

static void skip_blank(parser_t *ps) {
  while (!at_end(ps) && (*ps->p == ' ' || *ps->p == '\t'))
    ps->p++;
}

static bool is_control(int c) {
  return (c >= 0 && c < 0x20 && c != '\t') || c == 0x7F;
}

static int skip_comment(parser_t *ps) {
  if (peek(ps) != '#')
    return 0;
  while (!at_end(ps) && *ps->p != '\n' && !peek_is(ps, "\r\n")) {
    if (is_control((unsigned char)*ps->p))
      return fail(ps, LD_ERR_MALFORMED, "control character in a comment");
    ps->p++;
  }
  return 0;
}

/* Consumes a newline (LF or CRLF); returns false when there is none. */
static bool take_newline(parser_t *ps) {
  if (peek(ps) == '\n') {
    ps->p++;
  } else if (peek_is(ps, "\r\n")) {
    ps->p += 2;
  } else {
    return false;
  }
  ps->line++;
  return true;
}

/* After a value: blanks, an optional comment, then a newline or the end of the input. */
static int expect_line_end(parser_t *ps) {
  skip_blank(ps);
  int rc = skip_comment(ps);
  if (rc != 0)
    return rc;
  if (at_end(ps) || take_newline(ps))
    return 0;
  return fail(ps, LD_ERR_MALFORMED, "unexpected '%c' after the value", *ps->p);
}

/* Inside arrays: blanks, comments and newlines in any number. */
static int skip_array_space(parser_t *ps) {
  for (;;) {
    skip_blank(ps);
    int rc = skip_comment(ps);
    if (rc != 0)
      return rc;
    if (!take_newline(ps))
      return 0;
  }
}

/* ---- strings ----------------------------------------------------------------------------------
 */

typedef struct strbuf {
  char data[LD_TOML_MAX_STRING + 1];
  size_t len;
} strbuf_t;

static int sb_put(parser_t *ps, strbuf_t *sb, const char *bytes, size_t n) {
  if (sb->len + n > LD_TOML_MAX_STRING)
    return fail(ps, LD_ERR_TOO_LARGE, "string longer than %u bytes", LD_TOML_MAX_STRING);
  memcpy(sb->data + sb->len, bytes, n);
  sb->len += n;
  return 0;
}

static int parse_unicode_escape(parser_t *ps, size_t digits, strbuf_t *sb) {
  uint32_t cp = 0;
  for (size_t i = 0; i < digits; i++) {
    int d = ld_hex_digit_value(peek(ps));
    if (d < 0)
      return fail(ps, LD_ERR_MALFORMED, "\\%c escape needs %zu hex digits", digits == 4 ? 'u' : 'U',
                  digits);
    cp = (cp << 4) | (uint32_t)d;
    ps->p++;
  }
  if (cp == 0 || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
    return fail(ps, LD_ERR_MALFORMED, "escape U+%04X is not an allowed character", (unsigned)cp);
  char enc[4];
  return sb_put(ps, sb, enc, utf8_encode(cp, enc));
}

static int parse_escape(parser_t *ps, strbuf_t *sb) {
  int c = peek(ps);
  if (c < 0)
    return fail(ps, LD_ERR_MALFORMED, "unterminated string");
  ps->p++;
  static const char from[] = "\"\\btnfr";
  static const char to[] = "\"\\\b\t\n\f\r";
  const char *hit = c != 0 ? strchr(from, c) : NULL;
  if (hit != NULL)
    return sb_put(ps, sb, &to[hit - from], 1);
  if (c == 'u' || c == 'U')
    return parse_unicode_escape(ps, c == 'u' ? 4 : 8, sb);
  return fail(ps, LD_ERR_MALFORMED, "unknown escape '\\%c'", c);
}

/* Parses a basic ("...") or literal ('...') single-line string into sb. */
static int parse_string_into(parser_t *ps, strbuf_t *sb) {
  char quote = *ps->p;
  if (peek_is(ps, quote == '"' ? "\"\"\"" : "'''"))
    return fail(ps, LD_ERR_MALFORMED, "multi-line strings are not supported");
  ps->p++;
  sb->len = 0;
  for (;;) {
    int c = peek(ps);
    if (c < 0 || c == '\n' || c == '\r')
      return fail(ps, LD_ERR_MALFORMED, "unterminated string");
    ps->p++;
    if (c == quote)
      break;
    int rc = 0;
    if (is_control(c))
      rc = fail(ps, LD_ERR_MALFORMED, "control character in a string");
    else if (c == '\\' && quote == '"')
      rc = parse_escape(ps, sb);
    else
      rc = sb_put(ps, sb, ps->p - 1, 1);
    if (rc != 0)
      return rc;
  }
  sb->data[sb->len] = '\0';
  if (memchr(sb->data, '\0', sb->len) != NULL)
    return fail(ps, LD_ERR_MALFORMED, "NUL character in a string");
  return 0;
}

static int parse_string(parser_t *ps, char **out) {
  strbuf_t *sb = malloc(sizeof *sb);
  if (sb == NULL)
    return LD_ERR_NOMEM;
  int rc = parse_string_into(ps, sb);
  if (rc == 0) {
    *out = malloc(sb->len + 1);
    if (*out == NULL)
      rc = LD_ERR_NOMEM;
    else
      memcpy(*out, sb->data, sb->len + 1);
  }
  free(sb);
  return rc;
}

/* ---- keys --------------------------------------------------------------------------------- */

static bool is_bare_key_char(int c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' ||
         c == '-';
}

static int parse_key(parser_t *ps, char **out) {
  if (peek(ps) == '"' || peek(ps) == '\'') {
    int rc = parse_string(ps, out);
    if (rc == 0 && strlen(*out) > LD_TOML_MAX_KEY) {
      free(*out);
      *out = NULL;
      return fail(ps, LD_ERR_TOO_LARGE, "key longer than %u bytes", LD_TOML_MAX_KEY);
    }
    return rc;
  }
  const char *start = ps->p;
  while (!at_end(ps) && is_bare_key_char((unsigned char)*ps->p))
    ps->p++;
  size_t n = (size_t)(ps->p - start);
  if (n == 0)
    return fail(ps, LD_ERR_MALFORMED, "expected a key");
  if (n > LD_TOML_MAX_KEY)
    return fail(ps, LD_ERR_TOO_LARGE, "key longer than %u bytes", LD_TOML_MAX_KEY);
  *out = malloc(n + 1);
  if (*out == NULL)
    return LD_ERR_NOMEM;
  memcpy(*out, start, n);
  (*out)[n] = '\0';
  return 0;
}

/* ---- numbers and booleans ------------------------------------------------------------------- */

static bool is_value_end(int c) {
  return c < 0 || c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '#' || c == ',' ||
         c == ']';
}

/* Digits of `base` with single '_' between digits. */
static int parse_digits(parser_t *ps, unsigned base, uint64_t limit, uint64_t *out) {
  uint64_t v = 0;
  bool any = false, last_underscore = false;
  while (!is_value_end(peek(ps))) {
    int c = peek(ps);
    if (c == '_') {
      if (!any || last_underscore)
        return fail(ps, LD_ERR_MALFORMED, "misplaced '_' in a number");
      last_underscore = true;
      ps->p++;
      continue;
    }
    int d = ld_hex_digit_value(c);
    if (d < 0 || (unsigned)d >= base) {
      if (c == '.' || c == 'e' || c == 'E')
        return fail(ps, LD_ERR_MALFORMED, "floating-point values are not supported");
      if (c == '-' || c == ':')
        return fail(ps, LD_ERR_MALFORMED, "dates and times are not supported");
      return fail(ps, LD_ERR_MALFORMED, "invalid character '%c' in a number", c);
    }
    if (v > (limit - (uint64_t)d) / base)
      return fail(ps, LD_ERR_MALFORMED, "integer out of the 64-bit range");
    v = v * base + (uint64_t)d;
    any = true;
    last_underscore = false;
    ps->p++;
  }
  if (!any || last_underscore)
    return fail(ps, LD_ERR_MALFORMED, "incomplete number");
  *out = v;
  return 0;
}

static int parse_prefixed_integer(parser_t *ps, int64_t *out) {
  char kind = ps->p[1];
  unsigned base = kind == 'x' ? 16 : kind == 'o' ? 8 : 2;
  ps->p += 2;
  uint64_t v;
  int rc = parse_digits(ps, base, INT64_MAX, &v);
  if (rc == 0)
    *out = (int64_t)v;
  return rc;
}

static int parse_integer(parser_t *ps, int64_t *out) {
  if (peek_is(ps, "0x") || peek_is(ps, "0o") || peek_is(ps, "0b"))
    return parse_prefixed_integer(ps, out);
  bool neg = peek(ps) == '-';
  if (neg || peek(ps) == '+')
    ps->p++;
  if (peek_is(ps, "inf") || peek_is(ps, "nan"))
    return fail(ps, LD_ERR_MALFORMED, "floating-point values are not supported");
  if (peek(ps) == '0' && ps->p + 1 < ps->end && !is_value_end((unsigned char)ps->p[1]) &&
      ps->p[1] != '.' && ps->p[1] != 'e' && ps->p[1] != 'E')
    return fail(ps, LD_ERR_MALFORMED, "leading zeros are not allowed");
  uint64_t v;
  int rc = parse_digits(ps, 10, neg ? (uint64_t)INT64_MAX + 1 : (uint64_t)INT64_MAX, &v);
  if (rc != 0)
    return rc;
  *out = neg ? (v == (uint64_t)INT64_MAX + 1 ? INT64_MIN : -(int64_t)v) : (int64_t)v;
  return 0;
}

static bool take_word(parser_t *ps, const char *word) {
  size_t n = strlen(word);
  if (!peek_is(ps, word) || !is_value_end(ps->p + n < ps->end ? (unsigned char)ps->p[n] : -1))
    return false;
  ps->p += n;
  return true;
}

/* ---- values ------------------------------------------------------------------------------- */

static void value_clear(ld_toml_value_t *v) {
  free(v->string);
  for (size_t i = 0; i < v->n_items; i++)
    value_clear(&v->items[i]);
  free(v->items);
  memset(v, 0, sizeof *v);
}

static int parse_scalar(parser_t *ps, ld_toml_value_t *v) {
  int c = peek(ps);
  if (c == '"' || c == '\'') {
    v->type = LD_TOML_STRING;
    return parse_string(ps, &v->string);
  }
  bool truth = take_word(ps, "true");
  if (truth || take_word(ps, "false")) {
    v->type = LD_TOML_BOOL;
    v->boolean = truth;
    return 0;
  }
  if (c == '{')
    return fail(ps, LD_ERR_MALFORMED, "inline tables are not supported");
  if (c == '-' || c == '+' || (c >= '0' && c <= '9') || c == 'i' || c == 'n') {
    v->type = LD_TOML_INTEGER;
    return parse_integer(ps, &v->integer);
  }
  if (c < 0 || c == '\n' || c == '\r' || c == '#')
    return fail(ps, LD_ERR_MALFORMED, "missing value");
  return fail(ps, LD_ERR_MALFORMED, "invalid value starting with '%c'", c);
}

static int array_push(parser_t *ps, ld_toml_value_t *arr, size_t *cap) {
  if (arr->n_items >= LD_TOML_MAX_ITEMS)
    return fail(ps, LD_ERR_TOO_LARGE, "array longer than %u items", LD_TOML_MAX_ITEMS);
  if (arr->n_items == *cap) {
    size_t ncap = *cap == 0 ? 8 : *cap * 2;
    ld_toml_value_t *items = realloc(arr->items, ncap * sizeof *items);
    if (items == NULL)
      return LD_ERR_NOMEM;
    arr->items = items;
    *cap = ncap;
  }
  memset(&arr->items[arr->n_items], 0, sizeof arr->items[0]);
  return 0;
}

static int parse_array_item(parser_t *ps, ld_toml_value_t *arr, size_t *cap) {
  if (peek(ps) == '[')
    return fail(ps, LD_ERR_MALFORMED, "nested arrays are not supported");
  int rc = array_push(ps, arr, cap);
  if (rc != 0)
    return rc;
  rc = parse_scalar(ps, &arr->items[arr->n_items]);
  arr->n_items++; /* counted even on failure so that value_clear frees a partial string */
  return rc;
}

static int parse_array(parser_t *ps, ld_toml_value_t *v) {
  size_t cap = 0;
  v->type = LD_TOML_ARRAY;
  ps->p++;
  for (;;) {
    int rc = skip_array_space(ps);
    if (rc != 0)
      return rc;
    if (peek(ps) == ']')
      break;
    rc = parse_array_item(ps, v, &cap);
    if (rc == 0)
      rc = skip_array_space(ps);
    if (rc != 0)
      return rc;
    if (peek(ps) == ',') {
      ps->p++;
      continue;
    }
    if (peek(ps) == ']')
      break;
    return fail(ps, LD_ERR_MALFORMED, at_end(ps) ? "unterminated array" : "expected ',' or ']'");
  }
  ps->p++;
  return 0;
}

static int parse_value(parser_t *ps, ld_toml_value_t *v) {
  return peek(ps) == '[' ? parse_array(ps, v) : parse_scalar(ps, v);
}

/* ---- document ------------------------------------------------------------------------------ */

static int add_entry(parser_t *ps, ld_toml_t *doc, size_t *cap, char *key, unsigned line) {
  if (ld_toml_get(doc, key) != NULL) {
    ps->line = line;
    return fail(ps, LD_ERR_MALFORMED, "duplicate key '%s'", key);
  }
  if (doc->n_entries >= LD_TOML_MAX_ENTRIES)
    return fail(ps, LD_ERR_TOO_LARGE, "more than %u keys", LD_TOML_MAX_ENTRIES);
  if (doc->n_entries == *cap) {
    size_t ncap = *cap == 0 ? 16 : *cap * 2;
    ld_toml_entry_t *e = realloc(doc->entries, ncap * sizeof *e);
    if (e == NULL)
      return LD_ERR_NOMEM;
    doc->entries = e;
    *cap = ncap;
  }
  ld_toml_entry_t *e = &doc->entries[doc->n_entries++];
  memset(e, 0, sizeof *e);
  e->key = key;
  e->line = line;
  return 0;
}

static int parse_key_value(parser_t *ps, ld_toml_t *doc, size_t *cap) {
  unsigned line = ps->line;
  char *key = NULL;
  int rc = parse_key(ps, &key);
  if (rc != 0)
    return rc;
  skip_blank(ps);
  if (peek(ps) == '.') {
    free(key);
    return fail(ps, LD_ERR_MALFORMED, "dotted keys are not supported");
  }
  if (peek(ps) != '=') {
    free(key);
    return fail(ps, LD_ERR_MALFORMED, "expected '=' after the key");
  }
  ps->p++;
  rc = add_entry(ps, doc, cap, key, line);
  if (rc != 0) {
    free(key);
    return rc;
  }
  skip_blank(ps);
  rc = parse_value(ps, &doc->entries[doc->n_entries - 1].value);
  return rc != 0 ? rc : expect_line_end(ps);
}

static int parse_line(parser_t *ps, ld_toml_t *doc, size_t *cap) {
  skip_blank(ps);
  int c = peek(ps);
  if (c == '#')
    return expect_line_end(ps);
  if (c < 0 || take_newline(ps))
    return 0;
  if (c == '[')
    return fail(ps, LD_ERR_MALFORMED, "tables are not supported; write every key at top level");
  return parse_key_value(ps, doc, cap);
}

int ld_toml_parse(const char *text, size_t len, ld_toml_t *doc, char *err, size_t errlen) {
  parser_t ps = {text, text + len, 1, err, errlen};
  memset(doc, 0, sizeof *doc);
  if (err != NULL && errlen > 0)
    err[0] = '\0';
  if (len > LD_TOML_MAX_INPUT)
    return fail(&ps, LD_ERR_TOO_LARGE, "file larger than %u bytes", LD_TOML_MAX_INPUT);
  if (memchr(text, '\0', len) != NULL)
    return fail(&ps, LD_ERR_MALFORMED, "NUL byte in the file");
  if (!utf8_valid(text, len))
    return fail(&ps, LD_ERR_MALFORMED, "the file is not valid UTF-8");
  if (peek_is(&ps, "\xEF\xBB\xBF"))
    ps.p += 3;
  size_t cap = 0;
  while (!at_end(&ps)) {
    int rc = parse_line(&ps, doc, &cap);
    if (rc != 0) {
      ld_toml_clear(doc);
      return rc;
    }
  }
  return 0;
}

void ld_toml_clear(ld_toml_t *doc) {
  for (size_t i = 0; i < doc->n_entries; i++) {
    free(doc->entries[i].key);
    value_clear(&doc->entries[i].value);
  }
  free(doc->entries);
  memset(doc, 0, sizeof *doc);
}

const ld_toml_entry_t *ld_toml_get(const ld_toml_t *doc, const char *key) {
  for (size_t i = 0; i < doc->n_entries; i++)
    if (strcmp(doc->entries[i].key, key) == 0)
      return &doc->entries[i];
  return NULL;
}

const char *ld_toml_type_name(ld_toml_type_t type) {
  switch (type) {
  case LD_TOML_STRING:
    return "string";
  case LD_TOML_INTEGER:
    return "integer";
  case LD_TOML_BOOL:
    return "boolean";
  case LD_TOML_ARRAY:
    return "array";
  }
  return "unknown";
}
