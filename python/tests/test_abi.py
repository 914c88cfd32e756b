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


NONLINEAR_NET = r"""
#include <neuroc/neuroc.h>
/* Input (4) -> Nonlinear SiLU -> two-sided SignedIF -> readout, saved as NIR at argv[1]. */
int main(int argc, char **argv)
{
    int64_t in = 4, one = 1;
    float th = 0.5f;
    nc_snn *s = 0;
    nc_tensor *t = 0;
    int from = 0, id;
    nc_nonlinear_params p = {.fn = NC_NL_SILU};
    if (argc < 2 || nc_snn_create(1, &in, &s) || nc_snn_add_nonlinear(s, 1, &from, &p, "swish", &id) ||
        nc_tensor_create_from(NC_DTYPE_F32, 1, &one, &th, &t))
        return 1;
    nc_if_params ip = {.threshold = t, .signed_spikes = NC_SIGNED_TWO_SIDED};
    if (nc_snn_add_if(s, id, &ip, "sif", &id) || nc_snn_add_readout(s, id, "out", &id) || nc_snn_save_nir(s, argv[1]))
        return 1;
    return 0;
}
"""


def test_nonlinear_layer_info(tmp_path):
    """SNN.layers names a Nonlinear layer's function and says a SignedIF is
    two-sided (a network built through the C API of the library loaded here)."""
    cc = shutil.which("cc") or shutil.which("gcc")
    include = os.path.join(SRC, "include")
    if not cc or not os.path.exists(os.path.join(include, "neuroc", "neuroc.h")):
        pytest.skip("no C compiler or no neuroc headers to build the network with")
    c = tmp_path / "net.c"
    c.write_text(NONLINEAR_NET)
    exe, nir = tmp_path / "net", tmp_path / "net.nir"
    subprocess.run([cc, "-std=c11", "-I", include, str(c), _lib.path, "-o", str(exe),
                    "-Wl,-rpath," + os.path.dirname(os.path.abspath(_lib.path))], check=True)
    subprocess.run([str(exe), str(nir)], check=True)
    import neuroc
    layers = neuroc.load_nir(str(nir)).layers
    assert (layers[1].kind, layers[1].function, layers[1].two_sided) == ("Nonlinear", "SiLU", False)
    assert (layers[2].kind, layers[2].function, layers[2].two_sided) == ("SignedIF", None, True)
    assert layers[0].function is None and not layers[0].two_sided
