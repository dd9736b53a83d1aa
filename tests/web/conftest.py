"""Browser-test fixtures: a real ASGI server (daphne: pages, API and websockets) and headless Chromium.

pytest-django's ``live_server`` speaks WSGI only, so websockets need our own server. Daphne runs in a
thread of the test process: it then shares the test database (including SQLite's shared in-memory
test database) and the channel layer (including the in-memory one) with the test. Events a test
publishes are sent from daphne's own event loop (``server.call``), exactly as a service running under
the server would send them. The Twisted reactor can run only once per process, hence one server per
session.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import pytest

CHROMIUM = os.environ.get("MICROCODER_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]


@dataclass
class AsgiServer:
    url: str
    loop: asyncio.AbstractEventLoop

    def call(self, fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        """Run sync ``fn`` (a service) the way the server runs a view: ``sync_to_async`` on its loop."""
        from asgiref.sync import sync_to_async

        future = asyncio.run_coroutine_threadsafe(sync_to_async(fn)(*args, **kwargs), self.loop)
        return future.result(timeout=30)


@pytest.fixture(scope="session")
def asgi_server(django_db_setup: Any, django_db_blocker: Any) -> Iterator[AsgiServer]:
    from daphne.server import Server
    from django.contrib.staticfiles.handlers import ASGIStaticFilesHandler
    from django.db import connections
    from twisted.internet import reactor

    from webapp.asgi import application

    # Each request runs in a thread of its own; with persistent connections those threads would keep
    # sessions open on the test database after the run and block dropping it. Close after each request.
    db_settings = connections.settings
    saved_max_age = {alias: db_settings[alias].get("CONN_MAX_AGE", 0) for alias in db_settings}
    for alias in db_settings:
        db_settings[alias]["CONN_MAX_AGE"] = 0
    ready = threading.Event()
    server = Server(
        application=ASGIStaticFilesHandler(application),
        endpoints=["tcp:port=0:interface=127.0.0.1"],
        signal_handlers=False,
        verbosity=0,
        ready_callable=ready.set,
    )
    thread = threading.Thread(target=server.run, name="daphne", daemon=True)
    with django_db_blocker.unblock():  # the server's threads open their own connections
        thread.start()
        if not ready.wait(20):
            pytest.fail("daphne did not start")
        for _ in range(200):
            if server.listening_addresses:
                break
            threading.Event().wait(0.05)
        host, port = server.listening_addresses[0]
        live = AsgiServer(url=f"http://{host}:{port}", loop=reactor._asyncioEventloop)  # type: ignore[attr-defined]
        yield live
        live.call(connections.close_all)
        reactor.callFromThread(reactor.stop)  # type: ignore[attr-defined,misc]
        thread.join(10)
    for alias, max_age in saved_max_age.items():
        db_settings[alias]["CONN_MAX_AGE"] = max_age


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    """Headless Chromium for one test module.

    Playwright's sync API marks an asyncio loop as running in the test thread, which trips Django's
    async-safety check on every ORM call the test makes. The test thread really is synchronous, so
    the check is waived while the browser is open (and only then: other modules keep it).
    """
    if not (os.path.exists(CHROMIUM) or shutil.which(CHROMIUM)):
        pytest.skip(f"browser tests need Chromium at {CHROMIUM} (apt-get install chromium)")
    sync_api = pytest.importorskip("playwright.sync_api", reason="browser tests need the playwright package")
    previous = os.environ.get("DJANGO_ALLOW_ASYNC_UNSAFE")
    os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"
    try:
        with sync_api.sync_playwright() as pw:
            chromium = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
            yield chromium
            chromium.close()
    finally:
        if previous is None:
            os.environ.pop("DJANGO_ALLOW_ASYNC_UNSAFE", None)
        else:
            os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = previous


@pytest.fixture
def page_as(browser: Any, asgi_server: AsgiServer, settings: Any) -> Iterator[Callable[[Any], Any]]:
    """``page_as(user)`` -> a Playwright page logged in as ``user`` on the live server."""
    from django.test import Client

    contexts: list[Any] = []

    def make(user: Any) -> Any:
        client = Client()
        client.force_login(user)
        context = browser.new_context(viewport={"width": 1280, "height": 900})
        context.add_cookies([{"name": settings.SESSION_COOKIE_NAME, "value": client.cookies[settings.SESSION_COOKIE_NAME].value,
                              "url": asgi_server.url}])
        contexts.append(context)
        page = context.new_page()
        page.set_default_timeout(15_000)
        return page

    yield make
    for context in contexts:
        context.close()
