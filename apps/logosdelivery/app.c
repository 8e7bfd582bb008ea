#include "logosdelivery/app.h"

#include <signal.h>
#include <stdio.h>
#include <string.h>

static void print_usage(void) {
  printf("logosdelivery %s: a Logos Delivery (Waku v2) node\n\n"
         "usage:\n"
         "  logosdelivery [flags]                       run a node (--help lists the flags)\n"
         "  logosdelivery canary <multiaddr> [--ping N] [--timeout S]\n"
         "                                              dial a peer, print identify and ping\n"
         "  logosdelivery send --peer <multiaddr> --content-topic T [--pubsub-topic P |\n"
         "      --cluster-id C --num-shards-in-network N] <text>\n"
         "                                              publish one message over relay\n"
         "  logosdelivery subscribe --peer <multiaddr> --content-topic T [...]\n"
         "                                              print received messages as JSON lines\n"
         "  logosdelivery --version\n",
         LD_VERSION);
}

int ld_app_main(int argc, char **argv) {
  /* A peer that closes while we write must cost a write error (EPIPE), not the process. */
  signal(SIGPIPE, SIG_IGN);
  if (argc > 1 && strcmp(argv[1], "--version") == 0) {
    printf("logosdelivery %s\n", LD_VERSION);
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
  return ld_app_run_node(argc - 1, argv + 1);
}
