from django.contrib import admin
from django.contrib.auth import views as auth_views
from django.urls import include, path
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerSplitView

from webapp import accounts, tokens, views

handler404 = "webapp.views.not_found"  # JSON under /api/ (unrouted API paths too), HTML elsewhere

urlpatterns = [
    path("", views.home, name="home"),
    path("accounts/login/", accounts.ThrottledLoginView.as_view(), name="login"),
    path("accounts/logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("accounts/token/", accounts.token_page, name="account-token"),
    path("admin/", admin.site.urls),
    path("curation/", include("curation.urls")),
    path("curation/", include("curation.urls_difficulty")),
    path("evaluator/", include("evaluator.urls")),
    path("training/", include("training.urls")),
    path("jobs/", include("webapp.jobs_urls")),
    path("api/auth/token/", tokens.TokenObtain.as_view(), name="api-token"),
    path("api/auth/token/revoke/", tokens.TokenRevoke.as_view(), name="api-token-revoke"),
    path("api/schema/", SpectacularAPIView.as_view(), name="api-schema"),
    path("api/docs/", SpectacularSwaggerSplitView.as_view(url_name="api-schema"), name="api-docs"),
    path("api/", include("curation.api")),
    path("api/", include("curation.api_difficulty")),
    path("api/", include("evaluator.api")),
    path("api/", include("training.api_sweeps")),  # before training.api: runs/compare/ is not a run id
    path("api/", include("training.api")),
    path("api/", include("training.api_evaluations")),
    path("api/", include("webapp.jobs_api")),
]
