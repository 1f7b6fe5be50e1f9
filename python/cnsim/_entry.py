"""The ``cnsim`` command's entry point. It takes charge of Ctrl-C and SIGTERM before the command
line's modules are imported (numpy, pydantic, the scenario schema and the engine: about 0.3 s),
so that a signal then ends the command as it does later — one line, exit 130 or 143 — rather
than with a traceback (contract: "Ctrl-C / SIGTERM end a run with exit 130 / 143 and a one-line
message")."""

from __future__ import annotations

import signal
import sys
from typing import Any


class _TerminatedEarly(KeyboardInterrupt):
    """SIGTERM while the command line is being imported."""


def _on_early_sigterm(_signum: int, _frame: Any) -> None:
    raise _TerminatedEarly()


def main() -> None:
    """Console-script entry point: import the command line, then run it."""
    signal.signal(signal.SIGTERM, _on_early_sigterm)
    try:
        from .cli import main as cli_main
    except KeyboardInterrupt as err:
        term = isinstance(err, _TerminatedEarly)
        sys.stderr.write(f"cnsim: {'terminated (SIGTERM)' if term else 'interrupted'} while starting; nothing was run.\n")
        raise SystemExit(143 if term else 130) from None
    cli_main()  # installs the command line's own SIGTERM handler first
