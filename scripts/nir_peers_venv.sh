#!/usr/bin/env bash
# Creates (idempotently) the venv of tests/test_nir_peers.sh: the NIR tools
# of other projects from PyPI, over Debian's torch, numpy and h5py
# (--system-site-packages; --no-deps, so pip never installs a second torch).
#   nir 1.0.8, nirtorch 2.6, norse 1.1.0, snntorch 1.0.0, sinabs 3.1.3 (+ pbr,
#   which sinabs imports for its version)
# On Debian's torch 1.13 two things need help, both in the test harness or
# here, never in the packages: sinabs.network imports pylab (matplotlib) for
# plotting only, so the venv gets an empty pylab module; norse 1.1 imports
# torch.utils._pytree.register_pytree_node (1.13's _register_pytree_node),
# which tests/nir_peers.py aliases before importing norse.
#
# usage: scripts/nir_peers_venv.sh [venv-dir]   (default build/nir-peers-venv)
# exit:  0 ready; 3 the package index cannot be reached; 1 anything else.
set -euo pipefail

VENV=${1:-build/nir-peers-venv}
. "$(dirname "$0")/pypi_index.sh"
PKGS=(nir==1.0.8 nirtorch==2.6 norse==1.1.0 snntorch==1.0.0 sinabs==3.1.3 pbr)

ready() {
    [ -x "$VENV/bin/python" ] && [ -f "$VENV/.nc-peers-ready" ] &&
        [ "$(cat "$VENV/.nc-peers-ready")" = "${PKGS[*]}" ]
}
if ready; then
    exit 0
fi
if ! index_reachable nir_peers_venv.sh; then
    exit 3
fi
rm -rf "$VENV"
/usr/bin/python3 -m venv --system-site-packages "$VENV"
if ! "$VENV/bin/pip" install --quiet --disable-pip-version-check --no-deps "${PKGS[@]}"; then
    echo "nir_peers_venv.sh: pip could not install ${PKGS[*]}" >&2
    exit 1
fi
SP=$("$VENV/bin/python" -c "import sysconfig; print(sysconfig.get_paths()['purelib'])")
printf '"""Stand-in for matplotlib.pylab: sinabs.network imports it for plotting,\nwhich neuroc'"'"'s peer tests never call (scripts/nir_peers_venv.sh)."""\n' >"$SP/pylab.py"
if ! "$VENV/bin/python" -c "import nir, nirtorch, snntorch, sinabs, torch" 2>"$VENV/import.log"; then
    cat "$VENV/import.log" >&2
    echo "nir_peers_venv.sh: the packages installed but do not import" >&2
    exit 1
fi
echo "${PKGS[*]}" >"$VENV/.nc-peers-ready"
echo "nir_peers_venv.sh: ${PKGS[*]} ready in $VENV"
