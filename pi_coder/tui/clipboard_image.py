"""Reading an image from the system clipboard (Ctrl+V in the editor).

The first available source answers: the command in ``PI_CODER_CLIPBOARD_IMAGE_COMMAND`` (split
like a shell line, run without a shell; it prints the image bytes), then ``wl-paste --type
image/png`` under Wayland, ``xclip -selection clipboard -t image/png -o`` under X11 and
``pngpaste -`` on macOS. Output that is not a PNG, JPEG, GIF or WebP image (an empty clipboard,
text, an error) counts as no image, and Ctrl+V pastes text as before.
"""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
from collections.abc import Mapping

from pi_coder.tools import detect_image_mime

__all__ = ["COMMAND_VAR", "clipboard_image_commands", "read_clipboard_image"]

COMMAND_VAR = "PI_CODER_CLIPBOARD_IMAGE_COMMAND"
_TIMEOUT = 5.0
_MAX_BYTES = 64 * 1024 * 1024


def clipboard_image_commands(env: Mapping[str, str] | None = None) -> list[list[str]]:
    """The commands to try, in order, for this environment."""
    env = os.environ if env is None else env
    commands: list[list[str]] = []
    configured = env.get(COMMAND_VAR, "").strip()
    if configured:
        try:
            commands.append(shlex.split(configured))
        except ValueError:
            pass
    if env.get("WAYLAND_DISPLAY") and shutil.which("wl-paste"):
        commands.append(["wl-paste", "--no-newline", "--type", "image/png"])
    if env.get("DISPLAY") and shutil.which("xclip"):
        commands.append(["xclip", "-selection", "clipboard", "-t", "image/png", "-o"])
    if sys.platform == "darwin" and shutil.which("pngpaste"):
        commands.append(["pngpaste", "-"])
    return commands


def read_clipboard_image(env: Mapping[str, str] | None = None) -> tuple[bytes, str] | None:
    """``(image bytes, mime type)`` from the clipboard, or ``None`` (no tool, no image). Blocks; run in a thread."""
    for command in clipboard_image_commands(env):
        try:
            done = subprocess.run(
                command, capture_output=True, timeout=_TIMEOUT, check=False, stdin=subprocess.DEVNULL
            )
        except (OSError, subprocess.SubprocessError):
            continue
        data = done.stdout
        if done.returncode != 0 or not data or len(data) > _MAX_BYTES:
            continue
        mime = detect_image_mime(data[:16])
        if mime is not None:
            return data, mime
    return None
