package org.hyperstreamdb.spark;

import org.apache.spark.sql.connector.read.InputPartition;

/** The merged top-k (Arrow IPC stream bytes, built on the driver by HsVectorPlan). */
final class HsVectorPartition implements InputPartition {
  private static final long serialVersionUID = 1L;
  final byte[] ipc;

  HsVectorPartition(byte[] ipc) {
    this.ipc = ipc;
  }
}
