"""The ``cnsim`` command line (spec/contract.md "Command line"): list, show, run, bench, sweep,
reproduce, report.

Bad input (unknown scenario, unknown key, bad value, a configuration the engine refuses)
prints the one-paragraph-per-problem message on stderr and exits with status 2, never a
traceback. Ctrl-C during a run stops the engine and exits with status 130 (SIGTERM: 143). A
missing engine build exits with status 1 and says how to build it; an internal engine failure
(a bug) exits with status 70 (EX_SOFTWARE) and one line.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer

from .api import run
from .errors import EngineError, ScenarioError, shorten
from .runner import EngineMissing, prepare
from .scenario import load, parse_set_value, scenarios
from .units import PS_PER_S

if TYPE_CHECKING:  # rich is imported where it draws: a run that prints nothing never loads it
    from rich.table import Table

__all__ = ["app", "main"]

app = typer.Typer(
    name="cnsim",
    add_completion=False,
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    help="Packet-level simulator of congestion management in lossless data-center Ethernet.",
)

def _without_flag_type() -> None:
    """Flags show no value type in ``--help``. Typer 0.29 prints its ``<bool>`` after every flag
    (``--quiet <bool>``, ``--help <bool>``), which reads as if the flag took a value, and
    ``--quiet true`` is refused; click prints none there, and neither do we. Typer 0.20 and earlier have
    no such method (and print no ``<bool>``): nothing to replace there, and the CLI, which
    pyproject.toml allows with typer >= 0.12, must still import."""
    from typer.core import TyperOption

    shown = getattr(TyperOption, "display_type_rich", None)
    if shown is None:
        return

    def display_type_rich(self: TyperOption, ctx: Any) -> str | None:
        return None if self.is_flag else shown(self, ctx)

    setattr(TyperOption, "display_type_rich", display_type_rich)  # noqa: B010 (a method, replaced)


_without_flag_type()

SetOpt = typer.Option(None, "--set", metavar="KEY=VALUE", help="Override a scenario key: KEY=VALUE (repeatable), e.g. cm.scheme=bcn.")


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
    except BrokenPipeError:
        _silence_stdout()  # `cnsim show … | head`: the reader left; stop quietly, as Unix tools do
        raise typer.Exit(0) from None
    except OSError as err:  # reading a scenario or writing results: the file system said no
        where = f" {shorten(str(err.filename))}" if getattr(err, "filename", None) else ""
        typer.echo(f"cnsim: I/O error{where}: {err.strerror or err}", err=True)
        raise typer.Exit(2) from None
    except EngineError as err:
        typer.echo(f"cnsim: internal error: {err}. This is a bug in cnsim, not in your input; please report it with the scenario.", err=True)
        raise typer.Exit(70) from None
    except KeyboardInterrupt as err:
        typer.echo(f"cnsim: {_signal_word(err)}; the run was stopped and nothing was written.", err=True)
        raise typer.Exit(_interrupt_status(err)) from None


def _silence_stdout() -> None:
    """Point stdout at /dev/null so that the interpreter's final flush does not fail again."""
    import os

    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):  # pragma: no cover (no real stdout, e.g. under a test runner)
        pass


class Terminated(KeyboardInterrupt):
    """SIGTERM, turned into an exception so that runs stop as cleanly as on Ctrl-C (exit 143)."""


def _interrupt_status(err: BaseException) -> int:
    return 143 if isinstance(err, Terminated) else 130


def _signal_word(err: BaseException) -> str:
    return "terminated (SIGTERM)" if isinstance(err, Terminated) else "interrupted"


def _on_sigterm(_signum: int, _frame: Any) -> None:
    raise Terminated()


def _version_callback(value: bool) -> None:
    if value:
        from ._version import __version__

        typer.echo(f"cnsim {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: bool = typer.Option(False, "--version", callback=_version_callback, is_eager=True, help="Print the version and exit."),
) -> None:
    """Packet-level simulator of congestion management in lossless data-center Ethernet."""


def parse_overrides(items: list[str] | None) -> dict[str, Any]:
    """``["a.b=1", "c=x"]`` → ``{"a.b": 1, "c": "x"}`` (values read as TOML, else strings)."""
    out: dict[str, Any] = {}
    for item in items or []:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise ScenarioError(f"--set {item!r}: expected KEY=VALUE, for example --set cm.scheme=bcn or --set links.delay=250us")
        out[key.strip()] = parse_set_value(value.strip())
    return out


def _nonempty(option: str, value: str | None, example: str) -> str | None:
    """``value`` as given, or None when the option was not given; an empty (or blank) value is
    bad input, never read as "not given" (``--duration ''`` must not run the full scenario)."""
    if value is not None and not value.strip():
        raise ScenarioError(f"{option} {value!r}: an empty value; give {example}, or leave the option out")
    return value


def _duration(value: str | None) -> Any:
    """``--duration`` as a scenario value (None: the scenario's own)."""
    given = _nonempty("--duration", value, "a simulated time such as 0.5s or 20ms")
    return parse_set_value(given) if given is not None else None


def _executor_options(executor: str, workers: int | None, scheduler: str | None) -> None:
    """The executor options checked before any planning (make_executor checks them again)."""
    if executor not in ("local", "process", "dask"):
        raise ScenarioError(f"--executor: {executor!r} is not an executor; allowed: local, process, dask")
    if workers is not None and workers < 1:
        raise ScenarioError(f"--workers: must be at least 1 (given {workers})")
    _nonempty("--scheduler", scheduler, "the Dask scheduler ADDRESS, e.g. tcp://head:8786")


def _fits_in_memory(pool: Any, run_bytes: list[int]) -> None:
    """Refuse a worker count whose runs in flight (of these memory estimates) would exceed memory
    before anything is written (the executor checks again, on the runs still to do)."""
    try:
        pool.check_memory(run_bytes)
    except BaseException:
        pool.close()
        raise


def _stopped(err: BaseException, folder: Path, resume: str) -> None:
    """The one line of an interrupted sweep, check or reproduction: it names the folder only if
    the command got as far as writing it."""
    try:
        wrote = folder.is_dir() and any(folder.iterdir())
    except OSError:
        wrote = False
    if wrote:
        typer.echo(f"cnsim: {_signal_word(err)}; completed runs are kept in {folder}. Resume with: {resume} --out {folder}", err=True)
    else:
        typer.echo(f"cnsim: {_signal_word(err)}; nothing was written.", err=True)


@app.command("list")
def list_cmd(
    sweeps: bool = typer.Option(False, "--sweeps", help="List the shipped sweep ids instead of the scenarios."),
) -> None:
    """List the catalog: one "<id>  <description>" per line (scenarios, or with --sweeps the sweeps)."""
    with _guard():
        if sweeps:
            from .sweep import load_spec, shipped_sweeps

            # exactly the contract's "<id>  <description>": two spaces, no padding, so that
            # splitting a line at its first two spaces gives both
            for sid in shipped_sweeps():
                typer.echo(f"{sid}  {load_spec(sid).description}")
            return
        for sid in scenarios():
            typer.echo(f"{sid}  {load(sid)._doc.get('description', '')}")


@app.command("keys")
def keys_cmd(
    prefix: str = typer.Argument("", help="Show only keys starting with this, e.g. traffic or cm.g."),
) -> None:
    """Every scenario key with its type, default, allowed values and meaning (docs/keys.md)."""
    from .keys import matching

    with _guard():
        found = matching(prefix)
        if not found:
            from .errors import did_you_mean, format_value
            from .keys import all_keys

            heads = sorted({k.name.split(".")[0].removesuffix("[]") for k in all_keys()})
            raise ScenarioError(f"cnsim keys: no key starts with {format_value(prefix)}.{did_you_mean(prefix, heads)} Tables: {', '.join(heads)}.")
        from rich.console import Console
        from rich.markup import escape
        from rich.table import Table

        console = Console(width=None if sys.stdout.isatty() else 160)
        table = Table(show_header=True, header_style="bold", box=None, pad_edge=False)
        for col in ("key", "type", "default", "allowed", "meaning"):
            table.add_column(col, overflow="fold")
        for k in found:  # escaped: "[t0, t1]" is text, not a rich style
            table.add_row(*(escape(cell) for cell in (k.name, k.type, k.default, k.allowed, k.doc)))
        console.print(table)


@app.command()
def show(
    scenario: str = typer.Argument(..., metavar="ID|FILE", help="Catalog id or scenario TOML file."),
    set_: list[str] | None = SetOpt,
    core: bool = typer.Option(False, "--core", help="Print the core config JSON handed to the engine."),
) -> None:
    """Print the fully resolved scenario as TOML (or, with --core, the engine's JSON)."""
    with _guard():
        scen = prepare(scenario, parse_overrides(set_))
        if not core:
            from .budget import estimate

            typer.echo(f"# estimate: {estimate(scen.core_config()).describe()}")
        typer.echo(scen.core_json(indent=2) if core else scen.to_toml().removesuffix("\n"))  # one newline at the end


def _progress_bar(total_ps: int, quiet: bool) -> tuple[Any, Any]:
    """A rich progress bar of simulated time when stdout is a terminal and not --quiet."""
    if quiet or not sys.stdout.isatty():
        return None, None
    from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

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


#: the metrics of the terminal summary of `cnsim run` (labels: cnsim.labels)
_RUN_TABLE = ("aggregate", "hot_port", "q_mean", "drops", "paused_fraction", "jain")


def _summary_table(result: Any, out: Path | None) -> Table:
    from rich.table import Table

    from .labels import METRICS, fmt, summary_value

    s = result.summary
    window = s.get("window_s") or []
    table = Table(title=f"{result.scenario.id} — scheme {s.get('scheme')}, seed {s.get('seed')}", show_header=False)
    table.add_column("metric")
    table.add_column("value", justify="right")
    if len(window) == 2:
        table.add_row("window", f"[{window[0]:g}, {window[1]:g}] s")
    for name in _RUN_TABLE:
        label, key, scale = METRICS[name]
        value = summary_value(s, key, scale)
        if name == "jain" and value is None:
            continue  # no flows to compare with their max-min share
        if name == "hot_port":
            label = f"{label}, {result.scenario.resolved.hot_port}"
        table.add_row(label, fmt(value))
    deadlock = s.get("deadlock")
    if deadlock:
        table.add_row("PAUSE deadlock", f"at {fmt(deadlock['t_s'])} s: {' -> '.join(deadlock['cycle'])}")
    table.add_row("wall time", f"{fmt(result.manifest.get('wall_s'))} s")
    if out is not None:
        table.add_row("results", str(out))
    return table


@app.command("run")
def run_cmd(
    scenario: str = typer.Argument(..., metavar="ID|FILE", help="Catalog id or scenario TOML file."),
    set_: list[str] | None = SetOpt,
    seed: int | None = typer.Option(None, "--seed", help="Random seed (overrides the scenario's)."),
    duration: str | None = typer.Option(None, "--duration", help="Simulated time, e.g. 0.5s."),
    out: Path | None = typer.Option(None, "--out", help="Run folder (default results/<id>-<timestamp>-<suffix>/); must be new or empty."),
    no_plots: bool = typer.Option(False, "--no-plots", help="Do not draw the figures."),
    quiet: bool = typer.Option(False, "--quiet", help="No progress bar and no summary table."),
    force: bool = typer.Option(False, "--force", help="Replace an existing --out folder, and run even if the estimate exceeds the machine."),
) -> None:
    """Simulate a scenario and write its run folder."""
    from . import outdir

    with _guard():
        scen = prepare(scenario, parse_overrides(set_), seed, _duration(duration))
        folder = outdir.choose(out, scen.id, force=force)
        bar, update = _progress_bar(scen.resolved.doc.duration, quiet)
        if bar is not None:
            with bar:
                result = run(scen, progress=update, force=force, meanwhile=_load_report_template)
        else:
            result = run(scen, force=force, meanwhile=_load_report_template)
        tmp = outdir.staging(folder)
        try:
            result.save(tmp, plots=not no_plots)  # the figures and the page that embeds them
            outdir.commit(tmp, folder)
        except BaseException:
            outdir.discard(tmp)
            raise
        with _saved_in(folder):
            if not quiet:
                from rich.console import Console

                Console().print(_summary_table(result, folder))


@contextmanager
def _saved_in(folder: Path) -> Iterator[None]:
    """Once the run folder is in place, Ctrl-C or SIGTERM still ends the command (130 / 143) but
    says where the whole results are: the guard's "nothing was written" would be false."""
    try:
        yield
    except KeyboardInterrupt as err:
        typer.echo(f"cnsim: {_signal_word(err)}; the run had finished: its results are complete in {folder}.", err=True)
        raise typer.Exit(_interrupt_status(err)) from None


def _load_report_template() -> None:
    from .report import load_template

    load_template()


#: --scale's defaults (the options are None when not given, so that they can be told apart)
_SCALE_EVENTS = 3e6
_SCALE_OUT = Path("bench-scale.json")
_STARTUP_ROUNDS = 5
_STARTUP_OUT = Path("bench-startup.json")


@app.command()
def bench(
    scenario: str | None = typer.Argument(None, metavar="[ID]", help="Catalog id or scenario file (default zhb-og-single-hop); not with --scale."),
    duration: str | None = typer.Option(None, "--duration", help="Simulated time to run (default: the scenario's; 10ms with --startup); not with --scale."),
    set_: list[str] | None = SetOpt,
    scale: bool = typer.Option(False, "--scale", help="The scale benchmark: the same workload at 16, 128, 512 and 2,048 hosts."),
    sizes: str | None = typer.Option(None, "--sizes", help="With --scale: host counts, e.g. 16,128 (default 16,128,512,2048)."),
    events: float | None = typer.Option(None, "--events", help="With --scale: events per size (about; default 3e6)."),
    out: Path | None = typer.Option(None, "--out", help="With --scale or --startup: the JSON file of the results (default bench-scale.json, bench-startup.json)."),
    rounds: int | None = typer.Option(None, "--rounds", help="With --scale: run every size this many times, interleaved; report the median (default 1). With --startup: the runs (default 5)."),
    startup: bool = typer.Option(False, "--startup", help="The start-up benchmark: `cnsim run ID` (default zhb-og-single-hop, --duration 10ms) in a fresh interpreter per round; the time outside the engine and the peak memory."),
) -> None:
    """Engine speed: events/s, delivered frames/s and simulated s per wall s of one scenario (no files, no plots); --scale against network size; --startup a whole `cnsim run`."""
    with _guard():
        if scale and startup:
            raise ScenarioError("--startup: not with --scale; the two benchmarks run one at a time")
        if startup:
            for scale_only, value_given in (("--sizes", sizes), ("--events", events)):
                if value_given is not None:
                    raise ScenarioError(f"{scale_only} {str(value_given)!r}: only with --scale (the scale benchmark); leave it out with --startup")
            _duration(duration)  # an empty --duration is refused as for a run
            _bench_startup(scenario if scenario is not None else "zhb-og-single-hop", duration if duration is not None else "10ms",
                           set_, _STARTUP_ROUNDS if rounds is None else rounds, _STARTUP_OUT if out is None else out)
            return
        if scale:
            for option, given in (("ID", scenario), ("--duration", duration), ("--set", set_ or None)):
                if given is not None:
                    shown = given if isinstance(given, str) else " ".join(given)
                    raise ScenarioError(
                        f"{option} {shown!r}: not with --scale, which runs its own workload (scale-ft-2048's shape at each "
                        "size, about --events events each); leave it out, or drop --scale to bench one scenario"
                    )
            _bench_scale(sizes, _SCALE_EVENTS if events is None else events, _SCALE_OUT if out is None else out,
                         1 if rounds is None else rounds)
            return
        for option, value in (("--sizes", sizes), ("--events", events), ("--out", out), ("--rounds", rounds)):
            if value is not None:
                raise ScenarioError(
                    f"{option} {str(value)!r}: only with --scale (the scale benchmark) or, --out and --rounds, with "
                    "--startup; `cnsim bench [ID]` runs one scenario and writes no file: add --scale, or leave the option out"
                )
        from .budget import check as check_budget

        scen = prepare(scenario if scenario is not None else "zhb-og-single-hop", parse_overrides(set_), None, _duration(duration))
        # the benchmark has no --force: the refusal says what to change, not to force it
        check_budget(scen.core_config(), force_hint="give a shorter --duration (`cnsim bench` has no --force)")
        result = run(scen, force=True)  # estimated just now
        m = result.manifest
        typer.echo(f"scenario           {result.scenario.id} (scheme {result.summary.get('scheme')}, {m['sim_s']:g} s simulated)")
        typer.echo(f"wall time          {m['wall_s']:.3f} s")
        typer.echo(f"events/s           {m['events_per_s'] or 0:,.0f}")
        typer.echo(f"frames/s           {m['frames_per_s'] or 0:,.0f}")
        typer.echo(f"sim s per wall s   {m['sim_s_per_wall_s'] or 0:.4f}")
        typer.echo(f"peak memory        {m['peak_rss_bytes'] / 2**20:.1f} MiB")


def _bench_out(out: Path) -> None:
    """Check --out of the scale benchmark before it runs (minutes of results must not be lost
    to a path that cannot be written): a file path in an existing, writable folder."""
    import os
    import tempfile

    if out == Path("."):  # both "" and "." arrive as Path(".")
        raise ScenarioError("--out '.' (or an empty value): names a folder; give the path of a JSON file, e.g. --out bench-scale.json")
    if out.is_dir():
        raise ScenarioError(f"--out {out}: is a folder; give the path of a JSON file, e.g. --out {out / 'bench-scale.json'}")
    if out.exists() and not out.is_file():
        raise ScenarioError(f"--out {out}: exists and is not a regular file; give the path of a JSON file")
    parent = out.parent
    if not parent.is_dir():
        raise ScenarioError(f"--out {out}: the folder {parent} does not exist; create it first or give another path")
    try:  # a real probe, as outdir does: root passes os.access, yet /proc and read-only mounts refuse
        fd, probe = tempfile.mkstemp(prefix=".cnsim-probe-", dir=parent)
        os.close(fd)
        os.unlink(probe)
    except OSError as err:
        raise ScenarioError(f"--out {out}: cannot write into {parent} ({err.strerror or err}); give another path") from None


def _scale_sizes(sizes: str | None) -> tuple[int, ...]:
    """--sizes as host counts, each one the scale benchmark can build, checked before running."""
    from .bench import MAX_HOSTS, SIZES, scale_document

    if sizes is None:
        return SIZES
    _nonempty("--sizes", sizes, "host counts separated by commas, e.g. 16,128,512,2048")
    try:
        hosts = tuple(int(x) for x in sizes.split(","))
    except ValueError:
        raise ScenarioError(f"--sizes {sizes!r}: expected host counts separated by commas, e.g. 16,128,512,2048") from None
    for h in hosts:
        if not 2 <= h <= MAX_HOSTS:
            raise ScenarioError(f"--sizes {sizes!r}: host count {h} is out of range; allowed: 2 to {MAX_HOSTS:,} hosts")
        try:
            scale_document(h)
        except ValueError as err:
            raise ScenarioError(f"--sizes {sizes!r}: {err}; up to 128 hosts any count, above that 2·k² (512, 2048, 8192, ...)") from None
    if len(set(hosts)) != len(hosts):
        raise ScenarioError(f"--sizes {sizes!r}: a size is repeated; give each host count once (--rounds repeats them)")
    return hosts


def _bench_scale(sizes: str | None, events: float, out: Path, rounds: int = 1) -> None:
    from dataclasses import asdict

    from .bench import check_scale, describe_machine, machine, run_scale

    hosts = _scale_sizes(sizes)
    if not 1e3 <= events <= 1e10:
        raise ScenarioError(f"--events {events:g}: about how many events per size; allowed: 1e3 to 1e10")
    _bench_rounds(rounds)
    _bench_out(out)
    check_scale(hosts, events)
    try:
        points = run_scale(hosts, events, rounds)
    except ValueError as err:
        raise ScenarioError(f"--sizes {sizes!r}: {err}") from None
    from rich.console import Console
    from rich.table import Table

    median = f", median of {rounds} interleaved rounds" if rounds > 1 else ""
    table = Table(title=f"scale benchmark: ~{events:.3g} events per size{median}", show_header=True)
    cols = ["hosts", "topology", "sim s", "events", "M ev/s", "M frames/s", "sim/wall", "wall/sim", "peak MiB", "vs first",
            "loop M ev/s", "loop vs first"]
    for col in cols + (["M ev/s rounds"] if rounds > 1 else []):
        table.add_column(col, justify="right", no_wrap=True)
    for p in points:
        row = [
            str(p.hosts), p.topology, f"{p.sim_s:.4g}", f"{p.events:,.0f}", f"{p.events_per_s / 1e6:.2f}", f"{p.frames_per_s / 1e6:.2f}",
            f"{p.sim_s_per_wall_s:.4g}", f"{p.wall_s_per_sim_s:.4g}", f"{p.peak_rss_mib:.0f}", f"{p.ratio:.2f}",
            f"{p.loop_events_per_s / 1e6:.2f}", f"{p.loop_ratio:.2f}",
        ]
        if rounds > 1:
            row.append(f"{min(p.events_per_s_rounds) / 1e6:.2f}–{max(p.events_per_s_rounds) / 1e6:.2f}")
        table.add_row(*row)
    Console(width=None if sys.stdout.isatty() else 180).print(table)
    host = machine()
    typer.echo(f"machine: {describe_machine(host)}")
    doc = {"events_target": events, "rounds": rounds, "machine": host, "sizes": [asdict(p) for p in points]}
    _write_bench_json(out, doc)


def _bench_rounds(rounds: int) -> None:
    """--rounds of the scale and start-up benchmarks, checked before anything runs."""
    if not 1 <= rounds <= 100:
        raise ScenarioError(f"--rounds {rounds}: a whole number of rounds from 1 to 100")


def _write_bench_json(out: Path, doc: dict[str, Any]) -> None:
    """A benchmark's results to ``out`` (checked by :func:`_bench_out`), written beside it and
    renamed over it, so that an interrupted write leaves no half file."""
    import json
    import os

    tmp = out.parent / f".{out.name}.partial"
    try:
        tmp.write_text(json.dumps(doc, indent=2) + "\n", encoding="utf-8")
        os.replace(tmp, out)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    typer.echo(f"results: {out}")


def _bench_startup(scenario: str, duration: str, set_: list[str] | None, rounds: int, out: Path) -> None:
    """The start-up benchmark (cnsim.bench.run_startup): the scenario is resolved here first, so
    that bad input is refused before any round runs."""
    import statistics
    import tempfile
    from dataclasses import asdict

    from .bench import describe_machine, machine, run_startup
    from .budget import check as check_budget

    _bench_rounds(rounds)
    _bench_out(out)
    scen = prepare(scenario, parse_overrides(set_), None, parse_set_value(duration))
    check_budget(scen.core_config(), force_hint="give a shorter --duration")  # as the run would: refused here, before any round
    run_args = [scenario, "--duration", duration, *(a for kv in (set_ or []) for a in ("--set", kv))]
    with tempfile.TemporaryDirectory(prefix="cnsim-bench-startup-") as folder:
        points = run_startup(run_args, rounds, folder)

    def median(key: str) -> float:
        return float(statistics.median(getattr(p, key) for p in points))

    def spread(key: str) -> str:
        values = [getattr(p, key) for p in points]
        return f"{min(values):.3f}–{max(values):.3f}" if len(values) > 1 else ""

    typer.echo(f"start-up benchmark: cnsim run {' '.join(run_args)} --no-plots --quiet, {rounds} round{'s' * (rounds > 1)} "
               "(a fresh interpreter each; medians, then the range)")
    typer.echo(f"whole process      {median('process_s'):.3f} s   {spread('process_s')}")
    typer.echo(f"engine             {median('engine_s'):.3f} s   {spread('engine_s')}")
    typer.echo(f"outside the engine {median('outside_s'):.3f} s   {spread('outside_s')}")
    typer.echo(f"peak memory        {median('peak_rss_mib'):.1f} MiB")
    host = machine()
    typer.echo(f"machine            {describe_machine(host)}")
    doc = {"command": ["cnsim", "run", *run_args, "--no-plots", "--quiet"], "rounds": [asdict(p) for p in points],
           "median": {k: median(k) for k in ("process_s", "engine_s", "outside_s", "peak_rss_mib")}, "machine": host}
    _write_bench_json(out, doc)


# ---- sweeps, reproduction and reports (docs/sweeps.md) -----------------------------------


def _runs_notes(outdated: list[str], repaired: list[str], failed: list[Any], where: str = "") -> None:
    """What a sweep, a check or a reproduction's study (``where``: " in STUDY") says on stderr
    about its runs, --quiet or not: the folders run again and the runs that failed."""
    if outdated:
        typer.echo(f"{len(outdated)} run folder(s){where} were made by another version of cnsim's results and were run again", err=True)
    if repaired:
        typer.echo(f"{len(repaired)} run folder(s){where} had a corrupted or partial summary.json, a missing manifest.json or "
                   f"scenario.toml, or a damaged or missing series file and were run again: {', '.join(repaired)}", err=True)
    for run_id, error in failed:
        typer.echo(f"run {run_id}{where} failed: {error}", err=True)


def _sweep_progress(quiet: bool, label: str) -> tuple[Any, Any]:
    """A rich bar of runs done/total with elapsed and remaining time (terminal, not --quiet)."""
    if quiet or not sys.stdout.isatty():
        return None, None
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn

    bar = Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("runs"),
        TimeElapsedColumn(),
        TextColumn("remaining"),
        TimeRemainingColumn(),
        TextColumn("{task.fields[failed]}"),
    )

    def factory(name: str) -> Any:
        task = bar.add_task(name or label, total=None, failed="")

        def update(done: int, total: int, failed: int) -> None:
            bar.update(task, completed=done, total=total, failed=f"{failed} failed" if failed else "")

        return update

    return bar, factory


_CHECK_OUTPUTS = {"runs", "sweep.parquet", "catalog.duckdb", "checks.json", "checks.parquet", "figures", "report.html"}


def _is_run_id(name: str) -> bool:
    return len(name) == 16 and all(c in "0123456789abcdef" for c in name)


def _visible(folder: Path) -> set[str]:
    """The names in ``folder`` but hidden ones (temporary files of an interrupted command)."""
    return {p.name for p in folder.iterdir() if not p.name.startswith(".")}


def _check_folder_refusal(folder: Path) -> str | None:
    """Why ``folder`` (existing, non-empty) is not a previous ``cnsim check``'s folder, or None."""
    names = _visible(folder)
    others = sorted(names - _CHECK_OUTPUTS)
    if others:
        return f"it holds files that `cnsim check` does not write ({', '.join(others[:3])}{', ...' if len(others) > 3 else ''})"
    runs = folder / "runs"
    if (folder / "checks.json").is_file():
        return None
    if runs.is_dir() and all(_is_run_id(n) for n in _visible(runs)):
        return None  # a check interrupted before it wrote checks.json
    return "it holds no checks.json and no run folders of a check"


def _reproduce_folder_refusal(folder: Path, deck: Any, quick: bool) -> str | None:
    """Why ``folder`` (existing, non-empty) is not a previous ``cnsim reproduce DECK [--quick]``'s
    folder, or None."""
    import json

    from .rundir import SWEEP_PLAN_FILE

    studies = {s.sweep for s in deck.studies}
    names = _visible(folder)
    others = sorted(names - studies - {"deck.json", "report.html", "catalog.duckdb", "checks"})
    if others:
        return f"it holds files that `cnsim reproduce {deck.name}` does not write ({', '.join(others[:3])}{', ...' if len(others) > 3 else ''})"
    mine = f"cnsim reproduce {deck.name}{' --quick' if quick else ''}"
    if (folder / "deck.json").is_file():
        try:
            previous = json.loads((folder / "deck.json").read_text(encoding="utf-8"))
            theirs = f"cnsim reproduce {previous['deck']}{' --quick' if previous.get('quick') else ''}"
        except (OSError, ValueError, KeyError, TypeError):
            return "its deck.json does not read back"
        return _study_refusal(folder, deck, quick) if theirs == mine else f"it holds the output of `{theirs}`, not of `{mine}`"
    if any((folder / n / SWEEP_PLAN_FILE).is_file() for n in names & studies):
        return _study_refusal(folder, deck, quick)  # interrupted before its first deck.json
    return "it holds no deck.json and no study of the deck"


def _study_refusal(folder: Path, deck: Any, quick: bool) -> str | None:
    """Why the studies in ``folder`` are not this reproduction's (None: they are, or say
    nothing): a study whose sweep.json holds the spec of the other mode (``--quick`` or not).
    Before its first deck.json a reproduction is known only by its studies, and one cut short
    in its first study was resumed in the other mode, its study then holding quick and full runs
    side by side (in the catalog too)."""
    import json

    from .reproduce import study_spec
    from .results import dump_json
    from .rundir import SWEEP_PLAN_FILE, read_json

    def spelled(spec: Any) -> Any:
        return None if spec is None else json.loads(dump_json(spec.to_dict()))

    for study in deck.studies:
        plan = read_json(folder / study.sweep / SWEEP_PLAN_FILE)
        previous = plan.get("spec") if isinstance(plan, dict) else None
        if previous is None or previous == spelled(study_spec(study, deck, quick)[0]):
            continue
        if previous == spelled(study_spec(study, deck, not quick)[0]):
            mine, theirs = (f"cnsim reproduce {deck.name}{' --quick' if q else ''}" for q in (quick, not quick))
            return f"its study {study.sweep} holds the runs of `{theirs}`, not of `{mine}`"
    return None


def _resumable_out(out: Path | None, name: str, force: bool = False, refusal: Callable[[Path], str | None] | None = None) -> Path:
    """The folder of `sweep`, `reproduce` and `check`: new and unique by default. A given non-empty one is
    resumed (its runs are a cache by run id) only if it holds this command's own output
    (``refusal(folder)`` says why not), refused otherwise unless ``force`` (it is then replaced,
    after the command's input has been checked)."""
    from .outdir import choose

    folder = choose(out, name, force=force, resume=True)
    if out is None or force or refusal is None or not folder.is_dir() or not any(folder.iterdir()):
        return folder
    why = refusal(folder)
    if why is not None:
        raise ScenarioError(f"--out {out}: the folder is not empty and {why}; it resumes only its own earlier output. "
                            "Choose another folder, or pass --force to replace it")
    return folder


def _sweep_folder_refusal(folder: Path, spec: Any, extend: bool = False) -> str | None:
    """Why a non-empty folder is not this spec's sweep to resume (None: it is, by its
    sweep.json), so that runs of another sweep, or a run folder, are never mixed into this one's
    table and catalog. With ``extend`` a sweep of the same name whose settings changed is resumed
    too (:func:`_refuse_runs_outside` then checks that the new plan keeps every run)."""
    import json

    from .results import dump_json
    from .rundir import SWEEP_PLAN_FILE

    plan = folder / SWEEP_PLAN_FILE
    if not plan.is_file():
        return f"holds no sweep ({SWEEP_PLAN_FILE})"
    try:
        previous = json.loads(plan.read_text(encoding="utf-8"))["spec"]
    except (OSError, ValueError, KeyError, TypeError):
        return f"its {SWEEP_PLAN_FILE} does not read back (a damaged sweep folder)"
    if previous == json.loads(dump_json(spec.to_dict())):
        return None
    other = previous.get("name") if isinstance(previous, dict) else None
    if other != spec.name:
        return f"holds another sweep ({other!r}) than {spec.name!r}"
    if extend:
        return None
    return (f"holds sweep {spec.name!r} with other settings (pass --extend to keep its runs and add the "
            "new spec's: every run it holds must still be in the new plan)")


def _refuse_runs_outside(folder: Path, tasks: list[Any]) -> None:
    """``--extend`` keeps every run the folder holds: refused when the new plan drops some (a value
    or seed removed), since the table would leave them out while the catalog kept them."""
    from .rundir import PARAMS_FILE, read_json
    from .sweep import runs_outside

    left = runs_outside(folder, tasks)
    if not left:
        return
    points = []
    for run_id in left[:3]:
        doc = read_json(folder / "runs" / run_id / PARAMS_FILE)  # any JSON: a damaged label names no point
        doc = doc if isinstance(doc, dict) else {}
        params = doc.get("params")
        params = params if isinstance(params, dict) else {}
        values = ", ".join(f"{k} = {v}" for k, v in params.items())
        points.append(f"{run_id[:12]} ({values + ', ' if values else ''}seed {doc.get('seed', '?')})")
    more = f" and {len(left) - 3} more" if len(left) > 3 else ""
    are = "of them is" if len(left) == 1 else "of them are"
    raise ScenarioError(
        f"--out {folder}: --extend keeps every run the folder holds, and {len(left)} {are} not in the new "
        f"plan: {'; '.join(points)}{more}. Put their values and seeds back in the spec, choose another "
        "folder, or pass --force to replace it"
    )


@app.command()
def sweep(
    spec: str = typer.Argument(..., metavar="SPEC.toml|ID", help="Sweep spec file, or a shipped sweep id (scenarios.md §8)."),
    workers: int | None = typer.Option(None, "--workers", help="Parallel runs (default: all cores; Dask: the cluster's)."),
    executor: str = typer.Option("local", "--executor", help="local (threads), process, or dask."),
    scheduler: str | None = typer.Option(None, "--scheduler", help="Dask scheduler ADDRESS (default: start a local cluster)."),
    out: Path | None = typer.Option(None, "--out", help="Sweep folder (default results/<name>-<timestamp>/); rerun into it to resume."),
    plots: bool = typer.Option(False, "--plots", help="Draw the per-run figures and report.html of every run."),
    quiet: bool = typer.Option(False, "--quiet", help="No progress bar and no summary."),
    force: bool = typer.Option(False, "--force", help="Replace a non-empty --out (otherwise only this spec's own sweep folder is resumed)."),
    extend: bool = typer.Option(False, "--extend", help="Resume --out although the spec changed (values, seeds or axes added): its runs are reused, the new ones run."),
) -> None:
    """Run a sweep: every run folder, DIR/sweep.parquet and DIR/catalog.duckdb; resumes in DIR."""
    from . import outdir
    from .executors import make_executor
    from .sweep import load_spec, run_sweep
    from .sweep import plan as plan_sweep

    with _guard():
        _executor_options(executor, workers, scheduler)
        parsed = load_spec(spec)
        if force and extend:
            raise ScenarioError("--force and --extend: choose one (--force replaces the folder's runs, --extend keeps them)")
        if extend and out is None:
            raise ScenarioError("--extend: give the --out folder of the sweep to extend (without --out the sweep goes to a new folder)")
        folder = _resumable_out(out, parsed.name, force, lambda f: _sweep_folder_refusal(f, parsed, extend))
        tasks = plan_sweep(parsed, folder, plots=plots)  # every run resolved and estimated first
        if extend:
            _refuse_runs_outside(folder, tasks)
        bar, factory = _sweep_progress(quiet, parsed.name)
        pool = make_executor(executor, workers, scheduler)
        _fits_in_memory(pool, [t.memory_bytes for t in tasks])
        if force and folder.is_dir():
            outdir.clear(folder)
        try:
            if bar is not None:
                with bar:
                    result = run_sweep(parsed, folder, executor=pool, plots=plots, progress=factory(parsed.name), tasks=tasks)
            else:
                result = run_sweep(parsed, folder, executor=pool, plots=plots, tasks=tasks)
        except KeyboardInterrupt as err:
            pool.close()
            _stopped(err, folder, f"cnsim sweep {spec}")
            raise typer.Exit(_interrupt_status(err)) from None
        finally:
            pool.close()
        from .report import write_run_reports, write_sweep_report

        if plots:
            write_run_reports(folder / "runs")
        write_sweep_report(folder)
        if not quiet:
            typer.echo(
                f"sweep {parsed.name}: {result.total} runs ({result.reused} already done, {result.ran} run, "
                f"{len(result.failed)} failed) in {result.wall_s:.1f} s on {pool.name} → {folder}/sweep.parquet, {folder}/report.html"
            )
        _runs_notes(result.outdated, result.repaired, result.failed)
        if result.failed:
            raise typer.Exit(1)


@app.command()
def reproduce(
    deck: str = typer.Argument(..., metavar="DECK", help="zhb | qcnp | kd | e2cm | eval | modern"),
    quick: bool = typer.Option(False, "--quick", help="Shortened runs (CI, smoke tests): about a minute for a deck's studies, and its checks' quick runs (--no-checks skips them)."),
    out: Path | None = typer.Option(None, "--out", help="Folder (default results/reproduce-<deck>-<timestamp>/); rerun into it to resume."),
    workers: int | None = typer.Option(None, "--workers", help="Parallel runs (default: all cores)."),
    executor: str = typer.Option("local", "--executor", help="local (threads), process, or dask."),
    scheduler: str | None = typer.Option(None, "--scheduler", help="Dask scheduler ADDRESS."),
    quiet: bool = typer.Option(False, "--quiet", help="No progress bar and no summary."),
    checks: bool | None = typer.Option(None, "--checks/--no-checks", help="Run the deck's checks of targets.md (cnsim check) into DIR/checks/ and show them in the report (default: when the deck has checks; every deck but modern)."),
    force: bool = typer.Option(False, "--force", help="Replace a non-empty --out that holds something else than this deck's earlier output."),
) -> None:
    """Reproduce a study deck: run its sweeps, draw its figures, write DIR/report.html."""
    from . import outdir
    from .executors import make_executor
    from .reproduce import get_deck, plan_deck
    from .reproduce import reproduce as run_deck

    with _guard():
        the_deck = get_deck(deck)
        _executor_options(executor, workers, scheduler)
        folder = _resumable_out(out, f"reproduce-{deck}{'-quick' if quick else ''}", force,
                                lambda f: _reproduce_folder_refusal(f, the_deck, quick))
        planned = plan_deck(deck, quick=quick, checks=checks)  # every run resolved and estimated first
        bar, factory = _sweep_progress(quiet, deck)
        pool = make_executor(executor, workers, scheduler)
        for study in planned.studies:  # the studies run one after another, each on all workers
            _fits_in_memory(pool, study.memory)
        _fits_in_memory(pool, planned.check_memory)  # then the checks' runs
        if force and folder.is_dir():
            outdir.clear(folder)
        try:
            if bar is not None:
                with bar:
                    doc = run_deck(deck, folder, quick=quick, executor=pool, progress=factory, checks=checks, planned=planned)
            else:
                doc = run_deck(deck, folder, quick=quick, executor=pool, checks=checks, planned=planned)
        except KeyboardInterrupt as err:
            pool.close()
            _stopped(err, folder, f"cnsim reproduce {deck}{' --quick' if quick else ''}{' --no-checks' if checks is False else ''}")
            raise typer.Exit(_interrupt_status(err)) from None
        finally:
            pool.close()
        if not quiet:
            for s in doc["studies"]:
                lost = f" ({len(s['failed'])} failed)" if s.get("failed") else ""
                note = f"{s.get('runs')} runs{lost}, {len(s['figures'])} figures, {s.get('wall_s', 0):.1f} s" if s["status"] != "pending" else s["reason"]
                typer.echo(f"{s['status']:>8}  {s['sweep']:<28} {note}")
            if doc.get("checks"):
                from .check import tally_line

                typer.echo(f"  checks  {tally_line(deck, doc['checks'])}")
            typer.echo(f"reproduce {deck}: {doc['wall_s']:.1f} s → {folder}/report.html")
        for s in doc["studies"]:
            _runs_notes(s.get("outdated") or [], s.get("repaired") or [], s.get("failed") or [], f" in {s['sweep']}")
        check_runs = doc.get("check_runs") or {}
        _runs_notes(check_runs.get("outdated") or [], check_runs.get("repaired") or [], check_runs.get("failed") or [], " of the checks")
        if any(s.get("failed") for s in doc["studies"]):
            raise typer.Exit(1)


@app.command()
def check(
    deck: str = typer.Argument("all", metavar="[DECK|all]", help="A check deck (zhb, qcnp, kd, eval, e2cm, cross) or all."),
    quick: bool = typer.Option(False, "--quick", help="One seed, runs cut after the last window measured (docs/fidelity.md)."),
    seeds: int | None = typer.Option(None, "--seeds", help="Seeds per point (default 3, or 1 with --quick)."),
    workers: int | None = typer.Option(None, "--workers", help="Parallel runs (default: all cores)."),
    executor: str = typer.Option("local", "--executor", help="local (threads), process, or dask."),
    scheduler: str | None = typer.Option(None, "--scheduler", help="Dask scheduler ADDRESS."),
    out: Path | None = typer.Option(None, "--out", help="Folder (default results/check-<deck>-<timestamp>/); rerun into it to reuse its runs."),
    strict: bool = typer.Option(False, "--strict", help="Exit 1 when a check fails."),
    only: list[str] | None = typer.Option(None, "--only", metavar="ID", help="Only these check ids (repeatable), e.g. --only T-K15."),
    quiet: bool = typer.Option(False, "--quiet", help="No progress bar and no tally."),
    force: bool = typer.Option(False, "--force", help="Replace a non-empty --out that holds something else than an earlier check's output."),
    against: Path | None = typer.Option(None, "--against", metavar="DIR", help="An earlier check's folder (or its checks.json): print which verdicts changed and which measured values moved."),
) -> None:
    """Run and judge the numbered checks of targets.md: DIR/checks.json, checks.parquet, report.html."""
    from . import outdir
    from .check import FAIL, deck_names, plan_checks, run_checks, tally_line
    from .check.compare import compare, comparison_lines, load_judgement
    from .executors import make_executor

    with _guard():
        names = None if deck == "all" else [deck]
        if names is not None and deck not in deck_names():
            raise ScenarioError(f"unknown check deck {deck!r}; decks: {', '.join(deck_names())}, or all")
        if seeds is not None and seeds < 1:
            raise ScenarioError(f"--seeds: must be at least 1 (given {seeds})")
        _executor_options(executor, workers, scheduler)
        earlier = load_judgement(against) if against is not None else None  # read before anything runs or is replaced
        folder = _resumable_out(out, f"check-{deck}{'-quick' if quick else ''}", force, _check_folder_refusal)
        planned = plan_checks(names, folder, quick=quick, seeds=seeds, only=only)  # every run resolved and estimated first
        bar, factory = _sweep_progress(quiet, f"check {deck}")
        pool = make_executor(executor, workers, scheduler)
        _fits_in_memory(pool, [t.memory_bytes for t in planned.plan.tasks])
        if force and folder.is_dir():
            outdir.clear(folder)
        try:
            if bar is not None:
                with bar:
                    doc = run_checks(names, folder, quick=quick, seeds=seeds, executor=pool, only=only,
                                     progress=factory(f"check {deck}"), planned=planned)
            else:
                doc = run_checks(names, folder, quick=quick, seeds=seeds, executor=pool, only=only, planned=planned)
        except KeyboardInterrupt as err:
            pool.close()
            # the options that make the plan (a resume without them runs and judges another one)
            again = "".join([" --quick" if quick else "", f" --seeds {seeds}" if seeds is not None else "",
                             *(f" --only {i}" for i in dict.fromkeys(only or []))])
            _stopped(err, folder, f"cnsim check {deck}{again}")
            raise typer.Exit(_interrupt_status(err)) from None
        finally:
            pool.close()
        if not quiet:
            for name, counts in doc["tally"].items():
                typer.echo(tally_line(name, counts))
            failed = f", {len(doc['failed_runs'])} failed: the checks that need them are not_run" if doc["failed_runs"] else ""
            typer.echo(f"check {deck}: {doc['runs']} runs ({doc['ran']} run now{failed}) in {doc['wall_s']:.1f} s → {folder}/report.html")
        _runs_notes(doc["outdated_runs"], doc["repaired"], doc["failed_runs"])
        if earlier is not None:
            for line in comparison_lines(compare(earlier, doc["checks"]), earlier, quick):
                typer.echo(line)
        if strict and any(r["verdict"] == FAIL for r in doc["checks"]):
            raise typer.Exit(1)


@app.command()
def report(
    folder: Path = typer.Argument(..., metavar="DIR", help="A run, sweep or reproduction folder."),
) -> None:
    """(Re)build DIR/report.html from the results on disk."""
    from .rebuild import build_report

    with _guard():
        path = build_report(folder)
        typer.echo(str(path))
        from .report import missing_scenario_notice
        from .rundir import SCENARIO_FILE, SUMMARY_FILE

        if (folder / SUMMARY_FILE).is_file() and not (folder / SCENARIO_FILE).exists():
            typer.echo(f"cnsim: warning: {missing_scenario_notice(folder)}", err=True)


@app.command()
def fluid(
    scenario: str = typer.Argument(..., metavar="ID|FILE", help="Catalog id or scenario TOML file."),
    set_: list[str] | None = SetOpt,
    compare: bool = typer.Option(False, "--compare", help="Also run the packet simulator and plot both."),
    seed: int | None = typer.Option(None, "--seed", help="Seed of the packet run (with --compare)."),
    out: Path | None = typer.Option(None, "--out", help="Output folder (default results/<id>-fluid-<timestamp>-<suffix>/); must be new or empty."),
    no_plots: bool = typer.Option(False, "--no-plots", help="Do not draw the figures."),
    quiet: bool = typer.Option(False, "--quiet", help="No summary lines."),
    force: bool = typer.Option(False, "--force", help="Replace an existing --out folder, and integrate (and run) even if the estimate exceeds the bound."),
) -> None:
    """The fluid model of a scenario (BCN, QCN, DCQCN) and its linear stability (docs/fluid.md)."""
    from . import outdir
    from .fluid.params import default_scheme
    from .fluid.report import fluid_study, write_outputs

    with _guard():
        overrides = parse_overrides(set_)
        preset = default_scheme(scenario, overrides)
        folder = outdir.choose(out, f"{Path(scenario).stem}-fluid", force=force)
        study = fluid_study(scenario, overrides, compare=compare, seed=seed, force=force)
        tmp = outdir.staging(folder)
        try:
            write_outputs(study, tmp, plots=not no_plots)
            outdir.commit(tmp, folder)
        except BaseException:
            outdir.discard(tmp)
            raise
        with _saved_in(folder):
            if not quiet:
                s = study.summary
                pm = s.get("phase_margin_rad")
                per = s.get("period_s")
                typer.echo(f"{study.params.scenario} — {s['scheme']} fluid model: "
                           f"{'stable' if s['stable'] else 'unstable'}"
                           + (f", phase margin {pm:.3f} rad at {s['crossover_rad_s']:.4g} rad/s" if pm is not None else "")
                           + (f", period {per * 1e3:.2f} ms" if per else ""))
                if preset:
                    typer.echo(f"  (the scenario runs without CM: the model is its {preset} preset's; --set cm.scheme=… takes another)")
                typer.echo(f"  fluid: hot queue mean {s['queue_mean_bytes'] / 1e3:.1f} KB, per-flow rate {s['rate_mean_gbps']:.4g} Gb/s")
                cmp_ = s.get("compare")
                if cmp_:
                    pk = cmp_["packet"]
                    typer.echo(f"  packet: hot queue mean {pk['queue_mean_bytes'] / 1e3:.1f} KB (std {pk['queue_std_bytes'] / 1e3:.1f}), "
                               f"period {'n/a' if not pk['period_s'] else format(pk['period_s'] * 1e3, '.2f') + ' ms'}")
                typer.echo(f"  results: {folder}")


def main() -> None:
    """Console-script entry point."""
    import signal

    signal.signal(signal.SIGTERM, _on_sigterm)
    app()


if __name__ == "__main__":  # pragma: no cover
    main()
