#!/usr/bin/env bash
# Under `ulimit -v` every command exits (issue 33: OpenBLAS retried its
# allocation forever, so convert, run and even `neuroc --version` hung).
# One run of each command at two caps here; the 50-run figure
# comes from `bash tests/memory_cap_runs.sh build/neuroc . 50`.
NEUROC=$1 SRC=$2
if grep -q '^NEUROC_SANITIZE:BOOL=ON' "$3/CMakeCache.txt" 2>/dev/null; then
    echo "SKIP: a sanitizer build reserves terabytes of address space: ulimit -v cannot apply"
    exit 77
fi
(ulimit -v 102400; exec timeout 20 "$NEUROC" --version) >/dev/null || { echo "FAIL: neuroc --version under 100 MB"; exit 1; }
# Caps at which reading a valid .nir runs out of memory inside HDF5: that is
# out of memory naming the file, never a dataset that "could not be read",
# is "not a dataset" or a file that is "not an HDF5 file" (a corrupt file).
# Below about 24 MB the program's own libraries do not load.
E=$SRC/examples
D=$(mktemp -d "${TMPDIR:-/tmp}/memory_cap_nir.XXXXXX")
NIR=$D/cnn.nir
"$NEUROC" convert "$E/models/cnn.onnx" --calib "$E/data/fmnist_test_x.npy" -o "$NIR" >/dev/null 2>&1 ||
    { echo "FAIL: cannot convert cnn.onnx without a cap"; exit 1; }
for cap in $(seq 24000 1000 40000); do
    (ulimit -v "$cap"; exec timeout 20 "$NEUROC" eval "$NIR" --data "$E/data/fmnist_test_x.npy" \
        --labels "$E/data/fmnist_test_y.npy" -T 4) >/dev/null 2>"$NIR.err"
    if grep -qE "could not be read|not an HDF5 file|is not a dataset" "$NIR.err"; then
        echo "FAIL: ulimit -v $cap: a read that ran out of memory is called a bad file: $(grep neuroc: "$NIR.err")"
        rm -rf "$D"
        exit 1
    fi
done
# The other way round: a corrupt compressed chunk, read with memory to
# spare, stays a malformed file (a failed inflate() is only called out of
# memory when the filter's memory cannot be had, export/data/h5io.c).
if /usr/bin/python3 -c "import h5py" 2>/dev/null; then
    /usr/bin/python3 - "$NIR" "$D/bad.nir" <<'PY' || { echo "FAIL: cannot corrupt a chunk of cnn.nir"; rm -rf "$D"; exit 1; }
import shutil, sys, h5py
shutil.copy(sys.argv[1], sys.argv[2])
with h5py.File(sys.argv[2], "r") as f:
    chunks = []
    f.visititems(lambda n, o: chunks.append(o.id.get_chunk_info(0)) if isinstance(o, h5py.Dataset) and o.compression else None)
c = max(chunks, key=lambda c: c.size)
b = bytearray(open(sys.argv[2], "rb").read())
for i in range(c.byte_offset + c.size // 2, c.byte_offset + c.size // 2 + 64):
    b[i] ^= 0x5A
open(sys.argv[2], "wb").write(b)
PY
    "$NEUROC" eval "$D/bad.nir" --data "$E/data/fmnist_test_x.npy" --labels "$E/data/fmnist_test_y.npy" -T 4 \
        >/dev/null 2>"$NIR.err"
    grep -q "could not be read (corrupt" "$NIR.err" ||
        { echo "FAIL: a corrupt chunk is not called malformed: $(cat "$NIR.err")"; rm -rf "$D"; exit 1; }
fi
rm -rf "$D"
echo "ulimit -v 24000..40000 (KB): no out-of-memory read called a bad file; a corrupt chunk is one"
exec bash "$SRC/tests/memory_cap_runs.sh" "$NEUROC" "$SRC" 1 102400 204800
