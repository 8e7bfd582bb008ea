/* NAT traversal and the announced addresses (nwaku's --nat, --ext-multiaddr, --ext-multiaddr-only,
 * --dns4-domain-name).
 *
 * The addresses a node announces (identify, ENR, REST) start from its bound addresses
 * (node_addrs.c); ld_node_nat_rewrite_addrs then puts the public host in their place: the
 * --dns4-domain-name, else the --nat=extip address, else the external address of a port mapping,
 * with the mapping's external port on the TCP address; the --ext-multiaddr values follow, or are
 * all that is announced with --ext-multiaddr-only.
 *
 * Port mappings: --nat=upnp asks an UPnP IGD (libminiupnpc), --nat=pmp a NAT-PMP gateway
 * (libnatpmp), --nat=any the first, then the second (only when the node listens on a
 * non-loopback address). The libraries are loaded at run time; their calls block, so they run in
 * libuv's thread pool, one job at a time. A mapping is asked for LD_NAT_LEASE_S seconds and
 * renewed every half lease; at stop it is removed (the stop waits for that). A discovery still
 * under way at stop is left to finish on its own, and a mapping it made is then removed. */
#include <arpa/inet.h>
#include <dlfcn.h>
#include <natpmp.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/select.h>

#include <miniupnpc/miniupnpc.h>
#include <miniupnpc/upnpcommands.h>

#include "base/dynlib.h"
#include "base/error.h"
#include "base/log.h"
#include "node/node_internal.h"
#include "node/peer_manager.h"

#define TOPIC "nat"
#define LD_NAT_LEASE_S 3600
#define LD_NAT_UPNP_DISCOVER_MS 2000
#define LD_NAT_UPNP_DISCOVER_ANY_MS 1000 /* --nat=any, the default: shorter */
#define LD_NAT_PMP_WAIT_MS 2000
#define MAPPING_DESC "logosdelivery"

/* ---- libminiupnpc and libnatpmp, loaded at run time ----------------------------------------- */

typedef struct upnp_api {
  __typeof__(&upnpDiscoverDevices) discover;
  __typeof__(&freeUPNPDevlist) free_devlist;
  __typeof__(&UPNP_GetValidIGD) get_valid_igd;
  __typeof__(&FreeUPNPUrls) free_urls;
  __typeof__(&UPNP_GetExternalIPAddress) external_ip;
  __typeof__(&UPNP_AddPortMapping) add_mapping;
  __typeof__(&UPNP_DeletePortMapping) delete_mapping;
} upnp_api_t;

typedef struct pmp_api {
  __typeof__(&initnatpmp) init;
  __typeof__(&closenatpmp) close;
  __typeof__(&sendpublicaddressrequest) public_address;
  __typeof__(&sendnewportmappingrequest) new_mapping;
  __typeof__(&getnatpmprequesttimeout) timeout;
  __typeof__(&readnatpmpresponseorretry) read;
} pmp_api_t;

static upnp_api_t g_upnp;
static pmp_api_t g_pmp;
static int g_upnp_status = LD_ERR_IO, g_pmp_status = LD_ERR_IO;
static pthread_once_t g_upnp_once = PTHREAD_ONCE_INIT, g_pmp_once = PTHREAD_ONCE_INIT;

#define SYM(api, field, name)                                                                      \
  { name, (void **)&api.field }

static void load_upnp(void) {
  static const ld_dynlib_sym_t syms[] = {
      SYM(g_upnp, discover, "upnpDiscoverDevices"),
      SYM(g_upnp, free_devlist, "freeUPNPDevlist"),
      SYM(g_upnp, get_valid_igd, "UPNP_GetValidIGD"),
      SYM(g_upnp, free_urls, "FreeUPNPUrls"),
      SYM(g_upnp, external_ip, "UPNP_GetExternalIPAddress"),
      SYM(g_upnp, add_mapping, "UPNP_AddPortMapping"),
      SYM(g_upnp, delete_mapping, "UPNP_DeletePortMapping"),
  };
  g_upnp_status = ld_dynlib_load("libminiupnpc.so.17", "libminiupnpc.so", syms,
                                 sizeof syms / sizeof syms[0], TOPIC, "no UPnP port mapping");
}

static void load_pmp(void) {
  static const ld_dynlib_sym_t syms[] = {
      SYM(g_pmp, init, "initnatpmp"),
      SYM(g_pmp, close, "closenatpmp"),
      SYM(g_pmp, public_address, "sendpublicaddressrequest"),
      SYM(g_pmp, new_mapping, "sendnewportmappingrequest"),
      SYM(g_pmp, timeout, "getnatpmprequesttimeout"),
      SYM(g_pmp, read, "readnatpmpresponseorretry"),
  };
  g_pmp_status = ld_dynlib_load("libnatpmp.so.1", "libnatpmp.so", syms,
                                sizeof syms / sizeof syms[0], TOPIC, "no NAT-PMP port mapping");
}

/* ---- the mapping state ---------------------------------------------------------------------- */

typedef enum map_kind { MAP_NONE, MAP_UPNP, MAP_PMP } map_kind_t;
typedef enum job { JOB_MAP, JOB_RENEW, JOB_UNMAP } job_t;

struct node_nat {
  ld_node_t *node; /* NULL once the node stopped without waiting for the job */
  ld_node_nat_t mode;
  uint16_t internal_port;
  char multicast_if[64]; /* the listen address for SSDP, or "" */
  uv_loop_t *loop;
  uv_work_t work;
  job_t job;
  bool busy;
  uv_timer_t renew;
  bool renew_init;
  /* written by the jobs, read on the loop once they are done */
  map_kind_t kind;
  char ext_ip[INET6_ADDRSTRLEN];
  uint16_t ext_port;
  char lan_ip[INET6_ADDRSTRLEN];
  char why[160];
  struct UPNPUrls urls;
  struct IGDdatas igd;
  bool have_igd;
};

/* ---- jobs (thread pool) --------------------------------------------------------------------- */

static bool upnp_add(node_nat_t *n) {
  char port[8], lease[16];
  snprintf(port, sizeof port, "%u", n->internal_port);
  snprintf(lease, sizeof lease, "%d", LD_NAT_LEASE_S);
  int rc = g_upnp.add_mapping(n->urls.controlURL, n->igd.first.servicetype, port, port, n->lan_ip,
                              MAPPING_DESC, "TCP", NULL, lease);
  if (rc == 725) /* OnlyPermanentLeasesSupported */
    rc = g_upnp.add_mapping(n->urls.controlURL, n->igd.first.servicetype, port, port, n->lan_ip,
                            MAPPING_DESC, "TCP", NULL, "0");
  if (rc != 0)
    snprintf(n->why, sizeof n->why, "UPnP AddPortMapping failed (error %d)", rc);
  return rc == 0;
}

static bool upnp_map(node_nat_t *n) {
  if (pthread_once(&g_upnp_once, load_upnp), g_upnp_status != 0) {
    snprintf(n->why, sizeof n->why, "libminiupnpc is not available");
    return false;
  }
  /* one search round for Internet gateway devices (version 1 and 2), not miniupnpc's default
   * sequence of device types with a wait each */
  static const char *const types[] = {"urn:schemas-upnp-org:device:InternetGatewayDevice:1",
                                      "urn:schemas-upnp-org:device:InternetGatewayDevice:2", NULL};
  int err = 0;
  struct UPNPDev *devs = g_upnp.discover(
      types, n->mode == LD_NODE_NAT_ANY ? LD_NAT_UPNP_DISCOVER_ANY_MS : LD_NAT_UPNP_DISCOVER_MS,
      n->multicast_if[0] ? n->multicast_if : NULL, NULL, 0, 0, 2, &err, 1);
  if (devs == NULL) {
    snprintf(n->why, sizeof n->why, "no UPnP device answered (error %d)", err);
    return false;
  }
  int igd = g_upnp.get_valid_igd(devs, &n->urls, &n->igd, n->lan_ip, sizeof n->lan_ip);
  g_upnp.free_devlist(devs);
  if (igd == 0) {
    snprintf(n->why, sizeof n->why, "no UPnP Internet gateway device found");
    return false;
  }
  n->have_igd = true;
  if (igd != 1 && igd != 2) {
    snprintf(n->why, sizeof n->why, "the UPnP device found is not an Internet gateway device");
    return false;
  }
  char ext[40] = "";
  if (g_upnp.external_ip(n->urls.controlURL, n->igd.first.servicetype, ext) != 0 ||
      ext[0] == '\0') {
    snprintf(n->why, sizeof n->why, "the UPnP gateway did not tell its external address");
    return false;
  }
  if (!upnp_add(n))
    return false;
  snprintf(n->ext_ip, sizeof n->ext_ip, "%s", ext);
  n->ext_port = n->internal_port;
  n->kind = MAP_UPNP;
  return true;
}

/* One NAT-PMP request and its answer within LD_NAT_PMP_WAIT_MS. */
static int pmp_exchange(natpmp_t *p, natpmpresp_t *resp) {
  uint64_t waited_ms = 0;
  for (;;) {
    struct timeval tv;
    fd_set fds;
    FD_ZERO(&fds);
    FD_SET(p->s, &fds);
    g_pmp.timeout(p, &tv);
    if (tv.tv_sec > 0 || tv.tv_usec > 250000)
      tv = (struct timeval){0, 250000};
    select(p->s + 1, &fds, NULL, NULL, &tv);
    waited_ms += (uint64_t)tv.tv_sec * 1000 + (uint64_t)tv.tv_usec / 1000 + 1;
    int rc = g_pmp.read(p, resp);
    if (rc != NATPMP_TRYAGAIN)
      return rc;
    if (waited_ms >= LD_NAT_PMP_WAIT_MS)
      return NATPMP_TRYAGAIN;
  }
}

/* Maps (lifetime LD_NAT_LEASE_S) or unmaps (lifetime 0) the port; learns the public address. */
static bool pmp_request(node_nat_t *n, uint32_t lifetime) {
  if (pthread_once(&g_pmp_once, load_pmp), g_pmp_status != 0) {
    snprintf(n->why, sizeof n->why, "libnatpmp is not available");
    return false;
  }
  natpmp_t p;
  natpmpresp_t resp;
  if (g_pmp.init(&p, 0, 0) != 0) {
    snprintf(n->why, sizeof n->why, "no default gateway for NAT-PMP");
    return false;
  }
  int rc = 0;
  if (lifetime > 0) {
    rc = g_pmp.public_address(&p) < 0 ? -1 : pmp_exchange(&p, &resp);
    if (rc == 0)
      inet_ntop(AF_INET, &resp.pnu.publicaddress.addr, n->ext_ip, sizeof n->ext_ip);
  }
  if (rc == 0) {
    rc = g_pmp.new_mapping(&p, NATPMP_PROTOCOL_TCP, n->internal_port,
                           lifetime > 0 ? n->internal_port : 0, lifetime) < 0
             ? -1
             : pmp_exchange(&p, &resp);
  }
  g_pmp.close(&p);
  if (rc != 0) {
    snprintf(n->why, sizeof n->why, "no NAT-PMP answer from the gateway (%d)", rc);
    return false;
  }
  if (lifetime > 0) {
    n->ext_port = resp.pnu.newportmapping.mappedpublicport;
    n->kind = MAP_PMP;
  }
  return true;
}

static void run_job(uv_work_t *w) {
  node_nat_t *n = w->data;
  n->why[0] = '\0';
  switch (n->job) {
  case JOB_MAP:
    if ((n->mode == LD_NODE_NAT_UPNP || n->mode == LD_NODE_NAT_ANY) && upnp_map(n))
      return;
    if (n->mode == LD_NODE_NAT_PMP || n->mode == LD_NODE_NAT_ANY)
      pmp_request(n, LD_NAT_LEASE_S);
    return;
  case JOB_RENEW:
    if (n->kind == MAP_UPNP)
      upnp_add(n);
    else if (n->kind == MAP_PMP)
      pmp_request(n, LD_NAT_LEASE_S);
    return;
  case JOB_UNMAP:
    if (n->kind == MAP_UPNP) {
      char port[8];
      snprintf(port, sizeof port, "%u", n->ext_port);
      int rc =
          g_upnp.delete_mapping(n->urls.controlURL, n->igd.first.servicetype, port, "TCP", NULL);
      if (rc != 0)
        snprintf(n->why, sizeof n->why, "UPnP DeletePortMapping failed (error %d)", rc);
    } else if (n->kind == MAP_PMP) {
      pmp_request(n, 0);
    }
    n->kind = MAP_NONE;
    return;
  }
}

/* ---- on the loop ---------------------------------------------------------------------------- */

static void job_done(uv_work_t *w, int status);

static void start_job(node_nat_t *n, job_t job) {
  n->job = job;
  n->busy = true;
  n->work.data = n;
  uv_queue_work(n->loop, &n->work, run_job, job_done);
}

static void free_nat(node_nat_t *n) {
  if (n->have_igd)
    g_upnp.free_urls(&n->urls);
  free(n);
}

static void on_renew_closed(uv_handle_t *h) {
  node_nat_t *n = h->data;
  n->renew_init = false;
  if (!n->busy && n->node == NULL)
    free_nat(n);
}

static void on_renew(uv_timer_t *t) {
  node_nat_t *n = t->data;
  if (!n->busy && n->node != NULL && n->kind != MAP_NONE)
    start_job(n, JOB_RENEW);
}

static void announce_mapping(ld_node_t *node) {
  ld_node_announce_addrs(node);
  ld_node_build_enr(node);
  ld_discv5_t *d = ld_node_discv5(node);
  if (d != NULL && node->has_enr && ld_discv5_set_enr(d, &node->enr) != 0)
    LD_WARN(TOPIC, "discv5 keeps its record: the new one was refused");
  for (size_t i = 0; i < node->n_announced; i++) {
    char text[LD_MULTIADDR_TEXT_MAX];
    ld_multiaddr_to_text(&node->announced[i], text, sizeof text);
    LD_INFO(TOPIC, "announcing %s", text);
  }
}

static void job_done(uv_work_t *w, int status) {
  (void)status;
  node_nat_t *n = w->data;
  ld_node_t *node = n->node;
  job_t job = n->job;
  n->busy = false;
  if (n->why[0] != '\0')
    LD_WARN(TOPIC, "%s", n->why);
  if (node == NULL) { /* the node stopped meanwhile */
    if (job != JOB_UNMAP && n->kind != MAP_NONE) {
      start_job(n, JOB_UNMAP);
    } else if (!n->renew_init) {
      free_nat(n);
    }
    return;
  }
  if (job == JOB_MAP && n->kind != MAP_NONE) {
    LD_INFO(TOPIC, "%s mapped TCP port %u to %s:%u", n->kind == MAP_UPNP ? "UPnP" : "NAT-PMP",
            n->internal_port, n->ext_ip, n->ext_port);
    announce_mapping(node);
    uv_timer_start(&n->renew, on_renew, (uint64_t)LD_NAT_LEASE_S * 1000 / 2,
                   (uint64_t)LD_NAT_LEASE_S * 1000 / 2);
  } else if (job == JOB_MAP) {
    LD_INFO(TOPIC, "no port mapping (%s); announcing the bound addresses", n->why);
  }
}

/* The TCP port the node listens on (its first TCP listen address). */
static uint16_t bound_tcp_port(const ld_node_t *node) {
  ld_multiaddr_t bound[LD_NODE_MAX_LISTEN_ADDRS];
  size_t n = ld_switch_listen_addrs(node->sw, bound, LD_NODE_MAX_LISTEN_ADDRS);
  for (size_t i = 0; i < n && i < LD_NODE_MAX_LISTEN_ADDRS; i++) {
    size_t off = 0;
    ld_multiaddr_component_t c;
    while (ld_multiaddr_next(&bound[i], &off, &c) == 1)
      if (c.code == LD_MA_TCP && c.value_len == 2)
        return (uint16_t)(c.value[0] << 8 | c.value[1]);
  }
  return 0;
}

int ld_node_nat_start(ld_node_t *node) {
  const ld_node_config_t *cfg = &node->cfg;
  bool loopback =
      strncmp(cfg->listen_address, "127.", 4) == 0 || strcmp(cfg->listen_address, "::1") == 0;
  bool mapping = cfg->nat == LD_NODE_NAT_UPNP || cfg->nat == LD_NODE_NAT_PMP ||
                 (cfg->nat == LD_NODE_NAT_ANY && !loopback);
  if (!mapping || !cfg->listen || cfg->ext_multiaddr_only)
    return 0;
  node_nat_t *n = calloc(1, sizeof *n);
  if (n == NULL)
    return LD_ERR_NOMEM;
  n->node = node;
  n->mode = cfg->nat;
  n->loop = node->loop;
  n->internal_port = bound_tcp_port(node);
  struct in_addr a;
  if (inet_pton(AF_INET, cfg->listen_address, &a) == 1 && a.s_addr != htonl(INADDR_ANY))
    snprintf(n->multicast_if, sizeof n->multicast_if, "%s", cfg->listen_address);
  uv_timer_init(node->loop, &n->renew);
  n->renew.data = n;
  n->renew_init = true;
  node->nat = n;
  start_job(n, JOB_MAP);
  return 0;
}

/* The stop's removal job ended: the node may go on closing. */
static void unmap_done(uv_work_t *w, int status) {
  (void)status;
  node_nat_t *n = w->data;
  ld_node_t *node = n->node;
  n->busy = false;
  n->node = NULL;
  if (n->why[0] != '\0')
    LD_WARN(TOPIC, "%s", n->why);
  else
    LD_INFO(TOPIC, "port mapping removed");
  if (!n->renew_init)
    free_nat(n);
  ld_node_pending_done(node);
}

void ld_node_nat_stop(ld_node_t *node) {
  node_nat_t *n = node->nat;
  if (n == NULL)
    return;
  node->nat = NULL;
  if (n->renew_init) {
    uv_timer_stop(&n->renew);
    uv_close((uv_handle_t *)&n->renew, on_renew_closed);
  }
  if (n->busy) { /* a discovery or renewal still under way: it cleans up after itself */
    n->node = NULL;
    return;
  }
  if (n->kind == MAP_NONE) {
    n->node = NULL;
    if (!n->renew_init)
      free_nat(n);
    return;
  }
  node->pending++;
  n->job = JOB_UNMAP;
  n->busy = true;
  n->work.data = n;
  uv_queue_work(n->loop, &n->work, run_job, unmap_done);
}

/* ---- the announced addresses ---------------------------------------------------------------- */

/* The host part for `ma` and its /tcp port and what follows, split; false when `ma` does not
 * start with /ip4 or /ip6 followed by /tcp. */
static bool split_tcp(const ld_multiaddr_t *ma, uint16_t *port, ld_multiaddr_t *tail) {
  size_t off = 0;
  ld_multiaddr_component_t c;
  if (ld_multiaddr_next(ma, &off, &c) != 1 || (c.code != LD_MA_IP4 && c.code != LD_MA_IP6))
    return false;
  if (ld_multiaddr_next(ma, &off, &c) != 1 || c.code != LD_MA_TCP || c.value_len != 2)
    return false;
  *port = (uint16_t)(c.value[0] << 8 | c.value[1]);
  memset(tail, 0, sizeof *tail);
  while (ld_multiaddr_next(ma, &off, &c) == 1)
    ld_multiaddr_push(tail, c.code, c.value, c.value_len);
  return true;
}

static void add_unique(ld_multiaddr_t *out, size_t *n, const ld_multiaddr_t *ma) {
  for (size_t i = 0; i < *n; i++)
    if (ld_multiaddr_equal(&out[i], ma))
      return;
  if (*n < LD_NODE_MAX_LISTEN_ADDRS)
    out[(*n)++] = *ma;
}

/* `host` (a /dns4 name or an IP literal) with /tcp/<port> and the tail of the bound address. */
static bool public_addr(const char *host, bool dns4, uint16_t port, const ld_multiaddr_t *tail,
                        ld_multiaddr_t *out) {
  char tail_text[LD_MULTIADDR_TEXT_MAX] = "", text[sizeof tail_text + LD_NODE_DNS4_NAME_MAX + 32];
  if (tail->len > 0)
    ld_multiaddr_to_text(tail, tail_text, sizeof tail_text);
  const char *proto = dns4 ? "dns4" : strchr(host, ':') != NULL ? "ip6" : "ip4";
  snprintf(text, sizeof text, "/%s/%s/tcp/%u%s", proto, host, port, tail_text);
  return ld_multiaddr_parse(out, text) == 0;
}

void ld_node_nat_rewrite_addrs(ld_node_t *node) {
  const ld_node_config_t *cfg = &node->cfg;
  const node_nat_t *n = node->nat;
  ld_multiaddr_t out[LD_NODE_MAX_LISTEN_ADDRS];
  size_t count = 0;
  bool mapped = n != NULL && n->kind != MAP_NONE && !n->busy;
  const char *host = cfg->dns4_domain_name[0] != '\0' ? cfg->dns4_domain_name
                     : cfg->nat == LD_NODE_NAT_EXTIP  ? cfg->nat_ext_ip
                     : mapped                         ? n->ext_ip
                                                      : NULL;
  if (!cfg->ext_multiaddr_only) {
    for (size_t i = 0; i < node->n_announced; i++) {
      uint16_t port = 0;
      ld_multiaddr_t tail, pub;
      if (host == NULL || !split_tcp(&node->announced[i], &port, &tail)) {
        add_unique(out, &count, &node->announced[i]);
        continue;
      }
      if (mapped && tail.len == 0 && port == n->internal_port)
        port = n->ext_port;
      if (public_addr(host, cfg->dns4_domain_name[0] != '\0', port, &tail, &pub))
        add_unique(out, &count, &pub);
    }
  }
  for (size_t i = 0; i < cfg->n_ext_multiaddrs; i++)
    add_unique(out, &count, &cfg->ext_multiaddrs[i]);
  memcpy(node->announced, out, count * sizeof out[0]);
  node->n_announced = count;
}
