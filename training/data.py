"""Training problems: read a dataset release, render prompts, choose each step's prompts.

A release is a JSONL file, one ``ProblemRecord.to_export_dict()`` per line (curation/records.py).
Prompts separate LeetCode-style (function) from OJ-style (stdin/stdout) problems with explicit
format instructions, as MicroCoder's processing does. The order of prompts is a deterministic
function of (seed, step), so a resumed run sees exactly the prompts it would have seen.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from curation.records import ProblemRecord
from training.config import PromptConfig

STDIN_INSTRUCTION = (
    "Write a Python 3 program that reads the input from standard input and writes the answer to standard "
    "output. Return the complete program in a single ```python code block."
)
CALL_INSTRUCTION = (
    "Complete the Python 3 function `{fn_name}` of class `Solution` below. Return the complete class in a "
    "single ```python code block."
)


def load_release(path: str | Path, *, max_problems: int | None = None) -> list[ProblemRecord]:
    """Problems of a release JSONL file, in file order (blank lines ignored)."""
    p = Path(path)
    if not p.is_file():
        raise FileNotFoundError(
            f"dataset.release {str(p)!r} is not a file: export a release as JSONL and point "
            "dataset.release at it"
        )
    problems: list[ProblemRecord] = []
    with p.open(encoding="utf-8") as fh:
        for lineno, line in enumerate(fh, 1):
            if not line.strip():
                continue
            try:
                problems.append(ProblemRecord.from_export_dict(json.loads(line)))
            except (json.JSONDecodeError, TypeError) as exc:
                raise ValueError(f"{p}:{lineno}: not a problem export row ({exc})") from exc
            if max_problems is not None and len(problems) >= max_problems:
                break
    if not problems:
        raise ValueError(f"dataset.release {str(p)!r} holds no problems")
    return problems


def problem_id(problem: ProblemRecord) -> str:
    return f"{problem.platform}/{problem.external_id}"


def prompt_text(problem: ProblemRecord) -> str:
    """The user message for a problem: statement, format instruction and (call mode) the starter code."""
    parts = [problem.statement.strip()]
    if problem.io_mode == "call":
        parts.append(CALL_INSTRUCTION.format(fn_name=problem.fn_name or "solve"))
        if problem.starter_code.strip():
            parts.append(f"```python\n{problem.starter_code.rstrip()}\n```")
    else:
        parts.append(STDIN_INSTRUCTION)
    return "\n\n".join(parts)


def render_prompt(tokenizer: Any, text: str, config: PromptConfig) -> str:
    """The prompt string fed to the model: chat-templated when configured and available."""
    has_template = bool(getattr(tokenizer, "chat_template", None))
    use = config.chat_template == "on" or (config.chat_template == "auto" and has_template)
    if not use:
        return text
    if not has_template:
        raise ValueError("prompt.chat_template is 'on' but the tokenizer has no chat template")
    messages = []
    if config.system_prompt:
        messages.append({"role": "system", "content": config.system_prompt})
    messages.append({"role": "user", "content": text})
    kwargs: dict[str, Any] = {}
    if config.enable_thinking is not None:
        kwargs["enable_thinking"] = config.enable_thinking
    return str(tokenizer.apply_chat_template(messages, tokenize=False, add_generation_prompt=True, **kwargs))


def encode_prompts(
    tokenizer: Any, problems: Sequence[ProblemRecord], config: PromptConfig, max_prompt_length: int
) -> tuple[list[ProblemRecord], list[list[int]], list[str], int]:
    """Tokenize every problem's prompt; problems over ``max_prompt_length`` tokens are left out.

    Returns (kept problems, their prompt token ids, their prompt strings, number left out).
    """
    kept: list[ProblemRecord] = []
    ids: list[list[int]] = []
    texts: list[str] = []
    dropped = 0
    for problem in problems:
        text = render_prompt(tokenizer, prompt_text(problem), config)
        toks = list(tokenizer(text, add_special_tokens=False)["input_ids"])
        if len(toks) > max_prompt_length:
            dropped += 1
            continue
        kept.append(problem)
        ids.append(toks)
        texts.append(text)
    if not kept:
        raise ValueError(f"every prompt is longer than max_prompt_length={max_prompt_length}: raise it")
    return kept, ids, texts, dropped


def step_prompt_indices(n_problems: int, prompts_per_step: int, step: int, seed: int) -> list[int]:
    """Indices of the problems used at ``step`` (1-based): consecutive slices of per-epoch permutations.

    Epoch e is ``default_rng([seed, e]).permutation(n)``; step s takes positions
    ``[(s-1)*P, s*P)`` of the concatenated epochs. Stateless, so resuming needs no sampler state.
    """
    if n_problems <= 0:
        raise ValueError("no problems to sample from")
    out: list[int] = []
    start = (step - 1) * prompts_per_step
    cache: dict[int, np.ndarray] = {}
    for pos in range(start, start + prompts_per_step):
        epoch, offset = divmod(pos, n_problems)
        if epoch not in cache:
            cache[epoch] = np.random.default_rng([seed, epoch]).permutation(n_problems)
        out.append(int(cache[epoch][offset]))
    return out


def sample_seed(seed: int, step: int, prompt_position: int, j: int) -> int:
    """The sampling seed of response ``j`` to the prompt at ``prompt_position`` of ``step``'s GLOBAL
    prompt batch (its position in ``step_prompt_indices``). A pure function of its arguments, so a
    sample is the same whichever process generates it and whatever else shares its batch. The four
    numbers are mixed by numpy's SeedSequence (negative ones are taken modulo 2**64)."""
    words = [int(x) % 2**64 for x in (seed, step, prompt_position, j)]
    state = np.random.SeedSequence(words).generate_state(1, np.uint64)[0]
    return int(state) & 0x7FFF_FFFF_FFFF_FFFF


def step_sample_seeds(seed: int, step: int, positions: Sequence[int], n: int) -> list[int]:
    """``sample_seed`` of every response of a step, prompt-major (row ``i * n + j`` for the prompt at
    global position ``positions[i]``): the ``sample_seeds`` argument of ``RolloutEngine.generate``."""
    return [sample_seed(seed, step, pos, j) for pos in positions for j in range(n)]


__all__ = [
    "CALL_INSTRUCTION",
    "STDIN_INSTRUCTION",
    "encode_prompts",
    "load_release",
    "problem_id",
    "prompt_text",
    "render_prompt",
    "sample_seed",
    "step_prompt_indices",
    "step_sample_seeds",
]
