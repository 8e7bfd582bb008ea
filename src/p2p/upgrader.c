#include "p2p/upgrader.h"

#include <string.h>

#include "base/error.h"

static const char *const security_ids[] = {LD_NOISE_PROTOCOL_ID};

static bool id_is(const char *id, const char *p, size_t len) {
  return strlen(id) == len && memcmp(id, p, len) == 0;
}

static const char *select_security(void *ud, const char *p, size_t len) {
  (void)ud;
  return id_is(LD_NOISE_PROTOCOL_ID, p, len) ? security_ids[0] : NULL;
}

static const char *select_muxer(void *ud, const char *p, size_t len) {
  ld_upgrader_t *u = ud;
  for (size_t i = 0; i < u->n_muxers; i++)
    if (id_is(u->muxers[i], p, len))
      return u->muxers[i];
  return NULL;
}

static size_t list_muxers(void *ud, const char **out, size_t max) {
  ld_upgrader_t *u = ud;
  size_t n = u->n_muxers < max ? u->n_muxers : max;
  for (size_t i = 0; i < n; i++)
    out[i] = u->muxers[i];
  return n;
}

int ld_upgrader_init(ld_upgrader_t *u, const ld_upgrader_config_t *cfg) {
  if (cfg->n_muxers == 0 || cfg->n_muxers > LD_UPGRADER_MAX_MUXERS || cfg->identity == NULL)
    return LD_ERR_INVALID_ARG;
  memset(u, 0, sizeof *u);
  u->initiator = cfg->initiator;
  for (size_t i = 0; i < cfg->n_muxers; i++)
    u->muxers[i] = cfg->muxers[i];
  u->n_muxers = cfg->n_muxers;
  ld_noise_config_t nc = {
      .initiator = cfg->initiator,
      .identity = cfg->identity,
      .expected_peer = cfg->initiator ? cfg->expected_peer : NULL,
  };
  u->noise = ld_noise_new(&nc);
  if (u->noise == NULL)
    return LD_ERR_BAD_KEY;
  ld_buf_init(&u->plain);
  ld_buf_init(&u->scratch);
  if (u->initiator)
    ld_mss_init_initiator(&u->mss, security_ids, 1);
  else
    ld_mss_init_listener(&u->mss, select_security, NULL, u);
  u->stage = LD_UPGRADER_SECURITY;
  return 0;
}

void ld_upgrader_clear(ld_upgrader_t *u) {
  ld_mss_clear(&u->mss);
  ld_noise_free(u->noise);
  u->noise = NULL;
  ld_buf_clear(&u->plain);
  ld_buf_clear(&u->scratch);
}

int ld_upgrader_start(ld_upgrader_t *u, ld_buf_t *wire_out) {
  if (!u->initiator)
    return 0;
  return ld_mss_start(&u->mss, wire_out);
}

/* Encrypts what multistream wrote into the scratch buffer. */
static int seal_scratch(ld_upgrader_t *u, ld_buf_t *wire_out) {
  int rc = ld_noise_encrypt(u->noise, u->scratch.data, u->scratch.len, wire_out);
  ld_buf_reset(&u->scratch);
  return rc;
}

static int enter_muxer_stage(ld_upgrader_t *u, ld_buf_t *wire_out) {
  const char *early = ld_noise_early_muxer(u->noise);
  if (early != NULL && select_muxer(u, early, strlen(early)) != NULL) {
    u->muxer = select_muxer(u, early, strlen(early));
    u->stage = LD_UPGRADER_FINISHED;
    return 0;
  }
  ld_mss_clear(&u->mss);
  u->stage = LD_UPGRADER_MUXER;
  if (!u->initiator) {
    ld_mss_init_listener(&u->mss, select_muxer, list_muxers, u);
    return 0;
  }
  ld_mss_init_initiator(&u->mss, u->muxers, u->n_muxers);
  int rc = ld_mss_start(&u->mss, &u->scratch);
  return rc != 0 ? rc : seal_scratch(u, wire_out);
}

static int step_security(ld_upgrader_t *u, const uint8_t *in, size_t len, size_t *used,
                         ld_buf_t *wire_out) {
  int rc = ld_mss_read(&u->mss, in, len, used, wire_out);
  if (rc != LD_MSS_DONE)
    return rc;
  u->stage = LD_UPGRADER_HANDSHAKE;
  return u->initiator ? ld_noise_start(u->noise, wire_out) : 0;
}

static int step_handshake(ld_upgrader_t *u, const uint8_t *in, size_t len, size_t *used,
                          ld_buf_t *wire_out) {
  int rc = ld_noise_read(u->noise, in, len, used, wire_out, &u->plain);
  if (rc < 0)
    return rc;
  if (!ld_noise_is_established(u->noise))
    return 0;
  return enter_muxer_stage(u, wire_out);
}

/* Runs multistream over the decrypted bytes gathered so far. */
static int negotiate_muxer(ld_upgrader_t *u, ld_buf_t *wire_out) {
  if (u->plain.len == 0)
    return 0;
  size_t used;
  int rc = ld_mss_read(&u->mss, u->plain.data, u->plain.len, &used, &u->scratch);
  if (rc < 0)
    return rc;
  ld_buf_consume(&u->plain, used);
  int sealed = seal_scratch(u, wire_out);
  if (sealed != 0)
    return sealed;
  if (rc == LD_MSS_DONE) {
    u->muxer = ld_mss_selected(&u->mss);
    u->stage = LD_UPGRADER_FINISHED;
  }
  return 0;
}

static int step_muxer(ld_upgrader_t *u, const uint8_t *in, size_t len, size_t *used,
                      ld_buf_t *wire_out) {
  int rc = ld_noise_read(u->noise, in, len, used, NULL, &u->plain);
  if (rc < 0)
    return rc;
  return negotiate_muxer(u, wire_out);
}

int ld_upgrader_read(ld_upgrader_t *u, const uint8_t *in, size_t len, size_t *consumed,
                     ld_buf_t *wire_out) {
  size_t pos = 0;
  int rc = 0;
  while (rc == 0 && u->stage != LD_UPGRADER_FINISHED) {
    ld_upgrader_stage_t before = u->stage;
    size_t used = 0;
    if (u->stage == LD_UPGRADER_SECURITY)
      rc = step_security(u, in + pos, len - pos, &used, wire_out);
    else if (u->stage == LD_UPGRADER_HANDSHAKE)
      rc = step_handshake(u, in + pos, len - pos, &used, wire_out);
    else if (pos < len)
      rc = step_muxer(u, in + pos, len - pos, &used, wire_out);
    else
      rc = negotiate_muxer(u, wire_out);
    pos += used;
    if (rc == 0 && u->stage == before && (used == 0 || pos == len))
      break;
  }
  *consumed = pos;
  if (rc < 0)
    return rc;
  return u->stage == LD_UPGRADER_FINISHED ? LD_UPGRADER_DONE : LD_UPGRADER_PENDING;
}

ld_noise_t *ld_upgrader_take_noise(ld_upgrader_t *u) {
  ld_noise_t *n = u->noise;
  u->noise = NULL;
  return n;
}

const char *ld_upgrader_muxer(const ld_upgrader_t *u) {
  return u->muxer;
}

const uint8_t *ld_upgrader_leftover(const ld_upgrader_t *u, size_t *len) {
  *len = u->plain.len;
  return u->plain.data;
}

const char *ld_upgrader_stage_name(const ld_upgrader_t *u) {
  static const char *const names[] = {"security", "handshake", "muxer", "finished"};
  return names[u->stage];
}
