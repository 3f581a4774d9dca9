"""@file processing, prompt assembly, the model table, and the exit-code guard of the launcher."""

from __future__ import annotations

import base64
from pathlib import Path

import pytest

from pi_coder.errors import UserError
from pi_coder.modes import launch
from pi_coder.modes.files import detect_image_mime, process_file_args
from pi_coder.modes.list_models import format_model_table, format_tokens
from pi_coder.modes.options import CliOptions
from pi_coder.modes.setup import build_prompts

PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="
)


def test_text_files_are_inlined_and_images_attached(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("print(1)\n")
    (tmp_path / "empty.txt").write_text("")
    (tmp_path / "pic.png").write_bytes(PNG)
    text, images = process_file_args(["a.py", "empty.txt", str(tmp_path / "pic.png")], str(tmp_path))
    assert text == f'<file name="{tmp_path / "a.py"}">\nprint(1)\n\n</file>\n<file name="{tmp_path / "pic.png"}"></file>\n'
    assert len(images) == 1 and images[0].mime_type == "image/png"
    assert base64.b64decode(images[0].data) == PNG


def test_home_relative_paths(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    (tmp_path / "n.txt").write_text("x")
    text, _ = process_file_args(["~/n.txt"], "/")
    assert text.startswith(f'<file name="{tmp_path / "n.txt"}">')


@pytest.mark.parametrize(
    ("setup", "message"),
    [
        (lambda p: None, "File not found"),
        (lambda p: p.mkdir(), "Not a file"),
        (lambda p: p.write_bytes(b"\x00\x01binary\x00"), "Not a text or image file"),
    ],
)
def test_file_errors(tmp_path: Path, setup, message: str) -> None:  # type: ignore[no-untyped-def]
    target = tmp_path / "thing"
    setup(target)
    with pytest.raises(UserError, match=message):
        process_file_args(["thing"], str(tmp_path))


def test_image_sniffing() -> None:
    assert detect_image_mime(PNG[:16]) == "image/png"
    assert detect_image_mime(b"\xff\xd8\xff\xe0rest") == "image/jpeg"
    assert detect_image_mime(b"GIF89a....") == "image/gif"
    assert detect_image_mime(b"RIFF\x00\x00\x00\x00WEBPVP8 ") == "image/webp"
    assert detect_image_mime(b"hello world") is None


def test_prompt_assembly() -> None:
    assert build_prompts(["a", "b"], "", None) == ["a", "b"]
    assert build_prompts(["a"], "<file/>\n", "in") == ["<file/>\nin\n\na"]
    assert build_prompts([], "<file/>\n", "in") == ["<file/>\nin"]
    assert build_prompts([], "", None) == []


def test_token_formatting_and_table() -> None:
    from pi_coder.ai.types import Model

    assert [format_tokens(n) for n in (512, 8192, 200_000, 1_000_000, 1_048_576)] == ["512", "8.2K", "200K", "1M", "1M"]
    table = format_model_table(
        [
            Model(id="m1", api="x", provider="p", context_window=200_000, max_tokens=64_000, reasoning=True),
            Model(id="m2", api="x", provider="p", cost={"input": 2.5, "output": 15, "cache_read": 0.075}),
        ]
    )
    assert table.splitlines() == [
        "provider  model  context  max-out  thinking  images  input  output  cache-read",
        "p         m1     200K     64K      yes       no      -      -       -",
        "p         m2     128K     16.4K    no        no      $2.50  $15     $0.075",
    ]


def _no_tui(*args: object, **kwargs: object) -> int:
    raise AssertionError("the TUI must not start")


def test_guard_turns_user_errors_into_one_line(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    def fail(options: CliOptions, **_: object) -> int:
        raise UserError("you did a thing")

    monkeypatch.setattr(launch, "run", fail)
    assert launch.run_guarded(CliOptions(), run_interactive=_no_tui) == 1
    assert capsys.readouterr().err == "pi: you did a thing\n"


def test_guard_logs_internal_errors(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("PI_CODER_HOME", str(tmp_path))

    def crash(options: CliOptions, **_: object) -> int:
        raise RuntimeError("kaput")

    monkeypatch.setattr(launch, "run", crash)
    assert launch.run_guarded(CliOptions(api_key="sk-secret"), run_interactive=_no_tui) == 1
    err = capsys.readouterr().err
    assert err.startswith("pi: internal error: RuntimeError: kaput.") and "Traceback" not in err
    [log] = (tmp_path / "logs").iterdir()
    assert str(log) in err
    text = log.read_text()
    assert "Traceback" in text and "kaput" in text and "sk-secret" not in text
