"""The history's words as the offline snapshot writes them, and what a prompt says.

* one line of snapshot text from any history text (``neutral``, ``clean``),
  quoted (``quote``, ``lead``) or as a Markdown code span (``code``);
* the sentences of a prompt that read as the user's rules, and the text they
  handed over rather than said (``rule_sentences``);
* the words with which a person takes back or changes what they asked
  (``TAKE_BACK``, ``GIVE_UP``, ``said_again``);
* the sentences in which the agent says how it reads what the user asked
  (``reading_sentences``: "I take 'never push' to mean ...");
* a shell command's identifying line and a commit's message
  (``command_line``, ``commit_message``).
"""

from __future__ import annotations

import posixpath
import re
import shlex

from inspector.compaction import snapshot as snap
from inspector.compaction.prompts import SECTIONS

COMMAND_CHARS = 200
QUOTE_CHARS = 240
# The snapshot's own tags, with attributes or self-closed too, and a comment's opening (which would
# hide every line up to a "-->" from whoever reads the snapshot's sections).
_TAGS = re.compile(r"<\s*/?\s*(?:state_snapshot|scratchpad|" + "|".join(SECTIONS) + r")(?:\s[^<>]*)?/?\s*>|<!--",
                   re.I)
_SENTENCES = re.compile(r"(?<=[.!?])\s+|(?<=[。！？])|\n+|;\s+")
_RULE = re.compile(
    r"\b(must|mustn['’]t|must not|never|always|don['’]t|do not|only|avoid|make sure|ensure|keep(?!\s+(?:going|on|at it|"
    r"it up|working|trying)\b)|prefer|without|"
    r"should|shouldn['’]t|need to|needs to|has to|have to|at most|at least|required|no more than|"
    r"muss|nie|niemals|immer|nur|keine|jamais|toujours|ne pas|doit|uniquement|nunca|siempre|debe|solo|"
    r"mai|sempre|deve|somente|никогда|всегда|нельзя|должен|должна|должны|обязательно|только|запрещено|"
    r"nooit|altijd|moet|moeten|alleen|nigdy|zawsze|musisz|tylko)\b|^no\s|"
    r"必须|不要|不能|只能|务必|必ず|しないで|してはいけない|禁止|반드시|절대|지 ?마|금지",
    re.I,
)
# A text can hold a rule only if it has one of the words ``_RULE`` starts with (or its CJK forms).
_RULE_WORD_TEXT = """must mustn never always don do only avoid make ensure keep prefer without should shouldn
    need needs has have at required no muss nie niemals immer nur keine jamais toujours ne doit uniquement nunca
    siempre debe solo mai sempre deve somente никогда всегда нельзя должен должна должны обязательно только
    запрещено nooit altijd moet moeten alleen nigdy zawsze musisz tylko"""
_RULE_WORDS = frozenset(_RULE_WORD_TEXT.split())
_RULE_CJK = re.compile("必须|不要|不能|只能|务必|必ず|しないで|してはいけない|禁止|반드시|절대|지 ?마|금지")
_WORD = re.compile(r"\w+")
_SENTENCE_END = re.compile(r"(?<=[.!?。！？])\s+")
_BREAKS = re.compile(r"\r\n?|\n")
_TICK_RUNS = re.compile("`+")
_NOT_PROSE = re.compile(r"^\s*(\*\*\s|[│|┃>#$]|\[\d|\d{4}-\d\d-\d\d|at\s+\S+\(|"
                        # a line a program printed: an exception, a log level, a compiler's or npm's error
                        r"[\w.]*(?:Error|Exception)\b:|(?:ERROR|WARN|WARNING|FATAL|CRITICAL|INFO|DEBUG)\b[:\]]|"
                        r"(?:error|warning)(?:\[\w+\])?:|npm (?:ERR|WARN)!|E {2,})")
_STOP_TEXT = """a an the and or but if then of to in on at by for with from into as is are was were be been it
    its this that these those there here i me my we our you your they them their not no do does did have has had
    can could will would should may might must never always please also just than more most any all each every
    some such very so too use using when where which who what why how about after before again one two focus
    keep make sure only on"""
_STOP = frozenset(_STOP_TEXT.split())
# Words with which a person takes back or changes what they asked before.
TAKE_BACK = re.compile(r"\b(actually|scratch that|never ?mind|forget|ignore|no longer|instead|don['’]?t|do not|"
                        r"stop|cancel|revert|undo|you can|you may|go ahead|feel free|(?:is|are|it['’]?s) (?:fine|ok|"
                        r"okay|allowed)|on second thought|"
                        r"vergiss|stattdessen|doch nicht|du darfst|en fait|oublie|plutôt|finalement|tu peux|olvida|"
                        r"en realidad|en lugar de|en vez de|puedes|dimentica|invece|in realtà|puoi|esquece|"
                        r"na verdade|em vez de|você pode)\b|算了|不用了|改成|可以|やっぱり|代わりに|してもいい", re.I)


# Words with which a person gives up what they asked for (a goal): not "don't", "stop", "you can",
# which more often narrow or go on with it.
GIVE_UP = re.compile(r"\b(actually|scratch that|never ?mind|forget|ignore|no longer|instead|cancel|revert|undo|"
                      r"on second thought|vergiss|stattdessen|en fait|oublie|plutôt|olvida|en lugar de|en vez de|"
                      r"dimentica|invece|esquece|em vez de)\b|算了|不用了|やっぱり|代わりに", re.I)


# The words with which the agent says how it reads the user's words: "I read / interpret / take /
# understand / treat ... as / to mean", "my reading of", "interpreting this as".  Not "take a look",
# "read the file", "as well", "as soon as": no reading of anything.
_READ_VERB = (r"(?:read(?:ing)?|interpret(?:ing)?|understand(?:ing)?|assum(?:e|ing)|treat(?:ing)?|construe|"
              r"tak(?:e|ing)(?!\s+(?:a|another|the|some)\s+(?:look|step|moment|closer|peek)\b))")
_AS = (r"\b(?:as(?!\s+(?:well|soon|far|long|much|needed|possible|follows|part|usual|expected)\b)|to mean|to be|"
       r"means?|meant|refers? to|appl(?:y|ies)(?: only)? to)\b")
_READING = re.compile(
    r"\b(?:I(?:['’](?:ll|m|d|ve)| will| am| would| have)?|we(?:['’](?:ll|re)| will| are)?)\s+" + _READ_VERB
    + r"\b[^.!?\n]{1,200}?" + _AS
    + r"|\bmy (?:reading|interpretation|understanding) (?:of|is)\b"
    + r"|^(?:interpreting|reading|taking|treating) (?:this|that|it|these|your|the)\b[^.!?\n]{0,200}?" + _AS,
    re.I)
_READ_VERBS = ("read", "interpret", "underst", "assum", "treat", "constru", "tak")
_SUBJECT_TEXT = "i we my i'll i'm i'd i've we'll we're we've i’ll i’m i’d i’ve we’ll we’re we’ve"
_SUBJECTS = frozenset(_SUBJECT_TEXT.split())
_AUXILIARIES = frozenset({"will", "am", "would", "have", "are"})
_AS_WORDS = (" as", "mean", " to be", "refer", "appl")  # what ``_AS`` needs after the verb
READING_CHARS = 300


def _may_read(low: str) -> bool:
    """Whether a lower-cased text may hold a reading (``_READING``): one of its verbs after "I" or "we"
    (an auxiliary between) or at a sentence's start, with one of the words ``_AS`` needs after it; or "my
    reading / interpretation / understanding".  Plain
    string search, cheap beside the sentence-by-sentence test it spares nearly every message."""
    if "my reading" in low or "my interpretation" in low or "my understanding" in low:
        return True
    for verb in _READ_VERBS:
        at = low.find(verb)
        while at != -1:
            if not (at and low[at - 1].isalpha()):
                before = low[max(0, at - 24):at].split()
                if ((not before or before[-1] in _SUBJECTS or before[-1][-1] in ".!?:"
                     or (len(before) > 1 and before[-1] in _AUXILIARIES and before[-2] in _SUBJECTS))
                        and any(word in low[at:at + 240] for word in _AS_WORDS)):
                    return True
            at = low.find(verb, at + 1)
    return False


def reading_sentences(text: str) -> list[str]:
    """The sentences of an agent's message in which it says how it reads something ("I take 'never
    push' to mean pushing to main only", "My reading of the rule is ..."), whole (at most
    ``READING_CHARS``)."""
    if not _may_read(text[:20_000].lower()):
        return []
    out = []
    for piece in _SENTENCES.split(text[:20_000]):
        sentence = " ".join(piece.strip(" *-#>").split())
        if 12 <= len(sentence) <= READING_CHARS and _READING.search(sentence):
            out.append(sentence)
    return out


_UNSPACED = re.compile("[\u3040-\u9fff]")  # kana and CJK ideographs


def substantial(text: str) -> bool:
    """Whether a prompt says enough to be a goal: four words, or eight characters of a script written
    without spaces (Chinese, Japanese: "ログインのバグを直して" is one "word")."""
    return len(text.split()) >= 4 or len(_UNSPACED.findall(text)) >= 8


def said_again(text: str, sentence: str, words: set[str]) -> str | None:
    """The last sentence after ``sentence`` in ``text`` that takes back or changes something it names
    ("You must use Redis. Actually, forget Redis: ..."), else None."""
    at = text.find(sentence)
    if at < 0 or not words:
        return None
    rest = text[at + len(sentence):]
    if not TAKE_BACK.search(rest):
        return None
    found = [piece.strip() for piece in _SENTENCES.split(rest)
             if piece.strip() and TAKE_BACK.search(piece) and words & content_words(piece)]
    return found[-1] if found else None


def content_words(text: str) -> set[str]:
    return {w for w in (m.lower() for m in _WORD.findall(text[:2000])) if len(w) >= 4 and w not in _STOP}

def neutral(text: str) -> str:
    """Text made one line of the snapshot: the snapshot's own tags neutralised and each line break
    ("\n", "\r", which end a line where the snapshot is read: Gemini CLI splits at "\n") one space, so
    that no text from the history can end a line or a section and begin one of its own.  Anything
    else (a path's other odd characters) is kept as it was."""
    text = _TAGS.sub(lambda m: m.group().replace("<", "(").replace(">", ")"), text)
    return _BREAKS.sub(" ", text).strip()


def clean(text: str, limit: int = QUOTE_CHARS) -> str:
    """One line of history text, safe inside the snapshot (``neutral``), its spacing made plain, cut at
    ``limit``."""
    text = " ".join(neutral(text).split())
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def code(text: str) -> str:
    """``text`` as a Markdown code span: fenced by one backtick more than its longest run of them, and
    spaced off them, so that a backtick inside it (a command's `date`, a commit message's `parse()`)
    cannot end it early."""
    if "`" not in text:
        return f"`{text}`"
    fence = "`" * (max(len(run) for run in _TICK_RUNS.findall(text)) + 1)
    return f"{fence} {text} {fence}"


def quote(text: str, limit: int = QUOTE_CHARS) -> str:
    return '"' + clean(text, limit).replace('"', "'") + '"'


def lead(text: str, limit: int = QUOTE_CHARS) -> str:
    """A prompt quoted: whole when it fits ``limit``, else its first sentence (or two short ones) and
    its last sentence, the middle marked left out.  A person who changes their mind within a prompt
    mostly says so at its end ("... On second thought, only staging"), in any language: a first
    sentence alone would then say the opposite of what was asked."""
    flat = clean(text, len(text) + 1)
    if len(flat) <= limit:
        return quote(flat, limit)
    pieces = _SENTENCE_END.split(flat)
    count = 1 if len(pieces[0]) >= 40 or len(pieces) <= 2 else 2
    head = " ".join(pieces[:count])
    if count >= len(pieces):
        return quote(head, limit)
    room = limit - 3  # the middle's " … "
    head = head[: room // 2].rstrip()
    tail = pieces[-1]
    left = room - len(head)
    if len(tail) > left:
        tail = tail[: left - 1].rstrip() + "…"
    return quote(f"{head} … {tail}", limit)


def rule_sentences(text: str) -> list[tuple[str, str | None]]:
    """The sentences of a prompt that read as rules, each with the words that introduce the text it
    sits in when that is text the user handed over rather than said (what follows a line ending in a
    colon, or a quotation opened after a colon: an e-mail to translate, a page to summarise), else
    None."""
    out: list[tuple[str, str | None]] = []
    if _RULE_WORDS.isdisjoint(_WORD.findall(text.lower())) and not _RULE_CJK.search(text):
        return out  # none of the words a rule needs: skip the sentence-by-sentence test
    for block, intro in _blocks(text):
        prose = "\n".join(line for line in block.split("\n") if not _NOT_PROSE.match(line))  # whole lines
        for piece in _SENTENCES.split(prose):
            sentence = piece.strip()
            if not 8 <= len(sentence) <= 300 or sentence.endswith(("?", "？", ":")) or _NOT_PROSE.match(sentence):
                continue
            if _RULE.search(sentence) and sum(ch.isalpha() for ch in sentence) * 2 >= len(sentence):
                out.append((sentence, intro))
    return out


_HANDED_OVER = re.compile(r":\s*([\"'“‘«„])")
_CLOSING = {'"': '"', "'": "'", "“": "”", "‘": "’", "«": "»", "„": "“"}
# A line that is an item of a list the person wrote: a bullet, or a number or letter and a stop.
_LIST_ITEM = re.compile(r"\s*(?:[-*•·◦‣▪–—]|\d{1,3}[.)]|[A-Za-z][.)](?=\s))\s*\S")
_FENCE = "```"


def _a_list(lines: list[str]) -> bool:
    """Whether the first paragraph of ``lines`` is a list a person wrote: each line an item, or an
    item's indented continuation (a pasted diff's "+" lines, a log's lines, are not)."""
    body = [line for line in lines[next(k for k, line in enumerate(lines) if line.strip()):]]
    paragraph = body[: next((k for k, line in enumerate(body) if not line.strip()), len(body))]
    return bool(_LIST_ITEM.match(paragraph[0])) and all(
        _LIST_ITEM.match(line) or line[:1] in (" ", "\t") for line in paragraph)


def _blocks(text: str) -> list[tuple[str, str | None]]:
    """``text`` cut into the user's own words (intro None) and the text they handed over, with the
    sentence that introduced it: a fenced block (code, a log), what follows a line ending in a
    colon (an e-mail to translate, a page to summarise), a quotation opened after a colon.  A list
    under a line ending in a colon ("Constraints:", "The app should let the user:") is the person's
    own, and so is what they write after it."""
    lines = text.split("\n")
    for n, line in enumerate(lines):
        stripped = line.strip()
        if stripped.startswith(_FENCE):
            end = next((k for k in range(n + 1, len(lines)) if lines[k].strip().startswith(_FENCE)), None)
            if end is not None:
                before = "\n".join(lines[:n])
                intro = _SENTENCES.split(before.strip())[-1].strip() if before.strip() else stripped
                return [*_blocks(before), ("\n".join(lines[n + 1:end]), intro),
                        *_blocks("\n".join(lines[end + 1:]))]
        if (n + 1 < len(lines) and stripped.endswith((":", "："))
                and any(rest.strip() for rest in lines[n + 1:]) and not _a_list(lines[n + 1:])):
            intro = _SENTENCES.split(stripped)[-1].strip() or stripped
            return [*_blocks("\n".join(lines[:n + 1])), ("\n".join(lines[n + 1:]), intro)]
    found = _HANDED_OVER.search(text)
    if found is not None:
        end = text.find(_CLOSING[found.group(1)], found.end())
        if end != -1:
            said = text[:found.start() + 1]
            intro = _SENTENCES.split(said.strip())[-1].strip()
            return [(said, None), (text[found.end():end], intro), *_blocks(text[end + 1:])]
    return [(text, None)]


def focus_words(focus: str | None) -> set[str]:
    if not focus:
        return set()
    return {w.lower() for w in re.findall(r"[\w./-]{3,}", focus) if w.lower() not in _STOP}


def command_line(command: str) -> str:
    """What identifies a command: its first line's first 200 characters, a commit's message kept whole."""
    lines = snap.text_lines(command.strip())
    head = clean(lines[0], COMMAND_CHARS)
    extra = len(lines) - 1
    if extra:
        head += f" (+{extra:,} more line{'s' if extra != 1 else ''})"
    return head


_PUNCTUATION = "();<>|&\n"  # the characters of the shell's operators (and a line break)
_GIT_VALUED = frozenset({"-C", "-c", "--git-dir", "--work-tree", "--namespace"})  # git's options that take a value


def commit_message(command: str) -> str | None:
    """The ``-m`` message(s) of the ``git commit`` commands in a shell command line, if any (another
    git command's ``-m``, or another program's, is no commit message)."""
    if "commit" not in command or "git" not in command:
        return None
    try:
        lexer = shlex.shlex(command, posix=True, punctuation_chars=_PUNCTUATION)  # a line break ends a command too
        lexer.whitespace, lexer.whitespace_split = " \t\r", True
        words = list(lexer)
    except ValueError:
        return None
    messages: list[str] = []
    start = 0
    for end in [*(i for i, w in enumerate(words) if not w.strip(_PUNCTUATION)), len(words)]:  # operators
        messages += _commit_messages(words[start:end])
        start = end + 1
    return " / ".join(m.strip() for m in messages if m.strip()) or None


def _commit_messages(words: list[str]) -> list[str]:
    """The messages of one simple command, when it is ``git [options] commit ...``."""
    if not words or posixpath.basename(words[0]) != "git":
        return []
    i = 1
    while i < len(words) and words[i].startswith("-"):
        i += 2 if words[i] in _GIT_VALUED else 1
    if i >= len(words) or words[i] != "commit":
        return []
    found = []
    args = words[i + 1:]
    if "--dry-run" in args:
        return []  # it says what a commit would hold, and commits nothing
    for k, word in enumerate(args):
        if word == "--":
            break
        if word in ("-m", "--message") and k + 1 < len(args):
            found.append(args[k + 1])
        elif word.startswith("--message="):
            found.append(word.split("=", 1)[1])
        elif (word.startswith("-") and not word.startswith("--") and word.endswith("m") and len(word) <= 4
              and k + 1 < len(args)):
            found.append(args[k + 1])  # -am, -sm ...
        elif word.startswith("-m") and len(word) > 2 and not word.startswith("--"):
            found.append(word[2:])  # -m"message"
    return found
