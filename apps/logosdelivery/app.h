/* The logosdelivery program: sub-command dispatch. */
#ifndef LD_APP_APP_H
#define LD_APP_APP_H

/* Runs the program with the process's arguments; returns its exit code. */
int ld_app_main(int argc, char **argv);

/* `logosdelivery [flags]`: runs a node until SIGINT or SIGTERM. */
int ld_app_run_node(int argc, char **argv);

/* `logosdelivery canary <multiaddr> [--ping N] [--timeout S]`: dials a peer, prints its identify
 * data and ping round trips as JSON. Exit codes: LD_CANARY_EXIT_*. */
int ld_app_canary(int argc, char **argv);

/* `logosdelivery send --peer <multiaddr> --content-topic T [...] <text>`: publishes one message
 * over relay through the peer and prints its hash. Exit codes: LD_EXIT_* and LD_CANARY_EXIT_*
 * (unreachable, handshake, timeout, other). */
int ld_app_send(int argc, char **argv);

/* `logosdelivery subscribe --peer <multiaddr> --content-topic T [...]`: prints every message of
 * the content topic as a JSON line until SIGINT/SIGTERM (exit 0) or --count messages. */
int ld_app_subscribe(int argc, char **argv);

enum {
  LD_EXIT_OK = 0,
  LD_EXIT_USAGE = 1,
  LD_CANARY_EXIT_UNREACHABLE = 2,
  LD_CANARY_EXIT_HANDSHAKE = 3,
  LD_CANARY_EXIT_UNSUPPORTED = 4,
  LD_CANARY_EXIT_TIMEOUT = 5,
  LD_CANARY_EXIT_OTHER = 6,
};

#endif
