"""Packages made on disk for the package tests: a source folder, a wheel, a git repository."""

from __future__ import annotations

import base64
import hashlib
import json
import subprocess
import textwrap
import zipfile
from pathlib import Path

THEME = Path(__file__).parents[2] / "themes" / "dark.json"


def module_files(name: str, version: str = "1.0.0") -> dict[str, str]:
    """The files of package ``name``'s import package ``pi_demo_<name>`` (relative paths -> text):
    an extension registering ``/<name>-hello``, a skill, a prompt and a theme, each named after ``name``."""
    module = f"pi_demo_{name}"
    theme = json.loads(THEME.read_text(encoding="utf-8"))
    theme["name"] = f"{name}-theme"
    return {
        f"{module}/__init__.py": textwrap.dedent(
            f"""
            VERSION = {version!r}

            def extension(pi):
                pi.register_command("{name}-hello", lambda args, ctx: None, description="hello from {name} " + VERSION)
            """
        ),
        f"{module}/skills/{name}-skill/SKILL.md": f"---\nname: {name}-skill\ndescription: A skill of {name}.\n---\nDo it.\n",
        f"{module}/prompts/{name}-prompt.md": f"---\ndescription: A prompt of {name}\n---\nSay {name}.\n",
        f"{module}/themes/{name}-theme.json": json.dumps(theme),
    }


def make_source(root: Path, name: str, version: str = "1.0.0") -> Path:
    """A folder with pyproject.toml (entry point ``pi_coder.extensions``) and ``src/`` layout."""
    root.mkdir(parents=True, exist_ok=True)
    (root / "pyproject.toml").write_text(
        textwrap.dedent(
            f"""
            [project]
            name = "pi-demo-{name}"
            version = "{version}"

            [project.entry-points."pi_coder.extensions"]
            {name} = "pi_demo_{name}:extension"
            """
        ),
        encoding="utf-8",
    )
    for relative, text in module_files(name, version).items():
        path = root / "src" / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return root


def make_wheel(folder: Path, name: str, version: str = "1.0.0") -> Path:
    """``pi_demo_<name>-<version>-py3-none-any.whl`` in ``folder``, written as a zip (no build tool)."""
    folder.mkdir(parents=True, exist_ok=True)
    dist = f"pi_demo_{name}-{version}"
    files = dict(module_files(name, version))
    files[f"{dist}.dist-info/METADATA"] = f"Metadata-Version: 2.1\nName: pi-demo-{name}\nVersion: {version}\n"
    files[f"{dist}.dist-info/WHEEL"] = "Wheel-Version: 1.0\nGenerator: tests\nRoot-Is-Purelib: true\nTag: py3-none-any\n"
    files[f"{dist}.dist-info/entry_points.txt"] = f"[pi_coder.extensions]\n{name} = pi_demo_{name}:extension\n"
    record = []
    for path, text in files.items():
        digest = base64.urlsafe_b64encode(hashlib.sha256(text.encode()).digest()).rstrip(b"=").decode()
        record.append(f"{path},sha256={digest},{len(text.encode())}")
    record.append(f"{dist}.dist-info/RECORD,,")
    files[f"{dist}.dist-info/RECORD"] = "\n".join(record) + "\n"
    wheel = folder / f"{dist}-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as archive:
        for path, text in files.items():
            archive.writestr(path, text)
    return wheel


def git(*args: str, cwd: Path) -> str:
    env = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@t",
           "HOME": str(cwd), "PATH": "/usr/bin:/bin"}  # fmt: skip
    done = subprocess.run(["git", *args], cwd=cwd, env=env, capture_output=True, text=True, check=True)
    return done.stdout


def make_git_repo(tmp: Path, name: str, *, plain: bool = False) -> Path:
    """A bare repository ``<tmp>/<name>.git`` holding a package (``plain``: resource folders only,
    no pyproject.toml; the extension is ``extensions/<name>.py``), with tag ``v1``."""
    work = tmp / f"{name}-work"
    if plain:
        work.mkdir(parents=True)
        for relative, text in module_files(name).items():
            top, _, rest = relative.partition("/")
            target = work / ("extensions/" + name + ".py" if rest == "__init__.py" else rest)
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(text, encoding="utf-8")
    else:
        make_source(work, name)
    git("init", "--quiet", "--initial-branch=main", cwd=work)
    git("add", "-A", cwd=work)
    git("commit", "--quiet", "-m", "v1", cwd=work)
    git("tag", "v1", cwd=work)
    bare = tmp / f"{name}.git"
    git("clone", "--quiet", "--bare", str(work), str(bare), cwd=tmp)
    return bare


def push_change(tmp: Path, name: str, relative: str, text: str) -> None:
    """Commit a change to ``relative`` in the work tree of ``make_git_repo`` and push it to main."""
    work = tmp / f"{name}-work"
    (work / relative).parent.mkdir(parents=True, exist_ok=True)
    (work / relative).write_text(text, encoding="utf-8")
    git("add", "-A", cwd=work)
    git("commit", "--quiet", "-m", "change", cwd=work)
    git("push", "--quiet", str(tmp / f"{name}.git"), "main", cwd=work)
