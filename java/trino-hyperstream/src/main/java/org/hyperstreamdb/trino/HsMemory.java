package org.hyperstreamdb.trino;

import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;

/** The JVM's one Arrow root allocator for the connector; each reader takes a child. */
final class HsMemory {
  private static final RootAllocator ROOT = new RootAllocator();

  private HsMemory() {}

  static BufferAllocator child(String name) {
    return ROOT.newChildAllocator(name, 0, Long.MAX_VALUE);
  }
}
