/* logosdelivery generateRlnKeystore: makes an RLN identity (or takes one) and files it in nwaku's
 * keystore (waku/rln/keystore.h) under the membership it is registered as, encrypted with the
 * password, so that --rln-relay-cred-path and --rln-relay-cred-password load it.
 *
 * With --rln-relay-eth-private-key and --execute it registers the identity with the membership
 * contract first, as nwaku's command of that name does (rln_register.h), and files it under the
 * index of the contract's MembershipRegistered event; with the key but without --execute it is
 * nwaku's dry run: every check up to the gas estimate, nothing sent and nothing written. Without
 * the key it files the identity under --rln-relay-membership-index and leaves the registration to
 * the caller. It prints what it filed (or would register):
 *
 *   {"idCommitment": "0x…", "rateCommitment": "0x…", "userMessageLimit": L, "treeIndex": N,
 *    "credentialKey": "…"[, "chainId": C, "account": "0x…", "gasLimit": G,
 *    "transactionHash": "0x…", "blockNumber": B | , "dryRun": true]}
 *
 * (field elements as big-endian 0x hex, the contract's uint256). */
#include <inttypes.h>
#include <libgen.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "base/error.h"
#include "crypto/crypto.h"
#include "logosdelivery/app.h"
#include "logosdelivery/flags.h"
#include "logosdelivery/rln_register.h"
#include "waku/rln/eth_abi.h"
#include "waku/rln/group_file.h"
#include "waku/rln/keystore.h"
#include "zk/poseidon.h"
#include "zk/rln.h"

static void random_field(ld_fr_t *x) {
  uint8_t b[32];
  ld_random_bytes(b, sizeof b);
  ld_fr_from_bytes_reduce(x, b);
}

static void print_be(const char *name, const uint8_t le[32]) {
  printf("\"%s\":\"0x", name);
  for (int i = 31; i >= 0; i--)
    printf("%02x", le[i]);
  printf("\"");
}

/* A fresh identity as zerokit makes one, or the given secret with zero trapdoor and nullifier. */
static int make_identity(const char *secret_hex, ld_rln_credential_t *c) {
  ld_fr_t trapdoor, nullifier, secret, commitment;
  if (secret_hex[0] != '\0') {
    if (ld_rln_field_from_hex(secret_hex, &secret) != 0)
      return LD_ERR_BAD_ENCODING;
    ld_fr_from_u64(&trapdoor, 0);
    ld_fr_from_u64(&nullifier, 0);
  } else {
    random_field(&trapdoor);
    random_field(&nullifier);
    ld_poseidon_hash2(&secret, &trapdoor, &nullifier);
  }
  ld_rln_id_commitment(&commitment, &secret);
  ld_fr_to_bytes(c->id_trapdoor, &trapdoor);
  ld_fr_to_bytes(c->id_nullifier, &nullifier);
  ld_fr_to_bytes(c->id_secret_hash, &secret);
  ld_fr_to_bytes(c->id_commitment, &commitment);
  return 0;
}

static void print_result(const ld_rln_credential_t *c, const ld_rln_register_result_t *reg,
                         bool dry_run) {
  ld_fr_t idc, rate;
  uint8_t le[32];
  ld_fr_from_bytes(&idc, c->id_commitment);
  ld_rln_rate_commitment(&rate, &idc, c->user_message_limit);
  ld_fr_to_bytes(le, &rate);
  char key[65];
  ld_rln_keystore_key(c->chain_id, c->contract_address, c->tree_index, key);
  printf("{");
  print_be("idCommitment", c->id_commitment);
  printf(",");
  print_be("rateCommitment", le);
  printf(",\"userMessageLimit\":%" PRIu64 ",\"treeIndex\":%" PRIu64 ",\"credentialKey\":\"%s\"",
         c->user_message_limit, c->tree_index, key);
  if (reg != NULL) {
    printf(",\"chainId\":%" PRIu64 ",\"account\":\"%s\",\"gasLimit\":%" PRIu64, reg->chain_id,
           reg->from, reg->gas_limit);
    if (dry_run)
      printf(",\"dryRun\":true");
    else
      printf(",\"transactionHash\":\"%s\",\"blockNumber\":%" PRIu64, reg->tx_hash,
             reg->block_number);
  }
  printf("}\n");
}

/* Whether the keystore can be written before a registration is paid for: an existing file must
 * be a keystore and writable, a new one's folder writable. */
static int check_keystore_writable(const char *path) {
  if (access(path, F_OK) == 0) {
    json_error_t jerr;
    json_t *root = json_load_file(path, 0, &jerr);
    bool ok = root != NULL && ld_rln_keystore_detect(root);
    json_decref(root);
    if (!ok || access(path, W_OK) != 0) {
      fprintf(stderr,
              "generateRlnKeystore: --rln-relay-cred-path=%s is %s; name a new file or an nwaku "
              "keystore this program may write, nothing was registered\n",
              path, ok ? "not writable" : "not an RLN keystore");
      return LD_EXIT_USAGE;
    }
    return 0;
  }
  char dir[LD_FLAG_STRING_MAX];
  snprintf(dir, sizeof dir, "%s", path);
  if (access(dirname(dir), W_OK) != 0) {
    fprintf(stderr,
            "generateRlnKeystore: the folder of --rln-relay-cred-path=%s is not writable; name a "
            "path this program may write, nothing was registered\n",
            path);
    return LD_EXIT_USAGE;
  }
  return 0;
}

typedef struct keystore_opts {
  char path[LD_FLAG_STRING_MAX], password[LD_FLAG_STRING_MAX];
  char contract[LD_FLAG_STRING_MAX], secret[LD_FLAG_STRING_MAX];
  char eth_key[LD_FLAG_STRING_MAX], eth_url[LD_FLAG_STRING_MAX];
  int64_t index, chain_id, limit, iterations, receipt_timeout, rpc_timeout;
  bool execute;
} keystore_opts_t;

enum { FLAG_INDEX = 2, N_FLAGS = 13 };

static void keystore_flags(keystore_opts_t *o, ld_flag_t flags[N_FLAGS]) {
  const ld_flag_t table[N_FLAGS] = {
      {"rln-relay-cred-path", LD_FLAG_STRING, o->path, 0, 0, "the keystore file (required)"},
      {"rln-relay-cred-password", LD_FLAG_STRING, o->password, 0, 0, "its password"},
      {"rln-relay-membership-index", LD_FLAG_INT, &o->index, 0, INT64_MAX,
       "the membership's index (without --execute)"},
      {"rln-relay-chain-id", LD_FLAG_INT, &o->chain_id, 0, INT64_MAX,
       "the contract's chain id (with --execute: checked against the endpoint's; 0 takes it)"},
      {"rln-relay-eth-contract-address", LD_FLAG_STRING, o->contract, 0, 0, "the contract, 0x…"},
      {"rln-relay-user-message-limit", LD_FLAG_INT, &o->limit, 1, UINT32_MAX,
       "messages per epoch (default 1)"},
      {"identity-secret", LD_FLAG_STRING, o->secret, 0, 0,
       "use this secret (0x hex), not a new one"},
      {"kdf-iterations", LD_FLAG_INT, &o->iterations, 1, LD_RLN_KEYFILE_PBKDF2_MAX_ITERATIONS,
       "PBKDF2 iterations (nwaku: 1000000)"},
      {"rln-relay-eth-private-key", LD_FLAG_STRING, o->eth_key, 0, 0,
       "the account that registers the membership and pays for it (64 hex digits)"},
      {"rln-relay-eth-client-address", LD_FLAG_STRING, o->eth_url, 0, 0,
       "the Ethereum JSON-RPC endpoint (default http://localhost:8540/)"},
      {"execute", LD_FLAG_BOOL, &o->execute, 0, 0,
       "register on chain; with the key but without it, a dry run that sends and writes nothing"},
      {"receipt-timeout-sec", LD_FLAG_INT, &o->receipt_timeout, 1, 86400,
       "how long to wait for the registration to be mined (default 120)"},
      {"rpc-timeout-sec", LD_FLAG_INT, &o->rpc_timeout, 1, 3600,
       "how long each JSON-RPC call may take (default 30)"},
  };
  memcpy(flags, table, sizeof table);
}

static void keystore_defaults(keystore_opts_t *o) {
  memset(o, 0, sizeof *o);
  o->limit = 1;
  o->iterations = LD_RLN_KEYFILE_DEFAULT_ITERATIONS;
  o->receipt_timeout = 120;
  o->rpc_timeout = 30;
  snprintf(o->eth_url, sizeof o->eth_url, "http://localhost:8540/");
}

size_t ld_app_rln_keystore_flags(ld_flag_t *out, size_t cap) {
  static keystore_opts_t unused;
  ld_flag_t flags[N_FLAGS];
  keystore_flags(&unused, flags);
  size_t n = cap < N_FLAGS ? cap : N_FLAGS;
  memcpy(out, flags, n * sizeof *flags);
  return n;
}

/* The combinations the flags cannot express: a message, or NULL. */
static const char *check_combination(const keystore_opts_t *o, const ld_flags_result_t *res) {
  bool onchain = o->eth_key[0] != '\0';
  if (o->execute && !onchain)
    return "--execute without --rln-relay-eth-private-key registers nothing; add the key of the "
           "account that pays for the registration";
  if (onchain && res->seen[FLAG_INDEX])
    return "--rln-relay-membership-index is the contract's to give when it registers the "
           "membership; leave it out with --rln-relay-eth-private-key";
  if (onchain && o->contract[0] == '\0')
    return "--rln-relay-eth-private-key without --rln-relay-eth-contract-address; name the "
           "membership contract";
  return NULL;
}

/* Registers the identity (or dry-runs it): fills the credential's chain id and index. */
static int register_identity(const keystore_opts_t *o, ld_rln_credential_t *c,
                             ld_rln_register_result_t *reg) {
  ld_fr_t idc;
  uint8_t word[LD_ETH_WORD];
  ld_fr_from_bytes(&idc, c->id_commitment);
  ld_eth_word_from_field(word, &idc);
  ld_rln_register_args_t args = {.url = o->eth_url,
                                 .contract = o->contract,
                                 .private_key = o->eth_key,
                                 .chain_id = (uint64_t)o->chain_id,
                                 .limit = (uint32_t)o->limit,
                                 .execute = o->execute,
                                 .call_timeout_ms = (uint32_t)o->rpc_timeout * 1000u,
                                 .receipt_wait_ms = (uint32_t)o->receipt_timeout * 1000u};
  char err[1024] = "";
  int rc = ld_app_rln_register(&args, word, reg, err, sizeof err);
  if (rc != 0) {
    fprintf(stderr, "generateRlnKeystore: %s\n", err);
    return rc;
  }
  c->tree_index = reg->index;
  snprintf(c->chain_id, sizeof c->chain_id, "%" PRIu64, reg->chain_id);
  return 0;
}

int ld_app_rln_keystore(int argc, char **argv) {
  keystore_opts_t o;
  keystore_defaults(&o);
  ld_flag_t flags[N_FLAGS];
  keystore_flags(&o, flags);
  ld_flags_result_t res;
  memset(&res, 0, sizeof res);
  if (argc > 0 && strcmp(argv[0], "--help") == 0) {
    printf("usage: logosdelivery generateRlnKeystore --rln-relay-cred-path F [flags]\n"
           "  registers on chain with --rln-relay-eth-private-key K --execute (nwaku's flags)\n");
    ld_flags_print_help(flags, N_FLAGS, stdout);
    return LD_EXIT_OK;
  }
  if (ld_flags_parse(flags, N_FLAGS, argc, argv, &res) != 0 || o.path[0] == '\0' ||
      res.n_positional != 0) {
    fprintf(stderr, "generateRlnKeystore: %s\n",
            res.error[0] != '\0' ? res.error : "needs --rln-relay-cred-path (--help)");
    return LD_EXIT_USAGE;
  }
  const char *bad = check_combination(&o, &res);
  if (bad != NULL) {
    fprintf(stderr, "generateRlnKeystore: %s\n", bad);
    return LD_EXIT_USAGE;
  }
  bool onchain = o.eth_key[0] != '\0';
  ld_rln_credential_t c;
  memset(&c, 0, sizeof c);
  c.tree_index = (uint64_t)o.index;
  c.user_message_limit = (uint64_t)o.limit;
  snprintf(c.chain_id, sizeof c.chain_id, "%" PRId64, o.chain_id);
  snprintf(c.contract_address, sizeof c.contract_address, "%.79s", o.contract);
  if (make_identity(o.secret, &c) != 0) {
    fprintf(stderr, "generateRlnKeystore: --identity-secret is not a 0x-hex field element\n");
    return LD_EXIT_USAGE;
  }
  ld_rln_register_result_t reg;
  memset(&reg, 0, sizeof reg);
  int rc = 0;
  if (onchain && o.execute)
    rc = check_keystore_writable(o.path);
  if (rc == 0 && onchain)
    rc = register_identity(&o, &c, &reg);
  if (rc == 0 && onchain && !o.execute) {
    print_result(&c, &reg, true);
    explicit_bzero(&c, sizeof c);
    return LD_EXIT_OK;
  }
  if (rc != 0) {
    explicit_bzero(&c, sizeof c);
    return rc;
  }
  char err[512] = "";
  rc = ld_rln_keystore_add(o.path, &c, o.password, (uint32_t)o.iterations, err, sizeof err);
  if (rc != 0) {
    fprintf(stderr, "generateRlnKeystore: %s\n", err[0] != '\0' ? err : ld_strerror(rc));
    char secret_hex[65];
    for (int i = 0; i < 32; i++)
      snprintf(secret_hex + 2 * i, 3, "%02x", c.id_secret_hash[31 - i]);
    if (onchain) /* registered and paid for: the secret must not be lost */
      fprintf(stderr,
              "generateRlnKeystore: the membership is registered (index %" PRIu64
              ", transaction %s) but not filed; file it with --identity-secret=0x%s "
              "--rln-relay-membership-index=%" PRIu64 " --rln-relay-chain-id=%s and the same "
              "contract and limit, without the Ethereum key\n",
              c.tree_index, reg.tx_hash, secret_hex, c.tree_index, c.chain_id);
    explicit_bzero(secret_hex, sizeof secret_hex);
    explicit_bzero(&c, sizeof c);
    return LD_CANARY_EXIT_OTHER;
  }
  print_result(&c, onchain ? &reg : NULL, false);
  explicit_bzero(&c, sizeof c);
  return LD_EXIT_OK;
}
