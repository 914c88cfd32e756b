#!/bin/bash
# Installs neuroc into a temporary prefix and builds examples/c_api_example.c
# against it twice: with pkg-config and with CMake's find_package(neuroc).
# Both programs must run the example MLP on the example images.
# Usage: bash test_install.sh <neuroc-binary> <source-dir> <build-dir>
set -euo pipefail

src=$(cd "$2" && pwd)
build=$(cd "$3" && pwd)
model=$src/examples/models/mlp.onnx
images=$src/examples/data/fmnist_test_x.npy

for tool in cc pkg-config cmake; do
    if ! command -v "$tool" >/dev/null; then
        echo "SKIP: $tool not found"
        exit 77
    fi
done

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
prefix=$tmp/prefix

fail() {
    echo "FAIL: $*" >&2
    exit 1
}

cmake --install "$build" --prefix "$prefix" >"$tmp/install.log" 2>&1 ||
    { cat "$tmp/install.log"; fail "cmake --install"; }

[ -f "$prefix/include/neuroc/neuroc.h" ] || fail "neuroc.h not installed"
[ -x "$prefix/bin/neuroc" ] || fail "the neuroc program not installed"
# GNUInstallDirs picks lib or lib/<multiarch>; take whichever holds the .pc.
pc=$(find "$prefix" -name neuroc.pc -path '*/pkgconfig/*' | head -n 1)
[ -n "$pc" ] || fail "neuroc.pc not installed"
libdir=$(dirname "$(dirname "$pc")")
echo "libdir: ${libdir#"$prefix"/}"
[ -f "$libdir/cmake/neuroc/neurocConfig.cmake" ] || fail "CMake package not installed"

# ---- the cuda backend's module: installed in lib/neuroc when built with
# CUDA, and found there by the installed program (it says why cuda cannot
# run here, never that its module is missing)
"$prefix/bin/neuroc" --version >"$tmp/version.txt" || fail "installed neuroc --version"
if grep -q '^features:.* cuda' "$tmp/version.txt"; then
    for m in libneuroc_cuda.so libneuroc_cuda_probe.so; do
        [ -f "$libdir/neuroc/$m" ] || fail "CUDA build: $libdir/neuroc/$m not installed"
    done
    grep -q '^backends:.* cuda (' "$tmp/version.txt" || { cat "$tmp/version.txt"; fail "no cuda backend listed"; }
    if grep -q 'libneuroc_cuda[a-z_]*.so not found' "$tmp/version.txt"; then
        cat "$tmp/version.txt"
        fail "the installed program does not find its cuda probe module"
    fi
    # a session loads the backend's module itself: on a GPU it runs, else says "no CUDA device"
    "$prefix/bin/neuroc" convert "$model" --calib "$images" --calib-samples 8 -o "$tmp/net.nir" >/dev/null 2>&1 ||
        fail "installed neuroc convert"
    if ! "$prefix/bin/neuroc" run "$tmp/net.nir" -i "$images" -T 1 --backend cuda >/dev/null 2>"$tmp/cuda.err" &&
        grep -q 'not found\|cannot load' "$tmp/cuda.err"; then
        cat "$tmp/cuda.err"
        fail "the installed program does not load its cuda module"
    fi
else
    [ ! -e "$libdir/neuroc/libneuroc_cuda.so" ] || fail "a build without CUDA installed a cuda module"
fi

# The example's output: the model's description and one line per shown row.
check_output() {
    local out=$1
    grep -q '^neuroc ' "$out" || fail "$2: no version line"
    grep -q 'input  input: float32 \[?, 1, 28, 28\]' "$out" || fail "$2: input not described"
    grep -q 'output logits: float32 \[?, 10\]' "$out" || fail "$2: output not described"
    grep -q '^ran 256 images' "$out" || fail "$2: did not run 256 images"
    [ "$(grep -c '^  image [0-9]*: class [0-9]' "$out")" = 8 ] || fail "$2: expected 8 predictions"
}

# A sanitized library (scripts/sanitize.sh) needs the sanitizer runtime in
# the program that loads it.
san=
grep -q '^NEUROC_SANITIZE:BOOL=ON' "$build/CMakeCache.txt" 2>/dev/null && san=-fsanitize=address,undefined

# ---- pkg-config: the .pc must point into the prefix it was installed to
PKG_CONFIG_PATH=$(dirname "$pc")
export PKG_CONFIG_PATH
flags=$(pkg-config --cflags --libs neuroc) || fail "pkg-config --cflags --libs neuroc"
case "$flags" in
    *"$prefix"*) ;;
    *) fail "pkg-config flags do not point into the install prefix: $flags" ;;
esac
# shellcheck disable=SC2086 # the flags are words
cc -std=c11 -Wall -Wextra -Werror $san "$src/examples/c_api_example.c" $flags \
    -Wl,-rpath,"$libdir" -o "$tmp/example_pc" || fail "building the example with pkg-config"
rc=0
"$tmp/example_pc" "$model" "$images" >"$tmp/out_pc.txt" 2>&1 || rc=$?
[ $rc = 0 ] || { cat "$tmp/out_pc.txt"; fail "example (pkg-config build) exited $rc"; }
cat "$tmp/out_pc.txt"
check_output "$tmp/out_pc.txt" "pkg-config build"

# A bad path must fail cleanly with neuroc's message, not crash.
if "$tmp/example_pc" "$tmp/missing.onnx" "$images" >"$tmp/out_bad.txt" 2>&1; then
    fail "example succeeded on a missing model"
fi
grep -q 'loading the model failed: ' "$tmp/out_bad.txt" || { cat "$tmp/out_bad.txt"; fail "no error message"; }

# ---- CMake package
mkdir "$tmp/user"
cat >"$tmp/user/CMakeLists.txt" <<EOF
cmake_minimum_required(VERSION 3.20)
project(use_neuroc C)
find_package(neuroc REQUIRED)
add_executable(example "$src/examples/c_api_example.c")
target_link_libraries(example PRIVATE neuroc::neuroc)
EOF
unset PKG_CONFIG_PATH
cmake -S "$tmp/user" -B "$tmp/user/build" -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_C_FLAGS="$san" >"$tmp/cmake.log" 2>&1 ||
    { cat "$tmp/cmake.log"; fail "configuring a project with find_package(neuroc)"; }
cmake --build "$tmp/user/build" >>"$tmp/cmake.log" 2>&1 ||
    { cat "$tmp/cmake.log"; fail "building against neuroc::neuroc"; }
rc=0
"$tmp/user/build/example" "$model" "$images" >"$tmp/out_cmake.txt" 2>&1 || rc=$?
[ $rc = 0 ] || { cat "$tmp/out_cmake.txt"; fail "example (CMake build) exited $rc"; }
check_output "$tmp/out_cmake.txt" "CMake build"
cmp -s "$tmp/out_pc.txt" "$tmp/out_cmake.txt" || fail "the two builds print different results"

# ---- MPI build: libneuroc_mpi (pkg-config neuroc-mpi, CMake neuroc::mpi)
# and the program's MPI module, which the installed program finds under
# mpirun from its own folder (bin/../<libdir>/neuroc).
if "$1" --version | grep -q '^features:.* mpi'; then
    [ -f "$libdir/neuroc/neuroc_mpi_module.so" ] || fail "the MPI module not installed"
    [ -f "$prefix/include/neuroc/mpi.h" ] || fail "mpi.h not installed"
    mpi_flags=$(PKG_CONFIG_PATH=$(dirname "$pc") pkg-config --cflags --libs neuroc-mpi) ||
        fail "pkg-config --cflags --libs neuroc-mpi"
    # shellcheck disable=SC2086 # the flags are words
    cc -std=c11 -Wall -Wextra -Werror $san "$src/tests/mpi_c_user.c" $mpi_flags -Wl,-rpath,"$libdir" \
        -o "$tmp/mpi_user_pc" || fail "building a program of <neuroc/mpi.h> with pkg-config neuroc-mpi"
    mkdir "$tmp/mpi_user"
    printf '%s\n' 'cmake_minimum_required(VERSION 3.20)' 'project(use_neuroc_mpi C)' \
        'find_package(neuroc REQUIRED)' "add_executable(mpi_user \"$src/tests/mpi_c_user.c\")" \
        'target_link_libraries(mpi_user PRIVATE neuroc::mpi)' >"$tmp/mpi_user/CMakeLists.txt"
    { cmake -S "$tmp/mpi_user" -B "$tmp/mpi_user/build" -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_C_FLAGS="$san" &&
        cmake --build "$tmp/mpi_user/build"; } >"$tmp/cmake_mpi.log" 2>&1 ||
        { cat "$tmp/cmake_mpi.log"; fail "building against neuroc::mpi"; }
    if command -v mpirun >/dev/null; then
        LD_DEBUG=libs OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 ASAN_OPTIONS=detect_leaks=0 \
            timeout 60 mpirun -np 1 "$prefix/bin/neuroc" --version >"$tmp/out_mpi.txt" 2>&1 ||
            { tail -5 "$tmp/out_mpi.txt"; fail "the installed program under mpirun"; }
        grep -q "calling init: $prefix/bin/../.*/neuroc/neuroc_mpi_module.so" "$tmp/out_mpi.txt" ||
            fail "the installed program under mpirun did not load the installed MPI module"
    fi
    echo "MPI: libneuroc_mpi builds with pkg-config and neuroc::mpi; the installed program loads its module"
fi

echo "PASS: installed to ${prefix}; pkg-config and CMake package builds both run"
