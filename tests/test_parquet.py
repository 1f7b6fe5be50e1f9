"""The run folder's Parquet writer (cnsim.parquet): what it writes reads back exactly with
pyarrow and DuckDB, whatever the table — and `cnsim run` writes its folder without pyarrow.
"""

from __future__ import annotations

import subprocess
import sys
import zlib
from pathlib import Path
from typing import Any

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
    with pytest.raises(ValueError, match="codes outside"):
        parquet.write_table(tmp_path / "x.parquet", [("e", (["a", "b"], np.array([1, -1])))])
    parquet.write_table(tmp_path / "x.parquet", [("e", (["a", "b"], np.array([1, 1])))])  # codes need not start at 0
    assert pq.read_table(tmp_path / "x.parquet").column("e").to_pylist() == ["b", "b"]


def test_a_run_and_its_folder_need_no_pyarrow(tmp_path: Path) -> None:
    """Issue 14: `cnsim run` stays small and quick by not importing pyarrow (about 50 MiB and
    50 ms), nor rich when it prints nothing (20 ms), nor asyncio (20 ms, with a typing_extensions
    older than the 4.16 pyproject.toml asks for), nor ``inspect``'s source reader for the key
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
assert "asyncio" not in sys.modules, "the run path imported asyncio (typing_extensions < 4.16 does, under pydantic_core)"
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


# --- the file's structure, read independently of pyarrow's and DuckDB's tolerance -------------
# Readers skip what they do not need (sizes they recompute, a list header they parse either
# way), so a file can read back and still be wrong for another reader. These tests walk the
# file themselves with a minimal Thrift compact-protocol reader.


def _read_varint(buf: bytes, at: int) -> tuple[int, int]:
    value, shift = 0, 0
    while True:
        byte = buf[at]
        at += 1
        value |= (byte & 0x7F) << shift
        shift += 7
        if not byte & 0x80:
            return value, at


def _read_struct(buf: bytes, at: int) -> tuple[dict[int, Any], int]:
    """One compact-protocol struct at ``at`` → ({field id: value}, the offset after it); the
    field types cnsim writes only (i32, i64, binary, list, struct)."""
    fields: dict[int, Any] = {}
    fid = 0
    while True:
        head = buf[at]
        at += 1
        if head == 0:
            return fields, at
        assert head >> 4, "field ids in short form only"
        fid += head >> 4
        fields[fid], at = _read_value(buf, at, head & 0x0F)


def _read_value(buf: bytes, at: int, ftype: int) -> tuple[Any, int]:
    if ftype in (5, 6):
        raw, at = _read_varint(buf, at)
        return (raw >> 1) ^ -(raw & 1), at
    if ftype == 8:
        n, at = _read_varint(buf, at)
        return buf[at : at + n], at + n
    if ftype == 12:
        return _read_struct(buf, at)
    assert ftype == 9, f"unexpected field type {ftype}"
    head = buf[at]
    at += 1
    n, etype = head >> 4, head & 0x0F
    if n == 15:
        n, at = _read_varint(buf, at)
    else:
        assert n < 15
    items = []
    for _ in range(n):
        item, at = _read_value(buf, at, etype)
        items.append(item)
    return items, at


def _footer(buf: bytes) -> dict[int, Any]:
    assert buf[:4] == b"PAR1" and buf[-4:] == b"PAR1"
    size = int.from_bytes(buf[-8:-4], "little")
    meta, end = _read_struct(buf, len(buf) - 8 - size)
    assert end == len(buf) - 8, "the footer's length covers exactly the footer"
    return meta


def _pages(buf: bytes, start: int, size: int) -> list[tuple[dict[int, Any], int, bytes]]:
    """The pages of the column chunk at [start, start + size): (header, header length, body
    decompressed); the pages tile the chunk exactly."""
    pages, at = [], start
    while at < start + size:
        header, body_at = _read_struct(buf, at)
        compressed = buf[body_at : body_at + header[3]]
        body = zlib.decompress(compressed, 31)
        assert len(body) == header[2], "uncompressed_page_size is the body's size"
        pages.append((header, body_at - at, body))
        at = body_at + header[3]
    assert at == start + size, "total_compressed_size covers the chunk's pages exactly"
    return pages


def _after_levels(rows: int, body: bytes) -> bytes:
    """A data page's body after its definition levels, which must say "all ``rows`` present":
    a 4-byte length, then one RLE run of ``rows`` ones (bit width 1)."""
    length = int.from_bytes(body[:4], "little")
    header, at = _read_varint(body, 4)
    assert header == rows << 1 and body[at : 4 + length] == b"\x01" and at + 1 == 4 + length
    return body[4 + length :]


def _rle_runs(buf: bytes, nbytes: int) -> np.ndarray:
    """The RLE runs of an RLE/bit-packed hybrid body (RLE runs only, values of ``nbytes``)."""
    out, at = [], 0
    while at < len(buf):
        header, at = _read_varint(buf, at)
        assert header & 1 == 0, "RLE runs only"
        out += [int.from_bytes(buf[at : at + nbytes], "little")] * (header >> 1)
        at += nbytes
    return np.array(out)


@pytest.mark.parametrize("n_doubles", [12, 13, 14, 19])
def test_the_files_sizes_offsets_and_list_headers_are_exact(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, n_doubles: int) -> None:
    """Tables of 13 to 20 columns (the schema holds one element more; Thrift's compact lists of
    15 and more have a long header) with pages split: every offset and size in the footer is
    the one the pages occupy, every page decodes to the table, and every column reads back
    exactly with pyarrow and DuckDB."""
    monkeypatch.setattr(parquet, "PAGE_ROWS", 400)
    names = [f"port:{i}" for i in range(4)]
    codes = np.repeat(np.arange(4), 250)
    rows = len(codes)
    doubles = {f"v{i}": np.arange(rows, dtype=np.float64) * (i + 1) / 3 for i in range(n_doubles)}
    last = f"v{n_doubles - 1}"
    path = tmp_path / "w.parquet"
    parquet.write_table(path, [("entity", (names, codes)), *doubles.items()], created_by="cnsim test")
    buf = path.read_bytes()
    meta = _footer(buf)
    assert meta[1] == 1 and meta[3] == rows and meta[6] == b"cnsim test"
    schema = meta[2]
    assert isinstance(schema, list) and len(schema) == n_doubles + 2 and schema[0][5] == n_doubles + 1
    assert [s[4] for s in schema[1:]] == [b"entity", *[k.encode() for k in doubles]]
    assert schema[1][6] == 0 and schema[1][10] == {1: {}}, "UTF8, and the logical type STRING"
    assert all(6 not in s and 10 not in s for s in schema[2:]), "doubles carry no string type"
    (group,) = meta[4]
    chunks = group[1]
    assert len(chunks) == n_doubles + 1 and group[3] == rows
    next_start = 4
    uncompressed_total = 0
    for i, chunk in enumerate(chunks):
        cmeta = chunk[3]
        start = cmeta.get(11, cmeta[9])  # the dictionary page first, when there is one
        assert chunk[2] == start == next_start, "chunks follow each other from the magic on"
        pages = _pages(buf, start, cmeta[7])
        assert cmeta[6] == sum(hlen + len(body) for _, hlen, body in pages), "total_uncompressed_size"
        assert cmeta[5] == rows
        data = [(h, _after_levels(h[5][1], body)) for h, _, body in pages if h[1] == 0]
        assert sum(h[5][1] for h, _ in data) == rows and [h[5][1] for h, _ in data] == [400, 400, 200]
        if i == 0:
            assert pages[0][0][1] == 2 and pages[0][0][7][1] == len(names), "the dictionary page first"
            assert cmeta[9] == start + pages[0][1] + pages[0][0][3], "data_page_offset right after it"
            assert [h[5][2] for h, _ in data] == [8, 8, 8], "RLE_DICTIONARY"
            assert all(body[0] == 2 for _, body in data), "the narrowest index width: 2 bits for 4 values"
            decoded = np.concatenate([_rle_runs(body[1:], 1) for _, body in data])
            assert decoded.tolist() == codes.tolist()
        else:
            assert 11 not in cmeta and cmeta[9] == start
            assert [h[5][2] for h, _ in data] == [0, 0, 0], "PLAIN"
            values = np.frombuffer(b"".join(body for _, body in data), "<f8")
            assert values.tobytes() == doubles[f"v{i - 1}"].tobytes()
        uncompressed_total += cmeta[6]
        next_start = start + cmeta[7]
    assert group[2] == uncompressed_total, "the row group's total_byte_size"
    assert next_start == len(buf) - 8 - int.from_bytes(buf[-8:-4], "little"), "the footer follows the last chunk"
    got = pq.read_table(path)
    assert got.column("entity").to_pylist() == [names[c] for c in codes]
    for name, col in doubles.items():
        assert got.column(name).to_numpy().tobytes() == col.tobytes()
    assert duckdb.sql(f"select count(*), sum({last}) from '{path}'").fetchall() == [(rows, float(doubles[last].sum()))]


def test_a_table_needs_a_column(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="at least one column"):
        parquet.write_table(tmp_path / "x.parquet", [])


@pytest.mark.parametrize("n_names", [1, 2, 128, 129, 256, 257, 65_536, 65_537])
def test_dictionaries_at_every_index_width_edge(tmp_path: Path, n_names: int) -> None:
    """The narrowest index width (1 bit for one or two values, 8 for 129 to 256, ...), and an RLE
    run's value in ceil(width / 8) bytes: the edges of one, two and three bytes."""
    names = [f"e{i}" for i in range(n_names)]
    codes = np.array([0, n_names - 1, n_names - 1, n_names // 2, 0])
    _write(tmp_path / "d.parquet", names, codes, np.arange(5.0))
    assert pq.read_table(tmp_path / "d.parquet").column("entity").to_pylist() == [names[c] for c in codes]
    buf = (tmp_path / "d.parquet").read_bytes()
    entity = _footer(buf)[4][0][1][1][3]  # row group 0, column 1 (t_s, entity, gbps): its metadata
    data_pages = _pages(buf, entity[9], entity[11] + entity[7] - entity[9])  # from the data page to the chunk's end
    assert len(data_pages) == 1
    width = max(1, (n_names - 1).bit_length())
    rest = _after_levels(5, data_pages[0][2])
    assert rest[0] == width and _rle_runs(rest[1:], (width + 7) // 8).tolist() == codes.tolist()
