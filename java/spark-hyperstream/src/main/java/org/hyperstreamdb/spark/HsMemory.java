package org.hyperstreamdb.spark;

import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;

/** One Arrow root allocator per JVM; each reader takes a child (closed with it). */
final class HsMemory {
  private static final BufferAllocator ROOT = new RootAllocator(Long.MAX_VALUE);

  private HsMemory() {}

  static BufferAllocator child(String name) {
    return ROOT.newChildAllocator("hyperstream-" + name, 0, Long.MAX_VALUE);
  }
}
