"""The one rule that keeps an API key out of everything shown or written: ``mask_secrets``.

A server (or a proxy) may echo the key back in an error or in the text it
writes, and not always as it was sent.  What counts as the key, in any
letter case where case carries no meaning:

* any part of it 8 characters long or more (a prefix, a suffix, the key
  minus its last character, "partial sk-TEST-SECRET-12");
* the same read backwards;
* its bytes in hex (16 hex digits, 8 bytes, or more) and in base64 at any
  alignment inside a longer encoded text (12 characters or more, standard
  and URL-safe alphabets; base64 keeps its case);
* any of those with whitespace (a newline, a tab) or invisible characters
  (zero-width spaces and joiners, soft hyphens, bidi marks, variation
  selectors) between its characters, or with characters percent-encoded
  (``%2D`` for ``-``).

The text is read once into a *view* with the separators taken out and the
percent-encodings decoded, each view character knowing where it came from;
each form's 8-character (16, 12) pieces are looked for in the view with
``str.find``, and every stretch of the text a match came from, separators
included, becomes ``***``.  A secret shorter than 8 characters is masked
whole only (plain, any case).  Every path that shows or writes what a
summariser returns (stdout, stderr, the app, the session, the journal, an
export) gets text that went through here.
"""

from __future__ import annotations

import base64
import bisect
import os
import re
from collections.abc import Iterable

KEY_VARIABLES = ("GEMINI_API_KEY", "GOOGLE_API_KEY")
MASK = "***"
PIECE = 8  # the shortest part of a secret that is masked
HEX_PIECE = 2 * PIECE
BASE64_PIECE = 12

# Characters a server may put between a key's characters without changing what a reader copies:
# whitespace, and the invisible format characters (soft hyphen, zero-width space / joiners, bidi
# marks and isolates, word joiner and invisible operators, BOM), variation selectors, the
# combining grapheme joiner, Mongolian and Hangul fillers.
_SEPARATORS = ("\\s\u00ad\u034f\u061c\u115f\u1160\u17b4\u17b5\u180b-\u180f\u200b-\u200f\u202a-\u202e"
               "\u2060-\u206f\u3164\ufe00-\ufe0f\ufeff\uffa0")
_OUT_OF_VIEW = re.compile(f"(?P<gap>[{_SEPARATORS}]+)|%(?P<byte>[0-7][0-9A-Fa-f])")
_GAPS = re.compile(f"[{_SEPARATORS}]+")
_PERCENT = re.compile("%([0-7][0-9A-Fa-f])")
_ASCII_LOWER = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")


def env_secrets() -> list[str]:
    """The API keys set in the environment (their values: never shown, only masked)."""
    return [v for v in (os.environ.get(k) for k in KEY_VARIABLES) if v]


def secret_forms(secret: str) -> list[str]:
    """The secret as it may appear in text: plain, and its base64 (standard and URL-safe) at any alignment.

    A secret inside a longer base64-encoded text shows as one of three
    fragments, depending on where it starts within a 3-byte group; only the
    characters that depend on the secret alone are kept.
    """
    forms = [secret]
    raw = secret.encode()
    for pad in range(3):
        encoded = base64.b64encode(b"\0" * pad + raw).decode().rstrip("=")
        start, stop = -(-8 * pad // 6), (8 * (pad + len(raw))) // 6
        fragment = encoded[start:stop]
        if len(fragment) >= 8:
            forms.append(fragment)
            forms.append(fragment.replace("+", "-").replace("/", "_"))
    return sorted(set(forms), key=len, reverse=True)


def _pieces(form: str, size: int) -> list[str]:
    return [form[i:i + size] for i in range(len(form) - size + 1)] if len(form) >= size else []


def _needles(secret: str) -> tuple[set[str], set[str]]:
    """The pieces to look for: (in the lower-cased view, in the view as it is)."""
    folded = secret.translate(_ASCII_LOWER)
    anycase = set(_pieces(folded, PIECE)) | set(_pieces(folded[::-1], PIECE))
    anycase |= set(_pieces(secret.encode().hex(), HEX_PIECE)[::2])  # whole bytes only
    exact: set[str] = set()
    for form in secret_forms(secret):
        if form != secret:  # the base64 fragments
            exact |= set(_pieces(form, BASE64_PIECE))
    return anycase, exact


class _View:
    """``text`` with separators left out and ``%XX`` decoded; ``span`` maps a stretch of it back."""

    def __init__(self, text: str) -> None:
        parts: list[str] = []
        self.starts: list[int] = []  # where each segment starts in the view
        self.origins: list[int] = []  # ... and in the text
        self.widths: list[int] = []  # characters of text per view character: 1, or 3 for %XX
        at = size = 0
        for match in _OUT_OF_VIEW.finditer(text):
            if match.start() > at:
                self._segment(size, at, 1)
                parts.append(text[at:match.start()])
                size += match.start() - at
            byte = match.group("byte")
            if byte is not None and not chr(int(byte, 16)).isspace():  # (an encoded space is a gap too)
                self._segment(size, match.start(), 3)
                parts.append(chr(int(byte, 16)))
                size += 1
            at = match.end()
        if at < len(text):
            self._segment(size, at, 1)
            parts.append(text[at:])
        self.text = "".join(parts)

    def _segment(self, start: int, origin: int, width: int) -> None:
        self.starts.append(start)
        self.origins.append(origin)
        self.widths.append(width)

    def _origin(self, index: int) -> tuple[int, int]:
        k = bisect.bisect_right(self.starts, index) - 1
        begin = self.origins[k] + (index - self.starts[k]) * self.widths[k]
        return begin, begin + self.widths[k]

    def span(self, start: int, stop: int) -> tuple[int, int]:
        """Where view characters ``[start, stop)`` came from in the text (what lies between included)."""
        return self._origin(start)[0], self._origin(stop - 1)[1]


def _decoded(match: re.Match[str]) -> str:
    return chr(int(match.group(1), 16))


def _plain_view(text: str) -> str:
    """The characters of ``_View(text).text``, made at C speed (no map back to ``text``)."""
    if "%" in text:
        text = _PERCENT.sub(_decoded, text)
    return _GAPS.sub("", text)


def _hits(view: str, secrets: list[str]) -> list[tuple[int, int]]:
    """Where the secrets' pieces are in ``view`` (a view's text): (start, stop) in it."""
    folded = view.translate(_ASCII_LOWER)
    hits: list[tuple[int, int]] = []
    for secret in secrets:
        anycase, exact = _needles(secret)
        for size in sorted({len(n) for n in anycase}):
            hits += _found(folded, {n for n in anycase if len(n) == size}, size)
        hits += _found(view, exact, BASE64_PIECE)
    return hits


def _found(view: str, needles: set[str], size: int) -> list[tuple[int, int]]:
    spans = []
    for needle in needles:
        at = view.find(needle)
        while at != -1:
            spans.append((at, at + size))
            at = view.find(needle, at + 1)
    return spans


def mask_secrets(text: str, secrets: Iterable[str | None]) -> str:
    """``text`` with every secret masked in every form the module docstring lists."""
    wanted = [s for s in secrets if s and len(s) >= 4]
    if not wanted or not text:
        return text
    for short in (s for s in wanted if len(s) < PIECE):
        if short.casefold() in text.casefold():
            text = re.sub(re.escape(short), MASK, text, flags=re.IGNORECASE)
    long = [s for s in wanted if len(s) >= PIECE]
    if not long:
        return text
    if not _hits(_plain_view(text), long):  # the usual answer, found without mapping the view back
        return text
    view = _View(text)
    hits = _hits(view.text, long)
    stretches: list[list[int]] = []
    for start, stop in sorted(view.span(a, b) for a, b in hits):
        if stretches and start <= stretches[-1][1]:
            stretches[-1][1] = max(stretches[-1][1], stop)
        else:
            stretches.append([start, stop])
    out: list[str] = []
    at = 0
    for start, stop in stretches:
        out += [text[at:start], MASK]
        at = stop
    out.append(text[at:])
    return "".join(out)


def scrub(text: str, secrets: Iterable[str | None]) -> str:
    """``text`` with every secret (and any ``key=...`` query value) masked, on one line."""
    text = mask_secrets(text, secrets)
    text = re.sub(r"(?i)([?&](?:key|api_key|access_token)=)[^&\s'\"]+", r"\1***", text)
    text = re.sub(r"(?i)(x-goog-api-key['\"]?\s*[:=]\s*['\"]?)[^'\"\s,}]+", r"\1***", text)
    return " ".join(text.split())
