"""The runner channel: the socket between the worker and the runner is reachable by the solution. A
forged or malicious frame on it is the solution's own fault (RE), never an infrastructure error, and no
text a solution controls (messages with lone surrogates, NULs, invalid UTF-8) breaks the batch output.
One attack per test; the judge keeps serving afterwards."""

from __future__ import annotations

import json
from typing import Any

import pytest

from evaluator import judge_batch, judge_case

from .conftest import FAST, requires_bwrap, stdin_case

FORGE = """
import os, struct, time
def forge(header, blob=b""):
    for fd in range(3, 256):
        try:
            if os.readlink(f"/proc/self/fd/{fd}").startswith("socket:"):
                os.write(fd, struct.pack("<II", len(header), len(blob)) + header + blob)
        except OSError:
            pass
"""


def judge(code: str) -> dict[str, Any]:
    return judge_case(stdin_case(code, [("", "1\n")]), config=FAST)


def strict_json(verdict: dict[str, Any]) -> str:
    """What a consumer that accepts only valid UTF-8 without NULs (PostgreSQL jsonb) gets."""
    def texts(value: Any) -> list[str]:
        if isinstance(value, dict):
            return [t for k, v in value.items() for t in texts(k) + texts(v)]
        if isinstance(value, list):
            return [t for v in value for t in texts(v)]
        return [value] if isinstance(value, str) else []

    for text in texts(verdict):
        text.encode("utf-8")  # raises on a lone surrogate
        assert "\x00" not in text, verdict
    return json.dumps(verdict, ensure_ascii=False)


@pytest.fixture(autouse=True)
def judge_keeps_serving() -> Any:
    yield
    v = judge_case(stdin_case("print(int(input()) * 2)", [("21\n", "42\n")]), config=FAST)
    assert v["verdict"] == "AC", v


@requires_bwrap
def test_a_forged_reply_with_fields_of_the_wrong_type_is_a_runtime_error() -> None:
    v = judge(FORGE + 'forge(b\'{"status": "ok", "unencodable": 5, "message": {"x": []}}\')\ntime.sleep(30)\n')
    assert (v["verdict"], v["tests"][0]["message"]) == ("RE", "the solution wrote garbage on the judge's channel"), v


@requires_bwrap
def test_a_forged_reply_that_is_not_an_object_is_a_runtime_error() -> None:
    v = judge(FORGE + "forge(b'[1, 2, 3]')\ntime.sleep(30)\n")
    assert v["verdict"] == "RE", v


@requires_bwrap
def test_a_forged_accept_followed_by_the_real_reply_is_a_runtime_error() -> None:
    v = judge(FORGE + 'forge(b\'{"status": "ok"}\')\nprint(1)\n')
    assert v["verdict"] == "RE", v


def test_an_exception_message_with_lone_surrogates_and_nuls_keeps_the_verdict_serializable() -> None:
    v = judge('raise type("\\ud800Error", (Exception,), {})("\\x00\\udfff\\ud83d")\n')
    assert v["verdict"] == "RE" and "Error" in v["tests"][0]["message"], v
    strict_json(v)


@requires_bwrap
def test_a_forged_reply_without_the_request_s_nonce_is_a_runtime_error() -> None:
    v = judge(FORGE + 'forge(b\'{"status": "ok"}\')\ntime.sleep(30)\n')
    assert (v["verdict"], v["tests"][0]["message"]) == ("RE", "the solution wrote garbage on the judge's channel"), v


def test_odd_bytes_on_stdout_and_stderr_keep_the_batch_output_serializable() -> None:
    code = ("import sys\nsys.stdout.buffer.write(b'\\x00\\xff\\xed\\xa0\\x80 1')\n"
            "sys.stderr.buffer.write(b'\\x00\\xed\\xb0\\x80\\xfe')\nsys.exit(3)\n")
    verdicts = judge_batch([stdin_case(code, [("", "1\n")], id="odd"), stdin_case("print(1)", [("", "1\n")])],
                           config=FAST)
    assert [v["verdict"] for v in verdicts] == ["RE", "AC"]
    strict_json(verdicts[0])
