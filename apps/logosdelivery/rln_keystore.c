/* logosdelivery generateRlnKeystore: makes an RLN identity (or takes one) and files it in nwaku's
 * keystore (waku/rln/keystore.h) under the membership it is registered as, encrypted with the
 * password, so that --rln-relay-cred-path and --rln-relay-cred-password load it. nwaku's command
 * of that name also registers the identity on chain with an Ethereum key; this one leaves the
 * registration to the caller and prints what to register:
 *
 *   {"idCommitment": "0x…", "rateCommitment": "0x…", "userMessageLimit": L, "treeIndex": N,
 *    "credentialKey": "…"}
 *
 * (field elements as big-endian 0x hex, the contract's uint256). */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "base/error.h"
#include "crypto/crypto.h"
#include "logosdelivery/app.h"
#include "logosdelivery/flags.h"
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

static void print_result(const ld_rln_credential_t *c) {
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
  printf(",\"userMessageLimit\":%" PRIu64 ",\"treeIndex\":%" PRIu64 ",\"credentialKey\":\"%s\"}\n",
         c->user_message_limit, c->tree_index, key);
}

int ld_app_rln_keystore(int argc, char **argv) {
  char path[LD_FLAG_STRING_MAX] = "", password[LD_FLAG_STRING_MAX] = "";
  char contract[LD_FLAG_STRING_MAX] = "", secret[LD_FLAG_STRING_MAX] = "";
  int64_t index = 0, chain_id = 0, limit = 1, iterations = LD_RLN_KEYFILE_DEFAULT_ITERATIONS;
  const ld_flag_t flags[] = {
      {"rln-relay-cred-path", LD_FLAG_STRING, path, 0, 0, "the keystore file (required)"},
      {"rln-relay-cred-password", LD_FLAG_STRING, password, 0, 0, "its password"},
      {"rln-relay-membership-index", LD_FLAG_INT, &index, 0, INT64_MAX, "the membership's index"},
      {"rln-relay-chain-id", LD_FLAG_INT, &chain_id, 0, INT64_MAX, "the contract's chain id"},
      {"rln-relay-eth-contract-address", LD_FLAG_STRING, contract, 0, 0, "the contract, 0x…"},
      {"rln-relay-user-message-limit", LD_FLAG_INT, &limit, 1, INT64_MAX,
       "messages per epoch (default 1)"},
      {"identity-secret", LD_FLAG_STRING, secret, 0, 0, "use this secret (0x hex), not a new one"},
      {"kdf-iterations", LD_FLAG_INT, &iterations, 1, LD_RLN_KEYFILE_PBKDF2_MAX_ITERATIONS,
       "PBKDF2 iterations (nwaku: 1000000)"},
  };
  size_t n_flags = sizeof flags / sizeof flags[0];
  ld_flags_result_t res;
  memset(&res, 0, sizeof res);
  if (argc > 0 && strcmp(argv[0], "--help") == 0) {
    printf("usage: logosdelivery generateRlnKeystore --rln-relay-cred-path F [flags]\n");
    ld_flags_print_help(flags, n_flags, stdout);
    return LD_EXIT_OK;
  }
  if (ld_flags_parse(flags, n_flags, argc, argv, &res) != 0 || path[0] == '\0' ||
      res.n_positional != 0) {
    fprintf(stderr, "generateRlnKeystore: %s\n",
            res.error[0] != '\0' ? res.error : "needs --rln-relay-cred-path (--help)");
    return LD_EXIT_USAGE;
  }
  ld_rln_credential_t c;
  memset(&c, 0, sizeof c);
  c.tree_index = (uint64_t)index;
  c.user_message_limit = (uint64_t)limit;
  snprintf(c.chain_id, sizeof c.chain_id, "%" PRId64, chain_id);
  snprintf(c.contract_address, sizeof c.contract_address, "%.79s", contract);
  if (make_identity(secret, &c) != 0) {
    fprintf(stderr, "generateRlnKeystore: --identity-secret is not a 0x-hex field element\n");
    return LD_EXIT_USAGE;
  }
  char err[512] = "";
  int rc = ld_rln_keystore_add(path, &c, password, (uint32_t)iterations, err, sizeof err);
  if (rc != 0) {
    fprintf(stderr, "generateRlnKeystore: %s\n", err[0] != '\0' ? err : ld_strerror(rc));
    return LD_CANARY_EXIT_OTHER;
  }
  print_result(&c);
  explicit_bzero(&c, sizeof c);
  return LD_EXIT_OK;
}
