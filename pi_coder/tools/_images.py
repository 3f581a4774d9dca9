"""Image detection by magic bytes and downsizing to Pi's limits (Pillow, imported on first use).

The one place images are shrunk before they reach a model: the read tool, ``@file`` arguments
(print mode) and the TUI's ``@image`` references and clipboard pastes all go through
:func:`prepare_image`. Limits (Pi's ``images.autoResize``): at most 2000x2000 pixels and at most
4.5 MB once base64-encoded.
"""

from __future__ import annotations

import io
from dataclasses import dataclass

__all__ = ["MAX_IMAGE_BYTES", "MAX_IMAGE_SIDE", "PreparedImage", "detect_image_mime", "prepare_image"]

MAX_IMAGE_SIDE = 2000
MAX_IMAGE_BYTES = int(4.5 * 1024 * 1024)
"""Largest base64 text of an image sent to a model."""


def _fits(data: bytes) -> bool:
    return 4 * ((len(data) + 2) // 3) <= MAX_IMAGE_BYTES


def detect_image_mime(head: bytes) -> str | None:
    """The MIME type of a PNG, JPEG, GIF or WebP file from its first bytes, else ``None``."""
    if head.startswith(b"\x89PNG\r\n\x1a\n"):
        return "image/png"
    if head.startswith(b"\xff\xd8\xff"):
        return "image/jpeg"
    if head.startswith((b"GIF87a", b"GIF89a")):
        return "image/gif"
    if len(head) >= 12 and head[:4] == b"RIFF" and head[8:12] == b"WEBP":
        return "image/webp"
    return None


@dataclass(slots=True, kw_only=True)
class PreparedImage:
    data: bytes | None
    """Bytes to send, or ``None`` when the image is too large and could not be shrunk."""
    mime_type: str
    note: str | None = None
    """Text to send with the image: the resize note, or why it was left out."""
    size: tuple[int, int] | None = None
    """Pixel size of what is sent, when known."""


def prepare_image(data: bytes, mime_type: str, *, auto_resize: bool = True) -> PreparedImage:
    """Shrink an image to at most 2000x2000 pixels and 4.5 MB when needed and possible."""
    if not auto_resize:
        return PreparedImage(data=data, mime_type=mime_type)
    try:
        from PIL import Image  # a dependency, imported only when an image is processed
    except ImportError:
        if _fits(data):
            return PreparedImage(data=data, mime_type=mime_type)
        return PreparedImage(
            data=None, mime_type=mime_type,
            note="[Image omitted: it exceeds the inline image size limit and Pillow is not installed to resize it.]",
        )  # fmt: skip
    try:
        image: Image.Image = Image.open(io.BytesIO(data))
        width, height = image.size
    except Exception:
        if _fits(data):
            return PreparedImage(data=data, mime_type=mime_type)
        return PreparedImage(
            data=None, mime_type=mime_type,
            note="[Image omitted: could not be resized below the inline image size limit.]",
        )  # fmt: skip
    if width <= MAX_IMAGE_SIDE and height <= MAX_IMAGE_SIDE and _fits(data):
        return PreparedImage(data=data, mime_type=mime_type, size=(width, height))
    scale = min(1.0, MAX_IMAGE_SIDE / width, MAX_IMAGE_SIDE / height)
    if image.mode not in ("RGB", "RGBA", "L", "LA"):
        image = image.convert("RGBA")
    while scale > 0.05:
        size = (max(1, int(width * scale)), max(1, int(height * scale)))
        resized = image.resize(size)
        candidates: list[tuple[bytes, str]] = []
        buf = io.BytesIO()
        resized.save(buf, format="PNG", optimize=True)
        candidates.append((buf.getvalue(), "image/png"))
        for quality in (85, 70, 55, 40):
            buf = io.BytesIO()
            resized.convert("RGB").save(buf, format="JPEG", quality=quality)
            candidates.append((buf.getvalue(), "image/jpeg"))
        fitting = [c for c in candidates if _fits(c[0])]
        if fitting:
            best, mime = min(fitting, key=lambda c: len(c[0]))
            factor = width / size[0]
            note = (
                f"[Image: original {width}x{height}, displayed at {size[0]}x{size[1]}. "
                f"Multiply coordinates by {factor:.2f} to map to original image.]"
            )
            return PreparedImage(data=best, mime_type=mime, note=note, size=size)
        scale *= 0.75
    return PreparedImage(
        data=None, mime_type=mime_type,
        note="[Image omitted: could not be resized below the inline image size limit.]",
    )  # fmt: skip
