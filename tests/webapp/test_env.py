from pathlib import Path

import pytest

from webapp.env import ConfigError, env_bool, env_int, env_list, env_str


def test_it_reads_booleans_in_the_usual_spellings(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("X_FLAG", "yes")
    assert env_bool("X_FLAG", False) is True
    monkeypatch.setenv("X_FLAG", "0")
    assert env_bool("X_FLAG", True) is False


def test_it_fails_loudly_on_a_malformed_boolean(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("X_FLAG", "maybe")
    with pytest.raises(ConfigError, match="X_FLAG='maybe' is not a boolean"):
        env_bool("X_FLAG", False)


def test_it_rejects_an_integer_below_its_minimum(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("X_N", "-3")
    with pytest.raises(ConfigError, match="must be >= 0"):
        env_int("X_N", 1, minimum=0)


def test_it_requires_a_variable_without_default(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("X_MISSING", raising=False)
    with pytest.raises(ConfigError, match="X_MISSING is required"):
        env_str("X_MISSING")


def test_it_splits_comma_lists_and_drops_blanks(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("X_HOSTS", "a.example, b.example,,")
    assert env_list("X_HOSTS", []) == ["a.example", "b.example"]


def test_it_keeps_one_random_secret_key_per_installation(tmp_path: Path) -> None:
    import subprocess
    import sys

    code = "import webapp.settings as s; print(s.SECRET_KEY)"
    env = {"PATH": "/usr/bin:/bin", "MICROCODER_VAR_DIR": str(tmp_path)}
    first = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    second = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    assert first.stdout == second.stdout and len(first.stdout.strip()) >= 50
    assert (tmp_path / "secret_key").stat().st_mode & 0o777 == 0o600


def test_it_refuses_to_start_without_a_key_when_one_is_required(tmp_path: Path) -> None:
    import subprocess
    import sys

    env = {"PATH": "/usr/bin:/bin", "MICROCODER_VAR_DIR": str(tmp_path), "MICROCODER_REQUIRE_SECRET_KEY": "1"}
    result = subprocess.run([sys.executable, "-c", "import webapp.settings"], env=env, capture_output=True, text=True)
    assert result.returncode != 0 and "DJANGO_SECRET_KEY is required" in result.stderr
