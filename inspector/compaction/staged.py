"""The "staged" strategy: reduce context in stages, cheapest first.

0. drop tool-result turns that exactly repeat earlier ones (lossless);
1. prune old tool outputs to a placeholder (the newest ~40,000 tokens of tool
   output and protected tools stay whole), only if it saves enough;
2. deduplicate repeated reads of the same file, keeping the latest;
3. summarise the older part with the same summarisers as the reference
   strategy (keeping at least 4 and ~30% of the recent turns);
4. a sliding window: drop the oldest turns after the first exchange.

It stops as soon as the history fits the target.  Afterwards every function
call has its response and every response its call (``pairs.repair_pairs``;
reported as a last row, "pairs", when it wrote a placeholder).
Each new turn remembers which original turn it came from unchanged, so the
store can keep the original records when it writes the result.  The summary
stage summarises the turns it replaces as they were recorded: a placeholder an
earlier stage put in one of them is session-inspector's text, not the
history's, and would hide what the output said (a command's exit code, its
error).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

from inspector.compaction.agentic import agentic_candidates, snapshot_turns
from inspector.compaction.pairs import pair_calls, repair_pairs
from inspector.compaction.prompts import GEMINI_CLI_ACKNOWLEDGEMENT
from inspector.compaction.split import is_split_candidate
from inspector.format import plural
from inspector.jsjson import js_stringify
from inspector.progress import SILENT, Reporter
from inspector.tokens import parts_quarters

PRUNED = "[Output of {name} pruned by session-inspector to save {tokens:,} tokens. Run the tool again if it is needed.]"
DEDUPED = "[Earlier read of {path}: the file is read again later in this conversation (turn {later}); see that read.]"
WINDOW_MARKER = "[session-inspector removed {count} older turns here to fit the context window.]"

T = TypeVar("T")

READ_TOOLS = frozenset({"read_file", "read_many_files", "ReadFile", "ReadManyFiles"})
DEFAULT_PROTECTED_TOOLS = frozenset({"write_file", "replace", "save_memory", "write_todos"})

# Summarise(contents) -> (draft, final): the same two passes as the reference.
Summarise = Callable[[list[dict[str, Any]]], Awaitable[tuple[str, str]]]


@dataclass(frozen=True)
class StagedConfig:
    target_tokens: int
    protect_tokens: int = 40_000
    min_prune_savings: int = 20_000
    dedup_min_ratio: float = 0.3
    keep_min_turns: int = 4
    keep_fraction: float = 0.3
    window_fraction: float = 0.5
    protected_tools: frozenset[str] = DEFAULT_PROTECTED_TOOLS


@dataclass
class StageReport:
    name: str
    applied: bool
    tokens_before: int
    tokens_after: int
    detail: str

    @property
    def saved(self) -> int:
        return self.tokens_before - self.tokens_after

    def to_json(self) -> dict[str, Any]:
        return {"stage": self.name, "applied": self.applied, "tokens_before": self.tokens_before,
                "tokens_after": self.tokens_after, "saved": self.saved, "detail": self.detail}


@dataclass
class StagedResult:
    contents: list[dict[str, Any]]
    sources: list[int | None]  # original turn index each new turn is an unchanged copy of
    stages: list[StageReport] = field(default_factory=list)
    tokens_before: int = 0
    tokens_after: int = 0
    target_tokens: int = 0
    draft_snapshot: str | None = None
    snapshot: str | None = None
    summarised_until: int | None = None  # original turns before this index were summarised
    repairs: int = 0

    @property
    def fits(self) -> bool:
        return self.tokens_after <= self.target_tokens

    @property
    def stages_used(self) -> list[str]:
        return stages_used(self.stages)


def stages_used(stages: Iterable[StageReport]) -> list[str]:
    """The names of the stages that changed the history, in order."""
    return [stage.name for stage in stages if stage.applied]


def tokens_of(contents: list[dict[str, Any]]) -> int:
    return sum(parts_quarters(_parts(c)) for c in contents) // 4


def _parts(content: dict[str, Any]) -> list[Any]:
    parts = content.get("parts")
    return parts if isinstance(parts, list) else []


def _response_tokens(fr: dict[str, Any]) -> int:
    return parts_quarters([{"functionResponse": fr}]) // 4


def _replace_response(content: dict[str, Any], part: int, text: str) -> dict[str, Any]:
    parts = list(_parts(content))
    fr = parts[part]["functionResponse"]
    parts[part] = {**parts[part], "functionResponse": {**fr, "response": {"output": text}}}
    return {**content, "parts": parts}


# -- stage 0 -----------------------------------------------------------------------
def drop_duplicate_results(contents: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], int]:
    """Remove tool-result turns that repeat, exactly, results already in the history.

    Gemini CLI 0.61 records each tool result twice (in the model message's
    ``toolCalls`` and in a user message of its own), and on resume both reach
    the history.  A turn whose every part is such an exact repeat carries
    nothing new and is dropped; no other turn is touched.
    """
    seen: set[tuple[str, str]] = set()
    out: list[dict[str, Any]] = []
    dropped = 0
    for content in contents:
        keys = []
        for part in _parts(content):
            fr = part.get("functionResponse") if isinstance(part, dict) else None
            keys.append((str(fr.get("id")), js_stringify(fr)) if isinstance(fr, dict) and fr.get("id") else None)
        if keys and all(k is not None and k in seen for k in keys):
            dropped += 1
            continue
        seen.update(k for k in keys if k is not None)
        out.append(content)
    return out, dropped


# -- stage 1 -----------------------------------------------------------------------
def prune_tool_outputs(contents: list[dict[str, Any]], config: StagedConfig) -> tuple[list[dict[str, Any]], str]:
    """Older tool outputs become placeholders; the newest ``protect_tokens`` stay whole."""
    seen = 0
    out = list(contents)
    pruned = 0
    for i in range(len(contents) - 1, -1, -1):
        for j in range(len(_parts(contents[i])) - 1, -1, -1):
            part = _parts(contents[i])[j]
            fr = part.get("functionResponse") if isinstance(part, dict) else None
            if not isinstance(fr, dict):
                continue
            tokens = _response_tokens(fr)
            name = str(fr.get("name") or "a tool")
            if seen + tokens <= config.protect_tokens or name in config.protected_tools:
                seen += tokens
                continue
            placeholder = PRUNED.format(name=name, tokens=tokens)
            if parts_quarters([{"text": placeholder}]) // 4 >= tokens:
                continue  # already small: a placeholder would not save anything
            out[i] = _replace_response(out[i], j, placeholder)
            pruned += 1
    return out, f"{pruned} tool outputs pruned"


# -- stage 2 -----------------------------------------------------------------------
def _read_paths(call: dict[str, Any]) -> tuple[str, ...]:
    args = call.get("args") if isinstance(call.get("args"), dict) else {}
    assert isinstance(args, dict)
    for key in ("file_path", "absolute_path", "path"):
        if isinstance(args.get(key), str):
            return (args[key],)
    for key in ("paths", "file_paths", "include"):
        value = args.get(key)
        if isinstance(value, list) and all(isinstance(v, str) for v in value):
            return tuple(sorted(value))
    return ()


def dedupe_file_reads(contents: list[dict[str, Any]], config: StagedConfig) -> tuple[list[dict[str, Any]], str, int]:
    """Earlier reads of a file read again later become a pointer to the later read.

    Returns the new history, a detail line and how many tokens the touched
    responses held before (for the "saves enough" rule).
    """
    calls = {(i, j): p["functionCall"] for i, c in enumerate(contents) for j, p in enumerate(_parts(c))
             if isinstance(p, dict) and isinstance(p.get("functionCall"), dict)}
    reads: dict[tuple[str, ...], list[tuple[int, int]]] = {}
    for response_at, call_at in sorted(pair_calls(contents).items()):
        call = calls[call_at]
        name = call.get("name")  # any JSON value in a file Gemini CLI loads: only text names a read tool
        if isinstance(name, str) and name in READ_TOOLS and (paths := _read_paths(call)) and not _args_window(call):
            reads.setdefault(paths, []).append(response_at)
    out = list(contents)
    touched_tokens = 0
    replaced = 0
    for paths, places in reads.items():
        latest = places[-1]
        for i, j in places[:-1]:
            fr = _parts(contents[i])[j]["functionResponse"]
            touched_tokens += _response_tokens(fr)
            out[i] = _replace_response(out[i], j, DEDUPED.format(path=", ".join(paths), later=latest[0]))
            replaced += 1
    return out, f"{replaced} repeated file reads replaced", touched_tokens


def _args_window(call: dict[str, Any]) -> bool:
    """A read of part of a file (offset/limit) is not a duplicate of a whole read."""
    args = call.get("args") if isinstance(call.get("args"), dict) else {}
    assert isinstance(args, dict)
    return any(args.get(k) not in (None, 0) for k in ("offset", "limit", "start_line", "end_line"))


# -- stage 3 -----------------------------------------------------------------------
def summary_split(contents: list[dict[str, Any]], config: StagedConfig) -> int:
    """Where stage 3 splits: the split point that keeps closest to ``keep_fraction``
    of the turns while keeping at least ``keep_min_turns`` (0 when none does).

    Points before a user prompt and agentic ones (before a model turn that
    separates no call from its result) both count, so a one-prompt agent
    run can be summarised too.
    """
    n = len(contents)
    agentic = set(agentic_candidates(contents))
    candidates = [i for i in range(1, n - config.keep_min_turns + 1)
                  if is_split_candidate(contents[i]) or i in agentic]
    if not candidates:
        return 0
    return min(candidates, key=lambda i: (abs((n - i) / n - config.keep_fraction), -i))


# -- stage 4 -----------------------------------------------------------------------
def sliding_window(contents: list[dict[str, Any]], config: StagedConfig) -> tuple[list[dict[str, Any]], list[int], int]:
    """Drop an even number of the oldest turns after the first exchange, with a marker.

    Returns the new history, the original index of each kept turn (-1 for the
    marker) and how many turns were dropped.
    """
    first = 2 if len(contents) > 2 else len(contents)
    droppable = len(contents) - first - config.keep_min_turns
    count = int(droppable * config.window_fraction) // 2 * 2
    # end the dropped run where a user prompt begins, so the roles still alternate
    while count > 0 and not is_split_candidate(contents[first + count]):
        count -= 2
    if count <= 0:
        return contents, list(range(len(contents))), 0
    marker = {"role": "user", "parts": [{"text": WINDOW_MARKER.format(count=count)}]}
    ack = {"role": "model", "parts": [{"text": "Understood."}]}
    kept = [*contents[:first], marker, ack, *contents[first + count:]]
    origin = [*range(first), -1, -1, *range(first + count, len(contents))]
    return kept, origin, count


# -- the runner -----------------------------------------------------------------------
def _track(new: list[dict[str, Any]], old: list[dict[str, Any]], origin: Sequence[T | None]) -> list[T | None]:
    """Origins for ``new``: a turn that is the very same object as one in ``old`` keeps its origin."""
    by_identity = {id(c): origin[k] for k, c in enumerate(old)}
    return [by_identity.get(id(c)) for c in new]


async def run_staged(
    contents: list[dict[str, Any]],
    config: StagedConfig,
    summarise: Summarise | None = None,
    split: int | None = None,
    reporter: Reporter = SILENT,
) -> StagedResult:
    """Run the stages cheapest first until the history fits ``config.target_tokens``.

    ``split`` (an index into ``contents``) fixes where the summary stage
    splits, when that turn is still there; otherwise ``summary_split`` picks.
    ``reporter`` hears each stage as it starts (``staged: <stage>``) and may stop the run there.
    """
    current = list(contents)
    origin: list[int | None] = list(range(len(contents)))
    # the original turn each turn of ``current`` was made from: the prune and dedupe stages change
    # turns in place (same position), so only the stages that drop turns move it
    derived: list[int] = list(range(len(contents)))
    size = tokens_of(current)  # of ``current``; measured once per change, not per question
    result = StagedResult(contents=current, sources=origin, tokens_before=size, target_tokens=config.target_tokens)

    def fits() -> bool:
        return size <= config.target_tokens

    def record(name: str, applied: bool, start: int, detail: str) -> None:
        result.stages.append(StageReport(name, applied, start, size, detail))

    def begin(name: str) -> None:
        reporter.check()
        reporter.report(f"staged: {name}", 0, len(current))

    # 0. exact duplicates (lossless)
    if not fits():
        begin("duplicates")
        start = size
        unique, dropped = drop_duplicate_results(current)
        if dropped:
            origin = _track(unique, current, origin)
            derived = [d for d in _track(unique, current, derived) if d is not None]
            current, size = unique, tokens_of(unique)
        record("duplicates", bool(dropped), start,
               f"{dropped} repeated tool-result turns removed" if dropped else "no repeated tool results")
    # 1. prune
    if not fits():
        begin("prune")
        start = size
        pruned, detail = prune_tool_outputs(current, config)
        pruned_size = tokens_of(pruned)
        saved = start - pruned_size
        applied = saved >= config.min_prune_savings
        if applied:
            origin = _track(pruned, current, origin)
            current, size = pruned, pruned_size
        record("prune", applied, start, detail if applied else f"would save only {saved:,} tokens; skipped")
    # 2. deduplicate file reads
    if not fits():
        begin("dedupe")
        start = size
        deduped, detail, touched = dedupe_file_reads(current, config)
        deduped_size = tokens_of(deduped)
        saved = start - deduped_size
        applied = touched > 0 and saved >= config.dedup_min_ratio * touched
        if applied:
            origin = _track(deduped, current, origin)
            current, size = deduped, deduped_size
        record("dedupe", applied, start, detail if applied else "no repeated reads worth replacing; skipped")
    # 3. summarise
    if not fits() and summarise is not None:
        start = size
        chosen = origin.index(split) if split is not None and split in origin else None
        split = chosen if chosen else summary_split(current, config)
        if split > 0:
            draft, final = await summarise([contents[d] for d in derived[:split]])
            summary = snapshot_turns(final, current[split] if split < len(current) else None,
                                     GEMINI_CLI_ACKNOWLEDGEMENT)
            summarised = [*summary, *current[split:]]
            summarised_size = tokens_of(summarised)
            if final.strip() and summarised_size >= start:
                record("summarise", False, start, "the summary would be larger than what it replaces; skipped")
            elif final.strip():
                origin = [*(None for _ in summary), *origin[split:]]
                current, size = summarised, summarised_size
                result.draft_snapshot, result.snapshot = draft, final
                result.summarised_until = next((o for o in origin[len(summary):] if o is not None), None)
                record("summarise", True, start, f"{split} turns summarised")
            else:
                record("summarise", False, start, "the summariser returned nothing; skipped")
        else:
            record("summarise", False, start, "no split leaves enough recent turns; skipped")
    # 4. sliding window
    if not fits():
        begin("window")
        start = size
        windowed, kept_from, dropped = sliding_window(current, config)
        if dropped:
            origin = [origin[k] if k >= 0 else None for k in kept_from]
            current, size = windowed, tokens_of(windowed)
        record("window", bool(dropped), start, f"{dropped} oldest turns removed" if dropped else "too short to window")
    repaired, fixes = repair_pairs(current)
    origin = _track(repaired, current, origin)
    result.contents, result.sources, result.repairs = repaired, origin, fixes
    result.tokens_after = tokens_of(repaired)
    if fixes and result.stages_used:  # its placeholders are tokens too: the table ends at the result's size
        start, size = size, result.tokens_after
        record("pairs", True, start, f"{plural(fixes, 'placeholder')}: every call has its result, every result "
                                     "its call")
    return result
