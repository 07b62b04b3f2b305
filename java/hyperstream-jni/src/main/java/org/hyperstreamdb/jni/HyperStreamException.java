package org.hyperstreamdb.jni;

/**
 * A failed call of the native library: the C API's status (hs_status) and
 * its message, which names what failed and where.
 */
public class HyperStreamException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  /** hs_status values (include/hyperstream.h). */
  public static final int INVALID_ARG = 1, IO = 2, CORRUPT = 3, UNSUPPORTED = 4, NOMEM = 5,
      SCHEMA = 6, NOT_FOUND = 7, INTERNAL = 8, CONFLICT = 9;

  private final int status;

  public HyperStreamException(int status, String message) {
    super(message);
    this.status = status;
  }

  /** The hs_status of the failure. */
  public int status() {
    return status;
  }
}
