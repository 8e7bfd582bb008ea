/* A Prometheus metrics registry and its text exposition format (version 0.0.4).
 *
 * Two kinds of families:
 * - stored families (counters, gauges, histograms) whose series the owner updates;
 * - collected families, whose samples a callback produces at scrape time by reading the stats
 *   getters of lower layers (the switch, the peer store, the gossipsub router, …). Lower layers
 *   never include this header: they only keep plain counters that a collector reads.
 *
 * Exposition. Families appear in registration order, series in creation order (collected
 * families in the order their callback emits them). A family is written as
 *   # HELP <name> <help>
 *   # TYPE <name> <counter|gauge|histogram>
 *   <name>{<label>="<value>",…} <value>
 * A counter registered as `x` is exposed as the family `x_total` (as nwaku's series are named);
 * a histogram `h` as `h_bucket{…,le="…"}` (cumulative, ending with le="+Inf"), `h_sum` and
 * `h_count`. Values are printed in the shortest form that reads back exactly ("3", "0.25",
 * "1.5e+20"), with "+Inf", "-Inf" and "NaN". In HELP text `\` and newline are escaped as `\\` and
 * `\n`; in label values also `"` as `\"`, and bytes that are not valid UTF-8 become U+FFFD. A
 * family without series is written with its HELP and TYPE lines only.
 *
 * Caps: LD_METRICS_MAX_SERIES series per family (further label sets are refused, a collector's
 * further samples dropped), LD_METRICS_MAX_LABELS labels per family.
 *
 * Threading: a registry and everything in it belong to one thread (the node's loop); the metrics
 * HTTP server scrapes on that same loop. */
#ifndef LD_METRICS_METRICS_H
#define LD_METRICS_METRICS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/buf.h"

#define LD_METRICS_MAX_LABELS 8
#define LD_METRICS_MAX_SERIES 4096
#define LD_METRICS_MAX_BUCKETS 32
#define LD_METRICS_MAX_NAME 128         /* bytes of a metric or label name */
#define LD_METRICS_MAX_LABEL_VALUE 1024 /* longer label values are cut */

/* The Content-Type of the exposition. */
#define LD_METRICS_CONTENT_TYPE "text/plain; version=0.0.4; charset=utf-8"

typedef enum ld_metric_type {
  LD_METRIC_COUNTER,
  LD_METRIC_GAUGE,
  LD_METRIC_HISTOGRAM,
} ld_metric_type_t;

typedef struct ld_metrics ld_metrics_t;
typedef struct ld_metric ld_metric_t;               /* a stored family */
typedef struct ld_metric_series ld_metric_series_t; /* one label set of a stored family */
typedef struct ld_metrics_emitter ld_metrics_emitter_t;

/* Creates an empty registry; NULL when out of memory. */
ld_metrics_t *ld_metrics_new(void);

/* Frees the registry with all its families (collector user data is the caller's). NULL is a
 * no-op. */
void ld_metrics_free(ld_metrics_t *reg);

/* ---- stored families ------------------------------------------------------------------------ */

/* Registers a stored family. `name` must match [a-zA-Z_:][a-zA-Z0-9_:]*, each label name
 * [a-zA-Z_][a-zA-Z0-9_]* without a leading "__" (and not "le" for histograms); names and help
 * are copied. Histogram `buckets` are the finite upper bounds in increasing order (the +Inf
 * bucket is implicit). Returns the family (owned by the registry, valid until ld_metrics_free) or
 * NULL on invalid names, a name already registered, too many labels or buckets, or no memory. */
ld_metric_t *ld_metrics_counter(ld_metrics_t *reg, const char *name, const char *help,
                                const char *const *labels, size_t n_labels);
ld_metric_t *ld_metrics_gauge(ld_metrics_t *reg, const char *name, const char *help,
                              const char *const *labels, size_t n_labels);
ld_metric_t *ld_metrics_histogram(ld_metrics_t *reg, const char *name, const char *help,
                                  const char *const *labels, size_t n_labels, const double *buckets,
                                  size_t n_buckets);

/* The series of `m` for these label values (n_labels strings, copied; NULL when the family has
 * no labels), created at zero when new. Valid until removed or the registry is freed; keep it to
 * update a hot series without the lookup. NULL when the series cap is reached or out of memory. */
ld_metric_series_t *ld_metric_series(ld_metric_t *m, const char *const *label_values);

/* Counter: adds v (v < 0 is ignored). Gauge: adds v. Histogram: no-op. */
void ld_metric_series_add(ld_metric_series_t *s, double v);
/* Gauge: sets v. Others: no-op. */
void ld_metric_series_set(ld_metric_series_t *s, double v);
/* Histogram: records one observation. Others: no-op. */
void ld_metric_series_observe(ld_metric_series_t *s, double v);
/* The current value (counter, gauge) or the sum of observations (histogram). */
double ld_metric_series_value(const ld_metric_series_t *s);

/* Conveniences: look the series up (creating it) and update it. LD_ERR_LIMIT at the series cap,
 * LD_ERR_NOMEM. */
int ld_metric_add(ld_metric_t *m, const char *const *label_values, double v);
int ld_metric_set(ld_metric_t *m, const char *const *label_values, double v);
int ld_metric_observe(ld_metric_t *m, const char *const *label_values, double v);

/* Removes the series with these label values (a topic unsubscribed). LD_ERR_NOT_FOUND. */
int ld_metric_remove(ld_metric_t *m, const char *const *label_values);

/* ---- collected families --------------------------------------------------------------------- */

/* Produces the samples of a collected family at scrape time through ld_metrics_emit /
 * ld_metrics_emit_histogram. Runs on the registry's thread inside ld_metrics_expose. */
typedef void (*ld_metrics_collect_fn)(ld_metrics_emitter_t *e, void *user_data);

/* Registers a collected family (names as for stored families; histogram buckets are given by the
 * emitter). `user_data` is borrowed and must outlive the registry or be unregistered with
 * ld_metrics_remove_family. LD_ERR_INVALID_ARG, LD_ERR_EXISTS, LD_ERR_NOMEM. */
int ld_metrics_add_collector(ld_metrics_t *reg, const char *name, ld_metric_type_t type,
                             const char *help, const char *const *labels, size_t n_labels,
                             ld_metrics_collect_fn fn, void *user_data);

/* One sample of a counter or gauge family, with the family's label values (NULL when none). */
void ld_metrics_emit(ld_metrics_emitter_t *e, const char *const *label_values, double value);

/* One histogram series: `bounds[0..n)` finite increasing upper bounds, `counts[0..n)` the
 * observations at or below each bound (cumulative), `count` all observations, `sum` their sum. */
void ld_metrics_emit_histogram(ld_metrics_emitter_t *e, const char *const *label_values,
                               const double *bounds, const uint64_t *counts, size_t n,
                               uint64_t count, double sum);

/* Removes a family (stored or collected) by its registered name. LD_ERR_NOT_FOUND. */
int ld_metrics_remove_family(ld_metrics_t *reg, const char *name);

/* ---- exposition ----------------------------------------------------------------------------- */

/* Appends the whole exposition to `out`. Returns 0 or LD_ERR_NOMEM (out may hold a prefix). */
int ld_metrics_expose(ld_metrics_t *reg, ld_buf_t *out);

/* Appends `v` in the exposition's number format. */
int ld_metrics_format_value(ld_buf_t *out, double v);

/* Appends a label value escaped as the format requires (see above). */
int ld_metrics_escape_label(ld_buf_t *out, const char *value);

#endif
