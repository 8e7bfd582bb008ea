/* The RLN-relay settings of the node configuration (config.h). */
#include <stdio.h>
#include <string.h>

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
