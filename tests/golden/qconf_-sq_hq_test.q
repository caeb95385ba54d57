qname                 hq_test.q
hostlist              @allhosts
seq_no                0
load_thresholds       np_load_avg=1.75,mem_free=1G,swap_free=2G, \
                      virtual_free=4G,np_load_short=2.5,np_load_medium=2.0, \
                      np_load_long=1.5
suspend_thresholds    NONE
nsuspend              1
suspend_interval      00:05:00
priority              0
min_cpu_interval      00:05:00
processors            UNDEFINED
qtype                 BATCH INTERACTIVE
ckpt_list             NONE
pe_list               make,[@allhosts=make smp mpi],[vm=smp mpi]
rerun                 FALSE
slots                 1,[vm=2]
tmpdir                /tmp
shell                 /bin/sh
prolog                NONE
epilog                NONE
shell_start_mode      posix_compliant
starter_method        NONE
suspend_method        NONE
resume_method         NONE
terminate_method      NONE
notify                00:00:60
owner_list            root sgetest sgetest2
user_lists            NONE
xuser_lists           NONE
subordinate_list      hq_sub.q=1
complex_values        arch=lx-amd64,h_vmem=4G,mem_total=8G,swap_total=16G, \
                      virtual_total=24G,num_proc=2,m_core=2,[vm=h_vmem=8G, \
                      mem_total=16G,swap_total=32G,virtual_total=48G]
projects              NONE
xprojects             NONE
calendar              NONE
initial_state         default
s_rt                  INFINITY
h_rt                  INFINITY,[@allhosts=48:00:00],[vm=1:0:0]
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
h_vmem                INFINITY
