"""Ralph Site settings. Everything deployment-specific comes from the environment (see README)."""

from datetime import timedelta

from ralphsite.core.db.config import database_config
from ralphsite.core.db.fast_paths import PIECES as FAST_PATH_PIECES
from ralphsite.core.env import env_bool, env_choices, env_duration, env_int, env_list, env_rate, env_str
from ralphsite.core.paths import BASE_DIR, data_dir
from ralphsite.core.secrets import SECRET_KEY_FILE, secret_key_read

# Importing the settings writes nothing: the data dir, its secret key and static/ are made by the
# commands that write them (ralphsite/core/paths.py, ralphsite/core/secrets.py).
DATA_DIR = data_dir()

# Empty until `manage.py migrate`, `bootstrap` or the server's start created the data dir's key: Django
# then refuses whatever signs (ImproperlyConfigured), never signing with a key made up here.
SECRET_KEY = env_str("SECRET_KEY", "") or secret_key_read(DATA_DIR / SECRET_KEY_FILE)
DEBUG = env_bool("DEBUG", False)
ALLOWED_HOSTS = env_list("ALLOWED_HOSTS", ["localhost", "127.0.0.1", "[::1]"])
CSRF_TRUSTED_ORIGINS = env_list("CSRF_TRUSTED_ORIGINS", [])

INSTALLED_APPS = [
    "ralphsite.apps.RalphAdminConfig",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "whitenoise.runserver_nostatic",
    "django.contrib.staticfiles",
    "rest_framework",
    "rest_framework.authtoken",
    "django_filters",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "ralphsite",
    "sessions_app",
    "conversations_app",
    "ledger_app",
    "axes",
]

MIDDLEWARE = [
    "ralphsite.middleware.RequestBodyLimitMiddleware",
    "django.middleware.security.SecurityMiddleware",
    "ralphsite.middleware.StaticFilesMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "ralphsite.middleware.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "ralphsite.middleware.AdminMessageMiddleware",
    "ralphsite.middleware.ApiScopeMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "ralphsite.middleware.AdminContentSecurityPolicyMiddleware",
    # Last: it turns the admin login's lockout into the response.
    "axes.middleware.AxesMiddleware",
]

ROOT_URLCONF = "ralphsite.urls"
WSGI_APPLICATION = "ralphsite.wsgi.application"

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
            ],
        },
    },
]

DATABASES = {
    "default": database_config(
        url=env_str("DATABASE_URL", f"sqlite:///{DATA_DIR / 'ralph.db'}"),
        data_dir=DATA_DIR,
        # More than a worker's threads and its upkeep thread ever hold at once (connections open on
        # demand): a request that waits RALPH_DB_CONNECT_TIMEOUT for one finds the database unreachable,
        # not busy.
        pool_size=env_int("RALPH_DB_POOL_SIZE", 10, minimum=0),
        connect_timeout=env_int("RALPH_DB_CONNECT_TIMEOUT", 3, minimum=2),
    )
}
# The Retry-After of a 503 `database_unavailable` (the database could not be reached).
RALPH_DB_RETRY_AFTER = env_int("RALPH_DB_RETRY_AFTER", 5, minimum=1)

# Automatic backups from the server's upkeep thread (one process of the deployment at a time):
# every RALPH_BACKUP_EVERY (e.g. 24h; off by default) into RALPH_BACKUP_DIR, keeping
# RALPH_BACKUP_KEEP_DAYS days (seed 004's 7). `manage.py backup` does the same by hand.
RALPH_BACKUP_EVERY = env_duration("RALPH_BACKUP_EVERY", "off")
RALPH_BACKUP_DIR = env_str("RALPH_BACKUP_DIR", str(DATA_DIR / "backups"))
RALPH_BACKUP_KEEP_DAYS = env_int("RALPH_BACKUP_KEEP_DAYS", 7, minimum=0)
# The ledger chain's head, anchored outside the database (ledger_app.anchor): signed files in
# RALPH_LEDGER_ANCHOR_DIR (point it at another machine's mount), written every
# RALPH_LEDGER_ANCHOR_EVERY when the head moved (off: only `manage.py ledger_anchor` and purges).
# The HMAC key is never in the database: RALPH_LEDGER_ANCHOR_KEY, or a file beside the secret key.
RALPH_LEDGER_ANCHOR_DIR = env_str("RALPH_LEDGER_ANCHOR_DIR", str(DATA_DIR / "anchors"))
RALPH_LEDGER_ANCHOR_EVERY = env_duration("RALPH_LEDGER_ANCHOR_EVERY", "5min")
# Read here when the file exists; the first anchor written creates it (ledger_app.anchor.anchor_key).
RALPH_LEDGER_ANCHOR_KEY = env_str("RALPH_LEDGER_ANCHOR_KEY", "") or secret_key_read(DATA_DIR / "ledger_anchor_key")
# The fast paths that re-implement ORM and DRF internals (ralphsite.core.db.fast_paths); off runs the plain
# Django/DRF code they must agree with.
RALPH_FAST_PATHS = env_bool("RALPH_FAST_PATHS", True)
# Single pieces turned off, for the benchmark's on/off comparison (ralphsite.core.db.fast_paths.PIECES).
RALPH_FAST_PATHS_OFF = env_choices("RALPH_FAST_PATHS_OFF", FAST_PATH_PIECES)
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
]

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "/static/"
# Made by `manage.py collectstatic` (`make run`), with the data dir if it is missing, readable by its owner
# only (0700, as ralphsite.core.paths.private_dir_create makes it). Until then there is nothing to serve
# (ralphsite.middleware.StaticFilesMiddleware).
STATIC_ROOT = DATA_DIR / "static"
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "whitenoise.storage.CompressedStaticFilesStorage",
                    "OPTIONS": {"directory_permissions_mode": 0o700}},
}

# Large bulk appends (1,000 messages or events) arrive in one JSON body. A longer body is a 413
# (ralphsite.middleware.RequestBodyLimitMiddleware), chunked bodies included.
DATA_UPLOAD_MAX_MEMORY_SIZE = env_int("RALPH_MAX_BODY_BYTES", 32 * 1024 * 1024, minimum=1024)

REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [
        # Token first: its WWW-Authenticate header makes anonymous requests a 401, not a 403.
        "ralphsite.core.api.authentication.FastTokenAuthentication",
        "rest_framework.authentication.SessionAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["ralphsite.core.api.permissions.ScopedTokenPermission"],
    "DEFAULT_PAGINATION_CLASS": "ralphsite.core.api.pagination.StandardPagination",
    "PAGE_SIZE": 50,
    "DEFAULT_FILTER_BACKENDS": [
        "ralphsite.core.api.filters.RalphFilterBackend",
        "ralphsite.core.api.ordering.StrictOrderingFilter",
    ],
    "DEFAULT_RENDERER_CLASSES": ["ralphsite.core.api.renderers.RalphJSONRenderer"],
    "DEFAULT_PARSER_CLASSES": ["ralphsite.core.api.parsers.RalphJSONParser"],
    "DEFAULT_CONTENT_NEGOTIATION_CLASS": "ralphsite.core.api.negotiation.RalphContentNegotiation",
    "DEFAULT_SCHEMA_CLASS": "ralphsite.core.api.schema.RalphAutoSchema",
    "EXCEPTION_HANDLER": "ralphsite.core.api.errors.api_exception_handler",
    "DEFAULT_THROTTLE_CLASSES": ["ralphsite.core.api.throttling.TokenRateThrottle"],
    "DATETIME_FORMAT": "iso-8601",
    "COERCE_DECIMAL_TO_STRING": True,
    "UNAUTHENTICATED_USER": None,
}
if env_bool("RALPH_BROWSABLE_API", DEBUG):
    REST_FRAMEWORK["DEFAULT_RENDERER_CLASSES"].append("rest_framework.renderers.BrowsableAPIRenderer")

SPECTACULAR_SETTINGS = {
    "TITLE": "Ralph Site API",
    "DESCRIPTION": "Durable state for autonomous coding-agent loops: orchestration, conversations, ledger.",
    "VERSION": "1.0.0",
    "SERVE_INCLUDE_SCHEMA": False,
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
    "COMPONENT_SPLIT_REQUEST": True,
    # Enum aliases accepted on input are listed as `x-aliases` (ralphsite/core/choices.py); update bodies
    # have no `id` (ralphsite/core/api/schema.py).
    "POSTPROCESSING_HOOKS": ["drf_spectacular.hooks.postprocess_schema_enums",
                             "ralphsite.core.api.schema_aliases.postprocess_schema_aliases",
                             "ralphsite.core.api.schema.update_bodies_without_id"],
    # Operations are tagged by resource (`chats`, `tasks`, …), the segment after this prefix.
    "SCHEMA_PATH_PREFIX": r"/api/v1",
    "ENUM_NAME_OVERRIDES": {
        # sessions_app: many models have a `status` / `priority` of their own.
        "SessionStatusEnum": "sessions_app.models.SessionStatus",
        "TaskStatusEnum": "sessions_app.models.TaskStatus",
        "AttemptStatusEnum": "sessions_app.models.AttemptStatus",
        "PlanStatusEnum": "sessions_app.models.PlanStatus",
        "ResearchStatusEnum": "sessions_app.models.ResearchStatus",
        "QuestionStatusEnum": "sessions_app.models.QuestionStatus",
        "InvocationStatusEnum": "sessions_app.models.InvocationStatus",
        "PriorityEnum": "sessions_app.models.Priority",
        "LevelEnum": "sessions_app.models.Level",
        "ReviewVerdictEnum": "sessions_app.models.ReviewVerdict",
        "FeedbackSeverityEnum": "sessions_app.models.FeedbackSeverity",
        "AgentRoleEnum": "sessions_app.models.AgentRole",
        "MessageRoleEnum": "conversations_app.models.MessageRole",
        "ObservationTypeEnum": "conversations_app.models.ObservationType",
    },
}

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "root": {"handlers": ["console"], "level": env_str("RALPH_LOG_LEVEL", "WARNING")},
}

SESSION_COOKIE_HTTPONLY = True
X_FRAME_OPTIONS = "DENY"

# -- abuse and failure (README: Security) --------------------------------------------------------

# Requests per API token (or admin user) and window, counted in the database: every process and
# host shares the count (ralphsite/core/api/throttling.py). Over it: 429 `throttled` with Retry-After.
# How often the console and the dashboard ask the server for news, in milliseconds.
RALPH_CONSOLE_POLL_MS = env_int("RALPH_CONSOLE_POLL_MS", 2000, minimum=100)
RALPH_API_THROTTLE_RATE = env_rate("RALPH_API_THROTTLE_RATE", "6000/min")

# Admin login: after RALPH_LOGIN_FAILURE_LIMIT failures from one address for one username, that
# pair is locked out for RALPH_LOGIN_LOCKOUT_MINUTES (django-axes, attempts kept in the database).
AUTHENTICATION_BACKENDS = ["axes.backends.AxesStandaloneBackend", "django.contrib.auth.backends.ModelBackend"]
AXES_ENABLED = env_bool("RALPH_LOGIN_LOCKOUT", True)
AXES_FAILURE_LIMIT = env_int("RALPH_LOGIN_FAILURE_LIMIT", 5, minimum=1)
AXES_COOLOFF_TIME = timedelta(minutes=env_int("RALPH_LOGIN_LOCKOUT_MINUTES", 15, minimum=1))
AXES_LOCKOUT_PARAMETERS = [["username", "ip_address"]]
AXES_RESET_ON_SUCCESS = True
AXES_VERBOSE = False

# Behind a TLS-terminating proxy (RALPH_HTTPS=1): cookies only over HTTPS, HSTS, the proxy's
# X-Forwarded-Proto trusted, plain HTTP redirected (the health check exempt).
RALPH_HTTPS = env_bool("RALPH_HTTPS", False)
SESSION_COOKIE_SECURE = CSRF_COOKIE_SECURE = RALPH_HTTPS
SECURE_SSL_REDIRECT = RALPH_HTTPS
SECURE_REDIRECT_EXEMPT = [r"^healthz$"]
SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https") if RALPH_HTTPS else None
SECURE_HSTS_SECONDS = env_int("RALPH_HSTS_SECONDS", 31_536_000, minimum=0) if RALPH_HTTPS else 0
SECURE_HSTS_INCLUDE_SUBDOMAINS = SECURE_HSTS_PRELOAD = RALPH_HTTPS
# The admin's Content-Security-Policy (ralphsite/middleware.py): it loads nothing from elsewhere, and
# runs no inline script or style (no <script> or <style> element, no style="" attribute; styles set
# from a script file, as Django's admin scripts set them, are allowed by CSP).
RALPH_ADMIN_CSP = ("default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
                   "object-src 'none'; base-uri 'self'; form-action 'self'; frame-ancestors 'none'")
