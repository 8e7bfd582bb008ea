/* The logosdelivery program: sub-command dispatch. */
#ifndef LD_APP_APP_H
#define LD_APP_APP_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* Runs the program with the process's arguments; returns its exit code. */
int ld_app_main(int argc, char **argv);

/* When ld_app_main began (ld_now_ns clock): the node logs its start-up time from it. */
extern uint64_t ld_app_main_ns;

/* `logosdelivery [flags]`: runs a node until SIGINT or SIGTERM. */
int ld_app_run_node(int argc, char **argv);

/* `logosdelivery canary <multiaddr> [--ping N] [--timeout S]`: dials a peer, prints its identify
 * data and ping round trips as JSON. Exit codes: LD_CANARY_EXIT_*. */
int ld_app_canary(int argc, char **argv);

/* `logosdelivery send --peer <multiaddr> --content-topic T [...] [--lightpush] <text>`: publishes
 * one message through the peer, over relay or (--lightpush) lightpush v3, and prints its hash.
 * Exit codes: LD_EXIT_OK, LD_EXIT_USAGE, the LD_CANARY_EXIT_* (unreachable, handshake,
 * unsupported: the peer does not serve lightpush, timeout, other) and LD_EXIT_SERVICE (the
 * lightpush service answered with an error status, printed on stderr). */
int ld_app_send(int argc, char **argv);

/* `logosdelivery subscribe --peer <multiaddr> --content-topic T [...] [--filter]`: prints every
 * message of the content topic as a JSON line, received over relay or (--filter) filter v2,
 * until SIGINT/SIGTERM (exit 0) or --count messages. Exit codes as `send` (LD_EXIT_SERVICE: the
 * filter service refused the subscription). */
int ld_app_subscribe(int argc, char **argv);

/* `logosdelivery query --peer <multiaddr> [criteria]`: one store v3 query (or every page with
 * --all); prints each message as a JSON line and the cursor of the next page. Exit codes as
 * `send` (LD_EXIT_SERVICE: the store answered with an error status). */
int ld_app_query(int argc, char **argv);

/* `logosdelivery discv5 [flags]`: a discv5 node alone (UDP, the Waku search loop), printing its
 * sessions, discovered records and matching peers as JSON lines until SIGINT/SIGTERM, --count
 * peers or --timeout (exit 0). LD_EXIT_USAGE for bad flags or a record that cannot be built,
 * LD_CANARY_EXIT_OTHER when the UDP port is taken. */
int ld_app_discv5(int argc, char **argv);

/* `logosdelivery dns-tree --domain D --key HEX [flags]`: builds and signs an EIP-1459 tree of
 * records and prints its zone file lines (or JSON, or dnsmasq lines). LD_EXIT_USAGE for bad flags
 * or records. `logosdelivery dns-resolve <enrtree://…> [flags]`: syncs a tree and prints its
 * records as JSON lines, then {"event":"done",…}; LD_CANARY_EXIT_OTHER when the tree fails. */
int ld_app_dns_tree(int argc, char **argv);
int ld_app_dns_resolve(int argc, char **argv);
/* generateRlnKeystore (rln_keystore.c): files a new RLN identity (or --identity-secret) in
 * nwaku's keystore at --rln-relay-cred-path under --rln-relay-cred-password and prints its
 * commitments as JSON; with --rln-relay-eth-private-key and --execute it registers the identity
 * with the membership contract first and files it under the index the contract gave
 * (rln_register.h). LD_EXIT_USAGE, LD_CANARY_EXIT_TIMEOUT (not mined in time),
 * LD_CANARY_EXIT_OTHER. */
int ld_app_rln_keystore(int argc, char **argv);

/* The flag tables of canary and discv5 for their documentation (man page, shell completion): up
 * to `cap` entries into `out`, whose targets point to storage never read. Return the count. */
struct ld_flag;
size_t ld_app_canary_flags(struct ld_flag *out, size_t cap);
size_t ld_app_discv5_flags(struct ld_flag *out, size_t cap);
size_t ld_app_rln_keystore_flags(struct ld_flag *out, size_t cap);

/* logosdelivery(1) in roff, and the bash completion script, generated from the node's option table
 * and the sub-commands' flag tables (docs.c). */
void ld_app_print_man(FILE *out);
void ld_app_print_bash_completion(FILE *out);

enum {
  LD_EXIT_OK = 0,
  LD_EXIT_USAGE = 1,
  LD_CANARY_EXIT_UNREACHABLE = 2,
  LD_CANARY_EXIT_HANDSHAKE = 3,
  LD_CANARY_EXIT_UNSUPPORTED = 4,
  LD_CANARY_EXIT_TIMEOUT = 5,
  LD_CANARY_EXIT_OTHER = 6,
  /* A lightpush, filter or store service answered with an error status. */
  LD_EXIT_SERVICE = 7,
};

#endif
