"""What a user asks of a compaction, and what the session tells it: two typed values.

``CompactionRequest`` checks itself as it is made (the one place a request is checked).  The CLI
builds one from its flags and the app from its dialog; a combination that
cannot work is refused with a one-line ``RequestError`` and every accepted
field is honoured by ``strategies.run_request``.  ``compaction_context``
reads what the loaded session says (model, environment turn, recorded
prompt, where tool outputs go and the first number free there, the file's
hash) from the same ``Analysis``
that ``analyze`` and the app's header show, so every face decides from the
same figures; it carries the figures that analysis measured
(``reading.Planned``) so a compaction does not measure them again, and a
``reading.HistoryReader`` that reads the turns' contents and the recorded
tool statuses once, when the compaction starts.
"""

from __future__ import annotations

import math
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from inspector.analysis import Analysis, project_temp_dir
from inspector.compaction.budget import TOOL_OUTPUTS_DIR
from inspector.compaction.compress import CompressOptions
from inspector.compaction.reading import HistoryReader, Planned, planned
from inspector.compaction.statuses import ToolStatuses
from inspector.compaction.view import HistoryView
from inspector.context import environment_turn
from inspector.session.loader import Session

Strategy = Literal["reference", "staged"]
Provider = Literal["auto", "gemini", "gemini-cli", "offline"]
STRATEGIES: tuple[Strategy, ...] = ("reference", "staged")
PROVIDERS: tuple[Provider, ...] = ("auto", "gemini", "gemini-cli", "offline")
DEFAULT_TIMEOUT = 120.0


class RequestError(ValueError):
    """A request that cannot be honoured; the message is one line naming the conflict."""


@dataclass(frozen=True)
class CompactionRequest:
    """What a user asks of a compaction: the CLI builds one from its flags, the app from its dialog
    (``dataclasses.replace`` on a default request), each checked as it is made."""

    strategy: Strategy = "reference"
    split: int | None = None  # start the kept part here (a valid split point); None: the strategy decides
    agentic: bool = False  # split among model turns (the 70% rule over those)
    target: float | None = None  # staged: <= 1 a share of the window, above 1 tokens
    provider: Provider = "auto"
    model: str | None = None  # overrides the session's model (token limit, summariser)
    base_url: str | None = None
    timeout: float = DEFAULT_TIMEOUT
    instruction: str | None = None  # the user's focus for the summary
    system_prompt: str | None = None  # replaces the built-in compression prompt
    force: bool = False  # compress below the threshold (like /compress)
    compare: bool = False  # run both strategies side by side (``strategies.compare``)
    gemini_cli: str | None = None  # the ``gemini`` to run (gemini-cli, auto), instead of the one on PATH

    def __post_init__(self) -> None:
        """Checked as it is made (``RequestError`` for a value or a combination that cannot work), and
        its text fields made plain (an empty model, URL, program or focus is none)."""
        named_strategy(self.strategy)
        named_provider(self.provider)
        if self.gemini_cli and self.provider not in ("gemini-cli", "auto"):
            raise RequestError(f"--gemini-cli names the Gemini CLI to run, but the {self.provider} provider does "
                               "not run it")
        if self.split is not None and self.agentic:
            raise RequestError("a split was given and the agentic split was asked for; choose one")
        if self.split is not None and self.split < 0:
            raise RequestError(f"split {self.split} is below 0")
        if self.target is not None and self.strategy != "staged" and not self.compare:
            raise RequestError("a target is the staged strategy's goal; the reference strategy has none")
        if self.target is not None and (problem := target_problem(self.target)):
            raise RequestError(f"the target {problem} (got {self.target:g})")
        if not (math.isfinite(self.timeout) and self.timeout > 0):
            raise RequestError(f"the timeout must be above 0 seconds, and finite (got {self.timeout:g})")
        for name, value in (("model", self.model), ("base_url", self.base_url), ("gemini_cli", self.gemini_cli),
                            ("instruction", (self.instruction or "").strip())):
            object.__setattr__(self, name, value or None)  # frozen: set once, here

    def shaping(self) -> list[str]:
        """What this request chose about the summary itself, in words ("split 26", "a focus
        instruction", ...): choices that act only when a compaction runs."""
        chosen = [f"split {self.split}"] if self.split is not None else []
        chosen += ["the agentic split"] if self.agentic else []
        chosen += [f"target {self.target:g}"] if self.target is not None else []
        chosen += ["a focus instruction"] if self.instruction else []
        chosen += ["a prompt file"] if self.system_prompt is not None else []
        return chosen

    def unused_below_threshold(self, below: str | None) -> str | None:
        """Why this request cannot be honoured as asked when Gemini CLI would not compress now
        (``below``: ``ContextFigures.below_threshold``), or None: an unforced run below the threshold
        does nothing, so a split, target or focus it names would be silently dropped."""
        chosen = self.shaping()
        if self.force or below is None or not chosen:
            return None
        return f"{' and '.join(chosen)} given, but Gemini CLI would not compress now: {below}"


def named_strategy(name: str) -> Strategy:
    """The strategy a name (a flag's or a dialog's text) names; ``RequestError`` for an unknown one."""
    found = next((s for s in STRATEGIES if s == name), None)
    if found is None:
        raise RequestError(f"unknown strategy {name!r} (choose from {', '.join(STRATEGIES)})")
    return found


def named_provider(name: str) -> Provider:
    """The provider a name names; ``RequestError`` for an unknown one."""
    found = next((p for p in PROVIDERS if p == name), None)
    if found is None:
        raise RequestError(f"unknown provider {name!r} (choose from {', '.join(PROVIDERS)})")
    return found


def target_problem(target: float) -> str | None:
    """What is wrong with a staged target (None: nothing): a share of the window up to 1, or a
    number of tokens above it; never 0, negative, infinite or not a number."""
    if not math.isfinite(target):
        return "must be a finite number"
    if not target > 0:
        return "must be above 0"
    return None


@dataclass(frozen=True)
class CompactionContext:
    """What a loaded session tells a compaction (the threshold: the session's settings, or the user's)."""

    model: str | None
    threshold: float
    recorded_prompt_tokens: int | None  # the one rule: ``Analysis.recorded_prompt_tokens``
    environment: dict[str, Any] | None
    temp_dir: Path
    first_truncation_id: int  # the number of the first output the budget saves (``next_truncation_id``)
    source_sha256: str | None
    reader: HistoryReader  # the turns' contents and recorded tool statuses, read once
    planned: Planned  # what the analysis measured, reused by ``compress``
    view: HistoryView  # how Gemini CLI's compression reads the history (decides the split)

    @property
    def statuses(self) -> ToolStatuses:
        """The status Gemini CLI recorded for each tool result (reads the turns the first time)."""
        return self.reader.read().statuses

    def compress_options(self, request: CompactionRequest, statuses: ToolStatuses,
                         planned: Planned | None) -> CompressOptions:
        """How ``compress`` runs ``request`` on this session: the one place the two are joined.
        ``statuses``: the recorded tool statuses read for it; ``planned``: the analysis's figures
        when the history is the one this context was read from (else None: measured again)."""
        return CompressOptions(
            model=self.model, force=request.force, threshold=self.threshold, split=request.split,
            agentic=request.agentic, recorded_prompt_tokens=self.recorded_prompt_tokens,
            environment=self.environment, temp_dir=self.temp_dir, instruction=request.instruction,
            system_prompt=request.system_prompt, source_sha256=self.source_sha256,
            first_truncation_id=self.first_truncation_id, statuses=statuses, planned=planned, view=self.view,
            target=request.target,
        )


def compaction_context(session: Session, analysis: Analysis) -> CompactionContext:
    """The context for compacting ``session``; ``analysis`` is its analysis (with any model or
    threshold override already applied)."""
    temp_dir = project_temp_dir(session.path)
    return CompactionContext(
        model=analysis.model,
        threshold=analysis.threshold,
        recorded_prompt_tokens=analysis.recorded_prompt_tokens,
        environment=environment_turn(session),
        temp_dir=temp_dir,
        first_truncation_id=next_truncation_id(temp_dir / TOOL_OUTPUTS_DIR),
        source_sha256=session.sha256 or None,
        reader=HistoryReader(session, analysis.turns, analysis.json_chars),
        planned=planned(analysis, output_folder(temp_dir)),
        view=analysis.view,
    )


def output_folder(temp_dir: Path) -> str:
    """Where the tool-output budget saves whole outputs, as ``analyze`` names it (with a trailing separator)."""
    return str(temp_dir / TOOL_OUTPUTS_DIR) + os.sep


# The number ``budget.output_file_name`` ends a name with: ``<tool>_<n>.txt``, or ``<n>.txt``.
_SAVED_NUMBER = re.compile(r"(?:^|_)([0-9]+)\.txt\Z", re.IGNORECASE)


def next_truncation_id(folder: Path) -> int:
    """One more than the highest number a saved output's name in ``folder`` holds (1 for none).

    Gemini CLI numbers the outputs its budget saves from 1 in every process and
    overwrites whatever holds the name; numbering after the files already there
    gives each applied session names of its own, so one session's apply never
    names another's outputs (the store refuses to overwrite one that appears
    meanwhile).  ``analyze`` still shows Gemini CLI's own numbering.
    """
    highest = 0
    try:
        with os.scandir(folder) as entries:
            for entry in entries:
                found = _SAVED_NUMBER.search(entry.name)
                if found:
                    highest = max(highest, int(found.group(1)))
    except OSError:  # no folder yet (or not one that can be listed: the store reports it when writing)
        return 1
    return highest + 1

