#!/usr/bin/env bash
# Builds the libFuzzer targets in fuzz/ against the RTP module (with AddressSanitizer) and runs each
# for FUZZ_SECONDS (default 60), starting from the corpus in fuzz/corpus/<target> when there is one.
# Usage: scripts/fuzz.sh [target...]   targets: rtp rtcp vp8 h264 sdp
# A failing input is saved as .build-fuzz/<target>-crash-<sha1>; replay it with .build-fuzz/fuzz-<target> <file>.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${FUZZ_SECONDS:-60}
out=.build-fuzz
targets=("$@")
[ ${#targets[@]} -eq 0 ] && targets=(rtp rtcp vp8 h264 sdp)
mkdir -p "$out"
flags=(-sanitize=fuzzer,address -parse-as-library -O -g)
# One instrumented static library of the RTP module, linked into every target.
# The linker warns about every ASan helper symbol; show everything else, and stop on failure.
compile() {
    if ! swiftc "$@" > "$out/compile.log" 2>&1; then grep -v "Cannot export local symbol" "$out/compile.log"; exit 1; fi
}
compile "${flags[@]}" -module-name RTP -emit-module -emit-module-path "$out/RTP.swiftmodule" \
    -emit-library -static -o "$out/libRTP.a" Sources/RTP/*.swift
for target in "${targets[@]}"; do
    compile "${flags[@]}" -I "$out" -L "$out" -lRTP -module-name "Fuzz_$target" \
        fuzz/FuzzSupport.swift "fuzz/$target.swift" -o "$out/fuzz-$target"
    corpus="$out/corpus-$target"
    mkdir -p "$corpus"
    [ -d "fuzz/corpus/$target" ] && cp -n fuzz/corpus/"$target"/* "$corpus"/ 2>/dev/null || true
    echo "== $target: ${seconds}s"
    "$out/fuzz-$target" -max_total_time="$seconds" -rss_limit_mb=1024 -max_len=4096 -print_final_stats=1 -artifact_prefix="$out/$target-" "$corpus" \
        > "$out/fuzz-$target.log" 2>&1 || { tail -40 "$out/fuzz-$target.log"; exit 1; }
    grep -E "^(Done|stat::number_of_executed_units|stat::peak_rss_mb)" "$out/fuzz-$target.log"
done
