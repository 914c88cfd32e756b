# The one change the CPU harness makes to a .cu file: each kernel launch
# `k<<<grid, block[, shmem[, stream]]>>>(args)` becomes
# `NC_HOST_LAUNCH(k, grid, block[, shmem[, stream]])(args)` (cuda_host.h),
# and the result starts by including the harness's device header; #line keeps
# diagnostics and the harness's reports on the .cu's own lines.
# usage: cmake -DIN=file.cu -DOUT=file.cc -P launch_rewrite.cmake
file(READ ${IN} text)
string(REGEX REPLACE "([A-Za-z_][A-Za-z0-9_]*)[ \t]*<<<" "NC_HOST_LAUNCH(\\1, " text "${text}")
string(REPLACE ">>>" ")" text "${text}")
file(WRITE ${OUT}.tmp "#include \"cuda_host.h\"\n#line 1 \"${IN}\"\n${text}")
file(COPY_FILE ${OUT}.tmp ${OUT} ONLY_IF_DIFFERENT)
file(REMOVE ${OUT}.tmp)
