# slurm_lib.sh - a real single-node Slurm for a test (Debian's slurm-wlm),
# sourced after lib.sh. Everything of it lives in the test's directory
# ($T/slurm: config, state, munge socket, ports); nothing in /etc is
# touched. slurm_start [dbd]: munged, then (with dbd) a MariaDB on
# 127.0.0.1 and slurmdbd, then slurmctld and slurmd; skips the test
# (exit 0) where a part is missing or this Slurm does not come up.
# slurm_stop: all of it (slurm_start's trap calls it). slurm_conf and
# slurm_munged: its parts, for tools/bench_slurm.sh's own Slurm.
S="$T/slurm"
slurm_need() {
	for p in "$@"; do
		command -v "$p" > /dev/null 2>&1 || {
			echo "skip: no $p (Debian's slurm-wlm, slurmdbd, mariadb-server)"
			exit 0
		}
	done
}
slurm_stop() {
	pids=""
	for f in ctld.pid d.pid dbd.pid db.pid munged.pid; do
		# (a daemon removes its pid file as it goes: read once, and never
		# as a list's last command, which set -e would end the trap on)
		pid=$(cat "$S/$f" 2> /dev/null) || continue
		kill "$pid" 2> /dev/null && pids="$pids $pid"
	done
	# each one gone before the directory goes (slurmctld saves its state
	# as it stops: a cleanup that came first met a directory filling up)
	for p in $pids; do
		i=0
		while kill -0 "$p" 2> /dev/null && [ $i -lt 200 ]; do
			i=$((i + 1))
			sleep 0.05
		done
	done
	return 0
}
# the database and slurmdbd (its own user and password, 127.0.0.1 only)
slurm_start_dbd() {
	mkdir -p "$S/db"
	mariadb-install-db --user=root --datadir="$S/db" --auth-root-authentication-method=socket \
		> "$S/db.init" 2>&1 || fail "mariadb-install-db: $(tail -3 "$S/db.init")"
	DBPORT=$(port)
	mariadbd --user=root --datadir="$S/db" --socket="$S/db.sock" --port="$DBPORT" \
		--bind-address=127.0.0.1 --pid-file="$S/db.pid" --log-error="$S/db.log" \
		--skip-name-resolve > /dev/null 2>&1 &
	wait_for test -S "$S/db.sock" || fail "mariadbd did not start: $(tail -3 "$S/db.log")"
	mariadb -S "$S/db.sock" -e "CREATE USER 'rtslurm'@'127.0.0.1' IDENTIFIED BY 'rt$$';
		GRANT ALL ON slurm_acct_db.* TO 'rtslurm'@'127.0.0.1';" || fail "mariadb: no user for slurmdbd"
	DBDPORT=$(port)
	cat > "$S/slurmdbd.conf" << X
AuthType=auth/munge
AuthInfo=socket=$S/munge.sock
DbdHost=localhost
DbdAddr=127.0.0.1
DbdPort=$DBDPORT
SlurmUser=root
PidFile=$S/dbd.pid
LogFile=$S/dbd.log
StorageType=accounting_storage/mysql
StorageHost=127.0.0.1
StoragePort=$DBPORT
StorageUser=rtslurm
StoragePass=rt$$
StorageLoc=slurm_acct_db
X
	chmod 600 "$S/slurmdbd.conf"
	# (AccountingStoragePass: the munge socket the commands' connection to
	# slurmdbd authenticates through; AuthInfo's is not used for it)
	printf 'AccountingStorageType=accounting_storage/slurmdbd\nAccountingStorageHost=127.0.0.1\nAccountingStoragePort=%s\nAccountingStoragePass=%s\n' \
		"$DBDPORT" "$S/munge.sock" >> "$S/slurm.conf"
	SLURM_CONF="$S/slurm.conf" slurmdbd 2> "$S/dbd.err" ||
		fail "slurmdbd: $(cat "$S/dbd.err")"
	wait_for sh -c "sacctmgr -n list cluster > /dev/null 2>&1" ||
		fail "slurmdbd did not answer: $(tail -3 "$S/dbd.log")"
	sacctmgr -i add cluster rtit > /dev/null
}
# slurm_conf CLUSTER CPUS [LINES [PARTITION_OPTS]]: $S/slurm.conf (and its
# cgroup.conf) of a one-node cluster on 127.0.0.1, CPUS declared, LINES
# added before the node's; SNODE is the node's name
slurm_conf() {
	SNODE=$(hostname)
	MEM=$(awk '/MemTotal/ {print int($2 / 1024 / 2)}' /proc/meminfo)
	cat > "$S/slurm.conf" << X
ClusterName=$1
SlurmctldHost=$SNODE(127.0.0.1)
SlurmctldPort=$(port)
SlurmdPort=$(port)
AuthType=auth/munge
AuthInfo=socket=$S/munge.sock
CredType=cred/munge
ProctrackType=proctrack/cgroup
TaskPlugin=task/cgroup
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
SlurmUser=root
StateSaveLocation=$S/ctld
SlurmdSpoolDir=$S/d
SlurmctldPidFile=$S/ctld.pid
SlurmdPidFile=$S/d.pid
SlurmctldLogFile=$S/ctld.log
SlurmdLogFile=$S/d.log
ReturnToService=2
MpiDefault=none
JobAcctGatherType=jobacct_gather/cgroup
${3:-}
NodeName=$SNODE NodeAddr=127.0.0.1 CPUs=$2 RealMemory=$MEM State=UNKNOWN
PartitionName=$1 Nodes=$SNODE Default=YES MaxTime=INFINITE State=UP ${4:-}
X
	printf 'CgroupPlugin=autodetect\nConstrainCores=yes\nConstrainRAMSpace=yes\n' > "$S/cgroup.conf"
	export SLURM_CONF="$S/slurm.conf"
}
# munged on its own socket in $S
slurm_munged() {
	munged --force --socket="$S/munge.sock" --pid-file="$S/munged.pid" --log-file="$S/munged.log" \
		--seed-file="$S/munged.seed" --key-file=/etc/munge/munge.key 2> "$S/munged.err" ||
		fail "munged: $(cat "$S/munged.err")"
}
slurm_start() {
	[ -r /etc/munge/munge.key ] || { echo "skip: no munge key (/etc/munge/munge.key)"; exit 0; }
	mkdir -p "$S/ctld" "$S/d"
	slurm_munged
	slurm_conf rtit "$(nproc)"
	trap "slurm_stop; [ -n \"\${KEEP:-}\" ] || cleanup" EXIT
	[ "${1:-}" != dbd ] || slurm_start_dbd
	slurmctld -f "$SLURM_CONF" 2> "$S/ctld.err" || fail "slurmctld: $(cat "$S/ctld.err")"
	slurmd -f "$SLURM_CONF" 2> "$S/d.err" || fail "slurmd: $(cat "$S/d.err")"
	wait_for sh -c "sinfo -h -o %t 2> /dev/null | grep -q idle" ||
		{ echo "skip: this Slurm did not come up here: $(tail -3 "$S/d.log" "$S/ctld.log" 2> /dev/null)"; exit 0; }
}
