"""pi_coder._dataclass_cache: dataclass methods compiled once and kept in a file between runs.

Each case runs a fresh interpreter (the cache replaces ``exec`` in the ``dataclasses`` module of
the process that installs it).
"""

from __future__ import annotations

import marshal
import subprocess
import sys
from pathlib import Path

SCRIPT = """
import sys
from pi_coder import _dataclass_cache
_dataclass_cache.install(sys.argv[1])
import dataclasses

@dataclasses.dataclass(slots=True, kw_only=True)
class Point:
    x: int
    y: int = 2
    tags: list[str] = dataclasses.field(default_factory=list)

@dataclasses.dataclass(frozen=True)
class Frozen:
    name: str
    size: int = 0

p = Point(x=1)
assert (p.x, p.y, p.tags) == (1, 2, [])
assert p == Point(x=1, y=2) and p != Point(x=3)
assert repr(p) == "Point(x=1, y=2, tags=[])", repr(p)
assert Point.__init__.__annotations__ == {"x": int, "y": int, "tags": list[str], "return": None}
f = Frozen("a")
try:
    f.name = "b"
except dataclasses.FrozenInstanceError:
    pass
else:
    raise AssertionError("frozen")
assert hash(f) == hash(Frozen("a", 0)) and f == Frozen("a")
_dataclass_cache.save()
print(_dataclass_cache._state.missed, len(_dataclass_cache._state.codes), len(_dataclass_cache._state.used))
"""


def _run(cache: Path) -> list[str]:
    out = subprocess.run([sys.executable, "-c", SCRIPT, str(cache)], capture_output=True, text=True, check=True)
    return out.stdout.split()


def test_second_run_compiles_nothing(tmp_path: Path) -> None:
    cache = tmp_path / "sub" / "dataclasses.bin"
    missed, held, used = _run(cache)
    assert (missed, held) == ("False", "0")  # saved: nothing left to write
    assert int(used) >= 6  # __init__, __repr__, __eq__ of both, frozen __setattr__, __hash__...
    assert cache.stat().st_mode & 0o777 == 0o600
    assert _run(cache) == ["False", used, used]  # every text found in the file, the file unchanged


def test_a_damaged_or_foreign_file_is_compiled_afresh(tmp_path: Path) -> None:
    cache = tmp_path / "dataclasses.bin"
    cache.write_bytes(b"not marshal data")
    missed, held, used = _run(cache)
    assert (missed, held) == ("False", "0")
    key, codes = marshal.loads(cache.read_bytes())
    assert len(codes) == int(used)
    cache.write_bytes(marshal.dumps((("another python", None, 0), codes)))  # another interpreter's
    assert _run(cache)[1] == "0"
    key, codes = marshal.loads(cache.read_bytes())
    cache.write_bytes(marshal.dumps((key, {text: "not code" for text in codes})))  # odd values
    assert _run(cache)[0] == "False"  # compiled and rewritten with code
    assert all(type(code).__name__ == "code" for code in marshal.loads(cache.read_bytes())[1].values())
