"""docs/img/perf-scale.png: events/s against hosts from `cnsim bench --scale` JSON files.

    python scripts/plot_scale.py OUT.png LABEL=FILE.json [LABEL=FILE.json ...]

A file is either the bench's output (``{"sizes": [...]}``) or a list of rounds, each a list of
per-size rows (docs/bench/scale-before.json and scale-after.json: the median of the rounds is
drawn).
"""

from __future__ import annotations

import json
import statistics
import sys
from pathlib import Path

from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure


def rows(path: Path) -> list[dict[str, float]]:
    data = json.loads(path.read_text(encoding="utf-8"))
    if isinstance(data, dict):
        return list(data["sizes"])
    hosts = sorted({r["hosts"] for rnd in data for r in rnd})
    return [
        {"hosts": h, "events_per_s": statistics.median(r["events_per_s"] for rnd in data for r in rnd if r["hosts"] == h)}
        for h in hosts
    ]


def main(out: str, *series: str) -> None:
    fig = Figure(figsize=(7, 4))
    ax = fig.add_subplot()
    for item in series:
        label, _, file = item.partition("=")
        points = rows(Path(file))
        ax.plot([p["hosts"] for p in points], [p["events_per_s"] / 1e6 for p in points], "o-", label=label)
    ax.set_xscale("log", base=2)
    ax.set_ylim(bottom=0)
    ax.set_xlabel("hosts")
    ax.set_ylabel("M events/s (one core)")
    ax.set_title("cnsim bench --scale: 85 % uniform load, PAUSE, no CM (~3 M events per size)", fontsize=9)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    FigureCanvasAgg(fig).print_png(out)


if __name__ == "__main__":
    main(*sys.argv[1:])
