"""Django settings for the Anonymizer project.

Every setting that differs between a laptop, CI and a deployment is read from the environment,
with defaults that make `make run` work on a fresh checkout (SQLite under var/, no Redis needed).
"""

import importlib.util
import os
from datetime import timedelta
from pathlib import Path

import dj_database_url

BASE_DIR = Path(__file__).resolve().parent.parent
VAR_DIR = BASE_DIR / "var"


def envbool(name: str, default: str) -> bool:
    return os.environ.get(name, default).strip().lower() in ("1", "true", "yes", "on")


def envint(name: str, default: int) -> int:
    value = os.environ.get(name, "").strip()
    return int(value) if value else default


def envlist(name: str, default: str) -> list[str]:
    return [item.strip() for item in os.environ.get(name, default).split(",") if item.strip()]


# Data at rest: every file and folder this process creates (uploads, tables, results, editor sessions,
# the SQLite database, temporary files) is readable by the server's own user only (0600 / 0700).
os.umask(int(os.environ.get("ANONYMIZER_UMASK", "077"), 8))


# The development key is public: the checks of anonymizer_app/checks.py refuse to start a server (runserver,
# gunicorn, migrate, check) with it while DEBUG is off. Production: SECRET_KEY from the environment.
DEVELOPMENT_SECRET_KEY = "dev-only-insecure-secret-key-change-me-in-production"
SECRET_KEY = os.environ.get("SECRET_KEY", "") or DEVELOPMENT_SECRET_KEY
# Off unless turned on: `make run` (development) sets DEBUG=1.
DEBUG = envbool("DEBUG", "False")
ALLOWED_HOSTS = envlist("ALLOWED_HOSTS", "localhost,127.0.0.1,[::1]")
CSRF_TRUSTED_ORIGINS = envlist("CSRF_TRUSTED_ORIGINS", "")

# --- HTTPS and cookies (docs/operations/deployment.md) -----------------------------------------
# Cookies are sent over HTTPS only unless DEBUG is on (browsers treat http://localhost as secure too).
SESSION_COOKIE_SECURE = envbool("SESSION_COOKIE_SECURE", "False" if DEBUG else "True")
CSRF_COOKIE_SECURE = envbool("CSRF_COOKIE_SECURE", "False" if DEBUG else "True")
SESSION_COOKIE_HTTPONLY = True
SESSION_COOKIE_SAMESITE = "Lax"
SECURE_SSL_REDIRECT = envbool("SECURE_SSL_REDIRECT", "False")
SECURE_HSTS_SECONDS = envint("SECURE_HSTS_SECONDS", 0)
SECURE_HSTS_INCLUDE_SUBDOMAINS = envbool("SECURE_HSTS_INCLUDE_SUBDOMAINS", "False")
SECURE_HSTS_PRELOAD = envbool("SECURE_HSTS_PRELOAD", "False")
# Behind a reverse proxy that terminates TLS: SECURE_PROXY_SSL_HEADER=HTTP_X_FORWARDED_PROTO (it must set
# that header itself, never pass the client's on).
SECURE_PROXY_SSL_HEADER = ((os.environ["SECURE_PROXY_SSL_HEADER"], "https")
                           if os.environ.get("SECURE_PROXY_SSL_HEADER") else None)
SECURE_CONTENT_TYPE_NOSNIFF = True
SECURE_REFERRER_POLICY = "same-origin"
X_FRAME_OPTIONS = "DENY"

# --- Content-Security-Policy (django-csp) -----------------------------------------------------
# Scripts come from our own static files only (templates have no inline scripts or handlers; data for the
# scripts travels in json_script blocks, which are never executed). Styles allow inline: plotly.js writes
# style attributes into its SVG. The lattice page adds 'unsafe-eval' for itself: plotly's WebGL traces
# compile their shaders' glue code with Function() (views/lattice.py).
CONTENT_SECURITY_POLICY = {
    "DIRECTIVES": {
        "default-src": ["'self'"],
        "script-src": ["'self'"],
        "style-src": ["'self'", "'unsafe-inline'"],
        "img-src": ["'self'", "data:", "blob:"],
        "font-src": ["'self'", "data:"],
        "connect-src": ["'self'"],
        "object-src": ["'none'"],
        "base-uri": ["'none'"],
        "form-action": ["'self'"],
        "frame-ancestors": ["'none'"],
    },
}

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "axes",
    "csp",
    "accounts",
    "anonymizer_app",
    "hierarchy_editor",
    "policies",
    "rest_framework",  # the HTTP API (anonymizer_app/api)
    "drf_spectacular",
    "drf_spectacular_sidecar",  # Swagger UI's files for /api/v1/docs/, served as static files
]

# --- The HTTP API (anonymizer_app/api, docs/guide/http-api.md) -------------------------------------
# Token-only: a key from the account page in "Authorization: Bearer <key>". No session authentication, so a
# logged-in browser cannot be made to call the API across sites (no CSRF to hold).
REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": ["anonymizer_app.api.authentication.ApiTokenAuthentication"],
    # IsAuthenticated, then the key's scope for the view (api/permissions.py: read, run or admin)
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticated",
                                   "anonymizer_app.api.permissions.HasKeyScope"],
    # per account and per kind of expensive request (api/throttling.py); requests without a valid key are
    # limited per address by the authentication itself (it runs before any throttle class)
    "DEFAULT_THROTTLE_CLASSES": ["anonymizer_app.api.throttling.KeyThrottle",
                                 "anonymizer_app.api.throttling.ActionThrottle"],
    "DEFAULT_RENDERER_CLASSES": ["rest_framework.renderers.JSONRenderer"],
    "DEFAULT_PARSER_CLASSES": ["anonymizer_app.api.parsers.BoundedJSONParser", "rest_framework.parsers.MultiPartParser",
                               "rest_framework.parsers.FormParser"],
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    "EXCEPTION_HANDLER": "anonymizer_app.api.errors.exception_handler",
    "URL_FORMAT_OVERRIDE": None,  # ?format= is the download's file format (csv, tsv, parquet, ...), not DRF's
}
SPECTACULAR_SETTINGS = {
    "TITLE": "Anonymizer HTTP API",
    "DESCRIPTION": "Datasets, columns, hierarchies, runs and their results, as in the web app. Every object "
                   "belongs to the owner of the API key; another account's is a 404.",
    "VERSION": "1",
    "SERVE_INCLUDE_SCHEMA": False,
    "SERVE_AUTHENTICATION": [],  # the schema and the docs page are public: they describe, they hold no data
    "SERVE_PERMISSIONS": ["rest_framework.permissions.AllowAny"],
    "SWAGGER_UI_DIST": "SIDECAR",  # no CDN: the files come from drf-spectacular-sidecar
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
    "COMPONENT_SPLIT_REQUEST": True,
    "SCHEMA_PATH_PREFIX": "/api/v1",
    "PREPROCESSING_HOOKS": ["anonymizer_app.api.schema.only_v1"],
    "POSTPROCESSING_HOOKS": ["drf_spectacular.hooks.postprocess_schema_enums",
                             "anonymizer_app.api.schema.error_responses"],
    "ENUM_NAME_OVERRIDES": {"ColumnTypeEnum": "anonymizer_app.models.TYPE_CHOICES",
                            "ColumnRoleEnum": "anonymizer_app.models.ROLE_CHOICES",
                            # one name per choice set (drf-spectacular warns, and `check --deploy` must be clean)
                            "AutoYesNoEnum": ["auto", "yes", "no"],
                            "DatasetLayoutEnum": "anonymizer_app.models.Dataset.LAYOUT_CHOICES",
                            "UploadLayoutEnum": ["auto", "table", "transactions"]},
}

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "csp.middleware.CSPMiddleware",
    "anonymizer_app.middleware.NoStoreMiddleware",
    # last: it turns a lockout (too many failed logins) into its page
    "axes.middleware.AxesMiddleware",
]

# --- Login throttling (django-axes) ------------------------------------------------------------
AUTHENTICATION_BACKENDS = [
    "axes.backends.AxesStandaloneBackend",
    "django.contrib.auth.backends.ModelBackend",
]
AXES_ENABLED = envbool("AXES_ENABLED", "True")
AXES_FAILURE_LIMIT = envint("AXES_FAILURE_LIMIT", 5)
AXES_COOLOFF_TIME = timedelta(minutes=envint("AXES_COOLOFF_MINUTES", 15))
AXES_LOCKOUT_PARAMETERS = [["username", "ip_address"]]
AXES_RESET_ON_SUCCESS = True
AXES_LOCKOUT_TEMPLATE = "registration/locked_out.html"
AXES_VERBOSE = False
# the client address behind ANONYMIZER_TRUSTED_PROXIES (accounts/client_address.py), as the rate limits use it
AXES_CLIENT_IP_CALLABLE = "accounts.client_address.axes_client_ip"

ROOT_URLCONF = "anonymizer_app.urls"
WSGI_APPLICATION = "anonymizer_app.wsgi.application"

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

# --- Database -------------------------------------------------------------------------------
# DATABASE_URL, e.g. postgres://postgres@127.0.0.1:5432/anonymizer; default: SQLite under var/.
# On PostgreSQL a connection is kept for DATABASE_CONN_MAX_AGE seconds (default 60; checked before reuse)
# instead of a new server process forked for every request; SQLite opens its file in no time (default 0).
_POSTGRES = os.environ.get("DATABASE_URL", "").startswith(("postgres:", "postgresql:", "pgsql:"))
DATABASES = {
    "default": dj_database_url.config(
        default=f"sqlite:///{VAR_DIR / 'db.sqlite3'}",
        conn_max_age=envint("DATABASE_CONN_MAX_AGE", 60 if _POSTGRES else 0),
        conn_health_checks=True,
    )
}
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    # The web process and the Celery workers write to the same file: wait for locks instead of
    # failing with "database is locked", take the write lock up front, and let readers run
    # alongside a writer (WAL). Deleted rows are overwritten with zeros (secure_delete: erasure must not
    # leave personal data in the file's free pages, whatever the SQLite build's default).
    DATABASES["default"].setdefault("OPTIONS", {}).update(
        {
            "timeout": 30,
            "transaction_mode": "IMMEDIATE",
            "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL; PRAGMA secure_delete=ON;",
        }
    )

DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]

LOGIN_URL = "/accounts/login/"
LOGIN_REDIRECT_URL = "/"
LOGOUT_REDIRECT_URL = "/accounts/login/"

LANGUAGE_CODE = "en-us"
TIME_ZONE = os.environ.get("TIME_ZONE", "UTC")
USE_I18N = True
USE_TZ = True

# --- Static and media files -----------------------------------------------------------------
STATIC_URL = "/static/"


def _package_folder(name: str) -> Path:
    """An installed package's folder, found without importing the package."""
    spec = importlib.util.find_spec(name)
    if spec is None or spec.origin is None:
        from django.core.exceptions import ImproperlyConfigured

        raise ImproperlyConfigured(f"the package {name} is not installed (pip install -e .)")
    return Path(spec.origin).parent


# plotly.js is served locally from the plotly package (no CDN): /static/vendor/plotly/plotly.min.js; the package is
# found, not imported (importing plotly costs every process, the CLI's included, ~20 ms)
STATICFILES_DIRS = [BASE_DIR / "static", ("vendor/plotly", _package_folder("plotly") / "package_data")]
STATIC_ROOT = Path(os.environ.get("STATIC_ROOT", VAR_DIR / "static"))
# Development serves straight from the app/static folders (no collectstatic needed for `make run`); with DEBUG
# off, whitenoise serves what `make serve` collected into STATIC_ROOT (var/static).
WHITENOISE_USE_FINDERS = envbool("WHITENOISE_USE_FINDERS", "True" if DEBUG else "False")
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    # files 0644, folders 0755: static files are public (anonymizer_app/static_storage.py)
    "staticfiles": {"BACKEND": "anonymizer_app.static_storage.PublicStaticFilesStorage"},
}

MEDIA_URL = "/media/"
MEDIA_ROOT = Path(os.environ.get("MEDIA_ROOT", VAR_DIR / "media"))
# A Dask cluster for the runs it can take (docs/operations/cluster.md): tcp://HOST:PORT of a
# scheduler whose workers see MEDIA_ROOT under the same path, or local:N (N worker processes started per
# run). Empty: every run stays in the Celery worker.
ANONYMIZER_DASK_CLUSTER = os.environ.get("ANONYMIZER_DASK_CLUSTER", "").strip()

# Secrets at rest (services/vault.py, docs/vault.md): the vault's Fernet key, its own secret (never derived from
# SECRET_KEY), required with DEBUG off (checks.py); old keys still decrypt (rotation). Unset in development
# (DEBUG on or the development SECRET_KEY): a development key generated once into the file below (0600).
ANONYMIZER_VAULT_KEY = os.environ.get("ANONYMIZER_VAULT_KEY", "").strip()
ANONYMIZER_VAULT_OLD_KEYS = envlist("ANONYMIZER_VAULT_OLD_KEYS", "")
ANONYMIZER_VAULT_DEVELOPMENT_KEY_FILE = Path(os.environ.get("ANONYMIZER_VAULT_DEVELOPMENT_KEY_FILE",
                                                            VAR_DIR / "vault-development.key"))

# --- Upload limits --------------------------------------------------------------------------
ANONYMIZER_MAX_UPLOAD_MB = envint("ANONYMIZER_MAX_UPLOAD_MB", 200)
ANONYMIZER_MAX_ROWS = envint("ANONYMIZER_MAX_ROWS", 2_000_000)
ANONYMIZER_MAX_COLUMNS = envint("ANONYMIZER_MAX_COLUMNS", 200)
# Checked while a table is read (engine/io/reader.py Limits): a cell, a column name (the database stores 255),
# a workbook's unpacked parts and the unpacked : packed ratio of one part (zip bombs).
ANONYMIZER_MAX_CELL_CHARS = envint("ANONYMIZER_MAX_CELL_CHARS", 32_767)
ANONYMIZER_MAX_HEADER_CHARS = min(envint("ANONYMIZER_MAX_HEADER_CHARS", 255), 255)
ANONYMIZER_MAX_XLSX_MB = envint("ANONYMIZER_MAX_XLSX_MB", 100)
ANONYMIZER_MAX_XLSX_RATIO = envint("ANONYMIZER_MAX_XLSX_RATIO", 100)
# SQL sources and destinations (services/sql.py): SQLite files the web app may open (empty: none; the CLI
# opens any), the statement timeout of a query and how long a connection may take.
ANONYMIZER_SQL_SQLITE_DIR = os.environ.get("ANONYMIZER_SQL_SQLITE_DIR", "").strip()
ANONYMIZER_SQL_TIMEOUT_SECONDS = envint("ANONYMIZER_SQL_TIMEOUT_SECONDS", 300)
ANONYMIZER_SQL_CONNECT_TIMEOUT_SECONDS = envint("ANONYMIZER_SQL_CONNECT_TIMEOUT_SECONDS", 5)
# The database servers web users may name (host names or addresses, comma-separated; empty: any server but
# the app's own database). The app connects to what a user names: a list keeps it off other internal hosts.
ANONYMIZER_SQL_ALLOWED_HOSTS = envlist("ANONYMIZER_SQL_ALLOWED_HOSTS", "")
# Research repositories (services/remote.py): the only hosts the app may reach for Zenodo and Dataverse (https),
# hosts (host:port) allowed over plain http (a local test server only), and the time a request may take.
ANONYMIZER_REMOTE_HOSTS = envlist("ANONYMIZER_REMOTE_HOSTS", "zenodo.org,sandbox.zenodo.org,demo.dataverse.org,"
                                  "dataverse.harvard.edu,dataverse.nl,borealisdata.ca")
ANONYMIZER_REMOTE_HTTP_HOSTS = envlist("ANONYMIZER_REMOTE_HTTP_HOSTS", "")
ANONYMIZER_REMOTE_TIMEOUT_SECONDS = envint("ANONYMIZER_REMOTE_TIMEOUT_SECONDS", 30)
# Uploaded files stream to disk past 10 MB; the limit above is enforced by the upload form.
FILE_UPLOAD_MAX_MEMORY_SIZE = 10 * 1024 * 1024
# uploads above ANONYMIZER_MAX_UPLOAD_MB are cut off on their declared length (anonymizer_app/uploads.py)
FILE_UPLOAD_HANDLERS = [
    "anonymizer_app.uploads.UploadLimitHandler",
    "django.core.files.uploadhandler.MemoryFileUploadHandler",
    "django.core.files.uploadhandler.TemporaryFileUploadHandler",
]
# Stored uploads and their folders: owner only (services/storage.py writes its own files 0600 too).
FILE_UPLOAD_PERMISSIONS = 0o600
FILE_UPLOAD_DIRECTORY_PERMISSIONS = 0o700
# Non-file request bodies (e.g. hierarchy JSON posted by the editor) may be large.
DATA_UPLOAD_MAX_MEMORY_SIZE = envint("DATA_UPLOAD_MAX_MEMORY_MB", 64) * 1024 * 1024
DATA_UPLOAD_MAX_NUMBER_FIELDS = 20_000

# --- Hierarchies: upload, builders, editor (hierarchy_editor/) --------------------------------
HIERARCHY_MAX_UPLOAD_MB = envint("HIERARCHY_MAX_UPLOAD_MB", 20)
HIERARCHY_MAX_LABEL_CHARS = envint("HIERARCHY_MAX_LABEL_CHARS", 1000)  # a label's characters (files, editor)
HIERARCHY_MAX_LEVELS = envint("HIERARCHY_MAX_LEVELS", 64)  # levels of a hierarchy, the values included
HIERARCHY_BUILDER_MAX_INTERVALS = envint("HIERARCHY_BUILDER_MAX_INTERVALS", 100_000)  # one builder's intervals
HIERARCHY_EDITOR_MAX_BODY_BYTES = envint("HIERARCHY_EDITOR_MAX_BODY_BYTES", 64 * 1024)  # one edit's JSON
HIERARCHY_EDITOR_MAX_NODES = envint("HIERARCHY_EDITOR_MAX_NODES", 200_000)  # nodes of an edited tree
HIERARCHY_DRAFTS_PER_USER = envint("HIERARCHY_DRAFTS_PER_USER", 10)  # editing sessions kept per user
HIERARCHY_DRAFT_BYTES_PER_USER = envint("HIERARCHY_DRAFT_BYTES_PER_USER", 100 * 1024 * 1024)
HIERARCHY_PENDING_PER_USER = envint("HIERARCHY_PENDING_PER_USER", 5)  # uploads waiting for a conflict resolution

# --- Erasure and retention (services/erasure.py) ----------------------------------------------
# Results (finished jobs of every kind, their stored rows and lattice caches) older than this many days are
# purged by every worker once an hour and by `manage.py purge_results`; 0: kept until deleted.
ANONYMIZER_RESULT_RETENTION_DAYS = envint("ANONYMIZER_RESULT_RETENTION_DAYS", 0)
ANONYMIZER_RETENTION_CHECK_SECONDS = float(os.environ.get("ANONYMIZER_RETENTION_CHECK_SECONDS", "3600"))
# Media files that belong to no object are removed by the same check once they are this old.
ANONYMIZER_ORPHAN_GRACE_SECONDS = float(os.environ.get("ANONYMIZER_ORPHAN_GRACE_SECONDS", "86400"))

# --- Celery ---------------------------------------------------------------------------------
# With REDIS_URL: Redis is broker and result backend. Without it: kombu's filesystem transport
# under var/broker/ (works across processes on one machine, nothing to install). Job state and
# progress live in the Django database, so no result backend is needed.
REDIS_URL = os.environ.get("REDIS_URL", "")
BROKER_DIR = Path(os.environ.get("CELERY_BROKER_DIR", VAR_DIR / "broker"))
# A queue name of its own lets tests (or several deployments) share one Redis without mixing jobs.
CELERY_TASK_DEFAULT_QUEUE = os.environ.get("CELERY_QUEUE", "celery")
if REDIS_URL:
    CELERY_BROKER_URL = REDIS_URL
    CELERY_RESULT_BACKEND: str | None = REDIS_URL
    CELERY_BROKER_TRANSPORT_OPTIONS: dict = {}
else:
    CELERY_BROKER_URL = "filesystem://localhost//"
    CELERY_RESULT_BACKEND = None
    CELERY_BROKER_TRANSPORT_OPTIONS = {
        # Producer (web) and consumers (workers) share one queue folder.
        "data_folder_in": str(BROKER_DIR / "queue"),
        "data_folder_out": str(BROKER_DIR / "queue"),
        "processed_folder": str(BROKER_DIR / "processed"),
        "store_processed": False,
        "control_folder": str(BROKER_DIR / "control"),
    }
CELERY_TASK_ALWAYS_EAGER = False
CELERY_TASK_SERIALIZER = "json"
CELERY_ACCEPT_CONTENT = ["json"]
CELERY_RESULT_SERIALIZER = "json"
# A job's message is acknowledged when the job ends, and given back when its worker process dies
# (killed, out of memory): another worker then re-runs it (services.jobs._claim).
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
# Liveness (services.jobs): a running job's worker touches its heartbeat every few seconds; a job whose
# heartbeat is older than the stale limit is queued again by the sweep (every worker runs it periodically,
# `make run` at start, `manage.py sweep_jobs` on demand), and failed with the cause after the attempts.
ANONYMIZER_HEARTBEAT_SECONDS = float(os.environ.get("ANONYMIZER_HEARTBEAT_SECONDS", "5"))
ANONYMIZER_JOB_STALE_SECONDS = float(os.environ.get("ANONYMIZER_JOB_STALE_SECONDS", "60"))
ANONYMIZER_JOB_MAX_ATTEMPTS = envint("ANONYMIZER_JOB_MAX_ATTEMPTS", 3)
ANONYMIZER_SWEEP_SECONDS = float(os.environ.get("ANONYMIZER_SWEEP_SECONDS", "30"))
# Every running job's scratch files (the disk hybrid's database, class counts) live in a folder of its own,
# <ANONYMIZER_JOB_TMP>/<job id>/ (0700), never in the system temp folder: removed when the job ends in any
# state, and by the sweep when its worker died (services.storage.job_scratch, services.jobs). Local to the
# worker's machine; independent of MEDIA_ROOT.
ANONYMIZER_JOB_TMP = Path(os.environ.get("ANONYMIZER_JOB_TMP", VAR_DIR / "tmp" / "jobs"))
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
CELERY_TIMEZONE = TIME_ZONE

# --- Job time limits (services.jobs.time_limit; docs/limits.md) -------------------------------
# Every job runs under a Celery soft time limit (the job is stopped, failed with "stopped after N s: the time
# limit for <kind> jobs (setting ...)" and its partial outputs discarded) and a hard one GRACE seconds later
# (the worker process is killed if the job did not stop). ANONYMIZER_JOB_TIME_LIMIT_SECONDS is the default;
# ANONYMIZER_JOB_TIME_LIMIT_<KIND>_SECONDS sets one kind's (KIND: run, comparison, experiment, lattice,
# lattice-keep ... upper-cased, '-' as '_'). Needs the prefork pool (Celery's default; the limits are signals).
def _job_time_limits() -> tuple[float, float, dict[str, float]]:
    def seconds(name: str, default: str) -> float:
        text = os.environ.get(name, default).strip()
        try:
            value = float(text)
        except ValueError:
            value = float("nan")
        if not 0 < value < 10**7:  # nan too
            from django.core.exceptions import ImproperlyConfigured

            raise ImproperlyConfigured(f"{name}={text!r}: give a number of seconds above 0 and below 10,000,000")
        return value

    prefix, suffix = "ANONYMIZER_JOB_TIME_LIMIT_", "_SECONDS"
    kinds = {name[len(prefix):-len(suffix)].lower().replace("_", "-"): seconds(name, "")
             for name in os.environ if name.startswith(prefix) and name.endswith(suffix)
             and name != prefix + "GRACE" + suffix and len(name) > len(prefix + suffix)}
    return seconds(prefix + "SECONDS", "3600"), seconds(prefix + "GRACE" + suffix, "60"), kinds


ANONYMIZER_JOB_TIME_LIMIT_SECONDS, ANONYMIZER_JOB_TIME_LIMIT_GRACE_SECONDS, ANONYMIZER_JOB_TIME_LIMITS = \
    _job_time_limits()
# services.jobs.submit_job puts its kind's limits on every message; these defaults bound a message without them
CELERY_TASK_SOFT_TIME_LIMIT = ANONYMIZER_JOB_TIME_LIMIT_SECONDS
CELERY_TASK_TIME_LIMIT = ANONYMIZER_JOB_TIME_LIMIT_SECONDS + ANONYMIZER_JOB_TIME_LIMIT_GRACE_SECONDS

# --- Floods, lockout and API keys (docs/security.md, "Lockout, throttling and API keys") -------
# The cache holds the rate-limit and password-check counters: Redis with REDIS_URL (shared by every process of
# the server, as `make serve` requires), else the process's memory (one process: `make run`, tests).
if REDIS_URL:
    CACHES = {"default": {"BACKEND": "django.core.cache.backends.redis.RedisCache", "LOCATION": REDIS_URL,
                          "KEY_PREFIX": os.environ.get("ANONYMIZER_CACHE_PREFIX", "anonymizer"),
                          "OPTIONS": {"socket_connect_timeout": 2, "socket_timeout": 2}}}
else:
    CACHES = {"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache", "LOCATION": "anonymizer"}}
ANONYMIZER_THROTTLE_CACHE = "default"
# Addresses or networks of the reverse proxies in front of gunicorn (comma-separated, e.g. 127.0.0.1 or
# 10.0.0.0/8). Only a request from one of them has its client taken from X-Forwarded-For; empty: REMOTE_ADDR.
ANONYMIZER_TRUSTED_PROXIES = envlist("ANONYMIZER_TRUSTED_PROXIES", "")
# N/second|minute|hour|day, or "off"; each from ANONYMIZER_THROTTLE_<NAME> (e.g. ANONYMIZER_THROTTLE_LOGIN).
# Per account when signed in (or per API key's account), else per client address.
_THROTTLE_DEFAULTS = {
    "api_key": "1200/minute",  # every API request of one account, all its keys together
    "api_address": "60/minute",  # API requests without a valid key (none, unknown, revoked, expired), per address
    "login": "30/minute",  # log-in form posts, per address (the lockout below is per user and address)
    "signup": "10/hour",
    "upload": "120/hour",  # table, DICOM, items and hierarchy uploads
    "run": "240/hour",  # run submissions of every kind (anonymization, risk, DP, experiments, items)
    "sql": "60/hour",  # SQL imports and exports, repository (Zenodo, Dataverse) imports and deposits
    "comparison": "240/hour",
    "lattice": "1200/hour",  # the solution lattice's data, nodes and keeps
    "download": "1200/hour",  # result files, reports, configurations
    "reidentification": "30/hour",
}
ANONYMIZER_THROTTLE_RATES = {name: os.environ.get(f"ANONYMIZER_THROTTLE_{name.upper()}", default).strip()
                             for name, default in _THROTTLE_DEFAULTS.items()}
# The re-identification table's password check: a counter of its own per (account, address), not the login's.
ANONYMIZER_REID_FAILURE_LIMIT = envint("ANONYMIZER_REID_FAILURE_LIMIT", 5)
ANONYMIZER_REID_COOLOFF_MINUTES = envint("ANONYMIZER_REID_COOLOFF_MINUTES", 15)
# API keys: the expiry a new key gets unless its owner picks a shorter one, and the longest allowed (days).
ANONYMIZER_API_KEY_MAX_DAYS = max(1, envint("ANONYMIZER_API_KEY_MAX_DAYS", 365))
ANONYMIZER_API_KEY_DEFAULT_DAYS = min(max(1, envint("ANONYMIZER_API_KEY_DEFAULT_DAYS", 90)),
                                      ANONYMIZER_API_KEY_MAX_DAYS)

# --- Folders created at startup -------------------------------------------------------------
_STARTUP_FOLDERS = (
    VAR_DIR,
    MEDIA_ROOT,
    STATIC_ROOT,
    BROKER_DIR / "queue",
    BROKER_DIR / "processed",
    BROKER_DIR / "control",
)
for _folder in _STARTUP_FOLDERS:
    _folder.mkdir(parents=True, exist_ok=True)

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "root": {"handlers": ["console"], "level": os.environ.get("LOG_LEVEL", "INFO")},
    "loggers": {
        "django.db.backends": {"level": "INFO"},
    },
}

# ---- differential privacy: the ε budget of a dataset (issue 29, item 10) -------------------------------------
# The budget a dataset has until its owner sets one on its DP page (empty: none; releases are still recorded in
# its ledger). Sequential composition: the ε of every release of the dataset add up (services/privacy_ledger.py).
ANONYMIZER_DP_DEFAULT_EPSILON_BUDGET = (float(os.environ["ANONYMIZER_DP_DEFAULT_EPSILON_BUDGET"])
                                        if os.environ.get("ANONYMIZER_DP_DEFAULT_EPSILON_BUDGET") else None)

# ---- the login page's demo account (issue 29, item 11) --------------------------------------------------------
# "Try it: user demo, password demo" while `manage.py load_demo`'s account exists with that password. Off unless
# set, except in DEBUG: a production copy never tells a password by default (accounts/views.py demo_login).
ANONYMIZER_SHOW_DEMO_LOGIN = envbool("ANONYMIZER_SHOW_DEMO_LOGIN", "true" if DEBUG else "false")
