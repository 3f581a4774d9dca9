"""Session listing, most-recent lookup and --session resolution."""

from __future__ import annotations

import json
import os
import time
from datetime import UTC, datetime
from pathlib import Path

import pytest

from pi_coder.ai.types import AssistantMessage, TextContent, UserMessage
from pi_coder.errors import SessionNotFoundError, UserError
from pi_coder.paths import encode_cwd
from pi_coder.session import (
    AmbiguousSessionError,
    SessionStore,
    find_most_recent_session,
    list_all_sessions,
    list_sessions,
    read_session_info,
    resolve_session,
)


def _session(directory: Path, cwd: str, prompt: str, ts: int, name: str | None = None) -> SessionStore:
    store = SessionStore.create(cwd, directory)
    store.append_model_change("faux", "m")
    store.append_message(UserMessage(content=[TextContent(text=prompt), TextContent(text="(more)")], timestamp=ts))
    store.append_message(AssistantMessage(content=[TextContent(text="reply")], timestamp=ts + 1))
    if name:
        store.append_session_info(name)
    return store


def _write(path: Path, header: dict, *rows: dict) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(x) + "\n" for x in [header, *rows]))
    return path


def test_list_sessions_summarises_and_sorts_by_activity(tmp_path: Path) -> None:
    directory = tmp_path / encode_cwd("/home/u/p")
    older = _session(directory, "/home/u/p", "first task", 1_700_000_000_000, name="Named")
    newer = _session(directory, "/home/u/p", "second task", 1_800_000_000_000)
    (directory / "junk.jsonl").write_text("not json\n")
    (directory / "notes.txt").write_text("ignored")
    infos = list_sessions("/home/u/p", directory)
    assert [info.id for info in infos] == [newer.session_id, older.session_id]
    first = infos[1]
    assert first.path == older.session_file
    assert first.name == "Named"
    assert first.cwd == "/home/u/p"
    assert first.message_count == 2
    assert first.first_message == "first task (more)"
    assert first.modified == datetime.fromtimestamp(1_700_000_000_001 / 1000, UTC)
    assert first.parent_session_path is None
    assert abs(first.created.timestamp() - time.time()) < 600


def test_listing_handles_other_layouts_and_empty_sessions(tmp_path: Path) -> None:
    """Lines written with spaces (not Pi's compact form) and sessions without messages are read correctly."""
    header = {"type": "session", "version": 3, "id": "aaaa", "timestamp": "2025-01-01T00:00:00.000Z", "cwd": "/c", "parentSession": "/x.jsonl"}
    spaced = _write(
        tmp_path / "d" / "a.jsonl",
        header,
        {"type": "message", "id": "1", "parentId": None, "timestamp": "2025-01-02T00:00:00.000Z", "message": {"role": "user", "content": "spaced", "timestamp": 5}},
        {"type": "message", "id": "2", "parentId": "1", "timestamp": "2025-01-03T00:00:00.000Z", "message": {"role": "toolResult", "toolCallId": "x", "toolName": "t", "content": []}},
        {"type": "session_info", "id": "3", "parentId": "2", "timestamp": "2025-01-03T00:00:00.000Z", "name": " N "},
    )
    info = read_session_info(spaced)
    assert (info.message_count, info.first_message, info.name) == (2, "spaced", "N")
    assert info.modified == datetime.fromtimestamp(0.005, UTC)
    assert info.parent_session_path == "/x.jsonl"
    empty = _write(tmp_path / "d" / "b.jsonl", {**header, "id": "bbbb"})
    info = read_session_info(empty)
    assert info.message_count == 0 and info.first_message == "(no messages)"
    assert info.modified == info.created == datetime(2025, 1, 1, tzinfo=UTC)
    assert read_session_info(tmp_path / "d" / "missing.jsonl") is None


def test_list_all_sessions_spans_projects(tmp_path: Path) -> None:
    root = tmp_path / "sessions"
    a = _session(root / encode_cwd("/a"), "/a", "in a", 1_000)
    b = _session(root / encode_cwd("/b"), "/b", "in b", 2_000)
    assert [info.id for info in list_all_sessions(root)] == [b.session_id, a.session_id]
    assert list_all_sessions(tmp_path / "nothing") == []


def test_default_folders_come_from_pi_coder_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PI_CODER_HOME", str(tmp_path))
    store = SessionStore.create("/home/u/p")
    store.append_message(UserMessage(content="x"))
    store.append_message(AssistantMessage(content=[]))
    assert store.session_file.parent == tmp_path / "sessions" / "--home-u-p--"
    assert [info.id for info in list_sessions("/home/u/p")] == [store.session_id]
    assert [info.id for info in list_all_sessions()] == [store.session_id]
    assert find_most_recent_session("/home/u/p") == store.session_file
    assert resolve_session(store.session_id[:6], "/elsewhere") == store.session_file


def test_find_most_recent_session_uses_mtime_and_skips_invalid(tmp_path: Path) -> None:
    a = _session(tmp_path, "/p", "a", 2_000)
    b = _session(tmp_path, "/p", "b", 1_000)
    os.utime(a.session_file, (1_000, 1_000))
    invalid = tmp_path / "zzz.jsonl"
    invalid.write_text("garbage\n")
    assert find_most_recent_session("/p", tmp_path) == b.session_file
    assert find_most_recent_session("/p", tmp_path / "none") is None


def test_resolve_session_by_path_and_id_prefix(tmp_path: Path) -> None:
    root = tmp_path / "sessions"
    here = root / encode_cwd("/here")
    there = root / encode_cwd("/there")
    header = {"type": "session", "version": 3, "timestamp": "2025-01-01T00:00:00.000Z", "cwd": "/here"}
    local = _write(here / "1.jsonl", {**header, "id": "abc11111-0000"})
    _write(here / "2.jsonl", {**header, "id": "abc22222-0000"})
    remote = _write(there / "3.jsonl", {**header, "id": "fed33333-0000", "cwd": "/there"})
    shadow = _write(there / "4.jsonl", {**header, "id": "abc11111-9999", "cwd": "/there"})

    assert resolve_session(str(local), "/here", root=root) == local.absolute()
    assert resolve_session("abc1", "/here", here, root=root) == local  # current project wins over others
    assert resolve_session("fed", "/here", here, root=root) == remote  # then every project
    with pytest.raises(AmbiguousSessionError) as excinfo:
        resolve_session("abc", "/here", here, root=root)
    assert "abc11111-0000" in str(excinfo.value) and "abc22222-0000" in str(excinfo.value)
    assert sorted(excinfo.value.candidates) == sorted([str(local), str(here / "2.jsonl")])
    assert "\n" not in str(excinfo.value)
    with pytest.raises(AmbiguousSessionError):
        resolve_session("abc1", "/nowhere", root / "none", root=root)  # two projects both match
    assert shadow.exists()
    with pytest.raises(SessionNotFoundError, match="No session found matching 'zzz'") as missing:
        resolve_session("zzz", "/here", here, root=root)
    assert isinstance(missing.value, UserError) and "\n" not in str(missing.value)
    with pytest.raises(SessionNotFoundError, match="Session file not found"):
        resolve_session(str(tmp_path / "gone.jsonl"), "/here", here, root=root)


def test_a_listed_folder_is_known_until_a_file_changes(tmp_path: Path) -> None:
    """``cached_sessions`` answers from the summaries of the last listing while no file changed
    (the resume picker's first frame); a new, grown or renamed session is read again."""
    from pi_coder.session.listing import cached_sessions

    directory = tmp_path / encode_cwd("/home/u/p")
    first = _session(directory, "/home/u/p", "first task", 1_700_000_000_000)
    assert cached_sessions("/home/u/p", directory) is None  # never listed
    listed = list_sessions("/home/u/p", directory)
    assert cached_sessions("/home/u/p", directory) == listed
    first.append_session_info("Renamed")  # the file grows
    assert cached_sessions("/home/u/p", directory) is None
    assert [info.name for info in list_sessions("/home/u/p", directory)] == ["Renamed"]
    second = _session(directory, "/home/u/p", "second task", 1_800_000_000_000)
    assert cached_sessions("/home/u/p", directory) is None  # a file it has not read
    listed = list_sessions("/home/u/p", directory)
    assert [info.id for info in listed] == [second.session_id, first.session_id]
    assert cached_sessions("/home/u/p", directory) == listed
    assert first.session_file is not None
    os.remove(first.session_file)
    assert [info.id for info in cached_sessions("/home/u/p", directory) or []] == [second.session_id]
