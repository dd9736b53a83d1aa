"""Tiny Qwen3 models built locally (nothing downloaded), for tests, benchmarks and demos.

``build_tiny_model`` trains a byte-level BPE tokenizer on the fly with ``tokenizers``, builds a
``Qwen3ForCausalLM`` from a small ``Qwen3Config`` and writes both to a directory that
``AutoTokenizer`` / ``AutoModelForCausalLM.from_pretrained`` load. It can warm-start the model with a
few supervised steps on given (prompt, completion) pairs, so that RL starts from a policy that already
writes well-formed programs (a randomly initialized model almost never does, and GRPO learns nothing
from groups whose rewards are all 0).

The toy coding task (``toy_problems``): stdin problems "read n, print f(n)" for a handful of
functions f, judged by the real evaluator. ``build_toy_model`` warm-starts on each prompt paired with
a *random* one of the task's programs, so the initial policy writes valid programs but picks the
right one only about 1/len(TOY_TASKS) of the time; GRPO has to learn which program each statement
asks for.
"""

from __future__ import annotations

import json
import random
from collections.abc import Sequence
from pathlib import Path

import torch

from curation.records import ProblemRecord, TestRecord
from training.data import prompt_text

EOS_TOKEN = "<|endoftext|>"
PAD_TOKEN = "<|pad|>"

#: (external_id, what the statement asks to print, the program that does it) of the toy task.
TOY_TASKS: tuple[tuple[str, str, str], ...] = (
    ("double", "twice the number", "print(2*int(input()))"),
    ("increment", "the number plus one", "print(int(input())+1)"),
    ("square", "the square of the number", "print(int(input())**2)"),
    ("negate", "the negated number", "print(-int(input()))"),
)
_TOY_FUNCS = {
    "double": lambda n: 2 * n,
    "increment": lambda n: n + 1,
    "square": lambda n: n * n,
    "negate": lambda n: -n,
}
TOY_INPUTS = (3, 7, -2)


def toy_problems() -> list[ProblemRecord]:
    """The toy task's problems: read an integer n from stdin and print f(n)."""
    problems = []
    for ext_id, what, _program in TOY_TASKS:
        f = _TOY_FUNCS[ext_id]
        problems.append(
            ProblemRecord(
                platform="toy",
                external_id=ext_id,
                title=ext_id.title(),
                statement=f"Read an integer from the input and print {what}.",
                io_mode="stdin",
                time_limit_s=2.0,
                tests=[
                    TestRecord(input=f"{n}\n", output=f"{f(n)}\n", public=i == 0)
                    for i, n in enumerate(TOY_INPUTS)
                ],
            )
        )
    return problems


def toy_completion(program: str) -> str:
    return f"\n```python\n{program}\n```"


def write_release(problems: Sequence[ProblemRecord], path: str | Path) -> Path:
    """Write problems as a release JSONL file (the format ``dataset.release`` reads)."""
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text("".join(json.dumps(pr.to_export_dict()) + "\n" for pr in problems), encoding="utf-8")
    return p


def train_tokenizer(texts: Sequence[str], vocab_size: int = 384) -> object:
    """A byte-level BPE ``PreTrainedTokenizerFast`` trained on ``texts`` (eos and pad are special)."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        special_tokens=[EOS_TOKEN, PAD_TOKEN],
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tok.train_from_iterator(list(texts), trainer=trainer)
    return PreTrainedTokenizerFast(tokenizer_object=tok, eos_token=EOS_TOKEN, pad_token=PAD_TOKEN)


def build_tiny_model(
    out_dir: str | Path,
    *,
    texts: Sequence[str],
    sft_pairs: Sequence[tuple[str, str]] = (),
    sft_steps: int = 0,
    sft_lr: float = 3e-3,
    sft_batch: int = 32,
    vocab_size: int = 384,
    hidden_size: int = 64,
    num_layers: int = 2,
    num_heads: int = 4,
    num_kv_heads: int = 2,
    intermediate_size: int = 128,
    max_position_embeddings: int = 1024,
    seed: int = 0,
) -> Path:
    """Write a tiny Qwen3 model + tokenizer to ``out_dir`` and return it.

    ``texts`` train the tokenizer; ``sft_pairs`` (prompt, completion) warm-start the model for
    ``sft_steps`` AdamW steps on the completion tokens (+ eos) only.
    """
    from transformers import Qwen3Config, Qwen3ForCausalLM

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    tokenizer = train_tokenizer([*texts, *(p + c for p, c in sft_pairs)], vocab_size=vocab_size)
    eos_id = tokenizer.convert_tokens_to_ids(EOS_TOKEN)  # type: ignore[attr-defined]
    pad_id = tokenizer.convert_tokens_to_ids(PAD_TOKEN)  # type: ignore[attr-defined]
    config = Qwen3Config(
        vocab_size=len(tokenizer),  # type: ignore[arg-type]
        hidden_size=hidden_size,
        intermediate_size=intermediate_size,
        num_hidden_layers=num_layers,
        num_attention_heads=num_heads,
        num_key_value_heads=num_kv_heads,
        head_dim=hidden_size // num_heads,
        max_position_embeddings=max_position_embeddings,
        tie_word_embeddings=True,
        bos_token_id=eos_id,
        eos_token_id=eos_id,
        pad_token_id=pad_id,
    )
    torch.manual_seed(seed)
    model = Qwen3ForCausalLM(config)
    if sft_pairs and sft_steps > 0:
        _warm_start(
            model,
            tokenizer,
            sft_pairs,
            steps=sft_steps,
            lr=sft_lr,
            batch=sft_batch,
            eos_id=eos_id,
            pad_id=pad_id,
            seed=seed,
        )
    model.generation_config.eos_token_id = eos_id
    model.generation_config.pad_token_id = pad_id
    model.save_pretrained(out, safe_serialization=True)
    tokenizer.save_pretrained(out)  # type: ignore[attr-defined]
    return out


def _warm_start(
    model: torch.nn.Module,
    tokenizer: object,
    pairs: Sequence[tuple[str, str]],
    *,
    steps: int,
    lr: float,
    batch: int,
    eos_id: int,
    pad_id: int,
    seed: int,
) -> None:
    rng = random.Random(seed)
    encoded = []
    for prompt, completion in pairs:
        p = tokenizer(prompt, add_special_tokens=False)["input_ids"]  # type: ignore[operator]
        c = tokenizer(completion, add_special_tokens=False)["input_ids"] + [eos_id]  # type: ignore[operator]
        encoded.append((p, c))
    opt = torch.optim.AdamW(model.parameters(), lr=lr)
    model.train()
    for _ in range(steps):
        chunk = [encoded[rng.randrange(len(encoded))] for _ in range(batch)]
        width = max(len(p) + len(c) for p, c in chunk)
        ids = torch.full((len(chunk), width), pad_id, dtype=torch.long)
        labels = torch.full((len(chunk), width), -100, dtype=torch.long)
        attn = torch.zeros((len(chunk), width), dtype=torch.long)
        for i, (p, c) in enumerate(chunk):
            seq = p + c
            ids[i, : len(seq)] = torch.tensor(seq)
            attn[i, : len(seq)] = 1
            labels[i, len(p) : len(seq)] = torch.tensor(c)
        loss = model(input_ids=ids, attention_mask=attn, labels=labels).loss
        opt.zero_grad()
        loss.backward()
        opt.step()
    model.eval()


def build_toy_model(
    out_dir: str | Path,
    *,
    seed: int = 0,
    sft_steps: int = 150,
    correct_share: float = 0.2,
    confusion_share: float = 0.6,
    **model_kwargs: int,
) -> Path:
    """A tiny model warm-started on the toy task as a *confused* coder: problem k is paired with its
    own program with probability ``correct_share``, with the next problem's program with probability
    ``confusion_share`` and with one of the remaining programs otherwise. The warm start thus reads
    the statement (its answers depend on the prompt) but mostly answers wrongly: initial reward about
    ``correct_share``, which RL can raise towards 1 by re-mapping statements to programs."""
    problems = toy_problems()
    rng = random.Random(seed)
    programs = [program for _, _, program in TOY_TASKS]
    prompts = [prompt_text(p) for p in problems]
    k_all = len(programs)
    pairs = []
    for i in range(512):
        k = i % len(prompts)
        u = rng.random()
        if u < correct_share:
            j = k
        elif u < correct_share + confusion_share:
            j = (k + 1) % k_all
        else:
            j = rng.choice([x for x in range(k_all) if x not in (k, (k + 1) % k_all)] or [k])
        pairs.append((prompts[k], toy_completion(programs[j])))
    corpus = [*prompts, *(toy_completion(p) for p in programs)] * 4
    return build_tiny_model(
        out_dir, texts=corpus, sft_pairs=pairs, sft_steps=sft_steps, seed=seed, **model_kwargs
    )


__all__ = [
    "EOS_TOKEN",
    "PAD_TOKEN",
    "TOY_TASKS",
    "build_tiny_model",
    "build_toy_model",
    "toy_completion",
    "toy_problems",
    "train_tokenizer",
    "write_release",
]
