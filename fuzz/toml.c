/* Fuzz target: the config-file parser never crashes or leaks, and whatever it accepts is a
 * well-formed document (NUL-terminated strings without NUL bytes, unique keys, capped sizes).
 * The parser belongs to the program, not the library, so its source is compiled in here. */
#include <stdlib.h>
#include <string.h>

#include "../apps/logosdelivery/toml.c"

static void check_value(const ld_toml_value_t *v, int depth) {
  if (v->type == LD_TOML_STRING && (v->string == NULL || strlen(v->string) > LD_TOML_MAX_STRING))
    abort();
  if (v->type == LD_TOML_ARRAY) {
    if (depth > 0 || v->n_items > LD_TOML_MAX_ITEMS)
      abort(); /* arrays never nest */
    for (size_t i = 0; i < v->n_items; i++)
      check_value(&v->items[i], depth + 1);
  }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  ld_toml_t doc;
  char err[LD_TOML_ERROR_MAX];
  int rc = ld_toml_parse((const char *)data, size, &doc, err, sizeof err);
  if (rc != 0) {
    if (doc.n_entries != 0 || strncmp(err, "line ", 5) != 0)
      abort(); /* failures leave nothing behind and name a line */
    return 0;
  }
  if (doc.n_entries > LD_TOML_MAX_ENTRIES)
    abort();
  for (size_t i = 0; i < doc.n_entries; i++) {
    const ld_toml_entry_t *e = &doc.entries[i];
    if (strlen(e->key) > LD_TOML_MAX_KEY || ld_toml_get(&doc, e->key) != e || e->line == 0)
      abort();
    check_value(&e->value, 0);
  }
  ld_toml_clear(&doc);
  return 0;
}
