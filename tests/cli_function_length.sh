#!/usr/bin/env bash
# No function of the program (cli/*.c) is longer than 150 lines, counted from
# the line that opens it to its closing brace (issue 27: the commands split
# into helpers that say what each step does).
# usage: cli_function_length.sh SOURCE_DIR [MAX]
set -uo pipefail
max=${2:-150}
# a definition opens at column 0 with a name and "(" and closes with "}" at column 0
awk -v max="$max" '
    FNR == 1 { start = 0 }
    /^[A-Za-z_].*\(/ && !/;[[:space:]]*$/ && !start { start = FNR; name = $0 }
    /^}/ && start {
        n = FNR - start + 1
        if (n > max) { printf "FAIL: %s:%d: %d lines (max %d): %s\n", FILENAME, start, n, max, name; bad = 1 }
        start = 0
    }
    END { exit bad }
' "$1"/cli/*.c "$1"/cli/mpi/*.c && echo "ok: every function in cli/ is at most $max lines"
