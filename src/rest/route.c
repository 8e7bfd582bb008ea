#include "rest/route.h"

#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "base/hex.h"

typedef struct segment {
  const char *s;
  size_t len;
  bool param;
} segment_t;

typedef struct route {
  char method[LD_ROUTE_MAX_METHOD + 1];
  char *pattern;
  size_t n_segs;
  segment_t segs[LD_ROUTE_MAX_SEGMENTS];
  void *handler;
} route_t;

struct ld_route_table {
  route_t *routes;
  size_t n;
};

ld_route_table_t *ld_route_table_new(void) {
  return calloc(1, sizeof(ld_route_table_t));
}

void ld_route_table_free(ld_route_table_t *t) {
  if (t == NULL)
    return;
  for (size_t i = 0; i < t->n; i++)
    free(t->routes[i].pattern);
  free(t->routes);
  free(t);
}

/* Splits "/a/b" into {"a", "b"}; "/" gives no segment. -1 when `path` does not start with '/'
 * or has more than `max` segments. */
static int split_path(const char *path, segment_t *segs, size_t max) {
  if (path[0] != '/')
    return -1;
  if (path[1] == '\0')
    return 0;
  size_t n = 0;
  const char *p = path + 1;
  for (;;) {
    const char *slash = strchr(p, '/');
    size_t len = slash != NULL ? (size_t)(slash - p) : strlen(p);
    if (n == max)
      return -1;
    segs[n++] = (segment_t){.s = p, .len = len, .param = false};
    if (slash == NULL)
      return (int)n;
    p = slash + 1;
  }
}

static bool valid_name_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

/* Marks `{name}` segments as parameters; false for an invalid or empty segment. */
static bool classify_segment(segment_t *seg, size_t *n_params) {
  if (seg->len == 0)
    return false;
  if (seg->s[0] != '{')
    return memchr(seg->s, '{', seg->len) == NULL && memchr(seg->s, '}', seg->len) == NULL;
  if (seg->len < 3 || seg->len - 2 > LD_ROUTE_MAX_NAME || seg->s[seg->len - 1] != '}')
    return false;
  for (size_t i = 1; i + 1 < seg->len; i++)
    if (!valid_name_char(seg->s[i]))
      return false;
  if (++*n_params > LD_ROUTE_MAX_PARAMS)
    return false;
  seg->param = true;
  return true;
}

static bool valid_method(const char *method) {
  size_t len = strlen(method);
  if (len == 0 || len > LD_ROUTE_MAX_METHOD)
    return false;
  for (size_t i = 0; i < len; i++)
    if (method[i] < 'A' || method[i] > 'Z')
      return false;
  return true;
}

static int parse_pattern(route_t *r, const char *pattern) {
  r->pattern = strdup(pattern);
  if (r->pattern == NULL)
    return LD_ERR_NOMEM;
  int n = split_path(r->pattern, r->segs, LD_ROUTE_MAX_SEGMENTS);
  size_t n_params = 0;
  for (int i = 0; n > 0 && i < n; i++)
    if (!classify_segment(&r->segs[i], &n_params))
      n = -1;
  if (n < 0) {
    free(r->pattern);
    return LD_ERR_INVALID_ARG;
  }
  r->n_segs = (size_t)n;
  return 0;
}

static const route_t *find_exact(const ld_route_table_t *t, const char *method,
                                 const char *pattern) {
  for (size_t i = 0; i < t->n; i++)
    if (strcmp(t->routes[i].method, method) == 0 && strcmp(t->routes[i].pattern, pattern) == 0)
      return &t->routes[i];
  return NULL;
}

int ld_route_add(ld_route_table_t *t, const char *method, const char *pattern, void *handler) {
  if (t == NULL || method == NULL || pattern == NULL || !valid_method(method))
    return LD_ERR_INVALID_ARG;
  if (find_exact(t, method, pattern) != NULL)
    return LD_ERR_EXISTS;
  if (t->n == LD_ROUTE_MAX_ROUTES)
    return LD_ERR_LIMIT;
  route_t r = {.handler = handler};
  strcpy(r.method, method);
  int rc = parse_pattern(&r, pattern);
  if (rc != 0)
    return rc;
  route_t *grown = realloc(t->routes, (t->n + 1) * sizeof *grown);
  if (grown == NULL) {
    free(r.pattern);
    return LD_ERR_NOMEM;
  }
  t->routes = grown;
  t->routes[t->n++] = r;
  return 0;
}

int ld_route_remove(ld_route_table_t *t, const char *method, const char *pattern, void **handler) {
  if (t == NULL || method == NULL || pattern == NULL)
    return LD_ERR_INVALID_ARG;
  const route_t *r = find_exact(t, method, pattern);
  if (r == NULL)
    return LD_ERR_NOT_FOUND;
  size_t i = (size_t)(r - t->routes);
  if (handler != NULL)
    *handler = r->handler;
  free(t->routes[i].pattern);
  memmove(&t->routes[i], &t->routes[i + 1], (t->n - i - 1) * sizeof *t->routes);
  t->n--;
  return 0;
}

static bool segments_match(const route_t *r, const segment_t *path, size_t n) {
  if (r->n_segs != n)
    return false;
  for (size_t i = 0; i < n; i++) {
    const segment_t *s = &r->segs[i];
    bool differs = s->param ? path[i].len == 0
                            : (s->len != path[i].len || memcmp(s->s, path[i].s, s->len) != 0);
    if (differs)
      return false;
  }
  return true;
}

int ld_url_decode(const char *in, size_t len, char *out, size_t cap, size_t *outlen) {
  size_t o = 0;
  for (size_t i = 0; i < len; i++) {
    char c = in[i];
    if (c == '%') {
      int hi = i + 1 < len ? ld_hex_digit_value(in[i + 1]) : -1;
      int lo = i + 2 < len ? ld_hex_digit_value(in[i + 2]) : -1;
      if (hi < 0 || lo < 0 || (hi == 0 && lo == 0))
        return LD_ERR_BAD_ENCODING;
      c = (char)(hi << 4 | lo);
      i += 2;
    }
    if (o + 1 >= cap)
      return LD_ERR_LIMIT;
    out[o++] = c;
  }
  if (cap == 0)
    return LD_ERR_LIMIT;
  out[o] = '\0';
  *outlen = o;
  return 0;
}

static int fill_params(const route_t *r, const segment_t *path, ld_route_match_t *m) {
  size_t used = 0;
  m->n_params = 0;
  for (size_t i = 0; i < r->n_segs; i++) {
    if (!r->segs[i].param)
      continue;
    size_t k = m->n_params++, dlen = 0;
    memcpy(m->names[k], r->segs[i].s + 1, r->segs[i].len - 2);
    m->names[k][r->segs[i].len - 2] = '\0';
    int rc = ld_url_decode(path[i].s, path[i].len, m->buf + used, sizeof m->buf - used, &dlen);
    if (rc != 0)
      return LD_ERR_BAD_ENCODING;
    m->values[k] = m->buf + used;
    used += dlen + 1;
  }
  return 0;
}

int ld_route_find(const ld_route_table_t *t, const char *method, const char *path, void **handler,
                  ld_route_match_t *m) {
  if (strlen(path) > LD_ROUTE_MAX_PATH)
    return LD_ERR_TOO_LARGE;
  segment_t segs[LD_ROUTE_MAX_SEGMENTS];
  int n = split_path(path, segs, LD_ROUTE_MAX_SEGMENTS);
  if (n < 0)
    return LD_ERR_NOT_FOUND;
  bool path_known = false;
  for (size_t i = 0; i < t->n; i++) {
    const route_t *r = &t->routes[i];
    if (!segments_match(r, segs, (size_t)n))
      continue;
    path_known = true;
    if (strcmp(r->method, method) != 0)
      continue;
    *handler = r->handler;
    return fill_params(r, segs, m);
  }
  return path_known ? LD_ERR_UNSUPPORTED : LD_ERR_NOT_FOUND;
}

const char *ld_route_param(const ld_route_match_t *m, const char *name) {
  for (size_t i = 0; i < m->n_params; i++)
    if (strcmp(m->names[i], name) == 0)
      return m->values[i];
  return NULL;
}
