#!/bin/sh
# The sampling process links only libc, libm and liblmdb (no curl, no TLS).
. "$(dirname "$0")/lib.sh"
libs=$(ldd "$REC" | awk '{print $1}' | sed 's/\.so.*//' | sort -u)
for l in $libs; do
	case "$l" in
	linux-vdso | */ld-linux* | libc | libm | liblmdb | libpthread) ;; # libpthread is part of libc (glibc 2.34+)
	libasan | libubsan | libstdc++ | libgcc_s) [ -n "${RT_SANITIZE:-}" ] || fail "unexpected $l" ;;
	*) fail "rt-recorder links $l" ;;
	esac
done
ldd "$REC" | grep -Eq "libcurl|libssl|libcrypto|libz" && fail "network/TLS library linked"
ok "rt-recorder links: $(echo $libs | tr '\n' ' ')"
