#include "metrics/metrics.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "base/utf8.h"

struct ld_metric_series {
  ld_metric_t *family;
  char *values[LD_METRICS_MAX_LABELS];
  double value; /* counter or gauge value; histogram sum */
  uint64_t count;
  uint64_t *buckets; /* histogram: observations per bucket (not cumulative) */
  ld_metric_series_t *next;
};

struct ld_metric {
  char *name;
  char *help;
  ld_metric_type_t type;
  size_t n_labels;
  char *labels[LD_METRICS_MAX_LABELS];
  double *bounds;
  size_t n_bounds;
  ld_metric_series_t *head, *tail;
  size_t n_series;
  ld_metrics_collect_fn collect;
  void *user_data;
  ld_metric_t *next;
};

struct ld_metrics {
  ld_metric_t *head, *tail;
};

struct ld_metrics_emitter {
  ld_buf_t *out;
  const ld_metric_t *family;
  size_t n_emitted;
  int err;
};

/* ---- names ----------------------------------------------------------------------------------- */

static bool name_char(char c, bool first, bool colon) {
  if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || (colon && c == ':'))
    return true;
  return !first && c >= '0' && c <= '9';
}

static bool valid_name(const char *s, bool colon) {
  size_t len = s != NULL ? strlen(s) : 0;
  if (len == 0 || len > LD_METRICS_MAX_NAME)
    return false;
  for (size_t i = 0; i < len; i++)
    if (!name_char(s[i], i == 0, colon))
      return false;
  return true;
}

static bool valid_labels(const char *const *labels, size_t n, ld_metric_type_t type) {
  if (n > LD_METRICS_MAX_LABELS || (n > 0 && labels == NULL))
    return false;
  for (size_t i = 0; i < n; i++) {
    if (!valid_name(labels[i], false) || strncmp(labels[i], "__", 2) == 0)
      return false;
    if (type == LD_METRIC_HISTOGRAM && strcmp(labels[i], "le") == 0)
      return false;
    for (size_t j = 0; j < i; j++)
      if (strcmp(labels[i], labels[j]) == 0)
        return false;
  }
  return true;
}

static bool valid_bounds(const double *b, size_t n) {
  if (n > LD_METRICS_MAX_BUCKETS || (n > 0 && b == NULL))
    return false;
  for (size_t i = 0; i < n; i++)
    if (!isfinite(b[i]) || (i > 0 && b[i] <= b[i - 1]))
      return false;
  return true;
}

/* ---- registry -------------------------------------------------------------------------------- */

ld_metrics_t *ld_metrics_new(void) {
  return calloc(1, sizeof(ld_metrics_t));
}

static void series_free(ld_metric_series_t *s) {
  for (size_t i = 0; i < LD_METRICS_MAX_LABELS; i++)
    free(s->values[i]);
  free(s->buckets);
  free(s);
}

static void family_free(ld_metric_t *m) {
  for (ld_metric_series_t *s = m->head, *next; s != NULL; s = next) {
    next = s->next;
    series_free(s);
  }
  for (size_t i = 0; i < m->n_labels; i++)
    free(m->labels[i]);
  free(m->bounds);
  free(m->name);
  free(m->help);
  free(m);
}

void ld_metrics_free(ld_metrics_t *reg) {
  if (reg == NULL)
    return;
  for (ld_metric_t *m = reg->head, *next; m != NULL; m = next) {
    next = m->next;
    family_free(m);
  }
  free(reg);
}

static ld_metric_t *find_family(const ld_metrics_t *reg, const char *name) {
  for (ld_metric_t *m = reg->head; m != NULL; m = m->next)
    if (strcmp(m->name, name) == 0)
      return m;
  return NULL;
}

static int family_copy(ld_metric_t *m, const char *name, const char *help,
                       const char *const *labels, size_t n_labels) {
  m->name = strdup(name);
  m->help = strdup(help != NULL ? help : "");
  if (m->name == NULL || m->help == NULL)
    return LD_ERR_NOMEM;
  for (size_t i = 0; i < n_labels; i++) {
    if ((m->labels[i] = strdup(labels[i])) == NULL)
      return LD_ERR_NOMEM;
    m->n_labels = i + 1;
  }
  return 0;
}

static ld_metric_t *family_new(ld_metrics_t *reg, const char *name, ld_metric_type_t type,
                               const char *help, const char *const *labels, size_t n_labels,
                               int *err) {
  *err = LD_ERR_INVALID_ARG;
  if (reg == NULL || !valid_name(name, true) || !valid_labels(labels, n_labels, type))
    return NULL;
  *err = LD_ERR_EXISTS;
  if (find_family(reg, name) != NULL)
    return NULL;
  *err = LD_ERR_NOMEM;
  ld_metric_t *m = calloc(1, sizeof *m);
  if (m == NULL)
    return NULL;
  m->type = type;
  if (family_copy(m, name, help, labels, n_labels) != 0) {
    family_free(m);
    return NULL;
  }
  *err = 0;
  return m;
}

static void family_append(ld_metrics_t *reg, ld_metric_t *m) {
  if (reg->tail != NULL)
    reg->tail->next = m;
  else
    reg->head = m;
  reg->tail = m;
}

static ld_metric_t *stored_new(ld_metrics_t *reg, const char *name, ld_metric_type_t type,
                               const char *help, const char *const *labels, size_t n_labels,
                               const double *bounds, size_t n_bounds) {
  int err;
  if (!valid_bounds(bounds, n_bounds))
    return NULL;
  ld_metric_t *m = family_new(reg, name, type, help, labels, n_labels, &err);
  if (m == NULL)
    return NULL;
  if (n_bounds > 0) {
    m->bounds = malloc(n_bounds * sizeof *m->bounds);
    if (m->bounds == NULL) {
      family_free(m);
      return NULL;
    }
    memcpy(m->bounds, bounds, n_bounds * sizeof *bounds);
    m->n_bounds = n_bounds;
  }
  family_append(reg, m);
  return m;
}

ld_metric_t *ld_metrics_counter(ld_metrics_t *reg, const char *name, const char *help,
                                const char *const *labels, size_t n_labels) {
  return stored_new(reg, name, LD_METRIC_COUNTER, help, labels, n_labels, NULL, 0);
}

ld_metric_t *ld_metrics_gauge(ld_metrics_t *reg, const char *name, const char *help,
                              const char *const *labels, size_t n_labels) {
  return stored_new(reg, name, LD_METRIC_GAUGE, help, labels, n_labels, NULL, 0);
}

ld_metric_t *ld_metrics_histogram(ld_metrics_t *reg, const char *name, const char *help,
                                  const char *const *labels, size_t n_labels, const double *buckets,
                                  size_t n_buckets) {
  return stored_new(reg, name, LD_METRIC_HISTOGRAM, help, labels, n_labels, buckets, n_buckets);
}

int ld_metrics_add_collector(ld_metrics_t *reg, const char *name, ld_metric_type_t type,
                             const char *help, const char *const *labels, size_t n_labels,
                             ld_metrics_collect_fn fn, void *user_data) {
  int err;
  if (fn == NULL)
    return LD_ERR_INVALID_ARG;
  ld_metric_t *m = family_new(reg, name, type, help, labels, n_labels, &err);
  if (m == NULL)
    return err;
  m->collect = fn;
  m->user_data = user_data;
  family_append(reg, m);
  return 0;
}

int ld_metrics_remove_family(ld_metrics_t *reg, const char *name) {
  ld_metric_t *prev = NULL;
  for (ld_metric_t *m = reg->head; m != NULL; prev = m, m = m->next) {
    if (strcmp(m->name, name) != 0)
      continue;
    if (prev != NULL)
      prev->next = m->next;
    else
      reg->head = m->next;
    if (reg->tail == m)
      reg->tail = prev;
    family_free(m);
    return 0;
  }
  return LD_ERR_NOT_FOUND;
}

/* ---- series ---------------------------------------------------------------------------------- */

static bool values_equal(const ld_metric_series_t *s, const char *const *values, size_t n) {
  for (size_t i = 0; i < n; i++) {
    size_t len = strnlen(values[i], LD_METRICS_MAX_LABEL_VALUE);
    if (strncmp(s->values[i], values[i], len) != 0 || s->values[i][len] != '\0')
      return false;
  }
  return true;
}

static ld_metric_series_t *series_find(const ld_metric_t *m, const char *const *values,
                                       ld_metric_series_t **prev) {
  ld_metric_series_t *p = NULL;
  for (ld_metric_series_t *s = m->head; s != NULL; p = s, s = s->next) {
    if (values_equal(s, values, m->n_labels)) {
      if (prev != NULL)
        *prev = p;
      return s;
    }
  }
  return NULL;
}

static ld_metric_series_t *series_new(ld_metric_t *m, const char *const *values) {
  ld_metric_series_t *s = calloc(1, sizeof *s);
  if (s == NULL)
    return NULL;
  s->family = m;
  bool ok = true;
  for (size_t i = 0; i < m->n_labels && ok; i++)
    ok = (s->values[i] = strndup(values[i], LD_METRICS_MAX_LABEL_VALUE)) != NULL;
  if (ok && m->type == LD_METRIC_HISTOGRAM)
    ok = (s->buckets = calloc(m->n_bounds + 1, sizeof *s->buckets)) != NULL;
  if (!ok) {
    series_free(s);
    return NULL;
  }
  return s;
}

ld_metric_series_t *ld_metric_series(ld_metric_t *m, const char *const *label_values) {
  if (m == NULL || m->collect != NULL || (m->n_labels > 0 && label_values == NULL))
    return NULL;
  for (size_t i = 0; i < m->n_labels; i++)
    if (label_values[i] == NULL)
      return NULL;
  ld_metric_series_t *s = series_find(m, label_values, NULL);
  if (s != NULL || m->n_series >= LD_METRICS_MAX_SERIES)
    return s;
  if ((s = series_new(m, label_values)) == NULL)
    return NULL;
  if (m->tail != NULL)
    m->tail->next = s;
  else
    m->head = s;
  m->tail = s;
  m->n_series++;
  return s;
}

void ld_metric_series_add(ld_metric_series_t *s, double v) {
  if (s->family->type == LD_METRIC_GAUGE || (s->family->type == LD_METRIC_COUNTER && v >= 0))
    s->value += v;
}

void ld_metric_series_set(ld_metric_series_t *s, double v) {
  if (s->family->type == LD_METRIC_GAUGE)
    s->value = v;
}

void ld_metric_series_observe(ld_metric_series_t *s, double v) {
  const ld_metric_t *m = s->family;
  if (m->type != LD_METRIC_HISTOGRAM)
    return;
  size_t i = 0;
  while (i < m->n_bounds && v > m->bounds[i])
    i++;
  s->buckets[i]++;
  s->count++;
  s->value += v;
}

double ld_metric_series_value(const ld_metric_series_t *s) {
  return s->value;
}

static ld_metric_series_t *lookup(ld_metric_t *m, const char *const *values, int *err) {
  ld_metric_series_t *s = ld_metric_series(m, values);
  if (s == NULL)
    *err = m != NULL && m->n_series >= LD_METRICS_MAX_SERIES ? LD_ERR_LIMIT : LD_ERR_NOMEM;
  return s;
}

int ld_metric_add(ld_metric_t *m, const char *const *label_values, double v) {
  int err = 0;
  ld_metric_series_t *s = lookup(m, label_values, &err);
  if (s != NULL)
    ld_metric_series_add(s, v);
  return err;
}

int ld_metric_set(ld_metric_t *m, const char *const *label_values, double v) {
  int err = 0;
  ld_metric_series_t *s = lookup(m, label_values, &err);
  if (s != NULL)
    ld_metric_series_set(s, v);
  return err;
}

int ld_metric_observe(ld_metric_t *m, const char *const *label_values, double v) {
  int err = 0;
  ld_metric_series_t *s = lookup(m, label_values, &err);
  if (s != NULL)
    ld_metric_series_observe(s, v);
  return err;
}

int ld_metric_remove(ld_metric_t *m, const char *const *label_values) {
  ld_metric_series_t *prev = NULL;
  ld_metric_series_t *s = m->collect == NULL ? series_find(m, label_values, &prev) : NULL;
  if (s == NULL)
    return LD_ERR_NOT_FOUND;
  if (prev != NULL)
    prev->next = s->next;
  else
    m->head = s->next;
  if (m->tail == s)
    m->tail = prev;
  m->n_series--;
  series_free(s);
  return 0;
}

/* ---- text format ----------------------------------------------------------------------------- */

static int append_str(ld_buf_t *out, const char *s) {
  return ld_buf_append(out, s, strlen(s));
}

int ld_metrics_format_value(ld_buf_t *out, double v) {
  char tmp[40];
  if (isnan(v))
    return append_str(out, "NaN");
  if (isinf(v))
    return append_str(out, v > 0 ? "+Inf" : "-Inf");
  if (v == 0)
    return append_str(out, "0");
  if (v == trunc(v) && fabs(v) <= 9007199254740992.0) {
    snprintf(tmp, sizeof tmp, "%.0f", v);
    return append_str(out, tmp);
  }
  for (int prec = 1; prec <= 17; prec++) {
    snprintf(tmp, sizeof tmp, "%.*g", prec, v);
    if (strtod(tmp, NULL) == v)
      break;
  }
  return append_str(out, tmp);
}

static int escape(ld_buf_t *out, const char *value, bool quotes) {
  const unsigned char *s = (const unsigned char *)value;
  size_t len = strlen(value);
  int rc = 0;
  for (size_t i = 0; i < len && rc == 0;) {
    size_t n = ld_utf8_char_len(s + i, len - i);
    if (n == 0) {
      rc = ld_buf_append(out, "\xEF\xBF\xBD", 3);
      i++;
      continue;
    }
    if (s[i] == '\\')
      rc = append_str(out, "\\\\");
    else if (s[i] == '\n')
      rc = append_str(out, "\\n");
    else if (quotes && s[i] == '"')
      rc = append_str(out, "\\\"");
    else
      rc = ld_buf_append(out, s + i, n);
    i += n;
  }
  return rc;
}

int ld_metrics_escape_label(ld_buf_t *out, const char *value) {
  return escape(out, value, true);
}

static int write_header(ld_buf_t *out, const ld_metric_t *m) {
  static const char *const types[] = {"counter", "gauge", "histogram"};
  const char *suffix = m->type == LD_METRIC_COUNTER ? "_total" : "";
  int rc = append_str(out, "# HELP ");
  rc = rc ? rc : append_str(out, m->name);
  rc = rc ? rc : append_str(out, suffix);
  rc = rc ? rc : append_str(out, " ");
  rc = rc ? rc : escape(out, m->help, false);
  rc = rc ? rc : append_str(out, "\n# TYPE ");
  rc = rc ? rc : append_str(out, m->name);
  rc = rc ? rc : append_str(out, suffix);
  rc = rc ? rc : append_str(out, " ");
  rc = rc ? rc : append_str(out, types[m->type]);
  return rc ? rc : append_str(out, "\n");
}

/* `name``suffix`{labels[,le="…"]} value\n */
static int write_sample(ld_buf_t *out, const ld_metric_t *m, const char *suffix,
                        const char *const *values, const double *le, double v) {
  int rc = append_str(out, m->name);
  rc = rc ? rc : append_str(out, suffix);
  if (m->n_labels > 0 || le != NULL) {
    rc = rc ? rc : append_str(out, "{");
    for (size_t i = 0; i < m->n_labels && rc == 0; i++) {
      rc = i > 0 ? append_str(out, ",") : 0;
      rc = rc ? rc : append_str(out, m->labels[i]);
      rc = rc ? rc : append_str(out, "=\"");
      rc = rc ? rc : escape(out, values[i], true);
      rc = rc ? rc : append_str(out, "\"");
    }
    if (le != NULL) {
      rc = rc ? rc : append_str(out, m->n_labels > 0 ? ",le=\"" : "le=\"");
      rc = rc ? rc : ld_metrics_format_value(out, *le);
      rc = rc ? rc : append_str(out, "\"");
    }
    rc = rc ? rc : append_str(out, "}");
  }
  rc = rc ? rc : append_str(out, " ");
  rc = rc ? rc : ld_metrics_format_value(out, v);
  return rc ? rc : append_str(out, "\n");
}

static int write_histogram(ld_buf_t *out, const ld_metric_t *m, const char *const *values,
                           const double *bounds, const uint64_t *cumulative, size_t n,
                           uint64_t count, double sum) {
  int rc = 0;
  for (size_t i = 0; i < n && rc == 0; i++)
    rc = write_sample(out, m, "_bucket", values, &bounds[i], (double)cumulative[i]);
  double inf = INFINITY;
  rc = rc ? rc : write_sample(out, m, "_bucket", values, &inf, (double)count);
  rc = rc ? rc : write_sample(out, m, "_sum", values, NULL, sum);
  return rc ? rc : write_sample(out, m, "_count", values, NULL, (double)count);
}

static int write_series(ld_buf_t *out, const ld_metric_t *m, const ld_metric_series_t *s) {
  const char *const *values = (const char *const *)s->values;
  if (m->type == LD_METRIC_COUNTER)
    return write_sample(out, m, "_total", values, NULL, s->value);
  if (m->type == LD_METRIC_GAUGE)
    return write_sample(out, m, "", values, NULL, s->value);
  uint64_t cumulative[LD_METRICS_MAX_BUCKETS];
  uint64_t acc = 0;
  for (size_t i = 0; i < m->n_bounds; i++)
    cumulative[i] = acc += s->buckets[i];
  return write_histogram(out, m, values, m->bounds, cumulative, m->n_bounds, s->count, s->value);
}

void ld_metrics_emit(ld_metrics_emitter_t *e, const char *const *label_values, double value) {
  const ld_metric_t *m = e->family;
  if (e->err != 0 || m->type == LD_METRIC_HISTOGRAM || e->n_emitted >= LD_METRICS_MAX_SERIES)
    return;
  if (m->n_labels > 0 && label_values == NULL)
    return;
  e->n_emitted++;
  e->err = write_sample(e->out, m, m->type == LD_METRIC_COUNTER ? "_total" : "", label_values, NULL,
                        value);
}

void ld_metrics_emit_histogram(ld_metrics_emitter_t *e, const char *const *label_values,
                               const double *bounds, const uint64_t *counts, size_t n,
                               uint64_t count, double sum) {
  const ld_metric_t *m = e->family;
  if (e->err != 0 || m->type != LD_METRIC_HISTOGRAM || e->n_emitted >= LD_METRICS_MAX_SERIES)
    return;
  if ((m->n_labels > 0 && label_values == NULL) || !valid_bounds(bounds, n))
    return;
  e->n_emitted++;
  e->err = write_histogram(e->out, m, label_values, bounds, counts, n, count, sum);
}

int ld_metrics_expose(ld_metrics_t *reg, ld_buf_t *out) {
  for (const ld_metric_t *m = reg->head; m != NULL; m = m->next) {
    int rc = write_header(out, m);
    if (rc != 0)
      return rc;
    if (m->collect != NULL) {
      ld_metrics_emitter_t e = {.out = out, .family = m};
      m->collect(&e, m->user_data);
      rc = e.err;
    }
    for (const ld_metric_series_t *s = m->head; s != NULL && rc == 0; s = s->next)
      rc = write_series(out, m, s);
    if (rc != 0)
      return rc;
  }
  return 0;
}
