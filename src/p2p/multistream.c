#include "p2p/multistream.h"

#include <string.h>

#include "base/cursor.h"
#include "base/error.h"
#include "base/varint.h"

#define HEADER_LEN (sizeof LD_MSS_PROTOCOL_ID - 1)
/* A length prefix of a valid message never needs more than two bytes. */
#define PREFIX_MAX 2

static bool text_is(const uint8_t *text, size_t len, const char *s, size_t slen) {
  return len == slen && memcmp(text, s, len) == 0;
}

void ld_mss_init_initiator(ld_mss_t *m, const char *const *protocols, size_t n) {
  memset(m, 0, sizeof *m);
  m->initiator = true;
  m->protocols = protocols;
  m->n_protocols = n;
  ld_buf_init(&m->partial);
}

void ld_mss_init_listener(ld_mss_t *m, ld_mss_select_fn select, ld_mss_list_fn list,
                          void *user_data) {
  memset(m, 0, sizeof *m);
  m->select = select;
  m->list = list;
  m->user_data = user_data;
  ld_buf_init(&m->partial);
}

void ld_mss_clear(ld_mss_t *m) {
  ld_buf_clear(&m->partial);
}

int ld_mss_write_message(ld_buf_t *out, const char *text, size_t len) {
  if (len + 1 > LD_MSS_MAX_MESSAGE)
    return LD_ERR_INVALID_ARG;
  uint8_t prefix[LD_PBVARINT_MAX_LEN];
  size_t k = ld_varint_encode(len + 1, prefix);
  int rc = ld_buf_reserve(out, k + len + 1);
  if (rc != 0)
    return rc;
  ld_buf_append(out, prefix, k);
  ld_buf_append(out, text, len);
  ld_buf_u8(out, '\n');
  return 0;
}

static int write_str(ld_buf_t *out, const char *s) {
  return ld_mss_write_message(out, s, strlen(s));
}

static int write_header(ld_mss_t *m, ld_buf_t *out) {
  int rc = write_str(out, LD_MSS_PROTOCOL_ID);
  if (rc == 0)
    m->header_sent = true;
  return rc;
}

static int propose(ld_mss_t *m, ld_buf_t *out) {
  const char *p = m->protocols[m->next];
  size_t n = strlen(p);
  if (n == 0)
    return LD_ERR_INVALID_ARG;
  return ld_mss_write_message(out, p, n);
}

int ld_mss_start(ld_mss_t *m, ld_buf_t *out) {
  if (m->header_sent || m->header_received || m->done)
    return LD_ERR_STATE;
  if (!m->initiator)
    return write_header(m, out);
  if (m->n_protocols == 0)
    return LD_ERR_INVALID_ARG;
  size_t mark = out->len;
  int rc = write_header(m, out);
  if (rc == 0)
    rc = propose(m, out);
  if (rc != 0) {
    out->len = mark;
    m->header_sent = false;
  }
  return rc;
}

/* Total size (prefix + payload) of the message starting at data, once its prefix is complete. */
static int message_size(const uint8_t *data, size_t len, size_t *total) {
  ld_cursor_t c;
  ld_cursor_init(&c, data, len < PREFIX_MAX + 1 ? len : PREFIX_MAX + 1);
  uint64_t n;
  int rc = ld_cursor_uvarint(&c, &n);
  if (rc == LD_ERR_TRUNCATED && len > PREFIX_MAX)
    return LD_ERR_TOO_LARGE; /* three or more prefix bytes: at least 16,384 */
  if (rc != 0)
    return rc;
  if (n > LD_MSS_MAX_MESSAGE)
    return LD_ERR_TOO_LARGE;
  if (n == 0)
    return LD_ERR_MALFORMED;
  *total = c.pos + (size_t)n;
  return 0;
}

/* Splits a complete message into its text (newline stripped). */
static int message_text(const uint8_t *data, size_t total, const uint8_t **text, size_t *tlen) {
  ld_cursor_t c;
  ld_cursor_init(&c, data, total);
  size_t n;
  int rc = ld_cursor_lp_bytes(&c, LD_MSS_MAX_MESSAGE, text, &n);
  if (rc != 0)
    return rc;
  if ((*text)[n - 1] != '\n')
    return LD_ERR_MALFORMED;
  *tlen = n - 1;
  return 0;
}

static int on_header(ld_mss_t *m, const uint8_t *text, size_t len, ld_buf_t *out) {
  if (!text_is(text, len, LD_MSS_PROTOCOL_ID, HEADER_LEN))
    return LD_ERR_NEGOTIATION_FAILED;
  m->header_received = true;
  if (!m->initiator && !m->header_sent)
    return write_header(m, out);
  return 0;
}

static int initiator_answer(ld_mss_t *m, const uint8_t *text, size_t len, ld_buf_t *out) {
  const char *p = m->protocols[m->next];
  if (text_is(text, len, p, strlen(p))) {
    m->selected = p;
    m->done = true;
    return LD_MSS_DONE;
  }
  if (!text_is(text, len, "na", 2))
    return LD_ERR_NEGOTIATION_FAILED;
  if (++m->next >= m->n_protocols)
    return LD_ERR_PROTOCOL_UNSUPPORTED;
  int rc = propose(m, out);
  return rc != 0 ? rc : LD_MSS_PENDING;
}

static int write_list(ld_mss_t *m, ld_buf_t *out) {
  const char *ids[LD_MSS_MAX_LIST];
  size_t n = m->list(m->user_data, ids, LD_MSS_MAX_LIST);
  if (n > LD_MSS_MAX_LIST)
    n = LD_MSS_MAX_LIST;
  ld_buf_t body;
  ld_buf_init(&body);
  int rc = 0;
  for (size_t i = 0; i < n && rc == 0; i++)
    rc = write_str(&body, ids[i]);
  if (rc == 0)
    rc = ld_buf_u8(&body, '\n');
  if (rc == 0)
    rc = ld_buf_lp(out, body.data, body.len);
  ld_buf_clear(&body);
  return rc;
}

static int listener_refuse(ld_mss_t *m, bool ls, ld_buf_t *out) {
  if (++m->rounds > LD_MSS_MAX_ROUNDS)
    return LD_ERR_NEGOTIATION_FAILED;
  int rc = ls && m->list != NULL ? write_list(m, out) : write_str(out, "na");
  return rc != 0 ? rc : LD_MSS_PENDING;
}

static int listener_proposal(ld_mss_t *m, const uint8_t *text, size_t len, ld_buf_t *out) {
  if (text_is(text, len, "ls", 2))
    return listener_refuse(m, true, out);
  const char *id = m->select(m->user_data, (const char *)text, len);
  if (id == NULL)
    return listener_refuse(m, false, out);
  int rc = ld_mss_write_message(out, (const char *)text, len);
  if (rc != 0)
    return rc;
  m->selected = id;
  m->done = true;
  return LD_MSS_DONE;
}

static int on_message(ld_mss_t *m, const uint8_t *data, size_t total, ld_buf_t *out) {
  const uint8_t *text;
  size_t len;
  int rc = message_text(data, total, &text, &len);
  if (rc != 0)
    return rc;
  if (!m->header_received)
    return on_header(m, text, len, out);
  if (m->initiator)
    return initiator_answer(m, text, len, out);
  return listener_proposal(m, text, len, out);
}

/* Moves input into the partial buffer until it holds one complete message or the input ends.
 * Returns 1 when complete, 0 when more input is needed. */
static int fill_partial(ld_mss_t *m, const uint8_t *in, size_t len, size_t *pos) {
  ld_buf_t *p = &m->partial;
  while (*pos < len) {
    size_t total;
    int rc = message_size(p->data, p->len, &total);
    if (rc == LD_ERR_TRUNCATED) {
      rc = ld_buf_append(p, in + *pos, 1);
      if (rc != 0)
        return rc;
      (*pos)++;
      continue;
    }
    if (rc != 0)
      return rc;
    size_t take = total - p->len < len - *pos ? total - p->len : len - *pos;
    rc = ld_buf_append(p, in + *pos, take);
    if (rc != 0)
      return rc;
    *pos += take;
    return p->len == total ? 1 : 0;
  }
  size_t total;
  int rc = message_size(p->data, p->len, &total);
  if (rc == LD_ERR_TRUNCATED)
    return 0;
  return rc != 0 ? rc : p->len == total;
}

static int step_partial(ld_mss_t *m, const uint8_t *in, size_t len, size_t *pos, ld_buf_t *out) {
  int rc = fill_partial(m, in, len, pos);
  if (rc <= 0)
    return rc < 0 ? rc : LD_MSS_PENDING;
  rc = on_message(m, m->partial.data, m->partial.len, out);
  ld_buf_clear(&m->partial);
  return rc;
}

static int step_direct(ld_mss_t *m, const uint8_t *in, size_t len, size_t *pos, ld_buf_t *out) {
  size_t total;
  int rc = message_size(in + *pos, len - *pos, &total);
  if (rc == 0 && total > len - *pos)
    rc = LD_ERR_TRUNCATED;
  if (rc == LD_ERR_TRUNCATED) {
    rc = ld_buf_append(&m->partial, in + *pos, len - *pos);
    *pos = len;
    return rc;
  }
  if (rc != 0)
    return rc;
  rc = on_message(m, in + *pos, total, out);
  *pos += total;
  return rc;
}

int ld_mss_read(ld_mss_t *m, const uint8_t *in, size_t len, size_t *consumed, ld_buf_t *out) {
  size_t pos = 0;
  int rc = m->done ? LD_MSS_DONE : LD_MSS_PENDING;
  while (rc == LD_MSS_PENDING && pos < len) {
    if (m->partial.len > 0)
      rc = step_partial(m, in, len, &pos, out);
    else
      rc = step_direct(m, in, len, &pos, out);
  }
  *consumed = pos;
  return rc;
}

const char *ld_mss_selected(const ld_mss_t *m) {
  return m->done ? m->selected : NULL;
}

size_t ld_mss_selected_index(const ld_mss_t *m) {
  return m->next;
}
