package org.hyperstreamdb.jni;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;

/**
 * Loads libhyperstream_jni.so: from the system property
 * {@code hyperstream.native.lib} when set (a path, for development), else
 * from this jar's {@code native/<os>-<arch>/} resource, extracted once per
 * JVM into a temporary file (deleted at exit).
 */
public final class NativeLoader {
  private static boolean loaded;

  private NativeLoader() {}

  public static synchronized void load() {
    if (loaded) return;
    String override = System.getProperty("hyperstream.native.lib");
    if (override != null && !override.isEmpty()) {
      System.load(override);
      loaded = true;
      return;
    }
    String os = System.getProperty("os.name", "").toLowerCase().startsWith("linux") ? "linux" : null;
    String arch = System.getProperty("os.arch", "");
    if (arch.equals("amd64") || arch.equals("x86_64")) arch = "x86-64";
    String resource = "/native/linux-x86_64/libhyperstream_jni.so";
    if (os == null || !arch.equals("x86-64")) {
      throw new UnsatisfiedLinkError("hyperstream: no native library for "
          + System.getProperty("os.name") + "/" + System.getProperty("os.arch")
          + " (this jar carries linux-x86_64 only)");
    }
    try (InputStream in = NativeLoader.class.getResourceAsStream(resource)) {
      if (in == null) {
        throw new UnsatisfiedLinkError("hyperstream: " + resource + " is not in the jar "
            + "(build the C library with CMake before the Maven build)");
      }
      Path tmp = Files.createTempFile("libhyperstream_jni", ".so");
      tmp.toFile().deleteOnExit();
      Files.copy(in, tmp, StandardCopyOption.REPLACE_EXISTING);
      System.load(tmp.toAbsolutePath().toString());
      loaded = true;
    } catch (IOException e) {
      throw new UnsatisfiedLinkError("hyperstream: cannot extract " + resource + ": " + e);
    }
  }
}
