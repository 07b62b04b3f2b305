#!/usr/bin/env bash
# Build java/ (the JVM connectors) with Maven into java/*/target, after the C
# build (build/release/libhyperstream_jni.so goes into the jar). Spark is
# compiled against pyspark's own jars. Offline (-o) when every artifact is
# already in the local Maven repository; otherwise Maven fetches what is
# missing (a first build: plugins and arrow-c-data, a few MB).
#   scripts/build_java.sh [native-dir]      default native dir: build/release
set -euo pipefail
cd "$(dirname "$0")/.."
native="$(cd "${1:-build/release}" && pwd)"
test -s "$native/libhyperstream_jni.so" ||
  { echo "build_java: $native/libhyperstream_jni.so is missing (run scripts/build.sh release)" >&2; exit 1; }
jars="$(python3 -c 'import os, pyspark; print(os.path.join(os.path.dirname(pyspark.__file__), "jars"))')"
args=(-q -B -f java/pom.xml "-Dpyspark.jars=$jars" "-Dhs.native.dir=$native" -DskipTests=false)
# Offline first (no network round trips); online when something is missing.
mvn -o "${args[@]}" package >/dev/null 2>&1 || mvn "${args[@]}" package
ls -l java/spark-hyperstream/target/spark-hyperstream-*.jar
# The Trino connector: Trino 476's SPI needs Java 24+, so its module is a
# separate Maven build run with the Temurin 25 JDK (HS_TRINO_JAVA_HOME
# overrides), against the JNI jar just built. Its JUnit test is driven by
# tests/python/test_trino_connector.py (skipped here, without its cases).
trino_jdk="${HS_TRINO_JAVA_HOME:-/usr/lib/jvm/temurin-25-jdk-amd64}"
test -x "$trino_jdk/bin/javac" ||
  { echo "build_java: the Trino connector needs a JDK 24+ at $trino_jdk (set HS_TRINO_JAVA_HOME)" >&2; exit 1; }
targs=(-q -B -f java/trino-hyperstream/pom.xml)
JAVA_HOME="$trino_jdk" mvn -o "${targs[@]}" package >/dev/null 2>&1 ||
  JAVA_HOME="$trino_jdk" mvn "${targs[@]}" package
ls -l java/trino-hyperstream/target/trino-hyperstream-*.jar
