"""Apply a new history to a session file on disk, reversibly.

Order of work, so that a failure at any point loses nothing:

1. check the file is still what the preview was computed from;
2. build the bytes to write and prove the project's own loader reads them
   back as exactly the new history (else refuse);
3. check every tool-output file can be written without overwriting a
   different one (else refuse);
4. back up the file (atomically) and journal the intent;
5. write the full tool outputs, then the session, whole, by an atomic swap
   (JSONL: the file with a checkpoint line added, as Gemini CLI's /compress
   appends it; legacy JSON and checkpoints: the new document);
6. journal where it landed.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import secrets
import stat
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import orjson

from inspector.compaction.budget import TOOL_OUTPUTS_DIR, Truncation
from inspector.format import describe_os_error
from inspector.jsjson import js_stringify, js_utf8
from inspector.session.errors import SessionError
from inspector.session.history import Turn, messages_to_turns
from inspector.session.loader import Session, parse
from inspector.session.records import loads_line
from inspector.store import files
from inspector.store.baseline import (
    Baseline,
    CaughtUp,
    changed_error,
    check_writable,
    check_writable_now,
    first_history_rewrite,
    open_regular,
    read_baseline,
    read_fd,
    replace_file,
    replace_recording,
)
from inspector.store.errors import StoreError
from inspector.store.journal import JournalEntry, JournalInfo, Region, append_event
from inspector.store.records import build_records, context_records, first_difference
from inspector.store.settle import finish_landed

Content = dict[str, Any]
_ODD = re.compile(r"(?:^|[:\[,])(?:-?\d(?:\d*[.eE]|\d{15})|-?Infinity|NaN)|[{,]\"\d+\":|[\ud800-\udfff]")


def js_timestamp(moment: datetime | None = None) -> str:
    """``new Date().toISOString()``."""
    moment = (moment or datetime.now(UTC)).astimezone(UTC)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"


def js_json(value: Any, indent: int | None = None) -> str:
    """``JSON.stringify(value, null, indent)``: the C encoder, checked for the rare odd cases."""
    try:
        if indent:
            text = json.dumps(value, ensure_ascii=False, indent=indent)
        else:
            text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    except (TypeError, ValueError):
        return js_stringify(value, indent)
    if _ODD.search(text):
        return js_stringify(value, indent)
    return text


def refuse_store_file(path: Path) -> None:
    """Never treat the store's own files (backups, journal, temp files) as a session."""
    if files.is_store_path(path) or files.is_store_path(os.path.realpath(path)):
        raise StoreError(
            path, "this is one of session-inspector's own files (a backup, journal or temp file), not a session; "
            "nothing was written", "invalid",
        )


def refuse_unread_lines(session: Session) -> None:
    """Never apply over a line Gemini CLI reads and this reader could not: the new history would
    leave its message out of what Gemini CLI resumes."""
    unread = next((w for w in session.warnings if w.gemini_reads), None)
    if unread is not None:
        raise StoreError(session.path, f"line {unread.line} could not be read here but Gemini CLI reads it; "
                                       "applying would drop it from what Gemini CLI resumes. Nothing was written",
                         "invalid")


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


@dataclass(frozen=True)
class OutputFile:
    path: Path
    data: bytes
    exists: bool  # already there with the same bytes: nothing to write


@dataclass
class Plan:
    """What one apply will write."""

    data: bytes  # jsonl: the bytes to append; else: the whole new file
    append: bool
    turns_after: int
    reused: int
    adapted: int
    created: int


def read_current(path: Path) -> bytes:
    return read_baseline(path).data


def compare_with_preview(path: Path, current: bytes, size: int, digest: str, known: str | None = None) -> str:
    """``same``, ``grown`` (the previewed bytes, then more) or ``changed`` (``known``: sha256 of ``current``)."""
    if len(current) == size and (known or sha256(current)) == digest:
        return "same"
    if len(current) > size and sha256(current[:size]) == digest:
        return "grown"
    return "changed"


def preview_state(session: Session, expected_sha256: str | None = None, expected_size: int | None = None) -> str:
    """Is a preview made from ``session`` still good?  ``same``, ``grown`` or ``changed``.

    (``changed`` also when the file is gone.)  The app asks this on a watch
    event to mark a preview stale; apply refuses on anything but ``same``.
    """
    try:
        current = read_current(session.path)
    except StoreError:
        return "changed"
    size = session.size if expected_size is None else expected_size
    return compare_with_preview(session.path, current, size, expected_sha256 or session.sha256)


def _parse_whole(path: Path, data: bytes) -> Any:
    """The document as Gemini CLI reads it (invalid UTF-8 as U+FFFD, as the loader reads it too)."""
    try:
        return loads_line(data)
    except (ValueError, RecursionError):
        raise StoreError(path, "the file is no longer readable JSON; nothing was written", "changed") from None


def _indent_of(data: bytes) -> int | None:
    """The indent the file was written with (None: one line)."""
    match = re.search(rb"\n( +)\S", data[:4096])
    return len(match.group(1)) if match else None


def _read_back(path: Path, data: bytes) -> list[Content]:
    try:
        session = parse(path, data)
    except SessionError as exc:
        raise StoreError(path, f"the records built would not load ({exc.message}); nothing was written", "invalid") \
            from None
    if session.contents is not None:
        return list(session.contents)
    return [turn.content for turn in messages_to_turns(session.messages)]


def _plan(
    session: Session,
    current: bytes,
    turns: Sequence[Turn],
    new_history: Sequence[Content],
    sources: Sequence[Turn | None],
    extra: list[dict[str, Any]],
    timestamp: str,
) -> Plan:
    path = session.path
    if session.format == "checkpoint":
        doc = _parse_whole(path, current)
        history = list(new_history)
        body: Any = history if isinstance(doc, list) else {**doc, "history": history}
        text = js_json(body, _indent_of(current))
        data = text.encode("utf-8") + (b"\n" if current.endswith(b"\n") else b"")
        want = history
        plan = Plan(data, False, len(history), 0, 0, 0)
    else:
        built = build_records(session.messages, turns, new_history, sources, now=lambda: timestamp)
        messages = context_records(session.messages) + built.records + extra
        want = list(new_history) + [t.content for t in messages_to_turns(extra)]
        if session.format == "jsonl":
            # Gemini CLI's two lines; the id's only where it is text (a $set may have made it anything,
            # and one written back as null would leave a file no longer read as a session).
            lines: list[dict[str, Any]] = [{"$set": {"sessionId": session.session_id}}] \
                if session.session_id is not None else []
            lines.append({"$set": {"messages": messages, "lastUpdated": timestamp}})
            text = "".join(js_json(line) + "\n" for line in lines)
            lead = b"\n" if current and not current.endswith(b"\n") else b""
            data = lead + text.encode("utf-8")
        else:
            doc = _parse_whole(path, current)
            if not isinstance(doc, dict):
                raise StoreError(path, "the file is no longer a legacy session; nothing was written", "changed")
            doc = dict(doc)
            doc["messages"] = messages
            if "lastUpdated" in doc:
                doc["lastUpdated"] = timestamp
            text = js_json(doc, _indent_of(current))
            data = text.encode("utf-8") + (b"\n" if current.endswith(b"\n") else b"")
        plan = Plan(data, session.format == "jsonl", len(want), built.reused, built.adapted, built.created)
    # The proof: what will be on disk reads back as exactly the new history.
    if plan.append:
        # A $set.messages line replaces every message before it, so the
        # messages after the apply depend only on the lines appended; a
        # metadata line stands in for the rest of the file (its values are never read back: the
        # file's own, once a $set has merged into them, need not be text).
        header = js_json({"sessionId": "read-back", "projectHash": "read-back"}).encode()
        got = _read_back(path, header + b"\n" + plan.data.lstrip(b"\n"))
    else:
        got = _read_back(path, plan.data)
    problem = first_difference(got, want)
    if problem:
        raise StoreError(path, f"refusing to write: {problem}; nothing was written", "invalid")
    return plan


def _grown_records(session: Session, current: bytes) -> list[dict[str, Any]]:
    """Messages the lines appended since the preview add (new ids only)."""
    now = parse(session.path, current)
    before = {r.get("id"): r for r in session.messages}
    seen = [r for r in now.messages if r.get("id") in before]
    if [r.get("id") for r in seen] != [r.get("id") for r in session.messages] or any(
        r is not before[r.get("id")] and r != before[r.get("id")] for r in seen
    ):
        raise StoreError(
            session.path,
            "the session changed since the preview (lines appended after it rewrite earlier messages); "
            "preview again. Nothing was written",
            "stale",
        )
    return [r for r in now.messages if r.get("id") not in before]


def _plan_outputs(session_path: Path, truncations: Sequence[Truncation]) -> list[OutputFile]:
    outputs: list[OutputFile] = []
    for item in truncations:
        target = Path(item.output_file)
        if not target.is_absolute():
            target = session_path.parent / target
        data = js_utf8(str(item.full_text))  # as Gemini CLI (Node) would write it
        exists = False
        try:
            exists = files.read_own_file(target) == data
        except FileNotFoundError:
            pass
        except OSError as exc:
            raise StoreError(session_path, f"tool output path {target}: {describe_os_error(exc)}; nothing was written"
                             ) from None
        else:
            if not exists:
                raise StoreError(
                    session_path,
                    f"tool output file {target} already exists with different content (written since the "
                    "preview?); preview again. Nothing was written",
                    "conflict",
                )
        outputs.append(OutputFile(target, data, exists))
    return outputs


def refuse_linked_outputs(session_path: Path, output: Path) -> None:
    """A full tool output is written only into real folders: a symbolic link from the tool-outputs
    folder down to the file is refused, not followed (run as root on another user's session, the
    files made would be handed to that user wherever the link points)."""
    parts = output.parts
    if TOOL_OUTPUTS_DIR not in parts[:-1]:
        return
    files.refuse_links(session_path, Path(*parts[:parts.index(TOOL_OUTPUTS_DIR)]), (output,), "writes tool outputs",
                       "The session was left as it was")


def _write_outputs(session_path: Path, outputs: Sequence[OutputFile], session_mode: int,
                   hook: files.WriteHook | None, written: list[Path], folders: list[Path]) -> None:
    """Write the outputs not there yet, adding each to ``written`` as it is (the caller removes them
    if a later one fails), and each folder made for them to ``folders``."""
    mode = stat.S_IMODE(session_mode) & 0o666  # a full output is as private as its session
    for output in outputs:
        if output.exists:
            continue
        refuse_linked_outputs(session_path, output.path)
        folders.extend(files.make_folders(output.path.parent, files.folder_mode(mode)))
        try:
            files.atomic_write(output.path, output.data, hook=hook, no_clobber=True, mode=mode)
        except FileExistsError:
            if files.read_own_file(output.path) != output.data:
                raise StoreError(
                    session_path, f"tool output file {output.path} appeared with different content while applying; "
                    "preview again. The session was left as it was", "conflict"
                ) from None
            continue
        written.append(output.path)


def apply_history(
    session: Session,
    turns: Sequence[Turn],
    new_history: Sequence[Content],
    sources: Sequence[Turn | None] | None = None,
    *,
    truncations: Sequence[Truncation] = (),
    journal: JournalInfo | None = None,
    expected_sha256: str | None = None,
    expected_size: int | None = None,
    allow_grown: bool = False,
    hook: files.WriteHook | None = None,
    now: Callable[[], datetime] | None = None,
) -> JournalEntry:
    """Write ``new_history`` as the session's conversation; returns the journal entry.

    ``turns`` is the history the preview was computed from (``history(session)``)
    and ``sources[i]`` the turn ``new_history[i]`` came from (None if new).
    ``expected_sha256``/``expected_size`` name the bytes the preview saw
    (default: the session as loaded).  Raises StoreError, having written
    nothing to the session, when it refuses or fails.
    """
    path = session.path
    refuse_store_file(path)
    refuse_unread_lines(session)
    info = journal or JournalInfo()
    sources = list(sources) if sources is not None else [None] * len(new_history)
    base_sha = expected_sha256 or session.sha256
    base_size = session.size if expected_size is None else expected_size
    # (a JSONL apply only appends, but its revert rewrites: refuse what could not be undone as it was)
    check_writable_now(path, rewrite=True)
    owner = files.owner_of(path)
    folder = files.ensure_store_dir(path)
    made: list[Path] = []  # folders made for the outputs, then the outputs written
    try:
        with files.locked(folder):
            # Everything below is decided from this one read; the file is
            # checked to still be these bytes right before it is written.
            base = read_baseline(path, appended_to=session.format == "jsonl")
            current = base.data
            if hook:
                hook("read")
            state = compare_with_preview(path, current, base_size, base_sha, base.sha256)
            extra: list[dict[str, Any]] = []
            if state == "changed":
                raise StoreError(
                    path, "the file changed on disk since the preview; reload and preview again. Nothing was written",
                    "changed",
                )
            if state == "grown":
                grown = len(current) - base_size
                if session.format != "jsonl" or not allow_grown:
                    raise StoreError(
                        path,
                        f"the preview is stale: {grown:,} bytes were appended since it was made (Gemini CLI is still "
                        "writing this session?); preview again. Nothing was written",
                        "stale",
                    )
                extra = _grown_records(session, current)
            moment = (now or (lambda: datetime.now(UTC)))()
            timestamp = js_timestamp(moment)
            plan = _plan(session, current, turns, new_history, sources, extra, timestamp)
            check_writable(path, base)
            try:  # a revert a kill cut short is finished first (its outputs go before new ones are numbered)
                record = finish_landed(path, folder, timestamp)
            except OSError as exc:
                raise StoreError(
                    path, f"cannot write the journal: {describe_os_error(exc)}; nothing was written", "io"
                ) from None
            outputs = _plan_outputs(path, truncations)
            files.sweep(path, folder, {e.backup for e in record.entries if e.state != "failed"})
            seq = record.next_seq()
            backup = f"{seq:04d}-{moment.strftime('%Y%m%dT%H%M%S')}-{secrets.token_hex(3)}.bak"
            try:
                files.atomic_write(folder / "backups" / backup, current, hook=hook, no_clobber=True)
            except OSError as exc:
                raise StoreError(
                    path, f"cannot write the backup: {describe_os_error(exc)}; nothing was written", "io"
                ) from None
            entry = JournalEntry(
                id=f"{seq:04d}-{secrets.token_hex(4)}",
                seq=seq,
                applied_at=timestamp,
                file=path.name,
                format=session.format,
                info=info,
                size_before=len(current),
                sha256_before=sha256(current),
                backup=backup,
                planned_sha256=sha256(plan.data),
                planned_length=len(plan.data),
                output_files=tuple(str(o.path) for o in outputs),
                outputs_new=tuple(str(o.path) for o in outputs if not o.exists),
                outputs_new_sha256=tuple(sha256(o.data) for o in outputs if not o.exists),
                turns_before=len(turns),
                turns_after=plan.turns_after,
                records_reused=plan.reused,
                records_adapted=plan.adapted,
                records_created=plan.created,
                state="incomplete",
            )
            created: list[Path] = []
            journalled = False
            try:
                append_event(folder, {"event": "apply", **entry.to_json()}, hook)
                journalled = True
                if hook:
                    hook("journalled")
                _write_outputs(path, outputs, base.mode, hook, created, made)
                made.extend(created)
                if plan.append:
                    regions, carried, after, swap = _append(path, base, plan.data, hook)
                else:
                    replace_file(base, plan.data, hook=hook)
                    regions, carried, after, swap = (), 0, plan.data, CaughtUp(0)
            except (OSError, StoreError) as exc:
                for leftover in [*created, folder / "backups" / backup]:
                    with contextlib.suppress(OSError):
                        leftover.unlink()
                for made_folder in reversed(made):  # the folders made for the outputs, now empty
                    with contextlib.suppress(OSError):
                        made_folder.rmdir()
                message = exc.message if isinstance(exc, StoreError) else describe_os_error(exc)
                if journalled:
                    with contextlib.suppress(OSError):
                        append_event(folder, {"event": "failed", "id": entry.id, "error": message})
                if isinstance(exc, StoreError):
                    raise
                raise StoreError(path, f"could not write: {message}; the session was left as it was", "io") from None
            entry = replace(
                entry, state="applied", regions=regions, carried_lines=carried, size_after=len(after),
                sha256_after=sha256(after), lost_bytes=swap.lost, lost_reason=swap.error,
            )
            with contextlib.suppress(OSError):
                append_event(folder, {
                    "event": "applied", "id": entry.id, "size_after": entry.size_after,
                    "sha256_after": entry.sha256_after, "regions": [r.__dict__ for r in regions],
                    "carried_lines": carried, "lost_bytes": swap.lost, "lost_reason": swap.error,
                })
            files.note_own_write(path, entry.sha256_after or "", len(after))
            return entry
    finally:
        files.hand_over(path, owner, made)


def _append(
    path: Path, base: Baseline, data: bytes, hook: files.WriteHook | None
) -> tuple[tuple[Region, ...], int, bytes, CaughtUp]:
    """Append ``data`` as Gemini CLI's /compress does, but written whole: the file, as it is now,
    plus ``data`` is written beside it and swapped in (``replace_file``).

    A write cut short (a kill, a crash, a full disk) would leave a line without its newline,
    and the next line Gemini CLI appends would join it: one line no reader parses, its message
    lost.  A swap is all or nothing.  Gemini CLI opens the file by name for every line it
    appends, so its next line goes to the new file; a line it appended to the old one during the
    swap is copied over (``replace_recording``).  Only while the file still starts with the bytes that
    were read; else refuses (StoreError ``changed``), leaving the other writer's file.
    """
    old = open_regular(base.path)
    try:
        now = read_fd(old, os.fstat(old).st_size)
        if not (base.same_file(os.fstat(old)) and now[: base.size] == base.data):
            raise changed_error(path)
        # Lines another writer appended since the read stay where they are, before the
        # checkpoint, which would hide their messages: they are written again after it.  Whole
        # lines only; a line still being written is caught up after the swap.  A line that
        # rebuilds the whole history (a rewind, or a resume's $set.messages) is refused: before
        # the checkpoint the compaction would undo it, after it, it would undo the compaction.
        whole = now[: now.rfind(b"\n") + 1] if len(now) > base.size else base.data
        start = base.data.rfind(b"\n") + 1
        between = whole[start:] if len(whole) > base.size else b""
        rewrite = first_history_rewrite(whole, start) if len(whole) > base.size else None
        if rewrite is not None:
            raise StoreError(
                path, f"another program wrote line {rewrite.line:,} while the compaction was being written (Gemini "
                f"CLI?): it {rewrite.does}; the file was left as that program wrote it. Reload and preview again",
                "changed",
            )
        again = b"".join(line + b"\n" for line in between.split(b"\n") if _carried(line))
        regions = [Region(len(whole), len(data), sha256(data))]
        if again:
            regions.append(Region(len(whole) + len(data), len(again), sha256(again)))
        written = whole + data + again
        swap = replace_recording(base, written, old, len(whole), hook=hook)
        after = written + os.pread(old, swap.copied, len(whole)) if swap.copied else written
    finally:
        os.close(old)
    if hook:
        hook("appended")
    return tuple(regions), len(again.splitlines()), after, swap


def _carried(line: bytes) -> bool:
    if not line.strip():
        return False
    try:
        return isinstance(orjson.loads(line), dict)
    except orjson.JSONDecodeError:
        return False
