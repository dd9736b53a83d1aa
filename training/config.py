"""The MicroCoder-GRPO run configuration.

One frozen dataclass tree, loaded from YAML (``load_config``) with optional dotted overrides
(``mask.probability=0.2``). Every field carries a help string (``field(metadata={"help": ...})``) and
``__post_init__`` checks whose errors say how to fix the value. ``describe_fields()`` lists every
field with its dotted path, type, default and help text; the UI renders these next to the training
insights of ``training.insights`` (each insight names one of these dotted paths).

Defaults follow ../shared/INSIGHTS.md: conditional truncation mask with p = 0.1 and a 128-token
repetition window, no KL (and then no reference model), asymmetric clip 0.2 / 0.28, constant T = 1.2.

This module imports nothing from Django.
"""

from __future__ import annotations

import dataclasses
import types
import typing
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import yaml


class ConfigError(ValueError):
    """A configuration value is invalid; the message says which field and how to fix it."""


def _help(text: str) -> dict[str, str]:
    return {"help": text}


def _require(condition: bool, message: str) -> None:
    if not condition:
        raise ConfigError(message)


@dataclass(frozen=True)
class TemperatureStage:
    """One stage of a staged schedule: ``value`` applies from step ``start_step`` (1-based) on."""

    start_step: int = field(metadata=_help("First training step (1-based) at which this stage applies."))
    value: float = field(metadata=_help("Sampling and training temperature during this stage."))

    def __post_init__(self) -> None:
        _require(self.start_step >= 0, f"temperature.stages: start_step must be >= 0, got {self.start_step}.")
        _require(
            0.0 < self.value <= 4.0,
            f"temperature.stages: value must be in (0, 4], got {self.value}; MicroCoder uses 0.6-1.8.",
        )


@dataclass(frozen=True)
class TemperatureConfig:
    policy: Literal["constant", "staged", "diversity"] = field(
        default="constant",
        metadata=_help(
            "How T is chosen: 'constant' uses temperature.value; 'staged' follows temperature.stages "
            "(low -> high, e.g. 0.6 until step 140 then 1.8); 'diversity' samples the initial policy at "
            "each of temperature.candidates before step 1 and picks the lowest T whose diversity reaches "
            "temperature.target_diversity (later stages from temperature.stages, if any, still apply)."
        ),
    )
    value: float = field(
        default=1.2,
        metadata=_help("The temperature of the 'constant' policy. MicroCoder's main runs use 1.2."),
    )
    stages: tuple[TemperatureStage, ...] = field(
        default=(),
        metadata=_help(
            "Staged schedule as a list of {start_step, value}, sorted by start_step; the first stage "
            "starts at step 0 or 1. Under 'diversity' the stage that starts the run takes the selected T."
        ),
    )
    candidates: tuple[float, ...] = field(
        default=(0.6, 0.8, 1.0, 1.2, 1.4, 1.6, 1.8),
        metadata=_help("Temperatures the 'diversity' policy measures before training, ascending."),
    )
    target_diversity: float = field(
        default=0.7,
        metadata=_help(
            "The 'diversity' policy picks the lowest candidate whose initial diversity is at least this "
            "value (the level diversity converges to during training; starting below it makes training "
            "fail). If no candidate reaches it, the most diverse candidate is used."
        ),
    )
    selection_prompts: int = field(
        default=8,
        metadata=_help("Prompts sampled (group_size times each) per candidate temperature during selection."),
    )
    diversity_tokens: int = field(
        default=256,
        metadata=_help(
            "Diversity is measured on the first N tokens of each response, both during selection (which "
            "therefore generates only N tokens per sample) and in the per-step `diversity` metric."
        ),
    )
    diversity_groups: int = field(
        default=16,
        metadata=_help(
            "The per-step `diversity` metric uses the step's first N groups (prompts are shuffled, so a "
            "random subset; the edit distances cost O(G^2 N^2) per group); 0 = every group."
        ),
    )

    def __post_init__(self) -> None:
        _require(
            self.policy in ("constant", "staged", "diversity"),
            f"temperature.policy must be constant, staged or diversity, got {self.policy!r}.",
        )
        _require(
            0.0 < self.value <= 4.0,
            f"temperature.value must be in (0, 4], got {self.value}; MicroCoder's main runs use 1.2.",
        )
        starts = [s.start_step for s in self.stages]
        _require(
            starts == sorted(starts) and len(set(starts)) == len(starts),
            f"temperature.stages must have strictly increasing start_step values, got {starts}.",
        )
        if self.policy == "staged":
            _require(
                bool(self.stages) and self.stages[0].start_step <= 1,
                "temperature.policy 'staged' needs temperature.stages whose first stage starts at step 0 "
                "or 1, "
                "e.g. [{start_step: 0, value: 0.6}, {start_step: 140, value: 1.8}].",
            )
        if self.policy == "diversity":
            _require(
                len(self.candidates) >= 1 and list(self.candidates) == sorted(set(self.candidates)),
                f"temperature.candidates must be distinct and ascending, got {list(self.candidates)}.",
            )
            _require(
                all(0.0 < t <= 4.0 for t in self.candidates),
                f"temperature.candidates must lie in (0, 4], got {list(self.candidates)}.",
            )
        _require(
            0.0 <= self.target_diversity <= 1.0,
            "temperature.target_diversity is a normalized edit distance in [0, 1], got "
            f"{self.target_diversity}.",
        )
        _require(self.selection_prompts >= 1, "temperature.selection_prompts must be >= 1.")
        _require(self.diversity_tokens >= 1, "temperature.diversity_tokens must be >= 1.")
        _require(self.diversity_groups >= 0, "temperature.diversity_groups must be >= 0 (0 = every group).")


@dataclass(frozen=True)
class MaskConfig:
    policy: Literal["conditional", "all", "none"] = field(
        default="conditional",
        metadata=_help(
            "Truncation mask: 'conditional' (MicroCoder: mask a truncated response only when its answer is "
            "not judged wrong, its tail is not a repetition loop and a Bernoulli(mask.probability) draw "
            "succeeds), 'all' (mask every truncated response: TRL / DeepCoder overlong filtering), 'none'."
        ),
    )
    probability: float = field(
        default=0.1,
        metadata=_help(
            "p of the Bernoulli draw of the conditional mask. 0.1 is the paper's setting; 0.3 "
            "already behaves like masking all."
        ),
    )
    repeat_window: int = field(
        default=128,
        metadata=_help(
            "m: a truncated response whose last m tokens equal the m before them is a repetition "
            "loop and keeps its negative signal (never masked)."
        ),
    )
    ngram_size: int = field(
        default=4,
        metadata=_help(
            "n of the n-gram repetition test on the last 2*m tokens (catches loops whose period "
            "does not divide m)."
        ),
    )
    ngram_repeat_threshold: float = field(
        default=0.5,
        metadata=_help("A tail whose share of repeated n-grams reaches this value counts as a loop."),
    )

    def __post_init__(self) -> None:
        _require(
            self.policy in ("conditional", "all", "none"),
            f"mask.policy must be conditional, all or none, got {self.policy!r}.",
        )
        _require(
            0.0 <= self.probability <= 1.0,
            f"mask.probability is a probability in [0, 1], got {self.probability}; the paper uses 0.1.",
        )
        _require(self.repeat_window >= 1, f"mask.repeat_window must be >= 1 token, got {self.repeat_window}.")
        _require(self.ngram_size >= 1, f"mask.ngram_size must be >= 1, got {self.ngram_size}.")
        _require(
            0.0 < self.ngram_repeat_threshold <= 1.0,
            f"mask.ngram_repeat_threshold must be in (0, 1], got {self.ngram_repeat_threshold}.",
        )


@dataclass(frozen=True)
class ClipConfig:
    eps_low: float = field(
        default=0.2,
        metadata=_help("Lower clip: the ratio is clipped at 1 - eps_low for negative advantages."),
    )
    eps_high: float = field(
        default=0.28,
        metadata=_help(
            "Upper clip ('clip-higher'): the ratio is clipped at 1 + eps_high for positive "
            "advantages. DAPO's 0.28 is the default; a value above eps_low sustains diversity."
        ),
    )

    def __post_init__(self) -> None:
        _require(
            0.0 < self.eps_low < 1.0, f"clip.eps_low must be in (0, 1), got {self.eps_low}; default 0.2."
        )
        _require(
            0.0 < self.eps_high <= 10.0,
            f"clip.eps_high must be in (0, 10], got {self.eps_high}; default 0.28.",
        )


@dataclass(frozen=True)
class RewardConfig:
    checker: Literal["problem", "lenient", "strict"] = field(
        default="problem",
        metadata=_help(
            "Output comparison of the judge: 'problem' uses each problem's own checker (lenient fallback "
            "chain unless the problem says otherwise), 'lenient' forces the MicroCoder chain, 'strict' the "
            "LiveCodeBench-style baseline (only for comparisons: its false negatives slow learning)."
        ),
    )
    mode: Literal["pass_fail", "fraction"] = field(
        default="pass_fail",
        metadata=_help(
            "'pass_fail': 1 when every test passes, else 0; 'fraction': the share of tests passed."
        ),
    )
    workers: int | None = field(
        default=None, metadata=_help("Parallel judge processes; empty = the evaluator's default (CPU count).")
    )
    max_tests: int | None = field(
        default=None,
        metadata=_help(
            "Judge at most this many tests per problem (hundreds of tests stall training); empty = all."
        ),
    )

    def __post_init__(self) -> None:
        _require(
            self.checker in ("problem", "lenient", "strict"),
            f"reward.checker must be problem, lenient or strict, got {self.checker!r}.",
        )
        _require(
            self.mode in ("pass_fail", "fraction"),
            f"reward.mode must be pass_fail or fraction, got {self.mode!r}.",
        )
        _require(self.workers is None or self.workers >= 1, "reward.workers must be >= 1 or empty.")
        _require(self.max_tests is None or self.max_tests >= 1, "reward.max_tests must be >= 1 or empty.")


@dataclass(frozen=True)
class DatasetConfig:
    release: str = field(
        default="",
        metadata=_help("Path of a dataset release JSONL file (one exported problem per line)."),
    )
    max_problems: int | None = field(
        default=None, metadata=_help("Use only the first N problems of the release; empty = all.")
    )

    def __post_init__(self) -> None:
        _require(
            self.max_problems is None or self.max_problems >= 1, "dataset.max_problems must be >= 1 or empty."
        )


@dataclass(frozen=True)
class RolloutConfig:
    engine: Literal["transformers", "vllm"] = field(
        default="transformers",
        metadata=_help(
            "Rollout engine: 'transformers' (CPU or GPU, batched KV-cache sampling) or 'vllm' "
            "(GPU only; the policy weights are synced into it after each update)."
        ),
    )
    batch_size: int = field(
        default=0,
        metadata=_help(
            "Sequences generated together by the transformers engine; 0 = the whole step at once."
        ),
    )
    gpu_memory_utilization: float = field(
        default=0.35,
        metadata=_help(
            "vLLM: share of GPU memory for its weights and KV cache (it shares the GPU with training)."
        ),
    )
    enforce_eager: bool = field(
        default=False, metadata=_help("vLLM: disable CUDA graphs (slower, less memory).")
    )

    def __post_init__(self) -> None:
        _require(
            self.engine in ("transformers", "vllm"),
            f"rollout.engine must be transformers or vllm, got {self.engine!r}.",
        )
        _require(self.batch_size >= 0, "rollout.batch_size must be >= 0 (0 = all at once).")
        _require(
            0.05 <= self.gpu_memory_utilization <= 0.95,
            f"rollout.gpu_memory_utilization must be in [0.05, 0.95], got {self.gpu_memory_utilization}.",
        )


@dataclass(frozen=True)
class PromptConfig:
    chat_template: Literal["auto", "on", "off"] = field(
        default="auto",
        metadata=_help("Wrap the problem in the tokenizer's chat template: 'auto' = when it has one."),
    )
    system_prompt: str = field(default="", metadata=_help("Optional system message (chat template only)."))
    enable_thinking: bool | None = field(
        default=None,
        metadata=_help("Passed to Qwen3 chat templates as enable_thinking; empty = template default."),
    )

    def __post_init__(self) -> None:
        _require(self.chat_template in ("auto", "on", "off"), "prompt.chat_template must be auto, on or off.")


@dataclass(frozen=True)
class GRPOConfig:
    """A full MicroCoder-GRPO run. Loaded by ``load_config``; printed and stored with the run."""

    model: str = field(
        default="Qwen/Qwen3-1.7B",
        metadata=_help("Policy model: a Hugging Face id or a local directory loadable by from_pretrained."),
    )
    dataset: DatasetConfig = field(default_factory=DatasetConfig, metadata=_help("Training problems."))
    output_dir: str = field(
        default="runs/grpo",
        metadata=_help("Where metrics.jsonl, samples.jsonl, config.yaml and checkpoints go."),
    )
    max_steps: int = field(default=300, metadata=_help("Training steps (one rollout batch each)."))
    group_size: int = field(
        default=8, metadata=_help("G: responses sampled per prompt; advantages are group-relative.")
    )
    prompts_per_step: int = field(
        default=64, metadata=_help("Prompts per rollout batch. 64 was best of 32 / 64 / 128 in MicroCoder.")
    )
    updates_per_rollout: int = field(
        default=1,
        metadata=_help(
            "Optimizer updates per rollout batch: the batch is split into this many minibatches of "
            "whole groups. 1 = fully on-policy; more updates reuse samples (off-policy)."
        ),
    )
    micro_batch_size: int = field(
        default=4, metadata=_help("Sequences per forward/backward pass (gradient accumulation); memory only.")
    )
    learning_rate: float = field(default=1e-6, metadata=_help("AdamW learning rate."))
    lr_warmup_steps: int = field(
        default=0, metadata=_help("Linear learning-rate warm-up over this many steps.")
    )
    weight_decay: float = field(default=0.0, metadata=_help("AdamW weight decay."))
    max_grad_norm: float = field(default=1.0, metadata=_help("Gradient clipping norm; 0 disables clipping."))
    max_response_length: int = field(
        default=8192,
        metadata=_help(
            "L_max: response token cap. Larger caps give higher final accuracy; starting small does "
            "lasting damage."
        ),
    )
    max_prompt_length: int = field(
        default=2048, metadata=_help("Prompts longer than this (in tokens) are left out of the dataset.")
    )
    kl_coef: float = field(
        default=0.0,
        metadata=_help(
            "beta of the k3 KL penalty against the initial policy. 0 (MicroCoder) loads no reference "
            "model; KL shrinks diversity and gives rise-then-fall accuracy."
        ),
    )
    clip: ClipConfig = field(default_factory=ClipConfig, metadata=_help("Asymmetric PPO clip range."))
    temperature: TemperatureConfig = field(
        default_factory=TemperatureConfig, metadata=_help("Temperature policy.")
    )
    mask: MaskConfig = field(default_factory=MaskConfig, metadata=_help("Truncation mask."))
    reward: RewardConfig = field(default_factory=RewardConfig, metadata=_help("Evaluator rewards."))
    rollout: RolloutConfig = field(default_factory=RolloutConfig, metadata=_help("Rollout engine."))
    prompt: PromptConfig = field(default_factory=PromptConfig, metadata=_help("Prompt rendering."))
    skip_zero_advantage: bool = field(
        default=True,
        metadata=_help(
            "Leave samples whose advantage is 0 out of the update's forward pass when kl_coef is 0: "
            "loss and gradient are unchanged (they still count in the token normalizer), only time "
            "is saved."
        ),
    )
    seed: int = field(
        default=0, metadata=_help("Seed of prompt order, sampling, mask draws and initialization.")
    )
    device: str = field(
        default="auto", metadata=_help("'auto' (cuda when available), 'cpu', 'cuda' or 'cuda:N'.")
    )
    dtype: Literal["auto", "float32", "bfloat16", "float16"] = field(
        default="auto",
        metadata=_help(
            "Dtype of the trained weights and optimizer state: 'auto' = float32 (at RL learning rates "
            "of ~1e-6, bfloat16 weights round most updates away)."
        ),
    )
    mixed_precision: Literal["auto", "no", "bf16"] = field(
        default="auto",
        metadata=_help(
            "Autocast forward passes: 'auto' = bfloat16 on CUDA, none on CPU; log-probabilities are "
            "always computed in float32."
        ),
    )
    gradient_checkpointing: bool = field(
        default=False, metadata=_help("Recompute activations to save memory.")
    )
    cpu_threads: int = field(
        default=0,
        metadata=_help(
            "torch intra-op threads (CPU work); 0 = torch's default. Tiny models run fastest with 1."
        ),
    )
    checkpoint_interval: int = field(
        default=50, metadata=_help("Save a checkpoint every N steps (and at the end); 0 = only at the end.")
    )
    checkpoint_keep: int = field(default=2, metadata=_help("Keep only the newest N checkpoints."))
    resume: bool = field(
        default=True, metadata=_help("Resume from the newest checkpoint in output_dir when there is one.")
    )
    samples_per_step: int = field(
        default=16,
        metadata=_help("Rows of the per-step sample table (whole groups first); -1 = every sample."),
    )

    def __post_init__(self) -> None:
        _require(bool(self.model.strip()), "model must be a Hugging Face id or a local model directory.")
        _require(self.max_steps >= 1, f"max_steps must be >= 1, got {self.max_steps}.")
        _require(
            self.group_size >= 2,
            f"group_size must be >= 2 (advantages compare a group's responses), got {self.group_size}.",
        )
        _require(self.prompts_per_step >= 1, f"prompts_per_step must be >= 1, got {self.prompts_per_step}.")
        _require(
            self.updates_per_rollout >= 1,
            f"updates_per_rollout must be >= 1, got {self.updates_per_rollout}.",
        )
        _require(
            self.prompts_per_step % self.updates_per_rollout == 0,
            f"prompts_per_step ({self.prompts_per_step}) must be a multiple of updates_per_rollout "
            f"({self.updates_per_rollout}) so every minibatch holds whole groups.",
        )
        _require(self.micro_batch_size >= 1, f"micro_batch_size must be >= 1, got {self.micro_batch_size}.")
        _require(
            0.0 < self.learning_rate < 1.0,
            f"learning_rate must be in (0, 1), got {self.learning_rate}; try 1e-6.",
        )
        _require(self.lr_warmup_steps >= 0, "lr_warmup_steps must be >= 0.")
        _require(self.weight_decay >= 0.0, "weight_decay must be >= 0.")
        _require(self.max_grad_norm >= 0.0, "max_grad_norm must be >= 0 (0 disables clipping).")
        _require(
            self.max_response_length >= 1,
            f"max_response_length must be >= 1, got {self.max_response_length}.",
        )
        _require(
            self.max_prompt_length >= 1, f"max_prompt_length must be >= 1, got {self.max_prompt_length}."
        )
        _require(self.kl_coef >= 0.0, f"kl_coef must be >= 0, got {self.kl_coef}; MicroCoder uses 0.")
        _require(self.checkpoint_interval >= 0, "checkpoint_interval must be >= 0 (0 = only at the end).")
        _require(self.checkpoint_keep >= 1, "checkpoint_keep must be >= 1.")
        _require(self.cpu_threads >= 0, "cpu_threads must be >= 0 (0 = torch's default).")
        _require(self.samples_per_step >= -1, "samples_per_step must be -1 (all) or >= 0.")
        _require(
            self.device == "auto" or self.device == "cpu" or self.device.startswith("cuda"),
            f"device must be auto, cpu, cuda or cuda:N, got {self.device!r}.",
        )
        _require(self.mixed_precision in ("auto", "no", "bf16"), "mixed_precision must be auto, no or bf16.")
        _require(
            self.dtype in ("auto", "float32", "bfloat16", "float16"),
            f"dtype must be auto, float32, bfloat16 or float16, got {self.dtype!r}.",
        )
        if self.rollout.engine == "vllm":
            _require(self.device != "cpu", "rollout.engine 'vllm' needs a GPU: set device to auto or cuda.")

    def to_dict(self) -> dict[str, Any]:
        """The resolved config as plain nested dicts/lists (YAML- and JSON-serializable)."""
        return _to_plain(self)

    def to_yaml(self) -> str:
        return yaml.safe_dump(self.to_dict(), sort_keys=False)

    def replace(self, **changes: Any) -> GRPOConfig:
        """A copy with dotted-path changes applied, e.g. ``replace(**{"mask.probability": 0.2})``."""
        return config_from_dict(_apply_overrides(self.to_dict(), changes))


# --- (de)serialization -------------------------------------------------------------------------


def _to_plain(value: Any) -> Any:
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: _to_plain(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, tuple | list):
        return [_to_plain(v) for v in value]
    return value


def _type_name(tp: Any) -> str:
    origin = typing.get_origin(tp)
    if origin is Literal:
        return " | ".join(repr(a) for a in typing.get_args(tp))
    if origin in (typing.Union, types.UnionType):
        return " | ".join("null" if a is type(None) else _type_name(a) for a in typing.get_args(tp))
    if origin is tuple:
        return f"list[{_type_name(typing.get_args(tp)[0])}]"
    if dataclasses.is_dataclass(tp):
        return "section"
    return getattr(tp, "__name__", str(tp))


def _coerce(tp: Any, value: Any, path: str) -> Any:
    """Convert a YAML value to the field type ``tp`` or raise a ConfigError naming ``path``."""
    origin = typing.get_origin(tp)
    if dataclasses.is_dataclass(tp) and isinstance(tp, type):
        if isinstance(value, tp):
            return value
        if (
            isinstance(tp, type)
            and tp is TemperatureStage
            and isinstance(value, list | tuple)
            and len(value) == 2
        ):
            value = {"start_step": value[0], "value": value[1]}
        if not isinstance(value, Mapping):
            raise ConfigError(f"{path} must be a mapping of fields, got {value!r}.")
        return _build(tp, value, path)
    if origin in (typing.Union, types.UnionType):
        args = typing.get_args(tp)
        if value is None and type(None) in args:
            return None
        non_none = [a for a in args if a is not type(None)]
        errors = []
        for a in non_none:
            try:
                return _coerce(a, value, path)
            except ConfigError as exc:
                errors.append(str(exc))
        raise ConfigError(errors[0] if errors else f"{path}: invalid value {value!r}.")
    if origin is Literal:
        allowed = typing.get_args(tp)
        if value not in allowed:
            raise ConfigError(f"{path} must be one of {', '.join(map(repr, allowed))}, got {value!r}.")
        return value
    if origin is tuple:
        (item_tp, _ellipsis) = typing.get_args(tp)
        if not isinstance(value, list | tuple):
            raise ConfigError(f"{path} must be a list, got {value!r}.")
        return tuple(_coerce(item_tp, v, f"{path}[{i}]") for i, v in enumerate(value))
    if tp is bool:
        if not isinstance(value, bool):
            raise ConfigError(f"{path} must be true or false, got {value!r}.")
        return value
    if tp is int:
        if isinstance(value, bool) or not isinstance(value, int):
            raise ConfigError(f"{path} must be an integer, got {value!r}.")
        return value
    if tp is float:
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise ConfigError(f"{path} must be a number, got {value!r}.")
        return float(value)
    if tp is str:
        if not isinstance(value, str):
            raise ConfigError(f"{path} must be a string, got {value!r}.")
        return value
    return value


def _build(cls: type, data: Mapping[str, Any], prefix: str) -> Any:
    hints = typing.get_type_hints(cls)
    names = [f.name for f in dataclasses.fields(cls)]
    unknown = [k for k in data if k not in names]
    if unknown:
        where = f"{prefix}." if prefix else ""
        raise ConfigError(
            f"unknown field(s) {', '.join(where + k for k in unknown)}; known: {', '.join(names)}."
        )
    kwargs = {k: _coerce(hints[k], v, f"{prefix}.{k}" if prefix else k) for k, v in data.items()}
    return cls(**kwargs)


def config_from_dict(data: Mapping[str, Any]) -> GRPOConfig:
    """Build a validated GRPOConfig from nested plain data (as read from YAML)."""
    return typing.cast(GRPOConfig, _build(GRPOConfig, data, ""))


def _apply_overrides(data: dict[str, Any], overrides: Mapping[str, Any]) -> dict[str, Any]:
    out = _deep_copy(data)
    for dotted, value in overrides.items():
        node = out
        parts = dotted.split(".")
        for part in parts[:-1]:
            child = node.get(part)
            if child is None:
                child = {}
                node[part] = child
            if not isinstance(child, dict):
                raise ConfigError(f"override {dotted!r}: {part!r} is not a section.")
            node = child
        node[parts[-1]] = value
    return out


def _deep_copy(data: Any) -> Any:
    if isinstance(data, dict):
        return {k: _deep_copy(v) for k, v in data.items()}
    if isinstance(data, list):
        return [_deep_copy(v) for v in data]
    return data


def parse_override(text: str) -> tuple[str, Any]:
    """``"mask.probability=0.2"`` -> ``("mask.probability", 0.2)``; the value is parsed as YAML."""
    if "=" not in text:
        raise ConfigError(f"override {text!r} must look like section.field=value.")
    key, raw = text.split("=", 1)
    return key.strip(), yaml.safe_load(raw) if raw.strip() else ""


def load_config(
    path: str | Path | None = None, overrides: Iterable[str] | Mapping[str, Any] = ()
) -> GRPOConfig:
    """Read a YAML config (or start from the defaults when ``path`` is None) and apply overrides.

    ``overrides`` are ``"dotted.path=value"`` strings (values parsed as YAML) or a mapping of dotted
    paths to values. Unknown fields and invalid values raise ConfigError with a fix-it message.
    """
    data: dict[str, Any] = {}
    if path is not None:
        loaded = yaml.safe_load(Path(path).read_text(encoding="utf-8"))
        if loaded is not None and not isinstance(loaded, dict):
            raise ConfigError(f"{path}: the top level of a config file must be a mapping.")
        data = loaded or {}
    items = overrides.items() if isinstance(overrides, Mapping) else (parse_override(o) for o in overrides)
    return config_from_dict(_apply_overrides(data, dict(items)))


# --- field catalogue for the UI ------------------------------------------------------------------


@dataclass(frozen=True)
class FieldInfo:
    """One configurable field: ``path`` is dotted (``mask.probability``)."""

    path: str
    type: str
    default: Any
    help: str


def describe_fields(cls: type = GRPOConfig, prefix: str = "") -> list[FieldInfo]:
    """Every leaf field of the config tree with its dotted path, type name, default and help text."""
    hints = typing.get_type_hints(cls)
    out: list[FieldInfo] = []
    for f in dataclasses.fields(cls):
        path = f"{prefix}{f.name}"
        tp = hints[f.name]
        if dataclasses.is_dataclass(tp) and isinstance(tp, type) and tp is not TemperatureStage:
            out.extend(describe_fields(tp, prefix=f"{path}."))
            continue
        if f.default is not dataclasses.MISSING:
            default = f.default
        elif f.default_factory is not dataclasses.MISSING:
            default = f.default_factory()
        else:
            default = None
        out.append(
            FieldInfo(
                path=path, type=_type_name(tp), default=_to_plain(default), help=f.metadata.get("help", "")
            )
        )
    return out


def field_paths() -> list[str]:
    """Dotted paths of every leaf field (``describe_fields`` without the details)."""
    return [f.path for f in describe_fields()]


def get_field(config: Any, path: str) -> Any:
    """The value at a dotted path of a config (``get_field(cfg, "clip.eps_high")``)."""
    value = config
    for part in path.split("."):
        value = getattr(value, part)
    return value


__all__: Sequence[str] = (
    "ClipConfig",
    "ConfigError",
    "DatasetConfig",
    "FieldInfo",
    "GRPOConfig",
    "MaskConfig",
    "PromptConfig",
    "RewardConfig",
    "RolloutConfig",
    "TemperatureConfig",
    "TemperatureStage",
    "config_from_dict",
    "describe_fields",
    "field_paths",
    "get_field",
    "load_config",
    "parse_override",
)
