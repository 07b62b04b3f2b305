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
