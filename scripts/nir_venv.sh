#!/usr/bin/env bash
# Creates (idempotently) a Python venv holding the `nir` package from PyPI,
# used by tests/test_nir_interop.sh to check that nir.read accepts the files
# neuroc writes. --system-site-packages keeps Debian's numpy and h5py;
# --no-deps keeps pip from replacing them (DESIGN §6).
#
# usage: scripts/nir_venv.sh [venv-dir]      (default build/nir-venv)
# exit:  0 ready; 3 the package index cannot be reached; 1 anything else.
set -euo pipefail

VENV=${1:-build/nir-venv}
NIR_VERSION=${NIR_VERSION:-1.0.8}   # the 1.0.x release the checks were written against
. "$(dirname "$0")/pypi_index.sh"

have_nir() {
    [ -x "$VENV/bin/python" ] &&
        "$VENV/bin/python" -c "import sys, nir, h5py, numpy; sys.exit(nir.__version__ != '$NIR_VERSION')" 2>/dev/null
}

if have_nir; then
    exit 0
fi

if ! index_reachable nir_venv.sh; then
    exit 3
fi

rm -rf "$VENV"
/usr/bin/python3 -m venv --system-site-packages "$VENV"
if ! "$VENV/bin/pip" install --quiet --disable-pip-version-check --no-deps "nir==$NIR_VERSION"; then
    echo "nir_venv.sh: pip could not install nir==$NIR_VERSION into $VENV" >&2
    exit 1
fi
if ! have_nir; then
    echo "nir_venv.sh: nir==$NIR_VERSION installed but 'import nir, h5py, numpy' fails in $VENV" >&2
    exit 1
fi
echo "nir_venv.sh: nir $NIR_VERSION ready in $VENV"
