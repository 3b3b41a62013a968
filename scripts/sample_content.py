"""Deterministic text for the sample sessions: source files, logs, test runs."""

from __future__ import annotations

import random

ENV_CONTEXT = """<session_context>
This is the Gemini CLI. We are setting up the context for our chat.
Today's date is Friday, November 20, 2026 (formatted according to the user's locale).
My operating system is: linux
The project's temporary directory is: /home/dev/.gemini/tmp/shop-api
- **Workspace Directories:**
  - {project}
- **Directory Structure:**

Showing up to 200 items (files + folders).

{project}/
├───pyproject.toml
├───README.md
├───migrations/
│   ├───0001_initial.sql
│   └───0002_orders.sql
├───src/
│   └───shop/
│       ├───__init__.py
│       ├───auth.py
│       ├───cart.py
│       ├───orders.py
│       └───payments.py
└───tests/
    ├───test_auth.py
    ├───test_cart.py
    └───test_orders.py


</session_context>"""

_WORDS = (
    "order cart item price total discount customer session token refund invoice tax currency "
    "quantity stock warehouse shipment address payment gateway retry timeout ledger balance"
).split()


def python_module(name: str, functions: int, seed: int) -> str:
    """A plausible Python module with ``functions`` functions."""
    rng = random.Random(seed)
    lines = [f'"""{name}: part of the shop API."""', "", "from __future__ import annotations", "",
             "import logging", "from decimal import Decimal", "", "log = logging.getLogger(__name__)", ""]
    for n in range(functions):
        a, b = rng.sample(_WORDS, 2)
        lines += [
            "",
            f"def {a}_{b}_{n}({a}: dict, {b}: Decimal | None = None) -> Decimal:",
            f'    """Compute the {b} of a {a}."""',
            f"    if {b} is None:",
            f'        log.debug("no {b} for %s", {a}.get("id"))',
            "        return Decimal(0)",
            f'    value = Decimal({a}.get("{b}", 0)) * {b}',
            "    return value.quantize(Decimal(\"0.01\"))",
        ]
    return "\n".join(lines) + "\n"


def big_log(lines: int, seed: int) -> str:
    """A long server log, the kind of tool output that fills a context window."""
    rng = random.Random(seed)
    out = []
    for n in range(lines):
        level = rng.choice(["INFO", "INFO", "INFO", "DEBUG", "WARNING", "ERROR"])
        word = rng.choice(_WORDS)
        out.append(
            f"2026-11-20T09:{(n // 60) % 60:02d}:{n % 60:02d}.{rng.randrange(1000):03d}Z {level:<7} "
            f"shop.{word} request_id={rng.getrandbits(48):012x} {word} handled in {rng.randrange(2, 900)}ms"
        )
    return "\n".join(out)


def test_output(passed: int, failures: list[tuple[str, str]]) -> str:
    """pytest's output for a run with the given failures."""
    out = ["============================= test session starts ==============================",
           "platform linux -- Python 3.12.7, pytest-8.3.3, pluggy-1.5.0",
           "rootdir: /home/dev/shop-api", "configfile: pyproject.toml",
           f"collected {passed + len(failures)} items", ""]
    for test, error in failures:
        out += ["=================================== FAILURES ===================================",
                f"____________________________ {test} ____________________________", "", f"E   {error}", ""]
    summary = f"{len(failures)} failed, {passed} passed" if failures else f"{passed} passed"
    out.append(f"========================= {summary} in 2.31s =========================")
    return "\n".join(out)
