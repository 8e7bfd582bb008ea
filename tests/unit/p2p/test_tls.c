/* The TLS engine of /wss: a client and a server talking through memory, with a self-signed
 * certificate made at test time; close_notify, garbage instead of TLS, certificate verification
 * on and off, and the errors of loading certificates and keys. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "base/buf.h"
#include "base/error.h"
#include "p2p/tls.h"

typedef struct fixture {
  char dir[64];
  char cert[128], key[128];
  char cert2[128], key2[128];
} fixture_t;

static int setup(void **state) {
  fixture_t *f = calloc(1, sizeof *f);
  strcpy(f->dir, "/tmp/ld_tls_XXXXXX");
  assert_non_null(mkdtemp(f->dir));
  snprintf(f->cert, sizeof f->cert, "%s/cert.pem", f->dir);
  snprintf(f->key, sizeof f->key, "%s/key.pem", f->dir);
  snprintf(f->cert2, sizeof f->cert2, "%s/cert2.pem", f->dir);
  snprintf(f->key2, sizeof f->key2, "%s/key2.pem", f->dir);
  assert_int_equal(ld_tls_write_self_signed(f->cert, f->key, "localhost", 1), 0);
  assert_int_equal(ld_tls_write_self_signed(f->cert2, f->key2, "127.0.0.1", 1), 0);
  *state = f;
  return 0;
}

static int teardown(void **state) {
  fixture_t *f = *state;
  unlink(f->cert);
  unlink(f->key);
  unlink(f->cert2);
  unlink(f->key2);
  rmdir(f->dir);
  free(f);
  return 0;
}

typedef struct ends {
  ld_tls_t *c, *s;
  ld_buf_t c_plain, s_plain;
  int c_rc, s_rc;
} ends_t;

/* Shuttles bytes between the two ends until neither has anything to say. */
static void shuttle(ends_t *e, ld_buf_t *c_out, ld_buf_t *s_out) {
  for (int round = 0; round < 20 && (c_out->len > 0 || s_out->len > 0); round++) {
    ld_buf_t to_s = *c_out, to_c = *s_out;
    ld_buf_init(c_out);
    ld_buf_init(s_out);
    if (to_s.len > 0 && e->s_rc == 0)
      e->s_rc = ld_tls_read(e->s, to_s.data, to_s.len, &e->s_plain, s_out);
    if (to_c.len > 0 && e->c_rc == 0)
      e->c_rc = ld_tls_read(e->c, to_c.data, to_c.len, &e->c_plain, c_out);
    ld_buf_clear(&to_s);
    ld_buf_clear(&to_c);
  }
}

static void ends_handshake(ends_t *e, ld_tls_ctx_t *cctx, ld_tls_ctx_t *sctx, const char *sni) {
  memset(e, 0, sizeof *e);
  e->c = ld_tls_new(cctx, sni);
  e->s = ld_tls_new(sctx, NULL);
  assert_non_null(e->c);
  assert_non_null(e->s);
  ld_buf_t c_out, s_out;
  ld_buf_init(&c_out);
  ld_buf_init(&s_out);
  assert_int_equal(ld_tls_start(e->c, &c_out), 0);
  assert_true(c_out.len > 0);
  assert_int_equal(ld_tls_start(e->s, &s_out), LD_ERR_STATE);
  shuttle(e, &c_out, &s_out);
  ld_buf_clear(&c_out);
  ld_buf_clear(&s_out);
}

static void ends_free(ends_t *e) {
  ld_tls_free(e->c);
  ld_tls_free(e->s);
  ld_buf_clear(&e->c_plain);
  ld_buf_clear(&e->s_plain);
}

static void handshake_data_and_close_notify(void **state) {
  fixture_t *f = *state;
  ld_tls_ctx_t *sctx, *cctx;
  assert_int_equal(ld_tls_server_ctx_new(f->cert, f->key, &sctx), 0);
  assert_int_equal(ld_tls_client_ctx_new(false, NULL, &cctx), 0);
  ends_t e;
  ends_handshake(&e, cctx, sctx, "example.org"); /* any name: not verifying */
  assert_int_equal(e.c_rc, 0);
  assert_int_equal(e.s_rc, 0);
  assert_true(ld_tls_established(e.c));
  assert_true(ld_tls_established(e.s));
  /* 300 KiB each way, fed back in odd pieces */
  size_t n = 300 * 1024 + 3;
  uint8_t *data = malloc(n);
  for (size_t i = 0; i < n; i++)
    data[i] = (uint8_t)(i * 7 + 1);
  ld_buf_t wire, out;
  ld_buf_init(&wire);
  ld_buf_init(&out);
  assert_int_equal(ld_tls_write(e.c, data, n, &wire), 0);
  assert_true(wire.len > n);
  for (size_t off = 0; off < wire.len; off += 999) {
    size_t k = wire.len - off < 999 ? wire.len - off : 999;
    assert_int_equal(ld_tls_read(e.s, wire.data + off, k, &e.s_plain, &out), 0);
  }
  assert_int_equal(e.s_plain.len, n);
  assert_memory_equal(e.s_plain.data, data, n);
  ld_buf_reset(&wire);
  assert_int_equal(ld_tls_write(e.s, data, n, &wire), 0);
  assert_int_equal(ld_tls_read(e.c, wire.data, wire.len, &e.c_plain, &out), 0);
  assert_int_equal(e.c_plain.len, n);
  assert_memory_equal(e.c_plain.data, data, n);
  /* the server says goodbye */
  ld_buf_reset(&wire);
  assert_int_equal(ld_tls_shutdown(e.s, &wire), 0);
  assert_true(wire.len > 0);
  assert_int_equal(ld_tls_write(e.s, data, 1, &wire), LD_ERR_STATE);
  assert_int_equal(ld_tls_read(e.c, wire.data, wire.len, &e.c_plain, &out), LD_ERR_CLOSED);
  assert_int_equal(ld_tls_read(e.c, wire.data, 1, &e.c_plain, &out), LD_ERR_STATE);
  free(data);
  ld_buf_clear(&wire);
  ld_buf_clear(&out);
  ends_free(&e);
  ld_tls_ctx_free(sctx);
  ld_tls_ctx_free(cctx);
}

static void garbage_fails_the_handshake(void **state) {
  fixture_t *f = *state;
  ld_tls_ctx_t *sctx;
  assert_int_equal(ld_tls_server_ctx_new(f->cert, f->key, &sctx), 0);
  static const struct {
    const char *bytes;
    size_t len;
  } garbage[] = {
      {"GET / HTTP/1.1\r\nHost: x\r\n\r\n", 27},
      {"\x13/multistream/1.0.0\n", 20},
      /* a handshake record holding a one-byte ClientHello */
      {"\x16\x03\x01\x00\x05\x01\x00\x00\x01\x00", 10},
  };
  for (size_t i = 0; i < sizeof garbage / sizeof garbage[0]; i++) {
    ld_tls_t *s = ld_tls_new(sctx, NULL);
    ld_buf_t plain, out;
    ld_buf_init(&plain);
    ld_buf_init(&out);
    int rc = ld_tls_read(s, (const uint8_t *)garbage[i].bytes, garbage[i].len, &plain, &out);
    assert_int_equal(rc, LD_ERR_HANDSHAKE);
    assert_true(strlen(ld_tls_why(s)) > 0);
    assert_int_equal(plain.len, 0);
    assert_false(ld_tls_established(s));
    ld_tls_free(s);
    ld_buf_clear(&plain);
    ld_buf_clear(&out);
  }
  ld_tls_ctx_free(sctx);
}

static void records_that_do_not_authenticate(void **state) {
  fixture_t *f = *state;
  ld_tls_ctx_t *sctx, *cctx;
  assert_int_equal(ld_tls_server_ctx_new(f->cert, f->key, &sctx), 0);
  assert_int_equal(ld_tls_client_ctx_new(false, NULL, &cctx), 0);
  ends_t e;
  ends_handshake(&e, cctx, sctx, NULL);
  assert_true(ld_tls_established(e.s));
  ld_buf_t wire, out;
  ld_buf_init(&wire);
  ld_buf_init(&out);
  assert_int_equal(ld_tls_write(e.c, (const uint8_t *)"hello", 5, &wire), 0);
  wire.data[wire.len - 1] ^= 1;
  assert_int_equal(ld_tls_read(e.s, wire.data, wire.len, &e.s_plain, &out), LD_ERR_DECRYPT);
  assert_int_equal(e.s_plain.len, 0);
  ld_buf_clear(&wire);
  ld_buf_clear(&out);
  ends_free(&e);
  ld_tls_ctx_free(sctx);
  ld_tls_ctx_free(cctx);
}

static void verification_checks_chain_and_name(void **state) {
  fixture_t *f = *state;
  ld_tls_ctx_t *sctx, *sctx_ip, *trusting, *system;
  assert_int_equal(ld_tls_server_ctx_new(f->cert, f->key, &sctx), 0);
  assert_int_equal(ld_tls_server_ctx_new(f->cert2, f->key2, &sctx_ip), 0);
  assert_int_equal(ld_tls_client_ctx_new(true, f->cert, &trusting), 0);
  assert_int_equal(ld_tls_client_ctx_new(true, f->cert2, &system), 0);
  ends_t e;
  ends_handshake(&e, trusting, sctx, "localhost");
  assert_int_equal(e.c_rc, 0);
  assert_true(ld_tls_established(e.c));
  ends_free(&e);
  ends_handshake(&e, trusting, sctx, "other.example");
  assert_int_equal(e.c_rc, LD_ERR_HANDSHAKE);
  assert_false(ld_tls_established(e.c));
  ends_free(&e);
  /* a certificate the client does not trust */
  ends_handshake(&e, system, sctx, "localhost");
  assert_int_equal(e.c_rc, LD_ERR_HANDSHAKE);
  ends_free(&e);
  /* an IP address as the name */
  ends_handshake(&e, system, sctx_ip, "127.0.0.1");
  assert_int_equal(e.c_rc, 0);
  assert_true(ld_tls_established(e.c));
  ends_free(&e);
  ld_tls_ctx_free(sctx);
  ld_tls_ctx_free(sctx_ip);
  ld_tls_ctx_free(trusting);
  ld_tls_ctx_free(system);
}

static void loading_errors_are_named(void **state) {
  fixture_t *f = *state;
  ld_tls_ctx_t *ctx = NULL;
  assert_int_equal(ld_tls_server_ctx_new("/nonexistent.pem", f->key, &ctx), LD_ERR_IO);
  assert_int_equal(ld_tls_server_ctx_new(f->cert, "/nonexistent.pem", &ctx), LD_ERR_IO);
  assert_int_equal(ld_tls_server_ctx_new(f->cert, f->key2, &ctx), LD_ERR_BAD_KEY); /* mismatch */
  assert_int_equal(ld_tls_server_ctx_new(f->key, f->key, &ctx), LD_ERR_IO);        /* not a cert */
  assert_int_equal(ld_tls_server_ctx_new(f->cert, f->cert, &ctx), LD_ERR_BAD_KEY); /* not a key */
  assert_null(ctx);
  assert_int_equal(ld_tls_client_ctx_new(true, "/nonexistent.pem", &ctx), LD_ERR_IO);
  assert_int_equal(ld_tls_write_self_signed(f->cert, f->key, "a,b", 1), LD_ERR_INVALID_ARG);
  assert_int_equal(
      ld_tls_write_self_signed("/nonexistent/dir/c.pem", "/nonexistent/dir/k.pem", "localhost", 1),
      LD_ERR_IO);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(handshake_data_and_close_notify),
      cmocka_unit_test(garbage_fails_the_handshake),
      cmocka_unit_test(records_that_do_not_authenticate),
      cmocka_unit_test(verification_checks_chain_and_name),
      cmocka_unit_test(loading_errors_are_named),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
