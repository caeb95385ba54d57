"""tests/integration/golden.py: the one reader and writer of captures of the
real 8.1.9 and the one normaliser both sides go through."""

from __future__ import annotations

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "integration"))

from golden import normalise, read_golden, write_golden


def test_a_right_aligned_id_column_keeps_its_width_whatever_the_ids_length():
    peer = "     51 0.00000 held       cfuser1      hqw  \n"
    mine = "      1 0.00000 held       cfuser1      hqw  \n"
    assert normalise(peer, job_ids=[51]) == normalise(mine, job_ids=[1]) == \
        " JOBID1 0.00000 held       cfuser1      hqw  \n"


def test_an_id_after_a_label_or_in_a_sentence_keeps_the_spaces_before_it():
    assert normalise("job_number:                 1234\n", job_ids=[1234]) == "job_number:                 JOBID1\n"
    assert normalise("Your job 7 (\"x\") has been submitted\n", job_ids=[7]) == \
        "Your job JOBID1 (\"x\") has been submitted\n"


def test_an_id_padded_to_its_column_at_the_end_of_a_line_keeps_the_width():
    peer = "jobnumber    140                 \ntaskid       undefined\n"
    mine = "jobnumber    1000                \ntaskid       undefined\n"
    assert normalise(peer, job_ids=[140]) == normalise(mine, job_ids=[1000]) == \
        "jobnumber    JOBID1              \ntaskid       undefined\n"


def test_ids_are_numbered_in_the_order_given_and_task_ids_stay():
    text = "jid_predecessor_list:       12,9\njob 9.3 and 12.1\n"
    assert normalise(text, job_ids=[9, 12]) == "jid_predecessor_list:       JOBID2,JOBID1\njob JOBID1.3 and JOBID2.1\n"


def test_a_number_that_merely_contains_an_id_is_kept():
    assert normalise("slots 1 and 11 and 21 and x1\n", job_ids=[1]) == "slots JOBID1 and 11 and 21 and x1\n"


def test_dates_hosts_paths_and_cell_are_replaced():
    text = "11/23/2026 06:55:35 all.q@vm /var/lib/gridengine/default/common\n"
    out = normalise(text, hosts=["vm"], paths={"/var/lib/gridengine": "SGE_ROOT"}, cell="default")
    assert out == "MM/DD/YYYY hh:mm:ss all.q@HOST SGE_ROOT/CELL/common\n"


def test_a_capture_round_trips_with_its_header_fields(tmp_path):
    path = str(tmp_path / "qstat" / "case.out")
    write_golden(path, "qstat -u cfuser1", "cfuser1", 1, "text\n# ----\nmore\n", fields={"jobs": "5 6", "host": "vm"})
    g = read_golden(path)
    assert (g.command, g.user, g.exit, g.text) == ("qstat -u cfuser1", "cfuser1", 1, "text\n# ----\nmore\n")
    assert g.fields["jobs"] == "5 6" and g.fields["host"] == "vm"


def test_a_host_padded_in_a_column_keeps_the_columns_width():
    peer = "all.q@vm                       BIP   0/0/2\nhost vm is unknown\n"
    mine = "all.q@testhost                 BIP   0/0/2\nhost testhost is unknown\n"
    assert normalise(peer, hosts=["vm"]) == normalise(mine, hosts=["testhost"]) == \
        "all.q@HOST                     BIP   0/0/2\nhost HOST is unknown\n"
