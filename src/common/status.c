/* status.c — status names and error detail formatting. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "common.h"

const char *hs_status_str(hs_status status) {
  switch (status) {
  case HS_OK: return "ok";
  case HS_ERR_INVALID_ARG: return "invalid argument";
  case HS_ERR_IO: return "io error";
  case HS_ERR_CORRUPT: return "corrupt data";
  case HS_ERR_UNSUPPORTED: return "unsupported";
  case HS_ERR_NOMEM: return "out of memory";
  case HS_ERR_SCHEMA: return "schema mismatch";
  case HS_ERR_NOT_FOUND: return "not found";
  case HS_ERR_INTERNAL: return "internal error";
  case HS_ERR_CONFLICT: return "commit conflict";
  }
  return "unknown status";
}

hs_status hs_error_set(hs_error *err, hs_status status, const char *fmt, ...) {
  if (err == NULL || err->status != HS_OK) return status;
  err->status = status;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(err->message, sizeof err->message, fmt, ap);
  va_end(ap);
  return status;
}

void hs_error_prefix(hs_error *err, const char *fmt, ...) {
  if (err == NULL || err->status == HS_OK) return;
  char prefix[512];
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(prefix, sizeof prefix, fmt, ap);
  va_end(ap);
  if (n <= 0) return;
  /* Shift the old message right and copy the prefix in front; truncate. */
  size_t plen = (size_t)n < sizeof prefix - 1 ? (size_t)n : sizeof prefix - 1;
  size_t mlen = strlen(err->message);
  if (plen + mlen > sizeof err->message - 1) mlen = sizeof err->message - 1 - plen;
  memmove(err->message + plen, err->message, mlen);
  memcpy(err->message, prefix, plen);
  err->message[plen + mlen] = '\0';
}

int hs_status_errno(hs_status status) {
  switch (status) {
  case HS_OK: return 0;
  case HS_ERR_NOMEM: return ENOMEM;
  case HS_ERR_INVALID_ARG: return EINVAL;
  case HS_ERR_UNSUPPORTED: return ENOSYS;
  case HS_ERR_IO: return EIO;
  case HS_ERR_CORRUPT: return EBADMSG;
  case HS_ERR_NOT_FOUND: return ENOENT;
  case HS_ERR_SCHEMA: return EPROTO;
  case HS_ERR_INTERNAL: return ENOTRECOVERABLE;
  case HS_ERR_CONFLICT: return EAGAIN;
  }
  return ENOTRECOVERABLE;
}

hs_status hs_status_of_errno(int errnum) {
  switch (errnum) {
  case 0: return HS_OK;
  case ENOMEM: return HS_ERR_NOMEM;
  case EINVAL: return HS_ERR_INVALID_ARG;
  case ENOSYS: return HS_ERR_UNSUPPORTED;
  case EIO: return HS_ERR_IO;
  case EBADMSG: return HS_ERR_CORRUPT;
  case ENOENT: return HS_ERR_NOT_FOUND;
  case EPROTO: return HS_ERR_SCHEMA;
  default: return HS_ERR_INTERNAL;
  }
}
