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
