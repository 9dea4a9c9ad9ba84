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
import org.apache.spark.sql.RowFactory;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;

/**
 * LakeSoul's own native IO inside Spark tasks, for flat tables of string and int64 columns
 * (columns are given as "name:string" or "name:long", in table order).
 *
 * <p>write: each task hands its rows to LakeSoul's NativeIOWriter (primary key, hash buckets),
 * which sorts them by key and writes one file per bucket; the driver commits them with
 * DBManager. read: one task per hash bucket merges the bucket's files, in the order given
 * (the apply order), with LakeSoul's NativeIOReader and merge operators, streaming its rows.
 */
public final class StockIO {
  private StockIO() {}

  public static StructType sparkSchema(List<String> columns) {
    List<StructField> fields = new ArrayList<>();
    for (String c : columns) {
      fields.add(
          DataTypes.createStructField(
              name(c), isLong(c) ? DataTypes.LongType : DataTypes.StringType, true));
    }
    return DataTypes.createStructType(fields);
  }

  static Schema arrowSchema(List<String> columns) {
    List<Field> fields = new ArrayList<>();
    for (String c : columns) {
      ArrowType t = isLong(c) ? new ArrowType.Int(64, true) : ArrowType.Utf8.INSTANCE;
      fields.add(new Field(name(c), FieldType.nullable(t), null));
    }
    return new Schema(fields);
  }

  static String name(String column) {
    return column.substring(0, column.lastIndexOf(':'));
  }

  static boolean isLong(String column) {
    String type = column.substring(column.lastIndexOf(':') + 1);
    if (!type.equals("long") && !type.equals("string")) {
      throw new IllegalArgumentException("column type must be long or string: " + column);
    }
    return type.equals("long");
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

  /** One task per bucket: the bucket's files merged by key with LakeSoul's operators. */
  public static Dataset<Row> read(
      SparkSession spark,
      List<List<String>> bucketFiles,
      List<String> columns,
      String primaryKey,
      Map<String, String> mergeOps,
      int batchRows) {
    JavaSparkContext jsc = JavaSparkContext.fromSparkContext(spark.sparkContext());
    final List<String> cols = new ArrayList<>(columns);
    final Map<String, String> ops = new HashMap<>(mergeOps);
    JavaRDD<List<String>> tasks = jsc.parallelize(bucketFiles, Math.max(1, bucketFiles.size()));
    JavaRDD<Row> rows =
        tasks.mapPartitions(it -> new MergedRows(it, cols, primaryKey, ops, batchRows));
    return spark.createDataFrame(rows, sparkSchema(cols));
  }

  /** Rows of each bucket's NativeIOReader in turn, one Arrow batch in memory at a time. */
  static final class MergedRows implements Iterator<Row> {
    private final Iterator<List<String>> buckets;
    private final List<String> cols;
    private final String primaryKey;
    private final Map<String, String> ops;
    private final int batchRows;
    private LakeSoulArrowReader reader;
    private VectorSchemaRoot root;
    private List<FieldVector> vectors;
    private int row;

    MergedRows(
        Iterator<List<String>> buckets,
        List<String> cols,
        String primaryKey,
        Map<String, String> ops,
        int batchRows) {
      this.buckets = buckets;
      this.cols = cols;
      this.primaryKey = primaryKey;
      this.ops = ops;
      this.batchRows = batchRows;
    }

    private void open(List<String> files) {
      NativeIOReader native_ = new NativeIOReader();
      for (String f : files) native_.addFile(f);
      native_.setPrimaryKeys(Collections.singletonList(primaryKey));
      native_.setSchema(arrowSchema(cols));
      native_.addMergeOps(ops);
      native_.setBatchSize(batchRows);
      try {
        native_.initializeReader();
      } catch (java.io.IOException e) {
        throw new IllegalStateException("LakeSoul's native reader did not start on " + files, e);
      }
      reader = new LakeSoulArrowReader(native_, 600_000);
    }

    @Override
    public boolean hasNext() {
      while (root == null || row >= root.getRowCount()) {
        root = null;
        if (reader != null && reader.hasNext()) {
          root = reader.next();
          vectors = new ArrayList<>();
          for (String c : cols) vectors.add(root.getVector(name(c)));
          row = 0;
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
    public Row next() {
      if (!hasNext()) throw new NoSuchElementException();
      Object[] values = new Object[vectors.size()];
      for (int k = 0; k < values.length; k++) {
        FieldVector v = vectors.get(k);
        if (v.isNull(row)) values[k] = null;
        else if (v instanceof BigIntVector) values[k] = ((BigIntVector) v).get(row);
        else values[k] = new String(((VarCharVector) v).get(row), StandardCharsets.UTF_8);
      }
      row++;
      return RowFactory.create(values);
    }
  }
}
