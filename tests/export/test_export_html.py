"""``pi_coder.export.html``: one self-contained page with every entry of the session.

What the page does in a browser is in test_viewer_browser.py; this checks the file itself.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from pi_coder.export.entries import lazy
from pi_coder.export.html import default_export_path, export_session_html, render_session_html
from pi_coder.resources.themes import load_theme
from tests.export.sessions import large_session, small_session


def _page(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setenv("MY_TOKEN", "hunter2hunter2")
    return render_session_html(small_session(tmp_path), theme=load_theme("dark"))


def test_text_is_escaped_and_rendered(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    html = _page(tmp_path, monkeypatch)
    assert html.startswith("<!DOCTYPE html>")
    assert "Fix &lt;script&gt;window.__pwned=1&lt;/script&gt; and &lt;img src=x onerror=" in html
    assert "<script>window" not in html and "<img src=x" not in html
    # Only the viewer's script runs (its hash is the only one the policy allows), nothing is fetched.
    assert len(re.findall(r"<script>", html)) == 1
    assert "script-src 'sha256-" in html and "default-src 'none'" in html
    assert not re.search(
        r"""(src|href)=["']?(https?:)?//""", html.replace('href="http://example.invalid/a.png"', "")
    )
    # Markdown: code highlighted by Pygments, raw HTML shown as text, images as links, no javascript: links.
    assert "<span class=mi>1</span> <span class=o>&lt;</span> <span class=mi>2</span>" in html
    assert '<a class="img-link" href="http://example.invalid/a.png">[image: pic]</a>' in html
    assert "[link](javascript:alert(1))" in html and 'href="javascript' not in html
    assert 'src="data:image/png;base64,AAAA"' in html


def test_tools_thinking_and_usage(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    html = _page(tmp_path, monkeypatch)
    assert '<details class="thinking"><summary>Thinking</summary><div class="md"><p>secret plan</p>' in html
    assert '<details class="tool ok"><summary><span class="tn">edit</span> <code>a.py</code>' in html
    assert '<span class="del">-2 old line</span><span class="add">+2 new line</span>' in html
    assert (
        '<details class="tool err"><summary><span class="tn">bash</span> <code>$ env | grep KEY</code>'
        in html
    )
    assert '<pre class="args">{\n  &quot;command&quot;: &quot;env | grep KEY&quot;\n}</pre>' in html
    footer = re.search(r'<footer class="meta">(.*?)</footer>', html)
    assert footer is not None
    assert footer.group(1) == (
        '<span class="model">local/test-model</span><span>1,001 in</span><span>201 out</span>'
        '<span>5,000 cache read</span><span class="cost">$0.0042</span>'
    )
    assert '<div class="notice error">Error: overloaded</div>' in html
    assert '<span class="tag">start</span>' in html  # the label of the first message
    assert "$ git status" in html and "clean" in html


def test_secrets_are_redacted(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    html = _page(tmp_path, monkeypatch)
    assert "sk-proj-abcdefghijklmnopqrstuvwxyz0123" not in html and "hunter2hunter2" not in html
    assert "OPENAI_API_KEY=[redacted]\nMY_TOKEN=[redacted]" in html


def test_every_entry_and_branch_is_in_the_page(tmp_path: Path) -> None:
    store = large_session(tmp_path, 400, branch_every=20)
    html = render_session_html(store, theme=load_theme("dark"))
    data = json.loads(
        re.search(r'<script type="application/json" id="pi-data">(.*?)</script>', html).group(1)
    )  # type: ignore[union-attr]
    assert len(data["p"]) == len(store.get_entries()) == 400
    forks = re.findall(r'<nav class="fork" data-i="(\d+)"><span>2 branches</span>', html)
    assert len(forks) == 4  # turns 20, 40, 60 and 80 have a second answer
    # The current branch is shown on load, the others are hidden until chosen.
    shown = re.findall(r'<article class="e [^"]*" id="e\d+" data-i="\d+">', html)
    hidden = re.findall(r'<article class="e [^"]*" id="e\d+" data-i="\d+" hidden>', html)
    assert len(hidden) == 4 * 3  # each alternative: question, answer calling read, final answer
    assert (
        len(shown) == len(store.get_branch()) - (len(store.get_branch()) - 1) // 4
    )  # tool results sit under their call
    assert data["leaf"] == max(range(400), key=data["o"].__getitem__)
    # In the tree the main line stays flush left; a later branch is indented.
    assert re.search(r'<div class="r user on" data-i="\d+">Turn 79: please', html)
    assert re.search(
        r'<div class="r user" data-i="\d+" style="padding-left:1.3em">Alternative 20: please', html
    )


def test_lazy_bodies_cannot_end_their_script(tmp_path: Path) -> None:
    held = lazy('<a href="x</script><script>alert(1)</script>">t</a><!-- x -->')
    assert held.count("</script>") == 1 and held.endswith("</script>") and "<!--" not in held


def test_theme_colours_and_the_theme_setting(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    store = small_session(tmp_path)
    light = load_theme("light")
    html = render_session_html(store, theme=light)
    assert f"--user-bg:{light.hex('userMessageBg')};" in html and "color-scheme:light" in html
    assert (
        f".hl .k,.hl .kc,.hl .kd,.hl .kn,.hl .kp,.hl .kr,.hl .ow{{color:{light.hex('syntaxKeyword')}}}"
        in html
    )
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("PI_CODER_HOME", str(home))
    (home / "settings.toml").write_text('theme = "light"\n')
    assert "color-scheme:light" in render_session_html(store)
    (home / "settings.toml").write_text('theme = "no-such-theme"\n')
    assert "color-scheme:dark" in render_session_html(store)  # an unknown theme falls back to dark


def test_export_file_and_default_name(tmp_path: Path) -> None:
    store = small_session(tmp_path)
    session_file = store.session_file
    assert session_file is not None and session_file.exists()
    out = export_session_html(session_file, tmp_path / "deep" / "page.html")
    assert out == tmp_path / "deep" / "page.html" and "git status" in out.read_text()
    default = export_session_html(session_file, cwd=tmp_path)
    assert default == default_export_path(session_file, tmp_path)
    assert default.name == f"pi-session-{session_file.stem}.html"


def test_markdown_and_pygments_load_only_when_exporting(tmp_path: Path) -> None:
    probe = (
        "import json, sys; import pi_coder.export.html, pi_coder.modes.launch, pi_coder.cli; "
        "print(json.dumps(sorted(m for m in sys.modules if m.split('.')[0] in ('markdown_it', 'pygments'))))"
    )
    env = {"PI_CODER_HOME": str(tmp_path), "PATH": "/usr/bin:/bin"}
    run = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, timeout=60, env=env, check=True
    )
    assert json.loads(run.stdout) == []
    version = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "pi_coder", "--version"],
        capture_output=True, text=True, timeout=60, env=env,
    )  # fmt: skip
    assert version.returncode == 0, version.stderr[-500:]
    assert "markdown_it" not in version.stderr and "pygments" not in version.stderr
