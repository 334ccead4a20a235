#!/bin/sh
# Another local user never reaches through root (issue 38, items 1-4):
# root runs rt on paths in a directory the other user owns, where that user
# planted links to root's files and to a device, swaps a FIFO and a link
# under rt's open (renameat2 RENAME_EXCHANGE, bounded tries), points
# XDG_DATA_HOME through a link into a root directory, and swaps a FIFO in
# for a store's data.mdb. Nothing of root's changes, nothing hangs.
. "$(dirname "$0")/lib.sh"
HERE=$(cd "$(dirname "$0")" && pwd)
O=rto$$
useradd -M -N -s /bin/sh "$O" 2>/dev/null || { echo "skip: cannot add a user here"; exit 77; }
trap 'userdel "$O" 2>/dev/null || true; cleanup' EXIT
chmod 711 "$T"
D="$T/other"
mkdir -m 755 "$D" "$D/shm" && chown "$O" "$D" "$D/shm"
as() { setpriv --reuid="$O" --regid="$(id -g "$O")" --clear-groups env HOME="$D" RT_STORE="$D/store" RT_SHM_DIR="$D/shm" "$@"; }
# swap A B SECONDS, as the other user, in the background: SW is its pid
# (the system's python: a per-user one, such as pyenv's, is not the other user's to run)
PY=$(command -v /usr/bin/python3 || command -v python3)
swap() { setpriv --reuid="$O" --regid="$(id -g "$O")" --clear-groups "$PY" "$HERE/swap.py" "$@" > /dev/null & SW=$!; track $SW; }
victim="$T/victim"
echo precious > "$victim"
intact() { [ "$(cat "$victim")" = precious ] && [ "$(stat -c %s "$victim")" -eq 9 ]; }
"$RT" -i 0.05 --count 3 --job-name mine --quiet
RUN=$("$EXP" runs | awk 'NR > 1 { print $1; exit }')

# ---- 1. a FIFO and a link to root's file swapped under the open
as mkfifo "$D/out"
as ln -s "$victim" "$D/alt"
swap "$D/out" "$D/alt" 60
tries=0
while [ $tries -lt 40 ] && intact; do
	tries=$((tries + 1))
	"$RT" -i 0.01 --count 1 -o "$D/out" > /dev/null 2>&1 || true
	"$EXP" replay "$RUN" -f csv -o "$D/out" > /dev/null 2>&1 || true
done
kill $SW 2>/dev/null || true; wait $SW 2>/dev/null || true
intact || fail "root's file was overwritten through the swapped link at try $tries: $(head -c 80 "$victim")"
ok "a FIFO and a link swapped under -o and replay -o: root's file intact ($tries tries each)"
as rm -f "$D/out" "$D/alt"

# ---- 2. links to root's file and to a device, planted where root writes
LOOP=""
if truncate -s 1M "$T/loopfile" && LOOP=$(losetup -f --show "$T/loopfile" 2>/dev/null); then
	trap 'losetup -d "$LOOP" 2>/dev/null || true; userdel "$O" 2>/dev/null || true; cleanup' EXIT
fi
dev=${LOOP:-$victim}
as ln -s "$dev" "$D/metrics.jsonl"
as ln -s "$victim" "$D/run.csv"
as ln -s "$dev" "$D/rt-report-$RUN.html"
set +e
"$RT" -i 0.1 -o "$D/metrics.jsonl" -- sh -c 'sleep 0.3; exit 4' 2> "$T/l.err"; r1=$?
"$EXP" replay "$RUN" -o "$D/run.csv" 2>> "$T/l.err"; r2=$?
(cd "$D" && "$EXP" report "$RUN" 2>> "$T/l.err"); r3=$?
set -e
intact || fail "root's file was written through a planted link: $(head -c 80 "$victim")"
if [ -n "$LOOP" ]; then
	cmp -s -n 65536 "$LOOP" /dev/zero || fail "the device $LOOP was written: $(head -c 80 "$LOOP")"
fi
[ $r1 -eq 4 ] || fail "the wrapped job's exit: $r1 ($(cat "$T/l.err"))"
grep -q "symbolic link of another user's" "$T/l.err" || fail "no line says why: $(cat "$T/l.err")"
ok "links to ${LOOP:+a device ($LOOP) and }root's file planted at -o, replay -o and the report's default name: not followed (exits $r1 $r2 $r3)"

# ---- 3. XDG_DATA_HOME leading through the other user's link
mkdir -m 700 "$T/rootdir"
as mkdir "$D/xdg"
as ln -s "$T/rootdir" "$D/xdg/resource-tracker"
set +e
# (TMPDIR: the private store it falls back to is the test's, not /tmp's)
env -u RT_STORE XDG_DATA_HOME="$D/xdg" TMPDIR="$T" "$RT" -i 0.05 --count 1 --quiet 2> "$T/x.err"; r1=$?
env -u RT_STORE XDG_DATA_HOME="$D/xdg" TMPDIR="$T" "$RT" --quiet -- sh -c 'exit 3' 2> "$T/x2.err"; r2=$?
set -e
[ -z "$(ls -A "$T/rootdir")" ] || fail "a store was made in root's directory: $(ls -A "$T/rootdir")"
# (the default store refused: one warning, the run kept in a private one)
[ $r1 -eq 0 ] && [ "$(wc -l < "$T/x.err")" -eq 1 ] && grep -q "symbolic link of another user's.*stored in" "$T/x.err" ||
	fail "standalone: exit $r1: $(cat "$T/x.err")"
[ $r2 -eq 3 ] || fail "wrapped: exit $r2: $(cat "$T/x2.err")"
ok "XDG_DATA_HOME through another user's link: refused in one line, the run stored privately, the wrapped job ran"

# ---- 4. a FIFO swapped in for the other user's data.mdb
as "$RT" -i 0.05 --count 2 --quiet
as mkfifo "$D/store/fifo"
swap "$D/store/data.mdb" "$D/store/fifo" 120
hung=0
for i in $(seq 21); do
	set +e; timeout 5 "$EXP" --store "$D/store" runs > /dev/null 2>&1; rc=$?; set -e
	[ $rc -eq 124 ] && hung=$((hung + 1))
done
kill $SW 2>/dev/null || true; wait $SW 2>/dev/null || true
[ $hung -eq 0 ] || fail "rt-export hung on the swapped FIFO $hung of 21 times"
ok "a FIFO swapped in for another user's data.mdb: no hang in 21 tries"

# ---- 5. root's store in the other user's directory, swapped with a link of
# theirs (issue 45 item 1): compact and delete --compact work only in the
# directory they checked; nothing of root's is made in the other's
S="$D/stores/s"
as mkdir "$D/stores" "$D/evil"
as env RT_STORE="$D/evil" "$RT" -i 0.01 --count 1 --quiet
for i in $(seq 260); do RT_STORE="$S" "$RT" -i 0.01 --count 1 --job-name swapped --quiet; done
as ln -s "$D/evil" "$D/stores/l"
rooted() { [ -n "$(find "$D/evil" -user root 2>/dev/null | head -1)" ]; }
swap "$S" "$D/stores/l" 240
tries=0
while [ $tries -lt 500 ] && ! rooted; do
	tries=$((tries + 1))
	"$EXP" --store "$S" compact > /dev/null 2>&1 || true
done
rooted && fail "compact made root's files in the other user's directory at try $tries: $(find "$D/evil" -user root)"
n=1 deleted=0 dtries=0
while [ $dtries -lt 500 ] && ! rooted; do
	dtries=$((dtries + 1))
	if "$EXP" --store "$S" delete "$n" --compact 2> /dev/null | grep -q "deleted run"; then
		n=$((n + 1)) deleted=$((deleted + 1))
	fi
done
kill $SW 2>/dev/null || true; wait $SW 2>/dev/null || true
rooted && fail "delete --compact made root's files in the other user's directory at try $dtries: $(find "$D/evil" -user root)"
[ -L "$S" ] && mv "$S" "$D/stores/t" && mv "$D/stores/l" "$S"
left=$("$EXP" --store "$S" runs | awk 'NR > 1' | wc -l)
[ "$left" -eq $((260 - deleted)) ] || fail "root's store holds $left runs after $deleted deletions of 260"
[ $deleted -gt 0 ] || fail "no delete went through in $dtries tries: the loop tested nothing"
ok "root's store swapped with another user's link: compact $tries tries, delete --compact $dtries tries ($deleted deleted), nothing made in the other's directory"
