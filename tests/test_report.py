"""Reports (cnsim.report): self-contained report.html per run, per sweep and per reproduced deck,
checked in a real headless browser (Debian's chromium): no console output, every figure decoded.
A screenshot is kept in ``test-artifacts/`` (or ``$CNSIM_TEST_ARTIFACTS``)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import cnsim
import pytest
from cnsim.cli import app
from cnsim.rebuild import build_report
from typer.testing import CliRunner

runner = CliRunner()
ARTIFACTS = Path(os.environ.get("CNSIM_TEST_ARTIFACTS", Path(__file__).resolve().parents[1] / "test-artifacts"))


def _assert_self_contained(html: str) -> None:
    assert not re.search(r"""(src|href)\s*=\s*["'](https?:|//)""", html), "the page loads something from the network"
    assert "<link " not in html


@pytest.fixture(scope="module")
def kd_deck(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("deck")
    res = runner.invoke(app, ["reproduce", "kd", "--quick", "--out", str(out), "--quiet"])
    assert res.exit_code == 0, res.output
    return out


def test_run_report_from_a_run_folder(tmp_path: Path) -> None:
    r = cnsim.run("kd-symmetric-single-hs", set={"cm.scheme": "bcn"}, duration="0.03s")
    r.save(tmp_path, plots=False)
    res = runner.invoke(app, ["report", str(tmp_path)])
    assert res.exit_code == 0, res.output
    html = (tmp_path / "report.html").read_text()
    _assert_self_contained(html)
    assert html.count('class="cnsim-figure"') == 3  # figures drawn from the series on disk
    assert "S1/EP4" in html and "EP0-&gt;EP4" in html  # resolved parameters and per-flow table
    assert (tmp_path / "throughput.png").is_file()


@pytest.fixture(scope="module")
def run_folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder written by `cnsim run` itself (issue 13: its report.html showed no figure)."""
    out = tmp_path_factory.mktemp("run") / "r"
    res = runner.invoke(app, ["run", "kd-symmetric-single-hs", "--set", "cm.scheme=bcn", "--duration", "0.03s", "--out", str(out), "--quiet"])
    assert res.exit_code == 0, res.output
    return out


def test_cnsim_run_report_embeds_its_figures(run_folder: Path) -> None:
    html = (run_folder / "report.html").read_text()
    _assert_self_contained(html)
    assert html.count('class="cnsim-figure"') == 3
    assert "No figures" not in html


def test_cnsim_sweep_writes_report_html(tmp_path: Path) -> None:
    spec = tmp_path / "s.toml"
    spec.write_text('name = "s"\nbase = "kd-symmetric-single-hs"\nseeds = [1]\n[set]\nduration = "0.01s"\n[axes]\n"cm.scheme" = ["none", "bcn"]\n')
    res = runner.invoke(app, ["sweep", str(spec), "--out", str(tmp_path / "out"), "--workers", "1", "--quiet"])
    assert res.exit_code == 0, res.output
    html = (tmp_path / "out" / "report.html").read_text()
    _assert_self_contained(html)
    assert "Runs (2)" in html


def test_sweep_and_deck_reports(kd_deck: Path) -> None:
    sweep_dir = kd_deck / "kd-qeq150-delay"
    path = build_report(sweep_dir)
    html = path.read_text()
    _assert_self_contained(html)
    assert "Runs (4)" in html and "4us" in html
    (kd_deck / "report.html").unlink()
    res = runner.invoke(app, ["report", str(kd_deck)])
    assert res.exit_code == 0, res.output
    html = (kd_deck / "report.html").read_text()
    _assert_self_contained(html)
    assert html.count('class="cnsim-figure"') == 18  # 6 studies × 3
    assert "loop delay" in html


def test_a_run_without_its_scenario_is_reported_with_a_warning(tmp_path: Path) -> None:
    r = cnsim.run("kd-symmetric-single-hs", duration="0.01s")
    r.save(tmp_path, plots=False)
    (tmp_path / "scenario.toml").unlink()
    res = runner.invoke(app, ["report", str(tmp_path)])
    assert res.exit_code == 0, res.output
    assert "warning" in res.stderr and "scenario.toml is missing" in res.stderr
    html = (tmp_path / "report.html").read_text()
    assert "scenario.toml is missing: the parameters this run simulated are unknown" in html
    # with its scenario the page says nothing of the kind
    r.save(tmp_path / "whole", plots=False)
    res = runner.invoke(app, ["report", str(tmp_path / "whole")])
    assert res.exit_code == 0 and not res.stderr
    assert "is missing" not in (tmp_path / "whole" / "report.html").read_text()


def test_report_of_a_non_results_folder_exit_2(tmp_path: Path) -> None:
    res = runner.invoke(app, ["report", str(tmp_path)])
    assert res.exit_code == 2 and "not a results folder" in res.output


def _chromium() -> str | None:
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    return None


def _load_in_browser(page: Path, screenshot: Path | None = None) -> tuple[dict[str, str], list[str]]:
    """(attributes of <body> after load, console messages) from headless chromium."""
    browser = _chromium()
    assert browser is not None
    flags = [browser, "--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
             "--enable-logging=stderr", "--v=0", "--virtual-time-budget=5000"]
    proc = subprocess.run([*flags, "--dump-dom", page.resolve().as_uri()], capture_output=True, text=True, timeout=120)
    body = re.search(r"<body([^>]*)>", proc.stdout)
    attrs = dict(re.findall(r'([\w-]+)="([^"]*)"', body.group(1))) if body else {}
    console = [line for line in proc.stderr.splitlines() if ":CONSOLE" in line]
    if screenshot is not None:
        screenshot.parent.mkdir(parents=True, exist_ok=True)
        subprocess.run([*flags, "--window-size=1280,2400", "--hide-scrollbars", f"--screenshot={screenshot}", page.resolve().as_uri()],
                       capture_output=True, timeout=120)
    return attrs, console


needs_chromium = pytest.mark.skipif(
    _chromium() is None,
    reason="Debian's chromium is not installed (scripts/test.sh installs it with apt-get; it could not here)",
)


@needs_chromium
def test_browser_catches_a_broken_page(tmp_path: Path) -> None:
    """The check itself can fail: a bad figure and a script error are both seen."""
    page = tmp_path / "bad.html"
    good = (Path(cnsim.__file__).parent / "report" / "templates" / "report.html.j2").read_text()
    check = good[good.index("<script>"): good.index("</script>") + len("</script>")]
    page.write_text('<html><body><img class="cnsim-figure" src="data:image/png;base64,AAAA">'
                    '<script>throw new Error("broken");</script>' + check + "</body></html>")
    attrs, console = _load_in_browser(page)
    assert attrs.get("data-figures-total") == "1" and attrs.get("data-figures-loaded") == "0"
    assert any("broken" in line for line in console)


@needs_chromium
def test_run_report_in_headless_chromium(run_folder: Path) -> None:
    attrs, console = _load_in_browser(run_folder / "report.html")
    assert console == [], console
    assert attrs.get("data-figures-total") == "3"
    assert attrs.get("data-figures-loaded") == "3"


@needs_chromium
def test_deck_report_in_headless_chromium(kd_deck: Path) -> None:
    shot = ARTIFACTS / "report-kd-quick.png"
    attrs, console = _load_in_browser(kd_deck / "report.html", screenshot=shot)
    assert console == [], console
    assert attrs.get("data-figures-total") == "18"
    assert attrs.get("data-figures-loaded") == "18"
    assert shot.is_file() and shot.stat().st_size > 10_000


def test_result_shows_itself_in_jupyter() -> None:
    """Issue 13: `_repr_html_` with the headline metrics and two figures."""
    r = cnsim.run("kd-symmetric-single-hs", set={"cm.scheme": "bcn"}, duration="0.02s")
    html = r._repr_html_()
    assert "kd-symmetric-single-hs" in html and "scheme bcn" in html
    assert "aggregate (Gb/s)" in html and "hot queue mean (KB)" in html
    assert html.count("data:image/png;base64,") == 2
    assert "alt='throughput'" in html and "alt='queue'" in html
    _assert_self_contained(html)


def test_the_page_template_is_compiled_once_per_process() -> None:
    """Compiling the template took longer than rendering a run's page (40 run pages: 1.15 →
    0.40 s), and `cnsim sweep --plots` renders one per run: it is compiled once and reused."""
    from cnsim import report

    report._template.cache_clear()
    first = report.render(report.Page(title="a", subtitle=["subtitle-of-page-1"]))
    second = report.render(report.Page(title="b", subtitle=["subtitle-of-page-2"]))
    assert report._template.cache_info().misses == 1
    assert "subtitle-of-page-1" in first and "subtitle-of-page-2" in second
    assert "subtitle-of-page-1" not in second


def _page_text(env: Any) -> str:
    from cnsim import report

    page = report.Page(title="cached", subtitle=["the-subtitle"])
    return str(env.get_template("report.html.j2").render(page=page, version="v", generated="g"))


def test_the_compiled_template_is_cached_across_processes(tmp_path: Path) -> None:
    """The first environment compiles the template and stores its code; a later one (another
    process) loads it and never compiles — and renders the same page."""
    from cnsim import report

    first = report._environment(report._bytecode_cache(str(tmp_path)))
    expected = _page_text(first)
    assert len(list(tmp_path.iterdir())) == 1, "one cache entry for the one template"

    later = report._environment(report._bytecode_cache(str(tmp_path)))

    def no_compile(*args: Any, **kwargs: Any) -> None:
        raise AssertionError("the template was compiled although its code is cached")

    later.compile = no_compile  # type: ignore[method-assign]
    assert _page_text(later) == expected


def test_a_cache_that_cannot_be_written_or_read_only_costs_a_compile(tmp_path: Path) -> None:
    """The cache is an optimisation: a folder that is a file, or a damaged entry, renders the
    page as without a cache."""
    from cnsim import report
    from jinja2.bccache import bc_magic

    expected = _page_text(report._environment(None))
    not_a_folder = tmp_path / "file"
    not_a_folder.write_text("x")
    assert _page_text(report._environment(report._bytecode_cache(str(not_a_folder)))) == expected

    folder = tmp_path / "cache"
    folder.mkdir()
    _page_text(report._environment(report._bytecode_cache(str(folder))))
    (entry,) = folder.iterdir()
    entry.write_bytes(bc_magic + b"not a pickle")
    assert _page_text(report._environment(report._bytecode_cache(str(folder)))) == expected
    assert entry.read_bytes() != bc_magic + b"not a pickle", "the damaged entry is replaced"
