# command: qalter -c s JOBID1
# user: sgetest
# exit: 0
# ----
