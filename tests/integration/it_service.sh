#!/bin/sh
# The node mode's service (tools/deploy/rt-node.service.in), installed and
# run the way it confines the node:
#   1. `cmake --install --prefix DIR` puts the unit and its settings under
#      DIR, the unit naming DIR's rt-recorder and settings file, and
#      `systemd-analyze verify` passes on it.
#   2. With no systemd as PID 1 here, the node runs as the unit confines
#      it: its ExecStart's options, in a mount namespace where everything
#      but its store (and its rings' directory, as /dev/shm stays
#      writable) is read-only, /sys/fs/cgroup included, under
#      `setpriv --no-new-privs` with the unit's capability bounding set
#      and nothing inheritable. Another user's Slurm job (a v1 layout of
#      this test's own) is tracked fully: its name from its environment,
#      its exact PSS, its descriptors, its CPU against its group's counter.
#   3. The same without the two capabilities: no job name (its id
#      instead), the members' RSS in place of their PSS (two processes
#      sharing 100 MiB: about 200 MiB, against 100), no descriptor count:
#      what the unit's capabilities are for.
# Needs root (cgroups, namespaces, a second user); skips without.
. "$(dirname "$0")/lib.sh"
if [ "$(id -u)" != 0 ]; then
	echo "skip: needs root (cgroups, a mount namespace)"
	exit 0
fi
CG="python3 $(dirname "$0")/cgjobs.py"

# --- 1. installed, verified ---
cmake --install "$BUILD" --prefix "$T/usr" > "$T/install.log" 2>&1 ||
	fail "cmake --install: $(tail -3 "$T/install.log")"
UNIT="$T/usr/lib/systemd/system/rt-node.service"
CONF="$T/usr/etc/resource-tracker/node.conf"
[ -f "$UNIT" ] && [ -f "$CONF" ] || fail "the unit or its settings not installed: $(cat "$T/install.log")"
grep -qx "ExecStart=$T/usr/bin/rt-recorder --jobs \${RT_NODE_JOBS} .*" "$UNIT" ||
	fail "the unit does not run the installed rt-recorder: $(grep ExecStart "$UNIT")"
grep -qx "EnvironmentFile=-$CONF" "$UNIT" || fail "the unit does not read its installed settings"
if command -v systemd-analyze > /dev/null; then
	systemd-analyze verify --man=no "$UNIT" > "$T/verify.out" 2>&1 || fail "systemd-analyze verify: $(cat "$T/verify.out")"
	! grep -i "rt-node" "$T/verify.out" || fail "systemd-analyze verify warns: $(cat "$T/verify.out")"
	ok "installed under the prefix; systemd-analyze verify passes"
else
	echo "note: no systemd-analyze here: the unit not verified"
fi

# --- 2. confined as the unit confines it ---
id rtcgother > /dev/null 2>&1 || useradd -M -N -s /bin/sh rtcgother
OTHER=$(id -u rtcgother)
SL=/slurm_rtsvc$$
trap '$CG rm $SL; cleanup' EXIT
$CG mk $SL/probe 2> /dev/null || { echo "skip: cannot make cgroups here"; exit 0; }
unshare -m --propagation private true 2> /dev/null || { echo "skip: no mount namespace here"; exit 0; }
$CG rm $SL/probe
# the unit's capabilities (CAP_X CAP_Y) as setpriv's (+x,+y), its
# ExecStart's options with the settings' defaults
CAPS=$(sed -n 's/^CapabilityBoundingSet=//p' "$UNIT" | tr 'A-Z ' 'a-z\n' | sed -n 's/^cap_/+/p' | paste -sd, -)
[ -n "$CAPS" ] || fail "no capability bounding set in the unit"
# run_confined STORE BOUNDING: the node in the namespace, in the background
# (its pid in NODE; the namespace's own process is the node: each step execs)
run_confined() {
	mkdir -p "$1"
	RO_STORE="$1" RO_SHM="$RT_SHM_DIR" unshare -m --propagation private sh -ec '
		mount --bind "$RO_STORE" "$RO_STORE"
		mount --bind "$RO_SHM" "$RO_SHM"
		awk "{print \$5}" /proc/self/mountinfo | while read -r mp; do
			case "$mp" in /proc | /proc/* | /dev | /dev/*) continue ;; esac
			[ "$mp" = "$RO_STORE" ] || [ "$mp" = "$RO_SHM" ] && continue
			mount -o remount,bind,ro "$mp" 2> /dev/null || true
		done
		# (the confinement itself checked: nothing else writable)
		for p in /rt-svc-probe "$(dirname "$RO_STORE")/probe" /sys/fs/cgroup/rt-svc-probe; do
			if mkdir "$p" 2> /dev/null; then echo "writable: $p" >&2; exit 9; fi
		done
		exec setpriv --no-new-privs --bounding-set "$0" --inh-caps=-all "$@"' "$2" \
		"$REC" --jobs slurm --interval 0.5 --store "$1" --store-max-mb 4096 --quiet \
		2> "$1.err" &
	NODE=$!
	track $NODE
}
# job ID NAME: another user's job in this test's Slurm layout, found by
# the node: 100 MiB touched, then a fork, the two sharing those pages
# (their PSS sums to about 100 MiB, their RSS to about 200), each
# spinning 1.5 s of its own CPU (however loaded the machine is)
job() {
	G=$SL/uid_$OTHER/job_$1
	$CG mk $G
	for m in /sys/fs/cgroup/*/; do [ -d "$m$G" ] && chown -R rtcgother "$m$SL/uid_$OTHER"; done
	$CG run $G setpriv --reuid=rtcgother --regid="$(id -g rtcgother)" --clear-groups \
		env SLURM_JOB_ID="$1" SLURM_JOB_NAME="$2" python3 -c "
import os, time
time.sleep(1)
x = bytearray(100 << 20)
for i in range(0, len(x), 4096): x[i] = 1
pid = os.fork()
e = time.process_time() + 1.5
while time.process_time() < e: pass
if pid: os.waitpid(pid, 0)" > /dev/null
}
# its run, once the group emptied: name, max PSS, max fds, CPU; and the
# group's own CPU counter
run_of() {
	i=0
	until "$EXP" --store "$1" runs --job-id "$2" 2> /dev/null | awk 'NR == 2 && $6 != "running" {f = 1} END {exit !f}'; do
		i=$((i + 1))
		[ $i -lt 100 ] || fail "job $2: its run did not end: $(cat "$1.err")"
		sleep 0.2
	done
	id=$("$EXP" --store "$1" runs --job-id "$2" | awk 'NR == 2 {print $1}')
	"$EXP" --store "$1" show "$id" > "$T/show.json"
	"$EXP" --store "$1" replay "$id" | python3 -c "
import json, sys
meta = json.load(open(sys.argv[1]))
rows = [json.loads(l) for l in sys.stdin]
c = [r['cpu'] for r in rows]
print((meta.get('metadata') or {}).get('job_name'), max(x['process_pss_mib'] or 0 for x in c),
      max(x['process_rss_mib'] or 0 for x in c),
      max(x['process_open_fds'] or 0 for x in c),
      sum(x['process_utime_secs'] + x['process_stime_secs'] for x in c))" "$T/show.json"
}
run_confined "$T/store" "-all,$CAPS"
sleep 1.5
kill -0 $NODE 2> /dev/null || fail "the confined node did not start: $(cat "$T/store.err")"
job 701 "svc-etl"
RUN=$(run_of "$T/store" 701) || exit 1
CPU_TRUTH=$($CG cpu $SL/uid_$OTHER/job_701 2> /dev/null || echo 0)
set -- $RUN
[ "$1" = "svc-etl" ] || fail "confined: the job's name (its environment, CAP_SYS_PTRACE): '$1'"
python3 -c "import sys; p, r = map(float, sys.argv[1:]); sys.exit(not (95 <= p <= 150 and r >= 190))" "$2" "$3" ||
	fail "confined: the job's exact PSS (CAP_SYS_PTRACE): PSS $2 MiB, RSS $3 MiB (two processes sharing 100 MiB)"
[ "$4" -ge 3 ] || fail "confined: the job's descriptors (CAP_DAC_READ_SEARCH): $4"
python3 -c "import sys; a, b = map(float, sys.argv[1:]); sys.exit(not (b > 2 and abs(a - b) <= 0.05 * b))" "$5" "$CPU_TRUTH" ||
	fail "confined: the job's CPU $5 s against its group's $CPU_TRUTH s"
ok "confined as the unit says (read-only but its store, bounding set $CAPS, no new privileges): another user's job tracked fully (name, exact PSS $2 MiB beside RSS $3, $4 fds, CPU $5 s against its group's $CPU_TRUTH s)"
kill -TERM $NODE
wait_pid $NODE 15 || fail "the confined node did not stop on TERM"

# --- 3. without the capabilities: what they are for ---
$CG rm $SL/uid_$OTHER/job_701
run_confined "$T/bare" "-all"
sleep 1.5
job 702 "svc-bare"
sleep 4.5
RUN=$(run_of "$T/bare" 702) || exit 1
set -- $RUN
[ "$1" != "svc-bare" ] || fail "without CAP_SYS_PTRACE the job's environment was read: the test shows nothing"
# (unreadable smaps_rollup: rt's PSS is the members' RSS, never a guess lower)
python3 -c "import sys; sys.exit(not float(sys.argv[1]) >= 190)" "$2" ||
	fail "without CAP_SYS_PTRACE an exact PSS of $2 MiB: the test shows nothing"
[ "$4" -eq 0 ] || fail "without CAP_DAC_READ_SEARCH $4 descriptors counted: the test shows nothing"
ok "without the two capabilities: no job name ('$1'), PSS only the members' RSS ($2 MiB), no descriptors ($4): what the two are there for"
kill -TERM $NODE
wait_pid $NODE 15 || true
