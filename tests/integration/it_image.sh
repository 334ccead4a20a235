#!/bin/sh
# The container image and its two recipes (docs/kubernetes.md): a Debian
# 12 base made here from Debian's own packages (mmdebstrap, with the
# packages the Containerfile's two stages name, so that the build needs
# no registry and no network), `podman build` of tools/deploy/Containerfile
# from the tree; then the image as a plain container host runs it
# (tools/deploy/container-node.sh, --jobs podman) and as the DaemonSet's
# pod spec runs it (tools/deploy/daemonset.yaml translated to podman's
# options: host pid and network, its security context, its memory limit,
# its hostPath mounts, its args: --jobs kubernetes). A real container
# beside the first, and a pod of one real container beside the second,
# are each found, named and sized against their own limits and CPU
# counters, read back by this tree's rt-export from the stores the
# image's recorders wrote. Needs root, podman, runc, mmdebstrap,
# busybox-static and python3-yaml (skips without); not run under the
# sanitizers (the image builds its own release binaries).
. "$(dirname "$0")/lib.sh"
[ "$(id -u)" = 0 ] || { echo "skip: needs root (podman's cgroups)"; exit 0; }
[ "${RT_SANITIZE:-OFF}" = OFF ] || { echo "skip: the image builds its own binaries (not the sanitizers')"; exit 0; }
for p in podman runc mmdebstrap busybox; do
	command -v $p > /dev/null 2>&1 || { echo "skip: no $p (Debian's podman, runc, mmdebstrap, busybox-static)"; exit 0; }
done
/usr/bin/python3 -c 'import yaml' 2> /dev/null || { echo "skip: no python3-yaml (the DaemonSet's spec is read with it)"; exit 0; }
SRC=$(cd "$(dirname "$0")/../.." && pwd)
CF="$SRC/tools/deploy/Containerfile"
P="podman --runtime runc --cgroup-manager cgroupfs"
U="--ulimit nofile=1024:1024 --ulimit nproc=1024:1024"
BASE=localhost/rt-it-base:$$ IMG=localhost/rt-it-node:$$ JOBIMG=localhost/rt-it-job:$$
# (the images the build makes along the way, each stage's layers, go
# too: those not there before it)
images() { $P image ls -a -q --no-trunc | sort; }
images > "$T/images.before"
unimage() {
	$P rm -f rtit-node-$$ rtit-k8s-$$ rtit-job-$$ rtit-pod-$$ > /dev/null 2>&1
	$P rmi -f $IMG $JOBIMG $BASE > /dev/null 2>&1
	images | comm -13 "$T/images.before" - | xargs -r $P rmi -f > /dev/null 2>&1
	return 0
}
unpod() { # the pod's groups, deepest first (empty ones only: rmdir)
	for h in /sys/fs/cgroup/*/ /sys/fs/cgroup/; do
		[ -d "$h${POD:-none}" ] && find "$h${POD%%/*}" -depth -type d -exec rmdir {} + 2> /dev/null
	done
	return 0
}
trap 'unimage; unpod; cleanup' EXIT
# the packages the recipe's stages name (its ARG lines: the recipe's own
# lists, so a package it needs and the base lacks fails the build here)
pkgs=$(sed -n 's/^ARG [A-Z]*_PACKAGES="\(.*\)"$/\1/p' "$CF" | tr ' ' '\n' | sort -u | paste -sd, -)
[ -n "$pkgs" ] || fail "no package lists in $CF"
# (the host's package cache, linked in where it is on the same disk: the
# base takes what is already here and fetches the rest)
mmdebstrap --variant=apt --include="$pkgs" \
	--setup-hook='mkdir -p "$1/var/cache/apt/archives" && cp -l /var/cache/apt/archives/*.deb "$1/var/cache/apt/archives/" 2> /dev/null || true' \
	bookworm "$T/base.tar" > "$T/mm.log" 2>&1 ||
	{ echo "skip: mmdebstrap could not make a Debian 12 base here: $(tail -2 "$T/mm.log")"; exit 0; }
$P import "$T/base.tar" $BASE > /dev/null 2>&1 || { echo "skip: podman cannot import an image here"; exit 0; }
rm -f "$T/base.tar"
# the build itself: no network (a package the base lacks is a failure)
$P build --network none $U --build-arg BASE=$BASE -f "$CF" -t $IMG "$SRC" > "$T/build.log" 2>&1 ||
	fail "podman build of $CF: $(tail -5 "$T/build.log")"
v=$($P run --rm $U $IMG --version 2>&1)
[ "$v" = "$("$REC" --version)" ] || fail "the image's recorder says '$v', this tree's '$("$REC" --version)'"
# The two recipes, each run as it is: the plain container host's script
# (podman reached through a wrapper that adds this machine's runtime
# options), and the DaemonSet's pod spec as podman runs it (its
# namespaces, security context, memory limit, mounts with their
# propagation and args, translated; its store's and rings' host paths
# moved into the test's directory, a DirectoryOrCreate path this host
# lacks made there, as the kubelet would make it)
mkdir -p "$T/bin" "$T/store" "$T/shm" "$T/k8s-store" "$T/k8s-shm" "$T/job/bin"
printf '#!/bin/sh\nexec %s "$@"\n' "$(command -v podman) --runtime runc --cgroup-manager cgroupfs" > "$T/bin/podman"
chmod +x "$T/bin/podman"
PATH="$T/bin:$PATH" RT_NODE_STORE="$T/store" RT_NODE_SHM="$T/shm" RT_NODE_NAME=rtit-node-$$ RT_NODE_RUN="$U" \
	sh "$SRC/tools/deploy/container-node.sh" podman $IMG --jobs podman --interval 0.5 > "$T/node.id" 2>&1 ||
	fail "container-node.sh: $(cat "$T/node.id")"
/usr/bin/python3 - "$SRC/tools/deploy/daemonset.yaml" "$T" > "$T/k8s.args" << 'PY' || fail "the DaemonSet's spec: $(cat "$T/k8s.args")"
import os, sys, yaml
docs = [d for d in yaml.safe_load_all(open(sys.argv[1])) if d]
ds = next(d for d in docs if d["kind"] == "DaemonSet")
spec = ds["spec"]["template"]["spec"]
(c,) = spec["containers"]
sc = c["securityContext"]
T = sys.argv[2]
moved = {"/var/lib/resource-tracker": T + "/k8s-store", "/dev/shm": T + "/k8s-shm"}
out = []
if spec.get("hostPID"):
    out.append("--pid=host")
if spec.get("hostNetwork"):
    out.append("--network=host")
assert not sc.get("privileged"), "a privileged pod"
if sc.get("readOnlyRootFilesystem"):
    out.append("--read-only")
if sc.get("allowPrivilegeEscalation") is False:
    out += ["--security-opt", "no-new-privileges"]
if "runAsUser" in sc:
    out.append(f"--user={sc['runAsUser']}")
if "ALL" in sc["capabilities"].get("drop", []):
    out.append("--cap-drop=all")
out += [f"--cap-add={a}" for a in sc["capabilities"].get("add", [])]
mem = c["resources"]["limits"]["memory"]
assert mem.endswith("Mi"), mem
out.append(f"--memory={mem[:-2]}m")
vols = {v["name"]: v["hostPath"] for v in spec["volumes"]}
for m in c["volumeMounts"]:
    hp = vols[m["name"]]
    path = moved.get(hp["path"], hp["path"])
    if not os.path.exists(path):
        assert hp.get("type") == "DirectoryOrCreate", (m, "not on this host")
        path = f"{T}/hostpath/{m['name']}"
        os.makedirs(path)
    opts = ["ro"] if m.get("readOnly") else []
    opts += {"HostToContainer": ["rslave"], "Bidirectional": ["rshared"]}.get(m.get("mountPropagation"), [])
    out.append(f"--volume={path}:{m['mountPath']}" + (":" + ",".join(opts) if opts else ""))
out += [f"--env={e['name']}={e['value']}" for e in c.get("env") or [] if "value" in e]
out.append("--")
out += c["args"]
print("\n".join(out))
PY
sed -n '1,/^--$/p' "$T/k8s.args" | sed '$d' > "$T/k8s.opts"
sed -n '/^--$/,$p' "$T/k8s.args" | sed 1d > "$T/k8s.cmd"
# shellcheck disable=SC2046 # (one option or argument a line, none with a space)
$P run -d --name rtit-k8s-$$ $U $(cat "$T/k8s.opts") $IMG $(cat "$T/k8s.cmd") > "$T/k8s.id" 2>&1 ||
	fail "the DaemonSet's pod as podman runs it: $(cat "$T/k8s.id")"
# the jobs: a container with its own limit, and a pod of one container
# (its group under kubepods with the pod's limit, as the kubelet makes
# it; CRI-O's names in its bundle); each about 0.5 s of CPU and 20 MB
# held, then its own group's CPU counter
cp "$(command -v busybox)" "$T/job/bin/"
for c in sh sleep cat head tr sed; do ln -s busybox "$T/job/bin/$c"; done
tar -C "$T/job" -cf "$T/job.tar" .
$P import "$T/job.tar" $JOBIMG > /dev/null 2>&1 || fail "podman import of the job's image"
POD=kubepods/burstable/pod7a6b5c4d-$$-4eee-8fff-0123456789ab
mkdir -p "/sys/fs/cgroup/memory/$POD" 2> /dev/null || mkdir -p "/sys/fs/cgroup/$POD"
if [ -f "/sys/fs/cgroup/memory/$POD/memory.limit_in_bytes" ]; then
	echo $((120 << 20)) > "/sys/fs/cgroup/memory/$POD/memory.limit_in_bytes"
else
	echo $((120 << 20)) > "/sys/fs/cgroup/$POD/memory.max"
fi
sleep 1
work='i=0; while [ $i -lt 150000 ]; do i=$((i + 1)); done
x=$(head -c 20000000 /dev/zero | tr "\0" a); sleep 3
echo "truth $(cat /sys/fs/cgroup/cpuacct/cpuacct.usage 2> /dev/null || sed -n "s/^usage_usec //p" /sys/fs/cgroup/cpu.stat)"'
$P run --rm $U --name rtit-job-$$ --memory 50m $JOBIMG sh -c "$work" > "$T/job.out" 2>&1 &
J=$!
$P run --rm $U --name rtit-pod-$$ --memory 80m --cgroup-parent "/$POD" \
	--annotation io.kubernetes.container.name=trainer --annotation io.kubernetes.pod.name=train-5f8 \
	--annotation io.kubernetes.pod.namespace=ml $JOBIMG sh -c "$work" > "$T/pod.out" 2>&1 &
K=$!
wait_pid $J 120 && wait_pid $K 120 || fail "the jobs did not end"
grep -q '^truth [0-9]' "$T/job.out" && grep -q '^truth [0-9]' "$T/pod.out" ||
	fail "the jobs' counters: $(cat "$T/job.out" "$T/pod.out")"
ended() { # STORE SHM NAME: the run of NAME there, once it ended
	for _ in $(seq 100); do
		id=$(RT_SHM_DIR="$2" "$EXP" --store "$1" runs 2> /dev/null | awk -v n="$3" 'NR > 1 && $6 != "running" && $0 ~ n {print $1}' | tail -1)
		[ -n "$id" ] && { echo "$id"; return 0; }
		sleep 0.2
	done
	return 1
}
check() { # STORE SHM RUN TRUTH SCHEDULER NAME LIMIT_MIB [POD NS CONTAINER]
	RT_SHM_DIR="$2" "$EXP" --store "$1" show "$3" > "$T/show.json"
	RT_SHM_DIR="$2" "$EXP" --store "$1" replay "$3" > "$T/replay.jsonl"
	python3 - "$T/show.json" "$T/replay.jsonl" "$4" "$5" "$6" "$7" "${8:-}" "${9:-}" "${10:-}" << 'PY'
import json, sys
m = json.load(open(sys.argv[1]))
rows = [json.loads(l) for l in open(sys.argv[2])]
truth, sched, name, limit, pod, ns, ctr = int(sys.argv[3]), *sys.argv[4:6], int(sys.argv[6]), *sys.argv[7:]
c, a = m["cgroup"], m["allocation"]
assert c["scheduler"] == sched and c["name"] == name, c
assert a["memory_bytes"] == limit << 20 and a["memory_from"] == "cgroup", a
if pod:
    assert (c.get("pod"), c.get("namespace")) == (pod, ns), c
    assert ctr in [p.get("container") for p in c["parts"]], c["parts"]
cpu = sum(r["cpu"]["process_utime_secs"] + r["cpu"]["process_stime_secs"] for r in rows)
cpu += c.get("cpu_before_secs") or 0
t = truth / 1e9 if truth > 1e6 else truth / 1e6
assert t > 0.1 and t - 0.01 <= cpu <= t + 0.1, (cpu, t)
pss = max(r["cpu"]["process_pss_mib"] or 0 for r in rows)
assert 15 <= pss <= limit, pss
print(f"{name}: CPU {cpu:.3f} s (its group {t:.3f} s), PSS peak {pss} MiB of its {limit} MiB")
PY
}
rj=$(ended "$T/store" "$T/shm" rtit-job-$$) || fail "container-node.sh's node: no ended run of the job: $($P logs rtit-node-$$ 2>&1 | tail -5)"
rk=$(ended "$T/k8s-store" "$T/k8s-shm" train-5f8) || fail "the DaemonSet's node: no ended run of the pod: $($P logs rtit-k8s-$$ 2>&1 | tail -5)"
# the truths: the container's own counter, read by it as its last act;
# the pod's group's (its container and its conmon), read here once the
# pod's run ended
tj=$(awk '/^truth/ {print $2}' "$T/job.out")
tk=$(cat "/sys/fs/cgroup/cpuacct/$POD/cpuacct.usage" 2> /dev/null || sed -n 's/^usage_usec //p' "/sys/fs/cgroup/$POD/cpu.stat")
sj=$(check "$T/store" "$T/shm" "$rj" "$tj" podman rtit-job-$$ 50) || fail "the container as container-node.sh's node saw it: $sj"
sk=$(check "$T/k8s-store" "$T/k8s-shm" "$rk" "$tk" kubernetes train-5f8 120 train-5f8 ml trainer) ||
	fail "the pod as the DaemonSet's node saw it: $sk"
# each node stops on TERM (its runs handed over), not killed at the timeout
for n in rtit-node-$$ rtit-k8s-$$; do
	$P stop -t 20 $n > /dev/null 2>&1 || fail "podman stop of $n"
	e=$($P inspect --format '{{.State.ExitCode}}' $n)
	[ "$e" = 0 ] || fail "$n's exit on TERM: $e: $($P logs $n 2>&1 | tail -3)"
done
ok "the image, built from the tree on a Debian base made here: as container-node.sh runs it, a real container ($sj); as the DaemonSet's spec runs it, a pod ($sk)"
