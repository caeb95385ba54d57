# command: qselect -q nosuch.q
# user: sgetest
# exit: 1
# ----
