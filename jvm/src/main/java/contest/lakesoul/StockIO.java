package contest.lakesoul;

import com.dmetasoul.lakesoul.LakeSoulArrowReader;
import com.dmetasoul.lakesoul.lakesoul.io.NativeIOReader;
import com.dmetasoul.lakesoul.lakesoul.io.NativeIOWriter;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.NoSuchElementException;
import org.apache.arrow.vector.BigIntVector;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.IntVector;
import org.apache.arrow.vector.VarCharVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.types.pojo.FieldType;
import org.apache.arrow.vector.types.pojo.Schema;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.Path;
import org.apache.spark.api.java.JavaRDD;
import org.apache.spark.api.java.JavaSparkContext;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.vectorized.ArrowColumnVector;
import org.apache.spark.sql.vectorized.ColumnVector;
import org.apache.spark.sql.vectorized.ColumnarBatch;

/**
 * LakeSoul's own native IO inside Spark tasks, for flat tables of string, int64 and int32 columns
 * (columns are given as "name:string", "name:long" or "name:integer", in table order).
 *
 * <p>write: each task hands its rows to LakeSoul's NativeIOWriter (primary key, hash buckets),
 * which sorts them by key and writes one file per bucket; the driver commits them with
 * DBManager. read: one task per hash bucket merges the bucket's files, in the order given
 * (the apply order), with LakeSoul's NativeIOReader and merge operators, its Arrow batches read
 * by Spark in place (ArrowColumnVector), as LakeSoul's Spark connector hands them over.
 */
public final class StockIO {
  private StockIO() {}

  public static StructType sparkSchema(List<String> columns) {
    List<StructField> fields = new ArrayList<>();
    for (String c : columns) {
      String t = type(c);
      fields.add(
          DataTypes.createStructField(
              name(c),
              t.equals("long")
                  ? DataTypes.LongType
                  : t.equals("integer") ? DataTypes.IntegerType : DataTypes.StringType,
              true));
    }
    return DataTypes.createStructType(fields);
  }

  static Schema arrowSchema(List<String> columns) {
    List<Field> fields = new ArrayList<>();
    for (String c : columns) {
      String type = type(c);
      ArrowType t =
          type.equals("long")
              ? new ArrowType.Int(64, true)
              : type.equals("integer") ? new ArrowType.Int(32, true) : ArrowType.Utf8.INSTANCE;
      fields.add(new Field(name(c), FieldType.nullable(t), null));
    }
    return new Schema(fields);
  }

  static String name(String column) {
    return column.substring(0, column.lastIndexOf(':'));
  }

  static String type(String column) {
    String type = column.substring(column.lastIndexOf(':') + 1);
    if (!type.equals("long") && !type.equals("string") && !type.equals("integer")) {
      throw new IllegalArgumentException("column type must be long, integer or string: " + column);
    }
    return type;
  }

  /** Writes each partition of df with NativeIOWriter; returns "path\tbytes" per file. */
  public static List<String> write(
      Dataset<Row> df,
      List<String> columns,
      String primaryKey,
      int hashBuckets,
      String tablePath,
      int batchRows) {
    final List<String> cols = new ArrayList<>(columns);
    return df.toJavaRDD()
        .mapPartitions(
            rows -> {
              List<String> out = new ArrayList<>();
              if (!rows.hasNext()) return out.iterator();
              Schema schema = arrowSchema(cols);
              try (NativeIOWriter writer = new NativeIOWriter(schema)) {
                writer.withPrefix(tablePath);
                writer.setPrimaryKeys(Collections.singletonList(primaryKey));
                writer.setHashBucketNum(hashBuckets);
                writer.useDynamicPartition(true);
                writer.initializeWriter();
                // Batches must come from the writer's allocator (its C-data export's root).
                try (VectorSchemaRoot root = VectorSchemaRoot.create(schema, writer.getAllocator())) {
                  root.allocateNew();
                  int n = 0;
                  while (rows.hasNext()) {
                    Row r = rows.next();
                    for (int k = 0; k < cols.size(); k++) {
                      FieldVector v = root.getVector(k);
                      Object o = r.get(k);
                      if (o == null) v.setNull(n);
                      else if (v instanceof BigIntVector)
                        ((BigIntVector) v).setSafe(n, ((Number) o).longValue());
                      else if (v instanceof IntVector)
                        ((IntVector) v).setSafe(n, ((Number) o).intValue());
                      else ((VarCharVector) v).setSafe(n, o.toString().getBytes(StandardCharsets.UTF_8));
                    }
                    n++;
                    if (n == batchRows || !rows.hasNext()) {
                      root.setRowCount(n);
                      writer.write(root);
                      root.allocateNew(); // fresh buffers: the native side may hold the old ones
                      n = 0;
                    }
                  }
                }
                HashMap<String, List<String>> files = writer.flush();
                Configuration conf = new Configuration();
                if (files != null) {
                  for (List<String> paths : files.values()) {
                    for (String f : paths) {
                      Path p = new Path(f);
                      long size = p.getFileSystem(conf).getFileStatus(p).getLen();
                      out.add(f + "\t" + size);
                    }
                  }
                }
              }
              return out.iterator();
            })
        .collect();
  }

  /**
   * One task per bucket: the bucket's files merged by key with LakeSoul's operators, handed to
   * Spark as LakeSoul's Spark connector hands them (NativeVectorizedReader): each Arrow batch
   * wrapped in Spark's ArrowColumnVector, its rows read in place, no per-value Java object.
   * batchRows, threads and prefetch are NativeIOReader's setBatchSize, setThreadNum and
   * setBufferSize (0 = LakeSoul's default). A file written before a column existed reads it
   * as NULL.
   */
  public static Dataset<Row> read(
      SparkSession spark,
      List<List<String>> bucketFiles,
      List<String> columns,
      String primaryKey,
      Map<String, String> mergeOps,
      int batchRows,
      int threads,
      int prefetch) {
    JavaSparkContext jsc = JavaSparkContext.fromSparkContext(spark.sparkContext());
    final List<String> cols = new ArrayList<>(columns);
    final Map<String, String> ops = new HashMap<>(mergeOps);
    JavaRDD<List<String>> tasks = jsc.parallelize(bucketFiles, Math.max(1, bucketFiles.size()));
    JavaRDD<InternalRow> rows =
        tasks.mapPartitions(
            it -> new MergedRows(it, cols, primaryKey, ops, batchRows, threads, prefetch));
    // Rows that are views of Arrow vectors, as a file scan's: Spark's internal entry point
    // (createDataFrame would convert every value to a Java object and back).
    return spark.internalCreateDataFrame(rows.rdd(), sparkSchema(cols), false);
  }

  /**
   * Rows of each bucket's NativeIOReader in turn, one Arrow batch in memory at a time. A row is
   * a view of the current batch (Spark copies it into its own row before asking for the next).
   */
  static final class MergedRows implements Iterator<InternalRow> {
    private final Iterator<List<String>> buckets;
    private final List<String> cols;
    private final String primaryKey;
    private final Map<String, String> ops;
    private final int batchRows;
    private final int threads;
    private final int prefetch;
    private LakeSoulArrowReader reader;
    private ColumnarBatch batch;
    private Iterator<InternalRow> batchRowsIt;

    MergedRows(
        Iterator<List<String>> buckets,
        List<String> cols,
        String primaryKey,
        Map<String, String> ops,
        int batchRows,
        int threads,
        int prefetch) {
      this.buckets = buckets;
      this.cols = cols;
      this.primaryKey = primaryKey;
      this.ops = ops;
      this.batchRows = batchRows;
      this.threads = threads;
      this.prefetch = prefetch;
    }

    private void open(List<String> files) {
      NativeIOReader native_ = new NativeIOReader();
      for (String f : files) native_.addFile(f);
      native_.setPrimaryKeys(Collections.singletonList(primaryKey));
      native_.setSchema(arrowSchema(cols));
      native_.addMergeOps(ops);
      if (batchRows > 0) native_.setBatchSize(batchRows);
      if (threads > 0) native_.setThreadNum(threads);
      if (prefetch > 0) native_.setBufferSize(prefetch);
      try {
        native_.initializeReader();
      } catch (java.io.IOException e) {
        throw new IllegalStateException("LakeSoul's native reader did not start on " + files, e);
      }
      reader = new LakeSoulArrowReader(native_, 600_000);
    }

    /** The batch as Spark columns, in the given column order (not the root's). */
    static ColumnarBatch columnar(VectorSchemaRoot root, List<String> cols) {
      ColumnVector[] vectors = new ColumnVector[cols.size()];
      for (int k = 0; k < vectors.length; k++) {
        vectors[k] = new ArrowColumnVector(root.getVector(name(cols.get(k))));
      }
      return new ColumnarBatch(vectors, root.getRowCount());
    }

    @Override
    public boolean hasNext() {
      while (batchRowsIt == null || !batchRowsIt.hasNext()) {
        batchRowsIt = null;
        batch = null; // the reader's next hasNext() refills the one root it returns
        if (reader != null && reader.hasNext()) {
          batch = columnar(reader.next(), cols);
          batchRowsIt = batch.rowIterator();
          continue;
        }
        if (reader != null) {
          try {
            reader.close();
          } catch (Exception e) {
            throw new IllegalStateException("closing LakeSoul's native reader failed", e);
          }
          reader = null;
        }
        if (!buckets.hasNext()) return false;
        open(buckets.next());
      }
      return true;
    }

    @Override
    public InternalRow next() {
      if (!hasNext()) throw new NoSuchElementException();
      return batchRowsIt.next();
    }
  }
}
