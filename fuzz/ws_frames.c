/* Fuzz target: the read path of an open WebSocket session (p2p/ws_session.h) over libwslay.
 * Byte 0 picks the role (bit 0: server or client) and the size of the pieces the rest is fed in
 * (bits 1-7); the session has completed a valid opening handshake first. A write and a close
 * follow the input. The payload handed over can never exceed the input. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "base/error.h"
#include "p2p/ws_session.h"

#define FUZZ_MAX_FRAME (64u * 1024)

static const char request[] =
    "GET / HTTP/1.1\r\nHost: h\r\nUpgrade: websocket\r\n"
    "Connection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
    "Sec-WebSocket-Version: 13\r\n\r\n";

/* A session through its handshake, or NULL. */
static ld_ws_session_t *open_session(bool server, ld_buf_t *scratch) {
  ld_ws_session_config_t cfg = {.server = server, .max_frame = FUZZ_MAX_FRAME, .host = "h:1"};
  ld_ws_session_t *s = ld_ws_session_new(&cfg);
  if (s == NULL)
    return NULL;
  ld_buf_t app;
  ld_buf_init(&app);
  int rc;
  if (server) {
    rc = ld_ws_session_read(s, (const uint8_t *)request, strlen(request), &app, scratch);
  } else {
    /* answer the session's own request as a server would */
    ld_ws_request_t req;
    size_t used = 0;
    char accept[LD_WS_ACCEPT_TEXT_LEN + 1];
    ld_buf_t answer;
    ld_buf_init(&answer);
    rc = ld_ws_session_start(s, scratch);
    if (rc == 0)
      rc = ld_ws_parse_request(scratch->data, scratch->len, &req, &used, NULL);
    if (rc == 0)
      rc = ld_ws_accept_for_key(req.key, LD_WS_KEY_TEXT_LEN, accept);
    if (rc == 0)
      rc = ld_ws_write_response(&answer, accept);
    if (rc == 0)
      rc = ld_ws_session_read(s, answer.data, answer.len, &app, scratch);
    ld_buf_clear(&answer);
  }
  ld_buf_clear(&app);
  if (rc != 0 || !ld_ws_session_is_open(s))
    abort(); /* a valid handshake must open the session */
  return s;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size == 0)
    return 0;
  bool server = (data[0] & 1) == 0;
  size_t piece = (size_t)(data[0] >> 1) * 37 + 1;
  data++;
  size--;
  ld_buf_t app, out;
  ld_buf_init(&app);
  ld_buf_init(&out);
  ld_ws_session_t *s = open_session(server, &out);
  if (s == NULL)
    return 0;
  int rc = 0;
  for (size_t off = 0; off < size && rc == 0; off += piece) {
    size_t n = size - off < piece ? size - off : piece;
    rc = ld_ws_session_read(s, data + off, n, &app, &out);
  }
  if (app.len > size)
    abort();
  if (rc != 0 && ld_ws_session_read(s, data, size, &app, &out) != LD_ERR_STATE)
    abort(); /* a failed session takes no more input */
  rc = ld_ws_session_write(s, data, size, &out);
  if (rc != 0 && rc != LD_ERR_CLOSED && rc != LD_ERR_NOMEM)
    abort();
  ld_ws_session_close(s, LD_WS_CLOSE_NORMAL, &out);
  ld_ws_session_free(s);
  ld_buf_clear(&app);
  ld_buf_clear(&out);
  return 0;
}
