#include "node/config.h"

#include <arpa/inet.h>
#include <stdio.h>
#include <string.h>

#include "base/error.h"
#include "base/hex.h"

void ld_node_config_default(ld_node_config_t *cfg) {
  memset(cfg, 0, sizeof *cfg);
  strcpy(cfg->listen_address, "0.0.0.0");
  cfg->tcp_port = LD_NODE_DEFAULT_TCP_PORT;
  cfg->max_connections = LD_NODE_DEFAULT_MAX_CONNECTIONS;
  cfg->dial_timeout_ms = 10000;
}

int ld_node_config_set_nodekey_hex(ld_node_config_t *cfg, const char *hex, char *err,
                                   size_t errlen) {
  uint8_t secret[32];
  size_t n = 0;
  int rc = ld_hex_decode(hex, strlen(hex), secret, sizeof secret, &n);
  if (rc != 0 || n != sizeof secret) {
    snprintf(err, errlen, "nodekey must be 64 hex characters (a secp256k1 private key)");
    return rc != 0 && rc != LD_ERR_LIMIT ? rc : LD_ERR_BAD_ENCODING;
  }
  rc = ld_privkey_from_secp256k1(&cfg->nodekey, secret);
  memset(secret, 0, sizeof secret);
  if (rc != 0) {
    snprintf(err, errlen, "nodekey is not a valid secp256k1 private key");
    return rc;
  }
  cfg->has_nodekey = true;
  return 0;
}

static bool is_ip_literal(const char *address) {
  uint8_t tmp[16];
  return inet_pton(AF_INET, address, tmp) == 1 || inet_pton(AF_INET6, address, tmp) == 1;
}

int ld_node_config_set_listen(ld_node_config_t *cfg, const char *address, int64_t port,
                              int64_t shift, char *err, size_t errlen) {
  if (strlen(address) >= sizeof cfg->listen_address || !is_ip_literal(address)) {
    snprintf(err, errlen, "listen address '%s' is not an IPv4 or IPv6 address", address);
    return LD_ERR_INVALID_ARG;
  }
  if (port < 0 || shift < 0 || port + shift > 65535) {
    snprintf(err, errlen, "TCP port %lld plus ports shift %lld is not a valid port",
             (long long)port, (long long)shift);
    return LD_ERR_INVALID_ARG;
  }
  strcpy(cfg->listen_address, address);
  cfg->tcp_port = (uint16_t)(port + shift);
  return 0;
}
