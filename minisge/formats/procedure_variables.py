"""The variables the command line of a procedure may use: sge_conf(5)
prolog/epilog and sge_pe(5) start_proc_args/stop_proc_args.

Constants alone, nothing imported: the shepherd (forked from the small
shepherd launcher, :mod:`minisge.execd.launcher`) checks command lines
against them without loading the formats' parsers.
"""

# sge_conf(5) prolog: the variables a prolog/epilog command line may use
# (prolog_epilog_variables[] in config_file.c).
PROLOG_EPILOG_VARIABLES = frozenset({
    "host", "ja_task_id", "job_owner", "job_id", "job_name", "processors",
    "queue", "sge_cell", "sge_root", "stdin_path", "stdout_path",
    "stderr_path", "merge_stderr", "fs_stdin_host", "fs_stdin_path",
    "fs_stdin_tmp_path", "fs_stdin_file_staging", "fs_stdout_host",
    "fs_stdout_path", "fs_stdout_tmp_path", "fs_stdout_file_staging",
    "fs_stderr_host", "fs_stderr_path", "fs_stderr_tmp_path",
    "fs_stderr_file_staging",
})

# sge_pe(5): the variables a start or stop procedure's command line may use.
PROC_VARIABLES = (
    "pe_hostfile", "host", "job_owner", "job_id", "job_name", "pe", "pe_slots",
    "processors", "queue", "stdin_path", "stdout_path", "stderr_path",
    "merge_stderr", "fs_stdin_host", "fs_stdin_path", "fs_stdin_tmp_path",
    "fs_stdin_file_staging", "fs_stdout_host", "fs_stdout_path",
    "fs_stdout_tmp_path", "fs_stdout_file_staging", "fs_stderr_host",
    "fs_stderr_path", "fs_stderr_tmp_path", "fs_stderr_file_staging",
    "sge_cell", "sge_root", "ja_task_id",
)  # fmt: skip
