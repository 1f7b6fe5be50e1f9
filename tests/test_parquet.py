"""The run folder's Parquet writer (cnsim.parquet): what it writes reads back exactly with
pyarrow and DuckDB, whatever the table — and `cnsim run` writes its folder without pyarrow.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import duckdb
import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from cnsim import parquet
from hypothesis import given, settings
from hypothesis import strategies as st

names_st = st.lists(st.text(min_size=0, max_size=12), min_size=1, max_size=40, unique=True)


@st.composite
def tables(draw: st.DrawFn) -> tuple[list[str], np.ndarray, np.ndarray]:
    names = draw(names_st)
    n = draw(st.integers(0, 300))
    codes = np.array(draw(st.lists(st.integers(0, len(names) - 1), min_size=n, max_size=n)), dtype=np.int64)
    values = np.array(draw(st.lists(st.floats(allow_nan=True, allow_infinity=True), min_size=n, max_size=n)), dtype=np.float64)
    return names, codes, values


def _write(path: Path, names: list[str], codes: np.ndarray, values: np.ndarray) -> None:
    t = np.arange(len(codes), dtype=np.float64) * 1e-3
    parquet.write_table(path, [("t_s", t), ("entity", (names, codes)), ("gbps", values)])


@settings(max_examples=60, deadline=None)
@given(tables())
def test_any_table_reads_back_exactly_with_pyarrow(tmp_path_factory: pytest.TempPathFactory, table: tuple[list[str], np.ndarray, np.ndarray]) -> None:
    names, codes, values = table
    path = tmp_path_factory.mktemp("pq") / "t.parquet"
    _write(path, names, codes, values)
    got = pq.read_table(path)
    assert got.schema == pa.schema([("t_s", pa.float64()), ("entity", pa.string()), ("gbps", pa.float64())])
    assert got.column("entity").to_pylist() == [names[c] for c in codes]
    # bit-exact doubles, NaN and infinities included
    assert got.column("gbps").to_numpy().tobytes() == values.tobytes()
    assert got.column("t_s").to_numpy().tobytes() == (np.arange(len(codes)) * 1e-3).tobytes()


def test_duckdb_reads_it_and_pages_split(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(parquet, "PAGE_ROWS", 1000)  # several pages per column
    names = [f"flow:{i}->{i + 1}" for i in range(300)]
    codes = np.repeat(np.arange(300), 17)
    values = np.arange(len(codes), dtype=np.float64) / 7
    _write(tmp_path / "t.parquet", names, codes, values)
    assert pq.ParquetFile(tmp_path / "t.parquet").metadata.num_rows == 5100
    rows = duckdb.sql(f"select entity, count(*), sum(gbps) from '{tmp_path / 't.parquet'}' group by entity order by entity").fetchall()
    want = sorted((names[i], 17, float(values[codes == i].sum())) for i in range(300))
    assert [(e, n) for e, n, _ in rows] == [(e, n) for e, n, _ in want]
    assert [s for _, _, s in rows] == pytest.approx([s for _, _, s in want])
    one = pq.read_table(tmp_path / "t.parquet", filters=[("entity", "==", "flow:7->8")])
    assert one.column("gbps").to_pylist() == values[codes == 7].tolist()


def test_wide_dictionaries(tmp_path: Path) -> None:
    """Dictionary indices wider than two bytes (RLE values of three bytes): 70,000 flows."""
    names = [f"flow:{i}->{i + 1}" for i in range(70_000)]
    codes = np.repeat(np.arange(70_000)[::-1], 2)  # descending: runs end at every row pair
    values = np.arange(len(codes), dtype=np.float64)
    _write(tmp_path / "w.parquet", names, codes, values)
    got = pq.read_table(tmp_path / "w.parquet")
    assert got.column("entity").to_pylist() == [names[c] for c in codes]
    assert duckdb.sql(f"select count(distinct entity), max(entity) from '{tmp_path / 'w.parquet'}'").fetchall() == [(70_000, max(names))]


def test_empty_table(tmp_path: Path) -> None:
    _write(tmp_path / "e.parquet", [], np.zeros(0, np.int64), np.zeros(0))
    got = pq.read_table(tmp_path / "e.parquet")
    assert got.num_rows == 0 and got.column_names == ["t_s", "entity", "gbps"]
    assert duckdb.sql(f"select count(*) from '{tmp_path / 'e.parquet'}'").fetchall() == [(0,)]


def test_bad_columns_are_refused(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="different lengths"):
        parquet.write_table(tmp_path / "x.parquet", [("a", np.zeros(2)), ("b", np.zeros(3))])
    with pytest.raises(ValueError, match="codes outside"):
        parquet.write_table(tmp_path / "x.parquet", [("e", (["a"], np.array([0, 1])))])


def test_a_run_and_its_folder_need_no_pyarrow(tmp_path: Path) -> None:
    """Issue 14: `cnsim run` stays small and quick by not importing pyarrow (about 50 MiB and
    50 ms), nor rich when it prints nothing (20 ms), nor ``inspect``'s source reader for the key
    reference's docstrings (20 ms); what it writes is what `Result.series` gives."""
    pytest.importorskip("cnsim._core")
    code = f"""
import sys
from cnsim.cli import main
sys.argv = ["cnsim", "run", "kd-symmetric-single-hs", "--duration", "2ms", "--no-plots", "--quiet", "--out", {str(tmp_path / "run")!r}]
try:
    main()
except SystemExit as e:
    assert not e.code, e.code
assert "pyarrow" not in sys.modules, "the run path imported pyarrow"
assert "rich.console" not in sys.modules, "a --quiet run on no terminal imported rich"
import linecache
assert not [f for f in linecache.cache if f.endswith("schema.py")], "the run path read the schema's source"
"""
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    from cnsim import Result, run

    folder = Result.load(tmp_path / "run")
    fresh = run("kd-symmetric-single-hs", duration="2ms")
    assert folder.kinds == fresh.kinds and "throughput" in folder.kinds
    for kind in folder.kinds:
        assert folder.series(kind).equals(fresh.series(kind)), kind
