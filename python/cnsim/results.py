"""Run results and run folders (spec/contract.md "A run folder", "summary.json", "series").

:class:`Result` is what :func:`cnsim.run` returns. It holds

* ``summary``: the engine's summary keys (docs/core-config.md "What the engine returns") plus
  ``scenario``, ``scheme``, ``seed`` and ``fairness`` computed here (:mod:`cnsim.fairness`);
* the raw series of the engine (``{kind: {"entities", "bins", "bin_s", "columns"}}``, columns
  little-endian f64, entity-major), decoded into numpy columns (:class:`LongSeries`) and, on
  request, into long-format pyarrow tables;
* ``manifest``: wall time, speed, peak memory, versions, host — never part of determinism.

:meth:`Result.save` writes ``scenario.toml``, ``manifest.json``, ``summary.json`` (sorted keys,
``repr`` floats, non-finite numbers as null: a pure function of scenario and seed),
``series/<kind>.parquet`` (:mod:`cnsim.parquet`) and the figures. Nothing here imports pyarrow
until a table is asked for: a run and its folder need only numpy (issue 14's memory target).
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from . import parquet
from ._version import __version__
from .fairness import fair_shares, fairness_metrics
from .labels import HEADLINE, fmt, summary_value
from .rundir import MANIFEST_FILE, SCENARIO_FILE, SERIES_DIR, SUMMARY_FILE, read_json
from .scenario import Scenario
from .scenario.hot import hot_span_ps
from .units import PS_PER_S

if TYPE_CHECKING:
    import pyarrow as pa

__all__ = ["Result", "SERIES_KINDS", "LongSeries", "build_summary", "decode_series", "dump_json"]

#: kind → (name of the entity column, value columns) (contract "series")
SERIES_KINDS: dict[str, tuple[str, tuple[str, ...]]] = {
    "throughput": ("entity", ("gbps",)),
    "queue": ("queue", ("bytes", "bytes_max", "bytes_mean")),
    "drops": ("entity", ("frames", "bytes")),
    "pause": ("entity", ("fraction",)),
    "cm": ("entity", ("frames", "bytes")),
    "rates": ("flow", ("gbps",)),
}
_ENTITY_PREFIX = {"queue": "port:", "rates": "flow:"}


def _clean(value: Any) -> Any:
    """Non-finite floats → None, recursively (JSON has no NaN)."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {str(k): _clean(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_clean(v) for v in value]
    if isinstance(value, np.generic):
        return _clean(value.item())
    return value


def dump_json(obj: Any) -> str:
    """Deterministic JSON: sorted keys, 2-space indent, shortest round-trip floats."""
    return json.dumps(_clean(obj), sort_keys=True, indent=2, allow_nan=False) + "\n"


@dataclass(frozen=True)
class LongSeries:
    """One series kind in the long format (contract "series") as numpy columns: ``t_s``, the
    entity column as ``codes`` into ``names`` (one contiguous block per entity, entity-major),
    and float64 value columns."""

    kind: str
    t_s: np.ndarray
    names: list[str]
    codes: np.ndarray
    values: dict[str, np.ndarray]

    def rows(self) -> dict[str, slice]:
        """The rows of each entity (its contiguous block)."""
        edges = np.flatnonzero(np.diff(self.codes)) + 1
        starts = [0, *edges.tolist()]
        ends = [*edges.tolist(), len(self.codes)]
        return {self.names[int(self.codes[a])]: slice(a, b) for a, b in zip(starts, ends, strict=True) if b > a}

    def to_arrow(self) -> pa.Table:
        """The pyarrow table ``t_s, <entity column>, <values...>`` (imports pyarrow)."""
        import pyarrow as pa

        ent_col, val_cols = SERIES_KINDS[self.kind]
        fields: list[tuple[str, pa.DataType]] = [("t_s", pa.float64()), (ent_col, pa.string()), *[(c, pa.float64()) for c in val_cols]]
        schema = pa.schema(fields)
        entity = pa.DictionaryArray.from_arrays(pa.array(self.codes, pa.int32()), pa.array(self.names, pa.string()))
        columns = [pa.array(self.t_s), entity.cast(pa.string()), *[pa.array(self.values[c]) for c in val_cols]]
        return pa.Table.from_arrays(columns, schema=schema)

    def write_parquet(self, path: str | os.PathLike[str]) -> None:
        """``series/<kind>.parquet`` of a run folder (:mod:`cnsim.parquet`; no pyarrow)."""
        ent_col, val_cols = SERIES_KINDS[self.kind]
        columns: list[tuple[str, Any]] = [("t_s", self.t_s), (ent_col, (self.names, self.codes))]
        columns += [(c, self.values[c]) for c in val_cols]
        parquet.write_table(path, columns, created_by=f"cnsim {__version__}")


def decode_columns(kind: str, raw: dict[str, Any] | None) -> LongSeries:
    """One engine series kind → its long-format numpy columns (:class:`LongSeries`).

    The value of bin *i* is reported at ``t_s`` = end of bin *i* (docs/core-config.md), the last
    one at the run's end (``end_s``), where a run to completion may stop inside it; a row
    whose values are all NaN ("no value at this bin end", a flow without a rate limiter) is left
    out.
    """
    if kind not in SERIES_KINDS:
        raise KeyError(f"unknown series kind {kind!r}; kinds: {', '.join(SERIES_KINDS)}")
    _, val_cols = SERIES_KINDS[kind]
    raw = raw or {}
    entities = [str(e) for e in raw.get("entities", [])]
    prefix = _ENTITY_PREFIX.get(kind)
    if prefix:
        entities = [e.removeprefix(prefix) for e in entities]
    bins = int(raw.get("bins", 0)) if entities else 0
    bin_s = float(raw.get("bin_s", 0.0))
    n = len(entities)
    # bin ends, rounded to the picosecond so that 26 ms reads 0.026; the last one is the run's
    # end, where a run to completion stops inside its last bin (whose rate is over its part)
    t = np.round(np.arange(1, bins + 1, dtype=np.float64) * bin_s, 12)
    if raw.get("end_s") is not None and bins:
        t = np.minimum(t, round(float(raw["end_s"]), 12))
    codes = np.repeat(np.arange(n, dtype=np.int32), bins)
    values: dict[str, np.ndarray] = {}
    raw_cols = raw.get("columns", {})
    for col in val_cols:
        data = raw_cols.get(col)
        if data is None:
            values[col] = np.full(n * bins, np.nan)
            continue
        values[col] = np.frombuffer(bytes(data), dtype="<f8").astype(np.float64)
        if values[col].size != n * bins:
            raise ValueError(f"series {kind}.{col}: {values[col].size} values for {n} entities x {bins} bins")
    t_s = np.tile(t, n)
    keep = ~np.all(np.isnan(np.vstack([values[c] for c in val_cols])), axis=0) if n * bins else np.ones(0, bool)
    if not keep.all():
        t_s, codes = t_s[keep], codes[keep]
        values = {c: v[keep] for c, v in values.items()}
    return LongSeries(kind, t_s, entities, codes, values)


def decode_series(kind: str, raw: dict[str, Any] | None) -> pa.Table:
    """One engine series kind → long-format pyarrow table ``t_s, <entity column>, <values...>``."""
    return decode_columns(kind, raw).to_arrow()


def build_summary(scenario: Scenario, engine_summary: dict[str, Any]) -> tuple[dict[str, Any], dict[str, float]]:
    """summary.json: the engine's keys plus scenario, scheme, seed and fairness.

    Returns ``(summary, fair)`` where ``fair`` maps ``"<src>-><dst>"`` of the selected flows to
    their max-min fair share in Gb/s (for reference lines).
    """
    r = scenario.resolved
    summary = dict(engine_summary)
    summary["scenario"] = scenario.id
    summary["scheme"] = r.scheme
    summary["seed"] = r.doc.seed
    per_flow = summary.get("throughput_gbps", {}).get("per_flow", {}) or {}
    shares = fair_shares(r) if r.per_flow else None
    summary["fairness"] = fairness_metrics(per_flow, shares)
    fair = {}
    if shares:
        fair = {f"{s}->{d}": shares[(s, d)] / 1e9 for s, d in r.per_flow if (s, d) in shares}
    return summary, fair


#: ``dynamics.recovery_s``: the former hot port is back at this share of its line rate (the
#: decks' 8.5 Gb/s on 10 Gb/s ports), held ``_RECOVERY_HOLD`` s at 90 % of it
_RECOVERY_SHARE, _RECOVERY_HOLD = 0.85, 0.01


def hot_dynamics(scenario: Scenario, raw_series: dict[str, Any]) -> dict[str, Any]:
    """summary.json's ``dynamics`` (docs/metrics.md): the hot queue's dominant period in W_ss,
    its onset (first peak after the hotspot starts) and settle time (within ±20 % of Qeq for
    5 ms), the former hot port's recovery time after the hotspot, and the time CV of each
    selected flow's throughput bins in W_ss (the whole run without a hotspot), from the binned
    series (bin means of the queue), with :mod:`cnsim.signals`. A figure that does not apply, or
    a time that never comes inside the run, is ``None``."""
    from . import signals

    r = scenario.resolved
    out: dict[str, Any] = {"period_s": None, "onset_s": None, "settle_s": None, "recovery_s": None, "flow_cv": {}}
    windows = {k: (a / PS_PER_S, b / PS_PER_S) for k, (a, b) in r.windows_ps.items()}
    decoded: dict[str, tuple[LongSeries, dict[str, slice]]] = {}

    def signal(kind: str, entity: str, column: str) -> tuple[Any, Any]:
        """(t, values) of one entity of a series kind (empty if it has none); each kind is
        decoded once."""
        if kind not in decoded:
            long = decode_columns(kind, raw_series.get(kind))
            decoded[kind] = (long, long.rows())
        long, rows = decoded[kind]
        at = rows.get(entity, slice(0, 0))
        return long.t_s[at], long.values[column][at]

    def finite(x: float) -> float | None:
        # to the picosecond: bin-end times minus t_on carry float noise in the last digits
        return round(x, 12) if math.isfinite(x) else None

    cv_window = windows.get("ss", windows["all"])
    flows = [signal("throughput", f"flow:{src}->{dst}", "gbps") for src, dst in r.per_flow]
    bins = int((raw_series.get("throughput") or {}).get("bins", -1))
    if flows and all(t.size == bins for t, _ in flows):
        # every flow has a value in every bin (the one bin grid): the window's bins are picked
        # once, not per flow, so that `per_flow = "all"` on a large network (260,000 flows at 512
        # hosts) costs seconds. One `time_cv` per flow still: a reduction over a 2-D array sums
        # in another order and moves the last digit of some flows' CV.
        inside = signals.in_window(flows[0][0], cv_window)
        cvs = [signals.time_cv(g[inside]) for _, g in flows]
    else:
        cvs = [signals.time_cv(signals.samples_in(t, g, cv_window)[1]) for t, g in flows]
    out["flow_cv"] = {f"{src}->{dst}": finite(cv) for (src, dst), cv in zip(r.per_flow, cvs, strict=True)}
    on_ps, off_ps = hot_span_ps(r.doc)
    if on_ps is None or not r.hot_port:
        return out
    t_on = on_ps / PS_PER_S
    t_off = r.doc.duration / PS_PER_S if off_ps is None else off_ps / PS_PER_S
    t, q = signal("queue", "hotspot" if r.hot_port == "hotspot" else r.hot_port, "bytes_mean")
    if "ss" in windows:
        out["period_s"] = finite(signals.spectral_period(*signals.samples_in(t, q, windows["ss"])))
    out["onset_s"] = finite(signals.first_peak_time(t, q, t_on, t_on + 0.05))
    qeq = r.cm.get("qeq")
    if isinstance(qeq, (int, float)) and qeq > 0:
        inside = t <= t_off + 1e-12
        out["settle_s"] = finite(signals.settle_time(t[inside], q[inside], t_on, float(qeq)))
    if off_ps is not None and "rec" in windows and r.network is not None and r.hot_port != "hotspot":
        tt, v = signal("throughput", f"port:{r.hot_port}", "gbps")
        keep = tt <= windows["rec"][1] + 1e-12
        level = _RECOVERY_SHARE * r.network.port_link(r.hot_port).rate_bps / 1e9
        out["recovery_s"] = finite(signals.sustained_time(tt[keep], v[keep], t_off, level, _RECOVERY_HOLD))
    return out


class Result:
    """The outcome of one run (contract "Python": ``.summary``, ``.series(kind)``, ``.save(dir)``)."""

    def __init__(
        self,
        scenario: Scenario,
        summary: dict[str, Any],
        series: dict[str, Any] | None = None,
        manifest: dict[str, Any] | None = None,
        fair_gbps: dict[str, float] | None = None,
    ) -> None:
        self.scenario = scenario
        self.summary = summary
        self.raw_series: dict[str, Any] = dict(series or {})
        self.manifest: dict[str, Any] = dict(manifest or {})
        self.fair_gbps: dict[str, float] = dict(fair_gbps or {})
        #: the run folder this result was loaded from (its series are read from there)
        self.folder: Path | None = None
        #: writes the page (``report.html``) of the folder :meth:`save` wrote: the report layer
        #: above this one draws it, so the public ``cnsim.run`` sets it (:mod:`cnsim.api`); None
        #: (a sweep's runs, a result loaded from disk): no page
        self.page_writer: Callable[[Path], object] | None = None

    @classmethod
    def from_engine(cls, scenario: Scenario, engine: dict[str, Any], manifest: dict[str, Any] | None = None) -> Result:
        """Build from the dict ``_core.Simulation.run()`` returns."""
        raw_summary = engine.get("summary", "{}")
        engine_summary = json.loads(raw_summary) if isinstance(raw_summary, (str, bytes)) else dict(raw_summary)
        summary, fair = build_summary(scenario, engine_summary)
        series = engine.get("series", {})
        summary["dynamics"] = hot_dynamics(scenario, series)
        return cls(scenario, summary, series, manifest, fair)

    @classmethod
    def load(cls, folder: str | os.PathLike[str]) -> Result:
        """The result of a run folder written by :meth:`save` (series read on demand). A path
        that is not a complete, readable run folder is a :class:`ScenarioError` naming it."""
        from .errors import ScenarioError, format_value, shorten
        from .rundir import read_json_checked

        if not isinstance(folder, (str, os.PathLike)):
            raise ScenarioError(f"Result.load: the run folder must be a path (given {format_value(folder)})")
        folder = Path(folder)
        try:
            is_dir, exists = folder.is_dir(), folder.exists()
        except OSError as err:  # a name longer than the file system takes (ENAMETOOLONG), and the like
            raise ScenarioError(f"{shorten(str(folder))}: cannot be looked up ({err.strerror or err}), not a run folder; "
                                "give a folder written by Result.save or `cnsim run --out`") from None
        if not is_dir:
            what = "is a file" if exists else "does not exist"
            raise ScenarioError(f"{folder}: {what}, not a run folder; give a folder written by Result.save or `cnsim run --out`")
        try:
            summary = read_json_checked(folder / SUMMARY_FILE, "the JSON table of summary metrics a run writes")
            if summary is None and not (folder / SUMMARY_FILE).is_file():
                raise ScenarioError(f"{folder}: no {SUMMARY_FILE}: not a complete run folder (a failed or unfinished run has none)")
            if not isinstance(summary, dict):
                raise ScenarioError(f"{folder / SUMMARY_FILE}: damaged: a JSON {'null' if summary is None else type(summary).__name__}; expected the JSON table of summary metrics a run writes")
            scen = _load_scenario(folder, str(summary.get("scenario") or folder.name))
            manifest = read_json(folder / MANIFEST_FILE)
        except OSError as err:
            raise ScenarioError(f"{err.filename or folder}: cannot be read ({err.strerror or err})") from None
        try:
            _, fair = build_summary(scen, summary)
        except ScenarioError as err:
            raise ScenarioError(f"{folder / SCENARIO_FILE}: {err}", err.problems) from None
        except (AttributeError, TypeError, ValueError, KeyError, ArithmeticError) as err:
            raise ScenarioError(f"{folder / SUMMARY_FILE}: damaged: {type(err).__name__}: {err}; expected the summary a run writes") from None
        result = cls(scen, summary, {}, manifest if isinstance(manifest, dict) else {}, fair)
        result.folder = folder
        return result

    @property
    def kinds(self) -> list[str]:
        """Series kinds the engine returned (or the run folder holds)."""
        if self.folder is not None:
            return [k for k in SERIES_KINDS if (self.folder / SERIES_DIR / f"{k}.parquet").is_file()]
        return [k for k in SERIES_KINDS if k in self.raw_series]

    def series(self, kind: str) -> pa.Table:
        """A long-format pyarrow table of series ``kind`` (empty if the engine gave none). An
        unknown kind, or a damaged Parquet file in the run folder, is a :class:`ScenarioError`
        (for an unknown kind also a ``KeyError``)."""
        if not isinstance(kind, str) or kind not in SERIES_KINDS:
            from .errors import UnknownNameError, format_value

            raise UnknownNameError(f"series kind {format_value(kind)}: unknown; kinds: {', '.join(SERIES_KINDS)}")
        if self.folder is not None and kind not in self.raw_series:
            path = self.folder / SERIES_DIR / f"{kind}.parquet"
            if path.is_file():
                return _read_series_file(path)
        return decode_series(kind, self.raw_series.get(kind))

    def save(self, directory: str | os.PathLike[str], plots: bool = True, force: bool = False) -> Path:
        """Write the run folder: scenario, summary, manifest, series, (``plots``) the default
        figures and, for a result of the public ``cnsim.run``, its page ``report.html`` (drawn by
        the report layer above this one, :attr:`page_writer`; ``cnsim report DIR`` adds it to any
        run folder); returns its path.

        Like ``--out`` (spec/contract.md "Command line"), an existing non-empty folder is refused
        with :class:`ScenarioError` unless ``force``: then it is replaced, the new folder written
        beside it and renamed over it when complete. A path that cannot be written is a
        :class:`ScenarioError` too."""
        from . import outdir
        from .errors import ScenarioError, format_value

        if not isinstance(directory, (str, os.PathLike)):
            raise ScenarioError(f"Result.save: the folder must be a path (given {format_value(directory)})")
        out = Path(directory)
        try:
            if out.exists() and not out.is_dir():
                raise ScenarioError(f"{out}: is a file, not a folder; give a folder path for the run folder")
            replace = out.is_dir() and any(out.iterdir())
            if replace and not force:
                raise ScenarioError(f"{out}: the folder exists and is not empty; pass force=True to replace it, or choose another folder")
            if not replace:
                self._write_folder(out, plots)
                return out
            tmp = outdir.staging(out)
            try:
                self._write_folder(tmp, plots)
            except BaseException:
                outdir.discard(tmp)
                raise
            outdir.commit(tmp, out)
        except OSError as err:
            where = err.filename or out
            raise ScenarioError(f"{out}: cannot write the run folder ({where}: {err.strerror or err}); choose another folder") from None
        return out

    def _write_folder(self, out: Path, plots: bool) -> None:
        """The files of :meth:`save`, written into ``out`` (created if missing)."""
        (out / SERIES_DIR).mkdir(parents=True, exist_ok=True)
        (out / SCENARIO_FILE).write_text(self.scenario.to_toml(), encoding="utf-8")
        (out / SUMMARY_FILE).write_text(dump_json(self.summary), encoding="utf-8")
        (out / MANIFEST_FILE).write_text(dump_json(self.manifest), encoding="utf-8")
        for kind in self.kinds:
            target = out / SERIES_DIR / f"{kind}.parquet"
            if kind in self.raw_series:
                decode_columns(kind, self.raw_series[kind]).write_parquet(target)
            else:  # a loaded result re-saved elsewhere: its folder's table
                import pyarrow.parquet as pq

                pq.write_table(self.series(kind), target)
        if plots:
            from .plots import save_figures  # matplotlib is imported only when figures are drawn

            save_figures(self, out)
        if self.page_writer is not None:
            self.page_writer(out)

    def __repr__(self) -> str:
        return f"Result({self.scenario.id!r}, scheme={self.summary.get('scheme')!r})"

    def _repr_html_(self) -> str:
        """Jupyter's view: the headline metrics of the window and the throughput and queue figures."""
        import base64
        import html

        from .plots import figure_png

        s = self.summary
        head = (
            f"<b>{html.escape(str(self.scenario.id))}</b> — scheme {html.escape(str(s.get('scheme')))}, "
            f"seed {s.get('seed')}, window {html.escape(fmt(s.get('window_s')))} s"
        )
        rows = "".join(
            f"<tr><td>{html.escape(label)}</td><td style='text-align:right'>{html.escape(fmt(summary_value(s, key, scale)))}</td></tr>"
            for label, key, scale in HEADLINE
        )
        figures = ""
        if self.raw_series:
            for name in ("throughput.png", "queue.png"):
                data = base64.b64encode(figure_png(self, name)).decode("ascii")
                figures += f"<img src='data:image/png;base64,{data}' style='max-width:48%' alt='{name[:-4]}'>"
        return f"<div class='cnsim-result'><p>{head}</p><table>{rows}</table><div>{figures}</div></div>"


def _load_scenario(folder: Path, scenario_id: str) -> Scenario:
    """The scenario of run folder ``folder`` (Result.load): its ``scenario.toml``, or a
    :class:`ScenarioError` naming the file."""
    from .errors import ScenarioError
    from .scenario.loading import parse_toml

    path = folder / SCENARIO_FILE
    if not path.is_file():
        raise ScenarioError(f"{folder}: no {SCENARIO_FILE}: not a complete run folder")
    data = path.read_bytes()
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as err:
        raise ScenarioError(f"{path}: damaged: not UTF-8 text (byte {err.start}); expected the resolved scenario a run writes") from None
    return Scenario(parse_toml(text, str(path)), scenario_id, str(folder))


def _read_series_file(path: Path) -> pa.Table:
    """``series/<kind>.parquet`` of a run folder; a file that is not Parquet is a
    :class:`ScenarioError` naming it."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from .errors import ScenarioError, shorten

    try:
        return pq.read_table(path)
    except (pa.ArrowException, OSError) as err:
        first = str(err).splitlines()[0] if str(err) else type(err).__name__
        raise ScenarioError(f"{path}: damaged: not a readable Parquet file ({shorten(first, 160)}); expected the series a run writes") from None
