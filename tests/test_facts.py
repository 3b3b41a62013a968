"""Fact extraction and the documented matching rule."""

from __future__ import annotations

from inspector.compaction import facts as fx

HISTORY = [
    {"role": "user", "parts": [{"text": "<session_context>\n/home/me/ignored.py\n</session_context>"}]},
    {"role": "user", "parts": [{"text": "Fix the login bug in `auth.login()`. You must not touch vendor/lib.py. "
                                        "Ne modifie jamais les migrations. What now?"}]},
    {"role": "model", "parts": [
        {"text": "secret plan /tmp/thought.py", "thought": True},
        {"text": "Reading it."},
        {"functionCall": {"id": "1", "name": "read_file", "args": {"file_path": "/home/me/proj/src/auth.py"}}},
        {"functionCall": {"id": "2", "name": "run_shell_command", "args": {"command": "pytest -q tests/test_auth.py"}}},
    ]},
    {"role": "user", "parts": [
        {"functionResponse": {"id": "1", "name": "read_file", "response": {"output": "raise ValueError('x')"}}},
        {"functionResponse": {"id": "2", "name": "run_shell_command",
                              "response": {"output": "collected 3\nE   KeyError: 'session_token'\n1 failed"}}},
    ]},
]


def test_extracts_each_kind_from_the_right_places() -> None:
    found = {(f.kind, f.value) for f in fx.extract(HISTORY)}
    assert ("path", "/home/me/proj/src/auth.py") in found
    assert ("path", "vendor/lib.py") in found
    assert ("command", "pytest -q tests/test_auth.py") in found
    assert ("error", "E   KeyError: 'session_token'") in found
    assert ("code", "auth.login()") in found
    assert ("constraint", "You must not touch vendor/lib.py.") in found
    assert ("constraint", "Ne modifie jamais les migrations.") in found
    values = {v for _, v in found}
    assert "/home/me/ignored.py" not in values  # environment context is not conversation
    assert "/tmp/thought.py" not in values  # thoughts are not scanned
    assert not any("ValueError" in v for v in values)  # a read file's content is data, not an error
    assert not any(v.startswith("What now") for v in values)  # a question is not a rule


def test_matching_rule() -> None:
    facts = fx.extract(HISTORY)
    snapshot = (
        "- READ `src/auth.py`\n- Ran pytest on tests/test_auth.py -q\n- KeyError session_token in login\n"
        "- Do not touch vendor/lib.py\n"
    )
    report = fx.check(facts, snapshot)
    kept = {c.fact.value for c in report.checks if c.kept}
    assert "/home/me/proj/src/auth.py" in kept  # a two-component tail is enough
    assert "pytest -q tests/test_auth.py" in kept  # key tokens on one line
    assert "E   KeyError: 'session_token'" in kept
    assert "You must not touch vendor/lib.py." in kept
    assert "auth.login()" not in kept and "Ne modifie jamais les migrations." not in kept
    assert 0 < report.recall < 1
    assert report.recall == report.kept / report.total
    assert {f.value for f in report.lost} == {"auth.login()", "Ne modifie jamais les migrations."}
    assert fx.check([], "anything").recall == 1.0


def test_command_needs_all_key_tokens_on_one_line() -> None:
    fact = fx.Fact("command", "npm run build --prod", 0)
    assert fx.check([fact], "ran npm run build").kept == 1
    assert fx.check([fact], "ran npm\nthen build").kept == 0


def test_basename_only_matches_when_unique() -> None:
    a, b = fx.Fact("path", "/x/one/app.py", 0), fx.Fact("path", "/x/two/app.py", 0)
    assert fx.check([a], "edited app.py").kept == 1
    assert fx.check([a, b], "edited app.py").kept == 0
    assert fx.check([a, b], "edited one/app.py").kept == 1
