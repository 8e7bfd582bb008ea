#include "p2p/noise.h"

#include <stdlib.h>
#include <string.h>

#include "base/cursor.h"
#include "base/error.h"
#include "crypto/crypto.h"
#include "noise.pb-c.h"
#include "p2p/noise_internal.h"

#define SIG_PREFIX "noise-libp2p-static-key:"
#define SIG_PREFIX_LEN 24
#define SIG_MSG_LEN (SIG_PREFIX_LEN + LD_NOISE_DH_LEN)

_Static_assert(sizeof LD_NOISE_PROTOCOL_NAME - 1 == LD_NOISE_HASH_LEN,
               "the protocol name is used as h verbatim");
_Static_assert(sizeof SIG_PREFIX - 1 == SIG_PREFIX_LEN, "signature prefix length");

static const uint8_t empty[1] = {0};

static void wipe(void *p, size_t len) {
  explicit_bzero(p, len);
}

/* ---- CipherState ----------------------------------------------------------------------------- */

int ld_noise_cipher_encrypt(ld_noise_cipher_t *c, const uint8_t *ad, size_t adlen,
                            const uint8_t *pt, size_t len, uint8_t *out) {
  if (!c->has_key)
    return LD_ERR_STATE;
  if (c->n == LD_NOISE_NONCE_MAX)
    return LD_ERR_LIMIT;
  ld_chachapoly_encrypt(c->k, c->n, ad, adlen, pt, len, out);
  c->n++;
  return 0;
}

int ld_noise_cipher_decrypt(ld_noise_cipher_t *c, const uint8_t *ad, size_t adlen,
                            const uint8_t *ct, size_t len, uint8_t *out) {
  if (!c->has_key)
    return LD_ERR_STATE;
  if (c->n == LD_NOISE_NONCE_MAX)
    return LD_ERR_LIMIT;
  if (len < LD_NOISE_TAG_LEN || ld_chachapoly_decrypt(c->k, c->n, ad, adlen, ct, len, out) != 0)
    return LD_ERR_DECRYPT;
  c->n++;
  return 0;
}

static void cipher_set(ld_noise_cipher_t *c, const uint8_t k[LD_NOISE_KEY_LEN]) {
  memcpy(c->k, k, LD_NOISE_KEY_LEN);
  c->n = 0;
  c->has_key = true;
}

/* ---- SymmetricState -------------------------------------------------------------------------- */

void ld_noise_symmetric_init(ld_noise_symmetric_t *s, const uint8_t *prologue, size_t len) {
  memcpy(s->h, LD_NOISE_PROTOCOL_NAME, LD_NOISE_HASH_LEN);
  memcpy(s->ck, s->h, LD_NOISE_HASH_LEN);
  memset(&s->cs, 0, sizeof s->cs);
  ld_noise_mix_hash(s, prologue, len);
}

void ld_noise_mix_hash(ld_noise_symmetric_t *s, const uint8_t *data, size_t len) {
  uint8_t h[LD_NOISE_HASH_LEN];
  ld_sha256_2(s->h, LD_NOISE_HASH_LEN, len > 0 ? data : empty, len, h);
  memcpy(s->h, h, LD_NOISE_HASH_LEN);
}

void ld_noise_hkdf(const uint8_t ck[LD_NOISE_HASH_LEN], const uint8_t *ikm, size_t len,
                   uint8_t out1[LD_NOISE_HASH_LEN], uint8_t out2[LD_NOISE_HASH_LEN]) {
  uint8_t t[LD_NOISE_HASH_LEN], o1[LD_NOISE_HASH_LEN + 1], o2[LD_NOISE_HASH_LEN];
  const uint8_t one = 0x01;
  ld_hmac_sha256(ck, LD_NOISE_HASH_LEN, len > 0 ? ikm : empty, len, t);
  ld_hmac_sha256(t, sizeof t, &one, 1, o1);
  o1[LD_NOISE_HASH_LEN] = 0x02;
  ld_hmac_sha256(t, sizeof t, o1, sizeof o1, o2);
  memcpy(out1, o1, LD_NOISE_HASH_LEN);
  memcpy(out2, o2, LD_NOISE_HASH_LEN);
  wipe(t, sizeof t);
  wipe(o1, sizeof o1);
  wipe(o2, sizeof o2);
}

void ld_noise_mix_key(ld_noise_symmetric_t *s, const uint8_t *ikm, size_t len) {
  uint8_t k[LD_NOISE_KEY_LEN];
  ld_noise_hkdf(s->ck, ikm, len, s->ck, k);
  cipher_set(&s->cs, k);
  wipe(k, sizeof k);
}

int ld_noise_encrypt_and_hash(ld_noise_symmetric_t *s, const uint8_t *pt, size_t len, uint8_t *out,
                              size_t *outlen) {
  if (s->cs.has_key) {
    int rc = ld_noise_cipher_encrypt(&s->cs, s->h, LD_NOISE_HASH_LEN, pt, len, out);
    if (rc != 0)
      return rc;
    *outlen = len + LD_NOISE_TAG_LEN;
  } else {
    if (len > 0)
      memmove(out, pt, len);
    *outlen = len;
  }
  ld_noise_mix_hash(s, out, *outlen);
  return 0;
}

int ld_noise_decrypt_and_hash(ld_noise_symmetric_t *s, const uint8_t *ct, size_t len, uint8_t *out,
                              size_t *outlen) {
  if (s->cs.has_key) {
    int rc = ld_noise_cipher_decrypt(&s->cs, s->h, LD_NOISE_HASH_LEN, ct, len, out);
    if (rc != 0)
      return rc;
    *outlen = len - LD_NOISE_TAG_LEN;
  } else {
    if (len > 0)
      memcpy(out, ct, len);
    *outlen = len;
  }
  ld_noise_mix_hash(s, ct, len);
  return 0;
}

void ld_noise_split(const ld_noise_symmetric_t *s, ld_noise_cipher_t *c1, ld_noise_cipher_t *c2) {
  uint8_t k1[LD_NOISE_KEY_LEN], k2[LD_NOISE_KEY_LEN];
  ld_noise_hkdf(s->ck, NULL, 0, k1, k2);
  cipher_set(c1, k1);
  cipher_set(c2, k2);
  wipe(k1, sizeof k1);
  wipe(k2, sizeof k2);
}

/* ---- XX HandshakeState ----------------------------------------------------------------------- */

static void keypair(uint8_t priv[LD_NOISE_DH_LEN], uint8_t pub[LD_NOISE_DH_LEN],
                    const uint8_t *given) {
  if (given != NULL) {
    memcpy(priv, given, LD_NOISE_DH_LEN);
    ld_x25519_public(pub, priv);
  } else {
    ld_x25519_keypair(pub, priv);
  }
}

void ld_noise_hs_init(ld_noise_hs_t *hs, bool initiator, const uint8_t *prologue,
                      size_t prologue_len, const uint8_t *s_priv, const uint8_t *e_priv) {
  memset(hs, 0, sizeof *hs);
  hs->initiator = initiator;
  ld_noise_symmetric_init(&hs->sym, prologue, prologue_len);
  keypair(hs->s_priv, hs->s_pub, s_priv);
  keypair(hs->e_priv, hs->e_pub, e_priv);
}

void ld_noise_hs_wipe(ld_noise_hs_t *hs) {
  wipe(hs, sizeof *hs);
}

size_t ld_noise_msg1_len(size_t payload_len) {
  return LD_NOISE_DH_LEN + payload_len;
}

size_t ld_noise_msg2_len(size_t payload_len) {
  return LD_NOISE_MSG2_MIN + payload_len;
}

size_t ld_noise_msg3_len(size_t payload_len) {
  return LD_NOISE_MSG3_MIN + payload_len;
}

static int mix_dh(ld_noise_symmetric_t *s, const uint8_t priv[LD_NOISE_DH_LEN],
                  const uint8_t pub[LD_NOISE_DH_LEN]) {
  uint8_t shared[LD_NOISE_DH_LEN];
  int rc = ld_x25519(shared, priv, pub);
  if (rc == 0)
    ld_noise_mix_key(s, shared, sizeof shared);
  wipe(shared, sizeof shared);
  return rc == 0 ? 0 : LD_ERR_HANDSHAKE;
}

/* Reserves the whole message up front so that the writers below cannot fail half-way on memory. */
static int reserve_msg(ld_buf_t *out, size_t payload_len, size_t msg_len) {
  if (payload_len > LD_NOISE_MAX_FRAME)
    return LD_ERR_TOO_LARGE;
  return ld_buf_reserve(out, msg_len);
}

int ld_noise_hs_write_msg1(ld_noise_hs_t *hs, const uint8_t *payload, size_t len, ld_buf_t *out) {
  int rc = reserve_msg(out, len, ld_noise_msg1_len(len));
  if (rc != 0)
    return rc;
  uint8_t *p = out->data + out->len;
  size_t n = 0;
  memcpy(p, hs->e_pub, LD_NOISE_DH_LEN);
  ld_noise_mix_hash(&hs->sym, hs->e_pub, LD_NOISE_DH_LEN);
  rc = ld_noise_encrypt_and_hash(&hs->sym, payload, len, p + LD_NOISE_DH_LEN, &n);
  if (rc == 0)
    out->len += LD_NOISE_DH_LEN + n;
  return rc;
}

int ld_noise_hs_write_msg2(ld_noise_hs_t *hs, const uint8_t *payload, size_t len, ld_buf_t *out) {
  int rc = reserve_msg(out, len, ld_noise_msg2_len(len));
  if (rc != 0)
    return rc;
  uint8_t *p = out->data + out->len;
  size_t ns = 0, np = 0;
  memcpy(p, hs->e_pub, LD_NOISE_DH_LEN);
  ld_noise_mix_hash(&hs->sym, hs->e_pub, LD_NOISE_DH_LEN);
  if ((rc = mix_dh(&hs->sym, hs->e_priv, hs->re)) != 0 ||
      (rc = ld_noise_encrypt_and_hash(&hs->sym, hs->s_pub, LD_NOISE_DH_LEN, p + LD_NOISE_DH_LEN,
                                      &ns)) != 0 ||
      (rc = mix_dh(&hs->sym, hs->s_priv, hs->re)) != 0 ||
      (rc = ld_noise_encrypt_and_hash(&hs->sym, payload, len, p + LD_NOISE_DH_LEN + ns, &np)) != 0)
    return rc;
  out->len += LD_NOISE_DH_LEN + ns + np;
  return 0;
}

int ld_noise_hs_write_msg3(ld_noise_hs_t *hs, const uint8_t *payload, size_t len, ld_buf_t *out) {
  int rc = reserve_msg(out, len, ld_noise_msg3_len(len));
  if (rc != 0)
    return rc;
  uint8_t *p = out->data + out->len;
  size_t ns = 0, np = 0;
  if ((rc = ld_noise_encrypt_and_hash(&hs->sym, hs->s_pub, LD_NOISE_DH_LEN, p, &ns)) != 0 ||
      (rc = mix_dh(&hs->sym, hs->s_priv, hs->re)) != 0 ||
      (rc = ld_noise_encrypt_and_hash(&hs->sym, payload, len, p + ns, &np)) != 0)
    return rc;
  out->len += ns + np;
  return 0;
}

/* DecryptAndHash of everything left in the message into `payload`. */
static int read_payload(ld_noise_hs_t *hs, ld_cursor_t *c, ld_buf_t *payload) {
  size_t len = ld_cursor_remaining(c), n = 0;
  const uint8_t *ct;
  int rc = ld_buf_reserve(payload, len > 0 ? len : 1);
  if (rc != 0)
    return rc;
  ld_cursor_bytes(c, len, &ct);
  rc = ld_noise_decrypt_and_hash(&hs->sym, ct, len, payload->data + payload->len, &n);
  if (rc == 0)
    payload->len += n;
  return rc;
}

/* DecryptAndHash of the 48-byte encrypted static key into rs. */
static int read_static(ld_noise_hs_t *hs, ld_cursor_t *c) {
  const uint8_t *ct;
  size_t n = 0;
  if (ld_cursor_bytes(c, LD_NOISE_DH_LEN + LD_NOISE_TAG_LEN, &ct) != 0)
    return LD_ERR_HANDSHAKE;
  return ld_noise_decrypt_and_hash(&hs->sym, ct, LD_NOISE_DH_LEN + LD_NOISE_TAG_LEN, hs->rs, &n);
}

int ld_noise_hs_read_msg1(ld_noise_hs_t *hs, const uint8_t *msg, size_t len, ld_buf_t *payload) {
  ld_cursor_t c;
  ld_cursor_init(&c, msg, len);
  if (ld_cursor_copy(&c, hs->re, LD_NOISE_DH_LEN) != 0)
    return LD_ERR_HANDSHAKE;
  ld_noise_mix_hash(&hs->sym, hs->re, LD_NOISE_DH_LEN);
  return read_payload(hs, &c, payload);
}

int ld_noise_hs_read_msg2(ld_noise_hs_t *hs, const uint8_t *msg, size_t len, ld_buf_t *payload) {
  ld_cursor_t c;
  ld_cursor_init(&c, msg, len);
  if (len < LD_NOISE_MSG2_MIN || ld_cursor_copy(&c, hs->re, LD_NOISE_DH_LEN) != 0)
    return LD_ERR_HANDSHAKE;
  ld_noise_mix_hash(&hs->sym, hs->re, LD_NOISE_DH_LEN);
  int rc;
  if ((rc = mix_dh(&hs->sym, hs->e_priv, hs->re)) != 0 || (rc = read_static(hs, &c)) != 0 ||
      (rc = mix_dh(&hs->sym, hs->e_priv, hs->rs)) != 0)
    return rc;
  return read_payload(hs, &c, payload);
}

int ld_noise_hs_read_msg3(ld_noise_hs_t *hs, const uint8_t *msg, size_t len, ld_buf_t *payload) {
  ld_cursor_t c;
  ld_cursor_init(&c, msg, len);
  if (len < LD_NOISE_MSG3_MIN)
    return LD_ERR_HANDSHAKE;
  int rc;
  if ((rc = read_static(hs, &c)) != 0 || (rc = mix_dh(&hs->sym, hs->e_priv, hs->rs)) != 0)
    return rc;
  return read_payload(hs, &c, payload);
}

void ld_noise_hs_split(const ld_noise_hs_t *hs, ld_noise_cipher_t *send, ld_noise_cipher_t *recv) {
  if (hs->initiator)
    ld_noise_split(&hs->sym, send, recv);
  else
    ld_noise_split(&hs->sym, recv, send);
}

/* ---- the libp2p engine ----------------------------------------------------------------------- */

enum {
  ST_IDLE,      /* initiator before ld_noise_start */
  ST_WAIT_MSG1, /* responder */
  ST_WAIT_MSG2, /* initiator */
  ST_WAIT_MSG3, /* responder */
  ST_ESTABLISHED,
  ST_FAILED,
};

struct ld_noise {
  int state;
  int error;
  bool initiator;
  bool payload_sent;
  bool has_expected;
  ld_noise_hs_t hs;
  ld_noise_cipher_t send, recv;
  ld_peerid_t expected;
  char **muxers;
  size_t n_muxers;
  const char *early_muxer; /* one of muxers[] */
  ld_buf_t payload;        /* our encoded NoiseHandshakePayload */
  ld_buf_t scratch;        /* the peer's decrypted payload, during the handshake */
  uint8_t h[LD_NOISE_HASH_LEN];
  ld_pubkey_t remote_key;
  ld_peerid_t remote_peer;
};

typedef int (*ld_noise_writer_fn)(ld_noise_hs_t *, const uint8_t *, size_t, ld_buf_t *);

static bool muxers_valid(const ld_noise_config_t *cfg) {
  if (cfg->n_muxers > LD_NOISE_MUXERS_MAX || (cfg->n_muxers > 0 && cfg->muxers == NULL))
    return false;
  for (size_t i = 0; i < cfg->n_muxers; i++) {
    const char *m = cfg->muxers[i];
    size_t len = m != NULL ? strnlen(m, LD_NOISE_MUXER_NAME_MAX + 1) : 0;
    if (len == 0 || len > LD_NOISE_MUXER_NAME_MAX)
      return false;
  }
  return true;
}

static int copy_muxers(ld_noise_t *n, const ld_noise_config_t *cfg) {
  if (cfg->n_muxers == 0)
    return 0;
  n->muxers = calloc(cfg->n_muxers, sizeof *n->muxers);
  if (n->muxers == NULL)
    return LD_ERR_NOMEM;
  n->n_muxers = cfg->n_muxers;
  for (size_t i = 0; i < cfg->n_muxers; i++) {
    size_t len = strlen(cfg->muxers[i]) + 1;
    n->muxers[i] = malloc(len);
    if (n->muxers[i] == NULL)
      return LD_ERR_NOMEM;
    memcpy(n->muxers[i], cfg->muxers[i], len);
  }
  return 0;
}

static void free_muxers(ld_noise_t *n) {
  for (size_t i = 0; i < n->n_muxers; i++)
    free(n->muxers[i]);
  free(n->muxers);
  n->muxers = NULL;
  n->n_muxers = 0;
}

static void signed_message(uint8_t msg[SIG_MSG_LEN], const uint8_t static_pub[LD_NOISE_DH_LEN]) {
  memcpy(msg, SIG_PREFIX, SIG_PREFIX_LEN);
  memcpy(msg + SIG_PREFIX_LEN, static_pub, LD_NOISE_DH_LEN);
}

static int build_payload(ld_noise_t *n, const ld_privkey_t *identity) {
  uint8_t msg[SIG_MSG_LEN], sig[LD_SIG_MAX];
  size_t siglen = 0;
  signed_message(msg, n->hs.s_pub);
  int rc = ld_privkey_sign(identity, msg, sizeof msg, sig, &siglen);
  if (rc != 0)
    return rc;
  ld_pubkey_t pub;
  ld_privkey_public(identity, &pub);
  NoiseExtensions ext = NOISE_EXTENSIONS__INIT;
  NoiseHandshakePayload p = NOISE_HANDSHAKE_PAYLOAD__INIT;
  p.has_identity_key = 1;
  p.identity_key.data = pub.proto;
  p.identity_key.len = pub.proto_len;
  p.has_identity_sig = 1;
  p.identity_sig.data = sig;
  p.identity_sig.len = siglen;
  if (n->n_muxers > 0) {
    ext.n_stream_muxers = n->n_muxers;
    ext.stream_muxers = n->muxers;
    p.extensions = &ext;
  }
  size_t size = noise_handshake_payload__get_packed_size(&p);
  if (size > LD_NOISE_MAX_FRAME - LD_NOISE_MSG2_MIN)
    return LD_ERR_TOO_LARGE;
  if ((rc = ld_buf_reserve(&n->payload, size)) != 0)
    return rc;
  n->payload.len = noise_handshake_payload__pack(&p, n->payload.data);
  return 0;
}

ld_noise_t *ld_noise_new(const ld_noise_config_t *cfg) {
  if (cfg == NULL || cfg->identity == NULL || !muxers_valid(cfg) || ld_crypto_init() != 0)
    return NULL;
  ld_noise_t *n = calloc(1, sizeof *n);
  if (n == NULL)
    return NULL;
  ld_buf_init(&n->payload);
  ld_buf_init(&n->scratch);
  n->initiator = cfg->initiator;
  n->state = cfg->initiator ? ST_IDLE : ST_WAIT_MSG1;
  if (cfg->expected_peer != NULL) {
    n->has_expected = true;
    n->expected = *cfg->expected_peer;
  }
  ld_noise_hs_init(&n->hs, cfg->initiator, NULL, 0, cfg->static_priv, cfg->ephemeral_priv);
  if (copy_muxers(n, cfg) != 0 || build_payload(n, cfg->identity) != 0) {
    ld_noise_free(n);
    return NULL;
  }
  return n;
}

static void clear_scratch(ld_noise_t *n) {
  if (n->scratch.data != NULL)
    wipe(n->scratch.data, n->scratch.cap);
  ld_buf_clear(&n->scratch);
}

static void wipe_keys(ld_noise_t *n) {
  ld_noise_hs_wipe(&n->hs);
  wipe(&n->send, sizeof n->send);
  wipe(&n->recv, sizeof n->recv);
  clear_scratch(n);
}

void ld_noise_free(ld_noise_t *n) {
  if (n == NULL)
    return;
  wipe_keys(n);
  free_muxers(n);
  ld_buf_clear(&n->payload);
  wipe(n, sizeof *n);
  free(n);
}

static int fail(ld_noise_t *n, int rc) {
  n->state = ST_FAILED;
  n->error = rc;
  n->early_muxer = NULL;
  wipe_keys(n);
  return rc;
}

/* Appends `u16be(len) ‖ message` written by `w`; all or nothing. */
static int send_handshake(ld_noise_t *n, ld_noise_writer_fn w, size_t msg_len,
                          const uint8_t *payload, size_t payload_len, ld_buf_t *out) {
  if (msg_len > LD_NOISE_MAX_FRAME)
    return LD_ERR_TOO_LARGE;
  size_t start = out->len;
  int rc = ld_buf_reserve(out, 2 + msg_len);
  if (rc != 0)
    return rc;
  ld_buf_be16(out, (uint16_t)msg_len);
  rc = w(&n->hs, payload, payload_len, out);
  if (rc == 0 && out->len - start != 2 + msg_len)
    rc = LD_ERR_INTERNAL;
  if (rc != 0)
    out->len = start;
  return rc;
}

int ld_noise_start(ld_noise_t *n, ld_buf_t *wire_out) {
  if (n == NULL)
    return LD_ERR_INVALID_ARG;
  if (n->state == ST_FAILED)
    return n->error;
  if (!n->initiator)
    return 0;
  if (n->state != ST_IDLE)
    return LD_ERR_STATE;
  if (wire_out == NULL)
    return LD_ERR_INVALID_ARG;
  int rc = send_handshake(n, ld_noise_hs_write_msg1, ld_noise_msg1_len(0), NULL, 0, wire_out);
  if (rc != 0)
    return fail(n, rc);
  n->state = ST_WAIT_MSG2;
  return 0;
}

/* ---- payload verification -------------------------------------------------------------------- */

static int verify_signature(ld_noise_t *n, const uint8_t *sig, size_t siglen) {
  uint8_t msg[SIG_MSG_LEN];
  if (siglen == 0 || siglen > LD_SIG_MAX)
    return LD_ERR_BAD_SIGNATURE;
  signed_message(msg, n->hs.rs);
  int rc = ld_pubkey_verify(&n->remote_key, msg, sizeof msg, sig, siglen);
  if (rc == 0)
    return 0;
  return rc == LD_ERR_UNSUPPORTED || rc == LD_ERR_BAD_KEY ? LD_ERR_BAD_KEY : LD_ERR_BAD_SIGNATURE;
}

static int check_identity(ld_noise_t *n, const NoiseHandshakePayload *m) {
  if (!m->has_identity_key || !m->has_identity_sig)
    return LD_ERR_HANDSHAKE;
  if (ld_pubkey_decode(&n->remote_key, m->identity_key.data, m->identity_key.len) != 0)
    return LD_ERR_BAD_KEY;
  int rc = verify_signature(n, m->identity_sig.data, m->identity_sig.len);
  if (rc != 0)
    return rc;
  if (ld_peerid_from_pubkey(&n->remote_peer, &n->remote_key) != 0)
    return LD_ERR_BAD_KEY;
  if (n->initiator && n->has_expected && !ld_peerid_equal(&n->expected, &n->remote_peer))
    return LD_ERR_PEER_ID_MISMATCH;
  return 0;
}

static char *find_muxer(char *const *list, size_t count, const char *name) {
  for (size_t i = 0; i < count; i++)
    if (list[i] != NULL && name != NULL && strcmp(list[i], name) == 0)
      return list[i];
  return NULL;
}

/* The first entry of the initiator's list that the responder also lists, as one of our
 * strings. */
static const char *agree_muxer(const ld_noise_t *n, const NoiseExtensions *ext) {
  if (ext == NULL || ext->n_stream_muxers == 0 || n->n_muxers == 0)
    return NULL;
  if (n->initiator) {
    for (size_t i = 0; i < n->n_muxers; i++)
      if (find_muxer(ext->stream_muxers, ext->n_stream_muxers, n->muxers[i]) != NULL)
        return n->muxers[i];
    return NULL;
  }
  for (size_t i = 0; i < ext->n_stream_muxers; i++) {
    const char *mine = find_muxer(n->muxers, n->n_muxers, ext->stream_muxers[i]);
    if (mine != NULL)
      return mine;
  }
  return NULL;
}

static int verify_payload(ld_noise_t *n, const uint8_t *p, size_t len) {
  NoiseHandshakePayload *m = noise_handshake_payload__unpack(NULL, len, len > 0 ? p : empty);
  if (m == NULL)
    return LD_ERR_HANDSHAKE;
  int rc = check_identity(n, m);
  if (rc == 0)
    n->early_muxer = agree_muxer(n, m->extensions);
  noise_handshake_payload__free_unpacked(m, NULL);
  return rc;
}

/* ---- reading --------------------------------------------------------------------------------- */

static void establish(ld_noise_t *n) {
  ld_noise_hs_split(&n->hs, &n->send, &n->recv);
  memcpy(n->h, n->hs.sym.h, LD_NOISE_HASH_LEN);
  ld_noise_hs_wipe(&n->hs);
  clear_scratch(n);
  n->state = ST_ESTABLISHED;
}

static int send_payload_msg(ld_noise_t *n, ld_noise_writer_fn w, size_t msg_len, ld_buf_t *out) {
  int rc = send_handshake(n, w, msg_len, n->payload.data, n->payload.len, out);
  if (rc == 0)
    n->payload_sent = true;
  return rc;
}

static int on_msg1(ld_noise_t *n, const uint8_t *msg, size_t len, ld_buf_t *wire_out) {
  if (wire_out == NULL)
    return LD_ERR_INVALID_ARG;
  ld_buf_reset(&n->scratch);
  int rc = ld_noise_hs_read_msg1(&n->hs, msg, len, &n->scratch);
  if (rc != 0)
    return rc;
  rc = send_payload_msg(n, ld_noise_hs_write_msg2, ld_noise_msg2_len(n->payload.len), wire_out);
  if (rc != 0)
    return rc;
  n->state = ST_WAIT_MSG3;
  return 0;
}

static int on_msg2(ld_noise_t *n, const uint8_t *msg, size_t len, ld_buf_t *wire_out) {
  if (wire_out == NULL)
    return LD_ERR_INVALID_ARG;
  ld_buf_reset(&n->scratch);
  int rc = ld_noise_hs_read_msg2(&n->hs, msg, len, &n->scratch);
  if (rc == 0)
    rc = verify_payload(n, n->scratch.data, n->scratch.len);
  if (rc == 0)
    rc = send_payload_msg(n, ld_noise_hs_write_msg3, ld_noise_msg3_len(n->payload.len), wire_out);
  if (rc == 0)
    establish(n);
  return rc;
}

static int on_msg3(ld_noise_t *n, const uint8_t *msg, size_t len) {
  ld_buf_reset(&n->scratch);
  int rc = ld_noise_hs_read_msg3(&n->hs, msg, len, &n->scratch);
  if (rc == 0)
    rc = verify_payload(n, n->scratch.data, n->scratch.len);
  if (rc == 0)
    establish(n);
  return rc;
}

static int read_handshake(ld_noise_t *n, const uint8_t *msg, size_t len, ld_buf_t *wire_out) {
  switch (n->state) {
  case ST_WAIT_MSG1:
    return on_msg1(n, msg, len, wire_out);
  case ST_WAIT_MSG2:
    return on_msg2(n, msg, len, wire_out);
  case ST_WAIT_MSG3:
    return on_msg3(n, msg, len);
  default:
    return LD_ERR_STATE;
  }
}

static int read_transport(ld_noise_t *n, const uint8_t *frame, size_t len, ld_buf_t *out) {
  if (len < LD_NOISE_TAG_LEN)
    return LD_ERR_DECRYPT;
  size_t pt_len = len - LD_NOISE_TAG_LEN;
  int rc = ld_buf_reserve(out, pt_len > 0 ? pt_len : 1);
  if (rc != 0)
    return rc;
  rc = ld_noise_cipher_decrypt(&n->recv, NULL, 0, frame, len, out->data + out->len);
  if (rc == 0)
    out->len += pt_len;
  return rc;
}

/* The next complete `u16be(len) ‖ body` frame, or false (cursor unmoved) when incomplete. */
static bool next_frame(ld_cursor_t *c, const uint8_t **body, size_t *len) {
  size_t start = c->pos;
  uint16_t n;
  if (ld_cursor_be16(c, &n) != 0)
    return false;
  if (ld_cursor_bytes(c, n, body) != 0) {
    c->pos = start;
    return false;
  }
  *len = n;
  return true;
}

int ld_noise_read(ld_noise_t *n, const uint8_t *in, size_t len, size_t *consumed,
                  ld_buf_t *wire_out, ld_buf_t *plaintext_out) {
  if (consumed != NULL)
    *consumed = 0;
  if (n == NULL || consumed == NULL || plaintext_out == NULL || (in == NULL && len > 0))
    return LD_ERR_INVALID_ARG;
  if (n->state == ST_FAILED)
    return n->error;
  if (n->state == ST_IDLE)
    return LD_ERR_STATE;
  ld_cursor_t c;
  ld_cursor_init(&c, in, len);
  const uint8_t *body;
  size_t body_len;
  int rc = 0;
  while (rc == 0 && next_frame(&c, &body, &body_len)) {
    if (n->state == ST_ESTABLISHED)
      rc = read_transport(n, body, body_len, plaintext_out);
    else
      rc = read_handshake(n, body, body_len, wire_out);
    if (rc == 0)
      *consumed = c.pos;
  }
  return rc == 0 ? 0 : fail(n, rc);
}

/* ---- transport ------------------------------------------------------------------------------- */

int ld_noise_encrypt(ld_noise_t *n, const uint8_t *pt, size_t len, ld_buf_t *wire_out) {
  if (n == NULL || wire_out == NULL || (pt == NULL && len > 0))
    return LD_ERR_INVALID_ARG;
  if (n->state != ST_ESTABLISHED)
    return LD_ERR_STATE;
  if (len == 0)
    return 0;
  size_t frames = len / LD_NOISE_MAX_PLAINTEXT + (len % LD_NOISE_MAX_PLAINTEXT != 0);
  if ((uint64_t)frames > LD_NOISE_NONCE_MAX - n->send.n)
    return fail(n, LD_ERR_LIMIT);
  if (frames > (SIZE_MAX - len) / LD_NOISE_FRAME_OVERHEAD)
    return LD_ERR_NOMEM;
  int rc = ld_buf_reserve(wire_out, len + frames * LD_NOISE_FRAME_OVERHEAD);
  if (rc != 0)
    return rc;
  uint8_t *p = wire_out->data + wire_out->len;
  while (len > 0) {
    size_t chunk = len < LD_NOISE_MAX_PLAINTEXT ? len : LD_NOISE_MAX_PLAINTEXT;
    size_t body = chunk + LD_NOISE_TAG_LEN;
    p[0] = (uint8_t)(body >> 8);
    p[1] = (uint8_t)body;
    ld_noise_cipher_encrypt(&n->send, NULL, 0, pt, chunk, p + 2);
    p += 2 + body;
    pt += chunk;
    len -= chunk;
  }
  wire_out->len = (size_t)(p - wire_out->data);
  return 0;
}

/* ---- accessors and test hooks ---------------------------------------------------------------- */

bool ld_noise_is_established(const ld_noise_t *n) {
  return n != NULL && n->state == ST_ESTABLISHED;
}

const ld_pubkey_t *ld_noise_remote_key(const ld_noise_t *n) {
  return ld_noise_is_established(n) ? &n->remote_key : NULL;
}

const ld_peerid_t *ld_noise_remote_peer(const ld_noise_t *n) {
  return ld_noise_is_established(n) ? &n->remote_peer : NULL;
}

const char *ld_noise_early_muxer(const ld_noise_t *n) {
  return ld_noise_is_established(n) ? n->early_muxer : NULL;
}

const uint8_t *ld_noise_handshake_hash(const ld_noise_t *n) {
  return n->state == ST_ESTABLISHED ? n->h : n->hs.sym.h;
}

int ld_noise_set_local_payload(ld_noise_t *n, const uint8_t *payload, size_t len) {
  if (n->payload_sent || n->state == ST_ESTABLISHED || n->state == ST_FAILED)
    return LD_ERR_STATE;
  if (len > LD_NOISE_MAX_FRAME - LD_NOISE_MSG2_MIN)
    return LD_ERR_TOO_LARGE;
  ld_buf_reset(&n->payload);
  return ld_buf_append(&n->payload, payload, len);
}

int ld_noise_set_nonces(ld_noise_t *n, uint64_t send, uint64_t recv) {
  if (n->state != ST_ESTABLISHED)
    return LD_ERR_STATE;
  n->send.n = send;
  n->recv.n = recv;
  return 0;
}
