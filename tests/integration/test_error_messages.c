/* Every failure a person meets with the program ($LD_BIN, run as a child process) ends with a line
 * that names what failed with the offending value and says what to do next: bad flags, values
 * from the environment and the config file, ports already taken (real sockets bound first),
 * folders that do not exist or may not be written, PostgreSQL that refuses, RLN files that are
 * missing, peers that cannot be reached or do not serve the protocol, DNS trees that cannot be
 * read. Each case checks the exit status, the value and the case's own next step. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>
#include <netinet/in.h>
#include <uv.h>

#include "base/clock.h"
#include "child_harness.h"
#include "node/node.h"
#include "node_harness.h"
#include "rln_harness.h"
#include "waku/rln/publish.h"

#define STEP_MS 30000
#define TOPIC "/errors/1/chat/proto"
#define FAR_PEER "/ip4/127.0.0.1/tcp/%u/p2p/16Uiu2HAkx3GoZmXmHbBcphAVJAU6gDuFWWLyBgAaEpyPzbZqccLQ"
#define MAX_NEEDLES 6

static uv_loop_t g_loop;
static const char *g_bin;
static char g_dir[64];

/* Runs the program with `args`; the test fails unless it exits with `status` and its standard
 * error holds every needle (NULL-terminated). */
static void expect(const char *const *args, int64_t status, ...) {
  ch_child_t *c = ch_spawn(&g_loop, g_bin, args);
  int64_t got = ch_finish(c, STEP_MS);
  va_list ap;
  va_start(ap, status);
  const char *needle;
  char wanted[1024] = "";
  bool ok = got == status;
  while ((needle = va_arg(ap, const char *)) != NULL) {
    if (strstr(c->stderr_buf, needle) == NULL) {
      ok = false;
      snprintf(wanted + strlen(wanted), sizeof wanted - strlen(wanted), " [%s]", needle);
    }
  }
  va_end(ap);
  if (!ok)
    fail_msg("%s %s: exit %lld (want %lld), missing%s; stderr:\n%s", args[0],
             args[1] != NULL ? args[1] : "", (long long)got, (long long)status, wanted,
             c->stderr_buf);
  free(c);
}

/* A socket of `type` bound (and listening, for TCP) on `ip`:0; its port in *port. */
static int hold_port(int type, uint32_t ip, uint16_t *port) {
  int fd = socket(AF_INET, type, 0);
  assert_true(fd >= 0);
  struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(ip)};
  assert_int_equal(bind(fd, (struct sockaddr *)&a, sizeof a), 0);
  if (type == SOCK_STREAM)
    assert_int_equal(listen(fd, 4), 0);
  socklen_t len = sizeof a;
  assert_int_equal(getsockname(fd, (struct sockaddr *)&a, &len), 0);
  *port = ntohs(a.sin_port);
  return fd;
}

/* A loopback TCP port nothing listens on (bound, then closed). */
static uint16_t closed_port(void) {
  uint16_t port;
  close(hold_port(SOCK_STREAM, INADDR_LOOPBACK, &port));
  return port;
}

static const char *write_file(const char *name, const char *text) {
  static char path[8][128];
  static int next;
  char *p = path[next++ % 8];
  snprintf(p, sizeof path[0], "%s/%s", g_dir, name);
  FILE *f = fopen(p, "w");
  assert_non_null(f);
  fputs(text, f);
  fclose(f);
  return p;
}

/* ---- flags, environment, config file -----------------------------------------------------------
 */

static void bad_flags_say_how_to_write_them(void **state) {
  (void)state;
  expect((const char *[]){"--tcp-prot=1", NULL}, 1, "unknown flag --tcp-prot",
         "did you mean --tcp-port?", NULL);
  expect((const char *[]){"--tcp-port=abc", NULL}, 1, "--tcp-port: expected an integer, got 'abc'",
         "write --tcp-port=<n> with <n> in 0..65535", NULL);
  expect((const char *[]){"--tcp-port=70000", NULL}, 1, "value 70000 out of range",
         "write --tcp-port=<n> with <n> in 0..65535", NULL);
  expect((const char *[]){"--relay=maybe", NULL}, 1, "--relay: expected true or false, got 'maybe'",
         "write --relay=true or --relay=false", NULL);
  expect((const char *[]){"--tcp-port", NULL}, 1, "--tcp-port: missing value",
         "write --tcp-port=<value>", NULL);
  expect((const char *[]){"--staticnode=/ip4/1.2.3/tcp/1", NULL}, 1, "'/ip4/1.2.3/tcp/1'",
         "give the peer's full multiaddr, e.g. /ip4/127.0.0.1/tcp/60000/p2p/", NULL);
  expect((const char *[]){"--storenode=/ip4/127.0.0.1/tcp/1", NULL}, 1, "/ip4/127.0.0.1/tcp/1",
         "must end with /p2p/", "give the peer's full multiaddr", NULL);
  expect((const char *[]){"--nodekey=12ab", NULL}, 1, "got '12ab'", "openssl rand -hex 32",
         "leave --nodekey out", NULL);
  expect((const char *[]){"--store-message-db-url=mysql://db", NULL}, 1, "'mysql://db'",
         "write sqlite://<path>, postgres://<user>:<password>@<host>:<port>/<database>", NULL);
  expect((const char *[]){"--preset=mainnet", NULL}, 1, "mainnet",
         "choose twn, logos.dev, logos.test or status.prod", NULL);
  expect((const char *[]){"--max-msg-size=10", NULL}, 1, "'10'",
         "write a number with its unit, e.g. 150KiB", NULL);
  expect((const char *[]){"sned", NULL}, 1, "unexpected argument 'sned'",
         "the sub-commands are canary, send, subscribe", NULL);
}

static void environment_and_config_file_errors_name_their_place(void **state) {
  (void)state;
  setenv("WAKUNODE2_RELAY", "maybe", 1);
  expect((const char *[]){"--tcp-port=0", NULL}, 1, "WAKUNODE2_RELAY (--relay)", "'maybe'",
         "write WAKUNODE2_RELAY=true or WAKUNODE2_RELAY=false", NULL);
  unsetenv("WAKUNODE2_RELAY");

  char missing[128], arg[160];
  snprintf(missing, sizeof missing, "%s/none.toml", g_dir);
  snprintf(arg, sizeof arg, "--config-file=%s", missing);
  expect((const char *[]){arg, NULL}, 1, missing, "No such file or directory",
         "check the path given to --config-file", NULL);

  const char *typed = write_file("typed.toml", "relay = true\ntcp-port = \"60000\"\n");
  snprintf(arg, sizeof arg, "--config-file=%s", typed);
  expect((const char *[]){arg, NULL}, 1, typed,
         "line 2: tcp-port: expected an integer, got a string",
         "write tcp-port = <n> with <n> in 0..65535", NULL);

  const char *typo = write_file("typo.toml", "tcp-prot = 1\n");
  snprintf(arg, sizeof arg, "--config-file=%s", typo);
  expect((const char *[]){arg, NULL}, 1, "line 1: tcp-prot: unknown option",
         "did you mean tcp-port?", NULL);

  const char *broken = write_file("broken.toml", "relay = \n");
  snprintf(arg, sizeof arg, "--config-file=%s", broken);
  expect((const char *[]){arg, NULL}, 1, broken, "line 1", "correct that line (TOML: key = value",
         NULL);

  const char *refused = write_file("refused.toml", "staticnode = [\"/ip4/1.2.3.4/tcp/1\"]\n");
  snprintf(arg, sizeof arg, "--config-file=%s", refused);
  expect((const char *[]){arg, NULL}, 1, "line 1: staticnode", "/ip4/1.2.3.4/tcp/1",
         "give the peer's full multiaddr", NULL);
}

/* ---- the node's start
 * ---------------------------------------------------------------------------- */

#define NODE_ARGS "--listen-address=127.0.0.1", "--nat=none"

static void ports_in_use_name_the_flag_to_change(void **state) {
  (void)state;
  uint16_t port;
  int fd = hold_port(SOCK_STREAM, INADDR_LOOPBACK, &port);
  char flag[64], where[64];
  snprintf(where, sizeof where, "/ip4/127.0.0.1/tcp/%u", port);
  snprintf(flag, sizeof flag, "--tcp-port=%u", port);
  expect((const char *[]){NODE_ARGS, flag, NULL}, 1, where, "address already in use",
         "choose another port with --tcp-port (0 picks a free one) or --ports-shift, or stop the "
         "process that uses it",
         NULL);

  snprintf(flag, sizeof flag, "--websocket-port=%u", port);
  snprintf(where, sizeof where, "/ip4/127.0.0.1/tcp/%u/ws", port);
  expect((const char *[]){NODE_ARGS, "--tcp-port=0", "--websocket-support=true", flag, NULL}, 1,
         where, "choose another port with --websocket-port", NULL);

  snprintf(flag, sizeof flag, "--rest-port=%u", port);
  snprintf(where, sizeof where, "127.0.0.1:%u", port);
  expect((const char *[]){NODE_ARGS, "--tcp-port=0", "--rest=true", flag, NULL}, 1,
         "--rest-port: cannot listen on", where, "choose another port with --rest-port", NULL);

  snprintf(flag, sizeof flag, "--metrics-server-port=%u", port);
  expect((const char *[]){NODE_ARGS, "--tcp-port=0", "--metrics-server=true", flag, NULL}, 1,
         "--metrics-server-port: cannot listen on", where,
         "choose another port with --metrics-server-port", NULL);
  close(fd);

  int udp = hold_port(SOCK_DGRAM, INADDR_LOOPBACK, &port);
  snprintf(flag, sizeof flag, "--discv5-udp-port=%u", port);
  snprintf(where, sizeof where, "127.0.0.1:%u", port);
  expect((const char *[]){NODE_ARGS, "--tcp-port=0", "--discv5-discovery=true", flag, NULL}, 1,
         where, "choose another port with --discv5-udp-port", NULL);
  close(udp);

  udp = hold_port(SOCK_DGRAM, INADDR_ANY, &port);
  snprintf(flag, sizeof flag, "%u", port);
  snprintf(where, sizeof where, "0.0.0.0:%u", port);
  expect((const char *[]){"discv5", "--discv5-udp-port", flag, NULL}, 6, where,
         "address already in use", "choose another port with --discv5-udp-port", NULL);
  close(udp);
}

static void archive_paths_say_what_to_fix(void **state) {
  (void)state;
  char url[256], dir[160];
  snprintf(dir, sizeof dir, "%s/not-made", g_dir);
  snprintf(url, sizeof url, "--store-message-db-url=sqlite://%s/store.sqlite3", dir);
  char mkdir_hint[200];
  snprintf(mkdir_hint, sizeof mkdir_hint, "create it (mkdir -p %s)", dir);
  expect((const char *[]){NODE_ARGS, "--tcp-port=0", "--store=true", url, NULL}, 1, dir, mkdir_hint,
         "or give another path with --store-message-db-url", NULL);

  if (geteuid() == 0) {
    /* root writes in a folder of mode 0500 all the same: nothing to see there */
    print_message("skipped the read-only folder case: running as root, which may write anywhere\n");
  } else {
    snprintf(dir, sizeof dir, "%s/read-only", g_dir);
    assert_int_equal(mkdir(dir, 0500), 0);
    snprintf(url, sizeof url, "--store-message-db-url=sqlite://%s/store.sqlite3", dir);
    char mode_hint[200];
    snprintf(mode_hint, sizeof mode_hint, "this user may not write in %s", dir);
    expect((const char *[]){NODE_ARGS, "--tcp-port=0", "--store=true", url, NULL}, 1, mode_hint,
           "chown, chmod", NULL);
    rmdir(dir);
  }

  snprintf(url, sizeof url, "--store-message-db-url=postgres://ldtest:s3cret@127.0.0.1:%u/ldtest",
           closed_port());
  expect((const char *[]){NODE_ARGS, "--tcp-port=0", "--store=true", url, NULL}, 1,
         "postgres://ldtest:***@127.0.0.1:", "check that PostgreSQL runs at the host and port",
         "pg_isready", NULL);

  const char *pg = getenv("LD_TEST_PG_URL");
  if (pg != NULL && strncmp(pg, "postgres://", 11) == 0 && strchr(pg + 11, '@') != NULL) {
    /* the same server and user with a password it refuses */
    const char *at = strchr(pg + 11, '@');
    const char *colon = memchr(pg + 11, ':', (size_t)(at - pg - 11));
    size_t user_len = colon != NULL ? (size_t)(colon - pg - 11) : (size_t)(at - pg - 11);
    snprintf(url, sizeof url, "--store-message-db-url=postgres://%.*s:wrong-%u@%s", (int)user_len,
             pg + 11, (unsigned)getpid(), at + 1);
    expect((const char *[]){NODE_ARGS, "--tcp-port=0", "--store=true", url, NULL}, 1, ":***@",
           "check the user and password in --store-message-db-url", NULL);
  }
}

/* ---- RLN files ---------------------------------------------------------------------------------
 */

/* A group of one member with user message limit 1 and that member's credentials. */
static void write_rln_files(char *group, char *cred, size_t cap) {
  ld_fr_t secret, id, rate;
  rh_random_secret(&secret);
  ld_rln_id_commitment(&id, &secret);
  ld_rln_rate_commitment(&rate, &id, 1);
  snprintf(group, cap, "%s/group.json", g_dir);
  snprintf(cred, cap, "%s/cred.json", g_dir);
  FILE *f = fopen(group, "w");
  assert_non_null(f);
  fputc('[', f);
  rh_write_fr_hex(f, &rate);
  fputs("]\n", f);
  fclose(f);
  f = fopen(cred, "w");
  assert_non_null(f);
  fputs("{\"identitySecret\": ", f);
  rh_write_fr_hex(f, &secret);
  fputs("}\n", f);
  fclose(f);
}

static void missing_rln_files_are_named(void **state) {
  (void)state;
  char group[128], cred[128], arg_group[160], arg_cred[160], arg_dir[160], none[128];
  write_rln_files(group, cred, sizeof group);
  snprintf(none, sizeof none, "%s/absent", g_dir);

  snprintf(arg_group, sizeof arg_group, "--rln-relay-static-group-file=%s", none);
  expect((const char *[]){NODE_ARGS, "--tcp-port=0", "--rln-relay=true", arg_group, NULL}, 1, none,
         "point --rln-relay-static-group-file at a readable group file", NULL);

  snprintf(arg_group, sizeof arg_group, "--rln-relay-static-group-file=%s", group);
  snprintf(arg_cred, sizeof arg_cred, "--rln-relay-cred-path=%s", none);
  expect((const char *[]){NODE_ARGS, "--tcp-port=0", "--rln-relay=true", arg_group, arg_cred,
                          "--rln-relay-membership-index=0", NULL},
         1, none, "point --rln-relay-cred-path at a readable JSON file", NULL);

  snprintf(arg_cred, sizeof arg_cred, "--rln-relay-cred-path=%s", cred);
  snprintf(arg_dir, sizeof arg_dir, "--rln-relay-circuit-dir=%s", none);
  expect((const char *[]){NODE_ARGS, "--tcp-port=0", "--rln-relay=true", arg_group, arg_cred,
                          "--rln-relay-membership-index=0", arg_dir, NULL},
         1, none,
         "point --rln-relay-circuit-dir at the folder holding rln_final.zkey and graph.bin", NULL);
  expect((const char *[]){NODE_ARGS, "--tcp-port=0", "--rln-relay=true", "--rln-relay-dynamic=true",
                          NULL},
         1, "rln-relay-dynamic",
         "run with --rln-relay-dynamic=false and --rln-relay-static-group-file=<file>", NULL);
  unlink(group);
  unlink(cred);
}

static void unreadable_tls_files_are_named(void **state) {
  (void)state;
  char none[128], key[160], cert[160];
  snprintf(none, sizeof none, "%s/absent.pem", g_dir);
  snprintf(key, sizeof key, "--websocket-secure-key-path=%s", none);
  const char *junk = write_file("junk.pem", "not a key\n");
  snprintf(cert, sizeof cert, "--websocket-secure-cert-path=%s", junk);
  expect((const char *[]){NODE_ARGS, "--tcp-port=0", "--websocket-secure-support=true", key, cert,
                          NULL},
         1, key, "No such file or directory", "give the path of a PEM file this user may read",
         NULL);
  snprintf(key, sizeof key, "--websocket-secure-key-path=%s", junk);
  expect((const char *[]){NODE_ARGS, "--tcp-port=0", "--websocket-secure-support=true", key, cert,
                          NULL},
         1, junk, "give a PEM private key and the PEM certificate made for it", NULL);
  unlink(junk);
}

/* ---- the sub-commands --------------------------------------------------------------------------
 */

static void peers_that_cannot_serve_say_what_to_do(void **state) {
  (void)state;
  char far[160];
  snprintf(far, sizeof far, FAR_PEER, closed_port());
  const char *const commands[][8] = {
      {"send", "--peer", far, "--content-topic", TOPIC, "hi", NULL},
      {"send", "--lightpush", "--peer", far, "--content-topic", TOPIC, "hi", NULL},
      {"subscribe", "--filter", "--peer", far, "--content-topic", TOPIC, NULL},
      {"query", "--peer", far, "--content-topic", TOPIC, NULL},
  };
  for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
    expect(commands[i], 2, far, "connection refused",
           "nothing listens at that address: start the node, or use in --peer the address its log "
           "shows",
           NULL);
  expect((const char *[]){"canary", far, NULL}, 2, "connection refused",
         "nothing listens at that address", NULL);
  expect((const char *[]){"send", "--peer", "/ip4/127.0.0.1/tcp/1", "--content-topic", TOPIC, "hi",
                          NULL},
         1, "'/ip4/127.0.0.1/tcp/1'", "give the node's full multiaddr", NULL);
  expect((const char *[]){"send", "--peer", far, "--content-topic", "chat", "hi", NULL}, 1,
         "--content-topic 'chat'", "write /<app>/<version>/<topic>/<encoding>", NULL);
  expect((const char *[]){"query", "--peer", far, "--hash", "0x12", NULL}, 1, "'0x12'",
         "copy the whole message hash", NULL);

  /* a relay node with no lightpush, filter or store, and another peer ID at its address */
  ld_node_config_t *cfg = nh_config();
  ld_node_t *n = nh_start(&g_loop, cfg);
  char addr[LD_MULTIADDR_TEXT_MAX], wrong[LD_MULTIADDR_TEXT_MAX];
  nh_only_addr_text(n, addr, sizeof addr);
  snprintf(wrong, sizeof wrong, "%.*s/p2p/16Uiu2HAkx3GoZmXmHbBcphAVJAU6gDuFWWLyBgAaEpyPzbZqccLQ",
           (int)(strstr(addr, "/p2p/") - addr), addr);
  expect((const char *[]){"query", "--peer", addr, "--content-topic", TOPIC, NULL}, 4,
         "start it with --store=true", NULL);
  expect(
      (const char *[]){"send", "--lightpush", "--peer", addr, "--content-topic", TOPIC, "hi", NULL},
      4, "start it with --lightpush=true", NULL);
  expect((const char *[]){"subscribe", "--filter", "--peer", addr, "--content-topic", TOPIC, NULL},
         4, "start it with --filter=true", NULL);
  expect((const char *[]){"send", "--peer", wrong, "--content-topic", TOPIC, "hi", NULL}, 3,
         "PEER_ID_MISMATCH", "another node answers there: copy the /p2p/<id> part", NULL);
  expect((const char *[]){"send", "--peer", addr, "--content-topic", TOPIC, "--cluster-id", "9",
                          "hi", NULL},
         2, "is not in cluster 9 but in cluster 0", "give --cluster-id 0", NULL);
  nh_stop(&g_loop, n, STEP_MS);
}

static void dns_commands_say_what_to_do(void **state) {
  (void)state;
  expect((const char *[]){"dns-resolve", "enrtree://nokey", NULL}, 1, "'enrtree://nokey'",
         "write enrtree://<public key>@<domain>", NULL);
  char server[32];
  snprintf(server, sizeof server, "127.0.0.1:%u", closed_port());
  expect((const char *[]){"dns-resolve",
                          "enrtree://AKPYQIUQIL7PSIACI32J7FGZW56E5FKHEFCCOFHILBIMW3M6LWXS2@"
                          "nodes.example.org",
                          "--dns-discovery-name-server", server, NULL},
         6, "nodes.example.org", "DNS_QUERY",
         "check that the domain exists and that the name server answers", NULL);
  expect((const char *[]){"dns-tree", "--domain", "nodes.example.org", "--key", "zz", NULL}, 1,
         "--key 'zz'", "give the tree's signing key", NULL);
  expect((const char *[]){"dns-tree", "--key", "zz", NULL}, 1, "--domain is required",
         "give the domain the tree is published under", NULL);
  expect((const char *[]){"discv5", "--discv5-bootstrap-node", "enr:zz", NULL}, 1, "'enr:zz'",
         "give a node record as text, enr:", NULL);
}

static int setup(void **state) {
  (void)state;
  g_bin = getenv("LD_BIN");
  if (g_bin == NULL)
    return -1;
  snprintf(g_dir, sizeof g_dir, "/tmp/ld-errors-XXXXXX");
  if (mkdtemp(g_dir) == NULL)
    return -1;
  uv_loop_init(&g_loop);
  return 0;
}

static int teardown(void **state) {
  (void)state;
  uint64_t end = ld_now_ms() + 50;
  while (ld_now_ms() < end)
    nh_pump(&g_loop);
  const char *files[] = {"typed.toml", "typo.toml", "broken.toml", "refused.toml"};
  char path[160];
  for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
    snprintf(path, sizeof path, "%s/%s", g_dir, files[i]);
    unlink(path);
  }
  rmdir(g_dir);
  return uv_loop_close(&g_loop) == 0 ? 0 : -1;
}

/* A case that failed may have left its variable set: every test starts without it. */
static int clean_env(void **state) {
  (void)state;
  unsetenv("WAKUNODE2_RELAY");
  return 0;
}

#define ERROR_TEST(f) cmocka_unit_test_setup(f, clean_env)

int main(void) {
  if (!ch_program_ready())
    return 0;
  const struct CMUnitTest tests[] = {
      ERROR_TEST(bad_flags_say_how_to_write_them),
      ERROR_TEST(environment_and_config_file_errors_name_their_place),
      ERROR_TEST(ports_in_use_name_the_flag_to_change),
      ERROR_TEST(archive_paths_say_what_to_fix),
      ERROR_TEST(missing_rln_files_are_named),
      ERROR_TEST(unreadable_tls_files_are_named),
      ERROR_TEST(peers_that_cannot_serve_say_what_to_do),
      ERROR_TEST(dns_commands_say_what_to_do),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
