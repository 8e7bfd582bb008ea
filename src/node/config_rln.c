/* The RLN-relay settings of the node configuration (config.h). */
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "base/error.h"
#include "node/config.h"

static int set_path(char *dst, size_t cap, const char *what, const char *text, char *err,
                    size_t errlen) {
  if (strlen(text) >= cap)
    return ld_error_fmt(err, errlen, LD_ERR_TOO_LARGE, "%s is longer than %zu bytes", what,
                        cap - 1);
  snprintf(dst, cap, "%s", text);
  return 0;
}

int ld_node_config_set_rln_static_group_file(ld_node_config_t *cfg, const char *text, char *err,
                                             size_t errlen) {
  return set_path(cfg->rln.static_group_file, sizeof cfg->rln.static_group_file,
                  "rln-relay-static-group-file", text, err, errlen);
}

int ld_node_config_set_rln_cred_path(ld_node_config_t *cfg, const char *text, char *err,
                                     size_t errlen) {
  return set_path(cfg->rln.cred_path, sizeof cfg->rln.cred_path, "rln-relay-cred-path", text, err,
                  errlen);
}

int ld_node_config_set_rln_circuit_dir(ld_node_config_t *cfg, const char *text, char *err,
                                       size_t errlen) {
  return set_path(cfg->rln.circuit_dir, sizeof cfg->rln.circuit_dir, "rln-relay-circuit-dir", text,
                  err, errlen);
}

int ld_node_config_set_rln_membership_index(ld_node_config_t *cfg, int64_t n, char *err,
                                            size_t errlen) {
  if (n < 0)
    return ld_error_fmt(err, errlen, LD_ERR_INVALID_ARG,
                        "rln-relay-membership-index must not be negative");
  cfg->rln.has_membership_index = true;
  cfg->rln.membership_index = (uint64_t)n;
  return 0;
}

int ld_node_config_set_rln_user_message_limit(ld_node_config_t *cfg, int64_t n, char *err,
                                              size_t errlen) {
  if (n < 1)
    return ld_error_fmt(err, errlen, LD_ERR_INVALID_ARG,
                        "rln-relay-user-message-limit must be at least 1");
  cfg->rln.user_message_limit = (uint64_t)n;
  return 0;
}

int ld_node_config_set_rln_epoch_sec(ld_node_config_t *cfg, int64_t n, char *err, size_t errlen) {
  if (n < 1)
    return ld_error_fmt(err, errlen, LD_ERR_INVALID_ARG, "rln-relay-epoch-sec must be at least 1");
  cfg->rln.epoch_sec = (uint64_t)n;
  return 0;
}

/* ---- nwaku's keystore and the on-chain group -------------------------------------------------
 */

int ld_node_config_set_rln_cred_password(ld_node_config_t *cfg, const char *text, char *err,
                                         size_t errlen) {
  return set_path(cfg->rln.cred_password, sizeof cfg->rln.cred_password, "rln-relay-cred-password",
                  text, err, errlen);
}

static bool has_prefix(const char *text, const char *prefix) {
  return strncasecmp(text, prefix, strlen(prefix)) == 0;
}

int ld_node_config_add_rln_eth_client(ld_node_config_t *cfg, const char *text, char *err,
                                      size_t errlen) {
  if (has_prefix(text, "ws://") || has_prefix(text, "wss://"))
    return ld_error_fmt(err, errlen, LD_ERR_INVALID_ARG,
                        "'%s': WebSocket RPC URLs are not supported, use an HTTP URL", text);
  const char *host = has_prefix(text, "http://")    ? text + 7
                     : has_prefix(text, "https://") ? text + 8
                                                    : NULL;
  if (host == NULL || host[0] == '\0' || host[0] == '/' || host[0] == ':' ||
      strpbrk(text, " \t\r\n") != NULL)
    return ld_error_fmt(err, errlen, LD_ERR_INVALID_ARG, "'%s' is not an HTTP RPC URL", text);
  if (cfg->rln.n_eth_clients >= LD_NODE_RLN_MAX_ETH_CLIENTS)
    return ld_error_fmt(err, errlen, LD_ERR_LIMIT,
                        "rln-relay-eth-client-address: at most %d endpoints",
                        LD_NODE_RLN_MAX_ETH_CLIENTS);
  size_t i = cfg->rln.n_eth_clients;
  int rc = set_path(cfg->rln.eth_clients[i], sizeof cfg->rln.eth_clients[i],
                    "rln-relay-eth-client-address", text, err, errlen);
  if (rc == 0)
    cfg->rln.n_eth_clients++;
  return rc;
}

int ld_node_config_set_rln_contract(ld_node_config_t *cfg, const char *text, char *err,
                                    size_t errlen) {
  size_t n = strlen(text);
  bool ok = n == 0 || (n == 42 && text[0] == '0' && (text[1] == 'x' || text[1] == 'X') &&
                       strspn(text + 2, "0123456789abcdefABCDEF") == 40);
  if (!ok)
    return ld_error_fmt(err, errlen, LD_ERR_INVALID_ARG,
                        "rln-relay-eth-contract-address '%s' is not 0x and 40 hex digits", text);
  snprintf(cfg->rln.eth_contract, sizeof cfg->rln.eth_contract, "%s", text);
  return 0;
}

int ld_node_config_set_rln_chain_id(ld_node_config_t *cfg, int64_t n, char *err, size_t errlen) {
  if (n < 0)
    return ld_error_fmt(err, errlen, LD_ERR_INVALID_ARG, "rln-relay-chain-id must not be negative");
  cfg->rln.chain_id = (uint64_t)n;
  return 0;
}
