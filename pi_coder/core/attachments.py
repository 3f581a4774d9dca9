"""Images attached to a user message: one path for ``@file`` arguments, ``@image`` references and pastes.

:func:`attach_image` turns image bytes into the ``ImageContent`` block sent to the model, shrunk
to Pi's limits by ``pi_coder.tools.prepare_image`` when ``images.auto_resize`` is on, with the
note that goes with it (the new size, or why the image was left out). ``images.block_images``
is applied later, when messages are converted for the model (``core.convert``).
:func:`image_references` finds the ``@path`` words of a prompt that name image files.
"""

from __future__ import annotations

import base64
import os
import re
import stat
from dataclasses import dataclass
from pathlib import Path

from pi_coder.ai.types import ImageContent
from pi_coder.tools import detect_image_mime, prepare_image

__all__ = ["Attachment", "attach_image", "image_references", "read_image_file"]

_REFERENCE = re.compile(r'(?:^|(?<=\s))@(?:"([^"]+)"|(\S+))')


@dataclass(frozen=True, slots=True)
class Attachment:
    """One image ready to send."""

    image: ImageContent | None
    """The block to send; ``None`` when the image could not be brought under the size limit."""
    note: str | None
    """Text to send with it: the resize note (``[Image: original WxH, displayed at wxh. ...]``) or why it was left out."""
    mime_type: str
    size: tuple[int, int] | None = None
    """Pixel size of what is sent, when known."""


def attach_image(data: bytes, mime_type: str, *, auto_resize: bool = True) -> Attachment:
    """The image block for ``data`` (downscaled to 2000x2000 / 4.5 MB base64 when ``auto_resize``)."""
    prepared = prepare_image(data, mime_type, auto_resize=auto_resize)
    image = None
    if prepared.data is not None:
        image = ImageContent(data=base64.b64encode(prepared.data).decode("ascii"), mime_type=prepared.mime_type)
    return Attachment(image=image, note=prepared.note, mime_type=prepared.mime_type, size=prepared.size)


def _image_mime(path: str | os.PathLike[str]) -> str | None:
    try:
        if not stat.S_ISREG(os.stat(path).st_mode):  # never open a FIFO or a device
            return None
        with open(path, "rb") as f:
            return detect_image_mime(f.read(16))
    except OSError:
        return None


def read_image_file(path: str | os.PathLike[str]) -> tuple[bytes, str] | None:
    """``(bytes, mime type)`` of a regular file that is a PNG, JPEG, GIF or WebP image, else ``None``."""
    mime = _image_mime(path)
    if mime is None:
        return None
    try:
        return Path(path).read_bytes(), mime
    except OSError:
        return None


def image_references(text: str, cwd: str | os.PathLike[str]) -> list[Path]:
    """The files named by ``@path`` / ``@"path with spaces"`` words of ``text`` that are images, in order."""
    found: list[Path] = []
    for match in _REFERENCE.finditer(text):
        raw = match.group(1) or match.group(2)
        path = Path(os.path.expanduser(raw))
        if not path.is_absolute():
            path = Path(cwd) / path
        path = Path(os.path.normpath(path))
        if path not in found and _image_mime(path) is not None:
            found.append(path)
    return found
