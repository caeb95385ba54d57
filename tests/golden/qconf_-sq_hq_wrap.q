qname                 hq_wrap.q
hostlist              @allhosts
seq_no                0,[@allhosts=10],[vm=20]
load_thresholds       np_load_avg=1.75
suspend_thresholds    NONE,[vm=np_load_avg=3.5]
nsuspend              1
suspend_interval      00:05:00
priority              0
min_cpu_interval      00:05:00
processors            UNDEFINED
qtype                 NONE,[@allhosts=INTERACTIVE],[vm=BATCH]
ckpt_list             NONE
pe_list               make smp mpi
rerun                 FALSE,[vm=TRUE]
slots                 2
tmpdir                /tmp
shell                 /bin/sh
prolog                NONE, \
                      [vm=root@/very/long/path/to/some/prolog/script/that/goes/on/and/on/forever/prolog.sh]
epilog                NONE
shell_start_mode      posix_compliant,[vm=unix_behavior]
starter_method        NONE
suspend_method        NONE
resume_method         NONE
terminate_method      NONE
notify                00:00:60,[vm=120]
owner_list            alice bob carol dave erin frank grace heidi ivan judy \
                      mallory niaj olivia peggy rupert sybil trent victor walter
user_lists            NONE
xuser_lists           NONE
subordinate_list      slots=4(all.q:1:lr, hq_sub.q:2:sr),[vm=all.q=2, hq_sub.q]
complex_values        NONE
projects              NONE
xprojects             NONE
calendar              NONE
initial_state         default,[vm=disabled]
s_rt                  INFINITY
h_rt                  INFINITY
s_cpu                 INFINITY
h_cpu                 INFINITY
s_fsize               INFINITY
h_fsize               INFINITY
s_data                INFINITY
h_data                INFINITY
s_stack               INFINITY
h_stack               INFINITY
s_core                INFINITY
h_core                INFINITY
s_rss                 INFINITY
h_rss                 INFINITY
s_vmem                INFINITY
h_vmem                4G,[vm=8G]
