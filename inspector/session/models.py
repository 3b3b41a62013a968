"""Typed views of Gemini CLI's on-disk records.

Every model keeps fields it does not know (``extra="allow"``), so a record read,
changed and written back loses nothing.  The hot loading path works on the
parsed JSON directly (validated by ``session.validate``); these models are the
typed face used where records are shown or built.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field


class _Open(BaseModel):
    model_config = ConfigDict(extra="allow", populate_by_name=True)

    def to_json(self) -> dict[str, Any]:
        return self.model_dump(mode="json", exclude_none=True, by_alias=True)


class FunctionCall(_Open):
    id: str | None = None
    name: str | None = None
    args: dict[str, Any] | None = None


class FunctionResponse(_Open):
    id: str | None = None
    name: str | None = None
    response: Any = None


class Part(_Open):
    text: str | None = None
    thought: bool | None = None
    functionCall: FunctionCall | None = None
    functionResponse: FunctionResponse | None = None
    inlineData: dict[str, Any] | None = None
    fileData: dict[str, Any] | None = None


class Content(_Open):
    role: Literal["user", "model"]
    parts: list[Part] = Field(default_factory=list)


class TokenUsage(_Open):
    """The usage the API reported for one model turn."""

    input: float = 0
    output: float = 0
    cached: float = 0
    thoughts: float | None = None
    tool: float | None = None
    total: float = 0


class Thought(_Open):
    subject: str | None = None
    description: str | None = None
    timestamp: str | None = None


class ToolCallRecord(_Open):
    id: str | None = None
    name: str | None = None
    args: dict[str, Any] | None = None
    result: Any = None
    status: str | None = None
    timestamp: str | None = None
    displayName: str | None = None
    description: str | None = None
    resultDisplay: Any = None


class MessageRecord(_Open):
    id: str
    timestamp: str | None = None
    type: str | None = None
    content: Any = None
    displayContent: Any = None
    toolCalls: list[ToolCallRecord] | None = None
    thoughts: list[Thought] | None = None
    tokens: TokenUsage | None = None
    model: str | None = None


class SessionMetadata(_Open):
    sessionId: str | None = None
    projectHash: str | None = None
    startTime: str | None = None
    lastUpdated: str | None = None
    summary: str | None = None
    kind: str | None = None
    directories: list[str] | None = None
