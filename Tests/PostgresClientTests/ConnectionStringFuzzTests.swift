import Foundation
@testable import PostgresClient
import Testing

/// Issue 9.1: thousands of malformed URLs and conninfo strings (fixed seed), each holding a
/// password made of two random words around a separator that often breaks the string. Neither
/// word may appear in what we print (the redacted string or the reason a string is refused),
/// except where libpq itself reads it as the user or host name of a string we accept: a password
/// typed in place of a user or host name cannot be told from one (`u:pw@pw2` reads as host
/// `pw2`). `FUZZ_INPUTS` sets the count (`make fuzz` runs more).
@Suite("Connection string fuzz")
struct ConnectionStringFuzzTests {
    static var inputCount: Int {
        ProcessInfo.processInfo.environment["FUZZ_INPUTS"].flatMap(Int.init) ?? 2000
    }

    @Test("no piece of a password is ever printed")
    func passwordNeverPrinted() {
        var generator = MalformedConnectionStrings(seed: 0x9_1)
        var refused = 0
        for _ in 0..<Self.inputCount {
            let input = generator.next()
            var printed = [redactedConnectionString(input.text)]
            var names: [String] = []
            do {
                printed.append(try ConnectionString(input.text).description)
                names = try libpqOptions(input.text).filter { ["user", "host"].contains($0.keyword) }.map { $0.value.lowercased() }
            } catch {
                printed.append(error.description)
                refused += 1
            }
            for text in printed {
                // Case-insensitively: a mutation may have changed the case of the whole string.
                let words = input.passwordWords.map { $0.lowercased() }.filter { word in !names.contains { $0.contains(word) } }
                for word in words where text.lowercased().contains(word) {
                    Issue.record("\(word) printed for input \(input.text.debugDescription): \(text)")
                }
            }
        }
        print("connection string fuzz: \(Self.inputCount) inputs, \(refused) refused, \(Self.inputCount - refused) read and redacted")
        // The generator makes both kinds: strings we read and strings we refuse.
        #expect(refused > 0 && refused < Self.inputCount, "\(refused) of \(Self.inputCount) refused")
    }
}

/// One generated connection string and the words its password is made of.
struct FuzzedConnectionString {
    var text: String
    var passwordWords: [String]
}

/// Connection strings in the shapes people get wrong, from a seeded generator.
struct MalformedConnectionStrings {
    private var random: SplitMix64

    init(seed: UInt64) {
        random = SplitMix64(seed: seed)
    }

    static let schemes = [
        "postgres://", "postgresql://", "postgress://", "http://", "postgres:/", "POSTGRES://", " postgres://",
        "jdbc:postgresql://", "postgres:", "postgres//", "postgresql:///", "", "pg://", "\tpostgres://",
        "Postgresql://", "postgres:://",
    ]
    static let separators = [
        "", " ", "@", "/", ":", "?", "'", "=", "#", "&", "%", "\\", "%40", "\t", "\"", "@@", ",", "]", "[",
        "\u{0}", "\n", "%2", "\u{00A0}", "' ", " '", "\\ ", "//", "?x=", "&y",
    ]
    static let hosts = ["host", "host:5432", "[::1]:5432", "h1,h2:6543", "", "127.0.0.1", "[::1", "host:"]
    static let paths = ["/db", "", "/", "/d b", "/db/extra", "/db?sslmode=disable"]
    static let conninfoKeys = ["password", "passwd", "pass", "pwd", "PASSWORD", "sslpassword", "password ", " password"]

    mutating func next() -> FuzzedConnectionString {
        let words = [word(), word()]
        let password = words[0] + pick(Self.separators) + words[1]
        var text: String
        switch random.next() % 6 {
        case 0, 1:
            text = pick(Self.schemes) + pick(["user:", ":", "postgres:", "u:"]) + password + pick(["@", "", "@@", " @"])
                + pick(Self.hosts) + pick(Self.paths)
        case 2:
            let query = pick(["password", "%70assword", "sslpassword", "passwd", "pass word"])
            text = pick(Self.schemes) + pick(["user@", ""]) + pick(Self.hosts) + pick(["/db", ""]) + pick(["?", "?sslmode=disable&", "&"])
                + query + pick(["=", "==", ""]) + password + pick(["", "&application_name=x", "&"])
        case 3:
            text = pick(["", "host=h ", "host=h user=u ", "dbname=d\t"]) + pick(Self.conninfoKeys) + pick(["=", " = ", " ", "=="])
                + pick(["", "'"]) + password + pick(["", "'", "' "]) + pick(["", " dbname=d", " port=5432", " host"])
        case 4:
            text = "jdbc:postgresql://" + pick(Self.hosts) + "/db?user=u&password=" + password
        default:
            text = pick(["dbname='", "dbname="]) + pick(Self.schemes) + "u:" + password + "@h/d" + pick(["'", ""]) + pick(["", " host=x"])
        }
        for _ in 0..<(random.next() % 3) { text = mutated(text) }
        return FuzzedConnectionString(text: text, passwordWords: words)
    }

    /// A typo: a character doubled, dropped or inserted, or a case change.
    private mutating func mutated(_ text: String) -> String {
        var scalars = Array(text.unicodeScalars)
        guard !scalars.isEmpty else { return text }
        let at = Int(random.next() % UInt64(scalars.count))
        switch random.next() % 4 {
        case 0: scalars.insert(scalars[at], at: at)
        case 1: scalars.remove(at: at)
        case 2: scalars.insert(pick(Array("@/:?'= \\%#&\"\t".unicodeScalars)), at: at)
        default: scalars = Array(String(String.UnicodeScalarView(scalars)).uppercased().unicodeScalars)
        }
        return String(String.UnicodeScalarView(scalars))
    }

    /// Eight letters and digits starting with a letter: never a keyword, a port or a host we write.
    private mutating func word() -> String {
        let letters = Array("ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz")
        let alphanumerics = letters + Array("23456789")
        return String(pick(letters)) + String((1..<8).map { _ in pick(alphanumerics) })
    }

    private mutating func pick<T>(_ choices: [T]) -> T {
        choices[Int(random.next() % UInt64(choices.count))]
    }
}

/// A small, fast, seedable generator (Steele, Lea and Flood's SplitMix64).
struct SplitMix64 {
    private var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
