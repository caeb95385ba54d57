"""``minisge web`` on a real cell: the server as ``minisge web`` runs it,
asked over HTTP as root and as real test users (a forked child that drops to
the user's uid and connects: the server knows it by its socket's owner), its
event stream, its errors, and the page in a real headless browser (Debian's
Chromium driven by selenium through /usr/bin/chromedriver; skipped, saying
why, where they are not installed: .ci/run installs them).

One cell and one server for the module."""

from __future__ import annotations

import encodings.idna  # noqa: F401 - loaded before a forked child drops to a user who cannot read /root
import http.client
import json
import os
import pwd
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import traceback
import urllib.parse

import pytest
from cellutil import WAIT, Cell, command_line, ensure_user, touch, until_file, user_groups, wait_for

from minisge.web.app import NOT_KNOWN, CellWatch, WebView

USER1, USER2 = "msgeuser1", "msgeuser2"
CHROMIUM, CHROMEDRIVER = "/usr/bin/chromium", "/usr/bin/chromedriver"


@pytest.fixture(scope="module")
def cell():
    ensure_user(USER1)
    ensure_user(USER2)
    c = Cell(slots=2).start()
    try:
        yield c
    finally:
        c.cleanup()


@pytest.fixture(scope="module")
def web(cell):
    """The server's base URL (``minisge web --port 0``: a free port, said on its first line)."""
    log = open(os.path.join(cell.dir, "web.log"), "ab")
    p = subprocess.Popen(command_line("minisge", "web", "--port", "0"), env=cell.env(), stdout=subprocess.PIPE,
                         stderr=log, text=True)
    try:
        first = p.stdout.readline()
        found = re.search(r"on (http://127\.0\.0\.1:\d+/)$", first.strip())
        assert found, f"minisge web said {first!r}"
        yield found.group(1)
    finally:
        p.terminate()
        p.wait(WAIT)
        log.close()
    assert p.returncode == 0, open(os.path.join(cell.dir, "web.log")).read()


def get(url: str, path: str, headers: dict | None = None) -> tuple[int, bytes]:
    u = urllib.parse.urlsplit(url)
    conn = http.client.HTTPConnection(u.hostname, u.port, timeout=WAIT)
    try:
        conn.request("GET", path, headers=headers or {})
        r = conn.getresponse()
        return r.status, r.read()
    finally:
        conn.close()


def get_as(user: str, url: str, path: str) -> tuple[int, bytes]:
    """GET ``path`` from a forked child that is ``user``: the connection's socket is the user's."""
    pw = pwd.getpwnam(user)
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        try:
            os.close(r)
            os.setgroups(user_groups(user))
            os.setgid(pw.pw_gid)
            os.setuid(pw.pw_uid)
            status, body = get(url, path)
            os.write(w, json.dumps([status, body.decode()]).encode())
        except BaseException:  # noqa: BLE001 - the child says what ended it
            os.write(w, json.dumps([0, traceback.format_exc()]).encode())
        finally:
            os._exit(0)
    os.close(w)
    chunks = []
    while chunk := os.read(r, 65536):
        chunks.append(chunk)
    os.close(r)
    os.waitpid(pid, 0)
    status, body = json.loads(b"".join(chunks) or b'[0, ""]')
    return status, body.encode()


def view_as(user: str | None, url: str) -> dict:
    status, body = get(url, "/api/cell") if user is None else get_as(user, url, "/api/cell")
    assert status == 200, body
    return json.loads(body)


def job_numbers(doc: dict) -> list[int]:
    return sorted({j["job_number"] for j in doc["jobs"]})


def scheduling_info(c: Cell, job_id: int) -> list[str]:
    """The lines of ``qstat -j JOB``'s scheduling info."""
    out = c.run("qstat", "-j", str(job_id)).out.splitlines()
    start = next(i for i, ln in enumerate(out) if ln.startswith("scheduling info:"))
    return [ln[28:] for ln in out[start:] if ln.startswith(("scheduling info:", " " * 28))]


def test_each_user_sees_their_own_jobs_and_managers_all(cell, web):
    j1 = cell.submit("-h", "-b", "y", "-N", "mine", "/bin/true", user=USER1)
    j2 = cell.submit("-h", "-b", "y", "-N", "theirs", "/bin/true", user=USER2)
    try:
        doc = wait_for(lambda: (d := view_as(USER1, web)) and j1 in job_numbers(d) and d, what="user 1's job")
        assert doc["user"] == USER1 and doc["sees"] == "own"
        assert job_numbers(doc) == [j1]  # not the other user's, as a plain qstat
        row = next(j for j in doc["jobs"] if j["job_number"] == j1)
        assert (row["name"], row["owner"], row["state"], row["slots"]) == ("mine", USER1, "hqw", 1)
        assert row["reasons"] == [ln for ln in scheduling_info(cell, j1) if ln not in doc["global_messages"]]
        assert [q["name"] for q in doc["queues"]] == [f"all.q@{cell.host}"]
        assert doc["queues"][0]["slots_total"] == 2
        assert job_numbers(view_as(USER2, web)) == [j2]
        root = view_as(None, web)
        assert root["user"] == "root" and root["sees"] == "all" and {j1, j2} <= set(job_numbers(root))
        # a manager of the cell's list sees every job (qconf -am), and no more once removed
        assert cell.run("qconf", "-am", USER2).rc == 0
        try:
            wait_for(lambda: {j1, j2} <= set(job_numbers(view_as(USER2, web))), what="the manager's view")
        finally:
            assert cell.run("qconf", "-dm", USER2).rc == 0
        wait_for(lambda: job_numbers(view_as(USER2, web)) == [j2], what="the plain user's view again")
    finally:
        cell.run("qdel", str(j1), str(j2))


def read_events(sock: socket.socket):
    """The documents of a Server-Sent Events stream (after the headers)."""
    buf = b""
    while True:
        while b"\n\n" not in buf:
            chunk = sock.recv(65536)
            if not chunk:
                return
            buf += chunk
        event, buf = buf.split(b"\n\n", 1)
        for ln in event.split(b"\n"):
            if ln.startswith(b"data: "):
                yield json.loads(ln[6:])


def test_the_event_stream_follows_the_cell(cell, web):
    u = urllib.parse.urlsplit(web)
    with socket.create_connection((u.hostname, u.port), timeout=WAIT) as sock:
        sock.sendall(f"GET /api/events HTTP/1.1\r\nHost: {u.netloc}\r\n\r\n".encode())
        head = b""
        while b"\r\n\r\n" not in head:
            head += sock.recv(1)
        assert head.startswith(b"HTTP/1.1 200") and b"text/event-stream" in head.lower()
        events = read_events(sock)
        first = next(events)
        assert first["user"] == "root"
        jid = cell.submit("-h", "-b", "y", "-N", "streamed", "/bin/true")
        assert any(jid in job_numbers(doc) for doc in events)
        cell.run("qdel", str(jid))
        assert any(jid not in job_numbers(doc) for doc in events)


def test_a_host_header_of_another_site_is_refused(web):
    status, body = get(web, "/api/cell", {"Host": "attacker.example:6464"})
    assert status == 421 and b"this Host is not this server's" in body


def test_only_get(web):
    u = urllib.parse.urlsplit(web)
    conn = http.client.HTTPConnection(u.hostname, u.port, timeout=WAIT)
    conn.request("POST", "/api/cell", body=b"x")
    r = conn.getresponse()
    assert r.status == 405 and r.getheader("allow") == "GET"
    conn.close()


async def test_a_connection_whose_owner_is_unknown_sees_only_an_error(cell):
    """A client no socket of this host is (another host's): 403 and nothing of the cell."""
    asked = []
    app = WebView(CellWatch(None, asker=lambda c: asked.append(c)), {"localhost"})
    sent = []

    async def receive():
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message):
        sent.append(message)

    for path in ("/", "/api/cell", "/api/events"):
        sent.clear()
        scope = {"type": "http", "method": "GET", "path": path, "headers": [(b"host", b"localhost")],
                 "client": ("192.0.2.1", 40000), "server": ("127.0.0.1", 6464)}
        await app(scope, receive, send)
        assert sent[0]["status"] == 403 and sent[1]["body"] == NOT_KNOWN.encode() + b"\n"
    assert asked == []  # the cell was not even asked


def test_a_cell_gone_is_said_on_the_page(tmp_path):
    """The qmaster not there (stopped after the server started): the document says so, in the commands' words."""
    from minisge.cell import Cell as CellPaths
    from minisge.web.app import ask
    from minisge.web.view import document

    doc = document(ask(CellPaths(str(tmp_path))), 0, "root")
    assert doc == {"schema": "minisge-web", "version": 1,
                   "error": f"minisge: no cell running in {tmp_path}/default: run 'minisge start'"}


def test_errors_no_cell_port_in_use_and_a_non_loopback_bind(cell, web, tmp_path):
    env = dict(cell.env(), SGE_ROOT=str(tmp_path / "none"))
    p = subprocess.run(command_line("minisge", "web"), env=env, capture_output=True, text=True, timeout=WAIT)
    q = subprocess.run(command_line("qstat"), env=env, capture_output=True, text=True, timeout=WAIT)
    assert p.returncode == 1 and p.stderr.splitlines()[0] == q.stderr.splitlines()[0]
    assert p.stderr.startswith("minisge: no cell running in ")
    port = urllib.parse.urlsplit(web).port
    p = subprocess.run(command_line("minisge", "web", "--port", str(port)), env=cell.env(), capture_output=True,
                       text=True, timeout=WAIT)
    assert p.returncode == 1
    assert p.stderr == f"minisge web: cannot listen on 127.0.0.1 port {port}: Address already in use\n"
    p = subprocess.run(command_line("minisge", "web", "--port", "70000"), env=cell.env(), capture_output=True,
                       text=True, timeout=WAIT)
    assert p.returncode == 2 and "argument --port: invalid port_number value: '70000'" in p.stderr
    # bound to every address: it says how it knows its users, and serves this host's
    p = subprocess.Popen([sys.executable, "-m", "minisge.web", "--bind", "0.0.0.0", "--port", "0"], env=cell.env(),
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        note = p.stderr.readline()
        assert "0.0.0.0 is not a loopback address: a user is known by the owner of the connection's socket" in note
        assert "connections from other hosts are refused" in note
        url = re.search(r"http://\S+/", p.stdout.readline()).group(0).replace("0.0.0.0", "127.0.0.1")
        assert view_as(USER1, url)["user"] == USER1
    finally:
        p.terminate()
        p.wait(WAIT)


# ---------------------------------------------------------------- the browser


@pytest.fixture(scope="module")
def browser():
    try:
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service
    except ImportError:
        pytest.skip("selenium is not installed (pip install '.[test]')")
    for path in (CHROMIUM, CHROMEDRIVER):
        if not os.access(path, os.X_OK):
            pytest.skip(f"{path} is missing: apt-get install chromium chromium-driver (.ci/run does)")
    profile = tempfile.mkdtemp(prefix="minisge-web-chromium-")
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for arg in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                "--disable-background-networking", "--disable-component-update", "--disable-sync",
                f"--user-data-dir={profile}"):
        options.add_argument(arg)
    driver = webdriver.Chrome(options=options, service=Service(CHROMEDRIVER))
    try:
        yield driver
    finally:
        driver.quit()
        shutil.rmtree(profile, ignore_errors=True)


def test_the_page_in_a_real_browser(cell, web, browser):
    from selenium.common.exceptions import NoSuchElementException
    from selenium.webdriver.common.by import By

    def rows(selector: str):
        try:
            return browser.find_elements(By.CSS_SELECTOR, selector)
        except NoSuchElementException:
            return []

    browser.get(web)
    queue = wait_for(lambda: rows(f'#queues tr[data-queue="all.q@{cell.host}"]'), what="the queue instance")
    assert "0/0/2" in queue[0].text and "BIP" in queue[0].text
    assert "root, a manager" in browser.find_element(By.ID, "sees").text

    done = os.path.join(cell.work, "webjob.done")  # the job runs until the test lets it end
    jid = cell.submit("-N", "webjob", until_file(cell, done))
    row = wait_for(lambda: rows(f'#jobs tr[data-job="{jid}"]'), what=f"job {jid} on the page")
    assert "webjob" in row[0].text and "root" in row[0].text
    wait_for(lambda: rows(f'#jobs tr[data-job="{jid}"][data-state="r"]'), what=f"job {jid} running on the page")
    wait_for(lambda: rows(f'#queues tr[data-queue="all.q@{cell.host}"] td.slots')[0].text == "0/1/2",
             what="the slot it uses")
    touch(done)
    wait_for(lambda: not rows(f'#jobs tr[data-job="{jid}"]'), what=f"job {jid} gone from the page once ended")

    waiting = cell.submit("-b", "y", "-N", "nowhere", "-l", "hostname=nosuchhost", "/bin/true")
    try:
        reasons = wait_for(lambda: [li.text for li in rows(f'#jobs tr[data-job="{waiting}"] ul.reasons li')],
                           what="the pending job's reasons")
        expected = scheduling_info(cell, waiting)
        assert reasons and all(r in expected for r in reasons), (reasons, expected)
        assert any("nosuchhost" in r for r in reasons)
    finally:
        cell.run("qdel", str(waiting))
