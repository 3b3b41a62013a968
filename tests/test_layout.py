"""The layout shows the design: every module is core or a face, the import-linter contract covers the whole
core, and no file is over 500 lines."""

from __future__ import annotations

import tomllib
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
PACKAGE = REPO / "inspector"
FACES = ("inspector.cli", "inspector.commands", "inspector.tui", "inspector.serve", "inspector.__main__",
         "inspector.__init__")
LONGEST = 500


def _modules() -> list[str]:
    return sorted(".".join(path.relative_to(REPO).with_suffix("").parts) for path in PACKAGE.rglob("*.py"))


def _within(module: str, roots: tuple[str, ...] | list[str]) -> bool:
    return any(module == root or module.startswith(root + ".") for root in roots)


def test_every_core_module_is_held_to_the_contract_that_it_never_imports_the_app() -> None:
    config = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
    contract = next(c for c in config["tool"]["importlinter"]["contracts"] if c["type"] == "forbidden")
    core = contract["source_modules"]
    missing = [m for m in _modules() if not _within(m, FACES) and not _within(m, core)]
    assert not missing, f"core modules the import-linter contract does not name: {missing}"
    assert not [m for m in core if _within(m, FACES)]


def test_no_file_is_over_500_lines() -> None:
    long = {str(path.relative_to(REPO)): n for path in PACKAGE.rglob("*.py")
            if (n := len(path.read_text(encoding="utf-8").splitlines())) > LONGEST}
    assert not long, f"files over {LONGEST} lines: {long}"
