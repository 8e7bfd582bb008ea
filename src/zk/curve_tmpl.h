/* Internal: Jacobian-coordinate arithmetic for a short Weierstrass curve y^2 = x^3 + b, written
 * once and instantiated by curve.c for G1 (over Fp) and G2 (over Fp2). Before including, define
 *   CT_NAME(x)  the public name of operation x (ld_g1_##x)
 *   CT_F        the coordinate field type; CT_P / CT_A the Jacobian / affine point types
 *   CT_ADD, CT_SUB, CT_DBL, CT_NEG, CT_MUL, CT_SQR (r, a[, b]), CT_INV(r, a), CT_IS_ZERO(a),
 *   CT_EQUAL(a, b), CT_ONE(r), CT_ZERO(r), and CT_B (pointer to the constant b). */

void CT_NAME(set_infinity)(CT_P *r) {
  CT_ONE(&r->x);
  CT_ONE(&r->y);
  CT_ZERO(&r->z);
}

int CT_NAME(is_infinity)(const CT_P *p) {
  return CT_IS_ZERO(&p->z);
}

void CT_NAME(from_affine)(CT_P *r, const CT_A *p) {
  if (p->infinity) {
    CT_NAME(set_infinity)(r);
    return;
  }
  r->x = p->x;
  r->y = p->y;
  CT_ONE(&r->z);
}

void CT_NAME(to_affine)(CT_A *r, const CT_P *p) {
  if (CT_NAME(is_infinity)(p)) {
    CT_ZERO(&r->x);
    CT_ZERO(&r->y);
    r->infinity = 1;
    return;
  }
  CT_F zinv, zinv2, zinv3;
  CT_INV(&zinv, &p->z);
  CT_SQR(&zinv2, &zinv);
  CT_MUL(&zinv3, &zinv2, &zinv);
  CT_MUL(&r->x, &p->x, &zinv2);
  CT_MUL(&r->y, &p->y, &zinv3);
  r->infinity = 0;
}

void CT_NAME(neg)(CT_P *r, const CT_P *p) {
  r->x = p->x;
  CT_NEG(&r->y, &p->y);
  r->z = p->z;
}

/* dbl-2009-l (a = 0): 2M + 5S. */
void CT_NAME(dbl)(CT_P *r, const CT_P *p) {
  CT_F a, b, c, d, e, f, t;
  CT_SQR(&a, &p->x);
  CT_SQR(&b, &p->y);
  CT_SQR(&c, &b);
  CT_ADD(&d, &p->x, &b);
  CT_SQR(&d, &d);
  CT_SUB(&d, &d, &a);
  CT_SUB(&d, &d, &c);
  CT_DBL(&d, &d);
  CT_DBL(&e, &a);
  CT_ADD(&e, &e, &a);
  CT_SQR(&f, &e);
  CT_MUL(&t, &p->y, &p->z); /* Z3 = 2 Y Z, before Y changes */
  CT_DBL(&r->z, &t);
  CT_SUB(&r->x, &f, &d);
  CT_SUB(&r->x, &r->x, &d);
  CT_SUB(&t, &d, &r->x);
  CT_MUL(&t, &e, &t);
  CT_DBL(&c, &c);
  CT_DBL(&c, &c);
  CT_DBL(&c, &c);
  CT_SUB(&r->y, &t, &c);
}

/* add-2007-bl, with the doubling and inverse cases. */
void CT_NAME(add)(CT_P *r, const CT_P *p, const CT_P *q) {
  if (CT_NAME(is_infinity)(p)) {
    *r = *q;
    return;
  }
  if (CT_NAME(is_infinity)(q)) {
    *r = *p;
    return;
  }
  CT_F z1z1, z2z2, u1, u2, s1, s2, h, i, j, rr, v, t;
  CT_SQR(&z1z1, &p->z);
  CT_SQR(&z2z2, &q->z);
  CT_MUL(&u1, &p->x, &z2z2);
  CT_MUL(&u2, &q->x, &z1z1);
  CT_MUL(&s1, &p->y, &q->z);
  CT_MUL(&s1, &s1, &z2z2);
  CT_MUL(&s2, &q->y, &p->z);
  CT_MUL(&s2, &s2, &z1z1);
  CT_SUB(&h, &u2, &u1);
  CT_SUB(&rr, &s2, &s1);
  if (CT_IS_ZERO(&h)) {
    if (CT_IS_ZERO(&rr)) {
      CT_NAME(dbl)(r, p);
    } else {
      CT_NAME(set_infinity)(r);
    }
    return;
  }
  CT_DBL(&i, &h);
  CT_SQR(&i, &i);
  CT_MUL(&j, &h, &i);
  CT_DBL(&rr, &rr);
  CT_MUL(&v, &u1, &i);
  CT_ADD(&t, &p->z, &q->z);
  CT_SQR(&t, &t);
  CT_SUB(&t, &t, &z1z1);
  CT_SUB(&t, &t, &z2z2);
  CT_MUL(&r->z, &t, &h);
  CT_SQR(&t, &rr);
  CT_SUB(&t, &t, &j);
  CT_SUB(&t, &t, &v);
  CT_SUB(&r->x, &t, &v);
  CT_SUB(&t, &v, &r->x);
  CT_MUL(&t, &rr, &t);
  CT_MUL(&s1, &s1, &j);
  CT_DBL(&s1, &s1);
  CT_SUB(&r->y, &t, &s1);
}

/* madd-2007-bl (q affine), with the doubling and inverse cases. */
void CT_NAME(add_affine)(CT_P *r, const CT_P *p, const CT_A *q) {
  if (q->infinity) {
    *r = *p;
    return;
  }
  if (CT_NAME(is_infinity)(p)) {
    CT_NAME(from_affine)(r, q);
    return;
  }
  CT_F z1z1, u2, s2, h, hh, i, j, rr, v, t;
  CT_SQR(&z1z1, &p->z);
  CT_MUL(&u2, &q->x, &z1z1);
  CT_MUL(&s2, &q->y, &p->z);
  CT_MUL(&s2, &s2, &z1z1);
  CT_SUB(&h, &u2, &p->x);
  CT_SUB(&rr, &s2, &p->y);
  if (CT_IS_ZERO(&h)) {
    if (CT_IS_ZERO(&rr)) {
      CT_NAME(dbl)(r, p);
    } else {
      CT_NAME(set_infinity)(r);
    }
    return;
  }
  CT_SQR(&hh, &h);
  CT_DBL(&i, &hh);
  CT_DBL(&i, &i);
  CT_MUL(&j, &h, &i);
  CT_DBL(&rr, &rr);
  CT_MUL(&v, &p->x, &i);
  CT_ADD(&t, &p->z, &h);
  CT_SQR(&t, &t);
  CT_SUB(&t, &t, &z1z1);
  CT_SUB(&r->z, &t, &hh);
  CT_F y1 = p->y;
  CT_SQR(&t, &rr);
  CT_SUB(&t, &t, &j);
  CT_SUB(&t, &t, &v);
  CT_SUB(&r->x, &t, &v);
  CT_SUB(&t, &v, &r->x);
  CT_MUL(&t, &rr, &t);
  CT_MUL(&y1, &y1, &j);
  CT_DBL(&y1, &y1);
  CT_SUB(&r->y, &t, &y1);
}

int CT_NAME(equal)(const CT_P *p, const CT_P *q) {
  int pi = CT_NAME(is_infinity)(p), qi = CT_NAME(is_infinity)(q);
  if (pi || qi) {
    return pi && qi;
  }
  /* X1 Z2^2 == X2 Z1^2 and Y1 Z2^3 == Y2 Z1^3 */
  CT_F z1z1, z2z2, a, b, c, d;
  CT_SQR(&z1z1, &p->z);
  CT_SQR(&z2z2, &q->z);
  CT_MUL(&a, &p->x, &z2z2);
  CT_MUL(&b, &q->x, &z1z1);
  CT_MUL(&c, &p->y, &z2z2);
  CT_MUL(&c, &c, &q->z);
  CT_MUL(&d, &q->y, &z1z1);
  CT_MUL(&d, &d, &p->z);
  return CT_EQUAL(&a, &b) && CT_EQUAL(&c, &d);
}

/* 4-bit fixed windows from the top. */
void CT_NAME(mul_vartime)(CT_P *r, const CT_P *p, const uint64_t *k, size_t n) {
  CT_P table[16], acc;
  CT_NAME(set_infinity)(&table[0]);
  table[1] = *p;
  for (int i = 2; i < 16; i++) {
    CT_NAME(add)(&table[i], &table[i - 1], p);
  }
  CT_NAME(set_infinity)(&acc);
  for (size_t w = n * 16; w-- > 0;) {
    unsigned nib = (unsigned)(k[w / 16] >> (4 * (w % 16))) & 15;
    if (!CT_NAME(is_infinity)(&acc)) {
      for (int d = 0; d < 4; d++) {
        CT_NAME(dbl)(&acc, &acc);
      }
    }
    if (nib) {
      CT_NAME(add)(&acc, &acc, &table[nib]);
    }
  }
  *r = acc;
}

int CT_NAME(is_on_curve)(const CT_A *p) {
  if (p->infinity) {
    return 1;
  }
  CT_F lhs, rhs;
  CT_SQR(&lhs, &p->y);
  CT_SQR(&rhs, &p->x);
  CT_MUL(&rhs, &rhs, &p->x);
  CT_ADD(&rhs, &rhs, CT_B);
  return CT_EQUAL(&lhs, &rhs);
}
