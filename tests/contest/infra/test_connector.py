"""A connector that cannot be resolved is one clear error, not a stack trace."""

import shutil

import pytest

from contest.infra.connector import ConnectorError, fetch, fetch_command, local_jar, parse


def test_parse_rejects_non_coordinates():
    with pytest.raises(ConnectorError, match="group:artifact:version"):
        parse("lakesoul-spark")


def test_local_jar_found_in_maven_cache(tmp_path):
    jar = tmp_path / ".m2/repository/com/dmetasoul/lakesoul-x/1.0/lakesoul-x-1.0.jar"
    jar.parent.mkdir(parents=True)
    jar.write_bytes(b"PK")
    assert local_jar("com.dmetasoul:lakesoul-x:1.0", home=tmp_path) == jar
    assert local_jar("com.dmetasoul:lakesoul-x:2.0", home=tmp_path) is None


@pytest.mark.jvm  # Maven
@pytest.mark.skipif(shutil.which("mvn") is None, reason="needs Maven")
def test_unresolvable_connector_names_coordinates_and_command():
    coords = "com.dmetasoul:lakesoul-spark-no-such-artifact_2.12:0.0.1"
    with pytest.raises(ConnectorError) as err:
        fetch(coords)
    message = str(err.value)
    assert coords in message
    assert " ".join(fetch_command(coords)) in message
    assert "Exception" not in message
