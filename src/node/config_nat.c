/* The NAT and announced-address settings of the node configuration (config.h). */
#include <arpa/inet.h>
#include <ctype.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "base/error.h"
#include "node/config.h"

static bool is_ip_literal(const char *text) {
  unsigned char buf[16];
  return inet_pton(AF_INET, text, buf) == 1 || inet_pton(AF_INET6, text, buf) == 1;
}

int ld_node_config_set_nat(ld_node_config_t *cfg, const char *text, char *err, size_t errlen) {
  static const struct {
    const char *name;
    ld_node_nat_t mode;
  } modes[] = {{"any", LD_NODE_NAT_ANY},
               {"none", LD_NODE_NAT_NONE},
               {"upnp", LD_NODE_NAT_UPNP},
               {"pmp", LD_NODE_NAT_PMP}};
  for (size_t i = 0; i < sizeof modes / sizeof modes[0]; i++) {
    if (strcasecmp(text, modes[i].name) == 0) {
      cfg->nat = modes[i].mode;
      cfg->nat_ext_ip[0] = '\0';
      return 0;
    }
  }
  if (strncasecmp(text, "extip:", 6) == 0 && strlen(text + 6) < sizeof cfg->nat_ext_ip &&
      is_ip_literal(text + 6)) {
    cfg->nat = LD_NODE_NAT_EXTIP;
    snprintf(cfg->nat_ext_ip, sizeof cfg->nat_ext_ip, "%s", text + 6);
    return 0;
  }
  return ld_error_fmt(err, errlen, LD_ERR_INVALID_ARG,
                      "nat '%s' must be any, none, upnp, pmp or extip:<IP address>", text);
}

int ld_node_config_add_ext_multiaddr(ld_node_config_t *cfg, const char *text, char *err,
                                     size_t errlen) {
  ld_multiaddr_t ma;
  if (ld_multiaddr_parse(&ma, text) != 0)
    return ld_error_fmt(err, errlen, LD_ERR_INVALID_ARG,
                        "ext-multiaddr '%s' is not a valid multiaddr", text);
  for (size_t i = 0; i < cfg->n_ext_multiaddrs; i++)
    if (ld_multiaddr_equal(&cfg->ext_multiaddrs[i], &ma))
      return 0;
  if (cfg->n_ext_multiaddrs >= LD_NODE_MAX_EXT_MULTIADDRS)
    return ld_error_fmt(err, errlen, LD_ERR_LIMIT, "more than %d ext-multiaddr values",
                        LD_NODE_MAX_EXT_MULTIADDRS);
  cfg->ext_multiaddrs[cfg->n_ext_multiaddrs++] = ma;
  return 0;
}

int ld_node_config_set_dns4_domain_name(ld_node_config_t *cfg, const char *text, char *err,
                                        size_t errlen) {
  size_t len = strlen(text);
  bool ok = len < sizeof cfg->dns4_domain_name && text[0] != '.' && text[0] != '-';
  for (size_t i = 0; ok && i < len; i++)
    ok = isalnum((unsigned char)text[i]) || text[i] == '-' || text[i] == '.' || text[i] == '_';
  if (!ok)
    return ld_error_fmt(err, errlen, LD_ERR_INVALID_ARG,
                        "dns4-domain-name '%s' is not a domain name", text);
  snprintf(cfg->dns4_domain_name, sizeof cfg->dns4_domain_name, "%s", text);
  return 0;
}
