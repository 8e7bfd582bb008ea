/* snarkjs' zkey reader (Groth16, BN254). */
#include "zk/zkey.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/cursor.h"
#include "base/error.h"

#define ZKEY_MAX_SECTION 10
#define ZKEY_MAX_WIRES (1u << 24)
#define ZKEY_MAX_DOMAIN_LOG2 24

enum {
  SEC_HEADER = 1,
  SEC_GROTH16 = 2,
  SEC_IC = 3,
  SEC_COEFS = 4,
  SEC_A = 5,
  SEC_B1 = 6,
  SEC_B2 = 7,
  SEC_C = 8,
  SEC_H = 9,
};

typedef struct section {
  const uint8_t *body;
  uint64_t size;
  int present;
} section_t;

static uint32_t rd32(const uint8_t *b) {
  return (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 | (uint32_t)b[3] << 24;
}

static uint64_t rd64(const uint8_t *b) {
  return (uint64_t)rd32(b) | (uint64_t)rd32(b + 4) << 32;
}

static void rd_limbs(uint64_t out[4], const uint8_t *b) {
  for (int i = 0; i < 4; i++) {
    out[i] = rd64(b + 8 * i);
  }
}

static int limbs_below(const uint64_t a[4], const uint64_t m[4]) {
  for (int i = 3; i >= 0; i--) {
    if (a[i] != m[i]) {
      return a[i] < m[i];
    }
  }
  return 0;
}

static const uint64_t P_LIMBS[4] = LD_BN254_P_LIMBS;
static const uint64_t R_LIMBS[4] = LD_BN254_R_LIMBS;

/* A coordinate in Montgomery form is already our internal representation. */
static int rd_fp(ld_fp_t *r, const uint8_t *b) {
  rd_limbs(r->l, b);
  return limbs_below(r->l, P_LIMBS) ? 0 : LD_ERR_OVERFLOW;
}

static int rd_g1(ld_g1_affine_t *r, const uint8_t *b) {
  int rc = rd_fp(&r->x, b);
  if (rc == 0) {
    rc = rd_fp(&r->y, b + 32);
  }
  if (rc != 0) {
    return rc;
  }
  r->infinity = ld_fp_is_zero(&r->x) && ld_fp_is_zero(&r->y);
  return r->infinity || ld_g1_is_on_curve(r) ? 0 : LD_ERR_BAD_POINT;
}

static int rd_g2(ld_g2_affine_t *r, const uint8_t *b) {
  int rc = 0;
  ld_fp_t *coords[4] = {&r->x.c0, &r->x.c1, &r->y.c0, &r->y.c1};
  for (int i = 0; i < 4 && rc == 0; i++) {
    rc = rd_fp(coords[i], b + 32 * i);
  }
  if (rc != 0) {
    return rc;
  }
  r->infinity = ld_fp2_is_zero(&r->x) && ld_fp2_is_zero(&r->y);
  return r->infinity || ld_g2_is_on_curve(r) ? 0 : LD_ERR_BAD_POINT;
}

static int read_sections(section_t sec[ZKEY_MAX_SECTION + 1], const uint8_t *data, size_t len) {
  ld_cursor_t c;
  ld_cursor_init(&c, data, len);
  const uint8_t *head;
  if (ld_cursor_bytes(&c, 12, &head) != 0 || memcmp(head, "zkey", 4) != 0 || rd32(head + 4) != 1) {
    return LD_ERR_MALFORMED;
  }
  uint32_t count = rd32(head + 8);
  for (uint32_t i = 0; i < count; i++) {
    const uint8_t *sh;
    if (ld_cursor_bytes(&c, 12, &sh) != 0) {
      return LD_ERR_MALFORMED;
    }
    uint32_t type = rd32(sh);
    uint64_t size = rd64(sh + 4);
    const uint8_t *body;
    if (size > ld_cursor_remaining(&c) || ld_cursor_bytes(&c, (size_t)size, &body) != 0) {
      return LD_ERR_MALFORMED;
    }
    if (type >= 1 && type <= ZKEY_MAX_SECTION) {
      if (sec[type].present) {
        return LD_ERR_MALFORMED;
      }
      sec[type] = (section_t){body, size, 1};
    }
  }
  for (int t = SEC_HEADER; t <= SEC_H; t++) {
    if (!sec[t].present) {
      return LD_ERR_MALFORMED;
    }
  }
  if (sec[SEC_HEADER].size != 4 || rd32(sec[SEC_HEADER].body) != 1) {
    return LD_ERR_MALFORMED; /* not Groth16 */
  }
  return 0;
}

static int read_modulus(ld_cursor_t *c, const uint64_t expect[4]) {
  const uint8_t *b;
  uint64_t m[4];
  if (ld_cursor_bytes(c, 4, &b) != 0 || rd32(b) != 32 || ld_cursor_bytes(c, 32, &b) != 0) {
    return LD_ERR_MALFORMED;
  }
  rd_limbs(m, b);
  return memcmp(m, expect, sizeof m) == 0 ? 0 : LD_ERR_MALFORMED;
}

static int read_groth16_header(ld_zkey_t *zk, const section_t *s) {
  ld_cursor_t c;
  ld_cursor_init(&c, s->body, (size_t)s->size);
  const uint8_t *b;
  if (read_modulus(&c, P_LIMBS) != 0 || read_modulus(&c, R_LIMBS) != 0 ||
      ld_cursor_bytes(&c, 12 + 3 * 64 + 3 * 128, &b) != 0 || !ld_cursor_empty(&c)) {
    return LD_ERR_MALFORMED;
  }
  zk->num_wires = rd32(b);
  zk->num_public = rd32(b + 4);
  zk->domain_size = rd32(b + 8);
  if (zk->num_wires > ZKEY_MAX_WIRES || zk->domain_size > (1u << ZKEY_MAX_DOMAIN_LOG2)) {
    return LD_ERR_TOO_LARGE;
  }
  if (zk->num_public + 1 > zk->num_wires || zk->domain_size == 0 ||
      (zk->domain_size & (zk->domain_size - 1)) != 0) {
    return LD_ERR_MALFORMED;
  }
  zk->domain_log2 = 0;
  while ((1u << zk->domain_log2) < zk->domain_size) {
    zk->domain_log2++;
  }
  b += 12;
  int rc = rd_g1(&zk->alpha1, b);
  if (rc == 0) {
    rc = rd_g1(&zk->beta1, b + 64);
  }
  if (rc == 0) {
    rc = rd_g2(&zk->beta2, b + 128);
  }
  if (rc == 0) {
    rc = rd_g2(&zk->gamma2, b + 256);
  }
  if (rc == 0) {
    rc = rd_g1(&zk->delta1, b + 384);
  }
  if (rc == 0) {
    rc = rd_g2(&zk->delta2, b + 448);
  }
  return rc;
}

static int read_g1_section(ld_g1_affine_t **out, const section_t *s, size_t n) {
  if (s->size != (uint64_t)n * 64) {
    return LD_ERR_MALFORMED;
  }
  *out = malloc((n ? n : 1) * sizeof **out);
  if (*out == NULL) {
    return LD_ERR_NOMEM;
  }
  for (size_t i = 0; i < n; i++) {
    int rc = rd_g1(&(*out)[i], s->body + 64 * i);
    if (rc != 0) {
      return rc;
    }
  }
  return 0;
}

static int read_g2_section(ld_g2_affine_t **out, const section_t *s, size_t n) {
  if (s->size != (uint64_t)n * 128) {
    return LD_ERR_MALFORMED;
  }
  *out = malloc((n ? n : 1) * sizeof **out);
  if (*out == NULL) {
    return LD_ERR_NOMEM;
  }
  for (size_t i = 0; i < n; i++) {
    int rc = rd_g2(&(*out)[i], s->body + 128 * i);
    if (rc != 0) {
      return rc;
    }
  }
  return 0;
}

/* The stored c·R^2 (R = 2^256), read as a Montgomery representation, is c·R; one Montgomery
 * multiplication by the plain 1 brings it to c's representation. */
static int rd_coef_value(ld_fr_t *r, const uint8_t *b) {
  ld_fr_t stored, plain_one = {{1, 0, 0, 0}};
  rd_limbs(stored.l, b);
  if (!limbs_below(stored.l, R_LIMBS)) {
    return LD_ERR_OVERFLOW;
  }
  ld_fr_mul(r, &stored, &plain_one);
  return 0;
}

static int read_coefs(ld_zkey_t *zk, const section_t *s) {
  if (s->size < 4) {
    return LD_ERR_MALFORMED;
  }
  uint32_t n = rd32(s->body);
  if (s->size != 4 + (uint64_t)n * 44) {
    return LD_ERR_MALFORMED;
  }
  zk->coefs_a = malloc((n ? n : 1) * sizeof *zk->coefs_a);
  zk->coefs_b = malloc((n ? n : 1) * sizeof *zk->coefs_b);
  if (zk->coefs_a == NULL || zk->coefs_b == NULL) {
    return LD_ERR_NOMEM;
  }
  for (uint32_t i = 0; i < n; i++) {
    const uint8_t *e = s->body + 4 + 44 * (size_t)i;
    uint32_t matrix = rd32(e);
    ld_zkey_coef_t coef = {.constraint = rd32(e + 4), .wire = rd32(e + 8)};
    if (matrix > 1 || coef.constraint >= zk->domain_size || coef.wire >= zk->num_wires) {
      return LD_ERR_MALFORMED;
    }
    int rc = rd_coef_value(&coef.value, e + 12);
    if (rc != 0) {
      return rc;
    }
    if (matrix == 0) {
      zk->coefs_a[zk->num_coefs_a++] = coef;
    } else {
      zk->coefs_b[zk->num_coefs_b++] = coef;
    }
  }
  return 0;
}

static int parse(ld_zkey_t *zk, const uint8_t *data, size_t len) {
  section_t sec[ZKEY_MAX_SECTION + 1] = {{0}};
  int rc = read_sections(sec, data, len);
  if (rc == 0) {
    rc = read_groth16_header(zk, &sec[SEC_GROTH16]);
  }
  if (rc == 0) {
    rc = read_g1_section(&zk->ic, &sec[SEC_IC], zk->num_public + 1);
  }
  if (rc == 0) {
    rc = read_coefs(zk, &sec[SEC_COEFS]);
  }
  if (rc == 0) {
    rc = read_g1_section(&zk->a, &sec[SEC_A], zk->num_wires);
  }
  if (rc == 0) {
    rc = read_g1_section(&zk->b1, &sec[SEC_B1], zk->num_wires);
  }
  if (rc == 0) {
    rc = read_g2_section(&zk->b2, &sec[SEC_B2], zk->num_wires);
  }
  if (rc == 0) {
    rc = read_g1_section(&zk->c, &sec[SEC_C], zk->num_wires - zk->num_public - 1);
  }
  if (rc == 0) {
    rc = read_g1_section(&zk->h, &sec[SEC_H], zk->domain_size);
  }
  return rc;
}

int ld_zkey_read(ld_zkey_t **out, const uint8_t *data, size_t len) {
  *out = NULL;
  ld_zkey_t *zk = calloc(1, sizeof *zk);
  if (zk == NULL) {
    return LD_ERR_NOMEM;
  }
  int rc = parse(zk, data, len);
  if (rc != 0) {
    ld_zkey_free(zk);
    return rc;
  }
  *out = zk;
  return 0;
}

int ld_zkey_read_file(ld_zkey_t **out, const char *path) {
  *out = NULL;
  FILE *f = fopen(path, "rb");
  if (f == NULL) {
    return LD_ERR_IO;
  }
  uint8_t *buf = NULL;
  long size = -1;
  if (fseek(f, 0, SEEK_END) == 0) {
    size = ftell(f);
  }
  int rc = LD_ERR_IO;
  if (size > 0 && fseek(f, 0, SEEK_SET) == 0) {
    buf = malloc((size_t)size);
    rc = buf == NULL ? LD_ERR_NOMEM : 0;
    if (rc == 0 && fread(buf, 1, (size_t)size, f) != (size_t)size) {
      rc = LD_ERR_IO;
    }
  }
  fclose(f);
  if (rc == 0) {
    rc = ld_zkey_read(out, buf, (size_t)size);
  }
  free(buf);
  return rc;
}

void ld_zkey_free(ld_zkey_t *zk) {
  if (zk == NULL) {
    return;
  }
  free(zk->ic);
  free(zk->coefs_a);
  free(zk->coefs_b);
  free(zk->a);
  free(zk->b1);
  free(zk->b2);
  free(zk->c);
  free(zk->h);
  free(zk);
}
