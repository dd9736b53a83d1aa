"""The vLLM engine's code path on a machine without a GPU: a fake ``vllm`` module records every call
(sleep / wake-up order, weight loads, per-sample seeds, the multiprocessing refusal)."""

from __future__ import annotations

import sys
import types
from dataclasses import dataclass, field
from typing import Any

import pytest
import torch

from training.rollout.vllm_engine import MULTIPROCESSING_ERROR, VLLMEngine


@dataclass
class FakeSamplingParams:
    n: int = 1
    temperature: float = 1.0
    top_p: float = 1.0
    top_k: int = -1
    min_p: float = 0.0
    max_tokens: int = 16
    logprobs: int | None = None
    seed: int | None = None
    stop_token_ids: list[int] = field(default_factory=list)
    skip_special_tokens: bool = True
    detokenize: bool = True


@dataclass
class FakeLogprob:
    logprob: float


@dataclass
class FakeOutput:
    token_ids: list[int]
    logprobs: list[dict[int, FakeLogprob]]
    finish_reason: str


@dataclass
class FakeRequestOutput:
    request_id: str
    finished: bool
    outputs: list[FakeOutput]


class FakeModel:
    def __init__(self, calls: list[Any]) -> None:
        self.calls = calls

    def load_weights(self, weights: Any) -> None:
        self.calls.append(("load_weights", [name for name, _ in weights]))


class InprocClient:
    """Named like vLLM's in-process client; holds the engine core with the executed model."""

    def __init__(self, calls: list[Any]) -> None:
        runner = types.SimpleNamespace(model=FakeModel(calls))
        worker = types.SimpleNamespace(model_runner=runner)
        executor = types.SimpleNamespace(driver_worker=types.SimpleNamespace(worker=worker))
        self.engine_core = types.SimpleNamespace(model_executor=executor)


class SyncMPClient:
    """Named like vLLM's client of an engine core in another process."""

    def __init__(self, calls: list[Any]) -> None:
        self.calls = calls


class FakeEngine:
    """``add_request`` / ``step`` like vLLM's LLMEngine: finishes one request per step, last first, so
    groups complete out of order. A sample's tokens are a function of its seed alone."""

    def __init__(self, calls: list[Any], client: Any) -> None:
        self.calls = calls
        self.engine_core = client
        self.pending: list[tuple[str, dict[str, Any], FakeSamplingParams]] = []

    def add_request(self, request_id: str, prompt: dict[str, Any], params: FakeSamplingParams) -> None:
        self.calls.append(("add_request", request_id, list(prompt["prompt_token_ids"]), params))
        self.pending.append((request_id, prompt, params))

    def has_unfinished_requests(self) -> bool:
        return bool(self.pending)

    def step(self) -> list[FakeRequestOutput]:
        request_id, _, params = self.pending.pop()
        tokens = [int(params.seed or 0) % 50 + 3, 2]  # ends with eos (2)
        logprobs = [{t: FakeLogprob(-0.5)} for t in tokens]
        out = FakeOutput(tokens, logprobs, "stop")
        unfinished = FakeRequestOutput("other", False, [])
        return [unfinished, FakeRequestOutput(request_id, True, [out])]


class FakeLLM:
    instances: list[FakeLLM] = []
    client_class: type = InprocClient

    def __init__(self, **kwargs: Any) -> None:
        self.kwargs = kwargs
        self.calls: list[Any] = [("init", kwargs)]
        self.llm_engine = FakeEngine(self.calls, FakeLLM.client_class(self.calls))
        FakeLLM.instances.append(self)

    def sleep(self, level: int = 1) -> None:
        self.calls.append(("sleep", level))

    def wake_up(self, tags: list[str] | None = None) -> None:
        self.calls.append(("wake_up", tags))

    def reset_prefix_cache(self) -> None:
        self.calls.append(("reset_prefix_cache",))


@pytest.fixture
def fake_vllm(monkeypatch: pytest.MonkeyPatch) -> type[FakeLLM]:
    module = types.ModuleType("vllm")
    module.LLM = FakeLLM  # type: ignore[attr-defined]
    module.SamplingParams = FakeSamplingParams  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "vllm", module)
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "empty_cache", lambda: None)
    monkeypatch.delenv("VLLM_ENABLE_V1_MULTIPROCESSING", raising=False)
    monkeypatch.delenv("WORLD_SIZE", raising=False)
    FakeLLM.instances = []
    FakeLLM.client_class = InprocClient
    return FakeLLM


def _engine(**kwargs: Any) -> VLLMEngine:
    return VLLMEngine("/models/m", eos_token_ids=[2], max_model_len=64, **kwargs)


def _names(calls: list[Any]) -> list[str]:
    return [c[0] for c in calls if c[0] != "add_request"]


def test_it_builds_vllm_in_process_with_sleep_mode_and_the_configured_memory_share(
    fake_vllm: type[FakeLLM],
) -> None:
    import os

    _engine(gpu_memory_utilization=0.4)
    kwargs = fake_vllm.instances[0].kwargs
    assert kwargs["enable_sleep_mode"] is True and kwargs["gpu_memory_utilization"] == 0.4
    assert kwargs["logprobs_mode"] == "processed_logprobs"
    assert os.environ["VLLM_ENABLE_V1_MULTIPROCESSING"] == "0"
    assert "enable_sleep_mode" not in (_engine(sleep_level=0), fake_vllm.instances[1].kwargs)[1]


def test_under_torchrun_each_rank_runs_its_engine_in_process_on_its_gpu(
    fake_vllm: type[FakeLLM], monkeypatch: pytest.MonkeyPatch
) -> None:
    _engine()
    assert "distributed_executor_backend" not in fake_vllm.instances[0].kwargs
    monkeypatch.setenv("WORLD_SIZE", "2")
    _engine()
    assert fake_vllm.instances[1].kwargs["distributed_executor_backend"] == "external_launcher"


def test_it_sleeps_through_the_update_and_wakes_weights_then_kv_cache(fake_vllm: type[FakeLLM]) -> None:
    engine = _engine(sleep_level=2)
    llm = fake_vllm.instances[0]
    policy = torch.nn.Linear(3, 2)
    engine.sync_weights(policy)  # what make_engine does first
    engine.generate([[5, 6]], n=2, temperature=1.0, max_new_tokens=8, seed=1)
    # the update happens here: vLLM holds no KV cache and (level 2) no weights
    assert (engine.weights_awake, engine.kv_awake, engine.weights_current) == (False, False, False)
    engine.sync_weights(policy)
    engine.generate([[5, 6]], n=2, temperature=1.0, max_new_tokens=8, seed=2)
    assert _names(llm.calls) == [
        "init",
        "load_weights", "reset_prefix_cache",  # initial sync (fresh engine: everything resident)
        "sleep",  # after the first rollout
        "wake_up", "load_weights", "reset_prefix_cache",  # sync after the update: weights only
        "wake_up",  # the KV cache, for the next rollout
        "sleep",
    ]  # fmt: skip
    wakes = [c for c in llm.calls if c[0] in ("wake_up", "sleep")]
    assert wakes == [("sleep", 2), ("wake_up", ["weights"]), ("wake_up", ["kv_cache"]), ("sleep", 2)]
    loads = [c for c in llm.calls if c[0] == "load_weights"]
    assert loads[-1] == ("load_weights", ["weight", "bias"])


def test_after_a_level_2_sleep_it_refuses_to_sample_from_discarded_weights(fake_vllm: type[FakeLLM]) -> None:
    engine = _engine(sleep_level=2)
    engine.generate([[5]], n=1, temperature=1.0, max_new_tokens=4, seed=0)
    with pytest.raises(RuntimeError, match="call sync_weights"):
        engine.generate([[5]], n=1, temperature=1.0, max_new_tokens=4, seed=0)


def test_level_1_offloads_and_wakes_the_same_weights_without_a_sync(fake_vllm: type[FakeLLM]) -> None:
    engine = _engine(sleep_level=1)
    engine.generate([[5]], n=1, temperature=1.0, max_new_tokens=4, seed=0)
    engine.generate([[5]], n=1, temperature=1.0, max_new_tokens=4, seed=0)
    wakes = [c for c in fake_vllm.instances[0].calls if c[0] in ("wake_up", "sleep")]
    assert wakes == [("sleep", 1), ("wake_up", ["weights"]), ("wake_up", ["kv_cache"]), ("sleep", 1)]


def test_level_0_never_sleeps(fake_vllm: type[FakeLLM]) -> None:
    engine = _engine(sleep_level=0)
    engine.generate([[5]], n=1, temperature=1.0, max_new_tokens=4, seed=0)
    assert not [c for c in fake_vllm.instances[0].calls if c[0] in ("wake_up", "sleep")]


def test_each_sample_is_its_own_request_with_its_own_seed(fake_vllm: type[FakeLLM]) -> None:
    engine = _engine()
    groups: list[tuple[int, list[int]]] = []
    seeds = [101, 102, 103, 201, 202, 203]
    comps = engine.generate(
        [[5, 6], [7]],
        n=3,
        temperature=0.7,
        max_new_tokens=8,
        seed=0,
        sample_seeds=seeds,
        on_group=lambda i, cs: groups.append((i, [c.token_ids[0] for c in cs])),
    )
    requests = [c for c in fake_vllm.instances[0].calls if c[0] == "add_request"]
    assert [r[3].n for r in requests] == [1] * 6
    assert [r[3].seed for r in requests] == seeds  # no shared noise across samples or prompts
    assert [r[2] for r in requests] == [[5, 6]] * 3 + [[7]] * 3
    params = requests[0][3]
    assert (params.temperature, params.top_p, params.top_k, params.min_p) == (0.7, 1.0, -1, 0.0)
    assert params.stop_token_ids == [2] and params.logprobs == 0
    # prompt-major output, each sample from its own seed; the fake finishes the last request first
    assert [c.token_ids[0] for c in comps] == [s % 50 + 3 for s in seeds]
    assert [c.prompt_index for c in comps] == [0, 0, 0, 1, 1, 1]
    assert comps[0].logprobs == [-0.5, -0.5] and not comps[0].truncated
    assert groups == [(1, [s % 50 + 3 for s in seeds[3:]]), (0, [s % 50 + 3 for s in seeds[:3]])]


def test_without_sample_seeds_prompts_still_get_distinct_seeds(fake_vllm: type[FakeLLM]) -> None:
    engine = _engine()
    engine.generate([[5], [5]], n=2, temperature=1.0, max_new_tokens=4, seed=7)
    seeds = [c[3].seed for c in fake_vllm.instances[0].calls if c[0] == "add_request"]
    assert len(set(seeds)) == 4


def test_a_multiprocess_engine_core_is_refused_with_the_fix(fake_vllm: type[FakeLLM]) -> None:
    fake_vllm.client_class = SyncMPClient
    with pytest.raises(RuntimeError) as info:
        _engine()
    assert str(info.value) == MULTIPROCESSING_ERROR
    assert "VLLM_ENABLE_V1_MULTIPROCESSING=0" in MULTIPROCESSING_ERROR


def test_multiprocessing_asked_for_by_the_environment_is_refused_before_loading(
    fake_vllm: type[FakeLLM], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("VLLM_ENABLE_V1_MULTIPROCESSING", "1")
    with pytest.raises(RuntimeError, match="VLLM_ENABLE_V1_MULTIPROCESSING=0"):
        _engine()
    assert fake_vllm.instances == []  # refused before vLLM loaded anything


def test_a_bad_sleep_level_is_refused(fake_vllm: type[FakeLLM]) -> None:
    with pytest.raises(ValueError, match="sleep_level must be 0, 1 or 2"):
        _engine(sleep_level=3)
