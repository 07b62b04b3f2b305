"""Run SQL through Trino 476 with our connector (java/trino-hyperstream).

``run_trino(root, cases)`` hands a list of cases ({id, sql, metrics?,
session?}) to the JUnit test HsQueryRunnerTest, which starts trino-testing's
DistributedQueryRunner once, installs our plugin as catalog ``hyperstream``
over `root` (schemas = its folders) and writes every answer to a JSON file:
rows as canonical values (timestamps as epoch microseconds, dates and
decimals as text, floats as doubles), or the error's message, and the
connector metrics summed over the query's operators when asked. Maven runs
offline with the Temurin 25 JDK that Trino needs (scripts/build_java.sh
built the module and fetched its artifacts). A missing JDK or build is an
error naming the step, never a skip.
"""

import json
import os
import subprocess

HERE = os.path.dirname(os.path.abspath(__file__))
REPO_ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
MODULE = os.path.join(REPO_ROOT, "java", "trino-hyperstream")
JAR = os.path.join(MODULE, "target", "trino-hyperstream-0.1.0.jar")
JAVA_HOME = os.environ.get("HS_TRINO_JAVA_HOME", "/usr/lib/jvm/temurin-25-jdk-amd64")


def run_trino(root, cases, scratch, timeout=240, iceberg_dir=None):
    """{case id: result dict} (plus "$startup": the runner's start, seconds).
    `iceberg_dir`: also a catalog ``iceberg`` (Trino's Iceberg connector over a
    file metastore there; Maven profile ``bench``), for the benchmark."""
    if not os.path.exists(os.path.join(JAVA_HOME, "bin", "java")):
        raise RuntimeError(f"Trino 476 needs Java 24+: no JDK at {JAVA_HOME} "
                           "(set HS_TRINO_JAVA_HOME)")
    if not os.path.exists(JAR):
        raise RuntimeError(f"{JAR} is missing (run `bash scripts/build_java.sh`)")
    cases_file = os.path.join(scratch, "cases.json")
    out_file = os.path.join(scratch, "results.json")
    with open(cases_file, "w") as f:
        json.dump(cases, f)
    env = dict(os.environ, JAVA_HOME=JAVA_HOME)
    cmd = ["mvn", "-o", "-q", "-B", "-f", os.path.join(MODULE, "pom.xml"), "surefire:test",
           "-Dtest=HsQueryRunnerTest", "-Dsurefire.failIfNoSpecifiedTests=false",
           f"-Dhs.trino.root={root}", f"-Dhs.trino.cases={cases_file}",
           f"-Dhs.trino.out={out_file}"]
    if iceberg_dir:
        cmd += ["-Pbench", f"-Dhs.trino.iceberg={iceberg_dir}"]
    p = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=timeout)
    if p.returncode != 0 or not os.path.exists(out_file):
        raise RuntimeError(f"Trino run failed ({p.returncode}):\n{p.stdout[-4000:]}\n"
                           f"{p.stderr[-4000:]}")
    with open(out_file) as f:
        return {r["id"]: r for r in json.load(f)}
