/* Radix-2 number-theoretic transforms over Fr on a domain of 2^k points (k <= 28, Fr's
 * two-adicity): the domain's points are w^i for the primitive 2^k-th root of unity w =
 * g^((r-1)/2^k), g = 5 (the root arkworks and snarkjs use, so that evaluations line up with their
 * proving keys). The coset is the domain shifted by a primitive 2^(k+1)-th root of unity ("odd"
 * points), where snarkjs and arkworks-circom evaluate the quotient polynomial. A domain is
 * immutable once built. */
#ifndef LD_ZK_FFT_H
#define LD_ZK_FFT_H

#include <stddef.h>

#include "zk/field.h"

#define LD_FR_TWO_ADICITY 28

typedef struct ld_fr_domain ld_fr_domain_t;

/* 0, LD_ERR_INVALID_ARG for log2 outside 1..LD_FR_TWO_ADICITY - 1, LD_ERR_NOMEM. */
int ld_fr_domain_new(ld_fr_domain_t **out, unsigned log2);
void ld_fr_domain_free(ld_fr_domain_t *d);
size_t ld_fr_domain_size(const ld_fr_domain_t *d);
/* The domain's generator w. */
void ld_fr_domain_generator(const ld_fr_domain_t *d, ld_fr_t *w);
/* The primitive 2^LD_FR_TWO_ADICITY-th root of unity 5^((r-1)/2^28). */
void ld_fr_two_adic_root(ld_fr_t *out);

/* In place, a has ld_fr_domain_size elements. fft: coefficients -> evaluations at w^0..w^(n-1);
 * ifft: the inverse. coset_fft: coefficients -> evaluations at g w^i with g the coset shift;
 * coset_ifft: its inverse. */
void ld_fr_fft(const ld_fr_domain_t *d, ld_fr_t *a);
void ld_fr_ifft(const ld_fr_domain_t *d, ld_fr_t *a);
void ld_fr_coset_fft(const ld_fr_domain_t *d, ld_fr_t *a);
void ld_fr_coset_ifft(const ld_fr_domain_t *d, ld_fr_t *a);

#endif
