"""The images a TUI prompt carries: ``[image #N]`` markers (pastes, completed ``@image`` files) and
``@path`` words that name image files, prepared by ``core.attachments`` (the same downscaling as
print mode and the read tool). Runs in a thread: Pillow may take a moment on a large image.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from pi_coder.core.attachments import attach_image, image_references, read_image_file

if TYPE_CHECKING:
    from pi_coder.ai.types import ImageContent
    from pi_coder.tui.widgets.image_markers import PendingImage

__all__ = ["prompt_images"]


def prompt_images(
    text: str, pending: Sequence[PendingImage], cwd: str, *, auto_resize: bool = True
) -> tuple[str, list[ImageContent]]:
    """``(text to send, image blocks)``: the text gains one line per resize or omission note."""
    sources: list[tuple[bytes, str]] = [(item.data, item.mime_type) for item in pending]
    if "@" in text:
        for path in image_references(text, cwd):
            found = read_image_file(path)
            if found is not None:
                sources.append(found)
    images: list[ImageContent] = []
    notes: list[str] = []
    for data, mime in sources:
        attached = attach_image(data, mime, auto_resize=auto_resize)
        if attached.image is not None:
            images.append(attached.image)
        if attached.note:
            notes.append(attached.note)
    if notes:
        text = "\n".join([text, *notes])
    return text, images
