#include "p2p/muxer.h"

#include "p2p/muxer_internal.h"

#define LD_MUXER_DEFAULT_MAX_STREAMS 1024u
#define LD_MUXER_DEFAULT_MAX_FRAME (1024u * 1024u)
#define LD_MUXER_DEFAULT_RECV_WINDOW (256u * 1024u)
#define LD_MUXER_DEFAULT_MAX_RECV_WINDOW (16u * 1024u * 1024u)
#define LD_MUXER_DEFAULT_SEND_WINDOW 256000u
#define LD_MUXER_DEFAULT_KEEPALIVE_MS 30000u

void ld_muxer_config_default(ld_muxer_config_t *cfg) {
  cfg->max_streams = LD_MUXER_DEFAULT_MAX_STREAMS;
  cfg->max_frame = LD_MUXER_DEFAULT_MAX_FRAME;
  cfg->recv_window = LD_MUXER_DEFAULT_RECV_WINDOW;
  cfg->max_recv_window = LD_MUXER_DEFAULT_MAX_RECV_WINDOW;
  cfg->send_window = LD_MUXER_DEFAULT_SEND_WINDOW;
  cfg->keepalive_ms = LD_MUXER_DEFAULT_KEEPALIVE_MS;
}

const ld_muxer_callbacks_t ld_muxer_no_callbacks = {0};

int ld_muxer_move_output(ld_buf_t *pending, ld_buf_t *out) {
  if (pending->len == 0)
    return 0;
  if (out->len == 0) {
    ld_buf_t spare = *out;
    *out = *pending;
    *pending = spare;
    return 0;
  }
  int rc = ld_buf_append(out, pending->data, pending->len);
  if (rc == 0)
    ld_buf_reset(pending);
  return rc;
}
