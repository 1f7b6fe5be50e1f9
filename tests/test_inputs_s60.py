"""Bad or merely large input found by the input audit of stop 60 (docs/robustness.md, "Bad
input found by the stop-60 audit"): each must end in exit status 2 with a short message on
the command line, or :class:`cnsim.ScenarioError` in Python — never a traceback, another
exception type, or a run that does not end."""

from __future__ import annotations

import cnsim
import pytest
from _cli import refused
from cnsim import ScenarioError

BASE = "zhb-og-single-hop"


# --- hotspots: the engine looks every window up at every hotspot event -------------------------


def _hotspots(n: int) -> list[dict[str, object]]:
    return [{"node": str(1 + i % 16), "rate": 0.2, "start": f"{i}ns", "end": f"{i + 1}ns"} for i in range(n)]


def test_more_hotspot_windows_than_the_limit_are_refused() -> None:
    """200,000 one-nanosecond hotspots (a 14 MB file) ran for more than 5 minutes in a 1 ms run:
    the engine finds the window that sets a port's rate by scanning all of them."""
    from cnsim.scenario.schema import MAX_HOTSPOTS

    with pytest.raises(ScenarioError, match=rf'hotspots: at most {MAX_HOTSPOTS:,} hotspot windows are supported \(given "{MAX_HOTSPOTS + 1:,} windows"\)' ):
        cnsim.load(BASE).set("hotspots", _hotspots(MAX_HOTSPOTS + 1)).validate()
    cnsim.load(BASE).set("hotspots", _hotspots(MAX_HOTSPOTS)).validate()  # the limit itself is fine


# --- a path longer than the file system takes (ENAMETOOLONG) ---------------------------------

LONG = "x" * 5000


@pytest.mark.parametrize("command", [["show"], ["run"], ["fluid"], ["bench"], ["sweep"], ["report"]])
def test_a_path_too_long_to_look_up_is_named_in_a_short_message(command: list[str]) -> None:
    """The file system refuses to look the name up (OSError: File name too long): the command
    said "cnsim: I/O error" and echoed all 5,000 characters."""
    err = refused([*command, LONG])
    assert "x" * 100 not in err and "5,000 characters" in err, err


def test_a_run_folder_too_long_to_look_up_is_named_in_a_short_message() -> None:
    err = refused(["run", BASE, "--duration", "1ms", "--out", LONG])
    assert "x" * 100 not in err and "File name too long" in err, err


def test_the_api_refuses_a_path_too_long_to_look_up() -> None:
    """cnsim.load, Result.load and catalog.runs raised the OSError itself."""
    import cnsim.catalog

    with pytest.raises(ScenarioError, match="unknown scenario .*not a path the file system can look up"):
        cnsim.load(LONG)
    with pytest.raises(ScenarioError, match=r"cannot be looked up \(File name too long\), not a run folder"):
        cnsim.Result.load(LONG)
    with pytest.raises(ScenarioError, match="cannot be looked up"):
        cnsim.catalog.runs(LONG)


# --- cnsim bench: a refused run ---------------------------------------------------------------


def test_bench_does_not_tell_to_pass_a_force_it_does_not_have() -> None:
    """`cnsim bench` ended its refusal with "pass --force to run it anyway", and has no --force."""
    err = refused(["bench", BASE, "--set", "metrics.bin=1ns"], "refused before it started", "give a shorter --duration")
    assert "pass --force" not in err, err
    err = refused(["bench", BASE, "--duration", "1000000s"], "refused before it started", "give a shorter --duration")
    assert "pass --force" not in err, err


# --- quantities: the value in the message ----------------------------------------------------


def test_an_integer_too_long_to_print_is_refused_in_cnsims_words() -> None:
    """cnsim.run(duration=10**5000) said "Exceeds the limit (4300 digits) for integer string
    conversion; use sys.set_int_max_str_digits() to increase the limit": Python's advice, not
    what the key allows."""
    from cnsim.units import UnitError, parse_size, parse_time

    with pytest.raises(ScenarioError, match=r"duration: an integer of 16,610 bits is out of range: the largest time allowed is 1000000s") as info:
        cnsim.load(BASE).set("duration", 10**5000).validate()
    assert "set_int_max_str_digits" not in str(info.value)
    with pytest.raises(UnitError, match=r"^an integer of 16,610 bits is "):
        parse_size(-(10**5000))
    with pytest.raises(UnitError, match=r"^cannot read '1\.51\.51[.0-9]*\.\.\. as a time"):
        parse_time("1.5" * 3000)  # a long string is cut, as in the other messages


def test_a_cm_number_past_a_floats_range_is_refused() -> None:
    """A number parameter of a scheme given as an int past a float's range (10**400 in the API,
    400 digits in --set) ended in Python's 'OverflowError: int too large to convert to float'
    traceback (78 cm keys: gd, w, pmax, fb_bits, ...), not in the key's range."""
    big = 10**400
    for key, scheme in (("cm.gd", "bcn"), ("cm.fb_bits", "bcn"), ("cm.pmax", "dcqcn")):
        with pytest.raises(ScenarioError, match=rf"{key}: out of range; allowed: "):
            cnsim.load(BASE).set_many({"cm.scheme": scheme, key: big}).validate()
    refused(["show", BASE, "--set", "cm.scheme=bcn", "--set", "cm.gd=1" + "0" * 400], "cm.gd: out of range; allowed: ")


# --- cnsim fluid on a large star ---------------------------------------------------------------


def test_the_fluid_model_reads_the_core_config_without_copying_it(monkeypatch: pytest.MonkeyPatch) -> None:
    """BCN's "W needed" search derives the fluid parameters at 150 values of W, and each took a
    deep copy of the core config: on a star of 16,384 nodes 77 of the command's 120 s went to
    copying (65,534 nodes ran for more than 10 minutes). The config is read, never changed."""
    import copy
    import json

    from cnsim.fluid.params import fluid_params
    from cnsim.scenario.document import Scenario

    def no_copy(self: Scenario) -> dict[str, object]:
        raise AssertionError("fluid_params copied the core config")

    scen = cnsim.load(BASE).set("cm.scheme", "bcn")
    before = copy.deepcopy(scen.core_config())
    monkeypatch.setattr(Scenario, "lower", no_copy)
    p = fluid_params(scen, engine_check=False)
    assert p.scheme == "bcn"
    assert json.dumps(scen.core_config(), sort_keys=True) == json.dumps(before, sort_keys=True)


def test_an_unknown_unit_is_quoted_as_written() -> None:
    """'1TB' was refused as "unknown unit 'tb'": lower-cased, it read as a unit nobody wrote."""
    from cnsim.units import UnitError, parse_size

    with pytest.raises(UnitError, match=r"^unknown unit 'TB' in '1TB'; expected a size"):
        parse_size("1TB")
    refused(["show", BASE, "--set", "switch.memory_per_port=1TB"], "unknown unit 'TB' in '1TB'")


# --- the Python API ---------------------------------------------------------------------------


def test_a_progress_that_is_not_a_function_is_refused_before_the_run() -> None:
    """cnsim.run(progress=5) ran a tenth of a second, then failed with "'int' object is not
    callable" (a run shorter than that never noticed)."""
    with pytest.raises(ScenarioError, match=r"^progress: must be a function progress\(sim_ps, total_ps\) \(given 5\)$"):
        cnsim.run(BASE, duration="1ms", progress=5)  # type: ignore[arg-type]
