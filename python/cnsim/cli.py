"""The ``cnsim`` command line (spec/contract.md "Command line"): list, show, run, bench.

Bad input (unknown scenario, unknown key, bad value, a configuration the engine refuses)
prints the one-paragraph-per-problem message on stderr and exits with status 2, never a
traceback. Ctrl-C during a run stops the engine and exits with status 130. A missing engine
build exits with status 1 and says how to build it.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime
from pathlib import Path
from typing import Any, List, Optional

import typer
from rich.console import Console
from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from .errors import ScenarioError
from .runner import EngineMissing, prepare, run
from .scenario import load, parse_set_value, scenarios
from .units import PS_PER_S

__all__ = ["app", "main"]

app = typer.Typer(
    name="cnsim",
    add_completion=False,
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    help="Packet-level simulator of congestion management in lossless data-center Ethernet.",
)

SetOpt = typer.Option(None, "--set", help="Override a scenario key: KEY=VALUE (repeatable), e.g. cm.scheme=bcn.")


@contextmanager
def _guard() -> Iterator[None]:
    """Map bad input to exit 2, a missing engine to 1 and Ctrl-C to 130 — without tracebacks."""
    try:
        yield
    except ScenarioError as err:
        typer.echo(str(err), err=True)
        raise typer.Exit(2) from None
    except EngineMissing as err:
        typer.echo(f"cnsim: {err}", err=True)
        raise typer.Exit(1) from None
    except KeyboardInterrupt:
        typer.echo("cnsim: interrupted; the run was stopped and nothing was written.", err=True)
        raise typer.Exit(130) from None


def parse_overrides(items: Optional[List[str]]) -> dict[str, Any]:
    """``["a.b=1", "c=x"]`` → ``{"a.b": 1, "c": "x"}`` (values read as TOML, else strings)."""
    out: dict[str, Any] = {}
    for item in items or []:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise ScenarioError(f"--set {item!r}: expected KEY=VALUE, for example --set cm.scheme=bcn or --set links.delay=250us")
        out[key.strip()] = parse_set_value(value.strip())
    return out


@app.command("list")
def list_cmd() -> None:
    """List the catalog: one "<id>  <description>" per line."""
    with _guard():
        ids = scenarios()
        width = max((len(i) for i in ids), default=0)
        for sid in ids:
            description = load(sid)._doc.get("description", "")
            typer.echo(f"{sid:<{width}}  {description}")


@app.command()
def show(
    scenario: str = typer.Argument(..., metavar="ID|FILE", help="Catalog id or scenario TOML file."),
    set_: Optional[List[str]] = SetOpt,
    core: bool = typer.Option(False, "--core", help="Print the core config JSON handed to the engine."),
) -> None:
    """Print the fully resolved scenario as TOML (or, with --core, the engine's JSON)."""
    with _guard():
        scen = prepare(scenario, parse_overrides(set_))
        typer.echo(scen.core_json() if core else scen.to_toml(), nl=not core)
        if core:
            typer.echo()


def _progress_bar(total_ps: int, quiet: bool) -> tuple[Any, Any]:
    """A rich progress bar of simulated time when stdout is a terminal and not --quiet."""
    if quiet or not sys.stdout.isatty():
        return None, None
    bar = Progress(
        TextColumn("simulating"),
        BarColumn(),
        TextColumn("{task.completed:.3f} / {task.total:.3f} s"),
        TimeElapsedColumn(),
        transient=True,
    )
    task = bar.add_task("run", total=total_ps / PS_PER_S)

    def update(now_ps: int, _total: int) -> None:
        bar.update(task, completed=now_ps / PS_PER_S)

    return bar, update


def _summary_table(result: Any, out: Path | None) -> Table:
    s = result.summary
    thr = s.get("throughput_gbps", {}) or {}
    hot_q = ((s.get("queue_bytes", {}) or {}).get("hot", {}) or {}).get("mean")
    drops = (s.get("drops", {}) or {}).get("frames")
    window = s.get("window_s") or []
    table = Table(title=f"{result.scenario.id} — scheme {s.get('scheme')}, seed {s.get('seed')}", show_header=False)
    table.add_column("metric")
    table.add_column("value", justify="right")

    def num(value: Any, fmt: str) -> str:
        return "n/a" if value is None else format(value, fmt)

    if len(window) == 2:
        table.add_row("window", f"[{window[0]:g}, {window[1]:g}] s")
    table.add_row("aggregate throughput", f"{num(thr.get('aggregate'), '.3f')} Gb/s")
    table.add_row(f"hot-port throughput ({result.scenario.resolved.hot_port})", f"{num(thr.get('hot_port'), '.3f')} Gb/s")
    table.add_row("hot queue mean", f"{num(None if hot_q is None else hot_q / 1000, '.1f')} KB")
    table.add_row("drops (frames, whole run)", num(drops, "d") if isinstance(drops, int) else num(drops, ".0f"))
    table.add_row("paused fraction", num(s.get("paused_fraction"), ".4f"))
    fairness = s.get("fairness") or {}
    if fairness.get("jain") is not None:
        table.add_row("Jain fairness (vs max-min)", num(fairness.get("jain"), ".4f"))
    table.add_row("wall time", f"{num(result.manifest.get('wall_s'), '.2f')} s")
    if out is not None:
        table.add_row("results", str(out))
    return table


@app.command("run")
def run_cmd(
    scenario: str = typer.Argument(..., metavar="ID|FILE", help="Catalog id or scenario TOML file."),
    set_: Optional[List[str]] = SetOpt,
    seed: Optional[int] = typer.Option(None, "--seed", help="Random seed (overrides the scenario's)."),
    duration: Optional[str] = typer.Option(None, "--duration", help="Simulated time, e.g. 0.5s."),
    out: Optional[Path] = typer.Option(None, "--out", help="Run folder (default results/<id>-<timestamp>/)."),
    no_plots: bool = typer.Option(False, "--no-plots", help="Do not draw the figures."),
    quiet: bool = typer.Option(False, "--quiet", help="No progress bar and no summary table."),
) -> None:
    """Simulate a scenario and write its run folder."""
    with _guard():
        scen = prepare(scenario, parse_overrides(set_), seed, parse_set_value(duration) if duration else None)
        bar, update = _progress_bar(scen.resolved.doc.duration, quiet)
        if bar is not None:
            with bar:
                result = run(scen, progress=update)
        else:
            result = run(scen)
        folder = out or Path("results") / f"{scen.id}-{datetime.now().strftime('%Y%m%d-%H%M%S')}"
        result.save(folder, plots=not no_plots)
        if not quiet:
            Console().print(_summary_table(result, folder))


@app.command()
def bench(
    scenario: str = typer.Argument("zhb-og-single-hop", metavar="[ID]", help="Catalog id or scenario file."),
    duration: Optional[str] = typer.Option(None, "--duration", help="Simulated time to run (default: the scenario's)."),
    set_: Optional[List[str]] = SetOpt,
) -> None:
    """Engine speed: events/s, delivered frames/s and simulated s per wall s (no files, no plots)."""
    with _guard():
        result = run(scenario, set=parse_overrides(set_), duration=parse_set_value(duration) if duration else None)
        m = result.manifest
        typer.echo(f"scenario           {result.scenario.id} (scheme {result.summary.get('scheme')}, {m['sim_s']:g} s simulated)")
        typer.echo(f"wall time          {m['wall_s']:.3f} s")
        typer.echo(f"events/s           {m['events_per_s'] or 0:,.0f}")
        typer.echo(f"frames/s           {m['frames_per_s'] or 0:,.0f}")
        typer.echo(f"sim s per wall s   {m['sim_s_per_wall_s'] or 0:.4f}")
        typer.echo(f"peak memory        {m['peak_rss_bytes'] / 2**20:.1f} MiB")


def main() -> None:
    """Console-script entry point."""
    app()


if __name__ == "__main__":  # pragma: no cover
    main()
