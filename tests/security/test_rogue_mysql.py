"""Issue 25, connectors: a rogue MySQL server asks the app for a file of its own disk (LOAD DATA LOCAL
INFILE: a 0xFB packet naming the file in answer to a query). The reviewer's server got /proc/self/environ,
SECRET_KEY included. A tiny fake server on 127.0.0.1 speaks the handshake, accepts any login and answers
with that request; the app must refuse with a clear message, never send a byte of the file, and store
nothing."""

from __future__ import annotations

import socket
import struct
import threading

import pytest
from api_helpers import api_for

from anonymizer_app.models import Dataset
from anonymizer_app.services import sql, storage

pytestmark = pytest.mark.django_db
CLIENT_LOCAL_FILES = 0x80
CAPABILITIES = 0x1 | 0x8 | CLIENT_LOCAL_FILES | 0x200 | 0x2000 | 0x8000 | 0x80000


def _packet(seq: int, payload: bytes) -> bytes:
    return struct.pack("<I", len(payload))[:3] + bytes([seq & 0xFF]) + payload


def _lenenc(text: bytes) -> bytes:
    return bytes([len(text)]) + text


def _ok(seq: int) -> bytes:
    return _packet(seq, b"\x00\x00\x00\x02\x00\x00\x00")


def _eof(seq: int) -> bytes:
    return _packet(seq, b"\xfe\x00\x00\x02\x00")


def _version_result(seq: int) -> bytes:
    column = (_lenenc(b"def") + _lenenc(b"") + _lenenc(b"") + _lenenc(b"") + _lenenc(b"VERSION()") + _lenenc(b"")
              + b"\x0c" + struct.pack("<HIBHB", 33, 60, 0xFD, 0, 0) + b"\x00\x00")
    return (_packet(seq, b"\x01") + _packet(seq + 1, column) + _eof(seq + 2)
            + _packet(seq + 3, _lenenc(b"10.11.0-MariaDB-rogue")) + _eof(seq + 4))


class RogueServer:
    """Accepts connections on 127.0.0.1; greets as MySQL, accepts any login, answers SET with OK and,
    per ``mode``, SELECT VERSION() ("setup": the session setup) or every other query ("query") with a
    LOCAL INFILE request for ``filename``. Records what the client sent after the request."""

    def __init__(self, filename: str, mode: str):
        self.filename, self.mode = filename.encode(), mode
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(8)
        self.port = self.sock.getsockname()[1]
        self.connections = 0
        self.requests = 0
        self.client_flags: list[int] = []
        self.after_request = b""
        self.stop = False
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        self.sock.settimeout(0.2)
        while not self.stop:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                continue
            self.connections += 1
            try:
                self._talk(conn)
            except OSError:
                pass
            finally:
                conn.close()

    def _read(self, conn: socket.socket) -> tuple[int, bytes] | None:
        head = b""
        while len(head) < 4:
            part = conn.recv(4 - len(head))
            if not part:
                return None
            head += part
        size, seq = int.from_bytes(head[:3], "little"), head[3]
        body = b""
        while len(body) < size:
            part = conn.recv(size - len(body))
            if not part:
                return None
            body += part
        return seq, body

    def _talk(self, conn: socket.socket) -> None:
        conn.settimeout(10)
        scramble = b"abcdefgh" + b"ijklmnopqrst"
        greeting = (b"\x0a" + b"5.7.0-rogue\x00" + struct.pack("<I", 1) + scramble[:8] + b"\x00"
                    + struct.pack("<H", CAPABILITIES & 0xFFFF) + b"\x21" + struct.pack("<H", 2)
                    + struct.pack("<H", CAPABILITIES >> 16) + bytes([21]) + b"\x00" * 10 + scramble[8:] + b"\x00"
                    + b"mysql_native_password\x00")
        conn.sendall(_packet(0, greeting))
        answer = self._read(conn)
        if answer is None:
            return
        self.client_flags.append(struct.unpack("<I", answer[1][:4])[0])
        conn.sendall(_ok(answer[0] + 1))
        while True:
            message = self._read(conn)
            if message is None:
                return
            seq, body = message
            command, text = body[:1], body[1:].decode("utf-8", "replace").strip().upper()
            if command == b"\x01":  # COM_QUIT
                return
            if command != b"\x03" or text.startswith("SET"):
                conn.sendall(_ok(seq + 1))
            elif text.startswith("SELECT VERSION()") and self.mode == "query":
                conn.sendall(_version_result(seq + 1))
            else:
                self.requests += 1
                conn.sendall(_packet(seq + 1, b"\xfb" + self.filename))
                self.after_request += self._drain(conn)
                return

    def _drain(self, conn: socket.socket) -> bytes:
        """Everything the client sends after the request, until it closes or stays silent for 2 s."""
        conn.settimeout(2)
        got = b""
        try:
            while True:
                part = conn.recv(65536)
                if not part:
                    return got
                got += part
        except OSError:
            return got

    def close(self) -> None:
        self.stop = True
        self.thread.join(timeout=5)
        self.sock.close()


@pytest.fixture
def secret_file(tmp_path):
    path = tmp_path / "environ"
    path.write_text("SECRET_KEY=rogue-test-marker-8c1f\n")
    return path


@pytest.fixture(params=["setup", "query"])
def rogue(request, secret_file, settings):
    settings.DEBUG = False
    settings.ANONYMIZER_SQL_ALLOWED_HOSTS = ["localhost"]
    server = RogueServer(str(secret_file), request.param)
    yield server
    server.close()


def test_the_file_request_is_refused_and_nothing_is_sent(user, rogue, secret_file):
    api = api_for(user)
    url = f"mysql://root@localhost:{rogue.port}/db"
    r = api.post("/api/v1/sql/import/", {"url": url, "query": "SELECT 1"})
    if r.status_code == 202:
        from tests.security.sql_jobs import job_outcome

        detail = job_outcome(api, r)
    else:
        assert r.status_code == 400, r.content
        detail = r.json()["detail"]
    assert ("the server asked this app to send it a file of the app's own server (LOAD DATA LOCAL INFILE); "
            "refused: this app never sends files to a database server") in detail
    assert f"localhost:{rogue.port}" in detail
    assert rogue.requests >= 1
    assert b"rogue-test-marker" not in rogue.after_request and rogue.after_request == b""
    assert all(not flags & CLIENT_LOCAL_FILES for flags in rogue.client_flags)  # never offered
    assert not Dataset.objects.exists() and not storage.media_files()


def test_the_service_layer_and_the_command_line_refuse_it_too(user, rogue):
    for web in (True, False):
        with pytest.raises(sql.SqlError, match="LOAD DATA LOCAL INFILE"):
            sql.import_dataset(user, f"mysql://root@localhost:{rogue.port}/db", table="t", web=web)
    assert rogue.after_request == b""
    assert not Dataset.objects.exists()


def test_local_infile_in_the_url_is_refused_before_any_connection(user, rogue):
    r = api_for(user).post("/api/v1/sql/import/", {"url": f"mysql://root@localhost:{rogue.port}/db?local_infile=1",
                                                   "query": "SELECT 1"})
    assert r.status_code == 400
    assert r.json()["detail"] == ("url: the connection URL's parameter 'local_infile' is refused: it makes the "
                                  "database client read or send a file of this server")
    assert rogue.connections == 0 and not Dataset.objects.exists()
