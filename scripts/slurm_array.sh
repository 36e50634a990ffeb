#!/usr/bin/env bash
# The README's Slurm job arrays, run for real on a one-node Slurm on this
# machine: 3 shards of the sample annotated, then 3 shards of a self-play
# run, each with --resume, one task killed in the middle and requeued, the
# shards merged, and the bytes compared with the unsharded run.
#
#     scripts/slurm_array.sh KIBITZ PGN WORKDIR
#
# Needs root, Debian's slurm-wlm and munge. Starts munged, slurmctld and
# slurmd when they are not running (a one-node cluster named after this
# host) and leaves them running. Prints the sha256 of both files and
# "slurm: NAME: merged equals unsharded" for each run on success; exits 1
# otherwise.
set -euo pipefail
KIBITZ=$(readlink -f "$1")
PGN=$(readlink -f "$2")
WORK=$(readlink -f "$3")
mkdir -p "$WORK"
HOST=$(hostname)

start_cluster() {
    if ! pgrep -x munged >/dev/null; then
        mkdir -p /run/munge /var/log/munge /var/lib/munge
        chown munge:munge /run/munge /var/log/munge /var/lib/munge /etc/munge /etc/munge/munge.key
        chmod 0700 /etc/munge
        chmod 0400 /etc/munge/munge.key
        runuser -u munge -- munged
    fi
    if [ ! -f /etc/slurm/slurm.conf ] || ! grep -q "kibitz-test" /etc/slurm/slurm.conf; then
        cat >/etc/slurm/slurm.conf <<EOF
# kibitz-test: a one-node cluster for scripts/slurm_array.sh
ClusterName=kibitz
SlurmctldHost=$HOST
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
StateSaveLocation=/var/spool/slurmctld
SlurmdSpoolDir=/var/spool/slurmd
SlurmctldPidFile=/run/slurmctld.pid
SlurmdPidFile=/run/slurmd.pid
ReturnToService=2
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
MpiDefault=none
NodeName=$HOST CPUs=$(nproc) State=UNKNOWN
PartitionName=debug Nodes=$HOST Default=YES MaxTime=INFINITE State=UP
EOF
    fi
    mkdir -p /var/spool/slurmctld /var/spool/slurmd /var/log/slurm
    pgrep -x slurmctld >/dev/null || slurmctld
    pgrep -x slurmd >/dev/null || slurmd
    for _ in $(seq 60); do
        if sinfo -h -o %T 2>/dev/null | grep -qE "idle|mixed|alloc"; then
            return 0
        fi
        sleep 1
    done
    echo "slurm: the node did not come up: $(sinfo 2>&1)" >&2
    exit 1
}

start_cluster
cd "$WORK"

# One array of 3 shards of a kibitz command, task 1 killed once it has
# written a block and requeued (--resume continues its file), the shards
# merged and compared with the unsharded run. $1 names the run; the rest is
# the command without its output and shard.
run_array() {
    local name=$1
    shift
    rm -f "$name"-shard-*.kbz "$name"-merged.kbz "$name"-unsharded.kbz slurm-"$name"-*.out
    "$KIBITZ" "$@" -o "$name"-unsharded.kbz --quiet >/dev/null
    # The README's array, with 3 shards and this machine's paths.
    cat >"$name"-array.sh <<EOF
#!/bin/bash
#SBATCH --array=0-2
#SBATCH --cpus-per-task=1
#SBATCH --requeue
#SBATCH --output=$WORK/slurm-$name-%A_%a.out
"$KIBITZ" $* \\
    --shard \${SLURM_ARRAY_TASK_ID}/3 -o "$WORK/$name-shard-\${SLURM_ARRAY_TASK_ID}.kbz" --resume --quiet
EOF
    local job
    job=$(sbatch --parsable "$name"-array.sh)
    echo "slurm: $name: submitted array $job"
    for _ in $(seq 600); do
        if [ -s "$name"-shard-1.kbz ] && [ "$(stat -c %s "$name"-shard-1.kbz)" -gt 600 ]; then
            break
        fi
        sleep 0.2
    done
    local state requeued
    state=$(squeue -h -j "${job}_1" -o %T 2>/dev/null || true)
    echo "slurm: $name: task 1 is $state with $(stat -c %s "$name"-shard-1.kbz 2>/dev/null || echo 0) bytes written; killing and requeueing it"
    if [ "$state" = RUNNING ]; then
        scancel --signal=KILL "${job}_1" || true
        sleep 2
        scontrol requeue "${job}_1" || true
        requeued=yes
    else
        requeued="no (the task had ended: $state)"
    fi
    for _ in $(seq 900); do
        if [ -z "$(squeue -h -j "$job" 2>/dev/null)" ]; then
            break
        fi
        sleep 1
    done
    if [ -n "$(squeue -h -j "$job" 2>/dev/null)" ]; then
        echo "slurm: $name: the array did not finish: $(squeue -j "$job")" >&2
        exit 1
    fi
    echo "slurm: $name: requeued: $requeued"
    echo "slurm: $name: task 1's last run: $(grep -E '^games' slurm-"$name"-"${job}"_1.out | tail -1)"
    "$KIBITZ" merge "$name"-shard-0.kbz "$name"-shard-1.kbz "$name"-shard-2.kbz -o "$name"-merged.kbz
    local a b
    a=$(sha256sum "$name"-merged.kbz | cut -d' ' -f1)
    b=$(sha256sum "$name"-unsharded.kbz | cut -d' ' -f1)
    echo "slurm: $name: merged sha256 $a"
    echo "slurm: $name: unsharded sha256 $b"
    if [ "$a" = "$b" ]; then
        echo "slurm: $name: merged equals unsharded"
    else
        echo "slurm: $name: merged differs from unsharded" >&2
        exit 1
    fi
}

# Small blocks, so that a task killed midway leaves complete blocks that
# --resume keeps.
run_array annotate annotate "$PGN" --depth "${DEPTH:-11}" --threads 1 --block-games 1
run_array selfplay selfplay --games "${GAMES:-60}" --depth "${SELFPLAY_DEPTH:-7}" --threads 1 --block-games 1
