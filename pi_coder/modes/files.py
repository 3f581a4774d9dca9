"""``@file`` arguments: text files are inlined, images are attached.

A text file becomes ``<file name="/abs/path">\\n<content>\\n</file>\\n``; an image (PNG, JPEG,
GIF or WebP, recognised by its first bytes) becomes an attachment plus an empty
``<file name="/abs/path"></file>\\n`` marker; a downscaled image's note (new size) goes inside
that marker (``core.attachments``, shared with the TUI). Empty files are skipped. The text is prepended
to the first message by the caller.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import TYPE_CHECKING

from pi_coder.errors import UserError
from pi_coder.tools import detect_image_mime

if TYPE_CHECKING:
    from pi_coder.ai.types import ImageContent

__all__ = ["detect_image_mime", "process_file_args"]


def _resolve(arg: str, cwd: str) -> Path:
    path = Path(os.path.expanduser(arg))
    if not path.is_absolute():
        path = Path(cwd) / path
    return Path(os.path.normpath(path))


_SPECIAL = ((stat.S_ISFIFO, "a FIFO"), (stat.S_ISSOCK, "a socket"), (stat.S_ISCHR, "a character device"),
            (stat.S_ISBLK, "a block device"))  # fmt: skip


def _read_regular(path: Path) -> bytes:
    # A FIFO with no writer would block the open (and Ctrl+C with it); /dev/zero never ends.
    # Non-blocking open, then fstat of that very descriptor: no race between check and read.
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC | getattr(os, "O_NOCTTY", 0))
    except OSError as exc:
        raise UserError(f"Cannot read {path}: {exc.strerror or exc}") from None
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            kind = next((name for test, name in _SPECIAL if test(mode)), "a special file")
            raise UserError(f"Not a regular file: {path} ({kind}); @ takes regular files only")
        os.set_blocking(fd, True)
        with open(fd, "rb", closefd=False) as f:
            return f.read()
    except OSError as exc:
        raise UserError(f"Cannot read {path}: {exc.strerror or exc}") from None
    finally:
        os.close(fd)


def process_file_args(args: list[str], cwd: str, *, auto_resize: bool = True) -> tuple[str, list[ImageContent]]:
    """Read the ``@file`` arguments.

    Args:
        args: The paths, without the ``@``, in command-line order.
        cwd: Folder that relative paths are resolved against.
        auto_resize: Setting ``images.auto_resize``: shrink large images to Pi's limits.

    Returns:
        ``(text to prepend to the first message, image attachments)``.

    Raises:
        UserError: A file does not exist, is a folder, cannot be read, or is binary but not an image.
    """
    from pi_coder.core.attachments import attach_image

    text_parts: list[str] = []
    images: list[ImageContent] = []
    for arg in args:
        path = _resolve(arg, cwd)
        if not path.exists():
            raise UserError(f"File not found: {path}")
        if path.is_dir():
            raise UserError(f"Not a file: {path} (@ takes files, not folders)")
        data = _read_regular(path)
        if not data:
            continue
        mime = detect_image_mime(data[:16])
        if mime is not None:
            attached = attach_image(data, mime, auto_resize=auto_resize)
            if attached.image is not None:
                images.append(attached.image)
            text_parts.append(f'<file name="{path}">{attached.note or ""}</file>\n')
            continue
        if b"\x00" in data[:8192]:
            raise UserError(f"Not a text or image file: {path}")
        content = data.decode("utf-8", errors="replace")
        text_parts.append(f'<file name="{path}">\n{content}\n</file>\n')
    return "".join(text_parts), images
