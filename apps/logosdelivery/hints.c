#include "logosdelivery/hints.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/error.h"

/* ---- option values ----------------------------------------------------------------------------
 */

typedef struct option_hint {
  const char *cli;
  const char *hint;
} option_hint_t;

#define MULTIADDR_HINT                                                                             \
  "give the peer's full multiaddr, e.g. /ip4/127.0.0.1/tcp/60000/p2p/16Uiu2…, as its node logs " \
  "it (`Listening on …`) or /debug/v1/info shows it"

static const option_hint_t k_option_hints[] = {
    {"staticnode", MULTIADDR_HINT},
    {"storenode", MULTIADDR_HINT},
    {"filternode", MULTIADDR_HINT},
    {"lightpushnode", MULTIADDR_HINT},
    {"nodekey", "give 64 hex characters (e.g. from `openssl rand -hex 32`), or leave --nodekey "
                "out for a new key at every start"},
    {"store-message-db-url", "write sqlite://<path>, postgres://<user>:<password>@<host>:<port>/"
                             "<database> or memory://"},
    {"store-message-retention-policy",
     "write time:<seconds>, capacity:<messages> or size:<n>GB, several joined by ';'"},
    {"listen-address", "give an IPv4 or IPv6 address of this machine, e.g. 0.0.0.0 or ::"},
    {"rest-address", "give an IPv4 or IPv6 address, e.g. 127.0.0.1 or 0.0.0.0"},
    {"metrics-server-address", "give an IPv4 or IPv6 address, e.g. 127.0.0.1 or 0.0.0.0"},
    {"shard", "give a shard number in 0..1023; repeat --shard for several"},
    {"content-topic", "write /<application>/<version>/<topic>/<encoding>, e.g. /demo/1/chat/proto"},
    {"pubsub-topic", "write /waku/2/rs/<cluster>/<shard>"},
    {"max-msg-size", "write a number with its unit, e.g. 150KiB or 1MiB"},
    {"log-level", "write TRACE, DEBUG, INFO, NOTICE, WARN, ERROR or FATAL"},
    {"log-format", "write TEXT or JSON"},
    {"preset", "choose twn, logos.dev, logos.test or status.prod, or leave --preset out"},
    {"protected-shard", "write <shard>:<secp256k1 public key in hex>"},
    {"dns-discovery-url", "write enrtree://<public key>@<domain>"},
    {"discv5-bootstrap-node", "give a node record as text, enr:…"},
    {"nat", "write none, any, upnp, pmp or extip:<IPv4 address>"},
    {"ext-multiaddr", "give a multiaddr such as /ip4/203.0.113.7/tcp/60000"},
    {"rest-allow-origin", "give an origin such as http://localhost:3000, or * for any"},
};

void ld_app_option_hint(const ld_node_option_t *opt, char *out, size_t cap) {
  for (size_t i = 0; i < sizeof k_option_hints / sizeof k_option_hints[0]; i++)
    if (strcmp(k_option_hints[i].cli, opt->cli) == 0) {
      snprintf(out, cap, "%s", k_option_hints[i].hint);
      return;
    }
  snprintf(out, cap, "fix the value; `logosdelivery --help` says of --%s: %s", opt->cli, opt->help);
}

/* ---- the node's parts -------------------------------------------------------------------------
 */

void ld_app_mask_url(const char *url, char *out, size_t cap) {
  const char *scheme = strncmp(url, "postgres", 8) == 0 ? strstr(url, "://") : NULL;
  const char *at = scheme != NULL ? strchr(scheme + 3, '@') : NULL;
  const char *colon = at != NULL ? memchr(scheme + 3, ':', (size_t)(at - scheme - 3)) : NULL;
  if (colon == NULL) {
    snprintf(out, cap, "%s", url);
    return;
  }
  snprintf(out, cap, "%.*s***%s", (int)(colon + 1 - url), url, at);
}

/* The folder a file path lives in ("." for a bare name). */
static void parent_dir(const char *path, char *out, size_t cap) {
  const char *slash = strrchr(path, '/');
  if (slash == NULL)
    snprintf(out, cap, ".");
  else if (slash == path)
    snprintf(out, cap, "/");
  else
    snprintf(out, cap, "%.*s", (int)(slash - path), path);
}

/* What is wrong with writing a file at `path`, as the next step to take; `otherwise` is the
 * other way out ("give another path with --flag"). */
static void writable_hint(const char *path, const char *otherwise, char *out, size_t cap) {
  char dir[LD_NODE_PATH_MAX];
  parent_dir(path, dir, sizeof dir);
  struct stat st;
  if (stat(dir, &st) != 0)
    snprintf(out, cap, "the folder %s does not exist: create it (mkdir -p %s) or %s", dir, dir,
             otherwise);
  else if (access(dir, W_OK) != 0)
    snprintf(out, cap,
             "this user may not write in %s: change its owner or mode (chown, chmod) or "
             "%s",
             dir, otherwise);
  else
    snprintf(out, cap, "check that %s is a database this user may read and write, or %s", path,
             otherwise);
}

static void archive_text(const ld_node_config_t *cfg, const ld_node_failure_t *f, char *out,
                         size_t cap) {
  char url[LD_NODE_PATH_MAX + 16];
  ld_app_mask_url(cfg->store_db_url, url, sizeof url);
  char hint[LD_NODE_PATH_MAX * 2 + 128];
  if (strncmp(cfg->store_db_url, "postgres", 8) == 0) {
    if (strstr(f->what, "password") != NULL || strstr(f->what, "role") != NULL)
      snprintf(hint, sizeof hint, "check the user and password in --store-message-db-url");
    else if (strstr(f->what, "does not exist") != NULL)
      snprintf(hint, sizeof hint,
               "create the database (createdb) or name another one in "
               "--store-message-db-url");
    else
      snprintf(hint, sizeof hint,
               "check that PostgreSQL runs at the host and port of "
               "--store-message-db-url and accepts connections (pg_isready), "
               "or use sqlite://<path>");
  } else if (strncmp(cfg->store_db_url, "sqlite://", 9) == 0) {
    writable_hint(cfg->store_db_url + 9,
                  "give another path with --store-message-db-url=sqlite://<path>", hint,
                  sizeof hint);
  } else {
    snprintf(hint, sizeof hint, "check --store-message-db-url");
  }
  snprintf(out, cap, "--store-message-db-url=%s: cannot open the archive: %s; %s", url, f->what,
           hint);
}

/* A socket the node could not bind: the flag that sets its port, and what to do. */
static void listen_text(const char *flag, const char *what, int err, const char *address, char *out,
                        size_t cap) {
  if (err == LD_ERR_ADDR_IN_USE)
    snprintf(out, cap,
             "%s: cannot listen on %s: address already in use; choose another port "
             "with %s (0 picks a free one) or --ports-shift, or stop the process that "
             "uses it",
             flag, what, flag);
  else
    snprintf(out, cap,
             "%s: cannot listen on %s: %s; check that %s is an address of this machine "
             "(--listen-address) and that this user may bind the port (below 1024 needs "
             "privileges)",
             flag, what, ld_strerror(err), address);
}

static void server_text(const char *flag, const char *address_flag, const char *what, int err,
                        char *out, size_t cap) {
  if (err == LD_ERR_ADDR_IN_USE)
    snprintf(out, cap,
             "%s: cannot listen on %s: address already in use; choose another port "
             "with %s (0 picks a free one), or stop the process that uses it",
             flag, what, flag);
  else
    snprintf(out, cap, "%s: cannot listen on %s: %s; check %s and %s", flag, what, ld_strerror(err),
             address_flag, flag);
}

/* The secure WebSocket's key or certificate: the one that cannot be read, else both. */
static void tls_text(const ld_node_config_t *cfg, const ld_node_failure_t *f, char *out,
                     size_t cap) {
  const char *flag = NULL, *path = NULL;
  if (access(cfg->ws.key_path, R_OK) != 0) {
    flag = "--websocket-secure-key-path";
    path = cfg->ws.key_path;
  } else if (access(cfg->ws.cert_path, R_OK) != 0) {
    flag = "--websocket-secure-cert-path";
    path = cfg->ws.cert_path;
  }
  if (flag != NULL)
    snprintf(out, cap, "%s=%s: cannot read it: %s; give the path of a PEM file this user may read",
             flag, path, strerror(errno));
  else
    snprintf(out, cap,
             "--websocket-secure-key-path, --websocket-secure-cert-path (%s): not a "
             "usable key and certificate (%s); give a PEM private key and the PEM "
             "certificate made for it",
             f->what, ld_strerror(f->err));
}

static void rln_text(const ld_node_failure_t *f, char *out, size_t cap) {
  const char *hint =
      strstr(f->what, "rln-relay-dynamic") != NULL
          ? "run with --rln-relay-dynamic=false and --rln-relay-static-group-file=<file>"
      : strstr(f->what, "circuit-dir") != NULL
          ? "point --rln-relay-circuit-dir at the folder holding rln_final.zkey and graph.bin"
      : strstr(f->what, "membership-index") != NULL
          ? "give --rln-relay-membership-index, the index of this node's member in the group file"
      : strstr(f->what, "cred-path") != NULL
          ? "point --rln-relay-cred-path at a readable JSON file with the member's "
            "\"identitySecret\""
      : strstr(f->what, "static-group-file") != NULL
          ? "point --rln-relay-static-group-file at a readable group file (a JSON array of the "
            "members' rate commitments, \"0x…\")"
      : strstr(f->what, "relay") != NULL ? "run with --relay=true and "
                                           "--rln-relay-static-group-file=<file>"
                                         : "check the --rln-relay-* flags";
  snprintf(out, cap, "--rln-relay: RLN-relay cannot start: %s; %s", f->what, hint);
}

void ld_app_node_failure_text(const ld_node_config_t *cfg, const ld_node_failure_t *f, char *out,
                              size_t cap) {
  char hint[LD_NODE_PATH_MAX + 256];
  if (strcmp(f->part, "tcp") == 0) {
    listen_text("--tcp-port", f->what, f->err, cfg->listen_address, out, cap);
  } else if (strcmp(f->part, "websocket") == 0) {
    listen_text("--websocket-port", f->what, f->err, cfg->listen_address, out, cap);
  } else if (strcmp(f->part, "discv5") == 0) {
    listen_text("--discv5-udp-port", f->what, f->err, cfg->listen_address, out, cap);
  } else if (strcmp(f->part, "rest") == 0) {
    server_text("--rest-port", "--rest-address", f->what, f->err, out, cap);
  } else if (strcmp(f->part, "metrics") == 0) {
    server_text("--metrics-server-port", "--metrics-server-address", f->what, f->err, out, cap);
  } else if (strcmp(f->part, "websocket-tls") == 0) {
    tls_text(cfg, f, out, cap);
  } else if (strcmp(f->part, "archive") == 0) {
    archive_text(cfg, f, out, cap);
  } else if (strcmp(f->part, "retention") == 0) {
    snprintf(out, cap,
             "--store-message-retention-policy=%s: %s; write time:<seconds>, "
             "capacity:<messages> or size:<n>GB, several joined by ';'",
             cfg->store_retention, f->what);
  } else if (strcmp(f->part, "rln") == 0) {
    rln_text(f, out, cap);
  } else if (strcmp(f->part, "peer-store") == 0) {
    writable_hint(f->what, "start the node in a folder this user may write in", hint, sizeof hint);
    snprintf(out, cap,
             "--peer-persistence: cannot open the peer store %s: %s; %s, or run with "
             "--peer-persistence=false",
             f->what, ld_strerror(f->err), hint);
  } else {
    snprintf(out, cap, "the %s failed: %s (%s); see the log lines above", f->part, f->what,
             ld_strerror(f->err));
  }
}

/* ---- sub-commands -----------------------------------------------------------------------------
 */

const char *ld_app_dial_hint(int err, const char *target, char *buf, size_t cap) {
  switch (err) {
  case LD_ERR_REFUSED:
    snprintf(buf, cap,
             "nothing listens at that address: start the node, or use in %s the "
             "address its log shows (`Listening on …/p2p/<id>`)",
             target);
    break;
  case LD_ERR_TIMEOUT:
  case LD_ERR_UNREACHABLE:
    snprintf(buf, cap,
             "check the host and port of %s, that the node runs, and that no firewall "
             "blocks the port",
             target);
    break;
  case LD_ERR_PEER_ID_MISMATCH:
    snprintf(buf, cap,
             "another node answers there: copy the /p2p/<id> part of %s from the node's "
             "`Listening on` log line (its key changes at every start without --nodekey)",
             target);
    break;
  case LD_ERR_HANDSHAKE:
  case LD_ERR_NEGOTIATION_FAILED:
    snprintf(buf, cap,
             "check that %s names a Waku node's libp2p port (not its REST, metrics or "
             "discv5 port)",
             target);
    break;
  default:
    snprintf(buf, cap, "check that the node at %s runs and that the address is the one it logs",
             target);
    break;
  }
  return buf;
}

const char *ld_app_service_flag(const char *command, int lightpush, int filter) {
  if (strcmp(command, "send") == 0)
    return lightpush ? "--lightpush=true" : "--relay=true";
  if (strcmp(command, "subscribe") == 0)
    return filter ? "--filter=true" : "--relay=true";
  if (strcmp(command, "query") == 0)
    return "--store=true";
  return "the protocol";
}

const char *ld_app_service_hint(unsigned status, int err, const char *desc, const char *flag,
                                char *buf, size_t cap) {
  if (err == LD_ERR_PROTOCOL_UNSUPPORTED || err == LD_ERR_NEGOTIATION_FAILED) {
    snprintf(buf, cap,
             "the node at --peer does not serve it: start it with %s, or give --peer a "
             "node that does",
             flag);
    return buf;
  }
  if (err == LD_ERR_TIMEOUT)
    return "the node did not answer in time: check its log, or give more time with --timeout";
  if (err == LD_ERR_CLOSED || err == LD_ERR_RESET || err == LD_ERR_UNREACHABLE)
    return "the connection to --peer ended: check that the node still runs, then try again";
  if (desc != NULL && strstr(desc, "not supported by this store node") != NULL)
    return "ask a store node that serves those functions (--store-key-value, --store-key-presence "
           "and --store-wayback default to true), or drop the criteria that need them";
  switch (status) {
  case 400:
  case 420:
  case 421:
    return "the node refused the request as invalid (its reason above): check --content-topic, "
           "--pubsub-topic and the other flags";
  case 404:
    return "the node has no such subscription: subscribe again";
  case 413:
    return "the message is larger than the node accepts: send a shorter one, or raise "
           "--max-msg-size on the node";
  case 429:
    return "the node limits how often this peer may ask: wait a little and try again";
  case 503:
    return "the node cannot serve it now (its reason above): try again later or another node";
  case 504:
    return "the node could not complete it (its reason above: no RLN proof left for this epoch, or "
           "a "
           "peer it could not reach): try again later";
  case 505:
    return "the node has no relay peers on that shard: connect it to other nodes (--staticnode, "
           "discovery), or send over relay without --lightpush";
  default:
    break;
  }
  return "the node's reason is above; its log may say more";
}
