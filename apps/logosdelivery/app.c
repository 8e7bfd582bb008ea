#include "logosdelivery/app.h"

#include <openssl/crypto.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "base/clock.h"

/* build/generated/build_info.c (cmake/build_info.cmake) */
extern const char ld_build_commit[];
extern const char ld_build_options[];

static void print_version(void) {
  printf("logosdelivery %s\ncommit %s\nbuild %s\n", LD_VERSION, ld_build_commit, ld_build_options);
}

static void print_usage(void) {
  printf("logosdelivery %s: a Logos Delivery (Waku v2) node\n\n"
         "usage:\n"
         "  logosdelivery [flags]                       run a node (--help lists the flags)\n"
         "  logosdelivery canary <multiaddr> [--ping N] [--timeout S]\n"
         "                                              dial a peer, print identify and ping\n"
         "  logosdelivery send --peer <multiaddr> --content-topic T [--pubsub-topic P |\n"
         "      --cluster-id C --num-shards-in-network N] [--lightpush] [--meta hex]\n"
         "      [--ephemeral] <text>\n"
         "                                              publish one message over relay, or\n"
         "                                              lightpush v3; print its hash\n"
         "  logosdelivery subscribe --peer <multiaddr> --content-topic T [...] [--filter]\n"
         "      [--count N] [--timeout S]\n"
         "                                              print received messages as JSON lines,\n"
         "                                              over relay or filter v2\n"
         "  logosdelivery query --peer <multiaddr> [--pubsub-topic P] [--content-topic T]...\n"
         "      [--start-time ns] [--end-time ns] [--hash 0x…]... [--cursor 0x…]\n"
         "      [--page-size N] [--backward] [--no-data] [--all]\n"
         "                                              query a store v3 node; messages as\n"
         "                                              JSON lines, then {\"cursor\": …}\n"
         "  logosdelivery discv5 [--discv5-bootstrap-node ENR]... [--discv5-udp-port N]\n"
         "      [--protocol-id d5waku|discv5] [--cluster-id C --shard S...] [--count N]\n"
         "                                              run discv5 alone; sessions, discovered\n"
         "                                              records and matching peers as JSON lines\n"
         "  logosdelivery dns-tree --domain D --key HEX [--enr ENR]... [--enr-file F]\n"
         "      [--link enrtree://...]... [--seq N] [--format zone|json|dnsmasq]\n"
         "                                              build and sign an EIP-1459 tree; print\n"
         "                                              the TXT records to publish\n"
         "  logosdelivery dns-resolve <enrtree://KEY@DOMAIN>\n"
         "      [--dns-discovery-name-server IP[:PORT]]...\n"
         "                                              sync a tree, print its records\n"
         "  logosdelivery generateRlnKeystore --rln-relay-cred-path F\n"
         "      [--rln-relay-cred-password P] [--rln-relay-membership-index N] [...]\n"
         "                                              file a new RLN identity in nwaku's\n"
         "                                              keystore; print its commitments\n"
         "  logosdelivery --version\n\n"
         "  `<command> --help` lists a command's flags.\n\n"
         "exit codes of send, subscribe and query (canary: 0-6):\n"
         "  0 success, 1 bad usage, 2 peer unreachable, lost or in another cluster,\n"
         "  3 handshake failed, 4 the peer does not support the protocol, 5 timed out,\n"
         "  6 other failure, 7 the service answered with an error status (printed on stderr)\n",
         LD_VERSION);
}

/* OpenSSL serves only SHA-256, HMAC and ChaCha20-Poly1305 from its default provider here, and
 * its error queue is never printed: reading the system openssl.cnf and loading the error
 * strings would map about 0.6 MiB of the library and heap for nothing. Must run before the
 * first OpenSSL call. */
static void init_openssl(void) {
  OPENSSL_init_crypto(OPENSSL_INIT_NO_LOAD_CONFIG | OPENSSL_INIT_NO_LOAD_CRYPTO_STRINGS, NULL);
}

uint64_t ld_app_main_ns;

int ld_app_main(int argc, char **argv) {
  ld_app_main_ns = ld_now_ns();
  init_openssl();
  /* A peer that closes while we write must cost a write error (EPIPE), not the process. */
  signal(SIGPIPE, SIG_IGN);
  if (argc > 1 && strcmp(argv[1], "--version") == 0) {
    print_version();
    return LD_EXIT_OK;
  }
  if (argc > 1 && strcmp(argv[1], "--generate-man-page") == 0) { /* for the build (docs.c) */
    ld_app_print_man(stdout);
    return LD_EXIT_OK;
  }
  if (argc > 1 && strcmp(argv[1], "--generate-bash-completion") == 0) {
    ld_app_print_bash_completion(stdout);
    return LD_EXIT_OK;
  }
  if (argc > 1 && (strcmp(argv[1], "help") == 0 || strcmp(argv[1], "-h") == 0)) {
    print_usage();
    return LD_EXIT_OK;
  }
  if (argc > 1 && strcmp(argv[1], "canary") == 0)
    return ld_app_canary(argc - 2, argv + 2);
  if (argc > 1 && strcmp(argv[1], "send") == 0)
    return ld_app_send(argc - 2, argv + 2);
  if (argc > 1 && strcmp(argv[1], "subscribe") == 0)
    return ld_app_subscribe(argc - 2, argv + 2);
  if (argc > 1 && strcmp(argv[1], "query") == 0)
    return ld_app_query(argc - 2, argv + 2);
  if (argc > 1 && strcmp(argv[1], "discv5") == 0)
    return ld_app_discv5(argc - 2, argv + 2);
  if (argc > 1 && strcmp(argv[1], "dns-tree") == 0)
    return ld_app_dns_tree(argc - 2, argv + 2);
  if (argc > 1 && strcmp(argv[1], "dns-resolve") == 0)
    return ld_app_dns_resolve(argc - 2, argv + 2);
  if (argc > 1 && strcmp(argv[1], "generateRlnKeystore") == 0)
    return ld_app_rln_keystore(argc - 2, argv + 2);
  return ld_app_run_node(argc - 1, argv + 1);
}
