#!/bin/sh
# The sampling process and the live printer (rt-export) link only libc
# and liblmdb: no curl, no TLS, no cJSON, and no libm either (it alone was
# ~170 KiB of the printer's PSS, brought in by one nearbyint()).
# rt-export-full, which rt-export runs for the verbs that need them,
# carries those.
. "$(dirname "$0")/lib.sh"
for bin in "$REC" "$EXP"; do
	name=$(basename "$bin")
	libs=$(ldd "$bin" | awk '{print $1}' | sed 's/\.so.*//' | sort -u)
	for l in $libs; do
		case "$l" in
		linux-vdso | */ld-linux* | libc | liblmdb | libpthread) ;; # libpthread is part of libc (glibc 2.34+)
		libasan | libubsan | libstdc++ | libgcc_s | libm) [ "${RT_SANITIZE:-OFF}" != OFF ] || fail "$name links $l" ;;
		*) fail "$name links $l" ;;
		esac
	done
	ldd "$bin" | grep -Eq "libcurl|libssl|libcrypto|libz|libcjson" && fail "$name: network/TLS/JSON library linked"
	ok "$name links: $(echo $libs | tr '\n' ' ')"
done
ldd "$BUILD/rt-export-full" | grep -q libcurl || fail "rt-export-full does not link libcurl"

# rt-export hands its other verbs to rt-export-full; without it, one line
mkdir -p "$T/alone"
cp "$EXP" "$T/alone/rt-export"
"$T/alone/rt-export" --store "$T/none" show 1 2> "$T/err" && fail "show ran without rt-export-full"
[ "$(wc -l < "$T/err")" -eq 1 ] || fail "not one line: $(cat "$T/err")"
grep -q "rt-export-full, which is not installed" "$T/err" || fail "message: $(cat "$T/err")"
"$EXP" --store "$T/none" show 1 2> "$T/err" && fail "show of no store succeeded"
grep -q "no store at" "$T/err" || fail "rt-export-full did not take show: $(cat "$T/err")"
ok "rt-export runs rt-export-full for show; one line when it is missing"
