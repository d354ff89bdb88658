import PostgresClient
import SQLBuilding
import Testing
import TestSupport

@Suite("Advisory locks")
struct AdvisoryLockTests {
    @Test("lock keys are FNV-1a 64 of the UTF-8 name, pinned so releases agree")
    func lockKeysAreStable() {
        #expect(PostgresConnection.advisoryLockKey(for: "") == Int64(bitPattern: 0xcbf2_9ce4_8422_2325))
        #expect(PostgresConnection.advisoryLockKey(for: "a") == Int64(bitPattern: 0xaf63_dc4c_8601_ec8c))
        #expect(PostgresConnection.advisoryLockKey(for: "foobar") == Int64(bitPattern: 0x8594_4171_f739_67e8))
    }

    @Test("a second session cannot take a session lock while the first holds it", integration)
    func sessionLockExcludesOthers() throws {
        try TestDatabase.withFreshDatabase { url in
            let first = try PostgresConnection(url: url)
            let second = try PostgresConnection(url: url)
            let key = PostgresConnection.advisoryLockKey(for: "orchestrator.migrate")
            try first.advisoryLock(key: key)
            #expect(try !second.tryAdvisoryLock(key: key))
            #expect(try first.advisoryUnlock(key: key))
            #expect(try second.tryAdvisoryLock(key: key))
            #expect(try second.advisoryUnlock(key: key))
            #expect(try !second.advisoryUnlock(key: key))
        }
    }

    @Test("a transaction lock is held until the transaction ends", integration)
    func transactionLockEndsWithTransaction() throws {
        try TestDatabase.withFreshDatabase { url in
            let first = try PostgresConnection(url: url)
            let second = try PostgresConnection(url: url)
            let key = PostgresConnection.advisoryLockKey(for: "orchestrator.apply")
            try first.transaction {
                try first.advisoryTransactionLock(key: key)
                #expect(try !second.tryAdvisoryLock(key: key))
            }
            #expect(try second.tryAdvisoryLock(key: key))
        }
    }
}
