"""Slash commands: a small table of (name, description, handler).

Handlers receive the app and the text after the command name. /model, /settings, /resume, /tree
and /fork run the dialog flows of ``pi_coder.tui.screens.navigation``; /thinking and /scoped-models
live in ``model_commands``, /clone, /export, /import, /changelog and /debug in ``session_commands``.
"""

from __future__ import annotations

from collections.abc import Sequence

from pi_coder.tui.context import CommandContext, SlashCommand, extension_runner
from pi_coder.tui.format import format_tokens
from pi_coder.tui.keys import KEY_ACTIONS, display_keys

__all__ = ["COMMANDS", "SlashCommand", "find_command", "parse_command"]


async def _new(app: CommandContext, args: str) -> None:
    await app.new_session()


async def _compact(app: CommandContext, args: str) -> None:
    await app.compact(args.strip() or None)


async def _session(app: CommandContext, args: str) -> None:
    session = app.session
    stats = session.stats()
    lines = ["**Session**", ""]
    name = session.session_name
    if name:
        lines.append(f"- Name: {name}")
    lines.append(f"- File: {session.session_file or 'In-memory'}")
    lines.append(f"- ID: {session.session_id}")
    lines += [
        "",
        "**Messages**",
        "",
        f"- User: {stats.user_messages}",
        f"- Assistant: {stats.assistant_messages}",
        f"- Tool calls: {stats.tool_calls}",
        f"- Tool results: {stats.tool_results}",
        f"- Total: {stats.total_messages}",
        "",
        "**Tokens**",
        "",
        f"- Input: {stats.input:,}",
        f"- Output: {stats.output:,}",
    ]
    if stats.cache_read:
        lines.append(f"- Cache read: {stats.cache_read:,}")
    if stats.cache_write:
        lines.append(f"- Cache write: {stats.cache_write:,}")
    lines.append(f"- Total: {stats.total_tokens:,}")
    if stats.cost:
        lines += ["", "**Cost**", "", f"- Total: ${stats.cost:.4f}"]
    if stats.context_window:
        pct = "?" if stats.context_percent is None else f"{stats.context_percent:.1f}%"
        used = format_tokens(stats.context_tokens) if stats.context_tokens is not None else "?"
        lines += ["", f"Context: {used} / {format_tokens(stats.context_window)} ({pct})"]
    await app.show_markdown("\n".join(lines))


async def _name(app: CommandContext, args: str) -> None:
    name = args.strip()
    if not name:
        current = app.session.session_name
        await app.notice(f"Session name: {current}" if current else "Usage: /name <name>")
        return
    app.session.set_session_name(name)
    await app.notice(f"Session name set: {name}")
    app.refresh_footer()


async def _copy(app: CommandContext, args: str) -> None:
    text = app.session.last_assistant_text()
    if not text:
        await app.notice("No agent messages to copy yet.", "warning")
        return
    app.copy_to_clipboard(text)
    await app.notice("Copied last agent message to clipboard")


async def _export(app: CommandContext, args: str) -> None:
    from pi_coder.tui.session_commands import export_command

    await export_command(app, args)


async def _import(app: CommandContext, args: str) -> None:
    from pi_coder.tui.session_commands import import_command

    await import_command(app, args)


async def _clone(app: CommandContext, args: str) -> None:
    from pi_coder.tui.session_commands import clone_command

    await clone_command(app, args)


async def _changelog(app: CommandContext, args: str) -> None:
    from pi_coder.tui.session_commands import changelog_command

    await changelog_command(app, args)


async def _debug(app: CommandContext, args: str) -> None:
    from pi_coder.tui.session_commands import debug_command

    await debug_command(app, args)


async def _thinking(app: CommandContext, args: str) -> None:
    from pi_coder.tui.model_commands import thinking_command

    await thinking_command(app, args)


async def _scoped_models(app: CommandContext, args: str) -> None:
    from pi_coder.tui.model_commands import scoped_models_command

    await scoped_models_command(app, args)


async def _hotkeys(app: CommandContext, args: str) -> None:
    keys = app.effective_keys
    rows = ["| Key | Action |", "|---|---|"]
    for action in KEY_ACTIONS:
        rows.append(f"| `{display_keys(keys[action.id])}` | {action.description} (`{action.id}`) |")
    for key, shortcut in app.extension_shortcut_list:
        name = shortcut.extension.name if shortcut.extension else "extension"
        rows.append(f"| `{display_keys(key)}` | {shortcut.description or '(extension shortcut)'} (`{name}`) |")
    rows += [
        "| `Ctrl+C` twice | Quit |",
        "| `/` | Slash commands |",
        "| `@` | Complete a project file |",
        "| `!cmd` | Run a shell command, output added to the context |",
        "| `!!cmd` | Run a shell command, output kept out of the context |",
    ]
    commands = ["| Command | Description |", "|---|---|"]
    for command in app.commands:
        usage = f"/{command.name} {command.args_hint}".strip()
        commands.append(f"| `{usage}` | {command.description} |")
    await app.show_markdown(
        "**Slash commands**\n\n" + "\n".join(commands) + "\n\n**Keyboard shortcuts**\n\n" + "\n".join(rows)
    )


async def _reload(app: CommandContext, args: str) -> None:
    """Re-read extensions, settings, templates, skills, themes and context files (docs/extensions-runtime.md#replacement-reload-and-quit)."""
    session = app.session
    if session.is_streaming:
        await app.notice("Cannot reload while the agent is working; wait or press Esc first.", "warning")
        return
    runner = extension_runner(session)
    if runner is not None:
        from pi_coder.tui.extension_ui import reload_extensions

        if not await reload_extensions(app, COMMANDS):
            await app.notice("Cannot reload while the agent is working; wait or press Esc first.", "warning")
            return
        warnings = list(runner.reload_warnings)  # the runner's reload re-read the session's resources
    else:
        warnings = session.reload_resources()
    from pi_coder.tui.theming import session_theme_paths

    themes = app.themes
    themes.extra_paths = session_theme_paths(session)  # this run's paths and resources_discover's
    themes.use(session.settings.theme or "dark")  # a failure is shown by the theme's own warning
    for warning in warnings:
        await app.notice(warning, "warning")
    app.refresh_footer()
    packages = session.discovered_paths.packages if session.discovered_paths is not None else []
    listed = "".join(f"\n  {line}" for line in packages)
    await app.notice(
        "Reloaded extensions, settings, prompt templates, skills, themes and context files"
        + (f"; packages:{listed}" if listed else "")
    )


async def _quit(app: CommandContext, args: str) -> None:
    await app.quit_app()


async def _model(app: CommandContext, args: str) -> None:
    from pi_coder.tui.screens.navigation import open_model_picker

    await open_model_picker(app, args.strip())


async def _settings(app: CommandContext, args: str) -> None:
    from pi_coder.tui.screens.navigation import open_settings

    await open_settings(app)


async def _resume(app: CommandContext, args: str) -> None:
    from pi_coder.tui.screens.navigation import open_session_picker

    await open_session_picker(app)


async def _tree(app: CommandContext, args: str) -> None:
    from pi_coder.tui.screens.navigation import open_tree

    await open_tree(app)


async def _fork(app: CommandContext, args: str) -> None:
    from pi_coder.tui.screens.navigation import open_fork

    await open_fork(app)


async def _login(app: CommandContext, args: str) -> None:
    from pi_coder.tui.login import login

    await login(app, args)


async def _logout(app: CommandContext, args: str) -> None:
    from pi_coder.tui.login import logout

    await logout(app, args)


async def _undo(app: CommandContext, args: str) -> None:
    from pi_coder.tui.screens.checkpoint_commands import undo_command

    await undo_command(app, args)


async def _redo(app: CommandContext, args: str) -> None:
    from pi_coder.tui.screens.checkpoint_commands import redo_command

    await redo_command(app, args)


async def _checkpoints(app: CommandContext, args: str) -> None:
    from pi_coder.tui.screens.checkpoint_commands import checkpoints_command

    await checkpoints_command(app, args)


async def _mcp(app: CommandContext, args: str) -> None:
    manager = app.session.mcp
    if manager is None:
        await app.notice("No MCP servers (mcp.json in the configuration folder; see pi mcp --help).")
        return
    lines = await manager.command(args)
    await app.show_markdown("**MCP servers**\n\n```\n" + "\n".join(lines) + "\n```")


async def _trust(app: CommandContext, args: str) -> None:
    from pi_coder.tui.trust_dialog import show_trust

    await show_trust(app)


COMMANDS: tuple[SlashCommand, ...] = (
    SlashCommand("new", "Start a new session", _new),
    SlashCommand("compact", "Compact the context (optional focus instructions)", _compact, "[instructions]"),
    SlashCommand("session", "Show session file, id, message counts, tokens and cost", _session),
    SlashCommand("model", "Select a model (or switch to the one named)", _model, "[term]"),
    SlashCommand("thinking", "Set the thinking level (a list of the model's levels without one)", _thinking, "[level]"),
    SlashCommand("scoped-models", "Choose the models Ctrl+P cycles (Ctrl+S saves them)", _scoped_models),
    SlashCommand("settings", "Change settings (theme, thinking, queue modes, ...)", _settings),
    SlashCommand("resume", "Resume another session", _resume),
    SlashCommand("tree", "Navigate the session tree (same file)", _tree),
    SlashCommand("fork", "Fork a new session from an earlier message", _fork),
    SlashCommand("clone", "Copy the current branch into a new session", _clone),
    SlashCommand("undo", "Undo the last prompt: its file changes and the conversation", _undo),
    SlashCommand("redo", "Redo what /undo undid (until a new prompt)", _redo),
    SlashCommand("checkpoints", "List the files each prompt changed (a number shows its diff)", _checkpoints, "[n]"),
    SlashCommand("name", "Set the session name", _name, "<name>"),
    SlashCommand("copy", "Copy the last answer to the clipboard", _copy),
    SlashCommand("export", "Export the session as HTML, or as JSONL (a .jsonl file name)", _export, "[file]"),
    SlashCommand("import", "Open a JSONL session file as a new session of this folder", _import, "<file>"),
    SlashCommand("hotkeys", "Show keyboard shortcuts", _hotkeys),
    SlashCommand("login", "Store an API key for a provider", _login, "[provider]"),
    SlashCommand("logout", "Remove a stored API key", _logout, "[provider]"),
    SlashCommand("trust", "Show or change whether this project folder is trusted", _trust),
    SlashCommand("changelog", "Show the changelog", _changelog),
    SlashCommand("debug", "Write a state report for bug reports (no keys) and show it", _debug),
    SlashCommand("reload", "Reload extensions, settings, templates, skills, themes and context files", _reload),
    SlashCommand("mcp", "MCP servers: state, tools, errors; reconnect|enable|disable <server>", _mcp, "[action server]"),
    SlashCommand("quit", "Quit pi", _quit),
)


def find_command(name: str, commands: Sequence[SlashCommand] = COMMANDS) -> SlashCommand | None:
    return next((c for c in commands if c.name == name), None)


def parse_command(text: str) -> tuple[str, str] | None:
    """``/name args`` -> (name, args); None when the text is not a slash command."""
    if not text.startswith("/") or text.startswith("//"):
        return None
    head, _, rest = text[1:].partition(" ")
    head = head.strip()
    if not head or "\n" in head:
        head = head.split("\n", 1)[0]
        rest = text[1 + len(head) :].lstrip(" ")
    return (head, rest) if head else None
