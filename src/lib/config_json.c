#include "lib/config_json.h"

#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "node/options.h"

/* Keys in one JSON object at most (a configuration has about a hundred options). */
#define MAX_KEYS 1024
/* Text of one scalar value (numbers, booleans). */
#define NUM_TEXT_MAX 48

/* ---- errors ------------------------------------------------------------------------------------
 */

/* ---- one JSON object's keys, case-insensitively
 * -------------------------------------------------- */

typedef struct jfield {
  const char *key; /* as written */
  json_t *value;
  bool used;
} jfield_t;

typedef struct jfields {
  jfield_t *items;
  size_t n;
} jfields_t;

static char lower(char c) {
  return c >= 'A' && c <= 'Z' ? (char)(c - 'A' + 'a') : c;
}

static bool key_eq(const char *a, const char *b) {
  for (; *a != '\0' && *b != '\0'; a++, b++)
    if (lower(*a) != lower(*b))
      return false;
  return *a == *b;
}

static void jfields_clear(jfields_t *fs) {
  free(fs->items);
  fs->items = NULL;
  fs->n = 0;
}

/* Collects the keys of `obj` in input order; two keys equal but for case are an error. */
static int collect(json_t *obj, jfields_t *fs, char *err, size_t errlen) {
  size_t n = json_object_size(obj);
  fs->n = 0;
  fs->items = NULL;
  if (n > MAX_KEYS)
    return ld_error_fmt(err, errlen, LD_ERR_INVALID_ARG,
                        "more than %d configuration options in one object", MAX_KEYS);
  fs->items = calloc(n > 0 ? n : 1, sizeof *fs->items);
  if (fs->items == NULL)
    return LD_ERR_NOMEM;
  const char *key;
  json_t *value;
  json_object_foreach(obj, key, value) {
    for (size_t i = 0; i < fs->n; i++)
      if (key_eq(fs->items[i].key, key)) {
        int rc = ld_error_fmt(err, errlen, LD_ERR_INVALID_ARG,
                              "Duplicate configuration option (case-insensitive): '%s' and '%s'",
                              fs->items[i].key, key);
        jfields_clear(fs);
        return rc;
      }
    fs->items[fs->n++] = (jfield_t){.key = key, .value = value};
  }
  return 0;
}

static jfield_t *find(jfields_t *fs, const char *name) {
  for (size_t i = 0; name != NULL && i < fs->n; i++)
    if (!fs->items[i].used && key_eq(fs->items[i].key, name))
      return &fs->items[i];
  return NULL;
}

/* "<prefix>: k1, k2" for the keys nothing took, in input order; 0 when there are none. */
static int unknown_keys(const jfields_t *fs, const char *prefix, char *err, size_t errlen) {
  size_t used = 0;
  bool any = false;
  for (size_t i = 0; i < fs->n; i++) {
    if (fs->items[i].used)
      continue;
    if (err != NULL && errlen > 0 && used < errlen) {
      int k = any ? snprintf(err + used, errlen - used, ", %s", fs->items[i].key)
                  : snprintf(err, errlen, "%s: %s", prefix, fs->items[i].key);
      used += k > 0 ? (size_t)k : 0;
    }
    any = true;
  }
  return any ? LD_ERR_INVALID_ARG : 0;
}

/* ---- scalar values as text ---------------------------------------------------------------------
 */

static const char *kind_name(const json_t *v) {
  switch (json_typeof(v)) {
  case JSON_OBJECT:
    return "JObject";
  case JSON_ARRAY:
    return "JArray";
  case JSON_STRING:
    return "JString";
  case JSON_INTEGER:
    return "JInt";
  case JSON_REAL:
    return "JFloat";
  case JSON_TRUE:
  case JSON_FALSE:
    return "JBool";
  case JSON_NULL:
    break;
  }
  return "JNull";
}

/* The shortest text that reads back as `d`, with ".0" when it looks like an integer. */
static void format_real(double d, char *buf, size_t cap) {
  if (!isfinite(d)) {
    snprintf(buf, cap, "%s", isnan(d) ? "nan" : d > 0 ? "inf" : "-inf");
    return;
  }
  for (int prec = 1; prec <= 17; prec++) {
    snprintf(buf, cap, "%.*g", prec, d);
    if (strtod(buf, NULL) == d)
      break;
  }
  if (strpbrk(buf, ".e") == NULL && strlen(buf) + 2 < cap)
    strcat(buf, ".0");
}

/* A string, number or bool as the text a command line would carry; NULL for anything else. */
static const char *scalar_text(const json_t *v, char buf[NUM_TEXT_MAX]) {
  switch (json_typeof(v)) {
  case JSON_STRING:
    return json_string_value(v);
  case JSON_INTEGER:
    snprintf(buf, NUM_TEXT_MAX, "%" JSON_INTEGER_FORMAT, json_integer_value(v));
    return buf;
  case JSON_REAL:
    format_real(json_real_value(v), buf, NUM_TEXT_MAX);
    return buf;
  case JSON_TRUE:
    return "true";
  case JSON_FALSE:
    return "false";
  default:
    return NULL;
  }
}

/* ---- matching fields to keys --------------------------------------------------------------------
 */

typedef struct target target_t;
typedef int (*target_set_fn)(void *ctx, const target_t *t, const char *text, char *why,
                             size_t whylen);

/* One settable field: by field name or CLI alias (NULL or equal: none). */
struct target {
  const char *field, *cli;
  bool list;
  bool no_json; /* a field JSON cannot set */
  target_set_fn set;
  const void *arg;
};

typedef struct walk {
  void *ctx;
  const char *prefix; /* "Failed to parse config field" */
  char *err;
  size_t errlen;
} walk_t;

/* The key naming `t`, NULL when none; an error when both its names are given. */
static int match(jfields_t *fs, const target_t *t, jfield_t **out, const walk_t *w) {
  jfield_t *by_field = find(fs, t->field);
  jfield_t *by_cli = t->cli != NULL && !key_eq(t->cli, t->field) ? find(fs, t->cli) : NULL;
  if (by_field != NULL && by_cli != NULL)
    return ld_error_fmt(w->err, w->errlen, LD_ERR_INVALID_ARG,
                        "config option '%s' was set twice, via '%s' and '%s'", t->field,
                        by_field->key, by_cli->key);
  *out = by_field != NULL ? by_field : by_cli;
  return 0;
}

static int set_one(const target_t *t, const jfield_t *f, const json_t *v, const walk_t *w) {
  char buf[NUM_TEXT_MAX], why[512];
  const char *text = scalar_text(v, buf);
  if (text == NULL)
    return ld_error_fmt(w->err, w->errlen, LD_ERR_INVALID_ARG,
                        "%s '%s' from JSON key '%s': expected scalar JSON value, got %s", w->prefix,
                        t->field, f->key, kind_name(v));
  why[0] = '\0';
  int rc = t->set(w->ctx, t, text, why, sizeof why);
  if (rc == LD_ERR_NOMEM)
    return rc;
  if (rc != 0)
    return ld_error_fmt(w->err, w->errlen, LD_ERR_INVALID_ARG,
                        "%s '%s' from JSON key '%s': %s. Value: %s", w->prefix, t->field, f->key,
                        why, text);
  return 0;
}

static int set_field(const target_t *t, jfield_t *f, const walk_t *w) {
  f->used = true;
  if (json_is_null(f->value))
    return 0;
  if (t->no_json)
    return ld_error_fmt(w->err, w->errlen, LD_ERR_INVALID_ARG,
                        "config option '%s' cannot be set via JSON", f->key);
  if (!t->list)
    return set_one(t, f, f->value, w);
  if (!json_is_array(f->value))
    return ld_error_fmt(w->err, w->errlen, LD_ERR_INVALID_ARG,
                        "%s '%s' from JSON key '%s' must be a JSON array", w->prefix, t->field,
                        f->key);
  for (size_t i = 0; i < json_array_size(f->value); i++) {
    int rc = set_one(t, f, json_array_get(f->value, i), w);
    if (rc != 0)
      return rc;
  }
  return 0;
}

/* Applies every target named in `fs`, in the targets' order; then, when `unknown` is not NULL,
 * fails on keys nothing took. */
static int apply_targets(jfields_t *fs, const target_t *targets, size_t n, const walk_t *w,
                         const char *unknown) {
  for (size_t i = 0; i < n; i++) {
    jfield_t *f = NULL;
    int rc = match(fs, &targets[i], &f, w);
    if (rc == 0 && f != NULL)
      rc = set_field(&targets[i], f, w);
    if (rc != 0)
      return rc;
  }
  return unknown != NULL ? unknown_keys(fs, unknown, w->err, w->errlen) : 0;
}

/* ---- kernel options (c-api.md §5.5) -----------------------------------------------------------
 */

static int kernel_set(void *ctx, const target_t *t, const char *text, char *why, size_t whylen) {
  return ld_node_opts_set(ctx, t->arg, text, why, whylen);
}

static target_t kernel_target(const ld_node_option_t *opt) {
  return (target_t){.field = opt->field,
                    .cli = opt->cli,
                    .list = opt->kind == LD_NODE_OPT_LIST,
                    .set = kernel_set,
                    .arg = opt};
}

static int apply_kernel(jfields_t *fs, ld_node_opts_t *o, const char *prefix, const char *unknown,
                        char *err, size_t errlen) {
  target_t targets[LD_NODE_OPTIONS_MAX];
  size_t n = ld_node_options_count();
  for (size_t i = 0; i < n; i++)
    targets[i] = kernel_target(ld_node_option_at(i));
  walk_t w = {.ctx = o, .prefix = prefix, .err = err, .errlen = errlen};
  return apply_targets(fs, targets, n, &w, unknown);
}

/* ---- reliability (flat shape and messagingOverrides) -------------------------------------------
 */

typedef struct reliability {
  bool given, enabled;
} reliability_t;

static int reliability_set(void *ctx, const target_t *t, const char *text, char *why,
                           size_t whylen) {
  (void)t;
  reliability_t *r = ctx;
  if (ld_node_option_parse_bool(text, &r->enabled) != 0)
    return ld_error_fmt(why, whylen, LD_ERR_INVALID_ARG, "expected true or false");
  r->given = true;
  return 0;
}

static const target_t k_reliability = {
    .field = "reliabilityEnabled", .cli = "reliability", .set = reliability_set};

/* ---- messagingOverrides (c-api.md §5.4) ---------------------------------------------------------
 */

typedef struct structured {
  ld_node_opts_t *opts;
  reliability_t reliability;
} structured_t;

/* An RLN contract turns RLN-relay on with the on-chain group, as --rln-relay
 * --rln-relay-dynamic=true with --rln-relay-eth-contract-address do (logos-delivery's
 * messaging configuration: enabled, dynamic, the contract, chain id, epoch and ethRpcEndpoints). */
static int rln_from_contract(ld_node_opts_t *opts, char *why, size_t whylen) {
  int rc = ld_node_opts_set(opts, ld_node_option_find_cli("rln-relay"), "true", why, whylen);
  if (rc == 0)
    rc = ld_node_opts_set(opts, ld_node_option_find_cli("rln-relay-dynamic"), "true", why, whylen);
  return rc;
}

static int messaging_set(void *ctx, const target_t *t, const char *text, char *why, size_t whylen) {
  structured_t *s = ctx;
  if (t->arg == NULL)
    return reliability_set(&s->reliability, t, text, why, whylen);
  const ld_node_option_t *opt = ld_node_option_find_cli(t->arg);
  int rc = ld_node_opts_set(s->opts, opt, text, why, whylen);
  if (rc == 0 && strcmp(opt->cli, "rln-relay-eth-contract-address") == 0)
    rc = rln_from_contract(s->opts, why, whylen);
  return rc;
}

/* field, CLI alias, kernel option (NULL: reliability) */
static const struct {
  const char *field, *cli, *kernel;
} k_messaging[] = {
    {"clusterId", "cluster-id", "cluster-id"},
    {"numShardsInCluster", "num-shards-in-network", "num-shards-in-network"},
    {"p2pTcpPort", "tcp-port", "tcp-port"},
    {"discv5UdpPort", "discv5-udp-port", "discv5-udp-port"},
    {"websocketSupport", "websocket-support", "websocket-support"},
    {"websocketPort", "websocket-port", "websocket-port"},
    {"quicSupport", "quic-support", "quic-support"},
    {"quicPort", "quic-port", "quic-port"},
    {"listenIpv4", "listen-address", "listen-address"},
    {"maxMessageSize", "max-msg-size", "max-msg-size"},
    {"entryNodes", "entry-node", "entry-node"},
    {"ethRpcEndpoints", "rln-relay-eth-client-address", "rln-relay-eth-client-address"},
    {"rlnContractAddress", "rln-relay-eth-contract-address", "rln-relay-eth-contract-address"},
    {"rlnChainId", "rln-relay-chain-id", "rln-relay-chain-id"},
    {"rlnEpochSizeSec", "rln-relay-epoch-sec", "rln-relay-epoch-sec"},
    {"reliabilityEnabled", "reliability", NULL},
    {"reliabilityMode", "reliability-mode", "reliability-mode"},
    {"reliabilityConfirmPeers", "reliability-confirm-peers", "reliability-confirm-peers"},
    {"reliabilityWindow", "reliability-window", "reliability-window"},
    {"store", "store", "store"},
    {"storenode", "storenode", "storenode"},
    {"storeMessageDbUrl", "store-message-db-url", "store-message-db-url"},
    {"storeMessageRetentionPolicy", "store-message-retention-policy",
     "store-message-retention-policy"},
    {"storeMaxNumDbConnections", "store-max-num-db-connections", "store-max-num-db-connections"},
    {"localStoragePath", "local-storage-path", "local-storage-path"},
    {"logLevel", "log-level", "log-level"},
    {"logFormat", "log-format", "log-format"},
    {"nodeKey", "nodekey", "nodekey"},
};

#define N_MESSAGING (sizeof k_messaging / sizeof k_messaging[0])

static int apply_messaging(jfields_t *fs, structured_t *s, char *err, size_t errlen) {
  target_t targets[N_MESSAGING + 1];
  for (size_t i = 0; i < N_MESSAGING; i++) {
    const ld_node_option_t *opt =
        k_messaging[i].kernel != NULL ? ld_node_option_find_cli(k_messaging[i].kernel) : NULL;
    targets[i] = (target_t){.field = k_messaging[i].field,
                            .cli = k_messaging[i].cli,
                            .list = opt != NULL && opt->kind == LD_NODE_OPT_LIST,
                            .set = messaging_set,
                            .arg = k_messaging[i].kernel};
  }
  /* settable only from code in nwaku, refused from JSON */
  targets[N_MESSAGING] = (target_t){.field = "rateLimit", .no_json = true};
  walk_t w = {
      .ctx = s, .prefix = "Failed to parse messagingOverrides field", .err = err, .errlen = errlen};
  return apply_targets(fs, targets, N_MESSAGING + 1, &w,
                       "Unrecognized messagingOverrides option(s) found");
}

/* ---- channelsOverrides (c-api.md §5.6) ----------------------------------------------------------
 */

enum {
  CH_RS,
  CH_SEGMENT,
  CH_ACK,
  CH_RETRANSMIT,
  CH_HISTORY,
  CH_RATE,
  CH_EPOCH,
  CH_MESSAGES,
  CH_REPAIR_T_MIN, /* our extension */
  CH_REPAIR_T_MAX,
  CH_SYNC_INTERVAL,
  CH_BLOOM_INTERVAL,
  CH_ACK_SYNC_EVERY,
  CH_COUNT,
};

// clang-format off
static const char *const k_channel_fields[CH_COUNT] = {
    "segmentationEnableReedSolomon", "segmentationSegmentSizeBytes", "sdsAcknowledgementTimeoutMs",
    "sdsMaxRetransmissions",         "sdsCausalHistorySize",         "rateLimitEnabled",
    "rateLimitEpochPeriodSec",       "rateLimitMessagesPerEpoch",
    "sdsRepairTMinMs",               "sdsRepairTMaxMs",              "sdsSyncIntervalMs",
    "sdsBloomIntervalMs",            "sdsAckSyncEvery"};
// clang-format on

static int channel_flag(ld_lib_channels_config_t *c, int which, const char *text, char *why,
                        size_t whylen) {
  bool v;
  if (ld_node_option_parse_bool(text, &v) != 0)
    return ld_error_fmt(why, whylen, LD_ERR_INVALID_ARG, "expected true or false");
  if (which == CH_RS)
    c->has_segmentation_rs = true, c->segmentation_rs = v;
  else
    c->has_rate_limit = true, c->rate_limit = v;
  return 0;
}

static int channel_number(ld_lib_channels_config_t *c, int which, const char *text, char *why,
                          size_t whylen) {
  int64_t v;
  int rc = ld_node_option_parse_int(text, INT64_MIN, INT64_MAX, &v, why, whylen);
  if (rc != 0)
    return rc;
  switch (which) {
  case CH_SEGMENT:
    c->has_segment_size = true, c->segment_size_bytes = v;
    break;
  case CH_ACK:
    c->has_ack_timeout = true, c->ack_timeout_ms = v;
    break;
  case CH_RETRANSMIT:
    c->has_max_retransmissions = true, c->max_retransmissions = v;
    break;
  case CH_HISTORY:
    c->has_causal_history = true, c->causal_history_size = v;
    break;
  case CH_EPOCH:
    c->has_rate_epoch = true, c->rate_epoch_sec = v;
    break;
  case CH_REPAIR_T_MIN:
    c->has_repair_t_min = true, c->repair_t_min_ms = v;
    break;
  case CH_REPAIR_T_MAX:
    c->has_repair_t_max = true, c->repair_t_max_ms = v;
    break;
  case CH_SYNC_INTERVAL:
    c->has_sync_interval = true, c->sync_interval_ms = v;
    break;
  case CH_BLOOM_INTERVAL:
    c->has_bloom_interval = true, c->bloom_interval_ms = v;
    break;
  case CH_ACK_SYNC_EVERY:
    c->has_ack_sync_every = true, c->ack_sync_every = v;
    break;
  default:
    c->has_rate_messages = true, c->rate_messages_per_epoch = v;
    break;
  }
  return 0;
}

static int channel_set(void *ctx, const target_t *t, const char *text, char *why, size_t whylen) {
  int which = (int)((const char *const *)t->arg - k_channel_fields);
  if (which == CH_RS || which == CH_RATE)
    return channel_flag(ctx, which, text, why, whylen);
  return channel_number(ctx, which, text, why, whylen);
}

static int apply_channels(jfields_t *fs, ld_lib_channels_config_t *c, char *err, size_t errlen) {
  target_t targets[CH_COUNT];
  for (int i = 0; i < CH_COUNT; i++)
    targets[i] =
        (target_t){.field = k_channel_fields[i], .set = channel_set, .arg = &k_channel_fields[i]};
  walk_t w = {
      .ctx = c, .prefix = "Failed to parse channelsOverrides field", .err = err, .errlen = errlen};
  return apply_targets(fs, targets, CH_COUNT, &w, "Unrecognized channelsOverrides option(s) found");
}

/* ---- the three shapes (c-api.md §5.2) ---------------------------------------------------------
 */

typedef struct parse {
  jfields_t top;
  ld_lib_config_t *out;
  ld_node_opts_t opts;
  ld_node_mode_t mode;
  reliability_t reliability;
  char *err;
  size_t errlen;
} parse_t;

static bool is_blank(char c) {
  return c == ' ' || c == '\t' || c == '\v' || c == '\r' || c == '\n' || c == '\f';
}

/* `text` without leading and trailing blanks, into `out` (cut to `cap`). */
static void strip(const char *text, char *out, size_t cap) {
  while (is_blank(*text))
    text++;
  size_t n = strlen(text);
  while (n > 0 && is_blank(text[n - 1]))
    n--;
  snprintf(out, cap, "%.*s", (int)(n < cap ? n : cap - 1), text);
}

/* The top-level string `name` (NULL when absent); a value of another type is an error. */
static int take_string(parse_t *p, const char *name, const char **out) {
  jfield_t *f = find(&p->top, name);
  *out = NULL;
  if (f == NULL)
    return 0;
  f->used = true;
  if (!json_is_string(f->value))
    return ld_error_fmt(p->err, p->errlen, LD_ERR_INVALID_ARG, "%s must be a string", name);
  *out = json_string_value(f->value);
  return 0;
}

static int take_mode(parse_t *p) {
  const char *text;
  char word[16];
  int rc = take_string(p, "mode", &text);
  if (rc != 0 || text == NULL)
    return rc;
  strip(text, word, sizeof word);
  if (ld_node_option_parse_mode(word, &p->mode) != 0)
    return ld_error_fmt(p->err, p->errlen, LD_ERR_INVALID_ARG,
                        "invalid mode: '%s' (expected 'Core' or 'Edge')", text);
  return 0;
}

static int take_entry_layer(parse_t *p) {
  static const char *const names[] = {"kernel", "messaging", "channels"};
  const char *text;
  char word[16];
  int rc = take_string(p, "entryLayer", &text);
  if (rc != 0 || text == NULL)
    return rc;
  strip(text, word, sizeof word);
  for (int i = 0; i < 3; i++)
    if (key_eq(word, names[i])) {
      p->out->entry_layer = (ld_lib_entry_layer_t)i;
      return 0;
    }
  return ld_error_fmt(p->err, p->errlen, LD_ERR_INVALID_ARG,
                      "invalid entryLayer: '%s' (expected 'kernel', 'messaging' or 'channels')",
                      text);
}

/* The object under top-level key `name`, collected into `fs` (fs->items NULL when absent). */
static int take_object(parse_t *p, const char *name, jfields_t *fs) {
  jfield_t *f = find(&p->top, name);
  fs->items = NULL;
  fs->n = 0;
  if (f == NULL)
    return 0;
  f->used = true;
  if (!json_is_object(f->value))
    return ld_error_fmt(p->err, p->errlen, LD_ERR_INVALID_ARG, "%s must be a JSON object", name);
  return collect(f->value, fs, p->err, p->errlen);
}

static int kernel_shape(parse_t *p) {
  jfields_t conf;
  if (find(&p->top, "kernelConf") == NULL)
    return ld_error_fmt(p->err, p->errlen, LD_ERR_INVALID_ARG,
                        "kernel entry layer requires a 'kernelConf' object");
  int rc = take_object(p, "kernelConf", &conf);
  if (rc != 0)
    return rc;
  rc = apply_kernel(&conf, &p->opts, "Failed to parse kernelConf field",
                    "Unrecognized kernelConf option(s) found", p->err, p->errlen);
  jfields_clear(&conf);
  if (rc == 0)
    rc = unknown_keys(&p->top, "kernel entry layer takes only 'kernelConf'; unexpected", p->err,
                      p->errlen);
  return rc;
}

static int flat_shape(parse_t *p) {
  walk_t w = {.ctx = &p->reliability,
              .prefix = "Failed to parse reliability field",
              .err = p->err,
              .errlen = p->errlen};
  int rc = apply_targets(&p->top, &k_reliability, 1, &w, NULL);
  if (rc != 0)
    return rc;
  ld_node_opts_apply_mode(&p->opts, p->mode);
  p->out->entry_layer = LD_LIB_LAYER_CHANNELS;
  return apply_kernel(&p->top, &p->opts, "Failed to parse config field",
                      "Unrecognized configuration option(s) found", p->err, p->errlen);
}

/* messagingOverrides then channelsOverrides; unknown top-level keys after both. */
static int structured_overrides(parse_t *p) {
  jfields_t fs;
  structured_t s = {.opts = &p->opts};
  int rc = take_object(p, "messagingOverrides", &fs);
  if (rc == 0 && fs.items != NULL)
    rc = apply_messaging(&fs, &s, p->err, p->errlen);
  jfields_clear(&fs);
  p->reliability = s.reliability;
  if (rc == 0)
    rc = take_object(p, "channelsOverrides", &fs);
  if (rc == 0 && fs.items != NULL)
    rc = apply_channels(&fs, &p->out->channels, p->err, p->errlen);
  jfields_clear(&fs);
  if (rc == 0)
    rc = unknown_keys(&p->top, "Unrecognized configuration option(s) found", p->err, p->errlen);
  return rc;
}

static int structured_shape(parse_t *p) {
  const char *preset;
  int rc = take_string(p, "preset", &preset);
  if (rc != 0)
    return rc;
  ld_node_opts_apply_mode(&p->opts, p->mode);
  rc = structured_overrides(p);
  if (rc != 0)
    return rc;
  if (preset != NULL)
    strip(preset, p->opts.preset, sizeof p->opts.preset);
  /* on this path an unset port means "any free port" */
  if (!ld_node_opts_is_set(&p->opts, "tcp-port"))
    p->opts.tcp_port = 0;
  if (!ld_node_opts_is_set(&p->opts, "websocket-port"))
    p->opts.ws_port = 0;
  if (!ld_node_opts_is_set(&p->opts, "discv5-udp-port"))
    p->opts.discv5_udp_port = 0;
  return 0;
}

static bool has_wrapper(parse_t *p) {
  return find(&p->top, "messagingOverrides") != NULL ||
         find(&p->top, "channelsOverrides") != NULL || find(&p->top, "kernelConf") != NULL;
}

static bool has_bare_field(const parse_t *p) {
  for (size_t i = 0; i < p->top.n; i++)
    if (!p->top.items[i].used && !key_eq(p->top.items[i].key, "preset"))
      return true;
  return false;
}

static int finish(parse_t *p) {
  ld_lib_config_t *out = p->out;
  int rc = ld_node_opts_finish(&p->opts, p->err, p->errlen);
  if (rc != 0)
    return rc;
  /* lightpush serves through relay: without relay it is off unless asked for */
  if (!out->node.relay && out->node.lightpush && !ld_node_opts_is_set(&p->opts, "lightpush"))
    out->node.lightpush = false;
  rc = ld_node_config_finalize(&out->node, p->err, p->errlen);
  if (rc != 0)
    return rc;
  out->log_level = p->opts.log_level;
  out->log_format = p->opts.log_format;
  out->messaging.mode = p->mode == LD_NODE_MODE_EDGE ? LD_MESSAGING_EDGE : LD_MESSAGING_CORE;
  const ld_waku_network_preset_t *preset = p->opts.preset_conf;
  out->messaging.reliability = p->reliability.given ? p->reliability.enabled
                               : preset != NULL     ? preset->p2p_reliability
                                                    : true;
  if (preset != NULL)
    snprintf(out->preset, sizeof out->preset, "%s", preset->name);
  return 0;
}

static int parse_object(parse_t *p) {
  int rc = take_mode(p);
  if (rc == 0)
    rc = take_entry_layer(p);
  if (rc != 0)
    return rc;
  if (p->out->entry_layer == LD_LIB_LAYER_KERNEL) {
    p->mode = LD_NODE_MODE_CORE; /* ignored on this layer */
    rc = kernel_shape(p);
  } else if (!has_wrapper(p) && has_bare_field(p)) {
    rc = flat_shape(p);
  } else {
    rc = structured_shape(p);
  }
  return rc != 0 ? rc : finish(p);
}

static void defaults(parse_t *p, ld_lib_config_t *out) {
  memset(out, 0, sizeof *out);
  out->entry_layer = LD_LIB_LAYER_CHANNELS;
  ld_messaging_config_default(&out->messaging);
  ld_node_opts_init(&p->opts, &out->node, LD_NODE_OPTS_LIBRARY);
  out->log_level = p->opts.log_level;
  out->log_format = p->opts.log_format;
}

/* localStoragePath (flat form, or inside messagingOverrides), already checked by the parser:
 * where the reliable channels keep their state. */
static void take_storage_path(json_t *root, ld_lib_config_t *out) {
  snprintf(out->storage_path, sizeof out->storage_path, "%s", LD_LIB_DEFAULT_STORAGE_PATH);
  json_t *objs[2] = {root, NULL};
  const char *key;
  json_t *v;
  json_object_foreach(root, key, v) {
    if (key_eq(key, "messagingOverrides") && json_is_object(v))
      objs[1] = v;
  }
  for (int i = 0; i < 2; i++) {
    if (objs[i] == NULL)
      continue;
    json_object_foreach(objs[i], key, v) {
      if ((key_eq(key, "localStoragePath") || key_eq(key, "local-storage-path")) &&
          json_is_string(v) && json_string_length(v) > 0)
        snprintf(out->storage_path, sizeof out->storage_path, "%s", json_string_value(v));
    }
  }
}

static int parse_root(json_t *root, ld_lib_config_t *out, char *err, size_t errlen) {
  if (!json_is_object(root))
    return ld_error_fmt(err, errlen, LD_ERR_INVALID_ARG, "configuration JSON must be an object");
  parse_t *p = calloc(1, sizeof *p);
  if (p == NULL)
    return LD_ERR_NOMEM;
  p->out = out;
  p->err = err;
  p->errlen = errlen;
  p->mode = LD_NODE_MODE_CORE;
  defaults(p, out);
  int rc = collect(root, &p->top, err, errlen);
  if (rc == 0)
    rc = parse_object(p);
  if (rc == 0)
    take_storage_path(root, out);
  jfields_clear(&p->top);
  free(p);
  return rc;
}

int ld_lib_config_parse(const char *json, size_t len, ld_lib_config_t *out, char *err,
                        size_t errlen) {
  if (err != NULL && errlen > 0)
    err[0] = '\0';
  if (out == NULL || (json == NULL && len > 0))
    return ld_error_fmt(err, errlen, LD_ERR_INVALID_ARG, "no configuration");
  if (len > LD_LIB_CONFIG_MAX_JSON) {
    ld_error_fmt(err, errlen, LD_ERR_INVALID_ARG, "configuration JSON larger than %u bytes",
                 LD_LIB_CONFIG_MAX_JSON);
    return LD_ERR_TOO_LARGE;
  }
  json_error_t jerr;
  json_t *root = json_loadb(json != NULL ? json : "", len, JSON_DECODE_ANY, &jerr);
  if (root == NULL)
    return ld_error_fmt(err, errlen, LD_ERR_INVALID_ARG, "invalid JSON: %s", jerr.text);
  int rc = parse_root(root, out, err, errlen);
  json_decref(root);
  return rc;
}

/* ---- get_available_configs
 * ----------------------------------------------------------------------- */

static json_t *option_entry(const ld_node_option_t *opt) {
  char text[256];
  snprintf(text, sizeof text, "%s(%s)", opt->type, opt->def);
  json_t *o = json_object();
  if (o == NULL || json_object_set_new(o, opt->field, json_string(text)) != 0 ||
      json_object_set_new(o, "desc", json_string(opt->help)) != 0) {
    json_decref(o);
    return NULL;
  }
  return o;
}

char *ld_lib_config_available_json(void) {
  json_t *root = json_object(), *list = json_array();
  char *text = NULL;
  bool ok = root != NULL && list != NULL;
  for (size_t i = 0; ok && i < ld_node_options_count(); i++)
    ok = json_array_append_new(list, option_entry(ld_node_option_at(i))) == 0;
  if (ok && json_object_set(root, "configOptions", list) == 0)
    text = json_dumps(root, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
  json_decref(list);
  json_decref(root);
  return text;
}
