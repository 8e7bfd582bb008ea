#include "p2p/tls.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>

#include "base/error.h"
#include "base/log.h"
#include "crypto/crypto.h"

#define TOPIC "tls"

/* Room reserved in the plaintext buffer for each SSL_read (one full record). */
#define TLS_READ_CHUNK (16u * 1024)
#define TLS_WHY_MAX 160
#define TLS_MAX_NAME 253

struct ld_tls_ctx {
  SSL_CTX *ssl;
  bool server;
  bool verify;
};

struct ld_tls {
  SSL *ssl;
  BIO *wbio; /* what OpenSSL wrote, to be sent */
  BIO *rbio; /* what arrived, for OpenSSL to read */
  bool server;
  bool established;
  bool failed;
  bool shut;
  char why[TLS_WHY_MAX];
};

/* The reason of the newest OpenSSL error (or `fallback`), copied; the error queue is emptied. */
static void take_reason(char *dst, size_t cap, const char *fallback) {
  unsigned long e = ERR_peek_last_error();
  if (e != 0)
    ERR_error_string_n(e, dst, cap);
  else
    snprintf(dst, cap, "%s", fallback);
  ERR_clear_error();
}

static bool is_ip_literal(const char *s) {
  uint8_t buf[16];
  return inet_pton(AF_INET, s, buf) == 1 || inet_pton(AF_INET6, s, buf) == 1;
}

/* ---- contexts ------------------------------------------------------------------------------ */

static ld_tls_ctx_t *ctx_new(bool server) {
  ld_tls_ctx_t *c = calloc(1, sizeof *c);
  if (c == NULL)
    return NULL;
  c->server = server;
  c->ssl = SSL_CTX_new(server ? TLS_server_method() : TLS_client_method());
  if (c->ssl == NULL) {
    free(c);
    ERR_clear_error();
    return NULL;
  }
  SSL_CTX_set_min_proto_version(c->ssl, TLS1_2_VERSION);
  SSL_CTX_set_options(c->ssl, SSL_OP_NO_RENEGOTIATION);
  SSL_CTX_set_mode(c->ssl, SSL_MODE_RELEASE_BUFFERS);
  SSL_CTX_set_session_cache_mode(c->ssl, SSL_SESS_CACHE_OFF);
  return c;
}

static bool readable(const char *path) {
  FILE *f = path != NULL ? fopen(path, "rb") : NULL;
  if (f == NULL)
    return false;
  fclose(f);
  return true;
}

static int load_pair(SSL_CTX *ssl, const char *cert_path, const char *key_path) {
  char why[TLS_WHY_MAX];
  if (!readable(cert_path) || !readable(key_path)) {
    LD_ERROR(TOPIC, "cannot read the certificate %s or the key %s", cert_path ? cert_path : "-",
             key_path ? key_path : "-");
    return LD_ERR_IO;
  }
  if (SSL_CTX_use_certificate_chain_file(ssl, cert_path) != 1) {
    take_reason(why, sizeof why, "no certificate");
    LD_ERROR(TOPIC, "cannot load the certificate chain %s: %s", cert_path, why);
    return LD_ERR_IO;
  }
  if (SSL_CTX_use_PrivateKey_file(ssl, key_path, SSL_FILETYPE_PEM) != 1 ||
      SSL_CTX_check_private_key(ssl) != 1) {
    take_reason(why, sizeof why, "no key");
    LD_ERROR(TOPIC, "cannot use the private key %s: %s", key_path, why);
    return LD_ERR_BAD_KEY;
  }
  return 0;
}

int ld_tls_server_ctx_new(const char *cert_chain_path, const char *key_path, ld_tls_ctx_t **out) {
  ld_tls_ctx_t *c = ctx_new(true);
  if (c == NULL)
    return LD_ERR_NOMEM;
  SSL_CTX_set_num_tickets(c->ssl, 0);
  int rc = load_pair(c->ssl, cert_chain_path, key_path);
  if (rc != 0) {
    ld_tls_ctx_free(c);
    return rc;
  }
  *out = c;
  return 0;
}

int ld_tls_client_ctx_new(bool verify, const char *ca_path, ld_tls_ctx_t **out) {
  ld_tls_ctx_t *c = ctx_new(false);
  if (c == NULL)
    return LD_ERR_NOMEM;
  c->verify = verify;
  SSL_CTX_set_verify(c->ssl, verify ? SSL_VERIFY_PEER : SSL_VERIFY_NONE, NULL);
  if (verify) {
    int ok = ca_path != NULL ? SSL_CTX_load_verify_locations(c->ssl, ca_path, NULL)
                             : SSL_CTX_set_default_verify_paths(c->ssl);
    if (ok != 1) {
      char why[TLS_WHY_MAX];
      take_reason(why, sizeof why, "unreadable");
      LD_ERROR(TOPIC, "cannot load the trust store %s: %s", ca_path ? ca_path : "(default)", why);
      ld_tls_ctx_free(c);
      return LD_ERR_IO;
    }
  }
  *out = c;
  return 0;
}

void ld_tls_ctx_free(ld_tls_ctx_t *ctx) {
  if (ctx == NULL)
    return;
  SSL_CTX_free(ctx->ssl);
  free(ctx);
}

/* ---- connections --------------------------------------------------------------------------- */

static bool set_peer_name(ld_tls_t *t, const ld_tls_ctx_t *ctx, const char *sni) {
  if (sni == NULL || sni[0] == '\0')
    return true;
  bool ip = is_ip_literal(sni);
  if (!ip && SSL_set_tlsext_host_name(t->ssl, sni) != 1)
    return false;
  if (!ctx->verify)
    return true;
  if (ip)
    return X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(t->ssl), sni) == 1;
  return SSL_set1_host(t->ssl, sni) == 1;
}

ld_tls_t *ld_tls_new(ld_tls_ctx_t *ctx, const char *sni) {
  ld_tls_t *t = calloc(1, sizeof *t);
  if (t == NULL)
    return NULL;
  t->server = ctx->server;
  t->ssl = SSL_new(ctx->ssl);
  t->rbio = BIO_new(BIO_s_mem());
  t->wbio = BIO_new(BIO_s_mem());
  if (t->ssl == NULL || t->rbio == NULL || t->wbio == NULL) {
    BIO_free(t->rbio);
    BIO_free(t->wbio);
    SSL_free(t->ssl);
    free(t);
    ERR_clear_error();
    return NULL;
  }
  BIO_set_mem_eof_return(t->rbio, -1);
  SSL_set_bio(t->ssl, t->rbio, t->wbio);
  if (t->server) {
    SSL_set_accept_state(t->ssl);
  } else {
    SSL_set_connect_state(t->ssl);
    if (!set_peer_name(t, ctx, sni)) {
      ld_tls_free(t);
      ERR_clear_error();
      return NULL;
    }
  }
  return t;
}

void ld_tls_free(ld_tls_t *t) {
  if (t == NULL)
    return;
  SSL_free(t->ssl); /* frees both BIOs */
  free(t);
}

bool ld_tls_established(const ld_tls_t *t) {
  return t->established;
}

const char *ld_tls_why(const ld_tls_t *t) {
  return t->why;
}

static int tls_fail(ld_tls_t *t, int err, const char *fallback) {
  t->failed = true;
  take_reason(t->why, sizeof t->why, fallback);
  return err;
}

/* Moves what OpenSSL wrote into `out`. */
static int drain(ld_tls_t *t, ld_buf_t *out) {
  size_t pending = BIO_ctrl_pending(t->wbio);
  if (pending == 0)
    return 0;
  if (ld_buf_reserve(out, pending) != 0)
    return LD_ERR_NOMEM;
  int n = BIO_read(t->wbio, out->data + out->len, (int)pending);
  if (n > 0)
    out->len += (size_t)n;
  return 0;
}

static int handshake_step(ld_tls_t *t) {
  int r = SSL_do_handshake(t->ssl);
  if (r == 1) {
    t->established = true;
    return 0;
  }
  int e = SSL_get_error(t->ssl, r);
  if (e == SSL_ERROR_WANT_READ || e == SSL_ERROR_WANT_WRITE)
    return 0;
  return tls_fail(t, LD_ERR_HANDSHAKE, "handshake failed");
}

int ld_tls_start(ld_tls_t *t, ld_buf_t *out) {
  if (t->server || t->failed)
    return LD_ERR_STATE;
  int rc = handshake_step(t);
  if (rc == 0)
    rc = drain(t, out);
  return rc;
}

static int read_records(ld_tls_t *t, ld_buf_t *plain) {
  for (;;) {
    if (ld_buf_reserve(plain, TLS_READ_CHUNK) != 0)
      return tls_fail(t, LD_ERR_NOMEM, "out of memory");
    size_t room = plain->cap - plain->len;
    int n = SSL_read(t->ssl, plain->data + plain->len, room > INT_MAX ? INT_MAX : (int)room);
    if (n > 0) {
      plain->len += (size_t)n;
      continue;
    }
    int e = SSL_get_error(t->ssl, n);
    if (e == SSL_ERROR_WANT_READ || e == SSL_ERROR_WANT_WRITE)
      return 0;
    if (e == SSL_ERROR_ZERO_RETURN)
      return tls_fail(t, LD_ERR_CLOSED, "close_notify");
    return tls_fail(t, LD_ERR_DECRYPT, "bad record");
  }
}

int ld_tls_read(ld_tls_t *t, const uint8_t *data, size_t len, ld_buf_t *plain, ld_buf_t *out) {
  if (t->failed)
    return LD_ERR_STATE;
  while (len > 0) {
    int chunk = len > INT_MAX ? INT_MAX : (int)len;
    if (BIO_write(t->rbio, data, chunk) != chunk)
      return tls_fail(t, LD_ERR_NOMEM, "out of memory");
    data += chunk;
    len -= (size_t)chunk;
  }
  int rc = t->established ? 0 : handshake_step(t);
  if (rc == 0 && t->established)
    rc = read_records(t, plain);
  int drc = drain(t, out); /* alerts, handshake messages, key updates */
  return rc != 0 ? rc : drc;
}

int ld_tls_write(ld_tls_t *t, const uint8_t *data, size_t len, ld_buf_t *out) {
  if (!t->established || t->failed || t->shut)
    return LD_ERR_STATE;
  if (len > 0) {
    size_t written = 0;
    if (SSL_write_ex(t->ssl, data, len, &written) != 1 || written != len)
      return tls_fail(t, LD_ERR_IO, "write failed");
  }
  return drain(t, out);
}

int ld_tls_shutdown(ld_tls_t *t, ld_buf_t *out) {
  if (!t->established || t->failed || t->shut)
    return 0;
  t->shut = true;
  SSL_shutdown(t->ssl);
  ERR_clear_error();
  return drain(t, out);
}

/* ---- self-signed certificates -------------------------------------------------------------- */

static bool valid_name(const char *name) {
  size_t n = name != NULL ? strlen(name) : 0;
  if (n == 0 || n > TLS_MAX_NAME)
    return false;
  for (size_t i = 0; i < n; i++)
    if ((uint8_t)name[i] <= 0x20 || (uint8_t)name[i] >= 0x7f || name[i] == ',')
      return false;
  return true;
}

static bool add_san(X509 *x, const char *name) {
  char conf[TLS_MAX_NAME + 8];
  snprintf(conf, sizeof conf, "%s:%s", is_ip_literal(name) ? "IP" : "DNS", name);
  X509V3_CTX v3;
  X509V3_set_ctx_nodb(&v3);
  X509V3_set_ctx(&v3, x, x, NULL, NULL, 0);
  X509_EXTENSION *ext = X509V3_EXT_conf_nid(NULL, &v3, NID_subject_alt_name, conf);
  bool ok = ext != NULL && X509_add_ext(x, ext, -1) == 1;
  X509_EXTENSION_free(ext);
  return ok;
}

static X509 *make_cert(EVP_PKEY *key, const char *name, unsigned days) {
  X509 *x = X509_new();
  uint64_t serial;
  ld_random_bytes(&serial, sizeof serial);
  bool ok = x != NULL && X509_set_version(x, 2) == 1 &&
            ASN1_INTEGER_set_int64(X509_get_serialNumber(x), (int64_t)(serial >> 2) + 1) == 1 &&
            X509_gmtime_adj(X509_getm_notBefore(x), -3600) != NULL &&
            X509_gmtime_adj(X509_getm_notAfter(x), (long)days * 86400L) != NULL &&
            X509_set_pubkey(x, key) == 1;
  X509_NAME *subject = ok ? X509_get_subject_name(x) : NULL;
  ok = ok &&
       X509_NAME_add_entry_by_txt(subject, "CN", MBSTRING_ASC, (const unsigned char *)name, -1, -1,
                                  0) == 1 &&
       X509_set_issuer_name(x, subject) == 1 && add_san(x, name) &&
       X509_sign(x, key, EVP_sha256()) > 0;
  if (!ok) {
    X509_free(x);
    return NULL;
  }
  return x;
}

static int write_pem(const char *path, mode_t mode, EVP_PKEY *key, X509 *cert) {
  int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, mode);
  FILE *f = fd >= 0 ? fdopen(fd, "wb") : NULL;
  if (f == NULL) {
    if (fd >= 0)
      close(fd);
    return LD_ERR_IO;
  }
  int ok = key != NULL ? PEM_write_PrivateKey(f, key, NULL, NULL, 0, NULL, NULL)
                       : PEM_write_X509(f, cert);
  if (fclose(f) != 0)
    ok = 0;
  return ok == 1 ? 0 : LD_ERR_IO;
}

int ld_tls_write_self_signed(const char *cert_path, const char *key_path, const char *name,
                             unsigned days) {
  if (cert_path == NULL || key_path == NULL || !valid_name(name) || days == 0 || days > 36500)
    return LD_ERR_INVALID_ARG;
  EVP_PKEY *key = EVP_EC_gen("P-256");
  X509 *cert = key != NULL ? make_cert(key, name, days) : NULL;
  int rc = cert == NULL ? LD_ERR_CRYPTO : write_pem(key_path, 0600, key, NULL);
  if (rc == 0)
    rc = write_pem(cert_path, 0644, NULL, cert);
  X509_free(cert);
  EVP_PKEY_free(key);
  ERR_clear_error();
  return rc;
}
