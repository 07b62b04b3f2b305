"""The session-scoped `spark` fixture (imported by conftest.py).

Started on first use only, so runs without Spark tests start no JVM; stopped
at the end of the run. Its warehouse is a pytest temporary folder, exposed as
the `spark_warehouse` fixture: ``<warehouse>/db/<table>`` is both Spark's
``hs_spark.db.<table>`` and a folder ``hdb.Table`` opens.
"""

import os

import pytest

import spark_util


@pytest.fixture(scope="session")
def spark_warehouse(tmp_path_factory):
    return str(tmp_path_factory.mktemp("spark-warehouse"))


@pytest.fixture(scope="session")
def spark(spark_warehouse, tmp_path_factory):
    session = spark_util.start_spark(spark_warehouse, str(tmp_path_factory.mktemp("spark-scratch")))
    print(f"\nspark: started in {spark_util.STARTUP_SECONDS:.1f} s", flush=True)
    session.sql(f"CREATE NAMESPACE IF NOT EXISTS {spark_util.CATALOG}.db")
    yield session
    session.stop()


@pytest.fixture
def spark_table(spark, spark_warehouse, request):
    """A fresh table name for one test: (identifier 'db.<name>', folder)."""
    name = "t_" + "".join(ch if ch.isalnum() else "_" for ch in request.node.name)[:80].lower()
    name = name.strip("_")
    path = os.path.join(spark_warehouse, "db", name)
    spark.sql(f"DROP TABLE IF EXISTS {spark_util.CATALOG}.db.{name}")
    return f"db.{name}", path
