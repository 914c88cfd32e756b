# Sourced by the venv scripts (nir_venv.sh, nir_peers_venv.sh): the package
# index they install from, and whether it answers (an offline machine skips
# the tests that need it rather than failing on pip's retries).
INDEX=${PIP_INDEX_URL:-https://pypi.org/simple}

# index_reachable WHO: 0 when the index serves /nir/; else says why as WHO.
index_reachable() {
    /usr/bin/python3 - "$INDEX" "$1" <<'PY'
import sys, urllib.request
try:
    urllib.request.urlopen(sys.argv[1].rstrip("/") + "/nir/", timeout=20).read(1)
except Exception as e:
    print(f"{sys.argv[2]}: cannot reach the package index {sys.argv[1]}: {e}", file=sys.stderr)
    sys.exit(1)
PY
}
