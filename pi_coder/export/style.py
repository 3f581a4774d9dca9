"""The theme's colours as the page's CSS: custom properties and Pygments token classes."""

from __future__ import annotations

from pi_coder.export.markup import TOKEN_CLASSES
from pi_coder.resources.themes import Theme

__all__ = ["theme_css"]

_VARS = {
    "accent": "accent", "border": "border", "border-muted": "borderMuted", "success": "success",
    "error": "error", "warning": "warning", "muted": "muted", "dim": "dim", "thinking": "thinkingText",
    "selected-bg": "selectedBg", "user-bg": "userMessageBg", "user-fg": "userMessageText",
    "custom-bg": "customMessageBg", "custom-fg": "customMessageText", "custom-label": "customMessageLabel",
    "tool-pending-bg": "toolPendingBg", "tool-ok-bg": "toolSuccessBg", "tool-err-bg": "toolErrorBg",
    "tool-title": "toolTitle", "tool-output": "toolOutput", "md-heading": "mdHeading", "md-link": "mdLink",
    "md-code": "mdCode", "md-code-block": "mdCodeBlock", "md-code-border": "mdCodeBlockBorder",
    "md-quote": "mdQuote", "md-quote-border": "mdQuoteBorder", "md-hr": "mdHr", "md-bullet": "mdListBullet",
    "diff-add": "toolDiffAdded", "diff-del": "toolDiffRemoved", "diff-ctx": "toolDiffContext",
    "bash": "bashMode",
}  # fmt: skip


def _luminance(hex_colour: str) -> float:
    r, g, b = (int(hex_colour[i : i + 2], 16) for i in (1, 3, 5))
    return 0.299 * r + 0.587 * g + 0.114 * b


def _mix(a: str, b: str, weight: float) -> str:
    """``a`` moved ``weight`` (0..1) of the way towards ``b``."""
    parts = (round(int(a[i : i + 2], 16) * (1 - weight) + int(b[i : i + 2], 16) * weight) for i in (1, 3, 5))
    return "#" + "".join(f"{p:02x}" for p in parts)


def theme_css(theme: Theme) -> str:
    """``:root`` custom properties for ``theme`` plus the ``.hl`` syntax colours."""
    user_bg = theme.hex("userMessageBg") or "#2a2f3a"
    dark = _luminance(user_bg) < 128
    default_fg, default_bg = ("#e6e6e6", "#1e2027") if dark else ("#1f2328", "#ffffff")
    page_bg = _export_hex(theme, "pageBg") or _mix(user_bg, "#000000" if dark else "#ffffff", 0.45)
    card_bg = _export_hex(theme, "cardBg") or _mix(user_bg, page_bg, 0.5)
    info_bg = _export_hex(theme, "infoBg") or _mix(user_bg, theme.hex("accent") or default_bg, 0.15)
    props = {
        "page-bg": page_bg, "card-bg": card_bg, "info-bg": info_bg,
        "fg": theme.hex("text") or default_fg,
    }  # fmt: skip
    for name, token in _VARS.items():
        props[name] = theme.hex(token) or props["fg"]
    lines = [":root{color-scheme:" + ("dark" if dark else "light") + ";"]
    lines.extend(f"--{name}:{value};" for name, value in props.items())
    lines.append("}")
    for token, classes in TOKEN_CLASSES.items():
        colour = theme.hex(token)
        if colour:
            selector = ",".join(f".hl .{c}" for c in classes.split())
            lines.append(f"{selector}{{color:{colour}}}")
    lines.append(".hl .c,.hl .c1,.hl .cm{font-style:italic}")
    return "\n".join(lines)


def _export_hex(theme: Theme, key: str) -> str | None:
    value = theme.export.get(key)
    if value is None:
        return None
    from pi_coder.resources.themes import color_to_hex

    return color_to_hex(value)
