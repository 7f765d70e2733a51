"""Issue 25, connectors: an SQL URL naming a port that accepts and never answers (Redis, any non-database
service, a port being scanned) held a web thread for the statement timeout + 5 s. The handshake now has
its own limit (ANONYMIZER_SQL_CONNECT_TIMEOUT_SECONDS): the request ends with a clear message naming the
server and the limit, nothing stored. The server here is a loopback socket that accepts and stays silent."""

from __future__ import annotations

import socket

import pytest
from api_helpers import api_for

from anonymizer_app.models import Dataset
from anonymizer_app.services import sql, storage
from tests.anonymizer_helpers import finished_job, make_dataset

pytestmark = [pytest.mark.django_db, pytest.mark.timeout(60)]


@pytest.fixture
def silent_port(settings):
    settings.DEBUG = False
    settings.ANONYMIZER_SQL_ALLOWED_HOSTS = ["localhost"]
    settings.ANONYMIZER_SQL_CONNECT_TIMEOUT_SECONDS = 2
    settings.ANONYMIZER_SQL_TIMEOUT_SECONDS = 300
    server = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    server.bind(("127.0.0.1", 0))
    server.listen(16)  # the kernel completes the TCP handshake; nobody ever reads or writes
    yield server.getsockname()[1]
    server.close()


def _detail(api, response) -> str:
    if response.status_code == 202:
        from tests.security.sql_jobs import job_outcome

        return job_outcome(api, response)
    assert response.status_code == 400, response.content
    return response.json()["detail"]


@pytest.mark.parametrize("scheme, kind", [("postgresql", "PostgreSQL"), ("mysql", "MySQL/MariaDB")])
def test_a_silent_port_fails_fast_with_a_clear_message(user, silent_port, scheme, kind):
    api = api_for(user)
    url = f"{scheme}://reader@localhost:{silent_port}/warehouse"
    detail = _detail(api, api.post("/api/v1/sql/import/", {"url": url, "table": "patients"}))
    assert f"localhost:{silent_port} did not answer as a {kind} server within 2 s " \
           "(ANONYMIZER_SQL_CONNECT_TIMEOUT_SECONDS)" in detail
    job = finished_job(make_dataset(user), k=2)
    files = storage.media_files()
    detail = _detail(api, api.post(f"/api/v1/sql/export/{job.pk}/", {"url": url, "table": "released"}))
    assert f"did not answer as a {kind} server within 2 s" in detail
    assert Dataset.objects.count() == 1 and storage.media_files() == files


def test_the_web_page_and_the_command_line_too(user, client, silent_port):
    client.force_login(user)
    url = f"postgresql://reader@localhost:{silent_port}/warehouse"
    response = client.post("/datasets/import-sql/", {"url": url, "source": "table", "table": "patients"})
    assert response.status_code == 302  # an import job: the request never connected; its page names the failure
    from anonymizer_app.models import SourceImport
    from anonymizer_app.services import source_imports

    source_imports.run(SourceImport.objects.get())  # what the worker does
    page = client.get(response["Location"]).content.decode()
    assert f"localhost:{silent_port} did not answer as a PostgreSQL server within 2 s" in page
    with pytest.raises(sql.SqlError, match=f"127.0.0.1:{silent_port} did not answer as a MySQL/MariaDB server "
                                           "within 2 s"):
        sql.import_dataset(user, f"mysql://root@127.0.0.1:{silent_port}/x", table="t", web=False)
    assert not Dataset.objects.exists() and not storage.media_files()


@pytest.mark.parametrize("greeting", [b"-ERR unknown command\r\n", b"\x03\x00\x00\x00\x0a\x00\x01",
                                      b"\x05\x00\x00\x00\xffabcd"])
@pytest.mark.parametrize("scheme", ["postgresql", "mysql"])
def test_a_port_that_answers_garbage_is_a_clear_refusal(user, settings, scheme, greeting):
    """Another protocol on the port (Redis's error line, a truncated or malformed MySQL greeting): a 400
    naming the server, never a server error."""
    import threading

    settings.DEBUG, settings.ANONYMIZER_SQL_ALLOWED_HOSTS = False, ["localhost"]
    settings.ANONYMIZER_SQL_CONNECT_TIMEOUT_SECONDS = 2
    server = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    server.bind(("127.0.0.1", 0))
    server.listen(4)
    port = server.getsockname()[1]

    def answer():
        while True:
            try:
                conn, _ = server.accept()
            except OSError:
                return
            conn.sendall(greeting)

    threading.Thread(target=answer, daemon=True).start()
    try:
        api = api_for(user)
        r = api.post("/api/v1/sql/import/", {"url": f"{scheme}://reader@localhost:{port}/warehouse", "table": "t"})
        assert f"localhost:{port}" in _detail(api, r)
    finally:
        server.close()
    assert not Dataset.objects.exists() and not storage.media_files()
