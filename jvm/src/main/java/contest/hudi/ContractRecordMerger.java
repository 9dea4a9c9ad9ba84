package contest.hudi;

import java.io.IOException;

import org.apache.avro.Schema;
import org.apache.hudi.HoodieSparkRecordMerger;
import org.apache.hudi.common.config.TypedProperties;
import org.apache.hudi.common.model.HoodieRecord;
import org.apache.hudi.common.model.HoodieSparkRecord;
import org.apache.hudi.common.util.Option;
import org.apache.hudi.common.util.collection.Pair;
import org.apache.spark.sql.HoodieInternalRowUtils;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.catalyst.expressions.GenericInternalRow;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.unsafe.types.UTF8String;

/**
 * The contest's merge contract as a Hudi record merger (Hudi 1.0's recommended API for
 * custom merge semantics; payload classes are its older, Avro-only path): of two
 * versions of a key, `requests` is their NULL-aware sum (NULL only when both are NULL),
 * `name` the later one unless it is NULL or the string "null", every other column the
 * later non-NULL value. "Later" is the larger ordering (precombine) value, the batch's
 * version; on a tie, the newer record. The operation is associative, as Hudi asks of
 * a merger: f(a, f(b, c)) = f(f(a, b), c).
 *
 * <p>Registered with hoodie.write.record.merge.mode=CUSTOM,
 * hoodie.write.record.merge.strategy.id={@link #STRATEGY_ID} and
 * hoodie.write.record.merge.custom.implementation.classes=this class. It works on Spark's
 * own rows (HoodieRecordType.SPARK): no conversion to Avro on write, compaction or read.
 */
public class ContractRecordMerger extends HoodieSparkRecordMerger {

  /** The merge strategy this merger implements (persisted in the table's config). */
  public static final String STRATEGY_ID = "6f0c3a4e-2b1d-4c55-9a57-3c0e1f8a7b21";

  private static final String KEY = "uuid";
  private static final String SUMMED = "requests";
  private static final String NAME = "name";
  private static final UTF8String NULL_STRING = UTF8String.fromString("null");

  @Override
  public String getMergingStrategy() {
    return STRATEGY_ID;
  }

  @Override
  public Option<Pair<HoodieRecord, Schema>> merge(
      HoodieRecord older, Schema oldSchema, HoodieRecord newer, Schema newSchema,
      TypedProperties props) throws IOException {
    if (isDelete(newer, newSchema, props)) {
      return Option.empty();
    }
    if (isDelete(older, oldSchema, props)) {
      return Option.of(Pair.of(newer, newSchema));
    }
    // The later of the two by ordering value; the newer one on a tie.
    @SuppressWarnings("unchecked")
    Comparable<Object> oldOrder = (Comparable<Object>) older.getOrderingValue(oldSchema, props);
    Comparable<?> newOrder = newer.getOrderingValue(newSchema, props);
    boolean swap = oldOrder != null && newOrder != null && oldOrder.compareTo(newOrder) > 0;
    HoodieRecord early = swap ? newer : older;
    Schema earlySchema = swap ? newSchema : oldSchema;
    HoodieRecord late = swap ? older : newer;
    Schema lateSchema = swap ? oldSchema : newSchema;

    StructType earlyType = HoodieInternalRowUtils.getCachedSchema(earlySchema);
    StructType lateType = HoodieInternalRowUtils.getCachedSchema(lateSchema);
    InternalRow e = (InternalRow) early.getData();
    InternalRow l = (InternalRow) late.getData();
    StructField[] fields = lateType.fields();
    Object[] values = new Object[fields.length];
    for (int i = 0; i < fields.length; i++) {
      String field = fields[i].name();
      DataType type = fields[i].dataType();
      Object lateValue = l.isNullAt(i) ? null : l.get(i, type);
      int j = earlyIndex(earlyType, field);
      Object earlyValue = j < 0 || e.isNullAt(j) ? null : e.get(j, type);
      values[i] = mergeField(field, earlyValue, lateValue);
    }
    InternalRow merged = HoodieInternalRowUtils.getCachedUnsafeProjection(lateType, lateType)
        .apply(new GenericInternalRow(values)).copy();
    HoodieRecord out = new HoodieSparkRecord(late.getKey(), merged, lateType, false);
    return Option.of(Pair.of(out, lateSchema));
  }

  /** One column of the merged row from its earlier and later values (either may be NULL). */
  static Object mergeField(String field, Object early, Object late) {
    if (SUMMED.equals(field)) {
      if (early == null) {
        return late;
      }
      if (late == null) {
        return early;
      }
      return (Long) early + (Long) late;
    }
    if (KEY.equals(field)) {
      return late != null ? late : early;
    }
    if (NAME.equals(field) && NULL_STRING.equals(late)) {
      return early;
    }
    return late != null ? late : early;
  }

  private static int earlyIndex(StructType type, String field) {
    scala.Option<Object> index = type.getFieldIndex(field);
    return index.isDefined() ? (Integer) index.get() : -1;
  }

  private static boolean isDelete(HoodieRecord record, Schema schema, TypedProperties props)
      throws IOException {
    if (record instanceof HoodieSparkRecord) {
      return ((HoodieSparkRecord) record).isDelete(schema, props);
    }
    return record.getData() == null;
  }
}
