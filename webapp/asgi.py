"""One ASGI application (daphne) serves pages, the API and websockets."""

import os

from django.core.asgi import get_asgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "webapp.settings")
django_asgi_app = get_asgi_application()

from channels.auth import AuthMiddlewareStack  # noqa: E402
from channels.routing import ProtocolTypeRouter, URLRouter  # noqa: E402
from django.contrib.staticfiles.handlers import ASGIStaticFilesHandler  # noqa: E402

from webapp.routing import websocket_urlpatterns  # noqa: E402
from webapp.ws_guards import origin_guard, with_fallback  # noqa: E402

application = ProtocolTypeRouter(
    {
        # Static assets are a few small files (CSS, our chart library): serving them from the same
        # process keeps the product one server; put a CDN or nginx in front for heavy traffic.
        "http": ASGIStaticFilesHandler(django_asgi_app),
        # Origin checked (scheme, host and port with DJANGO_CSRF_TRUSTED_ORIGINS); unknown paths close with 4404.
        "websocket": origin_guard(AuthMiddlewareStack(URLRouter(with_fallback(websocket_urlpatterns)))),
    }
)
