#!/bin/sh
# Root's writing verbs on a store another user owns (issue 52, item 1).
# Bob (a test user) owns the store's directory: he swaps its push/ and
# upload/ folders for his own, holding the checkpoints' names as links to
# a file of root's and to a path where root must create nothing, and as
# FIFOs. Root's push (OTLP), upload, report, recover, compact and delete
# run on it: each is refused for writing in one line or writes only where
# root owns, nothing of root's changes, nothing hangs. Then bob's own push
# on his own store, with a FIFO and a link at its checkpoint's name.
. "$(dirname "$0")/lib.sh"
HERE=$(cd "$(dirname "$0")/../.." && pwd)
[ "$(id -u)" -eq 0 ] || { echo "skip: needs root (a second user)"; exit 77; }
O=rts$$
useradd -M -N -s /bin/sh "$O" 2>/dev/null || { echo "skip: cannot add a user here"; exit 77; }
trap 'userdel "$O" 2>/dev/null || true; cleanup' EXIT
chmod 711 "$T"
D="$T/bob"
mkdir -m 755 "$D" && chown "$O" "$D"
as() { setpriv --reuid="$O" --regid="$(id -g "$O")" --clear-groups env HOME="$D" RT_STORE="$D/st" RT_SHM_DIR="$D/shm" "$@"; }
as mkdir -m 700 "$D/shm"
victim="$T/victim"
echo precious > "$victim"
nologin="$T/nologin"
intact() { [ "$(cat "$victim")" = precious ] && [ ! -e "$nologin" ]; }
PORT=$(port)
mkdir -p "$T/recv"
serve otlp python3 "$HERE/tools/otlp_receiver.py" "$PORT" "$T/recv"
export OTEL_EXPORTER_OTLP_ENDPOINT="http://127.0.0.1:$PORT/"
as "$RT" -i 0.05 --count 4 --quiet
# bob learns the checkpoint's name from a push of his own
as "$EXP" push 1 --to otlp 2> "$T/bob.err" || fail "bob's own push: $(cat "$T/bob.err")"
CK=$(ls "$D/st/push" | grep -v '\.lock$' | head -1)
[ -n "$CK" ] || fail "bob's push left no checkpoint: $(ls -la "$D/st/push")"
plant() { # DIR NAME...: bob's folder in place of the store's DIR, its names links
	as rm -rf "$D/st/$1"
	as mkdir -m 777 "$D/st/$1"
	d=$1; shift
	for n in "$@"; do
		as ln -s "$victim" "$D/st/$d/$n"
		as ln -s "$nologin" "$D/st/$d/$n.lock"
		as ln -s "$victim" "$D/st/$d/$n.tmp"
	done
}
# ---- push, as root
plant push "$CK"
set +e
timeout 20 "$EXP" --store "$D/st" push 1 --to otlp 2> "$T/p.err"; r=$?
set -e
intact || fail "root's push wrote through bob's links: $(head -c 40 "$victim"), $(ls -l "$nologin" 2>&1)"
[ $r -eq 1 ] || fail "root's push: exit $r: $(cat "$T/p.err")"
[ "$(wc -l < "$T/p.err")" -eq 1 ] && grep -q "belongs to another user (uid $(id -u "$O"))" "$T/p.err" ||
	fail "root's push did not say why in one line: $(cat "$T/p.err")"
ok "root's push on bob's store: refused in one line ($(cut -c1-90 "$T/p.err")...), root's files intact"
# ---- the same with FIFOs at the names: no hang
as rm -rf "$D/st/push"
as mkdir -m 777 "$D/st/push"
as mkfifo "$D/st/push/$CK" "$D/st/push/$CK.lock"
set +e
timeout 20 "$EXP" --store "$D/st" push 1 --to otlp 2> "$T/f.err"; r=$?
set -e
[ $r -eq 1 ] || fail "root's push with FIFOs planted: exit $r (124: it hung): $(cat "$T/f.err")"
ok "root's push with FIFOs at the checkpoint's names: refused at once"
# ---- upload, as root (the Sentinel address is never reached: refused first)
plant upload 1.json 1
set +e
SENTINEL_API_TOKEN=t SENTINEL_API_URL="http://127.0.0.1:1" timeout 20 "$EXP" --store "$D/st" upload 1 2> "$T/u.err"; r=$?
set -e
intact || fail "root's upload wrote through bob's links"
[ $r -eq 1 ] && grep -q "belongs to another user" "$T/u.err" || fail "root's upload: exit $r: $(cat "$T/u.err")"
ok "root's upload on bob's store: refused in one line, root's files intact"
# ---- report, recover, compact, delete, as root: nothing written into bob's store
before=$(cd "$D/st" && find . | sort | md5sum)
mkdir -m 700 "$T/rootside"
(cd "$T/rootside" && timeout 30 "$EXP" --store "$D/st" report 1 > /dev/null 2> "$T/r.err") || fail "root's report of bob's run: $(cat "$T/r.err")"
[ -s "$T/rootside/rt-report-1.html" ] || fail "the report was not written in root's directory: $(ls "$T/rootside")"
timeout 30 "$EXP" recover "$D/st" -o "$T/rootside/copy" > /dev/null 2> "$T/c.err" || fail "root's recover of bob's store: $(cat "$T/c.err")"
[ "$(stat -c %U "$T/rootside/copy/data.mdb")" = root ] || fail "the recovered copy is not root's"
set +e
timeout 30 "$EXP" --store "$D/st" compact 2> "$T/k.err"; r1=$?
timeout 30 "$EXP" --store "$D/st" delete 1 2> "$T/d.err"; r2=$?
set -e
[ $r1 -ne 0 ] && [ $r2 -ne 0 ] || fail "root's compact ($r1) or delete ($r2) of bob's store went on"
after=$(cd "$D/st" && find . | sort | md5sum)
[ "$before" = "$after" ] || fail "root wrote into bob's store: $(cd "$D/st" && find . | sort)"
[ -z "$(find "$D" -user root)" ] || fail "root made files in bob's directory: $(find "$D" -user root)"
intact || fail "root's files changed"
ok "root's report and recover write only where root owns; compact and delete refused; bob's store unchanged"
# ---- bob's own push with a FIFO and a link at its checkpoint's name
as rm -rf "$D/st/push"
as mkdir -m 700 "$D/st/push"
as mkfifo "$D/st/push/$CK"
set +e
as timeout 20 "$EXP" push 1 --to otlp 2> "$T/o.err"; r=$?
set -e
[ $r -eq 0 ] || fail "bob's push with a FIFO at its checkpoint: exit $r (124: it hung): $(cat "$T/o.err")"
[ -f "$D/st/push/$CK" ] && [ ! -p "$D/st/push/$CK" ] || fail "the FIFO was not replaced by the checkpoint"
as rm -f "$D/st/push/$CK"
as ln -s "$D/elsewhere" "$D/st/push/$CK"
as timeout 20 "$EXP" push 1 --to otlp 2> "$T/o2.err" || fail "bob's push with a link at its checkpoint: $(cat "$T/o2.err")"
[ ! -e "$D/elsewhere" ] && [ -f "$D/st/push/$CK" ] && [ ! -L "$D/st/push/$CK" ] || fail "the link at the checkpoint was followed"
ok "a FIFO at the checkpoint's name: said, the push went on and replaced it; a link: replaced, never followed"
