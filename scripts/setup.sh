#!/usr/bin/env bash
# Install what building and testing need, when missing: Debian -dev packages
# through apt-get, Python packages through pip. Safe to run repeatedly.
set -euo pipefail
cd "$(dirname "$0")/.."

apt_pkgs=(build-essential cmake ninja-build pkg-config libzstd-dev libsnappy-dev liblz4-dev
          zlib1g-dev libjansson-dev libbrotli-dev libpg-query-dev libroaring-dev libcurl4-openssl-dev
          clang clang-format libclang-rt-14-dev llvm)
# `setup.sh test`: also what only the test suite needs (the AArch64 cross
# compiler and qemu-user for scripts/test_neon.sh).
if [ "${1:-}" = test ] && [ "$(uname -m)" != aarch64 ]; then
  apt_pkgs+=(gcc-aarch64-linux-gnu qemu-user)
fi
# `setup.sh test`: Java 17 and Maven for the Spark-oracle tests (pyspark runs
# on the JVM; Maven fetches the Iceberg Spark runtime below), when missing.
if [ "${1:-}" = test ]; then
  command -v javac >/dev/null 2>&1 || apt_pkgs+=(openjdk-17-jdk-headless)
  command -v mvn >/dev/null 2>&1 || apt_pkgs+=(maven)
fi
missing=()
for p in "${apt_pkgs[@]}"; do
  dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing Debian packages: ${missing[*]}"
  SUDO=""
  [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}" >/dev/null
fi

# Python packages: import names of requirements-test.txt, checked before pip runs.
if ! python3 -c "import pytest, hypothesis, numpy, pandas, pyarrow, duckdb, polars, scikit_build_core, fastavro, pyiceberg, sqlalchemy, pyspark" \
    2>/dev/null || ! command -v tpchgen-cli >/dev/null; then
  echo "setup: installing Python packages from requirements-test.txt"
  python3 -m pip install -q --disable-pip-version-check -r requirements-test.txt
fi

# `setup.sh test`: the Iceberg runtime for Spark 3.5 (Scala 2.12), one jar
# with its dependencies shaded, from Maven. tests/python/spark_util.py puts it
# on spark.jars; Java test programs compile against it. Skipped when present.
ICEBERG_SPARK_JAR=build/jars/iceberg-spark-runtime-3.5_2.12-1.12.0.jar
if [ "${1:-}" = test ] && [ ! -s "$ICEBERG_SPARK_JAR" ]; then
  echo "setup: fetching $(basename "$ICEBERG_SPARK_JAR") with Maven"
  mkdir -p build/jars
  mvn -q -B dependency:copy \
    -Dartifact=org.apache.iceberg:iceberg-spark-runtime-3.5_2.12:1.12.0 \
    -DoutputDirectory=build/jars
  test -s "$ICEBERG_SPARK_JAR" || { echo "setup: Maven did not produce $ICEBERG_SPARK_JAR" >&2; exit 1; }
fi

# `setup.sh test`: Apache DataSketches' Java library (and its memory library),
# which tests/java/theta/ThetaCheck.java uses to read our theta-sketch
# statistics blobs (tests/python/test_theta_stats.py). Skipped when present.
DATASKETCHES_JARS="build/jars/datasketches-java-6.1.1.jar build/jars/datasketches-memory-3.0.2.jar"
for jar in $DATASKETCHES_JARS; do
  if [ "${1:-}" = test ] && [ ! -s "$jar" ]; then
    name=$(basename "$jar" .jar)
    echo "setup: fetching $name.jar with Maven"
    mkdir -p build/jars
    mvn -q -B dependency:copy -Dartifact="org.apache.datasketches:${name%-*}:${name##*-}" \
      -DoutputDirectory=build/jars
    test -s "$jar" || { echo "setup: Maven did not produce $jar" >&2; exit 1; }
  fi
done

# `setup.sh test`: Apache Iceberg's REST catalog server (RESTCatalogServer, in
# iceberg-open-api 1.10.0's test fixtures) and its run-time dependencies, which
# the fixtures jar does not declare: tests/rest/pom.xml lists them, Maven copies
# them into build/jars/rest (tests/python/conftest_rest.py starts the server).
# Skipped when present.
REST_JAR=build/jars/rest/iceberg-open-api-1.10.0-test-fixtures.jar
REST_S3_JAR=build/jars/rest/iceberg-aws-bundle-1.10.0.jar
if [ "${1:-}" = test ] && { [ ! -s "$REST_JAR" ] || [ ! -s "$REST_S3_JAR" ]; }; then
  echo "setup: fetching the Iceberg REST catalog server's jars with Maven"
  mkdir -p build/jars/rest
  mvn -q -B -f tests/rest/pom.xml dependency:copy-dependencies \
    -DoutputDirectory="$PWD/build/jars/rest"
  for j in "$REST_JAR" "$REST_S3_JAR"; do
    test -s "$j" || { echo "setup: Maven did not produce $j" >&2; exit 1; }
  done
fi

# `setup.sh test`: versitygw, the S3 server tests/c/test_s3.c starts (over a
# temporary directory), built from source with Go (>= 1.25, what v1.8.0's
# go.mod asks; Debian 12's golang-go is too old) into build/tools. Skipped
# when present; an error without Go, so that test_s3 never skips in CI.
VERSITYGW_VERSION=v1.8.0
if [ "${1:-}" = test ] && [ ! -x build/tools/versitygw ]; then
  GO=$(command -v go || true)
  [ -z "$GO" ] && [ -x /usr/local/go/bin/go ] && GO=/usr/local/go/bin/go
  if [ -z "$GO" ]; then
    echo "setup: no Go toolchain (>= 1.25) to build versitygw; install one into /usr/local/go" >&2
    exit 1
  fi
  echo "setup: building versitygw $VERSITYGW_VERSION with go install"
  mkdir -p build/tools
  GOBIN="$PWD/build/tools" "$GO" install "github.com/versity/versitygw/cmd/versitygw@$VERSITYGW_VERSION"
  test -x build/tools/versitygw || { echo "setup: go install did not produce build/tools/versitygw" >&2; exit 1; }
fi
