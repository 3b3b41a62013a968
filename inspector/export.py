"""A session, and optionally a compaction of it, as Markdown or as one standalone HTML page.

Both formats are built from one ``Document`` (the figures ``analyze`` shows
and every turn's text, calls and results), so they say the same thing.
Session text is hostile until shown otherwise: control characters are
written as visible escapes (``format.visible``), Markdown puts text in
fenced blocks longer than any backtick run inside it, and HTML escapes
everything and carries no script at all (a Content-Security-Policy in the
page says so too).
"""

from __future__ import annotations

import errno
import html
import json
import os
import re
import stat
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from inspector.analysis import Analysis
from inspector.compaction.compress import CompressionResult
from inspector.format import (
    before_after,
    count_text,
    describe_os_error,
    plain_name,
    plural,
    split_sides,
    uncut_split_words,
    usage_words,
    visible,
    written_by,
)
from inspector.session.loader import Session, not_a_file
from inspector.store.files import atomic_write

Format = Literal["md", "html"]
FORMATS: tuple[Format, ...] = ("md", "html")
RESULT_LIMIT = 4_000  # characters of one tool result written out; the rest is counted, not copied


@dataclass(frozen=True)
class Block:
    """One piece of a turn: its text, a call, a result or a thought."""

    kind: Literal["text", "thought", "call", "result", "other"]
    title: str  # "text", "call run_shell_command", "result of read_file", ...
    body: str  # already made visible (control characters escaped)


@dataclass(frozen=True)
class TurnView:
    index: int
    role: str
    kind: str
    tokens: int
    usage: str
    blocks: tuple[Block, ...]
    split_here: bool


@dataclass(frozen=True)
class Document:
    title: str
    facts: tuple[tuple[str, str], ...]  # (label, value) figures of the session
    turns: tuple[TurnView, ...]
    snapshot: str | None  # a compaction's snapshot, when one was given and wrote one
    snapshot_facts: tuple[tuple[str, str], ...]  # the compaction's facts (none: no compaction was asked for)


def _clip(text: str) -> str:
    if len(text) <= RESULT_LIMIT:
        return text
    return f"{text[:RESULT_LIMIT]}\n… ({len(text) - RESULT_LIMIT:,} more characters not copied)"


def _blocks(content: dict[str, Any]) -> Iterator[Block]:
    parts = content.get("parts")
    for part in parts if isinstance(parts, list) else []:
        if not isinstance(part, dict):
            continue
        if isinstance(part.get("text"), str):
            kind: Literal["text", "thought"] = "thought" if part.get("thought") else "text"
            yield Block(kind, kind, visible(part["text"]))
        elif isinstance(part.get("functionCall"), dict):
            call = part["functionCall"]
            args = json.dumps(call.get("args", {}), ensure_ascii=False, indent=2)
            yield Block("call", f"call {visible(str(call.get('name')), one_line=True)}", visible(args))
        elif isinstance(part.get("functionResponse"), dict):
            response = part["functionResponse"]
            body = response.get("response")
            text = body.get("output") if isinstance(body, dict) and isinstance(body.get("output"), str) \
                else json.dumps(body, ensure_ascii=False, indent=2)
            yield Block("result", f"result of {visible(str(response.get('name')), one_line=True)}",
                        visible(_clip(str(text))))
        else:
            yield Block("other", "other part", visible(_clip(json.dumps(part, ensure_ascii=False))))


def _turn_view(analysis: Analysis, index: int) -> TurnView:
    turn = analysis.turns[index]
    return TurnView(
        index=index, role=turn.role or "?", kind=analysis.kinds[index],
        tokens=analysis.turn_tokens(index), usage=usage_words(analysis.recorded[index]),
        blocks=tuple(_blocks(turn.content)), split_here=index == analysis.compress_split_point,
    )


def _split_words(analysis: Analysis) -> str:
    """Where Gemini CLI splits: after the tool-output budget cuts old outputs, as a compaction does first."""
    split = f"turn {analysis.compress_split_point:,}"
    if analysis.compress_split_point == analysis.split_point:
        return split
    return f"{split} ({uncut_split_words(analysis.split_point)})"


def build(session: Session, analysis: Analysis, result: CompressionResult | None = None) -> Document:
    """What an export says, from the same figures ``analyze`` and the app show."""
    context = analysis.context
    recorded = context.recorded_prompt_tokens
    facts: tuple[tuple[str, str], ...] = (
        ("file", visible(session.path.name, one_line=True)),
        ("format", session.format),
        ("session id", visible(session.session_id or "-", one_line=True)),
        ("model", visible(analysis.model or "unknown", one_line=True)),
        ("turns", f"{len(analysis.turns):,}"),
        ("estimated tokens", f"{analysis.total_estimated_tokens:,}"),
        ("last recorded prompt", count_text(recorded) if recorded is not None else
         "none since the last compaction" if analysis.fresh_from else "none recorded"),
        ("threshold", f"{context.threshold:g} x {context.token_limit:,} = {context.threshold_tokens:,} tokens"),
        # the figure the threshold is compared with, and how, as analyze and the app's header say them: with
        # the environment turn, the estimate may cross the threshold while the history's total above does not
        ("context", f"{count_text(context.deciding_tokens)} / {context.token_limit:,} ({context.share_percent}, "
                    f"{context.source}): {context.reason()}"),
        ("would compress now", "yes" if analysis.would_compress else f"no ({analysis.verdict.value})"),
        ("split point", _split_words(analysis)),
        *zip(("summarise", "keep"), split_sides(analysis.split_figures(analysis.compress_split_point)), strict=True),
    )
    turns = tuple(_turn_view(analysis, index) for index in range(len(analysis.turns)))
    if context.environment_tokens:  # why a compaction's "before" figure is larger than the history's
        facts += (("environment turn", f"{context.environment_tokens:,} tokens, sent before the history and "
                                       "counted in the compaction's figures"),)
    snapshot_facts: tuple[tuple[str, str], ...] = ()
    if result is not None:
        snapshot_facts = (
            ("status", result.status.value),
            ("strategy", result.strategy),
            ("written by", written_by(result.provider, result.model)),
            ("tokens", before_after(result.original_token_count, result.new_token_count, change=True)),
        )
        if not result.snapshot:  # a compaction that wrote none says why, never leaves the section out
            snapshot_facts += (("no snapshot", visible(result.message or "no reason given", one_line=True)),)
        elif result.snapshot_problem:
            snapshot_facts += (("not appliable", visible(result.snapshot_problem, one_line=True)),)
    return Document(
        title=f"Session {visible(session.path.name, one_line=True)}", facts=facts, turns=turns,
        snapshot=visible(result.snapshot) if result is not None and result.snapshot else None,
        snapshot_facts=snapshot_facts,
    )


# -- Markdown ----------------------------------------------------------------------


def _fence(text: str) -> str:
    longest = max((len(m) for m in re.findall(r"`+", text)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}text\n{text}\n{fence}"


_MD_SPECIAL = re.compile(r"([\\`*\[\]|])")  # what starts code, emphasis, a link or image, a cell's end


def _md_cell(text: str) -> str:
    """Session text in one table cell or heading, shown literally: no HTML a renderer would run
    (``<`` ``>`` ``&`` as entities), no code, link or image (their marks escaped; ``_`` inside a
    name emphasises nothing)."""
    text = html.escape(text.replace("\n", " "), quote=False)
    return _MD_SPECIAL.sub(r"\\\1", text)


def markdown(document: Document) -> str:
    out = [f"# {_md_cell(document.title)}", "", "| | |", "|---|---|"]
    out += [f"| {_md_cell(label)} | {_md_cell(value)} |" for label, value in document.facts]
    if document.snapshot_facts:
        out += ["", "## Compaction snapshot", "", "| | |", "|---|---|"]
        out += [f"| {_md_cell(label)} | {_md_cell(value)} |" for label, value in document.snapshot_facts]
        out += ["", _fence(document.snapshot)] if document.snapshot is not None else []
    out += ["", "## Turns"]
    for turn in document.turns:
        if turn.split_here:
            out += ["", "---", "", "*Gemini CLI's split point: the turns above would be summarised.*"]
        out += ["", *_turn_lines(turn)]
    return "\n".join(out) + "\n"


def _turn_lines(turn: TurnView) -> list[str]:
    usage = f", recorded {turn.usage}" if turn.usage else ""
    out = [f"### Turn {turn.index:,}: {turn.role} ({_md_cell(turn.kind)}, {plural(turn.tokens, 'token')}{usage})"]
    for block in turn.blocks:
        out += ["", f"**{_md_cell(block.title)}**", "", _fence(block.body)]
    return out


def turn_markdown(analysis: Analysis, index: int) -> str:
    """One turn as the Markdown export writes it (what the app copies with ``y``)."""
    return "\n".join(_turn_lines(_turn_view(analysis, index))) + "\n"


# -- HTML --------------------------------------------------------------------------

STYLE = """
body { font: 14px/1.45 system-ui, sans-serif; margin: 2rem auto; max-width: 70rem; padding: 0 1rem; color: #222; }
table.facts td { padding: .1rem .8rem .1rem 0; vertical-align: top; }
table.facts td:first-child { color: #666; }
section.turn { border-top: 1px solid #ddd; padding: .4rem 0; }
section.turn h3 { font-size: 1rem; margin: .4rem 0; }
.role-user h3 { color: #1b5e20; } .role-model h3 { color: #0d47a1; }
pre { white-space: pre-wrap; word-break: break-word; background: #f6f6f6; padding: .5rem; margin: .2rem 0; }
details > summary { cursor: pointer; color: #555; }
.split { border-top: 3px solid #e65100; color: #e65100; margin-top: 1rem; padding-top: .3rem; }
"""


def _e(text: str) -> str:
    return html.escape(text, quote=True)


def _facts_table(facts: tuple[tuple[str, str], ...], css: str) -> str:
    rows = "".join(f"<tr><td>{_e(label)}</td><td>{_e(value)}</td></tr>" for label, value in facts)
    return f'<table class="{css}">{rows}</table>'


def page(document: Document) -> str:
    out = [
        "<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8">',
        # nothing in this page may run or load: it is session text, not a program
        "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'\">",
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>{_e(document.title)}</title><style>{STYLE}</style></head><body>",
        f"<h1>{_e(document.title)}</h1>", _facts_table(document.facts, "facts"),
    ]
    if document.snapshot_facts:
        out += ['<h2 id="snapshot">Compaction snapshot</h2>', _facts_table(document.snapshot_facts, "facts")]
        out += [f"<pre>{_e(document.snapshot)}</pre>"] if document.snapshot is not None else []
    out.append('<h2 id="turns">Turns</h2>')
    for turn in document.turns:
        if turn.split_here:
            out.append('<div class="split">Gemini CLI\'s split point: the turns above would be summarised.</div>')
        usage = f", recorded {_e(turn.usage)}" if turn.usage else ""
        out.append(f'<section class="turn role-{_e(turn.role)}" id="turn-{turn.index}">'
                   f"<h3>Turn {turn.index:,}: {_e(turn.role)} ({_e(turn.kind)}, "
                   f"{plural(turn.tokens, 'token')}{usage})</h3>")
        for block in turn.blocks:
            if block.kind in ("result", "thought", "other"):
                out.append(f"<details><summary>{_e(block.title)}</summary><pre>{_e(block.body)}</pre></details>")
            else:
                out.append(f"<div>{_e(block.title)}</div><pre>{_e(block.body)}</pre>")
        out.append("</section>")
    out.append("</body></html>")
    return "\n".join(out) + "\n"


def render(document: Document, fmt: Format) -> str:
    return markdown(document) if fmt == "md" else page(document)


class ExportRefused(ValueError):
    """The export cannot go where it was asked to (the message says why)."""


def default_name(session_path: Path, fmt: Format) -> str:
    """``coding-task.md`` for ``coding-task.jsonl`` (control characters in the name become ``_``)."""
    return f"{plain_name(session_path.stem)}.{fmt}"


def check_target(out: Path, session_path: Path) -> None:
    """Refuse a target that is a folder, the session itself, or anything but a regular file, or
    whose folder is not there (``ExportRefused``): the export is written beside it and renamed
    over it, which would put a file where a device, a pipe or a link was."""
    try:
        info = out.lstat()
    except OSError as exc:
        if exc.errno in (errno.EACCES, errno.EPERM):
            raise ExportRefused(f"{out}: {describe_os_error(exc)}") from None
        _check_folder(out)  # nothing there: its folder must be
        return
    if stat.S_ISLNK(info.st_mode):
        raise ExportRefused(f"{out}: that is a symbolic link; give the path of a file, or a new name")
    if stat.S_ISDIR(info.st_mode):
        raise ExportRefused(f"{out}: that is a folder; give a file name")
    kind = not_a_file(info.st_mode)
    if kind is not None:
        raise ExportRefused(f"{out}: that is {kind}, not a regular file; give a file name")
    if out.resolve() == session_path.resolve():
        raise ExportRefused(f"{out}: that is the session itself; choose another name")


def _check_folder(out: Path) -> None:
    """Refuse ``out`` when the folder to hold it is missing or not a folder, naming which."""
    folder = out.parent
    if folder.is_dir():
        return
    for above in (folder, *folder.parents):  # the nearest that is there says which is wrong
        if os.path.lexists(above):
            if not above.is_dir():
                raise ExportRefused(f"{out}: {above} is not a folder")
            break
    raise ExportRefused(f"{out}: there is no folder {folder}")


def _not_written(out: Path, exc: OSError) -> ExportRefused:
    """Why the file system refused the export, in a person's words (``out`` named)."""
    folder = out.parent
    if exc.errno in (errno.ENOENT, errno.ENOTDIR):
        _check_folder(out)  # the folder went away
        # the folder is there, yet a new file in it is "no such file": a file system of the
        # kernel's own files (/proc, /sys) that takes none of ours
        return ExportRefused(f"{out}: no file can be created in {folder}; give a path in another folder")
    if exc.errno in (errno.EACCES, errno.EPERM):
        return ExportRefused(f"{out}: permission denied: no file can be created in {folder}")
    return ExportRefused(f"{out}: {describe_os_error(exc)}")


def write_export(text: str, out: Path, session_path: Path) -> int:
    """Write an export to ``out`` atomically (never over the session itself); the bytes written.

    Raises ``ExportRefused`` for a target that is the session or a folder, or when the file
    system says no (why, in one line naming ``out``); nothing is left written then.
    """
    check_target(out, session_path)
    data = text.encode("utf-8")
    try:
        atomic_write(out, data, mode=0o644)
    except OSError as exc:
        raise _not_written(out, exc) from None
    return len(data)
