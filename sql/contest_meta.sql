-- The project's own metadata, beside LakeSoul's tables.
-- The user-defined version of each commit (seed 003 put it in the commit's
-- timestamp by patching LakeSoul; a table of our own keeps LakeSoul's columns
-- meaning what they mean). Written in the same transaction as the commit.
CREATE TABLE IF NOT EXISTS contest_commit_version (
    table_id       text   NOT NULL,
    partition_desc text   NOT NULL,
    commit_id      uuid   NOT NULL,
    version        bigint NOT NULL,
    batch          text,
    committed_at   timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (table_id, partition_desc, commit_id)
);
-- A version is committed at most once per table and partition, across runs.
DROP INDEX IF EXISTS contest_commit_version_version;
CREATE UNIQUE INDEX IF NOT EXISTS contest_commit_version_unique
    ON contest_commit_version (table_id, partition_desc, version);

-- The last merged state of each partition: the checkpoint incremental replay
-- starts from. commit_ids is the merged snapshot; versions/ops run beside it.
CREATE TABLE IF NOT EXISTS contest_merge_checkpoint (
    table_id          text     NOT NULL,
    partition_desc    text     NOT NULL,
    partition_version int      NOT NULL,
    commit_ids        uuid[]   NOT NULL,
    versions          bigint[] NOT NULL,
    ops               text[]   NOT NULL,
    merged_at         timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (table_id, partition_desc)
);

-- The versions a write set out to commit (recorded before its first batch), so
-- `contest history` and the gap checks can name the versions that never landed.
CREATE TABLE IF NOT EXISTS contest_expected_version (
    table_id       text   NOT NULL,
    partition_desc text   NOT NULL,
    version        bigint NOT NULL,
    batch          text,
    planned_at     timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (table_id, partition_desc, version)
);

-- A compaction commit stands for the versions it merged: they count as committed (and
-- stay taken) while it is live.
CREATE TABLE IF NOT EXISTS contest_compaction (
    table_id       text     NOT NULL,
    partition_desc text     NOT NULL,
    commit_id      uuid     NOT NULL,
    versions       bigint[] NOT NULL,
    compacted_at   timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (table_id, partition_desc, commit_id)
);

-- The versions of rolled-back commits: `contest meta rollback` frees a version (its
-- row leaves contest_commit_version) and keeps it here, so `contest history` still
-- names the version and batch of a commit that is no longer live.
CREATE TABLE IF NOT EXISTS contest_rolled_back_version (
    table_id       text   NOT NULL,
    partition_desc text   NOT NULL,
    commit_id      uuid   NOT NULL,
    version        bigint NOT NULL,
    batch          text,
    rolled_back_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (table_id, partition_desc, commit_id)
);
-- Streaming upserts: each micro-batch of a Structured Streaming query, recorded in the
-- same transaction as its commit. Keyed by the checkpoint's query id (Spark keeps it in
-- the checkpoint's metadata; the run id changes at every start), so a batch id replayed
-- after a crash, by this run or a later one, is recognised and not committed again.
CREATE TABLE IF NOT EXISTS contest_stream_batch (
    table_id       text     NOT NULL,
    partition_desc text     NOT NULL,
    query_id       text     NOT NULL,
    batch_id       bigint   NOT NULL,
    run_id         text,
    commit_id      uuid     NOT NULL,
    version        bigint   NOT NULL,
    rows           bigint   NOT NULL,
    source_files   text[]   NOT NULL,
    committed_at   timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (table_id, query_id, batch_id)
);
-- The source files of a table's micro-batches, for the check that none is committed twice.
CREATE INDEX IF NOT EXISTS contest_stream_batch_files
    ON contest_stream_batch USING gin (source_files);

-- The tokens of the writes this project made into a table's folder (a batch's job, a
-- compaction, a micro-batch), registered before the write's first file: every file a
-- write creates begins `part-<token>`. A clean-up (vacuum, --replace) deletes only the
-- files a commit of the table names or whose token is the table's: a file a user or
-- another tool put in the folder is never deleted, whatever its name.
CREATE TABLE IF NOT EXISTS contest_write_token (
    table_id       text   NOT NULL,
    token          text   NOT NULL,
    kind           text   NOT NULL,
    registered_at  timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (table_id, token)
);
