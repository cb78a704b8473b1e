"""The Spark recipe of docs/spark.md on a local SparkSession (two cores): the page's blocks run
and print what the page shows, and its ``spark_map_reduce`` gives the sums numpy gives on a
multi-file Parquet log."""

from __future__ import annotations

import os
import shutil
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from extras import need  # noqa: E402

pyspark = need("pyspark")
pd = pytest.importorskip("pandas")
pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")
if shutil.which("java") is None:
    pytest.skip("Spark needs Java (no java on PATH)", allow_module_level=True)

import chunk_sums  # noqa: E402
from chunk_sums import (add, chan, frame, moments, numpy_moments, numpy_sums, sums,  # noqa: E402
                        to_sample)
from test_docs import _run_python, parse  # noqa: E402

# pyspark 4 warns that it does not fully support pandas 3: what these tests use works.
pytestmark = pytest.mark.filterwarnings("ignore:PySpark does not yet fully support pandas")
PAGE = Path(__file__).resolve().parents[2] / "docs" / "spark.md"
REL = 1e-12  # the sums differ from numpy's only by the order of additions


@pytest.fixture(scope="module")
def spark():
    # The executors' Python is this one (with elcvx and the test's helpers importable).
    saved = os.environ.get("PYSPARK_PYTHON")
    os.environ["PYSPARK_PYTHON"] = sys.executable
    started = time.perf_counter()
    session = (pyspark.sql.SparkSession.builder.master("local[2]").appName("elcvx-tests")
               .config("spark.ui.enabled", "false").getOrCreate())
    session.sparkContext.setLogLevel("ERROR")
    session.sparkContext.addPyFile(chunk_sums.__file__)
    print(f"SparkSession started in {time.perf_counter() - started:.1f} s")
    yield session
    session.stop()
    if saved is None:
        del os.environ["PYSPARK_PYTHON"]
    else:
        os.environ["PYSPARK_PYTHON"] = saved


@pytest.fixture(scope="module")
def page(spark):
    """The page's blocks run in order in one namespace (each Python block's output checked
    against the text block below it); the namespace, with the recipe's functions."""
    namespace = {"__name__": "__docs__"}
    blocks = [b for b in parse(PAGE) if b.lang == "python"]
    assert blocks, "docs/spark.md has no Python block"
    for block in blocks:
        _run_python(block, namespace)
    return namespace


@pytest.fixture(scope="module")
def log(spark, tmp_path_factory):
    folder = tmp_path_factory.mktemp("log")
    parts = [frame(400, 1), frame(1000, 2), frame(250, 3)]
    for i, df in enumerate(parts):
        pq.write_table(pa.Table.from_pandas(df, preserve_index=False), folder / f"part-{i}.parquet")
    return spark.read.parquet(str(folder)), pd.concat(parts, ignore_index=True)


def test_page_runs_and_prints_what_it_shows(page):
    assert callable(page["spark_map_reduce"])


def test_sums_equal_numpy(page, log):
    df, whole = log
    got = page["spark_map_reduce"](df.repartition(3), to_sample, sums, add)
    np.testing.assert_allclose(got, numpy_sums(whole), rtol=REL, atol=0)


def test_chan_mean_and_variance_equal_numpy(page, log):
    df, whole = log
    n, mean, m2 = page["spark_map_reduce"](df, to_sample, moments, chan)
    np.testing.assert_allclose([n, mean, m2 / n], numpy_moments(whole), rtol=REL, atol=0)
