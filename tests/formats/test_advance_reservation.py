"""The spool file of an advance reservation (minisge.formats.advance_reservation)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from minisge.formats import advance_reservation as fmt
from minisge.formats.errors import FormatError

NAMES = st.text(alphabet="abcdefghijklmnopqrstuvwxyz0123456789_.-", min_size=1, max_size=12)


@given(ar_id=st.integers(1, 9_999_999), name=st.one_of(st.just(""), NAMES), slots=st.integers(1, 64),
       users=st.lists(NAMES, max_size=3), mail=st.sampled_from(["", "be", "a"]), he=st.booleans(),
       state=st.sampled_from([1, 2, 4]))
def test_parse_reads_what_write_writes(ar_id, name, slots, users, mail, he, state):
    ar = fmt.AdvanceReservation(
        id=ar_id, owner="u", group="g", submission_time=10, start_time=20, end_time=30, name=name, duration=10,
        error_handling=he, state=state, resource_list=(("h_vmem", "1G"),), queue_list=("all.q",),
        granted_slots=(("all.q@h1", slots),), mail_options=mail, acl_list=tuple(users), pe="smp", pe_range="1-4",
        granted_pe="smp")
    assert fmt.parse(fmt.write(ar)) == ar


def test_the_file_has_8_1_9s_field_names_in_order():
    text = fmt.write(fmt.AdvanceReservation(id=1, owner="u", group="g", submission_time=1, start_time=1,
                                            end_time=2))
    assert [ln.split()[0] for ln in text.splitlines()] == list(fmt.ATTRIBUTES)
    assert text.splitlines()[1] == "name                NONE"


def test_a_bad_file_names_its_line():
    text = fmt.write(fmt.AdvanceReservation(id=1, owner="u", group="g", submission_time=1, start_time=1,
                                            end_time=2)).replace("start_time          1", "start_time          x")
    with pytest.raises(FormatError, match="start_time"):
        fmt.parse(text)
