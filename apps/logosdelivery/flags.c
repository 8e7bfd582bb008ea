#include "logosdelivery/flags.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "base/error.h"

static int fail(ld_flags_result_t *res, const char *name, const char *what) {
  snprintf(res->error, sizeof res->error, "--%s: %s", name, what);
  return LD_ERR_INVALID_ARG;
}

static const ld_flag_t *find_flag(const ld_flag_t *flags, size_t n, const char *name,
                                  size_t name_len) {
  for (size_t i = 0; i < n; i++)
    if (strlen(flags[i].name) == name_len && strncmp(flags[i].name, name, name_len) == 0)
      return &flags[i];
  return NULL;
}

static int parse_bool(const char *v, bool *out) {
  if (strcasecmp(v, "true") == 0 || strcmp(v, "1") == 0 || strcasecmp(v, "yes") == 0)
    *out = true;
  else if (strcasecmp(v, "false") == 0 || strcmp(v, "0") == 0 || strcasecmp(v, "no") == 0)
    *out = false;
  else
    return LD_ERR_INVALID_ARG;
  return 0;
}

static int set_string(char *dst, const char *v, ld_flags_result_t *res, const char *name) {
  if (strlen(v) >= LD_FLAG_STRING_MAX)
    return fail(res, name, "value too long");
  strcpy(dst, v);
  return 0;
}

static int set_value(const ld_flag_t *f, const char *v, ld_flags_result_t *res) {
  switch (f->kind) {
  case LD_FLAG_STRING:
    return set_string(f->target, v, res, f->name);
  case LD_FLAG_BOOL:
    if (parse_bool(v, f->target) != 0)
      return fail(res, f->name, "expected true or false");
    return 0;
  case LD_FLAG_INT: {
    char *end;
    errno = 0;
    long long x = strtoll(v, &end, 10);
    if (errno != 0 || end == v || *end != '\0')
      return fail(res, f->name, "expected an integer");
    if (x < f->min || x > f->max)
      return fail(res, f->name, "value out of range");
    *(int64_t *)f->target = x;
    return 0;
  }
  case LD_FLAG_LIST: {
    ld_strlist_t *l = f->target;
    if (l->count >= LD_FLAG_LIST_MAX)
      return fail(res, f->name, "too many values");
    int rc = set_string(l->items[l->count], v, res, f->name);
    if (rc == 0)
      l->count++;
    return rc;
  }
  }
  return LD_ERR_INVALID_ARG;
}

static int parse_one(const ld_flag_t *flags, size_t n, int argc, char **argv, int *i,
                     ld_flags_result_t *res) {
  const char *arg = argv[*i] + 2;
  size_t name_len = strcspn(arg, "=:");
  const ld_flag_t *f = find_flag(flags, n, arg, name_len);
  if (f == NULL) {
    snprintf(res->error, sizeof res->error, "unknown flag --%.*s", (int)name_len, arg);
    return LD_ERR_INVALID_ARG;
  }
  if (f - flags < (ptrdiff_t)(sizeof res->seen))
    res->seen[f - flags] = true;
  if (arg[name_len] != '\0')
    return set_value(f, arg + name_len + 1, res);
  if (f->kind == LD_FLAG_BOOL) {
    *(bool *)f->target = true;
    return 0;
  }
  if (*i + 1 >= argc)
    return fail(res, f->name, "missing value");
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

static void env_name(const char *prefix, const char *flag, char *out, size_t cap) {
  size_t k = (size_t)snprintf(out, cap, "%s", prefix);
  for (const char *p = flag; *p != '\0' && k + 1 < cap; p++)
    out[k++] = *p == '-' ? '_' : (char)toupper((unsigned char)*p);
  out[k] = '\0';
}

static int apply_env_list(const ld_flag_t *f, const char *v, ld_flags_result_t *res) {
  char item[LD_FLAG_STRING_MAX];
  while (*v != '\0') {
    size_t len = strcspn(v, ",");
    if (len >= sizeof item)
      return fail(res, f->name, "value too long");
    memcpy(item, v, len);
    item[len] = '\0';
    if (len > 0) {
      int rc = set_value(f, item, res);
      if (rc != 0)
        return rc;
    }
    v += len + (v[len] == ',' ? 1 : 0);
  }
  return 0;
}

int ld_flags_apply_env(const ld_flag_t *flags, size_t n_flags, const char *prefix,
                       ld_flags_result_t *res) {
  for (size_t i = 0; i < n_flags && i < sizeof res->seen; i++) {
    if (res->seen[i])
      continue;
    char name[160];
    env_name(prefix, flags[i].name, name, sizeof name);
    const char *v = getenv(name);
    if (v == NULL)
      continue;
    int rc = flags[i].kind == LD_FLAG_LIST ? apply_env_list(&flags[i], v, res)
                                           : set_value(&flags[i], v, res);
    if (rc != 0)
      return rc;
    res->seen[i] = true;
  }
  return 0;
}

void ld_flags_print_help(const ld_flag_t *flags, size_t n_flags, void *file) {
  for (size_t i = 0; i < n_flags; i++)
    fprintf(file, "  --%-28s %s\n", flags[i].name, flags[i].help);
}
