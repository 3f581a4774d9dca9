"""Finding sessions: listing (resume picker), most recent (``-c``), lookup by path or id prefix.

Listing reads each file once and decodes only the lines it needs: entries written by Pi or
pi_coder start with ``{"type":"<kind>"``, so message lines are counted and classified by their
prefix, and only the header, ``session_info`` lines, the first user message and the last
user/assistant message are decoded. Lines in any other layout are decoded in full.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from pi_coder.json_types import JsonObject, JsonValue
from pi_coder.paths import session_dir_for_cwd, sessions_dir
from pi_coder.session._file import read_first_line
from pi_coder.session.codec import iso_to_ms, loads
from pi_coder.session.errors import AmbiguousSessionError, SessionNotFoundError

__all__ = [
    "SessionInfo",
    "find_most_recent_session",
    "find_session_by_id",
    "list_all_sessions",
    "cached_sessions",
    "list_sessions",
    "read_session_info",
    "resolve_session",
]


@dataclass(slots=True, frozen=True)
class SessionInfo:
    """One line of the session picker."""

    path: Path
    id: str
    name: str | None
    """Latest ``session_info`` name, if any."""
    cwd: str
    created: datetime
    modified: datetime
    """Latest user/assistant message time, else the header time, else the file mtime."""
    message_count: int
    first_message: str
    """Text of the first user message, or ``"(no messages)"``."""
    parent_session_path: str | None


_MESSAGE_PREFIX = b'{"type":"message"'
_INFO_PREFIX = b'{"type":"session_info"'
_OTHER_PREFIX = b'{"type":"'
_ROLE_KEY = b'"message":{"role":"'


def _text_of(content: JsonValue) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        texts = (block.get("text") for block in content if isinstance(block, dict) and block.get("type") == "text")
        return " ".join(text for text in texts if isinstance(text, str))
    return ""


def _to_datetime(ms: int) -> datetime:
    return datetime.fromtimestamp(ms / 1000, UTC)


def _header(path: Path) -> JsonObject | None:
    try:
        data = loads(read_first_line(path))
    except (OSError, ValueError):
        return None
    if isinstance(data, dict) and data.get("type") == "session" and isinstance(data.get("id"), str):
        return data
    return None


_FileKey = tuple[int, int, int]
_known: dict[Path, tuple[_FileKey, SessionInfo | None]] = {}
"""Summaries already read, by file, with the (inode, size, mtime) they were read at."""


def _file_key(file: Path) -> _FileKey | None:
    try:
        stat = file.stat()
    except OSError:
        return None
    return stat.st_ino, stat.st_size, stat.st_mtime_ns


def read_session_info(path: str | os.PathLike[str]) -> SessionInfo | None:
    """Summarise one session file, or ``None`` if it is unreadable or not a session.

    A summary is kept while the file's inode, size and mtime stay the same (a session file only
    grows; a rename or rewrite changes them), so listing the sessions again reads only the files
    written since.
    """
    file = Path(path)
    key = _file_key(file)
    known = _known.get(file)
    if key is not None and known is not None and known[0] == key:
        return known[1]
    info = _read_session_info(file)
    if key is not None:
        _known[file] = (key, info)
    return info


def cached_sessions(cwd: str, session_dir: str | os.PathLike[str] | None = None) -> list[SessionInfo] | None:
    """:func:`list_sessions` when every file of the folder was summarised already and has not
    changed since (a directory listing and a ``stat`` per file), else ``None``."""
    directory = Path(session_dir) if session_dir is not None else session_dir_for_cwd(cwd)
    infos: list[SessionInfo] = []
    for file in _session_files(directory):
        known = _known.get(file)
        if known is None or known[0] != _file_key(file):
            return None
        if known[1] is not None:
            infos.append(known[1])
    infos.sort(key=lambda info: info.modified, reverse=True)
    return infos


def _read_session_info(file: Path) -> SessionInfo | None:
    try:
        handle = open(file, "rb")
    except OSError:
        return None
    with handle:
        try:
            header = loads(handle.readline())
        except ValueError:
            return None
        if not isinstance(header, dict) or header.get("type") != "session":
            return None
        session_id = header.get("id")
        if not isinstance(session_id, str):
            return None
        count = 0
        name: str | None = None
        first_message = ""
        last_activity: bytes | JsonObject | None = None
        for line in handle:
            if line.startswith(_MESSAGE_PREFIX):
                role = _role(line)
                if role is not None:
                    count += 1
                    if role in ("user", "assistant"):
                        last_activity = line
                        if role == "user" and not first_message:
                            entry = _decode(line)
                            message = entry.get("message") if entry is not None else None
                            if isinstance(message, dict):
                                first_message = _text_of(message.get("content"))
                    continue
            elif line.startswith(_OTHER_PREFIX) and not line.startswith(_INFO_PREFIX):
                continue
            entry = _decode(line)
            if entry is None:
                continue
            kind = entry.get("type")
            if kind == "session_info":
                info_name = entry.get("name")
                if isinstance(info_name, str) and info_name.strip():
                    name = info_name.strip()
            elif kind == "message":
                count += 1
                message = entry.get("message")
                if isinstance(message, dict) and message.get("role") in ("user", "assistant"):
                    last_activity = entry
                    if message.get("role") == "user" and not first_message:
                        first_message = _text_of(message.get("content"))
        try:
            mtime_ms = int(os.fstat(handle.fileno()).st_mtime * 1000)
        except OSError:
            mtime_ms = 0
    created_ms = iso_to_ms(header.get("timestamp"))
    modified_ms = _activity_ms(last_activity) or created_ms or mtime_ms
    parent = header.get("parentSession")
    cwd = header.get("cwd")
    return SessionInfo(
        path=file,
        id=session_id,
        name=name,
        cwd=cwd if isinstance(cwd, str) else "",
        created=_to_datetime(created_ms or mtime_ms),
        modified=_to_datetime(modified_ms),
        message_count=count,
        first_message=first_message or "(no messages)",
        parent_session_path=parent if isinstance(parent, str) else None,
    )


def _role(line: bytes) -> str | None:
    at = line.find(_ROLE_KEY)
    if at < 0:
        return None
    start = at + len(_ROLE_KEY)
    end = line.find(b'"', start)
    return line[start:end].decode("utf-8", "replace") if end > start else None


def _decode(line: bytes) -> JsonObject | None:
    try:
        data = loads(line)
    except ValueError:
        return None
    return data if isinstance(data, dict) else None


def _activity_ms(last: bytes | JsonObject | None) -> int:
    entry = _decode(last) if isinstance(last, bytes) else last
    if entry is None:
        return 0
    message = entry.get("message")
    timestamp = message.get("timestamp") if isinstance(message, dict) else None
    if isinstance(timestamp, int | float) and not isinstance(timestamp, bool) and timestamp > 0:
        return int(timestamp)
    return iso_to_ms(entry.get("timestamp"))


def _session_files(directory: Path) -> list[Path]:
    try:
        return [entry for entry in directory.iterdir() if entry.suffix == ".jsonl" and entry.is_file()]
    except OSError:
        return []


def _infos(files: Iterable[Path]) -> list[SessionInfo]:
    infos = [info for file in files if (info := read_session_info(file)) is not None]
    infos.sort(key=lambda info: info.modified, reverse=True)
    return infos


def _project_dirs(root: Path | None) -> list[Path]:
    base = root if root is not None else sessions_dir()
    try:
        return [entry for entry in base.iterdir() if entry.is_dir()]
    except OSError:
        return []


def list_sessions(cwd: str, session_dir: str | os.PathLike[str] | None = None) -> list[SessionInfo]:
    """Sessions of ``cwd`` (or of ``session_dir``), most recently active first."""
    directory = Path(session_dir) if session_dir is not None else session_dir_for_cwd(cwd)
    return _infos(_session_files(directory))


def list_all_sessions(root: str | os.PathLike[str] | None = None) -> list[SessionInfo]:
    """Sessions of every project under the sessions folder (or ``root``), most recent first."""
    base = Path(root) if root is not None else None
    return _infos(file for directory in _project_dirs(base) for file in _session_files(directory))


def find_most_recent_session(cwd: str, session_dir: str | os.PathLike[str] | None = None) -> Path | None:
    """The valid session file of ``cwd`` with the newest mtime (``--continue``), if any."""
    directory = Path(session_dir) if session_dir is not None else session_dir_for_cwd(cwd)
    best: tuple[float, Path] | None = None
    for file in _session_files(directory):
        if _header(file) is None:
            continue
        try:
            mtime = file.stat().st_mtime
        except OSError:
            continue
        if best is None or mtime > best[0]:
            best = (mtime, file)
    return best[1] if best is not None else None


def _matches(files: Iterable[Path], prefix: str) -> list[tuple[str, Path]]:
    found: list[tuple[str, Path]] = []
    for file in files:
        header = _header(file)
        session_id = header.get("id") if header is not None else None
        if isinstance(session_id, str) and session_id.startswith(prefix):
            found.append((session_id, file))
    return found


def find_session_by_id(
    session_id: str, cwd: str, session_dir: str | os.PathLike[str] | None = None
) -> Path | None:
    """The file of this folder's session whose id is exactly ``session_id`` (``--session-id``), or None."""
    local_dir = Path(session_dir) if session_dir is not None else session_dir_for_cwd(cwd)
    found = [file for found_id, file in _matches(_session_files(local_dir), session_id) if found_id == session_id]
    return found[0].absolute() if found else None


def resolve_session(
    arg: str, cwd: str, session_dir: str | os.PathLike[str] | None = None, root: str | os.PathLike[str] | None = None
) -> Path:
    """The session file named by ``arg``: a path, or a session id prefix (``--session``).

    An id prefix is looked up in the current project's sessions first, then in all projects.

    Raises:
        SessionNotFoundError: Nothing matches.
        AmbiguousSessionError: The prefix matches several sessions.
    """
    candidate = Path(arg).expanduser()
    if candidate.is_file():
        return candidate.absolute()
    if not arg.strip():
        raise SessionNotFoundError("No session id or path given")
    if os.sep in arg or arg.endswith(".jsonl"):
        raise SessionNotFoundError(f"Session file not found: {arg}")
    local_dir = Path(session_dir) if session_dir is not None else session_dir_for_cwd(cwd)
    found = _matches(_session_files(local_dir), arg)
    if not found:
        base = Path(root) if root is not None else None
        others = (d for d in _project_dirs(base) if d.absolute() != local_dir.absolute())
        found = _matches((file for directory in others for file in _session_files(directory)), arg)
    if not found:
        raise SessionNotFoundError(f"No session found matching '{arg}'")
    if len(found) > 1:
        ids = ", ".join(f"{session_id} ({file})" for session_id, file in sorted(found))
        raise AmbiguousSessionError(
            f"Session id prefix '{arg}' matches {len(found)} sessions: {ids}", [str(file) for _, file in found]
        )
    return found[0][1].absolute()
