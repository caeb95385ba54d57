# command: qselect -q all.q
# user: sgetest
# exit: 0
# ----
all.q@vm
