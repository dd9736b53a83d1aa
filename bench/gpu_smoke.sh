#!/usr/bin/env bash
# GPU smoke bench, one command on an offline GPU machine (nothing is downloaded):
#
#   bench/gpu_smoke.sh [--steps 3] [--prompts 4] [--group 8] [--length 8192] [--mem 0.35]
#
# Needs the project's requirements plus requirements-gpu.txt (vLLM) installed, e.g. from a local wheel
# mirror: pip install -r requirements.txt -r requirements-gpu.txt. Builds a Qwen3-1.7B-shaped model
# with random weights, trains a few MicroCoder-GRPO steps with the vLLM engine at a long response
# length and prints rollout and update tokens/s, the step-time split, the peak GPU memory and the same
# rollout with bare vLLM for the ratio (bench/gpu_smoke.py). Stops after GPU_SMOKE_TIMEOUT_S (480).
set -euo pipefail
cd "$(dirname "$0")/.."
PY="${PYTHON:-.venv/bin/python}"
[ -x "$PY" ] || PY="$(command -v python3)"
if ! command -v nvidia-smi >/dev/null || ! nvidia-smi -L >/dev/null 2>&1; then
  echo "error: no NVIDIA GPU visible (nvidia-smi -L failed)" >&2
  exit 2
fi
if ! "$PY" -c "import vllm" 2>/dev/null; then
  echo "error: vllm is not installed for $PY: pip install -r requirements.txt -r requirements-gpu.txt" >&2
  exit 2
fi
# In-process vLLM engine core (weights are loaded in place; training.rollout.vllm_engine), no network.
export VLLM_ENABLE_V1_MULTIPROCESSING=0 HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 TOKENIZERS_PARALLELISM=false
exec timeout "${GPU_SMOKE_TIMEOUT_S:-480}" "$PY" bench/gpu_smoke.py "$@"
