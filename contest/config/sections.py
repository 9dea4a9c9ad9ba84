"""The configuration's sections: one frozen dataclass per part of the pipeline, with
its defaults and the closed sets of values its keys take (validated in
`contest.config.validation`). Loaded and overridden in `contest.config.loading`.

One concern: the configuration's schema, every key with its type, default and closed
set of values, read whole by the loader, the validation and the generated reference
(docs/reference/configuration.md); split by section, a key would be looked for in
several files and `Config` would import them all back.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

CODECS = ("none", "snappy", "zstd", "gzip", "lz4")
# Who merges each bucket at read (contest/read/merges.py): numpy is the reference.
READ_MERGES = ("numpy", "arrow", "duckdb", "polars")
# How a write task sorts its rows (contest/write/order.py).
WRITE_SORTS = ("arrow", "uuid128")
# Which columns of the result's files carry min/max statistics (read.statistics).
RESULT_STATISTICS = ("key", "all", "none")

# The connector the project would load through spark.jars.packages; see
# docs/concepts/versions.md for why the harness's own engine (write.engine = "harness")
# is the default.
CONNECTOR_COORDINATES = "com.dmetasoul:lakesoul-spark-3.5_2.12:4.0.0"


@dataclass(frozen=True)
class PgConfig:
    # Empty url means: use the embedded cluster started by `contest db up`.
    url: str = ""
    # The user and password of an external server (LAKESOUL_PG_USERNAME,
    # LAKESOUL_PG_PASSWORD); the embedded one's password is generated and kept in the
    # state folder, never printed.
    username: str = ""
    password: str = field(default="", repr=False)
    # The embedded server's port (another free one when it is taken, and it says so).
    port: int = 54320
    # The database that holds LakeSoul's metadata tables and the project's own.
    database: str = "lakesoul_contest"
    # The embedded server without fsync: faster commits, but a crash can lose
    # acknowledged commits or corrupt the cluster. For throwaway benchmark runs only.
    unsafe_no_fsync: bool = False
    # How long an unreachable server is retried (with backoff) before a command fails.
    retry_seconds: float = 30.0

    @property
    def external(self) -> bool:
        return bool(self.url)


@dataclass(frozen=True)
class SparkConfig:
    # Where Spark runs: local[N], spark://HOST:PORT (a standalone cluster), yarn, k8s://...;
    # spark-submit's own --master wins when a job runs under it.
    master: str = "local[*]"
    # spark.sql.shuffle.partitions of the harness's sessions and jobs.
    shuffle_partitions: int = 8
    # spark.driver.memory of the jobs (Spark refuses a heap under its minimum, ~450 MB).
    driver_memory: str = "4g"
    # Spark's web UI; every harness session prints its address when on.
    ui: bool = True
    # Timed jobs' JVMs start from the checkout's class-data archive of Spark's classes
    # while it matches Java and Spark's jars (contest/infra/cds.py;
    # docs/concepts/configuration.md). On: 1.08x [1.08-1.10] n=3 for optimized at scale 1
    # (results/duckdb.md's sitting).
    cds: bool = True
    # Python processes import pyspark compiled (not from Spark's zip) and the worker
    # daemon loads the tasks' libraries before it forks (contest/infra/pyspark_daemon.py).
    # Off: no clear gain alone, round by round (results/duckdb.md).
    python_preload: bool = False
    # A session a command starts runs one tiny action on a thread of its own at once,
    # so Spark's session state, the first plan's code and a Python worker warm while the
    # driver does its own work (contest/infra/warm_up.py).
    warm_up: bool = False
    # Further options of the driver's JVM (a timed job's --driver-java-options, a
    # command's own session's spark.driver.extraJavaOptions), e.g. JIT and GC flags for
    # short jobs (results/costs.md).
    java_options: str = ""
    # Spark's log level in a command's own session (its lines go to the command's log file).
    log_level: str = "WARN"
    # Loading the JVM connector is opt-in: it is not served by every registry.
    use_connector: bool = False
    # The connector's Maven coordinates, loaded when use_connector is on.
    connector: str = CONNECTOR_COORDINATES
    # Any further Spark setting by Spark's own name (spark.conf."spark.sql..." = "...").
    conf: dict[str, str] = field(default_factory=dict)
    # The lakesoul-stock engine's executor-side helper jar; "" = jvm/target of the
    # checkout (built by ./build.sh).
    stock_helper_jar: str = ""


@dataclass(frozen=True)
class TableConfig:
    # LakeSoul's namespace of the tables the harness creates.
    namespace: str = "default"
    # Hash buckets of a new table: its rows are bucketed by Spark's Murmur3 of the key, as
    # LakeSoul's hash partitioning does, one file per bucket a write task.
    hash_buckets: int = 4


@dataclass(frozen=True)
class WriteConfig:
    # mor: upserts as merge-on-read commits; cow: the copy-on-write baseline
    # (per batch a full outer join with the table, then an overwrite).
    mode: str = "mor"
    # Batches upserted at once (a driver thread pool; each thread runs Spark jobs).
    threads: int = 4
    # Files at least this big are split into parts (below); 0 = auto: twice the median
    # batch size, which picks base-0 alone on contest data.
    big_file_bytes: int = 0
    # Parts a big file is written in: 0 = it is not split (one task per row group, as
    # the other files); else this many, unless task_rows is set.
    repartition: int = 8
    # Rows per part of a big file: its part count is then rows / task_rows, at least
    # one per core (write.repartition's count when 0). Follows the data volume: scale
    # 1's base-0 in 2 parts (one a core), scale 10's in ~20, each part's sort and memory
    # the same. Every part leaves a file in every bucket, a run the read merges: at
    # scale 10 1.25M-row parts gave a bucket 150 runs and the read 230 s, 5M 73 runs
    # and 158 s, the write as fast (results/notes/duckdb.md, "Fewer runs a bucket").
    task_rows: int = 5_000_000
    # A row group of a batch that is not big, of more rows than this, is written by its
    # task in equal pieces of at most this many (as big files' parts); 0 = whole. Scale
    # 10's 10M-row groups in two pieces; scale 1's 2M not cut. 5M, not task_rows: 5M-row
    # parts cost 1.25M's a row at scale 1 (results/sweeps/task-rows), and each piece is
    # one more file a bucket for the read.
    batch_piece_rows: int = 5_000_000
    # How a big file reaches its parts: "arrow" (tasks read contiguous row ranges with
    # pyarrow and write each part's rows as sorted bucket files: no row enters the JVM;
    # contest/write/split.py) or "spark" (Spark reads it and repartitions its rows by
    # key through its shuffle). Arrow: ~25% fewer CPU seconds for the whole write at
    # scale 0.3, exact (results/NOTES.md, "Write without the JVM shuffle").
    shuffle: str = "arrow"
    # Parquet codec of the table's data files: none, snappy, zstd, gzip, lz4.
    codec: str = "none"
    # Who reads a batch that is not repartitioned: "arrow" (its Spark tasks read the
    # file with pyarrow and bucket it with Spark's hash in numpy) or "spark" (Spark's
    # parquet reader, rows handed to Python).
    reader: str = "arrow"
    # Rows with a NULL key: an error naming the batch, or dropped and counted.
    drop_null_keys: bool = False
    # Batch versions: "" = file index; "INDEX=VERSION,..." or "@file.json".
    versions: str = ""
    # Who writes: "harness" (this project's write job) or "lakesoul-stock" (LakeSoul's
    # own DBManager and NativeIOWriter, sequential upserts: contest/write/stock.py).
    engine: str = "harness"
    # How a task orders its rows by bucket and key (contest/write/order.py): "uuid128"
    # (the keys' 128 bits as integers when every key is a canonical lowercase UUID,
    # else arrow; about half arrow's time, the same order: results/native_merge.md) or
    # "arrow" (pyarrow's string sort, the earlier way).
    sort: str = "uuid128"
    # With sort "uuid128", UUID keys' 128 bits (the sort's words) stored in two int64
    # columns beside the key, for the read to group by without parsing
    # (docs/concepts/configuration.md).
    key_words: bool = False
    # A batch's string columns that its file stores as small dictionaries (every
    # column but the key) are read as dictionaries and written as they are: no string
    # decoded from the batch, hashed again or encoded again on the way to the bucket
    # files (contest/data/dictionaries.py). Off: in the twentieth sitting (scale 1) it
    # did not win (optimized 1.07x [0.99-1.10] faster without it, the read slower with
    # the batch's whole dictionary in every bucket file; results/notes/duckdb.md).
    file_dictionaries: bool = False
    # A big batch's row group cut into ranges to give every core a task (on): a range
    # starting inside a row group decodes and drops the rows before it (parquet cannot
    # seek to a row), so on files of one row group base-0's second task decodes its first
    # half twice. Off: such a group is one task that reads it once and writes it in the
    # same pieces, the other batches' tasks filling the other cores: 1.05x [0.95-1.18]
    # and 1.06x [0.99-1.09] on the harness's files, no clear gain, the write's peak 2.84
    # GB against 1.91 (results/duckdb.md, issue 62), so cut by default.
    cut_row_groups: bool = True
    # A write task decodes its batch's row groups together on pyarrow's threads (one
    # read_row_groups call; a range inside a row group streamed with use_threads). Off:
    # whole row groups one at a time (their columns on pyarrow's threads), a streamed
    # range on the task's own thread. On: 1.07x [1.04-1.09] faster on zstd files of
    # 128Ki-row groups, 1.00x on the harness's (results/duckdb.md, issue 62).
    decode_threads: bool = True


@dataclass(frozen=True)
class ReadConfig:
    # Merge operator per column; empty = the contest's operators.
    operators: dict[str, str] = field(default_factory=dict)
    # Refuse to read a snapshot whose commits are out of version order.
    require_merged: bool = True
    # Who writes the result: "arrow" (each merge task writes its bucket's file) or
    # "spark" (Spark's parquet writer over the merged DataFrame).
    writer: str = "arrow"
    # Result file codec: none, snappy, zstd, gzip, lz4.
    codec: str = "none"
    # Columns whose min/max statistics the result's files carry (read.writer arrow):
    # "all" (every column's, as Spark and DuckDB write), "key" (the key's: each file is
    # sorted by it, so a reader skips files and row groups by key), "none". "key" halved
    # the writer's time in a micro but did not win in a sitting (results/notes/duckdb.md).
    statistics: str = "all"
    # Memory budget of a merge task for one bucket: its files (each sorted by key) are
    # read this many bytes' worth of rows at a time and merged window by window
    # (contest/read/stream.py), so a task's memory no longer grows with its bucket.
    # 0 = read and merge each bucket whole (the earlier path). A task's process holds
    # about 2.4x the budget more than its fixed part (scale 10, 73 runs a bucket: 3.35
    # GB at 512 MiB, 4.56 GB at 1 GiB), so 512 MiB keeps the read's tree within 8 GB
    # (7.3 GB) for 8% more read time (results/notes/duckdb.md, "Fewer runs a bucket").
    merge_memory_bytes: int = 512 << 20
    # Bytes each open file reads at a time per column while a bucket merges as sorted
    # runs. 0 = the budget's share: merge_memory_bytes / (files x columns), between 1 MiB
    # and 8 MiB, so a bucket of many runs (scale 10: 60-150) no longer holds 8 MiB per
    # file and column outside the budget (contest/read/stream.py read_buffer_bytes).
    buffer_bytes: int = 0
    # Which engine merges a bucket's rows (window): numpy (dictionary codes and segmented
    # reductions), arrow (pyarrow's ordered hash group-by), duckdb (one thread), polars
    # (hash group-by): contest/read/merges.py, measured in results/native_merge.md.
    merge: str = "numpy"
    # Who reads: "harness" (this project's merge tasks) or "lakesoul-stock" (LakeSoul's
    # NativeIOReader and merge operators: contest/read/stock.py).
    engine: str = "harness"
    # LakeSoul's NativeIOReader knobs for read.engine = "lakesoul-stock" (its setBatchSize,
    # setThreadNum, setBufferSize; 0 = LakeSoul's own default): rows per Arrow batch,
    # threads of its Rust runtime, batches prefetched.
    stock_batch_rows: int = 8192
    stock_threads: int = 0
    stock_prefetch: int = 0


@dataclass(frozen=True)
class OracleConfig:
    # DuckDB's memory limit for the oracle and the checker: this share of the memory
    # available when they start (psutil; a cgroup limit when lower), so they fit the
    # machine at any scale and spill to the work folder beyond it.
    memory_fraction: float = 0.4
    # A fixed limit in bytes instead (0 = derive it from the machine).
    memory_bytes: int = 0
    # Key ranges aggregated one at a time (0 = as many as the data needs for the limit).
    parts: int = 0


@dataclass(frozen=True)
class ObjectStoreConfig:
    """An S3-compatible object store for `s3://bucket/prefix` tables, batches and results.
    Empty endpoint and keys: the embedded server's (`contest s3 up`) while it runs, else
    the AWS defaults of pyarrow and Hadoop's s3a."""

    # http://HOST:PORT of an S3-compatible server; "" = AWS itself.
    endpoint: str = ""
    # The store's region (AWS_REGION).
    region: str = "us-east-1"
    # The store's keys (AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY): never printed, written
    # to a record or a job's config file; they reach child processes by environment.
    access_key: str = field(default="", repr=False)
    secret_key: str = field(default="", repr=False)
    # Buckets addressed as ENDPOINT/bucket/key: what MinIO and S3Proxy serve.
    path_style: bool = True

    @property
    def configured(self) -> bool:
        return bool(self.endpoint or self.access_key)


@dataclass(frozen=True)
class ClusterConfig:
    """The Spark standalone cluster `contest cluster up` starts on this machine."""

    # Workers on this machine, and the cores each offers.
    workers: int = 2
    cores_per_worker: int = 1
    # Memory each worker offers its executors (an executor asks spark.executor.memory, 1g).
    memory: str = "1g"


@dataclass(frozen=True)
class PeerConfig:
    # The table format the write and read jobs use: "" = this project's LakeSoul tables;
    # a format of contest/peers/registry.py ("delta", "iceberg", "hudi", ...) = a peer
    # format through its own Spark library, so the harness measures what users would
    # pick instead on the same data and oracle. Each format checks its own options.
    format: str = ""
    # Maven coordinates loaded instead of the format's pinned set (contest/infra/packages.py);
    # "" = the pinned set. For trying another release of a format.
    packages: str = ""
    # Delta: MERGE marks replaced rows in deletion vectors instead of rewriting the files
    # that hold them (copy-on-write).
    deletion_vectors: bool = False
    # Iceberg: how MERGE changes rows: merge-on-read (position delete files) or
    # copy-on-write (rewrite the touched files).
    merge_mode: str = "merge-on-read"
    # Parquet codec of the table's data files; "" = the format's own default (Delta:
    # Spark's snappy; Iceberg 1.10: zstd; Hudi: gzip).
    codec: str = ""
    # Target size of data files in bytes (Iceberg write.target-file-size-bytes, Hudi
    # hoodie.parquet.max.file.size); 0 = the format's default. Delta's MERGE writes one
    # file per shuffle partition: its file size is set by spark.shuffle_partitions.
    target_file_bytes: int = 0
    # Collapsed batches up to this size are broadcast to the MERGE join instead of
    # shuffling the table (spark.sql.autoBroadcastJoinThreshold); 0 = Spark's 10 MB.
    broadcast_bytes: int = 0
    # Iceberg: how rows are distributed to writers before a write/MERGE (none, hash,
    # range); "" = Iceberg's default (hash: one more shuffle per MERGE).
    distribution: str = ""
    # Hudi: the index that finds the file group of a key: "" = Hudi's default (SIMPLE:
    # a join with the keys stored in the table), "BUCKET" (hash of uuid into a fixed
    # number of file groups, no lookup), "BLOOM", "RECORD_INDEX".
    hudi_index: str = ""
    # Hudi's bucket index: file groups (buckets); 0 = Hudi's default (4). Paimon's fixed
    # buckets. Iceberg: the table PARTITIONED BY bucket(N, uuid); 0 = unpartitioned.
    buckets: int = 0
    # Iceberg: the table's format version, 2 or 3 (3: merge-on-read writes deletion
    # vectors instead of position delete files); 0 = Iceberg 1.10's default, 2.
    format_version: int = 0
    # Further table properties, as the format names them (set when the table is created).
    table: dict[str, str] = field(default_factory=dict)
    # A native library's data file format, as it names it; "" = its default (lakesoul's
    # Python writer: vortex-compact, which no parquet reader reads).
    file_format: str = ""


# How a later batch picks the earlier keys it updates (docs/guides/workloads.md).
DISTRIBUTIONS = ("uniform", "zipf", "recent")


@dataclass(frozen=True)
class WorkloadConfig:
    """The shape of the generated data; the defaults are the contest's (byte-for-byte the
    data the generator wrote before workloads existed). Row counts are at scale 1."""

    # A label: the workload file's name, and part of the data cache's key.
    name: str = "contest"
    # Batch files: base-0 .. base-(batches - 1).
    batches: int = 11
    # Rows of base-0, and of each later batch.
    first_rows: int = 10_000_000
    batch_rows: int = 2_000_000
    # Share of a later batch's rows that update keys of earlier batches (the rest are new).
    update_share: float = 0.5
    # Which earlier keys the updates hit: "uniform" (any), "zipf" (a few hot keys again and
    # again, P(k-th key) ~ 1/k^zipf_exponent), "recent" (keys of the last recent_batches).
    distribution: str = "uniform"
    zipf_exponent: float = 1.2
    recent_batches: int = 1
    # Share of a batch's rows that repeat a key already in the same batch.
    repeat_share: float = 0.0
    # Share of SQL NULLs in every non-key column, and of names that are the string "null".
    null_share: float = 0.0
    null_string_share: float = 0.15
    # Extra payload columns and their merge operators, each column of its operator's type
    # (contest/data/operators.py default_type) unless `types` gives another.
    columns: dict[str, str] = field(default_factory=dict)
    # Whose payload columns: "contest" (the contest's seven, then `columns`) or "own" (a
    # user's data, `contest dataset describe`: exactly `columns`, no contest column).
    payload: str = "contest"
    # A column's type when it is not its operator's default, and the key columns' types
    # (int32, int64, float64, string, binary), e.g. {id = "int64", price = "float64"}.
    types: dict[str, str] = field(default_factory=dict)
    # Schema evolution: an extra column first in batch N (NULL before), and an int64
    # extra column written as int32 before batch N (widened from N on).
    added: dict[str, int] = field(default_factory=dict)
    widened: dict[str, int] = field(default_factory=dict)
    # How the files are written, the same rows either way: "contest" (uncompressed, one
    # row group up to 10M rows, the low-cardinality columns dictionary-encoded, no
    # statistics: the contest's files), "pyarrow-defaults" (what pq.write_table does
    # unasked: snappy, dictionary tried on every column, row groups of 1Mi rows,
    # statistics) or "zstd-128ki" (zstd, row groups of 128Ki rows, as Spark and most
    # writers leave them, dictionary tried on every column, statistics): layouts the
    # harness's readers were not fitted to.
    file_writer: str = "contest"
    # Change data: the string column that says each row's kind (insert, update or
    # delete), so a batch can remove keys as a database's change stream does; "" = no
    # such column, every row an upsert (the contest's data). Not part of the result.
    op_column: str = ""
    # How the op column spells the kinds: "lakesoul" (insert, update, delete: LakeSoul's
    # CDC column) or "debezium" (c, r, u, d); the spellings are contest/data/changes.py's.
    op_values: str = "lakesoul"
    # The primary key: one or two columns (string, int32, int64 or 16-byte binary), in
    # the order the bucket hash reads them, as LakeSoul's hash partitioning does.
    key: list[str] = field(default_factory=lambda: ["uuid"])
    # Generated change data (contest/data/generator.py, with an op column): the share of a
    # later batch's rows that delete an earlier key, and the share that insert again a key
    # an earlier batch deleted.
    delete_share: float = 0.0
    reinsert_share: float = 0.0
    # Generated multi-stream data: the payload columns dealt to this many streams sharing
    # the key, each batch one stream's (the key and that stream's columns); 0 = one stream.
    streams: int = 0
    # A data folder's files made batches: this many consecutive files (natural name
    # order, or the order column's) are one batch, one commit (contest/data/staging.py).
    files_per_batch: int = 1
    # A log position or timestamp column (Debezium's source.lsn or ts_ms): the files
    # ordered by their ranges of it (overlapping ranges refused) and each batch's rows by
    # it; "" = natural name order, rows as the files hold them.
    order_column: str = ""


STREAM_TRIGGERS = ("processing-time", "available-now")


@dataclass(frozen=True)
class StreamConfig:
    """Streaming upserts (`contest stream feed|run`): a Structured Streaming query over a
    folder of contest-shaped parquet files, each micro-batch upserted exactly once."""

    # The folder the feed drops files into and the query reads; "" = <work_dir>/stream/incoming.
    source: str = ""
    # Spark's checkpoint of the query; "" = <work_dir>/stream/checkpoints/<table name>.
    checkpoint: str = ""
    # "processing-time": a micro-batch every `interval_s`; "available-now": what the
    # folder holds, then stop.
    trigger: str = "processing-time"
    interval_s: float = 1.0
    # Files a micro-batch takes at most (Spark's maxFilesPerTrigger); 0 = all new ones.
    max_files_per_trigger: int = 0
    # processing-time: stop after this many seconds without a new file (0 = never).
    idle_stop_s: float = 0.0
    # processing-time: stop after this many seconds in all (0 = never).
    timeout_s: float = 0.0
    # A peer format's sink: "" = its default, "own" = the format's own documented sink,
    # "foreach-batch" = the harness's (contest/peers/<format>/format.py, `stream_sinks`); the
    # LakeSoul stream has the harness's only.
    sink: str = ""
    # Fault injection: seconds the sink waits after a micro-batch's commit, before Spark
    # records the batch in its checkpoint (the window a crash turns into a replay).
    pause_after_commit_s: float = 0.0
    # The feed: rows per file, seconds between files, files in all.
    feed_rows: int = 1000
    feed_interval_s: float = 1.0
    feed_files: int = 10


@dataclass(frozen=True)
class Config:
    # Servers' data, passwords, logs (relative: to the folder the command runs in).
    state_dir: str = ".state"
    # Generated data, tables, results of evaluations.
    work_dir: str = ".work"
    # Benchmark records, tables and charts.
    results_dir: str = "results"
    pg: PgConfig = field(default_factory=PgConfig)
    spark: SparkConfig = field(default_factory=SparkConfig)
    table: TableConfig = field(default_factory=TableConfig)
    write: WriteConfig = field(default_factory=WriteConfig)
    read: ReadConfig = field(default_factory=ReadConfig)
    oracle: OracleConfig = field(default_factory=OracleConfig)
    # Where `contest evaluate` keeps its tables: "" = <work_dir>/eval/tables; an
    # object-store URI (s3://bucket/prefix) puts the timed jobs' tables there.
    tables_dir: str = ""
    # Where `contest evaluate` has its read write the result: "" = <work_dir>/eval/result/ccf
    # (removed before each run); a folder or s3://bucket/prefix given here is replaced
    # only when it holds a previous result (contest/read/output.py).
    result_dir: str = ""
    # The window (seconds) over which `contest evaluate` samples the machine's CPU steal
    # and busy share just before and just after each timed job (untimed; the tests take
    # a short one: each evaluation waited 2 s on it).
    load_window_s: float = 0.5
    # A run's time cap in seconds (its timed jobs together; 0 = none): a job still
    # running when its run passes it is stopped, its whole process tree killed, and the
    # run recorded as timed out (failed in that job's phase), not left out of a sitting.
    run_cap_s: float = 0.0
    s3: ObjectStoreConfig = field(default_factory=ObjectStoreConfig)
    cluster: ClusterConfig = field(default_factory=ClusterConfig)
    peer: PeerConfig = field(default_factory=PeerConfig)
    workload: WorkloadConfig = field(default_factory=WorkloadConfig)
    stream: StreamConfig = field(default_factory=StreamConfig)

    @property
    def state_path(self) -> Path:
        return Path(self.state_dir)

    @property
    def work_path(self) -> Path:
        return Path(self.work_dir)

    @property
    def results_path(self) -> Path:
        return Path(self.results_dir)
