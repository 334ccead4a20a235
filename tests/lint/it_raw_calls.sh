#!/bin/sh
# The tree has no raw file call without a reviewed reason, and the check
# finds one: a copy of shared/ with an unreviewed open() planted must fail.
set -eu
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
sh "$HERE/raw_calls.sh" "$ROOT"
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
mkdir -p "$T/recorder" "$T/exporter"
cp -r "$ROOT/shared" "$T/"
printf 'int planted(const char *p)\n{\n\treturn open(p, O_WRONLY | O_CREAT, 0600);\n}\n' >> "$T/shared/fmt/fmt.c"
if out=$(sh "$HERE/raw_calls.sh" "$T" 2>&1); then
	echo "FAIL: a planted raw open() was not found"; exit 1
fi
echo "$out" | grep -q 'shared/fmt/fmt.c:.*open(p, O_WRONLY' || { echo "FAIL: the planted call is not named: $out"; exit 1; }
echo "ok: a planted raw open() is found and named"
