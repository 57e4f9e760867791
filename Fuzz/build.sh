#!/usr/bin/env bash
# Builds the libFuzzer targets in Fuzz/Targets/ against the library sources, with AddressSanitizer.
#
#   Fuzz/build.sh            builds every target into .build/fuzz/ (FUZZ_BUILD_DIR to change)
#   FUZZ_OPT=-Onone Fuzz/build.sh   unoptimized, for clearer stack traces
#
# SwiftPM cannot build a fuzzer (it would link libFuzzer's main into every product), so this compiles
# the library sources with swiftc directly: each module once, instrumented
# (-sanitize=fuzzer,address adds coverage and ASan; with -c nothing is linked yet), then one small
# executable per target linking every module's object (and MessageFeedFetching's C shim for libcurl), libFuzzer's main and the
# system libsqlite3.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
out="${FUZZ_BUILD_DIR:-$root/.build/fuzz}"
opt="${FUZZ_OPT:--O}"
mkdir -p "$out/modules"

common=(-swift-version 6 -enable-upcoming-feature ExistentialAny -parse-as-library -package-name prefs
        -sanitize=fuzzer,address "$opt" -g -I "$root/Sources/CSQLite" -I "$out/modules")

# One module = one instrumented object file and its .swiftmodule.
build_module() {
    local name="$1" sources="$2"
    shift 2  # any further arguments are extra compiler flags for this module
    # Up to date when the object is newer than every library source and than this script: a module is rebuilt when a
    # module it imports changed too (their interfaces are compiled into it), not only when its own sources did.
    if [ -f "$out/$name.o" ] && [ -z "$(find "$root/Sources" "$0" -newer "$out/$name.o" \( -name '*.swift' -o -name '*.sh' -o -name '*.h' -o -name '*.c' \) | head -1)" ]; then
        echo "fuzz build: module $name is up to date"
        return
    fi
    echo "fuzz build: module $name"
    # shellcheck disable=SC2046  # source paths have no spaces
    swiftc "${common[@]}" "$@" -module-name "$name" -wmo -c -o "$out/$name.o" \
        -emit-module -emit-module-path "$out/modules/$name.swiftmodule" \
        $(find "$root/$sources" -name '*.swift' | sort)
}

build_module PrefsSupport Sources/PrefsSupport
build_module PrefsJSON Sources/PrefsJSON
build_module PrefsSQLite Sources/PrefsSQLite
build_module Prefs Sources/Prefs
build_module PrefsUserDefaults Sources/PrefsUserDefaults

# MessageFeedFetching's feed loader calls libcurl through the C shim in Sources/CCurlShim: a module map for swiftc, and the C
# file compiled once with the same instrumentation (the toolchain's clang).
mkdir -p "$out/modules/CCurlShim"
printf 'module CCurlShim {\n    header "%s"\n    export *\n}\n' "$root/Sources/CCurlShim/include/CCurlShim.h" \
    > "$out/modules/CCurlShim/module.modulemap"
common+=(-I "$out/modules/CCurlShim")
clang="$(dirname "$(command -v swiftc)")/clang"
"$clang" -c -fsanitize=fuzzer-no-link,address -O2 -g -I "$root/Sources/CCurlShim/include" \
    "$root/Sources/CCurlShim/shim.c" -o "$out/CCurlShim.o"

# -enable-testing: the Versions target reaches MessageFeed's internal version parsers with `@testable import`;
# `package` symbols (under -package-name) need no flag.
build_module MessageFeed Sources/MessageFeed -enable-testing
build_module MessageFeedFetching Sources/MessageFeedFetching
build_module DialogGate Sources/DialogGate

for target in "$root"/Fuzz/Targets/*.swift; do
    name="$(basename "$target" .swift)"
    echo "fuzz build: target $name"
    # ld.gold warns about ASan's local symbols ("Cannot export local symbol"); harmless.
    swiftc "${common[@]}" -module-name "Fuzz$name" "$target" \
        "$out/PrefsSupport.o" "$out/PrefsJSON.o" "$out/PrefsSQLite.o" "$out/Prefs.o" "$out/PrefsUserDefaults.o" \
        "$out/MessageFeed.o" "$out/MessageFeedFetching.o" "$out/DialogGate.o" "$out/CCurlShim.o" \
        -lsqlite3 -ldl -o "$out/fuzz-$name" 2> >(grep -v "Cannot export local symbol" >&2)
done
echo "fuzz build: done, binaries in $out"
