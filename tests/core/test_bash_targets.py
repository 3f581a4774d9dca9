"""Which files outside the folder a bash command names as written (checkpoints keep them first)."""

from __future__ import annotations

from pathlib import Path

import pytest

from pi_coder.checkpoints.bash_targets import MAX_FILES_PER_FOLDER, outside_targets


@pytest.fixture
def tree(tmp_path: Path) -> tuple[Path, Path]:
    work, out = tmp_path / "work", tmp_path / "out"
    work.mkdir()
    (out / "dir").mkdir(parents=True)
    (out / "f.txt").write_text("x")
    return work, out


@pytest.mark.parametrize(
    ("command", "expected"),
    [
        ("echo x > ../out/a.txt", ["a.txt"]),
        ("echo x >> ../out/a.txt 2>&1", ["a.txt"]),
        ("ls | tee -a ../out/log.txt", ["log.txt"]),
        ("sed -i 's/a/b/' ../out/f.txt", ["f.txt"]),
        ("sed 's/a/b/' ../out/f.txt", []),  # no -i: reads only
        ("touch ../out/n.txt && rm -f ../out/f.txt", ["n.txt", "f.txt"]),
        ("cp local.txt ../out/dir/", ["dir/local.txt"]),
        ("mv ../out/f.txt ../out/g.txt", ["g.txt", "f.txt"]),
        ("sudo tee ../out/t.txt < input", ["t.txt"]),
        ("dd if=/dev/zero of=../out/z.bin count=1", ["z.bin"]),
        ("echo $(touch ../out/sub.txt)", ["sub.txt"]),
        ("echo x > inside.txt && sed -i s/a/b/ local.txt", []),  # inside the folder: the snapshot has them
        ("echo x > /dev/null", []),
        ("rm ../out/*.txt", ["f.txt"]),
        ('python -c "open(\'../out/p.txt\', \'w\')"', []),  # a program's own writes are not seen
    ],
)
def test_targets(tree: tuple[Path, Path], command: str, expected: list[str]) -> None:
    work, out = tree
    found = outside_targets(command, str(work))
    want = [str((out / name).resolve()) for name in expected]
    assert sorted(found) == sorted(want)


def test_absolute_and_home_paths(tree: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch) -> None:
    work, out = tree
    monkeypatch.setenv("HOME", str(out))
    assert outside_targets(f"touch {out}/abs.txt ~/home.txt", str(work)) == [
        str((out / "abs.txt").resolve()),
        str((out / "home.txt").resolve()),
    ]


def test_a_folder_stands_for_its_files_up_to_a_limit(tree: tuple[Path, Path]) -> None:
    work, out = tree
    many = out / "many"
    many.mkdir()
    for i in range(MAX_FILES_PER_FOLDER + 20):
        (many / f"{i}.txt").write_text("x")
    (out / "dir" / "one.txt").write_text("1")
    assert outside_targets("rm -r ../out/dir", str(work)) == [str((out / "dir" / "one.txt").resolve())]
    assert len(outside_targets("rm -rf ../out/many", str(work))) == MAX_FILES_PER_FOLDER
