"""qconf's qmaster side (qconf(1)): every operation and its errors on a cell
made in a temporary directory, checked against what the real Grid Engine
8.1.9 prints (messages and exit codes taken from it, see the golden files)."""

from __future__ import annotations

import os
import pwd

import pytest

from minisge.cell import Cell
from minisge.daemon.cell_init import init_cell
from minisge.qmaster import qconf as qconf_side
from minisge.qmaster.qmaster import Qmaster

HOST = "testhost"
GOLDEN = os.path.join(os.path.dirname(__file__), "golden")


def golden(name: str) -> str:
    with open(os.path.join(GOLDEN, name)) as f:
        return f.read()


@pytest.fixture
def qm(mem_tmp_path):
    cell = Cell(str(mem_tmp_path / "root"))
    init_cell(cell, HOST, 2)
    m = Qmaster(cell, HOST)
    m.load()
    return m


def nobody_uid() -> int:
    return pwd.getpwnam("nobody").pw_uid


class Run:
    def __init__(self, qm):
        self.qm = qm

    def __call__(self, cmd, *args, text=None, path="FILE", uid=0):
        return qconf_side.handle(self.qm, {"cmd": cmd, "args": list(args), "text": text, "path": path}, uid)


@pytest.fixture
def qconf(qm):
    return Run(qm)


def reload(qm):
    """A fresh qmaster from the same spool: what a restart would know."""
    m = Qmaster(qm.cell, HOST)
    m.load()
    return m


def queue_text(qconf, name="all.q"):
    return qconf("-sq", name)[0]


def new_queue(qconf, name, **changes):
    text = queue_text(qconf).replace("qname                 all.q", f"qname                 {name}")
    for attr, value in changes.items():
        lines = [ln if not ln.startswith(attr + " ") else f"{attr} {value}" for ln in text.splitlines()]
        text = "\n".join(lines) + "\n"
    return text


# --------------------------------------------------------------------- show
def test_show_lists_are_sorted_names(qconf):
    assert qconf("-sql") == ("all.q\n", "", 0)
    assert qconf("-spl") == ("make\nsmp\n", "", 0)
    assert qconf("-sul")[0] == "arusers\ndeadlineusers\ndefaultdepartment\n"
    assert qconf("-sel") == (f"{HOST}\n", "", 0)


@pytest.mark.parametrize("cmd,message", [
    ("-sprjl", "no project list defined"),
    ("-srqsl", "no resource quota set list defined"),
    ("-so", "no operator defined"),
    ("-sconfl", "no config defined"),
    ("-sckptl", "no ckpt interface definition defined"),
    ("-scall", "no calendar defined"),
    ("-sstree", "no sharetree element"),
])
def test_an_empty_list_is_an_error(qconf, cmd, message):
    assert qconf(cmd) == ("", message + "\n", 1)


def test_show_queue_writes_queue_conf(qconf):
    out, err, rc = qconf("-sq", "all.q")
    assert rc == 0 and out.startswith("qname                 all.q\nhostlist              @allhosts\n")


def test_show_unknown_queue(qconf):
    assert qconf("-sq", "nosuchq") == ("", golden("qconf_-sq.unknown_queue.stderr"), 1)


def test_show_queue_instance_gives_host_values(qconf):
    qconf("-mattr", "queue", "slots", "5", f"all.q@{HOST}")
    out = qconf("-sq", f"all.q@{HOST}")[0]
    assert f"hostname              {HOST}\n" in out
    assert "slots                 5\n" in out
    assert "qtype                 BATCH INTERACTIVE \n" in out


def test_show_unknown_objects(qconf):
    assert qconf("-sp", "nosuchpe") == ("", golden("qconf_-sp.unknown_pe.stderr"), 1)
    assert qconf("-su", "nosuchset") == ("", golden("qconf_-su.unknown_userset.stderr"), 1)
    assert qconf("-se", "nosuchhost") == ("", golden("qconf_-se.unknown_host.stderr"), 1)
    assert qconf("-sprj", "nosuch") == ("", "nosuch is not known as a project\n", 1)
    assert qconf("-shgrp", "@nosuch") == ("", 'Host group "@nosuch" does not exist\n', 1)
    assert qconf("-srqs", "nosuch") == ("", "No resource quota set found\n", 1)
    assert qconf("-sconf", HOST) == ("", f"configuration {HOST} not defined\n", 1)


def test_show_exec_host_includes_reported_load(qm, qconf):
    qm.config.load_values[HOST] = {"arch": "lx-amd64", "num_proc": "2"}
    out = qconf("-se", HOST)[0]
    assert "load_values           arch=lx-amd64,num_proc=2\n" in out
    assert "processors            2\n" in out


def test_show_hostgroup_forms(qconf):
    assert qconf("-shgrp", "@allhosts")[0] == f"group_name @allhosts\nhostlist {HOST}\n"
    assert qconf("-shgrp_tree", "@allhosts")[0] == f"@allhosts\n   {HOST}\n"
    assert qconf("-shgrp_resolved", "@allhosts")[0] == f"{HOST}\n"


def test_anyone_may_show(qconf):
    assert qconf("-sq", "all.q", uid=nobody_uid())[2] == 0
    assert qconf("-sm", uid=nobody_uid()) == ("root\n", "", 0)


# --------------------------------------------------------------------- queues
def test_add_queue_from_file(qm, qconf):
    assert qconf("-Aq", text=new_queue(qconf, "new.q")) == ("", f'root@{HOST} added "new.q" to cluster queue list\n', 0)
    assert "new.q" in qm.config.cqueues
    assert "new.q" in reload(qm).config.cqueues


def test_add_existing_queue_is_refused(qconf):
    assert qconf("-Aq", text=queue_text(qconf)) == ("", golden("qconf_-Aq.already_exists.stderr"), 1)


def test_malformed_queue_file(qconf):
    err = qconf("-Aq", text="this is not a queue\nslots abc\n", path="INPUTS/malformed.q")
    assert err == ("", golden("qconf_-Aq.malformed.stderr"), 1)


def test_bad_slots_value_names_value_and_file(qconf):
    text = queue_text(qconf).replace("qname                 all.q", "qname                 bad.q")
    text = text.replace("slots                 2", "slots                 abc")
    assert qconf("-Aq", text=text, path="INPUTS/badslots.q") == ("", golden("qconf_-Aq.bad_slots_value.stderr"), 1)


def test_queue_must_name_existing_pe(qm, qconf):
    out = qconf("-Aq", text=new_queue(qconf, "new.q", pe_list="nosuchpe"))
    assert out == ("", 'Parallel environment "nosuchpe" does not exist\n', 1)
    assert "new.q" not in qm.config.cqueues
    assert not os.path.exists(os.path.join(qm.spool.dir, "cqueues", "new.q"))


def test_queue_must_name_existing_hostgroup(qconf):
    assert qconf("-Aq", text=new_queue(qconf, "new.q", hostlist="@nosuch"))[1] == \
        'denied: host group "@nosuch" does not exist\n'


def test_modify_queue_from_file(qm, qconf):
    text = queue_text(qconf).replace("slots                 2", "slots                 7")
    assert qconf("-Mq", text=text) == ("", f'root@{HOST} modified "all.q" in cluster queue list\n', 0)
    assert reload(qm).config.cqueues["all.q"].slots.default == "7"


def test_modify_unknown_queue(qconf):
    assert qconf("-Mq", text=new_queue(qconf, "nosuch.q")) == (
        "", 'denied: cluster queue "nosuch.q" does not exist\n', 1)


def test_delete_queue(qm, qconf):
    qconf("-Aq", text=new_queue(qconf, "new.q"))
    assert qconf("-dq", "new.q") == ("", f'root@{HOST} removed "new.q" from cluster queue list\n', 0)
    assert "new.q" not in reload(qm).config.cqueues
    assert qconf("-dq", "new.q") == ("", 'denied: cluster queue "new.q" does not exist\n', 1)


def test_non_manager_is_denied_and_nothing_changes(qm, qconf):
    before = queue_text(qconf)
    out = qconf("-mattr", "queue", "slots", "4", "all.q", uid=nobody_uid())
    assert out == ("", 'denied: "nobody" must be manager for this operation\n', 1)
    assert qconf("-dq", "all.q", uid=nobody_uid())[2] == 1
    assert queue_text(qconf) == before


# --------------------------------------------------------------------- attribute edits
def test_mattr_sets_a_value(qm, qconf):
    out = qconf("-mattr", "queue", "slots", "3", "all.q")
    assert out == (f'root@{HOST} modified "all.q" in cluster queue list\n', "", 0)
    assert qm.config.cqueues["all.q"].slots.default == "3"


def test_mattr_for_one_host_adds_an_override(qconf):
    qconf("-mattr", "queue", "slots", "4", "all.q@otherhost")
    assert "slots                 2,[otherhost=4]\n" in queue_text(qconf)


def test_mattr_bad_value(qconf):
    out = qconf("-mattr", "queue", "slots", "abc", "all.q", path="/tmp/pid-1-x")
    assert out == ("", 'error parsing unsigned long value from string "abc"\n'
                   'Error during parsing of attribute value "abc"\nerror reading file: "/tmp/pid-1-x"\n', 1)


def test_mattr_unknown_attribute(qconf):
    assert qconf("-mattr", "queue", "nosuchattr", "4", "all.q", path="P") == (
        "", 'The attribute name ("nosuchattr") and/or value ("4") is invalid\nerror reading file: "P"\n', 1)


def test_mattr_unknown_queue_and_object(qconf):
    assert qconf("-mattr", "queue", "slots", "4", "nosuchq")[1] == 'denied: cluster queue "nosuchq" does not exist\n'
    assert qconf("-mattr", "nosuchobj", "slots", "1", "all.q")[1] == (
        'Modification of object "nosuchobj" not supported\n')
    assert qconf("-mattr", "queue", "qname", "foo", "all.q")[1] == "qconf: cannot change qname\n"


def test_mattr_none_on_a_list(qconf):
    assert qconf("-mattr", "queue", "pe_list", "NONE", "all.q")[1] == \
        '"NONE" is not a valid list attribute value for -mattr.  Try using -rattr instead.\n'


def test_aattr_and_dattr_of_list_values(qconf):
    out = qconf("-aattr", "queue", "pe_list", "smp", "all.q")
    assert out[0] == (f'No modification because "smp" already exists in "pe_list" of "all.q"\n'
                      f'root@{HOST} modified "all.q" in cluster queue list\n')
    assert qconf("-dattr", "queue", "pe_list", "smp", "all.q")[0] == (
        golden("qconf_-dattr_queue_pe_list_smp_all.q").replace("vm", HOST))
    assert "pe_list               make\n" in queue_text(qconf)
    out = qconf("-dattr", "queue", "pe_list", "smp", "all.q")[0]
    assert out.startswith('"smp" does not exist in "pe_list" of "all.q"\n')
    qconf("-aattr", "queue", "pe_list", "smp", "all.q")
    assert "pe_list               make smp\n" in queue_text(qconf)


def test_aattr_of_unknown_pe(qm, qconf):
    assert qconf("-aattr", "queue", "pe_list", "nosuchpe", "all.q") == (
        "", 'Parallel environment "nosuchpe" does not exist\n', 1)
    assert "nosuchpe" not in queue_text(qconf)


def test_mattr_of_name_value_lists(qconf):
    qconf("-aattr", "queue", "complex_values", "h_vmem=1G", "all.q")
    out = qconf("-mattr", "queue", "complex_values", "h_vmem=3G,h_rt=10", "all.q")[0]
    assert out.startswith('Unable to find "h_rt" in "complex_values" of "all.q" - Adding new element.\n')
    assert "complex_values        h_vmem=3G,h_rt=10\n" in queue_text(qconf)
    assert qconf("-dattr", "queue", "complex_values", "h_vmem", "all.q", path="P")[2] == 1
    qconf("-dattr", "queue", "complex_values", "h_vmem=0", "all.q")
    assert "complex_values        h_rt=10\n" in queue_text(qconf)
    assert qconf("-aattr", "queue", "complex_values", "nosuch=2G", "all.q")[1] == (
        'Complex attribute "nosuch" does not exist\n')


def test_mattr_of_an_empty_list_adds(qconf):
    qconf("-rattr", "queue", "pe_list", "NONE", "all.q")
    out = qconf("-mattr", "queue", "pe_list", "make smp", "all.q")[0]
    assert out.startswith('"pe_list" of "all.q" is empty - Adding new element(s).\n')


def test_rattr_replaces_the_list(qconf):
    qconf("-rattr", "queue", "pe_list", "make", "all.q")
    assert "pe_list               make\n" in queue_text(qconf)


def test_hostgroup_override_must_exist(qconf):
    assert qconf("-mattr", "queue", "slots", "4", "all.q@@nosuchgrp")[1] == \
        'Did not modify "slots" for host group "@nosuchgrp" which does not exist.\n'


def test_mattr_of_a_pe(qm, qconf):
    assert qconf("-mattr", "pe", "slots", "5", "smp")[0] == f'root@{HOST} modified "smp" in parallel environment list\n'
    assert qm.config.pes["smp"].slots == 5
    assert qconf("-aattr", "pe", "user_lists", "nosuchacl", "smp")[1] == 'Userset "nosuchacl" does not exist\n'
    assert qconf("-mattr", "pe", "slots", "5", "nosuchpe")[1] == (
        'denied: parallel environment "nosuchpe" does not exist\n')


def test_mattr_of_an_exec_host(qm, qconf):
    assert qconf("-mattr", "exechost", "complex_values", "nosuchcx=1", HOST)[1] == \
        'denied: attribute "nosuchcx" is not a complex attribute\n'
    assert qconf("-mattr", "exechost", "complex_values", "h_vmem=abc", HOST)[1] == \
        'attribute "h_vmem" is not a memory value\n'
    assert qconf("-aattr", "exechost", "complex_values", "h_vmem=4G", HOST)[2] == 0
    assert reload(qm).config.exec_hosts[HOST].complex_values == (("h_vmem", "4G"),)


# --------------------------------------------------------------------- parallel environments
def pe_text(name="smp2"):
    return golden("qconf_-sp_smp").replace("pe_name            smp", f"pe_name            {name}")


def test_pe_add_modify_delete(qm, qconf):
    assert qconf("-Ap", text=pe_text()) == ("", f'root@{HOST} added "smp2" to parallel environment list\n', 0)
    assert qconf("-Ap", text=pe_text()) == ("", 'parallel environment "smp2" already exists\n', 1)
    assert qconf("-Mp", text=pe_text())[1] == f'root@{HOST} modified "smp2" in parallel environment list\n'
    assert qconf("-dp", "smp2") == ("", f'root@{HOST} removed "smp2" from parallel environment list\n', 0)
    assert qconf("-dp", "smp2") == ("", 'denied: parallel environment "smp2" does not exist\n', 1)
    assert "smp2" not in reload(qm).config.pes


def test_pe_in_use_cannot_be_deleted(qm, qconf):
    assert qconf("-dp", "smp") == ("", 'denied: Parallel environment "smp" is still referenced in queue "all.q".\n', 1)
    assert "smp" in qm.config.pes


def test_pe_parse_error(qconf):
    text = pe_text().replace("slots              999", "slots              abc")
    out = qconf("-Ap", text=text, path="bad.pe")
    assert out == ("", 'error: error parsing unsigned long value from string "abc"\n'
                   'error: error reading file: "bad.pe"\nerror reading in file\n', 1)


def test_non_manager_cannot_add_pe(qconf):
    assert qconf("-Ap", text=pe_text(), uid=nobody_uid())[1] == 'denied: "nobody" must be manager for this operation\n'


# --------------------------------------------------------------------- usersets
ACL = "name    lab\ntype    ACL\nfshare  0\noticket 0\nentries u1,u2\n"


def test_userset_add_show_modify(qconf):
    assert qconf("-Au", text=ACL)[1] == f'root@{HOST} added "lab" to userset list\n'
    assert qconf("-Au", text=ACL) == ("", 'userset "lab" already exists\n', 1)
    assert qconf("-su", "lab")[0] == ACL
    assert qconf("-Mu", text=ACL)[1] == f'root@{HOST} modified "lab" in userset list\n'


def test_userset_missing_attribute(qconf):
    assert qconf("-Au", text="name lab\n") == (
        "", 'error: required attribute "type" is missing\nerror reading in file\n', 1)


def test_add_and_delete_users_of_a_list(qm, qconf):
    qconf("-Au", text=ACL)
    assert qconf("-au", "u3", "lab") == ("", 'added "u3" to access list "lab"\n', 0)
    assert qconf("-au", "u3", "lab") == ("", '"u3" is already in access list "lab"\n', 1)
    assert qconf("-du", "u1", "lab") == ("", 'deleted user "u1" from access list "lab"\n', 0)
    assert qconf("-du", "u1", "lab") == ("", 'user "u1" is not in access list "lab"\n', 1)
    assert reload(qm).config.usersets["lab"].entries == ("u2", "u3")


def test_au_creates_a_missing_list(qm, qconf):
    qconf("-au", "u6", "newlist")
    assert qm.config.usersets["newlist"].entries == ("u6",)


def test_userset_in_use_cannot_be_deleted(qconf):
    qconf("-Au", text=ACL)
    qconf("-aattr", "pe", "user_lists", "lab", "smp")
    assert qconf("-dul", "lab")[1] == (
        'denied: userset "lab" is still referenced in user list of parallel environment "smp"\n')


def test_au_needs_an_operator(qconf):
    assert qconf("-au", "u1", "arusers", uid=nobody_uid())[1] == (
        'denied: "nobody" must be operator for this operation\n')


# --------------------------------------------------------------------- host groups
def test_hostgroup_add_modify_delete(qm, qconf):
    text = f"group_name @grp\nhostlist {HOST}\n"
    assert qconf("-Ahgrp", text=text)[1] == f'root@{HOST} added "@grp" to host group list\n'
    assert qconf("-Ahgrp", text=text) == ("", 'host group "@grp" already exists\n', 1)
    assert qconf("-Mhgrp", text=text)[1] == f'root@{HOST} modified "@grp" in host group list\n'
    qconf("-mattr", "queue", "hostlist", "@grp", "all.q")
    assert qconf("-dhgrp", "@grp") == ("", 'denied: these cluster queues still reference "@grp": all.q\n', 1)
    qconf("-dattr", "queue", "hostlist", "@grp", "all.q")
    assert qconf("-dhgrp", "@grp")[1] == f'root@{HOST} removed "@grp" from host group entry list\n'
    assert qconf("-dhgrp", "@grp") == ("", 'denied: host group "@grp" does not exist\n', 1)


def test_hostgroup_references(qconf):
    assert qconf("-Ahgrp", text="group_name @g2\nhostlist @nosuch\n")[1] == (
        'denied: host group "@nosuch" does not exist\n')
    assert qconf("-Ahgrp", text="group_name @g2\nhostlist no-such-host.invalid\n")[1] == \
        'unable to resolve host "no-such-host.invalid"\n'


# --------------------------------------------------------------------- projects
PRJ = "name hp\noticket 0\nfshare 0\nacl NONE\nxacl NONE\n"


def test_project_add_show_delete(qconf):
    assert qconf("-Aprj", text=PRJ)[1] == f'root@{HOST} added "hp" to project list\n'
    assert qconf("-Aprj", text=PRJ) == ("", 'project "hp" already exists\n', 1)
    assert qconf("-sprj", "hp")[0] == PRJ
    assert qconf("-sprjl")[0] == "hp\n"
    qconf("-aattr", "queue", "projects", "hp", "all.q")
    assert qconf("-dprj", "hp")[1] == 'denied: project "hp" is still referenced in projects of queue "all.q"\n'
    qconf("-rattr", "queue", "projects", "NONE", "all.q")
    assert qconf("-dprj", "hp")[1] == f'root@{HOST} removed "hp" from project list\n'
    assert qconf("-dprj", "hp")[1] == 'denied: project "hp" does not exist\n'


# --------------------------------------------------------------------- exec hosts
def test_exec_host_delete_refused_while_a_queue_uses_it(qconf):
    assert qconf("-de", HOST)[1] == f'Host object "{HOST}" is still referenced in cluster queue "all.q".\n'


def test_exec_host_of_unresolvable_name(qconf):
    text = host_text("no-such-host.invalid")
    assert qconf("-Ae", text=text)[1] == 'can\'t resolve hostname "no-such-host.invalid"\n'


def host_text(name):
    return (f"hostname {name}\nload_scaling NONE\ncomplex_values NONE\nuser_lists NONE\nxuser_lists NONE\n"
            "projects NONE\nxprojects NONE\nusage_scaling NONE\nreport_variables NONE\n")


def test_exec_host_modify(qm, qconf):
    assert qconf("-Ae", text=host_text(HOST)) == ("", f'exechost "{HOST}" already exists\n', 1)
    assert qconf("-Me", text=host_text(HOST))[1] == f'root@{HOST} modified "{HOST}" in exechost list\n'


# --------------------------------------------------------------------- resource quota sets
RQS = "{\n name max_u_slots\n description \"All users max use of 100 slots\"\n enabled TRUE\n limit to slots=100\n}\n"


def test_rqs_add_show_delete(qm, qconf):
    assert qconf("-Arqs", text=RQS) == (golden("qconf_-Arqs_max_u_slots.rqs").replace("vm", HOST), "", 0)
    assert qconf("-srqs")[0] == golden("qconf_-srqs")
    assert qconf("-srqsl")[0] == "max_u_slots\n"
    assert qconf("-Arqs", text=RQS)[1] == 'resource quota set "max_u_slots" already exists\n'
    assert "max_u_slots" in reload(qm).config.rqs
    assert qconf("-drqs", "max_u_slots")[1] == golden("qconf_-drqs_max_u_slots.stderr").replace("vm", HOST)
    assert qconf("-drqs", "max_u_slots")[1] == 'denied: resource quota set "max_u_slots" does not exist\n'


def test_rqs_modify_by_name(qconf):
    qconf("-Arqs", text=RQS)
    assert qconf("-Mrqs", "max_u_slots", text=RQS.replace("100", "5"))[1] == \
        f'root@{HOST} modified "max_u_slots" in resource quota set list\n'
    assert "slots=5" in qconf("-srqs", "max_u_slots")[0]


def test_rqs_unknown_complex(qm, qconf):
    assert qconf("-Arqs", text=RQS.replace("slots=100", "nosuchcx=1"))[2] == 1
    assert not qm.config.rqs


def test_mattr_rqs_enabled(qconf):
    qconf("-Arqs", text=RQS)
    qconf("-mattr", "resource_quota", "enabled", "FALSE", "max_u_slots")
    assert "enabled      FALSE" in qconf("-srqs", "max_u_slots")[0]


# --------------------------------------------------------------------- complexes
def test_complex_add_modify_remove(qm, qconf):
    sc = qconf("-sc")[0]
    added = sc + "lic lic INT <= YES YES 0 0\n"
    assert qconf("-Mc", text=added)[1] == f'root@{HOST} added "lic" to complex entry list\n'
    assert qm.config.complexes.get("lic") is not None
    assert reload(qm).config.complexes.get("lic") is not None
    assert qconf("-Mc", text=added)[1] == "Complex attribute configuration has not been changed\n"
    qconf("-aattr", "queue", "complex_values", "lic=5", "all.q")
    assert qconf("-Mc", text=sc)[1] == 'denied: Complex attribute "lic" is still referenced in queue "all.q".\n'
    qconf("-rattr", "queue", "complex_values", "NONE", "all.q")
    assert qconf("-Mc", text=sc)[1] == f'root@{HOST} removed "lic" from complex list\n'
    assert reload(qm).config.complexes.get("lic") is None


def test_builtin_complex_cannot_be_removed(qconf):
    sc = "".join(ln + "\n" for ln in qconf("-sc")[0].splitlines() if not ln.startswith("h_rt "))
    assert qconf("-Mc", text=sc) == ("", 'The built-in complex "h_rt" cannot be deleted\n', 1)


def test_complex_file_error(qconf):
    out = qconf("-Mc", text="x x FOO <= YES YES 0 0\n", path="sc.bad")
    assert out[1].startswith("error: ") and out[1].endswith('Complex attribute file "sc.bad" is not correct\n')


# --------------------------------------------------------------------- global and scheduler configuration
def test_msconf(qm, qconf):
    text = qconf("-ssconf")[0].replace("maxujobs                          0", "maxujobs                          3")
    assert qconf("-Msconf", text=text) == ("", "changed scheduler configuration\n", 0)
    assert reload(qm).config.sched_conf.maxujobs == 3
    bad = text.replace("maxujobs                          3", "maxujobs                          abc")
    assert qconf("-Msconf", text=bad, path="ss.bad")[2] == 1
    assert qm.config.sched_conf.maxujobs == 3


def test_mconf_global(qm, qconf):
    text = qconf("-sconf")[0].replace("max_u_jobs                   0", "max_u_jobs                   9")
    out = qconf("-Mconf", {"path": "/x/global", "text": text})
    assert out == ("", f'root@{HOST} modified "global" in configuration list\n', 0)
    assert reload(qm).config.global_conf.get("max_u_jobs") == "9"


# --------------------------------------------------------------------- managers, operators, hosts
def test_managers_and_operators(qm, qconf):
    assert qconf("-am", "alice") == ("", f'root@{HOST} added "alice" to manager list\n', 0)
    assert qconf("-am", "alice") == ("", 'manager "alice" already exists\n', 1)
    assert reload(qm).config.managers == ["root", "alice"]
    assert qconf("-dm", "alice")[1] == f'root@{HOST} removed "alice" from manager list\n'
    assert qconf("-dm", "alice") == ("", 'denied: manager "alice" does not exist\n', 1)
    assert qconf("-dm", "root") == ("", 'may not remove user "root" from manager list\n', 1)
    assert qconf("-ao", "bob")[1] == f'root@{HOST} added "bob" to operator list\n'
    assert qconf("-so")[0] == "bob\n"
    assert qconf("-do", "bob")[1] == f'root@{HOST} removed "bob" from operator list\n'


def test_a_new_manager_may_change(qm, qconf):
    uid = nobody_uid()
    qconf("-am", "nobody")
    assert qconf("-mattr", "queue", "slots", "1", "all.q", uid=uid)[2] == 0


def test_submit_and_admin_hosts(qm, qconf):
    assert qconf("-as", HOST) == ("", f'submithost "{HOST}" already exists\n', 0)
    assert qconf("-ah", "no-such-host.invalid") == ("", 'can\'t resolve hostname "no-such-host.invalid"\n', 1)
    assert qconf("-ds", HOST) == ("", f'root@{HOST} removed "{HOST}" from submit host list\n', 0)
    assert qconf("-ss") == ("", "no submit host defined\n", 1)
    assert qconf("-as", HOST) == ("", f"{HOST} added to submit host list\n", 0)
    assert reload(qm).config.submit_hosts == [HOST]
    assert qconf("-dh", HOST)[1] == f'denied: can\'t delete master host "{HOST}" from admin host list\n'


def test_as_by_a_non_manager_is_denied_but_exits_0(qconf):
    assert qconf("-as", HOST, uid=nobody_uid()) == ("", 'denied: "nobody" must be manager for this operation\n', 0)


def test_unknown_command(qconf):
    assert qconf("-nosuch")[2] == 1
