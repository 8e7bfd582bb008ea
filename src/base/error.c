#include "base/error.h"

#include <stdarg.h>
#include <stdio.h>

const char *ld_strerror(int err) {
  switch (err) {
#define LD_ERR_TEXT_(name, value, text)                                                            \
  case value:                                                                                      \
    return text;
    LD_ERRNO_MAP(LD_ERR_TEXT_)
#undef LD_ERR_TEXT_
  default:
    return "unknown error";
  }
}

const char *ld_errname(int err) {
  switch (err) {
#define LD_ERR_NAME_(name, value, text)                                                            \
  case value:                                                                                      \
    return #name;
    LD_ERRNO_MAP(LD_ERR_NAME_)
#undef LD_ERR_NAME_
  default:
    return "UNKNOWN";
  }
}

int ld_error_fmt(char *err, size_t errlen, int code, const char *fmt, ...) {
  if (err != NULL && errlen > 0) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
  }
  return code;
}
