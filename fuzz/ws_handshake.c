/* Fuzz target: the WebSocket opening handshake parsers of both roles (p2p/ws_session.h), and a
 * server session reading the bytes as a client's first flight, in two pieces. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "base/error.h"
#include "p2p/ws_session.h"

#define ACCEPT "s3pPLMBiTxaQ9kYGzzhZRbK+xOo="

static void check_request(const uint8_t *data, size_t size) {
  ld_ws_request_t req;
  size_t consumed = 0;
  const char *why = NULL;
  int rc = ld_ws_parse_request(data, size, &req, &consumed, &why);
  if (why == NULL)
    abort();
  if (rc == 0) {
    char accept[LD_WS_ACCEPT_TEXT_LEN + 1];
    if (consumed > size || consumed > LD_WS_MAX_HEADER_BLOCK ||
        strlen(req.key) != LD_WS_KEY_TEXT_LEN ||
        ld_ws_accept_for_key(req.key, LD_WS_KEY_TEXT_LEN, accept) != 0)
      abort();
  } else if (rc == LD_ERR_TRUNCATED && size >= LD_WS_MAX_HEADER_BLOCK) {
    abort(); /* the cap must end the wait */
  }
}

static void check_response(const uint8_t *data, size_t size) {
  size_t consumed = 0;
  int rc = ld_ws_parse_response(data, size, ACCEPT, &consumed, NULL);
  if (rc == 0 && (consumed > size || consumed > LD_WS_MAX_HEADER_BLOCK))
    abort();
}

static void check_server_session(const uint8_t *data, size_t size) {
  ld_ws_session_config_t cfg = {.server = true};
  ld_ws_session_t *s = ld_ws_session_new(&cfg);
  if (s == NULL)
    return;
  ld_buf_t app, out;
  ld_buf_init(&app);
  ld_buf_init(&out);
  size_t split = size > 0 ? data[0] % (size + 1) : 0;
  int rc = ld_ws_session_read(s, data, split, &app, &out);
  if (rc == 0)
    rc = ld_ws_session_read(s, data + split, size - split, &app, &out);
  if (app.len > size)
    abort();
  if (ld_ws_session_is_open(s) && memcmp(out.data, "HTTP/1.1 101 ", 13) != 0)
    abort();
  if (!ld_ws_session_is_open(s) && rc != 0 && rc != LD_ERR_NOMEM &&
      (out.len < 13 || memcmp(out.data, "HTTP/1.1 4", 10) != 0))
    abort(); /* every refusal is answered */
  ld_ws_session_free(s);
  ld_buf_clear(&app);
  ld_buf_clear(&out);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  check_request(data, size);
  check_response(data, size);
  check_server_session(data, size);
  return 0;
}
