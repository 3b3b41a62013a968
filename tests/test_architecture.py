"""The core never loads the app: parsing, counting and compaction import without Textual."""

from __future__ import annotations

import subprocess
import sys

import pytest

CORE = [
    "inspector.session",
    "inspector.tokens",
    "inspector.analysis",
    "inspector.compaction",
    "inspector.compaction.compress",
    "inspector.compaction.staged",
    "inspector.settings",
]


@pytest.mark.parametrize("module", CORE)
def test_core_module_does_not_import_textual(module: str) -> None:
    code = f"import sys, importlib; importlib.import_module({module!r}); print('textual' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_analyze_json_path_stays_light() -> None:
    """``analyze --json`` must start fast: no app, no SDK, no rich, no pydantic."""
    code = (
        "import sys; from inspector.commands import analyze; import inspector.analysis, inspector.session;"
        "print(sorted(m for m in ('textual', 'google.genai', 'rich', 'pydantic') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
