"""host_conf(5): execution hosts."""

import string
from pathlib import Path

import attrs
import pytest
from hypothesis import given
from hypothesis import strategies as st

from minisge.formats import host_conf
from minisge.formats.errors import FormatError
from minisge.formats.host_conf import ExecHost, parse, template, write

GOLDEN = Path(__file__).parent.parent / "golden"


def host_text(**values):
    """An exec host file: the qconf -ae template for hp_h with some values replaced."""
    out = []
    for line in write(template("hp_h"), show_load=False).splitlines():
        name = line.split()[0]
        out.append(f"{name} {values[name]}" if name in values else line)
    return "\n".join(out) + "\n"


def line_of(attr):
    return host_conf.REQUIRED.index(attr) + 1


# --- what qconf -se prints ---------------------------------------------------------


def test_qconf_se_output_parses_and_writes_back_byte_identical():
    text = (GOLDEN / "qconf_-se_HOST").read_text()
    assert write(parse(text)) == text


def test_reported_load_values_are_read_as_name_value_pairs():
    host = parse((GOLDEN / "qconf_-se_HOST").read_text())
    loads = dict(host.load_values)
    assert host.hostname == "vm" and host.processors == 2
    assert loads["arch"] == "lx-amd64"
    assert loads["swap_total"] == "0.000000M"  # the first value on a continuation line
    assert loads["np_load_long"] == "0.075195"
    assert len(host.load_values) == 25


def test_names_are_padded_to_column_22():
    text = (GOLDEN / "qconf_-se_HOST").read_text()
    assert text.splitlines()[0] == "hostname" + " " * 14 + "vm"
    assert write(parse(text)).splitlines()[-1] == "report_variables      NONE"


def test_template_is_what_qconf_ae_offers_without_load_values():
    assert write(template("template"), show_load=False) == (GOLDEN / "qconf_-ae.template").read_text()


def test_global_host_entry_is_accepted():
    text = write(template("global"))
    assert parse(text).hostname == "global"
    assert "load_values           NONE\nprocessors            0\n" in text


def test_load_values_and_processors_are_optional_on_input():
    host = parse(host_text())
    assert (host.load_values, host.processors) == ((), 0)


# --- scaling lists -------------------------------------------------------------------


def test_load_scaling_factors_are_written_with_six_decimals():
    host = parse(host_text(load_scaling="load_avg=2,np_load_avg=0.5"))
    assert host.load_scaling == (("load_avg", 2.0), ("np_load_avg", 0.5))
    assert "load_scaling          load_avg=2.000000,np_load_avg=0.500000\n" in write(host)
    assert host.scaling("load_avg") == 2.0 and host.scaling("mem_free") == 1.0


@pytest.mark.parametrize(
    "value, why",
    [("load_avg=2.0,mem_free=x", 'error parsing double value from string "x"'),
     ("load_avg", "is not name=value"),
     ("load_avg=2.0 mem_free=3", 'separated by ","'),
     ("load_avg=-1", "must be a finite number >= 0"),
     ("load_avg=1,load_avg=2", "given more than once"),
     ("load_avg=1,,x=2", "empty element")],
)  # fmt: skip
def test_bad_load_scaling_is_rejected_at_its_line(value, why):
    with pytest.raises(FormatError, match=why) as err:
        parse(host_text(load_scaling=value), "t.eh")
    assert (err.value.path, err.value.line) == ("t.eh", line_of("load_scaling"))


def test_usage_scaling_knows_cpu_mem_and_io_only():
    host = parse(host_text(usage_scaling="cpu=1.5,mem=0,io=1"))
    assert host.usage_factor("mem") == 0.0 and host.usage_factor("io") == 1.0
    with pytest.raises(FormatError, match="only cpu, mem and io"):
        parse(host_text(usage_scaling="load_avg=1"))


# --- complex_values, lists ------------------------------------------------------------


def test_complex_values_keep_their_values_as_text():
    host = parse(host_text(complex_values="slots=4, mem_free=4G,arch=lx-amd64"))
    assert host.complex_values == (("slots", "4"), ("mem_free", "4G"), ("arch", "lx-amd64"))
    assert "complex_values        slots=4,mem_free=4G,arch=lx-amd64\n" in write(host)


@pytest.mark.parametrize("bad", ["slots", "slots=", "=4", "a:b=1"])
def test_malformed_complex_values_are_rejected(bad):
    with pytest.raises(FormatError, match="complex_values"):
        parse(host_text(complex_values=bad))


def test_access_and_project_lists_are_written_space_separated():
    host = parse(host_text(user_lists="arusers,deadlineusers", projects="p1 p2", xprojects="none"))
    text = write(host)
    assert "user_lists            arusers deadlineusers\n" in text
    assert "projects              p1 p2\n" in text
    assert host.xprojects == ()


def test_report_variables_are_written_comma_separated():
    host = parse(host_text(report_variables="cpu,mem_free"))
    assert host.report_variables == ("cpu", "mem_free")
    assert write(host).endswith("report_variables      cpu,mem_free\n")


def test_none_with_other_names_is_rejected():
    with pytest.raises(FormatError, match="NONE cannot be combined") as err:
        parse(host_text(xuser_lists="NONE arusers"))
    assert err.value.line == line_of("xuser_lists")


def test_processors_must_be_a_number():
    with pytest.raises(FormatError, match="processors"):
        parse(host_text() + "processors two\n")


# --- the file as a whole -------------------------------------------------------------------


@pytest.mark.parametrize("bad", ["template", "none", "a,b", "@allhosts", "a/b"])
def test_hostname_must_be_a_host_name(bad):
    with pytest.raises(FormatError, match='attribute "hostname"') as err:
        parse(host_text(hostname=bad))
    assert err.value.line == 1


@pytest.mark.parametrize("missing", host_conf.REQUIRED)
def test_every_configurable_attribute_is_required(missing):
    text = "".join(ln + "\n" for ln in host_text().splitlines() if not ln.startswith(missing + " "))
    with pytest.raises(FormatError, match=f'missing attribute "{missing}"'):
        parse(text)


def test_unknown_attribute_is_rejected():
    with pytest.raises(FormatError, match='unknown attribute name "reschedule_unknown_list"'):
        parse(host_text() + "reschedule_unknown_list NONE\n")


# --- properties ------------------------------------------------------------------------------

NAMES = st.builds(
    str.__add__,
    st.sampled_from(string.ascii_letters + "_"),
    st.text(string.ascii_letters + string.digits + "_.-", max_size=11),
).filter(lambda s: s.upper() not in ("NONE", "ALL", "TEMPLATE"))
HOSTS = st.builds(
    str.__add__,
    st.sampled_from(string.ascii_lowercase),
    st.text(string.ascii_lowercase + string.digits + "-.", max_size=14),
).filter(lambda s: s not in ("template", "all", "default", "unknown", "none"))
FACTOR = st.integers(0, 10**9).map(lambda n: n / 10**6)  # what six decimals can carry
VALUE = st.text(string.ascii_letters + string.digits + "_.:+-", min_size=1, max_size=12)


def unique_pairs(values, names=NAMES):
    return st.lists(st.tuples(names, values), max_size=8, unique_by=lambda p: p[0]).map(tuple)


HOSTS_CONF = st.builds(
    ExecHost,
    hostname=HOSTS,
    load_scaling=unique_pairs(FACTOR),
    complex_values=unique_pairs(VALUE),
    load_values=unique_pairs(VALUE),
    processors=st.integers(0, 4096),
    user_lists=st.lists(NAMES, max_size=5).map(tuple),
    xuser_lists=st.lists(NAMES, max_size=5).map(tuple),
    projects=st.lists(NAMES, max_size=5).map(tuple),
    xprojects=st.lists(NAMES, max_size=5).map(tuple),
    usage_scaling=unique_pairs(FACTOR, st.sampled_from(host_conf.USAGE_SCALING_NAMES)),
    report_variables=st.lists(NAMES, max_size=8).map(tuple),
)


@given(HOSTS_CONF)
def test_write_then_parse_gives_the_same_host(host):
    assert parse(write(host)) == host


@given(HOSTS_CONF)
def test_editable_form_leaves_out_what_execd_reports(host):
    assert parse(write(host, show_load=False)) == attrs.evolve(host, load_values=(), processors=0)


@given(st.data())
def test_mangled_text_raises_only_format_error(data):
    text = (GOLDEN / "qconf_-se_HOST").read_text()
    pos = data.draw(st.integers(0, len(text)))
    junk = data.draw(st.text(st.sampled_from("=,:\\ \n\t#x0.-NONE"), max_size=6))
    cut = data.draw(st.integers(0, 5))
    try:
        parse(text[:pos] + junk + text[pos + cut :])
    except FormatError:
        pass


@given(st.text(max_size=300))
def test_random_text_raises_only_format_error(text):
    try:
        parse(text)
    except FormatError:
        pass
