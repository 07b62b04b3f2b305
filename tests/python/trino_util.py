"""Run SQL through Trino 476 with our connector (java/trino-hyperstream).

``run_trino(root, cases)`` (or ``TrinoRunner``, started before the tables
are written) hands a list of cases ({id, sql, metrics?, session?, group?})
to the JUnit test HsQueryRunnerTest, which starts trino-testing's
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


class TrinoRunner:
    """A Trino query runner started now, in the background (the JUnit test
    HsQueryRunnerTest starts Trino, then waits for the cases file), so the
    caller writes its tables while Trino starts; ``run(cases)`` hands it the
    cases once and returns {case id: result} (plus "$startup"). `threads`: how
    many cases run at once (cases sharing a "group" run in their order, one
    after another); 1 for timings. `jvm`: extra flags of the runner's JVM
    (HS_TRINO_JVM overrides). Close it (or use ``with``) to stop a runner
    that was never handed its cases."""

    def __init__(self, root, scratch, iceberg_dir=None, threads=1, jvm=None):
        if not os.path.exists(os.path.join(JAVA_HOME, "bin", "java")):
            raise RuntimeError(f"Trino 476 needs Java 24+: no JDK at {JAVA_HOME} "
                               "(set HS_TRINO_JAVA_HOME)")
        if not os.path.exists(JAR):
            raise RuntimeError(f"{JAR} is missing (run `bash scripts/build_java.sh`)")
        self.cases_file = os.path.join(scratch, "cases.json")
        self.out_file = os.path.join(scratch, "results.json")
        for f in (self.cases_file, self.out_file):
            if os.path.exists(f):
                os.remove(f)
        env = dict(os.environ, JAVA_HOME=JAVA_HOME)
        cmd = ["mvn", "-o", "-q", "-B", "-f", os.path.join(MODULE, "pom.xml"), "surefire:test",
               "-Dtest=HsQueryRunnerTest", "-Dsurefire.failIfNoSpecifiedTests=false",
               f"-Dhs.trino.root={root}", f"-Dhs.trino.cases={self.cases_file}",
               f"-Dhs.trino.out={self.out_file}", f"-Dhs.trino.threads={threads}"]
        jvm = os.environ.get("HS_TRINO_JVM", jvm)
        if jvm:
            cmd.append(f"-Dhs.trino.jvm={jvm}")
        if iceberg_dir:
            cmd += ["-Pbench", f"-Dhs.trino.iceberg={iceberg_dir}"]
        self.log = open(os.path.join(scratch, "runner.log"), "w+")
        self.proc = subprocess.Popen(cmd, env=env, stdout=self.log, stderr=subprocess.STDOUT,
                                     text=True)

    def run(self, cases, timeout=240):
        tmp = self.cases_file + ".tmp"
        with open(tmp, "w") as f:
            json.dump(cases, f)
        os.rename(tmp, self.cases_file)  # whole, at once: the runner polls for it
        try:
            rc = self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.close()
            raise RuntimeError(f"Trino run did not finish in {timeout} s")
        if rc != 0 or not os.path.exists(self.out_file):
            self.log.seek(0)
            raise RuntimeError(f"Trino run failed ({rc}):\n{self.log.read()[-8000:]}")
        with open(self.out_file) as f:
            return {r["id"]: r for r in json.load(f)}

    def close(self):
        if self.proc.poll() is None:
            self.proc.terminate()  # Maven's shutdown stops the forked test JVM too
            try:
                self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.log.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def run_trino(root, cases, scratch, timeout=240, iceberg_dir=None, threads=1):
    """{case id: result dict} (plus "$startup": the runner's start, seconds).
    `iceberg_dir`: also a catalog ``iceberg`` (Trino's Iceberg connector over a
    file metastore there; Maven profile ``bench``), for the benchmark."""
    with TrinoRunner(root, scratch, iceberg_dir, threads) as r:
        return r.run(cases, timeout)
