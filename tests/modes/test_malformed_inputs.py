"""Malformed flags and configuration files: the decision for each, as one table (issue 33).

Each row runs ``pi -p`` (faux provider, no key needed) with one mistake and checks the exit code
and the one line that explains it. The rule behind the decisions:

- exit 1 with one line: a command-line value that can only be a typo (the user is there to fix it
  at once), a file a flag names that does not exist, a models.toml that cannot be used, and a
  global settings.toml that cannot be read or parsed at all. Running on defaults instead would
  drop, unseen, whatever that file says about permissions, the sandbox and the environment;
- exit 0 with one warning: one bad value in an otherwise good settings file (that key falls back
  to its default, the rest applies, the warning names file and line), an unknown ``--tools``
  entry or a ``--models`` pattern matching nothing (Pi 1.6 goes on too; a pattern may match once
  a provider has a key), a broken mcp.json (pi runs without those servers), a broken
  credentials.json when the model needs no key from it;
- exit 0 in silence only where the input is not used by the run: ``[keybindings]`` (read by the
  TUI, which warns), trust.json (read only for a folder with project resources), an unknown
  settings key (kept for extensions, which may read their own keys), ``--session-dir`` with
  ``--no-session``, ``--system-prompt /`` (not a file, so its text).
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from tests.modes.pirun import PI, clean_env

SETPRIV = "/usr/bin/setpriv"

# name -> (extra flags, files in the config home ({name: text} or {name: (text, mode)}), exit code,
# text the stderr must contain ("" : stderr must be empty)). "FILE" in a flag is a plain file.
CASES: dict[str, tuple[list[str], dict[str, object], int, str]] = {
    # ---- flags
    "flag-unknown": (["--frobnicate"], {}, 1, "pi: Unknown option: --frobnicate. Run pi --help for the options."),
    "flag-mode-bad": (["--mode", "xml"], {}, 1, 'pi: Invalid mode "xml". Valid modes: text, json, rpc'),
    "flag-thinking-bad": (["--thinking", "loud"], {}, 1, 'pi: Invalid thinking level "loud". Valid values: off,'),
    "flag-max-turns-text": (["--max-turns", "abc"], {}, 1, 'pi: Invalid --max-turns "abc": give a whole number above 0'),
    "flag-max-turns-negative": (["--max-turns", "-3"], {}, 1, 'pi: Invalid --max-turns "-3"'),
    "flag-budget-negative": (["--max-budget-usd", "-1"], {}, 1, 'pi: Invalid --max-budget-usd "-1"'),
    "flag-permission-mode-bad": (["--permission-mode", "yolo"], {}, 1, 'pi: Invalid --permission-mode "yolo"'),
    "flag-sandbox-bad": (["--sandbox", "maybe"], {}, 1, 'pi: Invalid --sandbox "maybe"'),
    "flag-prompt-template-missing": (
        ["--prompt-template", "/nonexistent/t.md"], {}, 1, "pi: --prompt-template /nonexistent/t.md: no such file or folder",
    ),
    "flag-skill-missing": (["--skill", "/nonexistent/skill"], {}, 1, "pi: --skill /nonexistent/skill: no such file or folder"),
    "flag-theme-missing": (["--theme", "/nonexistent/t.json"], {}, 1, "pi: --theme /nonexistent/t.json: no such file or folder"),
    "flag-extension-missing": (["-e", "/nonexistent/ext.py"], {}, 1, "extension not found: /nonexistent/ext.py"),
    "flag-tools-unknown": (["--tools", "read,frob"], {}, 0, 'Warning: Unknown tool "frob". Valid tools: read,'),
    "flag-models-no-match": (["--models", "nosuchmodel*"], {}, 0, 'Warning: No models match pattern "nosuchmodel*"'),
    "flag-session-dir-unused": (["--session-dir", "FILE"], {}, 0, ""),
    "flag-system-prompt-is-text": (["--system-prompt", "/"], {}, 0, ""),
    # ---- settings.toml
    "settings-invalid-toml": ([], {"settings.toml": "theme = \n"}, 1, "settings.toml: invalid TOML: Invalid value (at line 1"),
    "settings-unreadable": ([], {"settings.toml": ("theme = 'dark'\n", 0)}, 1, "pi: Cannot read settings file "),
    "settings-is-a-folder": ([], {"settings.toml/": ""}, 1, "settings.toml: it is a folder; fix it"),
    "settings-wrong-type": ([], {"settings.toml": "retry = 5\n"}, 0, "(line 1, retry: expected a table); using the defaults"),
    "settings-bad-choice": ([], {"settings.toml": 'default_project_trust = "sometimes"\n'}, 0, "default_project_trust: Input"),
    "settings-one-bad-value": (
        [], {"settings.toml": "[compaction]\nenabled = 'x'\nreserve_tokens = 5\n"}, 0, "(line 2, compaction.enabled:",
    ),
    "settings-unknown-key": ([], {"settings.toml": "frobnicate = true\n"}, 0, ""),
    # ---- models.toml
    "models-invalid-toml": ([], {"models.toml": "[providers.x\n"}, 1, "models.toml: invalid TOML: Expected ']'"),
    "models-unknown-api": (
        [], {"models.toml": '[providers.x]\napi = "soap"\nbase_url = "http://127.0.0.1:9/v1"\nmodels = [{ id = "m" }]\n'},
        1, "providers.x.api 'soap' is not supported",
    ),
    "models-missing-base-url": (
        [], {"models.toml": '[providers.x]\napi = "openai-completions"\nmodels = [{ id = "m" }]\n'},
        1, "providers.x.base_url is required for a new provider",
    ),
    "models-unreadable": ([], {"models.toml": ('[providers.x]\napi = "openai-completions"\n', 0)}, 1, "models.toml: cannot read"),
    # ---- files the run does not use, or uses in part
    "keybindings-unknown-action": ([], {"settings.toml": '[keybindings]\nfrobnicate = "ctrl+k"\n'}, 0, ""),
    "keybindings-bad-key": ([], {"settings.toml": '[keybindings]\n"app.quit" = "ctrl+banana"\n'}, 0, ""),
    "trust-json-invalid": ([], {"trust.json": "{nope"}, 0, ""),
    "mcp-json-invalid": ([], {"mcp.json": "{nope"}, 0, "mcp.json: not valid JSON"),
    "credentials-invalid": ([], {"credentials.json": "{nope"}, 0, "credentials.json is not valid JSON (line 1"),
}


@pytest.mark.parametrize("name", list(CASES))
def test_malformed_input(tmp_path: Path, name: str) -> None:
    flags, files, code, text = CASES[name]
    home, project = tmp_path / "home", tmp_path / "project"
    home.mkdir()
    project.mkdir()
    (tmp_path / "afile").write_text("")
    unreadable = False
    for file, content in files.items():
        if file.endswith("/"):
            (home / file.rstrip("/")).mkdir()
            continue
        body, mode = content if isinstance(content, tuple) else (content, None)
        (home / file).write_text(str(body))
        if mode is not None:
            (home / file).chmod(mode)
            unreadable = True
    command = [*PI, "-p", "--no-session", "--provider", "faux", *(f.replace("FILE", str(tmp_path / "afile")) for f in flags), "hi"]
    if unreadable and os.geteuid() == 0:  # root reads anything: drop the capabilities that allow it
        if not Path(SETPRIV).exists():
            pytest.skip("running as root without setpriv")
        command = [SETPRIV, "--bounding-set=-dac_override,-dac_read_search", *command]
    env = clean_env(home) | {"PI_CODER_DISCOVERY_PORTS": ""}
    run = subprocess.run(command, cwd=project, env=env, capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)
    stderr = run.stderr.strip()
    assert run.returncode == code, (name, run.returncode, stderr)
    assert "Traceback" not in stderr
    if code == 1:
        lines = stderr.splitlines()
        assert len(lines) <= 2 and text in stderr, (name, stderr)  # one line (plus Pi's -ne hint for -e)
    elif text:
        assert len(stderr.splitlines()) == 1 and text in stderr, (name, stderr)
        assert stderr.startswith("Warning: ")
    else:
        assert stderr == "", (name, stderr)
