#!/bin/sh
# The answer in the Slurm job's own record, for its owner: a real
# single-node Slurm with slurmdbd (a MariaDB on 127.0.0.1, everything in
# the test's directory), the node mode following it as root, a job
# submitted by a plain user; when its run ends, the node's rt writes its
# answer into the job's AdminComment (slurmdbd), and that user, with no
# access to root's store, reads it with `rt-export summary --slurm-job`
# and `recommend --slurm-job`: the same answer line and sbatch options as
# the run in root's store. Then two more "nodes" (RT_SLURM_NODE) write
# their pieces at once: the record keeps all three. A field holding
# another tool's value is left as it is. Needs root, slurm-wlm, slurmdbd
# and mariadb-server (skips without).
. "$(dirname "$0")/lib.sh"
[ "$(id -u)" = 0 ] || { echo "skip: needs root (Slurm's cgroups)"; exit 0; }
. "$(dirname "$0")/slurm_lib.sh"
slurm_need slurmctld slurmd slurmdbd sbatch sacct sacctmgr munged mariadbd mariadb-install-db
U=rtslurmu
made_user=""
id $U > /dev/null 2>&1 || { useradd -M -N -s /bin/sh $U && made_user=1; } ||
	{ echo "skip: cannot add a user"; exit 0; }
chmod 755 "$T"
slurm_start dbd
trap "slurm_stop; [ -z \"$made_user\" ] || userdel $U 2> /dev/null; [ -n \"\${KEEP:-}\" ] || cleanup" EXIT
chmod -R a+rX "$S"
chmod 600 "$S/slurmdbd.conf" # (its database password: the user reads slurm.conf alone)
as_user() { setpriv --reuid=$U --regid="$(id -g $U)" --clear-groups env -u RT_STORE HOME=/tmp "$@"; }
"$REC" --jobs slurm -i 0.5 2> "$T/node.err" &
track $!
cat > "$T/job.sh" << 'X'
#!/bin/sh
exec python3 -c "
import time
x = bytearray(150 << 20)
for i in range(0, len(x), 4096): x[i] = 1
e = time.time() + 2.5
while time.time() < e: pass"
X
chmod 755 "$T/job.sh"
id=$(as_user sbatch --parsable -J rt-owned --mem=400M --cpus-per-task=1 -o /dev/null --chdir=/tmp "$T/job.sh") ||
	fail "sbatch as $U: $id"
# the node's learn writes it once the run ends and slurmdbd has the job
i=0
until as_user "$EXP" summary --slurm-job "$id" > "$T/user.txt" 2> "$T/user.err"; do
	i=$((i + 1))
	[ $i -lt 300 ] || fail "job $id: its record never held rt's answer: $(cat "$T/user.err") / node: $(cat "$T/node.err")"
	sleep 0.5
done
# the user has no access to root's store: the answer came from the record
as_user "$EXP" --store "$RT_STORE" runs > /dev/null 2>&1 && fail "$U read root's store: the test proves nothing"
run=$("$EXP" runs --job-id "$id" | awk 'NR == 2 {print $1}')
[ -n "$run" ] || fail "job $id: no run in root's store: $("$EXP" runs)"
"$EXP" recommend "$run" > "$T/root.txt"
"$EXP" summary "$run" > "$T/root-summary.txt"
# the same answer line and sbatch options as root's store says of the run
line=$(head -1 "$T/root-summary.txt") # (the summary's first line)
sb=$(sed -n 's/^  as sbatch options *//p' "$T/root.txt")
[ -n "$line" ] && [ -n "$sb" ] || fail "root's answer: $(cat "$T/root.txt" "$T/root-summary.txt")"
grep -qxF "  $line" "$T/user.txt" || fail "the record's answer is not the store's ($line): $(cat "$T/user.txt")"
grep -qxF "  as sbatch options: $sb" "$T/user.txt" || fail "the record's sbatch options are not the store's ($sb): $(cat "$T/user.txt")"
grep -q "^Slurm job $id: rt's answer from its record (1 node)" "$T/user.txt" && grep -q "seff: CPU efficiency" "$T/user.txt" &&
	grep -q "Slurm: COMPLETED, exit code 0:0" "$T/user.txt" || fail "the record's lines: $(cat "$T/user.txt")"
as_user "$EXP" recommend --slurm-job "$id" > "$T/user-rec.txt" 2>&1 || fail "recommend --slurm-job: $(cat "$T/user-rec.txt")"
grep -qxF "  as sbatch options: $sb" "$T/user-rec.txt" || fail "recommend --slurm-job: $(cat "$T/user-rec.txt")"
as_user sacct -j "$id" -X -n -P -o AdminComment | grep -q '^rt1:[a-z2-7]*$' || fail "sacct's AdminComment: $(as_user sacct -j "$id" -X -n -P -o AdminComment)"
ok "a plain user's job ($U, job $id): its answer in its Slurm record, read by $U without root's store: '$line', '$sb'"

# two more nodes' pieces at once (a job on three nodes): every one kept
RT_SLURM_NODE=rtnode2 "$EXP" learn "$run" --wait 20 2> "$T/l2.err" &
l2=$!
RT_SLURM_NODE=rtnode3 "$EXP" learn "$run" --wait 20 2> "$T/l3.err" &
l3=$!
wait $l2 || fail "learn as rtnode2: $(cat "$T/l2.err")"
wait $l3 || fail "learn as rtnode3: $(cat "$T/l3.err")"
as_user "$EXP" summary --slurm-job "$id" --json > "$T/three.json" 2>&1 || fail "--json: $(cat "$T/three.json")"
python3 - "$T/three.json" "$(hostname | cut -d. -f1)" "$run" << 'PY' || fail "three nodes' pieces: $(cat "$T/three.json"); rtnode2 said: $(cat "$T/l2.err"); rtnode3 said: $(cat "$T/l3.err")"
import json, sys
d = json.load(open(sys.argv[1]))
nodes = d["nodes"]
assert sorted(nodes) == sorted([sys.argv[2], "rtnode2", "rtnode3"]), sorted(nodes)
assert all(p["run"] == sys.argv[3] and "would do" in p["answer"] for p in nodes.values()), nodes
assert d["slurm_job_id"]
PY
as_user "$EXP" summary --slurm-job "$id" > "$T/three.txt" 2>&1; grep -q "(3 nodes)" "$T/three.txt" || fail "three nodes' lines: $(cat "$T/three.txt")"
ok "three nodes writing at once: the record holds each node's piece"

# another tool's value (jobstats' JS1:...) is left as it is
sacctmgr -i update job where jobid="$id" set AdminComment=JS1:abc > /dev/null || fail "sacctmgr"
"$EXP" learn "$run" --wait 20 2> "$T/l4.err" || true
grep -q "holds another tool's value, left as it is" "$T/l4.err" || fail "learn over another tool's value: $(cat "$T/l4.err")"
[ "$(sacct -j "$id" -X -n -P -o AdminComment)" = "js1:abc" ] || fail "another tool's value changed: $(sacct -j "$id" -X -n -P -o AdminComment)"
as_user "$EXP" summary --slurm-job "$id" 2> "$T/u4.err" && fail "summary read an answer from another tool's value"
grep -q "another tool's value, not rt's answer" "$T/u4.err" || fail "summary over another tool's value: $(cat "$T/u4.err")"
ok "a field holding another tool's value: left as it is, said in one line; summary --slurm-job says so"
