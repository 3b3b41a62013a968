"""The token estimate: exact quarter tokens, the same figure as Node's estimateTokenCountSync."""

from __future__ import annotations

import pytest

from inspector.tokens import (
    DEFAULT_TOKEN_LIMIT,
    GEMMA_4_TOKEN_LIMIT,
    estimate_contents,
    estimate_tokens,
    parts_quarters,
    text_quarters,
    token_limit,
)
from tests.reference.client import RefServer

NESTED = {"functionResponse": {"name": "t", "response": {"a": 1.0},
                               "parts": [{"functionResponse": {"name": "u", "response": "x" * 9,
                                                               "parts": [{"text": "deep"}]}}]}}
PART_LISTS = [
    [{"text": "hello"}],
    [{"text": "é" * 3}, {"text": "😀"}],
    [{"text": "中" * 100_001}],  # over 100,000 units: length / 4, not 1.5 each
    [{"text": "a" * 7}, {"text": "b"}],  # 2 quarters short of a token: floored once, at the end
    [{"inlineData": {"mimeType": "image/png", "data": "AAAA"}}, {"fileData": {"mimeType": "application/pdf"}}],
    [{"inlineData": {"mimeType": "audio/wav", "data": "AAAA"}}],
    [{"functionCall": {"name": "read_file", "args": {"path": "a.py", "limit": 1e21}}}],
    [NESTED],
    [{"functionResponse": {"name": "t", "response": "text response"}}],
    [{"functionResponse": {"name": "t"}}],
    [{"thought": True}],
    [{"functionResponse": {"name": "d", "parts": [
        {"functionResponse": {"name": "e", "parts": [
            {"functionResponse": {"name": "f", "parts": [
                {"functionResponse": {"name": "g", "parts": [{"text": "too deep to count"}]}}]}}]}}]}}],
]


@pytest.mark.differential
@pytest.mark.parametrize("parts", PART_LISTS, ids=range(len(PART_LISTS)))
def test_estimate_matches_node(reference: RefServer, parts: list[dict]) -> None:
    assert estimate_tokens(parts) == reference.call("estimate", parts=parts)["tokens"]


def test_quarters_are_exact_integers() -> None:
    assert text_quarters("abcd") == 4  # 4 x 0.25 = 1 token
    assert text_quarters("é") == 6  # 1.5 tokens
    assert text_quarters("😀") == 12  # two UTF-16 units, 1.5 each
    assert parts_quarters([{"text": "abc"}, {"text": "d"}]) == 4


def test_contents_are_floored_once_over_all_parts() -> None:
    contents = [{"role": "user", "parts": [{"text": "abc"}]}, {"role": "model", "parts": [{"text": "d"}]}]
    assert estimate_contents(contents) == 1
    assert sum(estimate_tokens(c["parts"]) for c in contents) == 0


def test_token_limits() -> None:
    assert token_limit("gemma-4-31b-it") == GEMMA_4_TOKEN_LIMIT
    assert token_limit("gemini-2.5-pro") == token_limit(None) == DEFAULT_TOKEN_LIMIT
