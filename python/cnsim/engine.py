"""The compiled engine (``cnsim._core``, crates/cnsim-py), imported on first use and only here:
``cnsim --help`` and the scenario checks never load it, and a missing build is one clear error
(:class:`~cnsim.errors.EngineMissing`) wherever it is first needed."""

from __future__ import annotations

from types import ModuleType

from .errors import EngineMissing

__all__ = ["engine"]


def engine() -> ModuleType:
    """Import the compiled engine, or raise :class:`EngineMissing` with what to do."""
    try:
        from . import _core
    except ImportError as err:
        raise EngineMissing(
            f"the cnsim engine (cnsim._core) is not built or not importable ({err}); "
            "install the package with `pip install .` (needs a Rust toolchain)"
        ) from None
    return _core
