/* logosdelivery(1) and the bash completion script, written from the tables the program parses
 * with (node/options.h for the node's flags, each sub-command's flag table), so that neither can
 * miss or invent an option. The build runs `logosdelivery --generate-man-page` and
 * `--generate-bash-completion` (CMakeLists.txt); the package installs their output. */
#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "logosdelivery/app.h"
#include "logosdelivery/client.h"
#include "logosdelivery/flags.h"
#include "logosdelivery/node_options.h"
#include "node/options.h"

#define DOC_MAX_FLAGS 64

typedef struct doc_command {
  const char *name;
  const char *synopsis; /* after "logosdelivery <name> " */
  const char *what;     /* one paragraph */
  size_t n;
  ld_flag_t flags[DOC_MAX_FLAGS];
} doc_command_t;

/* The sub-commands, in the order of `logosdelivery help`. */
static size_t doc_commands(doc_command_t *out) {
  static const struct {
    const char *name, *synopsis, *what;
  } text[] = {
      {"canary", "<multiaddr> [flags]",
       "Dials a peer, prints its identify data and ping round trips as JSON, and exits with "
       "what went wrong: 0 reached, 2 unreachable, 3 handshake failed, 4 protocol unsupported, "
       "5 timed out, 6 other failure."},
      {"send", "--peer <multiaddr> --content-topic T [flags] <text>",
       "Publishes one message through the peer over relay, or lightpush v3 with --lightpush, and "
       "prints its hash. The pubsub topic is derived as the node derives it (the cluster and "
       "shard count learnt from the peer, or --cluster-id and --num-shards-in-network), unless "
       "--pubsub-topic names it; the topic used is printed on stderr."},
      {"subscribe", "--peer <multiaddr> --content-topic T [flags]",
       "Prints every message of the content topics as one JSON line, received over relay or "
       "filter v2 with --filter, until SIGINT or SIGTERM, --count messages or --timeout."},
      {"query", "--peer <multiaddr> [flags]",
       "Runs a store v3 query and prints each message as a JSON line, then {\"cursor\": ...} "
       "when more pages exist; --all follows the cursors, showing pages, messages and their rate "
       "on stderr (one line redrawn on a terminal, plain lines otherwise)."},
      {"discv5", "[flags]",
       "Runs discv5 alone over UDP and prints its sessions, the records it discovers and the "
       "matching peers as JSON lines."},
      {"generateRlnKeystore", "--rln-relay-cred-path F [flags]",
       "Files a new RLN identity (or --identity-secret) in nwaku's keystore and prints its "
       "commitments as JSON. With --rln-relay-eth-private-key and --execute it first registers "
       "the identity with the membership contract at --rln-relay-eth-contract-address through "
       "--rln-relay-eth-client-address (an EIP-1559 transaction, or EIP-155 on a chain without a "
       "base fee) and files it under the index of the contract's MembershipRegistered event; with "
       "the key but without --execute it checks everything up to the gas estimate and sends and "
       "writes nothing. Without the key it files the identity under "
       "--rln-relay-membership-index."},
  };
  size_t n = sizeof text / sizeof text[0];
  for (size_t i = 0; i < n; i++) {
    doc_command_t *c = &out[i];
    c->name = text[i].name;
    c->synopsis = text[i].synopsis;
    c->what = text[i].what;
    if (i == 0)
      c->n = ld_app_canary_flags(c->flags, DOC_MAX_FLAGS);
    else if (i == 4)
      c->n = ld_app_discv5_flags(c->flags, DOC_MAX_FLAGS);
    else if (i == 5)
      c->n = ld_app_rln_keystore_flags(c->flags, DOC_MAX_FLAGS);
    else
      c->n = ld_client_flags((ld_client_command_t)(i - 1), c->flags, DOC_MAX_FLAGS);
  }
  return n;
}

#define DOC_N_COMMANDS 6

/* ---- roff ------------------------------------------------------------------------------------ */

/* A sentence end after a help text that has none. */
static void end_sentence(FILE *out, const char *text) {
  size_t n = strlen(text);
  if (n > 0 && text[n - 1] != '.')
    fputc('.', out);
}

/* Text with roff's specials escaped: backslash, and a '.' or '\'' that would start a request. */
static void roff(FILE *out, const char *s, bool line_start) {
  for (; *s != '\0'; s++) {
    if (line_start && (*s == '.' || *s == '\''))
      fputs("\\&", out);
    line_start = *s == '\n';
    if (*s == '\\')
      fputs("\\e", out);
    else if (*s == '-')
      fputs("\\-", out);
    else
      fputc(*s, out);
  }
}

static void env_name(const char *cli, char *out, size_t cap) {
  size_t n = snprintf(out, cap, "%s", LD_APP_ENV_PREFIX);
  for (; *cli != '\0' && n + 1 < cap; cli++)
    out[n++] = *cli == '-' ? '_' : (char)toupper((unsigned char)*cli);
  out[n] = '\0';
}

static void man_node_option(FILE *out, const ld_node_option_t *opt) {
  const char *def = opt->program_def != NULL ? opt->program_def : opt->def;
  fputs(".TP\n\\fB", out);
  roff(out, "--", false);
  roff(out, opt->cli, false);
  fputs("\\fR", out);
  if (opt->kind != LD_NODE_OPT_BOOL) {
    fputs("=\\fI", out);
    roff(out, opt->type != NULL && opt->type[0] != '\0' ? opt->type : "value", false);
    fputs("\\fR", out);
  }
  fputs("\n", out);
  roff(out, opt->help, true);
  end_sentence(out, opt->help);
  if (opt->kind == LD_NODE_OPT_LIST)
    fputs(" Repeatable.", out);
  if (def != NULL && def[0] != '\0') {
    fputs(" Default: ", out);
    roff(out, def, false);
    fputs(".", out);
  }
  if (opt->flags & LD_NODE_OPT_INERT)
    fputs(" Accepted for nwaku compatibility; no effect yet.", out);
  char env[128];
  env_name(opt->cli, env, sizeof env);
  fputs(" Environment: \\fB", out);
  roff(out, env, false);
  fputs("\\fR.\n", out);
}

static void man_flag(FILE *out, const ld_flag_t *f) {
  fputs(".TP\n\\fB", out);
  roff(out, "--", false);
  roff(out, f->name, false);
  fputs("\\fR", out);
  if (f->kind != LD_FLAG_BOOL)
    fputs(f->kind == LD_FLAG_INT ? "=\\fIN\\fR" : "=\\fIvalue\\fR", out);
  fputs("\n", out);
  roff(out, f->help, true);
  end_sentence(out, f->help);
  fputs(f->kind == LD_FLAG_LIST ? " Repeatable.\n" : "\n", out);
}

static void man_head(FILE *out) {
  fprintf(out, ".\\\" Generated by logosdelivery --generate-man-page from the option tables.\n");
  fprintf(out, ".TH LOGOSDELIVERY 1 \"\" \"logosdelivery %s\" \"User Commands\"\n", LD_VERSION);
  fputs(".SH NAME\n"
        "logosdelivery \\- a Logos Delivery (Waku v2) node, and commands that talk to one\n"
        ".SH SYNOPSIS\n"
        ".B logosdelivery\n[\\fIoptions\\fR]\n.br\n",
        out);
  doc_command_t cmds[DOC_N_COMMANDS];
  size_t n = doc_commands(cmds);
  for (size_t i = 0; i < n; i++) {
    fprintf(out, ".B logosdelivery %s\n", cmds[i].name);
    roff(out, cmds[i].synopsis, true);
    fputs("\n.br\n", out);
  }
  fputs(".B logosdelivery \\-\\-version\n.br\n.B logosdelivery help\n", out);
  fputs(".SH DESCRIPTION\n"
        "Without a command, \\fBlogosdelivery\\fR runs a node until SIGINT or SIGTERM: libp2p, "
        "the Waku relay, store, filter, lightpush and peer exchange protocols, the REST API and "
        "the Prometheus metrics of nwaku's \\fBwakunode2\\fR, whose flag names, environment "
        "variables and configuration file it takes unchanged.\n"
        ".PP\n"
        "Flags are written \\fB\\-\\-name=value\\fR, \\fB\\-\\-name:value\\fR or "
        "\\fB\\-\\-name value\\fR; a boolean also as a bare \\fB\\-\\-name\\fR (true, yes, on, 1 / "
        "false, no, off, 0). A flag not on the command line is read from its environment "
        "variable (named below), then from the TOML file of \\fB\\-\\-config\\-file\\fR, whose "
        "keys are the flag names.\n"
        ".PP\n"
        "With \\fB\\-\\-rest=true\\fR the REST server also serves a status page at "
        "\\fIhttp://127.0.0.1:8645/\\fR: identity and addresses, health per protocol, peers, the "
        "gossipsub mesh, messages per shard, store and filter.\n",
        out);
}

void ld_app_print_man(FILE *out) {
  man_head(out);
  fputs(".SH NODE OPTIONS\n", out);
  for (size_t i = 0; i < ld_node_options_count(); i++)
    man_node_option(out, ld_node_option_at(i));
  fputs(".TP\n\\fB\\-\\-help\\fR\nPrints the node's flags and exits.\n", out);
  fputs(".SH COMMANDS\n", out);
  doc_command_t cmds[DOC_N_COMMANDS];
  size_t n = doc_commands(cmds);
  for (size_t i = 0; i < n; i++) {
    fprintf(out, ".SS %s\n.B logosdelivery %s\n", cmds[i].name, cmds[i].name);
    roff(out, cmds[i].synopsis, true);
    fputs("\n.PP\n", out);
    roff(out, cmds[i].what, true);
    fputs("\n", out);
    for (size_t k = 0; k < cmds[i].n; k++)
      man_flag(out, &cmds[i].flags[k]);
  }
  fputs(".SH EXIT STATUS\n"
        "The node: 0 after a clean stop, 1 for bad flags or a configuration it cannot start with "
        "(a port in use, a database it cannot open, missing RLN files), or when a part it needs "
        "fails after start (the archive)."
        "\n.PP\n"
        "send, subscribe and query: 0 success, 1 bad usage, 2 peer unreachable, lost or in "
        "another cluster, 3 handshake failed, 4 the peer does not support the protocol, 5 timed "
        "out, 6 other failure, 7 the service answered with an error status (printed on stderr).\n"
        ".PP\n"
        "canary: as send, 0 to 6. discv5: 0, 1 bad usage, 6 UDP port in use. dns-tree: 0, 1 bad "
        "usage or records, 6 the tree cannot be built. dns-resolve: 0, 1 bad usage or URL, 6 the "
        "tree cannot be read.\n"
        ".SH DIAGNOSTICS\n"
        "Every error ends in one line on standard error: the program or sub-command, what failed "
        "with the value it was given (the flag, environment variable or config-file line it came "
        "from), then after a semicolon what to do next, e.g.\n"
        ".PP\n"
        ".EX\n"
        "logosdelivery: \\-\\-tcp\\-port: cannot listen on /ip4/0.0.0.0/tcp/60000: address "
        "already in use; choose another port with \\-\\-tcp\\-port (0 picks a free one) or "
        "\\-\\-ports\\-shift, or stop the process that uses it\n"
        ".EE\n"
        ".PP\n"
        "The node writes this line after its log, once it has stopped; a password in a database "
        "URL is shown as ***.\n"
        ".SH FILES\n"
        ".TP\n.I /etc/logosdelivery/config.toml\n"
        "The configuration of the packaged service (\\fBlogosdelivery.service\\fR).\n"
        ".TP\n.I /var/lib/logosdelivery\n"
        "The service's state: its node key and store database.\n"
        ".SH SEE ALSO\n"
        ".BR liblogosdelivery (3),\n"
        ".BR systemd.exec (5)\n",
        out);
}

/* ---- bash completion ------------------------------------------------------------------------- */

static void completion_words(FILE *out, const ld_flag_t *flags, size_t n) {
  for (size_t i = 0; i < n; i++)
    fprintf(out, "%s--%s", i > 0 ? " " : "", flags[i].name);
}

static void completion_bools(FILE *out, const ld_flag_t *flags, size_t n) {
  for (size_t i = 0; i < n; i++)
    if (flags[i].kind == LD_FLAG_BOOL)
      fprintf(out, " --%s", flags[i].name);
}

void ld_app_print_bash_completion(FILE *out) {
  fputs("# bash completion for logosdelivery. Generated by logosdelivery "
        "--generate-bash-completion\n# from the option tables; do not edit.\n\n",
        out);
  fputs("_logosdelivery_node_flags='", out);
  for (size_t i = 0; i < ld_node_options_count(); i++)
    fprintf(out, "%s--%s", i > 0 ? " " : "", ld_node_option_at(i)->cli);
  fputs(" --help'\n_logosdelivery_node_bools='", out);
  for (size_t i = 0; i < ld_node_options_count(); i++)
    if (ld_node_option_at(i)->kind == LD_NODE_OPT_BOOL)
      fprintf(out, " --%s", ld_node_option_at(i)->cli);
  fputs("'\n", out);
  doc_command_t cmds[DOC_N_COMMANDS];
  size_t n = doc_commands(cmds);
  for (size_t i = 0; i < n; i++) {
    fprintf(out, "_logosdelivery_%s_flags='", cmds[i].name);
    completion_words(out, cmds[i].flags, cmds[i].n);
    fprintf(out, "'\n_logosdelivery_%s_bools='", cmds[i].name);
    completion_bools(out, cmds[i].flags, cmds[i].n);
    fputs("'\n", out);
  }
  fputs("_logosdelivery_commands='", out);
  for (size_t i = 0; i < n; i++)
    fprintf(out, "%s ", cmds[i].name);
  fputs("help --version --help'\n\n", out);
  fputs(
      "_logosdelivery() {\n"
      "  local cur=\"${COMP_WORDS[COMP_CWORD]}\" cmd='' i\n"
      "  for ((i = 1; i < COMP_CWORD; i++)); do\n"
      "    case \" $_logosdelivery_commands \" in *\" ${COMP_WORDS[i]} \"*) cmd=${COMP_WORDS[i]}; "
      "break ;; esac\n"
      "    [[ ${COMP_WORDS[i]} == -* ]] && break\n"
      "  done\n"
      "  local flags=$_logosdelivery_node_flags bools=$_logosdelivery_node_bools\n"
      "  if [[ -n $cmd ]]; then\n"
      "    local f=_logosdelivery_${cmd}_flags b=_logosdelivery_${cmd}_bools\n"
      "    flags=${!f} bools=${!b}\n"
      "  elif ((COMP_CWORD == 1)) && [[ $cur != -* ]]; then\n"
      "    COMPREPLY=($(compgen -W \"$_logosdelivery_commands\" -- \"$cur\"))\n"
      "    return\n"
      "  fi\n"
      "  # bash splits --name=value at '=' (COMP_WORDBREAKS): the flag is then two words back\n"
      "  local flag='' value=''\n"
      "  if [[ $cur == --*=* ]]; then flag=${cur%%=*} value=${cur#*=}\n"
      "  elif [[ $cur == = ]]; then flag=${COMP_WORDS[COMP_CWORD-1]}\n"
      "  elif ((COMP_CWORD > 1)) && [[ ${COMP_WORDS[COMP_CWORD-1]} == = ]]; then\n"
      "    flag=${COMP_WORDS[COMP_CWORD-2]} value=$cur\n"
      "  fi\n"
      "  if [[ -n $flag ]]; then\n"
      "    local words=''\n"
      "    case \" $bools \" in *\" $flag \"*) words='true false' ;; esac\n"
      "    case $flag in\n"
      "      --log-level) words='TRACE DEBUG INFO NOTICE WARN ERROR FATAL' ;;\n"
      "      --log-format) words='TEXT JSON' ;;\n"
      "      --config-file|--nodekey-file|--store-message-db-url) "
      "COMPREPLY=($(compgen -f -- \"$value\")); return ;;\n"
      "    esac\n"
      "    COMPREPLY=($(compgen -W \"$words\" -- \"$value\"))\n"
      "    return\n"
      "  fi\n"
      "  if [[ $cur == -* ]]; then\n"
      "    COMPREPLY=($(compgen -W \"$flags\" -- \"$cur\"))\n"
      "  fi\n"
      "}\n"
      "complete -o default -F _logosdelivery logosdelivery\n",
      out);
}
