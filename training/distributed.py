"""Multi-process training (``torchrun --nproc_per_node N -m training.grpo``): one ``DistContext`` per run.

A single process gets ``DistContext.single()``: world size 1, every method an identity or a no-op, so
the single-process path is exactly what it was. Under torchrun (``WORLD_SIZE`` > 1 in the
environment) ``DistContext.from_env`` joins the process group (NCCL on GPUs, gloo on CPU) and:

- ``shard_model`` shards the policy with FSDP2 (``torch.distributed.fsdp.fully_shard``): each decoder
  layer is its own unit, the root holds embeddings, final norm and head (a tied head is one parameter
  there). The chunked log-prob head (``training.logprobs``) runs as a forward method of the root
  (``fsdp_chunked_method``), so it gets the gathered head weight and its gradient is reduce-scattered.
  Gradients are *summed* across ranks (divide factor 1): every rank divides its loss by the GLOBAL
  token count of the minibatch (``sum_floats``), so the summed gradient is the single-process one.
- ``prompt_positions`` gives each rank its share of the step's prompts: every optimizer minibatch
  (``updates_per_rollout`` of them, whole groups) is split evenly across ranks, so each rank works
  on every update. A prompt's G samples stay on one rank (its group statistics are local).
- ``gather_rollout`` all-gathers the ranks' judged samples back into the global prompt-major order,
  so masks, advantages and metrics are computed on exactly the batch a single process would see;
  ``local_rows`` then picks the rank's own rows for the update.
- FSDP forward passes are collectives, so every rank must run the same number of them:
  ``padded_chunks`` pads a rank's forward chunks with ``None`` up to the largest count of any rank,
  and ``idle_pass`` runs a two-token pass (one target) with a zero loss for each pad. Generation, whose number of
  decode steps differs per rank, runs on unsharded parameters instead (``unsharded`` /
  ``wrap_engine``: one all-gather before, no collective inside).
- ``any_true`` makes stop decisions (SIGTERM, cancel) collective: a rank never leaves the loop alone.

Sampling is seeded per sample (``training.data.sample_seed`` of the sample's GLOBAL prompt position),
so what a rank samples does not depend on the number of processes. This module imports nothing from
Django.
"""

from __future__ import annotations

import contextlib
import dataclasses
import datetime
import logging
import os
from collections.abc import Iterator, Sequence
from typing import Any, TypeVar

import torch

from training.logprobs import fsdp_chunked_method, split_lm_head

logger = logging.getLogger("training")

T = TypeVar("T")

#: seconds a collective may wait for the other ranks before the job fails (a dead rank ends the run)
COLLECTIVE_TIMEOUT_S = float(os.environ.get("TRAINING_COLLECTIVE_TIMEOUT_S", "1800"))


def env_world_size() -> int:
    """WORLD_SIZE set by torchrun (1 without it)."""
    try:
        return max(1, int(os.environ.get("WORLD_SIZE", "1")))
    except ValueError:
        return 1


class DistContext:
    """Rank, world size and the few collectives the trainer needs. ``single()`` is the no-op one."""

    def __init__(self, rank: int = 0, world_size: int = 1, local_rank: int = 0, backend: str = "") -> None:
        self.rank = rank
        self.world_size = world_size
        self.local_rank = local_rank
        self.backend = backend
        self._mesh: Any = None
        self._fsdp_modules: list[Any] = []

    # --- construction ----------------------------------------------------------------------------

    @classmethod
    def single(cls) -> DistContext:
        return cls()

    @classmethod
    def from_env(cls, device: str = "auto") -> DistContext:
        """Join torchrun's process group when ``WORLD_SIZE`` > 1; else the single-process context.

        ``device`` is the config's ``device``: ``cpu`` (or no CUDA) uses gloo, GPUs use NCCL with rank
        i on ``cuda:LOCAL_RANK``."""
        world = env_world_size()
        if world == 1:
            return cls.single()
        import torch.distributed as dist

        use_cuda = device != "cpu" and torch.cuda.is_available()
        local_rank = int(os.environ.get("LOCAL_RANK", "0"))
        backend = "nccl" if use_cuda else "gloo"
        if use_cuda:
            torch.cuda.set_device(local_rank)
        if not dist.is_initialized():
            dist.init_process_group(backend=backend, timeout=datetime.timedelta(seconds=COLLECTIVE_TIMEOUT_S))
        ctx = cls(dist.get_rank(), dist.get_world_size(), local_rank, backend)
        logger.info("rank %d of %d (%s, local rank %d)", ctx.rank, ctx.world_size, backend, local_rank)
        return ctx

    @property
    def is_distributed(self) -> bool:
        return self.world_size > 1

    @property
    def is_main(self) -> bool:
        return self.rank == 0

    def device(self, configured: torch.device) -> torch.device:
        """The rank's device: ``cuda:LOCAL_RANK`` for a CUDA run under torchrun, else ``configured``."""
        if self.is_distributed and configured.type == "cuda":
            return torch.device("cuda", self.local_rank)
        return configured

    def close(self) -> None:
        if self.is_distributed:
            import torch.distributed as dist

            if dist.is_initialized():
                dist.destroy_process_group()

    # --- collectives -----------------------------------------------------------------------------

    def barrier(self) -> None:
        if self.is_distributed:
            import torch.distributed as dist

            dist.barrier()

    def all_gather_object(self, obj: T) -> list[T]:
        """Every rank's ``obj``, in rank order (``[obj]`` for one process)."""
        if not self.is_distributed:
            return [obj]
        import torch.distributed as dist

        out: list[Any] = [None] * self.world_size
        dist.all_gather_object(out, obj)
        return out

    def broadcast_object(self, obj: T) -> T:
        """Rank 0's ``obj`` on every rank."""
        if not self.is_distributed:
            return obj
        import torch.distributed as dist

        box: list[Any] = [obj]
        dist.broadcast_object_list(box, src=0)
        return box[0]  # type: ignore[no-any-return]

    def _reduce(self, values: Sequence[float], op: str) -> list[float]:
        import torch.distributed as dist

        device = torch.device("cuda", self.local_rank) if self.backend == "nccl" else torch.device("cpu")
        t = torch.tensor([float(v) for v in values], dtype=torch.float64, device=device)
        dist.all_reduce(t, op=dist.ReduceOp.SUM if op == "sum" else dist.ReduceOp.MAX)
        return [float(v) for v in t.cpu().tolist()]

    def sum_floats(self, values: Sequence[float]) -> list[float]:
        """Element-wise sum over ranks (float64)."""
        if not self.is_distributed or not values:
            return [float(v) for v in values]
        return self._reduce(values, "sum")

    def max_float(self, value: float) -> float:
        if not self.is_distributed:
            return float(value)
        return self._reduce([value], "max")[0]

    def any_true(self, flag: bool) -> bool:
        """True on every rank when it is True on any (stop requests must be collective)."""
        if not self.is_distributed:
            return bool(flag)
        return self.max_float(1.0 if flag else 0.0) > 0.5

    # --- the step's work split -------------------------------------------------------------------

    def check_batch(self, prompts_per_step: int, updates_per_rollout: int) -> None:
        """Every minibatch must split evenly across ranks (whole groups, same count on each rank)."""
        unit = updates_per_rollout * self.world_size
        if prompts_per_step % unit:
            per_update = prompts_per_step // max(1, updates_per_rollout)
            raise ValueError(
                f"each optimizer minibatch ({per_update} prompts: minibatch_prompts) must split evenly across "
                f"the {self.world_size} processes: make minibatch_prompts a multiple of {self.world_size} "
                f"(prompts_per_step {prompts_per_step} = {updates_per_rollout} minibatches, so "
                f"prompts_per_step must be a multiple of {unit})"
            )

    def prompt_positions(self, n_prompts: int, updates_per_rollout: int = 1) -> list[int]:
        """This rank's positions in the step's global prompt batch: within each of the
        ``updates_per_rollout`` minibatches, the rank's contiguous 1/world_size of it."""
        if not self.is_distributed:
            return list(range(n_prompts))
        self.check_batch(n_prompts, updates_per_rollout)
        per_update = n_prompts // updates_per_rollout
        share = per_update // self.world_size
        return [
            u * per_update + self.rank * share + k for u in range(updates_per_rollout) for k in range(share)
        ]

    @staticmethod
    def local_rows(positions: Sequence[int], group_size: int) -> list[int]:
        """Prompt-major sample rows of the prompts at ``positions``."""
        return [p * group_size + j for p in positions for j in range(group_size)]

    def gather_rollout(
        self, positions: Sequence[int], comps: Sequence[Any], texts: Sequence[str], results: Sequence[Any]
    ) -> tuple[list[Any], list[str], list[Any]]:
        """The whole step's (completions, texts, results) in global prompt-major order, on every rank.

        ``comps[k].prompt_index`` is local (an index into ``positions``); the returned completions carry
        the global prompt position instead."""
        glob = [dataclasses.replace(c, prompt_index=positions[c.prompt_index]) for c in comps]
        if not self.is_distributed:
            return glob, list(texts), list(results)
        rows: list[tuple[int, int, Any, str, Any]] = []
        for rank_rows in self.all_gather_object(
            [
                (c.prompt_index, k, c, t, r)
                for k, (c, t, r) in enumerate(zip(glob, texts, results, strict=True))
            ]
        ):
            rows.extend(rank_rows)
        rows.sort(key=lambda row: (row[0], row[1]))
        return [r[2] for r in rows], [r[3] for r in rows], [r[4] for r in rows]

    # --- FSDP2 -----------------------------------------------------------------------------------

    def shard_model(self, model: torch.nn.Module, device: torch.device) -> torch.nn.Module:
        """FSDP2-shard ``model`` across the ranks (a no-op for one process): one unit per decoder layer
        plus the root; gradients summed, not averaged (see the module docstring)."""
        if not self.is_distributed:
            return model
        from torch.distributed.device_mesh import init_device_mesh
        from torch.distributed.fsdp import FSDPModule, fully_shard

        self._mesh = init_device_mesh(device.type, (self.world_size,))
        layers = decoder_layers(model)
        for layer in layers:
            fully_shard(layer, mesh=self._mesh, reshard_after_forward=True)
        fully_shard(model, mesh=self._mesh, reshard_after_forward=True)
        self._fsdp_modules = [m for m in model.modules() if isinstance(m, FSDPModule)]
        chunked = split_lm_head(model) is not None
        if chunked:  # the chunked log-prob head as a root forward method (training.logprobs)
            fsdp_chunked_method(model)
        for m in self._fsdp_modules:
            # A plain SUM reduce-scatter (no PREMUL_SUM, which gloo lacks) and no division afterwards.
            m.set_gradient_divide_factor(1.0)
            m.set_force_sum_reduction_for_comms(True)
        logger.info(
            "FSDP2: %d sharded units over %d ranks, %s log-prob head",
            len(self._fsdp_modules),
            self.world_size,
            "chunked" if chunked else "full-logits",
        )
        return model

    @contextlib.contextmanager
    def unsharded(self, model: torch.nn.Module) -> Iterator[None]:
        """Full parameters on every rank for the duration (one all-gather per unit on entry), so forward
        passes inside issue no collective: ranks may run different numbers of them (generation)."""
        mods = self._fsdp_modules
        if not mods:
            yield
            return
        for m in mods:
            m.set_reshard_after_forward(False, recurse=False)
        for m in mods:
            m.unshard()
        try:
            yield
        finally:
            for m in mods:
                m.reshard()
            for m in mods:
                m.set_reshard_after_forward(True, recurse=False)

    def wrap_engine(self, engine: Any, model: torch.nn.Module) -> Any:
        """``engine`` whose ``generate`` runs on unsharded parameters when the policy is sharded and the
        engine samples from the policy module itself (transformers); other engines are returned as is."""
        if not self._fsdp_modules or getattr(engine, "model", None) is not model:
            return engine
        return UnshardedEngine(engine, self, model)

    def padded_chunks(self, chunks: Sequence[T]) -> list[T | None]:
        """``chunks`` followed by ``None`` up to the largest number of chunks on any rank."""
        out: list[T | None] = list(chunks)
        if self._fsdp_modules:
            most = int(self.max_float(float(len(out))))
            out.extend([None] * (most - len(out)))
        return out

    def idle_pass(self, model: torch.nn.Module, setup: Any, *, backward: bool) -> None:
        """A two-token forward (one target; and backward of a zero loss) that takes part in the FSDP collectives of a
        forward chunk this rank does not have; its gradient contribution is exactly zero. It takes the
        same route as a real chunk (``training.logprobs.model_logprobs``: the chunked head when the
        model has one), so every rank issues the same collectives."""
        from training.logprobs import model_logprobs

        ids = torch.full((1, 2), int(setup.pad_id), dtype=torch.long, device=setup.device)
        with torch.set_grad_enabled(backward):
            logp, _ = model_logprobs(
                model,
                ids,
                torch.ones_like(ids),
                torch.tensor([[0, 1]], device=setup.device),
                ids[:, 1:],
                1.0,
                autocast_dtype=setup.autocast_dtype,
            )
        if backward:
            (logp.sum() * 0.0).backward()


def decoder_layers(model: torch.nn.Module) -> list[torch.nn.Module]:
    """The transformer blocks of a HF causal LM (``model.model.layers`` for Qwen/Llama-like models)."""
    inner = getattr(model, "model", None)
    layers = getattr(inner, "layers", None)
    if layers is None:
        raise ValueError(
            f"cannot find the decoder layers of {type(model).__name__} (expected model.model.layers) to shard"
        )
    return list(layers)


class UnshardedEngine:
    """A rollout engine sampling from an FSDP-sharded policy: ``generate`` runs inside ``unsharded``."""

    def __init__(self, inner: Any, dist: DistContext, model: torch.nn.Module) -> None:
        self.inner = inner
        self.dist = dist
        self.model = model

    def generate(self, prompts: list[list[int]], **kwargs: Any) -> Any:
        with self.dist.unsharded(self.model):
            return self.inner.generate(prompts, **kwargs)

    def sync_weights(self, model: torch.nn.Module) -> None:
        self.inner.sync_weights(model)

    def close(self) -> None:
        self.inner.close()


def descendant_pids(pid: int) -> list[int]:
    """Every live descendant of ``pid`` (Linux /proc), children first. torchrun starts its workers in
    sessions of their own, so killing its process group does not reach them."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", encoding="utf-8", errors="replace") as fh:
                stat = fh.read()
        except OSError:
            continue
        fields = stat[stat.rfind(")") + 2 :].split()
        if len(fields) > 1:
            children.setdefault(int(fields[1]), []).append(int(entry))
    out: list[int] = []
    todo = [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            out.append(child)
            todo.append(child)
    return out


def kill_tree(pid: int, sig: int) -> None:
    """Send ``sig`` to ``pid`` and all its descendants (those that are gone are skipped)."""
    for target in [*descendant_pids(pid), pid]:
        try:
            os.kill(target, sig)
        except (ProcessLookupError, PermissionError):
            continue


__all__ = [
    "COLLECTIVE_TIMEOUT_S",
    "DistContext",
    "UnshardedEngine",
    "decoder_layers",
    "descendant_pids",
    "env_world_size",
    "kill_tree",
]
