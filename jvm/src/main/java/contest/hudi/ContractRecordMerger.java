package contest.hudi;

import java.io.IOException;
import java.util.HashMap;
import java.util.Map;

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
import org.apache.spark.sql.types.Decimal;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.unsafe.types.UTF8String;

/**
 * Per-column merge operators as a Hudi record merger (Hudi 1.0's recommended API for
 * custom merge semantics; payload classes are its older, Avro-only path). The column-to-
 * rule map comes from the props Hudi hands the merger, {@link #OPERATORS_KEY} =
 * "col:rule;col:rule" (the harness's operator registry, contest/data/operators.py, writes
 * it): of two versions of a key, each column is merged by its rule (see {@link
 * #mergeField}); a column without one keeps the later non-NULL value. "Later" is the
 * larger ordering (precombine) value, the batch's version; on a tie, the newer record.
 * Every rule is associative, as Hudi asks of a merger: f(a, f(b, c)) = f(f(a, b), c).
 * Without the map the merger refuses to merge (it would silently apply another rule).
 *
 * <p>Registered with hoodie.write.record.merge.mode=CUSTOM,
 * hoodie.write.record.merge.strategy.id={@link #STRATEGY_ID} and
 * hoodie.write.record.merge.custom.implementation.classes=this class. It works on Spark's
 * own rows (HoodieRecordType.SPARK): no conversion to Avro on write, compaction or read.
 */
public class ContractRecordMerger extends HoodieSparkRecordMerger {

  /** The merge strategy this merger implements (persisted in the table's config). */
  public static final String STRATEGY_ID = "6f0c3a4e-2b1d-4c55-9a57-3c0e1f8a7b21";

  /** The props key holding the column-to-rule map. */
  public static final String OPERATORS_KEY = "hoodie.contest.merge.operators";

  /**
   * Change data's row kinds (contest/peers/hudi/changes.py): a record whose {@link #DELETED}
   * field is true is a tombstone (the key deleted), one whose {@link #AFRESH} field is true
   * starts the key afresh (it follows a delete). Both are resets: merged after anything,
   * they are the result; a record merged after a tombstone is the result, marked afresh so
   * that a merge with still earlier records (a base file's) keeps it. The tombstone stays a
   * record (Hudi's own delete handling is not involved) and the reader leaves it out. A
   * table without the fields has neither.
   */
  public static final String DELETED = "_contest_deleted";

  public static final String AFRESH = "_contest_afresh";

  private static final String KEY = "uuid";
  private static final UTF8String NULL_STRING = UTF8String.fromString("null");
  private static final UTF8String COMMA = UTF8String.fromString(",");

  /** The parsed map of the last spec seen (the spec rarely changes within a JVM). */
  private static volatile String cachedSpec;
  private static volatile Map<String, String> cachedRules;

  /** The column-to-rule map of "col:rule;col:rule". */
  static Map<String, String> rules(String spec) {
    if (spec.equals(cachedSpec)) {
      return cachedRules;
    }
    Map<String, String> out = new HashMap<>();
    for (String part : spec.split(";")) {
      if (part.isEmpty()) {
        continue;
      }
      int at = part.lastIndexOf(':');
      if (at <= 0) {
        throw new IllegalArgumentException(OPERATORS_KEY + ": bad entry '" + part + "'");
      }
      out.put(part.substring(0, at), part.substring(at + 1));
    }
    cachedRules = out;
    cachedSpec = spec;
    return out;
  }

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
    String spec = props.getString(OPERATORS_KEY, null);
    if (spec == null) {
      throw new IOException(
          "ContractRecordMerger: no " + OPERATORS_KEY + " in the merge's properties");
    }
    Map<String, String> rules = rules(spec);
    if (flag(l, lateType, DELETED) || flag(l, lateType, AFRESH)) {
      return Option.of(Pair.of(late, lateSchema));
    }
    boolean afterDelete = flag(e, earlyType, DELETED);
    StructField[] fields = lateType.fields();
    Object[] values = new Object[fields.length];
    for (int i = 0; i < fields.length; i++) {
      String field = fields[i].name();
      DataType type = fields[i].dataType();
      Object lateValue = l.isNullAt(i) ? null : l.get(i, type);
      // The earlier row may be of an older schema (schema evolution on write): a field
      // it lacks is NULL, one written narrower (int before a widening) is read with its
      // own type and widened to the later row's.
      int j = earlyIndex(earlyType, field);
      Object earlyValue =
          j < 0 || e.isNullAt(j) ? null : widen(e.get(j, earlyType.fields()[j].dataType()), type);
      if (AFRESH.equals(field)) {
        values[i] = afterDelete ? Boolean.TRUE : earlyValue; // started afresh, or as before
      } else if (afterDelete || DELETED.equals(field)) {
        values[i] = lateValue;
      } else {
        String rule = KEY.equals(field) ? "last_non_null" : rules.get(field);
        values[i] = mergeField(rule == null ? "last_non_null" : rule, earlyValue, lateValue);
      }
    }
    InternalRow merged = HoodieInternalRowUtils.getCachedUnsafeProjection(lateType, lateType)
        .apply(new GenericInternalRow(values)).copy();
    HoodieRecord out = new HoodieSparkRecord(late.getKey(), merged, lateType, false);
    return Option.of(Pair.of(out, lateSchema));
  }

  /**
   * One column of the merged row from its earlier and later values (either may be NULL,
   * itself the merge of earlier rows), by the operator registry's Hudi rule:
   * sum / product (of the non-NULL values), last (the later value, NULL included),
   * last_non_null, last_non_null_nor_null_string (the string "null" counts as NULL),
   * first_non_null, max / min (of the non-NULL values), join_comma (the non-NULL values
   * joined by ","). Any other rule is an error.
   */
  @SuppressWarnings({"unchecked", "rawtypes"})
  static Object mergeField(String rule, Object early, Object late) {
    switch (rule) {
      case "last":
        return late;
      case "last_non_null":
        return late != null ? late : early;
      case "last_non_null_nor_null_string":
        return late != null && !NULL_STRING.equals(late) ? late : early;
      case "first_non_null":
        return early != null ? early : late;
      default:
        break;
    }
    if (early == null) {
      return late;
    }
    if (late == null) {
      return early;
    }
    switch (rule) {
      case "sum":
        if (early instanceof Double) {
          return (Double) early + (Double) late;
        }
        if (early instanceof Integer && late instanceof Integer) {
          return (Integer) early + (Integer) late; // an int column before its widening
        }
        if (early instanceof Decimal) { // a user's decimal: exact, in its scale
          return ((Decimal) early).$plus((Decimal) late);
        }
        return (Long) early + (Long) late;
      case "product":
        return (Long) early * (Long) late;
      case "max":
        return ((Comparable) early).compareTo(late) >= 0 ? early : late;
      case "min":
        return ((Comparable) early).compareTo(late) <= 0 ? early : late;
      case "join_comma":
        return UTF8String.concat((UTF8String) early, COMMA, (UTF8String) late);
      default:
        throw new IllegalArgumentException("ContractRecordMerger: unknown rule " + rule);
    }
  }

  /** An integer value as the (wider) type of the later row's field; anything else as is. */
  static Object widen(Object value, DataType type) {
    if (value instanceof Integer && type instanceof org.apache.spark.sql.types.LongType) {
      return ((Integer) value).longValue();
    }
    return value;
  }

  /** Whether a row's boolean field is true (false when the row's schema lacks it). */
  private static boolean flag(InternalRow row, StructType type, String field) {
    int i = earlyIndex(type, field);
    return i >= 0 && !row.isNullAt(i) && row.getBoolean(i);
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
