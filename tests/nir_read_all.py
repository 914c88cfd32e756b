"""nir.read (the reference `nir` package) opens every .nir neuroc wrote.

usage: python nir_read_all.py DIR [...]

Every *.nir under the directories (venvs left out) that has a /neuroc group
with `standard_loss` (written by a neuroc that writes a standard graph,
DESIGN §4) must open with nir.read and its type checks, and hold nir 1.0.x
node types only. Files without it are other tools' files, format-3
fixtures or deliberately broken copies (test_nir): counted, not checked.
Exit 1 naming each file nir.read refuses; prints the counts.
"""
import os
import sys

import h5py
import nir


def ours(path):
    try:
        with h5py.File(path, "r") as f:
            return "neuroc" in f and "standard_loss" in f["neuroc"]
    except OSError:
        return False


def main(dirs):
    checked, others, failed = 0, 0, 0
    for top in dirs:
        for root, subdirs, files in os.walk(top):
            subdirs[:] = sorted(d for d in subdirs if "venv" not in d)
            for name in sorted(files):
                if not name.endswith(".nir"):
                    continue
                path = os.path.join(root, name)
                # other tests leave FIFOs and directories named .nir (the Python
                # suite's hostile destinations): opening a FIFO would block
                if not os.path.isfile(path) or os.path.islink(path):
                    continue
                if not ours(path):
                    others += 1
                    continue
                checked += 1
                try:
                    g = nir.read(path)
                    bad = sorted({type(n).__name__ for n in g.nodes.values()
                                  if type(n).__module__.split(".")[0] != "nir"})
                    if bad:
                        raise ValueError(f"node types outside nir: {bad}")
                except Exception as e:  # nir.read's own complaint is the finding
                    failed += 1
                    print(f"FAIL {path}: {type(e).__name__}: {e}")
    print(f"nir {nir.__version__}: nir.read opened {checked - failed} of {checked} files neuroc wrote "
          f"({others} other .nir files not neuroc's of today)")
    return 1 if failed or not checked else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
