#!/bin/sh
# Fidelity: the process-tree figures the summary and the recommendation are
# made of (CPU seconds, PSS and RSS peaks, disk bytes, process and thread
# counts) against the kernel's own accounting, for eight shapes of job
# (tests/integration/fidelity.py says what each truth is). Needs root: a
# cgroup per job, and a loop device holding the files the jobs read and
# write, so that its sector counts are the disk truth.
. "$(dirname "$0")/lib.sh"
if [ "$(id -u)" != 0 ]; then
	echo "skip: needs root (a cgroup per job, a loop device)"
	exit 0
fi
IMG="$T/disk.img"
MNT="$T/data"
mkdir -p "$MNT"
truncate -s 512M "$IMG"
LOOP=$(losetup -f --show "$IMG" 2>/dev/null) || {
	echo "skip: no loop device here"
	exit 0
}
trap 'umount "$MNT" 2>/dev/null; losetup -d "$LOOP" 2>/dev/null; cleanup' EXIT
mkfs.ext4 -q -F "$LOOP" >/dev/null 2>&1 || fail "mkfs.ext4 on $LOOP"
mount "$LOOP" "$MNT" || fail "mount $LOOP"
python3 "$(dirname "$0")/fidelity.py" drive "$BUILD" "$T" "$MNT" ${RT_FIDELITY_SHAPES:-} ||
	fail "a figure is off its truth (table above)"
ok "process-tree figures match the kernel's accounting for every job shape"
