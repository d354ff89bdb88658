import Foundation
import Testing
import Mapping
@testable import Engine

/// Values written for COPY on the streaming path.
struct ValueTextTests {
    /// The digit-by-digit timestamp against `String(format:)` over dates from year 1 to 9999,
    /// before and after 1970, with and without microseconds.
    @Test func timestampsMatchTheFormattedText() {
        var generator = SystemRandomNumberGenerator()
        let dates = [-62_135_596_800.0, -1.5, -0.000_001, 0, 0.000_001, 1_700_000_000.123_456, 253_402_300_799.999_999]
            + (0..<2000).map { _ in Double.random(in: -62_135_596_800...253_402_300_799, using: &generator) }
        for seconds in dates {
            let date = Date(timeIntervalSince1970: seconds)
            let micros = (date.timeIntervalSince1970 * 1_000_000).rounded()
            let whole = Int(floor(micros / 1_000_000))
            var parts = tm()
            var time = time_t(whole)
            gmtime_r(&time, &parts)
            let expected = String(
                format: "%04d-%02d-%02d %02d:%02d:%02d.%06d+00", Int(parts.tm_year) + 1900, Int(parts.tm_mon) + 1, Int(parts.tm_mday),
                Int(parts.tm_hour), Int(parts.tm_min), Int(parts.tm_sec), Int(micros - Double(whole) * 1_000_000)
            )
            #expect(ValueText.timestamp(date) == expected, "\(seconds)")
        }
        #expect(ValueText.timestamp(Date(timeIntervalSince1970: 1_700_000_000.5)) == "2023-11-14 22:13:20.500000+00")
    }

    @Test func valuesAreWrittenAsPostgreSQLReadsThem() {
        #expect(ValueText.encode(.null) == nil)
        #expect(ValueText.encode(.double(.infinity)) == "Infinity")
        #expect(ValueText.encode(.double(-.infinity)) == "-Infinity")
        #expect(ValueText.encode(.double(.nan)) == "NaN")
        #expect(ValueText.encode(.double(0.1)) == "0.1")
        #expect(ValueText.encode(.bytes([0, 0xab, 0xff])) == "\\x00abff")
        #expect(ValueText.encode(.bool(true)) == "t")
    }
}
