/* Poseidon permutation: add round constants, S-box (all elements in full rounds, the first in
 * partial rounds), multiply by the MDS matrix. */
#include "zk/poseidon.h"

#include "base/error.h"
#include "zk/poseidon_params.h"

static void sbox(ld_fr_t *x) {
  ld_fr_t x2, x4;
  ld_fr_sqr(&x2, x);
  ld_fr_sqr(&x4, &x2);
  ld_fr_mul(x, &x4, x);
}

static void mix(ld_fr_t *state, const ld_fr_t *mds, unsigned t) {
  ld_fr_t out[LD_POSEIDON_MAX_INPUTS + 1];
  for (unsigned i = 0; i < t; i++) {
    ld_fr_t acc, prod;
    ld_fr_set_zero(&acc);
    for (unsigned j = 0; j < t; j++) {
      ld_fr_mul(&prod, &mds[i * t + j], &state[j]);
      ld_fr_add(&acc, &acc, &prod);
    }
    out[i] = acc;
  }
  for (unsigned i = 0; i < t; i++) {
    state[i] = out[i];
  }
}

static void permute(ld_fr_t *state, const ld_poseidon_params_t *p) {
  unsigned rounds = p->full_rounds + p->partial_rounds;
  unsigned half = p->full_rounds / 2;
  for (unsigned r = 0; r < rounds; r++) {
    const ld_fr_t *c = &p->round_constants[r * p->t];
    for (unsigned i = 0; i < p->t; i++) {
      ld_fr_add(&state[i], &state[i], &c[i]);
    }
    if (r < half || r >= half + p->partial_rounds) {
      for (unsigned i = 0; i < p->t; i++) {
        sbox(&state[i]);
      }
    } else {
      sbox(&state[0]);
    }
    mix(state, p->mds, p->t);
  }
}

int ld_poseidon_hash(ld_fr_t *out, const ld_fr_t *in, size_t n) {
  if (n == 0 || n > LD_POSEIDON_MAX_INPUTS) {
    return LD_ERR_INVALID_ARG;
  }
  const ld_poseidon_params_t *p = &ld_poseidon_params[n - 1];
  ld_fr_t state[LD_POSEIDON_MAX_INPUTS + 1];
  ld_fr_set_zero(&state[0]);
  for (size_t i = 0; i < n; i++) {
    state[i + 1] = in[i];
  }
  permute(state, p);
  *out = state[0];
  return 0;
}

void ld_poseidon_hash2(ld_fr_t *out, const ld_fr_t *a, const ld_fr_t *b) {
  const ld_fr_t in[2] = {*a, *b};
  ld_poseidon_hash(out, in, 2);
}

void ld_poseidon_hash1(ld_fr_t *out, const ld_fr_t *a) {
  ld_poseidon_hash(out, a, 1);
}
