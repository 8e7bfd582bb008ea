/* RLN-v2 proof generation: witness graph, then Groth16. */
#include "zk/rln_prover.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "zk/groth16_prove.h"
#include "zk/witness_graph.h"

/* The circuit's input signals, in the order ld_rln_witness_t gives them. */
enum {
  IN_IDENTITY_SECRET,
  IN_USER_MESSAGE_LIMIT,
  IN_MESSAGE_ID,
  IN_PATH_ELEMENTS,
  IN_PATH_INDEX,
  IN_X,
  IN_EXTERNAL_NULLIFIER,
  IN_COUNT
};

static const struct {
  const char *name;
  size_t len;
} INPUTS[IN_COUNT] = {
    {"identitySecret", 1},
    {"userMessageLimit", 1},
    {"messageId", 1},
    {"pathElements", LD_RLN_TREE_DEPTH},
    {"identityPathIndex", LD_RLN_TREE_DEPTH},
    {"x", 1},
    {"externalNullifier", 1},
};

struct ld_rln_prover {
  ld_groth16_prover_t *groth16;
  ld_witness_graph_t *graph;
  size_t offsets[IN_COUNT];
};

static int bind_inputs(ld_rln_prover_t *p) {
  for (int i = 0; i < IN_COUNT; i++) {
    size_t len;
    if (ld_witness_graph_input(p->graph, INPUTS[i].name, &p->offsets[i], &len) != 0 ||
        len != INPUTS[i].len) {
      return LD_ERR_MALFORMED;
    }
  }
  const ld_zkey_t *zk = ld_groth16_prover_key(p->groth16);
  if (ld_witness_graph_num_wires(p->graph) != zk->num_wires ||
      zk->num_public != LD_RLN_NUM_PUBLIC) {
    return LD_ERR_MALFORMED;
  }
  return 0;
}

int ld_rln_prover_new(ld_rln_prover_t **out, const uint8_t *zkey, size_t zkey_len,
                      const uint8_t *graph, size_t graph_len) {
  *out = NULL;
  ld_rln_prover_t *p = calloc(1, sizeof *p);
  if (p == NULL) {
    return LD_ERR_NOMEM;
  }
  ld_zkey_t *zk;
  int rc = ld_zkey_read(&zk, zkey, zkey_len);
  if (rc == 0) {
    rc = ld_groth16_prover_new(&p->groth16, zk);
  }
  if (rc == 0) {
    rc = ld_witness_graph_load(&p->graph, graph, graph_len);
  }
  if (rc == 0) {
    rc = bind_inputs(p);
  }
  if (rc != 0) {
    ld_rln_prover_free(p);
    return rc;
  }
  *out = p;
  return 0;
}

static int read_file(const char *path, uint8_t **data, size_t *len) {
  *data = NULL;
  FILE *f = fopen(path, "rb");
  if (f == NULL) {
    return LD_ERR_IO;
  }
  long size = -1;
  if (fseek(f, 0, SEEK_END) == 0) {
    size = ftell(f);
  }
  int rc = LD_ERR_IO;
  if (size > 0 && fseek(f, 0, SEEK_SET) == 0) {
    *data = malloc((size_t)size);
    rc = *data == NULL ? LD_ERR_NOMEM : 0;
    if (rc == 0 && fread(*data, 1, (size_t)size, f) != (size_t)size) {
      rc = LD_ERR_IO;
    }
  }
  fclose(f);
  if (rc != 0) {
    free(*data);
    *data = NULL;
  }
  *len = size > 0 ? (size_t)size : 0;
  return rc;
}

int ld_rln_prover_new_from_files(ld_rln_prover_t **out, const char *zkey_path,
                                 const char *graph_path) {
  *out = NULL;
  uint8_t *zkey = NULL, *graph = NULL;
  size_t zkey_len = 0, graph_len = 0;
  int rc = read_file(zkey_path, &zkey, &zkey_len);
  if (rc == 0) {
    rc = read_file(graph_path, &graph, &graph_len);
  }
  if (rc == 0) {
    rc = ld_rln_prover_new(out, zkey, zkey_len, graph, graph_len);
  }
  free(zkey);
  free(graph);
  return rc;
}

void ld_rln_prover_free(ld_rln_prover_t *p) {
  if (p == NULL) {
    return;
  }
  ld_groth16_prover_free(p->groth16);
  ld_witness_graph_free(p->graph);
  free(p);
}

void ld_rln_prover_set_threads(ld_rln_prover_t *p, unsigned threads) {
  ld_groth16_prover_set_threads(p->groth16, threads);
}

size_t ld_rln_prover_num_wires(const ld_rln_prover_t *p) {
  return ld_witness_graph_num_wires(p->graph);
}

int ld_rln_witness_compute(const ld_rln_prover_t *p, const ld_rln_witness_t *w, ld_fr_t *wires) {
  if (w->message_id >= w->user_message_limit || w->merkle.depth != LD_RLN_TREE_DEPTH) {
    return LD_ERR_INVALID_ARG;
  }
  size_t n = ld_witness_graph_num_inputs(p->graph);
  ld_fr_t *in = calloc(n, sizeof *in);
  if (in == NULL) {
    return LD_ERR_NOMEM;
  }
  in[p->offsets[IN_IDENTITY_SECRET]] = w->identity_secret;
  ld_fr_from_u64(&in[p->offsets[IN_USER_MESSAGE_LIMIT]], w->user_message_limit);
  ld_fr_from_u64(&in[p->offsets[IN_MESSAGE_ID]], w->message_id);
  for (size_t l = 0; l < LD_RLN_TREE_DEPTH; l++) {
    in[p->offsets[IN_PATH_ELEMENTS] + l] = w->merkle.path[l];
    ld_fr_from_u64(&in[p->offsets[IN_PATH_INDEX] + l], w->merkle.index_bits[l] ? 1 : 0);
  }
  in[p->offsets[IN_X]] = w->x;
  in[p->offsets[IN_EXTERNAL_NULLIFIER]] = w->external_nullifier;
  int rc = ld_witness_graph_eval(p->graph, in, wires);
  explicit_bzero(in, n * sizeof *in);
  free(in);
  return rc;
}

/* The membership part of a witness: what the cached sums depend on. */
typedef struct membership {
  ld_fr_t identity_secret;
  uint64_t user_message_limit;
  ld_merkle_proof_t merkle;
} membership_t;

struct ld_rln_proving_ctx {
  const ld_rln_prover_t *p;
  ld_groth16_cache_t *cache;
  /* the membership of the last proof or prepare through the context (secret: wiped) */
  bool has_membership;
  membership_t membership;
  uint64_t prepares; /* prepares that moved the sums */
};

static void membership_of(membership_t *m, const ld_rln_witness_t *w) {
  memset(m, 0, sizeof *m);
  m->identity_secret = w->identity_secret;
  m->user_message_limit = w->user_message_limit;
  m->merkle.depth = w->merkle.depth;
  for (unsigned l = 0; l < w->merkle.depth && l < LD_MERKLE_MAX_DEPTH; l++) {
    m->merkle.path[l] = w->merkle.path[l];
    m->merkle.index_bits[l] = w->merkle.index_bits[l] ? 1 : 0;
  }
}

/* Whether `w`'s membership is the one the context's sums were last made or reused for (without
 * an early exit on the first difference). */
static bool same_membership(const ld_rln_proving_ctx_t *c, const ld_rln_witness_t *w) {
  if (!c->has_membership) {
    return false;
  }
  membership_t m;
  membership_of(&m, w);
  const uint8_t *a = (const uint8_t *)&m, *b = (const uint8_t *)&c->membership;
  uint8_t diff = 0;
  for (size_t i = 0; i < sizeof m; i++) {
    diff |= a[i] ^ b[i];
  }
  explicit_bzero(&m, sizeof m);
  return diff == 0;
}

static void note_membership(ld_rln_proving_ctx_t *c, const ld_rln_witness_t *w) {
  membership_of(&c->membership, w);
  c->has_membership = true;
}

/* Proves through `ctx`'s cache when given, else with the prover alone. */
static int prove(const ld_rln_prover_t *p, ld_rln_proving_ctx_t *ctx, const ld_rln_witness_t *w,
                 const ld_fr_t *r, const ld_fr_t *s, uint8_t proof[LD_RLN_PROOF_BYTES],
                 ld_rln_proof_values_t *values) {
  size_t n = ld_rln_prover_num_wires(p);
  ld_fr_t *wires = malloc(n * sizeof *wires);
  if (wires == NULL) {
    return LD_ERR_NOMEM;
  }
  ld_groth16_proof_t g;
  int rc = ld_rln_witness_compute(p, w, wires);
  if (rc == 0 && ctx != NULL) {
    ctx->has_membership = false; /* until the sums are known to be this membership's */
    rc = r != NULL ? ld_groth16_prove_cached_rs(ctx->cache, wires, n, r, s, &g)
                   : ld_groth16_prove_cached(ctx->cache, wires, n, &g);
    if (rc == 0) {
      note_membership(ctx, w);
    }
  } else if (rc == 0) {
    rc = r != NULL ? ld_groth16_prove_rs(p->groth16, wires, n, r, s, &g)
                   : ld_groth16_prove(p->groth16, wires, n, &g);
  }
  if (rc == 0) {
    /* wires 1..5: y, root, nullifier, x, external_nullifier */
    values->y = wires[1];
    values->root = wires[2];
    values->nullifier = wires[3];
    values->x = wires[4];
    values->external_nullifier = wires[5];
    ld_groth16_proof_encode(proof, &g);
  }
  explicit_bzero(wires, n * sizeof *wires);
  free(wires);
  return rc;
}

int ld_rln_prove(const ld_rln_prover_t *p, const ld_rln_witness_t *w,
                 uint8_t proof[LD_RLN_PROOF_BYTES], ld_rln_proof_values_t *values) {
  return prove(p, NULL, w, NULL, NULL, proof, values);
}

int ld_rln_prove_rs(const ld_rln_prover_t *p, const ld_rln_witness_t *w, const ld_fr_t *r,
                    const ld_fr_t *s, uint8_t proof[LD_RLN_PROOF_BYTES],
                    ld_rln_proof_values_t *values) {
  return prove(p, NULL, w, r, s, proof, values);
}

/* The wires that change from proof to proof of one member: those reached from the message id,
 * x and the external nullifier. */
static int varying_wires(const ld_rln_prover_t *p, uint8_t *wire_varies) {
  size_t n = ld_witness_graph_num_inputs(p->graph);
  uint8_t *in = calloc(n, 1);
  if (in == NULL) {
    return LD_ERR_NOMEM;
  }
  in[p->offsets[IN_MESSAGE_ID]] = 1;
  in[p->offsets[IN_X]] = 1;
  in[p->offsets[IN_EXTERNAL_NULLIFIER]] = 1;
  int rc = ld_witness_graph_dependents(p->graph, in, wire_varies);
  free(in);
  return rc;
}

static int ctx_new(ld_rln_proving_ctx_t **out, const ld_rln_prover_t *p, bool deferred) {
  *out = NULL;
  ld_rln_proving_ctx_t *c = calloc(1, sizeof *c);
  uint8_t *varies = malloc(ld_rln_prover_num_wires(p));
  int rc = c == NULL || varies == NULL ? LD_ERR_NOMEM : 0;
  if (rc == 0) {
    c->p = p;
    rc = varying_wires(p, varies);
  }
  if (rc == 0) {
    rc = deferred ? ld_groth16_cache_new_deferred(&c->cache, p->groth16, varies)
                  : ld_groth16_cache_new(&c->cache, p->groth16, varies);
  }
  free(varies);
  if (rc != 0) {
    ld_rln_proving_ctx_free(c);
    return rc;
  }
  *out = c;
  return 0;
}

int ld_rln_proving_ctx_new(ld_rln_proving_ctx_t **out, const ld_rln_prover_t *p) {
  return ctx_new(out, p, false);
}

int ld_rln_proving_ctx_new_deferred(ld_rln_proving_ctx_t **out, const ld_rln_prover_t *p) {
  return ctx_new(out, p, true);
}

int ld_rln_proving_ctx_build_step(ld_rln_proving_ctx_t *c, size_t max_points) {
  return ld_groth16_cache_build_step(c->cache, max_points);
}

bool ld_rln_proving_ctx_complete(const ld_rln_proving_ctx_t *c) {
  return ld_groth16_cache_complete(c->cache);
}

const ld_rln_prover_t *ld_rln_proving_ctx_prover(const ld_rln_proving_ctx_t *c) {
  return c->p;
}

void ld_rln_proving_ctx_free(ld_rln_proving_ctx_t *c) {
  if (c == NULL) {
    return;
  }
  ld_groth16_cache_free(c->cache);
  explicit_bzero(c, sizeof *c);
  free(c);
}

int ld_rln_prove_ctx(ld_rln_proving_ctx_t *c, const ld_rln_witness_t *w,
                     uint8_t proof[LD_RLN_PROOF_BYTES], ld_rln_proof_values_t *values) {
  return prove(c->p, c, w, NULL, NULL, proof, values);
}

int ld_rln_prove_ctx_rs(ld_rln_proving_ctx_t *c, const ld_rln_witness_t *w, const ld_fr_t *r,
                        const ld_fr_t *s, uint8_t proof[LD_RLN_PROOF_BYTES],
                        ld_rln_proof_values_t *values) {
  return prove(c->p, c, w, r, s, proof, values);
}

void ld_rln_proving_ctx_stats(const ld_rln_proving_ctx_t *c, size_t *fixed_wires, uint64_t *hits,
                              uint64_t *misses) {
  ld_groth16_cache_stats(c->cache, fixed_wires, hits, misses);
}

/* The membership's wires come from a witness whose message part is zero (the cache's fixed
 * wires do not depend on it); ld_groth16_cache_prepare moves the sums to them without a proof
 * (no varying wires' MSMs, no quotient) and counts no hit or miss. */
int ld_rln_proving_ctx_prepare(ld_rln_proving_ctx_t *c, const ld_rln_witness_t *w) {
  if (w->user_message_limit == 0 || w->merkle.depth != LD_RLN_TREE_DEPTH) {
    return LD_ERR_INVALID_ARG;
  }
  if (same_membership(c, w)) {
    return 0;
  }
  ld_rln_witness_t m;
  memset(&m, 0, sizeof m);
  m.identity_secret = w->identity_secret;
  m.user_message_limit = w->user_message_limit;
  m.merkle = w->merkle;
  size_t n = ld_rln_prover_num_wires(c->p);
  ld_fr_t *wires = malloc(n * sizeof *wires);
  if (wires == NULL) {
    explicit_bzero(&m, sizeof m);
    return LD_ERR_NOMEM;
  }
  c->has_membership = false; /* until the sums are known to be this membership's */
  int rc = ld_rln_witness_compute(c->p, &m, wires);
  if (rc == 0) {
    rc = ld_groth16_cache_prepare(c->cache, wires, n);
  }
  explicit_bzero(wires, n * sizeof *wires);
  free(wires);
  explicit_bzero(&m, sizeof m);
  if (rc < 0) {
    return rc;
  }
  note_membership(c, w);
  c->prepares++;
  return 1;
}

uint64_t ld_rln_proving_ctx_prepares(const ld_rln_proving_ctx_t *c) {
  return c->prepares;
}
