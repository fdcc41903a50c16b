"""Settings shared by every environment. Each value comes from config.env."""

import tempfile
from datetime import timedelta
from pathlib import Path

import orjson

from config.cache import cache_outage_tolerant
from config.env import BASE_DIR, env
from config.settings.safety import DEFAULT_SECRET_KEY

SECRET_KEY = env.str("DJANGO_SECRET_KEY", default=DEFAULT_SECRET_KEY)
DEBUG = env.bool("DJANGO_DEBUG", default=False)
ALLOWED_HOSTS = env.list("DJANGO_ALLOWED_HOSTS", default=["127.0.0.1", "localhost"])
CSRF_TRUSTED_ORIGINS = env.list("DJANGO_CSRF_TRUSTED_ORIGINS", default=[])

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "config.sessions",
    "django.contrib.messages",
    "whitenoise.runserver_nostatic",
    "django.contrib.staticfiles",
    "rest_framework",
    "axes",
    "django_filters",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "annotate",
    "qc",
    "crowd",
    "exports",
    "frontend",
]

MIDDLEWARE = [
    "config.middleware.RequestIdMiddleware",
    # Before anything reads the Host header or redirects to HTTPS (config/health.py).
    "config.health.HealthUrlsMiddleware",
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "config.middleware.OutageTolerantSessionMiddleware",
    # Django's LocaleMiddleware where its docs put it (after sessions, before common), with
    # the signed-in user's stored choice first and the API left in English (frontend/locale.py).
    "frontend.locale.PageLocaleMiddleware",
    "django.middleware.common.CommonMiddleware",
    # Before CSRF's check, which reads a form's body (config/request_body_limits.py).
    "config.request_body_limits.RequestBodyLimitMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "config.auth.SignedInUserMiddleware",
    # A one-time password is replaced before anything else (frontend/password_change_required.py).
    "frontend.password_change_required.PasswordChangeRequiredMiddleware",
    "config.middleware.LazyMessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "config.csp.SitePolicyCSPMiddleware",
    "config.exceptions.ApplicationErrorMiddleware",
    "config.middleware.DatabaseUnavailableMiddleware",
    "config.middleware.BrokerUnavailableMiddleware",
    # Last, as axes asks: turns a locked-out sign-in into its answer (config/login_lockout.py).
    "axes.middleware.AxesMiddleware",
]

ROOT_URLCONF = "config.urls"
WSGI_APPLICATION = "config.wsgi.application"
ASGI_APPLICATION = "config.asgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [],
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
    "default": env.db_url("DATABASE_URL", default=f"sqlite:///{BASE_DIR / 'db.sqlite3'}"),
}
if DATABASES["default"]["ENGINE"] == "django.db.backends.postgresql":
    # Django's, with a health check that asks the socket instead of sending SELECT 1.
    DATABASES["default"]["ENGINE"] = "config.postgresql"
    # PostgreSQL's default random_page_cost (4) is for spinning disks. With it, a chunk's
    # queries (an export's 500 items, their 1,500 annotations) chose sequential scans of
    # whole tables, so each chunk cost as much as the table and a 100k-item export grew
    # with the square of its size; 1.1, the usual figure for SSDs and cached data, makes
    # them index scans (150 ms -> 15 ms a chunk). Sent as a connection option, so it holds
    # on any server, managed ones included; DATABASE_RANDOM_PAGE_COST="" leaves the server's.
    random_page_cost = env.str("DATABASE_RANDOM_PAGE_COST", default="1.1")
    if random_page_cost:
        options = DATABASES["default"].setdefault("OPTIONS", {})
        options["options"] = (
            f"{options.get('options', '')} -c random_page_cost={float(random_page_cost)}"
        ).strip()
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    # `make run` has a web server and a background worker writing to one SQLite file: WAL
    # lets readers go on beside a writer, and a transaction that takes the write lock when
    # it begins (IMMEDIATE) waits its turn instead of failing at once with "database is
    # locked" when it upgrades from reading to writing.
    DATABASES["default"].setdefault("OPTIONS", {}).update(
        {
            "transaction_mode": "IMMEDIATE",
            "timeout": env.int("SQLITE_BUSY_TIMEOUT_SECONDS", default=30),
            "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;",
        }
    )
DATABASES["default"]["CONN_MAX_AGE"] = env.int("DATABASE_CONN_MAX_AGE", default=0)
DATABASES["default"]["ATOMIC_REQUESTS"] = False
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

# A Redis outage reads as an empty cache, not as failed requests (config/cache.py).
CACHES = {
    "default": cache_outage_tolerant(
        env.cache_url("CACHE_URL", default="locmemcache://"),
        timeout_seconds=env.float("CACHE_TIMEOUT_SECONDS", default=1.0),
    )
}
# Each Redis error the cache ignored, logged (django-redis).
DJANGO_REDIS_LOG_IGNORED_EXCEPTIONS = True

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]
# axes first: it refuses a locked-out sign-in before any password is checked.
AUTHENTICATION_BACKENDS = ["axes.backends.AxesStandaloneBackend", "config.auth.ModelBackend"]
# Sign-in lock-out (django-axes, config/login_lockout.py): after LOGIN_FAILURE_LIMIT
# failures for one user name from one address, that name is locked from that address (from
# elsewhere it still signs in); after LOGIN_ADDRESS_FAILURE_LIMIT failures from one address,
# whatever the names, the address is locked. A lock lasts LOGIN_COOLOFF_MINUTES, on the form
# and for the API's Basic authentication alike. Failures during the lock-out do not extend
# it, so the time the message states holds. Each failure is kept (AccessFailureLog) beside
# the counters (AccessAttempt) in the admin; site staff unlock an account from the users
# API (audited), or delete a counter in the admin, or run
# `manage.py axes_reset_username NAME` / `axes_reset_ip ADDRESS`.
AXES_HANDLER = "config.login_lockout.PairAndAddressLockoutHandler"
AXES_FAILURE_LIMIT = env.int("LOGIN_FAILURE_LIMIT", default=5)
LOGIN_ADDRESS_FAILURE_LIMIT = env.int("LOGIN_ADDRESS_FAILURE_LIMIT", default=50)
AXES_COOLOFF_TIME = timedelta(minutes=env.int("LOGIN_COOLOFF_MINUTES", default=15))
AXES_LOCKOUT_PARAMETERS = [["username", "ip_address"], "ip_address"]
AXES_RESET_COOL_OFF_ON_FAILURE_DURING_LOCKOUT = False
AXES_ENABLE_ACCESS_FAILURE_LOG = True
# No start-up banner on every process (manage.py commands, workers): failures still log.
AXES_VERBOSE = False
AXES_LOCKOUT_CALLABLE = "config.login_lockout.lockout_response"
# The client's address as the crowd entry's rate limit reads it: X-Forwarded-For only from
# the CROWD_TRUSTED_PROXIES nearest proxies, so nobody dodges the limit by naming addresses.
AXES_CLIENT_IP_CALLABLE = "crowd.throttling.client_address"
# Sessions in the database, read with their signed-in user in one statement.
SESSION_ENGINE = "config.sessions.backend"
LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "home"
LOGOUT_REDIRECT_URL = "login"

LANGUAGE_CODE = "en"
# The interface's languages; each user picks one (the header's switcher), else the browser's
# Accept-Language decides. Imported texts are data and keep their own language.
LANGUAGES = [("en", "English"), ("zh-hans", "简体中文")]
LOCALE_PATHS = [BASE_DIR / "locale"]
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATIC_ROOT = env.path("DJANGO_STATIC_ROOT", default=BASE_DIR / "staticfiles")
MEDIA_URL = "media/"
MEDIA_ROOT = env.path("DJANGO_MEDIA_ROOT", default=BASE_DIR / "media")
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "whitenoise.storage.CompressedStaticFilesStorage"},
}

REST_FRAMEWORK = {
    # orjson (drf-orjson-renderer) writes and reads the API's JSON: "next item" answers
    # with every token of the item, and the standard library's encoder took a noticeable
    # share of that request.
    "DEFAULT_RENDERER_CLASSES": [
        "drf_orjson_renderer.renderers.ORJSONRenderer",
        "rest_framework.renderers.BrowsableAPIRenderer",
    ],
    # Keys as the standard library writes them: error details are keyed by list index.
    "ORJSON_RENDERER_OPTIONS": (orjson.OPT_NON_STR_KEYS,),
    # JSON bodies only: a form carries text alone, so {"active": 0} sent as a form would
    # arrive as "0" and read as false. The upload operations name their own parsers.
    "DEFAULT_PARSER_CLASSES": ["drf_orjson_renderer.parsers.ORJSONParser"],
    # The test client sends JSON unless a test asks for a form (the uploads do).
    "TEST_REQUEST_DEFAULT_FORMAT": "json",
    # Missing credentials get 401 with a challenge fit for the caller (config/api_auth.py).
    # Personal API tokens (Bearer) after the session, so that a signed-in page's requests
    # never look at a header; their limits are checked as they are accepted.
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "config.api_auth.SessionAuthentication",
        "annotate.api_token_auth.ApiTokenAuthentication",
        "config.api_auth.BasicAuthentication",
    ],
    # An archived project answers every write 409 (annotate/permissions.py).
    "DEFAULT_PERMISSION_CLASSES": [
        "rest_framework.permissions.IsAuthenticated",
        "annotate.permissions.ProjectNotArchived",
    ],
    # DRF's LimitOffsetPagination, refusing a bad limit or offset (config/pagination.py).
    "DEFAULT_PAGINATION_CLASS": "config.pagination.LimitOffsetPagination",
    "PAGE_SIZE": 50,
    "DEFAULT_FILTER_BACKENDS": ["django_filters.rest_framework.DjangoFilterBackend"],
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    "EXCEPTION_HANDLER": "config.exceptions.api_exception_handler",
    "DEFAULT_CONTENT_NEGOTIATION_CLASS": "config.negotiation.FirstRendererNegotiation",
}
SPECTACULAR_SETTINGS = {
    "TITLE": "Rationale Workbench API",
    "DESCRIPTION": "Projects, dataset import, annotation, quality control and export of rationales.",
    "VERSION": "0.1.0",
    "SERVE_INCLUDE_SCHEMA": False,
    # Ids in paths (config/url_converters.py) are integers, as under Django's `int`.
    "PATH_CONVERTER_OVERRIDES": {"id": int},
    # Requests and responses as separate components: a request's text fields then say
    # minLength 1 where blank is refused, and read-only fields stay out of request bodies.
    "COMPONENT_SPLIT_REQUEST": True,
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
    # No deep links: Swagger UI draws each as a link inside the operation's button, which
    # keyboard and screen-reader users cannot tell apart (axe: nested-interactive).
    "SWAGGER_UI_SETTINGS": {"deepLinking": False, "persistAuthorization": False},
    "ENUM_NAME_OVERRIDES": {
        "JobStatusEnum": "annotate.models.JobStatus.choices",
        "ExportStatusEnum": "exports.models.ExportStatus.choices",
    },
}

# Celery: with no broker configured, tasks run eagerly in the calling process.
CELERY_BROKER_URL = env.str("CELERY_BROKER_URL", default="")
# Only the tasks that need a result keep one: an export's chunks, which their chord's
# backend counts before it starts the assembly (on a Redis broker, the broker's Redis
# unless CELERY_RESULT_BACKEND says otherwise). Every other task ignores its own.
CELERY_TASK_IGNORE_RESULT = True
# The embedded broker of `make run` (`manage.py serve`): kombu's filesystem transport, its
# messages files in a folder that the web server and the worker share, and results (an
# export's chord counts its chunks) as files beside them. No server to install or start.
CELERY_EMBEDDED_DIR = Path(
    env.str("CELERY_EMBEDDED_DIR", default=str(BASE_DIR / ".run" / "celery"))
)
if CELERY_BROKER_URL.startswith("filesystem://"):
    CELERY_BROKER_TRANSPORT_OPTIONS = {
        "data_folder_in": str(CELERY_EMBEDDED_DIR / "messages"),
        "data_folder_out": str(CELERY_EMBEDDED_DIR / "messages"),
        # The exchanges' tables; by default a `control/` folder wherever the process started.
        "control_folder": str(CELERY_EMBEDDED_DIR / "control"),
        "store_processed": False,
    }
CELERY_RESULT_BACKEND = env.str("CELERY_RESULT_BACKEND", default="") or (
    CELERY_BROKER_URL
    if CELERY_BROKER_URL.startswith(("redis://", "rediss://"))
    else f"file://{CELERY_EMBEDDED_DIR / 'results'}"
    if CELERY_BROKER_URL.startswith("filesystem://")
    else None
)
CELERY_TASK_ALWAYS_EAGER = not CELERY_BROKER_URL
CELERY_TASK_EAGER_PROPAGATES = True
CELERY_TASK_DEFAULT_QUEUE = env.str("CELERY_TASK_DEFAULT_QUEUE", default="rationale-workbench")
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_TASK_TIME_LIMIT = env.int("CELERY_TASK_TIME_LIMIT", default=60 * 60)
CELERY_TASK_SOFT_TIME_LIMIT = env.int("CELERY_TASK_SOFT_TIME_LIMIT", default=55 * 60)
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
# The quality checks: with a broker, beat starts a sweep this often that checks every recent
# submission without a check (qc/services/checks.py). A tick the worker has not taken up
# within the interval (busy with an import, or still sweeping) is dropped, not run late:
# the next sweep checks the same submissions.
QC_CHECK_INTERVAL_SECONDS = env.float("QC_CHECK_INTERVAL_SECONDS", default=1.0)
AGREEMENT_SWEEP_INTERVAL_SECONDS = env.float("AGREEMENT_SWEEP_INTERVAL_SECONDS", default=60.0)
CELERY_BEAT_SCHEDULE = {
    "quality-checks-sweep": {
        "task": "qc.tasks.quality_checks_sweep",
        "schedule": QC_CHECK_INTERVAL_SECONDS,
        "options": {"expires": QC_CHECK_INTERVAL_SECONDS},
    },
    # Housekeeping that would otherwise need a cron job: `clearsessions` and
    # `qc_check_missing` (submissions below the sweep's window), as tasks calling the same
    # code. A tick not taken up within its expiry is dropped; the next one does the work.
    "sessions-clear-expired": {
        "task": "config.sessions.tasks.sessions_clear_expired",
        "schedule": 24 * 60 * 60,
        "options": {"expires": 60 * 60},
    },
    "quality-checks-missing": {
        "task": "qc.tasks.quality_checks_missing",
        "schedule": 60 * 60,
        "options": {"expires": 30 * 60},
    },
    # Uploaded import files past IMPORT_UPLOAD_RETENTION_DAYS (annotate/tasks.py).
    "import-uploads-sweep": {
        "task": "annotate.tasks.import_uploads_sweep",
        "schedule": 24 * 60 * 60,
        "options": {"expires": 60 * 60},
    },
    # Deleted imports, items and projects past DELETED_RESTORE_DAYS, removed for good.
    "deleted-data-purge": {
        "task": "qc.tasks.deleted_data_purge",
        "schedule": 60 * 60,
        "options": {"expires": 30 * 60},
    },
    # Agreement reports whose run went silent (a worker killed mid-chunk) failed, the
    # previous report kept, without waiting for someone to open them (qc/agreement.py,
    # agreement_report_sweep).
    "agreement-report-sweep": {
        "task": "qc.tasks.agreement_report_sweep",
        "schedule": AGREEMENT_SWEEP_INTERVAL_SECONDS,
        "options": {"expires": AGREEMENT_SWEEP_INTERVAL_SECONDS},
    },
    # The data manager's item summaries of every project brought up to date, and those an
    # import that committed late left without one written (qc/services/item_summaries.py).
    "item-summaries-refresh": {
        "task": "qc.tasks.item_summaries_refresh_all",
        "schedule": env.float("ITEM_SUMMARIES_INTERVAL_SECONDS", default=300.0),
        "options": {"expires": 60},
    },
    # What killed exports leave: silent running exports failed, their parts and local work
    # folders removed (exports/services.py, export_work_sweep).
    "export-work-sweep": {
        "task": "exports.tasks.export_work_sweep",
        "schedule": env.float("EXPORT_SWEEP_INTERVAL_SECONDS", default=600.0),
        "options": {"expires": 60},
    },
}

# Where `make docs` builds the documentation site (mkdocs.yml's site_dir), served at /docs/.
DOCS_SITE_DIR = BASE_DIR / "build" / "docs-site"

# A running job whose worker has not reported for this long is marked failed when next read.
JOB_HEARTBEAT_TIMEOUT_SECONDS = env.int("JOB_HEARTBEAT_TIMEOUT_SECONDS", default=120)

# Exports are written in chunks of this many items (and documents), each a part in the
# storage; with a broker, the chunks are spread over the workers (a Celery chord) unless
# EXPORT_CHUNKED is false. A worker's scratch files go to a private folder in
# EXPORT_WORK_DIR, on its own disk.
EXPORT_CHUNK_ITEMS = env.int("EXPORT_CHUNK_ITEMS", default=5000)
EXPORT_CHUNKED = env.bool("EXPORT_CHUNKED", default=True)
# Agreement reports are split the same way (qc/agreement.py): by variant, pair of
# variants, group of workers, cohort and range of AGREEMENT_CHUNK_ITEMS items.
AGREEMENT_CHUNK_ITEMS = env.int("AGREEMENT_CHUNK_ITEMS", default=5000)
AGREEMENT_CHUNKED = env.bool("AGREEMENT_CHUNKED", default=True)
EXPORT_WORK_DIR = env.path(
    "EXPORT_WORK_DIR", default=Path(tempfile.gettempdir()) / "rationale-workbench-exports"
)
# A bundled explainer's run is explained in chunks of this many instances, and an import
# of raw texts tokenized in chunks of this many rows; with a broker, each job's chunks are
# spread over the workers (a chord) unless its switch is false. Either way, the same result.
EXPLAINER_RUN_CHUNK_INSTANCES = env.int("EXPLAINER_RUN_CHUNK_INSTANCES", default=200)
EXPLAINER_RUN_CHUNKED = env.bool("EXPLAINER_RUN_CHUNKED", default=True)
# Registered models (exports.ClassifierModel) are folders under this folder of the storage,
# never elsewhere on the server. Runs of the model explainers (and their chunks) go to the
# Celery queue RW_EXPLAINER_QUEUE, for workers on machines with the `models` extra or a
# GPU; empty, they go to the default queue with every other task.
RW_MODELS_ROOT = env.str("RW_MODELS_ROOT", default="models")
RW_EXPLAINER_QUEUE = env.str("RW_EXPLAINER_QUEUE", default="")
# The device a worker loads models on ("cpu", "cuda", "cuda:1"); empty, rationale_metrics
# chooses (a GPU when there is one).
RW_MODELS_DEVICE = env.str("RW_MODELS_DEVICE", default="")
IMPORT_CHUNK_ROWS = env.int("IMPORT_CHUNK_ROWS", default=2000)
IMPORT_CHUNKED = env.bool("IMPORT_CHUNKED", default=True)

# Dataset import limits: a line or document larger than this is reported, not loaded.
# "Next" and "submit" as one prepared statement each on PostgreSQL for the common case
# (annotate/services/hot_path_sql.py). Off, the general services do everything: the
# tests run both ways, and an operator can switch the statements off without a deploy.
ANNOTATE_HOT_PATH_SQL = env.bool("ANNOTATE_HOT_PATH_SQL", default=True)

IMPORT_MAX_LINE_BYTES = env.int("IMPORT_MAX_LINE_BYTES", default=16 * 1024 * 1024)
# An upload's limit, in bytes: Django's, and nginx's client_max_body_size, rendered from the
# same variable (config/nginx/default.conf.template, docker-compose.yml).
IMPORT_MAX_UPLOAD_BYTES = env.int("IMPORT_MAX_UPLOAD_BYTES", default=1024 * 1024 * 1024)
# An import's check stops at this many problems: a file bad on every line is not read whole.
IMPORT_MAX_PROBLEMS = env.int("IMPORT_MAX_PROBLEMS", default=100)
# Days an accepted import's uploaded file is kept (0: deleted when the import ends); a
# rejected import's file is deleted at once. Older files go in the daily sweep above.
IMPORT_UPLOAD_RETENTION_DAYS = env.int("IMPORT_UPLOAD_RETENTION_DAYS", default=30)
# Days a deleted import, item or project can be restored; the purge sweep below then
# removes it for good (qc/services/lifecycle.py).
DELETED_RESTORE_DAYS = env.int("DELETED_RESTORE_DAYS", default=7)
# Request bodies, in bytes, by kind of request (config/request_body_limits.py,
# docs/reference/limits.md): answered 413 before they are read. The annotators' and crowd
# participants' requests are small; an upload's multipart body is allowed the file's
# limit (IMPORT_MAX_UPLOAD_BYTES) and a little more for the form around it.
ANNOTATOR_REQUEST_MAX_BYTES = env.int("ANNOTATOR_REQUEST_MAX_BYTES", default=1024 * 1024)
REQUEST_MAX_BYTES = env.int("REQUEST_MAX_BYTES", default=10 * 1024 * 1024)
DATA_UPLOAD_MAX_MEMORY_SIZE = REQUEST_MAX_BYTES
FILE_UPLOAD_MAX_MEMORY_SIZE = 10 * 1024 * 1024

# Crowd studies (crowd/). Finished MTurk HITs are posted only to these origins (the
# form carries the completion token), and only these sites may frame the entry page.
CROWD_MTURK_SUBMIT_ORIGINS = env.list(
    "CROWD_MTURK_SUBMIT_ORIGINS",
    default=["https://www.mturk.com", "https://workersandbox.mturk.com"],
)
CROWD_FRAME_ANCESTORS = env.list(
    "CROWD_FRAME_ANCESTORS",
    default=[
        "https://worker.mturk.com",
        "https://workersandbox.mturk.com",
        "https://www.mturk.com",
    ],
)
# Content Security Policy (django-csp), in every environment so that the tests see what
# production sends: scripts, styles, fonts and requests from this site only, with no
# inline script, style element or style attribute (the pages' code is in static files;
# tests/e2e/test_csp_pages.py opens each page in Chromium and fails on any refusal). Images
# also as data: URLs (the API docs' icons). No site may frame a page but MTurk the crowd
# entry, and no form may post elsewhere but a finished HIT to MTurk: crowd/views.py widens
# those two directives on those pages alone.
CONTENT_SECURITY_POLICY = {
    "DIRECTIVES": {
        "default-src": ["'self'"],
        "script-src": ["'self'"],
        "style-src": ["'self'"],
        "img-src": ["'self'", "data:"],
        "font-src": ["'self'"],
        "connect-src": ["'self'"],
        "object-src": ["'none'"],
        "base-uri": ["'self'"],
        "form-action": ["'self'"],
        "frame-ancestors": ["'none'"],
    },
}
# Where Prolific takes participants back; {code} is the completion or screen-out code.
CROWD_PROLIFIC_COMPLETION_URL = env.str(
    "CROWD_PROLIFIC_COMPLETION_URL",
    default="https://app.prolific.com/submissions/complete?cc={code}",
)
# Entries per client address (DRF rate syntax); behind nginx set the proxies to 1, so
# the limit reads the address nginx saw, never a client's own X-Forwarded-For.
CROWD_ENTRY_RATE = env.str("CROWD_ENTRY_RATE", default="30/min")
CROWD_TRUSTED_PROXIES = env.int("CROWD_TRUSTED_PROXIES", default=0)
# The addresses (or networks) of the proxies whose X-Forwarded-Proto is believed; read in
# production only (config/settings/production.py), where it is set.
TRUSTED_PROXIES: list[str] = []
# The site's public address for the URLs given to platforms; empty: the request's.
CROWD_PUBLIC_BASE_URL = env.str("CROWD_PUBLIC_BASE_URL", default="")

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {"plain": {"format": "%(asctime)s %(levelname)s %(name)s %(message)s"}},
    "loggers": {
        "rationale_workbench.requests": {
            "level": env.str("REQUEST_LOG_LEVEL", default="INFO"),
            "handlers": ["console"],
            "propagate": False,
        },
        # One line per task run is noise in the dev server and the demo setup; a real
        # worker logs its own task lines.
        "celery.app.trace": {"level": env.str("CELERY_TRACE_LOG_LEVEL", default="WARNING")},
        # The same for each agreement chunk's computing time (bench/scale_out.py reads it).
        "qc.agreement.chunks": {"level": env.str("CELERY_TRACE_LOG_LEVEL", default="WARNING")},
    },
    "handlers": {"console": {"class": "logging.StreamHandler", "formatter": "plain"}},
    "root": {"handlers": ["console"], "level": env.str("LOG_LEVEL", default="INFO")},
}
