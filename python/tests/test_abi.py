"""The ctypes mirrors of the C structs (neuroc/_lib.py) against the headers:
a C probe compiled here prints every field's offset and each struct's size."""
import ctypes
import os
import shutil
import subprocess

import pytest

from neuroc import _lib
from conftest import SRC


def test_struct_layouts(tmp_path):
    cc = shutil.which("cc") or shutil.which("gcc")
    include = os.path.join(SRC, "include")
    if not cc or not os.path.exists(os.path.join(include, "neuroc", "neuroc.h")):
        pytest.skip("no C compiler or no neuroc headers to check the layouts against")
    lines, want = [], {}
    for cls, cname in _lib.C_NAMES.items():
        fields = [f for f, _ in cls._fields_ if f != "_spare"]
        size = getattr(cls, "_spare").offset if issubclass(cls, _lib._Options) else ctypes.sizeof(cls)
        lines.append(f'printf("{cname} %zu\\n", sizeof({cname}));')
        want[cname] = size
        for f in fields:
            lines.append(f'printf("{cname}.{f} %zu\\n", offsetof({cname}, {f}));')
            want[f"{cname}.{f}"] = getattr(cls, f).offset
    c = tmp_path / "probe.c"
    c.write_text("#include <stddef.h>\n#include <stdio.h>\n#include <neuroc/neuroc.h>\nint main(void)\n{\n"
                 + "\n".join(lines) + "\nreturn 0;\n}\n")
    subprocess.run([cc, "-std=c11", "-I", include, str(c), "-o", str(tmp_path / "probe")], check=True)
    out = subprocess.run([str(tmp_path / "probe")], capture_output=True, text=True, check=True).stdout
    got = {k: int(v) for k, v in (line.split() for line in out.splitlines())}
    # a C struct may be padded past its last field; ctypes pads the same way
    for name in _lib.C_NAMES.values():
        if name in got and got[name] != want[name]:
            align = 8
            assert got[name] == (want[name] + align - 1) // align * align, f"sizeof({name})"
    assert {k: v for k, v in got.items() if "." in k} == {k: v for k, v in want.items() if "." in k}
