-- LakeSoul metadata schema: the tables, columns and types that LakeSoul's
-- metadata layer (JVM connector, native Rust/Python client) reads and writes.
-- Matches LakeSoul 3.x/4.x (script/meta_init.sql in lakesoul-io/LakeSoul),
-- without the compaction-notify trigger, which only serves LakeSoul's
-- compaction service. Idempotent: safe to apply to an existing database.

CREATE TABLE IF NOT EXISTS namespace (
    namespace  text PRIMARY KEY,
    properties json,
    comment    text,
    domain     text DEFAULT 'public'
);
INSERT INTO namespace (namespace, properties, comment)
VALUES ('default', '{}', '') ON CONFLICT DO NOTHING;

CREATE TABLE IF NOT EXISTS table_info (
    table_id                         text PRIMARY KEY,
    table_namespace                  text DEFAULT 'default',
    table_name                       text,
    table_path                       text,
    table_schema                     text,
    table_schema_arrow_ipc           bytea,
    table_schema_arrow_ipc_json_hash text,
    properties                       json,
    partitions                       text,
    domain                           text DEFAULT 'public'
);
CREATE INDEX IF NOT EXISTS table_info_name_index ON table_info (table_namespace, table_name);
CREATE INDEX IF NOT EXISTS table_info_path_index ON table_info (table_path);

CREATE TABLE IF NOT EXISTS table_name_id (
    table_name      text,
    table_id        text,
    table_namespace text DEFAULT 'default',
    domain          text DEFAULT 'public',
    PRIMARY KEY (table_name, table_namespace)
);
CREATE INDEX IF NOT EXISTS table_name_id_id_index ON table_name_id (table_id);

CREATE TABLE IF NOT EXISTS table_path_id (
    table_path      text PRIMARY KEY,
    table_id        text,
    table_namespace text DEFAULT 'default',
    domain          text DEFAULT 'public'
);
CREATE INDEX IF NOT EXISTS table_path_id_id_index ON table_path_id (table_id);

DO $$
BEGIN
    IF NOT EXISTS (SELECT 1 FROM pg_type WHERE typname = 'data_file_op') THEN
        CREATE TYPE data_file_op AS (
            path            text,
            file_op         text,
            size            bigint,
            file_exist_cols text
        );
    END IF;
END
$$;

-- One row per commit and partition: the files it added or removed.
CREATE TABLE IF NOT EXISTS data_commit_info (
    table_id       text,
    partition_desc text,
    commit_id      uuid,
    file_ops       data_file_op[],
    commit_op      text,
    committed      boolean DEFAULT false,
    timestamp      bigint,
    domain         text DEFAULT 'public',
    PRIMARY KEY (table_id, partition_desc, commit_id)
);
CREATE INDEX IF NOT EXISTS data_commit_info_commit_id ON data_commit_info (commit_id);

-- One row per partition version; snapshot lists the live commits in merge order.
CREATE TABLE IF NOT EXISTS partition_info (
    table_id       text,
    partition_desc text,
    version        int,
    commit_op      text,
    timestamp      bigint DEFAULT (date_part('epoch'::text, now()) * (1000)::double precision),
    snapshot       uuid[],
    expression     text,
    domain         text DEFAULT 'public',
    PRIMARY KEY (table_id, partition_desc, version)
);
CREATE INDEX IF NOT EXISTS partition_info_timestamp ON partition_info (timestamp);

CREATE TABLE IF NOT EXISTS global_config (
    key   text PRIMARY KEY,
    value text
);

CREATE TABLE IF NOT EXISTS discard_compressed_file_info (
    file_path      text PRIMARY KEY,
    table_path     text,
    partition_desc text,
    timestamp      bigint DEFAULT (date_part('epoch'::text, now()) * (1000)::double precision),
    t_date         date
);
