"""Image detection by magic bytes and optional downsizing (Pillow, when installed)."""

from __future__ import annotations

import io
from dataclasses import dataclass

__all__ = ["MAX_IMAGE_BYTES", "MAX_IMAGE_SIDE", "PreparedImage", "detect_image_mime", "prepare_image"]

MAX_IMAGE_SIDE = 2000
MAX_IMAGE_BYTES = int(4.5 * 1024 * 1024)


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


def prepare_image(data: bytes, mime_type: str, *, auto_resize: bool = True) -> PreparedImage:
    """Shrink an image to at most 2000x2000 pixels and 4.5 MB when needed and possible."""
    if not auto_resize:
        return PreparedImage(data=data, mime_type=mime_type)
    try:
        from PIL import Image  # optional dependency
    except ImportError:
        if len(data) <= MAX_IMAGE_BYTES:
            return PreparedImage(data=data, mime_type=mime_type)
        return PreparedImage(
            data=None, mime_type=mime_type,
            note="[Image omitted: it exceeds the inline image size limit and Pillow is not installed to resize it.]",
        )  # fmt: skip
    try:
        image = Image.open(io.BytesIO(data))
        width, height = image.size
    except Exception:
        if len(data) <= MAX_IMAGE_BYTES:
            return PreparedImage(data=data, mime_type=mime_type)
        return PreparedImage(
            data=None, mime_type=mime_type,
            note="[Image omitted: could not be resized below the inline image size limit.]",
        )  # fmt: skip
    if width <= MAX_IMAGE_SIDE and height <= MAX_IMAGE_SIDE and len(data) <= MAX_IMAGE_BYTES:
        return PreparedImage(data=data, mime_type=mime_type)
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
        fitting = [c for c in candidates if len(c[0]) <= MAX_IMAGE_BYTES]
        if fitting:
            best, mime = min(fitting, key=lambda c: len(c[0]))
            factor = width / size[0]
            note = (
                f"[Image: original {width}x{height}, displayed at {size[0]}x{size[1]}. "
                f"Multiply coordinates by {factor:.2f} to map to original image.]"
            )
            return PreparedImage(data=best, mime_type=mime, note=note)
        scale *= 0.75
    return PreparedImage(
        data=None, mime_type=mime_type,
        note="[Image omitted: could not be resized below the inline image size limit.]",
    )  # fmt: skip
