"""``pi_coder.cli.parse_args``: Pi's argument rules, and the help built from the same option table."""

from __future__ import annotations

import pytest

from pi_coder.cli import _OPTIONS, UsageError, parse_args


def test_messages_and_file_args_keep_their_order() -> None:
    opts = parse_args(["@a.md", "first", "-p", "@img.png", "second"])
    assert opts.print is True
    assert opts.file_args == ["a.md", "img.png"]
    assert opts.messages == ["first", "second"]


def test_value_options_and_equals_form() -> None:
    opts = parse_args(["--model", "sonnet:high", "--provider=anthropic", "--session-dir", "/s", "--api-key=k"])
    assert (opts.model, opts.provider, opts.session_dir, opts.api_key) == ("sonnet:high", "anthropic", "/s", "k")


def test_short_and_long_flags() -> None:
    opts = parse_args(["-c", "-r", "--no-session", "--no-tools", "-p"])
    assert opts.continue_session and opts.resume and opts.no_session and opts.no_tools and opts.print


def test_list_models_takes_an_optional_search() -> None:
    assert parse_args(["--list-models"]).list_models is True
    assert parse_args(["--list-models", "sonnet"]).list_models == "sonnet"
    bare = parse_args(["--list-models", "--no-session"])
    assert bare.list_models is True and bare.no_session
    with_file = parse_args(["--list-models", "@x"])
    assert with_file.list_models is True and with_file.file_args == ["x"]


def test_export_output_is_the_first_message() -> None:
    opts = parse_args(["--export", "s.jsonl", "out.html"])
    assert opts.export == "s.jsonl" and opts.messages == ["out.html"]


def test_double_dash_ends_options() -> None:
    opts = parse_args(["-p", "--", "--not-a-flag", "@not-a-file"])
    assert opts.messages == ["--not-a-flag", "@not-a-file"] and opts.file_args == []


def test_models_and_tools_are_split_unknown_tools_kept_for_extensions() -> None:
    opts = parse_args(["--models", "sonnet:high, gpt-4o ,", "--tools", "read,grep,teleport,read"])
    assert opts.models == ["sonnet:high", "gpt-4o"]
    # "teleport" may be an extension's tool: start-up warns about it once extensions have loaded
    # (tests/extensions/test_prompt_tools.py).
    assert opts.tools == ["read", "grep", "teleport"]
    assert opts.warnings == []


def test_invalid_thinking_is_a_usage_error() -> None:
    """Pi 1.6 warns and goes on; a level no model has is a typo, so pi stops (issue 33's table)."""
    with pytest.raises(UsageError, match='Invalid thinking level "maximal"'):
        parse_args(["--thinking", "maximal"])
    assert parse_args(["--thinking", "xhigh"]).thinking == "xhigh"


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--wat"], "Unknown option: --wat"),
        (["-x"], "Unknown option: -x"),
        (["--model"], "Option --model needs a value"),
        (["--mode", "xml"], 'Invalid mode "xml"'),
        (["--print=yes"], "does not take a value"),
    ],
)
def test_usage_errors(argv: list[str], message: str) -> None:
    with pytest.raises(UsageError, match=message):
        parse_args(argv)


@pytest.mark.parametrize(
    ("argv", "stdin_piped", "mode"),
    [
        ([], False, "interactive"),
        (["hi"], False, "interactive"),
        ([], True, "text"),
        (["-p"], False, "text"),
        (["--mode", "text"], False, "interactive"),  # Pi 1.6: text output, still the TUI on a terminal
        (["--mode", "json"], True, "json"),
        (["--mode", "rpc"], True, "rpc"),
    ],
)
def test_run_mode(argv: list[str], stdin_piped: bool, mode: str) -> None:
    assert parse_args(argv).run_mode(stdin_piped) == mode


@pytest.mark.parametrize("argv", [[], ["hi"], ["--mode", "text"]])
def test_redirected_stdout_runs_print_mode_as_in_pi(argv: list[str]) -> None:
    assert parse_args(argv).run_mode(False, stdout_terminal=False) == "text"
    assert parse_args([*argv, "--mode", "json"]).run_mode(False, stdout_terminal=False) == "json"


def test_help_command_declares_every_option() -> None:
    """The Typer command used for --help is built from the same table the parser reads."""
    import typer
    import typer.main

    from pi_coder.cli import _help_command

    app = typer.Typer(add_completion=False, rich_markup_mode=None)
    app.command()(_help_command())
    command = typer.main.get_command(app)
    declared = {opt for param in command.params for opt in param.opts}
    expected = {flag for option in _OPTIONS if option.dest != "help" for flag in option.flags}
    assert expected <= declared


def test_tui_mode_accepts_fullscreen_and_refuses_regular() -> None:
    assert parse_args(["--tui-mode", "fullscreen"]).tui_mode == "fullscreen"
    with pytest.raises(UsageError, match="full-screen only"):
        parse_args(["--tui-mode", "regular"])
