#!/usr/bin/env bash
# Bring up a real single-node Slurm on this machine from Debian's packages (munge, slurmctld,
# slurmd), run examples/slurm/sweep.sbatch on a shipped sweep, wait for it with a bound, and
# check that the merged result equals the unsharded run's (provenance aside). Needs root.
# Not part of .ci/run: it installs packages and starts daemons.
#
#   scripts/slurm-check.sh [SCENARIO] [SHARDS] [SAMPLES]   (default: xen-wfi-policy 4 300)
#
# The daemons run with a private slurm.conf (this host only, CPUs=2) under a temporary
# directory and are stopped on exit; /etc/slurm is not touched. Exit status: 0 when the merged
# result matches, 1 on a mismatch or a failed job, 2 on a timeout or a setup failure.
set -euo pipefail
cd "$(dirname "$0")/.."
SCENARIO=${1:-xen-wfi-policy}
SHARDS=${2:-4}
SAMPLES=${3:-300}
TIMEOUT_S=${TIMEOUT_S:-1200}

if [ -z "${IRQLAB:-}" ]; then
    cargo build --release -q -p cli
    IRQLAB=$PWD/target/release/irqlab
fi
export IRQLAB

need=()
for p in slurm-wlm munge; do dpkg -s "$p" > /dev/null 2>&1 || need+=("$p"); done
if [ ${#need[@]} -gt 0 ]; then
    echo "== apt-get install ${need[*]}"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}" > /dev/null
fi

W=$(mktemp -d /tmp/irqlab-slurm.XXXXXX)
host=$(hostname -s)
pids=()
started_munge=0
cleanup() {
    for p in "${pids[@]}"; do kill "$p" 2> /dev/null || true; done
    # A munged this script started is stopped again; one that was already running is left alone.
    if [ "$started_munge" = 1 ]; then pkill -x munged 2> /dev/null || true; fi
}
trap cleanup EXIT

mkdir -p "$W/ctld" "$W/d" "$W/log"
cat > "$W/slurm.conf" << CONF
ClusterName=irqlab-check
SlurmctldHost=$host
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
SlurmctldPort=16817
SlurmdPort=16818
StateSaveLocation=$W/ctld
SlurmdSpoolDir=$W/d
SlurmctldPidFile=$W/slurmctld.pid
SlurmdPidFile=$W/slurmd.pid
SlurmctldLogFile=$W/log/slurmctld.log
SlurmdLogFile=$W/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
ReturnToService=2
MpiDefault=none
NodeName=$host CPUs=2 State=UNKNOWN
PartitionName=check Nodes=$host Default=YES MaxTime=INFINITE State=UP
CONF
export SLURM_CONF=$W/slurm.conf

# munge: the key is made by the package's postinst; start munged unless one answers.
if ! munge -n > /dev/null 2>&1; then
    mkdir -p /run/munge && chown munge:munge /run/munge 2> /dev/null || true
    [ -s /etc/munge/munge.key ] || mungekey --create --force
    su -s /bin/sh munge -c "munged --force" 2> /dev/null || munged --force
    started_munge=1
fi
munge -n | unmunge > /dev/null || { echo "munge does not work" >&2; exit 2; }

slurmctld -D -f "$W/slurm.conf" > "$W/log/slurmctld.out" 2>&1 &
pids+=($!)
slurmd -D -f "$W/slurm.conf" > "$W/log/slurmd.out" 2>&1 &
pids+=($!)
for _ in $(seq 60); do
    sinfo -h -o %T 2> /dev/null | grep -qE '^(idle|mixed|alloc)' && break
    sleep 1
done
sinfo -h -o "%P %T %c %N" | grep -qE 'idle|mixed|alloc' || { echo "Slurm did not come up; logs in $W/log" >&2; sinfo >&2 || true; exit 2; }
echo "== Slurm up: $(sinfo -h -o '%P %T cpus=%c %N')"

OUT=$W/out
examples/slurm/sweep.sbatch "$SCENARIO" "$OUT" "$SHARDS" --set "workload.samples=$SAMPLES"
start=$(date +%s)
while squeue -h -o %i | grep -q .; do
    if [ $(( $(date +%s) - start )) -gt "$TIMEOUT_S" ]; then
        echo "timeout after ${TIMEOUT_S}s; queue:" >&2
        squeue >&2
        exit 2
    fi
    sleep 2
done
echo "== jobs done in $(( $(date +%s) - start )) s"
if [ ! -s "$OUT/merged/result.json" ]; then
    echo "no merged result; logs:" >&2
    tail -n 20 "$OUT"/*.log >&2 || true
    exit 1
fi

"$IRQLAB" sim "$SCENARIO" --set "workload.samples=$SAMPLES" --out "$W/whole" --format csv > /dev/null
strip() { jq -S 'del(.provenance)' "$1"; }
if cmp <(strip "$OUT/merged/result.json") <(strip "$W/whole/result.json"); then
    echo "OK: merged result of $SHARDS Slurm shards of $SCENARIO equals the unsharded run (provenance aside)"
    echo "   ($(jq '.configs | length' "$OUT/merged/result.json") points; work dir $W)"
else
    echo "MISMATCH: $OUT/merged/result.json differs from $W/whole/result.json" >&2
    exit 1
fi
