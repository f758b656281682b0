#!/bin/bash
# irqlab's interrupt-latency gate as a job script of Xen's own GitLab CI, in the form of Xen's
# automation/scripts/qemu-*-arm64.sh: run from the top of the Xen tree under test, one variant as
# the first argument, everything it leaves in the current directory for the job's artifacts, and
# the exit status the verdict. The job (examples/ci/gitlab-ci.yml, `irqlab-gate-arm64-timer`)
# clones irqlab into ./irqlab first and tees this script's output into its ${LOGFILE}.
#
# The merge request's base (A) against its commits as a `git format-patch` series (B), both built
# from source by the lab (cached by content); interleaved fresh boots under QEMU TCG. Times are
# emulation (instruction counts with --icount), never hardware latency: the gate catches a change
# that adds work to the interrupt path.
#
#   variant: timer  the timer bench in a dom0less domU, --icount
#            fio    fio in dom0 on an NVMe behind the GICv4 ITS (the S1 series' path)
#
# Leaves irqlab-$variant/ (both sides' runs, comparison.txt/.json), irqlab-$variant.xml (JUnit:
# one test case per gated statistic, for `artifacts: reports: junit:`), irqlab-$variant.md (the
# summary). With IRQLAB_HISTORY_DB set (a file kept in the job's cache, or postgresql://…), the
# patched run is stored in the results history under xen-arm64-$variant.
# Exit: 0 not resolvably slower, 4 resolvably slower, 5 the gate could not check something,
# 2 unusable input (named), 1 a side failed to build or boot (the other side's results kept).

set -ex -o pipefail

variant=$1
base=${BASE_SHA:-${CI_MERGE_REQUEST_DIFF_BASE_SHA:-HEAD~1}}
repeat=${REPEAT:-3}

case $variant in
    timer) icount="--icount"; bench="timer --samples 64 --period-us 1000" ;;
    fio)   icount="";         bench="fio --job 4k-qd1 --runtime 3s" ;;
    *)     echo "usage: $0 timer|fio" >&2; exit 2 ;;
esac

# A: the base as a tree; B: the same tree plus the request's commits as a series.
rm -rf xen-base series "irqlab-$variant"
git worktree add --detach xen-base "$base"
git format-patch -o series "$base"..HEAD

set +e
irqlab/scripts/arm-lab.sh ab xen \
    --a "$icount --xen-src $PWD/xen-base --xen-config UNSUPPORTED=y HAS_ITS=y" \
    --b "$icount --xen-src $PWD/xen-base --patches $PWD/series --xen-config UNSUPPORTED=y HAS_ITS=y" \
    --repeat "$repeat" --fail-on slower --junit "irqlab-$variant.xml" --summary-md "irqlab-$variant.md" \
    -- $bench --out "irqlab-$variant"
rc=$?
set -e

if [ -n "${IRQLAB_HISTORY_DB:-}" ] && [ -f "irqlab-$variant/b/result.json" ]; then
    cargo build --release --quiet --manifest-path irqlab/Cargo.toml -p cli
    status=--rejected
    if [ "$rc" -eq 0 ]; then status=; fi
    irqlab/target/release/irqlab history add "irqlab-$variant/b/result.json" \
        --commit "$(git rev-parse HEAD)" --label "xen-arm64-$variant" $status \
        --comparison "irqlab-$variant/comparison.json" --db "$IRQLAB_HISTORY_DB"
fi

git worktree remove --force xen-base
exit $rc
