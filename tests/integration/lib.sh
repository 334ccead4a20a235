# lib.sh - helpers for integration tests. Sourced with BUILD set to the build dir.
set -eu
BUILD=${BUILD:?set BUILD to the build directory}
BUILD=$(cd "$BUILD" && pwd)
REC="$BUILD/rt-recorder"
RT="$BUILD/resource-tracker"
EXP="$BUILD/rt-export"
T=$(mktemp -d)
export RT_STORE="$T/store" RT_SHM_DIR="$T/shm"
# the recorder's test hooks (RT_TEST_CLOCK) are honoured only with this
export RT_TEST_HOOKS=1
# cloud discovery (report, --servers) probes a closed local port, never the
# link-local metadata addresses: network tests touch only 127.0.0.1
export RT_IMDS_ADDR="${RT_IMDS_ADDR:-127.0.0.1:1}"
mkdir -p "$RT_SHM_DIR"
# background peers and processes to stop at exit (dash's `jobs` is empty
# inside the EXIT trap, so they are tracked explicitly)
TRACKED=""
track() { TRACKED="$TRACKED $1"; }
cleanup() {
	# stop anything this test started, then remove its files
	for p in $TRACKED $(jobs -p); do kill -9 "$p" 2>/dev/null || true; done
	rm -rf "$T"
}
trap cleanup EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
ok() { echo "ok: $*"; }
# wait_for CMD... : poll up to 10 s
wait_for() {
	i=0
	while ! "$@" >/dev/null 2>&1; do
		i=$((i + 1)); [ $i -gt 200 ] && return 1
		sleep 0.05
	done
}
# port: a free TCP port on 127.0.0.1
port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
# serve NAME CMD... : start a peer server in the background, its output in
# $T/NAME.out, and wait until it prints "ready"; SERVED is its pid. The old
# output is removed first: a restarted peer's "ready" must be its own, not
# its predecessor's still in the file before the shell truncates it.
serve() {
	name=$1; shift
	rm -f "$T/$name.out"
	"$@" > "$T/$name.out" 2>&1 &
	SERVED=$!; track $SERVED
	wait_for grep -q ready "$T/$name.out" || fail "$name server did not start: $(cat "$T/$name.out" 2>/dev/null)"
}
# wait_pid PID SECONDS : wait for a background job with a time bound
wait_pid() {
	i=0
	while kill -0 "$1" 2>/dev/null; do
		i=$((i + 1)); [ $i -gt $(($2 * 20)) ] && return 1
		sleep 0.05
	done
	wait "$1" 2>/dev/null || true
}
