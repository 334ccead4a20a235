#!/bin/sh
# house.sh BUILD_DIR - the house rules the code keeps (issue 57), checked
# over the sources (ctags) and the built objects (objdump); each broken
# rule listed with its file and line, and a non-zero exit:
#
#   - no mutable variable with external linkage (.data, .bss, TLS) in the
#     programs and their libraries, but state a signal handler must reach
#     (the store's fault guard), marked on the line above its definition:
#     /* house: signal-handler state (...) */
#   - no static function that shares its name with an extern one, and
#     every extern one carries its room's prefix (rt_ for the API)
#   - no function over 80 lines, no file over 1,000
#   - shared/ in rooms, bottom up fmt, os, config, record, live, store: no
#     include of a room above, no circle between its files
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

# extern functions carry their room's prefix (rt_ anywhere: the API)
prefixes() { # FILE: the prefixes its room's extern functions may have
	case $1 in
	shared/store/*) echo "rt_ store_" ;;
	shared/record/*) echo "rt_ fld_ fj_" ;;
	recorder/tree/*) echo "rt_ pt_" ;;
	recorder/*/* | shared/* | exporter/read/* | exporter/net/*) echo "rt_" ;;
	recorder/*) echo "rt_ rec_ main" ;;
	exporter/answer/*) echo "rt_ rep_ ans_" ;;
	exporter/sink/*) echo "rt_ push_" ;;
	exporter/*) echo "rt_ cli_ verb_ main" ;;
	esac
}
awk '$5 != "file" {print $1, $2, $3}' "$BUILD/house.tags" | while read -r fn file line; do
	ok=0
	case $fn in __*) continue ;; esac # (the sanitizers' hooks: their names)
	for p in $(prefixes "$file"); do
		case $fn in "$p"*) ok=1 ;; esac
	done
	[ $ok = 1 ] || echo "house: $file:$line: $fn has external linkage without its room's prefix ($(prefixes "$file"))"
done > "$BUILD/house.prefix"
[ ! -s "$BUILD/house.prefix" ] || { cat "$BUILD/house.prefix"; bad=1; }

# mutable externs: global symbols in the objects' writable sections
# (.data.rel.ro is read-only once relocated: a const table of pointers)
objs=$(find "$BUILD/CMakeFiles" -path '*/CMakeFiles/rt_*.dir/*' -name '*.o' -o \
	-path '*/CMakeFiles/rt-recorder.dir/*' -name '*.o' -o -path '*/CMakeFiles/rt-export*.dir/*' -name '*.o' | sort)
[ -n "$objs" ] || { echo "house: no objects under $BUILD/CMakeFiles (build first)"; exit 2; }
for o in $objs; do
	objdump -t "$o" | awk '$2 == "g" {
		sec = ""; for (i = 3; i < NF && sec == ""; i++) if ($i ~ /^\./ || $i == "*COM*") sec = $i
		# (not the compiler-made ones: the sanitizer __odr_asan.* indicators)
		if ((sec ~ /^\.(data|bss|tdata|tbss)/ && sec !~ /^\.data\.rel\.ro/ || sec == "*COM*") && $NF !~ /^__/) print $NF }'
done | sort -u > "$BUILD/house.vars"
# (the fault guard's own are always there: none read means none could be)
grep -qx store_fault_jb "$BUILD/house.vars" || say "the objects' symbols were not read (objdump over $BUILD)"
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
# shared/'s rooms, bottom up: a file includes only its own room's
# headers and those of the rooms below it (a header is the room of the
# file it names: rt/store.h the store_*.c's); and no circle between its
# files (what each object takes from another, by symbol: tsort finds one)
floors="fmt os config record live store"
floor() { echo "$floors" | tr ' ' '\n' | grep -nx "$1" | cut -d: -f1; }
for d in $floors; do
	[ -d "shared/$d" ] || say "shared/$d: no such room"
done
for f in shared/*/*.c; do
	r=${f#shared/}
	r=${r%%/*}
	for h in $(sed -n 's|^#include "rt/\([a-z_]*\)\.h".*|\1|p' "$f"); do
		impl=$(ls shared/*/"$h".c shared/*/"$h"_*.c 2> /dev/null | head -1)
		[ -n "$impl" ] || continue
		hr=${impl#shared/}
		hr=${hr%%/*}
		[ "$(floor "$hr")" -le "$(floor "$r")" ] ||
			say "$f ($r) includes rt/$h.h ($hr): an arrow up (rooms, bottom up: $floors)"
	done
done
sobjs=$(find "$BUILD/CMakeFiles" -path '*/rt_shared.dir/*' -name '*.o' | sort)
for o in $sobjs; do
	nm -P "$o" | awk -v f="$(basename "$o" .c.o)" '$2 ~ /^[TDRB]$/ {print "D", $1, f} $2 == "U" {print "U", $1, f}'
done | awk '$1 == "D" {def[$2] = $3} $1 == "U" {u[NR] = $2; from[NR] = $3}
	END { for (i in u) if ((u[i] in def) && def[u[i]] != from[i]) print from[i], def[u[i]] }' |
	sort -u > "$BUILD/house.arrows"
if ! tsort "$BUILD/house.arrows" > /dev/null 2> "$BUILD/house.loop"; then
	say "shared/'s files call round a circle: $(grep -v 'input contains a loop' "$BUILD/house.loop" | sed 's/^tsort: //' | tr '\n' ' ')"
fi

[ $bad = 0 ] && echo "house: ok ($(echo "$srcs" | wc -l) files, $(wc -l < "$BUILD/house.tags") functions, $(echo "$objs" | wc -w) objects)"
exit $bad
