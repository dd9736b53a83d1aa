"""The whole MicroCoder-GRPO run configuration: ``GRPOConfig``, the tree of ``training.config_sections``.

Defaults follow ../shared/INSIGHTS.md (see ``training.config``). Loading from YAML and dotted overrides
live in ``training.config``, which re-exports ``GRPOConfig`` (import it from there).

This module imports nothing from Django.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any, Literal

import yaml

from training.config_memory import MemoryConfig
from training.config_run_sections import DatasetConfig, EvalConfig, PromptConfig, RolloutConfig
from training.config_sections import (
    ClipConfig,
    MaskConfig,
    RewardConfig,
    TemperatureConfig,
    _help,
    _require,
)


@dataclass(frozen=True)
class DynamicSamplingConfig:
    """DAPO's dynamic sampling (arXiv 2503.14476, Sec. 3.2): groups whose rewards are all equal carry no
    gradient; drop them and sample more prompts until the batch holds ``prompts_per_step`` groups."""

    enabled: bool = field(
        default=False,
        metadata=_help(
            "Drop groups whose judged rewards (before overlong shaping) are all equal (all right or all "
            "wrong) and sample more prompts until the batch is full again (DAPO, Sec. 3.2). Off for "
            "MicroCoder and GRPO, on in the 'dapo' preset."
        ),
    )
    max_rounds: int = field(
        default=4,
        metadata=_help(
            "Extra sampling rounds per step at most; when the batch is still short after them the step "
            "trains on the groups it has (dynamic_sampling/batch_fill < 1). DAPO's recipe in verl allows "
            "up to 10 generation batches of 3x the train batch; each round here samples about as many "
            "prompts as the kept share so far says will fill the batch."
        ),
    )

    def __post_init__(self) -> None:
        _require(
            self.max_rounds >= 0,
            f"dynamic_sampling.max_rounds must be >= 0 (0 = drop without refilling), got {self.max_rounds}.",
        )


@dataclass(frozen=True)
class GRPOConfig:
    """A full MicroCoder-GRPO run. Loaded by ``load_config``; printed and stored with the run."""

    preset: str = field(
        default="",
        metadata=_help(
            "The preset this config started from (training.presets: grpo, dapo, microcoder); "
            "informational, its values are already applied. Empty = the defaults (MicroCoder-GRPO's)."
        ),
    )
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
        default=8,
        metadata=_help(
            "G: responses sampled per prompt; advantages are group-relative. The MicroCoder papers do not "
            "print G; DAPO sampled 16 (arXiv 2503.14476, Sec. 4.1), DeepSeekMath's GRPO 64 (arXiv "
            "2402.03300, Sec. 4.2); 8 keeps the rollout affordable."
        ),
    )
    prompts_per_step: int = field(
        default=64,
        metadata=_help(
            "Prompts per rollout batch. 64 was best of 32 / 64 / 128 in MicroCoder (arXiv 2603.07777)."
        ),
    )
    minibatch_prompts: int = field(
        default=16,
        metadata=_help(
            "Prompts (whole groups of group_size responses) per optimizer update: a fixed minibatch, "
            "as in DAPO (arXiv 2503.14476, Sec. 4.1: mini-batches of 512 responses = 32 prompts of 16 "
            "from a 512-prompt rollout, 16 updates per rollout step). "
            "Each rollout batch of prompts_per_step prompts gives prompts_per_step / minibatch_prompts "
            "updates: the first is on-policy, the later ones are off-policy against pi_old (the policy "
            "that sampled), which is where the clip acts. 16 of 64 = 4 updates (MicroCoder does not "
            "print its minibatch; 4 is the most the insight checks accept without warning). Set it to "
            "prompts_per_step for one on-policy update per rollout (ratio exactly 1: the clip never acts)."
        ),
    )
    micro_batch_size: int = field(
        default=4, metadata=_help("Sequences per forward/backward pass (gradient accumulation); memory only.")
    )
    loss_aggregation: Literal["token", "sequence"] = field(
        default="token",
        metadata=_help(
            "'token': the sum of the per-token losses of a minibatch divided by its loss-token count "
            "(DAPO, arXiv 2503.14476, Sec. 3.3, used by MicroCoder-GRPO); 'sequence': each response's "
            "token mean, then the mean over responses (the original GRPO, DeepSeekMath arXiv 2402.03300, "
            "eq. 3)."
        ),
    )
    learning_rate: float = field(
        default=1e-6,
        metadata=_help("Peak AdamW learning rate; 1e-6 in DAPO (Sec. 4.1) and the verl recipes."),
    )
    lr_schedule: Literal["constant", "linear", "cosine"] = field(
        default="constant",
        metadata=_help(
            "Learning rate after warm-up: 'constant' (DAPO, Sec. 4.1: constant 1e-6), 'linear' decay or "
            "'cosine' decay from learning_rate to learning_rate * lr_min_ratio at max_steps "
            "(training.schedules)."
        ),
    )
    lr_warmup_steps: int = field(
        default=0,
        metadata=_help(
            "Linear warm-up from 0 over this many steps (DAPO used 20 rollout steps, Sec. 4.1; the "
            "'dapo' preset sets 20)."
        ),
    )
    lr_min_ratio: float = field(
        default=0.0,
        metadata=_help(
            "Final learning rate of the 'linear' and 'cosine' schedules, as a share of learning_rate."
        ),
    )
    weight_decay: float = field(default=0.0, metadata=_help("AdamW weight decay."))
    max_grad_norm: float = field(default=1.0, metadata=_help("Gradient clipping norm; 0 disables clipping."))
    max_response_length: int = field(
        default=8192,
        metadata=_help(
            "L_max: response token cap. 8K in most of MicroCoder's studies (4K-16K compared, arXiv "
            "2603.07777): larger caps give higher final accuracy; starting small does lasting damage."
        ),
    )
    max_prompt_length: int = field(
        default=2048, metadata=_help("Prompts longer than this (in tokens) are left out of the dataset.")
    )
    kl_coef: float = field(
        default=0.0,
        metadata=_help(
            "beta of the k3 KL penalty against the initial policy (the reference model). 0 (MicroCoder, "
            "arXiv 2603.07777, and DAPO) loads no reference model: KL shrinks diversity and gives "
            "rise-then-fall accuracy. The original GRPO used 0.04 (DeepSeekMath, Sec. 4.2)."
        ),
    )
    clip: ClipConfig = field(
        default_factory=ClipConfig, metadata=_help("PPO clip range (asymmetric by default).")
    )
    temperature: TemperatureConfig = field(
        default_factory=TemperatureConfig, metadata=_help("Temperature policy.")
    )
    mask: MaskConfig = field(default_factory=MaskConfig, metadata=_help("Truncation mask."))
    reward: RewardConfig = field(default_factory=RewardConfig, metadata=_help("Evaluator rewards."))
    dynamic_sampling: DynamicSamplingConfig = field(
        default_factory=DynamicSamplingConfig, metadata=_help("DAPO's dynamic sampling (off by default).")
    )
    rollout: RolloutConfig = field(default_factory=RolloutConfig, metadata=_help("Rollout engine."))
    prompt: PromptConfig = field(default_factory=PromptConfig, metadata=_help("Prompt rendering."))
    eval: EvalConfig = field(
        default_factory=EvalConfig, metadata=_help("Held-out evaluation during training (optional).")
    )
    memory: MemoryConfig = field(
        default_factory=MemoryConfig,
        metadata=_help(
            "Fitting long responses and large models: automatic gradient checkpointing, token budgets."
        ),
    )
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
        default=False,
        metadata=_help(
            "Force gradient checkpointing (recompute activations to save memory) at any model size; "
            "off, it still turns on by itself for models of memory.checkpointing_min_params or more."
        ),
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
            self.minibatch_prompts >= 1,
            f"minibatch_prompts must be >= 1 prompt per optimizer update, got {self.minibatch_prompts}.",
        )
        _require(
            self.minibatch_prompts <= self.prompts_per_step
            and self.prompts_per_step % self.minibatch_prompts == 0,
            f"prompts_per_step ({self.prompts_per_step}) must be a multiple of minibatch_prompts "
            f"({self.minibatch_prompts}): each rollout batch is split into prompts_per_step / "
            "minibatch_prompts optimizer updates of whole groups. Set minibatch_prompts to a divisor of "
            f"prompts_per_step (e.g. {_divisor_near(self.prompts_per_step, self.minibatch_prompts)}), or "
            "to prompts_per_step for a single on-policy update.",
        )
        _require(self.micro_batch_size >= 1, f"micro_batch_size must be >= 1, got {self.micro_batch_size}.")
        _require(
            0.0 < self.learning_rate < 1.0,
            f"learning_rate must be in (0, 1), got {self.learning_rate}; try 1e-6.",
        )
        _require(self.lr_warmup_steps >= 0, "lr_warmup_steps must be >= 0.")
        _require(
            0.0 <= self.lr_min_ratio <= 1.0,
            f"lr_min_ratio is a share of learning_rate in [0, 1], got {self.lr_min_ratio}.",
        )
        _require(
            self.lr_schedule in ("constant", "linear", "cosine"),
            f"lr_schedule must be constant, linear or cosine, got {self.lr_schedule!r}.",
        )
        _require(
            self.loss_aggregation in ("token", "sequence"),
            f"loss_aggregation must be token or sequence, got {self.loss_aggregation!r}.",
        )
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

    @property
    def updates_per_rollout(self) -> int:
        """Optimizer updates per rollout batch: prompts_per_step / minibatch_prompts."""
        return self.prompts_per_step // self.minibatch_prompts

    def to_dict(self) -> dict[str, Any]:
        """The resolved config as plain nested dicts/lists (YAML- and JSON-serializable)."""
        return _to_plain(self)

    def to_yaml(self) -> str:
        return yaml.safe_dump(self.to_dict(), sort_keys=False)

    def replace(self, **changes: Any) -> GRPOConfig:
        """A copy with dotted-path changes applied, e.g. ``replace(**{"mask.probability": 0.2})``."""
        from training.config import _apply_overrides, config_from_dict  # loading builds on this schema

        return config_from_dict(_apply_overrides(self.to_dict(), changes))


def _divisor_near(total: int, wanted: int) -> int:
    """The divisor of ``total`` closest to ``wanted`` (the smaller on ties): a fix-it suggestion."""
    return min((d for d in range(1, total + 1) if total % d == 0), key=lambda d: (abs(d - wanted), d))


def _to_plain(value: Any) -> Any:
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: _to_plain(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, tuple | list):
        return [_to_plain(v) for v in value]
    return value


__all__ = ["DynamicSamplingConfig", "GRPOConfig"]
