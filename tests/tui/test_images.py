"""Images in the TUI: Ctrl+V clipboard paste and ``@image`` references reach the model as image blocks.

The clipboard is a real command (``PI_CODER_CLIPBOARD_IMAGE_COMMAND``: a script printing PNG
bytes); the model is the scripted HTTP server on 127.0.0.1.
"""

from __future__ import annotations

import base64
import io
import stat
import sys
from pathlib import Path
from typing import Any

import pytest
from PIL import Image

from pi_coder.ai.models import create_models
from pi_coder.tui.clipboard_image import COMMAND_VAR, clipboard_image_commands, read_clipboard_image
from pi_coder.tui.widgets.completion_menu import CompletionMenu
from pi_coder.tui.widgets.transcript import UserMessageBlock
from tests.support.sse_server import SSEServer, Text, Turn
from tests.tui.helpers import type_text, wait_until
from tests.tui.screen_text import screen_text
from tests.tui.screens_support import make_app, session_for


def _png(width: int, height: int, colour: tuple[int, int, int] = (0, 160, 80)) -> bytes:
    buf = io.BytesIO()
    Image.new("RGB", (width, height), colour).save(buf, format="PNG")
    return buf.getvalue()


def _clipboard_script(tmp_path: Path, image: Path | None) -> str:
    """A real clipboard command: prints the image's bytes, or fails like wl-paste with no image."""
    script = tmp_path / "fake-clipboard"
    if image is None:
        body = "import sys\nsys.stderr.write('No suitable type of content copied\\n')\nsys.exit(1)\n"
    else:
        body = f"import sys\nsys.stdout.buffer.write(open({str(image)!r}, 'rb').read())\n"
    script.write_text(f"#!{sys.executable}\n{body}")
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    return str(script)


def _session(project: Path, server: SSEServer, accepts: str = '["text", "image"]') -> Any:
    home = project.parent / "home"
    (home / "models.toml").write_text(
        "[providers.local]\n"
        'api = "anthropic-messages"\n'
        f'base_url = "{server.anthropic_base_url}"\n'
        'api_key = "none"\n'
        'models = [{ id = "vision", context_window = 32768, max_tokens = 1024, input = ' + accepts + " }]\n"
    )
    models = create_models(include_builtin=False, env={}, models_toml=home / "models.toml")
    return session_for(project, models, models.get_model("local", "vision"), no_session=True)


def _user_content(request: Any) -> list[dict[str, Any]]:
    (message,) = [m for m in request.json["messages"] if m["role"] == "user"]
    return message["content"]


def _image_size(block: dict[str, Any]) -> tuple[int, int]:
    with Image.open(io.BytesIO(base64.b64decode(block["source"]["data"]))) as image:
        return image.size


@pytest.fixture
def clipboard(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):  # type: ignore[no-untyped-def]
    def use(image: Path | None) -> None:
        monkeypatch.setenv(COMMAND_VAR, _clipboard_script(tmp_path, image))
        monkeypatch.delenv("WAYLAND_DISPLAY", raising=False)
        monkeypatch.delenv("DISPLAY", raising=False)

    return use


async def test_ctrl_v_pastes_the_clipboard_image_as_a_marker_and_sends_it(
    tmp_path: Path, project: Path, sse_server: SSEServer, clipboard
) -> None:
    shot = tmp_path / "shot.png"
    shot.write_bytes(_png(3200, 1600))  # over 2000 wide: downscaled before sending
    clipboard(shot)
    sse_server.enqueue(Turn([Text("A green rectangle.")]))
    app = make_app(_session(project, sse_server))
    async with app.run_test(size=(100, 30)) as pilot:
        await type_text(pilot, "what is this? ")
        await pilot.press("ctrl+v")
        await wait_until(pilot, lambda: "[image #1]" in app.editor.text, what="image marker")
        assert app.editor.text == "what is this? [image #1]"
        assert "[image #1]" in screen_text(app)
        await pilot.press("enter")
        await wait_until(pilot, lambda: "A green rectangle." in screen_text(app), timeout=30, what="answer")
        block = app.query_one(UserMessageBlock)
        assert block.images == ["image/png"]
        assert "[image: image/png]" in screen_text(app)
    content = _user_content(sse_server.requests[0])
    texts = [b["text"] for b in content if b["type"] == "text"]
    images = [b for b in content if b["type"] == "image"]
    assert len(images) == 1 and images[0]["source"]["media_type"] == "image/png"
    assert _image_size(images[0]) == (2000, 1000)
    assert texts[0].startswith("what is this? [image #1]")
    assert "[Image: original 3200x1600, displayed at 2000x1000." in texts[0]


async def test_ctrl_v_without_a_clipboard_image_pastes_text_as_before(
    project: Path, sse_server: SSEServer, clipboard
) -> None:
    clipboard(None)
    app = make_app(_session(project, sse_server))
    async with app.run_test(size=(100, 30)) as pilot:
        app.copy_to_clipboard("copied words")
        await type_text(pilot, "say ")
        await pilot.press("ctrl+v")
        await wait_until(pilot, lambda: app.editor.text == "say copied words", what="text paste")
        assert not app.editor.images
    assert not sse_server.requests


async def test_backspace_removes_an_image_marker_whole_and_its_image(
    tmp_path: Path, project: Path, sse_server: SSEServer, clipboard
) -> None:
    shot = tmp_path / "s.png"
    shot.write_bytes(_png(8, 8))
    clipboard(shot)
    sse_server.enqueue(Turn([Text("plain")]))
    app = make_app(_session(project, sse_server))
    async with app.run_test(size=(100, 30)) as pilot:
        await type_text(pilot, "hi ")
        await pilot.press("ctrl+v")
        await wait_until(pilot, lambda: "[image #1]" in app.editor.text, what="marker")
        await pilot.press("backspace")
        assert app.editor.text == "hi "
        await pilot.press("enter")
        await sse_server.wait_for_requests_async(1, timeout=30)
    assert [b["type"] for b in _user_content(sse_server.requests[0])] == ["text"]


async def test_at_image_completion_becomes_a_marker_and_typed_references_attach_too(
    project: Path, sse_server: SSEServer
) -> None:
    (project / "diagram.png").write_bytes(_png(40, 20, (255, 0, 0)))
    (project / "photo.png").write_bytes(_png(30, 30, (0, 0, 255)))
    sse_server.enqueue(Turn([Text("Two pictures.")]))
    app = make_app(_session(project, sse_server))
    async with app.run_test(size=(100, 30)) as pilot:
        await type_text(pilot, "compare @diagr")
        menu = app.query_one(CompletionMenu)
        await wait_until(pilot, lambda: menu.is_open, what="file completion")
        await pilot.press("tab")
        await wait_until(pilot, lambda: "[image #1]" in app.editor.text, what="marker from @file")
        assert app.editor.text == "compare [image #1] "
        await type_text(pilot, "with @photo.png")
        await pilot.press("escape")  # close the menu, keep the text as typed
        await pilot.press("enter")
        await wait_until(pilot, lambda: "Two pictures." in screen_text(app), timeout=30, what="answer")
    content = _user_content(sse_server.requests[0])
    sizes = [_image_size(b) for b in content if b["type"] == "image"]
    assert sizes == [(40, 20), (30, 30)]
    assert content[0] == {"type": "text", "text": "compare [image #1] with @photo.png"}


def test_clipboard_reader_ignores_output_that_is_not_an_image(tmp_path: Path) -> None:
    text_file = tmp_path / "t.txt"
    text_file.write_text("just text")
    env = {COMMAND_VAR: _clipboard_script(tmp_path, text_file)}
    assert read_clipboard_image(env) is None
    image = tmp_path / "i.png"
    image.write_bytes(_png(2, 2))
    env = {COMMAND_VAR: _clipboard_script(tmp_path, image)}
    assert read_clipboard_image(env) == (image.read_bytes(), "image/png")
    if sys.platform != "darwin":  # no display and no command: nothing to try, Ctrl+V pastes text
        assert clipboard_image_commands({}) == []
        assert read_clipboard_image({}) is None


async def test_an_image_file_argument_goes_with_the_first_message_in_the_tui(
    project: Path, sse_server: SSEServer
) -> None:
    """``pi @shot.png "what?"`` in the TUI: the image is sent with the first message (no longer dropped)."""
    from pi_coder.ai.types import ImageContent

    sse_server.enqueue(Turn([Text("Seen.")]))
    picture = ImageContent(data=base64.b64encode(_png(12, 6)).decode(), mime_type="image/png")
    app = make_app(_session(project, sse_server), initial_messages=["what?"], initial_images=[picture])
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_until(pilot, lambda: "Seen." in screen_text(app), timeout=30, what="answer")
        assert app.query_one(UserMessageBlock).images == ["image/png"]
    content = _user_content(sse_server.requests[0])
    assert [b["type"] for b in content] == ["text", "image"] and _image_size(content[1]) == (12, 6)


async def test_an_image_for_a_text_only_model_gets_a_warning(
    project: Path, sse_server: SSEServer, clipboard, tmp_path: Path
) -> None:
    shot = tmp_path / "x.png"
    shot.write_bytes(_png(5, 5))
    clipboard(shot)
    sse_server.enqueue(Turn([Text("ok")]))
    app = make_app(_session(project, sse_server, accepts='["text"]'))
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.press("ctrl+v")
        await wait_until(pilot, lambda: "[image #1]" in app.editor.text, what="marker")
        await pilot.press("enter")
        await wait_until(pilot, lambda: "does not accept images" in screen_text(app), what="warning")
        await sse_server.wait_for_requests_async(1, timeout=30)
    content = _user_content(sse_server.requests[0])
    assert "image" not in [b["type"] for b in content]
    assert any("does not accept images" in b.get("text", "") for b in content)
