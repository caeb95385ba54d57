"""Interactive jobs without daemons: qrsh's job request, the stream's
frames, what the shepherd runs, qping's answers, qrsh's wait for its
job's shepherd (the daemons' side is tests/integration/test_interactive_cmd.py)."""

from __future__ import annotations

import os
import socket

import pytest

from minisge.cell import Cell
from minisge.cli import qrsh
from minisge.execd import interactive
from minisge.formats import interactive_stream as stream
from minisge.formats.submit_options import SubmitError
from minisge.protocol import catalogue
from minisge.qmaster import ping

ENV = {"HOME": "/home/u", "PATH": "/bin", "TERM": "vt100"}


def _request(kind: str, argv: list[str]) -> dict:
    return qrsh.interactive_request(kind, argv, dict(ENV), cwd="/tmp", home="/home/u", user="u", hostname="h",
                                    cell_root="/sge/default", port="h:4000", token="ab" * 16)


def test_the_command_form_is_an_immediate_binary_job_named_after_the_command():
    req = _request("qrsh", ["-l", "h_rt=60", "/bin/echo", "a b", "c"])
    assert (req["job_name"], req["binary"], req["now"], req["restart"]) == ("echo", True, True, False)
    assert req["hard_resources"] == {"h_rt": "60"}
    assert req["env"]["QRSH_COMMAND"] == "/bin/echo\xffa b\xffc"
    assert req["env"]["QRSH_PORT"] == "h:4000" and req["env"]["TERM"] == "vt100"
    assert req["args"] == []
    assert req["interactive"] == {"kind": "qrsh", "login": False, "pty": False, "port": "h:4000", "token": "ab" * 16}
    assert req["stdout_path"] == req["stderr_path"] == [{"host": None, "path": "/dev/null"}]
    for k in ("nostdin", "warnings", "verify", "sync", "sync_start", "terse"):  # what run_interactive takes out
        req.pop(k, None)
    catalogue.validate({"op": catalogue.SUBMIT, "request": req, "sync": True}, catalogue.COMMAND)


def test_the_login_forms_and_their_options():
    assert _request("qrsh", [])["job_name"] == "QRLOGIN"
    login = _request("qlogin", ["-now", "n"])
    assert (login["job_name"], login["now"], login["interactive"]["login"], login["interactive"]["pty"]) == (
        "QLOGIN", False, True, True)
    assert _request("qrsh", ["-pty", "n"])["interactive"]["pty"] is False
    assert _request("qrsh", ["-pty", "y", "tty"])["interactive"]["pty"] is True
    assert _request("qrsh", ["-N", "mine", "tty"])["job_name"] == "mine"
    assert _request("qrsh", ["-noshell", "-nostdin", "tty"])["no_shell"] is True


@pytest.mark.parametrize("argv,message", [(["-t", "1-2", "echo"], "error: Unknown option -t"),
                                          (["-sync", "y", "echo"], "error: Unknown option -sync"),
                                          (["-ot", "10", "echo"], "error: Unknown option -ot"),
                                          (["-ot"], "error: -ot option must have argument")])
def test_what_qrsh_refuses(argv, message):
    with pytest.raises(SubmitError) as e:
        _request("qrsh", argv)
    assert e.value.message == message


def test_frames_round_trip_in_pieces():
    data = stream.frame(stream.TOKEN, b"tok host") + stream.frame(stream.STDOUT, b"x" * 70000) + stream.frame(
        stream.EXIT, b"3")
    reader = stream.FrameReader()
    got = []
    for i in range(0, len(data), 999):
        got += reader.feed(data[i:i + 999])
    assert got == [(b"T", b"tok host"), (b"O", b"x" * 70000), (b"X", b"3")]
    assert not reader.pending
    with pytest.raises(stream.StreamError):
        stream.FrameReader().feed(b"Z\x00\x00\x00\x01a")
    with pytest.raises(ValueError):
        stream.frame(b"Z")


@pytest.mark.parametrize("text,address", [("vm:4000", ("vm", 4000)), ("vm", None), ("vm:0", None),
                                          (":1", None), ("vm:x", None), ("a:b:5", ("a:b", 5))])
def test_qrsh_port(text, address):
    assert stream.parse_port(text) == address


def test_what_the_shepherd_runs():
    cfg = {"login_shell": "/bin/bash", "env": {"QRSH_COMMAND": "sh\xff-c\xffecho a; echo b"}, "interactive": {}}
    assert interactive.job_argv(cfg) == ("/bin/bash", ["/bin/bash", "-c", "sh -c echo a; echo b"])
    assert interactive.job_argv(dict(cfg, noshell=True)) == ("sh", ["sh", "-c", "echo a; echo b"])
    assert interactive.job_argv(dict(cfg, interactive={"login": True})) == ("/bin/bash", ["-bash"])


def test_qping_answers():
    facts = dict(qmaster_host="m", qmaster_port=6444, execd_port=6445, execds={"n1": 50.0}, boot_time=10.0,
                 now=110.0, clients=1)
    up = ping.answer(ping.Endpoint("m.example", 6444, "qmaster", 1), **facts)
    assert up == {"state": "up", "start_time": 10.0, "clients": 1, "info": "MAIN: R (100.00) | OK"}
    assert ping.answer(ping.Endpoint("n1", 6445, "execd", 1), **facts)["start_time"] == 50.0
    assert ping.answer(ping.Endpoint("m", 6444, "execd", 1), **facts) == {"state": "denied", "local": "m/qmaster/1"}
    assert ping.answer(ping.Endpoint("n1", 6444, "execd", 1), **facts) == {"state": "refused"}
    assert ping.answer(ping.Endpoint("n2", 6445, "execd", 1), **facts) == {"state": "unknown"}


def test_qrsh_takes_the_connection_of_a_command_that_ended_before_it_looked(capfd):
    """On a busy host a command may run and end while qrsh has no CPU: its
    shepherd connected, wrote the output and the exit status and closed, and
    the job's end came as the last reply.  qrsh finds both waiting; it takes
    the connection (the command's output and status), not the end for a job
    that never connected (seen once in a full run: "Could not start
    interactive job." for ``qrsh -noshell /usr/bin/tty``)."""
    listener = socket.create_server(("127.0.0.1", 0))
    w = qrsh.Waiting("qrsh", {"interactive": {"pty": False}}, listener, "tok", Cell("/nonexistent"), nostdin=True)
    try:
        shepherd = socket.create_connection(listener.getsockname()[:2])
        shepherd.sendall(stream.frame(stream.TOKEN, b"tok h1") + stream.frame(stream.STDOUT, b"not a tty\n")
                         + stream.frame(stream.EXIT, b"1"))
        shepherd.close()
        w.replies.put({"ok": True, "job_id": 1, "tasks": [{"task_id": 1}]})  # the final reply: the job ended
        os.write(w.wake_w, b"r")
        assert w._wait_for_shepherd() == 1
    finally:
        w.close()
    assert capfd.readouterr() == ("not a tty\n", "")
