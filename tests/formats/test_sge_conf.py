"""sge_conf(5): the global and host-local configuration (qconf -sconf)."""

from __future__ import annotations

import math
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from minisge.formats import sge_conf
from minisge.formats.errors import FormatError
from minisge.formats.sge_conf import (
    Configuration,
    Method,
    merge,
    parse,
    parse_params,
    template,
    write,
)

GOLDEN = Path(__file__).resolve().parent.parent / "golden"


def golden(name: str) -> str:
    return (GOLDEN / name).read_text()


def conf(body: str, name: str = "global") -> Configuration:
    return parse(f"#{name}:\n{body}", "sconf")


def rejected(body: str, name: str = "global") -> FormatError:
    with pytest.raises(FormatError) as info:
        parse(f"#{name}:\n{body}", "sconf")
    return info.value


# --- golden samples ---------------------------------------------------------------


def test_golden_global_configuration_writes_back_byte_identical():
    text = golden("qconf_-sconf")
    assert write(parse(text, "qconf_-sconf")) == text


def test_golden_host_configuration_writes_back_byte_identical():
    # captured from the real 8.1.9 qconf -sconf for a host-local configuration
    text = golden("qconf_-sconf_HOST")
    c = parse(text, "qconf_-sconf_HOST")
    assert write(c) == text
    assert c.name == "runsc" and not c.is_global


def test_golden_global_values_read_as_the_engine_needs_them():
    c = parse(golden("qconf_-sconf"))
    assert c.is_global
    assert c.min_uid == 1000 and c.min_gid == 1000  # Debian's package, not the page's 0
    assert c.load_report_time == 40.0
    assert c.max_unheard == 300.0
    assert c.reschedule_unknown == 0.0
    assert c.prolog is None and c.epilog is None
    assert c.shell_start_mode == "posix_compliant"
    assert c.login_shells == ("bash", "sh", "ksh", "csh", "tcsh")
    assert c.max_aj_instances == 2000 and c.max_aj_tasks == 75000
    assert c.max_u_jobs == 0 and c.max_jobs == 0
    assert c.enforce_user == "auto" and c.enforce_project is False
    assert c.administrator_mail == ("root",)
    assert c.mailer == Method("/usr/bin/mail")
    assert c.execd_params == {} and c.qmaster_params == {}
    assert c.gid_range == ((65400, 65500),)
    assert c.jsv_allowed_mod == ("ac", "h", "i", "e", "o", "j", "M", "N", "p", "w")


def test_golden_reporting_params_parse_to_booleans_and_times():
    c = parse(golden("qconf_-sconf"))
    assert c.reporting_params == {
        "accounting": True, "reporting": False, "flush_time": "00:00:15",
        "joblog": False, "sharelog": "00:00:00",
    }
    assert c.accounting is True
    assert c.accounting_flush_time == 15.0  # no accounting_flush_time: flush_time


def test_golden_host_configuration_reads_prolog_user_and_execd_params():
    c = parse(golden("qconf_-sconf_HOST"))
    assert c.prolog == Method("/usr/local/sbin/prolog.sh $job_id $job_owner $queue", "root")
    assert c.execd_params["KEEP_ACTIVE"] is True
    assert c.execd_params["PDC_INTERVAL"] == "PER_LOAD_REPORT"
    assert c.execd_params["S_DESCRIPTORS"] == "4096"
    assert c.load_report_time == 20.0


# --- layout ----------------------------------------------------------------------------


def test_write_pads_values_to_column_29_and_ends_with_a_blank_line():
    c = Configuration("global", (("mailer", "/bin/mail"), ("auto_user_default_project", "none")))
    assert write(c) == "#global:\nmailer                       /bin/mail\nauto_user_default_project    none\n\n"


def test_host_configuration_is_headed_by_its_host_name():
    assert write(Configuration("node1", (("mailer", "/bin/mail"),))).startswith("#node1:\n")


def test_long_list_breaks_after_a_comma_and_reads_back_without_blanks():
    shells = ",".join(f"shell{i}" for i in range(20))
    text = write(Configuration("global", (("login_shells", shells),)))
    assert " \\\n" in text
    assert parse(text).get("login_shells") == shells


def test_classic_spool_file_with_header_and_conf_version_is_read():
    text = (
        "# Version: 8.1.9\n#\n# DO NOT MODIFY THIS FILE MANUALLY!\n#\n"
        "conf_name                    node1\nconf_version                 3\n"
        "mailer                       /bin/mail\n"
    )
    c = parse(text, "local_conf/node1")
    assert c.name == "node1" and c.entries == (("mailer", "/bin/mail"),)


def test_conf_version_must_be_a_number():
    err = rejected("conf_version x\n")
    assert err.line == 2 and "conf_version" in err.message


def test_name_argument_overrides_the_header():
    assert parse("#global:\nmailer /bin/mail\n", name="node2").name == "node2"


def test_entries_keep_file_order():
    c = conf("xterm /usr/bin/xterm\nmailer /bin/mail\n")
    assert [n for n, _ in c.entries] == ["xterm", "mailer"]


# --- template and merge -------------------------------------------------------------


def test_template_has_the_man_page_defaults():
    t = template("/opt/sge", "default")
    assert t.min_uid == 0 and t.min_gid == 0
    assert t.execd_spool_dir == "/opt/sge/default/spool"
    assert t.login_shells == ("sh", "bash", "csh", "tcsh", "ksh")
    assert t.loglevel == "log_warning"
    assert t.finished_jobs == 100
    assert t.reporting_params["accounting"] is True


def test_template_has_the_attributes_of_qconf_sconf_in_its_order():
    golden_names = [n for n, _ in parse(golden("qconf_-sconf")).entries]
    assert [n for n, _ in template().entries] == golden_names


def test_template_writes_and_reads_back():
    t = template()
    assert parse(write(t)) == t


def test_absent_attribute_reads_as_man_page_default():
    c = conf("mailer /bin/mail\n")
    assert c.max_aj_tasks == 75000 and c.load_report_time == 40.0 and c.prolog is None


def test_merge_lets_a_host_override_host_attributes_only():
    g = parse(golden("qconf_-sconf"))
    local = Configuration("node1", (("mailer", "/opt/mail"), ("min_uid", "0"), ("prolog", "/bin/p")))
    m = merge(g, local)
    assert m.name == "node1"
    assert m.mailer == Method("/opt/mail")
    assert m.prolog == Method("/bin/p")
    assert m.min_uid == 1000  # global-only: the host's value is ignored


def test_merge_without_host_configuration_is_the_global_one():
    g = parse(golden("qconf_-sconf"))
    assert merge(g, None) == g


def test_with_value_replaces_in_place_and_checks_the_value():
    c = conf("mailer /bin/mail\nxterm /usr/bin/xterm\n")
    c2 = c.with_value("mailer", "/opt/mail")
    assert c2.entries == (("mailer", "/opt/mail"), ("xterm", "/usr/bin/xterm"))
    with pytest.raises(sge_conf.SpecifierError):
        c.with_value("mailer", "mail")


def test_without_drops_an_entry():
    assert conf("mailer /bin/mail\n").without("mailer").entries == ()


# --- parameter lists ------------------------------------------------------------------


def test_execd_params_flag_alone_is_true():
    assert parse_params("KEEP_ACTIVE", sge_conf.EXECD_PARAMS) == {"KEEP_ACTIVE": True}


def test_execd_params_accept_1_true_0_false_in_any_case():
    got = parse_params("KEEP_ACTIVE=1,USE_QSUB_GID=TRUE;INHERIT_ENV=0 SET_LIB_PATH=False", sge_conf.EXECD_PARAMS)
    assert got == {"KEEP_ACTIVE": True, "USE_QSUB_GID": True, "INHERIT_ENV": False, "SET_LIB_PATH": False}


def test_param_names_are_matched_without_case_and_keyed_as_the_page_spells_them():
    assert parse_params("keep_active=true", sge_conf.EXECD_PARAMS) == {"KEEP_ACTIVE": True}
    assert parse_params("GDI_TIMEOUT=120", sge_conf.QMASTER_PARAMS) == {"gdi_timeout": "120"}


def test_execd_params_values_stay_text():
    got = parse_params("NOTIFY_KILL=TERM,PTF_MAX_PRIORITY=-10,H_MEMORYLOCKED=infinity", sge_conf.EXECD_PARAMS)
    assert got == {"NOTIFY_KILL": "TERM", "PTF_MAX_PRIORITY": "-10", "H_MEMORYLOCKED": "infinity"}


def test_unknown_params_are_kept():
    assert parse_params("FOO=bar,BAZ", sge_conf.EXECD_PARAMS) == {"FOO": "bar", "BAZ": True}


def test_none_is_the_empty_parameter_list():
    assert parse_params("none", sge_conf.EXECD_PARAMS) == {}
    assert parse_params("NONE", sge_conf.EXECD_PARAMS) == {}


def test_forbid_reschedule_and_forbid_apperror_are_qmaster_params():
    c = conf("qmaster_params FORBID_RESCHEDULE=true,FORBID_APPERROR\n")
    assert c.forbid_reschedule is True and c.forbid_apperror is True
    assert conf("qmaster_params none\n").forbid_reschedule is False
    assert conf("qmaster_params FORBID_RESCHEDULE=false\n").forbid_reschedule is False


def test_forbid_flags_default_to_false():
    c = parse(golden("qconf_-sconf"))
    assert c.forbid_reschedule is False and c.forbid_apperror is False


def test_accounting_flush_time_wins_over_flush_time():
    c = conf("reporting_params accounting=true flush_time=00:00:15 accounting_flush_time=0\n")
    assert c.accounting_flush_time == 0.0


def test_pdc_interval_takes_never_per_load_report_or_a_time():
    for v in ("NEVER", "PER_LOAD_REPORT", "00:00:05", "2"):
        assert conf(f"execd_params PDC_INTERVAL={v}\n").execd_params["PDC_INTERVAL"] == v
    assert "PDC_INTERVAL" in rejected("execd_params PDC_INTERVAL=sometimes\n").message


def test_boolean_param_with_other_value_is_rejected():
    err = rejected("execd_params KEEP_ACTIVE=maybe\n")
    assert err.line == 2 and "KEEP_ACTIVE" in err.message


def test_time_param_with_bad_time_is_rejected():
    assert "flush_time" in rejected("reporting_params flush_time=soon\n").message


def test_integer_param_with_bad_number_is_rejected():
    assert "MAX_DYN_EC" in rejected("qmaster_params MAX_DYN_EC=lots\n").message


def test_time_param_needs_a_value():
    assert "MONITOR_TIME" in rejected("qmaster_params MONITOR_TIME\n").message


# --- prolog / epilog ------------------------------------------------------------------


def test_prolog_user_prefix_names_the_user():
    assert conf("prolog sgeadmin@/bin/prolog -x\n").prolog == Method("/bin/prolog -x", "sgeadmin")
    assert conf("prolog sgeadmin@/bin/prolog -x\n").prolog.path == "/bin/prolog"


def test_at_sign_after_the_first_blank_is_no_user_prefix():
    assert conf("epilog /bin/epilog mail@host\n").epilog == Method("/bin/epilog mail@host")


def test_prolog_may_use_the_documented_variables():
    c = conf("prolog /bin/p $host $job_id $job_owner $ja_task_id $queue $stdout_path $sge_root\n")
    assert c.prolog is not None


def test_prolog_with_an_unknown_variable_is_rejected():
    err = rejected("prolog /bin/p $bad\n")
    assert err.line == 2 and 'unknown variable "bad"' in err.message


def test_prolog_must_be_an_absolute_path():
    err = rejected("prolog bin/p\n")
    assert err.message == 'the path given for "prolog" must start with a "/"'


def test_epilog_user_prefix_needs_an_absolute_path():
    assert "epilog" in rejected("epilog root@bin/e\n").message


# --- validation of each attribute -----------------------------------------------------

BAD_VALUES = [
    ("execd_spool_dir", "spool"),
    ("mailer", "mail"),
    ("xterm", "xterm"),
    ("load_sensor", "/bin/a,sensor"),
    ("shell_start_mode", "bourne"),
    ("min_uid", "abc"),
    ("min_gid", "-1"),
    ("enforce_project", "maybe"),
    ("enforce_user", "sometimes"),
    ("load_report_time", "infinity"),
    ("load_report_time", "soon"),
    ("max_unheard", "INFINITY"),
    ("reschedule_unknown", "-1"),
    ("loglevel", "log_foo"),
    ("set_token_cmd", "token"),
    ("pag_cmd", "pagsh"),
    ("token_extend_time", "long"),
    ("shepherd_cmd", "shepherd"),
    ("finished_jobs", "many"),
    ("gid_range", "50-60"),
    ("gid_range", "200-100"),
    ("gid_range", "abc"),
    ("qlogin_daemon", "sshd"),
    ("rsh_command", "ssh"),
    ("max_aj_instances", "1.5"),
    ("max_aj_tasks", "x"),
    ("max_u_jobs", "-3"),
    ("max_jobs", "lots"),
    ("auto_user_oticket", "-1"),
    ("auto_user_fshare", "x"),
    ("auto_user_delete_time", "never"),
    ("delegated_file_staging", "yes"),
    ("reprioritize", "maybe"),
    ("jsv_url", "script:jsv.sh"),
    ("user_lists", "a:b"),
]


@pytest.mark.parametrize("name,value", BAD_VALUES)
def test_bad_value_is_rejected_with_its_line(name, value):
    err = rejected(f"mailer /bin/mail\n{name} {value}\n")
    assert err.path == "sconf" and err.line == 3
    assert str(err).startswith("sconf:3: ")


GOOD_VALUES = [
    ("shell_start_mode", "unix_behavior"),
    ("shell_start_mode", "SCRIPT_FROM_STDIN"),
    ("loglevel", "LOG_INFO"),
    ("load_sensor", "/bin/a,/bin/b"),
    ("gid_range", "20000-20100,30000"),
    ("qlogin_daemon", "/usr/sbin/sshd -i"),
    ("rsh_command", "/usr/bin/ssh -o BatchMode=yes"),
    ("qlogin_command", "none"),
    ("token_extend_time", "none"),
    ("jsv_url", "script:sgeadmin@/opt/jsv.sh"),
    ("user_lists", "arusers deadlineusers"),
    ("reprioritize", "true"),
    ("auto_user_delete_time", "0"),
]


@pytest.mark.parametrize("name,value", GOOD_VALUES)
def test_accepted_value_is_kept_as_text(name, value):
    assert conf(f"{name} {value}\n").get(name) == value


def test_unknown_attribute_is_rejected():
    err = rejected("mailer /bin/mail\nmailerr /bin/mail\n")
    assert err.line == 3 and err.message == 'unknown attribute name "mailerr"'


def test_repeated_attribute_is_rejected():
    err = rejected("mailer /bin/mail\nmailer /bin/mail\n")
    assert err.line == 3 and "more than once" in err.message


def test_single_value_attribute_with_two_words_is_rejected():
    err = rejected("mailer /a /b\n")
    assert err.message == 'only a single value is allowed for configuration attribute "mailer"'


def test_attribute_without_value_is_rejected():
    assert "value == NULL" in rejected("mailer\n").message


def test_global_only_attribute_in_a_host_configuration_is_rejected():
    err = rejected("mailer /bin/mail\nmin_uid 100\n", name="node1")
    assert err.line == 3 and "global configuration parameter only" in err.message


def test_empty_libjvm_path_is_allowed():
    assert conf("libjvm_path\n").get("libjvm_path") == ""


# --- properties ---------------------------------------------------------------------------

_TIMES = st.sampled_from(["00:00:40", "0:0:15", "60", "1:0:0", "00:05:00"])
_PARAM_ITEMS = st.sampled_from(
    ["KEEP_ACTIVE=true", "ENABLE_ADDGRP_KILL=1", "USE_QSUB_GID", "PTF_MAX_PRIORITY=-10",
     "NOTIFY_KILL=TERM", "H_MEMORYLOCKED=infinity", "PDC_INTERVAL=NEVER", "S_DESCRIPTORS=4096"]
)
_NAMES = st.lists(st.sampled_from(["bash", "sh", "ksh", "csh", "tcsh", "zsh", "fish", "dash"]), min_size=1, max_size=15)

VALUE_STRATEGIES = {
    "execd_spool_dir": st.sampled_from(["/var/spool/sge", "/opt/sge/default/spool"]),
    "mailer": st.sampled_from(["/bin/mail", "/usr/bin/mail", "root@/usr/bin/mailx"]),
    "xterm": st.just("/usr/bin/xterm"),
    "load_sensor": st.sampled_from(["none", "/bin/ls1", "/bin/ls1,/bin/ls2"]),
    "prolog": st.sampled_from(["none", "/bin/p", "root@/usr/local/sbin/prolog.sh $job_id $job_owner $queue $host"]),
    "epilog": st.sampled_from(["none", "/bin/e -v", "sgeadmin@/bin/e $job_id"]),
    "shell_start_mode": st.sampled_from(["posix_compliant", "unix_behavior", "script_from_stdin"]),
    "login_shells": _NAMES.map(",".join),
    "min_uid": st.integers(0, 70000).map(str),
    "min_gid": st.integers(0, 70000).map(str),
    "user_lists": st.sampled_from(["none", "arusers", "a,b,c"]),
    "xuser_lists": st.sampled_from(["none", "banned"]),
    "projects": st.sampled_from(["none", "p1,p2"]),
    "xprojects": st.just("none"),
    "enforce_project": st.sampled_from(["true", "false"]),
    "enforce_user": st.sampled_from(["true", "false", "auto"]),
    "load_report_time": _TIMES,
    "max_unheard": _TIMES,
    "reschedule_unknown": _TIMES,
    "loglevel": st.sampled_from(["log_err", "log_warning", "log_info"]),
    "administrator_mail": st.sampled_from(["none", "root", "a@b.c,d@e.f"]),
    "set_token_cmd": st.just("none"),
    "pag_cmd": st.just("none"),
    "token_extend_time": st.sampled_from(["none", "24:0:0"]),
    "shepherd_cmd": st.sampled_from(["none", "/usr/bin/shepherd_wrapper"]),
    "qmaster_params": st.sampled_from(["none", "FORBID_RESCHEDULE=true,FORBID_APPERROR=true", "ENABLE_FORCED_QDEL"]),
    "execd_params": st.lists(_PARAM_ITEMS, min_size=1, max_size=12).map(",".join),
    "reporting_params": st.sampled_from([sge_conf.MAN_PAGE_DEFAULTS["reporting_params"],
                                         "accounting=true accounting_flush_time=0"]),
    "finished_jobs": st.integers(0, 1000).map(str),
    "gid_range": st.sampled_from(["20000-20100", "65400-65500", "20000-20100,30000-30010"]),
    "qlogin_command": st.sampled_from(["builtin", "none", "/usr/bin/ssh -X"]),
    "qlogin_daemon": st.sampled_from(["builtin", "/usr/sbin/sshd -i"]),
    "rlogin_command": st.just("builtin"),
    "rlogin_daemon": st.just("builtin"),
    "rsh_command": st.just("builtin"),
    "rsh_daemon": st.just("builtin"),
    "max_aj_instances": st.integers(0, 10**6).map(str),
    "max_aj_tasks": st.integers(0, 10**6).map(str),
    "max_u_jobs": st.integers(0, 10**6).map(str),
    "max_jobs": st.integers(0, 10**6).map(str),
    "max_advance_reservations": st.integers(0, 100).map(str),
    "auto_user_oticket": st.integers(0, 100).map(str),
    "auto_user_fshare": st.integers(0, 100).map(str),
    "auto_user_default_project": st.sampled_from(["none", "proj"]),
    "auto_user_delete_time": st.sampled_from(["0", "86400"]),
    "delegated_file_staging": st.sampled_from(["true", "false"]),
    "reprioritize": st.sampled_from(["0", "1", "false", "true"]),
    "jsv_url": st.sampled_from(["none", "script:/opt/jsv.sh"]),
    "jsv_allowed_mod": st.sampled_from(["ac,h,i,e,o,j,M,N,p,w", "none"]),
    "libjvm_path": st.sampled_from(["", "/usr/lib/jvm/libjvm.so"]),
    "additional_jvm_args": st.sampled_from(["", "-Xmx256m"]),
}


@st.composite
def configurations(draw):
    host = draw(st.sampled_from(["global", "node1", "vm"]))
    allowed = [a for a in sge_conf.ATTRIBUTE_ORDER if host == "global" or a in sge_conf.LOCAL_ATTRIBUTES]
    names = draw(st.lists(st.sampled_from(allowed), unique=True, max_size=len(allowed)))
    return Configuration(host, tuple((n, draw(VALUE_STRATEGIES[n])) for n in names))


@given(configurations())
def test_write_then_parse_gives_the_same_configuration(c):
    assert parse(write(c)) == c


@given(configurations())
def test_typed_accessors_never_fail_on_a_parsed_configuration(c):
    c = parse(write(c))
    for name in ("min_uid", "load_report_time", "execd_params", "qmaster_params", "reporting_params",
                 "prolog", "epilog", "mailer", "gid_range", "max_aj_tasks", "accounting_flush_time",
                 "login_shells", "enforce_user", "forbid_reschedule"):
        getattr(c, name)
    assert not math.isnan(c.load_report_time)


@given(st.text(max_size=300))
def test_random_text_raises_only_format_error(text):
    try:
        parse(text, "fuzz")
    except FormatError:
        pass


@given(st.data())
def test_mutated_golden_raises_only_format_error(data):
    text = golden("qconf_-sconf")
    pos = data.draw(st.integers(0, len(text)))
    junk = data.draw(st.text(alphabet="a1 :=,@/$\\\n#-", max_size=8))
    cut = data.draw(st.integers(0, 5))
    try:
        parse(text[:pos] + junk + text[pos + cut :], "fuzz")
    except FormatError:
        pass


def test_entries_in_order_sorts_into_qconf_order():
    pairs = [("max_jobs", "0"), ("mailer", "/bin/mail"), ("execd_spool_dir", "/s")]
    assert [n for n, _ in sge_conf.entries_in_order(pairs)] == ["execd_spool_dir", "mailer", "max_jobs"]


def test_without_effect_names_what_minisge_keeps_but_does_not_use():
    conf = sge_conf.Configuration(entries=(("gid_range", "65400-65500"), ("xterm", "/usr/bin/xterm"),
                                           ("mailer", "/usr/bin/mail"), ("loglevel", "log_info")))
    # xterm at its default says nothing; mailer is acted on
    assert sge_conf.without_effect(conf) == [("gid_range", "65400-65500"), ("loglevel", "log_info")]
    assert all(name in sge_conf.MAN_PAGE_DEFAULTS for name in sge_conf.WITHOUT_EFFECT)
