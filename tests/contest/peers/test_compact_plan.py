"""What a peer's compaction asks of its format, from the config alone (no Spark): the
options Hudi's procedure is given, the files per bucket a layout reports, and that
`contest compact` on a peer refuses a LakeSoul-only option in one line."""

from pathlib import Path

import pytest

from contest.cli.main import main
from contest.config import load_config
from contest.evaluation.strategies import STRATEGIES
from contest.peers import formats, registry
from contest.peers.base import Layout
from contest.peers.hudi.format import Hudi
from contest.peers.hudi.options import MERGER_CLASS, STRATEGY_ID, procedure_options


def test_hudi_merger_compacts_with_its_record_merger():
    cfg = load_config(preset=STRATEGIES["hudi-merger"])
    fmt = formats.of(cfg)
    assert isinstance(fmt, Hudi)
    listing = procedure_options(fmt.compact_options(cfg, Path("/x/ccf")))
    pairs = dict(item.split("=") for item in listing.split(","))
    assert pairs["hoodie.write.record.merge.mode"] == "CUSTOM"
    assert pairs["hoodie.write.record.merge.strategy.id"] == STRATEGY_ID
    assert pairs["hoodie.write.record.merge.custom.implementation.classes"] == MERGER_CLASS
    assert pairs["hoodie.metadata.enable"] == "false"  # as the writes left it
    assert pairs["hoodie.compact.inline.max.delta.commits"] == "1"  # plan whatever came
    # The empty partition path field cannot be written in Hudi's "k=v" list.
    assert "hoodie.datasource.write.partitionpath.field" not in pairs


def test_procedure_options_leave_out_what_the_list_cannot_carry():
    opts = {"a": "1", "b": "", "c": "x,y", "d=e": "2", "f": "g=h", "i": "j"}
    assert procedure_options(opts) == "a=1,i=j"


def test_layout_counts_every_file_a_read_opens_per_bucket():
    layout = Layout(data_files=8, log_files=16, buckets=8)
    assert layout.files == 24 and layout.files_per_bucket == 3.0
    assert Layout(data_files=3, delete_files=2).files_per_bucket == 5.0
    assert Layout(data_files=0, buckets=0).files_per_bucket is None


def test_a_peer_compaction_refuses_allow_gaps(tmp_path, capsys):
    argv = ["--set", "peer.format=delta", "compact", "--table", str(tmp_path), "--allow-gaps"]
    assert main(argv) == 2
    assert "--allow-gaps is for LakeSoul tables" in capsys.readouterr().err


def test_a_peer_compaction_of_no_table_is_one_line(tmp_path, capsys):
    assert main(["--set", "peer.format=iceberg", "compact", "--table", str(tmp_path)]) != 0
    err = capsys.readouterr().err
    assert "no iceberg table there (no metadata)" in err and len(err.strip().splitlines()) == 1


SPARK_FORMATS = sorted(
    n for n, i in registry.IMPLEMENTATIONS.items() if i.peer and i.runtime is registry.SPARK
)


@pytest.mark.parametrize("name", SPARK_FORMATS)
def test_every_format_compacts(name):
    """Each registered Spark format implements its compaction and its layout (a native
    engine's has none here: the base refuses it in one line)."""
    from contest.peers.base import PeerFormat

    cls = type(formats.lookup(name))
    assert cls.compact is not PeerFormat.compact and cls.layout is not PeerFormat.layout
