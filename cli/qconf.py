"""qconf: show and change the cell's configuration (qconf(1)).

The command reads the files it is given and sends their text to the qmaster,
which parses, checks, spools and answers with what to print (see
:mod:`minisge.qmaster.qconf`).  The editor forms (``-aq``, ``-mq``, ``-mc``,
``-mconf`` ...) put the current text (or a template) in a temporary file,
run ``$EDITOR`` (default ``vi``) on it and send the result like the
``-A``/``-M`` forms.  Standard library and :mod:`minisge.protocol.client` only.
"""

from __future__ import annotations

import os
import sys

from minisge import protocol
from minisge.formats import sge_types
from minisge.protocol import operations
from minisge.protocol.client import NoQmaster, call, connect, refused

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

USAGE = """\
SGE 8.1.9
usage: qconf [options]
   [-aattr obj_nm attr_nm val obj_id_list]  add to a list attribute of an object
   [-Aattr obj_nm fname obj_id_list]        add to a list attribute of an object
   [-acal calendar_name]                    add a new calendar
   [-Acal fname]                            add a new calendar from file
   [-Ackpt fname]                           add a checkpointing interface definition from file
   [-aconf host_list]                       add configurations
   [-Aconf file_list]                       add configurations from file_list
   [-ae [exec_server_template]]             add an exec host using a template
   [-Ae fname]                              add an exec host from file
   [-ah hostname_list]                      add an administrative host
   [-ahgrp group]                           add new host group entry
   [-Ahgrp file]                            add new host group entry from file
   [-arqs [rqs_list]]                       add resource quota set(s)
   [-Arqs fname]                            add resource quota set(s) from file
   [-am user_list]                          add user to manager list
   [-ao user_list]                          add user to operator list
   [-ap pe-name]                            add a new parallel environment
   [-aprj]                                  add project
   [-Aprj fname]                            add project from file
   [-aq [queue_name]]                       add a new cluster queue
   [-Aq fname]                              add a queue from file
   [-ar ar_id]                              bind job to advance reservation
   [-as hostname_list]                      add a submit host
   [-astree]                                create/modify the sharetree
   [-Astree fname]                          create/modify the sharetree from file
   [-au user_list listname_list]            add user(s) to userset list(s)
   [-Au fname]                              add userset from file
   [-auser]                                 add user
   [-Auser fname]                           add user from file
   [-ckpt ckpt-name]                        request checkpoint method
   [-clear]                                 skip previous definitions for job
   [-clearusage [user_list]]                clear sharetree usage for user_list or all users/projects
   [-cq wc_queue_list]                      clean queue
   [-dattr obj_nm attr_nm val obj_id_list]  delete from a list attribute of an object
   [-Dattr obj_nm fname obj_id_list]        delete from a list attribute of an object
   [-dcal calendar_name]                    delete calendar
   [-dckpt ckpt_name]                       delete checkpointing interface definition
   [-dconf host_list]                       delete local configurations
   [-de host_list]                          delete exec host
   [-display display]                       set DISPLAY variable inside interactive job (not available for qrsh without command)
   [-dh host_list]                          delete administrative host
   [-dhgrp group]                           delete host group entry
   [-dl date_time]                          request a deadline initiation time
   [-drqs rqs_list]                         delete resource quota set(s)
   [-dm user_list]                          delete user from manager list
   [-do user_list]                          delete user from operator list
   [-dp pe-name]                            delete parallel environment
   [-dprj project_list]                     delete project
   [-dq wc_queue_list]                      delete queue
   [-ds host_list]                          delete submit host
   [-dstnode node_list]                     delete sharetree node(s)
   [-dstree]                                delete the sharetree
   [-du user_list listname_list]            delete user(s) from userset list(s)
   [-duser user_list]                       delete user(s)
   [-help]                                  print this help
   [-ke[j] host_list                        shutdown execution daemon(s)
   [-k{m|s}]                                shutdown master|scheduling thread
   [-kec evid_list]                         kill event client
   [-kt thread_name]                        kill qmaster thread
   [-Mattr obj_nm fname obj_id_list]        modify an attribute (or element in a sublist) of an object
   [-mc ]                                   modify complex attributes
   [-Mc fname]                              modify complex attributes from file
   [-mcal calendar_name]                    modify calendar
   [-Mcal fname]                            modify calendar from file
   [-mckpt ckpt_name]                       modify a checkpointing interface definition
   [-Mckpt fname]                           modify a checkpointing interface definition from file
   [-mconf [host_list|global]]              modify configurations
   [-Mconf file_list]                       modify configurations from file_list
   [-me server]                             modify exec server
   [-Me fname]                              modify exec server from file
   [-mhgrp group]                           modify host group entry
   [-Mhgrp file]                            modify host group entry from file
   [-mrqs [rqs_list]]                       modify resource quota set(s)
   [-Mrqs fname [rqs_list]]                 modify resource quota set(s) from file
   [-mp pe-name]                            modify a parallel environment
   [-Mp fname]                              modify a parallel environment from file
   [-mprj project]                          modify a project
   [-Mprj fname]                            modify project from file
   [-mq queue]                              modify a queue
   [-Mq fname]                              modify a queue from file
   [-msconf]                                modify scheduler configuration
   [-Msconf fname]                          modify scheduler configuration from file
   [-mstnode node_shares_list]              modify sharetree node(s)
   [-mstree]                                modify/create the sharetree
   [-Mstree fname]                          modify/create the sharetree from file
   [-mu listname_list]                      modify the given userset list
   [-Mu fname]                              modify userset from file
   [-muser user]                            modify a user
   [-Muser fname]                           modify a user from file
   [-purge obj_nm3 attr_nm objectname]      deletes attribute from object_instance
   [-R y[es]|n[o]]                          reservation desired
   [-rattr obj_nm attr_nm val obj_id_list]  replace a list attribute of an object
   [-Rattr obj_nm fname obj_id_list]        replace a list attribute of an object
   [-rsstnode node_list]                    show sharetree node(s) and its children
   [-sc]                                    show complex attributes
   [-scal calendar_name]                    show given calendar
   [-scall]                                 show a list of all calendar names
   [-sckpt ckpt_name]                       show checkpointing interface definition
   [-sckptl]                                show all checkpointing interface definitions
   [-sconf [host_list|global]]              show configurations
   [-sconfl]                                show a list of all local configurations
   [-sds]                                   show detached settings
   [-se server]                             show given exec server
   [-secl]                                  show event client list
   [-sel]                                   show a list of all exec servers
   [-sh]                                    show a list of all administrative hosts
   [-shgrp group]                           show host group
   [-shgrp_tree group]                      show host group and used hostgroups as tree
   [-shgrp_resolved group]                  show host group with resolved hostlist
   [-shgrpl]                                show host group list
   [-sm]                                    show a list of all managers
   [-so]                                    show a list of all operators
   [-sobjl obj_nm2 attr_nm val]             show objects which match the given value
   [-sp pe-name]                            show a parallel environment
   [-spl]                                   show all parallel environments
   [-sprj project]                          show a project
   [-sprjl]                                 show a list of all projects
   [-sq [wc_queue_list]]                    show the given queue
   [-sql]                                   show a list of all queues
   [-srqsl]                                 show resource quota set list
   [-ss]                                    show a list of all submit hosts
   [-ssconf]                                show scheduler configuration
   [-sstnode node_list]                     show sharetree node(s)
   [-sst]                                   show a formatted sharetree
   [-sstree]                                show the sharetree
   [-su listname_list]                      show the given userset list
   [-sul]                                   show a list of all userset lists
   [-suser user_list]                       show user(s)
   [-suserl]                                show a list of all users
   [-tc max_running_tasks]                  throttle the number of concurrent tasks
   [-tsm]                                   trigger scheduler monitoring
   [-verbose]                               verbose information output
   [-w e|w|n|v|p]                           verify mode (error|warning|none|just verify|poke) for jobs

complex_list            complex[,complex,...]
date_time               [[CC]YY]MMDDhhmm[.SS]
wc_queue_list           wc_queue[,wc_queue,...]
hostname_list           hostname[,hostname,...]
listname_list           listname[,listname,...]
rqs_list                rqs_name[,rqs_name,...]
node_list               node_path[,node_path,...]
node_path               [/]node_name[[/.]node_name...]
node_shares_list        node_path=shares[,node_path=shares,...]
user_list               user[,user,...]
obj_nm                  "queue"|"exechost"|"pe"|"ckpt"|"hostgroup"|"resource_quota"
attr_nm                 (see man pages)
obj_id_list             objectname [ objectname ...]
project_list            project[,project,...]
evid_list               all | evid[,evid,...]
host_list               all | hostname[,hostname,...]
obj_nm2                 "queue"|"queue_domain"|"queue_instance"|"exechost"
obj_nm3                 "queue"
ar_id                   advance reservation id
thread_name             "scheduler"|"jvm"
max_running_tasks       maximum number of simultaneously running tasks
"""  # noqa: E501 - Grid Engine 8.1.9's help text, as it is

#: options that take no argument
NO_ARG = {"-sql", "-sc", "-spl", "-srqsl", "-sel", "-shgrpl", "-sul", "-sprjl", "-sm", "-so", "-ss", "-sh",
          "-sconfl", "-ssconf", "-sckptl", "-scall", "-sstree", "-mc", "-msconf", "-sds", "-secl", "-sss",
          "-suserl", "-sst", "-km", "-ks", "-tsm", "-astree", "-mstree", "-dstree", "-auser"}
#: options with one optional argument (taken when it does not start with "-")
OPT_ARG = {"-sq", "-srqs", "-sconf", "-aq", "-ae", "-arqs", "-mrqs", "-mconf", "-aprj", "-clearusage"}
#: options with one argument
ONE_ARG = {"-sp", "-se", "-shgrp", "-shgrp_tree", "-shgrp_resolved", "-su", "-sprj", "-dq", "-dp", "-drqs",
           "-de", "-dhgrp", "-dul", "-dprj", "-dconf", "-am", "-ao", "-as", "-ah", "-dm", "-do", "-ds", "-dh",
           "-ap", "-mp", "-mq", "-me", "-ahgrp", "-mhgrp", "-mu", "-mprj", "-aconf",
           # calendars, checkpointing, share tree, users, daemons: the qmaster answers as 8.1.9 with
           # none of them, or says minisge does not support the change
           "-scal", "-sckpt", "-sstnode", "-rsstnode", "-astnode", "-mstnode", "-dstnode", "-suser", "-dcal", "-dckpt",
           "-duser", "-acal", "-mcal", "-mckpt", "-muser", "-cq", "-ke", "-kej", "-kec", "-kt", "-Acal", "-Mcal",
           "-Ackpt", "-Mckpt"}
#: options with three arguments
THREE_ARGS = {"-sobjl", "-purge"}
#: the attribute edits from a file: obj_nm fname obj_id_list
FILE_ATTR_OPTS = {"-Aattr", "-Mattr", "-Rattr", "-Dattr"}
#: options with a file argument, and the kind of error their reader prints
FILE_ARG = {"-Aq": "queue", "-Mq": "queue", "-Ap": "flat", "-Mp": "flat", "-Au": "flat", "-Mu": "flat",
            "-Ahgrp": "flat", "-Mhgrp": "flat", "-Aprj": "flat", "-Mprj": "flat", "-Ae": "flat", "-Me": "flat",
            "-Arqs": "flat", "-Mrqs": "flat", "-Mc": "complex", "-Msconf": "flat", "-Astree": "flat",
            "-Mstree": "flat", "-Auser": "flat", "-Muser": "flat"}
ATTR_OPTS = {"-aattr", "-mattr", "-rattr", "-dattr"}
#: editor forms: option -> (kind of template or the show option, the option that sends the result)
EDIT = {"-aq": ("queue", "-Aq"), "-mq": ("-sq", "-Mq"), "-ap": ("pe", "-Ap"), "-mp": ("-sp", "-Mp"),
        "-ae": ("exechost", "-Ae"), "-me": ("exechost", "-Me"), "-ahgrp": ("hostgroup", "-Ahgrp"),
        "-mhgrp": ("-shgrp", "-Mhgrp"), "-mu": ("-su", "-Mu"), "-aprj": ("project", "-Aprj"),
        "-mprj": ("-sprj", "-Mprj"), "-arqs": ("rqs", "-Arqs"), "-mrqs": ("-srqs", "-Mrqs"),
        "-mc": ("-sc", "-Mc"), "-msconf": ("-ssconf", "-Msconf"), "-astree": ("sharetree", "-Astree"),
        "-mstree": ("sharetree", "-Mstree")}


class Exit(Exception):
    def __init__(self, rc: int):
        self.rc = rc


def usage_error(message: str) -> int:
    sys.stderr.write(f"error: {message}\n{USAGE}")
    return 1


def send(cmd: str, args: list[str] | list[dict[str, str | None]], text: str | None = None,
         path: str | None = None) -> int:
    """One request; print what the qmaster answers; its exit code."""
    msg: dict[str, Any] = {"op": operations.QCONF, "cmd": cmd, "args": args}
    if text is not None:
        msg["text"] = text
        msg["path"] = path
    reply = call(msg)
    rc = refused(reply)
    if rc is not None:
        return rc
    sys.stdout.write(reply.get("out", ""))
    sys.stderr.write(reply.get("err", ""))
    return int(reply.get("rc", 0))


def kill_master() -> None:
    """qconf -km of a manager: the shutdown; the daemon may end before it answers."""
    try:
        sock = connect()
    except NoQmaster:
        return
    try:
        protocol.request(sock, {"op": operations.SHUTDOWN})
    except (OSError, protocol.ProtocolError):
        pass
    finally:
        sock.close()


def read_file(path: str, style: str) -> str | None:
    """The file's text, or None after printing Grid Engine's complaint."""
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            return f.read()
    except OSError as e:
        reason = e.strerror or str(e)
        lines = [f'error: error opening file "{path}" for reading: {reason}']
        if style == "flat":
            lines.append("error reading in file")
        elif style == "complex":
            lines.append(f'Complex attribute file "{path}" is not correct')
        sys.stderr.write("".join(f"{ln}\n" for ln in lines))
        return None


_NAME_CHARS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"


def temp_name() -> str:
    """The name Grid Engine's qconf gives the file it writes for -mattr
    (os.urandom: the random module costs qconf's start-up more than it is worth)."""
    tail = "".join(_NAME_CHARS[b % len(_NAME_CHARS)] for b in os.urandom(6))
    return f"/tmp/pid-{os.getpid()}-{tail}"


def create_temp_file() -> tuple[int, str]:
    """A new file of this user alone, named as temp_name says: (fd, path)."""
    while True:
        path = temp_name()
        try:
            return os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600), path
        except FileExistsError:
            continue


def ask(cmd: str, args: list[str]) -> tuple[int, str]:
    """Ask the qmaster for a text (a show option or a template): (rc, text)."""
    reply = call({"op": operations.QCONF, "cmd": cmd, "args": args})
    if not reply.get("ok"):
        sys.stderr.write(reply.get("error", "") + "\n")
        return int(reply.get("rc", 1)), ""
    if reply.get("rc"):
        sys.stderr.write(reply.get("err", ""))
        return int(reply["rc"]), ""
    return 0, str(reply.get("out", ""))


def edit(opt: str, name: str | None) -> int:
    """The editor forms: current text (or a template) -> $EDITOR -> -A/-M."""
    source, target = EDIT[opt]
    if source.startswith("-"):
        rc, text = ask(source, [name] if name else [])
    else:
        rc, text = ask("template", [source, name or "template"])
    if rc:
        return rc
    fd, path = create_temp_file()
    try:
        with os.fdopen(fd, "w") as f:
            f.write(text)
        editor = os.environ.get("EDITOR") or "vi"
        # through the shell, as Grid Engine runs it (EDITOR may carry arguments)
        status = os.waitstatus_to_exitcode(os.system(f'{editor} "{path}"'))
        if status < 0:
            sys.stderr.write(f"editor was terminated by a signal {-status}\n")
            return 1
        if status:
            sys.stderr.write(f"editor exited with error {status}\n")
            return 1
        with open(path, encoding="utf-8", errors="replace") as f:
            new = f.read()
    finally:
        try:
            os.unlink(path)
        except OSError:
            pass
    args = [name] if target == "-Mrqs" and name else []
    return send(target, args, new, path)


def take(argv: list[str], i: int, opt: str) -> str:
    if i >= len(argv):
        raise Exit(usage_error(f'no option argument provided to "{opt}"'))
    return argv[i]


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if not argv:
        sys.stderr.write(USAGE + "ERROR! no option argument\n")
        return 1
    try:
        return run(argv)
    except Exit as e:
        return e.rc


def run(argv: list[str]) -> int:
    rc = 0
    i = 0
    while i < len(argv):
        opt = argv[i]
        i += 1
        if opt == "-help":
            sys.stdout.write(USAGE)
            return 0
        if opt == "-km":
            rc = send(opt, [])
            if rc == 0:
                kill_master()
        elif opt in NO_ARG and opt not in EDIT:
            rc = send(opt, [])
        elif opt in OPT_ARG and opt not in EDIT:
            args = []
            if i < len(argv) and not argv[i].startswith("-"):
                args.append(argv[i])
                i += 1
            rc = send(opt, args)
        elif opt in EDIT:
            name = None
            if opt in ONE_ARG:
                name = take(argv, i, opt)
                i += 1
            elif opt in OPT_ARG and i < len(argv) and not argv[i].startswith("-"):
                name = argv[i]
                i += 1
            rc = edit(opt, name)
        elif opt in ("-astnode", "-mstnode"):
            arg = take(argv, i, opt)
            i += 1
            bad = [n for n in arg.replace(" ", ",").split(",") if n and not sge_types.is_node_share(n)]
            if bad:  # 8.1.9 checks the form before it asks the qmaster
                sys.stderr.write(f"{bad[0]} is not a valid argument, see node_shares_list format\n"
                                 f"no modifications to sharetree\n{USAGE}")
                rc = 1
            else:
                rc = send(opt, [arg])
        elif opt in ONE_ARG:
            rc = send(opt, [take(argv, i, opt)])
            i += 1
        elif opt in FILE_ARG:
            path = take(argv, i, opt)
            i += 1
            args = []
            if opt == "-Mrqs" and i < len(argv) and not argv[i].startswith("-"):
                args.append(argv[i])
                i += 1
            text = read_file(path, FILE_ARG[opt])
            rc = 1 if text is None else send(opt, args, text, path)
        elif opt in ("-Mconf", "-Aconf"):
            files: list[dict[str, str | None]] = []
            while i < len(argv) and not argv[i].startswith("-"):
                for p in argv[i].split(","):
                    try:
                        with open(p, encoding="utf-8", errors="replace") as f:
                            files.append({"path": p, "text": f.read()})
                    except OSError:
                        files.append({"path": p, "text": None})
                i += 1
            if not files:
                raise Exit(usage_error(f'no option argument provided to "{opt}"'))
            rc = send(opt, files)
        elif opt in ATTR_OPTS:
            args = []
            for _ in range(4):
                args.append(take(argv, i, args[-1] if args else opt))
                i += 1
            rc = _attr(opt, args)
        elif opt in THREE_ARGS:
            args = []
            for _ in range(3):
                args.append(take(argv, i, opt))
                i += 1
            rc = send(opt, args)
        elif opt in FILE_ATTR_OPTS:
            args = []
            for _ in range(3):
                args.append(take(argv, i, opt))
                i += 1
            text = read_file(args[1], "attr")
            if text is None:
                sys.stderr.write(f'error: invalid option argument "{args[1]}"\nUsage: qconf -help\n')
                return 1
            rc = send(opt, args, text, args[1])
        elif opt in ("-au", "-du"):
            users = take(argv, i, opt)
            i += 1
            if i >= len(argv) or argv[i].startswith("-"):
                raise Exit(usage_error(f'no list_name provided to "{opt} {users}"'))
            rc = send(opt, [users, argv[i]])
            i += 1
        else:
            sys.stderr.write(f'error: invalid option argument "{opt}"\nUsage: qconf -help\n')
            return 1
        if rc:
            return rc
    return rc


def _attr(opt: str, args: list[str]) -> int:
    """The attribute edits: Grid Engine writes the value to a temporary file
    first; its name appears in the errors."""
    msg = {"op": operations.QCONF, "cmd": opt, "args": args, "path": temp_name()}
    reply = call(msg)
    rc = refused(reply)
    if rc is not None:
        return rc
    sys.stdout.write(reply.get("out", ""))
    sys.stderr.write(reply.get("err", ""))
    return int(reply.get("rc", 0))


if __name__ == "__main__":
    sys.exit(main())
