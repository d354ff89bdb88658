import Foundation

/// Shared by the suites whose names contain `Fuzz`: a seeded generator, the number of inputs
/// (`FUZZ_INPUTS`, small in `make test`, 10,000 in `make fuzz`), and mutations of valid
/// inputs (byte flips, truncation, deep nesting, odd names, bytes that are not UTF-8).
public enum Fuzz {
    /// Inputs per fuzz target: `FUZZ_INPUTS`, else 300.
    public static var inputCount: Int {
        ProcessInfo.processInfo.environment["FUZZ_INPUTS"].flatMap { Int($0) }.map { max(1, $0) } ?? 300
    }

    /// The longest one input may take in process before it counts as a hang.
    public static let timeLimit: Double = 10

    /// The repository's root, for fixtures.
    public static let repository = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    public static func fixture(_ path: String) throws -> [UInt8] {
        [UInt8](try Data(contentsOf: repository.appendingPathComponent(path)))
    }

    /// Text spliced into inputs: nesting that once overflowed stacks, names that need quoting
    /// or escaping, control characters, bytes that are not UTF-8, YAML anchors and aliases.
    static func fragment(using random: inout FuzzRandom) -> [UInt8] {
        let depth = random.int(in: 1...3000)
        let nesting = ["[", "{", "(", "-", "NOT ", "<a>", "abs:(", "- ", "  ", "$source.", "1 + "]
        let names = [
            "\u{1B}[31m", "\"; DROP SCHEMA public; --", String(repeating: "x", count: 70), "名前", "\u{202E}", "$source",
            "#size", "_pk", "\0", "\r\n", "e\u{301}", "&a ", "*a", "!!binary ", "? ", "<![CDATA[", "&#0;", "]]>",
        ]
        switch random.int(in: 0...3) {
        case 0: return Array(String(repeating: nesting[random.int(in: 0...nesting.count - 1)], count: depth).utf8)
        case 1: return Array(names[random.int(in: 0...names.count - 1)].utf8)
        case 2: return [[0xC3, 0x28], [0xED, 0xA0, 0x80], [0xFF], [0xF0, 0x9F, 0x98], [0xC0, 0xAF]][random.int(in: 0...4)]
        default: return (0..<random.int(in: 1...16)).map { _ in UInt8(truncatingIfNeeded: random.next()) }
        }
    }

    static let interestingBytes = Array("\"'<>&{}[]():,-#$\n\t ".utf8) + [0, 0x1B, 0x7F, 0x80, 0xC3, 0xFF]

    /// `bytes` with one to four mutations.
    public static func mutate(_ bytes: [UInt8], using random: inout FuzzRandom) -> [UInt8] {
        var data = bytes
        for _ in 0..<random.int(in: 1...4) {
            let position = random.int(in: 0...data.count)
            switch random.int(in: 0...6) {
            case 0 where position < data.count:
                data[position] ^= UInt8(1) << UInt8(random.int(in: 0...7))
            case 1 where position < data.count:
                data[position] = interestingBytes[random.int(in: 0...interestingBytes.count - 1)]
            case 2:
                data.removeSubrange(position..<min(data.count, position + random.int(in: 1...32)))
            case 3:
                let end = min(data.count, position + random.int(in: 1...64))
                data.insert(contentsOf: data[position..<end], at: random.int(in: 0...data.count))
            case 4:
                data.removeSubrange(position...)
            default:
                data.insert(contentsOf: fragment(using: &random), at: position)
            }
        }
        return data
    }

    /// Runs `body` on `count` inputs made by `make`, recording any input that took longer than
    /// `timeLimit` (a crash ends the test process, which fails the run). Returns the slowest time.
    @discardableResult
    public static func run<Input>(
        _ name: String, seed: UInt64, count: Int = inputCount,
        make: (inout FuzzRandom) throws -> Input, _ body: (Input) -> Void
    ) rethrows -> (slowest: Double, hangs: [String]) {
        var random = FuzzRandom(seed: seed)
        var slowest = 0.0
        var hangs: [String] = []
        for number in 0..<count {
            let input = try make(&random)
            let start = Date()
            body(input)
            let elapsed = Date().timeIntervalSince(start)
            slowest = max(slowest, elapsed)
            if elapsed > timeLimit { hangs.append("\(name) input \(number) (seed \(seed)) took \(elapsed) s") }
        }
        return (slowest, hangs)
    }
}

/// SplitMix64: small, fast, and the same sequence on every platform for a given seed.
public struct FuzzRandom: RandomNumberGenerator {
    private var state: UInt64

    public init(seed: UInt64) {
        state = seed
    }

    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    public mutating func int(in range: ClosedRange<Int>) -> Int {
        Int.random(in: range, using: &self)
    }
}
