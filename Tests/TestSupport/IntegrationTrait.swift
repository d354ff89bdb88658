import Testing

/// Marks a test that needs a PostgreSQL server: `@Test("…", integration)`.
///
/// Without `DATABASE_URL` the test is skipped, except under `CI=true`, where it runs and fails on
/// the missing server instead of passing silently.
public let integration: ConditionTrait = .enabled(
    if: TestDatabase.isAvailable || TestDatabase.isRequired,
    "set DATABASE_URL to run integration tests"
)
