"""Print the verdict tables of docs/fidelity.md from a `cnsim check` folder's checks.json.

    python scripts/fidelity_table.py results/check-all-quick > /tmp/tables.md
"""

from __future__ import annotations

import json
import sys
from pathlib import Path


def main(folder: str) -> None:
    checks = json.loads((Path(folder) / "checks.json").read_text(encoding="utf-8"))["checks"]
    decks: dict[str, list[dict]] = {}
    for c in checks:
        decks.setdefault(c["deck"], []).append(c)
    for deck, rows in decks.items():
        passed = sum(c["verdict"] == "pass" for c in rows)
        print(f"### {deck}: {passed} of {len(rows)} pass\n")
        print("| id | class | verdict | claim | measured (quick run) |")
        print("|---|---|---|---|---|")
        for c in rows:
            measured = str(c["measured"]).replace("|", "/")
            if len(measured) > 160:
                measured = measured[:157] + "..."
            print(f"| {c['id']} | {c['class']} | {c['verdict']} | {c['claim']} | {measured} |")
        print()


if __name__ == "__main__":
    main(sys.argv[1])
