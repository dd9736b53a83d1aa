"""The Redis channel layer's client must outwait channels-redis's blocking read, or idle websockets die
with 1011 (the end-to-end proof is ``tests/integration/test_live_sockets.py``)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from channels_redis.core import RedisChannelLayer
from channels_redis.utils import create_pool, decode_hosts
from django.conf import settings

_PRINT_LAYERS = "import json, webapp.settings as s; print(json.dumps(s.CHANNEL_LAYERS))"


def _settings_env(tmp_path: Path, **extra: str) -> dict[str, str]:
    return {"PATH": "/usr/bin:/bin", "MICROCODER_VAR_DIR": str(tmp_path), "REDIS_URL": "redis://127.0.0.1:6379/15",
            **extra}


def test_it_knows_the_installed_channels_redis_blocking_read() -> None:
    assert RedisChannelLayer.brpop_timeout == settings.CHANNELS_REDIS_BLOCKING_READ_S


def test_it_builds_redis_connections_whose_socket_timeout_outlasts_the_blocking_read(tmp_path: Path) -> None:
    out = subprocess.run([sys.executable, "-c", _PRINT_LAYERS], env=_settings_env(tmp_path),
                         capture_output=True, text=True, check=True).stdout
    hosts = json.loads(out)["default"]["CONFIG"]["hosts"]
    pool = create_pool(decode_hosts(hosts)[0])  # exactly what channels-redis does with the setting
    assert pool.connection_kwargs["socket_timeout"] > RedisChannelLayer.brpop_timeout + 1
    assert pool.connection_kwargs["db"] == 15


def test_it_refuses_a_socket_timeout_no_longer_than_the_blocking_read(tmp_path: Path) -> None:
    env = _settings_env(tmp_path, CHANNEL_LAYER_SOCKET_TIMEOUT="5")
    result = subprocess.run([sys.executable, "-c", "import webapp.settings"], env=env, capture_output=True, text=True)
    assert result.returncode != 0 and "CHANNEL_LAYER_SOCKET_TIMEOUT=5 must exceed" in result.stderr
