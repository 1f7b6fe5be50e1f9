"""Figure and table kinds of the deck reproductions (data-driven: a deck lists them, this draws).

* :class:`TimeFigure` — a series versus time (hot queue, aggregate or hot-port throughput, the
  rate of a flow), one curve per sweep point (the legend), one panel per value of ``facet``;
* :class:`MetricFigure` — a summary metric versus a swept key, one curve per legend value;
* :class:`FlowFigure` — per-flow throughput over the measurement window, grouped bars per point,
  the max-min fair share drawn in;
* :class:`SummaryTable` — one row per point: parameters and chosen summary metrics;
* :class:`Subset` — any of the figures above drawn for the points whose swept values match.

All read the run folders of a sweep (``sweep.parquet``, ``runs/<id>/series/*.parquet``,
``scenario.toml``) and draw with matplotlib's object API on the Agg canvas.
"""

from __future__ import annotations

import json
import re
import tomllib
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from ..labels import METRICS, fmt
from ..results import Result
from ..rundir import reading_series

__all__ = [
    "Point",
    "Labeler",
    "TimeFigure",
    "MetricFigure",
    "FlowFigure",
    "SummaryTable",
    "Subset",
    "load_points",
    "fill_times",
    "label_value",
    "scheme_label",
    "switch_label",
    "METRICS",
]

Labeler = Callable[[str, Any], str]

#: short names of swept keys in legends
_KEY_NAMES = {
    "cm.gd": "Gd",
    "cm.gi": "Gi",
    "cm.w": "W",
    "cm.qeq": "Qeq",
    "cm.ps": "Ps",
    "switch.memory_per_port": "M",
    "topology.nodes": "N",
    "links.delay": "link delay",
    "switch.buffer": "",
    "cm.scheme": "",
}
_NAMES_IN_EXPR = (("gd0", "Gd0"), ("gd", "Gd"), ("qeq", "Qeq"), ("m", "M"))
#: a table's heading for a key whose values name themselves in a legend ("no CM", "shared")
_HEADINGS = {"cm.scheme": "scheme", "switch.buffer": "memory"}


def _heading(key: str, labeler: Labeler) -> str:
    """A table column's heading for swept ``key``: the labeler's name for it, else a plain one
    (the dotted key only for a key nothing names)."""
    return labeler(key, "").rstrip(" =") or _HEADINGS.get(key, key)


def label_value(key: str, value: Any) -> str:
    """``("cm.gd", "2.5*gd0")`` → ``"Gd = 2.5·Gd0"``; ``("switch.buffer", "shared")`` → ``"shared"``."""
    if key == "cm.scheme":
        return {"none": "no CM", "bcn": "BCN"}.get(str(value), str(value).upper())
    if key == "cm.ps" and isinstance(value, (int, float)):
        text = f"{value * 100:g} %"
    elif isinstance(value, str):
        text = value
        for name, pretty in _NAMES_IN_EXPR:
            text = re.sub(rf"\b{name}\b", pretty, text)
        text = text.replace("*", "·").replace("/", " / ")
    elif isinstance(value, float):
        text = f"{value:g}"
    else:
        text = str(value)
    name = _KEY_NAMES.get(key, key.split(".")[-1].replace("_", " "))
    return f"{name} = {text}" if name else text


def scheme_label(names: dict[str, str], value: Any) -> str:
    """A scheme by a deck's name for it (``names``), else upper case; "scheme =" for an axis title."""
    return "scheme =" if value in ("", None) else names.get(str(value), str(value).upper())


def switch_label(name: str, value: Any) -> str:
    """A switch-like key (PAUSE, EFR …): ``"PAUSE on"`` / ``"PAUSE off"``; ``"PAUSE ="`` for an axis title."""
    return f"{name} =" if value in ("", None) else f"{name} {'on' if value else 'off'}"


@dataclass
class Point:
    """One row of a sweep table with its run folder."""

    row: dict[str, Any]
    folder: Path
    params: dict[str, Any]

    @property
    def ok(self) -> bool:
        return self.row.get("status") == "ok"


def load_points(sweep_dir: Path) -> tuple[list[Point], list[str]]:
    """The points of a sweep folder (plan order) and its swept keys."""
    plan = json.loads((sweep_dir / "sweep.json").read_text(encoding="utf-8"))
    spec = plan.get("spec") or {}
    keys = [*(spec.get("axes") or {}), *(spec.get("zip") or {})]
    table = pq.read_table(sweep_dir / "sweep.parquet").to_pylist() if (sweep_dir / "sweep.parquet").is_file() else []
    pts = []
    for row in table:
        pts.append(Point(row, sweep_dir / str(row.get("path")), {k: row.get(k) for k in keys}))
    return pts, keys


@lru_cache(maxsize=512)
def _scenario_doc(folder: Path) -> dict[str, Any]:
    try:
        return tomllib.loads((folder / "scenario.toml").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}


def _hot_port(folder: Path) -> str:
    return str((_scenario_doc(folder).get("metrics") or {}).get("hot_port", ""))


def _series(folder: Path, kind: str, entity_col: str, entity: str, column: str) -> tuple[np.ndarray, np.ndarray]:
    path = folder / "series" / f"{kind}.parquet"
    if not path.is_file():
        return np.zeros(0), np.zeros(0)
    with reading_series(path, "Delete its run folder: `cnsim reproduce` runs it again."):
        table = pq.read_table(path)
    table = table.filter(pc.equal(table.column(entity_col), pa.scalar(entity)))
    return table.column("t_s").to_numpy(), table.column(column).to_numpy(zero_copy_only=False)


def _hotspots(folder: Path) -> list[tuple[float, float]]:
    """The spans a time figure shades: the scenario's hotspots, else the congestion of an
    input-generated hotspot or a dual congestion point (:func:`_flows_window`), so that a
    caption's "the hotspot is shaded" holds for those too."""
    doc = _scenario_doc(folder)
    out = []
    for h in doc.get("hotspots") or []:
        try:
            out.append((_seconds(h.get("start")), _seconds(h.get("end"))))
        except (TypeError, ValueError):
            continue
    if not out and (span := _flows_window(doc)) is not None:
        out.append(span)
    return out


def _flows_window(doc: dict[str, Any]) -> tuple[float, float] | None:
    """Where every named flow is active, when that starts after the run does (zhb-ig-single-hop
    0.1–0.5 s, the dual-CP cases 0.1–0.5 s, the qcnp hot flows 0.1–1.0 s); None for flows that
    all start at 0 (kd, the eval baseline), which congest the whole run."""
    traffic = doc.get("traffic") or {}
    flows = traffic.get("flows") or []
    if not flows:
        return None
    try:
        end = _seconds(doc.get("duration"))
        start = _seconds(traffic.get("start", 0))
        stop = _seconds(traffic["stop"]) if traffic.get("stop") is not None else end
        lo = max(_seconds(f["start"]) if f.get("start") is not None else start for f in flows)
        hi = min(end, *(_seconds(f["stop"]) if f.get("stop") is not None else stop for f in flows))
    except (TypeError, ValueError, KeyError):
        return None
    return (lo, hi) if 0 < lo < hi else None


def fill_times(text: str, points: list[Point]) -> str:
    """``text`` (a study's text, a caption, a table's title) with the times its runs used written
    in: a time typed into a text is wrong for ``--quick``, which moves the hotspot and the window
    and shortens the run, and for a study over another scenario.

    * ``{window}``: the measurement window, ``[t0, t1] s`` (the runs' ``window_s``);
    * ``{hotspot}``: where the hot port is overloaded, ``t0–t1 s`` (the shaded span of the time
      figures, :func:`_hotspots`), with the run's end when the run stops before it does;
    * ``{stop}``: when the sources stop (``traffic.stop``); ``{duration}``: the run's length (its
      hard cap, for a run to completion).

    Runs that disagree, or no run that finished, give words instead ("each run's measurement
    window"). Other braces are left alone (texts write sets as ``{2, 20} us``)."""
    ok = [p for p in points if p.ok]
    fills: dict[str, Callable[[], str]] = {
        "{window}": lambda: _one({_window_of(p) for p in ok}, "each run's measurement window"),
        "{hotspot}": lambda: _one({_hotspot_of(p) for p in ok}, "the hotspot"),
        "{stop}": lambda: _one({_doc_time(p, "traffic", "stop") for p in ok}, "the sources' stop"),
        "{duration}": lambda: _one({_doc_time(p, None, "duration") for p in ok}, "the run's length"),
    }
    for name, fill in fills.items():
        if name in text:
            text = text.replace(name, fill())
    return text


def _one(values: set[str | None], otherwise: str) -> str:
    """The value every run gives, else ``otherwise``."""
    value = next(iter(values)) if len(values) == 1 else None
    return value or otherwise


def _window_of(p: Point) -> str | None:
    w = p.row.get("window_s")
    return f"[{fmt(w[0])}, {fmt(w[1])}] s" if isinstance(w, (list, tuple)) and len(w) == 2 else None


def _hotspot_of(p: Point) -> str | None:
    spans = _hotspots(p.folder)
    if not spans:
        return None
    lo, hi = min(a for a, _ in spans), max(b for _, b in spans)
    end = p.row.get("duration_s")
    # a clause, not parentheses: texts write {hotspot} inside their own
    cut = f", the run ending at {fmt(end)} s" if isinstance(end, (int, float)) and end < hi else ""
    return f"{fmt(lo)}–{fmt(hi)} s{cut}"


def _doc_time(p: Point, table: str | None, key: str) -> str | None:
    doc = _scenario_doc(p.folder)
    value = (doc.get(table) or {}).get(key) if table else doc.get(key)
    try:
        return f"{fmt(_seconds(value))} s" if value is not None else None
    except (TypeError, ValueError):
        return None


def _seconds(value: Any) -> float:
    from ..units import parse_time

    return parse_time(value) / 1e12 if isinstance(value, str) else float(value)


def _legend(point: Point, keys: list[str], labeler: Labeler) -> str:
    return ", ".join(labeler(k, point.params.get(k)) for k in keys) or "run"


def _window_note(points: list[Point], keys: list[str], labeler: Labeler) -> str:
    """"" when the runs a figure draws share one measurement window; else a line saying which runs
    used another. A run to completion ends when it has drained, and its window is clipped there
    (contract "Measurement window"): one figure's bars and fair shares can then be over different
    spans (e2cm --quick: "no CM, PAUSE off" ran to 0.213 s, the other points to 0.3 s)."""
    windows: dict[tuple[float, float], list[Point]] = {}
    for p in points:
        w = p.row.get("window_s")
        if p.ok and isinstance(w, (list, tuple)) and len(w) == 2:
            windows.setdefault((float(w[0]), float(w[1])), []).append(p)
    if len(windows) < 2:
        return ""
    most = max(windows, key=lambda w: len(windows[w]))
    others = "; ".join(f"[{fmt(a)}, {fmt(b)}] s for {', '.join(_legend(p, keys, labeler) for p in pts)}"
                       for (a, b), pts in windows.items() if (a, b) != most)
    # the cause the shipped decks have (a run to completion that drains early) is said only when it
    # is the cause: every run of another window ended before the common window's end
    drained = all(
        isinstance(p.row.get("duration_s"), (int, float)) and float(p.row["duration_s"]) < most[1]
        for w, pts in windows.items() if w != most for p in pts
    )
    why = " (runs to completion end when drained)" if drained else ""
    return f"Measurement windows differ{why}: [{fmt(most[0])}, {fmt(most[1])}] s, but {others}"


def _new(panels: int, ncols: int = 2, height: float = 3.6, sharey: bool = True) -> tuple[Figure, list[Any]]:
    ncols = min(ncols, panels)
    nrows = (panels + ncols - 1) // ncols
    fig = Figure(figsize=(6.4 * ncols, height * nrows + 0.6), dpi=100, layout="constrained")
    FigureCanvasAgg(fig)
    axes = fig.subplots(nrows, ncols, squeeze=False, sharey=sharey)
    flat = list(axes.ravel())
    for ax in flat[panels:]:
        ax.set_visible(False)
    return fig, flat[:panels]


def _facets(points: list[Point], facet: str | None, labeler: Labeler) -> list[tuple[str, list[Point]]]:
    if facet is None:
        return [("", points)]
    groups: dict[str, list[Point]] = {}
    for p in points:
        groups.setdefault(labeler(facet, p.params.get(facet)), []).append(p)
    return list(groups.items())


@dataclass
class TimeFigure:
    """A series versus time, one curve per point; ``quantity``: hot_queue, aggregate, hot_port."""

    name: str
    title: str
    quantity: str
    legend: list[str] | None = None  # swept keys in the legend (default: all but the facet)
    facet: str | None = None
    caption: str = ""
    seed: int | None = None  # only this seed (default: the first seed of each point)
    #: hot_queue only: a right-hand axis in 64-byte pages, the unitless queue figures of the eval
    #: deck (algorithms.md D1: its Qeq 375 and Qmc 1300 are pages), beside the KB of the left one
    pages: bool = False

    def draw(self, points: list[Point], keys: list[str], labeler: Labeler, out: Path) -> Path | None:
        return _save(self.build(points, keys, labeler), out, self.name)

    def build(self, points: list[Point], keys: list[str], labeler: Labeler) -> Figure | None:
        """The figure, or None when no point ran."""
        pts = [p for p in points if p.ok]
        seeds = sorted({int(p.row["seed"]) for p in pts if p.row.get("seed") is not None})
        chosen = self.seed if self.seed is not None else (seeds[0] if seeds else None)
        pts = [p for p in pts if p.row.get("seed") == chosen]
        if not pts:
            return None
        legend = self.legend if self.legend is not None else [k for k in keys if k != self.facet]
        facets = _facets(pts, self.facet, labeler)
        fig, axes = _new(len(facets))
        ylabel = {"hot_queue": "hot queue (KB)", "aggregate": "aggregate throughput (Gb/s)", "hot_port": "hot-port throughput (Gb/s)"}[self.quantity]
        for ax, (facet_label, group) in zip(axes, facets, strict=False):  # a grid may have spare panels
            colors = _colors(len(group))
            for color, p in zip(colors, group, strict=True):
                hot = _hot_port(p.folder)
                if self.quantity == "hot_queue":
                    t, v = _series(p.folder, "queue", "queue", hot, "bytes")
                    v = v / 1000.0
                elif self.quantity == "aggregate":
                    t, v = _series(p.folder, "throughput", "entity", "aggregate", "gbps")
                else:
                    t, v = _series(p.folder, "throughput", "entity", f"port:{hot}", "gbps")
                ax.plot(t, v, color=color, linewidth=1.0, label=_legend(p, legend, labeler))
            for start, end in _hotspots(group[0].folder):
                ax.axvspan(start, end, color="tab:red", alpha=0.06)
            ax.set_title(facet_label or self.title, fontsize=10)
            ax.set_xlabel("time (s)")
            ax.set_ylabel(ylabel)
            ax.grid(True, alpha=0.3)
            ax.legend(fontsize=7, loc="best", ncol=2 if len(group) > 7 else 1)
            if self.pages and self.quantity == "hot_queue":
                pages = ax.secondary_yaxis("right", functions=(_kb_to_pages, _pages_to_kb))
                pages.set_ylabel(f"hot queue ({PAGE_BYTES}-byte pages)")
        for ax in axes:  # after every panel is drawn: the shared y range covers them all
            ax.set_ylim(bottom=0)
        if self.facet is not None:
            fig.suptitle(self.title, fontsize=11)
        return fig


#: the most bars of a per-flow figure named one by one in its legend (qcnp-ig-100-sources has
#: 100 flows: their legend covered half the groups of bars)
MAX_FLOW_LEGEND = 16

#: the eval deck's queue unit (algorithms.md D1)
PAGE_BYTES = 64


def _kb_to_pages(kb: Any) -> Any:
    return kb * 1000.0 / PAGE_BYTES


def _pages_to_kb(pages: Any) -> Any:
    return pages * PAGE_BYTES / 1000.0


def _save(fig: Figure | None, out: Path, name: str) -> Path | None:
    """``out/name.png``, or None when there is no figure to save."""
    if fig is None:
        return None
    path = out / f"{name}.png"
    fig.savefig(path)
    return path


def _colors(n: int) -> list[Any]:
    from matplotlib import colormaps

    cmap = colormaps["viridis"] if n > 10 else colormaps["tab10"]
    return [cmap(i / max(1, n - 1)) if n > 10 else cmap(i) for i in range(n)]


@dataclass
class MetricFigure:
    """Summary metrics (``y``: names of :data:`METRICS`) versus swept key ``x``."""

    name: str
    title: str
    x: str
    y: list[str]
    legend: str | None = None
    caption: str = ""
    x_values: Callable[[Any], float] | None = None  # numeric x from the swept value
    #: the x axis's title when the key's name in the legends is not enough for it (default: that name)
    xlabel: str | None = None

    def draw(self, points: list[Point], keys: list[str], labeler: Labeler, out: Path) -> Path | None:
        return _save(self.build(points, keys, labeler), out, self.name)

    def build(self, points: list[Point], keys: list[str], labeler: Labeler) -> Figure | None:
        """The figure, or None when no point ran."""
        pts = [p for p in points if p.ok]
        if not pts:
            return None
        # a point run with several seeds is one x position: the seeds' mean, each seed a dot
        seeded = any(len(c) > 1 for c in _seeds_of_each_point(pts))
        ncols = len(self.y) if len(self.y) <= 3 else 2
        fig, axes = _new(len(self.y), ncols=ncols, height=3.4, sharey=False)  # panels of different units
        for ax, metric in zip(axes, self.y, strict=False):  # a grid may have spare panels
            label, key, scale = METRICS[metric]
            groups = _facets(pts, self.legend, labeler)
            for (glabel, group), color in zip(groups, _colors(len(groups)), strict=True):
                cells = _seeds_of_each_point(group)
                xs = [self.x_values(c[0].params.get(self.x)) if self.x_values else i for i, c in enumerate(cells)]
                values = [[_num(p.row.get(key)) * scale for p in c] for c in cells]
                ax.plot(xs, [_mean(v) for v in values], marker="o", color=color, label=glabel or None)
                if seeded:  # each seed beside the mean it makes
                    ax.plot([x for x, v in zip(xs, values, strict=True) for _ in v], [y for v in values for y in v],
                            linestyle="none", marker=".", markersize=4, alpha=0.5, color=color, label="_nolegend_")
                if not self.x_values:
                    ax.set_xticks(xs, [labeler(self.x, c[0].params.get(self.x)).split("= ")[-1] for c in cells], fontsize=7, rotation=30)
            ax.set_xlabel(self.xlabel or labeler(self.x, "").rstrip(" =") or self.x)
            ax.set_ylabel(label)
            ax.grid(True, alpha=0.3)
            ax.yaxis.set_tick_params(labelleft=True)
            if self.legend:
                ax.legend(fontsize=7)
        fig.suptitle(f"{self.title} (mean of the seeds; dots: each seed)" if seeded else self.title, fontsize=11)
        if note := _window_note(pts, keys, labeler):
            fig.supxlabel(note, fontsize=7)
        return fig


def _seeds_of_each_point(points: list[Point]) -> list[list[Point]]:
    """``points`` grouped by their swept values (the seeds of one point together), in plan order."""
    cells: dict[str, list[Point]] = {}
    for p in points:
        cells.setdefault(repr(sorted(p.params.items())), []).append(p)
    return list(cells.values())


def _mean(values: list[float]) -> float:
    """The mean of the values that are numbers (NaN when none is: a gap in the curve)."""
    finite = [v for v in values if not np.isnan(v)]
    return sum(finite) / len(finite) if finite else float("nan")


def _natural(name: str) -> list[Any]:
    """Sort key: "2->1" before "10->1", "H2" before "H10". Splitting on a captured group puts the
    runs of digits at the odd places of every name's list, so two keys compare text with text
    and numbers with numbers."""
    return [int(t) if i % 2 else t for i, t in enumerate(re.split(r"(\d+)", name))]


def _num(value: Any) -> float:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else float("nan")


@dataclass
class FlowFigure:
    """Per-flow throughput over the window (grouped bars per point) with the max-min fair share.

    ``nodes``: per-node throughput (delivered to each node) instead, the reference being the sum of
    the max-min shares of the flows into the node; ``proportional``: also the proportionally fair
    share (dotted).
    """

    name: str
    title: str
    legend: list[str] | None = None
    caption: str = ""
    nodes: bool = False
    proportional: bool = False

    def draw(self, points: list[Point], keys: list[str], labeler: Labeler, out: Path) -> Path | None:
        return _save(self.build(points, keys, labeler), out, self.name)

    def build(self, points: list[Point], keys: list[str], labeler: Labeler) -> Figure | None:
        """The figure, or None when no point ran or the runs recorded no flow."""
        pts = [p for p in points if p.ok]
        seeds = sorted({int(p.row["seed"]) for p in pts if p.row.get("seed") is not None})
        pts = [p for p in pts if p.row.get("seed") == (seeds[0] if seeds else None)]
        if not pts:
            return None
        column = "throughput_gbps.per_node." if self.nodes else "throughput_gbps.per_flow."
        # every flow any point recorded (a sweep's table holds the union of its runs' columns, None
        # where a run has no such flow: a swept node count changes the flows)
        flows = sorted({c.removeprefix(column) for p in pts for c, v in p.row.items() if c.startswith(column) and v is not None},
                       key=_natural)
        if not flows:
            return None
        legend = self.legend if self.legend is not None else keys
        fig = Figure(figsize=(max(6.4, 1.2 * len(pts) + 2), 4.2), dpi=100, layout="constrained")
        FigureCanvasAgg(fig)
        ax = fig.add_subplot()
        width = 0.8 / len(flows)
        colors = _colors(len(flows))
        x = np.arange(len(pts))
        many = len(flows) > MAX_FLOW_LEGEND  # one legend entry a flow would cover the bars
        for i, flow in enumerate(flows):
            ys = [_num(p.row.get(f"{column}{flow}")) for p in pts]
            ax.bar(x + (i - (len(flows) - 1) / 2) * width, ys, width, color=colors[i], label="_nolegend_" if many else flow)
        if many:
            ax.plot([], [], linestyle="none", label=f"{len(flows)} {'nodes' if self.nodes else 'flows'}, {flows[0]} … {flows[-1]} "
                                                    "left to right in each group")
        drew: set[str] = set()
        for j, p in enumerate(pts):
            try:
                fair, prop = self._shares(Result.load(p.folder))
            except Exception:  # noqa: BLE001 - a figure without its reference line is still useful
                fair, prop = {}, {}
            for refs, style, label in ((fair, "--", "max-min fair share"), (prop, ":", "proportional share")):
                for i, flow in enumerate(flows):
                    if flow in refs:
                        xc = j + (i - (len(flows) - 1) / 2) * width
                        ax.hlines(refs[flow], xc - width / 2, xc + width / 2, color="black", linestyle=style, linewidth=1.2,
                                  label="_nolegend_" if label in drew else label)
                        drew.add(label)
        ax.set_xticks(x, [_legend(p, legend, labeler) for p in pts], fontsize=7, rotation=20, ha="right")
        ax.set_ylabel("throughput over the window (Gb/s)")
        ax.set_title(self.title, fontsize=11)
        if note := _window_note(pts, legend, labeler):
            fig.supxlabel(note, fontsize=7)
        ax.grid(True, axis="y", alpha=0.3)
        ax.legend(fontsize=7, ncol=1 if many else min(4, len(flows) + 1))
        return fig

    def _shares(self, result: Any) -> tuple[dict[str, float], dict[str, float]]:
        """(max-min, proportional) reference shares in Gb/s keyed like the bars."""
        from ..fairness import fair_shares, proportional_shares

        if not self.nodes and not self.proportional:
            return result.fair_gbps, {}
        resolved = result.scenario.resolved
        fair = fair_shares(resolved) or {}
        prop = (proportional_shares(resolved) or {}) if self.proportional else {}
        if not self.nodes:
            return result.fair_gbps, {f"{s}->{d}": v / 1e9 for (s, d), v in prop.items()}
        per_node: dict[str, float] = {}
        for (_s, d), v in fair.items():
            per_node[d] = per_node.get(d, 0.0) + v / 1e9
        return per_node, {}


@dataclass
class Subset:
    """``figure`` drawn only for the points whose swept values are among ``where[key]``.

    Keys not swept by the sweep are ignored; with no point left, nothing is drawn (a --quick run
    that drops a variant simply has one figure less).
    """

    figure: Any
    where: dict[str, list[Any]]

    @property
    def title(self) -> str:
        return str(self.figure.title)

    @property
    def caption(self) -> str:
        return str(self.figure.caption)

    def draw(self, points: list[Point], keys: list[str], labeler: Labeler, out: Path) -> Path | None:
        return _save(self.build(points, keys, labeler), out, self.figure.name)

    def build(self, points: list[Point], keys: list[str], labeler: Labeler) -> Figure | None:
        """The figure of the matching points, or None when none matches."""
        where = {k: v for k, v in self.where.items() if k in keys}
        pts = [p for p in points if all(p.params.get(k) in v for k, v in where.items())]
        if not pts:
            return None
        # a key fixed by the subset no longer varies: leave it out of the legends
        fixed = [k for k, v in where.items() if len({p.params.get(k) for p in pts}) == 1]
        return self.figure.build(pts, [k for k in keys if k not in fixed], labeler)  # type: ignore[no-any-return]


@dataclass
class SummaryTable:
    """One row per point: the swept keys (labelled) and the ``metrics`` of :data:`METRICS`."""

    title: str
    metrics: list[str] = field(default_factory=lambda: ["aggregate", "hot_port", "q_mean", "q_std", "drops", "paused", "cm_mbps", "jain"])
    per_flow: bool = False

    def heading(self, points: list[Point]) -> str:
        """The title with the times of the runs filled in (:func:`fill_times`: ``{window}`` …)."""
        return fill_times(self.title, points)

    def rows(self, points: list[Point], keys: list[str], labeler: Labeler) -> tuple[list[str], list[list[str]]]:

        flows: list[str] = []
        if self.per_flow:
            for p in points:
                for c in p.row:
                    if c.startswith("throughput_gbps.per_flow.") and c not in flows:
                        flows.append(c)
        columns = [*(_heading(k, labeler) for k in keys), "seed", *(METRICS[m][0] for m in self.metrics)]
        columns += [f"{c.removeprefix('throughput_gbps.per_flow.')} (Gb/s)" for c in flows]
        rows = []
        for p in points:
            if not p.ok:
                rows.append([*(labeler(k, p.params.get(k)).split("= ")[-1] for k in keys), fmt(p.row.get("seed")), f"failed: {p.row.get('error')}"])
                continue
            row = [labeler(k, p.params.get(k)).split("= ")[-1] for k in keys] + [fmt(p.row.get("seed"))]
            for m in self.metrics:
                _label, key, scale = METRICS[m]
                v = p.row.get(key)
                row.append(fmt(v * scale if isinstance(v, (int, float)) and not isinstance(v, bool) else v))
            row += [fmt(p.row.get(c)) for c in flows]
            rows.append(row)
        width = max((len(r) for r in rows), default=len(columns))
        rows = [r + [""] * (width - len(r)) for r in rows]
        return columns, rows
