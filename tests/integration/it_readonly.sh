#!/bin/sh
# Readers need no write access: an archived store (directory 555, files
# 444) is read by its owner, and a copy another user owns is read by
# anyone who can read it (without its lock file: it is theirs). runs,
# replay, summary and report work on both and leave the files as they were.
# Needs root for setpriv (an unprivileged user: root writes anything).
. "$(dirname "$0")/lib.sh"
if [ "$(id -u)" != 0 ] || ! command -v setpriv >/dev/null 2>&1; then
	echo "skip: needs root and setpriv (an unprivileged user)"
	exit 0
fi
chmod 755 "$T"
mkdir -p "$T/bin" "$T/home" "$T/pub"
cp "$BUILD/rt-recorder" "$BUILD/rt-export" "$BUILD/rt-export-full" "$T/bin/"
chmod 755 "$T/bin" "$T/bin"/*
chown 65534:65534 "$T/home"
chmod 1777 "$T/pub"
sanitizer_env=""
[ -n "${RT_SANITIZE:-}" ] && [ "$RT_SANITIZE" != OFF ] && sanitizer_env="ASAN_OPTIONS=detect_leaks=0"
NB="setpriv --reuid=65534 --regid=65534 --clear-groups env -i PATH=/usr/bin:/bin HOME=$T/home RT_SHM_DIR=$T/pub RT_IMDS_ADDR=127.0.0.1:1 $sanitizer_env"

# reads the store given by every reader verb; the files must not change
read_all() { # NAME STORE [as...]
	name=$1 st=$2
	shift 2
	sum0=$(cd "$st" && sha256sum data.mdb lock.mdb 2>/dev/null | sha256sum)
	"$@" "$T/bin/rt-export" --store "$st" runs > "$T/$name.runs" 2> "$T/$name.err" ||
		fail "$name: runs: $(cat "$T/$name.err")"
	grep -q "ro-job" "$T/$name.runs" || fail "$name: runs lists no run: $(cat "$T/$name.runs")"
	"$@" "$T/bin/rt-export" --store "$st" replay latest > "$T/$name.jsonl" 2>> "$T/$name.err" ||
		fail "$name: replay: $(cat "$T/$name.err")"
	cmp -s "$T/$name.jsonl" "$T/orig.jsonl" || fail "$name: the replay differs from the original's"
	"$@" "$T/bin/rt-export" --store "$st" summary latest > "$T/$name.sum" 2>> "$T/$name.err" ||
		fail "$name: summary: $(cat "$T/$name.err")"
	"$@" "$T/bin/rt-export" --store "$st" report latest -o - > "$T/$name.html" 2>> "$T/$name.err" ||
		fail "$name: report: $(cat "$T/$name.err")"
	grep -q "<html" "$T/$name.html" || fail "$name: no report"
	sum1=$(cd "$st" && sha256sum data.mdb lock.mdb 2>/dev/null | sha256sum)
	[ "$sum0" = "$sum1" ] || fail "$name: a reader changed the store's files"
	! grep -qi "permission denied" "$T/$name.err" || fail "$name: $(cat "$T/$name.err")"
}

# 1. the owner's archive: written by nobody, then made read-only
$NB "$T/bin/rt-recorder" --store "$T/home/st" -i 0.05 --quiet --job-name ro-job -- sleep 0.5 ||
	fail "recording as nobody"
$NB "$T/bin/rt-export" --store "$T/home/st" replay latest > "$T/orig.jsonl"
[ -s "$T/orig.jsonl" ] || fail "no samples recorded"
chmod 444 "$T/home/st"/*
chmod 555 "$T/home/st"
read_all archive "$T/home/st" $NB
ok "the owner reads an archived store (555/444): runs, replay, summary, report"

# 2. a copy the reader does not own: root's, world-readable
cp -r "$T/home/st" "$T/rootcopy"
chown -R 0:0 "$T/rootcopy"
chmod 755 "$T/rootcopy"
chmod 644 "$T/rootcopy"/*
read_all shared "$T/rootcopy" $NB
ok "another user's copy is read without its lock file, and left as it was"

# 3. a lock file that cannot be opened for writing, in a store of one's own
chmod 755 "$T/home/st"
chmod 644 "$T/home/st/data.mdb"
chmod 444 "$T/home/st/lock.mdb"
chmod 555 "$T/home/st"
read_all nolock "$T/home/st" $NB
ok "a store whose lock file cannot be written is read all the same"
