#!/bin/sh
# Whole-process time and peak RSS of the 7M-line eval beside pyarrow's read_csv floor, interleaved.
#   sh bench/profile/whole.sh [ROOT_BEFORE] [REPEATS]   (run from the repository root, alone on the machine)
BEFORE=${1:-}
N=${2:-3}
DATA=$(pwd)/bench/data
SUITE="-m nDCG@5 -m nDCG@10 -m nDCG@20 -m nDCG@100 -m nDCG@1000 -m AP -m RR -m R@10 -m R@100 -m R@1000 -m P@5 -m P@10"
FLOOR="import pyarrow.csv as c; c.read_csv('$DATA/dev-run.txt', parse_options=c.ParseOptions(delimiter=' '), read_options=c.ReadOptions(column_names=list('abcdef')))"
measure() {  # label, dir, command...
    label=$1; dir=$2; shift 2
    out=$( (cd "$dir" && /usr/bin/time -f "%e %M" "$@" >/dev/null) 2>&1 | tail -1)
    echo "$label $out" | awk '{printf "%-8s %6.2f s %6.0f MB\n", $1, $2, $3/1024}'
}
for i in $(seq "$N"); do
    measure floor . python -c "$FLOOR"
    measure after . python -m metrics eval "$DATA/dev-qrels.txt" "$DATA/dev-run.txt" $SUITE
    [ -n "$BEFORE" ] && measure before "$BEFORE" python -m metrics eval "$DATA/dev-qrels.txt" "$DATA/dev-run.txt" $SUITE
done
