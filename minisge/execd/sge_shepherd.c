/* sge_shepherd: the per-task agent between the execd and a batch job, in C.
 *
 * The shepherd of a batch task (sge_shepherd(8)) as the Python shepherd,
 * minisge/execd/shepherd.py, runs it: the same files, states, messages and
 * exit-code rules, for a fraction of its cost (no interpreter image to fork
 * and copy).  The execd (execd.py:Execd.spawn_c_shepherd) or, for a PE task,
 * the shepherd launcher starts it with posix_spawn (launcher.py:spawn_shepherd)
 * for every task but an interactive one:
 *
 *     argv:  sge_shepherd-JOBID -bg          (what ps shows, as 8.1.9's)
 *     fd 0-2 whatever the starter had there: the shepherd opens /dev/null on
 *            them first (a file action of the spawn would cost the execd's
 *            loop, which waits for the exec, a system call and a lookup of
 *            its descriptor limit each)
 *     fd 3   the task's pid file, created by the launcher (the claim): the
 *            shepherd writes its pid into it and closes it; or, started by
 *            the execd (plan key claim=1), nothing of its: the shepherd claims
 *            the task itself, creating the pid file exclusively as the
 *            launcher does (task_dir.py:create_pid_file), so that an execd
 *            killed between its spawn and the claim leaves a task a
 *            recovering execd finds unclaimed and starts again
 *     fd 4   the run plan (minisge/execd/shepherd_plan.py), read whole
 *     fd 5.. descriptors the shepherd holds and its children must not get
 *            (a PE task's FIFO ends): kept, close-on-exec
 *
 * The plan is what the Python side computed from the task's config with
 * the rules' own functions (each child's argv, environment, ids, files,
 * limits; the state of each exit code): a sequence of NUL-terminated
 * "key=value" strings, a step's keys between "step=NAME" and "end".  What
 * lives here: the run sequence (prolog, PE start, job, PE stop, epilog),
 * a child's set-up, and the result files' formats, each tested against the
 * Python shepherd's by tests/test_shepherd.py, which runs every case with
 * both.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <grp.h>
#include <time.h>
#include <unistd.h>

#define PID_FD 3
#define PLAN_FD 4
#define FIRST_KEPT_FD 5
#define MAX_PLAN (16 << 20)

/* ------------------------------------------------------------------ lists */
typedef struct {
    char **v;
    size_t n, cap;
} strlist;

static void *xrealloc(void *p, size_t size) {
    void *q = realloc(p, size ? size : 1);
    if (!q) {
        _exit(1);
    }
    return q;
}

static void push(strlist *l, char *s) {
    if (l->n + 2 > l->cap) {
        l->cap = l->cap ? 2 * l->cap : 16;
        l->v = xrealloc(l->v, l->cap * sizeof(char *));
    }
    l->v[l->n++] = s;
    l->v[l->n] = NULL;
}

typedef struct {
    int resource;
    rlim_t soft, hard;
} rlimit_t;

/* ------------------------------------------------------------------ the plan */
typedef struct {
    int present;
    const char *name;       /* as the messages name it: exit_status of NAME = N */
    const char *error;      /* it cannot be started: this message, state_before */
    int state_before;       /* its state when it cannot be started */
    int state_failed;       /* a procedure's state for an exit code other than 99/100 */
    int state_99, state_100;
    int exec_state;         /* the state when the exec itself fails */
    uid_t uid, owner_uid;
    gid_t gid, owner_gid;
    gid_t *groups, *owner_groups;
    size_t ngroups, nowner_groups;
    const char *cwd, *stdin_path, *stdout_path, *stderr_path, *exec_path;
    int merge;
    strlist argv, env;
    rlimit_t *rlimits;
    size_t nrlimits;
    int nice;
    int *cpus;
    size_t ncpus;
} step_t;

enum { PROLOG, PE_START, JOB, PE_STOP, EPILOG, NSTEPS };
static const char *STEP_NAMES[NSTEPS] = {"prolog", "pe_start", "job", "pe_stop", "epilog"};

static struct {
    const char *dir;
    int keep;  /* descriptors 5.. the launcher gave to be kept (spawn_shepherd) */
    int claim; /* the shepherd creates its pid file itself */
    int pe, pe_task;
    int state_before_job, state_no_cwd, state_open_output, state_no_shell, state_before_prolog, state_before_pestart;
    step_t steps[NSTEPS];
} plan;

/* the shepherd's own state */
static int failed;           /* the first failure's state */
static int job_ran;          /* the job's exit status is known */
static int job_status;
static int have_usage;
static char usage_text[4096];

static int is_root;

static long number(const char *s) { return strtol(s, NULL, 10); }

static rlim_t rlim_value(const char *s) {
    if (!strcmp(s, "inf")) {
        return RLIM_INFINITY;
    }
    return (rlim_t)strtoull(s, NULL, 10);
}

static gid_t *parse_ids(const char *s, size_t *n) {
    gid_t *v = NULL;
    *n = 0;
    while (*s) {
        char *end;
        unsigned long x = strtoul(s, &end, 10);
        if (end == s) {
            break;
        }
        v = xrealloc(v, (*n + 1) * sizeof(gid_t));
        v[(*n)++] = (gid_t)x;
        s = *end == ',' ? end + 1 : end;
    }
    return v;
}

/* the plan's integer keys: the task's (a field of plan), a step's (an offset in step_t) */
static const struct {
    const char *key;
    int *field;
} TASK_INTS[] = {
    {"pe", &plan.pe},
    {"pe_task", &plan.pe_task},
    {"state_before_job", &plan.state_before_job},
    {"state_no_cwd", &plan.state_no_cwd},
    {"state_open_output", &plan.state_open_output},
    {"state_no_shell", &plan.state_no_shell},
    {"state_before_prolog", &plan.state_before_prolog},
    {"state_before_pestart", &plan.state_before_pestart},
    {"claim", &plan.claim},
    {"keep", &plan.keep},
};
static const struct {
    const char *key;
    size_t offset;
} STEP_INTS[] = {
    {"state_before", offsetof(step_t, state_before)},
    {"state_failed", offsetof(step_t, state_failed)},
    {"state_99", offsetof(step_t, state_99)},
    {"state_100", offsetof(step_t, state_100)},
    {"exec_state", offsetof(step_t, exec_state)},
    {"merge", offsetof(step_t, merge)},
    {"nice", offsetof(step_t, nice)},
};
#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

/* the integer field the key names in the task (st NULL) or in the step st; NULL for another key */
static int *int_field(const char *k, step_t *st) {
    if (!st) {
        for (size_t i = 0; i < COUNT(TASK_INTS); i++) {
            if (!strcmp(k, TASK_INTS[i].key)) {
                return TASK_INTS[i].field;
            }
        }
        return NULL;
    }
    for (size_t i = 0; i < COUNT(STEP_INTS); i++) {
        if (!strcmp(k, STEP_INTS[i].key)) {
            return (int *)((char *)st + STEP_INTS[i].offset);
        }
    }
    return NULL;
}

static int read_plan(void) {
    size_t cap = 65536, len = 0;
    char *buf = xrealloc(NULL, cap);
    for (;;) {
        if (len == cap) {
            if (cap >= MAX_PLAN) {
                return -1;
            }
            cap *= 2;
            buf = xrealloc(buf, cap);
        }
        ssize_t r = read(PLAN_FD, buf + len, cap - len);
        if (r < 0 && errno == EINTR) {
            continue;
        }
        if (r < 0) {
            return -1;
        }
        if (r == 0) {
            break;
        }
        len += (size_t)r;
    }
    close(PLAN_FD);
    if (len == 0 || buf[len - 1] != '\0') {
        return -1;
    }
    step_t *st = NULL;
    for (char *p = buf, *next; p < buf + len; p = next) {
        next = p + strlen(p) + 1;
        char *eq = strchr(p, '=');
        if (!eq) {
            if (!strcmp(p, "end")) {
                st = NULL;
                continue;
            }
            return -1;
        }
        *eq = '\0';
        const char *k = p, *v = eq + 1;
        int *field = int_field(k, st);
        if (field) {
            *field = (int)number(v);
        } else if (!st) {
            if (!strcmp(k, "step")) {
                int i;
                for (i = 0; i < NSTEPS && strcmp(v, STEP_NAMES[i]); i++) {
                }
                if (i == NSTEPS) {
                    return -1;
                }
                st = &plan.steps[i];
                st->present = 1;
                st->name = STEP_NAMES[i];
            } else if (!strcmp(k, "dir")) {
                plan.dir = v;
            } else {
                return -1;
            }
            /* step keys */
        } else if (!strcmp(k, "who")) {
            st->name = v;
        } else if (!strcmp(k, "error")) {
            st->error = v;
        } else if (!strcmp(k, "uid")) {
            st->uid = (uid_t)number(v);
        } else if (!strcmp(k, "gid")) {
            st->gid = (gid_t)number(v);
        } else if (!strcmp(k, "groups")) {
            st->groups = parse_ids(v, &st->ngroups);
        } else if (!strcmp(k, "owner_uid")) {
            st->owner_uid = (uid_t)number(v);
        } else if (!strcmp(k, "owner_gid")) {
            st->owner_gid = (gid_t)number(v);
        } else if (!strcmp(k, "owner_groups")) {
            st->owner_groups = parse_ids(v, &st->nowner_groups);
        } else if (!strcmp(k, "cwd")) {
            st->cwd = v;
        } else if (!strcmp(k, "stdin")) {
            st->stdin_path = v;
        } else if (!strcmp(k, "stdout")) {
            st->stdout_path = v;
        } else if (!strcmp(k, "stderr")) {
            st->stderr_path = v;
        } else if (!strcmp(k, "exec")) {
            st->exec_path = v;
        } else if (!strcmp(k, "arg")) {
            push(&st->argv, (char *)v);
        } else if (!strcmp(k, "env")) {
            push(&st->env, (char *)v);
        } else if (!strcmp(k, "rlimit")) {
            char res[32], soft[32], hard[32];
            if (sscanf(v, "%31s %31s %31s", res, soft, hard) != 3) {
                return -1;
            }
            st->rlimits = xrealloc(st->rlimits, (st->nrlimits + 1) * sizeof(rlimit_t));
            st->rlimits[st->nrlimits++] = (rlimit_t){(int)number(res), rlim_value(soft), rlim_value(hard)};
        } else if (!strcmp(k, "cpus")) {
            size_t n;
            gid_t *ids = parse_ids(v, &n);
            st->cpus = xrealloc(NULL, (n + 1) * sizeof(int));
            for (size_t i = 0; i < n; i++) {
                st->cpus[i] = (int)ids[i];
            }
            st->ncpus = n;
            free(ids);
        } else {
            return -1;
        }
    }
    if (!plan.dir || !plan.steps[JOB].present) {
        return -1;
    }
    for (int i = 0; i < NSTEPS; i++) {
        step_t *s = &plan.steps[i];
        if (s->present && !s->error && (!s->argv.n || !s->cwd || !s->stdout_path || !s->stderr_path)) {
            return -1;
        }
        if (s->present && !s->env.v) {
            push(&s->env, NULL);
            s->env.n = 0;
        }
    }
    return 0;
}

/* ------------------------------------------------------------------ files */
static char *path_of(const char *name) {
    static char buf[8][4096];
    static int next;
    char *p = buf[next++ % 8];
    snprintf(p, 4096, "%s/%s", plan.dir, name);
    return p;
}

static int write_all(int fd, const char *data, size_t len) {
    while (len) {
        ssize_t w = write(fd, data, len);
        if (w < 0 && errno == EINTR) {
            continue;
        }
        if (w < 0) {
            return -1;
        }
        data += w;
        len -= (size_t)w;
    }
    return 0;
}

/* the spare of a task file in a recycled directory (task_dir.py:SPARES;
 * none for a file that has no spare there: -1, ENOENT), its old content
 * overwritten and cut, never emptied first (task_dir.py) */
static int open_spare(const char *name, char *spare, size_t size) {
    snprintf(spare, size, "%s/.spare-%s", plan.dir, name);
    return open(spare, O_WRONLY | O_NOFOLLOW | O_CLOEXEC);
}

/* task_dir.py:write_fd: from the start, cut to the text */
static int write_fd(int fd, const char *text) {
    size_t len = strlen(text);
    fchmod(fd, 0644);
    int rc = pwrite(fd, text, len, 0) == (ssize_t)len && ftruncate(fd, (off_t)len) == 0 ? 0 : -1;
    close(fd);
    return rc;
}

/* task_dir.py:write_file: into the spare and renamed, else a new file */
static int write_file(const char *name, const char *text) {
    char spare[4200];
    int fd = open_spare(name, spare, sizeof spare);
    if (fd < 0) {
        fd = open(path_of(name), O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0644);
        spare[0] = '\0';
    }
    if (fd < 0) {
        return -1;
    }
    int rc = write_fd(fd, text);
    if (rc == 0 && spare[0] && rename(spare, path_of(name)) < 0) {
        return -1;
    }
    return rc;
}

/* task_dir.py:write_marker: atomically, through the spare or NAME.tmp */
static int write_marker(const char *name, const char *text) {
    char tmp[4200];
    int fd = open_spare(name, tmp, sizeof tmp);
    if (fd < 0) {
        snprintf(tmp, sizeof tmp, "%s.tmp", path_of(name));
        fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0644);
    }
    if (fd < 0) {
        return -1;
    }
    int rc = write_fd(fd, text);
    if (rc == 0 && rename(tmp, path_of(name)) < 0) {
        return -1;
    }
    return rc;
}

/* task_dir.py:ReservedFile: room taken before the job starts */
typedef struct {
    const char *name;
    int fd;
    size_t size;
    char tmp[4200];
} reserved_t;

static void reserve(reserved_t *r, const char *name, size_t size) {
    r->name = name;
    r->size = size;
    r->fd = open_spare(name, r->tmp, sizeof r->tmp);
    if (r->fd >= 0) {
        fchmod(r->fd, 0644);
    } else {
        snprintf(r->tmp, sizeof r->tmp, "%s.tmp", path_of(name));
        r->fd = open(r->tmp, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0644);
        if (r->fd < 0) {
            return;
        }
    }
    if (posix_fallocate(r->fd, 0, (off_t)size) != 0) {
        close(r->fd);
        r->fd = -1;
    }
}

static int commit(reserved_t *r, const char *name, const char *text) {
    size_t len = strlen(text);
    if (!r || r->fd < 0 || len > r->size) {
        if (r && r->fd >= 0) {
            close(r->fd);
            r->fd = -1;
        }
        return write_marker(name, text);
    }
    int fd = r->fd;
    r->fd = -1;
    int rc = 0;
    if (pwrite(fd, text, len, 0) != (ssize_t)len || ftruncate(fd, (off_t)len) < 0) {
        rc = -1;
    }
    close(fd);
    if (rc == 0 && rename(r->tmp, path_of(name)) < 0) {
        rc = -1;
    }
    return rc;
}

static reserved_t reserved_usage = {.fd = -1}, reserved_marker = {.fd = -1};
static int reserved;

/* shepherd.py:error_line: MM/DD/YYYY HH:MM:SS [euid:pid]: message */
static void fail(int state, const char *message, const char *who) {
    if (!failed) {
        failed = state;
    }
    char whobuf[64], stamp[64], line[8192];
    if (!who) {
        snprintf(whobuf, sizeof whobuf, "%u:%d", (unsigned)geteuid(), (int)getpid());
        who = whobuf;
    }
    time_t now = time(NULL);
    struct tm tm;
    localtime_r(&now, &tm);
    strftime(stamp, sizeof stamp, "%m/%d/%Y %H:%M:%S", &tm);
    int n = snprintf(line, sizeof line, "%s [%s]: %s\n", stamp, who, message);
    if (n >= (int)sizeof line) {
        n = (int)sizeof line - 1;
        line[n - 1] = '\n';
    }
    int fd = open(path_of("error"), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (fd >= 0) {
        write_all(fd, line, (size_t)n);
        close(fd);
    }
}

static int signalled(void) {
    struct stat st;
    return stat(path_of("signal"), &st) == 0;
}

/* ------------------------------------------------------------------ a child */
static const int CHILD_DEFAULT_SIGNALS[] = {SIGPIPE, SIGXFSZ, SIGINT, SIGTERM, SIGUSR1, SIGUSR2, SIGCHLD, SIGHUP};

static void set_rlimits(const step_t *s) {
    for (size_t i = 0; i < s->nrlimits; i++) {
        struct rlimit rl = {s->rlimits[i].soft, s->rlimits[i].hard};
        if (setrlimit(s->rlimits[i].resource, &rl) == 0) {
            continue;
        }
        struct rlimit cur;
        if (getrlimit(s->rlimits[i].resource, &cur) == 0 && cur.rlim_max != RLIM_INFINITY &&
            (rl.rlim_max == RLIM_INFINITY || rl.rlim_max > cur.rlim_max)) {
            rl.rlim_max = cur.rlim_max;
        }
        if (rl.rlim_cur == RLIM_INFINITY || rl.rlim_cur > rl.rlim_max) {
            rl.rlim_cur = rl.rlim_max;
        }
        setrlimit(s->rlimits[i].resource, &rl);
    }
}

/* An errno's text as the Python shepherd (os.strerror) and 8.1.9's shepherd
 * give it: the build (setup.py: NativeBuild.build_shepherd) defines
 * SHEPHERD_MESSAGES, a header of Python's os.strerror texts, whatever C
 * library it links with: musl's strerror says "Symbolic link loop" where
 * glibc's says "Too many levels of symbolic links"; without it, the C
 * library's own */
static const char *sys_message(int err) {
#ifdef SHEPHERD_MESSAGES
    if (err >= 0 && (size_t)err < sizeof shepherd_messages / sizeof shepherd_messages[0]) {
        return shepherd_messages[err];
    }
#endif
    return strerror(err);
}

/* shepherd.py:setup_error_text, sent to the shepherd as "state euid:pid message" */
static _Noreturn void child_failed(const step_t *s, int stage, int err, const char *filename, int pipe_w) {
    char msg[8192];
    const char *what = sys_message(err);
    if (stage == plan.state_no_cwd) {
        snprintf(msg, sizeof msg, "error: can't chdir to %s: %s", s->cwd, what);
    } else if (stage == plan.state_open_output) {
        const char *kind = !strcmp(filename, s->stdin_path) ? "input" : "output";
        snprintf(msg, sizeof msg, "error: can't open %s file \"%s\": %s", kind, filename, what);
    } else if (stage == plan.state_no_shell && err == ENOENT) {
        snprintf(msg, sizeof msg, "unable to find shell \"%s\"", s->argv.v[0]);
    } else {
        snprintf(msg, sizeof msg, "execvp(%s) failed: %s", s->argv.v[0], what);
    }
    char text[8400];
    int n = snprintf(text, sizeof text, "%d %u:%d %s", stage, (unsigned)geteuid(), (int)getpid(), msg);
    if (n > 1000) {
        n = 1000;
    }
    write_all(pipe_w, text, (size_t)n);
    _exit(127);
}

typedef void (*on_pid_fn)(pid_t);

/* The step's child, between vfork and exec (spawn): the shepherd waits
 * meanwhile, its memory shared, so nothing here allocates or returns.  The
 * child publishes its own pid first (``on_pid``: job_pid or proc_pid, and a
 * qdel noted before it acted on), in a process group of its own: a set-up
 * that hangs (a working directory or output file on a hung NFS server, a
 * FIFO nobody reads) can still be killed through it. */
static _Noreturn void exec_child(const step_t *s, on_pid_fn on_pid, int pipe_w) {
    int stage = plan.state_before_job;
    setpgid(0, 0);
    if (on_pid) {
        on_pid(getpid());
    }
    if (s->nice && setpriority(PRIO_PROCESS, 0, s->nice) < 0) {
        child_failed(s, stage, errno, "", pipe_w);
    }
    if (s->ncpus) {
        cpu_set_t set;
        CPU_ZERO(&set);
        for (size_t i = 0; i < s->ncpus; i++) {
            if (s->cpus[i] >= 0 && s->cpus[i] < CPU_SETSIZE) {
                CPU_SET(s->cpus[i], &set);
            }
        }
        if (sched_setaffinity(0, sizeof set, &set) < 0) {
            child_failed(s, stage, errno, "", pipe_w);
        }
    }
    if (is_root) {
        gid_t one = s->owner_gid;
        if (setgroups(s->nowner_groups ? s->nowner_groups : 1, s->nowner_groups ? s->owner_groups : &one) < 0 ||
            setegid(s->owner_gid) < 0 || seteuid(s->owner_uid) < 0) {
            child_failed(s, stage, errno, "", pipe_w);
        }
    }
    stage = plan.state_no_cwd;
    if (chdir(s->cwd) < 0) {
        child_failed(s, stage, errno, "", pipe_w);
    }
    stage = plan.state_open_output;
    const char *in_path = s->stdin_path && *s->stdin_path ? s->stdin_path : "/dev/null";
    int fd_in = open(in_path, O_RDONLY);
    if (fd_in < 0) {
        child_failed(s, stage, errno, in_path, pipe_w);
    }
    int fd_out = open(s->stdout_path, O_WRONLY | O_CREAT | O_APPEND, 0644);
    if (fd_out < 0) {
        child_failed(s, stage, errno, s->stdout_path, pipe_w);
    }
    int fd_err = fd_out;
    if (!s->merge) {
        fd_err = open(s->stderr_path, O_WRONLY | O_CREAT | O_APPEND, 0644);
        if (fd_err < 0) {
            child_failed(s, stage, errno, s->stderr_path, pipe_w);
        }
    }
    if (dup2(fd_in, 0) < 0 || dup2(fd_out, 1) < 0 || dup2(fd_err, 2) < 0) {
        child_failed(s, stage, errno, s->stdout_path, pipe_w);
    }
    if (fd_in > 2) {
        close(fd_in);
    }
    if (fd_out > 2) {
        close(fd_out);
    }
    if (fd_err > 2 && fd_err != fd_out) {
        close(fd_err);
    }
    stage = s->exec_state;
    if (is_root) {
        gid_t one = s->gid;
        if (seteuid(0) < 0 || setgroups(s->ngroups ? s->ngroups : 1, s->ngroups ? s->groups : &one) < 0 ||
            setgid(s->gid) < 0 || setuid(s->uid) < 0) {
            child_failed(s, stage, errno, "", pipe_w);
        }
    }
    for (size_t i = 0; i < sizeof CHILD_DEFAULT_SIGNALS / sizeof CHILD_DEFAULT_SIGNALS[0]; i++) {
        signal(CHILD_DEFAULT_SIGNALS[i], SIG_DFL);
    }
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
    set_rlimits(s);  /* last: an address space limit may be below this process's */
    execve(s->exec_path && *s->exec_path ? s->exec_path : s->argv.v[0], s->argv.v, s->env.v);
    child_failed(s, stage, errno, "", pipe_w);
}

/* vfork and exec the step's child (no copy of the shepherd's memory for a
 * child that execs at once: 0.1-0.2 ms of the shepherd's CPU a task less
 * than a fork, bench/bench_shepherd.py), wait for it: its wait status and
 * usage; setup_error gets "state euid:pid message" when it never exec'd */
static int spawn(const step_t *s, on_pid_fn on_pid, struct rusage *ru, char *setup_error, size_t size) {
    int p[2];
    setup_error[0] = '\0';
    memset(ru, 0, sizeof *ru);
    if (pipe2(p, O_CLOEXEC) < 0) {
        snprintf(setup_error, size, "%d %u:%d fork failed: %s", plan.state_before_job, (unsigned)geteuid(),
                 (int)getpid(), sys_message(errno));
        return 127 << 8;
    }
    pid_t pid = vfork();
    if (pid < 0) {
        int e = errno;
        close(p[0]);
        close(p[1]);
        snprintf(setup_error, size, "%d %u:%d fork failed: %s", plan.state_before_job, (unsigned)geteuid(),
                 (int)getpid(), sys_message(e));
        return 127 << 8;
    }
    if (pid == 0) {
        close(p[0]);
        exec_child(s, on_pid, p[1]);
    }
    close(p[1]);
    size_t len = 0;
    for (;;) {
        ssize_t r = read(p[0], setup_error + len, size - 1 - len);
        if (r < 0 && errno == EINTR) {
            continue;
        }
        if (r <= 0) {
            break;
        }
        len += (size_t)r;
        if (len >= size - 1) {
            break;
        }
    }
    setup_error[len] = '\0';
    close(p[0]);
    int status = 0;
    while (wait4(pid, &status, 0, ru) < 0 && errno == EINTR) {
    }
    return status;
}

/* shepherd.py:setup_failure: "state euid:pid message" split */
static int setup_failure(char *text, char **who, char **msg) {
    char *sp = strchr(text, ' ');
    if (!sp) {
        *who = NULL;
        *msg = text;
        return 0;
    }
    *sp = '\0';
    char *who_ = sp + 1, *sp2 = strchr(who_, ' ');
    if (!sp2 || !strchr(who_, ':')) {
        *sp = ' ';
        *who = NULL;
        *msg = text;
        return 0;
    }
    *sp2 = '\0';
    *who = who_;
    *msg = sp2 + 1;
    return (int)number(text);
}

/* rules/exit_codes.py:exit_status: the code, or 128 + the signal */
static int exit_code(int status) {
    if (WIFSIGNALED(status)) {
        return 128 + WTERMSIG(status);
    }
    return WEXITSTATUS(status);
}

static void exit_status_message(char *buf, size_t size, const char *who, int code) {
    snprintf(buf, size, "exit_status of %s = %d", who, code);
}

/* ------------------------------------------------------------------ the steps */
/* shepherd.py:Shepherd.procedure_started: a qdel already asked for kills a
 * procedure before the job at once; PE stop and epilog run after a qdel too */
static int before_job;

/* run by the child itself, before its set-up (exec_child) */
static void procedure_started(pid_t pid) {
    char text[32];
    snprintf(text, sizeof text, "%d\n", (int)pid);
    write_file("proc_pid", text);
    if (before_job && signalled()) {
        kill(pid, SIGKILL);
    }
}

/* run by the child itself, before its set-up (exec_child) */
static void job_started(pid_t pid) {
    char text[32];
    snprintf(text, sizeof text, "%d\n", (int)pid);
    write_file("job_pid", text);
    /* a signal the execd sent before the job's pid was known (qdel at once) */
    int fd = open(path_of("signal"), O_RDONLY | O_CLOEXEC);
    if (fd >= 0) {
        char buf[32];
        ssize_t r = read(fd, buf, sizeof buf - 1);
        close(fd);
        buf[r > 0 ? r : 0] = '\0';
        char *end;
        long sig = strtol(buf, &end, 10);
        while (*end == ' ' || *end == '\n' || *end == '\t') {
            end++;
        }
        if (end == buf) {
            sig = SIGKILL;  /* empty: SIGKILL */
            for (char *q = buf; *q; q++) {
                if (*q != ' ' && *q != '\n' && *q != '\t') {
                    sig = -1;  /* not a number: no signal (as the Python shepherd) */
                }
            }
        } else if (*end) {
            sig = -1;
        }
        if (sig >= 0) {
            killpg(pid, (int)sig);
        }
    }
}

static char **with_exit_stat(step_t *s) {
    if (!job_ran) {
        return s->env.v;
    }
    static char var[64];
    snprintf(var, sizeof var, "SGE_JOBEXIT_STAT=%d", job_status);
    strlist l = {0};
    for (size_t i = 0; i < s->env.n; i++) {
        if (strncmp(s->env.v[i], "SGE_JOBEXIT_STAT=", 17)) {
            push(&l, s->env.v[i]);
        }
    }
    push(&l, var);
    return l.v;
}

static int run_procedure(int which) {
    step_t *s = &plan.steps[which];
    if (!s->present) {
        return 0;
    }
    if (s->error) {
        fail(s->state_before, s->error, NULL);
        return s->state_before;
    }
    step_t run = *s;
    run.env.v = with_exit_stat(s);
    before_job = which == PROLOG || which == PE_START;
    if (before_job && signalled()) {
        return s->state_failed;  /* a qdel before it started: as if it was killed at once */
    }
    struct rusage ru;
    char setup_error[1100];
    int status = spawn(&run, procedure_started, &ru, setup_error, sizeof setup_error);
    unlink(path_of("proc_pid"));
    if (setup_error[0]) {
        char *who, *msg;
        int state = setup_failure(setup_error, &who, &msg);
        fail(state ? state : s->state_before, msg, who);
        return s->state_before;
    }
    int code = exit_code(status);
    if (code == 0) {
        return 0;
    }
    if (before_job && signalled()) {
        return s->state_failed;  /* killed by a qdel: no failure of the queue */
    }
    char msg[256];
    exit_status_message(msg, sizeof msg, s->name, code);
    fail(code == 99 ? s->state_99 : code == 100 ? s->state_100 : s->state_failed, msg, NULL);
    return s->state_failed;
}

static double now_seconds(void) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static double tv(struct timeval t) { return (double)t.tv_sec + (double)t.tv_usec / 1e6; }

static void run_job(void) {
    step_t *s = &plan.steps[JOB];
    reserve(&reserved_usage, "usage", 4096);
    reserve(&reserved_marker, "exit_status", 64);
    reserved = 1;
    struct rusage ru;
    char setup_error[1100];
    double start = now_seconds();
    int status = spawn(s, job_started, &ru, setup_error, sizeof setup_error);
    double end = now_seconds();
    int sig = WIFSIGNALED(status) ? WTERMSIG(status) : 0;
    int code = exit_code(status);
    snprintf(usage_text, sizeof usage_text,
             "exit_status=%d\nsignal=%d\nstart_time=%.6f\nend_time=%.6f\nru_wallclock=%.6f\n"
             "ru_utime=%.6f\nru_stime=%.6f\nru_maxrss=%ld\nru_ixrss=%ld\nru_ismrss=0\nru_idrss=%ld\n"
             "ru_isrss=%ld\nru_minflt=%ld\nru_majflt=%ld\nru_nswap=%ld\nru_inblock=%ld\nru_oublock=%ld\n"
             "ru_msgsnd=%ld\nru_msgrcv=%ld\nru_nsignals=%ld\nru_nvcsw=%ld\nru_nivcsw=%ld\n",
             code, sig, start, end, end - start, tv(ru.ru_utime), tv(ru.ru_stime), ru.ru_maxrss, ru.ru_ixrss,
             ru.ru_idrss, ru.ru_isrss, ru.ru_minflt, ru.ru_majflt, ru.ru_nswap, ru.ru_inblock, ru.ru_oublock,
             ru.ru_msgsnd, ru.ru_msgrcv, ru.ru_nsignals, ru.ru_nvcsw, ru.ru_nivcsw);
    have_usage = 1;
    job_status = code;  /* for the end marker, as the usage says it */
    if (setup_error[0]) {
        char *who, *msg;
        int state = setup_failure(setup_error, &who, &msg);
        fail(state ? state : plan.state_before_job, msg, who);
        return;
    }
    job_ran = 1;
    int state = code == 99 ? s->state_99 : code == 100 ? s->state_100 : 0;
    if (state) {
        char msg[256];
        exit_status_message(msg, sizeof msg, s->name, code);
        fail(state, msg, NULL);
    }
}

/* shepherd.py:Shepherd.run_sequence */
static void run_sequence(void) {
    if (plan.pe_task) {
        if (!signalled()) {
            run_job();
        }
        return;
    }
    int prolog = run_procedure(PROLOG);
    if (!prolog && !signalled()) {
        int pe_start = plan.pe ? run_procedure(PE_START) : 0;
        if (!pe_start && !signalled()) {
            run_job();
        }
        if (plan.pe && pe_start != plan.state_before_pestart) {
            run_procedure(PE_STOP);
        }
    }
    if (prolog != plan.state_before_prolog) {
        run_procedure(EPILOG);
    }
}

/* shepherd.py:Shepherd.finish: usage, then the end marker */
static void finish(void) {
    char marker[64];
    if (!have_usage) {
        snprintf(usage_text, sizeof usage_text,
                 "exit_status=0\nsignal=0\nstart_time=0\nend_time=0\nru_wallclock=0\n");
    }
    commit(reserved ? &reserved_usage : NULL, "usage", usage_text);
    if (have_usage) {
        int sig = 0, code = 0;
        sscanf(usage_text, "exit_status=%d\nsignal=%d", &code, &sig);
        snprintf(marker, sizeof marker, "%d %d %d\n", failed, code, sig);
    } else {
        snprintf(marker, sizeof marker, "%d\n", failed);
    }
    commit(reserved ? &reserved_marker : NULL, "exit_status", marker);
}

static _Noreturn void crash(const char *why) {
    if (plan.dir) {
        char text[512];
        snprintf(text, sizeof text, "sge_shepherd: %s\n", why);
        write_file("shepherd_error", text);
    }
    _exit(1);
}

/* task_dir.py:create_pid_file: the spare linked to the name (exclusive, as
 * O_EXCL is), else a new file; -1 when the task is claimed already */
static int claim_task(void) {
    char spare[4200];
    int fd = open_spare("pid", spare, sizeof spare);
    if (fd >= 0) {
        if (link(spare, path_of("pid")) < 0) {
            close(fd);
            return -1;
        }
        unlink(spare);
        fchmod(fd, 0644);
        if (futimens(fd, NULL) < 0) {  /* its content as recycle left it (no number); its mtime now */
            close(fd);
            return -1;
        }
        return fd;
    }
    return open(path_of("pid"), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
}

/* fd 0-2 on /dev/null (see the top of the file); the lowest free descriptor
 * is one of them or 3 (no pid file given) or above the plan's */
static void null_stdio(void) {
    int fd = open("/dev/null", O_RDWR);
    if (fd < 0) {
        return;  /* no /dev/null: the starter's own stay */
    }
    for (int target = 0; target <= 2; target++) {
        if (fd != target) {
            dup2(fd, target);
        }
    }
    if (fd > 2) {
        close(fd);
    }
}

int main(void) {
    null_stdio();
    char pid[32];
    snprintf(pid, sizeof pid, "%d\n", (int)getpid());
    int plan_read = read_plan();
    int pid_fd = PID_FD;
    if (plan_read == 0 && plan.claim) {
        close(PID_FD);
        pid_fd = claim_task();
        if (pid_fd < 0) {
            _exit(1);  /* claimed meanwhile by a recovering execd: it starts the task again, or it did */
        }
    }
    /* task_dir.py:write_pid: over the blank of a recycled file, cut to it (its block kept);
     * a full disk: it runs without (a recovering execd counts it lost) */
    if (write_all(pid_fd, pid, strlen(pid)) == 0) {
        (void)!ftruncate(pid_fd, (off_t)strlen(pid));
    }
    close(pid_fd);
    setsid();
    signal(SIGINT, SIG_IGN);
    signal(SIGTERM, SIG_IGN);
    signal(SIGHUP, SIG_IGN);
    signal(SIGPIPE, SIG_IGN);
    signal(SIGCHLD, SIG_DFL);
    is_root = getuid() == 0;
    if (plan_read < 0) {
        crash("cannot read the run plan");
    }
    for (int fd = FIRST_KEPT_FD; fd < FIRST_KEPT_FD + plan.keep; fd++) {
        fcntl(fd, F_SETFD, FD_CLOEXEC);  /* the shepherd's own; its children must not get them */
    }
    /* nothing else of the launcher's */
    if (syscall(SYS_close_range, (unsigned)(FIRST_KEPT_FD + plan.keep), ~0U, 0) < 0) {  /* no wrapper in musl */
        for (int fd = FIRST_KEPT_FD + plan.keep; fd < 65536; fd++) {
            close(fd);
        }
    }
    run_sequence();
    finish();
    return 0;
}
