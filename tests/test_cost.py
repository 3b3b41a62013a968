"""Cost from recorded usage: each figure is genai-prices' own, named by model and tier."""

from __future__ import annotations

import json
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from genai_prices import Usage, calc_price
from hypothesis import given, settings
from hypothesis import strategies as st

from inspector import cli
from inspector.pricing.cost import CostSwitch, price_usage, prompt_saving, resolve_cost, session_cost
from tests.test_masking import write_session

GEMINI = ["gemini-2.5-pro", "gemini-2.5-flash", "gemini-3-pro-preview", "gemini-3-flash-preview",
          "gemini-2.5-flash-lite"]
counts = st.one_of(st.integers(0, 3_000), st.integers(0, 1_500_000))


def library_price(usage: dict[str, int], model: str) -> Decimal:
    """The price genai-prices computes for the same turn, asked directly."""
    prompt = usage.get("input", 0) + usage.get("tool", 0)
    asked = Usage(input_tokens=prompt, cache_read_tokens=usage.get("cached", 0),
                  output_tokens=usage.get("output", 0) + usage.get("thoughts", 0))
    return calc_price(asked, model, provider_id="google").total_price


@settings(max_examples=150, deadline=None)
@given(model=st.sampled_from(GEMINI), prompt=counts, cached_share=st.floats(0, 1), output=counts,
       thoughts=counts, tool=st.integers(0, 5_000))
def test_turn_price_is_the_librarys(model: str, prompt: int, cached_share: float, output: int, thoughts: int,
                                    tool: int) -> None:
    usage = {"input": prompt, "cached": int(prompt * cached_share), "output": output, "thoughts": thoughts,
             "tool": tool, "total": prompt + output + thoughts + tool}
    price = price_usage(usage, model)
    assert price is not None
    assert price.usd == library_price(usage, model)
    over = "over" in price.tier
    assert over == (prompt + tool > 200_000) or price.tier == "one price for every prompt size"


def test_unknown_models_and_odd_usage_get_no_figure() -> None:
    assert price_usage({"input": 10, "output": 1}, "some-local-model") is None
    for odd in ({"input": 10, "cached": 20}, {"input": "10"}, {"input": -1}, {"input": True}, {"input": 1e3}):
        assert price_usage(odd, "gemini-2.5-pro") is None, odd
    usages = [None, {"input": 100, "output": 5}, None, {"input": 100, "output": 5}, {"input": 100, "output": 5}]
    found = session_cost(usages, [None, "gemini-2.5-pro", None, None, "no-such-model"], CostSwitch(True, "test"))
    assert [t.turn for t in found.turns] == [1]
    assert found.unpriced == (3, 4)
    assert found.total == library_price({"input": 100, "output": 5}, "gemini-2.5-pro")
    off = session_cost(usages, [None] * 5, CostSwitch(False, "--no-cost"))
    assert off.to_json() == {"enabled": False, "reason": "--no-cost"}


def test_a_smaller_prompt_saves_across_the_tier() -> None:
    saving = prompt_saving("gemini-2.5-pro", 250_000, 150_000)
    assert saving is not None
    assert saving.usd == library_price({"input": 250_000}, "gemini-2.5-pro") - library_price(
        {"input": 150_000}, "gemini-2.5-pro")
    assert "over 200,000" in saving.before.tier and "up to 200,000" in saving.after.tier
    assert prompt_saving(None, 10, 5) is None
    assert prompt_saving("unknown-model", 10, 5) is None


def test_the_switch(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("GEMINI_CLI_HOME", str(tmp_path / "home"))
    monkeypatch.delenv("SESSION_INSPECTOR_COST", raising=False)
    assert resolve_cost() == CostSwitch(True, "default")
    settings_file = tmp_path / "home" / ".gemini" / "settings.json"
    settings_file.parent.mkdir(parents=True)
    settings_file.write_text(json.dumps({"security": {"auth": {"selectedType": "oauth-personal"}}}))
    assert not resolve_cost().enabled
    assert resolve_cost(True).enabled
    settings_file.write_text(json.dumps({"security": {"auth": {"selectedType": "gemini-api-key"}}}))
    assert resolve_cost().enabled
    monkeypatch.setenv("SESSION_INSPECTOR_COST", "off")
    assert resolve_cost() == CostSwitch(False, "SESSION_INSPECTOR_COST=off")


def test_analyze_json_cost(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                           capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("GEMINI_CLI_HOME", str(tmp_path / "home"))
    monkeypatch.delenv("SESSION_INSPECTOR_COST", raising=False)
    path = write_session(tmp_path / "proj", ["a small output"] * 3)
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    usages = [{"input": 1_000 * n, "output": 10, "cached": 0, "thoughts": 3, "tool": 0, "total": 0}
              for n in (1, 2, 300)]
    for record, usage in zip((r for r in lines if r.get("type") == "gemini"), usages, strict=True):
        record["tokens"] = usage
    lines[-1]["model"] = "a-model-nobody-prices"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))

    assert cli.main(["analyze", "--json", str(path)]) == 0
    cost: dict[str, Any] = json.loads(capsys.readouterr().out)["cost"]
    assert cost["enabled"] and cost["models"] == ["Gemini 2.5 Pro"]
    expected = [library_price(u, "gemini-2.5-pro") for u in usages[:2]]
    assert [t["usd"] for t in cost["turns"]] == [float(e) for e in expected]
    assert cost["session_usd"] == float(sum(expected))
    assert all(t["tier"] == "prompts up to 200,000 tokens" for t in cost["turns"])
    assert len(cost["unpriced_turns"]) == 1  # the turn whose model the table does not know

    assert cli.main(["analyze", "--json", "--no-cost", str(path)]) == 0
    assert json.loads(capsys.readouterr().out)["cost"] == {"enabled": False, "reason": "--no-cost"}
