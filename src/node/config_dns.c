/* The DNS discovery settings of the node configuration (config.h). */
#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "node/config.h"
#include "waku/discovery/dns_tree.h"

_Static_assert(LD_NODE_DNS_URL_MAX > LD_DNS_URL_MAX, "room for any enrtree:// URL");

int ld_node_config_set_dns_discovery_url(ld_node_config_t *cfg, const char *text, char *err,
                                         size_t errlen) {
  ld_dns_url_t url;
  if (text[0] == '\0') {
    cfg->dns_discovery_url[0] = '\0';
    return 0;
  }
  if (strlen(text) >= sizeof cfg->dns_discovery_url || ld_dns_url_parse(text, strlen(text), &url))
    return ld_error_fmt(err, errlen, LD_ERR_INVALID_ARG,
                        "dns-discovery-url '%s' is not an enrtree://<base32 key>@<domain> URL",
                        text);
  snprintf(cfg->dns_discovery_url, sizeof cfg->dns_discovery_url, "%s", text);
  return 0;
}

static bool is_ip(const char *text, int family) {
  unsigned char buf[16];
  return inet_pton(family, text, buf) == 1;
}

static bool is_port(const char *text) {
  char *end = NULL;
  long v = strtol(text, &end, 10);
  return text[0] >= '0' && text[0] <= '9' && *end == '\0' && v > 0 && v <= 65535;
}

/* "1.2.3.4", "1.2.3.4:53", "::1", "[::1]:53". */
static bool valid_server(const char *text) {
  char host[LD_NODE_DNS_NAME_SERVER_MAX];
  size_t len = strlen(text);
  if (len == 0 || len >= sizeof host)
    return false;
  if (text[0] == '[') {
    const char *close = strchr(text, ']');
    if (close == NULL || close[1] != ':' || !is_port(close + 2))
      return false;
    snprintf(host, sizeof host, "%.*s", (int)(close - text - 1), text + 1);
    return is_ip(host, AF_INET6);
  }
  if (is_ip(text, AF_INET) || is_ip(text, AF_INET6))
    return true;
  const char *colon = strchr(text, ':');
  if (colon == NULL || strchr(colon + 1, ':') != NULL || !is_port(colon + 1))
    return false;
  snprintf(host, sizeof host, "%.*s", (int)(colon - text), text);
  return is_ip(host, AF_INET);
}

int ld_node_config_add_dns_name_server(ld_node_config_t *cfg, const char *text, char *err,
                                       size_t errlen) {
  if (!valid_server(text))
    return ld_error_fmt(err, errlen, LD_ERR_INVALID_ARG,
                        "dns-discovery-name-server '%s' must be an IP address, optionally with "
                        ":port ([ip6]:port)",
                        text);
  for (size_t i = 0; i < cfg->n_dns_name_servers; i++)
    if (strcmp(cfg->dns_name_servers[i], text) == 0)
      return 0;
  if (cfg->n_dns_name_servers >= LD_NODE_MAX_DNS_NAME_SERVERS)
    return ld_error_fmt(err, errlen, LD_ERR_LIMIT, "more than %d DNS name servers",
                        LD_NODE_MAX_DNS_NAME_SERVERS);
  snprintf(cfg->dns_name_servers[cfg->n_dns_name_servers++], LD_NODE_DNS_NAME_SERVER_MAX, "%s",
           text);
  return 0;
}
