"""qsub(1) option parsing, checked against the real Grid Engine 8.1.9.

Expected texts and exit codes were captured from the real qsub on the peer
cell, run as the ordinary user sgetest (``su - sgetest -c 'qsub ...'``);
``-verify`` was added where the command would otherwise have submitted a job,
and the job attributes compared with what ``qsub -verify`` printed.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from minisge.formats.submit_options import (
    USAGE,
    SubmitError,
    expand_path,
    job_name_error,
    output_path,
    parse_submission,
    split_directive_line,
    submitted_message,
)

GOLDEN = Path(__file__).parent / "golden"
ENV = {"HOME": "/home/sgetest", "LOGNAME": "sgetest", "USER": "sgetest",
       "PATH": "/usr/bin:/bin", "SHELL": "/bin/bash", "MAIL": "/var/mail/sgetest",
       "SGE_ROOT": "/var/lib/gridengine", "SGE_CELL": "default"}
CELL_FILE = "/var/lib/gridengine/default/common/sge_request"
HOME_FILE = "/home/sgetest/.sge_request"
CWD_FILE = "/w/.sge_request"


def submit(argv, files=None, stdin="", cwd="/w", env=ENV):
    """parse_submission with an in-memory file system."""
    files = dict(files or {})

    def read_file(path):
        if path in files:
            return files[path]
        if path.rstrip("/") in ("/w", "/tmp"):
            raise IsADirectoryError(21, "Is a directory", path)
        raise FileNotFoundError(2, "No such file or directory", path)

    return parse_submission(list(argv), cwd=cwd, env=env, home="/home/sgetest",
                            hostname="vm", read_file=read_file, stdin_reader=lambda: stdin)


def error(argv, **kw):
    with pytest.raises(SubmitError) as info:
        submit(argv, **kw)
    return info.value.message, info.value.exit_code


def golden(name):
    return (GOLDEN / name).read_text().rstrip("\n")


# ---------------------------------------------------------------- the command

def test_binary_command_and_args_are_taken_as_given():
    r = submit(["-b", "y", "/bin/sleep", "600"])
    assert (r["binary"], r["command"], r["args"], r["script"]) == (True, "/bin/sleep", ["600"], None)
    assert r["job_name"] == "sleep"


def test_script_is_read_and_named_after_its_basename():
    r = submit(["sub/job.sh", "a"], files={"/w/sub/job.sh": "echo hi\n"})
    assert (r["script_path"], r["script"], r["job_name"], r["args"]) == (
        "sub/job.sh", "echo hi\n", "job.sh", ["a"])


def test_no_script_reads_standard_input_and_names_the_job_STDIN():
    r = submit([], stdin="echo hello from stdin\n")
    assert (r["command"], r["script_path"], r["job_name"]) == ("STDIN", None, "STDIN")


def test_double_dash_gives_arguments_to_a_script_from_stdin():
    r = submit(["--", "a", "b"], stdin="echo\n")
    assert (r["job_name"], r["args"]) == ("STDIN", ["a", "b"])


def test_missing_script_is_grid_engines_message_and_exit_14():
    # qsub /nonexistent/script.sh  (golden qsub.missing_script, rc 14)
    assert error(["/nonexistent/script.sh"]) == (golden("qsub.missing_script.stderr"), 14)


def test_empty_stdin_is_grid_engines_message_and_exit_4():
    # qsub < /dev/null  (golden qsub.no_args_stdin_empty, rc 4)
    assert error([]) == (golden("qsub.no_args_stdin_empty.stderr"), 4)


def test_directory_as_script_fails_to_read():
    # qsub -verify /tmp/hs_work  -> rc 4
    assert error(["/tmp"]) == (
        'error: fread("/tmp") failed: Is a directory\n'
        "Unable to read script file because of error: error reading from file /tmp", 4)


def test_binary_job_without_command():
    # qsub -verify -b y  -> rc 2
    assert error(["-b", "y"]) == ("qsub: command required for a binary job", 2)


def test_double_dash_without_arguments():
    # qsub -verify --  -> rc 2
    assert error(["--"]) == ("qsub: -- option must be followed by job arguments", 2)


def test_unknown_option():
    # qsub -foo -b y /bin/true  (golden qsub.unknown_option, rc 2)
    assert error(["-foo", "-b", "y", "/bin/true"]) == (golden("qsub.unknown_option.stderr"), 2)


def test_lone_dash_is_an_invalid_option_in_8_1_9():
    # qsub -verify -   -> rc 2
    assert error(["-"]) == ('qsub: invalid option argument "-"', 2)


@pytest.mark.parametrize("argv, text", [
    # qsub -verify -display a -cell b -b y /bin/true -> rc 5, blank line after each
    (["-display", "a", "-cell", "b"],
     "qsub: Unknown option -display a\n\nqsub: Unknown option -cell b\n"),
    (["-verbose"], "qsub: Unknown option -verbose\n"),     # qsub -verify -verbose ...
    (["-ot", "5"], "qsub: Unknown option -ot 5\n"),         # qsub -verify -ot 5 ...
    (["-he", "y"], "qsub: Unknown option -he y\n"),         # qsub -verify -he y ...
])
def test_options_of_other_commands_are_unknown_options_exit_5(argv, text):
    assert error(argv + ["-b", "y", "/bin/true"]) == (text, 5)


def test_jsv_is_refused_as_unsupported():
    assert error(["-jsv", "/x", "-b", "y", "/bin/true"]) == (
        'qsub: Unsupported: "-jsv" is not supported in this version', 5)


def test_help_returns_the_usage_of_the_real_qsub():
    # qsub -help -> stdout, rc 0
    assert submit(["-help"])["help"] is True
    assert USAGE == (GOLDEN / "qsub_-help").read_text()


@pytest.mark.parametrize("switch, text", [
    # qsub -verify SWITCH  (argument missing) -> rc 2 for every one
    ("-N", "qsub: -N option must have argument"),
    ("-o", "qsub: -o option must have argument"),
    ("-S", "qsub: -S option must have path_name argument"),
    ("-v", "qsub: -v option must have variable list argument"),
    ("-t", "qsub: -t option must have a list of task id ranges"),
    ("-q", "qsub: -q option must have queue list argument"),
    ("-pe", "qsub: -pe option must have pe_name argument"),
    ("-ac", "qsub: -ac option must have a context_list list argument"),
    ("-dc", "qsub: -dc option must have a simple_context_list list argument"),
    ("-sc", "qsub: -sc option must have context list argument"),
    ("-@", "qsub: -@ option must have file argument"),
    ("-hold_jid", "qsub: -hold_jid option must have argument"),
    ("-wd", "qsub: -wd option must have argument"),
])
def test_missing_argument(switch, text):
    assert error([switch]) == (text, 2)


def test_pe_without_range():
    # qsub -verify -pe smp -> rc 2
    assert error(["-pe", "smp"]) == ("qsub: -pe option must have range as 2nd argument", 2)


# ---------------------------------------------------------------- y|n options

@pytest.mark.parametrize("switch, key, yes", [
    ("-j", "merge", True), ("-r", "restart", True), ("-R", "reserve", True),
    ("-now", "now", True), ("-sync", "sync", True), ("-shell", "no_shell", False),
    ("-pty", "pty", True),
])
def test_yes_no_options_take_y_yes_n_no_in_any_case(switch, key, yes):
    assert submit([switch, "YES", "-b", "y", "/bin/true"])[key] is yes
    assert submit([switch, "n", "-b", "y", "/bin/true"])[key] is (not yes)


@pytest.mark.parametrize("switch", ["-b", "-j", "-r", "-R", "-now", "-shell", "-pty"])
def test_yes_no_options_reject_other_words(switch):
    # qsub -verify -j x -b y /bin/true -> rc 7
    assert error([switch, "x", "-b", "y", "/bin/true"]) == (
        f'qsub: invalid option argument "{switch} x"', 7)


@pytest.mark.parametrize("value, end, start", [
    ("y", True, False), ("YES", True, False), ("n", False, False), ("No", False, False),
    ("x", True, False), ("r", False, True), ("rx", True, True), ("xr", True, True), ("ry", True, True),
])
def test_sync_takes_8_1_9s_yes_no_and_open_cluster_schedulers_letters(value, end, start):
    req = submit(["-sync", value, "-b", "y", "/bin/true"])
    assert (req["sync"], req["sync_start"]) == (end, start)


@pytest.mark.parametrize("value", ["nr", "rn", "e", "R", "", "yes2"])
def test_sync_refuses_other_letters_as_a_bad_argument(value):
    assert error(["-sync", value, "-b", "y", "/bin/true"]) == (f'qsub: invalid option argument "-sync {value}"', 7)


# ---------------------------------------------------------------- single options

def test_job_name_option():
    assert submit(["-N", "run1", "-b", "y", "/bin/sleep", "600"])["job_name"] == "run1"


def test_job_name_must_not_contain_slash():
    # qsub -h -N 'a/b' -b y /bin/true -> rc 2 (trailing blank is Grid Engine's)
    assert error(["-N", "a/b", "-b", "y", "/bin/true"]) == (
        "qsub: argument to -N option must not contain / ", 2)


@pytest.mark.parametrize("name, reason", [
    # qsub -h -N NAME -b y /bin/true: rejected by the qmaster, rc 1
    ("1abc", 'denied: "1abc" is not a valid object name (cannot start with a digit)'),
    ("a:b", "Colon (':') not allowed in objectname"),
    ("a@b", "At ('@') not allowed in objectname"),
    ("a*b", "Asterisk ('*') not allowed in objectname"),
    ("a?b", "Questionmark ('?') not allowed in objectname"),
    ("a\\b", "Backslash ('\\') not allowed in objectname"),
    ("a\tb", "Tab not allowed in objectname"),
    ("a\nb", "Return not allowed in objectname"),
    ("none", 'Keyword ("NONE") not allowed as objectname'),
    ("TEMPLATE", 'Keyword ("TEMPLATE") not allowed as objectname'),
    ("", "job rejected cause there is no job_name in the request"),
    ("a" * 600, "job name too long, maximum allowed length is 512 characters"),
])
def test_invalid_job_names_are_rejected_as_the_qmaster_rejects_them(name, reason):
    assert error(["-N", name, "-b", "y", "/bin/true"]) == (
        f"Unable to run job: {reason}\nExiting.", 1)


def test_job_names_grid_engine_accepts():
    # qsub -h -N 'a,b' / 'a.b-c_d+e' / '.a' ... were all submitted
    for name in ("a,b", "a=b", "a%b", "a#b", "a(b", "a.b-c_d+e", ".a"):
        assert job_name_error(name) is None


def test_default_job_name_is_validated_too():
    # qsub -h -b y /x/a:b -> rc 1
    assert error(["-b", "y", "/x/a:b"]) == (
        "Unable to run job: Colon (':') not allowed in objectname\nExiting.", 1)


@pytest.mark.parametrize("switch, key", [("-A", "account"), ("-P", "project"),
                                         ("-ckpt", "checkpoint"), ("-binding", "binding")])
def test_string_options_are_recorded(switch, key):
    value = "linear:2" if switch == "-binding" else "x"
    assert submit([switch, value, "-b", "y", "/bin/true"])[key] == value


def test_priority_range():
    assert submit(["-p", "-1023", "-b", "y", "/bin/true"])["priority"] == -1023
    assert submit(["-p", "1024", "-b", "y", "/bin/true"])["priority"] == 1024
    for bad in ("2000", "-1024", "abc", "1.5", "0x10"):
        # qsub -verify -p 2000 -b y /bin/true -> rc 7
        assert error(["-p", bad, "-b", "y", "/bin/true"]) == (
            f'qsub: invalid priority "{bad}".  Must be an integer from -1023 to 1024', 7)


def test_task_concurrency():
    assert submit(["-tc", "0", "-b", "y", "/bin/true"])["tc"] == 0
    # qsub -verify -tc -1 -b y /bin/true -> rc 7
    assert error(["-tc", "-1", "-b", "y", "/bin/true"]) == (
        'qsub: invalid task concurrency number "-1". Must be an integer greater or equal to 0.', 7)


def test_job_share_and_advance_reservation_are_unsigned():
    assert submit(["-js", "10", "-ar", "5", "-b", "y", "/bin/true"])["job_share"] == 10
    # qsub -verify -js -1 ... / -ar x ... -> rc 2
    assert error(["-js", "-1", "-b", "y", "/bin/true"]) == (
        "qsub: invalid jobshare, must be an unsigned integer", 2)
    assert error(["-ar", "x", "-b", "y", "/bin/true"]) == (
        "qsub: invalid advance reservation id, must be an unsigned integer", 2)


def test_hold_notify_verify_and_terse_flags():
    r = submit(["-h", "-notify", "-verify", "-terse", "-b", "y", "/bin/true"])
    assert (r["hold"], r["notify"], r["verify"], r["terse"]) == (True, True, True, True)


def test_verification_levels():
    assert submit(["-w", "v", "-b", "y", "/bin/true"])["verify_level"] == "v"
    # qsub -verify -w ev -b y /bin/true -> rc 7
    assert error(["-w", "ev", "-b", "y", "/bin/true"]) == ('qsub: invalid option argument "-w ev"', 7)


def test_date_time_options():
    r = submit(["-a", "202612011230", "-dl", "12011230.45", "-b", "y", "/bin/true"])
    assert (r["start_time"], r["deadline"]) == ("202612011230", "12011230.45")
    # qsub -verify -a xyz -b y /bin/true -> rc 7 (the parser's line comes first)
    assert error(["-a", "xyz", "-b", "y", "/bin/true"]) == (
        "\nInvalid format of date/hour-minute field.\n"
        'qsub: Wrong date/time format "xyz" specified to -a option', 7)


def test_checkpoint_occasion_and_interval():
    r = submit(["-c", "sx", "-c", "10", "-b", "y", "/bin/true"])
    assert (r["checkpoint_when"], r["checkpoint_interval"]) == ("sx", 10)
    # qsub -verify -c q ... / -c 0 ... -> rc 2
    assert error(["-c", "q", "-b", "y", "/bin/true"]) == ("qsub: -c specifier invalid", 2)
    assert error(["-c", "0", "-b", "y", "/bin/true"]) == ("qsub: -c argument invalid", 2)


# ---------------------------------------------------------------- paths and directories

def test_output_paths_with_optional_host():
    r = submit(["-o", "h2:o2", "-e", ":x:y", "-i", "a:b:c", "-b", "y", "/bin/true"])
    assert r["stdout_path"] == [{"host": "h2", "path": "o2"}]
    assert r["stderr_path"] == [{"host": None, "path": "x:y"}]
    assert r["stdin_path"] == [{"host": "a", "path": "b:c"}]


def test_a_later_path_replaces_the_one_for_the_same_host():
    # qsub -verify -o o1 -o h2:o2 -o o3 ...: o3 replaced o1, h2:o2 stays
    r = submit(["-o", "o1", "-o", "h2:o2", "-o", "o3", "-b", "y", "/bin/true"])
    assert r["stdout_path"] == [{"host": None, "path": "o3"}, {"host": "h2", "path": "o2"}]


@pytest.mark.parametrize("switch, text", [
    # qsub -verify SWITCH '' -b y /bin/true -> rc 7
    ("-o", 'qsub: Wrong stdout path list format "" specified to -o option'),
    ("-e", 'qsub: Wrong path list format "" specified to -e option'),
    ("-i", 'qsub: Wrong path list format "" specified to -e option'),
    ("-S", 'qsub: Wrong shell list format "" specified to -S option'),
])
def test_empty_path_lists(switch, text):
    assert error([switch, "", "-b", "y", "/bin/true"]) == (text, 7)


def test_shell_list():
    r = submit(["-S", "h1:/bin/bash,/bin/sh", "-b", "y", "/bin/true"])
    assert r["shell"] == [{"host": "h1", "path": "/bin/bash"}, {"host": None, "path": "/bin/sh"}]


def test_cwd_and_wd_the_later_wins():
    # qsub -verify -wd /tmp -cwd ... -> cwd of qsub; -cwd -wd /tmp -> /tmp
    assert submit(["-wd", "/tmp", "-cwd", "-b", "y", "/bin/true"])["cwd"] == "/w"
    assert submit(["-cwd", "-wd", "/tmp", "-b", "y", "/bin/true"])["cwd"] == "/tmp"
    assert submit(["-b", "y", "/bin/true"])["cwd"] is None


# ---------------------------------------------------------------- environment

def test_sge_o_values_come_from_the_submit_environment():
    r = submit(["-b", "y", "/bin/true"])
    assert r["o_env"] == {"SGE_O_HOME": "/home/sgetest", "SGE_O_LOGNAME": "sgetest",
                          "SGE_O_PATH": "/usr/bin:/bin", "SGE_O_SHELL": "/bin/bash",
                          "SGE_O_MAIL": "/var/mail/sgetest", "SGE_O_HOST": "vm",
                          "SGE_O_WORKDIR": "/w"}


def test_v_takes_values_given_or_from_the_environment():
    # qsub -verify -v A=1,B -v A=2 ...: A=2,B=NONE; -v HOME: the submitter's HOME
    # (8.1.9's qsub sends TERM first, empty: -verify shows "env_list: TERM,FOO=NONE" for -v FOO)
    r = submit(["-v", "A=1,B,,HOME", "-v", "A=2,C=x=y", "-b", "y", "/bin/true"])
    assert r["env"] == {"TERM": "", "A": "2", "B": None, "HOME": "/home/sgetest", "C": "x=y"}


def test_V_exports_the_whole_environment_in_order_with_v():
    r = submit(["-v", "A=1", "-V", "-b", "y", "/bin/true"])
    assert list(r["env"]) == ["TERM", "A"] + list(ENV)  # TERM: 8.1.9's qsub sends it first


def test_term_is_sent_empty_unless_v_or_V_gives_it():
    # 8.1.9: qsub -verify shows "env_list: TERM", "TERM=foo" with -v TERM=foo, "TERM=xterm,..." with -V
    assert submit(["-b", "y", "/bin/true"])["env"] == {"TERM": ""}
    assert submit(["-v", "TERM=foo", "-b", "y", "/bin/true"])["env"] == {"TERM": "foo"}
    r = submit(["-V", "-b", "y", "/bin/true"], env=dict(ENV, TERM="xterm"))
    assert list(r["env"])[0] == "TERM" and r["env"]["TERM"] == "xterm"


@pytest.mark.parametrize("value", ["", ",", "=1"])
def test_bad_variable_lists(value):
    # qsub -verify -v '' -b y /bin/true -> rc 7
    assert error(["-v", value, "-b", "y", "/bin/true"]) == (
        f'qsub: Wrong variable list format -v "{value}" or environment variable not set', 7)


def test_context_options_apply_in_order():
    r = submit(["-ac", "A=1,B", "-dc", "A", "-ac", "D=4", "-b", "y", "/bin/true"])
    assert r["context"] == {"B": None, "D": "4"}
    assert submit(["-ac", "A=1", "-sc", "C=3", "-b", "y", "/bin/true"])["context"] == {"C": "3"}
    # qsub -verify -ac '' ... -> rc 7
    assert error(["-ac", "", "-b", "y", "/bin/true"]) == ('qsub: Wrong context list format -ac ""', 7)


# ---------------------------------------------------------------- resources and queues

def test_l_is_hard_until_soft_and_keeps_the_last_value_of_a_resource():
    # qsub -verify -l h_rt=10,mem_free=1G -l h_rt=20 -soft -l arch=lx ...
    r = submit(["-l", "h_rt=10,mem_free=1G", "-l", "h_rt=20", "-soft", "-l", "arch=lx",
                "-hard", "-l", "x", "-b", "y", "/bin/true"])
    assert r["hard_resources"] == {"mem_free": "1G", "h_rt": "20", "x": "TRUE"}
    assert r["soft_resources"] == {"arch": "lx"}


def test_resource_without_name():
    # qsub -verify -l 'a=1,=2' -b y /bin/true -> rc 7
    assert error(["-l", "a=1,=2", "-b", "y", "/bin/true"]) == (
        'error: unknown resource ""\n'
        'qsub: Wrong resource list format "a=1,=2" specified to -l option', 7)


def test_q_lists_accumulate_hard_and_soft():
    r = submit(["-q", "all.q@vm,b.q", "-soft", "-q", "s.q", "-hard", "-q", "c.q",
                "-masterq", "m.q", "-b", "y", "/bin/true"])
    assert (r["hard_queues"], r["soft_queues"], r["master_queues"]) == (
        ["all.q@vm", "b.q", "c.q"], ["s.q"], ["m.q"])
    # qsub -verify -q '' ... -> rc 7
    assert error(["-q", "", "-b", "y", "/bin/true"]) == (
        'qsub: Wrong queue list format "" specified to -q option', 7)


# ---------------------------------------------------------------- parallel environments

@pytest.mark.parametrize("spec, ranges", [
    ("4", [[4, 4]]), ("2-", [[2, 9999999]]), ("-4", [[1, 4]]), ("5-2", [[2, 5]]),
    ("-", [[1, 9999999]]), ("1-3,2-5", [[1, 5]]),
])
def test_pe_slot_ranges(spec, ranges):
    # qsub -verify -pe smp SPEC ... (range shown by the real qsub)
    assert submit(["-pe", "smp", spec, "-b", "y", "/bin/true"])["pe"] == {
        "name": "smp", "ranges": ranges}


def test_pe_range_must_be_a_number():
    # qsub -verify -pe smp x -b y /bin/true -> rc 7
    assert error(["-pe", "smp", "x", "-b", "y", "/bin/true"]) == (
        'qsub: Numerical value invalid!\nThe initial portion of string "x" contains no '
        "decimal number", 7)


def test_pe_range_zero_is_rejected_by_the_qmaster():
    # qsub -h -pe smp 0 -b y /bin/true -> rc 1
    assert error(["-pe", "smp", "0-3", "-b", "y", "/bin/true"]) == (
        'Unable to run job: "job" rejected: pe range must be greater than zero\nExiting.', 1)


# ---------------------------------------------------------------- array jobs

@pytest.mark.parametrize("spec, array", [
    ("1-5", [1, 5, 1]), ("4", [4, 4, 1]), ("2-10:3", [2, 10, 3]),
    ("5-1", [1, 5, 1]),       # golden qsub_-t.bad_range: submitted as 1-5:1
    ("1-3,2-7", [1, 7, 1]), ("1x5", [1, 5, 1]),
])
def test_task_ranges(spec, array):
    assert submit(["-t", spec, "-b", "y", "/bin/true"])["array"] == array


@pytest.mark.parametrize("spec, text", [
    # qsub -verify -t SPEC -b y /bin/true -> rc 7
    ("1-5:0", "qsub: Negative or zero step in range is not allowed"),
    ("1-5:-1", "qsub: Negative or zero step in range is not allowed"),
    ("a", 'qsub: Numerical value invalid!\nThe initial portion of string "a" contains no decimal number'),
    ("1-5:2.5", 'qsub: Numerical value invalid!\nThe initial portion of string "2.5" contains no decimal number'),
    ("-5", 'qsub: Range specifier "-5" has unknown trailer "5"'),
    ("1-5x", 'qsub: Range specifier "5x" has unknown trailer "x"'),
    ("1-5:2:3", 'qsub: Range specifier "2:3" has unknown trailer ":3"'),
    ("1-3,5-7", "qsub: -t option only allows one range specification"),
])
def test_bad_task_ranges(spec, text):
    assert error(["-t", spec, "-b", "y", "/bin/true"]) == (text, 7)


def test_task_id_zero_is_rejected_by_the_qmaster():
    # qsub -h -t 0-3 -b y /bin/true -> rc 1
    assert error(["-t", "0-3", "-b", "y", "/bin/true"]) == (
        "Unable to run job: job rejected: 0 is an invalid task id\nExiting.", 1)


# ---------------------------------------------------------------- mail and dependencies

def test_mail_options_accumulate_and_n_clears_them():
    # qsub -verify -m n -m b -m ea ... -> abe;  -m bn -> none
    assert submit(["-m", "n", "-m", "b", "-m", "ea", "-b", "y", "/bin/true"])["mail_options"] == "abe"
    assert submit(["-m", "bn", "-b", "y", "/bin/true"])["mail_options"] == ""
    # qsub -verify -m b,e -b y /bin/true -> rc 7
    assert error(["-m", "b,e", "-b", "y", "/bin/true"]) == (
        'qsub: Wrong mail options list format "b,e" specified to -m option', 7)


def test_mail_list_defaults_to_the_submitter_and_merges_by_host():
    assert submit(["-b", "y", "/bin/true"])["mail_list"] == ["sgetest@vm"]
    # qsub -verify -M 'a,b@h' -M c ... -> c@NONE,b@h
    assert submit(["-M", "a,b@h", "-M", "c", "-b", "y", "/bin/true"])["mail_list"] == ["c", "b@h"]


def test_hold_jid_lists_append():
    # qsub -verify -hold_jid 1,foo -hold_jid 2 ... -> 1,foo,2
    r = submit(["-hold_jid", "1,foo", "-hold_jid", "2", "-hold_jid_ad", "5", "-b", "y", "/bin/true"])
    assert (r["hold_jid"], r["hold_jid_ad"]) == (["1", "foo", "2"], ["5"])
    assert error(["-hold_jid", "", "-b", "y", "/bin/true"]) == (
        'qsub: Wrong jid_hold list format "" specified to -hold_jid option', 7)


# ---------------------------------------------------------------- precedence

def test_later_option_wins_with_a_warning_on_stdout():
    # qsub -verify -N a -N b ... prints the warning on stdout
    r = submit(["-N", "a", "-N", "b", "-b", "y", "/bin/true"])
    assert r["job_name"] == "b"
    assert r["warnings"] == ['qsub: warning: "-N" option has already been set, overriding previous setting']


def test_default_files_apply_in_order_cell_home_cwd():
    files = {CELL_FILE: "-N cell -m b\n", HOME_FILE: "-N home -l a=1\n", CWD_FILE: "-N cwd\n"}
    r = submit(["-b", "y", "/bin/true"], files=files)
    assert (r["job_name"], r["mail_options"], r["hard_resources"]) == ("cwd", "b", {"a": "1"})


def test_a_default_file_met_twice_is_read_once():
    r = submit(["-b", "y", "/bin/true"], files={HOME_FILE: "-hold_jid 1\n"}, cwd="/home/sgetest")
    assert r["hold_jid"] == ["1"]


def test_default_file_comments_and_blank_lines():
    r = submit(["-b", "y", "/bin/true"], files={CWD_FILE: "# c\n\n-N d -l a=1   # t\n-m e\n"})
    assert (r["job_name"], r["hard_resources"], r["mail_options"]) == ("d", {"a": "1"}, "e")


def test_error_in_a_default_file_has_no_prefix():
    # cd d2 (.sge_request: -foo) && qsub -verify -b y /bin/true -> rc 2
    assert error(["-b", "y", "/bin/true"], files={CWD_FILE: "-foo\n"}) == (
        'invalid option argument "-foo"', 2)


def test_warning_in_a_default_file():
    r = submit(["-b", "y", "/bin/true"], files={CWD_FILE: "-N a -N b\n"})
    assert r["warnings"] == ['warning: "-N" option has already been set, overriding previous setting']


def test_script_directives_override_defaults_and_command_line_overrides_both():
    files = {CWD_FILE: "-N dflt -l a=1\n",
             "/w/s.sh": "#!/bin/sh\n#$ -N fromscript   # comment\n#$-l h_rt=100\necho\n"}
    r = submit(["s.sh"], files=files)
    assert (r["job_name"], r["hard_resources"]) == ("fromscript", {"a": "1", "h_rt": "100"})
    r = submit(["-l", "h_rt=5", "-N", "cmd", "s.sh"], files=files)
    assert (r["job_name"], r["hard_resources"]) == ("cmd", {"a": "1", "h_rt": "5"})


def test_q_of_a_later_source_replaces_all_earlier_q():
    files = {CWD_FILE: "-q def.q\n", "/w/s.sh": "#$ -q script.q\n#$ -l b=2\n"}
    assert submit(["s.sh"], files=files)["hard_queues"] == ["script.q"]
    assert submit(["-q", "cmd.q", "s.sh"], files=files)["hard_queues"] == ["cmd.q"]
    assert submit(["-b", "y", "x"], files=files)["hard_queues"] == ["def.q"]


def test_only_lines_with_the_directive_prefix_are_parsed():
    text = "#$ -N s1\n# $ -N no\nXX -N xx\n"
    assert submit(["s.sh"], files={"/w/s.sh": text})["job_name"] == "s1"


def test_C_changes_the_prefix_and_C_empty_disables_directives():
    files = {"/w/s.sh": "XX -N fromXX\n#$ -N fromscript\n"}
    r = submit(["-C", "XX", "s.sh"], files=files)
    assert (r["job_name"], r["directive_prefix"]) == ("fromXX", "XX")
    assert submit(["-C", "", "s.sh"], files=files)["job_name"] == "s.sh"


def test_C_inside_the_script_is_ignored():
    files = {"/w/s.sh": "#$ -C XX\nXX -N fromXX\n#$ -m b\n"}
    r = submit(["s.sh"], files=files)
    assert (r["job_name"], r["mail_options"], r["directive_prefix"]) == ("s.sh", "b", None)


def test_binary_jobs_are_not_scanned_for_directives():
    r = submit(["-b", "y", "s.sh"], files={"/w/s.sh": "#$ -N fromscript\n"})
    assert (r["job_name"], r["script"]) == ("s.sh", None)


def test_directive_quotes_run_to_the_end_of_the_line():
    # #$ -N "ab" -m e  -> job name 'ab -m e';  #$ -N a#b -m e -> 'a'
    assert split_directive_line('-N "ab" -m e') == ["-N", "ab -m e"]
    assert split_directive_line("-v A='x' -N foo") == ["-v", "A=x -N foo"]
    assert split_directive_line("-N a#b -m e") == ["-N", "a"]
    assert split_directive_line('\t-N\t"a b"\r') == ["-N", "a b"]


def test_error_in_a_directive():
    # qsub -verify s7.sh (#$ -N) -> rc 2; s6.sh (#$ -foo) -> rc 2; s8.sh (#$ -p 5000) -> rc 7
    assert error(["s.sh"], files={"/w/s.sh": "#$ -N\n"}) == (
        "Unable to read script file because of error: -N option must have argument", 2)
    assert error(["s.sh"], files={"/w/s.sh": "#$ -foo\n"}) == (
        'Unable to read script file because of error: invalid option argument "-foo"', 2)
    assert error(["s.sh"], files={"/w/s.sh": "#$ -p 5000\n"}) == (
        "Unable to read script file because of error: invalid priority \"5000\".  Must be "
        "an integer from -1023 to 1024", 7)


def test_a_word_that_is_no_option_in_a_directive_is_an_unknown_option():
    # qsub -verify s4.sh ('#$ extra_token') -> rc 5
    assert error(["s.sh"], files={"/w/s.sh": "#$ extra_token\n"}) == ("qsub: Unknown option \n", 5)


def test_help_inside_a_script_is_not_allowed():
    # qsub -verify hs.sh ('#$ -help') -> rc 5
    assert error(["s.sh"], files={"/w/s.sh": "#$ -help\n"}) == (
        "qsub: -help not allowed in this context", 5)


def test_soft_does_not_carry_over_to_the_next_directive_line():
    r = submit(["s.sh"], files={"/w/s.sh": "#$ -soft -l a=1\n#$ -l b=2\n"})
    assert (r["soft_resources"], r["hard_resources"]) == ({"a": "1"}, {"b": "2"})


def test_terse_counts_on_the_command_line_only():
    assert submit(["s.sh"], files={"/w/s.sh": "#$ -terse\n"})["terse"] is False


def test_clear_discards_everything_before_it():
    # qsub -t 1-3 -b y -shell n -tc 2 -N a -l x=1 -clear -verify /bin/true -> plain job "true"
    r = submit(["-t", "1-3", "-shell", "n", "-N", "a", "-l", "x=1", "-clear", "-b", "y",
                "/bin/true"])
    assert (r["array"], r["no_shell"], r["job_name"], r["hard_resources"]) == (
        None, False, "true", {})


def test_clear_in_the_script_discards_the_defaults():
    files = {CWD_FILE: "-N dflt -t 1-2\n", "/w/sc.sh": "#$ -clear\n#$ -l c=3\n"}
    r = submit(["sc.sh"], files=files)
    assert (r["job_name"], r["array"], r["hard_resources"]) == ("sc.sh", None, {"c": "3"})


def test_option_file_inserts_its_options_in_place():
    files = {"/w/o_a": "# c\n-N a -l x=1\n-m e\n"}
    # qsub -verify -N first -@ o_a ... -> a;  -@ o_a -N last ... -> last
    assert submit(["-N", "first", "-@", "o_a", "-b", "y", "/bin/true"], files=files)["job_name"] == "a"
    assert submit(["-@", "o_a", "-N", "last", "-b", "y", "/bin/true"], files=files)["job_name"] == "last"


def test_option_file_that_cannot_be_read():
    assert error(["-@", "nonexist", "-b", "y", "/bin/true"]) == (
        "qsub: error opening nonexist: No such file or directory", 14)


# ---------------------------------------------------------------- messages and paths

def test_submitted_messages_match_the_real_qsub():
    assert submitted_message(2, "run1") == golden("qsub.normal")
    assert submitted_message(7, "arr", array=[1, 5, 1]) == golden("qsub_-t_1-5")
    assert submitted_message(18, "true", array=[1, 5, 1]) == golden("qsub_-t.bad_range")
    assert submitted_message(3, "run2", terse=True) == golden("qsub_-terse")
    assert submitted_message(8, "arr3", array=[1, 3, 1], terse=True) == golden("qsub_-terse_-t_1-3")
    # qsub -h -t 4 ...: a one-task array is still a job-array
    assert submitted_message(50, "x", array=[4, 4, 1]) == 'Your job-array 50.4-4:1 ("x") has been submitted'


def test_expand_path_pseudo_variables():
    kw = dict(job_id=39, job_name="paths", user="sgetest", home="/home/sgetest", hostname="vm")
    assert expand_path("out.$JOB_ID.$TASK_ID", task_id=None, **kw) == "out.39.0"  # golden out.39.0
    assert expand_path("~/$USER/$JOB_NAME.$HOSTNAME.$TASK_ID", task_id=2, **kw) == (
        "/home/sgetest/sgetest/paths.vm.2")
    assert expand_path("$HOME/x", task_id=None, **kw) == "/home/sgetest/x"


def test_default_output_files_in_home_or_working_directory():
    kw = dict(job_id=34, user="sgetest", home="/home/sgetest", hostname="vm")
    r = submit(["-t", "1-3", "-N", "envarr", "-b", "y", "/bin/true"])
    assert output_path("o", r, task_id=1, **kw) == "/home/sgetest/envarr.o34.1"
    r = submit(["-cwd", "-N", "envbin", "-b", "y", "/usr/bin/env"], cwd="/home/sgetest/golden")
    assert output_path("e", r, task_id=None, **kw) == "/home/sgetest/golden/envbin.e34"
    assert output_path("i", r, task_id=None, **kw) == "/dev/null"


def test_output_to_a_directory_gets_the_default_name_and_j_merges():
    kw = dict(job_id=36, task_id=None, user="sgetest", home="/home/sgetest", hostname="vm")
    r = submit(["-j", "y", "-o", "outdir", "-e", "/dev/null", "-N", "merged", "-b", "y", "/bin/sh"])
    path = output_path("e", r, is_dir=lambda p: p.endswith("outdir"), **kw)
    assert path == "/home/sgetest/outdir/merged.o36"
