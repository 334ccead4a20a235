#!/bin/sh
# raw_calls.sh [ROOT] - every call that makes, opens, renames or removes a
# file by name goes through the safe helpers (shared/os/safefile.c,
# shared/os/safepath.c), or carries a reviewed reason on its line or the line
# above: /* raw: why this name cannot be another user's */. A new raw call
# without one fails here, listed with its file and line (issue 52: root's
# push once truncated files through a link another user planted).
set -eu
ROOT=${1:-$(cd "$(dirname "$0")/../.." && pwd)}
cd "$ROOT"
calls='open|openat|openat2|creat|fopen|freopen|mkdir|mkdirat|mkfifo|mkfifoat|mknod|mknodat|rename|renameat|renameat2|unlink|unlinkat|remove|rmdir|link|linkat|symlink|symlinkat|truncate|chmod|chown|lchown'
# C sources of the programs and the library; the helpers themselves excepted
files=$(find shared recorder exporter -name '*.c' ! -name safefile.c ! -name safepath.c | sort)
bad=$(awk -v re="(^|[^A-Za-z0-9_.>])(${calls})[ \t]*[(]" '
	FNR == 1 { prev = ""; incomment = 0 }
	{
		line = $0
		# comment lines (the calls they name are prose, not calls)
		code = line
		if (incomment) { if (code ~ /\*\//) { sub(/^.*\*\//, "", code); incomment = 0 } else code = "" }
		gsub(/\/\*[^*]*\*+([^\/*][^*]*\*+)*\//, "", code)
		if (code ~ /\/\*/) { sub(/\/\*.*$/, "", code); incomment = 1 }
		sub(/\/\/.*$/, "", code)
		gsub(/"([^"\\]|\\.)*"/, "\"\"", code)
		if (code ~ re && code !~ /^[ \t]*(static|int|void|char|const|ssize_t|FILE)[^=]*\(.*\)[ \t]*$/ &&
		    line !~ /raw:/ && prev !~ /raw:/)
			printf "%s:%d: %s\n", FILENAME, FNR, line
		prev = line
	}' $files)
if [ -n "$bad" ]; then
	echo "raw file calls without a reviewed reason (use shared/safefile.h, or say /* raw: why */):"
	echo "$bad"
	exit 1
fi
echo "ok: every raw open/mkdir/rename/unlink outside the safe helpers has a reviewed reason ($(echo $files | wc -w) files)"
