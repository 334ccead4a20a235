#!/bin/sh
# Real containers under the node mode's --jobs podman: Debian's podman
# (runc, cgroupfs: this machine's hybrid cgroups and no CAP_SYS_RESOURCE)
# on an image built here from busybox-static (no registry). Two
# containers, each with its own --memory limit, one named by podman
# alone, one with the CRI annotations a Kubernetes runtime writes: each
# its own run, found, named (podman's name; the CRI container name, its
# pod and namespace from the OCI bundle's annotations, no API server),
# given its --memory limit, its CPU against its own group's counter (the
# container reads it as its last act). Needs root, podman, runc and
# busybox-static (skips without).
. "$(dirname "$0")/lib.sh"
[ "$(id -u)" = 0 ] || { echo "skip: needs root (podman's cgroups)"; exit 0; }
for p in podman runc busybox; do
	command -v $p > /dev/null 2>&1 || { echo "skip: no $p (Debian's podman, runc, busybox-static)"; exit 0; }
done
IMG=localhost/rt-it-bb:$$
P="podman --runtime runc --cgroup-manager cgroupfs"
RUN="--ulimit nofile=1024:1024 --ulimit nproc=1024:1024 --rm"
mkdir -p "$T/root/bin"
cp "$(command -v busybox)" "$T/root/bin/"
for c in sh sleep cat head tr true sed; do ln -s busybox "$T/root/bin/$c"; done
tar -C "$T/root" -cf "$T/bb.tar" .
$P import "$T/bb.tar" $IMG > /dev/null 2>&1 || { echo "skip: podman cannot import an image here"; exit 0; }
trap '$P rm -f rtit-a-$$ rtit-b-$$ > /dev/null 2>&1; $P rmi -f $IMG > /dev/null 2>&1; cleanup' EXIT
$P run $RUN $IMG true > "$T/probe" 2>&1 || { echo "skip: podman cannot run a container here: $(tail -2 "$T/probe")"; exit 0; }
"$REC" --jobs podman -i 0.5 2> "$T/node.err" &
track $!
sleep 1
# about 1 s of CPU in the shell, 25 MB held in a variable, then the
# group's own CPU counter (its cgroup is what /sys/fs/cgroup shows it)
work='i=0; while [ $i -lt 250000 ]; do i=$((i + 1)); done
x=$(head -c 25000000 /dev/zero | tr "\0" a); sleep 2
echo "truth $(cat /sys/fs/cgroup/cpuacct/cpuacct.usage 2> /dev/null || sed -n "s/^usage_usec //p" /sys/fs/cgroup/cpu.stat)"'
$P run $RUN --name rtit-a-$$ --memory 100m $IMG sh -c "$work" > "$T/a.out" 2> "$T/a.err" &
A=$!
$P run $RUN --name rtit-b-$$ --memory 80m \
	--annotation io.kubernetes.cri.container-name=web \
	--annotation io.kubernetes.cri.sandbox-name=shop-7d9 \
	--annotation io.kubernetes.cri.sandbox-namespace=prod \
	$IMG sh -c "$work" > "$T/b.out" 2> "$T/b.err" &
B=$!
wait_pid $A 120 || fail "container a did not end: $(cat "$T/a.err")"
wait_pid $B 120 || fail "container b did not end: $(cat "$T/b.err")"
grep -q '^truth [0-9]' "$T/a.out" && grep -q '^truth [0-9]' "$T/b.out" ||
	fail "the containers' own counters: $(cat "$T/a.out" "$T/a.err" "$T/b.out" "$T/b.err")"
# each container's run, once its group went: its metadata and figures
run_of() { # NAME: the run whose job is named NAME, once it ended
	for _ in $(seq 100); do
		id=$("$EXP" runs --scheduler podman 2> /dev/null | awk -v n="$1" 'NR > 1 && $6 != "running" && $0 ~ n {print $1}' | tail -1)
		[ -n "$id" ] && { echo "$id"; return 0; }
		sleep 0.2
	done
	fail "no ended run named $1: $("$EXP" runs 2>&1) / node: $(cat "$T/node.err")"
}
check() { # RUN NAME LIMIT_MIB TRUTH_FILE [POD NS]
	"$EXP" show "$1" > "$T/show.json"
	"$EXP" replay "$1" > "$T/replay.jsonl"
	python3 - "$T/show.json" "$T/replay.jsonl" "$2" "$3" "$(awk '/^truth/ {print $2}' "$4")" "${5:-}" "${6:-}" << 'PY'
import json, sys
m = json.load(open(sys.argv[1]))
rows = [json.loads(l) for l in open(sys.argv[2])]
name, limit, truth = sys.argv[3], int(sys.argv[4]), int(sys.argv[5])
c, a = m["cgroup"], m["allocation"]
assert c["scheduler"] == "podman" and len(c["job_id"]) == 64 and c["name"] == name, c
assert "bounds_hit" not in c, c  # (named by its runtime: no environment waited for)
assert a["memory_bytes"] == limit << 20 and a["memory_from"] == "cgroup", a
# (and what the group ran before the node's first sample of it)
cpu = sum(r["cpu"]["process_utime_secs"] + r["cpu"]["process_stime_secs"] for r in rows)
cpu += c.get("cpu_before_secs") or 0
# the counter was read before the container's last instant: rt's figure
# is at least it, and within 0.1 s of it
t = truth / 1e9 if truth > 1e6 else truth / 1e6
assert t > 0.2 and t - 0.01 <= cpu <= t + 0.1, (cpu, t)
pss = max(r["cpu"]["process_pss_mib"] or 0 for r in rows)
assert 20 <= pss <= limit, pss
if sys.argv[6]:
    assert (c.get("pod"), c.get("namespace")) == (sys.argv[6], sys.argv[7]), c
print(f"{name}: CPU {cpu:.3f} s (its group {t:.3f} s), PSS peak {pss} MiB of its {limit} MiB")
PY
}
ra=$(run_of "rtit-a-$$")
rb=$(run_of "web")
[ "$ra" != "$rb" ] || fail "the two containers share run $ra"
sa=$(check "$ra" "rtit-a-$$" 100 "$T/a.out") || fail "container a: $sa"
sb=$(check "$rb" web 80 "$T/b.out" shop-7d9 prod) || fail "container b: $sb"
ok "--jobs podman: two real containers, each its own run, named (podman's: $sa; the CRI annotations': $sb)"
