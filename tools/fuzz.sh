#!/bin/sh
# fuzz.sh MINUTES [TARGET...] - long fuzzing of every parser of outside bytes.
#
# Runs every fuzz target (tests/fuzz/fuzz_*.c; or the TARGETs named, e.g.
# procfs stream) for MINUTES each (decimals allowed), two at a time, under
# ASan + UBSan. Corpora grow in build-fuzz/work/TARGET (kept between runs:
# the next run starts where this one stopped). A crashing input is
# minimized into tests/fuzz/regress/TARGET/, which ctest replays in every
# build (fuzz_replay_TARGET), and the target goes on for the time left.
# Then every corpus runs once through a build with clang's source-based
# coverage, and the line coverage of each parser is printed: the whole file
# for files that only parse, the parsing functions for files that also do
# I/O (the table at the end of this script). Exit 1 when a target crashed
# or a parser is under 90 %.
set -eu
cd "$(dirname "$0")/.."
[ $# -ge 1 ] || { echo "usage: tools/fuzz.sh MINUTES [TARGET...]" >&2; exit 2; }
minutes=$1
shift
secs=$(awk -v m="$minutes" 'BEGIN { s = int(m * 60); if (s < 1) s = 1; print s }')
root=$(pwd)
work=$root/build-fuzz/work
regress=$root/tests/fuzz/regress
cov=$root/build-fuzz-cov
sh tools/setup.sh >/dev/null
# llvm-cov and llvm-profdata (Debian's llvm, or clang's own -14 ones)
tool() {
	command -v "$1" 2>/dev/null || command -v "$1-14" 2>/dev/null || true
}
if [ -z "$(tool llvm-cov)" ] || [ -z "$(tool llvm-profdata)" ]; then
	sudo=""
	[ "$(id -u)" -eq 0 ] || sudo="sudo"
	$sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends llvm
fi
llvm_cov=$(tool llvm-cov)
llvm_profdata=$(tool llvm-profdata)

if [ $# -gt 0 ]; then
	targets=$*
else
	targets=$(cd tests/fuzz && ls fuzz_*.c | sed 's/^fuzz_//; s/\.c$//' | tr '\n' ' ')
fi
echo "== building the fuzz targets (ASan+UBSan) and their coverage build"
CC=clang cmake -S . -B build-fuzz -DRT_FUZZ=ON -DBUILD_TESTING=OFF >/dev/null
cmake --build build-fuzz -j"$(nproc)" --target fuzz >/dev/null
CC=clang cmake -S . -B "$cov" -DRT_FUZZ=ON -DRT_FUZZ_COVERAGE=ON -DBUILD_TESTING=OFF >/dev/null
cmake --build "$cov" -j"$(nproc)" --target fuzz >/dev/null

# fuzz_one T: fuzz T for $secs seconds; on a crash, minimize the input into
# the regression corpus and go on for the time left (at most 5 crashes).
# Writes "T EXECS CRASHES SECONDS" to $work/T.result.
fuzz_one() {
	t=$1
	w=$work/$t
	mkdir -p "$w/corpus" "$w/crashes" "$regress/$t"
	cp -n "tests/fuzz/corpus/$t/"* "$w/corpus/" 2>/dev/null || true
	start=$(date +%s)
	execs=0
	crashes=0
	while :; do
		left=$((secs - ($(date +%s) - start)))
		[ "$left" -gt 0 ] || break
		rm -f "$w/crashes/"*
		set +e
		"build-fuzz/fuzz_$t" -max_total_time="$left" -max_len=65536 -rss_limit_mb=2048 \
			-timeout=10 -close_fd_mask=3 -print_final_stats=1 -artifact_prefix="$w/crashes/" \
			"$w/corpus" "tests/fuzz/corpus/$t" "$regress/$t" >"$w/log" 2>&1
		rc=$?
		set -e
		n=$(sed -n 's/^stat::number_of_executed_units: *//p' "$w/log" | tail -1)
		execs=$((execs + ${n:-0}))
		[ $rc -ne 0 ] || break
		crash=$(ls "$w/crashes/"* 2>/dev/null | head -1)
		if [ -z "$crash" ]; then
			echo "fuzz_$t: exited $rc without a crash input; log: $w/log" >&2
			crashes=$((crashes + 1))
			break
		fi
		crashes=$((crashes + 1))
		name=$(basename "$crash")
		cp "$w/log" "$w/crash-$crashes.log"
		"build-fuzz/fuzz_$t" -minimize_crash=1 -max_total_time=60 -timeout=10 -close_fd_mask=3 \
			-exact_artifact_path="$regress/$t/$name" "$crash" >"$w/minimize.log" 2>&1 || true
		[ -s "$regress/$t/$name" ] || cp "$crash" "$regress/$t/$name"
		echo "fuzz_$t: CRASH, minimized into tests/fuzz/regress/$t/$name (log: $w/crash-$crashes.log)"
		[ $crashes -lt 5 ] || break
	done
	echo "$t $execs $crashes $(($(date +%s) - start))" >"$work/$t.result"
	echo "fuzz_$t: $execs inputs, $crashes crashes"
}

mkdir -p "$work"
n=$(echo $targets | wc -w)
echo "== fuzzing $n targets, $secs s each, two at a time (about $(( (n + 1) / 2 * secs / 60 )) min)"
lane() { # every other target, starting at the $1-th
	k=0
	for t in $targets; do
		k=$((k + 1))
		[ $((k % 2)) -eq "$1" ] && fuzz_one "$t"
	done
	return 0
}
lane 1 &
a=$!
lane 0 &
b=$!
wait $a
wait $b

echo "== line coverage of the parsers under their corpora"
rm -rf "$cov/prof"
mkdir -p "$cov/prof"
objs=""
for t in $targets; do
	LLVM_PROFILE_FILE="$cov/prof/$t.profraw" "$cov/fuzz_$t" -runs=0 -close_fd_mask=3 \
		"$work/$t/corpus" "tests/fuzz/corpus/$t" "$regress/$t" >/dev/null 2>&1 || true
	objs="$objs -object $cov/fuzz_$t"
done
"$llvm_profdata" merge -sparse "$cov"/prof/*.profraw -o "$cov/prof/all.profdata"
first=$(echo "$objs" | awk '{ print $2 }')
rest=$(echo "$objs" | cut -d' ' -f4-)
# TARGETS FILE FUNCTIONS: the parsers TARGETS (comma-separated: a row is
# printed when one of them ran) feed; "*" is the whole file,
# else a regex of the parsing functions (with their static helpers) of a
# file that also does I/O. Coverage is of all the corpora together.
parsers='
procfs,proctree recorder/system/procfs.c *
proctree recorder/gpu/gpu_amd.c ^rt_amd_parse_fdinfo$
proctree recorder/jobs/cgjob.c ^(rt_cgjob_classify|rt_env_lookup|split|ends_with|classify_slurm|classify_kubernetes|classify_systemd|pod_level)$
proctree shared/os/sysroot.c ^(rt_parse_attr_u64|rt_parse_attr_i64|attr_digits|skip_blanks)$
record shared/record/record.c ^(rt_record_decode|rt_record_upgrade|rt_record_claimed_layout|layout)$
pack shared/record/pack.c ^(rt_unpack_stored|rt_unpack|rt_pack_is_packed|rt_pack_is_full|sec_base|load|get_varint|read_shape|unzig|store)$
toml shared/config/toml.c *
toml shared/config/alloc.c *
inventory shared/record/inventory.c ^(rt_inventory_decode|r_.*)$
ring shared/live/ring.c ^(rt_ring_open|rt_ring_head|rt_ring_slot_count|rt_ring_run_id|rt_ring_state|rt_ring_read|rt_ring_writer_alive|rt_ring_wait|rt_ring_wait_end|rt_ring_close|stride_of|slot_at|futex|sleep_ns)$
runmeta shared/record/runmeta.c ^(rt_runmeta_read|rt_runmeta_set_status|ws|string|hex4|put_utf8|field|skip_value|skip_container|literal|number|parse_u64_text|parse_i64_text)$
stream shared/live/stream.c ^(rt_stream_next|read_full|rt_stream_in_init|rt_stream_in_free)$
stream exporter/read/follow.c ^rt_follow_stream$
sentinel exporter/sink/checkpoint.c ^(rt_checkpoint_parse|rt_checkpoint_free|copy_str)$
sentinel exporter/sink/sentinel.c ^rt_sentinel_parse_start$
keeper exporter/answer/keeper.c ^(rt_keeper_parse_servers|rt_keeper_parse_prices|copy_str|num)$
keeper exporter/net/cloud.c ^rt_cloud_parse$
cloud exporter/net/cloud.c ^(rt_cloud_take|take_json|take_line|take_last_segment|json_str|yaml_val)$
'
echo "$parsers" | while read -r target file funcs; do
	[ -n "$file" ] || continue
	ran=""
	for t in $(echo "$target" | tr , ' '); do
		echo " $targets " | grep -q " $t " && ran=1
	done
	[ -n "$ran" ] || continue
	"$llvm_cov" report "$first" $rest -instr-profile="$cov/prof/all.profdata" \
		-show-functions "$root/$file" 2>/dev/null |
		awk -v target="$target" -v file="$file" -v funcs="$funcs" '
		# Name Regions Miss Cover Lines Miss Cover [Branches Miss Cover]
		NF >= 7 && $2 ~ /^[0-9]+$/ && $5 ~ /^[0-9]+$/ && $1 != "TOTAL" {
			name = $1
			sub(/^.*:/, "", name) # static functions are named FILE:NAME
			if (funcs != "*" && name !~ funcs) next
			lines += $5; miss += $6; n++
		}
		END {
			if (!lines) { printf "  %-8s %-22s no parsing function found\n", target, file; exit }
			pct = 100 * (lines - miss) / lines
			printf "  %-8s %-22s %5.1f %% of %4d lines (%d functions)%s\n", target, file, pct, lines, n,
			       pct < 90 ? "  UNDER 90 %" : ""
		}'
done | tee "$work/coverage.txt"

echo "== executions (this run)"
bad=0
for t in $targets; do
	read -r name execs crashes took <"$work/$t.result"
	printf "  fuzz_%-10s %12s inputs in %4s s, %s crashes\n" "$name" "$execs" "$took" "$crashes"
done | tee "$work/executions.txt"
if grep -qv ' 0 crashes$' "$work/executions.txt" || grep -q 'UNDER 90' "$work/coverage.txt"; then
	bad=1
fi
exit $bad
