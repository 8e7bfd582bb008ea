#include "logosdelivery/node_options.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "logosdelivery/flags.h"
#include "logosdelivery/hints.h"
#include "logosdelivery/toml.h"
#include "node/options.h"

_Static_assert(LD_NODE_OPTIONS_MAX + 1 <= LD_FLAG_MAX_FLAGS, "LD_FLAG_MAX_FLAGS too small");

/* Where the flag layer keeps one option's value until it is applied. */
typedef union flag_value {
  char text[LD_FLAG_STRING_MAX];
  int64_t num;
  bool flag;
  ld_strlist_t list;
} flag_value_t;

/* Everything read so far, so that a value refused later is reported where it came from. */
typedef struct collected {
  flag_value_t values[LD_NODE_OPTIONS_MAX];
  bool help;
  ld_flag_t table[LD_NODE_OPTIONS_MAX + 1];
  size_t n;           /* options, then --help */
  size_t config_file; /* index of --config-file */
  ld_flags_result_t res;
} collected_t;

static ld_flag_kind_t flag_kind(ld_node_opt_kind_t kind) {
  switch (kind) {
  case LD_NODE_OPT_BOOL:
    return LD_FLAG_BOOL;
  case LD_NODE_OPT_INT:
    return LD_FLAG_INT;
  case LD_NODE_OPT_LIST:
    return LD_FLAG_LIST;
  case LD_NODE_OPT_STRING:
    break;
  }
  return LD_FLAG_STRING;
}

/* The flag table: one flag per node option (node/options.h), then --help. */
static void build_table(collected_t *c) {
  size_t n = ld_node_options_count();
  for (size_t i = 0; i < n; i++) {
    const ld_node_option_t *opt = ld_node_option_at(i);
    c->table[i] = (ld_flag_t){.name = opt->cli,
                              .kind = flag_kind(opt->kind),
                              .target = &c->values[i],
                              .min = opt->min,
                              .max = opt->max,
                              .help = opt->help};
    if (strcmp(opt->cli, "config-file") == 0)
      c->config_file = i;
  }
  c->table[n] = (ld_flag_t){"help", LD_FLAG_BOOL, &c->help, 0, 0, "print this help"};
  c->n = n + 1;
}

static void collected_clear(collected_t *c) {
  for (size_t i = 0; i + 1 < c->n; i++)
    if (c->table[i].kind == LD_FLAG_LIST)
      ld_strlist_clear(&c->values[i].list);
}

int ld_app_read_file(const char *path, size_t max, char **out, size_t *len, char *err,
                     size_t errlen) {
  FILE *fp = fopen(path, "rb");
  if (fp == NULL) {
    snprintf(err, errlen, "cannot open '%s': %s", path, strerror(errno));
    return LD_ERR_IO;
  }
  char *buf = malloc(max + 2);
  size_t n = buf != NULL ? fread(buf, 1, max + 1, fp) : 0;
  int rc = buf == NULL ? LD_ERR_NOMEM : ferror(fp) ? LD_ERR_IO : n > max ? LD_ERR_TOO_LARGE : 0;
  fclose(fp);
  if (rc != 0) {
    snprintf(err, errlen, "cannot read '%s': %s", path,
             rc == LD_ERR_TOO_LARGE ? "file too large" : ld_strerror(rc));
    free(buf);
    return rc;
  }
  buf[n] = '\0';
  *out = buf;
  *len = n;
  return 0;
}

static const char *config_path(const collected_t *c) {
  return c->values[c->config_file].text;
}

static int apply_config_file(collected_t *c, char *err, size_t errlen) {
  const char *path = config_path(c);
  char *text = NULL;
  size_t len = 0;
  char why[LD_TOML_ERROR_MAX];
  int rc = ld_app_read_file(path, LD_TOML_MAX_INPUT, &text, &len, why, sizeof why);
  if (rc != 0) {
    snprintf(err, errlen, "--config-file: %s; check the path given to --config-file", why);
    return rc;
  }
  ld_toml_t doc;
  rc = ld_toml_parse(text, len, &doc, why, sizeof why);
  free(text);
  if (rc != 0) {
    snprintf(err, errlen,
             "config file '%s': %s; correct that line (TOML: key = value, text in quotes, lists in "
             "[ ])",
             path, why);
    return rc == LD_ERR_NOMEM ? rc : LD_ERR_INVALID_ARG;
  }
  const ld_toml_entry_t *self = ld_toml_get(&doc, "config-file");
  if (self != NULL) {
    snprintf(err, errlen,
             "config file '%s': line %u: config-file cannot be set in a config file; remove that "
             "line",
             path, self->line);
    rc = LD_ERR_INVALID_ARG;
  } else if ((rc = ld_flags_apply_toml(c->table, c->n, &doc, NULL, &c->res)) != 0) {
    snprintf(err, errlen, "config file '%s': %s", path, c->res.error);
  }
  ld_toml_clear(&doc);
  return rc;
}

static int collect_flags(int argc, char **argv, collected_t *c, char *err, size_t errlen) {
  memset(&c->res, 0, sizeof c->res);
  build_table(c);
  int rc = ld_flags_parse(c->table, c->n, argc, argv, &c->res);
  if (rc == 0)
    rc = ld_flags_apply_env(c->table, c->n, LD_APP_ENV_PREFIX, &c->res);
  if (rc != 0) {
    snprintf(err, errlen, "%s", c->res.error);
    return rc;
  }
  if (c->res.n_positional > 0) {
    snprintf(err, errlen,
             "unexpected argument '%s'; the node takes only --flags (--help lists them), the "
             "sub-commands are canary, send, subscribe, query, discv5, dns-tree and dns-resolve "
             "(`logosdelivery help`)",
             c->res.positional[0]);
    return LD_ERR_INVALID_ARG;
  }
  if (config_path(c)[0] != '\0' && !c->help)
    return apply_config_file(c, err, errlen);
  return 0;
}

/* Prefixes a refused value's reason with where the value came from and adds the value (when
 * the reason does not show it) and how to write it. */
static int refused(const collected_t *c, size_t index, const char *value, int rc, const char *why,
                   char *err, size_t errlen) {
  char where[LD_FLAG_STRING_MAX + 64], hint[384];
  ld_flags_origin(c->table, index, &c->res, LD_APP_ENV_PREFIX, config_path(c), where, sizeof where);
  ld_app_option_hint(ld_node_option_at(index), hint, sizeof hint);
  if (strstr(why, value) != NULL)
    snprintf(err, errlen, "%s: %s; %s", where, why, hint);
  else
    snprintf(err, errlen, "%s: %s, got '%.200s'; %s", where, why, value, hint);
  return rc;
}

/* Hands the value(s) of flag `i` to the option parser, as text. */
static int apply_flag(const collected_t *c, size_t i, ld_node_opts_t *o, char *err, size_t errlen) {
  const ld_node_option_t *opt = ld_node_option_at(i);
  const flag_value_t *v = &c->values[i];
  char why[LD_FLAG_STRING_MAX + 128], num[32];
  const char *value = "";
  int rc = 0;
  switch (c->table[i].kind) {
  case LD_FLAG_STRING:
    rc = ld_node_opts_set(o, opt, value = v->text, why, sizeof why);
    break;
  case LD_FLAG_INT:
    snprintf(num, sizeof num, "%" PRId64, v->num);
    rc = ld_node_opts_set(o, opt, value = num, why, sizeof why);
    break;
  case LD_FLAG_BOOL:
    rc = ld_node_opts_set(o, opt, value = v->flag ? "true" : "false", why, sizeof why);
    break;
  case LD_FLAG_LIST:
    for (size_t k = 0; rc == 0 && k < v->list.count; k++)
      rc = ld_node_opts_set(o, opt, value = v->list.items[k], why, sizeof why);
    break;
  }
  return rc != 0 ? refused(c, i, value, rc, why, err, errlen) : 0;
}

/* The preset and the checks across options name what is wrong but not what to change. */
static void add_combination_hint(char *err, size_t errlen) {
  size_t n = strlen(err);
  const char *hint =
      strstr(err, "--preset") != NULL
          ? "; choose twn, logos.dev, logos.test or status.prod, or leave --preset out"
          : "; change one of the flags it names (`logosdelivery --help` describes "
            "them)";
  snprintf(err + n, errlen > n ? errlen - n : 0, "%s", hint);
}

/* Every option that was given, in the table's order, then the preset and the combined settings,
 * then the cross-option checks. */
static int build_config(const collected_t *c, ld_app_node_options_t *opts, char *err,
                        size_t errlen) {
  ld_node_opts_t *o = malloc(sizeof *o);
  if (o == NULL)
    return LD_ERR_NOMEM;
  ld_node_opts_init(o, &opts->config, LD_NODE_OPTS_PROGRAM);
  int rc = 0;
  for (size_t i = 0; rc == 0 && i + 1 < c->n; i++)
    if (c->res.seen[i] && i != c->config_file)
      rc = apply_flag(c, i, o, err, errlen);
  if (rc == 0)
    rc = ld_node_opts_finish(o, err, errlen);
  if (rc == 0)
    rc = ld_node_config_finalize(&opts->config, err, errlen);
  if (rc != 0 && rc != LD_ERR_NOMEM && strchr(err, ';') == NULL)
    add_combination_hint(err, errlen);
  opts->log_level = o->log_level;
  opts->log_format = o->log_format;
  free(o);
  return rc;
}

int ld_app_node_options_parse(int argc, char **argv, ld_app_node_options_t *opts, char *err,
                              size_t errlen) {
  collected_t *c = calloc(1, sizeof *c);
  if (c == NULL)
    return LD_ERR_NOMEM;
  memset(opts, 0, sizeof *opts);
  int rc = collect_flags(argc, argv, c, err, errlen);
  opts->help = c->help;
  if (rc == 0 && !c->help)
    rc = build_config(c, opts, err, errlen);
  collected_clear(c);
  free(c);
  return rc;
}

void ld_app_node_options_help(FILE *out) {
  for (size_t i = 0; i < ld_node_options_count(); i++) {
    const ld_node_option_t *opt = ld_node_option_at(i);
    const char *def = opt->program_def != NULL ? opt->program_def : opt->def;
    fprintf(out, "  --%-30s %s", opt->cli, opt->help);
    if (def[0] != '\0')
      fprintf(out, " (default %s)", def);
    fprintf(out, "%s\n", opt->flags & LD_NODE_OPT_INERT ? " [no effect yet]" : "");
  }
  fprintf(out, "  --%-30s %s\n", "help", "print this help");
}
