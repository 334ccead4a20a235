#!/bin/sh
# Real containers under the node mode's --jobs podman: Debian's podman
# (runc, cgroupfs: this machine's hybrid cgroups and no CAP_SYS_RESOURCE)
# on an image built here from busybox-static (no registry). Two
# containers, each with its own --memory limit, one named by podman
# alone, one with the CRI annotations a Kubernetes runtime writes: each
# its own run, found, named (podman's name; the CRI container name, its
# pod and namespace from the OCI bundle's annotations, no API server),
# given its --memory limit, its CPU against its own group's counter (the
# container reads it as its last act). Then a pod as a Kubernetes node
# has one, under --jobs kubernetes: its group made under kubepods with
# the pod's memory limit (the kubelet's part), two containers placed in
# it (--cgroup-parent) with the names CRI-O writes into their bundles
# (podman's storage is CRI-O's layout): one run for the pod, named and
# sized by its own group, each container a part by its own name. Needs
# root, podman, runc and busybox-static (skips without).
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
# a pod's group, as the kubelet makes it before its containers come
POD=kubepods/burstable/pod0f1e2d3c-$$-4bbb-8ccc-1234567890ab
unpod() { # the pod's groups, deepest first (empty ones only: rmdir)
	for h in /sys/fs/cgroup/*/ /sys/fs/cgroup/; do
		[ -d "$h$POD" ] && find "$h${POD%%/*}" -depth -type d -exec rmdir {} + 2> /dev/null
	done
	return 0
}
trap '$P rm -f rtit-a-$$ rtit-b-$$ rtit-web-$$ rtit-side-$$ > /dev/null 2>&1; $P rmi -f $IMG > /dev/null 2>&1; unpod; cleanup' EXIT
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

# The pod: its group and limit first, then two containers in it, each
# with the annotations CRI-O gives a pod's container
mkdir -p "/sys/fs/cgroup/memory/$POD" 2> /dev/null || mkdir -p "/sys/fs/cgroup/$POD"
if [ -f "/sys/fs/cgroup/memory/$POD/memory.limit_in_bytes" ]; then
	echo $((200 << 20)) > "/sys/fs/cgroup/memory/$POD/memory.limit_in_bytes"
else
	echo $((200 << 20)) > "/sys/fs/cgroup/$POD/memory.max"
fi
export RT_STORE="$T/k8s" RT_SHM_DIR="$T/k8s-shm"
"$REC" --jobs kubernetes -i 0.5 2> "$T/k8s.err" &
track $!
sleep 1
crio() { # CONTAINER: CRI-O's names for a container of pod shop-7d9 in prod
	echo "--annotation io.kubernetes.container.name=$1 --annotation io.kubernetes.pod.name=shop-7d9 --annotation io.kubernetes.pod.namespace=prod"
}
# shellcheck disable=SC2046 # (crio's words are options)
$P run $RUN --name rtit-web-$$ --memory 60m --cgroup-parent "/$POD" $(crio web) \
	$IMG sh -c "$work" > "$T/web.out" 2> "$T/web.err" &
W=$!
# shellcheck disable=SC2046
$P run $RUN --name rtit-side-$$ --cgroup-parent "/$POD" $(crio sidecar) \
	$IMG sh -c 'i=0; while [ $i -lt 50000 ]; do i=$((i + 1)); done; sleep 2' > "$T/side.out" 2> "$T/side.err" &
S=$!
wait_pid $W 120 || fail "the pod's web container did not end: $(cat "$T/web.err")"
wait_pid $S 120 || fail "the pod's sidecar did not end: $(cat "$T/side.err")"
grep -q '^truth [0-9]' "$T/web.out" || fail "the web container: $(cat "$T/web.out" "$T/web.err")"
# the truth: the pod's own group's counter, read here once all of it ended
ptruth=$(cat "/sys/fs/cgroup/cpuacct/$POD/cpuacct.usage" 2> /dev/null ||
	sed -n 's/^usage_usec //p' "/sys/fs/cgroup/$POD/cpu.stat")
for _ in $(seq 100); do
	rp=$("$EXP" runs --scheduler kubernetes 2> /dev/null | awk 'NR > 1 && $6 != "running" {print $1}' | tail -1)
	[ -n "$rp" ] && break
	sleep 0.2
done
[ -n "$rp" ] || fail "no ended pod run: $("$EXP" runs 2>&1) / node: $(cat "$T/k8s.err")"
"$EXP" show "$rp" > "$T/pod.json"
"$EXP" replay "$rp" > "$T/pod.jsonl"
"$EXP" summary "$rp" > "$T/pod.txt" 2>&1 || fail "the pod's summary: $(cat "$T/pod.txt")"
sp=$(python3 - "$T/pod.json" "$T/pod.jsonl" "$ptruth" "${POD##*/pod}" << 'PY'
import json, sys
m = json.load(open(sys.argv[1]))
rows = [json.loads(l) for l in open(sys.argv[2])]
truth, uid = int(sys.argv[3]), sys.argv[4]
c, a = m["cgroup"], m["allocation"]
assert c["scheduler"] == "kubernetes" and c["job_id"] == uid, c
assert (c.get("name"), c.get("pod"), c.get("namespace")) == ("shop-7d9", "shop-7d9", "prod"), c
assert m["metadata"]["job_name"] == "shop-7d9", m["metadata"]
assert a["memory_bytes"] == 200 << 20 and a["memory_from"] == "cgroup", a
parts = {p.get("container", p["name"]): p for p in c["parts"]}
assert {"web", "sidecar"} <= set(parts), c["parts"]
assert parts["web"]["mem_limit_bytes"] == 60 << 20, parts["web"]
cpu = sum(r["cpu"]["process_utime_secs"] + r["cpu"]["process_stime_secs"] for r in rows)
cpu += c.get("cpu_before_secs") or 0
t = truth / 1e9 if truth > 1e6 else truth / 1e6
assert t > 0.2 and t - 0.05 <= cpu <= t + 0.05, (cpu, t)
pss = max(r["cpu"]["process_pss_mib"] or 0 for r in rows)
assert 20 <= pss <= 200, pss
print(f"pod shop-7d9 in prod: CPU {cpu:.3f} s (its group {t:.3f} s), PSS peak {pss} MiB of its 200 MiB, "
      f"containers {sorted(parts)}")
PY
) || fail "the pod: $sp / $(cat "$T/pod.json")"
# each container its own line, and its own resources block; conmon (in
# the pod's group, as CRI-O places it) a part, but nothing a spec sets
for c in web sidecar; do
	grep -q " $c: CPU" "$T/pod.txt" && grep -q " $c: resources: {requests" "$T/pod.txt" ||
		fail "the pod's summary has no line of its container $c: $(cat "$T/pod.txt")"
done
grep -q "conmon: resources" "$T/pod.txt" && fail "conmon given resources: $(cat "$T/pod.txt")"
ok "--jobs kubernetes: a pod of two real containers, one run named by their CRI-O bundles ($sp)"

# Found by what an operator knows: the pod's name, its namespace (and the
# first node's container with the CRI annotations by its namespace too)
[ "$("$EXP" runs --namespace prod | awk 'NR > 1 {print $1}')" = "$rp" ] ||
	fail "runs --namespace prod: $("$EXP" runs --namespace prod 2>&1)"
[ "$("$EXP" runs --pod shop-7d9 | awk 'NR > 1 {print $1}')" = "$rp" ] ||
	fail "runs --pod shop-7d9: $("$EXP" runs --pod shop-7d9 2>&1)"
[ -z "$("$EXP" runs --namespace other | awk 'NR > 1')" ] || fail "runs --namespace other lists runs"
# (the runs a filter selects, a row each, as for --user)
"$EXP" summary --namespace prod > "$T/ns.txt" 2>&1 && awk -v r="$rp" '$1 == r' "$T/ns.txt" | grep -q . ||
	fail "summary --namespace prod: $(cat "$T/ns.txt")"
[ "$(RT_STORE="$T/store" RT_SHM_DIR="$T/shm" "$EXP" runs --namespace prod | awk 'NR > 1 {print $1}')" = "$rb" ] ||
	fail "the podman node's runs --namespace prod: $(RT_STORE="$T/store" "$EXP" runs --namespace prod 2>&1)"
# and in the sinks: the pod's points carry its user, name, namespace, uid
HERE=$(cd "$(dirname "$0")/../.." && pwd)
PORT=$(port)
mkdir -p "$T/recv"
serve otlp python3 "$HERE/tools/otlp_receiver.py" "$PORT" "$T/recv"
OTEL_EXPORTER_OTLP_ENDPOINT="http://127.0.0.1:$PORT/" "$EXP" push "$rp" --to otlp 2> "$T/push.err" ||
	fail "push: $(cat "$T/push.err")"
python3 - "$T/recv/accepted" "${POD##*/pod}" << 'PY' || fail "the pod's points' labels"
import json, os, sys
d = sys.argv[1]
body = json.load(open(os.path.join(d, sorted(os.listdir(d))[0])))
attrs = {a["key"]: a["value"].get("stringValue") for a in body["resourceMetrics"][0]["resource"]["attributes"]}
want = {"k8s.pod.name": "shop-7d9", "k8s.namespace.name": "prod", "k8s.pod.uid": sys.argv[2],
        "rt.job.user": "root", "rt.scheduler": "kubernetes"}
assert all(attrs.get(k) == v for k, v in want.items()), attrs
PY
ok "the pod found by its name and namespace (runs, summary), its points labelled k8s.pod.name, k8s.namespace.name, k8s.pod.uid, rt.job.user"
