/// PostgreSQL's fixed limits that a model can run into (compiled into the server, not settings).
public enum StoreLimits {
    /// Columns of one table (MaxHeapAttributeNumber), the store's system columns included.
    public static let maximumColumns = 1600
    /// Columns of one index or unique constraint (INDEX_MAX_KEYS).
    public static let maximumIndexColumns = 32
}
