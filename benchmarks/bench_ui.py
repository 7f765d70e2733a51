#!/usr/bin/env python3
"""End-to-end benchmark of the web UI over HTTP: a real runserver and a real Celery worker.

    .venv/bin/python benchmarks/bench_ui.py                        # everything below (takes a while)
    .venv/bin/python benchmarks/bench_ui.py --skip-big --algorithms mondrian,datafly
    .venv/bin/python benchmarks/bench_ui.py --skip-table           # the ~1 GB upload only
    .venv/bin/python benchmarks/bench_ui.py --json benchmarks/out/bench_ui.json --keep-workdir

Run it from anywhere (paths are relative to the checkout); it needs only .venv and the shared data
(``--shared``, default ../shared beside the checkout: datasets/adult/adult_hierarchy_<column>.csv and
tools/make_large_adult.py).

Nothing of the checkout's var/ is touched: a throwaway folder (``--workdir``, default a new
/tmp/bench_ui-XXXX, removed at the end unless ``--keep-workdir``) holds the SQLite database, MEDIA_ROOT,
STATIC_ROOT, the filesystem broker and TMPDIR (where Django spools uploads). With that environment the
script runs ``manage.py migrate``, then starts, as ``make run`` does (DEBUG=1) but on a free port,
``manage.py runserver --noreload`` (so its pid is the serving process) and
``celery -A anonymizer_app worker`` (``--pool``/``--concurrency``/``--max-tasks-per-child`` as given;
prefork with celery's defaults unless told, as in ``make run``). Both are stopped at the end, whatever
happens (TERM, then KILL after a grace period).

Then, like a browser (CSRF token from the page, Origin header, session cookie, multipart from disk):

1. signs up a user on /accounts/signup/;
2. uploads ``--table`` (default benchmarks/out/adult_1000000.csv, made by make_large_adult.py 1000000
   --seed 0 when missing) on /datasets/upload/, streaming the file from disk;
3. on /datasets/<id>/columns/ marks the 8 Adult quasi-identifiers (sex, age, race, marital-status,
   education, native-country, workclass, salary-class) and occupation as sensitive;
4. uploads each QI's ARX hierarchy on its column page (/hierarchies/dataset/<id>/column/<col>/upload/)
   and checks the page then says every value is covered;
5. per algorithm (``--algorithms``, default mondrian,kmember,oka,datafly,flash; ``--k`` 5): submits the
   run form (every field the page renders, at its default, as a browser would), polls
   /jobs/<uuid>/status/ until the job ends (cancelled after ``--job-timeout`` s), reads the stored report
   from the throwaway database (k reached, equivalence classes, NCP, discernibility, verified), checks
   that the result page's summary cards show the same ("page = DB"), times the result page
   (``--pages``: page numbers or "last") and streams /jobs/<uuid>/result/anonymized.csv, counting its rows;
6. unless ``--skip-big``: uploads a ~1 GB table (``--big-rows`` 12,500,000 rows made by
   make_large_adult.py, ``--seed 0``, into benchmarks/out/ when missing, deleted at the end unless
   ``--keep-big-file``; a ``--big-file`` of your own is kept unless generated) through the same form,
   streamed from disk, and checks that the dataset page shows the row count. The upload limits are
   raised for the whole run through the environment (``--max-upload-mb`` 2048, ``--max-rows`` 20,000,000:
   ANONYMIZER_MAX_UPLOAD_MB / ANONYMIZER_MAX_ROWS; the defaults, 200 MB and 2,000,000 rows, refuse it).
   There is no dataset delete view; the dataset goes with the workdir.

Memory: peak RSS is VmHWM from /proc/<pid>/status. Before each measured step the high-water marks are
reset (``echo 5 > /proc/<pid>/clear_refs``, Linux), so "worker peak" is the highest VmHWM over every
process of the worker's tree during that job (sampled every 0.25 s and at the end; "worker RSS at start"
is what the busiest process held before, since a long-lived pool child keeps some memory between
jobs), and "web peak" the runserver's during the step named (result pages and CSV download).
Times are wall-clock seconds seen by the client; on a small shared machine they are indicative only.
Figures are printed as tables and written to ``--json`` (default benchmarks/out/bench_ui.json).
"""

from __future__ import annotations

import argparse
import html
import http.client
import json
import os
import re
import resource
import shutil
import signal
import socket
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
import traceback
import uuid
from collections import defaultdict
from html.parser import HTMLParser
from http.cookies import SimpleCookie
from pathlib import Path
from urllib.parse import urlencode, urlsplit

REPO = Path(__file__).resolve().parent.parent
OUT = REPO / "benchmarks" / "out"
PYTHON = REPO / ".venv" / "bin" / "python"
CELERY = REPO / ".venv" / "bin" / "celery"
QI = ["sex", "age", "race", "marital-status", "education", "native-country", "workclass", "salary-class"]
SENSITIVE = "occupation"
PASSWORD = "bench-UI-pa55word!"
CHUNK = 1 << 20


def log(msg: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


# ---- memory of other processes (Linux /proc) ----------------------------------------------------
def _children() -> dict[int, list[int]]:
    out: dict[int, list[int]] = defaultdict(list)
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as fh:
                stat = fh.read()
        except OSError:
            continue
        out[int(stat.rsplit(")", 1)[1].split()[1])].append(int(entry))
    return out


def process_tree(pid: int) -> list[int]:
    children, todo, seen = _children(), [pid], []
    while todo:
        p = todo.pop()
        seen.append(p)
        todo.extend(children.get(p, []))
    return seen


def status_mb(pid: int, key: str) -> float | None:
    """VmHWM / VmRSS of a process in MB (None when it is gone)."""
    try:
        with open(f"/proc/{pid}/status") as fh:
            for line in fh:
                if line.startswith(key + ":"):
                    return int(line.split()[1]) / 1024
    except OSError:
        return None
    return None


def reset_peak(pids: list[int]) -> None:
    """Reset the high-water mark (VmHWM) of each process to its current RSS."""
    for pid in pids:
        try:
            with open(f"/proc/{pid}/clear_refs", "w") as fh:
                fh.write("5")
        except OSError as exc:
            log(f"cannot reset the peak RSS of {pid}: {exc}")


def tree_rss(pid: int) -> float:
    """The largest VmRSS (MB) over the process and its descendants."""
    return max((status_mb(p, "VmRSS") or 0.0) for p in process_tree(pid))


class PeakSampler(threading.Thread):
    """The highest VmHWM of every process of a tree, read every ``interval`` s while a step runs (so a pool
    child that exits at the end of its task, e.g. with --max-tasks-per-child, still counts)."""

    def __init__(self, root: int, interval: float = 0.25):
        super().__init__(daemon=True)
        self.root, self.interval = root, interval
        self.peaks: dict[int, float] = {}
        self._halt = threading.Event()

    def sample(self) -> None:
        for p in process_tree(self.root):
            v = status_mb(p, "VmHWM")
            if v is not None:
                self.peaks[p] = max(self.peaks.get(p, 0.0), v)

    def run(self) -> None:
        while not self._halt.wait(self.interval):
            self.sample()

    def finish(self) -> tuple[float, int]:
        """The highest peak seen and whose it is."""
        self._halt.set()
        self.join()
        self.sample()
        who = max(self.peaks, key=self.peaks.get)
        return self.peaks[who], who


# ---- a small browser ------------------------------------------------------------------------------
class FormParser(HTMLParser):
    """The forms of a page and the (name, value) pairs a browser would submit for each as rendered."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.forms: list[dict] = []
        self._select = None
        self._option = None
        self._textarea = None

    def _add(self, name, value):
        if self.forms and name:
            self.forms[-1]["fields"].append([name, value])

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "form":
            self.forms.append({"attrs": a, "fields": []})
        elif not self.forms or "disabled" in a:
            return
        elif tag == "input":
            kind = (a.get("type") or "text").lower()
            if kind in ("submit", "button", "image", "reset", "file"):
                return
            if kind in ("checkbox", "radio"):
                if "checked" in a:
                    self._add(a.get("name"), a.get("value", "on"))
                return
            self._add(a.get("name"), a.get("value", ""))
        elif tag == "select":
            self._select = {"name": a.get("name"), "first": None, "chosen": [], "multiple": "multiple" in a}
        elif tag == "option" and self._select is not None:
            self._option = {"value": a.get("value"), "text": "", "selected": "selected" in a}
        elif tag == "textarea":
            self._textarea = {"name": a.get("name"), "text": ""}

    def handle_data(self, data):
        if self._option is not None:
            self._option["text"] += data
        if self._textarea is not None:
            self._textarea["text"] += data

    def handle_endtag(self, tag):
        if tag == "option" and self._option is not None:
            o = self._option
            value = o["value"] if o["value"] is not None else o["text"].strip()
            if self._select["first"] is None:
                self._select["first"] = value
            if o["selected"]:
                self._select["chosen"].append(value)
            self._option = None
        elif tag == "select" and self._select is not None:
            s = self._select
            chosen = s["chosen"] if s["multiple"] else (s["chosen"][-1:] or ([s["first"]] if s["first"] is not None else []))
            for v in chosen:
                self._add(s["name"], v)
            self._select = None
        elif tag == "textarea" and self._textarea is not None:
            self._add(self._textarea["name"], self._textarea["text"].removeprefix("\n"))
            self._textarea = None


def find_form(page: str, **match) -> list[list[str]]:
    """The submittable fields of the first form whose attributes contain ``match`` (class: one of them)."""
    parser = FormParser()
    parser.feed(page)
    for form in parser.forms:
        attrs = form["attrs"]
        if all((v in (attrs.get(k) or "").split()) if k == "class" else attrs.get(k) == v for k, v in match.items()):
            return form["fields"]
    raise RuntimeError(f"no form with {match} on the page")


def set_field(fields: list[list[str]], name: str, value) -> None:
    fields[:] = [f for f in fields if f[0] != name] + [[name, str(value)]]


class Response:
    def __init__(self, status: int, headers, body: bytes, seconds: float):
        self.status, self.headers, self.body, self.seconds = status, headers, body, seconds

    @property
    def text(self) -> str:
        return self.body.decode("utf-8", "replace")

    @property
    def location(self) -> str:
        return urlsplit(self.headers.get("Location", "")).path


class Browser:
    """HTTP/1.1 over http.client with a cookie jar of name -> value (one host), like a browser's forms."""

    def __init__(self, host: str, port: int, timeout: float = 7200):
        self.host, self.port, self.timeout = host, port, timeout
        self.cookies: dict[str, str] = {}

    @property
    def origin(self) -> str:
        return f"http://{self.host}:{self.port}"

    def _connect(self):
        return http.client.HTTPConnection(self.host, self.port, timeout=self.timeout)

    def _headers(self, extra: dict | None = None) -> dict:
        h = {"User-Agent": "bench_ui/1 (like a browser)", "Accept": "text/html,application/json,*/*"}
        if self.cookies:
            h["Cookie"] = "; ".join(f"{k}={v}" for k, v in self.cookies.items())
        h.update(extra or {})
        return h

    def _keep_cookies(self, resp) -> None:
        for header in resp.headers.get_all("Set-Cookie") or []:
            jar = SimpleCookie()
            jar.load(header)
            for name, morsel in jar.items():
                if morsel["max-age"] == "0" or morsel.value == "":
                    self.cookies.pop(name, None)
                else:
                    self.cookies[name] = morsel.value

    def request(self, method: str, path: str, body=None, headers: dict | None = None) -> Response:
        conn = self._connect()
        started = time.perf_counter()
        try:
            conn.request(method, path, body=body, headers=self._headers(headers))
            resp = conn.getresponse()
            data = resp.read()
        finally:
            conn.close()
        self._keep_cookies(resp)
        return Response(resp.status, resp.headers, data, time.perf_counter() - started)

    def get(self, path: str) -> Response:
        return self.request("GET", path)

    def post(self, path: str, fields) -> Response:
        body = urlencode([tuple(f) for f in fields]).encode()
        return self.request("POST", path, body, {"Content-Type": "application/x-www-form-urlencoded",
                                                  "Origin": self.origin, "Referer": self.origin + path})

    def post_multipart(self, path: str, fields, files) -> Response:
        """multipart/form-data with a Content-Length, file parts sent from disk a MB at a time.
        ``files``: (field, filename, path, content type)."""
        boundary = "----bench-ui-" + uuid.uuid4().hex
        parts: list = []
        for name, value in fields:
            parts.append(f'--{boundary}\r\nContent-Disposition: form-data; name="{name}"\r\n\r\n{value}\r\n'.encode())
        for name, filename, source, ctype in files:
            parts.append(f'--{boundary}\r\nContent-Disposition: form-data; name="{name}"; '
                         f'filename="{filename}"\r\nContent-Type: {ctype}\r\n\r\n'.encode())
            parts.append(Path(source))
            parts.append(b"\r\n")
        parts.append(f"--{boundary}--\r\n".encode())
        length = sum(p.stat().st_size if isinstance(p, Path) else len(p) for p in parts)
        conn = self._connect()
        started = time.perf_counter()
        try:
            conn.putrequest("POST", path)
            for k, v in self._headers({"Content-Type": f"multipart/form-data; boundary={boundary}",
                                       "Content-Length": str(length), "Origin": self.origin,
                                       "Referer": self.origin + "/"}).items():
                conn.putheader(k, v)
            conn.endheaders()
            for p in parts:
                if isinstance(p, Path):
                    with open(p, "rb") as fh:
                        while chunk := fh.read(CHUNK):
                            conn.send(chunk)
                else:
                    conn.send(p)
            sent = time.perf_counter()
            resp = conn.getresponse()
            data = resp.read()
        finally:
            conn.close()
        self._keep_cookies(resp)
        r = Response(resp.status, resp.headers, data, time.perf_counter() - started)
        r.send_seconds = sent - started
        return r

    def download_lines(self, path: str) -> dict:
        """Stream a download and count its lines (never holding it in memory)."""
        conn = self._connect()
        started = time.perf_counter()
        first = None
        head = b""
        size = lines = 0
        last = b"\n"
        try:
            conn.request("GET", path, headers=self._headers())
            resp = conn.getresponse()
            while chunk := resp.read(CHUNK):
                if first is None:
                    first = time.perf_counter() - started
                if b"\n" not in head:
                    head = (head + chunk[:4096])[:4096]
                size += len(chunk)
                lines += chunk.count(b"\n")
                last = chunk[-1:]
        finally:
            conn.close()
        if size and last != b"\n":
            lines += 1
        return {"status": resp.status, "streamed": resp.headers.get("Content-Length") is None,
                "header": head.split(b"\n", 1)[0].decode("utf-8", "replace"),
                "bytes": size, "lines": lines, "first_byte_s": first, "seconds": time.perf_counter() - started}


def check(resp: Response, status: int, what: str, location: str | None = None) -> Response:
    if resp.status != status or (location is not None and not re.fullmatch(location, resp.location)):
        errors = re.findall(r'class="(?:form-errors|field-errors|message message-error)[^"]*"[^>]*>(.*?)</',
                            resp.text, re.S)
        shown = "; ".join(html.unescape(re.sub(r"<[^>]+>", " ", e)).strip() for e in errors)[:2000]
        raise RuntimeError(f"{what}: HTTP {resp.status}, Location {resp.headers.get('Location')!r} "
                           f"(expected {status}{' to ' + location if location else ''})"
                           f"{': ' + shown if shown else ''}")
    return resp


# ---- servers --------------------------------------------------------------------------------------
def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Servers:
    """migrate, runserver --noreload and one Celery worker on a throwaway environment."""

    def __init__(self, workdir: Path, port: int, pool: str, concurrency: int | None, max_tasks: int | None,
                 max_upload_mb: int, max_rows: int):
        self.workdir, self.port = workdir, port
        for sub in ("media", "static", "broker", "tmp", "logs"):
            (workdir / sub).mkdir(parents=True, exist_ok=True)
        self.db = workdir / "db.sqlite3"
        env = {k: v for k, v in os.environ.items() if k not in ("REDIS_URL", "DATABASE_URL", "CELERY_QUEUE")}
        env.update(DATABASE_URL=f"sqlite:///{self.db}", MEDIA_ROOT=str(workdir / "media"),
                   STATIC_ROOT=str(workdir / "static"), CELERY_BROKER_DIR=str(workdir / "broker"),
                   TMPDIR=str(workdir / "tmp"), ANONYMIZER_JOB_TMP=str(workdir / "tmp" / "jobs"),
                   ANONYMIZER_MAX_UPLOAD_MB=str(max_upload_mb),
                   ANONYMIZER_MAX_ROWS=str(max_rows), PYTHONUNBUFFERED="1",
                   # as `make run` (runserver refuses to start with DEBUG off on the development SECRET_KEY)
                   DEBUG="1")
        self.env = env
        self.commands: list[str] = []
        self.web = self.worker = None
        self.worker_args = ["-A", "anonymizer_app", "worker", "--loglevel=INFO",
                            f"--hostname=bench-ui-{os.getpid()}@%h", f"--pool={pool}"]
        if concurrency:
            self.worker_args.append(f"--concurrency={concurrency}")
        if max_tasks:
            self.worker_args.append(f"--max-tasks-per-child={max_tasks}")

    def _shown(self, argv) -> str:
        keys = ("DEBUG", "DATABASE_URL", "MEDIA_ROOT", "STATIC_ROOT", "CELERY_BROKER_DIR", "TMPDIR",
                "ANONYMIZER_MAX_UPLOAD_MB", "ANONYMIZER_MAX_ROWS")
        return " ".join(f"{k}={self.env[k]}" for k in keys) + " " + " ".join(map(str, argv))

    def start(self) -> None:
        migrate = [str(PYTHON), "manage.py", "migrate", "--noinput"]
        self.commands.append(self._shown(migrate))
        subprocess.run(migrate, cwd=REPO, env=self.env, check=True, stdout=subprocess.DEVNULL)
        web = [str(PYTHON), "manage.py", "runserver", "--noreload", f"127.0.0.1:{self.port}"]
        worker = [str(CELERY), *self.worker_args]
        self.commands += [self._shown(web), self._shown(worker)]
        logs = self.workdir / "logs"
        self.web = subprocess.Popen(web, cwd=REPO, env=self.env, stdout=open(logs / "web.log", "wb"),
                                    stderr=subprocess.STDOUT, start_new_session=True)
        self.worker = subprocess.Popen(worker, cwd=REPO, env=self.env, stdout=open(logs / "worker.log", "wb"),
                                       stderr=subprocess.STDOUT, start_new_session=True)
        deadline = time.monotonic() + 120
        web_ok = worker_ok = False
        while time.monotonic() < deadline and not (web_ok and worker_ok):
            for p, name in ((self.web, "runserver"), (self.worker, "celery worker")):
                if p.poll() is not None:
                    raise RuntimeError(f"{name} exited with {p.returncode}; see {logs}")
            if not web_ok:
                try:
                    with socket.create_connection(("127.0.0.1", self.port), timeout=1):
                        web_ok = True
                except OSError:
                    pass
            worker_ok = worker_ok or b" ready." in (logs / "worker.log").read_bytes()
            time.sleep(0.3)
        if not (web_ok and worker_ok):
            raise RuntimeError(f"servers not ready after 120 s (web {web_ok}, worker {worker_ok}); see {logs}")
        log(f"runserver pid {self.web.pid} on port {self.port}; celery worker pid {self.worker.pid} "
            f"(tree {process_tree(self.worker.pid)})")

    def stop(self) -> None:
        # as make run: TERM to the worker's main process (warm shutdown: it stops its pool children), then
        # KILL to what is left of the process group each of them leads (started with start_new_session)
        for p, grace in ((self.worker, 20), (self.web, 10)):
            if p is None:
                continue
            if p.poll() is None:
                p.send_signal(signal.SIGTERM)
                try:
                    p.wait(grace)
                except subprocess.TimeoutExpired:
                    log(f"pid {p.pid} still running {grace} s after TERM: KILL")
            try:
                os.killpg(p.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            p.wait()


# ---- the steps ------------------------------------------------------------------------------------
class Bench:
    def __init__(self, args, servers: Servers, browser: Browser):
        self.a, self.s, self.b = args, servers, browser
        self.results: dict = {"setup": {}, "jobs": [], "big": None, "commands": servers.commands,
                              "notes": []}
        self.web_lifetime = 0.0

    def save(self) -> None:
        Path(self.a.json).parent.mkdir(parents=True, exist_ok=True)
        Path(self.a.json).write_text(json.dumps(self.results, indent=1, default=str) + "\n")

    def web_pid(self) -> int:
        return self.s.web.pid

    def web_mb(self) -> dict:
        """The web process's RSS now and its peak over its whole life (across the resets)."""
        hwm = max(self.web_lifetime, status_mb(self.web_pid(), "VmHWM") or 0.0)
        return {"rss_mb": status_mb(self.web_pid(), "VmRSS"), "hwm_mb": hwm}

    def reset_web(self) -> None:
        self.web_lifetime = self.web_mb()["hwm_mb"]
        reset_peak([self.web_pid()])

    def db_row(self, sql: str, params=()) -> tuple | None:
        con = sqlite3.connect(f"file:{self.s.db}?mode=ro", uri=True, timeout=30)
        try:
            return con.execute(sql, params).fetchone()
        finally:
            con.close()

    # -- account and dataset
    def signup(self) -> None:
        page = check(self.b.get("/accounts/signup/"), 200, "signup page")
        fields = find_form(page.text, method="post")
        username = f"bench{os.getpid()}"
        for name, value in (("username", username), ("password1", PASSWORD), ("password2", PASSWORD)):
            set_field(fields, name, value)
        check(self.b.post("/accounts/signup/", fields), 302, "sign up", "/")
        self.results["setup"]["user"] = username

    def upload(self, path: Path) -> tuple[int, dict]:
        index = check(self.b.get("/"), 200, "datasets page")
        fields = [f for f in find_form(index.text, id="upload-form") if f[0] != "file"]
        pid = self.web_pid()
        before = self.web_mb()
        self.reset_web()
        client_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        log(f"uploading {path.name} ({path.stat().st_size / 1e6:,.1f} MB) ...")
        r = self.b.post_multipart("/datasets/upload/", fields, [("file", path.name, path, "text/csv")])
        check(r, 302, f"upload of {path.name}", r"/datasets/\d+/")
        figures = {
            "file": str(path), "bytes": path.stat().st_size, "seconds": round(r.seconds, 2),
            "send_seconds": round(r.send_seconds, 2), "response_after_send_s": round(r.seconds - r.send_seconds, 2),
            "web_rss_before_mb": before["rss_mb"], "web_hwm_lifetime_before_mb": before["hwm_mb"],
            "web_peak_during_upload_mb": status_mb(pid, "VmHWM"), "web_rss_after_mb": status_mb(pid, "VmRSS"),
            "client_peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
            "client_peak_rss_before_mb": client_before,
        }
        dataset_id = int(r.location.rstrip("/").rsplit("/", 1)[1])
        page = check(self.b.get(f"/datasets/{dataset_id}/"), 200, "dataset page")
        m = re.search(r"<span>([\d,]+) rows</span>", page.text)
        figures.update(dataset_id=dataset_id, dataset_page_s=round(page.seconds, 2),
                       rows_shown=int(m.group(1).replace(",", "")) if m else None,
                       rows_text=m.group(0) if m else None)
        row = self.db_row("SELECT n_rows, size_bytes FROM anonymizer_app_dataset WHERE id = ?", (dataset_id,))
        figures["rows_in_db"], figures["size_in_db"] = row
        figures["tmpdir_left"] = sorted(p.name for p in (self.s.workdir / "tmp").iterdir())
        log(f"uploaded in {r.seconds:.1f} s: dataset {dataset_id}, {figures['rows_shown']} rows shown; "
            f"web peak {figures['web_peak_during_upload_mb']:.0f} MB")
        return dataset_id, figures

    def set_roles(self, dataset_id: int) -> dict[str, str]:
        url = f"/datasets/{dataset_id}/columns/"
        page = check(self.b.get(url), 200, "columns page")
        fields = find_form(page.text, id="columns-form")
        for c in QI:
            set_field(fields, f"role:{c}", "quasi-identifying")
        set_field(fields, f"role:{SENSITIVE}", "sensitive")
        r = check(self.b.post(url, fields), 302, "columns form", re.escape(url))
        page = check(self.b.get(url), 200, "columns page after saving")
        links = {}
        for row in re.findall(r'<tr class="column-row.*?</tr>', page.text, re.S):
            name = html.unescape(re.search(r"<strong>(.*?)</strong>", row, re.S).group(1).strip())
            link = re.search(r'href="(/hierarchies/dataset/\d+/column/\d+/)"', row)
            if link:
                links[name] = link.group(1)
        if sorted(links) != sorted(QI):
            raise RuntimeError(f"hierarchy links on the columns page for {sorted(links)}, expected {sorted(QI)}")
        self.results["setup"]["columns_page_s"] = round(page.seconds, 2)
        self.results["setup"]["columns_post_s"] = round(r.seconds, 2)
        return links

    def upload_hierarchies(self, links: dict[str, str]) -> None:
        hdir = Path(self.a.shared) / "datasets" / "adult"
        times = {}
        for column in QI:
            url = links[column]
            page = check(self.b.get(url), 200, f"hierarchy page of {column}")
            fields = [f for f in find_form(page.text, action=url + "upload/") if f[0] != "file"]
            source = hdir / f"adult_hierarchy_{column}.csv"
            r = self.b.post_multipart(url + "upload/", fields, [("file", source.name, source, "text/csv")])
            check(r, 302, f"hierarchy upload for {column}", re.escape(url))
            after = check(self.b.get(url), 200, f"hierarchy page of {column} after the upload")
            if 'class="covered"' not in after.text:
                raise RuntimeError(f"{column}: the column page does not say every value is covered")
            times[column] = {"page_s": round(page.seconds, 2), "upload_s": round(r.seconds, 2),
                             "page_after_s": round(after.seconds, 2)}
            log(f"hierarchy {column}: page {page.seconds:.2f} s, upload {r.seconds:.2f} s")
        self.results["setup"]["hierarchies"] = times

    # -- jobs
    def run_job(self, dataset_id: int, algorithm: str) -> dict:
        url = f"/datasets/{dataset_id}/run/"
        page = check(self.b.get(url), 200, "run page")
        fields = find_form(page.text, id="run-form")
        set_field(fields, "algorithm", algorithm)
        set_field(fields, "k", self.a.k)
        set_field(fields, "suppression_percent", self.a.suppression)
        set_field(fields, "sensitive", SENSITIVE)
        worker_pids = process_tree(self.s.worker.pid)
        reset_peak(worker_pids)
        self.reset_web()
        baseline = tree_rss(self.s.worker.pid)
        sampler = PeakSampler(self.s.worker.pid)
        sampler.start()
        started = time.perf_counter()
        r = check(self.b.post(url, fields), 302, f"run form ({algorithm})", r"/jobs/[0-9a-f-]{36}/")
        job_id = r.location.strip("/").rsplit("/", 1)[1]
        log(f"{algorithm}: job {job_id} queued")
        row: dict = {"algorithm": algorithm, "k": self.a.k, "job": job_id}
        status, last_log, polls = {}, 0.0, 0
        while True:
            s = self.b.get(f"/jobs/{job_id}/status/")
            polls += 1
            if s.status != 200:
                raise RuntimeError(f"status of job {job_id}: HTTP {s.status}")
            status = json.loads(s.body)
            elapsed = time.perf_counter() - started
            if status["finished"]:
                break
            if elapsed > self.a.job_timeout:
                log(f"{algorithm}: {elapsed:.0f} s, over --job-timeout: cancelling")
                cancel = find_form(check(self.b.get(f"/jobs/{job_id}/"), 200, "job page").text,
                                   action=f"/jobs/{job_id}/cancel/")
                self.b.post(f"/jobs/{job_id}/cancel/", cancel)
                row["timed_out"] = True
                started_cancel = time.perf_counter()
                while not json.loads(self.b.get(f"/jobs/{job_id}/status/").body)["finished"]:
                    if time.perf_counter() - started_cancel > 600:
                        break
                    time.sleep(2)
                status = json.loads(self.b.get(f"/jobs/{job_id}/status/").body)
                break
            if elapsed - last_log > 60:
                last_log = elapsed
                log(f"{algorithm}: {elapsed:.0f} s, {status['progress'] * 100:.1f}% {status['phase']}")
            time.sleep(self.a.poll)
        wall = time.perf_counter() - started
        peak, who = sampler.finish()
        row.update(status=status["status"], message=status["message"], wall_s=round(wall, 1), polls=polls,
                   worker_rss_at_start_mb=round(baseline, 1), worker_peak_mb=round(peak, 1), worker_peak_pid=who,
                   worker_peak_is_main=(who == self.s.worker.pid),
                   web_peak_while_running_mb=status_mb(self.web_pid(), "VmHWM"))
        db = self.db_row("SELECT created, started, finished FROM anonymizer_app_job WHERE id = ?",
                         (uuid.UUID(job_id).hex,))
        row["db_times"] = db
        log(f"{algorithm}: {status['status']} after {wall:.1f} s (worker peak {peak:.0f} MB) {status['message']}")
        if status["status"] != "succeeded":
            return row
        report = json.loads(self.db_row("SELECT report FROM anonymizer_app_result WHERE job_id = ?",
                                        (uuid.UUID(job_id).hex,))[0])
        metrics = report.get("metrics", {})
        row.update(k_achieved=report.get("k_achieved"), classes=report.get("equivalence_classes"),
                   suppressed=report.get("suppressed"), records=report.get("records"),
                   ncp=metrics.get("ncp"), discernibility=metrics.get("discernibility"),
                   verified=report.get("verified"), engine_s=report.get("seconds"),
                   recoding=report.get("recoding"), transformation=report.get("transformation"))
        # the result page and its pages, then the streamed CSV
        self.reset_web()
        pages = {}
        num_pages = None
        for spec in self.a.pages.split(","):
            spec = spec.strip()
            number = num_pages if spec == "last" else int(spec)
            if number is None:
                continue
            path = f"/jobs/{job_id}/result/" + ("" if number == 1 else f"?page={number}")
            p = check(self.b.get(path), 200, f"result page {number} of {algorithm}")
            m = re.search(r"Rows ([\d,]+)–([\d,]+) of ([\d,]+) · page ([\d,]+) of ([\d,]+)", p.text)
            if m:
                num_pages = int(m.group(5).replace(",", ""))
            if number == 1:
                row["page_shows"] = shown = summary_cards(p.text)
                row["page_matches_db"] = shown == {
                    "k_achieved": row["k_achieved"], "classes": f"{row['classes']:,}",
                    "ncp": f"{row['ncp']:.3f}", "discernibility": f"{row['discernibility']:,}",
                    "verified": row["verified"]}
                if not row["page_matches_db"]:
                    log(f"{algorithm}: the result page shows {shown}, the stored report says otherwise")
            # a page past the end is served as the last one (Paginator.get_page)
            pages[str(number)] = {"seconds": round(p.seconds, 2), "kb": round(len(p.body) / 1024),
                                  "served_page": int(m.group(4).replace(",", "")) if m else None, "rows": m.group(0) if m else None}
            log(f"{algorithm}: result page {number}: {p.seconds:.2f} s")
        row["pages"] = pages
        row["web_peak_pages_mb"] = status_mb(self.web_pid(), "VmHWM")
        d = self.b.download_lines(f"/jobs/{job_id}/result/anonymized.csv")
        row["csv"] = {**d, "rows": d["lines"] - 1 if d["lines"] else 0,
                      "seconds": round(d["seconds"], 2), "first_byte_s": round(d["first_byte_s"] or 0, 2)}
        row["web_peak_mb"] = status_mb(self.web_pid(), "VmHWM")
        log(f"{algorithm}: CSV {row['csv']['rows']:,} rows, {d['bytes'] / 1e6:.1f} MB in {d['seconds']:.1f} s; "
            f"web peak {row['web_peak_mb']:.0f} MB")
        return row


def summary_cards(page: str) -> dict:
    """k reached, ECs, NCP, discernibility and the verified badge as the result page shows them."""
    def after(key):
        m = re.search(rf'id="stat-{key}".*?<span class="after">(.*?)</span>', page, re.S)
        return html.unescape(m.group(1)).strip() if m else None

    k = re.search(r'id="k-achieved">(\d+)<', page)
    return {"k_achieved": int(k.group(1)) if k else None, "classes": after("equivalence_classes"),
            "ncp": after("ncp"), "discernibility": after("discernibility"),
            "verified": 'class="badge badge-success" title="k and every output cell' in page}


# ---- output ---------------------------------------------------------------------------------------
def _fmt(v, spec="") -> str:
    if v is None:
        return "—"
    if isinstance(v, bool):
        return "yes" if v else "no"
    return format(v, spec)


def print_table(headers: list[str], rows: list[list[str]]) -> None:
    widths = [max(len(h), *(len(r[i]) for r in rows)) if rows else len(h) for i, h in enumerate(headers)]
    print("| " + " | ".join(h.ljust(w) for h, w in zip(headers, widths)) + " |")
    print("|" + "|".join("-" * (w + 2) for w in widths) + "|")
    for r in rows:
        print("| " + " | ".join(c.ljust(w) for c, w in zip(r, widths)) + " |")
    print()


def report(results: dict, args) -> None:
    setup = results["setup"]
    print()
    print("Commands:")
    for c in results["commands"]:
        print("  " + c)
    print()
    if setup.get("upload"):
        u = setup["upload"]
        print(f"Table upload: {Path(u['file']).name}, {u['bytes'] / 1e6:,.1f} MB, {u['seconds']} s; "
              f"dataset page shows {_fmt(u['rows_shown'], ',')} rows; web peak during upload "
              f"{_fmt(u['web_peak_during_upload_mb'], '.0f')} MB")
        hs = setup.get("hierarchies", {})
        if hs:
            print("Hierarchy uploads (column page GET / upload POST, s): "
                  + ", ".join(f"{c} {t['page_s']}/{t['upload_s']}" for c, t in hs.items()))
        print()
    if results["jobs"]:
        pages = [p.strip() for p in args.pages.split(",")]
        headers = ["algorithm", "status", "wall s", "engine s", "k reached", "ECs", "NCP", "discernibility",
                   "verified", "page = DB"] + [f"page {p} s" for p in pages] + ["CSV rows", "CSV s", "worker RSS start MB",
                                                                   "worker peak MB", "web peak MB"]
        rows = []
        for j in results["jobs"]:
            page_list = list(j.get("pages", {}).values())
            shown = [_fmt(page_list[i]["seconds"]) if i < len(page_list) else "—" for i in range(len(pages))]
            rows.append([f"{j['algorithm']} k={j['k']}", j["status"] + (" (timeout)" if j.get("timed_out") else ""),
                         _fmt(j["wall_s"]), _fmt(j.get("engine_s")), _fmt(j.get("k_achieved")),
                         _fmt(j.get("classes"), ","), _fmt(j.get("ncp"), ".4f"), _fmt(j.get("discernibility"), ","),
                         _fmt(j.get("verified")), _fmt(j.get("page_matches_db")), *shown, _fmt(j.get("csv", {}).get("rows"), ","),
                         _fmt(j.get("csv", {}).get("seconds")), _fmt(j.get("worker_rss_at_start_mb"), ".0f"),
                         _fmt(j["worker_peak_mb"], ".0f"),
                         _fmt(j.get("web_peak_mb"), ".0f")])
        print_table(headers, rows)
        for j in results["jobs"]:
            if j["status"] != "succeeded":
                print(f"{j['algorithm']}: {j['status']}: {j['message']}")
    big = results.get("big")
    if big:
        print_table(["~1 GB upload", "value"], [
            ["file", f"{Path(big['file']).name}, {big['bytes']:,} bytes"],
            ["upload s (POST to redirect)", _fmt(big["seconds"])],
            ["  of which sending the body s", _fmt(big["send_seconds"])],
            ["  of which server after the body s", _fmt(big["response_after_send_s"])],
            ["web RSS before MB", _fmt(big["web_rss_before_mb"], ".0f")],
            ["web VmHWM before (lifetime) MB", _fmt(big["web_hwm_lifetime_before_mb"], ".0f")],
            ["web peak during the upload MB", _fmt(big["web_peak_during_upload_mb"], ".0f")],
            ["web RSS after MB", _fmt(big["web_rss_after_mb"], ".0f")],
            ["client peak RSS MB", _fmt(big["client_peak_rss_mb"], ".0f")],
            ["dataset page shows", _fmt(big["rows_text"])],
            ["n_rows in the database", _fmt(big["rows_in_db"], ",")],
            ["dataset page s", _fmt(big["dataset_page_s"])],
        ])
    if results.get("web_lifetime_peak_mb"):
        print(f"runserver peak RSS over the whole run: {results['web_lifetime_peak_mb']:.0f} MB")
    print("Timings are indicative: small shared machine (other work may run concurrently).")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--shared", default=str(REPO.parent / "shared"), help="the shared data folder")
    ap.add_argument("--table", default=str(OUT / "adult_1000000.csv"), help="the table to anonymize")
    ap.add_argument("--algorithms", default="mondrian,kmember,oka,datafly,flash")
    ap.add_argument("--k", type=int, default=5)
    ap.add_argument("--suppression", type=float, default=0.0, help="suppression limit in percent")
    ap.add_argument("--pages", default="1,5000,last", help="result pages to time: numbers or 'last'")
    ap.add_argument("--job-timeout", type=float, default=4 * 3600, help="seconds before a job is cancelled")
    ap.add_argument("--poll", type=float, default=0.5, help="seconds between status polls")
    ap.add_argument("--skip-table", action="store_true", help="skip the table upload and the runs")
    ap.add_argument("--skip-big", action="store_true", help="skip the ~1 GB upload")
    ap.add_argument("--big-rows", type=int, default=12_500_000)
    ap.add_argument("--big-file", help="default benchmarks/out/adult_<big-rows>.csv")
    ap.add_argument("--keep-big-file", action="store_true",
                    help="keep the big file (default: deleted at the end when generated or in benchmarks/out)")
    ap.add_argument("--max-upload-mb", type=int, default=2048)
    ap.add_argument("--max-rows", type=int, default=20_000_000)
    ap.add_argument("--pool", default="prefork", help="celery --pool (make run: prefork)")
    ap.add_argument("--concurrency", type=int, help="celery --concurrency (default: celery's, = CPUs)")
    ap.add_argument("--max-tasks-per-child", type=int,
                    help="celery --max-tasks-per-child (make run: unlimited; 1 runs each job in a fresh child)")
    ap.add_argument("--port", type=int, default=0, help="runserver port (default: a free one)")
    ap.add_argument("--workdir", help="throwaway folder (default: a new /tmp/bench_ui-XXXX)")
    ap.add_argument("--keep-workdir", action="store_true")
    ap.add_argument("--json", default=str(OUT / "bench_ui.json"))
    a = ap.parse_args()

    make_large = Path(a.shared) / "tools" / "make_large_adult.py"
    table = Path(a.table)
    if not a.skip_table and not table.exists():
        log(f"generating {table}")
        subprocess.run([str(PYTHON), str(make_large), "1000000", str(table), "--seed", "0"], check=True)
    big = Path(a.big_file or OUT / f"adult_{a.big_rows}.csv")
    # the default file in benchmarks/out is a cache: deleted at the end of a run that uploads it
    generated_big = a.big_file is None and not a.skip_big
    if not a.skip_big and not big.exists():
        log(f"generating {big} ({a.big_rows:,} rows)")
        big.parent.mkdir(parents=True, exist_ok=True)
        subprocess.run([str(PYTHON), str(make_large), str(a.big_rows), str(big), "--seed", "0"], check=True)
        generated_big = True

    workdir = Path(a.workdir or tempfile.mkdtemp(prefix="bench_ui-", dir="/tmp"))
    port = a.port or free_port()
    servers = Servers(workdir, port, a.pool, a.concurrency, a.max_tasks_per_child, a.max_upload_mb, a.max_rows)
    bench = Bench(a, servers, Browser("127.0.0.1", port))
    failed = False
    try:
        servers.start()
        bench.signup()
        if not a.skip_table:
            dataset_id, up = bench.upload(table)
            bench.results["setup"]["upload"] = up
            bench.save()
            links = bench.set_roles(dataset_id)
            bench.upload_hierarchies(links)
            bench.save()
            for algorithm in [x.strip() for x in a.algorithms.split(",") if x.strip()]:
                bench.results["jobs"].append(bench.run_job(dataset_id, algorithm))
                bench.save()
        if not a.skip_big:
            if big.stat().st_size < 1e9:
                bench.results["notes"].append(f"{big} is {big.stat().st_size:,} bytes, under 1.0e9")
            _, figures = bench.upload(big)
            bench.results["big"] = figures
            bench.save()
    except Exception as exc:
        failed = True
        bench.results["error"] = f"{exc.__class__.__name__}: {exc}"
        log(f"FAILED: {bench.results['error']}\n{traceback.format_exc()}")
    finally:
        if servers.web is not None and servers.web.poll() is None:
            bench.results["web_lifetime_peak_mb"] = bench.web_mb()["hwm_mb"]
        servers.stop()
        bench.results["web_log_tail"] = _tail(workdir / "logs" / "web.log")
        bench.results["worker_log_tail"] = _tail(workdir / "logs" / "worker.log")
        bench.save()
        if generated_big and not a.keep_big_file:
            big.unlink(missing_ok=True)
        if not a.keep_workdir:
            shutil.rmtree(workdir, ignore_errors=True)
        else:
            log(f"kept {workdir}")
    report(bench.results, a)
    if failed:
        print(f"FAILED: {bench.results['error']}")
    return 1 if failed else 0


def _tail(path: Path, lines: int = 40) -> list[str]:
    try:
        return path.read_text(errors="replace").splitlines()[-lines:]
    except OSError:
        return []


if __name__ == "__main__":
    sys.exit(main())
