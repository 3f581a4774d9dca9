"""Images sent to the model: downscaled to Pi's limits in one place (core.attachments -> tools.prepare_image)."""

from __future__ import annotations

import base64
import io
import os
from pathlib import Path
from typing import Any

from PIL import Image

from pi_coder.core.attachments import attach_image, image_references, read_image_file
from pi_coder.tools._images import MAX_IMAGE_BYTES, MAX_IMAGE_SIDE
from tests.modes.pirun import PiHome, user_texts
from tests.support.sse_server import SSEServer, Text, Turn


def png(width: int, height: int, *, noise: bool = False) -> bytes:
    if noise:
        image = Image.frombytes("RGB", (width, height), os.urandom(width * height * 3))
    else:
        image = Image.new("RGB", (width, height), (200, 40, 40))
    buf = io.BytesIO()
    image.save(buf, format="PNG")
    return buf.getvalue()


def jpeg(width: int, height: int) -> bytes:
    buf = io.BytesIO()
    Image.new("RGB", (width, height), (10, 90, 200)).save(buf, format="JPEG", quality=90)
    return buf.getvalue()


def decoded_size(data_b64: str) -> tuple[int, int]:
    with Image.open(io.BytesIO(base64.b64decode(data_b64))) as image:
        return image.size


def test_a_large_png_is_shrunk_to_2000_with_a_note_of_the_new_size() -> None:
    attached = attach_image(png(3000, 1500), "image/png")
    assert attached.image is not None
    assert decoded_size(attached.image.data) == (2000, 1000)
    assert attached.size == (2000, 1000)
    assert attached.note is not None
    assert "original 3000x1500" in attached.note and "displayed at 2000x1000" in attached.note


def test_a_small_jpeg_is_sent_unchanged_without_a_note() -> None:
    data = jpeg(640, 480)
    attached = attach_image(data, "image/jpeg")
    assert attached.image is not None and base64.b64decode(attached.image.data) == data
    assert attached.note is None and attached.size == (640, 480) and attached.mime_type == "image/jpeg"


def test_auto_resize_off_sends_the_original() -> None:
    data = png(2600, 100)
    attached = attach_image(data, "image/png", auto_resize=False)
    assert attached.image is not None and base64.b64decode(attached.image.data) == data
    assert attached.note is None


def test_an_image_within_2000_but_over_the_byte_limit_is_recompressed_under_it() -> None:
    data = png(1900, 1900, noise=True)  # random pixels: a ~10 MB PNG
    assert len(base64.b64encode(data)) > MAX_IMAGE_BYTES
    attached = attach_image(data, "image/png")
    assert attached.image is not None
    assert len(attached.image.data) <= MAX_IMAGE_BYTES
    width, height = decoded_size(attached.image.data)
    assert width <= MAX_IMAGE_SIDE and height <= MAX_IMAGE_SIDE
    assert attached.note is not None and "original 1900x1900" in attached.note


def test_references_find_image_files_only(tmp_path: Path) -> None:
    (tmp_path / "a.png").write_bytes(png(4, 4))
    (tmp_path / "my shot.jpg").write_bytes(jpeg(4, 4))
    (tmp_path / "notes.txt").write_text("hello")
    os.mkfifo(tmp_path / "pipe.png")  # never opened
    text = 'look at @a.png and @"my shot.jpg", @notes.txt, @pipe.png, @missing.png, mail@a.png, @a.png'
    assert image_references(text, tmp_path) == [tmp_path / "a.png", tmp_path / "my shot.jpg"]
    assert read_image_file(tmp_path / "notes.txt") is None
    assert read_image_file(tmp_path / "pipe.png") is None
    loaded = read_image_file(tmp_path / "a.png")
    assert loaded is not None and loaded[1] == "image/png"


def _images(request: Any) -> list[dict[str, Any]]:
    out = []
    for message in request.json["messages"]:
        for block in message["content"] if isinstance(message["content"], list) else []:
            if block.get("type") == "image":
                out.append(block)
    return out


def test_print_mode_file_argument_is_downscaled_and_the_note_sent(tmp_path: Path, sse_server: SSEServer) -> None:
    pi = PiHome(tmp_path, sse_server, "anthropic")
    (pi.project / "big.png").write_bytes(png(4000, 1000))
    sse_server.enqueue(Turn([Text("A red strip.")]))
    run = pi.run("-p", "@big.png", "what is it?")
    assert run.returncode == 0, run.stderr
    (image,) = _images(sse_server.requests[0])
    assert decoded_size(image["source"]["data"]) == (2000, 500)
    (text,) = user_texts(sse_server.requests[0].json)
    assert f'<file name="{pi.project / "big.png"}">[Image: original 4000x1000, displayed at 2000x500.' in text
    assert text.endswith("what is it?")


def test_print_mode_honours_images_auto_resize_off(tmp_path: Path, sse_server: SSEServer) -> None:
    pi = PiHome(tmp_path, sse_server, "anthropic")
    (pi.home / "settings.toml").write_text("[images]\nauto_resize = false\n")
    data = png(2400, 10)
    (pi.project / "wide.png").write_bytes(data)
    sse_server.enqueue(Turn([Text("ok")]))
    run = pi.run("-p", "@wide.png", "size?")
    assert run.returncode == 0, run.stderr
    (image,) = _images(sse_server.requests[0])
    assert base64.b64decode(image["source"]["data"]) == data
    assert "[Image:" not in user_texts(sse_server.requests[0].json)[0]
