#!/usr/bin/env bash
# Builds the libFuzzer targets in fuzz/ (with AddressSanitizer) and runs each for FUZZ_SECONDS (default 60),
# starting from the corpus in fuzz/corpus/<target> when there is one.
# Usage: scripts/fuzz.sh [target...]   targets: rtp rtcp vp8 h264 avcunits sdp amf0 sdes jwt join toml stun dtls
#   icetcp iceagent destinations
# Each target is compiled with the source files it exercises (no C library among them): the packet targets link
# an instrumented RTP module, jwt compiles the token parser without its HMAC (swift-crypto), join the negotiator
# with the RTP module and SRTP's SDES files, toml the config file reader, stun the STUN parser without its HMAC,
# icetcp ICE-TCP's framer and the STUN/TURN URI parser, iceagent the ICE-lite agent with its HMAC over Debian's
# libcrypto, destinations the address and URL checks of outbound connections,
# dtls the DTLS module against Debian's OpenSSL (not instrumented: the target is Cohost's handling of it).
# A failing input is saved as .build-fuzz/<target>-crash-<sha1>; replay it with .build-fuzz/fuzz-<target> <file>.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${FUZZ_SECONDS:-60}
out=.build-fuzz
targets=("$@")
[ ${#targets[@]} -eq 0 ] && targets=(rtp rtcp vp8 h264 avcunits sdp amf0 sdes jwt join toml stun dtls icetcp iceagent
    destinations)
mkdir -p "$out"
flags=(-sanitize=fuzzer,address -parse-as-library -O -g)
# The linker warns about every ASan helper symbol; show everything else, and stop on failure.
compile() {
    if ! swiftc "$@" > "$out/compile.log" 2>&1; then grep -v "Cannot export local symbol" "$out/compile.log"; exit 1; fi
}
library() {  # library NAME FILES...: an instrumented static module
    local name=$1; shift
    compile "${flags[@]}" -I "$out" -module-name "$name" -emit-module -emit-module-path "$out/$name.swiftmodule" \
        -emit-library -static -o "$out/lib$name.a" "$@"
}
library RTP Sources/RTP/*.swift
srtp_pure=(Sources/SRTP/Base64.swift Sources/SRTP/SDES.swift Sources/SRTP/SRTPError.swift Sources/SRTP/SRTPProfile.swift)
for target in "${targets[@]}"; do
    case "$target" in
        rtp|rtcp|vp8|h264|sdp) sources=(fuzz/FuzzSupport.swift) links=(-lRTP) ;;
        amf0) sources=(Sources/Publishing/AMF0.swift Sources/Publishing/AMF0Decoder.swift) links=() ;;
        avcunits) sources=(Sources/MediaSources/H264Units.swift) links=() ;;
        sdes) sources=("${srtp_pure[@]}") links=() ;;
        jwt) sources=(Sources/Rooms/Token/Base64URL.swift Sources/Rooms/Token/CompactJWS.swift
                      Sources/Rooms/Token/TokenError.swift) links=() ;;
        toml) sources=(Sources/ServeConfig/ConfigFile.swift Sources/ServeConfig/ServeConfigError.swift
                       Sources/ServeConfig/TOMLReader.swift)
              links=() ;;
        stun) sources=(Sources/ICE/STUNMessage.swift Sources/ICE/STUNError.swift Sources/ICE/CRC32.swift
                       Sources/ICE/XORMappedAddress.swift)
              links=() ;;
        icetcp) sources=(Sources/ICE/ICETCPFramer.swift Sources/ICE/ICEServerURL.swift) links=() ;;
        iceagent) [ -f "$out/libHMAC.a" ] || library HMAC -I Sources/CLibs/CLibCrypto Sources/HMAC/HMAC.swift
              sources=(Sources/ICE/STUNMessage.swift Sources/ICE/STUNMessage+Integrity.swift Sources/ICE/STUNError.swift
                       Sources/ICE/CRC32.swift Sources/ICE/XORMappedAddress.swift Sources/ICE/ICELiteAgent.swift)
              links=(-lHMAC -I Sources/CLibs/CLibCrypto -lcrypto) ;;
        destinations) sources=(Sources/Publishing/DestinationPolicy.swift Sources/MediaSources/SourceLocation.swift)
              links=() ;;
        dtls) [ -f "$out/libSRTP.a" ] || library SRTP "${srtp_pure[@]}"
              sources=(Sources/DTLS/*.swift)
              links=(-lSRTP -I Sources/CLibs/COpenSSL -lssl -lcrypto) ;;
        join) [ -f "$out/libSRTP.a" ] || library SRTP "${srtp_pure[@]}"
              [ -f "$out/libForwarding.a" ] || library Forwarding Sources/Forwarding/*.swift
              sources=(Sources/Rooms/Participants/JoinNegotiation.swift Sources/Rooms/Participants/JoinNegotiator*.swift
                       Sources/Rooms/RoomError.swift)
              links=(-lRTP -lSRTP -lForwarding) ;;
        *) echo "unknown fuzz target '$target'"; exit 2 ;;
    esac
    compile "${flags[@]}" -I "$out" -L "$out" "${links[@]}" -module-name "Fuzz_$target" \
        fuzz/Invariant.swift "${sources[@]}" "fuzz/$target.swift" -o "$out/fuzz-$target"
    corpus="$out/corpus-$target"
    mkdir -p "$corpus"
    [ -d "fuzz/corpus/$target" ] && cp -n fuzz/corpus/"$target"/* "$corpus"/ 2>/dev/null || true
    echo "== $target: ${seconds}s"
    "$out/fuzz-$target" -max_total_time="$seconds" -rss_limit_mb=1024 -max_len=4096 -print_final_stats=1 \
        -artifact_prefix="$out/$target-" "$corpus" \
        > "$out/fuzz-$target.log" 2>&1 || { tail -40 "$out/fuzz-$target.log"; exit 1; }
    grep -E "^(Done|stat::number_of_executed_units|stat::peak_rss_mb)" "$out/fuzz-$target.log"
done
