#!/bin/sh
# house.sh BUILD_DIR - the house rules the code keeps (issue 57), checked
# over the sources (ctags) and the built objects (objdump); each broken
# rule listed with its file and line, and a non-zero exit:
#
#   - no mutable variable with external linkage (.data, .bss, TLS) in the
#     programs and their libraries, but state a signal handler must reach
#     (the store's fault guard), marked on the line above its definition:
#     /* house: signal-handler state (...) */
#   - no static function that shares its name with an extern one
#   - no function over 80 lines, no file over 1,000
set -eu
BUILD=${1:?usage: house.sh BUILD_DIR}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
CTAGS=$(command -v ctags-universal || command -v ctags || true)
[ -n "$CTAGS" ] || { echo "house: no ctags (Debian's universal-ctags)"; exit 2; }
bad=0
say() { echo "house: $*"; bad=1; }
srcs=$(find shared recorder exporter -name '*.c' | sort)

# files over 1,000 lines
for f in $srcs $(find shared recorder exporter include -name '*.h' | sort); do
	n=$(wc -l < "$f")
	[ "$n" -le 1000 ] || say "$f: $n lines (at most 1,000: split it by what its parts do)"
done

# functions: ctags' definitions with their ends; a static one is "file"
"$CTAGS" -x --language-force=C --kinds-C=f --fields=+e+S -u --_xformat='%N %F %n %{end} %{file}' $srcs > "$BUILD/house.tags" 2> /dev/null ||
	{ echo "house: ctags (Universal Ctags) failed"; exit 2; }
awk '$4 - $3 + 1 > 80 { printf "house: %s:%d: %s is %d lines (at most 80)\n", $2, $3, $1, $4 - $3 + 1 }' "$BUILD/house.tags" > "$BUILD/house.long"
[ ! -s "$BUILD/house.long" ] || { cat "$BUILD/house.long"; bad=1; }
awk '$5 != "file" { ext[$1] = $2 ":" $3 } $5 == "file" { st[$1] = st[$1] " " $2 ":" $3 }
	END { for (n in st) if (n in ext) printf "house: static %s (%s) shares its name with the extern one at %s\n", n, substr(st[n], 2), ext[n] }' \
	"$BUILD/house.tags" | sort > "$BUILD/house.names"
[ ! -s "$BUILD/house.names" ] || { cat "$BUILD/house.names"; bad=1; }

# mutable externs: global symbols in the objects' writable sections
# (.data.rel.ro is read-only once relocated: a const table of pointers)
objs=$(find "$BUILD/CMakeFiles" -path '*/CMakeFiles/rt_*.dir/*' -name '*.o' -o \
	-path '*/CMakeFiles/rt-recorder.dir/*' -name '*.o' -o -path '*/CMakeFiles/rt-export*.dir/*' -name '*.o' | sort)
[ -n "$objs" ] || { echo "house: no objects under $BUILD/CMakeFiles (build first)"; exit 2; }
for o in $objs; do
	objdump -t "$o" | awk '$2 == "g" {
		sec = ""; for (i = 3; i < NF && sec == ""; i++) if ($i ~ /^\./ || $i == "*COM*") sec = $i
		if (sec ~ /^\.(data|bss|tdata|tbss)/ && sec !~ /^\.data\.rel\.ro/ || sec == "*COM*") print $NF }'
done | sort -u > "$BUILD/house.vars"
# (where each is defined: ctags' variables with external linkage)
"$CTAGS" -x --language-force=C --kinds-C=v --fields=+S -u --_xformat='%N %F %n %{file}' $srcs 2> /dev/null |
	awk '$4 != "file"' > "$BUILD/house.defs"
while read -r v; do
	at=$(awk -v v="$v" '$1 == v { print $2 ":" $3; exit }' "$BUILD/house.defs")
	file=${at%%:*} line=${at##*:}
	if [ -n "$at" ] && sed -n "$((line > 1 ? line - 1 : 1)),${line}p" "$file" | grep -q 'house: signal-handler state'; then
		continue
	fi
	say "${at:-?}: $v is a mutable variable other files share (pass it, or keep it in one file behind calls)"
done < "$BUILD/house.vars"
[ $bad = 0 ] && echo "house: ok ($(echo "$srcs" | wc -l) files, $(wc -l < "$BUILD/house.tags") functions, $(echo "$objs" | wc -w) objects)"
exit $bad
