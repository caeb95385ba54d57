/* libdrmaa.so for minisge: the DRMAA 1.0 C binding (drmaa.h) on minisge's own
 * commands.
 *
 * Design: a job template becomes a qsub command line (-terse -b y -shell n, the
 * native specification's options, then one option per DRMAA attribute) run
 * with fork/exec; control runs qmod -sj/-usj, qhold, qrls, qdel; job_ps reads
 * `qstat -g d`; a finished job's exit status and usage come from the cell's
 * accounting file, accounting(5), the file qacct -j reads (read directly: its
 * raw numbers are the ones Grid Engine's DRMAA reports).  No second protocol
 * implementation in C: qsub alone knows how options, sge_request files and
 * the qmaster's checks combine, so DRMAA submits exactly what qsub would.
 *
 * The commands are those of the minisge installation this library belongs
 * to: bin/ beside the library's lib/ (the tarball), the bin directory the
 * library was built for (MINISGE_BIN_DIR: a virtual environment's), else the
 * first directory of PATH holding `minisge` (a cell's settings.sh puts it
 * there).
 */
#define _GNU_SOURCE
#include "drmaa.h"

#include <ctype.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <pwd.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#ifndef MINISGE_BIN_DIR
#define MINISGE_BIN_DIR ""
#endif
#ifndef MINISGE_VERSION
#define MINISGE_VERSION "0"
#endif

extern char **environ;

/* ------------------------------------------------------------------ strings */

struct strvec {
    char **items;
    size_t n, cap, next;
};

struct drmaa_attr_names_s { struct strvec v; };
struct drmaa_attr_values_s { struct strvec v; };
struct drmaa_job_ids_s { struct strvec v; };

static int vec_push(struct strvec *v, const char *s)
{
    if (v->n + 1 >= v->cap) {
        size_t cap = v->cap ? v->cap * 2 : 8;
        char **items = realloc(v->items, cap * sizeof *items);
        if (!items)
            return -1;
        v->items = items;
        v->cap = cap;
    }
    if (!(v->items[v->n] = strdup(s)))
        return -1;
    v->items[++v->n] = NULL;
    return 0;
}

static void vec_free(struct strvec *v)
{
    for (size_t i = 0; i < v->n; i++)
        free(v->items[i]);
    free(v->items);
    memset(v, 0, sizeof *v);
}

static void copy_out(char *buf, size_t len, const char *s)
{
    if (buf && len) {
        strncpy(buf, s, len - 1);
        buf[len - 1] = '\0';
    }
}

static int fail(int code, char *diag, size_t len, const char *fmt, ...)
{
    if (diag && len) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(diag, len, fmt, ap);
        va_end(ap);
    }
    return code;
}

/* a growing string */
struct buf {
    char *s;
    size_t n, cap;
};

static int buf_add(struct buf *b, const char *s, size_t n)
{
    if (b->n + n + 1 > b->cap) {
        size_t cap = (b->n + n + 1) * 2;
        char *p = realloc(b->s, cap);
        if (!p)
            return -1;
        b->s = p;
        b->cap = cap;
    }
    memcpy(b->s + b->n, s, n);
    b->n += n;
    b->s[b->n] = '\0';
    return 0;
}

/* s with every `from` replaced by `to` (malloc'd) */
static char *replace_all(const char *s, const char *from, const char *to)
{
    struct buf b = {0};
    size_t fl = strlen(from);
    const char *p;
    buf_add(&b, "", 0);
    while ((p = strstr(s, from))) {
        buf_add(&b, s, (size_t)(p - s));
        buf_add(&b, to, strlen(to));
        s = p + fl;
    }
    buf_add(&b, s, strlen(s));
    return b.s;
}

/* ------------------------------------------------------------- error texts */

static const char *const error_texts[] = {
    "Routine returned normally with success.",
    "Unexpected or internal DRMAA error like memory allocation, system call failure, etc.",
    "Could not contact DRM system",
    "The specified request is not processed successfully due to authorization failure.",
    "The input value for an argument is invalid.",
    "No active session",
    "failed allocating memory",
    "Initialization failed due to invalid contact string.",
    "DRMAA could not use the default contact string to connect to DRM system.",
    "No default contact string was provided or selected.",
    "Initialization failed due to failure to init DRM system.",
    "Initialization failed due to existing DRMAA session.",
    "DRM system disengagement failed.",
    "The format for the job attribute value is invalid.",
    "The value for the job attribute is invalid.",
    "The value of this attribute is conflicting with a previously set attributes.",
    "Could not pass job now to DRM system. A retry may succeed however (saturation).",
    "The DRM system rejected the job. The job will never be accepted due to DRM configuration or job template "
    "settings.",
    "The job specified by the 'jobid' does not exist.",
    "The job has not been suspended. The RESUME request will not be processed.",
    "The job has not been running, and it cannot be suspended.",
    "The job cannot be moved to a HOLD state.",
    "The job is not in a HOLD state.",
    "time-out condition",
    "no usage information was returned for the completed job",
    "no more elements are contained in the opaque string vector",
};

const char *drmaa_strerror(int drmaa_errno)
{
    if (drmaa_errno < 0 || drmaa_errno >= DRMAA_NO_ERRNO)
        return NULL;
    return error_texts[drmaa_errno];
}

static int std_fail(int code, char *diag, size_t len)
{
    return fail(code, diag, len, "%s", error_texts[code]);
}

/* ------------------------------------------------------------ the session */

/* one job or array task submitted in this session */
struct job {
    char id[64];         /* "17" or "17.3" */
    unsigned long number;
    unsigned long task;  /* 0: not an array job */
    int terminated;      /* drmaa_control TERMINATE was sent by this session */
    char *record;        /* its last accounting line, once written */
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static int active;
static char contact[256];
static struct job *jobs;
static size_t njobs, capjobs;
static off_t accounting_offset;
static char bin_dir[PATH_MAX];

static struct job *find_job(const char *id)
{
    for (size_t i = 0; i < njobs; i++)
        if (strcmp(jobs[i].id, id) == 0)
            return &jobs[i];
    return NULL;
}

static int add_job(unsigned long number, unsigned long task)
{
    if (njobs == capjobs) {
        size_t cap = capjobs ? capjobs * 2 : 16;
        struct job *p = realloc(jobs, cap * sizeof *p);
        if (!p)
            return -1;
        jobs = p;
        capjobs = cap;
    }
    struct job *j = &jobs[njobs++];
    memset(j, 0, sizeof *j);
    j->number = number;
    j->task = task;
    if (task)
        snprintf(j->id, sizeof j->id, "%lu.%lu", number, task);
    else
        snprintf(j->id, sizeof j->id, "%lu", number);
    return 0;
}

static void forget_job(struct job *j)
{
    free(j->record);
    *j = jobs[--njobs];
}

/* a job id of the DRMAA caller: "17" or "17.3" */
static int parse_job_id(const char *id, unsigned long *number, unsigned long *task)
{
    char *end;
    if (!id || !isdigit((unsigned char)*id))
        return -1;
    *number = strtoul(id, &end, 10);
    *task = 0;
    if (*end == '.') {
        if (!isdigit((unsigned char)end[1]))
            return -1;
        *task = strtoul(end + 1, &end, 10);
    }
    return *end || !*number ? -1 : 0;
}

/* ----------------------------------------------------------- the commands */

static int is_minisge_bin(const char *dir)
{
    char path[PATH_MAX];
    if (!*dir)
        return 0;
    snprintf(path, sizeof path, "%s/minisge", dir);
    return access(path, X_OK) == 0;
}

static void find_bin_dir(void)
{
    Dl_info info;
    char path[PATH_MAX];
    bin_dir[0] = '\0';
    if (dladdr((void *)find_bin_dir, &info) && info.dli_fname) {
        char *slash;
        snprintf(path, sizeof path, "%s", info.dli_fname);
        if ((slash = strrchr(path, '/'))) {
            *slash = '\0';
            strncat(path, "/../bin", sizeof path - strlen(path) - 1);
            if (is_minisge_bin(path)) {
                snprintf(bin_dir, sizeof bin_dir, "%s", path);
                return;
            }
        }
    }
    if (is_minisge_bin(MINISGE_BIN_DIR)) {
        snprintf(bin_dir, sizeof bin_dir, "%s", MINISGE_BIN_DIR);
        return;
    }
    const char *p = getenv("PATH");
    while (p && *p) {
        const char *colon = strchr(p, ':');
        size_t n = colon ? (size_t)(colon - p) : strlen(p);
        if (n && n < sizeof path) {
            memcpy(path, p, n);
            path[n] = '\0';
            if (is_minisge_bin(path)) {
                snprintf(bin_dir, sizeof bin_dir, "%s", path);
                return;
            }
        }
        p = colon ? colon + 1 : NULL;
    }
}

struct result {
    int status;  /* the exit code, or -1 if it could not run */
    char *out, *err;
};

static void result_free(struct result *r)
{
    free(r->out);
    free(r->err);
    r->out = r->err = NULL;
}

/* run minisge's command argv[0] with argv, its environment the caller's plus
 * `extra` (NAME=VALUE strings), and collect its output */
static int run_command(char *const argv[], char *const extra[], struct result *r)
{
    int out[2], err[2];
    char path[PATH_MAX + 64];
    struct buf bo = {0}, be = {0};
    memset(r, 0, sizeof *r);
    r->status = -1;
    if (bin_dir[0])
        snprintf(path, sizeof path, "%s/%s", bin_dir, argv[0]);
    else
        snprintf(path, sizeof path, "%s", argv[0]);
    /* the child's environment, made here: after fork a child of a threaded
     * caller may do nothing but async-signal-safe calls */
    struct strvec envp = {0};
    for (char **e = environ; *e; e++) {
        size_t k = strcspn(*e, "=");
        int replaced = 0;
        for (size_t i = 0; extra && extra[i]; i++)
            replaced |= strncmp(extra[i], *e, k + 1) == 0;
        if (!replaced)
            vec_push(&envp, *e);
    }
    for (size_t i = 0; extra && extra[i]; i++)
        vec_push(&envp, extra[i]);
    if (!envp.items)
        vec_push(&envp, "PATH=/usr/bin:/bin");
    if (pipe2(out, O_CLOEXEC) < 0) {
        vec_free(&envp);
        return -1;
    }
    if (pipe2(err, O_CLOEXEC) < 0) {
        close(out[0]);
        close(out[1]);
        vec_free(&envp);
        return -1;
    }
    pid_t pid = fork();
    if (pid < 0) {
        close(out[0]); close(out[1]); close(err[0]); close(err[1]);
        vec_free(&envp);
        return -1;
    }
    if (pid == 0) {
        int devnull = open("/dev/null", O_RDONLY);
        if (devnull >= 0)
            dup2(devnull, 0);
        dup2(out[1], 1);
        dup2(err[1], 2);
        /* the signals the caller ignores or blocks are not the command's */
        sigset_t none;
        sigemptyset(&none);
        sigprocmask(SIG_SETMASK, &none, NULL);
        signal(SIGPIPE, SIG_DFL);
        signal(SIGCHLD, SIG_DFL);
        if (bin_dir[0])
            execve(path, argv, envp.items);
        else
            execvpe(path, argv, envp.items);
        static const char msg[] = "can't execute minisge's command\n";
        ssize_t ignored = write(2, msg, sizeof msg - 1);
        (void)ignored;
        _exit(127);
    }
    close(out[1]);
    close(err[1]);
    vec_free(&envp);
    struct pollfd fds[2] = {{out[0], POLLIN, 0}, {err[0], POLLIN, 0}};
    int open_fds = 2;
    buf_add(&bo, "", 0);
    buf_add(&be, "", 0);
    while (open_fds) {
        if (poll(fds, 2, -1) < 0) {
            if (errno == EINTR)
                continue;
            break;
        }
        for (int i = 0; i < 2; i++) {
            if (fds[i].fd < 0 || !fds[i].revents)
                continue;
            char chunk[4096];
            ssize_t n = read(fds[i].fd, chunk, sizeof chunk);
            if (n > 0) {
                buf_add(i ? &be : &bo, chunk, (size_t)n);
            } else if (n == 0 || errno != EINTR) {
                close(fds[i].fd);
                fds[i].fd = -1;
                open_fds--;
            }
        }
    }
    int status = 0;
    pid_t waited;
    while ((waited = waitpid(pid, &status, 0)) < 0 && errno == EINTR)
        ;
    r->status = waited == pid && WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    r->out = bo.s;
    r->err = be.s;
    return 0;
}

/* the message of a command that failed, as Grid Engine's DRMAA words it:
 * without the command's name, "Unable to run job: " and "Exiting." */
static void command_message(const struct result *r, char *diag, size_t len)
{
    const char *text = r->err && *r->err ? r->err : (r->out ? r->out : "");
    char *copy = strdup(text), *p = copy;
    if (!copy)
        return;
    char *exiting = strstr(p, "\nExiting.");
    if (exiting)
        *exiting = '\0';
    for (const char *const *pre = (const char *const[]){"qsub: ", "Unable to run job: ", NULL}; *pre; pre++)
        if (strncmp(p, *pre, strlen(*pre)) == 0)
            p += strlen(*pre);
    size_t n = strlen(p);
    while (n && (p[n - 1] == '\n' || p[n - 1] == ' '))
        p[--n] = '\0';
    copy_out(diag, len, p);
    free(copy);
}

/* was it the qmaster that could not be reached? */
static int communication_failure(const struct result *r)
{
    const char *e = r->err ? r->err : "";
    return r->status < 0 || strstr(e, "unable to contact qmaster") || strstr(e, "can't execute") ||
           strstr(e, "unable to send message to qmaster");
}

/* -------------------------------------------------------------- init/exit */

int drmaa_init(const char *contact_string, char *diag, size_t len)
{
    char host[128] = "";
    if (contact_string && *contact_string && strncmp(contact_string, "session=", 8) != 0)
        return std_fail(DRMAA_ERRNO_INVALID_ARGUMENT, diag, len);
    pthread_mutex_lock(&lock);
    if (active) {
        pthread_mutex_unlock(&lock);
        return std_fail(DRMAA_ERRNO_ALREADY_ACTIVE_SESSION, diag, len);
    }
    if (!getenv("SGE_ROOT")) {
        pthread_mutex_unlock(&lock);
        return fail(DRMAA_ERRNO_DRMS_INIT_FAILED, diag, len,
                    "Please set the environment variable SGE_ROOT.");
    }
    find_bin_dir();
    gethostname(host, sizeof host - 1);
    if (contact_string && *contact_string) {
        snprintf(contact, sizeof contact, "%s", contact_string);
    } else {
        struct timeval tv;
        gettimeofday(&tv, NULL);
        snprintf(contact, sizeof contact, "session=%s.%ld.%ld", host, (long)getpid(),
                 (long)((tv.tv_sec * 1000003L + tv.tv_usec) & 0x7fffffff));
    }
    /* jobs end from now on: older accounting lines are no session's */
    struct stat st;
    char acct[PATH_MAX];
    const char *cell = getenv("SGE_CELL");
    snprintf(acct, sizeof acct, "%s/%s/common/accounting", getenv("SGE_ROOT"), cell && *cell ? cell : "default");
    accounting_offset = stat(acct, &st) == 0 ? st.st_size : 0;
    active = 1;
    pthread_mutex_unlock(&lock);
    return DRMAA_ERRNO_SUCCESS;
}

int drmaa_exit(char *diag, size_t len)
{
    pthread_mutex_lock(&lock);
    if (!active) {
        pthread_mutex_unlock(&lock);
        copy_out(diag, len, "");
        return DRMAA_ERRNO_NO_ACTIVE_SESSION;
    }
    while (njobs)
        forget_job(&jobs[njobs - 1]);
    active = 0;
    pthread_mutex_unlock(&lock);
    return DRMAA_ERRNO_SUCCESS;
}

static int need_session(char *diag, size_t len)
{
    if (!active)
        return std_fail(DRMAA_ERRNO_NO_ACTIVE_SESSION, diag, len);
    return 0;
}

/* ---------------------------------------------------------- job templates */

static const char *const scalar_names[] = {
    DRMAA_REMOTE_COMMAND, DRMAA_JS_STATE, DRMAA_WD, DRMAA_JOB_NAME, DRMAA_INPUT_PATH,
    DRMAA_OUTPUT_PATH, DRMAA_ERROR_PATH, DRMAA_JOIN_FILES, DRMAA_JOB_CATEGORY,
    DRMAA_NATIVE_SPECIFICATION, DRMAA_BLOCK_EMAIL, DRMAA_START_TIME, NULL,
};
enum { A_COMMAND, A_JS_STATE, A_WD, A_NAME, A_INPUT, A_OUTPUT, A_ERROR, A_JOIN, A_CATEGORY,
       A_NATIVE, A_BLOCK_EMAIL, A_START, N_SCALAR };

static const char *const vector_names[] = {DRMAA_V_ARGV, DRMAA_V_ENV, DRMAA_V_EMAIL, NULL};
enum { V_ARGV, V_ENV, V_EMAIL, N_VECTOR };

struct drmaa_job_template_s {
    char *scalar[N_SCALAR];
    struct strvec vector[N_VECTOR];
};

static int index_of(const char *const names[], const char *name)
{
    for (int i = 0; name && names[i]; i++)
        if (strcmp(names[i], name) == 0)
            return i;
    return -1;
}

int drmaa_allocate_job_template(drmaa_job_template_t **jt, char *diag, size_t len)
{
    if (need_session(diag, len))
        return DRMAA_ERRNO_NO_ACTIVE_SESSION;
    if (!jt)
        return std_fail(DRMAA_ERRNO_INVALID_ARGUMENT, diag, len);
    if (!(*jt = calloc(1, sizeof **jt)))
        return std_fail(DRMAA_ERRNO_NO_MEMORY, diag, len);
    return DRMAA_ERRNO_SUCCESS;
}

int drmaa_delete_job_template(drmaa_job_template_t *jt, char *diag, size_t len)
{
    if (need_session(diag, len))
        return DRMAA_ERRNO_NO_ACTIVE_SESSION;
    if (!jt)
        return std_fail(DRMAA_ERRNO_INVALID_ARGUMENT, diag, len);
    for (int i = 0; i < N_SCALAR; i++)
        free(jt->scalar[i]);
    for (int i = 0; i < N_VECTOR; i++)
        vec_free(&jt->vector[i]);
    free(jt);
    return DRMAA_ERRNO_SUCCESS;
}

int drmaa_set_attribute(drmaa_job_template_t *jt, const char *name, const char *value, char *diag, size_t len)
{
    if (need_session(diag, len))
        return DRMAA_ERRNO_NO_ACTIVE_SESSION;
    int i = index_of(scalar_names, name);
    if (!jt || !value || i < 0)
        return std_fail(DRMAA_ERRNO_INVALID_ARGUMENT, diag, len);
    if (i == A_JS_STATE && strcmp(value, DRMAA_SUBMISSION_STATE_ACTIVE) != 0 &&
        strcmp(value, DRMAA_SUBMISSION_STATE_HOLD) != 0)
        return std_fail(DRMAA_ERRNO_INVALID_ATTRIBUTE_VALUE, diag, len);
    if ((i == A_JOIN || i == A_BLOCK_EMAIL) && strcmp(value, "y") && strcmp(value, "n") &&
        strcmp(value, "1") && strcmp(value, "0"))
        return std_fail(DRMAA_ERRNO_INVALID_ATTRIBUTE_VALUE, diag, len);
    char *copy = strdup(value);
    if (!copy)
        return std_fail(DRMAA_ERRNO_NO_MEMORY, diag, len);
    free(jt->scalar[i]);
    jt->scalar[i] = copy;
    return DRMAA_ERRNO_SUCCESS;
}

int drmaa_get_attribute(drmaa_job_template_t *jt, const char *name, char *value, size_t value_len, char *diag,
                        size_t len)
{
    if (need_session(diag, len))
        return DRMAA_ERRNO_NO_ACTIVE_SESSION;
    int i = index_of(scalar_names, name);
    if (!jt || i < 0)
        return std_fail(DRMAA_ERRNO_INVALID_ARGUMENT, diag, len);
    copy_out(value, value_len, jt->scalar[i] ? jt->scalar[i] : "");
    return DRMAA_ERRNO_SUCCESS;
}

int drmaa_set_vector_attribute(drmaa_job_template_t *jt, const char *name, const char *value[], char *diag,
                               size_t len)
{
    if (need_session(diag, len))
        return DRMAA_ERRNO_NO_ACTIVE_SESSION;
    int i = index_of(vector_names, name);
    if (!jt || !value || i < 0)
        return std_fail(DRMAA_ERRNO_INVALID_ARGUMENT, diag, len);
    struct strvec v = {0};
    for (size_t k = 0; value[k]; k++) {
        if (i == V_ENV && (!strchr(value[k], '=') || value[k][0] == '=')) {
            vec_free(&v);
            return std_fail(DRMAA_ERRNO_INVALID_ATTRIBUTE_FORMAT, diag, len);
        }
        if (vec_push(&v, value[k]) < 0) {
            vec_free(&v);
            return std_fail(DRMAA_ERRNO_NO_MEMORY, diag, len);
        }
    }
    vec_free(&jt->vector[i]);
    jt->vector[i] = v;
    return DRMAA_ERRNO_SUCCESS;
}

int drmaa_get_vector_attribute(drmaa_job_template_t *jt, const char *name, drmaa_attr_values_t **values,
                               char *diag, size_t len)
{
    if (need_session(diag, len))
        return DRMAA_ERRNO_NO_ACTIVE_SESSION;
    int i = index_of(vector_names, name);
    if (!jt || !values || i < 0)
        return std_fail(DRMAA_ERRNO_INVALID_ARGUMENT, diag, len);
    if (!(*values = calloc(1, sizeof **values)))
        return std_fail(DRMAA_ERRNO_NO_MEMORY, diag, len);
    for (size_t k = 0; k < jt->vector[i].n; k++)
        vec_push(&(*values)->v, jt->vector[i].items[k]);
    return DRMAA_ERRNO_SUCCESS;
}

static int names_of(const char *const names[], drmaa_attr_names_t **values, char *diag, size_t len)
{
    if (!values)
        return std_fail(DRMAA_ERRNO_INVALID_ARGUMENT, diag, len);
    if (!(*values = calloc(1, sizeof **values)))
        return std_fail(DRMAA_ERRNO_NO_MEMORY, diag, len);
    for (int i = 0; names[i]; i++)
        vec_push(&(*values)->v, names[i]);
    return DRMAA_ERRNO_SUCCESS;
}

int drmaa_get_attribute_names(drmaa_attr_names_t **values, char *diag, size_t len)
{
    return names_of(scalar_names, values, diag, len);
}

int drmaa_get_vector_attribute_names(drmaa_attr_names_t **values, char *diag, size_t len)
{
    return names_of(vector_names, values, diag, len);
}

/* --------------------------------------------------------- string vectors */

static int vec_next(struct strvec *v, char *value, size_t value_len)
{
    if (!v)
        return DRMAA_ERRNO_INVALID_ARGUMENT;
    if (v->next >= v->n)
        return DRMAA_ERRNO_NO_MORE_ELEMENTS;
    copy_out(value, value_len, v->items[v->next++]);
    return DRMAA_ERRNO_SUCCESS;
}

int drmaa_get_next_attr_name(drmaa_attr_names_t *values, char *value, size_t value_len)
{
    return vec_next(values ? &values->v : NULL, value, value_len);
}

int drmaa_get_next_attr_value(drmaa_attr_values_t *values, char *value, size_t value_len)
{
    return vec_next(values ? &values->v : NULL, value, value_len);
}

int drmaa_get_next_job_id(drmaa_job_ids_t *values, char *value, size_t value_len)
{
    return vec_next(values ? &values->v : NULL, value, value_len);
}

int drmaa_get_num_attr_names(drmaa_attr_names_t *values, size_t *size)
{
    if (!values || !size)
        return DRMAA_ERRNO_INVALID_ARGUMENT;
    *size = values->v.n;
    return DRMAA_ERRNO_SUCCESS;
}

int drmaa_get_num_attr_values(drmaa_attr_values_t *values, size_t *size)
{
    if (!values || !size)
        return DRMAA_ERRNO_INVALID_ARGUMENT;
    *size = values->v.n;
    return DRMAA_ERRNO_SUCCESS;
}

int drmaa_get_num_job_ids(drmaa_job_ids_t *values, size_t *size)
{
    if (!values || !size)
        return DRMAA_ERRNO_INVALID_ARGUMENT;
    *size = values->v.n;
    return DRMAA_ERRNO_SUCCESS;
}

void drmaa_release_attr_names(drmaa_attr_names_t *values)
{
    if (values) {
        vec_free(&values->v);
        free(values);
    }
}

void drmaa_release_attr_values(drmaa_attr_values_t *values)
{
    if (values) {
        vec_free(&values->v);
        free(values);
    }
}

void drmaa_release_job_ids(drmaa_job_ids_t *values)
{
    if (values) {
        vec_free(&values->v);
        free(values);
    }
}

/* ------------------------------------------------------------- submission */

/* split a native specification into words as a shell would (quotes, backslash) */
static int split_words(const char *s, struct strvec *out)
{
    struct buf w = {0};
    int in_word = 0;
    while (*s) {
        char c = *s;
        if (isspace((unsigned char)c)) {
            if (in_word) {
                if (vec_push(out, w.s) < 0)
                    return -1;
                w.n = 0;
                w.s[0] = '\0';
                in_word = 0;
            }
            s++;
            continue;
        }
        in_word = 1;
        buf_add(&w, "", 0);
        if (c == '\'' || c == '"') {
            const char *end = strchr(s + 1, c);
            if (!end) {
                free(w.s);
                return -1;
            }
            buf_add(&w, s + 1, (size_t)(end - s - 1));
            s = end + 1;
        } else if (c == '\\' && s[1]) {
            buf_add(&w, s + 1, 1);
            s += 2;
        } else {
            buf_add(&w, s, 1);
            s++;
        }
    }
    if (in_word && vec_push(out, w.s) < 0)
        return -1;
    free(w.s);
    return 0;
}

static const char *home_dir(void)
{
    struct passwd *pw = getpwuid(geteuid());
    return pw ? pw->pw_dir : (getenv("HOME") ? getenv("HOME") : "/");
}

/* a DRMAA path "[hostname]:path" as a qsub path argument; the placeholders
 * become Grid Engine's pseudo variables ($HOME, $TASK_ID) */
static char *qsub_path(const char *value, const char *wd, int bulk, char *diag, size_t len)
{
    const char *colon = strchr(value, ':');
    char *host = NULL, *p1, *p2, *p3, *out;
    const char *path = value;
    if (colon) {
        host = strndup(value, (size_t)(colon - value));
        path = colon + 1;
    }
    if (!bulk && strstr(path, DRMAA_PLACEHOLDER_INCR)) {
        free(host);
        fail(DRMAA_ERRNO_DENIED_BY_DRM, diag, len,
             "increment placeholder \"%s\" is only allowed in pathes for bulk jobs", DRMAA_PLACEHOLDER_INCR);
        return NULL;
    }
    p1 = replace_all(path, DRMAA_PLACEHOLDER_HD, "$HOME");
    p2 = replace_all(p1, DRMAA_PLACEHOLDER_WD, wd ? wd : "$HOME");
    p3 = replace_all(p2, DRMAA_PLACEHOLDER_INCR, "$TASK_ID");
    free(p1);
    free(p2);
    if (host && *host) {
        size_t n = strlen(host) + strlen(p3) + 2;
        out = malloc(n);
        snprintf(out, n, "%s:%s", host, p3);
        free(p3);
    } else {
        out = p3;
    }
    free(host);
    return out;
}

/* DRMAA's "[[[[CC]YY/]MM/]DD] hh:mm[:ss] [{-|+}UU:uu]" as qsub -a's [[CC]YY]MMDDhhmm[.SS] */
static int start_time(const char *value, char *out, size_t out_len)
{
    int nums[6], n = 0, seps[6];
    const char *s = value;
    time_t now = time(NULL);
    struct tm tm;
    localtime_r(&now, &tm);
    while (*s == ' ')
        s++;
    /* the date and clock: numbers separated by '/', a blank, then ':' */
    int seen_colon = 0;
    while (n < 6 && isdigit((unsigned char)*s)) {
        char *end;
        nums[n] = (int)strtol(s, &end, 10);
        s = end;
        seps[n] = *s;
        n++;
        if (*s == '/' || *s == ':') {
            seen_colon |= *s == ':';
            s++;
        } else if (*s == ' ' && !seen_colon) {
            while (*s == ' ')
                s++;
        } else {
            break;
        }
    }
    int date = 0, slashes = 0, colons = 0;
    while (date < n && seps[date] != ':')
        date++;
    for (int i = 0; i < n; i++) {
        slashes += seps[i] == '/';
        colons += seps[i] == ':';
    }
    int clock = n - date;
    if (clock < 2 || clock > 3 || colons != clock - 1 || date > 3)
        return -1;
    if (date ? date != slashes + 1 || seps[date - 1] != ' ' : slashes != 0)
        return -1;
    int k = 0;
    if (date >= 3) {
        int y = nums[k++];
        tm.tm_year = y < 100 ? y + 100 : y - 1900;
    }
    if (date >= 2)
        tm.tm_mon = nums[k++] - 1;
    if (date >= 1)
        tm.tm_mday = nums[k++];
    tm.tm_hour = nums[k++];
    tm.tm_min = nums[k++];
    tm.tm_sec = clock == 3 ? nums[k++] : 0;
    while (*s == ' ')
        s++;
    tm.tm_isdst = -1;
    time_t t;
    if (*s == '+' || *s == '-') {
        int sign = *s == '-' ? -1 : 1, hh, mm;
        if (sscanf(s + 1, "%2d:%2d", &hh, &mm) != 2)
            return -1;
        t = timegm(&tm) - sign * (hh * 3600 + mm * 60);
        s += 6;
    } else if (*s) {
        return -1;
    } else {
        t = mktime(&tm);
    }
    if (t == (time_t)-1 || tm.tm_mon < 0 || tm.tm_mon > 11 || tm.tm_mday < 1 || tm.tm_mday > 31 ||
        tm.tm_hour > 23 || tm.tm_min > 59 || tm.tm_sec > 60)
        return -1;
    struct tm lt;
    localtime_r(&t, &lt);
    strftime(out, out_len, "%Y%m%d%H%M.%S", &lt);
    return 0;
}

static int submit(const drmaa_job_template_t *jt, int bulk, int start, int end, int incr, struct strvec *ids,
                  char *diag, size_t len)
{
    struct strvec argv = {0}, env = {0};
    struct buf names = {0};
    char *wd = NULL, when[32];
    int rc = DRMAA_ERRNO_SUCCESS;
    char *const *sc = jt->scalar;
    if (!sc[A_COMMAND] || !*sc[A_COMMAND])
        return fail(DRMAA_ERRNO_DENIED_BY_DRM, diag, len, "job rejected: no command given");
    if (sc[A_CATEGORY] && *sc[A_CATEGORY])
        return fail(DRMAA_ERRNO_DENIED_BY_DRM, diag, len,
                    "job categories (qtask files) are not supported by minisge: drmaa_job_category \"%s\"",
                    sc[A_CATEGORY]);
    vec_push(&argv, "qsub");
    vec_push(&argv, "-terse");
    vec_push(&argv, "-b");
    vec_push(&argv, "y");
    /* the command is exec'd with its arguments as they are, no shell
     * joining them (Grid Engine's DRMAA does the same) */
    vec_push(&argv, "-shell");
    vec_push(&argv, "n");
    if (sc[A_NATIVE] && split_words(sc[A_NATIVE], &argv) < 0) {
        rc = fail(DRMAA_ERRNO_INVALID_ATTRIBUTE_FORMAT, diag, len,
                  "unbalanced quotes in the native specification \"%s\"", sc[A_NATIVE]);
        goto out;
    }
    if (sc[A_NAME] && *sc[A_NAME]) {
        vec_push(&argv, "-N");
        vec_push(&argv, sc[A_NAME]);
    }
    if (sc[A_WD] && *sc[A_WD]) {
        if (strstr(sc[A_WD], DRMAA_PLACEHOLDER_INCR)) {
            rc = fail(DRMAA_ERRNO_DENIED_BY_DRM, diag, len,
                      "increment placeholder \"%s\" is not supported in the working directory by minisge",
                      DRMAA_PLACEHOLDER_INCR);
            goto out;
        }
        wd = replace_all(sc[A_WD], DRMAA_PLACEHOLDER_HD, home_dir());
        vec_push(&argv, "-wd");
        vec_push(&argv, wd);
    }
    static const struct { int attr; const char *option; } paths[] = {
        {A_OUTPUT, "-o"}, {A_ERROR, "-e"}, {A_INPUT, "-i"}};
    for (size_t i = 0; i < 3; i++) {
        const char *v = sc[paths[i].attr];
        if (!v || !*v)
            continue;
        char *p = qsub_path(v, wd, bulk, diag, len);
        if (!p) {
            rc = DRMAA_ERRNO_DENIED_BY_DRM;
            goto out;
        }
        vec_push(&argv, paths[i].option);
        vec_push(&argv, p);
        free(p);
    }
    if (sc[A_JOIN] && (!strcmp(sc[A_JOIN], "y") || !strcmp(sc[A_JOIN], "1"))) {
        vec_push(&argv, "-j");
        vec_push(&argv, "y");
    }
    if (sc[A_JS_STATE] && !strcmp(sc[A_JS_STATE], DRMAA_SUBMISSION_STATE_HOLD))
        vec_push(&argv, "-h");
    if (sc[A_BLOCK_EMAIL] && (!strcmp(sc[A_BLOCK_EMAIL], "1") || !strcmp(sc[A_BLOCK_EMAIL], "y"))) {
        vec_push(&argv, "-m");
        vec_push(&argv, "n");
    }
    if (sc[A_START] && *sc[A_START]) {
        if (start_time(sc[A_START], when, sizeof when) < 0) {
            rc = fail(DRMAA_ERRNO_DENIED_BY_DRM, diag, len, "Error parsing DRMAA date string");
            goto out;
        }
        vec_push(&argv, "-a");
        vec_push(&argv, when);
    }
    if (jt->vector[V_EMAIL].n) {
        struct buf m = {0};
        for (size_t i = 0; i < jt->vector[V_EMAIL].n; i++) {
            if (i)
                buf_add(&m, ",", 1);
            buf_add(&m, jt->vector[V_EMAIL].items[i], strlen(jt->vector[V_EMAIL].items[i]));
        }
        vec_push(&argv, "-M");
        vec_push(&argv, m.s);
        free(m.s);
    }
    /* the job environment: set in qsub's own environment and named with -v,
     * so that a value may hold commas, quotes or newlines */
    for (size_t i = 0; i < jt->vector[V_ENV].n; i++) {
        const char *kv = jt->vector[V_ENV].items[i];
        if (names.n)
            buf_add(&names, ",", 1);
        buf_add(&names, kv, (size_t)(strchr(kv, '=') - kv));
        vec_push(&env, kv);
    }
    if (names.n) {
        vec_push(&argv, "-v");
        vec_push(&argv, names.s);
    }
    if (bulk) {
        char range[64];
        snprintf(range, sizeof range, "%d-%d:%d", start, end, incr);
        vec_push(&argv, "-t");
        vec_push(&argv, range);
    }
    vec_push(&argv, sc[A_COMMAND]);
    for (size_t i = 0; i < jt->vector[V_ARGV].n; i++)
        vec_push(&argv, jt->vector[V_ARGV].items[i]);

    struct result r;
    if (run_command(argv.items, env.items, &r) < 0) {
        rc = fail(DRMAA_ERRNO_INTERNAL_ERROR, diag, len, "can't run qsub: %s", strerror(errno));
        goto out;
    }
    if (r.status != 0) {
        command_message(&r, diag, len);
        rc = communication_failure(&r) ? DRMAA_ERRNO_DRM_COMMUNICATION_FAILURE : DRMAA_ERRNO_DENIED_BY_DRM;
        result_free(&r);
        goto out;
    }
    unsigned long number = strtoul(r.out, NULL, 10);
    result_free(&r);
    if (!number) {
        rc = fail(DRMAA_ERRNO_INTERNAL_ERROR, diag, len, "qsub -terse printed no job number");
        goto out;
    }
    pthread_mutex_lock(&lock);
    if (!bulk) {
        add_job(number, 0);
        vec_push(ids, jobs[njobs - 1].id);
    } else {
        for (int t = start; t <= end; t += incr) {
            add_job(number, (unsigned long)t);
            vec_push(ids, jobs[njobs - 1].id);
        }
    }
    pthread_mutex_unlock(&lock);
out:
    free(wd);
    free(names.s);
    vec_free(&argv);
    vec_free(&env);
    return rc;
}

int drmaa_run_job(char *job_id, size_t job_id_len, const drmaa_job_template_t *jt, char *diag, size_t len)
{
    if (need_session(diag, len))
        return DRMAA_ERRNO_NO_ACTIVE_SESSION;
    if (!jt || !job_id)
        return std_fail(DRMAA_ERRNO_INVALID_ARGUMENT, diag, len);
    struct strvec ids = {0};
    int rc = submit(jt, 0, 0, 0, 0, &ids, diag, len);
    if (rc == DRMAA_ERRNO_SUCCESS)
        copy_out(job_id, job_id_len, ids.items[0]);
    vec_free(&ids);
    return rc;
}

int drmaa_run_bulk_jobs(drmaa_job_ids_t **jobids, const drmaa_job_template_t *jt, int start, int end, int incr,
                        char *diag, size_t len)
{
    if (need_session(diag, len))
        return DRMAA_ERRNO_NO_ACTIVE_SESSION;
    if (!jt || !jobids || start < 1 || end < start || incr < 1)
        return std_fail(DRMAA_ERRNO_INVALID_ARGUMENT, diag, len);
    if (!(*jobids = calloc(1, sizeof **jobids)))
        return std_fail(DRMAA_ERRNO_NO_MEMORY, diag, len);
    int rc = submit(jt, 1, start, end, incr, &(*jobids)->v, diag, len);
    if (rc != DRMAA_ERRNO_SUCCESS) {
        drmaa_release_job_ids(*jobids);
        *jobids = NULL;
    }
    return rc;
}

/* ------------------------------------------------------------ job states */

/* one line of `qstat -g d`: a job or one task */
struct listed {
    unsigned long number, task;
    char state[16];
};

/* the jobs qstat lists now (-1: qstat failed, with its message in diag) */
static int list_jobs(struct listed **out, size_t *n, char *diag, size_t len)
{
    char *argv[] = {"qstat", "-g", "d", NULL};
    struct result r;
    *out = NULL;
    *n = 0;
    if (run_command(argv, NULL, &r) < 0 || r.status != 0) {
        command_message(&r, diag, len);
        result_free(&r);
        return -1;
    }
    size_t cap = 0;
    char *save, *line = strtok_r(r.out, "\n", &save);
    for (; line; line = strtok_r(NULL, "\n", &save)) {
        char *f[12], *s2, *w;
        int nf = 0;
        for (w = strtok_r(line, " \t", &s2); w && nf < 12; w = strtok_r(NULL, " \t", &s2))
            f[nf++] = w;
        if (nf < 8 || !isdigit((unsigned char)f[0][0]))
            continue;
        if (*n == cap) {
            cap = cap ? cap * 2 : 32;
            *out = realloc(*out, cap * sizeof **out);
        }
        struct listed *l = &(*out)[(*n)++];
        l->number = strtoul(f[0], NULL, 10);
        snprintf(l->state, sizeof l->state, "%s", f[4]);
        /* a job with a queue (running, suspended, in transfer) has the queue
         * column; a pending one (its state holds 'q') has not */
        int task_at = strchr(l->state, 'q') ? 9 : 10;
        l->task = nf >= task_at ? strtoul(f[task_at - 1], NULL, 10) : 0;
    }
    result_free(&r);
    return 0;
}

static const struct listed *listed_job(const struct listed *l, size_t n, unsigned long number,
                                       unsigned long task)
{
    for (size_t i = 0; i < n; i++)
        if (l[i].number == number && (l[i].task == task || !task))
            return &l[i];
    return NULL;
}

static int state_of(const char *s)
{
    int user_susp = strchr(s, 's') != NULL, sys_susp = strchr(s, 'S') || strchr(s, 'T');
    if (user_susp && sys_susp)
        return DRMAA_PS_USER_SYSTEM_SUSPENDED;
    if (user_susp)
        return DRMAA_PS_USER_SUSPENDED;
    if (sys_susp)
        return DRMAA_PS_SYSTEM_SUSPENDED;
    if (strchr(s, 'E'))
        return DRMAA_PS_FAILED;
    /* every hold is the user's here: qstat's 'h' does not tell -h u from
     * -h o/s, which Grid Engine reports as the system's */
    if (strchr(s, 'h'))
        return DRMAA_PS_USER_ON_HOLD;
    if (strchr(s, 'q'))
        return DRMAA_PS_QUEUED_ACTIVE;
    if (strchr(s, 'r') || strchr(s, 't') || strchr(s, 'R'))
        return DRMAA_PS_RUNNING;
    return DRMAA_PS_UNDETERMINED;
}

/* ------------------------------------------------------------- accounting */

enum { F_QNAME, F_HOST, F_GROUP, F_OWNER, F_JOBNAME, F_JOB_NUMBER, F_ACCOUNT, F_PRIORITY, F_SUBMISSION,
       F_START, F_END, F_FAILED, F_EXIT_STATUS, F_RU_WALLCLOCK, F_RU_UTIME, F_RU_STIME, F_RU_MAXRSS,
       F_RU_NIVCSW = 30, F_TASK = 35, F_CPU, F_MEM, F_IO, F_CATEGORY, F_IOW, F_PE_TASKID, F_MAXVMEM,
       N_FIELDS = 45 };

static int split_record(char *line, char *f[N_FIELDS])
{
    int n = 0;
    char *p = line;
    while (n < N_FIELDS) {
        f[n++] = p;
        p = strchr(p, ':');
        if (!p)
            break;
        *p++ = '\0';
    }
    return n;
}

/* read the accounting lines written since the last look; keep those of this
 * session's jobs (the master task's line: a parallel job's slave tasks have
 * their own, with a pe_taskid) */
static void read_accounting(void)
{
    char path[PATH_MAX];
    const char *cell = getenv("SGE_CELL");
    snprintf(path, sizeof path, "%s/%s/common/accounting", getenv("SGE_ROOT"), cell && *cell ? cell : "default");
    FILE *fp = fopen(path, "r");
    if (!fp)
        return;
    struct stat st;
    if (fstat(fileno(fp), &st) == 0 && st.st_size < accounting_offset)
        accounting_offset = 0; /* rotated */
    fseeko(fp, accounting_offset, SEEK_SET);
    char *line = NULL;
    size_t cap = 0;
    ssize_t n;
    while ((n = getline(&line, &cap, fp)) > 0) {
        if (line[n - 1] != '\n')
            break; /* not yet complete */
        accounting_offset += n;
        line[n - 1] = '\0';
        if (line[0] == '#')
            continue;
        char *copy = strdup(line), *f[N_FIELDS];
        if (!copy || split_record(copy, f) < N_FIELDS - 3 || strcmp(f[F_PE_TASKID], "NONE") != 0) {
            free(copy);
            continue;
        }
        unsigned long number = strtoul(f[F_JOB_NUMBER], NULL, 10), task = strtoul(f[F_TASK], NULL, 10);
        free(copy);
        for (size_t i = 0; i < njobs; i++) {
            if (jobs[i].number == number && jobs[i].task == task) {
                free(jobs[i].record);
                jobs[i].record = strdup(line);
            }
        }
    }
    free(line);
    fclose(fp);
}

/* Grid Engine's signal numbers (sge_signal.h) for the Linux ones */
static int sge_signal(int sig)
{
    static const int map[][2] = {
        {SIGHUP, 901}, {SIGINT, 902}, {SIGQUIT, 903}, {SIGILL, 904}, {SIGTRAP, 905}, {SIGABRT, 906},
        {SIGFPE, 909}, {SIGKILL, 910}, {SIGBUS, 911}, {SIGSEGV, 912}, {SIGSYS, 913}, {SIGPIPE, 914},
        {SIGALRM, 915}, {SIGTERM, 916}, {SIGURG, 917}, {SIGSTOP, 918}, {SIGTSTP, 919}, {SIGCONT, 920},
        {SIGCHLD, 921}, {SIGTTIN, 922}, {SIGTTOU, 923}, {SIGIO, 924}, {SIGXCPU, 925}, {SIGXFSZ, 926},
        {SIGVTALRM, 927}, {SIGPROF, 928}, {SIGWINCH, 929}, {SIGUSR1, 930}, {SIGUSR2, 931}};
    for (size_t i = 0; i < sizeof map / sizeof map[0]; i++)
        if (map[i][0] == sig)
            return map[i][1];
    return 0;
}

/* stat: bits 0-7 the exit status or the signal, then the flags */
#define STAT_EXITED 0x100
#define STAT_SIGNALED 0x200
#define STAT_COREDUMP 0x400
#define STAT_ABORTED 0x800

/* the failed codes (sge_status(5)) of a job that ended before its command
 * ran: up to 27, "... before job" and the execution's own setup */
static int failed_before_job(int failed)
{
    return failed > 0 && failed <= 27 && failed != 21 && failed != 25;
}

static void add_usage(struct strvec *v, const char *name, double value)
{
    char s[128];
    snprintf(s, sizeof s, "%s=%.4f", name, value);
    vec_push(v, s);
}

/* the stat and the rusage of a finished job from its accounting line, as
 * Grid Engine's DRMAA reports them */
static int finished_job(const struct job *j, int *stat, struct strvec *usage)
{
    char *copy = strdup(j->record), *f[N_FIELDS];
    int nf = split_record(copy, f);
    for (int i = nf; i < N_FIELDS; i++)
        f[i] = "0";
#define NUM(i) strtod(f[i], NULL)
    int failed = atoi(f[F_FAILED]), exit_status = atoi(f[F_EXIT_STATUS]);
    int started = NUM(F_START) > 0 && !failed_before_job(failed);
    add_usage(usage, "io", NUM(F_IO));
    add_usage(usage, "iow", NUM(F_IOW));
    add_usage(usage, "mem", NUM(F_MEM));
    add_usage(usage, "cpu", NUM(F_CPU));
    add_usage(usage, "vmem", 0);
    add_usage(usage, "maxvmem", NUM(F_MAXVMEM));
    add_usage(usage, "submission_time", NUM(F_SUBMISSION));
    add_usage(usage, "priority", NUM(F_PRIORITY));
    int sig = started && exit_status > 128 ? exit_status - 128 : 0;
    if (started) {
        static const char *const ru[] = {"ru_wallclock", "ru_utime", "ru_stime", "ru_maxrss", "ru_ixrss",
                                         "ru_ismrss", "ru_idrss", "ru_isrss", "ru_minflt", "ru_majflt",
                                         "ru_nswap", "ru_inblock", "ru_oublock", "ru_msgsnd", "ru_msgrcv",
                                         "ru_nsignals", "ru_nvcsw", "ru_nivcsw"};
        add_usage(usage, "exit_status", exit_status);
        add_usage(usage, "signal", sig ? sge_signal(sig) : 0);
        add_usage(usage, "start_time", NUM(F_START));
        add_usage(usage, "end_time", NUM(F_END));
        for (int i = 0; i < 18; i++)
            add_usage(usage, ru[i], NUM(F_RU_WALLCLOCK + i));
        add_usage(usage, "acct_cpu", NUM(F_CPU));
        add_usage(usage, "acct_mem", NUM(F_MEM));
        add_usage(usage, "acct_io", NUM(F_IO));
        add_usage(usage, "acct_iow", NUM(F_IOW));
        add_usage(usage, "acct_maxvmem", NUM(F_MAXVMEM));
    }
#undef NUM
    free(copy);
    if (!started || j->terminated)
        *stat = STAT_ABORTED;
    else if (sig)
        *stat = STAT_SIGNALED | sig;
    else
        *stat = STAT_EXITED | (exit_status & 0xff);
    return failed;
}

/* ------------------------------------------------------------ job status */

int drmaa_job_ps(const char *job_id, int *remote_ps, char *diag, size_t len)
{
    unsigned long number, task;
    struct listed *l;
    size_t n;
    if (need_session(diag, len))
        return DRMAA_ERRNO_NO_ACTIVE_SESSION;
    if (!remote_ps || !job_id)
        return std_fail(DRMAA_ERRNO_INVALID_ARGUMENT, diag, len);
    if (parse_job_id(job_id, &number, &task) < 0)
        return std_fail(DRMAA_ERRNO_INVALID_ARGUMENT, diag, len);
    if (list_jobs(&l, &n, diag, len) < 0)
        return DRMAA_ERRNO_DRM_COMMUNICATION_FAILURE;
    const struct listed *it = listed_job(l, n, number, task);
    if (it) {
        *remote_ps = state_of(it->state);
        free(l);
        return DRMAA_ERRNO_SUCCESS;
    }
    free(l);
    pthread_mutex_lock(&lock);
    struct job *j = find_job(job_id);
    if (!j) {
        pthread_mutex_unlock(&lock);
        return std_fail(DRMAA_ERRNO_INVALID_JOB, diag, len);
    }
    read_accounting();
    /* finished: done if it ran (whatever its exit status), failed if not
     * (gone without an accounting line: deleted before it ran) */
    *remote_ps = DRMAA_PS_FAILED;
    if (j->record) {
        struct strvec usage = {0};
        struct job never = *j;
        int stat;
        never.terminated = 0;
        finished_job(&never, &stat, &usage);
        vec_free(&usage);
        if (!(stat & STAT_ABORTED))
            *remote_ps = DRMAA_PS_DONE;
    }
    pthread_mutex_unlock(&lock);
    return DRMAA_ERRNO_SUCCESS;
}

/* ---------------------------------------------------------------- control */

static int control_one(struct job *j, int action, int all, char *diag, size_t len)
{
    char id[64];
    char *argv[6];
    int k = 0;
    snprintf(id, sizeof id, "%s", j->id);
    switch (action) {
    case DRMAA_CONTROL_SUSPEND: argv[k++] = "qmod"; argv[k++] = "-sj"; break;
    case DRMAA_CONTROL_RESUME: argv[k++] = "qmod"; argv[k++] = "-usj"; break;
    case DRMAA_CONTROL_HOLD: argv[k++] = "qhold"; argv[k++] = "-h"; argv[k++] = "u"; break;
    case DRMAA_CONTROL_RELEASE: argv[k++] = "qrls"; argv[k++] = "-h"; argv[k++] = "u"; break;
    default: argv[k++] = "qdel"; break;
    }
    argv[k++] = id;
    argv[k] = NULL;
    struct result r;
    if (run_command(argv, NULL, &r) < 0)
        return fail(DRMAA_ERRNO_INTERNAL_ERROR, diag, len, "can't run %s: %s", argv[0], strerror(errno));
    int rc = DRMAA_ERRNO_SUCCESS;
    const char *text = r.err && *r.err ? r.err : r.out;
    if (r.status != 0 || strstr(text, "does not exist")) {
        if (strstr(text, "does not exist"))
            rc = all ? DRMAA_ERRNO_SUCCESS : std_fail(DRMAA_ERRNO_INVALID_JOB, diag, len);
        else if (communication_failure(&r))
            rc = DRMAA_ERRNO_DRM_COMMUNICATION_FAILURE;
        else if (strstr(text, "ermission") || strstr(text, "not allowed"))
            rc = DRMAA_ERRNO_AUTH_FAILURE;
        else
            rc = action == DRMAA_CONTROL_SUSPEND   ? DRMAA_ERRNO_SUSPEND_INCONSISTENT_STATE
                 : action == DRMAA_CONTROL_RESUME  ? DRMAA_ERRNO_RESUME_INCONSISTENT_STATE
                 : action == DRMAA_CONTROL_HOLD    ? DRMAA_ERRNO_HOLD_INCONSISTENT_STATE
                 : action == DRMAA_CONTROL_RELEASE ? DRMAA_ERRNO_RELEASE_INCONSISTENT_STATE
                                                   : DRMAA_ERRNO_DENIED_BY_DRM;
        if (rc != DRMAA_ERRNO_SUCCESS && rc != DRMAA_ERRNO_INVALID_JOB)
            command_message(&r, diag, len);
    } else if (action == DRMAA_CONTROL_TERMINATE) {
        j->terminated = 1;
    }
    result_free(&r);
    return rc;
}

int drmaa_control(const char *jobid, int action, char *diag, size_t len)
{
    if (need_session(diag, len))
        return DRMAA_ERRNO_NO_ACTIVE_SESSION;
    if (!jobid || action < DRMAA_CONTROL_SUSPEND || action > DRMAA_CONTROL_TERMINATE)
        return std_fail(DRMAA_ERRNO_INVALID_ARGUMENT, diag, len);
    int rc = DRMAA_ERRNO_SUCCESS;
    pthread_mutex_lock(&lock);
    if (strcmp(jobid, DRMAA_JOB_IDS_SESSION_ALL) == 0) {
        read_accounting();
        for (size_t i = 0; i < njobs && rc == DRMAA_ERRNO_SUCCESS; i++)
            if (!jobs[i].record)
                rc = control_one(&jobs[i], action, 1, diag, len);
    } else {
        unsigned long number, task;
        if (parse_job_id(jobid, &number, &task) < 0) {
            rc = std_fail(DRMAA_ERRNO_INVALID_ARGUMENT, diag, len);
        } else {
            struct job *j = find_job(jobid), other = {0};
            if (!j) { /* a job of another session: Grid Engine controls it too */
                snprintf(other.id, sizeof other.id, "%s", jobid);
                j = &other;
            }
            rc = control_one(j, action, 0, diag, len);
        }
    }
    pthread_mutex_unlock(&lock);
    return rc;
}

/* ------------------------------------------------------------------ wait */

static double now_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* which of this session's jobs (all, or the one named) has ended: one with
 * an accounting line that qstat lists no more, or one gone from qstat
 * without a line for longer than a line takes (deleted before it ran);
 * NULL if none yet */
static struct job *ended_job(const char *job_id, double *gone_since, int *no_record, char *diag, size_t len,
                             int *comm_failed)
{
    struct listed *l;
    size_t n;
    *comm_failed = 0;
    read_accounting();
    if (list_jobs(&l, &n, diag, len) < 0) {
        *comm_failed = 1;
        return NULL;
    }
    struct job *found = NULL;
    int any_gone = 0;
    for (size_t i = 0; i < njobs && !found; i++) {
        struct job *j = &jobs[i];
        if (job_id && strcmp(j->id, job_id) != 0)
            continue;
        if (listed_job(l, n, j->number, j->task))
            continue;
        if (j->record) {
            found = j;
            *no_record = 0;
        } else {
            any_gone = 1;
            if (*gone_since > 0 && now_seconds() - *gone_since > 3.0) {
                found = j;
                *no_record = 1;
            }
        }
    }
    if (!any_gone)
        *gone_since = 0;
    else if (*gone_since == 0)
        *gone_since = now_seconds();
    free(l);
    return found;
}

static int wait_job(const char *job_id, char *job_id_out, size_t job_id_out_len, int *stat, signed long timeout,
                    int dispose, struct strvec *usage, char *diag, size_t len)
{
    double deadline = timeout < 0 ? -1 : now_seconds() + (double)timeout, gone_since = 0, pause = 0.1;
    int any = job_id == NULL;
    for (;;) {
        pthread_mutex_lock(&lock);
        if (!active) {
            pthread_mutex_unlock(&lock);
            return std_fail(DRMAA_ERRNO_NO_ACTIVE_SESSION, diag, len);
        }
        if ((any && njobs == 0) || (!any && !find_job(job_id))) {
            pthread_mutex_unlock(&lock);
            return std_fail(DRMAA_ERRNO_INVALID_JOB, diag, len);
        }
        int no_record = 0, comm_failed;
        struct job *j = ended_job(job_id, &gone_since, &no_record, diag, len, &comm_failed);
        if (comm_failed) {
            pthread_mutex_unlock(&lock);
            return DRMAA_ERRNO_DRM_COMMUNICATION_FAILURE;
        }
        if (j) {
            int rc = DRMAA_ERRNO_SUCCESS, st = STAT_ABORTED;
            copy_out(job_id_out, job_id_out_len, j->id);
            if (no_record)
                rc = std_fail(DRMAA_ERRNO_NO_RUSAGE, diag, len);
            else
                finished_job(j, &st, usage);
            if (stat)
                *stat = st;
            if (dispose)
                forget_job(j);
            pthread_mutex_unlock(&lock);
            return rc;
        }
        pthread_mutex_unlock(&lock);
        double now = now_seconds();
        if (deadline >= 0 && now >= deadline)
            return std_fail(DRMAA_ERRNO_EXIT_TIMEOUT, diag, len);
        double nap = pause;
        if (deadline >= 0 && deadline - now < nap)
            nap = deadline - now;
        struct timespec ts = {(time_t)nap, (long)((nap - (time_t)nap) * 1e9)};
        nanosleep(&ts, NULL);
        if (pause < 1.0)
            pause *= 2;
    }
}

int drmaa_wait(const char *job_id, char *job_id_out, size_t job_id_out_len, int *stat, signed long timeout,
               drmaa_attr_values_t **rusage, char *diag, size_t len)
{
    if (need_session(diag, len))
        return DRMAA_ERRNO_NO_ACTIVE_SESSION;
    if (!job_id)
        return std_fail(DRMAA_ERRNO_INVALID_ARGUMENT, diag, len);
    struct strvec usage = {0};
    int any = strcmp(job_id, DRMAA_JOB_IDS_SESSION_ANY) == 0;
    int rc = wait_job(any ? NULL : job_id, job_id_out, job_id_out_len, stat, timeout, 1, &usage, diag, len);
    if (rusage) {
        *rusage = NULL;
        if (rc == DRMAA_ERRNO_SUCCESS && (*rusage = calloc(1, sizeof **rusage)))
            (*rusage)->v = usage;
        else
            vec_free(&usage);
    } else {
        vec_free(&usage);
    }
    return rc;
}

int drmaa_synchronize(const char *job_ids[], signed long timeout, int dispose, char *diag, size_t len)
{
    if (need_session(diag, len))
        return DRMAA_ERRNO_NO_ACTIVE_SESSION;
    if (!job_ids)
        return std_fail(DRMAA_ERRNO_INVALID_ARGUMENT, diag, len);
    double deadline = timeout < 0 ? -1 : now_seconds() + (double)timeout;
    struct strvec ids = {0};
    int all = 0;
    for (size_t i = 0; job_ids[i]; i++)
        all |= strcmp(job_ids[i], DRMAA_JOB_IDS_SESSION_ALL) == 0;
    pthread_mutex_lock(&lock);
    if (all)
        for (size_t i = 0; i < njobs; i++)
            vec_push(&ids, jobs[i].id);
    else
        for (size_t i = 0; job_ids[i]; i++)
            vec_push(&ids, job_ids[i]);
    pthread_mutex_unlock(&lock);
    int rc = DRMAA_ERRNO_SUCCESS;
    for (size_t i = 0; i < ids.n && rc == DRMAA_ERRNO_SUCCESS; i++) {
        struct strvec usage = {0};
        long left = -1;
        if (deadline >= 0) {
            left = (long)(deadline - now_seconds() + 0.999);
            if (left < 0)
                left = 0;
        }
        int st;
        rc = wait_job(ids.items[i], NULL, 0, &st, left, dispose, &usage, diag, len);
        if (rc == DRMAA_ERRNO_NO_RUSAGE)
            rc = DRMAA_ERRNO_SUCCESS;
        vec_free(&usage);
    }
    vec_free(&ids);
    return rc;
}

/* ------------------------------------------------------------ stat words */

int drmaa_wifexited(int *exited, int stat, char *diag, size_t len)
{
    (void)diag; (void)len;
    if (exited)
        *exited = (stat & STAT_EXITED) != 0;
    return DRMAA_ERRNO_SUCCESS;
}

int drmaa_wexitstatus(int *exit_status, int stat, char *diag, size_t len)
{
    (void)diag; (void)len;
    if (exit_status)
        *exit_status = (stat & STAT_EXITED) ? stat & 0xff : 0;
    return DRMAA_ERRNO_SUCCESS;
}

int drmaa_wifsignaled(int *signaled, int stat, char *diag, size_t len)
{
    (void)diag; (void)len;
    if (signaled)
        *signaled = (stat & STAT_SIGNALED) != 0;
    return DRMAA_ERRNO_SUCCESS;
}

int drmaa_wtermsig(char *signal_name, size_t signal_len, int stat, char *diag, size_t len)
{
    (void)diag; (void)len;
    const char *name = "";
    char buf[32];
    if (stat & STAT_SIGNALED) {
        const char *abbrev = sigabbrev_np(stat & 0xff);
        snprintf(buf, sizeof buf, "SIG%s", abbrev ? abbrev : "UNKNOWN");
        name = buf;
    }
    copy_out(signal_name, signal_len, name);
    return DRMAA_ERRNO_SUCCESS;
}

int drmaa_wcoredump(int *core_dumped, int stat, char *diag, size_t len)
{
    (void)diag; (void)len;
    if (core_dumped)
        *core_dumped = (stat & STAT_COREDUMP) != 0;
    return DRMAA_ERRNO_SUCCESS;
}

int drmaa_wifaborted(int *aborted, int stat, char *diag, size_t len)
{
    (void)diag; (void)len;
    if (aborted)
        *aborted = (stat & STAT_ABORTED) != 0;
    return DRMAA_ERRNO_SUCCESS;
}

/* -------------------------------------------------------------- auxiliary */

int drmaa_get_contact(char *out, size_t out_len, char *diag, size_t len)
{
    (void)diag; (void)len;
    pthread_mutex_lock(&lock);
    copy_out(out, out_len, active ? contact : "");
    pthread_mutex_unlock(&lock);
    return DRMAA_ERRNO_SUCCESS;
}

int drmaa_version(unsigned int *major, unsigned int *minor, char *diag, size_t len)
{
    (void)diag; (void)len;
    if (major)
        *major = 1;
    if (minor)
        *minor = 0;
    return DRMAA_ERRNO_SUCCESS;
}

int drmaa_get_DRM_system(char *out, size_t out_len, char *diag, size_t len)
{
    (void)diag; (void)len;
    copy_out(out, out_len, "SGE 8.1.9");
    return DRMAA_ERRNO_SUCCESS;
}

int drmaa_get_DRMAA_implementation(char *out, size_t out_len, char *diag, size_t len)
{
    (void)diag; (void)len;
    copy_out(out, out_len, "minisge " MINISGE_VERSION);
    return DRMAA_ERRNO_SUCCESS;
}
