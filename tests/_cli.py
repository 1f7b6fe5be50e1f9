"""What the command-line tests of bad input share: the refusal of a command."""

from __future__ import annotations

from cnsim.cli import app
from typer.testing import CliRunner

runner = CliRunner()


def refused(args: list[str], *fragments: str) -> str:
    """Run the CLI: exit 2, no traceback, a short message holding ``fragments``; its stderr."""
    res = runner.invoke(app, args)
    assert res.exit_code == 2, (res.exit_code, res.exception, res.output[-500:])
    assert res.exception is None or isinstance(res.exception, SystemExit)
    assert "Traceback" not in res.output
    assert len(res.stderr) < 3000, res.stderr[:500]
    for fragment in fragments:
        assert fragment in res.stderr, res.stderr
    return res.stderr
