from typing import Any

from asgiref.sync import async_to_sync
from asgiref.testing import ApplicationCommunicator

from webapp.asgi import application


async def _fetch(path: str) -> tuple[int, bytes]:
    scope = {"type": "http", "http_version": "1.1", "method": "GET", "path": path, "raw_path": path.encode(),
             "query_string": b"", "headers": [(b"host", b"localhost")], "scheme": "http",
             "server": ("localhost", 80), "client": ("127.0.0.1", 5000)}
    comm = ApplicationCommunicator(application, scope)
    await comm.send_input({"type": "http.request", "body": b"", "more_body": False})
    start: dict[str, Any] = await comm.receive_output(10)
    body = b""
    while True:
        message = await comm.receive_output(10)
        body += message.get("body", b"")
        if not message.get("more_body"):
            break
    return start["status"], body


def test_it_serves_the_stylesheet_and_chart_library_from_the_one_asgi_server() -> None:
    for path, marker in (("/static/css/app.css", b".topbar"), ("/static/js/charts.js", b"function")):
        status, body = async_to_sync(_fetch)(path)
        assert status == 200, path
        assert marker in body


def test_it_answers_a_missing_static_file_with_404() -> None:
    assert async_to_sync(_fetch)("/static/css/nope.css")[0] == 404
