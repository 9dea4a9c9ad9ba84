"""Object-store paths: one filesystem for s3:// URIs, settings from configuration and
the AWS variables, secrets never written or shown."""

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from contest.config import ObjectStoreConfig, as_dict, load_config, to_toml
from contest.config.stores import object_store_env, object_store_from_env
from contest.infra import storage
from contest.infra.s3server import ensure_bucket

SECRET = "s3cr3t-value-never-shown"


def test_the_aws_variables_set_the_object_store():
    env = {
        "AWS_ENDPOINT_URL": "http://127.0.0.1:9000",
        "AWS_ACCESS_KEY_ID": "key-id",
        "AWS_SECRET_ACCESS_KEY": SECRET,
        "AWS_REGION": "eu-west-1",
    }
    cfg = load_config(env=env)
    assert cfg.s3.endpoint == "http://127.0.0.1:9000" and cfg.s3.region == "eu-west-1"
    assert cfg.s3.secret_key == SECRET
    assert object_store_from_env(object_store_env(cfg.s3)) == cfg.s3
    for text in (repr(cfg), to_toml(cfg), str(as_dict(cfg))):
        assert SECRET not in text and "key-id" not in text


def test_bad_object_store_settings_are_refused():
    from contest.errors import ConfigError

    with pytest.raises(ConfigError, match="s3.endpoint"):
        load_config(env={"AWS_ENDPOINT_URL": "127.0.0.1:9000"})
    with pytest.raises(ConfigError, match="go together"):
        load_config(env={"AWS_ACCESS_KEY_ID": "only-the-id"})


def test_local_paths_are_unchanged(tmp_path):
    fs, path = storage.filesystem(str(tmp_path))
    assert type(fs).__name__ == "LocalFileSystem" and path == str(tmp_path)


def test_s3a_settings_for_spark():
    conf = storage.s3a_conf(ObjectStoreConfig("http://127.0.0.1:9", "us-east-1", "k", SECRET))
    assert conf["spark.hadoop.fs.s3.impl"] == "org.apache.hadoop.fs.s3a.S3AFileSystem"
    assert conf["spark.hadoop.fs.s3a.endpoint"] == "http://127.0.0.1:9"
    assert conf["spark.hadoop.fs.s3a.connection.ssl.enabled"] == "false"
    assert conf["spark.hadoop.fs.s3a.directory.marker.retention"] == "keep"


def test_parquet_round_trip_on_the_embedded_server(s3):
    storage.configure(s3.s3)
    try:
        ensure_bucket("s3://lake/unit")
        table = pa.table({"uuid": ["a", "b", None], "requests": [1, None, 3]})
        fs, path = storage.filesystem("s3://lake/unit/t/part-0.parquet")
        pq.write_table(table, path, filesystem=fs)
        back = pq.read_table(path, filesystem=fs)
        assert back.equals(table)
        storage.delete_tree("s3://lake/unit/t")
        assert fs.get_file_info(path).type.name == "NotFound"
    finally:
        storage.configure(ObjectStoreConfig())


def test_the_embedded_server_is_found_while_it_runs(s3, cfg):
    # The configuration reads the running server's file (0600) under the state folder.
    loaded = load_config(env={}, overrides={"state_dir": cfg.state_dir})
    assert loaded.s3.endpoint == s3.s3.endpoint and loaded.s3.secret_key == s3.s3.secret_key
    info = cfg.state_path / "s3" / "credentials.json"
    assert info.stat().st_mode & 0o777 == 0o600
