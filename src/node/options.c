#include "node/options.h"

#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/error.h"
#include "base/hex.h"
#include "p2p/multiaddr.h"

/* ---- helpers ----------------------------------------------------------------------------------
 */

static char ascii_lower(char c) {
  return c >= 'A' && c <= 'Z' ? (char)(c - 'A' + 'a') : c;
}

static bool ascii_eq(const char *a, const char *b) {
  for (; *a != '\0' && *b != '\0'; a++, b++)
    if (ascii_lower(*a) != ascii_lower(*b))
      return false;
  return *a == *b;
}

static bool ascii_prefix(const char *s, const char *prefix) {
  for (; *prefix != '\0'; s++, prefix++)
    if (ascii_lower(*s) != ascii_lower(*prefix))
      return false;
  return true;
}

static bool is_ip_literal(const char *text) {
  uint8_t tmp[16];
  return strlen(text) < LD_NODE_ADDRESS_MAX &&
         (inet_pton(AF_INET, text, tmp) == 1 || inet_pton(AF_INET6, text, tmp) == 1);
}

/* ---- shared value parsers ---------------------------------------------------------------------
 */

int ld_node_option_parse_bool(const char *text, bool *out) {
  static const char *const yes[] = {"y", "yes", "true", "1", "on"};
  static const char *const no[] = {"n", "no", "false", "0", "off"};
  for (size_t i = 0; i < sizeof yes / sizeof yes[0]; i++) {
    if (ascii_eq(text, yes[i])) {
      *out = true;
      return 0;
    }
    if (ascii_eq(text, no[i])) {
      *out = false;
      return 0;
    }
  }
  return LD_ERR_INVALID_ARG;
}

/* Decimal digits with an optional sign into a value clamped just past the int64 range. */
static bool parse_decimal(const char *text, bool *negative, uint64_t *magnitude) {
  const char *p = text;
  *negative = *p == '-';
  if (*p == '-' || *p == '+')
    p++;
  if (*p == '\0')
    return false;
  uint64_t v = 0;
  for (; *p != '\0'; p++) {
    if (*p < '0' || *p > '9')
      return false;
    if (v <= (UINT64_MAX - 9) / 10)
      v = v * 10 + (uint64_t)(*p - '0');
    else
      v = UINT64_MAX;
  }
  *magnitude = v;
  return true;
}

int ld_node_option_parse_int(const char *text, int64_t min, int64_t max, int64_t *out, char *err,
                             size_t errlen) {
  bool negative;
  uint64_t mag;
  if (!parse_decimal(text, &negative, &mag))
    return ld_error_fmt(err, errlen, LD_ERR_INVALID_ARG, "expected an integer");
  bool fits = negative ? mag <= (uint64_t)INT64_MAX + 1 : mag <= (uint64_t)INT64_MAX;
  int64_t v = 0;
  if (fits)
    v = negative ? (int64_t)(0 - mag) : (int64_t)mag;
  if (!fits || v < min || v > max)
    return ld_error_fmt(err, errlen, LD_ERR_INVALID_ARG, "value %s out of range (%lld..%lld)", text,
                        (long long)min, (long long)max);
  *out = v;
  return 0;
}

int ld_node_option_parse_mode(const char *text, ld_node_mode_t *out) {
  if (ascii_eq(text, "core"))
    *out = LD_NODE_MODE_CORE;
  else if (ascii_eq(text, "edge"))
    *out = LD_NODE_MODE_EDGE;
  else
    return LD_ERR_INVALID_ARG;
  return 0;
}

const ld_waku_network_preset_t *ld_node_option_preset(const char *name) {
  static const struct {
    const char *alias, *name;
  } names[] = {{"twn", "twn"},
               {"logos.dev", "logos.dev"},
               {"logosdev", "logos.dev"},
               {"logos.test", "logos.test"},
               {"logostest", "logos.test"},
               {"status.prod", "status.prod"},
               {"statusprod", "status.prod"}};
  for (size_t i = 0; name != NULL && i < sizeof names / sizeof names[0]; i++)
    if (ascii_eq(name, names[i].alias))
      return ld_waku_network_preset_find(names[i].name);
  return NULL;
}

/* ---- checkers of text values ------------------------------------------------------------------
 */

typedef int (*check_fn)(const char *text, char *err, size_t errlen);

static int check_address(const char *what, const char *text, char *err, size_t errlen) {
  if (!is_ip_literal(text))
    return ld_error_fmt(err, errlen, LD_ERR_INVALID_ARG, "%s '%s' is not an IPv4 or IPv6 address",
                        what, text);
  return 0;
}

static int check_ip(const char *text, char *err, size_t errlen) {
  return check_address("address", text, err, errlen);
}

static int check_listen_address(const char *text, char *err, size_t errlen) {
  return check_address("listen address", text, err, errlen);
}

static int check_rest_address(const char *text, char *err, size_t errlen) {
  return check_address("REST address", text, err, errlen);
}

static int check_metrics_address(const char *text, char *err, size_t errlen) {
  return check_address("metrics server address", text, err, errlen);
}

static int check_log_level(const char *text, char *err, size_t errlen) {
  ld_log_level_t level;
  if (ld_log_parse_level(text, &level) != 0)
    return ld_error_fmt(err, errlen, LD_ERR_INVALID_ARG, "unknown level '%s'", text);
  return 0;
}

static int check_log_format(const char *text, char *err, size_t errlen) {
  ld_log_format_t format;
  if (ld_log_parse_format(text, &format) != 0)
    return ld_error_fmt(err, errlen, LD_ERR_INVALID_ARG, "expected TEXT or JSON, got '%s'", text);
  return 0;
}

static int check_mode(const char *text, char *err, size_t errlen) {
  ld_node_mode_t mode;
  if (ld_node_option_parse_mode(text, &mode) != 0)
    return ld_error_fmt(err, errlen, LD_ERR_INVALID_ARG, "expected Core or Edge, got '%s'", text);
  return 0;
}

static int check_entry_layer(const char *text, char *err, size_t errlen) {
  if (!ascii_eq(text, "kernel") && !ascii_eq(text, "messaging") && !ascii_eq(text, "channels"))
    return ld_error_fmt(err, errlen, LD_ERR_INVALID_ARG,
                        "expected kernel, messaging or channels, got '%s'", text);
  return 0;
}

static int check_input_file(const char *text, char *err, size_t errlen) {
  if (text[0] == '\0' || access(text, F_OK) != 0)
    return ld_error_fmt(err, errlen, LD_ERR_INVALID_ARG, "file '%s' does not exist", text);
  return 0;
}

static int check_path(const char *text, char *err, size_t errlen) {
  if (strlen(text) >= LD_NODE_PATH_MAX)
    return ld_error_fmt(err, errlen, LD_ERR_INVALID_ARG, "path longer than %d bytes",
                        LD_NODE_PATH_MAX - 1);
  return 0;
}

static int check_nat(const char *text, char *err, size_t errlen) {
  if (ascii_eq(text, "any") || ascii_eq(text, "none") || ascii_eq(text, "upnp") ||
      ascii_eq(text, "pmp"))
    return 0;
  if (ascii_prefix(text, "extip:") && is_ip_literal(text + 6))
    return 0;
  return ld_error_fmt(err, errlen, LD_ERR_INVALID_ARG,
                      "nat '%s' must be any, none, upnp, pmp or extip:<IP address>", text);
}

static int check_multiaddr_text(const char *text, bool need_peer, char *err, size_t errlen) {
  ld_multiaddr_t ma;
  if (ld_multiaddr_parse(&ma, text) != 0)
    return ld_error_fmt(err, errlen, LD_ERR_INVALID_ARG, "'%s' is not a valid multiaddr", text);
  if (need_peer && !ld_multiaddr_peerid(&ma, NULL, false))
    return ld_error_fmt(err, errlen, LD_ERR_INVALID_ARG, "'%s' must end with /p2p/<peer id>", text);
  return 0;
}

static int check_multiaddr(const char *text, char *err, size_t errlen) {
  return check_multiaddr_text(text, false, err, errlen);
}

static int check_peer_multiaddr(const char *text, char *err, size_t errlen) {
  return check_multiaddr_text(text, true, err, errlen);
}

/* "" (unset) or a multiaddr ending in /p2p/<id>. */
static int check_optional_peer(const char *text, char *err, size_t errlen) {
  return text[0] == '\0' ? 0 : check_multiaddr_text(text, true, err, errlen);
}

static bool has_blank(const char *text) {
  return strpbrk(text, " \t\r\n") != NULL;
}

/* http(s)://[user:pass@]host[:port][/path][?query]: an HTTP JSON-RPC endpoint. */
static int check_enr(const char *text, char *err, size_t errlen) {
  if (!ascii_prefix(text, "enr:") || text[4] == '\0' || has_blank(text))
    return ld_error_fmt(err, errlen, LD_ERR_INVALID_ARG, "'%s' is not an ENR (enr:…)", text);
  return 0;
}

static int check_enrtree_text(const char *text, char *err, size_t errlen) {
  const char *rest = text + strlen("enrtree://");
  if (!ascii_prefix(text, "enrtree://") || strchr(rest, '@') == NULL || has_blank(text))
    return ld_error_fmt(err, errlen, LD_ERR_INVALID_ARG,
                        "'%s' is not an enrtree://<key>@<domain> URL", text);
  return 0;
}

/* "" (unset) or enrtree://<key>@<domain>. */
static int check_entry_node(const char *text, char *err, size_t errlen) {
  if (ascii_prefix(text, "enrtree:"))
    return check_enrtree_text(text, err, errlen);
  if (ascii_prefix(text, "enr:"))
    return check_enr(text, err, errlen);
  if (text[0] == '/')
    return check_multiaddr(text, err, errlen);
  return ld_error_fmt(err, errlen, LD_ERR_INVALID_ARG,
                      "entry node '%s' must be an enrtree:// URL, an enr: record or a multiaddr",
                      text);
}

static bool is_hex_key(const char *text, size_t bytes) {
  uint8_t buf[64];
  size_t n = 0;
  return strlen(text) == 2 * bytes && bytes <= sizeof buf &&
         ld_hex_decode(text, strlen(text), buf, sizeof buf, &n) == 0 && n == bytes;
}

static int check_mixkey(const char *text, char *err, size_t errlen) {
  if (!is_hex_key(text, 32))
    return ld_error_fmt(err, errlen, LD_ERR_INVALID_ARG, "mixkey must be 64 hex characters");
  return 0;
}

/* <multiaddr with /ip4>:<64 hex mix public key>. */
static int check_mixnode(const char *text, char *err, size_t errlen) {
  const char *colon = strchr(text, ':');
  char addr[LD_NODE_PATH_MAX];
  ld_multiaddr_t ma;
  if (colon == NULL || strchr(colon + 1, ':') != NULL || (size_t)(colon - text) >= sizeof addr)
    return ld_error_fmt(err, errlen, LD_ERR_INVALID_ARG,
                        "mixnode '%s' must be <multiaddr>:<mix key hex>", text);
  memcpy(addr, text, (size_t)(colon - text));
  addr[colon - text] = '\0';
  if (ld_multiaddr_parse(&ma, addr) != 0 || strncmp(addr, "/ip4/", 5) != 0)
    return ld_error_fmt(err, errlen, LD_ERR_INVALID_ARG,
                        "mixnode '%s': '%s' is not an /ip4 multiaddr", text, addr);
  if (!is_hex_key(colon + 1, 32))
    return ld_error_fmt(err, errlen, LD_ERR_INVALID_ARG,
                        "mixnode '%s': the key must be 64 hex characters", text);
  return 0;
}

static bool all_digits(const char *s, size_t len) {
  if (len == 0 || len > 18)
    return false;
  for (size_t i = 0; i < len; i++)
    if (s[i] < '0' || s[i] > '9')
      return false;
  return true;
}

static bool known_rate_protocol(const char *p, size_t len) {
  static const char *const names[] = {"store", "storev3", "lightpush", "px", "filter"};
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
    if (strlen(names[i]) == len && strncmp(names[i], p, len) == 0)
      return true;
  return false;
}

/* [<protocol>:]<volume>/<period><h|m|s|ms> */
static int check_rate_limit(const char *text, char *err, size_t errlen) {
  const char *p = text, *colon = strchr(text, ':'), *slash;
  if (colon != NULL) {
    if (!known_rate_protocol(text, (size_t)(colon - text)))
      goto bad;
    p = colon + 1;
  }
  slash = strchr(p, '/');
  if (slash == NULL || !all_digits(p, (size_t)(slash - p)))
    goto bad;
  size_t digits = strspn(slash + 1, "0123456789");
  const char *unit = slash + 1 + digits;
  if (digits > 0 && digits <= 18 &&
      (strcmp(unit, "h") == 0 || strcmp(unit, "m") == 0 || strcmp(unit, "s") == 0 ||
       strcmp(unit, "ms") == 0))
    return 0;
bad:
  return ld_error_fmt(
      err, errlen, LD_ERR_INVALID_ARG,
      "rate-limit '%s' must be [store|storev3|lightpush|px|filter:]<volume>/<period>"
      "<h|m|s|ms>",
      text);
}

/* ---- appliers -----------------------------------------------------------------------------------
 */

typedef struct value {
  const char *text;
  int64_t num;
  bool flag;
} value_t;

typedef int (*text_setter_fn)(ld_node_config_t *cfg, const char *text, char *err, size_t errlen);
typedef int (*num_setter_fn)(ld_node_config_t *cfg, int64_t n, char *err, size_t errlen);

typedef struct entry entry_t;
typedef int (*apply_fn)(ld_node_opts_t *o, const entry_t *e, const value_t *v, char *err,
                        size_t errlen);

struct entry {
  ld_node_option_t pub;
  check_fn check; /* extra check of a STRING or LIST text, or NULL */
  apply_fn apply; /* NULL: accepted without effect */
  size_t off;     /* field offset (in ld_node_config_t or ld_node_opts_t) */
  size_t cap;     /* size of a text field */
  text_setter_fn text_setter;
  num_setter_fn num_setter;
  int service;
};

static int apply_cfg_bool(ld_node_opts_t *o, const entry_t *e, const value_t *v, char *err,
                          size_t errlen) {
  (void)err, (void)errlen;
  *(bool *)((char *)o->cfg + e->off) = v->flag;
  return 0;
}

static int apply_cfg_u32(ld_node_opts_t *o, const entry_t *e, const value_t *v, char *err,
                         size_t errlen) {
  (void)err, (void)errlen;
  *(uint32_t *)((char *)o->cfg + e->off) = (uint32_t)v->num;
  return 0;
}

static int apply_opts_bool(ld_node_opts_t *o, const entry_t *e, const value_t *v, char *err,
                           size_t errlen) {
  (void)err, (void)errlen;
  *(bool *)((char *)o + e->off) = v->flag;
  return 0;
}

static int apply_opts_int(ld_node_opts_t *o, const entry_t *e, const value_t *v, char *err,
                          size_t errlen) {
  (void)err, (void)errlen;
  *(int64_t *)((char *)o + e->off) = v->num;
  return 0;
}

static int apply_opts_text(ld_node_opts_t *o, const entry_t *e, const value_t *v, char *err,
                           size_t errlen) {
  if (strlen(v->text) >= e->cap)
    return ld_error_fmt(err, errlen, LD_ERR_INVALID_ARG, "value longer than %zu bytes", e->cap - 1);
  memcpy((char *)o + e->off, v->text, strlen(v->text) + 1);
  return 0;
}

static int apply_text(ld_node_opts_t *o, const entry_t *e, const value_t *v, char *err,
                      size_t errlen) {
  return e->text_setter(o->cfg, v->text, err, errlen);
}

static int apply_num(ld_node_opts_t *o, const entry_t *e, const value_t *v, char *err,
                     size_t errlen) {
  return e->num_setter(o->cfg, v->num, err, errlen);
}

/* "" leaves the service peer unset (nwaku's default). */
static int apply_service(ld_node_opts_t *o, const entry_t *e, const value_t *v, char *err,
                         size_t errlen) {
  if (v->text[0] == '\0') {
    o->cfg->has_service_node[e->service] = false;
    return 0;
  }
  return ld_node_config_set_service_node(o->cfg, (ld_node_service_t)e->service, v->text, err,
                                         errlen);
}

static int apply_log_level(ld_node_opts_t *o, const entry_t *e, const value_t *v, char *err,
                           size_t errlen) {
  (void)e, (void)err, (void)errlen;
  return ld_log_parse_level(v->text, &o->log_level);
}

static int apply_log_format(ld_node_opts_t *o, const entry_t *e, const value_t *v, char *err,
                            size_t errlen) {
  (void)e, (void)err, (void)errlen;
  return ld_log_parse_format(v->text, &o->log_format);
}

static int apply_mode(ld_node_opts_t *o, const entry_t *e, const value_t *v, char *err,
                      size_t errlen) {
  (void)e, (void)err, (void)errlen;
  return ld_node_option_parse_mode(v->text, &o->mode);
}

/* Kept as given (cut to the buffer); resolved by ld_node_opts_finish. */
static int apply_preset(ld_node_opts_t *o, const entry_t *e, const value_t *v, char *err,
                        size_t errlen) {
  (void)e, (void)err, (void)errlen;
  snprintf(o->preset, sizeof o->preset, "%s", v->text);
  return 0;
}

/* ---- the table ----------------------------------------------------------------------------------
 */

#define I64_MIN INT64_MIN
#define I64_MAX INT64_MAX
#define U16_MAX 65535
#define U32_MAX 4294967295LL

#define META(f, c, k, lo, hi, t, d, pd, h, fl)                                                     \
  {                                                                                                \
    .field = f, .cli = c, .kind = k, .min = lo, .max = hi, .type = t, .def = d, .program_def = pd, \
    .help = h, .flags = fl                                                                         \
  }

/* accepted and checked, no effect yet */
#define INERT_BOOL(f, c, t, d, h)                                                                  \
  { .pub = META(f, c, LD_NODE_OPT_BOOL, 0, 0, t, d, NULL, h, LD_NODE_OPT_INERT) }
#define INERT_INT(f, c, t, lo, hi, d, h)                                                           \
  { .pub = META(f, c, LD_NODE_OPT_INT, lo, hi, t, d, NULL, h, LD_NODE_OPT_INERT) }
#define INERT_STR(f, c, t, d, chk, h)                                                              \
  { .pub = META(f, c, LD_NODE_OPT_STRING, 0, 0, t, d, NULL, h, LD_NODE_OPT_INERT), .check = chk }
#define INERT_LIST(f, c, t, d, chk, h)                                                             \
  { .pub = META(f, c, LD_NODE_OPT_LIST, 0, 0, t, d, NULL, h, LD_NODE_OPT_INERT), .check = chk }

/* applied to the node configuration */
#define CFG_BOOL(f, c, member, d, pd, h)                                                           \
  {                                                                                                \
    .pub = META(f, c, LD_NODE_OPT_BOOL, 0, 0, "bool", d, pd, h, 0), .apply = apply_cfg_bool,       \
    .off = offsetof(ld_node_config_t, member)                                                      \
  }
#define CFG_U32(f, c, t, member, lo, hi, d, h)                                                     \
  {                                                                                                \
    .pub = META(f, c, LD_NODE_OPT_INT, lo, hi, t, d, NULL, h, 0), .apply = apply_cfg_u32,          \
    .off = offsetof(ld_node_config_t, member)                                                      \
  }
#define CFG_NUM(f, c, t, setter, lo, hi, d, pd, h)                                                 \
  {                                                                                                \
    .pub = META(f, c, LD_NODE_OPT_INT, lo, hi, t, d, pd, h, 0), .apply = apply_num,                \
    .num_setter = setter                                                                           \
  }
#define CFG_TEXT(f, c, k, t, setter, d, h)                                                         \
  { .pub = META(f, c, k, 0, 0, t, d, NULL, h, 0), .apply = apply_text, .text_setter = setter }
#define CFG_SERVICE(f, c, which, h)                                                                \
  {                                                                                                \
    .pub = META(f, c, LD_NODE_OPT_STRING, 0, 0, "string", "", NULL, h, 0),                         \
    .check = check_optional_peer, .apply = apply_service, .service = which                         \
  }

/* kept in ld_node_opts_t and combined by ld_node_opts_finish */
#define OPTS_BOOL(f, c, member, d, h)                                                              \
  {                                                                                                \
    .pub = META(f, c, LD_NODE_OPT_BOOL, 0, 0, "bool", d, NULL, h, 0), .apply = apply_opts_bool,    \
    .off = offsetof(ld_node_opts_t, member)                                                        \
  }
#define OPTS_INT(f, c, t, member, d, h)                                                            \
  {                                                                                                \
    .pub = META(f, c, LD_NODE_OPT_INT, 0, U16_MAX, t, d, NULL, h, 0), .apply = apply_opts_int,     \
    .off = offsetof(ld_node_opts_t, member)                                                        \
  }
#define OPTS_TEXT(f, c, t, member, chk, d, h)                                                      \
  {                                                                                                \
    .pub = META(f, c, LD_NODE_OPT_STRING, 0, 0, t, d, NULL, h, 0), .check = chk,                   \
    .apply = apply_opts_text, .off = offsetof(ld_node_opts_t, member),                             \
    .cap = sizeof(((ld_node_opts_t *)0)->member)                                                   \
  }

static const entry_t k_entries[] = {
    {.pub = META("configFile", "config-file", LD_NODE_OPT_STRING, 0, 0, "Opt[InputFile]", "none",
                 NULL, "load options from a TOML file (command line and environment win)",
                 LD_NODE_OPT_CALLER),
     .check = check_input_file},
    {.pub = META("logLevel", "log-level", LD_NODE_OPT_STRING, 0, 0, "LogLevel", "INFO", NULL,
                 "log level: TRACE, DEBUG, INFO, NOTICE, WARN, ERROR or FATAL", 0),
     .check = check_log_level,
     .apply = apply_log_level},
    {.pub = META("logFormat", "log-format", LD_NODE_OPT_STRING, 0, 0, "LogFormat", "TEXT", NULL,
                 "log line format: TEXT or JSON", 0),
     .check = check_log_format,
     .apply = apply_log_format},
    CFG_TEXT("rlnRelayCredPath", "rln-relay-cred-path", LD_NODE_OPT_STRING, "string",
             ld_node_config_set_rln_cred_path, "",
             "nwaku's RLN keystore, or JSON {\"identitySecret\": \"0x<hex>\"}"),
    CFG_TEXT("ethClientUrls", "rln-relay-eth-client-address", LD_NODE_OPT_LIST, "seq[EthRpcUrl]",
             ld_node_config_add_rln_eth_client, "[\"http://localhost:8540/\"]",
             "HTTP(S) Ethereum JSON-RPC endpoint for RLN; repeatable"),
    CFG_TEXT("rlnRelayEthContractAddress", "rln-relay-eth-contract-address", LD_NODE_OPT_STRING,
             "string", ld_node_config_set_rln_contract, "", "RLN membership contract address"),
    CFG_NUM("rlnRelayChainId", "rln-relay-chain-id", "uint", ld_node_config_set_rln_chain_id, 0,
            I64_MAX, "0", NULL, "chain ID of the RLN contract (0: ask the RPC endpoint)"),
    CFG_TEXT("rlnRelayCredPassword", "rln-relay-cred-password", LD_NODE_OPT_STRING, "string",
             ld_node_config_set_rln_cred_password, "",
             "password protecting the RLN keystore (--rln-relay-cred-path)"),
    INERT_STR("rlnRelayEthPrivateKey", "rln-relay-eth-private-key", "string", "", NULL,
              "Ethereum key paying for RLN transactions"),
    CFG_NUM("rlnRelayUserMessageLimit", "rln-relay-user-message-limit", "Opt[uint64]",
            ld_node_config_set_rln_user_message_limit, 0, I64_MAX, "none(1)", NULL,
            "messages per epoch of the RLN membership (default 1)"),
    CFG_NUM("rlnEpochSizeSec", "rln-relay-epoch-sec", "Opt[uint64]",
            ld_node_config_set_rln_epoch_sec, 0, I64_MAX, "none(1)", NULL,
            "RLN epoch length in seconds (default 1)"),
    CFG_TEXT("maxMessageSize", "max-msg-size", LD_NODE_OPT_STRING, "string",
             ld_node_config_set_max_msg_size, "150KiB",
             "largest message: a number and B, KB, KiB, MB or MiB"),
    CFG_TEXT("protectedShards", "protected-shard", LD_NODE_OPT_LIST, "seq[ProtectedShard]",
             ld_node_config_add_protected_shard, "[]",
             "<shard>:<secp256k1 public key hex> whose messages must be signed; repeatable"),
    {.pub =
         META("preset", "preset", LD_NODE_OPT_STRING, 0, 0, "string", "", NULL,
              "network preset: twn, logos.dev, logos.test or status.prod (given options win)", 0),
     .apply = apply_preset},
    {.pub =
         META("entryLayer", "entry-layer", LD_NODE_OPT_STRING, 0, 0, "EntryLayer", "channels", NULL,
              "top API layer of the library: kernel, messaging or channels", LD_NODE_OPT_INERT),
     .check = check_entry_layer},
    {.pub = META("mode", "mode", LD_NODE_OPT_STRING, 0, 0, "LogosDeliveryMode", "Core", NULL,
                 "library mode: Core (service node) or Edge (client only)", LD_NODE_OPT_INERT),
     .check = check_mode,
     .apply = apply_mode},
    CFG_NUM("clusterId", "cluster-id", "Opt[uint16]", ld_node_config_set_cluster_id, 0, U16_MAX,
            "0", NULL, "cluster ID; peers of other clusters are disconnected"),
    INERT_STR("agentString", "agent-string", "string", "logos-delivery", NULL,
              "agent string announced to peers"),
    CFG_TEXT("nodekey", "nodekey", LD_NODE_OPT_STRING, "Opt[PrivateKey]",
             ld_node_config_set_nodekey_hex, "random",
             "secp256k1 private key as 64 hex characters (the peer ID)"),
    OPTS_TEXT("listenAddress", "listen-address", "IpAddress", listen_address, check_listen_address,
              "0.0.0.0", "IP address to listen on"),
    OPTS_INT("tcpPort", "tcp-port", "Port", tcp_port, "60000", "TCP port to listen on (0: any)"),
    OPTS_INT("portsShift", "ports-shift", "uint16", ports_shift, "0", "added to every port"),
    {.pub = META("nat", "nat", LD_NODE_OPT_STRING, 0, 0, "string", "any", NULL,
                 "public address discovery: any, none, upnp, pmp or extip:<IP>", 0),
     .check = check_nat,
     .apply = apply_text,
     .text_setter = ld_node_config_set_nat},
    {.pub = META("extMultiAddrs", "ext-multiaddr", LD_NODE_OPT_LIST, 0, 0, "seq[string]", "[]",
                 NULL, "extra multiaddr to announce; repeatable", 0),
     .check = check_multiaddr,
     .apply = apply_text,
     .text_setter = ld_node_config_add_ext_multiaddr},
    CFG_BOOL("extMultiAddrsOnly", "ext-multiaddr-only", ext_multiaddr_only, "false", NULL,
             "announce only the --ext-multiaddr addresses"),
    CFG_NUM("maxConnections", "max-connections", "int", ld_node_config_set_max_connections, 1,
            LD_NODE_MAX_CONNECTIONS_LIMIT, "150", "50", "most connections at a time"),
    {.pub = META("relayServiceRatio", "relay-service-ratio", LD_NODE_OPT_STRING, 0, 0, "string",
                 "50:50", "60:40",
                 "share of connections for relay peers against service peers, e.g. 60:40", 0),
     .apply = apply_text,
     .text_setter = ld_node_config_set_relay_ratio},
    CFG_NUM("colocationLimit", "ip-colocation-limit", "int", ld_node_config_set_colocation_limit, 0,
            LD_NODE_MAX_CONNECTIONS_LIMIT, "5", NULL,
            "peers allowed from one IP address (0: no limit)"),
    CFG_NUM("peerStoreCapacity", "peer-store-capacity", "Opt[int]",
            ld_node_config_set_peer_store_capacity, I64_MIN, I64_MAX, "none", NULL,
            "most peers kept in the peer store"),
    CFG_BOOL("peerPersistence", "peer-persistence", pm.persistence, "false", NULL,
             "keep the peer store across restarts (SQLite file peers.db)"),
    INERT_LIST("dnsAddrsNameServers", "dns-addrs-name-server", "seq[IpAddress]",
               "[\"1.1.1.1\",\"1.0.0.1\"]", check_ip,
               "DNS server for resolving dnsaddr multiaddrs; repeatable"),
    CFG_TEXT("dns4DomainName", "dns4-domain-name", LD_NODE_OPT_STRING, "string",
             ld_node_config_set_dns4_domain_name, "",
             "domain name announced for this node's public IPv4 address"),
    INERT_BOOL("isRelayClient", "relay-client", "bool", "false",
               "act as a circuit-relay client (node behind NAT)"),
    CFG_BOOL("relay", "relay", relay, "true", NULL, "run the relay protocol"),
    INERT_BOOL("relayPeerExchange", "relay-peer-exchange", "bool", "false",
               "gossipsub peer exchange in relay"),
    INERT_BOOL("relayShardedPeerManagement", "relay-shard-manager", "bool", "false",
               "shard-aware relay peer management"),
    CFG_BOOL("rlnRelay", "rln-relay", rln.enabled, "none(false)", NULL, "RLN spam protection"),
    CFG_NUM("rlnRelayCredIndex", "rln-relay-membership-index", "Opt[uint]",
            ld_node_config_set_rln_membership_index, 0, I64_MAX, "none", NULL,
            "index of our RLN membership in the group"),
    CFG_BOOL("rlnRelayDynamic", "rln-relay-dynamic", rln.dynamic, "none(false)", NULL,
             "RLN with the on-chain group (the default without rln-relay-static-group-file)"),
    INERT_LIST("entryNodes", "entry-node", "seq[string]", "[]", check_entry_node,
               "entry node: enrtree:// URL, enr: record or multiaddr; repeatable"),
    CFG_TEXT("staticnodes", "staticnode", LD_NODE_OPT_LIST, "seq[string]",
             ld_node_config_add_static_node, "[]",
             "peer multiaddr to stay connected to; repeatable"),
    INERT_BOOL("keepAlive", "keep-alive", "bool", "true", "ignored (keep-alive is always on)"),
    CFG_NUM("numShardsInNetwork", "num-shards-in-network", "uint16", ld_node_config_set_num_shards,
            0, LD_NODE_MAX_SHARDS_IN_NETWORK, "0", NULL,
            "shards for autosharding (0: static sharding)"),
    CFG_TEXT("shards", "shard", LD_NODE_OPT_LIST, "seq[uint16]", ld_node_config_add_shard, "[]",
             "shard to subscribe to; repeatable (default 0..7, or all with autosharding)"),
    CFG_TEXT("contentTopics", "content-topic", LD_NODE_OPT_LIST, "seq[string]",
             ld_node_config_add_content_topic, "[]", "content topic to subscribe to; repeatable"),
    CFG_BOOL("store", "store", store, "false", NULL, "archive messages and serve store queries"),
    CFG_SERVICE("storenode", "storenode", LD_NODE_SERVICE_STORE,
                "store service peer multiaddr for the store client"),
    CFG_TEXT("storeMessageRetentionPolicy", "store-message-retention-policy", LD_NODE_OPT_STRING,
             "string", ld_node_config_set_store_retention, "time:172800",
             "time:<seconds>, capacity:<count> or size:<n>GB|MB, several joined by ';'"),
    CFG_TEXT("storeMessageDbUrl", "store-message-db-url", LD_NODE_OPT_STRING, "string",
             ld_node_config_set_store_db_url, "sqlite://store.sqlite3",
             "archive database: sqlite://<path>, postgres://user:pass@host:port/db or memory://"),
    INERT_BOOL("storeMessageDbVacuum", "store-message-db-vacuum", "bool", "false",
               "vacuum the SQLite archive at start"),
    INERT_BOOL("storeMessageDbMigration", "store-message-db-migration", "bool", "true",
               "migrate the archive schema at start"),
    CFG_U32(
        "storeMaxNumDbConnections", "store-max-num-db-connections", "int", store_max_db_connections,
        1, 1000, "50",
        "PostgreSQL connections at most (queries at once: also at most one per core, at least 2)"),
    INERT_BOOL("storeResume", "store-resume", "bool", "false",
               "fetch messages missed while offline at start"),
    CFG_BOOL("storeSync", "store-sync", store_sync, "false", NULL,
             "reconcile the archive with other store nodes (store-sync; needs --store)"),
    CFG_U32("storeSyncInterval", "store-sync-interval", "uint32", store_sync_interval_s, 0, U32_MAX,
            "300", "seconds between store sync rounds (0: none)"),
    CFG_U32("storeSyncRange", "store-sync-range", "uint32", store_sync_range_s, 0, U32_MAX, "3600",
            "seconds of history store sync covers"),
    CFG_U32("storeSyncRelayJitter", "store-sync-relay-jitter", "uint32", store_sync_relay_jitter_s,
            0, U32_MAX, "20", "seconds allowed for relay propagation in store sync"),
    CFG_BOOL("storeKeyValue", "store-key-value", store_key_value, "true", NULL,
             "serve messages by hash, and listings with their data (with --store)"),
    CFG_BOOL("storeKeyPresence", "store-key-presence", store_key_presence, "true", NULL,
             "serve hash presence queries, without data (with --store)"),
    CFG_BOOL("storeWayback", "store-wayback", store_wayback, "true", NULL,
             "serve hash listings by content topic and time (with --store)"),
    CFG_TEXT("reliabilityMode", "reliability-mode", LD_NODE_OPT_STRING, "string",
             ld_node_config_set_reliability_mode, "store",
             "Messaging API reliability: store (store queries) or p2p (Network Reliability "
             "Service, served to peers too)"),
    CFG_U32("reliabilityConfirmPeers", "reliability-confirm-peers", "uint32",
            reliability_confirm_peers, 1, 16, "2",
            "p2p reliability: distinct peers whose sets must hold a send to confirm it"),
    CFG_TEXT("reliabilityWindow", "reliability-window", LD_NODE_OPT_STRING, "string",
             ld_node_config_set_reliability_window, "7m",
             "p2p reliability: rolling window reconciled with peers (e.g. 420s, 7m)"),
    CFG_BOOL("filter", "filter", filter, "true", "false", "serve filter"),
    CFG_SERVICE("filternode", "filternode", LD_NODE_SERVICE_FILTER,
                "filter service peer multiaddr for the filter client"),
    CFG_U32("filterSubscriptionTimeout", "filter-subscription-timeout", "uint16",
            filter_subscription_timeout_s, 1, U16_MAX, "300",
            "seconds a filter subscription lives without a ping"),
    CFG_U32("filterMaxPeersToServe", "filter-max-peers-to-serve", "uint32", filter_max_peers, 1,
            1000000, "1000", "filter subscribers at most"),
    CFG_U32("filterMaxCriteria", "filter-max-criteria", "uint32", filter_max_criteria, 1, 1000000,
            "1000", "filter criteria per subscriber at most"),
    CFG_BOOL("lightpush", "lightpush", lightpush, "true", "false",
             "serve lightpush (without relay every push is answered \"no waku relay found\")"),
    CFG_SERVICE("lightpushnode", "lightpushnode", LD_NODE_SERVICE_LIGHTPUSH,
                "lightpush service peer multiaddr for the lightpush client"),
    OPTS_BOOL("rest", "rest", rest, "false", "run the REST server"),
    OPTS_TEXT("restAddress", "rest-address", "IpAddress", rest_address, check_rest_address,
              "127.0.0.1", "REST listening address"),
    OPTS_INT("restPort", "rest-port", "uint16", rest_port, "8645", "REST listening port"),
    CFG_NUM("restRelayCacheCapacity", "rest-relay-cache-capacity", "uint32",
            ld_node_config_set_rest_cache, 1, LD_NODE_MAX_REST_CACHE, "50", NULL,
            "messages the REST relay cache keeps per topic"),
    CFG_BOOL("restAdmin", "rest-admin", rest_admin, "false", NULL, "enable the REST admin API"),
    CFG_TEXT("restAllowOrigin", "rest-allow-origin", LD_NODE_OPT_LIST, "seq[string]",
             ld_node_config_add_rest_origin, "[]",
             "CORS origin allowed on REST (wildcards * and ?); repeatable"),
    OPTS_BOOL("metricsServer", "metrics-server", metrics, "false", "run the metrics server"),
    OPTS_TEXT("metricsServerAddress", "metrics-server-address", "IpAddress", metrics_address,
              check_metrics_address, "127.0.0.1", "metrics listening address"),
    OPTS_INT("metricsServerPort", "metrics-server-port", "uint16", metrics_port, "8008",
             "metrics listening port"),
    INERT_BOOL("metricsLogging", "metrics-logging", "bool", "true", "log metrics periodically"),
    INERT_BOOL("dnsDiscovery", "dns-discovery", "bool", "false",
               "deprecated: set dns-discovery-url instead"),
    CFG_TEXT("dnsDiscoveryUrl", "dns-discovery-url", LD_NODE_OPT_STRING, "string",
             ld_node_config_set_dns_discovery_url, "",
             "enrtree://<key>@<domain> node list for DNS discovery"),
    CFG_TEXT("dnsDiscoveryNameServers", "dns-discovery-name-server", LD_NODE_OPT_LIST,
             "seq[IpAddress]", ld_node_config_add_dns_name_server, "[\"1.1.1.1\",\"1.0.0.1\"]",
             "DNS server for DNS discovery, IP or IP:port; repeatable"),
    {.pub = META("discv5Discovery", "discv5-discovery", LD_NODE_OPT_BOOL, 0, 0, "Opt[bool]", "true",
                 "false", "discover peers with Node Discovery v5", 0),
     .apply = apply_cfg_bool,
     .off = offsetof(ld_node_config_t, discv5.enabled)},
    OPTS_INT("discv5UdpPort", "discv5-udp-port", "Port", discv5_udp_port, "9000",
             "UDP port of Node Discovery v5 (0: any)"),
    {.pub = META("discv5BootstrapNodes", "discv5-bootstrap-node", LD_NODE_OPT_LIST, 0, 0,
                 "seq[string]", "[]", NULL, "ENR of a discv5 bootstrap node; repeatable", 0),
     .check = check_enr,
     .apply = apply_text,
     .text_setter = ld_node_config_add_discv5_bootnode},
    CFG_BOOL("discv5EnrAutoUpdate", "discv5-enr-auto-update", discv5.enr_auto_update, "false", NULL,
             "update the ENR with the address peers see"),
    CFG_U32("discv5TableIpLimit", "discv5-table-ip-limit", "uint", discv5.table_ip_limit, 0,
            U32_MAX, "10", "discv5 routing table entries per IP address"),
    CFG_U32("discv5BucketIpLimit", "discv5-bucket-ip-limit", "uint", discv5.bucket_ip_limit, 0,
            U32_MAX, "2", "discv5 bucket entries per IP address"),
    CFG_NUM("discv5BitsPerHop", "discv5-bits-per-hop", "int",
            ld_node_config_set_discv5_bits_per_hop, 1, 8, "1", NULL, "discv5 lookup bits per hop"),
    CFG_BOOL("peerExchange", "peer-exchange", peer_exchange, "true", "false",
             "serve peer exchange"),
    INERT_STR("peerExchangeNode", "peer-exchange-node", "string", "", check_optional_peer,
              "peer multiaddr to ask for peers (peer exchange client)"),
    {.pub = META("rendezvous", "rendezvous", LD_NODE_OPT_BOOL, 0, 0, "bool", "true", "false",
                 "serve rendezvous discovery", LD_NODE_OPT_INERT)},
    INERT_BOOL("mix", "mix", "Opt[bool]", "none(false)", "run the mix protocol"),
    INERT_STR("mixkey", "mixkey", "Opt[string]", "random", check_mixkey,
              "Ed25519 mix private key as 64 hex characters"),
    INERT_LIST("mixnodes", "mixnode", "seq[MixNodePubInfo]", "[]", check_mixnode,
               "<multiaddr>:<mix public key hex> of a mix node; repeatable"),
    INERT_BOOL("enableKadDiscovery", "enable-kad-discovery", "Opt[bool]", "none(false)",
               "discover peers with kademlia"),
    INERT_LIST("kadBootstrapNodes", "kad-bootstrap-node", "seq[string]", "[]", check_peer_multiaddr,
               "kademlia bootstrap peer multiaddr; repeatable"),
    INERT_INT("kadRandomLookupIntervalSec", "kad-random-lookup-interval", "uint32", 0, U32_MAX,
              "60", "seconds between random kademlia lookups"),
    INERT_INT("kadServiceLookupIntervalSec", "kad-service-lookup-interval", "uint32", 0, U32_MAX,
              "60", "seconds between kademlia service lookups"),
    OPTS_BOOL("websocketSupport", "websocket-support", ws, "false",
              "listen for WebSocket (/ws) connections"),
    OPTS_INT("websocketPort", "websocket-port", "Port", ws_port, "8000",
             "WebSocket listening port"),
    OPTS_BOOL("websocketSecureSupport", "websocket-secure-support", wss, "false",
              "listen for secure WebSocket (/wss) on the WebSocket port"),
    OPTS_TEXT("websocketSecureKeyPath", "websocket-secure-key-path", "string", ws_key, check_path,
              "", "PEM private key for secure WebSocket"),
    OPTS_TEXT("websocketSecureCertPath", "websocket-secure-cert-path", "string", ws_cert,
              check_path, "", "PEM certificate chain for secure WebSocket"),
    INERT_BOOL("quicSupport", "quic-support", "bool", "false", "listen for QUIC connections"),
    INERT_INT("quicPort", "quic-port", "Port", 0, U16_MAX, "60000", "QUIC (UDP) listening port"),
    INERT_LIST("rateLimits", "rate-limit", "seq[string]", "[]", check_rate_limit,
               "[protocol:]<volume>/<period><h|m|s|ms> request limit; repeatable"),
    CFG_TEXT("localStoragePath", "local-storage-path", LD_NODE_OPT_STRING, "string",
             ld_node_config_set_local_storage_path, "",
             "directory for the node's small state (p2p reliability's last-online time); "
             "empty: none"),
    /* RLN-relay's static group (our addition) and the circuit's files for proving */
    CFG_TEXT("rlnRelayStaticGroupFile", "rln-relay-static-group-file", LD_NODE_OPT_STRING, "string",
             ld_node_config_set_rln_static_group_file, "",
             "JSON array of the RLN members' rate commitments (0x hex) in index order"),
    CFG_TEXT("rlnRelayCircuitDir", "rln-relay-circuit-dir", LD_NODE_OPT_STRING, "string",
             ld_node_config_set_rln_circuit_dir, "",
             "folder with the RLN-v2 rln_final.zkey and graph.bin (needed to publish)"),
    /* Reliable Channels in the node program (our addition) */
    CFG_BOOL("channels", "channels", channels, "false", NULL,
             "node program: Reliable Channels on REST /channels/v1 (with --rest)"),
};

#define N_ENTRIES (sizeof k_entries / sizeof k_entries[0])
_Static_assert(N_ENTRIES <= LD_NODE_OPTIONS_MAX, "LD_NODE_OPTIONS_MAX too small");

/* ---- lookup ------------------------------------------------------------------------------------
 */

size_t ld_node_options_count(void) {
  return N_ENTRIES;
}

const ld_node_option_t *ld_node_option_at(size_t index) {
  return index < N_ENTRIES ? &k_entries[index].pub : NULL;
}

static const entry_t *entry_of(const ld_node_option_t *opt) {
  return (const entry_t *)((const char *)opt - offsetof(entry_t, pub));
}

size_t ld_node_option_index(const ld_node_option_t *opt) {
  return (size_t)(entry_of(opt) - k_entries);
}

const ld_node_option_t *ld_node_option_find(const char *name) {
  for (size_t i = 0; name != NULL && i < N_ENTRIES; i++)
    if (ascii_eq(name, k_entries[i].pub.field) || ascii_eq(name, k_entries[i].pub.cli))
      return &k_entries[i].pub;
  return NULL;
}

const ld_node_option_t *ld_node_option_find_cli(const char *cli) {
  for (size_t i = 0; cli != NULL && i < N_ENTRIES; i++)
    if (strcmp(cli, k_entries[i].pub.cli) == 0)
      return &k_entries[i].pub;
  return NULL;
}

/* ---- filling -----------------------------------------------------------------------------------
 */

void ld_node_opts_init(ld_node_opts_t *o, ld_node_config_t *cfg, ld_node_opts_profile_t profile) {
  memset(o, 0, sizeof *o);
  ld_node_config_default(cfg);
  o->cfg = cfg;
  o->profile = profile;
  o->log_level = LD_LOG_INFO;
  o->log_format = LD_LOG_FORMAT_TEXT;
  snprintf(o->listen_address, sizeof o->listen_address, "%s", cfg->listen_address);
  o->tcp_port = cfg->tcp_port;
  snprintf(o->rest_address, sizeof o->rest_address, "%s", cfg->rest.address);
  o->rest_port = cfg->rest.port;
  snprintf(o->metrics_address, sizeof o->metrics_address, "%s", cfg->metrics.address);
  o->metrics_port = cfg->metrics.port;
  o->ws_port = cfg->ws.port;
  o->discv5_udp_port = cfg->discv5.udp_port;
  o->mode = LD_NODE_MODE_CORE;
  if (profile == LD_NODE_OPTS_LIBRARY) {
    cfg->discv5.enabled = true; /* c-api.md §5.5 */
    cfg->pm.relay_ratio = 50;
    cfg->max_connections = 150;
    cfg->filter = cfg->lightpush = cfg->peer_exchange = true;
  }
}

static int check_value(const entry_t *e, value_t *v, char *err, size_t errlen) {
  switch (e->pub.kind) {
  case LD_NODE_OPT_BOOL:
    if (ld_node_option_parse_bool(v->text, &v->flag) != 0)
      return ld_error_fmt(err, errlen, LD_ERR_INVALID_ARG, "expected true or false");
    return 0;
  case LD_NODE_OPT_INT:
    return ld_node_option_parse_int(v->text, e->pub.min, e->pub.max, &v->num, err, errlen);
  case LD_NODE_OPT_STRING:
  case LD_NODE_OPT_LIST:
    break;
  }
  return e->check != NULL ? e->check(v->text, err, errlen) : 0;
}

int ld_node_opts_set(ld_node_opts_t *o, const ld_node_option_t *opt, const char *text, char *err,
                     size_t errlen) {
  const entry_t *e = entry_of(opt);
  value_t v = {.text = text};
  int rc = check_value(e, &v, err, errlen);
  if (rc == 0 && e->apply != NULL)
    rc = e->apply(o, e, &v, err, errlen);
  if (rc != 0)
    return rc;
  o->set[e - k_entries] = true;
  if (opt->flags & (LD_NODE_OPT_INERT | LD_NODE_OPT_CALLER))
    ld_node_config_add_inert(o->cfg, opt->cli);
  return 0;
}

bool ld_node_opts_is_set(const ld_node_opts_t *o, const char *cli) {
  const ld_node_option_t *opt = ld_node_option_find_cli(cli);
  return opt != NULL && o->set[ld_node_option_index(opt)];
}

void ld_node_opts_apply_mode(ld_node_opts_t *o, ld_node_mode_t mode) {
  ld_node_config_t *cfg = o->cfg;
  cfg->peer_exchange = true;
  if (mode == LD_NODE_MODE_CORE) {
    cfg->relay = cfg->filter = cfg->lightpush = true;
  } else {
    cfg->relay = cfg->filter = cfg->lightpush = cfg->store = false;
  }
}

/* Records what a preset would switch on that has no effect yet. */
static void note_preset_inert(ld_node_opts_t *o, const ld_waku_network_preset_t *p) {
  if (p->rln_relay && o->cfg->relay)
    ld_node_config_add_inert(o->cfg, "rln-relay");
  if (p->discv5 && !ld_node_opts_is_set(o, "discv5-discovery"))
    o->cfg->discv5.enabled = true;
  if (p->kademlia)
    ld_node_config_add_inert(o->cfg, "enable-kad-discovery");
  if (p->mix)
    ld_node_config_add_inert(o->cfg, "mix");
  /* twn bootstraps discv5 from built-in ENRs; the other networks list entry nodes */
  bool twn = strcmp(p->name, "twn") == 0;
  ld_node_config_add_inert(o->cfg, twn ? "discv5-bootstrap-node" : "entry-node");
}

static int apply_network_preset(ld_node_opts_t *o, char *err, size_t errlen) {
  if (o->preset[0] == '\0')
    return 0;
  const ld_waku_network_preset_t *p = ld_node_option_preset(o->preset);
  if (p == NULL) {
    char lower[LD_NODE_OPTS_PRESET_MAX];
    size_t i = 0;
    for (; o->preset[i] != '\0'; i++)
      lower[i] = ascii_lower(o->preset[i]);
    lower[i] = '\0';
    return ld_error_fmt(err, errlen, LD_ERR_INVALID_ARG, "Invalid --preset value passed: %s",
                        lower);
  }
  o->preset_conf = p;
  if (!ld_node_opts_is_set(o, "cluster-id"))
    o->cfg->cluster_id = p->cluster_id;
  if (o->cfg->num_shards_in_network == 0)
    o->cfg->num_shards_in_network = p->num_shards;
  if (!ld_node_opts_is_set(o, "max-msg-size"))
    o->cfg->max_msg_size = p->max_msg_size;
  note_preset_inert(o, p);
  /* the preset's DNS discovery tree, unless --dns-discovery-url was given */
  if (p->dns_discovery_url != NULL && !ld_node_opts_is_set(o, "dns-discovery-url"))
    ld_node_config_set_dns_discovery_url(o->cfg, p->dns_discovery_url, NULL, 0);
  return 0;
}

static int combine(ld_node_opts_t *o, char *err, size_t errlen) {
  ld_node_config_t *cfg = o->cfg;
  int64_t shift = o->ports_shift;
  int rc = ld_node_config_set_listen(cfg, o->listen_address, o->tcp_port, shift, err, errlen);
  if (rc == 0)
    rc = ld_node_config_set_rest(cfg, o->rest, o->rest_address, o->rest_port, shift, err, errlen);
  if (rc == 0)
    rc = ld_node_config_set_metrics(cfg, o->metrics, o->metrics_address, o->metrics_port, shift,
                                    err, errlen);
  if (rc == 0)
    rc = ld_node_config_set_websocket(cfg, o->ws, o->ws_port, shift, o->wss, o->ws_key, o->ws_cert,
                                      err, errlen);
  if (rc == 0 && o->discv5_udp_port + shift > 65535)
    rc = ld_error_fmt(err, errlen, LD_ERR_INVALID_ARG,
                      "discv5-udp-port %lld + ports-shift %lld is above 65535",
                      (long long)o->discv5_udp_port, (long long)shift);
  if (rc == 0)
    cfg->discv5.udp_port = (uint16_t)(o->discv5_udp_port + shift);
  return rc;
}

int ld_node_opts_finish(ld_node_opts_t *o, char *err, size_t errlen) {
  int rc = apply_network_preset(o, err, errlen);
  return rc != 0 ? rc : combine(o, err, errlen);
}
