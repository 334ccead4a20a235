#!/bin/sh
# --help, the man pages and docs/cli.md agree: every option and env var of
# the recorder's option table, every verb of rt-export's verb table and
# the Grafana dashboard of docs/ is the one the value rows make
"$BUILD/fleet-table" --grafana > "$T/grafana.json"
cmp -s "$T/grafana.json" "$HERE/docs/grafana-dashboard.json" || missing="$missing
  docs/grafana-dashboard.json differs from the code's (build/fleet-table --grafana prints it)"
# every environment variable the code reads is documented in both places.
. "$(dirname "$0")/lib.sh"
HERE=$(cd "$(dirname "$0")/../.." && pwd)
MAN_REC="$HERE/docs/man/rt-recorder.1"
MAN_EXP="$HERE/docs/man/rt-export.1"
CLI="$HERE/docs/cli.md"
missing=""
need() { # WHERE FILE TEXT
	grep -qF -- "$3" "$2" || missing="$missing
  $1 lacks $3"
}
"$RT" --help > "$T/rec.help"
for o in $(grep -o -- '--[a-z][a-z-]*' "$T/rec.help" | sort -u); do
	need rt-recorder.1 "$MAN_REC" "$(printf '%s' "$o" | sed 's/-/\\-/g')"
	need cli.md "$CLI" "\`$o"
done
for e in $(grep -o 'env: [A-Z_]*' "$T/rec.help" | cut -d' ' -f2 | sort -u); do
	need rt-recorder.1 "$MAN_REC" "$e"
	need cli.md "$CLI" "$e"
done
"$EXP" --help > "$T/exp.help"
verbs=$(grep -E '^  [a-z]+( |$)' "$T/exp.help" | awk '{print $1}')
[ "$(echo "$verbs" | wc -w)" -ge 7 ] || fail "rt-export --help lists only: $verbs"
for v in $verbs; do
	grep -qE "^\.BI? $v( |$)" "$MAN_EXP" || missing="$missing
  rt-export.1 lacks the verb $v"
	need cli.md "$CLI" "\`$v"
done
# the metrics table of cli.md is the one the value rows make
"$BUILD/fleet-table" > "$T/fleet.md"
sed -n '/^<!-- fleet-table -->$/,/^<!-- \/fleet-table -->$/p' "$CLI" | sed '1d;$d' > "$T/fleet.doc"
cmp -s "$T/fleet.md" "$T/fleet.doc" || missing="$missing
  cli.md's metrics table differs from the code's (build/fleet-table prints it):
$(diff "$T/fleet.doc" "$T/fleet.md" | head -5)"
# every environment variable the code reads (testing aids: cli.md only)
for e in $(grep -ho 'getenv("[A-Z0-9_]*")' "$HERE"/recorder/*.c "$HERE"/recorder/*/*.c "$HERE"/exporter/*.c "$HERE"/exporter/*/*.c "$HERE"/shared/*.c \
	| sed 's/getenv("\(.*\)")/\1/' | sort -u); do
	need cli.md "$CLI" "$e"
	case $e in
	RT_TEST_*|RT_RING_SLOTS|RT_STORE_AHEAD_KB|RT_NVML_LIBRARY|RT_IMDS_ADDR|HOME|XDG_DATA_HOME|TRACKER_S3_REGION) ;;
	*) need rt-recorder.1 "$MAN_REC" "$e" ;;
	esac
done
for code in 126 127 128+N; do
	need "rt-recorder.1 EXIT STATUS" "$MAN_REC" "$code"
	need "cli.md" "$CLI" "$code"
done
[ -z "$missing" ] || fail "documentation out of step with the code:$missing"
ok "--help, man pages and docs/cli.md agree"

# cmake --install --prefix DIR and DESTDIR put the drop-in link beside rt-recorder
if command -v cmake >/dev/null 2>&1 && [ -f "$BUILD/cmake_install.cmake" ]; then
	cmake --install "$BUILD" --prefix "$T/prefix" > /dev/null
	[ "$(readlink "$T/prefix/bin/resource-tracker")" = rt-recorder ] || fail "--prefix: no link in DIR/bin"
	"$T/prefix/bin/resource-tracker" --version | grep -q resource-tracker || fail "--prefix: link broken"
	[ -f "$T/prefix/share/man/man1/rt-export.1" ] || fail "--prefix: man pages"
	[ -x "$T/prefix/libexec/rt/rt-export-full" ] || fail "--prefix: no libexec/rt/rt-export-full"
	"$T/prefix/bin/rt-export" --store "$T/none" summary 1 2> "$T/err" && fail "summary of no store"
	grep -q "no store at" "$T/err" || fail "installed rt-export did not find rt-export-full: $(cat "$T/err")"
	DESTDIR="$T/dest" cmake --install "$BUILD" --prefix /opt/rt > /dev/null
	[ "$(readlink "$T/dest/opt/rt/bin/resource-tracker")" = rt-recorder ] || fail "DESTDIR: no link"
	[ ! -e /opt/rt/bin/resource-tracker ] || fail "DESTDIR: the link went outside DESTDIR"
	ok "cmake --install --prefix / DESTDIR: resource-tracker link in DIR/bin"
fi
