package org.hyperstreamdb.trino;

import io.trino.spi.StandardErrorCode;
import io.trino.spi.TrinoException;
import org.hyperstreamdb.jni.HyperStreamException;

/** Native failures as Trino errors carrying the C message. */
final class HsErrors {
  private HsErrors() {}

  static TrinoException of(HyperStreamException e, String what) {
    StandardErrorCode code;
    switch (e.status()) {
      case HyperStreamException.INVALID_ARG:
        code = StandardErrorCode.INVALID_ARGUMENTS;
        break;
      case HyperStreamException.NOT_FOUND:
        code = StandardErrorCode.NOT_FOUND;
        break;
      case HyperStreamException.CONFLICT:
        code = StandardErrorCode.TRANSACTION_CONFLICT;
        break;
      case HyperStreamException.SCHEMA:
      case HyperStreamException.UNSUPPORTED:
        code = StandardErrorCode.NOT_SUPPORTED;
        break;
      default:
        code = StandardErrorCode.GENERIC_INTERNAL_ERROR;
        break;
    }
    return new TrinoException(code, "hyperstream: " + what + ": " + e.getMessage(), e);
  }
}
