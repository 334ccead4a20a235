#!/bin/sh
# container-node.sh - rt's node mode on a plain container host (podman or
# docker, no Kubernetes): the image tools/deploy/Containerfile builds, run
# as the node and confined as the DaemonSet confines it
# (docs/kubernetes.md, "A plain container host"):
#
#   sh tools/deploy/container-node.sh podman|docker [IMAGE [NODE OPTION...]]
#
# IMAGE: resource-tracker by default. NODE OPTIONs replace the default
# `--jobs RUNTIME --interval 1 --store-max-mb 4096` (the store is always
# the host's RT_NODE_STORE). The environment may set RT_NODE_STORE (the
# store on the host: /var/lib/resource-tracker), RT_NODE_SHM (where the
# rings go: the host's /dev/shm, so that its users' `rt-export tail`
# reads them), RT_NODE_NAME (the container's: rt-node) and RT_NODE_RUN
# (more options for `run`, before the image: a sink's -e, say).
set -eu
rt=${1:-}
case $rt in
podman) state=/var/lib/containers/storage/overlay-containers ;;
docker) state=/var/lib/docker/containers ;;
*)
	echo "container-node.sh: say which runtime runs the containers: podman or docker" >&2
	exit 2
	;;
esac
shift
img=${1:-resource-tracker}
[ $# -gt 0 ] && shift
[ $# -gt 0 ] || set -- --jobs "$rt" --interval 1 --store-max-mb 4096
store=${RT_NODE_STORE:-/var/lib/resource-tracker}
shm=${RT_NODE_SHM:-/dev/shm}
mkdir -p "$store"
chmod 0700 "$store"
# The host's pid and network namespaces (its processes, its network
# counters, its name); its cgroups and the runtime's container state
# read-only (rslave: a container's mounts the host takes down go here
# too); root with CAP_SYS_PTRACE (other users' smaps_rollup, io and
# environ) and CAP_DAC_READ_SEARCH (their /proc/PID/fd) and no other
# capability, no new privileges, a read-only root: the unit's confinement
# shellcheck disable=SC2086 # (RT_NODE_RUN is options, split as words)
exec "$rt" run -d --name "${RT_NODE_NAME:-rt-node}" --restart always \
	--pid host --network host --read-only \
	--cap-drop all --cap-add SYS_PTRACE --cap-add DAC_READ_SEARCH \
	--security-opt no-new-privileges \
	-v /sys/fs/cgroup:/sys/fs/cgroup:ro,rslave \
	-v "$state:$state:ro,rslave" \
	-v "$store:/var/lib/resource-tracker" -v "$shm:/dev/shm" \
	${RT_NODE_RUN:-} "$img" "$@"
