"""Settings for MicroCoder Studio.

Zero configuration gives the embedded default: SQLite in ``var/``, Celery tasks executed in-process
(eagerly) and an in-memory channel layer. ``DATABASE_URL`` switches to PostgreSQL (psycopg 3) and
``REDIS_URL`` to Celery over Redis plus channels-redis. Nothing exists only in production settings.
"""

from __future__ import annotations

import os
from pathlib import Path

import dj_database_url
from csp.constants import NONCE

from webapp.env import ConfigError, env_bool, env_float, env_int, env_list, env_path, env_str

BASE_DIR = Path(__file__).resolve().parent.parent
VAR_DIR = env_path("MICROCODER_VAR_DIR", BASE_DIR / "var")

DEBUG = env_bool("DJANGO_DEBUG", False)


def _secret_key() -> str:
    """``DJANGO_SECRET_KEY``, or (zero configuration) a random key kept in ``VAR_DIR/secret_key``
    with mode 0600, created on first start. ``MICROCODER_REQUIRE_SECRET_KEY=1`` refuses the file."""
    key = env_str("DJANGO_SECRET_KEY", "")
    if key:
        return key
    if env_bool("MICROCODER_REQUIRE_SECRET_KEY", False):
        raise ConfigError("DJANGO_SECRET_KEY is required (MICROCODER_REQUIRE_SECRET_KEY=1)")
    import secrets

    path = VAR_DIR / "secret_key"
    if not path.exists():
        VAR_DIR.mkdir(parents=True, exist_ok=True)
        tmp = VAR_DIR / f".secret_key.{os.getpid()}"
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w") as fh:
            fh.write(secrets.token_urlsafe(50))
        try:
            os.link(tmp, path)  # atomic: a server and a worker starting together agree on one key
        except FileExistsError:
            pass
        finally:
            os.unlink(tmp)
    return path.read_text().strip()


SECRET_KEY = _secret_key()
ALLOWED_HOSTS = env_list("DJANGO_ALLOWED_HOSTS", ["localhost", "127.0.0.1", "[::1]", "testserver"])
CSRF_TRUSTED_ORIGINS = env_list("DJANGO_CSRF_TRUSTED_ORIGINS", [])

INSTALLED_APPS = [
    "daphne",
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "rest_framework",
    "rest_framework.authtoken",
    "django_filters",
    "drf_spectacular",
    "drf_spectacular_sidecar",  # swagger-ui served from our static files, never a CDN
    "channels",
    "webapp",
    "curation",
    "evaluator",
    "training",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "webapp.input_guards.RejectNulQueryMiddleware",  # 400 naming the parameter, not a database error
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "csp.middleware.CSPMiddleware",  # request.csp_nonce always; the header only when DJANGO_CSP is on
]

ROOT_URLCONF = "webapp.urls"
TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
                "webapp.roles.roles_context",
            ],
        },
    },
]
WSGI_APPLICATION = "webapp.wsgi.application"
ASGI_APPLICATION = "webapp.asgi.application"

_database_url = env_str("DATABASE_URL", "")
if _database_url:
    DATABASES = {"default": dj_database_url.parse(_database_url, conn_max_age=env_int("DB_CONN_MAX_AGE", 60))}
    if DATABASES["default"]["ENGINE"] == "django.db.backends.postgresql":
        DATABASES["default"].setdefault("TEST", {})["NAME"] = env_str("TEST_DATABASE_NAME", "test_microcoder")
else:
    VAR_DIR.mkdir(parents=True, exist_ok=True)
    DATABASES = {
        "default": {
            "ENGINE": "django.db.backends.sqlite3",
            "NAME": str(VAR_DIR / "db.sqlite3"),
            "OPTIONS": {"timeout": 30},
        }
    }
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator", "OPTIONS": {"min_length": 8}},
]
LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "home"
LOGOUT_REDIRECT_URL = "login"

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = False
USE_TZ = True

STATIC_URL = "static/"
#: our assets, and the npm packages of package.json (scripts/dev.sh bootstrap runs npm ci) under the
#: prefix "vendor": {% static 'vendor/katex/dist/katex.min.css' %}
STATICFILES_DIRS = [BASE_DIR / "webapp" / "static", ("vendor", BASE_DIR / "node_modules")]
STATIC_ROOT = VAR_DIR / "static"
MEDIA_ROOT = VAR_DIR / "media"
# Non-file request bodies (forms, JSON) are read into memory: keep them small. Uploaded files stream
# to disk in chunks and are not limited by this.
DATA_UPLOAD_MAX_MEMORY_SIZE = env_int("MICROCODER_MAX_BODY_MB", 10, minimum=1) * 1024 * 1024
FILE_UPLOAD_MAX_MEMORY_SIZE = 5 * 1024 * 1024

REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "webapp.authentication.ExpiringTokenAuthentication",
        "rest_framework.authentication.SessionAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["webapp.roles.IsViewer"],
    "DEFAULT_PARSER_CLASSES": [
        "webapp.input_guards.StrictJSONParser",  # NUL in a JSON string -> 400 naming its path
        "rest_framework.parsers.FormParser",
        "rest_framework.parsers.MultiPartParser",
    ],
    "DEFAULT_PAGINATION_CLASS": "rest_framework.pagination.PageNumberPagination",
    "PAGE_SIZE": 50,
    "DEFAULT_FILTER_BACKENDS": [
        "django_filters.rest_framework.DjangoFilterBackend",
        "rest_framework.filters.OrderingFilter",
    ],
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    # Only the token endpoint is throttled (webapp.tokens); rates like "10/min", "100/hour".
    "DEFAULT_THROTTLE_RATES": {
        "token_user": env_str("API_TOKEN_THROTTLE_USER", "10/min"),
        "token_address": env_str("API_TOKEN_THROTTLE_ADDRESS", "30/min"),
    },
    # Client addresses come from REMOTE_ADDR unless this many trusted proxies set X-Forwarded-For.
    "NUM_PROXIES": env_int("MICROCODER_NUM_PROXIES", 0, minimum=0),
}

# --- Accounts (webapp.tokens, webapp.accounts) ----------------------------------------------------
#: an API token stops working this many hours after it was created (a new one: POST /api/auth/token/)
API_TOKEN_TTL_HOURS = env_int("API_TOKEN_TTL_HOURS", 720, minimum=1)
#: failed logins on the login form before a username / an address is locked out for LOGIN_LOCKOUT_S
LOGIN_FAILURES_PER_USER = env_int("LOGIN_FAILURES_PER_USER", 5, minimum=1)
LOGIN_FAILURES_PER_ADDRESS = env_int("LOGIN_FAILURES_PER_ADDRESS", 20, minimum=1)
LOGIN_LOCKOUT_S = env_int("LOGIN_LOCKOUT_S", 900, minimum=1)
#: the default cache holds those counts: in Redis when REDIS_URL is set, so every server process shares them
CACHES = (
    {"default": {"BACKEND": "django.core.cache.backends.redis.RedisCache", "LOCATION": env_str("REDIS_URL", ""),
                 "KEY_PREFIX": "microcoder"}}
    if env_str("REDIS_URL", "")
    else {"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}}
)

# --- Production switches (all off by default: the demo serves plain HTTP on localhost) -------------
#: seconds of Strict-Transport-Security (0 = no header); subdomains/preload only with it
SECURE_HSTS_SECONDS = env_int("DJANGO_HSTS_SECONDS", 0, minimum=0)
SECURE_HSTS_INCLUDE_SUBDOMAINS = env_bool("DJANGO_HSTS_INCLUDE_SUBDOMAINS", False)
SECURE_HSTS_PRELOAD = env_bool("DJANGO_HSTS_PRELOAD", False)
SECURE_SSL_REDIRECT = env_bool("DJANGO_SSL_REDIRECT", False)
#: behind a TLS-terminating proxy that sets X-Forwarded-Proto (needed with DJANGO_SSL_REDIRECT there)
if env_bool("DJANGO_TRUST_X_FORWARDED_PROTO", False):
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
SESSION_COOKIE_SECURE = CSRF_COOKIE_SECURE = env_bool("DJANGO_SECURE_COOKIES", False)
#: Content-Security-Policy: "off", "report-only" or "enforce". Scripts only from our origin or inline
#: with the request's nonce (templates: <script nonce="{{ request.csp_nonce }}">); inline styles allowed
#: (style attributes in templates and swagger-ui); websockets and fetches to our own origin.
CSP_MODE = env_str("DJANGO_CSP", "off")
if CSP_MODE not in {"off", "report-only", "enforce"}:
    raise ConfigError(f"DJANGO_CSP={CSP_MODE!r}: use off, report-only or enforce")
_csp_policy = {
    "DIRECTIVES": {
        "default-src": ["'self'"],
        "script-src": ["'self'", NONCE],  # NONCE: the request's nonce (only when a page used it)
        "style-src": ["'self'", "'unsafe-inline'"],
        "img-src": ["'self'", "data:"],
        "font-src": ["'self'"],  # KaTeX's fonts, served from static/vendor/
        "connect-src": ["'self'"],
        "object-src": ["'none'"],
        "base-uri": ["'self'"],
        "form-action": ["'self'"],
        "frame-ancestors": ["'none'"],
    }
}
CONTENT_SECURITY_POLICY = _csp_policy if CSP_MODE == "enforce" else None
CONTENT_SECURITY_POLICY_REPORT_ONLY = _csp_policy if CSP_MODE == "report-only" else None
SPECTACULAR_SETTINGS = {
    "TITLE": "MicroCoder Studio API",
    "DESCRIPTION": "Curated coding problems, dataset releases, evaluation and MicroCoder-GRPO training runs.",
    "VERSION": "1.0.0",
    "SERVE_PERMISSIONS": ["webapp.roles.IsViewer"],
    "SWAGGER_UI_DIST": "SIDECAR",
    "POSTPROCESSING_HOOKS": [
        "drf_spectacular.hooks.postprocess_schema_enums",
        "webapp.schema.add_error_responses",  # 400/401/403/404 documented on every operation
    ],
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "ENUM_NAME_OVERRIDES": {
        "ConstraintKindEnum": "curation.models.ConstraintKind",
        "DuplicateKindEnum": "curation.models.DuplicateKind",
        "ConstraintStatusEnum": "curation.models.ConstraintStatus",
        "ImportStatusEnum": "curation.models.ImportStatus",
        # job statuses and kinds that share field names across apps (named, so the schema is stable)
        "JobStatusEnum": "training.models.RunStatus",  # also curation's JobStatus and EvalStatus: same choices
        "EvaluationJobStatusEnum": "evaluator.models.EvaluationJob.Status",
        "EvaluationJobKindEnum": "evaluator.models.EvaluationJob.Kind",
        "ContaminationEnum": "training.models_evaluation.Contamination",
    },
}

# --- Celery / Redis / Channels --------------------------------------------------------------------
REDIS_URL = env_str("REDIS_URL", "")
CELERY_TASK_ALWAYS_EAGER = env_bool("CELERY_TASK_ALWAYS_EAGER", not REDIS_URL)
CELERY_TASK_EAGER_PROPAGATES = True
CELERY_BROKER_URL = env_str("CELERY_BROKER_URL", REDIS_URL or "memory://")
CELERY_RESULT_BACKEND = env_str("CELERY_RESULT_BACKEND", REDIS_URL or "cache+memory://")
CELERY_TASK_DEFAULT_QUEUE = "default"
CELERY_TASK_ROUTES = {
    "curation.tasks.score_*": {"queue": "scoring"},
    "evaluator.tasks.*": {"queue": "evaluate"},
    "training.tasks.*": {"queue": "gpu"},
}
CELERY_TASK_ACKS_LATE = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_TASK_TIME_LIMIT = env_int("CELERY_TASK_TIME_LIMIT", 24 * 3600, minimum=1)
EVALUATION_TASK_TIME_LIMIT = env_int("EVALUATION_TASK_TIME_LIMIT", 3600, minimum=1)
#: deliveries of one evaluation job (redeliveries after a dead worker, infrastructure retries) before it fails
EVALUATION_MAX_ATTEMPTS = env_int("EVALUATION_MAX_ATTEMPTS", 5, minimum=1)
TRAINING_TASK_TIME_LIMIT = env_int("TRAINING_TASK_TIME_LIMIT", 7 * 24 * 3600, minimum=1)
IMPORT_TASK_TIME_LIMIT = env_int("IMPORT_TASK_TIME_LIMIT", 3600, minimum=1)
SCORING_TASK_TIME_LIMIT = env_int("SCORING_TASK_TIME_LIMIT", 6 * 3600, minimum=1)
SCORING_CONCURRENCY = env_int("SCORING_CONCURRENCY", 8, minimum=1)  # openai requests in flight per job
SCORING_MAX_ATTEMPTS = env_int("SCORING_MAX_ATTEMPTS", 3, minimum=1)  # deliveries before a dying job fails
# Bounded work per upload and per import (README "Configuration"; curation.importers.limits): the web
# request only streams the file to disk; the worker unpacks, detects and reads it within these limits.
IMPORT_MAX_UPLOAD_MB = env_int("IMPORT_MAX_UPLOAD_MB", 1024, minimum=1)
IMPORT_MAX_DECOMPRESSED_MB = env_int("IMPORT_MAX_DECOMPRESSED_MB", 8192, minimum=1)
IMPORT_MAX_COMPRESSION_RATIO = env_float("IMPORT_MAX_COMPRESSION_RATIO", 200.0)
IMPORT_MAX_ROW_MB = env_int("IMPORT_MAX_ROW_MB", 256, minimum=1)
IMPORT_MAX_ARCHIVE_ENTRIES = env_int("IMPORT_MAX_ARCHIVE_ENTRIES", 100_000, minimum=1)
IMPORT_MAX_ARCHIVE_DEPTH = env_int("IMPORT_MAX_ARCHIVE_DEPTH", 12, minimum=1)
IMPORT_UNPACK_TIME_LIMIT_S = env_int("IMPORT_UNPACK_TIME_LIMIT_S", 600, minimum=1)
#: rows per transaction of an import; a running batch silent this long is taken over by a redelivery
IMPORT_CHUNK_ROWS = env_int("IMPORT_CHUNK_ROWS", 500, minimum=1)
IMPORT_LEASE_TIMEOUT_S = env_int("IMPORT_LEASE_TIMEOUT_S", 120, minimum=1)
FILE_UPLOAD_HANDLERS = [
    "django.core.files.uploadhandler.MemoryFileUploadHandler",
    "curation.upload_limits.LimitedTemporaryFileUploadHandler",  # an oversized upload never fills the disk
]
# Tasks ack late (acks_late), so Redis holds every message a worker took until the task ends. A message
# whose worker died (SIGKILL, OOM, node loss) is redelivered once it is older than visibility_timeout,
# at the next sweep of unacknowledged messages (a worker sweeps when it starts and then every
# ~100 s with kombu's defaults): a killed training run resumes at most about this long after the kill.
# Redis cannot tell a dead worker from a slow one, so a training run that outlasts the timeout is
# redelivered to a second worker while the first still trains it: the run lease below
# (TRAINING_LEASE_TIMEOUT_S) makes that early copy harmless, it only re-checks the lease later.
_visibility_timeout = env_int("CELERY_VISIBILITY_TIMEOUT", 3600, minimum=1)
CELERY_BROKER_TRANSPORT_OPTIONS = {"visibility_timeout": _visibility_timeout}
CELERY_RESULT_BACKEND_TRANSPORT_OPTIONS = {"visibility_timeout": _visibility_timeout}
#: a running run whose lease owner has not beaten its heartbeat for this long is presumed dead and
#: may be taken over by a redelivered task (it resumes from the newest checkpoint)
TRAINING_LEASE_TIMEOUT_S = env_int("TRAINING_LEASE_TIMEOUT_S", 120, minimum=1)
#: seconds between heartbeats of a training run's lease owner (capped at a third of the lease timeout)
TRAINING_HEARTBEAT_S = env_float("TRAINING_HEARTBEAT_S", 15.0)
#: most processes (GPUs) one run trains on under torchrun (training.services.run_launch); 0 = all of the node's
TRAINING_PROCESSES_PER_RUN = env_int("TRAINING_PROCESSES_PER_RUN", 0, minimum=0)
#: the most runs one sweep may launch (training.services.sweeps): a bigger grid is refused with the count
SWEEP_MAX_RUNS = env_int("SWEEP_MAX_RUNS", 64, minimum=1)
#: model evaluations (training.tasks_evaluation): hard time limit of one delivery, and the lease after which a
#: redelivered task takes over a job whose worker stopped beating (it resumes from the stored samples)
MODEL_EVALUATION_TASK_TIME_LIMIT = env_int("MODEL_EVALUATION_TASK_TIME_LIMIT", 24 * 3600, minimum=1)
MODEL_EVALUATION_LEASE_TIMEOUT_S = env_int("MODEL_EVALUATION_LEASE_TIMEOUT_S", 120, minimum=1)
#: deliveries of one model evaluation before a job whose workers keep dying (OOM, kills) fails
MODEL_EVALUATION_MAX_ATTEMPTS = env_int("MODEL_EVALUATION_MAX_ATTEMPTS", 5, minimum=1)

#: channels-redis waits for a consumer's messages with a blocking BZPOPMIN of this many seconds
#: (``RedisChannelLayer.brpop_timeout``; a test checks the installed version still uses it)
CHANNELS_REDIS_BLOCKING_READ_S = 5
#: Redis client socket timeout of the channel layer. redis-py >= 8 defaults it to 5 s, the length of the
#: blocking read above: an idle websocket's read then timed out in the client and daphne closed the
#: socket with 1011. It must be longer than the blocking read; it still bounds a read from a hung Redis.
CHANNEL_LAYER_SOCKET_TIMEOUT = env_float("CHANNEL_LAYER_SOCKET_TIMEOUT", 30.0)
if CHANNEL_LAYER_SOCKET_TIMEOUT <= CHANNELS_REDIS_BLOCKING_READ_S + 1:
    raise ConfigError(
        f"CHANNEL_LAYER_SOCKET_TIMEOUT={CHANNEL_LAYER_SOCKET_TIMEOUT:g} must exceed channels-redis's "
        f"blocking read of {CHANNELS_REDIS_BLOCKING_READ_S} s by more than a second"
    )
if REDIS_URL:
    _channel_host = {
        "address": REDIS_URL,
        "socket_timeout": CHANNEL_LAYER_SOCKET_TIMEOUT,
        "socket_connect_timeout": 5.0,
        "socket_keepalive": True,  # a dead Redis peer is noticed without waiting for the read timeout
    }
    CHANNEL_LAYERS = {
        "default": {"BACKEND": "channels_redis.core.RedisChannelLayer", "CONFIG": {"hosts": [_channel_host]}}
    }
else:
    CHANNEL_LAYERS = {"default": {"BACKEND": "channels.layers.InMemoryChannelLayer"}}

# --- Product settings ------------------------------------------------------------------------------
EVALUATOR_WORKERS = env_int("EVALUATOR_WORKERS", 0, minimum=0)  # 0 = one per core
#: a submission with at most this many tests may be judged inside the request (``?wait=1``)
EVALUATION_SYNC_MAX_TESTS = env_int("EVALUATION_SYNC_MAX_TESTS", 200, minimum=0)
#: cases per judge_batch call inside an evaluation job (0 = twice the worker count, at least 4)
EVALUATION_CHUNK_SIZE = env_int("EVALUATION_CHUNK_SIZE", 0, minimum=0)
RUNS_DIR = env_path("MICROCODER_RUNS_DIR", VAR_DIR / "runs")
OPENAI_BASE_URL = env_str("OPENAI_BASE_URL", "")
OPENAI_API_KEY = env_str("OPENAI_API_KEY", "")
DIFFICULTY_MODEL = env_str("DIFFICULTY_MODEL", "gpt-4o-mini")
NEAR_DUPLICATE_THRESHOLD = env_float("NEAR_DUPLICATE_THRESHOLD", 0.8)
#: Overrides of curation.constraints.ConstraintConfig fields, e.g. {"require_reference_solution": False}
CURATION_CONSTRAINTS: dict[str, object] = {}

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "root": {"handlers": ["console"], "level": env_str("LOG_LEVEL", "INFO")},
    "loggers": {"django.db.backends": {"level": "WARNING"}},
}
