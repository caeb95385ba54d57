"""minisge web's pure parts: finding a socket's owner in the kernel's TCP
tables (minisge.web.identity) and what a user is shown (minisge.web.view).
The server itself, with a real cell, a real browser and real users:
tests/integration/test_web_cmd.py."""

from __future__ import annotations

import ipaddress
import os
import socket

from hypothesis import given
from hypothesis import strategies as st

from minisge.web import identity
from minisge.web.view import CellState, document, is_manager, pending_job_ids

HEADER = ("  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n")


def v4(host: str, port: int, byteorder: str = "little") -> str:
    raw = ipaddress.IPv4Address(host).packed
    return (raw[::-1] if byteorder == "little" else raw).hex().upper() + f":{port:04X}"


def v6(host: str, port: int, byteorder: str = "little") -> str:
    raw = ipaddress.IPv6Address(host).packed
    if byteorder == "little":
        raw = b"".join(raw[i:i + 4][::-1] for i in range(0, 16, 4))
    return raw.hex().upper() + f":{port:04X}"


def line(n: int, local: str, remote: str, state: str, uid: int) -> str:
    return f"{n:4d}: {local} {remote} {state} 00000000:00000000 00:00000000 00000000 {uid:5d} 0 12345 1\n"


def test_the_kernels_own_spelling_of_loopback():
    # proc(5)'s example: 0100007F:0050 is 127.0.0.1 port 80 on a little-endian host
    assert identity.parse_address("0100007F:0050", "little") == (ipaddress.IPv4Address("127.0.0.1"), 80)
    assert identity.parse_address("7F000001:0050", "big") == (ipaddress.IPv4Address("127.0.0.1"), 80)
    assert identity.parse_address("00000000000000000000000001000000:1F90", "little") == (
        ipaddress.IPv6Address("::1"), 8080)


def test_the_client_end_is_the_line_whose_local_end_is_the_peer():
    server, client = ("127.0.0.1", 6464), ("127.0.0.1", 40000)
    table = [HEADER,
             line(0, v4(*server), v4("0.0.0.0", 0), "0A", 0),  # the listener (root)
             line(1, v4(*server), v4(*client), "01", 0),  # the server's end of the connection (root)
             line(2, v4(*client), v4(*server), "01", 1001),  # the browser's end: its owner
             line(3, v4("127.0.0.1", 40001), v4(*server), "01", 1002)]  # another user's connection
    ends = identity.normalise(*client), identity.normalise(*server)
    assert identity.owner_in_table(table, *ends, byteorder="little") == 1001
    other = identity.normalise("127.0.0.1", 40001), ends[1]
    assert identity.owner_in_table(table, *other, byteorder="little") == 1002


def test_a_connection_of_another_host_has_no_owner_here():
    server, remote = ("192.0.2.10", 6464), ("192.0.2.99", 50000)
    table = [HEADER, line(0, v4(*server), v4(*remote), "01", 0)]  # our end only
    assert identity.owner_in_table(table, identity.normalise(*remote), identity.normalise(*server), "little") is None


def test_a_closed_connection_counts_for_nobody():
    server, client = ("127.0.0.1", 6464), ("127.0.0.1", 40000)
    table = [HEADER, line(0, v4(*client), v4(*server), "06", 1001)]  # TIME_WAIT
    assert identity.owner_in_table(table, identity.normalise(*client), identity.normalise(*server), "little") is None


def test_ipv6_and_ipv4_mapped_addresses():
    server, client = ("::1", 6464), ("::1", 40000)
    table = [HEADER, line(0, v6(*client), v6(*server), "01", 1003)]
    assert identity.owner_in_table(table, identity.normalise(*client), identity.normalise(*server), "little") == 1003
    # a dual-stack listener sees an IPv4 client as ::ffff:127.0.0.1, whose socket is in the IPv4 table
    assert identity.normalise("::ffff:127.0.0.1", 5) == (ipaddress.IPv4Address("127.0.0.1"), 5)


@given(st.ip_addresses(), st.integers(0, 65535), st.sampled_from(["little", "big"]))
def test_parse_address_reads_what_the_kernel_writes(ip, port, byteorder):
    text = v4(str(ip), port, byteorder) if ip.version == 4 else v6(str(ip), port, byteorder)
    assert identity.parse_address(text, byteorder) == identity.normalise(str(ip), port)


def test_loopback_binds():
    assert identity.is_loopback("127.0.0.1") and identity.is_loopback("::1") and identity.is_loopback("localhost")
    assert not identity.is_loopback("0.0.0.0") and not identity.is_loopback("192.0.2.1")


def test_socket_owner_finds_this_process_on_a_real_connection():
    with socket.create_server(("127.0.0.1", 0)) as listener:
        server = listener.getsockname()
        with socket.create_connection(server) as c:
            conn, _ = listener.accept()
            with conn:
                assert identity.socket_owner(c.getsockname(), server) == os.getuid()
                assert identity.socket_owner(("192.0.2.1", 9), server) is None
                assert identity.socket_owner(("not an address", 9), server) is None


# ---------------------------------------------------------------- who sees what


def job(number: int, owner: str, state: str = "qw", queue: str | None = None) -> dict:
    j = {"job_number": number, "name": f"j{number}", "owner": owner, "state": state, "submission_time": 1e9,
         "slots": 1, "priority": 0, "prio": 0.5}
    if queue:
        j["tasks"] = [{"task_number": 1, "state": "r", "start_time": 1e9 + 5, "granted": [[queue, 1]]}]
        j["state"] = "r"
    return j


QUEUES = [{"name": "all.q@h1", "qtype": "BIP", "resv": 0, "used": 1, "total": 2, "load_avg": 0.5, "states": ""}]
STATE = CellState(cell="default", host="h1", admin_user="sgeadmin", managers=frozenset({"root", "boss"}),
                  queues=QUEUES, jobs=[job(1, "alice", queue="all.q@h1"), job(2, "alice"), job(3, "bob")],
                  reasons={"2": ["(-l h_vmem=1T) cannot run in queue \"all.q@h1\" because it offers only hc:h_vmem=2G"],
                           "3": ["Job is in hold state"]},
                  global_messages=["queue instance \"all.q@h1\" dropped because it is full"])


def test_a_user_sees_their_own_jobs_and_the_queues():
    doc = document(STATE, 1001, "alice")
    assert doc["sees"] == "own" and doc["user"] == "alice"
    assert [(j["job_number"], j["state"]) for j in doc["jobs"]] == [(1, "r"), (2, "qw")]
    assert doc["jobs"][0]["queue_name"] == "all.q@h1" and "reasons" not in doc["jobs"][0]
    assert doc["jobs"][1]["reasons"] == list(STATE.reasons["2"])
    assert doc["queues"] == [{"name": "all.q@h1", "qtype": "BIP", "slots_used": 1, "slots_resv": 0,
                              "slots_total": 2, "load_avg": 0.5, "state": ""}]
    assert doc["global_messages"] == list(STATE.global_messages)
    assert [j["job_number"] for j in document(STATE, 1002, "bob")["jobs"]] == [3]
    assert document(STATE, 1003, "carol")["jobs"] == []


def test_managers_see_every_job():
    for uid, user in ((0, "root"), (999, "sgeadmin"), (1004, "boss")):
        assert is_manager(STATE, uid, user)
        doc = document(STATE, uid, user)
        assert doc["sees"] == "all" and [j["job_number"] for j in doc["jobs"]] == [1, 2, 3]
    assert not is_manager(STATE, 1001, "alice")


def test_an_unreachable_cell_is_said_and_nothing_else():
    assert document(CellState(error="minisge: no cell running"), 0, "root") == {
        "schema": "minisge-web", "version": 1, "error": "minisge: no cell running"}


def test_the_pending_jobs_are_asked_about_the_first_ones_only():
    assert pending_job_ids(STATE.jobs) == ["2", "3"]
    assert pending_job_ids(STATE.jobs, limit=1) == ["2"]
    doc = document(CellState(queues=QUEUES, jobs=STATE.jobs, reasons={"2": []}), 0, "root")
    assert [(j["job_number"], j.get("reasons", "running")) for j in doc["jobs"]] == [
        (1, "running"), (2, []), (3, None)]
