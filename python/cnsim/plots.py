"""Default figures of a run folder (spec/contract.md "A run folder": ``*.png``).

* ``throughput.png``: aggregate and hot-port throughput (Gb/s) vs time;
* ``queue.png``: the hot queue (KB) vs time, plus the other recorded queues;
* ``per_flow.png``: per-flow throughput vs time, max-min fair shares dashed when known.

Every figure shades the hotspot windows, marks the measurement window, labels its axes with
units and carries the scenario id and scheme in its title. Matplotlib's object API with the Agg
canvas is used (no pyplot, no global backend switch), so plotting is safe in any process.
"""

from __future__ import annotations

import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from .rundir import FIGURE_FILES
from .scenario import Scenario

if TYPE_CHECKING:
    from matplotlib.axes import Axes


class Result(Protocol):
    """What a figure reads of a run (a :class:`cnsim.Result`, in memory or loaded from its
    folder): its scenario, its summary, the max-min shares of its flows and its series."""

    scenario: Scenario
    summary: dict[str, Any]
    fair_gbps: dict[str, float]

    def series(self, kind: str) -> Any: ...

__all__ = ["save_figures", "FIGURES"]

FIGURES = FIGURE_FILES
_PS = 1e12


#: the most points a line of a figure is drawn with: a longer series is drawn as the minimum
#: and maximum of each of half as many chunks (its envelope), so that a run of millions of bins
#: (`metrics.bin = "1ns"`) draws as fast as any other and a spike of one bin still shows
MOST_POINTS = 4000


def _entity_series(result: Result, kind: str, column: str) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """Each entity's (t, value) of series ``kind``, thinned to :data:`MOST_POINTS`. The entity
    column is read as dictionary codes, never as one Python string per row (90 million rows
    of a 1 ns bin took gigabytes that way)."""
    table = result.series(kind)
    if table.num_rows == 0:
        return {}
    ent_col = table.column_names[1]
    encoded = table.column(ent_col).combine_chunks().dictionary_encode()
    codes = encoded.indices.to_numpy(zero_copy_only=False)
    names = encoded.dictionary.to_pylist()  # in order of first appearance
    t = table.column("t_s").to_numpy()
    v = table.column(column).to_numpy(zero_copy_only=False)
    out = {}
    for code, name in enumerate(names):
        mask = codes == code
        out[str(name)] = _thin(t[mask], v[mask])
    return out


def _thin(t: np.ndarray, v: np.ndarray, most: int = MOST_POINTS) -> tuple[np.ndarray, np.ndarray]:
    """At most ``most`` points: the smallest and the largest value of each of ``most / 2``
    chunks, in time order (a chunk of no values stays a gap)."""
    n = len(t)
    if n <= most:
        return t, v
    per = -(-n // (most // 2))
    pad = (-n) % per
    tt = np.concatenate([t, np.full(pad, t[-1])]).reshape(-1, per)
    vv = np.concatenate([v.astype(np.float64), np.full(pad, np.nan)]).reshape(-1, per)
    lo = np.argmin(np.where(np.isnan(vv), np.inf, vv), axis=1)
    hi = np.argmax(np.where(np.isnan(vv), -np.inf, vv), axis=1)
    rows = np.arange(len(vv))
    first, second = np.minimum(lo, hi), np.maximum(lo, hi)
    t_out = np.column_stack([tt[rows, first], tt[rows, second]]).ravel()
    v_out = np.column_stack([vv[rows, first], vv[rows, second]]).ravel()
    return t_out, v_out


def _decorate(ax: Axes, result: Result, ylabel: str) -> None:
    r = result.scenario.resolved
    for i, h in enumerate(r.doc.hotspots):
        ax.axvspan(h.start / _PS, h.end / _PS, color="tab:red", alpha=0.08,
                   label=f"hotspot {h.node} at {h.rate:.0%}" if i < 3 else None)
    t0, t1 = r.window_ps
    for t in (t0, t1):
        ax.axvline(t / _PS, color="0.5", linestyle=":", linewidth=1)
    ax.set_xlabel("time (s)")
    ax.set_ylabel(ylabel)
    ax.set_xlim(0, r.doc.duration / _PS)
    ax.grid(True, alpha=0.3)
    ax.set_title(f"{result.scenario.id} — scheme {r.scheme}")


def _new_figure() -> tuple[Figure, Axes]:
    fig = Figure(figsize=(8, 4.5), dpi=110, layout="constrained")
    FigureCanvasAgg(fig)
    return fig, fig.add_subplot()


def _throughput(result: Result) -> Figure:
    fig, ax = _new_figure()
    series = _entity_series(result, "throughput", "gbps")
    hot = result.scenario.resolved.hot_port
    if "aggregate" in series:
        ax.plot(*series["aggregate"], label="aggregate", color="tab:blue", linewidth=1.2)
    # the moving hot port (D16) is its own series, "port:hotspot": the port hot at each instant
    name = f"port:{hot}"
    if name in series:
        label = "hot port (the one hot at each instant)" if hot == "hotspot" else f"hot port {hot}"
        ax.plot(*series[name], label=label, color="tab:red", linewidth=1.2)
    _decorate(ax, result, "throughput (Gb/s)")
    ax.set_ylim(bottom=0)
    ax.legend(loc="best", fontsize=8)
    return fig


def _queue(result: Result) -> Figure:
    fig, ax = _new_figure()
    series = _entity_series(result, "queue", "bytes")
    r = result.scenario.resolved
    # the hot queue: the moving hot port's own series (D16), else the first recorded queue
    first = "hotspot" if r.hot_port == "hotspot" else (r.queues[0] if r.queues else None)
    hot_label = "hot port's queue (the port hot at each instant)" if first == "hotspot" else f"{first} (hot)"
    for name, (t, v) in series.items():
        style = {"linewidth": 1.4, "color": "tab:red"} if name == first else {"linewidth": 0.9, "alpha": 0.8}
        label = hot_label if name == first else name
        ax.plot(t, v / 1000.0, label=label, **style)
    _decorate(ax, result, "queue (KB)")
    ax.set_ylim(bottom=0)
    if series:
        ax.legend(loc="best", fontsize=8)
    return fig


def _per_flow(result: Result) -> Figure:
    fig, ax = _new_figure()
    series = {k.removeprefix("flow:"): v for k, v in _entity_series(result, "throughput", "gbps").items() if k.startswith("flow:")}
    many = len(series) > 12
    t0, t1 = (t / _PS for t in result.scenario.resolved.window_ps)
    shares: set[float] = set()  # with many flows: every flow's share, one grey line per value
    for i, (name, (t, v)) in enumerate(series.items()):
        line = ax.plot(t, v, linewidth=0.9, label=None if many and i >= 12 else name)[0]
        fair = result.fair_gbps.get(name)
        if fair is not None and not many:  # the fair share holds over the window
            ax.hlines(fair, t0, t1, color=line.get_color(), linestyle="--", linewidth=0.8, alpha=0.7)
        elif fair is not None:
            shares.add(round(fair, 9))
    for fair in sorted(shares):
        ax.hlines(fair, t0, t1, color="0.3", linestyle="--", linewidth=0.8, alpha=0.7)
    if result.fair_gbps:
        ax.plot([], [], color="0.3", linestyle="--", linewidth=0.8, label="max-min fair share")
    _decorate(ax, result, "per-flow throughput (Gb/s)")
    ax.set_ylim(bottom=0)
    ax.legend(loc="best", fontsize=7, ncol=2 if len(series) > 6 else 1)
    return fig


def figure_png(result: Result, name: str) -> bytes:
    """One default figure (``"throughput.png"``, ``"queue.png"`` or ``"per_flow.png"``) as PNG bytes."""
    import io

    draw = dict(zip(FIGURES, (_throughput, _queue, _per_flow), strict=True))[name]
    buf = io.BytesIO()
    with _quiet():
        draw(result).savefig(buf, format="png")
    return buf.getvalue()


def save_figures(result: Result, directory: Path) -> list[Path]:
    """Write the default figures into ``directory``; returns their paths."""
    out = []
    for name, draw in zip(FIGURES, (_throughput, _queue, _per_flow), strict=True):
        path = Path(directory) / name
        with _quiet():
            draw(result).savefig(path)
        out.append(path)
    return out


@contextmanager
def _quiet() -> Iterator[None]:
    """Matplotlib's warnings about a figure with nothing to label (a run without traffic) or a
    node name the font has no glyph for: the figure is drawn all the same, and a successful run
    prints nothing on stderr."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        yield
