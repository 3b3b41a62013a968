"""The scripted conversations behind sample_sessions/ (see make_samples.py)."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

SHARED = Path(__file__).resolve().parent.parent.parent / "shared" / "gemini-cli-sessions"

CONSTRAINTS = (
    "Fix the discount bug in the order totals. Constraints: don't touch anything under migrations/, "
    "keep it compatible with Python 3.10, and never log card numbers."
)


def coding_task(Conversation: Any, Call: Any, h: dict[str, Callable[..., str]]) -> Any:
    c = Conversation("3fa2c1d0-7b1e-4c55-9a61-0d2f6e8b9c14", datetime(2026, 11, 20, 9, 14, tzinfo=UTC))
    c.user(CONSTRAINTS)
    c.model("I'll start by finding where order totals are computed.",
            thoughts=[("Locating the totals", "The bug is in order totals; search for where discounts apply.")],
            calls=[Call("search_file_content", {"pattern": "discount", "dir_path": "src"},
                        "Found 4 matches for pattern \"discount\" in src:\n---\nFile: src/shop/orders.py\n"
                        "L41: def apply_discount(total, discount):\nL58:     total = apply_discount(total, "
                        "order.discount)\n---\nFile: src/shop/cart.py\nL12: discount: Decimal | None = None\n"
                        "L30:     if self.discount:")])
    c.model("Let me read `src/shop/orders.py`.",
            calls=[Call("read_file", {"file_path": "src/shop/orders.py"}, h["python_module"]("orders", 14, 1))])
    c.model("Now the tests for orders, to see what is expected.",
            calls=[Call("read_file", {"file_path": "tests/test_orders.py"}, h["python_module"]("test_orders", 8, 2))])
    c.model("Running the order tests to reproduce the failure.",
            calls=[Call("run_shell_command", {"command": "pytest tests/test_orders.py -q",
                                              "description": "Run the order tests"},
                        h["test_output"](11, [("test_discount_applied_once",
                                               "AssertionError: assert Decimal('81.00') == Decimal('90.00')")]))])
    c.model("The discount is applied twice: once in `Cart.total()` and again in `apply_discount`. "
            "I'll remove the second application.",
            thoughts=[("Diagnosing", "81 = 100 * 0.9 * 0.9, so the 10% discount is applied twice.")],
            calls=[Call("replace", {"file_path": "src/shop/orders.py", "old_string": "total = apply_discount(total, order.discount)",
                                    "new_string": "total = order.cart.total()"},
                        "Failed to edit, 0 occurrences found for old_string in src/shop/orders.py. "
                        "No edits made. The exact text in old_string was not found.", status="error")])
    c.model("The edit failed because of different whitespace; I'll re-read the exact lines.",
            calls=[Call("read_file", {"file_path": "src/shop/orders.py", "offset": 50, "limit": 20},
                        "    # apply the order-level discount\n        total  = apply_discount(total, order.discount)\n")])
    c.model("Applying the edit with the exact text.",
            calls=[Call("replace", {"file_path": "src/shop/orders.py",
                                    "old_string": "        total  = apply_discount(total, order.discount)",
                                    "new_string": "        total = order.cart.total()"},
                        "Successfully modified file: /home/dev/shop-api/src/shop/orders.py (1 replacements).")])
    c.model("Re-running the tests.",
            calls=[Call("run_shell_command", {"command": "pytest tests/test_orders.py -q",
                                              "description": "Run the order tests again"},
                        h["test_output"](12, []))])
    c.model("All 12 order tests pass now ✅. The discount was applied twice; `orders.py` now takes the cart "
            "total, which already includes it.")
    asked = c.user("Also, can you drop the old `legacy_total` helper?")
    c.model("Sure, removing it now.",
            calls=[Call("read_file", {"file_path": "src/shop/cart.py"}, h["python_module"]("cart", 9, 3))])
    c.rewind(asked)  # the user changed their mind (Esc Esc)
    c.info("Rewound to before: Also, can you drop the old `legacy_total` helper?")
    c.user("Check the server log for payment errors since this morning. ログにカード番号が出ていないか確認して。")
    c.model("Reading the payment service log.",
            calls=[Call("run_shell_command", {"command": "tail -n 900 /var/log/shop/payments.log",
                                              "description": "Read the recent payment log"},
                        h["big_log"](900, 4))])
    c.model("There are 5 `ERROR` lines, all `gateway timeout` retries; no card numbers appear in the log "
            "(カード番号は記録されていません 🔒). The retries succeed on the second attempt.",
            thoughts=[("Scanning for PANs", "Looked for 13-19 digit sequences; none found.")])
    c.user("Great. Write a short CHANGELOG entry for the fix.")
    c.model("Adding the entry.",
            calls=[Call("write_file", {"file_path": "CHANGELOG.md",
                                       "content": "## 1.4.2\n\n- Fix: order discounts were applied twice (#212).\n"},
                        "Successfully created and wrote to new file: /home/dev/shop-api/CHANGELOG.md.")])
    c.model("Done: `CHANGELOG.md` now has a 1.4.2 entry describing the double-discount fix.")
    return c


def big_refactor(Conversation: Any, Call: Any, h: dict[str, Callable[..., str]]) -> Any:
    """A long session past Gemini CLI's threshold, with an output the budget truncates."""
    c = Conversation("9d41b7e2-55c0-4f0e-8b0f-6a3e91d27c55", datetime(2026, 11, 18, 13, 2, tzinfo=UTC))
    c.user("We're migrating the payments module from the old gateway client to `gatewaykit`. "
           "Never change the public function names in src/shop/payments.py; always run the full test suite "
           "after each step.")
    modules = ["payments", "orders", "cart", "auth", "refunds", "ledger", "invoices", "shipping"]
    for step in range(29):
        name = modules[step % len(modules)]
        c.model(f"Step {step + 1}: reading `src/shop/{name}.py` to find gateway calls.",
                calls=[Call("read_file", {"file_path": f"src/shop/{name}.py"},
                            h["python_module"](name, 190, 100 + step))])
        c.model("Running the whole suite after the change.",
                calls=[Call("run_shell_command", {"command": "pytest -q", "description": "Full test suite"},
                            h["test_output"](240 + step, [] if step % 5 else
                                             [(f"test_{name}_gateway", "TimeoutError: gateway did not answer in 30s")]))])
        if step == 12:
            c.user("The staging log has the integration run; check it for gateway errors.")
            c.model("Reading the full staging log.",
                    calls=[Call("run_shell_command", {"command": "cat /var/log/shop/staging-integration.log",
                                                      "description": "Read the staging integration log"},
                                h["big_log"](2600, 77))])
            c.model("The staging log shows 41 gateway timeouts, all before the retry policy change.")
        c.user(f"Good. Continue with the next module after {name}.")
    c.model("All modules now use `gatewaykit`; the full suite passes (265 tests).")
    return c


def after_compression(Conversation: Any, Call: Any, h: dict[str, Callable[..., str]]) -> Any:
    """A session Gemini CLI already compressed once: its history holds a <state_snapshot>."""
    c = Conversation("5be07c3a-1f8d-4e42-b1e3-2c9a7d0f4e18", datetime(2026, 11, 19, 16, 40, tzinfo=UTC))
    c.user("Add rate limiting to the login endpoint: 5 attempts per minute per IP. Must not use Redis.")
    c.model("Reading the auth module.", calls=[Call("read_file", {"file_path": "src/shop/auth.py"},
                                                     h["python_module"]("auth", 30, 9))])
    c.model("I'll add an in-memory sliding window limiter in `src/shop/ratelimit.py`.",
            calls=[Call("write_file", {"file_path": "src/shop/ratelimit.py", "content": "class SlidingWindow: ..."},
                        "Successfully created and wrote to new file: /home/dev/shop-api/src/shop/ratelimit.py.")])
    env = c.records[0]
    snapshot = (
        "<state_snapshot>\n    <overall_goal>\n        Add rate limiting to the login endpoint (5 attempts/min/IP).\n"
        "    </overall_goal>\n\n    <active_constraints>\n        - Must not use Redis.\n    </active_constraints>\n\n"
        "    <key_knowledge>\n        - Login is handled by `login()` in `src/shop/auth.py`.\n    </key_knowledge>\n\n"
        "    <artifact_trail>\n        - CREATED `src/shop/ratelimit.py` with `SlidingWindow`.\n    </artifact_trail>\n\n"
        "    <file_system_state>\n        - READ: `src/shop/auth.py`\n        - CREATED: `src/shop/ratelimit.py`\n"
        "    </file_system_state>\n\n    <recent_actions>\n        - Wrote the limiter class.\n    </recent_actions>\n\n"
        "    <task_state>\n        1. [DONE] Limiter class.\n        2. [TODO] Wire it into `login()`.\n"
        "        3. [TODO] Tests.\n    </task_state>\n</state_snapshot>"
    )
    c.checkpoint([
        env,
        {"id": c._id(), "timestamp": c._tick(1), "type": "user", "content": [{"text": snapshot}]},
        {"id": c._id(), "timestamp": c._tick(1), "type": "gemini",
         "content": [{"text": "Got it. Thanks for the additional context!"}]},
    ])
    c.info("Chat history compressed from 61234 to 1880 tokens.")
    c.user("Now wire the limiter into login and add tests. Don't change the login() signature.")
    c.model("Editing `login()`.",
            calls=[Call("replace", {"file_path": "src/shop/auth.py", "old_string": "def login(user, password):\n",
                                    "new_string": "def login(user, password):\n    LIMITER.check(request_ip())\n"},
                        "Successfully modified file: /home/dev/shop-api/src/shop/auth.py (1 replacements).")])
    c.model("Adding tests.",
            calls=[Call("write_file", {"file_path": "tests/test_ratelimit.py", "content": "def test_sixth_attempt_blocked(): ..."},
                        "Successfully created and wrote to new file: /home/dev/shop-api/tests/test_ratelimit.py.")])
    c.model("Running them.",
            calls=[Call("run_shell_command", {"command": "pytest tests/test_ratelimit.py -q"},
                        h["test_output"](4, []))])
    c.model("The limiter is wired into `login()` and the 4 new tests pass.")
    c.user("Thanks! One more: make the window configurable via `SHOP_LOGIN_WINDOW`.")
    c.model("Done - `SHOP_LOGIN_WINDOW` (seconds, default 60) now sets the window.",
            calls=[Call("replace", {"file_path": "src/shop/ratelimit.py", "old_string": "WINDOW = 60",
                                    "new_string": "WINDOW = int(os.environ.get('SHOP_LOGIN_WINDOW', 60))"},
                        "Successfully modified file: /home/dev/shop-api/src/shop/ratelimit.py (1 replacements).")])
    c.model("The window is configurable now.")
    return c


def legacy_session(Conversation: Any, Call: Any, h: dict[str, Callable[..., str]]) -> Any:
    """A pre-0.39 session: one JSON object, tool results as plain strings."""
    c = Conversation("0b23371a-ce2e-4b1c-81a0-44af5d94d9ce", datetime(2025, 10, 21, 20, 4, tzinfo=UTC),
                     model_name="gemini-2.5-flash")
    c.user("Build a small Pomodoro timer page: 25-minute work, 5-minute break, a counter of sessions. "
           "No external frameworks — plain HTML, CSS and JS. Café-style colours, s'il vous plaît ☕.")
    c.model("I'll create `index.html`, `style.css` and `script.js`.",
            thoughts=[("Planning", "Three files; the timer logic lives in script.js with setInterval.")],
            calls=[Call("write_file", {"file_path": "index.html", "content": "<!doctype html><title>Pomodoro</title>"},
                        "Successfully created and wrote to new file: /home/dev/pomodoro/index.html.")])
    c.model("Now the script.",
            calls=[Call("write_file", {"file_path": "script.js", "content": "let remaining = 25 * 60;"},
                        "Successfully created and wrote to new file: /home/dev/pomodoro/script.js.")])
    c.user("The timer doesn't switch to the break. Fix it, and keep the counter in localStorage.")
    c.model("Reading the script to find the switch.",
            calls=[Call("read_file", {"file_path": "script.js"}, "let remaining = 25 * 60;\nfunction tick() {\n"
                        "  remaining -= 1;\n  if (remaining < 0) { /* TODO switch */ }\n}\n")])
    c.model("Fixed: when the work timer reaches zero it switches to a 5-minute break, and the completed "
            "count is saved in `localStorage` under `pomodoro.count`.")
    # legacy records carry toolCalls results as plain strings
    for record in c.records:
        for call in record.get("toolCalls", []):
            call["result"] = call["result"][0]["functionResponse"]["response"].get("output", "")
    c.records = [r for r in c.records if not (r["type"] == "user" and isinstance(r["content"], list)
                                              and "functionResponse" in r["content"][0])]
    return c


def build_all(Conversation: Any, Call: Any, helpers: dict[str, Callable[..., str]]) -> dict[str, Callable[[Path], None]]:
    coding = coding_task(Conversation, Call, helpers)
    big = big_refactor(Conversation, Call, helpers)
    compressed = after_compression(Conversation, Call, helpers)
    legacy = legacy_session(Conversation, Call, helpers)

    def checkpoint(path: Path) -> None:
        body = {"history": compressed.history(), "authType": "gemini-api-key"}
        path.write_text(json.dumps(body, ensure_ascii=False, indent=2), encoding="utf-8")

    def bare_checkpoint(path: Path) -> None:
        path.write_text(json.dumps(coding.history(), ensure_ascii=False, indent=2), encoding="utf-8")

    writers: dict[str, Callable[[Path], None]] = {
        "coding-task.jsonl": coding.write_jsonl,
        "long-migration.jsonl": big.write_jsonl,
        "after-compression.jsonl": compressed.write_jsonl,
        "legacy-pomodoro.json": lambda p: legacy.write_legacy(p, summary="Pomodoro timer page"),
        "checkpoint-rate-limit.json": checkpoint,
        "checkpoint-bare-array.json": bare_checkpoint,
    }
    copies = {
        "gemini-cli-0.61-three-prompts.jsonl": "a_interactive_3prompts.jsonl",
        "gemini-cli-0.61-tool-calls.jsonl": "b_headless_toolcalls.after_title_summary.jsonl",
        "gemini-cli-0.61-compress.jsonl": "c_interactive_manual_compress.jsonl",
        "gemini-cli-0.61-chat-save.json": "c_interactive_manual_compress.checkpoint-after-compress.json",
    }
    for name, source in copies.items():
        if (SHARED / source).exists():
            writers[name] = lambda p, s=source: shutil.copyfile(SHARED / s, p)
    return writers
