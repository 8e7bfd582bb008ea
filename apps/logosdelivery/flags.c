#include "logosdelivery/flags.h"

#include <ctype.h>
#include <inttypes.h>
#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "node/options.h"

/* Where a value being set came from, so that an error names it and says how to fix it there. */
typedef struct origin {
  ld_flag_source_t source;
  const char *var; /* LD_FLAG_SRC_ENV: the variable */
  unsigned line;   /* LD_FLAG_SRC_FILE: the line of the key */
} origin_t;

static const origin_t from_cli = {LD_FLAG_SRC_CLI, NULL, 0};

/* "--name", "VAR (--name)" or "line N: name": the place a refused value is reported at. */
static void origin_label(const ld_flag_t *f, const origin_t *o, char *out, size_t cap) {
  if (o->source == LD_FLAG_SRC_ENV)
    snprintf(out, cap, "%s (--%s)", o->var, f->name);
  else if (o->source == LD_FLAG_SRC_FILE)
    snprintf(out, cap, "line %u: %s", o->line, f->name);
  else
    snprintf(out, cap, "--%s", f->name);
}

/* How the value is written where it came from: "--name=V", "VAR=V" or "name = V". */
static void written_as(const ld_flag_t *f, const origin_t *o, const char *v, char *out,
                       size_t cap) {
  if (o->source == LD_FLAG_SRC_ENV)
    snprintf(out, cap, "%s=%s", o->var, v);
  else if (o->source == LD_FLAG_SRC_FILE)
    snprintf(out, cap, "%s = %s", f->name, v);
  else
    snprintf(out, cap, "--%s=%s", f->name, v);
}

/* What to do about a refused value of `f`: write it as the flag's kind wants. */
static void value_hint(const ld_flag_t *f, const origin_t *o, char *out, size_t cap) {
  char a[96], b[96];
  switch (f->kind) {
  case LD_FLAG_BOOL:
    written_as(f, o, "true", a, sizeof a);
    written_as(f, o, "false", b, sizeof b);
    snprintf(out, cap, "write %s or %s", a, b);
    return;
  case LD_FLAG_INT:
    written_as(f, o, "<n>", a, sizeof a);
    snprintf(out, cap, "write %s with <n> in %" PRId64 "..%" PRId64, a, f->min, f->max);
    return;
  case LD_FLAG_STRING:
  case LD_FLAG_LIST:
    break;
  }
  written_as(f, o, "<value>", a, sizeof a);
  snprintf(out, cap, "write %s (--help describes --%s)", a, f->name);
}

/* res->error from a format; a message longer than the buffer is cut, never overrun (the
 * variable and its fix come first, so a cut message still names them). */
__attribute__((format(printf, 2, 3))) static void error_text(ld_flags_result_t *res,
                                                             const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(res->error, sizeof res->error, fmt, ap);
  va_end(ap);
}

/* "<where>: <what>; <next step>" in res->error. */
static int fail_at(ld_flags_result_t *res, const ld_flag_t *f, const origin_t *o,
                   const char *what) {
  char where[192], hint[256];
  origin_label(f, o, where, sizeof where);
  value_hint(f, o, hint, sizeof hint);
  snprintf(res->error, sizeof res->error, "%s: %s; %s", where, what, hint);
  return LD_ERR_INVALID_ARG;
}

/* A value refused for its length or count: the hint is about that, not the syntax. */
static int fail_size(ld_flags_result_t *res, const ld_flag_t *f, const origin_t *o,
                     const char *what, const char *hint) {
  char where[192];
  origin_label(f, o, where, sizeof where);
  snprintf(res->error, sizeof res->error, "%s: %s; %s", where, what, hint);
  return LD_ERR_INVALID_ARG;
}

void ld_strlist_clear(ld_strlist_t *l) {
  for (size_t i = 0; i < l->count; i++)
    free(l->items[i]);
  free(l->items);
  l->items = NULL;
  l->count = 0;
}

static const ld_flag_t *find_flag(const ld_flag_t *flags, size_t n, const char *name,
                                  size_t name_len) {
  for (size_t i = 0; i < n; i++)
    if (strlen(flags[i].name) == name_len && strncmp(flags[i].name, name, name_len) == 0)
      return &flags[i];
  return NULL;
}

int ld_flags_find(const ld_flag_t *flags, size_t n_flags, const char *name) {
  const ld_flag_t *f = find_flag(flags, n_flags, name, strlen(name));
  return f != NULL ? (int)(f - flags) : -1;
}

static void mark_seen(const ld_flag_t *flags, const ld_flag_t *f, ld_flags_result_t *res,
                      ld_flag_source_t source, unsigned line) {
  ptrdiff_t i = f - flags;
  if (i >= (ptrdiff_t)LD_FLAG_MAX_FLAGS)
    return;
  res->seen[i] = true;
  res->source[i] = source;
  res->line[i] = line;
}

static int set_string(const ld_flag_t *f, const char *v, const origin_t *o,
                      ld_flags_result_t *res) {
  if (strlen(v) >= LD_FLAG_STRING_MAX)
    return fail_size(res, f, o, "value too long", "give a shorter value");
  strcpy(f->target, v);
  return 0;
}

static int list_append(const ld_flag_t *f, const char *v, const origin_t *o,
                       ld_flags_result_t *res) {
  ld_strlist_t *l = f->target;
  if (l->count >= LD_FLAG_LIST_MAX)
    return fail_size(res, f, o, "too many values", "give fewer values");
  if (strlen(v) >= LD_FLAG_STRING_MAX)
    return fail_size(res, f, o, "value too long", "give a shorter value");
  char **items = realloc(l->items, (l->count + 1) * sizeof *items);
  if (items == NULL)
    return LD_ERR_NOMEM;
  l->items = items;
  l->items[l->count] = strdup(v);
  if (l->items[l->count] == NULL)
    return LD_ERR_NOMEM;
  l->count++;
  return 0;
}

/* Shows a refused value inside quotes, cut to a readable length. */
static void quoted(const char *v, char *out, size_t cap) {
  if (strlen(v) + 3 <= cap)
    snprintf(out, cap, "'%s'", v);
  else
    snprintf(out, cap, "'%.*s…'", (int)(cap > 8 ? cap - 8 : 0), v);
}

static int set_int(const ld_flag_t *f, const char *v, const origin_t *o, ld_flags_result_t *res) {
  char why[160], what[320], q[96];
  if (ld_node_option_parse_int(v, f->min, f->max, f->target, why, sizeof why) == 0)
    return 0;
  quoted(v, q, sizeof q);
  if (strstr(why, "out of range") != NULL) /* names the value already */
    snprintf(what, sizeof what, "%s", why);
  else
    snprintf(what, sizeof what, "%s, got %s", why, q);
  return fail_at(res, f, o, what);
}

static int set_value_at(const ld_flag_t *f, const char *v, const origin_t *o,
                        ld_flags_result_t *res) {
  char what[160], q[96];
  switch (f->kind) {
  case LD_FLAG_STRING:
    return set_string(f, v, o, res);
  case LD_FLAG_BOOL:
    if (ld_node_option_parse_bool(v, f->target) == 0)
      return 0;
    quoted(v, q, sizeof q);
    snprintf(what, sizeof what, "expected true or false, got %s", q);
    return fail_at(res, f, o, what);
  case LD_FLAG_INT:
    return set_int(f, v, o, res);
  case LD_FLAG_LIST:
    return list_append(f, v, o, res);
  }
  return LD_ERR_INVALID_ARG;
}

static int set_value(const ld_flag_t *f, const char *v, ld_flags_result_t *res) {
  return set_value_at(f, v, &from_cli, res);
}

/* Edit distance of two short names (flag names are under 64 characters); larger ones count as
 * far apart. */
static size_t name_distance(const char *a, size_t la, const char *b) {
  size_t lb = strlen(b);
  if (la >= 64 || lb >= 64)
    return SIZE_MAX;
  size_t row[65];
  for (size_t j = 0; j <= lb; j++)
    row[j] = j;
  for (size_t i = 1; i <= la; i++) {
    size_t diag = row[0];
    row[0] = i;
    for (size_t j = 1; j <= lb; j++) {
      size_t up = row[j];
      size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
      size_t best = diag + cost;
      if (row[j] + 1 < best)
        best = row[j] + 1;
      if (row[j - 1] + 1 < best)
        best = row[j - 1] + 1;
      row[j] = best;
      diag = up;
    }
  }
  return row[lb];
}

const char *ld_flags_closest(const ld_flag_t *flags, size_t n_flags, const char *name,
                             size_t name_len) {
  const char *best = NULL;
  size_t best_d = name_len / 3 + 1; /* a typo or two, not another word */
  if (best_d > 3)
    best_d = 3;
  for (size_t i = 0; i < n_flags; i++) {
    size_t d = name_distance(name, name_len, flags[i].name);
    if (d <= best_d && (best == NULL || d < best_d)) {
      best = flags[i].name;
      best_d = d;
    }
  }
  return best;
}

static int unknown_flag(const ld_flag_t *flags, size_t n, const char *name, size_t name_len,
                        ld_flags_result_t *res) {
  const char *near = ld_flags_closest(flags, n, name, name_len);
  if (near != NULL)
    snprintf(res->error, sizeof res->error,
             "unknown flag --%.*s; did you mean --%s? (--help lists the flags)", (int)name_len,
             name, near);
  else
    snprintf(res->error, sizeof res->error, "unknown flag --%.*s; --help lists the flags",
             (int)name_len, name);
  return LD_ERR_INVALID_ARG;
}

static int parse_one(const ld_flag_t *flags, size_t n, int argc, char **argv, int *i,
                     ld_flags_result_t *res) {
  const char *arg = argv[*i] + 2;
  size_t name_len = strcspn(arg, "=:");
  const ld_flag_t *f = find_flag(flags, n, arg, name_len);
  if (f == NULL)
    return unknown_flag(flags, n, arg, name_len, res);
  mark_seen(flags, f, res, LD_FLAG_SRC_CLI, 0);
  if (arg[name_len] != '\0')
    return set_value(f, arg + name_len + 1, res);
  if (f->kind == LD_FLAG_BOOL) {
    *(bool *)f->target = true;
    return 0;
  }
  if (*i + 1 >= argc) {
    char hint[160];
    snprintf(hint, sizeof hint, "write --%s=<value> (--help describes it)", f->name);
    return fail_size(res, f, &from_cli, "missing value", hint);
  }
  (*i)++;
  return set_value(f, argv[*i], res);
}

int ld_flags_parse(const ld_flag_t *flags, size_t n_flags, int argc, char **argv,
                   ld_flags_result_t *res) {
  for (int i = 0; i < argc; i++) {
    if (strncmp(argv[i], "--", 2) == 0 && argv[i][2] != '\0') {
      int rc = parse_one(flags, n_flags, argc, argv, &i, res);
      if (rc != 0)
        return rc;
    } else if (res->n_positional < sizeof res->positional / sizeof res->positional[0]) {
      res->positional[res->n_positional++] = argv[i];
    } else {
      snprintf(res->error, sizeof res->error, "unexpected argument '%s'", argv[i]);
      return LD_ERR_INVALID_ARG;
    }
  }
  return 0;
}

/* ---- environment ---------------------------------------------------------------------------- */

static void env_name(const char *prefix, const char *flag, char *out, size_t cap) {
  size_t k = (size_t)snprintf(out, cap, "%s", prefix);
  for (const char *p = flag; *p != '\0' && k + 1 < cap; p++)
    out[k++] = *p == '-' ? '_' : (char)toupper((unsigned char)*p);
  out[k] = '\0';
}

static int apply_env_csv(const ld_flag_t *f, const char *v, const origin_t *o,
                         ld_flags_result_t *res) {
  char item[LD_FLAG_STRING_MAX];
  while (*v != '\0') {
    size_t len = strcspn(v, ",");
    if (len >= sizeof item)
      return fail_size(res, f, o, "value too long", "give shorter comma-separated values");
    memcpy(item, v, len);
    item[len] = '\0';
    if (len > 0) {
      int rc = set_value_at(f, item, o, res);
      if (rc != 0)
        return rc;
    }
    v += len + (v[len] == ',' ? 1 : 0);
  }
  return 0;
}

/* A JSON array of strings and integers, as nwaku's parseCmdArg for seq[T] reads it. */
static int apply_env_json(const ld_flag_t *f, const char *v, const origin_t *o,
                          ld_flags_result_t *res) {
  json_error_t jerr;
  json_t *arr = json_loads(v, JSON_REJECT_DUPLICATES, &jerr);
  int rc = 0;
  if (arr == NULL || !json_is_array(arr)) {
    error_text(res, "%s: not a JSON array: %s; write %s='[\"a\",\"b\"]' or %s=a,b", o->var,
               arr == NULL ? jerr.text : "another JSON value", o->var, o->var);
    rc = LD_ERR_INVALID_ARG;
  }
  for (size_t i = 0; rc == 0 && i < json_array_size(arr); i++) {
    json_t *item = json_array_get(arr, i);
    char num[32];
    if (json_is_string(item)) {
      rc = set_value_at(f, json_string_value(item), o, res);
    } else if (json_is_integer(item)) {
      snprintf(num, sizeof num, "%" JSON_INTEGER_FORMAT, json_integer_value(item));
      rc = set_value_at(f, num, o, res);
    } else {
      error_text(res, "%s: array items must be strings or integers; write %s='[\"a\",\"b\"]'",
                 o->var, o->var);
      rc = LD_ERR_INVALID_ARG;
    }
  }
  json_decref(arr);
  return rc;
}

int ld_flags_apply_env(const ld_flag_t *flags, size_t n_flags, const char *prefix,
                       ld_flags_result_t *res) {
  for (size_t i = 0; i < n_flags && i < LD_FLAG_MAX_FLAGS; i++) {
    if (res->seen[i])
      continue;
    char name[160];
    env_name(prefix, flags[i].name, name, sizeof name);
    const char *v = getenv(name);
    if (v == NULL)
      continue;
    origin_t o = {LD_FLAG_SRC_ENV, name, 0};
    int rc;
    if (flags[i].kind != LD_FLAG_LIST)
      rc = set_value_at(&flags[i], v, &o, res);
    else if (v[strspn(v, " \t")] == '[')
      rc = apply_env_json(&flags[i], v, &o, res);
    else
      rc = apply_env_csv(&flags[i], v, &o, res);
    if (rc != 0)
      return rc;
    mark_seen(flags, &flags[i], res, LD_FLAG_SRC_ENV, 0);
  }
  return 0;
}

/* ---- config file ---------------------------------------------------------------------------- */

static int toml_fail(ld_flags_result_t *res, const ld_toml_entry_t *e, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static int toml_fail(ld_flags_result_t *res, const ld_toml_entry_t *e, const char *fmt, ...) {
  int n = snprintf(res->error, sizeof res->error, "line %u: %s: ", e->line, e->key);
  if (n >= 0 && (size_t)n < sizeof res->error) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(res->error + n, sizeof res->error - (size_t)n, fmt, ap);
    va_end(ap);
  }
  return LD_ERR_INVALID_ARG;
}

static int toml_set(const ld_flag_t *f, const ld_toml_entry_t *e, const char *text,
                    ld_flags_result_t *res) {
  origin_t o = {LD_FLAG_SRC_FILE, NULL, e->line};
  return set_value_at(f, text, &o, res);
}

static int toml_scalar_text(const ld_toml_value_t *v, char *buf, size_t cap, const char **out) {
  switch (v->type) {
  case LD_TOML_STRING:
    *out = v->string;
    return 0;
  case LD_TOML_INTEGER:
    snprintf(buf, cap, "%" PRId64, v->integer);
    *out = buf;
    return 0;
  case LD_TOML_BOOL:
    *out = v->boolean ? "true" : "false";
    return 0;
  case LD_TOML_ARRAY:
    break;
  }
  return LD_ERR_INVALID_ARG;
}

static const char *with_article(ld_toml_type_t type) {
  return type == LD_TOML_INTEGER ? "an integer"
         : type == LD_TOML_ARRAY ? "an array"
         : type == LD_TOML_BOOL  ? "a boolean"
                                 : "a string";
}

static ld_toml_type_t expected_type(ld_flag_kind_t kind) {
  return kind == LD_FLAG_INT    ? LD_TOML_INTEGER
         : kind == LD_FLAG_BOOL ? LD_TOML_BOOL
                                : LD_TOML_STRING;
}

static int apply_toml_list(const ld_flag_t *f, const ld_toml_entry_t *e, ld_flags_result_t *res) {
  const ld_toml_value_t *v = &e->value;
  size_t n = v->type == LD_TOML_ARRAY ? v->n_items : 1;
  for (size_t i = 0; i < n; i++) {
    const ld_toml_value_t *item = v->type == LD_TOML_ARRAY ? &v->items[i] : v;
    char buf[32];
    const char *text;
    if (item->type == LD_TOML_BOOL || toml_scalar_text(item, buf, sizeof buf, &text) != 0)
      return toml_fail(res, e, "expected strings or integers, got %s; write %s = [\"a\", \"b\"]",
                       with_article(item->type), e->key);
    int rc = toml_set(f, e, text, res);
    if (rc != 0)
      return rc;
  }
  return 0;
}

static int apply_toml_entry(const ld_flag_t *f, const ld_toml_entry_t *e, ld_flags_result_t *res) {
  if (f->kind == LD_FLAG_LIST)
    return apply_toml_list(f, e, res);
  ld_toml_type_t want = expected_type(f->kind);
  if (e->value.type != want) {
    char what[96];
    snprintf(what, sizeof what, "expected %s, got %s", with_article(want),
             with_article(e->value.type));
    origin_t o = {LD_FLAG_SRC_FILE, NULL, e->line};
    return fail_at(res, f, &o, what);
  }
  char buf[32];
  const char *text;
  toml_scalar_text(&e->value, buf, sizeof buf, &text);
  return toml_set(f, e, text, res);
}

static bool ignored(const char *const *ignore, const char *key) {
  for (size_t i = 0; ignore != NULL && ignore[i] != NULL; i++)
    if (strcmp(ignore[i], key) == 0)
      return true;
  return false;
}

int ld_flags_apply_toml(const ld_flag_t *flags, size_t n_flags, const ld_toml_t *doc,
                        const char *const *ignore, ld_flags_result_t *res) {
  for (size_t i = 0; i < doc->n_entries; i++) {
    const ld_toml_entry_t *e = &doc->entries[i];
    if (ignored(ignore, e->key))
      continue;
    const ld_flag_t *f = find_flag(flags, n_flags, e->key, strlen(e->key));
    if (f == NULL) {
      const char *near = ld_flags_closest(flags, n_flags, e->key, strlen(e->key));
      if (near != NULL)
        return toml_fail(res, e, "unknown option; did you mean %s? (keys are the flag names)",
                         near);
      return toml_fail(res, e,
                       "unknown option; remove it (keys are the flag names, --help lists "
                       "them)");
    }
    if (f - flags < (ptrdiff_t)LD_FLAG_MAX_FLAGS && res->seen[f - flags])
      continue;
    int rc = apply_toml_entry(f, e, res);
    if (rc != 0)
      return rc;
    mark_seen(flags, f, res, LD_FLAG_SRC_FILE, e->line);
  }
  return 0;
}

void ld_flags_origin(const ld_flag_t *flags, size_t index, const ld_flags_result_t *res,
                     const char *env_prefix, const char *file, char *out, size_t cap) {
  ld_flag_source_t src = index < LD_FLAG_MAX_FLAGS ? res->source[index] : LD_FLAG_SRC_DEFAULT;
  if (src == LD_FLAG_SRC_ENV)
    env_name(env_prefix, flags[index].name, out, cap);
  else if (src == LD_FLAG_SRC_FILE)
    snprintf(out, cap, "config file '%s': line %u: %s", file != NULL ? file : "?", res->line[index],
             flags[index].name);
  else
    snprintf(out, cap, "--%s", flags[index].name);
}

void ld_flags_print_help(const ld_flag_t *flags, size_t n_flags, void *file) {
  for (size_t i = 0; i < n_flags; i++)
    fprintf(file, "  --%-28s %s\n", flags[i].name, flags[i].help);
}
