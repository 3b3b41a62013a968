"""Install Gemini CLI itself (``@google/gemini-cli``) into ``<repo>/.cache/gemini-cli``.

    python -m tests.reference.gemini_cli      # prints the ``gemini`` script, or why not

``gemini_cli()`` returns the path of the installed ``gemini`` command,
installing the package once when node and npm are present; when they are
not, it returns a ``Missing`` carrying the reason a test should give for
skipping.  The end-to-end tests run it in its ``--fake-responses`` mode (no
network): ``fake_responses`` writes the file it reads, and
``wrapper_on_path`` puts a ``gemini`` on a PATH folder that adds the flag, so
the product runs the real Gemini CLI without any hook for tests.
"""

from __future__ import annotations

import json
import shlex
import shutil
import sys
from collections.abc import Sequence
from pathlib import Path

from tests.reference.install import Missing, node_path, npm_install

PACKAGE = "@google/gemini-cli"
VERSION = "0.61.0"
REPO = Path(__file__).resolve().parents[2]
CACHE = REPO / ".cache" / "gemini-cli"
PACKAGE_DIR = CACHE / "node_modules" / "@google" / "gemini-cli"
BIN = CACHE / "node_modules" / ".bin" / "gemini"


def installed_version() -> str | None:
    manifest = PACKAGE_DIR / "package.json"
    if not manifest.is_file():
        return None
    try:
        return str(json.loads(manifest.read_text(encoding="utf-8")).get("version"))
    except (OSError, ValueError):
        return None


def gemini_cli(install: bool = True) -> Path | Missing:
    """The installed ``gemini`` command (a node script), installing it if needed."""
    if node_path() is None:
        return Missing("node is not installed: the Gemini CLI tests need Node 20+ to run Gemini CLI")
    if installed_version() == VERSION and BIN.exists():
        return BIN
    if not install:
        return Missing(f"{PACKAGE}@{VERSION} is not installed in {CACHE}")
    if shutil.which("npm") is None:
        return Missing("npm is not installed: cannot install Gemini CLI")
    npm_install(PACKAGE, VERSION, CACHE, lambda: installed_version() == VERSION and BIN.exists())
    return BIN


def fake_responses(path: Path, answers: Sequence[str], prompt_tokens: int = 1000) -> Path:
    """Write the file ``--fake-responses`` reads: one JSON object per line, each a recorded call of
    Gemini CLI's content generator (``FakeContentGenerator``); here each call is a streamed
    ``generateContentStream`` answer whose one chunk holds the text and a usage record.  No answers:
    an empty file, on which Gemini CLI fails and says the whole request it got."""
    lines = []
    for text in answers:
        chunk = {
            "candidates": [{"content": {"role": "model", "parts": [{"text": text}]}, "finishReason": "STOP",
                            "index": 0}],
            "usageMetadata": {"promptTokenCount": prompt_tokens, "candidatesTokenCount": len(text),
                              "totalTokenCount": prompt_tokens + len(text)},
        }
        lines.append(json.dumps({"method": "generateContentStream", "response": [chunk]}))
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return path


def wrapper_on_path(folder: Path, gemini: Path, answers: Sequence[Sequence[str]],
                    env: dict[str, str] | None = None) -> Path:
    """A ``gemini`` script in ``folder`` (put ``folder`` on PATH) that runs the real ``gemini`` with
    ``--fake-responses``: its Nth run answers from ``answers[N-1]`` (each run is a new process that reads
    the file from its start), with ``env`` added.  Each run leaves ``folder/argv-N`` (its arguments, one a
    line), ``folder/stdin-N`` (what it was piped) and ``folder/stderr-N``; ``folder/calls`` counts them."""
    folder.mkdir(parents=True, exist_ok=True)
    for number, texts in enumerate(answers, 1):
        fake_responses(folder / f"answers-{number}.jsonl", texts, prompt_tokens=1000 * number)
    exports = "".join(f"export {name}={shlex.quote(value)}\n" for name, value in (env or {}).items())
    here = shlex.quote(str(folder))
    script = folder / "gemini"
    script.write_text(
        "#!/bin/bash\n"
        f"dir={here}\n"
        'n=$(( $(cat "$dir/calls" 2>/dev/null || echo 0) + 1 ))\n'
        'echo "$n" > "$dir/calls"\n'
        'printf \'%s\\n\' "$@" > "$dir/argv-$n"\n'
        'answers="$dir/answers-$n.jsonl"\n'
        '[ -f "$answers" ] || : > "$answers"\n'
        f"{exports}"
        f'tee "$dir/stdin-$n" | {shlex.quote(str(gemini))} --fake-responses "$answers" "$@" '
        '2> >(tee "$dir/stderr-$n" >&2)\n'
        'exit "${PIPESTATUS[1]}"\n',
        encoding="utf-8",
    )
    script.chmod(0o755)
    return script


def main() -> int:
    found = gemini_cli()
    if isinstance(found, Missing):
        print(f"not installed: {found.reason}", file=sys.stderr)
        return 1
    print(found)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())


__all__ = ["BIN", "CACHE", "VERSION", "fake_responses", "gemini_cli", "wrapper_on_path"]
