/* RLN-relay's static group and identity files. */
#include "waku/rln/group_file.h"

#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "base/hex.h"

int ld_rln_field_from_hex(const char *text, ld_fr_t *out) {
  size_t len = strlen(text);
  if (len < 3 || text[0] != '0' || (text[1] != 'x' && text[1] != 'X') || len > 2 + 64)
    return LD_ERR_BAD_ENCODING;
  char padded[64];
  size_t digits = len - 2;
  memset(padded, '0', sizeof padded);
  memcpy(padded + 64 - digits, text + 2, digits);
  uint8_t be[32], le[32];
  size_t n = 0;
  if (ld_hex_decode(padded, sizeof padded, be, sizeof be, &n) != 0 || n != 32)
    return LD_ERR_BAD_ENCODING;
  for (size_t i = 0; i < 32; i++)
    le[i] = be[31 - i];
  return ld_fr_from_bytes(out, le) == 0 ? 0 : LD_ERR_BAD_ENCODING;
}

int ld_rln_group_from_json(const json_t *root, size_t max_members, ld_fr_t **leaves, size_t *n,
                           char *err, size_t errlen) {
  size_t count = json_is_array(root) ? json_array_size(root) : 0;
  if (count == 0 || count > max_members)
    return ld_error_fmt(err, errlen, LD_ERR_MALFORMED, "not a JSON array of 1 to %zu members",
                        max_members);
  ld_fr_t *out = malloc(count * sizeof *out);
  if (out == NULL)
    return LD_ERR_NOMEM;
  for (size_t i = 0; i < count; i++) {
    const char *text = json_string_value(json_array_get(root, i));
    if (text == NULL || ld_rln_field_from_hex(text, &out[i]) != 0) {
      free(out);
      return ld_error_fmt(err, errlen, LD_ERR_MALFORMED, "member %zu is not a 0x-hex field element",
                          i);
    }
  }
  *leaves = out;
  *n = count;
  return 0;
}

int ld_rln_identity_from_json(const json_t *root, ld_fr_t *secret) {
  const char *text = json_string_value(json_object_get(root, "identitySecret"));
  return text != NULL && ld_rln_field_from_hex(text, secret) == 0 ? 0 : LD_ERR_MALFORMED;
}
