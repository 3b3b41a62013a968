"""The Gemini CLI summariser: the user's own ``gemini`` (0.61), run headless, writes the snapshot.

For people who sign in to Gemini CLI with Google and have no API key.  Each call
(``compress.summarise_twice`` makes two: the draft, then its verification) is one
run of ``gemini`` in a folder of this project's own (``run_folder``), with:

* ``GEMINI_SYSTEM_MD`` naming a temporary file that holds the system prompt, which
  replaces Gemini CLI's own (Gemini CLI still adds the user's global ``GEMINI.md``,
  as it does for every run);
* the turns on standard input (``render_input``), which Gemini CLI reads only when
  piped input starts within 500 ms and only up to 8 MiB (``MAX_STDIN_BYTES``; it
  cuts the rest): a bigger input is refused here, never sent cut;
* ``--output-format json``: one object, ``{"session_id", "response", "stats"}``, or
  ``{"session_id", "error": {"type", "message", "code"}}`` on standard error with a
  non-zero exit;
* no tools: a policy file (``--policy``) that denies every tool, which Gemini CLI
  then leaves out of the request; no extensions (``-e none``) and no MCP server
  (``--allowed-mcp-server-names`` naming none that exists);
* ``--skip-trust`` (headless runs refuse an untrusted folder; this one is empty and
  this project's), ``--model``, and ``--session-id`` with a fresh id, so that the
  session Gemini CLI records for the run is removed afterwards whatever happened
  (``gemini_cli_home.remove_session``).  Its temporary files (the error reports
  Gemini CLI writes) go to a temporary folder removed afterwards (``TMPDIR``).

The tokens Gemini CLI reports (``stats.models.*.tokens``) are summed in ``usage``.
Every failure is a ``SummariserError`` of one line.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import re
import signal
import sys
import tempfile
import uuid
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from inspector.compaction.summarisers.base import EmptyAnswer, SummariserError, env_secrets, mask_secrets, scrub
from inspector.compaction.summarisers.gemini import OTHER_WAY, short
from inspector.compaction.summarisers.gemini_cli_home import remove_session
from inspector.compaction.summarisers.usage import TokenUsage

MAX_STDIN_BYTES = 8 * 1024 * 1024  # Gemini CLI's MAX_STDIN_SIZE (readStdin): the rest is cut
NO_MCP_SERVER = "session-inspector-no-server"  # allowing only this name starts none of the user's servers
NO_TOOLS_POLICY = """\
# Written by session-inspector for one headless run: the model writes a snapshot and calls no tool.
[[rule]]
toolName = "*"
decision = "deny"
priority = 999
"""
EXIT_WORDS = {
    41: "it is not signed in, or its sign-in was refused (run gemini once to sign in)",
    42: "it found no input",
    52: "its configuration could not be read",
    53: "it reached its turn limit",
    130: "it was cancelled",
}
CONVERSATION_HEAD = ("The conversation to summarise, one turn per line as JSON (\"role\": \"user\" or \"model\"; "
                     "\"parts\": its text, tool calls and tool results), oldest first:")
_UNKNOWN = re.compile(r"Unknown arguments?: ([^\n]+)")  # yargs, for a flag an older Gemini CLI lacks
_ANSI = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]")


def render_input(contents: list[dict[str, Any]]) -> str:
    """What is piped to ``gemini``: the turns, one JSON object a line between ``<conversation>`` tags,
    then the request (the last turn, when it is the user's text) as the words to answer.

    A thought's signature (an opaque token) is left out; so is an attachment's data, which a line of
    text cannot carry (a marker says how many characters were left out)."""
    request: list[str] = []
    turns = contents
    last = contents[-1] if contents else None
    if last is not None and last.get("role") == "user":
        parts = last.get("parts")
        texts = [p.get("text") for p in parts if isinstance(p, dict)] if isinstance(parts, list) else []
        if texts and all(isinstance(t, str) for t in texts):
            request = [t for t in texts if isinstance(t, str)]
            turns = contents[:-1]
    lines = [CONVERSATION_HEAD, "<conversation>"]
    lines += [json.dumps(_sendable(turn), ensure_ascii=False, separators=(",", ":")) for turn in turns]
    lines.append("</conversation>")
    return "\n".join(lines) + ("\n\n" + "\n\n".join(request) if request else "") + "\n"


def _sendable(turn: dict[str, Any]) -> dict[str, Any]:
    parts = turn.get("parts")
    if not isinstance(parts, list):
        return turn
    kept: list[Any] = []
    for part in parts:
        if isinstance(part, dict) and ("thoughtSignature" in part or "inlineData" in part):
            part = {k: v for k, v in part.items() if k != "thoughtSignature"}
            inline = part.get("inlineData")
            if isinstance(inline, dict) and isinstance(inline.get("data"), str):
                part["inlineData"] = {**{k: v for k, v in inline.items() if k != "data"},
                                      "data": f"[{len(inline['data']):,} base64 characters not sent]"}
        kept.append(part)
    return {**turn, "parts": kept}


class GeminiCliSummariser:
    """A summariser that runs the user's ``gemini`` headless, once a call."""

    name = "gemini-cli"
    metered_by = "Gemini CLI"

    def __init__(self, model: str, *, program: str, timeout: float = 120.0, run_folder: Path | None = None,
                 env: Mapping[str, str] | None = None) -> None:
        self.model: str | None = model
        self.program = program
        self.timeout = timeout
        self._run_folder = run_folder
        self._env = env
        self._usage: TokenUsage | None = None
        self.removed: list[Path] = []  # the sessions Gemini CLI recorded and this removed (for tests and reports)

    @property
    def usage(self) -> TokenUsage | None:
        return self._usage

    def env(self) -> dict[str, str]:
        return dict(os.environ if self._env is None else self._env)

    def run_folder(self) -> Path:
        """The empty folder ``gemini`` runs in: its Gemini CLI project holds no file, no ``GEMINI.md``."""
        if self._run_folder is not None:
            self._run_folder.mkdir(mode=0o700, parents=True, exist_ok=True)
            return self._run_folder
        from inspector.user_cache import HomeUnknown, cache_dir, made_cache_dir

        try:
            return made_cache_dir(cache_dir() / "gemini-cli-runs")
        except (HomeUnknown, OSError) as exc:
            raise SummariserError(f"cannot make the folder Gemini CLI runs in: {exc}", kind="error") from None

    async def summarise(self, system_prompt: str, contents: list[dict[str, Any]]) -> str:
        data = render_input(contents).encode("utf-8", "backslashreplace")  # a lone surrogate as its JSON escape
        if len(data) > MAX_STDIN_BYTES:
            raise SummariserError(
                f"the turns to summarise are {len(data) / 2**20:.1f} MiB as text, and Gemini CLI reads at most "
                f"{MAX_STDIN_BYTES // 2**20} MiB from standard input (it would cut the rest), so they are not sent; "
                "summarise fewer turns (a later --split), or use --provider gemini with an API key",
                kind="too_big")
        env = self.env()
        session_id = str(uuid.uuid4())
        with tempfile.TemporaryDirectory(prefix="session-inspector-gemini-cli-") as scratch:
            folder = Path(scratch)
            system = folder / "system.md"
            system.write_text(system_prompt, encoding="utf-8")
            policy = folder / "no-tools.toml"
            policy.write_text(NO_TOOLS_POLICY, encoding="utf-8")
            env.update(GEMINI_SYSTEM_MD=str(system), TMPDIR=str(folder), TEMP=str(folder), TMP=str(folder))
            # Gemini CLI starts a second node process of itself to give it a heap of half the machine's memory;
            # one headless answer to at most 8 MiB of text needs no more than node's own, and starts in about
            # half the time without it (1.6 -> 0.9 s of CPU per run here).  A user's own setting stands.
            env.setdefault("GEMINI_CLI_NO_RELAUNCH", "true")
            argv = [self.program, "--output-format", "json", "--model", str(self.model), "--session-id", session_id,
                    "--skip-trust", "--policy", str(policy), "--extensions", "none",
                    "--allowed-mcp-server-names", NO_MCP_SERVER]
            try:
                code, out, err = await self._run(argv, data, env)
            finally:
                self.removed += remove_session(env, session_id)
        text, usage, answered_id = parse_answer(code, out, err)
        if answered_id and answered_id != session_id:  # it recorded the run under another id: that one goes too
            self.removed += remove_session(env, answered_id)
        if usage is not None:
            self._usage = usage if self._usage is None else self._usage + usage
        return mask_secrets(text, env_secrets())

    async def _run(self, argv: list[str], data: bytes, env: dict[str, str]) -> tuple[int, bytes, bytes]:
        try:
            process = await asyncio.create_subprocess_exec(
                *argv, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE, cwd=self.run_folder(), env=env,
                start_new_session=sys.platform != "win32",  # its own group: a timeout stops its relaunched child too
            )
        except OSError as exc:
            raise SummariserError(f"cannot run Gemini CLI ({self.program}): {exc.strerror or exc}", kind="error") \
                from None
        try:
            async with asyncio.timeout(self.timeout):
                out, err = await process.communicate(data)
        except TimeoutError:
            await _stop(process)
            raise SummariserError(f"Gemini CLI did not answer within {self.timeout:g} s; try again later, or allow "
                                  "it more time (compact --timeout SECONDS)", kind="timeout") from None
        except BaseException:  # cancelled: the run stops with the task
            await _stop(process)
            raise
        return process.returncode if process.returncode is not None else -1, out, err


async def _stop(process: asyncio.subprocess.Process) -> None:
    """End the run and everything it started, and wait for it."""
    if process.returncode is None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            if sys.platform != "win32":
                os.killpg(process.pid, signal.SIGKILL)
            else:
                process.kill()
    with contextlib.suppress(ProcessLookupError):
        await process.wait()


def parse_answer(code: int, out: bytes, err: bytes) -> tuple[str, TokenUsage | None, str | None]:
    """The response text, the tokens reported and the session id from a run's exit code and output;
    ``SummariserError`` (one line) for an error object, a failed run or output that is not its answer."""
    secrets = env_secrets()
    answer = _json_object(out)
    if answer is None and code != 0:
        answer = _json_object(err, last=True)
    session_id = answer.get("session_id") if answer is not None else None
    session_id = session_id if isinstance(session_id, str) else None
    error = answer.get("error") if answer is not None else None
    if error is not None:
        raise SummariserError(scrub(f"Gemini CLI answered with an error{_error_words(error, code)}; {OTHER_WAY}",
                                    secrets), kind=_error_kind(error, code))
    unknown = _UNKNOWN.search(err.decode("utf-8", "replace")) if code != 0 else None
    if unknown is not None:
        raise SummariserError(scrub(f"this Gemini CLI does not know {short(unknown.group(1))}: --provider gemini-cli "
                                    "needs Gemini CLI 0.61 or later (gemini --version; npm install -g "
                                    "@google/gemini-cli)", secrets), kind="error")
    if code != 0:
        why = EXIT_WORDS.get(code, "")
        said = _last_line(err) or _last_line(out) or "no output"
        raise SummariserError(scrub(f"Gemini CLI stopped with exit code {code}{': ' + why if why else ''} ({said}); "
                                    f"{OTHER_WAY}", secrets), kind="auth" if code == 41 else "error")
    if answer is None:
        raise SummariserError(scrub(f"Gemini CLI printed no JSON answer ({_last_line(out) or 'nothing'}); check that "
                                    f"it is Gemini CLI 0.61 or later, or {OTHER_WAY}", secrets), kind="bad_response")
    response = answer.get("response")
    if response is not None and not isinstance(response, str):
        raise SummariserError("Gemini CLI's answer has a \"response\" that is not text", kind="bad_response")
    usage = _usage(answer.get("stats"))
    if not (response or "").strip():
        raise EmptyAnswer(f"Gemini CLI answered with no text; try again, or {OTHER_WAY}")
    return response or "", usage, session_id


def _json_object(data: bytes, *, last: bool = False) -> dict[str, Any] | None:
    """The JSON object the output is (or, ``last``, the last one in it that starts a line)."""
    text = data.decode("utf-8", "replace").strip()
    if not text:
        return None
    try:
        found = json.loads(text)
        return found if isinstance(found, dict) else None
    except ValueError:
        pass
    starts = [m.start() for m in re.finditer(r"(?m)^\{", text)]
    for start in reversed(starts) if last else starts:
        try:
            found, _ = json.JSONDecoder().raw_decode(text, start)
        except ValueError:
            continue
        if isinstance(found, dict) and ("session_id" in found or "response" in found or "error" in found):
            return found
    return None


def _error_words(error: object, code: int) -> str:
    if not isinstance(error, dict):
        return f" (exit code {code})"
    kind = error.get("type")
    message = error.get("message")
    first = str(message).strip().split("\n", 1)[0] if message is not None else ""
    words = short(_ANSI.sub("", first)) or "no message"
    return f" ({kind}{', exit code ' + str(code) if code else ''}): {words}" if isinstance(kind, str) and kind \
        else f": {words}"


def _error_kind(error: object, code: int) -> str:
    words = json.dumps(error).lower() if isinstance(error, dict) else ""
    if code == 41 or "auth" in words:
        return "auth"
    if "429" in words or "quota" in words or "resource_exhausted" in words:
        return "rate_limit"
    return "error"


def _last_line(data: bytes) -> str:
    lines = [line.strip() for line in _ANSI.sub("", data.decode("utf-8", "replace")).splitlines() if line.strip()]
    return short(lines[-1]) if lines else ""


def _usage(stats: object) -> TokenUsage | None:
    """The tokens of one run's ``stats.models.*.tokens``, summed over the models it used (None when it
    reports none)."""
    models = stats.get("models") if isinstance(stats, dict) else None
    if not isinstance(models, dict):
        return None
    total = TokenUsage(calls=1)
    found = False
    for figures in models.values():
        tokens = figures.get("tokens") if isinstance(figures, dict) else None
        if not isinstance(tokens, dict):
            continue
        found = True
        total += TokenUsage(0, _count(tokens.get("prompt")), _count(tokens.get("candidates")),
                            _count(tokens.get("thoughts")), _count(tokens.get("cached")), _count(tokens.get("total")))
    return total if found else None


def _count(value: object) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else 0


__all__ = ["MAX_STDIN_BYTES", "GeminiCliSummariser", "parse_answer", "render_input"]
