# Shared helpers of the shell-level CLI tests (sourced, not a test itself).
# cli_lib_init NAME makes $TMP (removed on exit); checks count failures in
# $FAILS and cli_finish turns them into the exit status.

cli_lib_init() { # NAME
    TMP=$(mktemp -d "${TMPDIR:-/tmp}/$1.XXXXXX")
    trap 'rm -rf "$TMP"' EXIT
    FAILS=0
}
pass() { echo "  ok: $1"; }
fail() { echo "  FAIL: $1"; FAILS=$((FAILS + 1)); }
check() { echo "check: $1"; }

run_cli() { # EXPECTED_RC ARGS...: runs neuroc; stdout in $TMP/out, stderr in $TMP/err, status in $RC
    local want=$1
    shift
    "$NEUROC" "$@" >"$TMP/out" 2>"$TMP/err"
    RC=$?
    if [ "$RC" -eq "$want" ]; then
        pass "exit status $RC"
    else
        fail "exit status $RC, expected $want (neuroc $*)"
        sed 's/^/    stderr: /' "$TMP/err" | head -5
    fi
}
expect_in() { # FILE PATTERN (fixed string)
    if grep -qF -- "$2" "$1"; then pass "$(basename "$1") has '$2'"; else
        fail "$(basename "$1") lacks '$2'"; sed 's/^/    | /' "$1" | head -12; fi
}
expect_not_in() { # FILE PATTERN (fixed string)
    if grep -qF -- "$2" "$1"; then fail "$(basename "$1") has '$2'"; sed 's/^/    | /' "$1" | head -12; else
        pass "$(basename "$1") lacks '$2'"; fi
}
expect_file() {
    if [ -s "$1" ]; then pass "$(basename "$1") written"; else fail "$(basename "$1") missing or empty"; fi
}
expect_no_file() {
    if [ -e "$1" ]; then fail "$(basename "$1") exists after a failure"; else pass "no $(basename "$1")"; fi
}
expect_one_error_line() { # errors are exactly one line "neuroc: <category>: <detail>"
    if [ "$(wc -l <"$TMP/err")" -eq 1 ] && grep -qE '^neuroc: [a-zA-Z /]+: .+' "$TMP/err"; then
        pass "one error line: $(cat "$TMP/err")"
    else
        fail "stderr is not one 'neuroc: category: detail' line"; sed 's/^/    | /' "$TMP/err" | head -5
    fi
}
cli_finish() { # NAME
    echo
    if [ "$FAILS" -eq 0 ]; then echo "$1: all checks passed"; exit 0; fi
    echo "$1: $FAILS check(s) failed"
    exit 1
}
