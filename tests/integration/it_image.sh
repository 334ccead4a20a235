#!/bin/sh
# The container image (tools/deploy/Containerfile) built and run as a
# plain container host runs it (docs/kubernetes.md, "A plain container
# host"): a Debian 12 base made here from Debian's own packages
# (mmdebstrap, with the packages the recipe's two stages name, so that
# the build needs no registry and no network), `podman build` from the
# tree, then the image as the node: host pid and network namespaces, the
# host's cgroups and podman's container state read-only, no capability
# but the two the unit keeps, no new privileges, a read-only root. A
# real container started beside it is found, named, and sized against
# its own --memory limit and CPU counter, read back by this tree's
# rt-export from the store the image's recorder wrote. Needs root,
# podman, runc, mmdebstrap and busybox-static (skips without); not run
# under the sanitizers (the image builds its own release binaries).
. "$(dirname "$0")/lib.sh"
[ "$(id -u)" = 0 ] || { echo "skip: needs root (podman's cgroups)"; exit 0; }
[ "${RT_SANITIZE:-OFF}" = OFF ] || { echo "skip: the image builds its own binaries (not the sanitizers')"; exit 0; }
for p in podman runc mmdebstrap busybox; do
	command -v $p > /dev/null 2>&1 || { echo "skip: no $p (Debian's podman, runc, mmdebstrap, busybox-static)"; exit 0; }
done
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
	$P rm -f rtit-node-$$ rtit-job-$$ > /dev/null 2>&1
	$P rmi -f $IMG $JOBIMG $BASE > /dev/null 2>&1
	images | comm -13 "$T/images.before" - | xargs -r $P rmi -f > /dev/null 2>&1
	return 0
}
trap 'unimage; cleanup' EXIT
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
# the node, as the plain container host's recipe runs it
mkdir -p "$T/store" "$T/shm" "$T/job/bin"
$P run -d --name rtit-node-$$ $U --pid host --network host --read-only \
	--cap-drop all --cap-add SYS_PTRACE,DAC_READ_SEARCH --security-opt no-new-privileges \
	-v /sys/fs/cgroup:/sys/fs/cgroup:ro \
	-v /var/lib/containers/storage/overlay-containers:/var/lib/containers/storage/overlay-containers:ro \
	-v "$T/store:/var/lib/resource-tracker" -v "$T/shm:/dev/shm" \
	$IMG --jobs podman --interval 0.5 > "$T/node.id" 2>&1 || fail "the image as a node: $(cat "$T/node.id")"
# a job beside it: a container with its own limit, about 0.5 s of CPU and
# 20 MB held, then its own group's CPU counter
cp "$(command -v busybox)" "$T/job/bin/"
for c in sh sleep cat head tr sed; do ln -s busybox "$T/job/bin/$c"; done
tar -C "$T/job" -cf "$T/job.tar" .
$P import "$T/job.tar" $JOBIMG > /dev/null 2>&1 || fail "podman import of the job's image"
sleep 1
$P run --rm $U --name rtit-job-$$ --memory 50m $JOBIMG sh -c 'i=0; while [ $i -lt 150000 ]; do i=$((i + 1)); done
x=$(head -c 20000000 /dev/zero | tr "\0" a); sleep 2
echo "truth $(cat /sys/fs/cgroup/cpuacct/cpuacct.usage 2> /dev/null || sed -n "s/^usage_usec //p" /sys/fs/cgroup/cpu.stat)"' > "$T/job.out" 2>&1 ||
	fail "the job's container: $(cat "$T/job.out")"
for _ in $(seq 100); do
	id=$(RT_SHM_DIR="$T/shm" "$EXP" --store "$T/store" runs 2> /dev/null | awk -v n="rtit-job-$$" 'NR > 1 && $6 != "running" && $0 ~ n {print $1}' | tail -1)
	[ -n "$id" ] && break
	sleep 0.2
done
[ -n "$id" ] || fail "no ended run of the job: $("$EXP" --store "$T/store" runs 2>&1) / node: $($P logs rtit-node-$$ 2>&1 | tail -5)"
RT_SHM_DIR="$T/shm" "$EXP" --store "$T/store" show "$id" > "$T/show.json"
RT_SHM_DIR="$T/shm" "$EXP" --store "$T/store" replay "$id" > "$T/replay.jsonl"
r=$(python3 - "$T/show.json" "$T/replay.jsonl" "$(awk '/^truth/ {print $2}' "$T/job.out")" "rtit-job-$$" << 'PY'
import json, sys
m = json.load(open(sys.argv[1]))
rows = [json.loads(l) for l in open(sys.argv[2])]
truth, name = int(sys.argv[3]), sys.argv[4]
c, a = m["cgroup"], m["allocation"]
assert c["scheduler"] == "podman" and c["name"] == name, c
assert a["memory_bytes"] == 50 << 20 and a["memory_from"] == "cgroup", a
cpu = sum(r["cpu"]["process_utime_secs"] + r["cpu"]["process_stime_secs"] for r in rows)
cpu += c.get("cpu_before_secs") or 0
t = truth / 1e9 if truth > 1e6 else truth / 1e6
assert t > 0.1 and t - 0.01 <= cpu <= t + 0.1, (cpu, t)
pss = max(r["cpu"]["process_pss_mib"] or 0 for r in rows)
assert 15 <= pss <= 50, pss
print(f"CPU {cpu:.3f} s (its group {t:.3f} s), PSS peak {pss} MiB of its 50 MiB")
PY
) || fail "the job as the image's node saw it: $r"
# the node stops on TERM (its runs handed over), not killed at the timeout
$P stop -t 20 rtit-node-$$ > /dev/null 2>&1 || fail "podman stop of the node"
e=$($P inspect --format '{{.State.ExitCode}}' rtit-node-$$)
[ "$e" = 0 ] || fail "the node's exit on TERM: $e: $($P logs rtit-node-$$ 2>&1 | tail -3)"
ok "the image, built from the tree on a Debian base made here, ran as a container host's node: a real container found, named and sized ($r)"
