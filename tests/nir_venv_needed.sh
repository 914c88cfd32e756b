# Sourced by the tests that run the reference `nir` package: makes its venv
# (scripts/nir_venv.sh) or ends the test. CI must have it (FAIL); elsewhere
# an unreachable package index skips (77), any other failure fails.
#   need_nir_venv SRC VENV
need_nir_venv() {
    bash "$1/scripts/nir_venv.sh" "$2"
    local rc=$?
    [ $rc -eq 0 ] && return 0
    [ "${CI:-}" = "true" ] && { echo "FAIL: the nir venv could not be made (rc $rc); CI needs it" >&2; exit 1; }
    [ $rc -eq 3 ] && { echo "SKIP: the package index is unreachable, nir cannot be installed"; exit 77; }
    echo "FAIL: scripts/nir_venv.sh failed (rc $rc)" >&2
    exit 1
}
