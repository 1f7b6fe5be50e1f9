"""A minimal Parquet writer for the run folder's long-format series (contract "series").

``cnsim run`` writes its series without importing pyarrow: pyarrow and its Parquet module hold
about 50 MiB and take 50 ms to import, more than the whole rest of a short run (issue 14: a
16-host run under 60 MiB, under 0.3 s outside the engine). Reading stays with pyarrow (and
DuckDB, polars): :meth:`cnsim.Result.series` and the catalogue read what this module writes.

The subset written is the one the series need, nothing more (Apache Parquet format 2, the
``parquet.thrift`` definitions): one row group; every column OPTIONAL (nullable, like the
columns pyarrow writes from numpy) with every value present; DOUBLE columns PLAIN-encoded; one
STRING column dictionary-encoded (a PLAIN dictionary page, then RLE_DICTIONARY data pages whose
indices are RLE runs — an entity-major table is one run per entity); pages GZIP-compressed at
level 1 (stdlib zlib; about pyarrow's default Snappy size: a 300 ms throughput series of 158 KB
is 21 KB, in half a millisecond); no statistics; data pages of at most ``PAGE_ROWS`` rows.
Metadata is Thrift's compact protocol.
"""

from __future__ import annotations

import os
import struct
import zlib
from collections.abc import Sequence
from typing import Any

import numpy as np

__all__ = ["write_table", "PAGE_ROWS"]

#: rows per data page (a reader's page buffer stays small whatever the run's length)
PAGE_ROWS = 1 << 20

# parquet.thrift enums
_DOUBLE, _BYTE_ARRAY = 5, 6
_OPTIONAL = 1
_UTF8 = 0
_PLAIN, _RLE, _RLE_DICTIONARY = 0, 3, 8
_GZIP = 2
_DATA_PAGE, _DICTIONARY_PAGE = 0, 2

# Thrift compact protocol field types
_T_I32, _T_I64, _T_BINARY, _T_LIST, _T_STRUCT = 5, 6, 8, 9, 12


def _varint(n: int) -> bytes:
    out = bytearray()
    while True:
        byte = n & 0x7F
        n >>= 7
        if n:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


def _zigzag(n: int) -> bytes:
    return _varint((n << 1) ^ (n >> 63))


class _Struct:
    """A Thrift struct in the compact protocol, built field by field in increasing id order."""

    def __init__(self) -> None:
        self.buf = bytearray()
        self.last = 0

    def _header(self, fid: int, ftype: int) -> None:
        delta = fid - self.last
        assert 0 < delta <= 15, "fields in increasing id order, less than 16 apart"
        self.buf.append((delta << 4) | ftype)
        self.last = fid

    def i32(self, fid: int, value: int) -> _Struct:
        self._header(fid, _T_I32)
        self.buf += _zigzag(value)
        return self

    def i64(self, fid: int, value: int) -> _Struct:
        self._header(fid, _T_I64)
        self.buf += _zigzag(value)
        return self

    def string(self, fid: int, value: str) -> _Struct:
        data = value.encode("utf-8")
        self._header(fid, _T_BINARY)
        self.buf += _varint(len(data)) + data
        return self

    def struct(self, fid: int, value: _Struct) -> _Struct:
        self._header(fid, _T_STRUCT)
        self.buf += value.end()
        return self

    def list(self, fid: int, elem_type: int, items: Sequence[bytes]) -> _Struct:
        """A list whose elements are already encoded (``_zigzag`` ints, strings, ended structs)."""
        self._header(fid, _T_LIST)
        n = len(items)
        self.buf += bytes([(n << 4) | elem_type]) if n < 15 else bytes([0xF0 | elem_type]) + _varint(n)
        for item in items:
            self.buf += item
        return self

    def end(self) -> bytes:
        return bytes(self.buf) + b"\x00"


def _binary(value: str) -> bytes:
    data = value.encode("utf-8")
    return _varint(len(data)) + data


def _all_present(rows: int) -> bytes:
    """Definition levels of `rows` present values (bit width 1): one RLE run, length-prefixed
    (no run at all for an empty page)."""
    run = _varint(rows << 1) + b"\x01" if rows else b""
    return struct.pack("<I", len(run)) + run


class _Pages:
    """A column chunk's pages: headers and GZIP-compressed bodies, and the chunk's two sizes."""

    def __init__(self) -> None:
        self.buf = bytearray()
        self.uncompressed = 0

    def add(self, page_type: int, fid: int, detail: _Struct, body: bytes) -> None:
        gz = zlib.compressobj(1, zlib.DEFLATED, 31)  # wbits 31: the gzip format Parquet's GZIP names
        packed = gz.compress(body) + gz.flush()
        header = _Struct().i32(1, page_type).i32(2, len(body)).i32(3, len(packed)).struct(fid, detail).end()
        self.buf += header + packed
        self.uncompressed += len(header) + len(body)


def _data_page(pages: _Pages, rows: int, encoding: int, body: bytes) -> None:
    pages.add(_DATA_PAGE, 5, _Struct().i32(1, rows).i32(2, encoding).i32(3, _RLE).i32(4, _RLE), body)


def _double_pages(values: np.ndarray) -> _Pages:
    pages = _Pages()
    data = np.ascontiguousarray(values, dtype="<f8")
    for start in range(0, max(len(data), 1), PAGE_ROWS):
        part = data[start : start + PAGE_ROWS]
        _data_page(pages, len(part), _PLAIN, _all_present(len(part)) + part.tobytes())
    return pages


def _rle_runs(codes: np.ndarray, width: int) -> bytes:
    """The RLE/bit-packed hybrid encoding of `codes` as RLE runs only (one per run of equal codes)."""
    if len(codes) == 0:
        return b""
    edges = np.flatnonzero(np.diff(codes)) + 1
    starts = np.concatenate(([0], edges))
    lengths = np.diff(np.concatenate((starts, [len(codes)])))
    nbytes = (width + 7) // 8
    out = bytearray()
    for start, length in zip(starts.tolist(), lengths.tolist(), strict=True):
        out += _varint(length << 1) + int(codes[start]).to_bytes(nbytes, "little")
    return bytes(out)


def _dictionary_pages(names: Sequence[str], codes: np.ndarray) -> tuple[_Pages, int]:
    """The dictionary page and the data pages of a dictionary-encoded string column, and the
    offset of the first data page among them."""
    pages = _Pages()
    dictionary = b"".join(struct.pack("<I", len(b)) + b for b in (n.encode("utf-8") for n in names))
    pages.add(_DICTIONARY_PAGE, 7, _Struct().i32(1, len(names)).i32(2, _PLAIN), dictionary)
    first_data = len(pages.buf)
    width = max(1, (len(names) - 1).bit_length())
    for start in range(0, max(len(codes), 1), PAGE_ROWS):
        part = codes[start : start + PAGE_ROWS]
        _data_page(pages, len(part), _RLE_DICTIONARY, _all_present(len(part)) + bytes([width]) + _rle_runs(part, width))
    return pages, first_data


def write_table(
    path: str | os.PathLike[str],
    columns: Sequence[tuple[str, Any]],
    created_by: str = "cnsim",
) -> None:
    """Write a table to ``path`` as Parquet.

    ``columns`` is ``[(name, column), ...]`` in order; a column is a float64 array (DOUBLE), or
    ``(names, codes)`` for a string column given as its distinct values and, per row, the index
    of the row's value (int array). Every column has the same number of rows, and there is at
    least one column.
    """
    rows = {len(col[1]) if isinstance(col, tuple) else len(col) for _, col in columns}
    if not rows:
        raise ValueError("a table needs at least one column (readers refuse a file without one)")
    if len(rows) > 1:
        raise ValueError(f"columns of different lengths: {sorted(rows)}")
    n_rows = rows.pop()
    body = bytearray(b"PAR1")
    schema = [_Struct().string(4, "schema").i32(5, len(columns)).end()]
    chunks: list[bytes] = []
    total = 0
    for name, col in columns:
        start = len(body)
        if isinstance(col, tuple):
            names, codes = col
            codes = np.asarray(codes)
            if len(codes) and (codes.min() < 0 or codes.max() >= len(names)):
                raise ValueError(f"column {name!r}: codes outside its {len(names)} values")
            pages, first_data = _dictionary_pages([str(n) for n in names], codes)
            ptype, encodings = _BYTE_ARRAY, [_PLAIN, _RLE, _RLE_DICTIONARY]
            element = _Struct().i32(1, ptype).i32(3, _OPTIONAL).string(4, name).i32(6, _UTF8)
            element.struct(10, _Struct().struct(1, _Struct()))  # LogicalType STRING
            dictionary_offset: int | None = start
        else:
            pages, first_data = _double_pages(np.asarray(col, dtype=np.float64)), 0
            ptype, encodings = _DOUBLE, [_PLAIN, _RLE]
            element = _Struct().i32(1, ptype).i32(3, _OPTIONAL).string(4, name)
            dictionary_offset = None
        body += pages.buf
        total += pages.uncompressed
        schema.append(element.end())
        meta = (
            _Struct()
            .i32(1, ptype)
            .list(2, _T_I32, [_zigzag(e) for e in encodings])
            .list(3, _T_BINARY, [_binary(name)])
            .i32(4, _GZIP)
            .i64(5, n_rows)
            .i64(6, pages.uncompressed)
            .i64(7, len(pages.buf))
            .i64(9, start + first_data)
        )
        if dictionary_offset is not None:
            meta.i64(11, dictionary_offset)
        chunks.append(_Struct().i64(2, start).struct(3, meta).end())
    row_group = _Struct().list(1, _T_STRUCT, chunks).i64(2, total).i64(3, n_rows).end()
    footer = (
        _Struct()
        .i32(1, 1)
        .list(2, _T_STRUCT, schema)
        .i64(3, n_rows)
        .list(4, _T_STRUCT, [row_group])
        .string(6, created_by)
        .end()
    )
    body += footer + struct.pack("<I", len(footer)) + b"PAR1"
    with open(path, "wb") as f:
        f.write(body)
