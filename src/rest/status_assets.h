/* The status page's files (the files of src/rest/status/), embedded at build time by
 * cmake/embed.cmake into a generated C file: nothing is read from disk and nothing loads from
 * elsewhere, so the page works on a node without a network or a file system of its own. */
#ifndef LD_REST_STATUS_ASSETS_H
#define LD_REST_STATUS_ASSETS_H

#include <stddef.h>

typedef struct ld_rest_asset {
  const char *name; /* file name: "index.html", "app.js", "style.css" */
  const unsigned char *data;
  size_t len;
} ld_rest_asset_t;

extern const ld_rest_asset_t ld_rest_status_assets[];
extern const size_t ld_rest_status_n_assets;

#endif
