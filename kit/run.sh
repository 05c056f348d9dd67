#!/bin/sh
# run.sh RESULTS_DIR: qualifies the Vulkan devices of this machine with the
# programs beside this script, writing every output into RESULTS_DIR, then
# prints a summary. Exit status 0 when every step passed, 1 when any failed,
# 2 for a usage error or a results folder it cannot create, enter and write. KIT_QUICK=1 runs the quick sizes; KIT_TEST_RUN
# restricts the test binaries to the tests matching a -test.run pattern,
# KIT_TEST_SKIP leaves out those matching a -test.skip pattern (besides
# tree-tests), KIT_CHECK_MATCH passes --match to check, and
# KIT_BENCH_WORKLOADS passes --workloads to bench. KIT_GPUAV_MATCH names
# the paths of check's pass under GPU-assisted validation (check --quick
# --validate --match; make's GPUAV_MATCH by default), KIT_GPUAV_MATCH=off
# leaves it out.
# GPUSCATTER_DEVICE selects the device (default: the best by type).
set -eu
usage() {
	echo "usage: run.sh RESULTS_DIR"
	echo "  qualifies this machine's Vulkan devices; every output goes into RESULTS_DIR"
}
if [ $# -ne 1 ]; then
	usage >&2
	exit 2
fi
case $1 in
-h | --help)
	usage
	exit 0
	;;
"")
	usage >&2
	exit 2
	;;
esac
kit=$(cd -- "$(dirname -- "$0")" && pwd)
# Every path below is under $res: it must name the results folder, never
# be empty (which would aim the outputs at the root of the filesystem).
if ! mkdir -p -- "$1" || ! res=$(cd -- "$1" && pwd) || [ -z "$res" ] ||
	! [ -d "$res" ] || ! [ -w "$res" ] || ! [ -x "$res" ]; then
	echo "run.sh: cannot create, enter and write the results folder $1" >&2
	exit 2
fi
quick=${KIT_QUICK:-0}
[ "$quick" = 0 ] && quick= || quick=1
# The bundled validation layer, unless the caller chose a layer path.
if [ -z "${VK_LAYER_PATH:-}" ] && [ -d "$kit/layers" ]; then
	export VK_LAYER_PATH="$kit/layers"
fi
unset CI # the tests of build tools (glslc, cc) skip instead of failing
work="$res/work"
mkdir -p -- "$work"
summary="$res/summary.txt"
: >"$summary"
failed=0

# step NAME OUTFILE COMMAND...: runs COMMAND in $work with stdout and stderr
# into OUTFILE, and records its status and time.
step() {
	name=$1 outfile=$2
	shift 2
	printf '%s ...\n' "$name" >&2
	start=$(date +%s)
	if (cd -- "$work" && "$@") >"$outfile" 2>&1; then rc=0; else rc=$?; fi
	secs=$(($(date +%s) - start))
	if [ $rc -eq 0 ]; then verdict=PASS; else verdict="FAIL (exit $rc)"; failed=1; fi
	printf '%-22s %-14s %5ss  %s\n' "$name" "$verdict" "$secs" "$(basename "$outfile")" >>"$summary"
}

g="$kit/gpuscatter"
# The device list alone in devices.json (anything on stderr goes to
# devices.txt): each element is what 'gpuscatter plan --facts' plans for.
step devices "$res/devices.txt" sh -c '"$0" devices --json >"$1"' "$g" "$res/devices.json"
if [ -n "$quick" ]; then size=--quick; else size=; fi
if [ -n "${KIT_CHECK_MATCH:-}" ]; then
	step check "$res/check.txt" "$g" check $size --match "$KIT_CHECK_MATCH" --json "$res/check.json"
else
	step check "$res/check.txt" "$g" check $size --json "$res/check.json"
fi
# check's pass under the validation layer's synchronization and
# GPU-assisted validation, on a bounded set of paths at the quick size
# (instrumented kernels run several times slower): any message fails it.
gpuav=${KIT_GPUAV_MATCH:-skip/default,hot/default,resident/default,contention/exactAtomics,scale/default}
if [ "$gpuav" != off ]; then
	step check-gpuav "$res/check-gpuav.txt" "$g" check --quick --validate --match "$gpuav" --json "$res/check-gpuav.json"
fi
for t in "$kit"/tests/*.test; do
	name=$(basename "$t")
	set -- -test.v -test.timeout 30m
	[ -n "$quick" ] && set -- "$@" -test.short
	[ -n "${KIT_TEST_RUN:-}" ] && set -- "$@" -test.run "$KIT_TEST_RUN"
	# The tests that need the source tree or the Go toolchain (README.md,
	# glslc and cc against testdata, go build of the command), which the
	# kit lacks: the package's entries of tree-tests, the list the tests
	# themselves check (internal/treetests/tests.txt in the tree).
	skip=$(awk -v pkg="${name%.test}" '!/^#/ && NF >= 3 { n = split($1, p, "/"); if (p[n] == pkg) printf "%s%s", (s++ ? "|" : ""), $2 }' "$kit/tree-tests")
	[ -n "$skip" ] && skip="^($skip)\$"
	[ -n "${KIT_TEST_SKIP:-}" ] && skip="${skip:+$skip|}$KIT_TEST_SKIP"
	[ -n "$skip" ] && set -- "$@" -test.skip "$skip"
	step "$name" "$res/$name.txt" "$t" "$@"
done
step bench "$res/bench.txt" "$g" bench ${quick:+--quick} ${KIT_BENCH_WORKLOADS:+--workloads "$KIT_BENCH_WORKLOADS"} \
	--json "$res/bench.json" --plot "$res/bench.png"

# The summary: the device, the check verdict and each step.
{
	echo "gpuscatter qualification kit: results in $res"
	sed -n 's/^device: *//p' "$res/check.txt" | head -n 1 | sed 's/^/device:  /'
	sed -n 's/^driver: *//p' "$res/check.txt" | head -n 1 | sed 's/^/driver:  /'
	grep -E '^(PASS|FAIL): ' "$res/check.txt" | tail -n 1 | sed 's/^/check:   /' || true
	grep -E '^FAIL ' "$res/check.txt" | head -n 5 | sed 's/^/  /' || true
	grep -E '^REFUSED ' "$res/check.txt" | head -n 1 | sed 's/^/  /' || true
	for t in "$kit"/tests/*.test; do
		name=$(basename "$t")
		p=$(grep -c '^--- PASS' "$res/$name.txt" || true)
		f=$(grep -c '^--- FAIL' "$res/$name.txt" || true)
		s=$(grep -c '^--- SKIP' "$res/$name.txt" || true)
		printf '%-22s %s passed, %s failed, %s skipped\n' "$name:" "$p" "$f" "$s"
		grep '^--- FAIL' "$res/$name.txt" | head -n 3 | sed 's/^/  /' || true
	done
	echo
	cat "$summary"
	if [ $failed -eq 0 ]; then echo "RESULT: PASS"; else echo "RESULT: FAIL"; fi
} >"$res/report.txt"
cat "$res/report.txt"
exit $failed
