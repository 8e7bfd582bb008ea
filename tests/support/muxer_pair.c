#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "muxer_pair.h"

#include "base/hex.h"

static void record(mp_peer_t *p, int kind, uint64_t sid, uint32_t code) {
  if (p->nev == p->evcap) {
    p->evcap = p->evcap == 0 ? 256 : 2 * p->evcap;
    p->ev = realloc(p->ev, p->evcap * sizeof *p->ev);
    assert_non_null(p->ev);
  }
  p->ev[p->nev++] = (mp_ev_t){kind, sid, code};
}

ld_buf_t *mp_rx_of(mp_peer_t *p, uint64_t sid) {
  for (size_t i = 0; i < p->nrx; i++)
    if (p->rx[i].sid == sid)
      return &p->rx[i].data;
  assert_true(p->nrx < MP_MAX_RX);
  p->rx[p->nrx].sid = sid;
  ld_buf_init(&p->rx[p->nrx].data);
  return &p->rx[p->nrx++].data;
}

static int cb_open(void *ud, uint64_t sid) {
  mp_peer_t *p = ud;
  record(p, MP_EV_OPEN, sid, 0);
  if (p->greeting != NULL)
    assert_int_equal(p->ops->write(p->m, sid, (const uint8_t *)p->greeting, strlen(p->greeting)),
                     (int64_t)strlen(p->greeting));
  return 0;
}

static int cb_data(void *ud, uint64_t sid, const uint8_t *data, size_t len) {
  mp_peer_t *p = ud;
  record(p, MP_EV_DATA, sid, (uint32_t)len);
  assert_int_equal(ld_buf_append(mp_rx_of(p, sid), data, len), 0);
  if (p->data_rc != 0)
    return p->data_rc;
  if (p->auto_consume)
    assert_int_equal(p->ops->consumed(p->m, sid, len), 0);
  if (p->reset_on_data)
    assert_int_equal(p->ops->reset(p->m, sid), 0);
  return 0;
}

static int cb_eof(void *ud, uint64_t sid) {
  record(ud, MP_EV_EOF, sid, 0);
  return 0;
}

static int cb_reset(void *ud, uint64_t sid) {
  record(ud, MP_EV_RESET, sid, 0);
  return 0;
}

static int cb_writable(void *ud, uint64_t sid) {
  record(ud, MP_EV_WRITABLE, sid, 0);
  return 0;
}

static int cb_go_away(void *ud, uint32_t code) {
  record(ud, MP_EV_GOAWAY, 0, code);
  return 0;
}

static const ld_muxer_callbacks_t callbacks = {cb_open,  cb_data,     cb_eof,
                                               cb_reset, cb_writable, cb_go_away};

mp_peer_t *mp_peer_new(const ld_muxer_ops_t *ops, bool initiator, const ld_muxer_config_t *cfg) {
  mp_peer_t *p = calloc(1, sizeof *p);
  assert_non_null(p);
  p->ops = ops;
  p->auto_consume = true;
  ld_muxer_config_t def;
  ld_muxer_config_default(&def);
  p->m = ops->create(initiator, cfg != NULL ? cfg : &def, &callbacks, p);
  assert_non_null(p->m);
  return p;
}

void mp_peer_free(mp_peer_t *p) {
  p->ops->destroy(p->m);
  for (size_t i = 0; i < p->nrx; i++)
    ld_buf_clear(&p->rx[i].data);
  free(p->ev);
  free(p);
}

size_t mp_count(const mp_peer_t *p, int kind, uint64_t sid) {
  size_t n = 0;
  for (size_t i = 0; i < p->nev; i++)
    if (p->ev[i].kind == kind && (kind == MP_EV_GOAWAY || p->ev[i].sid == sid))
      n++;
  return n;
}

int mp_pump(mp_peer_t *from, mp_peer_t *to, size_t split, uint64_t now) {
  ld_buf_t b;
  ld_buf_init(&b);
  assert_int_equal(from->ops->take_output(from->m, &b), 0);
  assert_int_equal(from->ops->pending_output(from->m), 0);
  int rc = 0;
  for (size_t off = 0; off < b.len && rc == 0;) {
    size_t n = split == 0 || b.len - off < split ? b.len - off : split;
    rc = to->ops->read(to->m, b.data + off, n, now);
    off += n;
  }
  ld_buf_clear(&b);
  return rc;
}

void mp_exchange(mp_peer_t *a, mp_peer_t *b, size_t split, uint64_t now) {
  while (a->ops->pending_output(a->m) > 0 || b->ops->pending_output(b->m) > 0) {
    assert_int_equal(mp_pump(a, b, split, now), 0);
    assert_int_equal(mp_pump(b, a, split, now), 0);
  }
}

void mp_take(mp_peer_t *p, ld_buf_t *out) {
  ld_buf_reset(out);
  assert_int_equal(p->ops->take_output(p->m, out), 0);
}

size_t mp_unhex(const char *hex, uint8_t *out, size_t cap) {
  size_t n = 0;
  assert_true(strlen(hex) / 2 <= cap);
  assert_int_equal(ld_hex_decode(hex, strlen(hex), out, cap, &n), 0);
  return n;
}

void mp_assert_buf_hex(const ld_buf_t *b, const char *hex) {
  uint8_t want[4096];
  size_t n = mp_unhex(hex, want, sizeof want);
  assert_int_equal(b->len, n);
  assert_memory_equal(b->data, want, n);
}

int mp_feed_hex(mp_peer_t *p, const char *hex, uint64_t now) {
  uint8_t buf[256];
  size_t n = mp_unhex(hex, buf, sizeof buf);
  return p->ops->read(p->m, buf, n, now);
}

void mp_assert_output_hex(mp_peer_t *p, const char *hex) {
  ld_buf_t b;
  ld_buf_init(&b);
  mp_take(p, &b);
  mp_assert_buf_hex(&b, hex);
  ld_buf_clear(&b);
}

void mp_pattern(uint8_t *buf, size_t len, size_t offset, uint64_t seed) {
  for (size_t i = 0; i < len; i++)
    buf[i] = (uint8_t)((offset + i) * 31 + seed);
}

bool mp_matches_pattern(const uint8_t *buf, size_t len, uint64_t seed) {
  for (size_t i = 0; i < len; i++)
    if (buf[i] != (uint8_t)(i * 31 + seed))
      return false;
  return true;
}

ld_muxer_config_t mp_config(void) {
  ld_muxer_config_t cfg;
  ld_muxer_config_default(&cfg);
  return cfg;
}
