#!/usr/bin/env bash
# Train both vision models on a lent GPU machine, in two calls (each call carries at most 64 MiB, so
# the data travels as two `caap dataset pack` archives under .devdata/, wheels under .whl/):
#
#   bash tools/gpu_train.sh prep .devdata/a.tar.gz    # install, unpack, start the reader fine-tune
#   bash tools/gpu_train.sh train .devdata/b.tar.gz   # unpack, cut canvases, train the detector,
#                                                     # wait for the reader, put both under $OUT
#
# or the reader alone, in one call, several recipes side by side on the one GPU:
#
#   READER_RUNS="lr1e-4:lr=0.0001 lr3e-5:lr=0.00003" bash tools/gpu_train.sh reader .devdata/r.tar.gz
#
#
# Wheels under .whl/ for what the machine's image lacks (python 3.12, manylinux x86-64; see
# /work/.library/device/README.md for the pip download line): ultralytics, ultralytics-thop,
# ultralytics-platform, pydantic, pydantic-core, annotated-types, typing-inspection, and miniwob
# (the canvases refuse tasks reserved for evaluation, and miniwob lists the tasks).
# Settings: training/detector-any-gpu.yaml (detector), training/reader.yaml + the flags below.
# Environment: PY (python), SITE (where the wheels go), DEVICE (cuda; cpu for a dry run here),
# READER_MIN (reader minutes; READER_MIN=0 trains the detector alone), DET_HOURS (detector hours),
# DET_PARTS (the canvas parts, space-separated NAME=DATASET[,DATASET...]; the first takes the
# validation sets), DET_VAL (validation datasets, comma-separated), OUT (results folder); for the
# reader phase READER_DATA (dataset names under data/), READER_RUNS (NAME:KEY=VALUE,KEY=VALUE ... one
# run each, all at once), READER_WORKERS (collating processes per run) and READER_EVAL_MIN (minutes
# between validations: reading 1,429 elements took ~40 s on the H100).
set -euo pipefail
phase=$1; shift
PY=${PY:-python3}
SITE=${SITE:-/tmp/site}
DEVICE=${DEVICE:-cuda}
OUT=${OUT:-runs/gpu-out}
mkdir -p "$OUT" runs/gpu
export PYTHONPATH=$SITE:$PWD PYTHONUNBUFFERED=1 YOLO_OFFLINE=1
caap() { "$PY" -m caap.cli "$@"; }

unpack() {
  for a in "$@"; do
    caap dataset unpack "$a" data
  done
}

install_wheels() {
  if compgen -G ".whl/*.whl" >/dev/null; then
    "$PY" -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target "$SITE" .whl/*.whl
  fi
}

if [ "$phase" = reader ]; then
  install_wheels
  unpack "$@"
  data=()
  for d in ${READER_DATA:-miniwob-train desktop-train synth-ui-extra-t synth-ui-desk-t}; do data+=(--data "data/$d"); done
  pids=()
  for spec in ${READER_RUNS:-lr1e-4:lr=0.0001}; do
    name=${spec%%:*}
    sets=()
    IFS=, read -ra kv <<< "${spec#*:}"
    for s in "${kv[@]}"; do sets+=(--set "$s"); done
    "$PY" -m caap.cli train reader "${data[@]}" --base models/reader --device "$DEVICE" \
      --batch "${READER_BATCH:-64}" --set loader_workers="${READER_WORKERS:-6}" --set eval_every_minutes="${READER_EVAL_MIN:-2.5}" \
      --set checkpoint_every_minutes=100 "${sets[@]}" --train-samples "${READER_SAMPLES:-3000000}" \
      --max-minutes "${READER_MIN:-7}" --out "runs/gpu/reader-$name" > "runs/gpu/reader-$name.log" 2>&1 &
    pids+=($!)
  done
  sleep 60
  tail -n 4 runs/gpu/reader-*.log
  nvidia-smi --query-gpu=name,memory.used,utilization.gpu --format=csv 2>/dev/null || true
  for p in "${pids[@]}"; do wait "$p" || echo "a reader run failed (exit $?)"; done
  for run in runs/gpu/reader-*/; do
    name=$(basename "$run")
    grep -h "eval at" "runs/gpu/$name.log" | tail -n 8 || true
    if [ -d "$run/best" ]; then
      "$PY" tools/export_reader.py "$run/best" "runs/gpu/$name-ship"
      tar czf "$OUT/$name.tar.gz" -C runs/gpu "$name-ship" "$name/metrics.jsonl" "$name/caap-train.json" "$name.log"
    fi
  done
  ls -la "$OUT"
  exit 0
fi

if [ "$phase" = prep ]; then
  install_wheels
  # ultralytics reads its results.csv with polars only to store it in the checkpoint; a stand-in
  # with that one call saves carrying a 40 MB wheel.
  if ! "$PY" -c "import polars" 2>/dev/null; then
    mkdir -p "$SITE/polars"
    cat > "$SITE/polars/__init__.py" <<'PYEOF'
"""Stand-in for polars.read_csv(...).to_dict(as_series=False), the one call ultralytics' trainer makes."""
import csv
import io


class _Frame:
    def __init__(self, rows):
        self._rows = rows

    def to_dict(self, as_series=False):
        keys = list(self._rows[0]) if self._rows else []
        return {k.strip(): [_num(r[k]) for r in self._rows] for k in keys}


def _num(v):
    try:
        return float(v)
    except (TypeError, ValueError):
        return v


def read_csv(data, **_):
    text = data.decode() if isinstance(data, bytes) else open(data).read()
    return _Frame(list(csv.DictReader(io.StringIO(text))))
PYEOF
  fi
  "$PY" -c "import torch, ultralytics, transformers, caap.cli; print('torch', torch.__version__, 'cuda', torch.cuda.is_available(), 'ultralytics', ultralytics.__version__, 'transformers', transformers.__version__)"
  unpack "$@"
  if [ "${READER_MIN:-8}" = 0 ]; then exit 0; fi
  # The reader fine-tune runs in its own session so that it outlives this call.
  setsid nohup "$PY" -m caap.cli train reader --data data/miniwob-train --data data/desktop-train \
    --data data/synth-ui-extra-t --base models/reader --device "$DEVICE" --batch "${READER_BATCH:-64}" \
    --set lr="${READER_LR:-0.0002}" --set eval_every_minutes=1.5 --set checkpoint_every_minutes=1.5 \
    --train-samples "${READER_SAMPLES:-300000}" --max-minutes "${READER_MIN:-8}" --out runs/gpu/reader \
    > runs/gpu/reader.log 2>&1 < /dev/null &
  echo $! > runs/gpu/reader.pid
  sleep "${PREP_WAIT:-40}"
  tail -5 runs/gpu/reader.log
  nvidia-smi --query-gpu=name,memory.used,utilization.gpu --format=csv 2>/dev/null || true
  exit 0
fi

if [ "$phase" = train ]; then
  unpack "$@"
  t0=$(date +%s)
  # One process cuts each part's canvases. Without DET_PARTS, stage 4's mix: the generated pages
  # travelled as several tiled parts (data/synth-ui-train-tiles-N), one part each.
  parts=()
  if [ -n "${DET_PARTS:-}" ]; then
    for p in $DET_PARTS; do parts+=(--part "$p"); done
  else
    parts=(--part mw=data/miniwob-train,data/miniwob-train,data/miniwob-train
           --part mix=data/desktop-train,data/desktop-train,data/synth-ui-extra-t)
    for d in data/synth-ui-train-tiles-*; do parts+=(--part "$(basename "$d")=$d"); done
  fi
  vals=()
  IFS=, read -ra vs <<< "${DET_VAL:-data/synth-ui-val-tiles-s}"
  for v in "${vs[@]}"; do vals+=(--val-data "$v"); done
  "$PY" tools/gpu_canvases.py runs/gpu/canvases --size 480 --max-tiles 2 "${parts[@]}" "${vals[@]}"
  echo "canvases: $(( $(date +%s) - t0 )) s"
  # A dry run (here, on a CPU) shortens the recipe's time and batch through the environment.
  sed -e "s/^time: .*/time: ${DET_HOURS:-0.1}/" -e "s/^batch: .*/batch: ${DET_BATCH:-64}/" \
    -e "s/^workers: .*/workers: ${DET_WORKERS:-12}/" training/detector-any-gpu.yaml > runs/gpu/detector.yaml
  caap train detector --data runs/gpu/canvases/data.yaml --config runs/gpu/detector.yaml \
    --device "${DET_DEVICE:-0}" --project runs/gpu --name detector \
    2>&1 | tee runs/gpu/detector.log | grep -vE "^\s+[0-9]+/[0-9]+ .*it/s|%\|" || true
  cp runs/gpu/detector/weights/best.pt "$OUT/detector-best.pt" || true
  cp runs/gpu/detector/weights/last.pt "$OUT/detector-last.pt" || true
  cp runs/gpu/detector/results.csv "$OUT/detector-results.csv" || true
  if [ -f runs/gpu/reader.pid ]; then  # prep started a reader fine-tune (READER_MIN > 0)
    # Wait for the reader (it stops itself at READER_MIN), then ship its best checkpoint as float16.
    while kill -0 "$(cat runs/gpu/reader.pid)" 2>/dev/null; do sleep 5; done
    tail -3 runs/gpu/reader.log
    if [ -d runs/gpu/reader/best ]; then
      "$PY" tools/export_reader.py runs/gpu/reader/best runs/gpu/reader-ship
      tar czf "$OUT/reader.tar.gz" -C runs/gpu reader-ship reader/metrics.jsonl
    fi
  fi
  logs=()
  for f in runs/gpu/reader.log runs/gpu/detector.log runs/gpu/canvases/parts.json; do
    if [ -f "$f" ]; then logs+=("$f"); fi
  done
  tar czf "$OUT/logs.tar.gz" "${logs[@]}" || true
  ls -la "$OUT"
  exit 0
fi
echo "usage: $0 prep|train ARCHIVE..." >&2
exit 2
