/* The addresses a node announces: the bound listen addresses, with 0.0.0.0 and :: replaced by
 * the machine's interface addresses (identify, REST and the "Listening on" lines must never carry
 * an unspecified address). */
#include <netinet/in.h>
#include <string.h>

#include "base/error.h"
#include "base/log.h"
#include "node/node_internal.h"

static bool is_unspecified(const ld_multiaddr_t *ma, int *family) {
  size_t off = 0;
  ld_multiaddr_component_t c;
  if (ld_multiaddr_next(ma, &off, &c) != 1)
    return false;
  static const uint8_t zero[16] = {0};
  *family = c.code == LD_MA_IP4 ? AF_INET : AF_INET6;
  return (c.code == LD_MA_IP4 || c.code == LD_MA_IP6) && memcmp(c.value, zero, c.value_len) == 0;
}

static uint16_t tcp_port(const ld_multiaddr_t *ma) {
  size_t off = 0;
  ld_multiaddr_component_t c;
  while (ld_multiaddr_next(ma, &off, &c) == 1)
    if (c.code == LD_MA_TCP && c.value_len == 2)
      return (uint16_t)(c.value[0] << 8 | c.value[1]);
  return 0;
}

/* Appends to `dst` the components of `src` that follow its /tcp/<port> (/ws, /wss, /tls/ws). */
static void append_after_tcp(ld_multiaddr_t *dst, const ld_multiaddr_t *src) {
  size_t off = 0;
  ld_multiaddr_component_t c;
  bool after = false;
  while (ld_multiaddr_next(src, &off, &c) == 1) {
    if (after)
      ld_multiaddr_push(dst, c.code, c.value, c.value_len);
    after = after || c.code == LD_MA_TCP;
  }
}

static bool is_link_local_v6(const struct sockaddr_in6 *a) {
  return a->sin6_addr.s6_addr[0] == 0xfe && (a->sin6_addr.s6_addr[1] & 0xc0) == 0x80;
}

static void add_addr(ld_node_t *node, const ld_multiaddr_t *ma) {
  for (size_t i = 0; i < node->n_announced; i++)
    if (ld_multiaddr_equal(&node->announced[i], ma))
      return;
  if (node->n_announced < LD_NODE_MAX_LISTEN_ADDRS)
    node->announced[node->n_announced++] = *ma;
}

/* Adds the interface addresses of `family` (AF_INET6 also takes IPv4: a :: socket is dual-stack)
 * with the port and the transport tail of `bound`: external interfaces first, then loopback. */
static void add_interfaces(ld_node_t *node, int family, const ld_multiaddr_t *bound) {
  uint16_t port = tcp_port(bound);
  uv_interface_address_t *ifs = NULL;
  int count = 0;
  if (uv_interface_addresses(&ifs, &count) != 0)
    return;
  for (int pass = 0; pass < 2; pass++) {
    for (int i = 0; i < count; i++) {
      const uv_interface_address_t *ia = &ifs[i];
      int af = ia->address.address4.sin_family;
      if ((pass == 0) == (ia->is_internal != 0) || (af != AF_INET && af != AF_INET6))
        continue;
      if ((af == AF_INET6 && family != AF_INET6) ||
          (af == AF_INET6 && is_link_local_v6(&ia->address.address6)))
        continue;
      struct sockaddr_storage ss;
      memcpy(&ss, &ia->address,
             af == AF_INET ? sizeof(struct sockaddr_in) : sizeof(struct sockaddr_in6));
      if (af == AF_INET)
        ((struct sockaddr_in *)&ss)->sin_port = htons(port);
      else
        ((struct sockaddr_in6 *)&ss)->sin6_port = htons(port);
      ld_multiaddr_t ma;
      if (ld_multiaddr_from_sockaddr(&ma, &ss) == 0) {
        append_after_tcp(&ma, bound);
        add_addr(node, &ma);
      }
    }
  }
  uv_free_interface_addresses(ifs, count);
}

int ld_node_announce_addrs(ld_node_t *node) {
  ld_multiaddr_t bound[LD_NODE_MAX_LISTEN_ADDRS];
  size_t n = ld_switch_listen_addrs(node->sw, bound, LD_NODE_MAX_LISTEN_ADDRS);
  node->n_announced = 0;
  for (size_t i = 0; i < n && i < LD_NODE_MAX_LISTEN_ADDRS; i++) {
    int family = AF_INET;
    size_t before = node->n_announced;
    if (is_unspecified(&bound[i], &family))
      add_interfaces(node, family, &bound[i]);
    if (node->n_announced == before && !is_unspecified(&bound[i], &family))
      add_addr(node, &bound[i]);
    if (node->n_announced == before)
      LD_WARN("node", "no interface address to announce for an unspecified listen address");
  }
  ld_node_nat_rewrite_addrs(node);
  return ld_identify_set_listen_addrs(node->identify, node->announced, node->n_announced);
}
