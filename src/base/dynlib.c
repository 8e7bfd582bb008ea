#include "base/dynlib.h"

#include <dlfcn.h>

#include "base/error.h"
#include "base/log.h"

static const char *last_error(void) {
  const char *why = dlerror();
  return why != NULL ? why : "?";
}

static void *open_library(const char *soname, const char *fallback, const char *topic,
                          const char *consequence) {
  void *lib = dlopen(soname, RTLD_NOW | RTLD_LOCAL);
  if (lib != NULL)
    return lib;
  if (fallback != NULL) {
    ld_log(LD_LOG_DEBUG, topic, "cannot load %s: %s", soname, last_error());
    lib = dlopen(fallback, RTLD_NOW | RTLD_LOCAL);
  }
  if (lib == NULL)
    ld_log(LD_LOG_ERROR, topic, "cannot load %s%s%s%s: %s; %s", soname,
           fallback != NULL ? " (nor " : "", fallback != NULL ? fallback : "",
           fallback != NULL ? ")" : "", last_error(), consequence);
  return lib;
}

int ld_dynlib_load(const char *soname, const char *fallback, const ld_dynlib_sym_t *syms,
                   size_t n_syms, const char *topic, const char *consequence) {
  void *lib = open_library(soname, fallback, topic, consequence);
  if (lib == NULL)
    return LD_ERR_IO;
  for (size_t i = 0; i < n_syms; i++) {
    *syms[i].slot = dlsym(lib, syms[i].name);
    if (*syms[i].slot == NULL) {
      ld_log(LD_LOG_ERROR, topic, "%s lacks %s: %s; %s", soname, syms[i].name, last_error(),
             consequence);
      dlclose(lib);
      return LD_ERR_IO;
    }
  }
  return 0;
}
