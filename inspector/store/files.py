"""Writing files so that nothing is ever half-written or lost.

Two primitives:

* ``atomic_write``: a temp file in the same folder, written, fsynced, renamed
  over the target with ``os.replace``, then the folder fsynced.  A reader (or
  a crash) sees either the old file or the new one, never a mix.
* ``append_bytes``: one ``write`` on an ``O_APPEND`` descriptor, then fsync,
  which is how Gemini CLI itself appends to a JSONL recording, so two writers
  appending at once interleave whole lines and lose none.

Both take a ``hook(step)`` called at each step of the write.  Tests make it
raise (a crash, a full disk) to prove the guarantees hold at every step; it
can also return a byte count to simulate a short write.

Where the store keeps its own files, and why Gemini CLI never mistakes them
for sessions:  everything lives in ``<session folder>/.session-inspector/
<session file name>/``.  Gemini CLI 0.61 finds sessions with a plain,
non-recursive ``readdir`` of ``chats/``: ``sessionSummaryUtils`` and
``memoryService`` keep names starting with ``session-`` and ending in
``.json``/``.jsonl`` that are regular files, ``Storage.listProjectChatFiles``
keeps names ending in ``.json``/``.jsonl``, sub-agent folders are
``chats/<parent-id>/``; ``/chat list`` looks for ``checkpoint-*.json`` in the
project temp folder.  ``.session-inspector`` is a folder whose name matches
none of these, and nothing looks inside it.  Temp files are
``.<name>.si-tmp-<pid>-<random>``: hidden, and never ending in ``.json``.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
import pwd
import secrets
import stat
import time
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path

from inspector.format import describe_os_error
from inspector.store.errors import StoreError

STORE_DIR = ".session-inspector"
TEMP_MARK = ".si-tmp-"

# hook(step) -> None, or a number of bytes to let the next write call take.
WriteHook = Callable[[str], int | None]

# sha256 of the states this process itself wrote, per file (the watcher
# uses it to tell its own writes from Gemini CLI's).
_OWN_WRITES: dict[str, list[tuple[str, int]]] = {}  # path -> (SHA-256, size) of the states this process wrote


JOURNAL_NAME = "journal.jsonl"  # in each session's store folder


def store_dir(session_path: Path) -> Path:
    """The hidden folder holding one session's journal and backups, beside the file itself (a
    symlink followed: an apply writes the file it points to, and its undo is found by either name)."""
    real = Path(os.path.realpath(session_path))
    return real.parent / STORE_DIR / real.name


def never_applied(session_path: Path) -> bool:
    """Nothing is where the session's store folder goes: no journal, nothing to undo (known without
    reading one, or loading the journal's modules)."""
    return not os.path.lexists(store_dir(session_path))


def linked_part(top: Path, path: Path) -> Path | None:
    """The first of ``top``'s descendants on the way down to ``path`` (``path`` included) that is a
    symbolic link, or None (parts that do not exist yet are none).  ``top`` itself is not looked at."""
    part = top
    for name in path.relative_to(top).parts:
        part = part / name
        try:
            if stat.S_ISLNK(os.lstat(part).st_mode):
                return part
        except FileNotFoundError:
            return None
        except OSError:
            continue  # (closed to this user: what is done with it next fails in its own words)
    return None


def refuse_links(session_path: Path, top: Path, paths: Iterable[Path], what: str, left: str) -> None:
    """Raise StoreError when a symbolic link lies below ``top`` on the way to any of ``paths``: what
    this project writes (``what``) goes only into real folders, never where a link points; ``left``
    says what was left as it was."""
    for path in paths:
        link = linked_part(top, path)
        if link is not None:
            raise StoreError(session_path, f"{link} is a symbolic link: session-inspector {what} only in real "
                             f"folders, so it neither follows nor replaces one; remove it and try again. {left}",
                             "invalid")


def refuse_linked_store(session_path: Path) -> None:
    """The store is written only where it lies: a symbolic link at or inside it (its folders, the
    backups folder, the lock, the journal) is refused, not followed.  Followed, it would put copies
    of the session wherever it points, and, run as root on another user's session, hand what it
    found there to that user (``hand_over``)."""
    folder = store_dir(session_path)
    top = folder.parent.parent  # the session's own folder: a link above the store is the user's own layout
    refuse_links(session_path, top, (backups_dir(session_path), folder / "lock", folder / JOURNAL_NAME),
                 "keeps its store beside the session", "Nothing was written")


def backups_dir(session_path: Path) -> Path:
    """Where the backups of one session's applies are kept (each entry's ``backup`` names its file)."""
    return store_dir(session_path) / "backups"


def is_store_path(path: Path | str) -> bool:
    """Whether a path is one of the project's own temp or store files."""
    path = Path(path)
    return TEMP_MARK in path.name or STORE_DIR in path.parts


def note_own_write(path: Path, sha256: str, size: int) -> None:
    recent = _OWN_WRITES.setdefault(str(path.resolve()), [])
    recent.append((sha256, size))
    del recent[:-8]


def own_writes(path: Path) -> list[tuple[str, int]]:
    """(SHA-256, size) of the latest states this process wrote to ``path`` (the watcher hashes
    the file only when its size is one of these)."""
    return list(_OWN_WRITES.get(str(path.resolve()), ()))


def folder_mode(file_mode: int) -> int:
    """The mode of a folder made to hold files of ``file_mode``: the owner's in full, and to group and
    others as much as they may read those files (a private session's outputs sit in private folders)."""
    mode = 0o700
    for read, search in ((0o040, 0o010), (0o004, 0o001)):
        if file_mode & read:
            mode |= read | search
    return mode


def is_folder_or_closed(path: Path) -> bool:
    """Whether ``path`` is a folder.  One this user may not look into counts as one: what is done
    with it next fails in one line that says permission is denied (``Path.is_dir`` raises instead)."""
    try:
        return stat.S_ISDIR(os.stat(path).st_mode)
    except PermissionError:
        return True
    except OSError:
        return False


def make_folders(folder: Path, mode: int) -> list[Path]:
    """``folder`` and each missing folder above it, created with ``mode`` (less the umask); returns
    the folders it made."""
    missing: list[Path] = []
    while not is_folder_or_closed(folder) and folder != folder.parent:
        missing.append(folder)
        folder = folder.parent
    made = []
    for path in reversed(missing):
        with contextlib.suppress(FileExistsError):
            path.mkdir(mode)
            made.append(path)
    return made


def read_own_file(path: Path) -> bytes:
    """The bytes of a file the store itself writes (its journal, a backup), read without following a
    link or waiting on a pipe: anything but a regular file raises OSError saying what it is."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise OSError(errno.ELOOP, "a symbolic link, not a file session-inspector wrote") from None
        raise
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise OSError(errno.EINVAL, "not a regular file (a folder, a pipe or a device)")
        chunks = []
        while chunk := os.read(fd, 1 << 20):
            chunks.append(chunk)
        return b"".join(chunks)
    finally:
        os.close(fd)


def fsync_dir(folder: Path) -> None:
    """Flush ``folder``'s entries (a rename in it survives a power loss).  A folder this user may
    write in but not read cannot be opened for it; what was renamed there is there all the same,
    so that is no failure (saying so after a rename would tell of a write that did not happen)."""
    try:
        fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
    except PermissionError:
        return
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def write_all(fd: int, data: bytes, hook: WriteHook | None, step: str) -> int:
    """Write ``data`` (one call unless the OS or the hook makes it short)."""
    view = memoryview(data)
    done = 0
    while done < len(view):
        limit = hook(step) if hook else None
        chunk = view[done:] if limit is None else view[done : done + max(limit, 0)]
        done += os.write(fd, chunk)
    return done


def temp_name(target: Path) -> Path:
    return target.with_name(f".{target.name}{TEMP_MARK}{os.getpid()}-{secrets.token_hex(4)}")


def atomic_write(
    target: Path,
    data: bytes,
    *,
    hook: WriteHook | None = None,
    mode: int | None = None,
    unchanged: Callable[[], bool] | None = None,
    no_clobber: bool = False,
) -> None:
    """Replace (or create) ``target`` with ``data``, all or nothing.

    ``unchanged()`` is asked just before the rename; False aborts (the file
    changed under us).  ``no_clobber`` links instead of renaming, so an
    existing file is never replaced (FileExistsError).
    """
    folder = target.parent
    temp = write_temp(target, data, hook, mode=mode)
    try:
        if unchanged is not None and not unchanged():
            raise StoreError(
                target, "the file changed on disk while it was being written; it was left as it was", "changed"
            )
        if no_clobber:
            os.link(temp, target)
            os.unlink(temp)
        else:
            os.replace(temp, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temp)
        raise
    if hook:
        hook("renamed")
    fsync_dir(folder)


def write_temp(target: Path, data: bytes, hook: WriteHook | None, *, mode: int | None = None,
               owner: tuple[int, int] | None = None, temp: Path | None = None) -> Path:
    """A new temp file beside ``target`` (or at ``temp``) holding ``data``, with ``mode`` and
    ``owner`` (uid, gid) when given, fsynced and closed; removed again if any step fails.  The hook
    is told each step (``temp-created``, ``temp-partial`` half way, ``temp-written``)."""
    temp = temp or temp_name(target)
    fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600 if mode is None else mode & 0o7777)
    try:
        try:
            if hook:
                hook("temp-created")
            half = len(data) // 2
            write_all(fd, data[:half], hook, "temp-write")
            if hook:
                hook("temp-partial")
            write_all(fd, data[half:], hook, "temp-write")
            if owner is not None:
                info = os.fstat(fd)
                if (info.st_uid, info.st_gid) != owner:
                    os.fchown(fd, *owner)
            if mode is not None:
                os.fchmod(fd, stat.S_IMODE(mode))
            os.fsync(fd)
        finally:
            os.close(fd)
        if hook:
            hook("temp-written")
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temp)
        raise
    return temp


def append_bytes(target: Path, data: bytes, *, hook: WriteHook | None = None) -> int:
    """Append ``data`` to an existing file; returns the offset it landed at (see ``append_fd``)."""
    fd = os.open(target, os.O_RDWR | os.O_APPEND | os.O_CLOEXEC)
    try:
        if hook:
            hook("append-open")
        return append_fd(fd, data, hook=hook)
    finally:
        os.close(fd)


def append_fd(fd: int, data: bytes, *, hook: WriteHook | None = None) -> int:
    """Append ``data`` through an ``O_APPEND`` descriptor; returns the offset it landed at.

    On failure the file is left as it was: a short write is cut off again if
    nobody appended after it; else the fragment is ended with a newline and
    what the other writer appended is written again after it, so each of its
    lines reads whole (the fragment becomes a line every reader skips).
    """
    written = 0
    start: int | None = None
    try:
        view = memoryview(data)
        while written < len(view):
            limit = hook("append-write") if hook else None
            chunk = view[written:] if limit is None else view[written : written + max(limit, 0)]
            count = os.write(fd, chunk)
            if start is None and count:
                start = os.lseek(fd, 0, os.SEEK_CUR) - count
            written += count
        os.fsync(fd)
        if hook:
            hook("append-written")
    except BaseException:
        if written and start is not None and written < len(data):
            with contextlib.suppress(OSError):
                end = start + written
                size = os.fstat(fd).st_size
                if size == end:
                    os.ftruncate(fd, start)
                else:
                    # Another writer appended right after our fragment: its
                    # first line is now glued to it.  Write its bytes again,
                    # after a newline, so every line of theirs reads whole.
                    theirs = os.pread(fd, size - end, end)
                    os.write(fd, b"\n" + theirs + (b"" if theirs.endswith(b"\n") else b"\n"))
                os.fsync(fd)
        raise
    return start if start is not None else os.fstat(fd).st_size


def sweep(session_path: Path, folder: Path, backups_in_use: set[str], output_folders: Iterable[Path] = ()) -> list[str]:
    """Remove what a run killed midway left: temp files of dead processes (beside the session, in
    the store, and in the folders tool outputs were saved to), backups no journal entry still
    needs.  Returns one line saying what went, if anything did.

    Runs under the store's lock, so no apply or revert of this session is under way.
    """
    temps = [
        *session_path.parent.glob(f".{session_path.name}{TEMP_MARK}*"),
        *(folder / "backups").glob(f"*{TEMP_MARK}*"),
        *folder.glob(f"*{TEMP_MARK}*"),
        *(folder / SWAPPED_DIR).glob(f"*{TEMP_MARK}*"),
        *(temp for outputs in sorted(set(output_folders)) for temp in outputs.glob(f".*{TEMP_MARK}*")),
    ]
    removed: list[Path] = []
    for temp in temps:
        pid = temp.name.rsplit(TEMP_MARK, 1)[1].split("-", 1)[0]
        if pid.isdigit() and not _alive(int(pid)) and stat.S_ISREG(os.lstat(temp).st_mode):
            with contextlib.suppress(OSError):
                temp.unlink()
                removed.append(temp)
    for backup in (folder / "backups").glob("*.bak"):
        if backup.name not in backups_in_use:
            with contextlib.suppress(OSError):
                backup.unlink()
                removed.append(backup)
    if not removed:
        return []
    shown = ", ".join(str(p) for p in removed[:3]) + (f" and {len(removed) - 3:,} more" if len(removed) > 3 else "")
    return [f"removed {len(removed):,} file{'s' if len(removed) != 1 else ''} a killed or finished run left "
            f"behind: {shown}"]


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


@contextlib.contextmanager
def locked(folder: Path) -> Iterator[None]:
    """Serialise this project's own applies and reverts of one session."""
    try:
        fd = os.open(folder / "lock", os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
    except OSError as exc:
        raise StoreError(folder, f"cannot take the store's lock: {describe_os_error(exc)}; nothing was changed",
                         "io") from None
    try:
        _take(fd, folder)
        yield
    finally:
        os.close(fd)


LOCK_WAIT_SECONDS = 10.0  # an apply or revert holds the lock for a moment; one stopped (Ctrl+Z) holds it for ever


def _take(fd: int, folder: Path) -> None:
    """The lock, waited for at most ``LOCK_WAIT_SECONDS``; then a StoreError (``conflict``) says who may hold it."""
    deadline = time.monotonic() + LOCK_WAIT_SECONDS
    pause = 0.01
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return
        except BlockingIOError:
            if time.monotonic() >= deadline:
                raise StoreError(
                    folder, f"another session-inspector has been applying or reverting this session for over "
                    f"{LOCK_WAIT_SECONDS:g} s (it holds {folder / 'lock'}; a stopped one, Ctrl+Z, holds it until "
                    "it goes on or ends); nothing was changed", "conflict") from None
            time.sleep(pause)
            pause = min(pause * 2, 0.2)


def owner_of(path: Path) -> tuple[int, int] | None:
    """The session file's owner and group (uid, gid), or None when it cannot be read."""
    try:
        info = os.stat(path)
    except OSError:
        return None
    return info.st_uid, info.st_gid


def hand_over(session_path: Path, owner: tuple[int, int] | None, made: Iterable[Path] = ()) -> None:
    """Run as root on another user's session, what this run made (the session's store, and the
    ``made`` files and folders) is given to the session's owner and group, so they can read their
    saved outputs and undo an apply without root.  Only what root owns is touched; as anyone else,
    nothing is."""
    if os.geteuid() != 0 or owner is None or owner[0] == 0:
        return
    paths: set[Path] = set(made)
    store = store_dir(session_path)
    for root, folders, names in os.walk(store):
        paths.update(Path(root) / name for name in (*folders, *names))
    paths.update((store, store.parent))
    for path in paths:
        with contextlib.suppress(OSError):
            if os.lstat(path).st_uid == 0:
                os.chown(path, *owner, follow_symlinks=False)


def ensure_store_dir(session_path: Path) -> Path:
    refuse_linked_store(session_path)
    folder = store_dir(session_path)
    try:
        make_folders(folder / "backups", 0o700)  # it holds copies of sessions: the owner's only, as its files
    except OSError as exc:
        raise StoreError(
            session_path, f"cannot create {folder}: {describe_os_error(exc)}; nothing was written"
        ) from None
    if not os.access(folder, os.W_OK):
        raise StoreError(session_path, f"cannot write to {folder}: permission denied; nothing was written")
    return folder


SWAPPED_DIR = "swapped"  # in each session's store folder: the files an apply or revert swapped out


def swapped_path(session_path: Path, ident: str, kind: str) -> Path:
    """Where the file an apply (``kind`` ``apply``) or a revert (``revert``) of the apply ``ident``
    swaps out is kept, until the next apply or revert carries what was written to it late."""
    return store_dir(session_path) / SWAPPED_DIR / f"{ident}-{kind}-{secrets.token_hex(3)}"


def refuse_foreign_store(session_path: Path) -> None:
    """Run as root, refuse a store another user owns: its journal names files to delete and bytes
    to cut, and a store handed to the session's owner (``hand_over``) is theirs to write.  Root
    acts only on a store that is root's alone; the owner undoes their own applies."""
    if os.geteuid() != 0:
        return
    folder = store_dir(session_path)
    for part in (folder.parent, folder, folder / JOURNAL_NAME, folder / "backups", folder / SWAPPED_DIR,
                 folder / "lock"):
        try:
            uid = os.lstat(part).st_uid
        except OSError:
            continue
        if uid != 0:
            try:
                name = pwd.getpwuid(uid).pw_name
            except KeyError:
                name = f"uid {uid}"
            raise StoreError(session_path, f"{part} belongs to {name} (uid {uid}), who may have written its journal: "
                             f"root does not act on a store another user can change. Run this as {name}; "
                             "nothing was changed", "invalid")
