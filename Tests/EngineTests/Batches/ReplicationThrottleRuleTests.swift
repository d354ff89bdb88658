import Testing
@testable import Engine

/// `--max-replica-lag`'s rule: the next batch waits once a standby is over half the limit, so a
/// batch started just under it cannot add its own replay past the limit (the throttled
/// `make bench-replication` run went 0.08 s over a 0.2 s limit with the full limit as the rule).
/// The waits themselves are proven on a real standby (CLITests/ThrottleTests).
@Suite struct ReplicationThrottleRuleTests {
    @Test(arguments: [
        (0.0, 0.2, false), (0.09, 0.2, false), (0.1, 0.2, false), (0.11, 0.2, true), (0.19, 0.2, true), (0.28, 0.2, true),
        (4.9, 10.0, false), (5.1, 10.0, true), (12.4, 10.0, true),
    ])
    func aBatchWaitsOverHalfTheLimit(lag: Double, limit: Double, waits: Bool) {
        #expect(ReplicationThrottle.holdsBack(lag: lag, limit: limit) == waits)
    }
}
