/* NAT and announced addresses. On loopback: --nat=extip, --ext-multiaddr, --ext-multiaddr-only and
 * --dns4-domain-name change what the node announces, in its listen addresses, its ENR and what
 * identify tells a peer. In network namespaces this test makes (the test process moves into a new
 * one; a second one, the "router", holds a real miniupnpd with its nftables chains, joined by a
 * veth pair; the router's WAN side is another veth pair, 44.55.66.2/24, inside that namespace):
 * --nat=upnp and --nat=pmp map the node's TCP port, the node announces the router's external
 * address, and the mapping is gone once the node has stopped. Skipped, saying why, only when the
 * namespaces cannot be made. */
#include <errno.h>
#include <sched.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>
#include <uv.h>

#include "base/error.h"
#include "node/node.h"
#include "node_harness.h"
#include "p2p/peerstore.h"
#include "waku/enr/enr.h"

#define STEP_MS 20000
#define ROUTER_NS_FMT "ldnat-%d"
#define WAN_IP "44.55.66.2"

static uv_loop_t g_loop;

#define WAIT_FOR(cond) NH_WAIT_FOR(&g_loop, cond, STEP_MS)

/* The node's announced addresses as one space-separated text (each with /p2p). */
static void addrs_text(ld_node_t *node, char *out, size_t cap) {
  ld_multiaddr_t addrs[16];
  size_t n = ld_node_listen_addrs(node, addrs, 16);
  out[0] = '\0';
  for (size_t i = 0; i < n && i < 16; i++) {
    char text[LD_MULTIADDR_TEXT_MAX];
    ld_multiaddr_to_text(&addrs[i], text, sizeof text);
    strncat(out, text, cap - strlen(out) - 2);
    strcat(out, " ");
  }
}

static size_t count_addrs(ld_node_t *node) {
  ld_multiaddr_t addrs[16];
  return ld_node_listen_addrs(node, addrs, 16);
}

static void node_enr(ld_node_t *node, ld_enr_t *out) {
  char text[LD_ENR_TEXT_MAX];
  assert_true(ld_node_enr_text(node, text, sizeof text) > 0);
  assert_int_equal(ld_enr_parse_text(out, text), 0);
}

static uint16_t first_tcp_port(ld_node_t *node) {
  ld_multiaddr_t a;
  ld_switch_listen_addrs(ld_node_switch(node), &a, 1);
  size_t off = 0;
  ld_multiaddr_component_t c;
  while (ld_multiaddr_next(&a, &off, &c) == 1)
    if (c.code == LD_MA_TCP)
      return (uint16_t)(c.value[0] << 8 | c.value[1]);
  return 0;
}

/* ---- loopback: what is announced ------------------------------------------------------------ */

static void extip_and_ext_multiaddrs(void **state) {
  (void)state;
  char err[256], text[2048];
  ld_node_config_t *cfg = nh_config();
  assert_int_equal(ld_node_config_set_nat(cfg, "extip:203.0.113.7", err, sizeof err), 0);
  assert_int_equal(
      ld_node_config_add_ext_multiaddr(cfg, "/dns4/node.example/tcp/443/wss", err, sizeof err), 0);
  ld_node_t *a = nh_start(&g_loop, cfg);
  uint16_t port = first_tcp_port(a);
  addrs_text(a, text, sizeof text);
  char want[128];
  snprintf(want, sizeof want, "/ip4/203.0.113.7/tcp/%u/p2p/", port);
  assert_non_null(strstr(text, want));
  assert_non_null(strstr(text, "/dns4/node.example/tcp/443/wss/p2p/"));
  assert_null(strstr(text, "/ip4/127.0.0.1/"));
  assert_int_equal(count_addrs(a), 2);

  /* the ENR: ip and tcp from the external address, the wss address in multiaddrs */
  ld_enr_t enr;
  node_enr(a, &enr);
  uint8_t ip[4];
  uint16_t enr_port = 0;
  assert_int_equal(ld_enr_ip4(&enr, ip), 0);
  assert_memory_equal(ip, ((uint8_t[]){203, 0, 113, 7}), 4);
  assert_int_equal(ld_enr_port(&enr, "tcp", &enr_port), 0);
  assert_int_equal(enr_port, port);
  ld_multiaddr_t mas[4];
  assert_int_equal(ld_enr_multiaddrs(&enr, mas, 4, NULL), 1);
  ld_multiaddr_to_text(&mas[0], text, sizeof text);
  assert_string_equal(text, "/dns4/node.example/tcp/443/wss");

  /* identify tells a peer the announced addresses */
  ld_node_config_t *bcfg = nh_config();
  char a_addr[LD_MULTIADDR_TEXT_MAX];
  snprintf(a_addr, sizeof a_addr, "/ip4/127.0.0.1/tcp/%u/p2p/", port);
  char id[LD_PEERID_TEXT_MAX];
  ld_peerid_to_text(ld_node_peer_id(a), id, sizeof id);
  strncat(a_addr, id, sizeof a_addr - strlen(a_addr) - 1);
  assert_int_equal(ld_node_config_add_static_node(bcfg, a_addr, err, sizeof err), 0);
  ld_node_t *b = nh_start(&g_loop, bcfg);
  const ld_peerstore_peer_t *seen = NULL;
  WAIT_FOR((seen = ld_peerstore_get(ld_node_peerstore(b), ld_node_peer_id(a))) != NULL &&
           seen->n_addrs >= 2);
  bool has_ext = false, has_wss = false;
  for (size_t i = 0; i < seen->n_addrs; i++) {
    ld_multiaddr_to_text(&seen->addrs[i], text, sizeof text);
    snprintf(want, sizeof want, "/ip4/203.0.113.7/tcp/%u", port);
    has_ext = has_ext || strcmp(text, want) == 0;
    has_wss = has_wss || strcmp(text, "/dns4/node.example/tcp/443/wss") == 0;
  }
  assert_true(has_ext && has_wss);
  nh_stop(&g_loop, b, STEP_MS);
  nh_stop(&g_loop, a, STEP_MS);
}

static void ext_only_and_dns4(void **state) {
  (void)state;
  char err[256], text[2048], want[128];
  ld_node_config_t *cfg = nh_config();
  assert_int_equal(
      ld_node_config_add_ext_multiaddr(cfg, "/ip4/198.51.100.9/tcp/30303", err, sizeof err), 0);
  cfg->ext_multiaddr_only = true;
  ld_node_t *a = nh_start(&g_loop, cfg);
  addrs_text(a, text, sizeof text);
  assert_int_equal(count_addrs(a), 1);
  assert_non_null(strstr(text, "/ip4/198.51.100.9/tcp/30303/p2p/"));
  nh_stop(&g_loop, a, STEP_MS);

  cfg = nh_config();
  assert_int_equal(ld_node_config_set_dns4_domain_name(cfg, "waku.example.org", err, sizeof err),
                   0);
  a = nh_start(&g_loop, cfg);
  addrs_text(a, text, sizeof text);
  snprintf(want, sizeof want, "/dns4/waku.example.org/tcp/%u/p2p/", first_tcp_port(a));
  assert_non_null(strstr(text, want));
  assert_int_equal(count_addrs(a), 1);
  ld_enr_t enr;
  node_enr(a, &enr);
  ld_multiaddr_t mas[4];
  assert_int_equal(ld_enr_multiaddrs(&enr, mas, 4, NULL), 1);
  nh_stop(&g_loop, a, STEP_MS);
}

static int setup(void **state) {
  (void)state;
  return uv_loop_init(&g_loop);
}

static int teardown(void **state) {
  (void)state;
  nh_run_for(&g_loop, 50);
  return uv_loop_close(&g_loop) == 0 ? 0 : -1;
}

/* ---- namespaces: UPnP and NAT-PMP against miniupnpd ----------------------------------------- */

static char g_ns[32], g_dir[64];
static pid_t g_miniupnpd;

static int sh(const char *fmt, ...) {
  char cmd[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(cmd, sizeof cmd, fmt, ap);
  va_end(ap);
  int rc = system(cmd);
  if (rc != 0)
    fprintf(stderr, "command failed (%d): %s\n", rc, cmd);
  return rc;
}

static void write_file(const char *name, const char *text) {
  char path[128];
  snprintf(path, sizeof path, "%s/%s", g_dir, name);
  FILE *f = fopen(path, "w");
  assert_non_null(f);
  fputs(text, f);
  fclose(f);
}

/* The router: its namespace, the veth pairs, the nftables chains miniupnpd fills, miniupnpd. */
static const char *start_router(void) {
  snprintf(g_ns, sizeof g_ns, ROUTER_NS_FMT, (int)getpid());
  if (sh("ip netns add %s", g_ns) != 0)
    return "cannot create a named network namespace (ip netns add)";
  if (sh("ip link add lan1 type veth peer name lan0 netns %s", g_ns) != 0 ||
      sh("ip addr add 10.77.0.2/24 dev lan1 && ip link set lan1 up && ip link set lo up") != 0 ||
      sh("ip route add default via 10.77.0.1 dev lan1") != 0)
    return "cannot set up a veth pair between the namespaces";
  assert_int_equal(sh("ip netns exec %s sh -c 'ip link set lo up && "
                      "ip addr add 10.77.0.1/24 dev lan0 && ip link set lan0 up && "
                      "ip link add wan0 type veth peer name wan1 && "
                      "ip addr add " WAN_IP "/24 dev wan0 && ip link set wan0 up && "
                      "ip link set wan1 up && ip route add default via 44.55.66.1 dev wan0'",
                      g_ns),
                   0);
  write_file("rules.nft", "table inet filter {\n"
                          "  chain forward {\n"
                          "    type filter hook forward priority 0; policy accept;\n"
                          "    jump miniupnpd\n"
                          "  }\n"
                          "  chain miniupnpd {\n  }\n"
                          "  chain prerouting {\n"
                          "    type nat hook prerouting priority -100; policy accept;\n"
                          "    jump prerouting_miniupnpd\n"
                          "  }\n"
                          "  chain postrouting {\n"
                          "    type nat hook postrouting priority 100; policy accept;\n"
                          "    jump postrouting_miniupnpd\n"
                          "  }\n"
                          "  chain prerouting_miniupnpd {\n  }\n"
                          "  chain postrouting_miniupnpd {\n  }\n"
                          "}\n");
  assert_int_equal(sh("ip netns exec %s nft -f %s/rules.nft", g_ns, g_dir), 0);
  char conf[1024];
  snprintf(conf, sizeof conf,
           "ext_ifname=wan0\nlistening_ip=lan0\nhttp_port=0\nenable_upnp=yes\n"
           "enable_natpmp=yes\nsecure_mode=no\nsystem_uptime=yes\nlease_file=%s/leases\n"
           "uuid=3e5d1c0a-7f0b-4b0e-9a57-0123456789ab\n"
           "allow 1024-65535 10.77.0.0/24 1024-65535\ndeny 0-65535 0.0.0.0/0 0-65535\n",
           g_dir);
  write_file("miniupnpd.conf", conf);
  char conf_path[128], log_path[128];
  snprintf(conf_path, sizeof conf_path, "%s/miniupnpd.conf", g_dir);
  snprintf(log_path, sizeof log_path, "%s/miniupnpd.log", g_dir);
  g_miniupnpd = fork();
  if (g_miniupnpd == 0) {
    FILE *log = freopen(log_path, "w", stderr);
    if (log != NULL)
      dup2(fileno(log), STDOUT_FILENO); /* the test's own output stays the test's */
    execlp("ip", "ip", "netns", "exec", g_ns, "/usr/sbin/miniupnpd", "-f", conf_path, "-d",
           (char *)NULL);
    _exit(127);
  }
  assert_true(g_miniupnpd > 0);
  /* miniupnpd listens for NAT-PMP once it is up */
  for (int i = 0; i < 100; i++) {
    char cmd[128];
    snprintf(cmd, sizeof cmd, "ip netns exec %s ss -lun | grep -q ':5351 '", g_ns);
    if (system(cmd) == 0)
      return NULL;
    usleep(50 * 1000);
  }
  fail_msg("miniupnpd did not start (log: %s)", log_path);
  return NULL;
}

static void stop_router(void) {
  if (g_miniupnpd > 0) {
    kill(g_miniupnpd, SIGTERM);
    waitpid(g_miniupnpd, NULL, 0);
    g_miniupnpd = 0;
  }
  if (g_ns[0] != '\0')
    sh("ip netns del %s", g_ns);
  g_ns[0] = '\0';
}

/* The line of miniupnpd's lease file for TCP port `port`, as a bool. */
static bool lease_present(uint16_t port) {
  char path[128], line[256], want[64];
  snprintf(path, sizeof path, "%s/leases", g_dir);
  snprintf(want, sizeof want, "TCP:%u:10.77.0.2:%u:", port, port);
  FILE *f = fopen(path, "r");
  bool found = false;
  while (f != NULL && !found && fgets(line, sizeof line, f) != NULL)
    found = strncmp(line, want, strlen(want)) == 0;
  if (f != NULL)
    fclose(f);
  return found;
}

static bool announces(ld_node_t *node, const char *fragment) {
  char text[2048];
  addrs_text(node, text, sizeof text);
  return strstr(text, fragment) != NULL;
}

static void map_with(ld_node_nat_t mode) {
  ld_node_config_t *cfg = nh_config();
  snprintf(cfg->listen_address, sizeof cfg->listen_address, "10.77.0.2");
  cfg->nat = mode;
  ld_node_t *a = nh_start(&g_loop, cfg);
  uint16_t port = first_tcp_port(a);
  char want[64];
  snprintf(want, sizeof want, "/ip4/" WAN_IP "/tcp/%u/p2p/", port);
  WAIT_FOR(lease_present(port) && announces(a, want));
  assert_false(announces(a, "/ip4/10.77.0.2/"));
  ld_enr_t enr;
  node_enr(a, &enr);
  uint8_t ip[4];
  assert_int_equal(ld_enr_ip4(&enr, ip), 0);
  assert_memory_equal(ip, ((uint8_t[]){44, 55, 66, 2}), 4);
  assert_true(enr.seq >= 2); /* rebuilt with the mapped address */
  nh_stop(&g_loop, a, STEP_MS);
  assert_false(lease_present(port)); /* the stop waited for the removal */
}

static void upnp_and_pmp_against_miniupnpd(void **state) {
  (void)state;
  if (unshare(CLONE_NEWNET) != 0) {
    print_message("cannot create a network namespace (unshare: %s); UPnP/NAT-PMP test skipped\n",
                  strerror(errno));
    skip();
  }
  snprintf(g_dir, sizeof g_dir, "/tmp/ld-nat-XXXXXX");
  assert_non_null(mkdtemp(g_dir));
  const char *why = start_router();
  if (why != NULL) {
    stop_router();
    print_message("%s; UPnP/NAT-PMP test skipped\n", why);
    skip();
  }
  map_with(LD_NODE_NAT_UPNP);
  map_with(LD_NODE_NAT_PMP);
}

/* Also after a failed assertion: no miniupnpd or namespace is left behind. */
static int router_teardown(void **state) {
  stop_router();
  if (g_dir[0] != '\0')
    sh("rm -rf '%s'", g_dir);
  g_dir[0] = '\0';
  (void)state;
  return 0;
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(extip_and_ext_multiaddrs),
      cmocka_unit_test(ext_only_and_dns4),
      /* last: it moves the process into a new network namespace */
      cmocka_unit_test_teardown(upnp_and_pmp_against_miniupnpd, router_teardown),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
