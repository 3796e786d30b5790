#!/usr/bin/env bash
# The main job on a fresh Debian 12 machine: installs what is missing, builds, generates the
# demo data and trains the `cpu-short` config locally, then prints where its logs and metrics are.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${SCALEDESK_BUILD_DIR:-$root/build}"
workspace="${SCALEDESK_DEMO_DIR:-$root/demo}"

"$root/packaging/install-deps.sh"
"$root/packaging/build.sh"

train="$build/trainer/scaledesk-train"
mkdir -p "$workspace"
cd "$workspace"
if [ ! -f data/train.h5 ] || [ ! -f data/valid.h5 ]; then
  "$train" make-data --out data --box 128 --val-box 96 --seed 1
fi
# Each demo run gets the next free run number, so earlier runs are kept.
n=0
while [ -e "runs/cpu-short/1GPU/$(printf '%02d' "$n")" ]; do n=$((n + 1)); done
run_num=$(printf '%02d' "$n")
"$train" --yaml_config "$root/configs/unet.yaml" --config cpu-short --run_num "$run_num" --seed 1

run_dir="$workspace/runs/cpu-short/1GPU/$run_num"
cat <<MSG

Demo run finished: $run_dir
  log:      $run_dir/out.log
  metrics:  $run_dir/metrics.jsonl (one JSON object per step, epoch and event; docs/trainer.md)
  epochs:   $run_dir/epochs.csv
  manifest: $run_dir/manifest.json
  checkpoint: $run_dir/checkpoints/latest.pt
MSG
